#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_accounts.h"
#include "slc_mysql_auth.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_session.h"

/*
 * auth local: the proxy greets the client itself and checks its
 * mysql_native_password token against the users of the config.  A client
 * that asks for another plugin (a MySQL 8 client starts with
 * caching_sha2_password) is switched to mysql_native_password.  No backend
 * connection is opened before the client has proved its password.
 */

/* What we offer when no backend greeting has been seen yet. */
#define SLC_DEFAULT_CAPS                                                     \
    (SLC_CLIENT_FOUND_ROWS | SLC_CLIENT_LONG_FLAG                            \
     | SLC_CLIENT_CONNECT_WITH_DB | SLC_CLIENT_NO_SCHEMA | SLC_CLIENT_ODBC   \
     | SLC_CLIENT_LOCAL_FILES | SLC_CLIENT_IGNORE_SPACE                      \
     | SLC_CLIENT_PROTOCOL_41 | SLC_CLIENT_INTERACTIVE                       \
     | SLC_CLIENT_IGNORE_SIGPIPE | SLC_CLIENT_TRANSACTIONS                    \
     | SLC_CLIENT_SECURE_CONNECTION | SLC_CLIENT_MULTI_STATEMENTS            \
     | SLC_CLIENT_MULTI_RESULTS | SLC_CLIENT_PS_MULTI_RESULTS                \
     | SLC_CLIENT_PLUGIN_AUTH | SLC_CLIENT_CONNECT_ATTRS                     \
     | SLC_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA                             \
     | SLC_CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS | SLC_CLIENT_SESSION_TRACK     \
     | SLC_CLIENT_DEPRECATE_EOF)

#define SLC_DEFAULT_VERSION  "5.5.5-10.11.0-MariaDB-sluice"

static uint32_t
slc_auth_local_offered_caps(void)
{
    uint32_t caps = slc_backend_profile.known ? slc_backend_profile.caps
                                              : SLC_DEFAULT_CAPS;

    return (caps | SLC_CLIENT_PLUGIN_AUTH | SLC_CLIENT_PROTOCOL_41
            | SLC_CLIENT_SECURE_CONNECTION) & ~SLC_CAPS_NEVER;
}

int
slc_auth_local_greet(slc_session_t *s)
{
    slc_mysql_greeting_t g;
    uint8_t              pkt[256];
    size_t               n;

    memset(&g, 0, sizeof(g));
    arc4random_buf(s->scramble, sizeof(s->scramble));
    /* The scramble must not contain NUL (clients read it as a C string)
       and the protocol keeps it 7-bit in practice. */
    for (size_t i = 0; i < sizeof(s->scramble); i++) {
        s->scramble[i] = (uint8_t) (1 + s->scramble[i] % 126);
    }
    g.protocol = 10;
    strlcpy(g.server_version, s->srv->server_version ? s->srv->server_version
        : slc_backend_profile.known ? slc_backend_profile.version
        : SLC_DEFAULT_VERSION, sizeof(g.server_version));
    g.thread_id = (uint32_t) s->id;
    memcpy(g.scramble, s->scramble, sizeof(g.scramble));
    g.capabilities = slc_auth_local_offered_caps();
    g.mariadb_caps = slc_backend_profile.known
                     ? slc_backend_profile.mariadb_caps : 0;
    g.charset = slc_backend_profile.known ? slc_backend_profile.charset : 45;
    g.status = SLC_SERVER_STATUS_AUTOCOMMIT;
    strlcpy(g.auth_plugin, SLC_MYSQL_NATIVE_PLUGIN, sizeof(g.auth_plugin));
    n = slc_mysql_greeting_build(pkt, sizeof(pkt), &g);
    s->seq = 0;
    s->state = SLC_SS_GREETING;
    return n > 0 ? slc_session_send(s, pkt, n) : SLC_ERROR;
}

