/*
 * The proxy's own answers to the client (a filter, a router; interface in
 * slc_mysql_filter.h): one packet (slc_reply), room in the output buffer
 * to write into, and result sets in the form the client negotiated (a
 * longer answer streams: slc_cmd_stream).  Three capabilities change the
 * form: CLIENT_DEPRECATE_EOF (no EOF after the column definitions, an OK
 * with a 0xfe header at the end), and MariaDB's CACHE_METADATA (a
 * "metadata follows" byte after the column count) and EXTENDED_TYPE_INFO
 * (an extended-info string in each column definition).  A client that
 * negotiated one and did not get it calls the result malformed.
 */

#include "slc_core.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_session.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_cmd.h"
#include "slc_mysql_filter.h"
#include "slc_mysql_proto.h"

#define SLC_REPLY_MAX_COLUMNS  64
#define SLC_REPLY_NAME_MAX     64

/* The MariaDB capabilities negotiated on the session's connection. */
static uint32_t
slc_reply_mariadb_caps(const slc_session_t *s)
{
    return s->backend != NULL ? s->backend->track.mariadb_caps : 0;
}

/* One column definition: a utf8mb4 string column named `name`. */
static size_t
slc_reply_coldef(const slc_session_t *s, uint8_t *p, const char *name)
{
    size_t   n = strnlen(name, SLC_REPLY_NAME_MAX);
    uint8_t *q = p;

    *q++ = 3;
    memcpy(q, "def", 3);                /* catalog */
    q += 3;
    *q++ = 0;                           /* schema */
    *q++ = 0;                           /* table alias */
    *q++ = 0;                           /* table */
    *q++ = (uint8_t) n;                 /* column alias */
    memcpy(q, name, n);
    q += n;
    *q++ = 0;                           /* column */
    if (slc_reply_mariadb_caps(s) & SLC_MARIADB_CLIENT_EXTENDED_TYPE_INFO) {
        *q++ = 0;                       /* no extended type information */
    }
    *q++ = 0x0c;                        /* length of the fixed fields */
    slc_mysql_le_put(q, 45, 2);         /* utf8mb4_general_ci */
    slc_mysql_le_put(q + 2, 1024, 4);   /* column length */
    q[6] = SLC_MYSQL_TYPE_VAR_STRING;
    slc_mysql_le_put(q + 7, 0, 2);      /* flags */
    q[9] = 0;                           /* decimals */
    slc_mysql_le_put(q + 10, 0, 2);
    return (size_t) (q + 12 - p);
}

int
slc_reply(slc_session_t *s, const uint8_t *payload, size_t len)
{
    if (len + SLC_MYSQL_HDR_LEN > slc_buf_size()) {
        return SLC_ERROR;
    }
    if (s->out != NULL && slc_buf_room(s->out) < len + SLC_MYSQL_HDR_LEN) {
        slc_buf_compact(s->out);
        if (slc_buf_room(s->out) < len + SLC_MYSQL_HDR_LEN) {
            return SLC_AGAIN;
        }
    }
    if (slc_packet_append(&s->out, payload, len, s->seq) != SLC_OK) {
        return SLC_ERROR;               /* no memory */
    }
    s->seq++;
    return SLC_OK;
}

uint8_t *
slc_reply_space(slc_session_t *s, size_t *room)
{
    if (s->out == NULL) {
        if ((s->out = slc_buf_get()) == NULL) {
            return NULL;
        }
    } else {
        slc_buf_compact(s->out);
    }
    *room = slc_buf_room(s->out);
    return s->out->last;
}

void
slc_reply_commit(slc_session_t *s, size_t n)
{
    s->out->last += n;
}

/* Queue the n payloads that follow each other at p (lengths in `lens`),
   all of them if they fit in the output buffer now, else none. */
