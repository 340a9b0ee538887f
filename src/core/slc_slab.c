#include "slc_core.h"
#include "slc_shm.h"
#include "slc_slab.h"

#include <assert.h>

#define SLC_SLAB_MAGIC  0x534c4142u     /* "SLAB" */
#define SLC_SLAB_NIL    UINT32_MAX

/* What a page is; only the first and last page of a run say it. */
#define SLC_SLAB_FREE       1   /* first page of a free run */
#define SLC_SLAB_FREE_TAIL  2   /* last page of a free run of 2 or more */
#define SLC_SLAB_RUN        3   /* first page of a run handed out */
#define SLC_SLAB_BODY       4   /* other pages of a run handed out */
#define SLC_SLAB_SLOTS      5   /* a page cut into slots */

/*
 * Slot classes below this shift keep their bitmap in the page (more than
 * 64 slots); from it up, in the descriptor's 64-bit word.
 */
#define SLC_SLAB_DESC_SHIFT  (SLC_SLAB_PAGE_SHIFT - 6)

struct slc_slab_page_s {
    uint64_t  bitmap;   /* SLOTS from SLC_SLAB_DESC_SHIFT: slots in use */
    uint32_t  next;     /* links in the free runs or a class's list */
    uint32_t  prev;
    uint32_t  npages;   /* FREE, RUN: run length; FREE_TAIL: first page */
    uint16_t  nused;    /* SLOTS: slots handed out */
    uint8_t   type;
    uint8_t   shift;    /* SLOTS: the class */
};

static slc_slab_page_t *
slc_slab_desc(slc_slab_pool_t *pool, uint32_t i)
{
    return (slc_slab_page_t *) ((char *) pool + pool->desc_off) + i;
}

static char *
slc_slab_page_addr(slc_slab_pool_t *pool, uint32_t i)
{
    return (char *) pool + pool->pages_off
           + ((size_t) i << SLC_SLAB_PAGE_SHIFT);
}

/* ---- lists of pages, linked by index ---- */

static void
slc_slab_list_push(slc_slab_pool_t *pool, uint32_t *head, uint32_t i)
{
    slc_slab_page_t *d = slc_slab_desc(pool, i);

    d->prev = SLC_SLAB_NIL;
    d->next = *head;
    if (*head != SLC_SLAB_NIL) {
        slc_slab_desc(pool, *head)->prev = i;
    }
    *head = i;
}

static void
slc_slab_list_remove(slc_slab_pool_t *pool, uint32_t *head, uint32_t i)
{
    slc_slab_page_t *d = slc_slab_desc(pool, i);

    if (d->prev != SLC_SLAB_NIL) {
        slc_slab_desc(pool, d->prev)->next = d->next;
    } else {
        *head = d->next;
    }
    if (d->next != SLC_SLAB_NIL) {
        slc_slab_desc(pool, d->next)->prev = d->prev;
    }
    d->next = d->prev = SLC_SLAB_NIL;
}

/* ---- runs of pages ---- */

static void
slc_slab_run_free_mark(slc_slab_pool_t *pool, uint32_t i, uint32_t n)
{
    slc_slab_page_t *d = slc_slab_desc(pool, i);

    d->type = SLC_SLAB_FREE;
    d->npages = n;
    if (n > 1) {
        slc_slab_page_t *tail = slc_slab_desc(pool, i + n - 1);

        tail->type = SLC_SLAB_FREE_TAIL;
        tail->npages = i;
    }
    slc_slab_list_push(pool, &pool->free_runs, i);
}

/* First fit; the run is cut from the front of a longer free one. */
static uint32_t
slc_slab_run_alloc(slc_slab_pool_t *pool, uint32_t n)
{
    uint32_t i = pool->free_runs;

    while (i != SLC_SLAB_NIL && slc_slab_desc(pool, i)->npages < n) {
        i = slc_slab_desc(pool, i)->next;
    }
    if (i == SLC_SLAB_NIL) {
        return SLC_SLAB_NIL;
    }
    uint32_t have = slc_slab_desc(pool, i)->npages;

    slc_slab_list_remove(pool, &pool->free_runs, i);
    if (have > n) {
        slc_slab_run_free_mark(pool, i + n, have - n);
    }
    /* every page says it is taken, so a pointer into the middle of a run
       and the neighbours' merge tests read no stale free mark */
    for (uint32_t k = 1; k < n; k++) {
        slc_slab_desc(pool, i + k)->type = SLC_SLAB_BODY;
    }
    slc_slab_desc(pool, i)->type = SLC_SLAB_RUN;
    slc_slab_desc(pool, i)->npages = n;
    pool->stats.pages_free -= n;
    return i;
}

