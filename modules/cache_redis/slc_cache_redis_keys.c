/*
 * The Redis tier's keys and clock (slc_cache_redis_keys.h), pure but for the
 * random generations and the wall clock.
 *
 * Keys, under the service's prefix P:
 *   P e:<128-bit digest of the exact key, hex>   an entry
 *                                 (slc_cache_redis_value.c), its TTL as
 *                                 its expiry
 *   P {g}:<table hash, hex>       a table's generation
 *   P {g}:*                       every table's generation
 * The digest only names an entry: the value holds the exact key, compared
 * whole on every hit, so a collision is a miss (or two keys taking turns
 * at one name), never another key's answer.  In a Redis Cluster an
 * entry lives in its own slot, the generations in one ({g}: a hash tag).
 */

#include "slc_core.h"
#include "slc_cache_redis_keys.h"

#include <time.h>


/* Two 64-bit hashes of independent constants: a digest, not a secret. */
static uint64_t
slc_cache_redis_mix(const uint8_t *p, size_t n, uint64_t seed, uint64_t m)
{
    uint64_t h = seed ^ (n * m), w;
    size_t   i;

    for (i = 0; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ (w * m)) * 0x9fb21c651e98df25ull;
        h ^= h >> 29;
    }
    w = 0;
    memcpy(&w, p + i, n - i);
    h = (h ^ (w * m)) * 0x9fb21c651e98df25ull;
    h ^= h >> 32;
    h *= m;
    return h ^ (h >> 29);
}

/* The prefix and a tag at out: their length (at most SLC_REDIS_PREFIX_MAX
   + 4). */
static size_t
slc_cache_redis_key_head(const slc_cache_redis_service_t *rs,
    const char *tag, char *out)
{
    size_t n = strlen(rs->prefix), t = strlen(tag);

    memcpy(out, rs->prefix, n);
    memcpy(out + n, tag, t);
    return n + t;
}

/* v in `digits` hex digits at out. */
static size_t
slc_cache_redis_hex(char *out, uint64_t v, unsigned digits)
{
    static const char hex[] = "0123456789abcdef";

    for (unsigned i = 0; i < digits; i++) {
        out[i] = hex[(v >> (4 * (digits - 1 - i))) & 15];
    }
    return digits;
}

size_t
slc_cache_redis_entry_key(const slc_cache_redis_service_t *rs,
    const uint8_t *key, size_t klen, char *out)
{
    size_t n = slc_cache_redis_key_head(rs, "e:", out);

    n += slc_cache_redis_hex(out + n, slc_cache_redis_mix(key, klen,
             0x243f6a8885a308d3ull, 0xc2b2ae3d27d4eb4full), 16);
    n += slc_cache_redis_hex(out + n, slc_cache_redis_mix(key, klen,
             0x13198a2e03707344ull, 0x165667b19e3779f9ull), 16);
    out[n] = '\0';
    return n;
}

size_t
slc_cache_redis_gen_key(const slc_cache_redis_service_t *rs, uint32_t table,
    int all, char *out)
{
    size_t n = slc_cache_redis_key_head(rs, "{g}:", out);

    if (all) {
        out[n++] = '*';
    } else {
        n += slc_cache_redis_hex(out + n, table, 8);
    }
    out[n] = '\0';
    return n;
}

/* A random value for a generation created: none an entry recorded. */
size_t
slc_cache_redis_gen_random(char *val, size_t cap)
{
    uint64_t r;

    arc4random_buf(&r, sizeof(r));
    return (size_t) snprintf(val, cap, "%llu", (unsigned long long) (r >> 2));
}

uint64_t
slc_cache_redis_wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}
