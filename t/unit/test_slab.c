/*
 * Unit tests for the slab allocator (src/core/slc_slab.c), on a plain
 * anonymous mapping: every class, random sequences against a shadow
 * model, fragmentation and coalescing, exhaustion, invalid frees.
 */

#include "slc_test.h"
#include <sys/mman.h>

#include "slc_slab.h"

#define SLC_TEST_AREA  (1024 * 1024 + 123)     /* an odd size on purpose */

static void   *slc_test_area;
static size_t  slc_test_area_size;

static slc_slab_pool_t *
slc_test_pool(size_t size)
{
    slc_slab_pool_t *pool;

    slc_test_area_size = size;
    slc_test_area = mmap(NULL, size, PROT_READ | PROT_WRITE,
        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(slc_test_area, MAP_FAILED);
    pool = slc_test_area;
    ck_assert_int_eq(slc_slab_init(pool, size), SLC_OK);
    return pool;
}

static void
slc_test_pool_free(void)
{
    munmap(slc_test_area, slc_test_area_size);
}

/* The pool as it was after init, but for the request counters. */
static void
slc_test_stats_equal(const slc_slab_stats_t *a, const slc_slab_stats_t *b)
{
    ck_assert_uint_eq(a->pages_total, b->pages_total);
    ck_assert_uint_eq(a->pages_free, b->pages_free);
    ck_assert_uint_eq(a->pages_large, b->pages_large);
    for (unsigned c = 0; c < SLC_SLAB_NCLASSES; c++) {
        ck_assert_uint_eq(a->classes[c].size, b->classes[c].size);
        ck_assert_uint_eq(a->classes[c].used, b->classes[c].used);
        ck_assert_uint_eq(a->classes[c].total, b->classes[c].total);
    }
}

static size_t
slc_test_class_size(size_t size)
{
    size_t s = 8;

    while (s < size) {
        s <<= 1;
    }
    return s;
}

static void
slc_test_fill(void *p, size_t size, unsigned seed)
{
    unsigned char *b = p;

    for (size_t i = 0; i < size; i++) {
        b[i] = (unsigned char) (seed * 31 + i * 7);
    }
}

static int
slc_test_check(const void *p, size_t size, unsigned seed)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < size; i++) {
        if (b[i] != (unsigned char) (seed * 31 + i * 7)) {
            return 0;
        }
    }
    return 1;
}

START_TEST(test_init)
{
    unsigned char    small[8192] __attribute__((aligned(4096)));
    slc_slab_pool_t *pool;
    slc_slab_stats_t st;

    /* not one page after the header and the page alignment */
    ck_assert_int_eq(slc_slab_init((slc_slab_pool_t *) small, 4096),
        SLC_ERROR);
    ck_assert_int_eq(slc_slab_init((slc_slab_pool_t *) small, 100),
        SLC_ERROR);

    pool = slc_test_pool(SLC_TEST_AREA);
    slc_slab_stats(pool, &st);
    /* 256 pages and 123 bytes: the header and 24 bytes of descriptor per
       page take two pages (the first page starts page-aligned) */
    ck_assert_uint_eq(st.pages_total, 254);
    ck_assert_uint_eq(st.pages_free, st.pages_total);
    ck_assert_uint_eq(st.pages_large, 0);
    for (unsigned c = 0; c < SLC_SLAB_NCLASSES; c++) {
        ck_assert_uint_eq(st.classes[c].size, (size_t) 8 << c);
        ck_assert_uint_eq(st.classes[c].used, 0);
        ck_assert_uint_eq(st.classes[c].total, 0);
    }
    ck_assert_ptr_null(pool->data);
    ck_assert_int_eq(slc_shmtx_holder(&pool->mutex), 0);
    slc_test_pool_free();
}
END_TEST

