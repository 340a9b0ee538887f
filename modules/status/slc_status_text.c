/*
 * GET /status/text and `sluice -s status`: the metrics, for a person
 * (slc_status_text.h).  Read back from the Prometheus text the hooks
 * wrote, so that every module's families show without a second writer:
 * a family's series that are not 0, one per line with its labels
 * unquoted; a histogram's series as their count, mean and the bounds
 * their 50th and 99th percentiles fall under.
 */

#include "slc_core.h"
#include "slc_status_text.h"

#define SLC_TEXT_BUCKETS  32

typedef struct {
    slc_metrics_t  *out;
    char            family[128];
    char            type[16];
    int             shown;              /* the family's heading is out */
    unsigned        nle;                /* the open histogram's buckets */
    double          le[SLC_TEXT_BUCKETS];
    double          cum[SLC_TEXT_BUCKETS];
    double          sum;
} slc_status_text_t;

/* The family's name, without the prefix every one has. */
static const char *
slc_status_text_name(const slc_status_text_t *t)
{
    return strncmp(t->family, "sluice_", 7) == 0 ? t->family + 7
                                                 : t->family;
}

/* The family's heading, once, before its first series. */
static void
slc_status_text_heading(slc_status_text_t *t)
{
    if (!t->shown) {
        t->shown = 1;
        slc_metrics_printf(t->out, "%s\n", slc_status_text_name(t));
    }
}

/* Labels as name=value pairs, blanks between; bytes a terminal would
   act on shown as '?'. */
static void
slc_status_text_labels(slc_status_text_t *t, const char *l, size_t n)
{
    char   buf[512];
    size_t o = 0;

    for (size_t i = 0; i < n && o + 2 < sizeof(buf); ) {
        int quoted = 0;

        while (i < n && (quoted || l[i] != ',')) {
            unsigned char c = (unsigned char) l[i];

            if (c == '\\' && i + 1 < n) {
                c = (unsigned char) l[++i];
            } else if (c == '"') {
                quoted = !quoted;
                i++;
                continue;
            }
            if (o + 2 < sizeof(buf)) {
                buf[o++] = (char) (c < 0x20 || c == 0x7f ? '?' : c);
            }
            i++;
        }
        buf[o++] = ' ';
        i++;                            /* the comma */
    }
    buf[o] = '\0';
    slc_metrics_printf(t->out, "  %s", buf);
}

/* The bound under which the q-th of the observations falls. */
static double
slc_status_text_quantile(const slc_status_text_t *t, double count, double q)
{
    for (unsigned i = 0; i < t->nle; i++) {
        if (t->cum[i] >= q * count) {
            return t->le[i];
        }
    }
    return -1;                          /* none: above the last bound */
}

static void
slc_status_text_ms(slc_status_text_t *t, const char *what, double s)
{
    if (s < 0 || s > 1e300) {
        slc_metrics_printf(t->out, " %s above the last bucket", what);
    } else {
        slc_metrics_printf(t->out, " %s %.3g ms", what, s * 1000);
    }
}

/* A histogram's series ends with its _count. */
static void
slc_status_text_histogram(slc_status_text_t *t, const char *suffix,
    const char *labels, size_t lablen, double v)
{
    if (strcmp(suffix, "_bucket") == 0) {
        const char *le = strstr(labels, "le=\"");

        if (le != NULL && t->nle < SLC_TEXT_BUCKETS) {
            t->le[t->nle] = strtod(le + 4, NULL);
            t->cum[t->nle++] = v;
        }
        return;
    }
    if (strcmp(suffix, "_sum") == 0) {
        t->sum = v;
        return;
    }
    if (v > 0) {
        slc_status_text_heading(t);
        slc_status_text_labels(t, labels, lablen);
        slc_metrics_printf(t->out, " count %.0f", v);
        slc_status_text_ms(t, "mean", t->sum / v);
        slc_status_text_ms(t, "p50 <=", slc_status_text_quantile(t, v, 0.5));
        slc_status_text_ms(t, "p99 <=", slc_status_text_quantile(t, v, 0.99));
        slc_metrics_printf(t->out, "\n");
    }
    t->nle = 0;
}

int
slc_status_sample(const char *line, size_t n, slc_status_sample_t *s)
{
    const char *sp = line + n, *br = memchr(line, '{', n);

    while (sp > line && sp[-1] != ' ') {
        sp--;
    }
    if (sp == line) {
        return SLC_ERROR;               /* no value */
    }
    sp--;
    if (br == NULL || br > sp) {
        br = NULL;
    }
    s->name = line;
    s->name_len = (size_t) ((br != NULL ? br : sp) - line);
    s->labels = br != NULL ? br + 1 : "";
    s->labels_len = br != NULL ? (size_t) (sp - 1 - s->labels) : 0;
    s->value = sp + 1;
    s->value_len = (size_t) (line + n - sp - 1);
    return SLC_OK;
}

/* One sample line of the open family. */
static void
slc_status_text_sample(slc_status_text_t *t, const char *line, size_t n)
{
    slc_status_sample_t sm;
    size_t              flen = strlen(t->family), nlen, lablen;
    const char         *labels;
    char                value[64];

    if (slc_status_sample(line, n, &sm) != SLC_OK) {
        return;
    }
    nlen = sm.name_len;
    labels = sm.labels;
    lablen = sm.labels_len;
    if (nlen < flen || strncmp(line, t->family, flen) != 0
        || sm.value_len >= sizeof(value))
    {
        return;
    }
    memcpy(value, sm.value, sm.value_len);
    value[sm.value_len] = '\0';
    if (strcmp(t->type, "histogram") == 0) {
        char suffix[16];

        snprintf(suffix, sizeof(suffix), "%.*s", (int) (nlen - flen),
            line + flen);
        slc_status_text_histogram(t, suffix, labels, lablen,
            strtod(value, NULL));
        return;
    }
    if (strcmp(value, "0") == 0) {
        return;
    }
    if (lablen == 0) {
        slc_metrics_printf(t->out, "%s  %s\n", slc_status_text_name(t), value);
        return;
    }
    slc_status_text_heading(t);
    slc_status_text_labels(t, labels, lablen);
    slc_metrics_printf(t->out, " %s\n", value);
}

void
slc_status_text(const char *metrics, slc_metrics_t *out)
{
    slc_status_text_t  t = { .out = out };
    const char *p = metrics;

    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t      n = nl != NULL ? (size_t) (nl - p) : strlen(p);

        if (n > 7 && strncmp(p, "# TYPE ", 7) == 0) {
            if (sscanf(p + 7, "%127s %15s", t.family, t.type) != 2) {
                t.family[0] = '\0';
            }
            t.shown = 0;
            t.nle = 0;
        } else if (n > 0 && p[0] != '#') {
            slc_status_text_sample(&t, p, n);
        }
        p += n + (nl != NULL);
    }
}
