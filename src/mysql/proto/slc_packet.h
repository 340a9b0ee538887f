#ifndef SLC_PACKET_H
#define SLC_PACKET_H

#include "slc_core.h"
#include "slc_buf.h"
#include "slc_event.h"

/*
 * Whole MySQL packets over a connection (slc_packet.c), for the
 * connection phase and the proxy's own exchanges: a session's client,
 * its backends' logins, COM_CHANGE_USER, KILL's side connection.  The
 * data phase frames nothing here: the command layer and the byte pump
 * move bytes.
 */

/*
 * Append a packet (4-byte header with `seq`, then the payload) to *bp,
 * taking a buffer when *bp is NULL.  SLC_ERROR when it does not fit in one
 * buffer (or no memory): *bp is then unchanged in content.
 */
int  slc_packet_append(slc_buf_t **bp, const void *payload, size_t len,
    uint8_t seq);
/*
 * Read one whole packet from `c` into *bufp (taken on demand).  SLC_OK with
 * payload/len/seq set, SLC_AGAIN if incomplete, SLC_ERROR with *why.
 * The caller consumes it with slc_packet_consume().
 */
int  slc_packet_read(slc_conn_t *c, slc_buf_t **bufp, uint8_t **payload,
    uint32_t *len, uint8_t *seq, const char **why);
void slc_packet_consume(slc_buf_t **bufp, uint32_t len);

/*
 * What to do with one whole packet that slc_packet_loop() read: return
 * SLC_OK to have it consumed and read on, SLC_DONE to have it consumed and
 * stop, SLC_ERROR to stop at once without touching the buffer (the handler
 * closed the connection, or handed it over, or failed the session).
 */
typedef int (*slc_packet_handler_pt)(void *data, uint8_t *p, uint32_t len,
    uint8_t seq);
/*
 * The one packet loop of the connection phase (auth local's backend login,
 * passthrough's relay both ways, COM_CHANGE_USER, KILL's side connection):
 * read whole packets from `c` into *bufp and hand each to `h`.  Returns
 * SLC_AGAIN when no whole packet is left, SLC_DONE or SLC_ERROR as the
 * handler returned them (*why NULL), or SLC_ERROR with *why set when the
 * read failed: the caller closes.
 */
int  slc_packet_loop(slc_conn_t *c, slc_buf_t **bufp, slc_packet_handler_pt h,
    void *data, const char **why);

#endif /* SLC_PACKET_H */
