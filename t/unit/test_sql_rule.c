/*
 * Unit tests for the query rule engine (src/mysql/sql/slc_sql_rule.c):
 * names, each directive and what it refuses, bad regexes with their
 * offset, the list's checks, the order of evaluation (first match,
 * continue, AND of the tests, each subject: text, digest, user, db,
 * table and schema keys), rewrites, and patterns made to backtrack
 * forever, which fail closed for the rules that keep something out,
 * with and without JIT.
 */

#include "slc_test.h"

#include <string.h>
#include <time.h>

#include "slc_sql_classify.h"
#include "slc_sql_digest.h"
#include "slc_sql_keys.h"
#include "slc_sql_rule.h"

#define ON(x)   SLC_RULE_ON_##x
#define BIT(i)  (1ull << (i))


/* --- helpers ------------------------------------------------------------ */

/*
 * The words of one directive from *pp, up to a ';' or the end, as the
 * config parser would give them: "..." quotes a word (blanks and ';'
 * within), a backslash is kept as it is (a regex's).
 */
static unsigned
slc_test_words(char **pp, slc_str_t *args, unsigned max)
{
    unsigned  n = 0;
    char     *p = *pp;

    for ( ;; ) {
        while (*p == ' ') {
            p++;
        }
        if (*p == '\0' || *p == ';') {
            break;
        }
        ck_assert_uint_lt(n, max);
        if (*p == '"') {
            args[n].data = ++p;
            while (*p != '\0' && *p != '"') {
                p++;
            }
        } else {
            args[n].data = p;
            while (*p != '\0' && *p != ' ' && *p != ';') {
                p++;
            }
        }
        args[n].len = (size_t) (p - args[n].data);
        n++;
        if (*p == '"') {
            *p++ = '\0';
        } else if (*p == ' ') {
            *p++ = '\0';
        }
    }
    if (*p == ';') {
        *p++ = '\0';
    }
    *pp = p;
    return n;
}

/* Directives "d1 a b; d2 \"c d\"" into *r: NULL or the first error. */
static const char *
slc_test_set(slc_sql_rule_t *r, const char *text, char *err, size_t errlen)
{
    char        buf[1024];
    char       *p = buf;
    slc_str_t   args[8];
    unsigned    n;
    const char *e;

    ck_assert_uint_lt(strlcpy(buf, text, sizeof(buf)), sizeof(buf));
    while (*p != '\0') {
        n = slc_test_words(&p, args, 8);
        if (n == 0) {
            continue;
        }
        e = slc_sql_rule_set(r, args, n, err, errlen);
        if (e != NULL) {
            return e;
        }
    }
    return NULL;
}

/* A rule `name` of directives `text`, which must be valid: into *r. */
static void
slc_test_rule(slc_sql_rule_t *r, const char *name, const char *text)
{
    char        err[256] = "";
    const char *e;

    slc_sql_rule_init(r, name, strlen(name));
    e = slc_test_set(r, text, err, sizeof(err));
    ck_assert_msg(e == NULL, "rule %s \"%s\": %s", name, text, e);
}

/* The same, appended to *rl. */
static void
slc_test_add(slc_sql_rules_t *rl, const char *name, const char *text)
{
    slc_sql_rule_t  r;
    char            err[256] = "";

    slc_test_rule(&r, name, text);
    ck_assert_msg(slc_sql_rules_add(rl, &r, err, sizeof(err)) == SLC_OK,
                  "%s", err);
}

/* Of a failed directive or add: the rule holds nothing. */
static void
slc_test_empty(const slc_sql_rule_t *r)
{
    for (unsigned on = 0; on < SLC_RULE_ON_N; on++) {
        ck_assert_ptr_null(r->code[on]);
    }
    ck_assert_ptr_null(r->rewrite);
}

/* A statement and what the rules read of it. */
typedef struct {
    slc_sql_info_t          si;
    slc_sql_keys_t          k;
    slc_sql_digest_t        dg;
    char                    digest[256];
    slc_sql_rule_subject_t  s;
} slc_test_stmt_t;

static const slc_sql_rule_subject_t *
slc_test_subject(slc_test_stmt_t *t, const char *q, const char *user,
    const char *db)
{
    const uint8_t *p = (const uint8_t *) q;
    size_t         n = strlen(q);

    (void) slc_sql_classify(p, n, 0, &t->si);
    ck_assert_int_eq(slc_sql_table_keys(p, &t->si, db,
                                        db != NULL ? strlen(db) : 0, &t->k),
                     SLC_OK);
    slc_sql_digest(p, n, 0, t->digest, sizeof(t->digest), &t->dg);
    t->s = (slc_sql_rule_subject_t) {
        .q = p, .len = n, .digest = t->digest, .digest_len = t->dg.len,
        .user = user, .db = db != NULL ? db : "", .keys = &t->k,
    };
    return &t->s;
}

/* The rules on q: *v. */
static void
slc_test_eval(const slc_sql_rules_t *rl, const char *q, const char *user,
    const char *db, slc_sql_rule_verdict_t *v)
{
    slc_test_stmt_t  t;

    slc_sql_rules_eval(rl, slc_test_subject(&t, q, user, db), v);
    ck_assert_ptr_eq(v->q, t.s.q);
    ck_assert_uint_eq(v->n, t.s.len);
}

/* Which rule matched first, for the statement q of user in db. */
static int
slc_test_first(const slc_sql_rules_t *rl, const char *q, const char *user,
    const char *db)
{
    slc_sql_rule_verdict_t  v;

    slc_test_eval(rl, q, user, db, &v);
    return v.first;
}


/* --- names and directives ----------------------------------------------- */

