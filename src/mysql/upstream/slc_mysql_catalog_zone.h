#ifndef SLC_MYSQL_CATALOG_ZONE_H
#define SLC_MYSQL_CATALOG_ZONE_H

#include "slc_core.h"
#include "slc_mysql_catalog.h"

/*
 * The schema catalog's zone, "mysql_catalog:UPSTREAM": what the readers
 * (slc_mysql_catalog.c) and the builder (slc_mysql_catalog_build.c) share.
 * Nothing outside those files and the loads reads it.
 *
 *   slc_catalog_zone_t    64 bytes: magic, active, ddl, loads
 *   image 0               `half` bytes each
 *   image 1
 *
 * Readers use the image `active` names; the monitor writes the other one
 * and then switches `active` to it.  An image:
 *
 *   slc_catalog_image_t   its seqlock word, state, counts
 *   uint32_t buckets[nbuckets]     entry index + 1 (0: empty); open
 *                                  addressing, linear probing, at most
 *                                  half full
 *   slc_catalog_entry_t entries[nentries]
 *   uint32_t refs[]                offsets of names (entries' lists)
 *   names                          a name: 2 bytes of length (host
 *                                  order), the bytes, a NUL
 *
 * Every offset is from the image's start, so an image is built in the
 * monitor's memory and copied as it is.
 *
 * Memory ordering (readers never lock; one writer, the monitor):
 *
 *   writer: slc_seqlock_write_begin on the inactive image's `seq` (a
 *   compare-and-swap, then a release fence: the odd value is visible
 *   before any byte of the image changes); the bytes; write_end (a
 *   release store of the even value: the bytes are visible before it);
 *   then `active` is stored with release.
 *
 *   reader: `active` with acquire (so the image's writes before the
 *   switch are visible), the image's `seq` with acquire (odd: retry);
 *   plain loads of the image, which may be torn if the writer came back
 *   to this image meanwhile (a reader that slept across two loads):
 *   every offset and count is checked against the image's size, every
 *   loop is bounded, nothing read is trusted before the check; then an
 *   acquire fence and `seq` again: unchanged, the copy is whole, else the
 *   answer is dropped and the read retried (a few times, then UNKNOWN).
 *
 *   `ddl`: workers add 1 (a sequentially consistent read-modify-write);
 *   the monitor reads it as a load begins and records it in the image
 *   (`ddl_at`); the image is current while the two are equal.
 *
 * Two monitors at once (the old one finishing its step during a reload)
 * are serialised by the seqlock's compare-and-swap: the second waits for
 * the first's odd value to go, and both images stay whole.
 */

#define SLC_CATALOG_MAGIC       0x43544c47u     /* "GLTC" */
#define SLC_CATALOG_ZONE_HDR    64
#define SLC_CATALOG_PART_MAX    256     /* a schema's or table's name */
#define SLC_CATALOG_DEPTH_MAX   16      /* views of views of views ... */
#define SLC_CATALOG_READ_TRIES  16

/* The image's state. */
#define SLC_CATALOG_S_LOADED            0x01
#define SLC_CATALOG_S_BLIND             0x02    /* a grant is missing */
#define SLC_CATALOG_S_TOO_SMALL         0x04    /* did not fit: blind */
#define SLC_CATALOG_S_ANSI_QUOTES       0x08
#define SLC_CATALOG_S_READ_UNCOMMITTED  0x10

/* An entry's view and writes. */
#define SLC_CATALOG_E_NONE      0       /* not a view */
#define SLC_CATALOG_E_VIEW      1       /* its base tables: reads */
#define SLC_CATALOG_E_UNKNOWN   2       /* a view that cannot be placed */

#define SLC_CATALOG_W_NONE      0       /* writes nothing else */
#define SLC_CATALOG_W_LIST      1       /* writes wlist too */
#define SLC_CATALOG_W_ALL       2       /* may write anything */

typedef struct {
    uint32_t    magic;
    uint32_t    active;         /* the image readers use: 0 or 1 */
    uint32_t    ddl;            /* bumped by slc_catalog_ddl_seen */
    uint32_t    pad;
    uint64_t    loads;          /* loads published */
    uint64_t    half;           /* bytes of an image */
} slc_catalog_zone_t;

typedef struct {
    uint32_t    seq;            /* seqlock (slc_seqlock.h) */
    uint32_t    state;          /* SLC_CATALOG_S_* (0: never loaded) */
    uint32_t    ddl_at;         /* the zone's ddl as this load began */
    uint32_t    nbuckets;       /* a power of two, or 0 */
    uint32_t    nentries;
    uint32_t    nviews;         /* rows loaded */
    uint32_t    ntriggers;
    uint32_t    hidden;         /* views without a definition */
    uint32_t    used;           /* bytes, this header included */
    uint32_t    pad;
    uint64_t    version;        /* loads that changed something */
    uint64_t    loaded_at;      /* ms since the epoch */
    char        server[128];    /* loaded from */
} slc_catalog_image_t;

