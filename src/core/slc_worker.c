#include "slc_core.h"
#include "slc_buf.h"
#include "slc_channel.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_module.h"
#include "slc_shmtx.h"
#include "slc_signal.h"
#include "slc_worker.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>

unsigned      slc_worker_slot;
unsigned      slc_worker_proc;
slc_cycle_t  *slc_worker_cycle;

static slc_loop_t    slc_worker_loop;
static sigset_t      slc_worker_waitmask;
static slc_conn_t   *slc_worker_listeners;
static unsigned      slc_worker_nlisteners;
static slc_timer_t   slc_worker_accept_timer;
static slc_timer_t   slc_worker_shutdown_timer;
static int           slc_worker_quitting;     /* QUIT: accept no more */

static void
slc_worker_listen_on(int on)
{
    for (unsigned i = 0; i < slc_worker_nlisteners; i++) {
        slc_conn_t   *c = &slc_worker_listeners[i];
        slc_listen_t *l = c->data;
        if (on) {
            (void) slc_conn_register_listen(slc_loop, c, l->is_unix);
        } else {
            slc_conn_unregister(slc_loop, c);
        }
    }
}

static void
slc_worker_accept_resume(slc_timer_t *t)
{
    (void) t;
    if (!slc_worker_quitting) {
        slc_worker_listen_on(1);
    }
}

/* Out of descriptors: stop accepting for a second. */
static void
slc_worker_accept_pause(void)
{
    if (slc_worker_accept_timer.armed) {
        return;
    }
    slc_worker_listen_on(0);
    slc_worker_accept_timer.handler = slc_worker_accept_resume;
    slc_timer_add(slc_loop, &slc_worker_accept_timer, 1000);
}

/*
 * Accept what is queued (at most `max`, so one busy listener does not hold
 * up the loop) and give each connection to the listener's handler.
 */
static void
slc_worker_accept_some(slc_conn_t *lc, int max)
{
    slc_listen_t            *l = lc->data;
    struct sockaddr_storage  ss;
    socklen_t                sl;
    int                      fd;

    for (int i = 0; i < max; i++) {
        sl = sizeof(ss);
        fd = accept4(lc->fd, (struct sockaddr *) &ss, &sl,
            SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd == -1) {
            if (errno == EMFILE || errno == ENFILE) {
                slc_worker_accept_pause();
                slc_log_errno(SLC_LOG_CRIT, errno, "accept4() failed, "
                    "pausing accept for 1s");
            } else if (errno != EAGAIN && errno != EINTR
                       && errno != ECONNABORTED) {
                slc_log_errno(SLC_LOG_ERR, errno, "accept4() failed");
            }
            return;
        }
        l->handler(fd, l, &ss);
    }
}

static void
slc_worker_accept(slc_conn_t *lc)
{
    slc_worker_accept_some(lc, 64);
}

static int
slc_worker_init_listeners(slc_cycle_t *cycle, unsigned slot)
{
    unsigned      n = 0;

    for (slc_listen_t *l = cycle->listens; l != NULL; l = l->next) {
        n++;
    }
    slc_worker_listeners = calloc(n ? n : 1, sizeof(slc_conn_t));
    if (slc_worker_listeners == NULL) {
        return SLC_ERROR;
    }
    for (slc_listen_t *l = cycle->listens; l != NULL; l = l->next) {
        slc_conn_t *c = &slc_worker_listeners[slc_worker_nlisteners++];
        c->fd = l->is_unix ? l->fds[0] : l->fds[slot];
        c->data = l;
        c->on_read = slc_worker_accept;
    }
    slc_worker_listen_on(1);
    return SLC_OK;
}

/*
 * Stop accepting.  What already waits in the accept queue is taken first
 * and served like any session: when a reload drops this worker's slot
 * (fewer worker_processes), this is the last process holding that
 * SO_REUSEPORT socket, and closing it would reset those connections.  A
 * connection that completes in the instant between the last accept and
 * the close is still lost, unless the kernel migrates it to another
 * listener of the group (net.ipv4.tcp_migrate_req, Linux 5.14).
 */
static void
slc_worker_stop_listening(void)
{
    slc_worker_listen_on(0);
    slc_timer_del(slc_loop, &slc_worker_accept_timer);
    for (unsigned i = 0; i < slc_worker_nlisteners; i++) {
        slc_worker_accept_some(&slc_worker_listeners[i], 65536);
        close(slc_worker_listeners[i].fd);
        slc_worker_listeners[i].fd = -1;
    }
}

static void
slc_worker_shutdown_expired(slc_timer_t *t)
{
    (void) t;
    slc_log(SLC_LOG_NOTICE, "worker_shutdown_timeout passed, closing %u "
        "session(s) as they become idle", slc_module_conn_count());
    slc_module_close_idle();
}

