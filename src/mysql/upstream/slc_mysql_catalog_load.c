#include "slc_core.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_mysql_catalog.h"
#include "slc_mysql_catalog_zone.h"
#include "slc_mysql_monitor.h"

#include <mysql.h>

/*
 * The loads of the schema catalog, in the monitor's process: after each
 * round of checks of an upstream (slc_catalog_step, from the monitor's
 * tick), a load is due when none was published yet, when
 * monitor_schema_interval has passed since the last one began, or when a
 * worker saw DDL since (the zone's `ddl` moved).  It reads, from the
 * primary the monitor sees, with the monitor account and a connection of
 * its own (Connector/C, blocking, as the checks):
 *
 *   the account's global SHOW VIEW and TRIGGER privileges (without them
 *   information_schema silently shows fewer views and triggers: blind);
 *   information_schema.VIEWS and TRIGGERS;
 *   @@global.sql_mode and @@global.tx_isolation;
 *
 * and publishes (slc_catalog_publish), which calls the change hook.  What
 * it logs is logged once per change of state: blind, too small, views
 * hidden, failing.
 */

struct slc_catalog_loader_s {
    MYSQL                       *mysql;     /* NULL: not connected */
    const slc_upstream_server_t *us;        /* connected to */
    uint64_t                     begun;     /* ms (monotonic) of the last
                                               load's start, 0: none */
    uint32_t                     ddl;       /* the zone's ddl then */
    int                          mysql8;    /* no @@tx_isolation */
    /* the connection was made after the grants were seen: its session
       has them (a session keeps the global privileges of its login) */
    unsigned                     trusted:1;
    unsigned                     loaded:1;  /* a load was logged */
    unsigned                     failing:1; /* as logged */
    unsigned                     blind:1;
    unsigned                     small:1;
    unsigned                     hidden;
};

/* What one load read: the results stay until the rows are published. */
typedef struct {
    MYSQL_RES                   *res[3];    /* views, triggers, facts */
    slc_catalog_rows_t           rows;
    slc_catalog_view_row_t      *views;
    slc_catalog_trigger_row_t   *triggers;
    char                         grantee[4 * 256 + 1];  /* 'user'@'host',
                                                           escaped */
    unsigned                     has_view:1, has_trigger:1;
} slc_catalog_read_t;

#define SLC_CATALOG_Q_GRANTS                                                 \
    "SELECT CURRENT_USER(), "                                                \
    "SUM(PRIVILEGE_TYPE IN ('SHOW VIEW', 'ALL PRIVILEGES')), "               \
    "SUM(PRIVILEGE_TYPE IN ('TRIGGER', 'ALL PRIVILEGES')) "                  \
    "FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = "               \
    "CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', "        \
    "SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')"
/* the system schemas' views (sys has a hundred) are never cached: a read
   of one is refused by its schema, a write to mysql's by its kind */
#define SLC_CATALOG_Q_VIEWS                                                  \
    "SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION "                      \
    "FROM information_schema.VIEWS WHERE TABLE_SCHEMA NOT IN "               \
    "('mysql', 'sys', 'information_schema', 'performance_schema')"
#define SLC_CATALOG_Q_TRIGGERS                                               \
    "SELECT TRIGGER_SCHEMA, EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, "       \
    "ACTION_STATEMENT, SQL_MODE FROM information_schema.TRIGGERS"

static const char *slc_catalog_q_facts[2] = {
    "SELECT @@global.sql_mode, @@global.tx_isolation",
    "SELECT @@global.sql_mode, @@global.transaction_isolation",  /* MySQL 8 */
};

/* ---- connection ------------------------------------------------------- */

static void
slc_catalog_disconnect(slc_catalog_loader_t *l)
{
    if (l->mysql != NULL) {
        mysql_close(l->mysql);
        l->mysql = NULL;
    }
}