START_TEST(test_name_ok)
{
    static const struct {
        const char  *name;
        int          ok;
    } c[] = {
        { "a", 1 }, { "r6.x-y_z", 1 }, { "No_Writes-2", 1 }, { "9", 1 },
        { "", 0 }, { "bad/name", 0 }, { "a b", 0 }, { "a\"b", 0 },
        { "caf\xc3\xa9", 0 }, { "a;", 0 }, { "a\nb", 0 },
    };
    char       name[SLC_SQL_RULE_NAME_MAX + 1];
    slc_str_t  w;

    for (size_t i = 0; i < slc_nelems(c); i++) {
        w = (slc_str_t) { strlen(c[i].name), (char *) c[i].name };
        ck_assert_msg(slc_sql_rule_name_ok(&w) == c[i].ok, "\"%s\"",
                      c[i].name);
    }
    /* 63 characters, not 64 */
    memset(name, 'n', sizeof(name));
    w = (slc_str_t) { SLC_SQL_RULE_NAME_MAX - 1, name };
    ck_assert(slc_sql_rule_name_ok(&w));
    w.len++;
    ck_assert(!slc_sql_rule_name_ok(&w));
}
END_TEST

START_TEST(test_init)
{
    slc_sql_rule_t  r;

    slc_sql_rule_init(&r, "r1", 2);
    ck_assert_str_eq(r.name, "r1");
    slc_test_empty(&r);
    ck_assert_int_eq(r.route, SLC_RULE_ROUTE_NONE);
    ck_assert(!r.block && !r.cont && !r.cache.set);
    ck_assert_int_eq(r.cache.ttl_ms, -1);
    ck_assert_uint_eq(r.code_err, 1148);
    ck_assert_str_eq(r.msg, "statement blocked by rule \"r1\"");
    slc_sql_rule_free(&r);
    ck_assert_str_eq(slc_sql_rule_on_name(ON(TEXT)), "match_text");
    ck_assert_str_eq(slc_sql_rule_on_name(ON(SCHEMA)), "match_schema");
    ck_assert_str_eq(slc_sql_rule_on_name(SLC_RULE_ON_N), "?");
}
END_TEST

/* Each match_* compiles its own test; a second one replaces the first. */
START_TEST(test_set_match)
{
    static const char *const  d[SLC_RULE_ON_N] = {
        [ON(TEXT)] = "match_text", [ON(DIGEST)] = "match_digest",
        [ON(USER)] = "match_user", [ON(DB)] = "match_db",
        [ON(TABLE)] = "match_table", [ON(SCHEMA)] = "match_schema",
    };
    slc_sql_rule_t  r;
    char            line[64], err[256];
    pcre2_code     *old;

    for (unsigned on = 0; on < SLC_RULE_ON_N; on++) {
        slc_sql_rule_init(&r, "m", 1);
        snprintf(line, sizeof(line), "%s \"^x y$\"", d[on]);
        ck_assert_ptr_null(slc_test_set(&r, line, err, sizeof(err)));
        for (unsigned i = 0; i < SLC_RULE_ON_N; i++) {
            ck_assert_msg((r.code[i] != NULL) == (i == on), "%s: %u",
                          d[on], i);
        }
        ck_assert_str_eq(slc_sql_rule_on_name(on), d[on]);
        old = r.code[on];
        ck_assert_ptr_null(slc_test_set(&r, line, err, sizeof(err)));
        ck_assert_ptr_nonnull(r.code[on]);
        ck_assert_ptr_ne(r.code[on], old);
        snprintf(line, sizeof(line), "%s", d[on]);
        ck_assert_str_eq(slc_test_set(&r, line, err, sizeof(err)),
                         "takes one regular expression");
        snprintf(line, sizeof(line), "%s a b", d[on]);
        ck_assert_str_eq(slc_test_set(&r, line, err, sizeof(err)),
                         "takes one regular expression");
        slc_sql_rule_free(&r);
        slc_test_empty(&r);
    }
}
END_TEST

/* "bad regex at offset N: why", N where pcre2 saw it; the test given
   before stays. */
START_TEST(test_set_bad_regex)
{
    static const struct {
        const char  *line;
        const char  *err;
    } c[] = {
        { "match_text \"a(b\"", "bad regex at offset 3: missing closing "
          "parenthesis" },
        { "match_user \"x[\"", "bad regex at offset 2: missing terminating "
          "] for character class" },
        { "match_table \"ab)\"", "bad regex at offset 2: " },
        { "match_db \"*a\"", "bad regex at offset 0: " },
        { "match_digest \"x{2,1}\"", "bad regex at offset 5: " },
        { "match_schema \"(?<n>a\"", "bad regex at offset " },
    };
    slc_sql_rule_t  r;
    char            err[256];
    const char     *e;
    pcre2_code     *kept;

    for (size_t i = 0; i < slc_nelems(c); i++) {
        slc_sql_rule_init(&r, "bad", 3);
        ck_assert_ptr_null(slc_test_set(&r, "match_text ok; match_user ok; "
                                        "match_table ok", err,
                                        sizeof(err)));
        kept = r.code[ON(USER)];
        err[0] = '\0';
        e = slc_test_set(&r, c[i].line, err, sizeof(err));
        ck_assert_ptr_eq(e, err);
        ck_assert_msg(strncmp(err, c[i].err, strlen(c[i].err)) == 0,
                      "%s: \"%s\"", c[i].line, err);
        ck_assert_ptr_eq(r.code[ON(USER)], kept);
        slc_sql_rule_free(&r);
    }

    /* the same through slc_sql_rule_pattern, and a pattern with a NUL */
    slc_sql_rule_init(&r, "bad", 3);
    ck_assert_int_eq(slc_sql_rule_pattern(&r, ON(TEXT), "a(b", 3, err,
                                          sizeof(err)), SLC_ERROR);
    ck_assert_str_eq(err, "bad regex at offset 3: missing closing "
                     "parenthesis");
    ck_assert_ptr_null(r.code[ON(TEXT)]);
    ck_assert_int_eq(slc_sql_rule_pattern(&r, ON(TEXT), "a\0b", 3, err,
                                          sizeof(err)), SLC_OK);
    ck_assert_ptr_nonnull(r.code[ON(TEXT)]);
    /* a short error buffer is cut, not overrun */
    ck_assert_int_eq(slc_sql_rule_pattern(&r, ON(DB), "x[", 2, err, 12),
                     SLC_ERROR);
    ck_assert_str_eq(err, "bad regex a");
    ck_assert_ptr_null(r.code[ON(DB)]);
    slc_sql_rule_free(&r);
}
END_TEST

