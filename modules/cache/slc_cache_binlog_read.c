/*
 * The binlog reader's process (slc_cache_binlog.h): process n of the role
 * `binlog` reads the n-th upstream that has `binlog on`.
 *
 * It logs in to the primary the monitor sees (slc_monitor_role) with its
 * account, registers as a replica with its server id (after checking that
 * no other replica of the primary uses it), asks for the binlog from the
 * position it applied last (@slave_connect_state, strict mode, GTIDs:
 * capability 4) with heartbeats every SLC_BINLOG_HEARTBEAT_MS, and reads
 * with blocking calls (Connector/C's mariadb_rpl_fetch): its timer reads
 * until a heartbeat or for at most SLC_BINLOG_STEP_MS, then yields so the
 * loop sees signals.  A read waits up to SLC_BINLOG_READ_TIMEOUT: before
 * its first event the primary may scan a large binlog file for the
 * position (workers do not wait for it: they serve no hit meanwhile).
 * It is live (hits served) once it holds everything the primary had when
 * it connected: a heartbeat (the primary has nothing
 * more to send), or its position covering the primary's.
 *
 * It never writes: it sets session variables of its own connection and
 * reads.  Errors: a dropped connection or a new primary resumes from the
 * same position; a position the primary cannot serve (purged, diverged,
 * a gap: error 1236) invalidates everything once and starts from the
 * primary's current one; an event Connector/C cannot decode invalidates
 * everything and skips its group.
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_role.h"
#include "slc_seqlock.h"
#include "slc_mysql_catalog.h"
#include "slc_mysql_conf.h"
#include "slc_mysql_monitor.h"
#include "slc_cache.h"
#include "slc_cache_binlog.h"

#include <mysql.h>
#include <mariadb_rpl.h>
#include <errmsg.h>
#include <signal.h>

#define SLC_BINLOG_STEP_MS      100     /* reading before the loop runs */
#define SLC_BINLOG_RETRY_MIN    100     /* after a failure, doubling */
#define SLC_BINLOG_RETRY_MAX    2000

typedef struct {
    slc_cycle_t              *cycle;
    slc_upstream_t           *up;
    slc_cache_binlog_conf_t  *bc;
    slc_cache_binlog_t       *b;
    slc_catalog_t            *catalog;
    slc_timer_t               timer;
    slc_upstream_server_t    *us;       /* reading from; NULL: not */
    MYSQL                    *mysql;
    MARIADB_RPL              *rpl;
    MARIADB_RPL_EVENT        *ev;
    slc_gtid_set_t            pos;      /* applied */
    slc_gtid_set_t            target;   /* the primary's, at connect */
    slc_cache_binlog_group_t  g;
    unsigned                  retry;    /* ms */
    int                       reset;    /* start from the primary's */
    uint64_t                  lost_at;  /* not live since (ms) */
    char                      host[64]; /* reported to the primary */
    char                      last_error[512];  /* logged */
    int32_t                   pid;      /* ours: the entry's while it is
                                           the newest reader's */
    uint32_t                  state;    /* SLC_BINLOG_*: ours, the
                                           entry's too while we own it */
    uint64_t                  quit_at;  /* QUIT came (ms), 0: not */
    uint64_t                  heard;    /* the primary's last sign (ms) */
    uint32_t                  server_id;    /* ours, to the primary */
} slc_binlog_reader_t;

static slc_binlog_reader_t  slc_binlog_rd;


/* --- the entry ------------------------------------------------------------ */

/*
 * Who writes the entry.  Its owner (pid) alone writes its state, position
 * and counters.  A reload's new reader starts as the heir while the old
 * one still reads (their derived server ids differ, so the primary keeps
 * both): it reads from the position the entry had, and takes the entry
 * over once it is live itself, so hits never pause for the reload; the
 * old one then changes nothing more and stops (its busy hook kept it
 * until then).  A reader that is neither stops reading.
 */
static int
slc_cache_binlog_owner(const slc_binlog_reader_t *rd)
{
    return __atomic_load_n(&rd->b->pid, __ATOMIC_ACQUIRE) == rd->pid;
}

static int
slc_cache_binlog_mine(const slc_binlog_reader_t *rd)
{
    return slc_cache_binlog_owner(rd)
           || __atomic_load_n(&rd->b->heir, __ATOMIC_ACQUIRE) == rd->pid;
}

static void slc_cache_binlog_publish(slc_binlog_reader_t *rd,
    const char *err);

