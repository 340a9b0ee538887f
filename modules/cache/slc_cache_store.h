#ifndef SLC_CACHE_STORE_H
#define SLC_CACHE_STORE_H

#include "slc_core.h"
#include "slc_slab.h"

/*
 * The query cache's store: entries in one slab pool (a shared-memory zone
 * every worker maps at the same address), found by key, evicted by LRU.
 * A pure data structure: it knows nothing of the protocol; the cache
 * filter builds the key, decides what may be cached and streams a hit.
 *
 * - Index.  A power-of-two array of bucket chains, sized from the pool
 *   (one bucket per KiB), singly linked so that a link or an unlink is one
 *   store.  A lookup compares the whole key (length and bytes) of every
 *   candidate: the 64-bit hash only picks the bucket and skips unequal
 *   keys quickly, it never answers alone.  Chain walks are bounded
 *   (SLC_CACHE_CHAIN_MAX), so a chain a killed worker left half unlinked
 *   cannot make a lookup spin under the lock.
 * - Entries.  Key bytes inline after the header; the result as a chain
 *   of chunks taken from the slab as it streams in (64 bytes up to 2 KiB,
 *   doubling, so a small result wastes little and a large one takes whole
 *   slots of the largest class, never a run of pages that fragmentation
 *   could refuse).  At commit a result that fits in one slot of the
 *   largest class with its header and key is copied into one block
 *   (inlined), so that its hits read one run of memory.  An entry is
 *   PENDING while stored (in the index, so concurrent misses find it:
 *   single flight, but never readable), COMPLETE once committed (in the
 *   index and the LRU), DEAD once unlinked: freed at once, or at its last
 *   release if pinned.
 * - Hits and pins.  A hit of an inlined entry is copied out under the
 *   lock into the process's scratch (slc_cache_hit_t.copy: the hit writes
 *   nothing into the zone, and holds nothing).  A hit of a larger entry
 *   takes a reference (refcount) under the lock and is read without it: a
 *   committed entry's chunks never change, and it is freed only when
 *   unlinked and unreferenced.  Every reference, a hit's or an in-flight
 *   store's, is recorded with its pid in a fixed pin table, so that
 *   slc_cache_reap(pid) gives back what a killed worker held: its hits'
 *   references, and its half-stored entries (which would otherwise hold
 *   memory forever and block their key until wait_ms).
 * - Freshness.  `expires` (ttl) and `soft` (soft ttl) are counted from
 *   store_begin, when the read went out, not from the commit: the data is
 *   as old as the read.  Each entry keeps the generation of every table it
 *   read (up to SLC_CACHE_TABLES); slc_cache_invalidate bumps a table's
 *   generation with one atomic add (tables are hashed into a fixed array
 *   of SLC_CACHE_GENS; a collision only over-invalidates) and an entry
 *   whose generation moved is dropped at its next lookup.  A commit is
 *   refused if a generation moved since begin (a write raced the read).
 * - Memory.  The pool never grows: an allocation that fails evicts the
 *   LRU tail and retries, until it succeeds or the LRU is empty.  The
 *   tail is evicted even if pinned (it leaves the index and is freed at
 *   its release): it is the least useful entry either way, and skipping
 *   pinned ones would mean walking past them under the lock.
 * - Locking.  The pool's lock (pool->mutex) guards the index, the LRU,
 *   the pins and every allocation: short sections.  Keys are copied and
 *   compared under it, and a small result (inlined: at most one slot) is
 *   copied under it at commit and by each hit; a larger one never is (an
 *   append copies into its chunk after unlocking, the pending entry being
 *   private to its storer; a pinned hit is read without the lock).
 *   Counters are atomics, so slc_cache_stats takes no lock.
 *
 * Times are milliseconds given by the caller.  The pointers handed out
 * (hits, cursors) are valid in every process mapping the zone.
 *
 * Limits: a worker killed inside a critical section may leave the LRU
 * half linked or the slab's lists half done (as nginx's cache); lookups
 * stay bounded, but such an LRU is not repaired.  Memory held by DEAD
 * entries pinned by a live but stuck process comes back only at release.
 */

#define SLC_CACHE_TABLES     16     /* tables an entry may depend on */
#define SLC_CACHE_GENS       8192   /* table generation slots */
#define SLC_CACHE_CHAIN_MAX  256    /* bucket entries a walk visits */
#define SLC_CACHE_META       16     /* the caller's bytes in an entry */

