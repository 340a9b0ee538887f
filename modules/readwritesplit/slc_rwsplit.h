#ifndef SLC_RWSPLIT_H
#define SLC_RWSPLIT_H

/*
 * readwritesplit's configuration and session context, shared by the
 * router's files: slc_rwsplit.c (backends and routing), slc_rwsplit_hist.c
 * (the session history), slc_rwsplit_ps.c (prepared statements),
 * slc_rwsplit_primary.c (without the primary).
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_sql_classify.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_conf.h"
#include "slc_mysql_filter.h"
#include "slc_mysql_gtid.h"
#include "slc_mysql_track.h"

#include <sys/tree.h>

typedef struct slc_backend_s  slc_backend_t;
typedef struct slc_module_s   slc_module_t;
typedef struct slc_session_s  slc_session_t;
typedef struct slc_rwsplit_stmt_s slc_rwsplit_stmt_t;

RB_HEAD(slc_rwsplit_stmts, slc_rwsplit_stmt_s);

#define SLC_RWSPLIT_MAX_STMTS    1024   /* max_prepared_statements default */

#define SLC_RWSPLIT_HIST_LEN     1024   /* a longer session command: not kept,
                                       the session stops using replicas */
#define SLC_RWSPLIT_KEY_LEN      72
#define SLC_RWSPLIT_MAX_REPLICAS 2      /* what a handover can carry */
#define SLC_RWSPLIT_TAG_REPLICA  1

/* causal_reads (slc_rwsplit_causal.c) */
#define SLC_RWSPLIT_CAUSAL_OFF     0
#define SLC_RWSPLIT_CAUSAL_LOCAL   1
#define SLC_RWSPLIT_CAUSAL_GLOBAL  2

/* Where last_gtid tracking stands on the session's primary backend. */
#define SLC_RWSPLIT_TRACK_NONE   0      /* not asked yet */
#define SLC_RWSPLIT_TRACK_ASKED  1      /* the SET is on its way */
#define SLC_RWSPLIT_TRACK_ON     2
#define SLC_RWSPLIT_TRACK_OFF    3      /* cannot: reads after a write go to
                                       the primary */
#define SLC_RWSPLIT_TRACK_QUERY  4      /* no session tracking: a read after a
                                       write asks SELECT @@last_gtid */

typedef struct {
    slc_gtid_set_t  mine;           /* the GTIDs of the session's writes */
    slc_gtid_set_t  seen;           /* applied on seen_us, as far as known */
    const slc_upstream_server_t *seen_us;
    slc_gtid_set_t  wait;           /* what the pending wait waits for */
    uint64_t        gtids;          /* track.gtids taken in */
    uint64_t        lost;           /* track.gtid_lost taken in */
    uint64_t        errs0;          /* track.reply.errs before the SET */
    uint64_t        wait_errs;      /* the replica's, before the wait */
    unsigned        track:3;        /* SLC_RWSPLIT_TRACK_* */
    unsigned        dirty:1;        /* TRACK_QUERY: the primary ran a
                                       command since the last ask */
    unsigned        waiting:1;      /* a MASTER_GTID_WAIT runs on the
                                       replica ahead of the read */
    unsigned        client_gtid:1;  /* the client's own list of tracked
                                       variables has last_gtid (or *):
                                       its OKs keep it */
} slc_rwsplit_causal_t;

/* master_failure_mode */
#define SLC_RWSPLIT_FAIL_INSTANTLY  0   /* the session ends with its primary */
#define SLC_RWSPLIT_FAIL_ON_WRITE   1   /* reads go on, a write gets an ERR,
                                       the primary is reopened when back */

/* Its conf, at the mysql and server levels (a server inherits it). */
typedef struct {
    long long  session_history_max;
    long long  max_replica_connections;
    int        retry_failed_reads;
    int        master_failure_mode;
    long long  max_prepared_statements;
    int        causal;              /* SLC_RWSPLIT_CAUSAL_* */
    long long  causal_timeout;      /* ms, 0: do not wait */
    long long  read_timeout;        /* replica_read_timeout, ms, 0: none */
} slc_rwsplit_conf_t;

/* A statement being prepared on replica backend b (slc_rwsplit_ps.c). */
typedef struct {
    slc_backend_t  *b;
    slc_rwsplit_stmt_t *st;             /* NULL: closed meanwhile */
    uint32_t        prev;           /* b's last statement id before it */
} slc_rwsplit_ps_wait_t;

