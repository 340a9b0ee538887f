#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_auth.h"
#include "slc_mysql_accounts.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_registry.h"
#include "slc_mysql_cmd.h"
#include "slc_mysql_router.h"
#include "slc_mysql_upstream.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

slc_backend_profile_t  slc_backend_profile;

static void slc_backend_on_read(slc_conn_t *c);
static void slc_backend_on_write(slc_conn_t *c);
static void slc_backend_timeout(slc_timer_t *t);
static int  slc_backend_connect(slc_backend_t *b);
static void slc_backend_free(void *arg);

/*
 * A backend a router or the proxy opened besides the session's own
 * (b->ops != NULL) failed: logged at info, naming its server (the line's
 * context names the session's own backend, another server).  Its owner
 * decides what the client hears (ops->retry, ops->fail) and logs that:
 * a read run elsewhere is nothing the client saw, an ERR is.
 */
static void __attribute__((format(printf, 2, 3)))
slc_backend_log_other(slc_backend_t *b, const char *fmt, ...)
{
    char    msg[512];
    va_list ap;

    va_start(ap, fmt);
    (void) vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    slc_session_log(b->session, SLC_LOG_INFO, "backend server '%s' %s",
        b->server->name, msg);
}

/* Fail the session because of this backend: ERR to the client. */
static void
slc_backend_fail(slc_backend_t *b, const char *why, int down)
{
    slc_session_t *s = b->session;

    if (b->state == SLC_BS_RELAY) {
        /* the server greeted us: it is up, and what goes wrong in the
           relayed exchange is the client's doing (a client must never
           steer traffic away from a healthy server) */
        down = 0;
    }
    if (down) {
        slc_upstream_mark_down(b->server);
    }
    if (b->ops != NULL) {
        slc_backend_log_other(b, "failed: %s", why);
        slc_cmd_backend_fail(b, why);
        return;
    }
    slc_session_log(s, SLC_LOG_ERR, "backend failed: %s", why);
    if (down && b->state <= SLC_BS_GREETING
        && slc_mysql_srv_router(s->srv)->retry != NULL
        && (s->state == SLC_SS_BACKEND || s->state == SLC_SS_RELAY))
    {
        /* nothing was said to the client yet: another server may do */
        s->backend = NULL;
        slc_backend_close(b);
        slc_mysql_srv_router(s->srv)->retry(s);
        return;
    }
    slc_session_fail(s, SLC_ER_CONNECT_TO_BACKEND, "HY000",
        "Can't connect to backend server '%s' (%s)", b->server->name, why);
}

/*
 * auth passthrough opens a backend for a client nobody has authenticated:
 * max_handshakes bounds how many such clients one server holds, so
 * anonymous connects cannot fill its max_connections.  Over it the client
 * hears ERR 1040 and the server is not contacted; the log says so once
 * a second, not once a client.
 */
static int
slc_backend_take_handshake(slc_session_t *s, slc_upstream_server_t *us)
{
    uint64_t max = (uint64_t) s->srv->max_handshakes;
    unsigned held;

    if (s->srv->auth != SLC_AUTH_PASSTHROUGH
        || slc_upstream_handshake_acquire(us, max))
    {
        return SLC_OK;
    }
    if (slc_log_burst(&us->handshake_burst, slc_loop->now, &held)) {
        slc_log(SLC_LOG_WARN, "backend server %s reached max_handshakes "
            "(%llu clients in their handshake), refusing new clients with "
            "ERR 1040 (%u more refused since the last such line)", us->name,
            (unsigned long long) max, held);
    }
    slc_upstream_release(us);
    slc_session_fail_at(s, SLC_LOG_INFO, SLC_ER_CON_COUNT_ERROR, "08004",
        "Too many connections (max_handshakes: %llu clients are already "
        "logging in to the backend server)", (unsigned long long) max);
    return SLC_ERROR;
}

