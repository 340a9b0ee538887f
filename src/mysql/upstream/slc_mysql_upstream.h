#ifndef SLC_MYSQL_UPSTREAM_H
#define SLC_MYSQL_UPSTREAM_H

#include "slc_core.h"
#include "slc_mysql_conf.h"

/*
 * Server choice: least connections weighted by `weight`, among the servers
 * of the wanted roles, counting the connections of every worker (shared
 * stats).  `max_connections` is a hard limit across workers.  A server
 * whose connect failed is avoided for SLC_UPSTREAM_FAIL_MS in this worker;
 * if every candidate is avoided, the least loaded of them is tried anyway,
 * so a recovered server is used at once.
 */

#define SLC_UPSTREAM_FAIL_MS  10000

/* A set of servers of one upstream (at most 256), as a bitmap. */
#define SLC_UPSTREAM_SET_BYTES  32

static inline void
slc_upstream_set(uint8_t *set, unsigned i)
{
    set[i >> 3] |= (uint8_t) (1u << (i & 7));
}

static inline int
slc_upstream_isset(const uint8_t *set, unsigned i)
{
    return (set[i >> 3] >> (i & 7)) & 1;
}

/* The server of `up` configured as `name` (its address as written), or
   NULL. */
slc_upstream_server_t *slc_upstream_find(const slc_upstream_t *up,
    const char *name);

/*
 * Pick a server and take a connection slot on it, never one in `skip`
 * (NULL: none).  NULL when there is no such server of these roles
 * (*full = 0) or all are at max_connections (*full = 1).
 */
slc_upstream_server_t *slc_upstream_pick(slc_upstream_t *up, unsigned roles,
    const uint8_t *skip, int *full);
/* A connection slot on this very server: 0 when it is at max_connections. */
int  slc_upstream_acquire(slc_upstream_server_t *us);
void slc_upstream_release(slc_upstream_server_t *us);
/* A connection slot for a backend connection that is already open (one
   handed over by a reload, whose old worker gave its slot back): never
   refused, even over max_connections. */
void slc_upstream_take(slc_upstream_server_t *us);
/*
 * A handshake slot (auth passthrough: a client not yet authenticated by
 * the server) on `us`, across workers; 0 when `max` (0: no limit) are
 * taken.  Released when the session is authenticated or closes.
 */
int  slc_upstream_handshake_acquire(slc_upstream_server_t *us, uint64_t max);
void slc_upstream_handshake_release(slc_upstream_server_t *us);
void slc_upstream_mark_down(slc_upstream_server_t *us);
void slc_upstream_count_bytes(slc_upstream_server_t *us, size_t in,
    size_t out);

#endif /* SLC_MYSQL_UPSTREAM_H */
