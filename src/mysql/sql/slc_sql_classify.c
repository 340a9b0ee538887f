/*
 * The statement classifier (slc_sql_classify.h): a tokenizer over SQL
 * text and a small state machine over its tokens.  No parser: it looks at
 * the first word, at a few words after it, at some pairs and triples of
 * words (FOR UPDATE, LOCK IN SHARE MODE, NEXT VALUE FOR), at names after
 * the words that introduce tables, and at function names followed by "(".
 * One pass, no recursion, no allocation.
 */

/* the tokenizer, compiled in for its inlining (slc_sql_lex.h) */
#define SLC_SQL_LEX_API static
#include "slc_sql_classify.h"
#include "slc_sql_lex.c"

#include <ctype.h>
#include <string.h>

#include "slc_hash.h"
#include "slc_sql_builtins.h"


/* --- words -------------------------------------------------------------- */

/* What a word is, besides its identity. */
#define SLC_SQL_RES     0x01    /* reserved: never an unquoted table name */
#define SLC_SQL_SKIP    0x02    /* may come between TABLE/FROM/INTO and the
                                   name (IF NOT EXISTS, LOW_PRIORITY) */
#define SLC_SQL_CLAUSE  0x04    /* ends a list of tables (WHERE, ON...) */
#define SLC_SQL_BARE    0x08    /* its flags apply without "(" too */
#define SLC_SQL_ND      SLC_SQL_F_NON_DETERMINISTIC

/*
 * The words the classifier knows, IN ASCII ORDER (they are searched by
 * bisection; the unit test checks the order): name, attributes, and the
 * flags the word sets when it is called as a function (or bare, with
 * SLC_SQL_BARE).
 */
