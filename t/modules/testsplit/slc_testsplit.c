/*
 * testsplit: a router with two backends per session, for t/backends.t.
 * The session's own backend is a primary; COM_QUERY text that starts
 * with the comment "/ *replica* /" (without the blanks) goes to a replica
 * backend that the router opens on first use (auth local), and when that
 * backend fails the router drops it, and the session goes on: the next
 * such query opens another.  "/ *all* /" goes to the primary, whose
 * reply is the client's, and a copy to the replica backend if one is
 * open (session state: SET); the router keeps the last few and replays
 * them on a replica backend it opens later (slc_cmd_inject).  A copy or
 * a replay the replica refuses costs the session its replica backend.
 * "/ *split:stats* /" is answered by the router itself: responses
 * completed per backend, and replica backends opened and lost.
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_cmd.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_router.h"
#include "slc_mysql_session_backend.h"
#include "slc_mysql_upstream.h"

#define SLC_TS_HIST      8
#define SLC_TS_HIST_LEN  256

typedef struct {
    slc_backend_t  *replica;
    uint64_t        done_primary, done_replica;
    unsigned        opened, lost;
    unsigned        copies;     /* copies and replays sent to the replica,
                                   unanswered */
    unsigned        copies_failed;
    uint64_t        errs_seen;  /* the replica's reply.errs last time */
    unsigned        nhist;      /* "all" commands, to replay */
    char            hist[SLC_TS_HIST][SLC_TS_HIST_LEN];
} slc_ts_ctx_t;

static int  slc_ts_check(slc_mysql_srv_t *srv, char *err, size_t errlen);
static void slc_ts_start(slc_session_t *s);
static slc_backend_t *slc_ts_command(slc_session_t *s, const slc_cmd_t *c);
static void slc_ts_close(slc_session_t *s);
static void slc_ts_replica_ready(slc_backend_t *b, const uint8_t *ok,
    size_t len);
static void slc_ts_replica_drop(slc_backend_t *b, const char *why);
static void slc_ts_replica_fail(slc_backend_t *b,
    const slc_backend_fail_t *f);
static void slc_ts_done(slc_session_t *s, slc_backend_t *b,
    const slc_mysql_reply_t *r);
static int  slc_ts_extra(slc_session_t *s, slc_backend_t **b, uint8_t *tags,
    unsigned max);
static const char *slc_ts_adopt(slc_session_t *s, slc_backend_t **extra,
    const uint8_t *tags, unsigned n);

static const slc_router_t slc_ts_router = {
    .check = slc_ts_check,
    .start = slc_ts_start,
    .command = slc_ts_command,
    .done = slc_ts_done,
    .close = slc_ts_close,
    .extra = slc_ts_extra,
    .adopt = slc_ts_adopt,
};

static const slc_backend_ops_t slc_ts_replica_ops = {
    .ready = slc_ts_replica_ready,
    .fail = slc_ts_replica_fail,
};

slc_module_t slc_testsplit_module = {
    .name = "testsplit",
    .type = SLC_MODULE_ROUTER,
    .router = &slc_ts_router,
};

static int
slc_ts_check(slc_mysql_srv_t *srv, char *err, size_t errlen)
{
    if (srv->auth != SLC_AUTH_LOCAL) {
        snprintf(err, errlen, "%s:%u: testsplit needs auth local",
            srv->file, srv->line);
        return SLC_ERROR;
    }
    return SLC_OK;
}

static void
slc_ts_start(slc_session_t *s)
{
    slc_upstream_server_t *us;
    int                    full;

    if (s->router_data == NULL
        && (s->router_data = calloc(1, sizeof(slc_ts_ctx_t))) == NULL)
    {
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
        return;
    }
    us = slc_upstream_pick(s->srv->upstream, SLC_ROLE_PRIMARY, NULL, &full);
    if (us == NULL) {
        slc_session_fail(s, SLC_ER_CONNECT_TO_BACKEND, "HY000",
            "testsplit: no primary");
        return;
    }
    (void) slc_session_backend_open(s, us);
}

/* The session's history first, then the command that waits for it. */
static void
slc_ts_replica_ready(slc_backend_t *b, const uint8_t *ok, size_t len)
{
    slc_ts_ctx_t *ts = b->session->router_data;
    uint8_t       p[SLC_TS_HIST_LEN + 1];

    (void) ok;
    (void) len;
    slc_session_log(b->session, SLC_LOG_INFO, "testsplit: replica backend "
        "%s ready, replaying %u command(s)", b->server->name, ts->nhist);
    ts->errs_seen = b->track.reply.errs;
    for (unsigned i = 0; i < ts->nhist; i++) {
        size_t n = strlen(ts->hist[i]);

        p[0] = SLC_COM_QUERY;
        memcpy(p + 1, ts->hist[i], n);
        if (slc_cmd_inject(b, p, n + 1) == SLC_OK) {
            ts->copies++;
        }
    }
    slc_cmd_attach(b);
}

static void
slc_ts_replica_fail(slc_backend_t *b, const slc_backend_fail_t *f)
{
    slc_ts_replica_drop(b, f->why);
}

static void
slc_ts_replica_drop(slc_backend_t *b, const char *why)
{
    slc_ts_ctx_t *ts = b->session->router_data;

    slc_session_log(b->session, SLC_LOG_WARN, "testsplit: replica backend "
        "%s lost: %s", b->server->name, why);
    if (ts->replica == b) {
        ts->replica = NULL;
        ts->lost++;
    }
    slc_backend_close(b);
}

