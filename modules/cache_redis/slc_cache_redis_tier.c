/*
 * The cache's remote tier in Redis (slc_cache_redis.h; the hooks of
 * slc_cache_remote_t): lookups, stores and generation bumps on a worker's
 * connection (slc_cache_redis_conn.c), never a blocking call.
 *
 * Keys, under the service's prefix P:
 *   P e:<sha1 of the exact key, hex>   an entry (slc_cache_redis_value.c),
 *                                      with the TTL as its expiry
 *   P {g}:<table hash, hex>            a table's generation
 *   P {g}:*                            every table's generation
 * The generations share a hash tag, so that one MGET fetches them.
 *
 * A lookup is one pipeline: MGET of the generations of the tables the
 * entry reads (and every table's), PTTL and GET of the entry.  A hit is a
 * value that decodes, holds the same exact key (compared whole), and
 * recorded the generations Redis has now for exactly those tables: a
 * generation that moved, or that is missing (Redis restarted empty,
 * flushed, evicted it), makes it stale.  After a miss the backend's
 * answer is stored with the generations the lookup saw (fetched before
 * the read went out, so a write that commits after moves one of them).
 * A missing generation is created then (SET NX of a random value, which
 * no entry recorded), and the answer is not stored.
 *
 * Writes the proxy saw accepted INCR their tables' generations in every
 * service of the worker; once Redis acknowledged, the zones are
 * invalidated again, so that an entry another worker copied from Redis
 * between the first invalidation and the bump does not outlive it.
 *
 * Budget: a lookup not answered within the service's `timeout` is a miss
 * (the session goes to the backend) and a failure of the lookups' breaker
 * (SLC_REDIS_FAILURES in a row open it: lookups skip Redis for a back-off
 * from 1 s doubling to 30 s, then one probe decides).  Stores and bumps
 * are never waited for; past SLC_REDIS_QUEUE_MAX unanswered bytes per
 * connection they are dropped and counted.
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_sha1.h"
#include "slc_worker.h"
#include "slc_cache_redis.h"

#include <hiredis.h>
#include <async.h>

#define SLC_REDIS_FAILURES     3
#define SLC_REDIS_OPEN_MIN     1000
#define SLC_REDIS_OPEN_MAX     30000
#define SLC_REDIS_QUEUE_MAX    (8u << 20)
#define SLC_REDIS_LOG_EVERY    60000       /* ms between decode reports */
#define SLC_REDIS_GENS         (SLC_REDIS_VALUE_TABLES + 1)

typedef struct slc_cache_redis_req_s {
    slc_cache_redis_conn_t         *rc;
    slc_cache_remote_done_pt        done;       /* NULL once answered */
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
    unsigned                        held:1;     /* GET replied: the
                                                   answer waits for the
                                                   creations */
    unsigned                        creating;   /* generations being
                                                   created: */
    uint32_t                        cmask;      /* their indexes */
    unsigned                        ntables;
    uint32_t                        table[SLC_REDIS_VALUE_TABLES];
    uint64_t                        gen[SLC_REDIS_GENS];  /* last: all */
    long long                       pttl;
    char                            ekey[SLC_REDIS_KEY_MAX];
    size_t                          klen;
    TAILQ_ENTRY(slc_cache_redis_req_s) link;
    uint8_t                         key[];
} slc_cache_redis_req_t;


/* --- keys ----------------------------------------------------------------- */

static size_t
slc_cache_redis_entry_key(const slc_cache_redis_service_t *rs,
    const uint8_t *key, size_t klen, char *out)
{
    uint8_t     d[SLC_SHA1_LEN];
    size_t      n = (size_t) snprintf(out, SLC_REDIS_KEY_MAX, "%se:",
                                      rs->prefix);
    static const char hex[] = "0123456789abcdef";

    slc_sha1(key, klen, d);
    for (size_t i = 0; i < SLC_SHA1_LEN; i++) {
        out[n++] = hex[d[i] >> 4];
        out[n++] = hex[d[i] & 15];
    }
    out[n] = '\0';
    return n;
}