/* The heir is live: the entry is its now. */
static void
slc_cache_binlog_take_over(slc_binlog_reader_t *rd)
{
    int32_t old = __atomic_load_n(&rd->b->pid, __ATOMIC_ACQUIRE);

    __atomic_store_n(&rd->b->pid, rd->pid, __ATOMIC_RELEASE);
    __atomic_store_n(&rd->b->heir, 0, __ATOMIC_RELEASE);
    rd->b->server_id = rd->server_id;
    slc_cache_binlog_publish(rd, NULL);
    slc_log(SLC_LOG_NOTICE, "binlog \"%s\": taken over from process %d",
        rd->up->name.data, (int) old);
}

static void
slc_cache_binlog_set_state(slc_binlog_reader_t *rd, uint32_t state)
{
    uint32_t old = rd->state;
    uint64_t now = slc_time_ms();

    if (old == state) {
        return;
    }
    rd->state = state;
    rd->heard = now;
    if (state == SLC_BINLOG_LIVE && !slc_cache_binlog_owner(rd)
        && slc_cache_binlog_mine(rd))
    {
        slc_cache_binlog_take_over(rd);
    }
    if (slc_cache_binlog_owner(rd)) {
        if (state == SLC_BINLOG_LIVE && rd->lost_at != 0) {
            __atomic_fetch_add(&rd->b->st.lost_ms, now - rd->lost_at,
                __ATOMIC_RELAXED);
            rd->lost_at = 0;
        } else if (old == SLC_BINLOG_LIVE) {
            rd->lost_at = now;
        }
        __atomic_store_n(&rd->b->beat, now, __ATOMIC_RELEASE);
        __atomic_store_n(&rd->b->state, state, __ATOMIC_RELEASE);
    }
    if (state == SLC_BINLOG_LIVE) {
        rd->last_error[0] = '\0';
    }
    slc_log(state == SLC_BINLOG_LOST ? SLC_LOG_WARN : SLC_LOG_NOTICE,
        "binlog \"%s\": %s%s%s", rd->up->name.data,
        slc_cache_binlog_state_name(state),
        state == SLC_BINLOG_LIVE ? " at " : "",
        state == SLC_BINLOG_LIVE ? rd->b->pos : "");
}

/* The texts of the entry, under its seqlock (`err` may be NULL: kept). */
static void
slc_cache_binlog_publish(slc_binlog_reader_t *rd, const char *err)
{
    uint32_t s;

    if (!slc_cache_binlog_owner(rd)) {
        return;
    }
    s = slc_seqlock_write_begin(&rd->b->seq);

    if (slc_gtid_set_format(&rd->pos, rd->b->pos, sizeof(rd->b->pos)) < 0) {
        rd->b->pos[0] = '\0';
    }
    strlcpy(rd->b->primary, rd->us != NULL ? rd->us->name : "",
        sizeof(rd->b->primary));
    if (err != NULL) {
        slc_log_escape(rd->b->error, sizeof(rd->b->error), err, strlen(err),
            0);
    }
    slc_seqlock_write_end(&rd->b->seq, s);
}

/* The entry's counters are its owner's (an heir's would count twice). */
#define slc_cache_binlog_count(rd, field, n)                                \
    do {                                                                    \
        if (slc_cache_binlog_owner(rd)) {                                   \
            __atomic_fetch_add(&(rd)->b->st.field, (n), __ATOMIC_RELAXED);  \
        }                                                                   \
    } while (0)


/* --- the Redis tier's generations ----------------------------------------- */

/*
 * A group's tables move in Redis before the zones: a worker that copies a
 * Redis entry into its zone after the zone's bump then finds the entry
 * stale in Redis.  Once per GTID across every host reading this binlog.
 * What cannot reach a service is marked there, and retried at each group
 * and heartbeat (slc_cache_redis_sync.c).  The owner's only: an heir
 * bumps nothing, its owner does.
 */
static void
slc_cache_binlog_redis(slc_binlog_reader_t *rd, const uint32_t *hash,
    unsigned n, int all)
{
    const slc_cache_remote_t *r = slc_cache_remote_of(rd->cycle);
    char                      id[64];

    if (r == NULL || !slc_cache_binlog_owner(rd)) {
        return;
    }
    if (rd->g.open) {
        snprintf(id, sizeof(id), "%u-%u-%llu", rd->g.gtid.domain,
            rd->g.gtid.server, (unsigned long long) rd->g.gtid.seq);
    }
    r->bump_sync(rd->cycle, rd->g.open ? id : NULL, hash, n, all);
}