/* Every size up to three pages: right class, aligned, usable, freed. */
START_TEST(test_every_size)
{
    slc_slab_pool_t *pool = slc_test_pool(SLC_TEST_AREA);
    slc_slab_stats_t before, st;

    slc_slab_stats(pool, &before);
    for (size_t size = 0; size <= 3 * 4096 + 1; size++) {
        char  *p = slc_slab_alloc(pool, size);
        size_t align = size <= 2048 ? slc_test_class_size(size) : 4096;

        ck_assert_msg(p != NULL, "size %zu", size);
        ck_assert_msg(((uintptr_t) p & (align - 1)) == 0,
            "size %zu: %p not aligned to %zu", size, (void *) p, align);
        ck_assert_msg(p >= (char *) pool + sizeof(*pool)
            && p + size <= (char *) pool + SLC_TEST_AREA, "size %zu", size);
        slc_test_fill(p, size, (unsigned) size);
        slc_slab_stats(pool, &st);
        if (size <= 2048) {
            unsigned c = (unsigned) __builtin_ctzl(slc_test_class_size(size))
                         - 3;
            ck_assert_uint_eq(st.classes[c].used, 1);
        } else {
            ck_assert_uint_eq(st.pages_large, (size + 4095) / 4096);
        }
        ck_assert(slc_test_check(p, size, (unsigned) size));
        ck_assert_int_eq(slc_slab_free(pool, p), SLC_OK);
        slc_slab_stats(pool, &st);
        slc_test_stats_equal(&st, &before);
    }
    ck_assert_int_eq(slc_shmtx_holder(&pool->mutex), 0);
    slc_test_pool_free();
}
END_TEST

/*
 * Fill several pages of each class: a page holds exactly its capacity
 * (its own bitmap takes the first slots below 64 bytes), slots never
 * overlap, and freeing in another order gives every page back.
 */
START_TEST(test_class_pages)
{
    static const unsigned  capacity[SLC_SLAB_NCLASSES] = {
        504, 254, 127, 64, 32, 16, 8, 4, 2
    };
    slc_slab_pool_t *pool = slc_test_pool(SLC_TEST_AREA);
    slc_slab_stats_t before, st;
    static void     *p[5 * 504];

    slc_slab_stats(pool, &before);
    for (unsigned c = 0; c < SLC_SLAB_NCLASSES; c++) {
        size_t   size = (size_t) 8 << c;
        unsigned n = 5 * capacity[c];

        for (unsigned i = 0; i < n; i++) {
            p[i] = slc_slab_alloc(pool, size);
            ck_assert_ptr_nonnull(p[i]);
            slc_test_fill(p[i], size, i);
        }
        slc_slab_stats(pool, &st);
        ck_assert_uint_eq(st.classes[c].used, n);
        ck_assert_uint_eq(st.classes[c].total, n);      /* 5 full pages */
        ck_assert_uint_eq(st.pages_free, before.pages_free - 5);
        /* odd ones first, then the even ones backwards */
        for (unsigned i = 1; i < n; i += 2) {
            ck_assert_msg(slc_test_check(p[i], size, i), "class %u", c);
            ck_assert_int_eq(slc_slab_free(pool, p[i]), SLC_OK);
        }
        slc_slab_stats(pool, &st);
        ck_assert_uint_eq(st.pages_free, before.pages_free - 5);
        for (unsigned i = (n - 1) & ~1u; i < n; i -= 2) {
            ck_assert_msg(slc_test_check(p[i], size, i), "class %u", c);
            ck_assert_int_eq(slc_slab_free(pool, p[i]), SLC_OK);
        }
        slc_slab_stats(pool, &st);
        slc_test_stats_equal(&st, &before);
    }
    slc_test_pool_free();
}
END_TEST

typedef struct {
    char     *p;
    size_t    size;
    unsigned  seed;
} slc_test_live_t;

static size_t
slc_test_random_size(void)
{
    switch (random() % 8) {
    case 0:
        return 2049 + (size_t) random() % (5 * 4096);   /* a run */
    case 1:
        return (size_t) random() % 16;
    default:
        return (size_t) random() % 2049;
    }
}

/* The counters agree with the shadow list of live allocations. */
static void
slc_test_shadow_stats(slc_slab_pool_t *pool, slc_test_live_t *live,
    unsigned nlive)
{
    slc_slab_stats_t st;
    size_t           used[SLC_SLAB_NCLASSES] = { 0 }, large = 0;

    for (unsigned i = 0; i < nlive; i++) {
        if (live[i].size > 2048) {
            large += (live[i].size + 4095) / 4096;
        } else {
            used[__builtin_ctzl(slc_test_class_size(live[i].size)) - 3]++;
        }
    }
    slc_slab_stats(pool, &st);
    ck_assert_uint_eq(st.pages_large, large);
    for (unsigned c = 0; c < SLC_SLAB_NCLASSES; c++) {
        ck_assert_uint_eq(st.classes[c].used, used[c]);
        ck_assert_uint_le(used[c], st.classes[c].total);
    }
}

