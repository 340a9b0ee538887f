#ifndef SLC_MASTER_H
#define SLC_MASTER_H

#include "slc_cycle.h"

/*
 * The master process: owns the running cycle (config, listening sockets,
 * shared memory), forks and supervises workers and the processes of the
 * modules' roles (slc_role.h), and turns signals into reloads and
 * shutdowns.  Never serves a client itself.
 */

/*
 * Never returns.  ready_fd (-1: none) is the daemonizing parent's pipe:
 * a byte goes there, and it is closed, once the pid file is written, so
 * that the parent exits 0 only then (systemd's Type=forking reads the pid
 * file as the parent exits); a master that dies first closes it unwritten
 * and the parent exits 1.
 */
void slc_master_run(slc_cycle_t *cycle, int argc, char **argv,
    int ready_fd);
/* master_process off: serve in this process; never returns. */
void slc_single_run(slc_cycle_t *cycle, int ready_fd);

/*
 * Take back what a reaped child held in shared memory, before its process
 * index goes to another child: the locks of the cycle's zones that `pid`
 * holds, then every module's reap_process hook for `proc`.
 */
void slc_master_reap_process(slc_cycle_t *cycle, pid_t pid, unsigned proc);

#endif /* SLC_MASTER_H */
