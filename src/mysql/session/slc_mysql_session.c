#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_change_user.h"
#include "slc_mysql_proxycmd.h"
#include "slc_mysql_handover.h"
#include "slc_mysql_registry.h"
#include "slc_mysql_router.h"
#include "slc_mysql_session.h"
#include "slc_mysql_traffic.h"
#include "slc_mysql_upstream_admin.h"
#include "slc_worker.h"

#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

slc_sessions_t  slc_sessions = {
    .sessions = TAILQ_HEAD_INITIALIZER(slc_sessions.sessions),
};

static void slc_session_free(void *arg);
static void slc_session_on_write(slc_conn_t *c);
static void slc_session_timeout(slc_timer_t *t);
static void slc_session_idle_timeout(slc_session_t *s);

/*
 * The message may quote what a client or a server sent (a database name in
 * an ERR, a reason): it is escaped as a whole, and the user name, which is
 * the client's own bytes, is escaped as a quoted field.
 */
static void
slc_session_vlog(slc_session_t *s, const slc_upstream_server_t *us,
    int level, const char *fmt, va_list ap)
{
    char    msg[1024], emsg[1024], euser[4 * SLC_MAX_USER + 1];
    int     n;

    n = vsnprintf(msg, sizeof(msg), fmt, ap);
    n = n < 0 ? 0 : slc_min(n, (int) sizeof(msg) - 1);
    slc_log_escape(emsg, sizeof(emsg), msg, (size_t) n, 0);
    slc_log_escape(euser, sizeof(euser), s->user, strlen(s->user), 1);
    slc_log(level, "*%llu %s, client: %s, user: \"%s\"%s%s",
        (unsigned long long) s->id, emsg, s->peer, euser,
        us ? ", backend: " : "", us ? us->name : "");
}

void
slc_session_log(slc_session_t *s, int level, const char *fmt, ...)
{
    va_list ap;

    if (!slc_log_enabled(level)) {
        return;
    }
    va_start(ap, fmt);
    slc_session_vlog(s, s->backend ? s->backend->server : NULL, level, fmt,
        ap);
    va_end(ap);
}

void
slc_session_log_server(slc_session_t *s, const slc_upstream_server_t *us,
    int level, const char *fmt, ...)
{
    va_list ap;

    if (!slc_log_enabled(level)) {
        return;
    }
    va_start(ap, fmt);
    slc_session_vlog(s, us, level, fmt, ap);
    va_end(ap);
}

/* The address of `ss` as text, without the port ("unix" sockets:
   "localhost"); returns the port, 0 for a unix socket. */
static unsigned
slc_session_host(const struct sockaddr_storage *ss, char *host, size_t n)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *sin = (const void *) ss;
        inet_ntop(AF_INET, &sin->sin_addr, host, (socklen_t) n);
        return ntohs(sin->sin_port);
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *sin6 = (const void *) ss;
        inet_ntop(AF_INET6, &sin6->sin6_addr, host, (socklen_t) n);
        return ntohs(sin6->sin6_port);
    }
    strlcpy(host, "localhost", n);
    return 0;
}

static void
slc_session_peer(slc_session_t *s, const struct sockaddr_storage *ss)
{
    unsigned port = slc_session_host(ss, s->host, sizeof(s->host));

    if (ss->ss_family == AF_INET) {
        snprintf(s->peer, sizeof(s->peer), "%s:%u", s->host, port);
    } else if (ss->ss_family == AF_INET6) {
        snprintf(s->peer, sizeof(s->peer), "[%s]:%u", s->host, port);
    } else {
        strlcpy(s->peer, "unix", sizeof(s->peer));
    }
}

/* A client of the block was refused for `reason` (slc_mysql_traffic.h). */
static void
slc_session_refused(const slc_mysql_srv_t *srv, unsigned reason)
{
    slc_traffic_t *t = slc_traffic_row(srv);

    if (t != NULL) {
        slc_traffic_add(&t->refused[reason], 1);
    }
}

