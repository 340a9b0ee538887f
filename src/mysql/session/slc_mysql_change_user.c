/*
 * COM_CHANGE_USER under auth local.  The client's token answers the
 * proxy's scramble, not the backend's, and the new user must be one of
 * the proxy's: so the proxy checks it exactly as at login (switching a
 * client that asks for another plugin to mysql_native_password), and only
 * then sends the backend a COM_CHANGE_USER of its own, with a token for
 * the scramble that backend gave, computed from the SHA1(password) the
 * client's token proved.  A refused change leaves the session as it was
 * (ERR 1045); after three refusals the session answers every further
 * COM_CHANGE_USER with ERR 1047, as the server does.  The backend's OK
 * is the client's; a backend that refuses ends the session, since the
 * server's side of it is then undefined.
 *
 * Under auth passthrough the command goes to the server as it is: the
 * server checks it against its own scramble and accounts, and the session
 * takes the identity it named once the server's OK comes
 * (slc_change_user_note/_noted).
 */

#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_accounts.h"
#include "slc_mysql_auth.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_change_user.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_proxycmd.h"
#include "slc_mysql_router.h"

#define SLC_CU_MAX_FAILURES  3

static void slc_change_user_client_read(slc_conn_t *c);
static void slc_change_user_backend_read(slc_conn_t *c);

static void
slc_change_user_free(slc_session_t *s)
{
    struct slc_change_user_s *cu = s->change_user;

    if (cu != NULL) {
        free(cu->attrs);
        explicit_bzero(cu, sizeof(*cu));
        free(cu);
        s->change_user = NULL;
    }
}

/* The exchange is over: the router takes the session back. */
static void
slc_change_user_end(slc_session_t *s)
{
    slc_change_user_free(s);
    slc_timer_del(slc_loop, &s->backend->timer);
    slc_proxycmd_resume(s);
}

/* Nothing is read from the client while the backend answers; a hang-up
   ends the session (the backend's answer would go nowhere). */
static void
slc_change_user_ignore(slc_conn_t *c)
{
    slc_session_t *s = c->data;

    if (slc_conn_hung_up(c)) {
        slc_session_close(s, SLC_LOG_INFO, "client closed");
    }
}

static void
slc_change_user_backend_write(slc_conn_t *c)
{
    slc_backend_t *b = c->data;

    if (slc_conn_flush(c, &b->out) != SLC_OK) {
        slc_session_close(b->session, SLC_LOG_ERR, "backend write failed");
    }
}

static void
slc_change_user_backend_timeout(slc_timer_t *t)
{
    slc_backend_t *b = t->data;

    slc_session_fail(b->session, SLC_ER_CONNECT_TO_BACKEND, "HY000",
        "Backend server '%s' did not answer COM_CHANGE_USER",
        b->server->name);
}

static int
slc_change_user_copy(slc_session_t *s, const slc_mysql_hsresp_t *r,
    uint16_t coll)
{
    struct slc_change_user_s *cu = calloc(1, sizeof(*cu));

    if (cu == NULL) {
        return SLC_ERROR;
    }
    s->change_user = cu;
    memcpy(cu->user, r->user, r->user_len);
    memcpy(cu->db, r->db, r->db_len);
    cu->collation = coll;
    if (r->attrs != NULL && r->attrs_len > 0) {
        if ((cu->attrs = malloc(r->attrs_len)) == NULL) {
            return SLC_ERROR;
        }
        memcpy(cu->attrs, r->attrs, r->attrs_len);
        cu->attrs_len = r->attrs_len;
    }
    return SLC_OK;
}

/* The backend's COM_CHANGE_USER, as the new user, for its scramble. */
static int
slc_change_user_send_backend(slc_session_t *s)
{
    struct slc_change_user_s *cu = s->change_user;
    slc_backend_t            *b = s->backend;
    slc_mysql_hsresp_t        r;
    uint8_t                   token[SLC_SHA1_LEN], *pkt;
    size_t                    n, cap;
    int                       rc;

    memset(&r, 0, sizeof(r));
    r.capabilities = b->caps;
    r.user = cu->user;
    r.user_len = strlen(cu->user);
    slc_mysql_native_token(b->scramble, cu->stage1, token);
    r.auth = token;
    r.auth_len = cu->empty_password ? 0 : sizeof(token);
    r.db = cu->db;
    r.db_len = strlen(cu->db);
    r.plugin = SLC_MYSQL_NATIVE_PLUGIN;
    r.plugin_len = strlen(SLC_MYSQL_NATIVE_PLUGIN);
    r.attrs = cu->attrs;
    r.attrs_len = cu->attrs_len;
    cap = 128 + r.user_len + r.db_len + r.attrs_len;
    pkt = malloc(cap);
    n = pkt != NULL ? slc_mysql_change_user_build(pkt, cap, &r,
        cu->collation ? cu->collation : s->charset) : 0;
    explicit_bzero(token, sizeof(token));
    b->seq = 0;
    rc = n > 0 ? slc_backend_send(b, pkt, n) : SLC_ERROR;
    free(pkt);
    if (rc != SLC_OK) {
        return SLC_ERROR;
    }
    b->conn.on_read = slc_change_user_backend_read;
    b->conn.on_write = slc_change_user_backend_write;
    b->timer.handler = slc_change_user_backend_timeout;
    slc_timer_add(slc_loop, &b->timer,
        (uint64_t) s->srv->timeouts->connect_timeout);
    return SLC_OK;
}

