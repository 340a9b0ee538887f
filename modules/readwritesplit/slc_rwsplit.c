/*
 * readwritesplit, first step (issue 9; docs/architecture.md, "The
 * readwritesplit router"): each statement to the primary or a replica.
 *
 * A session has its own backend on the primary, opened at login, and at
 * most one replica backend, opened on the first read that may go there.
 * Statements are placed by the classifier (slc_mysql_classify.h) and by
 * the transaction state the primary's status flags report, never by the
 * text alone: inside a transaction, or with autocommit off, everything
 * goes to the primary, except a START TRANSACTION READ ONLY, which runs on
 * the replica until it ends.  Session state (SET, USE, PREPARE) goes to
 * every open backend, the primary's reply to the client, and is kept
 * (the last session_history_max of it) to be replayed on a replica opened
 * later.  A replica that refuses any of it is dropped; reads then go to
 * the primary.
 *
 * auth local only (the core refuses passthrough: the router does not set
 * `passthrough`), since a replica backend logs in as the client with the
 * SHA1(password) auth local recovered.
 *
 * Read your own writes: slc_rwsplit_causal.c (causal_reads).
 *
 * Not yet (the issue lists them): prepared statements on replicas (every COM_STMT_* goes to the primary),
 * retrying a read that failed on a replica, KILL of a statement running
 * on the replica, accounts from the servers.
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_classify.h"
#include "slc_mysql_cmd.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_router.h"
#include "slc_mysql_upstream.h"
#include "slc_rwsplit.h"

static void slc_rws_start(slc_session_t *s);
static void slc_rws_ready(slc_session_t *s);
static slc_backend_t *slc_rws_command(slc_session_t *s, const slc_cmd_t *c);
static void slc_rws_done(slc_session_t *s, const slc_mysql_reply_t *r);
static void slc_rws_close(slc_session_t *s);
static int  slc_rws_extra(slc_session_t *s, slc_backend_t **b,
    uint8_t *tags, unsigned max);
static const char *slc_rws_adopt(slc_session_t *s, slc_backend_t **extra,
    const uint8_t *tags, unsigned n);
static void slc_rws_replica_ready(slc_backend_t *b);
static void slc_rws_replica_fail(slc_backend_t *b, const char *why);
static void slc_rws_replica_done(slc_backend_t *b,
    const slc_mysql_reply_t *r);

static const slc_router_t slc_rws_router = {
    .start = slc_rws_start,
    .ready = slc_rws_ready,
    .retry = slc_rws_start,
    .command = slc_rws_command,
    .done = slc_rws_done,
    .close = slc_rws_close,
    .extra = slc_rws_extra,
    .adopt = slc_rws_adopt,
};

static const slc_backend_ops_t slc_rws_replica_ops = {
    .ready = slc_rws_replica_ready,
    .fail = slc_rws_replica_fail,
    .done = slc_rws_replica_done,
};

slc_module_t slc_readwritesplit_module = {
    .name = "readwritesplit",
    .type = SLC_MODULE_ROUTER,
    .commands = slc_rws_causal_commands,
    .router = &slc_rws_router,
    .create_conf = slc_rws_create_conf,
    .merge_conf = slc_rws_merge_conf,
    .init_conf = slc_rws_causal_init_conf,
};

static slc_rws_ctx_t *
slc_rws_ctx(slc_session_t *s)
{
    if (s->router_data == NULL) {
        s->router_data = calloc(1, sizeof(slc_rws_ctx_t));
    }
    return s->router_data;
}

static void
slc_rws_start(slc_session_t *s)
{
    slc_upstream_server_t *us;
    int                    full;

    if (slc_rws_ctx(s) == NULL) {
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
        return;
    }
    us = slc_upstream_pick(s->srv->upstream, SLC_ROLE_PRIMARY, NULL, &full);
    if (us == NULL) {
        slc_session_fail(s, full ? SLC_ER_CON_COUNT_ERROR
                                 : SLC_ER_CONNECT_TO_BACKEND,
            full ? "08004" : "HY000", "No primary server of upstream \"%s\" "
            "is available%s", s->srv->upstream->name.data,
            full ? " (max_connections)" : "");
        return;
    }
    (void) slc_backend_open(s, us);
}

/* Never called: command() puts the session in command mode. */
static void
slc_rws_ready(slc_session_t *s)
{
    (void) s;
}


/* --- the replica backend ------------------------------------------------ */

static void
slc_rws_drop_replica(slc_rws_ctx_t *rc, slc_backend_t *b)
{
    if (rc->replica == b) {
        rc->replica = NULL;
    }
    if (rc->last == b) {
        rc->last = NULL;
    }
    rc->copies = 0;
    slc_backend_close(b);
}

