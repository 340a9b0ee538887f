/*
 * Generation bumps from a process role (slc_cache_redis_sync.h): the binlog
 * reader moves the generations of the tables each committed group wrote,
 * in every Redis service of its cycle, before it invalidates the zones.
 * hiredis' blocking API, every connect and reply bounded by the service's
 * `timeout`: the reader is a process of its own, never a worker.
 *
 * One script per bump, so that ten hosts reading one binlog move a table
 * once per commit: it sets a mark named after the GTID (NX, for
 * SLC_REDIS_MARK_MS), and only the call that set it bumps.  A generation
 * missing is created first with a random value (as the workers' bumps
 * do), then INCR.  All its keys share the generations' hash tag: in a
 * Redis Cluster one node has them, found by following MOVED and ASK (the
 * connection goes where they say).  During that slot's migration the
 * script's keys are not all on one node (TRYAGAIN): its work is then done
 * key by key, each command following ASK, without the mark.
 *
 * A service that fails (refused, timed out, AUTH denied) is logged when
 * the reason changes, and not tried again before its breaker's back-off
 * (100 ms doubling to 30 s): the reader then marks the tables as owed
 * (slc_cache_redis_owed.h) and tries again at the next group or
 * heartbeat.
 */

#include "slc_core.h"
#include "slc_log.h"
#include "slc_event.h"
#include "slc_cache_redis_sync.h"
#include "slc_cache_redis_conn.h"
#include "slc_cache_redis_keys.h"
#include "slc_cache_redis_slots.h"
#include "slc_cache_redis_sub.h"
#include "slc_cache_redis_owed.h"

#include <hiredis.h>
#include <netdb.h>

#define SLC_REDIS_MARK_MS    "600000"     /* a GTID's mark lives 10 min */
#define SLC_REDIS_BUMP_KEYS  (256 + 2)    /* the mark, the tables, all */

static const char slc_cache_redis_bump_lua[] =
    "if ARGV[1] ~= '' and not redis.call('SET', KEYS[1], '1', 'NX', "
    "'PX', ARGV[2]) then return 0 end "
    "for i = 2, #KEYS do "
    "redis.call('SET', KEYS[i], ARGV[i + 1], 'NX') "
    "redis.call('INCR', KEYS[i]) end "
    "return 1";

typedef struct {
    const slc_cache_redis_service_t *rs;
    redisContext                    *c;
    slc_cache_redis_breaker_t        breaker;
    char                             last_error[256];
    char                             node[64];  /* a cluster's, where a
                                                   redirection sent it */
    unsigned                         server;    /* else this `server` */
} slc_cache_redis_sync_t;

static slc_cache_redis_sync_t  slc_redis_sync[SLC_REDIS_SYNC_MAX];
static unsigned                slc_redis_nsync;


/* --- a connection --------------------------------------------------------- */

static void
slc_cache_redis_sync_fail(slc_cache_redis_sync_t *y, const char *why,
    size_t len)
{
    char esc[256];

    slc_log_escape(esc, sizeof(esc), why, len, 0);
    if (strcmp(esc, y->last_error) != 0) {
        slc_log(SLC_LOG_ERR, "redis \"%s\": bumping generations: %s (the "
            "tables stay marked until it answers)", y->rs->name, esc);
        strlcpy(y->last_error, esc, sizeof(y->last_error));
    }
    if (y->c != NULL) {
        redisFree(y->c);
        y->c = NULL;
    }
    if (y->node[0] != '\0') {
        y->node[0] = '\0';             /* back to the seeds */
    } else {
        y->server++;
    }
    slc_cache_redis_breaker_failure(&y->breaker, slc_time_ms());
}

/* r if it is not an error, else the failure logged. */
static redisReply *
slc_cache_redis_sync_check(slc_cache_redis_sync_t *y, const char *what,
    redisReply *r)
{
    char why[320];

    if (r == NULL) {
        snprintf(why, sizeof(why), "%s: %s", what, y->c->errstr);
        slc_cache_redis_sync_fail(y, why, strlen(why));
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        snprintf(why, sizeof(why), "%s: %.*s", what,
            (int) slc_min(r->len, (size_t) 200), r->str);
        freeReplyObject(r);
        slc_cache_redis_sync_fail(y, why, strlen(why));
        return NULL;
    }
    return r;
}

