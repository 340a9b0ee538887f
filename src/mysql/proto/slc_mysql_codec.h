#ifndef SLC_MYSQL_CODEC_H
#define SLC_MYSQL_CODEC_H

#include "slc_core.h"
#include "slc_mysql_proto.h"

/*
 * Encoding and decoding of MySQL protocol packets.  Pure functions: no I/O,
 * no allocation, no logging.  Parsers never trust the peer: every length is
 * checked against the buffer, and a malformed input returns SLC_ERROR with
 * *err set to a static string that says what was wrong.  Parsed strings point
 * into the caller's buffer and are valid as long as it is.
 */

/* --- integers --------------------------------------------------------- */

/*
 * A little-endian unsigned integer of `n` bytes (at most 8) at `p`; the
 * caller checked they are there.  Inline: the tracker reads status flags
 * and counts with it on the forwarding path.
 */
static inline uint64_t
slc_mysql_le_get(const uint8_t *p, size_t n)
{
    uint64_t  v = 0;

    while (n-- > 0) {
        v = v << 8 | p[n];
    }
    return v;
}

/* Write the low `n` bytes of `v` little-endian; returns the end. */
static inline uint8_t *
slc_mysql_le_put(uint8_t *p, uint64_t v, size_t n)
{
    while (n-- > 0) {
        *p++ = (uint8_t) v;
        v >>= 8;
    }
    return p;
}

/* --- COM_STMT_EXECUTE ------------------------------------------------ */

/*
 * The command, the statement id (4), flags (1: a cursor), the iteration
 * count (4); then, when the statement has parameters, the NULL bitmap
 * ((params + 7) / 8 bytes), new-params-bound-flag (1), the types (2 bytes
 * per parameter) when that flag is 1, and the values.  An EXECUTE whose
 * flag is 0 uses the types of the statement's last EXECUTE that sent
 * them.  The id 0xffffffff is MariaDB's "the statement prepared last".
 */
#define SLC_MYSQL_EXEC_HEAD     10
#define SLC_MYSQL_STMT_LAST_ID  0xffffffffu

/* Where new-params-bound-flag is in an EXECUTE of a statement with
   `params` parameters; 0 when it has none (nor a NULL bitmap). */
static inline size_t
slc_mysql_exec_flag_pos(unsigned params)
{
    return params == 0 ? 0 : SLC_MYSQL_EXEC_HEAD + ((size_t) params + 7) / 8;
}

/* --- framing ---------------------------------------------------------- */

/* Write a 4-byte header (3-byte little-endian length, sequence id). */
void slc_mysql_hdr_write(uint8_t *p, uint32_t payload_len, uint8_t seq);
/* Read the 4 header bytes at `p` (the caller checked they are there). */
void slc_mysql_hdr_read(const uint8_t *p, uint32_t *payload_len,
    uint8_t *seq);

/*
 * Look at the start of `p`: if a whole packet (header and payload) is there,
 * return 1 and set *payload_len and *seq; if not yet, return 0.  (Framing
 * cannot be malformed: any 4 bytes are a valid header.)
 */
int slc_mysql_packet_peek(const uint8_t *p, size_t len,
    uint32_t *payload_len, uint8_t *seq);

/*
 * A logical message longer than 0xffffff bytes travels as several packets;
 * each full one has a payload of exactly 0xffffff bytes and the last has
 * less (possibly 0).  Return 1 if the whole message starting at `p` is in
 * the buffer and set *wire_len (bytes on the wire incl. all headers),
 * *payload_len (sum of payloads) and *npackets; return 0 if more is needed.
 * Sequence ids are not checked here.
 */
int slc_mysql_message_span(const uint8_t *p, size_t len, size_t *wire_len,
    uint64_t *payload_len, unsigned *npackets);

/* --- length-encoded integers and strings ------------------------------ */

/*
 * Decode a length-encoded integer: returns bytes consumed (1, 3, 4 or 9),
 * or 0 when the buffer is too short or the first byte is 0xfb (NULL in a
 * row) or 0xff (not an integer).
 */
size_t   slc_mysql_lenenc_int_get(const uint8_t *p, size_t len, uint64_t *v);
/* The bytes a length-encoded integer takes, from its first byte: 1, 3, 4
   or 9; 0 for 0xfb and 0xff, which start none.  Inline: an OK's flags are
   found by it once per response. */
static inline size_t
slc_mysql_lenenc_int_len(uint8_t first)
{
    return first < 0xfb ? 1 : first == 0xfc ? 3 : first == 0xfd ? 4
           : first == 0xfe ? 9 : 0;
}
size_t   slc_mysql_lenenc_int_size(uint64_t v);
uint8_t *slc_mysql_lenenc_int_put(uint8_t *p, uint64_t v);  /* returns end */

/* A length-encoded string: returns bytes consumed or 0 as above. */
size_t   slc_mysql_lenenc_str_get(const uint8_t *p, size_t len,
    const uint8_t **s, uint64_t *slen);

/* --- initial handshake (server greeting, protocol 10) ------------------ */

typedef struct {
    uint8_t     protocol;            /* 10 */
    char        server_version[64];  /* NUL terminated, truncated if longer */
    uint32_t    thread_id;
    uint8_t     scramble[SLC_MYSQL_SCRAMBLE_LEN]; /* auth-plugin-data, 20 B */
    uint32_t    capabilities;
    uint8_t     charset;
    uint16_t    status;
    uint32_t    mariadb_caps;        /* MariaDB extended capabilities, sent in
                                        the reserved bytes when the server
                                        clears CLIENT_LONG_PASSWORD */
    char        auth_plugin[64];     /* "" when none */
} slc_mysql_greeting_t;