/* The first page of the free run that ends just before page i, or NIL. */
static uint32_t
slc_slab_run_free_before(slc_slab_pool_t *pool, uint32_t i)
{
    if (i == 0) {
        return SLC_SLAB_NIL;
    }
    slc_slab_page_t *d = slc_slab_desc(pool, i - 1);

    switch (d->type) {
    case SLC_SLAB_FREE:
        return i - 1;           /* a run of one page */
    case SLC_SLAB_FREE_TAIL:
        return d->npages;
    default:
        return SLC_SLAB_NIL;
    }
}

/* Give back the run starting at page i, merged with free neighbours. */
static void
slc_slab_run_free(slc_slab_pool_t *pool, uint32_t i)
{
    uint32_t n = slc_slab_desc(pool, i)->npages;
    uint32_t next = i + n, prev;

    pool->stats.pages_free += n;
    if (next < pool->npages
        && slc_slab_desc(pool, next)->type == SLC_SLAB_FREE)
    {
        slc_slab_list_remove(pool, &pool->free_runs, next);
        n += slc_slab_desc(pool, next)->npages;
    }
    prev = slc_slab_run_free_before(pool, i);
    if (prev != SLC_SLAB_NIL) {
        slc_slab_list_remove(pool, &pool->free_runs, prev);
        n += slc_slab_desc(pool, prev)->npages;
        i = prev;
    }
    slc_slab_run_free_mark(pool, i, n);
}

/* ---- slot pages ---- */

static unsigned
slc_slab_nslots(unsigned shift)
{
    return 1u << (SLC_SLAB_PAGE_SHIFT - shift);
}

/* Slots at the start of a page that its own bitmap takes. */
static unsigned
slc_slab_reserved(unsigned shift)
{
    if (shift >= SLC_SLAB_DESC_SHIFT) {
        return 0;
    }
    size_t bytes = slc_slab_nslots(shift) / 8;

    return (unsigned) ((bytes + ((size_t) 1 << shift) - 1) >> shift);
}

static unsigned
slc_slab_capacity(unsigned shift)
{
    return slc_slab_nslots(shift) - slc_slab_reserved(shift);
}

/* The page's bitmap words, and how many. */
static uint64_t *
slc_slab_bitmap(slc_slab_pool_t *pool, uint32_t i, unsigned *nwords)
{
    slc_slab_page_t *d = slc_slab_desc(pool, i);

    if (d->shift >= SLC_SLAB_DESC_SHIFT) {
        *nwords = 1;
        return &d->bitmap;
    }
    *nwords = slc_slab_nslots(d->shift) / 64;
    return (uint64_t *) slc_slab_page_addr(pool, i);
}

static void
slc_slab_slots_init(slc_slab_pool_t *pool, uint32_t i, unsigned shift)
{
    slc_slab_page_t *d = slc_slab_desc(pool, i);
    unsigned         nslots = slc_slab_nslots(shift), nwords;
    unsigned         reserved = slc_slab_reserved(shift);
    uint64_t        *map;

    d->type = SLC_SLAB_SLOTS;
    d->shift = (uint8_t) shift;
    d->nused = 0;
    map = slc_slab_bitmap(pool, i, &nwords);
    memset(map, 0, nwords * sizeof(uint64_t));
    /* the bitmap's own slots, and the bits past the last slot, are taken
       for good, so a search finds real slots only */
    for (unsigned k = 0; k < reserved; k++) {
        map[k / 64] |= (uint64_t) 1 << (k % 64);
    }
    if (nslots < 64) {
        map[0] |= ~(uint64_t) 0 << nslots;
    }
}

