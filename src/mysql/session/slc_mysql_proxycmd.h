#ifndef SLC_MYSQL_PROXYCMD_H
#define SLC_MYSQL_PROXYCMD_H

#include "slc_core.h"
#include "slc_mysql_session.h"

/*
 * Commands the proxy handles itself in a forwarding session: the router
 * scans what the client sends (slc_proxycmd_scan) and, when the scan holds
 * a command at in->pos, calls slc_proxycmd_run until it returns SLC_OK.
 *
 * A held command waits until the session is idle (the responses to
 * everything before it were forwarded), so whatever the proxy answers
 * comes in order.  Then it is passed on unchanged, rewritten in place
 * (a KILL naming a proxy id becomes one naming the backend's thread), or
 * answered by the proxy; COM_CHANGE_USER under auth local is answered
 * after an exchange with the client and the backend, during which the
 * session is `paused` and the router reads nothing from the client.
 * When that ends the router's ready() is called again to resume.
 */

/* Scan the bytes of in after those already released (in_ready). */
void slc_proxycmd_scan(slc_session_t *s);
/* The proxy's own commands a session watches for (SLC_WATCH_*): KILL
   always, COM_CHANGE_USER with auth local. */
unsigned slc_proxycmd_watch(const slc_session_t *s);
/* SLC_OK: dealt with (the router may go on); SLC_AGAIN: not yet (it will
   be called again when the session is idle, or ready() resumes it);
   SLC_ERROR: the session was closed. */
int  slc_proxycmd_run(slc_session_t *s);

/* For the handlers (slc_mysql_kill.c, slc_mysql_change_user.c). */
int  slc_proxycmd_pass(slc_session_t *s);
int  slc_proxycmd_replace(slc_session_t *s, const uint8_t *payload,
    size_t len);
int  slc_proxycmd_answer(slc_session_t *s, const uint8_t *payload,
    size_t len);
int  slc_proxycmd_answer_err(slc_session_t *s, uint16_t code,
    const char *state, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Drop the held packet (the handler copied what it needs). */
void slc_proxycmd_drop(slc_session_t *s);

/* The exchange of a paused session is over: the router goes on. */
void slc_proxycmd_resume(slc_session_t *s);

int  slc_kill_run(slc_session_t *s, const uint8_t *pl, uint32_t len);
/* The session closes: drop a KILL's side connection if one is open. */
void slc_kill_cancel(slc_session_t *s);
int  slc_change_user_run(slc_session_t *s, const uint8_t *pl,
    uint32_t len);
/*
 * Under auth passthrough a COM_CHANGE_USER goes to the server as it is,
 * and the session follows what the server made of it, so that whoever
 * keys by the session's identity (the query cache) keys by the real one:
 * change_user_note, when the command starts (pl: its payload, avail of
 * len bytes at hand), keeps the user, database and collation it names;
 * change_user_noted, when its exchange ended, makes them the session's
 * on the server's OK (s->user_gen moves, as under auth local), and on an
 * ERR keeps the old ones (the server keeps them too).  A command that
 * does not fit a buffer, or is malformed, fails the session (SLC_ERROR:
 * closed), as under auth local.
 */
int  slc_change_user_note(slc_session_t *s, const uint8_t *pl,
    size_t avail, uint32_t len);
void slc_change_user_noted(slc_session_t *s, int ok);

#endif /* SLC_MYSQL_PROXYCMD_H */
