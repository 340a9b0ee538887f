/*
 * The backend connection (src/mysql/upstream/slc_mysql_backend.c) on
 * its own: no session (the backend never looks into it; the fake ops'
 * `quits` reads the own backend, as the command layer's does), no
 * MariaDB server.  The test plays the server on a unix socket (a TCP one
 * for the connect timeout), through sluice's own loop, so the backend's
 * non-blocking connect, greeting, login and failures all run for real;
 * its ops are a fake table that records every call, in order, with the
 * reason of a failure.  What it shows: a login carries the identity (user,
 * database, collation, the token for the scramble, an empty one for an
 * empty password, never TLS or compression), ready then go once each; the
 * server's ERR to the connection and to the login, an authentication
 * switch answered or refused, a greeting that does not parse, a server
 * that hangs up, nobody listening, a connect and a handshake that time
 * out, a greeting hook that takes the exchange over, and each failure
 * reported once with its reason, the server marked down exactly when the
 * reason says so, and nothing said after it.  A router's backend says
 * COM_QUIT when the session's own did; the own one does not repeat it.
 * A collation id over 255 (COM_CHANGE_USER's field is 2 bytes, the
 * login's 1): the login carries a stand-in, then b sets the real one and
 * keeps its answer to itself; an ERR to it fails b.
 */

#include "slc_test.h"
#include "slc_test_modules.h"
#include "slc_test_loop.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "slc_core.h"
#include "slc_buf.h"
#include "slc_event.h"
#include "slc_mysql_auth.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_session.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_upstream.h"

SLC_TEST_MODULES("core mysql", &slc_core_module, &slc_mysql_module);

#define SLC_TEST_WAIT       3000    /* ms: a deadline, never a sleep */
#define SLC_TEST_MAX_CALLS  32
#define SLC_TEST_MAX_PKTS   8
#define SLC_TEST_PASSWORD   "secret"

static const uint8_t  slc_test_scramble[SLC_MYSQL_SCRAMBLE_LEN] =
    "abcdefghij0123456789";
static const uint8_t  slc_test_scramble2[SLC_MYSQL_SCRAMBLE_LEN] =
    "ZYXWVUTSRQ9876543210";
static const uint8_t  slc_test_attrs[] = "\x03_os\x05Linux";
static const uint8_t  slc_test_quit[] = { 1, 0, 0, 0, SLC_COM_QUIT };

/* --- the server the test plays ------------------------------------- */

typedef enum {
    SLC_TEST_SILENT,        /* do nothing */
    SLC_TEST_SEND,          /* send the payload (seq: the next one) */
    SLC_TEST_CLOSE          /* hang up */
} slc_test_act_t;

typedef struct {
    slc_test_act_t  act;
    uint8_t         payload[256];
    size_t          len;
} slc_test_step_t;

typedef struct {
    uint8_t         p[512];
    size_t          len;
    uint8_t         seq;
} slc_test_pkt_t;

/*
 * steps[0] runs when it accepts, steps[k] once it has read the k-th packet
 * from the backend; past nsteps it stays silent.
 */
typedef struct {
    slc_conn_t       ls;
    slc_conn_t       c;
    int              accepted;
    slc_test_step_t  steps[4];
    unsigned         nsteps;
    uint8_t          seq;           /* of the next packet it sends */
    uint8_t          in[4096];
    size_t           in_len;
    slc_test_pkt_t   got[SLC_TEST_MAX_PKTS];
    unsigned         ngot;
    int              eof;           /* the backend closed */
} slc_test_server_t;

static slc_test_server_t  slc_test_srv;

static void
slc_test_server_send(slc_test_server_t *sv, const uint8_t *p, size_t len)
{
    uint8_t pkt[SLC_MYSQL_HDR_LEN + 256];

    ck_assert_uint_le(len, sizeof(pkt) - SLC_MYSQL_HDR_LEN);
    slc_mysql_hdr_write(pkt, (uint32_t) len, sv->seq++);
    memcpy(pkt + SLC_MYSQL_HDR_LEN, p, len);
    ck_assert_int_eq(send(sv->c.fd, pkt, len + SLC_MYSQL_HDR_LEN,
                          MSG_NOSIGNAL), (ssize_t) (len + SLC_MYSQL_HDR_LEN));
}

static void
slc_test_server_step(slc_test_server_t *sv, unsigned k)
{
    const slc_test_step_t *st;

    if (k >= sv->nsteps) {
        return;
    }
    st = &sv->steps[k];
    if (st->act == SLC_TEST_SEND) {
        slc_test_server_send(sv, st->payload, st->len);
    } else if (st->act == SLC_TEST_CLOSE) {
        slc_conn_close(&sv->c);
    }
}

/* Frame what the backend sent; each whole packet is recorded, answered. */
static void
slc_test_server_packets(slc_test_server_t *sv)
{
    uint32_t plen;
    uint8_t  seq;

    while (!sv->c.closed
           && slc_mysql_packet_peek(sv->in, sv->in_len, &plen, &seq))
    {
        slc_test_pkt_t *g = &sv->got[sv->ngot % SLC_TEST_MAX_PKTS];
        size_t          n = SLC_MYSQL_HDR_LEN + plen;

        g->len = slc_min((size_t) plen, sizeof(g->p));
        memcpy(g->p, sv->in + SLC_MYSQL_HDR_LEN, g->len);
        g->seq = seq;
        sv->ngot++;
        memmove(sv->in, sv->in + n, sv->in_len - n);
        sv->in_len -= n;
        sv->seq = (uint8_t) (seq + 1);
        slc_test_server_step(sv, sv->ngot);
    }
}

static void
slc_test_server_read(slc_conn_t *c)
{
    slc_test_server_t *sv = c->data;
    ssize_t            n;

    while (!c->closed && c->readable && sv->in_len < sizeof(sv->in)) {
        n = slc_conn_read(c, sv->in + sv->in_len,
            sizeof(sv->in) - sv->in_len);
        if (n <= 0) {
            sv->eof |= c->eof || n < 0;
            break;
        }
        sv->in_len += (size_t) n;
        slc_test_server_packets(sv);
    }
}

static void
slc_test_server_write(slc_conn_t *c)
{
    (void) c;
}

static void
slc_test_server_accept(slc_conn_t *ls)
{
    slc_test_server_t *sv = ls->data;
    int                fd = accept4(ls->fd, NULL, NULL, SOCK_NONBLOCK
                                    | SOCK_CLOEXEC);

    if (fd == -1) {
        return;                         /* EAGAIN: a spurious wake-up */
    }
    ck_assert_int_eq(sv->accepted, 0);  /* one backend per test */
    sv->accepted = 1;
    sv->c = (slc_conn_t) {
        .fd = fd, .data = sv, .on_read = slc_test_server_read,
        .on_write = slc_test_server_write,
    };
    ck_assert_int_eq(slc_conn_register(slc_loop, &sv->c), SLC_OK);
    sv->seq = 0;
    slc_test_server_step(sv, 0);
}