void
slc_catalog_loader_free(slc_catalog_t *c)
{
    if (c->loader != NULL) {
        slc_catalog_disconnect(c->loader);
        free(c->loader);
        c->loader = NULL;
    }
}

static int
slc_catalog_connect(slc_catalog_t *c, slc_catalog_loader_t *l,
    const slc_upstream_server_t *us)
{
    if (l->mysql != NULL && l->us != us) {
        slc_catalog_disconnect(l);          /* the primary moved */
    }
    if (l->mysql != NULL) {
        return SLC_OK;
    }
    l->us = us;
    l->trusted = 0;
    return slc_monitor_login(&l->mysql, us, slc_monitor_conf(c->up));
}

/* The upstream's primary as the monitor sees it (or as configured). */
static const slc_upstream_server_t *
slc_catalog_primary(const slc_upstream_t *up)
{
    for (unsigned i = 0; i < up->nservers; i++) {
        if (slc_monitor_role(&up->servers[i]) & SLC_ROLE_PRIMARY) {
            return &up->servers[i];
        }
    }
    return NULL;
}

/* ---- the queries ------------------------------------------------------ */

static MYSQL_RES *
slc_catalog_query(MYSQL *m, const char *q)
{
    return mysql_query(m, q) == 0 ? mysql_store_result(m) : NULL;
}

static slc_str_t
slc_catalog_col(MYSQL_ROW row, const unsigned long *len, unsigned i)
{
    return row[i] != NULL ? (slc_str_t) { len[i], row[i] }
                          : (slc_str_t) { 0, (char *) "" };
}

/* CURRENT_USER()'s "user@host" as a GRANT names it: 'user'@'host'. */
static void
slc_catalog_grantee(slc_catalog_read_t *rd, const char *cu)
{
    const char *at = strrchr(cu, '@');
    char        g[256];
    int         n;

    n = at != NULL ? snprintf(g, sizeof(g), "'%.*s'@'%s'", (int) (at - cu),
                              cu, at + 1)
                   : snprintf(g, sizeof(g), "'%s'", cu);
    slc_log_escape(rd->grantee, sizeof(rd->grantee), g,
        slc_min((size_t) n, sizeof(g) - 1), 0);
}

/* Whether the account has the global SHOW VIEW and TRIGGER privileges
   (into rd), and who it is (for the log). */
static int
slc_catalog_read_grants(MYSQL *m, slc_catalog_read_t *rd)
{
    MYSQL_RES *res = slc_catalog_query(m, SLC_CATALOG_Q_GRANTS);
    MYSQL_ROW  row = res != NULL ? mysql_fetch_row(res) : NULL;

    if (row == NULL || mysql_num_fields(res) < 3) {
        if (res != NULL) {
            mysql_free_result(res);
        }
        return SLC_ERROR;
    }
    slc_catalog_grantee(rd, row[0] != NULL ? row[0] : "");
    rd->has_view = row[1] != NULL && atoi(row[1]) > 0;
    rd->has_trigger = row[2] != NULL && atoi(row[2]) > 0;
    rd->rows.blind = !rd->has_view || !rd->has_trigger;
    mysql_free_result(res);
    return SLC_OK;
}

static int
slc_catalog_read_views(MYSQL *m, slc_catalog_read_t *rd)
{
    MYSQL_RES *res = rd->res[0] = slc_catalog_query(m, SLC_CATALOG_Q_VIEWS);
    MYSQL_ROW  row;
    unsigned   n = 0;

    if (res == NULL || mysql_num_fields(res) < 3) {
        return SLC_ERROR;
    }
    rd->views = calloc(mysql_num_rows(res) + 1, sizeof(*rd->views));
    if (rd->views == NULL) {
        return SLC_ERROR;
    }
    while ((row = mysql_fetch_row(res)) != NULL) {
        unsigned long *len = mysql_fetch_lengths(res);

        rd->views[n++] = (slc_catalog_view_row_t) {
            .schema = slc_catalog_col(row, len, 0),
            .name = slc_catalog_col(row, len, 1),
            .definition = slc_catalog_col(row, len, 2) };
    }
    rd->rows.views = rd->views;
    rd->rows.nviews = n;
    return SLC_OK;
}

