/*
 * readwritesplit, first step (issue 9; docs/architecture.md, "The
 * readwritesplit router"): each statement to the primary or a replica.
 *
 * A session has its own backend on the primary, opened at login, and at
 * most one replica backend, opened on the first read that may go there.
 * Statements are placed by the classifier (slc_sql_classify.h) and by
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
 * An autocommit read that a replica fails before any of its answer
 * reached the client runs again on another replica or the primary
 * (retry_failed_reads).  Up to max_replica_connections replica backends
 * per session, opened one by one as reads come, used in turn.
 *
 * Read your own writes: slc_rwsplit_causal.c (causal_reads).
 */

#include "slc_core.h"
#include "slc_mysql_traffic.h"
#include "slc_mysql_upstream_admin.h"
#include "slc_conf_file.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_sql_classify.h"
#include "slc_mysql_cmd.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_router.h"
#include "slc_mysql_rules.h"
#include "slc_mysql_upstream.h"
#include "slc_rwsplit.h"
#include "slc_rwsplit_decide.h"

static void *slc_rwsplit_create_conf(slc_conf_t *cf, unsigned level);
static const char *slc_rwsplit_merge_conf(slc_conf_t *cf, unsigned level,
    void *parent, void *child);
static int  slc_rwsplit_check(slc_mysql_srv_t *srv, char *err, size_t errlen);
static void slc_rwsplit_start(slc_session_t *s);
static slc_backend_t *slc_rwsplit_command(slc_session_t *s,
    const slc_cmd_t *c);
static void slc_rwsplit_done(slc_session_t *s, slc_backend_t *b,
    const slc_mysql_reply_t *r);
static void slc_rwsplit_ended(slc_session_t *s, const slc_mysql_reply_t *r);
static void slc_rwsplit_close(slc_session_t *s);
static int  slc_rwsplit_extra(slc_session_t *s, slc_backend_t **b,
    uint8_t *tags, unsigned max);
static size_t slc_rwsplit_save(slc_session_t *s, uint8_t *buf, size_t cap);
static void slc_rwsplit_restore(slc_session_t *s, const uint8_t *p,
    size_t len);
static const char *slc_rwsplit_adopt(slc_session_t *s, slc_backend_t **extra,
    const uint8_t *tags, unsigned n);
static void slc_rwsplit_replica_ready(slc_backend_t *b, const uint8_t *ok,
    size_t len);
static void slc_rwsplit_replica_drop(slc_backend_t *b, const char *why);
static void slc_rwsplit_replica_fail(slc_backend_t *b,
    const slc_backend_fail_t *f);
static void slc_rwsplit_replica_done(slc_backend_t *b,
    const slc_mysql_reply_t *r);
static slc_backend_t *slc_rwsplit_replica_retry(slc_backend_t *b,
    const uint8_t **payload, size_t *len);

static const slc_conf_enum_t slc_rwsplit_failure_modes[] = {
    { "fail_instantly", SLC_RWSPLIT_FAIL_INSTANTLY },
    { "fail_on_write", SLC_RWSPLIT_FAIL_ON_WRITE },
    { NULL, 0 }
};

static const slc_command_t slc_rwsplit_commands[] = {
    { .name = "session_history_max",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_num_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_rwsplit_conf_t, session_history_max) },
    { .name = "max_replica_connections",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_num_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_rwsplit_conf_t, max_replica_connections) },
    { .name = "retry_failed_reads",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_FLAG,
      .set = slc_conf_set_flag_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_rwsplit_conf_t, retry_failed_reads) },
    { .name = "master_failure_mode",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_enum_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_rwsplit_conf_t, master_failure_mode),
      .post = slc_rwsplit_failure_modes },
    { .name = "max_prepared_statements",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_num_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_rwsplit_conf_t, max_prepared_statements) },
    { .name = "causal_reads",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_enum_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_rwsplit_conf_t, causal),
      .post = slc_rwsplit_causal_modes },
    { .name = "causal_reads_timeout",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_rwsplit_conf_t, causal_timeout) },
    { .name = "replica_read_timeout",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_rwsplit_conf_t, read_timeout) },
    { .name = NULL }
};

static const slc_router_t slc_rwsplit_router = {
    .check = slc_rwsplit_check,
    .start = slc_rwsplit_start,
    .retry = slc_rwsplit_start,
    .command = slc_rwsplit_command,
    .done = slc_rwsplit_done,
    .ended = slc_rwsplit_ended,
    .close = slc_rwsplit_close,
    .extra = slc_rwsplit_extra,
    .save = slc_rwsplit_save,
    .restore = slc_rwsplit_restore,
    .adopt = slc_rwsplit_adopt,
    .own_lost = slc_rwsplit_own_lost,
    .maint = slc_rwsplit_maint,
};

