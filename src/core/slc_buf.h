#ifndef SLC_BUF_H
#define SLC_BUF_H

#include "slc_core.h"

/*
 * I/O buffers of one fixed size per worker (`buffer_size`), taken from a
 * free list while data is in flight and given back as soon as they drain,
 * so an idle session holds no buffer at all.  Bytes live in [pos, last).
 */

typedef struct slc_buf_s  slc_buf_t;

struct slc_buf_s {
    slc_buf_t  *next;       /* free list link */
    uint8_t    *pos;
    uint8_t    *last;
    uint8_t    *end;
    uint8_t     start[];
};

void       slc_buf_setup(size_t size, unsigned keep_free);
size_t     slc_buf_size(void);
slc_buf_t *slc_buf_get(void);               /* NULL when out of memory */
void       slc_buf_put(slc_buf_t *b);       /* NULL is fine */

static inline size_t slc_buf_len(const slc_buf_t *b)
{
    return (size_t) (b->last - b->pos);
}

static inline size_t slc_buf_room(const slc_buf_t *b)
{
    return (size_t) (b->end - b->last);
}

/*
 * Room for `n` more bytes at the tail of *bp (compacting it, or taking a
 * buffer when *bp is NULL); SLC_ERROR when they do not fit in one buffer
 * or there is no memory.
 */
int slc_buf_reserve(slc_buf_t **bp, size_t n);
/*
 * Append bytes to *bp, taking a buffer when *bp is NULL.  SLC_ERROR when
 * they do not fit in one buffer (or no memory): *bp is then unchanged in
 * content.
 */
int slc_buf_append(slc_buf_t **bp, const void *data, size_t n);

/* Move unread bytes to the start so the tail has room again. */
static inline void slc_buf_compact(slc_buf_t *b)
{
    size_t n = slc_buf_len(b);

    if (b->pos != b->start) {
        memmove(b->start, b->pos, n);
        b->pos = b->start;
        b->last = b->start + n;
    }
}

#endif /* SLC_BUF_H */