int
slc_backend_open(slc_session_t *s, slc_upstream_server_t *us)
{
    slc_backend_t *b;

    if (slc_backend_take_handshake(s, us) != SLC_OK) {
        return SLC_ERROR;
    }
    b = calloc(1, sizeof(*b));
    if (b == NULL) {
        if (s->srv->auth == SLC_AUTH_PASSTHROUGH) {
            slc_upstream_handshake_release(us);
        }
        /* the slot slc_upstream_pick() took goes back, and the client
           hears why: nothing else holds this session now */
        slc_upstream_release(us);
        slc_session_fail(s, SLC_ER_CONNECT_TO_BACKEND, "HY000",
            "Can't connect to backend server '%s' (out of memory)",
            us->name);
        return SLC_ERROR;
    }
    b->session = s;
    b->server = us;
    s->backend = b;
    b->counted = 1;     /* the caller acquired a slot with the pick */
    b->handshaking = s->srv->auth == SLC_AUTH_PASSTHROUGH;
    return slc_backend_connect(b);
}

slc_backend_t *
slc_backend_open_aux(slc_session_t *s, slc_upstream_server_t *us,
    const slc_backend_ops_t *ops, void *data, int *full)
{
    slc_backend_t *b;

    *full = !slc_upstream_acquire(us);
    if (*full) {
        return NULL;
    }
    if ((b = calloc(1, sizeof(*b))) == NULL) {
        slc_upstream_release(us);
        return NULL;
    }
    b->session = s;
    b->server = us;
    b->counted = 1;
    b->ops = ops;
    b->data = data;
    return slc_backend_connect(b) == SLC_OK ? b : NULL;
}

/* Non-blocking connect; a failure is reported through slc_backend_fail. */
static int
slc_backend_connect(slc_backend_t *b)
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
        slc_backend_fail(b, strerror(errno), 0);
        return SLC_ERROR;
    }
    if (us->addr.ss_family != AF_UNIX) {
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    }
    if (connect(fd, (struct sockaddr *) &us->addr, us->addrlen) == -1
        && errno != EINPROGRESS)
    {
        slc_backend_fail(b, strerror(errno), 1);
        return SLC_ERROR;
    }
    if (slc_conn_register(slc_loop, &b->conn) != SLC_OK) {
        slc_backend_fail(b, "epoll_ctl() failed", 0);
        return SLC_ERROR;
    }
    b->state = SLC_BS_CONNECTING;
    slc_timer_add(slc_loop, &b->timer,
        (uint64_t) b->session->srv->timeouts->connect_timeout);
    return SLC_OK;
}

/*
 * The client ended with COM_QUIT (its session's own backend carried it):
 * b, another of the session's backends (a router's: readwritesplit's
 * replicas), says it too before it goes, so that its server counts a
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
    const slc_backend_t  *own = b->session->backend;

    if (own == NULL || own == b || !slc_mysql_track_quit_sent(&own->track)
        || b->state != SLC_BS_READY || slc_mysql_track_quit_sent(&b->track)
        || b->conn.closed || b->out != NULL)
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

static void
slc_backend_free(void *arg)
{
    slc_backend_t *b = arg;

    slc_mysql_track_free(&b->track);
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

/* KILL from any worker can now find this session's backend. */
static void
slc_backend_register(slc_backend_t *b)
{
    slc_session_t    *s = b->session;
    slc_mysql_conf_t *mc = slc_mysql_conf(s->cycle);

    if (s->registered && s->backend == b) {
        slc_registry_set_backend(mc->registry_zone->addr, (uint32_t) s->id,
            slc_mysql_stats_index(mc, b->server->stats) + 1, b->thread_id);
    }
}

/* The empty password's token is empty, whatever the scramble. */
static int
slc_backend_empty_password(slc_session_t *s)
{
    slc_mysql_cred_t c;
    int              empty;

    empty = slc_mysql_cred_find(s->cycle, s->srv, s->user, s->host, &c)
            != SLC_OK || c.hash.is_empty;
    explicit_bzero(&c, sizeof(c));
    return empty;
}

