#include "slc_core.h"
#include "slc_log.h"
#include "slc_master.h"
#include "slc_signal.h"
#include "slc_worker.h"

#include <sys/wait.h>

typedef struct {
    pid_t     pid;
    unsigned  slot;
    unsigned  proc;         /* process index, see slc_worker.h */
    unsigned  generation;
    int       exiting;      /* told to quit or terminate */
} slc_child_t;

static slc_child_t   slc_children[SLC_PROC_MAX];
static unsigned      slc_nchildren;
/* free process indices, a stack: the lowest come first, so the per-index
   areas of shared memory that are touched stay few */
static unsigned      slc_proc_free[SLC_PROC_MAX];
static unsigned      slc_proc_nfree;
static slc_cycle_t  *slc_master_cycle;
static sigset_t      slc_master_waitmask;
static char          slc_master_title[512];

static void
slc_master_procs_init(void)
{
    for (unsigned i = 0; i < SLC_PROC_MAX; i++) {
        slc_proc_free[i] = SLC_PROC_MAX - 1 - i;
    }
    slc_proc_nfree = SLC_PROC_MAX;
}

static pid_t
slc_master_spawn(slc_cycle_t *cycle, unsigned slot)
{
    pid_t    pid;
    unsigned proc;

    if (slc_proc_nfree == 0) {
        slc_log(SLC_LOG_ALERT, "too many worker processes (%d)",
            SLC_PROC_MAX);
        return -1;
    }
    proc = slc_proc_free[slc_proc_nfree - 1];
    pid = fork();
    if (pid == -1) {
        slc_log_errno(SLC_LOG_ALERT, errno, "fork() failed");
        return -1;
    }
    if (pid == 0) {
        slc_worker_run(cycle, slot, proc);
    }
    slc_proc_nfree--;
    slc_children[slc_nchildren++] = (slc_child_t) {
        .pid = pid, .slot = slot, .proc = proc,
        .generation = cycle->generation,
    };
    slc_log(SLC_LOG_NOTICE, "start worker process %d", (int) pid);
    return pid;
}

static void
slc_master_spawn_all(slc_cycle_t *cycle)
{
    for (int i = 0; i < cycle->worker_processes; i++) {
        (void) slc_master_spawn(cycle, (unsigned) i);
    }
}

static void
slc_master_signal_workers(int signo, int only_old)
{
    for (unsigned i = 0; i < slc_nchildren; i++) {
        slc_child_t *c = &slc_children[i];
        if (only_old && c->generation == slc_master_cycle->generation) {
            continue;
        }
        if (signo == SIGQUIT || signo == SIGTERM) {
            c->exiting = 1;
        }
        if (kill(c->pid, signo) == -1 && errno != ESRCH) {
            slc_log_errno(SLC_LOG_ALERT, errno, "kill(%d, %d) failed",
                (int) c->pid, signo);
        }
    }
}

static void
slc_master_log_exit(pid_t pid, int status)
{
    if (WIFEXITED(status)) {
        slc_log(WEXITSTATUS(status) ? SLC_LOG_ALERT : SLC_LOG_NOTICE,
            "worker process %d exited with code %d", (int) pid,
            WEXITSTATUS(status));
        return;
    }
    int sig = WTERMSIG(status);
    /* killed from outside (an operator, the OOM killer): an error;
       crashed by itself: critical */
    int crash = sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT
                || sig == SIGFPE || sig == SIGILL;
    slc_log(crash ? SLC_LOG_CRIT : SLC_LOG_ERR,
        "worker process %d exited on signal %d%s", (int) pid, sig,
        WCOREDUMP(status) ? " (core dumped)" : "");
}

void
slc_master_reap_process(slc_cycle_t *cycle, pid_t pid, unsigned proc)
{
    /* locks first: a module's hook may need one the dead process held */
    for (slc_shm_zone_t *z = cycle->zones; z != NULL; z = z->next) {
        unsigned n = slc_shm_zone_unlock(z, pid);

        if (n > 0) {
            slc_log(SLC_LOG_ERR, "process %d died holding %u lock(s) of "
                "shared memory zone \"%s\": released", (int) pid, n,
                z->name);
        }
    }
    slc_module_reap_process(cycle, proc);
}

static void
slc_master_reap(void)
{
    pid_t pid;
    int   status;

    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (unsigned i = 0; i < slc_nchildren; i++) {
            slc_child_t c = slc_children[i];
            if (c.pid != pid) {
                continue;
            }
            slc_children[i] = slc_children[--slc_nchildren];
            slc_master_log_exit(pid, status);
            /* whatever it held in shared memory goes back before its
               index can be given to the replacement */
            slc_master_reap_process(slc_master_cycle, pid, c.proc);
            slc_proc_free[slc_proc_nfree++] = c.proc;
            int fatal = WIFEXITED(status) && WEXITSTATUS(status) == 2;
            if (!c.exiting && !fatal && !slc_sig_quit && !slc_sig_terminate
                && c.generation == slc_master_cycle->generation)
            {
                (void) slc_master_spawn(slc_master_cycle, c.slot);
            }
            break;
        }
    }
}

static int
slc_master_prepare(slc_cycle_t *cycle, slc_cycle_t *old, char *err,
    size_t errlen)
{
    if (slc_listen_open_all(cycle->listens, old ? old->listens : NULL,
                            (unsigned) cycle->worker_processes, err, errlen)
        != SLC_OK
        || slc_shm_zones_map(cycle, old, err, errlen) != SLC_OK
        || slc_module_init_zones(cycle, err, errlen) != SLC_OK)
    {
        return SLC_ERROR;
    }
    return SLC_OK;
}