static const slc_backend_ops_t slc_rwsplit_replica_ops = {
    .ready = slc_rwsplit_replica_ready,
    .fail = slc_rwsplit_replica_fail,
    .retry = slc_rwsplit_replica_retry,
};

slc_module_t slc_readwritesplit_module = {
    .name = "readwritesplit",
    .type = SLC_MODULE_ROUTER,
    .commands = slc_rwsplit_commands,
    .router = &slc_rwsplit_router,
    .create_conf = slc_rwsplit_create_conf,
    .merge_conf = slc_rwsplit_merge_conf,
    .init_conf = slc_rwsplit_causal_init_conf,
};


/* --- configuration ------------------------------------------------------- */

static void *
slc_rwsplit_create_conf(slc_conf_t *cf, unsigned level)
{
    slc_rwsplit_conf_t *rc;

    if (level != SLC_CONF_MYSQL && level != SLC_CONF_SERVER) {
        return NULL;
    }
    rc = slc_palloc(cf->pool, sizeof(*rc));
    if (rc == NULL) {
        return SLC_CONF_ERROR;
    }
    rc->session_history_max = SLC_CONF_UNSET;
    rc->max_replica_connections = SLC_CONF_UNSET;
    rc->retry_failed_reads = SLC_CONF_UNSET;
    rc->master_failure_mode = SLC_CONF_UNSET;
    rc->max_prepared_statements = SLC_CONF_UNSET;
    rc->causal = SLC_CONF_UNSET;
    rc->causal_timeout = SLC_CONF_UNSET;
    rc->read_timeout = SLC_CONF_UNSET;
    return rc;
}

static const char *
slc_rwsplit_merge_conf(slc_conf_t *cf, unsigned level, void *parent,
    void *child)
{
    const slc_rwsplit_conf_t *prev = parent;
    slc_rwsplit_conf_t       *rc = child;

    (void) cf;
    (void) level;
    slc_conf_merge_value(rc->session_history_max, prev != NULL
        ? prev->session_history_max : SLC_CONF_UNSET, 50);
    slc_conf_merge_value(rc->max_replica_connections, prev != NULL
        ? prev->max_replica_connections : SLC_CONF_UNSET, 1);
    slc_conf_merge_value(rc->retry_failed_reads, prev != NULL
        ? prev->retry_failed_reads : SLC_CONF_UNSET, 1);
    slc_conf_merge_value(rc->master_failure_mode, prev != NULL
        ? prev->master_failure_mode : SLC_CONF_UNSET,
            SLC_RWSPLIT_FAIL_ON_WRITE);
    slc_conf_merge_value(rc->max_prepared_statements, prev != NULL
        ? prev->max_prepared_statements : SLC_CONF_UNSET,
        SLC_RWSPLIT_MAX_STMTS);
    slc_conf_merge_value(rc->read_timeout, prev != NULL
        ? prev->read_timeout : SLC_CONF_UNSET, 0);
    slc_rwsplit_causal_merge(rc, prev);
    return NULL;
}

static const slc_rwsplit_conf_t *
slc_rwsplit_conf(const slc_mysql_srv_t *srv)
{
    return slc_module_conf(srv->mod_conf, &slc_readwritesplit_module);
}

static int
slc_rwsplit_check(slc_mysql_srv_t *srv, char *err, size_t errlen)
{
    const slc_rwsplit_conf_t *rc = slc_rwsplit_conf(srv);

    if (rc->session_history_max > 10000) {
        snprintf(err, errlen, "%s:%u: session_history_max %lld is more "
            "than 10000", srv->file, srv->line, rc->session_history_max);
        return SLC_ERROR;
    }
    if (rc->max_replica_connections > SLC_RWSPLIT_MAX_REPLICAS) {
        snprintf(err, errlen, "%s:%u: max_replica_connections %lld is more "
            "than %d", srv->file, srv->line, rc->max_replica_connections,
            SLC_RWSPLIT_MAX_REPLICAS);
        return SLC_ERROR;
    }
    if (rc->max_prepared_statements > 1048576) {
        snprintf(err, errlen, "%s:%u: max_prepared_statements %lld is more "
            "than 1048576", srv->file, srv->line,
            rc->max_prepared_statements);
        return SLC_ERROR;
    }
    return SLC_OK;
}


/* --- the session --------------------------------------------------------- */

