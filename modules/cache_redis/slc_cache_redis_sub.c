/*
 * Pushed invalidations (slc_cache_redis_sub.h): for the hosts that cannot
 * read the primary's binlog, the writes other hosts see come through
 * Redis pub/sub on the channel "<prefix>inv".
 *
 * Publishers: each worker, after the bumps of a write it saw accepted
 * (slc_cache_redis_bump.c), and the binlog reader, after a bump its GTID
 * made its own (once per commit across hosts: slc_cache_redis_sync.c).
 * A message is text, bounded: "1 ORIGIN MS TABLES", ORIGIN the host
 * ("host:masterpid"), MS its wall clock when sent, TABLES "*" (every
 * table), "beat", or table hashes in hex, comma-separated.
 *
 * The subscriber: a process of the role `redis_sub` per service whose
 * servers include one without `binlog on` (beside the monitor, on its own
 * loop).  One connection subscribes; a message from another host moves
 * the generations of its tables in every zone; the host's own are
 * skipped (its zones moved already).  A second connection publishes the
 * subscriber's own beat every 250 ms: its coming back through the
 * subscription is what says the push works end to end.  A message that
 * does not parse invalidates everything (its meaning is lost), counted.
 *
 * The guarantee: workers serve a zone hit of a server without a binlog
 * reader only while its service's subscriber is live (subscribed, its
 * beat heard within 1 s: slc_cache_redis_trusted); otherwise the server
 * answers and the answer is kept, never older than the outage, since a
 * subscription that comes back after one invalidates every zone first.
 */

#include "slc_core.h"
#include "slc_cycle.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_role.h"
#include "slc_seqlock.h"
#include "slc_shm.h"
#include "slc_mysql_conf.h"
#include "slc_cache_redis_sub.h"
#include "slc_cache_redis_tier.h"
#include "slc_cache_redis_keys.h"

#include <hiredis.h>
#include <async.h>


typedef struct {
    const slc_cache_redis_service_t *rs;
    slc_cache_redis_sub_t           *e;
    slc_cycle_t                     *cycle;
    slc_cache_redis_conn_t          *conns;     /* sub and pub */
    slc_cache_redis_conn_t          *sub;
    slc_cache_redis_conn_t          *pub;
    slc_timer_t                      beat;
    char                             chan[SLC_REDIS_KEY_MAX];
    size_t                           clen;
} slc_cache_redis_subscriber_t;

static slc_cache_redis_subscriber_t  slc_redis_sub;


/* --- messages ------------------------------------------------------------- */

void
slc_cache_redis_origin(char *out, size_t cap)
{
    static char origin[80];
    char        host[48] = "";

    if (origin[0] == '\0') {
        gethostname(host, sizeof(host) - 1);
        host[strcspn(host, " \t\r\n")] = '\0';
        snprintf(origin, sizeof(origin), "%s:%d", host, (int) getppid());
    }
    strlcpy(out, origin, cap);
}

size_t
slc_cache_redis_chan(const slc_cache_redis_service_t *rs, char *out)
{
    return (size_t) snprintf(out, SLC_REDIS_KEY_MAX, "%sinv", rs->prefix);
}

size_t
slc_cache_redis_push_msg(char *out, size_t cap, const uint32_t *hash,
    unsigned n, int all)
{
    char   origin[80];
    size_t k;

    slc_cache_redis_origin(origin, sizeof(origin));
    k = (size_t) snprintf(out, cap, "1 %s %llu ", origin,
        (unsigned long long) slc_cache_redis_wall_ms());
    if (all || n > SLC_REDIS_PUSH_TABLES) {
        k += (size_t) snprintf(out + k, cap - k, "*");
    } else if (n == 0) {
        k += (size_t) snprintf(out + k, cap - k, "beat");
    }
    for (unsigned i = 0; !all && n <= SLC_REDIS_PUSH_TABLES && i < n
                         && k < cap; i++)
    {
        k += (size_t) snprintf(out + k, cap - k, "%s%08x", i ? "," : "",
                               hash[i]);
    }
    return slc_min(k, cap - 1);
}

/*
 * A message's tables: SLC_OK with *all or hash[0..*n); SLC_DONE for a
 * beat; SLC_ERROR for anything that does not parse.  *own: ORIGIN is this
 * host; *sent: its MS.
 */
