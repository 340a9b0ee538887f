/*
 * The command layer's side of a backend failure (src/mysql/cmd/slc_mysql_cmd.c:
 * slc_cmd_backend_fail, the own and the router's ops), with a real session
 * in command mode and no server: the client and every backend are
 * socketpairs the test holds the other end of, the router is a fake whose
 * hooks record what they hear, and sluice's own loop runs it all.  What
 * it shows: a failure the command layer finds (a hang-up while idle, in
 * the background or with a command in flight, bytes nobody asked for) or
 * a router reports goes through the backend's ops, so the session's own
 * backend reaches the router's own_lost and a router's backend reaches its
 * owner's fail, whichever backend that is now (the ops follow
 * slc_cmd_set_own and slc_cmd_give); a command that waited for a backend
 * that could not log in gets ERR 1429, one in flight on a lost backend
 * ERR 1927, the own and a router's alike, and the session goes on; each
 * is logged once, at the level that fits.
 */

#include "slc_test.h"
#include "slc_test_modules.h"
#include "slc_test_loop.h"

#include <sys/socket.h>

#include "slc_core.h"
#include "slc_buf.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_cmd.h"
#include "slc_mysql_forward.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_router.h"
#include "slc_mysql_upstream.h"
#include "slc_worker.h"

SLC_TEST_MODULES("core mysql", &slc_core_module, &slc_mysql_module);

#define SLC_TEST_WAIT   3000    /* ms: a deadline, never a sleep */
#define SLC_TEST_MAX    8

/* What the fake router and its backends' owner heard. */
typedef struct {
    unsigned        own_lost;
    char            own_lost_why[128];
    unsigned        owner_fail;
    char            owner_fail_why[128];
    unsigned        owner_fail_down;
    slc_backend_t  *owner_failed;       /* the last one */
    unsigned        commands;
    unsigned        closed;             /* the router's close hook */
    /* how it answers */
    slc_backend_t  *route;              /* command: where it goes */
    slc_backend_t  *replacement;        /* own_lost's answer */
} slc_test_rec_t;

static slc_test_rec_t  slc_test_rec;

/* A backend the test made, and its server's end of the socketpair. */
typedef struct {
    slc_backend_t  *b;
    int             peer;
    int             router;             /* the router closes it */
} slc_test_be_t;

static slc_test_be_t          slc_test_be[SLC_TEST_MAX];
static unsigned               slc_test_nbe;
static slc_loop_t             slc_test_loop;
static slc_cycle_t            slc_test_cycle;
static slc_server_stats_t     slc_test_stats[2];
static slc_held_t             slc_test_held[2];
static slc_upstream_server_t  slc_test_us[2];
static slc_mysql_timeouts_t   slc_test_timeouts;
static slc_mysql_srv_t        slc_test_srv;
static slc_session_t         *slc_test_s;
static int                    slc_test_client = -1;  /* the client's end */
static char                   slc_test_log_path[64];
static FILE                  *slc_test_log;     /* sluice's log, read */
static const slc_backend_ops_t *slc_test_own_ops;

/* --- the fake router ------------------------------------------------- */

static slc_backend_t *
slc_test_command(slc_session_t *s, const slc_cmd_t *cmd)
{
    (void) s;
    (void) cmd;
    slc_test_rec.commands++;
    return slc_test_rec.route;
}

static slc_backend_t *
slc_test_own_lost(slc_session_t *s, const char *why)
{
    (void) s;
    slc_test_rec.own_lost++;
    strlcpy(slc_test_rec.own_lost_why, why,
        sizeof(slc_test_rec.own_lost_why));
    return slc_test_rec.replacement;
}

static void
slc_test_forget(slc_backend_t *b)
{
    for (unsigned i = 0; i < slc_test_nbe; i++) {
        if (slc_test_be[i].b == b) {
            slc_test_be[i].b = NULL;
        }
    }
}

