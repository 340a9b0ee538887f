/*
 * Query rules: the directives of a rule, the list, matching and rewriting
 * (slc_sql_rule.h).
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_sql_rule.h"

static const char *const slc_sql_rule_ons[SLC_RULE_ON_N] = {
    [SLC_RULE_ON_TEXT] = "match_text",
    [SLC_RULE_ON_DIGEST] = "match_digest",
    [SLC_RULE_ON_USER] = "match_user",
    [SLC_RULE_ON_DB] = "match_db",
    [SLC_RULE_ON_TABLE] = "match_table",
    [SLC_RULE_ON_SCHEMA] = "match_schema",
};

const char *
slc_sql_rule_on_name(slc_sql_rule_on_t on)
{
    return (unsigned) on < SLC_RULE_ON_N ? slc_sql_rule_ons[on] : "?";
}

static int
slc_sql_rule_is(const slc_str_t *w, const char *s)
{
    return w->len == strlen(s) && memcmp(w->data, s, w->len) == 0;
}

int
slc_sql_rule_name_ok(const slc_str_t *w)
{
    if (w->len == 0 || w->len >= SLC_SQL_RULE_NAME_MAX) {
        return 0;
    }
    for (size_t i = 0; i < w->len; i++) {
        uint8_t  c = (uint8_t) w->data[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '_' || c == '-'
              || c == '.'))
        {
            return 0;
        }
    }
    return 1;
}

void
slc_sql_rule_init(slc_sql_rule_t *r, const char *name, size_t len)
{
    *r = (slc_sql_rule_t) { .cache.ttl_ms = -1, .code_err = 1148 };
    len = slc_min(len, sizeof(r->name) - 1);
    memcpy(r->name, name, len);
    r->name[len] = '\0';
    snprintf(r->msg, sizeof(r->msg), "statement blocked by rule \"%s\"",
        r->name);
}

void
slc_sql_rule_free(slc_sql_rule_t *r)
{
    for (unsigned i = 0; i < SLC_RULE_ON_N; i++) {
        if (r->code[i] != NULL) {
            pcre2_code_free(r->code[i]);
            r->code[i] = NULL;
        }
    }
    free(r->rewrite);
    r->rewrite = NULL;
}


/* --- directives --------------------------------------------------------- */

int
slc_sql_rule_pattern(slc_sql_rule_t *r, slc_sql_rule_on_t on, const char *p,
    size_t n, char *err, size_t errlen)
{
    int          code;
    PCRE2_SIZE   off;
    PCRE2_UCHAR  msg[160];
    pcre2_code  *re;

    re = pcre2_compile((PCRE2_SPTR) p, n, 0, &code, &off, NULL);
    if (re == NULL) {
        if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0) {
            strlcpy((char *) msg, "?", sizeof(msg));
        }
        snprintf(err, errlen, "bad regex at offset %zu: %s", (size_t) off,
            (const char *) msg);
        return SLC_ERROR;
    }
    if (r->code[on] != NULL) {
        pcre2_code_free(r->code[on]);
    }
    r->code[on] = re;
    r->jitted &= (uint8_t) ~(1u << on);
    return SLC_OK;
}

static const char *
slc_sql_rule_route(slc_sql_rule_t *r, const slc_str_t *w)
{
    static const char  pre[] = "server=";
    size_t             k = sizeof(pre) - 1;

    if (slc_sql_rule_is(w, "primary")) {
        r->route = SLC_RULE_ROUTE_PRIMARY;
    } else if (slc_sql_rule_is(w, "replica")) {
        r->route = SLC_RULE_ROUTE_REPLICA;
    } else if (w->len > k && w->len - k < sizeof(r->server)
               && memcmp(w->data, pre, k) == 0)
    {
        r->route = SLC_RULE_ROUTE_SERVER;
        memcpy(r->server, w->data + k, w->len - k);
        r->server[w->len - k] = '\0';
    } else {
        return "route takes primary, replica or server=NAME";
    }
    return NULL;
}

