/*
 * testcatalog: a filter that asks the schema catalog
 * (src/mysql/upstream/slc_mysql_catalog.h) what the query cache will ask,
 * so that
 * t/catalog.t sees it from a worker, as the cache will:
 *
 *   - it wants the catalog of the upstream of every server {} that lists
 *     it (slc_catalog_want, from its init_conf);
 *   - its change hook (slc_catalog_on_change, run in the monitor) logs at
 *     notice `testcatalog: upstream "NAME" changed: all` or
 *     `... changed: NAME NAME ...`;
 *   - it answers these texts itself, with one row of one column:
 *
 *     SELECT 'testcatalog: reads KEY'   "table", "unknown", or "view NAME
 *                                       ... flags=0xHEX"
 *     SELECT 'testcatalog: writes KEY'  "error", "all", or "writes NAME ..."
 *     SELECT 'testcatalog: facts'       "ready=N ansi_quotes=N
 *                                       read_uncommitted=N"
 *     SELECT 'testcatalog: ddl KEY'     slc_catalog_ddl_seen, then what a
 *                                       read of KEY gets right after
 *
 * and passes everything else.
 */

#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_catalog.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_filter.h"
#include "slc_mysql_proto.h"
#include "slc_mysql_session.h"

#define SLC_TC_PREFIX  "SELECT 'testcatalog: "

static int  slc_tc_init_conf(slc_cycle_t *cycle, char *err, size_t errlen);
static int  slc_tc_command(slc_session_t *s, void *ctx, const slc_cmd_t *c);

static const slc_filter_t slc_tc_filter = {
    .command = slc_tc_command,
};

slc_module_t slc_testcatalog_module = {
    .name = "testcatalog",
    .type = SLC_MODULE_FILTER,
    .filter = &slc_tc_filter,
    .init_conf = slc_tc_init_conf,
};

/* In the monitor: what a load changed. */
static void
slc_tc_changed(slc_cycle_t *cycle, const slc_upstream_t *up,
    const slc_str_t *names, unsigned n, int all)
{
    char   line[4096], esc[SLC_CATALOG_NAME_MAX * 4 + 1];
    size_t k = 0;

    (void) cycle;
    line[0] = '\0';
    for (unsigned i = 0; i < n && k < sizeof(line); i++) {
        slc_log_escape(esc, sizeof(esc), names[i].data, names[i].len, 0);
        k += (size_t) snprintf(line + k, sizeof(line) - k, " %s", esc);
    }
    slc_log(SLC_LOG_NOTICE, "testcatalog: upstream \"%s\" changed:%s",
        up->name.data, all ? " all" : line);
}

static int
slc_tc_listed(const slc_mysql_srv_t *srv)
{
    for (unsigned i = 0; i < srv->nfilters; i++) {
        if (srv->filters[i] == &slc_tc_filter) {
            return 1;
        }
    }
    return 0;
}

static int
slc_tc_init_conf(slc_cycle_t *cycle, char *err, size_t errlen)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);
    char              why[256];

    for (slc_mysql_srv_t *srv = mc != NULL ? mc->servers : NULL;
         srv != NULL; srv = srv->next)
    {
        if (!slc_tc_listed(srv)) {
            continue;
        }
        if (slc_catalog_want(cycle, srv->upstream, why, sizeof(why))
            != SLC_OK)
        {
            snprintf(err, errlen, "%s:%u: testcatalog: %s", srv->file,
                srv->line, why);
            return SLC_ERROR;
        }
    }
    slc_catalog_on_change(slc_tc_changed);
    return SLC_OK;
}

/* The names of an answer after `what`, into buf. */
static void
slc_tc_names(char *buf, size_t cap, const char *what,
    const slc_catalog_names_t *out)
{
    size_t k = strlcpy(buf, what, cap);

    for (unsigned i = 0; i < out->n && k < cap; i++) {
        k += (size_t) snprintf(buf + k, cap - k, " %s", out->name[i].data);
    }
}

static void
slc_tc_reads(slc_catalog_t *c, const char *key, char *buf, size_t cap)
{
    slc_catalog_names_t out;
    size_t              k;

    memset(&out, 0, sizeof(out));
    switch (slc_catalog_reads(c, key, strlen(key), &out)) {
    case SLC_CATALOG_TABLE:
        strlcpy(buf, "table", cap);
        break;
    case SLC_CATALOG_VIEW:
        slc_tc_names(buf, cap, "view", &out);
        k = strlen(buf);
        snprintf(buf + k, cap - k, " flags=0x%x", out.flags);
        break;
    default:
        strlcpy(buf, "unknown", cap);
    }
}

static void
slc_tc_writes(slc_catalog_t *c, const char *key, char *buf, size_t cap)
{
    slc_catalog_names_t out;

    memset(&out, 0, sizeof(out));
    if (slc_catalog_writes(c, key, strlen(key), &out) != SLC_OK) {
        strlcpy(buf, "error", cap);
    } else if (out.all) {
        strlcpy(buf, "all", cap);
    } else {
        slc_tc_names(buf, cap, "writes", &out);
    }
}

/* The answer to `q` (what follows the prefix, without the quote). */
static void
slc_tc_answer(slc_catalog_t *c, const char *q, char *buf, size_t cap)
{
    slc_catalog_facts_t f;

    if (strncmp(q, "reads ", 6) == 0) {
        slc_tc_reads(c, q + 6, buf, cap);
    } else if (strncmp(q, "writes ", 7) == 0) {
        slc_tc_writes(c, q + 7, buf, cap);
    } else if (strncmp(q, "ddl ", 4) == 0) {
        slc_catalog_ddl_seen(c);
        slc_tc_reads(c, q + 4, buf, cap);
    } else if (strcmp(q, "facts") == 0) {
        (void) slc_catalog_facts(c, &f);
        snprintf(buf, cap, "ready=%u ansi_quotes=%u read_uncommitted=%u",
            f.ready, f.ansi_quotes, f.read_uncommitted);
    } else {
        strlcpy(buf, "what?", cap);
    }
}

static int
slc_tc_command(slc_session_t *s, void *ctx, const slc_cmd_t *c)
{
    static const char *const cols[] = { "v" };
    const char *q = (const char *) c->payload + 1;
    size_t      n = c->avail > 0 ? c->avail - 1 : 0, pre;
    char        arg[SLC_CATALOG_NAME_MAX + 16], buf[4096];
    const char *v = buf;
    size_t      vlen;

    (void) ctx;
    pre = sizeof(SLC_TC_PREFIX) - 1;
    if (c->command != SLC_COM_QUERY || n <= pre || q[n - 1] != '\''
        || memcmp(q, SLC_TC_PREFIX, pre) != 0 || n - pre > sizeof(arg))
    {
        return SLC_FILTER_PASS;
    }
    memcpy(arg, q + pre, n - pre - 1);
    arg[n - pre - 1] = '\0';
    slc_tc_answer(slc_catalog_of(s->srv->upstream), arg, buf, sizeof(buf));
    (void) slc_reply_columns(s, cols, 1);
    vlen = strlen(buf);
    (void) slc_reply_row(s, &v, &vlen, 1);
    (void) slc_reply_end(s);
    return SLC_FILTER_ANSWER;
}
