#ifndef SLC_ROLE_H
#define SLC_ROLE_H

#include "slc_core.h"
#include "slc_module.h"

/*
 * A process role: helper processes of the master besides the slot workers
 * (the monitor of readwritesplit will be one).  A module declares a role
 * while the configuration is parsed or from its init_conf hook
 * (slc_cycle_add_role); the master forks `count` processes of it after
 * the workers, each titled "NAME process" and given a process index
 * (slc_worker_proc) like a worker, so reap_process covers it.
 *
 * The core runs the process: signals, the event loop (slc_loop), the
 * modules' init_process/exit_process hooks with the role; the role's init
 * arms its timers and connections on slc_loop.  Never a listening socket:
 * a role's process closes them all.
 *
 * Signals: TERM exits at once (after the handler that is running: the
 * loop looks at signals between steps).  QUIT (a reload, or the master
 * shutting down) calls quit, then the process exits as soon as busy
 * returns 0 (at once without busy): the role decides whether to finish
 * its current step.
 *
 * Respawn: a process that dies or exits while its generation is running
 * is started again in its place, at most once a second per place, so a
 * role that crashes does not fork in a loop; one that exits with code 2
 * (it cannot initialise: init returned SLC_ERROR, or it called exit(2))
 * is not.  On reload the new cycle's roles start and the old ones get
 * QUIT; with `master_process off` no role is started.
 */

struct slc_role_s {
    /* short: the title is "NAME process"; static or in the cycle's pool,
       like data (the copy the cycle keeps points to the same) */
    const char          *name;
    unsigned             count;     /* processes, >= 1 */
    const slc_module_t  *module;    /* the module that declared it */
    void                *data;      /* the module's, e.g. its conf */

    /* Required.  In the new process, after init_process: `n` is the
       place, 0 to count - 1.  SLC_ERROR: the process exits with code 2. */
    int                (*init)(slc_cycle_t *cycle, slc_role_t *role,
                               unsigned n);
    void               (*quit)(slc_role_t *role);           /* optional */
    /* After QUIT: non-zero while the current step is not done. */
    int                (*busy)(slc_role_t *role);           /* optional */

    slc_role_t          *next;      /* the cycle's list */
};

/* The role of this process and its place; NULL in a worker. */
extern slc_role_t  *slc_role;
extern unsigned     slc_role_n;

/* In a role's process: run it; never returns.  `proc` as for a worker. */
void slc_role_run(slc_cycle_t *cycle, slc_role_t *role, unsigned n,
    unsigned proc);

#endif /* SLC_ROLE_H */
