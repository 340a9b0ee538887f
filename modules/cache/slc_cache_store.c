#include "slc_core.h"
#include "slc_hash.h"
#include "slc_slab.h"
#include "slc_cache_store.h"

#include <assert.h>

#define SLC_CACHE_MAGIC        0x43414348u     /* "CACH" */
#define SLC_CACHE_ENTRY_MAGIC  0x454e5452u     /* "ENTR" */
#define SLC_CACHE_NIL          UINT32_MAX

#define SLC_CACHE_CHUNK_MIN    64
#define SLC_CACHE_CHUNK_MAX    SLC_SLAB_MAX_SLOT
#define SLC_CACHE_BUCKET_BYTES 1024         /* of pool per bucket */
#define SLC_CACHE_BUCKETS_MIN  64
#define SLC_CACHE_INLINE_MAX   SLC_SLAB_MAX_SLOT   /* committed in one block */
#define SLC_CACHE_PREFETCH     8            /* lines of an entry read ahead */
#define SLC_CACHE_SECOND_CHANCES 64         /* LRU moves per eviction */

typedef enum {
    SLC_CACHE_PENDING_E = 1,
    SLC_CACHE_COMPLETE_E,
    SLC_CACHE_DEAD_E
} slc_cache_state_e;

struct slc_cache_chunk_s {
    slc_cache_chunk_t  *next;
    uint32_t            len;        /* bytes used */
    uint32_t            cap;        /* bytes available in data */
    uint8_t             data[];
};

/*
 * An entry is one slab block: this header, then its tables' slots and
 * generations (ntables of each), then the key; once committed small, the
 * result too (inlined).  What a lookup reads comes first, in the first
 * cache line.
 */
struct slc_cache_entry_s {
    uint32_t            magic;
    uint8_t             state;
    uint8_t             ntables;
    uint8_t             inlined;    /* first is in this block: not freed */
    uint8_t             hit;        /* hit since it last moved in the LRU */
    uint32_t            refs;       /* hits' pins and the store's */
    uint32_t            klen;
    uint64_t            hash;
    slc_cache_entry_t  *hnext;      /* bucket chain */
    uint64_t            expires;
    size_t              size;       /* result bytes */
    uint64_t            soft;       /* 0: no soft ttl */
    slc_cache_chunk_t  *first;
    /* second line */
    uint32_t            allgen;     /* gens[SLC_CACHE_GENS] at begin */
    uint64_t            started;    /* store_begin's now */
    uint64_t            refresh_at; /* a refresh granted then; 0: none */
    slc_cache_entry_t  *lprev;      /* LRU, COMPLETE only */
    slc_cache_entry_t  *lnext;
    slc_cache_chunk_t  *last;
    uint8_t             meta[SLC_CACHE_META];   /* the caller's */
    uint32_t            var[];      /* tslot[ntables], tgen[ntables], key */
};

static uint32_t *
slc_cache_tslot(const slc_cache_entry_t *e)
{
    return (uint32_t *) e->var;
}

static uint32_t *
slc_cache_tgen(const slc_cache_entry_t *e)
{
    return (uint32_t *) e->var + e->ntables;
}

static uint8_t *
slc_cache_ekey(const slc_cache_entry_t *e)
{
    return (uint8_t *) ((uint32_t *) e->var + 2 * (size_t) e->ntables);
}

/* The bytes of an entry's block before its result (if inlined). */
static size_t
slc_cache_head_size(unsigned ntables, size_t klen)
{
    size_t n = sizeof(slc_cache_entry_t) + 2 * ntables * sizeof(uint32_t)
               + klen;

    return (n + 7) & ~(size_t) 7;
}

/* A reference held by a process; free ones are listed through `next`. */
typedef struct {
    int32_t             pid;        /* 0: free */
    uint32_t            next;
    slc_cache_entry_t  *entry;
} slc_cache_pin_t;

struct slc_cache_s {
    uint32_t            magic;
    uint32_t            nbuckets;   /* a power of two */
    uint32_t            npins;
    uint32_t            free_pins;
    size_t              max_entry_size;
    uint64_t            wait_ms;
    slc_slab_pool_t    *pool;
    slc_cache_entry_t **buckets;
    slc_cache_entry_t  *lru_head;   /* most recently used */
    slc_cache_entry_t  *lru_tail;
    uint32_t           *gens;       /* SLC_CACHE_GENS + 1 (every table's:
                                       slc_cache_invalidate_all), atomics */
    uint64_t           *bumped;     /* the same slots: when each last moved
                                       (a bound above the write's commit),
                                       atomics that only grow */
    slc_cache_pin_t    *pins;
    slc_cache_stats_t   stats;      /* atomics */
    void               *user;       /* the filter's (slc_cache_user) */
};

static const char *slc_cache_refusal_names[SLC_CACHE_NREFUSALS] = {
    [SLC_CACHE_OK] = "ok",
    [SLC_CACHE_BUSY] = "busy",
    [SLC_CACHE_NOMEM] = "nomem",
    [SLC_CACHE_TOOBIG] = "toobig",
    [SLC_CACHE_TABLES_MAX] = "tables",
    [SLC_CACHE_PINS] = "pins",
    [SLC_CACHE_RACED] = "raced",
    [SLC_CACHE_GONE] = "gone",
};

