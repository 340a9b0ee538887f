#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_router.h"
#include "slc_mysql_session_backend.h"

/*
 * auth passthrough: the backend is chosen first, and its greeting and the
 * whole authentication exchange are relayed packet by packet between client
 * and server, so every account the server knows works without credentials
 * in the proxy.  The proxy clears what it cannot carry (TLS, compression)
 * from the greeting, learns who the client is from its handshake response,
 * and takes over when the server says OK.
 */

static void slc_passthrough_client_read(slc_conn_t *c);
static int  slc_passthrough_greeting(slc_backend_t *b, uint8_t *p,
    uint32_t len);
static void slc_passthrough_backend_read(slc_backend_t *b);

/* The session's own backend: its greeting and login are the client's. */
const slc_backend_ops_t  slc_passthrough_ops = {
    .greeting = slc_passthrough_greeting,
    .relay = slc_passthrough_backend_read,
    .fail = slc_session_backend_fail,
};

/*
 * Clear capability bits in a greeting, in place, and put the session's id
 * where the server's thread id was: the id a client names in KILL must be
 * one the proxy can resolve (slc_mysql_kill.c), whatever server it is on.
 */
static int
slc_passthrough_patch_greeting(uint8_t *p, uint32_t len, uint32_t id)
{
    uint8_t *v = memchr(p + 1, '\0', len - 1);
    size_t   off;

    if (v == NULL) {
        return SLC_ERROR;
    }
    off = (size_t) (v + 1 - p);
    if (off + 4 > len) {
        return SLC_ERROR;
    }
    for (int i = 0; i < 4; i++) {
        p[off + i] = (uint8_t) (id >> (8 * i));
    }
    off += 4 + 8 + 1;                           /* thread id, scramble, 0 */
    if (off + 2 > len) {
        return SLC_ERROR;
    }
    p[off] &= (uint8_t) ~(SLC_CAPS_NEVER & 0xff);
    p[off + 1] &= (uint8_t) ~((SLC_CAPS_NEVER >> 8) & 0xff);
    if (off + 2 + 1 + 2 + 2 <= len) {           /* charset, status, upper */
        p[off + 5] &= (uint8_t) ~((SLC_CAPS_NEVER >> 16) & 0xff);
        p[off + 6] &= (uint8_t) ~((SLC_CAPS_NEVER >> 24) & 0xff);
    }
    return SLC_OK;
}

/* Append one raw packet (header included) to a connection's output. */
static int
slc_passthrough_queue(slc_conn_t *c, slc_buf_t **outp, const uint8_t *pkt,
    size_t n)
{
    if (slc_buf_append(outp, pkt, n) != SLC_OK) {
        return SLC_ERROR;
    }
    return slc_conn_flush(c, outp);
}

static int
slc_passthrough_greeting(slc_backend_t *b, uint8_t *p, uint32_t len)
{
    slc_session_t *s = b->session;

    slc_session_backend_register(b);
    if (slc_passthrough_patch_greeting(p, len, (uint32_t) s->id) != SLC_OK) {
        slc_session_fail(s, SLC_ER_HANDSHAKE_ERROR, "08S01",
            "Bad handshake from backend");
        return 1;
    }
    /* The server is up and has spoken: from now on the exchange waits on
       the client, whose time is auth_timeout (the session's timer), not
       connect_timeout, and whose silence is never the server's fault. */
    slc_timer_del(slc_loop, &b->timer);
    b->state = SLC_BS_RELAY;
    /* the version follows the protocol byte (checked by the patch) */
    b->mysql = memmem(p + 1, strnlen((const char *) p + 1, len - 1),
                      "MariaDB", 7) == NULL;
    s->client.on_read = slc_passthrough_client_read;
    if (slc_passthrough_queue(&s->client, &s->out, p - 4, len + 4) != SLC_OK) {
        slc_session_close(s, SLC_LOG_INFO, "client write failed");
    }
    return 1;
}

