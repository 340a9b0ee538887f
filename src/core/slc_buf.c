#include "slc_core.h"
#include "slc_buf.h"

static size_t      slc_buf_bytes = 16384;
static unsigned    slc_buf_keep = 64;
static unsigned    slc_buf_nfree;
static slc_buf_t  *slc_buf_free;

void
slc_buf_setup(size_t size, unsigned keep_free)
{
    while (slc_buf_free != NULL) {
        slc_buf_t *b = slc_buf_free;
        slc_buf_free = b->next;
        free(b);
    }
    slc_buf_nfree = 0;
    slc_buf_bytes = size;
    slc_buf_keep = keep_free;
}

size_t
slc_buf_size(void)
{
    return slc_buf_bytes;
}

slc_buf_t *
slc_buf_get(void)
{
    slc_buf_t *b = slc_buf_free;

    if (b != NULL) {
        slc_buf_free = b->next;
        slc_buf_nfree--;
    } else {
        b = malloc(sizeof(*b) + slc_buf_bytes);
        if (b == NULL) {
            return NULL;
        }
        b->end = b->start + slc_buf_bytes;
    }
    b->next = NULL;
    b->pos = b->start;
    b->last = b->start;
    return b;
}

void
slc_buf_put(slc_buf_t *b)
{
    if (b == NULL) {
        return;
    }
    if (slc_buf_nfree >= slc_buf_keep) {
        free(b);
        return;
    }
    b->next = slc_buf_free;
    slc_buf_free = b;
    slc_buf_nfree++;
}

int
slc_buf_reserve(slc_buf_t **bp, size_t n)
{
    if (*bp == NULL && (*bp = slc_buf_get()) == NULL) {
        return SLC_ERROR;
    }
    if (slc_buf_room(*bp) < n) {
        slc_buf_compact(*bp);
    }
    return slc_buf_room(*bp) >= n ? SLC_OK : SLC_ERROR;
}

int
slc_buf_append(slc_buf_t **bp, const void *data, size_t n)
{
    if (slc_buf_reserve(bp, n) != SLC_OK) {
        return SLC_ERROR;
    }
    memcpy((*bp)->last, data, n);
    (*bp)->last += n;
    return SLC_OK;
}