/* block ["MESSAGE"] [CODE] */
static const char *
slc_sql_rule_block(slc_sql_rule_t *r, const slc_str_t *args, unsigned n)
{
    long long  code;

    r->block = 1;
    for (unsigned i = 0; i < n; i++) {
        if (i == n - 1 && (code = slc_conf_parse_int(&args[i])) >= 0) {
            if (code < 1000 || code > 65534) {
                return "block's error code is 1000 to 65534";
            }
            r->code_err = (uint16_t) code;
        } else if (i == 0 && args[i].len < sizeof(r->msg)
                   && memchr(args[i].data, '\0', args[i].len) == NULL)
        {
            memcpy(r->msg, args[i].data, args[i].len);
            r->msg[args[i].len] = '\0';
        } else {
            return "block takes a message (under 256 bytes) and an "
                   "error code, each optional";
        }
    }
    return NULL;
}

static const char *
slc_sql_rule_rewrite_set(slc_sql_rule_t *r, const slc_str_t *w)
{
    if (memchr(w->data, '\0', w->len) != NULL) {
        return "rewrite's replacement holds a NUL";
    }
    free(r->rewrite);
    r->rewrite = strndup(w->data, w->len);
    return r->rewrite != NULL ? NULL : "out of memory";
}

/* The cache's actions, as cache_rule has them too. */
static const char *
slc_sql_rule_cache_set(slc_sql_rule_t *r, const slc_str_t *args,
    unsigned n)
{
    const slc_str_t *w = &args[0];

    if (slc_sql_rule_is(w, "cache_ttl")) {
        if (n != 2 || (r->cache.ttl_ms = slc_conf_parse_msec(&args[1])) <= 0)
        {
            return "cache_ttl takes a duration above zero (500ms, 10s, "
                   "5m; no_cache for none)";
        }
    } else if (!slc_sql_rule_is(w, "no_cache")
               && !slc_sql_rule_is(w, "cache_unknown_tables")
               && !slc_sql_rule_is(w, "cache_stored_functions"))
    {
        return "unknown directive in a rule";
    } else if (n != 1) {
        return "takes no argument";
    } else if (slc_sql_rule_is(w, "no_cache")) {
        r->cache.no_cache = 1;
    } else if (slc_sql_rule_is(w, "cache_unknown_tables")) {
        r->cache.unknown_tables = 1;
    } else {
        r->cache.stored_functions = 1;
    }
    r->cache.set = 1;
    if (r->cache.no_cache && (r->cache.unknown_tables
        || r->cache.stored_functions || r->cache.ttl_ms >= 0))
    {
        return "no_cache takes no other cache action";
    }
    return NULL;
}

const char *
slc_sql_rule_set(slc_sql_rule_t *r, const slc_str_t *args, unsigned nargs,
    char *err, size_t errlen)
{
    const slc_str_t *w = &args[0];

    for (unsigned on = 0; on < SLC_RULE_ON_N; on++) {
        if (!slc_sql_rule_is(w, slc_sql_rule_on_name(on))) {
            continue;
        }
        if (nargs != 2) {
            return "takes one regular expression";
        }
        if (slc_sql_rule_pattern(r, on, args[1].data, args[1].len, err,
                                 errlen) != SLC_OK)
        {
            return err;
        }
        return NULL;
    }
    if (slc_sql_rule_is(w, "route")) {
        return nargs == 2 ? slc_sql_rule_route(r, &args[1])
                          : "route takes primary, replica or server=NAME";
    }
    if (slc_sql_rule_is(w, "block")) {
        return nargs <= 3 ? slc_sql_rule_block(r, args + 1, nargs - 1)
                          : "block takes a message and a code at most";
    }
    if (slc_sql_rule_is(w, "rewrite")) {
        return nargs == 2 ? slc_sql_rule_rewrite_set(r, &args[1])
                          : "rewrite takes one replacement";
    }
    if (slc_sql_rule_is(w, "continue")) {
        r->cont = 1;
        return nargs == 1 ? NULL : "continue takes no argument";
    }
    return slc_sql_rule_cache_set(r, args, nargs);
}


/* --- the list ----------------------------------------------------------- */

void
slc_sql_rules_init(slc_sql_rules_t *rl)
{
    *rl = (slc_sql_rules_t) { .jit = 1,
                              .match_limit = SLC_SQL_RULE_MATCH_LIMIT };
}

void
slc_sql_rules_free(slc_sql_rules_t *rl)
{
    for (unsigned i = 0; i < rl->n; i++) {
        slc_sql_rule_free(&rl->rule[i]);
    }
    free(rl->rule);
    if (rl->md != NULL) {
        pcre2_match_data_free(rl->md);
    }
    if (rl->mctx != NULL) {
        pcre2_match_context_free(rl->mctx);
    }
    slc_sql_rules_init(rl);
}

