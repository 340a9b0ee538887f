#include "slc_core.h"
#include "slc_shm.h"
#include "slc_shmtx.h"

#include <assert.h>
#include <sched.h>
#include <time.h>

pid_t  slc_pid;

/* Spin rounds before each yield, and yields before the waiter naps. */
#define SLC_SHMTX_SPIN    1024
#define SLC_SHMTX_YIELDS  16
#define SLC_SHMTX_NAP_NS  100000        /* 0.1 ms */

static pid_t
slc_shmtx_self(void)
{
    return slc_pid != 0 ? slc_pid : getpid();
}

static void
slc_shmtx_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

void
slc_shmtx_init(slc_shmtx_t *mtx)
{
    __atomic_store_n(&mtx->pid, 0, __ATOMIC_RELEASE);
}

int
slc_shmtx_create(slc_shmtx_t *mtx, slc_shm_zone_t *zone)
{
    slc_shmtx_init(mtx);
    return slc_shm_zone_lock_add(zone, mtx);
}

static int
slc_shmtx_take(slc_shmtx_t *mtx, int32_t self)
{
    int32_t free = 0;

    return __atomic_load_n(&mtx->pid, __ATOMIC_RELAXED) == 0
        && __atomic_compare_exchange_n(&mtx->pid, &free, self, 0,
               __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

int
slc_shmtx_trylock(slc_shmtx_t *mtx)
{
    return slc_shmtx_take(mtx, (int32_t) slc_shmtx_self());
}

/*
 * Spinning only pays while the holder runs on another CPU; after that the
 * waiter yields, and if the holder still does not let go (it was preempted,
 * or it is dead and the master has not reaped it yet) the waiter naps, so
 * that a dead holder costs the others no CPU.
 */
void
slc_shmtx_lock(slc_shmtx_t *mtx)
{
    int32_t  self = (int32_t) slc_shmtx_self();
    unsigned yields = 0;

    assert(__atomic_load_n(&mtx->pid, __ATOMIC_RELAXED) != self);
    for ( ;; ) {
        for (unsigned n = 1; n <= SLC_SHMTX_SPIN; n <<= 1) {
            if (slc_shmtx_take(mtx, self)) {
                return;
            }
            for (unsigned i = 0; i < n; i++) {
                slc_shmtx_pause();
            }
        }
        if (slc_shmtx_take(mtx, self)) {
            return;
        }
        if (++yields < SLC_SHMTX_YIELDS) {
            sched_yield();
        } else {
            struct timespec ts = { 0, SLC_SHMTX_NAP_NS };
            nanosleep(&ts, NULL);
        }
    }
}

void
slc_shmtx_unlock(slc_shmtx_t *mtx)
{
    /*
     * Only the holder unlocks (force_unlock takes the lock of a pid that
     * has exited), so a release store is enough.  A compare-and-swap
     * would be a full barrier: it would wait for every store of the
     * critical section to reach the cache (a cache hit's LRU links into
     * random entries), which the release store leaves to drain while
     * the holder goes on.
     */
    assert(__atomic_load_n(&mtx->pid, __ATOMIC_RELAXED)
           == (int32_t) slc_shmtx_self());
    __atomic_store_n(&mtx->pid, 0, __ATOMIC_RELEASE);
}

int
slc_shmtx_force_unlock(slc_shmtx_t *mtx, pid_t pid)
{
    int32_t holder = (int32_t) pid;

    return pid != 0 && __atomic_compare_exchange_n(&mtx->pid, &holder, 0, 0,
        __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

pid_t
slc_shmtx_holder(const slc_shmtx_t *mtx)
{
    return (pid_t) __atomic_load_n(&mtx->pid, __ATOMIC_ACQUIRE);
}
