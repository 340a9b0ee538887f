/*
 * The query cache's store (modules/cache/slc_cache_store.c, compiled into
 * this test) on a slab pool over a plain shared mapping: full-key
 * compare, TTL and soft TTL, single flight, invalidation by table, LRU
 * eviction under a small pool, pins outliving eviction, reaping a dead
 * process's pins, refused and aborted stores leaving nothing, no leak,
 * and a fuzz loop checking the counters against a walk of the index.
 */

#include <signal.h>

#include "slc_test.h"
#include <sys/mman.h>
#include <sys/wait.h>

#include "../../modules/cache/slc_cache_store.c"

#define SLC_TEST_BIG    (4 * 1024 * 1024)
#define SLC_TEST_SMALL  (256 * 1024)
#define SLC_TEST_WAIT   100

static void              *slc_test_area;
static size_t             slc_test_size;
static slc_slab_pool_t   *slc_test_pool;
static slc_cache_t       *slc_test_cache;
static slc_slab_stats_t   slc_test_base;    /* just after init */

static slc_cache_t *
slc_test_setup(size_t size, size_t max_entry)
{
    slc_cache_params_t conf = {
        .max_entry_size = max_entry, .wait_ms = SLC_TEST_WAIT, .npins = 64,
    };

    slc_pid = getpid();
    slc_test_size = size;
    slc_test_area = mmap(NULL, size, PROT_READ | PROT_WRITE,
        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(slc_test_area, MAP_FAILED);
    slc_test_pool = slc_test_area;
    ck_assert_int_eq(slc_slab_init(slc_test_pool, size), SLC_OK);
    slc_test_cache = slc_cache_init(slc_test_pool, &conf, 0);
    ck_assert_ptr_nonnull(slc_test_cache);
    ck_assert_ptr_eq(slc_cache_get(slc_test_pool), slc_test_cache);
    slc_slab_stats(slc_test_pool, &slc_test_base);
    return slc_test_cache;
}

/*
 * Empty the cache (what a pin still holds stays) and check the slab is
 * back where it was after init: nothing leaked.
 */
static void
slc_test_teardown_check(void)
{
    slc_slab_stats_t st;

    slc_shmtx_lock(&slc_test_pool->mutex);
    while (slc_cache_evict_one_locked(slc_test_cache)) {
        /* all of it */
    }
    slc_shmtx_unlock(&slc_test_pool->mutex);
    slc_slab_stats(slc_test_pool, &st);
    ck_assert_uint_eq(st.pages_free, slc_test_base.pages_free);
    ck_assert_uint_eq(st.pages_large, slc_test_base.pages_large);
    for (unsigned c = 0; c < SLC_SLAB_NCLASSES; c++) {
        ck_assert_msg(st.classes[c].used == slc_test_base.classes[c].used,
            "class %u: %zu used, %zu at start", c, st.classes[c].used,
            slc_test_base.classes[c].used);
    }
    ck_assert_int_eq(slc_shmtx_holder(&slc_test_pool->mutex), 0);
    munmap(slc_test_area, slc_test_size);
}

static uint64_t
slc_test_hash(const char *key)
{
    uint64_t h = 14695981039346656037u;

    for (; *key != '\0'; key++) {
        h = (h ^ (unsigned char) *key) * 1099511628211u;
    }
    return h;
}

static slc_cache_result_e
slc_test_lookup(const char *key, uint64_t hash, uint64_t now,
    slc_cache_hit_t *hit)
{
    return slc_cache_lookup(slc_test_cache, key, strlen(key), hash, now, hit);
}

/* A hit's bytes, read through the cursor in spans of at most `step`. */
static size_t
slc_test_read(const slc_cache_hit_t *hit, uint8_t *buf, size_t cap,
    size_t step)
{
    slc_cache_cursor_t cur;
    const uint8_t     *p;
    size_t             n, total = 0;

    slc_cache_cursor_init(&cur, hit);
    while ((n = slc_cache_cursor_next(&cur, &p, step)) != 0) {
        ck_assert_uint_le(total + n, cap);
        memcpy(buf + total, p, n);
        total += n;
    }
    ck_assert_uint_eq(total, hit->size);
    return total;
}

static slc_cache_refusal_e
slc_test_store_tables(const char *key, uint64_t hash, const char *data,
    const slc_str_t *tables, unsigned ntables, uint64_t ttl, uint64_t soft,
    uint64_t now)
{
    slc_cache_store_t   st;
    slc_cache_refusal_e r;

    r = slc_cache_store_begin(slc_test_cache, &st, key, strlen(key), hash,
        tables, ntables, ttl, soft, now);
    if (r != SLC_CACHE_OK) {
        return r;
    }
    r = slc_cache_store_append(&st, data, strlen(data));
    return r != SLC_CACHE_OK ? r : slc_cache_store_commit(&st);
}

static slc_cache_refusal_e
slc_test_store(const char *key, uint64_t hash, const char *data,
    uint64_t now)
{
    return slc_test_store_tables(key, hash, data, NULL, 0, 10000, 0, now);
}

/* HIT with exactly `want`, released. */
static void
slc_test_expect(const char *key, uint64_t hash, uint64_t now,
    const char *want)
{
    slc_cache_hit_t hit;
    uint8_t         buf[8192];
    size_t          n;

    ck_assert_int_eq(slc_test_lookup(key, hash, now, &hit), SLC_CACHE_HIT);
    n = slc_test_read(&hit, buf, sizeof(buf), 7);
    ck_assert_uint_eq(n, strlen(want));
    ck_assert(memcmp(buf, want, n) == 0);
    slc_cache_release(&hit);
}

static void
slc_test_expect_miss(const char *key, uint64_t hash, uint64_t now)
{
    slc_cache_hit_t hit;

    ck_assert_int_eq(slc_test_lookup(key, hash, now, &hit), SLC_CACHE_MISS);
    ck_assert_ptr_null(hit.entry);
}

/*
 * The counters against the structure: complete entries in the index and
 * their bytes, the same entries in the LRU both ways, no DEAD entry left
 * in a chain.
 */
/* Its chunks hold exactly its bytes; an inlined one is a single chunk
   inside the entry's own block. */
static void
slc_test_check_chunks(const slc_cache_entry_t *e)
{
    size_t n = 0;

    for (const slc_cache_chunk_t *ch = e->first; ch != NULL; ch = ch->next) {
        ck_assert_uint_le(ch->len, ch->cap);
        n += ch->len;
    }
    ck_assert_uint_eq(n, e->size);
    if (e->inlined) {
        ck_assert_ptr_nonnull(e->first);
        ck_assert_ptr_null(e->first->next);
        ck_assert_ptr_eq(e->first, e->last);
        ck_assert((const uint8_t *) e->first
                  >= slc_cache_ekey(e) + e->klen);
        ck_assert((const uint8_t *) e->first->data + e->size
                  <= (const uint8_t *) e + SLC_CACHE_INLINE_MAX);
    }
}

static void
slc_test_invariants(void)
{
    slc_cache_t       *c = slc_test_cache;
    slc_cache_stats_t  st;
    uint64_t           entries = 0, bytes = 0, lru = 0;

    slc_shmtx_lock(&c->pool->mutex);
    for (uint32_t b = 0; b < c->nbuckets; b++) {
        for (slc_cache_entry_t *e = c->buckets[b]; e != NULL; e = e->hnext) {
            ck_assert_uint_eq(e->magic, SLC_CACHE_ENTRY_MAGIC);
            ck_assert_uint_eq(e->hash & (c->nbuckets - 1), b);
            ck_assert_int_ne(e->state, SLC_CACHE_DEAD_E);
            if (e->state == SLC_CACHE_COMPLETE_E) {
                entries++;
                bytes += e->klen + e->size;
                slc_test_check_chunks(e);
            }
        }
    }
    slc_cache_entry_t *prev = NULL;

    for (slc_cache_entry_t *e = c->lru_head; e != NULL; e = e->lnext) {
        ck_assert_int_eq(e->state, SLC_CACHE_COMPLETE_E);
        ck_assert_ptr_eq(e->lprev, prev);
        prev = e;
        lru++;
    }
    ck_assert_ptr_eq(c->lru_tail, prev);
    slc_shmtx_unlock(&c->pool->mutex);
    slc_cache_stats(c, &st);
    ck_assert_uint_eq(st.entries, entries);
    ck_assert_uint_eq(st.bytes, bytes);
    ck_assert_uint_eq(lru, entries);
}

/* Two keys on one hash, and two hashes on one bucket, never mixed up. */
START_TEST(test_full_key)
{
    slc_cache_stats_t st;
    uint64_t          nb;

    slc_test_setup(SLC_TEST_BIG, 1 << 20);
    nb = slc_test_cache->nbuckets;
    ck_assert_int_eq(slc_test_store("alpha", 7, "A", 0), SLC_CACHE_OK);
    slc_test_expect_miss("bravo", 7, 1);        /* same hash, other key */
    slc_test_expect_miss("alph", 7, 1);         /* a prefix */
    slc_test_expect_miss("alphaa", 7, 1);
    slc_test_expect_miss("alpha", 7 + nb, 1);   /* same bucket, other hash */
    ck_assert_int_eq(slc_test_store("bravo", 7, "B", 2), SLC_CACHE_OK);
    ck_assert_int_eq(slc_test_store("alpha", 7 + nb, "C", 2), SLC_CACHE_OK);
    slc_test_expect("alpha", 7, 3, "A");
    slc_test_expect("bravo", 7, 3, "B");
    slc_test_expect("alpha", 7 + nb, 3, "C");
    /* a second store of a key replaces the first */
    ck_assert_int_eq(slc_test_store("bravo", 7, "B2", 4), SLC_CACHE_OK);
    slc_test_expect("bravo", 7, 5, "B2");
    slc_test_invariants();
    slc_cache_stats(slc_test_cache, &st);
    ck_assert_uint_eq(st.entries, 3);
    ck_assert_uint_eq(st.hits, 4);
    ck_assert_uint_eq(st.misses, 4);
    ck_assert_uint_eq(st.stores, 4);
    slc_test_teardown_check();
}
END_TEST

START_TEST(test_ttl)
{
    slc_cache_stats_t st;
    uint64_t          h = slc_test_hash("q");

    slc_test_setup(SLC_TEST_BIG, 1 << 20);
    ck_assert_int_eq(slc_test_store_tables("q", h, "row", NULL, 0, 100, 0,
        1000), SLC_CACHE_OK);
    slc_test_expect("q", h, 1099, "row");
    slc_test_expect_miss("q", h, 1100);
    slc_test_expect_miss("q", h, 1099);         /* gone, not hidden */
    slc_cache_stats(slc_test_cache, &st);
    ck_assert_uint_eq(st.expired, 1);
    ck_assert_uint_eq(st.entries, 0);
    slc_test_invariants();
    slc_test_teardown_check();
}
END_TEST

/* Past the soft TTL one caller refreshes, the others are served. */
START_TEST(test_soft_ttl)
{
    slc_cache_hit_t    hit;
    slc_cache_store_t  st;
    uint64_t           h = slc_test_hash("q");

    slc_test_setup(SLC_TEST_BIG, 1 << 20);
    ck_assert_int_eq(slc_test_store_tables("q", h, "old", NULL, 0, 10000,
        100, 0), SLC_CACHE_OK);
    slc_test_expect("q", h, 99, "old");
    ck_assert_int_eq(slc_test_lookup("q", h, 150, &hit),
        SLC_CACHE_HIT_REFRESH);
    ck_assert_ptr_null(hit.entry);
    slc_test_expect("q", h, 151, "old");        /* others served */
    slc_test_expect("q", h, 152, "old");
    /* the refresher stores: others still served while it is pending */
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &st, "q", 1, h,
        NULL, 0, 10000, 100, 160), SLC_CACHE_OK);
    slc_test_expect("q", h, 170, "old");
    /* it gives up: the next caller gets the refresh */
    slc_cache_store_abort(&st);
    ck_assert_int_eq(slc_test_lookup("q", h, 171, &hit),
        SLC_CACHE_HIT_REFRESH);
    slc_test_expect("q", h, 172, "old");
    /* that one says nothing: after wait_ms another one gets it */
    slc_test_expect("q", h, 171 + SLC_TEST_WAIT - 1, "old");
    ck_assert_int_eq(slc_test_lookup("q", h, 171 + SLC_TEST_WAIT, &hit),
        SLC_CACHE_HIT_REFRESH);
    ck_assert_int_eq(slc_test_store_tables("q", h, "new", NULL, 0, 10000,
        100, 280), SLC_CACHE_OK);
    slc_test_expect("q", h, 281, "new");
    slc_test_invariants();
    slc_test_teardown_check();
}
END_TEST

