/*
 * The tail scanner (slc_sql_tail.h): the classifier's lexer turned
 * into a state machine over single bytes, so that it stops and resumes
 * anywhere, and over its tokens the few rules of the classifier's call
 * check.  Long runs (a string, a comment, a word, blanks) are skipped a
 * loop at a time; every other byte goes through slc_sql_tail_byte.
 */

#include "slc_sql_tail.h"

#include <string.h>
#include <strings.h>

#include "slc_sql_classify.h"
#include "slc_mysql_proto.h"


/* Where the last byte left the lexer. */
enum {
    SLC_SQLTAIL_S_CODE = 0,
    SLC_SQLTAIL_S_WORD,         /* in an unquoted word */
    SLC_SQLTAIL_S_AT,           /* after @ or @@ */
    SLC_SQLTAIL_S_VAR,          /* in a variable's unquoted name */
    SLC_SQLTAIL_S_QUOTE,        /* in a quote (t->quote) */
    SLC_SQLTAIL_S_QUOTE_ESC,    /* after a backslash in it */
    SLC_SQLTAIL_S_QUOTE_END,    /* after its quote: the end, or doubled */
    SLC_SQLTAIL_S_DASH,         /* after - */
    SLC_SQLTAIL_S_DASH2,        /* after -- */
    SLC_SQLTAIL_S_LINE,         /* in a -- or # comment */
    SLC_SQLTAIL_S_SLASH,        /* after / */
    SLC_SQLTAIL_S_OPEN,         /* after slash-star */
    SLC_SQLTAIL_S_OPEN_M,       /* after slash-star-M */
    SLC_SQLTAIL_S_VERSION,      /* an executable comment's version */
    SLC_SQLTAIL_S_COMMENT,      /* in a comment */
    SLC_SQLTAIL_S_COMMENT_STAR, /* after * in it */
    SLC_SQLTAIL_S_EXEC_STAR     /* after * in an executable comment */
};

/* Tokens, as far as the rules below tell them apart. */
enum {
    SLC_SQLTAIL_T_NONE = 0,
    SLC_SQLTAIL_T_WORD,         /* unquoted: word[] holds it */
    SLC_SQLTAIL_T_BQUOTED,      /* `x` */
    SLC_SQLTAIL_T_DQUOTED,      /* "x": a string, or a name */
    SLC_SQLTAIL_T_STRING,       /* 'x' */
    SLC_SQLTAIL_T_VAR,          /* @x, @@x, @'x' */
    SLC_SQLTAIL_T_OPEN,         /* ( */
    SLC_SQLTAIL_T_CLOSE,        /* ) */
    SLC_SQLTAIL_T_DOT,
    SLC_SQLTAIL_T_SEMI,
    SLC_SQLTAIL_T_OTHER
};

/* What a word does to the rules. */
#define SLC_SQLTAIL_R_MAIN    0x01  /* the statement after WITH */
#define SLC_SQLTAIL_R_TARGET  0x02  /* its table and column list follow */
#define SLC_SQLTAIL_R_SKIP    0x04  /* may come between those and it */
#define SLC_SQLTAIL_R_FROM    0x08  /* JSON_TABLE( may follow */
#define SLC_SQLTAIL_R_JSON    0x10
#define SLC_SQLTAIL_R_WITH    0x20
#define SLC_SQLTAIL_R_NEXT    0x40  /* NEXT, PREVIOUS VALUE FOR s */
#define SLC_SQLTAIL_R_VALUE   0x80
#define SLC_SQLTAIL_R_FOR     0x100

/* How far INSERT INTO db.t ( has come. */
enum {
    SLC_SQLTAIL_TG_NONE = 0,
    SLC_SQLTAIL_TG_EXPECT,      /* INSERT, REPLACE, INTO and options */
    SLC_SQLTAIL_TG_NAMED,       /* and a name: "(" opens its columns */
    SLC_SQLTAIL_TG_QUALIFY      /* and a name and a "." */
};


/* --- tokens -------------------------------------------------------------- */