/* The session closes: the router closes the backends it holds. */
static void
slc_test_router_close(slc_session_t *s)
{
    slc_test_rec.closed++;
    for (unsigned i = 0; i < slc_test_nbe; i++) {
        slc_test_be_t *e = &slc_test_be[i];

        if (e->b != NULL && e->router && e->b != s->backend) {
            slc_backend_close(e->b);
            e->b = NULL;
        }
    }
}

static const slc_router_t  slc_test_router = {
    .command = slc_test_command,
    .close = slc_test_router_close,
    .own_lost = slc_test_own_lost,
};

static slc_module_t  slc_test_module = {
    .name = "test_cmd",
    .type = SLC_MODULE_ROUTER,
    .router = &slc_test_router,
};

/* The owner (the router's table) of its backends. */

static void
slc_test_owner_ready(slc_backend_t *b, const uint8_t *ok, size_t len)
{
    (void) ok;
    (void) len;
    slc_cmd_attach(b);
}

static void
slc_test_owner_fail(slc_backend_t *b, const slc_backend_fail_t *f)
{
    slc_test_rec.owner_fail++;
    strlcpy(slc_test_rec.owner_fail_why, f->why,
        sizeof(slc_test_rec.owner_fail_why));
    slc_test_rec.owner_fail_down = f->down;
    slc_test_rec.owner_failed = b;
    slc_test_forget(b);
    slc_backend_close(b);               /* the router drops it */
}

static const slc_backend_ops_t  slc_test_owner = {
    .ready = slc_test_owner_ready,
    .fail = slc_test_owner_fail,
};

/* --- the harness ---------------------------------------------------- */

static void
slc_test_nothing(slc_conn_t *c)
{
    (void) c;
}

/*
 * A backend on server `i` over a socketpair, READY (logged in, idle) or
 * still logging in, as slc_backend_open would leave it for the command
 * layer: its slot taken, its tracker started from the login's OK.
 */
static slc_backend_t *
slc_test_backend(unsigned i, slc_backend_state_t state, int *peer)
{
    static const uint8_t  ok[] = { 0, 0, 0, 2, 0, 0, 0 };
    slc_test_be_t        *e = &slc_test_be[slc_test_nbe++];
    slc_backend_t        *b = calloc(1, sizeof(*b));
    int                   sp[2];

    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK
                                | SOCK_CLOEXEC, 0, sp), 0);
    ck_assert_int_eq(slc_upstream_acquire(&slc_test_us[i]), 1);
    b->magic = SLC_BACKEND_MAGIC;       /* as slc_backend_open makes it */
    b->counted = 1;
    b->server = &slc_test_us[i];
    b->session = slc_test_s;
    b->state = state;
    b->conn = (slc_conn_t) {
        .fd = sp[0], .data = b, .on_read = slc_test_nothing,
        .on_write = slc_test_nothing,
    };
    b->caps = slc_test_s->caps;
    slc_backend_track_start(b, b->caps, 0, ok, sizeof(ok));
    ck_assert_int_eq(slc_conn_register(slc_loop, &b->conn), SLC_OK);
    e->b = b;
    e->peer = sp[1];
    *peer = sp[1];
    return b;
}

/* A backend of the router's: its owner is the fake's table. */
static slc_backend_t *
slc_test_router_backend(slc_backend_state_t state, int *peer)
{
    slc_backend_t *b = slc_test_backend(1, state, peer);

    slc_test_be[slc_test_nbe - 1].router = 1;
    slc_cmd_give(b, &slc_test_owner, NULL);
    if (state == SLC_BS_READY) {
        slc_cmd_attach(b);
    }
    return b;
}

static void
slc_test_server(unsigned i, const char *name)
{
    slc_upstream_server_t *us = &slc_test_us[i];

    memset(us, 0, sizeof(*us));
    strlcpy(us->name, name, sizeof(us->name));
    us->stats = &slc_test_stats[i];
    us->held = &slc_test_held[i];
    us->weight = 1;
}

/*
 * Checked fixture: a session in command mode (as slc_session_go leaves
 * it), its own backend on server 0, its client's end held by the test.
 * The log goes to a file, at info.
 */
