#ifndef SLC_CHANNEL_H
#define SLC_CHANNEL_H

#include "slc_core.h"
#include "slc_module.h"

/*
 * Handover channels: how an old worker gives its client connections to
 * the new worker of its slot on a reload (docs/architecture.md, "Reload").
 *
 * The master creates one socketpair(AF_UNIX, SOCK_SEQPACKET) per worker
 * slot before it forks the first worker of that slot, and keeps both ends
 * for its whole life; every worker inherits all of them.  A worker that is
 * not quitting reads the receive end of its own slot from its loop; a
 * worker quitting for a reload stops reading it and sends its sessions
 * into the send end of the slot that takes over (its own, or slot % the
 * new worker_processes when a reload dropped its slot).  So every reader
 * of a channel is the newest worker of that slot, but for the instant
 * around a reload, when the worker being replaced may still read one: it
 * then hands that session over again.  SEQPACKET keeps a message and its
 * descriptors one atomic unit; the master's ends keep the channel open,
 * so a message waits there while the slot's worker is being (re)started.
 *
 * A message is the core's header (the module) and the module's bytes,
 * with up to SLC_CHANNEL_MAX_FDS descriptors; the receiver hands it to
 * that module's handover_recv hook, which owns the descriptors from then
 * on.  With master_process off there are no channels.
 *
 * A small shared page that the master writes tells the workers the
 * running cycle's worker_processes and whether the master is stopping (a
 * QUIT to the master, not a reload): then nobody hands over, and quitting
 * workers go on reading their channel until it is empty, so a session
 * sent in the instant before is still served.
 */

#define SLC_CHANNEL_MAX_MSG  65536      /* bytes of a module's message */
#define SLC_CHANNEL_MAX_FDS  4

/* Master: channels for slots [0, n), creating those missing.  SLC_ERROR
   (logged) leaves handover off for the slots it could not create. */
int      slc_channel_grow(unsigned n);
/* Master: the running cycle's worker_processes, before its QUIT to the
   old workers. */
void     slc_channel_publish(unsigned nslots);
/* Master: stopping; no handover from now on. */
void     slc_channel_stop(void);
/* A role's process: it serves no client, it holds no channel. */
void     slc_channel_close_all(void);

/* Worker: whether a session may be handed over now (channels exist for
   this slot and its target, the master is not stopping). */
int      slc_channel_enabled(unsigned slot);
/* Worker: read its slot's channel from slc_loop (a no-op without one). */
void     slc_channel_listen(unsigned slot);
/* Worker, on QUIT for a reload: stop reading (the next worker does). */
void     slc_channel_unlisten(void);
/* Bytes waiting in the channel this worker reads, 0 if it reads none: a
   worker quitting while the master stops exits only when it is empty. */
size_t   slc_channel_pending(void);
/*
 * Worker `slot` hands over: send module m's message `msg` with `nfds`
 * descriptors to the worker that takes over its slot.  SLC_OK: sent, the
 * caller closes its copies of the descriptors (after removing them from
 * its epoll set: the registration belongs to the open file, which lives
 * on in the receiver).  SLC_AGAIN: the channel is full (the receiver is
 * slow), try again later.  SLC_ERROR: cannot (logged), do not retry.
 */
int      slc_channel_send(unsigned slot, const slc_module_t *m,
    const void *msg, size_t len, const int *fds, unsigned nfds);

#endif /* SLC_CHANNEL_H */