#define slc_cache_count(c, field, n) \
    __atomic_fetch_add(&(c)->stats.field, (uint64_t) (n), __ATOMIC_RELAXED)
#define slc_cache_uncount(c, field, n) \
    __atomic_fetch_sub(&(c)->stats.field, (uint64_t) (n), __ATOMIC_RELAXED)

/* ---- under the lock: pins, LRU, index ---- */

/*
 * The caller's pid, read from the lock it holds: the lock already knows
 * it (slc_pid, or getpid() before it is set), so no second source.
 */
static int32_t
slc_cache_self_locked(slc_cache_t *c)
{
    return (int32_t) slc_shmtx_holder(&c->pool->mutex);
}

static uint32_t
slc_cache_pin_locked(slc_cache_t *c, slc_cache_entry_t *e)
{
    uint32_t i = c->free_pins;

    if (i == SLC_CACHE_NIL) {
        return SLC_CACHE_NIL;
    }
    c->free_pins = c->pins[i].next;
    c->pins[i].entry = e;
    c->pins[i].next = SLC_CACHE_NIL;
    c->pins[i].pid = slc_cache_self_locked(c);
    e->refs++;
    return i;
}

static void
slc_cache_unpin_slot_locked(slc_cache_t *c, uint32_t i)
{
    c->pins[i].pid = 0;
    c->pins[i].entry = NULL;
    c->pins[i].next = c->free_pins;
    c->free_pins = i;
}

static void
slc_cache_entry_free_locked(slc_cache_t *c, slc_cache_entry_t *e)
{
    slc_cache_chunk_t *ch = e->inlined ? NULL : e->first, *next;

    while (ch != NULL) {
        next = ch->next;
        (void) slc_slab_free_locked(c->pool, ch);
        ch = next;
    }
    e->magic = 0;
    (void) slc_slab_free_locked(c->pool, e);
}

/* Drop one reference; a DEAD entry goes with its last one. */
static void
slc_cache_unref_locked(slc_cache_t *c, slc_cache_entry_t *e)
{
    assert(e->refs > 0);
    if (--e->refs == 0 && e->state == SLC_CACHE_DEAD_E) {
        slc_cache_entry_free_locked(c, e);
    }
}

static void
slc_cache_lru_remove_locked(slc_cache_t *c, slc_cache_entry_t *e)
{
    if (e->lprev != NULL) {
        e->lprev->lnext = e->lnext;
    } else {
        c->lru_head = e->lnext;
    }
    if (e->lnext != NULL) {
        e->lnext->lprev = e->lprev;
    } else {
        c->lru_tail = e->lprev;
    }
    e->lprev = e->lnext = NULL;
}

static void
slc_cache_lru_push_locked(slc_cache_t *c, slc_cache_entry_t *e)
{
    e->lprev = NULL;
    e->lnext = c->lru_head;
    if (c->lru_head != NULL) {
        c->lru_head->lprev = e;
    } else {
        c->lru_tail = e;
    }
    c->lru_head = e;
}

static slc_cache_entry_t **
slc_cache_bucket(slc_cache_t *c, uint64_t hash)
{
    return &c->buckets[hash & (c->nbuckets - 1)];
}

/* Where the chain points at e; NULL if the bounded walk missed it. */
static slc_cache_entry_t **
slc_cache_chain_find_locked(slc_cache_t *c, const slc_cache_entry_t *e)
{
    slc_cache_entry_t **pp = slc_cache_bucket(c, e->hash);

    for (unsigned n = 0; *pp != NULL && n < SLC_CACHE_CHAIN_MAX; n++) {
        if (*pp == e) {
            return pp;
        }
        pp = &(*pp)->hnext;
    }
    return NULL;
}

/* Out of its chain (one store); 0 if the bounded walk missed it. */
static int
slc_cache_chain_remove_locked(slc_cache_t *c, slc_cache_entry_t *e)
{
    slc_cache_entry_t **pp = slc_cache_chain_find_locked(c, e);

    if (pp == NULL) {
        return 0;
    }
    *pp = e->hnext;
    return 1;
}

/*
 * Out of the index (and the LRU): DEAD, freed now if nobody holds it.
 * One the chain walk cannot find (a chain a killed worker left too long
 * or broken) is left allocated rather than freed while still reachable.
 */
static void
slc_cache_unlink_locked(slc_cache_t *c, slc_cache_entry_t *e)
{
    int found = slc_cache_chain_remove_locked(c, e);

    if (e->state == SLC_CACHE_COMPLETE_E) {
        slc_cache_lru_remove_locked(c, e);
        slc_cache_uncount(c, entries, 1);
        slc_cache_uncount(c, bytes, e->klen + e->size);
    }
    e->state = SLC_CACHE_DEAD_E;
    if (found && e->refs == 0) {
        slc_cache_entry_free_locked(c, e);
    }
}

/*
 * The LRU gives a second chance rather than moving an entry at every
 * hit: a hit only marks it (no write at all once marked), and eviction
 * moves a marked tail entry back to the head, unmarked, and looks at the
 * next.  Relinking at every hit wrote into the two neighbours' lines,
 * random ones, and the next atomic operation waited for them.  At most
 * SLC_CACHE_SECOND_CHANCES moves per eviction keep the lock short; past
 * them the tail goes, marked or not.
 */
