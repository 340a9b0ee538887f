#include "slc_core.h"
#include "slc_mysql_peer.h"

#include <limits.h>
#include <netinet/in.h>
#include <sys/tree.h>

/* One client address of this worker (see slc_mysql_peer.h). */
struct slc_peer_s {
    RB_ENTRY(slc_peer_s)     entry;
    TAILQ_ENTRY(slc_peer_s)  lru;       /* while failures > 0: by last one */
    uint8_t                  key[17];   /* family, then the address */
    unsigned                 holds;     /* sessions in their handshake */
    unsigned                 failures;  /* failed logins in a row */
    uint64_t                 last_failure;
};

static int
slc_peer_cmp(const slc_peer_t *a, const slc_peer_t *b)
{
    return memcmp(a->key, b->key, sizeof(a->key));
}

RB_HEAD(slc_peer_tree, slc_peer_s);
RB_PROTOTYPE(slc_peer_tree, slc_peer_s, entry, slc_peer_cmp)
RB_GENERATE(slc_peer_tree, slc_peer_s, entry, slc_peer_cmp)

TAILQ_HEAD(slc_peer_lru, slc_peer_s);

/* Per worker: a worker runs one configuration generation, then exits. */
static struct {
    struct slc_peer_tree  tree;
    struct slc_peer_lru   failed;
    unsigned              nfailed;
} slc_peers = {
    .tree = RB_INITIALIZER(&slc_peers.tree),
    .failed = TAILQ_HEAD_INITIALIZER(slc_peers.failed),
};

static void
slc_peer_key(const struct sockaddr_storage *ss, uint8_t *key)
{
    memset(key, 0, 17);
    key[0] = (uint8_t) ss->ss_family;
    if (ss->ss_family == AF_INET) {
        memcpy(key + 1, &((const struct sockaddr_in *) (const void *) ss)
            ->sin_addr, 4);
    } else if (ss->ss_family == AF_INET6) {
        memcpy(key + 1, &((const struct sockaddr_in6 *) (const void *) ss)
            ->sin6_addr, 16);
    }
    /* AF_UNIX: every local client is the same "address" */
}

static void
slc_peer_free_unused(slc_peer_t *p)
{
    if (p->holds == 0 && p->failures == 0) {
        RB_REMOVE(slc_peer_tree, &slc_peers.tree, p);
        free(p);
    }
}

static void
slc_peer_forget(slc_peer_t *p)
{
    if (p->failures > 0) {
        TAILQ_REMOVE(&slc_peers.failed, p, lru);
        slc_peers.nfailed--;
        p->failures = 0;
    }
    slc_peer_free_unused(p);
}

/* Forget failures older than SLC_PEER_FORGET_MS, oldest first. */
static void
slc_peer_expire(uint64_t now)
{
    slc_peer_t *p;

    while ((p = TAILQ_FIRST(&slc_peers.failed)) != NULL
           && now - p->last_failure >= SLC_PEER_FORGET_MS)
    {
        slc_peer_forget(p);
    }
}

slc_peer_t *
slc_peer_hold(const struct sockaddr_storage *ss)
{
    slc_peer_t  find, *p;

    slc_peer_key(ss, find.key);
    p = RB_FIND(slc_peer_tree, &slc_peers.tree, &find);
    if (p == NULL) {
        p = calloc(1, sizeof(*p));
        if (p == NULL) {
            return NULL;
        }
        memcpy(p->key, find.key, sizeof(p->key));
        RB_INSERT(slc_peer_tree, &slc_peers.tree, p);
    }
    p->holds++;
    return p;
}

void
slc_peer_release(slc_peer_t *p)
{
    p->holds--;
    slc_peer_free_unused(p);
}

unsigned
slc_peer_handshakes(const slc_peer_t *p)
{
    return p->holds;
}

unsigned
slc_peer_auth_failures(slc_peer_t *p, uint64_t now)
{
    slc_peer_expire(now);
    return p->failures;
}

uint64_t
slc_peer_auth_delay(slc_peer_t *p, unsigned threshold, uint64_t delay,
    uint64_t max_delay, uint64_t now)
{
    unsigned over;

    if (threshold == 0 || slc_peer_auth_failures(p, now) < threshold) {
        return 0;
    }
    over = p->failures - threshold;
    if (over >= 32 || delay << over >= max_delay) {
        return max_delay;
    }
    return delay << over;
}

void
slc_peer_auth_failed(slc_peer_t *p, uint64_t now)
{
    slc_peer_expire(now);
    if (p->failures > 0) {
        TAILQ_REMOVE(&slc_peers.failed, p, lru);
    } else {
        slc_peers.nfailed++;
    }
    if (p->failures < UINT_MAX) {
        p->failures++;
    }
    p->last_failure = now;
    TAILQ_INSERT_TAIL(&slc_peers.failed, p, lru);
    if (slc_peers.nfailed > SLC_PEER_MAX_FAILED) {
        /* bounded memory: the address that failed longest ago goes */
        slc_peer_forget(TAILQ_FIRST(&slc_peers.failed));
    }
}

void
slc_peer_auth_ok(slc_peer_t *p)
{
    slc_peer_forget(p);     /* held by the caller: not freed */
}
