#ifndef SLC_MYSQL_OKSTATE_H
#define SLC_MYSQL_OKSTATE_H

#include "slc_core.h"

/* The longest OK it edits (the tracker keeps no longer one whole). */
#define SLC_MYSQL_MAX_OKSTATE  1024

/*
 * The session state of an OK packet (CLIENT_SESSION_TRACK), edited
 * (slc_mysql_okstate.c).
 */

/*
 * OK payload p[0..len) (0x00 or 0xfe header) without its last_gtid
 * entries (the proxy asked for them, the client did not), into out
 * (room for len bytes): the other entries as they were; no entry left,
 * and the SERVER_SESSION_STATE_CHANGED flag is cleared and the state
 * string goes.  Returns the new length, or 0 when there is nothing to
 * take out or the packet is malformed (then it stays as it is).
 */
size_t slc_mysql_okstate_hide_gtid(const uint8_t *p, size_t len,
    uint8_t *out);

#endif /* SLC_MYSQL_OKSTATE_H */
