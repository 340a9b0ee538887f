#ifndef SLC_MYSQL_PUMP_H
#define SLC_MYSQL_PUMP_H

#include "slc_core.h"
#include "slc_mysql_session.h"

/*
 * Byte mode (slc_mysql_pump.c): a session whose server block has no
 * filters and whose router does not route per command (readconn) has its
 * bytes moved both ways by the core, without parsing commands.  Each
 * direction holds at most one buffer: when the receiver does not take what
 * was read, the sender is not read any more until it does (backpressure),
 * so memory stays bounded whatever the result size.  The client's bytes
 * are scanned as they go (slc_mysql_intercept.h): a KILL or a
 * COM_CHANGE_USER waits at in->pos until the session is idle and the
 * proxy has dealt with it (slc_mysql_proxycmd.c), as in command mode.  The
 * response tracker follows the framing only, to know when the session is
 * idle and outside a transaction (shutdown, reload).
 */

/* The session is authenticated and its own backend logged in (or it was
   handed over, or the proxy's own command is done): forward. */
void slc_pump_start(slc_session_t *s);

#endif /* SLC_MYSQL_PUMP_H */
