/*
 * The Redis tier's configuration (slc_cache_redis.h):
 *
 *   mysql {
 *       redis shared {
 *           server 127.0.0.1:6379;          several: a cluster's seeds
 *           server unix:/run/redis.sock;
 *           user sluice; password "...";     AUTH (ACL user optional)
 *           db 0;                            SELECT (not with cluster)
 *           timeout 20ms;                    a request's budget
 *           queue 8m;                        unanswered stores' bytes
 *           prefix "sluice:";                of every key
 *           cluster on;                      a Redis Cluster (default:
 *                                            detected; off: never)
 *           strict off;                      hits checked in Redis
 *       }
 *       cache_redis shared;                  mysql or server level
 *   }
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_log.h"
#include "slc_module.h"
#include "slc_mysql_conf.h"
#include "slc_cache.h"
#include "slc_cache_binlog.h"
#include "slc_role.h"
#include "slc_shm.h"
#include "slc_shmtx.h"
#include "slc_cache_redis.h"
#include "slc_cache_redis_conn.h"
#include "slc_cache_redis_tier.h"
#include "slc_cache_redis_lookup.h"
#include "slc_cache_redis_bump.h"
#include "slc_cache_redis_sub.h"
#include "slc_cache_redis_sync.h"


static void *slc_cache_redis_create_conf(slc_conf_t *cf, unsigned level);
static const char *slc_cache_redis_merge_conf(slc_conf_t *cf,
    unsigned level, void *parent, void *child);
static int  slc_cache_redis_init_conf(slc_cycle_t *cycle, char *err,
    size_t errlen);
static void slc_cache_redis_init_process(slc_cycle_t *cycle,
    const slc_role_t *role);
static void slc_cache_redis_exit_process(slc_cycle_t *cycle,
    const slc_role_t *role);
static const char *slc_cache_redis_block(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static const char *slc_cache_redis_server(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static const char *slc_cache_redis_password(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static const char *slc_cache_redis_use(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static int  slc_cache_redis_bump_sync(const slc_cycle_t *cycle,
    const char *id, const uint32_t *hash, unsigned n, int all);
static void slc_cache_redis_report(slc_cycle_t *cycle);
static int  slc_cache_redis_push_declare(slc_cycle_t *cycle, char *err,
    size_t errlen);

/* The hooks the cache calls: a service is a tier. */
static const slc_cache_remote_t slc_cache_redis_remote = {
    .lookup = slc_cache_redis_lookup,
    .store = slc_cache_redis_store,
    .release = slc_cache_redis_release,
    .invalidate = slc_cache_redis_invalidate,
    .bump_sync = slc_cache_redis_bump_sync,
    .trusted = slc_cache_redis_trusted,
};


static const slc_command_t slc_cache_redis_commands[] = {
    { .name = "redis",
      .type = SLC_CONF_MYSQL | SLC_CONF_BLOCK | SLC_CONF_TAKE1,
      .set = slc_cache_redis_block, .conf = SLC_CONF_MODULE },
    { .name = "cache_redis",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_cache_redis_use, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_redis_conf_t, use) },
    { .name = "server", .type = SLC_CONF_REDIS | SLC_CONF_TAKE1,
      .set = slc_cache_redis_server, .conf = SLC_CONF_MODULE },
    { .name = "user", .type = SLC_CONF_REDIS | SLC_CONF_TAKE1,
      .set = slc_conf_set_cstr_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_redis_service_t, auth)
                + offsetof(slc_monitor_conf_t, user) },
    { .name = "password", .type = SLC_CONF_REDIS | SLC_CONF_TAKE1,
      .set = slc_cache_redis_password, .conf = SLC_CONF_MODULE },
    { .name = "db", .type = SLC_CONF_REDIS | SLC_CONF_TAKE1,
      .set = slc_conf_set_num_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_redis_service_t, db) },
    { .name = "timeout", .type = SLC_CONF_REDIS | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_redis_service_t, timeout) },
    { .name = "queue", .type = SLC_CONF_REDIS | SLC_CONF_TAKE1,
      .set = slc_conf_set_size_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_redis_service_t, queue) },
    { .name = "prefix", .type = SLC_CONF_REDIS | SLC_CONF_TAKE1,
      .set = slc_conf_set_cstr_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_redis_service_t, prefix) },
    { .name = "cluster", .type = SLC_CONF_REDIS | SLC_CONF_FLAG,
      .set = slc_conf_set_flag_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_redis_service_t, cluster) },
    { .name = "strict", .type = SLC_CONF_REDIS | SLC_CONF_FLAG,
      .set = slc_conf_set_flag_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_redis_service_t, strict) },
    { .name = NULL }
};

