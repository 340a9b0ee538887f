/*
 * The connection-phase handshake: the server's greeting (HandshakeV10) and
 * the client's HandshakeResponse41, in both directions, because sluice is a
 * server to its clients and a client to its backends.
 *
 * MariaDB (10.2 and later) clears CLIENT_LONG_PASSWORD, which it calls
 * CLIENT_MYSQL, to say that it speaks MariaDB; then the last 4 of the 10
 * reserved greeting bytes, and the last 4 of the 23 filler bytes of the
 * response, carry the upper 32 bits of its 64-bit capabilities.  A MySQL
 * peer sets the bit and sends zeros there.
 */

#include "slc_core.h"
#include "slc_mysql_codec.h"

#define SLC_MYSQL_GREETING_PROTOCOL  10
#define SLC_MYSQL_SCRAMBLE1_LEN      8
#define SLC_MYSQL_SCRAMBLE2_LEN      (SLC_MYSQL_SCRAMBLE_LEN \
                                      - SLC_MYSQL_SCRAMBLE1_LEN)
#define SLC_MYSQL_RESERVED_LEN       10
#define SLC_MYSQL_FILLER_LEN         23
#define SLC_MYSQL_HSRESP_FIXED_LEN   32      /* also an SSLRequest's size */

/* A bounds-checked cursor over a payload. */
typedef struct {
    const uint8_t  *p;
    const uint8_t  *end;
} slc_mysql_rd_t;

/* A bounds-checked writer: once it runs out of room it writes no more. */
typedef struct {
    uint8_t  *p;
    uint8_t  *end;
    int       full;
} slc_mysql_wr_t;


/* --- reading ---------------------------------------------------------- */

static const uint8_t *
slc_mysql_rd_take(slc_mysql_rd_t *rd, size_t n)
{
    const uint8_t  *s = rd->p;

    if ((size_t) (rd->end - rd->p) < n) {
        return NULL;
    }
    rd->p += n;
    return s;
}

/* A NUL-terminated string; *n excludes the NUL. */
static int
slc_mysql_rd_nulstr(slc_mysql_rd_t *rd, const char **s, size_t *n)
{
    const uint8_t  *nul;
    size_t          avail = (size_t) (rd->end - rd->p);

    nul = avail > 0 ? memchr(rd->p, '\0', avail) : NULL;
    if (nul == NULL) {
        return SLC_ERROR;
    }
    *s = (const char *) rd->p;
    *n = (size_t) (nul - rd->p);
    rd->p = nul + 1;
    return SLC_OK;
}


/* --- writing ---------------------------------------------------------- */

static void
slc_mysql_wr_bytes(slc_mysql_wr_t *w, const void *s, size_t n)
{
    if (w->full || (size_t) (w->end - w->p) < n) {
        w->full = 1;
        return;
    }
    if (n > 0) {
        memcpy(w->p, s, n);
    }
    w->p += n;
}

static void
slc_mysql_wr_zero(slc_mysql_wr_t *w, size_t n)
{
    if (w->full || (size_t) (w->end - w->p) < n) {
        w->full = 1;
        return;
    }
    memset(w->p, 0, n);
    w->p += n;
}

static void
slc_mysql_wr_le(slc_mysql_wr_t *w, uint32_t v, size_t n)
{
    uint8_t  b[4];

    slc_mysql_wr_bytes(w, b, (size_t) (slc_mysql_le_put(b, v, n) - b));
}

/* Write s, n bytes, and a NUL; a NUL inside s could not be read back. */
static void
slc_mysql_wr_nulstr(slc_mysql_wr_t *w, const void *s, size_t n)
{
    if (n > 0 && memchr(s, '\0', n) != NULL) {
        w->full = 1;
        return;
    }
    slc_mysql_wr_bytes(w, s, n);
    slc_mysql_wr_zero(w, 1);
}

static void
slc_mysql_wr_lenenc(slc_mysql_wr_t *w, uint64_t v)
{
    uint8_t  b[9];

    slc_mysql_wr_bytes(w, b, (size_t) (slc_mysql_lenenc_int_put(b, v) - b));
}

static size_t
slc_mysql_wr_done(slc_mysql_wr_t *w, const uint8_t *start)
{
    return w->full ? 0 : (size_t) (w->p - start);
}