static const struct {
    const char  *w;
    uint8_t      len;
    uint16_t     role;
} slc_sql_tail_words[] = {
    { "DELAYED", 7, SLC_SQLTAIL_R_SKIP },
    { "DELETE", 6, SLC_SQLTAIL_R_MAIN },
    { "FOR", 3, SLC_SQLTAIL_R_FOR },
    { "FROM", 4, SLC_SQLTAIL_R_FROM },
    { "HIGH_PRIORITY", 13, SLC_SQLTAIL_R_SKIP },
    { "IGNORE", 6, SLC_SQLTAIL_R_SKIP },
    { "INSERT", 6, SLC_SQLTAIL_R_MAIN | SLC_SQLTAIL_R_TARGET },
    { "INTO", 4, SLC_SQLTAIL_R_TARGET | SLC_SQLTAIL_R_SKIP },
    { "JOIN", 4, SLC_SQLTAIL_R_FROM },
    { "JSON_TABLE", 10, SLC_SQLTAIL_R_JSON },
    { "LOW_PRIORITY", 12, SLC_SQLTAIL_R_SKIP },
    { "NEXT", 4, SLC_SQLTAIL_R_NEXT },
    { "PREVIOUS", 8, SLC_SQLTAIL_R_NEXT },
    { "REPLACE", 7, SLC_SQLTAIL_R_MAIN | SLC_SQLTAIL_R_TARGET },
    { "SELECT", 6, SLC_SQLTAIL_R_MAIN },
    { "TABLE", 5, SLC_SQLTAIL_R_MAIN | SLC_SQLTAIL_R_SKIP },
    { "UPDATE", 6, SLC_SQLTAIL_R_MAIN },
    { "VALUE", 5, SLC_SQLTAIL_R_VALUE },
    { "VALUES", 6, SLC_SQLTAIL_R_MAIN },
    { "WITH", 4, SLC_SQLTAIL_R_WITH },
};

/* The role of the word in t->word (a few words, told by length first). */
static unsigned
slc_sql_tail_role(const slc_sql_tail_t *t)
{
    if (t->wlong || t->wlen < 3 || t->wlen > 13
        || (t->word[0] >= '0' && t->word[0] <= '9'))
    {
        return 0;
    }
    for (size_t i = 0; i < slc_nelems(slc_sql_tail_words); i++) {
        if (slc_sql_tail_words[i].len == t->wlen
            && strncasecmp((const char *) t->word, slc_sql_tail_words[i].w,
                           t->wlen) == 0)
        {
            return slc_sql_tail_words[i].role;
        }
    }
    return 0;
}

/* What a call of the word in t->word sets (slc_sql_call_flags). */
static uint32_t
slc_sql_tail_word_call(const slc_sql_tail_t *t)
{
    if (t->wlong) {                     /* no built-in is so long */
        return t->word[0] >= '0' && t->word[0] <= '9'
               ? 0 : SLC_SQL_F_STORED_FUNC;
    }
    return slc_sql_call_flags(t->word, t->wlen);
}

/*
 * The flags of the "(" just read, as the classifier's slc_sql_punct and
 * slc_sql_is_call give them, less what only a statement's kind tells: a
 * bare word's own (NEXTVAL: SEQUENCE), and STORED_FUNC for a name that
 * may be a stored function's.
 */
static uint32_t
slc_sql_tail_call(const slc_sql_tail_t *t)
{
    uint32_t  f;

    if (t->p1 == SLC_SQLTAIL_T_BQUOTED || t->p1 == SLC_SQLTAIL_T_DQUOTED
        || (t->p1 == SLC_SQLTAIL_T_WORD && t->p2 == SLC_SQLTAIL_T_DOT))
    {
        f = SLC_SQL_F_STORED_FUNC;      /* `f`(, "f"(, db.f( */
    } else if (t->p1 != SLC_SQLTAIL_T_WORD) {
        return 0;
    } else {
        f = slc_sql_tail_word_call(t);
        if (t->p2 == SLC_SQLTAIL_T_STRING || t->p2 == SLC_SQLTAIL_T_DQUOTED
            || t->p2 == SLC_SQLTAIL_T_CLOSE
            || ((t->r1 & SLC_SQLTAIL_R_JSON) && (t->r2 & SLC_SQLTAIL_R_FROM)))
        {
            f &= ~SLC_SQL_F_STORED_FUNC;    /* '$' COLUMNS (, ) AGAINST (,
                                               FROM JSON_TABLE( */
        }
    }
    if ((t->with && t->depth == 0) || t->target == SLC_SQLTAIL_TG_NAMED) {
        f &= ~SLC_SQL_F_STORED_FUNC;    /* WITH c (a), INSERT INTO t (a) */
    }
    return f;
}