/* --- applying a group ----------------------------------------------------- */

static void
slc_cache_binlog_invalidate_all(slc_binlog_reader_t *rd, int why)
{
    slc_cache_binlog_redis(rd, NULL, 0, 1);
    slc_cache_zones_invalidate(rd->cycle, NULL, 0, 1, slc_time_ms());
    slc_cache_binlog_count(rd, all[why], 1);
}

/* The group committed (or ended): its tables' generations move in every
   zone, then the position holds it. */
static void
slc_cache_binlog_apply(slc_binlog_reader_t *rd, int apply)
{
    slc_cache_binlog_tables_t *t = &rd->g.t;

    if (apply && t->all) {
        slc_cache_binlog_invalidate_all(rd, t->why);
    } else if (apply && t->n > 0) {
        slc_cache_binlog_redis(rd, t->hash, t->n, 0);
        slc_cache_zones_invalidate(rd->cycle, t->hash, t->n, 0,
            slc_time_ms());
        slc_cache_binlog_count(rd, tables, t->n);
    }
    if (apply && t->ddl && rd->catalog != NULL) {
        slc_catalog_ddl_seen(rd->catalog);
    }
    if (rd->g.open) {
        slc_gtid_set_add(&rd->pos, &rd->g.gtid);
    }
    slc_cache_binlog_count(rd, groups, 1);
    slc_cache_binlog_group_reset(&rd->g);
    slc_cache_binlog_publish(rd, NULL);
    if (rd->state == SLC_BINLOG_CATCHING_UP
        && slc_gtid_set_covers(&rd->pos, &rd->target))
    {
        slc_cache_binlog_set_state(rd, SLC_BINLOG_LIVE);
    }
}


/* --- events --------------------------------------------------------------- */

static void
slc_cache_binlog_gtid(slc_binlog_reader_t *rd, const MARIADB_RPL_EVENT *ev)
{
    const struct st_mariadb_rpl_gtid_event *e = &ev->event.gtid;
    slc_gtid_t               gtid = {
        .domain = e->domain_id, .server = ev->server_id,
        .seq = e->sequence_nr,
    };
    slc_cache_binlog_xid_t   xid = { .format = e->format_id };

    if (e->xid.str != NULL) {
        xid.len = (uint8_t) slc_min(e->xid.length, sizeof(xid.data));
        memcpy(xid.data, e->xid.str, xid.len);
    }
    slc_cache_binlog_group_begin(&rd->g, &gtid, e->flags, &xid);
}

static int
slc_cache_binlog_statement(slc_binlog_reader_t *rd, const MARIADB_STRING *db,
    const MARIADB_STRING *q, const MARIADB_STRING *status)
{
    uint64_t mode = 0;
    int      unknown = slc_cache_binlog_sql_mode(
        (const uint8_t *) status->str, status->length, &mode) != SLC_OK
        || (mode & SLC_BINLOG_MODE_QUOTES);

    return slc_cache_binlog_group_query(&rd->g, rd->catalog, db->str,
        db->length, q->str, q->length, (mode & SLC_BINLOG_MODE_NBE) != 0,
        unknown);
}

