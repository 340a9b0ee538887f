/*
 * The cache filter module: its directives, its zones and the counters it
 * keeps in them (docs/architecture.md, "The query cache";
 * docs/directives.md, "cache module").
 *
 *   mysql {
 *       cache_zone qc size=256m;        a zone of the master's, carried
 *                                       over by a reload of the same size
 *       server {
 *           filters cache;
 *           cache qc;
 *           cache_ttl 10s; cache_rule ...;
 *       }
 *   }
 *
 * Each zone is a slab pool with the store laid over it
 * (slc_cache_store.h) and the filter's own counters beside it
 * (slc_cache_user): what was not cacheable and why, what was not stored
 * and why, and per rule.  `sluice -s stats` makes the master log them.
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_cycle.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_module.h"
#include "slc_mysql_conf.h"
#include "slc_slab.h"
#include "slc_cache.h"
#include "slc_cache_admin.h"
#include "slc_cache_metrics.h"
#include "slc_cache_binlog.h"
#include "slc_mysql_catalog.h"

static void *slc_cache_create_conf(slc_conf_t *cf, unsigned level);
static const char *slc_cache_merge_conf(slc_conf_t *cf, unsigned level,
    void *parent, void *child);
static int  slc_cache_init_conf(slc_cycle_t *cycle, char *err,
    size_t errlen);
static void slc_cache_reap_pid(slc_cycle_t *cycle, pid_t pid);
static void slc_cache_report(slc_cycle_t *cycle);
static void slc_cache_metrics_hook(const slc_cycle_t *cycle,
    slc_metrics_t *m);
static const char *slc_cache_zone_directive(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static const char *slc_cache_use_directive(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static const char *slc_cache_rule_directive(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);

static const slc_conf_enum_t slc_cache_users[] = {
    { "isolated", 0 },
    { "shared", 1 },
    { NULL, 0 }
};

static const slc_command_t slc_cache_commands[] = {
    { .name = "cache_zone", .type = SLC_CONF_MYSQL | SLC_CONF_TAKE2,
      .set = slc_cache_zone_directive, .conf = SLC_CONF_MODULE },
    { .name = "cache",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_cache_use_directive, .conf = SLC_CONF_MODULE },
    { .name = "cache_ttl",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_conf_t, ttl) },
    { .name = "cache_soft_ttl",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_conf_t, soft_ttl) },
    { .name = "cache_max_entry_size",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_size_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_conf_t, max_entry) },
    { .name = "cache_wait_timeout",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_conf_t, wait) },
    { .name = "cache_warnings",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_FLAG,
      .set = slc_conf_set_flag_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_conf_t, warnings) },
    { .name = "cache_users",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_enum_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_conf_t, shared),
      .post = slc_cache_users },
    { .name = "cache_rule", .type = SLC_CONF_SERVER | SLC_CONF_2MORE,
      .set = slc_cache_rule_directive, .conf = SLC_CONF_MODULE },
    /* the binlog source, at the upstream level (slc_cache_binlog.c) */
    { .name = "binlog", .type = SLC_CONF_UPSTREAM | SLC_CONF_FLAG,
      .set = slc_cache_binlog_on, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_binlog_conf_t, on) },
    { .name = "binlog_user", .type = SLC_CONF_UPSTREAM | SLC_CONF_TAKE1,
      .set = slc_conf_set_cstr_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_binlog_conf_t, account)
                + offsetof(slc_monitor_conf_t, user) },
    { .name = "binlog_password", .type = SLC_CONF_UPSTREAM | SLC_CONF_TAKE1,
      .set = slc_cache_binlog_password, .conf = SLC_CONF_MODULE },
    { .name = "binlog_server_id",
      .type = SLC_CONF_UPSTREAM | SLC_CONF_TAKE1,
      .set = slc_conf_set_num_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_binlog_conf_t, server_id) },
    { .name = "binlog_lost", .type = SLC_CONF_UPSTREAM | SLC_CONF_TAKE1,
      .set = slc_conf_set_enum_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_cache_binlog_conf_t, lost),
      .post = slc_cache_binlog_lost_names },
    { .name = NULL }
};

