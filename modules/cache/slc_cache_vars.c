/*
 * A session's SETs as the query cache's key sees them (slc_cache_vars.h):
 * a small tokenizer over one SET statement, its assignments one by one.
 */

#include "slc_cache_vars.h"

#include <string.h>
#include <strings.h>

#include "slc_cache.h"
#include "slc_mysql_codec.h"

/* --- tokens ------------------------------------------------------------- */

typedef enum {
    SLC_CV_END = 0,
    SLC_CV_WORD,        /* letters, digits, _ $ and bytes >= 0x80 */
    SLC_CV_STRING,      /* '...' or "..." */
    SLC_CV_QUOTED,      /* `...` */
    SLC_CV_USERVAR,     /* @x, @'x' */
    SLC_CV_SYSVAR,      /* @@x, @@scope.x */
    SLC_CV_PUNCT,
    SLC_CV_BAD          /* open quote or comment, executable comment */
} slc_cache_vars_type_t;

typedef struct {
    slc_cache_vars_type_t   type;
    size_t          off;        /* the token's bytes, quotes included */
    size_t          len;
} slc_cache_vars_tok_t;

typedef struct {
    const uint8_t  *q;
    size_t          n;
    size_t          i;
} slc_cache_vars_lex_t;

static int
slc_cache_vars_word_char(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c >= '0' && c <= '9') || c == '_' || c == '$' || c >= 0x80;
}

/* Blanks and plain comments; 0, or -1 at one that is code or open. */
static int
slc_cache_vars_skip(slc_cache_vars_lex_t *lx)
{
    const uint8_t *q = lx->q;

    while (lx->i < lx->n) {
        uint8_t c = q[lx->i];

        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
            lx->i++;
        } else if (c == '#' || (c == '-' && lx->i + 2 < lx->n
                                && q[lx->i + 1] == '-'
                                && q[lx->i + 2] <= ' '))
        {
            while (lx->i < lx->n && q[lx->i] != '\n') {
                lx->i++;
            }
        } else if (c == '/' && lx->i + 1 < lx->n && q[lx->i + 1] == '*') {
            const uint8_t *e;

            if (lx->i + 2 < lx->n && (q[lx->i + 2] == '!'
                                      || q[lx->i + 2] == 'M'))
            {
                return -1;              /* executable: code we skip not */
            }
            e = memmem(q + lx->i + 2, lx->n - lx->i - 2, "*/", 2);
            if (e == NULL) {
                return -1;
            }
            lx->i = (size_t) (e - q) + 2;
        } else {
            break;
        }
    }
    return 0;
}

/* A quoted run at q[i]: its end after the closing quote, or 0. */
static size_t
slc_cache_vars_quoted_end(const uint8_t *q, size_t n, size_t i)
{
    uint8_t c = q[i];

    for (i++; i < n; i++) {
        if (q[i] == '\\' && c != '`') {
            i++;                /* NO_BACKSLASH_ESCAPES: a miss at worst */
        } else if (q[i] == c) {
            if (i + 1 < n && q[i + 1] == c) {
                i++;
            } else {
                return i + 1;
            }
        }
    }
    return 0;
}

static void
slc_cache_vars_next(slc_cache_vars_lex_t *lx, slc_cache_vars_tok_t *t)
{
    const uint8_t *q = lx->q;
    size_t         i, e;

    if (slc_cache_vars_skip(lx) != 0) {
        t->type = SLC_CV_BAD;
        return;
    }
    t->off = i = lx->i;
    if (i < lx->n && q[i] == ';') {
        lx->i++;                        /* a last ";" ends the statement */
        t->type = slc_cache_vars_skip(lx) == 0 && lx->i >= lx->n ? SLC_CV_END
                                                         : SLC_CV_BAD;
        return;
    }
    if (i >= lx->n) {
        t->type = SLC_CV_END;
        return;
    }
    if (q[i] == '\'' || q[i] == '"' || q[i] == '`') {
        e = slc_cache_vars_quoted_end(q, lx->n, i);
        t->type = e == 0 ? SLC_CV_BAD
                  : q[i] == '`' ? SLC_CV_QUOTED : SLC_CV_STRING;
    } else if (q[i] == '@') {
        t->type = i + 1 < lx->n && q[i + 1] == '@' ? SLC_CV_SYSVAR
                                                  : SLC_CV_USERVAR;
        e = i + (t->type == SLC_CV_SYSVAR ? 2 : 1);
        if (e < lx->n && (q[e] == '\'' || q[e] == '"' || q[e] == '`')) {
            e = slc_cache_vars_quoted_end(q, lx->n, e);
            t->type = e == 0 ? SLC_CV_BAD : t->type;
        } else {
            while (e < lx->n
                && (slc_cache_vars_word_char(q[e]) || q[e] == '.')) {
                e++;
            }
        }
    } else if (slc_cache_vars_word_char(q[i])) {
        for (e = i; e < lx->n && slc_cache_vars_word_char(q[e]); e++) {
            /* the word */
        }
        t->type = SLC_CV_WORD;
    } else {
        e = i + 1;
        t->type = SLC_CV_PUNCT;
    }
    t->len = e - i;
    lx->i = e;
}

