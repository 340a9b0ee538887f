#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_mysql_catalog.h"
#include "slc_mysql_gtid.h"
#include "slc_mysql_monitor.h"
#include "slc_role.h"
#include "slc_seqlock.h"

#include <mysql.h>
#include <netdb.h>
#include <sched.h>
#include <sys/un.h>
#include <time.h>

/*
 * The monitor: its directives (upstream level), its zone and the role's
 * process.  The process is the only writer of the zone; workers read it
 * in slc_monitor_role() on every pick.
 */

#define SLC_MONITOR_PASSWORD_MAX  256
#define SLC_MONITOR_READ_TRIES    64

static void *slc_monitor_create_conf(slc_conf_t *cf, unsigned level);
static const char *slc_monitor_merge_conf(slc_conf_t *cf, unsigned level,
    void *parent, void *child);
static const char *slc_monitor_password(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static int slc_monitor_init_conf(slc_cycle_t *cycle, char *err,
    size_t errlen);
static void slc_monitor_exit_process(slc_cycle_t *cycle,
    const slc_role_t *role);

static const slc_command_t slc_monitor_commands[] = {
    { .name = "monitor_user", .type = SLC_CONF_UPSTREAM | SLC_CONF_TAKE1,
      .set = slc_conf_set_cstr_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_monitor_conf_t, user) },
    { .name = "monitor_password",
      .type = SLC_CONF_UPSTREAM | SLC_CONF_TAKE1,
      .set = slc_monitor_password, .conf = SLC_CONF_MODULE },
    { .name = "monitor_interval", .type = SLC_CONF_UPSTREAM | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_monitor_conf_t, interval) },
    { .name = "monitor_connect_timeout",
      .type = SLC_CONF_UPSTREAM | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_monitor_conf_t, connect_timeout) },
    { .name = "max_replication_lag",
      .type = SLC_CONF_UPSTREAM | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_monitor_conf_t, max_replication_lag) },
    { .name = NULL }
};

slc_module_t slc_mysql_monitor_module = {
    .name = "mysql_monitor",
    .type = SLC_MODULE_CORE,
    .commands = slc_monitor_commands,
    .create_conf = slc_monitor_create_conf,
    .merge_conf = slc_monitor_merge_conf,
    .init_conf = slc_monitor_init_conf,
    .exit_process = slc_monitor_exit_process,
};

/* ---- the seqlock ------------------------------------------------------ */

uint32_t
slc_monitor_write_begin(slc_monitor_entry_t *e)
{
    return slc_seqlock_write_begin(&e->seq);
}

void
slc_monitor_write_end(slc_monitor_entry_t *e, uint32_t seq)
{
    slc_seqlock_write_end(&e->seq, seq);
}

int
slc_monitor_read(const slc_monitor_entry_t *e, slc_monitor_entry_t *out,
    int full)
{
    size_t len = full ? sizeof(*out) : offsetof(slc_monitor_entry_t, gtid);

    for (unsigned i = 0; i < SLC_MONITOR_READ_TRIES; i++) {
        uint32_t s0 = slc_seqlock_read_begin(&e->seq);
        if (s0 & 1) {
            sched_yield();
            continue;
        }
        memcpy(out, e, len);
        if (slc_seqlock_read_end(&e->seq, s0)) {
            if (full) {
                out->gtid[sizeof(out->gtid) - 1] = '\0';
                out->error[sizeof(out->error) - 1] = '\0';
            }
            return SLC_OK;
        }
    }
    return SLC_ERROR;
}

const char *
slc_monitor_role_name(unsigned role)
{
    return role == SLC_ROLE_PRIMARY ? "primary"
           : role == SLC_ROLE_REPLICA ? "replica" : "none";
}

const slc_monitor_conf_t *
slc_monitor_conf(const slc_upstream_t *up)
{
    return slc_module_conf(up->mod_conf, &slc_mysql_monitor_module);
}

