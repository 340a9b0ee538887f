/*
 * KILL through the proxy.  The thread id a client saw in its greeting is
 * the proxy's session id (slc_mysql_registry.h): the client's backend
 * connection may not exist yet when the greeting is sent (auth local), and
 * with several servers the backends' own ids are not unique.  So a
 * `KILL [HARD|SOFT] [QUERY|CONNECTION] <id>` or COM_PROCESS_KILL naming a
 * proxy id is looked up in the registry, whichever worker holds that
 * session, and rewritten to name the backend's thread; it then runs on the
 * requesting session's own backend connection, as the requesting user, so
 * the server applies its own rules (a user kills only its own sessions
 * unless it has the privilege).
 *
 * An id below the proxy's range is a server's own (a client may have
 * learned it from CONNECTION_ID()): it goes on unchanged.  A target whose
 * backend is on another server than the requester's is reached through a
 * side connection to that server, logged in as the requesting user (auth
 * local knows its SHA1(password)); it takes a max_connections slot like
 * any other and is closed as soon as the server answered.  Under auth
 * passthrough the proxy cannot log in as the client: the client is told
 * so (ERR 1095).
 */

#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_proxycmd.h"
#include "slc_mysql_registry.h"
#include "slc_mysql_session_backend.h"
#include "slc_mysql_upstream.h"

static int
slc_kill_same_server(const slc_upstream_server_t *a,
    const slc_upstream_server_t *b)
{
    return a->addrlen == b->addrlen
           && memcmp(&a->addr, &b->addr, a->addrlen) == 0;
}

/* The statement as the backend must see it; never longer than the
   client's (see slc_proxycmd_replace). */
static int
slc_kill_rewrite(slc_session_t *s, const uint8_t *pl,
    const slc_mysql_kill_t *k, uint32_t thread_id)
{
    uint8_t  q[64];
    int      n;

    if (pl[0] == SLC_COM_PROCESS_KILL) {
        q[0] = SLC_COM_PROCESS_KILL;
        for (int i = 0; i < 4; i++) {
            q[1 + i] = (uint8_t) (thread_id >> (8 * i));
        }
        n = 5;
    } else {
        q[0] = SLC_COM_QUERY;
        n = snprintf((char *) q + 1, sizeof(q) - 1, "KILL %s%s%u", k->mode,
            k->query ? "QUERY " : "", thread_id);
        n += 1;
    }
    if (slc_proxycmd_replace(s, q, (size_t) n) != SLC_OK) {
        return slc_proxycmd_answer_err(s, SLC_ER_NO_SUCH_THREAD, "HY000",
            "Unknown thread id: %llu", (unsigned long long) k->id);
    }
    return SLC_OK;
}

static int
slc_kill_parse(const uint8_t *pl, uint32_t len, slc_mysql_kill_t *k)
{
    if (pl[0] == SLC_COM_PROCESS_KILL) {
        if (len < 5) {
            return SLC_ERROR;
        }
        memset(k, 0, sizeof(*k));
        k->mode = "";
        k->id = (uint32_t) slc_mysql_le_get(pl + 1, 4);
        return SLC_OK;
    }
    return slc_mysql_kill_parse(pl + 1, len - 1, k);
}

/* The side connection of a KILL across servers. */
typedef struct {
    slc_backend_t  *b;
    uint8_t         q[64];          /* the COM_QUERY payload */
    size_t          len;
} slc_kill_aux_t;

static void
slc_kill_aux_done(slc_session_t *s)
{
    slc_kill_aux_t *k = s->kill;

    s->kill = NULL;
    if (k != NULL) {
        slc_backend_close(k->b);
        free(k);
    }
    slc_proxycmd_resume(s);
}

static void
slc_kill_aux_fail(slc_backend_t *b, const char *why)
{
    slc_session_t *s = b->session;
    uint8_t        pkt[300];
    char           msg[256];
    size_t         n;

    snprintf(msg, sizeof(msg), "KILL through backend '%s' failed (%s)",
        b->server->name, why);
    /* a failure to log in was logged at info (slc_kill_aux_lost): what
       the client hears is logged here */
    slc_session_log(s, SLC_LOG_WARN, "answered error %u: %s",
        SLC_ER_CONNECT_TO_BACKEND, msg);
    n = slc_mysql_err_build(pkt, sizeof(pkt), SLC_ER_CONNECT_TO_BACKEND,
        "HY000", msg);
    if (slc_session_send(s, pkt, n) != SLC_OK) {
        slc_session_close(s, SLC_LOG_INFO, "client write failed");
        return;
    }
    slc_kill_aux_done(s);
}

/* The server's OK or ERR is the client's, with the session's own status
   flags in an OK (the side connection's say nothing about this one). */
static int
slc_kill_aux_packet(void *data, uint8_t *p, uint32_t len, uint8_t seq)
{
    slc_backend_t *b = data;
    slc_session_t *s = b->session;

    (void) seq;
    if (len == 0 || (p[0] != SLC_MYSQL_OK && p[0] != SLC_MYSQL_ERR)) {
        slc_kill_aux_fail(b, "unexpected answer");
        return SLC_ERROR;
    }
    if (p[0] == SLC_MYSQL_OK) {
        slc_mysql_ok_set_status(p, len, s->backend->track.status);
    }
    if (slc_session_send(s, p, len) != SLC_OK) {
        slc_session_close(s, SLC_LOG_INFO, "client write failed");
        return SLC_ERROR;
    }
    return SLC_DONE;
}