static int
slc_cache_vars_is(const slc_cache_vars_lex_t *lx,
    const slc_cache_vars_tok_t *t, const char *w)
{
    return t->type == SLC_CV_WORD && t->len == strlen(w)
           && strncasecmp((const char *) lx->q + t->off, w, t->len) == 0;
}

static int
slc_cache_vars_punct(const slc_cache_vars_lex_t *lx,
    const slc_cache_vars_tok_t *t, uint8_t c)
{
    return t->type == SLC_CV_PUNCT && lx->q[t->off] == c;
}


/* --- the entries -------------------------------------------------------- */

void
slc_cache_vars_init(slc_cache_vars_t *v)
{
    *v = (slc_cache_vars_t) { .iso = SLC_CACHE_ISO_GLOBAL };
}

void
slc_cache_vars_reset(slc_cache_vars_t *v)
{
    free(v->buf);
    slc_cache_vars_init(v);
}

uint64_t
slc_cache_vars_hash(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t       h = 0xcbf29ce484222325ull;

    if (n == 0) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 0x100000001b3ull;
    }
    return h;
}

/* Remove the entry of `name` (namelen bytes, then "="), if any. */
static void
slc_cache_vars_remove(slc_cache_vars_t *v, const char *name, size_t namelen)
{
    for (size_t off = 0; off < v->len; ) {
        size_t len = strlen(v->buf + off) + 1;

        if (len > namelen + 1 && memcmp(v->buf + off, name, namelen) == 0
            && v->buf[off + namelen] == '=')
        {
            memmove(v->buf + off, v->buf + off + len, v->len - off - len);
            v->len -= (uint32_t) len;
            return;
        }
        off += len;
    }
}

/*
 * Append "name=value" (the value's bytes as they were written), after
 * removing the variable's older entry unless the state is a history.
 */
static void
slc_cache_vars_entry(slc_cache_vars_t *v, const char *name, size_t namelen,
    const uint8_t *val, size_t vlen, int literal)
{
    size_t  need = namelen + 1 + vlen + 1;
    char   *p;

    if (v->overflow) {
        return;
    }
    if (!literal) {
        v->history = 1;
    } else if (!v->history) {
        slc_cache_vars_remove(v, name, namelen);
    }
    if (v->len + need > SLC_CACHE_STATE_MAX
        || (p = realloc(v->buf, v->len + need)) == NULL)
    {
        v->overflow = 1;
        return;
    }
    v->buf = p;
    p += v->len;
    memcpy(p, name, namelen);
    p[namelen] = '=';
    memcpy(p + namelen + 1, val, vlen);
    p[namelen + 1 + vlen] = '\0';
    v->len += (uint32_t) need;
    v->hash = slc_cache_vars_hash(v->buf, v->len);
}


/* --- values ------------------------------------------------------------- */

typedef struct {
    size_t  off;
    size_t  len;
    int     literal;            /* reads nothing of the session */
} slc_cache_vars_value_t;

/*
 * The value after "=", to a "," outside parentheses or the end; *end is
 * the token after it (a ",", END, or BAD: then nothing is taken).
 */