/* One event: SLC_BINLOG_GROUP_* for the group it belongs to. */
static int
slc_cache_binlog_event(slc_binlog_reader_t *rd, const MARIADB_RPL_EVENT *ev)
{
    switch (ev->event_type) {
    case GTID_EVENT:
        slc_cache_binlog_gtid(rd, ev);
        return SLC_BINLOG_GROUP_MORE;
    case TABLE_MAP_EVENT:
        slc_cache_binlog_group_table(&rd->g, ev->event.table_map.database.str,
            ev->event.table_map.database.length,
            ev->event.table_map.table.str, ev->event.table_map.table.length);
        return SLC_BINLOG_GROUP_MORE;
    case QUERY_EVENT: case QUERY_COMPRESSED_EVENT:
        return slc_cache_binlog_statement(rd, &ev->event.query.database,
            &ev->event.query.statement, &ev->event.query.status);
    case EXECUTE_LOAD_QUERY_EVENT:
        return slc_cache_binlog_statement(rd,
            &ev->event.execute_load_query.schema,
            &ev->event.execute_load_query.statement,
            &ev->event.execute_load_query.status_vars);
    case XID_EVENT:
        return slc_cache_binlog_group_xid(&rd->g);
    case XA_PREPARE_LOG_EVENT:
        return slc_cache_binlog_group_xa_prepare(&rd->g);
    case WRITE_ROWS_EVENT_V1: case UPDATE_ROWS_EVENT_V1:
    case DELETE_ROWS_EVENT_V1: case WRITE_ROWS_EVENT: case UPDATE_ROWS_EVENT:
    case DELETE_ROWS_EVENT: case WRITE_ROWS_COMPRESSED_EVENT_V1:
    case UPDATE_ROWS_COMPRESSED_EVENT_V1: case DELETE_ROWS_COMPRESSED_EVENT_V1:
    case WRITE_ROWS_COMPRESSED_EVENT: case UPDATE_ROWS_COMPRESSED_EVENT:
    case DELETE_ROWS_COMPRESSED_EVENT: case PARTIAL_UPDATE_ROWS_EVENT:
    case INTVAR_EVENT: case RAND_EVENT: case USER_VAR_EVENT:
    case ANNOTATE_ROWS_EVENT: case BEGIN_LOAD_QUERY_EVENT:
    case APPEND_BLOCK_EVENT: case IGNORABLE_LOG_EVENT:
    case ROWS_QUERY_LOG_EVENT:
        return SLC_BINLOG_GROUP_MORE;   /* their tables are mapped */
    case ROTATE_EVENT: case FORMAT_DESCRIPTION_EVENT: case GTID_LIST_EVENT:
    case BINLOG_CHECKPOINT_EVENT: case STOP_EVENT: case HEARTBEAT_LOG_EVENT:
    case START_ENCRYPTION_EVENT:
        return SLC_BINLOG_GROUP_MORE;   /* the stream's, no group's */
    default:
        /* an incident (events lost on the primary), or one not known */
        slc_log(SLC_LOG_WARN, "binlog \"%s\": event type %d: everything "
            "invalidated", rd->up->name.data, (int) ev->event_type);
        slc_cache_binlog_group_unreadable(&rd->g);
        return rd->g.open ? SLC_BINLOG_GROUP_MORE : SLC_BINLOG_GROUP_APPLY;
    }
}


/* --- the connection ------------------------------------------------------- */

static void
slc_cache_binlog_close(slc_binlog_reader_t *rd)
{
    if (rd->ev != NULL) {
        mariadb_free_rpl_event(rd->ev);
        rd->ev = NULL;
    }
    if (rd->rpl != NULL) {
        mariadb_rpl_close(rd->rpl);
        rd->rpl = NULL;
    }
    if (rd->mysql != NULL) {
        mysql_close(rd->mysql);
        rd->mysql = NULL;
    }
    rd->us = NULL;
    /* a group read in part is read again from its start */
    slc_cache_binlog_group_reset(&rd->g);
}

/* The last error: the replication API's when it has one (mariadb_rpl_open
   keeps its own), else the connection's. */
static const char *
slc_cache_binlog_errstr(const slc_binlog_reader_t *rd)
{
    if (rd->rpl != NULL && rd->rpl->error_no != 0) {
        return rd->rpl->error_msg;
    }
    return rd->mysql != NULL ? mysql_error(rd->mysql) : "out of memory";
}

static unsigned
slc_cache_binlog_errno(const slc_binlog_reader_t *rd)
{
    if (rd->rpl != NULL && rd->rpl->error_no != 0) {
        return rd->rpl->error_no;
    }
    return rd->mysql != NULL ? mysql_errno(rd->mysql) : 0;
}

/* The primary the monitor sees now; NULL when none. */
static slc_upstream_server_t *
slc_cache_binlog_primary(const slc_binlog_reader_t *rd)
{
    for (unsigned i = 0; i < rd->up->nservers; i++) {
        if (slc_monitor_role(&rd->up->servers[i]) & SLC_ROLE_PRIMARY) {
            return &rd->up->servers[i];
        }
    }
    return NULL;
}

/* One value of a one-row query; SLC_ERROR with nothing in buf. */
static int
slc_cache_binlog_value(MYSQL *m, const char *q, char *buf, size_t len)
{
    MYSQL_RES *res;
    MYSQL_ROW  row;
    int        rc = SLC_ERROR;

    buf[0] = '\0';
    if (mysql_query(m, q) != 0 || (res = mysql_store_result(m)) == NULL) {
        return SLC_ERROR;
    }
    row = mysql_fetch_row(res);
    if (row != NULL && row[0] != NULL) {
        strlcpy(buf, row[0], len);
        rc = SLC_OK;
    }
    mysql_free_result(res);
    return rc;
}

