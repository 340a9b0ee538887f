/*
 * RESP commands built by the tier itself (slc_cache_redis_resp.h), handed to
 * hiredis whole (redisAsyncFormattedCommand): its own formatting goes
 * through sdscatfmt for every argument, which cost a lookup more than all
 * the rest of a hit.  A value is encoded straight into its bulk string
 * (slc_cache_redis_resp_open), never copied twice.  Pure: unit tested.
 */

#include "slc_core.h"
#include "slc_cache_redis_resp.h"

/* Room for n more bytes; NULL (and `oom` set) without memory. */
static uint8_t *
slc_cache_redis_resp_room(slc_cache_redis_resp_t *r, size_t n)
{
    uint8_t *p;
    size_t   cap;

    if (r->oom) {
        return NULL;
    }
    if (r->len + n > r->cap) {
        cap = slc_max(r->cap * 2, r->len + n + 256);
        if ((p = realloc(r->buf, cap)) == NULL) {
            r->oom = 1;
            return NULL;
        }
        r->buf = p;
        r->cap = cap;
    }
    return r->buf + r->len;
}

size_t
slc_cache_redis_resp_dec(uint8_t *out, unsigned long long v)
{
    uint8_t d[20];
    size_t  n = 0, k;

    do {
        d[n++] = (uint8_t) ('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (k = 0; k < n; k++) {
        out[k] = d[n - 1 - k];
    }
    return n;
}

/* "<c><n>\r\n" (snprintf costs more than a small command's bytes) */
static void
slc_cache_redis_resp_head(slc_cache_redis_resp_t *r, char c, size_t n)
{
    uint8_t *p = slc_cache_redis_resp_room(r, 24);

    if (p != NULL) {
        p[0] = (uint8_t) c;
        n = 1 + slc_cache_redis_resp_dec(p + 1, n);
        p[n] = '\r';
        p[n + 1] = '\n';
        r->len += n + 2;
    }
}

void
slc_cache_redis_resp_begin(slc_cache_redis_resp_t *r, unsigned nargs)
{
    r->len = 0;
    r->oom = 0;
    slc_cache_redis_resp_head(r, '*', nargs);
}

uint8_t *
slc_cache_redis_resp_open(slc_cache_redis_resp_t *r, size_t n)
{
    uint8_t *p;

    slc_cache_redis_resp_head(r, '$', n);
    if ((p = slc_cache_redis_resp_room(r, n + 2)) == NULL) {
        return NULL;
    }
    r->len += n;
    p[n] = '\r';
    p[n + 1] = '\n';
    r->len += 2;
    return p;
}

void
slc_cache_redis_resp_arg(slc_cache_redis_resp_t *r, const void *s, size_t n)
{
    uint8_t *p = slc_cache_redis_resp_open(r, n);

    if (p != NULL && n > 0) {
        memcpy(p, s, n);
    }
}

void
slc_cache_redis_resp_str(slc_cache_redis_resp_t *r, const char *s)
{
    slc_cache_redis_resp_arg(r, s, strlen(s));
}

void
slc_cache_redis_resp_num(slc_cache_redis_resp_t *r, unsigned long long v)
{
    uint8_t b[24];

    slc_cache_redis_resp_arg(r, b, slc_cache_redis_resp_dec(b, v));
}