/* INSERT [options] [INTO] [TABLE] db.t (: the "(" opens a column list. */
static void
slc_sql_tail_target(slc_sql_tail_t *t, unsigned type, unsigned role)
{
    int  name = type == SLC_SQLTAIL_T_WORD || type == SLC_SQLTAIL_T_BQUOTED
                || type == SLC_SQLTAIL_T_DQUOTED;

    switch (t->target) {
    case SLC_SQLTAIL_TG_EXPECT:
        if (type == SLC_SQLTAIL_T_WORD && (role & SLC_SQLTAIL_R_SKIP)) {
            return;
        }
        if (name) {
            t->target = SLC_SQLTAIL_TG_NAMED;
            return;
        }
        break;
    case SLC_SQLTAIL_TG_NAMED:
        if (type == SLC_SQLTAIL_T_DOT) {
            t->target = SLC_SQLTAIL_TG_QUALIFY;
            return;
        }
        break;
    case SLC_SQLTAIL_TG_QUALIFY:
        if (name) {
            t->target = SLC_SQLTAIL_TG_NAMED;
            return;
        }
        break;
    default:
        break;
    }
    t->target = type == SLC_SQLTAIL_T_WORD && (role & SLC_SQLTAIL_R_TARGET)
                ? SLC_SQLTAIL_TG_EXPECT : SLC_SQLTAIL_TG_NONE;
}

/* WITH as a statement's first word: no call at the top level until the
   main statement's word (as the classifier's). */
static void
slc_sql_tail_with(slc_sql_tail_t *t, unsigned type, unsigned role)
{
    if (t->start && type != SLC_SQLTAIL_T_OPEN) {
        t->start = 0;
        t->with = (role & SLC_SQLTAIL_R_WITH) != 0;
    } else if (t->with && t->depth == 0 && (role & SLC_SQLTAIL_R_MAIN)) {
        t->with = 0;
    }
}

/* A token of the given type has been read (a word: in t->word). */
static void
slc_sql_tail_token(slc_sql_tail_t *t, unsigned type)
{
    unsigned  role = type == SLC_SQLTAIL_T_WORD ? slc_sql_tail_role(t) : 0;

    if (t->semi) {
        t->flags |= SLC_SQL_F_MULTI;
    }
    t->semi = type == SLC_SQLTAIL_T_SEMI;
    slc_sql_tail_with(t, type, role);
    switch (type) {
    case SLC_SQLTAIL_T_OPEN:
        t->flags |= slc_sql_tail_call(t);
        t->depth += t->depth < UINT32_MAX;
        break;
    case SLC_SQLTAIL_T_WORD:
        if ((role & SLC_SQLTAIL_R_FOR) && (t->r1 & SLC_SQLTAIL_R_VALUE)
            && (t->r2 & SLC_SQLTAIL_R_NEXT))
        {
            t->flags |= SLC_SQL_F_SEQUENCE;     /* NEXT VALUE FOR s */
        }
        break;
    case SLC_SQLTAIL_T_CLOSE:
        t->depth -= t->depth > 0;
        break;
    case SLC_SQLTAIL_T_SEMI:
        t->depth = 0;
        t->start = 1;
        t->with = 0;
        break;
    default:
        break;
    }
    slc_sql_tail_target(t, type, role);
    t->p2 = t->p1;
    t->r2 = t->r1;
    t->p1 = (uint8_t) type;
    t->r1 = (uint16_t) role;
}

