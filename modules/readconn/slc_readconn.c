#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_command.h"
#include "slc_mysql_handover.h"
#include "slc_mysql_monitor.h"
#include "slc_mysql_router.h"
#include "slc_mysql_session_backend.h"
#include "slc_mysql_upstream.h"

/*
 * readconn: after authentication, forward bytes both ways without parsing
 * commands.  Each direction holds at most one buffer: when the receiver
 * does not take what was read, the sender is not read any more until it
 * does (backpressure), so memory stays bounded whatever the result size.
 * The response tracker follows the framing only, to know when a session is
 * idle and outside a transaction (for graceful shutdown).
 */

/* Its conf at the mysql and server levels (a server inherits it). */
typedef struct {
    int       role;     /* SLC_ROLE_*, SLC_CONF_UNSET until merged */
} slc_readconn_conf_t;

/* Per session: the servers this session already tried. */
typedef struct {
    uint8_t   tried[SLC_UPSTREAM_SET_BYTES];
    unsigned  ntried;
} slc_readconn_ctx_t;

static void *slc_readconn_create_conf(slc_conf_t *cf, unsigned level);
static const char *slc_readconn_merge_conf(slc_conf_t *cf, unsigned level,
    void *parent, void *child);
static int  slc_readconn_check(slc_mysql_srv_t *srv, char *err,
    size_t errlen);
static void slc_readconn_start(slc_session_t *s);
static void slc_readconn_ready(slc_session_t *s);
static const char *slc_readconn_adopt(slc_session_t *s,
    slc_backend_t **extra, const uint8_t *tags, unsigned n);

static const slc_conf_enum_t slc_readconn_roles_conf[] = {
    { "primary", SLC_ROLE_PRIMARY },
    { "replica", SLC_ROLE_REPLICA },
    { "any", SLC_ROLE_ANY },
    { NULL, 0 }
};

static const slc_command_t slc_readconn_commands[] = {
    { .name = "readconn_role",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_enum_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_readconn_conf_t, role),
      .post = slc_readconn_roles_conf },
    { .name = NULL }
};

static const slc_router_t slc_readconn_router = {
    .check = slc_readconn_check,
    .start = slc_readconn_start,
    .ready = slc_readconn_ready,
    .retry = slc_readconn_start,
    .passthrough = 1,
    .adopt = slc_readconn_adopt,
};

slc_module_t slc_readconn_module = {
    .name = "readconn",
    .type = SLC_MODULE_ROUTER,
    .commands = slc_readconn_commands,
    .router = &slc_readconn_router,
    .create_conf = slc_readconn_create_conf,
    .merge_conf = slc_readconn_merge_conf,
};

static void *
slc_readconn_create_conf(slc_conf_t *cf, unsigned level)
{
    slc_readconn_conf_t *rc;

    if (level != SLC_CONF_MYSQL && level != SLC_CONF_SERVER) {
        return NULL;
    }
    rc = slc_palloc(cf->pool, sizeof(*rc));
    if (rc == NULL) {
        return SLC_CONF_ERROR;
    }
    rc->role = SLC_CONF_UNSET;
    return rc;
}

/* A server takes readconn_role from mysql {}, else primary. */
static const char *
slc_readconn_merge_conf(slc_conf_t *cf, unsigned level, void *parent,
    void *child)
{
    const slc_readconn_conf_t *prev = parent;
    slc_readconn_conf_t       *rc = child;

    (void) cf;
    (void) level;
    slc_conf_merge_value(rc->role, prev != NULL ? prev->role : SLC_CONF_UNSET,
                         SLC_ROLE_PRIMARY);
    return NULL;
}

/* Merged: every server block has one, whatever its router. */
static unsigned
slc_readconn_roles(slc_mysql_srv_t *srv)
{
    const slc_readconn_conf_t *rc;

    rc = slc_module_conf(srv->mod_conf, &slc_readconn_module);
    return (unsigned) rc->role;
}

static const char *
slc_readconn_role_name(unsigned roles)
{
    return roles == SLC_ROLE_PRIMARY ? "primary"
           : roles == SLC_ROLE_REPLICA ? "replica" : "any";
}

static int
slc_readconn_check(slc_mysql_srv_t *srv, char *err, size_t errlen)
{
    unsigned roles = slc_readconn_roles(srv);

    for (unsigned i = 0; i < srv->upstream->nservers; i++) {
        if (srv->upstream->servers[i].role & roles) {
            return SLC_OK;
        }
    }
    snprintf(err, errlen, "%s:%u: upstream \"%s\" has no server for "
        "readconn_role %s", srv->file, srv->line, srv->upstream->name.data,
        slc_readconn_role_name(roles));
    return SLC_ERROR;
}