/* Over a limit: tell the client why, best effort, and close. */
static void
slc_session_refuse(int fd, const char *msg)
{
    uint8_t pkt[256];
    size_t  n;

    n = slc_mysql_err_build(pkt + 4, sizeof(pkt) - 4, SLC_ER_CON_COUNT_ERROR,
        "08004", msg);
    slc_mysql_hdr_write(pkt, (uint32_t) n, 0);
    (void) !send(fd, pkt, n + 4, MSG_NOSIGNAL | MSG_DONTWAIT);
    close(fd);
}

/*
 * The id the client sees as its thread id and names in KILL: from the
 * shared registry, so unique across workers and reloads.  A full registry
 * still gives a unique id; that session just cannot be named in a KILL.
 */
static void
slc_session_register(slc_session_t *s)
{
    slc_registry_t *r = slc_mysql_conf(s->cycle)->registry_zone->addr;
    uint32_t        id;
    int             rc = slc_registry_add(r, slc_worker_proc, &id);

    s->id = id;
    if (rc == SLC_AGAIN && !__atomic_exchange_n(&r->full_logged, 1,
                                                __ATOMIC_RELAXED))
    {
        slc_log(SLC_LOG_WARN, "session registry full: KILL cannot name "
            "some sessions (raise worker_connections)");
    }
    s->registered = rc == SLC_OK;
}

/*
 * max_handshakes_per_host: one address may have that many sessions of
 * this worker in their handshake; a client over it is refused before any
 * backend is contacted, and the log says so once a second.  Unix-socket
 * clients all share one "address", so they are not limited.
 */
static int
slc_session_over_host_limit(int fd, slc_listen_t *l, slc_peer_t *p,
    const struct sockaddr_storage *ss)
{
    static slc_log_burst_t  burst;
    slc_mysql_srv_t        *srv = l->srv;
    unsigned long long      max = (unsigned long long)
                                  srv->max_handshakes_per_host;
    char                    host[INET6_ADDRSTRLEN], msg[160];
    unsigned                held;

    if (l->is_unix || max == 0 || slc_peer_handshakes(p) <= max) {
        return 0;
    }
    slc_session_host(ss, host, sizeof(host));
    if (slc_log_burst(&burst, slc_loop->now, &held)) {
        slc_log(SLC_LOG_WARN, "client %s reached max_handshakes_per_host "
            "(%llu) on %s, refusing its new connections with ERR 1040 (%u "
            "more refused since the last such line)", host, max, l->text,
            held);
    }
    snprintf(msg, sizeof(msg), "Too many connections (max_handshakes_per_"
        "host: %llu connections from %s are already logging in)", max,
        host);
    slc_session_refuse(fd, msg);
    slc_session_refused(srv, SLC_REFUSED_HANDSHAKES_PER_HOST);
    return 1;
}

/* A session of this worker on client socket fd, for a server block:
   what every session starts with, counted among the worker's. */
static slc_session_t *
slc_session_alloc(int fd, slc_mysql_srv_t *srv)
{
    slc_session_t *s = calloc(1, sizeof(*s));

    if (s == NULL) {
        return NULL;
    }
    s->magic = SLC_SESSION_MAGIC;
    s->cycle = slc_worker_cycle;
    s->srv = srv;
    s->client.fd = fd;
    s->client.data = s;
    s->client.on_write = slc_session_on_write;
    s->timer.handler = slc_session_timeout;
    s->timer.data = s;
    s->delay.data = s;
    TAILQ_INSERT_TAIL(&slc_sessions.sessions, s, link);
    slc_sessions.count++;
    s->traffic = slc_traffic_row(srv);
    if (s->traffic != NULL) {
        s->client.bytes = s->traffic->bytes;
    }
    slc_traffic_session(srv, 0, 1);
    return s;
}

static slc_session_t *
slc_session_new(int fd, slc_listen_t *l, const struct sockaddr_storage *ss,
    slc_peer_t *p)
{
    slc_session_t *s = slc_session_alloc(fd, l->srv);

    if (s == NULL) {
        return NULL;
    }
    s->addr = p;
    slc_traffic_session(l->srv, 1, 0);
    slc_session_register(s);
    s->client.on_read = slc_auth_local_read;
    slc_session_peer(s, ss);
    return s;
}

