/*
 * A latency histogram with fixed buckets (slc_latency.h).
 */

#include "slc_core.h"
#include "slc_latency.h"

const uint64_t slc_latency_le_us[SLC_LATENCY_BUCKETS] = {
    100, 250, 500,
    1000, 2500, 5000,
    10000, 25000, 50000,
    100000, 250000, 500000,
    1000000, 2500000, 5000000,
    10000000,
};

const double slc_latency_le_s[SLC_LATENCY_BUCKETS] = {
    0.0001, 0.00025, 0.0005,
    0.001, 0.0025, 0.005,
    0.01, 0.025, 0.05,
    0.1, 0.25, 0.5,
    1, 2.5, 5,
    10,
};

unsigned
slc_latency_bucket(uint64_t us)
{
    unsigned lo = 0, hi = SLC_LATENCY_BUCKETS;

    while (lo < hi) {               /* the first bound >= us */
        unsigned mid = (lo + hi) / 2;

        if (slc_latency_le_us[mid] < us) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

void
slc_latency_observe(slc_latency_t *h, uint64_t us)
{
    unsigned b = slc_latency_bucket(us);

    __atomic_store_n(&h->count[b], h->count[b] + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&h->sum_us, h->sum_us + us, __ATOMIC_RELAXED);
}

void
slc_latency_observe_shared(slc_latency_t *h, uint64_t us)
{
    __atomic_add_fetch(&h->count[slc_latency_bucket(us)], 1,
        __ATOMIC_RELAXED);
    __atomic_add_fetch(&h->sum_us, us, __ATOMIC_RELAXED);
}

void
slc_latency_add_to(const slc_latency_t *h, slc_latency_t *sum)
{
    for (unsigned i = 0; i <= SLC_LATENCY_BUCKETS; i++) {
        sum->count[i] += __atomic_load_n(&h->count[i], __ATOMIC_RELAXED);
    }
    sum->sum_us += __atomic_load_n(&h->sum_us, __ATOMIC_RELAXED);
}
