/*
 * The query rules' `route` in readwritesplit (slc_rwsplit.h,
 * slc_rwsplit_ruled): a rule's route takes the place of a routing hint,
 * for the statements that may go where it says.
 */

#include "slc_core.h"
#include "slc_mysql_rules.h"
#include "slc_mysql_session.h"
#include "slc_rwsplit.h"

/* May the statement run on a replica at all (a read, in autocommit)? */
static int
slc_rwsplit_rule_may_read(const slc_sql_info_t *si)
{
    slc_sql_info_t plain = *si;

    plain.hint = SLC_SQL_HINT_NONE;
    return slc_sql_route(&plain, 0, 0) == SLC_SQL_TO_REPLICA;
}

const slc_sql_info_t *
slc_rwsplit_ruled(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const slc_sql_info_t *si, slc_sql_info_t *tmp)
{
    const slc_sql_rule_verdict_t *v = slc_cmd_rules(s);
    const slc_sql_rule_t         *r;
    const slc_upstream_server_t  *us = NULL;

    rc->want = NULL;
    if (v == NULL || v->route < 0) {
        return si;
    }
    r = slc_rules_get(s, v->route);
    if (r->route == SLC_RULE_ROUTE_SERVER) {
        us = &s->srv->upstream->servers[r->server_at];  /* resolved once */
    }
    if (r->route == SLC_RULE_ROUTE_PRIMARY
        || (us != NULL && s->backend != NULL && us == s->backend->server))
    {
        if (si->flags & SLC_SQL_F_SESSION_STATE) {
            return si;              /* on every backend, the primary too */
        }
        *tmp = *si;
        tmp->hint = SLC_SQL_HINT_PRIMARY;
        return tmp;
    }
    if (!slc_rwsplit_rule_may_read(si)) {
        slc_rules_refused(s, v->route, "a statement that writes, or must "
            "run on the primary, goes to the primary");
        return si;
    }
    *tmp = *si;
    tmp->hint = SLC_SQL_HINT_REPLICA;
    rc->want = us;
    return tmp;
}
