/*
 * The message of a session handed over on reload (slc_mysql_handover.h):
 * what the old worker encodes comes out the same in the new one, and a
 * message that is short, long, of another version, with a bad id or an
 * unterminated string is refused.  And the registry's claim, by which the
 * new worker keeps the id the client saw.
 */

#include "slc_test.h"
#include "slc_test_modules.h"

#include "slc_core.h"
#include "slc_cycle.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_forward.h"
#include "slc_mysql_handover.h"
#include "slc_mysql_registry.h"

SLC_TEST_MODULES("core mysql", &slc_core_module, &slc_mysql_module);

static slc_upstream_t         slc_test_up;
static slc_upstream_server_t  slc_test_us;
static slc_mysql_srv_t        slc_test_srv;
static slc_backend_t          slc_test_b;
static slc_session_t          slc_test_s;
static uint8_t                slc_test_attrs[] = "\x03_os\x05Linux";
static slc_upstream_server_t  slc_test_us2;
static slc_backend_t          slc_test_b2;
static slc_backend_t         *slc_test_extra[SLC_HANDOVER_EXTRA + 1] = {
    &slc_test_b2, &slc_test_b2, &slc_test_b2
};
static uint8_t                slc_test_tags[SLC_HANDOVER_EXTRA + 1] = {
    5, 6, 7
};

static slc_session_t *
slc_test_session(void)
{
    slc_session_t *s = &slc_test_s;

    slc_session_forward_set(&slc_forward);  /* as the module's init */
    slc_test_up.name = (slc_str_t) slc_string("cluster");
    slc_test_us.upstream = &slc_test_up;
    strlcpy(slc_test_us.name, "127.0.0.1:3306", sizeof(slc_test_us.name));
    slc_test_srv.auth = SLC_AUTH_LOCAL;
    memset(&slc_test_b, 0, sizeof(slc_test_b));
    slc_test_b.server = &slc_test_us;
    slc_test_b.caps = 0x81234;
    slc_test_b.mariadb_caps = 0x1c;
    slc_test_b.status = 0x0002;
    slc_test_b.thread_id = 77;
    memset(slc_test_b.scramble, 'b', sizeof(slc_test_b.scramble));
    slc_test_us2 = slc_test_us;
    strlcpy(slc_test_us2.name, "127.0.0.1:3307", sizeof(slc_test_us2.name));
    slc_test_b2 = slc_test_b;
    slc_test_b2.server = &slc_test_us2;
    slc_test_b2.thread_id = 88;
    memset(s, 0, sizeof(*s));
    s->id = SLC_REGISTRY_ID_BASE + 5;
    s->srv = &slc_test_srv;
    s->backend = &slc_test_b;
    s->caps = 0xa2058f;
    s->mariadb_caps = 0x1c;
    s->max_packet = 1 << 24;
    s->charset = 8;
    s->has_db = 1;
    s->with_password = 1;
    s->cu_failures = 2;
    memset(s->scramble, 's', sizeof(s->scramble));
    memset(s->stage1, 0x11, sizeof(s->stage1));
    strlcpy(s->user, "app", sizeof(s->user));
    strlcpy(s->db, "test", sizeof(s->db));
    strlcpy(s->peer, "127.0.0.1:5000", sizeof(s->peer));
    strlcpy(s->host, "127.0.0.1", sizeof(s->host));
    s->attrs = slc_test_attrs;
    s->attrs_len = sizeof(slc_test_attrs) - 1;
    slc_mysql_track_init(&slc_test_b.track, 0x81234, 0x0002);
    slc_mysql_track_set_mariadb_caps(&slc_test_b.track, 0x1c);
    return s;
}

static uint8_t  slc_test_buf[4096];


