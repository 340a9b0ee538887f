#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_mysql_conf.h"
#include "slc_mysql_handover.h"
#include "slc_mysql_registry.h"
#include "slc_mysql_filter.h"
#include "slc_mysql_router.h"
#include "slc_mysql_session.h"
#include "slc_worker.h"

#include <netdb.h>
#include <sys/un.h>

static const char *slc_mysql_block(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf);
static const char *slc_mysql_user(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf);
static const char *slc_mysql_password(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static const char *slc_mysql_server_block(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static const char *slc_mysql_listen(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf);
static const char *slc_mysql_router(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf);
static const char *slc_mysql_filters(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf);
static const char *slc_mysql_upstream_ref(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static const char *slc_mysql_buffer_size(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static int slc_mysql_init_conf(slc_cycle_t *cycle, char *err, size_t errlen);
static void slc_mysql_registry_zone_init(slc_shm_zone_t *z, const void *prev);
static void slc_mysql_reap_process(slc_cycle_t *cycle, unsigned proc);
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

slc_module_t slc_mysql_module = {
    .name = "mysql",
    .type = SLC_MODULE_CORE,
    .commands = slc_mysql_commands,
    .create_conf = slc_mysql_create_conf,
    .merge_conf = slc_mysql_merge_conf,
    .init_conf = slc_mysql_init_conf,
    .reap_process = slc_mysql_reap_process,
    .init_process = slc_mysql_init_process,
    .conn_count = slc_sessions_count,
    .close_idle = slc_sessions_close_idle,
    .handover = slc_mysql_handover_start,
    .handover_recv = slc_mysql_handover_recv,
};

slc_mysql_conf_t *
slc_mysql_conf(const slc_cycle_t *cycle)
{
    slc_mysql_conf_t *mc = slc_module_conf(cycle->mod_conf,
                                           &slc_mysql_module);

    return mc != NULL && mc->block ? mc : NULL;
}

/* The buffers of a worker (or of a role, which may talk to servers too)
   are buffer_size bytes, 256 kept on the free list. */
static void
slc_mysql_init_process(slc_cycle_t *cycle, const slc_role_t *role)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);

    (void) role;
    slc_buf_setup(mc != NULL ? mc->buffer_size : 16384, 256);
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
    return NULL;
}

static const char *
slc_mysql_block(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_mysql_conf_t *mc = conf;

    (void) cmd;
    if (mc->block) {
        return "\"mysql\" directive is duplicate";
    }
    mc->block = 1;
    return slc_conf_parse_block(cf, SLC_CONF_MYSQL, mc, &mc->mod_conf);
}

static const char *
slc_mysql_buffer_size(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_mysql_conf_t *mc = conf;
    long long         n = slc_conf_parse_size(&cf->args[1]);

    (void) cmd;
    if (n < 1024 || n > 64 * 1024 * 1024) {
        return slc_conf_error(cf, "invalid buffer_size \"%s\" (1k to 64m)",
            cf->args[1].data);
    }
    mc->buffer_size = (size_t) n;
    return NULL;
}

slc_mysql_user_t *
slc_mysql_user_find(const slc_mysql_conf_t *mc, const char *name, size_t len)
{
    return slc_hash_find(&mc->user_hash, name, len);
}

static const char *
slc_mysql_user(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_mysql_conf_t *mc = conf;
    slc_mysql_user_t *u;
    const char       *rv;

    (void) cmd;
    u = slc_mysql_user_find(mc, cf->args[1].data, cf->args[1].len);
    if (u != NULL) {
        return slc_conf_error(cf, "duplicate user \"%s\" (first at %s:%u)",
            cf->args[1].data, u->file, u->line);
    }
    u = slc_palloc(cf->pool, sizeof(*u));
    if (u == NULL) {
        return "out of memory";
    }
    u->name.data = slc_pstrndup(cf->pool, cf->args[1].data, cf->args[1].len);
    u->name.len = cf->args[1].len;
    u->file = cf->filename;
    u->line = cf->line;
    rv = slc_conf_parse_block(cf, SLC_CONF_USER, u, NULL);
    if (rv != NULL) {
        return rv;
    }
    if (!u->has_password) {
        return slc_conf_error(cf, "user \"%s\" has no \"password\" or "
            "\"password_hash\"", u->name.data);
    }
    if (slc_hash_add(&mc->user_hash, u->name.data, u->name.len, u)
        != SLC_OK)
    {
        return "out of memory";
    }
    u->next = mc->users;
    mc->users = u;
    return NULL;
}

static const char *
slc_mysql_password(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_mysql_user_t *u = conf;
    slc_str_t        *v = &cf->args[1];
    const char       *rv = NULL;

    if (u->has_password) {
        rv = "user has more than one password";
    } else if (cmd->post != NULL) {
        slc_mysql_native_hash(v->data, v->len, &u->hash);
    } else if (slc_mysql_native_hash_parse(v->data, v->len, &u->hash)
               != SLC_OK)
    {
        rv = "invalid password_hash (expected \"*\" and 40 hex digits, "
            "as in mysql.user)";
    }
    /* at once, whatever happened: the parser wipes its copies of the
       file only when it is done with it (slc_conf_file.c) */
    explicit_bzero(v->data, v->len);
    if (rv == NULL) {
        u->has_password = 1;
    }
    return rv;
}

static const char *
slc_mysql_server_block(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_mysql_conf_t *mc = conf;
    slc_mysql_srv_t  *srv;
    const char       *rv;

    (void) cmd;
    srv = slc_palloc(cf->pool, sizeof(*srv));
    if (srv == NULL) {
        return "out of memory";
    }
    srv->file = cf->filename;
    srv->line = cf->line;
    rv = slc_conf_parse_block(cf, SLC_CONF_SERVER, srv, &srv->mod_conf);
    if (rv != NULL) {
        return rv;
    }
    srv->next = mc->servers;
    mc->servers = srv;
    return NULL;
}

static const char *
slc_mysql_listen(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_mysql_srv_t *srv = conf;
    slc_cycle_t     *cycle = cf->cycle;
    slc_listen_t    *l;

    (void) cmd;
    l = slc_palloc(cf->pool, sizeof(*l));
    if (l == NULL) {
        return "out of memory";
    }
    const char *addr = cf->args[1].data;
    if (strncmp(addr, "unix:", 5) == 0 && addr[5] != '/' && addr[5] != '\0') {
        /* a relative socket path is relative to the prefix */
        const char *path = slc_cycle_path(cycle, addr + 5);
        size_t      n = path != NULL ? strlen(path) + sizeof("unix:") : 0;
        char       *p = n != 0 ? slc_palloc(cf->pool, n) : NULL;
        if (p == NULL) {
            return "out of memory";
        }
        snprintf(p, n, "unix:%s", path);
        addr = p;
    }
    if (slc_listen_parse(addr, l, cf->errbuf, sizeof(cf->errbuf)) != SLC_OK)
    {
        return cf->errbuf;
    }
    l->backlog = 511;
    if (cf->nargs == 3) {
        long long n;
        if (slc_conf_parse_param(&cf->args[2], "backlog", 1, 65535, &n) != 1) {
            return slc_conf_error(cf, "invalid parameter \"%s\" (backlog=N)",
                cf->args[2].data);
        }
        l->backlog = (int) n;
    }
    for (slc_listen_t *o = cycle->listens; o != NULL; o = o->next) {
        if (o->addrlen == l->addrlen
            && memcmp(&o->addr, &l->addr, l->addrlen) == 0)
        {
            return slc_conf_error(cf, "duplicate listen \"%s\" (first at "
                "%s:%u)", l->text, o->file, o->line);
        }
    }
    l->handler = slc_session_accept;
    l->srv = srv;
    l->file = cf->filename;
    l->line = cf->line;
    l->next = cycle->listens;
    cycle->listens = l;
    srv->nlisten++;
    return NULL;
}

/* The names of the compiled-in modules of `type`, for messages. */
static const char *
slc_mysql_module_names(unsigned type, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i]->type == type) {
            if (buf[0] != '\0') {
                strlcat(buf, " ", len);
            }
            strlcat(buf, slc_modules[i]->name, len);
        }
    }
    return buf[0] != '\0' ? buf : "none";
}

