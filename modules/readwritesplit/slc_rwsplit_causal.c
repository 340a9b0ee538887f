/*
 * readwritesplit: causal reads, read your own writes (issue 9;
 * docs/architecture.md, "Causal reads").
 *
 * The session's primary backend reports the GTID of each write in its OK
 * packets: the router asks for it once, at the first command, with
 *     SET @@session.session_track_system_variables = <the session's list
 *         plus last_gtid>
 * and the tracker reads last_gtid from the OKs' session state
 * (slc_mysql_track_want_gtid).  Before each command the router takes in
 * the GTIDs that came since the last one.  A read may go to the replica
 * when the replica has applied them (causal_reads local) or the newest
 * of every session of this proxy (global, kept in the zone
 * "rwsplit_causal"): known from the monitor's gtid_current_pos, or from
 * an earlier check on this server (positions only grow), without any
 * round trip.  Else, with causal_reads_timeout, the router sends the
 * replica a MASTER_GTID_WAIT ahead of the read, and the read goes to the
 * primary if the wait times out; without it, the read goes to the
 * primary.
 *
 * Tracking needs CLIENT_SESSION_TRACK on the backend, which has it only
 * when the client negotiated it (a backend's caps are the client's and
 * the server's), since the OKs go to the client as they are.  Without it
 * (PyMySQL, older drivers) the router asks: the first read that follows
 * a command on the primary runs on the primary, with
 *     SELECT CAST(@@last_gtid AS BINARY)
 * sent ahead of it (pipelined: no round trip of its own), whose row the
 * tracker reads (slc_mysql_track_want_row_gtid); the reads after it go to
 * a replica that has that GTID.  @@last_gtid is the session's own last
 * GTID, so this is as exact as tracking, and narrower than the server's
 * @@gtid_binlog_pos, which would wait for every other session's writes
 * too.  The query resets the primary's warnings, as the read that follows
 * it on the same connection does anyway; SHOW WARNINGS and the like never
 * trigger it (they go where the last statement went).  A session handed
 * over by a reload asks once too: its GTIDs stayed with the old worker.
 * MySQL has neither last_gtid nor @@last_gtid (its session_track_gtids
 * reports a set in another form): against a MySQL primary (its greeting
 * says so) the GTIDs are not known, as below.
 * When the SET failed, the client set the list itself (which drops
 * last_gtid) or an answer could not be read, the GTIDs are not known: a
 * session that wrote reads from the primary from then on, as before
 * causal reads.
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_log.h"
#include "slc_mysql_traffic.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_session.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_filter.h"
#include "slc_mysql_monitor.h"
#include "slc_mysql_upstream.h"
#include "slc_rwsplit.h"
#include "slc_shm.h"

#define SLC_RWSPLIT_TRACK_VARS  "session_track_system_variables"

const slc_conf_enum_t slc_rwsplit_causal_modes[] = {
    { "off", SLC_RWSPLIT_CAUSAL_OFF },
    { "local", SLC_RWSPLIT_CAUSAL_LOCAL },
    { "global", SLC_RWSPLIT_CAUSAL_GLOBAL },
    { NULL, 0 }
};


/* --- conf ---------------------------------------------------------------- */

/* A server takes them from mysql {}, else local and no wait: global
   costs the replica its reads, or a wait before most of them, wherever
   writes flow (docs/benchmarks.md, "causal_reads: what global costs"). */
void
slc_rwsplit_causal_merge(slc_rwsplit_conf_t *c, const slc_rwsplit_conf_t *prev)
{
    slc_conf_merge_value(c->causal,
        prev != NULL ? prev->causal : SLC_CONF_UNSET,
            SLC_RWSPLIT_CAUSAL_LOCAL);
    slc_conf_merge_value(c->causal_timeout,
        prev != NULL ? prev->causal_timeout : SLC_CONF_UNSET, 0);
}



/* --- the zone of causal_reads global ------------------------------------- */