/* The verdict, now or after the auth_failure_* delay. */
static void
slc_auth_local_answer(slc_session_t *s)
{
    slc_mysql_cred_t c;

    /* an account of another plugin: looked up again, the rare case is
       not worth 65 bytes in every session */
    if (s->denied && slc_accounts_cred_find(s->cycle, s->srv, s->user, s->host,
                                         &c) == SLC_OK
        && c.plugin[0] != '\0')
    {
        explicit_bzero(&c.hash, sizeof(c.hash));
        slc_session_fail(s, SLC_ER_NOT_SUPPORTED_AUTH_MODE, "08004",
            "Account '%s'@'%s' uses the authentication plugin '%s': "
            "sluice checks mysql_native_password only", s->user,
            slc_accounts_host_name(s->srv, s->host), c.plugin);
        return;
    }
    explicit_bzero(&c, sizeof(c));
    if (s->denied) {
        slc_session_fail(s, SLC_ER_ACCESS_DENIED_ERROR, "28000",
            "Access denied for user '%s'@'%s' (using password: %s)",
            s->user, slc_accounts_host_name(s->srv, s->host),
            s->with_password ? "YES" : "NO");
        return;
    }
    slc_session_start_router(s);
}

static void slc_auth_local_check(slc_session_t *s);

/* Waiting for a load of the accounts: polled, the worker never blocks. */
static void
slc_auth_local_delay_done(slc_timer_t *t)
{
    slc_session_t *s = t->data;

    if (s->state != SLC_SS_DELAY) {
        return;
    }
    if (!s->accounts_wait) {
        slc_auth_local_answer(s);
        return;
    }
    if (!slc_accounts_served(slc_accounts_of(s->srv), s->accounts_ticket)
        && slc_loop->now < s->accounts_deadline)
    {
        slc_timer_add(slc_loop, &s->delay, SLC_ACCOUNTS_POLL);
        return;
    }
    s->accounts_wait = 0;
    slc_auth_local_check(s);
}

/*
 * The brake on password guessing (auth_failure_threshold and _delay):
 * once an address has failed that many times in a row, its next answers,
 * right or wrong, wait on a timer, as MySQL's connection_control does: if
 * only wrong ones waited, a client could take "no prompt answer" as "wrong"
 * and lose nothing.  The session holds no backend meanwhile; a hang-up or
 * auth_timeout still closes it, and the answer is due before auth_timeout.
 */
static uint64_t
slc_auth_local_delay(slc_session_t *s, int ok)
{
    slc_mysql_srv_t *srv = s->srv;
    uint64_t         now = slc_loop->now, delay, left;

    delay = slc_peer_auth_delay(s->addr,
        (unsigned) srv->auth_failure_threshold,
        (uint64_t) srv->auth_failure_delay,
        (uint64_t) srv->auth_failure_max_delay, now);
    if (delay > 0) {
        slc_session_log(s, SLC_LOG_INFO, "answer to the login delayed by "
            "%llu ms after %u failed logins from this address",
            (unsigned long long) delay, slc_peer_auth_failures(s->addr, now));
    }
    if (ok) {
        slc_peer_auth_ok(s->addr);
    } else {
        slc_peer_auth_failed(s->addr, now);
    }
    left = s->timer.when > now ? s->timer.when - now : 0;
    return delay < left ? delay : left > 0 ? left - 1 : 0;
}

/*
 * Under users_from, a login that would be refused (unknown user, wrong
 * password, another plugin) first asks for a load of the accounts and
 * waits for it, once: the account may be a moment old.  The loads are
 * rate limited by the monitor, so a flood of bad logins waits for the
 * next one (a second at most) instead of causing more.
 */
static int
slc_auth_local_accounts_wait(slc_session_t *s)
{
    slc_accounts_zone_t *z;
    uint64_t             left;

    z = slc_accounts_wanted(s->cycle, s->srv, s->user);
    if (z == NULL || s->accounts_asked) {
        return 0;
    }
    s->accounts_asked = 1;
    s->accounts_wait = 1;
    s->accounts_ticket = slc_accounts_request(z);
    left = s->timer.when > slc_loop->now ? s->timer.when - slc_loop->now : 0;
    s->accounts_deadline = slc_loop->now
        + (left > 1 && left - 1 < SLC_ACCOUNTS_WAIT ? left - 1
                                                   : SLC_ACCOUNTS_WAIT);
    s->state = SLC_SS_DELAY;
    s->delay.handler = slc_auth_local_delay_done;
    slc_timer_add(slc_loop, &s->delay, SLC_ACCOUNTS_POLL);
    slc_session_log(s, SLC_LOG_DEBUG, "login waits for a load of the "
        "accounts");
    return 1;
}

