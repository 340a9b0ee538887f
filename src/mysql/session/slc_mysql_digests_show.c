/*
 * Query digests shown (slc_mysql_digests.h): the admin socket's show
 * digests and digests reset, and the top `digest_metrics` in /metrics.
 */

#include "slc_core.h"
#include "slc_admin.h"
#include "slc_log.h"
#include "slc_metrics.h"
#include "slc_mysql_digests.h"
#include "slc_mysql_digests_show.h"

#define SLC_DIGESTS_SHOW      20
#define SLC_DIGESTS_SHOW_MAX  1000

/* The bound under which fraction q of e's runs fell, in ms (-1: above the
   last bucket). */
static double
slc_digests_quantile_ms(const slc_digest_entry_t *e, double q)
{
    uint64_t cum = 0, all = 0;

    for (unsigned b = 0; b <= SLC_LATENCY_BUCKETS; b++) {
        all += e->hist[b];
    }
    for (unsigned b = 0; b < SLC_LATENCY_BUCKETS; b++) {
        cum += e->hist[b];
        if (all > 0 && (double) cum >= q * (double) all) {
            return (double) slc_latency_le_us[b] / 1000;
        }
    }
    return -1;
}

static void
slc_digests_row(slc_metrics_t *out, const slc_digest_entry_t *e,
    const char *text)
{
    char   clean[SLC_DIGEST_TEXT], user[SLC_DIGEST_USER], db[SLC_DIGEST_DB];
    char   p99[32];
    double q = slc_digests_quantile_ms(e, 0.99);

    slc_admin_clean(clean, sizeof(clean), text);
    slc_admin_clean(user, sizeof(user), e->user);
    slc_admin_clean(db, sizeof(db), e->db);
    if (q < 0) {
        strlcpy(p99, ">10000", sizeof(p99));
    } else {
        snprintf(p99, sizeof(p99), "%.3g", q);
    }
    slc_metrics_printf(out, "%llu %llu %llu %.3f %.3f %s %s %s %s\n",
        (unsigned long long) e->count, (unsigned long long) e->errors,
        (unsigned long long) e->rows,
        e->count ? (double) e->sum_us / 1000 / (double) e->count : 0.0,
        (double) e->max_us / 1000, p99, user[0] ? user : "-",
        db[0] ? db : "-", clean);
}

int
slc_digests_show(slc_cycle_t *cycle, const slc_admin_req_t *req,
    slc_metrics_t *out)
{
    slc_digest_entry_t *all, over;
    size_t              n, max = SLC_DIGESTS_SHOW;
    uint64_t            evicted;

    if (req->argc > req->first + 1
        || (req->argc == req->first + 1
            && (max = slc_admin_number(req->argv[req->first],
                                       SLC_DIGESTS_SHOW_MAX)) == 0))
    {
        slc_metrics_printf(out, "error: usage: show digests [N] (N from 1 "
            "to %d)\n", SLC_DIGESTS_SHOW_MAX);
        return SLC_ERROR;
    }
    all = slc_digests_snapshot(cycle, &n, &over, &evicted);
    slc_metrics_printf(out, "# count errors rows mean_ms max_ms p99_ms user "
        "db digest\n");
    for (size_t i = 0; i < n && i < max; i++) {
        slc_digests_row(out, &all[i], all[i].text);
    }
    if (over.count > 0) {
        slc_digests_row(out, &over, "(the digests that fell out)");
    }
    slc_metrics_printf(out, "# %zu digests, %llu fell out\n", n,
        (unsigned long long) evicted);
    free(all);
    return SLC_OK;
}

int
slc_digests_reset_cmd(slc_cycle_t *cycle, const slc_admin_req_t *req,
    slc_metrics_t *out)
{
    if (req->argc != req->first) {
        slc_metrics_printf(out, "error: digests reset takes no argument\n");
        return SLC_ERROR;
    }
    slc_digests_reset(cycle);
    slc_log(SLC_LOG_NOTICE, "admin: uid %u on %s: digests reset",
        (unsigned) req->uid, req->socket);
    slc_metrics_printf(out, "digests: reset (each worker empties its own "
        "at its next statement)\n");
    return SLC_OK;
}

