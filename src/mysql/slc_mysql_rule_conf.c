/*
 * The query rules' directives (slc_mysql_conf.h): `rule NAME { ... }` in
 * a server {} block, `rule_match_limit N;`, and the checks of a block's
 * rules once its router and upstream are known.
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_mysql_conf.h"
#include "slc_mysql_router.h"
#include "slc_mysql_upstream.h"
#include "slc_palloc.h"
#include "slc_sql_rule.h"

static void
slc_mysql_rule_cleanup(void *data)
{
    slc_sql_rules_free(data);
}

slc_sql_rules_t *
slc_mysql_rule_list(slc_conf_t *cf, slc_mysql_srv_t *srv)
{
    slc_sql_rules_t *rl = srv->rules;

    if (rl != NULL) {
        return rl;
    }
    rl = slc_palloc(cf->pool, sizeof(*rl));
    if (rl == NULL) {
        return NULL;
    }
    slc_sql_rules_init(rl);
    if (slc_pool_cleanup_add(cf->pool, slc_mysql_rule_cleanup, rl)
        != SLC_OK)
    {
        return NULL;
    }
    srv->rules = rl;
    return rl;
}

const char *
slc_mysql_rule_add(slc_conf_t *cf, slc_mysql_srv_t *srv, slc_sql_rule_t *r)
{
    slc_sql_rules_t *rl = slc_mysql_rule_list(cf, srv);

    r->file = cf->filename;
    if (rl == NULL) {
        slc_sql_rule_free(r);
        return "out of memory";
    }
    if (slc_sql_rules_add(rl, r, cf->errbuf, sizeof(cf->errbuf))
        != SLC_OK)
    {
        return cf->errbuf;
    }
    return NULL;
}

/* rule NAME { ... } */
const char *
slc_mysql_rule_block(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_mysql_srv_t *srv = conf;
    slc_sql_rule_t   r;
    const char      *rv;

    (void) cmd;
    if (!slc_sql_rule_name_ok(&cf->args[1])) {
        return slc_conf_error(cf, "rule: a name of letters, digits, \"_\", "
            "\"-\" and \".\" (at most %d)", SLC_SQL_RULE_NAME_MAX - 1);
    }
    slc_sql_rule_init(&r, cf->args[1].data, cf->args[1].len);
    r.line = cf->line;
    rv = slc_conf_parse_block(cf, SLC_CONF_RULE, &r, NULL);
    if (rv != NULL) {
        slc_sql_rule_free(&r);
        return rv;
    }
    return slc_mysql_rule_add(cf, srv, &r);
}

/* A directive inside rule { }: the engine reads it. */
const char *
slc_mysql_rule_directive(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_sql_rule_t *r = conf;
    const char     *e;
    char            why[SLC_CONF_ERRLEN];

    (void) cmd;
    e = slc_sql_rule_set(r, cf->args, cf->nargs, why, sizeof(why));
    if (e == NULL) {
        return NULL;
    }
    return slc_conf_error(cf, e == why ? "rule \"%s\": %s: %s"
                                       : "rule \"%s\": \"%s\" %s",
        r->name, cf->args[0].data, e);
}

/* rule_match_limit N; (server) */
const char *
slc_mysql_rule_match_limit(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_sql_rules_t *rl = slc_mysql_rule_list(cf, conf);
    long long        n = slc_conf_parse_int(&cf->args[1]);

    (void) cmd;
    if (n < 100 || n > 100000000) {
        return "\"rule_match_limit\" takes a number from 100 to "
               "100000000";
    }
    if (rl == NULL || slc_sql_rules_limit(rl, (uint32_t) n) != SLC_OK) {
        return "out of memory";
    }
    return NULL;
}

int
slc_mysql_rule_check(const slc_mysql_srv_t *srv, char *err, size_t errlen)
{
    const slc_router_t *router = slc_mysql_srv_router(srv);

    for (unsigned i = 0; srv->rules != NULL && i < srv->rules->n; i++) {
        slc_sql_rule_t              *r = &srv->rules->rule[i];
        const slc_upstream_server_t *us;

        if (r->route != SLC_RULE_ROUTE_NONE && router->command == NULL) {
            snprintf(err, errlen, "%s:%u: rule \"%s\": route needs a router "
                "that routes each statement (readwritesplit), not \"%s\"",
                r->file, r->line, r->name, srv->router->name);
            return SLC_ERROR;
        }
        if (r->route != SLC_RULE_ROUTE_SERVER) {
            continue;
        }
        us = slc_upstream_find(srv->upstream, r->server);
        if (us == NULL) {
            snprintf(err, errlen, "%s:%u: rule \"%s\": no server \"%s\" in "
                "upstream \"%s\"", r->file, r->line, r->name, r->server,
                srv->upstream->name.data);
            return SLC_ERROR;
        }
        r->server_at = (unsigned) (us - srv->upstream->servers);
    }
    return SLC_OK;
}
