/*
 * The mysql {} block's directives: users, server {} blocks (listen,
 * router, filters, upstream) and the checks a server {} must pass once
 * the file is parsed.  The module's table and hooks are in
 * slc_mysql_module.c, the upstream {} block's in
 * upstream/slc_mysql_upstream_conf.c.
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_mysql_conf.h"
#include "slc_mysql_digests.h"
#include "slc_mysql_filter.h"
#include "slc_mysql_router.h"
#include "slc_mysql_session.h"

#include <netdb.h>
#include <sys/un.h>

/* The mysql module, found by name: this file and those under it do not
   name its table, which names the session and the cmd floor. */
const slc_module_t *
slc_mysql_self(void)
{
    static const slc_module_t *self;

    if (self == NULL) {
        self = slc_module_named("mysql");
    }
    return self;
}

slc_mysql_conf_t *
slc_mysql_conf(const slc_cycle_t *cycle)
{
    slc_mysql_conf_t *mc = slc_module_conf(cycle->mod_conf, slc_mysql_self());

    return mc != NULL && mc->block ? mc : NULL;
}

const char *
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

const char *
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

const char *
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

const char *
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

const char *
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

const char *
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

const char *
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
const char *
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

const char *
slc_mysql_upstream_ref(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_mysql_srv_t *srv = conf;

    (void) cmd;
    srv->upstream_name.data = slc_pstrndup(cf->pool, cf->args[1].data,
        cf->args[1].len);
    srv->upstream_name.len = cf->args[1].len;
    return NULL;
}

int
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
    if (slc_mysql_rule_check(srv, err, errlen) != SLC_OK) {
        return SLC_ERROR;
    }
    if (slc_mysql_srv_router(srv)->check != NULL) {
        return slc_mysql_srv_router(srv)->check(srv, err, errlen);
    }
    return SLC_OK;
}

/* digests off | on [user] [db]; (server and mysql levels) */
const char *
slc_mysql_digests(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_mysql_srv_conf_t *c = conf;
    long long             v = 0;

    (void) cmd;
    if (c->digests != SLC_CONF_UNSET) {
        return slc_conf_error(cf, "\"digests\" is duplicate");
    }
    if (strcmp(cf->args[1].data, "on") == 0) {
        v = SLC_DIGESTS_ON;
    } else if (strcmp(cf->args[1].data, "off") != 0 || cf->nargs > 2) {
        return slc_conf_error(cf, "invalid \"digests\" (off, or on with "
            "user and db to keep them apart by user, by database)");
    }
    for (unsigned i = 2; i < cf->nargs; i++) {
        if (strcmp(cf->args[i].data, "user") == 0) {
            v |= SLC_DIGESTS_USER;
        } else if (strcmp(cf->args[i].data, "db") == 0) {
            v |= SLC_DIGESTS_DB;
        } else {
            return slc_conf_error(cf, "invalid \"digests\" option \"%s\" "
                "(user, db)", cf->args[i].data);
        }
    }
    c->digests = v;
    return NULL;
}

/* A number of the mysql {} level in [min, max]. */
static const char *
slc_mysql_count(slc_conf_t *cf, long long *slot, long long min,
    long long max)
{
    long long n = slc_conf_parse_int(&cf->args[1]);

    if (n < min || n > max) {
        return slc_conf_error(cf, "invalid %s \"%s\" (%lld to %lld)",
            cf->args[0].data, cf->args[1].data, min, max);
    }
    *slot = n;
    return NULL;
}

const char *
slc_mysql_digest_top(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    (void) cmd;
    return slc_mysql_count(cf, &((slc_mysql_conf_t *) conf)->digest_top, 10,
        100000);
}

const char *
slc_mysql_digest_metrics(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    (void) cmd;
    return slc_mysql_count(cf, &((slc_mysql_conf_t *) conf)->digest_metrics,
        0, 1000);
}