START_TEST(test_single_flight)
{
    slc_cache_hit_t    hit;
    slc_cache_store_t  a, b, c;
    slc_cache_stats_t  s;
    uint64_t           h = slc_test_hash("q");
    char               big[3000];

    slc_test_setup(SLC_TEST_BIG, 1 << 20);
    memset(big, 'x', sizeof(big));
    slc_test_expect_miss("q", h, 0);
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &a, "q", 1, h,
        NULL, 0, 10000, 0, 0), SLC_CACHE_OK);
    ck_assert_int_eq(slc_cache_store_append(&a, "part", 4), SLC_CACHE_OK);
    ck_assert_int_eq(slc_test_lookup("q", h, 10, &hit), SLC_CACHE_PENDING);
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &b, "q", 1, h,
        NULL, 0, 10000, 0, SLC_TEST_WAIT - 1), SLC_CACHE_BUSY);
    /* an old pending store no longer holds others */
    slc_test_expect_miss("q", h, SLC_TEST_WAIT);
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &b, "q", 1, h,
        NULL, 0, 10000, 0, SLC_TEST_WAIT), SLC_CACHE_OK);
    /* the superseded store learns it at its next chunk or its commit */
    ck_assert_int_eq(slc_cache_store_append(&a, big, sizeof(big)),
        SLC_CACHE_GONE);
    ck_assert_ptr_null(a.entry);
    ck_assert_int_eq(slc_cache_store_commit(&a), SLC_CACHE_GONE);
    ck_assert_int_eq(slc_cache_store_append(&b, "fresh", 5), SLC_CACHE_OK);
    ck_assert_int_eq(slc_cache_store_commit(&b), SLC_CACHE_OK);
    slc_test_expect("q", h, SLC_TEST_WAIT + 1, "fresh");
    /* an aborted store does not hold the key */
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &c, "r", 1, 5,
        NULL, 0, 10000, 0, 200), SLC_CACHE_OK);
    ck_assert_int_eq(slc_test_lookup("r", 5, 201, &hit), SLC_CACHE_PENDING);
    slc_cache_store_abort(&c);
    slc_test_expect_miss("r", 5, 202);
    ck_assert_int_eq(slc_test_store("r", 5, "R", 203), SLC_CACHE_OK);
    slc_test_expect("r", 5, 204, "R");
    slc_cache_stats(slc_test_cache, &s);
    ck_assert_uint_eq(s.pending, 2);
    ck_assert_uint_eq(s.refused[SLC_CACHE_BUSY], 1);
    ck_assert_uint_eq(s.refused[SLC_CACHE_GONE], 1);
    slc_test_invariants();
    slc_test_teardown_check();
}
END_TEST