static int
slc_catalog_read_triggers(MYSQL *m, slc_catalog_read_t *rd)
{
    MYSQL_RES *res = rd->res[1] = slc_catalog_query(m,
                                      SLC_CATALOG_Q_TRIGGERS);
    MYSQL_ROW  row;
    unsigned   n = 0;

    if (res == NULL || mysql_num_fields(res) < 5) {
        return SLC_ERROR;
    }
    rd->triggers = calloc(mysql_num_rows(res) + 1, sizeof(*rd->triggers));
    if (rd->triggers == NULL) {
        return SLC_ERROR;
    }
    while ((row = mysql_fetch_row(res)) != NULL) {
        unsigned long *len = mysql_fetch_lengths(res);
        slc_str_t      mode = slc_catalog_col(row, len, 4);

        rd->triggers[n++] = (slc_catalog_trigger_row_t) {
            .schema = slc_catalog_col(row, len, 0),
            .table_schema = slc_catalog_col(row, len, 1),
            .table = slc_catalog_col(row, len, 2),
            .body = slc_catalog_col(row, len, 3),
            .sql_mode = slc_catalog_sql_mode(mode.data, mode.len) };
    }
    rd->rows.triggers = rd->triggers;
    rd->rows.ntriggers = n;
    return SLC_OK;
}

static int
slc_catalog_read_facts(MYSQL *m, slc_catalog_loader_t *l,
    slc_catalog_read_t *rd)
{
    MYSQL_RES *res = rd->res[2] = slc_catalog_query(m,
                                      slc_catalog_q_facts[l->mysql8]);
    MYSQL_ROW  row = res != NULL ? mysql_fetch_row(res) : NULL;

    if (res == NULL && mysql_errno(m) == 1193 && !l->mysql8) {
        l->mysql8 = 1;              /* unknown variable: MySQL's name */
        return slc_catalog_read_facts(m, l, rd);
    }
    if (row == NULL || mysql_num_fields(res) < 2) {
        return SLC_ERROR;
    }
    rd->rows.sql_mode = row[0] != NULL
                        ? slc_catalog_sql_mode(row[0], strlen(row[0])) : 0;
    rd->rows.read_uncommitted = row[1] != NULL
                                && strcmp(row[1], "READ-UNCOMMITTED") == 0;
    return SLC_OK;
}

/*
 * The grants, on a session that has them.  USER_PRIVILEGES says what the
 * account has now, but a session keeps the global privileges it logged
 * in with (MariaDB 10.11: a GRANT does not reach a session already open,
 * a REVOKE neither): so the grants seen on a session that may have
 * logged in before them are trusted only after logging in again.  A
 * REVOKE seen makes the catalog blind at once (the next load logs in
 * again, without them).
 */
static int
slc_catalog_grants(slc_catalog_t *c, slc_catalog_loader_t *l,
    const slc_upstream_server_t *us, slc_catalog_read_t *rd)
{
    if (slc_catalog_connect(c, l, us) != SLC_OK
        || slc_catalog_read_grants(l->mysql, rd) != SLC_OK)
    {
        return SLC_ERROR;
    }
    if (rd->rows.blind || l->trusted) {
        return SLC_OK;
    }
    slc_catalog_disconnect(l);
    if (slc_catalog_connect(c, l, us) != SLC_OK
        || slc_catalog_read_grants(l->mysql, rd) != SLC_OK)
    {
        return SLC_ERROR;
    }
    l->trusted = !rd->rows.blind;
    return SLC_OK;
}

/* Everything a load reads, into rd (the views and triggers only when the
   account may see them all). */
