/*
 * Command mode: the command layer of a session (interface in
 * slc_mysql_filter.h, design in docs/architecture.md, "Commands").
 *
 * One command is in flight at a time.  The client's bytes are scanned
 * (slc_proxycmd_scan, every command stops); a command waits at in->pos
 * until the response to the one before went out whole, then runs the
 * chain: the core's own commands (KILL, COM_CHANGE_USER), the filters in
 * order, the router.  What the chain decided for the head applies to the
 * rest of the command as it streams (to the backend, or dropped).  The
 * response is read from that backend only, packet by packet for filters
 * that look at packets, and it is complete when the backend's tracker
 * says so.  Each direction holds at most one buffer, as in byte mode.
 */

#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_cmd.h"
#include "slc_mysql_digests_sess.h"
#include "slc_mysql_rules.h"
#include "slc_mysql_traffic.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_proxycmd.h"
#include "slc_mysql_handover.h"
#include "slc_mysql_registry.h"
#include "slc_mysql_router.h"
#include "slc_mysql_session_backend.h"
#include "slc_mysql_upstream.h"

typedef enum {
    SLC_CMD_IDLE,       /* between commands */
    SLC_CMD_CHAIN,      /* a filter's command hook runs */
    SLC_CMD_PAUSED,     /* a filter paused the command */
    SLC_CMD_CORE,       /* the core's own command (KILL, CHANGE_USER) */
    SLC_CMD_WAIT,       /* the router's backend is still logging in */
    SLC_CMD_FORWARD,    /* sent to `target`, its response on the way */
    SLC_CMD_REPLY       /* an answer of the proxy's goes out */
} slc_cmd_state_t;

/* Commands begun in this worker: each command's serial. */
static uint64_t  slc_cmd_serials;

#define SLC_CMD_MAGIC  0xc0de5e55

struct slc_cmd_s {
    uint32_t             magic;         /* SLC_CMD_MAGIC */
    slc_cmd_state_t      state;
    uint64_t             serial;        /* of the command begun last: the
                                           worker's count, never reused */
    unsigned             next;          /* the next filter to call */
    unsigned             nfilters;
    const slc_filter_t *const *filters;
    void               **ctx;
    int                  packets;       /* some filter has a packet hook */
    int                  verdict;
    slc_backend_t       *target;
    uint64_t             done_mark;     /* target's reply.done at send */
    uint64_t             rows_mark;     /* and its reply.rows */
    unsigned             discard:1;     /* released bytes are dropped */
    unsigned             replied:1;     /* response bytes reached the
                                           client */
    unsigned             elsewhere:1;   /* the registry names the target
                                           as where the command runs */
    unsigned             prelude:1;     /* a filter put a command of its
                                           own before the held one */
    unsigned             silent:1;      /* the command in flight is such a
                                           prelude: its response is
                                           dropped */
    unsigned             counted:1;     /* the client's command in flight
                                           is in the metrics */
    unsigned             cached:1;      /* a filter answered it */
    unsigned             ruled:1;       /* the rules ran on it: `rules` */
    slc_sql_rule_verdict_t rules;
    slc_digests_sess_t   dg;            /* with digests */
    uint32_t             rest;          /* bytes of its packet beyond the
                                           head the filters saw, not yet
                                           released (slc_cmd_released) */
    slc_cmd_stream_pt    stream;
    void                *stream_data;
    slc_backend_t       *answered;      /* during the done hooks */
    /* backends that get a copy of the command (slc_cmd_also) */
    slc_backend_t       *also[SLC_CMD_MAX_ALSO];
    unsigned             nalso;
    /* the router's rewrite of the command's head (slc_cmd_rewrite): the
       new head, and how many bytes of the client's payload it replaces */
    slc_buf_t           *rw;
    size_t               rw_keep;
    slc_posted_t         post;
    /* filters holding the response's bytes back (slc_filter_gate) */
    unsigned             gated;
    slc_posted_t         ungated;
};

static void slc_cmd_client(slc_session_t *s);
static void slc_cmd_digest_begin(slc_session_t *s, const slc_cmd_t *cmd);
static void slc_cmd_pump(slc_session_t *s, slc_backend_t *b);
static int  slc_cmd_chain(slc_session_t *s);
static void slc_cmd_client_read(slc_conn_t *conn);
static void slc_cmd_unasked(slc_backend_t *b);
static int  slc_cmd_forward(slc_session_t *s);
static void slc_cmd_answer_lost(slc_session_t *s, slc_backend_t *b,
    const char *why, int connecting);
static void slc_cmd_client_write(slc_conn_t *conn);
static int  slc_cmd_killed(const slc_session_t *s, const slc_backend_t *b);
static void slc_cmd_own_lost(slc_session_t *s, const char *why);
static void slc_cmd_own_fail(slc_backend_t *b, const slc_backend_fail_t *f);
static void slc_cmd_peer_ready(slc_backend_t *b, const uint8_t *ok,
    size_t len);
static void slc_cmd_peer_fail(slc_backend_t *b, const slc_backend_fail_t *f);
static int  slc_cmd_peer_quits(const slc_backend_t *b);

/* The session's own backend in command mode. */
static const slc_backend_ops_t  slc_cmd_own_ops = {
    .fail = slc_cmd_own_fail,
};

/* A router's backend (b->owner, the router's table, hears what matters). */
static const slc_backend_ops_t  slc_cmd_peer_ops = {
    .identity = slc_session_backend_identity,
    .ready = slc_cmd_peer_ready,
    .fail = slc_cmd_peer_fail,
    .quits = slc_cmd_peer_quits,
};

int
slc_cmd_wanted(const slc_mysql_srv_t *srv)
{
    return srv->nfilters > 0 || srv->digests != 0
           || (srv->rules != NULL && srv->rules->n > 0)
           || slc_mysql_srv_router(srv)->command != NULL;
}

slc_backend_t *
slc_cmd_target(const slc_session_t *s)
{
    return s->cmd->discard ? NULL : s->cmd->target;
}

void
slc_cmd_released(slc_session_t *s, const uint8_t *p, size_t n)
{
    struct slc_cmd_s *c = s->cmd;
    size_t            k = slc_min(n, (size_t) c->rest);

    if (k == 0 || c->discard) {
        return;
    }
    c->rest -= (uint32_t) k;
    for (unsigned i = 0; i < c->nfilters && s->state == SLC_SS_READY; i++) {
        if (c->filters[i]->rest != NULL) {
            c->filters[i]->rest(s, c->ctx[i], p, k);
        }
    }
}

int
slc_cmd_at_rest(const slc_session_t *s)
{
    return s->cmd == NULL
           || (s->cmd->state == SLC_CMD_IDLE && s->cmd->stream == NULL);
}

uint32_t
slc_cmd_client_caps(const slc_session_t *s)
{
    return s->caps;
}

/*
 * The flags that describe the session, of the last status the server
 * sent; not those that describe that response (more results, a cursor,
 * session-state data that follows the OK: a client would look for it in
 * the proxy's answer, and call it malformed).
 */
#define SLC_CMD_SESSION_FLAGS                                               \
    (SLC_SERVER_STATUS_IN_TRANS | SLC_SERVER_STATUS_AUTOCOMMIT             \
     | SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES                               \
     | SLC_SERVER_STATUS_IN_TRANS_READONLY)

uint16_t
slc_cmd_status(const slc_session_t *s)
{
    return s->backend != NULL
           ? (uint16_t) (s->backend->track.status & SLC_CMD_SESSION_FLAGS)
           : SLC_SERVER_STATUS_AUTOCOMMIT;
}

/* The worker's last classification, and what it was made of: the
   command's serial says whose it is (a session freed and another made at
   its address count on) */
static struct {
    uint64_t             serial;
    const uint8_t       *text;
    size_t               len;
    uint16_t             status;
    slc_sql_info_t       si;
} slc_cmd_classified;

