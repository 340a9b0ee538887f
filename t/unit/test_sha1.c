/*
 * SHA-1 (slc_sha1, a thin layer over libmd) against the FIPS 180 examples
 * and against python3 hashlib for lengths around the padding boundaries
 * (55, 56, 64 ... bytes), fed whole and in every chunk size, and with empty
 * updates in between.
 */

#include "slc_test.h"

#include "slc_core.h"
#include "slc_sha1.h"

static void
slc_test_hex(const uint8_t *d, size_t n, char *out)
{
    static const char  hex[] = "0123456789abcdef";
    size_t             i;

    for (i = 0; i < n; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 0xf];
    }
    out[2 * n] = '\0';
}

static void
slc_test_check_digest(const uint8_t md[SLC_SHA1_LEN], const char *want)
{
    char  got[2 * SLC_SHA1_LEN + 1];

    slc_test_hex(md, SLC_SHA1_LEN, got);
    ck_assert_str_eq(got, want);
}

static const struct {
    const char  *msg;
    const char  *md;
} slc_test_fips[] = {
    { "", "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
    { "abc", "a9993e364706816aba3e25717850c26c9cd0d89d" },
    { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
    { "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
      "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
      "a49b2446a02c645bf419f995b67091253a04a259" },
};

/* Bytes (i * 7 + 3) & 0xff, digests from python3 hashlib. */
static const struct {
    size_t       len;
    const char  *md;
} slc_test_pattern[] = {
    { 55, "ddf57317ef34bfee3b6df83d359098930eb278bc" },
    { 56, "a0d492bb0fc889d0eca3bc137066ab6f4f74f369" },
    { 57, "11a02dcf95859677a62e75024067c22b165d890f" },
    { 63, "c55856749bef509bdfe6bfebfc7bf4e793e82132" },
    { 64, "bede92be29c3874e1b54ddc77988d606fc857a8e" },
    { 65, "b05a80522b053d6dc7e0a517d0e70212c7dad11f" },
    { 119, "504e27376a6e0f0dba8295b85cb25dc4dfa17d23" },
    { 120, "82134b02fb3f702491be9bed581eeab59334acb2" },
    { 127, "34d5e582029e9b9b85b2febe31da3db7cdabaaea" },
    { 128, "a09133e6730ffe899efb70204cb5646cd5dc24ee" },
    { 129, "808aea332ce367541d37adae7f94e59c5c1a934e" },
    { 1000, "4231a8a50a10fa9758db8ec71fdef855b751048a" },
};

START_TEST(test_sha1_fips_examples)
{
    uint8_t  md[SLC_SHA1_LEN];

    slc_sha1(slc_test_fips[_i].msg, strlen(slc_test_fips[_i].msg), md);
    slc_test_check_digest(md, slc_test_fips[_i].md);
}
END_TEST

START_TEST(test_sha1_million_a)
{
    slc_sha1_ctx_t  c;
    uint8_t         md[SLC_SHA1_LEN], chunk[1000];
    int             i;

    memset(chunk, 'a', sizeof(chunk));
    slc_sha1_init(&c);
    for (i = 0; i < 1000; i++) {
        slc_sha1_update(&c, chunk, sizeof(chunk));
    }
    slc_sha1_final(&c, md);
    slc_test_check_digest(md, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}
END_TEST

/* Every length, fed in every chunk size from 1 to len. */
START_TEST(test_sha1_pattern_chunked)
{
    uint8_t         msg[1000] = { 0 }, md[SLC_SHA1_LEN];
    size_t          len = slc_test_pattern[_i].len, i, step, off;
    slc_sha1_ctx_t  c;

    for (i = 0; i < len; i++) {
        msg[i] = (uint8_t) ((i * 7 + 3) & 0xff);
    }
    slc_sha1(msg, len, md);
    slc_test_check_digest(md, slc_test_pattern[_i].md);

    for (step = 1; step <= len; step++) {
        slc_sha1_init(&c);
        for (off = 0; off < len; off += step) {
            slc_sha1_update(&c, msg + off, slc_min(step, len - off));
        }
        slc_sha1_final(&c, md);
        slc_test_check_digest(md, slc_test_pattern[_i].md);
    }
}
END_TEST

START_TEST(test_sha1_empty_updates)
{
    slc_sha1_ctx_t  c;
    uint8_t         md[SLC_SHA1_LEN];

    slc_sha1_init(&c);
    slc_sha1_update(&c, NULL, 0);
    slc_sha1_update(&c, "ab", 2);
    slc_sha1_update(&c, NULL, 0);
    slc_sha1_update(&c, "c", 1);
    slc_sha1_final(&c, md);
    slc_test_check_digest(md, "a9993e364706816aba3e25717850c26c9cd0d89d");
}
END_TEST

static Suite *
slc_sha1_suite(void)
{
    Suite  *s = suite_create("sha1");
    TCase  *tc = tcase_create("core");

    tcase_add_loop_test(tc, test_sha1_fips_examples, 0,
                        (int) slc_nelems(slc_test_fips));
    tcase_add_test(tc, test_sha1_million_a);
    tcase_add_loop_test(tc, test_sha1_pattern_chunked, 0,
                        (int) slc_nelems(slc_test_pattern));
    tcase_add_test(tc, test_sha1_empty_updates);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{

    return slc_check_run(slc_sha1_suite());
}
