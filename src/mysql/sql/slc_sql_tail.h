#ifndef SLC_SQL_TAIL_H
#define SLC_SQL_TAIL_H

#include "slc_core.h"
#include "slc_sql_classify.h"

/*
 * The tail scanner: what a COM_QUERY's text may do, told from the text in
 * pieces.  The query cache keeps only the first bytes of a statement
 * longer than its buffer (the head, which slc_sql_classify reads); the
 * rest streams to the server in pieces it is shown once each.  The head
 * says what the statement is; once the whole text went by, the scanner
 * says what the rest may add that the head cannot rule out: another
 * statement, or a call of a stored function (which may write anything),
 * so that a long SELECT need not be taken for a write of everything.
 *
 * It reads as the classifier does (slc_sql_classify.h): its lexer
 * (quotes ' " ` with backslash escapes unless the server says
 * NO_BACKSLASH_ESCAPES, doubled quotes, comments -- and # and block,
 * executable comments slash-star-! and slash-star-M! whose content is
 * code, whatever the version) and its call rule, but without its state
 * machine.  Flags (SLC_SQL_F_*), as if the text ended where it is:
 *
 *   MULTI         a ";" outside quotes and comments followed by anything
 *                 but blanks and comments (also in a routine's body:
 *                 CREATE PROCEDURE p() BEGIN ...; END is two here);
 *   STORED_FUNC   a name before "(" that may call a stored function: an
 *                 unquoted word by slc_sql_call_flags (no number, no
 *                 reserved word, no built-in), a `quoted` or "quoted"
 *                 name, a qualified one (db.f()), with the classifier's
 *                 exceptions: the table of INSERT, REPLACE or INTO
 *                 (INSERT INTO db.t (a), LOAD ... INTO TABLE t (a)),
 *                 JSON_TABLE( right after FROM or JOIN, a CTE's column
 *                 list (WITH c (a) AS, at the top level), a word right
 *                 after a string or ")" (MATCH (a) AGAINST (...)), and a
 *                 variable's name;
 *   SEQUENCE      NEXTVAL(, SETVAL(, LASTVAL(, NEXT or PREVIOUS VALUE FOR
 *                 (a sequence is a table: NEXTVAL writes it), and the
 *                 other flags a built-in's call sets (slc_sql_call_flags:
 *                 LAST_INSERT_ID(), GET_LOCK(), NOW()...; not those of a
 *                 bare word such as CURRENT_TIMESTAMP);
 *   UNTERMINATED  a quote, a comment or an executable comment open at the
 *                 end;
 *   AMBIGUOUS     a backslash before a double quote inside "...": under
 *                 ANSI_QUOTES the quote ends a name and the rest reads
 *                 otherwise (see the classifier's flag).
 *
 * Known limits, all towards a flag the classifier would not set (a false
 * STORED_FUNC only costs an invalidation; the unit test checks that the
 * scanner flags at least what the classifier does on its golden table):
 *   - statements are not told apart: a name before "(" in DDL (CREATE
 *     TABLE t (a INT), CREATE INDEX i ON t (a)) or CALL p(1) is a call
 *     here, never there (the classifier looks for none in DDL and CALL);
 *   - a ";" in a routine's body (CREATE ... BEGIN ...; END, BEGIN NOT
 *     ATOMIC) is MULTI, and a WITH's column list after it a call;
 *   - JSON_TABLE( after a comma (FROM t, JSON_TABLE(...)) is a call: a
 *     comma of a list of tables is not told from any other.
 *
 * The state is fixed in size: no allocation, no pointer into the pieces
 * (a piece may be released once slc_sql_tail_feed returns), at most the
 * first SLC_SQLTAIL_WORD_MAX bytes of a word kept (a longer word is no
 * built-in nor keyword).  The flags are the same however the text is cut.
 */

#define SLC_SQLTAIL_WORD_MAX  64

/* The scanner's state; its fields are its own. */
typedef struct {
    uint32_t  flags;        /* SLC_SQL_F_* found so far */
    uint32_t  depth;        /* parentheses, for a CTE's column list */
    uint8_t   state;        /* the lexer's (SLC_SQLTAIL_S_*) */
    uint8_t   quote;        /* the open quote's byte */
    uint8_t   p1, p2;       /* the last two tokens (SLC_SQLTAIL_T_*) */
    uint16_t  r1, r2;       /* and their words' roles */
    uint8_t   target;       /* INSERT INTO db.t (: how far */
    uint8_t   wlen;         /* bytes of word[] */
    uint8_t   word[SLC_SQLTAIL_WORD_MAX];   /* the last word's first bytes */
    unsigned  nobs:1;       /* NO_BACKSLASH_ESCAPES */
    unsigned  exec:1;       /* in an executable comment */
    unsigned  semi:1;       /* a ";" was the last token */
    unsigned  start:1;      /* no token of this statement yet */
    unsigned  with:1;       /* WITH: the main statement is to come */
    unsigned  wlong:1;      /* the word is longer than word[] */
    unsigned  sysvar:1;     /* the variable began with @@ */
    unsigned  qvar:1;       /* the quote is a variable's name */
} slc_sql_tail_t;

/*
 * Start a text.  `status` is the session's last server status flags, as
 * for slc_sql_classify: only SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES
 * counts.
 */
void      slc_sql_tail_init(slc_sql_tail_t *t, unsigned status);

/* The text's next n bytes, from its first one (the head too), in order. */
void      slc_sql_tail_feed(slc_sql_tail_t *t, const uint8_t *p, size_t n);

/* What the text fed so far may do, as if it ended there: SLC_SQL_F_MULTI,
   _STORED_FUNC, a call's flags (_SEQUENCE...), _UNTERMINATED and
   _AMBIGUOUS. */
uint32_t  slc_sql_tail_flags(const slc_sql_tail_t *t);

#endif /* SLC_SQL_TAIL_H */