/* What a lookup answers. */
typedef enum {
    SLC_CACHE_MISS = 0,
    SLC_CACHE_HIT,              /* pinned or copied: read it, then
                                   release */
    SLC_CACHE_HIT_REFRESH,      /* past the soft ttl and this caller is the
                                   one to refresh: go to the backend and
                                   store (not pinned) */
    SLC_CACHE_PENDING           /* another store of the key is young: wait
                                   and look up again */
} slc_cache_result_e;

/* Why a store (or a hit's pin) was refused. */
typedef enum {
    SLC_CACHE_OK = 0,
    SLC_CACHE_BUSY,             /* a young store of the key is in flight */
    SLC_CACHE_NOMEM,            /* no room even with the LRU empty */
    SLC_CACHE_TOOBIG,           /* over max_entry_size */
    SLC_CACHE_TABLES_MAX,       /* reads more than SLC_CACHE_TABLES tables */
    SLC_CACHE_PINS,             /* the pin table is full */
    SLC_CACHE_RACED,            /* a table's generation moved since begin */
    SLC_CACHE_GONE,             /* the store was superseded (too old) or
                                   already ended */
    SLC_CACHE_NREFUSALS
} slc_cache_refusal_e;

typedef struct {
    size_t     max_entry_size;  /* result bytes (and key bytes) */
    uint64_t   wait_ms;         /* a pending store or a granted refresh
                                   older than this no longer holds others */
    uint32_t   npins;           /* references at once, all processes */
} slc_cache_params_t;

typedef struct {
    uint64_t   lookups;
    uint64_t   hits;
    uint64_t   misses;
    uint64_t   pending;         /* lookups told to wait */
    uint64_t   refreshes;       /* lookups that got HIT_REFRESH */
    uint64_t   stores;          /* commits */
    uint64_t   refused[SLC_CACHE_NREFUSALS];
    uint64_t   aborts;
    uint64_t   evictions;
    uint64_t   expired;         /* dropped at lookup: past ttl */
    uint64_t   stale;           /* dropped at lookup: a table written */
    uint64_t   invalidations;   /* generation bumps */
    uint64_t   entries;         /* complete entries in the index */
    uint64_t   bytes;           /* their key and result bytes */
} slc_cache_stats_t;

typedef struct slc_cache_s        slc_cache_t;
typedef struct slc_cache_entry_s  slc_cache_entry_t;
typedef struct slc_cache_chunk_s  slc_cache_chunk_t;

/*
 * A hit, in the caller's memory: pinned (entry), or, for a result
 * inlined in its entry, copied out under the lock (copy: this process's
 * scratch, valid until its next lookup, unless kept).
 */
typedef struct {
    slc_cache_t        *cache;
    slc_cache_entry_t  *entry;      /* pinned; NULL: nothing held */
    slc_cache_chunk_t  *copy;       /* or the bytes, copied */
    uint32_t            pin;
    uint8_t             owned;      /* copy is malloc'ed (kept) */
    size_t              size;       /* result bytes */
    uint8_t             meta[SLC_CACHE_META];   /* store_meta's */
} slc_cache_hit_t;

/* Reads a hit's bytes in order; needs no lock while the hit is held. */
typedef struct {
    const slc_cache_chunk_t  *chunk;
    uint32_t                  off;
} slc_cache_cursor_t;

/* An entry being stored, in the caller's memory. */
typedef struct {
    slc_cache_t        *cache;
    slc_cache_entry_t  *entry;      /* NULL: ended (refused, aborted) */
    uint32_t            pin;
} slc_cache_store_t;

/*
 * Lay a fresh cache over `pool` (a zone's init hook, before fork) and
 * hang it off pool->data; NULL if the pool cannot hold its tables.
 */
slc_cache_t *slc_cache_init(slc_slab_pool_t *pool,
    const slc_cache_params_t *conf, uint64_t now);
/* The cache of a zone carried over by a reload; NULL if there is none. */
slc_cache_t *slc_cache_get(slc_slab_pool_t *pool);
/* A pointer the caller keeps in the cache (the filter's counters, also
   carried over by a reload), and the pool it may allocate them from. */
void           **slc_cache_user(slc_cache_t *cache);
slc_slab_pool_t *slc_cache_pool(slc_cache_t *cache);
/* New max_entry_size and wait_ms (a reload's attach; npins stays). */
void slc_cache_tune(slc_cache_t *cache, const slc_cache_params_t *conf);

/* The hash lookups and stores take with a key (its low bits pick the
   bucket). */
uint64_t slc_cache_key_hash(const void *key, size_t len);

/*
 * Look a key up.  HIT fills `hit`, pinned or (an inlined entry) copied
 * into this process's scratch, which its next lookup overwrites unless
 * the hit is kept (slc_cache_hit_keep); release it when done either way.
 * The others leave it empty.  An expired or stale entry is unlinked and
 * counts as a MISS.
 */
