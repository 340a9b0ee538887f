#ifndef SLC_CACHE_REDIS_H
#define SLC_CACHE_REDIS_H

/*
 * The query cache's Redis tier (issue 22; docs/architecture.md, "The
 * query cache", *The Redis tier*).  Its files:
 *
 * - slc_cache_redis.c: the `redis NAME { ... }` block and `cache_redis
 *   NAME;` (checked by `sluice -t`), and the binding of a server's cache
 *   to its service (slc_cache_remote_t);
 * - slc_cache_redis_conn.c: each worker's connection to the services its
 *   servers use, on the worker's loop (hiredis' async API);
 * - slc_cache_redis_tier.c: requests and their budget, keys, sending;
 *   slc_cache_redis_lookup.c: lookups and stores;
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
 *   slc_cache_redis_slots.c (a cluster's slot map from CLUSTER SLOTS, and
 *   MOVED/ASK redirections).
 *
 * - slc_cache_redis_cluster.c: a Redis Cluster as a worker sees it (the
 *   slot map, a connection per master, redirections followed).
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_event.h"
#include "slc_module.h"
#include "slc_mysql_monitor.h"
#include "slc_cache.h"

#include <sys/socket.h>

/* --- slc_cache_redis.c: the configuration --------------------------------- */

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
    const char               *file;
    unsigned                  line;
    struct slc_cache_redis_service_s *next;
} slc_cache_redis_service_t;

#define SLC_REDIS_CLUSTER_DETECT  2

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

extern slc_module_t  slc_cache_redis_module;

/* --- slc_cache_redis_slot.c --------------------------------------------- */

#define SLC_REDIS_SLOTS  16384

/* CRC16 as Redis Cluster uses it (XMODEM: poly 0x1021, init 0). */
uint16_t slc_cache_redis_crc16(const void *p, size_t len);
/*
 * The slot of key k[0..len): of its hash tag when it has one (the bytes
 * between the first '{' and the first '}' after it, if there are any),
 * else of the whole key.
 */
unsigned slc_cache_redis_slot(const void *k, size_t len);


/* --- slc_cache_redis_slots.c: a cluster's slot map ----------------------- */

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


/* --- slc_cache_redis_value.c -------------------------------------------- */

#define SLC_REDIS_VALUE_MAGIC    "SLCQ"
#define SLC_REDIS_VALUE_VERSION  2
#define SLC_REDIS_VALUE_TABLES   16     /* as SLC_CACHE_TABLES */
#define SLC_REDIS_VALUE_META     16     /* as SLC_CACHE_META */

/*
 * What an entry holds besides its result.  `gen` are the generations the
 * tables had when the read went out (Redis' own counters: a hit whose
 * tables' generations moved since is stale).
 */
typedef struct {
    const uint8_t *key;                 /* the exact key, compared whole */
    size_t         klen;
    unsigned       ntables;
    uint32_t       table[SLC_REDIS_VALUE_TABLES];  /* table hashes */
    uint64_t       gen[SLC_REDIS_VALUE_TABLES];
    uint64_t       allgen;              /* the every-table generation */
    uint64_t       expires;             /* wall-clock ms */
    uint8_t        meta[SLC_REDIS_VALUE_META];
    const uint8_t *result;
    size_t         rlen;
} slc_cache_redis_value_t;

/* The bytes slc_cache_redis_encode writes for v. */
size_t slc_cache_redis_encoded_size(const slc_cache_redis_value_t *v);
/* Encode v into out (at least slc_cache_redis_encoded_size bytes). */
void   slc_cache_redis_encode(const slc_cache_redis_value_t *v,
    uint8_t *out);
/* The same but the result (v->rlen counted, v->result not read): the
   bytes written, after which the result's go. */
size_t slc_cache_redis_encode_head(const slc_cache_redis_value_t *v,
    uint8_t *out);
/*
 * Decode p[0..len) into *v (its pointers into p).  SLC_ERROR for
 * anything but a whole value of this version: another magic or version,
 * a length past the end, trailing bytes, more tables than fit.
 */
int    slc_cache_redis_decode(const uint8_t *p, size_t len,
    slc_cache_redis_value_t *v);


/* --- slc_cache_redis_resp.c: commands in RESP ----------------------------- */

typedef struct {
    uint8_t    *buf;        /* malloc'ed, grows; reused command after */
    size_t      len;        /* command to its end */
    size_t      cap;
    int         oom;        /* an append failed: the command is lost */
} slc_cache_redis_resp_t;

/* A command of nargs arguments begins (what the buffer held is gone). */
void     slc_cache_redis_resp_begin(slc_cache_redis_resp_t *r,
    unsigned nargs);
