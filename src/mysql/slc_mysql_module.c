/*
 * The mysql module: its table of directives (handlers in
 * slc_mysql_conf.c and upstream/slc_mysql_upstream_conf.c) and its hooks:
 * the conf of each level, the zones it needs once the file is parsed,
 * each process's buffers, a dead worker's share of the shared counters,
 * and a reload's handover of sessions.
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_mysql_conf.h"
#include "slc_mysql_digests.h"
#include "slc_mysql_digests_show.h"
#include "slc_mysql_forward.h"
#include "slc_mysql_handover.h"
#include "slc_mysql_registry.h"
#include "slc_mysql_session.h"
#include "slc_mysql_session_admin.h"
#include "slc_mysql_traffic.h"
#include "slc_mysql_upstream_admin.h"
#include "slc_mysql_upstream_metrics.h"
#include "slc_worker.h"

static void slc_mysql_metrics(const slc_cycle_t *cycle,
    struct slc_metrics_s *m);
static int slc_mysql_init_conf(slc_cycle_t *cycle, char *err, size_t errlen);
static void slc_mysql_registry_zone_init(slc_shm_zone_t *z, const void *prev);
static void slc_mysql_reap_process(slc_cycle_t *cycle, unsigned proc);
static void slc_mysql_reap_pid(slc_cycle_t *cycle, pid_t pid);
static int  slc_mysql_digests_zone(slc_cycle_t *cycle, slc_mysql_conf_t *mc,
    char *err, size_t errlen);
static void slc_mysql_init_process(slc_cycle_t *cycle,
    const slc_role_t *role);
static void *slc_mysql_create_conf(slc_conf_t *cf, unsigned level);
static const char *slc_mysql_merge_conf(slc_conf_t *cf, unsigned level,
    void *parent, void *child);

static const slc_conf_enum_t slc_mysql_auth_kinds[] = {
    { "local", SLC_AUTH_LOCAL },
    { "passthrough", SLC_AUTH_PASSTHROUGH },
    { NULL, 0 }
};

static const slc_command_t slc_mysql_commands[] = {
    { .name = "mysql", .type = SLC_CONF_MAIN | SLC_CONF_BLOCK
      | SLC_CONF_NOARGS, .set = slc_mysql_block, .conf = SLC_CONF_MODULE },
    { .name = "buffer_size", .type = SLC_CONF_MYSQL | SLC_CONF_TAKE1,
      .set = slc_mysql_buffer_size },
    { .name = "digests", .type = SLC_CONF_MYSQL | SLC_CONF_SERVER
      | SLC_CONF_1MORE, .set = slc_mysql_digests, .conf = SLC_CONF_MODULE },
    { .name = "digest_top", .type = SLC_CONF_MYSQL | SLC_CONF_TAKE1,
      .set = slc_mysql_digest_top },
    { .name = "digest_metrics", .type = SLC_CONF_MYSQL | SLC_CONF_TAKE1,
      .set = slc_mysql_digest_metrics },
    { .name = "user", .type = SLC_CONF_MYSQL | SLC_CONF_BLOCK
      | SLC_CONF_TAKE1, .set = slc_mysql_user },
    { .name = "password", .type = SLC_CONF_USER | SLC_CONF_TAKE1,
      .set = slc_mysql_password, .post = "plain" },
    { .name = "password_hash", .type = SLC_CONF_USER | SLC_CONF_TAKE1,
      .set = slc_mysql_password },
    { .name = "upstream", .type = SLC_CONF_MYSQL | SLC_CONF_BLOCK
      | SLC_CONF_TAKE1, .set = slc_mysql_upstream_block },
    { .name = "server", .type = SLC_CONF_UPSTREAM | SLC_CONF_1MORE,
      .set = slc_mysql_upstream_server },
    { .name = "server", .type = SLC_CONF_MYSQL | SLC_CONF_BLOCK
      | SLC_CONF_NOARGS, .set = slc_mysql_server_block },
    { .name = "listen", .type = SLC_CONF_SERVER | SLC_CONF_TAKE12,
      .set = slc_mysql_listen },
    { .name = "router", .type = SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_mysql_router },
    { .name = "upstream", .type = SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_mysql_upstream_ref },
    { .name = "filters", .type = SLC_CONF_SERVER | SLC_CONF_1MORE,
      .set = slc_mysql_filters },
    { .name = "rule", .type = SLC_CONF_SERVER | SLC_CONF_BLOCK
      | SLC_CONF_TAKE1, .set = slc_mysql_rule_block },
    { .name = "rule_match_limit", .type = SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_mysql_rule_match_limit },
    { .name = "match_text", .type = SLC_CONF_RULE | SLC_CONF_TAKE1,
      .set = slc_mysql_rule_directive },
    { .name = "match_digest", .type = SLC_CONF_RULE | SLC_CONF_TAKE1,
      .set = slc_mysql_rule_directive },
    { .name = "match_user", .type = SLC_CONF_RULE | SLC_CONF_TAKE1,
      .set = slc_mysql_rule_directive },
    { .name = "match_db", .type = SLC_CONF_RULE | SLC_CONF_TAKE1,
      .set = slc_mysql_rule_directive },
    { .name = "match_table", .type = SLC_CONF_RULE | SLC_CONF_TAKE1,
      .set = slc_mysql_rule_directive },
    { .name = "match_schema", .type = SLC_CONF_RULE | SLC_CONF_TAKE1,
      .set = slc_mysql_rule_directive },
    { .name = "route", .type = SLC_CONF_RULE | SLC_CONF_TAKE1,
      .set = slc_mysql_rule_directive },
    { .name = "block",
      .type = SLC_CONF_RULE | SLC_CONF_NOARGS | SLC_CONF_TAKE12,
      .set = slc_mysql_rule_directive },
    { .name = "rewrite", .type = SLC_CONF_RULE | SLC_CONF_TAKE1,
      .set = slc_mysql_rule_directive },
    { .name = "cache_ttl", .type = SLC_CONF_RULE | SLC_CONF_TAKE1,
      .set = slc_mysql_rule_directive },
    { .name = "no_cache", .type = SLC_CONF_RULE | SLC_CONF_NOARGS,
      .set = slc_mysql_rule_directive },
    { .name = "cache_unknown_tables", .type = SLC_CONF_RULE | SLC_CONF_NOARGS,
      .set = slc_mysql_rule_directive },
    { .name = "cache_stored_functions", .type = SLC_CONF_RULE | SLC_CONF_NOARGS,
      .set = slc_mysql_rule_directive },
    { .name = "continue", .type = SLC_CONF_RULE | SLC_CONF_NOARGS,
      .set = slc_mysql_rule_directive },
    { .name = "auth",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_enum_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_mysql_srv_conf_t, auth),
      .post = slc_mysql_auth_kinds },
    { .name = "server_version",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_cstr_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_mysql_srv_conf_t, server_version) },
    { .name = "connect_timeout",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_mysql_srv_conf_t, timeouts.connect_timeout) },
    { .name = "auth_timeout",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_mysql_srv_conf_t, timeouts.auth_timeout) },
    { .name = "idle_timeout",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_mysql_srv_conf_t, timeouts.idle_timeout) },
    { .name = "max_handshakes",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_num_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_mysql_srv_conf_t, max_handshakes) },
    { .name = "max_handshakes_per_host",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_num_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_mysql_srv_conf_t, max_handshakes_per_host) },
    { .name = "auth_failure_threshold",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_num_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_mysql_srv_conf_t, auth_failure_threshold) },
    { .name = "auth_failure_delay",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_mysql_srv_conf_t, auth_failure_delay) },
    { .name = "auth_failure_max_delay",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_mysql_srv_conf_t, auth_failure_max_delay) },
    { .name = NULL }
};

/* The admin socket's commands of servers and sessions. */
static const slc_admin_command_t slc_mysql_admin_commands[] = {
    { .name = "show servers", .level = SLC_ADMIN_READ, .usage = "",
      .help = "every upstream server: role, state, admin state, lag, "
              "connections", .run = slc_upstream_admin_show },
    { .name = "show sessions", .level = SLC_ADMIN_READ, .usage = "[N]",
      .help = "the first N sessions of all workers (100)",
      .run = slc_session_admin_show },
    { .name = "server", .level = SLC_ADMIN_OPERATOR,
      .usage = "NAME drain|disable|enable",
      .help = "no new sessions or reads there; and close the sessions "
              "there at rest; as configured (until the next reload)",
      .run = slc_upstream_admin_server },
    { .name = "show digests", .level = SLC_ADMIN_READ, .usage = "[N]",
      .help = "the top N query digests of all workers (20)",
      .run = slc_digests_show },
    { .name = "digests reset", .level = SLC_ADMIN_OPERATOR, .usage = "",
      .help = "empty the digests", .run = slc_digests_reset_cmd },
    { .name = "kill session", .level = SLC_ADMIN_ADMIN, .usage = "ID",
      .help = "close the session whose client has this connection id",
      .run = slc_session_admin_kill },
    { .name = NULL }
};

