/*
 * Writes the proxy saw accepted move their tables' generations in Redis
 * (the hook invalidate of slc_cache_remote_t; slc_cache_redis_bump.h), in
 * every service of the worker.  Each generation is created first if
 * missing (SET NX of a random value: an INCR of a missing key would start
 * again from 1, a value an older entry may hold), then INCR.  Once Redis
 * acknowledged, the zones are invalidated again, so that an entry another
 * worker copied from Redis between the first invalidation and the bump
 * does not outlive the write.  In strict mode the service the session
 * uses gets its bump as a request the write's OK waits for.
 *
 * A bump that cannot go (Redis down, the connection's `queue` full, a
 * cluster's node unknown) or that Redis refused is owed
 * (slc_cache_redis_owed.h): no process of this host takes an entry of
 * its tables from Redis until it is paid, which the worker tries at its
 * next bump to that service and every 100 ms (a bump of the owed tables,
 * published like any), as the binlog reader does at each group.  So a
 * host that reads no binlog loses no invalidation to a slow or absent
 * Redis either: the other hosts learn it once Redis has it.
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_worker.h"
#include "slc_cache_redis_bump.h"
#include "slc_cache_redis_tier.h"
#include "slc_cache_redis_cluster.h"
#include "slc_cache_redis_keys.h"
#include "slc_cache_redis_sub.h"
#include "slc_cache_redis_owed.h"

#include <hiredis.h>
#include <async.h>

#define SLC_REDIS_BUMP_BYTES   128         /* counted queued per table */
#define SLC_REDIS_PAY_MS       100         /* owed bumps tried again */

/* What a bump moved, to invalidate the zones again once Redis has it. */
typedef struct {
    const slc_cache_redis_service_t *rs;
    slc_cache_redis_conn_t *rc;         /* sent on (lives to the exit) */
    size_t                  size;
    unsigned                all:1;
    unsigned                n;
    slc_cache_redis_req_t  *req;        /* a strict bump's, or NULL */
    slc_cache_redis_behind_t *paid;     /* the owed marks it delivers */
    uint32_t                hash[];
} slc_cache_redis_bump_t;

/* Counters of the bumps a worker delivers on its own (no zone's). */
static slc_cache_remote_counters_t  slc_cache_redis_owed_cnt;
static slc_timer_t                  slc_cache_redis_owed_timer;

static void slc_cache_redis_owed_arm(void);
static void slc_cache_redis_pay(slc_cache_redis_conn_t *rc);

/* A write's bump that could not go (or failed): owed, delivered later. */
static void
slc_cache_redis_owe(const slc_cache_redis_service_t *rs, const uint32_t *hash,
    unsigned n, int all)
{
    slc_cache_redis_owed_add(rs, hash, n, all);
    slc_cache_redis_owed_arm();
}

static void
slc_cache_redis_on_bumped(redisAsyncContext *ac, void *r, void *arg)
{
    slc_cache_redis_bump_t *b = arg;
    redisReply             *reply = r;
    slc_cache_redis_req_t  *q = b->req;
    int                     ok = reply != NULL
                                 && reply->type == REDIS_REPLY_INTEGER;

    slc_cache_redis_on_sent(ac, NULL, (void *) (uintptr_t) b->size);
    if (ok && slc_worker_cycle != NULL) {
        slc_cache_zones_invalidate(slc_worker_cycle, b->hash, b->n, b->all,
            slc_loop->now);
    }
    if (b->paid != NULL) {
        b->rc->paying = 0;
        if (ok) {
            slc_cache_redis_owed_paid(b->rs, b->paid);
        }
    } else if (!ok && ac->data != NULL) {
        slc_cache_redis_owe(b->rs, b->hash, b->n, b->all);
    }
    if (q != NULL) {
        q->replies--;
        if (q->ack != NULL) {
            if (ok) {
                slc_cache_redis_lookups_ok(q->rc, q->cnt);
            } else {
                slc_cache_bump(q->cnt->errors);
            }
            slc_cache_redis_acked(q, ok);
        }
        slc_cache_redis_req_free(q);
    }
    free(b->paid);
    free(b);
}

/* The write, pushed to the hosts that read no binlog
   (slc_cache_redis_sub.c), after its bumps. */
