#ifndef SLC_SQL_DIGEST_H
#define SLC_SQL_DIGEST_H

#include "slc_core.h"

/*
 * A statement's digest (issue 23, section 3): its text with what varies
 * between runs of the same statement taken out, read with the
 * classifier's tokenizer (slc_sql_lex.h):
 *   - literals (numbers, strings, hexadecimal and bit literals, a string
 *     with a character set introducer, a sign before a number where an
 *     operand starts) become ?, as a prepared statement's markers are;
 *   - a list of literals in IN (...) becomes IN (...), and the rows of
 *     literals after VALUES become one (...): a statement with 3 or 300
 *     values is one digest;
 *   - comments go (an executable comment's content stays: it is code),
 *     blanks become one space where one is needed, keywords and built-in
 *     functions are folded to lower case (names are kept as written: a
 *     table's may be case-sensitive).
 * The text is cut at `cap` - 1 bytes (truncated says so); the hash is of
 * the whole normalised text, so two statements that differ past the cut
 * are two digests.  An unterminated quote or comment ends it (bad).
 * Pure: no allocation, one pass plus a look ahead over each list.
 */

typedef struct {
    uint64_t    hash;           /* FNV-1a 64 of the whole text */
    size_t      len;            /* bytes of text written, NUL excluded */
    unsigned    truncated:1;
    unsigned    bad:1;
} slc_sql_digest_t;

void slc_sql_digest(const uint8_t *q, size_t n, int nobs, char *text,
    size_t cap, slc_sql_digest_t *d);

#endif /* SLC_SQL_DIGEST_H */