/* An argument: bytes, a C string, a decimal number. */
void     slc_cache_redis_resp_arg(slc_cache_redis_resp_t *r, const void *s,
    size_t n);
void     slc_cache_redis_resp_str(slc_cache_redis_resp_t *r, const char *s);
void     slc_cache_redis_resp_num(slc_cache_redis_resp_t *r,
    unsigned long long v);
/* v in decimal at out (at most 20 bytes): how many. */
size_t   slc_cache_redis_resp_dec(uint8_t *out, unsigned long long v);
/* An argument of n bytes the caller writes at the pointer returned
   (NULL without memory). */
uint8_t *slc_cache_redis_resp_open(slc_cache_redis_resp_t *r, size_t n);


/* --- slc_cache_redis_breaker.c ------------------------------------------ */

typedef enum {
    SLC_REDIS_CLOSED = 0,       /* requests go */
    SLC_REDIS_OPEN,             /* skipped until `until` */
    SLC_REDIS_HALF_OPEN         /* one probe is out */
} slc_cache_redis_bstate_e;

typedef struct {
    slc_cache_redis_bstate_e state;
    unsigned                 failures;     /* in a row, while closed */
    unsigned                 threshold;    /* failures that open it */
    uint64_t                 backoff;      /* ms, the next open's */
    uint64_t                 backoff_min;
    uint64_t                 backoff_max;
    uint64_t                 until;        /* open until (ms) */
    uint64_t                 opened;       /* transitions counted */
    uint64_t                 closed;
} slc_cache_redis_breaker_t;

void slc_cache_redis_breaker_init(slc_cache_redis_breaker_t *b,
    unsigned threshold, uint64_t backoff_min, uint64_t backoff_max);
/*
 * Whether a request may go at `now`: always while closed; while open,
 * not before `until`, then once (it becomes the probe: half open); while
 * half open, no (the probe decides).
 */
int  slc_cache_redis_breaker_allow(slc_cache_redis_breaker_t *b,
    uint64_t now);
/* A request answered: closes it (a probe's success), resets the count
   and the back-off.  Returns 1 when this closed it. */
int  slc_cache_redis_breaker_success(slc_cache_redis_breaker_t *b);
/*
 * A request failed or timed out: `threshold` in a row open it for the
 * back-off; a failed probe opens it again for twice as long, up to the
 * cap.  Returns 1 when this opened it.
 */
int  slc_cache_redis_breaker_failure(slc_cache_redis_breaker_t *b,
    uint64_t now);

/* --- slc_cache_redis_conn.c: a worker's connection to a service ----------- */

struct redisAsyncContext;
struct slc_cache_redis_req_s;
TAILQ_HEAD(slc_cache_redis_reqs_s, slc_cache_redis_req_s);

typedef struct slc_cache_redis_conn_s {
    const slc_cache_redis_service_t *rs;
    struct redisAsyncContext        *ac;       /* NULL: not connected */
    slc_conn_t                       conn;     /* its socket on the loop */
    slc_posted_t                     write_ev; /* hiredis wants to write */
    slc_timer_t                      retry;
    unsigned                         want_read:1;
    unsigned                         want_write:1;
    unsigned                         ready:1;  /* set up: AUTH etc. done */
    unsigned                         pending;  /* setup replies awaited */
    slc_cache_redis_breaker_t        breaker;  /* when to try again */
    char                             last_error[320];  /* logged */
    /* the tier's requests (slc_cache_redis_tier.c) */
    slc_cache_redis_breaker_t        rbreaker; /* lookups' */
    struct slc_cache_redis_reqs_s    lookups;  /* unanswered, oldest
                                                  first */
    slc_timer_t                      expire;   /* the oldest's deadline */
    size_t                           queued;   /* bytes of stores and
                                                  bumps sent, unanswered */
    uint64_t                         decode_logged;  /* ms */
    /* its owner's hooks (the subscriber's): set up, lost */
    void                           (*on_ready)(
                                         struct slc_cache_redis_conn_s *);
    void                           (*on_down)(
                                         struct slc_cache_redis_conn_s *);
    void                            *data;
    const char                      *tag;  /* "sub ", "pub ": logged and
                                              in its CLIENT SETNAME */
    /* a Redis Cluster (slc_cache_redis_cluster.c) */
    char                             node[64];  /* "ip:port" a cluster's
                                                   node conn dials; "":
                                                   the `server`s */
    unsigned                         server;   /* the `server` it dials
                                                  (the next after a
                                                  failure) */
    unsigned                         topology:1;  /* asks CLUSTER SLOTS
                                                     at its setup */
    struct slc_cache_redis_cluster_s *cluster; /* a worker's first
                                                  connection to a cluster:
                                                  its map and nodes */
    struct slc_cache_redis_conn_s   *seed;     /* a node's: that first
                                                  connection; NULL */
    struct slc_cache_redis_conn_s   *next;
} slc_cache_redis_conn_t;

