#ifndef SLC_MYSQL_PEER_H
#define SLC_MYSQL_PEER_H

#include "slc_core.h"
#include <sys/socket.h>

/*
 * What a worker knows about one client address: how many of its sessions
 * are still in their handshake (max_handshakes_per_host) and how many
 * logins from it failed lately (the auth_failure_* brake).  Kept per
 * worker, so nothing is locked; SO_REUSEPORT spreads one address over all
 * workers, so the bounds hold per worker.
 *
 * An entry lives while a session holds it (from accept until the session
 * is authenticated or closes) or while it remembers failures.  Entries
 * that only remember failures are bounded (SLC_PEER_MAX_FAILED, the
 * oldest is forgotten first) and forgotten SLC_PEER_FORGET_MS after their
 * last failure, so the table stays within worker_connections plus that
 * bound whatever the clients do.  Unix-socket clients share one entry.
 */

#define SLC_PEER_MAX_FAILED  4096
#define SLC_PEER_FORGET_MS   (15 * 60 * 1000)

typedef struct slc_peer_s  slc_peer_t;

/* The entry of the client at `ss`, made on first use; NULL if no memory.
   The caller holds it (slc_peer_release) for as long as it uses it. */
slc_peer_t *slc_peer_hold(const struct sockaddr_storage *ss);
void        slc_peer_release(slc_peer_t *p);

/* Sessions of this address still in their handshake (held entries). */
unsigned    slc_peer_handshakes(const slc_peer_t *p);

/*
 * The failure brake, as MySQL's connection_control: once `threshold`
 * logins in a row failed, every further attempt (even a right one) is
 * answered after `delay` ms, doubled at each further failure up to
 * `max_delay`.  A success resets the count.  threshold 0: no brake.
 */
uint64_t    slc_peer_auth_delay(slc_peer_t *p, unsigned threshold,
    uint64_t delay, uint64_t max_delay, uint64_t now);
/* Failures in a row, as counted now (0 once forgotten). */
unsigned    slc_peer_auth_failures(slc_peer_t *p, uint64_t now);
void        slc_peer_auth_failed(slc_peer_t *p, uint64_t now);
void        slc_peer_auth_ok(slc_peer_t *p);

#endif /* SLC_MYSQL_PEER_H */
