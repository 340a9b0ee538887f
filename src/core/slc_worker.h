#ifndef SLC_WORKER_H
#define SLC_WORKER_H

#include "slc_core.h"
#include "slc_cycle.h"

/*
 * A worker process: one epoll loop serving the sessions it accepts on its
 * own slot's listening sockets.  QUIT stops accepting; sessions then run
 * on, and once worker_shutdown_timeout has passed each is closed as soon as
 * it is idle and outside a transaction.  TERM exits at once.
 */

extern unsigned      slc_worker_slot;
extern slc_cycle_t  *slc_worker_cycle;

/* Never returns. */
void slc_worker_run(slc_cycle_t *cycle, unsigned slot);
/* Out of descriptors: stop accepting for a second. */
void slc_worker_accept_pause(void);

#endif /* SLC_WORKER_H */