int
slc_sql_rules_limit(slc_sql_rules_t *rl, uint32_t limit)
{
    if (rl->mctx == NULL
        && (rl->mctx = pcre2_match_context_create(NULL)) == NULL)
    {
        return SLC_ERROR;
    }
    rl->match_limit = limit;
    pcre2_set_match_limit(rl->mctx, limit);
    pcre2_set_depth_limit(rl->mctx, limit);
    return SLC_OK;
}

static int
slc_sql_rules_grow(slc_sql_rules_t *rl)
{
    unsigned         cap = rl->cap ? rl->cap * 2 : 4;
    slc_sql_rule_t  *p;

    if (rl->md == NULL) {
        /* room for a rewrite's groups; a test asks for none */
        rl->md = pcre2_match_data_create(32, NULL);
        if (rl->md == NULL) {
            return SLC_ERROR;
        }
    }
    if (rl->mctx == NULL
        && slc_sql_rules_limit(rl, rl->match_limit) != SLC_OK)
    {
        return SLC_ERROR;
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

/* What makes a rule wrong as a whole, or NULL. */
static const char *
slc_sql_rule_check(const slc_sql_rules_t *rl, const slc_sql_rule_t *r)
{
    for (unsigned i = 0; i < rl->n; i++) {
        if (strcmp(rl->rule[i].name, r->name) == 0) {
            return "duplicate name";
        }
    }
    if (rl->n >= SLC_SQL_RULES_MAX) {
        return "more than 64 rules in a server";
    }
    if (r->rewrite != NULL && r->code[SLC_RULE_ON_TEXT] == NULL) {
        return "rewrite needs match_text (what it replaces)";
    }
    if (r->block && (r->route != SLC_RULE_ROUTE_NONE || r->rewrite != NULL
                     || r->cache.set || r->cont))
    {
        return "block takes no other action";
    }
    return NULL;
}

int
slc_sql_rules_add(slc_sql_rules_t *rl, slc_sql_rule_t *r, char *err,
    size_t errlen)
{
    const char *why = slc_sql_rule_check(rl, r);

    if (why == NULL && slc_sql_rules_grow(rl) != SLC_OK) {
        why = "out of memory";
    }
    if (why != NULL) {
        snprintf(err, errlen, "rule \"%s\": %s", r->name, why);
        slc_sql_rule_free(r);
        return SLC_ERROR;
    }
    for (unsigned on = 0; on < SLC_RULE_ON_N; on++) {
        if (r->code[on] == NULL) {
            continue;
        }
        rl->needs |= SLC_RULE_NEEDS(on);
        /* fails where pcre2 has no JIT: interpreted then */
        if (rl->jit && pcre2_jit_compile(r->code[on], PCRE2_JIT_COMPLETE)
                       == 0)
        {
            r->jitted |= (uint8_t) (1u << on);
        }
    }
    rl->routes |= r->route != SLC_RULE_ROUTE_NONE;
    rl->rule[rl->n++] = *r;
    memset(r, 0, sizeof(*r));           /* the list owns it now */
    return SLC_OK;
}


/* --- matching ----------------------------------------------------------- */

/* 1: a match, 0: none, -1: the match failed (a limit).  JIT code runs
   through pcre2_jit_match, without pcre2_match's checks of the call (a
   third of a test's cost). */
static int
slc_sql_rule_test(const slc_sql_rules_t *rl, const pcre2_code *re,
    int jit, const char *s, size_t n)
{
    int  rc = jit ? pcre2_jit_match(re, (PCRE2_SPTR) s, n, 0, 0, rl->md,
                                    rl->mctx)
                  : pcre2_match(re, (PCRE2_SPTR) s, n, 0, 0, rl->md,
                                rl->mctx);

    return rc >= 0 ? 1 : rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

/* Any table's key (or its database part: schema) matches? */
static int
slc_sql_rule_tables(const slc_sql_rules_t *rl, const pcre2_code *re,
    int jit, const slc_sql_keys_t *k, int schema)
{
    int  rc = 0;

    if (schema && k->n == 0) {
        return slc_sql_rule_test(rl, re, jit, k->db.data, k->db.len);
    }
    for (unsigned i = 0; i < k->n && rc != 1; i++) {
        int t = slc_sql_rule_test(rl, re, jit, k->key[i].data,
                                  schema ? k->db_len[i] : k->key[i].len);
        rc = t != 0 ? t : rc;
    }
    return rc;
}

static int
slc_sql_rule_on(const slc_sql_rules_t *rl, const slc_sql_rule_t *r,
    slc_sql_rule_on_t on, const slc_sql_rule_subject_t *s)
{
    const pcre2_code *re = r->code[on];
    int               jit = (r->jitted >> on) & 1;
    const char       *v;

    switch (on) {
    case SLC_RULE_ON_TEXT:
        return slc_sql_rule_test(rl, re, jit, (const char *) s->q, s->len);
    case SLC_RULE_ON_DIGEST:
        return slc_sql_rule_test(rl, re, jit, s->digest, s->digest_len);
    case SLC_RULE_ON_TABLE:
    case SLC_RULE_ON_SCHEMA:
        return s->keys == NULL ? 0
               : slc_sql_rule_tables(rl, re, jit, s->keys,
                                     on == SLC_RULE_ON_SCHEMA);
    default:
        v = on == SLC_RULE_ON_USER ? s->user : s->db;
        v = v != NULL ? v : "";
        return slc_sql_rule_test(rl, re, jit, v, strlen(v));
    }
}

/*
 * 1: r matches, 0: not; *failed: a test hit the limit.  A test that
 * does not match makes the rule not match, whatever the others did; a
 * failed one, when no test said no, is a match for a rule that keeps
 * something out (block, no_cache): a statement made to be costly to
 * match gets no way past it.
 */
static int
slc_sql_rule_matches(const slc_sql_rules_t *rl, const slc_sql_rule_t *r,
    const slc_sql_rule_subject_t *s, int *failed)
{
    *failed = 0;
    for (unsigned on = 0; on < SLC_RULE_ON_N; on++) {
        if (r->code[on] == NULL) {
            continue;
        }
        int t = slc_sql_rule_on(rl, r, on, s);
        if (t == 0) {
            return 0;
        }
        *failed |= t < 0;
    }
    return !*failed || r->block || r->cache.no_cache;
}

static void
slc_sql_rule_take(const slc_sql_rule_t *r, int8_t i,
    slc_sql_rule_verdict_t *v)
{
    if (v->first < 0) {
        v->first = i;
    }
    if (r->route != SLC_RULE_ROUTE_NONE && v->route < 0) {
        v->route = i;
    }
    if (r->block && v->block < 0) {
        v->block = i;
    }
    if (r->rewrite != NULL && v->rewrite < 0) {
        v->rewrite = i;
    }
    if (r->cache.set && v->cache < 0) {
        v->cache = i;
    }
    v->matched |= 1ull << i;
}

void
slc_sql_rules_eval(const slc_sql_rules_t *rl,
    const slc_sql_rule_subject_t *s, slc_sql_rule_verdict_t *v)
{
    *v = (slc_sql_rule_verdict_t) {
        .first = -1, .route = -1, .block = -1, .rewrite = -1, .cache = -1,
        .q = s->q, .n = s->len,
    };
    for (unsigned i = 0; i < rl->n; i++) {
        const slc_sql_rule_t *r = &rl->rule[i];
        int                   failed;
        int                   m = slc_sql_rule_matches(rl, r, s, &failed);

        if (failed) {
            v->failed |= 1ull << i;
        }
        if (!m) {
            continue;
        }
        slc_sql_rule_take(r, (int8_t) i, v);
        if (!r->cont || r->block) {
            return;
        }
    }
}

ssize_t
slc_sql_rule_rewrite(const slc_sql_rules_t *rl, const slc_sql_rule_t *r,
    const uint8_t *q, size_t n, uint8_t *out, size_t cap)
{
    PCRE2_SIZE  len = cap;
    int         rc;

    rc = pcre2_substitute(r->code[SLC_RULE_ON_TEXT], (PCRE2_SPTR) q, n, 0,
        PCRE2_SUBSTITUTE_GLOBAL, rl->md, rl->mctx,
        (PCRE2_SPTR) r->rewrite, PCRE2_ZERO_TERMINATED, out, &len);
    return rc >= 0 ? (ssize_t) len : -1;
}
