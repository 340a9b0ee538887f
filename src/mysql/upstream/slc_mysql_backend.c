#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_auth.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_monitor.h"
#include "slc_mysql_upstream.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

slc_backend_profile_t  slc_backend_profile;

static void slc_backend_on_read(slc_conn_t *c);
static void slc_backend_on_write(slc_conn_t *c);
static void slc_backend_timeout(slc_timer_t *t);
static int  slc_backend_connect(slc_backend_t *b, uint64_t timeout,
    slc_backend_fail_t *f);
static void slc_backend_free(void *arg);

/*
 * Report b's failure to its ops, once: the server is marked down first
 * when the failure says it may be (not once it greeted in a relayed
 * exchange: what goes wrong there is the client's doing, and a client
 * must never steer traffic away from a healthy server).
 */
static void
slc_backend_report(slc_backend_t *b, slc_backend_fail_t *f)
{
    if (b->failed) {
        return;
    }
    b->failed = 1;
    if (b->state == SLC_BS_RELAY) {
        f->down = 0;
    }
    if (f->down) {
        slc_upstream_mark_down(b->server);
    }
    b->ops->fail(b, f);
}

static void
slc_backend_fail(slc_backend_t *b, const char *why, int down)
{
    slc_backend_fail_t f = { .why = why, .down = down != 0 };

    slc_backend_report(b, &f);
}

void
slc_backend_fail_text(const slc_backend_fail_t *f, char *buf, size_t len)
{
    uint16_t    code;
    char        state[6];
    const char *msg, *err;
    size_t      mlen;

    if (f->err != NULL
        && slc_mysql_err_parse(f->err, f->err_len, &code, state, &msg, &mlen,
                               &err) == SLC_OK)
    {
        snprintf(buf, len, "refused the %s: %u %.*s",
            f->login ? "login" : "connection", code, (int) mlen, msg);
        return;
    }
    if (f->login) {
        snprintf(buf, len, "refused the login");
        return;
    }
    snprintf(buf, len, "failed: %s", f->why);
}

slc_backend_t *
slc_backend_open(slc_session_t *s, slc_upstream_server_t *us,
    const slc_backend_ops_t *ops, void *data, uint64_t connect_timeout,
    slc_backend_fail_t *f)
{
    slc_backend_t *b;

    memset(f, 0, sizeof(*f));
    if ((b = calloc(1, sizeof(*b))) == NULL) {
        slc_upstream_release(us);
        f->why = "out of memory";
        return NULL;
    }
    b->magic = SLC_BACKEND_MAGIC;
    b->session = s;
    b->server = us;
    b->role = (uint8_t) slc_monitor_role(us);
    b->counted = 1;     /* the caller's slot */
    b->ops = ops;
    b->data = data;
    if (slc_backend_connect(b, connect_timeout, f) != SLC_OK) {
        if (f->down) {
            slc_upstream_mark_down(us);
        }
        b->failed = 1;
        slc_backend_close(b);
        return NULL;
    }
    return b;
}

/* Non-blocking connect; SLC_ERROR with *f when it failed at once. */
static int
slc_backend_connect(slc_backend_t *b, uint64_t timeout,
    slc_backend_fail_t *f)
{
    slc_upstream_server_t *us = b->server;
    int                    fd, on = 1;

    b->conn.data = b;
    b->conn.on_read = slc_backend_on_read;
    b->conn.on_write = slc_backend_on_write;
    b->timer.handler = slc_backend_timeout;
    b->timer.data = b;
    fd = socket(us->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK
        | SOCK_CLOEXEC, 0);
    b->conn.fd = fd;
    if (fd == -1) {
        f->why = strerror(errno);
        return SLC_ERROR;
    }
    if (us->addr.ss_family != AF_UNIX) {
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    }
    if (connect(fd, (struct sockaddr *) &us->addr, us->addrlen) == -1
        && errno != EINPROGRESS)
    {
        f->why = strerror(errno);
        f->down = 1;
        return SLC_ERROR;
    }
    if (slc_conn_register(slc_loop, &b->conn) != SLC_OK) {
        f->why = "epoll_ctl() failed";
        return SLC_ERROR;
    }
    b->state = SLC_BS_CONNECTING;
    slc_timer_add(slc_loop, &b->timer, timeout);
    return SLC_OK;
}