/*
 * Random sequences, checked against a shadow model: each allocation is
 * filled with its own pattern, which must be intact when it is freed (an
 * overlap would overwrite it); NULL only when the pool really is short.
 */
START_TEST(test_random_shadow)
{
    slc_slab_pool_t *pool = slc_test_pool(SLC_TEST_AREA);
    slc_slab_stats_t before;
    static slc_test_live_t live[4096];
    unsigned         nlive = 0, nulls = 0;

    srandom(42 + (unsigned) _i);
    slc_slab_stats(pool, &before);
    for (unsigned op = 0; op < 40000; op++) {
        int grow = nlive == 0 || (nlive < slc_nelems(live)
                                  && random() % 100 < (op < 20000 ? 60 : 40));
        if (grow) {
            size_t size = slc_test_random_size();
            char  *p = slc_slab_alloc(pool, size);

            if (p == NULL) {
                nulls++;
                continue;
            }
            slc_test_fill(p, size, op);
            live[nlive++] = (slc_test_live_t) { p, size, op };
        } else {
            unsigned k = (unsigned) random() % nlive;

            ck_assert_msg(slc_test_check(live[k].p, live[k].size,
                live[k].seed), "op %u: allocation of %zu overwritten", op,
                live[k].size);
            ck_assert_int_eq(slc_slab_free(pool, live[k].p), SLC_OK);
            live[k] = live[--nlive];
        }
        if (op % 997 == 0) {
            slc_test_shadow_stats(pool, live, nlive);
        }
    }
    ck_assert_uint_gt(nulls, 0);      /* the sequence did reach the limit */
    while (nlive > 0) {
        nlive--;
        ck_assert(slc_test_check(live[nlive].p, live[nlive].size,
            live[nlive].seed));
        ck_assert_int_eq(slc_slab_free(pool, live[nlive].p), SLC_OK);
    }
    slc_slab_stats_t st;
    slc_slab_stats(pool, &st);
    slc_test_stats_equal(&st, &before);
    /* and it is all one run again */
    void *all = slc_slab_alloc(pool, st.pages_total * 4096);
    ck_assert_ptr_nonnull(all);
    slc_test_pool_free();
}
END_TEST

/*
 * Runs coalesce: with every other page taken no run of two exists; giving
 * back the page between two free ones makes a run of exactly three.
 */
START_TEST(test_fragmentation_runs)
{
    slc_slab_pool_t *pool = slc_test_pool(SLC_TEST_AREA);
    slc_slab_stats_t st;
    static char     *page[254 + 1];
    unsigned         n = 0;

    while ((page[n] = slc_slab_alloc(pool, 4096)) != NULL) {
        n++;
    }
    slc_slab_stats(pool, &st);
    ck_assert_uint_eq(n, st.pages_total);
    ck_assert_uint_eq(st.pages_free, 0);
    ck_assert_uint_eq(st.fails, 1);
    for (unsigned i = 0; i < n; i += 2) {
        ck_assert_int_eq(slc_slab_free(pool, page[i]), SLC_OK);
    }
    ck_assert_ptr_null(slc_slab_alloc(pool, 4097));
    ck_assert_ptr_null(slc_slab_alloc(pool, 2 * 4096));
    /* pages 10 and 12 are free: 11 joins them from both sides */
    ck_assert_int_eq(slc_slab_free(pool, page[11]), SLC_OK);
    ck_assert_ptr_null(slc_slab_alloc(pool, 4 * 4096));
    char *run = slc_slab_alloc(pool, 3 * 4096);
    ck_assert_ptr_eq(run, page[10]);
    ck_assert_ptr_null(slc_slab_alloc(pool, 2 * 4096));
    ck_assert_int_eq(slc_slab_free(pool, run), SLC_OK);

    /* all back: one run of every page, whatever the order */
    for (unsigned i = 1; i < n; i += 2) {
        if (i != 11) {
            ck_assert_int_eq(slc_slab_free(pool, page[i]), SLC_OK);
        }
    }
    slc_slab_stats(pool, &st);
    ck_assert_uint_eq(st.pages_free, st.pages_total);
    ck_assert_ptr_eq(slc_slab_alloc(pool, st.pages_total * 4096), page[0]);
    slc_test_pool_free();
}
END_TEST

