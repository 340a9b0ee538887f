#ifndef SLC_SQL_LEX_H
#define SLC_SQL_LEX_H

#include "slc_core.h"

/*
 * The statement text's tokenizer (the classifier's and the digests'): one
 * pass, no allocation, bounded by the length.  It skips blanks and
 * comments (-- , #, block), reads an executable comment's content
 * (slash-star-! with or without a version, MariaDB's slash-star-M!) as
 * code, and returns words, quoted runs (backslash escapes unless
 * NO_BACKSLASH_ESCAPES, doubled quotes), variables, := and any other byte
 * as punctuation.  A comment before the first token may be a routing hint
 * ("sluice: route=..."); a backslash before a double quote inside "..."
 * makes the text ambiguous under ANSI_QUOTES (slc_sql_classify.h).
 */

/*
 * The lexer's character classes (also the tail scanner's): a byte of an
 * unquoted word (letters, digits, _, $ and every byte from 0x80, so
 * that UTF-8 names are words), and a blank.
 */
#define SLC_SQL_C_WORD   0x01
#define SLC_SQL_C_BLANK  0x02

extern const uint8_t  slc_sql_cclass[256];

static inline int
slc_sql_is_word_char(uint8_t c)
{
    return slc_sql_cclass[c] & SLC_SQL_C_WORD;
}

static inline int
slc_sql_is_blank(uint8_t c)
{
    return slc_sql_cclass[c] & SLC_SQL_C_BLANK;
}

/* A routing hint in a comment before the first word:
   / * sluice: route=primary|replica|last * / (also in -- and # comments). */
typedef enum {
    SLC_SQL_HINT_NONE = 0,
    SLC_SQL_HINT_PRIMARY,
    SLC_SQL_HINT_REPLICA,
    SLC_SQL_HINT_LAST
} slc_sql_hint_t;

typedef enum {
    SLC_SQL_T_END = 0,
    SLC_SQL_T_WORD,             /* unquoted word: keyword, name, number */
    SLC_SQL_T_QUOTED,           /* `name` (off/len inside the backticks) */
    SLC_SQL_T_DQUOTED,          /* "x": a string, or a name under
                                   ANSI_QUOTES (off/len inside) */
    SLC_SQL_T_STRING,           /* 'x' */
    SLC_SQL_T_USERVAR,          /* @x, @'x', @`x` */
    SLC_SQL_T_SYSVAR,           /* @@x, @@session.x (off/len after @@) */
    SLC_SQL_T_ASSIGN,           /* := */
    SLC_SQL_T_PUNCT,            /* any other byte, one at a time */
    SLC_SQL_T_BAD               /* a quote or comment left open */
} slc_sql_ttype_t;

typedef struct {
    slc_sql_ttype_t  type;
    unsigned         word;      /* T_WORD: its keyword id, the caller's
                                   (the lexer leaves 0) */
    uint32_t         off;
    uint32_t         len;
} slc_sql_tok_t;

typedef struct {
    const uint8_t   *q;
    size_t           n;
    size_t           i;
    int              exec;      /* inside an executable comment */
    int              seen;      /* a token was returned */
    int              nobs;      /* NO_BACKSLASH_ESCAPES */
    int              ambiguous; /* SLC_SQL_F_AMBIGUOUS's case was met */
    slc_sql_hint_t   hint;      /* a comment's before the first token */
} slc_sql_lex_t;

/*
 * The classifier, on every statement's path, compiles this file into its
 * own (SLC_SQL_LEX_API static, slc_sql_classify.c) so that the compiler
 * may inline the tokenizer into its loop, as it did when both were one
 * file: called across files it cost 125 instructions more per "SELECT 1"
 * (contrib/bench/cgcost readwritesplit read).  Others call this file's.
 */
#ifndef SLC_SQL_LEX_API
#define SLC_SQL_LEX_API
#endif

/* Ready to read q[0..n) (n below 4 GiB: offsets are 32 bits). */
SLC_SQL_LEX_API void slc_sql_lex_init(slc_sql_lex_t *lx, const uint8_t *q,
    size_t n, int nobs);
/* The next token; T_END at the end, T_BAD in an open quote or comment. */
SLC_SQL_LEX_API void slc_sql_lex_next(slc_sql_lex_t *lx, slc_sql_tok_t *t);

#endif /* SLC_SQL_LEX_H */
