/*
 * Whole packets over a connection (contract in slc_packet.h): the
 * connection phase's reads and writes, for the session, its backends and
 * the proxy's own exchanges.
 */

#include "slc_core.h"
#include "slc_buf.h"
#include "slc_event.h"
#include "slc_mysql_codec.h"
#include "slc_packet.h"

int
slc_packet_append(slc_buf_t **bp, const void *payload, size_t len,
    uint8_t seq)
{
    if (len > SLC_MYSQL_MAX_PAYLOAD - 1
        || slc_buf_reserve(bp, len + SLC_MYSQL_HDR_LEN) != SLC_OK)
    {
        return SLC_ERROR;
    }
    slc_mysql_hdr_write((*bp)->last, (uint32_t) len, seq);
    if (len > 0) {
        memcpy((*bp)->last + SLC_MYSQL_HDR_LEN, payload, len);
    }
    (*bp)->last += len + SLC_MYSQL_HDR_LEN;
    return SLC_OK;
}

int
slc_packet_read(slc_conn_t *c, slc_buf_t **bufp, uint8_t **payload,
    uint32_t *len, uint8_t *seq, const char **why)
{
    slc_buf_t *b = *bufp;

    if (b == NULL && (b = *bufp = slc_buf_get()) == NULL) {
        *why = "out of memory";
        return SLC_ERROR;
    }
    for ( ;; ) {
        if (slc_mysql_packet_peek(b->pos, slc_buf_len(b), len, seq)) {
            *payload = b->pos + 4;
            return SLC_OK;
        }
        if (slc_buf_len(b) >= 4
            && slc_mysql_le_get(b->pos, 3) + 4
               > slc_buf_size())
        {
            *why = "handshake packet larger than buffer_size";
            return SLC_ERROR;
        }
        if (!c->readable) {
            return SLC_AGAIN;
        }
        if (slc_buf_room(b) == 0) {
            slc_buf_compact(b);
        }
        ssize_t n = slc_conn_read(c, b->last, slc_buf_room(b));
        if (n < 0 || c->eof) {
            *why = n < 0 ? "read error" : "connection closed by peer";
            return SLC_ERROR;
        }
        b->last += n;
    }
}

void
slc_packet_consume(slc_buf_t **bufp, uint32_t len)
{
    slc_buf_t *b = *bufp;

    b->pos += len + 4;
    if (slc_buf_len(b) == 0) {
        slc_buf_put(b);
        *bufp = NULL;
    }
}

int
slc_packet_loop(slc_conn_t *c, slc_buf_t **bufp, slc_packet_handler_pt h,
    void *data, const char **why)
{
    uint8_t   *p, seq;
    uint32_t   len;
    int        rc;

    for ( ;; ) {
        rc = slc_packet_read(c, bufp, &p, &len, &seq, why);
        if (rc != SLC_OK) {
            return rc;
        }
        rc = h(data, p, len, seq);
        if (rc == SLC_ERROR) {
            *why = NULL;
            return SLC_ERROR;
        }
        slc_packet_consume(bufp, len);
        if (rc == SLC_DONE) {
            return SLC_DONE;
        }
    }
}
