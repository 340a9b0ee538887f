#ifndef SLC_MYSQL_UPSTREAM_ADMIN_H
#define SLC_MYSQL_UPSTREAM_ADMIN_H

#include "slc_core.h"
#include "slc_admin.h"
#include "slc_mysql_conf.h"

/*
 * Servers' admin states (issue 23, section 2), set on an admin socket
 * (`server NAME drain|disable|enable`) and kept in the zone mysql_admin
 * by the server's stats slot, with a generation every change moves:
 *   - ready: as configured;
 *   - drain: no new backend connection goes there (slc_upstream_pick
 *     skips it, as a server at max_connections), readwritesplit sends
 *     no read there; the sessions on it finish as they will;
 *   - maintenance (`disable`): the same, and each worker closes the
 *     sessions whose own backend is there as soon as each is at rest
 *     (between statements, outside a transaction), as a graceful
 *     shutdown does; their clients see the connection end, not an error
 *     in the middle of a statement.
 * A state lasts until the next reload, which logs the states it clears.
 */

#define SLC_ADMIN_STATE_READY  0
#define SLC_ADMIN_STATE_DRAIN  1
#define SLC_ADMIN_STATE_MAINT  2

typedef struct {
    uint64_t    gen;                    /* moved by every change */
    uint32_t    state[SLC_STATS_MAX];   /* by stats slot */
} slc_upstream_admin_zone_t;

/* Whether new connections and reads may go to `us`. */
static inline int
slc_upstream_usable(const slc_upstream_server_t *us)
{
    return us->admin == NULL
           || __atomic_load_n(us->admin, __ATOMIC_RELAXED)
              == SLC_ADMIN_STATE_READY;
}

static inline int
slc_upstream_in_maint(const slc_upstream_server_t *us)
{
    return us->admin != NULL
           && __atomic_load_n(us->admin, __ATOMIC_RELAXED)
              == SLC_ADMIN_STATE_MAINT;
}

/* The state's name: "ready", "drain", "maintenance". */
const char *slc_upstream_admin_name(uint32_t state);
/* The generation (0 without the zone). */
uint64_t slc_upstream_admin_gen(const slc_mysql_conf_t *mc);
/* Move it (a change elsewhere the workers must look at: a kill mark). */
void slc_upstream_admin_bump(const slc_mysql_conf_t *mc);
/* The zone's attach hook (master, each cycle): the states a reload
   clears, logged; each server bound to its cell. */
int  slc_upstream_admin_attach(slc_shm_zone_t *z, slc_cycle_t *cycle,
    char *err, size_t errlen);

/* The commands (the mysql module's table): show servers; server NAME
   drain|disable|enable (NAME: UPSTREAM/ADDRESS, or the address when one
   upstream has it). */
int  slc_upstream_admin_show(slc_cycle_t *cycle, const slc_admin_req_t *req,
    slc_metrics_t *out);
int  slc_upstream_admin_server(slc_cycle_t *cycle,
    const slc_admin_req_t *req, slc_metrics_t *out);

#endif /* SLC_MYSQL_UPSTREAM_ADMIN_H */
