/*
 * A lookup in the Redis tier, and the store after a miss (the hooks
 * lookup and store of slc_cache_remote_t; slc_cache_redis_lookup.h).
 *
 * A lookup is one command: MGET of the entry and of the generations of
 * the tables it reads, and every table's; in a cluster, where they share
 * no slot, two (GET of the entry on its node, MGET of the generations on
 * theirs: the one that comes first waits for the other).  A hit is a
 * value that decodes, holds the same exact key (compared whole), has not
 * expired (its expiry is wall-clock: hosts' clocks in step), and recorded
 * the generations Redis has now for exactly those tables: a generation
 * that moved, or that is missing (Redis restarted empty, flushed, evicted
 * it), makes it stale.  After a miss the backend's answer is stored with
 * the generations the lookup saw, which it fetched before the read went
 * out: a write that commits after the read moves one of them (its bump
 * comes after its commit), so the entry is stale from then on.  A missing
 * generation is created before the read goes out (SET NX GET of a random
 * value, none an entry recorded; Redis 7.0 or later), and the lookup's
 * answer waits for it, so that what the entry records was read before
 * the read.
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_cache_redis_lookup.h"
#include "slc_cache_redis_tier.h"
#include "slc_cache_redis_cluster.h"
#include "slc_cache_redis_keys.h"
#include "slc_cache_redis_slots.h"
#include "slc_cache_redis_owed.h"

#include <hiredis.h>
#include <async.h>

#define SLC_REDIS_LOG_EVERY    60000       /* ms between decode reports */


/* --- generations ---------------------------------------------------------- */

/* A decimal generation of 1 to 19 digits (what SET and INCR leave);
   SLC_ERROR for anything else. */
static int
slc_cache_redis_gen_parse(const redisReply *r, uint64_t *gen)
{
    uint64_t v = 0;

    if (r->type != REDIS_REPLY_STRING || r->len == 0 || r->len > 19) {
        return SLC_ERROR;
    }
    for (size_t i = 0; i < r->len; i++) {
        if (r->str[i] < '0' || r->str[i] > '9') {
            return SLC_ERROR;
        }
        v = v * 10 + (uint64_t) (r->str[i] - '0');
    }
    *gen = v;
    return SLC_OK;
}

/* A created generation: ours (nil: the SET won) or the one that won. */
static void
slc_cache_redis_on_created(redisAsyncContext *ac, void *r, void *arg)
{
    slc_cache_redis_req_t *q = arg;
    redisReply            *reply = r;
    unsigned               i;

    (void) ac;
    q->replies--;
    q->creating--;
    i = (unsigned) __builtin_ctz(q->cmask);     /* replies come in order */
    q->cmask &= q->cmask - 1;
    if (reply == NULL || (reply->type != REDIS_REPLY_NIL
                          && slc_cache_redis_gen_parse(reply, &q->gen[i])
                             != SLC_OK))
    {
        q->store_ok = 0;
    }
    if (q->creating == 0 && q->held && q->done != NULL) {
        slc_cache_redis_answer(q, NULL);
    }
    slc_cache_redis_req_free(q);
}

/* Generation i (q->ntables: every table's) is missing: created with SET
   NX GET of a random value. */
static void
slc_cache_redis_gen_create(slc_cache_redis_req_t *q, unsigned i)
{
    slc_cache_redis_conn_t *rc = q->rc;
    slc_cache_redis_resp_t *r = slc_cache_redis_cmd(5);
    char                    key[SLC_REDIS_KEY_MAX], val[24];
    size_t                  vlen = slc_cache_redis_gen_random(val,
                                                              sizeof(val));

    slc_cache_redis_resp_str(r, "SET");
    slc_cache_redis_resp_arg(r, key, slc_cache_redis_gen_key(rc->rs,
        i < q->ntables ? q->table[i] : 0, i == q->ntables, key));
    slc_cache_redis_resp_arg(r, val, vlen);
    slc_cache_redis_resp_str(r, "NX");
    slc_cache_redis_resp_str(r, "GET");
    if (slc_cache_redis_send(rc, slc_cache_redis_on_created, q) != SLC_OK) {
        q->store_ok = 0;
        return;
    }
    q->replies++;
    q->creating++;
    q->cmask |= 1u << i;
    q->gen[i] = strtoull(val, NULL, 10);        /* if ours wins */
}

/* The generations of the MGET's reply (its elements 1..): kept; a missing
   one is created. */
