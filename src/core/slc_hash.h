#ifndef SLC_HASH_H
#define SLC_HASH_H

#include "slc_core.h"
#include "slc_palloc.h"

/*
 * A table from byte-string keys to pointers, in a pool: open addressing
 * with linear probing, at most half full, grown by doubling.  Built while a
 * config is parsed, then only read (lock-free in every worker).  No
 * removal: a config generation is thrown away whole.
 *
 * The table does not copy keys: a key must live as long as the table (in
 * the same pool).  The arrays a growth leaves behind stay in the pool until
 * it is destroyed; together they are smaller than the final one.
 */

typedef struct {
    uint32_t      hash;
    uint32_t      len;
    const char   *key;
    void         *value;        /* NULL: empty cell */
} slc_hash_elt_t;

typedef struct {
    slc_hash_elt_t  *elts;
    size_t           size;      /* a power of two, or 0 before the first add */
    size_t           nelts;
    slc_pool_t      *pool;
} slc_hash_t;

void      slc_hash_init(slc_hash_t *h, slc_pool_t *pool);
/* The value stored under the key, or NULL. */
void     *slc_hash_find(const slc_hash_t *h, const char *key, size_t len);
/*
 * Store a non-NULL value under a key, replacing an equal key and its value.
 * SLC_ERROR: out of memory, a NULL value, or a key of 4 GiB or more.
 */
int       slc_hash_add(slc_hash_t *h, const char *key, size_t len,
    void *value);
uint32_t  slc_hash_key(const char *key, size_t len);

#endif /* SLC_HASH_H */