slc_module_t slc_cache_module = {
    .name = "cache",
    .type = SLC_MODULE_FILTER,
    .commands = slc_cache_commands,
    .filter = &slc_cache_filter,
    .create_conf = slc_cache_create_conf,
    .merge_conf = slc_cache_merge_conf,
    .init_conf = slc_cache_init_conf,
    .reap_pid = slc_cache_reap_pid,
    .report = slc_cache_report,
    .metrics = slc_cache_metrics_hook,
    .exit_process = slc_cache_binlog_exit,
    .admin = slc_cache_admin_commands,
};


/* --- configuration ------------------------------------------------------- */

static void *
slc_cache_create_conf(slc_conf_t *cf, unsigned level)
{
    slc_cache_conf_t *cc;

    if (level == SLC_CONF_UPSTREAM) {
        return slc_cache_binlog_create_conf(cf);
    }
    if (level != SLC_CONF_MYSQL && level != SLC_CONF_SERVER) {
        return NULL;
    }
    cc = slc_palloc(cf->pool, sizeof(*cc));
    if (cc == NULL) {
        return SLC_CONF_ERROR;
    }
    cc->zone = SLC_CONF_UNSET_PTR;
    cc->ttl = SLC_CONF_UNSET;
    cc->soft_ttl = SLC_CONF_UNSET;
    cc->max_entry = SLC_CONF_UNSET_SIZE;
    cc->wait = SLC_CONF_UNSET;
    cc->warnings = SLC_CONF_UNSET;
    cc->shared = SLC_CONF_UNSET;
    cc->file = cf->filename;
    cc->line = cf->line;
    return cc;
}

static const char *
slc_cache_merge_conf(slc_conf_t *cf, unsigned level, void *parent,
    void *child)
{
    const slc_cache_conf_t *prev = parent;
    slc_cache_conf_t       *cc = child;

    (void) cf;
    if (level == SLC_CONF_UPSTREAM) {
        return slc_cache_binlog_merge_conf(child);
    }
    slc_conf_merge_ptr(cc->zone, prev != NULL ? prev->zone
                                              : SLC_CONF_UNSET_PTR, NULL);
    slc_conf_merge_value(cc->ttl, prev != NULL ? prev->ttl
                                               : SLC_CONF_UNSET, 10000);
    slc_conf_merge_value(cc->soft_ttl, prev != NULL ? prev->soft_ttl
                                                    : SLC_CONF_UNSET, 0);
    slc_conf_merge_size(cc->max_entry, prev != NULL ? prev->max_entry
        : SLC_CONF_UNSET_SIZE, (size_t) 1024 * 1024);
    slc_conf_merge_value(cc->wait, prev != NULL ? prev->wait
                                                : SLC_CONF_UNSET, 1000);
    slc_conf_merge_value(cc->warnings, prev != NULL ? prev->warnings
                                                    : SLC_CONF_UNSET, 0);
    slc_conf_merge_value(cc->shared, prev != NULL ? prev->shared
                                                  : SLC_CONF_UNSET, 0);
    if (cc->max_entry > SLC_CACHE_MAX_ENTRY) {
        return "cache_max_entry_size is more than 16m - 1";
    }
    if (cc->soft_ttl > 0 && cc->soft_ttl >= cc->ttl) {
        return "cache_soft_ttl is not less than cache_ttl";
    }
    return NULL;
}

/* The mysql {} level's conf, where the zones are listed. */
static slc_cache_conf_t *
slc_cache_main(const slc_cycle_t *cycle)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);

    return mc != NULL && mc->mod_conf != NULL
           ? slc_module_conf(mc->mod_conf, &slc_cache_module) : NULL;
}