/*
 * No other replica of the primary may use our server id: the primary
 * would end that replica's connection when ours comes (and ours at its
 * next).  SHOW SLAVE HOSTS lists registered replicas (an account without
 * REPLICATION MASTER ADMIN cannot read it: then only the primary's own
 * id is checked).
 */
static int
slc_cache_binlog_id_free(slc_binlog_reader_t *rd, char *why, size_t len)
{
    MYSQL_RES *res;
    MYSQL_ROW  row;
    char       v[32];
    int        ok = SLC_OK;

    if (slc_cache_binlog_value(rd->mysql, "SELECT @@global.server_id", v,
                               sizeof(v)) == SLC_OK
        && strtoul(v, NULL, 10) == rd->server_id)
    {
        snprintf(why, len, "binlog_server_id %u is the primary's own",
            rd->server_id);
        return SLC_ERROR;
    }
    if (mysql_query(rd->mysql, "SHOW SLAVE HOSTS") != 0
        || (res = mysql_store_result(rd->mysql)) == NULL)
    {
        return SLC_OK;
    }
    while (ok == SLC_OK && (row = mysql_fetch_row(res)) != NULL) {
        if (row[0] != NULL && strtoul(row[0], NULL, 10) == rd->server_id
            && (row[1] == NULL || strcmp(row[1], rd->host) != 0))
        {
            snprintf(why, len, "binlog_server_id %u is used by replica "
                "\"%.64s\" of the primary", rd->server_id,
                row[1] != NULL ? row[1] : "");
            ok = SLC_ERROR;
        }
    }
    mysql_free_result(res);
    return ok;
}

/* The session variables that make the dump a GTID replica's. */
static int
slc_cache_binlog_ask(slc_binlog_reader_t *rd)
{
    char q[SLC_GTID_TEXT + 64], pos[SLC_GTID_TEXT];

    if (slc_gtid_set_format(&rd->pos, pos, sizeof(pos)) < 0) {
        return SLC_ERROR;
    }
    snprintf(q, sizeof(q), "SET @slave_connect_state='%s'", pos);
    if (mysql_query(rd->mysql, q) != 0
        || mysql_query(rd->mysql, "SET @slave_gtid_strict_mode=1") != 0
        || mysql_query(rd->mysql, "SET @master_binlog_checksum="
                                  "@@global.binlog_checksum") != 0
        || mysql_query(rd->mysql, "SET @mariadb_slave_capability=4") != 0)
    {
        return SLC_ERROR;
    }
    snprintf(q, sizeof(q), "SET @master_heartbeat_period=%llu",
        (unsigned long long) SLC_BINLOG_HEARTBEAT_MS * 1000000ULL);
    return mysql_query(rd->mysql, q) == 0 ? SLC_OK : SLC_ERROR;
}

static int
slc_cache_binlog_open(slc_binlog_reader_t *rd)
{
    rd->rpl = mariadb_rpl_init(rd->mysql);
    if (rd->rpl == NULL) {
        return SLC_ERROR;
    }
    mariadb_rpl_optionsv(rd->rpl, MARIADB_RPL_SERVER_ID,
        (unsigned int) rd->server_id);
    mariadb_rpl_optionsv(rd->rpl, MARIADB_RPL_FILENAME, "", (size_t) 0);
    mariadb_rpl_optionsv(rd->rpl, MARIADB_RPL_START, (unsigned long) 4);
    mariadb_rpl_optionsv(rd->rpl, MARIADB_RPL_VERIFY_CHECKSUM, 1);
    mariadb_rpl_optionsv(rd->rpl, MARIADB_RPL_UNCOMPRESS, 1);
    mariadb_rpl_optionsv(rd->rpl, MARIADB_RPL_HOST, rd->host);
    return mariadb_rpl_open(rd->rpl) == 0 ? SLC_OK : SLC_ERROR;
}

