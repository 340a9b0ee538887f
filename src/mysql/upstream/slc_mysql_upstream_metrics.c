/*
 * The upstream servers' metrics (slc_mysql_upstream_metrics.h), for the
 * status listener: what the monitor saw of each server (its entry in the
 * zone mysql_monitor, read under its seqlock) and what the workers count
 * (its entry in mysql_stats, atomic adds).  Labelled by upstream and
 * server (the address as configured).
 */

#include "slc_core.h"
#include "slc_metrics.h"
#include "slc_mysql_conf.h"
#include "slc_mysql_monitor.h"
#include "slc_mysql_upstream_admin.h"
#include "slc_mysql_upstream_metrics.h"

/* What a family reads of one server. */
typedef void (*slc_upstream_sample_pt)(slc_metrics_t *m,
    const char **labels, const slc_upstream_server_t *us,
    const slc_monitor_entry_t *e);

/* The monitor's entry of us into *e: 1, or 0 (not monitored, never
   checked, or no stable copy). */
static int
slc_upstream_seen(const slc_upstream_server_t *us, slc_monitor_entry_t *e)
{
    return us->monitor != NULL
           && slc_monitor_read(us->monitor, e, 0) == SLC_OK
           && e->st.checked_at != 0;
}

/* One family, a sample (or a few) per server of every upstream. */
static void
slc_upstream_each(const slc_cycle_t *cycle, slc_metrics_t *m,
    slc_upstream_sample_pt fn)
{
    slc_mysql_conf_t    *mc = slc_mysql_conf(cycle);
    slc_monitor_entry_t  e;
    const char          *labels[7] = { "upstream", NULL, "server", NULL };

    for (slc_upstream_t *up = mc != NULL ? mc->upstreams : NULL; up != NULL;
         up = up->next)
    {
        labels[1] = up->name.data;
        for (unsigned i = 0; i < up->nservers; i++) {
            const slc_upstream_server_t *us = &up->servers[i];
            int                          seen = slc_upstream_seen(us, &e);

            labels[3] = us->name;
            labels[4] = NULL;
            fn(m, labels, us, seen ? &e : NULL);
        }
    }
}

/* A 0/1 series per value of `name` (labels[4..5]): 1 for `is`. */
static void
slc_upstream_enum(slc_metrics_t *m, const char **labels, const char *name,
    const char *const *values, const char *is)
{
    labels[4] = name;
    labels[6] = NULL;
    for (const char *const *v = values; *v != NULL; v++) {
        labels[5] = *v;
        slc_metrics_u64(m, labels, strcmp(*v, is) == 0);
    }
    labels[4] = NULL;
}

static void
slc_upstream_state(slc_metrics_t *m, const char **labels,
    const slc_upstream_server_t *us, const slc_monitor_entry_t *e)
{
    static const char *const states[] = { "up", "down", "unknown", NULL };

    (void) us;
    slc_upstream_enum(m, labels, "state", states, e == NULL ? "unknown"
                      : (e->st.flags & SLC_MONITOR_UP) ? "up" : "down");
}

static void
slc_upstream_admin_state(slc_metrics_t *m, const char **labels,
    const slc_upstream_server_t *us, const slc_monitor_entry_t *e)
{
    static const char *const states[] = { "ready", "drain", "maintenance",
                                          NULL };

    (void) e;
    slc_upstream_enum(m, labels, "state", states, slc_upstream_admin_name(
        us->admin != NULL ? __atomic_load_n(us->admin, __ATOMIC_RELAXED)
                          : SLC_ADMIN_STATE_READY));
}

static void
slc_upstream_role(slc_metrics_t *m, const char **labels,
    const slc_upstream_server_t *us, const slc_monitor_entry_t *e)
{
    static const char *const roles[] = { "primary", "replica", "none",
                                         NULL };
    unsigned                 r = us->role_auto ? 0 : us->role;

    if (e != NULL && (e->st.flags & SLC_MONITOR_UP)) {
        r = us->role_auto ? e->st.role : us->role;
    }
    slc_upstream_enum(m, labels, "role", roles,
        r == SLC_ROLE_PRIMARY ? "primary"
        : r == SLC_ROLE_REPLICA ? "replica" : "none");
}

static void
slc_upstream_lag(slc_metrics_t *m, const char **labels,
    const slc_upstream_server_t *us, const slc_monitor_entry_t *e)
{
    (void) us;
    if (e != NULL && e->st.seconds_behind >= 0) {
        slc_metrics_u64(m, labels, (uint64_t) e->st.seconds_behind);
    }
}

