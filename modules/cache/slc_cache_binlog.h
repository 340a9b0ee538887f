#ifndef SLC_CACHE_BINLOG_H
#define SLC_CACHE_BINLOG_H

/*
 * The primary's binary log as the cache's second source of invalidations
 * (docs/architecture.md, "The query cache", *Two sources of
 * invalidation*; docs/directives.md, `binlog`).
 *
 * An upstream with `binlog on;` gets a process of the role `binlog`
 * (beside the monitor, never in a worker) that reads the binlog of the
 * primary the monitor sees, as a replica would, through Connector/C's
 * replication API, from the GTID position it last applied (the current
 * one the first time).  Each committed event group moves the generations
 * of the tables it wrote, in every cache zone, with the time it was seen
 * (slc_cache_zones_invalidate), so a write by anyone (another client, the
 * event scheduler, a trigger, a DBA) is forgotten within milliseconds of
 * its commit.  The proxy's own writes keep invalidating before their OK
 * reaches the client; the binlog adds everyone else's.
 *
 * Files: slc_cache_binlog.c (directives, the zone, the role, `-s stats`),
 * slc_cache_binlog_group.c (what an event group wrote: pure, unit tested),
 * slc_cache_binlog_read.c (the process).
 *
 * The zone `cache_binlog` holds one entry per upstream that reads, kept
 * by name across a reload (so a new process resumes where the old one
 * stopped).  Only the reader writes its entry; workers read `state` and
 * `beat` on each lookup of a server whose upstream reads with
 * `binlog_lost bypass` (slc_cache_binlog_serves): no hit while the
 * reader is not live, since a write it has not seen may have made any
 * entry stale.
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_mysql_gtid.h"
#include "slc_mysql_monitor.h"

#define SLC_BINLOG_MAX          64      /* upstreams that read */
#define SLC_BINLOG_HEARTBEAT_MS 250     /* asked of the primary when idle */
#define SLC_BINLOG_BEAT_MS      1000    /* a live reader is heard from
                                           within this: else lost */
#define SLC_BINLOG_READ_TIMEOUT 30000   /* ms: the primary may scan a
                                           large binlog file for the
                                           position before it sends */
#define SLC_BINLOG_GROUP_TABLES 256     /* tables a group names; more: all */
#define SLC_BINLOG_XA_MAX       32      /* prepared XA remembered */

/* The reader's state, as workers see it. */
#define SLC_BINLOG_STARTING     0   /* never connected yet */
#define SLC_BINLOG_CATCHING_UP  1   /* reading what it missed */
#define SLC_BINLOG_LIVE         2   /* at the primary's end: hits served */
#define SLC_BINLOG_LOST         3   /* disconnected, retrying */

/* Why everything was invalidated at once (counters). */
#define SLC_BINLOG_ALL_STATEMENT  0 /* a statement it cannot place */
#define SLC_BINLOG_ALL_POSITION   1 /* the position could not be resumed */
#define SLC_BINLOG_ALL_EVENT      2 /* an event it cannot read (skipped),
                                       an incident */
#define SLC_BINLOG_ALL_XA         3 /* XA COMMIT of an unknown prepare */
#define SLC_BINLOG_ALL_TABLES     4 /* a group wrote more tables than fit */
#define SLC_BINLOG_ALL_N          5

typedef struct {
    uint64_t    events;
    uint64_t    groups;         /* committed groups applied */
    uint64_t    tables;         /* table generations moved */
    uint64_t    all[SLC_BINLOG_ALL_N];
    uint64_t    connects;       /* sessions with a primary opened */
    uint64_t    errors;         /* ... that failed or ended */
    uint64_t    lost_ms;        /* time spent not live after the first */
} slc_cache_binlog_stats_t;