static redisReply *
slc_cache_redis_sync_call(slc_cache_redis_sync_t *y, const char *what,
    int argc, const char **argv, const size_t *len)
{
    return slc_cache_redis_sync_check(y, what,
                                      redisCommandArgv(y->c, argc, argv,
                                                       len));
}

static int
slc_cache_redis_sync_setup(slc_cache_redis_sync_t *y)
{
    const slc_cache_redis_service_t *rs = y->rs;
    char                             pw[257], db[24];
    const char                      *argv[3];
    size_t                           len[3];
    int                              n;
    redisReply                      *r;

    if ((n = slc_cache_redis_auth_argv(rs, pw, argv, len)) > 0) {
        r = slc_cache_redis_sync_call(y, "AUTH", n, argv, len);
        explicit_bzero(pw, sizeof(pw));
        if (r == NULL) {
            return SLC_ERROR;
        }
        freeReplyObject(r);
    }
    if (rs->db != 0) {
        snprintf(db, sizeof(db), "%lld", rs->db);
        argv[0] = "SELECT", len[0] = 6;
        argv[1] = db, len[1] = strlen(db);
        if ((r = slc_cache_redis_sync_call(y, "SELECT", 2, argv, len))
            == NULL)
        {
            return SLC_ERROR;
        }
        freeReplyObject(r);
    }
    return SLC_OK;
}

static int
slc_cache_redis_sync_connect(slc_cache_redis_sync_t *y)
{
    struct timeval tv = {
        .tv_sec = y->rs->timeout / 1000,
        .tv_usec = (y->rs->timeout % 1000) * 1000,
    };
    char           buf[NI_MAXHOST];
    int            port;
    const char    *host = slc_cache_redis_target(y->rs, y->node, y->server,
                              buf, sizeof(buf), &port);

    if (host == NULL) {
        slc_cache_redis_sync_fail(y, "connect: bad address", 20);
        return SLC_ERROR;
    }
    y->c = port < 0 ? redisConnectUnixWithTimeout(host, tv)
                    : redisConnectWithTimeout(host, port, tv);
    if (y->c == NULL || y->c->err) {
        const char *e = y->c != NULL ? y->c->errstr : "out of memory";
        char        why[160];

        snprintf(why, sizeof(why), "connect: %s", e);
        slc_cache_redis_sync_fail(y, why, strlen(why));
        return SLC_ERROR;
    }
    if (redisSetTimeout(y->c, tv) != REDIS_OK
        || slc_cache_redis_sync_setup(y) != SLC_OK)
    {
        if (y->c != NULL) {
            slc_cache_redis_sync_fail(y, "connect: setup", 14);
        }
        return SLC_ERROR;
    }
    return SLC_OK;
}

static slc_cache_redis_sync_t *
slc_cache_redis_sync_of(const slc_cache_redis_service_t *rs)
{
    slc_cache_redis_sync_t *y;

    for (unsigned i = 0; i < slc_redis_nsync; i++) {
        if (slc_redis_sync[i].rs == rs) {
            return &slc_redis_sync[i];
        }
    }
    if (slc_redis_nsync == SLC_REDIS_SYNC_MAX) {
        return NULL;
    }
    y = &slc_redis_sync[slc_redis_nsync++];
    y->rs = rs;
    slc_cache_redis_breaker_init(&y->breaker, 1, 100, 30000);
    return y;
}


/* --- a bump --------------------------------------------------------------- */

/* The commit this host's bump made its own, pushed to the hosts that
   read no binlog (slc_cache_redis_sub.c). */
static int
slc_cache_redis_sync_publish(slc_cache_redis_sync_t *y, const uint32_t *hash,
    unsigned n, int all)
{
    char        chan[SLC_REDIS_KEY_MAX];
    char        msg[SLC_REDIS_MSG_MAX];
    const char *argv[3] = { "PUBLISH", chan, msg };
    size_t      len[3] = { 7, 0, 0 };
    redisReply *r;

    len[1] = slc_cache_redis_chan(y->rs, chan);
    len[2] = slc_cache_redis_push_msg(msg, sizeof(msg), hash, n, all);
    if ((r = slc_cache_redis_sync_call(y, "PUBLISH", 3, argv, len)) == NULL) {
        return SLC_ERROR;
    }
    freeReplyObject(r);
    if (y->rs->sub != NULL) {
        __atomic_fetch_add(&y->rs->sub->published, 1, __ATOMIC_RELAXED);
    }
    return SLC_OK;
}