START_TEST(test_invalidate)
{
    slc_str_t          t12[] = { slc_string("db.t1"), slc_string("db.t2") };
    slc_str_t          t1[] = { slc_string("db.t1") };
    slc_cache_store_t  st;
    slc_cache_stats_t  s;
    uint64_t           h = slc_test_hash("q");

    slc_test_setup(SLC_TEST_BIG, 1 << 20);
    /* the three tables on three slots, or the test proves nothing */
    ck_assert_uint_ne(slc_hash_key("db.t3", 5) & (SLC_CACHE_GENS - 1),
        slc_hash_key("db.t1", 5) & (SLC_CACHE_GENS - 1));
    ck_assert_uint_ne(slc_hash_key("db.t3", 5) & (SLC_CACHE_GENS - 1),
        slc_hash_key("db.t2", 5) & (SLC_CACHE_GENS - 1));
    ck_assert_int_eq(slc_test_store_tables("q", h, "v1", t12, 2, 10000, 0,
        0), SLC_CACHE_OK);
    slc_cache_invalidate(slc_test_cache, "db.t3", 5, 1);
    slc_test_expect("q", h, 1, "v1");
    slc_cache_invalidate(slc_test_cache, "db.t2", 5, 1);
    slc_test_expect_miss("q", h, 2);

    /* a write while the read is out: the commit is refused */
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &st, "q", 1, h,
        t1, 1, 10000, 0, 3), SLC_CACHE_OK);
    ck_assert_int_eq(slc_cache_store_append(&st, "v2", 2), SLC_CACHE_OK);
    slc_cache_invalidate(slc_test_cache, "db.t1", 5, 3);
    ck_assert_int_eq(slc_cache_store_commit(&st), SLC_CACHE_RACED);
    slc_test_expect_miss("q", h, 4);
    /* and the key is free for the next try */
    ck_assert_int_eq(slc_test_store_tables("q", h, "v3", t1, 1, 10000, 0,
        5), SLC_CACHE_OK);
    slc_test_expect("q", h, 6, "v3");

    /* a write whose tables are unknown: everything, with no tables too */
    ck_assert_int_eq(slc_test_store_tables("n", slc_test_hash("n"), "v4",
        NULL, 0, 10000, 0, 7), SLC_CACHE_OK);
    slc_test_expect("n", slc_test_hash("n"), 8, "v4");
    slc_cache_invalidate_all(slc_test_cache, 9);
    slc_test_expect_miss("q", h, 9);
    slc_test_expect_miss("n", slc_test_hash("n"), 10);
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &st, "q", 1, h,
        t1, 1, 10000, 0, 11), SLC_CACHE_OK);
    ck_assert_int_eq(slc_cache_store_append(&st, "v5", 2), SLC_CACHE_OK);
    slc_cache_invalidate_all(slc_test_cache, 9);
    ck_assert_int_eq(slc_cache_store_commit(&st), SLC_CACHE_RACED);

    slc_cache_stats(slc_test_cache, &s);
    ck_assert_uint_eq(s.stale, 3);
    ck_assert_uint_eq(s.invalidations, 5);
    ck_assert_uint_eq(s.refused[SLC_CACHE_RACED], 2);
    slc_test_invariants();
    slc_test_teardown_check();
}
END_TEST