slc_module_t slc_mysql_module = {
    .name = "mysql",
    .type = SLC_MODULE_CORE,
    .commands = slc_mysql_commands,
    .create_conf = slc_mysql_create_conf,
    .merge_conf = slc_mysql_merge_conf,
    .init_conf = slc_mysql_init_conf,
    .reap_process = slc_mysql_reap_process,
    .reap_pid = slc_mysql_reap_pid,
    .init_process = slc_mysql_init_process,
    .conn_count = slc_sessions_count,
    .close_idle = slc_sessions_close_idle,
    .handover = slc_mysql_handover_start,
    .handover_recv = slc_mysql_handover_recv,
    .metrics = slc_mysql_metrics,
    .status_json = slc_digests_json,
    .admin = slc_mysql_admin_commands,
};

/* GET /metrics: the servers' families, then the listeners'. */
static void
slc_mysql_metrics(const slc_cycle_t *cycle, struct slc_metrics_s *m)
{
    slc_upstream_metrics(cycle, m);
    slc_traffic_metrics(cycle, m);
    slc_digests_metrics(cycle, m);
}

/* The buffers of a worker (or of a role, which may talk to servers too)
   are buffer_size bytes, 256 kept on the free list; its sessions forward
   through the cmd floor. */
static void
slc_mysql_init_process(slc_cycle_t *cycle, const slc_role_t *role)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);

    slc_buf_setup(mc != NULL ? mc->buffer_size : 16384, 256);
    slc_session_forward_set(&slc_forward);
    if (role == NULL) {
        slc_traffic_bind(cycle, slc_worker_slot, slc_worker_proc);
        slc_digests_bind(cycle);
        slc_session_admin_start(cycle);
    }
}

