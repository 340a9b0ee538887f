#ifndef SLC_STATUS_JSON_H
#define SLC_STATUS_JSON_H

#include "slc_core.h"
#include "slc_cycle.h"
#include "slc_metrics.h"

/*
 * GET /status: {"version", "config": {"generation", "sha1",
 * "loaded_ms"}, "worker_processes", "metrics": {FAMILY: {"type",
 * "samples": [{"name", "labels": {..}, "value"}]}}, and the members the
 * modules add (slc_module_t.status_json)}.  The metrics are read back
 * from GET /metrics' text, so both say the same; a value that JSON has
 * no number for (+Inf, NaN) is a string.  Into m, within its bound.
 */
void slc_status_json(const slc_cycle_t *cycle, slc_metrics_t *m);

/* A metric's text s[0..n) (its escapes undone) as a JSON string. */
void slc_status_json_string(slc_metrics_t *m, const char *s, size_t n);

#endif /* SLC_STATUS_JSON_H */
