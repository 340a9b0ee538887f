/*
 * The statement text's tokenizer (slc_sql_lex.h), the classifier's and
 * the digests'.
 */

#include "slc_core.h"
#include "slc_sql_lex.h"

SLC_SQL_LEX_API void
slc_sql_lex_init(slc_sql_lex_t *lx, const uint8_t *q, size_t n, int nobs)
{
    *lx = (slc_sql_lex_t) { .q = q, .n = n, .nobs = nobs };
}

/* "sluice: route=primary|master|replica|slave|last" at p[0..n). */
static slc_sql_hint_t
slc_sql_lex_hint(const uint8_t *p, size_t n)
{
    static const struct {
        const char      *w;
        slc_sql_hint_t   h;
    } vals[] = {
        { "primary", SLC_SQL_HINT_PRIMARY },
            { "master", SLC_SQL_HINT_PRIMARY },
        { "replica", SLC_SQL_HINT_REPLICA }, { "slave", SLC_SQL_HINT_REPLICA },
        { "last", SLC_SQL_HINT_LAST },
    };
    size_t  i = 0, l;

    while (i < n && slc_sql_is_blank(p[i])) {
        i++;
    }
    if (n - i < 7 || strncasecmp((const char *) p + i, "sluice:", 7) != 0) {
        return SLC_SQL_HINT_NONE;
    }
    for (i += 7; i < n && slc_sql_is_blank(p[i]); i++) { /* blanks */ }
    if (n - i < 5 || strncasecmp((const char *) p + i, "route", 5) != 0) {
        return SLC_SQL_HINT_NONE;
    }
    for (i += 5; i < n && slc_sql_is_blank(p[i]); i++) { /* blanks */ }
    if (i == n || p[i] != '=') {
        return SLC_SQL_HINT_NONE;
    }
    for (i++; i < n && slc_sql_is_blank(p[i]); i++) { /* blanks */ }
    for (l = 0; i + l < n && slc_sql_is_word_char(p[i + l]); l++) { }
    for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
        if (l == strlen(vals[k].w)
            && strncasecmp((const char *) p + i, vals[k].w, l) == 0)
        {
            return vals[k].h;
        }
    }
    return SLC_SQL_HINT_NONE;
}

/* A comment's text: a hint when no token came before. */
static void
slc_sql_lex_comment(slc_sql_lex_t *lx, size_t from, size_t to)
{
    if (!lx->seen && lx->hint == SLC_SQL_HINT_NONE) {
        lx->hint = slc_sql_lex_hint(lx->q + from, to - from);
    }
}

/* Skip a comment that starts at q[i]; 0 when q[i] starts none. */
static int
slc_sql_lex_skip_comment(slc_sql_lex_t *lx)
{
    const uint8_t  *q = lx->q;
    size_t          n = lx->n, i = lx->i, s;

    if (q[i] == '#' || (q[i] == '-' && i + 1 < n && q[i + 1] == '-'
                        && (i + 2 == n || q[i + 2] <= ' ')))
    {
        for (s = i; i < n && q[i] != '\n'; i++) { }
        slc_sql_lex_comment(lx, s + (q[s] == '#' ? 1 : 2), i);
        lx->i = i;
        return 1;
    }
    if (q[i] != '/' || i + 1 >= n || q[i + 1] != '*') {
        return 0;
    }
    if ((i + 2 < n && q[i + 2] == '!')
        || (i + 3 < n && q[i + 2] == 'M' && q[i + 3] == '!'))
    {
        /* executable: its content is code, whatever the version */
        i += q[i + 2] == '!' ? 3 : 4;
        while (i < n && q[i] >= '0' && q[i] <= '9') {
            i++;
        }
        lx->exec = 1;
        lx->i = i;
        return 1;
    }
    for (s = i + 2, i = s; i + 1 < n; i++) {
        if (q[i] == '*' && q[i + 1] == '/') {
            slc_sql_lex_comment(lx, s, i);
            lx->i = i + 2;
            return 1;
        }
    }
    lx->i = n;
    return -1;                          /* unterminated */
}

/*
 * A quoted run from q[i] (the quote); end after the closing quote.  A
 * backslash before a double quote in "..." escapes it only without
 * ANSI_QUOTES: with it, the quote ends a name there and the rest of the
 * text reads otherwise (SLC_SQL_F_AMBIGUOUS).  Any other backslash leaves
 * the quotes where they are in both readings.
 */
