#ifndef SLC_MYSQL_AUTH_H
#define SLC_MYSQL_AUTH_H

#include "slc_core.h"
#include "slc_sha1.h"

/*
 * mysql_native_password.
 *   stage1 = SHA1(password), stage2 = SHA1(stage1) (what the server stores,
 *   shown as "*" + 40 upper-case hex digits), and the client's token for a
 *   20-byte scramble is  stage1 XOR SHA1(scramble + stage2).
 * The proxy stores stage2 only.  Verifying a client's token recovers stage1,
 * which is all the proxy needs to compute a token for a backend's scramble,
 * so no plaintext password is kept after the config is read.
 * An empty password has no stage2 (is_empty): only an empty token matches,
 * and the token sent to a backend is empty.
 */

typedef struct {
    int      is_empty;
    uint8_t  stage2[SLC_SHA1_LEN];
} slc_mysql_native_hash_t;

void slc_mysql_native_hash(const char *password, size_t len,
    slc_mysql_native_hash_t *h);
/* Parse "*HEX40" (either case) or "" (empty password); SLC_ERROR if bad. */
int  slc_mysql_native_hash_parse(const char *s, size_t len,
    slc_mysql_native_hash_t *h);
/* Client side: token for `scramble` from stage1. */
void slc_mysql_native_token(const uint8_t scramble[20],
    const uint8_t stage1[SLC_SHA1_LEN], uint8_t token[SLC_SHA1_LEN]);
/*
 * Server side: SLC_OK when `token` proves knowledge of the password, and
 * then stage1 is recovered into `stage1` (zeroed when the hash is empty).
 * Constant-time comparison.
 */
int  slc_mysql_native_verify(const uint8_t scramble[20],
    const slc_mysql_native_hash_t *h, const uint8_t *token, size_t token_len,
    uint8_t stage1[SLC_SHA1_LEN]);

#endif /* SLC_MYSQL_AUTH_H */
