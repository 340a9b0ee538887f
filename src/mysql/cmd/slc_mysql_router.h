#ifndef SLC_MYSQL_ROUTER_H
#define SLC_MYSQL_ROUTER_H

#include "slc_core.h"
#include "slc_mysql_conf.h"
#include "slc_mysql_filter.h"

typedef struct slc_backend_s  slc_backend_t;

/*
 * What a router module provides.  The core accepts the client and, with
 * `auth local`, authenticates it; then it calls start() and the router
 * chooses the server of the session's own backend
 * (slc_session_backend_open).  Once that backend is logged in, the core
 * moves the bytes: the byte pump when the router has no `command` hook
 * and the server no filters (readconn: the router only chose), else
 * command mode, where the router picks the backend of each command and
 * may open more (slc_cmd_open_backend, slc_mysql_cmd.h).
 */

typedef struct slc_router_s  slc_router_t;

struct slc_router_s {
    /* Check a server {} block that uses this router (config time). */
    int   (*check)(slc_mysql_srv_t *srv, char *err, size_t errlen);
    /* Take over an authenticated (or, for passthrough, new) session. */
    void  (*start)(slc_session_t *s);
    /* Optional: the backend opened by start() is authenticated and the
       client has its OK, and the session enters byte mode (no filters,
       no command hook: the core moves the bytes, slc_mysql_pump.h): the
       router may drop what it kept to choose. */
    void  (*ready)(slc_session_t *s);
    /* The backend from start() could not be reached (auth local, before
       the client was told anything): try another server or fail. */
    void  (*retry)(slc_session_t *s);
    /*
     * Command mode (slc_mysql_filter.h): the backend that takes `cmd`,
     * the session's own (s->backend) or one the router opened with
     * slc_cmd_open_backend (still logging in is fine: the command waits
     * for slc_cmd_attach).  NULL: the router answered it (slc_reply)
     * or closed the session.  A router without it gets every command
     * that no filter answered on s->backend, or pumps bytes when the
     * server has no filters.
     */
    slc_backend_t *(*command)(slc_session_t *s, const slc_cmd_t *cmd);
    /*
     * Command mode, optional: a response on b, any backend of the
     * session's, is complete; b's tracker holds what it said.  On the
     * backend of the client's command: its last bytes were just written
     * to the client.  On another (a copy, the router's own commands): it
     * was read in the background and dropped.
     */
    void  (*done)(slc_session_t *s, slc_backend_t *b,
                  const slc_mysql_reply_t *r);
    /* Command mode, optional: the response to a client's command has
       ended in bytes just read from s->backend, which the client has not
       been sent yet (done follows once it has); the tracker holds what
       it said.  For what other sessions, on other workers too, must know
       by the time the client does.  It may not send, inject, retarget or
       close. */
    void  (*ended)(slc_session_t *s, const slc_mysql_reply_t *r);
    /* The session closes: close the backends the router opened. */
    void  (*close)(slc_session_t *s);
    /* Whether the router supports `auth passthrough`. */
    int     passthrough;
    /*
     * A session handed over on reload by an old worker
     * (slc_mysql_handover.c): logged in, at rest, its backend s->backend
     * on a server of s->srv's upstream, and `n` more backends of the
     * router's (the `extra` hook of the old worker's router named them,
     * with its tags; logged in, idle, no ops yet).  Resume forwarding and
     * take the extra backends (set their ops, slc_cmd_attach), or return
     * why this server block no longer takes the session (the caller
     * closes it and the extra backends: at rest, that is a safe point).
     * NULL hook: the router takes none, and its sessions stay with the
     * old worker.
     */
    const char *(*adopt)(slc_session_t *s, slc_backend_t **extra,
                         const uint8_t *tags, unsigned n);
    /*
     * The sending side: the router's backends of s besides s->backend
     * that go along with it (at most `max`, with a tag each for adopt),
     * and how many.  The core hands the session over only when every one
     * of them is idle, and takes them out of this worker; the router's
     * `close` then closes what it holds (their sockets already gone).
     * NULL: the router has no other backend.
     */
    int   (*extra)(slc_session_t *s, slc_backend_t **b, uint8_t *tags,
                   unsigned max);
    /*
     * Optional: the router's own state of s that goes along (its session
     * history...): save writes it into buf (at most cap bytes) and
     * returns its length, 0 for none (or when it does not fit: the router
     * must then cope without it); restore, in the new worker, gets it
     * back before adopt (only if save wrote something).
     */
    size_t (*save)(slc_session_t *s, uint8_t *buf, size_t cap);
    void   (*restore)(slc_session_t *s, const uint8_t *p, size_t len);
    /*
     * Optional, command mode: the session's own backend failed (`why`).
     * Return another backend of the router's, logged in and idle, to
     * become the session's own (the core gives it the own backend's ops,
     * slc_cmd_set_own, closes the lost one and tells a command that was
     * on it ERR 1927), or NULL: the session ends, as without the hook.
     */
    slc_backend_t *(*own_lost)(slc_session_t *s, const char *why);
    /*
     * Optional: the backends the router opened on servers in maintenance
     * (the admin socket's `server NAME disable`, slc_upstream_in_maint).
     * With close 0: whether it has any.  With close 1, the session at
     * rest: it closes those it can (not one in a transaction) and says
     * whether any is left.
     */
    int   (*maint)(slc_session_t *s, int close);
};

/* The router of a server {} block: its module's `router` table, which
   the core holds as an opaque pointer. */
static inline const slc_router_t *
slc_mysql_srv_router(const slc_mysql_srv_t *srv)
{
    return srv->router->router;
}

#endif /* SLC_MYSQL_ROUTER_H */