static void
slc_cache_vars_value(slc_cache_vars_lex_t *lx, slc_cache_vars_value_t *val,
    slc_cache_vars_tok_t *end)
{
    unsigned  depth = 0;
    size_t    last = lx->i;

    *val = (slc_cache_vars_value_t) { .off = lx->i, .literal = 1 };
    for ( ;; ) {
        slc_cache_vars_next(lx, end);
        if (end->type == SLC_CV_BAD || end->type == SLC_CV_END
            || (depth == 0 && slc_cache_vars_punct(lx, end, ',')))
        {
            break;
        }
        if (val->len == 0 && last == val->off) {
            val->off = end->off;
        }
        if (slc_cache_vars_punct(lx, end, '(')) {
            depth++;
        } else if (slc_cache_vars_punct(lx, end, ')') && depth > 0) {
            depth--;
        }
        if (!(end->type == SLC_CV_WORD || end->type == SLC_CV_STRING
              || slc_cache_vars_punct(lx, end, '-')
                  || slc_cache_vars_punct(lx, end, '+')
              || slc_cache_vars_punct(lx, end, '.')))
        {
            val->literal = 0;
        }
        last = end->off + end->len;
        val->len = last - val->off;
    }
    if (val->len == 0) {
        val->literal = 0;               /* nothing: let the server say */
    }
}

/* The value's text without its quotes, when it is one word or string. */
static int
slc_cache_vars_plain(const slc_cache_vars_lex_t *lx,
    const slc_cache_vars_value_t *val,
    const uint8_t **p, size_t *n)
{
    const uint8_t *s = lx->q + val->off;
    size_t         k = val->len;

    if (!val->literal) {
        return SLC_ERROR;
    }
    if (k >= 2 && (s[0] == '\'' || s[0] == '"') && s[k - 1] == s[0]) {
        s++;
        k -= 2;
    }
    *p = s;
    *n = k;
    return SLC_OK;
}

static int
slc_cache_vars_text_is(const uint8_t *p, size_t n, const char *w)
{
    return n == strlen(w) && strncasecmp((const char *) p, w, n) == 0;
}

/* tx_isolation = 'READ-COMMITTED' | 1 | DEFAULT ... */
static uint8_t
slc_cache_vars_iso_value(const slc_cache_vars_lex_t *lx,
    const slc_cache_vars_value_t *val)
{
    static const char *names[] = {
        "READ-UNCOMMITTED", "READ-COMMITTED", "REPEATABLE-READ",
        "SERIALIZABLE"
    };
    const uint8_t *p;
    size_t         n;

    if (slc_cache_vars_plain(lx, val, &p, &n) != SLC_OK) {
        return SLC_CACHE_ISO_UNKNOWN;
    }
    if (slc_cache_vars_text_is(p, n, "DEFAULT")) {
        return SLC_CACHE_ISO_GLOBAL;
    }
    for (unsigned i = 0; i < 4; i++) {
        if (slc_cache_vars_text_is(p, n, names[i])
            || (n == 1 && p[0] == (uint8_t) ('0' + i)))
        {
            return (uint8_t) (SLC_CACHE_ISO_RU + i);
        }
    }
    return SLC_CACHE_ISO_UNKNOWN;
}

/* sql_mode = '...': does it make "x" a name?  The modes that imply
   ANSI_QUOTES count too. */
static uint8_t
slc_cache_vars_ansi_value(const slc_cache_vars_lex_t *lx,
    const slc_cache_vars_value_t *val)
{
    static const char *ansi[] = {
        "ANSI_QUOTES", "ANSI", "DB2", "MAXDB", "MSSQL", "ORACLE",
        "POSTGRESQL"
    };
    const uint8_t *p, *end, *c;
    size_t         n, k;

    if (slc_cache_vars_plain(lx, val, &p, &n) != SLC_OK) {
        return SLC_CACHE_ANSI_ON;       /* not known: it may */
    }
    if (slc_cache_vars_text_is(p, n, "DEFAULT")) {
        return SLC_CACHE_ANSI_GLOBAL;
    }
    if (n > 0 && p[0] >= '0' && p[0] <= '9') {
        return SLC_CACHE_ANSI_ON;       /* a number: bits we do not map */
    }
    for (end = p + n; p < end; p = c != NULL ? c + 1 : end) {
        c = memchr(p, ',', (size_t) (end - p));
        k = (size_t) ((c != NULL ? c : end) - p);
        for (unsigned i = 0; i < sizeof(ansi) / sizeof(ansi[0]); i++) {
            if (slc_cache_vars_text_is(p, k, ansi[i])) {
                return SLC_CACHE_ANSI_ON;
            }
        }
    }
    return SLC_CACHE_ANSI_OFF;
}


/* --- assignments -------------------------------------------------------- */

#define SLC_CV_NONE     0           /* no scope word: the session */
#define SLC_CV_SESSION  1
#define SLC_CV_GLOBAL   2

