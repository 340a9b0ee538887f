#ifndef SLC_CACHE_H
#define SLC_CACHE_H

/*
 * The cache filter (docs/architecture.md, "The query cache"): the module,
 * its configuration and zones (slc_cache.c), the session side
 * (slc_cache_session.h: the filter's hooks, its prepared statements, how
 * a read is answered or kept, what a write invalidates), and the serving
 * of a hit (slc_cache_hit.c).  The store (slc_cache_store.h), what may be
 * cached (slc_cache_policy.h) and the session's SETs (slc_cache_vars.h)
 * know nothing of sessions.
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_mysql_filter.h"
#include "slc_shm.h"
#include "slc_cache_policy.h"
#include "slc_cache_store.h"

#define SLC_CACHE_ZONE_PREFIX  "cache/"
#define SLC_CACHE_PINS_MIN     1024
#define SLC_CACHE_MAX_ENTRY    (16 * 1024 * 1024 - 1)  /* one packet's worth */
#define SLC_CACHE_RULES_MAX    64      /* rule counters a zone keeps */
#define SLC_CACHE_STATE_MAX    2048    /* bytes of SETs a key carries */

/* A cache_zone: the shared-memory zone and the cache laid over it. */
typedef struct slc_cache_zone_s {
    char                    name[64];
    size_t                  size;
    const char             *file;
    unsigned                line;
    long long               wait;       /* the longest cache_wait_timeout
                                           of its servers (ms) */
    slc_shm_zone_t         *shm;
    slc_cache_t            *cache;      /* set by the zone's attach */
    struct slc_cache_zone_s *next;
} slc_cache_zone_t;

/* Counters of one rule, in the zone (a reload keeps them by name). */
typedef struct {
    char        name[SLC_SQL_RULE_NAME_MAX + 64];  /* "server/rule" */
    uint64_t    matches;
    uint64_t    hits;
    uint64_t    stores;
} slc_cache_rule_stats_t;

/*
 * A remote tier below the zone (the cache_redis module, issue 22): asked
 * on a zone miss, before the backend, and given what the backend answers.
 * The cache knows it through these hooks only.  Its counters live in the
 * zone's, so that they are shown where the zone's are.
 */
typedef struct {
    uint64_t    lookups;        /* asked */
    uint64_t    hits;           /* answered from it */
    uint64_t    misses;         /* no entry */
    uint64_t    stale;          /* an entry older than its tables */
    uint64_t    decode_errors;  /* a value that is not ours: never served */
    uint64_t    timeouts;       /* no answer within `timeout` */
    uint64_t    skipped;        /* not asked: down, or its breaker open */
    uint64_t    stores;         /* sent */
    uint64_t    dropped;        /* stores and bumps not sent: queue full,
                                   down */
    uint64_t    errors;         /* a command Redis refused, a lost reply */
    uint64_t    bumps;          /* table generations moved by our writes */
    uint64_t    published;      /* invalidations pushed by workers */
    uint64_t    push_bypass;    /* zone hits skipped: pushes not live */
    uint64_t    strict_held;    /* writes' OKs held for their bump */
    uint64_t    strict_failed;  /* ... whose bump failed or timed out */
    uint64_t    opened;         /* breaker transitions */
    uint64_t    closed;
} slc_cache_remote_counters_t;

/* A lookup's question: the exact key and the hashes of the tables an
   entry of it reads (slc_cache_table_hash). */
typedef struct {
    const uint8_t  *key;
    size_t          klen;
    const uint32_t *table;
    unsigned        ntables;
} slc_cache_remote_ask_t;

/* A remote hit, valid in the callback only. */
typedef struct {
    const uint8_t  *result;
    size_t          rlen;
    const uint8_t  *meta;           /* SLC_CACHE_META bytes */
    uint64_t        ttl;            /* ms it has left */
} slc_cache_remote_hit_t;

/* A lookup's end: hit NULL for anything but a fresh, whole entry of the
   key (a miss, a stale or foreign value, a timeout, Redis gone). */