static void
slc_cache_redis_publish(slc_cache_redis_conn_t *rc, const uint32_t *hash,
    unsigned n, int all, slc_cache_remote_counters_t *cnt)
{
    slc_cache_redis_resp_t *r;
    char                    chan[SLC_REDIS_KEY_MAX];
    char                    msg[SLC_REDIS_MSG_MAX];
    size_t                  len = slc_cache_redis_push_msg(msg, sizeof(msg),
                                      hash, n, all);

    r = slc_cache_redis_cmd(3);
    slc_cache_redis_resp_str(r, "PUBLISH");
    slc_cache_redis_resp_arg(r, chan, slc_cache_redis_chan(rc->rs, chan));
    slc_cache_redis_resp_arg(r, msg, len);
    if (slc_cache_redis_send(rc, NULL, NULL) == SLC_OK) {
        slc_cache_bump(cnt->published);
    }
}

/* One table's generation: SET NX, INCR; `last` carries the reply's
   work. */
static int
slc_cache_redis_bump_one(slc_cache_redis_conn_t *rc, uint32_t table,
    int all, slc_cache_redis_bump_t *last)
{
    slc_cache_redis_resp_t *r = slc_cache_redis_cmd(4);
    char                    key[SLC_REDIS_KEY_MAX], val[24];
    size_t                  klen = slc_cache_redis_gen_key(rc->rs, table,
                                                           all, key);

    slc_cache_redis_resp_str(r, "SET");
    slc_cache_redis_resp_arg(r, key, klen);
    slc_cache_redis_resp_arg(r, val, slc_cache_redis_gen_random(val,
                                                                sizeof(val)));
    slc_cache_redis_resp_str(r, "NX");
    if (slc_cache_redis_send(rc, NULL, NULL) != SLC_OK) {
        return SLC_ERROR;
    }
    r = slc_cache_redis_cmd(2);
    slc_cache_redis_resp_str(r, "INCR");
    slc_cache_redis_resp_arg(r, key, klen);
    return slc_cache_redis_send(rc, last != NULL ? slc_cache_redis_on_bumped
                                                 : NULL, last);
}

/* The bumps of a write on one connection; q: the request waiting for
   them (a strict bump), or NULL; paid: the owed marks they deliver, or
   NULL (a write's: owed if they cannot go).  SLC_ERROR when the last
   could not be sent (nothing will answer q; paid is the caller's). */
static int
slc_cache_redis_bump(slc_cache_redis_conn_t *rc, const uint32_t *hash,
    unsigned n, int all, slc_cache_remote_counters_t *cnt,
    slc_cache_redis_req_t *q, slc_cache_redis_behind_t *paid)
{
    slc_cache_redis_bump_t *b;
    unsigned                k = all ? 1 : n;
    size_t                  size = SLC_REDIS_BUMP_BYTES * k;

    if (k == 0) {
        return SLC_ERROR;
    }
    if (!slc_cache_redis_conn_ready(rc)
        || rc->queued + size > rc->rs->queue
        || (b = malloc(sizeof(*b) + n * sizeof(uint32_t))) == NULL)
    {
        slc_cache_bump(cnt->dropped);
        if (paid == NULL) {
            slc_cache_redis_owe(rc->rs, hash, n, all);
        }
        return SLC_ERROR;
    }
    *b = (slc_cache_redis_bump_t) { .rs = rc->rs, .rc = rc, .size = size,
                                    .all = all, .n = n, .req = q,
                                    .paid = paid };
    memcpy(b->hash, hash, n * sizeof(uint32_t));
    for (unsigned i = 0; i < k; i++) {
        if (slc_cache_redis_bump_one(rc, all ? 0 : hash[i], all,
                                     i + 1 == k ? b : NULL) != SLC_OK)
        {
            /* hiredis refuses only when its context is going away */
            slc_cache_bump(cnt->dropped);
            if (i + 1 == k) {
                if (paid == NULL) {
                    slc_cache_redis_owe(rc->rs, hash, n, all);
                }
                free(b);
                return SLC_ERROR;
            }
            continue;
        }
        slc_cache_bump(cnt->bumps);
    }
    rc->queued += size;             /* (the last reply gives it back) */
    slc_cache_redis_publish(rc, hash, n, all, cnt);
    return SLC_OK;
}

/* A strict bump: a request the write's response waits for, answered by
   the last INCR's reply or its timeout. */
