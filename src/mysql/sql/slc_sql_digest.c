/*
 * A statement's digest (slc_sql_digest.h).
 */

#include "slc_core.h"
#include "slc_sql_builtins.h"
#include "slc_sql_digest.h"
#include "slc_sql_lex.h"

#define SLC_SQL_DG_FNV_BASIS  0xcbf29ce484222325ULL
#define SLC_SQL_DG_FNV_PRIME  0x100000001b3ULL

/* What the last token written was, for the spaces and the signs. */
typedef enum {
    SLC_SQL_DG_NONE = 0,
    SLC_SQL_DG_WORD,
    SLC_SQL_DG_LITERAL,
    SLC_SQL_DG_OPEN,                /* ( . @: no space after */
    SLC_SQL_DG_CLOSE,               /* ) */
    SLC_SQL_DG_PUNCT
} slc_sql_dg_class_t;

typedef struct {
    char               *text;
    size_t              cap;
    slc_sql_digest_t   *d;
    size_t              vlen;       /* the whole text's length */
    slc_sql_dg_class_t      last, before;
    uint8_t             lastp;      /* the last token's byte, a punct's */
    size_t              mark;       /* vlen before the last token */
    uint64_t            hmark;      /* hash before the last token */
    uint32_t            last_end;   /* the last word's end in q */
    int                 intro;      /* that word may introduce a string */
} slc_sql_dg_t;

static void
slc_sql_dg_byte(slc_sql_dg_t *g, uint8_t c)
{
    g->d->hash = (g->d->hash ^ c) * SLC_SQL_DG_FNV_PRIME;
    if (g->vlen + 1 < g->cap) {
        g->text[g->vlen] = (char) c;
        g->d->len = g->vlen + 1;
    } else {
        g->d->truncated = 1;
    }
    g->vlen++;
}

/* A token's bytes, after a space where one separates it from the last;
   `lower` folds A-Z. */
static void
slc_sql_dg_emit(slc_sql_dg_t *g, const uint8_t *s, size_t n,
    slc_sql_dg_class_t cls, int lower)
{
    int tight = n == 1 && (s[0] == ')' || s[0] == ',' || s[0] == '.'
                           || s[0] == ';');

    g->mark = g->vlen;
    g->hmark = g->d->hash;
    if (g->last != SLC_SQL_DG_NONE && g->last != SLC_SQL_DG_OPEN && !tight) {
        slc_sql_dg_byte(g, ' ');
    }
    for (size_t i = 0; i < n; i++) {
        slc_sql_dg_byte(g, lower && s[i] >= 'A' && s[i] <= 'Z'
                       ? (uint8_t) (s[i] + 32) : s[i]);
    }
    g->before = g->last;
    g->last = cls;
    g->lastp = n == 1 ? s[0] : 0;
    g->intro = 0;
}

/* The last token is taken back (a sign, an introducer: part of the
   literal that follows). */
static void
slc_sql_dg_unemit(slc_sql_dg_t *g)
{
    g->vlen = g->mark;
    g->d->len = slc_min(g->vlen, g->cap > 0 ? g->cap - 1 : 0);
    g->d->hash = g->hmark;
    g->last = g->before;
    g->before = SLC_SQL_DG_NONE;
}

/* A literal: a sign before it that starts an operand goes with it. */
static void
slc_sql_dg_literal(slc_sql_dg_t *g)
{
    if (g->last == SLC_SQL_DG_PUNCT && (g->lastp == '-' || g->lastp == '+')
        && (g->before == SLC_SQL_DG_NONE || g->before == SLC_SQL_DG_OPEN
            || g->before == SLC_SQL_DG_PUNCT))
    {
        slc_sql_dg_unemit(g);
    }
    slc_sql_dg_emit(g, (const uint8_t *) "?", 1, SLC_SQL_DG_LITERAL, 0);
}

static int
slc_sql_dg_is_number(const slc_sql_lex_t *lx, const slc_sql_tok_t *t)
{
    return t->type == SLC_SQL_T_WORD && lx->q[t->off] >= '0'
           && lx->q[t->off] <= '9';
}

/*
 * The rest of a number the tokenizer cut at a "." or an exponent's sign
 * (1.5, 1.5e3, 1e-3): consumed, *t extended to its end.
 */