typedef void (*slc_cache_remote_done_pt)(void *arg,
    const slc_cache_remote_hit_t *hit);
/* A bump's end: ok when the tier acknowledged it in time. */
typedef void (*slc_cache_remote_ack_pt)(void *arg, int ok);

typedef struct {
    /*
     * Look ask's key up in `tier`: a request, whose `done` is called
     * once, later (never from inside this call), unless it is released
     * first; NULL when the tier is not asked (not connected, its breaker
     * open, no memory), counted as skipped.
     */
    void *(*lookup)(void *tier, const slc_cache_remote_ask_t *ask,
        slc_cache_remote_counters_t *cnt, slc_cache_remote_done_pt done,
        void *arg);
    /* After a miss: the backend's result for the request's key (the
       pending store st's bytes, meta), to be kept `ttl` ms more, with the
       generations its lookup saw.  Fire and forget. */
    void  (*store)(void *req, const slc_cache_store_t *st,
        const uint8_t *meta, uint64_t ttl);
    /* Done with a request, before or after its `done`. */
    void  (*release)(void *req);
    /*
     * A write seen accepted: its tables' generations move (every table's
     * when `all`), in every Redis service of the process.  With `ack`,
     * `tier`'s bump is a request whose `ack` is called once, later, when
     * it is acknowledged, refused or timed out (the strict mode holds the
     * write's OK until then), unless released first; NULL when it could
     * not be sent (counted).  Without, nothing is waited for.
     */
    void *(*invalidate)(void *tier, const uint32_t *hash, unsigned n,
        int all, slc_cache_remote_counters_t *cnt, slc_cache_remote_ack_pt ack,
        void *arg);
    /*
     * The same from a process role (the binlog reader), waiting at most
     * each service's timeout, in every service the cycle's servers use;
     * `id` (a GTID's text, or NULL) makes it happen once per id whoever
     * else bumps it (ten hosts reading one binlog).  A service it cannot
     * reach keeps the tables marked (no entry of theirs is taken from it
     * meanwhile) and gets them again at the next call, which may bump
     * nothing (n 0): a retry.  SLC_ERROR (logged) when one was missed.
     */
    int   (*bump_sync)(const slc_cycle_t *cycle, const char *id,
        const uint32_t *hash, unsigned n, int all);
    /* Whether the zone's hits of a server without a binlog reader may be
       served at `now`: the tier's pushed invalidations are live. */
    int   (*trusted)(void *tier, uint64_t now);
} slc_cache_remote_t;

/* The remote tier a server of `cycle` uses (the first), NULL: none. */
const slc_cache_remote_t *slc_cache_remote_of(const slc_cycle_t *cycle);

/* The filter's counters in a zone (slc_cache_user), beside the store's. */
typedef struct {
    uint64_t                uncacheable[SLC_CACHE_NVERDICTS];
    uint64_t                not_stored[8];      /* SLC_CACHE_NS_* */
    uint64_t                waits;              /* single flight */
    uint64_t                wait_timeouts;
    uint64_t                replays;    /* a hit's statement run at the
                                           server for FOUND_ROWS() & co */
    uint64_t                binlog_bypass;  /* lookups skipped: the
                                               binlog reader not live */
    slc_cache_rule_stats_t  rules[SLC_CACHE_RULES_MAX];
    slc_cache_remote_counters_t remote;     /* the Redis tier's */
} slc_cache_counters_t;

/* Why a response passed on to the client was not kept. */
#define SLC_CACHE_NS_ERROR      0   /* ERR, or not one result set */
#define SLC_CACHE_NS_WARNINGS   1   /* warnings, without cache_warnings */
#define SLC_CACHE_NS_SIZE       2   /* over cache_max_entry_size */
#define SLC_CACHE_NS_STORE      3   /* the store refused it */
#define SLC_CACHE_NS_STATE      4   /* it changed the session's state */
#define SLC_CACHE_NS_CLOSED     5   /* it never ended: the client or its
                                       backend went away mid-way */
