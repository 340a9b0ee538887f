#ifndef SLC_ADMIN_SERVE_H
#define SLC_ADMIN_SERVE_H

/*
 * The admin process (slc_admin_sock.h): its unix sockets (bound with
 * their mode from the start: umask, then chown and chmod), at most
 * SLC_ADMIN_CONNS connections, each closed after SLC_ADMIN_IDLE_MS
 * without a line; a line is at most SLC_ADMIN_LINE bytes (a longer one
 * is answered with an error and the connection closed), an answer at
 * most 4 MiB.  The peer's uid (SO_PEERCRED) goes with every command into
 * the log.
 */

#include "slc_core.h"
#include "slc_cycle.h"
#include "slc_admin_sock.h"

#define SLC_ADMIN_CONNS     16
#define SLC_ADMIN_IDLE_MS   60000
#define SLC_ADMIN_LINE      1024

int  slc_admin_serve(const slc_cycle_t *cycle, const slc_admin_conf_t *conf);
/* QUIT: stop listening; connections finish the answer they are writing. */
void slc_admin_serve_quit(void);
int  slc_admin_serve_busy(void);

#endif /* SLC_ADMIN_SERVE_H */
