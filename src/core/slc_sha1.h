#ifndef SLC_SHA1_H
#define SLC_SHA1_H

#include "slc_core.h"
#include <sha1.h>           /* libmd */

/*
 * SHA-1, only for mysql_native_password (nothing in sluice relies on it for
 * collision resistance): a thin layer over libmd, which libbsd already
 * pulls in.  It keeps the callers' names and wipes every context after
 * use, since what is hashed here is a password or derived from one.
 */

#define SLC_SHA1_LEN  SHA1_DIGEST_LENGTH

typedef SHA1_CTX  slc_sha1_ctx_t;

void slc_sha1_init(slc_sha1_ctx_t *c);
void slc_sha1_update(slc_sha1_ctx_t *c, const void *data, size_t len);
/* The context is wiped: initialise it again before reuse. */
void slc_sha1_final(slc_sha1_ctx_t *c, uint8_t out[SLC_SHA1_LEN]);
void slc_sha1(const void *data, size_t len, uint8_t out[SLC_SHA1_LEN]);

#endif /* SLC_SHA1_H */