static void
slc_sql_tail_punct(slc_sql_tail_t *t, uint8_t c)
{
    slc_sql_tail_token(t, c == '(' ? SLC_SQLTAIL_T_OPEN
                         : c == ')' ? SLC_SQLTAIL_T_CLOSE
                         : c == '.' ? SLC_SQLTAIL_T_DOT
                         : c == ';' ? SLC_SQLTAIL_T_SEMI
                         : SLC_SQLTAIL_T_OTHER);
}


/* --- the lexer ----------------------------------------------------------- */

/*
 * Each function below reads one byte c in the states it owns, and returns
 * 1 when c is used, or 0 when c is to be read again in the state it set
 * (the byte after a word, a quote, a lone "-" or "/").
 */

static void
slc_sql_tail_word_add(slc_sql_tail_t *t, uint8_t c)
{
    if (t->wlen < SLC_SQLTAIL_WORD_MAX) {
        t->word[t->wlen++] = c;
    } else {
        t->wlong = 1;
    }
}

static int
slc_sql_tail_code(slc_sql_tail_t *t, uint8_t c)
{
    if (slc_sql_is_blank(c)) {
        return 1;
    }
    if (slc_sql_is_word_char(c)) {
        t->wlen = 0;
        t->wlong = 0;
        slc_sql_tail_word_add(t, c);
        t->state = SLC_SQLTAIL_S_WORD;
        return 1;
    }
    switch (c) {
    case '\'': case '"': case '`':
        t->quote = c;
        t->qvar = 0;
        t->state = SLC_SQLTAIL_S_QUOTE;
        break;
    case '@':
        t->sysvar = 0;
        t->state = SLC_SQLTAIL_S_AT;
        break;
    case '#':
        t->state = SLC_SQLTAIL_S_LINE;
        break;
    case '-':
        t->state = SLC_SQLTAIL_S_DASH;
        break;
    case '/':
        t->state = SLC_SQLTAIL_S_SLASH;
        break;
    case '*':
        if (t->exec) {
            t->state = SLC_SQLTAIL_S_EXEC_STAR;
            break;
        }
        /* fall through */
    default:
        slc_sql_tail_punct(t, c);
        break;
    }
    return 1;
}

/* A word, or a variable: @x, @@scope.x, @'x' (the quote: a name). */
static int
slc_sql_tail_name(slc_sql_tail_t *t, uint8_t c)
{
    switch (t->state) {
    case SLC_SQLTAIL_S_WORD:
        if (slc_sql_is_word_char(c)) {
            slc_sql_tail_word_add(t, c);
            return 1;
        }
        slc_sql_tail_token(t, SLC_SQLTAIL_T_WORD);
        break;
    case SLC_SQLTAIL_S_AT:
        if (c == '@' && !t->sysvar) {
            t->sysvar = 1;
            return 1;
        }
        if (c == '\'' || c == '"' || c == '`') {
            t->quote = c;
            t->qvar = 1;
            t->state = SLC_SQLTAIL_S_QUOTE;
            return 1;
        }
        /* fall through */
    default:                            /* SLC_SQLTAIL_S_VAR */
        if (slc_sql_is_word_char(c) || (c == '.' && t->sysvar)) {
            t->state = SLC_SQLTAIL_S_VAR;
            return 1;
        }
        slc_sql_tail_token(t, SLC_SQLTAIL_T_VAR);
        break;
    }
    t->state = SLC_SQLTAIL_S_CODE;
    return 0;
}

/* The token a closed quote makes. */
static unsigned
slc_sql_tail_quoted_type(const slc_sql_tail_t *t)
{
    return t->qvar ? SLC_SQLTAIL_T_VAR
           : t->quote == '`' ? SLC_SQLTAIL_T_BQUOTED
           : t->quote == '"' ? SLC_SQLTAIL_T_DQUOTED
           : SLC_SQLTAIL_T_STRING;
}

/* In a quote: a backslash escapes (not in `x`, not without escapes); a
   doubled quote is one; \" in "x" reads otherwise under ANSI_QUOTES. */
