/*
 * A Redis Cluster's slot map and its redirections
 * (slc_cache_redis_slots.h), for slc_cache_redis_cluster.c (issue 22,
 * section 3): pure, unit tested.
 *
 * CLUSTER SLOTS answers an array of ranges: [start, end, [host, port,
 * id, ...], replicas...]; the first node of a range is its master, the
 * one the tier talks to.  Anything else (a type that is not the expected
 * one, a range out of 0..16383 or upside down, more masters than fit) is
 * refused whole and the map is left as it was: a node's answer is
 * checked, never trusted.  A redirection is "MOVED <slot> <host>:<port>"
 * (the slot lives there now: refresh the map) or "ASK ..." (for this
 * command only, after ASKING).  A node is dialled by its numeric IPv4
 * address only (slc_cache_redis_node_addr): a name would be resolved by
 * a blocking call on a worker.
 */

#include "slc_core.h"
#include "slc_cache_redis_slots.h"

#include <hiredis.h>
#include <arpa/inet.h>

/* The node "host:port" of a range's master entry; SLC_ERROR if it is not
   [string, integer, ...]. */
static int
slc_cache_redis_slots_node(const redisReply *e, char *out, size_t cap)
{
    const redisReply *h, *p;

    if (e->type != REDIS_REPLY_ARRAY || e->elements < 2) {
        return SLC_ERROR;
    }
    h = e->element[0];
    p = e->element[1];
    if (h->type != REDIS_REPLY_STRING || p->type != REDIS_REPLY_INTEGER
        || h->len == 0 || h->len >= 48 || memchr(h->str, ':', h->len)
        != NULL || p->integer < 1 || p->integer > 65535)
    {
        return SLC_ERROR;
    }
    snprintf(out, cap, "%.*s:%lld", (int) h->len, h->str, p->integer);
    return SLC_OK;
}

/* The index of node `name` in the map, added if new; -1 when full. */
static int
slc_cache_redis_slots_index(slc_cache_redis_slots_t *m, const char *name)
{
    for (unsigned i = 0; i < m->n; i++) {
        if (strcmp(m->node[i], name) == 0) {
            return (int) i;
        }
    }
    if (m->n == SLC_REDIS_NODES_MAX) {
        return -1;
    }
    strlcpy(m->node[m->n], name, sizeof(m->node[0]));
    return (int) m->n++;
}

int
slc_cache_redis_slots_parse(const redisReply *r, slc_cache_redis_slots_t *map)
{
    slc_cache_redis_slots_t m;          /* (16 KiB: built aside) */
    char                    name[64];
    int                     k;

    if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
        return SLC_ERROR;
    }
    memset(&m, 0, sizeof(m));
    memset(m.slot, SLC_REDIS_NO_NODE, sizeof(m.slot));
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *e = r->element[i];
        long long         lo, hi;

        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3
            || e->element[0]->type != REDIS_REPLY_INTEGER
            || e->element[1]->type != REDIS_REPLY_INTEGER)
        {
            return SLC_ERROR;
        }
        lo = e->element[0]->integer;
        hi = e->element[1]->integer;
        if (lo < 0 || hi < lo || hi >= SLC_REDIS_SLOTS
            || slc_cache_redis_slots_node(e->element[2], name, sizeof(name))
               != SLC_OK
            || (k = slc_cache_redis_slots_index(&m, name)) < 0)
        {
            return SLC_ERROR;
        }
        memset(m.slot + lo, k, (size_t) (hi - lo + 1));
    }
    memcpy(map, &m, sizeof(m));
    return SLC_OK;
}

int
slc_cache_redis_redirect_parse(const char *err, size_t len, int *ask,
    unsigned *slot, char *node, size_t cap)
{
    char                buf[128], *sp, *end;
    unsigned long       s;

    if (len >= sizeof(buf)) {
        return SLC_ERROR;
    }
    memcpy(buf, err, len);
    buf[len] = '\0';
    if (strncmp(buf, "MOVED ", 6) == 0) {
        *ask = 0;
    } else if (strncmp(buf, "ASK ", 4) == 0) {
        *ask = 1;
    } else {
        return SLC_ERROR;
    }
    sp = buf + (*ask ? 4 : 6);
    if (*sp < '0' || *sp > '9') {
        return SLC_ERROR;
    }
    s = strtoul(sp, &end, 10);
    if (*end != ' ' || s >= SLC_REDIS_SLOTS || end[1] == '\0'
        || strchr(end + 1, ' ') != NULL || strchr(end + 1, ':') == NULL
        || strlen(end + 1) >= cap)
    {
        return SLC_ERROR;
    }
    *slot = (unsigned) s;
    strlcpy(node, end + 1, cap);
    return SLC_OK;
}

int
slc_cache_redis_node_addr(const char *node, char *host, size_t hlen,
    int *port)
{
    const char     *colon = strrchr(node, ':');
    struct in_addr  a;
    char           *end;
    long            p;

    if (colon == NULL || (size_t) (colon - node) >= hlen) {
        return SLC_ERROR;
    }
    memcpy(host, node, (size_t) (colon - node));
    host[colon - node] = '\0';
    p = strtol(colon + 1, &end, 10);
    if (*end != '\0' || p < 1 || p > 65535 || inet_pton(AF_INET, host, &a)
        != 1)
    {
        return SLC_ERROR;       /* a name would be resolved blocking */
    }
    *port = (int) p;
    return SLC_OK;
}

int
slc_cache_redis_tryagain(const char *err, size_t len)
{
    return len >= 8 && memcmp(err, "TRYAGAIN", 8) == 0;
}