/* A listening socket on `addr` (len), the server's (closed with it). */
static int
slc_test_server_socket(const struct sockaddr_storage *addr, socklen_t len,
    int backlog)
{
    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK
                    | SOCK_CLOEXEC, 0);

    ck_assert_int_ne(fd, -1);
    ck_assert_int_eq(bind(fd, (const struct sockaddr *) addr, len), 0);
    ck_assert_int_eq(listen(fd, backlog), 0);
    slc_test_srv.ls = (slc_conn_t) {
        .fd = fd, .data = &slc_test_srv, .on_read = slc_test_server_accept,
    };
    return fd;
}

/* Listen on `addr` (len), accepting from the loop. */
static void
slc_test_server_listen(const struct sockaddr_storage *addr, socklen_t len)
{
    (void) slc_test_server_socket(addr, len, 16);
    ck_assert_int_eq(slc_conn_register_listen(slc_loop, &slc_test_srv.ls, 0),
        SLC_OK);
}

/* Script step k: send this payload. */
static void
slc_test_server_says(unsigned k, const uint8_t *p, size_t len)
{
    slc_test_step_t *st = &slc_test_srv.steps[k];

    ck_assert_uint_le(len, sizeof(st->payload));
    st->act = SLC_TEST_SEND;
    memcpy(st->payload, p, len);
    st->len = len;
    slc_test_srv.nsteps = slc_max(slc_test_srv.nsteps, k + 1);
}

static void
slc_test_server_hangs_up(unsigned k)
{
    slc_test_srv.steps[k].act = SLC_TEST_CLOSE;
    slc_test_srv.nsteps = slc_max(slc_test_srv.nsteps, k + 1);
}

/* The packets the server builds. */

static size_t
slc_test_greeting(uint8_t *p, size_t cap, const uint8_t *scramble)
{
    slc_mysql_greeting_t g = {
        .protocol = 10, .thread_id = 4242, .charset = 45, .status = 2,
        .capabilities = SLC_CLIENT_LONG_FLAG | SLC_CLIENT_CONNECT_WITH_DB
            | SLC_CLIENT_PROTOCOL_41 | SLC_CLIENT_SECURE_CONNECTION
            | SLC_CLIENT_PLUGIN_AUTH | SLC_CLIENT_CONNECT_ATTRS
            | SLC_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | SLC_CLIENT_SSL
            | SLC_CLIENT_COMPRESS | SLC_CLIENT_TRANSACTIONS
            | SLC_CLIENT_MULTI_RESULTS | SLC_CLIENT_SESSION_TRACK,
        .mariadb_caps = 0x1c,
    };
    size_t n;

    strlcpy(g.server_version, "10.11.6-MariaDB-test",
        sizeof(g.server_version));
    strlcpy(g.auth_plugin, SLC_MYSQL_NATIVE_PLUGIN, sizeof(g.auth_plugin));
    memcpy(g.scramble, scramble, sizeof(g.scramble));
    n = slc_mysql_greeting_build(p, cap, &g);
    ck_assert_uint_gt(n, 0);
    return n;
}

static size_t
slc_test_err(uint8_t *p, size_t cap, uint16_t code, const char *msg)
{
    size_t n = slc_mysql_err_build(p, cap, code, "28000", msg);

    ck_assert_uint_gt(n, 0);
    return n;
}

static void
slc_test_server_greets(void)
{
    uint8_t p[256];

    slc_test_server_says(0, p, slc_test_greeting(p, sizeof(p),
        slc_test_scramble));
}

/* --- the fake ops ---------------------------------------------------- */

typedef enum {
    SLC_TEST_GREETING = 1,
    SLC_TEST_RELAY,
    SLC_TEST_IDENTITY,
    SLC_TEST_READY,
    SLC_TEST_GO,
    SLC_TEST_FAIL
} slc_test_hook_t;

/* What the backend said, and how the fake answers it. */
typedef struct {
    slc_test_hook_t      calls[SLC_TEST_MAX_CALLS];
    unsigned             ncalls;
    unsigned             nfail;
    /* the first failure, copied (f is valid for the call only) */
    char                 why[128];
    unsigned             down, login;
    int                  has_err, has_plugin;
    uint8_t              err[256];
    size_t               err_len;
    char                 plugin[64];
    slc_backend_state_t  fail_state;
    uint64_t             errors_at_fail;    /* us's connect_errors then */
    uint8_t              ok[64];
    size_t               ok_len;
    int                  ok_in_buf;         /* ready's OK lay in b->in */
    /* how the fake answers */
    int                  take_over;         /* greeting takes the exchange */
    int                  keep_on_fail;      /* fail leaves b open */
    int                  empty_password;
    const char          *db;
    uint16_t             charset;           /* the identity's collation */
} slc_test_rec_t;

static slc_test_rec_t          slc_test_rec;
static slc_backend_t          *slc_test_b;     /* open, the test's */
static slc_loop_t              slc_test_loop;
static slc_server_stats_t      slc_test_stats;
static slc_held_t              slc_test_held[1];   /* process index 0 */
static slc_upstream_server_t   slc_test_us;
static slc_mysql_timeouts_t    slc_test_timeouts;
static slc_mysql_srv_t         slc_test_msrv;
static slc_session_t           slc_test_s;
static uint8_t                 slc_test_stage1[SLC_SHA1_LEN];

static void
slc_test_record(slc_test_hook_t h)
{
    ck_assert_uint_lt(slc_test_rec.ncalls, SLC_TEST_MAX_CALLS);
    slc_test_rec.calls[slc_test_rec.ncalls++] = h;
}

static int
slc_test_on_greeting(slc_backend_t *b, uint8_t *p, uint32_t len)
{
    (void) p;
    (void) len;
    slc_test_record(SLC_TEST_GREETING);
    if (slc_test_rec.take_over) {
        b->state = SLC_BS_RELAY;        /* as passthrough does */
        return 1;
    }
    return 0;
}

static void
slc_test_on_relay(slc_backend_t *b)
{
    (void) b;
    slc_test_record(SLC_TEST_RELAY);
}

