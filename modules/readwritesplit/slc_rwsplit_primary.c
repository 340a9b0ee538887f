/*
 * readwritesplit without its primary (master_failure_mode fail_on_write,
 * the default).  When the session's own backend, on the primary, is lost
 * (the server died, restarted, killed the connection), the core asks the
 * router for another backend to take its place (own_lost): a replica
 * backend of the session's (an idle one if it has) becomes its own, so
 * reads go on and its status flags are the session's.  Meanwhile
 * whatever must run on the primary (writes, transactions, locking reads,
 * prepared statements) gets a clear ERR, unless a new primary backend is
 * on its way: every command tries to open one, at most once a second, and
 * a command for the primary waits for it.  Once it is logged in and has
 * been given the session history, the next command makes it the
 * session's own again and the replica goes back to being a replica.  A
 * session with no replica backend when its primary goes ends, as with
 * fail_instantly.
 *
 * A new session that finds no primary (a switchover: the old one turned
 * read_only, the new one not promoted yet) starts that way too, on a
 * replica; one that finds neither (the replica being promoted has
 * stopped replicating) waits for the monitor to see one, up to
 * connect_timeout: a read is answered while the topology changes.
 */

#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_cmd.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_monitor.h"
#include "slc_mysql_router.h"
#include "slc_mysql_session_backend.h"
#include "slc_mysql_upstream.h"
#include "slc_rwsplit.h"

#define SLC_RWSPLIT_PRIMARY_RETRY  1000     /* ms between tries to reopen */
#define SLC_RWSPLIT_OWN_POLL       20       /* ms between looks at the roles
                                           while no server takes a new
                                           session */

static void slc_rwsplit_primary_ready(slc_backend_t *b, const uint8_t *ok,
    size_t len);
static void slc_rwsplit_primary_drop(slc_backend_t *b, const char *why);
static void slc_rwsplit_primary_fail(slc_backend_t *b,
    const slc_backend_fail_t *f);

static const slc_backend_ops_t slc_rwsplit_primary_ops = {
    .ready = slc_rwsplit_primary_ready,
    .fail = slc_rwsplit_primary_fail,
};

/* Without a primary from the start: reads go on, writes wait for one
   or get ERR 1429 (slc_rwsplit_primary_gone), as after own_lost. */
static void
slc_rwsplit_start_lost(slc_rwsplit_ctx_t *rc)
{
    rc->primary_lost = 1;
    rc->primary_next_try = 0;
    rc->causal.track = SLC_RWSPLIT_TRACK_OFF;   /* nothing to ask a replica */
}

static void
slc_rwsplit_own_retry(slc_timer_t *t)
{
    slc_session_t *s = t->data;

    slc_rwsplit_open_own(s, s->router_data);
}

/* Look again soon, if the roles may change (a monitor follows them) and
   connect_timeout has not passed since the first look. */
static int
slc_rwsplit_own_wait(slc_session_t *s, slc_rwsplit_ctx_t *rc)
{
    slc_upstream_t *up = s->srv->upstream;

    if (slc_monitor_conf(up)->user == NULL) {
        return SLC_ERROR;
    }
    if (rc->own_until == 0) {
        rc->own_until = slc_loop->now
                        + (uint64_t) s->srv->timeouts->connect_timeout;
        slc_session_log(s, SLC_LOG_INFO, "readwritesplit: no server of "
            "upstream \"%s\" can take the session now: waiting for the "
            "monitor to see one", up->name.data);
    } else if (slc_loop->now >= rc->own_until) {
        return SLC_ERROR;
    }
    rc->own_wait.handler = slc_rwsplit_own_retry;
    rc->own_wait.data = s;
    slc_timer_add(slc_loop, &rc->own_wait, SLC_RWSPLIT_OWN_POLL);
    return SLC_OK;
}

