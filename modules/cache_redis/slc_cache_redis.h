#ifndef SLC_CACHE_REDIS_H
#define SLC_CACHE_REDIS_H

#include "slc_module.h"
#include "slc_cache_redis_service.h"

/* The module (slc_cache_redis.c): the `redis` block, `cache_redis`, the
   binding of a server's cache to its service, the process roles. */
extern slc_module_t  slc_cache_redis_module;

#endif /* SLC_CACHE_REDIS_H */