/* The compiled-in module of `type` named `name`, else NULL with the
   error set in cf (`kind`: "router", "filter"). */
static const slc_module_t *
slc_mysql_module_find(slc_conf_t *cf, unsigned type, const char *kind,
    const char *name, const char **err)
{
    char names[256];

    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (strcmp(slc_modules[i]->name, name) != 0) {
            continue;
        }
        if (slc_modules[i]->type == type) {
            return slc_modules[i];
        }
        *err = slc_conf_error(cf, "module \"%s\" is not a %s", name, kind);
        return NULL;
    }
    if (slc_module_excluded(name)) {
        *err = slc_conf_error(cf, "%s \"%s\" was not compiled in "
            "(./configure --with-%s)", kind, name, name);
    } else {
        *err = slc_conf_error(cf, "unknown %s \"%s\" (compiled in: %s)",
            kind, name, slc_mysql_module_names(type, names, sizeof(names)));
    }
    return NULL;
}

static const char *
slc_mysql_router(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_mysql_srv_t *srv = conf;
    const char      *err = NULL;

    (void) cmd;
    srv->router = slc_mysql_module_find(cf, SLC_MODULE_ROUTER, "router",
        cf->args[1].data, &err);
    return err;
}

/* filters NAME ...: each once, run in this order. */
static const char *
slc_mysql_filters(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_mysql_srv_t     *srv = conf;
    const slc_filter_t **list;
    const char          *err = NULL;
    unsigned             n = (unsigned) cf->nargs - 1;

    (void) cmd;
    if (srv->filters != NULL) {
        return slc_conf_error(cf, "\"filters\" is duplicate");
    }
    list = slc_palloc(cf->pool, n * sizeof(*list));
    if (list == NULL) {
        return slc_conf_error(cf, "out of memory");
    }
    for (unsigned i = 0; i < n; i++) {
        const slc_module_t *m = slc_mysql_module_find(cf, SLC_MODULE_FILTER,
            "filter", cf->args[i + 1].data, &err);
        if (m == NULL) {
            return err;
        }
        list[i] = slc_filter_of(m);
        for (unsigned j = 0; j < i; j++) {
            if (list[j] == list[i]) {
                return slc_conf_error(cf, "filter \"%s\" is listed twice",
                    m->name);
            }
        }
    }
    srv->filters = list;
    srv->nfilters = n;
    return NULL;
}