static slc_rwsplit_ctx_t *
slc_rwsplit_ctx(slc_session_t *s)
{
    const slc_rwsplit_conf_t *conf = slc_rwsplit_conf(s->srv);
    slc_rwsplit_ctx_t        *rc = s->router_data;

    if (rc != NULL) {
        return rc;
    }
    rc = calloc(1, sizeof(slc_rwsplit_ctx_t));
    if (rc == NULL) {
        return NULL;
    }
    rc->conf = conf;
    rc->hist_max = (unsigned) conf->session_history_max;
    rc->hist = calloc(rc->hist_max + 1, sizeof(rc->hist[0]));
    if (rc->hist == NULL) {
        free(rc);
        return NULL;
    }
    s->router_data = rc;
    return rc;
}

static void
slc_rwsplit_start(slc_session_t *s)
{
    slc_rwsplit_ctx_t *rc = slc_rwsplit_ctx(s);

    if (rc == NULL) {
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
        return;
    }
    slc_rwsplit_open_own(s, rc);            /* slc_rwsplit_primary.c */
}


/* --- the replica backends ------------------------------------------------ */

slc_rwsplit_copies_t *
slc_rwsplit_copies(slc_rwsplit_ctx_t *rc, const slc_backend_t *b)
{
    for (unsigned i = 0; i < SLC_RWSPLIT_MAX_REPLICAS; i++) {
        if (rc->rep[i].b == b) {
            return &rc->rep[i];
        }
    }
    return NULL;
}

/* b joins the session's replica backends (there is room: nreplicas <
   SLC_RWSPLIT_MAX_REPLICAS). */
static void
slc_rwsplit_add_replica(slc_rwsplit_ctx_t *rc, slc_backend_t *b)
{
    slc_rwsplit_copies_t *rep = slc_rwsplit_copies(rc, NULL);

    *rep = (slc_rwsplit_copies_t) { .b = b, .errs_seen = b->track.reply.errs };
    rc->replica[rc->nreplicas++] = b;
}

void
slc_rwsplit_drop_replica(slc_rwsplit_ctx_t *rc, slc_backend_t *b)
{
    slc_rwsplit_copies_t *rep = slc_rwsplit_copies(rc, b);

    if (rep != NULL) {
        *rep = (slc_rwsplit_copies_t) { .b = NULL };
    }
    for (unsigned i = 0; i < rc->nreplicas; i++) {
        if (rc->replica[i] == b) {
            rc->replica[i] = rc->replica[--rc->nreplicas];
            break;
        }
    }
    if (rc->last == b) {
        rc->last = NULL;
    }
    if (rc->retry_on == b) {
        rc->retry_on = NULL;
    }
    if (rc->read_on == b) {
        rc->read_on = NULL;
    }
    slc_rwsplit_ps_replica_gone(rc, b);
    slc_backend_close(b);
}

/* A backend opened later (a replica, a new primary) is logged in: the
   session's history, then the client's commands.  ops->done hears how
   the history went once b has answered all of it. */
int
slc_rwsplit_replay(slc_rwsplit_ctx_t *rc, slc_backend_t *b)
{
    uint8_t        p[SLC_RWSPLIT_HIST_LEN + 1];
    /* NULL: a new primary */
    slc_rwsplit_copies_t *rep = slc_rwsplit_copies(rc, b);

    if (rep != NULL) {
        rep->errs_seen = b->track.reply.errs;
    } else {
        rc->errs_seen = b->track.reply.errs;
    }
    for (unsigned i = 0; i < rc->nhist; i++) {
        size_t n = strlen(rc->hist[i].text);

        p[0] = SLC_COM_QUERY;
        memcpy(p + 1, rc->hist[i].text, n);
        if (slc_cmd_inject(b, p, n + 1) != SLC_OK) {
            return SLC_ERROR;
        }
        if (rep != NULL) {
            rep->copies++;
        }
    }
    slc_cmd_attach(b);
    return SLC_OK;
}

static void
slc_rwsplit_replica_ready(slc_backend_t *b, const uint8_t *ok, size_t len)
{
    (void) ok;
    (void) len;
    if (slc_rwsplit_replay(b->session->router_data, b) != SLC_OK) {
        slc_rwsplit_replica_drop(b, "cannot replay the session's history");
    }
}

/* b, logged in and attached, is one of the session's replica backends. */
void
slc_rwsplit_adopt_replica(slc_rwsplit_ctx_t *rc, slc_backend_t *b)
{
    slc_cmd_give(b, &slc_rwsplit_replica_ops, rc);
    slc_rwsplit_add_replica(rc, b);
}

static void
slc_rwsplit_replica_drop(slc_backend_t *b, const char *why)
{
    slc_session_log(b->session, SLC_LOG_WARN, "readwritesplit: replica "
        "%s dropped from the session: %s", b->server->name, why);
    slc_rwsplit_drop_replica(b->session->router_data, b);
}

static void
slc_rwsplit_replica_fail(slc_backend_t *b, const slc_backend_fail_t *f)
{
    slc_rwsplit_replica_drop(b, f->why);
}