/* A replica serves reads while both threads run and its lag is within
   max_replication_lag (0: any lag). */
static int
slc_monitor_replica_ok(const slc_upstream_server_t *us,
    const slc_monitor_status_t *st)
{
    uint32_t  both = SLC_MONITOR_IO_RUNNING | SLC_MONITOR_SQL_RUNNING;
    long long max = slc_monitor_conf(us->upstream)->max_replication_lag;

    if ((st->flags & both) != both || st->seconds_behind < 0) {
        return 0;
    }
    return max == 0 || st->seconds_behind * 1000 <= max;
}

unsigned
slc_monitor_role(const slc_upstream_server_t *us)
{
    slc_monitor_entry_t e;
    unsigned            role;

    if (us->monitor == NULL) {
        return us->role;
    }
    if (slc_monitor_read(us->monitor, &e, 0) != SLC_OK
        || e.st.checked_at == 0)
    {
        /* nothing seen yet (or the writer is stuck): as configured */
        return us->role_auto ? 0 : us->role;
    }
    if (!(e.st.flags & SLC_MONITOR_UP)) {
        return 0;
    }
    role = us->role_auto ? e.st.role : us->role;
    if ((role & SLC_ROLE_REPLICA) && !slc_monitor_replica_ok(us, &e.st)) {
        role &= ~(unsigned) SLC_ROLE_REPLICA;
    }
    return role;
}

int
slc_monitor_seen_down(const slc_upstream_server_t *us)
{
    slc_monitor_entry_t e;

    if (us->monitor == NULL || slc_monitor_read(us->monitor, &e, 0) != SLC_OK
        || e.st.checked_at == 0)
    {
        return 0;
    }
    return !(e.st.flags & SLC_MONITOR_UP);
}

int
slc_monitor_synced(const slc_upstream_server_t *us, uint64_t before,
    uint64_t *at)
{
    slc_monitor_entry_t e;

    if (us->monitor == NULL || slc_monitor_read(us->monitor, &e, 0) != SLC_OK)
    {
        return SLC_ERROR;
    }
    if (e.st.synced_at != 0 && e.st.synced_seen <= before) {
        *at = e.st.synced_at;
        return SLC_OK;
    }
    if (e.st.synced_prev_at != 0 && e.st.synced_prev_seen <= before) {
        *at = e.st.synced_prev_at;
        return SLC_OK;
    }
    return SLC_ERROR;
}

/* ---- configuration ---------------------------------------------------- */

static void *
slc_monitor_create_conf(slc_conf_t *cf, unsigned level)
{
    slc_monitor_conf_t *c;

    if (level != SLC_CONF_UPSTREAM) {
        return NULL;
    }
    c = slc_palloc(cf->pool, sizeof(*c));
    if (c == NULL) {
        return SLC_CONF_ERROR;
    }
    memset(c, 0, sizeof(*c));
    c->interval = SLC_CONF_UNSET;
    c->connect_timeout = SLC_CONF_UNSET;
    c->max_replication_lag = SLC_CONF_UNSET;
    c->file = cf->filename;
    c->line = cf->line;
    return c;
}

static const char *
slc_monitor_merge_conf(slc_conf_t *cf, unsigned level, void *parent,
    void *child)
{
    slc_monitor_conf_t *c = child;

    (void) cf;
    (void) level;
    (void) parent;
    if (c->user == NULL && (c->interval != SLC_CONF_UNSET
                            || c->connect_timeout != SLC_CONF_UNSET
                            || c->max_replication_lag != SLC_CONF_UNSET))
    {
        return "\"monitor_interval\", \"monitor_connect_timeout\" and "
               "\"max_replication_lag\" need \"monitor_user\"";
    }
    slc_conf_merge_value(c->interval, SLC_CONF_UNSET, 1000);
    slc_conf_merge_value(c->connect_timeout, SLC_CONF_UNSET, 1000);
    slc_conf_merge_value(c->max_replication_lag, SLC_CONF_UNSET, 0);
    if (c->user == NULL && c->password != NULL) {
        return "\"monitor_password\" without \"monitor_user\"";
    }
    if (c->user != NULL && c->password == NULL) {
        return "\"monitor_user\" without \"monitor_password\"";
    }
    if (c->interval < 10) {
        return "\"monitor_interval\" is below 10ms";
    }
    return NULL;
}