/* An upstream's entry in the zone. */
typedef struct slc_cache_binlog_s {
    char                     upstream[64];     /* "": free; first: the
                                                  slot's name
                                                  (slc_shm_slot_claim) */
    uint32_t                 state;            /* SLC_BINLOG_*, atomic */
    uint32_t                 seq;              /* seqlock of the texts */
    uint64_t                 beat;             /* CLOCK_MONOTONIC ms of
                                                  the last event, atomic */
    int32_t                  pid;              /* the reader (owner) */
    int32_t                  heir;             /* a reload's new reader,
                                                  taking over once live */
    uint32_t                 server_id;        /* it identifies as */
    slc_cache_binlog_stats_t st;               /* atomics */
    char                     pos[SLC_GTID_TEXT];   /* applied */
    char                     primary[128];     /* reading from */
    char                     error[256];       /* the last, escaped */
} slc_cache_binlog_t;

/* `binlog_lost` */
#define SLC_BINLOG_LOST_BYPASS  0
#define SLC_BINLOG_LOST_SERVE   1

/* The cache module's conf at the upstream level. */
typedef struct {
    int                  on;            /* `binlog on` */
    slc_monitor_conf_t   account;       /* binlog_user, or the monitor's
                                           (the same masked form) */
    long long            server_id;     /* SLC_CONF_UNSET: derived */
    int                  lost;          /* SLC_BINLOG_LOST_* */
    slc_cache_binlog_t  *entry;         /* bound by the zone's attach */
    const char          *file;          /* where `binlog on` is */
    unsigned             line;
} slc_cache_binlog_conf_t;

/*
 * Whether hits may be served under entry `b` at `now` (the worker's
 * CLOCK_MONOTONIC ms): the reader is live and was heard from lately.
 */
static inline int
slc_cache_binlog_serves(const slc_cache_binlog_t *b, uint64_t now)
{
    return __atomic_load_n(&b->state, __ATOMIC_ACQUIRE) == SLC_BINLOG_LIVE
           && now <= __atomic_load_n(&b->beat, __ATOMIC_ACQUIRE)
                     + SLC_BINLOG_BEAT_MS;
}

/* slc_cache_binlog.c: the conf at the upstream level (create, merge),
   the directives' handlers (the module's table lists them), the zone and
   the role. */
