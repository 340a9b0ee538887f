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


/* --- table keys --------------------------------------------------------- */

/*
 * A name into dst (room for SLC_CACHE_NAME_MAX + 1): lowercased, a
 * doubled backtick made one.  Its length, or -1 when it is too long.
 */
static ssize_t
slc_cache_name_copy(char *dst, const uint8_t *p, size_t n)
{
    size_t  o = 0;

    for (size_t i = 0; i < n; i++) {
        uint8_t  c = p[i];

        if (c == '`' && i + 1 < n && p[i + 1] == '`') {
            i++;
        }
        if (o == SLC_CACHE_NAME_MAX) {
            return -1;
        }
        dst[o++] = (char) ((c >= 'A' && c <= 'Z') ? c + 32 : c);
    }
    dst[o] = '\0';
    return (ssize_t) o;
}

/* A raw name (as the server stores it) into dst, lowercased. */
static ssize_t
slc_cache_name_raw(char *dst, const char *p, size_t n)
{
    if (n > SLC_CACHE_NAME_MAX) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t  c = (uint8_t) p[i];

        dst[i] = (char) ((c >= 'A' && c <= 'Z') ? c + 32 : c);
    }
    dst[n] = '\0';
    return (ssize_t) n;
}

ssize_t
slc_cache_table_key_raw(char *dst, const char *db, size_t dblen,
    const char *table, size_t tlen)
{
    ssize_t  d = slc_cache_name_raw(dst, db, dblen), t;

    if (d < 0) {
        return -1;
    }
    dst[d] = '.';
    t = slc_cache_name_raw(dst + d + 1, table, tlen);
    return t < 0 ? -1 : d + 1 + t;
}

/* The key of name nm at dst; its length, or -1. */
static ssize_t
slc_cache_key_make(char *dst, const uint8_t *q, const slc_sql_name_t *nm,
                   const slc_str_t *db, size_t *db_len)
{
    ssize_t  d, t;

    if (nm->db_len > 0) {
        d = slc_cache_name_copy(dst, q + nm->db_off, nm->db_len);
        if (d < 0) {
            return -1;
        }
    } else {
        memcpy(dst, db->data, db->len);
        d = (ssize_t) db->len;
    }
    dst[d] = '.';
    t = slc_cache_name_copy(dst + d + 1, q + nm->off, nm->len);
    *db_len = (size_t) d;
    return t < 0 ? -1 : d + 1 + t;
}

static int
slc_cache_key_seen(const slc_cache_keys_t *out, const char *k, size_t n)
{
    for (unsigned i = 0; i < out->n; i++) {
        if (out->key[i].len == n && memcmp(out->key[i].data, k, n) == 0) {
            return 1;
        }
    }
    return 0;
}

int
slc_cache_table_keys(const uint8_t *q, const slc_sql_info_t *si,
                     const char *db, size_t db_len, slc_cache_keys_t *out)
{
    char     *p = out->buf;
    ssize_t   n;

    out->n = 0;
    out->db.data = p;
    n = slc_cache_name_copy(p, (const uint8_t *) (db ? db : ""),
                            db ? db_len : 0);
    if (n < 0) {
        out->db.len = 0;
        p[0] = '\0';
        return SLC_ERROR;
    }
    out->db.len = (size_t) n;
    p += n + 1;
    for (unsigned i = 0; i < si->ntables; i++) {
        size_t  dl;

        n = slc_cache_key_make(p, q, &si->tables[i], &out->db, &dl);
        if (n < 0) {
            return SLC_ERROR;
        }
        if (slc_cache_key_seen(out, p, (size_t) n)) {
            continue;
        }
        out->key[out->n] = (slc_str_t) { (size_t) n, p };
        out->db_len[out->n++] = dl;
        p += n + 1;
    }
    return SLC_OK;
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

/* --- rules: parsing ----------------------------------------------------- */

static const struct {
    const char         *name;
    slc_cache_match_t   match;
} slc_cache_matches[] = {
    { "text", SLC_CACHE_MATCH_TEXT },
    { "table", SLC_CACHE_MATCH_TABLE },
    { "database", SLC_CACHE_MATCH_DATABASE },
    { "user", SLC_CACHE_MATCH_USER },
};

static int
slc_cache_rule_word_is(const slc_str_t *w, const char *s)
{
    return w->len == strlen(s) && memcmp(w->data, s, w->len) == 0;
}

static int
slc_cache_rule_name(slc_cache_rule_t *r, const slc_str_t *w)
{
    if (w->len == 0 || w->len >= SLC_CACHE_RULE_NAME_MAX) {
        return SLC_ERROR;
    }
    for (size_t i = 0; i < w->len; i++) {
        uint8_t  c = (uint8_t) w->data[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '_' || c == '-'
              || c == '.'))
        {
            return SLC_ERROR;
        }
    }
    memcpy(r->name, w->data, w->len);
    r->name[w->len] = '\0';
    return SLC_OK;
}

