/*
 * The connection phase: greeting and HandshakeResponse41 both ways, the
 * auth switch request, OK and ERR.  The byte arrays were captured from a
 * MariaDB 10.11 server and its mariadb client through a socket relay; the
 * tokens in them are checked against mysql_native_password too, so a wrong
 * scramble offset cannot go unnoticed.  Every parser also gets every
 * truncation and a few thousand random and mutated inputs, copied to
 * exact-size heap buffers so that AddressSanitizer sees any overread.
 */

#include "slc_test.h"

#include "slc_core.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_auth.h"

/*
 * Greeting of MariaDB 10.11.19 (Debian 12), thread 7, scramble
 * "I~bN@6.!Z&J$p-,4am\"]", captured with a socket relay.
 */
static const uint8_t  slc_test_greeting[100] = {
    0x0a, 0x35, 0x2e, 0x35, 0x2e, 0x35, 0x2d, 0x31, 0x30, 0x2e, 0x31, 0x31,
    0x2e, 0x31, 0x39, 0x2d, 0x4d, 0x61, 0x72, 0x69, 0x61, 0x44, 0x42, 0x2d,
    0x30, 0x2b, 0x64, 0x65, 0x62, 0x31, 0x32, 0x75, 0x31, 0x00, 0x07, 0x00,
    0x00, 0x00, 0x49, 0x7e, 0x62, 0x4e, 0x40, 0x36, 0x2e, 0x21, 0x00, 0xfe,
    0xf7, 0x2d, 0x02, 0x00, 0xff, 0x81, 0x15, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x1d, 0x00, 0x00, 0x00, 0x5a, 0x26, 0x4a, 0x24, 0x70, 0x2d, 0x2c,
    0x34, 0x61, 0x6d, 0x22, 0x5d, 0x00, 0x6d, 0x79, 0x73, 0x71, 0x6c, 0x5f,
    0x6e, 0x61, 0x74, 0x69, 0x76, 0x65, 0x5f, 0x70, 0x61, 0x73, 0x73, 0x77,
    0x6f, 0x72, 0x64, 0x00,
};

/*
 * The mariadb 10.11 client's reply to that greeting for
 *   mariadb -u sluice -psecret -D testdb --skip-ssl
 * Offsets: user 32, auth 39 (lenenc), db 60, plugin 67, attrs 89.
 */
static const uint8_t  slc_test_resp_native[216] = {
    0x8c, 0xa2, 0xbf, 0x00, 0x00, 0x00, 0x10, 0x00, 0x21, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x1d, 0x00, 0x00, 0x00, 0x73, 0x6c, 0x75, 0x69,
    0x63, 0x65, 0x00, 0x14, 0xa6, 0x10, 0xca, 0x11, 0x91, 0xd9, 0x5a, 0x01,
    0x4e, 0xdd, 0xff, 0x7d, 0xdf, 0xf7, 0x8a, 0xcd, 0x0f, 0x8c, 0x61, 0xa0,
    0x74, 0x65, 0x73, 0x74, 0x64, 0x62, 0x00, 0x6d, 0x79, 0x73, 0x71, 0x6c,
    0x5f, 0x6e, 0x61, 0x74, 0x69, 0x76, 0x65, 0x5f, 0x70, 0x61, 0x73, 0x73,
    0x77, 0x6f, 0x72, 0x64, 0x00, 0x7e, 0x03, 0x5f, 0x6f, 0x73, 0x05, 0x4c,
    0x69, 0x6e, 0x75, 0x78, 0x0c, 0x5f, 0x63, 0x6c, 0x69, 0x65, 0x6e, 0x74,
    0x5f, 0x6e, 0x61, 0x6d, 0x65, 0x0a, 0x6c, 0x69, 0x62, 0x6d, 0x61, 0x72,
    0x69, 0x61, 0x64, 0x62, 0x04, 0x5f, 0x70, 0x69, 0x64, 0x04, 0x34, 0x34,
    0x39, 0x30, 0x0f, 0x5f, 0x63, 0x6c, 0x69, 0x65, 0x6e, 0x74, 0x5f, 0x76,
    0x65, 0x72, 0x73, 0x69, 0x6f, 0x6e, 0x06, 0x33, 0x2e, 0x33, 0x2e, 0x32,
    0x30, 0x09, 0x5f, 0x70, 0x6c, 0x61, 0x74, 0x66, 0x6f, 0x72, 0x6d, 0x06,
    0x78, 0x38, 0x36, 0x5f, 0x36, 0x34, 0x0c, 0x70, 0x72, 0x6f, 0x67, 0x72,
    0x61, 0x6d, 0x5f, 0x6e, 0x61, 0x6d, 0x65, 0x05, 0x6d, 0x79, 0x73, 0x71,
    0x6c, 0x0c, 0x5f, 0x73, 0x65, 0x72, 0x76, 0x65, 0x72, 0x5f, 0x68, 0x6f,
    0x73, 0x74, 0x09, 0x31, 0x32, 0x37, 0x2e, 0x30, 0x2e, 0x30, 0x2e, 0x31,
};

/*
 * The same client with --default-auth=caching_sha2_password and no
 * database: empty auth data, another plugin, no CONNECT_WITH_DB.
 */
static const uint8_t  slc_test_resp_sha2[189] = {
    0x84, 0xa2, 0xbf, 0x00, 0x00, 0x00, 0x10, 0x00, 0x21, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x1d, 0x00, 0x00, 0x00, 0x73, 0x6c, 0x75, 0x69,
    0x63, 0x65, 0x00, 0x00, 0x63, 0x61, 0x63, 0x68, 0x69, 0x6e, 0x67, 0x5f,
    0x73, 0x68, 0x61, 0x32, 0x5f, 0x70, 0x61, 0x73, 0x73, 0x77, 0x6f, 0x72,
    0x64, 0x00, 0x7e, 0x03, 0x5f, 0x6f, 0x73, 0x05, 0x4c, 0x69, 0x6e, 0x75,
    0x78, 0x0c, 0x5f, 0x63, 0x6c, 0x69, 0x65, 0x6e, 0x74, 0x5f, 0x6e, 0x61,
    0x6d, 0x65, 0x0a, 0x6c, 0x69, 0x62, 0x6d, 0x61, 0x72, 0x69, 0x61, 0x64,
    0x62, 0x04, 0x5f, 0x70, 0x69, 0x64, 0x04, 0x34, 0x35, 0x35, 0x31, 0x0f,
    0x5f, 0x63, 0x6c, 0x69, 0x65, 0x6e, 0x74, 0x5f, 0x76, 0x65, 0x72, 0x73,
    0x69, 0x6f, 0x6e, 0x06, 0x33, 0x2e, 0x33, 0x2e, 0x32, 0x30, 0x09, 0x5f,
    0x70, 0x6c, 0x61, 0x74, 0x66, 0x6f, 0x72, 0x6d, 0x06, 0x78, 0x38, 0x36,
    0x5f, 0x36, 0x34, 0x0c, 0x70, 0x72, 0x6f, 0x67, 0x72, 0x61, 0x6d, 0x5f,
    0x6e, 0x61, 0x6d, 0x65, 0x05, 0x6d, 0x79, 0x73, 0x71, 0x6c, 0x0c, 0x5f,
    0x73, 0x65, 0x72, 0x76, 0x65, 0x72, 0x5f, 0x68, 0x6f, 0x73, 0x74, 0x09,
    0x31, 0x32, 0x37, 0x2e, 0x30, 0x2e, 0x30, 0x2e, 0x31,
};

/*
 * The server's answer to that: switch to mysql_native_password with the
 * greeting's scramble ("pOv)c<=_G%~q={rLd5vw") and a NUL.
 */
