#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_cycle.h"
#include "slc_log.h"
#include "slc_role.h"

/* Directives of the main context and events {}. */

static const char *slc_core_worker_processes(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static const char *slc_core_error_log(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static const char *slc_core_events(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static const char *slc_core_worker_connections(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static const char *slc_core_worker_priority(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);

static const slc_conf_enum_t slc_core_sched_policies[] = {
    { "batch", 1 },         /* worker_sched_batch */
    { "other", 0 },
    { NULL, 0 }
};

static const slc_command_t slc_core_commands[] = {
    { .name = "worker_processes", .type = SLC_CONF_MAIN | SLC_CONF_TAKE1,
      .set = slc_core_worker_processes },
    { .name = "error_log", .type = SLC_CONF_MAIN | SLC_CONF_TAKE12,
      .set = slc_core_error_log },
    { .name = "pid", .type = SLC_CONF_MAIN | SLC_CONF_TAKE1,
      .set = slc_conf_set_cstr_slot,
      .offset = offsetof(slc_cycle_t, pid_path) },
    { .name = "daemon", .type = SLC_CONF_MAIN | SLC_CONF_FLAG,
      .set = slc_conf_set_flag_slot,
      .offset = offsetof(slc_cycle_t, daemon) },
    { .name = "master_process", .type = SLC_CONF_MAIN | SLC_CONF_FLAG,
      .set = slc_conf_set_flag_slot,
      .offset = offsetof(slc_cycle_t, master_process) },
    { .name = "worker_shutdown_timeout",
      .type = SLC_CONF_MAIN | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot,
      .offset = offsetof(slc_cycle_t, shutdown_timeout) },
    { .name = "worker_rlimit_nofile", .type = SLC_CONF_MAIN | SLC_CONF_TAKE1,
      .set = slc_conf_set_num_slot,
      .offset = offsetof(slc_cycle_t, rlimit_nofile) },
    { .name = "worker_priority", .type = SLC_CONF_MAIN | SLC_CONF_TAKE1,
      .set = slc_core_worker_priority },
    { .name = "worker_sched_policy", .type = SLC_CONF_MAIN | SLC_CONF_TAKE1,
      .set = slc_conf_set_enum_slot,
      .offset = offsetof(slc_cycle_t, worker_sched_batch),
      .post = slc_core_sched_policies },
    { .name = "events", .type = SLC_CONF_MAIN | SLC_CONF_BLOCK
      | SLC_CONF_NOARGS, .set = slc_core_events },
    { .name = "worker_connections", .type = SLC_CONF_EVENTS | SLC_CONF_TAKE1,
      .set = slc_core_worker_connections },
    { .name = NULL }
};

slc_module_t slc_core_module = {
    .name = "core",
    .type = SLC_MODULE_CORE,
    .commands = slc_core_commands,
};

static const char *
slc_core_worker_processes(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_cycle_t *cycle = conf;
    long long    n;

    (void) cmd;
    if (strcmp(cf->args[1].data, "auto") == 0) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        cycle->worker_processes = ncpu > 0 ? (int) ncpu : 1;
        return NULL;
    }
    n = slc_conf_parse_int(&cf->args[1]);
    if (n < 1 || n > 1024) {
        return slc_conf_error(cf, "invalid worker_processes \"%s\" "
            "(a number from 1 to 1024, or auto)", cf->args[1].data);
    }
    cycle->worker_processes = (int) n;
    return NULL;
}

static const char *
slc_core_worker_priority(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_cycle_t *cycle = conf;
    long long    n;

    (void) cmd;
    if (slc_conf_parse_signed(&cf->args[1], -20, 19, &n) != SLC_OK) {
        return slc_conf_error(cf, "invalid worker_priority \"%s\" "
            "(a nice value from -20 to 19)", cf->args[1].data);
    }
    cycle->worker_priority = (int) n;
    return NULL;
}

static const char *
slc_core_error_log(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_cycle_t *cycle = conf;

    (void) cmd;
    cycle->error_log = slc_pstrndup(cf->pool, cf->args[1].data,
        cf->args[1].len);
    if (cf->nargs == 3) {
        int level = slc_log_level_parse(cf->args[2].data);
        if (level < 0) {
            return slc_conf_error(cf, "unknown log level \"%s\" (debug, "
                "info, notice, warn, error, crit, alert)", cf->args[2].data);
        }
        cycle->log_level = level;
    }
    return NULL;
}

static const char *
slc_core_events(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    (void) cmd;
    return slc_conf_parse_block(cf, SLC_CONF_EVENTS, conf, NULL);
}

static const char *
slc_core_worker_connections(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_cycle_t *cycle = conf;
    long long    n = slc_conf_parse_int(&cf->args[1]);

    (void) cmd;
    if (n < 1 || n > 10000000) {
        return slc_conf_error(cf, "invalid worker_connections \"%s\"",
            cf->args[1].data);
    }
    cycle->worker_connections = (unsigned) n;
    return NULL;
}

const char *
slc_cycle_path(slc_cycle_t *cycle, const char *path)
{
    size_t  n;
    char   *p;

    if (path[0] == '/') {
        return path;
    }
    n = strlen(cycle->prefix) + strlen(path) + 1;
    p = slc_palloc(cycle->pool, n);
    if (p != NULL) {
        snprintf(p, n, "%s%s", cycle->prefix, path);
    }
    return p;
}

slc_role_t *
slc_cycle_add_role(slc_cycle_t *cycle, const slc_role_t *role)
{
    slc_role_t **last = &cycle->roles;
    slc_role_t  *r;

    for (r = cycle->roles; r != NULL; r = r->next) {
        if (strcmp(r->name, role->name) == 0) {
            return NULL;
        }
        last = &r->next;
    }
    r = slc_palloc(cycle->pool, sizeof(*r));
    if (r == NULL) {
        return NULL;
    }
    *r = *role;
    r->next = NULL;
    *last = r;
    return r;
}

static void
slc_cycle_defaults(slc_cycle_t *cycle)
{
    cycle->worker_processes = 1;
    cycle->daemon = 1;
    cycle->master_process = 1;
    cycle->pid_path = "logs/sluice.pid";
    cycle->error_log = "logs/error.log";
    cycle->log_level = SLC_LOG_NOTICE;
    cycle->shutdown_timeout = 10000;
    cycle->worker_connections = 1024;
    cycle->worker_sched_batch = 1;
    cycle->worker_priority = SLC_NICE_UNSET;
}

static int
slc_cycle_init_modules(slc_cycle_t *cycle, char *err, size_t errlen)
{
    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i]->init_conf == NULL) {
            continue;
        }
        if (slc_modules[i]->init_conf(cycle, err, errlen) != SLC_OK) {
            return SLC_ERROR;
        }
    }
    return SLC_OK;
}

