/*
 * The listeners' metrics (slc_traffic_metrics in slc_mysql_traffic.h),
 * read from the zone mysql_traffic by the status process: a series per
 * server {} block (label `listener`, its first listen) and worker slot
 * (label `worker`), and the query durations per block and route, the
 * workers' histograms added up.
 */

#include "slc_core.h"
#include "slc_metrics.h"
#include "slc_mysql_traffic.h"

static const char *const slc_traffic_refused_names[] = {
    "worker_connections", "max_handshakes_per_host", "max_handshakes",
    "access_denied", "backend", "protocol", NULL
};
static const char *const slc_traffic_cmd_names[] = {
    "query", "prepare", "execute", "fetch", "close", "ping", "init_db",
    "change_user", "reset_connection", "quit", "other", NULL
};
static const char *const slc_traffic_err_names[] = {
    "server", "proxy", "backend_lost", "timeout", NULL
};
static const char *const slc_traffic_causal_names[] = {
    "waited", "timeout", "primary", NULL
};
static const char *const slc_traffic_route_names[] = {
    "primary", "replica", "cache", "any", NULL
};

/* A family of counters: `n` values at `off` in a row, one series each
   (label `label` = names[i]), or one without a label (names NULL). */
typedef struct {
    const char          *name;
    const char          *help;
    size_t               off;
    const char          *label;
    const char *const   *names;
} slc_traffic_family_t;

static const slc_traffic_family_t slc_traffic_families[] = {
    { "sluice_sessions_accepted_total", "Client connections accepted.",
      offsetof(slc_traffic_t, accepted), NULL, NULL },
    { "sluice_sessions_refused_total", "Clients refused before they were "
      "logged in, by reason.", offsetof(slc_traffic_t, refused), "reason",
      slc_traffic_refused_names },
    { "sluice_client_received_bytes_total", "Bytes read from the clients.",
      offsetof(slc_traffic_t, bytes[0]), NULL, NULL },
    { "sluice_client_sent_bytes_total", "Bytes written to the clients.",
      offsetof(slc_traffic_t, bytes[1]), NULL, NULL },
    { "sluice_commands_total", "Commands the clients sent, by kind.",
      offsetof(slc_traffic_t, commands), "command", slc_traffic_cmd_names },
    { "sluice_errors_total", "Errors of logged-in sessions, by kind "
      "(server: an ERR answer; proxy: an ERR of sluice's; backend_lost; "
      "timeout: idle_timeout).", offsetof(slc_traffic_t, errors), "kind",
      slc_traffic_err_names },
    { "sluice_readwritesplit_retries_total", "Reads retried on another "
      "server after theirs failed.", offsetof(slc_traffic_t, retries),
      NULL, NULL },
    { "sluice_readwritesplit_causal_reads_total", "Reads after a write "
      "whose replica had not shown it applied, by outcome (waited: the "
      "replica caught up within causal_reads_timeout and answered; "
      "timeout: the primary answered after the wait; primary: sent there "
      "at once).",
      offsetof(slc_traffic_t, causal), "outcome", slc_traffic_causal_names },
};

/* The sessions open in each slot's processes, of column `col`. */
static void
slc_traffic_current(const slc_traffic_zone_t *t, unsigned col,
    uint64_t *by_slot, unsigned nslots)
{
    uint32_t nprocs = __atomic_load_n(&t->nprocs, __ATOMIC_RELAXED);

    memset(by_slot, 0, nslots * sizeof(*by_slot));
    for (uint32_t p = 0; p < nprocs && p < SLC_PROC_MAX; p++) {
        uint32_t s = __atomic_load_n(&t->slot_of[p], __ATOMIC_RELAXED);

        if (s != 0 && s <= nslots) {
            by_slot[s - 1] += __atomic_load_n(&t->cur[p][col],
                                              __ATOMIC_RELAXED);
        }
    }
}

static void
slc_traffic_sessions(const slc_cycle_t *cycle, const slc_traffic_zone_t *t,
    slc_metrics_t *m, unsigned nslots)
{
    const char *labels[5] = { "listener", NULL, "worker", NULL, NULL };
    uint64_t    by_slot[SLC_TRAFFIC_SLOTS];
    char        w[16];

    slc_metrics_family(m, "sluice_sessions", SLC_METRIC_GAUGE,
        "Client sessions open now.");
    for (slc_mysql_srv_t *srv = slc_mysql_conf(cycle)->servers;
         srv != NULL; srv = srv->next)
    {
        slc_traffic_current(t, srv->traffic_col, by_slot, nslots);
        labels[1] = t->names[srv->traffic_col];
        for (unsigned s = 0; s < nslots; s++) {
            snprintf(w, sizeof(w), "%u", s);
            labels[3] = w;
            slc_metrics_u64(m, labels, by_slot[s]);
        }
    }
}

