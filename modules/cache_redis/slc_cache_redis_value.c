/*
 * An entry as a Redis value (slc_cache_redis_value.h).  Little-endian:
 *
 *   "SLCQ"  version:1  ntables:1  reserved:2 (0)
 *   klen:4  rlen:4  meta:16  allgen:8 (the every-table generation)
 *   expires:8 (wall-clock ms: the TTL a host copying it keeps)
 *   ntables x (table hash:4, generation:8)
 *   key (klen bytes)  result (rlen bytes)
 *
 * The decoder takes nothing on trust: a value is refused unless it is
 * exactly one whole value of this version, so that a foreign or truncated
 * value, or one another version wrote, is a miss and never served.
 */

#include "slc_core.h"
#include "slc_cache_redis_value.h"

#define SLC_REDIS_VALUE_HEAD  48        /* up to the tables */
#define SLC_REDIS_VALUE_TABLE 12

static void
slc_cache_redis_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t) (v >> (8 * i));
    }
}

static void
slc_cache_redis_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t) (v >> (8 * i));
    }
}

static uint32_t
slc_cache_redis_get32(const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16
           | (uint32_t) p[3] << 24;
}

static uint64_t
slc_cache_redis_get64(const uint8_t *p)
{
    return (uint64_t) slc_cache_redis_get32(p)
           | (uint64_t) slc_cache_redis_get32(p + 4) << 32;
}

size_t
slc_cache_redis_encoded_size(const slc_cache_redis_value_t *v)
{
    return SLC_REDIS_VALUE_HEAD + SLC_REDIS_VALUE_TABLE * v->ntables
           + v->klen + v->rlen;
}

size_t
slc_cache_redis_encode_head(const slc_cache_redis_value_t *v, uint8_t *out)
{
    uint8_t *p = out;

    memcpy(p, SLC_REDIS_VALUE_MAGIC, 4);
    p[4] = SLC_REDIS_VALUE_VERSION;
    p[5] = (uint8_t) v->ntables;
    p[6] = p[7] = 0;
    slc_cache_redis_put32(p + 8, (uint32_t) v->klen);
    slc_cache_redis_put32(p + 12, (uint32_t) v->rlen);
    memcpy(p + 16, v->meta, SLC_REDIS_VALUE_META);
    slc_cache_redis_put64(p + 32, v->allgen);
    slc_cache_redis_put64(p + 40, v->expires);
    p += SLC_REDIS_VALUE_HEAD;
    for (unsigned i = 0; i < v->ntables; i++) {
        slc_cache_redis_put32(p, v->table[i]);
        slc_cache_redis_put64(p + 4, v->gen[i]);
        p += SLC_REDIS_VALUE_TABLE;
    }
    if (v->klen > 0) {
        memcpy(p, v->key, v->klen);
    }
    return (size_t) (p - out) + v->klen;
}

void
slc_cache_redis_encode(const slc_cache_redis_value_t *v, uint8_t *out)
{
    size_t k = slc_cache_redis_encode_head(v, out);

    if (v->rlen > 0) {
        memcpy(out + k, v->result, v->rlen);
    }
}

int
slc_cache_redis_decode(const uint8_t *p, size_t len,
    slc_cache_redis_value_t *v)
{
    const uint8_t *t;
    uint64_t       need;

    memset(v, 0, sizeof(*v));
    if (len < SLC_REDIS_VALUE_HEAD || memcmp(p, SLC_REDIS_VALUE_MAGIC, 4)
        || p[4] != SLC_REDIS_VALUE_VERSION
        || p[5] > SLC_REDIS_VALUE_TABLES || p[6] != 0 || p[7] != 0)
    {
        return SLC_ERROR;
    }
    v->ntables = p[5];
    v->klen = slc_cache_redis_get32(p + 8);
    v->rlen = slc_cache_redis_get32(p + 12);
    need = (uint64_t) SLC_REDIS_VALUE_HEAD
           + (uint64_t) SLC_REDIS_VALUE_TABLE * v->ntables
           + (uint64_t) v->klen + (uint64_t) v->rlen;
    if (need != (uint64_t) len) {
        return SLC_ERROR;
    }
    memcpy(v->meta, p + 16, SLC_REDIS_VALUE_META);
    v->allgen = slc_cache_redis_get64(p + 32);
    v->expires = slc_cache_redis_get64(p + 40);
    t = p + SLC_REDIS_VALUE_HEAD;
    for (unsigned i = 0; i < v->ntables; i++) {
        v->table[i] = slc_cache_redis_get32(t);
        v->gen[i] = slc_cache_redis_get64(t + 4);
        t += SLC_REDIS_VALUE_TABLE;
    }
    v->key = t;
    v->result = t + v->klen;
    return SLC_OK;
}
