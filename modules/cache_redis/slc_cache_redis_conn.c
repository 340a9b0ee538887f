/*
 * A worker's connection to a Redis service (slc_cache_redis_conn.h): hiredis'
 * async API on the worker's own loop, never a blocking call.
 *
 * The adapter.  The loop is edge-triggered (slc_event.h): the socket is
 * registered once for both directions, and an edge comes only when
 * readiness changes.  hiredis asks for reading and writing through its
 * addRead/delRead/addWrite/delWrite hooks and reads at most 16 KiB per
 * redisAsyncHandleRead: so a read edge reads until the socket holds
 * nothing more (FIONREAD), and a request for writing is tried at once
 * (posted: hiredis is never re-entered from its own hook), the edge
 * taking over when the socket was full.  hiredis may free its context in
 * any call (an error, a disconnect): its cleanup hook clears ours first,
 * and every path checks that the context is still there.
 *
 * The connection.  On connect: HELLO-free RESP2 setup, pipelined: AUTH
 * (with `user` when given), SELECT (unless 0), CLIENT SETNAME
 * "sluice:SERVICE:PID".  A failure (refused, AUTH denied, dropped) is
 * logged when it differs from the last one, with Redis' own reason, and
 * the worker tries again after its breaker's back-off, from 100 ms
 * doubling to 30 s;
 * the cache goes on in shared memory meanwhile.  The password is unmasked
 * on the stack for the AUTH command and wiped (hiredis copies it into its
 * output buffer, which it frees once written).
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_worker.h"
#include "slc_cache_redis_conn.h"
#include "slc_cache_redis_slots.h"

#include <hiredis.h>
#include <async.h>
#include <netdb.h>
#include <sys/ioctl.h>
#include <sys/un.h>

#define SLC_REDIS_RETRY_MIN  100
#define SLC_REDIS_RETRY_MAX  30000


/* --- the adapter ---------------------------------------------------------- */

static void slc_cache_redis_io_write(void *arg);

static void
slc_cache_redis_on_read(slc_conn_t *c)
{
    slc_cache_redis_conn_t *rc = c->data;
    int                     n;

    c->readable = 1;
    while (rc->ac != NULL && rc->want_read) {
        redisAsyncHandleRead(rc->ac);
        if (rc->ac == NULL || ioctl(c->fd, FIONREAD, &n) != 0 || n <= 0) {
            break;
        }
    }
}

static void
slc_cache_redis_on_write(slc_conn_t *c)
{
    slc_cache_redis_conn_t *rc = c->data;

    c->writable = 1;
    if (rc->ac != NULL && rc->want_write) {
        redisAsyncHandleWrite(rc->ac);
    }
}

static void
slc_cache_redis_io_write(void *arg)
{
    slc_cache_redis_conn_t *rc = arg;

    if (rc->ac != NULL && rc->want_write) {
        redisAsyncHandleWrite(rc->ac);
    }
}

static void
slc_cache_redis_add_read(void *arg)
{
    slc_cache_redis_conn_t *rc = arg;

    rc->want_read = 1;
}

static void
slc_cache_redis_del_read(void *arg)
{
    slc_cache_redis_conn_t *rc = arg;

    rc->want_read = 0;
}

static void
slc_cache_redis_add_write(void *arg)
{
    slc_cache_redis_conn_t *rc = arg;

    rc->want_write = 1;
    slc_post(slc_loop, &rc->write_ev, slc_cache_redis_io_write, rc);
}

static void
slc_cache_redis_del_write(void *arg)
{
    slc_cache_redis_conn_t *rc = arg;

    rc->want_write = 0;
}

/* hiredis is freeing its context: it closes the socket itself. */
static void
slc_cache_redis_cleanup(void *arg)
{
    slc_cache_redis_conn_t *rc = arg;

    slc_post_cancel(slc_loop, &rc->write_ev);
    if (rc->conn.fd >= 0) {
        slc_conn_unregister(slc_loop, &rc->conn);
        rc->conn.fd = -1;
    }
    rc->ac = NULL;
    rc->want_read = rc->want_write = 0;
}

