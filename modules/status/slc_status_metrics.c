/*
 * What the status listener reports (slc_status_metrics.h): so far the
 * build, the configuration (its generation, when this process loaded
 * it, the SHA-1 of its file: two hosts whose hashes differ run different
 * configurations) and the listener's own answers.  Names follow
 * Prometheus' conventions (docs/operations.md lists them): the `sluice_`
 * prefix, base units, `_total` for counters only.
 */

#include "slc_core.h"
#include "slc_module.h"
#include "slc_sha1.h"
#include "slc_status_metrics.h"

#include <time.h>

slc_status_state_t  slc_status_state;

unsigned
slc_status_code_index(unsigned code)
{
    static const unsigned codes[] = SLC_STATUS_CODES;
    unsigned              i500 = 0;

    for (unsigned i = 0; i < slc_nelems(codes); i++) {
        if (codes[i] == code) {
            return i;
        }
        i500 = codes[i] == 500 ? i : i500;
    }
    return i500;
}

void
slc_status_conf_hash(const char *path)
{
    slc_sha1_ctx_t  c;
    uint8_t         d[SLC_SHA1_LEN], buf[65536];
    size_t          n, total = 0;
    FILE           *f = fopen(path, "re");

    strlcpy(slc_status_state.conf_sha1, "unreadable",
        sizeof(slc_status_state.conf_sha1));
    if (f == NULL) {
        return;
    }
    slc_sha1_init(&c);
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0
           && (total += n) <= (16u << 20))
    {
        slc_sha1_update(&c, buf, n);
    }
    if (!ferror(f) && total <= (16u << 20)) {
        slc_sha1_final(&c, d);
        for (unsigned i = 0; i < SLC_SHA1_LEN; i++) {
            snprintf(slc_status_state.conf_sha1 + 2 * i, 3, "%02x", d[i]);
        }
    }
    fclose(f);
}

static const char *
slc_status_build_labels(char *mods, size_t cap)
{
    strlcpy(mods, slc_module_names, cap);
    for (char *p = mods; *p != '\0'; p++) {
        *p = *p == ' ' ? ',' : *p;
    }
    return mods;
}

static void
slc_status_build(const slc_cycle_t *cycle, slc_metrics_t *m)
{
    char              mods[512];
    const char *const build[] = {
        "version", SLC_VERSION,
        "modules", slc_status_build_labels(mods, sizeof(mods)), NULL };
    const char *const conf[] = {
        "sha1", slc_status_state.conf_sha1, NULL };

    slc_metrics_family(m, "sluice_build_info", SLC_METRIC_GAUGE,
        "The version and the modules compiled in (always 1).");
    slc_metrics_u64(m, build, 1);
    slc_metrics_family(m, "sluice_config_info", SLC_METRIC_GAUGE,
        "The SHA-1 of the main configuration file as loaded (always 1).");
    slc_metrics_u64(m, conf, 1);
    slc_metrics_family(m, "sluice_config_generation", SLC_METRIC_GAUGE,
        "The configuration's generation: 1 at start, one more per "
        "reload.");
    slc_metrics_u64(m, NULL, cycle->generation);
    slc_metrics_family(m, "sluice_config_load_timestamp_seconds",
        SLC_METRIC_GAUGE, "When the running configuration was loaded "
        "(Unix time).");
    slc_metrics_double(m, NULL, (double) slc_status_state.loaded_ms / 1000);
    slc_metrics_family(m, "sluice_worker_processes", SLC_METRIC_GAUGE,
        "Worker processes the configuration asks for.");
    slc_metrics_u64(m, NULL, (uint64_t) cycle->worker_processes);
}

/* The listener's own answers, by status code. */
static void
slc_status_self(slc_metrics_t *m)
{
    static const unsigned codes[] = SLC_STATUS_CODES;
    char                  code[8];
    const char *const     l[] = { "code", code, NULL };

    slc_metrics_family(m, "sluice_status_responses_total",
        SLC_METRIC_COUNTER, "Answers of the status listener, by HTTP "
        "status code.");
    for (unsigned i = 0; i < slc_nelems(codes); i++) {
        snprintf(code, sizeof(code), "%u", codes[i]);
        slc_metrics_u64(m, l, slc_status_state.responses[i]);
    }
    slc_metrics_family(m, "sluice_status_connections_refused_total",
        SLC_METRIC_COUNTER, "Connections to the status listener closed "
        "at accept: too many at once.");
    slc_metrics_u64(m, NULL, slc_status_state.refused);
}

void
slc_status_metrics(const slc_cycle_t *cycle, slc_metrics_t *m)
{
    slc_status_build(cycle, m);
    slc_status_self(m);
    for (unsigned i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i]->metrics != NULL) {
            slc_modules[i]->metrics(cycle, m);
        }
    }
}