slc_cycle_t *
slc_cycle_parse(const char *prefix, const char *conf_file,
    unsigned generation, char *err, size_t errlen)
{
    slc_pool_t  *pool = slc_pool_create(16384);
    slc_cycle_t *cycle;
    slc_conf_t  *cf;

    if (pool == NULL || (cycle = slc_palloc(pool, sizeof(*cycle))) == NULL
        || (cf = slc_palloc(pool, sizeof(*cf))) == NULL)
    {
        snprintf(err, errlen, "out of memory");
        slc_pool_destroy(pool);
        return NULL;
    }
    cycle->pool = pool;
    cycle->generation = generation;
    cycle->prefix = slc_pstrndup(pool, prefix, strlen(prefix));
    cycle->conf_file = slc_pstrndup(pool, conf_file, strlen(conf_file));
    slc_cycle_defaults(cycle);

    cf->pool = pool;
    cf->cycle = cycle;
    cf->ctx = cycle;
    cf->ctx_type = SLC_CONF_MAIN;
    cycle->mod_conf = slc_conf_main_confs(cf);
    if (cycle->mod_conf == NULL
        || slc_conf_parse_file(cf, conf_file) != SLC_OK)
    {
        snprintf(err, errlen, "%s", cf->err);
        slc_pool_destroy(pool);
        return NULL;
    }
    if (slc_cycle_init_modules(cycle, err, errlen) != SLC_OK) {
        slc_pool_destroy(pool);
        return NULL;
    }
    return cycle;
}

void
slc_cycle_free(slc_cycle_t *cycle)
{
    if (cycle != NULL) {
        slc_pool_destroy(cycle->pool);
    }
}