/* A command to a cluster's node that redirects is sent again where it
   says (connected there; ASKING first for ASK), twice at most.  With
   `again`, a TRYAGAIN (a multi-key command in a slot being migrated) sets
   it and is not a failure. */
static redisReply *
slc_cache_redis_sync_follow(slc_cache_redis_sync_t *y, const char *what,
    int argc, const char **argv, const size_t *len, int *again)
{
    static const char  *asking[1] = { "ASKING" };
    static const size_t asklen[1] = { 6 };
    redisReply         *r;
    char                node[64];
    unsigned            slot;
    int                 ask;

    for (unsigned hop = 0; ; hop++) {
        r = redisCommandArgv(y->c, argc, argv, len);
        if (again != NULL && r != NULL && r->type == REDIS_REPLY_ERROR
            && slc_cache_redis_tryagain(r->str, r->len))
        {
            freeReplyObject(r);
            *again = 1;
            return NULL;
        }
        if (r == NULL || r->type != REDIS_REPLY_ERROR || hop == 2
            || slc_cache_redis_redirect_parse(r->str, r->len, &ask, &slot,
                                              node, sizeof(node)) != SLC_OK)
        {
            return slc_cache_redis_sync_check(y, what, r);
        }
        freeReplyObject(r);
        redisFree(y->c);
        y->c = NULL;
        strlcpy(y->node, node, sizeof(y->node));
        if (slc_cache_redis_sync_connect(y) != SLC_OK) {
            return NULL;
        }
        if (ask) {
            if ((r = slc_cache_redis_sync_call(y, "ASKING", 1, asking,
                                               asklen)) == NULL)
            {
                return NULL;
            }
            freeReplyObject(r);
        }
    }
}

/* The script's work key by key (SET NX, INCR: each follows ASK), for a
   slot being migrated, where the script's keys are not all on one node:
   not once per GTID across hosts then (a bump more is a miss more, never
   a stale hit). */
static int
slc_cache_redis_sync_each(slc_cache_redis_sync_t *y, const char **key,
    const size_t *klen, const char **val, const size_t *vlen, unsigned k)
{
    const char *argv[4];
    size_t      len[4];
    redisReply *r;

    for (unsigned i = 0; i < k; i++) {
        argv[0] = "SET", len[0] = 3;
        argv[1] = key[i], len[1] = klen[i];
        argv[2] = val[i], len[2] = vlen[i];
        argv[3] = "NX", len[3] = 2;
        if ((r = slc_cache_redis_sync_follow(y, "SET", 4, argv, len, NULL))
            == NULL)
        {
            return SLC_ERROR;
        }
        freeReplyObject(r);
        argv[0] = "INCR", len[0] = 4;
        if ((r = slc_cache_redis_sync_follow(y, "INCR", 2, argv, len, NULL))
            == NULL)
        {
            return SLC_ERROR;
        }
        freeReplyObject(r);
    }
    return SLC_OK;
}

/* EVAL's arguments: the script, the key count, the mark, the tables'
   generation keys (every table's when `all`), then the id, the mark's
   life and one random first value per generation. */