/* HandshakeResponse41 as the session's user, token from stage1. */
static void
slc_backend_login(slc_backend_t *b, const slc_mysql_greeting_t *g)
{
    slc_session_t      *s = b->session;
    slc_mysql_hsresp_t  r;
    uint8_t             token[SLC_SHA1_LEN];
    uint8_t            *pkt;
    size_t              n, cap;

    memset(&r, 0, sizeof(r));
    b->caps = (s->caps & g->capabilities) | SLC_CLIENT_PROTOCOL_41
              | SLC_CLIENT_SECURE_CONNECTION | SLC_CLIENT_PLUGIN_AUTH;
    b->caps &= ~(SLC_CLIENT_SSL | SLC_CLIENT_COMPRESS);
    r.capabilities = b->caps;
    r.mariadb_caps = s->mariadb_caps & g->mariadb_caps;
    b->mariadb_caps = r.mariadb_caps;
    b->mysql = strstr(g->server_version, "MariaDB") == NULL;
    r.max_packet = s->max_packet ? s->max_packet : 16777216;
    r.charset = s->charset;
    r.user = s->user;
    r.user_len = strlen(s->user);
    slc_mysql_native_token(g->scramble, s->stage1, token);
    /* the empty password's token is empty */
    r.auth = token;
    r.auth_len = slc_backend_empty_password(s) ? 0 : sizeof(token);
    if (s->has_db) {
        r.capabilities |= SLC_CLIENT_CONNECT_WITH_DB;
        r.db = s->db;
        r.db_len = strlen(s->db);
    } else {
        r.capabilities &= ~SLC_CLIENT_CONNECT_WITH_DB;
    }
    r.plugin = SLC_MYSQL_NATIVE_PLUGIN;
    r.plugin_len = strlen(SLC_MYSQL_NATIVE_PLUGIN);
    r.attrs = s->attrs;
    r.attrs_len = s->attrs_len;
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
    if (n == 0 || slc_backend_send(b, pkt, n) != SLC_OK) {
        free(pkt);
        slc_backend_fail(b, "cannot send handshake response", 0);
        return;
    }
    free(pkt);
}

static void
slc_backend_on_greeting(slc_backend_t *b, uint8_t *p, uint32_t len)
{
    slc_mysql_greeting_t g;
    const char          *err;

    if (len > 0 && p[0] == SLC_MYSQL_ERR) {
        /* e.g. "Host is blocked" or too many connections on the server */
        uint16_t code;
        char     state[6];
        const char *msg;
        size_t   mlen;
        if (slc_mysql_err_parse(p, len, &code, state, &msg, &mlen, &err)
            == SLC_OK)
        {
            if (b->ops != NULL) {
                slc_backend_log_other(b, "refused the connection: %u %.*s",
                    code, (int) mlen, msg);
                slc_cmd_backend_fail(b, "the server refused the connection");
                return;
            }
            slc_session_log(b->session, SLC_LOG_ERR, "backend refused: "
                "%u %.*s", code, (int) mlen, msg);
            slc_session_fail(b->session, code, state, "%.*s", (int) mlen,
                msg);
            return;
        }
    }
    if (slc_mysql_greeting_parse(p, len, &g, &err) != SLC_OK) {
        slc_backend_fail(b, err, 1);
        return;
    }
    slc_backend_learn(&g);
    memcpy(b->scramble, g.scramble, sizeof(b->scramble));
    b->thread_id = g.thread_id;
    slc_backend_register(b);
    if (b->session->srv->auth == SLC_AUTH_PASSTHROUGH) {
        slc_backend_relay_greeting(b, p, len);
        return;
    }
    slc_backend_login(b, &g);
}

static void
slc_backend_on_switch(slc_backend_t *b, uint8_t *p, uint32_t len)
{
    const char    *plugin, *err;
    const uint8_t *data;
    size_t         plen, dlen;
    uint8_t        token[SLC_SHA1_LEN];

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
        if (b->ops != NULL) {
            slc_cmd_backend_fail(b, "unsupported authentication plugin");
            return;
        }
        slc_session_fail(b->session, SLC_ER_ACCESS_DENIED_ERROR, "28000",
            "Backend asks for authentication plugin '%.*s', which sluice "
            "does not support with auth local", (int) plen, plugin);
        return;
    }
    memcpy(b->scramble, data, sizeof(b->scramble));
    slc_mysql_native_token(data, b->session->stage1, token);
    if (slc_backend_send(b, token, slc_backend_empty_password(b->session)
                         ? 0 : sizeof(token)) != SLC_OK) {
        slc_backend_fail(b, "write failed", 0);
    }
    explicit_bzero(token, sizeof(token));
}