/*
 * The merged conf (complete once the whole file is parsed) into the
 * fields of the server that the session code reads.
 */
static void
slc_mysql_srv_settle(slc_mysql_srv_t *srv)
{
    const slc_mysql_srv_conf_t *c;

    c = slc_module_conf(srv->mod_conf, &slc_mysql_module);
    srv->timeouts = &c->timeouts;
    srv->auth = c->auth;
    srv->server_version = c->server_version;
    srv->max_handshakes = c->max_handshakes;
    srv->max_handshakes_per_host = c->max_handshakes_per_host;
    srv->auth_failure_threshold = c->auth_failure_threshold;
    srv->auth_failure_delay = c->auth_failure_delay;
    srv->auth_failure_max_delay = c->auth_failure_max_delay;
    srv->digests = (unsigned) c->digests;
}

/* Every value a server {} can inherit starts unset. */
static const slc_mysql_srv_conf_t  slc_mysql_srv_conf_unset = {
    .timeouts = {
        .connect_timeout = SLC_CONF_UNSET,
        .auth_timeout = SLC_CONF_UNSET,
        .idle_timeout = SLC_CONF_UNSET,
    },
    .auth = SLC_CONF_UNSET,
    .server_version = SLC_CONF_UNSET_PTR,
    .max_handshakes = SLC_CONF_UNSET,
    .max_handshakes_per_host = SLC_CONF_UNSET,
    .auth_failure_threshold = SLC_CONF_UNSET,
    .auth_failure_delay = SLC_CONF_UNSET,
    .auth_failure_max_delay = SLC_CONF_UNSET,
    .digests = SLC_CONF_UNSET,
};

