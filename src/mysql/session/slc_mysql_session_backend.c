#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_accounts.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_registry.h"
#include "slc_mysql_router.h"
#include "slc_mysql_session_backend.h"
#include "slc_mysql_upstream.h"

/*
 * The session's own backend, from its connect to its login's end: the
 * session chooses what it does with the greeting (auth local logs in,
 * passthrough relays), hears every failure of it, and answers the client.
 * Once logged in, command mode or the router's byte mode drives it.
 */

static int  slc_session_backend_greeting(slc_backend_t *b, uint8_t *p,
    uint32_t len);
static void slc_session_backend_ready(slc_backend_t *b, const uint8_t *ok,
    size_t len);
static void slc_session_backend_go(slc_backend_t *b);

/* auth local: log in as the session's user, then the client's OK. */
const slc_backend_ops_t  slc_session_backend_ops = {
    .greeting = slc_session_backend_greeting,
    .identity = slc_session_backend_identity,
    .ready = slc_session_backend_ready,
    .go = slc_session_backend_go,
    .fail = slc_session_backend_fail,
};

void
slc_session_backend_identity(slc_backend_t *b, slc_backend_ident_t *id)
{
    slc_session_t    *s = b->session;
    slc_mysql_cred_t  c;

    id->user = s->user;
    id->db = s->has_db ? s->db : NULL;
    id->charset = s->charset;
    id->caps = s->caps;
    id->mariadb_caps = s->mariadb_caps;
    id->max_packet = s->max_packet;
    id->attrs = s->attrs;
    id->attrs_len = s->attrs_len;
    id->stage1 = s->stage1;
    id->empty_password =
        slc_accounts_cred_find(s->cycle, s->srv, s->user, s->host,
            &c) != SLC_OK
        || c.hash.is_empty;
    explicit_bzero(&c, sizeof(c));
}

void
slc_session_backend_register(slc_backend_t *b)
{
    slc_session_t    *s = b->session;
    slc_mysql_conf_t *mc = slc_mysql_conf(s->cycle);

    if (s->registered) {
        slc_registry_set_backend(mc->registry_zone->addr, (uint32_t) s->id,
            slc_upstream_stats_index(mc, b->server->stats) + 1, b->thread_id);
        slc_registry_set_client(mc->registry_zone->addr, (uint32_t) s->id,
            s->user, s->host);
    }
}

void
slc_session_backend_log(slc_session_t *s, const slc_upstream_server_t *us,
    const slc_backend_fail_t *f)
{
    char text[300];

    slc_backend_fail_text(f, text, sizeof(text));
    slc_session_log(s, SLC_LOG_INFO, "backend server '%s' %s", us->name,
        text);
}

static int
slc_session_backend_greeting(slc_backend_t *b, uint8_t *p, uint32_t len)
{
    (void) p;
    (void) len;
    slc_session_backend_register(b);
    return 0;
}

static void
slc_session_backend_ready(slc_backend_t *b, const uint8_t *ok, size_t len)
{
    slc_session_ready(b->session, ok, len);     /* the router starts in go */
}

static void
slc_session_backend_go(slc_backend_t *b)
{
    if (b->session->state == SLC_SS_READY) {
        slc_session_go(b->session);
    }
}

/* Whether the router may try another server: nothing was said to the
   client yet, and this one was marked down. */
static int
slc_session_backend_may_retry(const slc_session_t *s,
    const slc_backend_fail_t *f)
{
    return f->down && slc_mysql_srv_router(s->srv)->retry != NULL
           && (s->state == SLC_SS_BACKEND || s->state == SLC_SS_RELAY);
}

/*
 * The own backend on `us` is lost before it greeted: the router tries
 * another server (`retry`, when it may: the lost backend is gone), or the
 * client is told it cannot connect.
 */
static void
slc_session_backend_lost(slc_session_t *s, slc_upstream_server_t *us,
    const slc_backend_fail_t *f, int retry)
{
    slc_session_log_server(s, us, SLC_LOG_ERR, "backend failed: %s",
        f->why);
    if (retry) {
        slc_mysql_srv_router(s->srv)->retry(s);
        return;
    }
    slc_session_fail(s, SLC_ER_CONNECT_TO_BACKEND, "HY000",
        "Can't connect to backend server '%s' (%s)", us->name, f->why);
}

/* The server's ERR to the connection (a greeting) is the client's. */
static void
slc_session_backend_refused(slc_session_t *s, const slc_backend_fail_t *f)
{
    uint16_t    code;
    char        state[6];
    const char *msg, *err;
    size_t      mlen;

    (void) slc_mysql_err_parse(f->err, f->err_len, &code, state, &msg, &mlen,
        &err);
    slc_session_log(s, SLC_LOG_ERR, "backend refused: %u %.*s", code,
        (int) mlen, msg);
    slc_session_fail(s, code, state, "%.*s", (int) mlen, msg);
}

void
slc_session_backend_fail(slc_backend_t *b, const slc_backend_fail_t *f)
{
    slc_session_t         *s = b->session;
    slc_upstream_server_t *us = b->server;
    int                    retry;

    if (f->err != NULL && f->login) {
        /* the backend's own reason (unknown database, denied...) */
        slc_session_log(s, SLC_LOG_WARN, "backend refused the login");
        if (slc_session_send(s, f->err, f->err_len) != SLC_OK) {
            slc_session_close(s, SLC_LOG_INFO, "client write failed");
            return;
        }
        slc_session_linger(s);
        return;
    }
    if (f->err != NULL) {
        slc_session_backend_refused(s, f);
        return;
    }
    if (f->plugin != NULL) {
        slc_session_fail(s, SLC_ER_ACCESS_DENIED_ERROR, "28000",
            "Backend asks for authentication plugin '%.*s', which sluice "
            "does not support with auth local", (int) f->plugin_len,
            f->plugin);
        return;
    }
    retry = b->state <= SLC_BS_GREETING
            && slc_session_backend_may_retry(s, f);
    if (retry) {
        s->backend = NULL;
        slc_backend_close(b);           /* freed after this event batch */
    }
    slc_session_backend_lost(s, us, f, retry);
}

/*
 * auth passthrough opens a backend for a client nobody has authenticated:
 * max_handshakes bounds how many such clients one server holds, so
 * anonymous connects cannot fill its max_connections.  Over it the client
 * hears ERR 1040 and the server is not contacted; the log says so once
 * a second, not once a client.
 */
static int
slc_session_backend_handshake(slc_session_t *s, slc_upstream_server_t *us)
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
slc_session_backend_open(slc_session_t *s, slc_upstream_server_t *us)
{
    int                 relay = s->srv->auth == SLC_AUTH_PASSTHROUGH;
    slc_backend_fail_t  f;
    slc_backend_t      *b;

    if (slc_session_backend_handshake(s, us) != SLC_OK) {
        return SLC_ERROR;
    }
    b = slc_backend_open(s, us, relay ? &slc_passthrough_ops
                                      : &slc_session_backend_ops, NULL,
                         (uint64_t) s->srv->timeouts->connect_timeout, &f);
    if (b == NULL) {
        if (relay) {
            slc_upstream_handshake_release(us);
        }
        slc_session_backend_lost(s, us, &f,
            slc_session_backend_may_retry(s, &f));
        return SLC_ERROR;
    }
    s->backend = b;
    b->handshaking = relay;     /* its max_handshakes slot, till the OK */
    return SLC_OK;
}
