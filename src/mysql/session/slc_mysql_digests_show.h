#ifndef SLC_MYSQL_DIGESTS_SHOW_H
#define SLC_MYSQL_DIGESTS_SHOW_H

#include "slc_core.h"
#include "slc_admin.h"
#include "slc_metrics.h"

/*
 * Query digests shown (issue 23, section 3):
 *   show digests [N]   (read) the top N (20, at most 1000) of all workers
 *                      by count: count, errors, mean, longest and p99
 *                      bound in ms, user, database, the digest's text;
 *                      then the overflow row and how many fell out
 *   digests reset      (operator) every region empties itself
 * and in /metrics sluice_digests_evicted_total, and the top
 * `digest_metrics` digests (0 by default: a digest as a label value is
 * one series more per statement shape).
 */

int  slc_digests_show(slc_cycle_t *cycle, const slc_admin_req_t *req,
    slc_metrics_t *out);
int  slc_digests_reset_cmd(slc_cycle_t *cycle, const slc_admin_req_t *req,
    slc_metrics_t *out);
void slc_digests_metrics(const slc_cycle_t *cycle, slc_metrics_t *m);
/* GET /status's "digests": the top 20, the evictions, the overflow's
   count (null without digests). */
void slc_digests_json(const slc_cycle_t *cycle, slc_metrics_t *m);

#endif /* SLC_MYSQL_DIGESTS_SHOW_H */