static void
slc_session_init_conn(slc_session_t *s, slc_listen_t *l)
{
    int on = 1;

    if (!l->is_unix) {
        (void) setsockopt(s->client.fd, IPPROTO_TCP, TCP_NODELAY, &on,
            sizeof(on));
    }
    if (slc_conn_register(slc_loop, &s->client) != SLC_OK) {
        slc_session_close(s, SLC_LOG_ERR, "epoll_ctl() failed");
        return;
    }
    if (s->srv->auth == SLC_AUTH_PASSTHROUGH) {
        s->state = SLC_SS_RELAY;
        slc_timer_add(slc_loop, &s->timer,
            (uint64_t) s->srv->timeouts->auth_timeout);
        slc_session_start_router(s);
        return;
    }
    slc_timer_add(slc_loop, &s->timer,
        (uint64_t) s->srv->timeouts->auth_timeout);
    if (slc_auth_local_greet(s) != SLC_OK) {
        slc_session_close(s, SLC_LOG_ERR, "cannot send greeting");
    }
}

void
slc_session_accept(int fd, slc_listen_t *l, const struct sockaddr_storage *ss)
{
    slc_peer_t    *p;
    slc_session_t *s;

    if (slc_sessions.count >= slc_worker_cycle->worker_connections) {
        slc_log(SLC_LOG_WARN, "%u worker_connections are not enough, "
            "refusing a client on %s", slc_sessions.count, l->text);
        slc_session_refuse(fd, "Too many connections");
        slc_session_refused(l->srv, SLC_REFUSED_WORKER_CONNECTIONS);
        return;
    }
    p = slc_peer_hold(ss);
    if (p != NULL && slc_session_over_host_limit(fd, l, p, ss)) {
        slc_peer_release(p);
        return;
    }
    s = p != NULL ? slc_session_new(fd, l, ss, p) : NULL;
    if (s == NULL) {
        slc_log(SLC_LOG_ERR, "out of memory accepting on %s", l->text);
        if (p != NULL) {
            slc_peer_release(p);
        }
        close(fd);
        return;
    }
    slc_session_log(s, SLC_LOG_INFO, "accepted on %s", l->text);
    slc_session_init_conn(s, l);
}

int
slc_session_flush(slc_session_t *s)
{
    return slc_conn_flush(&s->client, &s->out);
}

int
slc_session_send(slc_session_t *s, const uint8_t *payload, size_t len)
{
    if (slc_packet_append(&s->out, payload, len, s->seq) != SLC_OK) {
        return SLC_ERROR;
    }
    s->seq++;
    return slc_session_flush(s);
}

/* A session closes with an ERR: a refusal before it was logged in, an
   error of the proxy's after. */
static void
slc_session_count_fail(slc_session_t *s, uint16_t code)
{
    if (s->traffic == NULL) {
        return;
    }
    if (s->state == SLC_SS_READY) {
        slc_traffic_add(&s->traffic->errors[SLC_ERRK_PROXY], 1);
        return;
    }
    slc_traffic_add(&s->traffic->refused[
        code == SLC_ER_ACCESS_DENIED_ERROR ? SLC_REFUSED_AUTH
        : code == SLC_ER_CON_COUNT_ERROR ? SLC_REFUSED_HANDSHAKES
        : s->state <= SLC_SS_SWITCH ? SLC_REFUSED_PROTOCOL
        : SLC_REFUSED_BACKEND], 1);
}

static void
slc_session_vfail(slc_session_t *s, int level, uint16_t code,
    const char *state, const char *fmt, va_list ap)
{
    uint8_t pkt[600];
    char    msg[512];
    size_t  n;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    slc_session_log(s, level, "closing with error %u: %s", code, msg);
    slc_session_count_fail(s, code);
    n = slc_mysql_err_build(pkt, sizeof(pkt), code, state, msg);
    if (slc_session_send(s, pkt, n) != SLC_OK) {
        slc_session_close(s, SLC_LOG_INFO, "closed after error");
        return;
    }
    slc_session_linger(s);
}