START_TEST(test_set_route)
{
    static const char  *bad[] = {
        "route", "route master", "route Primary", "route server=",
        "route server", "route primary replica", "route server=a b",
    };
    slc_sql_rule_t  r;
    char            err[256], line[SLC_SQL_RULE_SERVER_MAX + 32];
    char            name[SLC_SQL_RULE_SERVER_MAX + 1];

    slc_sql_rule_init(&r, "r", 1);
    ck_assert_ptr_null(slc_test_set(&r, "route primary", err, sizeof(err)));
    ck_assert_int_eq(r.route, SLC_RULE_ROUTE_PRIMARY);
    ck_assert_ptr_null(slc_test_set(&r, "route replica", err, sizeof(err)));
    ck_assert_int_eq(r.route, SLC_RULE_ROUTE_REPLICA);
    ck_assert_ptr_null(slc_test_set(&r, "route server=db-2", err,
                                    sizeof(err)));
    ck_assert_int_eq(r.route, SLC_RULE_ROUTE_SERVER);
    ck_assert_str_eq(r.server, "db-2");

    for (size_t i = 0; i < slc_nelems(bad); i++) {
        const char *e = slc_test_set(&r, bad[i], err, sizeof(err));

        ck_assert_msg(e != NULL && strcmp(e, "route takes primary, "
                                          "replica or server=NAME") == 0,
                      "%s: %s", bad[i], e);
    }

    /* a server's name is at most 127 bytes */
    memset(name, 's', sizeof(name) - 1);
    name[SLC_SQL_RULE_SERVER_MAX - 1] = '\0';
    snprintf(line, sizeof(line), "route server=%s", name);
    ck_assert_ptr_null(slc_test_set(&r, line, err, sizeof(err)));
    ck_assert_str_eq(r.server, name);
    name[SLC_SQL_RULE_SERVER_MAX - 1] = 's';
    name[SLC_SQL_RULE_SERVER_MAX] = '\0';
    snprintf(line, sizeof(line), "route server=%s", name);
    ck_assert_ptr_nonnull(slc_test_set(&r, line, err, sizeof(err)));
    slc_sql_rule_free(&r);
}
END_TEST

START_TEST(test_set_block)
{
    static const struct {
        const char  *line;
        const char  *msg;       /* NULL: the default */
        unsigned     code;      /* 0: an error */
    } c[] = {
        { "block", NULL, 1148 },
        { "block \"no reports here\"", "no reports here", 1148 },
        { "block \"no reports\" 1227", "no reports", 1227 },
        { "block 1045", NULL, 1045 },
        { "block \"\"", "", 1148 },
        { "block \"x\" 1000", "x", 1000 },
        { "block \"x\" 65534", "x", 65534 },
        { "block \"x\" 999", NULL, 0 },
        { "block \"x\" 65535", NULL, 0 },
        { "block 0", NULL, 0 },
        { "block \"x\" 99999999999999999999", NULL, 0 },
        { "block \"a\" \"b\"", NULL, 0 },
        { "block 1045 \"a\"", NULL, 0 },
        { "block \"a\" 1045 1046", NULL, 0 },
    };
    slc_sql_rule_t  r;
    char            err[256], line[SLC_SQL_RULE_MSG_MAX + 32];
    char            msg[SLC_SQL_RULE_MSG_MAX + 1];
    const char     *e;

    for (size_t i = 0; i < slc_nelems(c); i++) {
        slc_sql_rule_init(&r, "b", 1);
        e = slc_test_set(&r, c[i].line, err, sizeof(err));
        if (c[i].code == 0) {
            ck_assert_msg(e != NULL, "%s", c[i].line);
            continue;
        }
        ck_assert_msg(e == NULL, "%s: %s", c[i].line, e);
        ck_assert(r.block);
        ck_assert_uint_eq(r.code_err, c[i].code);
        ck_assert_str_eq(r.msg, c[i].msg != NULL
                                ? c[i].msg
                                : "statement blocked by rule \"b\"");
        slc_sql_rule_free(&r);
    }
    slc_sql_rule_init(&r, "b", 1);
    ck_assert_str_eq(slc_test_set(&r, "block \"x\" 999", err, sizeof(err)),
                     "block's error code is 1000 to 65534");
    ck_assert_str_eq(slc_test_set(&r, "block a 1 2", err, sizeof(err)),
                     "block takes a message and a code at most");

    /* a message is under 256 bytes */
    memset(msg, 'm', sizeof(msg) - 1);
    msg[SLC_SQL_RULE_MSG_MAX - 1] = '\0';
    snprintf(line, sizeof(line), "block \"%s\" 1045", msg);
    ck_assert_ptr_null(slc_test_set(&r, line, err, sizeof(err)));
    ck_assert_str_eq(r.msg, msg);
    msg[SLC_SQL_RULE_MSG_MAX - 1] = 'm';
    msg[SLC_SQL_RULE_MSG_MAX] = '\0';
    snprintf(line, sizeof(line), "block \"%s\"", msg);
    ck_assert_ptr_nonnull(slc_test_set(&r, line, err, sizeof(err)));
    slc_sql_rule_free(&r);
}
END_TEST

START_TEST(test_set_rewrite)
{
    slc_sql_rule_t  r;
    char            err[256];
    slc_str_t       args[2] = {
        { 7, (char *) "rewrite" }, { 3, (char *) "a\0b" }
    };

    slc_sql_rule_init(&r, "w", 1);
    ck_assert_ptr_null(slc_test_set(&r, "rewrite \"SELECT $1 FROM t\"", err,
                                    sizeof(err)));
    ck_assert_str_eq(r.rewrite, "SELECT $1 FROM t");
    ck_assert_ptr_null(slc_test_set(&r, "rewrite \"\"", err, sizeof(err)));
    ck_assert_str_eq(r.rewrite, "");
    ck_assert_str_eq(slc_test_set(&r, "rewrite", err, sizeof(err)),
                     "rewrite takes one replacement");
    ck_assert_str_eq(slc_test_set(&r, "rewrite a b", err, sizeof(err)),
                     "rewrite takes one replacement");
    ck_assert_str_eq(slc_sql_rule_set(&r, args, 2, err, sizeof(err)),
                     "rewrite's replacement holds a NUL");
    slc_sql_rule_free(&r);
    slc_test_empty(&r);
}
END_TEST