/* Connect to the primary and ask for the binlog from our position. */
static int
slc_cache_binlog_connect(slc_binlog_reader_t *rd, char *why, size_t len)
{
    char                   now[SLC_GTID_TEXT];
    slc_upstream_server_t *us = slc_cache_binlog_primary(rd);

    if (us == NULL) {
        snprintf(why, len, "no primary seen by the monitor");
        return SLC_ERROR;
    }
    rd->us = us;
    if (slc_monitor_login(&rd->mysql, us, &rd->bc->account) != SLC_OK
        || slc_cache_binlog_value(rd->mysql,
               "SELECT @@global.gtid_binlog_pos", now, sizeof(now)) != SLC_OK
        || slc_gtid_set_parse(now, &rd->target) != SLC_OK)
    {
        snprintf(why, len, "%s: %.300s", us->name,
            slc_cache_binlog_errstr(rd));
        return SLC_ERROR;
    }
    if (slc_cache_binlog_id_free(rd, why, len) != SLC_OK) {
        return SLC_ERROR;
    }
    if (rd->reset || rd->pos.n == 0) {
        if (rd->reset) {
            /* what went by between the old position and this one */
            slc_cache_binlog_invalidate_all(rd, SLC_BINLOG_ALL_POSITION);
            slc_log(SLC_LOG_WARN, "binlog \"%s\": resuming at %s on %s: "
                "everything invalidated", rd->up->name.data, now, us->name);
        }
        rd->pos = rd->target;
        rd->reset = 0;
    }
    if (slc_cache_binlog_ask(rd) != SLC_OK) {
        snprintf(why, len, "%s: %.300s", us->name,
            slc_cache_binlog_errstr(rd));
        return SLC_ERROR;
    }
    if (slc_cache_binlog_open(rd) != SLC_OK) {
        /* Connector/C keeps no text for a refused COM_REGISTER_SLAVE */
        snprintf(why, len, "%s: cannot register as a replica (error %u: "
            "%.200s)%s", us->name, slc_cache_binlog_errno(rd),
            slc_cache_binlog_errstr(rd),
            slc_cache_binlog_errno(rd) == 1045
            ? ": the account needs REPLICATION SLAVE" : "");
        return SLC_ERROR;
    }
    slc_cache_binlog_count(rd, connects, 1);
    slc_cache_binlog_publish(rd, NULL);
    slc_log(SLC_LOG_NOTICE, "binlog \"%s\": reading %s from %s as server id "
        "%u", rd->up->name.data, us->name, rd->b->pos, rd->server_id);
    slc_cache_binlog_set_state(rd, SLC_BINLOG_CATCHING_UP);
    return SLC_OK;
}

/* A connection error (no answer, dropped): resume where it was. */
static int
slc_cache_binlog_net_error(unsigned err)
{
    return err == 0 || err == CR_SERVER_LOST || err == CR_SERVER_GONE_ERROR
           || err == CR_CONN_HOST_ERROR || err == CR_CONNECTION_ERROR;
}

/*
 * Connecting failed (`stream` 0) or the stream ended with an error.  A
 * position the primary cannot serve (1236: purged, diverged, a gap)
 * starts again from its current one; in the stream, an event Connector/C
 * cannot decode (its own error) skips its group (everything invalidated);
 * anything else (a dropped connection, a privilege the account lacks)
 * resumes where it was.  The error is logged when it is new.
 */
static void
slc_cache_binlog_failed(slc_binlog_reader_t *rd, const char *why,
    int stream)
{
    unsigned err = slc_cache_binlog_errno(rd);
    char     esc[512];          /* the server's text, for the log */

    if (!slc_cache_binlog_mine(rd)) {
        slc_cache_binlog_close(rd);     /* (the new reader took over) */
        return;
    }
    slc_log_escape(esc, sizeof(esc), why, strlen(why), 0);
    if (err == 1236 && strstr(why, "same server_uuid/server_id") != NULL) {
        /* another replica took our server id: not our position's fault */
    } else if (err == 1236) {
        rd->reset = 1;
    } else if (stream && err >= CR_MIN_ERROR
               && !slc_cache_binlog_net_error(err))
    {
        /* Connector/C's own (a server's error, such as a privilege it
           lacks, resumes where it was) */
        if (rd->g.open) {
            slc_log(SLC_LOG_WARN, "binlog \"%s\": group %u-%u-%llu cannot "
                "be read (%s): skipped, everything invalidated",
                rd->up->name.data, rd->g.gtid.domain, rd->g.gtid.server,
                (unsigned long long) rd->g.gtid.seq, esc);
            slc_cache_binlog_group_unreadable(&rd->g);
            slc_cache_binlog_apply(rd, 1);
        } else {
            rd->reset = 1;
        }
    }
    slc_cache_binlog_count(rd, errors, 1);
    if (strcmp(why, rd->last_error) != 0) {
        slc_log(SLC_LOG_ERR, "binlog \"%s\": %s", rd->up->name.data, esc);
        strlcpy(rd->last_error, why, sizeof(rd->last_error));
    }
    slc_cache_binlog_publish(rd, why);
    slc_cache_binlog_close(rd);
    if (rd->state != SLC_BINLOG_STARTING) {
        slc_cache_binlog_set_state(rd, SLC_BINLOG_LOST);
    }
}