static void
slc_sql_dg_number_rest(slc_sql_lex_t *lx, slc_sql_tok_t *t)
{
    for ( ;; ) {
        slc_sql_lex_t la = *lx;
        slc_sql_tok_t p, w;
        uint8_t       last = lx->q[t->off + t->len - 1] | 0x20;

        slc_sql_lex_next(&la, &p);
        if (p.type != SLC_SQL_T_PUNCT || p.off != t->off + t->len
            || !(lx->q[p.off] == '.'
                 || (last == 'e' && (lx->q[p.off] == '-'
                                     || lx->q[p.off] == '+'))))
        {
            return;
        }
        slc_sql_lex_next(&la, &w);
        if (w.type != SLC_SQL_T_WORD || w.off != p.off + 1
            || !slc_sql_dg_is_number(&la, &w))
        {
            if (lx->q[p.off] == '.') {  /* 1. is a number too */
                *lx = la;
                t->len = p.off + 1 - t->off;
            }
            return;
        }
        *lx = la;
        t->len = w.off + w.len - t->off;
    }
}

/* x'..', b'..', n'..', _charset'..': the word may introduce a string. */
static int
slc_sql_dg_is_intro(const slc_sql_lex_t *lx, const slc_sql_tok_t *t)
{
    uint8_t c = lx->q[t->off] | 0x20;

    return t->type == SLC_SQL_T_WORD
           && ((t->len == 1 && (c == 'x' || c == 'b' || c == 'n'))
               || lx->q[t->off] == '_');
}

static int
slc_sql_dg_is_word(const slc_sql_lex_t *lx, const slc_sql_tok_t *t,
    const char *w)
{
    return t->type == SLC_SQL_T_WORD && t->len == strlen(w)
           && strncasecmp((const char *) lx->q + t->off, w, t->len) == 0;
}

/*
 * After a "(": whether literals and commas alone come before its ")";
 * then *lx is past it.  Else *lx is as it was.
 */
static int
slc_sql_dg_literal_list(slc_sql_lex_t *lx)
{
    slc_sql_lex_t la = *lx;
    slc_sql_tok_t t, prev = { .type = SLC_SQL_T_END };
    unsigned      literals = 0;
    int           intro = 0;

    for ( ;; ) {
        slc_sql_lex_next(&la, &t);
        if (intro) {                    /* x'..': its string, adjacent */
            if ((t.type != SLC_SQL_T_STRING && t.type != SLC_SQL_T_DQUOTED)
                || prev.off + prev.len + 1 != t.off)
            {
                return 0;
            }
            intro = 0;
            literals++;
        } else if (slc_sql_dg_is_number(&la, &t)) {
            slc_sql_dg_number_rest(&la, &t);
            literals++;
        } else if (t.type == SLC_SQL_T_STRING || t.type == SLC_SQL_T_DQUOTED
                   || slc_sql_dg_is_word(&la, &t, "null")
                   || (t.type == SLC_SQL_T_PUNCT && la.q[t.off] == '?'))
        {
            literals++;
        } else if (t.type == SLC_SQL_T_PUNCT && la.q[t.off] == ')') {
            if (literals > 0) {
                *lx = la;
                return 1;
            }
            return 0;
        } else if (slc_sql_dg_is_intro(&la, &t)) {
            intro = 1;
        } else if (!(t.type == SLC_SQL_T_PUNCT
                     && (la.q[t.off] == ',' || la.q[t.off] == '-'
                         || la.q[t.off] == '+')))
        {
            return 0;
        }
        prev = t;
    }
}

/* "(" after IN, or rows after VALUES: a list of literals is (...), and
   the rows of literals that follow it with commas go with it. */
static int
slc_sql_dg_list(slc_sql_dg_t *g, slc_sql_lex_t *lx, int rows)
{
    slc_sql_lex_t la;
    slc_sql_tok_t t;

    if (!slc_sql_dg_literal_list(lx)) {
        return 0;
    }
    slc_sql_dg_emit(g, (const uint8_t *) "(...)", 5, SLC_SQL_DG_CLOSE, 0);
    while (rows) {
        la = *lx;
        slc_sql_lex_next(&la, &t);
        if (t.type != SLC_SQL_T_PUNCT || la.q[t.off] != ',') {
            break;
        }
        slc_sql_lex_next(&la, &t);
        if (t.type != SLC_SQL_T_PUNCT || la.q[t.off] != '('
            || !slc_sql_dg_literal_list(&la))
        {
            break;
        }
        *lx = la;
    }
    return 1;
}