/*
 * The newest GTID per domain that any session of this proxy wrote, for
 * every worker.  Lock free: a slot is claimed for a domain by CAS on its
 * key (domain + 1; 0 is free) and its seq only grows (CAS to the max).
 * The server id only names the GTID in a MASTER_GTID_WAIT, which
 * compares seqs; a racy one is harmless.  A domain that finds no free
 * slot marks the zone `lost`: global reads then go to the primary.
 */
#define SLC_RWSPLIT_ZONE_SLOTS  64

typedef struct {
    uint64_t    key;
    uint64_t    seq;
    uint32_t    server;
    uint32_t    pad;
} slc_rwsplit_slot_t;

typedef struct {
    uint64_t        lost;
    slc_rwsplit_slot_t  slot[SLC_RWSPLIT_ZONE_SLOTS];
} slc_rwsplit_zone_t;

/* Set by the zone's attach in the master, inherited by the workers. */
static slc_rwsplit_zone_t  *slc_rwsplit_zone;

static int
slc_rwsplit_zone_attach(slc_shm_zone_t *z, slc_cycle_t *cycle, char *err,
    size_t errlen)
{
    (void) cycle;
    (void) err;
    (void) errlen;
    slc_rwsplit_zone = z->addr;
    return SLC_OK;
}

/* The zone, declared when a server {} of the router has causal_reads
   global; a reload keeps it (same name, owner and size). */
int
slc_rwsplit_causal_init_conf(slc_cycle_t *cycle, char *err, size_t errlen)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);
    slc_shm_zone_t   *z;
    int               any = 0;

    /* slc_rwsplit_zone is left as it is: a config that fails later must not
       take it from the running one's workers (respawned ones too); it
       is only read where a server has causal_reads global, whose cycle
       attached it */
    for (slc_mysql_srv_t *srv = mc != NULL ? mc->servers : NULL;
         srv != NULL; srv = srv->next)
    {
        const slc_rwsplit_conf_t *c;

        if (srv->router != &slc_readwritesplit_module) {
            continue;
        }
        c = slc_module_conf(srv->mod_conf, &slc_readwritesplit_module);
        any |= c->causal == SLC_RWSPLIT_CAUSAL_GLOBAL;
    }
    if (!any) {
        return SLC_OK;
    }
    z = slc_shm_zone_add(cycle, "rwsplit_causal", sizeof(slc_rwsplit_zone_t),
        &slc_readwritesplit_module, err, errlen);
    if (z == NULL) {
        return SLC_ERROR;
    }
    z->attach = slc_rwsplit_zone_attach;
    return SLC_OK;
}