/* In a worker: one connection per service in rs[0..n) (to its first
   server), set up in the background; SLC_ERROR without memory. */
int  slc_cache_redis_conns_open(const slc_cache_redis_service_t *const *rs,
    unsigned n);
/* At the worker's exit. */
void slc_cache_redis_conns_close(void);
/* A connection of another owner's (the subscriber process'), in *list,
   set up in the background like a worker's, then on_ready; on_down when
   a set-up one is lost (it comes back by itself).  NULL without memory. */
slc_cache_redis_conn_t *slc_cache_redis_conn_open(
    const slc_cache_redis_service_t *rs, slc_cache_redis_conn_t **list,
    const char *tag, void (*on_ready)(slc_cache_redis_conn_t *),
    void (*on_down)(slc_cache_redis_conn_t *), void *data);
void slc_cache_redis_conns_free(slc_cache_redis_conn_t **list);
/* AUTH's arguments for rs into argv/len (at most 3), its password
   unmasked into pw (257 bytes: wipe it after use); 0 without one. */
int  slc_cache_redis_auth_argv(const slc_cache_redis_service_t *rs,
    char *pw, const char **argv, size_t *len);
/* Server s as hiredis dials it: a numeric host and *port, or a socket's
   path and *port -1; NULL if it cannot be told. */
const char *slc_cache_redis_server_host(const slc_cache_redis_server_t *s,
    char *host, size_t hlen, int *port);
/* The worker's connection to service rs; NULL: none. */
slc_cache_redis_conn_t *slc_cache_redis_conn_of(
    const slc_cache_redis_service_t *rs);
/* The worker's connections, in a list (next). */
slc_cache_redis_conn_t *slc_cache_redis_conns_all(void);
/* Whether a command may go now: connected, set up, and `hiredis` takes
   it (the caller counts what it cannot send). */
int  slc_cache_redis_conn_ready(const slc_cache_redis_conn_t *rc);

/* A connection to node "ip:port" of seed's cluster, in *list, set up in
   the background; on_down when a set-up one is lost.  NULL without
   memory. */
slc_cache_redis_conn_t *slc_cache_redis_node_open(
    slc_cache_redis_conn_t *seed, const char *node,
    slc_cache_redis_conn_t **list,
    void (*on_down)(slc_cache_redis_conn_t *));
/* "ip:port" into host[hlen] and *port: SLC_ERROR unless a numeric IPv4
   address and a port (a name would be resolved blocking). */
int  slc_cache_redis_node_addr(const char *node, char *host, size_t hlen,
    int *port);
/* Something failed on rc: logged when news, dropped, retried later. */
void slc_cache_redis_conn_fail(slc_cache_redis_conn_t *rc, const char *what,
    const char *why, size_t len);

/* --- slc_cache_redis_cluster.c: a worker's view of a Redis Cluster -------- */

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

/* The reply to the setup's CLUSTER SLOTS of rc (a worker's first
   connection): a cluster's map applied, or a single Redis.  SLC_ERROR
   when `cluster on` and it is not one (the reason in why). */
int  slc_cache_redis_cluster_setup(slc_cache_redis_conn_t *rc,
    const struct redisReply *r, char *why, size_t cap);
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
/* At a worker's exit: its nodes' connections and the map. */
void slc_cache_redis_cluster_free(slc_cache_redis_conn_t *rc);

/* The services the servers of `cycle` use, each once, into used[0..max):
   how many. */
unsigned slc_cache_redis_services(const slc_cycle_t *cycle,
    const slc_cache_redis_service_t **used, unsigned max);

/* --- slc_cache_redis_sync.c: bumps from a process role -------------------- */

/* slc_cache_remote_t.bump_sync */
int  slc_cache_redis_bump_sync(const slc_cycle_t *cycle, const char *id,
    const uint32_t *hash, unsigned n, int all);
/* Its connections, at the process' exit. */
void slc_cache_redis_sync_close(void);
/* The keys of the tier, under rs' prefix (slc_cache_redis_tier.c): a
   table's generation (`all`: every table's) and a bump's once-only mark. */
#define SLC_REDIS_KEY_MAX      (SLC_REDIS_PREFIX_MAX + 88)
size_t slc_cache_redis_gen_key(const slc_cache_redis_service_t *rs,
    uint32_t table, int all, char *out);