/* cache_zone NAME size=SIZE; */
static const char *
slc_cache_zone_directive(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_cache_conf_t *cc = conf;
    slc_cache_zone_t *z;
    const slc_str_t  *name = &cf->args[1], *sz = &cf->args[2];
    slc_str_t         v;
    long long         size;

    (void) cmd;
    if (name->len == 0 || name->len >= sizeof(z->name)
        || strspn(name->data, "abcdefghijklmnopqrstuvwxyz"
                  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != name->len)
    {
        return slc_conf_error(cf, "invalid cache zone name \"%.*s\"",
            (int) slc_min(name->len, (size_t) 64), name->data);
    }
    for (z = cc->zones; z != NULL; z = z->next) {
        if (strcmp(z->name, name->data) == 0) {
            return slc_conf_error(cf, "cache zone \"%s\" is declared "
                "twice", z->name);
        }
    }
    if (sz->len <= 5 || strncmp(sz->data, "size=", 5) != 0) {
        return "needs size=SIZE (64m, 1g...)";
    }
    v.data = sz->data + 5;
    v.len = sz->len - 5;
    size = slc_conf_parse_size(&v);
    if (size < 1024 * 1024 || (unsigned long long) size > SIZE_MAX / 2) {
        return slc_conf_error(cf, "invalid cache zone size \"%s\": at "
            "least 1m", v.data);
    }
    z = slc_palloc(cf->pool, sizeof(*z));
    if (z == NULL) {
        return "out of memory";
    }
    strlcpy(z->name, name->data, sizeof(z->name));
    z->size = (size_t) size;
    z->file = cf->filename;
    z->line = cf->line;
    z->next = cc->zones;
    cc->zones = z;
    return NULL;
}

/* cache NAME; resolved once the whole file is read (slc_cache_bind). */
static const char *
slc_cache_use_directive(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_cache_conf_t *cc = conf;

    (void) cmd;
    if (cc->zone_name != NULL) {
        return "is duplicate";
    }
    cc->zone_name = slc_pstrndup(cf->pool, cf->args[1].data,
                                 cf->args[1].len);
    cc->zone = NULL;
    return cc->zone_name != NULL ? NULL : "out of memory";
}

/* cache_rule NAME match=... "REGEX" ACTION...; */
static const char *
slc_cache_rule_directive(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_sql_rule_t  r;

    (void) cmd;
    (void) conf;
    if (slc_cache_rule_parse(&cf->args[1], cf->nargs - 1, &r, cf->errbuf,
                             sizeof(cf->errbuf)) != SLC_OK)
    {
        return cf->errbuf;
    }
    r.line = cf->line;
    return slc_mysql_rule_add(cf, cf->ctx, &r);     /* the server's list */
}


/* --- zones ------------------------------------------------------------- */

void
slc_cache_zones_invalidate(const slc_cycle_t *cycle, const uint32_t *hash,
    unsigned n, int all, uint64_t now)
{
    slc_cache_conf_t *main = slc_cache_main(cycle);

    for (slc_cache_zone_t *z = main != NULL ? main->zones : NULL; z != NULL;
         z = z->next)
    {
        if (z->cache == NULL) {
            continue;
        }
        if (all) {
            slc_cache_invalidate_all(z->cache, now);
            continue;
        }
        for (unsigned i = 0; i < n; i++) {
            slc_cache_invalidate_hash(z->cache, hash[i], now);
        }
    }
}

slc_cache_zone_t *
slc_cache_zones(const slc_cycle_t *cycle)
{
    slc_cache_conf_t *main = slc_cache_main(cycle);

    return main != NULL ? main->zones : NULL;
}

static slc_cache_zone_t *
slc_cache_zone_find(const slc_cache_conf_t *main, const char *name)
{
    for (slc_cache_zone_t *z = main != NULL ? main->zones : NULL; z != NULL;
         z = z->next)
    {
        if (strcmp(z->name, name) == 0) {
            return z;
        }
    }
    return NULL;
}

/*
 * A fresh zone (master, before fork): the slab, the store, the counters.
 * A failure leaves no cache in the pool, which attach reports.
 */
static void
slc_cache_zone_init(slc_shm_zone_t *z, const void *prev)
{
    slc_slab_pool_t      *pool = z->addr;
    slc_cache_params_t    conf;
    slc_cache_t          *c;
    slc_cache_counters_t *cnt;

    (void) prev;                        /* a resized cache starts empty */
    if (slc_slab_zone_init(z) != SLC_OK) {
        return;
    }
    conf = (slc_cache_params_t) {
        .max_entry_size = SLC_CACHE_MAX_ENTRY,
        .wait_ms = 1000,
        .npins = (uint32_t) slc_max((size_t) SLC_CACHE_PINS_MIN,
                                    z->size / (16 * 1024)),
    };
    c = slc_cache_init(pool, &conf, slc_time_ms());
    cnt = c != NULL ? slc_slab_alloc(pool, sizeof(*cnt)) : NULL;
    if (cnt == NULL) {
        pool->data = NULL;
        return;
    }
    memset(cnt, 0, sizeof(*cnt));
    *slc_cache_user(c) = cnt;
}

slc_cache_counters_t *
slc_cache_counters(slc_cache_t *c)
{
    return *slc_cache_user(c);
}

/* The counters of rule `name`, claimed if new: a reload keeps them. */
static int
slc_cache_rule_slot(slc_cache_counters_t *cnt, const char *name)
{
    int free = -1;

    for (int i = 0; i < SLC_CACHE_RULES_MAX; i++) {
        if (cnt->rules[i].name[0] == '\0') {
            free = free < 0 ? i : free;
        } else if (strcmp(cnt->rules[i].name, name) == 0) {
            return i;
        }
    }
    if (free >= 0) {
        strlcpy(cnt->rules[free].name, name, sizeof(cnt->rules[free].name));
    }
    return free;
}

/* The counters of the rules of the zone's servers (a reload keeps them:
   by name).  Master, before fork. */
static void
slc_cache_rules_bind(slc_cycle_t *cycle, slc_cache_zone_t *zc)
{
    slc_mysql_conf_t     *mc = slc_mysql_conf(cycle);
    slc_cache_counters_t *cnt = slc_cache_counters(zc->cache);
    slc_slab_pool_t      *pool = slc_cache_pool(zc->cache);

    slc_shmtx_lock(&pool->mutex);
    for (slc_mysql_srv_t *srv = mc->servers; srv != NULL; srv = srv->next) {
        slc_cache_conf_t *cc = slc_module_conf(srv->mod_conf,
                                               &slc_cache_module);

        if (!slc_cache_filtered(srv) || cc->zone != zc) {
            continue;
        }
        for (unsigned i = 0; srv->rules != NULL && i < srv->rules->n; i++) {
            int slot = slc_cache_rule_slot(cnt, srv->rules->rule[i].name);

            cc->rule_slot[i] = slot < 0 ? SLC_CACHE_RULES_MAX
                                        : (unsigned) slot;
        }
    }
    slc_shmtx_unlock(&pool->mutex);
}

static int
slc_cache_zone_attach(slc_shm_zone_t *z, slc_cycle_t *cycle, char *err,
    size_t errlen)
{
    slc_cache_zone_t *zc = slc_cache_zone_find(slc_cache_main(cycle),
        z->name + sizeof(SLC_CACHE_ZONE_PREFIX) - 1);
    slc_cache_params_t conf = { .max_entry_size = SLC_CACHE_MAX_ENTRY };

    if (zc == NULL) {
        return SLC_OK;
    }
    zc->cache = slc_cache_get(z->addr);
    if (zc->cache == NULL || slc_cache_counters(zc->cache) == NULL) {
        snprintf(err, errlen, "%s:%u: cache zone \"%s\" of %zu bytes cannot "
            "hold the cache's tables", zc->file, zc->line, zc->name,
            zc->size);
        return SLC_ERROR;
    }
    conf.wait_ms = (uint64_t) zc->wait;
    slc_cache_tune(zc->cache, &conf);
    slc_cache_rules_bind(cycle, zc);
    return SLC_OK;
}

/* Declare the zones of the mysql {} block. */
static int
slc_cache_zones_declare(slc_cycle_t *cycle, slc_cache_conf_t *main,
    char *err, size_t errlen)
{
    char name[sizeof(SLC_CACHE_ZONE_PREFIX) + 64];

    for (slc_cache_zone_t *zc = main->zones; zc != NULL; zc = zc->next) {
        snprintf(name, sizeof(name), SLC_CACHE_ZONE_PREFIX "%s", zc->name);
        zc->shm = slc_shm_zone_add(cycle, name, zc->size, &slc_cache_module,
            err, errlen);
        if (zc->shm == NULL) {
            return SLC_ERROR;
        }
        zc->shm->init = slc_cache_zone_init;
        zc->shm->attach = slc_cache_zone_attach;
    }
    return SLC_OK;
}

int
slc_cache_filtered(const slc_mysql_srv_t *srv)
{
    for (unsigned i = 0; i < srv->nfilters; i++) {
        if (srv->filters[i] == &slc_cache_filter) {
            return 1;
        }
    }
    return 0;
}

const slc_cache_remote_t *
slc_cache_remote_of(const slc_cycle_t *cycle)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);

    for (slc_mysql_srv_t *srv = mc != NULL ? mc->servers : NULL;
         srv != NULL; srv = srv->next)
    {
        slc_cache_conf_t *cc = slc_cache_filtered(srv)
            ? slc_module_conf(srv->mod_conf, &slc_cache_module) : NULL;

        if (cc != NULL && cc->remote != NULL) {
            return cc->remote;
        }
    }
    return NULL;
}