static const char *
slc_mysql_upstream_ref(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_mysql_srv_t *srv = conf;

    (void) cmd;
    srv->upstream_name.data = slc_pstrndup(cf->pool, cf->args[1].data,
        cf->args[1].len);
    srv->upstream_name.len = cf->args[1].len;
    return NULL;
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
}

static int
slc_mysql_check_srv(slc_mysql_conf_t *mc, slc_mysql_srv_t *srv, char *err,
    size_t errlen)
{
    char names[256];

    if (srv->nlisten == 0) {
        snprintf(err, errlen, "%s:%u: server has no \"listen\"", srv->file,
            srv->line);
        return SLC_ERROR;
    }
    if (srv->router == NULL) {
        snprintf(err, errlen, "%s:%u: server has no \"router\" (compiled "
            "in: %s)", srv->file, srv->line,
            slc_mysql_module_names(SLC_MODULE_ROUTER, names, sizeof(names)));
        return SLC_ERROR;
    }
    if (srv->upstream_name.data == NULL) {
        snprintf(err, errlen, "%s:%u: server has no \"upstream\"",
            srv->file, srv->line);
        return SLC_ERROR;
    }
    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        if (strcmp(up->name.data, srv->upstream_name.data) == 0) {
            srv->upstream = up;
        }
    }
    if (srv->upstream == NULL) {
        snprintf(err, errlen, "%s:%u: unknown upstream \"%s\"", srv->file,
            srv->line, srv->upstream_name.data);
        return SLC_ERROR;
    }
    if (srv->auth_failure_delay > srv->auth_failure_max_delay) {
        snprintf(err, errlen, "%s:%u: \"auth_failure_delay\" is above "
            "\"auth_failure_max_delay\"", srv->file, srv->line);
        return SLC_ERROR;
    }
    if (srv->auth == SLC_AUTH_PASSTHROUGH
        && !slc_mysql_srv_router(srv)->passthrough)
    {
        snprintf(err, errlen, "%s:%u: router \"%s\" does not support "
            "\"auth passthrough\"", srv->file, srv->line, srv->router->name);
        return SLC_ERROR;
    }
    if (slc_mysql_srv_router(srv)->check != NULL) {
        return slc_mysql_srv_router(srv)->check(srv, err, errlen);
    }
    return SLC_OK;
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
    return SLC_OK;
}

static void
slc_mysql_registry_zone_init(slc_shm_zone_t *z, const void *prev)
{
    slc_registry_init(z->addr, z->size, prev);
}

/* A dead worker's backend connections and registry entries go back. */
static void
slc_mysql_reap_process(slc_cycle_t *cycle, unsigned proc)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);

    slc_mysql_stats_reap(cycle, proc);
    if (mc != NULL && mc->registry_zone != NULL
        && mc->registry_zone->addr != NULL)
    {
        (void) slc_registry_reap(mc->registry_zone->addr, proc);
    }
}