static void
slc_ts_done(slc_session_t *s, slc_backend_t *b, const slc_mysql_reply_t *r)
{
    slc_ts_ctx_t *ts = s->router_data;

    if (b == s->backend) {
        return;                 /* the primary's: counted when sent */
    }
    ts->done_replica++;
    /* copies and replays are answered in the background, all of them
       before done is called; a command of the client's afterwards */
    if (ts->copies > 0) {
        ts->copies = 0;
        if (r->errs > ts->errs_seen) {
            ts->copies_failed++;
            slc_ts_replica_drop(b, "it refused a copy of a session command");
            return;
        }
    }
    ts->errs_seen = r->errs;
}

static slc_backend_t *
slc_ts_replica(slc_session_t *s, slc_ts_ctx_t *ts)
{
    slc_upstream_server_t *us;
    int                    full;

    if (ts->replica != NULL) {
        return ts->replica;
    }
    us = slc_upstream_pick(s->srv->upstream, SLC_ROLE_REPLICA, NULL, &full);
    if (us == NULL) {
        return NULL;
    }
    ts->replica = slc_cmd_open_backend(s, us, &slc_ts_replica_ops, ts);
    ts->opened += ts->replica != NULL;
    return ts->replica;
}

static int
slc_ts_answer(slc_session_t *s, const char *text)
{
    static const char *const columns[] = { "v" };
    size_t                   n = strlen(text);

    if (slc_reply_columns(s, columns, 1) != SLC_OK
        || slc_reply_row(s, &text, &n, 1) != SLC_OK
        || slc_reply_end(s) != SLC_OK)
    {
        return SLC_ERROR;
    }
    return SLC_OK;
}

/* Keep a session command for a replica opened later: the last
   SLC_TS_HIST of them (a real router keeps one per variable). */
static void
slc_ts_remember(slc_ts_ctx_t *ts, const char *q, size_t n)
{
    if (n >= SLC_TS_HIST_LEN) {
        return;
    }
    if (ts->nhist == SLC_TS_HIST) {
        memmove(ts->hist[0], ts->hist[1],
            (SLC_TS_HIST - 1) * sizeof(ts->hist[0]));
        ts->nhist--;
    }
    memcpy(ts->hist[ts->nhist], q, n);
    ts->hist[ts->nhist++][n] = '\0';
}

static slc_backend_t *
slc_ts_command(slc_session_t *s, const slc_cmd_t *c)
{
    slc_ts_ctx_t *ts = s->router_data;
    const char   *q = (const char *) c->payload + 1;
    size_t        n = c->avail > 0 ? c->avail - 1 : 0;
    char          text[128];
    slc_backend_t *b;

    if (c->command != SLC_COM_QUERY) {
        ts->done_primary++;
        return s->backend;
    }
    if (n >= 15 && memcmp(q, "/*split:stats*/", 15) == 0) {
        snprintf(text, sizeof(text), "primary=%llu replica=%llu opened=%u "
            "lost=%u copies_failed=%u", (unsigned long long) ts->done_primary,
            (unsigned long long) ts->done_replica, ts->opened, ts->lost,
            ts->copies_failed);
        if (slc_ts_answer(s, text) != SLC_OK) {
            slc_session_close(s, SLC_LOG_ERR, "testsplit: answer failed");
        }
        return NULL;
    }
    if (n >= 11 && memcmp(q, "/*replica*/", 11) == 0) {
        if ((b = slc_ts_replica(s, ts)) == NULL) {
            (void) slc_reply_err(s, SLC_ER_CONNECT_TO_BACKEND, "HY000",
                "testsplit: no replica");
            return NULL;
        }
        return b;
    }
    if (n >= 7 && memcmp(q, "/*all*/", 7) == 0) {
        slc_ts_remember(ts, q, n);
        if (ts->replica != NULL && slc_cmd_also(s, ts->replica) == SLC_OK) {
            ts->copies++;
        }
    }
    ts->done_primary++;             /* counted when sent: no done hook */
    return s->backend;
}

static void
slc_ts_close(slc_session_t *s)
{
    slc_ts_ctx_t *ts = s->router_data;

    if (ts != NULL && ts->replica != NULL) {
        slc_backend_close(ts->replica);
        ts->replica = NULL;
    }
}

/* Handover on reload: the replica backend goes along (tag 1). */
static int
slc_ts_extra(slc_session_t *s, slc_backend_t **b, uint8_t *tags,
    unsigned max)
{
    slc_ts_ctx_t *ts = s->router_data;

    if (ts == NULL || ts->replica == NULL || max == 0) {
        return 0;
    }
    b[0] = ts->replica;
    tags[0] = 1;
    return 1;
}

static const char *
slc_ts_adopt(slc_session_t *s, slc_backend_t **extra, const uint8_t *tags,
    unsigned n)
{
    slc_ts_ctx_t *ts = calloc(1, sizeof(*ts));

    if (ts == NULL) {
        return "out of memory";
    }
    s->router_data = ts;
    slc_session_go(s);                  /* command mode: s->cmd exists */
    for (unsigned i = 0; i < n && s->state == SLC_SS_READY; i++) {
        if (tags[i] != 1 || ts->replica != NULL) {
            slc_backend_close(extra[i]);
            continue;
        }
        slc_cmd_give(extra[i], &slc_ts_replica_ops, ts);
        ts->replica = extra[i];
        ts->opened++;
        slc_cmd_attach(extra[i]);
    }
    return NULL;
}