static int
slc_cache_redis_msg_parse(const char *p, size_t len, uint32_t *hash,
    unsigned *n, int *all, int *own, uint64_t *sent)
{
    char        buf[SLC_REDIS_MSG_MAX + 1], origin[80], *f[4], *save, *h;
    unsigned    k = 0;

    if (len > SLC_REDIS_MSG_MAX) {
        return SLC_ERROR;
    }
    memcpy(buf, p, len);
    buf[len] = '\0';
    for (char *t = strtok_r(buf, " ", &save); t != NULL && k < 4;
         t = strtok_r(NULL, " ", &save))
    {
        f[k++] = t;
    }
    if (k != 4 || strcmp(f[0], "1") != 0
        || strspn(f[2], "0123456789") != strlen(f[2]))
    {
        return SLC_ERROR;
    }
    slc_cache_redis_origin(origin, sizeof(origin));
    *own = strcmp(f[1], origin) == 0;
    *sent = strtoull(f[2], NULL, 10);
    *all = strcmp(f[3], "*") == 0;
    *n = 0;
    if (*all) {
        return SLC_OK;
    }
    if (strcmp(f[3], "beat") == 0) {
        return SLC_DONE;
    }
    for (h = strtok_r(f[3], ",", &save); h != NULL;
         h = strtok_r(NULL, ",", &save))
    {
        if (*n == SLC_REDIS_PUSH_TABLES || strlen(h) != 8
            || strspn(h, "0123456789abcdef") != 8)
        {
            return SLC_ERROR;
        }
        hash[(*n)++] = (uint32_t) strtoul(h, NULL, 16);
    }
    return *n > 0 ? SLC_OK : SLC_ERROR;
}


/* --- the subscriber ------------------------------------------------------- */

#define slc_cache_redis_sub_count(e, field, v)                              \
    __atomic_fetch_add(&(e)->field, (v), __ATOMIC_RELAXED)

static void
slc_cache_redis_sub_apply(slc_cache_redis_subscriber_t *y, const char *p,
    size_t len)
{
    uint32_t  hash[SLC_REDIS_PUSH_TABLES];
    unsigned  n;
    int       all, own, rc;
    uint64_t  sent, wall = slc_cache_redis_wall_ms(), lat;

    rc = slc_cache_redis_msg_parse(p, len, hash, &n, &all, &own, &sent);
    if (rc == SLC_DONE) {
        if (own) {
            __atomic_store_n(&y->e->beat, slc_time_ms(), __ATOMIC_RELEASE);
        }
        return;
    }
    if (rc != SLC_OK) {
        slc_cache_redis_sub_count(y->e, bad, 1);
        slc_cache_zones_invalidate(y->cycle, NULL, 0, 1, slc_time_ms());
        return;
    }
    if (own) {
        slc_cache_redis_sub_count(y->e, own, 1);
        return;
    }
    slc_cache_zones_invalidate(y->cycle, hash, n, all, slc_time_ms());
    lat = wall > sent ? wall - sent : 0;
    slc_cache_redis_sub_count(y->e, received, 1);
    slc_cache_redis_sub_count(y->e, lat_n, 1);
    slc_cache_redis_sub_count(y->e, lat_sum, lat);
    if (lat > __atomic_load_n(&y->e->lat_max, __ATOMIC_RELAXED)) {
        __atomic_store_n(&y->e->lat_max, lat, __ATOMIC_RELAXED);
    }
}

/*
 * Subscribed (again): entries kept while nothing came may be stale, so
 * every zone is invalidated first, unless the beat is still fresh (a
 * reload's new subscriber taking over from a live one).
 */
static void
slc_cache_redis_sub_subscribed(slc_cache_redis_subscriber_t *y)
{
    uint64_t now = slc_time_ms();
    uint64_t beat = __atomic_load_n(&y->e->beat, __ATOMIC_ACQUIRE);

    if (now > beat + SLC_REDIS_SUB_LIVE_MS) {
        slc_cache_zones_invalidate(y->cycle, NULL, 0, 1, now);
        slc_log(SLC_LOG_NOTICE, "redis \"%s\": receiving invalidations "
            "(the zones were invalidated: nothing came meanwhile)",
            y->rs->name);
    }
    __atomic_store_n(&y->e->state, SLC_REDIS_SUB_LIVE, __ATOMIC_RELEASE);
}

static void
slc_cache_redis_sub_message(redisAsyncContext *ac, void *r, void *arg)
{
    slc_cache_redis_subscriber_t *y = arg;
    redisReply                   *reply = r;

    (void) ac;
    if (reply == NULL || reply->type != REDIS_REPLY_ARRAY
        || reply->elements != 3
        || reply->element[0]->type != REDIS_REPLY_STRING)
    {
        return;
    }
    if (strcmp(reply->element[0]->str, "subscribe") == 0) {
        slc_cache_redis_sub_subscribed(y);
    } else if (strcmp(reply->element[0]->str, "message") == 0
               && reply->element[2]->type == REDIS_REPLY_STRING)
    {
        slc_cache_redis_sub_apply(y, reply->element[2]->str,
            reply->element[2]->len);
    }
}

static void
slc_cache_redis_sub_ready(slc_cache_redis_conn_t *rc)
{
    slc_cache_redis_subscriber_t *y = rc->data;

    redisAsyncCommand(rc->ac, slc_cache_redis_sub_message, y,
        "SUBSCRIBE %b", y->chan, y->clen);
}

static void
slc_cache_redis_sub_down(slc_cache_redis_conn_t *rc)
{
    slc_cache_redis_subscriber_t *y = rc->data;

    __atomic_store_n(&y->e->state, SLC_REDIS_SUB_DOWN, __ATOMIC_RELEASE);
    slc_cache_redis_sub_count(y->e, outages, 1);
    slc_log(SLC_LOG_WARN, "redis \"%s\": not receiving invalidations: "
        "servers without a binlog reader serve no hit until it is back",
        y->rs->name);
}

