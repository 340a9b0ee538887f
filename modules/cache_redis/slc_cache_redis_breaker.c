/*
 * The circuit breaker a worker keeps per Redis node
 * (slc_cache_redis_breaker.h): closed, open for a back-off after
 * `threshold` failures in a row, then one probe (half open) decides.  A
 * failed probe doubles the back-off, up to its cap; a success closes it
 * and resets the back-off.  Pure: the caller gives the time and logs the
 * transitions the calls report.
 */

#include "slc_core.h"
#include "slc_cache_redis_breaker.h"

void
slc_cache_redis_breaker_init(slc_cache_redis_breaker_t *b,
    unsigned threshold, uint64_t backoff_min, uint64_t backoff_max)
{
    memset(b, 0, sizeof(*b));
    b->threshold = threshold > 0 ? threshold : 1;
    b->backoff_min = backoff_min;
    b->backoff_max = slc_max(backoff_max, backoff_min);
    b->backoff = backoff_min;
}

int
slc_cache_redis_breaker_allow(slc_cache_redis_breaker_t *b, uint64_t now)
{
    switch (b->state) {
    case SLC_REDIS_CLOSED:
        return 1;
    case SLC_REDIS_OPEN:
        if (now < b->until) {
            return 0;
        }
        b->state = SLC_REDIS_HALF_OPEN;
        return 1;
    default:
        return 0;
    }
}

int
slc_cache_redis_breaker_success(slc_cache_redis_breaker_t *b)
{
    int was = b->state != SLC_REDIS_CLOSED;

    b->state = SLC_REDIS_CLOSED;
    b->failures = 0;
    b->backoff = b->backoff_min;
    b->closed += (uint64_t) was;
    return was;
}

static void
slc_cache_redis_breaker_open(slc_cache_redis_breaker_t *b, uint64_t now)
{
    b->state = SLC_REDIS_OPEN;
    b->until = now + b->backoff;
    b->backoff = slc_min(b->backoff * 2, b->backoff_max);
    b->failures = 0;
    b->opened++;
}

int
slc_cache_redis_breaker_failure(slc_cache_redis_breaker_t *b, uint64_t now)
{
    switch (b->state) {
    case SLC_REDIS_CLOSED:
        if (++b->failures < b->threshold) {
            return 0;
        }
        slc_cache_redis_breaker_open(b, now);
        return 1;
    case SLC_REDIS_HALF_OPEN:
        slc_cache_redis_breaker_open(b, now);
        return 1;
    default:
        return 0;       /* a request sent before it opened: no news */
    }
}