static void
slc_cache_redis_gens(slc_cache_redis_req_t *q, redisReply **el)
{
    q->fresh_ok = q->store_ok = 1;
    for (unsigned i = 0; i <= q->ntables; i++) {
        if (slc_cache_redis_gen_parse(el[i], &q->gen[i]) == SLC_OK) {
            continue;
        }
        q->fresh_ok = 0;            /* missing: every entry is stale */
        if (el[i]->type == REDIS_REPLY_NIL) {
            slc_cache_redis_gen_create(q, i);
        } else {
            q->store_ok = 0;        /* not a number: never stored under */
        }
    }
}


/* --- the entry ------------------------------------------------------------ */

/* A value that is not ours, or garbage: counted, logged now and then. */
static void
slc_cache_redis_foreign(slc_cache_redis_req_t *q, const char *what)
{
    slc_cache_redis_conn_t *rc = q->rc;

    slc_cache_bump(q->cnt->decode_errors);
    if (rc->decode_logged == 0
        || slc_loop->now - rc->decode_logged >= SLC_REDIS_LOG_EVERY)
    {
        rc->decode_logged = slc_loop->now;
        slc_log(SLC_LOG_WARN, "redis \"%s\": %s under \"%s\" is not an "
            "entry of this sluice: a miss, never served (reported once a "
            "minute)", rc->rs->name, what, q->ekey);
    }
}

/* Whether v recorded exactly the generations Redis has now for the
   tables the lookup asked, and has not expired. */
static int
slc_cache_redis_fresh(const slc_cache_redis_req_t *q,
    const slc_cache_redis_value_t *v, uint64_t wall)
{
    if (!q->fresh_ok || v->ntables != q->ntables
        || v->allgen != q->gen[q->ntables] || v->expires <= wall)
    {
        return 0;
    }
    for (unsigned i = 0; i < v->ntables; i++) {
        unsigned j;

        for (j = 0; j < q->ntables && q->table[j] != v->table[i]; j++) {
            /* find it */
        }
        if (j == q->ntables || q->gen[j] != v->gen[i]) {
            return 0;
        }
    }
    return 1;
}

/* The entry's element: 1 and the answer in *hit (pointing into e and
   *v), or 0 (counted why). */
static int
slc_cache_redis_entry(slc_cache_redis_req_t *q, const redisReply *e,
    slc_cache_redis_value_t *vp, slc_cache_remote_hit_t *hit)
{
    slc_cache_redis_value_t *v = vp;
    uint64_t                 wall = slc_cache_redis_wall_ms();

    if (e->type == REDIS_REPLY_NIL) {
        slc_cache_bump(q->cnt->misses);
    } else if (e->type != REDIS_REPLY_STRING
               || slc_cache_redis_decode((const uint8_t *) e->str, e->len,
                                         v) != SLC_OK)
    {
        slc_cache_redis_foreign(q, e->type == REDIS_REPLY_STRING
                                   ? "a value" : "a key of another type");
    } else if (v->klen != q->klen || memcmp(v->key, q->key, q->klen) != 0) {
        slc_cache_bump(q->cnt->misses);     /* another key, same digest */
    } else if (!slc_cache_redis_fresh(q, v, wall)) {
        slc_cache_bump(q->cnt->stale);
    } else {
        *hit = (slc_cache_remote_hit_t) {
            .result = v->result, .rlen = v->rlen, .meta = v->meta,
            .ttl = v->expires - wall,
        };
        return 1;
    }
    return 0;
}

/* The entry e, the generations known: a hit answered, or a miss (once
   the missing generations exist). */
static void
slc_cache_redis_decide(slc_cache_redis_req_t *q, const redisReply *e)
{
    slc_cache_redis_value_t  v;
    slc_cache_remote_hit_t   hit;

    if (slc_cache_redis_entry(q, e, &v, &hit)) {
        slc_cache_redis_answer(q, &hit);
    } else if (q->creating > 0) {
        q->held = 1;            /* a miss, once its generations exist */
    } else {
        slc_cache_redis_answer(q, NULL);
    }
}

/* A reply that is not what was asked: a miss; the breaker counts it
   unless it is a cluster's slot in migration (TRYAGAIN). */
static void
slc_cache_redis_lookup_failed(slc_cache_redis_req_t *q,
    const redisReply *reply, const char *what)
{
    if (reply != NULL && reply->type == REDIS_REPLY_ERROR
        && slc_cache_redis_tryagain(reply->str, reply->len))
    {
        slc_cache_bump(q->cnt->misses);
    } else {
        slc_cache_bump(q->cnt->errors);
        slc_cache_redis_lookups_failed(q->rc, q->cnt, reply == NULL
            ? "connection lost" : what);
    }
    slc_cache_redis_answer(q, NULL);
}