typedef struct {
    uint32_t    name;           /* offset of its name */
    uint32_t    hash;           /* slc_hash_key of the name */
    uint32_t    flags;          /* a view: SLC_SQL_F_* of its closure */
    uint8_t     view;           /* SLC_CATALOG_E_* */
    uint8_t     writes;         /* SLC_CATALOG_W_* */
    uint16_t    ntriggers;      /* on this table */
    uint16_t    nreads;         /* a view: its base tables */
    uint16_t    nwrites;        /* W_LIST: what a write writes too */
    uint32_t    reads;          /* offset of nreads name offsets */
    uint32_t    wlist;          /* offset of nwrites name offsets */
    uint32_t    pad;
    uint64_t    def_hash;       /* its definition (the diff) */
    uint64_t    trg_hash;       /* its triggers' bodies (the diff) */
} slc_catalog_entry_t;

/* What the monitor keeps per catalog (slc_mysql_catalog_load.c). */
typedef struct slc_catalog_loader_s  slc_catalog_loader_t;

struct slc_catalog_s {
    slc_catalog_zone_t     *zone;       /* set by the zone's attach */
    size_t                  half;       /* bytes of an image */
    slc_cycle_t            *cycle;      /* NULL: over a test's memory */
    const slc_upstream_t   *up;         /* NULL: over a test's memory */
    long long               interval;   /* monitor_schema_interval, ms */
    size_t                  size;       /* monitor_schema_size */
    slc_catalog_loader_t   *loader;     /* the monitor process's own */
};

/* Image i of the zone. */
static inline slc_catalog_image_t *
slc_catalog_image(const slc_catalog_t *c, unsigned i)
{
    return (slc_catalog_image_t *) ((uint8_t *) c->zone
        + SLC_CATALOG_ZONE_HDR + (size_t) (i & 1) * c->half);
}

/* `len` bytes at offset `off` of an image of `half` bytes, or NULL when
   they are not all inside it (a torn or foreign image). */
static inline const uint8_t *
slc_catalog_at(const void *img, size_t half, uint64_t off, uint64_t len)
{
    if (off > half || len > half - off) {
        return NULL;
    }
    return (const uint8_t *) img + off;
}

/* Format a zone of `size` bytes (a new one: the master's init, a test). */
void slc_catalog_zone_format(void *addr, size_t size);
/* The bytes of an image in a zone of `size` bytes. */
size_t slc_catalog_half(size_t size);

/* The entry named key[0..len) in an image, or NULL; bounds checked. */
const slc_catalog_entry_t *slc_catalog_find(const void *img, size_t half,
    const char *key, size_t len);
/* The name at offset `off` (its length in *len), or NULL. */
const char *slc_catalog_name(const void *img, size_t half, uint32_t off,
    size_t *len);
/* The i-th offset of a list at `off`, or 0 (no name is at 0). */
uint32_t slc_catalog_ref(const void *img, size_t half, uint32_t off,
    unsigned i);
/* Entry i of an image, or NULL. */
const slc_catalog_entry_t *slc_catalog_entry(const void *img, size_t half,
    unsigned i);

/*
 * The writer's side of the zone (slc_mysql_catalog.c): a whole copy of
 * the image readers use into img (half bytes), SLC_ERROR when no stable
 * copy came (a writer stuck); and the switch to a new image of `len`
 * bytes, which also counts the load.
 */
int  slc_catalog_snapshot(const slc_catalog_t *c, void *img);
void slc_catalog_switch(slc_catalog_t *c, const void *img, size_t len);

/* What a load changed, for the hook: names point into the images. */
#define SLC_CATALOG_CHANGES_MAX  256    /* names the hook is told, or all */

typedef struct {
    unsigned    all;
    unsigned    n;
    slc_str_t   name[SLC_CATALOG_CHANGES_MAX];
} slc_catalog_changes_t;

/* What changed from image `old` to `new` (whole copies of `half` bytes)
   into ch, which starts zeroed (slc_mysql_catalog_diff.c). */
void slc_catalog_diff(const void *old, const void *new, size_t half,
    slc_catalog_changes_t *ch);

/* The monitor's connection and state for `c`, closed and freed (its
   exit); nothing when it has none. */
void slc_catalog_loader_free(slc_catalog_t *c);

#endif /* SLC_MYSQL_CATALOG_ZONE_H */
