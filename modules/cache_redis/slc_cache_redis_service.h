#ifndef SLC_CACHE_REDIS_SERVICE_H
#define SLC_CACHE_REDIS_SERVICE_H

/*
 * The query cache's Redis tier (issue 22; docs/architecture.md, "The
 * query cache", *The Redis tier*): a service's configuration, which
 * every file of it reads.  Its files, each with its own header:
 *
 * - slc_cache_redis.c: the module: the `redis NAME { ... }` block and
 *   `cache_redis NAME;` (checked by `sluice -t`), the binding of a
 *   server's cache to its service (slc_cache_remote_t), the zone and
 *   process of pushed invalidations, each worker's connections;
 * - slc_cache_redis_conn.c: a connection to a Redis, on its process'
 *   loop (hiredis' async API), its owner's hooks;
 * - slc_cache_redis_cluster.c: a Redis Cluster as a worker sees it (the
 *   slot map, a connection per master, redirections followed);
 * - slc_cache_redis_tier.c: a worker's connections, requests and their
 *   budget, sending; slc_cache_redis_lookup.c: lookups and stores;
 *   slc_cache_redis_bump.c: generations moved by the proxy's writes;
 *   slc_cache_redis_sync.c: the same from the binlog reader (blocking,
 *   once per GTID across hosts);
 *   slc_cache_redis_sub.c: pushed invalidations (the publishers'
 *   messages, the `redis_sub` process, the workers' trust in it);
 * - pure, each tested alone (t/unit/test_cache_redis.c):
 *   slc_cache_redis_slot.c (the Redis Cluster slot of a key),
 *   slc_cache_redis_value.c (an entry as a Redis value, strictly
 *   decoded: anything foreign, truncated or of another version is
 *   refused, never served), slc_cache_redis_breaker.c (the circuit
 *   breaker), slc_cache_redis_resp.c (commands in RESP),
 *   slc_cache_redis_slots.c (a cluster's slot map from CLUSTER SLOTS,
 *   MOVED/ASK redirections, node addresses), slc_cache_redis_keys.c (the
 *   keys, and the wall clock entries expire by).
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_mysql_monitor.h"
#include <sys/socket.h>

#define SLC_REDIS_SERVERS_MAX  16
#define SLC_REDIS_PREFIX_MAX   64

typedef struct {
    char                     name[160];     /* as written */
    struct sockaddr_storage  addr;
    socklen_t                addrlen;
} slc_cache_redis_server_t;

/* A `redis NAME { }` block: the module's conf at the SLC_CONF_REDIS
   level. */
typedef struct slc_cache_redis_service_s {
    char                      name[64];
    slc_cache_redis_server_t  server[SLC_REDIS_SERVERS_MAX];
    unsigned                  nservers;
    /* `user` and `password` (masked as monitor_password), for AUTH */
    slc_monitor_conf_t        auth;
    long long                 db;           /* SELECT; 0 by default */
    long long                 timeout;      /* ms, 20 by default */
    size_t                    queue;        /* `queue`: bytes of stores
                                               and bumps a connection may
                                               have unanswered; past it
                                               they are dropped (counted),
                                               never buffered */
    const char               *prefix;       /* of every key, "sluice:" */
    int                       cluster;      /* `cluster on`: 1; `off`:
                                               0; unset: detected
                                               (SLC_REDIS_CLUSTER_DETECT) */
    int                       strict;       /* `strict on`: every hit is
                                               Redis', every write's OK
                                               waits for its bump */
    int                       push;         /* a server using it has no
                                               binlog reader: a subscriber
                                               runs (slc_cache_redis_sub.c) */
    struct slc_cache_redis_sub_s *sub;      /* its entry, bound at attach */
    struct slc_cache_redis_behind_s *owed;  /* the marks in its entry */
    struct slc_shmtx_s       *owed_lock;    /* the zone's (its owed marks'
                                               writers take it) */
    const char               *file;
    unsigned                  line;
    struct slc_cache_redis_service_s *next;
} slc_cache_redis_service_t;

#define SLC_REDIS_CLUSTER_DETECT  2
#define SLC_REDIS_QUEUE_DEFAULT   ((size_t) 8 << 20)

/* The module's conf at the mysql and server levels. */
typedef struct {
    slc_cache_redis_service_t *services;    /* mysql level: the blocks */
    const char                *use;         /* `cache_redis NAME;` */
    int                        inherited;   /* use is mysql {}'s */
    const char                *file;        /* where `cache_redis` is */
    unsigned                   line;
    slc_cache_redis_service_t *service;     /* bound by init_conf; NULL:
                                               no Redis tier */
} slc_cache_redis_conf_t;

#endif /* SLC_CACHE_REDIS_SERVICE_H */
