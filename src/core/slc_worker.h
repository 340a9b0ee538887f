#ifndef SLC_WORKER_H
#define SLC_WORKER_H

#include "slc_core.h"
#include "slc_cycle.h"

/*
 * A worker process: one epoll loop serving the sessions it accepts on its
 * own slot's listening sockets, and those an old worker hands over
 * (slc_channel.h).  QUIT stops accepting; on a reload the modules hand
 * their sessions over to the new worker as each comes to rest, otherwise
 * sessions run on, and once worker_shutdown_timeout has passed each is
 * closed as soon as it is idle and outside a transaction.  TERM exits at
 * once.
 */

/*
 * A process index: unique among the live children of the master (old
 * generations still draining included), reused only after the master has
 * reaped the child that held it and called every module's reap_process
 * hook.  Shared state a worker adds to (a counter, a registry entry) is
 * recorded under this index, so the master can take back what a dead
 * worker left behind.  Below SLC_PROC_MAX.
 */
#define SLC_PROC_MAX  4096

extern unsigned      slc_worker_slot;
extern unsigned      slc_worker_proc;
extern slc_cycle_t  *slc_worker_cycle;

/*
 * The start of every child of the master (a worker, a role's process):
 * this process's pid and index, the signal handlers, slc_loop waiting
 * with the signals unblocked.  Exits with code 2 if it cannot.
 */
void slc_worker_process_init(slc_cycle_t *cycle, unsigned proc);

/* Never returns. */
void slc_worker_run(slc_cycle_t *cycle, unsigned slot, unsigned proc);

#endif /* SLC_WORKER_H */
