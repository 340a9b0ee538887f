#ifndef SLC_METRICS_H
#define SLC_METRICS_H

#include "slc_core.h"

/*
 * Metrics in Prometheus' text exposition format (version 0.0.4), written
 * into a buffer that grows up to a cap (issue 23: the status listener's
 * GET /metrics).  A family is opened once (its # HELP and # TYPE lines),
 * then its samples follow; a histogram's samples are written whole from
 * its buckets (slc_metrics_histogram).
 *
 * What it guarantees, so that a scrape is never malformed:
 * - names (families, suffixes, label names) are checked against
 *   [a-zA-Z_:][a-zA-Z0-9_:]* (label names without ':', and not starting
 *   "__"); a bad one, a sample outside a family, a family opened twice,
 *   or a suffix that does not fit its type is a programming error: the
 *   writer fails (m->error) and the output must not be served;
 * - label values and HELP texts are escaped (backslash, double quote in
 *   values, newline): anything a client sent may be one;
 * - values are integers printed exactly, or doubles as "%.17g" with
 *   +Inf, -Inf and NaN spelled as Prometheus reads them;
 * - memory is bounded: past `max` bytes the writer stops (m->error =
 *   SLC_METRICS_FULL) instead of growing.
 * Pure: no I/O, no clock; the caller owns the buffer (slc_metrics_free).
 */

#define SLC_METRICS_OK         0
#define SLC_METRICS_NOMEM      1    /* an allocation failed */
#define SLC_METRICS_FULL       2    /* past max */
#define SLC_METRICS_MISUSE     3    /* a bad name, a sample out of place */

typedef enum {
    SLC_METRIC_COUNTER = 0,
    SLC_METRIC_GAUGE,
    SLC_METRIC_HISTOGRAM
} slc_metric_type_e;

typedef struct slc_metrics_s {
    char               *buf;        /* malloc'ed, NUL-terminated */
    size_t              len;
    size_t              cap;
    size_t              max;        /* the most it may hold */
    int                 error;      /* SLC_METRICS_*: the first */
    char                family[128];  /* the open family, "" none */
    slc_metric_type_e   type;
    uint64_t            families;   /* opened, for the caller's bound */
} slc_metrics_t;

/* An empty writer that holds at most max bytes. */
void slc_metrics_init(slc_metrics_t *m, size_t max);
void slc_metrics_free(slc_metrics_t *m);

/* A family: its HELP (escaped) and TYPE lines.  A counter's name must end
   in "_total", a gauge's and a histogram's must not. */
void slc_metrics_family(slc_metrics_t *m, const char *name,
    slc_metric_type_e type, const char *help);

/*
 * A sample of the open counter or gauge: labels[] holds name, value
 * pairs, NULL-terminated (NULL: none).  Counters and gauges only: a
 * histogram's samples come from slc_metrics_histogram.
 */
void slc_metrics_u64(slc_metrics_t *m, const char *const *labels,
    uint64_t v);
void slc_metrics_double(slc_metrics_t *m, const char *const *labels,
    double v);

/*
 * The open histogram's samples for one label set: a _bucket per bound
 * le[0..n) (ascending, in base units) with the cumulative count up to
 * it, the +Inf bucket (every observation), _sum and _count.  count[i] is
 * the observations in bucket i alone (le[i-1], le[i]]; count[n] those
 * above le[n-1].
 */
void slc_metrics_histogram(slc_metrics_t *m, const char *const *labels,
    const double *le, const uint64_t *count, unsigned n, double sum);

/* s as a JSON string (quotes, backslashes and control bytes escaped),
   for a JSON document the same bound holds. */
void slc_metrics_json(slc_metrics_t *m, const char *s);
void slc_metrics_json_n(slc_metrics_t *m, const char *s, size_t n);
/* n bytes of text outside the format, as they are. */
void slc_metrics_append(slc_metrics_t *m, const char *s, size_t n);
/* Text outside the format (another document the same bound holds: the
   status listener's JSON and text pages): at most 1023 bytes a call,
   written as it is. */
void slc_metrics_printf(slc_metrics_t *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Whether name is a valid metric name (label: a valid label name). */
int  slc_metrics_name_ok(const char *name, int label);

#endif /* SLC_METRICS_H */