/* --- the step ------------------------------------------------------------- */

/* Read until a heartbeat or the step's time is up: SLC_ERROR when the
   stream failed, SLC_DONE when the reader was stalled (stopped, starved)
   for longer than workers wait for it. */
static int
slc_cache_binlog_read(slc_binlog_reader_t *rd)
{
    uint64_t end = slc_time_ms() + SLC_BINLOG_STEP_MS, now;
    int      r;

    for (;;) {
        rd->ev = mariadb_rpl_fetch(rd->rpl, rd->ev);
        if (rd->ev == NULL) {
            return SLC_ERROR;
        }
        if (!slc_cache_binlog_mine(rd)) {
            return SLC_OK;              /* the step stops there */
        }
        now = slc_time_ms();
        if (rd->state == SLC_BINLOG_LIVE
            && now > rd->heard + SLC_BINLOG_BEAT_MS)
        {
            /* not heard from for so long that workers stopped serving
               hits: what came meanwhile is a backlog, so it is not live
               until it holds what the primary has now; reconnecting
               asks for that */
            return SLC_DONE;
        }
        rd->heard = now;
        if (slc_cache_binlog_owner(rd)) {
            __atomic_store_n(&rd->b->beat, now, __ATOMIC_RELEASE);
        }
        slc_cache_binlog_count(rd, events, 1);
        r = slc_cache_binlog_event(rd, rd->ev);
        if (r != SLC_BINLOG_GROUP_MORE) {
            slc_cache_binlog_apply(rd, r == SLC_BINLOG_GROUP_APPLY);
        }
        if (rd->ev->event_type == HEARTBEAT_LOG_EVENT
            || (rd->state == SLC_BINLOG_CATCHING_UP
                && !rd->g.open
                && slc_gtid_set_covers(&rd->pos, &rd->target)))
        {
            /* the primary has sent all it had */
            slc_cache_binlog_set_state(rd, SLC_BINLOG_LIVE);
            if (rd->ev->event_type == HEARTBEAT_LOG_EVENT) {
                slc_cache_binlog_redis(rd, NULL, 0, 0);     /* a retry */
                return SLC_OK;
            }
        }
        if (now >= end) {
            return SLC_OK;
        }
    }
}

static void
slc_cache_binlog_step(slc_timer_t *t)
{
    slc_binlog_reader_t *rd = t->data;
    char                 why[512];
    int                  rc;

    if (!slc_cache_binlog_mine(rd)) {
        /* a newer reader (a reload's) has taken it over: this one waits
           for its QUIT without reading */
        slc_log(SLC_LOG_NOTICE, "binlog \"%s\": process %d reads it now",
            rd->up->name.data, (int) rd->b->pid);
        slc_cache_binlog_close(rd);
        return;
    }
    if (rd->us != NULL && slc_cache_binlog_primary(rd) != rd->us) {
        slc_log(SLC_LOG_NOTICE, "binlog \"%s\": the primary is no longer "
            "%s", rd->up->name.data, rd->us->name);
        slc_cache_binlog_close(rd);
        slc_cache_binlog_set_state(rd, SLC_BINLOG_LOST);
    }
    if (rd->us == NULL
        && slc_cache_binlog_connect(rd, why, sizeof(why)) != SLC_OK)
    {
        slc_cache_binlog_failed(rd, why, 0);
    } else if ((rc = slc_cache_binlog_read(rd)) == SLC_ERROR) {
        snprintf(why, sizeof(why), "%s: %.300s", rd->us->name,
            slc_cache_binlog_errstr(rd));
        slc_cache_binlog_failed(rd, why, 1);
    } else if (rc == SLC_DONE) {
        slc_log(SLC_LOG_WARN, "binlog \"%s\": not heard from for over "
            "%d ms: reconnecting", rd->up->name.data, SLC_BINLOG_BEAT_MS);
        slc_cache_binlog_close(rd);
        slc_cache_binlog_set_state(rd, SLC_BINLOG_LOST);
        slc_timer_add(slc_loop, t, 1);
        return;
    } else {
        rd->retry = 0;
        /* 1 ms, not 0: a timer due now would run again in this same pass
           of the loop, which would never look at its signals */
        slc_timer_add(slc_loop, t, 1);
        return;
    }
    rd->retry = rd->retry == 0 ? SLC_BINLOG_RETRY_MIN
                               : slc_min(rd->retry * 2, SLC_BINLOG_RETRY_MAX);
    slc_timer_add(slc_loop, t, rd->retry);
}