static int
slc_sql_tail_quote(slc_sql_tail_t *t, uint8_t c)
{
    switch (t->state) {
    case SLC_SQLTAIL_S_QUOTE:
        if (c == '\\' && t->quote != '`' && !t->nobs) {
            t->state = SLC_SQLTAIL_S_QUOTE_ESC;
        } else if (c == t->quote) {
            t->state = SLC_SQLTAIL_S_QUOTE_END;
        }
        return 1;
    case SLC_SQLTAIL_S_QUOTE_ESC:
        if (c == '"' && t->quote == '"') {
            t->flags |= SLC_SQL_F_AMBIGUOUS;
        }
        t->state = SLC_SQLTAIL_S_QUOTE;
        return 1;
    default:                            /* SLC_SQLTAIL_S_QUOTE_END */
        if (c == t->quote) {
            t->state = SLC_SQLTAIL_S_QUOTE;
            return 1;
        }
        slc_sql_tail_token(t, slc_sql_tail_quoted_type(t));
        t->state = SLC_SQLTAIL_S_CODE;
        return 0;
    }
}

/* After "-": "--" and a blank or control byte (or the end) is a
   comment; otherwise each "-" is a token. */
static int
slc_sql_tail_dash(slc_sql_tail_t *t, uint8_t c)
{
    if (t->state == SLC_SQLTAIL_S_DASH) {
        if (c == '-') {
            t->state = SLC_SQLTAIL_S_DASH2;
            return 1;
        }
        slc_sql_tail_punct(t, '-');
        t->state = SLC_SQLTAIL_S_CODE;
        return 0;
    }
    if (c <= ' ') {
        t->state = SLC_SQLTAIL_S_LINE;  /* c may be its "\n" */
        return 0;
    }
    slc_sql_tail_punct(t, '-');          /* the first; the second is */
    t->state = SLC_SQLTAIL_S_DASH;      /* read again with c */
    return 0;
}

/* After "/": a comment, an executable one, or a "/" token. */
static int
slc_sql_tail_slash(slc_sql_tail_t *t, uint8_t c)
{
    switch (t->state) {
    case SLC_SQLTAIL_S_SLASH:
        if (c == '*') {
            t->state = SLC_SQLTAIL_S_OPEN;
            return 1;
        }
        slc_sql_tail_punct(t, '/');
        t->state = SLC_SQLTAIL_S_CODE;
        return 0;
    case SLC_SQLTAIL_S_OPEN:
        if (c == 'M') {
            t->state = SLC_SQLTAIL_S_OPEN_M;
            return 1;
        }
        /* fall through */
    default:                            /* SLC_SQLTAIL_S_OPEN_M */
        if (c == '!') {
            t->exec = 1;                /* code, whatever the version */
            t->state = SLC_SQLTAIL_S_VERSION;
            return 1;
        }
        t->state = SLC_SQLTAIL_S_COMMENT;
        return 0;
    }
}

/* Comments, an executable comment's version and its end. */
static int
slc_sql_tail_comment(slc_sql_tail_t *t, uint8_t c)
{
    switch (t->state) {
    case SLC_SQLTAIL_S_LINE:
        if (c == '\n') {
            t->state = SLC_SQLTAIL_S_CODE;
        }
        return 1;
    case SLC_SQLTAIL_S_COMMENT:
        if (c == '*') {
            t->state = SLC_SQLTAIL_S_COMMENT_STAR;
        }
        return 1;
    case SLC_SQLTAIL_S_COMMENT_STAR:
        t->state = c == '/' ? SLC_SQLTAIL_S_CODE
                   : c == '*' ? SLC_SQLTAIL_S_COMMENT_STAR
                   : SLC_SQLTAIL_S_COMMENT;
        return 1;
    case SLC_SQLTAIL_S_VERSION:
        if (c >= '0' && c <= '9') {
            return 1;
        }
        t->state = SLC_SQLTAIL_S_CODE;
        return 0;
    default:                            /* SLC_SQLTAIL_S_EXEC_STAR */
        t->state = SLC_SQLTAIL_S_CODE;
        if (c == '/') {
            t->exec = 0;
            return 1;
        }
        slc_sql_tail_punct(t, '*');
        return 0;
    }
}