void
slc_rwsplit_open_own(slc_session_t *s, slc_rwsplit_ctx_t *rc)
{
    slc_upstream_t        *up = s->srv->upstream;
    slc_upstream_server_t *us;
    int                    full, lost = 0;

    rc->primary_lost = 0;
    us = slc_upstream_pick(up, SLC_ROLE_PRIMARY, NULL, &full);
    if (us == NULL && !full
        && rc->conf->master_failure_mode == SLC_RWSPLIT_FAIL_ON_WRITE)
    {
        us = slc_upstream_pick(up, SLC_ROLE_REPLICA, NULL, &full);
        lost = us != NULL;
    }
    if (us != NULL) {
        if (lost) {
            slc_rwsplit_start_lost(rc);
            slc_session_log(s, SLC_LOG_INFO, "readwritesplit: no primary "
                "server of upstream \"%s\": the session starts on replica "
                "%s", up->name.data, us->name);
        }
        (void) slc_session_backend_open(s, us);
        return;
    }
    if (!full && slc_rwsplit_own_wait(s, rc) == SLC_OK) {
        return;
    }
    slc_session_fail(s, full ? SLC_ER_CON_COUNT_ERROR
                             : SLC_ER_CONNECT_TO_BACKEND,
        full ? "08004" : "HY000", "No primary server of upstream \"%s\" "
        "is available%s", up->name.data, full ? " (max_connections)" : "");
}

void
slc_rwsplit_own_stop(slc_rwsplit_ctx_t *rc)
{
    slc_timer_del(slc_loop, &rc->own_wait);
}

slc_backend_t *
slc_rwsplit_own_lost(slc_session_t *s, const char *why)
{
    slc_rwsplit_ctx_t *rc = s->router_data;
    slc_backend_t *b;
    int            k = -1;

    (void) why;
    if (rc == NULL
        || rc->conf->master_failure_mode != SLC_RWSPLIT_FAIL_ON_WRITE
        || rc->primary_lost)
    {
        return NULL;
    }
    /* an idle one if there is, else one busy with a read (the read goes
       on: it is the command in flight, wherever its backend stands) */
    for (unsigned i = 0; i < rc->nreplicas; i++) {
        slc_backend_t *r = rc->replica[i];

        if (k < 0 ? r->state == SLC_BS_READY : slc_rwsplit_idle(r))
        {
            k = (int) i;
        }
    }
    if (k < 0) {
        return NULL;
    }
    b = rc->replica[k];
    rc->replica[k] = rc->replica[--rc->nreplicas];
    if (rc->last == s->backend) {
        rc->last = NULL;
    }
    rc->retry_on = NULL;
    slc_rwsplit_state_new_primary(rc);  /* its temporary tables are gone */
    slc_rwsplit_ps_forget(rc);      /* and its prepared statements */
    /* the GTIDs came from that connection's session tracking, and the
       next primary backend will not have it asked for: reads after a
       write go to the primary from now on (never stale) */
    rc->causal.track = SLC_RWSPLIT_TRACK_OFF;
    rc->primary_lost = 1;
    rc->primary_next_try = 0;
    return b;
}

static void
slc_rwsplit_primary_ready(slc_backend_t *b, const uint8_t *ok, size_t len)
{
    (void) ok;
    (void) len;
    if (slc_rwsplit_replay(b->session->router_data, b) != SLC_OK) {
        slc_rwsplit_primary_drop(b, "cannot replay the session's history");
    }
}

static void
slc_rwsplit_primary_fail(slc_backend_t *b, const slc_backend_fail_t *f)
{
    slc_rwsplit_primary_drop(b, f->why);
}

static void
slc_rwsplit_primary_drop(slc_backend_t *b, const char *why)
{
    slc_session_t *s = b->session;
    slc_rwsplit_ctx_t *rc = s->router_data;

    slc_session_log(s, SLC_LOG_INFO, "readwritesplit: primary %s not "
        "reopened: %s", b->server->name, why);
    if (rc->primary == b) {
        rc->primary = NULL;
    }
    if (rc->last == b) {
        rc->last = NULL;
    }
    rc->primary_next_try = slc_loop->now + SLC_RWSPLIT_PRIMARY_RETRY;
    slc_backend_close(b);
}

