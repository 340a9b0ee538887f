/*
 * Unit tests for the string-keyed table (src/core/slc_hash.c) that holds
 * the users of a config: every key found after many growths, misses,
 * keys that differ only in length or a byte, and replacement.
 */

#include "slc_test.h"

#include "slc_hash.h"

#define SLC_TEST_NKEYS  60000

START_TEST(test_hash_many)
{
    slc_pool_t *pool = slc_pool_create(0);
    slc_hash_t  h;
    char      **keys = calloc(SLC_TEST_NKEYS, sizeof(char *));
    char        buf[32];

    ck_assert_ptr_nonnull(keys);
    slc_hash_init(&h, pool);
    ck_assert_ptr_null(slc_hash_find(&h, "u0", 2));
    for (int i = 0; i < SLC_TEST_NKEYS; i++) {
        int n = snprintf(buf, sizeof(buf), "u%d", i);
        keys[i] = slc_pstrndup(pool, buf, (size_t) n);
        ck_assert_int_eq(slc_hash_add(&h, keys[i], (size_t) n, keys[i]),
            SLC_OK);
    }
    ck_assert_uint_eq(h.nelts, SLC_TEST_NKEYS);
    ck_assert_uint_le(h.nelts * 2, h.size);     /* at most half full */
    for (int i = 0; i < SLC_TEST_NKEYS; i++) {
        int n = snprintf(buf, sizeof(buf), "u%d", i);
        /* looked up with another copy of the key */
        ck_assert_ptr_eq(slc_hash_find(&h, buf, (size_t) n), keys[i]);
    }
    ck_assert_ptr_null(slc_hash_find(&h, "u60000", 6));
    ck_assert_ptr_null(slc_hash_find(&h, "u", 1));
    ck_assert_ptr_null(slc_hash_find(&h, "", 0));
    ck_assert_ptr_null(slc_hash_find(&h, "u1", 3));     /* "u1\0" */
    free(keys);
    slc_pool_destroy(pool);
}
END_TEST

START_TEST(test_hash_keys)
{
    slc_pool_t *pool = slc_pool_create(0);
    slc_hash_t  h;
    int         v[6];

    slc_hash_init(&h, pool);
    ck_assert_int_eq(slc_hash_add(&h, "app", 3, &v[0]), SLC_OK);
    ck_assert_int_eq(slc_hash_add(&h, "ap", 2, &v[1]), SLC_OK);
    ck_assert_int_eq(slc_hash_add(&h, "App", 3, &v[2]), SLC_OK);
    ck_assert_int_eq(slc_hash_add(&h, "a\0p", 3, &v[3]), SLC_OK);
    ck_assert_int_eq(slc_hash_add(&h, "", 0, &v[4]), SLC_OK);
    ck_assert_uint_eq(h.nelts, 5);
    ck_assert_ptr_eq(slc_hash_find(&h, "app", 3), &v[0]);
    ck_assert_ptr_eq(slc_hash_find(&h, "ap", 2), &v[1]);
    ck_assert_ptr_eq(slc_hash_find(&h, "App", 3), &v[2]);   /* exact case */
    ck_assert_ptr_eq(slc_hash_find(&h, "a\0p", 3), &v[3]);
    ck_assert_ptr_eq(slc_hash_find(&h, "", 0), &v[4]);
    ck_assert_ptr_null(slc_hash_find(&h, "appx", 4));
    /* replacing keeps the count */
    ck_assert_int_eq(slc_hash_add(&h, "app", 3, &v[5]), SLC_OK);
    ck_assert_uint_eq(h.nelts, 5);
    ck_assert_ptr_eq(slc_hash_find(&h, "app", 3), &v[5]);
    ck_assert_int_eq(slc_hash_add(&h, "x", 1, NULL), SLC_ERROR);
    ck_assert_ptr_null(slc_hash_find(&h, "x", 1));
    slc_pool_destroy(pool);
}
END_TEST

/* Keys that collide in the low bits still all come back (probing wraps
   around the end of the array). */
START_TEST(test_hash_collisions)
{
    slc_pool_t *pool = slc_pool_create(0);
    slc_hash_t  h;
    char       *keys[8];
    int         n = 0;
    char        buf[16];

    slc_hash_init(&h, pool);
    for (unsigned i = 0; n < 8; i++) {
        int len = snprintf(buf, sizeof(buf), "k%u", i);
        if ((slc_hash_key(buf, (size_t) len) & 15) != 15) {
            continue;       /* the last cell of the first array */
        }
        keys[n] = slc_pstrndup(pool, buf, (size_t) len);
        ck_assert_int_eq(slc_hash_add(&h, keys[n], (size_t) len, keys[n]),
            SLC_OK);
        n++;
    }
    ck_assert_uint_eq(h.size, 16);
    for (int i = 0; i < n; i++) {
        ck_assert_ptr_eq(slc_hash_find(&h, keys[i], strlen(keys[i])),
            keys[i]);
    }
    slc_pool_destroy(pool);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("hash");
    TCase   *tc = tcase_create("table");

    tcase_add_test(tc, test_hash_many);
    tcase_add_test(tc, test_hash_keys);
    tcase_add_test(tc, test_hash_collisions);
    suite_add_tcase(s, tc);
    return slc_check_run(s);
}