size_t slc_cache_redis_gen_random(char *val, size_t cap);

/* --- slc_cache_redis_sub.c: pushed invalidations -------------------------- */

#define SLC_REDIS_SUB_MAX       16      /* services a cycle uses */
#define SLC_REDIS_SUB_BEAT_MS   250     /* the subscriber's own beat */
#define SLC_REDIS_SUB_LIVE_MS   1000    /* heard from within: live */
#define SLC_REDIS_PUSH_TABLES   256     /* in a message; more: all */
/* a message: "1 ", the origin (< 80), its ms (<= 20), the tables */
#define SLC_REDIS_MSG_MAX       (128 + SLC_REDIS_PUSH_TABLES * 9)

#define SLC_REDIS_SUB_DOWN      0
#define SLC_REDIS_SUB_LIVE      1

/*
 * The tables whose commits the binlog reader could not bump in a service
 * (down, slow, refusing): until it could, no entry of theirs is taken
 * from that service on this host (slc_cache_redis_behind), since it
 * still holds their old generations.  Written by the reader under `seq`;
 * more tables than fit make it `all`.
 */
#define SLC_REDIS_BEHIND_MAX    64

typedef struct {
    uint32_t    seq;                        /* seqlock */
    uint32_t    all;
    uint32_t    n;
    uint32_t    hash[SLC_REDIS_BEHIND_MAX];
} slc_cache_redis_behind_t;

/* A service's entry in the zone "cache_redis" (kept by name across a
   reload): its subscriber's state, written by it, read by workers; the
   binlog reader's marks; counters (atomics). */
typedef struct slc_cache_redis_sub_s {
    char        name[64];           /* "": free; first: the slot's
                                       name (slc_shm_slot_claim) */
    uint32_t    state;              /* SLC_REDIS_SUB_* */
    int32_t     pid;
    uint64_t    beat;               /* CLOCK_MONOTONIC ms: its own beat
                                       came back through Redis */
    uint64_t    received;           /* another host's, applied */
    uint64_t    own;                /* this host's, skipped */
    uint64_t    bad;                /* did not parse: all invalidated */
    uint64_t    published;          /* by this host's binlog reader */
    uint64_t    outages;            /* subscriptions lost */
    uint64_t    lat_n;              /* publish to apply, ms */
    uint64_t    lat_sum;
    uint64_t    lat_max;
    slc_cache_redis_behind_t behind;
} slc_cache_redis_sub_t;

/* The zone and, when a service needs pushes, the role (init_conf). */
int    slc_cache_redis_sub_init_conf(slc_cycle_t *cycle, char *err,
    size_t errlen);
void   slc_cache_redis_sub_exit(void);
void   slc_cache_redis_sub_report(slc_cycle_t *cycle);
/* Whether a zone hit of a server using `tier` may be served at `now`
   (the worker's CLOCK_MONOTONIC ms): its service needs no push, or its
   subscriber is live. */
int    slc_cache_redis_trusted(void *tier, uint64_t now);
/* Whether any of tables hash[0..n) of entry e waits for the binlog
   reader's bump (a worker, before a lookup). */
int    slc_cache_redis_behind(const slc_cache_redis_sub_t *e,
    const uint32_t *hash, unsigned n);
/* This host, as messages name it: "host:masterpid". */
void   slc_cache_redis_origin(char *out, size_t cap);
/* rs' channel into out (SLC_REDIS_KEY_MAX): its length. */
size_t slc_cache_redis_chan(const slc_cache_redis_service_t *rs, char *out);
/* A message for tables hash[0..n) (all: every table; neither: a beat). */
size_t slc_cache_redis_push_msg(char *out, size_t cap, const uint32_t *hash,
    unsigned n, int all);

/* --- the cache's remote tier: slc_cache_redis_tier.c (requests, keys, the
   hooks' table), slc_cache_redis_lookup.c, slc_cache_redis_bump.c ------- */

#define SLC_REDIS_GENS  (SLC_REDIS_VALUE_TABLES + 1)   /* tables and all */
/* unanswered bytes of stores and bumps a connection may have out: past
   it they are dropped (counted), never buffered */
#define SLC_REDIS_QUEUE_MAX  (8u << 20)

/*
 * A request the cache waits for: a lookup (done) or a strict bump (ack).
 * Queued in its connection's `lookups` until answered or timed out; freed
 * once released (by the cache, or by the tier after an ack) and every
 * reply it awaits has come.
 */