START_TEST(test_set_cache)
{
    static const struct {
        const char  *line;
        const char  *err;       /* NULL: valid */
        long long    ttl;
        unsigned     no_cache:1;
        unsigned     unknown:1;
        unsigned     functions:1;
    } c[] = {
        { "cache_ttl 10s", NULL, 10000, 0, 0, 0 },
        { "cache_ttl 1m30s", NULL, 90000, 0, 0, 0 },
        { "cache_ttl 500ms; cache_unknown_tables", NULL, 500, 0, 1, 0 },
        { "cache_stored_functions; cache_unknown_tables", NULL, -1, 0, 1,
          1 },
        { "no_cache", NULL, -1, 1, 0, 0 },
        { "no_cache; no_cache", NULL, -1, 1, 0, 0 },
        { "cache_ttl 0", "cache_ttl takes a duration above zero", 0, 0, 0,
          0 },
        { "cache_ttl", "cache_ttl takes a duration above zero", 0, 0, 0, 0 },
        { "cache_ttl 10y", "cache_ttl takes a duration above zero", 0, 0,
          0, 0 },
        { "cache_ttl 1s 2s", "cache_ttl takes a duration above zero", 0, 0,
          0, 0 },
        { "no_cache 1", "takes no argument", 0, 0, 0, 0 },
        { "cache_unknown_tables yes", "takes no argument", 0, 0, 0, 0 },
        { "no_cache; cache_ttl 1s", "no_cache takes no other cache action",
          0, 0, 0, 0 },
        { "cache_ttl 1s; no_cache", "no_cache takes no other cache action",
          0, 0, 0, 0 },
        { "no_cache; cache_unknown_tables",
          "no_cache takes no other cache action", 0, 0, 0, 0 },
        { "cache_stored_functions; no_cache",
          "no_cache takes no other cache action", 0, 0, 0, 0 },
        { "cache", "unknown directive in a rule", 0, 0, 0, 0 },
        { "frobnicate", "unknown directive in a rule", 0, 0, 0, 0 },
        { "ttl=1s", "unknown directive in a rule", 0, 0, 0, 0 },
        { "Match_text", "unknown directive in a rule", 0, 0, 0, 0 },
    };

    for (size_t i = 0; i < slc_nelems(c); i++) {
        slc_sql_rule_t  r;
        char            err[256];
        const char     *e;

        slc_sql_rule_init(&r, "c", 1);
        e = slc_test_set(&r, c[i].line, err, sizeof(err));
        if (c[i].err != NULL) {
            ck_assert_msg(e != NULL
                          && strncmp(e, c[i].err, strlen(c[i].err)) == 0,
                          "%s: %s", c[i].line, e);
            slc_sql_rule_free(&r);
            continue;
        }
        ck_assert_msg(e == NULL, "%s: %s", c[i].line, e);
        ck_assert(r.cache.set);
        ck_assert_int_eq(r.cache.ttl_ms, c[i].ttl);
        ck_assert_uint_eq(r.cache.no_cache, c[i].no_cache);
        ck_assert_uint_eq(r.cache.unknown_tables, c[i].unknown);
        ck_assert_uint_eq(r.cache.stored_functions, c[i].functions);
        ck_assert(!r.block && !r.cont && r.route == SLC_RULE_ROUTE_NONE);
        slc_sql_rule_free(&r);
    }
}
END_TEST

START_TEST(test_set_continue)
{
    slc_sql_rule_t  r;
    char            err[256];

    slc_sql_rule_init(&r, "c", 1);
    ck_assert_ptr_null(slc_test_set(&r, "continue", err, sizeof(err)));
    ck_assert(r.cont);
    ck_assert_str_eq(slc_test_set(&r, "continue 1", err, sizeof(err)),
                     "continue takes no argument");
    slc_sql_rule_free(&r);
}
END_TEST


/* --- the list ----------------------------------------------------------- */

/* What slc_sql_rules_add refuses, and that *r is freed then. */
START_TEST(test_add_checks)
{
    static const struct {
        const char  *name;
        const char  *text;
        const char  *err;
    } c[] = {
        { "a", "match_text x; no_cache", "rule \"a\": duplicate name" },
        { "w", "match_user x; rewrite y",
          "rule \"w\": rewrite needs match_text (what it replaces)" },
        { "w", "rewrite y",
          "rule \"w\": rewrite needs match_text (what it replaces)" },
        { "b", "match_text x; block; route primary",
          "rule \"b\": block takes no other action" },
        { "b", "match_text x; block; rewrite y",
          "rule \"b\": block takes no other action" },
        { "b", "block \"no\" 1045; no_cache",
          "rule \"b\": block takes no other action" },
        { "b", "block; cache_ttl 1s",
          "rule \"b\": block takes no other action" },
        { "b", "continue; block",
          "rule \"b\": block takes no other action" },
    };
    slc_sql_rules_t  rl;
    slc_sql_rule_t   r;
    char             err[256], name[16];

    slc_sql_rules_init(&rl);
    ck_assert(rl.jit);
    ck_assert_uint_eq(rl.match_limit, SLC_SQL_RULE_MATCH_LIMIT);
    slc_test_add(&rl, "a", "match_text \"^SELECT\"; route replica");
    for (size_t i = 0; i < slc_nelems(c); i++) {
        slc_test_rule(&r, c[i].name, c[i].text);
        ck_assert_int_eq(slc_sql_rules_add(&rl, &r, err, sizeof(err)),
                         SLC_ERROR);
        ck_assert_msg(strcmp(err, c[i].err) == 0, "%s: %s", c[i].text,
                      err);
        slc_test_empty(&r);
        ck_assert_uint_eq(rl.n, 1);
    }
    /* a rewrite with match_text, a block with a test, are fine */
    slc_test_add(&rl, "w", "match_text \"x(\\d+)\"; rewrite \"y$1\"; "
                 "continue");
    slc_test_add(&rl, "b", "match_user \"^evil$\"; block \"no\" 1045");
    ck_assert_uint_eq(rl.n, 3);
    ck_assert_uint_eq(rl.needs, SLC_RULE_NEEDS(ON(TEXT))
                                | SLC_RULE_NEEDS(ON(USER)));
    ck_assert(rl.routes);

    /* up to 64 rules in all, the last still reached */
    for (unsigned i = rl.n; i < SLC_SQL_RULES_MAX; i++) {
        snprintf(name, sizeof(name), "r%u", i);
        slc_test_add(&rl, name, "match_db \"^never$\"; no_cache");
    }
    ck_assert_uint_eq(rl.n, 64);
    slc_test_rule(&r, "last", "match_table x; no_cache");
    ck_assert_int_eq(slc_sql_rules_add(&rl, &r, err, sizeof(err)),
                     SLC_ERROR);
    ck_assert_str_eq(err, "rule \"last\": more than 64 rules in a server");
    slc_test_empty(&r);
    ck_assert_uint_eq(rl.needs, SLC_RULE_NEEDS(ON(TEXT))
                                | SLC_RULE_NEEDS(ON(USER))
                                | SLC_RULE_NEEDS(ON(DB)));
    slc_sql_rules_free(&rl);
    ck_assert_uint_eq(rl.n, 0);
    ck_assert_ptr_null(rl.rule);
    ck_assert_ptr_null(rl.md);
    ck_assert_ptr_null(rl.mctx);
}
END_TEST

