/*
 * Sessions handed over on reload (contract in slc_mysql_handover.h): the
 * old worker's side (at rest? encode, send, forget) and the new worker's
 * (decode, find the server block and the backend server in the new
 * configuration, adopt or close at a safe point).
 */

#include "slc_core.h"
#include "slc_channel.h"
#include "slc_log.h"
#include "slc_mysql_accounts.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_handover.h"
#include "slc_mysql_monitor.h"
#include "slc_mysql_registry.h"
#include "slc_mysql_router.h"
#include "slc_mysql_session_backend.h"
#include "slc_mysql_upstream.h"
#include "slc_worker.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>

/* A session the channel could not take now is tried again this soon. */
#define SLC_HANDOVER_RETRY_MS  20

static int          slc_handover_on;
static slc_timer_t  slc_handover_timer;
/* the message being built or read: static, wiped after each use */
static uint8_t      slc_handover_buf[SLC_CHANNEL_MAX_MSG];
static uint8_t      slc_handover_rstate[SLC_CHANNEL_MAX_MSG / 2];

int
slc_mysql_handover_active(void)
{
    return slc_handover_on;
}

static void
slc_handover_key(const slc_upstream_server_t *us, char *key, size_t n)
{
    snprintf(key, n, "%s/%s", us->upstream->name.data, us->name);
}

static void
slc_handover_backend_encode(const slc_backend_t *b, uint8_t tag,
    slc_handover_backend_t *e)
{
    *e = (slc_handover_backend_t) {
        .status = b->status, .caps = b->caps,
        .mariadb_caps = b->mariadb_caps, .thread_id = b->thread_id,
        .track_caps = b->track.caps,
        .track_mariadb_caps = b->track.mariadb_caps,
        .track_status = b->track.status, .tag = tag, .mysql = b->mysql,
    };
    memcpy(e->scramble, b->scramble, sizeof(e->scramble));
    slc_handover_key(b->server, e->server, sizeof(e->server));
}

size_t
slc_mysql_handover_encode(const slc_session_t *s, slc_backend_t *const *b,
    const uint8_t *tags, unsigned n, const uint8_t *rstate, size_t rlen,
    unsigned proc, uint8_t *buf, size_t cap)
{
    slc_handover_msg_t   m;
    size_t               size = sizeof(m) + s->attrs_len + rlen;

    if (s->backend == NULL || n > SLC_HANDOVER_EXTRA || size > cap
        || size > UINT32_MAX)
    {
        return 0;
    }
    memset(&m, 0, sizeof(m));
    m = (slc_handover_msg_t) {
        .magic = SLC_HANDOVER_MAGIC, .version = SLC_HANDOVER_VERSION,
        .size = (uint32_t) size, .attrs_len = (uint32_t) s->attrs_len,
        .router_len = (uint32_t) rlen,
        .id = s->id, .proc = proc, .auth = s->srv->auth,
        .caps = s->caps, .mariadb_caps = s->mariadb_caps,
        .max_packet = s->max_packet, .charset = s->charset,
        .has_db = (uint8_t) (s->has_db != 0),
        .with_password = (uint8_t) (s->with_password != 0),
        .cu_failures = (uint8_t) s->cu_failures,
        .nextra = n,
    };
    memcpy(m.scramble, s->scramble, sizeof(m.scramble));
    memcpy(m.stage1, s->stage1, sizeof(m.stage1));
    strlcpy(m.user, s->user, sizeof(m.user));
    strlcpy(m.db, s->db, sizeof(m.db));
    strlcpy(m.peer, s->peer, sizeof(m.peer));
    strlcpy(m.host, s->host, sizeof(m.host));
    slc_handover_backend_encode(s->backend, 0, &m.own);
    for (unsigned i = 0; i < n; i++) {
        slc_handover_backend_encode(b[i], tags[i], &m.extra[i]);
    }
    memcpy(buf, &m, sizeof(m));
    if (s->attrs_len > 0) {
        memcpy(buf + sizeof(m), s->attrs, s->attrs_len);
    }
    if (rlen > 0) {
        memcpy(buf + sizeof(m) + s->attrs_len, rstate, rlen);
    }
    explicit_bzero(&m, sizeof(m));
    return size;
}