const slc_sql_info_t *
slc_cmd_classify(slc_session_t *s, const slc_cmd_t *c)
{
    const uint8_t *q = c->payload + 1;
    size_t         n = c->avail - 1;
    uint16_t       status = slc_cmd_status(s)
                            & SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES;

    if (slc_cmd_classified.serial != s->cmd->serial
        || slc_cmd_classified.text != q || slc_cmd_classified.len != n
        || slc_cmd_classified.status != status)
    {
        (void) slc_sql_classify(q, n, status, &slc_cmd_classified.si);
        slc_cmd_classified.serial = s->cmd->serial;
        slc_cmd_classified.text = q;
        slc_cmd_classified.len = n;
        slc_cmd_classified.status = status;
    }
    return &slc_cmd_classified.si;
}


/* --- answers ------------------------------------------------------------ */

const slc_backend_t *
slc_cmd_answered_by(const slc_session_t *s)
{
    return s->cmd != NULL ? s->cmd->answered : NULL;
}

void
slc_cmd_stream(slc_session_t *s, slc_cmd_stream_pt fn, void *data)
{
    s->cmd->stream = fn;
    s->cmd->stream_data = data;
}

/*
 * Write what the proxy queued for the client, calling the stream for more
 * while it has some.  SLC_OK when all of it went (the answer is over once
 * no stream is left), SLC_AGAIN when the client takes no more now,
 * SLC_ERROR when the session was closed.
 */
static int
slc_cmd_flush(slc_session_t *s)
{
    struct slc_cmd_s *c = s->cmd;

    for ( ;; ) {
        if (slc_session_flush(s) != SLC_OK) {
            slc_session_close(s, SLC_LOG_INFO, "client write failed");
            return SLC_ERROR;
        }
        if (s->out != NULL) {
            return SLC_AGAIN;
        }
        if (c->stream == NULL) {
            return SLC_OK;
        }
        int rc = c->stream(s, c->stream_data);
        if (s->state != SLC_SS_READY) {
            return SLC_ERROR;
        }
        if (rc == SLC_DONE) {
            c->stream = NULL;
        } else if (rc != SLC_AGAIN || s->out == NULL) {
            slc_session_close(s, SLC_LOG_ERR, "filter failed its answer");
            return SLC_ERROR;
        }
    }
}

/* The held command was answered by the proxy: drop it, and the rest of
   it as it arrives. */
static void
slc_cmd_drop(slc_session_t *s)
{
    struct slc_cmd_s *c = s->cmd;
    uint32_t          plen = (uint32_t) slc_mysql_le_get(s->in->pos, 3);
    size_t            taken = slc_min((size_t) plen + SLC_MYSQL_HDR_LEN,
                                      slc_buf_len(s->in));

    s->in->pos += taken;
    s->in_ready = 0;
    slc_mysql_scan_pass(&s->scan, plen, taken);
    s->held = 0;
    c->discard = 1;
    c->target = NULL;
    c->state = SLC_CMD_REPLY;
    slc_buf_put(c->rw);
    c->rw = NULL;
    if (slc_buf_len(s->in) > 0) {
        slc_proxycmd_scan(s);
    }
}


/* --- the chain ---------------------------------------------------------- */

static void
slc_cmd_head(const slc_session_t *s, slc_cmd_t *cmd)
{
    const uint8_t *p = s->in->pos;

    cmd->len = (uint32_t) slc_mysql_le_get(p, 3);
    cmd->payload = p + SLC_MYSQL_HDR_LEN;
    cmd->avail = slc_min((size_t) cmd->len,
                         slc_buf_len(s->in) - SLC_MYSQL_HDR_LEN);
    cmd->command = cmd->payload[0];
}

/*
 * The command (whole: slc_cmd_also refuses a larger one) goes to the
 * router's other backends too.  Their responses are read in the
 * background and dropped (slc_cmd_background); the router hears each
 * through its done hook, and a later command for such a backend waits until
 * it is idle again.  A copy that cannot be queued costs the router that
 * backend (ops->fail), never the session.
 */
static int
slc_cmd_copy(slc_session_t *s, const uint8_t *p, size_t n)
{
    struct slc_cmd_s *c = s->cmd;

    for (unsigned i = 0; i < c->nalso; i++) {
        slc_backend_t *b = c->also[i];

        if (slc_buf_append(&b->out, p, n) != SLC_OK
            || slc_conn_flush(&b->conn, &b->out) != SLC_OK)
        {
            slc_cmd_backend_fail(b, "write failed");
            if (s->state != SLC_SS_READY) {
                return SLC_ERROR;
            }
            continue;
        }
        slc_mysql_track_client(&b->track, p, n);
        slc_upstream_count_bytes(b->server, 0, n);
    }
    c->nalso = 0;
    return SLC_OK;
}

int
slc_cmd_inject(slc_backend_t *b, const uint8_t *payload, size_t len)
{
    uint8_t *p;

    if (len + SLC_MYSQL_HDR_LEN > slc_buf_size()
        || slc_buf_reserve(&b->out, len + SLC_MYSQL_HDR_LEN) != SLC_OK)
    {
        return SLC_ERROR;
    }
    p = b->out->last;
    slc_mysql_hdr_write(p, (uint32_t) len, 0);
    memcpy(p + SLC_MYSQL_HDR_LEN, payload, len);
    b->out->last += len + SLC_MYSQL_HDR_LEN;
    slc_mysql_track_client(&b->track, p, len + SLC_MYSQL_HDR_LEN);
    slc_upstream_count_bytes(b->server, 0, len + SLC_MYSQL_HDR_LEN);
    if (slc_conn_flush(&b->conn, &b->out) != SLC_OK) {
        slc_cmd_backend_fail(b, "write failed");
    }
    return SLC_OK;
}

int
slc_cmd_also(slc_session_t *s, slc_backend_t *b)
{
    struct slc_cmd_s *c = s->cmd;

    if (s->scan.big || c->nalso == SLC_CMD_MAX_ALSO
        || b->state != SLC_BS_READY || b == s->backend)
    {
        return SLC_ERROR;
    }
    c->also[c->nalso++] = b;
    return SLC_OK;
}

/*
 * The command runs on b: when that is not the session's own backend, the
 * registry says so, so that a KILL QUERY naming the session reaches the
 * statement where it runs (slc_mysql_kill.c); b NULL or the session's own:
 * back to its own.  Two stores in shared memory, only when it changes.
 */
static void
slc_cmd_running(slc_session_t *s, const slc_backend_t *b)
{
    struct slc_cmd_s *c = s->cmd;
    slc_mysql_conf_t *mc;
    int               away = b != NULL && b != s->backend;

    if (!s->registered || (!away && !c->elsewhere)) {
        return;
    }
    mc = slc_mysql_conf(s->cycle);
    slc_registry_set_running(mc->registry_zone->addr, (uint32_t) s->id,
        away ? slc_upstream_stats_index(mc, b->server->stats) + 1 : 0,
        away ? b->thread_id : 0);
    c->elsewhere = (unsigned) away;
}

int
slc_cmd_rewrite(slc_session_t *s, const uint8_t *head, size_t len,
    size_t keep)
{
    struct slc_cmd_s *c = s->cmd;
    slc_cmd_t         cmd;
    size_t            nlen;

    slc_cmd_head(s, &cmd);
    nlen = (size_t) cmd.len - keep + len;
    if (keep > cmd.avail || len == 0
        || len + SLC_MYSQL_HDR_LEN > slc_buf_size()
        || (nlen != cmd.len && (cmd.len >= SLC_MYSQL_MAX_PAYLOAD
                                || nlen >= SLC_MYSQL_MAX_PAYLOAD)))
    {
        return SLC_ERROR;
    }
    if (c->rw == NULL && (c->rw = slc_buf_get()) == NULL) {
        return SLC_ERROR;
    }
    c->rw->pos = c->rw->last = c->rw->start;
    slc_mysql_hdr_write(c->rw->last, (uint32_t) nlen, 0);
    memcpy(c->rw->last + SLC_MYSQL_HDR_LEN, head, len);
    c->rw->last += SLC_MYSQL_HDR_LEN + len;
    c->rw_keep = keep;
    return SLC_OK;
}