static int
slc_catalog_read(slc_catalog_t *c, slc_catalog_loader_t *l,
    const slc_upstream_server_t *us, slc_catalog_read_t *rd)
{
    if (slc_catalog_grants(c, l, us, rd) != SLC_OK
        || (!rd->rows.blind
            && (slc_catalog_read_views(l->mysql, rd) != SLC_OK
                || slc_catalog_read_triggers(l->mysql, rd) != SLC_OK))
        || slc_catalog_read_facts(l->mysql, l, rd) != SLC_OK)
    {
        return SLC_ERROR;
    }
    return SLC_OK;
}

static void
slc_catalog_read_free(slc_catalog_read_t *rd)
{
    for (unsigned i = 0; i < slc_nelems(rd->res); i++) {
        if (rd->res[i] != NULL) {
            mysql_free_result(rd->res[i]);
        }
    }
    free(rd->views);
    free(rd->triggers);
}

/* ---- logs: each once per change ---------------------------------------- */

static void
slc_catalog_log_failed(const slc_catalog_t *c, slc_catalog_loader_t *l,
    const slc_upstream_server_t *us)
{
    const char *m = l->mysql != NULL ? mysql_error(l->mysql)
                                     : "out of memory";
    char        err[256];

    if (!l->failing) {
        slc_log_escape(err, sizeof(err), m, strlen(m), 0);
        slc_log(SLC_LOG_ERR, "upstream \"%s\": schema catalog not loaded "
            "from %s: %s", c->up->name.data, us->name, err);
    }
    l->failing = 1;
}

static void
slc_catalog_log_blind(const slc_catalog_t *c, slc_catalog_loader_t *l,
    const slc_catalog_read_t *rd)
{
    const char *grant = !rd->has_view && !rd->has_trigger
                        ? "SHOW VIEW, TRIGGER"
                        : !rd->has_view ? "SHOW VIEW" : "TRIGGER";

    if (rd->rows.blind && !l->blind) {
        slc_log(SLC_LOG_ERR, "upstream \"%s\": schema catalog blind: the "
            "monitor account %s lacks the global %s privilege%s (GRANT %s "
            "ON *.* TO %s): every question gets UNKNOWN", c->up->name.data,
            rd->grantee, !rd->has_view && !rd->has_trigger
                         ? "SHOW VIEW and TRIGGER" : grant,
            !rd->has_view && !rd->has_trigger ? "s" : "", grant,
            rd->grantee);
    } else if (!rd->rows.blind && l->blind) {
        slc_log(SLC_LOG_NOTICE, "upstream \"%s\": schema catalog no longer "
            "blind: the monitor account has SHOW VIEW and TRIGGER",
            c->up->name.data);
    }
    l->blind = rd->rows.blind;
}

/* The room an image takes and what monitor_schema_size would hold it. */
static void
slc_catalog_log_size(const slc_catalog_t *c, slc_catalog_loader_t *l,
    const slc_catalog_read_t *rd, const slc_catalog_outcome_t *out)
{
    size_t want = ((2 * out->need + SLC_CATALOG_ZONE_HDR + 128 + 1023)
                   / 1024) * 1024;

    if (!out->fits && !l->small) {
        slc_log(SLC_LOG_ERR, "upstream \"%s\": schema catalog blind: %u "
            "views and %u triggers take %zu bytes, more than the %zu an "
            "image has in monitor_schema_size %zu (set it to %zuk or more)",
            c->up->name.data, rd->rows.nviews, rd->rows.ntriggers,
            out->need, out->room, c->size, want / 1024);
    } else if (out->fits && l->small) {
        slc_log(SLC_LOG_NOTICE, "upstream \"%s\": schema catalog fits "
            "monitor_schema_size again", c->up->name.data);
    }
    l->small = !out->fits;
}