/* The server's reason, when its answer to a login is an ERR. */
static void
slc_backend_log_refused_login(slc_backend_t *b, const uint8_t *p,
    uint32_t len)
{
    uint16_t    code;
    char        state[6];
    const char *msg, *err;
    size_t      mlen;

    if (p[0] == SLC_MYSQL_ERR
        && slc_mysql_err_parse(p, len, &code, state, &msg, &mlen, &err)
           == SLC_OK)
    {
        slc_backend_log_other(b, "refused the login: %u %.*s", code,
            (int) mlen, msg);
        return;
    }
    slc_backend_log_other(b, "refused the login");
}

static void
slc_backend_on_auth_reply(slc_backend_t *b, uint8_t *p, uint32_t len)
{
    slc_session_t *s = b->session;

    if (len == 0) {
        slc_backend_fail(b, "empty packet in handshake", 0);
        return;
    }
    if (b->ops != NULL && p[0] != SLC_MYSQL_AUTH_SWITCH) {
        slc_timer_del(slc_loop, &b->timer);
        if (p[0] != SLC_MYSQL_OK) {
            slc_backend_log_refused_login(b, p, len);
            slc_cmd_backend_fail(b, "the server refused the login");
            return;
        }
        b->state = SLC_BS_READY;
        /* followed with what this connection negotiated: a replica may
           skip result metadata (CACHE_METADATA) as the primary does */
        slc_backend_track_start(b, b->caps, b->mariadb_caps, p, len);
        b->ops->ready(b);
        return;
    }
    switch (p[0]) {
    case SLC_MYSQL_OK:
        slc_timer_del(slc_loop, &b->timer);
        b->state = SLC_BS_READY;
        slc_backend_track_start(b, b->caps, b->mariadb_caps, p, len);
        slc_session_ready(s, p, len);     /* the router starts later */
        return;
    case SLC_MYSQL_ERR:
        /* the backend's own reason (unknown database, denied...) */
        slc_session_log(s, SLC_LOG_WARN, "backend refused the login");
        if (slc_session_send(s, p, len) != SLC_OK) {
            slc_session_close(s, SLC_LOG_INFO, "client write failed");
            return;
        }
        slc_session_linger(s);
        return;
    case SLC_MYSQL_AUTH_SWITCH:
        slc_backend_on_switch(b, p, len);
        return;
    default:
        slc_backend_fail(b, "unexpected packet in handshake", 0);
    }
}

/* A packet of the greeting or the login exchange (slc_packet_loop). */
static int
slc_backend_on_packet(void *data, uint8_t *p, uint32_t len, uint8_t seq)
{
    slc_backend_t *b = data;

    b->seq = seq + 1;
    if (b->state == SLC_BS_GREETING) {
        slc_backend_on_greeting(b, p, len);
    } else {
        slc_backend_on_auth_reply(b, p, len);
    }
    if (b->conn.closed || (b->ops == NULL && b->session->backend != b)) {
        return SLC_ERROR;       /* failed: b is on its way out */
    }
    return b->state == SLC_BS_GREETING || b->state == SLC_BS_AUTH
           ? SLC_OK : SLC_DONE;
}

static void
slc_backend_on_read(slc_conn_t *c)
{
    slc_backend_t *b = c->data;
    const char    *why;
    int            rc;

    if (b->state == SLC_BS_CONNECTING) {
        slc_backend_on_write(c);
        if (b->state == SLC_BS_CONNECTING || c->closed) {
            return;
        }
    }
    if (b->state == SLC_BS_RELAY) {
        slc_backend_relay_start(b);
        return;
    }
    if (b->state == SLC_BS_GREETING || b->state == SLC_BS_AUTH) {
        rc = slc_packet_loop(c, &b->in, slc_backend_on_packet, b, &why);
        if (rc == SLC_ERROR && why != NULL) {
            slc_backend_fail(b, why, 1);
        }
        if (rc != SLC_DONE) {
            return;
        }
    }
    if (b->state == SLC_BS_READY && b->ops == NULL
        && b->session->state == SLC_SS_READY)
    {
        slc_session_go(b->session);
    }
}