static unsigned
slc_slab_slot_take(slc_slab_pool_t *pool, uint32_t i)
{
    unsigned  nwords, k;
    uint64_t *map = slc_slab_bitmap(pool, i, &nwords);

    for (k = 0; map[k] == ~(uint64_t) 0; k++) {
        assert(k + 1 < nwords);         /* a page on the list has a slot */
    }
    unsigned bit = (unsigned) __builtin_ctzll(~map[k]);

    map[k] |= (uint64_t) 1 << bit;
    return k * 64 + bit;
}

static unsigned
slc_slab_class(size_t size)
{
    unsigned shift = SLC_SLAB_MIN_SHIFT;

    while (((size_t) 1 << shift) < size) {
        shift++;
    }
    return shift;
}

static void *
slc_slab_slot_alloc(slc_slab_pool_t *pool, unsigned shift)
{
    unsigned                 c = shift - SLC_SLAB_MIN_SHIFT;
    slc_slab_class_stats_t  *cs = &pool->stats.classes[c];
    uint32_t                 i = pool->partial[c];

    cs->reqs++;
    if (i == SLC_SLAB_NIL) {
        i = slc_slab_run_alloc(pool, 1);
        if (i == SLC_SLAB_NIL) {
            cs->fails++;
            return NULL;
        }
        slc_slab_slots_init(pool, i, shift);
        slc_slab_list_push(pool, &pool->partial[c], i);
        cs->total += slc_slab_capacity(shift);
    }
    slc_slab_page_t *d = slc_slab_desc(pool, i);
    unsigned         slot = slc_slab_slot_take(pool, i);

    if (++d->nused == slc_slab_capacity(shift)) {
        slc_slab_list_remove(pool, &pool->partial[c], i);
    }
    cs->used++;
    return slc_slab_page_addr(pool, i) + ((size_t) slot << shift);
}

static int
slc_slab_slot_free(slc_slab_pool_t *pool, uint32_t i, size_t off)
{
    slc_slab_page_t *d = slc_slab_desc(pool, i);
    unsigned         shift = d->shift, nwords;
    unsigned         c = shift - SLC_SLAB_MIN_SHIFT;
    unsigned         slot = (unsigned) (off >> shift);
    uint64_t        *map = slc_slab_bitmap(pool, i, &nwords);
    uint64_t         bit = (uint64_t) 1 << (slot % 64);

    if ((off & (((size_t) 1 << shift) - 1)) != 0
        || slot < slc_slab_reserved(shift) || !(map[slot / 64] & bit))
    {
        return SLC_ERROR;               /* not a slot start, or free */
    }
    map[slot / 64] &= ~bit;
    if (d->nused-- == slc_slab_capacity(shift)) {
        slc_slab_list_push(pool, &pool->partial[c], i);
    }
    pool->stats.classes[c].used--;
    if (d->nused == 0) {
        slc_slab_list_remove(pool, &pool->partial[c], i);
        pool->stats.classes[c].total -= slc_slab_capacity(shift);
        slc_slab_run_free(pool, i);
    }
    return SLC_OK;
}

/* ---- the interface ---- */

int
slc_slab_init(slc_slab_pool_t *pool, size_t size)
{
    size_t   hdr = (sizeof(*pool) + 7) & ~(size_t) 7, npages, pages;
    uintptr_t base = (uintptr_t) pool;

    if (size < hdr + sizeof(slc_slab_page_t) + 2 * SLC_SLAB_PAGE_SIZE) {
        return SLC_ERROR;
    }
    npages = (size - hdr) / (SLC_SLAB_PAGE_SIZE + sizeof(slc_slab_page_t));
    npages = slc_min(npages, (size_t) SLC_SLAB_NIL - 1);
    for ( ;; ) {
        uintptr_t end = base + hdr + npages * sizeof(slc_slab_page_t);

        pages = ((end + SLC_SLAB_PAGE_SIZE - 1) & ~(SLC_SLAB_PAGE_SIZE - 1))
                - base;
        if (pages + npages * SLC_SLAB_PAGE_SIZE <= size || npages == 0) {
            break;
        }
        npages--;
    }
    if (npages == 0) {
        return SLC_ERROR;
    }
    memset(pool, 0, sizeof(*pool));
    slc_shmtx_init(&pool->mutex);
    pool->size = size;
    pool->desc_off = hdr;
    pool->pages_off = pages;
    pool->npages = (uint32_t) npages;
    pool->free_runs = SLC_SLAB_NIL;
    for (unsigned c = 0; c < SLC_SLAB_NCLASSES; c++) {
        pool->partial[c] = SLC_SLAB_NIL;
        pool->stats.classes[c].size = (size_t) 1 << (c + SLC_SLAB_MIN_SHIFT);
    }
    memset(slc_slab_desc(pool, 0), 0, npages * sizeof(slc_slab_page_t));
    pool->stats.pages_total = pool->stats.pages_free = npages;
    slc_slab_run_free_mark(pool, 0, (uint32_t) npages);
    pool->magic = SLC_SLAB_MAGIC;
    return SLC_OK;
}

