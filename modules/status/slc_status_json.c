/*
 * GET /status (slc_status_json.h): the build, the configuration, every
 * metric family as JSON (read back from the Prometheus text the hooks
 * wrote, as the text page is), and what the modules add of their own
 * (slc_module_t.status_json: the query digests).
 */

#include "slc_core.h"
#include "slc_module.h"
#include "slc_status_json.h"
#include "slc_status_metrics.h"
#include "slc_status_text.h"

/* s[0..n), written as a JSON string: a metric's escapes (\\ \" \n)
   undone first (at most 4 KiB of it: no value of ours is longer). */
void
slc_status_json_string(slc_metrics_t *m, const char *s, size_t n)
{
    char   buf[4096];
    size_t o = 0;

    for (size_t i = 0; i < n && o < sizeof(buf); i++) {
        char c = s[i];

        if (c == '\\' && i + 1 < n) {
            c = s[++i];
            c = c == 'n' ? '\n' : c;
        }
        buf[o++] = c;
    }
    slc_metrics_json_n(m, buf, o);
}

/* name="value",... as a JSON object. */
static void
slc_status_json_labels(slc_metrics_t *m, const char *l, size_t n)
{
    size_t i = 0;
    int    first = 1;

    slc_metrics_append(m, "{", 1);
    while (i < n) {
        size_t k = i, v;

        while (k < n && l[k] != '=') {
            k++;
        }
        if (k + 1 >= n || l[k + 1] != '"') {
            break;
        }
        for (v = k + 2; v < n && l[v] != '"'; v++) {
            v += l[v] == '\\';
        }
        slc_metrics_append(m, first ? "" : ",", first ? 0 : 1);
        slc_status_json_string(m, l + i, k - i);
        slc_metrics_append(m, ":", 1);
        slc_status_json_string(m, l + k + 2, v - k - 2);
        first = 0;
        i = v + 2;                      /* past the quote and the comma */
    }
    slc_metrics_append(m, "}", 1);
}

/* One sample line as {"name":..,"labels":{..},"value":..}. */
static void
slc_status_json_sample(slc_metrics_t *m, const char *line, size_t n,
    int first)
{
    slc_status_sample_t sm;

    if (slc_status_sample(line, n, &sm) != SLC_OK) {
        return;
    }
    slc_metrics_printf(m, "%s{\"name\":", first ? "" : ",");
    slc_status_json_string(m, sm.name, sm.name_len);
    slc_metrics_printf(m, ",\"labels\":");
    slc_status_json_labels(m, sm.labels, sm.labels_len);
    /* +Inf, -Inf and NaN have no JSON number: strings */
    slc_metrics_printf(m, strchr("0123456789-", sm.value[0]) != NULL
                          && strncmp(sm.value, "-Inf", 4) != 0
                       ? ",\"value\":%.*s}" : ",\"value\":\"%.*s\"}",
        (int) sm.value_len, sm.value);
}

/* The families of the Prometheus text as {"name":{"type":..,"samples":
   [..]},..}. */
static void
slc_status_json_metrics(slc_metrics_t *m, const char *text)
{
    const char *p = text;
    int         families = 0, samples = 0;

    slc_metrics_append(m, "{", 1);
    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t      n = nl != NULL ? (size_t) (nl - p) : strlen(p);
        char        name[128], type[16];

        if (n > 7 && strncmp(p, "# TYPE ", 7) == 0
            && sscanf(p + 7, "%127s %15s", name, type) == 2)
        {
            slc_metrics_printf(m, "%s\"%s\":{\"type\":\"%s\",\"samples\":[",
                families++ ? "]}," : "", name, type);
            samples = 0;
        } else if (n > 0 && p[0] != '#' && families > 0) {
            slc_status_json_sample(m, p, n, samples++ == 0);
        }
        p += n + (nl != NULL);
    }
    slc_metrics_printf(m, "%s}", families ? "]}" : "");
}

void
slc_status_json(const slc_cycle_t *cycle, slc_metrics_t *m)
{
    slc_metrics_t raw;

    slc_metrics_printf(m, "{\"version\":\"%s\",\"config\":{\"generation\":"
        "%u,\"sha1\":\"%s\",\"loaded_ms\":%llu},\"worker_processes\":%d,"
        "\"metrics\":", SLC_VERSION, cycle->generation,
        slc_status_state.conf_sha1,
        (unsigned long long) slc_status_state.loaded_ms,
        cycle->worker_processes);
    slc_metrics_init(&raw, m->max);
    slc_status_metrics(cycle, &raw);
    if (raw.error != SLC_METRICS_OK) {
        m->error = raw.error;
    } else {
        slc_status_json_metrics(m, raw.buf != NULL ? raw.buf : "");
    }
    slc_metrics_free(&raw);
    for (unsigned i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i]->status_json != NULL) {
            slc_metrics_append(m, ",", 1);
            slc_modules[i]->status_json(cycle, m);
        }
    }
    slc_metrics_append(m, "}\n", 2);
}