/*
 * The client ended with COM_QUIT (its session's own backend carried it;
 * b's ops know, `quits`): b, another of the session's backends (a
 * router's: readwritesplit's replicas), says it too before it goes, so that its server counts a
 * clean end, as it does for the own backend.  Every other close is plain,
 * without it: the client vanished or the backend failed, and the server
 * counts an aborted client (Aborted_clients), as it would without the
 * proxy.  Plain rather than a reset (SO_LINGER 0): the server counts both
 * alike, and a FIN lets it read what was sent before.  Best effort: an
 * idle connection's socket buffer takes the 5 bytes at once.
 */
static void
slc_backend_quit_too(slc_backend_t *b)
{
    static const uint8_t  quit[] = { 1, 0, 0, 0, SLC_COM_QUIT };

    if (b->ops->quits == NULL || b->state != SLC_BS_READY
        || slc_mysql_track_quit_sent(&b->track) || b->conn.closed
        || b->out != NULL || !b->ops->quits(b))
    {
        return;
    }
    (void) slc_conn_write(&b->conn, quit, sizeof(quit));
}

void
slc_backend_close(slc_backend_t *b)
{
    slc_backend_quit_too(b);
    slc_timer_del(slc_loop, &b->timer);
    slc_backend_handshake_done(b);
    if (b->counted) {
        slc_upstream_release(b->server);
    }
    slc_conn_close(&b->conn);
    slc_buf_put(b->in);
    slc_buf_put(b->out);
    /* events of this batch may still name b: free after the batch */
    b->conn.on_read = NULL;
    slc_loop_defer(slc_loop, &b->defer, slc_backend_free, b);
}

int
slc_backend_at_rest(const slc_backend_t *b)
{
    return b->state == SLC_BS_READY && !b->conn.closed
           && slc_mysql_track_idle(&b->track)
           && !slc_mysql_track_in_trans(&b->track)
           && !slc_mysql_track_quit_sent(&b->track)
           && b->in == NULL && b->out == NULL;
}

static void
slc_backend_free(void *arg)
{
    slc_backend_t *b = arg;

    slc_mysql_track_free(&b->track);
    b->magic = 0;
    free(b);
}

void
slc_backend_track_start(slc_backend_t *b, uint32_t caps,
    uint32_t mariadb_caps, const uint8_t *ok, size_t len)
{
    int  status = slc_mysql_ok_status(ok, len);

    slc_mysql_track_init(&b->track, caps, status < 0 ? 0 : (uint16_t) status);
    slc_mysql_track_set_mariadb_caps(&b->track, mariadb_caps);
}

void
slc_backend_handshake_done(slc_backend_t *b)
{
    if (b->handshaking) {
        b->handshaking = 0;
        slc_upstream_handshake_release(b->server);
    }
}

static void
slc_backend_timeout(slc_timer_t *t)
{
    slc_backend_t *b = t->data;

    SLC_CHECK_OBJ(b, SLC_BACKEND_MAGIC);
    if (b->state == SLC_BS_READY) {
        /* its owner's wait (KILL's side connection re-arms the timer for
           its answer): the server greeted and logged it in, it is up */
        slc_backend_fail(b, "timed out waiting for the answer", 0);
        return;
    }
    slc_backend_fail(b, b->state == SLC_BS_CONNECTING ? "connect timed out"
        : "handshake timed out", 1);
}

int
slc_backend_send(slc_backend_t *b, const uint8_t *payload, size_t len)
{
    if (slc_packet_append(&b->out, payload, len, b->seq) != SLC_OK) {
        return SLC_ERROR;
    }
    b->seq++;
    return slc_conn_flush(&b->conn, &b->out);
}