static const uint8_t  slc_test_authswitch[44] = {
    0xfe, 0x6d, 0x79, 0x73, 0x71, 0x6c, 0x5f, 0x6e, 0x61, 0x74, 0x69, 0x76,
    0x65, 0x5f, 0x70, 0x61, 0x73, 0x73, 0x77, 0x6f, 0x72, 0x64, 0x00, 0x70,
    0x4f, 0x76, 0x29, 0x63, 0x3c, 0x3d, 0x5f, 0x47, 0x25, 0x7e, 0x71, 0x3d,
    0x7b, 0x72, 0x4c, 0x64, 0x35, 0x76, 0x77, 0x00,
};

/* The client's token for that scramble and the password "secret". */
static const uint8_t  slc_test_switch_token[20] = {
    0x62, 0xd4, 0xa3, 0x8c, 0x37, 0xe5, 0x22, 0xe5, 0x03, 0xd0, 0x8c, 0x48,
    0x00, 0xb5, 0x02, 0xd7, 0x9e, 0x35, 0xe8, 0xd9,
};

/* A real ERR: 1045, 28000, Access denied ... */
static const uint8_t  slc_test_err[74] = {
    0xff, 0x15, 0x04, 0x23, 0x32, 0x38, 0x30, 0x30, 0x30, 0x41, 0x63, 0x63,
    0x65, 0x73, 0x73, 0x20, 0x64, 0x65, 0x6e, 0x69, 0x65, 0x64, 0x20, 0x66,
    0x6f, 0x72, 0x20, 0x75, 0x73, 0x65, 0x72, 0x20, 0x27, 0x73, 0x6c, 0x75,
    0x69, 0x63, 0x65, 0x27, 0x40, 0x27, 0x6c, 0x6f, 0x63, 0x61, 0x6c, 0x68,
    0x6f, 0x73, 0x74, 0x27, 0x20, 0x28, 0x75, 0x73, 0x69, 0x6e, 0x67, 0x20,
    0x70, 0x61, 0x73, 0x73, 0x77, 0x6f, 0x72, 0x64, 0x3a, 0x20, 0x59, 0x45,
    0x53, 0x29,
};

/* A real OK after authentication: status AUTOCOMMIT. */
static const uint8_t  slc_test_ok[7] = {
    0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
};

#define SLC_TEST_NATIVE  "mysql_native_password"


/* --- helpers ---------------------------------------------------------- */

/* An exact-size heap copy, so any read past `n` is an ASan report. */
static uint8_t *
slc_test_dup(const uint8_t *p, size_t n)
{
    uint8_t  *d = malloc(n > 0 ? n : 1);

    ck_assert_ptr_nonnull(d);
    if (n > 0) {
        memcpy(d, p, n);
    }
    return d;
}