static void
slc_rwsplit_zone_add(const slc_gtid_t *g)
{
    slc_rwsplit_zone_t *z = slc_rwsplit_zone;
    uint64_t        key = (uint64_t) g->domain + 1;

    if (z == NULL) {
        return;
    }
    for (unsigned i = 0; i < SLC_RWSPLIT_ZONE_SLOTS; i++) {
        slc_rwsplit_slot_t *sl = &z->slot[i];
        uint64_t        k = __atomic_load_n(&sl->key, __ATOMIC_ACQUIRE);
        uint64_t        seq;

        if (k == 0) {
            uint64_t zero = 0;
            if (!__atomic_compare_exchange_n(&sl->key, &zero, key, 0,
                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            {
                k = zero;               /* another took it: for whom? */
            } else {
                k = key;
            }
        }
        if (k != key) {
            continue;
        }
        seq = __atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE);
        while (seq < g->seq) {
            if (__atomic_compare_exchange_n(&sl->seq, &seq, g->seq, 0,
                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            {
                __atomic_store_n(&sl->server, g->server, __ATOMIC_RELAXED);
                break;
            }
        }
        return;
    }
    __atomic_store_n(&z->lost, 1, __ATOMIC_RELEASE);
}

/* The zone's GTIDs into `set`. */
static void
slc_rwsplit_zone_get(slc_gtid_set_t *set)
{
    slc_rwsplit_zone_t *z = slc_rwsplit_zone;

    if (z == NULL) {
        set->lost++;                    /* no zone: nothing can be known */
        return;
    }
    if (__atomic_load_n(&z->lost, __ATOMIC_ACQUIRE)) {
        set->lost++;
    }
    for (unsigned i = 0; i < SLC_RWSPLIT_ZONE_SLOTS; i++) {
        slc_rwsplit_slot_t *sl = &z->slot[i];
        uint64_t        k = __atomic_load_n(&sl->key, __ATOMIC_ACQUIRE);
        slc_gtid_t      g;

        if (k == 0) {
            break;                      /* slots are claimed in order */
        }
        g.domain = (uint32_t) (k - 1);
        g.seq = __atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE);
        g.server = __atomic_load_n(&sl->server, __ATOMIC_RELAXED);
        if (g.seq > 0) {
            slc_gtid_set_add(set, &g);
        }
    }
}


/* --- tracking last_gtid on the primary ----------------------------------- */

static void
slc_rwsplit_causal_ask(slc_session_t *s, slc_rwsplit_causal_t *cc)
{
    static const char q[] = "\x03" "SET @@session." SLC_RWSPLIT_TRACK_VARS
        " = IF(FIND_IN_SET('last_gtid', @@session." SLC_RWSPLIT_TRACK_VARS
        "), @@session." SLC_RWSPLIT_TRACK_VARS ", CONCAT_WS(',', NULLIF("
        "@@session." SLC_RWSPLIT_TRACK_VARS ", ''), 'last_gtid'))";
    slc_backend_t *b = s->backend;

    cc->track = SLC_RWSPLIT_TRACK_OFF;
    if (b->mysql || !slc_mysql_track_idle(&b->track)
        || slc_mysql_track_want_gtid(&b->track) != SLC_OK)
    {
        return;
    }
    cc->errs0 = b->track.reply.errs;
    cc->gtids = slc_mysql_track_gtids(&b->track);
    cc->lost = slc_mysql_track_gtid_lost(&b->track);
    if (!(b->caps & SLC_CLIENT_SESSION_TRACK)) {
        cc->track = SLC_RWSPLIT_TRACK_QUERY;
    } else if (slc_cmd_inject(b, (const uint8_t *) q, sizeof(q) - 1)
               == SLC_OK)
    {
        cc->track = SLC_RWSPLIT_TRACK_ASKED;
        slc_mysql_track_hide_gtid(&b->track, !cc->client_gtid);
    }
}

/* The session's last GTID, asked of the primary ahead of a read there;
   only on an idle primary, whose next answer is then this one. */
static void
slc_rwsplit_causal_query(slc_session_t *s, slc_rwsplit_causal_t *cc)
{
    static const char q[] = "\x03" "SELECT CAST(@@last_gtid AS BINARY)";
    slc_backend_t *b = s->backend;

    if (b->state != SLC_BS_READY || !slc_mysql_track_idle(&b->track)
        || b->track.g == NULL)
    {
        return;
    }
    slc_mysql_track_want_row_gtid(&b->track);
    if (slc_cmd_inject(b, (const uint8_t *) q, sizeof(q) - 1) != SLC_OK) {
        b->track.g->row_want = 0;
        return;
    }
    cc->dirty = 0;
}

/* The GTIDs the primary reported since the last command. */
static void
slc_rwsplit_causal_take(slc_rwsplit_causal_t *cc, const slc_mysql_track_t *t,
    int global)
{
    uint64_t gtids = slc_mysql_track_gtids(t);
    uint64_t lost = slc_mysql_track_gtid_lost(t);

    if (lost != cc->lost) {
        cc->lost = lost;
        cc->track = SLC_RWSPLIT_TRACK_OFF;  /* a GTID may have gone by */
    }
    if (gtids != cc->gtids) {
        cc->gtids = gtids;
        if (gtids == 0) {
            return;                     /* a tracker initialised again */
        }
        slc_gtid_set_add(&cc->mine, &t->g->gtid);
        if (global) {
            slc_rwsplit_zone_add(&t->g->gtid);
        }
    }
}

void
slc_rwsplit_causal_command(slc_session_t *s, slc_rwsplit_ctx_t *rc)
{
    rc->causal.waiting = 0;             /* a replica that died waiting */
    if (rc->causal.track != SLC_RWSPLIT_TRACK_NONE || s->backend == NULL
        || rc->conf->causal == SLC_RWSPLIT_CAUSAL_OFF)
    {
        return;
    }
    slc_rwsplit_causal_ask(s, &rc->causal);
    /* writes whose GTIDs this worker did not see: a session handed over
       by a reload; its primary connection knows its last one */
    rc->causal.dirty = slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_WROTE);
}

/*
 * Whether a statement for the primary may write: a write the classifier
 * sees, and whatever it cannot see through (a CALL, an EXECUTE, DO, a
 * statement it cannot place, several at once).  A read inside a
 * transaction, BEGIN or COMMIT does not: the reads after such a
 * transaction stay on the replica.
 */
static int
slc_rwsplit_may_write(const slc_sql_info_t *si)
{
    switch (si->kind) {
    case SLC_SQL_SELECT:
    case SLC_SQL_SHOW:
    case SLC_SQL_EXPLAIN:
    case SLC_SQL_EMPTY:
    case SLC_SQL_SET:
    case SLC_SQL_USE:
    case SLC_SQL_BEGIN:
    case SLC_SQL_COMMIT:
    case SLC_SQL_ROLLBACK:
    case SLC_SQL_SAVEPOINT:
    case SLC_SQL_PREPARE:
    case SLC_SQL_DEALLOCATE:
    case SLC_SQL_HANDLER:
        /* a stored function may write */
        return (si->flags & (SLC_SQL_F_WRITE | SLC_SQL_F_MULTI
                             | SLC_SQL_F_STORED_FUNC)) != 0;
    default:
        return 1;
    }
}

void
slc_rwsplit_causal_primary(slc_rwsplit_ctx_t *rc, const slc_sql_info_t *si)
{
    if (si != NULL && !slc_rwsplit_may_write(si)) {
        return;
    }
    slc_rwsplit_state_wrote(rc);
    if (rc->causal.track == SLC_RWSPLIT_TRACK_QUERY) {
        rc->causal.dirty = 1;
    }
}

/*
 * causal_reads global: the GTID of a write goes into the zone as soon as
 * the tracker has read it, before the client is sent the OK (the
 * router's `ended` hook).  The client may read on another connection the
 * moment it has its OK, and another worker may serve that read while
 * this one has not yet run `done` (preempted, or busy with the other
 * sessions the same events woke): published only there, the GTID came
 * too late for 16 reads in 10 500 of contrib/bench's web mix with 2
 * workers (t/rwsplit_causal_workers.t holds a worker there).  Any GTID
 * the tracker read is a write's, whatever the tracking state: `taken`
 * adds it again, harmless, since the zone's seqs only grow.
 */
void
slc_rwsplit_causal_publish(slc_session_t *s, slc_rwsplit_ctx_t *rc)
{
    const slc_mysql_track_t *t = &s->backend->track;
    uint64_t                 gtids = slc_mysql_track_gtids(t);

    if (gtids != 0 && gtids != rc->causal.gtids
        && rc->conf->causal == SLC_RWSPLIT_CAUSAL_GLOBAL)
    {
        slc_rwsplit_zone_add(&t->g->gtid);
    }
}

/*
 * Taken in as the response completes, not at the next command: the
 * session's next read needs it.
 */
void
slc_rwsplit_causal_taken(slc_session_t *s, slc_rwsplit_ctx_t *rc)
{
    const slc_rwsplit_conf_t *conf = rc->conf;
    slc_rwsplit_causal_t     *cc = &rc->causal;
    slc_backend_t        *b = s->backend;

    if (cc->track == SLC_RWSPLIT_TRACK_ASKED) {
        /* the SET and the command after it have been answered: any ERR
           may be the SET's, and then nothing is tracked */
        cc->track = b->track.reply.errs == cc->errs0 ? SLC_RWSPLIT_TRACK_ON
                                                     : SLC_RWSPLIT_TRACK_OFF;
    }
    if (cc->track == SLC_RWSPLIT_TRACK_ON
        || cc->track == SLC_RWSPLIT_TRACK_QUERY) {
        slc_rwsplit_causal_take(cc, &b->track,
            conf->causal == SLC_RWSPLIT_CAUSAL_GLOBAL);
    }
}

/* Whether q[0..n) names word w (lowercase), in any case. */
static int
slc_rwsplit_causal_names(const uint8_t *q, size_t n, const char *w)
{
    size_t k = strlen(w);

    for (size_t i = 0; i + k <= n; i++) {
        if ((q[i] | 0x20) == w[0]
            && strncasecmp((const char *) q + i, w, k) == 0)
        {
            return 1;
        }
    }
    return 0;
}

/*
 * The client sets the list itself, which takes last_gtid out on the
 * primary: asked again at the next command (it is put back unless the
 * client's list has it).  A list that names last_gtid or * is the
 * client's wish to see it: its OKs keep it.
 */
void
slc_rwsplit_causal_set(slc_rwsplit_ctx_t *rc, const uint8_t *q, size_t n)
{
    if (!slc_rwsplit_causal_names(q, n, SLC_RWSPLIT_TRACK_VARS)) {
        return;
    }
    rc->causal.client_gtid = slc_rwsplit_causal_names(q, n, "last_gtid")
                             || memchr(q, '*', n) != NULL;
    if (rc->causal.track != SLC_RWSPLIT_TRACK_NONE
        && rc->causal.track != SLC_RWSPLIT_TRACK_QUERY)
    {
        rc->causal.track = SLC_RWSPLIT_TRACK_NONE;
    }
}

/* Whether statement q, classified as si, can read the list of tracked
   variables: a SHOW, an @@ read, a table of information_schema or
   performance_schema (a read of a user table does not: no scan). */
static int
slc_rwsplit_causal_reads_vars(const uint8_t *q, const slc_sql_info_t *si)
{
    if (si->kind == SLC_SQL_SHOW || (si->flags & SLC_SQL_F_SYSVAR_READ)) {
        return 1;
    }
    for (unsigned i = 0; i < si->ntables; i++) {
        const slc_sql_name_t *t = &si->tables[i];

        if (t->db_len == 18
            && (strncasecmp((const char *) q + t->db_off,
                            "information_schema", 18) == 0
                || strncasecmp((const char *) q + t->db_off,
                               "performance_schema", 18) == 0))
        {
            return 1;
        }
    }
    return 0;
}

void
slc_rwsplit_causal_unhide(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const uint8_t *q, size_t n, const slc_sql_info_t *si)
{
    static const char set[] = "\x03" "SET @@session." SLC_RWSPLIT_TRACK_VARS
        " = TRIM(BOTH ',' FROM REPLACE(CONCAT(',', @@session."
        SLC_RWSPLIT_TRACK_VARS ", ','), ',last_gtid,', ','))";
    slc_rwsplit_causal_t *cc = &rc->causal;

    /* a write's GTID must be tracked: the list stays for it */
    if ((cc->track != SLC_RWSPLIT_TRACK_ON
        && cc->track != SLC_RWSPLIT_TRACK_ASKED)
        || cc->client_gtid || slc_rwsplit_may_write(si)
        || !slc_rwsplit_causal_reads_vars(q, si)
        || !slc_rwsplit_causal_names(q, n, SLC_RWSPLIT_TRACK_VARS))
    {
        return;
    }
    if (slc_cmd_inject(s->backend, (const uint8_t *) set, sizeof(set) - 1)
        == SLC_OK)
    {
        cc->track = SLC_RWSPLIT_TRACK_NONE;     /* back before the next */
    }
}

void
slc_rwsplit_causal_forget(slc_rwsplit_ctx_t *rc)
{
    rc->causal.track = SLC_RWSPLIT_TRACK_NONE;  /* asked again: a new user's
                                               variables are the server's */
    rc->causal.client_gtid = 0;
    rc->causal.waiting = 0;
    rc->causal.dirty = 0;
}


/* --- reads --------------------------------------------------------------- */

/* The monitor's position of the replica has applied `need`. */
static int
slc_rwsplit_causal_monitor(const slc_upstream_server_t *us,
    const slc_gtid_set_t *need)
{
    slc_monitor_entry_t e;

    if (us->monitor == NULL || slc_monitor_read(us->monitor, &e, 1) != SLC_OK
        || e.st.checked_at == 0 || !(e.st.flags & SLC_MONITOR_UP))
    {
        return 0;
    }
    return slc_gtid_pos_has_set(e.gtid, need);
}

static void
slc_rwsplit_causal_seen(slc_rwsplit_causal_t *cc,
    const slc_upstream_server_t *us,
    const slc_gtid_set_t *set)
{
    if (cc->seen_us != us) {
        memset(&cc->seen, 0, sizeof(cc->seen));
        cc->seen_us = us;
    }
    for (unsigned i = 0; i < set->n; i++) {
        slc_gtid_set_add(&cc->seen, &set->g[i]);
    }
}

/*
 * Ahead of the read, on the replica: a statement that fails when the wait
 * does (-1: timed out, NULL: an error), since the router hears of a
 * command of its own only whether it failed (slc_mysql_reply_t.errs).
 * On success it sets a variable to the value it has.
 */
static int
slc_rwsplit_causal_wait(slc_backend_t *b, const slc_gtid_set_t *need,
    long long ms)
{
    char pos[SLC_GTID_TEXT];
    char q[SLC_GTID_TEXT + 200];
    int  n;

    if (slc_gtid_set_format(need, pos, sizeof(pos)) < 0) {
        return SLC_ERROR;
    }
    n = snprintf(q, sizeof(q), "%cSET @@session.sql_auto_is_null = "
        "IF(MASTER_GTID_WAIT('%s', %lld.%03lld) = 0, "
        "@@session.sql_auto_is_null, 'causal read wait timed out')",
        SLC_COM_QUERY, pos, ms / 1000, ms % 1000);
    if (n < 0 || (size_t) n >= sizeof(q)) {
        return SLC_ERROR;
    }
    return slc_cmd_inject(b, (const uint8_t *) q, (size_t) n);
}

/*
 * Whether `replica` is known to have applied what a read must see, with
 * no round trip: 1 yes, 0 no (`need` then says what is missing), -1 it
 * cannot be known (the session's GTIDs are not).
 */
static int
slc_rwsplit_causal_check(slc_rwsplit_ctx_t *rc,
    const slc_backend_t *replica, slc_gtid_set_t *need)
{
    const slc_rwsplit_conf_t *conf = rc->conf;
    slc_rwsplit_causal_t     *cc = &rc->causal;

    if (conf->causal == SLC_RWSPLIT_CAUSAL_OFF) {
        return 1;
    }
    if (cc->dirty
        || (cc->track != SLC_RWSPLIT_TRACK_ON
            && cc->track != SLC_RWSPLIT_TRACK_QUERY
            && slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_WROTE)))
    {
        return -1;
    }
    *need = cc->mine;
    if (conf->causal == SLC_RWSPLIT_CAUSAL_GLOBAL) {
        slc_rwsplit_zone_get(need);
    }
    if (need->lost) {
        return -1;
    }
    if (need->n == 0
        || (cc->seen_us == replica->server
            && slc_gtid_set_covers(&cc->seen, need)))
    {
        return 1;                       /* the hot path: no look-up */
    }
    if (slc_rwsplit_causal_monitor(replica->server, need)) {
        slc_rwsplit_causal_seen(cc, replica->server, need);
        return 1;
    }
    return 0;
}

