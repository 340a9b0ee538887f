/*
 * Servers' admin states and their commands (slc_mysql_upstream_admin.h).
 */

#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_monitor.h"
#include "slc_mysql_upstream_admin.h"

const char *
slc_upstream_admin_name(uint32_t state)
{
    return state == SLC_ADMIN_STATE_DRAIN ? "drain"
           : state == SLC_ADMIN_STATE_MAINT ? "maintenance" : "ready";
}

static slc_upstream_admin_zone_t *
slc_upstream_admin_zone(const slc_mysql_conf_t *mc)
{
    return mc != NULL && mc->admin_zone != NULL ? mc->admin_zone->addr
                                                : NULL;
}

uint64_t
slc_upstream_admin_gen(const slc_mysql_conf_t *mc)
{
    slc_upstream_admin_zone_t *z = slc_upstream_admin_zone(mc);

    return z != NULL ? __atomic_load_n(&z->gen, __ATOMIC_ACQUIRE) : 0;
}

void
slc_upstream_admin_bump(const slc_mysql_conf_t *mc)
{
    slc_upstream_admin_zone_t *z = slc_upstream_admin_zone(mc);

    if (z != NULL) {
        __atomic_add_fetch(&z->gen, 1, __ATOMIC_RELEASE);
    }
}

int
slc_upstream_admin_attach(slc_shm_zone_t *z, slc_cycle_t *cycle, char *err,
    size_t errlen)
{
    slc_upstream_admin_zone_t *az = z->addr;
    slc_mysql_conf_t          *mc = slc_mysql_conf(cycle);
    const slc_server_stats_t  *stats = mc->stats_zone->addr;
    int                        cleared = 0;

    (void) err;
    (void) errlen;
    for (unsigned i = 0; i < SLC_STATS_MAX; i++) {
        if (az->state[i] != SLC_ADMIN_STATE_READY) {
            slc_log(SLC_LOG_NOTICE, "reload: server \"%s\" leaves its "
                "admin state %s (an admin command lasts until a reload)",
                stats[i].key, slc_upstream_admin_name(az->state[i]));
            __atomic_store_n(&az->state[i], SLC_ADMIN_STATE_READY,
                __ATOMIC_RELAXED);
            cleared = 1;
        }
    }
    if (cleared) {
        __atomic_add_fetch(&az->gen, 1, __ATOMIC_RELEASE);
    }
    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        for (unsigned i = 0; i < up->nservers; i++) {
            slc_upstream_server_t *us = &up->servers[i];
            int                    k = slc_upstream_stats_key_index(mc, us);

            us->admin = k >= 0 ? &az->state[k] : NULL;
        }
    }
    return SLC_OK;
}

/* One server's line of show servers. */
static void
slc_upstream_admin_row(const slc_upstream_server_t *us, slc_metrics_t *out)
{
    slc_monitor_entry_t e;
    const char         *state = "unknown";
    char                lag[24] = "-";
    unsigned            role = us->role_auto ? 0 : us->role;

    if (us->monitor != NULL && slc_monitor_read(us->monitor, &e, 0) == SLC_OK
        && e.st.checked_at != 0)
    {
        state = (e.st.flags & SLC_MONITOR_UP) ? "up" : "down";
        role = us->role_auto ? e.st.role : us->role;
        if (e.st.seconds_behind >= 0) {
            snprintf(lag, sizeof(lag), "%lld",
                (long long) e.st.seconds_behind);
        }
    }
    slc_metrics_printf(out, "%s/%s %s %s %s %s %llu %llu %llu\n",
        us->upstream->name.data, us->name, slc_monitor_role_name(role),
        state, slc_upstream_admin_name(us->admin != NULL
            ? __atomic_load_n(us->admin, __ATOMIC_RELAXED) : 0), lag,
        (unsigned long long) __atomic_load_n(&us->stats->active,
                                             __ATOMIC_RELAXED),
        (unsigned long long) __atomic_load_n(&us->stats->connections,
                                             __ATOMIC_RELAXED),
        (unsigned long long) __atomic_load_n(&us->stats->connect_errors,
                                             __ATOMIC_RELAXED));
}

int
slc_upstream_admin_show(slc_cycle_t *cycle, const slc_admin_req_t *req,
    slc_metrics_t *out)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);

    if (req->argc > req->first) {
        slc_metrics_printf(out, "error: show servers takes no argument\n");
        return SLC_ERROR;
    }
    slc_metrics_printf(out, "# server role state admin lag_seconds "
        "connections opened connect_errors\n");
    for (slc_upstream_t *up = mc != NULL ? mc->upstreams : NULL; up != NULL;
         up = up->next)
    {
        for (unsigned i = 0; i < up->nservers; i++) {
            slc_upstream_admin_row(&up->servers[i], out);
        }
    }
    return SLC_OK;
}

/* The server NAME names: UPSTREAM/ADDRESS, or an address one upstream
   alone has; NULL and *many when several have it. */
static slc_upstream_server_t *
slc_upstream_admin_named(slc_mysql_conf_t *mc, const char *name, int *many)
{
    slc_upstream_server_t *found = NULL;
    const char            *slash = strchr(name, '/');

    *many = 0;
    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        if (slash != NULL
            && (strlen(up->name.data) != (size_t) (slash - name)
                || strncmp(up->name.data, name, (size_t) (slash - name))
                   != 0))
        {
            continue;
        }
        for (unsigned i = 0; i < up->nservers; i++) {
            if (strcmp(up->servers[i].name,
                       slash != NULL ? slash + 1 : name) == 0)
            {
                *many |= found != NULL;
                found = &up->servers[i];
            }
        }
    }
    return *many ? NULL : found;
}

int
slc_upstream_admin_server(slc_cycle_t *cycle, const slc_admin_req_t *req,
    slc_metrics_t *out)
{
    static const char *const verbs[] = { "enable", "drain", "disable" };
    slc_mysql_conf_t      *mc = slc_mysql_conf(cycle);
    slc_upstream_server_t *us;
    char                   name[160];
    uint32_t               state = 3, was;
    int                    many;

    if (req->argc == req->first + 2) {
        for (uint32_t i = 0; i < 3; i++) {
            if (strcmp(req->argv[req->first + 1], verbs[i]) == 0) {
                state = i;
            }
        }
    }
    if (state == 3 || mc == NULL) {
        slc_metrics_printf(out, "error: usage: server NAME "
            "drain|disable|enable\n");
        return SLC_ERROR;
    }
    slc_admin_clean(name, sizeof(name), req->argv[req->first]);
    us = slc_upstream_admin_named(mc, req->argv[req->first], &many);
    if (us == NULL || us->admin == NULL) {
        slc_metrics_printf(out, "error: %s server \"%s\"%s\n",
            many ? "more than one" : "no", name,
            many ? ": name it UPSTREAM/ADDRESS" : " (show servers)");
        return SLC_ERROR;
    }
    was = __atomic_exchange_n(us->admin, state, __ATOMIC_RELAXED);
    slc_upstream_admin_bump(mc);
    slc_log(SLC_LOG_NOTICE, "admin: uid %u on %s: server \"%s/%s\" %s -> %s "
        "(until the next reload)", (unsigned) req->uid, req->socket,
        us->upstream->name.data, us->name, slc_upstream_admin_name(was),
        slc_upstream_admin_name(state));
    slc_metrics_printf(out, "server %s/%s: %s -> %s\n",
        us->upstream->name.data, us->name, slc_upstream_admin_name(was),
        slc_upstream_admin_name(state));
    return SLC_OK;
}