/*
 * The router's new head goes first, queued on b->out, which
 * slc_cmd_send_released writes before the client's bytes; the bytes it
 * replaces are skipped (*skip of them).
 */
static int
slc_cmd_queue_rewrite(slc_session_t *s, slc_backend_t *b, size_t *skip)
{
    struct slc_cmd_s *c = s->cmd;
    size_t            n = slc_buf_len(c->rw);

    if (slc_buf_reserve(&b->out, n) != SLC_OK) {
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
        return SLC_ERROR;
    }
    memcpy(b->out->last, c->rw->pos, n);
    b->out->last += n;
    slc_mysql_track_client(&b->track, c->rw->pos, n);
    slc_upstream_count_bytes(b->server, 0, n);
    slc_buf_put(c->rw);
    c->rw = NULL;
    *skip = SLC_MYSQL_HDR_LEN + c->rw_keep;
    s->in->pos += *skip;
    return SLC_OK;
}

/* A retargeted command goes on from the loop, never inside the done
   hook that retargeted it (slc_cmd_background still holds `from`). */
static void
slc_cmd_retargeted(void *arg)
{
    slc_session_t    *s = arg;
    struct slc_cmd_s *c = s->cmd;
    slc_backend_t    *b = c->target;

    if (s->state != SLC_SS_READY || c->state != SLC_CMD_WAIT
        || b->state != SLC_BS_READY || !slc_mysql_track_idle(&b->track))
    {
        return;                         /* attach or background go on */
    }
    if (slc_cmd_forward(s) == SLC_OK) {
        slc_cmd_client(s);
    }
}

int
slc_cmd_retarget(slc_session_t *s, slc_backend_t *from, slc_backend_t *to)
{
    struct slc_cmd_s *c = s->cmd;

    if (c == NULL || c->state != SLC_CMD_WAIT || c->target != from) {
        return SLC_ERROR;
    }
    c->target = to;
    if (c->rw != NULL) {
        /* a head rewritten for `from` (a replica's statement id): the
           client's own is right for the primary it goes to instead */
        slc_buf_put(c->rw);
        c->rw = NULL;
    }
    slc_post(slc_loop, &c->post, slc_cmd_retargeted, s);
    return SLC_OK;
}

/* Send the held command's head to the target; the rest follows as the
   scan releases it. */
static int
slc_cmd_forward(slc_session_t *s)
{
    struct slc_cmd_s *c = s->cmd;
    slc_backend_t    *b = c->target;
    uint32_t          plen = (uint32_t) slc_mysql_le_get(s->in->pos, 3);
    size_t            taken = slc_min((size_t) plen + SLC_MYSQL_HDR_LEN,
                                      slc_buf_len(s->in));
    size_t            skip = 0;

    c->done_mark = b->track.reply.done;
    c->rows_mark = b->track.reply.rows;
    c->replied = 0;
    c->discard = 0;
    slc_cmd_running(s, b);
    if (slc_cmd_copy(s, s->in->pos, taken) != SLC_OK) {
        return SLC_ERROR;
    }
    slc_mysql_scan_pass(&s->scan, plen, taken);
    /* the rest of a packet larger than a buffer is shown to the filters
       as it goes (one under 16 MiB: continuations have headers inside) */
    c->rest = !c->silent && plen < SLC_MYSQL_MAX_PAYLOAD
              ? (uint32_t) (plen + SLC_MYSQL_HDR_LEN - taken) : 0;
    if (c->rw != NULL && slc_cmd_queue_rewrite(s, b, &skip) != SLC_OK) {
        return SLC_ERROR;
    }
    slc_mysql_track_client(&b->track, s->in->pos, taken - skip);
    s->in_ready = taken - skip;
    if (skip > 0 && s->in_ready > 0
        && slc_buf_reserve(&b->out, s->in_ready) == SLC_OK)
    {
        /* the rest of a rewritten head's packet joins it: one write */
        memcpy(b->out->last, s->in->pos, s->in_ready);
        b->out->last += s->in_ready;
        slc_upstream_count_bytes(b->server, 0, s->in_ready);
        s->in->pos += s->in_ready;
        s->in_ready = 0;
    }
    s->held = 0;
    c->state = SLC_CMD_FORWARD;
    if (slc_buf_len(s->in) > s->in_ready) {
        slc_proxycmd_scan(s);
    }
    return SLC_OK;
}

/* The router answered the command itself: an ERR of the proxy's? */
static void
slc_cmd_count_refusal(slc_session_t *s)
{
    if (s->traffic != NULL && s->out != NULL
        && slc_buf_len(s->out) > SLC_MYSQL_HDR_LEN
        && s->out->pos[SLC_MYSQL_HDR_LEN] == SLC_MYSQL_ERR)
    {
        slc_traffic_add(&s->traffic->errors[SLC_ERRK_PROXY], 1);
    }
}

static int
slc_cmd_route(slc_session_t *s, const slc_cmd_t *cmd)
{
    struct slc_cmd_s   *c = s->cmd;
    const slc_router_t *r = slc_mysql_srv_router(s->srv);
    slc_backend_t      *b;

    b = r->command != NULL ? r->command(s, cmd) : s->backend;
    if (s->state != SLC_SS_READY) {
        return SLC_ERROR;
    }
    if (b == NULL) {
        slc_cmd_count_refusal(s);
        slc_cmd_drop(s);                /* the router answered */
        return SLC_OK;
    }
    c->target = b;
    if (b->state != SLC_BS_READY || !slc_mysql_track_idle(&b->track)) {
        /* logging in (slc_cmd_attach goes on), or still answering a copy
           of an earlier command (slc_cmd_background goes on) */
        c->state = SLC_CMD_WAIT;
        return SLC_OK;
    }
    return slc_cmd_forward(s);
}

static int
slc_cmd_chain(slc_session_t *s)
{
    struct slc_cmd_s *c = s->cmd;
    slc_cmd_t         cmd;

    slc_cmd_head(s, &cmd);
    while (c->next < c->nfilters) {
        unsigned            i = c->next++;
        const slc_filter_t *f = c->filters[i];

        if (f->command == NULL) {
            continue;
        }
        c->state = SLC_CMD_CHAIN;
        int v = f->command(s, c->ctx[i], &cmd);
        if (s->state != SLC_SS_READY) {
            return SLC_ERROR;
        }
        if (v == SLC_FILTER_PAUSE) {
            c->state = SLC_CMD_PAUSED;
            return SLC_OK;
        }
        if (v == SLC_FILTER_ANSWER) {
            c->cached = 1;
            slc_cmd_drop(s);
            return SLC_OK;
        }
        if (c->prelude) {
            /* the filter's command is held now, before the client's:
               it goes first, unseen; the client's starts over after */
            c->prelude = 0;
            c->silent = 1;
            slc_cmd_head(s, &cmd);
            break;
        }
    }
    return slc_cmd_route(s, &cmd);
}

int
slc_cmd_prelude(slc_session_t *s, const uint8_t *payload, size_t len)
{
    struct slc_cmd_s *c = s->cmd;
    slc_buf_t        *in = s->in;
    size_t            n = SLC_MYSQL_HDR_LEN + len;

    if (c->prelude || c->state != SLC_CMD_CHAIN || s->in_ready != 0
        || len >= SLC_MYSQL_MAX_PAYLOAD)
    {
        return SLC_ERROR;
    }
    if ((size_t) (in->pos - in->start) < n) {
        if ((size_t) (in->end - in->last) < n) {
            return SLC_ERROR;           /* a buffer holds no more */
        }
        memmove(in->pos + n, in->pos, slc_buf_len(in));
        in->last += n;
        in->pos += n;
    }
    in->pos -= n;
    slc_mysql_hdr_write(in->pos, (uint32_t) len, 0);
    memcpy(in->pos + SLC_MYSQL_HDR_LEN, payload, len);
    c->prelude = 1;
    return SLC_OK;
}