void
slc_session_fail(slc_session_t *s, uint16_t code, const char *state,
    const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    slc_session_vfail(s, code == SLC_ER_ACCESS_DENIED_ERROR ? SLC_LOG_WARN
        : SLC_LOG_ERR, code, state, fmt, ap);
    va_end(ap);
}

void
slc_session_fail_at(slc_session_t *s, int level, uint16_t code,
    const char *state, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    slc_session_vfail(s, level, code, state, fmt, ap);
    va_end(ap);
}

void
slc_session_linger(slc_session_t *s)
{
    if (s->out == NULL) {
        slc_session_close(s, SLC_LOG_INFO, "closed after error");
        return;
    }
    /* The rest goes out from on_write; then the session closes. */
    if (s->backend != NULL) {
        slc_backend_close(s->backend);
        s->backend = NULL;
    }
    s->state = SLC_SS_CLOSING;
    s->client.on_read = slc_session_on_write;
    s->client.on_write = slc_session_on_write;
    slc_timer_add(slc_loop, &s->timer, 5000);
}

static void
slc_session_on_write(slc_conn_t *c)
{
    slc_session_t *s = c->data;

    SLC_CHECK_OBJ(s, SLC_SESSION_MAGIC);
    if (slc_session_flush(s) != SLC_OK) {
        slc_session_close(s, SLC_LOG_INFO, "client write failed");
        return;
    }
    if (s->state == SLC_SS_CLOSING && s->out == NULL) {
        slc_session_close(s, SLC_LOG_INFO, "closed after error");
    }
}

static void
slc_session_timeout(slc_timer_t *t)
{
    slc_session_t *s = t->data;

    SLC_CHECK_OBJ(s, SLC_SESSION_MAGIC);
    switch (s->state) {
    case SLC_SS_GREETING:
    case SLC_SS_SWITCH:
    case SLC_SS_DELAY:
    case SLC_SS_RELAY:
        slc_session_refused(s->srv, SLC_REFUSED_PROTOCOL);
        slc_session_close(s, SLC_LOG_INFO, "client timed out in handshake");
        break;
    case SLC_SS_CLOSING:
        slc_session_close(s, SLC_LOG_INFO, "client did not read the error");
        break;
    case SLC_SS_READY:
        slc_session_idle_timeout(s);
        break;
    default:
        /* backend timers are their own */
        break;
    }
}

/*
 * idle_timeout: the timer is not moved on every packet (that would cost a
 * tree update per query); reads only stamp last_active, and when the timer
 * fires it is pushed to last_active + idle_timeout if there was activity.
 */
static void
slc_session_idle_timeout(slc_session_t *s)
{
    uint64_t idle = (uint64_t) s->srv->timeouts->idle_timeout;
    uint64_t since = slc_loop->now - s->last_active;

    if (since >= idle && s->backend != NULL
        && slc_mysql_track_idle(&s->backend->track))
    {
        if (s->traffic != NULL) {
            slc_traffic_add(&s->traffic->errors[SLC_ERRK_TIMEOUT], 1);
        }
        slc_session_close(s, SLC_LOG_INFO, "closed after idle_timeout");
        return;
    }
    slc_timer_add(slc_loop, &s->timer, since < idle ? idle - since : idle);
}

void
slc_session_close(slc_session_t *s, int level, const char *why)
{
    if (s->state == SLC_SS_CLOSED) {
        return;
    }
    slc_session_log(s, level, "%s", why);
    s->state = SLC_SS_CLOSED;
    slc_timer_del(slc_loop, &s->timer);
    slc_timer_del(slc_loop, &s->delay);
    slc_session_handshake_done(s);
    slc_kill_cancel(s);
    slc_session_fwd->close(s);
    if (s->backend != NULL) {
        slc_backend_close(s->backend);
        s->backend = NULL;
    }
    slc_conn_close(&s->client);
    slc_buf_put(s->in);
    slc_buf_put(s->out);
    s->in = s->out = NULL;
    TAILQ_REMOVE(&slc_sessions.sessions, s, link);
    slc_sessions.count--;
    slc_traffic_session(s->srv, 0, -1);
    if (s->registered) {
        slc_registry_del(slc_mysql_conf(s->cycle)->registry_zone->addr,
            (uint32_t) s->id);
        s->registered = 0;
    }
    slc_loop_defer(slc_loop, &s->defer, slc_session_free, s);
}