/* Main level: the slc_mysql_conf_t that a mysql {} block fills.  Mysql
   and server levels: the values a server inherits. */
static void *
slc_mysql_create_conf(slc_conf_t *cf, unsigned level)
{
    slc_mysql_conf_t     *mc;
    slc_mysql_srv_conf_t *c;

    if (level == SLC_CONF_MAIN) {
        mc = slc_palloc(cf->pool, sizeof(*mc));
        if (mc == NULL) {
            return SLC_CONF_ERROR;
        }
        mc->buffer_size = 16384;
        mc->digest_top = 1000;
        slc_hash_init(&mc->user_hash, cf->pool);
        return mc;
    }
    if (level != SLC_CONF_MYSQL && level != SLC_CONF_SERVER) {
        return NULL;
    }
    c = slc_palloc(cf->pool, sizeof(*c));
    if (c == NULL) {
        return SLC_CONF_ERROR;
    }
    *c = slc_mysql_srv_conf_unset;
    return c;
}

/*
 * A server takes what it does not set from mysql {}, which took the
 * defaults for what it does not set.  (The parent of mysql {} is the main
 * level's slc_mysql_conf_t: nothing to inherit from it.)
 */
static const char *
slc_mysql_merge_conf(slc_conf_t *cf, unsigned level, void *parent,
    void *child)
{
    const slc_mysql_srv_conf_t *prev = &slc_mysql_srv_conf_unset;
    slc_mysql_srv_conf_t       *c = child;

    (void) cf;
    if (level == SLC_CONF_SERVER && parent != NULL) {
        prev = parent;
    }
    slc_conf_merge_value(c->timeouts.connect_timeout,
                         prev->timeouts.connect_timeout, 5000);
    slc_conf_merge_value(c->timeouts.auth_timeout,
                         prev->timeouts.auth_timeout, 10000);
    slc_conf_merge_value(c->timeouts.idle_timeout,
                         prev->timeouts.idle_timeout, 0);
    slc_conf_merge_value(c->auth, prev->auth, SLC_AUTH_LOCAL);
    slc_conf_merge_ptr(c->server_version, prev->server_version, NULL);
    /* below the 151 max_connections of a default MySQL/MariaDB server,
       so clients that never finish their handshake cannot fill it */
    slc_conf_merge_value(c->max_handshakes, prev->max_handshakes, 100);
    /* per worker: with up to 3 workers one address stays under 100 */
    slc_conf_merge_value(c->max_handshakes_per_host,
                         prev->max_handshakes_per_host, 32);
    /* MySQL's connection_control: 3 failures, then delays from 1s */
    slc_conf_merge_value(c->auth_failure_threshold,
                         prev->auth_failure_threshold, 3);
    slc_conf_merge_value(c->auth_failure_delay, prev->auth_failure_delay,
                         1000);
    slc_conf_merge_value(c->auth_failure_max_delay,
                         prev->auth_failure_max_delay, 4000);
    slc_conf_merge_value(c->digests, prev->digests, 0);
    return NULL;
}

/* The stats zone's attach hook: every upstream server to its slot. */
static int
slc_mysql_stats_attach(slc_shm_zone_t *z, slc_cycle_t *cycle, char *err,
    size_t errlen)
{
    return slc_upstream_stats_attach(slc_mysql_conf(cycle), z, err, errlen);
}