static int
slc_handover_extra_strings_ok(const slc_handover_msg_t *m)
{
    for (unsigned i = 0; i < SLC_HANDOVER_EXTRA; i++) {
        if (memchr(m->extra[i].server, '\0', sizeof(m->extra[i].server))
            == NULL)
        {
            return 0;
        }
    }
    return 1;
}

/* Every string of the message ends within its field. */
static int
slc_handover_strings_ok(const slc_handover_msg_t *m)
{
    return memchr(m->user, '\0', sizeof(m->user)) != NULL
           && memchr(m->db, '\0', sizeof(m->db)) != NULL
           && memchr(m->peer, '\0', sizeof(m->peer)) != NULL
           && memchr(m->host, '\0', sizeof(m->host)) != NULL
           && memchr(m->own.server, '\0', sizeof(m->own.server)) != NULL
           && slc_handover_extra_strings_ok(m);
}

int
slc_mysql_handover_decode(const uint8_t *p, size_t len,
    slc_handover_msg_t *m, const uint8_t **attrs, const char **err)
{
    if (len < sizeof(*m)) {
        *err = "message too short";
        return SLC_ERROR;
    }
    memcpy(m, p, sizeof(*m));
    if (m->magic != SLC_HANDOVER_MAGIC || m->version != SLC_HANDOVER_VERSION)
    {
        *err = "not a session of this version";
    } else if (m->size != len || m->attrs_len > len - sizeof(*m)
               || m->router_len != len - sizeof(*m) - m->attrs_len)
    {
        *err = "message size does not match";
    } else if (m->nextra > SLC_HANDOVER_EXTRA) {
        *err = "too many backends";
    } else if (!slc_handover_strings_ok(m)) {
        *err = "unterminated string";
    } else if (m->id < SLC_REGISTRY_ID_BASE || m->id > UINT32_MAX) {
        *err = "bad session id";
    } else {
        *attrs = m->attrs_len > 0 ? p + sizeof(*m) : NULL;
        return SLC_OK;
    }
    explicit_bzero(m, sizeof(*m));
    return SLC_ERROR;
}

/* The router's other backends of s, all at rest: how many (in b[] with
   their tags), or -1 when one is not at rest. */
static int
slc_handover_extra(slc_session_t *s, slc_backend_t **b, uint8_t *tags)
{
    const slc_router_t *r = slc_mysql_srv_router(s->srv);
    int                 n;

    if (r->extra == NULL) {
        return 0;
    }
    n = r->extra(s, b, tags, SLC_HANDOVER_EXTRA);
    for (int i = 0; i < n; i++) {
        if (!slc_backend_at_rest(b[i])) {
            return -1;
        }
    }
    return n;
}

static void slc_handover_retry(slc_timer_t *t);

static void
slc_handover_retry_later(void)
{
    if (!slc_handover_timer.armed) {
        slc_handover_timer.handler = slc_handover_retry;
        slc_timer_add(slc_loop, &slc_handover_timer, SLC_HANDOVER_RETRY_MS);
    }
}

/* The socket stays open in the new worker: take it out of this worker's
   epoll set first (the registration is the open file's, not the fd's),
   then close this process's descriptor only. */
static void
slc_handover_forget(slc_conn_t *c)
{
    slc_conn_unregister(slc_loop, c);
    close(c->fd);
    c->fd = -1;
}

static int
slc_handover_send(slc_session_t *s, size_t n, slc_backend_t *const *extra,
    unsigned nextra)
{
    slc_registry_t *r = slc_mysql_conf(s->cycle)->registry_zone->addr;
    int             fds[2 + SLC_HANDOVER_EXTRA] = { s->client.fd,
                                                     s->backend->conn.fd };
    int             rc;

    for (unsigned i = 0; i < nextra; i++) {
        fds[2 + i] = extra[i]->conn.fd;
    }

    /* the new worker claims the id: free it first (KILL misses it only
       while the message is in flight) */
    if (s->registered) {
        slc_registry_del(r, (uint32_t) s->id);
    }
    rc = slc_channel_send(slc_worker_slot, slc_mysql_self(),
        slc_handover_buf, n, fds, 2 + nextra);
    if (rc != SLC_OK && s->registered
        && slc_registry_claim(r, slc_worker_proc, (uint32_t) s->id)
           == SLC_OK)
    {
        const slc_backend_t *b = s->backend;
        slc_mysql_conf_t    *mc = slc_mysql_conf(s->cycle);

        slc_registry_set_backend(r, (uint32_t) s->id,
            slc_upstream_stats_index(mc, b->server->stats) + 1, b->thread_id);
        slc_registry_set_client(r, (uint32_t) s->id, s->user, s->host);
    } else if (rc != SLC_OK) {
        s->registered = 0;
    }
    return rc;
}