void
slc_digests_metrics(const slc_cycle_t *cycle, slc_metrics_t *m)
{
    slc_mysql_conf_t   *mc = slc_mysql_conf(cycle);
    slc_digest_entry_t *all, over;
    size_t              n;
    uint64_t            evicted;
    const char         *labels[9] = { "digest", NULL, "user", NULL, "db",
                                      NULL, "text", NULL, NULL };
    char                hex[17];

    if (mc == NULL || mc->digests_zone == NULL) {
        return;
    }
    all = slc_digests_snapshot(cycle, &n, &over, &evicted);
    slc_metrics_family(m, "sluice_digests_evicted_total", SLC_METRIC_COUNTER,
        "Digests that fell out of the top (digest_top per worker).");
    slc_metrics_u64(m, NULL, evicted);
    for (int f = 0; f < 4; f++) {
        static const char *const names[] = { "sluice_digest_calls_total",
            "sluice_digest_errors_total", "sluice_digest_seconds_total",
            "sluice_digest_rows_total" };
        static const char *const helps[] = { "Runs of the statement.",
            "Of those, answered with an ERR.", "Their time.",
            "Result set rows the servers sent for them." };

        slc_metrics_family(m, names[f], SLC_METRIC_COUNTER, helps[f]);
        for (size_t i = 0; i < n && i < (size_t) mc->digest_metrics; i++) {
            snprintf(hex, sizeof(hex), "%016llx",
                (unsigned long long) all[i].hash);
            labels[1] = hex;
            labels[3] = all[i].user;
            labels[5] = all[i].db;
            labels[7] = all[i].text;
            if (f == 2) {
                slc_metrics_double(m, labels, (double) all[i].sum_us / 1e6);
            } else {
                slc_metrics_u64(m, labels, f == 0 ? all[i].count
                                           : f == 1 ? all[i].errors
                                                    : all[i].rows);
            }
        }
    }
    free(all);
}

void
slc_digests_json(const slc_cycle_t *cycle, slc_metrics_t *m)
{
    slc_mysql_conf_t   *mc = slc_mysql_conf(cycle);
    slc_digest_entry_t *all, over;
    size_t              n;
    uint64_t            evicted;

    if (mc == NULL || mc->digests_zone == NULL) {
        slc_metrics_printf(m, "\"digests\":null");
        return;
    }
    all = slc_digests_snapshot(cycle, &n, &over, &evicted);
    slc_metrics_printf(m, "\"digests\":{\"evicted\":%llu,\"overflow\":"
        "%llu,\"top\":[", (unsigned long long) evicted,
        (unsigned long long) over.count);
    for (size_t i = 0; i < n && i < SLC_DIGESTS_SHOW; i++) {
        double q = slc_digests_quantile_ms(&all[i], 0.99);
        char   p99[32] = "null";

        if (q >= 0) {
            snprintf(p99, sizeof(p99), "%.4f", q / 1000);
        }
        slc_metrics_printf(m, "%s{\"digest\":\"%016llx\",\"text\":",
            i ? "," : "", (unsigned long long) all[i].hash);
        slc_metrics_json(m, all[i].text);
        slc_metrics_printf(m, ",\"user\":");
        slc_metrics_json(m, all[i].user);
        slc_metrics_printf(m, ",\"db\":");
        slc_metrics_json(m, all[i].db);
        slc_metrics_printf(m, ",\"count\":%llu,\"error\":%llu,\"errors\":"
            "%llu,\"rows\":%llu,\"seconds\":%.6f,\"max_seconds\":%.6f,"
            "\"p99_seconds\":%s}", (unsigned long long) all[i].count,
            (unsigned long long) all[i].error,
            (unsigned long long) all[i].errors,
            (unsigned long long) all[i].rows,
            (double) all[i].sum_us / 1e6, (double) all[i].max_us / 1e6,
            p99);
    }
    slc_metrics_printf(m, "]}");
    free(all);
}
