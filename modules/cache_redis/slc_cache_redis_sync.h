#ifndef SLC_CACHE_REDIS_SYNC_H
#define SLC_CACHE_REDIS_SYNC_H

/* slc_cache_redis_sync.c: generations bumped by the binlog reader (blocking)
   (slc_cache_redis_service.h lists the tier's files). */

#include "slc_core.h"
#include "slc_cache_redis_service.h"

#define SLC_REDIS_SYNC_MAX   16         /* services a reader bumps */

/* The binlog reader's bump of a commit (GTID id; NULL: none, as for what
   a service is owed) in each service of used[0..nused): tables hash[0..n)
   or, with `all`, every table; marked behind where it fails (SLC_ERROR,
   logged). */
int  slc_cache_redis_sync_bumps(const slc_cache_redis_service_t *const *used,
    unsigned nused, const char *id, const uint32_t *hash, unsigned n,
    int all);
/* Its connections, at the process' exit. */
void slc_cache_redis_sync_close(void);

#endif /* SLC_CACHE_REDIS_SYNC_H */