int
slc_rwsplit_causal_fresh(slc_rwsplit_ctx_t *rc, const slc_backend_t *replica)
{
    slc_gtid_set_t need;

    return slc_rwsplit_causal_check(rc, replica, &need) == 1;
}

/* A read after a write went where its outcome says (the metrics). */
static void
slc_rwsplit_causal_count(slc_session_t *s, unsigned outcome)
{
    if (s->traffic != NULL) {
        slc_traffic_add(&s->traffic->causal[outcome], 1);
    }
}

slc_backend_t *
slc_rwsplit_causal_read(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    slc_backend_t *replica)
{
    const slc_rwsplit_conf_t *conf = rc->conf;
    slc_rwsplit_causal_t     *cc = &rc->causal;
    slc_gtid_set_t        need;
    int                   rc_check = slc_rwsplit_causal_check(rc, replica,
                                                          &need);

    if (rc_check > 0) {
        return replica;
    }
    if (rc_check < 0) {
        if (cc->dirty && (cc->track == SLC_RWSPLIT_TRACK_QUERY
                          || cc->track == SLC_RWSPLIT_TRACK_ON))
        {
            slc_rwsplit_causal_query(s, cc);
        }
        slc_rwsplit_causal_count(s, SLC_CAUSAL_PRIMARY);
        return s->backend;
    }
    if (conf->causal_timeout > 0 && replica->state == SLC_BS_READY
        && slc_rwsplit_copies(rc, replica) != NULL
        && slc_rwsplit_copies(rc, replica)->copies == 0
        && slc_mysql_track_idle(&replica->track)
        && slc_rwsplit_causal_wait(replica, &need, conf->causal_timeout)
           == SLC_OK)
    {
        cc->waiting = 1;
        cc->wait = need;
        cc->wait_errs = replica->track.reply.errs;  /* idle: the wait's
                                                       ERR is the next */
        return replica;                 /* the read waits for the wait */
    }
    slc_rwsplit_causal_count(s, SLC_CAUSAL_PRIMARY);
    return s->backend;
}

