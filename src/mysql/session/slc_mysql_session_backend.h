#ifndef SLC_MYSQL_SESSION_BACKEND_H
#define SLC_MYSQL_SESSION_BACKEND_H

#include "slc_core.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_session.h"

/*
 * The session's own backend while it logs in (slc_mysql_session_backend.c):
 * the session opens it, hears how its login went through the backend's
 * ops, and decides what the client is told, logged once.
 */

/*
 * For routers (start, retry): open the session's own backend (s->backend)
 * on `us`, where the caller took a connection slot, which the backend now
 * owns.  With auth local it logs in as the session's user and the client
 * then gets its OK (the router's ready, or command mode, follows); with
 * auth passthrough the server's greeting goes to the client and the
 * exchange is relayed (slc_mysql_passthrough.c).  What fails is the
 * session's to answer: SLC_ERROR when it failed at once (the session was
 * answered, or given to the router's retry).
 */
int  slc_session_backend_open(slc_session_t *s, slc_upstream_server_t *us);
/*
 * The own backend failed while it logged in (its ops' fail, for auth local
 * and passthrough alike): the client hears the server's ERR, or "Can't
 * connect", or, when nothing was said to the client yet and the server was
 * marked down, the router's retry tries another server.
 */
void slc_session_backend_fail(slc_backend_t *b, const slc_backend_fail_t *f);
/* Who a backend of the session logs in as: the session's user, as the
   client logged in or last changed it (its ops' identity). */
void slc_session_backend_identity(slc_backend_t *b, slc_backend_ident_t *id);
/* A failure a backend on `us` reported while it logged in, logged at
   info naming its server: one the session recovers from. */
void slc_session_backend_log(slc_session_t *s,
    const slc_upstream_server_t *us, const slc_backend_fail_t *f);
/* auth local's ops for it (a backend handed over by a reload has them
   until command mode or the router takes it). */
extern const slc_backend_ops_t  slc_session_backend_ops;
/* auth passthrough's ops for it (slc_mysql_passthrough.c). */
extern const slc_backend_ops_t  slc_passthrough_ops;
/* b is the session's own backend (it greeted, took the place of the lost
   one, or came with a handover): KILL from any worker can now find it. */
void slc_session_backend_register(slc_backend_t *b);

#endif /* SLC_MYSQL_SESSION_BACKEND_H */
