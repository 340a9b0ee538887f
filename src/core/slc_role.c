#include "slc_core.h"
#include "slc_channel.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_module.h"
#include "slc_role.h"
#include "slc_signal.h"
#include "slc_worker.h"

/* The process of a role: the core's loop around the role's hooks. */

slc_role_t  *slc_role;
unsigned     slc_role_n;

static int   slc_role_quitting;

static void
slc_role_exit(int code)
{
    slc_module_exit_process(slc_worker_cycle, slc_role);
    slc_log(SLC_LOG_NOTICE, "%s process exiting", slc_role->name);
    slc_loop_done(slc_loop);
    exit(code);
}

static void
slc_role_signals(void)
{
    if (slc_sig_terminate) {
        slc_role_exit(0);
    }
    if (slc_sig_quit && !slc_role_quitting) {
        slc_role_quitting = 1;
        if (slc_role->quit != NULL) {
            slc_role->quit(slc_role);
        }
    }
    if (slc_sig_reopen) {
        slc_sig_reopen = 0;
        slc_log_reopen();
    }
    slc_sig_reload = 0;     /* the master's business */
    slc_sig_child = 0;
}

void
slc_role_run(slc_cycle_t *cycle, slc_role_t *role, unsigned n, unsigned proc)
{
    slc_role = role;
    slc_role_n = n;
    slc_worker_process_init(cycle, proc);
    /* the sockets are the workers': a role holding a copy would keep an
       address that a reload dropped taking connections nobody accepts
       (unix ones are not unlinked: the master owns the paths) */
    slc_listen_close_all(cycle->listens, 0);
    slc_channel_close_all();        /* likewise the workers' channels */
    setproctitle("%s process", role->name);
    slc_module_init_process(cycle, role);
    if (role->init(cycle, role, n) != SLC_OK) {
        slc_log(SLC_LOG_ALERT, "%s process cannot initialise", role->name);
        slc_module_exit_process(cycle, role);
        exit(2);
    }

    for ( ;; ) {
        slc_role_signals();
        if (slc_role_quitting
            && (role->busy == NULL || !role->busy(role)))
        {
            slc_role_exit(0);
        }
        slc_loop_once(slc_loop, -1);
    }
}