size_t
slc_cache_redis_gen_key(const slc_cache_redis_service_t *rs, uint32_t table,
    int all, char *out)
{
    if (all) {
        return (size_t) snprintf(out, SLC_REDIS_KEY_MAX, "%s{g}:*",
                                 rs->prefix);
    }
    return (size_t) snprintf(out, SLC_REDIS_KEY_MAX, "%s{g}:%08x",
                             rs->prefix, table);
}


/* --- requests --------------------------------------------------------------- */

static void
slc_cache_redis_req_free(slc_cache_redis_req_t *q)
{
    if (q->released && q->replies == 0 && !q->in_done) {
        free(q);
    }
}

static void slc_cache_redis_expire_arm(slc_cache_redis_conn_t *rc);

/* The lookup's answer, once: out of the timeout list, to the cache. */
static void
slc_cache_redis_answer(slc_cache_redis_req_t *q,
    const slc_cache_remote_hit_t *hit)
{
    slc_cache_remote_done_pt done = q->done;

    if (q->queued) {
        TAILQ_REMOVE(&q->rc->lookups, q, link);
        q->queued = 0;
        slc_cache_redis_expire_arm(q->rc);
    }
    q->done = NULL;
    if (done != NULL) {
        q->in_done = 1;
        done(q->arg, hit);
        q->in_done = 0;
    }
}

static void
slc_cache_redis_lookups_ok(slc_cache_redis_conn_t *rc,
    slc_cache_remote_counters_t *cnt)
{
    if (slc_cache_redis_breaker_success(&rc->rbreaker)) {
        slc_cache_bump(cnt->closed);
        slc_log(SLC_LOG_NOTICE, "redis \"%s\": answering again: lookups "
            "go to it", rc->rs->name);
    }
}

static void
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

/* The oldest lookups past their deadline are misses. */
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
        slc_cache_redis_answer(q, NULL);
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

void
slc_cache_redis_tier_init(slc_cache_redis_conn_t *rc)
{
    TAILQ_INIT(&rc->lookups);
    rc->expire.handler = slc_cache_redis_expire;
    rc->expire.data = rc;
    slc_cache_redis_breaker_init(&rc->rbreaker, SLC_REDIS_FAILURES,
        SLC_REDIS_OPEN_MIN, SLC_REDIS_OPEN_MAX);
}

/* The worker exits: no lookup is answered any more (their sessions may be
   gone), and hiredis' callbacks, when it frees its context, free them. */
void
slc_cache_redis_tier_close(slc_cache_redis_conn_t *rc)
{
    slc_cache_redis_req_t *q;

    while ((q = TAILQ_FIRST(&rc->lookups)) != NULL) {
        TAILQ_REMOVE(&rc->lookups, q, link);
        q->queued = 0;
        q->done = NULL;
        q->released = 1;
    }
    if (rc->expire.armed) {
        slc_timer_del(slc_loop, &rc->expire);
    }
}


/* --- a lookup's replies ------------------------------------------------------- */

/* A decimal generation; SLC_ERROR for anything else. */
static int
slc_cache_redis_gen_parse(const redisReply *r, uint64_t *gen)
{
    char                *end;
    char                 buf[24];
    unsigned long long   v;

    if (r->type != REDIS_REPLY_STRING || r->len == 0
        || (size_t) r->len >= sizeof(buf) || r->str[0] == '-')
    {
        return SLC_ERROR;
    }
    memcpy(buf, r->str, r->len);
    buf[r->len] = '\0';
    errno = 0;
    v = strtoull(buf, &end, 10);
    if (errno != 0 || *end != '\0') {
        return SLC_ERROR;
    }
    *gen = v;
    return SLC_OK;
}

/* A random value for a generation created: none an entry recorded. */
size_t
slc_cache_redis_gen_random(char *val, size_t cap)
{
    uint64_t r;

    arc4random_buf(&r, sizeof(r));
    return (size_t) snprintf(val, cap, "%llu", (unsigned long long) (r >> 2));
}