/* Each server that lists the filter names a declared zone. */
static int
slc_cache_bind(slc_mysql_srv_t *srv, slc_cache_conf_t *main, char *err,
    size_t errlen)
{
    slc_cache_conf_t *cc = slc_module_conf(srv->mod_conf, &slc_cache_module);
    const char       *name = cc->zone_name;

    if (name == NULL && main != NULL) {
        name = main->zone_name;
    }
    if (name == NULL) {
        snprintf(err, errlen, "%s:%u: \"filters cache\" needs a zone: "
            "cache NAME; (declared with cache_zone NAME size=...; in mysql "
            "{})", srv->file, srv->line);
        return SLC_ERROR;
    }
    cc->zone = slc_cache_zone_find(main, name);
    if (cc->zone == NULL) {
        snprintf(err, errlen, "%s:%u: unknown cache zone \"%s\"", srv->file,
            srv->line, name);
        return SLC_ERROR;
    }
    cc->zone->wait = slc_max(cc->zone->wait, cc->wait);
    return SLC_OK;
}

/*
 * The schema catalog changed (the monitor process, which maps every zone):
 * a view or a trigger appeared, changed or went, so entries stored under
 * its names, or of the tables its triggers write, may be stale.
 */
static void
slc_cache_catalog_changed(slc_cycle_t *cycle, const slc_upstream_t *up,
    const slc_str_t *names, unsigned n, int all)
{
    uint32_t hash[64];
    uint64_t now = slc_time_ms() + 1;   /* it happened before this */

    (void) up;
    if (all) {
        slc_cache_zones_invalidate(cycle, NULL, 0, 1, now);
        return;
    }
    while (n > 0) {
        unsigned k = slc_min(n, (unsigned) slc_nelems(hash));

        for (unsigned i = 0; i < k; i++) {
            hash[i] = slc_cache_table_hash(names[i].data, names[i].len);
        }
        slc_cache_zones_invalidate(cycle, hash, k, 0, now);
        names += k;
        n -= k;
    }
}

