#ifndef SLC_PALLOC_H
#define SLC_PALLOC_H

#include "slc_core.h"

/*
 * Arena ("pool") allocator: many small allocations freed together.  A config
 * generation and everything parsed into it live in one pool, destroyed when
 * the generation is retired.  Not for per-query data.
 */

typedef struct slc_pool_s  slc_pool_t;

slc_pool_t *slc_pool_create(size_t block_size);
void        slc_pool_destroy(slc_pool_t *pool);
/* The same, zeroing every block first (explicit_bzero): for a pool that
   held secrets, so that they reach neither freed memory nor a core dump. */
void        slc_pool_destroy_wipe(slc_pool_t *pool);
void       *slc_palloc(slc_pool_t *pool, size_t size);   /* aligned 16, zeroed */
char       *slc_pstrndup(slc_pool_t *pool, const char *s, size_t n); /* +NUL */
/* fn(data) when the pool is destroyed, newest first, before its memory
   goes: for what lives outside it (compiled regexes).  SLC_ERROR: no
   memory. */
int         slc_pool_cleanup_add(slc_pool_t *pool, void (*fn)(void *data),
                                 void *data);

#endif /* SLC_PALLOC_H */
