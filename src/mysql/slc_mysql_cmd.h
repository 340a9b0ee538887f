#ifndef SLC_MYSQL_CMD_H
#define SLC_MYSQL_CMD_H

#include "slc_core.h"
#include "slc_mysql_filter.h"
#include "slc_mysql_session.h"

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
/* The scan released n client bytes at p (slc_session_scan): the rest of
   a command larger than its head goes past the filters' `rest` hooks. */
void slc_cmd_released(slc_session_t *s, const uint8_t *p, size_t n);
/* No command in flight, no answer being written: a safe point. */
int  slc_cmd_at_rest(const slc_session_t *s);
/* The core's own command (KILL, COM_CHANGE_USER) was dealt with at once
   (core_done), or after a pause (core_resume, from slc_command_resume):
   go on. */
void slc_cmd_core_done(slc_session_t *s);
void slc_cmd_core_resume(slc_session_t *s);

/*
 * For routers (slc_router_t.command): a backend the router opened with
 * slc_backend_open_aux is ready: from now on the command layer reads and
 * writes it (call from its ops->ready); and, if a command waits for it,
 * the command goes on.
 */
void slc_cmd_attach(slc_backend_t *b);
/*
 * A backend with ops failed (backend.c, or the command layer itself): the
 * router's ops->fail decides; a command that waited for it gets an ERR
 * unless the router answered.  Outside command mode: ops->fail only.
 */
void slc_cmd_backend_fail(slc_backend_t *b, const char *why);
/*
 * For routers: backend b (the router's, logged in) becomes the session's
 * own (s->backend: its status flags are the session's, KILL CONNECTION
 * names it); its ops are cleared.  Returns the one it replaces, which is
 * now the router's to keep (set its ops) or close.  Call it between
 * commands (the command hook) or from own_lost.
 */
slc_backend_t *slc_cmd_set_own(slc_session_t *s, slc_backend_t *b);

#endif /* SLC_MYSQL_CMD_H */
