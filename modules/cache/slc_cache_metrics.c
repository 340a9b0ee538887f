/*
 * The cache zones' metrics (slc_cache_metrics.h): the store's counters
 * and the filter's (both in the zone, atomic adds), the Redis tier's
 * beside them, each family with a sample per zone, labelled zone="NAME";
 * a reason or a result is a label, so that a family sums to its whole.
 */

#include "slc_core.h"
#include "slc_cache_metrics.h"
#include "slc_cache_policy.h"

#define SLC_CACHE_LD(v)  __atomic_load_n(&(v), __ATOMIC_RELAXED)

/* A family of one value per zone; get picks it. */
static void
slc_cache_metric(slc_metrics_t *m, const slc_cache_zone_view_t *z,
    unsigned n, const char *name, slc_metric_type_e type, const char *help,
    uint64_t (*get)(const slc_cache_zone_view_t *))
{
    slc_metrics_family(m, name, type, help);
    for (unsigned i = 0; i < n; i++) {
        const char *const l[] = { "zone", z[i].name, NULL };

        slc_metrics_u64(m, l, get(&z[i]));
    }
}

/* A family of one value per zone and reason (names[k], values at k). */
static void
slc_cache_reasons(slc_metrics_t *m, const slc_cache_zone_view_t *z,
    unsigned n, const char *name, const char *help, const char *label,
    const char *const *names, unsigned k0, unsigned nk,
    uint64_t (*get)(const slc_cache_zone_view_t *, unsigned))
{
    slc_metrics_family(m, name, SLC_METRIC_COUNTER, help);
    for (unsigned i = 0; i < n; i++) {
        for (unsigned k = k0; k < nk; k++) {
            const char *const l[] = { "zone", z[i].name, label, names[k],
                                      NULL };

            slc_metrics_u64(m, l, get(&z[i], k));
        }
    }
}

#define SLC_CACHE_GET(fn, expr)                                             \
    static uint64_t fn(const slc_cache_zone_view_t *z) { return (expr); }

SLC_CACHE_GET(slc_cache_get_hits, z->st.hits)
SLC_CACHE_GET(slc_cache_get_misses, z->st.misses)
SLC_CACHE_GET(slc_cache_get_stores, z->st.stores)
SLC_CACHE_GET(slc_cache_get_evictions, z->st.evictions)
SLC_CACHE_GET(slc_cache_get_expired, z->st.expired)
SLC_CACHE_GET(slc_cache_get_stale, z->st.stale)
SLC_CACHE_GET(slc_cache_get_invalidations, z->st.invalidations)
SLC_CACHE_GET(slc_cache_get_entries, z->st.entries)
SLC_CACHE_GET(slc_cache_get_bytes, z->st.bytes)
SLC_CACHE_GET(slc_cache_get_size, z->size)
SLC_CACHE_GET(slc_cache_get_waits, SLC_CACHE_LD(z->cnt->waits))
SLC_CACHE_GET(slc_cache_get_bypass, SLC_CACHE_LD(z->cnt->binlog_bypass))

static uint64_t
slc_cache_get_refused(const slc_cache_zone_view_t *z, unsigned k)
{
    return z->st.refused[k];
}

static uint64_t
slc_cache_get_not_stored(const slc_cache_zone_view_t *z, unsigned k)
{
    return SLC_CACHE_LD(z->cnt->not_stored[k]);
}

static uint64_t
slc_cache_get_uncacheable(const slc_cache_zone_view_t *z, unsigned k)
{
    return SLC_CACHE_LD(z->cnt->uncacheable[k]);
}