slc_module_t slc_cache_redis_module = {
    .name = "cache_redis",
    .type = SLC_MODULE_CORE,
    .commands = slc_cache_redis_commands,
    .create_conf = slc_cache_redis_create_conf,
    .merge_conf = slc_cache_redis_merge_conf,
    .init_conf = slc_cache_redis_init_conf,
    .init_process = slc_cache_redis_init_process,
    .exit_process = slc_cache_redis_exit_process,
    .report = slc_cache_redis_report,
};


/* --- the levels ----------------------------------------------------------- */

static void *
slc_cache_redis_service_create(slc_conf_t *cf)
{
    slc_cache_redis_service_t *rs = slc_palloc(cf->pool, sizeof(*rs));

    if (rs == NULL) {
        return SLC_CONF_ERROR;
    }
    memset(rs, 0, sizeof(*rs));
    rs->db = SLC_CONF_UNSET;
    rs->timeout = SLC_CONF_UNSET;
    rs->queue = SLC_CONF_UNSET_SIZE;
    rs->cluster = SLC_CONF_UNSET;
    rs->strict = SLC_CONF_UNSET;
    rs->file = cf->filename;
    rs->line = cf->line;
    return rs;
}

static void *
slc_cache_redis_create_conf(slc_conf_t *cf, unsigned level)
{
    slc_cache_redis_conf_t *rc;

    if (level == SLC_CONF_REDIS) {
        return slc_cache_redis_service_create(cf);
    }
    if (level != SLC_CONF_MYSQL && level != SLC_CONF_SERVER) {
        return NULL;
    }
    rc = slc_palloc(cf->pool, sizeof(*rc));
    if (rc == NULL) {
        return SLC_CONF_ERROR;
    }
    memset(rc, 0, sizeof(*rc));
    return rc;
}

/* A block's settings: defaults, and what does not go together. */
static const char *
slc_cache_redis_service_merge(slc_cache_redis_service_t *rs)
{
    slc_conf_merge_value(rs->cluster, SLC_CONF_UNSET,
                         SLC_REDIS_CLUSTER_DETECT);
    slc_conf_merge_value(rs->strict, SLC_CONF_UNSET, 0);
    slc_conf_merge_value(rs->timeout, SLC_CONF_UNSET, 20);
    if (rs->db != SLC_CONF_UNSET && rs->cluster == 1) {
        return "\"db\" with \"cluster on\": a Redis Cluster has database 0 "
               "only";
    }
    slc_conf_merge_value(rs->db, SLC_CONF_UNSET, 0);
    if (rs->db < 0 || rs->db > 65535) {
        return "\"db\" is not in 0 to 65535";
    }
    slc_conf_merge_size(rs->queue, SLC_CONF_UNSET_SIZE,
                        SLC_REDIS_QUEUE_DEFAULT);
    if (rs->queue < 1024 || rs->queue > ((size_t) 1 << 30)) {
        return "\"queue\" is not in 1k to 1g";
    }
    if (rs->timeout < 1 || rs->timeout > 10000) {
        return "\"timeout\" is not in 1ms to 10s";
    }
    if (rs->prefix == NULL) {
        rs->prefix = "sluice:";
    }
    if (strlen(rs->prefix) > SLC_REDIS_PREFIX_MAX
        || strpbrk(rs->prefix, "{} \t\r\n") != NULL)
    {
        return "\"prefix\" is longer than 64 bytes or holds a brace or a "
               "blank";
    }
    if (rs->auth.user != NULL && rs->auth.password == NULL) {
        return "\"user\" without \"password\"";
    }
    return NULL;
}

