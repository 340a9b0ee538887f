/*
 * Unit tests for process roles (src/core/slc_role.c, slc_master.c): the
 * real master, started on a configuration whose test module declares
 * roles, with real processes.  A role's process is titled, gets a process
 * index that reap_process sees, is started again after SIGKILL with a
 * back-off, not after exit code 2, is replaced by the new cycle's on
 * reload after finishing its step, stops with the master, and is not
 * started with master_process off.  No test code goes into the binary:
 * the module list here is this file's.
 */

#include "slc_test.h"
#include "slc_test_modules.h"
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "slc_conf_file.h"
#include "slc_cycle.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_master.h"
#include "slc_role.h"
#include "slc_worker.h"

#define SLC_TEST_MAX  64

typedef struct {
    pid_t     pid;
    unsigned  n;
    unsigned  proc;
    unsigned  generation;
    uint64_t  at;             /* ms, monotonic */
    char      role[16];       /* "-" for a worker */
} slc_test_event_t;

/* What the processes saw, written where all of them and the test see. */
typedef struct {
    slc_test_event_t  starts[SLC_TEST_MAX];     /* role init */
    unsigned          nstarts;
    slc_test_event_t  inits[SLC_TEST_MAX];      /* init_process */
    unsigned          ninits;
    slc_test_event_t  exits[SLC_TEST_MAX];      /* exit_process */
    unsigned          nexits;
    unsigned          reaped[SLC_TEST_MAX];     /* reap_process (master) */
    unsigned          nreaped;
    int               fail_init;
    int               step_ms;      /* how long a role's step runs on */
} slc_test_shared_t;

static slc_test_shared_t  *slc_test_shared;
static char                slc_test_dir[] = "/tmp/slc_test_role.XXXXXX";
static char                slc_test_conf[256];
static char                slc_test_log[256];
static pid_t               slc_test_master;

static slc_test_event_t *
slc_test_record(slc_test_event_t *a, unsigned *n, const slc_role_t *role)
{
    unsigned          i = __atomic_fetch_add(n, 1, __ATOMIC_SEQ_CST);
    slc_test_event_t *e = &a[i % SLC_TEST_MAX];

    *e = (slc_test_event_t) {
        .pid = getpid(), .n = slc_role_n, .proc = slc_worker_proc,
        .generation = slc_worker_cycle->generation, .at = slc_time_ms(),
    };
    strlcpy(e->role, role != NULL ? role->name : "-", sizeof(e->role));
    return e;
}

/* The role: records its start, idles; after QUIT its step runs on for
   step_ms. */

static slc_timer_t  slc_test_step;
static int          slc_test_step_done;

static int
slc_test_role_init(slc_cycle_t *cycle, slc_role_t *role, unsigned n)
{
    (void) cycle;
    (void) n;
    slc_test_record(slc_test_shared->starts, &slc_test_shared->nstarts,
        role);
    return slc_test_shared->fail_init ? SLC_ERROR : SLC_OK;
}

static void
slc_test_step_end(slc_timer_t *t)
{
    (void) t;
    slc_test_step_done = 1;
}

static void
slc_test_role_quit(slc_role_t *role)
{
    (void) role;
    slc_test_step.handler = slc_test_step_end;
    slc_timer_add(slc_loop, &slc_test_step,
        (uint64_t) slc_test_shared->step_ms);
}

static int
slc_test_role_busy(slc_role_t *role)
{
    (void) role;
    return !slc_test_step_done;
}

static void
slc_test_init_process(slc_cycle_t *cycle, const slc_role_t *role)
{
    (void) cycle;
    slc_test_record(slc_test_shared->inits, &slc_test_shared->ninits, role);
}

static void
slc_test_exit_process(slc_cycle_t *cycle, const slc_role_t *role)
{
    (void) cycle;
    slc_test_record(slc_test_shared->exits, &slc_test_shared->nexits, role);
}

static void
slc_test_reap_process(slc_cycle_t *cycle, unsigned proc)
{
    (void) cycle;
    unsigned i = __atomic_fetch_add(&slc_test_shared->nreaped, 1,
        __ATOMIC_SEQ_CST);
    slc_test_shared->reaped[i % SLC_TEST_MAX] = proc;
}

static slc_module_t  slc_test_module;