static void slc_cache_redis_on_created(redisAsyncContext *ac, void *r,
    void *arg);

/*
 * A missing generation is created, before the read goes to the server:
 * SET NX of a random value (none an entry recorded), GET giving the value
 * that won.  The lookup's answer waits for it, so that the generation an
 * entry records is always one read before the read (Redis 7.0 or later:
 * SET with both NX and GET).
 */
static void
slc_cache_redis_gen_create(slc_cache_redis_req_t *q, unsigned i)
{
    slc_cache_redis_conn_t *rc = q->rc;
    char                    key[SLC_REDIS_KEY_MAX], val[24];
    const char             *argv[5];
    size_t                  len[5];

    argv[0] = "SET", len[0] = 3;
    argv[1] = key;
    len[1] = slc_cache_redis_gen_key(rc->rs, i < q->ntables ? q->table[i]
                                     : 0, i == q->ntables, key);
    argv[2] = val;
    len[2] = slc_cache_redis_gen_random(val, sizeof(val));
    argv[3] = "NX", len[3] = 2;
    argv[4] = "GET", len[4] = 3;
    if (slc_cache_redis_conn_ready(rc)
        && redisAsyncCommandArgv(rc->ac, slc_cache_redis_on_created, q, 5,
                                 argv, len) == REDIS_OK)
    {
        q->replies++;
        q->creating++;
        q->cmask |= 1u << i;
        q->gen[i] = strtoull(val, NULL, 10);    /* if ours wins */
    }
}

