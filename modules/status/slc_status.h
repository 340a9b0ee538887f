#ifndef SLC_STATUS_H
#define SLC_STATUS_H

/*
 * The status listener (issue 23, section 1; docs/operations.md):
 * `status_listen ADDRESS;` in the main context starts a process of the
 * role "status" beside the workers, which answers HTTP on that address:
 * GET /metrics in Prometheus' text format (slc_status_metrics.c), GET
 * /status as JSON, anything else 404.  It reads what it reports from the
 * configuration and shared memory, never by asking a worker, so a scrape
 * costs the traffic nothing.  Hostile input is bounded: a request's head
 * (8 KiB, slc_status_http.c), its time (`status_timeout` from its first
 * byte, and between requests), requests per connection (100), and
 * connections (SLC_STATUS_CONNS, past which one is closed at accept).
 */

#include "slc_core.h"
#include "slc_module.h"

extern slc_module_t  slc_status_module;

#endif /* SLC_STATUS_H */
