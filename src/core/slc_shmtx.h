#ifndef SLC_SHMTX_H
#define SLC_SHMTX_H

#include "slc_core.h"

/*
 * A lock shared by processes, whose holder is known: one atomic word in
 * shared memory holds the pid of the process that holds it, 0 when free.
 * A waiter spins a little, then yields, then sleeps in short naps; it never
 * sleeps in the kernel on the lock itself, so a holder that dies cannot
 * leave a sleeper that nobody wakes.
 *
 * A process killed while holding a lock never releases it: the master does,
 * when it reaps that process (slc_master_reap_process), for every lock
 * registered with a zone of the running cycle (slc_shmtx_create).  What the
 * dead holder was changing under the lock may be half done: hold a lock
 * for short index operations only, never across I/O, and keep the guarded
 * structure consistent at each store where that is cheap.
 *
 * Not recursive: a process that locks what it already holds waits forever
 * (asserted).
 */

typedef struct slc_shm_zone_s  slc_shm_zone_t;

typedef struct slc_shmtx_s  slc_shmtx_t;

struct slc_shmtx_s {
    int32_t  pid;       /* holder, 0: free; only through __atomic */
};

/*
 * This process's pid, which the lock records.  Set by whoever forks
 * (slc_worker_run) so the lock needs no getpid() system call; while it is
 * 0, getpid() is used.
 */
extern pid_t  slc_pid;

/* A free lock, in memory the caller owns (a zone, or a test's mapping). */
void  slc_shmtx_init(slc_shmtx_t *mtx);
/*
 * A free lock inside `zone`, registered with it so that the master releases
 * it when it reaps a dead holder.  Called from the zone's init hook (master,
 * before fork).  SLC_ERROR if the zone holds SLC_SHM_ZONE_LOCKS already.
 */
int   slc_shmtx_create(slc_shmtx_t *mtx, slc_shm_zone_t *zone);

/* 1 if taken, 0 if another process holds it. */
int   slc_shmtx_trylock(slc_shmtx_t *mtx);
void  slc_shmtx_lock(slc_shmtx_t *mtx);
/* The caller must hold it (asserted). */
void  slc_shmtx_unlock(slc_shmtx_t *mtx);
/* Free it if and only if `pid` holds it (the master, for a dead pid). */
int   slc_shmtx_force_unlock(slc_shmtx_t *mtx, pid_t pid);
/* The holder at the time of the call, 0 if free. */
pid_t slc_shmtx_holder(const slc_shmtx_t *mtx);

#endif /* SLC_SHMTX_H */