static void
slc_test_setup(void)
{
    int  sp[2], peer, fd;
    char err[256];

    ck_assert_int_eq(slc_loop_init(&slc_test_loop), SLC_OK);
    slc_loop = &slc_test_loop;
    slc_session_forward_set(&slc_forward);  /* as the module's init */
    /* the file goes at once: the test reads it through its own fd, and
       a test that dies leaves nothing behind */
    strlcpy(slc_test_log_path, "/tmp/slc_test_cmd.XXXXXX",
        sizeof(slc_test_log_path));
    fd = mkstemp(slc_test_log_path);
    ck_assert_int_ne(fd, -1);
    ck_assert_int_eq(slc_log_open(slc_test_log_path, err, sizeof(err)),
        SLC_OK);
    unlink(slc_test_log_path);
    slc_test_log = fdopen(fd, "r");
    ck_assert_ptr_nonnull(slc_test_log);
    slc_log_level = SLC_LOG_INFO;
    memset(&slc_test_rec, 0, sizeof(slc_test_rec));
    memset(slc_test_be, 0, sizeof(slc_test_be));
    slc_test_nbe = 0;
    slc_worker_cycle = &slc_test_cycle;
    slc_test_server(0, "own-server");
    slc_test_server(1, "router-server");
    slc_test_srv.router = &slc_test_module;
    slc_test_srv.timeouts = &slc_test_timeouts;

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK
                                | SOCK_CLOEXEC, 0, sp), 0);
    slc_test_client = sp[1];
    slc_test_s = slc_session_new_adopted(sp[0], &slc_test_srv);
    ck_assert_ptr_nonnull(slc_test_s);
    slc_test_s->id = 7;
    strlcpy(slc_test_s->user, "app", sizeof(slc_test_s->user));
    strlcpy(slc_test_s->peer, "test-client", sizeof(slc_test_s->peer));
    slc_test_s->caps = SLC_CLIENT_PROTOCOL_41 | SLC_CLIENT_SECURE_CONNECTION
        | SLC_CLIENT_TRANSACTIONS | SLC_CLIENT_MULTI_RESULTS
        | SLC_CLIENT_PLUGIN_AUTH | SLC_CLIENT_DEPRECATE_EOF;
    slc_test_s->state = SLC_SS_READY;
    slc_test_s->backend = slc_test_backend(0, SLC_BS_READY, &peer);
    slc_cmd_start(slc_test_s);
    ck_assert_int_eq(slc_conn_register(slc_loop, &slc_test_s->client),
        SLC_OK);
    slc_test_own_ops = slc_test_s->backend->ops;
    ck_assert_ptr_nonnull(slc_test_own_ops);
}

static void
slc_test_teardown(void)
{
    if (slc_test_s != NULL) {
        slc_session_close(slc_test_s, SLC_LOG_INFO, "test over");
        slc_test_s = NULL;
    }
    for (unsigned i = 0; i < slc_test_nbe; i++) {
        close(slc_test_be[i].peer);
    }
    close(slc_test_client);
    slc_loop_once(slc_loop, 0);         /* the deferred frees */
    slc_loop_done(slc_loop);
    fclose(slc_test_log);
}

static int
slc_test_own_lost_heard(void)
{
    return slc_test_rec.own_lost > 0;
}

static int
slc_test_owner_heard(void)
{
    return slc_test_rec.owner_fail > 0;
}

static int
slc_test_commands_heard(void)
{
    return slc_test_rec.commands > 0;
}

static int
slc_test_router_closed(void)
{
    return slc_test_rec.closed > 0;
}

/* Whether fd has bytes to read, or its peer hung up. */
static int
slc_test_readable(int fd)
{
    char c;

    return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) >= 0;
}

static int
slc_test_client_heard(void)
{
    return slc_test_readable(slc_test_client);
}

static int  slc_test_watched = -1;

static int
slc_test_watched_heard(void)
{
    return slc_test_readable(slc_test_watched);
}