typedef struct {
    char    key[SLC_RWSPLIT_KEY_LEN];   /* "" or what a later one replaces */
    char   *text;
} slc_rwsplit_hist_t;

/* A replica backend's answers to what the router sent it of its own. */
typedef struct {
    slc_backend_t  *b;              /* NULL: a free slot */
    unsigned        copies;         /* copies and replays unanswered */
    uint64_t        errs_seen;      /* its ERRs accounted for */
} slc_rwsplit_copies_t;

/*
 * What the session did that decides where its statements may go: one
 * structure with one owner.  slc_rwsplit_facts reads it (with
 * slc_rwsplit_state_has); only slc_rwsplit_state.c changes it, through
 * the functions below named for what happened.  Its low bits are also its
 * form in a reload's handover (SLC_RWSPLIT_SESS_SAVED).
 */
#define SLC_RWSPLIT_SESS_WROTE         0x01u   /* read-your-writes, first
                                                  step */
#define SLC_RWSPLIT_SESS_TEMP          0x02u   /* made a temporary table */
#define SLC_RWSPLIT_SESS_USERVARS      0x04u   /* assigned a user variable
                                                  on the primary alone */
#define SLC_RWSPLIT_SESS_DB_UNKNOWN    0x08u   /* the database may not be
                                                  the history's */
#define SLC_RWSPLIT_SESS_PRIMARY_ONLY  0x10u   /* no new replica: history
                                                  lost or too long */
#define SLC_RWSPLIT_SESS_SAVED         0x0fu

typedef struct {
    unsigned        flags;          /* SLC_RWSPLIT_SESS_* */
} slc_rwsplit_sess_t;

/* What a statement on the primary alone did (slc_rwsplit_state.c). */
#define SLC_RWSPLIT_FX_USERVARS  1u     /* assigned user variables */
#define SLC_RWSPLIT_FX_TEMP      2u     /* made a temporary table */
#define SLC_RWSPLIT_FX_UNKNOWN   4u     /* the session's state is not known */

typedef struct {
    const slc_rwsplit_conf_t *conf;
    slc_backend_t  *replica[SLC_RWSPLIT_MAX_REPLICAS];
    unsigned        nreplicas;
    slc_rwsplit_copies_t rep[SLC_RWSPLIT_MAX_REPLICAS];
    slc_backend_t  *last;           /* where the last statement ran */
    const slc_upstream_server_t *want;  /* a rule's route server=NAME for
                                       the statement (slc_rwsplit_ruled) */
    uint64_t        errs_seen;      /* the reopened primary's (replay) */
    slc_rwsplit_sess_t sess;        /* what decides routing */
    unsigned        restored:1;     /* the history came with a handover */
    /* a session command on its way to the primary: the history and the
       replicas get it once the primary accepted it (slc_rwsplit_state_*) */
    uint8_t        *held;           /* COM_QUERY payload */
    size_t          held_len;
    slc_sql_kind_t  held_kind;
    /* master_failure_mode fail_on_write: the primary backend was lost, a
       replica backend is the session's own meanwhile, and `primary` is
       the new primary backend being opened (tried every second) */
    unsigned        primary_lost:1;
    slc_backend_t  *primary;
    uint64_t        primary_next_try;   /* ms */
    /* a new session no server can take yet (a switchover under way):
       looked at again on this timer until own_until (ms) */
    slc_timer_t     own_wait;
    uint64_t        own_until;
    /* a read sent to a replica, kept to be sent again elsewhere if that
       replica fails before answering (retry_failed_reads) */
    uint8_t        *retry;
    size_t          retry_len;
    slc_backend_t  *retry_on;
    unsigned        retry_primary:1;    /* a prepared read: the client's
                                           id is the primary's only */
    slc_rwsplit_stmt_t *retry_st;       /* its statement (types for the
                                       primary: slc_rwsplit_ps_retry_types) */
    unsigned        nhist;
    unsigned        hist_max;
    slc_rwsplit_hist_t *hist;
    unsigned        user_gen;       /* s->user_gen the backends are for */

    /* prepared statements (slc_rwsplit_ps.c), by the client's id */
    struct slc_rwsplit_stmts stmts;
    unsigned        nstmts;
    uint32_t        ps_last;        /* the last prepared: the id -1 */
    slc_rwsplit_stmt_t *ps_pending;     /* its PREPARE_OK not seen yet */
    uint64_t        ps_mark;        /* the primary's reply.done before,
                                       and its commands on their way */
    slc_rwsplit_ps_wait_t ps_wait[SLC_RWSPLIT_MAX_REPLICAS];
    /* an EXECUTE waiting for its statement's PREPARE on a replica: its
       head, rewritten once that replica's statement id is known */
    slc_rwsplit_stmt_t *ps_xst;
    slc_backend_t  *ps_xb;
    uint8_t        *ps_xhead;
    size_t          ps_xlen, ps_xkeep;
    unsigned        ps_xmust:1;     /* it must run there (a read-only
                                       transaction); else a refusal sends
                                       it to the primary */
    slc_rwsplit_causal_t causal;
    /* a statement in flight on a replica, checked every second while it
       runs (slc_rwsplit_read.c) */
    slc_backend_t  *read_on;
    uint64_t        read_since;     /* ms */
    slc_timer_t     read_timer;
} slc_rwsplit_ctx_t;

