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

/* The first bucket that may hold a value of floor(log2) k: the first
   bound >= 2^k (SLC_LATENCY_BUCKETS above them all). */
static const uint8_t slc_latency_lg[64] = {
    0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 13,
    14, 15, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
    16, 16, 16, 16, 16, 16,
};

unsigned
slc_latency_bucket(uint64_t us)
{
    /* from the first bound >= 2^floor(log2 us): at most one step on, as
       no two bounds lie within one power of two of each other but 2.5
       and 5 (below 2^k, 2^(k+1)) */
    unsigned b = slc_latency_lg[63 - __builtin_clzll(us | 1)];

    while (b < SLC_LATENCY_BUCKETS && slc_latency_le_us[b] < us) {
        b++;
    }
    return b;
}

void
slc_latency_observe(slc_latency_t *h, uint64_t us)
{
    unsigned b = slc_latency_bucket(us);

    __atomic_store_n(&h->count[b], h->count[b] + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&h->sum_us, h->sum_us + us, __ATOMIC_RELAXED);
}

void
slc_latency_observe_shared(slc_latency_t *h, unsigned b, uint64_t us)
{
    __atomic_add_fetch(&h->count[b], 1, __ATOMIC_RELAXED);
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