/*
 * The state that goes after the connect attributes (router_len bytes of
 * the message): the router's (a 4-byte length, then its save), then the
 * filters' (slc_cmd_filters_save).  Filters whose state does not fit are
 * left out: theirs is rebuilt, or they work without it.
 */
static size_t
slc_handover_state(slc_session_t *s, const slc_router_t *r)
{
    uint8_t *buf = slc_handover_rstate;
    size_t   cap = sizeof(slc_handover_rstate), rlen, flen;

    rlen = r->save != NULL ? r->save(s, buf + 4, cap - 4) : 0;
    slc_mysql_le_put(buf, rlen, 4);
    if (slc_session_fwd->save(s, buf + 4 + rlen, cap - 4 - rlen, &flen)
        != SLC_OK)
    {
        flen = 0;
    }
    return rlen + flen == 0 ? 0 : 4 + rlen + flen;
}

int
slc_mysql_handover_session(slc_session_t *s)
{
    slc_backend_t      *extra[SLC_HANDOVER_EXTRA];
    uint8_t             tags[SLC_HANDOVER_EXTRA];
    const slc_router_t *r;
    int                 nextra;
    size_t              n, rlen;
    int                 rc;

    if (s->no_handover) {
        return SLC_ERROR;
    }
    if (slc_mysql_srv_router(s->srv)->adopt == NULL) {
        s->no_handover = 1;
        return SLC_ERROR;
    }
    nextra = slc_handover_extra(s, extra, tags);
    if (nextra < 0) {
        return SLC_AGAIN;               /* one of them is busy: later */
    }
    r = slc_mysql_srv_router(s->srv);
    rlen = slc_handover_state(s, r);
    n = slc_mysql_handover_encode(s, extra, tags, (unsigned) nextra,
        slc_handover_rstate, rlen, slc_worker_proc, slc_handover_buf,
        sizeof(slc_handover_buf));
    if (n == 0 && rlen > 0) {
        /* without the router's state, which it copes without */
        n = slc_mysql_handover_encode(s, extra, tags, (unsigned) nextra,
            NULL, 0, slc_worker_proc, slc_handover_buf,
            sizeof(slc_handover_buf));
    }
    explicit_bzero(slc_handover_rstate, rlen);
    if (n == 0) {
        s->no_handover = 1;
        slc_session_log(s, SLC_LOG_INFO, "cannot be handed over: connect "
            "attributes too long");
        return SLC_ERROR;
    }
    rc = slc_handover_send(s, n, extra, (unsigned) nextra);
    explicit_bzero(slc_handover_buf, n);
    if (rc == SLC_AGAIN) {
        slc_handover_retry_later();
        return SLC_AGAIN;
    }
    if (rc != SLC_OK) {
        s->no_handover = 1;
        return SLC_ERROR;
    }
    slc_handover_forget(&s->client);
    slc_handover_forget(&s->backend->conn);
    for (int i = 0; i < nextra; i++) {
        slc_handover_forget(&extra[i]->conn);   /* the router closes it */
    }
    s->registered = 0;
    /* gives the backend's connection slot back: the new worker takes one */
    slc_session_close(s, SLC_LOG_INFO, "handed over to the new worker");
    return SLC_OK;
}

/* Every session at rest goes; the others wait for their next rest. */
static void
slc_handover_sweep(void)
{
    slc_session_t *s, *next;

    for (s = TAILQ_FIRST(&slc_sessions.sessions); s != NULL; s = next) {
        next = TAILQ_NEXT(s, link);
        if (s->state == SLC_SS_READY) {
            slc_session_idle_check(s);
        }
    }
}