/*
 * Small objects pin their pages: with half of each page's slots freed no
 * page is free and a large allocation fails; once the rest goes, the
 * pages coalesce and it succeeds.
 */
START_TEST(test_fragmentation_slots)
{
    slc_slab_pool_t *pool = slc_test_pool(SLC_TEST_AREA);
    slc_slab_stats_t st;
    static void     *p[254 * 64 + 1];
    unsigned         n = 0;

    while ((p[n] = slc_slab_alloc(pool, 64)) != NULL) {
        n++;
    }
    slc_slab_stats(pool, &st);
    ck_assert_uint_eq(n, st.pages_total * 64);
    for (unsigned i = 0; i < n; i += 2) {
        ck_assert_int_eq(slc_slab_free(pool, p[i]), SLC_OK);
    }
    slc_slab_stats(pool, &st);
    ck_assert_uint_eq(st.pages_free, 0);
    ck_assert_ptr_null(slc_slab_alloc(pool, 4096));
    ck_assert_ptr_null(slc_slab_alloc(pool, 128));  /* another class */
    ck_assert_ptr_nonnull(slc_slab_alloc(pool, 64)); /* a freed slot */
    for (unsigned i = 1; i < n; i += 2) {
        ck_assert_int_eq(slc_slab_free(pool, p[i]), SLC_OK);
    }
    slc_slab_stats(pool, &st);
    ck_assert_uint_eq(st.pages_free, st.pages_total - 1);
    ck_assert_ptr_nonnull(slc_slab_alloc(pool, (st.pages_total - 1) * 4096));
    slc_test_pool_free();
}
END_TEST

/* Until NULL, in every class; then all free and all available again. */
START_TEST(test_exhaustion)
{
    slc_slab_pool_t *pool = slc_test_pool(SLC_TEST_AREA);
    slc_slab_stats_t before, st;
    static void     *p[254 * 504 + 1];
    size_t           size = _i <= 2048 ? (size_t) _i : (size_t) _i * 3;
    unsigned         n = 0;

    slc_slab_stats(pool, &before);
    for (int round = 0; round < 2; round++) {
        while ((p[n] = slc_slab_alloc(pool, size)) != NULL) {
            n++;
        }
        ck_assert_ptr_null(slc_slab_alloc(pool, 1));
        slc_slab_stats(pool, &st);
        ck_assert_uint_ge(st.fails, 2);
        ck_assert_uint_le(st.pages_free * 4096, size);  /* nothing left */
        while (n > 0) {
            ck_assert_int_eq(slc_slab_free(pool, p[--n]), SLC_OK);
        }
        slc_slab_stats(pool, &st);
        slc_test_stats_equal(&st, &before);
    }
    ck_assert_ptr_null(slc_slab_alloc(pool, (before.pages_total + 1) * 4096));
    ck_assert_ptr_null(slc_slab_alloc(pool, SIZE_MAX));
    ck_assert_ptr_nonnull(slc_slab_alloc(pool, before.pages_total * 4096));
    slc_test_pool_free();
}
END_TEST