int
slc_slab_zone_init(slc_shm_zone_t *zone)
{
    slc_slab_pool_t *pool = zone->addr;

    if (slc_slab_init(pool, zone->size) != SLC_OK) {
        return SLC_ERROR;
    }
    return slc_shm_zone_lock_add(zone, &pool->mutex);
}

void *
slc_slab_alloc_locked(slc_slab_pool_t *pool, size_t size)
{
    assert(pool->magic == SLC_SLAB_MAGIC);
    pool->stats.reqs++;
    if (size <= SLC_SLAB_MAX_SLOT) {
        void *p = slc_slab_slot_alloc(pool, slc_slab_class(size));

        pool->stats.fails += (p == NULL);
        return p;
    }
    uint32_t i = SLC_SLAB_NIL;

    if (size <= (size_t) pool->npages << SLC_SLAB_PAGE_SHIFT) {
        /* no overflow below: size is at most the pool's pages */
        i = slc_slab_run_alloc(pool, (uint32_t) ((size + SLC_SLAB_PAGE_SIZE
                                   - 1) >> SLC_SLAB_PAGE_SHIFT));
    }
    if (i == SLC_SLAB_NIL) {
        pool->stats.fails++;
        return NULL;
    }
    pool->stats.pages_large += slc_slab_desc(pool, i)->npages;
    return slc_slab_page_addr(pool, i);
}

void *
slc_slab_alloc(slc_slab_pool_t *pool, size_t size)
{
    void *p;

    slc_shmtx_lock(&pool->mutex);
    p = slc_slab_alloc_locked(pool, size);
    slc_shmtx_unlock(&pool->mutex);
    return p;
}

int
slc_slab_free_locked(slc_slab_pool_t *pool, void *p)
{
    char            *start = slc_slab_page_addr(pool, 0);
    size_t           off = (size_t) ((char *) p - start), in;
    uint32_t         i;
    slc_slab_page_t *d;

    assert(pool->magic == SLC_SLAB_MAGIC);
    if ((char *) p < start || off >= (size_t) pool->npages
                                      << SLC_SLAB_PAGE_SHIFT)
    {
        return SLC_ERROR;
    }
    i = (uint32_t) (off >> SLC_SLAB_PAGE_SHIFT);
    in = off & (SLC_SLAB_PAGE_SIZE - 1);
    d = slc_slab_desc(pool, i);
    switch (d->type) {
    case SLC_SLAB_SLOTS:
        return slc_slab_slot_free(pool, i, in);
    case SLC_SLAB_RUN:
        if (in != 0) {
            return SLC_ERROR;
        }
        pool->stats.pages_large -= d->npages;
        slc_slab_run_free(pool, i);
        return SLC_OK;
    default:
        return SLC_ERROR;               /* free, or inside a run */
    }
}

int
slc_slab_free(slc_slab_pool_t *pool, void *p)
{
    int rc;

    slc_shmtx_lock(&pool->mutex);
    rc = slc_slab_free_locked(pool, p);
    slc_shmtx_unlock(&pool->mutex);
#ifdef SLC_DEBUG
    assert(rc == SLC_OK);
#endif
    return rc;
}

void
slc_slab_stats(slc_slab_pool_t *pool, slc_slab_stats_t *st)
{
    slc_shmtx_lock(&pool->mutex);
    *st = pool->stats;
    slc_shmtx_unlock(&pool->mutex);
}