static void
slc_backend_on_write(slc_conn_t *c)
{
    slc_backend_t *b = c->data;
    int            err = 0;
    socklen_t      sl = sizeof(err);

    if (b->failed) {
        return;                 /* reported: on its way out, mute */
    }
    if (b->state == SLC_BS_CONNECTING) {
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &sl) == -1) {
            err = errno;
        }
        if (err != 0) {
            slc_backend_fail(b, strerror(err), 1);
            return;
        }
        /* connected: writable, even when this runs from on_read before
           the EPOLLOUT half of the same event was looked at */
        c->writable = 1;
        b->state = SLC_BS_GREETING;
        return;
    }
    /* only flush: a send here would queue an empty packet */
    if (slc_conn_flush(c, &b->out) != SLC_OK) {
        slc_backend_fail(b, "write failed", 1);
    }
}

static void
slc_backend_learn(const slc_mysql_greeting_t *g)
{
    slc_backend_profile_t *p = &slc_backend_profile;

    strlcpy(p->version, g->server_version, sizeof(p->version));
    p->caps = g->capabilities;
    p->mariadb_caps = g->mariadb_caps;
    p->charset = g->charset;
    p->known = 1;
}

/* HandshakeResponse41 as b's identity, token from its stage1. */
static void
slc_backend_login(slc_backend_t *b, const slc_mysql_greeting_t *g)
{
    slc_backend_ident_t id;
    slc_mysql_hsresp_t  r;
    uint8_t             token[SLC_SHA1_LEN];
    uint8_t            *pkt;
    size_t              n, cap;
    int                 rc;

    memset(&id, 0, sizeof(id));
    b->ops->identity(b, &id);
    memset(&r, 0, sizeof(r));
    b->caps = (id.caps & g->capabilities) | SLC_CLIENT_PROTOCOL_41
              | SLC_CLIENT_SECURE_CONNECTION | SLC_CLIENT_PLUGIN_AUTH;
    b->caps &= ~(SLC_CLIENT_SSL | SLC_CLIENT_COMPRESS);
    r.capabilities = b->caps;
    r.mariadb_caps = id.mariadb_caps & g->mariadb_caps;
    b->mariadb_caps = r.mariadb_caps;
    b->mysql = strstr(g->server_version, "MariaDB") == NULL;
    r.max_packet = id.max_packet ? id.max_packet : 16777216;
    /* the field is one byte: over 255, a stand-in, then the SET */
    r.charset = slc_mysql_hsresp_collation(id.charset);
    b->collation = r.charset == id.charset ? 0 : id.charset;
    r.user = id.user;
    r.user_len = strlen(id.user);
    slc_mysql_native_token(g->scramble, id.stage1, token);
    /* the empty password's token is empty, whatever the scramble */
    r.auth = token;
    r.auth_len = id.empty_password ? 0 : sizeof(token);
    if (id.db != NULL) {
        r.capabilities |= SLC_CLIENT_CONNECT_WITH_DB;
        r.db = id.db;
        r.db_len = strlen(id.db);
    } else {
        r.capabilities &= ~SLC_CLIENT_CONNECT_WITH_DB;
    }
    r.plugin = SLC_MYSQL_NATIVE_PLUGIN;
    r.plugin_len = strlen(SLC_MYSQL_NATIVE_PLUGIN);
    r.attrs = id.attrs;
    r.attrs_len = id.attrs_len;
    if (r.attrs == NULL) {
        r.capabilities &= ~SLC_CLIENT_CONNECT_ATTRS;
    }
    b->caps = r.capabilities;

    cap = 128 + r.user_len + r.db_len + r.attrs_len;
    pkt = malloc(cap);
    n = pkt ? slc_mysql_hsresp_build(pkt, cap, &r) : 0;
    explicit_bzero(token, sizeof(token));
    b->seq = 1;
    b->state = SLC_BS_AUTH;
    rc = n > 0 ? slc_backend_send(b, pkt, n) : SLC_ERROR;
    if (pkt != NULL) {
        explicit_bzero(pkt, cap);       /* it held the token */
        free(pkt);
    }
    if (rc != SLC_OK) {
        slc_backend_fail(b, "cannot send handshake response", 0);
    }
}