extern slc_module_t slc_readwritesplit_module;

/* slc_rwsplit.c */
int    slc_rwsplit_replay(slc_rwsplit_ctx_t *rc, slc_backend_t *b);
/* The router's maint hook (slc_rwsplit_maint.c, slc_mysql_router.h). */
int    slc_rwsplit_maint(slc_session_t *s, int close);

/*
 * The query rules' route (slc_rwsplit_rules.c) for the statement
 * classified as *si: si itself, or a copy in *tmp with the routing hint
 * the rule gives: primary, or replica for a statement that may run on a
 * replica (a read, outside a read-write transaction), with rc->want the
 * server a route server=NAME names.  A rule that would send a write (or
 * what must run on the primary) to a replica is refused: the statement
 * routes as if no rule had matched, and the refusal is counted and
 * logged (slc_rules_refused).
 */
const slc_sql_info_t *slc_rwsplit_ruled(slc_session_t *s,
    slc_rwsplit_ctx_t *rc, const slc_sql_info_t *si, slc_sql_info_t *tmp);
slc_backend_t *slc_rwsplit_open(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    unsigned roles, const uint8_t *skip, const slc_backend_ops_t *ops);
int    slc_rwsplit_idle(const slc_backend_t *b);
void   slc_rwsplit_adopt_replica(slc_rwsplit_ctx_t *rc, slc_backend_t *b);

/* slc_rwsplit_primary.c */
/*
 * Open a new session's own backend (the router's start, and retry after
 * a server failed before the client was told anything): on the primary;
 * without one, with fail_on_write, on a replica, as a session that lost
 * its primary; with neither, wait for the monitor to see one, up to
 * connect_timeout, then ERR 1429.  slc_rwsplit_own_stop before rc goes.
 */
void   slc_rwsplit_open_own(slc_session_t *s, slc_rwsplit_ctx_t *rc);
void   slc_rwsplit_own_stop(slc_rwsplit_ctx_t *rc);
slc_backend_t *slc_rwsplit_own_lost(slc_session_t *s, const char *why);
void   slc_rwsplit_primary_check(slc_session_t *s, slc_rwsplit_ctx_t *rc);
slc_backend_t *slc_rwsplit_primary_gone(slc_session_t *s,
    slc_rwsplit_ctx_t *rc);
/* A response on the primary backend being reopened (rc->primary): its
   replay of the session's history, all accepted, or the session ends. */
void   slc_rwsplit_primary_done(slc_backend_t *b, const slc_mysql_reply_t *r);
slc_backend_t *slc_rwsplit_ps_without_primary(slc_session_t *s,
    slc_rwsplit_ctx_t *rc, const slc_cmd_t *c);

/* slc_rwsplit.c: the slot of replica backend b (NULL: not a replica) */
slc_rwsplit_copies_t *slc_rwsplit_copies(slc_rwsplit_ctx_t *rc,
    const slc_backend_t *b);

/* slc_rwsplit_state.c: the session's routing state (slc_rwsplit_sess_t) */
static inline int
slc_rwsplit_state_has(const slc_rwsplit_ctx_t *rc, unsigned flag)
{
    return (rc->sess.flags & flag) != 0;
}
/* The session wrote (read-your-writes), made a temporary table; or can
   have no new replica backend (a replica refused what the primary took,
   the history cannot be replayed). */