static void
slc_test_on_identity(slc_backend_t *b, slc_backend_ident_t *id)
{
    (void) b;
    slc_test_record(SLC_TEST_IDENTITY);
    id->user = "app";
    id->db = slc_test_rec.db;
    id->charset = slc_test_rec.charset;
    /* TLS and compression asked for: the backend must drop them */
    id->caps = SLC_CLIENT_LONG_FLAG | SLC_CLIENT_CONNECT_WITH_DB
        | SLC_CLIENT_PROTOCOL_41 | SLC_CLIENT_SECURE_CONNECTION
        | SLC_CLIENT_PLUGIN_AUTH | SLC_CLIENT_CONNECT_ATTRS
        | SLC_CLIENT_TRANSACTIONS | SLC_CLIENT_MULTI_RESULTS
        | SLC_CLIENT_SSL | SLC_CLIENT_COMPRESS;
    id->mariadb_caps = 0x14;
    id->max_packet = 1 << 20;
    id->attrs = slc_test_attrs;
    id->attrs_len = sizeof(slc_test_attrs) - 1;
    id->stage1 = slc_test_stage1;
    id->empty_password = slc_test_rec.empty_password != 0;
}

static void
slc_test_on_ready(slc_backend_t *b, const uint8_t *ok, size_t len)
{
    slc_test_record(SLC_TEST_READY);
    slc_test_rec.ok_len = slc_min(len, sizeof(slc_test_rec.ok));
    memcpy(slc_test_rec.ok, ok, slc_test_rec.ok_len);
    slc_test_rec.ok_in_buf = b->in != NULL && ok >= b->in->pos
                             && ok + len <= b->in->last;
}

static void
slc_test_on_go(slc_backend_t *b)
{
    (void) b;
    slc_test_record(SLC_TEST_GO);
}

static void
slc_test_on_fail(slc_backend_t *b, const slc_backend_fail_t *f)
{
    slc_test_rec_t *r = &slc_test_rec;

    slc_test_record(SLC_TEST_FAIL);
    if (r->nfail++ == 0) {
        ck_assert_ptr_nonnull(f->why);
        strlcpy(r->why, f->why, sizeof(r->why));
        r->down = f->down;
        r->login = f->login;
        r->has_err = f->err != NULL;
        r->err_len = slc_min((size_t) f->err_len, sizeof(r->err));
        if (f->err != NULL) {
            memcpy(r->err, f->err, r->err_len);
        }
        r->has_plugin = f->plugin != NULL;
        if (f->plugin != NULL) {
            snprintf(r->plugin, sizeof(r->plugin), "%.*s",
                (int) f->plugin_len, f->plugin);
        }
        r->fail_state = b->state;
        r->errors_at_fail = slc_test_stats.connect_errors;
    }
    if (!r->keep_on_fail) {
        slc_backend_close(b);           /* the callee closes it */
        slc_test_b = NULL;
    }
}

/* As the command layer's ops for a router's backend answer it: the
   client's COM_QUIT went out on the session's own backend, not b. */
static int
slc_test_on_quits(const slc_backend_t *b)
{
    const slc_backend_t *own = b->session->backend;

    return own != NULL && own != b && slc_mysql_track_quit_sent(&own->track);
}

static const slc_backend_ops_t  slc_test_ops = {
    .greeting = slc_test_on_greeting,
    .quits = slc_test_on_quits,
    .relay = slc_test_on_relay,
    .identity = slc_test_on_identity,
    .ready = slc_test_on_ready,
    .go = slc_test_on_go,
    .fail = slc_test_on_fail,
};

/* --- the harness ---------------------------------------------------- */

/* An abstract unix address, private to this process: nothing on disk. */
static socklen_t
slc_test_unix_addr(struct sockaddr_storage *ss, const char *what)
{
    struct sockaddr_un *sun = (struct sockaddr_un *) ss;
    int                 n;

    memset(ss, 0, sizeof(*ss));
    sun->sun_family = AF_UNIX;
    n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1,
        "sluice-test-backend-%ld-%s", (long) getpid(), what);
    return (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1
                        + (size_t) n);
}

/* Checked fixture: each test runs in its own process, with its loop. */
static void
slc_test_setup(void)
{
    ck_assert_int_eq(slc_loop_init(&slc_test_loop), SLC_OK);
    slc_loop = &slc_test_loop;
    memset(&slc_test_rec, 0, sizeof(slc_test_rec));
    slc_test_rec.db = "test";
    slc_test_rec.charset = 224;         /* utf8mb4_unicode_ci */
    memset(&slc_test_srv, 0, sizeof(slc_test_srv));
    slc_test_srv.ls.fd = -1;
    slc_test_srv.c.fd = -1;
    slc_test_b = NULL;
    slc_sha1(SLC_TEST_PASSWORD, strlen(SLC_TEST_PASSWORD), slc_test_stage1);

    memset(&slc_test_stats, 0, sizeof(slc_test_stats));
    memset(slc_test_held, 0, sizeof(slc_test_held));
    memset(&slc_test_us, 0, sizeof(slc_test_us));
    strlcpy(slc_test_us.name, "test-server", sizeof(slc_test_us.name));
    slc_test_us.addrlen = slc_test_unix_addr(&slc_test_us.addr, "server");
    slc_test_us.stats = &slc_test_stats;
    slc_test_us.held = slc_test_held;
    slc_test_us.weight = 1;
    slc_test_timeouts.connect_timeout = SLC_TEST_WAIT * 2;
    slc_test_msrv.timeouts = &slc_test_timeouts;
    memset(&slc_test_s, 0, sizeof(slc_test_s));
    slc_test_s.srv = &slc_test_msrv;
}

static void
slc_test_teardown(void)
{
    if (slc_test_b != NULL) {
        slc_backend_close(slc_test_b);
        slc_test_b = NULL;
    }
    slc_conn_close(&slc_test_srv.c);
    slc_conn_close(&slc_test_srv.ls);
    slc_loop_once(slc_loop, 0);         /* the deferred frees */
    slc_loop_done(slc_loop);
}

static int
slc_test_failed(void)
{
    return slc_test_rec.nfail > 0;
}

static int
slc_test_went(void)
{
    return slc_test_rec.ncalls > 0
           && slc_test_rec.calls[slc_test_rec.ncalls - 1] == SLC_TEST_GO;
}

static int
slc_test_server_eof(void)
{
    return slc_test_srv.eof;
}

static int
slc_test_called(void)
{
    return slc_test_rec.ncalls > 0;
}

/* the server hung up on b and b's timer expired */
static int
slc_test_b_all_over(void)
{
    return slc_test_b->conn.rdhup && !slc_test_b->timer.armed;
}

/* the loop saw the server hang up on b, and b's handler ran */
static int
slc_test_b_hung_up(void)
{
    return slc_test_b->conn.rdhup;
}

static int
slc_test_relayed(void)
{
    return slc_test_rec.ncalls > 0
           && slc_test_rec.calls[slc_test_rec.ncalls - 1] == SLC_TEST_RELAY;
}

/* Open a backend to the test's server, with a slot taken as a caller
   must (slc_upstream_acquire). */
static slc_backend_t *
slc_test_open(slc_backend_fail_t *f)
{
    ck_assert_int_eq(slc_upstream_acquire(&slc_test_us), 1);
    slc_test_b = slc_backend_open(&slc_test_s, &slc_test_us, &slc_test_ops,
        NULL, (uint64_t) slc_test_timeouts.connect_timeout, f);
    return slc_test_b;
}