/* Whether fd's peer hung up (and sent nothing first). */
static int
slc_test_hung_up(int fd)
{
    char c;

    return recv(fd, &c, 1, MSG_DONTWAIT) == 0;
}

/* The server of backend i (slc_test_be) hangs up. */
static void
slc_test_hang_up(unsigned i)
{
    close(slc_test_be[i].peer);
    slc_test_be[i].peer = -1;
}

/* The client sends COM_QUERY "select 1". */
static void
slc_test_query(void)
{
    static const uint8_t q[] = { 9, 0, 0, 0, 0x03, 's', 'e', 'l', 'e', 'c',
                                 't', ' ', '1' };

    ck_assert_int_eq(send(slc_test_client, q, sizeof(q), 0),
        (ssize_t) sizeof(q));
}

/* The backend behind `peer` gets the client's command, whole. */
static void
slc_test_assert_got_query(int peer)
{
    uint8_t p[64];

    slc_test_watched = peer;
    ck_assert(slc_check_until(slc_test_watched_heard, SLC_TEST_WAIT));
    ck_assert_int_eq(recv(peer, p, sizeof(p), MSG_DONTWAIT), 13);
    ck_assert_uint_eq(p[4], 0x03);
}

/* The client's next packet is ERR `code` whose message holds `text`. */
static void
slc_test_assert_err(uint16_t code, const char *text)
{
    uint8_t      p[1024];
    ssize_t      n;
    uint16_t     got;
    char         state[6];
    const char  *msg, *err;
    size_t       mlen;
    char         m[600];

    ck_assert(slc_check_until(slc_test_client_heard, SLC_TEST_WAIT));
    n = recv(slc_test_client, p, sizeof(p), MSG_DONTWAIT);
    ck_assert_int_gt(n, SLC_MYSQL_HDR_LEN);
    ck_assert_uint_eq(slc_mysql_le_get(p, 3) + SLC_MYSQL_HDR_LEN,
        (uint64_t) n);
    ck_assert_uint_eq(p[3], 1);                     /* the answer's seq */
    ck_assert_int_eq(slc_mysql_err_parse(p + SLC_MYSQL_HDR_LEN,
        (size_t) n - SLC_MYSQL_HDR_LEN, &got, state, &msg, &mlen, &err),
        SLC_OK);
    ck_assert_uint_eq(got, code);
    snprintf(m, sizeof(m), "%.*s", (int) mlen, msg);
    ck_assert_msg(strstr(m, text) != NULL, "ERR \"%s\" lacks \"%s\"", m,
        text);
}

/* How many lines of the log hold `text`. */
static unsigned
slc_test_logged(const char *text)
{
    char      line[2048];
    unsigned  n = 0;

    rewind(slc_test_log);
    while (fgets(line, sizeof(line), slc_test_log) != NULL) {
        n += strstr(line, text) != NULL;
    }
    return n;
}

/* The session is still there, in command mode, with `own` its own. */
static void
slc_test_assert_goes_on(slc_backend_t *own)
{
    ck_assert_int_eq(slc_test_s->state, SLC_SS_READY);
    ck_assert_ptr_eq(slc_test_s->backend, own);
    ck_assert_ptr_eq(own->ops, slc_test_own_ops);
    ck_assert_ptr_null(own->owner);
    ck_assert_uint_eq(slc_test_rec.closed, 0);
    ck_assert(!slc_test_hung_up(slc_test_client));
}

/* --- the tests ------------------------------------------------------ */

/*
 * The session's own backend hangs up while idle: the command layer finds
 * it, and the router's own_lost hears it (not an owner's fail); the
 * backend it gives becomes the own, with the own's ops and no owner.
 */