#define SLC_CACHE_NS_REPLICA    6   /* a replica answered */
#define SLC_CACHE_NS_MAX        7

/* Its conf at the mysql and server levels (a server inherits it). */
typedef struct {
    slc_cache_zone_t       *zones;      /* cache_zone (mysql level) */
    const char             *zone_name;  /* `cache NAME;` */
    slc_cache_zone_t       *zone;       /* bound by init_conf */
    long long               ttl;        /* ms */
    long long               soft_ttl;   /* ms, 0: none */
    size_t                  max_entry;
    long long               wait;       /* ms */
    int                     warnings;
    int                     shared;     /* cache_users shared */
    /* index of each rule's counters in the zone, by the index of the
       rule in its server's list (srv->rules: cache_rule and rule) */
    unsigned                rule_slot[SLC_CACHE_RULES_MAX];
    const char             *file;       /* where the server block is */
    unsigned                line;
    /* its upstream's binlog reader when hits wait for it to be live
       (`binlog_lost bypass`), else NULL (slc_cache_binlog.h) */
    const struct slc_cache_binlog_s *binlog_gate;
    /* its upstream's binlog reader, whatever binlog_lost says, else
       NULL (without one, the Redis tier's pushes keep the zone right) */
    const struct slc_cache_binlog_s *binlog;
    /* its remote tier (set by that module's init_conf), NULL: none */
    const slc_cache_remote_t *remote;
    void                     *remote_tier;
    int                       remote_strict;    /* the tier's `strict` */
} slc_cache_conf_t;

extern slc_module_t  slc_cache_module;

/* Whether server `srv` lists the cache filter. */
int slc_cache_filtered(const slc_mysql_srv_t *srv);

/* The filter's counters of a cache. */
slc_cache_counters_t *slc_cache_counters(slc_cache_t *c);

/*
 * A write a server of `cycle` saw accepted: its tables (by hash,
 * slc_cache_table_hash; every table when `all`) are invalidated in every
 * zone, not only the server's own: an entry of one zone may read what a
 * server of another zone writes.
 */
/* The cycle's cache zones (NULL: none). */
slc_cache_zone_t *slc_cache_zones(const slc_cycle_t *cycle);
void slc_cache_zones_invalidate(const slc_cycle_t *cycle,
    const uint32_t *hash, unsigned n, int all, uint64_t now);

#define slc_cache_bump(field) \
    __atomic_fetch_add(&(field), 1, __ATOMIC_RELAXED)

/* The filter hooks (slc_cache_filter.c). */
extern const slc_filter_t  slc_cache_filter;

/*
 * Serving a hit (slc_cache_hit.c): the entry's bytes as they are, but
 * with the session's status flags in its EOF or OK packets.  `meta` is
 * what the filter stored with it (slc_cache_meta_t).
 */
typedef struct {
    uint32_t    eof_status;     /* offset of the status flags of the EOF
                                   after the column definitions; 0: none */
    uint32_t    end_status;     /* of the packet that ends the result */
    uint32_t    rows;           /* its rows: what FOUND_ROWS() says after
                                   it (no SQL_CALC_FOUND_ROWS is cached) */
} slc_cache_meta_t;

typedef struct {
    slc_cache_hit_t     hit;
    slc_cache_cursor_t  cur;
    size_t              off;        /* bytes of the entry sent */
    slc_cache_meta_t    meta;
    uint16_t            status;     /* the session's flags to put in */
} slc_cache_serve_t;

/* Start serving *sv's hit (taken over: released when done or on close).
   SLC_OK: answered (maybe streaming on), SLC_ERROR: nothing sent. */
int  slc_cache_serve(slc_session_t *s, slc_cache_serve_t *sv);
void slc_cache_serve_end(slc_cache_serve_t *sv);

#endif /* SLC_CACHE_H */