static slc_backend_t *
slc_test_start(void)
{
    slc_backend_fail_t f;

    slc_test_server_listen(&slc_test_us.addr, slc_test_us.addrlen);
    ck_assert_ptr_nonnull(slc_test_open(&f));
    return slc_test_b;
}

/* The hooks called, in order, as a string of their numbers ("1356"). */
static const char *
slc_test_calls(void)
{
    static char s[SLC_TEST_MAX_CALLS + 1];
    unsigned    i;

    for (i = 0; i < slc_test_rec.ncalls; i++) {
        s[i] = (char) ('0' + slc_test_rec.calls[i]);
    }
    s[i] = '\0';
    return s;
}

#define SLC_TEST_CALLS(...)  slc_test_calls_str((int[]) { __VA_ARGS__, 0 })

static const char *
slc_test_calls_str(const int *h)
{
    static char s[SLC_TEST_MAX_CALLS + 1];
    unsigned    i;

    for (i = 0; h[i] != 0 && i < SLC_TEST_MAX_CALLS; i++) {
        s[i] = (char) ('0' + h[i]);
    }
    s[i] = '\0';
    return s;
}

/* The failure's `down` says whether the server was marked down, and it
   was marked down exactly then. */
static void
slc_test_assert_down(unsigned down)
{
    ck_assert_uint_eq(slc_test_rec.down, down);
    ck_assert_uint_eq(slc_test_rec.errors_at_fail, down);
    ck_assert_uint_eq(slc_test_stats.connect_errors, down);
    ck_assert_int_eq(slc_test_us.down_until != 0, down != 0);
}

/* The login the server got (its first packet), parsed. */
static void
slc_test_login(slc_mysql_hsresp_t *r)
{
    const char *err = NULL;

    ck_assert_uint_ge(slc_test_srv.ngot, 1);
    ck_assert_uint_eq(slc_test_srv.got[0].seq, 1);
    ck_assert_int_eq(slc_mysql_hsresp_parse(slc_test_srv.got[0].p,
        slc_test_srv.got[0].len, r, &err), SLC_OK);
}

/* `token` (len) proves the password for `scramble`. */
static void
slc_test_assert_token(const uint8_t *scramble, const uint8_t *token,
    size_t len)
{
    slc_mysql_native_hash_t h;
    uint8_t                 stage1[SLC_SHA1_LEN];

    slc_mysql_native_hash(SLC_TEST_PASSWORD, strlen(SLC_TEST_PASSWORD), &h);
    ck_assert_uint_eq(len, SLC_SHA1_LEN);
    ck_assert_int_eq(slc_mysql_native_verify(scramble, &h, token, len,
                                             stage1), SLC_OK);
    ck_assert_mem_eq(stage1, slc_test_stage1, SLC_SHA1_LEN);
}

/* --- the tests ------------------------------------------------------ */

/* A backend the server greeted and logged in, its ops told. */
static slc_backend_t *
slc_test_logged_in(void)
{
    uint8_t        ok[32];
    slc_backend_t *b;

    slc_test_server_greets();
    slc_test_server_says(1, ok, slc_mysql_ok_build(ok, sizeof(ok), 0, 0, 2,
        0));
    b = slc_test_start();
    ck_assert(slc_check_until(slc_test_went, SLC_TEST_WAIT));
    return b;
}

/*
 * A good login: greeting, then the identity asked, one HandshakeResponse41
 * with its user, database, collation, attributes and the token for the
 * scramble, no TLS or compression; the server's OK: ready (with that OK,
 * still in b->in) then go, once each, the timer stopped.  Closing it gives
 * the slot back and hangs up.
 */