static void
slc_sql_tail_byte(slc_sql_tail_t *t, uint8_t c)
{
    int  used;

    do {
        switch (t->state) {
        case SLC_SQLTAIL_S_CODE:
            used = slc_sql_tail_code(t, c);
            break;
        case SLC_SQLTAIL_S_WORD: case SLC_SQLTAIL_S_AT:
        case SLC_SQLTAIL_S_VAR:
            used = slc_sql_tail_name(t, c);
            break;
        case SLC_SQLTAIL_S_QUOTE: case SLC_SQLTAIL_S_QUOTE_ESC:
        case SLC_SQLTAIL_S_QUOTE_END:
            used = slc_sql_tail_quote(t, c);
            break;
        case SLC_SQLTAIL_S_DASH: case SLC_SQLTAIL_S_DASH2:
            used = slc_sql_tail_dash(t, c);
            break;
        case SLC_SQLTAIL_S_SLASH: case SLC_SQLTAIL_S_OPEN:
        case SLC_SQLTAIL_S_OPEN_M:
            used = slc_sql_tail_slash(t, c);
            break;
        default:
            used = slc_sql_tail_comment(t, c);
            break;
        }
    } while (!used);
}

/*
 * The bytes from p that the state keeps as they are (inside a quote or a
 * comment, the rest of a word, blanks): how many, up to end.
 */
static size_t
slc_sql_tail_run(slc_sql_tail_t *t, const uint8_t *p, const uint8_t *end)
{
    const uint8_t  *s = p;
    const uint8_t  *e;

    switch (t->state) {
    case SLC_SQLTAIL_S_CODE:
        while (p < end && slc_sql_is_blank(*p)) {
            p++;
        }
        break;
    case SLC_SQLTAIL_S_WORD:
        for ( ; p < end && slc_sql_is_word_char(*p); p++) {
            slc_sql_tail_word_add(t, *p);
        }
        break;
    case SLC_SQLTAIL_S_QUOTE:
        while (p < end && *p != t->quote && *p != '\\') {
            p++;
        }
        break;
    case SLC_SQLTAIL_S_COMMENT: case SLC_SQLTAIL_S_LINE:
        e = memchr(p, t->state == SLC_SQLTAIL_S_LINE ? '\n' : '*',
                   (size_t) (end - p));
        p = e != NULL ? e : end;
        break;
    default:
        break;
    }
    return (size_t) (p - s);
}


/* --- the interface ------------------------------------------------------- */

void
slc_sql_tail_init(slc_sql_tail_t *t, unsigned status)
{
    memset(t, 0, sizeof(*t));
    t->nobs = (status & SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0;
    t->start = 1;
}

void
slc_sql_tail_feed(slc_sql_tail_t *t, const uint8_t *p, size_t n)
{
    const uint8_t  *end = p + n;

    while (p < end) {
        p += slc_sql_tail_run(t, p, end);
        if (p < end) {
            slc_sql_tail_byte(t, *p++);
        }
    }
}

uint32_t
slc_sql_tail_flags(const slc_sql_tail_t *t)
{
    uint32_t  f = t->flags;

    switch (t->state) {
    case SLC_SQLTAIL_S_WORD: case SLC_SQLTAIL_S_AT: case SLC_SQLTAIL_S_VAR:
    case SLC_SQLTAIL_S_QUOTE_END: case SLC_SQLTAIL_S_DASH:
    case SLC_SQLTAIL_S_SLASH: case SLC_SQLTAIL_S_EXEC_STAR:
        if (t->semi) {
            f |= SLC_SQL_F_MULTI;       /* a token the end completes */
        }
        break;
    case SLC_SQLTAIL_S_QUOTE: case SLC_SQLTAIL_S_QUOTE_ESC:
    case SLC_SQLTAIL_S_OPEN: case SLC_SQLTAIL_S_OPEN_M:
    case SLC_SQLTAIL_S_COMMENT: case SLC_SQLTAIL_S_COMMENT_STAR:
        f |= SLC_SQL_F_UNTERMINATED;
        break;
    default:                            /* CODE, LINE, DASH2, VERSION */
        break;
    }
    if (t->exec) {
        f |= SLC_SQL_F_UNTERMINATED;
    }
    return f;
}
