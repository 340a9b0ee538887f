/*
 * The session state of an OK packet, edited: last_gtid taken out of what
 * a client sees (readwritesplit's causal reads ask the primary for it;
 * docs/architecture.md, "Causal reads").
 *
 * An OK with CLIENT_SESSION_TRACK: header, affected rows, last insert id
 * (lenenc), status (2), warnings (2), info (lenenc string) and, with
 * SERVER_SESSION_STATE_CHANGED, the state (lenenc string) of entries:
 * type (1), data (lenenc string).  A SESSION_TRACK_SYSTEM_VARIABLES
 * entry's data is name/value pairs (lenenc strings).
 */

#include "slc_mysql_codec.h"
#include "slc_mysql_okstate.h"
#include "slc_mysql_proto.h"

/* One lenenc string at p[0..len): its total size, 0 when malformed. */
static size_t
slc_mysql_okstate_str(const uint8_t *p, size_t len)
{
    const uint8_t *s;
    uint64_t       n;

    return slc_mysql_lenenc_str_get(p, len, &s, &n);
}

/* A sysvar entry's pairs without last_gtid, into out: its length, or
   (size_t) -1 when malformed. */
static size_t
slc_mysql_okstate_vars(const uint8_t *p, size_t len, uint8_t *out,
    int *hid)
{
    const uint8_t *name;
    uint64_t       nlen;
    size_t         off = 0, k, v, o = 0;

    while (off < len) {
        k = slc_mysql_lenenc_str_get(p + off, len - off, &name, &nlen);
        if (k == 0 || (v = slc_mysql_okstate_str(p + off + k,
                                                 len - off - k)) == 0)
        {
            return (size_t) -1;
        }
        if (nlen == 9 && memcmp(name, "last_gtid", 9) == 0) {
            *hid = 1;
        } else {
            memcpy(out + o, p + off, k + v);
            o += k + v;
        }
        off += k + v;
    }
    return o;
}

/* The state string's entries without last_gtid, into out: its length,
   or (size_t) -1 when malformed. */
static size_t
slc_mysql_okstate_entries(const uint8_t *s, size_t slen, uint8_t *out,
    int *hid)
{
    uint8_t  pairs[SLC_MYSQL_MAX_OKSTATE];
    uint64_t elen;
    size_t   i = 0, k, o = 0, n;

    while (i < slen) {
        uint8_t type = s[i];

        k = slc_mysql_lenenc_int_get(s + i + 1, slen - i - 1, &elen);
        if (k == 0 || elen > slen - i - 1 - k) {
            return (size_t) -1;
        }
        if (type == SLC_SESSION_TRACK_SYSTEM_VARIABLES
            && elen <= sizeof(pairs))
        {
            n = slc_mysql_okstate_vars(s + i + 1 + k, elen, pairs, hid);
            if (n == (size_t) -1) {
                return n;
            }
            if (n > 0) {
                out[o++] = type;
                o = (size_t) (slc_mysql_lenenc_int_put(out + o, n) - out);
                memcpy(out + o, pairs, n);
                o += n;
            }
        } else {
            memcpy(out + o, s + i, 1 + k + elen);
            o += 1 + k + elen;
        }
        i += 1 + k + elen;
    }
    return o;
}

size_t
slc_mysql_okstate_hide_gtid(const uint8_t *p, size_t len, uint8_t *out)
{
    uint8_t        state[SLC_MYSQL_MAX_OKSTATE];
    const uint8_t *s;
    uint64_t       slen;
    size_t         off = slc_mysql_ok_status_at(p, len), at, k, n, o;
    uint16_t       status;
    int            hid = 0;

    if (off == 0 || len - off < 4 || len > SLC_MYSQL_MAX_OKSTATE) {
        return 0;
    }
    status = (uint16_t) slc_mysql_le_get(p + off, 2);
    if (!(status & SLC_SERVER_SESSION_STATE_CHANGED)) {
        return 0;
    }
    at = off;
    off += 4;                                   /* status, warnings */
    k = slc_mysql_okstate_str(p + off, len - off);          /* info */
    if (k == 0) {
        return 0;
    }
    off += k;
    k = slc_mysql_lenenc_str_get(p + off, len - off, &s, &slen);
    if (k == 0 || off + k != len) {
        return 0;
    }
    n = slc_mysql_okstate_entries(s, slen, state, &hid);
    if (n == (size_t) -1 || !hid) {
        return 0;
    }
    memcpy(out, p, off);                        /* up to the state */
    if (n == 0) {
        slc_mysql_le_put(out + at,
            (uint16_t) (status & ~SLC_SERVER_SESSION_STATE_CHANGED), 2);
        return off;
    }
    o = (size_t) (slc_mysql_lenenc_int_put(out + off, n) - out);
    memcpy(out + o, state, n);
    return o + n;
}