static void
slc_worker_quit(void)
{
    slc_worker_quitting = 1;
    slc_worker_stop_listening();
    if (slc_channel_enabled(slc_worker_slot)) {
        /* a reload: the sessions go on in the new worker of this slot,
           which reads the channel from now on; a stopping master has
           none, and this worker reads on until the channel is empty */
        slc_channel_unlisten();
        slc_module_handover();
    }
    slc_log(SLC_LOG_NOTICE, "gracefully shutting down, %u session(s) open",
        slc_module_conn_count());
    slc_worker_shutdown_timer.handler = slc_worker_shutdown_expired;
    slc_timer_add(slc_loop, &slc_worker_shutdown_timer,
        (uint64_t) slc_worker_cycle->shutdown_timeout);
}

static void
slc_worker_exit(int code)
{
    slc_cycle_t *cycle = slc_worker_cycle;
    const char  *pid_path;

    /* master_process off: this process is the one the pid file names */
    if (!cycle->master_process
        && (pid_path = slc_cycle_path(cycle, cycle->pid_path)) != NULL)
    {
        unlink(pid_path);
    }
    slc_module_exit_process(cycle, NULL);
    slc_log(SLC_LOG_NOTICE, "exiting");
    slc_loop_done(slc_loop);
    exit(code);
}

static void
slc_worker_signals(void)
{
    if (slc_sig_terminate) {
        slc_worker_exit(0);
    }
    if (slc_sig_quit && !slc_worker_quitting) {
        slc_worker_quit();
    }
    if (slc_sig_reopen) {
        slc_sig_reopen = 0;
        slc_log_reopen();
    }
    slc_sig_reload = 0;     /* the master's business */
    slc_sig_child = 0;
}

static void
slc_worker_rlimit(slc_cycle_t *cycle)
{
    struct rlimit rl;

    if (cycle->rlimit_nofile <= 0) {
        return;
    }
    rl.rlim_cur = rl.rlim_max = (rlim_t) cycle->rlimit_nofile;
    if (setrlimit(RLIMIT_NOFILE, &rl) == -1) {
        slc_log_errno(SLC_LOG_ALERT, errno, "setrlimit(RLIMIT_NOFILE, %lld) "
            "failed", cycle->rlimit_nofile);
    }
}

/*
 * SCHED_BATCH: a woken worker does not preempt the task running on its CPU;
 * it runs when that task blocks or its slice ends, and then finds several
 * events waiting instead of one.  Where the proxy shares CPUs with busy
 * neighbours (the server, the clients) this halves its context switches;
 * on idle CPUs it changes nothing.  docs/benchmarks.md has the figures.
 */
static void
slc_worker_sched(slc_cycle_t *cycle)
{
    struct sched_param sp = { .sched_priority = 0 };
    int                policy = cycle->worker_sched_batch
                                ? SCHED_BATCH : SCHED_OTHER;

    if (sched_setscheduler(0, policy, &sp) == -1) {
        slc_log_errno(SLC_LOG_ALERT, errno, "sched_setscheduler(%s) failed",
            cycle->worker_sched_batch ? "SCHED_BATCH" : "SCHED_OTHER");
    }
    if (cycle->worker_priority != SLC_NICE_UNSET
        && setpriority(PRIO_PROCESS, 0, cycle->worker_priority) == -1)
    {
        slc_log_errno(SLC_LOG_ALERT, errno, "setpriority(%d) failed",
            cycle->worker_priority);
    }
}

void
slc_worker_process_init(slc_cycle_t *cycle, unsigned proc)
{
    slc_pid = getpid();
    slc_worker_proc = proc;
    slc_worker_cycle = cycle;
    /* the master's flags came with the fork: none is ours */
    slc_sig_quit = slc_sig_terminate = slc_sig_reload = 0;
    slc_sig_reopen = slc_sig_child = 0;
    if (slc_signal_init(&slc_worker_waitmask) != 0
        || slc_loop_init(&slc_worker_loop) != SLC_OK)
    {
        slc_log_errno(SLC_LOG_ALERT, errno, "process init failed");
        exit(2);
    }
    slc_loop = &slc_worker_loop;
    slc_loop->sigmask = &slc_worker_waitmask;
}

void
slc_worker_run(slc_cycle_t *cycle, unsigned slot, unsigned proc)
{
    slc_worker_slot = slot;
    slc_worker_process_init(cycle, proc);
    slc_worker_rlimit(cycle);
    slc_worker_sched(cycle);
    slc_listen_keep_slot(cycle->listens, slot);
    slc_module_init_process(cycle, NULL);
    if (slc_worker_init_listeners(cycle, slot) != SLC_OK) {
        slc_log(SLC_LOG_ALERT, "worker init failed: out of memory");
        exit(2);
    }
    if (cycle->master_process) {
        slc_channel_listen(slot);
    }
    setproctitle("worker process");

    for ( ;; ) {
        slc_worker_signals();
        if (slc_worker_quitting && slc_module_conn_count() == 0
            && slc_channel_pending() == 0)
        {
            slc_worker_exit(0);
        }
        slc_loop_once(slc_loop, -1);
    }
}
