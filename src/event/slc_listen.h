#ifndef SLC_LISTEN_H
#define SLC_LISTEN_H

#include "slc_core.h"
#include <sys/socket.h>

/*
 * Listening sockets, owned by the master.  A TCP address gets one socket
 * per worker slot, all in one SO_REUSEPORT group, so the kernel spreads
 * connections over workers; a unix socket is one socket shared by every
 * worker (registered with EPOLLEXCLUSIVE).  On reload, sockets of an address
 * that is still configured are carried over, so connections waiting in an
 * accept queue are not lost.
 */

typedef struct slc_listen_s  slc_listen_t;

/*
 * Takes over a connection accepted on `l` (non-blocking, close-on-exec):
 * from then on the handler owns `fd`.  The protocol layer that parses a
 * `listen` sets it, as nginx's ls->handler, so the worker accepts without
 * knowing what is spoken on the socket.
 */
typedef void (*slc_listen_handler_pt)(int fd, slc_listen_t *l,
    const struct sockaddr_storage *ss);

struct slc_listen_s {
    struct sockaddr_storage  addr;
    socklen_t                addrlen;
    char                     text[128];   /* as written: "127.0.0.1:4006" */
    int                      is_unix;
    int                      carried;     /* a newer cycle dup'ed it */
    int                      backlog;
    int                     *fds;         /* one per worker slot (TCP) */
    unsigned                 nfds;
    slc_listen_handler_pt    handler;
    void                    *srv;         /* the server {} block */
    const char              *file;        /* where it was configured */
    unsigned                 line;
    slc_listen_t            *next;
};

/* Parse "4006", "*:4006", "127.0.0.1:4006", "[::1]:4006", "unix:/p". */
int  slc_listen_parse(const char *s, slc_listen_t *l, char *err,
    size_t errlen);
/*
 * Open the sockets of every listen in `list` for `nworkers` slots; where
 * `old` has the same address its sockets are dup'ed (and marked carried),
 * so the old list stays usable if this fails.
 */
int  slc_listen_open_all(slc_listen_t *list, slc_listen_t *old,
    unsigned nworkers, char *err, size_t errlen);
/* One listening socket for l (non-blocking, SO_REUSEPORT for TCP), for a
   process that listens on its own (the status listener): the fd, or -1
   with err set. */
int  slc_listen_socket(slc_listen_t *l, char *err, size_t errlen);
/* Close a list's sockets; unix paths are unlinked unless carried over. */
void slc_listen_close_all(slc_listen_t *list, int unlink_unix);
/* Close, in a worker, every socket that is not its own slot's. */
void slc_listen_keep_slot(slc_listen_t *list, unsigned slot);

#endif /* SLC_LISTEN_H */
