#ifndef SLC_TEST_SEEN_H
#define SLC_TEST_SEEN_H

/*
 * An observer (slc_mysql_track_observe) for unit tests: it puts the
 * pieces it is shown back together, header and payload, into what the
 * client would be sent; `first` and `last` must fall where a payload
 * starts and ends, and `end` on the last byte fed (step_end) and on a
 * packet's last piece.  The first thing wrong is in `bad`.
 */

#include <stdlib.h>
#include <string.h>
#include "slc_mysql_track.h"
#include "slc_mysql_codec.h"

typedef struct {
    uint8_t         *buf;       /* the server's bytes, rebuilt */
    size_t           len;
    size_t           cap;
    uint32_t         got;       /* payload bytes of the current packet */
    const uint8_t   *step_end;  /* the end of the bytes being fed, or NULL */
    int              ends;      /* pieces with `end` */
    const char      *bad;       /* what went wrong first */
} slc_test_seen_t;

static inline void
slc_test_seen_add(slc_test_seen_t *o, const void *p, size_t n)
{
    if (o->len + n > o->cap) {
        o->cap = (o->len + n) * 2;
        o->buf = realloc(o->buf, o->cap);
        if (o->buf == NULL) {
            abort();
        }
    }
    if (n > 0) {
        memcpy(o->buf + o->len, p, n);
    }
    o->len += n;
}

static inline void
slc_test_seen_bad(slc_test_seen_t *o, const char *what)
{
    if (o->bad == NULL) {
        o->bad = what;
    }
}

static inline int
slc_test_observe(void *data, const slc_mysql_piece_t *pc)
{
    slc_test_seen_t *o = data;
    uint8_t          h[SLC_MYSQL_HDR_LEN];

    if (pc->first != (o->got == 0)) {
        slc_test_seen_bad(o, "first is not at the payload's start");
    }
    if (pc->first) {
        slc_mysql_hdr_write(h, pc->plen, pc->seq);
        slc_test_seen_add(o, h, sizeof(h));
    }
    slc_test_seen_add(o, pc->data, pc->len);
    o->got += (uint32_t) pc->len;
    if (pc->last != (o->got == pc->plen)) {
        slc_test_seen_bad(o, "last is not at the payload's end");
    }
    if (pc->last) {
        o->got = 0;
    }
    if (pc->end) {
        o->ends++;
        if (!pc->last || pc->reply == NULL
            || (o->step_end != NULL && pc->data + pc->len != o->step_end))
        {
            slc_test_seen_bad(o, "end before the last byte");
        }
    }
    return 0;                           /* SLC_OK */
}

#endif /* SLC_TEST_SEEN_H */
