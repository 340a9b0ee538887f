/*
 * A Redis Cluster as a worker sees it (slc_cache_redis_cluster.h; issue 22,
 * section 3).
 *
 * The worker's first connection to a service (its seed, dialled to one
 * of the `server`s, the next after a failure) asks CLUSTER SLOTS at its
 * setup: an error ("cluster support disabled") means a single Redis,
 * unless `cluster on` says it must be a cluster; a map means a cluster,
 * declared or detected.  The seed then opens a connection per master the
 * map names (by numeric address: a name would be resolved blocking), and
 * a command goes to the master of its key's slot:
 *
 *   an entry       P e:<digest>     its own slot: entries spread
 *   generations    P {g}:...        one slot (the hash tag): a lookup's
 *                                   generations are one MGET, the binlog
 *                                   reader's bump one script
 *
 * so a lookup is two commands on two nodes (slc_cache_redis_lookup.c).
 * Every command to a cluster goes with a copy of itself: a MOVED reply
 * (its slot lives elsewhere now) refreshes the map (one CLUSTER SLOTS out
 * at a time) and sends it to the node named; ASK (its slot is being
 * migrated and the key is there already) sends ASKING and it there, for
 * this command only.  Two redirections, or a node not connected yet, and
 * the command ends with the error Redis gave, which its caller handles
 * as any other (a lookup is a miss, a store or a plain bump is counted
 * lost).  A node's connection lost refreshes the map too.
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_cache_redis_cluster.h"
#include "slc_cache_redis_keys.h"

#include <hiredis.h>
#include <async.h>

#define SLC_REDIS_HOPS        2         /* redirections a command follows */
#define SLC_REDIS_MOVED_LOG   10000     /* ms between MOVED reports */

/* A command on its way, with its bytes kept to send again. */
typedef struct {
    slc_cache_redis_conn_t *orig;       /* sent on first (it counted it) */
    void                  (*fn)(redisAsyncContext *, void *, void *);
    void                   *arg;
    unsigned                hops;
    size_t                  len;
    uint8_t                 cmd[];
} slc_cache_redis_hop_t;

static void slc_cache_redis_cluster_refresh(slc_cache_redis_conn_t *seed);


/* --- the map and the nodes ------------------------------------------------ */

static void
slc_cache_redis_node_down(slc_cache_redis_conn_t *rc)
{
    slc_cache_redis_cluster_refresh(rc->seed);
}

/* A connection to node `name` of seed's cluster, set up as its owner
   sets up the seed's. */
static slc_cache_redis_conn_t *
slc_cache_redis_node_open(slc_cache_redis_conn_t *seed, const char *name)
{
    slc_cache_redis_conn_t *rc;

    rc = slc_cache_redis_conn_open(seed->rs, &seed->cluster->nodes,
             "node ", NULL, slc_cache_redis_node_down, seed);
    if (rc != NULL) {
        strlcpy(rc->node, name, sizeof(rc->node));
        rc->seed = seed;
        if (seed->adopt != NULL) {
            seed->adopt(rc);
        }
        slc_cache_redis_conn_start(rc);
    }
    return rc;
}

/* The index of node `name`'s connection, opened if new; -1 when there is
   no room or memory. */
static int
slc_cache_redis_cluster_index(slc_cache_redis_conn_t *seed, const char *name)
{
    slc_cache_redis_cluster_t *c = seed->cluster;
    slc_cache_redis_conn_t    *rc;

    for (unsigned i = 0; i < c->nnodes; i++) {
        if (strcmp(c->node[i]->node, name) == 0) {
            return (int) i;
        }
    }
    if (c->nnodes == SLC_REDIS_NODES_MAX
        || (rc = slc_cache_redis_node_open(seed, name)) == NULL)
    {
        return -1;
    }
    c->node[c->nnodes] = rc;
    return (int) c->nnodes++;
}

/* The map just parsed: a connection for each of its masters. */
static void
slc_cache_redis_cluster_apply(slc_cache_redis_conn_t *seed)
{
    slc_cache_redis_cluster_t *c = seed->cluster;

    for (unsigned i = 0; i < c->map.n; i++) {
        int k = slc_cache_redis_cluster_index(seed, c->map.node[i]);

        c->conn[i] = k < 0 ? SLC_REDIS_NO_NODE : (uint8_t) k;
    }
    c->known = 1;
}

/* The reply to the setup's CLUSTER SLOTS: a cluster's map, or a single
   Redis' refusal.  SLC_ERROR (why) for anything else, or a single Redis
   with `cluster on`. */
