#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_monitor.h"
#include "slc_mysql_router.h"
#include "slc_mysql_session_backend.h"
#include "slc_mysql_upstream.h"

/*
 * readconn: choose one server of the role for the session; then the core
 * forwards bytes both ways without parsing commands (byte mode,
 * slc_mysql_pump.h), or runs the server block's filters (command mode).
 */

/* Its conf at the mysql and server levels (a server inherits it). */
typedef struct {
    int       role;     /* SLC_ROLE_*, SLC_CONF_UNSET until merged */
} slc_readconn_conf_t;

/* Per session: the servers this session already tried. */
typedef struct {
    uint8_t   tried[SLC_UPSTREAM_SET_BYTES];
    unsigned  ntried;
} slc_readconn_ctx_t;

static void *slc_readconn_create_conf(slc_conf_t *cf, unsigned level);
static const char *slc_readconn_merge_conf(slc_conf_t *cf, unsigned level,
    void *parent, void *child);
static int  slc_readconn_check(slc_mysql_srv_t *srv, char *err,
    size_t errlen);
static void slc_readconn_start(slc_session_t *s);
static void slc_readconn_ready(slc_session_t *s);
static const char *slc_readconn_adopt(slc_session_t *s,
    slc_backend_t **extra, const uint8_t *tags, unsigned n);

static const slc_conf_enum_t slc_readconn_roles_conf[] = {
    { "primary", SLC_ROLE_PRIMARY },
    { "replica", SLC_ROLE_REPLICA },
    { "any", SLC_ROLE_ANY },
    { NULL, 0 }
};

static const slc_command_t slc_readconn_commands[] = {
    { .name = "readconn_role",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_enum_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_readconn_conf_t, role),
      .post = slc_readconn_roles_conf },
    { .name = NULL }
};

static const slc_router_t slc_readconn_router = {
    .check = slc_readconn_check,
    .start = slc_readconn_start,
    .ready = slc_readconn_ready,
    .retry = slc_readconn_start,
    .passthrough = 1,
    .adopt = slc_readconn_adopt,
};

slc_module_t slc_readconn_module = {
    .name = "readconn",
    .type = SLC_MODULE_ROUTER,
    .commands = slc_readconn_commands,
    .router = &slc_readconn_router,
    .create_conf = slc_readconn_create_conf,
    .merge_conf = slc_readconn_merge_conf,
};

static void *
slc_readconn_create_conf(slc_conf_t *cf, unsigned level)
{
    slc_readconn_conf_t *rc;

    if (level != SLC_CONF_MYSQL && level != SLC_CONF_SERVER) {
        return NULL;
    }
    rc = slc_palloc(cf->pool, sizeof(*rc));
    if (rc == NULL) {
        return SLC_CONF_ERROR;
    }
    rc->role = SLC_CONF_UNSET;
    return rc;
}

/* A server takes readconn_role from mysql {}, else primary. */
static const char *
slc_readconn_merge_conf(slc_conf_t *cf, unsigned level, void *parent,
    void *child)
{
    const slc_readconn_conf_t *prev = parent;
    slc_readconn_conf_t       *rc = child;

    (void) cf;
    (void) level;
    slc_conf_merge_value(rc->role, prev != NULL ? prev->role : SLC_CONF_UNSET,
                         SLC_ROLE_PRIMARY);
    return NULL;
}

/* Merged: every server block has one, whatever its router. */
static unsigned
slc_readconn_roles(slc_mysql_srv_t *srv)
{
    const slc_readconn_conf_t *rc;

    rc = slc_module_conf(srv->mod_conf, &slc_readconn_module);
    return (unsigned) rc->role;
}

static const char *
slc_readconn_role_name(unsigned roles)
{
    return roles == SLC_ROLE_PRIMARY ? "primary"
           : roles == SLC_ROLE_REPLICA ? "replica" : "any";
}

static int
slc_readconn_check(slc_mysql_srv_t *srv, char *err, size_t errlen)
{
    unsigned roles = slc_readconn_roles(srv);

    for (unsigned i = 0; i < srv->upstream->nservers; i++) {
        if (srv->upstream->servers[i].role & roles) {
            return SLC_OK;
        }
    }
    snprintf(err, errlen, "%s:%u: upstream \"%s\" has no server for "
        "readconn_role %s", srv->file, srv->line, srv->upstream->name.data,
        slc_readconn_role_name(roles));
    return SLC_ERROR;
}

static slc_readconn_ctx_t *
slc_readconn_ctx(slc_session_t *s)
{
    if (s->router_data == NULL) {
        s->router_data = calloc(1, sizeof(slc_readconn_ctx_t));
    }
    return s->router_data;
}

/*
 * Also the retry after a failed connect: a session tries each server at
 * most once (its `tried` set); a failed server is also marked down for the
 * worker, so other sessions avoid it for a while.
 */
static void
slc_readconn_start(slc_session_t *s)
{
    slc_readconn_ctx_t    *rc = slc_readconn_ctx(s);
    slc_upstream_server_t *us;
    int                    full;

    if (rc == NULL) {
        slc_session_close(s, SLC_LOG_ERR, "out of memory");
        return;
    }
    us = slc_upstream_pick(s->srv->upstream, slc_readconn_roles(s->srv),
        rc->tried, &full);
    if (us == NULL && !full && rc->ntried > 0) {
        slc_session_fail(s, SLC_ER_CONNECT_TO_BACKEND, "HY000",
            "Can't connect to any backend server of upstream \"%s\"",
            s->srv->upstream->name.data);
        return;
    }
    if (us == NULL && !full) {
        /* the monitor sees none of the role up (slc_monitor_role) */
        slc_session_fail(s, SLC_ER_CONNECT_TO_BACKEND, "HY000",
            "No backend server of upstream \"%s\" is available as %s",
            s->srv->upstream->name.data,
            slc_readconn_role_name(slc_readconn_roles(s->srv)));
        return;
    }
    if (us == NULL) {
        slc_session_fail(s, SLC_ER_CON_COUNT_ERROR, "08004",
            "Too many connections (every backend server of upstream "
            "\"%s\" is at max_connections)", s->srv->upstream->name.data);
        return;
    }
    slc_upstream_set(rc->tried, (unsigned) (us - s->srv->upstream->servers));
    rc->ntried++;
    (void) slc_session_backend_open(s, us);
}

/* Byte mode begins (slc_mysql_pump.c): the choice is made. */
static void
slc_readconn_ready(slc_session_t *s)
{
    free(s->router_data);
    s->router_data = NULL;
}

/* A session a reload handed over: go on forwarding, if readconn_role
   still admits its server. */
static const char *
slc_readconn_adopt(slc_session_t *s, slc_backend_t **extra,
    const uint8_t *tags, unsigned n)
{
    (void) extra;                   /* readconn has none: n is 0 */
    (void) tags;
    (void) n;
    if (!(slc_monitor_role(s->backend->server) & slc_readconn_roles(s->srv)))
    {
        return "backend server no longer admitted by readconn_role after "
               "reload";
    }
    slc_session_go(s);              /* the new filters, if any */
    return NULL;
}
