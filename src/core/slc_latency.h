#ifndef SLC_LATENCY_H
#define SLC_LATENCY_H

#include "slc_core.h"

/*
 * A latency histogram with fixed buckets, 100 µs to 10 s (issue 23: the
 * status listener's query and backend response times, as Prometheus
 * histograms).  One writer (a worker, into its own copy in shared
 * memory: relaxed atomic stores, no lock), any number of readers that
 * add the copies up (slc_latency_add_to); the counts are cumulative from
 * the start, as Prometheus wants them.  An observation is one increment
 * of one bucket and two additions: no division, no loop past the bucket
 * found (a table by the value's power of two, then one comparison or two).
 */

#define SLC_LATENCY_BUCKETS  16         /* bounds; one more above the last */

typedef struct {
    uint64_t    count[SLC_LATENCY_BUCKETS + 1];   /* per bucket, not
                                                     cumulative */
    uint64_t    sum_us;
} slc_latency_t;

/* The buckets' upper bounds in µs (100 µs ... 10 s, 1-2.5-5 steps), and
   in seconds (Prometheus' base unit). */
extern const uint64_t  slc_latency_le_us[SLC_LATENCY_BUCKETS];
extern const double    slc_latency_le_s[SLC_LATENCY_BUCKETS];

/* The bucket of an observation of us µs: the first whose bound is >= us,
   or SLC_LATENCY_BUCKETS above them all. */
unsigned slc_latency_bucket(uint64_t us);
/* One observation (the only writer of h). */
void     slc_latency_observe(slc_latency_t *h, uint64_t us);
/* The same for a histogram that several processes write (atomic adds),
   its bucket b found already (slc_latency_bucket(us)). */
void     slc_latency_observe_shared(slc_latency_t *h, unsigned b,
    uint64_t us);
/* h's counts added to *sum (a reader; h may be written meanwhile: each
   count is read whole, the set is not a snapshot). */
void     slc_latency_add_to(const slc_latency_t *h, slc_latency_t *sum);

#endif /* SLC_LATENCY_H */
