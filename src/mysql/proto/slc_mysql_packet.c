/*
 * Packet framing: a 4-byte header (3-byte little-endian payload length and a
 * sequence id) in front of every payload, and messages of 16 MiB or more
 * split into several packets.
 */

#include "slc_core.h"
#include "slc_mysql_codec.h"

/* The caller guarantees payload_len <= SLC_MYSQL_MAX_PAYLOAD. */
void
slc_mysql_hdr_write(uint8_t *p, uint32_t payload_len, uint8_t seq)
{
    p = slc_mysql_le_put(p, payload_len, 3);
    p[0] = seq;
}

void
slc_mysql_hdr_read(const uint8_t *p, uint32_t *payload_len, uint8_t *seq)
{
    *payload_len = (uint32_t) slc_mysql_le_get(p, 3);
    *seq = p[3];
}

int
slc_mysql_packet_peek(const uint8_t *p, size_t len, uint32_t *payload_len,
    uint8_t *seq)
{
    uint32_t  plen;
    uint8_t   s;

    if (len < SLC_MYSQL_HDR_LEN) {
        return 0;
    }
    slc_mysql_hdr_read(p, &plen, &s);
    if (len - SLC_MYSQL_HDR_LEN < plen) {
        return 0;
    }
    *payload_len = plen;
    *seq = s;
    return 1;
}

/*
 * Each packet but the last carries exactly 0xffffff bytes, so the loop runs
 * at most len / 16 MiB + 1 times however the input is made.
 */
int
slc_mysql_message_span(const uint8_t *p, size_t len, size_t *wire_len,
    uint64_t *payload_len, unsigned *npackets)
{
    size_t    off = 0;
    uint64_t  total = 0;
    unsigned  n = 0;
    uint32_t  plen;
    uint8_t   seq;

    for ( ;; ) {
        if (!slc_mysql_packet_peek(p + off, len - off, &plen, &seq)) {
            return 0;
        }
        off += SLC_MYSQL_HDR_LEN + plen;
        total += plen;
        n++;
        if (plen < SLC_MYSQL_MAX_PAYLOAD) {
            break;
        }
    }

    *wire_len = off;
    *payload_len = total;
    *npackets = n;
    return 1;
}
