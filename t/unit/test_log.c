/*
 * slc_log_escape: what a peer sent, made safe to log.  Every byte value in
 * both modes, then every output size for inputs of escapes, plain bytes
 * and a mix: the result is always the longest prefix of the whole escaped
 * text that fits and ends between two escapes, NUL-terminated.
 */

#include "slc_test.h"

#include "slc_core.h"
#include "slc_log.h"

#define SLC_TEST_GUARD  0x5a

/* The escape of one byte, written by hand. */
static size_t
slc_test_expect(uint8_t c, int quoted, char *out)
{
    if (c >= 0x20 && c < 0x7f && !(quoted && (c == '"' || c == '\\'))) {
        out[0] = (char) c;
        out[1] = '\0';
        return 1;
    }
    snprintf(out, 5, "\\x%02x", c);
    return 4;
}

START_TEST(test_every_byte)
{
    int      quoted = _i;
    char     dst[8], want[5];
    uint8_t  c;
    size_t   n, wn;

    for (unsigned v = 0; v < 256; v++) {
        c = (uint8_t) v;
        wn = slc_test_expect(c, quoted, want);
        memset(dst, SLC_TEST_GUARD, sizeof(dst));
        n = slc_log_escape(dst, sizeof(dst), &c, 1, quoted);
        ck_assert_msg(n == wn, "0x%02x: %zu bytes", v, n);
        ck_assert_str_eq(dst, want);
        ck_assert_uint_eq((uint8_t) dst[n + 1], SLC_TEST_GUARD);
    }
}
END_TEST

START_TEST(test_examples)
{
    char    dst[128];
    size_t  n;

    n = slc_log_escape(dst, sizeof(dst), "bob", 3, 1);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(dst, "bob");

    n = slc_log_escape(dst, sizeof(dst), "a\nb", 3, 0);
    ck_assert_str_eq(dst, "a\\x0ab");
    ck_assert_uint_eq(n, 6);

    n = slc_log_escape(dst, sizeof(dst), "\x1b[31m\x7f\x80\xff", 8, 0);
    ck_assert_str_eq(dst, "\\x1b[31m\\x7f\\x80\\xff");
    ck_assert_uint_eq(n, strlen(dst));

    n = slc_log_escape(dst, sizeof(dst), "say \"hi\" \\o/", 12, 1);
    ck_assert_str_eq(dst, "say \\x22hi\\x22 \\x5co/");
    ck_assert_uint_eq(n, strlen(dst));
    n = slc_log_escape(dst, sizeof(dst), "say \"hi\" \\o/", 12, 0);
    ck_assert_str_eq(dst, "say \"hi\" \\o/");
    ck_assert_uint_eq(n, 12);

    /* a NUL byte in the input is escaped, not an end */
    n = slc_log_escape(dst, sizeof(dst), "a\0b", 3, 0);
    ck_assert_str_eq(dst, "a\\x00b");
    ck_assert_uint_eq(n, 6);

    n = slc_log_escape(dst, sizeof(dst), "", 0, 1);
    ck_assert_uint_eq(n, 0);
    ck_assert_str_eq(dst, "");

    /* no room at all: nothing written, not even the NUL */
    dst[0] = SLC_TEST_GUARD;
    ck_assert_uint_eq(slc_log_escape(dst, 0, "abc", 3, 0), 0);
    ck_assert_uint_eq((uint8_t) dst[0], SLC_TEST_GUARD);
}
END_TEST

static const struct {
    const char  *in;
    size_t       len;
} slc_test_inputs[] = {
    { "\n\n\n", 3 },
    { "\x1b\x7f\x80\xff", 4 },
    { "abcdefghij", 10 },
    { "a\nb\"c\\d\xff", 8 },
    { "\"\\\"", 3 },
};

/* Every cap from 1 to past the whole: a prefix that never cuts an escape. */
START_TEST(test_truncation)
{
    const char  *in = slc_test_inputs[_i].in;
    size_t       len = slc_test_inputs[_i].len, cap, n, full, edge;
    char         whole[64], dst[64], one[5];
    size_t       ends[32], nends = 0;
    int          quoted;

    for (quoted = 0; quoted <= 1; quoted++) {
        /* the whole escape and where each byte's escape ends */
        full = 0;
        nends = 0;
        ends[nends++] = 0;
        for (size_t i = 0; i < len; i++) {
            full += slc_test_expect((uint8_t) in[i], quoted, one);
            ends[nends++] = full;
        }
        ck_assert_uint_eq(slc_log_escape(whole, sizeof(whole), in, len,
                                         quoted), full);

        for (cap = 1; cap <= full + 2; cap++) {
            memset(dst, SLC_TEST_GUARD, sizeof(dst));
            n = slc_log_escape(dst, cap, in, len, quoted);
            /* the longest edge that leaves room for the NUL */
            edge = 0;
            for (size_t k = 0; k < nends && ends[k] < cap; k++) {
                edge = ends[k];
            }
            ck_assert_msg(n == edge, "cap %zu: %zu, want %zu", cap, n, edge);
            ck_assert_uint_lt(n, cap);
            ck_assert_uint_eq(dst[n], '\0');
            ck_assert_uint_eq(strlen(dst), n);
            ck_assert(memcmp(dst, whole, n) == 0);
            if (cap < sizeof(dst)) {
                ck_assert_uint_eq((uint8_t) dst[cap], SLC_TEST_GUARD);
            }
        }
    }
}
END_TEST


static Suite *
slc_log_suite(void)
{
    Suite  *s = suite_create("log");
    TCase  *tc = tcase_create("escape");

    tcase_add_loop_test(tc, test_every_byte, 0, 2);
    tcase_add_test(tc, test_examples);
    tcase_add_loop_test(tc, test_truncation, 0,
                        (int) slc_nelems(slc_test_inputs));
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{

    return slc_check_run(slc_log_suite());
}