static int
slc_sql_lex_quoted(slc_sql_lex_t *lx, slc_sql_tok_t *t)
{
    const uint8_t  *q = lx->q;
    uint8_t         c = q[lx->i];
    size_t          i;

    for (i = lx->i + 1; i < lx->n; i++) {
        if (q[i] == '\\' && c != '`' && !lx->nobs && i + 1 < lx->n) {
            if (c == '"' && q[i + 1] == '"') {
                lx->ambiguous = 1;
            }
            i++;                        /* escaped */
        } else if (q[i] == c) {
            if (i + 1 < lx->n && q[i + 1] == c) {
                i++;                    /* doubled */
                continue;
            }
            t->off = (uint32_t) lx->i + 1;
            t->len = (uint32_t) (i - lx->i - 1);
            lx->i = i + 1;
            return 0;
        }
    }
    return -1;
}

static void
slc_sql_lex_var(slc_sql_lex_t *lx, slc_sql_tok_t *t)
{
    const uint8_t  *q = lx->q;
    size_t          i = lx->i + 1;

    t->type = SLC_SQL_T_USERVAR;
    if (i < lx->n && q[i] == '@') {
        t->type = SLC_SQL_T_SYSVAR;
        i++;
    }
    if (i < lx->n && (q[i] == '\'' || q[i] == '"' || q[i] == '`')) {
        lx->i = i;
        if (slc_sql_lex_quoted(lx, t) != 0) {
            t->type = SLC_SQL_T_BAD;
        }
        return;
    }
    t->off = (uint32_t) i;
    while (i < lx->n && (slc_sql_is_word_char(q[i])
                         || (t->type == SLC_SQL_T_SYSVAR && q[i] == '.')))
    {
        i++;
    }
    t->len = (uint32_t) (i - t->off);
    lx->i = i;
}

/*
 * The next token; T_END at the end, T_BAD in an open quote or comment.
 * Longer than a screen because it is a table: one case per first byte,
 * each a line or two; the scanners it calls do the work.
 */
SLC_SQL_LEX_API void
slc_sql_lex_next(slc_sql_lex_t *lx, slc_sql_tok_t *t)
{
    const uint8_t  *q = lx->q;
    size_t          n = lx->n;
    int             rc;

    t->word = 0;
    for ( ;; ) {
        if (lx->i >= n) {
            t->type = lx->exec ? SLC_SQL_T_BAD : SLC_SQL_T_END;
            return;
        }
        if (slc_sql_is_blank(q[lx->i])) {
            lx->i++;
            continue;
        }
        if (lx->exec && q[lx->i] == '*' && lx->i + 1 < n
            && q[lx->i + 1] == '/')
        {
            lx->exec = 0;
            lx->i += 2;
            continue;
        }
        rc = slc_sql_lex_skip_comment(lx);
        if (rc < 0) {
            t->type = SLC_SQL_T_BAD;
            return;
        }
        if (rc == 0) {
            break;
        }
    }
    lx->seen = 1;
    t->off = (uint32_t) lx->i;
    switch (q[lx->i]) {
    case '\'': case '"': case '`':
        t->type = q[lx->i] == '`' ? SLC_SQL_T_QUOTED
                  : q[lx->i] == '"' ? SLC_SQL_T_DQUOTED : SLC_SQL_T_STRING;
        if (slc_sql_lex_quoted(lx, t) != 0) {
            t->type = SLC_SQL_T_BAD;
        }
        return;
    case '@':
        slc_sql_lex_var(lx, t);
        return;
    case ':':
        if (lx->i + 1 < n && q[lx->i + 1] == '=') {
            t->type = SLC_SQL_T_ASSIGN;
            t->len = 2;
            lx->i += 2;
            return;
        }
        break;
    default:
        if (slc_sql_is_word_char(q[lx->i])) {
            size_t  i = lx->i;

            while (i < n && slc_sql_is_word_char(q[i])) {
                i++;
            }
            t->type = SLC_SQL_T_WORD;
            t->len = (uint32_t) (i - lx->i);
            lx->i = i;
            return;
        }
    }
    t->type = SLC_SQL_T_PUNCT;
    t->len = 1;
    lx->i++;
}