/* Replay the session's history, then take commands. */
static void
slc_rws_replica_ready(slc_backend_t *b)
{
    slc_rws_ctx_t *rc = b->session->router_data;
    uint8_t        p[SLC_RWS_HIST_LEN + 1];

    rc->errs_seen = b->track.reply.errs;
    for (unsigned i = 0; i < rc->nhist; i++) {
        size_t n = strlen(rc->hist[i]);

        p[0] = SLC_COM_QUERY;
        memcpy(p + 1, rc->hist[i], n);
        if (slc_cmd_inject(b, p, n + 1) != SLC_OK) {
            slc_rws_replica_fail(b, "cannot replay the session's history");
            return;
        }
        rc->copies++;
    }
    slc_cmd_attach(b);
}

static void
slc_rws_replica_fail(slc_backend_t *b, const char *why)
{
    slc_session_log(b->session, SLC_LOG_WARN, "readwritesplit: replica "
        "%s dropped from the session: %s", b->server->name, why);
    slc_rws_drop_replica(b->session->router_data, b);
}

/* Copies and replays are answered before done is called: one of them
   refused, and the replica cannot hold this session's state. */
static void
slc_rws_replica_done(slc_backend_t *b, const slc_mysql_reply_t *r)
{
    slc_rws_ctx_t *rc = b->session->router_data;

    slc_rws_causal_done(b, r);
    if (rc->copies > 0) {
        rc->copies = 0;
        if (r->errs > rc->errs_seen) {
            rc->primary_only = 1;       /* another would refuse it too */
            slc_rws_replica_fail(b, "it refused a session command");
            return;
        }
    }
    rc->errs_seen = r->errs;
}

/* The replica backend, opened now if there is none; NULL: use the
   primary (no replica available, or the session cannot use one). */
static slc_backend_t *
slc_rws_replica(slc_session_t *s, slc_rws_ctx_t *rc)
{
    slc_upstream_server_t *us;
    int                    full;

    if (rc->replica != NULL || rc->primary_only) {
        return rc->replica;
    }
    us = slc_upstream_pick(s->srv->upstream, SLC_ROLE_REPLICA, NULL, &full);
    if (us == NULL) {
        return NULL;
    }
    slc_upstream_release(us);           /* open_aux takes its own slot */
    rc->replica = slc_backend_open_aux(s, us, &slc_rws_replica_ops, rc,
        &full);
    return rc->replica;
}


/* --- session history -------------------------------------------------------- */

static void
slc_rws_remember(slc_rws_ctx_t *rc, const uint8_t *q, size_t n)
{
    char *h;

    if (n > SLC_RWS_HIST_LEN || (h = malloc(n + 1)) == NULL) {
        rc->primary_only = 1;           /* cannot replay: no new replica */
        return;
    }
    memcpy(h, q, n);
    h[n] = '\0';
    if (rc->nhist == SLC_RWS_HIST_MAX) {
        free(rc->hist[0]);
        memmove(rc->hist, rc->hist + 1, (SLC_RWS_HIST_MAX - 1)
            * sizeof(rc->hist[0]));
        rc->nhist--;
    }
    rc->hist[rc->nhist++] = h;
}


/* --- routing ----------------------------------------------------------------- */

/* To the primary, and a copy to the replica backend if one is open. */
static slc_backend_t *
slc_rws_all(slc_session_t *s, slc_rws_ctx_t *rc, const uint8_t *q, size_t n)
{
    slc_rws_remember(rc, q, n);
    slc_rws_causal_set(rc, q, n);
    if (rc->replica != NULL) {
        if (slc_cmd_also(s, rc->replica) == SLC_OK) {
            rc->copies++;
        } else {
            slc_rws_drop_replica(rc, rc->replica);
        }
    }
    return s->backend;
}

static slc_backend_t *
slc_rws_query(slc_session_t *s, slc_rws_ctx_t *rc, const slc_cmd_t *c)
{
    const uint8_t  *q = c->payload + 1;
    size_t          n = c->avail - 1;
    uint16_t        status = s->backend->track.status;
    int             in_trx, ro_trx;
    slc_sql_route_t route;
    slc_sql_info_t  si;
    slc_backend_t  *b;

    if (c->avail < c->len) {
        return s->backend;              /* larger than a buffer: a write */
    }
    (void) slc_sql_classify(q, n, status, &si);
    ro_trx = rc->replica != NULL
             && slc_mysql_track_in_trans(&rc->replica->track);
    in_trx = !ro_trx && (slc_mysql_track_in_trans(&s->backend->track)
                         || !(status & SLC_SERVER_STATUS_AUTOCOMMIT));
    if (si.flags & SLC_SQL_F_TEMPORARY) {
        rc->temp = 1;
    }
    route = slc_sql_route(&si, in_trx, ro_trx);
    if (ro_trx && route != SLC_SQL_TO_ALL) {
        return rc->replica;     /* the read-only transaction, to its end */
    }
    switch (route) {
    case SLC_SQL_TO_ALL:
        return slc_rws_all(s, rc, q, n);
    case SLC_SQL_TO_LAST:
        return rc->last != NULL ? rc->last : s->backend;
    case SLC_SQL_TO_REPLICA:
        if (si.hint == SLC_SQL_HINT_REPLICA) {
            b = slc_rws_replica(s, rc);
            return b != NULL ? b : s->backend;
        }
        if (rc->temp) {
            return s->backend;
        }
        b = slc_rws_replica(s, rc);
        return b != NULL ? slc_rws_causal_read(s, rc, b) : s->backend;
    default:
        if (si.flags & SLC_SQL_F_WRITE) {
            rc->wrote = 1;
        }
        return s->backend;
    }
}