static int
slc_cache_redis_attach(slc_cache_redis_conn_t *rc, redisAsyncContext *ac)
{
    rc->ac = ac;
    ac->ev.data = rc;
    ac->ev.addRead = slc_cache_redis_add_read;
    ac->ev.delRead = slc_cache_redis_del_read;
    ac->ev.addWrite = slc_cache_redis_add_write;
    ac->ev.delWrite = slc_cache_redis_del_write;
    ac->ev.cleanup = slc_cache_redis_cleanup;
    rc->conn = (slc_conn_t) {
        .fd = ac->c.fd, .on_read = slc_cache_redis_on_read,
        .on_write = slc_cache_redis_on_write, .data = rc,
    };
    return slc_conn_register(slc_loop, &rc->conn);
}


/* --- the connection ------------------------------------------------------- */

static void slc_cache_redis_connect(slc_cache_redis_conn_t *rc);

static void
slc_cache_redis_retry_timer(slc_timer_t *t)
{
    slc_cache_redis_conn_t *rc = t->data;

    slc_cache_redis_breaker_allow(&rc->breaker, slc_loop->now);
    slc_cache_redis_connect(rc);
}

/* The address rc dials, as logged. */
static const char *
slc_cache_redis_peer(const slc_cache_redis_conn_t *rc)
{
    return rc->node[0] != '\0' ? rc->node
           : rc->rs->server[rc->server % rc->rs->nservers].name;
}

/* Something failed: log it if it is news, drop the connection, and try
   again after the back-off (the next `server`, when there are several). */
void
slc_cache_redis_conn_fail(slc_cache_redis_conn_t *rc, const char *what,
    const char *why, size_t len)
{
    char esc[256], line[320];

    slc_log_escape(esc, sizeof(esc), why, len, 0);
    snprintf(line, sizeof(line), "%s: %s", what, esc);
    if (strcmp(line, rc->last_error) != 0) {
        slc_log(SLC_LOG_ERR, "redis \"%s\": %s (%s%s; the cache goes on "
            "in shared memory)", rc->rs->name, line, rc->tag != NULL
            ? rc->tag : "", slc_cache_redis_peer(rc));
        strlcpy(rc->last_error, line, sizeof(rc->last_error));
    }
    if (rc->ready && rc->on_down != NULL) {
        rc->on_down(rc);
    }
    rc->ready = 0;
    if (rc->ac != NULL) {
        redisAsyncContext *ac = rc->ac;

        ac->data = NULL;            /* its callbacks find no connection */
        redisAsyncFree(ac);         /* (its cleanup hook clears rc->ac) */
    }
    rc->queued = 0;                 /* their replies will not come */
    if (rc->node[0] == '\0') {
        rc->server++;
    }
    /* the breaker's back-off: one failure opens it, each failed retry
       (its probe) doubles the wait */
    slc_cache_redis_breaker_failure(&rc->breaker, slc_loop->now);
    if (!rc->retry.armed) {
        slc_timer_add(slc_loop, &rc->retry,
            rc->breaker.until > slc_loop->now
            ? rc->breaker.until - slc_loop->now : 1);
    }
}

void
slc_cache_redis_setup_done(slc_cache_redis_conn_t *rc)
{
    if (--rc->pending > 0) {
        return;
    }
    rc->ready = 1;
    slc_cache_redis_breaker_success(&rc->breaker);
    slc_log(rc->last_error[0] ? SLC_LOG_NOTICE : SLC_LOG_INFO,
        "redis \"%s\": %sconnected to %s%s", rc->rs->name,
        rc->tag != NULL ? rc->tag : "", slc_cache_redis_peer(rc),
        rc->cluster != NULL ? " (a cluster)" : "");
    rc->last_error[0] = '\0';
    if (rc->on_ready != NULL) {
        rc->on_ready(rc);
    }
}

/* A reply to the setup (AUTH, SELECT, CLIENT SETNAME). */
static void
slc_cache_redis_setup_reply(redisAsyncContext *ac, void *r, void *what)
{
    slc_cache_redis_conn_t *rc = ac->data;
    redisReply             *reply = r;

    if (rc == NULL || reply == NULL) {
        return;                     /* freed, or dropped: handled there */
    }
    if (reply->type == REDIS_REPLY_ERROR) {
        slc_cache_redis_conn_fail(rc, what, reply->str, reply->len);
        return;
    }
    slc_cache_redis_setup_done(rc);
}

