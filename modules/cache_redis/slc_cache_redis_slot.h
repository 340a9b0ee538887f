#ifndef SLC_CACHE_REDIS_SLOT_H
#define SLC_CACHE_REDIS_SLOT_H

/* slc_cache_redis_slot.c: the Redis Cluster slot of a key (pure)
   (slc_cache_redis_service.h lists the tier's files). */

#include "slc_core.h"

#define SLC_REDIS_SLOTS  16384

/* CRC16 as Redis Cluster uses it (XMODEM: poly 0x1021, init 0). */
uint16_t slc_cache_redis_crc16(const void *p, size_t len);
/*
 * The slot of key k[0..len): of its hash tag when it has one (the bytes
 * between the first '{' and the first '}' after it, if there are any),
 * else of the whole key.
 */
unsigned slc_cache_redis_slot(const void *k, size_t len);

#endif /* SLC_CACHE_REDIS_SLOT_H */