static int
slc_cache_rule_match(slc_cache_rule_t *r, const slc_str_t *w)
{
    static const char  pre[] = "match=";

    if (w->len < sizeof(pre) - 1 || memcmp(w->data, pre, sizeof(pre) - 1))
    {
        return SLC_ERROR;
    }
    for (size_t i = 0; i < slc_nelems(slc_cache_matches); i++) {
        slc_str_t  v = { w->len - (sizeof(pre) - 1),
                         w->data + sizeof(pre) - 1 };

        if (slc_cache_rule_word_is(&v, slc_cache_matches[i].name)) {
            r->match = slc_cache_matches[i].match;
            return SLC_OK;
        }
    }
    return SLC_ERROR;
}

/* One action word; NULL or what is wrong with it. */
static const char *
slc_cache_rule_action(slc_cache_rule_t *r, const slc_str_t *w)
{
    if (slc_cache_rule_word_is(w, "no_cache")) {
        r->no_cache = 1;
    } else if (slc_cache_rule_word_is(w, "cache_unknown_tables")) {
        r->unknown_tables = 1;
    } else if (slc_cache_rule_word_is(w, "cache_stored_functions")) {
        r->stored_functions = 1;
    } else if (w->len > 4 && memcmp(w->data, "ttl=", 4) == 0) {
        slc_str_t  v = { w->len - 4, w->data + 4 };

        r->ttl_ms = slc_conf_parse_msec(&v);
        if (r->ttl_ms <= 0) {
            return "invalid ttl (a duration above zero: 500ms, 10s, 5m; "
                   "no_cache for none)";
        }
    } else {
        return "unknown action (ttl=DURATION, no_cache, "
               "cache_unknown_tables or cache_stored_functions)";
    }
    return NULL;
}

static int
slc_cache_rule_fail(slc_cache_rule_t *r, char *err, size_t errlen,
                    const char *what)
{
    snprintf(err, errlen, "cache_rule \"%s\": %s", r->name, what);
    slc_cache_rule_free(r);
    return SLC_ERROR;
}

/* The actions after the pattern: at least one, no_cache alone. */
static int
slc_cache_rule_actions(slc_cache_rule_t *r, const slc_str_t *args,
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
    if (r->no_cache && (r->unknown_tables || r->stored_functions
                        || r->ttl_ms >= 0 || nargs > 1))
    {
        return slc_cache_rule_fail(r, err, errlen,
                                   "no_cache takes no other action");
    }
    return SLC_OK;
}

int
slc_cache_rule_parse(const slc_str_t *args, unsigned nargs,
                     slc_cache_rule_t *r, char *err, size_t errlen)
{
    *r = (slc_cache_rule_t) { .ttl_ms = -1 };
    if (nargs < 1 || slc_cache_rule_name(r, &args[0]) != SLC_OK) {
        snprintf(err, errlen, "cache_rule: a name of letters, digits, "
                 "\"_\", \"-\" and \".\" first (at most %d)",
                 SLC_CACHE_RULE_NAME_MAX - 1);
        return SLC_ERROR;
    }
    if (nargs < 2 || slc_cache_rule_match(r, &args[1]) != SLC_OK) {
        return slc_cache_rule_fail(r, err, errlen, "match=text, "
                                   "match=table, match=database or "
                                   "match=user after the name");
    }
    if (nargs < 3 || memchr(args[2].data, '\0', args[2].len) != NULL) {
        return slc_cache_rule_fail(r, err, errlen,
                                   "a regular expression after match=");
    }
    r->pattern = malloc(args[2].len + 1);
    if (r->pattern == NULL) {
        return slc_cache_rule_fail(r, err, errlen, "out of memory");
    }
    memcpy(r->pattern, args[2].data, args[2].len);
    r->pattern[args[2].len] = '\0';
    r->pattern_len = args[2].len;
    return slc_cache_rule_actions(r, args + 3, nargs - 3, err, errlen);
}

void
slc_cache_rule_free(slc_cache_rule_t *r)
{
    free(r->pattern);
    r->pattern = NULL;
    if (r->code != NULL) {
        pcre2_code_free(r->code);
        r->code = NULL;
    }
}


/* --- rules: the list ---------------------------------------------------- */

void
slc_cache_rules_init(slc_cache_rules_t *rl)
{
    *rl = (slc_cache_rules_t) { .jit = 1 };
}

static int
slc_cache_rules_grow(slc_cache_rules_t *rl)
{
    unsigned           cap = rl->cap ? rl->cap * 2 : 4;
    slc_cache_rule_t  *p;

    if (rl->md == NULL) {
        /* one pair is enough: a match is all we ask, not where */
        rl->md = pcre2_match_data_create(1, NULL);
        if (rl->md == NULL) {
            return SLC_ERROR;
        }
    }
    if (rl->n < rl->cap) {
        return SLC_OK;
    }
    p = reallocarray(rl->rule, cap, sizeof(*p));
    if (p == NULL) {
        return SLC_ERROR;
    }
    rl->rule = p;
    rl->cap = cap;
    return SLC_OK;
}

