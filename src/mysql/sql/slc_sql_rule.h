#ifndef SLC_SQL_RULE_H
#define SLC_SQL_RULE_H

/*
 * Query rules (issue 23, section 4): the one rule engine of a server {}
 * block, for its `rule NAME { ... }` blocks and the cache's `cache_rule`
 * lines alike, in the order the file gives them.
 *
 * A rule tests the statement with pcre2 patterns, compiled once per
 * configuration cycle (JIT when pcre2 has it): every match_* it has must
 * match (none: every statement matches).  Rules are tried in order; the
 * first that matches decides, unless it says `continue`, when the next
 * matching rule may add what it has not set (each action is given by the
 * first matching rule that has it).  A test that exceeds the list's
 * match limit (catastrophic backtracking) is reported to the caller and
 * counts as no match, except in a rule that keeps something out (block,
 * no_cache), where it counts as a match unless another of its tests
 * does not match: a statement made to be costly to match does not get
 * past such a rule.
 *
 * Pure: no I/O, no logging, no shared memory.  One match data block
 * serves every match: a list belongs to one process (single-threaded).
 */

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "slc_core.h"
#include "slc_sql_keys.h"

#define SLC_SQL_RULES_MAX       64      /* per server {} block */
#define SLC_SQL_RULE_NAME_MAX   64
#define SLC_SQL_RULE_SERVER_MAX 128
#define SLC_SQL_RULE_MSG_MAX    256
/* pcre2's own default is 10,000,000: seconds of backtracking */
#define SLC_SQL_RULE_MATCH_LIMIT  100000

/* What a match_* directive tests. */
typedef enum {
    SLC_RULE_ON_TEXT = 0,       /* the statement's bytes, as sent */
    SLC_RULE_ON_DIGEST,         /* its digest (slc_sql_digest.h) */
    SLC_RULE_ON_USER,           /* the user name */
    SLC_RULE_ON_DB,             /* the default database ("" when none) */
    SLC_RULE_ON_TABLE,          /* any table's key, "db.table" */
    SLC_RULE_ON_SCHEMA,         /* the database of any table, or the
                                   default one when it names none */
    SLC_RULE_ON_N
} slc_sql_rule_on_t;

#define SLC_RULE_NEEDS(on)  (1u << (on))

typedef enum {
    SLC_RULE_ROUTE_NONE = 0,
    SLC_RULE_ROUTE_PRIMARY,
    SLC_RULE_ROUTE_REPLICA,
    SLC_RULE_ROUTE_SERVER       /* the server named in `server` */
} slc_sql_rule_route_t;

/* The cache's actions (modules/cache). */
typedef struct {
    long long   ttl_ms;             /* -1: the server's cache_ttl */
    unsigned    set:1;              /* the rule has one of these */
    unsigned    no_cache:1;
    unsigned    unknown_tables:1;   /* cache_unknown_tables */
    unsigned    stored_functions:1; /* cache_stored_functions */
} slc_sql_rule_cache_t;

typedef struct slc_sql_rule_s {
    char                    name[SLC_SQL_RULE_NAME_MAX];
    pcre2_code             *code[SLC_RULE_ON_N];    /* NULL: not tested */
    uint8_t                 jitted;         /* bit `on`: code[on] has
                                               JIT code (slc_sql_rules_add) */
    slc_sql_rule_route_t    route;
    char                    server[SLC_SQL_RULE_SERVER_MAX];
    unsigned                server_at;      /* the caller's: `server`'s
                                               index in its upstream */
    unsigned                block:1;        /* answer an ERR instead */
    unsigned                cont:1;         /* `continue` */
    uint16_t                code_err;       /* the block's error code */
    char                    msg[SLC_SQL_RULE_MSG_MAX];
    char                   *rewrite;        /* malloc'd replacement, NUL
                                               terminated; NULL: none */
    slc_sql_rule_cache_t    cache;
    const char             *file;           /* where it was given */
    unsigned                line;
    uint8_t                 slot;           /* the caller's: where its
                                               counters are */
} slc_sql_rule_t;