/* The core's own commands come first: the proxy's session ids and users
   mean nothing to a filter or a server. */
static int
slc_cmd_core(slc_session_t *s)
{
    unsigned       watch = slc_proxycmd_watch(s);
    const uint8_t *pl = s->in->pos + SLC_MYSQL_HDR_LEN;
    size_t         avail = slc_buf_len(s->in) - SLC_MYSQL_HDR_LEN;

    if (s->scan.big || slc_mysql_scan_watched(watch, pl, avail) != 2) {
        return SLC_DONE;
    }
    s->cmd->state = SLC_CMD_CORE;
    s->cmd->target = s->backend;
    int rc = slc_proxycmd_run(s);
    if (rc == SLC_OK) {
        slc_cmd_core_done(s);
    }
    return rc == SLC_ERROR ? SLC_ERROR : SLC_OK;
}

void
slc_cmd_core_done(slc_session_t *s)
{
    struct slc_cmd_s *c = s->cmd;
    slc_backend_t    *b = s->backend;

    s->paused = 0;
    if (b != NULL && !slc_mysql_track_idle(&b->track)) {
        c->target = b;                  /* passed on, rewritten or not */
        c->done_mark = b->track.reply.done;
        c->rows_mark = b->track.reply.rows;
        c->replied = 0;
        c->state = SLC_CMD_FORWARD;
    } else {
        c->target = NULL;
        c->state = SLC_CMD_REPLY;       /* answered by the proxy */
    }
}

void
slc_cmd_core_resume(slc_session_t *s)
{
    /* an exchange of its own (COM_CHANGE_USER) had the connections */
    s->client.on_read = slc_cmd_client_read;
    s->client.on_write = slc_cmd_client_write;
    slc_cmd_attach(s->backend);
    slc_cmd_core_done(s);
    slc_cmd_client(s);
}