static int
slc_cache_redis_sync_bump(slc_cache_redis_sync_t *y, const char *id,
    const uint32_t *hash, unsigned n, int all)
{
    static char        keys[SLC_REDIS_BUMP_KEYS][SLC_REDIS_KEY_MAX];
    static char        vals[SLC_REDIS_BUMP_KEYS][24];
    static const char *argv[2 * SLC_REDIS_BUMP_KEYS + 4];
    static size_t      len[2 * SLC_REDIS_BUMP_KEYS + 4];
    unsigned           k = all ? 1 : slc_min(n, SLC_REDIS_BUMP_KEYS - 2);
    char               nkeys[16];
    int                a = 0, applied, again = 0;
    redisReply        *r;

    argv[a] = "EVAL", len[a++] = 4;
    argv[a] = slc_cache_redis_bump_lua;
    len[a++] = sizeof(slc_cache_redis_bump_lua) - 1;
    argv[a] = nkeys;
    len[a++] = (size_t) snprintf(nkeys, sizeof(nkeys), "%u", k + 1);
    argv[a] = keys[0];
    len[a++] = (size_t) snprintf(keys[0], SLC_REDIS_KEY_MAX, "%s{g}d:%s",
                                 y->rs->prefix, id != NULL ? id : "-");
    for (unsigned i = 0; i < k; i++) {
        argv[a] = keys[i + 1];
        len[a++] = slc_cache_redis_gen_key(y->rs, all ? 0 : hash[i], all,
                                           keys[i + 1]);
    }
    argv[a] = id != NULL ? id : "", len[a++] = id != NULL ? strlen(id) : 0;
    argv[a] = SLC_REDIS_MARK_MS, len[a++] = sizeof(SLC_REDIS_MARK_MS) - 1;
    for (unsigned i = 0; i < k; i++) {
        argv[a] = vals[i];
        len[a++] = slc_cache_redis_gen_random(vals[i], sizeof(vals[i]));
    }
    r = slc_cache_redis_sync_follow(y, "EVAL", a, argv, len, &again);
    if (r == NULL && again) {
        /* the keys after the script's, its values after the mark's life */
        return slc_cache_redis_sync_each(y, argv + 4, len + 4,
                   argv + 6 + k, len + 6 + k, k) == SLC_OK
               ? slc_cache_redis_sync_publish(y, hash, n, all) : SLC_ERROR;
    }
    if (r == NULL) {
        return SLC_ERROR;
    }
    applied = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    return applied ? slc_cache_redis_sync_publish(y, hash, n, all)
                   : SLC_OK;
}

/* What y's service is owed by this host, again: SLC_OK once it has it
   (or was owed nothing). */
static int
slc_cache_redis_sync_owed(slc_cache_redis_sync_t *y)
{
    slc_cache_redis_behind_t snap;

    if (!slc_cache_redis_owed_take(y->rs, &snap)) {
        return SLC_OK;
    }
    if (slc_cache_redis_sync_bump(y, NULL, snap.hash, snap.n, snap.all)
        != SLC_OK)
    {
        return SLC_ERROR;
    }
    slc_cache_redis_owed_paid(y->rs, &snap);
    slc_log(SLC_LOG_NOTICE, "redis \"%s\": the binlog reader delivered the "
        "generations owed: their entries are taken from Redis again",
        y->rs->name);
    return SLC_OK;
}

/* One service: what it is owed, then this bump; marked if it fails. */
static int
slc_cache_redis_sync_one(slc_cache_redis_sync_t *y, const char *id,
    const uint32_t *hash, unsigned n, int all)
{
    if (!slc_cache_redis_breaker_allow(&y->breaker, slc_time_ms())
        || (y->c == NULL && slc_cache_redis_sync_connect(y) != SLC_OK)
        || slc_cache_redis_sync_owed(y) != SLC_OK
        || ((n > 0 || all)
            && slc_cache_redis_sync_bump(y, id, hash, n, all) != SLC_OK))
    {
        slc_cache_redis_owed_add(y->rs, hash, n, all);
        return SLC_ERROR;
    }
    if (slc_cache_redis_breaker_success(&y->breaker)
        || y->last_error[0] != '\0')
    {
        slc_log(SLC_LOG_NOTICE, "redis \"%s\": bumping generations "
            "again", y->rs->name);
        y->last_error[0] = '\0';
    }
    return SLC_OK;
}

int
slc_cache_redis_sync_bumps(const slc_cache_redis_service_t *const *used,
    unsigned nused, const char *id, const uint32_t *hash, unsigned n,
    int all)
{
    int rc = SLC_OK;

    if (n > SLC_REDIS_BUMP_KEYS - 2) {
        all = 1;                        /* more than one call takes */
    }
    for (unsigned i = 0; i < nused; i++) {
        slc_cache_redis_sync_t *y = slc_cache_redis_sync_of(used[i]);

        if (y == NULL) {
            rc = SLC_ERROR;
        } else if (slc_cache_redis_sync_one(y, id, hash, n, all) != SLC_OK) {
            rc = SLC_ERROR;
        }
    }
    return rc;
}

void
slc_cache_redis_sync_close(void)
{
    for (unsigned i = 0; i < slc_redis_nsync; i++) {
        if (slc_redis_sync[i].c != NULL) {
            redisFree(slc_redis_sync[i].c);
        }
    }
    slc_redis_nsync = 0;
}