/* test_role NAME COUNT; */
static const char *
slc_test_role_directive(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_role_t role = {
        .name = slc_pstrndup(cf->pool, cf->args[1].data, cf->args[1].len),
        .count = (unsigned) slc_conf_parse_int(&cf->args[2]),
        .module = &slc_test_module,
        .init = slc_test_role_init,
        .quit = slc_test_role_quit,
        .busy = slc_test_role_busy,
    };

    (void) cmd;
    (void) conf;
    if (slc_cycle_add_role(cf->cycle, &role) == NULL) {
        return slc_conf_error(cf, "duplicate role \"%s\"", role.name);
    }
    return NULL;
}

static const slc_command_t  slc_test_commands[] = {
    { .name = "test_role", .type = SLC_CONF_MAIN | SLC_CONF_TAKE2,
      .set = slc_test_role_directive },
    { .name = NULL }
};

static slc_module_t  slc_test_module = {
    .name = "test_role",
    .type = SLC_MODULE_CORE,
    .commands = slc_test_commands,
    .reap_process = slc_test_reap_process,
    .init_process = slc_test_init_process,
    .exit_process = slc_test_exit_process,
};

SLC_TEST_MODULES("core test_role", &slc_core_module, &slc_test_module);

/* The harness. */

static void
slc_test_write_conf(const char *roles, int master_process)
{
    FILE *f = fopen(slc_test_conf, "w");

    ck_assert_ptr_nonnull(f);
    fprintf(f, "daemon off;\nmaster_process %s;\nworker_processes 1;\n"
        "pid %s/sluice.pid;\nerror_log %s info;\n%s\n",
        master_process ? "on" : "off", slc_test_dir, slc_test_log, roles);
    fclose(f);
}

/* Fork the master (or the single process) on the configuration. */
static void
slc_test_start(const char *roles, int master_process)
{
    slc_test_write_conf(roles, master_process);
    slc_test_master = fork();
    ck_assert_int_ne(slc_test_master, -1);
    if (slc_test_master > 0) {
        return;
    }
    /* the test failing leaves no master behind: TERM stops its children */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    char         err[1024];
    char         prefix[300];
    slc_cycle_t *cycle;

    snprintf(prefix, sizeof(prefix), "%s/", slc_test_dir);
    cycle = slc_cycle_parse(prefix, slc_test_conf, 1, err, sizeof(err));
    if (cycle == NULL) {
        fprintf(stderr, "%s\n", err);
        _exit(3);
    }
    if (slc_log_open(slc_test_log, err, sizeof(err)) != SLC_OK) {
        _exit(3);
    }
    slc_log_level = cycle->log_level;
    if (!master_process) {
        slc_single_run(cycle, -1);
    }
    slc_master_run(cycle, 0, NULL, -1);
    _exit(3);
}

static int
slc_test_wait_count(unsigned *n, unsigned want)
{
    uint64_t deadline = slc_time_ms() + 10000;

    while (__atomic_load_n(n, __ATOMIC_SEQ_CST) < want) {
        if (slc_time_ms() > deadline) {
            return 0;
        }
        usleep(10000);
    }
    return 1;
}

static int
slc_test_gone(pid_t pid)
{
    uint64_t deadline = slc_time_ms() + 10000;

    while (kill(pid, 0) == 0) {
        if (slc_time_ms() > deadline) {
            return 0;
        }
        usleep(10000);
    }
    return 1;
}

static int
slc_test_reaped(unsigned proc)
{
    for (unsigned i = 0; i < slc_test_shared->nreaped; i++) {
        if (slc_test_shared->reaped[i] == proc) {
            return 1;
        }
    }
    return 0;
}

static const slc_test_event_t *
slc_test_find(const slc_test_event_t *a, unsigned n, pid_t pid)
{
    for (unsigned i = 0; i < n; i++) {
        if (a[i].pid == pid) {
            return &a[i];
        }
    }
    return NULL;
}

static int
slc_test_log_has(const char *s)
{
    char  buf[65536];
    FILE *f = fopen(slc_test_log, "r");
    size_t n;

    if (f == NULL) {
        return 0;
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, s) != NULL;
}

static int
slc_test_wait_log(const char *s)
{
    uint64_t deadline = slc_time_ms() + 10000;

    while (!slc_test_log_has(s)) {
        if (slc_time_ms() > deadline) {
            return 0;
        }
        usleep(10000);
    }
    return 1;
}

/* Stop the master with `signo`; its exit status. */
static int
slc_test_stop(int signo)
{
    int      status;
    uint64_t deadline = slc_time_ms() + 10000;

    kill(slc_test_master, signo);
    while (waitpid(slc_test_master, &status, WNOHANG) == 0) {
        ck_assert_msg(slc_time_ms() < deadline, "master did not exit");
        usleep(10000);
    }
    slc_test_master = 0;
    return status;
}