/* All 64 rules: the bits reach bit 63. */
START_TEST(test_eval_64)
{
    slc_sql_rules_t         rl;
    slc_sql_rule_verdict_t  v;
    char                    name[16], text[64];

    slc_sql_rules_init(&rl);
    for (unsigned i = 0; i < SLC_SQL_RULES_MAX; i++) {
        snprintf(name, sizeof(name), "r%u", i);
        snprintf(text, sizeof(text), "match_user \"^u%u$\"; continue", i);
        slc_test_add(&rl, name, text);
    }
    slc_test_eval(&rl, "SELECT 1", "u63", NULL, &v);
    ck_assert_int_eq(v.first, 63);
    ck_assert_uint_eq(v.matched, BIT(63));
    slc_test_eval(&rl, "SELECT 1", "u0", NULL, &v);
    ck_assert_int_eq(v.first, 0);
    ck_assert_uint_eq(v.matched, BIT(0));
    ck_assert_int_eq(v.route, -1);
    ck_assert_int_eq(v.cache, -1);
    slc_sql_rules_free(&rl);
}
END_TEST


/* --- evaluation --------------------------------------------------------- */

/* First match wins; continue lets a later rule add what it has not set. */
START_TEST(test_eval_order)
{
    slc_sql_rules_t         rl;
    slc_sql_rule_verdict_t  v;

    slc_sql_rules_init(&rl);
    slc_test_add(&rl, "admin", "match_user \"^admin$\"; route primary; "
                 "continue");
    slc_test_add(&rl, "reads", "match_text \"(?i)^select\"; route replica; "
                 "cache_ttl 5s");
    slc_test_add(&rl, "rest", "no_cache");
    slc_test_add(&rl, "never", "route server=x");

    /* the admin's SELECT: primary (the first route), the cache of reads */
    slc_test_eval(&rl, "SELECT 1", "admin", "shop", &v);
    ck_assert_int_eq(v.first, 0);
    ck_assert_int_eq(v.route, 0);
    ck_assert_int_eq(v.cache, 1);
    ck_assert_int_eq(v.block, -1);
    ck_assert_int_eq(v.rewrite, -1);
    ck_assert_uint_eq(v.matched, BIT(0) | BIT(1));
    ck_assert_uint_eq(v.failed, 0);

    /* anyone else's: reads alone, it does not continue */
    slc_test_eval(&rl, "select 1", "app", "shop", &v);
    ck_assert_int_eq(v.first, 1);
    ck_assert_int_eq(v.route, 1);
    ck_assert_int_eq(v.cache, 1);
    ck_assert_uint_eq(v.matched, BIT(1));

    /* a rule with no test matches every statement */
    slc_test_eval(&rl, "UPDATE t SET a = 1", "app", "shop", &v);
    ck_assert_int_eq(v.first, 2);
    ck_assert_int_eq(v.route, -1);
    ck_assert_int_eq(v.cache, 2);
    ck_assert_uint_eq(v.matched, BIT(2));

    slc_test_eval(&rl, "UPDATE t SET a = 1", "admin", NULL, &v);
    ck_assert_int_eq(v.first, 0);
    ck_assert_int_eq(v.route, 0);
    ck_assert_int_eq(v.cache, 2);
    ck_assert_uint_eq(v.matched, BIT(0) | BIT(2));
    slc_sql_rules_free(&rl);

    /* continue through several; each action from its first rule; a block
       ends it */
    slc_sql_rules_init(&rl);
    slc_test_add(&rl, "c0", "match_text \"t\"; cache_ttl 1s; continue");
    slc_test_add(&rl, "c1", "match_text \"t\"; cache_ttl 2s; "
                 "route replica; continue");
    slc_test_add(&rl, "c2", "match_text \"nomatch\"; route primary; "
                 "continue");
    slc_test_add(&rl, "c3", "match_text \"(t)\"; rewrite \"u\"; "
                 "route primary; continue");
    slc_test_add(&rl, "c4", "match_user \"^bad$\"; block");
    slc_test_add(&rl, "c5", "no_cache");

    slc_test_eval(&rl, "SELECT t", "app", NULL, &v);
    ck_assert_int_eq(v.first, 0);
    ck_assert_int_eq(v.cache, 0);
    ck_assert_int_eq(v.route, 1);
    ck_assert_int_eq(v.rewrite, 3);
    ck_assert_int_eq(v.block, -1);
    ck_assert_uint_eq(v.matched, BIT(0) | BIT(1) | BIT(3) | BIT(5));
    ck_assert_int_eq(rl.rule[v.cache].cache.ttl_ms, 1000);

    slc_test_eval(&rl, "SELECT t", "bad", NULL, &v);
    ck_assert_int_eq(v.block, 4);
    ck_assert_int_eq(v.cache, 0);
    ck_assert_uint_eq(v.matched, BIT(0) | BIT(1) | BIT(3) | BIT(4));

    slc_test_eval(&rl, "SELECT 1", "bad", NULL, &v);
    ck_assert_int_eq(v.first, 4);
    ck_assert_int_eq(v.block, 4);
    ck_assert_int_eq(v.cache, -1);
    ck_assert_uint_eq(v.matched, BIT(4));
    slc_sql_rules_free(&rl);
}
END_TEST

