#ifndef SLC_MYSQL_TRAFFIC_H
#define SLC_MYSQL_TRAFFIC_H

#include "slc_core.h"
#include "slc_latency.h"
#include "slc_mysql_conf.h"
#include "slc_sql_rule.h"
#include "slc_worker.h"

/*
 * What the sessions of each server {} block did, per worker (issue 23:
 * the status listener's sessions, bytes, commands, errors and query
 * durations), in the shared zone mysql_traffic, which the status process
 * reads and nobody asks a worker for.
 *
 * A block is named by its first `listen` (the `listener` label); a
 * worker by its slot (0 .. worker_processes - 1).  Each (block, slot)
 * row is added to with relaxed atomic adds: during a reload the old and
 * the new worker of a slot both write it, and the counts go on across
 * reloads (the zone is carried over while its size stays).  The current
 * sessions are counted per process instead, so that the master can take
 * back what a dead worker held (slc_traffic_reap).
 *
 * A worker binds its rows once (slc_traffic_bind, at its start); the
 * counting functions do nothing in a process that has none (a role's).
 */

struct slc_metrics_s;
struct slc_backend_s;
struct slc_session_s;

#define SLC_TRAFFIC_BLOCKS  32          /* server {} blocks counted */
#define SLC_TRAFFIC_SLOTS   1024        /* worker_processes' maximum */

/* Where a command's answer came from: its route. */
enum {
    SLC_ROUTE_PRIMARY = 0,
    SLC_ROUTE_REPLICA,
    SLC_ROUTE_CACHE,            /* a filter answered (a cache hit) */
    SLC_ROUTE_ANY,              /* a server of no single known role */
    SLC_ROUTE_N
};

/* Why a client was refused before it was logged in. */
enum {
    SLC_REFUSED_WORKER_CONNECTIONS = 0,
    SLC_REFUSED_HANDSHAKES_PER_HOST,
    SLC_REFUSED_HANDSHAKES,     /* max_handshakes on a backend */
    SLC_REFUSED_AUTH,           /* access denied */
    SLC_REFUSED_BACKEND,        /* no backend could log it in */
    SLC_REFUSED_PROTOCOL,       /* a bad handshake, a timeout */
    SLC_REFUSED_N
};

/* A command's kind, by its first byte. */
enum {
    SLC_CMDK_QUERY = 0,
    SLC_CMDK_PREPARE,
    SLC_CMDK_EXECUTE,
    SLC_CMDK_FETCH,
    SLC_CMDK_CLOSE,             /* COM_STMT_CLOSE, COM_STMT_RESET */
    SLC_CMDK_PING,
    SLC_CMDK_INIT_DB,
    SLC_CMDK_CHANGE_USER,
    SLC_CMDK_RESET,             /* COM_RESET_CONNECTION */
    SLC_CMDK_QUIT,
    SLC_CMDK_OTHER,
    SLC_CMDK_N
};

/* Where a causal read (readwritesplit) went. */
enum {
    SLC_CAUSAL_WAITED = 0,      /* waited for on the replica, read there */
    SLC_CAUSAL_TIMEOUT,         /* the wait timed out: on the primary */
    SLC_CAUSAL_PRIMARY,         /* to the primary at once */
    SLC_CAUSAL_N
};

/* What went wrong once the session was logged in. */
enum {
    SLC_ERRK_SERVER = 0,        /* a server answered a command with ERR */
    SLC_ERRK_PROXY,             /* the proxy did (a refusal, a lost
                                   backend's answer) */
    SLC_ERRK_BACKEND_LOST,      /* a backend failed under the session */
    SLC_ERRK_TIMEOUT,           /* idle_timeout closed it */
    SLC_ERRK_N
};

typedef struct slc_traffic_s {
    uint64_t        accepted;
    uint64_t        refused[SLC_REFUSED_N];
    uint64_t        bytes[2];           /* from, to the client */
    uint64_t        commands[SLC_CMDK_N];
    uint64_t        errors[SLC_ERRK_N];
    uint64_t        retries;            /* readwritesplit */
    uint64_t        causal[SLC_CAUSAL_N];
    slc_latency_t   duration[SLC_ROUTE_N];
} slc_traffic_t;