/*
 * Copies and replays are answered before done is called: one of them
 * refused (the primary had accepted it: slc_rwsplit_state_settle), and the
 * replica cannot hold this session's state.  A read waiting for b goes
 * elsewhere (retry_failed_reads), as when b fails.
 */
static void
slc_rwsplit_replica_done(slc_backend_t *b, const slc_mysql_reply_t *r)
{
    slc_rwsplit_ctx_t *rc = b->session->router_data;
    slc_rwsplit_copies_t *rep;

    slc_rwsplit_ps_replica_done(b, r);
    slc_rwsplit_causal_done(b, r);
    if ((rep = slc_rwsplit_copies(rc, b)) == NULL) {
        return;                         /* dropped meanwhile */
    }
    if (rep->copies > 0) {
        rep->copies = 0;
        if (r->errs > rep->errs_seen) {
            slc_rwsplit_state_no_replica(rc);   /* another would refuse it
                                                   too */
            slc_cmd_backend_fail(b, "it refused a session command the "
                "primary accepted");
            return;
        }
    }
    rep->errs_seen = r->errs;
}

/* Whether b is logged in and has nothing in flight. */
int
slc_rwsplit_idle(const slc_backend_t *b)
{
    return b->state == SLC_BS_READY && slc_mysql_track_idle(&b->track);
}

/*
 * A read of the client's failed on replica b before any of its answer
 * went out: another open replica takes it, else the primary.  The core
 * sends it there and never tells the client.
 */
static slc_backend_t *
slc_rwsplit_replica_retry(slc_backend_t *b, const uint8_t **payload,
    size_t *len)
{
    slc_session_t *s = b->session;
    slc_rwsplit_ctx_t *rc = s->router_data;
    slc_backend_t *nb = NULL;

    if (rc->retry_on != b) {
        return NULL;
    }
    rc->retry_on = NULL;
    for (unsigned i = 0; i < rc->nreplicas && nb == NULL
         && !rc->retry_primary; i++)
    {
        if (rc->replica[i] != b && slc_rwsplit_idle(rc->replica[i])
            && slc_upstream_usable(rc->replica[i]->server)
            && slc_rwsplit_causal_fresh(rc, rc->replica[i]))
        {
            nb = rc->replica[i];
        }
    }
    if (nb == NULL) {
        nb = s->backend;
    }
    if (!slc_rwsplit_idle(nb)) {
        return NULL;
    }
    if (rc->retry_primary) {
        slc_rwsplit_ps_retry_types(rc);
    }
    *payload = rc->retry;
    *len = rc->retry_len;
    rc->last = nb;
    if (s->traffic != NULL) {
        slc_traffic_add(&s->traffic->retries, 1);
    }
    return nb;
}

/* The next command forgets it. */
void
slc_rwsplit_keep(slc_rwsplit_ctx_t *rc, slc_backend_t *b, const slc_cmd_t *c,
    int primary_only)
{
    uint8_t *p;

    rc->retry_on = NULL;
    rc->retry_st = NULL;
    rc->retry_primary = primary_only != 0;
    if (!rc->conf->retry_failed_reads || c->avail < c->len
        || c->len >= SLC_MYSQL_MAX_PAYLOAD)
    {
        return;
    }
    if (c->len > rc->retry_len || rc->retry == NULL) {
        p = realloc(rc->retry, c->len);
        if (p == NULL) {
            return;
        }
        rc->retry = p;
    }
    memcpy(rc->retry, c->payload, c->len);
    rc->retry_len = c->len;
    rc->retry_on = b;
}

/* A backend of the router's on a server of `roles` (never one in skip),
   opened now: NULL when none is available. */
slc_backend_t *
slc_rwsplit_open(slc_session_t *s, slc_rwsplit_ctx_t *rc, unsigned roles,
    const uint8_t *skip, const slc_backend_ops_t *ops)
{
    slc_upstream_server_t *us;
    int                    full;

    us = slc_upstream_pick(s->srv->upstream, roles, skip, &full);
    if (us == NULL) {
        return NULL;
    }
    return slc_cmd_open_backend(s, us, ops, rc);     /* with the slot */
}

static unsigned
slc_rwsplit_server_index(const slc_session_t *s, const slc_backend_t *b)
{
    return (unsigned) (b->server - s->srv->upstream->servers);
}

/*
 * A replica backend for a read; NULL: use the primary (no replica
 * available, or the session cannot use one).  While the session has
 * fewer than max_replica_connections, a read opens one on a replica
 * server it has none on yet; then reads take the open ones in turn.
 */