/*
 * A session comes to rest when the router forwards the end of a response
 * (slc_session_idle_check).  This timer covers the rest: a send the
 * channel refused for now, a session whose last command had no response
 * (COM_STMT_CLOSE).  It runs only while sessions remain.
 */
static void
slc_handover_retry(slc_timer_t *t)
{
    (void) t;
    slc_handover_sweep();
    if (slc_sessions.count > 0) {
        slc_timer_add(slc_loop, &slc_handover_timer, 100);
    }
}

void
slc_mysql_handover_start(void)
{
    slc_handover_on = 1;
    slc_handover_sweep();
    if (slc_sessions.count > 0) {
        slc_handover_retry_later();
    }
}

/* ---- the new worker ---------------------------------------------------- */

/* Whether listen `l` accepts connections whose local address is `a`. */
static int
slc_handover_listen_match(const slc_listen_t *l,
    const struct sockaddr_storage *a)
{
    if (l->addr.ss_family != a->ss_family) {
        return 0;
    }
    if (a->ss_family == AF_UNIX) {
        return strcmp(((const struct sockaddr_un *) &l->addr)->sun_path,
                      ((const struct sockaddr_un *) a)->sun_path) == 0;
    }
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *x = (const void *) &l->addr;
        const struct sockaddr_in *y = (const void *) a;
        return x->sin_port == y->sin_port
               && (x->sin_addr.s_addr == htonl(INADDR_ANY)
                   || x->sin_addr.s_addr == y->sin_addr.s_addr);
    }
    if (a->ss_family == AF_INET6) {
        const struct sockaddr_in6 *x = (const void *) &l->addr;
        const struct sockaddr_in6 *y = (const void *) a;
        return x->sin6_port == y->sin6_port
               && (IN6_IS_ADDR_UNSPECIFIED(&x->sin6_addr)
                   || IN6_ARE_ADDR_EQUAL(&x->sin6_addr, &y->sin6_addr));
    }
    return 0;
}

/* The server {} of the new configuration that listens where the client
   connected, or NULL. */
static slc_mysql_srv_t *
slc_handover_find_srv(int fd)
{
    struct sockaddr_storage a;
    socklen_t               al = sizeof(a);

    memset(&a, 0, sizeof(a));
    if (getsockname(fd, (struct sockaddr *) &a, &al) == -1) {
        return NULL;
    }
    for (slc_listen_t *l = slc_worker_cycle->listens; l != NULL;
         l = l->next)
    {
        if (l->handler == slc_session_accept
            && slc_handover_listen_match(l, &a))
        {
            return l->srv;
        }
    }
    return NULL;
}

static slc_upstream_server_t *
slc_handover_find_server(slc_upstream_t *up, const char *key)
{
    char k[SLC_HANDOVER_KEY];

    for (unsigned i = 0; up != NULL && i < up->nservers; i++) {
        slc_handover_key(&up->servers[i], k, sizeof(k));
        if (strcmp(k, key) == 0) {
            return &up->servers[i];
        }
    }
    return NULL;
}

/* auth local: the user must still be configured, with the password the
   client proved it knows. */
static int
slc_handover_user_ok(const slc_mysql_srv_t *srv, const slc_handover_msg_t *m)
{
    slc_mysql_cred_t c;
    uint8_t          stage2[SLC_SHA1_LEN];
    int              same;

    if (slc_accounts_cred_find(slc_worker_cycle, srv, m->user, m->host, &c)
        != SLC_OK || c.plugin[0] != '\0')
    {
        same = 0;
    } else if (c.hash.is_empty) {
        same = !m->with_password;
    } else {
        slc_sha1(m->stage1, sizeof(m->stage1), stage2);
        same = m->with_password
               && memcmp(stage2, c.hash.stage2, sizeof(stage2)) == 0;
        explicit_bzero(stage2, sizeof(stage2));
    }
    explicit_bzero(&c, sizeof(c));
    return same;
}

/* Why the new configuration cannot take the session, or NULL. */
static const char *
slc_handover_refusal(const slc_mysql_srv_t *srv,
    const slc_upstream_server_t *us, const slc_handover_msg_t *m)
{
    if (srv == NULL) {
        return "its listen address was removed by reload";
    }
    if (us == NULL) {
        return "backend server removed by reload";
    }
    if (srv->auth != m->auth) {
        return "auth changed by reload";
    }
    if (m->auth == SLC_AUTH_LOCAL && !slc_handover_user_ok(srv, m)) {
        return "user removed or password changed by reload";
    }
    if (slc_mysql_srv_router(srv)->adopt == NULL) {
        return "the router cannot take a handed-over session";
    }
    return NULL;
}