static void
slc_test_setup(void)
{
    slc_test_shared = mmap(NULL, sizeof(*slc_test_shared),
        PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(slc_test_shared, MAP_FAILED);
    strlcpy(slc_test_dir, "/tmp/slc_test_role.XXXXXX",
        sizeof(slc_test_dir));
    ck_assert_ptr_nonnull(mkdtemp(slc_test_dir));
    snprintf(slc_test_conf, sizeof(slc_test_conf), "%s/sluice.conf",
        slc_test_dir);
    snprintf(slc_test_log, sizeof(slc_test_log), "%s/error.log",
        slc_test_dir);
}

static void
slc_test_teardown(void)
{
    char cmd[512];

    if (slc_test_master > 0) {
        (void) slc_test_stop(SIGTERM);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf %s", slc_test_dir);
    (void) system(cmd);
    munmap(slc_test_shared, sizeof(*slc_test_shared));
}

/* The processes of a role: titled, indexed, hooked; stop with the master. */
START_TEST(test_start_and_quit)
{
    const slc_test_event_t *s[2], *w;
    char                    path[64], title[256];

    slc_test_start("test_role helper 2;", 1);
    ck_assert(slc_test_wait_count(&slc_test_shared->nstarts, 2));
    ck_assert(slc_test_wait_count(&slc_test_shared->ninits, 3));
    s[0] = &slc_test_shared->starts[0];
    s[1] = &slc_test_shared->starts[1];
    ck_assert_int_ne(s[0]->pid, s[1]->pid);
    ck_assert_uint_eq(s[0]->n + s[1]->n, 1);            /* places 0, 1 */
    ck_assert_uint_ne(s[0]->proc, s[1]->proc);
    w = NULL;
    for (unsigned i = 0; i < 3; i++) {
        if (strcmp(slc_test_shared->inits[i].role, "-") == 0) {
            w = &slc_test_shared->inits[i];
        }
    }
    ck_assert_ptr_nonnull(w);                        /* the worker */
    ck_assert_uint_ne(w->proc, s[0]->proc);
    ck_assert_uint_ne(w->proc, s[1]->proc);
    for (int i = 0; i < 2; i++) {
        const slc_test_event_t *in = slc_test_find(slc_test_shared->inits,
            3, s[i]->pid);
        ck_assert_ptr_nonnull(in);                   /* init_process ran */
        ck_assert_str_eq(in->role, "helper");        /* with the role */

        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int) s[i]->pid);
        FILE *f = fopen(path, "r");
        ck_assert_ptr_nonnull(f);
        size_t n = fread(title, 1, sizeof(title) - 1, f);
        fclose(f);
        title[n] = '\0';
        ck_assert_msg(strstr(title, ": helper process") != NULL,
            "title \"%s\"", title);
    }

    slc_test_shared->step_ms = 0;
    int status = slc_test_stop(SIGQUIT);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int i = 0; i < 2; i++) {
        const slc_test_event_t *e = slc_test_find(slc_test_shared->exits,
            slc_test_shared->nexits, s[i]->pid);
        ck_assert_ptr_nonnull(e);                    /* exit_process ran */
        ck_assert_str_eq(e->role, "helper");
        ck_assert(slc_test_reaped(s[i]->proc));      /* reap_process too */
        ck_assert_int_eq(kill(s[i]->pid, 0), -1);    /* and it is gone */
    }
}
END_TEST

/* Started again after SIGKILL, after TERM, not sooner than once a second;
   not after exit code 2. */
