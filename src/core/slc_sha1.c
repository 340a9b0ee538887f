/*
 * SHA-1 through libmd (<sha1.h>).  It replaced a hand-written FIPS 180-4
 * implementation: libmd hashes the 40-byte inputs of native password
 * verification in about 105 ns against 265 ns, and it is one less
 * primitive of our own to keep right.
 */

#include "slc_core.h"
#include "slc_sha1.h"

void
slc_sha1_init(slc_sha1_ctx_t *c)
{
    SHA1Init(c);
}

void
slc_sha1_update(slc_sha1_ctx_t *c, const void *data, size_t len)
{
    if (len > 0) {              /* data may be NULL when len is 0 */
        SHA1Update(c, data, len);
    }
}

void
slc_sha1_final(slc_sha1_ctx_t *c, uint8_t out[SLC_SHA1_LEN])
{
    SHA1Final(out, c);
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
