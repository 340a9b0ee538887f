#ifndef SLC_CACHE_REDIS_LOOKUP_H
#define SLC_CACHE_REDIS_LOOKUP_H

/* slc_cache_redis_lookup.c: the cache's hooks lookup and store
   (slc_cache_redis_service.h lists the tier's files). */

#include "slc_cache.h"

/* slc_cache_redis_lookup.c: the hooks lookup and store */
void  *slc_cache_redis_lookup(void *tier, const slc_cache_remote_ask_t *ask,
    slc_cache_remote_counters_t *cnt, slc_cache_remote_done_pt done,
    void *arg);
void   slc_cache_redis_store(void *req, const slc_cache_store_t *st,
    const uint8_t *meta, uint64_t ttl);

#endif /* SLC_CACHE_REDIS_LOOKUP_H */
