#ifndef SLC_STATUS_METRICS_H
#define SLC_STATUS_METRICS_H

/* slc_status_metrics.c: what the status listener reports (slc_status.h). */

#include "slc_core.h"
#include "slc_cycle.h"
#include "slc_metrics.h"

/* The status process's own state (written by slc_status_serve.c). */
#define SLC_STATUS_CODES   { 200, 400, 404, 405, 414, 431, 500, 505 }
#define SLC_STATUS_NCODES  8

typedef struct {
    char        conf_sha1[2 * 20 + 1];  /* of the main file, hex */
    uint64_t    loaded_ms;              /* wall clock, at the start */
    uint64_t    responses[SLC_STATUS_NCODES];  /* by SLC_STATUS_CODES */
    uint64_t    refused;                /* connections past the limit */
} slc_status_state_t;

extern slc_status_state_t  slc_status_state;

/* The index of HTTP status `code` in SLC_STATUS_CODES (500's for one not
   there). */
unsigned slc_status_code_index(unsigned code);
/* The main configuration file's SHA-1 into slc_status_state (read whole,
   at most 16 MiB; "unreadable" if it cannot be). */
void     slc_status_conf_hash(const char *path);

/* The families of GET /metrics for `cycle` into m (its error set if they
   did not fit). */
void slc_status_metrics(const slc_cycle_t *cycle, slc_metrics_t *m);

#endif /* SLC_STATUS_METRICS_H */