/* Every test a rule has must match; user and db against the subject. */
START_TEST(test_eval_and)
{
    static const struct {
        const char  *q;
        const char  *user;
        const char  *db;
        int          rule;
    } c[] = {
        { "SELECT * FROM orders", "app", "shop", 0 },
        { "SELECT * FROM orders", "app", "shop2", 2 },
        { "SELECT * FROM orders", "App", "shop", 2 },
        { "SELECT * FROM orders", "apps", "shop", 2 },
        { "UPDATE orders SET a = 1", "app", "shop", 3 },
        { "SELECT 1", NULL, NULL, 1 },          /* user and db "" */
        { "SELECT 1", "", "", 1 },
        { "SELECT 1", "x", NULL, 2 },
        { "SELECT 1", NULL, "x", 3 },
        { "UPDATE t SET a = 1", "z", "x", -1 },
    };
    slc_sql_rules_t  rl;

    slc_sql_rules_init(&rl);
    slc_test_add(&rl, "all3", "match_user \"^app$\"; match_db \"^shop$\"; "
                 "match_text \"^SELECT\"; route replica");
    slc_test_add(&rl, "none", "match_user \"^$\"; match_db \"^$\"; "
                 "no_cache");
    slc_test_add(&rl, "nodb", "match_db \"^(shop2?)?$\"; match_text "
                 "\"^SELECT\"; cache_ttl 1s");
    slc_test_add(&rl, "user", "match_user \"^(app)?$\"; route primary");
    ck_assert_uint_eq(rl.needs, SLC_RULE_NEEDS(ON(TEXT))
                                | SLC_RULE_NEEDS(ON(USER))
                                | SLC_RULE_NEEDS(ON(DB)));
    for (size_t i = 0; i < slc_nelems(c); i++) {
        int  m = slc_test_first(&rl, c[i].q, c[i].user, c[i].db);

        ck_assert_msg(m == c[i].rule, "\"%s\" user %s db %s: %d, want %d",
                      c[i].q, c[i].user ? c[i].user : "-",
                      c[i].db ? c[i].db : "-", m, c[i].rule);
    }
    slc_sql_rules_free(&rl);
}
END_TEST

/* match_table and match_schema through the classifier's keys; schema
   falls back to the default database when the statement names none. */
START_TEST(test_eval_tables)
{
    static const struct {
        const char  *q;
        const char  *db;
        int          rule;
    } c[] = {
        { "SELECT * FROM orders", "shop", 0 },
        { "SELECT * FROM `Orders`", "SHOP", 0 },        /* lowercased */
        { "SELECT * FROM a JOIN shop.orders ON 1", "x", 0 },
        { "SELECT * FROM shop.orders_old", "x", 1 },
        { "SELECT * FROM xshop.orders", "x", -1 },
        { "SELECT * FROM t", "shop", 1 },
        { "SELECT 1", "shop", 1 },          /* no table: the default db */
        { "SELECT 1", "Shop", 1 },
        { "SELECT 1", "shop2", -1 },
        { "SELECT * FROM other.t", "shop", -1 },    /* names its own */
        { "SELECT * FROM other.t, shop.u", "x", 1 },
        { "INSERT INTO shop.audit_log VALUES (1)", NULL, 1 },
        { "INSERT INTO log.t VALUES (1)", "x", 2 },
        { "SELECT * FROM t", NULL, 3 },     /* key ".t" */
        { "SELECT 1", NULL, 3 },
    };
    slc_sql_rules_t  rl;

    slc_sql_rules_init(&rl);
    slc_test_add(&rl, "orders", "match_table \"^shop\\.orders$\"; "
                 "no_cache");
    slc_test_add(&rl, "shop", "match_schema \"^shop$\"; cache_ttl 2s");
    slc_test_add(&rl, "log", "match_table \"^log\\.\"; cache_ttl 1s");
    slc_test_add(&rl, "nodb", "match_schema \"^$\"; cache_ttl 3s");
    ck_assert_uint_eq(rl.needs, SLC_RULE_NEEDS(ON(TABLE))
                                | SLC_RULE_NEEDS(ON(SCHEMA)));
    for (size_t i = 0; i < slc_nelems(c); i++) {
        int  m = slc_test_first(&rl, c[i].q, "app", c[i].db);

        ck_assert_msg(m == c[i].rule, "\"%s\" db %s: %d, want %d", c[i].q,
                      c[i].db ? c[i].db : "-", m, c[i].rule);
    }
    slc_sql_rules_free(&rl);
}
END_TEST

/* match_digest against the digest string: every literal one pattern. */
START_TEST(test_eval_digest)
{
    slc_sql_rules_t  rl;
    slc_test_stmt_t  t;

    (void) slc_test_subject(&t, "SELECT * FROM t WHERE id = 42", NULL,
                            NULL);
    ck_assert_str_eq(t.digest, "select * from t where id = ?");

    slc_sql_rules_init(&rl);
    slc_test_add(&rl, "byid", "match_digest "
                 "\"^select \\* from t where id = \\?$\"; cache_ttl 1s");
    slc_test_add(&rl, "in", "match_digest \"in \\(\\.\\.\\.\\)\"; "
                 "route replica");
    ck_assert_uint_eq(rl.needs, SLC_RULE_NEEDS(ON(DIGEST)));
    ck_assert_int_eq(slc_test_first(&rl, "SELECT * FROM t WHERE id = 42",
                                    "a", NULL), 0);
    ck_assert_int_eq(slc_test_first(&rl, "select *  from t where id='x' "
                                    "/* c */", "a", NULL), 0);
    ck_assert_int_eq(slc_test_first(&rl, "SELECT * FROM t WHERE id = 4 "
                                    "OR 1", "a", NULL), -1);
    ck_assert_int_eq(slc_test_first(&rl, "SELECT * FROM u WHERE a IN "
                                    "(1, 2, 3)", "a", NULL), 1);
    /* not the text: it has no "in (...)" */
    ck_assert_int_eq(slc_test_first(&rl, "SELECT 'in (...)'", "a", NULL),
                     -1);
    slc_sql_rules_free(&rl);
}
END_TEST