static void
slc_change_user_refuse(slc_session_t *s, size_t token_len)
{
    uint8_t  pkt[600];
    char     msg[512];
    size_t   n;

    if (s->cu_failures < SLC_CU_MAX_FAILURES) {
        s->cu_failures++;
    }
    snprintf(msg, sizeof(msg), "Access denied for user '%s'@'%s' (using "
        "password: %s)", s->change_user->user,
        slc_accounts_host_name(s->srv, s->host),
        token_len > 0 ? "YES" : "NO");
    slc_session_log(s, SLC_LOG_WARN, "COM_CHANGE_USER refused: %s", msg);
    n = slc_mysql_err_build(pkt, sizeof(pkt), SLC_ER_ACCESS_DENIED_ERROR,
        "28000", msg);
    if (slc_session_send(s, pkt, n) != SLC_OK) {
        slc_session_close(s, SLC_LOG_INFO, "client write failed");
        return;
    }
    slc_change_user_end(s);
}

static void slc_change_user_verify(slc_session_t *s, const uint8_t *token,
    size_t len);

static void
slc_change_user_accounts_poll(slc_timer_t *t)
{
    slc_session_t            *s = t->data;
    struct slc_change_user_s *cu = s->change_user;

    if (cu == NULL) {
        return;
    }
    if (!slc_accounts_served(slc_accounts_of(s->srv), cu->ticket)
        && slc_loop->now < cu->deadline)
    {
        slc_timer_add(slc_loop, &s->delay, SLC_ACCOUNTS_POLL);
        return;
    }
    slc_change_user_verify(s, cu->token, cu->token_len);
}

/* As at login: a refused change first waits, once, for a load of the
   accounts (an account created a moment ago); 1 when it waits. */
static int
slc_change_user_accounts_wait(slc_session_t *s, const uint8_t *token,
    size_t len)
{
    struct slc_change_user_s *cu = s->change_user;
    slc_accounts_zone_t      *z;

    z = slc_accounts_wanted(s->cycle, s->srv, cu->user);
    if (z == NULL || cu->asked) {
        return 0;
    }
    cu->asked = 1;
    cu->token_len = len == sizeof(cu->token) ? (uint8_t) len
                    : len == 0 ? 0 : 1;
    memcpy(cu->token, token, cu->token_len);
    cu->ticket = slc_accounts_request(z);
    cu->deadline = slc_loop->now + SLC_ACCOUNTS_WAIT;
    s->client.on_read = slc_change_user_ignore;
    s->client.on_write = slc_change_user_ignore;
    s->delay.handler = slc_change_user_accounts_poll;
    slc_timer_add(slc_loop, &s->delay, SLC_ACCOUNTS_POLL);
    return 1;
}

/* The client's token against the proxy's scramble, as at login. */
static void
slc_change_user_verify(slc_session_t *s, const uint8_t *token, size_t len)
{
    struct slc_change_user_s *cu = s->change_user;
    slc_mysql_cred_t          c;
    int                       ok;

    ok = slc_accounts_cred_find(s->cycle, s->srv, cu->user, s->host, &c)
         == SLC_OK && c.plugin[0] == '\0'
         && slc_mysql_native_verify(s->scramble, &c.hash, token, len,
                                    cu->stage1) == SLC_OK;
    cu->empty_password = c.hash.is_empty;
    explicit_bzero(&c, sizeof(c));
    if (!ok && slc_change_user_accounts_wait(s, token, len)) {
        return;
    }
    explicit_bzero(cu->token, sizeof(cu->token));
    if (!ok) {
        slc_change_user_refuse(s, len);
        return;
    }
    s->client.on_read = slc_change_user_ignore;
    s->client.on_write = slc_change_user_ignore;
    if (slc_change_user_send_backend(s) != SLC_OK) {
        slc_session_close(s, SLC_LOG_ERR, "backend write failed");
    }
}