#define SLC_SQL_WORDS(X) \
    X(ALTER, SLC_SQL_RES, 0) \
    X(ANALYZE, SLC_SQL_RES, 0) \
    X(AS, SLC_SQL_RES, 0) \
    X(BACKUP, 0, 0) \
    X(BEGIN, 0, 0) \
    X(BENCHMARK, 0, SLC_SQL_ND) \
    X(BINARY, SLC_SQL_RES, 0) \
    X(BINLOG, 0, 0) \
    X(BINLOG_GTID_POS, 0, SLC_SQL_ND) \
    X(CACHE, 0, 0) \
    X(CALL, SLC_SQL_RES, 0) \
    X(CHANGE, SLC_SQL_RES, 0) \
    X(CHECK, SLC_SQL_RES, 0) \
    X(CHECKSUM, 0, 0) \
    X(COLUMN, SLC_SQL_RES, 0) \
    X(COMMIT, 0, 0) \
    X(CONNECTION_ID, 0, SLC_SQL_F_CONN_ID | SLC_SQL_ND) \
    X(CONSISTENT, 0, 0) \
    X(CONVERT_TZ, 0, SLC_SQL_ND) \
    X(COUNT, 0, 0) \
    X(CREATE, SLC_SQL_RES, 0) \
    X(CURDATE, 0, SLC_SQL_ND) \
    X(CURRENT_DATE, SLC_SQL_RES | SLC_SQL_BARE, SLC_SQL_ND) \
    X(CURRENT_ROLE, SLC_SQL_BARE, SLC_SQL_ND) \
    X(CURRENT_TIME, SLC_SQL_RES | SLC_SQL_BARE, SLC_SQL_ND) \
    X(CURRENT_TIMESTAMP, SLC_SQL_RES | SLC_SQL_BARE, SLC_SQL_ND) \
    X(CURRENT_USER, SLC_SQL_RES | SLC_SQL_BARE, SLC_SQL_ND) \
    X(CURTIME, 0, SLC_SQL_ND) \
    X(DATABASE, SLC_SQL_RES, SLC_SQL_ND) \
    X(DEALLOCATE, 0, 0) \
    X(DEFAULT, SLC_SQL_RES, 0) \
    X(DELAYED, SLC_SQL_RES | SLC_SQL_SKIP, 0) \
    X(DELETE, SLC_SQL_RES, 0) \
    X(DESC, SLC_SQL_RES, 0) \
    X(DESCRIBE, SLC_SQL_RES, 0) \
    X(DIAGNOSTICS, 0, 0) \
    X(DO, 0, 0) \
    X(DROP, SLC_SQL_RES, 0) \
    X(DUAL, SLC_SQL_RES, 0) \
    X(ENCRYPT, 0, SLC_SQL_ND) \
    X(ERRORS, 0, 0) \
    X(EXCEPT, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(EXECUTE, 0, 0) \
    X(EXISTS, SLC_SQL_RES | SLC_SQL_SKIP, 0) \
    X(EXPLAIN, SLC_SQL_RES, 0) \
    X(EXTENDED, 0, 0) \
    X(FLUSH, 0, 0) \
    X(FOR, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(FORCE, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(FORMAT, 0, 0) \
    X(FOUND_ROWS, 0, SLC_SQL_F_FOUND_ROWS | SLC_SQL_F_SAME_AS_LAST \
                     | SLC_SQL_ND) \
    X(FROM, SLC_SQL_RES, 0) \
    X(GET, SLC_SQL_RES, 0) \
    X(GET_LOCK, 0, SLC_SQL_F_LOCK_FUNC | SLC_SQL_ND) \
    X(GLOBAL, 0, 0) \
    X(GRANT, SLC_SQL_RES, 0) \
    X(GROUP, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(HANDLER, 0, 0) \
    X(HAVING, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(HIGH_PRIORITY, SLC_SQL_RES | SLC_SQL_SKIP, 0) \
    X(IF, SLC_SQL_RES | SLC_SQL_SKIP, 0) \
    X(IGNORE, SLC_SQL_RES | SLC_SQL_SKIP | SLC_SQL_CLAUSE, 0) \
    X(IN, SLC_SQL_RES, 0) \
    X(INDEX, SLC_SQL_RES, 0) \
    X(INSERT, SLC_SQL_RES, 0) \
    X(INSTALL, 0, 0) \
    X(INTERSECT, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(INTO, SLC_SQL_RES | SLC_SQL_SKIP | SLC_SQL_CLAUSE, 0) \
    X(IS_FREE_LOCK, 0, SLC_SQL_F_LOCK_FUNC | SLC_SQL_ND) \
    X(IS_USED_LOCK, 0, SLC_SQL_F_LOCK_FUNC | SLC_SQL_ND) \
    X(JOIN, SLC_SQL_RES, 0) \
    X(JSON_TABLE, 0, 0) \
    X(KEY, SLC_SQL_RES, 0) \
    X(KILL, SLC_SQL_RES, 0) \
    X(LASTVAL, 0, SLC_SQL_F_SEQUENCE | SLC_SQL_ND) \
    X(LAST_INSERT_ID, 0, SLC_SQL_F_LAST_ID | SLC_SQL_ND) \
    X(LATERAL, SLC_SQL_RES, 0) \
    X(LIKE, SLC_SQL_RES, 0) \
    X(LIMIT, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(LOAD, SLC_SQL_RES, 0) \
    X(LOAD_FILE, 0, SLC_SQL_ND) \
    X(LOCAL, 0, 0) \
    X(LOCALTIME, SLC_SQL_RES | SLC_SQL_BARE, SLC_SQL_ND) \
    X(LOCALTIMESTAMP, SLC_SQL_RES | SLC_SQL_BARE, SLC_SQL_ND) \
    X(LOCK, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(LOW_PRIORITY, SLC_SQL_RES | SLC_SQL_SKIP, 0) \
    X(MASTER, 0, 0) \
    X(MASTER_GTID_WAIT, 0, SLC_SQL_ND) \
    X(MASTER_POS_WAIT, 0, SLC_SQL_ND) \
    X(NEXT, 0, 0) \
    X(NEXTVAL, 0, SLC_SQL_F_SEQUENCE | SLC_SQL_ND) \
    X(NOT, SLC_SQL_RES | SLC_SQL_SKIP, 0) \
    X(NOW, 0, SLC_SQL_ND) \
    X(NO_WRITE_TO_BINLOG, SLC_SQL_RES, 0) \
    X(ON, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(ONLY, 0, 0) \
    X(OPTIMIZE, SLC_SQL_RES, 0) \
    X(ORDER, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(PARTITIONS, 0, 0) \
    X(PASSWORD, 0, 0) \
    X(PERSIST, 0, 0) \
    X(PERSIST_ONLY, 0, 0) \
    X(PREPARE, 0, 0) \
    X(PREVIOUS, 0, 0) \
    X(PROFILE, 0, 0) \
    X(PROFILES, 0, 0) \
    X(PURGE, SLC_SQL_RES, 0) \
    X(RAND, 0, SLC_SQL_ND) \
    X(RANDOM_BYTES, 0, SLC_SQL_ND) \
    X(READ, SLC_SQL_RES, 0) \
    X(RELEASE, SLC_SQL_RES, 0) \
    X(RELEASE_ALL_LOCKS, 0, SLC_SQL_F_LOCK_FUNC | SLC_SQL_ND) \
    X(RELEASE_LOCK, 0, SLC_SQL_F_LOCK_FUNC | SLC_SQL_ND) \
    X(RENAME, SLC_SQL_RES, 0) \
    X(REPAIR, 0, 0) \
    X(REPLACE, SLC_SQL_RES, 0) \
    X(RESET, 0, 0) \
    X(RESIGNAL, SLC_SQL_RES, 0) \
    X(RETURNING, SLC_SQL_CLAUSE, 0) \
    X(REVOKE, SLC_SQL_RES, 0) \
    X(ROLLBACK, 0, 0) \
    X(ROW_COUNT, 0, SLC_SQL_F_SAME_AS_LAST | SLC_SQL_ND) \
    X(SAVEPOINT, 0, 0) \
    X(SCHEMA, SLC_SQL_RES, SLC_SQL_ND) \
    X(SELECT, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(SESSION, 0, 0) \
    X(SESSION_USER, 0, SLC_SQL_ND) \
    X(SET, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(SETVAL, 0, SLC_SQL_F_SEQUENCE | SLC_SQL_ND) \
    X(SHARE, 0, 0) \
    X(SHOW, SLC_SQL_RES, 0) \
    X(SHUTDOWN, 0, 0) \
    X(SIGNAL, SLC_SQL_RES, 0) \
    X(SLEEP, 0, SLC_SQL_ND) \
    X(SOURCE_POS_WAIT, 0, SLC_SQL_ND) \
    X(SQL_CALC_FOUND_ROWS, SLC_SQL_RES | SLC_SQL_BARE, \
      SLC_SQL_F_CALC_FOUND_ROWS) \
    X(SQL_NO_CACHE, 0, 0) \
    X(START, 0, 0) \
    X(STATEMENT, 0, 0) \
    X(STATUS, 0, 0) \
    X(STOP, 0, 0) \
    X(STRAIGHT_JOIN, SLC_SQL_RES, 0) \
    X(SYSDATE, 0, SLC_SQL_ND) \
    X(SYSTEM_TIME, 0, 0) \
    X(SYSTEM_USER, 0, SLC_SQL_ND) \
    X(SYS_GUID, 0, SLC_SQL_ND) \
    X(TABLE, SLC_SQL_RES | SLC_SQL_SKIP, 0) \
    X(TABLES, 0, 0) \
    X(TEMPORARY, 0, 0) \
    X(TO, SLC_SQL_RES, 0) \
    X(TRANSACTION, 0, 0) \
    X(TRUNCATE, 0, 0) \
    X(UNINSTALL, 0, 0) \
    X(UNION, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(UNIX_TIMESTAMP, 0, SLC_SQL_ND) \
    X(UNLOCK, SLC_SQL_RES, 0) \
    X(UPDATE, SLC_SQL_RES, 0) \
    X(USE, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(USER, 0, SLC_SQL_ND) \
    X(USING, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(UTC_DATE, SLC_SQL_RES | SLC_SQL_BARE, SLC_SQL_ND) \
    X(UTC_TIME, SLC_SQL_RES | SLC_SQL_BARE, SLC_SQL_ND) \
    X(UTC_TIMESTAMP, SLC_SQL_RES | SLC_SQL_BARE, SLC_SQL_ND) \
    X(UUID, 0, SLC_SQL_ND) \
    X(UUID_SHORT, 0, SLC_SQL_ND) \
    X(VALUE, 0, 0) \
    X(VALUES, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(WAIT_FOR_EXECUTED_GTID_SET, 0, SLC_SQL_ND) \
    X(WAIT_UNTIL_SQL_THREAD_AFTER_GTIDS, 0, SLC_SQL_ND) \
    X(WARNINGS, 0, 0) \
    X(WHERE, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(WINDOW, SLC_SQL_RES | SLC_SQL_CLAUSE, 0) \
    X(WITH, SLC_SQL_RES, 0) \
    X(WRITE, SLC_SQL_RES, 0) \
    X(XA, 0, 0) \


typedef enum {
    SLC_SQL_W_NONE = 0,
#define SLC_SQL_WORD_ID(w, a, f)  SLC_SQL_W_##w,
    SLC_SQL_WORDS(SLC_SQL_WORD_ID)
#undef SLC_SQL_WORD_ID
    SLC_SQL_W_N
} slc_sql_word_t;

typedef struct {
    const char  *name;
    uint8_t      len;
    uint8_t      attr;
    uint32_t     fn;
} slc_sql_wdef_t;

static const slc_sql_wdef_t  slc_sql_words[] = {
    { "", 0, 0, 0 },
#define SLC_SQL_WORD_DEF(w, a, f)  { #w, sizeof(#w) - 1, (a), (f) },
    SLC_SQL_WORDS(SLC_SQL_WORD_DEF)
#undef SLC_SQL_WORD_DEF
};

#define SLC_SQL_WORD_MAX  40


/*
 * Keywords by hash of their upper-case spelling: open addressing in a
 * table over twice their number, so a word costs one hash as it is
 * upper-cased and a probe or two (a binary search cost eight strcmp
 * calls per word, a visible part of a cache hit's CPU).  Built on first
 * use; every process builds the same.
 */
#define SLC_SQL_WHASH  512


static uint8_t   slc_sql_whash[SLC_SQL_WHASH];  /* word ids, 0: empty */
static uint64_t  slc_sql_wlens[256];    /* by first byte: bit L, a keyword
                                           of length L starts so */
static uint8_t   slc_sql_wchar[256];    /* 1: in some keyword */
static int       slc_sql_whash_built;

static void
slc_sql_whash_build(void)
{
    for (size_t w = 1; w < SLC_SQL_W_N; w++) {
        const slc_sql_wdef_t *d = &slc_sql_words[w];
        uint32_t h = slc_hash_key(d->name, d->len);
        uint8_t  first = (uint8_t) d->name[0];

        slc_sql_wlens[first] |= (uint64_t) 1 << d->len;
        slc_sql_wlens[tolower(first)] |= (uint64_t) 1 << d->len;
        for (size_t i = 0; i < d->len; i++) {
            slc_sql_wchar[(uint8_t) d->name[i]] = 1;
            slc_sql_wchar[tolower((uint8_t) d->name[i])] = 1;
        }

        for (h &= SLC_SQL_WHASH - 1; slc_sql_whash[h] != 0;
             h = (h + 1) & (SLC_SQL_WHASH - 1))
        {
            /* probe */
        }
        slc_sql_whash[h] = (uint8_t) w;
    }
    slc_sql_whash_built = 1;
}

/* The id of the word q[0..len), SLC_SQL_W_NONE when it is no keyword. */
static slc_sql_word_t
slc_sql_word_find(const uint8_t *q, size_t len)
{
    char     up[SLC_SQL_WORD_MAX];
    uint32_t h;

    if (len >= SLC_SQL_WORD_MAX) {
        return SLC_SQL_W_NONE;
    }
    if (!slc_sql_whash_built) {
        slc_sql_whash_build();
    }
    /* most identifiers are no keyword: tell by their first byte and
       length, or by a byte no keyword has (a digit), before hashing */
    if (!(slc_sql_wlens[q[0]] & ((uint64_t) 1 << len))) {
        return SLC_SQL_W_NONE;
    }
    for (size_t i = 1; i < len; i++) {
        if (!slc_sql_wchar[q[i]]) {
            return SLC_SQL_W_NONE;
        }
    }
    for (h = slc_sql_upcase(q, len, up) & (SLC_SQL_WHASH - 1);
         slc_sql_whash[h] != 0;
         h = (h + 1) & (SLC_SQL_WHASH - 1))
    {
        const slc_sql_wdef_t *d = &slc_sql_words[slc_sql_whash[h]];

        if (d->len == len && memcmp(d->name, up, len) == 0) {
            return (slc_sql_word_t) slc_sql_whash[h];
        }
    }
    return SLC_SQL_W_NONE;
}

int
slc_sql_words_check(void)
{
    char lower[SLC_SQL_WORD_MAX];

    /* ids fit the hash's bytes, which stays at most half full */
    if (SLC_SQL_W_N > 255 || SLC_SQL_W_N * 2 > SLC_SQL_WHASH) {
        return 0;
    }
    for (size_t i = 1; i < SLC_SQL_W_N; i++) {
        const slc_sql_wdef_t *d = &slc_sql_words[i];

        /* in order, unique, found in either case, and a prefix is not */
        if ((i > 1 && strcmp(slc_sql_words[i - 1].name, d->name) >= 0)
            || d->len >= SLC_SQL_WORD_MAX
            || slc_sql_word_find((const uint8_t *) d->name, d->len) != i
            || slc_sql_word_find((const uint8_t *) d->name, d->len - 1u)
               == i)
        {
            return 0;
        }
        for (size_t k = 0; k < d->len; k++) {
            lower[k] = (char) (d->name[k] >= 'A' && d->name[k] <= 'Z'
                               ? d->name[k] + 32 : d->name[k]);
        }
        if (slc_sql_word_find((const uint8_t *) lower, d->len) != i) {
            return 0;
        }
    }
    return 1;
}


/* --- the classifier ----------------------------------------------------- */

typedef struct {
    slc_sql_info_t  *out;
    const uint8_t   *q;
    slc_sql_kind_t   kind;      /* of the statement that decides (EXPLAIN's
                                   and SET STATEMENT's inner one) */
    slc_sql_word_t   main;      /* the word that set kind */
    slc_sql_word_t   w1, w2;    /* the two tokens before, when words */
    slc_sql_tok_t    p1;        /* the token before */
    slc_sql_ttype_t  p2type;    /* and the one before that */
    uint8_t          p2punct;
    unsigned         depth;     /* parentheses */
    uint64_t         lists;     /* bit d: a list of tables at depth d */
    uint64_t         joins;     /* bit d: that list is in a join condition
                                   or an index hint: a "," continues it */
    unsigned         nw;        /* words since main */
    unsigned         start:1;   /* the next word starts a statement */
    unsigned         with:1;    /* WITH: the main statement is to come */
    unsigned         explain:2; /* after EXPLAIN (1), ANALYZE (2) */
    unsigned         skip:2;    /* EXPLAIN FORMAT = x: tokens to skip */
    unsigned         outer:1;   /* EXPLAIN of the inner statement */
    unsigned         capture:2; /* the next name is a table (1), one
                                   whose column list may follow (2:
                                   INSERT, REPLACE, LOAD ... INTO t (a)) */
    unsigned         dot:2;     /* 1: a table was named; 2: and a "." */
    unsigned         p1_table:1; /* the token before is a table's name */
    unsigned         target:1;  /* the last table named was a capture 2 */
    unsigned         for_list:1; /* the last FOR ended a list of tables */
    unsigned         semi:1;    /* a ";" ended a statement */
    unsigned         var:1;     /* a user variable, read unless := */
    unsigned         set_stmt:1; /* SET STATEMENT: FOR starts the inner */
    unsigned         into:1;    /* INTO @a, @b: assigned, not read */
    unsigned         more:1;    /* a statement after the first */
    slc_sql_kind_t   first;     /* and the first one's kind */
} slc_sql_state_t;

static int
slc_sql_punct_is(const slc_sql_tok_t *t, const uint8_t *q, uint8_t c)
{
    return t->type == SLC_SQL_T_PUNCT && q[t->off] == c;
}

/*
 * A list of tables at this depth: a "," in it introduces a table.  Past
 * 64 levels there is no bit to keep it, and the names after its commas
 * would be missed: the tables are then partial.
 */
static void
slc_sql_list_open(slc_sql_state_t *st)
{
    if (st->depth < 64) {
        st->lists |= (uint64_t) 1 << st->depth;
    } else {
        st->out->flags |= SLC_SQL_F_TABLES_PARTIAL;
    }
}

static void
slc_sql_list_close(slc_sql_state_t *st)
{
    if (st->depth < 64) {
        st->lists &= ~((uint64_t) 1 << st->depth);
    }
}

static int
slc_sql_list_is_open(const slc_sql_state_t *st)
{
    return st->depth < 64 && (st->lists >> st->depth & 1);
}

static int
slc_sql_join_is_open(const slc_sql_state_t *st)
{
    return st->depth < 64 && (st->joins >> st->depth & 1);
}

static void
slc_sql_join_close(slc_sql_state_t *st)
{
    if (st->depth < 64) {
        st->joins &= ~((uint64_t) 1 << st->depth);
    }
}

/* The list at this depth waits for its "," (a join condition). */
static void
slc_sql_join_suspend(slc_sql_state_t *st)
{
    if (st->depth < 64) {
        st->joins |= (uint64_t) 1 << st->depth;
    }
}

/*
 * A word that ends a list of tables.  ON, USING and an index hint (USE,
 * FORCE, IGNORE INDEX [FOR JOIN|ORDER BY|GROUP BY] (...)) only suspend it:
 * "FROM t1 JOIN t2 ON t1.a = t2.a, t3" and "FROM t USE INDEX (i), u" go
 * on with a table after the comma (a missed table is a stale cache
 * entry that no write invalidates).  So does FOR when SYSTEM_TIME
 * follows (slc_sql_word): FOR remembers whether it ended a list.
 */
static void
slc_sql_clause(slc_sql_state_t *st, slc_sql_word_t w)
{
    int  in_hint = (w == SLC_SQL_W_FOR && (st->w1 == SLC_SQL_W_INDEX
                                           || st->w1 == SLC_SQL_W_KEY))
                   || ((w == SLC_SQL_W_ORDER || w == SLC_SQL_W_GROUP)
                       && st->w1 == SLC_SQL_W_FOR);
    int  suspend = w == SLC_SQL_W_ON || w == SLC_SQL_W_USING
                   || w == SLC_SQL_W_USE || w == SLC_SQL_W_FORCE
                   || w == SLC_SQL_W_IGNORE;

    if (w == SLC_SQL_W_FOR) {           /* FOR SYSTEM_TIME may follow */
        st->for_list = slc_sql_list_is_open(st)
                       || slc_sql_join_is_open(st);
    }
    if (slc_sql_join_is_open(st) && (suspend || in_hint)) {
        return;
    }
    if (suspend && slc_sql_list_is_open(st)) {
        slc_sql_join_suspend(st);
    } else {
        slc_sql_join_close(st);
    }
    slc_sql_list_close(st);
}

/*
 * `x`, or "x" in a name's place: without ANSI_QUOTES a string there is a
 * syntax error, so it is a name.
 */
static int
slc_sql_is_quoted(const slc_sql_tok_t *t)
{
    return t->type == SLC_SQL_T_QUOTED || t->type == SLC_SQL_T_DQUOTED;
}

static int
slc_sql_is_name(const slc_sql_tok_t *t)
{
    return t->type == SLC_SQL_T_WORD || slc_sql_is_quoted(t);
}

/*
 * A name is handed on as written, inside its quotes, for a consumer that
 * makes a doubled backtick one.  In "x", a doubled "" is one quote and a
 * doubled backtick two: such a name would not match the same one written
 * `x`, so the tables are said partial instead.
 */
static void
slc_sql_name_quotes(slc_sql_state_t *st, const slc_sql_tok_t *t)
{
    const uint8_t  *p = st->q + t->off;

    if (t->type == SLC_SQL_T_DQUOTED
        && (memchr(p, '"', t->len) != NULL
            || memchr(p, '`', t->len) != NULL))
    {
        st->out->flags |= SLC_SQL_F_TABLES_PARTIAL;
    }
}

/* A table name at t: record it, unless it cannot be one. */
static void
slc_sql_name(slc_sql_state_t *st, const slc_sql_tok_t *t)
{
    slc_sql_info_t  *si = st->out;
    size_t           i;

    st->target = st->capture == 2;
    st->capture = 0;
    if (t->type == SLC_SQL_T_WORD) {
        for (i = 0; i < t->len && st->q[t->off + i] >= '0'
                    && st->q[t->off + i] <= '9'; i++) { }
        if (i == t->len) {
            return;                     /* a number */
        }
    }
    if (si->ntables == SLC_SQL_MAX_TABLES) {
        si->flags |= SLC_SQL_F_TABLES_PARTIAL;
        return;
    }
    si->tables[si->ntables++] = (slc_sql_name_t) {
        .off = t->off, .len = t->len
    };
    slc_sql_name_quotes(st, t);
    st->dot = 1;
}

/* db.name: the last name was the schema. */
static void
slc_sql_name_qualify(slc_sql_state_t *st, const slc_sql_tok_t *t)
{
    slc_sql_name_t  *nm = &st->out->tables[st->out->ntables - 1];

    nm->db_off = nm->off;
    nm->db_len = nm->len;
    nm->off = t->off;
    nm->len = t->len;
    slc_sql_name_quotes(st, t);
}

static int
slc_sql_is_main(slc_sql_word_t w)
{
    switch (w) {
    case SLC_SQL_W_SELECT: case SLC_SQL_W_VALUES: case SLC_SQL_W_TABLE:
    case SLC_SQL_W_INSERT: case SLC_SQL_W_UPDATE: case SLC_SQL_W_DELETE:
    case SLC_SQL_W_REPLACE:
        return 1;
    default:
        return 0;
    }
}

/*
 * The kind a statement's first word gives, and what to expect next.
 * Longer than a screen because it is a table: one case per keyword,
 * read as one (splitting it would only scatter the table).
 */
static slc_sql_kind_t
slc_sql_first_kind(slc_sql_state_t *st, slc_sql_word_t w)
{
    switch (w) {
    case SLC_SQL_W_SELECT: case SLC_SQL_W_VALUES:
        return SLC_SQL_SELECT;
    case SLC_SQL_W_TABLE:
        st->capture = 1;
        return SLC_SQL_SELECT;
    case SLC_SQL_W_WITH:
        st->with = 1;
        return SLC_SQL_UNKNOWN;
    case SLC_SQL_W_SHOW:
        return SLC_SQL_SHOW;
    case SLC_SQL_W_DESCRIBE: case SLC_SQL_W_DESC: case SLC_SQL_W_EXPLAIN:
        st->explain = 1;
        return SLC_SQL_EXPLAIN;
    case SLC_SQL_W_ANALYZE:
        st->explain = 2;
        return SLC_SQL_EXPLAIN;
    case SLC_SQL_W_SET:
        return SLC_SQL_SET;
    case SLC_SQL_W_USE:
        return SLC_SQL_USE;
    case SLC_SQL_W_BEGIN: case SLC_SQL_W_START:
        return SLC_SQL_BEGIN;           /* START: TRANSACTION, or ADMIN */
    case SLC_SQL_W_COMMIT:
        return SLC_SQL_COMMIT;
    case SLC_SQL_W_ROLLBACK:
        return SLC_SQL_ROLLBACK;
    case SLC_SQL_W_SAVEPOINT: case SLC_SQL_W_RELEASE:
        return SLC_SQL_SAVEPOINT;
    case SLC_SQL_W_XA:
        return SLC_SQL_XA;
    case SLC_SQL_W_INSERT:
        st->capture = 2;
        return SLC_SQL_INSERT;
    case SLC_SQL_W_REPLACE:
        st->capture = 2;
        return SLC_SQL_REPLACE;
    case SLC_SQL_W_UPDATE:
        st->capture = 1;
        slc_sql_list_open(st);
        return SLC_SQL_UPDATE;
    case SLC_SQL_W_DELETE:
        return SLC_SQL_DELETE;
    case SLC_SQL_W_TRUNCATE:
        st->capture = 1;
        return SLC_SQL_DDL;
    case SLC_SQL_W_CREATE: case SLC_SQL_W_ALTER: case SLC_SQL_W_DROP:
    case SLC_SQL_W_RENAME:
        return SLC_SQL_DDL;
    case SLC_SQL_W_CALL:
        return SLC_SQL_CALL;
    case SLC_SQL_W_LOAD:
        return SLC_SQL_LOAD;
    case SLC_SQL_W_PREPARE:
        return SLC_SQL_PREPARE;
    case SLC_SQL_W_EXECUTE:
        return SLC_SQL_EXECUTE;
    case SLC_SQL_W_DEALLOCATE:
        return SLC_SQL_DEALLOCATE;
    case SLC_SQL_W_DO:
        return SLC_SQL_DO;
    case SLC_SQL_W_LOCK: case SLC_SQL_W_UNLOCK:
        return SLC_SQL_LOCK;
    case SLC_SQL_W_HANDLER:
        st->capture = 1;
        return SLC_SQL_HANDLER;
    case SLC_SQL_W_FLUSH: case SLC_SQL_W_KILL: case SLC_SQL_W_GRANT:
    case SLC_SQL_W_REVOKE: case SLC_SQL_W_OPTIMIZE: case SLC_SQL_W_CHECK:
    case SLC_SQL_W_CHECKSUM: case SLC_SQL_W_REPAIR: case SLC_SQL_W_RESET:
    case SLC_SQL_W_PURGE: case SLC_SQL_W_INSTALL: case SLC_SQL_W_UNINSTALL:
    case SLC_SQL_W_CHANGE: case SLC_SQL_W_STOP: case SLC_SQL_W_SHUTDOWN:
    case SLC_SQL_W_CACHE: case SLC_SQL_W_BINLOG: case SLC_SQL_W_BACKUP:
    case SLC_SQL_W_SIGNAL: case SLC_SQL_W_RESIGNAL: case SLC_SQL_W_GET:
        return SLC_SQL_ADMIN;
    default:
        return SLC_SQL_UNKNOWN;
    }
}

static void
slc_sql_first(slc_sql_state_t *st, slc_sql_word_t w)
{
    st->start = 0;
    st->main = w;
    st->nw = 0;
    st->kind = slc_sql_first_kind(st, w);
    switch (st->kind) {
    case SLC_SQL_INSERT: case SLC_SQL_UPDATE: case SLC_SQL_DELETE:
    case SLC_SQL_REPLACE: case SLC_SQL_DDL: case SLC_SQL_CALL:
    case SLC_SQL_LOAD: case SLC_SQL_LOCK:
        st->out->flags |= SLC_SQL_F_WRITE;
        break;
    case SLC_SQL_ADMIN:
        if (w != SLC_SQL_W_GET) {
            st->out->flags |= SLC_SQL_F_WRITE;
        }
        break;
    default:
        break;
    }
}

/* After EXPLAIN/DESCRIBE/ANALYZE: options, a statement, or a table. */
static void
slc_sql_explain(slc_sql_state_t *st, const slc_sql_tok_t *t)
{
    slc_sql_word_t  w = t->word;

    if (st->skip > 0) {
        st->skip--;
        return;
    }
    if (w == SLC_SQL_W_EXTENDED || w == SLC_SQL_W_PARTITIONS
        || w == SLC_SQL_W_ANALYZE)
    {
        return;
    }
    if (w == SLC_SQL_W_FORMAT) {
        st->skip = 2;                   /* = JSON */
        return;
    }
    if (st->explain == 2
        && (w == SLC_SQL_W_TABLE || w == SLC_SQL_W_TABLES
            || w == SLC_SQL_W_NO_WRITE_TO_BINLOG || w == SLC_SQL_W_LOCAL))
    {
        st->explain = 0;
        st->kind = SLC_SQL_ADMIN;
        st->out->flags |= SLC_SQL_F_WRITE;
        st->capture = 1;
        slc_sql_list_open(st);
        return;
    }
    st->explain = 0;
    if (slc_sql_is_main(w) || w == SLC_SQL_W_WITH) {
        st->outer = 1;
        slc_sql_first(st, w);
    } else if (slc_sql_punct_is(t, st->q, '(')) {
        st->depth++;                    /* EXPLAIN (SELECT ...) */
    } else if (w == SLC_SQL_W_FOR || t->type == SLC_SQL_T_STRING) {
        st->out->flags |= SLC_SQL_F_WRITE;  /* FOR CONNECTION: primary */
    } else if (slc_sql_is_name(t)) {
        slc_sql_name(st, t);            /* DESCRIBE t */
    }
}

/* Words that mean something after a statement's first word: a table,
   one case per keyword, as slc_sql_first_kind. */
static void
slc_sql_word_kind(slc_sql_state_t *st, slc_sql_word_t w)
{
    uint32_t  *f = &st->out->flags;

    switch (st->kind) {
    case SLC_SQL_BEGIN:
        if (st->main == SLC_SQL_W_START && st->nw == 1
            && w != SLC_SQL_W_TRANSACTION)
        {
            st->kind = SLC_SQL_ADMIN;   /* START SLAVE, START REPLICA */
            *f |= SLC_SQL_F_WRITE;
        } else if (st->main == SLC_SQL_W_BEGIN && st->nw == 1
                   && w == SLC_SQL_W_NOT)
        {
            st->kind = SLC_SQL_COMPOUND;    /* BEGIN NOT ATOMIC */
            *f |= SLC_SQL_F_WRITE;
        } else if (st->w1 == SLC_SQL_W_READ && w == SLC_SQL_W_ONLY) {
            *f |= SLC_SQL_F_READ_ONLY_TRX;
        } else if (st->w1 == SLC_SQL_W_READ && w == SLC_SQL_W_WRITE) {
            *f |= SLC_SQL_F_READ_WRITE_TRX;
        } else if (w == SLC_SQL_W_CONSISTENT) {
            *f |= SLC_SQL_F_SNAPSHOT;
        }
        break;
    case SLC_SQL_ROLLBACK:
        if (w == SLC_SQL_W_TO) {
            st->kind = SLC_SQL_SAVEPOINT;
        }
        break;
    case SLC_SQL_DDL:
        if (w == SLC_SQL_W_TEMPORARY) {
            *f |= SLC_SQL_F_TEMPORARY;
        } else if (w == SLC_SQL_W_PREPARE && st->main == SLC_SQL_W_DROP
                   && st->nw == 1)
        {
            st->kind = SLC_SQL_DEALLOCATE;
            *f &= ~SLC_SQL_F_WRITE;
        } else if (w == SLC_SQL_W_LIKE) {
            st->capture = 1;            /* CREATE TABLE t LIKE u */
        }
        break;
    case SLC_SQL_SET:
        if (st->nw == 1 && w == SLC_SQL_W_STATEMENT) {
            st->set_stmt = 1;
        } else if (st->nw == 1
                   && (w == SLC_SQL_W_PASSWORD || w == SLC_SQL_W_DEFAULT))
        {
            *f |= SLC_SQL_F_WRITE;      /* SET PASSWORD, SET DEFAULT ROLE */
        } else if (st->depth == 0
                   && (w == SLC_SQL_W_GLOBAL || w == SLC_SQL_W_PERSIST
                       || w == SLC_SQL_W_PERSIST_ONLY))
        {
            *f |= SLC_SQL_F_GLOBAL;
        }
        break;
    case SLC_SQL_SHOW:
        if (st->nw == 1
            && (w == SLC_SQL_W_MASTER || w == SLC_SQL_W_BINLOG
                || w == SLC_SQL_W_BINARY))
        {
            *f |= SLC_SQL_F_BINLOG;
        } else if ((st->nw == 1
                    && (w == SLC_SQL_W_WARNINGS || w == SLC_SQL_W_ERRORS
                        || w == SLC_SQL_W_COUNT || w == SLC_SQL_W_STATUS
                        || w == SLC_SQL_W_PROFILE
                        || w == SLC_SQL_W_PROFILES))
                   || (st->nw == 2 && w == SLC_SQL_W_STATUS
                       && (st->w1 == SLC_SQL_W_SESSION
                           || st->w1 == SLC_SQL_W_LOCAL)))
        {
            *f |= SLC_SQL_F_SAME_AS_LAST;
        }
        break;
    case SLC_SQL_ADMIN:
        if (w == SLC_SQL_W_DIAGNOSTICS && st->main == SLC_SQL_W_GET) {
            *f |= SLC_SQL_F_SAME_AS_LAST;
        }
        break;
    default:
        break;
    }
}

/*
 * RENAME TABLE a TO b, ALTER TABLE a RENAME TO|AS b: the new name is a
 * table too, for a cache that invalidates by name.
 */
static void
slc_sql_word_to(slc_sql_state_t *st)
{
    if (st->kind != SLC_SQL_DDL) {
        return;
    }
    if ((st->main == SLC_SQL_W_RENAME && slc_sql_list_is_open(st))
        || (st->main == SLC_SQL_W_ALTER && st->w1 == SLC_SQL_W_RENAME))
    {
        st->capture = 1;
    }
}

/* TABLE, TABLES: a name follows; a list of them in some statements. */
static void
slc_sql_word_table(slc_sql_state_t *st)
{
    st->capture = st->kind == SLC_SQL_LOAD ? 2 : 1;
    if (st->kind == SLC_SQL_LOCK || st->kind == SLC_SQL_ADMIN
        || (st->kind == SLC_SQL_DDL && (st->main == SLC_SQL_W_DROP
                                        || st->main == SLC_SQL_W_RENAME)))
    {
        slc_sql_list_open(st);
    }
    if (st->kind == SLC_SQL_DDL && st->main == SLC_SQL_W_DROP) {
        st->out->flags |= SLC_SQL_F_DROP_TABLE;
    }
}

/* Words anywhere: tables, locking reads, sequences, INTO.  A table, one
   case per keyword, as slc_sql_first_kind. */
static void
slc_sql_word(slc_sql_state_t *st, const slc_sql_tok_t *t)
{
    slc_sql_word_t         w = t->word;
    const slc_sql_wdef_t  *d = &slc_sql_words[w];
    uint32_t              *f = &st->out->flags;

    if (st->capture) {
        if (d->attr & SLC_SQL_SKIP) {
            return;
        }
        if (!(d->attr & SLC_SQL_RES)) {
            slc_sql_name(st, t);
            return;
        }
        st->capture = 0;
        if (slc_sql_punct_is(&st->p1, st->q, '(')) {
            slc_sql_list_close(st);     /* FROM (SELECT|WITH|VALUES ...):
                                           a query, no list of tables */
        }
    }
    if (st->with && st->depth == 0 && slc_sql_is_main(w)) {
        st->with = 0;
        slc_sql_first(st, w);
        return;
    }
    if (st->set_stmt && st->depth == 0 && w == SLC_SQL_W_FOR) {
        st->set_stmt = 0;
        st->start = 1;
        return;
    }
    st->nw++;
    st->into = 0;
    if (d->attr & SLC_SQL_BARE) {
        *f |= d->fn;
    }
    if (d->attr & SLC_SQL_CLAUSE) {
        slc_sql_clause(st, w);
    }
    switch (w) {
    case SLC_SQL_W_FROM:
        st->capture = 1;
        slc_sql_list_open(st);
        break;
    case SLC_SQL_W_JOIN:                /* not USE INDEX FOR JOIN (i) */
        st->capture = st->w1 != SLC_SQL_W_FOR;
        break;
    case SLC_SQL_W_STRAIGHT_JOIN:
        st->capture = st->w1 != SLC_SQL_W_SELECT;
        break;
    case SLC_SQL_W_TABLE: case SLC_SQL_W_TABLES:
        slc_sql_word_table(st);
        break;
    case SLC_SQL_W_INTO:
        if (st->kind == SLC_SQL_SELECT) {
            *f |= SLC_SQL_F_SELECT_INTO;
        } else if (st->kind == SLC_SQL_INSERT
                   || st->kind == SLC_SQL_REPLACE)
        {
            st->capture = 2;
        }
        break;
    case SLC_SQL_W_UPDATE:
        if (st->w1 == SLC_SQL_W_FOR) {
            *f |= SLC_SQL_F_LOCKING_READ;
        }
        slc_sql_join_close(st);         /* ON DUPLICATE KEY UPDATE a, b */
        break;
    case SLC_SQL_W_RENAME:              /* ALTER TABLE t RENAME [TO] u */
        st->capture = st->kind == SLC_SQL_DDL
                      && st->main == SLC_SQL_W_ALTER;
        break;
    case SLC_SQL_W_TO: case SLC_SQL_W_AS:
        slc_sql_word_to(st);
        break;
    case SLC_SQL_W_SHARE:
        if (st->w1 == SLC_SQL_W_FOR
            || (st->w1 == SLC_SQL_W_IN && st->w2 == SLC_SQL_W_LOCK))
        {
            *f |= SLC_SQL_F_LOCKING_READ;
        }
        break;
    case SLC_SQL_W_FOR:
        if (st->w1 == SLC_SQL_W_VALUE && (st->w2 == SLC_SQL_W_NEXT
                                          || st->w2 == SLC_SQL_W_PREVIOUS))
        {
            *f |= SLC_SQL_F_SEQUENCE;
        }
        break;
    case SLC_SQL_W_SQL_NO_CACHE:
        *f |= SLC_SQL_F_SQL_NO_CACHE;
        break;
    case SLC_SQL_W_SYSTEM_TIME:         /* t FOR SYSTEM_TIME ... , u */
        if (st->w1 == SLC_SQL_W_FOR && st->for_list) {
            slc_sql_join_suspend(st);
        }
        break;
    default:
        break;
    }
    slc_sql_word_kind(st, w);
}

/* The call rule for a bare word w[0..len), whose keyword id is id. */
static int
slc_sql_word_calls_id(const uint8_t *w, size_t len, slc_sql_word_t id)
{
    if (len == 0 || (slc_sql_words[id].attr & SLC_SQL_RES)
        || (w[0] >= '0' && w[0] <= '9'))
    {
        return 0;
    }
    return !slc_sql_builtin_find(w, len);
}

uint32_t
slc_sql_call_flags(const uint8_t *w, size_t n)
{
    slc_sql_word_t  id = n > 0 ? slc_sql_word_find(w, n) : SLC_SQL_W_NONE;

    return slc_sql_words[id].fn
           | (slc_sql_word_calls_id(w, n, id) ? SLC_SQL_F_STORED_FUNC : 0);
}

/*
 * The token before "(" names a function that may be a stored one (see
 * the header's known limits): a built-in is never quoted nor qualified,
 * and a reserved word is never a function's name unless it is a built-in.
 * Not looked for in DDL (definitions: CREATE INDEX i ON t (a), CREATE
 * FUNCTION f()) nor CALL, writes both.  A table's name before "(" is one
 * of INSERT INTO t (a) or FROM JSON_TABLE(...); any other was taken for
 * a table by a FROM that lists none (EXTRACT(YEAR FROM f(d))).
 */
static int
slc_sql_is_call(const slc_sql_state_t *st)
{
    const slc_sql_tok_t  *p = &st->p1;

    if (!slc_sql_is_name(p)
        || st->kind == SLC_SQL_DDL || st->kind == SLC_SQL_CALL
        || (st->p1_table && (st->target
                             || p->word == SLC_SQL_W_JSON_TABLE))
        || (st->with && st->depth == 0))
    {
        return 0;
    }
    if (slc_sql_is_quoted(p)
        || (st->p2type == SLC_SQL_T_PUNCT && st->p2punct == '.'))
    {
        return 1;
    }
    if (st->p2type == SLC_SQL_T_STRING || st->p2type == SLC_SQL_T_DQUOTED
        || (st->p2type == SLC_SQL_T_PUNCT && st->p2punct == ')'))
    {
        return 0;
    }
    return slc_sql_word_calls_id(st->q + p->off, p->len, p->word);
}

static void
slc_sql_punct(slc_sql_state_t *st, const slc_sql_tok_t *t)
{
    switch (st->q[t->off]) {
    case '(':
        if (st->p1.type == SLC_SQL_T_WORD
            && !(st->p2type == SLC_SQL_T_PUNCT && st->p2punct == '.'))
        {
            st->out->flags |= slc_sql_words[st->p1.word].fn;
        }
        if (slc_sql_is_call(st)) {
            st->out->flags |= SLC_SQL_F_STORED_FUNC;
        }
        st->depth++;
        if (st->capture) {              /* FROM (t1 JOIN t2, t3), or a */
            slc_sql_list_open(st);      /* query: closed by its word */
        }
        return;
    case '{':                           /* FROM { OJ t1 LEFT JOIN ... } */
        if (st->capture) {
            st->out->flags |= SLC_SQL_F_TABLES_PARTIAL;
        }
        break;
    case ')':
        slc_sql_list_close(st);
        slc_sql_join_close(st);
        if (st->depth > 0) {
            st->depth--;
        }
        break;
    case ',':
        if (slc_sql_join_is_open(st)) {
            slc_sql_join_close(st);
            slc_sql_list_open(st);
        }
        if (slc_sql_list_is_open(st)) {
            st->capture = 1;
            return;
        }
        break;
    case ';':
        st->semi = 1;
        st->depth = 0;
        st->lists = 0;
        st->joins = 0;
        break;
    default:
        break;
    }
    st->capture = 0;
}

/*
 * @x: assigned as a target of SET or of INTO, else read unless := follows.
 */
static void
slc_sql_uservar(slc_sql_state_t *st)
{
    int  comma = slc_sql_punct_is(&st->p1, st->q, ',');

    if (st->w1 == SLC_SQL_W_INTO || (st->into && comma)) {
        st->into = 1;
        st->out->flags |= SLC_SQL_F_USER_VAR_ASSIGN;
    } else if (st->kind == SLC_SQL_SET && st->depth == 0
               && (st->w1 == SLC_SQL_W_SET || comma))
    {
        st->out->flags |= SLC_SQL_F_USER_VAR_ASSIGN;
    } else {
        st->var = 1;
    }
}

/* 'user'@'host', user@host: an account (GRANT, CREATE USER), no variable */
static int
slc_sql_is_account(const slc_sql_state_t *st, const slc_sql_tok_t *t)
{
    const slc_sql_tok_t  *p = &st->p1;
    uint32_t              end = p->off + p->len;

    if (p->type == SLC_SQL_T_STRING || slc_sql_is_quoted(p)) {
        end++;                          /* the closing quote */
    } else if (p->type != SLC_SQL_T_WORD) {
        return 0;
    }
    return end == t->off - (st->q[t->off - 1] == '@' ? 1 : 2);
}

/* @@[scope.]name */
static void
slc_sql_sysvar(slc_sql_state_t *st, const slc_sql_tok_t *t)
{
    static const struct {
        const char  *name;
        uint32_t     flags;
    } vars[] = {
        { "identity", SLC_SQL_F_LAST_ID },
        { "last_insert_id", SLC_SQL_F_LAST_ID },
        { "warning_count", SLC_SQL_F_SAME_AS_LAST },
        { "error_count", SLC_SQL_F_SAME_AS_LAST },
    };
    const char  *p = (const char *) st->q + t->off;
    size_t       n = t->len, dot;

    st->out->flags |= SLC_SQL_F_SYSVAR_READ;
    for (dot = n; dot > 0 && p[dot - 1] != '.'; dot--) { }
    if (dot == 7 && strncasecmp(p, "global.", 7) == 0
        && st->kind == SLC_SQL_SET)
    {
        st->out->flags |= SLC_SQL_F_GLOBAL;
    }
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        if (n - dot == strlen(vars[i].name)
            && strncasecmp(p + dot, vars[i].name, n - dot) == 0)
        {
            st->out->flags |= vars[i].flags;
        }
    }
}

/* The first token of a statement (blanks, comments, "(" before it). */
static void
slc_sql_token_start(slc_sql_state_t *st, const slc_sql_tok_t *t)
{
    if (slc_sql_punct_is(t, st->q, '(')) {
        st->depth++;
        return;
    }
    st->start = 0;
    if (t->type == SLC_SQL_T_WORD) {
        slc_sql_first(st, t->word);
    } else {
        st->kind = SLC_SQL_UNKNOWN;
    }
}

/* The kind of the statement read so far, had the text ended here. */
static slc_sql_kind_t
slc_sql_stmt_kind(const slc_sql_state_t *st)
{
    if (st->with || st->start) {
        return SLC_SQL_UNKNOWN;         /* WITH without a statement */
    }
    if (st->outer || st->explain) {
        return SLC_SQL_EXPLAIN;
    }
    if (st->kind == SLC_SQL_BEGIN && st->main == SLC_SQL_W_START
        && st->nw == 0)
    {
        return SLC_SQL_ADMIN;           /* START alone */
    }
    return st->kind;
}

/* Whether the statement read so far may change the session's state (a
   multi-statement's SLC_SQL_F_MULTI_STATE): one of no known kind only
   when it starts with a keyword (";;" or "; )" is an empty statement or
   a syntax error). */
static int
slc_sql_stmt_sets_state(const slc_sql_state_t *st)
{
    slc_sql_kind_t kind = st->start ? SLC_SQL_EMPTY : slc_sql_stmt_kind(st);

    switch (kind) {
    case SLC_SQL_UNKNOWN:
        return st->main != SLC_SQL_W_NONE || st->with;
    case SLC_SQL_SET: case SLC_SQL_USE: case SLC_SQL_PREPARE:
    case SLC_SQL_DEALLOCATE: case SLC_SQL_EXECUTE: case SLC_SQL_CALL:
    case SLC_SQL_COMPOUND:
        return 1;
    default:
        return 0;
    }
}

/*
 * More after a ";": a multi-statement.  The first statement's kind is
 * the text's; the others are read the same way for their flags and
 * tables (a DROP TABLE among them is one).
 */
static void
slc_sql_next_statement(slc_sql_state_t *st)
{
    if (!st->more) {
        st->more = 1;
        st->first = slc_sql_stmt_kind(st);
    }
    if (slc_sql_stmt_kind(st) == SLC_SQL_DDL) {
        st->out->flags |= SLC_SQL_F_DDL;
    }
    if (slc_sql_stmt_sets_state(st)) {
        st->out->flags |= SLC_SQL_F_MULTI_STATE;
    }
    st->out->flags |= SLC_SQL_F_MULTI;
    *st = (slc_sql_state_t) {
        .out = st->out, .q = st->q, .start = 1, .more = 1,
        .first = st->first
    };
}

/*
 * A token after a ";".  In CREATE, ALTER (a routine's or an event's body)
 * and BEGIN NOT ATOMIC the ";" may end a statement of the body, or the
 * whole statement: without a parser there is no telling, so the text may
 * name tables that are not listed (CREATE TABLE t (a INT); UPDATE u ...).
 */
static void
slc_sql_after_semi(slc_sql_state_t *st)
{
    if (st->main == SLC_SQL_W_CREATE || st->main == SLC_SQL_W_ALTER
        || st->kind == SLC_SQL_COMPOUND)
    {
        st->out->flags |= SLC_SQL_F_TABLES_PARTIAL;
    } else {
        slc_sql_next_statement(st);
    }
}

static void
slc_sql_token(slc_sql_state_t *st, const slc_sql_tok_t *t)
{
    unsigned  dot = st->dot;

    st->dot = 0;
    if (st->semi) {
        st->semi = 0;
        slc_sql_after_semi(st);
    }
    if (st->var && t->type != SLC_SQL_T_ASSIGN) {
        st->out->flags |= SLC_SQL_F_USER_VAR_READ;
    }
    st->var = 0;
    if (dot == 2 && slc_sql_is_name(t)) {
        slc_sql_name_qualify(st, t);
    } else if (dot == 1 && slc_sql_punct_is(t, st->q, '.')) {
        st->dot = 2;
    } else if (st->start) {
        slc_sql_token_start(st, t);
    } else if (st->explain) {
        slc_sql_explain(st, t);
    } else {
        switch (t->type) {
        case SLC_SQL_T_WORD:
            slc_sql_word(st, t);
            break;
        case SLC_SQL_T_QUOTED: case SLC_SQL_T_DQUOTED:
            if (st->capture) {
                slc_sql_name(st, t);
            }
            break;
        case SLC_SQL_T_PUNCT:
            slc_sql_punct(st, t);
            break;
        case SLC_SQL_T_ASSIGN:
            st->out->flags |= SLC_SQL_F_USER_VAR_ASSIGN;
            st->capture = 0;
            break;
        case SLC_SQL_T_USERVAR:
            st->capture = 0;
            if (!slc_sql_is_account(st, t)) {
                slc_sql_uservar(st);
            }
            break;
        case SLC_SQL_T_SYSVAR:
            st->capture = 0;
            slc_sql_sysvar(st, t);
            break;
        default:
            st->capture = 0;
            break;
        }
    }
    st->w2 = st->w1;
    st->w1 = t->type == SLC_SQL_T_WORD ? t->word : SLC_SQL_W_NONE;
    st->p2type = st->p1.type;
    st->p2punct = st->p1.type == SLC_SQL_T_PUNCT ? st->q[st->p1.off] : 0;
    st->p1 = *t;
    st->p1_table = st->dot == 1 || dot == 2;
}

/* What the whole text says, once the tokens are through. */
static void
slc_sql_finish(slc_sql_state_t *st, int seen)
{
    slc_sql_info_t  *si = st->out;

    if (st->var) {
        si->flags |= SLC_SQL_F_USER_VAR_READ;
    }
    if (seen && st->more && slc_sql_stmt_kind(st) == SLC_SQL_DDL) {
        si->flags |= SLC_SQL_F_DDL;     /* the last of several */
    }
    if (seen && st->more && slc_sql_stmt_sets_state(st)) {
        si->flags |= SLC_SQL_F_MULTI_STATE;
    }
    si->kind = !seen ? SLC_SQL_EMPTY
               : st->more ? st->first : slc_sql_stmt_kind(st);
    switch (si->kind) {
    case SLC_SQL_SET:
        if (si->ntables > 0
            || (si->flags & (SLC_SQL_F_PRIMARY | SLC_SQL_F_SAME_AS_LAST)
                & ~(SLC_SQL_F_USER_VAR_ASSIGN | SLC_SQL_F_STORED_FUNC)))
        {
            break;                      /* a read, or not a session's */
        }
        /* fall through */
    case SLC_SQL_USE: case SLC_SQL_PREPARE: case SLC_SQL_DEALLOCATE:
        si->flags |= SLC_SQL_F_SESSION_STATE;
        break;
    default:
        break;
    }
}

int
slc_sql_classify(const uint8_t *q, size_t len, unsigned status,
                 slc_sql_info_t *out)
{
    slc_sql_lex_t    lx;
    slc_sql_state_t  st = { .out = out, .q = q, .start = 1 };
    slc_sql_tok_t    t;

    memset(out, 0, sizeof(*out));
    if (len > UINT32_MAX) {
        out->flags = SLC_SQL_F_UNTERMINATED;
        return SLC_ERROR;
    }
    slc_sql_lex_init(&lx, q, len,
        (status & SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0);
    for ( ;; ) {
        slc_sql_lex_next(&lx, &t);
        if (t.type == SLC_SQL_T_END) {
            break;
        }
        if (t.type == SLC_SQL_T_WORD) {
            t.word = slc_sql_word_find(q + t.off, t.len);
        }
        if (t.type == SLC_SQL_T_BAD) {
            out->hint = lx.hint;
            out->kind = SLC_SQL_UNKNOWN;    /* and nothing read before */
            out->flags = SLC_SQL_F_UNTERMINATED;
            out->ntables = 0;
            return SLC_ERROR;
        }
        slc_sql_token(&st, &t);
    }
    out->hint = lx.hint;
    out->flags |= lx.ambiguous ? SLC_SQL_F_AMBIGUOUS : 0;
    slc_sql_finish(&st, lx.seen);
    return SLC_OK;
}

const char *
slc_sql_kind_name(slc_sql_kind_t kind)
{
    static const char  *names[SLC_SQL_NKINDS] = {
        [SLC_SQL_UNKNOWN] = "UNKNOWN", [SLC_SQL_EMPTY] = "EMPTY",
        [SLC_SQL_SELECT] = "SELECT", [SLC_SQL_SHOW] = "SHOW",
        [SLC_SQL_EXPLAIN] = "EXPLAIN", [SLC_SQL_SET] = "SET",
        [SLC_SQL_USE] = "USE", [SLC_SQL_BEGIN] = "BEGIN",
        [SLC_SQL_COMMIT] = "COMMIT", [SLC_SQL_ROLLBACK] = "ROLLBACK",
        [SLC_SQL_SAVEPOINT] = "SAVEPOINT", [SLC_SQL_XA] = "XA",
        [SLC_SQL_INSERT] = "INSERT", [SLC_SQL_UPDATE] = "UPDATE",
        [SLC_SQL_DELETE] = "DELETE", [SLC_SQL_REPLACE] = "REPLACE",
        [SLC_SQL_DDL] = "DDL", [SLC_SQL_CALL] = "CALL",
        [SLC_SQL_LOAD] = "LOAD", [SLC_SQL_PREPARE] = "PREPARE",
        [SLC_SQL_EXECUTE] = "EXECUTE", [SLC_SQL_DEALLOCATE] = "DEALLOCATE",
        [SLC_SQL_DO] = "DO", [SLC_SQL_LOCK] = "LOCK",
        [SLC_SQL_HANDLER] = "HANDLER", [SLC_SQL_ADMIN] = "ADMIN",
        [SLC_SQL_COMPOUND] = "COMPOUND",
    };

    return (unsigned) kind < SLC_SQL_NKINDS ? names[kind] : "?";
}


/* --- routing ------------------------------------------------------------ */

static int
slc_sql_is_read(const slc_sql_info_t *si)
{
    return (si->kind == SLC_SQL_SELECT || si->kind == SLC_SQL_SHOW
            || si->kind == SLC_SQL_EXPLAIN)
           && !(si->flags & SLC_SQL_F_PRIMARY);
}

slc_sql_route_t
slc_sql_route(const slc_sql_info_t *si, int in_trx, int read_only_trx)
{
    uint32_t  f = si->flags;

    if (si->hint == SLC_SQL_HINT_LAST) {
        return SLC_SQL_TO_LAST;
    }
    if (si->hint == SLC_SQL_HINT_PRIMARY || si->kind == SLC_SQL_UNKNOWN
        || si->kind == SLC_SQL_EMPTY
        || (f & (SLC_SQL_F_UNTERMINATED | SLC_SQL_F_AMBIGUOUS)))
    {
        return SLC_SQL_TO_PRIMARY;
    }
    if (si->hint == SLC_SQL_HINT_REPLICA
        && !(in_trx && !read_only_trx) && !(f & SLC_SQL_F_SESSION_STATE))
    {
        return SLC_SQL_TO_REPLICA;
    }
    if (f & SLC_SQL_F_MULTI) {
        return SLC_SQL_TO_PRIMARY;
    }
    if (f & SLC_SQL_F_SAME_AS_LAST) {
        return SLC_SQL_TO_LAST;
    }
    if (f & SLC_SQL_F_SESSION_STATE) {
        return SLC_SQL_TO_ALL;
    }
    if (in_trx) {
        return read_only_trx ? SLC_SQL_TO_REPLICA : SLC_SQL_TO_PRIMARY;
    }
    if (si->kind == SLC_SQL_BEGIN && (f & SLC_SQL_F_READ_ONLY_TRX)) {
        return SLC_SQL_TO_REPLICA;
    }
    return slc_sql_is_read(si) ? SLC_SQL_TO_REPLICA : SLC_SQL_TO_PRIMARY;
}
