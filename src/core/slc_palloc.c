#include <assert.h>

#include "slc_palloc.h"

/*
 * A pool is a chain of fixed-size blocks carved front to back, plus a list
 * of "large" blocks that each hold exactly one allocation.  Only the newest
 * small block is carved from: when an allocation does not fit, the tail of
 * the old block is abandoned.  Sending anything bigger than a quarter of a
 * block to its own malloc() bounds that waste to a quarter per block.
 *
 * Nothing is freed before slc_pool_destroy(), which frees everything.
 */

#define SLC_POOL_MAGIC          0x706f6f6cU     /* "pool" */
#define SLC_POOL_ALIGN          16
#define SLC_POOL_DEFAULT_BLOCK  4096
#define SLC_POOL_MIN_BLOCK      256

typedef struct slc_pool_block_s  slc_pool_block_t;

struct slc_pool_block_s {
    slc_pool_block_t   *next;
    uintptr_t           last;   /* first free byte */
    uintptr_t           end;    /* one past the block's data */
};

typedef struct slc_pool_cleanup_s  slc_pool_cleanup_t;

struct slc_pool_cleanup_s {
    void              (*fn)(void *data);
    void               *data;
    slc_pool_cleanup_t *next;
};

struct slc_pool_s {
    unsigned            magic;
    size_t              block_size;
    slc_pool_block_t   *blocks;     /* small blocks, newest (current) first */
    slc_pool_block_t   *large;      /* one allocation each */
    slc_pool_cleanup_t *cleanups;   /* newest first */
};

static uintptr_t
slc_pool_align(uintptr_t p)
{
    return (p + (SLC_POOL_ALIGN - 1)) & ~(uintptr_t) (SLC_POOL_ALIGN - 1);
}

/*
 * A block with room for `size` bytes at a 16-aligned address whatever
 * malloc's own alignment is.  NULL if the size overflows or malloc fails.
 */
static slc_pool_block_t *
slc_pool_block_new(size_t size)
{
    slc_pool_block_t  *b;
    size_t             hdr;

    hdr = sizeof(slc_pool_block_t) + SLC_POOL_ALIGN - 1;
    if (size > SIZE_MAX - hdr) {
        return NULL;
    }

    b = malloc(hdr + size);
    if (b == NULL) {
        return NULL;
    }

    b->next = NULL;
    b->last = slc_pool_align((uintptr_t) (b + 1));
    b->end = b->last + size;
    return b;
}

slc_pool_t *
slc_pool_create(size_t block_size)
{
    slc_pool_t  *pool;

    if (block_size == 0) {
        block_size = SLC_POOL_DEFAULT_BLOCK;
    }
    block_size = slc_max(block_size, SLC_POOL_MIN_BLOCK);

    pool = calloc(1, sizeof(slc_pool_t));
    if (pool == NULL) {
        return NULL;
    }

    pool->magic = SLC_POOL_MAGIC;
    pool->block_size = block_size;
    return pool;
}

static void
slc_pool_free_chain(slc_pool_block_t *b, int wipe)
{
    slc_pool_block_t  *next;
    uintptr_t          start;

    for ( /* void */ ; b != NULL; b = next) {
        next = b->next;
        if (wipe) {
            /* the whole data area: a large block's `last` never moves */
            start = slc_pool_align((uintptr_t) (b + 1));
            explicit_bzero((void *) start, b->end - start);
        }
        free(b);
    }
}

static void
slc_pool_free(slc_pool_t *pool, int wipe)
{
    if (pool == NULL) {
        return;
    }

    assert(pool->magic == SLC_POOL_MAGIC);

    for (slc_pool_cleanup_t *c = pool->cleanups; c != NULL; c = c->next) {
        c->fn(c->data);
    }
    slc_pool_free_chain(pool->blocks, wipe);
    slc_pool_free_chain(pool->large, wipe);
    pool->magic = 0;
    free(pool);
}

int
slc_pool_cleanup_add(slc_pool_t *pool, void (*fn)(void *data), void *data)
{
    slc_pool_cleanup_t *c = slc_palloc(pool, sizeof(*c));

    if (c == NULL) {
        return SLC_ERROR;
    }
    c->fn = fn;
    c->data = data;
    c->next = pool->cleanups;
    pool->cleanups = c;
    return SLC_OK;
}

void
slc_pool_destroy(slc_pool_t *pool)
{
    slc_pool_free(pool, 0);
}

void
slc_pool_destroy_wipe(slc_pool_t *pool)
{
    slc_pool_free(pool, 1);
}

static void *
slc_palloc_large(slc_pool_t *pool, size_t size)
{
    slc_pool_block_t  *b;

    b = slc_pool_block_new(size);
    if (b == NULL) {
        return NULL;
    }

    b->next = pool->large;
    pool->large = b;
    return (void *) b->last;
}

/* Carve from the current block, or NULL if it has no room. */
static void *
slc_palloc_from(slc_pool_block_t *b, size_t size)
{
    uintptr_t  p;

    if (b == NULL) {
        return NULL;
    }

    p = slc_pool_align(b->last);
    if (p > b->end || b->end - p < size) {
        return NULL;
    }

    b->last = p + size;
    return (void *) p;
}

static void *
slc_palloc_small(slc_pool_t *pool, size_t size)
{
    slc_pool_block_t  *b;
    void              *p;

    p = slc_palloc_from(pool->blocks, size);
    if (p != NULL) {
        return p;
    }

    b = slc_pool_block_new(pool->block_size);
    if (b == NULL) {
        return NULL;
    }

    b->next = pool->blocks;
    pool->blocks = b;
    return slc_palloc_from(b, size);
}

void *
slc_palloc(slc_pool_t *pool, size_t size)
{
    void  *p;

    assert(pool != NULL && pool->magic == SLC_POOL_MAGIC);

    if (size > pool->block_size / 4) {
        p = slc_palloc_large(pool, size);
    } else {
        p = slc_palloc_small(pool, size);
    }

    if (p != NULL) {
        memset(p, 0, size);
    }
    return p;
}

/*
 * Unlike strndup(3), copies exactly n bytes, embedded NULs included: the
 * source is a counted string (slc_str_t), so s must have n readable bytes.
 */
char *
slc_pstrndup(slc_pool_t *pool, const char *s, size_t n)
{
    char  *p;

    if (n == SIZE_MAX) {
        return NULL;
    }

    p = slc_palloc(pool, n + 1);
    if (p == NULL) {
        return NULL;
    }

    if (n > 0) {
        memcpy(p, s, n);
    }
    p[n] = '\0';
    return p;
}
