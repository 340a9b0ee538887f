#ifndef SLC_CACHE_REDIS_TIER_H
#define SLC_CACHE_REDIS_TIER_H

/* slc_cache_redis_tier.c: a worker's connections, its requests and their
   budget, sending (slc_cache_redis_service.h lists the tier's files). */

#include "slc_cache.h"
#include "slc_cache_redis_conn.h"
#include "slc_cache_redis_resp.h"
#include "slc_cache_redis_value.h"
#include "slc_cache_redis_keys.h"

#define SLC_REDIS_GENS  (SLC_REDIS_VALUE_TABLES + 1)   /* tables and all */

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

/* In a worker: one connection per service in rs[0..n) (a cluster's seed
   when it is one), set up in the background; SLC_ERROR without memory. */
int  slc_cache_redis_conns_open(const slc_cache_redis_service_t *const *rs,
    unsigned n);
/* At the worker's exit. */
void slc_cache_redis_conns_close(void);
/* The worker's connection to service rs; NULL: none. */
slc_cache_redis_conn_t *slc_cache_redis_conn_of(
    const slc_cache_redis_service_t *rs);
/* The worker's connections, in a list (next). */
slc_cache_redis_conn_t *slc_cache_redis_conns_all(void);
/* slc_cache_remote_t.release: the cache is done with a request. */
void   slc_cache_redis_release(void *req);

/* slc_cache_redis_tier.c, for the lookup and the bumps */
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

#endif /* SLC_CACHE_REDIS_TIER_H */