/*
 * A server with the filter needs its upstream's schema catalog (views and
 * what they read, triggers and what they write): without it a read of a
 * view would never be invalidated by writes to its tables.
 */
static int
slc_cache_want_catalog(slc_cycle_t *cycle, slc_mysql_srv_t *srv, char *err,
    size_t errlen)
{
    char why[256];

    if (slc_catalog_want(cycle, srv->upstream, why, sizeof(why)) != SLC_OK)
    {
        snprintf(err, errlen, "%s:%u: \"filters cache\": %s: the cache "
            "learns the upstream's views and triggers from it", srv->file,
            srv->line, why);
        return SLC_ERROR;
    }
    return SLC_OK;
}

static int
slc_cache_init_conf(slc_cycle_t *cycle, char *err, size_t errlen)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);
    slc_cache_conf_t *main = slc_cache_main(cycle);

    if (mc == NULL || main == NULL) {
        return SLC_OK;
    }
    if (slc_cache_zones_declare(cycle, main, err, errlen) != SLC_OK) {
        return SLC_ERROR;
    }
    for (slc_mysql_srv_t *srv = mc->servers; srv != NULL; srv = srv->next) {
        if (slc_cache_filtered(srv)
            && (slc_cache_bind(srv, main, err, errlen) != SLC_OK
                || slc_cache_want_catalog(cycle, srv, err, errlen)
                   != SLC_OK))
        {
            return SLC_ERROR;
        }
    }
    slc_catalog_on_change(slc_cache_catalog_changed);
    return slc_cache_binlog_init_conf(cycle, err, errlen);
}