static int
slc_cache_redis_cluster_setup(slc_cache_redis_conn_t *rc,
    const redisReply *r, char *why, size_t cap)
{
    slc_cache_redis_cluster_t *c = rc->cluster;
    char                       gk[SLC_REDIS_KEY_MAX];

    if (r->type == REDIS_REPLY_ERROR) {
        if (rc->rs->cluster != 1) {
            return SLC_OK;              /* a single Redis */
        }
        snprintf(why, cap, "%.*s (but \"cluster on\")",
            (int) slc_min(r->len, (size_t) 100), r->str);
        return SLC_ERROR;
    }
    if (c == NULL) {
        if ((c = calloc(1, sizeof(*c))) == NULL) {
            snprintf(why, cap, "out of memory");
            return SLC_ERROR;
        }
        c->gslot = slc_cache_redis_slot(gk, slc_cache_redis_gen_key(rc->rs,
                                                0, 1, gk));
        rc->cluster = c;
    }
    if (slc_cache_redis_slots_parse(r, &c->map) != SLC_OK) {
        snprintf(why, cap, "a reply that is not a slot map");
        return SLC_ERROR;
    }
    slc_cache_redis_cluster_apply(rc);
    return SLC_OK;
}

static void
slc_cache_redis_topology(redisAsyncContext *ac, void *r, void *arg)
{
    slc_cache_redis_conn_t *rc = ac->data;
    char                    why[160];

    (void) arg;
    if (rc == NULL || r == NULL) {
        return;                 /* freed, or dropped: handled there */
    }
    if (slc_cache_redis_cluster_setup(rc, r, why, sizeof(why)) != SLC_OK) {
        slc_cache_redis_conn_fail(rc, "CLUSTER SLOTS", why, strlen(why));
        return;
    }
    slc_cache_redis_setup_done(rc);
}

void
slc_cache_redis_cluster_ask(slc_cache_redis_conn_t *rc)
{
    const char   *argv[2] = { "CLUSTER", "SLOTS" };
    const size_t  len[2] = { 7, 5 };

    slc_cache_redis_setup_command(rc, slc_cache_redis_topology, NULL, 2,
        argv, len);
}

static void
slc_cache_redis_on_slots(redisAsyncContext *ac, void *r, void *arg)
{
    slc_cache_redis_conn_t *seed = arg;

    if (ac->data == NULL || seed->cluster == NULL) {
        return;                         /* the worker is going */
    }
    seed->cluster->refreshing = 0;
    if (r != NULL && slc_cache_redis_slots_parse(r, &seed->cluster->map)
                     == SLC_OK)
    {
        slc_cache_redis_cluster_apply(seed);
    }
}

/* CLUSTER SLOTS again, on the seed or any node that is up. */
static void
slc_cache_redis_cluster_refresh(slc_cache_redis_conn_t *seed)
{
    slc_cache_redis_cluster_t *c = seed->cluster;
    slc_cache_redis_conn_t    *ask = seed;

    if (c == NULL || c->refreshing) {
        return;
    }
    for (unsigned i = 0; !slc_cache_redis_conn_ready(ask); i++) {
        if (i == c->nnodes) {
            return;                     /* none: the seed's setup will */
        }
        ask = c->node[i];
    }
    if (redisAsyncCommand(ask->ac, slc_cache_redis_on_slots, seed,
                          "CLUSTER SLOTS") == REDIS_OK)
    {
        c->refreshing = 1;
    }
}

slc_cache_redis_conn_t *
slc_cache_redis_route(slc_cache_redis_conn_t *rc, unsigned slot)
{
    slc_cache_redis_cluster_t *c = rc->cluster;
    unsigned                   k;

    if (c == NULL) {
        return rc;
    }
    k = c->map.slot[slot];
    if (k == SLC_REDIS_NO_NODE || c->conn[k] == SLC_REDIS_NO_NODE) {
        return NULL;
    }
    return c->node[c->conn[k]];
}

slc_cache_redis_conn_t *
slc_cache_redis_route_key(slc_cache_redis_conn_t *rc, const char *k,
    size_t len)
{
    slc_cache_redis_conn_t *seed = rc->seed != NULL ? rc->seed : rc;

    return seed->cluster == NULL
           ? rc : slc_cache_redis_route(seed, slc_cache_redis_slot(k, len));
}

unsigned
slc_cache_redis_gslot(const slc_cache_redis_conn_t *rc)
{
    const slc_cache_redis_conn_t *seed = rc->seed != NULL ? rc->seed : rc;

    return seed->cluster != NULL ? seed->cluster->gslot : 0;
}