static slc_readconn_ctx_t *
slc_readconn_ctx(slc_session_t *s)
{
    if (s->router_data == NULL) {
        s->router_data = calloc(1, sizeof(slc_readconn_ctx_t));
    }
    return s->router_data;
}

/*
 * Also the retry after a failed connect: a session tries each server at
 * most once (its `tried` set); a failed server is also marked down for the
 * worker, so other sessions avoid it for a while.
 */
static void
slc_readconn_start(slc_session_t *s)
{
    slc_readconn_ctx_t    *rc = slc_readconn_ctx(s);
    slc_upstream_server_t *us;
    int                    full;

    if (rc == NULL) {
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
        return;
    }
    us = slc_upstream_pick(s->srv->upstream, slc_readconn_roles(s->srv),
        rc->tried, &full);
    if (us == NULL && !full && rc->ntried > 0) {
        slc_session_fail(s, SLC_ER_CONNECT_TO_BACKEND, "HY000",
            "Can't connect to any backend server of upstream \"%s\"",
            s->srv->upstream->name.data);
        return;
    }
    if (us == NULL && !full) {
        /* the monitor sees none of the role up (slc_monitor_role) */
        slc_session_fail(s, SLC_ER_CONNECT_TO_BACKEND, "HY000",
            "No backend server of upstream \"%s\" is available as %s",
            s->srv->upstream->name.data,
            slc_readconn_role_name(slc_readconn_roles(s->srv)));
        return;
    }
    if (us == NULL) {
        slc_session_fail(s, SLC_ER_CON_COUNT_ERROR, "08004",
            "Too many connections (every backend server of upstream "
            "\"%s\" is at max_connections)", s->srv->upstream->name.data);
        return;
    }
    slc_upstream_set(rc->tried, (unsigned) (us - s->srv->upstream->servers));
    rc->ntried++;
    (void) slc_session_backend_open(s, us);
}

/*
 * Backend to client: move bytes through *bufp until the backend has
 * nothing more or the client takes nothing more.  Returns SLC_ERROR when
 * the session was closed.
 */
static int
slc_readconn_pump(slc_session_t *s, slc_conn_t *src, slc_buf_t **bufp,
    slc_conn_t *dst)
{
    slc_buf_t *b = *bufp;
    ssize_t    n;

    for ( ;; ) {
        while (b != NULL && slc_buf_len(b) > 0) {
            if (!dst->writable) {
                return SLC_OK;          /* resumes from dst's on_write */
            }
            n = slc_conn_write(dst, b->pos, slc_buf_len(b));
            if (n < 0) {
                slc_session_close(s, SLC_LOG_INFO, "client write failed");
                return SLC_ERROR;
            }
            b->pos += n;
        }
        if (!src->readable) {
            break;
        }
        if (b == NULL && (b = *bufp = slc_buf_get()) == NULL) {
            slc_session_close(s, SLC_LOG_ERR, "out of memory");
            return SLC_ERROR;
        }
        b->pos = b->last = b->start;
        n = slc_conn_read(src, b->last, slc_buf_room(b));
        if (n < 0 || src->eof) {
            /* after the client's COM_QUIT the server hanging up is normal */
            slc_session_close(s, slc_mysql_track_quit_sent(&s->backend->track)
                ? SLC_LOG_INFO : SLC_LOG_ERR, "backend closed connection");
            return SLC_ERROR;
        }
        b->last += n;
        s->last_active = slc_loop->now;
        slc_mysql_track_server(&s->backend->track, b->pos, (size_t) n);
        slc_upstream_count_bytes(s->backend->server, (size_t) n, 0);
    }
    slc_buf_put(b);                     /* drained: idle sessions hold none */
    *bufp = NULL;
    return SLC_OK;
}

/*
 * Client to backend.  Unlike the other direction the bytes are scanned
 * before they go (slc_mysql_intercept.h): what the scan released goes on
 * at once, and a KILL or COM_CHANGE_USER waits at in->pos until the
 * session is idle and the proxy has dealt with it (slc_mysql_command.c).
 * One header walk per read is all it costs a session that sends neither.
 */