static int
slc_reply_all(slc_session_t *s, const uint8_t *p, const size_t *lens,
    unsigned n)
{
    size_t total = 0;

    for (unsigned i = 0; i < n; i++) {
        total += lens[i] + SLC_MYSQL_HDR_LEN;
    }
    if (total > slc_buf_size()) {
        return SLC_ERROR;
    }
    if (s->out != NULL && slc_buf_room(s->out) < total) {
        slc_buf_compact(s->out);
        if (slc_buf_room(s->out) < total) {
            return SLC_AGAIN;
        }
    }
    for (unsigned i = 0; i < n; i++) {
        if (slc_reply(s, p, lens[i]) != SLC_OK) {
            return SLC_ERROR;
        }
        p += lens[i];
    }
    return SLC_OK;
}

static size_t
slc_reply_eof(const slc_session_t *s, uint8_t *p)
{
    uint16_t status = slc_cmd_status(s);

    if (slc_cmd_client_caps(s) & SLC_CLIENT_DEPRECATE_EOF) {
        size_t n = slc_mysql_ok_build(p, 16, 0, 0, status, 0);

        p[0] = SLC_MYSQL_EOF;           /* an OK with an EOF's header */
        return n;
    }
    p[0] = SLC_MYSQL_EOF;
    slc_mysql_le_put(p + 1, 0, 2);      /* warnings */
    slc_mysql_le_put(p + 3, status, 2);
    return 5;
}

int
slc_reply_columns(slc_session_t *s, const char *const *names,
    unsigned n)
{
    uint8_t  buf[SLC_REPLY_MAX_COLUMNS * (SLC_REPLY_NAME_MAX + 32) + 32];
    size_t   lens[SLC_REPLY_MAX_COLUMNS + 2];
    uint8_t *p = buf;
    unsigned k = 0;

    if (n == 0 || n > SLC_REPLY_MAX_COLUMNS) {
        return SLC_ERROR;
    }
    p = slc_mysql_lenenc_int_put(p, n);
    if (slc_reply_mariadb_caps(s) & SLC_MARIADB_CLIENT_CACHE_METADATA) {
        *p++ = 1;                       /* the metadata follows */
    }
    lens[k++] = (size_t) (p - buf);
    for (unsigned i = 0; i < n; i++) {
        lens[k] = slc_reply_coldef(s, p, names[i]);
        p += lens[k++];
    }
    if (!(slc_cmd_client_caps(s) & SLC_CLIENT_DEPRECATE_EOF)) {
        lens[k] = slc_reply_eof(s, p);
        p += lens[k++];
    }
    return slc_reply_all(s, buf, lens, k);
}

int
slc_reply_row(slc_session_t *s, const char *const *values,
    const size_t *vlens, unsigned n)
{
    size_t   need = 0;
    uint8_t *row, *p;
    int      rc;

    for (unsigned i = 0; i < n; i++) {
        need += 9 + (values[i] != NULL ? vlens[i] : 0);
    }
    if (need + SLC_MYSQL_HDR_LEN > slc_buf_size()) {
        return SLC_ERROR;
    }
    if ((row = malloc(need)) == NULL) {
        return SLC_ERROR;
    }
    p = row;
    for (unsigned i = 0; i < n; i++) {
        if (values[i] == NULL) {
            *p++ = 0xfb;                /* NULL */
            continue;
        }
        p = slc_mysql_lenenc_int_put(p, vlens[i]);
        memcpy(p, values[i], vlens[i]);
        p += vlens[i];
    }
    rc = slc_reply(s, row, (size_t) (p - row));
    free(row);
    return rc;
}

int
slc_reply_end(slc_session_t *s)
{
    uint8_t p[16];

    return slc_reply(s, p, slc_reply_eof(s, p));
}

int
slc_reply_ok(slc_session_t *s, uint64_t affected)
{
    uint8_t p[32];

    return slc_reply(s, p, slc_mysql_ok_build(p, sizeof(p), affected, 0,
                         slc_cmd_status(s), 0));
}

int
slc_reply_err(slc_session_t *s, uint16_t code, const char *state,
    const char *msg)
{
    uint8_t p[600];

    return slc_reply(s, p, slc_mysql_err_build(p, sizeof(p), code,
                         state, msg));
}
