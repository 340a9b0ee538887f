/*
 * Result sets the proxy answers itself (slc_mysql_reply.c), in each form
 * a client may have negotiated: with and without CLIENT_DEPRECATE_EOF,
 * MariaDB's CACHE_METADATA (a byte after the column count) and
 * EXTENDED_TYPE_INFO (an empty string in each column definition); the
 * status an answer carries keeps the session's flags only; sequence ids
 * follow each other; a row of NULL and of a long value.
 */

#include "slc_test.h"
#include "slc_test_modules.h"

#include "slc_core.h"
#include "slc_buf.h"
#include "slc_cycle.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_session.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_filter.h"

SLC_TEST_MODULES("core mysql", &slc_core_module, &slc_mysql_module);

static slc_backend_t  slc_test_b;
static slc_session_t  slc_test_s;

static slc_session_t *
slc_test_session(uint32_t caps, uint32_t mariadb_caps, uint16_t status)
{
    slc_session_t *s = &slc_test_s;

    slc_buf_setup(16384, 4);
    memset(&slc_test_b, 0, sizeof(slc_test_b));
    memset(s, 0, sizeof(*s));
    slc_test_b.track.mariadb_caps = mariadb_caps;
    slc_test_b.track.status = status;
    s->backend = &slc_test_b;
    s->caps = caps;
    s->seq = 1;
    return s;
}

/* The next packet queued for the client: its payload, length, seq. */
static const uint8_t *
slc_test_next(slc_session_t *s, uint32_t *len, uint8_t *seq)
{
    const uint8_t *p;

    ck_assert_ptr_nonnull(s->out);
    ck_assert_uint_ge(slc_buf_len(s->out), 4);
    p = s->out->pos;
    *len = (uint32_t) slc_mysql_le_get(p, 3);
    *seq = p[3];
    ck_assert_uint_ge(slc_buf_len(s->out), 4 + *len);
    s->out->pos += 4 + *len;
    return p + 4;
}

static void
slc_test_done(slc_session_t *s)
{
    ck_assert_uint_eq(slc_buf_len(s->out), 0);
    slc_buf_put(s->out);
    s->out = NULL;
}

/* Column count, then one definition named "ab"; returns the seq next. */
static uint8_t
slc_test_columns(slc_session_t *s, int metadata_byte, int ext, int eof)
{
    static const char *const names[] = { "ab" };
    const uint8_t *p;
    uint32_t       len;
    uint8_t        seq;

    ck_assert_int_eq(slc_reply_columns(s, names, 1), SLC_OK);
    p = slc_test_next(s, &len, &seq);
    ck_assert_uint_eq(seq, 1);
    ck_assert_uint_eq(len, metadata_byte ? 2 : 1);
    ck_assert_uint_eq(p[0], 1);
    if (metadata_byte) {
        ck_assert_uint_eq(p[1], 1);     /* the metadata follows */
    }
    p = slc_test_next(s, &len, &seq);
    ck_assert_uint_eq(seq, 2);
    /* def, 3 empty, "ab", empty, [ext], 0x0c + 12 */
    ck_assert_uint_eq(len, 4 + 3 + 3 + 1 + (ext ? 1 : 0) + 13);
    ck_assert_mem_eq(p, "\x03" "def\0\0\0\x02" "ab\0", 11);
    if (ext) {
        ck_assert_uint_eq(p[11], 0);    /* no extended type information */
    }
    ck_assert_uint_eq(p[11 + (ext ? 1 : 0)], 0x0c);
    ck_assert_uint_eq(p[11 + (ext ? 1 : 0) + 7], SLC_MYSQL_TYPE_VAR_STRING);
    if (!eof) {
        return 3;
    }
    p = slc_test_next(s, &len, &seq);
    ck_assert_uint_eq(seq, 3);
    ck_assert_uint_eq(len, 5);
    ck_assert_uint_eq(p[0], 0xfe);
    return 4;
}