/* digests: a command's, taken as it begins (slc_mysql_digests_sess.h) */
static void
slc_cmd_digest_begin(slc_session_t *s, const slc_cmd_t *cmd)
{
    if (s->srv->digests == 0) {
        return;
    }
    slc_digests_begin(&s->cmd->dg, cmd->payload, cmd->avail,
        (slc_cmd_status(s) & SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0,
        s->user, s->has_db ? s->db : "", s->srv->digests);
}

/* ... and recorded as its answer ends (stmt_id: a PREPARE_OK's). */
static void
slc_cmd_digest_end(slc_session_t *s, int err, uint64_t rows,
    uint32_t stmt_id)
{
    if (s->srv->digests == 0) {
        return;
    }
    slc_digests_end(&s->cmd->dg, s->started_us != 0
        ? slc_loop->now_us - s->started_us : 0, err, rows, stmt_id);
}

/* The query rules, once per client command, before the filters. */
static int
slc_cmd_rules_run(slc_session_t *s)
{
    struct slc_cmd_s     *c = s->cmd;
    slc_cmd_t             cmd;
    slc_rules_err_t       err;
    uint8_t               p[600];
    const slc_sql_info_t *si = NULL;
    int                   rc;

    slc_cmd_head(s, &cmd);
    c->ruled = 1;
    if ((s->srv->rules->needs & (SLC_RULE_NEEDS(SLC_RULE_ON_TABLE)
                                 | SLC_RULE_NEEDS(SLC_RULE_ON_SCHEMA)))
        && cmd.avail == cmd.len && cmd.avail > 0)
    {
        si = slc_cmd_classify(s, &cmd);     /* the router's too */
    }
    rc = slc_rules_command(s, &cmd, (slc_cmd_status(s)
                           & SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0,
        c->dg.digesting || c->dg.preparing ? c->dg.st->text : NULL, si,
        &c->rules, &err);
    if (c->rules.rewrite >= 0) {
        slc_cmd_classified.serial = 0;      /* its text changed there */
    }
    if (rc == SLC_OK) {
        return slc_cmd_chain(s);
    }
    if (slc_reply(s, p, slc_mysql_err_build(p, sizeof(p), err.code,
                      err.state, err.msg)) != SLC_OK)
    {
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
        return SLC_ERROR;
    }
    slc_cmd_count_refusal(s);
    slc_cmd_drop(s);                    /* blocked: answered */
    return SLC_OK;
}

const slc_sql_rule_verdict_t *
slc_cmd_rules(const slc_session_t *s)
{
    const struct slc_cmd_s *c = s->cmd;

    return c != NULL && c->ruled && s->held && c->rules.q != NULL
           ? &c->rules : NULL;
}

/* A held command and nothing in flight: start on it. */
static int
slc_cmd_begin(slc_session_t *s)
{
    struct slc_cmd_s *c = s->cmd;
    int               rc;

    s->seq = 1;                         /* an answer's first packet */
    if (!c->counted) {
        slc_cmd_t cmd;

        slc_cmd_head(s, &cmd);
        c->counted = 1;
        c->cached = 0;
        /* an empty packet is COM_SLEEP to the server */
        slc_traffic_command(s, cmd.avail > 0 ? cmd.command : SLC_COM_SLEEP);
        slc_cmd_digest_begin(s, &cmd);
        c->ruled = 0;
    }
    c->serial = ++slc_cmd_serials;
    c->next = 0;
    c->target = NULL;
    c->discard = 0;
    c->replied = 0;
    c->nalso = 0;
    slc_buf_put(c->rw);
    c->rw = NULL;
    rc = slc_cmd_core(s);
    if (rc != SLC_DONE) {
        return rc;
    }
    if (s->srv->auth == SLC_AUTH_PASSTHROUGH
        && s->in->pos[SLC_MYSQL_HDR_LEN] == SLC_COM_CHANGE_USER)
    {
        slc_cmd_t cmd;

        slc_cmd_head(s, &cmd);
        if (slc_change_user_note(s, cmd.payload, cmd.avail, cmd.len)
            != SLC_OK)
        {
            return SLC_ERROR;
        }
    }
    if (!c->ruled && s->srv->rules != NULL) {
        return slc_cmd_rules_run(s);
    }
    return slc_cmd_chain(s);
}

static void
slc_cmd_resumed(void *arg)
{
    slc_session_t    *s = arg;
    struct slc_cmd_s *c = s->cmd;

    if (s->state != SLC_SS_READY || c->state != SLC_CMD_PAUSED) {
        return;
    }
    if (c->verdict == SLC_FILTER_ANSWER) {
        c->cached = 1;
        slc_cmd_drop(s);
    } else if (slc_cmd_chain(s) != SLC_OK) {
        return;
    }
    slc_cmd_client(s);
}

void
slc_filter_gate(slc_session_t *s)
{
    s->cmd->gated++;
}

static void
slc_cmd_ungated(void *arg)
{
    slc_session_t    *s = arg;
    struct slc_cmd_s *c = s->cmd;

    if (s->state == SLC_SS_READY && c->gated == 0
        && c->state == SLC_CMD_FORWARD && c->target != NULL)
    {
        slc_cmd_pump(s, c->target);
    }
}

void
slc_filter_ungate(slc_session_t *s)
{
    struct slc_cmd_s *c = s->cmd;

    if (c->gated > 0 && --c->gated == 0) {
        slc_post(slc_loop, &c->ungated, slc_cmd_ungated, s);
    }
}

void
slc_filter_resume(slc_session_t *s, int verdict)
{
    s->cmd->verdict = verdict;
    slc_post(slc_loop, &s->cmd->post, slc_cmd_resumed, s);
}


/* --- client to backend --------------------------------------------------- */

/* The bytes the scan released: to the target, or dropped. */
static int
slc_cmd_send_released(slc_session_t *s)
{
    struct slc_cmd_s *c = s->cmd;
    slc_backend_t    *b = c->target;

    if (s->in_ready > 0 && (c->discard || b == NULL)) {
        s->in->pos += s->in_ready;
        s->in_ready = 0;
    }
    if (c->state == SLC_CMD_FORWARD && b != NULL && b->out != NULL) {
        /* a rewritten head (slc_cmd_rewrite) goes first */
        if (slc_conn_flush(&b->conn, &b->out) != SLC_OK) {
            slc_session_close(s, SLC_LOG_ERR, "backend write failed");
            return SLC_ERROR;
        }
        if (b->out != NULL && s->in_ready > 0) {
            return SLC_AGAIN;           /* resumes from its on_write */
        }
    }
    while (s->in_ready > 0) {
        if (!b->conn.writable) {
            return SLC_AGAIN;           /* resumes from its on_write */
        }
        ssize_t n = slc_conn_write(&b->conn, s->in->pos, s->in_ready);
        if (n < 0) {
            slc_cmd_backend_fail(b, "write failed");
            return s->state == SLC_SS_READY ? SLC_AGAIN : SLC_ERROR;
        }
        s->in->pos += n;
        s->in_ready -= (size_t) n;
        slc_upstream_count_bytes(b->server, 0, (size_t) n);
    }
    return SLC_OK;
}

static void
slc_cmd_complete(slc_session_t *s)
{
    struct slc_cmd_s        *c = s->cmd;
    slc_backend_t           *b = c->target;
    const slc_mysql_reply_t *r = &b->track.reply;

    c->state = SLC_CMD_IDLE;
    c->target = NULL;
    slc_cmd_running(s, NULL);
    if (!c->silent) {
        c->counted = 0;
        slc_cmd_digest_end(s, r->done != c->done_mark
                              && r->first == SLC_MYSQL_ERR,
                           r->rows - c->rows_mark,
                           r->done != c->done_mark
                           && r->first == SLC_MYSQL_OK ? r->stmt_id : 0);
        slc_traffic_answered(s, b, r->done != c->done_mark,
            r->done != c->done_mark && r->first == SLC_MYSQL_ERR, 0);
    }
    if (r->done == c->done_mark) {
        return;                         /* a command without a response */
    }
    c->answered = b;
    /* the filters see the session as the server now has it */
    slc_change_user_noted(s, r->first == SLC_MYSQL_OK);
    for (unsigned i = 0; i < c->nfilters && s->state == SLC_SS_READY
                         && !c->silent; i++)
    {
        if (c->filters[i]->done != NULL) {
            c->filters[i]->done(s, c->ctx[i], r, b->track.status);
        }
    }
    c->answered = NULL;
    c->silent = 0;
    if (s->state == SLC_SS_READY
        && slc_mysql_srv_router(s->srv)->done != NULL)
    {
        slc_mysql_srv_router(s->srv)->done(s, b, r);
    }
}

/* In flight, and all of the command and its response went through. */
static int
slc_cmd_finished(const slc_session_t *s)
{
    const slc_backend_t *b = s->cmd->target;

    return s->cmd->state == SLC_CMD_FORWARD && s->in_ready == 0
           && slc_mysql_track_idle(&b->track)
           && (b->in == NULL || slc_buf_len(b->in) == 0);
}

static void
slc_cmd_client(slc_session_t *s)
{
    struct slc_cmd_s *c = s->cmd;

    while (s->state == SLC_SS_READY) {
        if (slc_cmd_send_released(s) != SLC_OK) {
            return;
        }
        if (slc_cmd_finished(s)) {
            slc_cmd_complete(s);        /* a command without a response */
            continue;
        }
        if (c->state == SLC_CMD_REPLY) {
            int rc = slc_cmd_flush(s);
            if (rc != SLC_OK) {
                return;
            }
            c->state = SLC_CMD_IDLE;
            c->counted = 0;
            slc_cmd_digest_end(s, 0, 0, 0);     /* a filter's answer */
            slc_traffic_answered(s, NULL, c->cached, 0, 0);
            continue;
        }
        if (s->held) {
            if (c->state == SLC_CMD_IDLE) {
                if (slc_cmd_begin(s) != SLC_OK) {
                    return;
                }
                continue;
            }
            /* it waits, and nothing is read meanwhile: a hang-up must
               still end the session */
            if (slc_conn_hung_up(&s->client)) {
                slc_session_close(s, SLC_LOG_INFO, "client closed");
            }
            return;
        }
        if (!s->client.readable) {
            break;
        }
        if (slc_session_client_in(s) != SLC_OK) {
            return;
        }
    }
    if (s->state != SLC_SS_READY) {
        return;
    }
    if (s->in != NULL && slc_buf_len(s->in) == 0) {
        slc_buf_put(s->in);             /* drained: idle sessions hold none */
        s->in = NULL;
    }
    if (c->state == SLC_CMD_IDLE
        && (slc_sessions.closing || slc_sessions.maint
            || slc_mysql_handover_active()))
    {
        slc_session_idle_check(s);      /* at rest: hand it over, or close */
    }
}


/* --- backend to client --------------------------------------------------- */

/*
 * The observer of the trackers of the backends the command layer drives
 * (slc_mysql_track_observe): each piece of a response to a command goes
 * to the filters' packet hooks before the client is sent a byte of it; a
 * prelude's (silent) to none.  SLC_ERROR once a hook ended the session.
 */
static int
slc_cmd_observe(void *data, const slc_mysql_piece_t *pc)
{
    slc_session_t    *s = data;
    struct slc_cmd_s *c = s->cmd;

    if (c == NULL || !c->packets || c->silent) {
        return SLC_OK;
    }
    for (unsigned i = 0; i < c->nfilters; i++) {
        if (c->filters[i]->packet != NULL) {
            c->filters[i]->packet(s, c->ctx[i], pc);
            if (s->state != SLC_SS_READY) {
                return SLC_ERROR;
            }
        }
    }
    return SLC_OK;
}

/*
 * Server bytes just read at p[0..n) (what b held back before them, at
 * buf->pos): the tracker follows them, and where it hides something from
 * the client (readwritesplit's last_gtid) it rewrites them and may hold
 * the last ones back; it shows the filters' packet hooks each piece as
 * it frames it (slc_cmd_observe).  When they end the response of the
 * session's own backend, the router hears it (`ended`) before the client
 * does.  Their new end (before p when an OK held back from earlier
 * shrank), or NULL when a packet hook ended the session.
 */
static uint8_t *
slc_cmd_track(slc_session_t *s, slc_backend_t *b, uint8_t *p, size_t n)
{
    const slc_router_t *rt = slc_mysql_srv_router(s->srv);
    uint64_t            done = b->track.reply.done;
    size_t              hold;
    uint8_t            *end = p + n;

    if (s->cmd->packets && b->track.observe == NULL) {
        slc_mysql_track_observe(&b->track, slc_cmd_observe, s);
    }
    if (!slc_mysql_track_hiding(&b->track)) {
        slc_mysql_track_server(&b->track, p, n);
    } else {
        end -= slc_mysql_track_server_edit(&b->track, p, n, &hold);
        b->held = (uint32_t) hold;
    }
    if (s->state != SLC_SS_READY) {
        return NULL;                    /* a packet hook ended it */
    }
    if (rt->ended != NULL && b->owner == NULL
        && b->track.reply.done != done && slc_mysql_track_idle(&b->track))
    {
        rt->ended(s, &b->track.reply);  /* a response ended, none owed */
    }
    return end;
}

/* Bytes held back from the client (slc_cmd_track) go to the start of the
   buffer, for the rest of their packet to follow them. */
static inline void
slc_cmd_held_down(slc_buf_t *buf, const slc_backend_t *b)
{
    if (b->held > 0) {
        memmove(buf->start, buf->last - b->held, b->held);
    }
    buf->pos = buf->start;
    buf->last = buf->start + b->held;
}

/*
 * What b sent that is not held back goes to the client (a prelude's
 * response is dropped).  SLC_OK: all of it went; SLC_AGAIN: the client
 * takes no more now (its on_write resumes); SLC_ERROR: the session or b
 * ended.
 */
static int
slc_cmd_to_client(slc_session_t *s, slc_backend_t *b, slc_buf_t *buf)
{
    struct slc_cmd_s *c = s->cmd;
    ssize_t           n;

    while (buf != NULL && slc_buf_len(buf) > b->held) {
        if (c->gated > 0 && !c->silent) {
            return SLC_AGAIN;           /* slc_filter_ungate resumes */
        }
        if (!c->replied && slc_cmd_killed(s, b)) {
            slc_cmd_backend_fail(b, "the server ended the connection");
            return SLC_ERROR;
        }
        if (c->silent) {
            buf->pos = buf->last - b->held;     /* a prelude's: nobody's */
            continue;
        }
        if (!s->client.writable) {
            return SLC_AGAIN;
        }
        n = slc_conn_write(&s->client, buf->pos, slc_buf_len(buf) - b->held);
        if (n < 0) {
            slc_session_close(s, SLC_LOG_INFO, "client write failed");
            return SLC_ERROR;
        }
        buf->pos += n;
        c->replied = 1;
    }
    return SLC_OK;
}

/*
 * Read what b sent into its buffer (taken on demand; what was held back
 * first) and track it.  The buffer, NULL when the session or b ended.
 */
static slc_buf_t *
slc_cmd_from_backend(slc_session_t *s, slc_backend_t *b, slc_buf_t *buf)
{
    uint8_t  *end;
    ssize_t   n;

    if (buf == NULL) {
        if ((buf = b->in = slc_buf_get()) == NULL) {
            slc_session_close(s, SLC_LOG_ERR, "out of memory");
            return NULL;
        }
        buf->pos = buf->last = buf->start;
        b->held = 0;
    }
    slc_cmd_held_down(buf, b);
    n = slc_conn_read(&b->conn, buf->last, slc_buf_room(buf));
    if (n < 0 || b->conn.eof) {
        slc_cmd_backend_fail(b, "closed connection");
        return NULL;
    }
    s->last_active = slc_loop->now;
    slc_upstream_count_bytes(b->server, (size_t) n, 0);
    if ((end = slc_cmd_track(s, b, buf->last, (size_t) n)) == NULL) {
        return NULL;
    }
    buf->last = end;
    return buf;
}

static void
slc_cmd_pump(slc_session_t *s, slc_backend_t *b)
{
    slc_buf_t *buf = b->in;

    for ( ;; ) {
        if (slc_cmd_to_client(s, b, buf) != SLC_OK) {
            return;
        }
        if (slc_cmd_finished(s)) {
            slc_buf_put(buf);
            b->in = NULL;
            slc_cmd_complete(s);
            slc_cmd_client(s);          /* the next command, if one waits */
            return;
        }
        if (!b->conn.readable) {
            break;
        }
        if ((buf = slc_cmd_from_backend(s, b, buf)) == NULL) {
            return;
        }
    }
    if (buf != NULL && slc_buf_len(buf) == 0) {
        slc_buf_put(buf);
        b->in = NULL;
    }
}

/*
 * A backend spoke while no command of the session was in flight on it: a
 * server says something unasked only as it goes away (a KILL, shutdown,
 * wait_timeout).  The session's own backend takes the session with it, as
 * in byte mode, unless its router gives another; a router's other backend
 * is the router's business (both through b->ops).
 */
static void
slc_cmd_unasked(slc_backend_t *b)
{
    uint8_t  scratch[512];
    ssize_t  n = slc_conn_read(&b->conn, scratch, sizeof(scratch));

    if (n == 0 && !b->conn.eof) {
        return;
    }
    slc_cmd_backend_fail(b, n > 0 ? "unexpected data" : "closed connection");
}

/* The command waiting for b, or in flight on it, will not get b's
   answer: the client gets ERR `code`, and the session goes on. */
static void
slc_cmd_answer_lost(slc_session_t *s, slc_backend_t *b, const char *why,
    int connecting)
{
    uint8_t   p[600];
    char      msg[512];
    uint16_t  code = connecting ? SLC_ER_CONNECT_TO_BACKEND
                                : SLC_ER_CONNECTION_KILLED;

    snprintf(msg, sizeof(msg), "%s backend server '%s' (%s)",
        connecting ? "Can't connect to" : "Lost connection to",
        b->server->name, why);
    slc_session_log(s, SLC_LOG_WARN, "answered error %u: %s", code, msg);
    if (s->traffic != NULL) {
        slc_traffic_add(&s->traffic->errors[SLC_ERRK_BACKEND_LOST], 1);
    }
    if (slc_reply(s, p, slc_mysql_err_build(p, sizeof(p), code,
                      connecting ? "HY000" : "70100", msg)) != SLC_OK)
    {
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
        return;
    }
    slc_cmd_client(s);
}

/*
 * The command waiting for b, or in flight on it with nothing of the
 * response sent, goes to the backend the router's ops->retry gives: as
 * it is when it was never sent, else as the router's copy of it (what
 * the client sent of it and b did not take yet is in that copy).  1 when
 * it went, 0: the client gets the ERR.
 */
static int
slc_cmd_retry(slc_session_t *s, slc_backend_t *b)
{
    struct slc_cmd_s *c = s->cmd;
    const uint8_t    *p = NULL;
    size_t            len = 0;
    slc_backend_t    *nb;

    if (b->owner->retry == NULL || s->out != NULL || c->stream != NULL) {
        return 0;
    }
    nb = b->owner->retry(b, &p, &len);
    if (nb == NULL || nb == b || nb->state != SLC_BS_READY
        || !slc_mysql_track_idle(&nb->track))
    {
        return 0;
    }
    c->target = nb;
    if (c->state == SLC_CMD_WAIT) {
        if (c->rw != NULL) {            /* a head rewritten for b only */
            slc_buf_put(c->rw);
            c->rw = NULL;
        }
        return 1;                       /* still held: it goes as it is */
    }
    if (p == NULL || len == 0) {
        return 0;
    }
    if (s->in_ready > 0) {
        s->in->pos += s->in_ready;
        s->in_ready = 0;
    }
    c->done_mark = nb->track.reply.done;
    c->rows_mark = nb->track.reply.rows;
    slc_cmd_running(s, nb);
    if (slc_cmd_inject(nb, p, len) != SLC_OK) {
        c->target = b;                  /* the caller answers for b */
        return 0;
    }
    return 1;
}

/* Whether b answered the command in flight with an ERR that says the
   connection, not the command, failed (the tracker has read it): a retry
   may serve the command elsewhere. */
static int
slc_cmd_killed(const slc_session_t *s, const slc_backend_t *b)
{
    const slc_mysql_reply_t *r = &b->track.reply;

    return b->owner != NULL && b->owner->retry != NULL
           && r->done != s->cmd->done_mark && r->first == SLC_MYSQL_ERR
           && (r->err == SLC_ER_CONNECTION_KILLED
               || r->err == SLC_ER_SERVER_SHUTDOWN);
}

/* The command waiting for b, or in flight on it, will not be answered by
   b: it is dropped when it was never sent, else the rest of it is. */
static int
slc_cmd_waits_on(const struct slc_cmd_s *c, const slc_backend_t *b)
{
    return c->target == b && (c->state == SLC_CMD_WAIT
                              || c->state == SLC_CMD_FORWARD);
}

static void
slc_cmd_abandon(slc_session_t *s)
{
    struct slc_cmd_s *c = s->cmd;

    if (c->state == SLC_CMD_WAIT) {
        slc_cmd_drop(s);                /* never sent */
        return;
    }
    c->target = NULL;
    c->discard = 1;                     /* the rest of it is dropped */
    c->state = SLC_CMD_REPLY;
}

/*
 * The backend of a prelude failed (it was abandoned): the client asked
 * nothing of it, so nothing is answered; its own command, still held,
 * goes on.  0 when what failed was no prelude.
 */
static int
slc_cmd_prelude_lost(slc_session_t *s)
{
    if (!s->cmd->silent) {
        return 0;
    }
    s->cmd->silent = 0;
    slc_cmd_client(s);
    return 1;
}

/*
 * A backend of the router's failed: connecting, logging in, or later.
 * The router hears it (its owner->fail) and decides; when a command was
 * waiting for that backend (ERR 1429) or in flight on it (ERR 1927), and
 * the router did not answer it, the client gets that ERR and the session
 * goes on, unless part of the response had already reached the client:
 * then nothing can be said cleanly, and the session closes.  A failure
 * the backend reported while logging in is logged here, at info: the
 * router recovers from it, and what the client hears is logged where it
 * is answered.
 */
static void
slc_cmd_peer_fail(slc_backend_t *b, const slc_backend_fail_t *f)
{
    slc_session_t    *s = b->session;
    struct slc_cmd_s *c = s->cmd;
    int               waiting, replied, connecting;

    connecting = b->state != SLC_BS_READY;
    if (connecting) {
        slc_session_backend_log(s, b->server, f);
    }
    if (c == NULL) {
        b->owner->fail(b, f);
        return;
    }
    waiting = slc_cmd_waits_on(c, b);
    replied = c->replied;
    if (waiting && !replied && slc_cmd_retry(s, b)) {
        int held = c->state == SLC_CMD_WAIT;

        slc_session_log(s, SLC_LOG_INFO, "backend server '%s' failed (%s): "
            "the command runs on '%s' instead", b->server->name, f->why,
            c->target->server->name);
        b->owner->fail(b, f);
        if (held && s->state == SLC_SS_READY
            && slc_cmd_forward(s) == SLC_OK)
        {
            slc_cmd_client(s);
        }
        return;
    }
    if (waiting) {
        slc_cmd_abandon(s);
    }
    b->owner->fail(b, f);
    if (!waiting || s->state != SLC_SS_READY
        || s->out != NULL || c->stream != NULL)
    {
        return;
    }
    if (slc_cmd_prelude_lost(s)) {
        return;
    }
    if (replied) {
        slc_session_close(s, SLC_LOG_ERR, "backend failed in the middle of "
            "a response");
        return;
    }
    slc_cmd_answer_lost(s, b, f->why, connecting);
}

/* The client ended with COM_QUIT on the session's own backend: a
   router's backend says it too as it closes. */
static int
slc_cmd_peer_quits(const slc_backend_t *b)
{
    const slc_backend_t *own = b->session->backend;

    return own != NULL && own != b && slc_mysql_track_quit_sent(&own->track);
}

static void
slc_cmd_peer_ready(slc_backend_t *b, const uint8_t *ok, size_t len)
{
    b->owner->ready(b, ok, len);
}

void
slc_cmd_backend_fail(slc_backend_t *b, const char *why)
{
    slc_backend_fail_t f = { .why = why };

    b->ops->fail(b, &f);
}

slc_backend_t *
slc_cmd_open_backend(slc_session_t *s, slc_upstream_server_t *us,
    const slc_backend_ops_t *owner, void *data)
{
    slc_backend_fail_t  f;
    slc_backend_t      *b;

    b = slc_backend_open(s, us, &slc_cmd_peer_ops, data,
        (uint64_t) s->srv->timeouts->connect_timeout, &f);
    if (b == NULL) {
        slc_session_backend_log(s, us, &f);
        return NULL;
    }
    b->owner = owner;
    return b;
}

void
slc_cmd_give(slc_backend_t *b, const slc_backend_ops_t *owner, void *data)
{
    b->ops = &slc_cmd_peer_ops;
    b->owner = owner;
    b->data = data;
}

slc_backend_t *
slc_cmd_set_own(slc_session_t *s, slc_backend_t *b)
{
    slc_backend_t *old = s->backend;

    s->backend = b;
    b->ops = &slc_cmd_own_ops;
    b->owner = NULL;
    b->data = NULL;
    slc_session_backend_register(b);    /* KILL CONNECTION names it */
    return old;
}

/*
 * The session's own backend failed.  A router with several backends may
 * give another of them to take its place (own_lost: readwritesplit's
 * replica while the primary is away), and the session goes on: a command
 * waiting for the lost one, or in flight on it with nothing of the answer
 * sent, gets ERR 1927 (it may or may not have run: the client must know).
 * Otherwise, or with part of an answer already sent, the session ends.
 */
static void
slc_cmd_own_lost(slc_session_t *s, const char *why)
{
    const slc_router_t *r = slc_mysql_srv_router(s->srv);
    struct slc_cmd_s   *c = s->cmd;
    slc_backend_t      *old = s->backend, *nb = NULL;
    int                 waiting;

    waiting = slc_cmd_waits_on(c, old);
    if (r->own_lost != NULL && !slc_mysql_track_quit_sent(&old->track)
        && !(waiting && c->replied) && s->out == NULL && c->stream == NULL)
    {
        nb = r->own_lost(s, why);
    }
    if (s->state != SLC_SS_READY) {
        return;
    }
    if (nb == NULL) {
        slc_session_close(s, slc_mysql_track_quit_sent(&old->track)
            ? SLC_LOG_INFO : SLC_LOG_ERR, "backend closed connection");
        return;
    }
    slc_session_log(s, SLC_LOG_WARN, "backend server '%s' lost (%s): the "
        "session goes on with '%s'", old->server->name, why,
        nb->server->name);
    if (waiting) {
        slc_cmd_abandon(s);
    }
    (void) slc_cmd_set_own(s, nb);
    slc_backend_close(old);             /* freed after this event batch */
    if (waiting && !slc_cmd_prelude_lost(s)) {
        slc_cmd_answer_lost(s, old, why, 0);
    }
}

static void
slc_cmd_own_fail(slc_backend_t *b, const slc_backend_fail_t *f)
{
    slc_cmd_own_lost(b->session, f->why);
}

/*
 * A backend answering a copy of a command (slc_cmd_also): read, follow
 * and drop; once it is idle the router hears how it went, and a command
 * waiting for this backend goes on.
 */
static void
slc_cmd_background(slc_session_t *s, slc_backend_t *b)
{
    struct slc_cmd_s *c = s->cmd;
    uint8_t           buf[4096];
    ssize_t           n;

    while (b->conn.readable && !slc_mysql_track_idle(&b->track)) {
        n = slc_conn_read(&b->conn, buf, sizeof(buf));
        if (n < 0 || b->conn.eof) {
            slc_cmd_backend_fail(b, "closed connection");
            return;
        }
        slc_mysql_track_server(&b->track, buf, (size_t) n);
        slc_upstream_count_bytes(b->server, (size_t) n, 0);
    }
    if (!slc_mysql_track_idle(&b->track)) {
        return;
    }
    if (slc_mysql_srv_router(s->srv)->done != NULL) {
        slc_mysql_srv_router(s->srv)->done(s, b, &b->track.reply);
        if (s->state != SLC_SS_READY) {
            return;
        }
    }
    if (b->conn.closed) {
        /* the router dropped it (its copy failed): a command waiting for
           it gets the ERR it would have got had b died */
        if (c->state == SLC_CMD_WAIT && c->target == b) {
            slc_cmd_drop(s);
            slc_cmd_answer_lost(s, b, "dropped by the router", 0);
        }
        return;
    }
    if (c->state == SLC_CMD_WAIT && c->target == b) {
        if (slc_cmd_forward(s) == SLC_OK) {
            slc_cmd_client(s);
        }
    } else if (b->conn.readable) {
        slc_cmd_unasked(b);          /* more than it was asked */
    }
}

static void
slc_cmd_backend_read(slc_conn_t *conn)
{
    slc_backend_t *b = conn->data;
    slc_session_t *s;

    SLC_CHECK_OBJ(b, SLC_BACKEND_MAGIC);
    s = b->session;
    SLC_CHECK_OBJ(s, SLC_SESSION_MAGIC);
    if (s->state != SLC_SS_READY) {
        return;
    }
    if (s->cmd->target == b && s->cmd->state == SLC_CMD_FORWARD) {
        slc_cmd_pump(s, b);
    } else if (!slc_mysql_track_idle(&b->track)) {
        slc_cmd_background(s, b);
    } else {
        slc_cmd_unasked(b);
    }
}

static void
slc_cmd_backend_write(slc_conn_t *conn)
{
    slc_backend_t *b = conn->data;

    SLC_CHECK_OBJ(b, SLC_BACKEND_MAGIC);
    if (b->session->state != SLC_SS_READY) {
        return;
    }
    if (b->out != NULL && slc_conn_flush(&b->conn, &b->out) != SLC_OK) {
        slc_cmd_backend_fail(b, "write failed");   /* a copy's backend */
        return;
    }
    slc_cmd_client(b->session);
}

static void
slc_cmd_client_read(slc_conn_t *conn)
{
    slc_session_t *s = conn->data;

    SLC_CHECK_OBJ(s, SLC_SESSION_MAGIC);
    SLC_CHECK_OBJ(s->cmd, SLC_CMD_MAGIC);
    slc_cmd_client(s);
}

static void
slc_cmd_client_write(slc_conn_t *conn)
{
    slc_session_t    *s = conn->data;
    struct slc_cmd_s *c;

    SLC_CHECK_OBJ(s, SLC_SESSION_MAGIC);
    c = s->cmd;
    SLC_CHECK_OBJ(c, SLC_CMD_MAGIC);
    if (c->state == SLC_CMD_FORWARD) {
        if (s->out != NULL && slc_cmd_flush(s) != SLC_OK) {
            return;
        }
        slc_cmd_pump(s, c->target);
        return;
    }
    slc_cmd_client(s);
}

void
slc_cmd_attach(slc_backend_t *b)
{
    slc_session_t *s = b->session;

    b->conn.on_read = slc_cmd_backend_read;
    b->conn.on_write = slc_cmd_backend_write;
    /* busy with commands of the proxy's own (slc_cmd_inject): the
       background reader goes on once they are answered */
    if (s->cmd != NULL && s->cmd->state == SLC_CMD_WAIT
        && s->cmd->target == b && slc_mysql_track_idle(&b->track))
    {
        if (slc_cmd_forward(s) == SLC_OK) {
            slc_cmd_client(s);
        }
    }
}


/* --- open and close ------------------------------------------------------ */

/* The name of the module whose filter table f is. */
static const char *
slc_cmd_filter_name(const slc_filter_t *f)
{
    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i]->filter == f) {
            return slc_modules[i]->name;
        }
    }
    return "";
}