static void
slc_kill_aux_read(slc_conn_t *c)
{
    slc_backend_t *b = c->data;
    const char    *why;
    int            rc;

    rc = slc_packet_loop(c, &b->in, slc_kill_aux_packet, b, &why);
    if (rc == SLC_DONE) {
        slc_kill_aux_done(b->session);
    } else if (rc == SLC_ERROR && why != NULL) {
        slc_kill_aux_fail(b, why);
    }
}

static void
slc_kill_aux_ready(slc_backend_t *b, const uint8_t *ok, size_t len)
{
    slc_kill_aux_t *k = b->data;

    (void) ok;
    (void) len;
    b->conn.on_read = slc_kill_aux_read;
    b->seq = 0;
    slc_timer_add(slc_loop, &b->timer,
        (uint64_t) b->session->srv->timeouts->connect_timeout);
    if (slc_backend_send(b, k->q, k->len) != SLC_OK) {
        slc_kill_aux_fail(b, "write failed");
    }
}

/* The side connection could not log in: logged at info (what the client
   hears is logged as it is answered). */
static void
slc_kill_aux_lost(slc_backend_t *b, const slc_backend_fail_t *f)
{
    slc_session_backend_log(b->session, b->server, f);
    slc_kill_aux_fail(b, f->why);
}

static const slc_backend_ops_t slc_kill_aux_ops = {
    .identity = slc_session_backend_identity,
    .ready = slc_kill_aux_ready,
    .fail = slc_kill_aux_lost,
};

static int
slc_kill_elsewhere(slc_session_t *s, slc_upstream_server_t *target,
    const slc_mysql_kill_t *k, uint32_t thread_id)
{
    slc_kill_aux_t     *a;
    slc_backend_fail_t  f;
    int                 full;

    if (s->srv->auth != SLC_AUTH_LOCAL) {
        return slc_proxycmd_answer_err(s, SLC_ER_KILL_DENIED_ERROR, "HY000",
            "Thread %llu runs on backend %s and this session on %s: with "
            "auth passthrough send the KILL through a session on that "
            "server", (unsigned long long) k->id, target->name,
            s->backend->server->name);
    }
    if ((a = calloc(1, sizeof(*a))) == NULL) {
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
        return SLC_ERROR;
    }
    a->q[0] = SLC_COM_QUERY;
    a->len = 1 + (size_t) snprintf((char *) a->q + 1, sizeof(a->q) - 1,
        "KILL %s%s%u", k->mode, k->query ? "QUERY " : "", thread_id);
    full = !slc_upstream_acquire(target);
    a->b = full ? NULL
                : slc_backend_open(s, target, &slc_kill_aux_ops, a,
                      (uint64_t) s->srv->timeouts->connect_timeout, &f);
    if (a->b == NULL) {
        if (!full) {
            slc_session_backend_log(s, target, &f);
        }
        free(a);
        return full
            ? slc_proxycmd_answer_err(s, SLC_ER_CON_COUNT_ERROR, "08004",
                  "Too many connections (backend %s is at max_connections)",
                  target->name)
            : slc_proxycmd_answer_err(s, SLC_ER_CONNECT_TO_BACKEND, "HY000",
                  "Can't connect to backend server '%s'", target->name);
    }
    slc_session_log(s, SLC_LOG_INFO, "KILL %s%s%llu: thread %u of %s, "
        "through a side connection", k->mode, k->query ? "QUERY " : "",
        (unsigned long long) k->id, thread_id, target->name);
    s->kill = a;
    slc_proxycmd_drop(s);
    s->paused = 1;
    s->seq = 1;
    return SLC_AGAIN;
}

/* Session closing: a side connection still open goes with it. */
void
slc_kill_cancel(slc_session_t *s)
{
    slc_kill_aux_t *k = s->kill;

    if (k != NULL) {
        s->kill = NULL;
        slc_backend_close(k->b);
        free(k);
    }
}

int
slc_kill_run(slc_session_t *s, const uint8_t *pl, uint32_t len)
{
    slc_mysql_conf_t      *mc = slc_mysql_conf(s->cycle);
    slc_mysql_kill_t       k;
    slc_registry_entry_t   e;
    slc_upstream_server_t *target;

    if (slc_kill_parse(pl, len, &k) != SLC_OK
        || k.id < SLC_REGISTRY_ID_BASE || k.id > UINT32_MAX)
    {
        return slc_proxycmd_pass(s);
    }
    if (slc_registry_get(mc->registry_zone->addr, (uint32_t) k.id, &e)
            != SLC_OK
        || e.thread_id == 0
        || (target = slc_upstream_stats_server(mc, e.server - 1)) == NULL)
    {
        return slc_proxycmd_answer_err(s, SLC_ER_NO_SUCH_THREAD, "HY000",
            "Unknown thread id: %llu", (unsigned long long) k.id);
    }
    if (k.query && e.run_thread_id != 0) {
        /* its statement runs on a router's other backend (a replica):
           that one is interrupted; a KILL CONNECTION still goes to the
           session's own, which takes the others with it */
        slc_upstream_server_t *run = slc_upstream_stats_server(mc,
                                                            e.run_server - 1);
        if (run != NULL) {
            target = run;
            e.thread_id = e.run_thread_id;
        }
    }
    if (!slc_kill_same_server(target, s->backend->server)) {
        return slc_kill_elsewhere(s, target, &k, e.thread_id);
    }
    slc_session_log(s, SLC_LOG_INFO, "KILL %s%s%llu: thread %u of %s",
        k.mode, k.query ? "QUERY " : "", (unsigned long long) k.id,
        e.thread_id, target->name);
    return slc_kill_rewrite(s, pl, &k, e.thread_id);
}