/* --- greeting --------------------------------------------------------- */

/* Protocol version to the lower capability bytes: present in any greeting. */
static int
slc_mysql_greeting_head(slc_mysql_rd_t *rd, slc_mysql_greeting_t *g,
    const char **err)
{
    const uint8_t  *f;
    const char     *ver;
    size_t          vlen;

    if (rd->p < rd->end && rd->p[0] == SLC_MYSQL_ERR) {
        *err = "server sent an ERR packet instead of a greeting";
        return SLC_ERROR;
    }
    f = slc_mysql_rd_take(rd, 1);
    if (f == NULL || f[0] != SLC_MYSQL_GREETING_PROTOCOL) {
        *err = "greeting protocol version is not 10";
        return SLC_ERROR;
    }
    g->protocol = f[0];

    if (slc_mysql_rd_nulstr(rd, &ver, &vlen) != SLC_OK) {
        *err = "greeting server version not NUL-terminated";
        return SLC_ERROR;
    }
    vlen = slc_min(vlen, sizeof(g->server_version) - 1);
    memcpy(g->server_version, ver, vlen);
    g->server_version[vlen] = '\0';

    /* thread id 4, scramble part 1, filler 1, lower capabilities 2 */
    f = slc_mysql_rd_take(rd, 4 + SLC_MYSQL_SCRAMBLE1_LEN + 1 + 2);
    if (f == NULL) {
        *err = "greeting truncated before the capabilities";
        return SLC_ERROR;
    }
    g->thread_id = (uint32_t) slc_mysql_le_get(f, 4);
    memcpy(g->scramble, f + 4, SLC_MYSQL_SCRAMBLE1_LEN);
    g->capabilities = slc_mysql_le_get(f + 4 + SLC_MYSQL_SCRAMBLE1_LEN + 1, 2);
    return SLC_OK;
}

/*
 * The second scramble part is max(13, auth_plugin_data_len - 8) bytes, of
 * which the native plugins use 12; the 13th is a NUL.
 */
static int
slc_mysql_greeting_scramble2(slc_mysql_rd_t *rd, slc_mysql_greeting_t *g,
    unsigned auth_len, const char **err)
{
    const uint8_t  *f;
    size_t          len2;

    len2 = auth_len > 8 + 13 ? auth_len - 8 : 13;
    f = slc_mysql_rd_take(rd, len2);
    if (f == NULL) {
        *err = "greeting truncated in the scramble";
        return SLC_ERROR;
    }
    memcpy(g->scramble + SLC_MYSQL_SCRAMBLE1_LEN, f, SLC_MYSQL_SCRAMBLE2_LEN);
    return SLC_OK;
}

static int
slc_mysql_greeting_plugin(slc_mysql_rd_t *rd, slc_mysql_greeting_t *g,
    const char **err)
{
    const char  *s;
    size_t       n;

    g->auth_plugin[0] = '\0';
    if (!(g->capabilities & SLC_CLIENT_PLUGIN_AUTH)) {
        return SLC_OK;
    }
    if (slc_mysql_rd_nulstr(rd, &s, &n) != SLC_OK) {
        *err = "greeting auth plugin name not NUL-terminated";
        return SLC_ERROR;
    }
    if (n >= sizeof(g->auth_plugin)) {
        *err = "greeting auth plugin name too long";
        return SLC_ERROR;
    }
    memcpy(g->auth_plugin, s, n);
    g->auth_plugin[n] = '\0';
    return SLC_OK;
}