int
slc_cmd_filters_save(slc_session_t *s, uint8_t *buf, size_t cap,
    size_t *len)
{
    struct slc_cmd_s *c = s->cmd;
    size_t            off = 0;

    *len = 0;
    for (unsigned i = 0; c != NULL && i < c->nfilters; i++) {
        const slc_filter_t *f = c->filters[i];
        const char         *name = slc_cmd_filter_name(f);
        size_t              nl = strlen(name), n;

        if (f->save == NULL) {
            continue;
        }
        if (nl > 255 || off + 1 + nl + 4 > cap) {
            return SLC_ERROR;
        }
        n = f->save(s, c->ctx[i], buf + off + 1 + nl + 4,
                    cap - off - 1 - nl - 4);
        if (n == 0) {
            continue;
        }
        buf[off] = (uint8_t) nl;
        memcpy(buf + off + 1, name, nl);
        slc_mysql_le_put(buf + off + 1 + nl, n, 4);
        off += 1 + nl + 4 + n;
    }
    *len = off;
    return SLC_OK;
}

int
slc_cmd_filters_stash(slc_session_t *s, const uint8_t *p, size_t len)
{
    if (len == 0) {
        return SLC_OK;
    }
    if (len > UINT32_MAX || (s->filter_state = malloc(4 + len)) == NULL) {
        return SLC_ERROR;
    }
    slc_mysql_le_put(s->filter_state, len, 4);
    memcpy(s->filter_state + 4, p, len);
    return SLC_OK;
}