START_TEST(test_login)
{
    uint8_t             ok[32];
    size_t              oklen = slc_mysql_ok_build(ok, sizeof(ok), 0, 0, 2, 0);
    slc_mysql_hsresp_t  r;
    slc_backend_t      *b;

    slc_test_server_greets();
    slc_test_server_says(1, ok, oklen);
    b = slc_test_start();
    ck_assert_int_eq(b->state, SLC_BS_CONNECTING);
    ck_assert_uint_eq(slc_test_rec.ncalls, 0);      /* none before return */
    ck_assert(slc_check_until(slc_test_went, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(),
        SLC_TEST_CALLS(SLC_TEST_GREETING, SLC_TEST_IDENTITY, SLC_TEST_READY,
                       SLC_TEST_GO));
    ck_assert_int_eq(b->state, SLC_BS_READY);
    ck_assert_uint_eq(b->thread_id, 4242);
    ck_assert_mem_eq(b->scramble, slc_test_scramble, SLC_MYSQL_SCRAMBLE_LEN);
    ck_assert_int_eq(b->timer.armed, 0);
    ck_assert_uint_eq(slc_test_rec.ok_len, oklen);
    ck_assert_mem_eq(slc_test_rec.ok, ok, oklen);
    ck_assert_int_eq(slc_test_rec.ok_in_buf, 1);

    ck_assert_uint_eq(slc_test_srv.ngot, 1);
    slc_test_login(&r);
    ck_assert_uint_eq(r.user_len, 3);
    ck_assert_mem_eq(r.user, "app", 3);
    ck_assert_ptr_nonnull(r.db);
    ck_assert_uint_eq(r.db_len, 4);
    ck_assert_mem_eq(r.db, "test", 4);
    ck_assert_uint_eq(r.charset, 224);
    ck_assert_uint_eq(r.max_packet, 1 << 20);
    ck_assert_uint_eq(r.capabilities & (SLC_CLIENT_SSL | SLC_CLIENT_COMPRESS),
        0);
    ck_assert(r.capabilities & SLC_CLIENT_CONNECT_WITH_DB);
    ck_assert_uint_eq(r.mariadb_caps, 0x14 & 0x1c);
    ck_assert_uint_eq(b->caps, r.capabilities);
    ck_assert_ptr_nonnull(r.plugin);
    ck_assert_uint_eq(r.plugin_len, strlen(SLC_MYSQL_NATIVE_PLUGIN));
    ck_assert_mem_eq(r.plugin, SLC_MYSQL_NATIVE_PLUGIN, r.plugin_len);
    ck_assert_ptr_nonnull(r.attrs);
    ck_assert_uint_eq(r.attrs_len, sizeof(slc_test_attrs) - 1);
    ck_assert_mem_eq(r.attrs, slc_test_attrs, r.attrs_len);
    slc_test_assert_token(slc_test_scramble, r.auth, r.auth_len);

    /* nothing more is said, however long the loop runs; the close gives
       the slot back and the server sees the end */
    ck_assert_uint_eq(slc_test_stats.active, 1);
    slc_backend_close(b);
    slc_test_b = NULL;
    ck_assert(slc_check_until(slc_test_server_eof, SLC_TEST_WAIT));
    ck_assert_uint_eq(slc_test_rec.ncalls, 4);
    ck_assert_uint_eq(slc_test_srv.ngot, 1);       /* no COM_QUIT: own */
    ck_assert_uint_eq(slc_test_stats.active, 0);
    ck_assert_uint_eq(slc_test_held[0].active, 0);
    ck_assert_uint_eq(slc_test_stats.connect_errors, 0);
}
END_TEST

/* the server has the SET after the login */
static int
slc_test_server_got_two(void)
{
    return slc_test_srv.ngot >= 2;
}

/*
 * A collation id over 255 (utf8mb4_uca1400_ai_ci, 2304): the login
 * carries utf8mb4_general_ci (45), then, once the server said OK, b sends
 * SET collation_connection = 2304 (a new command: seq 0) and waits in
 * SLC_BS_COLLATION, its ops told nothing yet.  The SET's OK is b's: ready
 * gets it (in b->in, not the login's), then go; the timer stops.
 */
START_TEST(test_login_collation)
{
    static const char   set[] = "\x03SET collation_connection = 2304";
    uint8_t             ok1[32], ok2[32];
    size_t              n2;
    slc_mysql_hsresp_t  r;
    slc_backend_t      *b;

    slc_test_rec.charset = 2304;
    slc_test_server_greets();
    slc_test_server_says(1, ok1, slc_mysql_ok_build(ok1, sizeof(ok1), 0, 0,
        2, 0));
    n2 = slc_mysql_ok_build(ok2, sizeof(ok2), 0, 0, 2, 1);  /* 1 warning */
    b = slc_test_start();
    ck_assert(slc_check_until(slc_test_server_got_two, SLC_TEST_WAIT));
    slc_test_login(&r);
    ck_assert_uint_eq(r.charset, 45);
    ck_assert_uint_eq(slc_test_srv.got[1].seq, 0);
    ck_assert_uint_eq(slc_test_srv.got[1].len, sizeof(set) - 1);
    ck_assert_mem_eq(slc_test_srv.got[1].p, set, sizeof(set) - 1);
    ck_assert_int_eq(b->state, SLC_BS_COLLATION);
    ck_assert_int_eq(b->timer.armed, 1);
    ck_assert_str_eq(slc_test_calls(),
        SLC_TEST_CALLS(SLC_TEST_GREETING, SLC_TEST_IDENTITY));

    slc_test_server_send(&slc_test_srv, ok2, n2);
    ck_assert(slc_check_until(slc_test_went, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(),
        SLC_TEST_CALLS(SLC_TEST_GREETING, SLC_TEST_IDENTITY, SLC_TEST_READY,
                       SLC_TEST_GO));
    ck_assert_int_eq(b->state, SLC_BS_READY);
    ck_assert_int_eq(b->timer.armed, 0);
    ck_assert_uint_eq(slc_test_rec.ok_len, n2);
    ck_assert_mem_eq(slc_test_rec.ok, ok2, n2);
    ck_assert_int_eq(slc_test_rec.ok_in_buf, 1);
    ck_assert_ptr_null(b->in);                      /* consumed */
    ck_assert(slc_mysql_track_idle(&b->track));
    ck_assert_uint_eq(slc_test_srv.ngot, 2);
}
END_TEST

/* An id under 256 (latin1_bin, 47) is the login's: no SET follows. */
START_TEST(test_login_collation_small)
{
    slc_mysql_hsresp_t r;

    slc_test_rec.charset = 47;
    (void) slc_test_logged_in();
    slc_test_login(&r);
    ck_assert_uint_eq(r.charset, 47);
    ck_assert_uint_eq(slc_test_srv.ngot, 1);
    ck_assert_uint_eq(slc_test_b->collation, 0);
}
END_TEST

/* The server refuses the SET: fail with the collation and its ERR in
   why, not as a refused login; the server is up, not marked down. */
START_TEST(test_collation_refused)
{
    uint8_t ok[32], e[128];

    slc_test_rec.charset = 4000;
    slc_test_server_greets();
    slc_test_server_says(1, ok, slc_mysql_ok_build(ok, sizeof(ok), 0, 0, 2,
        0));
    slc_test_server_says(2, e, slc_mysql_err_build(e, sizeof(e), 1273,
        "HY000", "Unknown collation: '4000'"));
    slc_test_start();
    ck_assert(slc_check_until(slc_test_failed, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(),
        SLC_TEST_CALLS(SLC_TEST_GREETING, SLC_TEST_IDENTITY, SLC_TEST_FAIL));
    ck_assert_str_eq(slc_test_rec.why, "the server refused collation 4000: "
        "1273 Unknown collation: '4000'");
    ck_assert_int_eq(slc_test_rec.fail_state, SLC_BS_COLLATION);
    ck_assert_int_eq(slc_test_rec.has_err, 0);
    ck_assert_uint_eq(slc_test_rec.login, 0);
    slc_test_assert_down(0);
    ck_assert_uint_eq(slc_test_srv.ngot, 2);
}
END_TEST

/* No database, an empty password: no CONNECT_WITH_DB, an empty token. */
START_TEST(test_login_empty_password)
{
    slc_mysql_hsresp_t  r;

    slc_test_rec.db = NULL;
    slc_test_rec.empty_password = 1;
    (void) slc_test_logged_in();
    slc_test_login(&r);
    ck_assert_uint_eq(r.auth_len, 0);
    ck_assert_ptr_null(r.db);
    ck_assert_uint_eq(r.capabilities & SLC_CLIENT_CONNECT_WITH_DB, 0);
    ck_assert_uint_eq(r.user_len, 3);
}
END_TEST

/* The server's ERR instead of a greeting (too many connections): fail
   with that ERR, not a login's, and the server is not marked down. */
START_TEST(test_err_greeting)
{
    uint8_t e[128];
    size_t  n = slc_test_err(e, sizeof(e), 1040, "Too many connections");

    slc_test_server_says(0, e, n);
    slc_test_start();
    ck_assert(slc_check_until(slc_test_failed, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(), SLC_TEST_CALLS(SLC_TEST_FAIL));
    ck_assert_int_eq(slc_test_rec.has_err, 1);
    ck_assert_uint_eq(slc_test_rec.err_len, n);
    ck_assert_mem_eq(slc_test_rec.err, e, n);
    ck_assert_uint_eq(slc_test_rec.login, 0);
    ck_assert_int_eq(slc_test_rec.has_plugin, 0);
    slc_test_assert_down(0);
    ck_assert_uint_eq(slc_test_srv.ngot, 0);       /* no login sent */
    ck_assert_uint_eq(slc_test_stats.active, 0);   /* closed by the fake */
}
END_TEST

/* The server's ERR to the login: fail with login and that ERR; the
   server is up (it answered), not marked down. */
START_TEST(test_err_login)
{
    uint8_t e[128];
    size_t  n = slc_test_err(e, sizeof(e), 1045,
                             "Access denied for user 'app'");

    slc_test_server_greets();
    slc_test_server_says(1, e, n);
    slc_test_start();
    ck_assert(slc_check_until(slc_test_failed, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(),
        SLC_TEST_CALLS(SLC_TEST_GREETING, SLC_TEST_IDENTITY, SLC_TEST_FAIL));
    ck_assert_uint_eq(slc_test_rec.login, 1);
    ck_assert_int_eq(slc_test_rec.has_err, 1);
    ck_assert_uint_eq(slc_test_rec.err_len, n);
    ck_assert_mem_eq(slc_test_rec.err, e, n);
    ck_assert_int_eq(slc_test_rec.fail_state, SLC_BS_AUTH);
    slc_test_assert_down(0);
}
END_TEST

/* AuthSwitchRequest to mysql_native_password: identity asked again, the
   token for the new scramble (seq 3), then the OK. */
START_TEST(test_switch_native)
{
    uint8_t sw[64], ok[32], data[SLC_MYSQL_SCRAMBLE_LEN + 1];
    size_t  n;

    memcpy(data, slc_test_scramble2, SLC_MYSQL_SCRAMBLE_LEN);
    data[SLC_MYSQL_SCRAMBLE_LEN] = 0;
    n = slc_mysql_authswitch_build(sw, sizeof(sw), SLC_MYSQL_NATIVE_PLUGIN,
        data, sizeof(data));
    ck_assert_uint_gt(n, 0);
    slc_test_server_greets();
    slc_test_server_says(1, sw, n);
    slc_test_server_says(2, ok, slc_mysql_ok_build(ok, sizeof(ok), 0, 0, 2,
        0));
    slc_test_start();
    ck_assert(slc_check_until(slc_test_went, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(),
        SLC_TEST_CALLS(SLC_TEST_GREETING, SLC_TEST_IDENTITY,
                       SLC_TEST_IDENTITY, SLC_TEST_READY, SLC_TEST_GO));
    ck_assert_uint_eq(slc_test_srv.ngot, 2);
    ck_assert_uint_eq(slc_test_srv.got[1].seq, 3);
    slc_test_assert_token(slc_test_scramble2, slc_test_srv.got[1].p,
        slc_test_srv.got[1].len);
    ck_assert_mem_eq(slc_test_b->scramble, slc_test_scramble2,
        SLC_MYSQL_SCRAMBLE_LEN);
}
END_TEST

/* The same with an empty password: the answer to the switch is empty. */
START_TEST(test_switch_native_empty)
{
    uint8_t sw[64], ok[32], data[SLC_MYSQL_SCRAMBLE_LEN + 1] = { 0 };

    slc_test_rec.empty_password = 1;
    memcpy(data, slc_test_scramble2, SLC_MYSQL_SCRAMBLE_LEN);
    slc_test_server_greets();
    slc_test_server_says(1, sw, slc_mysql_authswitch_build(sw, sizeof(sw),
        SLC_MYSQL_NATIVE_PLUGIN, data, sizeof(data)));
    slc_test_server_says(2, ok, slc_mysql_ok_build(ok, sizeof(ok), 0, 0, 2,
        0));
    slc_test_start();
    ck_assert(slc_check_until(slc_test_went, SLC_TEST_WAIT));
    ck_assert_uint_eq(slc_test_srv.ngot, 2);
    ck_assert_uint_eq(slc_test_srv.got[1].len, 0);
}
END_TEST

/* A switch to a plugin sluice cannot answer: fail naming it; not down. */
START_TEST(test_switch_other)
{
    static const uint8_t nonce[32] = "an ed25519 nonce, 32 bytes long";
    uint8_t              sw[64];
    size_t               n = slc_mysql_authswitch_build(sw, sizeof(sw),
                                 "client_ed25519", nonce, sizeof(nonce));

    ck_assert_uint_gt(n, 0);
    slc_test_server_greets();
    slc_test_server_says(1, sw, n);
    slc_test_start();
    ck_assert(slc_check_until(slc_test_failed, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(),
        SLC_TEST_CALLS(SLC_TEST_GREETING, SLC_TEST_IDENTITY, SLC_TEST_FAIL));
    ck_assert_int_eq(slc_test_rec.has_plugin, 1);
    ck_assert_str_eq(slc_test_rec.plugin, "client_ed25519");
    ck_assert_int_eq(slc_test_rec.has_err, 0);
    ck_assert_uint_eq(slc_test_rec.login, 0);
    slc_test_assert_down(0);
    ck_assert_uint_eq(slc_test_srv.ngot, 1);       /* no answer to it */
}
END_TEST

/* A greeting that does not parse (protocol 9): fail, marked down. */
START_TEST(test_bad_greeting)
{
    static const uint8_t bad[] = { 9, '5', '.', '0', 0, 1, 2, 3 };

    slc_test_server_says(0, bad, sizeof(bad));
    slc_test_start();
    ck_assert(slc_check_until(slc_test_failed, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(), SLC_TEST_CALLS(SLC_TEST_FAIL));
    ck_assert_int_eq(slc_test_rec.has_err, 0);
    ck_assert_uint_eq(slc_test_rec.login, 0);
    slc_test_assert_down(1);
    ck_assert_uint_eq(slc_test_srv.ngot, 0);
}
END_TEST

/* The server hangs up once it has the login: fail, once, marked down
   (the connection, not the login, failed). */
START_TEST(test_hangup_in_login)
{
    slc_test_server_greets();
    slc_test_server_hangs_up(1);
    slc_test_start();
    ck_assert(slc_check_until(slc_test_failed, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(),
        SLC_TEST_CALLS(SLC_TEST_GREETING, SLC_TEST_IDENTITY, SLC_TEST_FAIL));
    ck_assert_int_eq(slc_test_rec.fail_state, SLC_BS_AUTH);
    ck_assert_int_eq(slc_test_rec.has_err, 0);
    ck_assert_uint_eq(slc_test_rec.login, 0);
    slc_test_assert_down(1);
}
END_TEST

/* The server hangs up before it greets: fail, marked down. */
START_TEST(test_hangup_before_greeting)
{
    slc_test_server_hangs_up(0);
    slc_test_start();
    ck_assert(slc_check_until(slc_test_failed, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(), SLC_TEST_CALLS(SLC_TEST_FAIL));
    ck_assert_int_eq(slc_test_rec.fail_state, SLC_BS_GREETING);
    slc_test_assert_down(1);
}
END_TEST

/*
 * Nobody listens there: the header promises NULL from slc_backend_open,
 * the reason in f (marked down), the slot given back, and no ops call,
 * then or later.
 */
START_TEST(test_nobody_listens)
{
    slc_backend_fail_t f;

    slc_test_us.addrlen = slc_test_unix_addr(&slc_test_us.addr, "nobody");
    ck_assert_ptr_null(slc_test_open(&f));
    ck_assert_ptr_nonnull(f.why);
    ck_assert_uint_eq(f.down, 1);
    ck_assert_ptr_null(f.err);
    ck_assert_uint_eq(f.login, 0);
    ck_assert_uint_eq(slc_test_stats.connect_errors, 1);
    ck_assert_uint_ne(slc_test_us.down_until, 0);
    ck_assert_uint_eq(slc_test_stats.active, 0);
    ck_assert_uint_eq(slc_test_held[0].active, 0);
    slc_loop_once(slc_loop, 0);
    ck_assert_uint_eq(slc_test_rec.ncalls, 0);
}
END_TEST

/* A connect that never completes (a TCP listener whose accept queue is
   full drops the SYN): the backend's timer fails it, marked down. */
START_TEST(test_connect_timeout)
{
    struct sockaddr_in *sin = (struct sockaddr_in *) &slc_test_us.addr;
    socklen_t           len = sizeof(*sin);
    int                 fd, filler;

    memset(&slc_test_us.addr, 0, sizeof(slc_test_us.addr));
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    slc_test_us.addrlen = len;
    /* not in the loop: nothing accepts; a backlog of 0 holds one */
    fd = slc_test_server_socket(&slc_test_us.addr, len, 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *) sin, &len), 0);
    filler = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_eq(connect(filler, (struct sockaddr *) sin, len), 0);

    slc_test_timeouts.connect_timeout = 100;
    ck_assert_ptr_nonnull(slc_test_open(&(slc_backend_fail_t) { 0 }));
    ck_assert(slc_check_until(slc_test_failed, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(), SLC_TEST_CALLS(SLC_TEST_FAIL));
    ck_assert_int_eq(slc_test_rec.fail_state, SLC_BS_CONNECTING);
    ck_assert_str_eq(slc_test_rec.why, "connect timed out");
    slc_test_assert_down(1);
    close(filler);
}
END_TEST

/* Connected, but the server never greets: the same timer, marked down. */
START_TEST(test_greeting_timeout)
{
    slc_test_timeouts.connect_timeout = 100;
    slc_test_start();
    ck_assert(slc_check_until(slc_test_failed, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(), SLC_TEST_CALLS(SLC_TEST_FAIL));
    ck_assert_int_eq(slc_test_rec.fail_state, SLC_BS_GREETING);
    ck_assert_str_eq(slc_test_rec.why, "handshake timed out");
    slc_test_assert_down(1);
}
END_TEST

/*
 * Logged in, then its owner waits on b's timer for an answer (KILL's side
 * connection): when that runs out the server greeted and took the login,
 * so it is up: b fails, its server is not marked down.
 */
START_TEST(test_owner_wait_timeout)
{
    slc_backend_t *b = slc_test_logged_in();

    ck_assert_int_eq(b->state, SLC_BS_READY);
    slc_timer_add(slc_loop, &b->timer, 50);     /* the owner's wait */
    ck_assert(slc_check_until(slc_test_failed, SLC_TEST_WAIT));
    ck_assert_int_eq(slc_test_rec.fail_state, SLC_BS_READY);
    ck_assert_str_eq(slc_test_rec.why, "timed out waiting for the answer");
    slc_test_assert_down(0);
}
END_TEST

/*
 * A greeting hook that takes the exchange over: no identity, no login;
 * what the server says next goes to relay.  Its timer (re-armed here as
 * a hook could leave it) then fails it without marking the server down:
 * a relayed exchange waits on the client.
 */
START_TEST(test_take_over)
{
    static const uint8_t more[] = { 0x01, 'x' };

    slc_test_rec.take_over = 1;
    slc_test_server_greets();
    slc_test_start();
    ck_assert(slc_check_until(slc_test_called, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(), SLC_TEST_CALLS(SLC_TEST_GREETING));
    ck_assert_int_eq(slc_test_b->state, SLC_BS_RELAY);
    slc_test_server_send(&slc_test_srv, more, sizeof(more));
    ck_assert(slc_check_until(slc_test_relayed, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(),
        SLC_TEST_CALLS(SLC_TEST_GREETING, SLC_TEST_RELAY));
    ck_assert_ptr_null(slc_test_b->in);             /* relay reads it */

    slc_timer_add(slc_loop, &slc_test_b->timer, 20);
    ck_assert(slc_check_until(slc_test_failed, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_rec.why, "handshake timed out");
    ck_assert_int_eq(slc_test_rec.fail_state, SLC_BS_RELAY);
    slc_test_assert_down(0);
    /* closed: whatever it sent reached the server before the end */
    ck_assert(slc_check_until(slc_test_server_eof, SLC_TEST_WAIT));
    ck_assert_uint_eq(slc_test_srv.ngot, 0);        /* no login */
}
END_TEST

/*
 * Several things go wrong while the owner keeps b open (a greeting that
 * does not parse, then the server hangs up, then the timer expires): fail
 * is called once, with the first reason.
 */
START_TEST(test_fail_once)
{
    static const uint8_t bad[] = { 9, 0 };

    slc_test_rec.keep_on_fail = 1;
    slc_test_timeouts.connect_timeout = 100;
    slc_test_server_says(0, bad, sizeof(bad));
    slc_test_start();
    ck_assert(slc_check_until(slc_test_failed, SLC_TEST_WAIT));
    ck_assert_int_eq(slc_test_b->failed, 1);
    ck_assert_int_eq(slc_test_b->timer.armed, 1);
    slc_conn_close(&slc_test_srv.c);
    ck_assert(slc_check_until(slc_test_b_all_over, SLC_TEST_WAIT));
    ck_assert_uint_eq(slc_test_rec.nfail, 1);
    ck_assert_str_eq(slc_test_calls(), SLC_TEST_CALLS(SLC_TEST_FAIL));
    ck_assert_str_ne(slc_test_rec.why, "handshake timed out");
    slc_test_assert_down(1);
}
END_TEST

/*
 * Once it failed, b says nothing more, even kept open: the handshake timed
 * out, then the server's greeting arrives late (and the server hangs up):
 * no greeting, identity, ready or go follows.
 */
START_TEST(test_fail_then_greeting)
{
    uint8_t g[256];
    size_t  n = slc_test_greeting(g, sizeof(g), slc_test_scramble);

    slc_test_rec.keep_on_fail = 1;
    slc_test_timeouts.connect_timeout = 100;
    slc_test_start();
    ck_assert(slc_check_until(slc_test_failed, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_rec.why, "handshake timed out");
    slc_test_server_send(&slc_test_srv, g, n);
    slc_conn_close(&slc_test_srv.c);
    ck_assert(slc_check_until(slc_test_b_hung_up, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_calls(), SLC_TEST_CALLS(SLC_TEST_FAIL));
}
END_TEST

/* Log in with `own` as the session's own backend (NULL: none, or b
   itself with own_is_b), then close: what does the server get? */
static void
slc_test_quit_case(slc_backend_t *own, int own_is_b, int b_quit)
{
    slc_backend_t *b = slc_test_logged_in();

    slc_test_s.backend = own_is_b ? b : own;
    if (b_quit) {
        ck_assert_int_eq(slc_mysql_track_client(&b->track, slc_test_quit,
                                                sizeof(slc_test_quit)),
                         SLC_OK);
    }
    slc_backend_close(b);
    slc_test_b = NULL;
    ck_assert(slc_check_until(slc_test_server_eof, SLC_TEST_WAIT));
}

/* A fake own backend whose client sent COM_QUIT (quit: 1) or not. */
static void
slc_test_own(slc_backend_t *own, int quit)
{
    memset(own, 0, sizeof(*own));
    own->state = SLC_BS_READY;
    slc_mysql_track_init(&own->track, SLC_CLIENT_PROTOCOL_41, 2);
    if (quit) {
        ck_assert_int_eq(slc_mysql_track_client(&own->track, slc_test_quit,
                                                sizeof(slc_test_quit)),
                         SLC_OK);
    }
    ck_assert_int_eq(slc_mysql_track_quit_sent(&own->track), quit);
}

/*
 * Who says COM_QUIT as b closes.  A router's backend, closed after the
 * session's own carried the client's COM_QUIT, says it too (its server
 * counts a clean end); not when the client vanished without it, nor when
 * b already said it; and the own backend does not say it twice.
 */
static const struct {
    int       own;          /* -1: b is the own one; 0, 1: a fake own,
                               whose client sent COM_QUIT (1) or not */
    int       b_quit;       /* b carried one already */
    unsigned  packets;      /* what b's server got: the login, a QUIT */
} slc_test_quits[] = {
    { 1, 0, 2 },
    { 0, 0, 1 },
    { -1, 1, 1 },
    { 1, 1, 1 },
};

START_TEST(test_quit)
{
    slc_backend_t own;
    int           o = slc_test_quits[_i].own;

    if (o >= 0) {
        slc_test_own(&own, o);
    }
    slc_test_quit_case(o >= 0 ? &own : NULL, o < 0,
        slc_test_quits[_i].b_quit);
    ck_assert_uint_eq(slc_test_srv.ngot, slc_test_quits[_i].packets);
    if (slc_test_srv.ngot == 2) {
        ck_assert_uint_eq(slc_test_srv.got[1].seq, 0);
        ck_assert_uint_eq(slc_test_srv.got[1].len, 1);
        ck_assert_uint_eq(slc_test_srv.got[1].p[0], SLC_COM_QUIT);
    }
    if (o >= 0) {
        slc_mysql_track_free(&own.track);
    }
}
END_TEST

static const char *
slc_test_text(const slc_backend_fail_t *f, size_t len)
{
    static char buf[256];

    memset(buf, 'X', sizeof(buf));
    slc_backend_fail_text(f, buf, len);
    return buf;
}

/* slc_backend_fail_text: the server's ERR to the connection or to the
   login, a refused login without one, or "failed: WHY"; an ERR that does
   not parse is no ERR; always terminated. */
START_TEST(test_fail_text)
{
    uint8_t            e[128], bad[] = { SLC_MYSQL_ERR, 0x10 };
    size_t             n = slc_test_err(e, sizeof(e), 1040,
                                        "Too many connections");
    slc_backend_fail_t f = {
        .why = "the server refused the connection", .err = e,
        .err_len = (uint32_t) n,
    };

    ck_assert_str_eq(slc_test_text(&f, 256),
        "refused the connection: 1040 Too many connections");
    n = slc_test_err(e, sizeof(e), 1045, "Access denied for user 'app'");
    f = (slc_backend_fail_t) {
        .why = "the server refused the login", .login = 1, .err = e,
        .err_len = (uint32_t) n,
    };
    ck_assert_str_eq(slc_test_text(&f, 256),
        "refused the login: 1045 Access denied for user 'app'");
    f = (slc_backend_fail_t) { .why = "connect timed out", .down = 1 };
    ck_assert_str_eq(slc_test_text(&f, 256), "failed: connect timed out");
    f = (slc_backend_fail_t) { .why = "x", .login = 1 };
    ck_assert_str_eq(slc_test_text(&f, 256), "refused the login");
    f = (slc_backend_fail_t) {
        .why = "the server refused the connection", .err = bad,
        .err_len = sizeof(bad),
    };
    ck_assert_str_eq(slc_test_text(&f, 256),
        "failed: the server refused the connection");
    f = (slc_backend_fail_t) { .why = "connect timed out" };
    ck_assert_str_eq(slc_test_text(&f, 8), "failed:");
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("mysql_backend");
    TCase *login = tcase_create("login");
    TCase *fail = tcase_create("failures");
    TCase *quit = tcase_create("close");
    TCase *text = tcase_create("text");

    tcase_add_checked_fixture(login, slc_test_setup, slc_test_teardown);
    tcase_add_test(login, test_login);
    tcase_add_test(login, test_login_empty_password);
    tcase_add_test(login, test_switch_native);
    tcase_add_test(login, test_switch_native_empty);
    tcase_add_test(login, test_take_over);
    tcase_add_test(login, test_login_collation);
    tcase_add_test(login, test_login_collation_small);
    suite_add_tcase(s, login);

    tcase_add_checked_fixture(fail, slc_test_setup, slc_test_teardown);
    tcase_add_test(fail, test_err_greeting);
    tcase_add_test(fail, test_err_login);
    tcase_add_test(fail, test_collation_refused);
    tcase_add_test(fail, test_switch_other);
    tcase_add_test(fail, test_bad_greeting);
    tcase_add_test(fail, test_hangup_in_login);
    tcase_add_test(fail, test_hangup_before_greeting);
    tcase_add_test(fail, test_nobody_listens);
    tcase_add_test(fail, test_connect_timeout);
    tcase_add_test(fail, test_owner_wait_timeout);
    tcase_add_test(fail, test_greeting_timeout);
    tcase_add_test(fail, test_fail_once);
    tcase_add_test(fail, test_fail_then_greeting);
    suite_add_tcase(s, fail);

    tcase_add_checked_fixture(quit, slc_test_setup, slc_test_teardown);
    tcase_add_loop_test(quit, test_quit, 0, (int) (sizeof(slc_test_quits)
                        / sizeof(slc_test_quits[0])));
    suite_add_tcase(s, quit);

    tcase_add_test(text, test_fail_text);
    suite_add_tcase(s, text);
    return slc_check_run(s);
}