/* The Redis tier's counters, by their place in the struct. */
static const struct {
    const char  *name;
    size_t       off;
    const char  *help;
} slc_cache_redis_counters[] = {
#define SLC_CACHE_R(n, f, h) \
    { "sluice_cache_redis_" n "_total", \
      offsetof(slc_cache_remote_counters_t, f), h }
    SLC_CACHE_R("lookups", lookups, "Lookups asked of Redis."),
    SLC_CACHE_R("hits", hits, "Lookups Redis answered with an entry."),
    SLC_CACHE_R("misses", misses, "Lookups Redis had no entry for."),
    SLC_CACHE_R("stale", stale, "Entries older than their tables."),
    SLC_CACHE_R("decode_errors", decode_errors, "Values that were not "
                "entries of this sluice: never served."),
    SLC_CACHE_R("timeouts", timeouts, "Requests not answered within the "
                "service's timeout."),
    SLC_CACHE_R("skipped", skipped, "Lookups not asked: Redis down, its "
                "breaker open, or tables owed a bump."),
    SLC_CACHE_R("stores", stores, "Entries sent to Redis."),
    SLC_CACHE_R("dropped", dropped, "Stores and bumps not sent: the "
                "queue full, or Redis down."),
    SLC_CACHE_R("errors", errors, "Commands Redis refused, replies "
                "lost."),
    SLC_CACHE_R("bumps", bumps, "Table generations moved by writes."),
    SLC_CACHE_R("published", published, "Invalidations pushed by "
                "workers."),
    SLC_CACHE_R("push_bypass", push_bypass, "Zone hits not served: the "
                "pushed invalidations not live."),
    SLC_CACHE_R("strict_held", strict_held, "Writes' OKs held for their "
                "bump (strict)."),
    SLC_CACHE_R("strict_failed", strict_failed, "Of those, bumps that "
                "failed or timed out."),
    SLC_CACHE_R("breaker_opened", opened, "Times the lookups' breaker "
                "opened."),
    SLC_CACHE_R("breaker_closed", closed, "Times it closed again."),
#undef SLC_CACHE_R
};

static void
slc_cache_redis_metrics(const slc_cache_zone_view_t *z, unsigned n,
    slc_metrics_t *m)
{
    for (unsigned k = 0; k < slc_nelems(slc_cache_redis_counters); k++) {
        slc_metrics_family(m, slc_cache_redis_counters[k].name,
            SLC_METRIC_COUNTER, slc_cache_redis_counters[k].help);
        for (unsigned i = 0; i < n; i++) {
            const char *const l[] = { "zone", z[i].name, NULL };
            const uint64_t   *v = (const uint64_t *) (const void *)
                ((const char *) &z[i].cnt->remote
                 + slc_cache_redis_counters[k].off);

            slc_metrics_u64(m, l, __atomic_load_n(v, __ATOMIC_RELAXED));
        }
    }
}

/* The families of one value per zone, in their order. */
static const struct {
    const char          *name;
    slc_metric_type_e    type;
    const char          *help;
    uint64_t           (*get)(const slc_cache_zone_view_t *);
} slc_cache_plain[] = {
    { "sluice_cache_hits_total", SLC_METRIC_COUNTER,
      "Lookups answered from the zone.", slc_cache_get_hits },
    { "sluice_cache_misses_total", SLC_METRIC_COUNTER,
      "Lookups the zone had no fresh entry for.", slc_cache_get_misses },
    { "sluice_cache_stores_total", SLC_METRIC_COUNTER, "Entries stored.",
      slc_cache_get_stores },
    { "sluice_cache_evictions_total", SLC_METRIC_COUNTER,
      "Entries evicted for room.", slc_cache_get_evictions },
    { "sluice_cache_expired_total", SLC_METRIC_COUNTER,
      "Entries dropped at lookup: past their TTL.", slc_cache_get_expired },
    { "sluice_cache_stale_total", SLC_METRIC_COUNTER, "Entries dropped at "
      "lookup: a table they read was written.", slc_cache_get_stale },
    { "sluice_cache_invalidations_total", SLC_METRIC_COUNTER,
      "Table generations moved.", slc_cache_get_invalidations },
    { "sluice_cache_waits_total", SLC_METRIC_COUNTER, "Lookups that "
      "waited for another session's store (single flight).",
      slc_cache_get_waits },
    { "sluice_cache_binlog_bypass_total", SLC_METRIC_COUNTER,
      "Lookups skipped: the binlog reader not live.", slc_cache_get_bypass },
    { "sluice_cache_entries", SLC_METRIC_GAUGE, "Entries in the zone.",
      slc_cache_get_entries },
    { "sluice_cache_bytes", SLC_METRIC_GAUGE,
      "Key and result bytes of the entries.", slc_cache_get_bytes },
    { "sluice_cache_size_bytes", SLC_METRIC_GAUGE, "The zone's size.",
      slc_cache_get_size },
};