static const char *
slc_cache_redis_merge_conf(slc_conf_t *cf, unsigned level, void *parent,
    void *child)
{
    slc_cache_redis_conf_t *prev = parent, *rc = child;

    (void) cf;
    if (level == SLC_CONF_REDIS) {
        return slc_cache_redis_service_merge(child);
    }
    if (level == SLC_CONF_SERVER && rc->use == NULL && prev != NULL) {
        rc->use = prev->use;
        rc->file = prev->file;
        rc->line = prev->line;
        rc->inherited = 1;
    }
    return NULL;
}


/* --- the directives ------------------------------------------------------- */

static slc_cache_redis_service_t *
slc_cache_redis_find(const slc_cache_redis_conf_t *main, const char *name)
{
    for (slc_cache_redis_service_t *rs = main != NULL ? main->services
                                                      : NULL;
         rs != NULL; rs = rs->next)
    {
        if (strcmp(rs->name, name) == 0) {
            return rs;
        }
    }
    return NULL;
}

/* redis NAME { ... } */
static const char *
slc_cache_redis_block(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_cache_redis_conf_t    *main = conf;
    slc_cache_redis_service_t *rs;
    const slc_str_t           *name = &cf->args[1];
    void                     **confs;
    const char                *rv;

    (void) cmd;
    if (name->len == 0 || name->len >= sizeof(rs->name)
        || strspn(name->data, "abcdefghijklmnopqrstuvwxyz"
                  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != name->len)
    {
        return slc_conf_error(cf, "invalid redis name \"%.*s\"",
            (int) slc_min(name->len, (size_t) 64), name->data);
    }
    if (slc_cache_redis_find(main, name->data) != NULL) {
        return slc_conf_error(cf, "duplicate redis \"%s\"", name->data);
    }
    rv = slc_conf_parse_block(cf, SLC_CONF_REDIS, NULL, &confs);
    if (rv != NULL) {
        return rv;
    }
    rs = slc_module_conf(confs, &slc_cache_redis_module);
    strlcpy(rs->name, cf->args[1].data, sizeof(rs->name));
    if (rs->nservers == 0) {
        return slc_conf_error(cf, "no server in redis \"%s\"", rs->name);
    }
    rs->next = main->services;
    main->services = rs;
    return NULL;
}

/* server HOST:PORT | unix:PATH;  (in redis { }) */
static const char *
slc_cache_redis_server(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_cache_redis_service_t *rs = conf;
    slc_cache_redis_server_t  *s;

    (void) cmd;
    if (rs->nservers == SLC_REDIS_SERVERS_MAX) {
        return slc_conf_error(cf, "more than %d servers in a redis block",
            SLC_REDIS_SERVERS_MAX);
    }
    s = &rs->server[rs->nservers];
    if (strlcpy(s->name, cf->args[1].data, sizeof(s->name))
        >= sizeof(s->name))
    {
        return "redis server address is too long";
    }
    rs->nservers++;
    return slc_upstream_conf_sockaddr(cf, cf->args[1].data, &s->addr,
        &s->addrlen);
}

static const char *
slc_cache_redis_password(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_cache_redis_service_t *rs = conf;

    (void) cmd;
    return slc_monitor_secret(cf, "password", &rs->auth);
}


/* cache_redis NAME;  (resolved once the whole file is read) */
static const char *
slc_cache_redis_use(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_cache_redis_conf_t *rc = conf;

    rc->file = cf->filename;
    rc->line = cf->line;
    return slc_conf_set_cstr_slot(cf, cmd, conf);
}


/* --- after the whole file ------------------------------------------------- */

/* Each name a `cache_redis` gives is a service; a server that names one
   itself has the cache in front (mysql {}'s goes to those that do). */
static int
slc_cache_redis_init_conf(slc_cycle_t *cycle, char *err, size_t errlen)
{
    slc_mysql_conf_t       *mc = slc_mysql_conf(cycle);
    slc_cache_redis_conf_t  *main, *rc;
    slc_cache_conf_t        *cc;
    slc_cache_binlog_conf_t *bc;

    if (mc == NULL || mc->mod_conf == NULL) {
        return SLC_OK;
    }
    main = slc_module_conf(mc->mod_conf, &slc_cache_redis_module);
    if (main->use != NULL && slc_cache_redis_find(main, main->use) == NULL) {
        snprintf(err, errlen, "%s:%u: unknown redis \"%s\"", main->file,
            main->line, main->use);
        return SLC_ERROR;
    }
    for (slc_mysql_srv_t *srv = mc->servers; srv != NULL; srv = srv->next) {
        rc = slc_module_conf(srv->mod_conf, &slc_cache_redis_module);
        if (rc == NULL || rc->use == NULL
            || (rc->inherited && !slc_cache_filtered(srv)))
        {
            continue;
        }
        rc->service = slc_cache_redis_find(main, rc->use);
        if (rc->service == NULL) {
            snprintf(err, errlen, "%s:%u: unknown redis \"%s\"", rc->file,
                rc->line, rc->use);
            return SLC_ERROR;
        }
        if (!slc_cache_filtered(srv)) {
            snprintf(err, errlen, "%s:%u: \"cache_redis %s\" needs "
                "\"filters cache\" in its server", rc->file, rc->line,
                rc->use);
            return SLC_ERROR;
        }
        cc = slc_module_conf(srv->mod_conf, &slc_cache_module);
        cc->remote = &slc_cache_redis_remote;
        cc->remote_tier = rc->service;
        cc->remote_strict = rc->service->strict;
        bc = srv->upstream != NULL ? slc_cache_binlog_conf(srv->upstream)
                                   : NULL;
        if (bc == NULL || !bc->on) {
            rc->service->push = 1;      /* learns others' writes pushed */
        }
    }
    return slc_cache_redis_push_declare(cycle, err, errlen);
}


/* --- the services a cycle uses ------------------------------------------- */

/* Into used[0..max), each once: how many. */
static unsigned
slc_cache_redis_services(const slc_cycle_t *cycle,
    const slc_cache_redis_service_t **used, unsigned max)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);
    unsigned          n = 0, k;

    if (mc == NULL || mc->mod_conf == NULL) {
        return 0;
    }
    for (slc_mysql_srv_t *srv = mc->servers; srv != NULL; srv = srv->next) {
        slc_cache_redis_conf_t *rc = slc_module_conf(srv->mod_conf,
                                                     &slc_cache_redis_module);

        if (rc == NULL || rc->service == NULL) {
            continue;
        }
        for (k = 0; k < n && used[k] != rc->service; k++) {
            /* seen? */
        }
        if (k == n && n < max) {
            used[n++] = rc->service;
        }
    }
    return n;
}

