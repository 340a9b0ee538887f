#ifndef SLC_CACHE_VARS_H
#define SLC_CACHE_VARS_H

/*
 * What a session's SET statements make of its results, for the query
 * cache's key (docs/architecture.md, "The query cache"): a pure module
 * over the text of each SET the server accepted, no I/O, no logging.
 *
 * The key carries the session's current values, not their history: the
 * state is a list of entries "name=value" (NUL terminated each), one per
 * variable, the last SET of each winning.  A SET of a variable removes
 * its earlier entry and appends the new one (order kept, so that SET NAMES
 * and a later SET character_set_results still apply in their order), as
 * long as every value is a literal (words, numbers, strings, signs: what
 * reads nothing of the session).  A value that reads something (@@x, @y,
 * a function, a subquery) depends on the values before it: from then on
 * nothing is removed any more (`history`), so the list is the history in
 * full, which only ever makes keys differ.  A SET that cannot be read (one
 * behind a comment, SET STATEMENT) is kept whole as an entry, in history
 * mode too.
 *
 * Left out of the key, on purpose: user variables (no cacheable statement
 * reads one), SET PASSWORD (a secret, and no result depends on it),
 * GLOBAL assignments (new sessions' defaults: the filter invalidates
 * everything), autocommit (the status flags tell it), the isolation level
 * and the transaction access mode (below).
 *
 * Isolation: the session's level (SET SESSION TRANSACTION ISOLATION LEVEL,
 * SET tx_isolation / transaction_isolation) and the one-shot level of the
 * next transaction (SET TRANSACTION ISOLATION LEVEL) are followed, because
 * a READ UNCOMMITTED read may see what is never committed, and only READ
 * COMMITTED reads a transaction's statements as of their own start (a
 * REPEATABLE READ transaction reads its snapshot).  A level it cannot read
 * is UNKNOWN.  The same for sql_mode and ANSI_QUOTES (which changes how
 * the classifier's text reads: SLC_SQL_F_AMBIGUOUS).
 *
 * Memory: at most SLC_CACHE_STATE_MAX bytes of entries; past that (or
 * without memory) `overflow` says the state is not known.
 */

#include "slc_core.h"

/* Isolation levels; GLOBAL: the server's default (not SET here). */
#define SLC_CACHE_ISO_NONE      0   /* iso_next: no SET TRANSACTION */
#define SLC_CACHE_ISO_GLOBAL    1
#define SLC_CACHE_ISO_RU        2
#define SLC_CACHE_ISO_RC        3
#define SLC_CACHE_ISO_RR        4
#define SLC_CACHE_ISO_SER       5
#define SLC_CACHE_ISO_UNKNOWN   6

/* sql_mode's ANSI_QUOTES: the server's default, set, not set, maybe. */
#define SLC_CACHE_ANSI_GLOBAL   0
#define SLC_CACHE_ANSI_ON       1
#define SLC_CACHE_ANSI_OFF      2

typedef struct {
    char       *buf;            /* entries, malloc'ed, NULL when none */
    uint32_t    len;
    uint64_t    hash;           /* of buf[0..len): 0 when empty */
    unsigned    history:1;      /* a value read the state: keep all */
    unsigned    overflow:1;     /* not known: no cache */
    uint8_t     iso;            /* the session's level */
    uint8_t     iso_next;       /* the next transaction's (NONE) */
    uint8_t     ansi;
} slc_cache_vars_t;

/* A session's start, and a COM_RESET_CONNECTION's or COM_CHANGE_USER's
   (the server resets the variables even when it refuses the change). */
void slc_cache_vars_init(slc_cache_vars_t *v);
void slc_cache_vars_reset(slc_cache_vars_t *v);

/* A SET statement q[0..n) the server accepted (the classifier's kind was
   SET, one statement). */
void slc_cache_vars_set(slc_cache_vars_t *v, const uint8_t *q, size_t n);

/*
 * For a reload's handover: the state as bytes (flags, levels, entries)
 * and back.  save returns the length, 0 if cap is too small; restore
 * returns SLC_ERROR on bytes it does not take (v is then left as init).
 */
size_t slc_cache_vars_save(const slc_cache_vars_t *v, uint8_t *buf,
    size_t cap);
int    slc_cache_vars_restore(slc_cache_vars_t *v, const uint8_t *p,
    size_t len);

/* The hash of n bytes (FNV-1a, 64 bits; 0 for none). */
uint64_t slc_cache_vars_hash(const void *p, size_t n);

#endif /* SLC_CACHE_VARS_H */
