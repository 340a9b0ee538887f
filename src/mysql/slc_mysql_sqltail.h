#ifndef SLC_MYSQL_SQLTAIL_H
#define SLC_MYSQL_SQLTAIL_H

#include "slc_core.h"
#include "slc_mysql_classify.h"

/*
 * A resumable scan of a statement's text that comes in pieces, for a
 * statement larger than the buffer the classifier could see whole (the
 * query cache sees the first buffer_size bytes of a COM_QUERY, then the
 * rest as it goes on to the server).  It reads no tables and no kind: it
 * says, once the whole text went by, whether the text may do more than a
 * plain read of the kind its first word says:
 *
 *   SLC_SQL_F_MULTI          a ";" outside quotes and comments followed by
 *                            anything but blanks and comments;
 *   SLC_SQL_F_STORED_FUNC    a call the classifier takes for a stored
 *                            function's (a name not built in, `name`(,
 *                            "name"(, db.name();
 *   SLC_SQL_F_SEQUENCE       NEXTVAL(, SETVAL(, LASTVAL(, NEXT VALUE FOR,
 *                            PREVIOUS VALUE FOR (and the other flags a
 *                            built-in call sets: slc_sql_call_flags);
 *   SLC_SQL_F_UNTERMINATED   a quote or comment left open at the end;
 *   SLC_SQL_F_AMBIGUOUS      a "..." with a backslash inside (it reads
 *                            otherwise under ANSI_QUOTES).
 *
 * It knows what the classifier knows of the text's form: quotes (' " `,
 * backslash escapes unless NO_BACKSLASH_ESCAPES, doubled quotes),
 * comments (-- , #, slash-star), executable comments (slash-star-! and
 * slash-star-M!) whose content is code.  A call's name may be split over
 * two pieces; a word longer than any built-in's name is no built-in.
 * Fixed size, no allocation, byte by byte: meant for the rare statement
 * of several kilobytes, not for every one.
 */

#define SLC_SQLTAIL_WORD  48

typedef struct {
    uint32_t    flags;
    uint8_t     nobs;           /* NO_BACKSLASH_ESCAPES */
    uint8_t     mode;           /* code, a quote, a comment */
    uint8_t     pend;           /* a byte that may start a pair */
    uint8_t     exec;           /* inside an executable comment */
    uint8_t     semi;           /* a ";" at the top: more is MULTI */
    uint8_t     last;           /* the last token's type */
    uint8_t     seq;            /* NEXT|PREVIOUS (1), then VALUE (2) */
    uint8_t     quote;          /* the quote that just closed */
    uint8_t     wlen;           /* word bytes in word */
    uint8_t     wlong;          /* the word is longer than that */
    uint8_t     word[SLC_SQLTAIL_WORD];
    uint32_t    call;           /* flags of a call if "(" follows */
} slc_sqltail_t;

/* status: the server's status flags (NO_BACKSLASH_ESCAPES counts). */
void     slc_sqltail_init(slc_sqltail_t *t, unsigned status);
/* The text in order, from its first byte, in pieces of any size. */
void     slc_sqltail_feed(slc_sqltail_t *t, const uint8_t *p, size_t n);
/* Once the whole text went by: the flags above. */
uint32_t slc_sqltail_flags(const slc_sqltail_t *t);

#endif /* SLC_MYSQL_SQLTAIL_H */