static int
slc_cache_evict_one_locked(slc_cache_t *c)
{
    slc_cache_entry_t *e = c->lru_tail;

    for (unsigned n = 0; e != NULL && e->hit && e != c->lru_head
         && n < SLC_CACHE_SECOND_CHANCES; n++)
    {
        if (e->magic != SLC_CACHE_ENTRY_MAGIC) {
            return 0;
        }
        e->hit = 0;
        slc_cache_lru_remove_locked(c, e);
        slc_cache_lru_push_locked(c, e);
        e = c->lru_tail;
    }
    if (e == NULL || e->magic != SLC_CACHE_ENTRY_MAGIC) {
        return 0;
    }
    slc_cache_unlink_locked(c, e);
    slc_cache_count(c, evictions, 1);
    return 1;
}

/* The zone is the cap: make room from the LRU tail, never grow. */
static void *
slc_cache_alloc_locked(slc_cache_t *c, size_t size)
{
    for ( ;; ) {
        void *p = slc_slab_alloc_locked(c->pool, size);

        if (p != NULL || !slc_cache_evict_one_locked(c)) {
            return p;
        }
    }
}

/* The COMPLETE and the PENDING entry of a key, if any. */
static void
slc_cache_find_locked(slc_cache_t *c, const void *key, size_t klen,
    uint64_t hash, slc_cache_entry_t **done, slc_cache_entry_t **pending)
{
    slc_cache_entry_t *e = *slc_cache_bucket(c, hash);

    *done = *pending = NULL;
    for (unsigned n = 0; e != NULL && n < SLC_CACHE_CHAIN_MAX; n++) {
        /* a hit reads the header, the key and (inlined) the result:
           ask for them together rather than one miss after another */
        for (unsigned i = 0; i < SLC_CACHE_PREFETCH; i++) {
            __builtin_prefetch((const uint8_t *) e + 64 * i);
        }
        if (e->magic != SLC_CACHE_ENTRY_MAGIC) {
            return;                 /* a chain left broken: stop there */
        }
        if (e->hash == hash && e->klen == klen
            && memcmp(slc_cache_ekey(e), key, klen) == 0)
        {
            if (e->state == SLC_CACHE_COMPLETE_E) {
                *done = e;
            } else if (e->state == SLC_CACHE_PENDING_E) {
                *pending = e;
            }
        }
        e = e->hnext;
    }
}

static int
slc_cache_stale(slc_cache_t *c, const slc_cache_entry_t *e)
{
    if (__atomic_load_n(&c->gens[SLC_CACHE_GENS], __ATOMIC_ACQUIRE)
        != e->allgen)
    {
        return 1;
    }
    for (unsigned i = 0; i < e->ntables; i++) {
        if (__atomic_load_n(&c->gens[slc_cache_tslot(e)[i]], __ATOMIC_ACQUIRE)
            != slc_cache_tgen(e)[i])
        {
            return 1;
        }
    }
    return 0;
}

/* ---- setting up ---- */

static uint32_t
slc_cache_nbuckets(size_t pool_size)
{
    size_t n = SLC_CACHE_BUCKETS_MIN;

    while (n < pool_size / SLC_CACHE_BUCKET_BYTES && n < (1u << 30)) {
        n <<= 1;
    }
    return (uint32_t) n;
}

static int
slc_cache_tables_alloc(slc_cache_t *c, slc_slab_pool_t *pool)
{
    c->buckets = slc_slab_alloc(pool, c->nbuckets * sizeof(*c->buckets));
    c->gens = slc_slab_alloc(pool, (SLC_CACHE_GENS + 1) * sizeof(*c->gens));
    c->bumped = slc_slab_alloc(pool,
        (SLC_CACHE_GENS + 1) * sizeof(*c->bumped));
    c->pins = slc_slab_alloc(pool, c->npins * sizeof(*c->pins));
    if (c->buckets == NULL || c->gens == NULL || c->bumped == NULL
        || c->pins == NULL)
    {
        return SLC_ERROR;
    }
    memset(c->buckets, 0, c->nbuckets * sizeof(*c->buckets));
    memset(c->gens, 0, (SLC_CACHE_GENS + 1) * sizeof(*c->gens));
    memset(c->bumped, 0, (SLC_CACHE_GENS + 1) * sizeof(*c->bumped));
    for (uint32_t i = 0; i < c->npins; i++) {
        c->pins[i] = (slc_cache_pin_t) {
            .next = i + 1 < c->npins ? i + 1 : SLC_CACHE_NIL,
        };
    }
    c->free_pins = 0;
    return SLC_OK;
}

static void
slc_cache_tables_free(slc_cache_t *c, slc_slab_pool_t *pool)
{
    void *p[] = { c->buckets, c->gens, c->bumped, c->pins, c };

    for (size_t i = 0; i < slc_nelems(p); i++) {
        if (p[i] != NULL) {
            (void) slc_slab_free(pool, p[i]);
        }
    }
}