typedef struct slc_cache_redis_req_s {
    slc_cache_redis_conn_t         *rc;
    slc_cache_remote_done_pt        done;       /* NULL once answered */
    slc_cache_remote_ack_pt         ack;        /* a strict bump's */
    void                           *arg;
    slc_cache_remote_counters_t    *cnt;
    uint64_t                        deadline;
    unsigned                        replies;    /* awaited */
    unsigned                        queued:1;   /* in rc->lookups */
    unsigned                        released:1;
    unsigned                        in_done:1;
    unsigned                        fresh_ok:1; /* all there: may hit */
    unsigned                        store_ok:1; /* all known: storable
                                                   (once creating is 0) */
    unsigned                        held:1;     /* the entry replied: the
                                                   answer waits for the
                                                   creations */
    unsigned                        split:1;    /* a cluster's: the
                                                   entry and the
                                                   generations asked apart */
    unsigned                        got_gens:1; /* ... the latter came */
    unsigned                        got_entry:1; /* ... the former came
                                                   first: kept in ebuf */
    int                             etype;      /* its reply's type */
    uint8_t                        *ebuf;       /* its bytes (malloc'ed) */
    size_t                          elen;
    unsigned                        creating;   /* generations being
                                                   created, */
    uint32_t                        cmask;      /* by index */
    unsigned                        ntables;
    uint32_t                        table[SLC_REDIS_VALUE_TABLES];
    uint64_t                        gen[SLC_REDIS_GENS];  /* last: all */
    char                            ekey[SLC_REDIS_KEY_MAX];
    size_t                          eklen;
    size_t                          klen;
    TAILQ_ENTRY(slc_cache_redis_req_s) link;
    uint8_t                         key[];
} slc_cache_redis_req_t;

/* The hooks the cache calls (slc_cache_remote_t); a service is a tier. */
extern const slc_cache_remote_t  slc_cache_redis_remote;
/* A connection's requests at its setup and at its end. */
void slc_cache_redis_tier_init(slc_cache_redis_conn_t *rc);
void slc_cache_redis_tier_close(slc_cache_redis_conn_t *rc);

/* slc_cache_redis_tier.c, for the other two */
void   slc_cache_redis_req_free(slc_cache_redis_req_t *q);
/* Into the connection's timeout list (deadline set). */
void   slc_cache_redis_req_queue(slc_cache_redis_req_t *q);
void   slc_cache_redis_answer(slc_cache_redis_req_t *q,
    const slc_cache_remote_hit_t *hit);
void   slc_cache_redis_acked(slc_cache_redis_req_t *q, int ok);
void   slc_cache_redis_lookups_ok(slc_cache_redis_conn_t *rc,
    slc_cache_remote_counters_t *cnt);
void   slc_cache_redis_lookups_failed(slc_cache_redis_conn_t *rc,
    slc_cache_remote_counters_t *cnt, const char *why);
/* An entry's key: the prefix, "e:", and a 128-bit digest of the exact
   key in hex (the key itself is in the value, compared whole). */
size_t slc_cache_redis_entry_key(const slc_cache_redis_service_t *rs,
    const uint8_t *key, size_t klen, char *out);
/* The worker's command buffer, begun for nargs arguments. */
slc_cache_redis_resp_t *slc_cache_redis_cmd(unsigned nargs);
/* Send the command built in it: SLC_ERROR when hiredis refused it or it
   could not be built (nothing will call fn). */
int    slc_cache_redis_send(slc_cache_redis_conn_t *rc,
    void (*fn)(struct redisAsyncContext *, void *, void *), void *arg);
/* A fire-and-forget command of `size` queued bytes, given back at its
   reply (rc->queued). */
void   slc_cache_redis_on_sent(struct redisAsyncContext *ac, void *r,
    void *arg);
/* Wall-clock ms (an entry's expiry is read by every host). */
uint64_t slc_cache_redis_wall_ms(void);

/* slc_cache_redis_lookup.c: the hooks lookup and store */
void  *slc_cache_redis_lookup(void *tier, const slc_cache_remote_ask_t *ask,
    slc_cache_remote_counters_t *cnt, slc_cache_remote_done_pt done,
    void *arg);
void   slc_cache_redis_store(void *req, const slc_cache_store_t *st,
    const uint8_t *meta, uint64_t ttl);

/* slc_cache_redis_bump.c: the hook invalidate */
void  *slc_cache_redis_invalidate(void *tier, const uint32_t *hash,
    unsigned n, int all, slc_cache_remote_counters_t *cnt,
    slc_cache_remote_ack_pt ack, void *arg);

#endif /* SLC_CACHE_REDIS_H */