static uint32_t
slc_test_rand(uint32_t *state)
{
    uint32_t  x = *state;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

/* Does [p, p + n) lie inside [buf, buf + len)? */
static int
slc_test_inside(const uint8_t *buf, size_t len, const void *p, size_t n)
{
    const uint8_t  *q = p;

    return q >= buf && q <= buf + len && n <= (size_t) (buf + len - q);
}

static void
slc_test_check_hsresp_ptrs(const uint8_t *buf, size_t len,
    const slc_mysql_hsresp_t *r)
{
    ck_assert(slc_test_inside(buf, len, r->user, r->user_len));
    ck_assert(slc_test_inside(buf, len, r->auth, r->auth_len));
    ck_assert(r->db == NULL || slc_test_inside(buf, len, r->db, r->db_len));
    ck_assert(r->plugin == NULL
              || slc_test_inside(buf, len, r->plugin, r->plugin_len));
    ck_assert(r->attrs == NULL
              || slc_test_inside(buf, len, r->attrs, r->attrs_len));
}

/* The client capabilities of slc_test_resp_native (0x00bfa28c): every
   optional field of a COM_CHANGE_USER. */
#define SLC_TEST_FUZZ_CAPS  0x00bfa28cu

/* Run every parser on one input; none may crash or fail without a reason. */
static void
slc_test_parse_all(const uint8_t *in, size_t len)
{
    uint8_t               *buf = slc_test_dup(in, len);
    slc_mysql_greeting_t   g;
    slc_mysql_hsresp_t     r;
    const char            *err, *s;
    const uint8_t         *d;
    size_t                 n, dn;
    uint16_t               code;
    char                   state[6];

    err = NULL;
    if (slc_mysql_greeting_parse(buf, len, &g, &err) == SLC_OK) {
        ck_assert_uint_lt(strlen(g.server_version), sizeof(g.server_version));
        ck_assert_uint_lt(strlen(g.auth_plugin), sizeof(g.auth_plugin));
    } else {
        ck_assert_ptr_nonnull(err);
    }

    err = NULL;
    if (slc_mysql_hsresp_parse(buf, len, &r, &err) == SLC_OK) {
        slc_test_check_hsresp_ptrs(buf, len, &r);
    } else {
        ck_assert_ptr_nonnull(err);
    }

    err = NULL;
    if (slc_mysql_authswitch_parse(buf, len, &s, &n, &d, &dn, &err)
        == SLC_OK)
    {
        ck_assert(slc_test_inside(buf, len, s, n));
        ck_assert(slc_test_inside(buf, len, d, dn));
    } else {
        ck_assert_ptr_nonnull(err);
    }

    err = NULL;
    if (slc_mysql_change_user_parse(buf, len, SLC_TEST_FUZZ_CAPS, &r, &code,
                                    &err) == SLC_OK)
    {
        slc_test_check_hsresp_ptrs(buf, len, &r);
    } else {
        ck_assert_ptr_nonnull(err);
    }

    err = NULL;
    if (slc_mysql_err_parse(buf, len, &code, state, &s, &n, &err) == SLC_OK) {
        ck_assert_uint_eq(strlen(state), 5);
        ck_assert(slc_test_inside(buf, len, s, n));
    } else {
        ck_assert_ptr_nonnull(err);
    }
    free(buf);
}


/* --- greeting --------------------------------------------------------- */

START_TEST(test_greeting_parse_real)
{
    slc_mysql_greeting_t  g;
    const char           *err = NULL;

    ck_assert_int_eq(slc_mysql_greeting_parse(slc_test_greeting,
                         sizeof(slc_test_greeting), &g, &err), SLC_OK);
    ck_assert_uint_eq(g.protocol, 10);
    ck_assert_str_eq(g.server_version, "5.5.5-10.11.19-MariaDB-0+deb12u1");
    ck_assert_uint_eq(g.thread_id, 7);
    ck_assert_mem_eq(g.scramble, "I~bN@6.!Z&J$p-,4am\"]", 20);
    ck_assert_uint_eq(g.capabilities, 0x81fff7feu);
    ck_assert_uint_eq(g.charset, 45);                 /* utf8mb4_general_ci */
    ck_assert_uint_eq(g.status, SLC_SERVER_STATUS_AUTOCOMMIT);
    ck_assert_uint_eq(g.mariadb_caps, 0x1d);
    ck_assert_str_eq(g.auth_plugin, SLC_TEST_NATIVE);
}
END_TEST

/* What we build from the parsed greeting is the server's, byte for byte. */
START_TEST(test_greeting_build_real)
{
    slc_mysql_greeting_t  g;
    const char           *err;
    uint8_t               out[256], *small;
    size_t                n, cap;

    ck_assert_int_eq(slc_mysql_greeting_parse(slc_test_greeting,
                         sizeof(slc_test_greeting), &g, &err), SLC_OK);
    n = slc_mysql_greeting_build(out, sizeof(out), &g);
    ck_assert_uint_eq(n, sizeof(slc_test_greeting));
    ck_assert_mem_eq(out, slc_test_greeting, n);

    for (cap = 0; cap < n; cap++) {
        small = malloc(cap > 0 ? cap : 1);
        ck_assert_uint_eq(slc_mysql_greeting_build(small, cap, &g), 0);
        free(small);
    }
    small = malloc(n);
    ck_assert_uint_eq(slc_mysql_greeting_build(small, n, &g), n);
    free(small);
}
END_TEST

/* A MySQL-style greeting: CLIENT_LONG_PASSWORD set, no extended caps. */
START_TEST(test_greeting_round_trip_mysql)
{
    slc_mysql_greeting_t  g, p;
    const char           *err;
    uint8_t               out[256];
    size_t                n;

    memset(&g, 0, sizeof(g));
    g.protocol = 10;
    strlcpy(g.server_version, "8.0.36", sizeof(g.server_version));
    g.thread_id = 0xdeadbeef;
    memcpy(g.scramble, "abcdefghijklmnopqrst", 20);
    g.capabilities = 0xdfffffffu;
    g.charset = 255;
    g.status = SLC_SERVER_STATUS_AUTOCOMMIT | SLC_SERVER_STATUS_IN_TRANS;
    g.mariadb_caps = 0x1234;                  /* not sent: MySQL peer */
    strlcpy(g.auth_plugin, "caching_sha2_password", sizeof(g.auth_plugin));

    n = slc_mysql_greeting_build(out, sizeof(out), &g);
    ck_assert_uint_gt(n, 0);
    ck_assert_uint_eq(out[1 + 7 + 4 + 8 + 1 + 2 + 1 + 2 + 2], 21);
    ck_assert_int_eq(slc_mysql_greeting_parse(out, n, &p, &err), SLC_OK);
    g.mariadb_caps = 0;
    ck_assert_mem_eq(&p, &g, sizeof(g));
}
END_TEST

/* Without PLUGIN_AUTH: length byte 0, still 12 + 1 scramble bytes. */
START_TEST(test_greeting_no_plugin_auth)
{
    slc_mysql_greeting_t  g, p;
    const char           *err;
    uint8_t               out[256];
    size_t                n;

    memset(&g, 0, sizeof(g));
    g.protocol = 10;
    strlcpy(g.server_version, "5.0.96", sizeof(g.server_version));
    memcpy(g.scramble, "01234567890123456789", 20);
    g.capabilities = SLC_CLIENT_LONG_PASSWORD | SLC_CLIENT_PROTOCOL_41
                     | SLC_CLIENT_SECURE_CONNECTION;
    strlcpy(g.auth_plugin, "ignored", sizeof(g.auth_plugin));

    n = slc_mysql_greeting_build(out, sizeof(out), &g);
    ck_assert_uint_eq(n, 1 + 7 + 4 + 8 + 1 + 2 + 1 + 2 + 2 + 1 + 10 + 13);
    ck_assert_uint_eq(out[1 + 7 + 4 + 8 + 1 + 2 + 1 + 2 + 2], 0);
    ck_assert_int_eq(slc_mysql_greeting_parse(out, n, &p, &err), SLC_OK);
    ck_assert_mem_eq(p.scramble, g.scramble, 20);
    ck_assert_str_eq(p.auth_plugin, "");
}
END_TEST

START_TEST(test_greeting_truncated)
{
    slc_mysql_greeting_t  g;
    const char           *err;
    uint8_t              *buf;
    size_t                n;

    for (n = 0; n < sizeof(slc_test_greeting); n++) {
        buf = slc_test_dup(slc_test_greeting, n);
        err = NULL;
        ck_assert_int_eq(slc_mysql_greeting_parse(buf, n, &g, &err),
                         SLC_ERROR);
        ck_assert_ptr_nonnull(err);
        free(buf);
    }
}
END_TEST

/* Change one byte of the real greeting, keep `len` bytes, expect `why`. */
static void
slc_test_greeting_bad(size_t off, uint8_t v, size_t len, const char *why)
{
    uint8_t               buf[sizeof(slc_test_greeting)];
    slc_mysql_greeting_t  g;
    const char           *err = NULL;

    memcpy(buf, slc_test_greeting, sizeof(buf));
    buf[off] = v;
    ck_assert_int_eq(slc_mysql_greeting_parse(buf, len, &g, &err),
                     SLC_ERROR);
    ck_assert_str_eq(err, why);
}

/* Offsets in slc_test_greeting. */
#define SLC_TEST_G_VERSION_NUL  33
#define SLC_TEST_G_CAPS_LO      47
#define SLC_TEST_G_AUTH_LEN     54

START_TEST(test_greeting_bad)
{
    static const uint8_t  too_many[] = {
        0xff, 0x10, 0x04, 'T', 'o', 'o', ' ', 'm', 'a', 'n', 'y'
    };
    size_t                all = sizeof(slc_test_greeting);
    slc_mysql_greeting_t  g;
    const char           *err = NULL;

    ck_assert_int_eq(slc_mysql_greeting_parse(too_many, sizeof(too_many),
                                              &g, &err), SLC_ERROR);
    ck_assert_str_eq(err, "server sent an ERR packet instead of a greeting");

    slc_test_greeting_bad(0, 9, all, "greeting protocol version is not 10");
    /* the byte after the version is 0x07, the one after that a NUL */
    slc_test_greeting_bad(SLC_TEST_G_VERSION_NUL, 'x',
                          SLC_TEST_G_VERSION_NUL + 2,
                          "greeting server version not NUL-terminated");
    /* 0xf7 in the second capability byte: 0x80 SECURE_CONNECTION, 0x02 41 */
    slc_test_greeting_bad(SLC_TEST_G_CAPS_LO + 1, 0x77, all,
                          "greeting lacks PROTOCOL_41 or SECURE_CONNECTION");
    slc_test_greeting_bad(SLC_TEST_G_CAPS_LO + 1, 0xf5, all,
                          "greeting lacks PROTOCOL_41 or SECURE_CONNECTION");
    /* auth data length 255: part 2 would be 247 bytes */
    slc_test_greeting_bad(SLC_TEST_G_AUTH_LEN, 0xff, all,
                          "greeting truncated in the scramble");
    slc_test_greeting_bad(all - 1, 'x', all,
                          "greeting auth plugin name not NUL-terminated");
}
END_TEST

START_TEST(test_greeting_long_names)
{
    slc_mysql_greeting_t  g;
    const char           *err;
    uint8_t               buf[300], *p;

    /* a 100-byte version is cut to 63; a 64-byte plugin name is refused */
    p = buf;
    *p++ = 10;
    memset(p, 'v', 100);
    p[100] = '\0';
    p += 101;
    memcpy(p, slc_test_greeting + 34, 78 - 34);   /* thread id .. part 2 */
    p += 78 - 34;
    memset(p, 'p', 64);
    p[64] = '\0';
    p += 65;

    ck_assert_int_eq(slc_mysql_greeting_parse(buf, (size_t) (p - buf), &g,
                                              &err), SLC_ERROR);
    ck_assert_str_eq(err, "greeting auth plugin name too long");

    p[-2] = '\0';                                  /* 63-byte name */
    ck_assert_int_eq(slc_mysql_greeting_parse(buf, (size_t) (p - buf - 1),
                                              &g, &err), SLC_OK);
    ck_assert_uint_eq(strlen(g.server_version), 63);
    ck_assert_uint_eq(strlen(g.auth_plugin), 63);
}
END_TEST


/* --- HandshakeResponse41 ---------------------------------------------- */

START_TEST(test_hsresp_parse_real_native)
{
    slc_mysql_greeting_t     g;
    slc_mysql_hsresp_t       r;
    slc_mysql_native_hash_t  h;
    const char              *err = NULL;
    uint8_t                  stage1[SLC_SHA1_LEN], want[SLC_SHA1_LEN];

    ck_assert_int_eq(slc_mysql_hsresp_parse(slc_test_resp_native,
                         sizeof(slc_test_resp_native), &r, &err), SLC_OK);
    ck_assert_uint_eq(r.capabilities, 0x00bfa28cu);
    ck_assert_uint_eq(r.max_packet, 0x00100000u);
    ck_assert_uint_eq(r.charset, 33);                  /* utf8mb3 */
    ck_assert_uint_eq(r.mariadb_caps, 0x1d);
    ck_assert_uint_eq(r.user_len, 6);
    ck_assert_mem_eq(r.user, "sluice", 6);
    ck_assert_uint_eq(r.auth_len, 20);
    ck_assert_ptr_eq(r.auth, slc_test_resp_native + 40);
    ck_assert_uint_eq(r.db_len, 6);
    ck_assert_mem_eq(r.db, "testdb", 6);
    ck_assert_uint_eq(r.plugin_len, strlen(SLC_TEST_NATIVE));
    ck_assert_mem_eq(r.plugin, SLC_TEST_NATIVE, r.plugin_len);
    ck_assert_uint_eq(r.attrs_len, 126);
    ck_assert_ptr_eq(r.attrs, slc_test_resp_native + 90);
    ck_assert_mem_eq(r.attrs, "\x03_os\x05Linux", 10);

    /* the token answers the greeting's scramble for "secret" */
    ck_assert_int_eq(slc_mysql_greeting_parse(slc_test_greeting,
                         sizeof(slc_test_greeting), &g, &err), SLC_OK);
    slc_mysql_native_hash("secret", 6, &h);
    ck_assert_int_eq(slc_mysql_native_verify(g.scramble, &h, r.auth,
                                             r.auth_len, stage1), SLC_OK);
    slc_sha1("secret", 6, want);
    ck_assert_mem_eq(stage1, want, SLC_SHA1_LEN);
}
END_TEST

START_TEST(test_hsresp_parse_real_sha2)
{
    slc_mysql_hsresp_t  r;
    const char         *err = NULL;

    ck_assert_int_eq(slc_mysql_hsresp_parse(slc_test_resp_sha2,
                         sizeof(slc_test_resp_sha2), &r, &err), SLC_OK);
    ck_assert_uint_eq(r.capabilities & SLC_CLIENT_CONNECT_WITH_DB, 0);
    ck_assert_uint_eq(r.user_len, 6);
    ck_assert_uint_eq(r.auth_len, 0);
    ck_assert_ptr_null(r.db);
    ck_assert_uint_eq(r.plugin_len, strlen("caching_sha2_password"));
    ck_assert_mem_eq(r.plugin, "caching_sha2_password", r.plugin_len);
    ck_assert_uint_eq(r.attrs_len, 126);
}
END_TEST

/* Building from the parsed fields gives back the client's bytes. */
START_TEST(test_hsresp_build_real)
{
    slc_mysql_hsresp_t  r;
    const char         *err;
    uint8_t             out[512], *small;
    size_t              n, cap;

    ck_assert_int_eq(slc_mysql_hsresp_parse(slc_test_resp_native,
                         sizeof(slc_test_resp_native), &r, &err), SLC_OK);
    n = slc_mysql_hsresp_build(out, sizeof(out), &r);
    ck_assert_uint_eq(n, sizeof(slc_test_resp_native));
    ck_assert_mem_eq(out, slc_test_resp_native, n);

    for (cap = 0; cap < n; cap++) {
        small = malloc(cap > 0 ? cap : 1);
        ck_assert_uint_eq(slc_mysql_hsresp_build(small, cap, &r), 0);
        free(small);
    }
}
END_TEST

/*
 * Every combination of the six capabilities that change the layout:
 * bit i of _i selects slc_test_layout_caps[i].
 */
static const uint32_t  slc_test_layout_caps[] = {
    SLC_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA, SLC_CLIENT_SECURE_CONNECTION,
    SLC_CLIENT_CONNECT_WITH_DB, SLC_CLIENT_PLUGIN_AUTH,
    SLC_CLIENT_CONNECT_ATTRS, SLC_CLIENT_LONG_PASSWORD,
};

static void
slc_test_hsresp_fill(slc_mysql_hsresp_t *r, uint32_t caps)
{
    static const uint8_t  auth[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                       12, 13, 14, 15, 16, 17, 18, 19, 20 };
    static const uint8_t  attrs[] = "\x04_pid\x02" "42";

    memset(r, 0, sizeof(*r));
    r->capabilities = caps | SLC_CLIENT_PROTOCOL_41;
    r->max_packet = 16777216;
    r->charset = 45;
    r->mariadb_caps = 0x1d;
    r->user = "app";
    r->user_len = 3;
    r->auth = auth;
    r->auth_len = sizeof(auth);
    r->db = "shop";
    r->db_len = 4;
    r->plugin = SLC_TEST_NATIVE;
    r->plugin_len = strlen(SLC_TEST_NATIVE);
    r->attrs = attrs;
    r->attrs_len = sizeof(attrs) - 1;
}

START_TEST(test_hsresp_round_trip)
{
    slc_mysql_hsresp_t  r, p;
    uint32_t            caps = 0;
    const char         *err;
    uint8_t             out[256], *buf;
    size_t              n, i;

    for (i = 0; i < slc_nelems(slc_test_layout_caps); i++) {
        if (_i & (1 << i)) {
            caps |= slc_test_layout_caps[i];
        }
    }
    slc_test_hsresp_fill(&r, caps);
    n = slc_mysql_hsresp_build(out, sizeof(out), &r);
    ck_assert_uint_gt(n, 32);
    buf = slc_test_dup(out, n);
    ck_assert_int_eq(slc_mysql_hsresp_parse(buf, n, &p, &err), SLC_OK);
    slc_test_check_hsresp_ptrs(buf, n, &p);

    ck_assert_uint_eq(p.capabilities, r.capabilities);
    ck_assert_uint_eq(p.max_packet, r.max_packet);
    ck_assert_uint_eq(p.charset, r.charset);
    ck_assert_uint_eq(p.mariadb_caps,
                      (caps & SLC_CLIENT_LONG_PASSWORD) ? 0 : 0x1d);
    ck_assert_uint_eq(p.user_len, 3);
    ck_assert_mem_eq(p.user, "app", 3);
    ck_assert_uint_eq(p.auth_len, r.auth_len);
    ck_assert_mem_eq(p.auth, r.auth, r.auth_len);
    if (caps & SLC_CLIENT_CONNECT_WITH_DB) {
        ck_assert_uint_eq(p.db_len, 4);
        ck_assert_mem_eq(p.db, "shop", 4);
    } else {
        ck_assert_ptr_null(p.db);
    }
    if (caps & SLC_CLIENT_PLUGIN_AUTH) {
        ck_assert_uint_eq(p.plugin_len, r.plugin_len);
        ck_assert_mem_eq(p.plugin, r.plugin, r.plugin_len);
    } else {
        ck_assert_ptr_null(p.plugin);
    }
    if (caps & SLC_CLIENT_CONNECT_ATTRS) {
        ck_assert_uint_eq(p.attrs_len, r.attrs_len);
        ck_assert_mem_eq(p.attrs, r.attrs, r.attrs_len);
    } else {
        ck_assert_ptr_null(p.attrs);
    }
    free(buf);
}
END_TEST

/* Only prefixes that end between optional fields are whole responses. */
START_TEST(test_hsresp_truncated)
{
    slc_mysql_hsresp_t  r;
    const char         *err;
    uint8_t            *buf;
    size_t              n, all = sizeof(slc_test_resp_native);
    int                 rc;

    for (n = 0; n < all; n++) {
        buf = slc_test_dup(slc_test_resp_native, n);
        err = NULL;
        rc = slc_mysql_hsresp_parse(buf, n, &r, &err);
        if (n == 67 || n == 89) {
            ck_assert_int_eq(rc, SLC_OK);
            ck_assert_ptr_null(r.attrs);
            ck_assert(n == 89 || r.plugin == NULL);
        } else {
            ck_assert_msg(rc == SLC_ERROR, "prefix of %zu bytes parsed", n);
            ck_assert_ptr_nonnull(err);
        }
        free(buf);
    }
}
END_TEST

START_TEST(test_hsresp_refused)
{
    uint8_t             buf[sizeof(slc_test_resp_native)];
    slc_mysql_hsresp_t  r;
    const char         *err = NULL;

    /* the first 32 bytes alone, with CLIENT_SSL: an SSLRequest */
    memcpy(buf, slc_test_resp_native, sizeof(buf));
    buf[1] |= SLC_CLIENT_SSL >> 8;
    ck_assert_int_eq(slc_mysql_hsresp_parse(buf, 32, &r, &err), SLC_ERROR);
    ck_assert_str_eq(err, "SSLRequest instead of a handshake response");

    /* a pre-4.1 client */
    memcpy(buf, slc_test_resp_native, sizeof(buf));
    buf[1] &= (uint8_t) ~(SLC_CLIENT_PROTOCOL_41 >> 8);
    ck_assert_int_eq(slc_mysql_hsresp_parse(buf, sizeof(buf), &r, &err),
                     SLC_ERROR);
    ck_assert_str_eq(err, "pre-4.1 handshake response");

    /* an auth length past the end */
    memcpy(buf, slc_test_resp_native, sizeof(buf));
    buf[39] = 0xfc;
    buf[40] = 0xff;
    buf[41] = 0xff;
    ck_assert_int_eq(slc_mysql_hsresp_parse(buf, sizeof(buf), &r, &err),
                     SLC_ERROR);

    /* an attribute block longer than the packet */
    memcpy(buf, slc_test_resp_native, sizeof(buf));
    buf[89] = 0x7f;
    ck_assert_int_eq(slc_mysql_hsresp_parse(buf, sizeof(buf), &r, &err),
                     SLC_ERROR);
    ck_assert_str_eq(err, "handshake response connect attributes truncated");
}
END_TEST

/* PLUGIN_AUTH set but no name sent: the server's default plugin applies. */
START_TEST(test_hsresp_plugin_absent)
{
    slc_mysql_hsresp_t  r, p;
    const char         *err;
    uint8_t             out[256];
    size_t              n;

    slc_test_hsresp_fill(&r, SLC_CLIENT_SECURE_CONNECTION);
    n = slc_mysql_hsresp_build(out, sizeof(out), &r);
    ck_assert_uint_gt(n, 0);
    out[2] |= SLC_CLIENT_PLUGIN_AUTH >> 16;
    ck_assert_int_eq(slc_mysql_hsresp_parse(out, n, &p, &err), SLC_OK);
    ck_assert_ptr_null(p.plugin);
    ck_assert_uint_eq(p.auth_len, 20);
}
END_TEST

/*
 * The 1-byte collation a login carries for a collation id: itself up to
 * 255; above, one of the same character set (checked against MariaDB
 * 10.11: SHOW COLLATION, SET collation_connection = ID), else utf8mb4.
 */
static const struct {
    uint16_t  id;
    uint8_t   login;
} slc_test_collations[] = {
    { 0, 0 }, { 8, 8 }, { 45, 45 }, { 224, 224 }, { 255, 255 },
    { 1032, 8 },            /* latin1_swedish_nopad_ci: latin1_swedish_ci */
    { 1071, 47 },           /* latin1_nopad_bin: latin1_bin */
    { 1270, 246 },          /* utf8mb4_unicode_520_nopad_ci */
    { 576, 33 },            /* utf8mb3_croatian_ci */
    { 608, 45 },            /* utf8mb4_croatian_ci */
    { 2048, 33 },           /* utf8mb3_uca1400_ai_ci */
    { 2303, 33 },
    { 2304, 45 },           /* utf8mb4_uca1400_ai_ci */
    { 2559, 45 },
    { 2560, 45 },           /* ucs2_uca1400_ai_ci: never a client's */
    { 309, 45 },            /* MySQL 8's utf8mb4_0900_bin */
    { 1280, 45 }, { 4096, 45 }, { 65535, 45 },
};

START_TEST(test_hsresp_collation)
{
    size_t i;

    for (i = 0; i < sizeof(slc_test_collations)
                    / sizeof(slc_test_collations[0]); i++)
    {
        ck_assert_msg(slc_mysql_hsresp_collation(slc_test_collations[i].id)
                      == slc_test_collations[i].login, "collation %u",
                      (unsigned) slc_test_collations[i].id);
    }
}
END_TEST

START_TEST(test_hsresp_build_limits)
{
    slc_mysql_hsresp_t  r, p;
    const char         *err;
    static uint8_t      big[300], out[512];
    size_t              n;

    /* 300 bytes of auth data: lenenc can, a 1-byte length cannot */
    memset(big, 'x', sizeof(big));
    slc_test_hsresp_fill(&r, SLC_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
                             | SLC_CLIENT_SECURE_CONNECTION);
    r.auth = big;
    r.auth_len = sizeof(big);
    n = slc_mysql_hsresp_build(out, sizeof(out), &r);
    ck_assert_uint_eq(n, 32 + 4 + 3 + 300);
    ck_assert_int_eq(slc_mysql_hsresp_parse(out, n, &p, &err), SLC_OK);
    ck_assert_uint_eq(p.auth_len, 300);

    r.capabilities &= ~SLC_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;
    ck_assert_uint_eq(slc_mysql_hsresp_build(out, sizeof(out), &r), 0);

    /* a NUL inside a NUL-terminated field cannot be encoded */
    slc_test_hsresp_fill(&r, SLC_CLIENT_SECURE_CONNECTION);
    r.user = "a\0b";
    ck_assert_uint_eq(slc_mysql_hsresp_build(out, sizeof(out), &r), 0);
    slc_test_hsresp_fill(&r, 0);
    r.auth = (const uint8_t *) "ab\0cd";
    r.auth_len = 5;
    ck_assert_uint_eq(slc_mysql_hsresp_build(out, sizeof(out), &r), 0);
}
END_TEST


/* --- COM_CHANGE_USER -------------------------------------------------- */

/*
 * COM_CHANGE_USER written as libmariadb's mthd_my_send_cmd writes it for
 * mysql_change_user(c, "user", <pw>, "test") over a utf8mb4_unicode_ci
 * connection: user, 1-byte auth length and 20-byte token, database,
 * collation 0x00e0, plugin name, connect attributes with their lenenc
 * total.  Offsets: auth length 6, db 27, collation 32, plugin 34, attrs 56.
 */
static const uint8_t  slc_test_chuser[91] = {
    0x11, 'u', 's', 'e', 'r', 0x00, 0x14,
    0xa6, 0x10, 0xca, 0x11, 0x91, 0xd9, 0x5a, 0x01, 0x4e, 0xdd,
    0xff, 0x7d, 0xdf, 0xf7, 0x8a, 0xcd, 0x0f, 0x8c, 0x61, 0xa0,
    't', 'e', 's', 't', 0x00, 0xe0, 0x00,
    'm', 'y', 's', 'q', 'l', '_', 'n', 'a', 't', 'i', 'v', 'e', '_',
    'p', 'a', 's', 's', 'w', 'o', 'r', 'd', 0x00,
    0x22, 0x03, '_', 'o', 's', 0x05, 'L', 'i', 'n', 'u', 'x',
    0x0c, '_', 'c', 'l', 'i', 'e', 'n', 't', '_', 'n', 'a', 'm', 'e',
    0x0a, 'l', 'i', 'b', 'm', 'a', 'r', 'i', 'a', 'd', 'b',
};

/* The capabilities that client negotiated (slc_test_resp_native). */
#define SLC_TEST_CHUSER_CAPS  0x00bfa28cu

static void
slc_test_check_chuser_ptrs(const uint8_t *buf, size_t len,
    const slc_mysql_hsresp_t *r)
{
    slc_test_check_hsresp_ptrs(buf, len, r);
    ck_assert_ptr_nonnull(r->db);
}

START_TEST(test_chuser_parse_real)
{
    uint8_t            *buf = slc_test_dup(slc_test_chuser,
                                           sizeof(slc_test_chuser));
    slc_mysql_hsresp_t  r;
    uint16_t            coll = 1;
    const char         *err = NULL;

    ck_assert_int_eq(slc_mysql_change_user_parse(buf, sizeof(slc_test_chuser),
                         SLC_TEST_CHUSER_CAPS, &r, &coll, &err), SLC_OK);
    slc_test_check_chuser_ptrs(buf, sizeof(slc_test_chuser), &r);
    ck_assert_uint_eq(r.user_len, 4);
    ck_assert_mem_eq(r.user, "user", 4);
    ck_assert_uint_eq(r.auth_len, 20);
    ck_assert_ptr_eq(r.auth, buf + 7);
    ck_assert_uint_eq(r.db_len, 4);
    ck_assert_mem_eq(r.db, "test", 4);
    ck_assert_uint_eq(coll, 0x00e0);
    ck_assert_uint_eq(r.plugin_len, strlen(SLC_TEST_NATIVE));
    ck_assert_mem_eq(r.plugin, SLC_TEST_NATIVE, r.plugin_len);
    ck_assert_ptr_eq(r.attrs, buf + 57);
    ck_assert_uint_eq(r.attrs_len, 0x22);
    ck_assert_uint_eq(r.capabilities
                      & SLC_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA, 0);
    free(buf);
}
END_TEST

/* A client from before 4.1.1: user, auth, database and nothing more. */
START_TEST(test_chuser_parse_old)
{
    static const uint8_t  old[] = "\x11" "bob\0" "scrmbl\0" "\0";
    slc_mysql_hsresp_t    r;
    uint16_t              coll = 7;
    const char           *err = NULL;
    uint8_t              *buf = slc_test_dup(slc_test_chuser, 32);

    ck_assert_int_eq(slc_mysql_change_user_parse(buf, 32,
                         SLC_TEST_CHUSER_CAPS, &r, &coll, &err), SLC_OK);
    ck_assert_uint_eq(coll, 0);
    ck_assert_uint_eq(r.auth_len, 20);
    ck_assert_mem_eq(r.db, "test", 4);
    ck_assert_ptr_null(r.plugin);
    ck_assert_ptr_null(r.attrs);
    free(buf);

    /* no SECURE_CONNECTION: the auth data is NUL-terminated */
    buf = slc_test_dup(old, sizeof(old) - 1);
    ck_assert_int_eq(slc_mysql_change_user_parse(buf, sizeof(old) - 1,
                         SLC_CLIENT_PROTOCOL_41, &r, &coll, &err), SLC_OK);
    ck_assert_uint_eq(r.user_len, 3);
    ck_assert_uint_eq(r.auth_len, 6);
    ck_assert_mem_eq(r.auth, "scrmbl", 6);
    ck_assert_uint_eq(r.db_len, 0);
    ck_assert_ptr_nonnull(r.db);
    ck_assert_uint_eq(coll, 0);
    free(buf);
}
END_TEST

/* Only prefixes that end between the optional fields are whole. */
START_TEST(test_chuser_truncated)
{
    slc_mysql_hsresp_t  r;
    uint16_t            coll;
    const char         *err;
    uint8_t            *buf;
    size_t              n;
    int                 rc;

    for (n = 0; n < sizeof(slc_test_chuser); n++) {
        buf = slc_test_dup(slc_test_chuser, n);
        err = NULL;
        rc = slc_mysql_change_user_parse(buf, n, SLC_TEST_CHUSER_CAPS, &r,
                                         &coll, &err);
        if (n == 32 || n == 34 || n == 56) {
            ck_assert_msg(rc == SLC_OK, "prefix of %zu bytes: %s", n, err);
            ck_assert_uint_eq(coll, n == 32 ? 0 : 0xe0);
            ck_assert(n == 56 || r.plugin == NULL);
            ck_assert_ptr_null(r.attrs);
            slc_test_check_chuser_ptrs(buf, n, &r);
        } else {
            ck_assert_msg(rc == SLC_ERROR, "prefix of %zu bytes parsed", n);
            ck_assert_ptr_nonnull(err);
        }
        free(buf);
    }
}
END_TEST

START_TEST(test_chuser_bad)
{
    static const uint8_t  lens[] = { 0xff, 0x80, 0x55 };
    uint8_t               buf[sizeof(slc_test_chuser)];
    slc_mysql_hsresp_t    r;
    uint16_t              coll;
    const char           *err;
    size_t                i;

    /* auth lengths past the end of the packet */
    for (i = 0; i < slc_nelems(lens); i++) {
        memcpy(buf, slc_test_chuser, sizeof(buf));
        buf[6] = lens[i];
        err = NULL;
        ck_assert_int_eq(slc_mysql_change_user_parse(buf, sizeof(buf),
                             SLC_TEST_CHUSER_CAPS, &r, &coll, &err),
                         SLC_ERROR);
        ck_assert_str_eq(err, "handshake response auth data truncated");
    }

    /* a user name without its NUL */
    ck_assert_int_eq(slc_mysql_change_user_parse(slc_test_chuser, 5,
                         SLC_TEST_CHUSER_CAPS, &r, &coll, &err), SLC_ERROR);
    ck_assert_str_eq(err, "COM_CHANGE_USER user name not NUL-terminated");

    /* an attribute block longer than the packet */
    memcpy(buf, slc_test_chuser, sizeof(buf));
    buf[56] = 0x23;
    ck_assert_int_eq(slc_mysql_change_user_parse(buf, sizeof(buf),
                         SLC_TEST_CHUSER_CAPS, &r, &coll, &err), SLC_ERROR);
}
END_TEST

/* The golden packet is exactly what the builder writes for its fields. */
START_TEST(test_chuser_build_real)
{
    slc_mysql_hsresp_t  r;
    uint16_t            coll;
    const char         *err;
    uint8_t             out[128];

    ck_assert_int_eq(slc_mysql_change_user_parse(slc_test_chuser,
                         sizeof(slc_test_chuser), SLC_TEST_CHUSER_CAPS, &r,
                         &coll, &err), SLC_OK);
    r.capabilities = SLC_TEST_CHUSER_CAPS;
    ck_assert_uint_eq(slc_mysql_change_user_build(out, sizeof(out), &r, coll),
                      sizeof(slc_test_chuser));
    ck_assert_mem_eq(out, slc_test_chuser, sizeof(slc_test_chuser));
    /* one byte short of room: nothing */
    ck_assert_uint_eq(slc_mysql_change_user_build(out,
                          sizeof(slc_test_chuser) - 1, &r, coll), 0);
}
END_TEST

/* Every layout (as for the response) built and parsed back. */
START_TEST(test_chuser_round_trip)
{
    slc_mysql_hsresp_t  r, p;
    uint32_t            caps = 0;
    uint16_t            coll = 0;
    const char         *err = NULL;
    uint8_t             out[256], *buf;
    size_t              n, i;

    for (i = 0; i < slc_nelems(slc_test_layout_caps); i++) {
        if (_i & (1 << i)) {
            caps |= slc_test_layout_caps[i];
        }
    }
    slc_test_hsresp_fill(&r, caps);
    n = slc_mysql_change_user_build(out, sizeof(out), &r, 0x00e0);
    ck_assert_uint_gt(n, 0);
    ck_assert_uint_eq(out[0], SLC_COM_CHANGE_USER);
    buf = slc_test_dup(out, n);
    ck_assert_msg(slc_mysql_change_user_parse(buf, n, r.capabilities, &p,
                      &coll, &err) == SLC_OK, "caps %x: %s", caps, err);
    slc_test_check_chuser_ptrs(buf, n, &p);
    ck_assert_uint_eq(coll, 0x00e0);
    ck_assert_uint_eq(p.user_len, 3);
    ck_assert_mem_eq(p.user, "app", 3);
    ck_assert_uint_eq(p.auth_len, r.auth_len);
    ck_assert_mem_eq(p.auth, r.auth, r.auth_len);
    ck_assert_uint_eq(p.db_len, 4);
    ck_assert_mem_eq(p.db, "shop", 4);
    if (caps & SLC_CLIENT_PLUGIN_AUTH) {
        ck_assert_uint_eq(p.plugin_len, r.plugin_len);
        ck_assert_mem_eq(p.plugin, r.plugin, r.plugin_len);
    } else {
        ck_assert_ptr_null(p.plugin);
    }
    if (caps & SLC_CLIENT_CONNECT_ATTRS) {
        ck_assert_uint_eq(p.attrs_len, r.attrs_len);
        ck_assert_mem_eq(p.attrs, r.attrs, r.attrs_len);
    } else {
        ck_assert_ptr_null(p.attrs);
    }
    free(buf);
}
END_TEST


/* --- auth switch, OK, ERR --------------------------------------------- */

START_TEST(test_authswitch_real)
{
    const char              *plugin, *err = NULL;
    const uint8_t           *data;
    size_t                   plen, dlen, n;
    uint8_t                  out[64];
    slc_mysql_native_hash_t  h;
    uint8_t                  stage1[SLC_SHA1_LEN];

    ck_assert_int_eq(slc_mysql_authswitch_parse(slc_test_authswitch,
                         sizeof(slc_test_authswitch), &plugin, &plen, &data,
                         &dlen, &err), SLC_OK);
    ck_assert_uint_eq(plen, strlen(SLC_TEST_NATIVE));
    ck_assert_mem_eq(plugin, SLC_TEST_NATIVE, plen);
    ck_assert_uint_eq(dlen, 21);
    ck_assert_uint_eq(data[20], 0);

    /* the client answered this scramble with slc_test_switch_token */
    slc_mysql_native_hash("secret", 6, &h);
    ck_assert_int_eq(slc_mysql_native_verify(data, &h, slc_test_switch_token,
                         sizeof(slc_test_switch_token), stage1), SLC_OK);

    n = slc_mysql_authswitch_build(out, sizeof(out), SLC_TEST_NATIVE, data,
                                   dlen);
    ck_assert_uint_eq(n, sizeof(slc_test_authswitch));
    ck_assert_mem_eq(out, slc_test_authswitch, n);
    ck_assert_uint_eq(slc_mysql_authswitch_build(out, n - 1, SLC_TEST_NATIVE,
                                                 data, dlen), 0);
}
END_TEST

START_TEST(test_authswitch_bad)
{
    static const uint8_t  old[] = { 0xfe };
    static const uint8_t  ok[] = { 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00 };
    static const uint8_t  nonul[] = { 0xfe, 'a', 'b', 'c' };
    static const uint8_t  nodata[] = { 0xfe, 'a', 'b', 'c', 0 };
    const char           *plugin, *err = NULL;
    const uint8_t        *data;
    size_t                plen, dlen;

    ck_assert_int_eq(slc_mysql_authswitch_parse(old, 0, &plugin, &plen,
                         &data, &dlen, &err), SLC_ERROR);
    ck_assert_int_eq(slc_mysql_authswitch_parse(old, 1, &plugin, &plen,
                         &data, &dlen, &err), SLC_ERROR);
    ck_assert_str_eq(err, "old auth switch request (mysql_old_password)");
    ck_assert_int_eq(slc_mysql_authswitch_parse(ok, sizeof(ok), &plugin,
                         &plen, &data, &dlen, &err), SLC_ERROR);
    ck_assert_int_eq(slc_mysql_authswitch_parse(nonul, sizeof(nonul),
                         &plugin, &plen, &data, &dlen, &err), SLC_ERROR);

    ck_assert_int_eq(slc_mysql_authswitch_parse(nodata, sizeof(nodata),
                         &plugin, &plen, &data, &dlen, &err), SLC_OK);
    ck_assert_uint_eq(plen, 3);
    ck_assert_uint_eq(dlen, 0);
}
END_TEST

START_TEST(test_ok_build)
{
    uint8_t  out[32];
    size_t   n;

    n = slc_mysql_ok_build(out, sizeof(out), 0, 0,
                           SLC_SERVER_STATUS_AUTOCOMMIT, 0);
    ck_assert_uint_eq(n, sizeof(slc_test_ok));
    ck_assert_mem_eq(out, slc_test_ok, n);

    n = slc_mysql_ok_build(out, sizeof(out), 251, UINT64_MAX, 0x4003, 7);
    ck_assert_uint_eq(n, 1 + 3 + 9 + 2 + 2);
    ck_assert_mem_eq(out, "\x00\xfc\xfb\x00\xfe\xff\xff\xff\xff\xff\xff\xff"
                          "\xff\x03\x40\x07\x00", n);
    ck_assert_uint_eq(slc_mysql_ok_build(out, n - 1, 251, UINT64_MAX,
                                         0x4003, 7), 0);
}
END_TEST

/* One decoder for an OK's status flags: whole packets and the tracker's
   head of one, which may stop before the flags (-1). */
START_TEST(test_ok_status)
{
    uint8_t  out[32];
    size_t   n, i;

    n = slc_mysql_ok_build(out, sizeof(out), 251, UINT64_MAX, 0x4003, 7);
    ck_assert_int_eq(slc_mysql_ok_status(out, n), 0x4003);
    /* cut anywhere before the end of the flags: -1 */
    for (i = 0; i < 1 + 3 + 9 + 2; i++) {
        ck_assert_int_eq(slc_mysql_ok_status(out, i), -1);
    }
    ck_assert_int_eq(slc_mysql_ok_status(out, 1 + 3 + 9 + 2), 0x4003);
    slc_mysql_ok_set_status(out, n, 0x0002);
    ck_assert_int_eq(slc_mysql_ok_status(out, n), 0x0002);
    /* too short to hold them: left alone */
    slc_mysql_ok_set_status(out, 5, 0xffff);
    ck_assert_int_eq(slc_mysql_ok_status(out, n), 0x0002);
    /* 0xfb (NULL) is no integer */
    ck_assert_int_eq(slc_mysql_ok_status((const uint8_t *) "\x00\xfb\x00"
                                         "\x02\x00", 5), -1);
}
END_TEST

START_TEST(test_err_real)
{
    static const char  msg[] =
        "Access denied for user 'sluice'@'localhost' (using password: YES)";
    uint16_t           code;
    char               state[6];
    const char        *m, *err = NULL;
    size_t             mlen, n;
    uint8_t            out[128];

    ck_assert_int_eq(slc_mysql_err_parse(slc_test_err, sizeof(slc_test_err),
                         &code, state, &m, &mlen, &err), SLC_OK);
    ck_assert_uint_eq(code, SLC_ER_ACCESS_DENIED_ERROR);
    ck_assert_str_eq(state, "28000");
    ck_assert_uint_eq(mlen, strlen(msg));
    ck_assert_mem_eq(m, msg, mlen);

    n = slc_mysql_err_build(out, sizeof(out), SLC_ER_ACCESS_DENIED_ERROR,
                            "28000", msg);
    ck_assert_uint_eq(n, sizeof(slc_test_err));
    ck_assert_mem_eq(out, slc_test_err, n);
    ck_assert_uint_eq(slc_mysql_err_build(out, n - 1, 1045, "28000", msg), 0);
}
END_TEST

START_TEST(test_err_variants)
{
    /* "Too many connections" as sent before the handshake: no SQLSTATE */
    static const uint8_t  bare[] = { 0xff, 0x10, 0x04, 'T', 'o', 'o' };
    static const uint8_t  empty[] = { 0xff, 0x10, 0x04 };
    static const uint8_t  cut[] = { 0xff, 0x10, 0x04, '#', '0', '8' };
    static const uint8_t  odd[] = { 0xff, 0x10, 0x04, '#', '0', '8', 0,
                                    '0', '4', 'x' };
    static const uint8_t  progress[] = { 0xff, 0xff, 0xff, 0x01, 0x02 };
    uint16_t              code;
    char                  state[6];
    const char           *m, *err = NULL;
    size_t                mlen, n;
    uint8_t               out[64];

    ck_assert_int_eq(slc_mysql_err_parse(bare, sizeof(bare), &code, state,
                                         &m, &mlen, &err), SLC_OK);
    ck_assert_uint_eq(code, SLC_ER_CON_COUNT_ERROR);
    ck_assert_str_eq(state, "HY000");
    ck_assert_uint_eq(mlen, 3);
    ck_assert_int_eq(slc_mysql_err_parse(empty, sizeof(empty), &code, state,
                                         &m, &mlen, &err), SLC_OK);
    ck_assert_uint_eq(mlen, 0);

    ck_assert_int_eq(slc_mysql_err_parse(cut, sizeof(cut), &code, state,
                                         &m, &mlen, &err), SLC_ERROR);
    ck_assert_int_eq(slc_mysql_err_parse(odd, sizeof(odd), &code, state,
                                         &m, &mlen, &err), SLC_ERROR);
    ck_assert_int_eq(slc_mysql_err_parse(progress, sizeof(progress), &code,
                                         state, &m, &mlen, &err), SLC_ERROR);
    ck_assert_int_eq(slc_mysql_err_parse(bare, 2, &code, state, &m, &mlen,
                                         &err), SLC_ERROR);
    ck_assert_int_eq(slc_mysql_err_parse(slc_test_ok, sizeof(slc_test_ok),
                         &code, state, &m, &mlen, &err), SLC_ERROR);

    /* a bad SQLSTATE becomes HY000 */
    n = slc_mysql_err_build(out, sizeof(out), 2013, "HY0",
                            "gone");
    ck_assert_int_eq(slc_mysql_err_parse(out, n, &code, state, &m, &mlen,
                                         &err), SLC_OK);
    ck_assert_uint_eq(code, 2013);
    ck_assert_str_eq(state, "HY000");
    ck_assert_mem_eq(m, "gone", 4);
    n = slc_mysql_err_build(out, sizeof(out), 1, NULL, "");
    ck_assert_uint_eq(n, 9);
}
END_TEST


/* --- hostile input ---------------------------------------------------- */

START_TEST(test_fuzz_random)
{
    uint32_t  seed = 0x2545f491u + (uint32_t) _i;
    uint8_t   buf[300];
    size_t    len, i;
    int       round;

    for (round = 0; round < 2000; round++) {
        len = slc_test_rand(&seed) % sizeof(buf);
        for (i = 0; i < len; i++) {
            buf[i] = (uint8_t) slc_test_rand(&seed);
        }
        /* sometimes start like the real thing, to get past the first check */
        if (len > 0 && (round & 3) == 0) {
            buf[0] = (round & 4) ? 10 : 0xfe;
        }
        slc_test_parse_all(buf, len);
    }
}
END_TEST

/* Flip a few bytes of each capture and cut it somewhere. */
START_TEST(test_fuzz_mutate)
{
    static const struct {
        const uint8_t  *p;
        size_t          len;
    } caps[] = {
        { slc_test_greeting, sizeof(slc_test_greeting) },
        { slc_test_resp_native, sizeof(slc_test_resp_native) },
        { slc_test_resp_sha2, sizeof(slc_test_resp_sha2) },
        { slc_test_authswitch, sizeof(slc_test_authswitch) },
        { slc_test_err, sizeof(slc_test_err) },
        { slc_test_chuser, sizeof(slc_test_chuser) },
    };
    uint32_t  seed = 0x9e3779b9u + (uint32_t) _i;
    uint8_t   buf[256];
    size_t    c, len, k, flips;
    int       round;

    for (round = 0; round < 3000; round++) {
        c = slc_test_rand(&seed) % slc_nelems(caps);
        memcpy(buf, caps[c].p, caps[c].len);
        flips = 1 + slc_test_rand(&seed) % 4;
        for (k = 0; k < flips; k++) {
            buf[slc_test_rand(&seed) % caps[c].len] =
                (uint8_t) slc_test_rand(&seed);
        }
        len = caps[c].len - slc_test_rand(&seed) % 8 * (round & 1);
        slc_test_parse_all(buf, len);
    }
}
END_TEST


static Suite *
slc_handshake_suite(void)
{
    Suite  *s = suite_create("mysql_handshake");
    TCase  *tg = tcase_create("greeting");
    TCase  *tr = tcase_create("hsresp");
    TCase  *tc = tcase_create("change_user");
    TCase  *tx = tcase_create("generic");
    TCase  *tf = tcase_create("hostile");

    tcase_add_test(tg, test_greeting_parse_real);
    tcase_add_test(tg, test_greeting_build_real);
    tcase_add_test(tg, test_greeting_round_trip_mysql);
    tcase_add_test(tg, test_greeting_no_plugin_auth);
    tcase_add_test(tg, test_greeting_truncated);
    tcase_add_test(tg, test_greeting_bad);
    tcase_add_test(tg, test_greeting_long_names);
    suite_add_tcase(s, tg);

    tcase_add_test(tr, test_hsresp_parse_real_native);
    tcase_add_test(tr, test_hsresp_parse_real_sha2);
    tcase_add_test(tr, test_hsresp_build_real);
    tcase_add_loop_test(tr, test_hsresp_round_trip, 0,
                        1 << slc_nelems(slc_test_layout_caps));
    tcase_add_test(tr, test_hsresp_truncated);
    tcase_add_test(tr, test_hsresp_refused);
    tcase_add_test(tr, test_hsresp_plugin_absent);
    tcase_add_test(tr, test_hsresp_build_limits);
    tcase_add_test(tr, test_hsresp_collation);
    suite_add_tcase(s, tr);

    tcase_add_test(tc, test_chuser_parse_real);
    tcase_add_test(tc, test_chuser_parse_old);
    tcase_add_test(tc, test_chuser_truncated);
    tcase_add_test(tc, test_chuser_bad);
    tcase_add_test(tc, test_chuser_build_real);
    tcase_add_loop_test(tc, test_chuser_round_trip, 0,
                        1 << slc_nelems(slc_test_layout_caps));
    suite_add_tcase(s, tc);

    tcase_add_test(tx, test_authswitch_real);
    tcase_add_test(tx, test_authswitch_bad);
    tcase_add_test(tx, test_ok_build);
    tcase_add_test(tx, test_ok_status);
    tcase_add_test(tx, test_err_real);
    tcase_add_test(tx, test_err_variants);
    suite_add_tcase(s, tx);

    tcase_set_timeout(tf, 120);
    tcase_add_loop_test(tf, test_fuzz_random, 0, 4);
    tcase_add_loop_test(tf, test_fuzz_mutate, 0, 4);
    suite_add_tcase(s, tf);
    return s;
}

int
main(void)
{

    return slc_check_run(slc_handshake_suite());
}