/* Character set to the plugin name: the 4.1 part of the greeting. */
static int
slc_mysql_greeting_tail(slc_mysql_rd_t *rd, slc_mysql_greeting_t *g,
    const char **err)
{
    const uint8_t  *f;
    unsigned        auth_len;

    /*
     * charset 1, status 2, upper capabilities 2, auth data length 1 and
     * the reserved bytes, the last 4 of them MariaDB's
     */
    f = slc_mysql_rd_take(rd, 1 + 2 + 2 + 1 + SLC_MYSQL_RESERVED_LEN);
    if (f == NULL) {
        *err = "greeting truncated (pre-4.1 server?)";
        return SLC_ERROR;
    }
    g->charset = f[0];
    g->status = (uint16_t) slc_mysql_le_get(f + 1, 2);
    g->capabilities |= slc_mysql_le_get(f + 3, 2) << 16;
    auth_len = f[5];
    g->mariadb_caps = 0;
    if (!(g->capabilities & SLC_CLIENT_LONG_PASSWORD)) {
        g->mariadb_caps = slc_mysql_le_get(f + 6 + SLC_MYSQL_RESERVED_LEN - 4,
                                           4);
    }

    if (!(g->capabilities & SLC_CLIENT_PROTOCOL_41)
        || !(g->capabilities & SLC_CLIENT_SECURE_CONNECTION))
    {
        *err = "greeting lacks PROTOCOL_41 or SECURE_CONNECTION";
        return SLC_ERROR;
    }
    if (slc_mysql_greeting_scramble2(rd, g, auth_len, err) != SLC_OK) {
        return SLC_ERROR;
    }
    return slc_mysql_greeting_plugin(rd, g, err);
}

int
slc_mysql_greeting_parse(const uint8_t *payload, size_t len,
    slc_mysql_greeting_t *g, const char **err)
{
    slc_mysql_rd_t  rd = { payload, payload + len };

    memset(g, 0, sizeof(*g));
    if (slc_mysql_greeting_head(&rd, g, err) != SLC_OK) {
        return SLC_ERROR;
    }
    return slc_mysql_greeting_tail(&rd, g, err);
}

/*
 * Laid out as MariaDB 10.11 does: auth data length 21, part 2 of the
 * scramble as 12 bytes and a NUL, extended capabilities in the reserved
 * bytes unless CLIENT_LONG_PASSWORD is set.
 */
size_t
slc_mysql_greeting_build(uint8_t *payload, size_t cap,
    const slc_mysql_greeting_t *g)
{
    slc_mysql_wr_t  w = { payload, payload + cap, 0 };
    uint32_t        caps = g->capabilities;
    int             plugin_auth = (caps & SLC_CLIENT_PLUGIN_AUTH) != 0;

    slc_mysql_wr_le(&w, g->protocol, 1);
    slc_mysql_wr_nulstr(&w, g->server_version,
                        strnlen(g->server_version, sizeof(g->server_version)));
    slc_mysql_wr_le(&w, g->thread_id, 4);
    slc_mysql_wr_bytes(&w, g->scramble, SLC_MYSQL_SCRAMBLE1_LEN);
    slc_mysql_wr_zero(&w, 1);
    slc_mysql_wr_le(&w, caps & 0xffff, 2);
    slc_mysql_wr_le(&w, g->charset, 1);
    slc_mysql_wr_le(&w, g->status, 2);
    slc_mysql_wr_le(&w, caps >> 16, 2);
    slc_mysql_wr_le(&w, plugin_auth ? SLC_MYSQL_SCRAMBLE_LEN + 1 : 0, 1);
    slc_mysql_wr_zero(&w, SLC_MYSQL_RESERVED_LEN - 4);
    slc_mysql_wr_le(&w, (caps & SLC_CLIENT_LONG_PASSWORD)
                        ? 0 : g->mariadb_caps, 4);
    if (caps & SLC_CLIENT_SECURE_CONNECTION) {
        slc_mysql_wr_bytes(&w, g->scramble + SLC_MYSQL_SCRAMBLE1_LEN,
                           SLC_MYSQL_SCRAMBLE2_LEN);
        slc_mysql_wr_zero(&w, 1);
    }
    if (plugin_auth) {
        slc_mysql_wr_nulstr(&w, g->auth_plugin,
                            strnlen(g->auth_plugin, sizeof(g->auth_plugin)));
    }
    return slc_mysql_wr_done(&w, payload);
}


/* --- HandshakeResponse41 ---------------------------------------------- */

