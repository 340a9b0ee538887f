/*
 * Unit tests for the pool allocator (src/core/slc_palloc.c).
 */

#include "slc_test.h"

#include "slc_palloc.h"

static int
slc_test_aligned(const void *p)
{
    return ((uintptr_t) p & 15) == 0;
}

static int
slc_test_all_zero(const unsigned char *p, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (p[i] != 0) {
            return 0;
        }
    }
    return 1;
}

START_TEST(test_create_destroy)
{
    slc_pool_t  *pool;

    pool = slc_pool_create(0);
    ck_assert_ptr_nonnull(pool);
    slc_pool_destroy(pool);

    /* Tiny block sizes are raised to a sane minimum, not refused. */
    pool = slc_pool_create(1);
    ck_assert_ptr_nonnull(pool);
    ck_assert_ptr_nonnull(slc_palloc(pool, 64));
    slc_pool_destroy(pool);

    slc_pool_destroy(NULL);
}
END_TEST

START_TEST(test_aligned_and_zeroed)
{
    slc_pool_t     *pool;
    unsigned char  *p;
    size_t          size;

    pool = slc_pool_create(1024);
    ck_assert_ptr_nonnull(pool);

    for (size = 0; size < 3000; size += 7) {
        p = slc_palloc(pool, size);
        ck_assert_ptr_nonnull(p);
        ck_assert_msg(slc_test_aligned(p), "size %zu not aligned", size);
        ck_assert_msg(slc_test_all_zero(p, size), "size %zu not zeroed",
                      size);
        memset(p, 0xa5, size);
    }

    slc_pool_destroy(pool);
}
END_TEST

/* Memory handed back by free() is usually dirty; a new pool must zero it. */
START_TEST(test_zeroed_after_reuse)
{
    slc_pool_t     *pool;
    unsigned char  *p;
    int             i;

    for (i = 0; i < 4; i++) {
        pool = slc_pool_create(4096);
        ck_assert_ptr_nonnull(pool);

        p = slc_palloc(pool, 1000);
        ck_assert_ptr_nonnull(p);
        ck_assert(slc_test_all_zero(p, 1000));
        memset(p, 0xff, 1000);

        p = slc_palloc(pool, 100000);
        ck_assert_ptr_nonnull(p);
        ck_assert(slc_test_all_zero(p, 100000));
        memset(p, 0xff, 100000);

        slc_pool_destroy(pool);
    }
}
END_TEST

/* Small allocations are carved back to back: 16 bytes apart when aligned. */
START_TEST(test_small_contiguous)
{
    slc_pool_t  *pool;
    char        *a, *b, *c;

    pool = slc_pool_create(4096);
    a = slc_palloc(pool, 16);
    b = slc_palloc(pool, 1);
    c = slc_palloc(pool, 16);

    ck_assert_ptr_eq(b, a + 16);
    ck_assert_ptr_eq(c, b + 16);
    slc_pool_destroy(pool);
}
END_TEST

/* A large allocation gets its own block and leaves the current one alone. */
START_TEST(test_large_own_block)
{
    slc_pool_t  *pool;
    char        *a, *big, *b;

    pool = slc_pool_create(1024);
    a = slc_palloc(pool, 16);
    big = slc_palloc(pool, 1024 * 1024);
    b = slc_palloc(pool, 16);

    ck_assert_ptr_nonnull(big);
    ck_assert(slc_test_aligned(big));
    ck_assert_ptr_eq(b, a + 16);

    /* Just over a quarter of a block is already "large". */
    big = slc_palloc(pool, 257);
    ck_assert_ptr_nonnull(big);
    ck_assert_ptr_eq(slc_palloc(pool, 16), b + 16);

    slc_pool_destroy(pool);
}
END_TEST

/* Many allocations across many blocks never overlap. */
START_TEST(test_no_overlap)
{
    enum { N = 5000 };

    static unsigned char  *ptrs[N];
    static size_t          sizes[N];
    slc_pool_t            *pool;
    size_t                 i, j;

    pool = slc_pool_create(512);

    for (i = 0; i < N; i++) {
        sizes[i] = (i * 37) % 300 + 1;
        ptrs[i] = slc_palloc(pool, sizes[i]);
        ck_assert_ptr_nonnull(ptrs[i]);
        memset(ptrs[i], (int) (i & 0xff), sizes[i]);
    }

    for (i = 0; i < N; i++) {
        for (j = 0; j < sizes[i]; j++) {
            ck_assert_uint_eq(ptrs[i][j], i & 0xff);
        }
    }

    slc_pool_destroy(pool);
}
END_TEST

START_TEST(test_alloc_failure)
{
    slc_pool_t  *pool;

    pool = slc_pool_create(0);

    /* Caught by the overflow check before malloc(). */
    ck_assert_ptr_null(slc_palloc(pool, SIZE_MAX));
    ck_assert_ptr_null(slc_palloc(pool, SIZE_MAX - 8));
    ck_assert_ptr_null(slc_pstrndup(pool, "x", SIZE_MAX));

    /*
     * Refused by malloc() itself.  AddressSanitizer would abort (or warn)
     * instead of returning NULL, so this part runs in plain builds only.
     */
#ifndef __SANITIZE_ADDRESS__
    ck_assert_ptr_null(slc_palloc(pool, SIZE_MAX / 2));
#endif

    /* The pool is still usable. */
    ck_assert_ptr_nonnull(slc_palloc(pool, 32));
    slc_pool_destroy(pool);
}
END_TEST

START_TEST(test_pstrndup)
{
    slc_pool_t  *pool;
    char        *s;

    pool = slc_pool_create(0);

    s = slc_pstrndup(pool, "hello world", 5);
    ck_assert_str_eq(s, "hello");

    s = slc_pstrndup(pool, "", 0);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "");

    /* Counted, not NUL-terminated input: embedded NULs are copied. */
    s = slc_pstrndup(pool, "a\0b", 3);
    ck_assert_int_eq(memcmp(s, "a\0b", 4), 0);

    slc_pool_destroy(pool);
}
END_TEST

static char  slc_test_order[8];

static void
slc_test_cleanup(void *data)
{
    strlcat(slc_test_order, data, sizeof(slc_test_order));
}

/* Cleanups run at destroy, newest first, and only then. */
START_TEST(test_cleanup)
{
    slc_pool_t *pool = slc_pool_create(0);

    slc_test_order[0] = '\0';
    ck_assert_int_eq(slc_pool_cleanup_add(pool, slc_test_cleanup, "a"),
        SLC_OK);
    ck_assert_int_eq(slc_pool_cleanup_add(pool, slc_test_cleanup, "b"),
        SLC_OK);
    ck_assert_str_eq(slc_test_order, "");
    slc_pool_destroy(pool);
    ck_assert_str_eq(slc_test_order, "ba");
}
END_TEST

static Suite *
slc_test_palloc_suite(void)
{
    Suite  *s;
    TCase  *tc;

    s = suite_create("palloc");
    tc = tcase_create("core");
    tcase_add_test(tc, test_create_destroy);
    tcase_add_test(tc, test_aligned_and_zeroed);
    tcase_add_test(tc, test_zeroed_after_reuse);
    tcase_add_test(tc, test_small_contiguous);
    tcase_add_test(tc, test_large_own_block);
    tcase_add_test(tc, test_no_overlap);
    tcase_add_test(tc, test_alloc_failure);
    tcase_add_test(tc, test_pstrndup);
    tcase_add_test(tc, test_cleanup);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{

    return slc_check_run(slc_test_palloc_suite());
}