/*
 * The wait is over (no copy was in flight with it: see causal_read).  An
 * ERR: the replica has not applied it in time, and the read, not yet
 * sent, goes to the primary.
 */
void
slc_rwsplit_causal_done(slc_backend_t *b, const slc_mysql_reply_t *r)
{
    slc_session_t    *s = b->session;
    slc_rwsplit_ctx_t    *rc = s->router_data;
    slc_rwsplit_causal_t *cc = &rc->causal;

    if (!cc->waiting) {
        return;
    }
    cc->waiting = 0;
    if (r->errs == cc->wait_errs) {
        slc_rwsplit_causal_count(s, SLC_CAUSAL_WAITED);
        slc_rwsplit_causal_seen(cc, b->server, &cc->wait);
        return;
    }
    slc_rwsplit_causal_count(s, SLC_CAUSAL_TIMEOUT);
    if (slc_rwsplit_copies(rc, b) != NULL) {
        slc_rwsplit_copies(rc, b)->errs_seen = r->errs;  /* the wait's, not a
                                                     copy's */
    }
    slc_session_log(s, SLC_LOG_INFO, "readwritesplit: replica %s has not "
        "applied the session's writes in time, the read goes to the "
        "primary", b->server->name);
    if (slc_cmd_retarget(s, b, s->backend) == SLC_OK) {
        rc->last = s->backend;
    }
}