/* A replica's answer: kept only if every write its tables saw (and every
   write to all tables) came before what the replica is known to hold. */
START_TEST(test_synced)
{
    slc_str_t          t1[] = { slc_string("db.t1") };
    slc_str_t          t2[] = { slc_string("db.t2") };
    slc_cache_store_t  st;
    uint64_t           h = slc_test_hash("q");

    slc_test_setup(SLC_TEST_BIG, 1 << 20);
    ck_assert_uint_ne(slc_hash_key("db.t1", 5) & (SLC_CACHE_GENS - 1),
        slc_hash_key("db.t2", 5) & (SLC_CACHE_GENS - 1));
    /* the zone was made at 0: writes before it count as at 1 */
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &st, "q", 1, h,
        t1, 1, 10000, 0, 5), SLC_CACHE_OK);
    ck_assert(!slc_cache_store_synced(&st, 0));
    ck_assert(slc_cache_store_synced(&st, 1));
    slc_cache_store_abort(&st);
    ck_assert(!slc_cache_store_synced(&st, 1000));     /* ended */

    slc_cache_invalidate(slc_test_cache, "db.t1", 5, 100);
    slc_cache_invalidate(slc_test_cache, "db.t2", 5, 300);
    /* an older time from a worker whose loop is behind: the max stays */
    slc_cache_invalidate(slc_test_cache, "db.t1", 5, 50);
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &st, "q", 1, h,
        t1, 1, 10000, 0, 400), SLC_CACHE_OK);
    ck_assert(!slc_cache_store_synced(&st, 100));  /* committed before 101 */
    ck_assert(slc_cache_store_synced(&st, 101));
    ck_assert(slc_cache_store_synced(&st, 250));   /* t2 is not its table */
    slc_cache_store_abort(&st);
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &st, "q", 1, h,
        t2, 1, 10000, 0, 400), SLC_CACHE_OK);
    ck_assert(!slc_cache_store_synced(&st, 250));
    ck_assert(slc_cache_store_synced(&st, 301));
    slc_cache_store_abort(&st);

    /* a write to all tables holds back every table */
    slc_cache_invalidate_all(slc_test_cache, 500);
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &st, "q", 1, h,
        t1, 1, 10000, 0, 600), SLC_CACHE_OK);
    ck_assert(!slc_cache_store_synced(&st, 400));
    ck_assert(slc_cache_store_synced(&st, 501));
    slc_cache_store_abort(&st);
    slc_test_invariants();
    slc_test_teardown_check();
}
END_TEST

static void
slc_test_key(char *key, size_t size, unsigned i)
{
    snprintf(key, size, "SELECT * FROM t WHERE id = %u", i);
}

/* A small pool, many entries: LRU eviction makes room, within the zone. */
START_TEST(test_lru_eviction)
{
    slc_cache_stats_t s;
    slc_slab_stats_t  ss;
    char              key[64], data[1001];
    unsigned          i, n = 1000;

    slc_test_setup(SLC_TEST_SMALL, 1 << 20);
    memset(data, 'd', sizeof(data) - 1);
    data[sizeof(data) - 1] = '\0';
    for (i = 0; i < n; i++) {
        slc_test_key(key, sizeof(key), i);
        ck_assert_int_eq(slc_test_store(key, slc_test_hash(key), data, i),
            SLC_CACHE_OK);
        /* key 0 stays in use */
        slc_test_key(key, sizeof(key), 0);
        slc_test_expect(key, slc_test_hash(key), i, data);
        slc_slab_stats(slc_test_pool, &ss);
        ck_assert_uint_eq(ss.pages_total, slc_test_base.pages_total);
    }
    slc_cache_stats(slc_test_cache, &s);
    ck_assert_uint_gt(s.evictions, 0);
    ck_assert_uint_eq(s.stores, n);
    ck_assert_uint_eq(s.entries + s.evictions, n);
    /* the zone could not hold them all */
    ck_assert_uint_lt(s.entries, SLC_TEST_SMALL / sizeof(data));
    ck_assert_uint_gt(ss.fails, 0);
    /* the most recently used survive, the oldest untouched are gone */
    for (i = n - 5; i < n; i++) {
        slc_test_key(key, sizeof(key), i);
        slc_test_expect(key, slc_test_hash(key), n, data);
    }
    slc_test_key(key, sizeof(key), 0);
    slc_test_expect(key, slc_test_hash(key), n, data);
    slc_test_key(key, sizeof(key), 1);
    slc_test_expect_miss(key, slc_test_hash(key), n);
    slc_test_invariants();
    slc_test_teardown_check();
}
END_TEST

/*
 * Second chance: a hit only marks its entry; eviction moves marked tail
 * entries to the head (unmarked) and takes the first unmarked one, but
 * never more than SLC_CACHE_SECOND_CHANCES moves for one eviction.
 */
