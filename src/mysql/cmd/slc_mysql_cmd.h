#ifndef SLC_MYSQL_CMD_H
#define SLC_MYSQL_CMD_H

#include "slc_core.h"
#include "slc_mysql_filter.h"
#include "slc_mysql_session.h"
#include "slc_mysql_backend.h"

/*
 * Command mode (slc_mysql_cmd.c): the session core's side of the command
 * layer whose interface filters and routers see in slc_mysql_filter.h.
 */

/* Whether sessions of `srv` run in command mode (filters, or a router
   that routes per command). */
int  slc_cmd_wanted(const slc_mysql_srv_t *srv);
/* The session is authenticated and its backend ready: enter command mode
   (instead of the router's ready()). */
void slc_cmd_start(slc_session_t *s);
/* Close: the filters' close hooks (session close); free: the memory
   (session free, after the event batch). */
void slc_cmd_close(slc_session_t *s);
void slc_cmd_free(slc_session_t *s);
/* Where the released client bytes go: the backend of the command in
   flight, NULL when they are dropped (the proxy answered it). */
slc_backend_t *slc_cmd_target(const slc_session_t *s);
/* The scan released n client bytes at p (slc_proxycmd_scan): the rest of
   a command larger than its head goes past the filters' `rest` hooks. */
void slc_cmd_released(slc_session_t *s, const uint8_t *p, size_t n);
/* No command in flight, no answer being written: a safe point. */
int  slc_cmd_at_rest(const slc_session_t *s);
/* The core's own command (KILL, COM_CHANGE_USER) was dealt with at once
   (core_done), or after a pause (core_resume, from slc_proxycmd_resume):
   go on. */
void slc_cmd_core_done(slc_session_t *s);
void slc_cmd_core_resume(slc_session_t *s);

/*
 * For routers: open a backend of the router's on `us` (the caller took a
 * connection slot there, which the backend now owns).  The command layer
 * drives it; the router hears of it through `owner` (its ready, fail,
 * done and retry; data: b->data): ready once it is logged in, and every
 * failure, after the command layer dealt with a command that waited for
 * it or ran on it.  NULL when it failed at once (logged at info; owner
 * was not called).
 */
slc_backend_t *slc_cmd_open_backend(slc_session_t *s,
    slc_upstream_server_t *us, const slc_backend_ops_t *owner, void *data);
/* For routers: b, logged in, becomes a backend of the router's (one it
   adopted, or its former own): as if opened with owner and data. */
void slc_cmd_give(slc_backend_t *b, const slc_backend_ops_t *owner,
    void *data);
/*
 * For routers: a backend of the router's is ready (call from owner's
 * ready): from now on the command layer reads and writes it; and, if a
 * command waits for it, the command goes on.
 */
void slc_cmd_attach(slc_backend_t *b);
/*
 * Backend b of the session failed (`why`), found by the command layer or
 * by its router: whoever drives it decides.  The session's own: its
 * router's own_lost, or the session ends.  A router's: owner->fail, and
 * a command that waited for it gets an ERR unless the router answered.
 */
void slc_cmd_backend_fail(slc_backend_t *b, const char *why);
/*
 * For routers: backend b (the router's, logged in) becomes the session's
 * own (s->backend: its status flags are the session's, KILL CONNECTION
 * names it); the command layer drives it as such.  Returns the one it
 * replaces, which is now the router's to keep (slc_cmd_give) or close.
 * Call it between commands (the command hook) or from own_lost.
 */
slc_backend_t *slc_cmd_set_own(slc_session_t *s, slc_backend_t *b);

#endif /* SLC_MYSQL_CMD_H */