/*
 * Kept XORed with a random pad of the same length, so that the plaintext
 * is in no process's memory but the monitor's, for the instant it logs
 * in (t/plaintext.t).  Obfuscation, not protection: pad and mask sit
 * side by side in the cycle's pool.
 */
const char *
slc_monitor_secret(slc_conf_t *cf, const char *name, slc_monitor_conf_t *c)
{
    slc_str_t  *v = &cf->args[1];
    const char *rv = NULL;

    if (c->password != NULL) {
        rv = slc_conf_error(cf, "\"%s\" is duplicate", name);
    } else if (v->len == 0 || v->len > SLC_MONITOR_PASSWORD_MAX) {
        rv = slc_conf_error(cf, "invalid \"%s\" (1 to 256 bytes)", name);
    } else {
        c->pad = slc_palloc(cf->pool, v->len);
        c->password = slc_palloc(cf->pool, v->len);
        if (c->pad == NULL || c->password == NULL) {
            rv = "out of memory";
        } else {
            arc4random_buf(c->pad, v->len);
            for (size_t i = 0; i < v->len; i++) {
                c->password[i] = (uint8_t) v->data[i] ^ c->pad[i];
            }
            c->password_len = v->len;
        }
    }
    /* at once: the parser wipes its own copies when done (as `password`) */
    explicit_bzero(v->data, v->len);
    return rv;
}

static const char *
slc_monitor_password(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    (void) cmd;
    return slc_monitor_secret(cf, "monitor_password", conf);
}

static int
slc_monitor_check_upstream(slc_upstream_t *up, char *err, size_t errlen)
{
    const slc_monitor_conf_t *c = slc_monitor_conf(up);

    for (unsigned i = 0; i < up->nservers; i++) {
        if (up->servers[i].role_auto && c->user == NULL) {
            snprintf(err, errlen, "%s:%u: server \"%s\" has role=auto but "
                "upstream \"%s\" has no \"monitor_user\"", up->file,
                up->line, up->servers[i].name, up->name.data);
            return SLC_ERROR;
        }
    }
    return SLC_OK;
}

static int slc_monitor_attach(slc_shm_zone_t *z, slc_cycle_t *cycle,
    char *err, size_t errlen);
static int slc_monitor_process_init(slc_cycle_t *cycle, slc_role_t *role,
    unsigned n);

static int
slc_monitor_init_conf(slc_cycle_t *cycle, char *err, size_t errlen)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);
    slc_shm_zone_t   *z;
    int               any = 0;
    slc_role_t        role = {
        .name = "monitor", .count = 1, .module = &slc_mysql_monitor_module,
        .init = slc_monitor_process_init,
    };

    if (mc == NULL) {
        return SLC_OK;
    }
    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        if (slc_monitor_check_upstream(up, err, errlen) != SLC_OK) {
            return SLC_ERROR;
        }
        any |= slc_monitor_conf(up)->user != NULL;
    }
    if (!any) {
        return SLC_OK;
    }
    z = slc_shm_zone_add(cycle, "mysql_monitor",
        SLC_STATS_MAX * sizeof(slc_monitor_entry_t),
        &slc_mysql_monitor_module, err, errlen);
    if (z == NULL) {
        return SLC_ERROR;
    }
    z->attach = slc_monitor_attach;
    role.data = mc;
    if (slc_cycle_add_role(cycle, &role) == NULL) {
        snprintf(err, errlen, "cannot declare the monitor process");
        return SLC_ERROR;
    }
    return SLC_OK;
}

