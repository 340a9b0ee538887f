#include "slc_hash.h"

#define SLC_HASH_MIN  16

/* FNV-1a: keys come from the config; a client can only look one up. */
uint32_t
slc_hash_key(const char *key, size_t len)
{
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char) key[i];
        h *= 16777619u;
    }
    return h;
}

void
slc_hash_init(slc_hash_t *h, slc_pool_t *pool)
{
    *h = (slc_hash_t) { .pool = pool };
}

/* The cell holding the key, or the empty cell where it would go. */
static slc_hash_elt_t *
slc_hash_cell(slc_hash_elt_t *elts, size_t size, uint32_t hash,
    const char *key, size_t len)
{
    size_t mask = size - 1;

    for (size_t i = hash & mask; ; i = (i + 1) & mask) {
        slc_hash_elt_t *e = &elts[i];
        if (e->value == NULL
            || (e->hash == hash && e->len == len
                && memcmp(e->key, key, len) == 0))
        {
            return e;
        }
    }
}

void *
slc_hash_find(const slc_hash_t *h, const char *key, size_t len)
{
    if (h->nelts == 0) {
        return NULL;
    }
    return slc_hash_cell(h->elts, h->size, slc_hash_key(key, len), key,
        len)->value;
}

static int
slc_hash_grow(slc_hash_t *h)
{
    size_t          size = h->size ? h->size * 2 : SLC_HASH_MIN;
    slc_hash_elt_t *elts;

    if (size > SIZE_MAX / 2 / sizeof(*elts)) {
        return SLC_ERROR;
    }
    elts = slc_palloc(h->pool, size * sizeof(*elts));       /* zeroed */
    if (elts == NULL) {
        return SLC_ERROR;
    }
    for (size_t i = 0; i < h->size; i++) {
        slc_hash_elt_t *e = &h->elts[i];
        if (e->value != NULL) {
            *slc_hash_cell(elts, size, e->hash, e->key, e->len) = *e;
        }
    }
    h->elts = elts;
    h->size = size;
    return SLC_OK;
}

int
slc_hash_add(slc_hash_t *h, const char *key, size_t len, void *value)
{
    slc_hash_elt_t *e;
    uint32_t        hash;
    int             fresh;

    if (len > UINT32_MAX || value == NULL) {
        return SLC_ERROR;
    }
    /* at most half full: a miss ends at an empty cell soon */
    if ((h->nelts + 1) * 2 > h->size && slc_hash_grow(h) != SLC_OK) {
        return SLC_ERROR;
    }
    hash = slc_hash_key(key, len);
    e = slc_hash_cell(h->elts, h->size, hash, key, len);
    fresh = e->value == NULL;
    *e = (slc_hash_elt_t) {
        .hash = hash, .len = (uint32_t) len, .key = key, .value = value,
    };
    h->nelts += fresh;
    return SLC_OK;
}
