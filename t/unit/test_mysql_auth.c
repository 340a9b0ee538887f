/*
 * mysql_native_password.  The hashes are what MariaDB's PASSWORD() returns
 * (checked on a 10.11 server for 'secret') and the tokens were computed
 * independently with python3 hashlib:
 *   stage1 = sha1(pw); token = stage1 XOR sha1(scramble + sha1(stage1))
 */

#include <ctype.h>

#include "slc_test.h"

#include "slc_core.h"
#include "slc_sha1.h"
#include "slc_mysql_auth.h"

/*
 * A client's token from the plaintext password (the proxy never has it: it
 * keeps SHA1(SHA1(password)), and per session SHA1(password)).  An empty
 * password yields 20 zero bytes here, but what goes on the wire for it is
 * an empty auth response.
 */
static void
slc_test_token_pw(const uint8_t scramble[20], const char *password,
    size_t len, uint8_t token[SLC_SHA1_LEN])
{
    uint8_t  stage1[SLC_SHA1_LEN];

    if (len == 0) {
        memset(token, 0, SLC_SHA1_LEN);
        return;
    }
    slc_sha1(password, len, stage1);
    slc_mysql_native_token(scramble, stage1, token);
    explicit_bzero(stage1, sizeof(stage1));
}

/* Scramble bytes 0x21 .. 0x34: "!\"#$%&'()*+,-./01234". */
static const uint8_t  slc_test_scramble[20] = {
    0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a,
    0x2b, 0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x32, 0x33, 0x34,
};

static const struct {
    const char  *pw;
    const char  *hash;      /* PASSWORD(pw) */
    const char  *stage1;    /* sha1(pw), hex */
    const char  *token;     /* for slc_test_scramble, hex; NULL: not set */
} slc_test_vec[] = {
    { "secret", "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7",
      "e5e9fa1ba31ecd1ae84f75caaa474f3a663f05f4",
      "1f44f306295a10870fd7895d358cb5f975d7d47f" },
    { "password", "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19",
      "5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8",
      "97aaf5ec9857653fc9b04e85a388ca15b598c8a4" },
    { "p\xc3\xa4ssw\xc3\xb6rd", "*0225EC5004ABB0B8CB557541FE53DE1A5D8CC825",
      "f517ddf1d32a112ff1ad55c66d1b12cb38e7e8f7",
      "6704168642cf4532c962bd4f974022132ab86688" },
    { "a", "*667F407DE7C6AD07358FA38DAED7828A72014B4E",
      "86f7e437faa5a7fce15d1ddcb9eaeaea377667b8", NULL },
};

static void
slc_test_unhex(const char *hex, uint8_t *out, size_t n)
{
    unsigned  v;
    size_t    i;

    ck_assert_uint_eq(strlen(hex), 2 * n);
    for (i = 0; i < n; i++) {
        ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t) v;
    }
}

START_TEST(test_hash_vectors)
{
    slc_mysql_native_hash_t  h, p;
    const char              *pw = slc_test_vec[_i].pw;
    const char              *hash = slc_test_vec[_i].hash;

    slc_mysql_native_hash(pw, strlen(pw), &h);
    ck_assert_int_eq(h.is_empty, 0);
    ck_assert_int_eq(slc_mysql_native_hash_parse(hash, strlen(hash), &p),
                     SLC_OK);
    ck_assert_int_eq(p.is_empty, 0);
    ck_assert_mem_eq(h.stage2, p.stage2, SLC_SHA1_LEN);
}
END_TEST

START_TEST(test_hash_parse_lower_case)
{
    slc_mysql_native_hash_t  up, low;
    char                     buf[42];
    size_t                   i;

    strlcpy(buf, slc_test_vec[0].hash, sizeof(buf));
    ck_assert_int_eq(slc_mysql_native_hash_parse(buf, 41, &up), SLC_OK);
    for (i = 1; i < 41; i++) {
        buf[i] = (char) tolower((unsigned char) buf[i]);
    }
    ck_assert_int_eq(slc_mysql_native_hash_parse(buf, 41, &low), SLC_OK);
    ck_assert_mem_eq(up.stage2, low.stage2, SLC_SHA1_LEN);
}
END_TEST