void
slc_cache_redis_setup_command(slc_cache_redis_conn_t *rc,
    void (*fn)(redisAsyncContext *, void *, void *), void *arg, int argc,
    const char **argv, const size_t *len)
{
    if (redisAsyncCommandArgv(rc->ac, fn, arg, argc, argv, len) == REDIS_OK) {
        rc->pending++;
    }
}

static void
slc_cache_redis_command(slc_cache_redis_conn_t *rc, const char *what,
    int argc, const char **argv, const size_t *len)
{
    slc_cache_redis_setup_command(rc, slc_cache_redis_setup_reply,
        (void *) what, argc, argv, len);
}

/* AUTH (the password unmasked on the stack for the call), SELECT,
   CLIENT SETNAME: queued before the connection is up, pipelined. */
static void
slc_cache_redis_setup(slc_cache_redis_conn_t *rc)
{
    const slc_cache_redis_service_t *rs = rc->rs;
    char        pw[257], db[24], name[128];
    const char *argv[3];
    size_t      len[3];
    int         n;

    rc->pending = 0;
    if ((n = slc_cache_redis_auth_argv(rs, pw, argv, len)) > 0) {
        slc_cache_redis_command(rc, "AUTH", n, argv, len);
        explicit_bzero(pw, sizeof(pw));
    }
    if (rs->db != 0) {
        snprintf(db, sizeof(db), "%lld", rs->db);
        argv[0] = "SELECT", len[0] = 6;
        argv[1] = db, len[1] = strlen(db);
        slc_cache_redis_command(rc, "SELECT", 2, argv, len);
    }
    snprintf(name, sizeof(name), "sluice:%s:%d%s%.*s", rs->name,
        (int) getpid(), rc->tag != NULL ? ":" : "",
        rc->tag != NULL ? (int) strcspn(rc->tag, " ") : 0,
        rc->tag != NULL ? rc->tag : "");
    argv[0] = "CLIENT", len[0] = 6;
    argv[1] = "SETNAME", len[1] = 7;
    argv[2] = name, len[2] = strlen(name);
    slc_cache_redis_command(rc, "CLIENT SETNAME", 3, argv, len);
    if (rc->on_setup != NULL) {
        rc->on_setup(rc);
    }
}

static void
slc_cache_redis_on_connect(const redisAsyncContext *ac, int status)
{
    slc_cache_redis_conn_t *rc = ac->data;

    if (rc != NULL && status != REDIS_OK) {
        /* hiredis frees the context after this */
        rc->ac = NULL;
        slc_cache_redis_conn_fail(rc, "connect", ac->errstr,
            strlen(ac->errstr));
    }
}

static void
slc_cache_redis_on_disconnect(const redisAsyncContext *ac, int status)
{
    slc_cache_redis_conn_t *rc = ac->data;

    if (rc != NULL) {
        rc->ac = NULL;              /* being freed by hiredis */
        slc_cache_redis_conn_fail(rc, "connection lost",
            status == REDIS_OK ? "closed" : ac->errstr,
            status == REDIS_OK ? 6 : strlen(ac->errstr));
    }
}

int
slc_cache_redis_auth_argv(const slc_cache_redis_service_t *rs, char *pw,
    const char **argv, size_t *len)
{
    int n = 0;

    if (rs->auth.password == NULL) {
        return 0;
    }
    for (size_t i = 0; i < rs->auth.password_len; i++) {
        pw[i] = (char) (rs->auth.password[i] ^ rs->auth.pad[i]);
    }
    argv[n] = "AUTH", len[n++] = 4;
    if (rs->auth.user != NULL) {
        argv[n] = rs->auth.user, len[n] = strlen(rs->auth.user), n++;
    }
    argv[n] = pw, len[n++] = rs->auth.password_len;
    return n;
}