/* The cache_rules' counters: a series per zone and rule ("server/rule":
   the server {} block's first listen, then the rule's name), for the
   rules the zone has counted since it was made. */
static void
slc_cache_rules_metrics(const slc_cache_zone_view_t *z, unsigned n,
    slc_metrics_t *m)
{
    static const struct {
        const char *name;
        const char *help;
        size_t      off;
    } fam[] = {
        { "sluice_cache_rule_matches_total", "Statements a cache_rule "
          "matched.", offsetof(slc_cache_rule_stats_t, matches) },
        { "sluice_cache_rule_hits_total", "Of those, answered from the "
          "zone.", offsetof(slc_cache_rule_stats_t, hits) },
        { "sluice_cache_rule_stores_total", "Of those, stored.",
          offsetof(slc_cache_rule_stats_t, stores) },
    };
    const char *labels[5] = { "zone", NULL, "rule", NULL, NULL };

    for (unsigned f = 0; f < slc_nelems(fam); f++) {
        slc_metrics_family(m, fam[f].name, SLC_METRIC_COUNTER, fam[f].help);
        for (unsigned i = 0; i < n; i++) {
            labels[1] = z[i].name;
            for (unsigned r = 0; r < SLC_CACHE_RULES_MAX; r++) {
                const slc_cache_rule_stats_t *rs = &z[i].cnt->rules[r];

                if (rs->name[0] == '\0') {
                    continue;
                }
                labels[3] = rs->name;
                slc_metrics_u64(m, labels, SLC_CACHE_LD(*(const uint64_t *)
                    ((const char *) rs + fam[f].off)));
            }
        }
    }
}

void
slc_cache_metrics(const slc_cache_zone_view_t *z, unsigned n,
    slc_metrics_t *m)
{
    static const char *const ns[] = { "error", "warnings", "too_big",
        "store", "state", "closed", "replica" };
    const char *refusal[SLC_CACHE_NREFUSALS];
    const char *verdict[SLC_CACHE_NVERDICTS];

    for (unsigned k = 0; k < SLC_CACHE_NREFUSALS; k++) {
        refusal[k] = slc_cache_refusal_name((slc_cache_refusal_e) k);
    }
    for (unsigned k = 0; k < SLC_CACHE_NVERDICTS; k++) {
        verdict[k] = slc_cache_verdict_name((slc_cache_verdict_t) k);
    }
    for (unsigned k = 0; k < slc_nelems(slc_cache_plain); k++) {
        slc_cache_metric(m, z, n, slc_cache_plain[k].name,
            slc_cache_plain[k].type, slc_cache_plain[k].help,
            slc_cache_plain[k].get);
    }
    slc_cache_reasons(m, z, n, "sluice_cache_store_refusals_total",
        "Stores the zone refused, by reason.", "reason", refusal, 0,
        SLC_CACHE_NREFUSALS, slc_cache_get_refused);
    slc_cache_reasons(m, z, n, "sluice_cache_not_stored_total",
        "Answers passed on but not kept, by reason.", "reason", ns, 0,
        slc_nelems(ns), slc_cache_get_not_stored);
    slc_cache_reasons(m, z, n, "sluice_cache_uncacheable_total",
        "Statements not looked up, by reason.", "reason", verdict, 1,
        SLC_CACHE_NVERDICTS, slc_cache_get_uncacheable);
    slc_cache_rules_metrics(z, n, m);
    slc_cache_redis_metrics(z, n, m);
}