/* A new user (COM_CHANGE_USER, applied by the core on the primary) or a
   reset: the replica backend and the history are the old session's. */
static void
slc_rws_forget(slc_rws_ctx_t *rc)
{
    if (rc->replica != NULL) {
        slc_rws_drop_replica(rc, rc->replica);
    }
    for (unsigned i = 0; i < rc->nhist; i++) {
        free(rc->hist[i]);
    }
    rc->nhist = 0;
    rc->wrote = 0;
    slc_rws_causal_forget(rc);
    rc->temp = 0;
    rc->primary_only = 0;
}

static slc_backend_t *
slc_rws_command(slc_session_t *s, const slc_cmd_t *c)
{
    slc_rws_ctx_t *rc = s->router_data;
    slc_backend_t *b;

    if (rc->user_gen != s->user_gen) {
        rc->user_gen = s->user_gen;
        slc_rws_forget(rc);
    }
    slc_rws_causal_command(s, rc);
    switch (c->command) {
    case SLC_COM_RESET_CONNECTION:
        slc_rws_forget(rc);
        b = s->backend;
        break;
    case SLC_COM_QUERY:
        b = slc_rws_query(s, rc, c);
        break;
    case SLC_COM_INIT_DB: {
        /* replayed as USE `db` */
        char use[SLC_MAX_DB + 8];
        int  k = snprintf(use, sizeof(use), "USE `%.*s`",
                          (int) slc_min(c->avail - 1, (size_t) SLC_MAX_DB),
                          (const char *) c->payload + 1);
        if (memchr(c->payload + 1, '`', c->avail - 1) != NULL || k < 0) {
            rc->primary_only = 1;
        } else {
            slc_rws_remember(rc, (const uint8_t *) use, (size_t) k);
        }
        if (rc->replica != NULL && slc_cmd_also(s, rc->replica) == SLC_OK) {
            rc->copies++;
        }
        b = s->backend;
        break;
    }
    default:
        /* prepared statements, COM_PING, COM_QUIT...: the primary */
        b = s->backend;
    }
    if (b != NULL) {
        rc->last = b;
    }
    return b;
}

/* A response of the primary's: the GTID of a write it reports. */
static void
slc_rws_done(slc_session_t *s, const slc_mysql_reply_t *r)
{
    (void) r;
    slc_rws_causal_taken(s, s->router_data);
}


/* --- close and reload ----------------------------------------------------- */

static void
slc_rws_close(slc_session_t *s)
{
    slc_rws_ctx_t *rc = s->router_data;

    if (rc != NULL) {
        slc_rws_forget(rc);
    }
}

static int
slc_rws_extra(slc_session_t *s, slc_backend_t **b, uint8_t *tags,
    unsigned max)
{
    slc_rws_ctx_t *rc = s->router_data;

    if (rc == NULL || rc->replica == NULL || max == 0) {
        return 0;
    }
    b[0] = rc->replica;
    tags[0] = SLC_RWS_TAG_REPLICA;
    return 1;
}

/*
 * A handed-over session keeps its replica backend, with its state; the
 * history does not come along (yet), so a session that has one never
 * opens another replica: its reads go to the primary, where the state is.
 * The read-your-writes mark does not come either: a session that wrote
 * reads from the primary after a reload too.
 */
static const char *
slc_rws_adopt(slc_session_t *s, slc_backend_t **extra, const uint8_t *tags,
    unsigned n)
{
    slc_rws_ctx_t *rc = slc_rws_ctx(s);

    if (rc == NULL) {
        return "out of memory";
    }
    rc->primary_only = 1;
    rc->wrote = 1;
    slc_session_go(s);
    for (unsigned i = 0; i < n && s->state == SLC_SS_READY; i++) {
        if (tags[i] != SLC_RWS_TAG_REPLICA || rc->replica != NULL) {
            slc_backend_close(extra[i]);
            continue;
        }
        extra[i]->ops = &slc_rws_replica_ops;
        extra[i]->data = rc;
        rc->replica = extra[i];
        slc_cmd_attach(extra[i]);
    }
    return NULL;
}
