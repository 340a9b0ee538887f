/*
 * mysql_native_password, both sides.  Every buffer that held stage1 or a
 * password-derived value is wiped before it goes out of scope.
 */

#include "slc_core.h"
#include "slc_sha1.h"
#include "slc_mysql_auth.h"

#define SLC_MYSQL_NATIVE_HEX_LEN  (1 + 2 * SLC_SHA1_LEN)   /* "*" + 40 */

/* SHA1(scramble + stage2): the mask the token is XORed with. */
static void
slc_mysql_native_mask(const uint8_t scramble[20],
    const uint8_t stage2[SLC_SHA1_LEN], uint8_t mask[SLC_SHA1_LEN])
{
    slc_sha1_ctx_t  c;

    slc_sha1_init(&c);
    slc_sha1_update(&c, scramble, 20);
    slc_sha1_update(&c, stage2, SLC_SHA1_LEN);
    slc_sha1_final(&c, mask);
}

static void
slc_mysql_native_xor(uint8_t *out, const uint8_t *a, const uint8_t *b)
{
    unsigned  i;

    for (i = 0; i < SLC_SHA1_LEN; i++) {
        out[i] = a[i] ^ b[i];
    }
}

/* Time depends on the length only, never on where the bytes differ. */
static int
slc_mysql_native_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
    volatile uint8_t  diff = 0;
    size_t            i;

    for (i = 0; i < n; i++) {
        diff |= a[i] ^ b[i];
    }
    return diff == 0;
}

static int
slc_mysql_native_hexval(char ch)
{
    if (ch >= '0' && ch <= '9') {
        return ch - '0';
    }
    if (ch >= 'a' && ch <= 'f') {
        return ch - 'a' + 10;
    }
    if (ch >= 'A' && ch <= 'F') {
        return ch - 'A' + 10;
    }
    return -1;
}

void
slc_mysql_native_hash(const char *password, size_t len,
    slc_mysql_native_hash_t *h)
{
    uint8_t  stage1[SLC_SHA1_LEN];

    memset(h, 0, sizeof(*h));
    if (len == 0) {
        h->is_empty = 1;
        return;
    }
    slc_sha1(password, len, stage1);
    slc_sha1(stage1, SLC_SHA1_LEN, h->stage2);
    explicit_bzero(stage1, sizeof(stage1));
}

int
slc_mysql_native_hash_parse(const char *s, size_t len,
    slc_mysql_native_hash_t *h)
{
    int     hi, lo;
    size_t  i;

    memset(h, 0, sizeof(*h));
    if (len == 0) {
        h->is_empty = 1;
        return SLC_OK;
    }
    if (len != SLC_MYSQL_NATIVE_HEX_LEN || s[0] != '*') {
        return SLC_ERROR;
    }
    for (i = 0; i < SLC_SHA1_LEN; i++) {
        hi = slc_mysql_native_hexval(s[1 + 2 * i]);
        lo = slc_mysql_native_hexval(s[2 + 2 * i]);
        if (hi < 0 || lo < 0) {
            memset(h, 0, sizeof(*h));
            return SLC_ERROR;
        }
        h->stage2[i] = (uint8_t) (hi << 4 | lo);
    }
    return SLC_OK;
}

void
slc_mysql_native_token(const uint8_t scramble[20],
    const uint8_t stage1[SLC_SHA1_LEN], uint8_t token[SLC_SHA1_LEN])
{
    uint8_t  stage2[SLC_SHA1_LEN], mask[SLC_SHA1_LEN];

    slc_sha1(stage1, SLC_SHA1_LEN, stage2);
    slc_mysql_native_mask(scramble, stage2, mask);
    slc_mysql_native_xor(token, stage1, mask);
    explicit_bzero(mask, sizeof(mask));
}

/*
 * token = stage1 XOR SHA1(scramble + stage2), so XORing the mask off again
 * gives a candidate stage1, which is right exactly when SHA1 of it is the
 * stored stage2.
 */
int
slc_mysql_native_verify(const uint8_t scramble[20],
    const slc_mysql_native_hash_t *h, const uint8_t *token, size_t token_len,
    uint8_t stage1[SLC_SHA1_LEN])
{
    uint8_t  mask[SLC_SHA1_LEN], cand[SLC_SHA1_LEN], check[SLC_SHA1_LEN];
    int      ok;

    memset(stage1, 0, SLC_SHA1_LEN);
    if (h->is_empty) {
        return token_len == 0 ? SLC_OK : SLC_ERROR;
    }
    if (token_len != SLC_SHA1_LEN) {
        return SLC_ERROR;
    }
    slc_mysql_native_mask(scramble, h->stage2, mask);
    slc_mysql_native_xor(cand, token, mask);
    slc_sha1(cand, SLC_SHA1_LEN, check);
    ok = slc_mysql_native_equal(check, h->stage2, SLC_SHA1_LEN);
    if (ok) {
        memcpy(stage1, cand, SLC_SHA1_LEN);
    }
    explicit_bzero(cand, sizeof(cand));
    explicit_bzero(mask, sizeof(mask));
    return ok ? SLC_OK : SLC_ERROR;
}
