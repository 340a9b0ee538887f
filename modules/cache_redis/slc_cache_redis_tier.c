/*
 * The cache's remote tier in Redis (slc_cache_redis_tier.h; the hooks of
 * slc_cache_remote_t): a worker's requests on its connection
 * (slc_cache_redis_conn.c), never a blocking call.  This file: requests
 * and their budget, keys, sending; the lookup and the store are
 * slc_cache_redis_lookup.c's, the bumps slc_cache_redis_bump.c's.
 *
 * Budget: a request (a lookup, a strict bump) not answered within the
 * service's `timeout` ends as a miss or a failed bump, and counts against
 * the connection's breaker for lookups (SLC_REDIS_FAILURES in a row open
 * it: lookups skip Redis for a back-off from 1 s doubling to 30 s, then
 * one probe decides; logged and counted).  Stores and plain bumps are
 * never waited for; past the service's `queue` of unanswered bytes per
 * connection (8 MiB by default) they are dropped and counted.
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_cache_redis_tier.h"
#include "slc_cache_redis_cluster.h"

#include <hiredis.h>
#include <async.h>

#define SLC_REDIS_FAILURES     3
#define SLC_REDIS_OPEN_MIN     1000
#define SLC_REDIS_OPEN_MAX     30000


/* --- sending -------------------------------------------------------------- */

/* The worker's one command buffer: a command is built and sent before the
   next begins (hiredis copies it). */
static slc_cache_redis_resp_t  slc_cache_redis_resp;

slc_cache_redis_resp_t *
slc_cache_redis_cmd(unsigned nargs)
{
    slc_cache_redis_resp_begin(&slc_cache_redis_resp, nargs);
    return &slc_cache_redis_resp;
}

int
slc_cache_redis_send(slc_cache_redis_conn_t *rc,
    void (*fn)(struct redisAsyncContext *, void *, void *), void *arg)
{
    const slc_cache_redis_resp_t *r = &slc_cache_redis_resp;

    if (r->oom || !slc_cache_redis_conn_ready(rc)) {
        return SLC_ERROR;
    }
    if (slc_cache_redis_clustered(rc)) {
        return slc_cache_redis_cluster_send(rc, fn, arg, r->buf, r->len);
    }
    return redisAsyncFormattedCommand(rc->ac, fn, arg, (const char *) r->buf,
                                      r->len) == REDIS_OK
           ? SLC_OK : SLC_ERROR;
}

void
slc_cache_redis_on_sent(redisAsyncContext *ac, void *r, void *arg)
{
    slc_cache_redis_conn_t *rc = ac->data;
    size_t                  n = (size_t) (uintptr_t) arg;

    (void) r;
    if (rc != NULL) {
        rc->queued -= slc_min(rc->queued, n);
    }
}


/* --- requests ------------------------------------------------------------- */

void
slc_cache_redis_req_free(slc_cache_redis_req_t *q)
{
    if (q->released && q->replies == 0 && !q->in_done) {
        free(q->ebuf);
        free(q);
    }
}

static void slc_cache_redis_expire_arm(slc_cache_redis_conn_t *rc);

void
slc_cache_redis_req_queue(slc_cache_redis_req_t *q)
{
    TAILQ_INSERT_TAIL(&q->rc->lookups, q, link);
    q->queued = 1;
    if (!q->rc->expire.armed) {
        slc_cache_redis_expire_arm(q->rc);
    }
}

static void
slc_cache_redis_unqueue(slc_cache_redis_req_t *q)
{
    if (q->queued) {
        TAILQ_REMOVE(&q->rc->lookups, q, link);
        q->queued = 0;
        slc_cache_redis_expire_arm(q->rc);
    }
}

/* The lookup's answer, once: out of the timeout list, to the cache. */
void
slc_cache_redis_answer(slc_cache_redis_req_t *q,
    const slc_cache_remote_hit_t *hit)
{
    slc_cache_remote_done_pt done = q->done;

    slc_cache_redis_unqueue(q);
    q->done = NULL;
    if (done != NULL) {
        q->in_done = 1;
        done(q->arg, hit);
        q->in_done = 0;
    }
}

/* A strict bump's end, once: the request is the tier's after it. */
void
slc_cache_redis_acked(slc_cache_redis_req_t *q, int ok)
{
    slc_cache_remote_ack_pt ack = q->ack;

    slc_cache_redis_unqueue(q);
    q->ack = NULL;
    q->released = 1;
    if (ack != NULL) {
        q->in_done = 1;
        ack(q->arg, ok);
        q->in_done = 0;
    }
}

void
slc_cache_redis_lookups_ok(slc_cache_redis_conn_t *rc,
    slc_cache_remote_counters_t *cnt)
{
    if (slc_cache_redis_breaker_success(&rc->rbreaker)) {
        slc_cache_bump(cnt->closed);
        slc_log(SLC_LOG_NOTICE, "redis \"%s\": answering again: lookups "
            "go to it", rc->rs->name);
    }
}

