#ifndef SLC_STATUS_TEXT_H
#define SLC_STATUS_TEXT_H

#include "slc_core.h"
#include "slc_metrics.h"

/*
 * The status for a person (GET /status/text, `sluice -s status`), from
 * the Prometheus text of GET /metrics (NUL-terminated): each family whose
 * series are not all 0 under its name (without "sluice_"), then a line
 * per series that is not 0, its labels as name=value (bytes a terminal
 * would act on shown as '?'); a histogram's series as their count, mean
 * and the bucket bounds under which half of them and 99 % of them fell.
 * Written into `out` (its bound holds; its error says when it did not).
 * Pure.
 */
void slc_status_text(const char *metrics, slc_metrics_t *out);

/* A sample line of that text, line[0..n): name{labels} value. */
typedef struct {
    const char *name;
    size_t      name_len;
    const char *labels;         /* inside the braces ("" without) */
    size_t      labels_len;
    const char *value;
    size_t      value_len;
} slc_status_sample_t;

/* Its parts into *s; SLC_ERROR when it has no value. */
int  slc_status_sample(const char *line, size_t n, slc_status_sample_t *s);

#endif /* SLC_STATUS_TEXT_H */