START_TEST(test_hash_parse_bad)
{
    static const char *const  bad[] = {
        "*",
        "14E65567ABDB5135D0CFD9A70B3032C179A49EE7",      /* no star */
        "*14E65567ABDB5135D0CFD9A70B3032C179A49EE",      /* 39 digits */
        "*14E65567ABDB5135D0CFD9A70B3032C179A49EE77",    /* 41 digits */
        "*14E65567ABDB5135D0CFD9A70B3032C179A49EG7",     /* G */
        "*14E65567ABDB5135D0CFD9A70B3032C179A49E 7",     /* space */
        "#14E65567ABDB5135D0CFD9A70B3032C179A49EE7",     /* not '*' */
        "*-4E65567ABDB5135D0CFD9A70B3032C179A49EE7",
        "secret",
    };
    slc_mysql_native_hash_t   h;
    size_t                    i;

    for (i = 0; i < slc_nelems(bad); i++) {
        ck_assert_msg(slc_mysql_native_hash_parse(bad[i], strlen(bad[i]), &h)
                      == SLC_ERROR, "accepted \"%s\"", bad[i]);
    }
    /* a NUL inside the stated length */
    ck_assert_int_eq(slc_mysql_native_hash_parse(
        "*14E65567ABDB5135D0CFD9A70B3032C179A49E\0" "7", 41, &h), SLC_ERROR);
}
END_TEST

START_TEST(test_token_vectors)
{
    uint8_t      token[SLC_SHA1_LEN], want[SLC_SHA1_LEN];
    uint8_t      stage1[SLC_SHA1_LEN], t2[SLC_SHA1_LEN];
    const char  *pw = slc_test_vec[_i].pw;

    if (slc_test_vec[_i].token == NULL) {
        return;
    }
    slc_test_unhex(slc_test_vec[_i].token, want, SLC_SHA1_LEN);
    slc_test_token_pw(slc_test_scramble, pw, strlen(pw), token);
    ck_assert_mem_eq(token, want, SLC_SHA1_LEN);

    slc_test_unhex(slc_test_vec[_i].stage1, stage1, SLC_SHA1_LEN);
    slc_mysql_native_token(slc_test_scramble, stage1, t2);
    ck_assert_mem_eq(t2, want, SLC_SHA1_LEN);
}
END_TEST

/* Verify the right token, recover stage1, and reuse it for a new scramble. */
START_TEST(test_verify_accepts)
{
    slc_mysql_native_hash_t  h;
    uint8_t                  token[SLC_SHA1_LEN], stage1[SLC_SHA1_LEN];
    uint8_t                  want[SLC_SHA1_LEN], other[20], t1[20], t2[20];
    const char              *pw = slc_test_vec[_i].pw;

    ck_assert_int_eq(slc_mysql_native_hash_parse(slc_test_vec[_i].hash, 41,
                                                 &h), SLC_OK);
    slc_test_token_pw(slc_test_scramble, pw, strlen(pw), token);
    memset(stage1, 0xaa, sizeof(stage1));
    ck_assert_int_eq(slc_mysql_native_verify(slc_test_scramble, &h, token,
                                             sizeof(token), stage1), SLC_OK);
    slc_test_unhex(slc_test_vec[_i].stage1, want, SLC_SHA1_LEN);
    ck_assert_mem_eq(stage1, want, SLC_SHA1_LEN);

    /* what the proxy does next: answer a backend's scramble with stage1 */
    memcpy(other, "backend-scramble-20b", 20);
    slc_mysql_native_token(other, stage1, t1);
    slc_test_token_pw(other, pw, strlen(pw), t2);
    ck_assert_mem_eq(t1, t2, SLC_SHA1_LEN);
}
END_TEST