START_TEST(test_second_chance)
{
    char      key[64];
    unsigned  i;

    slc_test_setup(SLC_TEST_BIG, 1 << 20);
    for (i = 0; i < 200; i++) {
        slc_test_key(key, sizeof(key), i);
        ck_assert_int_eq(slc_test_store(key, slc_test_hash(key), "row", 0),
            SLC_CACHE_OK);
    }
    for (i = 0; i < 10; i++) {                      /* the 10 oldest */
        slc_test_key(key, sizeof(key), i);
        slc_test_expect(key, slc_test_hash(key), 1, "row");
    }
    slc_shmtx_lock(&slc_test_pool->mutex);
    ck_assert_int_eq(slc_cache_evict_one_locked(slc_test_cache), 1);
    slc_shmtx_unlock(&slc_test_pool->mutex);
    slc_test_key(key, sizeof(key), 10);             /* first unmarked */
    slc_test_expect_miss(key, slc_test_hash(key), 2);
    for (i = 0; i < 10; i++) {                      /* moved, not gone */
        slc_test_key(key, sizeof(key), i);
        slc_test_expect(key, slc_test_hash(key), 2, "row");
    }
    slc_test_invariants();

    /* every entry marked: the bound, then the tail goes */
    for (i = 11; i < 200; i++) {
        slc_test_key(key, sizeof(key), i);
        slc_test_expect(key, slc_test_hash(key), 3, "row");
    }
    slc_shmtx_lock(&slc_test_pool->mutex);
    ck_assert_int_eq(slc_cache_evict_one_locked(slc_test_cache), 1);
    slc_shmtx_unlock(&slc_test_pool->mutex);
    slc_test_key(key, sizeof(key), 11 + SLC_CACHE_SECOND_CHANCES);
    slc_test_expect_miss(key, slc_test_hash(key), 4);
    slc_test_key(key, sizeof(key), 11);
    slc_test_expect(key, slc_test_hash(key), 4, "row");
    slc_test_invariants();
    slc_test_teardown_check();
}
END_TEST

/* Evicted while pinned: readable until released, then freed. */
START_TEST(test_pinned_evicted)
{
    slc_cache_hit_t   hit;
    slc_cache_stats_t s;
    slc_slab_stats_t  before, after;
    uint8_t           buf[8192];
    char              key[64], data[3001], filler[1001];

    slc_test_setup(SLC_TEST_SMALL, 1 << 20);
    for (size_t i = 0; i < sizeof(data) - 1; i++) {
        data[i] = (char) ('a' + i % 26);
    }
    data[sizeof(data) - 1] = '\0';
    memset(filler, 'f', sizeof(filler) - 1);
    filler[sizeof(filler) - 1] = '\0';
    ck_assert_int_eq(slc_test_store("pinned", 1, data, 0), SLC_CACHE_OK);
    ck_assert_int_eq(slc_test_lookup("pinned", 1, 1, &hit), SLC_CACHE_HIT);
    for (unsigned i = 0; i < 1000; i++) {
        slc_test_key(key, sizeof(key), i);
        ck_assert_int_eq(slc_test_store(key, slc_test_hash(key), filler, 2),
            SLC_CACHE_OK);
    }
    slc_test_expect_miss("pinned", 1, 3);       /* out of the index */
    ck_assert_uint_eq(slc_test_read(&hit, buf, sizeof(buf), 100),
        strlen(data));
    ck_assert(memcmp(buf, data, strlen(data)) == 0);
    slc_cache_stats(slc_test_cache, &s);
    ck_assert_uint_gt(s.evictions, 0);
    slc_slab_stats(slc_test_pool, &before);
    slc_cache_release(&hit);
    slc_slab_stats(slc_test_pool, &after);
    /* its chunks and header went back at the release */
    ck_assert_uint_lt(after.classes[SLC_SLAB_NCLASSES - 1].used,
        before.classes[SLC_SLAB_NCLASSES - 1].used);
    slc_test_invariants();
    slc_test_teardown_check();
}
END_TEST

/*
 * A small result streamed in many appends (so over several chunks) is
 * committed as one block, entry, key and bytes together, and a hit of it
 * is a copy made under the lock (no pin); a large one keeps its chunks
 * and is pinned.  Both read back intact.  A copy is this process's
 * scratch until kept: a kept one outlives later lookups and the entry's
 * eviction, and goes at its release.
 */
START_TEST(test_inline)
{
    slc_cache_store_t  st;
    slc_cache_hit_t    hit, hit2;
    slc_cache_stats_t  cs;
    uint8_t            buf[8192];
    char               small[601], other[601], big[3001], key[64];
    char               filler[1001];
    size_t             n;

    slc_test_setup(SLC_TEST_SMALL, 1 << 20);
    for (size_t i = 0; i < sizeof(big) - 1; i++) {
        big[i] = (char) ('a' + i % 26);
    }
    big[sizeof(big) - 1] = '\0';
    memcpy(small, big + 7, sizeof(small) - 1);
    small[sizeof(small) - 1] = '\0';
    memset(other, 'o', sizeof(other) - 1);
    other[sizeof(other) - 1] = '\0';
    memset(filler, 'f', sizeof(filler) - 1);
    filler[sizeof(filler) - 1] = '\0';

    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &st, "small", 5,
        slc_test_hash("small"), NULL, 0, 10000, 0, 0), SLC_CACHE_OK);
    for (n = 0; n < strlen(small); n += 9) {        /* 67 appends */
        ck_assert_int_eq(slc_cache_store_append(&st, small + n,
            slc_min((size_t) 9, strlen(small) - n)), SLC_CACHE_OK);
    }
    ck_assert_ptr_nonnull(st.entry->first->next);   /* several chunks */
    ck_assert_int_eq(slc_cache_store_commit(&st), SLC_CACHE_OK);
    ck_assert_int_eq(slc_test_store("other", slc_test_hash("other"), other,
        0), SLC_CACHE_OK);
    ck_assert_int_eq(slc_test_store("big", slc_test_hash("big"), big, 0),
        SLC_CACHE_OK);
    slc_test_invariants();

    ck_assert_int_eq(slc_test_lookup("small", slc_test_hash("small"), 1,
        &hit), SLC_CACHE_HIT);
    ck_assert_ptr_null(hit.entry);                  /* copied, not pinned */
    ck_assert_ptr_nonnull(hit.copy);
    ck_assert_uint_eq(slc_test_read(&hit, buf, sizeof(buf), 5),
        strlen(small));
    ck_assert(memcmp(buf, small, strlen(small)) == 0);
    slc_cache_release(&hit);
    ck_assert_int_eq(slc_test_lookup("big", slc_test_hash("big"), 1, &hit),
        SLC_CACHE_HIT);
    ck_assert_ptr_nonnull(hit.entry);               /* pinned, chunks */
    ck_assert_uint_eq(hit.entry->inlined, 0);
    ck_assert_ptr_null(hit.copy);
    slc_cache_release(&hit);
    slc_test_expect("big", slc_test_hash("big"), 1, big);

    /* kept: another lookup's copy and the entry's eviction leave it */
    ck_assert_int_eq(slc_test_lookup("small", slc_test_hash("small"), 1,
        &hit), SLC_CACHE_HIT);
    ck_assert_int_eq(slc_cache_hit_keep(&hit), SLC_OK);
    ck_assert_int_eq(slc_test_lookup("other", slc_test_hash("other"), 1,
        &hit2), SLC_CACHE_HIT);
    ck_assert_uint_eq(slc_test_read(&hit2, buf, sizeof(buf), 100),
        strlen(other));
    ck_assert(memcmp(buf, other, strlen(other)) == 0);
    slc_cache_release(&hit2);
    for (unsigned i = 0; i < 1000; i++) {
        slc_test_key(key, sizeof(key), i);
        ck_assert_int_eq(slc_test_store(key, slc_test_hash(key), filler, 2),
            SLC_CACHE_OK);
    }
    slc_test_expect_miss("small", slc_test_hash("small"), 3);
    slc_cache_stats(slc_test_cache, &cs);
    ck_assert_uint_gt(cs.evictions, 0);
    ck_assert_uint_eq(slc_test_read(&hit, buf, sizeof(buf), 100),
        strlen(small));
    ck_assert(memcmp(buf, small, strlen(small)) == 0);
    slc_cache_release(&hit);
    ck_assert_ptr_null(hit.copy);
    slc_test_invariants();
    slc_test_teardown_check();
}
END_TEST

