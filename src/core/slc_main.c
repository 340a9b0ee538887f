#include "slc_core.h"
#include "slc_cycle.h"
#include "slc_log.h"
#include "slc_master.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

extern char **environ;

typedef struct {
    const char  *conf;
    const char  *prefix;
    const char  *signal;
    int          test;
    int          version;
} slc_opts_t;

static void
slc_usage(FILE *f)
{
    fprintf(f,
        "usage: sluice [-hVt] [-s signal] [-p prefix] [-c file]\n"
        "  -h         this help\n"
        "  -V         version, configure arguments and modules\n"
        "  -t         test the configuration and exit\n"
        "  -s signal  send to the master: stop, quit, reopen, reload, "
        "cachestats\n"
        "  -s status  print the status (from status_listen); also: stats\n"
        "  -p prefix  set the prefix path (default: %s)\n"
        "  -c file    configuration file (default: %s)\n",
        SLC_PREFIX, SLC_CONF_PATH);
}

static int
slc_parse_opts(int argc, char **argv, slc_opts_t *o)
{
    int c;

    while ((c = getopt(argc, argv, "hVtc:p:s:")) != -1) {
        switch (c) {
        case 'h': slc_usage(stdout); exit(0);
        case 'V': o->version = 1; break;
        case 't': o->test = 1; break;
        case 'c': o->conf = optarg; break;
        case 'p': o->prefix = optarg; break;
        case 's': o->signal = optarg; break;
        default:  slc_usage(stderr); return SLC_ERROR;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "sluice: unexpected argument \"%s\"\n", argv[optind]);
        return SLC_ERROR;
    }
    return SLC_OK;
}

/* Join a directory and a relative path; SLC_ERROR if it does not fit. */
static int
slc_join(char *dst, size_t len, const char *dir, const char *sep,
    const char *path)
{
    int n = snprintf(dst, len, "%s%s%s", dir, sep, path);

    return n >= 0 && (size_t) n < len ? SLC_OK : SLC_ERROR;
}

/* The prefix always ends with '/'; the conf path is made absolute. */
static int
slc_resolve_paths(slc_opts_t *o, char *prefix, size_t plen, char *conf,
    size_t clen)
{
    const char *p = o->prefix ? o->prefix : SLC_PREFIX;
    char        cwd[2048];
    int         rc;

    if (getcwd(cwd, sizeof(cwd)) == NULL) {
        strlcpy(cwd, ".", sizeof(cwd));
    }
    rc = p[0] == '/' ? slc_join(prefix, plen, "", "", p)
                     : slc_join(prefix, plen, cwd, "/", p);
    if (rc == SLC_OK && prefix[strlen(prefix) - 1] != '/'
        && strlcat(prefix, "/", plen) >= plen)
    {
        rc = SLC_ERROR;
    }
    p = o->conf ? o->conf : SLC_CONF_PATH;
    if (rc != SLC_OK) {
        return rc;
    }
    if (p[0] == '/') {
        return slc_join(conf, clen, "", "", p);
    }
    return o->conf != NULL ? slc_join(conf, clen, cwd, "/", p)
                           : slc_join(conf, clen, prefix, "", p);
}

/*
 * -s status, -s stats: the status to the terminal, from the running
 * instance's status listener.  Without one, `stats` signals the master
 * to log the counters (as before), `status` is an error.  -1: neither.
 */
static int
slc_print_status(slc_cycle_t *cycle, const char *name)
{
    char err[512];
    int  rc;

    if (strcmp(name, "status") != 0 && strcmp(name, "stats") != 0) {
        return -1;
    }
    rc = slc_module_print_status(cycle, err, sizeof(err));
    if (rc == SLC_OK) {
        return 0;
    }
    if (rc == SLC_ERROR) {
        fprintf(stderr, "sluice: %s\n", err);
        return 1;
    }
    if (strcmp(name, "status") == 0) {
        fprintf(stderr, "sluice: -s status reads the status listener: the "
            "configuration has no status_listen\n");
        return 1;
    }
    fprintf(stderr, "sluice: no status_listen in the configuration: the "
        "master logs the counters into the error log\n");
    return -1;
}

/* -t: the shared memory the configuration asks for, zone by zone (what
   a worker touches of it is less: pages are taken as they are written). */
static void
slc_print_zones(const slc_cycle_t *cycle)
{
    size_t total = 0;

    for (const slc_shm_zone_t *z = cycle->zones; z != NULL; z = z->next) {
        printf("sluice: shared memory zone %s: %zu bytes (%.1f MiB)\n",
            z->name, z->size, (double) z->size / (1 << 20));
        total += z->size;
    }
    printf("sluice: shared memory in all: %zu bytes (%.1f MiB)\n", total,
        (double) total / (1 << 20));
}

