#ifndef SLC_MYSQL_UPSTREAM_METRICS_H
#define SLC_MYSQL_UPSTREAM_METRICS_H

#include "slc_core.h"
#include "slc_cycle.h"
#include "slc_metrics.h"

/*
 * The mysql module's `metrics` hook (slc_module.h): every server of every
 * upstream, labelled upstream="NAME", server="ADDRESS" as configured:
 * its state (up, down, unknown) and role (primary, replica, none) as 0/1
 * series, its replication lag and last check (when the monitor knows
 * them), its backend connections open, opened, failed, and its bytes
 * (docs/operations.md names each family).
 */
void slc_upstream_metrics(const slc_cycle_t *cycle, slc_metrics_t *m);

#endif /* SLC_MYSQL_UPSTREAM_METRICS_H */