/* mysql_native_password with the session's scramble, like at login. */
static void
slc_change_user_switch(slc_session_t *s)
{
    uint8_t  pkt[128], data[SLC_MYSQL_SCRAMBLE_LEN + 1];
    size_t   n;

    memcpy(data, s->scramble, SLC_MYSQL_SCRAMBLE_LEN);
    data[SLC_MYSQL_SCRAMBLE_LEN] = '\0';
    n = slc_mysql_authswitch_build(pkt, sizeof(pkt), SLC_MYSQL_NATIVE_PLUGIN,
        data, sizeof(data));
    s->client.on_read = slc_change_user_client_read;
    s->client.on_write = slc_change_user_ignore;
    if (slc_session_send(s, pkt, n) != SLC_OK) {
        slc_session_close(s, SLC_LOG_INFO, "client write failed");
    }
}

static void
slc_change_user_client_read(slc_conn_t *c)
{
    slc_session_t *s = c->data;
    uint8_t       *p;
    uint32_t       len;

    if (slc_session_read_auth(s, &p, &len) != SLC_OK) {
        return;
    }
    slc_change_user_verify(s, p, len);
    if (s->in != NULL && s->state != SLC_SS_CLOSED) {
        slc_packet_consume(&s->in, len);
    }
}

static int
slc_change_user_is_native(const slc_mysql_hsresp_t *r)
{
    return r->plugin == NULL || r->plugin_len == 0
           || (r->plugin_len == strlen(SLC_MYSQL_NATIVE_PLUGIN)
               && memcmp(r->plugin, SLC_MYSQL_NATIVE_PLUGIN,
                         r->plugin_len) == 0);
}

int
slc_change_user_run(slc_session_t *s, const uint8_t *pl, uint32_t len)
{
    slc_mysql_hsresp_t  r;
    uint16_t            coll;
    const char         *err = NULL;
    uint8_t             token[SLC_SHA1_LEN];
    size_t              tlen;

    if (s->cu_failures >= SLC_CU_MAX_FAILURES) {
        return slc_proxycmd_answer_err(s, SLC_ER_UNKNOWN_COM_ERROR, "08S01",
            "Unknown command");
    }
    if (slc_mysql_change_user_parse(pl, len, s->caps, &r, &coll, &err)
        != SLC_OK || r.user_len > SLC_MAX_USER || r.db_len > SLC_MAX_DB
        || r.auth_len > sizeof(token))
    {
        return slc_proxycmd_answer_err(s, SLC_ER_HANDSHAKE_ERROR, "08S01",
            "Bad COM_CHANGE_USER (%s)", err ? err : "field too long");
    }
    if (slc_change_user_copy(s, &r, coll) != SLC_OK) {
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
        return SLC_ERROR;
    }
    tlen = r.auth_len;
    memcpy(token, r.auth, tlen);        /* r points into the held packet */
    slc_proxycmd_drop(s);
    s->paused = 1;
    s->seq = 1;
    if (!slc_change_user_is_native(&r)) {
        slc_change_user_switch(s);
    } else {
        slc_change_user_verify(s, token, tlen);
    }
    explicit_bzero(token, sizeof(token));
    return SLC_AGAIN;
}

/* The backend agreed: the session is the new user's from now on. */
static void
slc_change_user_apply(slc_session_t *s, const uint8_t *ok, uint32_t len)
{
    struct slc_change_user_s *cu = s->change_user;
    slc_backend_t            *b = s->backend;

    slc_session_log(s, SLC_LOG_NOTICE, "changed user to \"%s\"", cu->user);
    memcpy(s->user, cu->user, sizeof(s->user));
    memcpy(s->db, cu->db, sizeof(s->db));
    s->has_db = s->db[0] != '\0';
    memcpy(s->stage1, cu->stage1, sizeof(s->stage1));
    if (cu->collation != 0) {
        s->charset = cu->collation;
    }
    free(s->attrs);
    s->attrs = cu->attrs;
    s->attrs_len = cu->attrs_len;
    cu->attrs = NULL;
    s->user_gen++;                      /* routers: other backends are the
                                           old user's */
    slc_backend_track_start(b, b->caps, b->mariadb_caps, ok, len);
}