/*
 * Each monitored server gets the entry of its stats slot (found by key:
 * the stats zone's attach may not have run yet), so a server kept across
 * a reload keeps its state.
 */
static int
slc_monitor_attach(slc_shm_zone_t *z, slc_cycle_t *cycle, char *err,
    size_t errlen)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);

    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        int on = slc_monitor_conf(up)->user != NULL;
        for (unsigned i = 0; i < up->nservers; i++) {
            slc_upstream_server_t *us = &up->servers[i];
            int k = on ? slc_upstream_stats_key_index(mc, us) : -1;
            if (on && k < 0) {
                snprintf(err, errlen, "too many upstream servers for the "
                    "monitor zone (%d)", SLC_STATS_MAX);
                return SLC_ERROR;
            }
            us->monitor = on ? (slc_monitor_entry_t *) z->addr + k : NULL;
        }
    }
    return SLC_OK;
}

/* ---- the process ------------------------------------------------------ */

/* What the monitor keeps per server. */
typedef struct {
    slc_upstream_server_t   *us;
    MYSQL                   *mysql;     /* NULL: not connected */
    int                      mysql57;   /* no gtid_current_pos: MySQL */
    char                     key[160];  /* "upstream/address", for logs */
} slc_monitor_srv_t;

typedef struct {
    slc_timer_t              timer;
    slc_timer_t              catalog_timer;     /* DDL seen: load soon */
    slc_upstream_t          *up;
    const slc_monitor_conf_t *conf;
    slc_monitor_srv_t       *srvs;
} slc_monitor_up_t;

static slc_monitor_up_t  *slc_monitor_ups;
static unsigned           slc_monitor_nups;

static uint64_t
slc_monitor_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* Connector/C counts its timeouts in seconds: round up, at least 1. */
static unsigned
slc_monitor_secs(long long ms)
{
    return ms <= 1000 ? 1 : (unsigned) ((ms + 999) / 1000);
}

static void
slc_monitor_disconnect(slc_monitor_srv_t *ms)
{
    if (ms->mysql != NULL) {
        mysql_close(ms->mysql);
        ms->mysql = NULL;
    }
}

/* Host and port (or socket) of the server, as Connector/C takes them. */
static void
slc_monitor_addr(const slc_upstream_server_t *us, char *host, size_t hlen,
    unsigned *port, const char **sock)
{
    char serv[16];

    *sock = NULL;
    *port = 0;
    if (us->addr.ss_family == AF_UNIX) {
        strlcpy(host, "localhost", hlen);
        *sock = ((const struct sockaddr_un *) &us->addr)->sun_path;
        return;
    }
    if (getnameinfo((const struct sockaddr *) &us->addr, us->addrlen, host,
            (socklen_t) hlen, serv, sizeof(serv),
            NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    {
        strlcpy(host, "127.0.0.1", hlen);
        return;
    }
    *port = (unsigned) atoi(serv);
}

/*
 * Log in.  The plaintext exists on this stack for the call only, and in
 * Connector/C's copy (mysql->passwd), which is wiped once logged in.
 */
int
slc_monitor_login(MYSQL **mysql, const slc_upstream_server_t *us,
    const slc_monitor_conf_t *c)
{
    char        host[NI_MAXHOST], pw[SLC_MONITOR_PASSWORD_MAX + 1];
    const char *sock;
    unsigned    port, t = slc_monitor_secs(c->connect_timeout);
    unsigned    rt = c->read_timeout > 0 ? slc_monitor_secs(c->read_timeout)
                                         : t;
    MYSQL      *m, *ok;

    m = *mysql = mysql_init(NULL);
    if (m == NULL) {
        return SLC_ERROR;
    }
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &t);
    mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &rt);
    mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &t);
    slc_monitor_addr(us, host, sizeof(host), &port, &sock);
    for (size_t i = 0; i < c->password_len; i++) {
        pw[i] = (char) (c->password[i] ^ c->pad[i]);
    }
    pw[c->password_len] = '\0';
    ok = mysql_real_connect(m, host, c->user, pw, NULL, port, sock, 0);
    explicit_bzero(pw, sizeof(pw));
    if (m->passwd != NULL) {
        explicit_bzero(m->passwd, strlen(m->passwd));
    }
    return ok != NULL ? SLC_OK : SLC_ERROR;
}