START_TEST(test_round_trip)
{
    slc_session_t       *s = slc_test_session();
    slc_handover_msg_t   m;
    const uint8_t       *attrs = NULL;
    const char          *err = NULL;
    size_t               n;

    n = slc_mysql_handover_encode(s, slc_test_extra, slc_test_tags, 1, NULL,
        0, 3, slc_test_buf, sizeof(slc_test_buf));
    ck_assert_uint_eq(n, sizeof(m) + s->attrs_len);
    ck_assert_int_eq(slc_mysql_handover_decode(slc_test_buf, n, &m, &attrs,
                                               &err), SLC_OK);
    ck_assert_uint_eq(m.id, s->id);
    ck_assert_uint_eq(m.proc, 3);
    ck_assert_int_eq(m.auth, SLC_AUTH_LOCAL);
    ck_assert_uint_eq(m.caps, s->caps);
    ck_assert_uint_eq(m.mariadb_caps, s->mariadb_caps);
    ck_assert_uint_eq(m.max_packet, s->max_packet);
    ck_assert_uint_eq(m.charset, 8);
    ck_assert_uint_eq(m.has_db, 1);
    ck_assert_uint_eq(m.with_password, 1);
    ck_assert_uint_eq(m.cu_failures, 2);
    ck_assert_mem_eq(m.scramble, s->scramble, sizeof(m.scramble));
    ck_assert_mem_eq(m.stage1, s->stage1, sizeof(m.stage1));
    ck_assert_str_eq(m.user, "app");
    ck_assert_str_eq(m.db, "test");
    ck_assert_str_eq(m.peer, "127.0.0.1:5000");
    ck_assert_str_eq(m.host, "127.0.0.1");
    ck_assert_uint_eq(m.own.track_caps, 0x81234);
    ck_assert_uint_eq(m.own.track_mariadb_caps, 0x1c);
    ck_assert_uint_eq(m.own.track_status, 0x0002);
    ck_assert_uint_eq(m.own.caps, 0x81234);
    ck_assert_uint_eq(m.own.mariadb_caps, 0x1c);
    ck_assert_uint_eq(m.own.status, 0x0002);
    ck_assert_uint_eq(m.own.thread_id, 77);
    ck_assert_mem_eq(m.own.scramble, slc_test_b.scramble,
        sizeof(m.own.scramble));
    /* the key the stats zone uses: "upstream/address" */
    ck_assert_str_eq(m.own.server, "cluster/127.0.0.1:3306");
    /* the router's other backend, with its tag */
    ck_assert_uint_eq(m.nextra, 1);
    ck_assert_uint_eq(m.extra[0].thread_id, 88);
    ck_assert_uint_eq(m.extra[0].tag, 5);
    ck_assert_str_eq(m.extra[0].server, "cluster/127.0.0.1:3307");
    ck_assert_uint_eq(m.attrs_len, s->attrs_len);
    ck_assert_ptr_eq(attrs, slc_test_buf + sizeof(m));
    ck_assert_mem_eq(attrs, slc_test_attrs, s->attrs_len);
    slc_mysql_track_free(&slc_test_b.track);
}
END_TEST

/* The router's state follows the attributes, and arrives whole. */
START_TEST(test_router_state)
{
    slc_session_t       *s = slc_test_session();
    slc_handover_msg_t   m;
    const uint8_t       *attrs = NULL;
    const char          *err = NULL;
    const uint8_t        state[] = "RWS1\001SET @a = 1";
    size_t               n;

    n = slc_mysql_handover_encode(s, NULL, NULL, 0, state, sizeof(state), 0,
        slc_test_buf, sizeof(slc_test_buf));
    ck_assert_uint_eq(n, sizeof(m) + s->attrs_len + sizeof(state));
    ck_assert_int_eq(slc_mysql_handover_decode(slc_test_buf, n, &m, &attrs,
                                               &err), SLC_OK);
    ck_assert_uint_eq(m.router_len, sizeof(state));
    ck_assert_mem_eq(slc_test_buf + sizeof(m) + m.attrs_len, state,
                     sizeof(state));
    /* a router_len that does not add up is refused */
    ((slc_handover_msg_t *) (void *) slc_test_buf)->router_len++;
    ck_assert_int_eq(slc_mysql_handover_decode(slc_test_buf, n, &m, &attrs,
                                               &err), SLC_ERROR);
    /* too big for the buffer: nothing */
    ck_assert_uint_eq(slc_mysql_handover_encode(s, NULL, NULL, 0, state,
                          sizeof(state), 0, slc_test_buf, n - 1), 0);
    slc_mysql_track_free(&slc_test_b.track);
}
END_TEST

START_TEST(test_no_attrs_no_backend)
{
    slc_session_t       *s = slc_test_session();
    slc_handover_msg_t   m;
    const uint8_t       *attrs = slc_test_buf;
    const char          *err = NULL;
    size_t               n;

    s->attrs = NULL;
    s->attrs_len = 0;
    n = slc_mysql_handover_encode(s, NULL, NULL, 0, NULL, 0, 0, slc_test_buf,
        sizeof(slc_test_buf));
    ck_assert_uint_eq(n, sizeof(m));
    ck_assert_int_eq(slc_mysql_handover_decode(slc_test_buf, n, &m, &attrs,
                                               &err), SLC_OK);
    ck_assert_ptr_null(attrs);
    /* too small a buffer, or no backend: nothing to send */
    ck_assert_uint_eq(slc_mysql_handover_encode(s, NULL, NULL, 0, NULL, 0, 0,
                                                slc_test_buf, sizeof(m) - 1),
                      0);
    /* more extra backends than the channel carries */
    ck_assert_uint_eq(slc_mysql_handover_encode(s, slc_test_extra,
                          slc_test_tags, SLC_HANDOVER_EXTRA + 1, NULL, 0, 0,
                          slc_test_buf, sizeof(slc_test_buf)), 0);
    s->backend = NULL;
    ck_assert_uint_eq(slc_mysql_handover_encode(s, NULL, NULL, 0, NULL, 0, 0,
                                                slc_test_buf,
                                                sizeof(slc_test_buf)), 0);
    slc_mysql_track_free(&slc_test_b.track);
}
END_TEST