/* A well-formed ERR. */
static int
slc_backend_is_err(const uint8_t *p, uint32_t len)
{
    uint16_t    code;
    char        state[6];
    const char *msg, *err;
    size_t      mlen;

    return len > 0 && p[0] == SLC_MYSQL_ERR
           && slc_mysql_err_parse(p, len, &code, state, &msg, &mlen, &err)
              == SLC_OK;
}

static void
slc_backend_on_greeting(slc_backend_t *b, uint8_t *p, uint32_t len)
{
    slc_mysql_greeting_t g;
    const char          *err;

    if (slc_backend_is_err(p, len)) {
        /* e.g. "Host is blocked" or too many connections on the server */
        slc_backend_fail_t f = {
            .why = "the server refused the connection", .err = p,
            .err_len = len,
        };

        slc_backend_report(b, &f);
        return;
    }
    if (slc_mysql_greeting_parse(p, len, &g, &err) != SLC_OK) {
        slc_backend_fail(b, err, 1);
        return;
    }
    slc_backend_learn(&g);
    memcpy(b->scramble, g.scramble, sizeof(b->scramble));
    b->thread_id = g.thread_id;
    if (b->ops->greeting != NULL && b->ops->greeting(b, p, len)) {
        return;
    }
    slc_backend_login(b, &g);
}

static void
slc_backend_on_switch(slc_backend_t *b, uint8_t *p, uint32_t len)
{
    const char          *plugin, *err;
    const uint8_t       *data;
    size_t               plen, dlen;
    uint8_t              token[SLC_SHA1_LEN];
    slc_backend_ident_t  id;
    int                  rc;

    if (slc_mysql_authswitch_parse(p, len, &plugin, &plen, &data, &dlen,
                                   &err) != SLC_OK)
    {
        slc_backend_fail(b, err, 0);
        return;
    }
    if (plen != strlen(SLC_MYSQL_NATIVE_PLUGIN)
        || memcmp(plugin, SLC_MYSQL_NATIVE_PLUGIN, plen) != 0
        || dlen < SLC_MYSQL_SCRAMBLE_LEN)
    {
        slc_backend_fail_t f = {
            .why = "unsupported authentication plugin", .plugin = plugin,
            .plugin_len = plen,
        };

        slc_backend_report(b, &f);
        return;
    }
    memcpy(b->scramble, data, sizeof(b->scramble));
    memset(&id, 0, sizeof(id));
    b->ops->identity(b, &id);
    slc_mysql_native_token(data, id.stage1, token);
    rc = slc_backend_send(b, token, id.empty_password ? 0 : sizeof(token));
    explicit_bzero(token, sizeof(token));
    if (rc != SLC_OK) {
        slc_backend_fail(b, "write failed", 0);
    }
}

/* The server's last OK of the login (p, still in b->in): b is ready. */
static void
slc_backend_logged_in(slc_backend_t *b, const uint8_t *p, uint32_t len)
{
    slc_timer_del(slc_loop, &b->timer);
    b->state = SLC_BS_READY;
    /* followed with what this connection negotiated: a replica may
       skip result metadata (CACHE_METADATA) as the primary does */
    slc_backend_track_start(b, b->caps, b->mariadb_caps, p, len);
    b->ops->ready(b, p, len);
}

/*
 * Logged in with a stand-in for a collation id over 255 (the response's
 * field is one byte, slc_mysql_hsresp_collation): set the real one, which
 * the server takes by its id, before b is ready.  Only then: the common
 * case costs no round trip.
 */
static void
slc_backend_set_collation(slc_backend_t *b)
{
    char  q[48];
    int   n;

    n = snprintf(q, sizeof(q), "%cSET collation_connection = %u",
        SLC_COM_QUERY, (unsigned) b->collation);
    b->seq = 0;
    b->state = SLC_BS_COLLATION;
    if (slc_backend_send(b, (const uint8_t *) q, (size_t) n) != SLC_OK) {
        slc_backend_fail(b, "cannot send SET collation_connection", 0);
    }
}