START_TEST(test_verify_rejects)
{
    slc_mysql_native_hash_t  h;
    uint8_t                  token[SLC_SHA1_LEN], bad[SLC_SHA1_LEN + 1];
    uint8_t                  stage1[SLC_SHA1_LEN], zero[SLC_SHA1_LEN] = { 0 };
    uint8_t                  scr2[20];
    size_t                   i;

    slc_mysql_native_hash("secret", 6, &h);
    slc_test_token_pw(slc_test_scramble, "secret", 6, token);

    /* each single-bit change of the token fails */
    for (i = 0; i < 8 * SLC_SHA1_LEN; i++) {
        memcpy(bad, token, SLC_SHA1_LEN);
        bad[i / 8] ^= (uint8_t) (1u << (i % 8));
        memset(stage1, 0xaa, sizeof(stage1));
        ck_assert_int_eq(slc_mysql_native_verify(slc_test_scramble, &h, bad,
                                                 SLC_SHA1_LEN, stage1),
                         SLC_ERROR);
        ck_assert_mem_eq(stage1, zero, SLC_SHA1_LEN);
    }

    /* wrong password, other scramble, wrong lengths */
    slc_test_token_pw(slc_test_scramble, "Secret", 6, bad);
    ck_assert_int_eq(slc_mysql_native_verify(slc_test_scramble, &h, bad,
                                             SLC_SHA1_LEN, stage1), SLC_ERROR);
    memcpy(scr2, slc_test_scramble, 20);
    scr2[19] ^= 1;
    ck_assert_int_eq(slc_mysql_native_verify(scr2, &h, token, SLC_SHA1_LEN,
                                             stage1), SLC_ERROR);
    memcpy(bad, token, SLC_SHA1_LEN);
    bad[SLC_SHA1_LEN] = 0;
    ck_assert_int_eq(slc_mysql_native_verify(slc_test_scramble, &h, bad,
                                             SLC_SHA1_LEN + 1, stage1),
                     SLC_ERROR);
    ck_assert_int_eq(slc_mysql_native_verify(slc_test_scramble, &h, token,
                                             SLC_SHA1_LEN - 1, stage1),
                     SLC_ERROR);
    ck_assert_int_eq(slc_mysql_native_verify(slc_test_scramble, &h, token, 0,
                                             stage1), SLC_ERROR);
}
END_TEST

/* An empty password: no stage2, only an empty token matches. */
START_TEST(test_empty_password)
{
    slc_mysql_native_hash_t  h, p;
    uint8_t                  token[SLC_SHA1_LEN], stage1[SLC_SHA1_LEN];
    uint8_t                  zero[SLC_SHA1_LEN] = { 0 };

    slc_mysql_native_hash("", 0, &h);
    ck_assert_int_eq(h.is_empty, 1);
    ck_assert_int_eq(slc_mysql_native_hash_parse("", 0, &p), SLC_OK);
    ck_assert_int_eq(p.is_empty, 1);

    memset(stage1, 0xaa, sizeof(stage1));
    ck_assert_int_eq(slc_mysql_native_verify(slc_test_scramble, &h, NULL, 0,
                                             stage1), SLC_OK);
    ck_assert_mem_eq(stage1, zero, SLC_SHA1_LEN);

    /* a client that sends a token for an empty password is refused */
    slc_test_token_pw(slc_test_scramble, "x", 1, token);
    ck_assert_int_eq(slc_mysql_native_verify(slc_test_scramble, &h, token,
                                             SLC_SHA1_LEN, stage1), SLC_ERROR);
    ck_assert_int_eq(slc_mysql_native_verify(slc_test_scramble, &h, zero,
                                             SLC_SHA1_LEN, stage1), SLC_ERROR);

    /* and a password-protected account refuses the empty token */
    slc_mysql_native_hash("secret", 6, &h);
    ck_assert_int_eq(slc_mysql_native_verify(slc_test_scramble, &h, NULL, 0,
                                             stage1), SLC_ERROR);

    /* token_pw of "" is defined (zeros); the wire form is an empty token */
    memset(token, 0xaa, sizeof(token));
    slc_test_token_pw(slc_test_scramble, "", 0, token);
    ck_assert_mem_eq(token, zero, SLC_SHA1_LEN);
}
END_TEST

static Suite *
slc_auth_suite(void)
{
    Suite  *s = suite_create("mysql_auth");
    TCase  *tc = tcase_create("native");
    int     nvec = (int) slc_nelems(slc_test_vec);

    tcase_add_loop_test(tc, test_hash_vectors, 0, nvec);
    tcase_add_test(tc, test_hash_parse_lower_case);
    tcase_add_test(tc, test_hash_parse_bad);
    tcase_add_loop_test(tc, test_token_vectors, 0, nvec);
    tcase_add_loop_test(tc, test_verify_accepts, 0, nvec);
    tcase_add_test(tc, test_verify_rejects);
    tcase_add_test(tc, test_empty_password);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{

    return slc_check_run(slc_auth_suite());
}
