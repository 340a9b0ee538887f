/*
 * A statement's text scanned in pieces (slc_mysql_sqltail.h): a state
 * machine over bytes, the classifier's tokenizer rules without its
 * tables and kinds.
 */

#include "slc_mysql_sqltail.h"

#include <strings.h>

#include "slc_mysql_proto.h"

/* modes */
#define SLC_ST_CODE      0
#define SLC_ST_SQUOTE    1      /* '...' */
#define SLC_ST_DQUOTE    2      /* "..." */
#define SLC_ST_BQUOTE    3      /* `...` */
#define SLC_ST_LINE      4      /* -- or # to the end of the line */
#define SLC_ST_BLOCK     5      /* slash-star comment */

/* pending bytes */
#define SLC_SP_NONE      0
#define SLC_SP_DASH      1      /* "-" */
#define SLC_SP_DASH2     2      /* "--" */
#define SLC_SP_SLASH     3      /* "/" */
#define SLC_SP_OPEN      4      /* slash-star */
#define SLC_SP_OPENM     5      /* slash-star-M */
#define SLC_SP_STAR      6      /* "*": a comment may end */
#define SLC_SP_ESC       7      /* a backslash in a quote */
#define SLC_SP_QEND      8      /* a quote closed: unless doubled */
#define SLC_SP_WORD      9      /* a word is being read */

/* tokens (last) */
#define SLC_SK_NONE      0
#define SLC_SK_WORD      1
#define SLC_SK_NAME      2      /* `name` or "name": a call if "(" */
#define SLC_SK_STRING    3
#define SLC_SK_DOT       4
#define SLC_SK_RPAREN    5
#define SLC_SK_OTHER     6

static int
slc_sqltail_word_char(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c >= '0' && c <= '9') || c == '_' || c == '$' || c >= 0x80;
}

static int
slc_sqltail_blank(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
           || c == '\v';
}

