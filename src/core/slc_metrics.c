/*
 * Metrics in Prometheus' text exposition format (slc_metrics.h).
 */

#include "slc_core.h"
#include "slc_metrics.h"

#include <math.h>

#define SLC_METRICS_CHUNK  4096


/* --- the buffer ----------------------------------------------------------- */

void
slc_metrics_init(slc_metrics_t *m, size_t max)
{
    memset(m, 0, sizeof(*m));
    m->max = max;
}

void
slc_metrics_free(slc_metrics_t *m)
{
    free(m->buf);
    m->buf = NULL;
    m->len = m->cap = 0;
}

static void
slc_metrics_fail(slc_metrics_t *m, int error)
{
    if (m->error == SLC_METRICS_OK) {
        m->error = error;
    }
}

/* Room for n more bytes and the NUL: 0 if none (the error set). */
static int
slc_metrics_room(slc_metrics_t *m, size_t n)
{
    size_t  cap;
    char   *p;

    if (m->error != SLC_METRICS_OK) {
        return 0;
    }
    if (m->len + n + 1 <= m->cap) {
        return 1;
    }
    if (m->len + n + 1 > m->max) {
        slc_metrics_fail(m, SLC_METRICS_FULL);
        return 0;
    }
    cap = slc_max(m->cap * 2, m->len + n + 1 + SLC_METRICS_CHUNK);
    cap = slc_min(cap, m->max);
    if ((p = realloc(m->buf, cap)) == NULL) {
        slc_metrics_fail(m, SLC_METRICS_NOMEM);
        return 0;
    }
    m->buf = p;
    m->cap = cap;
    return 1;
}

static void
slc_metrics_put(slc_metrics_t *m, const char *s, size_t n)
{
    if (slc_metrics_room(m, n)) {
        memcpy(m->buf + m->len, s, n);
        m->len += n;
        m->buf[m->len] = '\0';
    }
}

void
slc_metrics_append(slc_metrics_t *m, const char *s, size_t n)
{
    slc_metrics_put(m, s, n);
}

void
slc_metrics_json(slc_metrics_t *m, const char *s)
{
    slc_metrics_json_n(m, s, strlen(s));
}

void
slc_metrics_json_n(slc_metrics_t *m, const char *s, size_t n)
{
    char buf[8];

    slc_metrics_put(m, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char) s[i];

        if (c == '"' || c == '\\') {
            buf[0] = '\\';
            buf[1] = (char) c;
            slc_metrics_put(m, buf, 2);
        } else if (c < 0x20 || c == 0x7f) {
            snprintf(buf, sizeof(buf), "\\u%04x", c);
            slc_metrics_put(m, buf, 6);
        } else {
            slc_metrics_put(m, (const char *) &c, 1);
        }
    }
    slc_metrics_put(m, "\"", 1);
}

void
slc_metrics_printf(slc_metrics_t *m, const char *fmt, ...)
{
    char    buf[1024];
    va_list ap;
    int     n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t) n >= sizeof(buf)) {
        slc_metrics_fail(m, SLC_METRICS_MISUSE);
        return;
    }
    slc_metrics_put(m, buf, (size_t) n);
}

static void
slc_metrics_str(slc_metrics_t *m, const char *s)
{
    slc_metrics_put(m, s, strlen(s));
}

/* s escaped: backslash and newline always, a double quote in a label
   value (quote). */
static void
slc_metrics_escaped(slc_metrics_t *m, const char *s, int quote)
{
    for (const char *p = s; *p != '\0'; p++) {
        if (*p == '\\') {
            slc_metrics_put(m, "\\\\", 2);
        } else if (*p == '\n') {
            slc_metrics_put(m, "\\n", 2);
        } else if (*p == '"' && quote) {
            slc_metrics_put(m, "\\\"", 2);
        } else {
            slc_metrics_put(m, p, 1);
        }
    }
}


/* --- names and values ----------------------------------------------------- */

int
slc_metrics_name_ok(const char *name, int label)
{
    const char *p = name;

    if (*p == '\0' || (label && p[0] == '_' && p[1] == '_')) {
        return 0;
    }
    for (; *p != '\0'; p++) {
        char c = *p;

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'
              || (c == ':' && !label) || (c >= '0' && c <= '9' && p != name)))
        {
            return 0;
        }
    }
    return 1;
}

static int
slc_metrics_ends(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);

    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* v in the fewest digits that read back as v (0.1, not
   0.10000000000000001). */
static void
slc_metrics_shortest(char *buf, size_t cap, double v)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, cap, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) {
            return;
        }
    }
}

/* v as Prometheus reads a value (buf: 40 bytes). */
static void
slc_metrics_format(char *buf, size_t cap, double v)
{
    if (isnan(v)) {
        strlcpy(buf, "NaN", cap);
    } else if (isinf(v)) {
        strlcpy(buf, v > 0 ? "+Inf" : "-Inf", cap);
    } else {
        slc_metrics_shortest(buf, cap, v);
    }
}


