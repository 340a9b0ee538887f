#ifndef SLC_CACHE_REDIS_CONN_H
#define SLC_CACHE_REDIS_CONN_H

/* slc_cache_redis_conn.c: a connection to a Redis on its process' loop, and
   its owner's hooks (slc_cache_redis_service.h lists the tier's files). */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_cache_redis_service.h"
#include "slc_cache_redis_breaker.h"

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
    unsigned                         paying:1; /* owed bumps on their way
                                                  (slc_cache_redis_bump.c) */
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
    /* its owner's hooks: more setup commands (slc_cache_redis_setup_
       command), its end, a node connection a seed opened (set up like
       it) */
    void                           (*on_setup)(
                                         struct slc_cache_redis_conn_s *);
    void                           (*on_free)(
                                         struct slc_cache_redis_conn_s *);
    void                           (*adopt)(
                                         struct slc_cache_redis_conn_s *);
    struct slc_cache_redis_cluster_s *cluster; /* a worker's first
                                                  connection to a cluster:
                                                  its map and nodes */
    struct slc_cache_redis_conn_s   *seed;     /* a node's: that first
                                                  connection; NULL */
    struct slc_cache_redis_conn_s   *next;
} slc_cache_redis_conn_t;

/* A connection to rs, in *list, not dialled yet (its owner sets its
   hooks, then slc_cache_redis_conn_start): set up in the background,
   then on_ready; on_down when a set-up one is lost (it comes back by
   itself).  NULL without memory. */
slc_cache_redis_conn_t *slc_cache_redis_conn_open(
    const slc_cache_redis_service_t *rs, slc_cache_redis_conn_t **list,
    const char *tag, void (*on_ready)(slc_cache_redis_conn_t *),
    void (*on_down)(slc_cache_redis_conn_t *), void *data);
void slc_cache_redis_conn_start(slc_cache_redis_conn_t *rc);
/* Each connection of *list closed and freed (its on_free first). */
void slc_cache_redis_conns_free(slc_cache_redis_conn_t **list);
/* From on_setup: a command of the setup, whose reply fn gets (it calls
   slc_cache_redis_setup_done, or slc_cache_redis_conn_fail); rc is ready
   once every setup reply came. */
void slc_cache_redis_setup_command(slc_cache_redis_conn_t *rc,
    void (*fn)(struct redisAsyncContext *, void *, void *), void *arg,
    int argc, const char **argv, const size_t *len);
void slc_cache_redis_setup_done(slc_cache_redis_conn_t *rc);
/* AUTH's arguments for rs into argv/len (at most 3), its password
   unmasked into pw (257 bytes: wipe it after use); 0 without one. */
int  slc_cache_redis_auth_argv(const slc_cache_redis_service_t *rs,
    char *pw, const char **argv, size_t *len);
/* Server s as hiredis dials it: a numeric host and *port, or a socket's
   path and *port -1; NULL if it cannot be told. */
const char *slc_cache_redis_server_host(const slc_cache_redis_server_t *s,
    char *host, size_t hlen, int *port);
/* Where a connection to rs goes: node ("ip:port", a cluster's) unless
   "", else its `server` number `server` (modulo their count): as
   slc_cache_redis_server_host. */
const char *slc_cache_redis_target(const slc_cache_redis_service_t *rs,
    const char *node, unsigned server, char *buf, size_t len, int *port);
/* Whether a command may go now: connected, set up, and `hiredis` takes
   it (the caller counts what it cannot send). */
int  slc_cache_redis_conn_ready(const slc_cache_redis_conn_t *rc);

/* Something failed on rc: logged when news, dropped, retried later. */
void slc_cache_redis_conn_fail(slc_cache_redis_conn_t *rc, const char *what,
    const char *why, size_t len);

#endif /* SLC_CACHE_REDIS_CONN_H */