/* Encode, change one thing in the message, expect a refusal. */
static void
slc_test_refused(size_t off, const void *bytes, size_t len, long delta)
{
    slc_session_t       *s = slc_test_session();
    slc_handover_msg_t   m;
    const uint8_t       *attrs;
    const char          *err = NULL;
    size_t               n;

    n = slc_mysql_handover_encode(s, NULL, NULL, 0, NULL, 0, 0, slc_test_buf,
        sizeof(slc_test_buf));
    ck_assert_uint_gt(n, 0);
    if (bytes != NULL) {
        memcpy(slc_test_buf + off, bytes, len);
    }
    ck_assert_int_eq(slc_mysql_handover_decode(slc_test_buf,
                         (size_t) ((long) n + delta), &m, &attrs, &err),
                     SLC_ERROR);
    ck_assert_ptr_nonnull(err);
    slc_mysql_track_free(&slc_test_b.track);
}

START_TEST(test_refused)
{
    uint32_t  v = 99;
    uint64_t  id = 12;
    char      junk[SLC_MAX_USER + 1];

    memset(junk, 'x', sizeof(junk));
    slc_test_refused(0, "XXXX", 4, 0);                      /* magic */
    slc_test_refused(offsetof(slc_handover_msg_t, version), &v, 4, 0);
    slc_test_refused(0, NULL, 0, -1);                       /* short */
    slc_test_refused(0, NULL, 0, 1);                        /* long */
    slc_test_refused(0, NULL, 0,
        -(long) (sizeof(slc_handover_msg_t) + 1));          /* tiny */
    slc_test_refused(offsetof(slc_handover_msg_t, id), &id, 8, 0);
    slc_test_refused(offsetof(slc_handover_msg_t, user), junk,
        sizeof(junk), 0);                                   /* no NUL */
    v = 4096;
    slc_test_refused(offsetof(slc_handover_msg_t, attrs_len), &v, 4, 0);
    v = SLC_HANDOVER_EXTRA + 1;                             /* backends */
    slc_test_refused(offsetof(slc_handover_msg_t, nextra), &v, 4, 0);
    slc_test_refused(offsetof(slc_handover_msg_t, extra[1].server), junk,
        SLC_HANDOVER_KEY, 0);                               /* no NUL */
}
END_TEST

START_TEST(test_registry_claim)
{
    size_t                size = slc_registry_size(16);
    slc_registry_t       *r = malloc(size);
    slc_registry_entry_t  e;
    uint32_t              id, other;

    ck_assert_ptr_nonnull(r);
    slc_registry_init(r, size, NULL);
    ck_assert_int_eq(slc_registry_add(r, 1, &id), SLC_OK);
    slc_registry_set_backend(r, id, 3, 21);
    /* the old worker frees it, the new one (process 2) claims it */
    slc_registry_del(r, id);
    ck_assert_int_eq(slc_registry_claim(r, 2, id), SLC_OK);
    ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_OK);
    ck_assert_uint_eq(e.proc, 2);
    ck_assert_uint_eq(e.server, 0);
    /* the old worker exits: its reaping leaves the claimed entry */
    ck_assert_uint_eq(slc_registry_reap(r, 1), 0);
    ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_OK);
    /* taken: no second claim, and no id of the server's range */
    ck_assert_int_eq(slc_registry_claim(r, 3, id), SLC_AGAIN);
    ck_assert_int_eq(slc_registry_claim(r, 3, 42), SLC_AGAIN);
    /* a slot held by another id */
    other = id + r->mask + 1;
    ck_assert_int_eq(slc_registry_claim(r, 3, other), SLC_AGAIN);
    free(r);
}
END_TEST

static Suite *
slc_handover_suite(void)
{
    Suite  *s = suite_create("mysql_handover");
    TCase  *tc = tcase_create("handover");

    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_router_state);
    tcase_add_test(tc, test_no_attrs_no_backend);
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_registry_claim);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return slc_check_run(slc_handover_suite());
}
