/*
 * The bumps a service is owed by this host (slc_cache_redis_owed.h): the
 * marks in its entry of the zone "cache_redis" (slc_cache_redis_sub.c
 * binds them to the service), which every process of the host reads
 * before it takes an entry from Redis.  Writers (the binlog reader, the
 * workers) take the zone's lock (pid-owned: the master frees it if its
 * holder dies) for a few stores; readers only retry under the seqlock.
 */

#include "slc_core.h"
#include "slc_seqlock.h"
#include "slc_shmtx.h"
#include "slc_cache_redis_owed.h"

/* The service's marks (their lock beside); NULL when it has none. */
static slc_cache_redis_behind_t *
slc_cache_redis_owed_of(const slc_cache_redis_service_t *rs)
{
    return rs->owed_lock != NULL ? rs->owed : NULL;
}

/* Its marks when it has some: two atomic loads, the usual answer NULL. */
static slc_cache_redis_behind_t *
slc_cache_redis_owed_marked(const slc_cache_redis_service_t *rs)
{
    slc_cache_redis_behind_t *bh = slc_cache_redis_owed_of(rs);

    if (bh == NULL || (__atomic_load_n(&bh->n, __ATOMIC_ACQUIRE) == 0
                       && !__atomic_load_n(&bh->all, __ATOMIC_ACQUIRE)))
    {
        return NULL;
    }
    return bh;
}

void
slc_cache_redis_owed_add(const slc_cache_redis_service_t *rs,
    const uint32_t *hash, unsigned n, int all)
{
    slc_cache_redis_behind_t *bh = slc_cache_redis_owed_of(rs);
    uint32_t                  s, k;

    if (bh == NULL) {
        return;
    }
    slc_shmtx_lock(rs->owed_lock);
    s = slc_seqlock_write_begin(&bh->seq);
    bh->ver++;
    bh->all |= (uint32_t) (all != 0);
    for (unsigned i = 0; i < n && !bh->all; i++) {
        for (k = 0; k < bh->n && bh->hash[k] != hash[i]; k++) {
            /* there already? */
        }
        if (k < bh->n) {
            continue;
        }
        if (bh->n == SLC_REDIS_BEHIND_MAX) {
            bh->all = 1;
            break;
        }
        bh->hash[bh->n] = hash[i];
        __atomic_store_n(&bh->n, bh->n + 1, __ATOMIC_RELEASE);
    }
    slc_seqlock_write_end(&bh->seq, s);
    slc_shmtx_unlock(rs->owed_lock);
}

int
slc_cache_redis_owed_take(const slc_cache_redis_service_t *rs,
    slc_cache_redis_behind_t *snap)
{
    slc_cache_redis_behind_t *bh = slc_cache_redis_owed_marked(rs);

    if (bh == NULL) {
        return 0;
    }
    slc_shmtx_lock(rs->owed_lock);
    memcpy(snap, bh, sizeof(*snap));
    slc_shmtx_unlock(rs->owed_lock);
    return snap->n > 0 || snap->all;
}

void
slc_cache_redis_owed_paid(const slc_cache_redis_service_t *rs,
    const slc_cache_redis_behind_t *snap)
{
    slc_cache_redis_behind_t *bh = slc_cache_redis_owed_of(rs);
    uint32_t                  s, k;

    if (bh == NULL) {
        return;
    }
    slc_shmtx_lock(rs->owed_lock);
    s = slc_seqlock_write_begin(&bh->seq);
    if (bh->ver == snap->ver) {
        bh->all = 0;                    /* nothing marked since */
        __atomic_store_n(&bh->n, 0, __ATOMIC_RELEASE);
    } else {
        for (uint32_t i = 0; i < snap->n; i++) {
            for (k = 0; k < bh->n && bh->hash[k] != snap->hash[i]; k++) {
                /* find it */
            }
            if (k < bh->n) {
                bh->hash[k] = bh->hash[bh->n - 1];
                __atomic_store_n(&bh->n, bh->n - 1, __ATOMIC_RELEASE);
            }
        }
    }
    slc_seqlock_write_end(&bh->seq, s);
    slc_shmtx_unlock(rs->owed_lock);
}

int
slc_cache_redis_owed_any(const slc_cache_redis_service_t *rs,
    const uint32_t *hash, unsigned n)
{
    const slc_cache_redis_behind_t *bh = slc_cache_redis_owed_marked(rs);
    uint32_t                        s0, k, tries = 0;
    int                             hit;

    if (bh == NULL) {
        return 0;                       /* the usual case */
    }
    if (n == 0) {
        return 1;                       /* asked whether anything is */
    }
    do {
        s0 = slc_seqlock_read_begin(&bh->seq);
        hit = bh->all != 0;
        k = slc_min(bh->n, (uint32_t) SLC_REDIS_BEHIND_MAX);
        for (uint32_t i = 0; i < k && !hit; i++) {
            for (unsigned j = 0; j < n && !hit; j++) {
                hit = bh->hash[i] == hash[j];
            }
        }
    } while (!slc_seqlock_read_end(&bh->seq, s0) && ++tries < 16);
    return hit || tries == 16;      /* a writer that died mid-way: owed */
}