slc_cache_t *
slc_cache_init(slc_slab_pool_t *pool, const slc_cache_params_t *conf,
    uint64_t now)
{
    slc_cache_t *c;

    if (conf->npins == 0 || (c = slc_slab_alloc(pool, sizeof(*c))) == NULL) {
        return NULL;
    }
    *c = (slc_cache_t) {
        .nbuckets = slc_cache_nbuckets(pool->size),
        .npins = conf->npins,
        .max_entry_size = conf->max_entry_size,
        .wait_ms = conf->wait_ms,
        .pool = pool,
    };
    if (slc_cache_tables_alloc(c, pool) != SLC_OK) {
        slc_cache_tables_free(c, pool);
        return NULL;
    }
    /* writes before the zone existed were not seen: as if all were now */
    c->bumped[SLC_CACHE_GENS] = now + 1;
    c->magic = SLC_CACHE_MAGIC;
    pool->data = c;
    return c;
}

slc_cache_t *
slc_cache_get(slc_slab_pool_t *pool)
{
    slc_cache_t *c = pool->data;

    return c != NULL && c->magic == SLC_CACHE_MAGIC ? c : NULL;
}

void **
slc_cache_user(slc_cache_t *c)
{
    return &c->user;
}

slc_slab_pool_t *
slc_cache_pool(slc_cache_t *c)
{
    return c->pool;
}

void
slc_cache_tune(slc_cache_t *c, const slc_cache_params_t *conf)
{
    __atomic_store_n(&c->max_entry_size, conf->max_entry_size,
        __ATOMIC_RELAXED);
    __atomic_store_n(&c->wait_ms, conf->wait_ms, __ATOMIC_RELAXED);
}

/* ---- lookup and hits ---- */

/*
 * The key's hash picks the bucket and skips unequal keys quickly; the
 * whole key is compared.  Eight bytes a step (a multiply and a shift):
 * byte-wise FNV-1a over a key of ~100 bytes was 1.5 % of a hit's CPU.
 * The last bytes (where keys that differ only by a literal differ) go
 * through a full 64-bit mix: the bucket is the hash's low bits, which a
 * single multiply leaves depending on the low bytes only (4000 point
 * selects fell into 750 of 65536 buckets, chains of 9 a lookup walked,
 * each a cache miss).  Only this host's processes share the zone, so
 * byte order is moot.
 */