/* Give filter f its state from the stash, if one came for its module. */
static void
slc_cmd_filter_restore(slc_session_t *s, const slc_filter_t *f, void *ctx)
{
    const uint8_t *p = s->filter_state + 4;
    const char    *name = slc_cmd_filter_name(f);
    size_t         off = 0, nl, n;
    size_t         len = (size_t) slc_mysql_le_get(s->filter_state, 4);

    while (f->restore != NULL && off + 1 <= len) {
        nl = p[off];
        if (off + 1 + nl + 4 > len) {
            return;
        }
        n = (size_t) slc_mysql_le_get(p + off + 1 + nl, 4);
        if (n > len - off - 1 - nl - 4) {
            return;
        }
        if (nl == strlen(name) && memcmp(p + off + 1, name, nl) == 0) {
            f->restore(s, ctx, p + off + 1 + nl + 4, n);
            return;
        }
        off += 1 + nl + 4 + n;
    }
}

static int
slc_cmd_open(slc_session_t *s)
{
    struct slc_cmd_s *c;

    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return SLC_ERROR;
    }
    c->magic = SLC_CMD_MAGIC;
    s->cmd = c;
    c->filters = s->srv->filters;
    c->nfilters = s->srv->nfilters;
    c->ctx = calloc(c->nfilters ? c->nfilters : 1, sizeof(void *));
    if (c->ctx == NULL) {
        return SLC_ERROR;
    }
    for (unsigned i = 0; i < c->nfilters; i++) {
        const slc_filter_t *f = c->filters[i];

        c->packets |= f->packet != NULL;
        if (f->ctx_size > 0
            && (c->ctx[i] = calloc(1, f->ctx_size)) == NULL)
        {
            return SLC_ERROR;
        }
        if (f->open != NULL && f->open(s, c->ctx[i]) != SLC_OK) {
            return SLC_ERROR;
        }
        if (s->filter_state != NULL) {
            slc_cmd_filter_restore(s, f, c->ctx[i]);
        }
    }
    free(s->filter_state);
    s->filter_state = NULL;
    return SLC_OK;
}