/* slc_cache_remote_t.bump_sync: the binlog reader's commit, in each. */
static int
slc_cache_redis_bump_sync(const slc_cycle_t *cycle, const char *id,
    const uint32_t *hash, unsigned n, int all)
{
    const slc_cache_redis_service_t *used[SLC_REDIS_SYNC_MAX];
    unsigned k = slc_cache_redis_services(cycle, used, SLC_REDIS_SYNC_MAX);

    return slc_cache_redis_sync_bumps(used, k, id, hash, n, all);
}

static void
slc_cache_redis_report(slc_cycle_t *cycle)
{
    const slc_cache_redis_service_t *used[SLC_REDIS_SUB_MAX];
    unsigned k = slc_cache_redis_services(cycle, used, SLC_REDIS_SUB_MAX);

    slc_cache_redis_sub_report(used, k);
}


/* --- pushed invalidations: their zone and process (slc_cache_redis_sub.c) - */

/* Each service used gets its entry in the zone (by name: a reload keeps
   it). */
static int
slc_cache_redis_zone_attach(slc_shm_zone_t *z, slc_cycle_t *cycle,
    char *err, size_t errlen)
{
    const slc_cache_redis_service_t *used[SLC_REDIS_SUB_MAX];
    unsigned k = slc_cache_redis_services(cycle, used, SLC_REDIS_SUB_MAX);

    return slc_cache_redis_sub_attach(z->addr, used, k, err, errlen);
}