static int
slc_monitor_connect(slc_monitor_srv_t *ms, const slc_monitor_conf_t *c)
{
    return slc_monitor_login(&ms->mysql, ms->us, c);
}

/* The error of the last call, escaped (the server's text). */
static void
slc_monitor_error(slc_monitor_srv_t *ms, slc_monitor_entry_t *e)
{
    const char *m = ms->mysql != NULL ? mysql_error(ms->mysql)
                                      : "out of memory";

    slc_log_escape(e->error, sizeof(e->error), m, strlen(m), 0);
}

/* SELECT @@read_only and the GTID position (MariaDB, else MySQL's). */
static int
slc_monitor_query_vars(slc_monitor_srv_t *ms, slc_monitor_entry_t *e)
{
    static const char *q[2] = {
        "SELECT @@global.read_only, @@global.gtid_current_pos",
        "SELECT @@global.read_only, @@global.gtid_executed",
    };
    MYSQL_RES *res;
    MYSQL_ROW  row;

    if (mysql_query(ms->mysql, q[ms->mysql57]) != 0) {
        if (mysql_errno(ms->mysql) != 1193 || ms->mysql57) {
            return SLC_ERROR;
        }
        ms->mysql57 = 1;        /* unknown variable: try MySQL's */
        return slc_monitor_query_vars(ms, e);
    }
    res = mysql_store_result(ms->mysql);
    row = res != NULL ? mysql_fetch_row(res) : NULL;
    if (row == NULL) {
        if (res != NULL) {
            mysql_free_result(res);
        }
        return SLC_ERROR;
    }
    if (row[0] != NULL && atoi(row[0]) != 0) {
        e->st.flags |= SLC_MONITOR_READ_ONLY;
    }
    if (strlcpy(e->gtid, row[1] != NULL ? row[1] : "", sizeof(e->gtid))
        >= sizeof(e->gtid))
    {
        /* cut short, a seq may read lower than it is: never compared */
        e->st.flags |= SLC_MONITOR_GTID_LONG;
    }
    mysql_free_result(res);
    return SLC_OK;
}

static void
slc_monitor_slave_field(slc_monitor_entry_t *e, const char *name,
    const char *v)
{
    if (v == NULL) {
        return;
    }
    if (strcmp(name, "Slave_IO_Running") == 0 && strcmp(v, "Yes") == 0) {
        e->st.flags |= SLC_MONITOR_IO_RUNNING;
    } else if (strcmp(name, "Slave_SQL_Running") == 0
               && strcmp(v, "Yes") == 0)
    {
        e->st.flags |= SLC_MONITOR_SQL_RUNNING;
    } else if (strcmp(name, "Seconds_Behind_Master") == 0) {
        e->st.seconds_behind = atoll(v);
    } else if ((strcmp(name, "Last_IO_Error") == 0
                || strcmp(name, "Last_SQL_Error") == 0) && v[0] != '\0')
    {
        slc_log_escape(e->error, sizeof(e->error), v, strlen(v), 0);
    }
}

/*
 * SHOW ALL SLAVES STATUS (MariaDB: every replication connection, multi-
 * source included; MySQL: SHOW SLAVE STATUS, one row per channel).  A
 * row means the server replicates.  With several connections it counts
 * as replicating only if every one of them runs both threads, and its lag
 * is the largest: a read may need what any source wrote.
 */
