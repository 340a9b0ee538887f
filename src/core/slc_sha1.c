/*
 * SHA-1 as specified in FIPS 180-4, sections 4.1.1, 5.1.1 and 6.1.  It is
 * here only because mysql_native_password is built on it; nothing in sluice
 * relies on SHA-1 for collision resistance.
 */

#include "slc_core.h"
#include "slc_sha1.h"

#define SLC_SHA1_ROTL(x, n)  (((x) << (n)) | ((x) >> (32 - (n))))

static uint32_t
slc_sha1_be32(const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16
           | (uint32_t) p[2] << 8 | (uint32_t) p[3];
}

static void
slc_sha1_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) (v >> 24);
    p[1] = (uint8_t) (v >> 16);
    p[2] = (uint8_t) (v >> 8);
    p[3] = (uint8_t) v;
}

/* f_t and K_t of FIPS 180-4 4.1.1 and 4.2.1, by round. */
static uint32_t
slc_sha1_f(unsigned t, uint32_t b, uint32_t c, uint32_t d)
{
    if (t < 20) {
        return ((b & c) | (~b & d)) + 0x5a827999u;
    }
    if (t < 40) {
        return (b ^ c ^ d) + 0x6ed9eba1u;
    }
    if (t < 60) {
        return ((b & c) | (b & d) | (c & d)) + 0x8f1bbcdcu;
    }
    return (b ^ c ^ d) + 0xca62c1d6u;
}

/* Process one 64-byte block (FIPS 180-4 6.1.2). */
static void
slc_sha1_block(uint32_t h[5], const uint8_t *block)
{
    uint32_t  w[80], a, b, c, d, e, tmp;
    unsigned  t;

    for (t = 0; t < 16; t++) {
        w[t] = slc_sha1_be32(block + 4 * t);
    }
    for (t = 16; t < 80; t++) {
        w[t] = SLC_SHA1_ROTL(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    }

    a = h[0]; b = h[1]; c = h[2]; d = h[3]; e = h[4];

    for (t = 0; t < 80; t++) {
        tmp = SLC_SHA1_ROTL(a, 5) + slc_sha1_f(t, b, c, d) + e + w[t];
        e = d;
        d = c;
        c = SLC_SHA1_ROTL(b, 30);
        b = a;
        a = tmp;
    }

    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e;

    /* The schedule is derived from the message, which may be a password. */
    explicit_bzero(w, sizeof(w));
}

void
slc_sha1_init(slc_sha1_ctx_t *c)
{
    c->state[0] = 0x67452301u;
    c->state[1] = 0xefcdab89u;
    c->state[2] = 0x98badcfeu;
    c->state[3] = 0x10325476u;
    c->state[4] = 0xc3d2e1f0u;
    c->count = 0;
}

void
slc_sha1_update(slc_sha1_ctx_t *c, const void *data, size_t len)
{
    const uint8_t  *p = data;
    size_t          used, n;

    used = (size_t) (c->count % 64);
    c->count += len;

    while (len > 0) {
        if (used == 0 && len >= 64) {
            slc_sha1_block(c->state, p);
            p += 64;
            len -= 64;
            continue;
        }
        n = slc_min(64 - used, len);
        memcpy(c->buf + used, p, n);
        used += n;
        p += n;
        len -= n;
        if (used == 64) {
            slc_sha1_block(c->state, c->buf);
            used = 0;
        }
    }
}

/*
 * Padding (FIPS 180-4 5.1.1): a 1 bit, zeros up to 56 mod 64 bytes, then the
 * message length in bits as a 64-bit big-endian number.  The context is
 * wiped afterwards, so it must be initialised again before reuse.
 */
void
slc_sha1_final(slc_sha1_ctx_t *c, uint8_t out[SLC_SHA1_LEN])
{
    uint64_t  bits = c->count * 8;
    size_t    used = (size_t) (c->count % 64);
    unsigned  i;

    c->buf[used++] = 0x80;
    if (used > 56) {
        memset(c->buf + used, 0, 64 - used);
        slc_sha1_block(c->state, c->buf);
        used = 0;
    }
    memset(c->buf + used, 0, 56 - used);
    slc_sha1_put_be32(c->buf + 56, (uint32_t) (bits >> 32));
    slc_sha1_put_be32(c->buf + 60, (uint32_t) bits);
    slc_sha1_block(c->state, c->buf);

    for (i = 0; i < 5; i++) {
        slc_sha1_put_be32(out + 4 * i, c->state[i]);
    }
    explicit_bzero(c, sizeof(*c));
}

void
slc_sha1(const void *data, size_t len, uint8_t out[SLC_SHA1_LEN])
{
    slc_sha1_ctx_t  c;

    slc_sha1_init(&c);
    slc_sha1_update(&c, data, len);
    slc_sha1_final(&c, out);
}