typedef struct slc_sql_rules_s {
    slc_sql_rule_t         *rule;
    unsigned                n;
    unsigned                cap;
    unsigned                needs;      /* SLC_RULE_NEEDS() of every
                                           match_* of the rules */
    unsigned                routes:1;   /* a rule has `route` */
    unsigned                jit:1;      /* try JIT (the default) */
    uint32_t                match_limit;
    pcre2_match_context    *mctx;
    pcre2_match_data       *md;
} slc_sql_rules_t;

/* What the rules are matched against; digest and keys only when the
   list needs them (needs & SLC_RULE_NEEDS(...)), else may be NULL. */
typedef struct {
    const uint8_t          *q;
    size_t                  len;
    const char             *digest;
    size_t                  digest_len;
    const char             *user;
    const char             *db;         /* "" when none */
    const slc_sql_keys_t   *keys;
} slc_sql_rule_subject_t;

/*
 * The outcome for a statement: each action's rule (an index, -1: none),
 * and bit i of `matched` for rule i that matched, of `failed` for rule i
 * one of whose tests exceeded the match limit (or JIT stack): it did not
 * match, or did as a rule that keeps something out (both bits then).
 */
typedef struct slc_sql_rule_verdict_s {
    int8_t      first;          /* the first rule that matched */
    int8_t      route;
    int8_t      block;
    int8_t      rewrite;
    int8_t      cache;
    uint64_t    matched;
    uint64_t    failed;
    const uint8_t *q;           /* the statement it is of (the caller's) */
    size_t      n;
} slc_sql_rule_verdict_t;

/* A rule's name is 1 to 63 letters, digits, '_', '-' and '.'. */
int   slc_sql_rule_name_ok(const slc_str_t *w);
/* A rule named `name` with no test and no action. */
void  slc_sql_rule_init(slc_sql_rule_t *r, const char *name, size_t len);
void  slc_sql_rule_free(slc_sql_rule_t *r);

/*
 * One directive of a `rule {}` block, args[0] its name:
 *   match_text|match_digest|match_user|match_db|match_table|match_schema
 *       "REGEX"
 *   route primary|replica|server=NAME
 *   block ["MESSAGE"] [CODE]
 *   rewrite "REPLACEMENT"          (pcre2_substitute over match_text)
 *   cache_ttl TIME | no_cache | cache_unknown_tables |
 *       cache_stored_functions
 *   continue
 * NULL, or why not in err ("bad regex at offset N: why", a word that is
 * no such directive's...).
 */
const char *slc_sql_rule_set(slc_sql_rule_t *r, const slc_str_t *args,
    unsigned nargs, char *err, size_t errlen);

/* Compile pattern p[0..n) as r's test `on` (replacing one given
   before): SLC_ERROR with "bad regex at offset N: why" in err. */
int   slc_sql_rule_pattern(slc_sql_rule_t *r, slc_sql_rule_on_t on,
    const char *p, size_t n, char *err, size_t errlen);

void  slc_sql_rules_init(slc_sql_rules_t *rl);
void  slc_sql_rules_free(slc_sql_rules_t *rl);
/* The list's match limit (pcre2_set_match_limit and depth limit). */
int   slc_sql_rules_limit(slc_sql_rules_t *rl, uint32_t limit);

/*
 * Check *r whole (a rewrite needs match_text; actions that contradict:
 * block with route or rewrite) and append it, JIT-compiling its patterns;
 * the list takes what r holds.  SLC_ERROR with why in err (also a
 * duplicate name, more than SLC_SQL_RULES_MAX); *r is then freed.
 */
int   slc_sql_rules_add(slc_sql_rules_t *rl, slc_sql_rule_t *r, char *err,
    size_t errlen);

/* The rules on s: *v filled (every index -1 when none matched). */
void  slc_sql_rules_eval(const slc_sql_rules_t *rl,
    const slc_sql_rule_subject_t *s, slc_sql_rule_verdict_t *v);

/*
 * Rule r's rewrite of q[0..n) (every match of its match_text replaced,
 * pcre2_substitute's $1, ${name} and so on) into out[0..cap): its length,
 * or -1 when it does not fit or the match failed (limit).
 */
ssize_t slc_sql_rule_rewrite(const slc_sql_rules_t *rl,
    const slc_sql_rule_t *r, const uint8_t *q, size_t n, uint8_t *out,
    size_t cap);

const char *slc_sql_rule_on_name(slc_sql_rule_on_t on);

#endif /* SLC_SQL_RULE_H */