/* Closed at a safe point (at rest): nothing of the client's is cut. */
static void
slc_handover_refuse(const slc_handover_msg_t *m, int *fds, const char *why)
{
    char euser[4 * SLC_MAX_USER + 1];

    slc_log_escape(euser, sizeof(euser), m->user, strlen(m->user), 1);
    slc_log(SLC_LOG_INFO, "*%llu closed at a safe point: %s, client: %s, "
        "user: \"%s\", backend: %s", (unsigned long long) m->id, why,
        m->peer, euser, m->own.server);
    for (unsigned i = 0; i < 2 + m->nextra; i++) {
        close(fds[i]);
    }
}

static void
slc_handover_fill(slc_session_t *s, const slc_handover_msg_t *m)
{
    s->id = m->id;
    s->caps = m->caps;
    s->mariadb_caps = m->mariadb_caps;
    s->max_packet = m->max_packet;
    s->charset = m->charset;
    s->has_db = m->has_db;
    s->with_password = m->with_password;
    s->cu_failures = m->cu_failures & 3;
    s->adopted = 1;
    memcpy(s->scramble, m->scramble, sizeof(s->scramble));
    memcpy(s->stage1, m->stage1, sizeof(s->stage1));
    strlcpy(s->user, m->user, sizeof(s->user));
    strlcpy(s->db, m->db, sizeof(s->db));
    strlcpy(s->peer, m->peer, sizeof(s->peer));
    strlcpy(s->host, m->host, sizeof(s->host));
}

/* The backend connection, logged in: it takes a slot on its server. */
static slc_backend_t *
slc_handover_backend(slc_session_t *s, slc_upstream_server_t *us, int fd,
    const slc_handover_backend_t *m)
{
    slc_backend_t *b = calloc(1, sizeof(*b));

    if (b == NULL) {
        return NULL;
    }
    b->magic = SLC_BACKEND_MAGIC;
    b->conn.fd = fd;
    b->conn.data = b;
    b->ops = &slc_session_backend_ops;  /* its driver sets its own */
    b->session = s;
    b->server = us;
    b->role = (uint8_t) slc_monitor_role(us);
    b->state = SLC_BS_READY;
    b->caps = m->caps;
    b->mariadb_caps = m->mariadb_caps;
    b->mysql = m->mysql;
    b->status = m->status;
    b->thread_id = m->thread_id;
    memcpy(b->scramble, m->scramble, sizeof(b->scramble));
    slc_mysql_track_init(&b->track, m->track_caps, m->track_status);
    slc_mysql_track_set_mariadb_caps(&b->track, m->track_mariadb_caps);
    slc_upstream_take(us);
    b->counted = 1;
    return b;
}

static void
slc_handover_register(slc_session_t *s)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(s->cycle);
    slc_registry_t   *r = mc->registry_zone->addr;

    if (slc_registry_claim(r, slc_worker_proc, (uint32_t) s->id) != SLC_OK)
    {
        slc_session_log(s, SLC_LOG_WARN, "its id is taken in the session "
            "registry: KILL cannot name it");
        return;
    }
    s->registered = 1;
    slc_session_backend_register(s->backend);
}

static void slc_handover_adopt_extra(slc_session_t *s,
    const slc_handover_msg_t *m, int *fds);