int    slc_mysql_greeting_parse(const uint8_t *payload, size_t len,
    slc_mysql_greeting_t *g, const char **err);
/* Build a payload (no header); returns its length, or 0 if cap is short. */
size_t slc_mysql_greeting_build(uint8_t *payload, size_t cap,
    const slc_mysql_greeting_t *g);

/* --- HandshakeResponse41 (client's reply) ------------------------------ */

typedef struct {
    uint32_t        capabilities;
    uint32_t        max_packet;
    uint8_t         charset;
    uint32_t        mariadb_caps;    /* from the filler, see above */
    const char     *user;        size_t user_len;
    const uint8_t  *auth;        size_t auth_len;
    const char     *db;          size_t db_len;     /* NULL if absent */
    const char     *plugin;      size_t plugin_len; /* NULL if absent */
    const uint8_t  *attrs;       size_t attrs_len;  /* connect attributes,
                                    the key/value block without its lenenc
                                    total length; NULL if absent */
} slc_mysql_hsresp_t;

/*
 * Parse a HandshakeResponse41.  A 32-byte SSLRequest, a pre-4.1 response or
 * a truncated field is an error.  Honours CONNECT_WITH_DB, PLUGIN_AUTH,
 * PLUGIN_AUTH_LENENC_CLIENT_DATA, SECURE_CONNECTION and CONNECT_ATTRS.
 */
int    slc_mysql_hsresp_parse(const uint8_t *payload, size_t len,
    slc_mysql_hsresp_t *r, const char **err);
/* Build one from r->capabilities and the fields; 0 if cap is short. */
size_t slc_mysql_hsresp_build(uint8_t *payload, size_t cap,
    const slc_mysql_hsresp_t *r);

/*
 * The 1-byte collation id a HandshakeResponse41 carries for the collation
 * `id` (COM_CHANGE_USER's is 2 bytes): id itself up to 255; above, a
 * collation of the same character set that fits, by MariaDB's numbering
 * (a NO PAD one's PAD twin, utf8mb3_general_ci or utf8mb4_general_ci),
 * and utf8mb4_general_ci (45) for an id it does not place (MySQL 8's
 * above 255 are all utf8mb4).  The caller then sets the collation itself
 * (SET collation_connection = id), which leaves the client's and the
 * results' character set to this one.
 */
uint8_t slc_mysql_hsresp_collation(uint16_t id);

/* --- COM_CHANGE_USER -------------------------------------------------- */

/*
 * 0x11, user NUL, auth data (1-byte length with SECURE_CONNECTION, else
 * NUL-terminated), database NUL, then optionally a 2-byte collation, the
 * plugin name (PLUGIN_AUTH) and connect attributes (CONNECT_ATTRS).  The
 * fields land in an slc_mysql_hsresp_t (capabilities = `caps`, the ones
 * negotiated at login; db always set, "" when none) and the collation in
 * *collation (0 when absent).
 */
int    slc_mysql_change_user_parse(const uint8_t *payload, size_t len,
    uint32_t caps, slc_mysql_hsresp_t *r, uint16_t *collation,
    const char **err);
size_t slc_mysql_change_user_build(uint8_t *payload, size_t cap,
    const slc_mysql_hsresp_t *r, uint16_t collation);

/* --- auth switch, OK, ERR --------------------------------------------- */

/* 0xfe, plugin name NUL, plugin data (for native: scramble + NUL). */
size_t slc_mysql_authswitch_build(uint8_t *payload, size_t cap,
    const char *plugin, const uint8_t *data, size_t data_len);
int    slc_mysql_authswitch_parse(const uint8_t *payload, size_t len,
    const char **plugin, size_t *plugin_len, const uint8_t **data,
    size_t *data_len, const char **err);

size_t slc_mysql_ok_build(uint8_t *payload, size_t cap, uint64_t affected,
    uint64_t insert_id, uint16_t status, uint16_t warnings);
/*
 * The status flags of an OK packet (0x00 or 0xfe header) of which `len`
 * bytes are at `p`, or -1 when they end before the flags (a packet cut
 * short, or only its head).
 */
int    slc_mysql_ok_status(const uint8_t *p, size_t len);
/*
 * Where an OK's status flags are (their offset), 0 when the `len` bytes
 * at `p` end before them (the tracker passes the head it kept of a
 * packet, which may stop short): after its affected rows and last insert
 * id, skipped by their first bytes.  Inline: the tracker finds the flags
 * of each OK by it.
 */
static inline size_t
slc_mysql_ok_status_at(const uint8_t *p, size_t len)
{
    size_t  off = 1, n;

    for (int i = 0; i < 2; i++) {
        if (off >= len || (n = slc_mysql_lenenc_int_len(p[off])) == 0) {
            return 0;
        }
        off += n;
    }
    return len >= off + 2 ? off : 0;
}
/* Overwrite them in place (nothing if the packet is too short). */
void   slc_mysql_ok_set_status(uint8_t *p, size_t len, uint16_t status);

/* ERR with SQLSTATE marker (PROTOCOL_41). */
size_t slc_mysql_err_build(uint8_t *payload, size_t cap, uint16_t code,
    const char *sqlstate, const char *msg);
/* sqlstate receives 5 chars + NUL ("HY000" if the packet has none). */
int    slc_mysql_err_parse(const uint8_t *payload, size_t len,
    uint16_t *code, char sqlstate[6], const char **msg, size_t *msg_len,
    const char **err);

#endif /* SLC_MYSQL_CODEC_H */