START_TEST(test_respawn)
{
    slc_test_event_t a, b, c, d;

    slc_test_start("test_role helper 1;", 1);
    ck_assert(slc_test_wait_count(&slc_test_shared->nstarts, 1));
    a = slc_test_shared->starts[0];
    ck_assert_int_eq(kill(a.pid, SIGKILL), 0);
    ck_assert(slc_test_wait_count(&slc_test_shared->nstarts, 2));
    b = slc_test_shared->starts[1];
    ck_assert(slc_test_reaped(a.proc));
    ck_assert_int_ne(b.pid, a.pid);
    ck_assert_uint_eq(b.n, 0);
    /* killed at once: the back-off holds the restart for a second from
       the master's fork; a child notes its start a little after that
       (scheduling, under load a few ms), so measured from the child's
       notes the gap may be short by that much */
    ck_assert_msg(b.at + 100 >= a.at + 1000, "restarted after %llu ms",
        (unsigned long long) (b.at - a.at));

    /* TERM: exits at once, by itself (exit_process), and comes back */
    ck_assert_int_eq(kill(b.pid, SIGTERM), 0);
    ck_assert(slc_test_wait_count(&slc_test_shared->nstarts, 3));
    c = slc_test_shared->starts[2];
    ck_assert_ptr_nonnull(slc_test_find(slc_test_shared->exits,
        slc_test_shared->nexits, b.pid));
    ck_assert(c.at + 100 >= b.at + 1000);

    /* a process that cannot initialise is not started again */
    slc_test_shared->fail_init = 1;
    ck_assert_int_eq(kill(c.pid, SIGKILL), 0);
    ck_assert(slc_test_wait_count(&slc_test_shared->nstarts, 4));
    d = slc_test_shared->starts[3];
    ck_assert(slc_test_gone(d.pid));
    /* past the back-off: nothing more started */
    usleep(1500 * 1000);
    ck_assert_uint_eq(slc_test_shared->nstarts, 4);
    ck_assert(slc_test_reaped(d.proc));
    ck_assert(slc_test_log_has("could not initialise: not started again"));

    int status = slc_test_stop(SIGTERM);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

/* Reload: the new cycle's roles start, the old ones finish their step
   and exit. */
START_TEST(test_reload)
{
    slc_test_event_t old, s1, s2;
    uint64_t         hup;

    slc_test_shared->step_ms = 300;
    slc_test_start("test_role helper 1;", 1);
    ck_assert(slc_test_wait_count(&slc_test_shared->nstarts, 1));
    old = slc_test_shared->starts[0];
    ck_assert_uint_eq(old.generation, 1);

    slc_test_write_conf("test_role helper 1;\ntest_role other 1;", 1);
    hup = slc_time_ms();
    ck_assert_int_eq(kill(slc_test_master, SIGHUP), 0);
    ck_assert(slc_test_wait_count(&slc_test_shared->nstarts, 3));
    s1 = slc_test_shared->starts[1];
    s2 = slc_test_shared->starts[2];
    ck_assert_uint_eq(s1.generation, 2);
    ck_assert_uint_eq(s2.generation, 2);
    ck_assert_str_ne(s1.role, s2.role);              /* helper and other */
    ck_assert(slc_test_gone(old.pid));
    const slc_test_event_t *e = slc_test_find(slc_test_shared->exits,
        slc_test_shared->nexits, old.pid);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->generation, 1);
    /* it finished its step first */
    ck_assert_msg(e->at >= hup + 300, "exited %llu ms after HUP",
        (unsigned long long) (e->at - hup));
    ck_assert(slc_test_wait_log("reconfigured: generation 2"));
    /* the old one is not started again, the new ones run */
    ck_assert_uint_eq(slc_test_shared->nstarts, 3);
    ck_assert_int_eq(kill(s1.pid, 0), 0);
    ck_assert_int_eq(kill(s2.pid, 0), 0);

    slc_test_shared->step_ms = 0;
    int status = slc_test_stop(SIGQUIT);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert(slc_test_reaped(s1.proc) && slc_test_reaped(s2.proc));
}
END_TEST

/* master_process off: the roles are not started, the log says so. */
START_TEST(test_single)
{
    slc_test_start("test_role helper 1;", 0);
    ck_assert(slc_test_wait_log("master_process off: the helper process "
        "is not started"));
    ck_assert(slc_test_wait_count(&slc_test_shared->ninits, 1));
    ck_assert_str_eq(slc_test_shared->inits[0].role, "-");
    ck_assert_uint_eq(slc_test_shared->nstarts, 0);
    int status = slc_test_stop(SIGTERM);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_uint_eq(slc_test_shared->nstarts, 0);
    /* the single process is a worker: exit_process without a role */
    ck_assert_uint_eq(slc_test_shared->nexits, 1);
    ck_assert_str_eq(slc_test_shared->exits[0].role, "-");
}
END_TEST

static Suite *
slc_test_role_suite(void)
{
    Suite *s = suite_create("role");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, slc_test_setup, slc_test_teardown);
    tcase_add_test(tc, test_start_and_quit);
    tcase_add_test(tc, test_respawn);
    tcase_add_test(tc, test_reload);
    tcase_add_test(tc, test_single);
    suite_add_tcase(s, tc);
    return s;
}

extern char **environ;

int
main(int argc, char **argv)
{

    setproctitle_init(argc, argv, environ);
    return slc_check_run(slc_test_role_suite());
}