/* --- the master: dead workers, counters ---------------------------------- */

static void
slc_cache_reap_pid(slc_cycle_t *cycle, pid_t pid)
{
    slc_cache_conf_t *main = slc_cache_main(cycle);
    unsigned          n;

    for (slc_cache_zone_t *z = main != NULL ? main->zones : NULL; z != NULL;
         z = z->next)
    {
        if (z->cache != NULL && (n = slc_cache_reap(z->cache, pid)) > 0) {
            slc_log(SLC_LOG_NOTICE, "cache zone \"%s\": %u reference(s) of "
                "process %d given back", z->name, n, (int) pid);
        }
    }
}

/* The remote tier's counters, once it was used. */
static void
slc_cache_report_remote(const char *zone,
    const slc_cache_remote_counters_t *r)
{
    if (r->lookups + r->bumps + r->stores == 0) {
        return;
    }
    slc_log(SLC_LOG_NOTICE, "cache zone \"%s\": redis: lookups=%llu "
        "hits=%llu misses=%llu stale=%llu decode_errors=%llu timeouts=%llu "
        "skipped=%llu stores=%llu dropped=%llu errors=%llu bumps=%llu "
        "published=%llu push_bypass=%llu strict_held=%llu strict_failed=%llu "
        "breaker_opened=%llu breaker_closed=%llu", zone,
        (unsigned long long) r->lookups, (unsigned long long) r->hits,
        (unsigned long long) r->misses, (unsigned long long) r->stale,
        (unsigned long long) r->decode_errors,
        (unsigned long long) r->timeouts, (unsigned long long) r->skipped,
        (unsigned long long) r->stores, (unsigned long long) r->dropped,
        (unsigned long long) r->errors, (unsigned long long) r->bumps,
        (unsigned long long) r->published,
        (unsigned long long) r->push_bypass,
        (unsigned long long) r->strict_held,
        (unsigned long long) r->strict_failed,
        (unsigned long long) r->opened, (unsigned long long) r->closed);
}