static int
slc_monitor_query_slave(slc_monitor_srv_t *ms, slc_monitor_entry_t *e)
{
    static const char *q[2] = { "SHOW ALL SLAVES STATUS",
                                "SHOW SLAVE STATUS" };
    const unsigned      both = SLC_MONITOR_IO_RUNNING
                               | SLC_MONITOR_SQL_RUNNING;
    MYSQL_RES          *res;
    MYSQL_ROW           row;
    MYSQL_FIELD        *f;
    unsigned            rows = 0, running = both, unknown = 0;
    long long           lag = 0;

    if (mysql_query(ms->mysql, q[ms->mysql57]) != 0
        || (res = mysql_store_result(ms->mysql)) == NULL)
    {
        return SLC_ERROR;
    }
    f = mysql_fetch_fields(res);
    while ((row = mysql_fetch_row(res)) != NULL) {
        rows++;
        e->st.flags &= ~both;
        e->st.seconds_behind = -1;
        for (unsigned i = 0; i < mysql_num_fields(res); i++) {
            slc_monitor_slave_field(e, f[i].name, row[i]);
        }
        running &= e->st.flags & both;
        if (e->st.seconds_behind < 0) {
            unknown = 1;                /* NULL: a thread stopped */
        } else if (e->st.seconds_behind > lag) {
            lag = e->st.seconds_behind;
        }
    }
    if (rows > 0) {
        e->st.flags = (e->st.flags & ~both) | running | SLC_MONITOR_REPLICA;
        e->st.seconds_behind = unknown ? -1 : lag;
    }
    mysql_free_result(res);
    return SLC_OK;
}

/* One check into `e` (its status starts cleared): up, or the error. */
static void
slc_monitor_check(slc_monitor_srv_t *ms, const slc_monitor_conf_t *c,
    slc_monitor_entry_t *e)
{
    e->st.seconds_behind = -1;
    if ((ms->mysql == NULL && slc_monitor_connect(ms, c) != SLC_OK)
        || slc_monitor_query_vars(ms, e) != SLC_OK
        || slc_monitor_query_slave(ms, e) != SLC_OK)
    {
        slc_monitor_error(ms, e);
        slc_monitor_disconnect(ms);     /* reconnect on the next check */
        e->st.flags = 0;
        e->st.seconds_behind = -1;
        return;
    }
    e->st.flags |= SLC_MONITOR_UP;
    e->st.role = (e->st.flags & SLC_MONITOR_REPLICA) ? SLC_ROLE_REPLICA
                 : !(e->st.flags & SLC_MONITOR_READ_ONLY) ? SLC_ROLE_PRIMARY
                 : 0;
}

/* Replication threads stopped or started on a replica: logged once. */
static void
slc_monitor_log_replication(slc_monitor_srv_t *ms,
    const slc_monitor_status_t *old, const slc_monitor_entry_t *e)
{
    uint32_t both = SLC_MONITOR_IO_RUNNING | SLC_MONITOR_SQL_RUNNING;
    uint32_t was = old->checked_at != 0 && old->role == SLC_ROLE_REPLICA
                   ? old->flags & both : both;
    uint32_t now = e->st.flags & both;

    if (e->st.role != SLC_ROLE_REPLICA || was == now) {
        return;
    }
    if (now == both) {
        slc_log(SLC_LOG_NOTICE, "monitor: server \"%s\": replication "
            "running", ms->key);
        return;
    }
    slc_log(SLC_LOG_WARN, "monitor: server \"%s\": replication stopped "
        "(IO thread %s, SQL thread %s)%s%s", ms->key,
        now & SLC_MONITOR_IO_RUNNING ? "running" : "stopped",
        now & SLC_MONITOR_SQL_RUNNING ? "running" : "stopped",
        e->error[0] != '\0' ? ": " : "", e->error);
}