/* The history replayed on the new primary: all of it, or the session's
   state cannot be had there and the session ends. */
void
slc_rwsplit_primary_done(slc_backend_t *b, const slc_mysql_reply_t *r)
{
    slc_rwsplit_ctx_t *rc = b->session->router_data;

    if (r->errs > rc->errs_seen) {
        slc_session_close(b->session, SLC_LOG_WARN, "readwritesplit: the "
            "reopened primary refused the session's history");
        return;
    }
    rc->errs_seen = r->errs;
}

/* Start opening a new primary backend, if it is time to try. */
static void
slc_rwsplit_primary_reopen(slc_session_t *s, slc_rwsplit_ctx_t *rc)
{
    if (rc->primary != NULL || slc_loop->now < rc->primary_next_try) {
        return;
    }
    rc->primary_next_try = slc_loop->now + SLC_RWSPLIT_PRIMARY_RETRY;
    rc->primary = slc_rwsplit_open(s, rc, SLC_ROLE_PRIMARY, NULL,
                               &slc_rwsplit_primary_ops);
}

/*
 * Between commands, while the primary is lost: a new primary backend that
 * is ready and idle becomes the session's own again (the replica that
 * stood in goes back among the replicas, or is closed); else try to open
 * one.
 */
void
slc_rwsplit_primary_check(slc_session_t *s, slc_rwsplit_ctx_t *rc)
{
    slc_backend_t *p = rc->primary, *old;

    if (p == NULL || !slc_rwsplit_idle(p)
        || slc_mysql_track_in_trans(&s->backend->track))
    {
        slc_rwsplit_primary_reopen(s, rc);
        return;
    }
    old = slc_cmd_set_own(s, p);
    rc->primary = NULL;
    rc->primary_lost = 0;
    slc_session_log(s, SLC_LOG_INFO, "readwritesplit: back on primary %s",
        p->server->name);
    if (rc->nreplicas < (unsigned) rc->conf->max_replica_connections
        && rc->nreplicas < SLC_RWSPLIT_MAX_REPLICAS)
    {
        slc_rwsplit_adopt_replica(rc, old);
    } else {
        if (rc->last == old) {
            rc->last = NULL;
        }
        slc_backend_close(old);
    }
}

/*
 * A command for the primary while it is lost: the new primary backend if
 * one is on its way (the command waits for it), else NULL with ERR 1429,
 * whose message says the command did not run.
 */
slc_backend_t *
slc_rwsplit_primary_gone(slc_session_t *s, slc_rwsplit_ctx_t *rc)
{
    char msg[256];

    if (rc->primary != NULL) {
        return rc->primary;
    }
    snprintf(msg, sizeof(msg), "The primary server of upstream \"%s\" is "
        "not available: the statement was not run (reads go on; "
        "master_failure_mode fail_on_write)", s->srv->upstream->name.data);
    slc_session_log(s, SLC_LOG_INFO, "readwritesplit: answered error %u: "
        "primary not available", SLC_ER_CONNECT_TO_BACKEND);
    if (slc_reply_err(s, SLC_ER_CONNECT_TO_BACKEND, "HY000", msg)
        != SLC_OK)
    {
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
    }
    return NULL;
}

/*
 * A prepared statement's command while the primary is lost: the
 * statements died with it.  CLOSE and SEND_LONG_DATA have no answer and
 * are dropped; the others get the ERR of slc_rwsplit_primary_gone (or wait
 * for the new primary, which will not know the statement either and says
 * so).
 */
slc_backend_t *
slc_rwsplit_ps_without_primary(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const slc_cmd_t *c)
{
    if (c->command == SLC_COM_STMT_CLOSE
        || c->command == SLC_COM_STMT_SEND_LONG_DATA)
    {
        return NULL;
    }
    return slc_rwsplit_primary_gone(s, rc);
}