const char *
slc_cache_redis_server_host(const slc_cache_redis_server_t *s, char *host,
    size_t hlen, int *port)
{
    char p[16];

    if (s->addr.ss_family == AF_UNIX) {
        *port = -1;
        return ((const struct sockaddr_un *) &s->addr)->sun_path;
    }
    if (getnameinfo((const struct sockaddr *) &s->addr, s->addrlen, host,
                    (socklen_t) hlen, p, sizeof(p),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    {
        return NULL;
    }
    *port = atoi(p);
    return host;
}

const char *
slc_cache_redis_target(const slc_cache_redis_service_t *rs, const char *node,
    unsigned server, char *buf, size_t len, int *port)
{
    if (node[0] != '\0') {
        return slc_cache_redis_node_addr(node, buf, len, port) == SLC_OK
               ? buf : NULL;
    }
    return slc_cache_redis_server_host(&rs->server[server % rs->nservers],
                                       buf, len, port);
}

/* A numeric host and port (or the socket's path) for hiredis: rc's node,
   or its `server`. */
static redisAsyncContext *
slc_cache_redis_dial(const slc_cache_redis_conn_t *rc)
{
    char        buf[NI_MAXHOST];
    int         port;
    const char *host = slc_cache_redis_target(rc->rs, rc->node, rc->server,
                                              buf, sizeof(buf), &port);

    if (host == NULL) {
        return NULL;
    }
    return port < 0 ? redisAsyncConnectUnix(host)
                    : redisAsyncConnect(host, port);
}

static void
slc_cache_redis_connect(slc_cache_redis_conn_t *rc)
{
    redisAsyncContext *ac = slc_cache_redis_dial(rc);

    if (ac == NULL) {
        slc_cache_redis_conn_fail(rc, "connect", "out of memory or not a "
            "numeric address", 38);
        return;
    }
    if (ac->err) {
        slc_cache_redis_conn_fail(rc, "connect", ac->errstr,
            strlen(ac->errstr));
        redisAsyncFree(ac);
        return;
    }
    ac->data = rc;
    if (slc_cache_redis_attach(rc, ac) != SLC_OK) {
        rc->ac = NULL;
        ac->data = NULL;
        redisAsyncFree(ac);
        slc_cache_redis_conn_fail(rc, "connect", "cannot register", 16);
        return;
    }
    redisAsyncSetConnectCallback(ac, slc_cache_redis_on_connect);
    redisAsyncSetDisconnectCallback(ac, slc_cache_redis_on_disconnect);
    slc_cache_redis_setup(rc);
}


/* --- connections --------------------------------------------------------- */

slc_cache_redis_conn_t *
slc_cache_redis_conn_open(const slc_cache_redis_service_t *rs,
    slc_cache_redis_conn_t **list, const char *tag,
    void (*on_ready)(slc_cache_redis_conn_t *),
    void (*on_down)(slc_cache_redis_conn_t *), void *data)
{
    slc_cache_redis_conn_t *rc = calloc(1, sizeof(*rc));

    if (rc == NULL) {
        return NULL;
    }
    rc->rs = rs;
    rc->tag = tag;
    rc->conn.fd = -1;
    rc->on_ready = on_ready;
    rc->on_down = on_down;
    rc->data = data;
    slc_cache_redis_breaker_init(&rc->breaker, 1, SLC_REDIS_RETRY_MIN,
        SLC_REDIS_RETRY_MAX);
    rc->retry.handler = slc_cache_redis_retry_timer;
    rc->retry.data = rc;
    rc->next = *list;
    *list = rc;
    return rc;
}

void
slc_cache_redis_conn_start(slc_cache_redis_conn_t *rc)
{
    slc_cache_redis_connect(rc);
}

void
slc_cache_redis_conns_free(slc_cache_redis_conn_t **list)
{
    slc_cache_redis_conn_t *rc;

    while ((rc = *list) != NULL) {
        *list = rc->next;
        if (rc->retry.armed) {
            slc_timer_del(slc_loop, &rc->retry);
        }
        if (rc->on_free != NULL) {
            rc->on_free(rc);
        }
        if (rc->ac != NULL) {
            rc->ac->data = NULL;
            redisAsyncFree(rc->ac);
        }
        free(rc);
    }
}

int
slc_cache_redis_conn_ready(const slc_cache_redis_conn_t *rc)
{
    return rc->ac != NULL && rc->ready;
}