/* A change of up/down or of the role is logged once. */
static void
slc_monitor_log_change(slc_monitor_srv_t *ms, const slc_monitor_status_t *old,
    const slc_monitor_entry_t *e)
{
    uint32_t up = e->st.flags & SLC_MONITOR_UP;

    slc_monitor_log_replication(ms, old, e);
    if (old->checked_at != 0 && (old->flags & SLC_MONITOR_UP) == up
        && old->role == e->st.role)
    {
        return;
    }
    if (!up) {
        slc_log(SLC_LOG_WARN, "monitor: server \"%s\" is down: %s", ms->key,
            e->error);
    } else {
        slc_log(SLC_LOG_NOTICE, "monitor: server \"%s\" is now %s%s",
            ms->key, slc_monitor_role_name(e->st.role),
            e->st.role == 0 ? " (read_only, not replicating)" : "");
    }
}

/*
 * A replica's answer to a check against what the primaries of its
 * upstream last answered: if its position holds a primary's, it holds
 * every commit made before that primary's check began, from the time its
 * own answer came (whichever check ran first).  What is known only grows.
 */
void
slc_monitor_sync(const slc_upstream_t *up, const slc_monitor_status_t *old,
    slc_monitor_entry_t *e)
{
    uint64_t        at = UINT64_MAX;
    slc_gtid_set_t  set;

    e->st.synced_at = old->synced_at;
    e->st.synced_seen = old->synced_seen;
    e->st.synced_prev_at = old->synced_prev_at;
    e->st.synced_prev_seen = old->synced_prev_seen;
    if (e->st.role != SLC_ROLE_REPLICA
        || (e->st.flags & SLC_MONITOR_GTID_LONG))
    {
        return;
    }
    for (unsigned i = 0; i < up->nservers; i++) {
        /* the monitor is the only writer: no seqlock to read its own */
        const slc_monitor_entry_t *p = up->servers[i].monitor;

        if (p == NULL || p->st.role != SLC_ROLE_PRIMARY
            || !(p->st.flags & SLC_MONITOR_UP))
        {
            continue;
        }
        if ((p->st.flags & SLC_MONITOR_GTID_LONG)
            || slc_gtid_set_parse(p->gtid, &set) != SLC_OK
            || !slc_gtid_pos_has_set(e->gtid, &set))
        {
            return;                     /* behind a primary, or unknown */
        }
        at = slc_min(at, p->st.asked_at);
    }
    if (at != UINT64_MAX && at > e->st.synced_at) {
        e->st.synced_prev_at = e->st.synced_at;
        e->st.synced_prev_seen = e->st.synced_seen;
        e->st.synced_at = at;
        e->st.synced_seen = e->st.answered_at;
    }
}

static void
slc_monitor_update(slc_monitor_srv_t *ms, const slc_monitor_conf_t *c)
{
    slc_monitor_entry_t  e, *z = ms->us->monitor;
    slc_monitor_status_t old = z->st;     /* the only writer reads it */
    uint32_t             seq;

    memset(&e, 0, sizeof(e));
    e.st.asked_at = slc_time_ms();
    slc_monitor_check(ms, c, &e);
    e.st.answered_at = slc_time_ms() + 1;
    e.st.checked_at = slc_monitor_now();
    if (!ms->mysql57) {
        slc_monitor_sync(ms->us->upstream, &old, &e);
    }
    e.st.changes = old.changes;
    if ((old.flags & SLC_MONITOR_UP) != (e.st.flags & SLC_MONITOR_UP)
        || old.role != e.st.role)
    {
        e.st.changes++;
    }
    slc_monitor_log_change(ms, &old, &e);
    seq = slc_monitor_write_begin(z);
    z->st = e.st;
    memcpy(z->gtid, e.gtid, sizeof(z->gtid));
    memcpy(z->error, e.error, sizeof(z->error));
    slc_monitor_write_end(z, seq);
}