uint64_t
slc_cache_key_hash(const void *key, size_t n)
{
    const uint8_t *p = key;
    uint64_t       h = 0x9e3779b97f4a7c15ull ^ n, w;
    size_t         i;

    for (i = 0; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, p + i, n - i);
    h ^= w;
    h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
    h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

/* Where a hit of an inlined entry is copied (slc_cache_hit_t.copy). */
static uint64_t  slc_cache_scratch[(sizeof(slc_cache_chunk_t)
                                    + SLC_CACHE_INLINE_MAX) / 8 + 1];

/* Past the soft ttl: 1 if this caller is the one to refresh. */
static int
slc_cache_refresh_locked(slc_cache_t *c, slc_cache_entry_t *e,
    const slc_cache_entry_t *pending, uint64_t now)
{
    if (e->soft == 0 || now < e->soft) {
        return 0;
    }
    if (pending != NULL && now - pending->started < c->wait_ms) {
        return 0;                   /* the refresher is storing */
    }
    if (e->refresh_at != 0 && now - e->refresh_at < c->wait_ms) {
        return 0;                   /* granted and not yet timed out */
    }
    e->refresh_at = now;
    return 1;
}

/* A COMPLETE entry that may no longer be served is unlinked here. */
static slc_cache_entry_t *
slc_cache_usable_locked(slc_cache_t *c, slc_cache_entry_t *e, uint64_t now)
{
    if (e == NULL) {
        return NULL;
    }
    if (now >= e->expires) {
        slc_cache_count(c, expired, 1);
    } else if (slc_cache_stale(c, e)) {
        slc_cache_count(c, stale, 1);
    } else {
        return e;
    }
    slc_cache_unlink_locked(c, e);
    return NULL;
}

static slc_cache_result_e
slc_cache_lookup_locked(slc_cache_t *c, const void *key, size_t klen,
    uint64_t hash, uint64_t now, slc_cache_hit_t *hit)
{
    slc_cache_entry_t *e, *p;

    slc_cache_find_locked(c, key, klen, hash, &e, &p);
    e = slc_cache_usable_locked(c, e, now);
    if (e == NULL) {
        return p != NULL && now - p->started < c->wait_ms
               ? SLC_CACHE_PENDING : SLC_CACHE_MISS;
    }
    if (slc_cache_refresh_locked(c, e, p, now)) {
        return SLC_CACHE_HIT_REFRESH;
    }
    if (e->inlined) {
        /* small: copied now, under the lock, so that the hit writes
           nothing into the zone (no pin to take and give back) */
        hit->copy = (slc_cache_chunk_t *) (void *) slc_cache_scratch;
        memcpy(hit->copy, e->first, sizeof(*e->first) + e->size);
    } else {
        hit->pin = slc_cache_pin_locked(c, e);
        if (hit->pin == SLC_CACHE_NIL) {
            slc_cache_count(c, refused[SLC_CACHE_PINS], 1);
            return SLC_CACHE_MISS;
        }
        hit->entry = e;
    }
    hit->size = e->size;
    memcpy(hit->meta, e->meta, sizeof(hit->meta));
    if (!e->hit) {
        e->hit = 1;                 /* a second chance at eviction */
    }
    return SLC_CACHE_HIT;
}

slc_cache_result_e
slc_cache_lookup(slc_cache_t *c, const void *key, size_t klen,
    uint64_t hash, uint64_t now, slc_cache_hit_t *hit)
{
    slc_cache_result_e r;

    *hit = (slc_cache_hit_t) { .cache = c, .pin = SLC_CACHE_NIL };
    slc_shmtx_lock(&c->pool->mutex);
    r = slc_cache_lookup_locked(c, key, klen, hash, now, hit);
    slc_shmtx_unlock(&c->pool->mutex);

    slc_cache_count(c, lookups, 1);
    switch (r) {
    case SLC_CACHE_HIT:
        slc_cache_count(c, hits, 1);
        break;
    case SLC_CACHE_HIT_REFRESH:
        slc_cache_count(c, refreshes, 1);
        break;
    case SLC_CACHE_PENDING:
        slc_cache_count(c, pending, 1);
        break;
    default:
        slc_cache_count(c, misses, 1);
    }
    return r;
}

void
slc_cache_release(slc_cache_hit_t *hit)
{
    slc_cache_t *c = hit->cache;

    if (hit->owned) {
        free(hit->copy);
        hit->owned = 0;
    }
    hit->copy = NULL;
    if (hit->entry == NULL) {
        return;
    }
    slc_shmtx_lock(&c->pool->mutex);
    /* reap may have taken a pin back only from a dead pid, never ours */
    assert(c->pins[hit->pin].entry == hit->entry);
    slc_cache_unpin_slot_locked(c, hit->pin);
    slc_cache_unref_locked(c, hit->entry);
    slc_shmtx_unlock(&c->pool->mutex);
    hit->entry = NULL;
}

int
slc_cache_hit_keep(slc_cache_hit_t *hit)
{
    slc_cache_chunk_t *own;

    if (hit->copy == NULL || hit->owned) {
        return SLC_OK;
    }
    own = malloc(sizeof(*own) + hit->size);
    if (own == NULL) {
        slc_cache_release(hit);
        return SLC_ERROR;
    }
    memcpy(own, hit->copy, sizeof(*own) + hit->size);
    hit->copy = own;
    hit->owned = 1;
    return SLC_OK;
}

int
slc_cache_hit_make(slc_cache_hit_t *hit, const void *data, size_t len,
    const uint8_t *meta)
{
    slc_cache_chunk_t *own;

    *hit = (slc_cache_hit_t) { .size = len };
    if (len > UINT32_MAX || (own = malloc(sizeof(*own) + len)) == NULL) {
        return SLC_ERROR;
    }
    *own = (slc_cache_chunk_t) { .len = (uint32_t) len,
                                 .cap = (uint32_t) len };
    memcpy(own->data, data, len);
    memcpy(hit->meta, meta, SLC_CACHE_META);
    hit->copy = own;
    hit->owned = 1;
    return SLC_OK;
}

void
slc_cache_cursor_init(slc_cache_cursor_t *cur, const slc_cache_hit_t *hit)
{
    cur->chunk = hit->entry != NULL ? hit->entry->first : hit->copy;
    cur->off = 0;
}

size_t
slc_cache_cursor_next(slc_cache_cursor_t *cur, const uint8_t **p,
    size_t max)
{
    const slc_cache_chunk_t *ch = cur->chunk;
    size_t                   n;

    while (ch != NULL && cur->off == ch->len) {
        ch = cur->chunk = ch->next;
        cur->off = 0;
    }
    if (ch == NULL || max == 0) {
        return 0;
    }
    n = slc_min(max, (size_t) (ch->len - cur->off));
    *p = ch->data + cur->off;
    cur->off += (uint32_t) n;
    return n;
}

/* ---- storing ---- */

/* The generations the read starts from: slots[i] and gens[i] of each
   table, and every table's in proto->allgen. */
static void
slc_cache_tables_snapshot(slc_cache_t *c, slc_cache_entry_t *proto,
    const slc_str_t *tables, unsigned ntables, uint32_t *slots)
{
    proto->ntables = (uint8_t) ntables;
    proto->allgen = __atomic_load_n(&c->gens[SLC_CACHE_GENS],
                                    __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < ntables; i++) {
        uint32_t slot = slc_cache_table_hash(tables[i].data, tables[i].len)
                        & (SLC_CACHE_GENS - 1);

        slots[i] = slot;
        slots[ntables + i] = __atomic_load_n(&c->gens[slot],
                                             __ATOMIC_ACQUIRE);
    }
}

/*
 * A young store of the key holds others off (single flight); an old one
 * is taken out of the index: its storer is slow or gone, and its next
 * call learns it (GONE), while its pin keeps the memory until then.
 */
static slc_cache_refusal_e
slc_cache_single_flight_locked(slc_cache_t *c, const void *key,
    size_t klen, uint64_t hash, uint64_t now)
{
    slc_cache_entry_t *done, *p;

    slc_cache_find_locked(c, key, klen, hash, &done, &p);
    if (p == NULL) {
        return SLC_CACHE_OK;
    }
    if (now - p->started < c->wait_ms) {
        return SLC_CACHE_BUSY;
    }
    slc_cache_unlink_locked(c, p);
    return SLC_CACHE_OK;
}

/* A PENDING entry for the key, in the index; its store holds a pin. */
static slc_cache_refusal_e
slc_cache_begin_locked(slc_cache_t *c, slc_cache_store_t *st,
    const slc_cache_entry_t *proto, const uint32_t *slots, const void *key)
{
    slc_cache_entry_t  *e, **b;
    slc_cache_refusal_e r;

    r = slc_cache_single_flight_locked(c, key, proto->klen, proto->hash,
                                       proto->started);
    if (r != SLC_CACHE_OK) {
        return r;
    }
    e = slc_cache_alloc_locked(c,
        slc_cache_head_size(proto->ntables, proto->klen));
    if (e == NULL) {
        return SLC_CACHE_NOMEM;
    }
    *e = *proto;
    memcpy(e->var, slots, 2 * proto->ntables * sizeof(uint32_t));
    memcpy(slc_cache_ekey(e), key, proto->klen);
    st->pin = slc_cache_pin_locked(c, e);
    if (st->pin == SLC_CACHE_NIL) {
        (void) slc_slab_free_locked(c->pool, e);
        return SLC_CACHE_PINS;
    }
    b = slc_cache_bucket(c, e->hash);
    e->hnext = *b;
    *b = e;                         /* one store publishes it */
    st->entry = e;
    return SLC_CACHE_OK;
}

static slc_cache_refusal_e
slc_cache_refuse(slc_cache_t *c, slc_cache_refusal_e r)
{
    slc_cache_count(c, refused[r], 1);
    return r;
}

slc_cache_refusal_e
slc_cache_store_begin(slc_cache_t *c, slc_cache_store_t *st,
    const void *key, size_t klen, uint64_t hash, const slc_str_t *tables,
    unsigned ntables, uint64_t ttl_ms, uint64_t soft_ms, uint64_t now)
{
    slc_cache_entry_t   proto;
    uint32_t            slots[2 * SLC_CACHE_TABLES];
    slc_cache_refusal_e r;

    *st = (slc_cache_store_t) { .cache = c, .pin = SLC_CACHE_NIL };
    if (klen > __atomic_load_n(&c->max_entry_size, __ATOMIC_RELAXED)
        || klen > UINT32_MAX)
    {
        return slc_cache_refuse(c, SLC_CACHE_TOOBIG);
    }
    if (ntables > SLC_CACHE_TABLES) {
        return slc_cache_refuse(c, SLC_CACHE_TABLES_MAX);
    }
    proto = (slc_cache_entry_t) {
        .magic = SLC_CACHE_ENTRY_MAGIC, .state = SLC_CACHE_PENDING_E,
        .klen = (uint32_t) klen, .hash = hash, .started = now,
        .expires = now + ttl_ms,
        .soft = soft_ms != 0 && soft_ms < ttl_ms ? now + soft_ms : 0,
    };
    /* before the read goes out: a write after this moves a generation */
    slc_cache_tables_snapshot(c, &proto, tables, ntables, slots);

    slc_shmtx_lock(&c->pool->mutex);
    r = slc_cache_begin_locked(c, st, &proto, slots, key);
    slc_shmtx_unlock(&c->pool->mutex);
    return r == SLC_CACHE_OK ? r : slc_cache_refuse(c, r);
}

/* The next chunk: double the last one, at least what is left to fit. */
static size_t
slc_cache_chunk_size(const slc_cache_entry_t *e, size_t rest)
{
    size_t want = sizeof(slc_cache_chunk_t) + rest, size;

    size = e->last != NULL ? (size_t) e->last->cap * 2
                             + sizeof(slc_cache_chunk_t)
                           : SLC_CACHE_CHUNK_MIN;
    while (size < want && size < SLC_CACHE_CHUNK_MAX) {
        size <<= 1;
    }
    return slc_min(size, SLC_CACHE_CHUNK_MAX);
}

/* Hang a new chunk on the entry; its storer fills it after unlocking. */
static slc_cache_chunk_t *
slc_cache_chunk_add_locked(slc_cache_t *c, slc_cache_entry_t *e,
    size_t rest)
{
    size_t             size = slc_cache_chunk_size(e, rest);
    slc_cache_chunk_t *ch;

    if (e->state != SLC_CACHE_PENDING_E) {
        return NULL;                /* superseded or reaped meanwhile */
    }
    ch = slc_cache_alloc_locked(c, size);
    if (ch == NULL) {
        return NULL;
    }
    ch->next = NULL;
    ch->len = 0;
    ch->cap = (uint32_t) (size - sizeof(*ch));
    if (e->last != NULL) {
        e->last->next = ch;
    } else {
        e->first = ch;
    }
    e->last = ch;
    return ch;
}

/* Copy into the last chunk's free room; no lock: the entry is ours. */
static size_t
slc_cache_chunk_fill(slc_cache_entry_t *e, const uint8_t *data, size_t len)
{
    slc_cache_chunk_t *ch = e->last;
    size_t             n;

    if (ch == NULL) {
        return 0;
    }
    n = slc_min(len, (size_t) (ch->cap - ch->len));
    memcpy(ch->data + ch->len, data, n);
    ch->len += (uint32_t) n;
    e->size += n;
    return n;
}

static slc_cache_refusal_e
slc_cache_store_fail(slc_cache_store_t *st, slc_cache_refusal_e r)
{
    slc_cache_store_abort(st);
    return slc_cache_refuse(st->cache, r);
}

slc_cache_refusal_e
slc_cache_store_append(slc_cache_store_t *st, const void *data, size_t len)
{
    slc_cache_t       *c = st->cache;
    slc_cache_entry_t *e = st->entry;
    const uint8_t     *p = data;
    size_t             n, max;

    if (e == NULL) {
        return SLC_CACHE_GONE;
    }
    max = __atomic_load_n(&c->max_entry_size, __ATOMIC_RELAXED);
    if (len > max || e->size > max - len) {
        return slc_cache_store_fail(st, SLC_CACHE_TOOBIG);
    }
    n = slc_cache_chunk_fill(e, p, len);
    while (n < len) {
        slc_cache_chunk_t *ch;
        int                gone;

        slc_shmtx_lock(&c->pool->mutex);
        gone = e->state != SLC_CACHE_PENDING_E;
        ch = gone ? NULL : slc_cache_chunk_add_locked(c, e, len - n);
        slc_shmtx_unlock(&c->pool->mutex);
        if (ch == NULL) {
            return slc_cache_store_fail(st, gone ? SLC_CACHE_GONE
                                                 : SLC_CACHE_NOMEM);
        }
        n += slc_cache_chunk_fill(e, p + n, len - n);
    }
    return SLC_CACHE_OK;
}

/*
 * A small result is copied, with its entry and key, into one block: the
 * hits that follow read one run of memory instead of following chunks
 * from one random place to the next (each a cache and TLB miss).  The
 * block replaces e in its chain; e, now DEAD, goes with its store's pin.
 * Without the memory (or when the chain cannot be walked), e stays.
 */
static slc_cache_entry_t *
slc_cache_compact_locked(slc_cache_t *c, slc_cache_entry_t *e)
{
    size_t              head = slc_cache_head_size(e->ntables, e->klen);
    size_t              need = head + sizeof(slc_cache_chunk_t) + e->size;
    slc_cache_entry_t  *n, **pp;
    slc_cache_chunk_t  *in;
    const slc_cache_chunk_t *ch;
    size_t              off = 0;

    if (e->inlined || need > SLC_CACHE_INLINE_MAX
        || (n = slc_cache_alloc_locked(c, need)) == NULL)
    {
        return e;
    }
    /* after the allocation: its evictions may have changed the chain */
    if ((pp = slc_cache_chain_find_locked(c, e)) == NULL) {
        (void) slc_slab_free_locked(c->pool, n);
        return e;
    }
    memcpy(n, e, head);
    in = (slc_cache_chunk_t *) (void *) ((uint8_t *) n + head);
    for (ch = e->first; ch != NULL; ch = ch->next) {
        memcpy(in->data + off, ch->data, ch->len);
        off += ch->len;
    }
    in->next = NULL;
    in->len = in->cap = (uint32_t) off;
    n->first = n->last = in;
    n->inlined = 1;
    n->refs = 0;
    *pp = n;                        /* one store: readers see e or n */
    e->state = SLC_CACHE_DEAD_E;
    return n;
}

static slc_cache_refusal_e
slc_cache_commit_locked(slc_cache_t *c, slc_cache_entry_t *e)
{
    slc_cache_entry_t *done, *p;

    if (e->state != SLC_CACHE_PENDING_E) {
        return SLC_CACHE_GONE;
    }
    if (slc_cache_stale(c, e)) {
        return SLC_CACHE_RACED;
    }
    slc_cache_find_locked(c, slc_cache_ekey(e), e->klen, e->hash, &done,
        &p);
    if (done != NULL) {
        slc_cache_unlink_locked(c, done);   /* replaced */
    }
    e = slc_cache_compact_locked(c, e);
    e->state = SLC_CACHE_COMPLETE_E;
    slc_cache_lru_push_locked(c, e);
    slc_cache_count(c, entries, 1);
    slc_cache_count(c, bytes, e->klen + e->size);
    return SLC_CACHE_OK;
}

slc_cache_refusal_e
slc_cache_store_commit(slc_cache_store_t *st)
{
    slc_cache_t        *c = st->cache;
    slc_cache_refusal_e r;

    if (st->entry == NULL) {
        return SLC_CACHE_GONE;
    }
    slc_shmtx_lock(&c->pool->mutex);
    r = slc_cache_commit_locked(c, st->entry);
    if (r == SLC_CACHE_OK) {
        slc_cache_unpin_slot_locked(c, st->pin);
        slc_cache_unref_locked(c, st->entry);
    }
    slc_shmtx_unlock(&c->pool->mutex);
    if (r != SLC_CACHE_OK) {
        return slc_cache_store_fail(st, r);
    }
    st->entry = NULL;
    slc_cache_count(c, stores, 1);
    return SLC_CACHE_OK;
}

/*
 * Out of the index if still there, and the key's refresh, if one was
 * granted, may go to someone else now.
 */
static void
slc_cache_abort_locked(slc_cache_t *c, slc_cache_entry_t *e)
{
    slc_cache_entry_t *done, *p;

    if (e->state == SLC_CACHE_PENDING_E) {
        slc_cache_find_locked(c, slc_cache_ekey(e), e->klen, e->hash, &done,
        &p);
        if (done != NULL) {
            done->refresh_at = 0;
        }
        slc_cache_unlink_locked(c, e);
    }
}

void
slc_cache_store_abort(slc_cache_store_t *st)
{
    slc_cache_t       *c = st->cache;
    slc_cache_entry_t *e = st->entry;

    if (e == NULL) {
        return;
    }
    slc_shmtx_lock(&c->pool->mutex);
    assert(c->pins[st->pin].entry == e);
    slc_cache_abort_locked(c, e);
    slc_cache_unpin_slot_locked(c, st->pin);
    slc_cache_unref_locked(c, e);
    slc_shmtx_unlock(&c->pool->mutex);
    st->entry = NULL;
    slc_cache_count(c, aborts, 1);
}

void
slc_cache_store_meta(slc_cache_store_t *st, const void *meta, size_t len)
{
    if (st->entry != NULL) {
        memcpy(st->entry->meta, meta, slc_min(len, (size_t) SLC_CACHE_META));
    }
}

void
slc_cache_store_cursor(const slc_cache_store_t *st, slc_cache_cursor_t *cur)
{
    cur->chunk = st->entry != NULL ? st->entry->first : NULL;
    cur->off = 0;
}

size_t
slc_cache_store_size(const slc_cache_store_t *st)
{
    return st->entry != NULL ? st->entry->size : 0;
}

void
slc_cache_store_ttl(slc_cache_store_t *st, uint64_t ttl_ms, uint64_t soft_ms)
{
    slc_cache_entry_t *e = st->entry;

    if (e != NULL) {
        e->expires = e->started + ttl_ms;
        e->soft = soft_ms != 0 && soft_ms < ttl_ms ? e->started + soft_ms : 0;
    }
}

/* ---- invalidation, reaping, counters ---- */

void
slc_cache_invalidate(slc_cache_t *c, const char *table, size_t len,
    uint64_t now)
{
    slc_cache_invalidate_hash(c, slc_cache_table_hash(table, len), now);
}

uint32_t
slc_cache_table_hash(const char *table, size_t len)
{
    return slc_hash_key(table, len);
}

/* A slot moved at `now`: the write committed before now + 1 (now is
   whole milliseconds).  Workers' clocks differ by a loop: keep the max. */
static void
slc_cache_gen_bump(slc_cache_t *c, uint32_t slot, uint64_t now)
{
    uint64_t t = __atomic_load_n(&c->bumped[slot], __ATOMIC_RELAXED);

    while (t < now + 1
           && !__atomic_compare_exchange_n(&c->bumped[slot], &t, now + 1, 1,
                  __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    {
        /* t reloaded */
    }
    __atomic_add_fetch(&c->gens[slot], 1, __ATOMIC_RELEASE);
    slc_cache_count(c, invalidations, 1);
}

void
slc_cache_invalidate_hash(slc_cache_t *c, uint32_t hash, uint64_t now)
{
    slc_cache_gen_bump(c, hash & (SLC_CACHE_GENS - 1), now);
}

void
slc_cache_invalidate_all(slc_cache_t *c, uint64_t now)
{
    slc_cache_gen_bump(c, SLC_CACHE_GENS, now);
}

int
slc_cache_store_synced(const slc_cache_store_t *st, uint64_t at)
{
    const slc_cache_entry_t *e = st->entry;
    slc_cache_t             *c = st->cache;

    if (e == NULL
        || __atomic_load_n(&c->bumped[SLC_CACHE_GENS], __ATOMIC_ACQUIRE) > at)
    {
        return 0;
    }
    for (unsigned i = 0; i < e->ntables; i++) {
        if (__atomic_load_n(&c->bumped[slc_cache_tslot(e)[i]], __ATOMIC_ACQUIRE)
            > at)
        {
            return 0;
        }
    }
    return 1;
}

unsigned
slc_cache_reap(slc_cache_t *c, pid_t pid)
{
    unsigned n = 0;

    if (pid == 0) {
        return 0;
    }
    slc_shmtx_lock(&c->pool->mutex);
    for (uint32_t i = 0; i < c->npins; i++) {
        slc_cache_entry_t *e = c->pins[i].entry;

        if (c->pins[i].pid != (int32_t) pid || e == NULL) {
            continue;
        }
        /* a store that will never end: out of the index, like an abort */
        slc_cache_abort_locked(c, e);
        slc_cache_unpin_slot_locked(c, i);
        slc_cache_unref_locked(c, e);
        n++;
    }
    slc_shmtx_unlock(&c->pool->mutex);
    return n;
}

void
slc_cache_stats(slc_cache_t *c, slc_cache_stats_t *st)
{
    const uint64_t *from = (const uint64_t *) &c->stats;
    uint64_t       *to = (uint64_t *) st;

    /* all uint64_t: each read whole, no lock (the set is not a snapshot) */
    for (size_t i = 0; i < sizeof(*st) / sizeof(uint64_t); i++) {
        to[i] = __atomic_load_n(&from[i], __ATOMIC_RELAXED);
    }
}

const char *
slc_cache_refusal_name(slc_cache_refusal_e r)
{
    return (unsigned) r < SLC_CACHE_NREFUSALS ? slc_cache_refusal_names[r]
                                              : "?";
}