static void
slc_master_reload(void)
{
    slc_cycle_t *old = slc_master_cycle, *cycle;
    char         err[1024];

    slc_log(SLC_LOG_NOTICE, "signal HUP received, reconfiguring");
    cycle = slc_cycle_parse(old->prefix, old->conf_file,
        old->generation + 1, err, sizeof(err));
    if (cycle == NULL) {
        slc_log(SLC_LOG_ERR, "reload failed, keeping the running "
            "configuration: %s", err);
        return;
    }
    if (slc_master_prepare(cycle, old, err, sizeof(err)) != SLC_OK) {
        slc_log(SLC_LOG_ERR, "reload failed, keeping the running "
            "configuration: %s", err);
        slc_listen_close_all(cycle->listens, 0);
        slc_shm_zones_release(cycle, old);
        slc_cycle_free(cycle);
        return;
    }
    if (strcmp(cycle->error_log, old->error_log) != 0) {
        if (slc_log_open(slc_cycle_path(cycle, cycle->error_log), err,
                         sizeof(err)) != SLC_OK)
        {
            slc_log(SLC_LOG_ERR, "%s", err);
        }
    }
    slc_log_level = cycle->log_level;
    slc_master_cycle = cycle;
    /* before the fork: a new worker must not inherit the old sockets, or
       one the new cycle dropped would stay open, and take connections
       that nobody accepts, for as long as that worker runs */
    slc_listen_close_all(old->listens, 1);
    slc_shm_zones_release(old, cycle);      /* likewise: not inherited */
    slc_master_spawn_all(cycle);
    slc_master_signal_workers(SIGQUIT, 1);
    slc_cycle_free(old);
    for (slc_shm_zone_t *z = cycle->zones; z != NULL; z = z->next) {
        slc_log(SLC_LOG_INFO, "shared memory zone \"%s\" (%zu bytes) %s",
            z->name, z->size, z->reused ? "carried over" : "created");
    }
    slc_log(SLC_LOG_NOTICE, "reconfigured: generation %u, %d worker(s)",
        cycle->generation, cycle->worker_processes);
}

static int
slc_master_write_pid(slc_cycle_t *cycle)
{
    const char *path = slc_cycle_path(cycle, cycle->pid_path);
    FILE       *f = fopen(path, "w");

    if (f == NULL) {
        slc_log_errno(SLC_LOG_EMERG, errno, "open() \"%s\" failed", path);
        return SLC_ERROR;
    }
    fprintf(f, "%d\n", (int) getpid());
    fclose(f);
    return SLC_OK;
}

static void
slc_master_exit(void)
{
    slc_cycle_t *cycle = slc_master_cycle;

    unlink(slc_cycle_path(cycle, cycle->pid_path));
    slc_listen_close_all(cycle->listens, 1);
    slc_log(SLC_LOG_NOTICE, "exit");
    exit(0);
}

static void
slc_master_title_set(int argc, char **argv)
{
    size_t n = strlcpy(slc_master_title, "master process",
        sizeof(slc_master_title));

    for (int i = 0; i < argc && n < sizeof(slc_master_title); i++) {
        n += snprintf(slc_master_title + n, sizeof(slc_master_title) - n,
            " %s", argv[i]);
    }
    setproctitle("%s", slc_master_title);
}

static void
slc_master_handle_signals(void)
{
    if (slc_sig_child) {
        slc_sig_child = 0;
        slc_master_reap();
    }
    if (slc_sig_terminate == 1) {
        slc_sig_terminate = 2;
        slc_log(SLC_LOG_NOTICE, "signal TERM received, exiting");
        slc_master_signal_workers(SIGTERM, 0);
    }
    if (slc_sig_quit == 1) {
        slc_sig_quit = 2;
        slc_log(SLC_LOG_NOTICE, "signal QUIT received, shutting down");
        slc_master_signal_workers(SIGQUIT, 0);
        /* the workers stop accepting: close our copies too, so that new
           clients are refused instead of waiting in an accept queue that
           nobody reads while the old sessions finish */
        slc_listen_close_all(slc_master_cycle->listens, 1);
    }
    if (slc_sig_reload) {
        slc_sig_reload = 0;
        if (!slc_sig_quit && !slc_sig_terminate) {
            slc_master_reload();
        }
    }
    if (slc_sig_reopen) {
        slc_sig_reopen = 0;
        slc_log(SLC_LOG_NOTICE, "signal USR1 received, reopening logs");
        slc_log_reopen();
        slc_master_signal_workers(SIGUSR1, 0);
    }
}

void
slc_master_run(slc_cycle_t *cycle, int argc, char **argv)
{
    slc_master_cycle = cycle;
    slc_master_procs_init();
    if (slc_signal_init(&slc_master_waitmask) != 0) {
        slc_log_errno(SLC_LOG_EMERG, errno, "sigaction() failed");
        exit(1);
    }
    if (slc_master_write_pid(cycle) != SLC_OK) {
        exit(1);
    }
    slc_master_title_set(argc, argv);
    slc_log(SLC_LOG_NOTICE, "sluice/%s started, %d worker(s)", SLC_VERSION,
        cycle->worker_processes);
    slc_master_spawn_all(cycle);

    for ( ;; ) {
        slc_master_handle_signals();
        if ((slc_sig_quit || slc_sig_terminate) && slc_nchildren == 0) {
            slc_master_exit();
        }
        sigsuspend(&slc_master_waitmask);
    }
}

void
slc_single_run(slc_cycle_t *cycle)
{
    slc_master_cycle = cycle;
    if (slc_master_write_pid(cycle) != SLC_OK) {
        exit(1);
    }
    slc_log(SLC_LOG_NOTICE, "sluice/%s started without a master process",
        SLC_VERSION);
    slc_worker_run(cycle, 0, 0);
}
