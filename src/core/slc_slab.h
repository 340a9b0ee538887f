#ifndef SLC_SLAB_H
#define SLC_SLAB_H

#include "slc_core.h"
#include "slc_shmtx.h"

/*
 * A slab allocator inside a shared-memory zone (after nginx's ngx_slab.c).
 *
 * The area starts with the pool header, then one descriptor per page, then
 * the pages (4 KiB, aligned to 4 KiB).  A request of up to half a page is
 * served from a page cut into slots of one power-of-two class, 8 bytes to
 * 2 KiB, with a bitmap of used slots per page (in the descriptor from 64
 * bytes up; at the start of the page itself below that, whose first slots
 * it takes).  A larger request takes a run of whole pages.  Free runs are
 * kept in one list, first fit, and merged with their free neighbours when
 * a run is given back, so a large object fits again once the small ones
 * around it are gone.  A slot page goes back to the free runs as soon as
 * its last slot is freed.
 *
 * There is no fallback: when no slot or run is free, alloc returns NULL and
 * counts a failure; the caller evicts (the cache drops its LRU tail) and
 * tries again.
 *
 * Internally the pool holds offsets and page indices, never pointers, so
 * it does not depend on where the area is mapped; the pointers it hands
 * out are addresses in the caller's mapping (zones are mapped at the same
 * address in every process).  Slots are aligned to their size, runs to a
 * page.  The pool's lock is embedded: slc_slab_alloc/free take it, the
 * _locked variants expect the caller to hold it already (so that an index
 * update and its allocation are one critical section).
 */

#define SLC_SLAB_PAGE_SHIFT  12
#define SLC_SLAB_PAGE_SIZE   ((size_t) 1 << SLC_SLAB_PAGE_SHIFT)
#define SLC_SLAB_MIN_SHIFT   3                          /* 8 bytes */
#define SLC_SLAB_MAX_SHIFT   (SLC_SLAB_PAGE_SHIFT - 1)  /* half a page */
#define SLC_SLAB_NCLASSES    (SLC_SLAB_MAX_SHIFT - SLC_SLAB_MIN_SHIFT + 1)
#define SLC_SLAB_MAX_SLOT    ((size_t) 1 << SLC_SLAB_MAX_SHIFT)

typedef struct {
    size_t    size;         /* slot size of the class */
    size_t    used;         /* slots handed out */
    size_t    total;        /* slots in the class's pages */
    uint64_t  reqs;         /* allocations asked of the class */
    uint64_t  fails;        /* of which returned NULL */
} slc_slab_class_stats_t;

typedef struct {
    size_t                  pages_total;
    size_t                  pages_free;
    size_t                  pages_large;    /* in runs of large objects */
    uint64_t                reqs;           /* all allocations */
    uint64_t                fails;          /* all that returned NULL */
    slc_slab_class_stats_t  classes[SLC_SLAB_NCLASSES];
} slc_slab_stats_t;

typedef struct slc_slab_page_s  slc_slab_page_t;

typedef struct {
    uint32_t          magic;
    slc_shmtx_t       mutex;
    /*
     * The owner's root structure, kept in the pool so a module finds it
     * again in a zone carried over by a reload.  Set and read by the owner
     * only, under the lock or before fork.
     */
    void             *data;

    /* private */
    size_t            size;           /* of the whole area */
    size_t            desc_off;       /* page descriptors, from the pool */
    size_t            pages_off;      /* first page, from the pool */
    uint32_t          npages;
    uint32_t          free_runs;      /* list of free runs */
    uint32_t          partial[SLC_SLAB_NCLASSES];  /* pages with a free slot */
    slc_slab_stats_t  stats;
} slc_slab_pool_t;

/*
 * Lay a pool over `size` bytes at `pool` (a zone's memory, or any area for
 * tests), all of it free; the lock is initialised, not registered.
 * SLC_ERROR if the area cannot hold one page.
 */
int   slc_slab_init(slc_slab_pool_t *pool, size_t size);

/*
 * Lay a pool over the whole of a zone and register its lock with the zone,
 * so that the master frees it from a dead holder.  For a zone's init hook
 * (master, before fork); SLC_ERROR if the zone is too small.
 */
int   slc_slab_zone_init(slc_shm_zone_t *zone);

/* NULL when nothing fits; never for a size of 0 (gets the 8-byte class). */
void *slc_slab_alloc(slc_slab_pool_t *pool, size_t size);
void *slc_slab_alloc_locked(slc_slab_pool_t *pool, size_t size);

/*
 * Give back what alloc returned.  A pointer it did not return (not a slot
 * or run start, or already free) is detected and refused with SLC_ERROR,
 * changing nothing; slc_slab_free asserts it in debug builds.  Only our own
 * pointers come here, never a peer's input.
 */
int   slc_slab_free(slc_slab_pool_t *pool, void *p);
int   slc_slab_free_locked(slc_slab_pool_t *pool, void *p);

/* A consistent copy of the counters (takes the lock). */
void  slc_slab_stats(slc_slab_pool_t *pool, slc_slab_stats_t *st);

#endif /* SLC_SLAB_H */