static void
slc_catalog_log_hidden(const slc_catalog_t *c, slc_catalog_loader_t *l,
    const slc_catalog_outcome_t *out)
{
    char name[SLC_CATALOG_NAME_MAX * 4 + 1];

    if (out->hidden > 0 && out->hidden != l->hidden) {
        slc_log_escape(name, sizeof(name), out->hidden_name,
            strlen(out->hidden_name), 0);
        slc_log(SLC_LOG_WARN, "upstream \"%s\": the monitor account may "
            "not see the definition of %u views (it needs SELECT on a view "
            "too), such as %s: reads of them get UNKNOWN", c->up->name.data,
            out->hidden, name);
    }
    l->hidden = out->hidden;
}

static void
slc_catalog_log_load(const slc_catalog_t *c, slc_catalog_loader_t *l,
    const slc_catalog_read_t *rd, const slc_catalog_outcome_t *out)
{
    slc_catalog_log_blind(c, l, rd);
    if (rd->rows.blind) {
        return;
    }
    slc_catalog_log_size(c, l, rd, out);
    slc_catalog_log_hidden(c, l, out);
    if (out->fits && (!l->loaded || out->changed || l->failing)) {
        /* t/catalog.t waits for this line: keep its wording */
        slc_log(SLC_LOG_NOTICE, "upstream \"%s\": schema catalog loaded "
            "from %s: %u views, %u triggers", c->up->name.data,
            rd->rows.server, rd->rows.nviews, rd->rows.ntriggers);
        l->loaded = 1;
    }
    l->failing = 0;
}

/* ---- when ------------------------------------------------------------- */

static void
slc_catalog_load(slc_catalog_t *c, slc_catalog_loader_t *l,
    const slc_upstream_server_t *us, uint64_t now)
{
    slc_catalog_read_t    rd;
    slc_catalog_outcome_t out;

    memset(&rd, 0, sizeof(rd));
    l->begun = now;
    /* before any query: DDL seen from here on makes this load stale */
    l->ddl = rd.rows.ddl_at = slc_catalog_load_begin(c);
    rd.rows.server = us->name;
    if (slc_catalog_read(c, l, us, &rd) != SLC_OK) {
        slc_catalog_log_failed(c, l, us);
        slc_catalog_disconnect(l);      /* log in again next time */
    } else if (slc_catalog_publish(c, &rd.rows, &out) != SLC_OK) {
        slc_log(SLC_LOG_ERR, "upstream \"%s\": schema catalog: out of "
            "memory", c->up->name.data);
    } else {
        slc_catalog_log_load(c, l, &rd, &out);
    }
    if (rd.rows.blind) {
        slc_catalog_disconnect(l);      /* a grant added reaches the next */
    }
    slc_catalog_read_free(&rd);
}

/* Due: never loaded (or failing), DDL seen, or the interval is over. */
static int
slc_catalog_due(const slc_catalog_t *c, const slc_catalog_loader_t *l,
    uint64_t now)
{
    return l->begun == 0 || l->failing
           || now - l->begun >= (uint64_t) c->interval
           || __atomic_load_n(&c->zone->ddl, __ATOMIC_ACQUIRE) != l->ddl;
}

void
slc_catalog_poll(const slc_upstream_t *up)
{
    slc_catalog_t *c = slc_catalog_of(up);

    if (c != NULL && c->zone != NULL && c->loader != NULL
        && !c->loader->failing
        && __atomic_load_n(&c->zone->ddl, __ATOMIC_ACQUIRE) != c->loader->ddl)
    {
        slc_catalog_step(up);
    }
}

void
slc_catalog_step(const slc_upstream_t *up)
{
    slc_catalog_t               *c = slc_catalog_of(up);
    const slc_upstream_server_t *us;
    uint64_t                     now = slc_time_ms();

    if (c == NULL || c->zone == NULL) {
        return;
    }
    if (c->loader == NULL) {
        c->loader = calloc(1, sizeof(*c->loader));
        if (c->loader == NULL) {
            return;             /* out of memory: next time */
        }
    }
    if (slc_catalog_due(c, c->loader, now)
        && (us = slc_catalog_primary(up)) != NULL)
    {
        slc_catalog_load(c, c->loader, us, now);
    }
}