static void
slc_cache_report_zone(const slc_cache_zone_t *z)
{
    slc_cache_stats_t           st;
    const slc_cache_counters_t *cnt = slc_cache_counters(z->cache);
    char                        why[640];
    size_t                      k = 0;

    slc_cache_stats(z->cache, &st);
    for (int i = 1; i < SLC_CACHE_NVERDICTS && k < sizeof(why); i++) {
        k += (size_t) snprintf(why + k, sizeof(why) - k, " %s=%llu",
            slc_cache_verdict_name(i),
            (unsigned long long) cnt->uncacheable[i]);
    }
    slc_log(SLC_LOG_NOTICE, "cache zone \"%s\": lookups=%llu hits=%llu "
        "misses=%llu waits=%llu wait_timeouts=%llu replays=%llu "
        "binlog_bypass=%llu "
        "stores=%llu evictions=%llu expired=%llu stale=%llu "
        "invalidations=%llu entries=%llu bytes=%llu size=%zu", z->name,
        (unsigned long long) st.lookups, (unsigned long long) st.hits,
        (unsigned long long) st.misses, (unsigned long long) cnt->waits,
        (unsigned long long) cnt->wait_timeouts,
        (unsigned long long) cnt->replays,
        (unsigned long long) cnt->binlog_bypass,
        (unsigned long long) st.stores,
        (unsigned long long) st.evictions,
        (unsigned long long) st.expired, (unsigned long long) st.stale,
        (unsigned long long) st.invalidations,
        (unsigned long long) st.entries, (unsigned long long) st.bytes,
        z->size);
    slc_log(SLC_LOG_NOTICE, "cache zone \"%s\": not cacheable:%s", z->name,
        why);
    slc_log(SLC_LOG_NOTICE, "cache zone \"%s\": not stored: error=%llu "
        "warnings=%llu too_big=%llu store=%llu state=%llu closed=%llu "
        "replica=%llu raced=%llu nomem=%llu busy=%llu pins=%llu gone=%llu",
        z->name,
        (unsigned long long) cnt->not_stored[SLC_CACHE_NS_ERROR],
        (unsigned long long) cnt->not_stored[SLC_CACHE_NS_WARNINGS],
        (unsigned long long) cnt->not_stored[SLC_CACHE_NS_SIZE],
        (unsigned long long) cnt->not_stored[SLC_CACHE_NS_STORE],
        (unsigned long long) cnt->not_stored[SLC_CACHE_NS_STATE],
        (unsigned long long) cnt->not_stored[SLC_CACHE_NS_CLOSED],
        (unsigned long long) cnt->not_stored[SLC_CACHE_NS_REPLICA],
        (unsigned long long) st.refused[SLC_CACHE_RACED],
        (unsigned long long) st.refused[SLC_CACHE_NOMEM],
        (unsigned long long) st.refused[SLC_CACHE_BUSY],
        (unsigned long long) st.refused[SLC_CACHE_PINS],
        (unsigned long long) st.refused[SLC_CACHE_GONE]);
    slc_cache_report_remote(z->name, &cnt->remote);
    for (int i = 0; i < SLC_CACHE_RULES_MAX; i++) {
        if (cnt->rules[i].name[0] != '\0') {
            slc_log(SLC_LOG_NOTICE, "cache zone \"%s\": rule \"%s\": "
                "matches=%llu hits=%llu stores=%llu", z->name,
                cnt->rules[i].name,
                (unsigned long long) cnt->rules[i].matches,
                (unsigned long long) cnt->rules[i].hits,
                (unsigned long long) cnt->rules[i].stores);
        }
    }
}

static void
slc_cache_report(slc_cycle_t *cycle)
{
    slc_cache_conf_t *main = slc_cache_main(cycle);

    for (slc_cache_zone_t *z = main != NULL ? main->zones : NULL; z != NULL;
         z = z->next)
    {
        if (z->cache != NULL) {
            slc_cache_report_zone(z);
        }
    }
    slc_cache_binlog_report(cycle);
}

/* The status listener's GET /metrics: every zone's counters as they are
   now (slc_cache_metrics.c writes them). */
static void
slc_cache_metrics_hook(const slc_cycle_t *cycle, slc_metrics_t *m)
{
    slc_cache_conf_t      *main = slc_cache_main(cycle);
    slc_cache_zone_view_t *v;
    unsigned               n = 0;

    for (slc_cache_zone_t *z = main != NULL ? main->zones : NULL; z != NULL;
         z = z->next)
    {
        n += z->cache != NULL;
    }
    if (n == 0 || (v = calloc(n, sizeof(*v))) == NULL) {
        slc_cache_metrics(NULL, 0, m);      /* the families, empty */
        return;
    }
    n = 0;
    for (slc_cache_zone_t *z = main->zones; z != NULL; z = z->next) {
        if (z->cache != NULL) {
            v[n].name = z->name;
            v[n].size = z->size;
            slc_cache_stats(z->cache, &v[n].st);
            v[n++].cnt = slc_cache_counters(z->cache);
        }
    }
    slc_cache_metrics(v, n, m);
    free(v);
}