static slc_backend_t *
slc_rwsplit_replica(slc_session_t *s, slc_rwsplit_ctx_t *rc)
{
    uint8_t        skip[SLC_UPSTREAM_SET_BYTES];
    slc_backend_t *b;

    if (slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_PRIMARY_ONLY)
        || rc->conf->max_replica_connections == 0)
    {
        return NULL;
    }
    if (rc->nreplicas < rc->conf->max_replica_connections) {
        memset(skip, 0, sizeof(skip));
        for (unsigned i = 0; i < rc->nreplicas; i++) {
            slc_upstream_set(skip,
                slc_rwsplit_server_index(s, rc->replica[i]));
        }
        b = slc_rwsplit_open(s, rc, SLC_ROLE_REPLICA, skip,
                         &slc_rwsplit_replica_ops);
        if (b != NULL) {
            slc_rwsplit_add_replica(rc, b);
            return b;
        }
    }
    /* in turn: the first goes to the end; one whose server an admin
       drained or disabled takes no read */
    for (unsigned i = 0; i < rc->nreplicas; i++) {
        b = rc->replica[0];
        memmove(rc->replica, rc->replica + 1,
                (rc->nreplicas - 1) * sizeof(rc->replica[0]));
        rc->replica[rc->nreplicas - 1] = b;
        if (slc_upstream_usable(b->server)) {
            return b;
        }
    }
    return NULL;
}

/* A replica backend on the server a rule names: one of the session's,
   or opened now; NULL when it is not usable. */
static slc_backend_t *
slc_rwsplit_replica_at(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const slc_upstream_server_t *want)
{
    const slc_upstream_t *up = s->srv->upstream;
    uint8_t               skip[SLC_UPSTREAM_SET_BYTES];
    slc_backend_t        *b;

    if (slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_PRIMARY_ONLY)
        || !slc_upstream_usable(want))
    {
        return NULL;
    }
    for (unsigned i = 0; i < rc->nreplicas; i++) {
        if (rc->replica[i]->server == want) {
            return rc->replica[i];
        }
    }
    if (rc->nreplicas >= rc->conf->max_replica_connections) {
        return NULL;
    }
    memset(skip, 0xff, sizeof(skip));
    skip[(want - up->servers) / 8] &=
        (uint8_t) ~(1u << ((want - up->servers) % 8));
    b = slc_rwsplit_open(s, rc, SLC_ROLE_REPLICA, skip,
                         &slc_rwsplit_replica_ops);
    if (b != NULL) {
        slc_rwsplit_add_replica(rc, b);
    }
    return b;
}

/* The replica running a read-only transaction, if one does. */
static slc_backend_t *
slc_rwsplit_ro_trx(slc_rwsplit_ctx_t *rc)
{
    for (unsigned i = 0; i < rc->nreplicas; i++) {
        if (slc_mysql_track_in_trans(&rc->replica[i]->track)) {
            return rc->replica[i];
        }
    }
    return NULL;
}


/* --- routing ------------------------------------------------------------- */

/* To the primary; once it accepted it, to every replica backend open
   and into the history (slc_rwsplit_state_settle). */
static slc_backend_t *
slc_rwsplit_all(slc_session_t *s, slc_rwsplit_ctx_t *rc, const uint8_t *q,
    size_t n,
    slc_sql_kind_t kind)
{
    slc_rwsplit_causal_set(rc, q, n);
    slc_rwsplit_state_hold(s, rc, q, n, kind);
    return s->backend;
}

/* A write inside START TRANSACTION READ ONLY, which runs on a replica:
   the client gets what the primary would answer, not the replica's
   "read-only server".  NULL: answered. */
static slc_backend_t *
slc_rwsplit_ro_write(slc_session_t *s)
{
    if (slc_reply_err(s, SLC_ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION,
            "25006", "Cannot execute statement in a READ ONLY transaction")
        != SLC_OK)
    {
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
    }
    return NULL;
}

static slc_backend_t *slc_rwsplit_route(slc_session_t *s,
    slc_rwsplit_ctx_t *rc,
    const slc_cmd_t *c, const slc_sql_info_t *si);

slc_backend_t *
slc_rwsplit_query(slc_session_t *s, slc_rwsplit_ctx_t *rc, const slc_cmd_t *c)
{
    const slc_sql_info_t *si;
    slc_backend_t        *b;

    if (c->avail < c->len) {
        slc_rwsplit_causal_primary(rc, NULL);
        return s->backend;              /* larger than a buffer: a write */
    }
    /* a filter may have asked first; nothing below classifies another
       text through the command layer, so *si stays this command's */
    si = slc_cmd_classify(s, c);
    b = slc_rwsplit_route(s, rc, c, si);
    if (b == s->backend && !rc->primary_lost) {
        slc_rwsplit_causal_unhide(s, rc, c->payload + 1, c->avail - 1, si);
    }
    return b;
}