void
slc_cache_redis_lookups_failed(slc_cache_redis_conn_t *rc,
    slc_cache_remote_counters_t *cnt, const char *why)
{
    if (slc_cache_redis_breaker_failure(&rc->rbreaker, slc_loop->now)) {
        slc_cache_bump(cnt->opened);
        slc_log(SLC_LOG_WARN, "redis \"%s\": %s: lookups skip it for "
            "%llu ms (the cache goes on in shared memory)", rc->rs->name,
            why, (unsigned long long) (rc->rbreaker.until - slc_loop->now));
    }
}

/* The oldest requests past their deadline end: a miss, a failed bump. */
static void
slc_cache_redis_expire(slc_timer_t *t)
{
    slc_cache_redis_conn_t *rc = t->data;
    slc_cache_redis_req_t  *q;

    while ((q = TAILQ_FIRST(&rc->lookups)) != NULL
           && q->deadline <= slc_loop->now)
    {
        slc_cache_bump(q->cnt->timeouts);
        slc_cache_redis_lookups_failed(rc, q->cnt, "no answer within "
            "its timeout");
        if (q->ack != NULL) {
            slc_cache_redis_acked(q, 0);
        } else {
            slc_cache_redis_answer(q, NULL);
        }
        slc_cache_redis_req_free(q);
    }
    slc_cache_redis_expire_arm(rc);
}

static void
slc_cache_redis_expire_arm(slc_cache_redis_conn_t *rc)
{
    slc_cache_redis_req_t *q = TAILQ_FIRST(&rc->lookups);

    if (rc->expire.armed) {
        slc_timer_del(slc_loop, &rc->expire);
    }
    if (q != NULL) {
        slc_timer_add(slc_loop, &rc->expire,
            q->deadline > slc_loop->now ? q->deadline - slc_loop->now : 1);
    }
}

static void
slc_cache_redis_tier_init(slc_cache_redis_conn_t *rc)
{
    TAILQ_INIT(&rc->lookups);
    rc->expire.handler = slc_cache_redis_expire;
    rc->expire.data = rc;
    slc_cache_redis_breaker_init(&rc->rbreaker, SLC_REDIS_FAILURES,
        SLC_REDIS_OPEN_MIN, SLC_REDIS_OPEN_MAX);
}

/* The worker exits: no request is answered any more (their sessions may
   be gone), and hiredis' callbacks, when it frees its context, free
   them. */
static void
slc_cache_redis_tier_close(slc_cache_redis_conn_t *rc)
{
    slc_cache_redis_req_t *q;

    while ((q = TAILQ_FIRST(&rc->lookups)) != NULL) {
        TAILQ_REMOVE(&rc->lookups, q, link);
        q->queued = 0;
        q->done = NULL;
        q->ack = NULL;
        q->released = 1;
    }
    if (rc->expire.armed) {
        slc_timer_del(slc_loop, &rc->expire);
    }
}

/* The cache is done with a request, answered or not. */
void
slc_cache_redis_release(void *req)
{
    slc_cache_redis_req_t *q = req;

    slc_cache_redis_unqueue(q);
    q->done = NULL;
    q->ack = NULL;
    q->released = 1;
    slc_cache_redis_req_free(q);
}


/* --- a worker's connections ----------------------------------------------- */

static slc_cache_redis_conn_t  *slc_cache_redis_conns;

/* A seed's end: its requests, then its cluster's nodes. */
static void
slc_cache_redis_seed_free(slc_cache_redis_conn_t *rc)
{
    slc_cache_redis_tier_close(rc);
    slc_cache_redis_cluster_free(rc);
}

/* A cluster's node connection: requests on it as on its seed. */
static void
slc_cache_redis_adopt(slc_cache_redis_conn_t *rc)
{
    slc_cache_redis_tier_init(rc);
    rc->on_free = slc_cache_redis_tier_close;
}

int
slc_cache_redis_conns_open(const slc_cache_redis_service_t *const *rs,
    unsigned n)
{
    slc_cache_redis_conn_t *rc;

    for (unsigned i = 0; i < n; i++) {
        rc = slc_cache_redis_conn_open(rs[i], &slc_cache_redis_conns, NULL,
                                       NULL, NULL, NULL);
        if (rc == NULL) {
            return SLC_ERROR;
        }
        slc_cache_redis_tier_init(rc);
        rc->on_free = slc_cache_redis_seed_free;
        rc->adopt = slc_cache_redis_adopt;
        if (rs[i]->cluster != 0) {
            rc->on_setup = slc_cache_redis_cluster_ask;
        }
        slc_cache_redis_conn_start(rc);
    }
    return SLC_OK;
}

void
slc_cache_redis_conns_close(void)
{
    slc_cache_redis_conns_free(&slc_cache_redis_conns);
}

slc_cache_redis_conn_t *
slc_cache_redis_conn_of(const slc_cache_redis_service_t *rs)
{
    slc_cache_redis_conn_t *rc;

    for (rc = slc_cache_redis_conns; rc != NULL && rc->rs != rs;
         rc = rc->next)
    {
        /* a worker has a few */
    }
    return rc;
}

slc_cache_redis_conn_t *
slc_cache_redis_conns_all(void)
{
    return slc_cache_redis_conns;
}
