#ifndef SLC_CACHE_REDIS_BREAKER_H
#define SLC_CACHE_REDIS_BREAKER_H

/* slc_cache_redis_breaker.c: the circuit breaker (pure)
   (slc_cache_redis_service.h lists the tier's files). */

#include "slc_core.h"

typedef enum {
    SLC_REDIS_CLOSED = 0,       /* requests go */
    SLC_REDIS_OPEN,             /* skipped until `until` */
    SLC_REDIS_HALF_OPEN         /* one probe is out */
} slc_cache_redis_bstate_e;

typedef struct {
    slc_cache_redis_bstate_e state;
    unsigned                 failures;     /* in a row, while closed */
    unsigned                 threshold;    /* failures that open it */
    uint64_t                 backoff;      /* ms, the next open's */
    uint64_t                 backoff_min;
    uint64_t                 backoff_max;
    uint64_t                 until;        /* open until (ms) */
    uint64_t                 opened;       /* transitions counted */
    uint64_t                 closed;
} slc_cache_redis_breaker_t;

void slc_cache_redis_breaker_init(slc_cache_redis_breaker_t *b,
    unsigned threshold, uint64_t backoff_min, uint64_t backoff_max);
/*
 * Whether a request may go at `now`: always while closed; while open,
 * not before `until`, then once (it becomes the probe: half open); while
 * half open, no (the probe decides).
 */
int  slc_cache_redis_breaker_allow(slc_cache_redis_breaker_t *b,
    uint64_t now);
/* A request answered: closes it (a probe's success), resets the count
   and the back-off.  Returns 1 when this closed it. */
int  slc_cache_redis_breaker_success(slc_cache_redis_breaker_t *b);
/*
 * A request failed or timed out: `threshold` in a row open it for the
 * back-off; a failed probe opens it again for twice as long, up to the
 * cap.  Returns 1 when this opened it.
 */
int  slc_cache_redis_breaker_failure(slc_cache_redis_breaker_t *b,
    uint64_t now);

#endif /* SLC_CACHE_REDIS_BREAKER_H */
