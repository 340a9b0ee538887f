/*
 * Serving a cache hit: the stored response goes to the client as the
 * server sent it (its headers and sequence ids are those of an answer to
 * a command of sequence id 0, which every command is), straight from the
 * shared-memory chunks (or, for a small result, from the copy the lookup
 * made under the lock) into the client's output buffer, one buffer at a
 * time.  Only the status flags of its EOF (or OK) packets change: the
 * session's own (autocommit, in a transaction...) replace those of the
 * session that stored it; the flags that describe the result (no index
 * used...) stay.
 */

#include "slc_core.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_proto.h"
#include "slc_cache.h"

/* The flags that belong to the session, not to the result. */
#define SLC_CACHE_SESSION_FLAGS                                              \
    (SLC_SERVER_STATUS_IN_TRANS | SLC_SERVER_STATUS_AUTOCOMMIT              \
     | SLC_SERVER_STATUS_IN_TRANS_READONLY)

/* The byte at entry offset `at` copied to `dst` (which holds the entry's
   bytes from `from` on, n of them) gets the session's flags. */
static void
slc_cache_patch_status(const slc_cache_serve_t *sv, uint32_t at,
    uint8_t *dst, size_t from, size_t n)
{
    for (uint32_t i = 0; i < 2; i++) {
        size_t   off = (size_t) at + i;
        uint8_t  keep, mine;

        if (at == 0 || off < from || off >= from + n) {
            continue;
        }
        keep = (uint8_t) ((~SLC_CACHE_SESSION_FLAGS) >> (8 * i));
        mine = (uint8_t) ((sv->status & SLC_CACHE_SESSION_FLAGS) >> (8 * i));
        dst[off - from] = (uint8_t) ((dst[off - from] & keep) | mine);
    }
}

/* Copy what the output buffer takes: SLC_DONE at the end, SLC_AGAIN
   when there is more, SLC_ERROR (no memory). */
static int
slc_cache_fill(slc_session_t *s, slc_cache_serve_t *sv)
{
    size_t         room, used = 0, n;
    uint8_t       *dst = slc_reply_space(s, &room);
    const uint8_t *src;

    if (dst == NULL) {
        return SLC_ERROR;
    }
    while (used < room
           && (n = slc_cache_cursor_next(&sv->cur, &src, room - used)) > 0)
    {
        memcpy(dst + used, src, n);
        slc_cache_patch_status(sv, sv->meta.eof_status, dst + used, sv->off,
            n);
        slc_cache_patch_status(sv, sv->meta.end_status, dst + used, sv->off,
            n);
        used += n;
        sv->off += n;
    }
    slc_reply_commit(s, used);
    if (sv->off < sv->hit.size) {
        return SLC_AGAIN;
    }
    slc_cache_release(&sv->hit);
    return SLC_DONE;
}

static int
slc_cache_stream(slc_session_t *s, void *data)
{
    return slc_cache_fill(s, data);
}

int
slc_cache_serve(slc_session_t *s, slc_cache_serve_t *sv)
{
    int      rc;
    uint8_t *dst;
    size_t   room;

    memcpy(&sv->meta, sv->hit.meta, sizeof(sv->meta));
    sv->status = slc_cmd_status(s);
    sv->off = 0;
    /* a copied hit that will not go out at once must outlive the next
       lookup: kept before anything is sent, so a failure sends nothing */
    dst = slc_reply_space(s, &room);
    if (dst != NULL && room < sv->hit.size
        && slc_cache_hit_keep(&sv->hit) != SLC_OK)
    {
        return SLC_ERROR;
    }
    slc_cache_cursor_init(&sv->cur, &sv->hit);
    rc = slc_cache_fill(s, sv);
    if (rc == SLC_ERROR) {
        slc_cache_release(&sv->hit);
        return SLC_ERROR;
    }
    if (rc == SLC_AGAIN) {
        slc_cmd_stream(s, slc_cache_stream, sv);
    }
    return SLC_OK;
}

void
slc_cache_serve_end(slc_cache_serve_t *sv)
{
    slc_cache_release(&sv->hit);
}