/* The answer to slc_backend_set_collation's SET: b's own, nobody else
   hears it.  The server is up (it answered): a refusal is the session's
   collation's, not the server's fault. */
static void
slc_backend_on_collation(slc_backend_t *b, uint8_t *p, uint32_t len)
{
    uint16_t    code;
    char        state[6], why[160];
    const char *msg, *err;
    size_t      mlen;

    if (len > 0 && p[0] == SLC_MYSQL_OK) {
        slc_backend_logged_in(b, p, len);
        return;
    }
    slc_timer_del(slc_loop, &b->timer);
    if (slc_mysql_err_parse(p, len, &code, state, &msg, &mlen, &err)
        != SLC_OK)
    {
        slc_backend_fail(b, "unexpected answer to SET collation_connection",
            0);
        return;
    }
    snprintf(why, sizeof(why), "the server refused collation %u: %u %.*s",
        (unsigned) b->collation, code, (int) mlen, msg);
    slc_backend_fail(b, why, 0);
}

static void
slc_backend_on_auth_reply(slc_backend_t *b, uint8_t *p, uint32_t len)
{
    if (len == 0) {
        slc_backend_fail(b, "empty packet in handshake", 0);
        return;
    }
    switch (p[0]) {
    case SLC_MYSQL_OK:
        if (b->collation != 0) {
            slc_backend_set_collation(b);
            return;
        }
        slc_backend_logged_in(b, p, len);
        return;
    case SLC_MYSQL_AUTH_SWITCH:
        slc_backend_on_switch(b, p, len);
        return;
    default: {
        /* the backend's own reason (unknown database, denied...) */
        slc_backend_fail_t f = {
            .why = "the server refused the login", .login = 1,
            .err = p[0] == SLC_MYSQL_ERR ? p : NULL, .err_len = len,
        };

        slc_timer_del(slc_loop, &b->timer);
        if (p[0] != SLC_MYSQL_ERR) {
            slc_backend_fail(b, "unexpected packet in handshake", 0);
            return;
        }
        slc_backend_report(b, &f);
        return;
    }
    }
}

/* Greeted or logging in: b reads the exchange itself. */
static int
slc_backend_logging_in(const slc_backend_t *b)
{
    return b->state == SLC_BS_GREETING || b->state == SLC_BS_AUTH
           || b->state == SLC_BS_COLLATION;
}

/* A packet of the greeting or the login exchange (slc_packet_loop). */
static int
slc_backend_on_packet(void *data, uint8_t *p, uint32_t len, uint8_t seq)
{
    slc_backend_t *b = data;

    b->seq = seq + 1;
    if (b->state == SLC_BS_GREETING) {
        slc_backend_on_greeting(b, p, len);
    } else if (b->state == SLC_BS_COLLATION) {
        slc_backend_on_collation(b, p, len);
    } else {
        slc_backend_on_auth_reply(b, p, len);
    }
    if (b->conn.closed || b->failed) {
        return SLC_ERROR;       /* failed: b is on its way out */
    }
    return slc_backend_logging_in(b) ? SLC_OK : SLC_DONE;
}

static void
slc_backend_on_read(slc_conn_t *c)
{
    slc_backend_t *b = c->data;
    const char    *why;
    int            rc;

    SLC_CHECK_OBJ(b, SLC_BACKEND_MAGIC);
    if (b->failed) {
        return;                 /* its owner may close it later */
    }
    if (b->state == SLC_BS_CONNECTING) {
        slc_backend_on_write(c);
        if (b->state == SLC_BS_CONNECTING || c->closed || b->failed) {
            return;
        }
    }
    if (b->state == SLC_BS_RELAY) {
        b->ops->relay(b);
        return;
    }
    if (!slc_backend_logging_in(b)) {
        return;
    }
    rc = slc_packet_loop(c, &b->in, slc_backend_on_packet, b, &why);
    if (rc == SLC_ERROR && why != NULL) {
        slc_backend_fail(b, why, 1);
    }
    if (rc == SLC_DONE && b->state == SLC_BS_READY && b->ops->go != NULL) {
        b->ops->go(b);
    }
}