static void
slc_monitor_tick(slc_timer_t *t)
{
    slc_monitor_up_t *mu = t->data;

    /* the primaries first: a replica is compared with what they have now */
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned i = 0; i < mu->up->nservers; i++) {
            if ((mu->up->servers[i].monitor->st.role == SLC_ROLE_PRIMARY)
                == (pass == 0))
            {
                slc_monitor_update(&mu->srvs[i], mu->conf);
            }
        }
    }
    /* the schema catalog, from the primary just seen, when due */
    slc_catalog_step(mu->up);
    slc_timer_add(slc_loop, &mu->timer, (uint64_t) mu->conf->interval);
}

/*
 * DDL through the proxy leaves the upstream's schema catalog stale (a
 * cache stores nothing that reads a table meanwhile): it is looked at
 * this often, not only after each round of checks, and loaded at once
 * when a worker said so.
 */
#define SLC_MONITOR_CATALOG_POLL  20    /* ms */

static void
slc_monitor_catalog_tick(slc_timer_t *t)
{
    slc_monitor_up_t *mu = t->data;

    slc_catalog_poll(mu->up);
    slc_timer_add(slc_loop, &mu->catalog_timer, SLC_MONITOR_CATALOG_POLL);
}

static int
slc_monitor_up_init(slc_monitor_up_t *mu, slc_upstream_t *up)
{
    mu->up = up;
    mu->conf = slc_monitor_conf(up);
    mu->srvs = calloc(up->nservers, sizeof(*mu->srvs));
    if (mu->srvs == NULL) {
        return SLC_ERROR;
    }
    for (unsigned i = 0; i < up->nservers; i++) {
        mu->srvs[i].us = &up->servers[i];
        snprintf(mu->srvs[i].key, sizeof(mu->srvs[i].key), "%s/%s",
            up->name.data, up->servers[i].name);
    }
    mu->timer.handler = slc_monitor_tick;
    mu->timer.data = mu;
    slc_timer_add(slc_loop, &mu->timer, 0);
    if (slc_catalog_of(up) != NULL) {
        mu->catalog_timer.handler = slc_monitor_catalog_tick;
        mu->catalog_timer.data = mu;
        slc_timer_add(slc_loop, &mu->catalog_timer,
            SLC_MONITOR_CATALOG_POLL);
    }
    return SLC_OK;
}

static int
slc_monitor_process_init(slc_cycle_t *cycle, slc_role_t *role, unsigned n)
{
    slc_mysql_conf_t *mc = role->data;
    unsigned          k = 0;

    (void) cycle;
    (void) n;
    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        k += slc_monitor_conf(up)->user != NULL;
    }
    slc_monitor_ups = calloc(k, sizeof(*slc_monitor_ups));
    if (slc_monitor_ups == NULL || mysql_library_init(0, NULL, NULL) != 0) {
        slc_log(SLC_LOG_ALERT, "monitor: cannot initialise");
        return SLC_ERROR;
    }
    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        if (slc_monitor_conf(up)->user == NULL) {
            continue;
        }
        if (slc_monitor_up_init(&slc_monitor_ups[slc_monitor_nups++], up)
            != SLC_OK)
        {
            slc_log(SLC_LOG_ALERT, "monitor: out of memory");
            return SLC_ERROR;
        }
    }
    return SLC_OK;
}

/* The monitor leaves: its connections end with a COM_QUIT. */
static void
slc_monitor_exit_process(slc_cycle_t *cycle, const slc_role_t *role)
{
    (void) cycle;
    if (role == NULL || role->module != &slc_mysql_monitor_module) {
        return;
    }
    for (unsigned i = 0; i < slc_monitor_nups; i++) {
        for (unsigned j = 0; j < slc_monitor_ups[i].up->nservers; j++) {
            slc_monitor_disconnect(&slc_monitor_ups[i].srvs[j]);
        }
        free(slc_monitor_ups[i].srvs);
    }
    free(slc_monitor_ups);
    slc_monitor_ups = NULL;
    slc_monitor_nups = 0;
    mysql_library_end();
}