static void *
slc_cache_redis_bump_wait(slc_cache_redis_conn_t *rc, const uint32_t *hash,
    unsigned n, int all, slc_cache_remote_counters_t *cnt,
    slc_cache_remote_ack_pt ack, void *arg)
{
    slc_cache_redis_req_t *q;

    if (!slc_cache_redis_conn_ready(rc)
        || (q = calloc(1, sizeof(*q))) == NULL)
    {
        slc_cache_bump(cnt->dropped);
        slc_cache_redis_owe(rc->rs, hash, n, all);
        return NULL;
    }
    *q = (slc_cache_redis_req_t) {
        .rc = rc, .ack = ack, .arg = arg, .cnt = cnt, .replies = 1,
        .deadline = slc_loop->now + (uint64_t) rc->rs->timeout,
    };
    if (slc_cache_redis_bump(rc, hash, n, all, cnt, q, NULL) != SLC_OK) {
        free(q);
        return NULL;
    }
    slc_cache_redis_req_queue(q);
    return q;
}

void *
slc_cache_redis_invalidate(void *tier, const uint32_t *hash, unsigned n,
    int all, slc_cache_remote_counters_t *cnt, slc_cache_remote_ack_pt ack,
    void *arg)
{
    void *req = NULL;

    for (slc_cache_redis_conn_t *seed = slc_cache_redis_conns_all();
         seed != NULL; seed = seed->next)
    {
        /* a cluster's generations live on one node */
        slc_cache_redis_conn_t *rc = slc_cache_redis_route(seed,
                                         slc_cache_redis_gslot(seed));

        if (rc == NULL) {
            slc_cache_bump(cnt->dropped);
            slc_cache_redis_owe(seed->rs, hash, n, all);
            continue;
        }
        slc_cache_redis_pay(rc);
        if (ack != NULL && rc->rs == tier) {
            req = slc_cache_redis_bump_wait(rc, hash, n, all, cnt, ack, arg);
        } else {
            slc_cache_redis_bump(rc, hash, n, all, cnt, NULL, NULL);
        }
    }
    return req;
}


/* --- what this host owes ------------------------------------------------- */

/* The bumps rc's service is owed by this host, sent (once at a time). */
static void
slc_cache_redis_pay(slc_cache_redis_conn_t *rc)
{
    slc_cache_redis_behind_t *snap;

    if (rc->paying || !slc_cache_redis_owed_any(rc->rs, NULL, 0)
        || !slc_cache_redis_conn_ready(rc)
        || (snap = malloc(sizeof(*snap))) == NULL)
    {
        return;                     /* (the usual case: nothing owed) */
    }
    if (!slc_cache_redis_owed_take(rc->rs, snap)
        || slc_cache_redis_bump(rc, snap->hash, snap->n, snap->all,
                                &slc_cache_redis_owed_cnt, NULL, snap)
           != SLC_OK)
    {
        free(snap);
        return;
    }
    rc->paying = 1;
}

/* Every 100 ms while this worker marked something: each service paid
   what it is owed, where it can be. */
static void
slc_cache_redis_owed_tick(slc_timer_t *t)
{
    slc_cache_redis_behind_t snap;
    int                      left = 0;

    (void) t;
    for (slc_cache_redis_conn_t *seed = slc_cache_redis_conns_all();
         seed != NULL; seed = seed->next)
    {
        slc_cache_redis_conn_t *rc = slc_cache_redis_route(seed,
                                         slc_cache_redis_gslot(seed));

        if (rc != NULL) {
            slc_cache_redis_pay(rc);
        }
        left |= slc_cache_redis_owed_take(seed->rs, &snap);
    }
    if (left) {
        slc_cache_redis_owed_arm();
    }
}

static void
slc_cache_redis_owed_arm(void)
{
    slc_timer_t *t = &slc_cache_redis_owed_timer;

    if (!t->armed && slc_loop != NULL) {
        t->handler = slc_cache_redis_owed_tick;
        slc_timer_add(slc_loop, t, SLC_REDIS_PAY_MS);
    }
}

void
slc_cache_redis_owed_stop(void)
{
    if (slc_cache_redis_owed_timer.armed) {
        slc_timer_del(slc_loop, &slc_cache_redis_owed_timer);
    }
}