slc_cache_result_e slc_cache_lookup(slc_cache_t *cache, const void *key,
    size_t klen, uint64_t hash, uint64_t now, slc_cache_hit_t *hit);
/* Drop a hit's reference or its kept copy (an empty hit is ignored). */
void slc_cache_release(slc_cache_hit_t *hit);
/* Make a copied hit outlive this process's next lookup (before reading it
   across an event); SLC_ERROR without memory (the hit is then released).
   A pinned hit needs nothing. */
int slc_cache_hit_keep(slc_cache_hit_t *hit);

/* A hit of no cache's: an owned copy of result bytes from elsewhere (a
   remote tier) and their meta (SLC_CACHE_META bytes), served as any
   other; SLC_ERROR without memory (the hit is empty). */
int slc_cache_hit_make(slc_cache_hit_t *hit, const void *data, size_t len,
    const uint8_t *meta);

void   slc_cache_cursor_init(slc_cache_cursor_t *cur,
    const slc_cache_hit_t *hit);
/* The next span of at most `max` bytes at *p; 0 at the end. */
size_t slc_cache_cursor_next(slc_cache_cursor_t *cur, const uint8_t **p,
    size_t max);

/*
 * Start storing a key that reads `tables` (table keys, "db.table").
 * SLC_CACHE_OK fills `st` and makes the key PENDING for others; a
 * refusal leaves `st` ended.  A PENDING store of the key older than
 * wait_ms is superseded (its storer's next call gets SLC_CACHE_GONE).
 */
slc_cache_refusal_e slc_cache_store_begin(slc_cache_t *cache,
    slc_cache_store_t *st, const void *key, size_t klen, uint64_t hash,
    const slc_str_t *tables, unsigned ntables, uint64_t ttl_ms,
    uint64_t soft_ms, uint64_t now);
/*
 * Add result bytes.  A refusal aborts the store (nothing of it stays);
 * later calls on `st` return SLC_CACHE_GONE.
 */
slc_cache_refusal_e slc_cache_store_append(slc_cache_store_t *st,
    const void *data, size_t len);
/* The caller's bytes about the entry (the cache filter: where the status
   flags are), at most SLC_CACHE_META, given back with each hit; the
   private entry takes them without the lock. */
void slc_cache_store_meta(slc_cache_store_t *st, const void *meta,
    size_t len);
/* The bytes appended so far, read in order (the store is private to its
   caller until the commit: no lock), and how many there are. */
void   slc_cache_store_cursor(const slc_cache_store_t *st,
    slc_cache_cursor_t *cur);
size_t slc_cache_store_size(const slc_cache_store_t *st);
/* The entry expires ttl_ms after its begin instead (soft_ms: 0, none). */
void   slc_cache_store_ttl(slc_cache_store_t *st, uint64_t ttl_ms,
    uint64_t soft_ms);
/* Make the entry visible (replacing the key's older one), or refuse. */
slc_cache_refusal_e slc_cache_store_commit(slc_cache_store_t *st);
/* Drop a store; the key is no longer PENDING.  An ended store is ignored. */
void slc_cache_store_abort(slc_cache_store_t *st);

/*
 * A write to `table` ("db.table"), seen accepted at `now`: entries that
 * read it become stale.  The time is kept per generation slot for
 * slc_cache_store_synced.
 */
void slc_cache_invalidate(slc_cache_t *cache, const char *table,
    size_t len, uint64_t now);
/* The same by the table's hash (slc_cache_table_hash), for a write whose
   invalidation waits for its transaction's end. */
uint32_t slc_cache_table_hash(const char *table, size_t len);
void slc_cache_invalidate_hash(slc_cache_t *cache, uint32_t hash,
    uint64_t now);
/* A write whose tables are not known (a CALL, a statement the classifier
   cannot place): every entry becomes stale. */
void slc_cache_invalidate_all(slc_cache_t *cache, uint64_t now);
/*
 * Whether every write the store's tables saw (and every write to all
 * tables, the zone's creation included) was accepted before `at`: a
 * replica known to hold the primary's commits of `at` answered with them
 * all.  0 for an ended store.
 */
int slc_cache_store_synced(const slc_cache_store_t *st, uint64_t at);
/* Give back the references process `pid` held (it is dead). */
unsigned slc_cache_reap(slc_cache_t *cache, pid_t pid);

void slc_cache_stats(slc_cache_t *cache, slc_cache_stats_t *st);
const char *slc_cache_refusal_name(slc_cache_refusal_e r);

#endif /* SLC_CACHE_STORE_H */