static void
slc_upstream_checked(slc_metrics_t *m, const char **labels,
    const slc_upstream_server_t *us, const slc_monitor_entry_t *e)
{
    (void) us;
    if (e != NULL) {
        slc_metrics_double(m, labels, (double) e->st.checked_at / 1000);
    }
}

#define SLC_UPSTREAM_COUNTER(fn, field)                                     \
    static void                                                             \
    fn(slc_metrics_t *m, const char **labels,                               \
        const slc_upstream_server_t *us, const slc_monitor_entry_t *e)      \
    {                                                                       \
        (void) e;                                                           \
        slc_metrics_u64(m, labels, us->stats == NULL ? 0                    \
            : __atomic_load_n(&us->stats->field, __ATOMIC_RELAXED));        \
    }

SLC_UPSTREAM_COUNTER(slc_upstream_active, active)
SLC_UPSTREAM_COUNTER(slc_upstream_opened, connections)
SLC_UPSTREAM_COUNTER(slc_upstream_errors, connect_errors)
SLC_UPSTREAM_COUNTER(slc_upstream_bytes_in, bytes_in)
SLC_UPSTREAM_COUNTER(slc_upstream_bytes_out, bytes_out)

static void
slc_upstream_response(slc_metrics_t *m, const char **labels,
    const slc_upstream_server_t *us, const slc_monitor_entry_t *e)
{
    slc_latency_t sum;

    (void) e;
    memset(&sum, 0, sizeof(sum));
    if (us->stats != NULL) {
        slc_latency_add_to(&us->stats->response, &sum);
    }
    slc_metrics_histogram(m, labels, slc_latency_le_s, sum.count,
        SLC_LATENCY_BUCKETS, (double) sum.sum_us / 1e6);
}

static const struct {
    const char              *name;
    slc_metric_type_e        type;
    const char              *help;
    slc_upstream_sample_pt   fn;
} slc_upstream_families[] = {
    { "sluice_server_state", SLC_METRIC_GAUGE, "The server's state as "
      "the monitor last saw it (unknown: not monitored, or not checked "
      "yet): 1 for the state it is in.", slc_upstream_state },
    { "sluice_server_admin_state", SLC_METRIC_GAUGE, "The server's admin "
      "state (an admin socket's server command, until the next reload): "
      "1 for the state it is in.", slc_upstream_admin_state },
    { "sluice_server_role", SLC_METRIC_GAUGE, "The server's role: "
      "configured, or seen by the monitor for role=auto (none: not known "
      "or down).", slc_upstream_role },
    { "sluice_server_replication_lag_seconds", SLC_METRIC_GAUGE,
      "Seconds_Behind_Master at the monitor's last check (replicas "
      "whose lag is known).", slc_upstream_lag },
    { "sluice_server_check_timestamp_seconds", SLC_METRIC_GAUGE,
      "When the monitor last checked the server (Unix time).",
      slc_upstream_checked },
    { "sluice_server_connections", SLC_METRIC_GAUGE, "Backend "
      "connections open to the server, all workers.", slc_upstream_active },
    { "sluice_server_connections_in_use", SLC_METRIC_GAUGE, "Of those, "
      "the ones a client session holds: all of them, as long as sluice "
      "pools no connection.", slc_upstream_active },
    { "sluice_server_connections_opened_total", SLC_METRIC_COUNTER,
      "Backend connections opened to the server.", slc_upstream_opened },
    { "sluice_server_connect_errors_total", SLC_METRIC_COUNTER,
      "Backend connections to the server that failed to open.",
      slc_upstream_errors },
    { "sluice_server_received_bytes_total", SLC_METRIC_COUNTER,
      "Bytes read from the server.", slc_upstream_bytes_in },
    { "sluice_server_sent_bytes_total", SLC_METRIC_COUNTER,
      "Bytes written to the server.", slc_upstream_bytes_out },
    { "sluice_server_response_duration_seconds", SLC_METRIC_HISTOGRAM,
      "The server's answers to the clients' commands, from the command's "
      "arrival to the answer's end.", slc_upstream_response },
};

void
slc_upstream_metrics(const slc_cycle_t *cycle, slc_metrics_t *m)
{
    for (unsigned i = 0; i < slc_nelems(slc_upstream_families); i++) {
        slc_metrics_family(m, slc_upstream_families[i].name,
            slc_upstream_families[i].type, slc_upstream_families[i].help);
        slc_upstream_each(cycle, m, slc_upstream_families[i].fn);
    }
}