/* A zone mapped afresh: its lock, registered so that the master frees it
   from a holder that died. */
static void
slc_cache_redis_zone_init(slc_shm_zone_t *z, const void *prev)
{
    slc_cache_redis_zone_t *zn = z->addr;

    (void) prev;
    if (slc_shmtx_create(&zn->lock, z) != SLC_OK) {
        slc_log(SLC_LOG_ALERT, "redis: the zone \"cache_redis\" has no "
            "room for its lock");
    }
}

/* The redis_sub process n: for the n-th service that needs pushes. */
static int
slc_cache_redis_sub_role(slc_cycle_t *cycle, slc_role_t *role, unsigned n)
{
    const slc_cache_redis_service_t *used[SLC_REDIS_SUB_MAX];
    unsigned k = slc_cache_redis_services(cycle, used, SLC_REDIS_SUB_MAX);

    (void) role;
    for (unsigned i = 0, p = 0; i < k; i++) {
        if (used[i]->push && used[i]->sub != NULL && p++ == n) {
            return slc_cache_redis_sub_run(cycle, used[i]);
        }
    }
    slc_log(SLC_LOG_ALERT, "redis_sub: no service %u", n);
    return SLC_ERROR;
}

/* The zone "cache_redis" when a service is used, and a redis_sub process
   per service that needs pushes (init_conf). */
static int
slc_cache_redis_push_declare(slc_cycle_t *cycle, char *err, size_t errlen)
{
    const slc_cache_redis_service_t *used[SLC_REDIS_SUB_MAX];
    unsigned k = slc_cache_redis_services(cycle, used, SLC_REDIS_SUB_MAX);
    unsigned n = 0;
    slc_shm_zone_t *z;
    slc_role_t      role = {
        .name = "redis_sub", .module = &slc_cache_redis_module,
        .init = slc_cache_redis_sub_role,
    };

    if (k == 0) {
        return SLC_OK;
    }
    for (unsigned i = 0; i < k; i++) {
        n += used[i]->push != 0;
    }
    z = slc_shm_zone_add(cycle, "cache_redis",
        sizeof(slc_cache_redis_zone_t), &slc_cache_redis_module, err,
        errlen);
    if (z == NULL) {
        return SLC_ERROR;
    }
    z->init = slc_cache_redis_zone_init;
    z->attach = slc_cache_redis_zone_attach;
    if (n == 0) {
        return SLC_OK;
    }
    role.count = n;
    if (slc_cycle_add_role(cycle, &role) == NULL) {
        snprintf(err, errlen, "cannot declare the redis_sub process");
        return SLC_ERROR;
    }
    return SLC_OK;
}


/* --- a worker ------------------------------------------------------------- */

/* A worker connects to each service a server of its cycle uses, once. */
static void
slc_cache_redis_init_process(slc_cycle_t *cycle, const slc_role_t *role)
{
    const slc_cache_redis_service_t *used[64];
    unsigned                         n;

    if (role != NULL) {
        return;
    }
    n = slc_cache_redis_services(cycle, used, slc_nelems(used));
    if (n > 0 && slc_cache_redis_conns_open(used, n) != SLC_OK) {
        slc_log(SLC_LOG_ALERT, "redis: out of memory: no Redis tier in "
            "this worker");
    }
}

static void
slc_cache_redis_exit_process(slc_cycle_t *cycle, const slc_role_t *role)
{
    (void) cycle;
    if (role == NULL) {
        slc_cache_redis_owed_stop();
        slc_cache_redis_conns_close();
    } else {
        slc_cache_redis_sync_close();
        slc_cache_redis_sub_exit();
    }
}