/*
 * Keys that differ only in a literal near their end (point selects)
 * spread over the buckets as random ones would: 4000 keys in 65536
 * buckets, the chain a lookup walks ~1.06 long.  The hash before this
 * test put them in 750 buckets, chains of 9 (a cache miss each).
 */
START_TEST(test_key_hash_spread)
{
    static const char *const fmts[] = {
        "SELECT c FROM sbtest%u WHERE id=%u",
        "select * from t%u where k = %u and x = 1 ",
        "%u%u",
    };
    static uint16_t  count[65536];
    uint8_t          key[128];

    for (size_t f = 0; f < slc_nelems(fmts); f++) {
        uint64_t  walked = 0;
        unsigned  used = 0;

        memset(count, 0, sizeof(count));
        for (unsigned t = 1; t <= 4; t++) {
            for (unsigned i = 1; i <= 1000; i++) {
                /* a session's prefix, as the filter builds it */
                int n = snprintf((char *) key + 19, sizeof(key) - 19,
                                 fmts[f], t, i);

                memcpy(key, "\x85\xa6\xff\x19\0\0\x21\x01\0\3app\0\4test\0", 19);
                uint64_t h = slc_cache_key_hash(key, 19 + (size_t) n);

                used += count[h & 65535]++ == 0;
            }
        }
        for (size_t b = 0; b < 65536; b++) {
            walked += (uint64_t) count[b] * count[b];
        }
        ck_assert_uint_ge(used, 3800);
        ck_assert_uint_le(walked, 4000 * 12 / 10);  /* mean chain <= 1.2 */
    }
}
END_TEST

/* A process that dies holding a hit and a store: reap gives both back. */
/*
 * A worker killed inside a critical section (SIGKILL while it holds the
 * pool's lock): the master frees the lock of a dead holder
 * (slc_shmtx_force_unlock, as slc_shm_zone_unlock does) and the other
 * processes go on looking up and storing, without waiting for it.
 */
START_TEST(test_killed_holding_lock)
{
    slc_cache_hit_t hit;
    int             status;
    pid_t           pid;

    slc_test_setup(SLC_TEST_BIG, 1 << 20);
    ck_assert_int_eq(slc_test_store("k", 3, "kept", 0), SLC_CACHE_OK);
    pid = fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0) {
        slc_pid = getpid();
        slc_shmtx_lock(&slc_test_pool->mutex);
        raise(SIGKILL);                 /* dies holding it */
        _exit(1);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    ck_assert_int_eq(slc_shmtx_holder(&slc_test_pool->mutex), pid);
    ck_assert_int_eq(slc_shmtx_trylock(&slc_test_pool->mutex), 0);
    ck_assert_int_eq(slc_shmtx_force_unlock(&slc_test_pool->mutex, pid), 1);
    slc_test_expect("k", 3, 1, "kept");
    ck_assert_int_eq(slc_test_store("l", 4, "new", 2), SLC_CACHE_OK);
    ck_assert_int_eq(slc_test_lookup("l", 4, 3, &hit), SLC_CACHE_HIT);
    slc_cache_release(&hit);
    slc_test_invariants();
    slc_test_teardown_check();
}
END_TEST

START_TEST(test_reap)
{
    slc_cache_hit_t   hit;
    slc_cache_stats_t s;
    int               status;
    pid_t             pid;

    static char       old[3001];            /* not inlined: pinned */

    memset(old, 'o', sizeof(old) - 1);
    slc_test_setup(SLC_TEST_BIG, 1 << 20);
    ck_assert_int_eq(slc_test_store("a", 1, old, 0), SLC_CACHE_OK);
    pid = fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0) {
        slc_cache_store_t st;

        slc_pid = getpid();
        if (slc_test_lookup("a", 1, 1, &hit) != SLC_CACHE_HIT
            || slc_cache_store_begin(slc_test_cache, &st, "b", 1, 2, NULL,
                   0, 10000, 0, 1) != SLC_CACHE_OK
            || slc_cache_store_append(&st, "half", 4) != SLC_CACHE_OK)
        {
            _exit(1);
        }
        _exit(0);                       /* no release, no abort */
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    ck_assert_int_eq(slc_test_lookup("b", 2, 2, &hit), SLC_CACHE_PENDING);
    /* replaced while the dead pin holds it: it cannot be freed yet */
    ck_assert_int_eq(slc_test_store("a", 1, "new", 3), SLC_CACHE_OK);
    slc_test_expect("a", 1, 4, "new");
    ck_assert_uint_eq(slc_cache_reap(slc_test_cache, getpid()), 0);
    ck_assert_uint_eq(slc_cache_reap(slc_test_cache, pid), 2);
    ck_assert_uint_eq(slc_cache_reap(slc_test_cache, pid), 0);
    /* the dead store no longer holds its key */
    slc_test_expect_miss("b", 2, 5);
    ck_assert_int_eq(slc_test_store("b", 2, "B", 6), SLC_CACHE_OK);
    slc_test_expect("b", 2, 7, "B");
    slc_cache_stats(slc_test_cache, &s);
    ck_assert_uint_eq(s.entries, 2);
    slc_test_invariants();
    /* and the dead process's entry and chunks are back in the slab */
    slc_test_teardown_check();
}
END_TEST

