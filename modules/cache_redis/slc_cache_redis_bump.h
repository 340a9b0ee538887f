#ifndef SLC_CACHE_REDIS_BUMP_H
#define SLC_CACHE_REDIS_BUMP_H

/* slc_cache_redis_bump.c: the cache's hook invalidate: generations moved by
   the proxy's writes (slc_cache_redis_service.h lists the tier's files). */

#include "slc_cache.h"

/* slc_cache_redis_bump.c: the hook invalidate */
void  *slc_cache_redis_invalidate(void *tier, const uint32_t *hash,
    unsigned n, int all, slc_cache_remote_counters_t *cnt,
    slc_cache_remote_ack_pt ack, void *arg);

/* At the worker's exit: the owed bumps' timer stopped. */
void   slc_cache_redis_owed_stop(void);

#endif /* SLC_CACHE_REDIS_BUMP_H */