/* One token other than a literal's. */
static void
slc_sql_dg_token(slc_sql_dg_t *g, slc_sql_lex_t *lx, const slc_sql_tok_t *t,
    int *list)
{
    const uint8_t *s = lx->q + t->off;

    switch (t->type) {
    case SLC_SQL_T_WORD:
        *list = slc_sql_dg_is_word(lx, t, "in") ? 1
                : slc_sql_dg_is_word(lx, t, "values")
                  || slc_sql_dg_is_word(lx, t, "value") ? 2 : 0;
        /* keywords and built-in functions, whose case means nothing,
           folded; a name (a table's may be case-sensitive) kept */
        slc_sql_dg_emit(g, s, t->len, SLC_SQL_DG_WORD,
            slc_sql_builtin_find(s, t->len));
        g->intro = slc_sql_dg_is_intro(lx, t);
        g->last_end = t->off + t->len;
        return;
    case SLC_SQL_T_QUOTED:
        slc_sql_dg_emit(g, s - 1, t->len + 2, SLC_SQL_DG_WORD, 0);
        break;
    case SLC_SQL_T_USERVAR:
    case SLC_SQL_T_SYSVAR:
        slc_sql_dg_emit(g, (const uint8_t *) "@@",
            t->type == SLC_SQL_T_SYSVAR ? 2 : 1, SLC_SQL_DG_OPEN, 0);
        slc_sql_dg_emit(g, s, t->len, SLC_SQL_DG_WORD,
            t->type == SLC_SQL_T_SYSVAR);
        break;
    case SLC_SQL_T_ASSIGN:
        slc_sql_dg_emit(g, s, 2, SLC_SQL_DG_PUNCT, 0);
        break;
    default:                            /* T_PUNCT */
        if (s[0] == '(' && *list != 0 && slc_sql_dg_list(g, lx, *list == 2)) {
            break;
        }
        slc_sql_dg_emit(g, s, 1, s[0] == '(' || s[0] == '.' ? SLC_SQL_DG_OPEN
                    : s[0] == ')' ? SLC_SQL_DG_CLOSE : SLC_SQL_DG_PUNCT, 0);
        break;
    }
    *list = 0;
}

void
slc_sql_digest(const uint8_t *q, size_t n, int nobs, char *text,
    size_t cap, slc_sql_digest_t *d)
{
    slc_sql_dg_t      g = { .text = text, .cap = cap, .d = d };
    slc_sql_lex_t lx;
    slc_sql_tok_t t;
    int           list = 0;

    memset(d, 0, sizeof(*d));
    d->hash = SLC_SQL_DG_FNV_BASIS;
    slc_sql_lex_init(&lx, q, slc_min(n, (size_t) UINT32_MAX), nobs);
    for ( ;; ) {
        slc_sql_lex_next(&lx, &t);
        if (t.type == SLC_SQL_T_END || t.type == SLC_SQL_T_BAD) {
            d->bad = t.type == SLC_SQL_T_BAD;
            break;
        }
        if (t.type == SLC_SQL_T_STRING || t.type == SLC_SQL_T_DQUOTED) {
            if (g.last == SLC_SQL_DG_WORD && g.intro
                && g.last_end + 1 == t.off)
            {
                slc_sql_dg_unemit(&g);      /* x'..': one literal */
            }
            slc_sql_dg_literal(&g);
            list = 0;
        } else if (slc_sql_dg_is_number(&lx, &t)
                   || (t.type == SLC_SQL_T_PUNCT && q[t.off] == '?'))
        {
            if (t.type == SLC_SQL_T_WORD) {
                slc_sql_dg_number_rest(&lx, &t);
            }
            slc_sql_dg_literal(&g);
            list = 0;
        } else {
            slc_sql_dg_token(&g, &lx, &t, &list);
        }
    }
    if (cap > 0) {
        text[d->len] = '\0';
    }
}