/* What alloc did not return is refused and changes nothing. */
START_TEST(test_invalid_free)
{
    slc_slab_pool_t *pool = slc_test_pool(SLC_TEST_AREA);
    slc_slab_stats_t before, st;
    char            *s8 = slc_slab_alloc(pool, 8);
    char            *s64 = slc_slab_alloc(pool, 64);
    char            *run = slc_slab_alloc(pool, 3 * 4096);
    char            *gone = slc_slab_alloc(pool, 100);
    char            *page8 = (char *) ((uintptr_t) s8 & ~(uintptr_t) 4095);

    ck_assert_int_eq(slc_slab_free_locked(pool, gone), SLC_OK);
    slc_slab_stats(pool, &before);
    ck_assert_int_eq(slc_slab_free_locked(pool, gone), SLC_ERROR);
    ck_assert_int_eq(slc_slab_free_locked(pool, s8 + 1), SLC_ERROR);
    ck_assert_int_eq(slc_slab_free_locked(pool, s64 + 8), SLC_ERROR);
    ck_assert_int_eq(slc_slab_free_locked(pool, s64 + 64), SLC_ERROR);
    ck_assert_int_eq(slc_slab_free_locked(pool, page8), SLC_ERROR);
    ck_assert_int_eq(slc_slab_free_locked(pool, run + 8), SLC_ERROR);
    ck_assert_int_eq(slc_slab_free_locked(pool, run + 4096), SLC_ERROR);
    ck_assert_int_eq(slc_slab_free_locked(pool, run + 3 * 4096), SLC_ERROR);
    ck_assert_int_eq(slc_slab_free_locked(pool, pool), SLC_ERROR);
    ck_assert_int_eq(slc_slab_free_locked(pool,
        (char *) pool + SLC_TEST_AREA + 4096), SLC_ERROR);
    slc_slab_stats(pool, &st);
    slc_test_stats_equal(&st, &before);
    ck_assert_int_eq(slc_slab_free_locked(pool, run), SLC_OK);
    ck_assert_int_eq(slc_slab_free_locked(pool, run), SLC_ERROR);
    ck_assert_int_eq(slc_slab_free_locked(pool, s8), SLC_OK);
    ck_assert_int_eq(slc_slab_free_locked(pool, s8), SLC_ERROR);
    slc_test_pool_free();
}
END_TEST

/*
 * The pool holds no pointer into itself: a copy of the area elsewhere
 * (same alignment) is a working pool whose objects moved with it.
 */
START_TEST(test_position_independent)
{
    slc_slab_pool_t *pool = slc_test_pool(SLC_TEST_AREA);
    char            *a = slc_slab_alloc(pool, 24);
    char            *b = slc_slab_alloc(pool, 5000);
    char            *copy;
    slc_slab_pool_t *moved;
    ptrdiff_t        d;
    slc_slab_stats_t st;

    copy = mmap(NULL, SLC_TEST_AREA, PROT_READ | PROT_WRITE,
        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(copy, MAP_FAILED);
    memcpy(copy, pool, SLC_TEST_AREA);
    memset(pool, 0xa5, SLC_TEST_AREA);      /* nothing may read the old */
    moved = (slc_slab_pool_t *) copy;
    d = copy - (char *) pool;
    ck_assert_int_eq(slc_slab_free(moved, a + d), SLC_OK);
    ck_assert_int_eq(slc_slab_free(moved, b + d), SLC_OK);
    ck_assert_ptr_eq(slc_slab_alloc(moved, 24), a + d);
    slc_slab_stats(moved, &st);
    ck_assert_uint_eq(st.classes[2].used, 1);
    ck_assert_uint_eq(st.pages_free, st.pages_total - 1);
    munmap(copy, SLC_TEST_AREA);
    slc_test_pool_free();
}
END_TEST

static Suite *
slc_test_slab_suite(void)
{
    Suite *s = suite_create("slab");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_init);
    tcase_add_test(tc, test_every_size);
    tcase_add_test(tc, test_class_pages);
    tcase_add_loop_test(tc, test_random_shadow, 0, 4);
    tcase_add_test(tc, test_fragmentation_runs);
    tcase_add_test(tc, test_fragmentation_slots);
    tcase_add_loop_test(tc, test_exhaustion, 1, 2);       /* 8 bytes */
    tcase_add_loop_test(tc, test_exhaustion, 9, 10);      /* 16 */
    tcase_add_loop_test(tc, test_exhaustion, 32, 33);
    tcase_add_loop_test(tc, test_exhaustion, 64, 65);
    tcase_add_loop_test(tc, test_exhaustion, 1000, 1001); /* 1024 */
    tcase_add_loop_test(tc, test_exhaustion, 2048, 2049);
    tcase_add_loop_test(tc, test_exhaustion, 2049, 2050); /* 6147: 2 pages */
    tcase_add_test(tc, test_invalid_free);
    tcase_add_test(tc, test_position_independent);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{

    return slc_check_run(slc_test_slab_suite());
}