START_TEST(test_own_lost_replaced)
{
    slc_backend_t *own = slc_test_s->backend, *rb;
    int            rb_peer;

    rb = slc_test_router_backend(SLC_BS_READY, &rb_peer);
    ck_assert_ptr_ne(rb->ops, slc_test_own_ops);
    ck_assert_ptr_eq(rb->owner, &slc_test_owner);
    slc_test_rec.replacement = rb;
    slc_test_forget(own);
    slc_test_hang_up(0);
    ck_assert(slc_check_until(slc_test_own_lost_heard, SLC_TEST_WAIT));
    ck_assert_uint_eq(slc_test_rec.own_lost, 1);
    ck_assert_str_eq(slc_test_rec.own_lost_why, "closed connection");
    ck_assert_uint_eq(slc_test_rec.owner_fail, 0);
    slc_test_be[1].router = 0;          /* the session's now */
    slc_test_assert_goes_on(rb);
    ck_assert_uint_eq(slc_test_stats[0].active, 0);     /* closed */
    ck_assert_uint_eq(slc_test_logged("backend server 'own-server' lost "
        "(closed connection): the session goes on with 'router-server'"),
        1);
}
END_TEST

/* ... and when own_lost gives none, the session ends, the router's own
   backends closed by its close hook, the client hung up on. */
START_TEST(test_own_lost_ends)
{
    slc_test_hang_up(0);
    slc_test_forget(slc_test_s->backend);
    ck_assert(slc_check_until(slc_test_router_closed, SLC_TEST_WAIT));
    slc_test_s = NULL;                  /* freed after this batch */
    ck_assert_uint_eq(slc_test_rec.own_lost, 1);
    ck_assert_uint_eq(slc_test_rec.owner_fail, 0);
    ck_assert(slc_test_hung_up(slc_test_client));
    ck_assert_uint_eq(slc_test_stats[0].active, 0);
    ck_assert_uint_eq(slc_test_logged("backend closed connection"), 1);
}
END_TEST

/*
 * A router's backend hangs up while idle: its owner's fail hears it, with
 * the command layer's reason (not marked down: the server was there);
 * own_lost does not; the session goes on.
 */
START_TEST(test_router_lost)
{
    slc_backend_t *own = slc_test_s->backend, *rb;
    int            rb_peer;

    rb = slc_test_router_backend(SLC_BS_READY, &rb_peer);
    slc_test_hang_up(1);
    ck_assert(slc_check_until(slc_test_owner_heard, SLC_TEST_WAIT));
    ck_assert_uint_eq(slc_test_rec.owner_fail, 1);
    ck_assert_ptr_eq(slc_test_rec.owner_failed, rb);
    ck_assert_str_eq(slc_test_rec.owner_fail_why, "closed connection");
    ck_assert_uint_eq(slc_test_rec.owner_fail_down, 0);
    ck_assert_uint_eq(slc_test_rec.own_lost, 0);
    slc_test_assert_goes_on(own);
    ck_assert_uint_eq(slc_test_stats[1].active, 0);
}
END_TEST

