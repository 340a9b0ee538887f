#ifndef SLC_MYSQL_REGISTRY_H
#define SLC_MYSQL_REGISTRY_H

#include "slc_core.h"
#include "slc_shm.h"

/*
 * The session registry: a shared-memory table from the id a client saw in
 * its greeting (the "thread id" it will name in KILL) to where that
 * session's backend runs: the server (its slot in the mysql_stats zone)
 * and the backend's own connection id.  Any worker can look up any
 * session, so a KILL sent to one worker reaches a session of another.
 *
 * Ids are 0x80000000 + a counter kept in the zone, unique across workers
 * and reloads (the counter is carried into a resized zone), and never
 * in the range a server hands out to its connections in practice (it
 * counts up from 1), so a proxy id cannot be mistaken for a backend's.
 * The entry of id N lives in slot N & mask: an id is only handed out when
 * its slot is free, so a lookup is one probe and needs no lock.  Each
 * entry is written by the worker that owns the session and carries that
 * worker's process index, so the master can clear a dead worker's
 * entries.
 */

#define SLC_REGISTRY_ID_BASE  0x80000000u

typedef struct {
    uint64_t  id;           /* 0: free */
    uint32_t  thread_id;    /* the backend's connection id, 0 before login */
    uint32_t  server;       /* mysql_stats slot + 1, 0 before login */
    uint32_t  proc;         /* the owning worker's process index */
    /* a command of the session's running on another backend than its
       own (a router's: readwritesplit's replica), 0 when none: where a
       KILL QUERY goes */
    uint32_t  run_server;
    uint32_t  run_thread_id;
    uint32_t  kill;         /* an admin's `kill session`: its worker
                               closes it (slc_mysql_session_admin.c) */
    /* who (cut to fit; for show sessions: a reader may see them torn
       while they are written, and cleans what it prints) */
    char      user[32];
    char      host[48];
} slc_registry_entry_t;

typedef struct {
    uint64_t              next;       /* ids handed out so far */
    uint32_t              mask;       /* slots - 1 */
    uint32_t              full_logged;
    slc_registry_entry_t  e[];
} slc_registry_t;

/* Zone size for `sessions` concurrent sessions (all workers). */
size_t slc_registry_size(uint64_t sessions);
/* Master, after mapping: set up a new zone, keeping the counter of the
   zone it replaces (`prev`, may be NULL). */
void   slc_registry_init(slc_registry_t *r, size_t size,
    const slc_registry_t *prev);

/*
 * A fresh id for a session of this worker (process index proc): SLC_OK,
 * or SLC_AGAIN when no free slot was found (the id is still unique, the
 * session just cannot be named in a KILL).
 */
int    slc_registry_add(slc_registry_t *r, unsigned proc, uint32_t *id);
void   slc_registry_set_backend(slc_registry_t *r, uint32_t id,
    uint32_t server, uint32_t thread_id);
/* Who the session is: its user and client address, once logged in. */
void   slc_registry_set_client(slc_registry_t *r, uint32_t id,
    const char *user, const char *host);
/* The session's command runs on (server, thread_id), not its own
   backend; (0, 0): it is back on its own. */
void   slc_registry_set_running(slc_registry_t *r, uint32_t id,
    uint32_t server, uint32_t thread_id);
void   slc_registry_del(slc_registry_t *r, uint32_t id);
/*
 * Take the entry of an id handed out before (a session handed over by a
 * reload keeps the id its client saw) for process `proc`: SLC_OK, or
 * SLC_AGAIN when another id holds its slot (the session then cannot be
 * named in a KILL).
 */
int    slc_registry_claim(slc_registry_t *r, unsigned proc, uint32_t id);
/* A copy of the entry of `id`; SLC_ERROR when there is none. */
int    slc_registry_get(const slc_registry_t *r, uint32_t id,
    slc_registry_entry_t *out);
/* An admin's mark on the session `id` (any process): SLC_ERROR when
   there is no such session. */
int    slc_registry_mark_kill(slc_registry_t *r, uint32_t id);
/* Whether this worker's session `id` carries the mark. */
int    slc_registry_killed(slc_registry_t *r, uint32_t id);
/* Master: clear the entries a dead worker left; returns how many. */
unsigned slc_registry_reap(slc_registry_t *r, unsigned proc);

#endif /* SLC_MYSQL_REGISTRY_H */