/* A rule that matches nothing, and an empty list. */
START_TEST(test_eval_none)
{
    slc_sql_rules_t         rl;
    slc_sql_rule_verdict_t  v;

    slc_sql_rules_init(&rl);
    slc_test_eval(&rl, "SELECT 1", "a", "b", &v);
    ck_assert_int_eq(v.first, -1);
    ck_assert_uint_eq(v.matched, 0);

    slc_test_add(&rl, "never", "match_text \"(?!)\"; block");
    slc_test_add(&rl, "nouser", "match_user \"^nobody$\"; route primary");
    slc_test_eval(&rl, "SELECT 1", "a", "b", &v);
    ck_assert_int_eq(v.first, -1);
    ck_assert_int_eq(v.route, -1);
    ck_assert_int_eq(v.block, -1);
    ck_assert_int_eq(v.rewrite, -1);
    ck_assert_int_eq(v.cache, -1);
    ck_assert_uint_eq(v.matched, 0);
    ck_assert_uint_eq(v.failed, 0);
    slc_sql_rules_free(&rl);
}
END_TEST


/* --- rewrite ------------------------------------------------------------ */

static ssize_t
slc_test_rewrite(const slc_sql_rules_t *rl, unsigned i, const char *q,
    char *out, size_t cap)
{
    return slc_sql_rule_rewrite(rl, &rl->rule[i], (const uint8_t *) q,
                                strlen(q), (uint8_t *) out, cap);
}

START_TEST(test_rewrite)
{
    static const char       q[] = "SELECT * FROM t_a JOIN t_b ON 1";
    static const char       want[] = "SELECT * FROM new_a JOIN new_b ON 1";
    slc_sql_rules_t         rl;
    slc_sql_rule_verdict_t  v;
    char                    out[128];
    ssize_t                 n;

    slc_sql_rules_init(&rl);
    slc_test_add(&rl, "ren", "match_text \"\\bt_(\\w+)\"; "
                 "rewrite \"new_$1\"; continue");
    slc_test_add(&rl, "swap", "match_text \"^SELECT (\\w+), (\\w+)\"; "
                 "rewrite \"SELECT ${2}, $1\"");

    slc_test_eval(&rl, q, "a", NULL, &v);
    ck_assert_int_eq(v.rewrite, 0);
    ck_assert_uint_eq(v.matched, BIT(0));
    n = slc_test_rewrite(&rl, 0, q, out, sizeof(out));
    ck_assert_int_eq(n, (ssize_t) strlen(want));
    ck_assert_str_eq(out, want);

    /* room for the text and its NUL, not a byte less */
    n = slc_test_rewrite(&rl, 0, q, out, sizeof(want));
    ck_assert_int_eq(n, (ssize_t) strlen(want));
    ck_assert_int_eq(memcmp(out, want, (size_t) n), 0);
    ck_assert_int_eq(slc_test_rewrite(&rl, 0, q, out, sizeof(want) - 1),
                     -1);
    ck_assert_int_eq(slc_test_rewrite(&rl, 0, q, out, 4), -1);

    /* continue: the first rewrite is kept, the next only matched */
    slc_test_eval(&rl, "SELECT a, t_b", "a", NULL, &v);
    ck_assert_int_eq(v.rewrite, 0);
    ck_assert_uint_eq(v.matched, BIT(0) | BIT(1));
    n = slc_test_rewrite(&rl, 1, "SELECT a, b FROM t", out, sizeof(out));
    ck_assert_int_eq(n, 18);
    ck_assert_str_eq(out, "SELECT b, a FROM t");

    /* nothing to replace: the statement as it is */
    n = slc_test_rewrite(&rl, 0, "SELECT 1", out, sizeof(out));
    ck_assert_int_eq(n, 8);
    ck_assert_str_eq(out, "SELECT 1");
    slc_sql_rules_free(&rl);
}
END_TEST


/* --- hostile patterns --------------------------------------------------- */