void   slc_rwsplit_state_wrote(slc_rwsplit_ctx_t *rc);
void   slc_rwsplit_state_temp(slc_rwsplit_ctx_t *rc);
void   slc_rwsplit_state_no_replica(slc_rwsplit_ctx_t *rc);
/* A new primary backend: the old one's temporary tables went with it. */
void   slc_rwsplit_state_new_primary(slc_rwsplit_ctx_t *rc);
/* A new user, or COM_RESET_CONNECTION (reset: the database stays, so
   whether it is the history's stays unknown if it was). */
void   slc_rwsplit_state_forget(slc_rwsplit_ctx_t *rc, int reset);
/* A reload's handover: the bits that go along, and taken back; a session
   whose history did not come along is of unknown state (reads on the
   primary, counted as having written). */
unsigned slc_rwsplit_state_saved(const slc_rwsplit_ctx_t *rc);
void   slc_rwsplit_state_restored(slc_rwsplit_ctx_t *rc, unsigned bits);
void   slc_rwsplit_state_unknown(slc_rwsplit_ctx_t *rc);

/* slc_rwsplit_state.c: what statement q[0..n), classified as si, does
   to the session's state when it runs on the primary alone (a mask of
   SLC_RWSPLIT_FX_*; rc NULL: an EXECUTE's is unknown) */
unsigned slc_rwsplit_state_effect(const slc_rwsplit_ctx_t *rc,
    const uint8_t *q,
    size_t n, const slc_sql_info_t *si, unsigned status);
/* The session takes it in: SLC_RWSPLIT_FX_UNKNOWN drops the replica
   backends, and the session reads from the primary from then on. */
void   slc_rwsplit_state_apply(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    unsigned fx);
/* Past one assignment's value from q[i]: the next ',' at depth 0
   (quotes and parentheses skipped), or n. */
size_t slc_rwsplit_value_end(const uint8_t *q, size_t n, size_t i);
/* Session command q[0..n) goes to the primary: held until it answers. */
void   slc_rwsplit_state_hold(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const uint8_t *q, size_t n, slc_sql_kind_t kind);
/* The primary answered the client's command: a held session command it
   accepted goes into the history and to the replicas; one it refused
   is forgotten. */
void   slc_rwsplit_state_settle(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const slc_mysql_reply_t *r);
void   slc_rwsplit_state_drop(slc_rwsplit_ctx_t *rc);

/* slc_rwsplit_read.c: a command of the client's goes to replica backend
   b (it is watched while it runs); the session closes (stop) */
void   slc_rwsplit_read_sent(slc_rwsplit_ctx_t *rc, slc_backend_t *b);
void   slc_rwsplit_read_stop(slc_rwsplit_ctx_t *rc);

/* slc_rwsplit_hist.c */
void   slc_rwsplit_hist_key(const uint8_t *q, size_t n, slc_sql_kind_t kind,
    char key[SLC_RWSPLIT_KEY_LEN], int *drop);
const char *slc_rwsplit_hist_add(slc_rwsplit_ctx_t *rc, const uint8_t *q,
    size_t n, slc_sql_kind_t kind);
void   slc_rwsplit_hist_clear(slc_rwsplit_ctx_t *rc);
/* COM_RESET_CONNECTION: all but the USE (the server keeps the database) */
void   slc_rwsplit_hist_reset(slc_rwsplit_ctx_t *rc);
/* The PREPARE the history keeps for the statement named at q[0..n) (the
   rest of an EXECUTE after its keyword), NULL if none. */
const char *slc_rwsplit_hist_prepared(const slc_rwsplit_ctx_t *rc,
    const uint8_t *q,
    size_t n);
size_t slc_rwsplit_hist_save(const slc_rwsplit_ctx_t *rc, uint8_t *buf,
    size_t cap);
int    slc_rwsplit_hist_restore(slc_rwsplit_ctx_t *rc, const uint8_t *p,
    size_t len);

/* slc_rwsplit.c: where a COM_QUERY (or the text of a prepared statement)
   runs, with the side effects of routing it (a write marks the session) */
slc_backend_t *slc_rwsplit_query(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const slc_cmd_t *c);
/* slc_rwsplit.c: replica backend b leaves the session (closed) */
void slc_rwsplit_drop_replica(slc_rwsplit_ctx_t *rc, slc_backend_t *b);