/* ISOLATION LEVEL's words. */
static uint8_t
slc_cache_vars_level(slc_cache_vars_lex_t *lx)
{
    slc_cache_vars_tok_t  t, u;

    slc_cache_vars_next(lx, &t);
    if (slc_cache_vars_is(lx, &t, "SERIALIZABLE")) {
        return SLC_CACHE_ISO_SER;
    }
    slc_cache_vars_next(lx, &u);
    if (slc_cache_vars_is(lx, &t, "REPEATABLE")) {
        return slc_cache_vars_is(lx, &u, "READ") ? SLC_CACHE_ISO_RR
                                         : SLC_CACHE_ISO_UNKNOWN;
    }
    if (!slc_cache_vars_is(lx, &t, "READ")) {
        return SLC_CACHE_ISO_UNKNOWN;
    }
    return slc_cache_vars_is(lx, &u, "COMMITTED") ? SLC_CACHE_ISO_RC
           : slc_cache_vars_is(lx, &u, "UNCOMMITTED") ? SLC_CACHE_ISO_RU
           : SLC_CACHE_ISO_UNKNOWN;
}

/*
 * TRANSACTION's characteristics: ISOLATION LEVEL x, READ ONLY|WRITE, in
 * any order, comma separated, to the end.  The level, NONE when not
 * named, UNKNOWN when unreadable.
 */
static uint8_t
slc_cache_vars_characteristics(slc_cache_vars_lex_t *lx)
{
    uint8_t       iso = SLC_CACHE_ISO_NONE;
    slc_cache_vars_tok_t  t, u;

    for ( ;; ) {
        slc_cache_vars_next(lx, &t);
        if (slc_cache_vars_is(lx, &t, "READ")) {
            slc_cache_vars_next(lx, &u);        /* ONLY, WRITE */
        } else if (slc_cache_vars_is(lx, &t, "ISOLATION")) {
            slc_cache_vars_next(lx, &u);
            if (!slc_cache_vars_is(lx, &u, "LEVEL")) {
                return SLC_CACHE_ISO_UNKNOWN;
            }
            iso = slc_cache_vars_level(lx);
        } else {
            return SLC_CACHE_ISO_UNKNOWN;
        }
        if (iso == SLC_CACHE_ISO_UNKNOWN) {
            return iso;
        }
        slc_cache_vars_next(lx, &t);
        if (t.type == SLC_CV_END) {
            return iso;
        }
        if (!slc_cache_vars_punct(lx, &t, ',')) {
            return SLC_CACHE_ISO_UNKNOWN;
        }
    }
}

/* name = value for a system variable, in scope `scope`. */
static int
slc_cache_vars_assign(slc_cache_vars_t *v, slc_cache_vars_lex_t *lx,
    const char *name,
    size_t nl, int scope, slc_cache_vars_tok_t *end)
{
    slc_cache_vars_tok_t    t;
    slc_cache_vars_value_t  val;

    slc_cache_vars_next(lx, &t);
    if (slc_cache_vars_punct(lx, &t, ':')) {
        slc_cache_vars_next(lx, &t);            /* := */
    }
    if (!slc_cache_vars_punct(lx, &t, '=')) {
        return SLC_ERROR;
    }
    slc_cache_vars_value(lx, &val, end);
    if (end->type == SLC_CV_BAD) {
        return SLC_ERROR;
    }
    if (scope == SLC_CV_GLOBAL
        || slc_cache_vars_text_is((const uint8_t *) name, nl,
                                                 "autocommit")
        || slc_cache_vars_text_is((const uint8_t *) name, nl, "tx_read_only")
        || slc_cache_vars_text_is((const uint8_t *) name, nl,
                          "transaction_read_only"))
    {
        return SLC_OK;
    }
    if (slc_cache_vars_text_is((const uint8_t *) name, nl, "tx_isolation")
        || slc_cache_vars_text_is((const uint8_t *) name, nl,
                          "transaction_isolation"))
    {
        v->iso = slc_cache_vars_iso_value(lx, &val);
        return SLC_OK;
    }
    if (slc_cache_vars_text_is((const uint8_t *) name, nl, "sql_mode")) {
        v->ansi = slc_cache_vars_ansi_value(lx, &val);
    }
    slc_cache_vars_entry(v, name, nl, lx->q + val.off, val.len, val.literal);
    return SLC_OK;
}

/* A SET this module cannot read: kept whole, and what it may set is not
   known. */
