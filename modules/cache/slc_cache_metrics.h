#ifndef SLC_CACHE_METRICS_H
#define SLC_CACHE_METRICS_H

/* slc_cache_metrics.c: the cache zones' metrics, for the status listener
   (docs/operations.md names each family). */

#include "slc_core.h"
#include "slc_metrics.h"
#include "slc_cache.h"
#include "slc_cache_store.h"

/* What one zone shows: read by the module's metrics hook (slc_cache.c). */
typedef struct {
    const char                 *name;
    size_t                      size;
    slc_cache_stats_t           st;         /* the store's */
    const slc_cache_counters_t *cnt;        /* the filter's, the tier's */
} slc_cache_zone_view_t;

/* The families, a sample per zone of z[0..n) in each (labelled zone). */
void slc_cache_metrics(const slc_cache_zone_view_t *z, unsigned n,
    slc_metrics_t *m);

#endif /* SLC_CACHE_METRICS_H */
