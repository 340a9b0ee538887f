/*
 * The query cache's policy (slc_cache_policy.h): the verdict on a
 * statement, its table keys, what a write invalidates, and cache_rule.
 */

#include "slc_cache_policy.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "slc_conf_file.h"


/* --- the verdict -------------------------------------------------------- */

/* Functions whose result is not the tables' alone: the classifier's
   non-deterministic words and the flags that come with some of them; and
   SQL_CALC_FOUND_ROWS, whose FOUND_ROWS() a hit would not set. */
#define SLC_CACHE_F_FUNCTION                                                 \
    (SLC_SQL_F_NON_DETERMINISTIC | SLC_SQL_F_LAST_ID | SLC_SQL_F_LOCK_FUNC  \
     | SLC_SQL_F_SEQUENCE | SLC_SQL_F_CONN_ID | SLC_SQL_F_SAME_AS_LAST \
     | SLC_SQL_F_CALC_FOUND_ROWS)

int
slc_cache_is_system_schema(const char *db, size_t len)
{
    static const char  *sys[] = {
        "information_schema", "performance_schema", "mysql", "sys"
    };

    for (size_t i = 0; i < slc_nelems(sys); i++) {
        if (len == strlen(sys[i]) && strncasecmp(db, sys[i], len) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Autocommit on, or a READ ONLY transaction under READ COMMITTED: the
   verdict, CACHEABLE when allowed. */
static slc_cache_verdict_t
slc_cache_trx_allows(const slc_cache_session_t *ss)
{
    if (ss->read_only_trx
        || (ss->status & SLC_SERVER_STATUS_IN_TRANS_READONLY))
    {
        return ss->read_committed ? SLC_CACHE_CACHEABLE : SLC_CACHE_SNAPSHOT;
    }
    if (ss->status & SLC_SERVER_STATUS_IN_TRANS) {
        return SLC_CACHE_RW_TRX;
    }
    return (ss->status & SLC_SERVER_STATUS_AUTOCOMMIT)
           ? SLC_CACHE_CACHEABLE : SLC_CACHE_RW_TRX;
}

/* A table of a system schema, named or by the default database; -1 when a
   name lies outside the text (not the classifier's contract). */
static int
slc_cache_reads_system(const uint8_t *q, size_t len,
                       const slc_sql_info_t *si,
                       const slc_cache_session_t *ss)
{
    for (unsigned i = 0; i < si->ntables; i++) {
        const slc_sql_name_t  *nm = &si->tables[i];

        if ((size_t) nm->off + nm->len > len
            || (size_t) nm->db_off + nm->db_len > len)
        {
            return -1;
        }
        if (nm->db_len > 0
            ? slc_cache_is_system_schema((const char *) q + nm->db_off,
                                         nm->db_len)
            : ss->db != NULL
              && slc_cache_is_system_schema(ss->db, ss->db_len))
        {
            return 1;
        }
    }
    return 0;
}

/* What the text itself says, whatever the session. */
static slc_cache_verdict_t
slc_cache_flags_verdict(uint32_t f)
{
    if (f & SLC_SQL_F_SQL_NO_CACHE) {
        return SLC_CACHE_SQL_NO_CACHE;
    }
    if (f & SLC_SQL_F_LOCKING_READ) {
        return SLC_CACHE_LOCKING_READ;
    }
    if (f & SLC_SQL_F_SELECT_INTO) {
        return SLC_CACHE_INTO;
    }
    if (f & (SLC_SQL_F_USER_VAR_ASSIGN | SLC_SQL_F_USER_VAR_READ)) {
        return SLC_CACHE_USER_VAR;
    }
    if (f & SLC_SQL_F_SYSVAR_READ) {
        return SLC_CACHE_SYSTEM_VAR;
    }
    if (f & SLC_CACHE_F_FUNCTION) {
        return SLC_CACHE_FUNCTION;
    }
    return SLC_CACHE_CACHEABLE;
}

slc_cache_verdict_t
slc_cache_cacheable(const uint8_t *q, size_t len, const slc_sql_info_t *si,
                    const slc_cache_session_t *ss)
{
    uint32_t             f = si->flags;
    slc_cache_verdict_t  v;
    int                  sys;

    if (f & SLC_SQL_F_UNTERMINATED) {
        return SLC_CACHE_UNTERMINATED;
    }
    if (f & SLC_SQL_F_MULTI) {
        return SLC_CACHE_MULTI;
    }
    if (si->kind != SLC_SQL_SELECT || (f & SLC_SQL_F_WRITE)) {
        return SLC_CACHE_NOT_SELECT;
    }
    if (ss->dirty) {
        return SLC_CACHE_ISOLATION;
    }
    if ((v = slc_cache_trx_allows(ss)) != SLC_CACHE_CACHEABLE) {
        return v;
    }
    v = slc_cache_flags_verdict(f);
    if (v != SLC_CACHE_CACHEABLE) {
        return v;
    }
    sys = slc_cache_reads_system(q, len, si, ss);
    if (sys != 0) {
        return sys > 0 ? SLC_CACHE_SYSTEM_SCHEMA : SLC_CACHE_TABLES_UNKNOWN;
    }
    if (ss->temp_tables && si->ntables > 0) {
        return SLC_CACHE_TEMPORARY;
    }
    if (f & SLC_SQL_F_STORED_FUNC) {
        return SLC_CACHE_STORED_FUNCTION;
    }
    if (f & SLC_SQL_F_TABLES_PARTIAL) {
        return SLC_CACHE_TABLES_UNKNOWN;
    }
    return SLC_CACHE_CACHEABLE;
}

slc_cache_verdict_t
slc_cache_view_verdict(uint32_t flags, const slc_str_t *bases, unsigned n)
{
    slc_cache_verdict_t v = slc_cache_flags_verdict(flags);

    if (v != SLC_CACHE_CACHEABLE) {
        return v;
    }
    for (unsigned i = 0; i < n; i++) {
        const char *dot = memchr(bases[i].data, '.', bases[i].len);

        if (dot != NULL && slc_cache_is_system_schema(bases[i].data,
                               (size_t) (dot - bases[i].data)))
        {
            return SLC_CACHE_SYSTEM_SCHEMA;
        }
    }
    if (flags & SLC_SQL_F_STORED_FUNC) {
        return SLC_CACHE_STORED_FUNCTION;
    }
    if (flags & (SLC_SQL_F_TABLES_PARTIAL | SLC_SQL_F_MULTI
                 | SLC_SQL_F_UNTERMINATED))
    {
        return SLC_CACHE_TABLES_UNKNOWN;
    }
    return SLC_CACHE_CACHEABLE;
}

const char *
slc_cache_verdict_name(slc_cache_verdict_t v)
{
    static const char  *names[SLC_CACHE_NVERDICTS] = {
        [SLC_CACHE_CACHEABLE] = "cacheable",
        [SLC_CACHE_UNTERMINATED] = "unterminated",
        [SLC_CACHE_MULTI] = "multi_statement",
        [SLC_CACHE_NOT_SELECT] = "not_select",
        [SLC_CACHE_ISOLATION] = "isolation",
        [SLC_CACHE_RW_TRX] = "read_write_trx",
        [SLC_CACHE_SNAPSHOT] = "snapshot",
        [SLC_CACHE_SQL_NO_CACHE] = "sql_no_cache",
        [SLC_CACHE_LOCKING_READ] = "locking_read",
        [SLC_CACHE_INTO] = "into",
        [SLC_CACHE_USER_VAR] = "user_variable",
        [SLC_CACHE_SYSTEM_VAR] = "system_variable",
        [SLC_CACHE_FUNCTION] = "function",
        [SLC_CACHE_SYSTEM_SCHEMA] = "system_schema",
        [SLC_CACHE_TEMPORARY] = "temporary_table",
        [SLC_CACHE_STORED_FUNCTION] = "stored_function",
        [SLC_CACHE_TABLES_UNKNOWN] = "tables_unknown",
        [SLC_CACHE_SCHEMA_UNKNOWN] = "schema_unknown",
    };

    return (unsigned) v < SLC_CACHE_NVERDICTS ? names[v] : "?";
}


slc_cache_inv_t
slc_cache_invalidates(const slc_sql_info_t *si)
{
    uint32_t  f = si->flags;

    switch (si->kind) {
    case SLC_SQL_EMPTY:
        return SLC_CACHE_INV_NONE;
    case SLC_SQL_UNKNOWN: case SLC_SQL_EXECUTE: case SLC_SQL_CALL:
    case SLC_SQL_COMPOUND:
        return SLC_CACHE_INV_ALL;
    case SLC_SQL_ADMIN:
        /* GRANT, REVOKE ... FROM user, FLUSH, OPTIMIZE TABLE: privileges
           or whole tables change, and REVOKE's "tables" are users */
        return (si->flags & SLC_SQL_F_WRITE) ? SLC_CACHE_INV_ALL
                                             : SLC_CACHE_INV_NONE;
    default:
        break;
    }
    if (f & SLC_SQL_F_STORED_FUNC) {
        return SLC_CACHE_INV_ALL;   /* a stored function may write anything */
    }
    if (!(f & SLC_SQL_F_WRITE)) {
        return SLC_CACHE_INV_NONE;
    }
    if ((f & (SLC_SQL_F_MULTI | SLC_SQL_F_TABLES_PARTIAL))
        || si->ntables == 0)
    {
        return SLC_CACHE_INV_ALL;
    }
    return SLC_CACHE_INV_TABLES;
}


/* The next word of q[*i..n) (after blanks and plain comments), or an
   empty one. */
static slc_str_t
slc_cache_ddl_word(const uint8_t *q, size_t n, size_t *i)
{
    slc_str_t w = { 0, NULL };

    for ( ;; ) {
        while (*i < n && isspace(q[*i])) {
            (*i)++;
        }
        if (*i + 1 < n && q[*i] == '/' && q[*i + 1] == '*'
            && (*i + 2 >= n || (q[*i + 2] != '!' && q[*i + 2] != 'M')))
        {
            const uint8_t *e = memmem(q + *i + 2, n - *i - 2, "*/", 2);

            *i = e != NULL ? (size_t) (e - q) + 2 : n;
            continue;
        }
        break;
    }
    w.data = (char *) q + *i;
    while (*i < n && (isalnum(q[*i]) || q[*i] == '_')) {
        (*i)++;
    }
    w.len = (size_t) ((char *) q + *i - w.data);
    return w;
}

static int
slc_cache_ddl_word_is(const slc_str_t *w, const char *s)
{
    return w->len == strlen(s) && strncasecmp(w->data, s, w->len) == 0;
}

/* A table's triggers move with a RENAME. */
int
slc_cache_ddl_may(const uint8_t *q, size_t n)
{
    size_t    i = 0;
    slc_str_t w = slc_cache_ddl_word(q, n, &i);
    slc_str_t v = slc_cache_ddl_word(q, n, &i);

    if (slc_cache_ddl_word_is(&w, "TRUNCATE")) {
        return 0;
    }
    if (slc_cache_ddl_word_is(&w, "CREATE")) {
        return !(slc_cache_ddl_word_is(&v, "TABLE")
                 || slc_cache_ddl_word_is(&v, "TEMPORARY")
                 || slc_cache_ddl_word_is(&v, "INDEX")
                 || slc_cache_ddl_word_is(&v, "UNIQUE"));
    }
    if (slc_cache_ddl_word_is(&w, "ALTER")
        && slc_cache_ddl_word_is(&v, "TABLE"))
    {
        for (i = 0; i + 6 <= n; i++) {
            if (strncasecmp((const char *) q + i, "RENAME", 6) == 0) {
                return 1;               /* anywhere: at worst a reload */
            }
        }
        return 0;
    }
    return 1;
}

/* --- rules ------------------------------------------------------------- */

static const struct {
    const char         *name;
    slc_sql_rule_on_t   on;
} slc_cache_matches[] = {
    { "match=text", SLC_RULE_ON_TEXT },
    { "match=table", SLC_RULE_ON_TABLE },
    { "match=database", SLC_RULE_ON_SCHEMA },
    { "match=user", SLC_RULE_ON_USER },
};

static int
slc_cache_rule_word_is(const slc_str_t *w, const char *s)
{
    return w->len == strlen(s) && memcmp(w->data, s, w->len) == 0;
}

/* One action word; NULL or what is wrong with it. */
static const char *
slc_cache_rule_action(slc_sql_rule_t *r, const slc_str_t *w)
{
    slc_sql_rule_cache_t *c = &r->cache;

    if (slc_cache_rule_word_is(w, "no_cache")) {
        c->no_cache = 1;
    } else if (slc_cache_rule_word_is(w, "cache_unknown_tables")) {
        c->unknown_tables = 1;
    } else if (slc_cache_rule_word_is(w, "cache_stored_functions")) {
        c->stored_functions = 1;
    } else if (w->len > 4 && memcmp(w->data, "ttl=", 4) == 0) {
        slc_str_t  v = { w->len - 4, w->data + 4 };

        c->ttl_ms = slc_conf_parse_msec(&v);
        if (c->ttl_ms <= 0) {
            return "invalid ttl (a duration above zero: 500ms, 10s, 5m; "
                   "no_cache for none)";
        }
    } else {
        return "unknown action (ttl=DURATION, no_cache, "
               "cache_unknown_tables or cache_stored_functions)";
    }
    c->set = 1;
    return NULL;
}

static int
slc_cache_rule_fail(slc_sql_rule_t *r, char *err, size_t errlen,
                    const char *what)
{
    snprintf(err, errlen, "cache_rule \"%s\": %s", r->name, what);
    slc_sql_rule_free(r);
    return SLC_ERROR;
}

/* The actions after the pattern: at least one, no_cache alone. */
static int
slc_cache_rule_actions(slc_sql_rule_t *r, const slc_str_t *args,
                       unsigned nargs, char *err, size_t errlen)
{
    const char  *e;

    if (nargs == 0) {
        return slc_cache_rule_fail(r, err, errlen, "no action (ttl=, "
                                   "no_cache, cache_unknown_tables or "
                                   "cache_stored_functions)");
    }
    for (unsigned i = 0; i < nargs; i++) {
        e = slc_cache_rule_action(r, &args[i]);
        if (e != NULL) {
            return slc_cache_rule_fail(r, err, errlen, e);
        }
    }
    if (r->cache.no_cache && nargs > 1) {
        return slc_cache_rule_fail(r, err, errlen,
                                   "no_cache takes no other action");
    }
    return SLC_OK;
}

/* match=KIND "REGEX": r's test. */
static int
slc_cache_rule_test(slc_sql_rule_t *r, const slc_str_t *args,
    unsigned nargs, char *err, size_t errlen)
{
    char   why[200];
    size_t i;

    for (i = 0; i < slc_nelems(slc_cache_matches); i++) {
        if (slc_cache_rule_word_is(&args[0], slc_cache_matches[i].name)) {
            break;
        }
    }
    if (i == slc_nelems(slc_cache_matches)) {
        return slc_cache_rule_fail(r, err, errlen, "match=text, "
                                   "match=table, match=database or "
                                   "match=user after the name");
    }
    if (nargs < 2) {
        return slc_cache_rule_fail(r, err, errlen,
                                   "a regular expression after match=");
    }
    if (slc_sql_rule_pattern(r, slc_cache_matches[i].on, args[1].data,
                             args[1].len, why, sizeof(why)) != SLC_OK)
    {
        return slc_cache_rule_fail(r, err, errlen, why);
    }
    return SLC_OK;
}

int
slc_cache_rule_parse(const slc_str_t *args, unsigned nargs,
                     slc_sql_rule_t *r, char *err, size_t errlen)
{
    if (nargs < 1 || !slc_sql_rule_name_ok(&args[0])) {
        snprintf(err, errlen, "cache_rule: a name of letters, digits, "
                 "\"_\", \"-\" and \".\" first (at most %d)",
                 SLC_SQL_RULE_NAME_MAX - 1);
        return SLC_ERROR;
    }
    slc_sql_rule_init(r, args[0].data, args[0].len);
    if (nargs < 2) {
        return slc_cache_rule_fail(r, err, errlen, "match=text, "
                                   "match=table, match=database or "
                                   "match=user after the name");
    }
    if (slc_cache_rule_test(r, args + 1, nargs - 1, err, errlen)
        != SLC_OK)
    {
        return SLC_ERROR;
    }
    return slc_cache_rule_actions(r, args + 3, nargs - 3, err, errlen);
}

size_t
slc_cache_rule_key(char *dst, const char *name)
{
    int n = snprintf(dst, SLC_SQL_RULE_NAME_MAX + 8, "\1rule.%s", name);

    return n > 0 ? (size_t) n : 0;
}

int
slc_cache_rule_allows(const slc_sql_rule_t *r, slc_cache_verdict_t v,
                      const slc_sql_info_t *si)
{
    if (v == SLC_CACHE_CACHEABLE) {
        return 1;
    }
    if ((v != SLC_CACHE_TABLES_UNKNOWN && v != SLC_CACHE_STORED_FUNCTION)
        || r == NULL || r->cache.no_cache)
    {
        return 0;
    }
    /* the verdict names the first reason: the other may hold too */
    if ((si->flags & SLC_SQL_F_STORED_FUNC) && !r->cache.stored_functions) {
        return 0;
    }
    return r->cache.unknown_tables
           || (v != SLC_CACHE_TABLES_UNKNOWN
               && !(si->flags & SLC_SQL_F_TABLES_PARTIAL));
}
