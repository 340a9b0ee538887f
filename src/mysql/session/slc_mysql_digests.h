#ifndef SLC_MYSQL_DIGESTS_H
#define SLC_MYSQL_DIGESTS_H

#include "slc_core.h"
#include "slc_latency.h"
#include "slc_mysql_conf.h"
#include "slc_sql_digest.h"

/*
 * Query digests (issue 23, section 3): per statement digest
 * (slc_sql_digest.h), and per user and database where the server block
 * asks (`digests on user db;`), the count, errors, total and longest
 * time and a latency histogram, in the shared zone mysql_digests.
 *
 * Bounded by construction: the zone has 2 x worker_processes + 2 regions
 * of `digest_top` entries each, sized at configuration time (`sluice -t`
 * prints it); a worker claims a free region at its start (its counts
 * carry on what the region's last owner left: a reload's new worker
 * continues), and writes it alone.  A region keeps the top digests by
 * space-saving: a digest it has no entry for, when it is full, takes the
 * entry of the least counted one, whose count it inherits (its `error`,
 * the most its count may exceed the truth by); what the evicted digest
 * counted goes to the region's overflow row, and `evicted` counts them.
 * A process that finds no free region keeps no digests (logged once).
 * Readers (the admin socket's show digests, the status listener) copy
 * each entry under its seqlock and add the regions' up by digest.
 */

/* A server block's `digests`: on, and kept apart by user, by database. */
#define SLC_DIGESTS_ON    0x1
#define SLC_DIGESTS_USER  0x2
#define SLC_DIGESTS_DB    0x4

#define SLC_DIGEST_TEXT   256
#define SLC_DIGEST_USER   33
#define SLC_DIGEST_DB     65

typedef struct {
    uint32_t        seq;            /* odd while its writer changes it */
    uint32_t        heap_pos;       /* the writer's */
    uint64_t        hash;           /* of text, user and db; 0: free */
    uint64_t        count;
    uint64_t        error;          /* space-saving's overcount bound */
    uint64_t        errors;
    uint64_t        rows;           /* result set rows the servers sent */
    uint64_t        sum_us;
    uint64_t        max_us;
    uint64_t        hist[SLC_LATENCY_BUCKETS + 1];
    char            user[SLC_DIGEST_USER];
    char            db[SLC_DIGEST_DB];
    char            text[SLC_DIGEST_TEXT];
} slc_digest_entry_t;

/* What a statement's record carries. */
typedef struct {
    slc_sql_digest_t    dg;
    char                text[SLC_DIGEST_TEXT];
    const char         *user;       /* NULL: not kept apart */
    const char         *db;
} slc_digest_stmt_t;

/* The bytes of the zone for `top` entries and `workers` workers. */
size_t slc_digests_zone_size(unsigned top, unsigned workers);
/* The zone's attach hook (master, each cycle): its regions laid out. */
int    slc_digests_attach(slc_shm_zone_t *z, slc_cycle_t *cycle, char *err,
    size_t errlen);
/* A worker's start: a region of its own (none: no digests, logged). */
void   slc_digests_bind(slc_cycle_t *cycle);
/* The master: the dead process `pid` owns no region any more. */
void   slc_digests_reap(slc_cycle_t *cycle, pid_t pid);

/* The digest of a COM_QUERY's text q[0..n), for s's server block. */
void   slc_digests_prepare(slc_digest_stmt_t *st, const uint8_t *q,
    size_t n, int nobs, const char *user, const char *db, unsigned how);
/* It ran: `us` µs, `err` an ERR answered it, `rows` result set rows
   came with the answer. */
void   slc_digests_record(const slc_digest_stmt_t *st, uint64_t us,
    int err, uint64_t rows);

/* An admin's digests reset: every region empties itself at its
   worker's next statement, and is not shown meanwhile. */
void   slc_digests_reset(const slc_cycle_t *cycle);
/* Every digest of every region, added up by digest and sorted by count
   (malloc'ed, *n of them; NULL when none or out of memory), and the
   overflow row and the evictions, added up. */
slc_digest_entry_t *slc_digests_snapshot(const slc_cycle_t *cycle,
    size_t *n, slc_digest_entry_t *overflow, uint64_t *evicted);

#endif /* SLC_MYSQL_DIGESTS_H */