/* The facts the routing of a statement classified as *si depends on. */
static void
slc_rwsplit_facts(const slc_session_t *s, const slc_rwsplit_ctx_t *rc,
    const slc_sql_info_t *si, int in_ro_trx, slc_rwsplit_facts_t *f)
{
    const slc_mysql_track_t *t = &s->backend->track;

    slc_rwsplit_facts_of(si, slc_mysql_track_in_trans(t)
                         || !(t->status & SLC_SERVER_STATUS_AUTOCOMMIT),
                     in_ro_trx, f);
    f->temp = slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_TEMP);
    f->uservars = slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_USERVARS);
    f->primary_lost = rc->primary_lost != 0;
}

/* A replica for a read (go: slc_rwsplit_decide's), else the own backend. */
static slc_backend_t *
slc_rwsplit_read_on(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const slc_cmd_t *c,
    slc_rwsplit_go_t go)
{
    const slc_upstream_server_t *want = rc->want;
    slc_backend_t               *b = NULL;

    rc->want = NULL;                    /* this statement's alone */
    if (want != NULL && (b = slc_rwsplit_replica_at(s, rc, want)) == NULL) {
        const slc_sql_rule_verdict_t *v = slc_cmd_rules(s);

        if (v != NULL) {
            slc_rules_refused(s, v->route, "its server is not available "
                "(a replica that is up, and not drained)");
        }
    }
    if (b == NULL && (b = slc_rwsplit_replica(s, rc)) == NULL) {
        return s->backend;
    }
    if (go == SLC_RWSPLIT_GO_REPLICA_HINT) {
        return b;
    }
    if ((b = slc_rwsplit_causal_read(s, rc, b)) == s->backend) {
        return b;
    }
    if (go == SLC_RWSPLIT_GO_REPLICA_KEEP) {
        slc_rwsplit_keep(rc, b, c, 0);      /* an autocommit read */
    }
    return b;
}

/*
 * Where the statement of c, classified as *si, runs: the decision from
 * the facts (slc_rwsplit_decide, pure), then what carries it out.
 */
static slc_backend_t *
slc_rwsplit_route(slc_session_t *s, slc_rwsplit_ctx_t *rc, const slc_cmd_t *c,
    const slc_sql_info_t *si)
{
    const uint8_t   *q = c->payload + 1;
    size_t           n = c->avail - 1;
    slc_backend_t   *ro = slc_rwsplit_ro_trx(rc);
    uint16_t         status = s->backend->track.status;
    slc_rwsplit_facts_t  f;
    slc_rwsplit_go_t     go;
    slc_sql_info_t       ruled;

    if (si->flags & SLC_SQL_F_TEMPORARY) {
        slc_rwsplit_state_temp(rc);
    }
    if (s->srv->rules != NULL && s->srv->rules->routes) {
        si = slc_rwsplit_ruled(s, rc, si, &ruled);
    }
    slc_rwsplit_facts(s, rc, si, ro != NULL, &f);
    go = slc_rwsplit_decide(&f);
    switch (go) {
    case SLC_RWSPLIT_GO_RO_WRITE:
        return slc_rwsplit_ro_write(s);
    case SLC_RWSPLIT_GO_RO_TRX:
        return ro;
    case SLC_RWSPLIT_GO_ALL:
        return slc_rwsplit_all(s, rc, q, n, si->kind);
    case SLC_RWSPLIT_GO_LAST:
        return rc->last != NULL ? rc->last : s->backend;
    case SLC_RWSPLIT_GO_OWN:
        return s->backend;
    case SLC_RWSPLIT_GO_REPLICA:
    case SLC_RWSPLIT_GO_REPLICA_KEEP:
    case SLC_RWSPLIT_GO_REPLICA_HINT:
        return slc_rwsplit_read_on(s, rc, c, go);
    case SLC_RWSPLIT_GO_PRIMARY_GONE:
        return slc_rwsplit_primary_gone(s, rc);
    case SLC_RWSPLIT_GO_PRIMARY:
    default:
        slc_rwsplit_state_apply(s, rc, slc_rwsplit_state_effect(rc, q, n, si,
                                                         status));
        slc_rwsplit_causal_primary(rc, si);
        return s->backend;
    }
}

/* A new user (COM_CHANGE_USER, applied by the core on the primary) or a
   reset: the replica backends and the history are the old session's.  A
   COM_RESET_CONNECTION keeps the database (MariaDB does): the history's
   USE stays, and the session stays on the primary if the database may
   not be the history's. */
