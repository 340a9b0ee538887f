#ifndef SLC_CACHE_REDIS_KEYS_H
#define SLC_CACHE_REDIS_KEYS_H

/* slc_cache_redis_keys.c: the tier's keys and the wall clock entries expire
   by (slc_cache_redis_service.h lists the tier's files). */

#include "slc_core.h"
#include "slc_cache_redis_service.h"

/* The keys of the tier, under rs' prefix: a
   table's generation (`all`: every table's) and a bump's once-only mark. */
#define SLC_REDIS_KEY_MAX      (SLC_REDIS_PREFIX_MAX + 88)
size_t slc_cache_redis_gen_key(const slc_cache_redis_service_t *rs,
    uint32_t table, int all, char *out);
size_t slc_cache_redis_gen_random(char *val, size_t cap);
/* An entry's key: the prefix, "e:", and a 128-bit digest of the exact
   key in hex (the key itself is in the value, compared whole). */
size_t slc_cache_redis_entry_key(const slc_cache_redis_service_t *rs,
    const uint8_t *key, size_t klen, char *out);
/* Wall-clock ms (an entry's expiry is read by every host). */
uint64_t slc_cache_redis_wall_ms(void);

#endif /* SLC_CACHE_REDIS_KEYS_H */