static void
slc_cache_vars_opaque(slc_cache_vars_t *v, const uint8_t *q, size_t n)
{
    slc_cache_vars_entry(v, "?", 1, q, n, 0);
    v->iso = SLC_CACHE_ISO_UNKNOWN;
    v->iso_next = SLC_CACHE_ISO_UNKNOWN;
    v->ansi = SLC_CACHE_ANSI_ON;
}

/* @@x, @@session.x, @@local.x, @@global.x: the name, and its scope. */
static void
slc_cache_vars_sysvar(const slc_cache_vars_lex_t *lx,
    const slc_cache_vars_tok_t *t, const char **name,
    size_t *nl, int *scope)
{
    const char *p = (const char *) lx->q + t->off + 2;
    size_t      n = t->len - 2;

    *scope = SLC_CV_SESSION;
    if (n > 7 && strncasecmp(p, "global.", 7) == 0) {
        *scope = SLC_CV_GLOBAL;
        p += 7;
        n -= 7;
    } else if (n > 8 && strncasecmp(p, "session.", 8) == 0) {
        p += 8;
        n -= 8;
    } else if (n > 6 && strncasecmp(p, "local.", 6) == 0) {
        p += 6;
        n -= 6;
    }
    *name = p;
    *nl = n;
}

#define SLC_CV_VAR_MAX  128        /* a variable's name, with room */

/* NAMES x [COLLATE y], CHARACTER SET x, CHARSET x, ROLE r: an entry. */
static int
slc_cache_vars_special(slc_cache_vars_t *v, slc_cache_vars_lex_t *lx,
    const char *name,
    slc_cache_vars_tok_t *end)
{
    slc_cache_vars_value_t val;

    slc_cache_vars_value(lx, &val, end);
    if (end->type == SLC_CV_BAD) {
        return SLC_ERROR;
    }
    slc_cache_vars_entry(v, name, strlen(name), lx->q + val.off, val.len,
        val.literal);
    return SLC_OK;
}

/*
 * One assignment, from its first token t (a scope word already taken):
 * SLC_OK with *end the token after it, SLC_DONE when the rest of the
 * statement sets nothing the key holds (SET PASSWORD, DEFAULT ROLE,
 * TRANSACTION), SLC_ERROR when it cannot be read.
 */
static int
slc_cache_vars_one(slc_cache_vars_t *v, slc_cache_vars_lex_t *lx,
    slc_cache_vars_tok_t *t,
    int *scope, slc_cache_vars_tok_t *end)
{
    char          name[SLC_CV_VAR_MAX];
    const char   *np;
    size_t        nl;
    slc_cache_vars_tok_t  u;

    if (t->type == SLC_CV_USERVAR) {    /* @x = ...: in no key */
        return slc_cache_vars_assign(v, lx, "@", 1, SLC_CV_GLOBAL, end);
    }
    if (slc_cache_vars_is(lx, t, "PASSWORD")
        || slc_cache_vars_is(lx, t, "DEFAULT")) {
        return SLC_DONE;
    }
    if (slc_cache_vars_is(lx, t, "TRANSACTION")) {
        uint8_t iso = slc_cache_vars_characteristics(lx);

        if (*scope == SLC_CV_NONE && iso != SLC_CACHE_ISO_NONE) {
            v->iso_next = iso;
        } else if (*scope == SLC_CV_SESSION && iso != SLC_CACHE_ISO_NONE) {
            v->iso = iso;
        }
        return SLC_DONE;
    }
    if (slc_cache_vars_is(lx, t, "NAMES")) {
        return slc_cache_vars_special(v, lx, "names", end);
    }
    if (slc_cache_vars_is(lx, t, "ROLE")) {
        return slc_cache_vars_special(v, lx, "role", end);
    }
    if (slc_cache_vars_is(lx, t, "CHARSET")
        || slc_cache_vars_is(lx, t, "CHARACTER")) {
        if (slc_cache_vars_is(lx, t, "CHARACTER")
            && (slc_cache_vars_next(lx, &u),
                !slc_cache_vars_is(lx, &u, "SET")))
        {
            return SLC_ERROR;
        }
        return slc_cache_vars_special(v, lx, "charset", end);
    }
    if (t->type == SLC_CV_SYSVAR) {
        slc_cache_vars_sysvar(lx, t, &np, &nl, scope);
    } else if (t->type == SLC_CV_WORD) {
        np = (const char *) lx->q + t->off;
        nl = t->len;
    } else {
        return SLC_ERROR;
    }
    if (nl >= sizeof(name)) {
        return SLC_ERROR;
    }
    for (size_t i = 0; i < nl; i++) {
        name[i] = (char) (np[i] >= 'A' && np[i] <= 'Z' ? np[i] + 32 : np[i]);
    }
    return slc_cache_vars_assign(v, lx, name, nl, *scope, end);
}

