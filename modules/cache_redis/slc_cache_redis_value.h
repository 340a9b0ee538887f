#ifndef SLC_CACHE_REDIS_VALUE_H
#define SLC_CACHE_REDIS_VALUE_H

/* slc_cache_redis_value.c: an entry as a Redis value (pure)
   (slc_cache_redis_service.h lists the tier's files). */

#include "slc_core.h"

#define SLC_REDIS_VALUE_MAGIC    "SLCQ"
#define SLC_REDIS_VALUE_VERSION  2
#define SLC_REDIS_VALUE_TABLES   16     /* as SLC_CACHE_TABLES */
#define SLC_REDIS_VALUE_META     16     /* as SLC_CACHE_META */

/*
 * What an entry holds besides its result.  `gen` are the generations the
 * tables had when the read went out (Redis' own counters: a hit whose
 * tables' generations moved since is stale).
 */
typedef struct {
    const uint8_t *key;                 /* the exact key, compared whole */
    size_t         klen;
    unsigned       ntables;
    uint32_t       table[SLC_REDIS_VALUE_TABLES];  /* table hashes */
    uint64_t       gen[SLC_REDIS_VALUE_TABLES];
    uint64_t       allgen;              /* the every-table generation */
    uint64_t       expires;             /* wall-clock ms */
    uint8_t        meta[SLC_REDIS_VALUE_META];
    const uint8_t *result;
    size_t         rlen;
} slc_cache_redis_value_t;

/* The bytes slc_cache_redis_encode writes for v. */
size_t slc_cache_redis_encoded_size(const slc_cache_redis_value_t *v);
/* Encode v into out (at least slc_cache_redis_encoded_size bytes). */
void   slc_cache_redis_encode(const slc_cache_redis_value_t *v,
    uint8_t *out);
/* The same but the result (v->rlen counted, v->result not read): the
   bytes written, after which the result's go. */
size_t slc_cache_redis_encode_head(const slc_cache_redis_value_t *v,
    uint8_t *out);
/*
 * Decode p[0..len) into *v (its pointers into p).  SLC_ERROR for
 * anything but a whole value of this version: another magic or version,
 * a length past the end, trailing bytes, more tables than fit.
 */
int    slc_cache_redis_decode(const uint8_t *p, size_t len,
    slc_cache_redis_value_t *v);

#endif /* SLC_CACHE_REDIS_VALUE_H */
