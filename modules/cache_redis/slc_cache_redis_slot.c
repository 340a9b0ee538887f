/*
 * The Redis Cluster slot of a key (slc_cache_redis_slot.h): CRC16/XMODEM
 * (polynomial 0x1021, initial value 0, no reflection) of the key or of
 * its hash tag, modulo 16384, as the cluster specification defines it.
 * The table is computed on first use.
 */

#include "slc_core.h"
#include "slc_cache_redis_slot.h"

static uint16_t  slc_cache_redis_crc_table[256];
static int       slc_cache_redis_crc_ready;

static void
slc_cache_redis_crc_init(void)
{
    for (unsigned i = 0; i < 256; i++) {
        uint16_t c = (uint16_t) (i << 8);

        for (int k = 0; k < 8; k++) {
            c = (c & 0x8000) ? (uint16_t) ((c << 1) ^ 0x1021)
                             : (uint16_t) (c << 1);
        }
        slc_cache_redis_crc_table[i] = c;
    }
    slc_cache_redis_crc_ready = 1;
}

uint16_t
slc_cache_redis_crc16(const void *p, size_t len)
{
    const uint8_t *s = p;
    uint16_t       crc = 0;

    if (!slc_cache_redis_crc_ready) {
        slc_cache_redis_crc_init();
    }
    for (size_t i = 0; i < len; i++) {
        crc = (uint16_t) ((crc << 8)
                          ^ slc_cache_redis_crc_table[(crc >> 8) ^ s[i]]);
    }
    return crc;
}

unsigned
slc_cache_redis_slot(const void *k, size_t len)
{
    const uint8_t *s = k;
    const uint8_t *open = memchr(s, '{', len), *close;

    if (open != NULL) {
        size_t rest = len - (size_t) (open - s) - 1;

        close = memchr(open + 1, '}', rest);
        if (close != NULL && close > open + 1) {
            s = open + 1;
            len = (size_t) (close - s);
        }
    }
    return slc_cache_redis_crc16(s, len) & (SLC_REDIS_SLOTS - 1);
}
