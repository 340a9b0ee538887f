#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_proxycmd.h"
#include "slc_mysql_handover.h"
#include "slc_mysql_pump.h"
#include "slc_mysql_traffic.h"
#include "slc_mysql_upstream.h"

/*
 * Byte mode (contract in slc_mysql_pump.h): the session's own backend
 * and its client, forwarded both ways through one buffer each.
 */

/* The server's bytes to the tracker; the answers they ended, to the
   metrics (slc_mysql_traffic.h). */
static inline void
slc_pump_track(slc_session_t *s, const uint8_t *p, size_t n)
{
    slc_mysql_track_t *t = &s->backend->track;
    uint64_t           done = t->reply.done, errs = t->reply.errs;

    slc_mysql_track_server(t, p, n);
    if (t->reply.done != done) {
        slc_traffic_answered(s, s->backend, t->reply.done - done,
            t->reply.errs - errs, t->npend > 0);
    }
}

/*
 * Backend to client: move bytes through *bufp until the backend has
 * nothing more or the client takes nothing more.  Returns SLC_ERROR when
 * the session was closed.
 */
static int
slc_pump_bytes(slc_session_t *s, slc_conn_t *src, slc_buf_t **bufp,
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
            int quit = slc_mysql_track_quit_sent(&s->backend->track);

            if (!quit && s->traffic != NULL) {
                slc_traffic_add(&s->traffic->errors[SLC_ERRK_BACKEND_LOST],
                    1);
            }
            slc_session_close(s, quit ? SLC_LOG_INFO : SLC_LOG_ERR,
                "backend closed connection");
            return SLC_ERROR;
        }
        b->last += n;
        s->last_active = slc_loop->now;
        slc_pump_track(s, b->pos, (size_t) n);
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
 * session is idle and the proxy has dealt with it (slc_mysql_proxycmd.c).
 * One header walk per read is all it costs a session that sends neither.
 */
static int
slc_pump_send_ready(slc_session_t *s, slc_conn_t *dst)
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
slc_pump_to_backend(slc_session_t *s)
{
    slc_conn_t *dst = &s->backend->conn;

    for ( ;; ) {
        if (slc_pump_send_ready(s, dst) != SLC_OK) {
            return;
        }
        if (s->held || s->paused) {
            int rc = s->held ? slc_proxycmd_run(s) : SLC_AGAIN;
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
slc_pump_to_client(slc_session_t *s)
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
    if (slc_pump_bytes(s, &b->conn, &b->in, &s->client) != SLC_OK) {
        return;
    }
    if (s->held && !s->paused) {
        /* a KILL or COM_CHANGE_USER waited for this response to end */
        slc_pump_to_backend(s);
    } else if (slc_sessions.closing || slc_sessions.maint
               || slc_mysql_handover_active())
    {
        slc_session_idle_check(s);
    }
}

static void
slc_pump_client_read(slc_conn_t *c)
{
    slc_session_t *s = c->data;

    SLC_CHECK_OBJ(s, SLC_SESSION_MAGIC);
    slc_pump_to_backend(s);
}

static void
slc_pump_client_write(slc_conn_t *c)
{
    slc_session_t *s = c->data;

    SLC_CHECK_OBJ(s, SLC_SESSION_MAGIC);
    slc_pump_to_client(s);
}

static void
slc_pump_backend_read(slc_conn_t *c)
{
    slc_backend_t *b = c->data;

    SLC_CHECK_OBJ(b, SLC_BACKEND_MAGIC);
    slc_pump_to_client(b->session);
}

static void
slc_pump_backend_write(slc_conn_t *c)
{
    slc_backend_t *b = c->data;

    SLC_CHECK_OBJ(b, SLC_BACKEND_MAGIC);
    slc_pump_to_backend(b->session);
}

void
slc_pump_start(slc_session_t *s)
{
    slc_backend_t *b = s->backend;

    s->client.on_read = slc_pump_client_read;
    s->client.on_write = slc_pump_client_write;
    b->conn.on_read = slc_pump_backend_read;
    b->conn.on_write = slc_pump_backend_write;
    if (s->traffic != NULL) {
        b->track.on_command = slc_traffic_on_command;
        b->track.command_data = s;
    }
    /* what arrived while we were busy with the handshake */
    slc_pump_to_client(s);
    if (s->state == SLC_SS_READY) {
        slc_pump_to_backend(s);
    }
}