static double
slc_test_now(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* 40 a's and a b: 2^40 ways for ^(a+)+$ to fail. */
static const char *
slc_test_evil(void)
{
    static char  s[64];

    memset(s, 'a', 40);
    s[40] = 'b';
    s[41] = '\0';
    return s;
}

/* One rule (text), a limit of 1000: the verdict on the evil text and
   how long it took. */
static double
slc_test_hostile(int jit, const char *text, const char *q,
    const char *user, slc_sql_rule_verdict_t *v)
{
    slc_sql_rules_t  rl;
    double           t;

    slc_sql_rules_init(&rl);
    rl.jit = jit != 0;
    ck_assert_int_eq(slc_sql_rules_limit(&rl, 1000), SLC_OK);
    ck_assert_uint_eq(rl.match_limit, 1000);
    slc_test_add(&rl, "evil", text);
    slc_test_add(&rl, "after", "cache_ttl 1s");
    t = slc_test_now();
    slc_test_eval(&rl, q, user, NULL, v);
    t = slc_test_now() - t;
    slc_sql_rules_free(&rl);
    return t;
}

/*
 * A match that exceeds the limit ends at once; it is no match for a rule
 * that lets something through (route, a cache ttl, rewrite), a match for
 * one that keeps something out (block, no_cache).
 */
static void
slc_test_hostile_all(int jit)
{
    static const struct {
        const char  *text;
        int          user;      /* the evil string is the user's */
        int          match;
    } c[] = {
        { "match_text \"^(a+)+$\"; route replica", 0, 0 },
        { "match_text \"^(a+)+$\"; route primary; continue", 0, 0 },
        { "match_text \"^(a+)+$\"; cache_ttl 5s", 0, 0 },
        { "match_text \"^(a+)+$\"; rewrite x", 0, 0 },
        { "match_text \"^(a+)+$\"; block", 0, 1 },
        { "match_text \"^(a+)+$\"; no_cache", 0, 1 },
        { "match_user \"^(a+)+$\"; route replica", 1, 0 },
        { "match_user \"^(a+)+$\"; block \"no\" 1045", 1, 1 },
        { "match_user \"^(a+)+$\"; no_cache", 1, 1 },
    };
    const char             *evil = slc_test_evil();
    slc_sql_rule_verdict_t  v;
    double                  t;

    for (size_t i = 0; i < slc_nelems(c); i++) {
        t = slc_test_hostile(jit, c[i].text, c[i].user ? "SELECT 1" : evil,
                             c[i].user ? evil : "app", &v);
        ck_assert_msg(t < 1.0, "jit %d: %s: %.3f s", jit, c[i].text, t);
        ck_assert_msg(v.failed == BIT(0), "jit %d: %s: failed %llx", jit,
                      c[i].text, (unsigned long long) v.failed);
        if (c[i].match) {
            /* it decides: the next rule is not reached */
            ck_assert_msg(v.matched == BIT(0) && v.first == 0,
                          "jit %d: %s: matched %llx", jit, c[i].text,
                          (unsigned long long) v.matched);
            ck_assert(v.block == 0 || v.cache == 0);
        } else {
            ck_assert_msg(v.matched == BIT(1) && v.first == 1,
                          "jit %d: %s: matched %llx", jit, c[i].text,
                          (unsigned long long) v.matched);
            ck_assert_int_eq(v.route, -1);
            ck_assert_int_eq(v.rewrite, -1);
            ck_assert_int_eq(v.cache, 1);
        }
    }

    /* the same pattern on a text it matches, or fails fast on */
    (void) slc_test_hostile(jit, "match_text \"^(a+)+$\"; block", "aaaa",
                            "a", &v);
    ck_assert(v.matched == BIT(0) && v.failed == 0 && v.block == 0);
    (void) slc_test_hostile(jit, "match_text \"^(a+)+$\"; block", "baaa",
                            "a", &v);
    ck_assert(v.matched == BIT(1) && v.failed == 0 && v.block == -1);
}

START_TEST(test_hostile_jit)
{
    slc_test_hostile_all(1);
}
END_TEST

START_TEST(test_hostile_nojit)
{
    slc_test_hostile_all(0);
}
END_TEST

/* A rewrite whose match exceeds the limit gives -1, not a half-done
   statement. */
START_TEST(test_hostile_rewrite)
{
    for (int jit = 0; jit < 2; jit++) {
        slc_sql_rules_t  rl;
        char             out[128];

        slc_sql_rules_init(&rl);
        rl.jit = jit;
        ck_assert_int_eq(slc_sql_rules_limit(&rl, 1000), SLC_OK);
        slc_test_add(&rl, "evil", "match_text \"^(a+)+$\"; rewrite x");
        ck_assert_int_eq(slc_test_rewrite(&rl, 0, slc_test_evil(), out,
                                          sizeof(out)), -1);
        ck_assert_int_eq(slc_test_rewrite(&rl, 0, "aaa", out, sizeof(out)),
                         1);
        ck_assert_str_eq(out, "x");
        slc_sql_rules_free(&rl);
    }
}
END_TEST

/* Without a limit set, the engine's own (not pcre2's ten million)
   still ends a catastrophic match. */
START_TEST(test_hostile_default_limit)
{
    slc_sql_rules_t         rl;
    slc_sql_rule_verdict_t  v;

    slc_sql_rules_init(&rl);
    slc_test_add(&rl, "evil", "match_text \"^(a+)+$\"; no_cache");
    slc_test_eval(&rl, slc_test_evil(), "a", NULL, &v);
    ck_assert_uint_eq(v.failed, BIT(0));
    ck_assert_uint_eq(v.matched, BIT(0));
    ck_assert_int_eq(v.cache, 0);
    slc_sql_rules_free(&rl);
}
END_TEST

/* A block rule whose one test hits the limit and another plainly does
   not match does not match: the order of the tests does not matter. */
START_TEST(test_hostile_and)
{
    for (int jit = 0; jit < 2; jit++) {
        slc_sql_rules_t         rl;
        slc_sql_rule_verdict_t  v;

        slc_sql_rules_init(&rl);
        rl.jit = jit;
        ck_assert_int_eq(slc_sql_rules_limit(&rl, 1000), SLC_OK);
        slc_test_add(&rl, "bob_only",
                     "match_text \"^(a+)+$\"; match_user \"^bob$\"; block");
        slc_test_eval(&rl, slc_test_evil(), "alice", NULL, &v);
        ck_assert_int_eq(v.block, -1);
        ck_assert_uint_eq(v.matched, 0);
        ck_assert_uint_eq(v.failed, BIT(0));
        slc_test_eval(&rl, slc_test_evil(), "bob", NULL, &v);
        ck_assert_int_eq(v.block, 0);
        ck_assert_uint_eq(v.matched, BIT(0));
        ck_assert_uint_eq(v.failed, BIT(0));
        slc_sql_rules_free(&rl);
    }
}
END_TEST

static Suite *
slc_sql_rule_suite(void)
{
    Suite  *s = suite_create("sql_rule");
    TCase  *tc = tcase_create("rule");

    tcase_add_test(tc, test_name_ok);
    tcase_add_test(tc, test_init);
    tcase_add_test(tc, test_set_match);
    tcase_add_test(tc, test_set_bad_regex);
    tcase_add_test(tc, test_set_route);
    tcase_add_test(tc, test_set_block);
    tcase_add_test(tc, test_set_rewrite);
    tcase_add_test(tc, test_set_cache);
    tcase_add_test(tc, test_set_continue);
    tcase_add_test(tc, test_add_checks);
    tcase_add_test(tc, test_eval_64);
    tcase_add_test(tc, test_eval_order);
    tcase_add_test(tc, test_eval_and);
    tcase_add_test(tc, test_eval_tables);
    tcase_add_test(tc, test_eval_digest);
    tcase_add_test(tc, test_eval_none);
    tcase_add_test(tc, test_rewrite);
    tcase_add_test(tc, test_hostile_jit);
    tcase_add_test(tc, test_hostile_nojit);
    tcase_add_test(tc, test_hostile_rewrite);
    tcase_add_test(tc, test_hostile_default_limit);
    tcase_add_test(tc, test_hostile_and);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return slc_check_run(slc_sql_rule_suite());
}