static void
slc_rwsplit_forget(slc_rwsplit_ctx_t *rc, int reset)
{
    while (rc->nreplicas > 0) {
        slc_rwsplit_drop_replica(rc, rc->replica[0]);
    }
    if (rc->primary != NULL) {
        if (rc->last == rc->primary) {
            rc->last = NULL;
        }
        slc_backend_close(rc->primary);
        rc->primary = NULL;
        rc->primary_next_try = 0;
    }
    if (reset) {
        slc_rwsplit_hist_reset(rc);
    } else {
        slc_rwsplit_hist_clear(rc);
    }
    slc_rwsplit_ps_forget(rc);
    slc_rwsplit_state_drop(rc);
    slc_rwsplit_state_forget(rc, reset);
    slc_rwsplit_causal_forget(rc);
}

/* COM_INIT_DB: to every backend, and kept as USE `db` (a backtick in
   the name doubled, as the server reads it). */
static slc_backend_t *
slc_rwsplit_init_db(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const slc_cmd_t *c)
{
    char    use[2 * SLC_MAX_DB + 8];
    size_t  k = 0;

    if (c->avail < c->len || c->len - 1 > SLC_MAX_DB) {
        return s->backend;      /* the server refuses it: nothing to keep */
    }
    k += (size_t) snprintf(use, sizeof(use), "USE `");
    for (size_t i = 1; i < c->avail; i++) {
        if (c->payload[i] == '`') {
            use[k++] = '`';
        }
        use[k++] = (char) c->payload[i];
    }
    use[k++] = '`';
    return slc_rwsplit_all(s, rc, (const uint8_t *) use, k, SLC_SQL_USE);
}

static slc_backend_t *
slc_rwsplit_command(slc_session_t *s, const slc_cmd_t *c)
{
    slc_rwsplit_ctx_t *rc = s->router_data;
    slc_backend_t *b;

    slc_rwsplit_ps_settle(s, rc);
    if (rc->held != NULL) {
        slc_rwsplit_state_drop(rc); /* its answer never came: not applied */
    }
    if (rc->user_gen != s->user_gen) {
        rc->user_gen = s->user_gen;
        slc_rwsplit_forget(rc, 0);
    }
    slc_rwsplit_causal_command(s, rc);
    rc->retry_on = NULL;
    if (rc->primary_lost) {
        slc_rwsplit_primary_check(s, rc);
    }
    switch (c->command) {
    case SLC_COM_RESET_CONNECTION:
        slc_rwsplit_forget(rc, 1);
        b = s->backend;
        break;
    case SLC_COM_QUERY:
        b = slc_rwsplit_query(s, rc, c);
        break;
    case SLC_COM_INIT_DB:
        b = slc_rwsplit_init_db(s, rc, c);
        break;
    case SLC_COM_STMT_PREPARE:
    case SLC_COM_STMT_EXECUTE:
    case SLC_COM_STMT_SEND_LONG_DATA:
    case SLC_COM_STMT_CLOSE:
    case SLC_COM_STMT_RESET:
        b = rc->primary_lost ? slc_rwsplit_ps_without_primary(s, rc, c)
                             : slc_rwsplit_ps_command(s, rc, c);
        break;
    case SLC_COM_PING:
    case SLC_COM_QUIT:
    case SLC_COM_STATISTICS:
        b = s->backend;
        break;
    default:
        /* COM_STMT_FETCH (cursors run on the primary), COM_FIELD_LIST...:
           the primary */
        b = rc->primary_lost ? slc_rwsplit_primary_gone(s, rc) : s->backend;
    }
    if (b != NULL) {
        rc->last = b;
    }
    if (b != NULL && b != s->backend && slc_rwsplit_copies(rc, b) != NULL) {
        slc_rwsplit_read_sent(rc, b);
    }
    return b;
}

/* A response of the primary's: the GTID of a write it reports. */
static void
slc_rwsplit_done(slc_session_t *s, slc_backend_t *b,
    const slc_mysql_reply_t *r)
{
    slc_rwsplit_ctx_t *rc = s->router_data;

    if (b == s->backend) {
        slc_rwsplit_state_settle(s, rc, r);
        slc_rwsplit_causal_taken(s, rc);
    } else if (b == rc->primary) {
        slc_rwsplit_primary_done(b, r);     /* the one being reopened */
    } else {
        slc_rwsplit_replica_done(b, r);
    }
}

/* The same response, before the client has it. */
static void
slc_rwsplit_ended(slc_session_t *s, const slc_mysql_reply_t *r)
{
    (void) r;
    slc_rwsplit_causal_publish(s, s->router_data);
}


/* --- close and reload ---------------------------------------------------- */

static void
slc_rwsplit_close(slc_session_t *s)
{
    slc_rwsplit_ctx_t *rc = s->router_data;

    if (rc != NULL) {
        slc_rwsplit_own_stop(rc);
        slc_rwsplit_read_stop(rc);
        slc_rwsplit_forget(rc, 0);
        free(rc->hist);
        free(rc->retry);
        free(rc);
        s->router_data = NULL;
    }
}