START_TEST(test_too_big)
{
    slc_cache_store_t st;
    slc_cache_hit_t   hit;
    slc_cache_stats_t s;
    char              data[3000];
    slc_str_t         many[SLC_CACHE_TABLES + 1];

    slc_test_setup(SLC_TEST_BIG, 4096);
    memset(data, 'x', sizeof(data));
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &st, "q", 1, 1,
        NULL, 0, 10000, 0, 0), SLC_CACHE_OK);
    ck_assert_int_eq(slc_cache_store_append(&st, data, sizeof(data)),
        SLC_CACHE_OK);
    ck_assert_int_eq(slc_cache_store_append(&st, data, 1097),
        SLC_CACHE_TOOBIG);
    ck_assert_int_eq(slc_cache_store_append(&st, "x", 1), SLC_CACHE_GONE);
    ck_assert_int_eq(slc_cache_store_commit(&st), SLC_CACHE_GONE);
    slc_cache_store_abort(&st);                 /* harmless */
    ck_assert_int_eq(slc_test_lookup("q", 1, 1, &hit), SLC_CACHE_MISS);
    /* exactly the maximum fits */
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &st, "q", 1, 1,
        NULL, 0, 10000, 0, 2), SLC_CACHE_OK);
    ck_assert_int_eq(slc_cache_store_append(&st, data, sizeof(data)),
        SLC_CACHE_OK);
    ck_assert_int_eq(slc_cache_store_append(&st, data, 1096), SLC_CACHE_OK);
    ck_assert_int_eq(slc_cache_store_commit(&st), SLC_CACHE_OK);
    ck_assert_int_eq(slc_test_lookup("q", 1, 3, &hit), SLC_CACHE_HIT);
    ck_assert_uint_eq(hit.size, 4096);
    slc_cache_release(&hit);
    /* more tables than an entry remembers: not cached */
    for (unsigned i = 0; i < slc_nelems(many); i++) {
        many[i] = (slc_str_t) slc_string("db.t");
    }
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &st, "z", 1, 9,
        many, slc_nelems(many), 10000, 0, 4), SLC_CACHE_TABLES_MAX);
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &st, "z", 1, 9,
        many, SLC_CACHE_TABLES, 10000, 0, 4), SLC_CACHE_OK);
    slc_cache_store_abort(&st);
    slc_cache_stats(slc_test_cache, &s);
    ck_assert_uint_eq(s.refused[SLC_CACHE_TOOBIG], 1);
    ck_assert_uint_eq(s.refused[SLC_CACHE_TABLES_MAX], 1);
    ck_assert_uint_eq(s.entries, 1);
    slc_test_invariants();
    slc_test_teardown_check();
}
END_TEST

START_TEST(test_abort)
{
    slc_cache_store_t st;
    slc_slab_stats_t  ss;
    char              data[10000];

    slc_test_setup(SLC_TEST_BIG, 1 << 20);
    memset(data, 'x', sizeof(data));
    ck_assert_int_eq(slc_cache_store_begin(slc_test_cache, &st, "q", 1, 1,
        NULL, 0, 10000, 0, 0), SLC_CACHE_OK);
    for (int i = 0; i < 10; i++) {
        ck_assert_int_eq(slc_cache_store_append(&st, data, sizeof(data)),
            SLC_CACHE_OK);
    }
    slc_slab_stats(slc_test_pool, &ss);
    ck_assert_uint_lt(ss.pages_free, slc_test_base.pages_free);
    slc_cache_store_abort(&st);
    slc_cache_store_abort(&st);                 /* twice is harmless */
    slc_test_expect_miss("q", 1, 1);
    slc_test_invariants();
    slc_test_teardown_check();                  /* nothing of it left */
}
END_TEST

/* ---- the fuzz loop ---- */

#define SLC_FUZZ_KEYS    64
#define SLC_FUZZ_TABLES  16
#define SLC_FUZZ_HELD    8

static uint32_t  slc_fuzz_state = 12345;

static uint32_t
slc_fuzz_rand(void)
{
    slc_fuzz_state = slc_fuzz_state * 1103515245u + 12345u;
    return slc_fuzz_state >> 8;
}

/* Keys collide on purpose: 64 keys over 4 hashes. */
static void
slc_fuzz_key(unsigned k, char *key, size_t size, uint64_t *hash)
{
    snprintf(key, size, "key-%u", k);
    *hash = k % 4;
}

/*
 * A value says which key it belongs to, then bytes derived from it, so a
 * hit on the wrong key or a torn value shows.
 */
static size_t
slc_fuzz_value(unsigned k, uint32_t ver, uint8_t *buf, size_t len)
{
    size_t n = (size_t) snprintf((char *) buf, 32, "%u:%u:", k, ver);

    for (size_t i = n; i < len; i++) {
        buf[i] = (uint8_t) (k * 13 + ver + i);
    }
    return len > n ? len : n;
}

static void
slc_fuzz_check_hit(unsigned k, const slc_cache_hit_t *hit)
{
    static uint8_t  buf[16384], want[16384];
    unsigned        kk, ver;
    size_t          n = slc_test_read(hit, buf, sizeof(buf) - 1, 333);

    buf[n] = '\0';
    ck_assert_int_eq(sscanf((char *) buf, "%u:%u:", &kk, &ver), 2);
    ck_assert_uint_eq(kk, k);
    ck_assert_uint_eq(slc_fuzz_value(k, ver, want, n), n);
    ck_assert(memcmp(buf, want, n) == 0);
}

