/*
 * readwritesplit: a statement in flight on a replica that stops answering
 * (docs/architecture.md, "A frozen replica").
 *
 * While a command of the client's runs on a replica backend, the session
 * looks at it every second: once the monitor has found that replica down
 * (a frozen server answers no check), or replica_read_timeout has passed
 * since it was sent, the backend fails as if its connection had broken
 * (slc_cmd_backend_fail): an autocommit read nothing of whose answer went
 * out runs again on another replica or the primary (retry_failed_reads),
 * anything else gets ERR 1927 naming the replica, and a response cut in
 * the middle ends the session.  A replica that is only slow (busy, a long
 * report) answers the monitor and is waited for, unless the timeout says
 * otherwise.  One timer per session, armed only while it has a statement
 * on a replica: nothing per statement but two stores.
 */

#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_cmd.h"
#include "slc_mysql_monitor.h"
#include "slc_rwsplit.h"

#define SLC_RWSPLIT_READ_CHECK  1000    /* ms */

/* How often it looks: every second, or at the timeout if shorter. */
static uint64_t
slc_rwsplit_read_period(const slc_rwsplit_ctx_t *rc)
{
    return rc->conf->read_timeout > 0
           && rc->conf->read_timeout < SLC_RWSPLIT_READ_CHECK
           ? (uint64_t) rc->conf->read_timeout : SLC_RWSPLIT_READ_CHECK;
}

static void
slc_rwsplit_read_check(slc_timer_t *t)
{
    slc_rwsplit_ctx_t *rc = t->data;
    slc_backend_t *b = rc->read_on;
    uint64_t       waited;
    const char    *why;

    if (b == NULL || slc_mysql_track_idle(&b->track)) {
        rc->read_on = NULL;             /* answered: the timer rests */
        return;
    }
    waited = slc_loop->now - rc->read_since;
    why = slc_monitor_seen_down(b->server) ? "the monitor finds it down"
          : rc->conf->read_timeout > 0
            && waited >= (uint64_t) rc->conf->read_timeout
          ? "replica_read_timeout" : NULL;
    if (why == NULL) {
        slc_timer_add(slc_loop, t, slc_rwsplit_read_period(rc));
        return;
    }
    rc->read_on = NULL;
    slc_session_log(b->session, SLC_LOG_WARN, "readwritesplit: replica %s "
        "has not answered for %llu ms and %s: given up", b->server->name,
        (unsigned long long) waited, why);
    slc_cmd_backend_fail(b, why);
}

void
slc_rwsplit_read_sent(slc_rwsplit_ctx_t *rc, slc_backend_t *b)
{
    rc->read_on = b;
    rc->read_since = slc_loop->now;
    if (!rc->read_timer.armed) {
        rc->read_timer.handler = slc_rwsplit_read_check;
        rc->read_timer.data = rc;
        slc_timer_add(slc_loop, &rc->read_timer, slc_rwsplit_read_period(rc));
    }
}

void
slc_rwsplit_read_stop(slc_rwsplit_ctx_t *rc)
{
    rc->read_on = NULL;
    slc_timer_del(slc_loop, &rc->read_timer);
}