static int
slc_mysql_hsresp_fixed(slc_mysql_rd_t *rd, slc_mysql_hsresp_t *r,
    const char **err)
{
    const uint8_t  *f;
    size_t          len = (size_t) (rd->end - rd->p);

    if (len == SLC_MYSQL_HSRESP_FIXED_LEN) {
        *err = "SSLRequest instead of a handshake response";
        return SLC_ERROR;
    }
    f = slc_mysql_rd_take(rd, SLC_MYSQL_HSRESP_FIXED_LEN);
    if (f == NULL) {
        *err = "handshake response truncated";
        return SLC_ERROR;
    }
    r->capabilities = (uint32_t) slc_mysql_le_get(f, 4);
    if (!(r->capabilities & SLC_CLIENT_PROTOCOL_41)) {
        *err = "pre-4.1 handshake response";
        return SLC_ERROR;
    }
    r->max_packet = (uint32_t) slc_mysql_le_get(f + 4, 4);
    r->charset = f[8];
    if (!(r->capabilities & SLC_CLIENT_LONG_PASSWORD)) {
        r->mariadb_caps = slc_mysql_le_get(f + 9 + SLC_MYSQL_FILLER_LEN - 4,
                                           4);
    }
    return SLC_OK;
}

/* lenenc, 1-byte length or NUL-terminated, by the capabilities. */
static int
slc_mysql_hsresp_auth(slc_mysql_rd_t *rd, slc_mysql_hsresp_t *r,
    const char **err)
{
    const uint8_t  *s;
    const char     *cs;
    uint64_t        n;
    size_t          hl;

    if (r->capabilities & SLC_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA) {
        hl = slc_mysql_lenenc_str_get(rd->p, (size_t) (rd->end - rd->p),
                                      &s, &n);
        if (hl == 0) {
            goto truncated;
        }
        rd->p += hl;
    } else if (r->capabilities & SLC_CLIENT_SECURE_CONNECTION) {
        if (rd->p == rd->end) {
            goto truncated;
        }
        n = *rd->p++;
        s = slc_mysql_rd_take(rd, (size_t) n);
        if (s == NULL) {
            goto truncated;
        }
    } else {
        if (slc_mysql_rd_nulstr(rd, &cs, &hl) != SLC_OK) {
            goto truncated;
        }
        s = (const uint8_t *) cs;
        n = hl;
    }
    r->auth = s;
    r->auth_len = (size_t) n;
    return SLC_OK;

truncated:
    *err = "handshake response auth data truncated";
    return SLC_ERROR;
}

/* The key/value block behind its lenenc total length; may be absent. */
static int
slc_mysql_hsresp_attrs(slc_mysql_rd_t *rd, slc_mysql_hsresp_t *r,
    const char **err)
{
    size_t    avail = (size_t) (rd->end - rd->p), hl;
    uint64_t  n;

    if (avail == 0) {
        return SLC_OK;
    }
    hl = slc_mysql_lenenc_int_get(rd->p, avail, &n);
    if (hl == 0 || n > avail - hl) {
        *err = "handshake response connect attributes truncated";
        return SLC_ERROR;
    }
    r->attrs = rd->p + hl;
    r->attrs_len = (size_t) n;
    rd->p += hl + (size_t) n;
    return SLC_OK;
}

/* Database, plugin name and connect attributes, each by its capability. */
static int
slc_mysql_hsresp_optional(slc_mysql_rd_t *rd, slc_mysql_hsresp_t *r,
    const char **err)
{
    uint32_t  caps = r->capabilities;

    if ((caps & SLC_CLIENT_CONNECT_WITH_DB)
        && slc_mysql_rd_nulstr(rd, &r->db, &r->db_len) != SLC_OK)
    {
        *err = "handshake response database not NUL-terminated";
        return SLC_ERROR;
    }
    /*
     * A client may set PLUGIN_AUTH and send no name; the server then
     * assumes its default plugin, and we leave the name NULL.
     */
    if ((caps & SLC_CLIENT_PLUGIN_AUTH) && rd->p < rd->end
        && slc_mysql_rd_nulstr(rd, &r->plugin, &r->plugin_len) != SLC_OK)
    {
        *err = "handshake response plugin name not NUL-terminated";
        return SLC_ERROR;
    }
    if (caps & SLC_CLIENT_CONNECT_ATTRS) {
        return slc_mysql_hsresp_attrs(rd, r, err);
    }
    return SLC_OK;
}

