/*
 * Sessions on the admin socket (slc_mysql_session_admin.h).
 */

#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_registry.h"
#include "slc_mysql_session.h"
#include "slc_mysql_session_admin.h"
#include "slc_mysql_router.h"
#include "slc_mysql_upstream_admin.h"

#define SLC_SESSION_ADMIN_SHOW      100
#define SLC_SESSION_ADMIN_SHOW_MAX  10000
#define SLC_SESSION_ADMIN_TICK_MS   1000

/* The server of a registry's slot + 1, as "upstream/address", or "-". */
static void
slc_session_admin_server(const slc_mysql_conf_t *mc, uint32_t slot,
    char *buf, size_t n)
{
    slc_upstream_server_t *us = slot != 0
        ? slc_upstream_stats_server(mc, slot - 1) : NULL;

    if (us == NULL) {
        strlcpy(buf, "-", n);
    } else {
        snprintf(buf, n, "%s/%s", us->upstream->name.data, us->name);
    }
}

int
slc_session_admin_show(slc_cycle_t *cycle, const slc_admin_req_t *req,
    slc_metrics_t *out)
{
    slc_mysql_conf_t     *mc = slc_mysql_conf(cycle);
    slc_registry_t       *r;
    slc_registry_entry_t  e;
    uint64_t              max = SLC_SESSION_ADMIN_SHOW, n = 0, shown = 0;
    char                  own[200], run[200], user[32], host[48];

    if (req->argc > req->first + 1
        || (req->argc == req->first + 1
            && (max = slc_admin_number(req->argv[req->first],
                          SLC_SESSION_ADMIN_SHOW_MAX)) == 0))
    {
        slc_metrics_printf(out, "error: usage: show sessions [N] (N from 1 "
            "to %d)\n", SLC_SESSION_ADMIN_SHOW_MAX);
        return SLC_ERROR;
    }
    if (mc == NULL || mc->registry_zone == NULL) {
        return SLC_OK;
    }
    r = mc->registry_zone->addr;
    slc_metrics_printf(out, "# id process user client server thread_id "
        "running_on\n");
    for (uint64_t i = 0; i <= r->mask; i++) {
        uint64_t id = __atomic_load_n(&r->e[i].id, __ATOMIC_ACQUIRE);

        if (id == 0 || slc_registry_get(r, (uint32_t) id, &e) != SLC_OK) {
            continue;
        }
        if (++n > max) {
            continue;                   /* counted, not shown */
        }
        shown++;
        slc_session_admin_server(mc, e.server, own, sizeof(own));
        slc_session_admin_server(mc, e.run_server, run, sizeof(run));
        slc_admin_clean(user, sizeof(user), e.user[0] ? e.user : "-");
        slc_admin_clean(host, sizeof(host), e.host[0] ? e.host : "-");
        slc_metrics_printf(out, "%llu %u %s %s %s %u %s\n",
            (unsigned long long) id, e.proc, user, host, own, e.thread_id,
            run);
    }
    slc_metrics_printf(out, "# %llu sessions, %llu shown\n",
        (unsigned long long) n, (unsigned long long) shown);
    return SLC_OK;
}

int
slc_session_admin_kill(slc_cycle_t *cycle, const slc_admin_req_t *req,
    slc_metrics_t *out)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);
    uint64_t          id = 0;
    char              word[32];

    if (req->argc == req->first + 1) {
        id = slc_admin_number(req->argv[req->first], UINT32_MAX);
    }
    if (id == 0 || mc == NULL || mc->registry_zone == NULL) {
        slc_metrics_printf(out, "error: usage: kill session ID (the "
            "connection id its client sees; show sessions)\n");
        return SLC_ERROR;
    }
    if (slc_registry_mark_kill(mc->registry_zone->addr, (uint32_t) id)
        != SLC_OK)
    {
        slc_admin_clean(word, sizeof(word), req->argv[req->first]);
        slc_metrics_printf(out, "error: no session %s\n", word);
        return SLC_ERROR;
    }
    slc_upstream_admin_bump(mc);
    slc_log(SLC_LOG_NOTICE, "admin: uid %u on %s: kill session %llu",
        (unsigned) req->uid, req->socket, (unsigned long long) id);
    slc_metrics_printf(out, "session %llu: marked, its worker closes it "
        "within a second\n", (unsigned long long) id);
    return SLC_OK;
}


/* --- the workers' side ---------------------------------------------------- */

static slc_timer_t  slc_session_admin_timer;
static uint64_t     slc_session_admin_seen;

/* One session against the marks and states: 1 when it waits for rest. */
static int
slc_session_admin_check(slc_session_t *s, slc_registry_t *r)
{
    if (s->registered && r != NULL && slc_registry_killed(r, (uint32_t) s->id))
    {
        slc_session_close(s, SLC_LOG_NOTICE, "closed by an admin's kill "
            "session");
        return 0;
    }
    const slc_router_t *rt = slc_mysql_srv_router(s->srv);
    int                 own = s->backend != NULL
                              && slc_upstream_in_maint(s->backend->server);

    if (!own && (rt->maint == NULL || !rt->maint(s, 0))) {
        return 0;
    }
    if (!slc_session_at_rest(s)) {
        return 1;
    }
    if (own) {
        slc_session_close(s, SLC_LOG_INFO, "closed: its server is in "
            "maintenance");
        return 0;
    }
    return rt->maint(s, 1);     /* the router's backends there */
}

static void
slc_session_admin_tick(slc_timer_t *t)
{
    slc_cycle_t      *cycle = t->data;
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);
    uint64_t          gen = slc_upstream_admin_gen(mc);
    slc_session_t    *s, *next;
    unsigned          waiting = 0;

    if (gen != slc_session_admin_seen || slc_sessions.maint) {
        slc_session_admin_seen = gen;
        for (s = TAILQ_FIRST(&slc_sessions.sessions); s != NULL; s = next) {
            next = TAILQ_NEXT(s, link);
            waiting += (unsigned) slc_session_admin_check(s,
                mc->registry_zone != NULL ? mc->registry_zone->addr : NULL);
        }
        slc_sessions.maint = waiting > 0;
    }
    slc_timer_add(slc_loop, t, SLC_SESSION_ADMIN_TICK_MS);
}

void
slc_session_admin_start(slc_cycle_t *cycle)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);

    if (mc == NULL || mc->admin_zone == NULL) {
        return;
    }
    slc_session_admin_seen = slc_upstream_admin_gen(mc);
    slc_session_admin_timer.handler = slc_session_admin_tick;
    slc_session_admin_timer.data = cycle;
    slc_timer_add(slc_loop, &slc_session_admin_timer,
        SLC_SESSION_ADMIN_TICK_MS);
}