static void
slc_handover_adopt(const slc_handover_msg_t *m, const uint8_t *attrs,
    const uint8_t *rstate, int *fds)
{
    slc_mysql_srv_t       *srv = slc_handover_find_srv(fds[0]);
    slc_upstream_server_t *us = srv != NULL
        ? slc_handover_find_server(srv->upstream, m->own.server) : NULL;
    const char            *why = slc_handover_refusal(srv, us, m);
    const slc_router_t    *r;
    slc_session_t         *s;

    if (why != NULL) {
        slc_handover_refuse(m, fds, why);
        return;
    }
    s = slc_session_new_adopted(fds[0], srv);
    if (s == NULL) {
        slc_handover_refuse(m, fds, "out of memory");
        return;
    }
    slc_handover_fill(s, m);
    s->backend = slc_handover_backend(s, us, fds[1], &m->own);
    if (s->backend == NULL) {
        close(fds[1]);
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
        return;
    }
    if (m->attrs_len > 0 && (s->attrs = malloc(m->attrs_len)) != NULL) {
        memcpy(s->attrs, attrs, m->attrs_len);
        s->attrs_len = m->attrs_len;
    }
    slc_handover_register(s);
    s->state = SLC_SS_READY;
    if (slc_conn_register(slc_loop, &s->client) != SLC_OK
        || slc_conn_register(slc_loop, &s->backend->conn) != SLC_OK)
    {
        slc_session_close(s, SLC_LOG_ERR, "epoll_ctl() failed");
        return;
    }
    /* look at both sockets once: what the client sent meanwhile waits */
    s->client.readable = s->client.writable = 1;
    s->backend->conn.readable = s->backend->conn.writable = 1;
    slc_session_arm_idle(s);
    slc_session_log(s, SLC_LOG_INFO, "handed over by process index %u",
        m->proc);
    r = slc_mysql_srv_router(s->srv);
    if (m->router_len >= 4) {
        size_t rl = (size_t) slc_mysql_le_get(rstate, 4);

        if (rl <= m->router_len - 4) {
            if (rl > 0 && r->restore != NULL) {
                r->restore(s, rstate + 4, rl);
            }
            (void) slc_session_fwd->stash(s, rstate + 4 + rl,
                                          m->router_len - 4 - rl);
        }
    }
    slc_handover_adopt_extra(s, m, fds + 2);
}

/*
 * The router's other backends go to its adopt hook with the session; one
 * whose server the reload removed is closed here (the router may open
 * another later).  Refused, the session closes with them.
 */
static void
slc_handover_adopt_extra(slc_session_t *s, const slc_handover_msg_t *m,
    int *fds)
{
    slc_backend_t *extra[SLC_HANDOVER_EXTRA];
    uint8_t        tags[SLC_HANDOVER_EXTRA];
    unsigned       n = 0;
    const char    *why;

    for (unsigned i = 0; i < m->nextra; i++) {
        slc_upstream_server_t *us = slc_handover_find_server(
            s->srv->upstream, m->extra[i].server);
        slc_backend_t         *b = us != NULL
            ? slc_handover_backend(s, us, fds[i], &m->extra[i]) : NULL;

        if (b == NULL || slc_conn_register(slc_loop, &b->conn) != SLC_OK) {
            slc_session_log(s, SLC_LOG_INFO, "a backend of its router's "
                "(%s) did not come along: %s", m->extra[i].server,
                us == NULL ? "removed by reload" : "out of memory");
            if (b != NULL) {
                slc_backend_close(b);
            } else {
                close(fds[i]);
            }
            continue;
        }
        b->conn.readable = b->conn.writable = 1;
        tags[n] = m->extra[i].tag;
        extra[n++] = b;
    }
    why = slc_mysql_srv_router(s->srv)->adopt(s, extra, tags, n);
    if (why != NULL) {
        for (unsigned i = 0; i < n; i++) {
            slc_backend_close(extra[i]);
        }
        slc_session_close(s, SLC_LOG_INFO, why);
    }
}

void
slc_mysql_handover_recv(int *fds, unsigned nfds, const uint8_t *msg,
    size_t len)
{
    slc_handover_msg_t  m;
    const uint8_t      *attrs = NULL;
    const char         *err = NULL;
    int                 ok;

    ok = slc_mysql_handover_decode(msg, len, &m, &attrs, &err) == SLC_OK;
    if (!ok || nfds != 2 + m.nextra) {
        slc_log(SLC_LOG_ALERT, "bad session handed over: %s",
            ok ? "descriptors missing" : err);
        explicit_bzero(&m, sizeof(m));
        for (unsigned i = 0; i < nfds; i++) {
            close(fds[i]);
        }
        return;
    }
    slc_handover_adopt(&m, attrs, msg + sizeof(m) + m.attrs_len, fds);
    explicit_bzero(&m, sizeof(m));
}
