#ifndef SLC_MYSQL_INTERCEPT_H
#define SLC_MYSQL_INTERCEPT_H

#include "slc_core.h"

/*
 * Commands a byte-forwarding session may not pass on as they are:
 *   - KILL [QUERY|CONNECTION] <id> and COM_PROCESS_KILL name the id the
 *     client saw in its greeting, which is the proxy's (slc_mysql_kill.c);
 *   - COM_CHANGE_USER under auth local must be checked against the
 *     proxy's users before the backend hears of it
 *     (slc_mysql_change_user.c).
 *
 * The scanner follows the packet framing of what the client sends and
 * tells the forwarder how many bytes may go on before the next such
 * command.  It stops
 *   - at a command to look at, whose whole packet is in the buffer
 *     (SLC_SCAN_CMD; the packet starts at the returned offset), or
 *   - before bytes it cannot judge yet: a partial header, or the start of
 *     a command that may be one of those and is not complete
 *     (SLC_SCAN_MORE); those bytes are held until more arrive.
 * A watched command longer than `max_held` bytes is not held: a KILL
 * that long is passed on as it is (an id of the proxy's range names no
 * server connection, so the server answers "Unknown thread id"), and a
 * COM_CHANGE_USER that long is stopped at (SLC_SCAN_CMD) so the caller
 * refuses it.  LOCAL INFILE data and the continuation of a 16 MiB packet
 * are never commands.
 */

#define SLC_SCAN_ALL   0        /* everything may go on */
#define SLC_SCAN_MORE  1        /* the rest is held until more arrives */
#define SLC_SCAN_CMD   2        /* a command to look at at the offset */

#define SLC_WATCH_KILL         0x1
#define SLC_WATCH_CHANGE_USER  0x2
/* The command layer (slc_mysql_cmd.c): stop at every command, once its
   whole packet or max_held bytes of it are in the buffer; `big` says
   which (the rest then streams as released bytes). */
#define SLC_WATCH_ALL          0x4

typedef struct {
    uint32_t  left;     /* payload bytes of the current packet to pass */
    uint8_t   more;     /* it is 0xffffff long: the next continues it */
    uint8_t   big;      /* SLC_SCAN_CMD on a packet over max_held */
} slc_mysql_scan_t;

/*
 * Scan p[0..len) from where the last call stopped.  `infile` is whether
 * the client is sending LOCAL INFILE data at p (the tracker knows).
 * Returns the bytes that may go on and sets *stop.
 */
size_t slc_mysql_scan_client(slc_mysql_scan_t *sc, int infile, unsigned watch,
    const uint8_t *p, size_t len, size_t max_held, int *stop);
/*
 * Is the command whose payload starts pl[0..avail) one of `watch`?  0: no;
 * 1: cannot tell before more of it arrives; 2: yes.
 */
int    slc_mysql_scan_watched(unsigned watch, const uint8_t *pl, size_t avail);
/* The held command at a stop was passed on whole (len bytes, header
   included): carry on after it. */
void   slc_mysql_scan_skip(slc_mysql_scan_t *sc);
/* The first `taken` bytes (header included) of the held command, whose
   first packet's payload is plen long, went on: release the rest of it,
   and its continuation packets, as they arrive. */
void   slc_mysql_scan_pass(slc_mysql_scan_t *sc, uint32_t plen, size_t taken);

/*
 * Could a COM_QUERY whose text starts with q[0..n) be a KILL?  0: no;
 * 1: cannot tell yet; 2: it starts with the keyword KILL (after blanks and
 * comments).
 */
int    slc_mysql_kill_maybe(const uint8_t *q, size_t n);

/* KILL [HARD|SOFT] [CONNECTION|QUERY] <id> */
typedef struct {
    uint64_t     id;
    int          query;         /* QUERY: the statement only */
    const char  *mode;          /* "", "HARD " or "SOFT " */
} slc_mysql_kill_t;

/* SLC_OK if q[0..n) is exactly such a statement (blanks, comments and one
   trailing ';' allowed, executable comments not), else SLC_ERROR: pass it
   on as it is. */
int    slc_mysql_kill_parse(const uint8_t *q, size_t n, slc_mysql_kill_t *k);

#endif /* SLC_MYSQL_INTERCEPT_H */