/* A query rule's counts (slc_mysql_rules.h), shared by the workers. */
typedef struct {
    uint64_t        matches;
    uint64_t        failures;           /* the match limit was hit */
    uint64_t        refused;            /* matched, not followed */
} slc_rule_count_t;

/* The zone mysql_traffic: rows by worker slot and block column; the
   current sessions by process index (SLC_PROC_MAX) and column. */
#define SLC_TRAFFIC_NAME  64
typedef struct {
    char            names[SLC_TRAFFIC_BLOCKS][SLC_TRAFFIC_NAME];
    uint32_t        nprocs;         /* processes that bound, high water */
    uint32_t        slot_of[SLC_PROC_MAX];  /* a process's slot + 1, 0: none */
    uint32_t        cur[SLC_PROC_MAX][SLC_TRAFFIC_BLOCKS];
    slc_traffic_t   rows[SLC_TRAFFIC_SLOTS][SLC_TRAFFIC_BLOCKS];
    /* each block's rules by name (a reload keeps their counts) */
    char            rule_names[SLC_TRAFFIC_BLOCKS][SLC_SQL_RULES_MAX]
                              [SLC_SQL_RULE_NAME_MAX];
    slc_rule_count_t rules[SLC_TRAFFIC_BLOCKS][SLC_SQL_RULES_MAX];
} slc_traffic_zone_t;

/* The zone's size and declaration, for the mysql module's init_conf. */
size_t slc_traffic_zone_size(void);
/* The zone's attach hook: each block of the cycle to its column (by
   name, kept across reloads); SLC_ERROR past SLC_TRAFFIC_BLOCKS. */
int  slc_traffic_attach(slc_shm_zone_t *z, slc_cycle_t *cycle,
    char *err, size_t errlen);
/* A worker's start: its rows (slot) and its process's counts (proc). */
void slc_traffic_bind(slc_cycle_t *cycle, unsigned slot,
    unsigned proc);
/* The master: the dead process `proc` had sessions no more. */
void slc_traffic_reap(slc_cycle_t *cycle, unsigned proc);

/* This worker's row of a block, NULL outside a worker. */
slc_traffic_t *slc_traffic_row(const slc_mysql_srv_t *srv);
/* The block's rule counts (by slc_sql_rule_t.slot), NULL outside a
   worker. */
slc_rule_count_t *slc_traffic_rules(const slc_mysql_srv_t *srv);

/* A session of the block began (accepted: a new client) or ended here. */
void slc_traffic_session(const slc_mysql_srv_t *srv, int accepted,
    int delta);

static inline void
slc_traffic_add(uint64_t *c, uint64_t n)
{
    __atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

/* The kind of a command whose first byte is `com`. */
unsigned slc_traffic_cmd_kind(uint8_t com);

/*
 * A command of session s began (its first byte `com`): counted, and
 * timed from now unless a command before it still is (a pipeline: each
 * answer is timed from the end of the one before).
 */
void slc_traffic_command(struct slc_session_s *s, uint8_t com);
/*
 * n answers to s's commands ended, `errs` of them ERRs, from backend b
 * (NULL: a filter answered them: the cache route): their durations to
 * the route's histogram and b's server's; `more`: commands still wait
 * for answers, timed from now.
 */
void slc_traffic_answered(struct slc_session_s *s,
    const struct slc_backend_s *b, uint64_t n, uint64_t errs, int more);
/* A tracker's command hook (slc_mysql_track_t.on_command): data is the
   session. */
void slc_traffic_on_command(void *data, uint8_t com);

/* The families (GET /metrics). */
void slc_traffic_metrics(const slc_cycle_t *cycle,
    struct slc_metrics_s *m);

#endif /* SLC_MYSQL_TRAFFIC_H */