/* A router's backend says something nobody asked: "unexpected data". */
START_TEST(test_router_unasked)
{
    int rb_peer;

    (void) slc_test_router_backend(SLC_BS_READY, &rb_peer);
    ck_assert_int_eq(send(rb_peer, "\x01\x00\x00\x00\xff", 5, 0), 5);
    ck_assert(slc_check_until(slc_test_owner_heard, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_rec.owner_fail_why, "unexpected data");
    ck_assert_uint_eq(slc_test_rec.own_lost, 0);
}
END_TEST

/*
 * The backends change hands (slc_cmd_set_own, slc_cmd_give): the former
 * own one's failure goes to the owner's fail, the new own one's to
 * own_lost.  Who hears is what the ops say, not which backend it is.
 */
START_TEST(test_change_hands)
{
    slc_backend_t *own = slc_test_s->backend, *rb, *old;
    int            rb_peer;

    rb = slc_test_router_backend(SLC_BS_READY, &rb_peer);
    old = slc_cmd_set_own(slc_test_s, rb);
    ck_assert_ptr_eq(old, own);
    ck_assert_ptr_eq(rb->ops, slc_test_own_ops);
    ck_assert_ptr_null(rb->owner);
    slc_cmd_give(own, &slc_test_owner, NULL);
    slc_test_be[0].router = 1;
    slc_test_be[1].router = 0;
    ck_assert_ptr_ne(own->ops, slc_test_own_ops);

    slc_cmd_backend_fail(own, "the router's reason");
    ck_assert_uint_eq(slc_test_rec.owner_fail, 1);
    ck_assert_ptr_eq(slc_test_rec.owner_failed, own);
    ck_assert_str_eq(slc_test_rec.owner_fail_why, "the router's reason");
    ck_assert_uint_eq(slc_test_rec.own_lost, 0);

    slc_test_rec.replacement = NULL;
    slc_test_hang_up(1);
    slc_test_forget(rb);
    ck_assert(slc_check_until(slc_test_own_lost_heard, SLC_TEST_WAIT));
    ck_assert_uint_eq(slc_test_rec.own_lost, 1);
    ck_assert_uint_eq(slc_test_rec.owner_fail, 1);
    slc_test_s = NULL;                  /* it ended */
}
END_TEST

/*
 * A command waits for a router's backend that is still logging in, and
 * the backend reports that it could not (its ops' fail, as the backend
 * layer calls it): the owner hears it, the failure is logged once at
 * info naming the server, and the client gets ERR 1429 with the reason;
 * the session goes on.
 */
START_TEST(test_waiting_1429)
{
    slc_backend_t      *own = slc_test_s->backend, *rb;
    slc_backend_fail_t  f = { .why = "connect timed out", .down = 1 };
    int                 rb_peer;

    rb = slc_test_router_backend(SLC_BS_CONNECTING, &rb_peer);
    slc_test_rec.route = rb;
    slc_test_query();
    ck_assert(slc_check_until(slc_test_commands_heard, SLC_TEST_WAIT));
    ck_assert(!slc_test_client_heard());
    (rb->ops->fail)(rb, &f);            /* Check has a fail() macro */
    ck_assert_uint_eq(slc_test_rec.owner_fail, 1);
    ck_assert_uint_eq(slc_test_rec.owner_fail_down, 1);
    ck_assert_uint_eq(slc_test_rec.own_lost, 0);
    slc_test_assert_err(1429, "Can't connect to backend server "
        "'router-server' (connect timed out)");
    slc_test_assert_goes_on(own);
    ck_assert_uint_eq(slc_test_logged("[info]"), 1);
    ck_assert_uint_eq(slc_test_logged("backend server 'router-server' "
        "failed: connect timed out"), 1);
    ck_assert_uint_eq(slc_test_logged("[warn]"), 1);
    ck_assert_uint_eq(slc_test_logged("answered error 1429"), 1);
    ck_assert_uint_eq(slc_test_logged("[error]"), 0);
}
END_TEST

/*
 * A command in flight on a router's backend that hangs up before it
 * answers: the owner hears it, the client gets ERR 1927, the session goes
 * on with its own backend.
 */
START_TEST(test_inflight_router_1927)
{
    slc_backend_t *own = slc_test_s->backend, *rb;
    int            rb_peer;

    rb = slc_test_router_backend(SLC_BS_READY, &rb_peer);
    slc_test_rec.route = rb;
    slc_test_query();
    slc_test_assert_got_query(rb_peer);
    slc_test_hang_up(1);
    slc_test_assert_err(1927, "Lost connection to backend server "
        "'router-server' (closed connection)");
    ck_assert_uint_eq(slc_test_rec.owner_fail, 1);
    ck_assert_uint_eq(slc_test_rec.own_lost, 0);
    slc_test_assert_goes_on(own);
}
END_TEST

/*
 * The same on the session's own backend, whose router gives another: the
 * same ERR 1927 naming it, and the session goes on with the other.
 */
START_TEST(test_inflight_own_1927)
{
    slc_backend_t *own = slc_test_s->backend, *rb;
    int            own_peer = slc_test_be[0].peer, rb_peer;

    rb = slc_test_router_backend(SLC_BS_READY, &rb_peer);
    slc_test_rec.replacement = rb;
    slc_test_rec.route = own;
    slc_test_query();
    slc_test_assert_got_query(own_peer);
    slc_test_forget(own);
    slc_test_hang_up(0);
    slc_test_assert_err(1927, "Lost connection to backend server "
        "'own-server' (closed connection)");
    ck_assert_uint_eq(slc_test_rec.own_lost, 1);
    ck_assert_uint_eq(slc_test_rec.owner_fail, 0);
    slc_test_be[1].router = 0;
    slc_test_assert_goes_on(rb);
}
END_TEST

/* The router's command of its own (slc_cmd_inject) on backend i, whose
   server gets it, then hangs up before it answers. */
static void
slc_test_inject_then_hang_up(unsigned i)
{
    static const uint8_t q[] = { 0x03, 's', 'e', 'l', 'e', 'c', 't', ' ',
                                 '1' };
    slc_test_be_t       *e = &slc_test_be[i];
    slc_backend_t       *b = e->b;
    uint8_t              p[64];

    ck_assert_int_eq(slc_cmd_inject(b, q, sizeof(q)), SLC_OK);
    ck_assert(!slc_mysql_track_idle(&b->track));
    slc_test_watched = e->peer;
    ck_assert(slc_check_until(slc_test_watched_heard, SLC_TEST_WAIT));
    ck_assert_int_eq(recv(e->peer, p, sizeof(p), MSG_DONTWAIT),
        (ssize_t) sizeof(q) + SLC_MYSQL_HDR_LEN);
    slc_test_forget(b);
    slc_test_hang_up(i);
}

/*
 * A response read in the background (the router's own command) that
 * never comes: the own backend's loss goes to own_lost, as when it was
 * idle (it once went to a NULL ops->fail), the session goes on with the
 * backend the router gives, and the client hears nothing of it.
 */
START_TEST(test_background_own)
{
    slc_backend_t *rb;
    int            rb_peer;

    rb = slc_test_router_backend(SLC_BS_READY, &rb_peer);
    slc_test_rec.replacement = rb;
    slc_test_inject_then_hang_up(0);
    ck_assert(slc_check_until(slc_test_own_lost_heard, SLC_TEST_WAIT));
    ck_assert_str_eq(slc_test_rec.own_lost_why, "closed connection");
    ck_assert_uint_eq(slc_test_rec.owner_fail, 0);
    slc_test_be[1].router = 0;
    slc_test_assert_goes_on(rb);
    ck_assert(!slc_test_client_heard());
}
END_TEST

/* ... and a router's backend's, to its owner's fail. */
START_TEST(test_background_router)
{
    slc_backend_t *own = slc_test_s->backend, *rb;
    int            rb_peer;

    rb = slc_test_router_backend(SLC_BS_READY, &rb_peer);
    slc_test_inject_then_hang_up(1);
    ck_assert(slc_check_until(slc_test_owner_heard, SLC_TEST_WAIT));
    ck_assert_ptr_eq(slc_test_rec.owner_failed, rb);
    ck_assert_str_eq(slc_test_rec.owner_fail_why, "closed connection");
    ck_assert_uint_eq(slc_test_rec.own_lost, 0);
    slc_test_assert_goes_on(own);
    ck_assert(!slc_test_client_heard());
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("mysql_cmd");
    TCase *tc = tcase_create("backend failures");

    tcase_add_checked_fixture(tc, slc_test_setup, slc_test_teardown);
    tcase_add_test(tc, test_own_lost_replaced);
    tcase_add_test(tc, test_own_lost_ends);
    tcase_add_test(tc, test_router_lost);
    tcase_add_test(tc, test_router_unasked);
    tcase_add_test(tc, test_change_hands);
    tcase_add_test(tc, test_background_own);
    tcase_add_test(tc, test_background_router);
    tcase_add_test(tc, test_waiting_1429);
    tcase_add_test(tc, test_inflight_router_1927);
    tcase_add_test(tc, test_inflight_own_1927);
    suite_add_tcase(s, tc);
    return slc_check_run(s);
}
