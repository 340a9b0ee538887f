/*
 * Length-encoded integers and strings at every size-class boundary, the two
 * first bytes that are not integers (0xfb, 0xff), and truncation.
 */

#include "slc_test.h"

#include "slc_core.h"
#include "slc_mysql_codec.h"

/* Each value with its exact wire form. */
static const struct {
    uint64_t  v;
    size_t    len;
    uint8_t   wire[9];
} slc_test_ints[] = {
    { 0, 1, { 0x00 } },
    { 1, 1, { 0x01 } },
    { 250, 1, { 0xfa } },
    { 251, 3, { 0xfc, 0xfb, 0x00 } },
    { 252, 3, { 0xfc, 0xfc, 0x00 } },
    { 255, 3, { 0xfc, 0xff, 0x00 } },
    { 256, 3, { 0xfc, 0x00, 0x01 } },
    { 65535, 3, { 0xfc, 0xff, 0xff } },
    { 65536, 4, { 0xfd, 0x00, 0x00, 0x01 } },
    { 16777215, 4, { 0xfd, 0xff, 0xff, 0xff } },
    { 16777216, 9, { 0xfe, 0x00, 0x00, 0x00, 0x01, 0, 0, 0, 0 } },
    { 0x0102030405060708ull, 9,
      { 0xfe, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01 } },
    { UINT64_MAX, 9,
      { 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } },
};

START_TEST(test_int_put_get)
{
    uint8_t   buf[16], *end;
    uint64_t  v = 0;
    size_t    len = slc_test_ints[_i].len;

    ck_assert_uint_eq(slc_mysql_lenenc_int_size(slc_test_ints[_i].v), len);

    memset(buf, 0xaa, sizeof(buf));
    end = slc_mysql_lenenc_int_put(buf, slc_test_ints[_i].v);
    ck_assert_uint_eq((size_t) (end - buf), len);
    ck_assert_mem_eq(buf, slc_test_ints[_i].wire, len);
    ck_assert_uint_eq(buf[len], 0xaa);              /* nothing past the end */

    ck_assert_uint_eq(slc_mysql_lenenc_int_get(buf, len, &v), len);
    ck_assert_uint_eq(v, slc_test_ints[_i].v);
    /* trailing bytes are not consumed */
    ck_assert_uint_eq(slc_mysql_lenenc_int_get(buf, sizeof(buf), &v), len);
    ck_assert_uint_eq(v, slc_test_ints[_i].v);
}
END_TEST

START_TEST(test_int_truncated)
{
    const uint8_t  *wire = slc_test_ints[_i].wire;
    uint64_t        v = 42;
    size_t          n;

    for (n = 0; n < slc_test_ints[_i].len; n++) {
        ck_assert_uint_eq(slc_mysql_lenenc_int_get(wire, n, &v), 0);
    }
    ck_assert_uint_eq(v, 42);
}
END_TEST

START_TEST(test_int_not_integers)
{
    static const uint8_t  null[] = { 0xfb, 0, 0, 0, 0, 0, 0, 0, 0 };
    static const uint8_t  err[] = { 0xff, 0, 0, 0, 0, 0, 0, 0, 0 };
    uint64_t              v = 42;

    ck_assert_uint_eq(slc_mysql_lenenc_int_get(null, sizeof(null), &v), 0);
    ck_assert_uint_eq(slc_mysql_lenenc_int_get(err, sizeof(err), &v), 0);
    ck_assert_uint_eq(slc_mysql_lenenc_int_get(null, 1, &v), 0);
    ck_assert_uint_eq(slc_mysql_lenenc_int_get(err, 1, &v), 0);
    ck_assert_uint_eq(v, 42);
}
END_TEST

/* The server accepts a longer form than needed; so do we. */
START_TEST(test_int_non_minimal)
{
    static const uint8_t  w3[] = { 0xfc, 0x05, 0x00 };
    static const uint8_t  w9[] = { 0xfe, 0x07, 0, 0, 0, 0, 0, 0, 0 };
    uint64_t              v;

    ck_assert_uint_eq(slc_mysql_lenenc_int_get(w3, sizeof(w3), &v), 3);
    ck_assert_uint_eq(v, 5);
    ck_assert_uint_eq(slc_mysql_lenenc_int_get(w9, sizeof(w9), &v), 9);
    ck_assert_uint_eq(v, 7);
}
END_TEST