/* MGET of the generations: kept; a missing one is created. */
static void
slc_cache_redis_on_gens(redisAsyncContext *ac, void *r, void *arg)
{
    slc_cache_redis_req_t *q = arg;
    redisReply            *reply = r;

    (void) ac;
    q->replies--;
    if (reply != NULL && reply->type == REDIS_REPLY_ARRAY
        && reply->elements == q->ntables + 1 && q->done != NULL)
    {
        q->fresh_ok = q->store_ok = 1;
        for (unsigned i = 0; i <= q->ntables; i++) {
            if (slc_cache_redis_gen_parse(reply->element[i], &q->gen[i])
                == SLC_OK)
            {
                continue;
            }
            q->fresh_ok = 0;        /* missing: every entry is stale */
            if (reply->element[i]->type == REDIS_REPLY_NIL) {
                slc_cache_redis_gen_create(q, i);
            } else {
                q->store_ok = 0;    /* not a number: never stored under */
            }
        }
    }
    slc_cache_redis_req_free(q);
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

static void
slc_cache_redis_on_pttl(redisAsyncContext *ac, void *r, void *arg)
{
    slc_cache_redis_req_t *q = arg;
    redisReply            *reply = r;

    (void) ac;
    q->replies--;
    q->pttl = reply != NULL && reply->type == REDIS_REPLY_INTEGER
              ? reply->integer : -2;
    slc_cache_redis_req_free(q);
}

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
   tables the lookup asked. */
static int
slc_cache_redis_fresh(const slc_cache_redis_req_t *q,
    const slc_cache_redis_value_t *v)
{
    if (!q->fresh_ok || v->ntables != q->ntables
        || v->allgen != q->gen[q->ntables])
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

/* The GET, last: the lookup's verdict. */
static void
slc_cache_redis_on_get(redisAsyncContext *ac, void *r, void *arg)
{
    slc_cache_redis_req_t   *q = arg;
    redisReply              *reply = r;
    slc_cache_redis_value_t  v;
    slc_cache_remote_hit_t   hit;

    (void) ac;
    q->replies--;
    if (q->done == NULL) {
        slc_cache_redis_req_free(q);    /* timed out, or released */
        return;
    }
    if (reply == NULL) {
        slc_cache_bump(q->cnt->errors);
        slc_cache_redis_lookups_failed(q->rc, q->cnt, "connection lost");
        slc_cache_redis_answer(q, NULL);
        slc_cache_redis_req_free(q);
        return;
    }
    slc_cache_redis_lookups_ok(q->rc, q->cnt);
    if (reply->type == REDIS_REPLY_NIL) {
        slc_cache_bump(q->cnt->misses);
    } else if (reply->type != REDIS_REPLY_STRING
               || slc_cache_redis_decode((const uint8_t *) reply->str,
                                         reply->len, &v) != SLC_OK)
    {
        slc_cache_redis_foreign(q, reply->type == REDIS_REPLY_STRING
                                ? "a value" : "a key of another type");
    } else if (v.klen != q->klen || memcmp(v.key, q->key, q->klen) != 0) {
        slc_cache_bump(q->cnt->misses);     /* another key, same digest */
    } else if (!slc_cache_redis_fresh(q, &v) || q->pttl <= 0) {
        slc_cache_bump(q->cnt->stale);
    } else {
        hit = (slc_cache_remote_hit_t) {
            .result = v.result, .rlen = v.rlen, .meta = v.meta,
            .ttl = (uint64_t) q->pttl,
        };
        slc_cache_redis_answer(q, &hit);
        slc_cache_redis_req_free(q);
        return;
    }
    if (q->creating > 0) {
        q->held = 1;            /* a miss, once its generations exist */
    } else {
        slc_cache_redis_answer(q, NULL);
    }
    slc_cache_redis_req_free(q);
}


/* --- the hooks ------------------------------------------------------------- */

static int
slc_cache_redis_send_lookup(slc_cache_redis_req_t *q)
{
    slc_cache_redis_conn_t *rc = q->rc;
    char                    gk[SLC_REDIS_GENS][SLC_REDIS_KEY_MAX];
    const char             *argv[SLC_REDIS_GENS + 1];
    size_t                  len[SLC_REDIS_GENS + 1];
    size_t                  elen = strlen(q->ekey);

    argv[0] = "MGET", len[0] = 4;
    for (unsigned i = 0; i <= q->ntables; i++) {
        argv[i + 1] = gk[i];
        len[i + 1] = slc_cache_redis_gen_key(rc->rs,
            i < q->ntables ? q->table[i] : 0, i == q->ntables, gk[i]);
    }
    if (redisAsyncCommandArgv(rc->ac, slc_cache_redis_on_gens, q,
                              (int) q->ntables + 2, argv, len) != REDIS_OK)
    {
        return SLC_ERROR;
    }
    q->replies++;
    argv[0] = "PTTL", len[0] = 4;
    argv[1] = q->ekey, len[1] = elen;
    if (redisAsyncCommandArgv(rc->ac, slc_cache_redis_on_pttl, q, 2, argv,
                              len) != REDIS_OK)
    {
        return SLC_ERROR;
    }
    q->replies++;
    argv[0] = "GET", len[0] = 3;
    if (redisAsyncCommandArgv(rc->ac, slc_cache_redis_on_get, q, 2, argv,
                              len) != REDIS_OK)
    {
        return SLC_ERROR;
    }
    q->replies++;
    return SLC_OK;
}

static void *
slc_cache_redis_lookup(void *tier, const slc_cache_remote_ask_t *ask,
    slc_cache_remote_counters_t *cnt, slc_cache_remote_done_pt done,
    void *arg)
{
    slc_cache_redis_conn_t *rc = slc_cache_redis_conn_of(tier);
    slc_cache_redis_req_t  *q;

    slc_cache_bump(cnt->lookups);
    if (rc == NULL || !slc_cache_redis_conn_ready(rc)
        || ask->ntables > SLC_REDIS_VALUE_TABLES
        || !slc_cache_redis_breaker_allow(&rc->rbreaker, slc_loop->now)
        || (q = calloc(1, sizeof(*q) + ask->klen)) == NULL)
    {
        slc_cache_bump(cnt->skipped);
        return NULL;
    }
    *q = (slc_cache_redis_req_t) {
        .rc = rc, .done = done, .arg = arg, .cnt = cnt,
        .deadline = slc_loop->now + (uint64_t) rc->rs->timeout,
        .ntables = ask->ntables, .klen = ask->klen,
    };
    memcpy(q->table, ask->table, ask->ntables * sizeof(uint32_t));
    memcpy(q->key, ask->key, ask->klen);
    slc_cache_redis_entry_key(rc->rs, ask->key, ask->klen, q->ekey);
    if (slc_cache_redis_send_lookup(q) != SLC_OK) {
        /* hiredis took part of it: its callbacks free it */
        slc_cache_bump(cnt->skipped);
        q->done = NULL;
        q->released = 1;
        slc_cache_redis_req_free(q);
        return NULL;
    }
    TAILQ_INSERT_TAIL(&rc->lookups, q, link);
    q->queued = 1;
    if (!rc->expire.armed) {
        slc_cache_redis_expire_arm(rc);
    }
    return q;
}

static void
slc_cache_redis_release(void *req)
{
    slc_cache_redis_req_t *q = req;

    if (q->queued) {
        TAILQ_REMOVE(&q->rc->lookups, q, link);
        q->queued = 0;
        slc_cache_redis_expire_arm(q->rc);
    }
    q->done = NULL;
    q->released = 1;
    slc_cache_redis_req_free(q);
}

/* A store's or a bump's reply: its bytes are no longer queued. */
static void
slc_cache_redis_on_sent(redisAsyncContext *ac, void *r, void *arg)
{
    slc_cache_redis_conn_t *rc = ac->data;
    redisReply             *reply = r;
    size_t                  n = (size_t) (uintptr_t) arg;

    if (rc != NULL) {
        rc->queued -= slc_min(rc->queued, n);
    }
    (void) reply;
}

/* The scratch a value is encoded into (it grows, once, to the largest). */
static uint8_t *
slc_cache_redis_scratch(size_t n)
{
    static uint8_t *buf;
    static size_t   cap;
    uint8_t        *p;

    if (n > cap) {
        if ((p = realloc(buf, n)) == NULL) {
            return NULL;
        }
        buf = p;
        cap = n;
    }
    return buf;
}

static void
slc_cache_redis_store(void *req, const slc_cache_store_t *st,
    const uint8_t *meta, uint64_t ttl)
{
    slc_cache_redis_req_t   *q = req;
    slc_cache_redis_conn_t  *rc = q->rc;
    slc_cache_redis_value_t  v = { .key = q->key, .klen = q->klen,
                                   .ntables = q->ntables,
                                   .rlen = slc_cache_store_size(st) };
    slc_cache_cursor_t       cur;
    const uint8_t           *p;
    const char              *argv[5];
    size_t                   len[5], k, n, size;
    uint8_t                 *out;
    char                     px[24];

    if (!q->store_ok || q->creating > 0 || q->done != NULL || ttl == 0) {
        return;                 /* not answered normally, or gens unknown */
    }
    memcpy(v.table, q->table, q->ntables * sizeof(uint32_t));
    memcpy(v.gen, q->gen, q->ntables * sizeof(uint64_t));
    v.allgen = q->gen[q->ntables];
    memcpy(v.meta, meta, SLC_REDIS_VALUE_META);
    size = slc_cache_redis_encoded_size(&v);
    if (!slc_cache_redis_conn_ready(rc) || rc->rbreaker.state != SLC_REDIS_CLOSED
        || rc->queued + size > SLC_REDIS_QUEUE_MAX
        || (out = slc_cache_redis_scratch(size)) == NULL)
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
    argv[0] = "SET", len[0] = 3;
    argv[1] = q->ekey, len[1] = strlen(q->ekey);
    argv[2] = (const char *) out, len[2] = k;
    argv[3] = "PX", len[3] = 2;
    argv[4] = px;
    len[4] = (size_t) snprintf(px, sizeof(px), "%llu",
                               (unsigned long long) ttl);
    if (k == size
        && redisAsyncCommandArgv(rc->ac, slc_cache_redis_on_sent,
               (void *) (uintptr_t) size, 5, argv, len) == REDIS_OK)
    {
        rc->queued += size;
        slc_cache_bump(q->cnt->stores);
    } else {
        slc_cache_bump(q->cnt->dropped);
    }
}


/* --- bumps ------------------------------------------------------------------ */

/* What a bump moved, to invalidate the zones again once Redis has it. */
typedef struct {
    size_t      size;
    unsigned    all:1;
    unsigned    n;
    uint32_t    hash[];
} slc_cache_redis_bump_t;

static void
slc_cache_redis_on_bumped(redisAsyncContext *ac, void *r, void *arg)
{
    slc_cache_redis_bump_t *b = arg;

    slc_cache_redis_on_sent(ac, NULL, (void *) (uintptr_t) b->size);
    if (r != NULL && slc_worker_cycle != NULL) {
        slc_cache_zones_invalidate(slc_worker_cycle, b->hash, b->n, b->all,
            slc_loop->now);
    }
    free(b);
}

/*
 * A table's generation moves: created first if missing (SET NX of a
 * random value: an INCR of a missing key would start again from 1, a
 * value an older entry may hold), then INCR.  The last reply carries the
 * zones' second invalidation.
 */
static int
slc_cache_redis_bump_one(slc_cache_redis_conn_t *rc, uint32_t table,
    int all, slc_cache_redis_bump_t *last)
{
    char        key[SLC_REDIS_KEY_MAX], val[24];
    const char *argv[4] = { "SET", key, val, "NX" };
    size_t      len[4] = { 3, 0, 0, 2 };

    len[1] = slc_cache_redis_gen_key(rc->rs, table, all, key);
    len[2] = slc_cache_redis_gen_random(val, sizeof(val));
    if (redisAsyncCommandArgv(rc->ac, NULL, NULL, 4, argv, len) != REDIS_OK)
    {
        return SLC_ERROR;
    }
    argv[0] = "INCR", len[0] = 4;
    return redisAsyncCommandArgv(rc->ac, last != NULL
                                 ? slc_cache_redis_on_bumped : NULL, last,
                                 2, argv, len) == REDIS_OK
           ? SLC_OK : SLC_ERROR;
}

static void
slc_cache_redis_bump(slc_cache_redis_conn_t *rc, const uint32_t *hash,
    unsigned n, int all, slc_cache_remote_counters_t *cnt)
{
    slc_cache_redis_bump_t *b;
    size_t                  size = 128 * (all ? 1 : n);
    unsigned                k = all ? 1 : n;

    if (k == 0) {
        return;
    }
    if (!slc_cache_redis_conn_ready(rc) || rc->queued + size
        > SLC_REDIS_QUEUE_MAX
        || (b = malloc(sizeof(*b) + n * sizeof(uint32_t))) == NULL)
    {
        slc_cache_bump(cnt->dropped);
        return;
    }
    *b = (slc_cache_redis_bump_t) { .size = size, .all = all, .n = n };
    memcpy(b->hash, hash, n * sizeof(uint32_t));
    for (unsigned i = 0; i < k; i++) {
        if (slc_cache_redis_bump_one(rc, all ? 0 : hash[i], all,
                                     i + 1 == k ? b : NULL) != SLC_OK)
        {
            /* hiredis refuses only when its context is going away */
            slc_cache_bump(cnt->dropped);
            if (i + 1 == k) {
                free(b);
                return;
            }
            continue;
        }
        slc_cache_bump(cnt->bumps);
    }
    rc->queued += size;             /* (the last reply gives it back) */
}

static void
slc_cache_redis_invalidate(const uint32_t *hash, unsigned n, int all,
    slc_cache_remote_counters_t *cnt)
{
    for (slc_cache_redis_conn_t *rc = slc_cache_redis_conns_all();
         rc != NULL; rc = rc->next)
    {
        slc_cache_redis_bump(rc, hash, n, all, cnt);
    }
}

const slc_cache_remote_t slc_cache_redis_remote = {
    .lookup = slc_cache_redis_lookup,
    .store = slc_cache_redis_store,
    .release = slc_cache_redis_release,
    .invalidate = slc_cache_redis_invalidate,
    .bump_sync = slc_cache_redis_bump_sync,
};