/* --- families and samples ------------------------------------------------ */

void
slc_metrics_family(slc_metrics_t *m, const char *name,
    slc_metric_type_e type, const char *help)
{
    static const char *const types[] = { "counter", "gauge", "histogram" };
    int total = slc_metrics_ends(name, "_total");

    if (!slc_metrics_name_ok(name, 0) || strlen(name) >= sizeof(m->family)
        || strcmp(name, m->family) == 0
        || (type == SLC_METRIC_COUNTER) != total)
    {
        slc_metrics_fail(m, SLC_METRICS_MISUSE);
        return;
    }
    strlcpy(m->family, name, sizeof(m->family));
    m->type = type;
    m->families++;
    slc_metrics_str(m, "# HELP ");
    slc_metrics_str(m, name);
    slc_metrics_str(m, " ");
    slc_metrics_escaped(m, help, 0);
    slc_metrics_str(m, "\n# TYPE ");
    slc_metrics_str(m, name);
    slc_metrics_str(m, " ");
    slc_metrics_str(m, types[type]);
    slc_metrics_str(m, "\n");
}

/* name{labels[,le="x"]} (the value follows). */
static void
slc_metrics_head(slc_metrics_t *m, const char *suffix,
    const char *const *labels, const char *le)
{
    int n = 0;

    slc_metrics_str(m, m->family);
    slc_metrics_str(m, suffix);
    for (const char *const *l = labels; l != NULL && l[0] != NULL; l += 2) {
        if (l[1] == NULL || !slc_metrics_name_ok(l[0], 1)
            || strcmp(l[0], "le") == 0)
        {
            slc_metrics_fail(m, SLC_METRICS_MISUSE);
            return;
        }
        slc_metrics_str(m, n++ ? "," : "{");
        slc_metrics_str(m, l[0]);
        slc_metrics_str(m, "=\"");
        slc_metrics_escaped(m, l[1], 1);
        slc_metrics_str(m, "\"");
    }
    if (le != NULL) {
        slc_metrics_str(m, n++ ? ",le=\"" : "{le=\"");
        slc_metrics_str(m, le);
        slc_metrics_str(m, "\"");
    }
    slc_metrics_str(m, n ? "} " : " ");
}

/* Whether a plain sample may go now. */
static int
slc_metrics_plain(slc_metrics_t *m)
{
    if (m->family[0] == '\0' || m->type == SLC_METRIC_HISTOGRAM) {
        slc_metrics_fail(m, SLC_METRICS_MISUSE);
        return 0;
    }
    return m->error == SLC_METRICS_OK;
}

/* A plain sample whose value is already text. */
static void
slc_metrics_sample(slc_metrics_t *m, const char *const *labels,
    const char *value)
{
    if (slc_metrics_plain(m)) {
        slc_metrics_head(m, "", labels, NULL);
        slc_metrics_str(m, value);
        slc_metrics_str(m, "\n");
    }
}

void
slc_metrics_u64(slc_metrics_t *m, const char *const *labels, uint64_t v)
{
    char buf[24];

    snprintf(buf, sizeof(buf), "%llu", (unsigned long long) v);
    slc_metrics_sample(m, labels, buf);
}

void
slc_metrics_double(slc_metrics_t *m, const char *const *labels, double v)
{
    char buf[40];

    slc_metrics_format(buf, sizeof(buf), v);
    slc_metrics_sample(m, labels, buf);
}

void
slc_metrics_histogram(slc_metrics_t *m, const char *const *labels,
    const double *le, const uint64_t *count, unsigned n, double sum)
{
    uint64_t cum = 0;
    char     b[40];

    if (m->family[0] == '\0' || m->type != SLC_METRIC_HISTOGRAM) {
        slc_metrics_fail(m, SLC_METRICS_MISUSE);
        return;
    }
    for (unsigned i = 0; i <= n; i++) {
        if (i < n && i > 0 && !(le[i] > le[i - 1])) {
            slc_metrics_fail(m, SLC_METRICS_MISUSE);     /* not ascending */
            return;
        }
        cum += count[i];
        if (i < n) {
            slc_metrics_shortest(b, sizeof(b), le[i]);
        }
        slc_metrics_head(m, "_bucket", labels, i < n ? b : "+Inf");
        snprintf(b, sizeof(b), "%llu\n", (unsigned long long) cum);
        slc_metrics_str(m, b);
    }
    slc_metrics_head(m, "_sum", labels, NULL);
    slc_metrics_format(b, sizeof(b), sum);
    slc_metrics_str(m, b);
    slc_metrics_str(m, "\n");
    slc_metrics_head(m, "_count", labels, NULL);
    snprintf(b, sizeof(b), "%llu\n", (unsigned long long) cum);
    slc_metrics_str(m, b);
}