static int
slc_mysql_init_conf(slc_cycle_t *cycle, char *err, size_t errlen)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);

    if (mc == NULL) {
        return SLC_OK;
    }
    for (slc_mysql_srv_t *srv = mc->servers; srv != NULL; srv = srv->next) {
        slc_mysql_srv_settle(srv);
        if (slc_mysql_check_srv(mc, srv, err, errlen) != SLC_OK) {
            return SLC_ERROR;
        }
    }
    mc->stats_zone = slc_shm_zone_add(cycle, "mysql_stats",
        SLC_STATS_MAX * sizeof(slc_server_stats_t), &slc_mysql_module, err,
        errlen);
    if (mc->stats_zone == NULL) {
        return SLC_ERROR;
    }
    /* runs once held_zone is mapped too: attach hooks come after all maps */
    mc->stats_zone->attach = slc_mysql_stats_attach;
    /* 4096 processes x 1024 servers x 8 bytes: 32 MiB of address space,
       of which a process touches one 8 KiB row (its own) */
    mc->held_zone = slc_shm_zone_add(cycle, "mysql_held",
        (size_t) SLC_PROC_MAX * SLC_STATS_MAX * sizeof(slc_held_t),
        &slc_mysql_module, err, errlen);
    if (mc->held_zone == NULL) {
        return SLC_ERROR;
    }
    /* every session of every worker, and as many of an older generation
       still draining after a reload */
    mc->registry_zone = slc_shm_zone_add(cycle, "mysql_sessions",
        slc_registry_size(2 * (uint64_t) cycle->worker_processes
                          * cycle->worker_connections),
        &slc_mysql_module, err, errlen);
    if (mc->registry_zone == NULL) {
        return SLC_ERROR;
    }
    mc->registry_zone->init = slc_mysql_registry_zone_init;
    mc->traffic_zone = slc_shm_zone_add(cycle, "mysql_traffic",
        slc_traffic_zone_size(), &slc_mysql_module, err, errlen);
    if (mc->traffic_zone == NULL) {
        return SLC_ERROR;
    }
    mc->traffic_zone->attach = slc_traffic_attach;
    mc->admin_zone = slc_shm_zone_add(cycle, "mysql_admin",
        sizeof(slc_upstream_admin_zone_t), &slc_mysql_module, err, errlen);
    if (mc->admin_zone == NULL) {
        return SLC_ERROR;
    }
    mc->admin_zone->attach = slc_upstream_admin_attach;
    return slc_mysql_digests_zone(cycle, mc, err, errlen);
}

/* The digests' zone, when a server block keeps digests. */
static int
slc_mysql_digests_zone(slc_cycle_t *cycle, slc_mysql_conf_t *mc, char *err,
    size_t errlen)
{
    int wanted = 0;

    for (slc_mysql_srv_t *srv = mc->servers; srv != NULL; srv = srv->next) {
        wanted |= srv->digests != 0;
    }
    if (!wanted) {
        return SLC_OK;
    }
    mc->digests_zone = slc_shm_zone_add(cycle, "mysql_digests",
        slc_digests_zone_size((unsigned) mc->digest_top,
                              (unsigned) cycle->worker_processes),
        &slc_mysql_module, err, errlen);
    if (mc->digests_zone == NULL) {
        return SLC_ERROR;
    }
    mc->digests_zone->attach = slc_digests_attach;
    return SLC_OK;
}

static void
slc_mysql_registry_zone_init(slc_shm_zone_t *z, const void *prev)
{
    slc_registry_init(z->addr, z->size, prev);
}

/* A dead worker's digests region is free for another. */
static void
slc_mysql_reap_pid(slc_cycle_t *cycle, pid_t pid)
{
    slc_digests_reap(cycle, pid);
}

/* A dead worker's backend connections and registry entries go back. */
static void
slc_mysql_reap_process(slc_cycle_t *cycle, unsigned proc)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);

    if (mc != NULL) {
        slc_upstream_stats_reap(mc, proc);
        slc_traffic_reap(cycle, proc);
    }
    if (mc != NULL && mc->registry_zone != NULL
        && mc->registry_zone->addr != NULL)
    {
        (void) slc_registry_reap(mc->registry_zone->addr, proc);
    }
}
