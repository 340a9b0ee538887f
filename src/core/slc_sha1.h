#ifndef SLC_SHA1_H
#define SLC_SHA1_H

#include "slc_core.h"

/* SHA-1 (FIPS 180-4), only for mysql_native_password. */

#define SLC_SHA1_LEN  20

typedef struct {
    uint32_t  state[5];
    uint64_t  count;        /* bytes hashed */
    uint8_t   buf[64];
} slc_sha1_ctx_t;

void slc_sha1_init(slc_sha1_ctx_t *c);
void slc_sha1_update(slc_sha1_ctx_t *c, const void *data, size_t len);
void slc_sha1_final(slc_sha1_ctx_t *c, uint8_t out[SLC_SHA1_LEN]);
void slc_sha1(const void *data, size_t len, uint8_t out[SLC_SHA1_LEN]);

#endif /* SLC_SHA1_H */