/* Every 250 ms: the beat, and whether the last came back in time. */
static void
slc_cache_redis_sub_beat(slc_timer_t *t)
{
    slc_cache_redis_subscriber_t *y = t->data;
    slc_cache_redis_resp_t       *r;
    char                          msg[SLC_REDIS_MSG_MAX];
    size_t                        n = slc_cache_redis_push_msg(msg,
                                        sizeof(msg), NULL, 0, 0);

    if (slc_cache_redis_conn_ready(y->pub)) {
        r = slc_cache_redis_cmd(3);
        slc_cache_redis_resp_str(r, "PUBLISH");
        slc_cache_redis_resp_arg(r, y->chan, y->clen);
        slc_cache_redis_resp_arg(r, msg, n);
        slc_cache_redis_send(y->pub, NULL, NULL);
    }
    slc_timer_add(slc_loop, t, SLC_REDIS_SUB_BEAT_MS);
}

int
slc_cache_redis_sub_run(slc_cycle_t *cycle,
    const slc_cache_redis_service_t *rs)
{
    slc_cache_redis_subscriber_t *y = &slc_redis_sub;

    memset(y, 0, sizeof(*y));
    y->rs = rs;
    y->cycle = cycle;
    y->e = y->rs->sub;
    __atomic_store_n(&y->e->pid, (int32_t) getpid(), __ATOMIC_RELAXED);
    y->clen = slc_cache_redis_chan(y->rs, y->chan);
    y->sub = slc_cache_redis_conn_open(y->rs, &y->conns, "subscriber ",
        slc_cache_redis_sub_ready, slc_cache_redis_sub_down, y);
    y->pub = slc_cache_redis_conn_open(y->rs, &y->conns, "beat ", NULL, NULL,
        y);
    if (y->sub == NULL || y->pub == NULL) {
        return SLC_ERROR;
    }
    slc_cache_redis_conn_start(y->sub);
    slc_cache_redis_conn_start(y->pub);
    y->beat.handler = slc_cache_redis_sub_beat;
    y->beat.data = y;
    slc_timer_add(slc_loop, &y->beat, SLC_REDIS_SUB_BEAT_MS);
    return SLC_OK;
}

void
slc_cache_redis_sub_exit(void)
{
    slc_cache_redis_subscriber_t *y = &slc_redis_sub;

    if (y->beat.armed) {
        slc_timer_del(slc_loop, &y->beat);
    }
    slc_cache_redis_conns_free(&y->conns);
}


/* --- workers -------------------------------------------------------------- */

int
slc_cache_redis_trusted(void *tier, uint64_t now)
{
    const slc_cache_redis_service_t *rs = tier;
    const slc_cache_redis_sub_t     *e = rs->sub;

    if (!rs->push || e == NULL) {
        return 1;
    }
    return __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == SLC_REDIS_SUB_LIVE
           && now <= __atomic_load_n(&e->beat, __ATOMIC_ACQUIRE)
                     + SLC_REDIS_SUB_LIVE_MS;
}


/* --- the zone and the role ------------------------------------------------ */

int
slc_cache_redis_sub_attach(slc_cache_redis_zone_t *zn,
    const slc_cache_redis_service_t *const *used, unsigned k, char *err,
    size_t errlen)
{
    slc_cache_redis_sub_t *tab = zn->entry;

    for (unsigned i = 0; i < k; i++) {
        slc_cache_redis_service_t *rs = (slc_cache_redis_service_t *) used[i];

        rs->owed_lock = &zn->lock;
        rs->sub = slc_shm_slot_claim(tab, SLC_REDIS_SUB_MAX, sizeof(*tab),
            sizeof(tab->name), rs->name);
        if (rs->sub == NULL) {
            snprintf(err, errlen, "more than %d redis services",
                SLC_REDIS_SUB_MAX);
            return SLC_ERROR;
        }
        rs->owed = &rs->sub->behind;
    }
    return SLC_OK;
}

void
slc_cache_redis_sub_report(const slc_cache_redis_service_t *const *used,
    unsigned k)
{

    for (unsigned i = 0; i < k; i++) {
        const slc_cache_redis_sub_t *e = used[i]->sub;

        if (e == NULL) {
            continue;
        }
        slc_log(SLC_LOG_NOTICE, "redis \"%s\": push=%s subscriber=%s "
            "pid=%d received=%llu own=%llu bad=%llu published_binlog=%llu "
            "outages=%llu latency_avg_ms=%llu latency_max_ms=%llu",
            used[i]->name, used[i]->push ? "on" : "off",
            !used[i]->push ? "none"
            : slc_cache_redis_trusted((void *) used[i], slc_time_ms())
            ? "live" : "down", (int) e->pid,
            (unsigned long long) e->received, (unsigned long long) e->own,
            (unsigned long long) e->bad,
            (unsigned long long) e->published,
            (unsigned long long) e->outages,
            (unsigned long long) (e->lat_n ? e->lat_sum / e->lat_n : 0),
            (unsigned long long) e->lat_max);
    }
}