typedef struct {
    slc_cache_hit_t    hits[SLC_FUZZ_HELD];
    unsigned           hit_key[SLC_FUZZ_HELD];
    slc_cache_store_t  stores[SLC_FUZZ_HELD];
    uint64_t           now;
} slc_fuzz_t;

static void
slc_fuzz_lookup(slc_fuzz_t *f, unsigned k)
{
    char             key[32];
    uint64_t         hash;
    unsigned         slot = slc_fuzz_rand() % SLC_FUZZ_HELD;
    slc_cache_hit_t  hit;

    slc_fuzz_key(k, key, sizeof(key), &hash);
    if (slc_cache_lookup(slc_test_cache, key, strlen(key), hash, f->now,
            &hit) != SLC_CACHE_HIT)
    {
        return;
    }
    slc_fuzz_check_hit(k, &hit);
    /* keep some hits pinned a while, as a slow client would */
    slc_cache_release(&f->hits[slot]);
    f->hits[slot] = hit;
    f->hit_key[slot] = k;
}

static void
slc_fuzz_store(slc_fuzz_t *f, unsigned k)
{
    slc_cache_store_t *st = &f->stores[slc_fuzz_rand() % SLC_FUZZ_HELD];
    slc_str_t          tables[2];
    char               key[32], tname[2][16];
    uint64_t           hash;
    static uint8_t     buf[16384];
    size_t             len, off = 0;

    if (st->entry != NULL) {
        if (slc_fuzz_rand() % 3 == 0) {
            slc_cache_store_abort(st);
        } else {
            (void) slc_cache_store_commit(st);
        }
        return;
    }
    for (unsigned i = 0; i < 2; i++) {
        snprintf(tname[i], sizeof(tname[i]), "db.t%u",
                 (k + i) % SLC_FUZZ_TABLES);
        tables[i] = (slc_str_t) { strlen(tname[i]), tname[i] };
    }
    slc_fuzz_key(k, key, sizeof(key), &hash);
    if (slc_cache_store_begin(slc_test_cache, st, key, strlen(key), hash,
            tables, 2, 50 + slc_fuzz_rand() % 500, slc_fuzz_rand() % 100,
            f->now) != SLC_CACHE_OK)
    {
        return;
    }
    len = slc_fuzz_value(k, slc_fuzz_rand() % 1000, buf,
                         slc_fuzz_rand() % 12000);
    while (off < len && st->entry != NULL) {
        size_t piece = 1 + slc_fuzz_rand() % 3000;   /* slc_min: once */
        size_t n = slc_min(len - off, piece);

        (void) slc_cache_store_append(st, buf + off, n);
        off += n;
    }
}

static void
slc_fuzz_step(slc_fuzz_t *f)
{
    unsigned k = slc_fuzz_rand() % SLC_FUZZ_KEYS;
    char     t[16];

    unsigned op = slc_fuzz_rand() % 20;

    if (op < 9) {
        slc_fuzz_lookup(f, k);
    } else if (op < 15) {
        slc_fuzz_store(f, k);
    } else if (op < 16) {
        snprintf(t, sizeof(t), "db.t%u", k % SLC_FUZZ_TABLES);
        slc_cache_invalidate(slc_test_cache, t, strlen(t), 1);
    } else if (op < 18) {
        slc_cache_release(&f->hits[k % SLC_FUZZ_HELD]);
    } else {
        f->now += slc_fuzz_rand() % 20;
    }
}

START_TEST(test_fuzz)
{
    static slc_fuzz_t f;
    slc_cache_stats_t s;

    /* 160 KiB for entries beside the generation slots and their times */
    slc_test_setup(224 * 1024, 10000);
    for (unsigned i = 0; i < 10000; i++) {
        slc_fuzz_step(&f);
        slc_test_invariants();
        /* what a held hit reads never changes under it */
        if (i % 97 == 0) {
            for (unsigned j = 0; j < SLC_FUZZ_HELD; j++) {
                if (f.hits[j].entry != NULL) {
                    slc_fuzz_check_hit(f.hit_key[j], &f.hits[j]);
                }
            }
        }
    }
    slc_cache_stats(slc_test_cache, &s);
    /* the loop went through every path it is meant to */
    ck_assert_uint_gt(s.hits, 100);
    ck_assert_uint_gt(s.stores, 100);
    ck_assert_uint_gt(s.evictions, 10);
    ck_assert_uint_gt(s.stale + s.expired, 10);
    ck_assert_uint_gt(s.refused[SLC_CACHE_BUSY], 0);
    ck_assert_uint_gt(s.refused[SLC_CACHE_TOOBIG], 0);
    ck_assert_uint_gt(s.refused[SLC_CACHE_RACED], 0);
    for (unsigned j = 0; j < SLC_FUZZ_HELD; j++) {
        slc_cache_release(&f.hits[j]);
        slc_cache_store_abort(&f.stores[j]);
    }
    slc_test_invariants();
    slc_test_teardown_check();
}
END_TEST

static Suite *
slc_test_cache_suite(void)
{
    Suite *s = suite_create("cache_store");
    TCase *tc = tcase_create("store");

    tcase_add_test(tc, test_full_key);
    tcase_add_test(tc, test_ttl);
    tcase_add_test(tc, test_soft_ttl);
    tcase_add_test(tc, test_single_flight);
    tcase_add_test(tc, test_invalidate);
    tcase_add_test(tc, test_synced);
    tcase_add_test(tc, test_lru_eviction);
    tcase_add_test(tc, test_pinned_evicted);
    tcase_add_test(tc, test_second_chance);
    tcase_add_test(tc, test_inline);
    tcase_add_test(tc, test_key_hash_spread);
    tcase_add_test(tc, test_reap);
    tcase_add_test(tc, test_killed_holding_lock);
    tcase_add_test(tc, test_too_big);
    tcase_add_test(tc, test_abort);
    tcase_add_test(tc, test_fuzz);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return slc_check_run(slc_test_cache_suite());
}