static int
slc_readconn_send_ready(slc_session_t *s, slc_conn_t *dst)
{
    slc_buf_t *b = s->in;

    while (s->in_ready > 0) {
        if (!dst->writable) {
            return SLC_AGAIN;           /* resumes from dst's on_write */
        }
        ssize_t n = slc_conn_write(dst, b->pos, s->in_ready);
        if (n < 0) {
            slc_session_close(s, SLC_LOG_ERR, "backend write failed");
            return SLC_ERROR;
        }
        b->pos += n;
        s->in_ready -= (size_t) n;
    }
    return SLC_OK;
}

static void
slc_readconn_to_backend(slc_session_t *s)
{
    slc_conn_t *dst = &s->backend->conn;

    for ( ;; ) {
        if (slc_readconn_send_ready(s, dst) != SLC_OK) {
            return;
        }
        if (s->held || s->paused) {
            int rc = s->held ? slc_command_run(s) : SLC_AGAIN;
            if (rc == SLC_OK) {
                continue;
            }
            /* it waits, and nothing is read from the client meanwhile:
               a hang-up must still end the session, or a client could
               leave a command that never completes holding a backend */
            if (rc == SLC_AGAIN && slc_conn_hung_up(&s->client)) {
                slc_session_close(s, SLC_LOG_INFO, "client closed");
            }
            return;
        }
        if (!s->client.readable) {
            break;
        }
        if (s->in != NULL && slc_buf_len(s->in) == slc_buf_size()) {
            break;      /* cannot happen: a held command fits a buffer */
        }
        size_t before = s->in != NULL ? slc_buf_len(s->in) : 0;
        if (slc_session_client_in(s) != SLC_OK) {
            return;
        }
        slc_upstream_count_bytes(s->backend->server, 0,
            slc_buf_len(s->in) - before);
    }
    if (s->in != NULL && slc_buf_len(s->in) == 0) {
        slc_buf_put(s->in);             /* drained: idle sessions hold none */
        s->in = NULL;
    }
}

static void
slc_readconn_to_client(slc_session_t *s)
{
    slc_backend_t *b = s->backend;

    /* the proxy's own packets (the login OK) go out first */
    if (s->out != NULL) {
        if (slc_session_flush(s) != SLC_OK) {
            slc_session_close(s, SLC_LOG_INFO, "client write failed");
            return;
        }
        if (s->out != NULL) {
            return;
        }
    }
    if (slc_readconn_pump(s, &b->conn, &b->in, &s->client) != SLC_OK) {
        return;
    }
    if (s->held && !s->paused) {
        /* a KILL or COM_CHANGE_USER waited for this response to end */
        slc_readconn_to_backend(s);
    } else if (slc_sessions.closing || slc_mysql_handover_active()) {
        slc_session_idle_check(s);
    }
}

static void
slc_readconn_client_read(slc_conn_t *c)
{
    slc_readconn_to_backend(c->data);
}

static void
slc_readconn_client_write(slc_conn_t *c)
{
    slc_readconn_to_client(c->data);
}

static void
slc_readconn_backend_read(slc_conn_t *c)
{
    slc_backend_t *b = c->data;

    slc_readconn_to_client(b->session);
}

static void
slc_readconn_backend_write(slc_conn_t *c)
{
    slc_backend_t *b = c->data;

    slc_readconn_to_backend(b->session);
}

static void
slc_readconn_ready(slc_session_t *s)
{
    slc_backend_t *b = s->backend;

    free(s->router_data);           /* the choice is made */
    s->router_data = NULL;
    s->client.on_read = slc_readconn_client_read;
    s->client.on_write = slc_readconn_client_write;
    b->conn.on_read = slc_readconn_backend_read;
    b->conn.on_write = slc_readconn_backend_write;
    /* what arrived while we were busy with the handshake */
    slc_readconn_to_client(s);
    if (s->state == SLC_SS_READY) {
        slc_readconn_to_backend(s);
    }
}

/* A session a reload handed over: go on forwarding, if readconn_role
   still admits its server. */
static const char *
slc_readconn_adopt(slc_session_t *s, slc_backend_t **extra,
    const uint8_t *tags, unsigned n)
{
    (void) extra;                   /* readconn has none: n is 0 */
    (void) tags;
    (void) n;
    if (!(slc_monitor_role(s->backend->server) & slc_readconn_roles(s->srv)))
    {
        return "backend server no longer admitted by readconn_role after "
               "reload";
    }
    slc_session_go(s);              /* the new filters, if any */
    return NULL;
}