/* slc_rwsplit_ps.c: COM_STMT_* (docs/architecture.md, "Prepared
   statements") */
slc_backend_t *slc_rwsplit_ps_command(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const slc_cmd_t *c);
/* before every command: the PREPARE_OK the last command got */
void slc_rwsplit_ps_settle(slc_session_t *s, slc_rwsplit_ctx_t *rc);
/* a replica backend answered (the router's done) */
void slc_rwsplit_ps_replica_done(slc_backend_t *b, const slc_mysql_reply_t *r);
/* replica backend b goes: what was prepared there is gone */
void slc_rwsplit_ps_replica_gone(slc_rwsplit_ctx_t *rc, slc_backend_t *b);
/* COM_RESET_CONNECTION, COM_CHANGE_USER, close: every statement goes */
void slc_rwsplit_ps_forget(slc_rwsplit_ctx_t *rc);
void   slc_rwsplit_ps_retry_types(slc_rwsplit_ctx_t *rc);
/* The statements' part of a handover (slc_rwsplit_ps.c). */
size_t slc_rwsplit_ps_save(slc_rwsplit_ctx_t *rc, uint8_t *buf, size_t cap);
int    slc_rwsplit_ps_restore(slc_rwsplit_ctx_t *rc, const uint8_t *p,
    size_t len);
/* slc_rwsplit_causal.c */
extern const slc_conf_enum_t  slc_rwsplit_causal_modes[];
/* The causal_reads values of a server's conf, from mysql {} or the
   defaults. */
void  slc_rwsplit_causal_merge(slc_rwsplit_conf_t *c,
    const slc_rwsplit_conf_t *prev);
/* The zone of causal_reads global, when a server block uses it. */
int   slc_rwsplit_causal_init_conf(slc_cycle_t *cycle, char *err,
    size_t errlen);
/* Before each command: last_gtid tracking asked of the primary. */
void  slc_rwsplit_causal_command(slc_session_t *s, slc_rwsplit_ctx_t *rc);
/* Keep the read going to replica b, to send it elsewhere if b fails
   before answering it (retry_failed_reads): to the primary alone when
   `primary_only`. */
void  slc_rwsplit_keep(slc_rwsplit_ctx_t *rc, slc_backend_t *b,
    const slc_cmd_t *c,
    int primary_only);
/* A statement (si; NULL: one not classified) runs on the primary: if it
   may write, the session's reads must see it (sets rc->wrote too). */
void  slc_rwsplit_causal_primary(slc_rwsplit_ctx_t *rc,
    const slc_sql_info_t *si);
/* A response of the primary's has ended, the client does not have it
   yet: causal_reads global publishes the GTID it reported. */
void  slc_rwsplit_causal_publish(slc_session_t *s, slc_rwsplit_ctx_t *rc);
/* A response of the primary's is complete: the GTID it reported. */
void  slc_rwsplit_causal_taken(slc_session_t *s, slc_rwsplit_ctx_t *rc);
/* A read may go to `replica`: it, or the primary if the replica has not
   applied what the session must see (or `replica` with a wait ahead). */
slc_backend_t *slc_rwsplit_causal_read(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    slc_backend_t *replica);
/* Whether `replica` is known to have applied it: no round trip, no wait
   (a read retried elsewhere). */
int   slc_rwsplit_causal_fresh(slc_rwsplit_ctx_t *rc,
    const slc_backend_t *replica);
/* The replica answered what it was sent besides the client's commands
   (from the router's done, before its own checks). */
void  slc_rwsplit_causal_done(slc_backend_t *b, const slc_mysql_reply_t *r);
/* A session command (SET...) that goes to every backend. */
void  slc_rwsplit_causal_set(slc_rwsplit_ctx_t *rc, const uint8_t *q,
    size_t n);
/* COM_QUERY q[0..n) goes to the primary: if it names session_track_
   system_variables, the primary's list is the client's for it (the
   proxy's last_gtid out), and tracking is asked again after it. */
void  slc_rwsplit_causal_unhide(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const uint8_t *q, size_t n, const slc_sql_info_t *si);
/* A new user or a reset: the session variables are the server's again. */
void  slc_rwsplit_causal_forget(slc_rwsplit_ctx_t *rc);

#endif /* SLC_RWSPLIT_H */