/* The kept token against the credentials user@host has now. */
static void
slc_auth_local_check(slc_session_t *s)
{
    slc_mysql_cred_t c;
    uint64_t         delay;

    if (slc_accounts_cred_find(s->cycle, s->srv, s->user, s->host, &c)
        != SLC_OK || c.plugin[0] != '\0')
    {
        s->denied = 1;                  /* slc_auth_local_answer says why */
    } else {
        s->denied = slc_mysql_native_verify(s->scramble, &c.hash, s->token,
                        s->token_len, s->stage1) != SLC_OK;
    }
    explicit_bzero(&c, sizeof(c));
    if (s->denied && slc_auth_local_accounts_wait(s)) {
        return;
    }
    explicit_bzero(s->token, sizeof(s->token));
    delay = s->addr != NULL ? slc_auth_local_delay(s, !s->denied) : 0;
    if (delay == 0) {
        slc_auth_local_answer(s);
        return;
    }
    s->state = SLC_SS_DELAY;
    s->delay.handler = slc_auth_local_delay_done;
    slc_timer_add(slc_loop, &s->delay, delay);
}

/* A token is 20 bytes or none (the empty password); anything else can
   match no account, and is kept as a wrong one. */
static void
slc_auth_local_verify(slc_session_t *s, const uint8_t *token, size_t len)
{
    s->with_password = len > 0;
    s->token_len = len == sizeof(s->token) ? (uint8_t) len
                   : len == 0 ? 0 : 1;
    memcpy(s->token, token, s->token_len);
    slc_auth_local_check(s);
}

static void
slc_auth_local_switch(slc_session_t *s)
{
    uint8_t pkt[128];
    uint8_t data[SLC_MYSQL_SCRAMBLE_LEN + 1];
    size_t  n;

    memcpy(data, s->scramble, SLC_MYSQL_SCRAMBLE_LEN);
    data[SLC_MYSQL_SCRAMBLE_LEN] = '\0';
    n = slc_mysql_authswitch_build(pkt, sizeof(pkt), SLC_MYSQL_NATIVE_PLUGIN,
        data, sizeof(data));
    s->state = SLC_SS_SWITCH;
    if (slc_session_send(s, pkt, n) != SLC_OK) {
        slc_session_close(s, SLC_LOG_INFO, "client write failed");
    }
}

static void
slc_auth_local_on_response(slc_session_t *s, uint8_t *p, uint32_t len)
{
    slc_mysql_hsresp_t r;

    if (slc_session_handshake_response(s, p, len, 1, &r) != SLC_OK) {
        slc_session_fail(s, SLC_ER_HANDSHAKE_ERROR, "08S01",
            "Bad handshake");
        return;
    }
    if ((r.capabilities & SLC_CLIENT_PLUGIN_AUTH) && r.plugin != NULL
        && (r.plugin_len != strlen(SLC_MYSQL_NATIVE_PLUGIN)
            || memcmp(r.plugin, SLC_MYSQL_NATIVE_PLUGIN, r.plugin_len) != 0))
    {
        slc_auth_local_switch(s);
        return;
    }
    slc_auth_local_verify(s, r.auth, r.auth_len);
}

/*
 * While the backend connects and logs in nothing is read from the client,
 * so no read would see its EOF: the loop's `rdhup` tells that it hung up,
 * and the session and its half-open backend are closed at once instead of
 * after the backend login.  Returns 1 when the session was closed.
 */
static int
slc_auth_local_client_gone(slc_session_t *s)
{
    slc_conn_t *c = &s->client;

    if (slc_conn_hung_up(c)) {
        slc_session_close(s, SLC_LOG_INFO, "client closed");
        return 1;
    }
    return 0;
}

void
slc_auth_local_read(slc_conn_t *c)
{
    slc_session_t *s = c->data;
    uint8_t       *p;
    uint32_t       len;

    SLC_CHECK_OBJ(s, SLC_SESSION_MAGIC);
    if (s->state != SLC_SS_GREETING && s->state != SLC_SS_SWITCH) {
        /* Nothing is expected from the client now (backend pending, or
           the answer delayed): leave the bytes in the socket, but notice
           a hang-up. */
        (void) slc_auth_local_client_gone(s);
        return;
    }
    if (slc_session_read_auth(s, &p, &len) != SLC_OK) {
        return;
    }
    if (s->state == SLC_SS_GREETING) {
        slc_auth_local_on_response(s, p, len);
    } else {
        slc_auth_local_verify(s, p, len);
    }
    if (s->in != NULL && s->state != SLC_SS_CLOSED) {
        slc_packet_consume(&s->in, len);
    }
    if (s->state == SLC_SS_BACKEND) {
        /* the hang-up came with the login: no event will tell again */
        (void) slc_auth_local_client_gone(s);
    }
}