void
slc_sqltail_init(slc_sqltail_t *t, unsigned status)
{
    memset(t, 0, sizeof(*t));
    t->nobs = (status & SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0;
}

static void
slc_sqltail_token(slc_sqltail_t *t, uint8_t type, uint32_t call)
{
    t->last = type;
    t->call = call;
    if (type != SLC_SK_WORD) {
        t->seq = 0;                     /* NEXT, VALUE FOR is no pair */
    }
}

static int
slc_sqltail_word_is(const slc_sqltail_t *t, const char *w)
{
    return !t->wlong && t->wlen == strlen(w)
           && strncasecmp((const char *) t->word, w, t->wlen) == 0;
}

/* NEXT VALUE FOR, PREVIOUS VALUE FOR: a sequence moves. */
static void
slc_sqltail_sequence(slc_sqltail_t *t)
{
    if (slc_sqltail_word_is(t, "NEXT") || slc_sqltail_word_is(t, "PREVIOUS"))
    {
        t->seq = 1;
    } else if (t->seq == 1 && slc_sqltail_word_is(t, "VALUE")) {
        t->seq = 2;
    } else {
        if (t->seq == 2 && slc_sqltail_word_is(t, "FOR")) {
            t->flags |= SLC_SQL_F_SEQUENCE;
        }
        t->seq = 0;
    }
}

/* The word read ends: what a "(" after it would call (as the classifier's
   slc_sql_is_call: a qualified name is a call, none after a string or
   ")"). */
static void
slc_sqltail_word_end(slc_sqltail_t *t)
{
    uint32_t call;

    t->pend = SLC_SP_NONE;
    slc_sqltail_sequence(t);
    if (t->last == SLC_SK_DOT) {
        call = SLC_SQL_F_STORED_FUNC;
    } else if (t->last == SLC_SK_STRING || t->last == SLC_SK_RPAREN) {
        call = 0;
    } else {
        call = t->wlong ? SLC_SQL_F_STORED_FUNC
                        : slc_sql_call_flags(t->word, t->wlen);
    }
    slc_sqltail_token(t, SLC_SK_WORD, call);
}

static void slc_sqltail_code(slc_sqltail_t *t, uint8_t c);

/* A closed quote's token, once the byte after it shows it is not doubled. */
static void
slc_sqltail_quote_end(slc_sqltail_t *t, uint8_t quote)
{
    t->pend = SLC_SP_NONE;
    slc_sqltail_token(t, quote == '\'' ? SLC_SK_STRING : SLC_SK_NAME,
        quote == '\'' ? 0 : SLC_SQL_F_STORED_FUNC);
}

/* A byte of code that is no blank and starts no comment. */
static void
slc_sqltail_significant(slc_sqltail_t *t, uint8_t c)
{
    if (t->semi) {
        t->flags |= SLC_SQL_F_MULTI;
    }
    if (slc_sqltail_word_char(c)) {
        t->pend = SLC_SP_WORD;
        t->wlen = 0;
        t->wlong = 0;
        t->word[t->wlen++] = c;
        return;
    }
    switch (c) {
    case '\'':
        t->mode = SLC_ST_SQUOTE;
        return;
    case '"':
        t->mode = SLC_ST_DQUOTE;
        return;
    case '`':
        t->mode = SLC_ST_BQUOTE;
        return;
    case '(':
        if (t->last == SLC_SK_WORD || t->last == SLC_SK_NAME) {
            t->flags |= t->call;
        }
        slc_sqltail_token(t, SLC_SK_OTHER, 0);
        return;
    case ')':
        slc_sqltail_token(t, SLC_SK_RPAREN, 0);
        return;
    case '.':
        slc_sqltail_token(t, SLC_SK_DOT, 0);
        return;
    case ';':
        slc_sqltail_token(t, SLC_SK_OTHER, 0);
        t->semi = 1;                    /* anything after it: another */
        return;
    default:
        slc_sqltail_token(t, SLC_SK_OTHER, 0);
    }
}

/* A pending byte resolved to no pair: it was code on its own. */
static void
slc_sqltail_flush(slc_sqltail_t *t)
{
    uint8_t p = t->pend;

    t->pend = SLC_SP_NONE;
    if (p == SLC_SP_DASH || p == SLC_SP_DASH2) {
        slc_sqltail_significant(t, '-');
        if (p == SLC_SP_DASH2) {
            slc_sqltail_significant(t, '-');
        }
    } else if (p == SLC_SP_SLASH) {
        slc_sqltail_significant(t, '/');
    } else if (p == SLC_SP_STAR) {
        slc_sqltail_significant(t, '*');
    }
}

/* After "/": a comment opens, or an executable one (code inside). */
static int
slc_sqltail_open(slc_sqltail_t *t, uint8_t c)
{
    switch (t->pend) {
    case SLC_SP_SLASH:
        if (c != '*') {
            return 0;
        }
        t->pend = SLC_SP_OPEN;
        return 1;
    case SLC_SP_OPEN:
        t->pend = SLC_SP_NONE;
        if (c == '!') {
            t->exec = 1;
        } else if (c == 'M') {
            t->pend = SLC_SP_OPENM;
        } else {
            t->mode = SLC_ST_BLOCK;
            t->pend = c == '*' ? SLC_SP_STAR : SLC_SP_NONE;
        }
        return 1;
    case SLC_SP_OPENM:
        t->pend = SLC_SP_NONE;
        if (c == '!') {
            t->exec = 1;
        } else {
            t->mode = SLC_ST_BLOCK;
            t->pend = c == '*' ? SLC_SP_STAR : SLC_SP_NONE;
        }
        return 1;
    default:
        return 0;
    }
}

/* After "-" or "--": a comment needs a blank after the two dashes. */
static int
slc_sqltail_dashes(slc_sqltail_t *t, uint8_t c)
{
    if (t->pend == SLC_SP_DASH && c == '-') {
        t->pend = SLC_SP_DASH2;
        return 1;
    }
    if (t->pend == SLC_SP_DASH2 && c <= ' ') {
        t->pend = SLC_SP_NONE;
        t->mode = c == '\n' ? SLC_ST_CODE : SLC_ST_LINE;
        return 1;
    }
    return 0;
}

/* A byte of code, with what may be pending before it. */
static void
slc_sqltail_code(slc_sqltail_t *t, uint8_t c)
{
    if (t->pend == SLC_SP_WORD) {
        if (slc_sqltail_word_char(c)) {
            if (t->wlen < SLC_SQLTAIL_WORD) {
                t->word[t->wlen++] = c;
            } else {
                t->wlong = 1;
            }
            return;
        }
        slc_sqltail_word_end(t);
    }
    if (slc_sqltail_open(t, c) || slc_sqltail_dashes(t, c)) {
        return;
    }
    if (t->pend == SLC_SP_STAR && c == '/' && t->exec) {
        t->pend = SLC_SP_NONE;
        t->exec = 0;                    /* the executable comment ends */
        return;
    }
    slc_sqltail_flush(t);
    if (slc_sqltail_blank(c)) {
        return;
    }
    if (c == '#') {
        t->mode = SLC_ST_LINE;
    } else if (c == '-') {
        t->pend = SLC_SP_DASH;
    } else if (c == '/') {
        t->pend = SLC_SP_SLASH;
    } else if (c == '*' && t->exec) {
        t->pend = SLC_SP_STAR;
    } else {
        slc_sqltail_significant(t, c);
    }
}

/* A byte inside a quote of kind q. */
static void
slc_sqltail_quoted(slc_sqltail_t *t, uint8_t q, uint8_t c)
{
    if (t->pend == SLC_SP_ESC) {
        t->pend = SLC_SP_NONE;
        return;
    }
    if (c == '\\' && q != '`') {
        if (q == '"') {
            t->flags |= SLC_SQL_F_AMBIGUOUS;
        }
        if (!t->nobs) {
            t->pend = SLC_SP_ESC;
        }
        return;
    }
    if (c == q) {
        t->mode = SLC_ST_CODE;
        t->pend = SLC_SP_QEND;
        t->quote = q;                   /* which one closed */
    }
}

static void
slc_sqltail_byte(slc_sqltail_t *t, uint8_t c)
{
    static const uint8_t quote[] = { 0, '\'', '"', '`' };

    switch (t->mode) {
    case SLC_ST_CODE:
        if (t->pend == SLC_SP_QEND) {
            if (c == t->quote) {        /* doubled: the quote goes on */
                t->mode = t->quote == '\'' ? SLC_ST_SQUOTE
                          : t->quote == '"' ? SLC_ST_DQUOTE
                          : SLC_ST_BQUOTE;
                t->pend = SLC_SP_NONE;
                return;
            }
            slc_sqltail_quote_end(t, t->quote);
        }
        slc_sqltail_code(t, c);
        return;
    case SLC_ST_LINE:
        if (c == '\n') {
            t->mode = SLC_ST_CODE;
        }
        return;
    case SLC_ST_BLOCK:
        if (t->pend == SLC_SP_STAR && c == '/') {
            t->mode = SLC_ST_CODE;
            t->pend = SLC_SP_NONE;
        } else {
            t->pend = c == '*' ? SLC_SP_STAR : SLC_SP_NONE;
        }
        return;
    default:
        slc_sqltail_quoted(t, quote[t->mode], c);
    }
}

void
slc_sqltail_feed(slc_sqltail_t *t, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        slc_sqltail_byte(t, p[i]);
    }
}

uint32_t
slc_sqltail_flags(const slc_sqltail_t *t)
{
    uint32_t f = t->flags;

    if ((t->mode != SLC_ST_CODE && t->mode != SLC_ST_LINE) || t->exec
        || t->pend == SLC_SP_OPEN || t->pend == SLC_SP_OPENM)
    {
        f |= SLC_SQL_F_UNTERMINATED;
    }
    if (t->semi && (t->pend == SLC_SP_WORD || t->pend == SLC_SP_QEND
                    || t->pend == SLC_SP_DASH || t->pend == SLC_SP_DASH2
                    || t->pend == SLC_SP_SLASH))
    {
        f |= SLC_SQL_F_MULTI;           /* something after the ";" */
    }
    return f;
}