extern const slc_conf_enum_t  slc_cache_binlog_lost_names[];
const char  *slc_cache_binlog_on(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf);
const char  *slc_cache_binlog_password(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
void        *slc_cache_binlog_create_conf(slc_conf_t *cf);
const char  *slc_cache_binlog_merge_conf(slc_cache_binlog_conf_t *bc);
/* The upstream's conf; NULL without the module's conf. */
slc_cache_binlog_conf_t *slc_cache_binlog_conf(const slc_upstream_t *up);
/* From the module's init_conf, after the servers are bound: declare the
   zone and the role for the upstreams that read. */
int   slc_cache_binlog_init_conf(slc_cycle_t *cycle, char *err,
    size_t errlen);
/* `sluice -s stats`: one line per reader. */
void  slc_cache_binlog_report(slc_cycle_t *cycle);
const char *slc_cache_binlog_state_name(uint32_t state);
/* The id derived for `up` when binlog_server_id is not given (by the
   master): from the host's name and machine id, the master's pid, the
   configuration's generation and the upstream's name, in 0x40000000 -
   0x7fffffff (far from the small ids servers are given; two sluice
   instances on a host differ, and so do a reload's old and new readers,
   which read side by side until the new one is live). */
uint32_t slc_cache_binlog_default_id(const char *upstream,
    unsigned generation);

/* slc_cache_binlog_read.c: the role's hooks, and the module's
   exit_process (a binlog process closes its connection). */
int   slc_cache_binlog_process(slc_cycle_t *cycle, slc_role_t *role,
    unsigned n);
void  slc_cache_binlog_quit(slc_role_t *role);
int   slc_cache_binlog_busy(slc_role_t *role);
void  slc_cache_binlog_exit(slc_cycle_t *cycle, const slc_role_t *role);


/* --- slc_cache_binlog_group.c: what an event group wrote ---------------- */

typedef struct {
    uint32_t    format;
    uint8_t     len;
    uint8_t     data[128];      /* gtrid and bqual */
} slc_cache_binlog_xid_t;

typedef struct {
    uint32_t    hash[SLC_BINLOG_GROUP_TABLES];
    unsigned    n;
    unsigned    all:1;
    unsigned    ddl:1;          /* DDL that may change a view or trigger */
    int         why;            /* SLC_BINLOG_ALL_*, when all */
} slc_cache_binlog_tables_t;

typedef struct {
    int                        open;       /* a GTID event began it */
    slc_gtid_t                 gtid;
    unsigned                   flags;      /* its GTID event's FL_* */
    slc_cache_binlog_xid_t     xid;        /* FL_PREPARED/COMPLETED_XA */
    slc_cache_binlog_tables_t  t;
    /* prepared XA transactions seen, by xid, until their XA COMMIT */
    slc_cache_binlog_xid_t     xa[SLC_BINLOG_XA_MAX];
    slc_cache_binlog_tables_t *xa_tables[SLC_BINLOG_XA_MAX];
    unsigned                   nxa;
    unsigned                   xa_lost:1;  /* one did not fit */
} slc_cache_binlog_group_t;

/* What the caller does after an event. */
#define SLC_BINLOG_GROUP_MORE   0   /* go on reading */
#define SLC_BINLOG_GROUP_APPLY  1   /* the group committed: apply t */
#define SLC_BINLOG_GROUP_DONE   2   /* it ended with nothing to apply
                                       (a prepare, a rollback of XA) */

struct slc_catalog_s;

void slc_cache_binlog_group_init(slc_cache_binlog_group_t *g);
void slc_cache_binlog_group_free(slc_cache_binlog_group_t *g);
/* A GTID event: a new group (one still open is dropped unapplied: the
   primary never ends one so, but its tables are added to the next). */
void slc_cache_binlog_group_begin(slc_cache_binlog_group_t *g,
    const slc_gtid_t *gtid, unsigned flags,
    const slc_cache_binlog_xid_t *xid);
/* A table map: the table written by the row events after it. */
void slc_cache_binlog_group_table(slc_cache_binlog_group_t *g,
    const char *db, size_t dblen, const char *table, size_t tlen);
/*
 * A statement (QUERY_EVENT, LOAD DATA's EXECUTE_LOAD_QUERY): BEGIN,
 * COMMIT, ROLLBACK, XA and SAVEPOINT steer the group; anything else is
 * classified: its tables, what their triggers write (`catalog`, may be
 * NULL), or everything.  `mode_unknown`: its sql_mode could not be read
 * or has ANSI_QUOTES (the text may read otherwise): everything.
 * `nbe`: NO_BACKSLASH_ESCAPES.
 */
int  slc_cache_binlog_group_query(slc_cache_binlog_group_t *g,
    struct slc_catalog_s *catalog, const char *db, size_t dblen,
    const char *q, size_t n, int nbe, int mode_unknown);
/* XID_EVENT (APPLY), XA_PREPARE_LOG_EVENT (DONE). */
int  slc_cache_binlog_group_xid(slc_cache_binlog_group_t *g);
int  slc_cache_binlog_group_xa_prepare(slc_cache_binlog_group_t *g);
/* An event it cannot read, or an incident: everything, at once. */
void slc_cache_binlog_group_unreadable(slc_cache_binlog_group_t *g);
/* After APPLY or DONE: the next group begins empty. */
void slc_cache_binlog_group_reset(slc_cache_binlog_group_t *g);

/*
 * Where a QUERY_EVENT's status variables say the sql_mode is (MariaDB
 * writes FLAGS2 then SQL_MODE first): SLC_OK with *mode, or SLC_ERROR
 * when it cannot be found.
 */
int  slc_cache_binlog_sql_mode(const uint8_t *st, size_t len,
    uint64_t *mode);

/* sql_mode bits as the binlog carries them: ANSI_QUOTES, and the modes
   that imply it (POSTGRESQL, ORACLE, MSSQL, DB2, MAXDB, ANSI). */
#define SLC_BINLOG_MODE_QUOTES  ((1ULL << 2) | (0x1fULL << 8) | (1ULL << 18))
#define SLC_BINLOG_MODE_NBE     (1ULL << 20)    /* NO_BACKSLASH_ESCAPES */

#endif /* SLC_CACHE_BINLOG_H */
