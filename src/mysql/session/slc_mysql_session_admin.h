#ifndef SLC_MYSQL_SESSION_ADMIN_H
#define SLC_MYSQL_SESSION_ADMIN_H

#include "slc_core.h"
#include "slc_admin.h"
#include "slc_mysql_conf.h"

/*
 * Sessions on the admin socket (issue 23, section 2):
 *   show sessions [N]    the first N (100; at most 10000) of the session
 *                        registry: every worker's, from shared memory
 *   kill session ID      the id the client saw as its connection id: the
 *                        registry marks it, and its worker closes it
 * A worker looks at the admin generation (slc_mysql_upstream_admin.h)
 * once a second (slc_session_admin_start): a move means a kill mark or a
 * server's new state; it closes the marked sessions at once, and those
 * whose own backend's server is in maintenance as each comes to rest.
 */

int  slc_session_admin_show(slc_cycle_t *cycle, const slc_admin_req_t *req,
    slc_metrics_t *out);
int  slc_session_admin_kill(slc_cycle_t *cycle, const slc_admin_req_t *req,
    slc_metrics_t *out);
/* A worker's start: its look once a second. */
void slc_session_admin_start(slc_cycle_t *cycle);

#endif /* SLC_MYSQL_SESSION_ADMIN_H */
