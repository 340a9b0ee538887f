#ifndef SLC_CACHE_REDIS_SLOTS_H
#define SLC_CACHE_REDIS_SLOTS_H

/* slc_cache_redis_slots.c: a cluster's slot map, its redirections, node
   addresses (pure) (slc_cache_redis_service.h lists the tier's files). */

#include "slc_core.h"
#include "slc_cache_redis_slot.h"

#define SLC_REDIS_NODES_MAX  64         /* masters a map holds */
#define SLC_REDIS_NO_NODE    0xff

typedef struct {
    unsigned    n;                              /* masters */
    char        node[SLC_REDIS_NODES_MAX][64];  /* "host:port" */
    uint8_t     slot[SLC_REDIS_SLOTS];          /* node of each slot, or
                                                   SLC_REDIS_NO_NODE */
} slc_cache_redis_slots_t;

struct redisReply;

/* From a CLUSTER SLOTS reply into *map: SLC_OK, or SLC_ERROR for anything
   else (the map is then left as it was). */
int slc_cache_redis_slots_parse(const struct redisReply *r,
    slc_cache_redis_slots_t *map);
/* An error reply err[0..len): a redirection ("MOVED slot host:port", or
   "ASK ...": *ask) gives SLC_OK, *slot and the node into node[cap];
   anything else SLC_ERROR. */
int slc_cache_redis_redirect_parse(const char *err, size_t len, int *ask,
    unsigned *slot, char *node, size_t cap);

/* "ip:port" into host[hlen] and *port: SLC_ERROR unless a numeric IPv4
   address and a port (a name would be resolved blocking). */
int  slc_cache_redis_node_addr(const char *node, char *host, size_t hlen,
    int *port);

/* Whether error err[0..len) is a cluster's TRYAGAIN: a multi-key
   command whose keys a slot in migration holds in part. */
int slc_cache_redis_tryagain(const char *err, size_t len);

#endif /* SLC_CACHE_REDIS_SLOTS_H */
