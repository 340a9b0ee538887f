/*
 * Generic packets of the connection phase and of every command: the auth
 * switch request, OK and ERR.
 */

#include "slc_core.h"
#include "slc_mysql_codec.h"

#define SLC_MYSQL_SQLSTATE_LEN     5
#define SLC_MYSQL_SQLSTATE_MARKER  '#'
#define SLC_MYSQL_SQLSTATE_DEFAULT "HY000"

/*
 * The plugin data is written as given: for mysql_native_password pass the
 * 20-byte scramble and its NUL (21 bytes), which clients check for.
 */
size_t
slc_mysql_authswitch_build(uint8_t *payload, size_t cap, const char *plugin,
    const uint8_t *data, size_t data_len)
{
    size_t  plen = strlen(plugin);
    size_t  need = 1 + plen + 1 + data_len;

    if (cap < need || need < data_len) {
        return 0;
    }
    payload[0] = SLC_MYSQL_AUTH_SWITCH;
    memcpy(payload + 1, plugin, plen + 1);
    if (data_len > 0) {
        memcpy(payload + 1 + plen + 1, data, data_len);
    }
    return need;
}

/*
 * *data is the rest of the packet, so a native scramble comes with its
 * trailing NUL (21 bytes).  A bare 0xfe is the pre-4.1 OldAuthSwitchRequest
 * (mysql_old_password), which sluice does not speak.
 */
int
slc_mysql_authswitch_parse(const uint8_t *payload, size_t len,
    const char **plugin, size_t *plugin_len, const uint8_t **data,
    size_t *data_len, const char **err)
{
    const uint8_t  *nul;

    if (len == 0 || payload[0] != SLC_MYSQL_AUTH_SWITCH) {
        *err = "not an auth switch request";
        return SLC_ERROR;
    }
    if (len == 1) {
        *err = "old auth switch request (mysql_old_password)";
        return SLC_ERROR;
    }
    nul = memchr(payload + 1, '\0', len - 1);
    if (nul == NULL) {
        *err = "auth switch plugin name not NUL-terminated";
        return SLC_ERROR;
    }
    *plugin = (const char *) payload + 1;
    *plugin_len = (size_t) (nul - (payload + 1));
    *data = nul + 1;
    *data_len = len - (size_t) (nul + 1 - payload);
    return SLC_OK;
}

/* An OK without the info string, as the server sends for a plain success. */
size_t
slc_mysql_ok_build(uint8_t *payload, size_t cap, uint64_t affected,
    uint64_t insert_id, uint16_t status, uint16_t warnings)
{
    size_t    need;
    uint8_t  *p = payload;

    need = 1 + slc_mysql_lenenc_int_size(affected)
           + slc_mysql_lenenc_int_size(insert_id) + 2 + 2;
    if (cap < need) {
        return 0;
    }
    *p++ = SLC_MYSQL_OK;
    p = slc_mysql_lenenc_int_put(p, affected);
    p = slc_mysql_lenenc_int_put(p, insert_id);
    p = slc_mysql_le_put(p, status, 2);
    slc_mysql_le_put(p, warnings, 2);
    return need;
}

int
slc_mysql_ok_status(const uint8_t *p, size_t len)
{
    size_t  off = slc_mysql_ok_status_at(p, len);

    return off ? (int) slc_mysql_le_get(p + off, 2) : -1;
}

void
slc_mysql_ok_set_status(uint8_t *p, size_t len, uint16_t status)
{
    size_t  off = slc_mysql_ok_status_at(p, len);

    if (off) {
        slc_mysql_le_put(p + off, status, 2);
    }
}

/* A sqlstate that is not 5 characters becomes HY000 (general error). */
size_t
slc_mysql_err_build(uint8_t *payload, size_t cap, uint16_t code,
    const char *sqlstate, const char *msg)
{
    size_t    mlen = strlen(msg);
    size_t    need = 1 + 2 + 1 + SLC_MYSQL_SQLSTATE_LEN + mlen;
    uint8_t  *p = payload;

    if (cap < need || need < mlen) {
        return 0;
    }
    if (sqlstate == NULL || strlen(sqlstate) != SLC_MYSQL_SQLSTATE_LEN) {
        sqlstate = SLC_MYSQL_SQLSTATE_DEFAULT;
    }
    *p++ = SLC_MYSQL_ERR;
    p = slc_mysql_le_put(p, code, 2);
    *p++ = SLC_MYSQL_SQLSTATE_MARKER;
    memcpy(p, sqlstate, SLC_MYSQL_SQLSTATE_LEN);
    memcpy(p + SLC_MYSQL_SQLSTATE_LEN, msg, mlen);
    return need;
}

/* SQLSTATE values are five upper-case letters or digits. */
static int
slc_mysql_sqlstate_valid(const uint8_t *s)
{
    int  i;

    for (i = 0; i < SLC_MYSQL_SQLSTATE_LEN; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'A' && s[i] <= 'Z'))) {
            return 0;
        }
    }
    return 1;
}

/*
 * The SQLSTATE marker is optional: a server that fails before it knows the
 * client's capabilities (too many connections, host blocked) sends none.
 * Code 0xffff is a MariaDB progress report, not an error; it is refused
 * here because sluice never asks for progress reports.
 */
int
slc_mysql_err_parse(const uint8_t *payload, size_t len, uint16_t *code,
    char sqlstate[6], const char **msg, size_t *msg_len, const char **err)
{
    size_t  off = 3;

    if (len < 3 || payload[0] != SLC_MYSQL_ERR) {
        *err = "not an ERR packet";
        return SLC_ERROR;
    }
    *code = (uint16_t) slc_mysql_le_get(payload + 1, 2);
    if (*code == SLC_MYSQL_ERR_PROGRESS) {
        *err = "progress report in an ERR packet";
        return SLC_ERROR;
    }
    if (len > off && payload[off] == SLC_MYSQL_SQLSTATE_MARKER) {
        if (len - off < 1 + SLC_MYSQL_SQLSTATE_LEN) {
            *err = "ERR packet truncated in the SQLSTATE";
            return SLC_ERROR;
        }
        if (!slc_mysql_sqlstate_valid(payload + off + 1)) {
            *err = "ERR packet SQLSTATE is not 5 letters or digits";
            return SLC_ERROR;
        }
        memcpy(sqlstate, payload + off + 1, SLC_MYSQL_SQLSTATE_LEN);
        off += 1 + SLC_MYSQL_SQLSTATE_LEN;
    } else {
        memcpy(sqlstate, SLC_MYSQL_SQLSTATE_DEFAULT, SLC_MYSQL_SQLSTATE_LEN);
    }
    sqlstate[SLC_MYSQL_SQLSTATE_LEN] = '\0';
    *msg = (const char *) payload + off;
    *msg_len = len - off;
    return SLC_OK;
}
