#ifndef SLC_CACHE_REDIS_CLUSTER_H
#define SLC_CACHE_REDIS_CLUSTER_H

/* slc_cache_redis_cluster.c: a Redis Cluster as a worker sees it
   (slc_cache_redis_service.h lists the tier's files). */

#include "slc_cache_redis_conn.h"
#include "slc_cache_redis_slots.h"

typedef struct slc_cache_redis_cluster_s {
    slc_cache_redis_slots_t  map;           /* as CLUSTER SLOTS said */
    uint8_t                  conn[SLC_REDIS_NODES_MAX];  /* map node ->
                                               index in node[] */
    slc_cache_redis_conn_t  *node[SLC_REDIS_NODES_MAX];
    unsigned                 nnodes;
    slc_cache_redis_conn_t  *nodes;         /* their list */
    unsigned                 gslot;         /* the generations' slot */
    unsigned                 known:1;       /* a map was applied */
    unsigned                 refreshing:1;  /* CLUSTER SLOTS is out */
    uint64_t                 moved_logged;  /* ms */
} slc_cache_redis_cluster_t;

/* rc's on_setup (a worker's first connection to a service): CLUSTER
   SLOTS asked; its reply makes rc a cluster's seed (its map applied, a
   connection opened per master, each adopted as rc's owner says), or a
   single Redis's (unless `cluster on`: then rc fails). */
void slc_cache_redis_cluster_ask(slc_cache_redis_conn_t *rc);
/* The connection for key slot `slot` of rc's service (rc the worker's
   first connection to it): rc without a cluster, else the node serving
   it; NULL while unknown.  The caller checks it is ready. */
slc_cache_redis_conn_t *slc_cache_redis_route(slc_cache_redis_conn_t *rc,
    unsigned slot);
/* The connection for key k[0..len) of rc's service (rc any of its
   connections): as slc_cache_redis_route. */
slc_cache_redis_conn_t *slc_cache_redis_route_key(slc_cache_redis_conn_t *rc,
    const char *k, size_t len);
/* The slot of the generations' keys of rc's service. */
unsigned slc_cache_redis_gslot(const slc_cache_redis_conn_t *rc);
/* Whether rc talks to a cluster (then MGET spans one slot only). */
int  slc_cache_redis_clustered(const slc_cache_redis_conn_t *rc);
/* A command to a cluster's node, sent with a copy kept so that a MOVED or
   ASK reply is followed (twice at most; a MOVED refreshes the map);
   fn then has its final reply.  SLC_ERROR when it could not be sent. */
int  slc_cache_redis_cluster_send(slc_cache_redis_conn_t *rc,
    void (*fn)(struct redisAsyncContext *, void *, void *), void *arg,
    const uint8_t *cmd, size_t len);
/* At a worker's exit: a seed's nodes' connections and its map. */
void slc_cache_redis_cluster_free(slc_cache_redis_conn_t *rc);

#endif /* SLC_CACHE_REDIS_CLUSTER_H */
