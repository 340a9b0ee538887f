#include "slc_core.h"
#include "slc_channel.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_master.h"
#include "slc_role.h"
#include "slc_signal.h"
#include "slc_worker.h"

#include <poll.h>
#include <sys/wait.h>

/* A role's place is started again at most once per this many ms. */
#define SLC_ROLE_RESPAWN_MS  1000

typedef struct {
    pid_t     pid;
    unsigned  slot;         /* a worker's slot, a role's place */
    int       role;         /* index in cycle->roles; -1: a worker */
    unsigned  proc;         /* process index, see slc_worker.h */
    unsigned  generation;
    int       exiting;      /* told to quit or terminate */
    uint64_t  started;      /* ms, monotonic */
    char      name[32];     /* "worker", a role's name: for the log, the
                               cycle that named it may be gone */
} slc_child_t;

/* A role's place waiting out its back-off before it is started again. */
typedef struct {
    int       role;
    unsigned  slot;
    unsigned  generation;
    uint64_t  at;           /* ms, monotonic */
} slc_respawn_t;

static slc_child_t   slc_children[SLC_PROC_MAX];
static unsigned      slc_nchildren;
static slc_respawn_t slc_respawns[SLC_PROC_MAX];
static unsigned      slc_nrespawns;
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

/* The role at `index` in the cycle's list, NULL if there is none. */
static slc_role_t *
slc_master_role(slc_cycle_t *cycle, int index)
{
    slc_role_t *r = cycle->roles;

    for (int i = 0; r != NULL && i < index; i++) {
        r = r->next;
    }
    return index < 0 ? NULL : r;
}

/* Fork a worker for `slot` (role -1) or a process of a role for place
   `slot`. */