static int
slc_rwsplit_extra(slc_session_t *s, slc_backend_t **b, uint8_t *tags,
    unsigned max)
{
    slc_rwsplit_ctx_t *rc = s->router_data;
    unsigned       n = 0;

    if (rc != NULL && rc->primary_lost) {
        return -1;      /* its own backend is a replica: not until back */
    }
    for (unsigned i = 0; rc != NULL && i < rc->nreplicas && n < max; i++) {
        b[n] = rc->replica[i];
        tags[n++] = SLC_RWSPLIT_TAG_REPLICA;
    }
    return (int) n;
}

/*
 * The history goes along with a handover; so do the read-your-writes
 * marks (the byte after the magic, which tells this router's state from
 * another's if a reload changed the router).  A session whose history
 * could not be kept stays on the primary there too.
 */
/*
 * The router's state for a handover: "RWS2", the read-your-writes and
 * temporary-table marks, the history's length (4) and the history, then
 * the statements whose types only a replica has (slc_rwsplit_ps_save).
 */
#define SLC_RWSPLIT_STATE_MAGIC  "RWS2"
#define SLC_RWSPLIT_STATE_HEAD   9

static size_t
slc_rwsplit_save(slc_session_t *s, uint8_t *buf, size_t cap)
{
    slc_rwsplit_ctx_t *rc = s->router_data;
    size_t         n, k;

    if (rc == NULL || slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_PRIMARY_ONLY)
        || cap < SLC_RWSPLIT_STATE_HEAD)
    {
        return 0;
    }
    memcpy(buf, SLC_RWSPLIT_STATE_MAGIC, 4);
    buf[4] = (uint8_t) slc_rwsplit_state_saved(rc);
    n = slc_rwsplit_hist_save(rc, buf + SLC_RWSPLIT_STATE_HEAD,
                          cap - SLC_RWSPLIT_STATE_HEAD);
    if (n == 0 && rc->nhist > 0) {
        return 0;
    }
    slc_mysql_le_put(buf + 5, n, 4);
    n += SLC_RWSPLIT_STATE_HEAD;
    k = slc_rwsplit_ps_save(rc, buf + n, cap - n);
    /* types that do not fit: their statements' EXECUTEs after the
       handover may lack them; the history alone is still worth taking */
    return k == (size_t) -1 ? n : n + k;
}

static void
slc_rwsplit_restore(slc_session_t *s, const uint8_t *p, size_t len)
{
    slc_rwsplit_ctx_t *rc = slc_rwsplit_ctx(s);
    size_t         n;

    if (rc == NULL || len < SLC_RWSPLIT_STATE_HEAD
        || memcmp(p, SLC_RWSPLIT_STATE_MAGIC, 4) != 0)
    {
        return;
    }
    n = (size_t) slc_mysql_le_get(p + 5, 4);
    if (n > len - SLC_RWSPLIT_STATE_HEAD) {
        return;
    }
    slc_rwsplit_state_restored(rc, p[4]);
    rc->restored = slc_rwsplit_hist_restore(rc, p + SLC_RWSPLIT_STATE_HEAD, n)
                   == SLC_OK;
    if (slc_rwsplit_ps_restore(rc, p + SLC_RWSPLIT_STATE_HEAD + n,
                           len - SLC_RWSPLIT_STATE_HEAD - n) != SLC_OK)
    {
        slc_session_log(s, SLC_LOG_WARN, "readwritesplit: the prepared "
            "statements' types that came with the handover are unusable");
    }
}

/*
 * A handed-over session keeps its replica backends, with their state.  A
 * session whose history did not come along never opens another replica:
 * its reads go to the primary, where its state is; nor is its
 * read-your-writes mark known, so it counts as having written.
 */
static const char *
slc_rwsplit_adopt(slc_session_t *s, slc_backend_t **extra, const uint8_t *tags,
    unsigned n)
{
    slc_rwsplit_ctx_t *rc = slc_rwsplit_ctx(s);

    if (rc == NULL) {
        return "out of memory";
    }
    if (!rc->restored) {
        slc_rwsplit_state_unknown(rc);
    }
    rc->user_gen = s->user_gen;
    slc_session_go(s);
    for (unsigned i = 0; i < n && s->state == SLC_SS_READY; i++) {
        if (tags[i] != SLC_RWSPLIT_TAG_REPLICA
            || rc->nreplicas >= SLC_RWSPLIT_MAX_REPLICAS)
        {
            slc_backend_close(extra[i]);
            continue;
        }
        slc_rwsplit_adopt_replica(rc, extra[i]);
        slc_cmd_attach(extra[i]);
    }
    return NULL;
}