/* Bytes after the attributes (MySQL 8's zstd level) are ignored. */
int
slc_mysql_hsresp_parse(const uint8_t *payload, size_t len,
    slc_mysql_hsresp_t *r, const char **err)
{
    slc_mysql_rd_t  rd = { payload, payload + len };

    memset(r, 0, sizeof(*r));
    if (slc_mysql_hsresp_fixed(&rd, r, err) != SLC_OK) {
        return SLC_ERROR;
    }
    if (slc_mysql_rd_nulstr(&rd, &r->user, &r->user_len) != SLC_OK) {
        *err = "handshake response user name not NUL-terminated";
        return SLC_ERROR;
    }
    if (slc_mysql_hsresp_auth(&rd, r, err) != SLC_OK) {
        return SLC_ERROR;
    }
    return slc_mysql_hsresp_optional(&rd, r, err);
}

static void
slc_mysql_hsresp_build_auth(slc_mysql_wr_t *w, const slc_mysql_hsresp_t *r)
{
    if (r->capabilities & SLC_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA) {
        slc_mysql_wr_lenenc(w, r->auth_len);
        slc_mysql_wr_bytes(w, r->auth, r->auth_len);
    } else if (r->capabilities & SLC_CLIENT_SECURE_CONNECTION) {
        if (r->auth_len > 0xff) {
            w->full = 1;
            return;
        }
        slc_mysql_wr_le(w, (uint32_t) r->auth_len, 1);
        slc_mysql_wr_bytes(w, r->auth, r->auth_len);
    } else {
        slc_mysql_wr_nulstr(w, r->auth, r->auth_len);
    }
}

/*
 * Absent optional fields are written empty when their capability is set.
 * Returns 0 also when a field cannot be encoded (a NUL inside a
 * NUL-terminated field, auth data over 255 bytes without LENENC).
 */
size_t
slc_mysql_hsresp_build(uint8_t *payload, size_t cap,
    const slc_mysql_hsresp_t *r)
{
    slc_mysql_wr_t  w = { payload, payload + cap, 0 };
    uint32_t        caps = r->capabilities;

    slc_mysql_wr_le(&w, caps, 4);
    slc_mysql_wr_le(&w, r->max_packet, 4);
    slc_mysql_wr_le(&w, r->charset, 1);
    slc_mysql_wr_zero(&w, SLC_MYSQL_FILLER_LEN - 4);
    slc_mysql_wr_le(&w, (caps & SLC_CLIENT_LONG_PASSWORD)
                        ? 0 : r->mariadb_caps, 4);
    slc_mysql_wr_nulstr(&w, r->user, r->user_len);
    slc_mysql_hsresp_build_auth(&w, r);
    if (caps & SLC_CLIENT_CONNECT_WITH_DB) {
        slc_mysql_wr_nulstr(&w, r->db, r->db != NULL ? r->db_len : 0);
    }
    if (caps & SLC_CLIENT_PLUGIN_AUTH) {
        slc_mysql_wr_nulstr(&w, r->plugin,
                            r->plugin != NULL ? r->plugin_len : 0);
    }
    if (caps & SLC_CLIENT_CONNECT_ATTRS) {
        slc_mysql_wr_lenenc(&w, r->attrs != NULL ? r->attrs_len : 0);
        slc_mysql_wr_bytes(&w, r->attrs, r->attrs != NULL ? r->attrs_len : 0);
    }
    return slc_mysql_wr_done(&w, payload);
}

/*
 * MariaDB's numbering of the collations above 255 (include/m_ctype.h):
 * a NO PAD collation is its PAD one's id + 0x400; the second pages of
 * utf8mb3 and utf8mb4 start at 0x240 and 0x260, 32 ids each; the UCA 14.0
 * collations are 0x800 to 0xfff, their character set in bits 8 to 10
 * (0 utf8mb3, 1 utf8mb4).  MySQL 8's (256 to 323) are all utf8mb4.
 */
#define SLC_MYSQL_NOPAD_FIRST         0x400
#define SLC_MYSQL_NOPAD_END           0x500
#define SLC_MYSQL_PAGE2_UTF8MB3       0x240
#define SLC_MYSQL_PAGE2_UTF8MB4       0x260
#define SLC_MYSQL_PAGE2_LEN           32
#define SLC_MYSQL_UCA1400_FIRST       0x800
#define SLC_MYSQL_UCA1400_END         0x1000
#define SLC_MYSQL_UTF8MB3_GENERAL_CI  33
#define SLC_MYSQL_UTF8MB4_GENERAL_CI  45