START_TEST(test_classic)
{
    slc_session_t *s = slc_test_session(0, 0, 0x4003);  /* + STATE_CHANGED */
    const uint8_t *p;
    uint32_t       len;
    uint8_t        seq, next;

    next = slc_test_columns(s, 0, 0, 1);
    ck_assert_int_eq(slc_reply_end(s), SLC_OK);
    p = slc_test_next(s, &len, &seq);
    ck_assert_uint_eq(seq, next);
    ck_assert_uint_eq(len, 5);
    ck_assert_uint_eq(p[0], 0xfe);
    /* only the session's flags: in transaction, autocommit */
    ck_assert_uint_eq(slc_mysql_le_get(p + 3, 2), 0x0003);
    slc_test_done(s);
}
END_TEST

START_TEST(test_deprecate_eof_mariadb)
{
    slc_session_t *s = slc_test_session(SLC_CLIENT_DEPRECATE_EOF,
        SLC_MARIADB_CLIENT_CACHE_METADATA
        | SLC_MARIADB_CLIENT_EXTENDED_TYPE_INFO, 0x0002);
    const uint8_t *p;
    uint32_t       len;
    uint8_t        seq, next;

    next = slc_test_columns(s, 1, 1, 0);
    ck_assert_int_eq(slc_reply_end(s), SLC_OK);
    p = slc_test_next(s, &len, &seq);
    ck_assert_uint_eq(seq, next);
    ck_assert_uint_eq(p[0], 0xfe);      /* an OK with an EOF header */
    ck_assert_uint_ge(len, 7);
    ck_assert_int_eq(slc_mysql_ok_status(p, len), 0x0002);
    slc_test_done(s);
}
END_TEST

START_TEST(test_rows)
{
    slc_session_t *s = slc_test_session(SLC_CLIENT_DEPRECATE_EOF, 0, 2);
    char           big[300];
    const char    *v[3] = { "x", NULL, big };
    size_t         l[3] = { 1, 0, sizeof(big) };
    const uint8_t *p;
    uint32_t       len;
    uint8_t        seq;

    memset(big, 'y', sizeof(big));
    ck_assert_int_eq(slc_reply_row(s, v, l, 3), SLC_OK);
    p = slc_test_next(s, &len, &seq);
    ck_assert_uint_eq(len, 2 + 1 + 3 + sizeof(big));
    ck_assert_mem_eq(p, "\x01x\xfb\xfc\x2c\x01", 6);  /* 300: 0xfc 2 bytes */
    slc_test_done(s);
    /* the output buffer full: AGAIN, nothing queued */
    ck_assert_int_eq(slc_buf_reserve(&s->out, slc_buf_size() - 8), SLC_OK);
    s->out->last = s->out->end - 8;
    ck_assert_int_eq(slc_reply_row(s, v, l, 3), SLC_AGAIN);
    ck_assert_uint_eq(slc_buf_len(s->out), slc_buf_size() - 8);
    slc_buf_put(s->out);
    s->out = NULL;
}
END_TEST

START_TEST(test_err_ok)
{
    slc_session_t *s = slc_test_session(0, 0, 0x0001);
    const uint8_t *p;
    uint32_t       len;
    uint8_t        seq;

    ck_assert_int_eq(slc_reply_err(s, 1105, "HY000", "no"), SLC_OK);
    p = slc_test_next(s, &len, &seq);
    ck_assert_uint_eq(p[0], 0xff);
    ck_assert_uint_eq(slc_mysql_le_get(p + 1, 2), 1105);
    ck_assert_int_eq(slc_reply_ok(s, 3), SLC_OK);
    p = slc_test_next(s, &len, &seq);
    ck_assert_uint_eq(seq, 2);
    ck_assert_uint_eq(p[0], 0);
    ck_assert_uint_eq(p[1], 3);         /* affected rows */
    slc_test_done(s);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("mysql_reply");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_classic);
    tcase_add_test(tc, test_deprecate_eof_mariadb);
    tcase_add_test(tc, test_rows);
    tcase_add_test(tc, test_err_ok);
    suite_add_tcase(s, tc);
    return slc_check_run(s);
}