static int
slc_send_signal(slc_cycle_t *cycle, const char *name)
{
    static const struct { const char *name; int signo; } sigs[] = {
        { "stop", SIGTERM }, { "quit", SIGQUIT }, { "reopen", SIGUSR1 },
        { "reload", SIGHUP }, { "stats", SIGUSR2 }, { "cachestats", SIGUSR2 },
    };
    const char *path = slc_cycle_path(cycle, cycle->pid_path);
    FILE       *f;
    int         pid = 0;
    int         printed = slc_print_status(cycle, name);

    if (printed >= 0) {
        return printed;
    }

    for (size_t i = 0; i < slc_nelems(sigs); i++) {
        if (strcmp(sigs[i].name, name) != 0) {
            continue;
        }
        f = fopen(path, "r");
        if (f == NULL || fscanf(f, "%d", &pid) != 1 || pid <= 0) {
            fprintf(stderr, "sluice: cannot read pid from \"%s\"%s\n", path,
                f == NULL ? " (is sluice running?)" : "");
            if (f) fclose(f);
            return 1;
        }
        fclose(f);
        if (kill(pid, sigs[i].signo) == -1) {
            fprintf(stderr, "sluice: kill(%d) failed (%s)\n", pid,
                strerror(errno));
            return 1;
        }
        return 0;
    }
    fprintf(stderr, "sluice: invalid signal \"%s\" (stop, quit, reopen, "
        "reload, status, stats)\n", name);
    return 1;
}

/*
 * The parent waits for the master's word that its pid file is written
 * (slc_master_run's ready_fd) and exits 0, or 1 if the master died first
 * (the reason is in the error log).  Returns the pipe's end for the
 * master.
 */
static int
slc_daemonize(void)
{
    int   ready[2], fd;
    pid_t pid;
    char  c;

    if (pipe2(ready, O_CLOEXEC) == -1 || (pid = fork()) == -1) {
        slc_log_errno(SLC_LOG_EMERG, errno, "daemonizing failed");
        exit(1);
    }
    if (pid > 0) {
        ssize_t n;

        close(ready[1]);
        c = 0;
        do {
            n = read(ready[0], &c, 1);
        } while (n == -1 && errno == EINTR);
        _exit(n == 1 && c == '1' ? 0 : 1);
    }
    close(ready[0]);
    setsid();
    fd = open("/dev/null", O_RDWR);
    if (fd != -1) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        if (fd > STDERR_FILENO) {
            close(fd);
        }
    }
    return ready[1];
}

static slc_cycle_t *
slc_start_cycle(const char *prefix, const char *conf)
{
    slc_cycle_t *cycle;
    char         err[1024];

    cycle = slc_cycle_parse(prefix, conf, 1, err, sizeof(err));
    if (cycle == NULL) {
        fprintf(stderr, "sluice: [emerg] %s\n", err);
        return NULL;
    }
    return cycle;
}

static int
slc_start(slc_cycle_t *cycle)
{
    char err[1024];

    if (slc_log_open(slc_cycle_path(cycle, cycle->error_log), err,
                     sizeof(err)) != SLC_OK)
    {
        fprintf(stderr, "sluice: [emerg] %s\n", err);
        return SLC_ERROR;
    }
    slc_log_level = cycle->log_level;
    if (slc_listen_open_all(cycle->listens, NULL, cycle->master_process
            ? (unsigned) cycle->worker_processes : 1, err, sizeof(err))
        != SLC_OK
        || slc_shm_zones_map(cycle, NULL, err, sizeof(err)) != SLC_OK)
    {
        slc_log(SLC_LOG_EMERG, "%s", err);
        fprintf(stderr, "sluice: [emerg] %s\n", err);
        return SLC_ERROR;
    }
    return SLC_OK;
}

int
main(int argc, char **argv)
{
    slc_opts_t   o = { 0 };
    slc_cycle_t *cycle;
    char         prefix[4096], conf[4096];

    setproctitle_init(argc, argv, environ);
    if (slc_parse_opts(argc, argv, &o) != SLC_OK) {
        return 1;
    }
    if (o.version) {
        printf("sluice version %s\nconfigure arguments:%s%s\nmodules: %s\n",
            SLC_VERSION, slc_configure_args[0] ? " " : "",
            slc_configure_args, slc_module_names);
        return 0;
    }
    if (slc_resolve_paths(&o, prefix, sizeof(prefix), conf, sizeof(conf))
        != SLC_OK)
    {
        fprintf(stderr, "sluice: [emerg] prefix or configuration path is "
            "too long\n");
        return 1;
    }
    cycle = slc_start_cycle(prefix, conf);
    if (cycle == NULL) {
        if (o.test) {
            fprintf(stderr, "sluice: configuration file %s test failed\n",
                conf);
        }
        return 1;
    }
    if (o.test) {
        printf("sluice: the configuration file %s syntax is ok\n"
            "sluice: configuration file %s test is successful\n", conf, conf);
        slc_print_zones(cycle);
        slc_cycle_free(cycle);
        return 0;
    }
    if (o.signal) {
        int rc = slc_send_signal(cycle, o.signal);
        slc_cycle_free(cycle);
        return rc;
    }
    if (slc_start(cycle) != SLC_OK) {
        return 1;
    }
    int ready = cycle->daemon ? slc_daemonize() : -1;

    if (!cycle->master_process) {
        slc_single_run(cycle, ready);
    }
    slc_master_run(cycle, argc, argv, ready);
    return 0;
}
