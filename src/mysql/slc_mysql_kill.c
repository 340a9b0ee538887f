/*
 * KILL through the proxy.  The thread id a client saw in its greeting is
 * the proxy's session id (slc_mysql_registry.h): the client's backend
 * connection may not exist yet when the greeting is sent (auth local), and
 * with several servers the backends' own ids are not unique.  So a
 * `KILL [HARD|SOFT] [QUERY|CONNECTION] <id>` or COM_PROCESS_KILL naming a
 * proxy id is looked up in the registry, whichever worker holds that
 * session, and rewritten to name the backend's thread; it then runs on the
 * requesting session's own backend connection, as the requesting user, so
 * the server applies its own rules (a user kills only its own sessions
 * unless it has the privilege).
 *
 * An id below the proxy's range is a server's own (a client may have
 * learned it from CONNECTION_ID()): it goes on unchanged.  A target whose
 * backend is on another server than the requester's cannot be reached
 * through the requester's connection: the client is told so (ERR 1095).
 */

#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_command.h"
#include "slc_mysql_registry.h"

static int
slc_kill_same_server(const slc_upstream_server_t *a,
    const slc_upstream_server_t *b)
{
    return a->addrlen == b->addrlen
           && memcmp(&a->addr, &b->addr, a->addrlen) == 0;
}

/* The statement as the backend must see it; never longer than the
   client's (see slc_command_replace). */
static int
slc_kill_rewrite(slc_session_t *s, const uint8_t *pl,
    const slc_mysql_kill_t *k, uint32_t thread_id)
{
    uint8_t  q[64];
    int      n;

    if (pl[0] == SLC_COM_PROCESS_KILL) {
        q[0] = SLC_COM_PROCESS_KILL;
        for (int i = 0; i < 4; i++) {
            q[1 + i] = (uint8_t) (thread_id >> (8 * i));
        }
        n = 5;
    } else {
        q[0] = SLC_COM_QUERY;
        n = snprintf((char *) q + 1, sizeof(q) - 1, "KILL %s%s%u", k->mode,
            k->query ? "QUERY " : "", thread_id);
        n += 1;
    }
    if (slc_command_replace(s, q, (size_t) n) != SLC_OK) {
        return slc_command_answer_err(s, SLC_ER_NO_SUCH_THREAD, "HY000",
            "Unknown thread id: %llu", (unsigned long long) k->id);
    }
    return SLC_OK;
}

static int
slc_kill_parse(const uint8_t *pl, uint32_t len, slc_mysql_kill_t *k)
{
    if (pl[0] == SLC_COM_PROCESS_KILL) {
        if (len < 5) {
            return SLC_ERROR;
        }
        memset(k, 0, sizeof(*k));
        k->mode = "";
        k->id = (uint32_t) pl[1] | (uint32_t) pl[2] << 8
                | (uint32_t) pl[3] << 16 | (uint32_t) pl[4] << 24;
        return SLC_OK;
    }
    return slc_mysql_kill_parse(pl + 1, len - 1, k);
}

int
slc_command_kill(slc_session_t *s, const uint8_t *pl, uint32_t len)
{
    slc_mysql_conf_t      *mc = s->cycle->mysql;
    slc_mysql_kill_t       k;
    slc_registry_entry_t   e;
    slc_upstream_server_t *target;

    if (slc_kill_parse(pl, len, &k) != SLC_OK
        || k.id < SLC_REGISTRY_ID_BASE || k.id > UINT32_MAX)
    {
        return slc_command_pass(s);
    }
    if (slc_registry_get(mc->registry_zone->addr, (uint32_t) k.id, &e)
            != SLC_OK
        || e.thread_id == 0
        || (target = slc_mysql_stats_server(mc, e.server - 1)) == NULL)
    {
        return slc_command_answer_err(s, SLC_ER_NO_SUCH_THREAD, "HY000",
            "Unknown thread id: %llu", (unsigned long long) k.id);
    }
    if (!slc_kill_same_server(target, s->backend->server)) {
        return slc_command_answer_err(s, SLC_ER_KILL_DENIED_ERROR, "HY000",
            "Thread %llu runs on backend %s and this session on %s: send "
            "the KILL through a session on that server",
            (unsigned long long) k.id, target->name,
            s->backend->server->name);
    }
    slc_session_log(s, SLC_LOG_INFO, "KILL %s%s%llu: thread %u of %s",
        k.mode, k.query ? "QUERY " : "", (unsigned long long) k.id,
        e.thread_id, target->name);
    return slc_kill_rewrite(s, pl, &k, e.thread_id);
}