static void
slc_session_free(void *arg)
{
    slc_session_t *s = arg;

    free(s->attrs);
    free(s->filter_state);
    free(s->router_data);
    slc_session_fwd->free(s);
    if (s->change_user != NULL) {
        explicit_bzero(s->change_user, sizeof(*s->change_user));
        free(s->change_user);
    }
    explicit_bzero(s, sizeof(*s));
    free(s);
}

static int
slc_session_take_identity(slc_session_t *s, const slc_mysql_hsresp_t *r,
    int keep_attrs, const char **err)
{
    if (r->user_len > SLC_MAX_USER) {
        *err = "user name longer than " SLC_STR(SLC_MAX_USER) " bytes";
        return SLC_ERROR;
    }
    if (r->db_len > SLC_MAX_DB) {
        *err = "database name longer than " SLC_STR(SLC_MAX_DB) " bytes";
        return SLC_ERROR;
    }
    memcpy(s->user, r->user, r->user_len);
    s->user[r->user_len] = '\0';
    if (r->db != NULL && (r->capabilities & SLC_CLIENT_CONNECT_WITH_DB)) {
        memcpy(s->db, r->db, r->db_len);
        s->db[r->db_len] = '\0';
        s->has_db = r->db_len > 0;
    }
    s->caps = r->capabilities & ~SLC_CAPS_NEVER;
    s->mariadb_caps = r->mariadb_caps;
    s->max_packet = r->max_packet;
    s->charset = r->charset;
    if (keep_attrs && r->attrs != NULL && r->attrs_len > 0) {
        s->attrs = malloc(r->attrs_len);
        if (s->attrs == NULL) {
            *err = "out of memory";
            return SLC_ERROR;
        }
        memcpy(s->attrs, r->attrs, r->attrs_len);
        s->attrs_len = r->attrs_len;
    }
    return SLC_OK;
}

int
slc_session_handshake_response(slc_session_t *s, const uint8_t *p,
    uint32_t len, int keep_attrs, slc_mysql_hsresp_t *r)
{
    const char *err = NULL;

    if (slc_mysql_hsresp_parse(p, len, r, &err) == SLC_OK
        && slc_session_take_identity(s, r, keep_attrs, &err) == SLC_OK)
    {
        return SLC_OK;
    }
    if (len == 32) {
        err = "client asked for TLS, which this listener does not offer";
    }
    slc_session_log(s, SLC_LOG_INFO, "bad handshake response: %s", err);
    return SLC_ERROR;
}

void
slc_session_start_router(slc_session_t *s)
{
    s->state = s->srv->auth == SLC_AUTH_PASSTHROUGH ? SLC_SS_RELAY
                                                    : SLC_SS_BACKEND;
    slc_mysql_srv_router(s->srv)->start(s);
}

const slc_session_forward_t  *slc_session_fwd;

void
slc_session_forward_set(const slc_session_forward_t *f)
{
    slc_session_fwd = f;
}

void
slc_session_go(slc_session_t *s)
{
    slc_session_fwd->go(s);
}

int
slc_session_client_in(slc_session_t *s)
{
    slc_buf_t  *b = s->in;
    ssize_t     n;

    if (b == NULL && (b = s->in = slc_buf_get()) == NULL) {
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
        return SLC_ERROR;
    }
    if (slc_buf_len(b) == 0) {
        b->pos = b->last = b->start;
    } else if (slc_buf_room(b) == 0) {
        slc_buf_compact(b);             /* held bytes of a command */
    }
    n = slc_conn_read(&s->client, b->last, slc_buf_room(b));
    if (n < 0 || s->client.eof) {
        slc_session_close(s, SLC_LOG_INFO, "client closed");
        return SLC_ERROR;
    }
    b->last += n;
    s->last_active = slc_loop->now;
    slc_proxycmd_scan(s);
    return SLC_OK;
}