/* The MGET's reply: the entry (unless split: a cluster's, asked apart,
   which may be there first), the generations, every table's. */
static void
slc_cache_redis_on_mget(redisAsyncContext *ac, void *r, void *arg)
{
    slc_cache_redis_req_t   *q = arg;
    redisReply              *reply = r;
    unsigned                 first = !q->split;

    (void) ac;
    q->replies--;
    if (q->done == NULL) {
        slc_cache_redis_req_free(q);    /* timed out, or released */
        return;
    }
    if (reply == NULL || reply->type != REDIS_REPLY_ARRAY
        || reply->elements != q->ntables + 1 + first)
    {
        slc_cache_redis_lookup_failed(q, reply, "an MGET answered "
            "otherwise");
    } else {
        slc_cache_redis_lookups_ok(q->rc, q->cnt);
        slc_cache_redis_gens(q, reply->element + first);
        q->got_gens = 1;
        if (first) {
            slc_cache_redis_decide(q, reply->element[0]);
        } else if (q->got_entry) {
            redisReply e = { .type = q->etype, .str = (char *) q->ebuf,
                             .len = q->elen };

            slc_cache_redis_decide(q, &e);
        }
    }
    slc_cache_redis_req_free(q);
}

/* A cluster's: the entry's GET, kept if the generations are not there
   yet. */
static void
slc_cache_redis_on_entry(redisAsyncContext *ac, void *r, void *arg)
{
    slc_cache_redis_req_t   *q = arg;
    redisReply              *reply = r;

    (void) ac;
    q->replies--;
    if (q->done == NULL) {
        slc_cache_redis_req_free(q);
        return;
    }
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
        slc_cache_redis_lookup_failed(q, reply, "a GET answered otherwise");
    } else if (q->got_gens) {
        slc_cache_redis_decide(q, reply);
    } else if (reply->type == REDIS_REPLY_STRING
               && (q->ebuf = malloc(reply->len + 1)) == NULL)
    {
        slc_cache_redis_answer(q, NULL);
    } else {
        if (q->ebuf != NULL) {
            memcpy(q->ebuf, reply->str, reply->len);
            q->elen = reply->len;
        }
        q->etype = reply->type;
        q->got_entry = 1;
    }
    slc_cache_redis_req_free(q);
}


/* --- the hooks ------------------------------------------------------------ */

/* One MGET of the entry (unless ec is NULL: a cluster's, sent apart) and
   the generations. */
static int
slc_cache_redis_send_mget(slc_cache_redis_req_t *q,
    const slc_cache_redis_conn_t *ec)
{
    const slc_cache_redis_service_t *rs = q->rc->rs;
    slc_cache_redis_resp_t          *r;
    char                             gk[SLC_REDIS_KEY_MAX];

    r = slc_cache_redis_cmd(q->ntables + 2 + (ec != NULL));
    slc_cache_redis_resp_str(r, "MGET");
    if (ec != NULL) {
        slc_cache_redis_resp_arg(r, q->ekey, q->eklen);
    }
    for (unsigned i = 0; i <= q->ntables; i++) {
        slc_cache_redis_resp_arg(r, gk, slc_cache_redis_gen_key(rs,
            i < q->ntables ? q->table[i] : 0, i == q->ntables, gk));
    }
    return slc_cache_redis_send(q->rc, slc_cache_redis_on_mget, q);
}

/* The lookup's commands: one MGET, or in a cluster the generations' MGET
   on their node and the entry's GET on its own. */
static int
slc_cache_redis_send_lookup(slc_cache_redis_req_t *q)
{
    slc_cache_redis_conn_t *ec = slc_cache_redis_route_key(q->rc, q->ekey,
                                                           q->eklen);
    slc_cache_redis_resp_t *r;

    if (ec == NULL || !slc_cache_redis_conn_ready(ec)) {
        return SLC_ERROR;
    }
    if (!slc_cache_redis_clustered(q->rc)) {
        return slc_cache_redis_send_mget(q, ec);
    }
    q->split = 1;
    if (slc_cache_redis_send_mget(q, NULL) != SLC_OK) {
        return SLC_ERROR;
    }
    r = slc_cache_redis_cmd(2);
    slc_cache_redis_resp_str(r, "GET");
    slc_cache_redis_resp_arg(r, q->ekey, q->eklen);
    if (slc_cache_redis_send(ec, slc_cache_redis_on_entry, q) == SLC_OK) {
        q->replies++;
    } else {
        q->etype = REDIS_REPLY_NIL;     /* the generations decide: a miss */
        q->got_entry = 1;
    }
    return SLC_OK;
}

