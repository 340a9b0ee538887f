#ifndef SLC_SHM_H
#define SLC_SHM_H

#include "slc_core.h"

/*
 * Shared-memory zones.  Modules declare them while the config is parsed;
 * the master maps them (anonymous, shared) before forking workers, so every
 * worker sees a zone at the same address.  On reload, a zone with the same
 * name, owner tag and size is carried over with its contents; others are
 * created afresh and given to `init`.  Then every zone of the cycle, new
 * or carried over, is given to `attach`.
 */

typedef struct slc_shm_zone_s  slc_shm_zone_t;
typedef struct slc_shmtx_s     slc_shmtx_t;
typedef struct slc_cycle_s     slc_cycle_t;

/* Locks a zone may register (slc_shmtx_create): a fixed table, so that
   registering cannot fail for want of memory in the middle of a reload. */
#define SLC_SHM_ZONE_LOCKS  16

struct slc_shm_zone_s {
    const char       *name;
    size_t            size;
    const void       *tag;        /* owner: the declaring module */
    void             *addr;
    int               reused;     /* carried over from the last cycle */
    /*
     * Called by the master for a zone it mapped afresh (not carried over),
     * with the previous cycle's zone of the same name and owner if its
     * size differed (else NULL), still mapped: what must outlive a resize
     * is copied from there.
     */
    void            (*init)(slc_shm_zone_t *z, const void *prev);
    /*
     * Called by the master for every zone of a new cycle, carried over or
     * not, once all of them are mapped and initialised, before it forks:
     * binds what the cycle's configuration keeps in the zone (the mysql
     * module gives each upstream server its stats slot).  init alone
     * does not do it: a carried-over zone meets a new configuration too.
     * May use the cycle's other zones.  On error writes into err.
     */
    int             (*attach)(slc_shm_zone_t *z, slc_cycle_t *cycle,
                              char *err, size_t errlen);
    /*
     * The locks inside the zone (slc_shmtx_create), which the master
     * releases when it reaps a process that died holding one.  Carried
     * over with the zone on reload.
     */
    slc_shmtx_t      *locks[SLC_SHM_ZONE_LOCKS];
    unsigned          nlocks;
    slc_shm_zone_t   *next;
};

/* Declare (or find, if declared twice with the same tag and size). */
slc_shm_zone_t *slc_shm_zone_add(slc_cycle_t *cycle, const char *name,
    size_t size, const void *tag, char *err, size_t errlen);
/* The zone `name` of `cycle` (declared by any module), NULL if none. */
slc_shm_zone_t *slc_shm_zone_find(slc_cycle_t *cycle, const char *name);
/*
 * A table of n slots of `size` bytes in a zone, each beginning with the
 * name of what owns it (a char array of namelen, NUL-terminated; "":
 * free), kept by name across a reload: the slot named `name`, else a free
 * one, zeroed and named; NULL when the table is full.
 */
void *slc_shm_slot_claim(void *tab, unsigned n, size_t size,
    size_t namelen, const char *name);
/* Map the zones of `cycle`, reusing those of `old` (may be NULL), then
   attach them all. */
int  slc_shm_zones_map(slc_cycle_t *cycle, slc_cycle_t *old, char *err,
    size_t errlen);
/* Register a lock inside the zone; SLC_ERROR if the table is full. */
int  slc_shm_zone_lock_add(slc_shm_zone_t *z, slc_shmtx_t *mtx);
/* Release the zone's locks that `pid` holds (it is dead); how many. */
unsigned slc_shm_zone_unlock(slc_shm_zone_t *z, pid_t pid);
/* Unmap zones of `old` that `cycle` did not take over. */
void slc_shm_zones_release(slc_cycle_t *old, slc_cycle_t *cycle);

#endif /* SLC_SHM_H */