void
slc_session_handshake_done(slc_session_t *s)
{
    if (s->addr != NULL) {
        slc_peer_release(s->addr);
        s->addr = NULL;
    }
}

void
slc_session_ready(slc_session_t *s, const uint8_t *ok, size_t ok_len)
{
    slc_timer_del(slc_loop, &s->timer);
    slc_session_handshake_done(s);
    s->state = SLC_SS_READY;
    slc_session_arm_idle(s);
    if (slc_session_send(s, ok, ok_len) != SLC_OK) {
        slc_session_close(s, SLC_LOG_INFO, "client write failed");
        return;
    }
    slc_session_log(s, SLC_LOG_INFO, "authenticated");
}

void
slc_session_arm_idle(slc_session_t *s)
{
    s->last_active = slc_loop->now;
    if (s->srv->timeouts->idle_timeout > 0) {
        slc_timer_add(slc_loop, &s->timer,
            (uint64_t) s->srv->timeouts->idle_timeout);
    }
}

int
slc_session_at_rest(const slc_session_t *s)
{
    const slc_backend_t *b = s->backend;

    return s->state == SLC_SS_READY && b != NULL && !s->client.closed
           && slc_backend_at_rest(b) && slc_session_fwd->at_rest(s)
           && !s->held && !s->paused && s->change_user == NULL
           && s->kill == NULL && s->in == NULL && s->out == NULL
           && s->scan.left == 0 && !s->scan.more;
}

void
slc_session_idle_check(slc_session_t *s)
{
    if (!slc_session_at_rest(s)) {
        return;
    }
    if (slc_mysql_handover_active()
        && slc_mysql_handover_session(s) != SLC_ERROR)
    {
        return;     /* handed over to the new worker, or again soon */
    }
    if (slc_sessions.closing) {
        slc_session_close(s, SLC_LOG_INFO, "closed idle session on shutdown");
    } else if (slc_sessions.maint && slc_upstream_in_maint(s->backend->server))
    {
        slc_session_close(s, SLC_LOG_INFO, "closed: its server is in "
            "maintenance");
    } else if (slc_sessions.maint
               && slc_mysql_srv_router(s->srv)->maint != NULL)
    {
        (void) slc_mysql_srv_router(s->srv)->maint(s, 1);
    }
}

unsigned
slc_sessions_count(void)
{
    return slc_sessions.count;
}

void
slc_sessions_close_idle(void)
{
    slc_session_t *s, *next;

    slc_sessions.closing = 1;       /* and the others once they are idle */
    for (s = TAILQ_FIRST(&slc_sessions.sessions); s != NULL; s = next) {
        next = TAILQ_NEXT(s, link);
        if (s->state != SLC_SS_READY && s->state != SLC_SS_CLOSED
            && s->state != SLC_SS_CLOSING)
        {
            /* still authenticating: nothing of the client's is in flight */
            slc_session_close(s, SLC_LOG_INFO, "closed on shutdown");
            continue;
        }
        slc_session_idle_check(s);
    }
}

int
slc_session_read_auth(slc_session_t *s, uint8_t **p, uint32_t *len)
{
    const char *why;
    uint8_t     seq;
    int         rc = slc_packet_read(&s->client, &s->in, p, len, &seq, &why);

    if (rc == SLC_ERROR) {
        slc_session_close(s, SLC_LOG_INFO, why);
        return SLC_ERROR;
    }
    if (rc == SLC_OK && seq != s->seq) {
        slc_session_fail(s, SLC_ER_NET_PACKETS_OUT_OF_ORDER, "08S01",
            "Got packets out of order");
        return SLC_ERROR;
    }
    if (rc == SLC_OK) {
        s->seq++;
    }
    return rc;
}

slc_session_t *
slc_session_new_adopted(int fd, slc_mysql_srv_t *srv)
{
    return slc_session_alloc(fd, srv);
}