static int
slc_cache_rules_compile(slc_cache_rules_t *rl, slc_cache_rule_t *r,
                        char *err, size_t errlen)
{
    int          code;
    PCRE2_SIZE   off;
    PCRE2_UCHAR  msg[160];

    r->code = pcre2_compile((PCRE2_SPTR) r->pattern, r->pattern_len, 0,
                            &code, &off, NULL);
    if (r->code == NULL) {
        if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0) {
            strlcpy((char *) msg, "?", sizeof(msg));
        }
        snprintf(err, errlen, "cache_rule \"%s\": bad regex at offset %zu: "
                 "%s", r->name, (size_t) off, (const char *) msg);
        return SLC_ERROR;
    }
    if (rl->jit) {
        /* fails where pcre2 has no JIT: the pattern is interpreted then */
        (void) pcre2_jit_compile(r->code, PCRE2_JIT_COMPLETE);
    }
    return SLC_OK;
}

int
slc_cache_rules_add(slc_cache_rules_t *rl, slc_cache_rule_t *r, char *err,
                    size_t errlen)
{
    for (unsigned i = 0; i < rl->n; i++) {
        if (strcmp(rl->rule[i].name, r->name) == 0) {
            snprintf(err, errlen, "cache_rule \"%s\": duplicate name",
                     r->name);
            slc_cache_rule_free(r);
            return SLC_ERROR;
        }
    }
    if (slc_cache_rules_grow(rl) != SLC_OK) {
        snprintf(err, errlen, "cache_rule \"%s\": out of memory", r->name);
        slc_cache_rule_free(r);
        return SLC_ERROR;
    }
    if (slc_cache_rules_compile(rl, r, err, errlen) != SLC_OK) {
        slc_cache_rule_free(r);
        return SLC_ERROR;
    }
    rl->rule[rl->n++] = *r;
    *r = (slc_cache_rule_t) { .ttl_ms = -1 };   /* the list owns it now */
    return SLC_OK;
}

void
slc_cache_rules_free(slc_cache_rules_t *rl)
{
    for (unsigned i = 0; i < rl->n; i++) {
        slc_cache_rule_free(&rl->rule[i]);
    }
    free(rl->rule);
    if (rl->md != NULL) {
        pcre2_match_data_free(rl->md);
    }
    slc_cache_rules_init(rl);
}


/* --- rules: matching ---------------------------------------------------- */

/*
 * 1 on a match, 0 on none.  A match that fails (match or depth limit) is
 * a match for a no_cache rule and none for the others: the error never
 * makes a statement cached that a rule meant to keep out.
 */
static int
slc_cache_rule_test(const slc_cache_rules_t *rl, const slc_cache_rule_t *r,
                    const char *s, size_t n)
{
    int  rc = pcre2_match(r->code, (PCRE2_SPTR) s, n, 0, 0, rl->md, NULL);

    if (rc >= 0) {
        return 1;
    }
    return rc != PCRE2_ERROR_NOMATCH && r->no_cache;
}

static int
slc_cache_rule_matches(const slc_cache_rules_t *rl,
                       const slc_cache_rule_t *r,
                       const slc_cache_subject_t *s)
{
    const slc_cache_keys_t  *k = s->keys;

    switch (r->match) {
    case SLC_CACHE_MATCH_TEXT:
        return slc_cache_rule_test(rl, r, (const char *) s->q, s->len);
    case SLC_CACHE_MATCH_USER:
        return slc_cache_rule_test(rl, r, s->user ? s->user : "",
                                   s->user ? s->user_len : 0);
    case SLC_CACHE_MATCH_TABLE:
        for (unsigned i = 0; i < k->n; i++) {
            if (slc_cache_rule_test(rl, r, k->key[i].data, k->key[i].len)) {
                return 1;
            }
        }
        return 0;
    case SLC_CACHE_MATCH_DATABASE:
        if (k->n == 0) {
            return slc_cache_rule_test(rl, r, k->db.data, k->db.len);
        }
        for (unsigned i = 0; i < k->n; i++) {
            if (slc_cache_rule_test(rl, r, k->key[i].data, k->db_len[i])) {
                return 1;
            }
        }
        return 0;
    }
    return 0;
}

int
slc_cache_rules_match(const slc_cache_rules_t *rl,
                      const slc_cache_subject_t *s)
{
    for (unsigned i = 0; i < rl->n; i++) {
        if (slc_cache_rule_matches(rl, &rl->rule[i], s)) {
            return (int) i;
        }
    }
    return -1;
}

int
slc_cache_rule_allows(const slc_cache_rule_t *r, slc_cache_verdict_t v,
                      const slc_sql_info_t *si)
{
    if (v == SLC_CACHE_CACHEABLE) {
        return 1;
    }
    if ((v != SLC_CACHE_TABLES_UNKNOWN && v != SLC_CACHE_STORED_FUNCTION)
        || r == NULL || r->no_cache)
    {
        return 0;
    }
    /* the verdict names the first reason: the other may hold too */
    if ((si->flags & SLC_SQL_F_STORED_FUNC) && !r->stored_functions) {
        return 0;
    }
    return r->unknown_tables
           || (v != SLC_CACHE_TABLES_UNKNOWN
               && !(si->flags & SLC_SQL_F_TABLES_PARTIAL));
}