uint8_t
slc_mysql_hsresp_collation(uint16_t id)
{
    if (id <= 0xff) {
        return (uint8_t) id;
    }
    if (id >= SLC_MYSQL_NOPAD_FIRST && id < SLC_MYSQL_NOPAD_END) {
        return (uint8_t) (id - SLC_MYSQL_NOPAD_FIRST);
    }
    if ((id >= SLC_MYSQL_PAGE2_UTF8MB3
         && id < SLC_MYSQL_PAGE2_UTF8MB3 + SLC_MYSQL_PAGE2_LEN)
        || (id >= SLC_MYSQL_UCA1400_FIRST && id < SLC_MYSQL_UCA1400_END
            && ((id >> 8) & 0x07) == 0))
    {
        return SLC_MYSQL_UTF8MB3_GENERAL_CI;
    }
    return SLC_MYSQL_UTF8MB4_GENERAL_CI;
}


/* --- COM_CHANGE_USER --------------------------------------------------- */

/* The same auth data encodings as the response, less LENENC_CLIENT_DATA,
   which COM_CHANGE_USER never uses. */
static uint32_t
slc_mysql_change_user_caps(uint32_t caps)
{
    return caps & ~SLC_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;
}

int
slc_mysql_change_user_parse(const uint8_t *payload, size_t len,
    uint32_t caps, slc_mysql_hsresp_t *r, uint16_t *collation,
    const char **err)
{
    slc_mysql_rd_t  rd = { payload, payload + len };
    const uint8_t  *c;

    memset(r, 0, sizeof(*r));
    *collation = 0;
    r->capabilities = slc_mysql_change_user_caps(caps);
    if (slc_mysql_rd_take(&rd, 1) == NULL
        || slc_mysql_rd_nulstr(&rd, &r->user, &r->user_len) != SLC_OK)
    {
        *err = "COM_CHANGE_USER user name not NUL-terminated";
        return SLC_ERROR;
    }
    if (slc_mysql_hsresp_auth(&rd, r, err) != SLC_OK) {
        return SLC_ERROR;
    }
    if (slc_mysql_rd_nulstr(&rd, &r->db, &r->db_len) != SLC_OK) {
        *err = "COM_CHANGE_USER database not NUL-terminated";
        return SLC_ERROR;
    }
    if (rd.p == rd.end) {
        return SLC_OK;                  /* an old client: nothing more */
    }
    if ((c = slc_mysql_rd_take(&rd, 2)) == NULL) {
        *err = "COM_CHANGE_USER collation truncated";
        return SLC_ERROR;
    }
    *collation = (uint16_t) slc_mysql_le_get(c, 2);
    r->capabilities &= ~SLC_CLIENT_CONNECT_WITH_DB;   /* read already */
    return slc_mysql_hsresp_optional(&rd, r, err);
}

size_t
slc_mysql_change_user_build(uint8_t *payload, size_t cap,
    const slc_mysql_hsresp_t *r, uint16_t collation)
{
    slc_mysql_wr_t      w = { payload, payload + cap, 0 };
    slc_mysql_hsresp_t  a = *r;

    a.capabilities = slc_mysql_change_user_caps(r->capabilities);
    slc_mysql_wr_le(&w, 0x11, 1);
    slc_mysql_wr_nulstr(&w, r->user, r->user_len);
    slc_mysql_hsresp_build_auth(&w, &a);
    slc_mysql_wr_nulstr(&w, r->db, r->db != NULL ? r->db_len : 0);
    slc_mysql_wr_le(&w, collation, 2);
    if (a.capabilities & SLC_CLIENT_PLUGIN_AUTH) {
        slc_mysql_wr_nulstr(&w, r->plugin,
                            r->plugin != NULL ? r->plugin_len : 0);
    }
    if (a.capabilities & SLC_CLIENT_CONNECT_ATTRS) {
        slc_mysql_wr_lenenc(&w, r->attrs != NULL ? r->attrs_len : 0);
        slc_mysql_wr_bytes(&w, r->attrs, r->attrs != NULL ? r->attrs_len : 0);
    }
    return slc_mysql_wr_done(&w, payload);
}