void *
slc_cache_redis_lookup(void *tier, const slc_cache_remote_ask_t *ask,
    slc_cache_remote_counters_t *cnt, slc_cache_remote_done_pt done,
    void *arg)
{
    slc_cache_redis_conn_t *rc = slc_cache_redis_conn_of(tier);
    slc_cache_redis_req_t  *q;

    slc_cache_bump(cnt->lookups);
    if (rc != NULL) {
        rc = slc_cache_redis_route(rc, slc_cache_redis_gslot(rc));
    }
    if (rc == NULL || !slc_cache_redis_conn_ready(rc)
        || ask->ntables > SLC_REDIS_VALUE_TABLES
        || slc_cache_redis_owed_any(rc->rs, ask->table, ask->ntables)
        || !slc_cache_redis_breaker_allow(&rc->rbreaker, slc_loop->now)
        || (q = malloc(sizeof(*q) + ask->klen)) == NULL)
    {
        slc_cache_bump(cnt->skipped);
        return NULL;
    }
    *q = (slc_cache_redis_req_t) {
        .rc = rc, .done = done, .arg = arg, .cnt = cnt,
        .deadline = slc_loop->now + (uint64_t) rc->rs->timeout,
        .ntables = ask->ntables, .klen = ask->klen, .replies = 1,
    };
    memcpy(q->table, ask->table, ask->ntables * sizeof(uint32_t));
    memcpy(q->key, ask->key, ask->klen);
    q->eklen = slc_cache_redis_entry_key(rc->rs, ask->key, ask->klen,
                                         q->ekey);
    if (slc_cache_redis_send_lookup(q) != SLC_OK) {
        slc_cache_bump(cnt->skipped);
        free(q);
        return NULL;
    }
    slc_cache_redis_req_queue(q);
    return q;
}

/* SET entry value PX ttl, the value encoded into the command itself. */
void
slc_cache_redis_store(void *req, const slc_cache_store_t *st,
    const uint8_t *meta, uint64_t ttl)
{
    slc_cache_redis_req_t   *q = req;
    slc_cache_redis_conn_t  *rc = slc_cache_redis_route_key(q->rc, q->ekey,
                                                            q->eklen);
    slc_cache_redis_value_t  v = {
        .key = q->key, .klen = q->klen, .ntables = q->ntables,
        .rlen = slc_cache_store_size(st), .allgen = q->gen[q->ntables],
        .expires = slc_cache_redis_wall_ms() + ttl,
    };
    slc_cache_redis_resp_t  *r;
    slc_cache_cursor_t       cur;
    const uint8_t           *p;
    uint8_t                 *out;
    size_t                   k, n, size;

    if (!q->store_ok || q->creating > 0 || q->done != NULL || ttl == 0) {
        return;                 /* not answered normally, or gens unknown */
    }
    memcpy(v.table, q->table, q->ntables * sizeof(uint32_t));
    memcpy(v.gen, q->gen, q->ntables * sizeof(uint64_t));
    memcpy(v.meta, meta, SLC_REDIS_VALUE_META);
    size = slc_cache_redis_encoded_size(&v);
    r = slc_cache_redis_cmd(5);
    slc_cache_redis_resp_str(r, "SET");
    slc_cache_redis_resp_arg(r, q->ekey, q->eklen);
    if (rc == NULL || !slc_cache_redis_conn_ready(rc)
        || q->rc->rbreaker.state != SLC_REDIS_CLOSED
        || rc->queued + size > rc->rs->queue
        || (out = slc_cache_redis_resp_open(r, size)) == NULL)
    {
        slc_cache_bump(q->cnt->dropped);
        return;
    }
    k = slc_cache_redis_encode_head(&v, out);
    slc_cache_store_cursor(st, &cur);
    while (k < size && (n = slc_cache_cursor_next(&cur, &p, size - k)) > 0) {
        memcpy(out + k, p, n);
        k += n;
    }
    slc_cache_redis_resp_str(r, "PX");
    slc_cache_redis_resp_num(r, ttl);
    if (k == size
        && slc_cache_redis_send(rc, slc_cache_redis_on_sent,
                                (void *) (uintptr_t) size) == SLC_OK)
    {
        rc->queued += size;
        slc_cache_bump(q->cnt->stores);
    } else {
        slc_cache_bump(q->cnt->dropped);
    }
}