void
slc_cmd_start(slc_session_t *s)
{
    if (s->cmd == NULL && slc_cmd_open(s) != SLC_OK) {
        slc_session_close(s, SLC_LOG_ERR, "command mode failed to start");
        return;
    }
    s->client.on_read = slc_cmd_client_read;
    s->client.on_write = slc_cmd_client_write;
    s->backend->ops = &slc_cmd_own_ops;
    slc_cmd_attach(s->backend);
    /* the login OK may still be queued */
    if (s->cmd->state == SLC_CMD_IDLE && s->out != NULL) {
        s->cmd->state = SLC_CMD_REPLY;
    }
    slc_cmd_client(s);
}

/* The memory stays until the session is freed (after the event batch):
   a hook that closed the session may be called from a loop over them. */
void
slc_cmd_close(slc_session_t *s)
{
    struct slc_cmd_s *c = s->cmd;

    if (c == NULL) {
        return;
    }
    slc_post_cancel(slc_loop, &c->post);
    slc_post_cancel(slc_loop, &c->ungated);
    for (unsigned i = 0; c->ctx != NULL && i < c->nfilters; i++) {
        if (c->filters[i]->close != NULL) {
            c->filters[i]->close(s, c->ctx[i]);
        }
    }
}

void
slc_cmd_free(slc_session_t *s)
{
    struct slc_cmd_s *c = s->cmd;

    if (c == NULL) {
        return;
    }
    for (unsigned i = 0; c->ctx != NULL && i < c->nfilters; i++) {
        free(c->ctx[i]);
    }
    slc_buf_put(c->rw);
    slc_digests_sess_free(&c->dg);
    free(c->ctx);
    c->magic = 0;
    free(c);
    s->cmd = NULL;
}