/* GLOBAL, SESSION, LOCAL...: the scope they give, or -1 for no such word */
static int
slc_cache_vars_scope(const slc_cache_vars_lex_t *lx,
    const slc_cache_vars_tok_t *t)
{
    if (slc_cache_vars_is(lx, t, "GLOBAL")
        || slc_cache_vars_is(lx, t, "PERSIST")
        || slc_cache_vars_is(lx, t, "PERSIST_ONLY"))
    {
        return SLC_CV_GLOBAL;
    }
    if (slc_cache_vars_is(lx, t, "SESSION")
        || slc_cache_vars_is(lx, t, "LOCAL")) {
        return SLC_CV_SESSION;
    }
    return -1;
}

void
slc_cache_vars_set(slc_cache_vars_t *v, const uint8_t *q, size_t n)
{
    slc_cache_vars_lex_t  lx = { .q = q, .n = n };
    slc_cache_vars_tok_t  t, end;
    int           scope = SLC_CV_NONE, sc, rc;

    slc_cache_vars_next(&lx, &t);
    if (!slc_cache_vars_is(&lx, &t, "SET")) {
        /* behind a comment: all of it */
        slc_cache_vars_opaque(v, q, n);
        return;
    }
    for ( ;; ) {
        slc_cache_vars_next(&lx, &t);
        if ((sc = slc_cache_vars_scope(&lx, &t)) >= 0) {
            scope = sc;                 /* and for those that follow */
            slc_cache_vars_next(&lx, &t);
        }
        sc = scope;
        rc = slc_cache_vars_one(v, &lx, &t, &sc, &end);
        if (rc == SLC_DONE || (rc == SLC_OK && end.type == SLC_CV_END)) {
            return;
        }
        if (rc != SLC_OK || !slc_cache_vars_punct(&lx, &end, ',')) {
            slc_cache_vars_opaque(v, q, n);
            return;
        }
    }
}


/* --- handover ----------------------------------------------------------- */

/* flags (1 history, 2 overflow), iso, iso_next, ansi, length (4), the
   entries */
#define SLC_CV_SAVE_HDR  8

size_t
slc_cache_vars_save(const slc_cache_vars_t *v, uint8_t *buf, size_t cap)
{
    if (SLC_CV_SAVE_HDR + (size_t) v->len > cap) {
        return 0;
    }
    buf[0] = (uint8_t) (v->history | v->overflow << 1);
    buf[1] = v->iso;
    buf[2] = v->iso_next;
    buf[3] = v->ansi;
    slc_mysql_le_put(buf + 4, v->len, 4);
    if (v->len > 0) {
        memcpy(buf + SLC_CV_SAVE_HDR, v->buf, v->len);
    }
    return SLC_CV_SAVE_HDR + v->len;
}

int
slc_cache_vars_restore(slc_cache_vars_t *v, const uint8_t *p, size_t len)
{
    size_t n;

    slc_cache_vars_reset(v);
    if (len < SLC_CV_SAVE_HDR) {
        return SLC_ERROR;
    }
    n = (size_t) slc_mysql_le_get(p + 4, 4);
    if (n != len - SLC_CV_SAVE_HDR || n > SLC_CACHE_STATE_MAX
        || (n > 0 && p[len - 1] != '\0') || p[1] > SLC_CACHE_ISO_UNKNOWN
        || p[2] > SLC_CACHE_ISO_UNKNOWN || p[3] > SLC_CACHE_ANSI_OFF
        || (n > 0 && (v->buf = malloc(n)) == NULL))
    {
        return SLC_ERROR;
    }
    if (n > 0) {
        memcpy(v->buf, p + SLC_CV_SAVE_HDR, n);
    }
    v->len = (uint32_t) n;
    v->hash = slc_cache_vars_hash(v->buf, n);
    v->history = p[0] & 1;
    v->overflow = (p[0] >> 1) & 1;
    v->iso = p[1];
    v->iso_next = p[2];
    v->ansi = p[3];
    return SLC_OK;
}