int
slc_cache_redis_clustered(const slc_cache_redis_conn_t *rc)
{
    return (rc->seed != NULL ? rc->seed : rc)->cluster != NULL;
}

void
slc_cache_redis_cluster_free(slc_cache_redis_conn_t *rc)
{
    slc_cache_redis_cluster_t *c = rc->cluster;

    if (c != NULL) {
        rc->cluster = NULL;
        slc_cache_redis_conns_free(&c->nodes);
        free(c);
    }
}


/* --- redirections --------------------------------------------------------- */

static void slc_cache_redis_on_hop(redisAsyncContext *ac, void *r,
    void *arg);

/* A MOVED, logged now and then: the map is refreshed. */
static void
slc_cache_redis_moved(slc_cache_redis_conn_t *seed, unsigned slot,
    const char *node)
{
    slc_cache_redis_cluster_t *c = seed->cluster;

    if (c->moved_logged == 0
        || slc_loop->now - c->moved_logged >= SLC_REDIS_MOVED_LOG)
    {
        c->moved_logged = slc_loop->now;
        slc_log(SLC_LOG_NOTICE, "redis \"%s\": slot %u moved to %s: the "
            "slot map is refreshed (reported once in %d s)", seed->rs->name,
            slot, node, SLC_REDIS_MOVED_LOG / 1000);
    }
    slc_cache_redis_cluster_refresh(seed);
}

/* h's reply was an error: a redirection is followed (SLC_OK: h is on its
   way again). */
static int
slc_cache_redis_follow(slc_cache_redis_conn_t *rc, slc_cache_redis_hop_t *h,
    const redisReply *reply)
{
    slc_cache_redis_conn_t *seed = rc->seed != NULL ? rc->seed : rc, *to;
    char                    node[64];
    unsigned                slot;
    int                     ask, k;

    if (seed->cluster == NULL || h->hops == SLC_REDIS_HOPS
        || slc_cache_redis_redirect_parse(reply->str, reply->len, &ask,
                                          &slot, node, sizeof(node))
           != SLC_OK)
    {
        return SLC_ERROR;
    }
    if (!ask) {
        slc_cache_redis_moved(seed, slot, node);
    }
    if ((k = slc_cache_redis_cluster_index(seed, node)) < 0
        || !slc_cache_redis_conn_ready(to = seed->cluster->node[k])
        || (ask && redisAsyncCommand(to->ac, NULL, NULL, "ASKING")
                   != REDIS_OK)
        || redisAsyncFormattedCommand(to->ac, slc_cache_redis_on_hop, h,
                                      (const char *) h->cmd, h->len)
           != REDIS_OK)
    {
        return SLC_ERROR;
    }
    h->hops++;
    return SLC_OK;
}

/*
 * A reply to a cluster's command: followed if it redirects, else its
 * caller's.  The caller's callback reads only its context's data (the
 * connection): it gets the one the command was first sent on, which
 * counted it, or NULL while the worker lets its connections go.
 */
static void
slc_cache_redis_on_hop(redisAsyncContext *ac, void *r, void *arg)
{
    static redisAsyncContext  as;
    slc_cache_redis_hop_t    *h = arg;
    slc_cache_redis_conn_t   *rc = ac->data;
    redisReply               *reply = r;

    if (rc != NULL && reply != NULL && reply->type == REDIS_REPLY_ERROR
        && slc_cache_redis_follow(rc, h, reply) == SLC_OK)
    {
        return;
    }
    if (h->fn != NULL) {
        as.data = rc != NULL ? h->orig : NULL;
        h->fn(&as, r, h->arg);
    }
    free(h);
}

int
slc_cache_redis_cluster_send(slc_cache_redis_conn_t *rc,
    void (*fn)(redisAsyncContext *, void *, void *), void *arg,
    const uint8_t *cmd, size_t len)
{
    slc_cache_redis_hop_t *h = malloc(sizeof(*h) + len);

    if (h == NULL) {
        return SLC_ERROR;
    }
    *h = (slc_cache_redis_hop_t) { .orig = rc, .fn = fn, .arg = arg,
                                   .len = len };
    memcpy(h->cmd, cmd, len);
    if (redisAsyncFormattedCommand(rc->ac, slc_cache_redis_on_hop, h,
                                   (const char *) h->cmd, len) != REDIS_OK)
    {
        free(h);
        return SLC_ERROR;
    }
    return SLC_OK;
}