static void
slc_change_user_backend_switch(slc_backend_t *b, const uint8_t *p,
    uint32_t len)
{
    slc_session_t *s = b->session;
    const char    *plugin, *err;
    const uint8_t *data;
    size_t         plen, dlen;
    uint8_t        token[SLC_SHA1_LEN];

    if (slc_mysql_authswitch_parse(p, len, &plugin, &plen, &data, &dlen,
                                   &err) != SLC_OK
        || plen != strlen(SLC_MYSQL_NATIVE_PLUGIN)
        || memcmp(plugin, SLC_MYSQL_NATIVE_PLUGIN, plen) != 0
        || dlen < SLC_MYSQL_SCRAMBLE_LEN)
    {
        slc_session_fail(s, SLC_ER_ACCESS_DENIED_ERROR, "28000",
            "Backend asks for an authentication plugin sluice does not "
            "support with auth local");
        return;
    }
    memcpy(b->scramble, data, sizeof(b->scramble));
    slc_mysql_native_token(data, s->change_user->stage1, token);
    if (slc_backend_send(b, token, s->change_user->empty_password
                         ? 0 : sizeof(token)) != SLC_OK)
    {
        slc_session_close(s, SLC_LOG_ERR, "backend write failed");
    }
    explicit_bzero(token, sizeof(token));
}

/* One packet of the backend's answer; SLC_OK while the exchange goes on. */
static int
slc_change_user_backend_packet(void *data, uint8_t *p, uint32_t len,
    uint8_t seq)
{
    slc_backend_t *b = data;
    slc_session_t *s = b->session;

    b->seq = seq + 1;
    switch (len > 0 ? p[0] : -1) {
    case SLC_MYSQL_OK:
        slc_change_user_apply(s, p, len);
        if (slc_session_send(s, p, len) != SLC_OK) {
            slc_session_close(s, SLC_LOG_INFO, "client write failed");
            return SLC_ERROR;
        }
        return SLC_DONE;
    case SLC_MYSQL_AUTH_SWITCH:
        slc_change_user_backend_switch(b, p, len);
        return s->state == SLC_SS_CLOSED ? SLC_ERROR : SLC_OK;
    case SLC_MYSQL_ERR:
        slc_session_log(s, SLC_LOG_WARN, "backend refused COM_CHANGE_USER "
            "to \"%s\"", s->change_user->user);
        if (slc_session_send(s, p, len) != SLC_OK) {
            slc_session_close(s, SLC_LOG_INFO, "client write failed");
            return SLC_ERROR;
        }
        slc_session_linger(s);
        return SLC_ERROR;
    default:
        slc_session_fail(s, SLC_ER_CONNECT_TO_BACKEND, "HY000",
            "Unexpected answer of backend '%s' to COM_CHANGE_USER",
            b->server->name);
        return SLC_ERROR;
    }
}

static void
slc_change_user_backend_read(slc_conn_t *c)
{
    slc_backend_t *b = c->data;
    slc_session_t *s = b->session;
    const char    *why;
    int            rc;

    rc = slc_packet_loop(c, &b->in, slc_change_user_backend_packet, b, &why);
    if (rc == SLC_DONE) {
        slc_change_user_end(s);
    } else if (rc == SLC_ERROR && why != NULL) {
        slc_session_close(s, SLC_LOG_ERR, why);
    }
}


/* --- auth passthrough: following the server ---------------------------- */

int
slc_change_user_note(slc_session_t *s, const uint8_t *pl,
    size_t avail, uint32_t len)
{
    slc_mysql_hsresp_t  r;
    uint16_t            coll;
    const char         *err = NULL;

    slc_change_user_free(s);
    if (avail < len) {
        slc_session_fail(s, SLC_ER_NET_PACKET_TOO_LARGE, "08S01",
            "COM_CHANGE_USER larger than buffer_size");
        return SLC_ERROR;
    }
    if (slc_mysql_change_user_parse(pl, len, s->caps, &r, &coll, &err)
        != SLC_OK || r.user_len > SLC_MAX_USER || r.db_len > SLC_MAX_DB)
    {
        slc_session_fail(s, SLC_ER_HANDSHAKE_ERROR, "08S01",
            "Bad COM_CHANGE_USER (%s)", err ? err : "field too long");
        return SLC_ERROR;
    }
    if ((s->change_user = calloc(1, sizeof(*s->change_user))) == NULL) {
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
        return SLC_ERROR;
    }
    memcpy(s->change_user->user, r.user, r.user_len);
    if (r.db != NULL) {
        memcpy(s->change_user->db, r.db, r.db_len);
    }
    s->change_user->collation = coll;
    return SLC_OK;
}

void
slc_change_user_noted(slc_session_t *s, int ok)
{
    struct slc_change_user_s *cu = s->change_user;

    if (cu == NULL) {
        return;
    }
    if (ok) {
        slc_session_log(s, SLC_LOG_INFO, "server changed user to \"%s\"",
            cu->user);
        memcpy(s->user, cu->user, sizeof(s->user));
        memcpy(s->db, cu->db, sizeof(s->db));
        s->has_db = s->db[0] != '\0';
        /* 0 (none sent, or 0): the server's default, whatever the old */
        s->charset = cu->collation;
        s->user_gen++;
    }
    slc_change_user_free(s);
}