/* Learn the identity from the client's first packet; clear TLS bits. */
static int
slc_passthrough_identity(slc_session_t *s, uint8_t *p, uint32_t len)
{
    slc_mysql_hsresp_t r;

    if (slc_session_handshake_response(s, p, len, 0, &r) != SLC_OK) {
        return SLC_ERROR;
    }
    for (int i = 0; i < 4; i++) {       /* the client's 4-byte caps */
        p[i] &= (uint8_t) ~((SLC_CAPS_NEVER >> (8 * i)) & 0xff);
    }
    return SLC_OK;
}

/* A client packet of the exchange, on its way to the server. */
static int
slc_passthrough_client_packet(void *data, uint8_t *p, uint32_t len,
    uint8_t seq)
{
    slc_session_t *s = data;
    slc_backend_t *b = s->backend;

    if (seq == 1 && s->user[0] == '\0'
        && slc_passthrough_identity(s, p, len) != SLC_OK)
    {
        slc_session_fail(s, SLC_ER_HANDSHAKE_ERROR, "08S01",
            "Bad handshake");
        return SLC_ERROR;
    }
    if (slc_passthrough_queue(&b->conn, &b->out, p - 4, len + 4) != SLC_OK) {
        slc_session_close(s, SLC_LOG_ERR, "backend write failed");
        return SLC_ERROR;
    }
    return SLC_OK;
}

static void
slc_passthrough_client_read(slc_conn_t *c)
{
    slc_session_t *s = c->data;
    const char    *why;

    if (s->state != SLC_SS_RELAY || s->backend == NULL) {
        return;
    }
    if (slc_packet_loop(c, &s->in, slc_passthrough_client_packet, s, &why)
        == SLC_ERROR && why != NULL)
    {
        slc_session_close(s, SLC_LOG_INFO, why);
    }
}

/* The server said OK; the tracker was started from that OK already. */
static void
slc_passthrough_done(slc_session_t *s, slc_backend_t *b)
{
    slc_timer_del(slc_loop, &b->timer);
    slc_timer_del(slc_loop, &s->timer);
    b->state = SLC_BS_READY;
    slc_backend_handshake_done(b);
    slc_session_handshake_done(s);
    b->caps = s->caps;
    s->state = SLC_SS_READY;
    slc_session_arm_idle(s);
    slc_session_log(s, SLC_LOG_INFO, "authenticated by the backend");
    slc_session_go(s);
}

/* A server packet of the exchange, on its way to the client: SLC_DONE
   after the OK that ends it. */
static int
slc_passthrough_backend_packet(void *data, uint8_t *p, uint32_t len,
    uint8_t seq)
{
    slc_backend_t *b = data;
    slc_session_t *s = b->session;

    (void) seq;
    if (slc_passthrough_queue(&s->client, &s->out, p - 4, len + 4) != SLC_OK) {
        slc_session_close(s, SLC_LOG_INFO, "client write failed");
        return SLC_ERROR;
    }
    if (len > 0 && p[0] == SLC_MYSQL_ERR) {
        slc_session_log(s, SLC_LOG_WARN, "backend refused the login");
        slc_session_linger(s);
        return SLC_ERROR;
    }
    if (len > 0 && p[0] == SLC_MYSQL_OK) {
        slc_backend_track_start(s->backend, s->caps, s->mariadb_caps, p,
            len);
        return SLC_DONE;
    }
    return SLC_OK;
}

static void
slc_passthrough_backend_read(slc_backend_t *b)
{
    slc_session_t *s = b->session;
    const char    *why;
    int            rc;

    if (b->state != SLC_BS_RELAY) {
        return;
    }
    rc = slc_packet_loop(&b->conn, &b->in, slc_passthrough_backend_packet, b,
        &why);
    if (rc == SLC_DONE) {
        slc_passthrough_done(s, b);       /* the OK was consumed: hand over */
    } else if (rc == SLC_ERROR && why != NULL) {
        slc_session_close(s, SLC_LOG_ERR, why);
    }
}