static void
slc_traffic_family(const slc_cycle_t *cycle, const slc_traffic_zone_t *t,
    slc_metrics_t *m, unsigned nslots, const slc_traffic_family_t *f)
{
    const char *labels[7] = { "listener", NULL, "worker", NULL, NULL };
    char        w[16];

    slc_metrics_family(m, f->name, SLC_METRIC_COUNTER, f->help);
    for (slc_mysql_srv_t *srv = slc_mysql_conf(cycle)->servers;
         srv != NULL; srv = srv->next)
    {
        labels[1] = t->names[srv->traffic_col];
        for (unsigned s = 0; s < nslots; s++) {
            const uint64_t *v = (const uint64_t *)
                ((const char *) &t->rows[s][srv->traffic_col] + f->off);

            snprintf(w, sizeof(w), "%u", s);
            labels[3] = w;
            labels[4] = f->label;
            for (unsigned i = 0; f->names == NULL ? i < 1
                                 : f->names[i] != NULL; i++)
            {
                labels[5] = f->names != NULL ? f->names[i] : NULL;
                slc_metrics_u64(m, labels,
                    __atomic_load_n(&v[i], __ATOMIC_RELAXED));
            }
        }
    }
}

static void
slc_traffic_durations(const slc_cycle_t *cycle, const slc_traffic_zone_t *t,
    slc_metrics_t *m, unsigned nslots)
{
    const char    *labels[5] = { "listener", NULL, "route", NULL, NULL };
    slc_latency_t  sum;

    slc_metrics_family(m, "sluice_query_duration_seconds",
        SLC_METRIC_HISTOGRAM, "Commands from their arrival to the end of "
        "their answer, by route (primary, replica: the server that "
        "answered; cache: a cache hit; any: a server of no single known "
        "role).");
    for (slc_mysql_srv_t *srv = slc_mysql_conf(cycle)->servers;
         srv != NULL; srv = srv->next)
    {
        labels[1] = t->names[srv->traffic_col];
        for (unsigned r = 0; r < SLC_ROUTE_N; r++) {
            memset(&sum, 0, sizeof(sum));
            for (unsigned s = 0; s < nslots; s++) {
                slc_latency_add_to(&t->rows[s][srv->traffic_col].duration[r],
                    &sum);
            }
            labels[3] = slc_traffic_route_names[r];
            slc_metrics_histogram(m, labels, slc_latency_le_s, sum.count,
                SLC_LATENCY_BUCKETS, (double) sum.sum_us / 1e6);
        }
    }
}

/* The query rules' counts: a series per block and rule it has now. */
static const struct {
    const char  *name;
    const char  *help;
    size_t       off;
} slc_traffic_rule_families[] = {
    { "sluice_rule_matches_total", "Statements a query rule matched.",
      offsetof(slc_rule_count_t, matches) },
    { "sluice_rule_match_failures_total", "Matches of a query rule's "
      "patterns that hit rule_match_limit (taken as a match by a rule "
      "that blocks or says no_cache, as no match by the others).",
      offsetof(slc_rule_count_t, failures) },
    { "sluice_rule_refused_total", "Statements a query rule matched whose "
      "route or rewrite was not followed (a write routed to a replica, a "
      "server not available, a rewrite that does not fit).",
      offsetof(slc_rule_count_t, refused) },
};

static void
slc_traffic_rule_metrics(const slc_cycle_t *cycle,
    const slc_traffic_zone_t *t, slc_metrics_t *m)
{
    const char *labels[5] = { "listener", NULL, "rule", NULL, NULL };

    for (unsigned f = 0; f < slc_nelems(slc_traffic_rule_families); f++) {
        slc_metrics_family(m, slc_traffic_rule_families[f].name,
            SLC_METRIC_COUNTER, slc_traffic_rule_families[f].help);
        for (slc_mysql_srv_t *srv = slc_mysql_conf(cycle)->servers;
             srv != NULL; srv = srv->next)
        {
            labels[1] = t->names[srv->traffic_col];
            for (unsigned i = 0; srv->rules != NULL && i < srv->rules->n;
                 i++)
            {
                const slc_sql_rule_t *r = &srv->rules->rule[i];
                const uint64_t *v = (const uint64_t *) ((const char *)
                    &t->rules[srv->traffic_col][r->slot]
                    + slc_traffic_rule_families[f].off);

                labels[3] = r->name;
                slc_metrics_u64(m, labels,
                    __atomic_load_n(v, __ATOMIC_RELAXED));
            }
        }
    }
}

void
slc_traffic_metrics(const slc_cycle_t *cycle, slc_metrics_t *m)
{
    slc_mysql_conf_t   *mc = slc_mysql_conf(cycle);
    slc_traffic_zone_t *t;
    unsigned            nslots;

    if (mc == NULL || mc->traffic_zone == NULL
        || mc->traffic_zone->addr == NULL)
    {
        return;
    }
    t = mc->traffic_zone->addr;
    nslots = (unsigned) cycle->worker_processes;
    if (nslots > SLC_TRAFFIC_SLOTS) {
        nslots = SLC_TRAFFIC_SLOTS;
    }
    slc_traffic_sessions(cycle, t, m, nslots);
    for (unsigned i = 0; i < slc_nelems(slc_traffic_families); i++) {
        slc_traffic_family(cycle, t, m, nslots, &slc_traffic_families[i]);
    }
    slc_traffic_durations(cycle, t, m, nslots);
    slc_traffic_rule_metrics(cycle, t, m);
}
