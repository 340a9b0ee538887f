#ifndef SLC_CACHE_REDIS_SUB_H
#define SLC_CACHE_REDIS_SUB_H

/* slc_cache_redis_sub.c: pushed invalidations (slc_cache_redis_service.h
   lists the tier's files). */

#include "slc_core.h"
#include "slc_shmtx.h"
#include "slc_cache_redis_service.h"
#include "slc_cache_redis_owed.h"

#define SLC_REDIS_SUB_MAX       16      /* services a cycle uses */
#define SLC_REDIS_SUB_BEAT_MS   250     /* the subscriber's own beat */
#define SLC_REDIS_SUB_LIVE_MS   1000    /* heard from within: live */
#define SLC_REDIS_PUSH_TABLES   256     /* in a message; more: all */
/* a message: "1 ", the origin (< 80), its ms (<= 20), the tables */
#define SLC_REDIS_MSG_MAX       (128 + SLC_REDIS_PUSH_TABLES * 9)

#define SLC_REDIS_SUB_DOWN      0
#define SLC_REDIS_SUB_LIVE      1


/* A service's entry in the zone "cache_redis" (kept by name across a
   reload): its subscriber's state, written by it, read by workers; the
   bumps this host owes it (slc_cache_redis_owed.h); counters (atomics). */
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

/* The zone "cache_redis" (declared by slc_cache_redis.c): the lock the
   owed marks' writers take, and an entry per service. */
typedef struct {
    slc_shmtx_t             lock;
    slc_cache_redis_sub_t   entry[SLC_REDIS_SUB_MAX];
} slc_cache_redis_zone_t;

/* The zone at zn: an entry for each service of used[0..k), kept by name
   across a reload, and the lock.  SLC_ERROR (err) when they do not
   fit. */
int    slc_cache_redis_sub_attach(slc_cache_redis_zone_t *zn,
    const slc_cache_redis_service_t *const *used, unsigned k, char *err,
    size_t errlen);
/* The redis_sub process of service rs (its role's init): subscribes and
   beats in the background.  SLC_ERROR without memory. */
int    slc_cache_redis_sub_run(slc_cycle_t *cycle,
    const slc_cache_redis_service_t *rs);
void   slc_cache_redis_sub_exit(void);
/* The entries of used[0..k), logged (`sluice -s stats`). */
void   slc_cache_redis_sub_report(const slc_cache_redis_service_t *const *used,
    unsigned k);
/* Whether a zone hit of a server using `tier` may be served at `now`
   (the worker's CLOCK_MONOTONIC ms): its service needs no push, or its
   subscriber is live. */
int    slc_cache_redis_trusted(void *tier, uint64_t now);
/* This host, as messages name it: "host:masterpid". */
void   slc_cache_redis_origin(char *out, size_t cap);
/* rs' channel into out (SLC_REDIS_KEY_MAX): its length. */
size_t slc_cache_redis_chan(const slc_cache_redis_service_t *rs, char *out);
/* A message for tables hash[0..n) (all: every table; neither: a beat). */
size_t slc_cache_redis_push_msg(char *out, size_t cap, const uint32_t *hash,
    unsigned n, int all);

#endif /* SLC_CACHE_REDIS_SUB_H */
