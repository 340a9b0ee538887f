/*
 * Writes the proxy saw accepted move their tables' generations in Redis
 * (the hook invalidate of slc_cache_remote_t; slc_cache_redis_bump.h), in every
 * service of the worker.  Each generation is created first if missing
 * (SET NX of a random value: an INCR of a missing key would start again
 * from 1, a value an older entry may hold), then INCR.  Once Redis
 * acknowledged, the zones are invalidated again, so that an entry another
 * worker copied from Redis between the first invalidation and the bump
 * does not outlive the write.  In strict mode the service the session
 * uses gets its bump as a request the write's OK waits for.
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_worker.h"
#include "slc_cache_redis_bump.h"
#include "slc_cache_redis_tier.h"
#include "slc_cache_redis_cluster.h"
#include "slc_cache_redis_keys.h"
#include "slc_cache_redis_sub.h"

#include <hiredis.h>
#include <async.h>

#define SLC_REDIS_BUMP_BYTES   128         /* counted queued per table */

/* What a bump moved, to invalidate the zones again once Redis has it. */
typedef struct {
    size_t                  size;
    unsigned                all:1;
    unsigned                n;
    slc_cache_redis_req_t  *req;        /* a strict bump's, or NULL */
    uint32_t                hash[];
} slc_cache_redis_bump_t;

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
   them (a strict bump), or NULL.  SLC_ERROR when the last could not be
   sent (nothing will answer q). */
static int
slc_cache_redis_bump(slc_cache_redis_conn_t *rc, const uint32_t *hash,
    unsigned n, int all, slc_cache_remote_counters_t *cnt,
    slc_cache_redis_req_t *q)
{
    slc_cache_redis_bump_t *b;
    unsigned                k = all ? 1 : n;
    size_t                  size = SLC_REDIS_BUMP_BYTES * k;

    if (k == 0) {
        return SLC_ERROR;
    }
    if (!slc_cache_redis_conn_ready(rc)
        || rc->queued + size > SLC_REDIS_QUEUE_MAX
        || (b = malloc(sizeof(*b) + n * sizeof(uint32_t))) == NULL)
    {
        slc_cache_bump(cnt->dropped);
        return SLC_ERROR;
    }
    *b = (slc_cache_redis_bump_t) { .size = size, .all = all, .n = n,
                                    .req = q };
    memcpy(b->hash, hash, n * sizeof(uint32_t));
    for (unsigned i = 0; i < k; i++) {
        if (slc_cache_redis_bump_one(rc, all ? 0 : hash[i], all,
                                     i + 1 == k ? b : NULL) != SLC_OK)
        {
            /* hiredis refuses only when its context is going away */
            slc_cache_bump(cnt->dropped);
            if (i + 1 == k) {
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
        return NULL;
    }
    *q = (slc_cache_redis_req_t) {
        .rc = rc, .ack = ack, .arg = arg, .cnt = cnt, .replies = 1,
        .deadline = slc_loop->now + (uint64_t) rc->rs->timeout,
    };
    if (slc_cache_redis_bump(rc, hash, n, all, cnt, q) != SLC_OK) {
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
        } else if (ack != NULL && rc->rs == tier) {
            req = slc_cache_redis_bump_wait(rc, hash, n, all, cnt, ack, arg);
        } else {
            slc_cache_redis_bump(rc, hash, n, all, cnt, NULL);
        }
    }
    return req;
}