/* --- the process ---------------------------------------------------------- */

/*
 * The entry: the heir's while its owner (the reader of the cycle before a
 * reload) still runs, else ours at once (a first start, a reader that
 * died).  Either way it reads from the position the entry holds: where
 * the last reader of this upstream stopped, or reads now.
 */
static void
slc_cache_binlog_take(slc_binlog_reader_t *rd)
{
    int32_t prev = __atomic_load_n(&rd->b->pid, __ATOMIC_ACQUIRE);

    rd->pid = (int32_t) getpid();
    rd->server_id = (uint32_t) rd->bc->server_id;
    if (prev > 0 && prev != rd->pid && kill(prev, 0) == 0) {
        __atomic_store_n(&rd->b->heir, rd->pid, __ATOMIC_RELEASE);
        rd->state = SLC_BINLOG_STARTING;
    } else {
        __atomic_store_n(&rd->b->pid, rd->pid, __ATOMIC_RELEASE);
        __atomic_store_n(&rd->b->heir, 0, __ATOMIC_RELEASE);
        rd->b->server_id = rd->server_id;
        rd->state = rd->b->state;
        if (rd->state != SLC_BINLOG_STARTING) {
            slc_cache_binlog_set_state(rd, SLC_BINLOG_LOST);
        }
    }
    if (slc_gtid_set_parse(rd->b->pos, &rd->pos) != SLC_OK) {
        rd->pos.n = 0;
    }
}

/* QUIT (a reload, a shutdown): noted for busy. */
void
slc_cache_binlog_quit(slc_role_t *role)
{
    (void) role;
    slc_binlog_rd.quit_at = slc_time_ms();
}

/*
 * After QUIT a reader goes on only while it is live and a reload's new
 * reader is catching up to take over from it (so hits do not pause), at
 * most SLC_BINLOG_READ_TIMEOUT; without an heir (a shutdown), or when it
 * serves nothing itself (it cannot connect either), it exits at once.
 */
int
slc_cache_binlog_busy(slc_role_t *role)
{
    slc_binlog_reader_t *rd = &slc_binlog_rd;
    int32_t              heir;

    (void) role;
    if (rd->b == NULL || rd->state != SLC_BINLOG_LIVE
        || !slc_cache_binlog_owner(rd))
    {
        return 0;
    }
    heir = __atomic_load_n(&rd->b->heir, __ATOMIC_ACQUIRE);
    return heir > 0 && kill(heir, 0) == 0
           && slc_time_ms() < rd->quit_at + SLC_BINLOG_READ_TIMEOUT;
}

int
slc_cache_binlog_process(slc_cycle_t *cycle, slc_role_t *role, unsigned n)
{
    slc_mysql_conf_t    *mc = role->data;
    slc_binlog_reader_t *rd = &slc_binlog_rd;
    char                 host[48] = "";
    unsigned             k = 0;

    memset(rd, 0, sizeof(*rd));
    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        slc_cache_binlog_conf_t *bc = slc_cache_binlog_conf(up);

        if (bc != NULL && bc->on && k++ == n) {
            rd->up = up;
            rd->bc = bc;
        }
    }
    if (rd->up == NULL || rd->bc->entry == NULL
        || mysql_library_init(0, NULL, NULL) != 0)
    {
        slc_log(SLC_LOG_ALERT, "binlog: cannot initialise");
        return SLC_ERROR;
    }
    rd->cycle = cycle;
    rd->b = rd->bc->entry;
    rd->catalog = slc_catalog_of(rd->up);
    gethostname(host, sizeof(host) - 1);
    snprintf(rd->host, sizeof(rd->host), "sluice:%s:%d", host,
        (int) getppid());
    slc_cache_binlog_group_init(&rd->g);
    slc_cache_binlog_take(rd);
    rd->lost_at = slc_time_ms();
    rd->timer.handler = slc_cache_binlog_step;
    rd->timer.data = rd;
    slc_timer_add(slc_loop, &rd->timer, 0);
    return SLC_OK;
}

void
slc_cache_binlog_exit(slc_cycle_t *cycle, const slc_role_t *role)
{
    (void) cycle;
    if (role == NULL || role->module != &slc_cache_module
        || slc_binlog_rd.b == NULL)
    {
        return;
    }
    slc_cache_binlog_close(&slc_binlog_rd);
    slc_cache_binlog_group_free(&slc_binlog_rd.g);
    mysql_library_end();
}
