#ifndef SLC_CACHE_REDIS_OWED_H
#define SLC_CACHE_REDIS_OWED_H

/* slc_cache_redis_owed.c: the bumps a service is owed by this host
   (slc_cache_redis_service.h lists the tier's files). */

#include "slc_core.h"
#include "slc_shmtx.h"
#include "slc_cache_redis_service.h"

/*
 * The tables whose commits this host could not bump in a service (down,
 * slow, refusing, its queue full): until it could, no entry of theirs is
 * taken from that service on this host (slc_cache_redis_owed_any), since
 * it still holds their old generations.  Marked by the binlog reader and
 * by the workers, delivered by either (each delivers what it finds);
 * written under the zone's lock and `seq`, read under `seq` alone.  More
 * tables than fit make it `all`.
 */
#define SLC_REDIS_BEHIND_MAX    64

typedef struct slc_cache_redis_behind_s {
    uint32_t    seq;                        /* seqlock */
    uint32_t    ver;                        /* marks added, ever */
    uint32_t    all;
    uint32_t    n;
    uint32_t    hash[SLC_REDIS_BEHIND_MAX];
} slc_cache_redis_behind_t;

/* Tables hash[0..n) (`all`: every table) owed to rs from now on.  A
   service without an entry (no zone) keeps no marks. */
void slc_cache_redis_owed_add(const slc_cache_redis_service_t *rs,
    const uint32_t *hash, unsigned n, int all);
/* What rs is owed, copied into *snap: 0 when nothing. */
int  slc_cache_redis_owed_take(const slc_cache_redis_service_t *rs,
    slc_cache_redis_behind_t *snap);
/* snap (from owed_take) reached Redis: its marks go; what was marked
   since stays (all of it, when unsure). */
void slc_cache_redis_owed_paid(const slc_cache_redis_service_t *rs,
    const slc_cache_redis_behind_t *snap);
/* Whether any of tables hash[0..n) is owed to rs (a worker, before a
   lookup: two atomic loads when nothing is); n 0: whether anything is. */
int  slc_cache_redis_owed_any(const slc_cache_redis_service_t *rs,
    const uint32_t *hash, unsigned n);

#endif /* SLC_CACHE_REDIS_OWED_H */