/* String lengths on each boundary (the last two are 16 MiB). */
static const size_t  slc_test_str_lens[] = {
    0, 1, 250, 251, 65535, 65536, 70000, 16777215, 16777216
};

/* Strings whose length sits on each boundary, written and read back. */
START_TEST(test_str_boundaries)
{
    size_t          slen = slc_test_str_lens[_i], hl, n;
    uint8_t        *src, *buf, *end;
    const uint8_t  *s;
    uint64_t        got;

    src = malloc(slen + 1);
    buf = malloc(slen + 16);
    ck_assert_ptr_nonnull(src);
    ck_assert_ptr_nonnull(buf);
    for (n = 0; n < slen; n++) {
        src[n] = (uint8_t) (n * 13);
    }
    hl = slc_mysql_lenenc_int_size(slen);

    end = slc_mysql_lenenc_int_put(buf, slen);
    memcpy(end, src, slen);
    end += slen;
    ck_assert_uint_eq((size_t) (end - buf), hl + slen);
    ck_assert_uint_eq(slc_mysql_lenenc_str_get(buf, hl + slen, &s, &got),
                      hl + slen);
    ck_assert_uint_eq(got, slen);
    ck_assert_ptr_eq(s, buf + hl);
    ck_assert(slen == 0 || memcmp(s, src, slen) == 0);

    /* one byte short of the string, and short inside the length */
    if (slen > 0) {
        ck_assert_uint_eq(slc_mysql_lenenc_str_get(buf, hl + slen - 1, &s,
                                                   &got), 0);
    }
    ck_assert_uint_eq(slc_mysql_lenenc_str_get(buf, hl - 1, &s, &got), 0);
    free(src);
    free(buf);
}
END_TEST

START_TEST(test_str_bad)
{
    /* a NULL column, an ERR byte, and lengths far past the buffer */
    static const uint8_t  null[] = { 0xfb, 'x' };
    static const uint8_t  ff[] = { 0xff, 'x' };
    static const uint8_t  huge[] = { 0xfe, 0xff, 0xff, 0xff, 0xff,
                                     0xff, 0xff, 0xff, 0xff, 'x' };
    static const uint8_t  big[] = { 0xfe, 0x00, 0x00, 0x00, 0x00,
                                    0x00, 0x00, 0x00, 0x80, 'x' };
    static const uint8_t  two[] = { 0x02, 'x' };
    const uint8_t        *s = NULL;
    uint64_t              n = 42;

    ck_assert_uint_eq(slc_mysql_lenenc_str_get(null, sizeof(null), &s, &n),
                      0);
    ck_assert_uint_eq(slc_mysql_lenenc_str_get(ff, sizeof(ff), &s, &n), 0);
    ck_assert_uint_eq(slc_mysql_lenenc_str_get(huge, sizeof(huge), &s, &n),
                      0);
    ck_assert_uint_eq(slc_mysql_lenenc_str_get(big, sizeof(big), &s, &n), 0);
    ck_assert_uint_eq(slc_mysql_lenenc_str_get(two, sizeof(two), &s, &n), 0);
    ck_assert_uint_eq(slc_mysql_lenenc_str_get(two, 0, &s, &n), 0);
    ck_assert_ptr_null(s);
    ck_assert_uint_eq(n, 42);
}
END_TEST

static Suite *
slc_lenenc_suite(void)
{
    Suite  *s = suite_create("mysql_lenenc");
    TCase  *tc = tcase_create("lenenc");
    int     nints = (int) slc_nelems(slc_test_ints);

    tcase_add_loop_test(tc, test_int_put_get, 0, nints);
    tcase_add_loop_test(tc, test_int_truncated, 0, nints);
    tcase_add_test(tc, test_int_not_integers);
    tcase_add_test(tc, test_int_non_minimal);
    tcase_add_loop_test(tc, test_str_boundaries, 0,
                        (int) slc_nelems(slc_test_str_lens));
    tcase_add_test(tc, test_str_bad);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{

    return slc_check_run(slc_lenenc_suite());
}