static pid_t
slc_master_spawn(slc_cycle_t *cycle, unsigned slot, int role)
{
    slc_role_t *r = slc_master_role(cycle, role);
    const char *name = r != NULL ? r->name : "worker";
    pid_t       pid;
    unsigned    proc;

    if (slc_proc_nfree == 0) {
        slc_log(SLC_LOG_ALERT, "too many child processes (%d)",
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
        if (r != NULL) {
            slc_role_run(cycle, r, slot, proc);
        }
        slc_worker_run(cycle, slot, proc);
    }
    slc_proc_nfree--;
    slc_child_t *c = &slc_children[slc_nchildren++];
    *c = (slc_child_t) {
        .pid = pid, .slot = slot, .role = role, .proc = proc,
        .generation = cycle->generation, .started = slc_time_ms(),
    };
    strlcpy(c->name, name, sizeof(c->name));
    slc_log(SLC_LOG_NOTICE, "start %s process %d", name, (int) pid);
    return pid;
}

/* The workers, then the processes of the roles. */
static void
slc_master_spawn_all(slc_cycle_t *cycle)
{
    int i = 0;

    for (int w = 0; w < cycle->worker_processes; w++) {
        (void) slc_master_spawn(cycle, (unsigned) w, -1);
    }
    for (slc_role_t *r = cycle->roles; r != NULL; r = r->next, i++) {
        for (unsigned n = 0; n < r->count; n++) {
            (void) slc_master_spawn(cycle, n, i);
        }
    }
}

/*
 * A role's process died while its generation runs: start it again, but
 * not sooner than SLC_ROLE_RESPAWN_MS after the last start of its place,
 * so one that dies at once costs a fork a second, not a busy loop.
 */
static void
slc_master_respawn_role(const slc_child_t *c)
{
    uint64_t now = slc_time_ms();

    if (now >= c->started + SLC_ROLE_RESPAWN_MS
        || slc_nrespawns == SLC_PROC_MAX)
    {
        (void) slc_master_spawn(slc_master_cycle, c->slot, c->role);
        return;
    }
    slc_respawns[slc_nrespawns++] = (slc_respawn_t) {
        .role = c->role, .slot = c->slot, .generation = c->generation,
        .at = c->started + SLC_ROLE_RESPAWN_MS,
    };
    slc_log(SLC_LOG_NOTICE, "%s process starts again in %llu ms", c->name,
        (unsigned long long) (c->started + SLC_ROLE_RESPAWN_MS - now));
}

/*
 * Start the places whose back-off is over; those of an older generation
 * (a reload started the new roles) or of a master that is stopping are
 * dropped.  Returns the ms until the next one is due, -1 if none waits.
 */
static int
slc_master_respawn_due(void)
{
    uint64_t now = slc_time_ms();
    int      wait = -1;

    for (unsigned i = 0; i < slc_nrespawns; ) {
        slc_respawn_t r = slc_respawns[i];

        if (r.generation != slc_master_cycle->generation
            || slc_sig_quit || slc_sig_terminate)
        {
            slc_respawns[i] = slc_respawns[--slc_nrespawns];
            continue;
        }
        if (r.at <= now) {
            slc_respawns[i] = slc_respawns[--slc_nrespawns];
            (void) slc_master_spawn(slc_master_cycle, r.slot, r.role);
            continue;
        }
        if (wait == -1 || r.at - now < (uint64_t) wait) {
            wait = (int) (r.at - now);
        }
        i++;
    }
    return wait;
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
slc_master_log_exit(const char *name, pid_t pid, int status)
{
    if (WIFEXITED(status)) {
        slc_log(WEXITSTATUS(status) ? SLC_LOG_ALERT : SLC_LOG_NOTICE,
            "%s process %d exited with code %d", name, (int) pid,
            WEXITSTATUS(status));
        return;
    }
    int sig = WTERMSIG(status);
    /* killed from outside (an operator, the OOM killer): an error;
       crashed by itself: critical */
    int crash = sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT
                || sig == SIGFPE || sig == SIGILL;
    slc_log(crash ? SLC_LOG_CRIT : SLC_LOG_ERR,
        "%s process %d exited on signal %d%s", name, (int) pid, sig,
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
    slc_module_reap_process(cycle, pid, proc);
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
            slc_master_log_exit(c.name, pid, status);
            /* whatever it held in shared memory goes back before its
               index can be given to the replacement */
            slc_master_reap_process(slc_master_cycle, pid, c.proc);
            slc_proc_free[slc_proc_nfree++] = c.proc;
            if (c.exiting || slc_sig_quit || slc_sig_terminate
                || c.generation != slc_master_cycle->generation)
            {
                break;
            }
            if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
                slc_log(SLC_LOG_NOTICE, "%s process %d could not "
                    "initialise: not started again", c.name, (int) pid);
            } else if (c.role >= 0) {
                slc_master_respawn_role(&c);
            } else {
                (void) slc_master_spawn(slc_master_cycle, c.slot, -1);
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
        || slc_shm_zones_map(cycle, old, err, errlen) != SLC_OK)
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
    /* the channels stay: the old workers hand their sessions over in
       them, to the new worker of their slot or, for a slot this cycle
       dropped, to slot % worker_processes */
    (void) slc_channel_grow((unsigned) cycle->worker_processes);
    slc_channel_publish((unsigned) cycle->worker_processes);
    slc_master_spawn_all(cycle);
    slc_master_signal_workers(SIGQUIT, 1);
    slc_cycle_free(old);
    for (slc_shm_zone_t *z = cycle->zones; z != NULL; z = z->next) {
        slc_log(SLC_LOG_INFO, "shared memory zone \"%s\" (%zu bytes) %s",
            z->name, z->size, z->reused ? "carried over" : "created");
    }
    slc_log(SLC_LOG_NOTICE, "reconfigured: generation %u, %d worker(s)",
        cycle->generation, cycle->worker_processes);
    /* the old roles' pending restarts are dropped at their time: the new
       cycle has started its own */
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
        slc_channel_stop();         /* no new worker to hand over to */
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
    if (slc_sig_report) {
        slc_sig_report = 0;
        slc_module_report(slc_master_cycle);
    }
    if (slc_sig_reopen) {
        slc_sig_reopen = 0;
        slc_log(SLC_LOG_NOTICE, "signal USR1 received, reopening logs");
        slc_log_reopen();
        slc_master_signal_workers(SIGUSR1, 0);
    }
}

/* The pid file is there: the daemonizing parent may exit. */
static void
slc_master_ready(int fd)
{
    if (fd != -1) {
        (void) !write(fd, "1", 1);
        close(fd);
    }
}

void
slc_master_run(slc_cycle_t *cycle, int argc, char **argv, int ready_fd)
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
    slc_master_ready(ready_fd);
    slc_master_title_set(argc, argv);
    slc_log(SLC_LOG_NOTICE, "sluice/%s started, %d worker(s)", SLC_VERSION,
        cycle->worker_processes);
    if (slc_channel_grow((unsigned) cycle->worker_processes) == SLC_OK) {
        slc_channel_publish((unsigned) cycle->worker_processes);
    }
    slc_master_spawn_all(cycle);

    for ( ;; ) {
        slc_master_handle_signals();
        int wait = slc_master_respawn_due();
        if ((slc_sig_quit || slc_sig_terminate) && slc_nchildren == 0) {
            slc_master_exit();
        }
        if (wait == -1) {
            sigsuspend(&slc_master_waitmask);
        } else {
            /* sigsuspend with a timeout: a role waits out its back-off */
            struct timespec ts = { .tv_sec = wait / 1000,
                                   .tv_nsec = (wait % 1000) * 1000000L };
            (void) ppoll(NULL, 0, &ts, &slc_master_waitmask);
        }
    }
}

void
slc_single_run(slc_cycle_t *cycle, int ready_fd)
{
    slc_master_cycle = cycle;
    if (slc_master_write_pid(cycle) != SLC_OK) {
        exit(1);
    }
    slc_master_ready(ready_fd);
    slc_log(SLC_LOG_NOTICE, "sluice/%s started without a master process",
        SLC_VERSION);
    for (slc_role_t *r = cycle->roles; r != NULL; r = r->next) {
        slc_log(SLC_LOG_NOTICE, "master_process off: the %s process is not "
            "started", r->name);
    }
    slc_worker_run(cycle, 0, 0);
}
