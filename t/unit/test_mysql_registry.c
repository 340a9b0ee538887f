/*
 * The session registry (slc_mysql_registry.h) on a heap table in place of
 * the shared zone: sizing, ids (range, uniqueness, wrap-around), slots,
 * a full table, and reaping a dead worker's entries.
 */

#include "slc_test.h"

#include "slc_core.h"
#include "slc_mysql_registry.h"

#define SLC_TEST_BASE  SLC_REGISTRY_ID_BASE

static size_t
slc_test_slots(size_t size)
{
    return (size - sizeof(slc_registry_t)) / sizeof(slc_registry_entry_t);
}

/* A zeroed-then-initialised table sized for `sessions`. */
static slc_registry_t *
slc_test_new(uint64_t sessions, const slc_registry_t *prev)
{
    size_t           size = slc_registry_size(sessions);
    slc_registry_t  *r = malloc(size);

    ck_assert_ptr_nonnull(r);
    memset(r, 0xa5, size);              /* init must not rely on zeroes */
    slc_registry_init(r, size, prev);
    return r;
}

START_TEST(test_size)
{
    static const struct {
        uint64_t  sessions;
        size_t    slots;
    } sizes[] = {
        { 0, 1024 }, { 1, 1024 }, { 512, 1024 }, { 513, 2048 },
        { 1024, 2048 }, { 1025, 4096 }, { 100000, 262144 },
        { 1u << 21, 1u << 22 }, { (1u << 21) + 1, 1u << 22 },
        { 1ull << 40, 1u << 22 }, { UINT64_MAX / 4, 1u << 22 },
    };
    size_t  i, size, slots;

    for (i = 0; i < slc_nelems(sizes); i++) {
        size = slc_registry_size(sizes[i].sessions);
        slots = slc_test_slots(size);
        ck_assert_uint_eq(size, sizeof(slc_registry_t)
                                + slots * sizeof(slc_registry_entry_t));
        ck_assert_msg(slots == sizes[i].slots, "%llu sessions: %zu slots",
                      (unsigned long long) sizes[i].sessions, slots);
        ck_assert_uint_eq(slots & (slots - 1), 0);
    }
}
END_TEST

START_TEST(test_init)
{
    slc_registry_t        *a = slc_test_new(0, NULL), *b;
    slc_registry_entry_t   e;
    uint32_t               id;
    size_t                 i;

    ck_assert_uint_eq(a->next, 0);
    ck_assert_uint_eq(a->mask, 1023);
    ck_assert_uint_eq(a->full_logged, 0);
    for (i = 0; i <= a->mask; i++) {
        ck_assert_uint_eq(a->e[i].id, 0);
    }
    for (i = 0; i < 5; i++) {
        ck_assert_int_eq(slc_registry_add(a, 0, &id), SLC_OK);
    }
    /* a resized zone carries the counter on, not the entries */
    b = slc_test_new(5000, a);
    ck_assert_uint_eq(b->next, 5);
    ck_assert_uint_eq(b->mask, 16383);
    ck_assert_int_eq(slc_registry_get(b, SLC_TEST_BASE, &e), SLC_ERROR);
    ck_assert_int_eq(slc_registry_add(b, 0, &id), SLC_OK);
    ck_assert_uint_eq(id, SLC_TEST_BASE + 5);
    free(a);
    free(b);
}
END_TEST

START_TEST(test_add_get_del)
{
    slc_registry_t        *r = slc_test_new(0, NULL);
    slc_registry_entry_t   e;
    uint32_t               id, id2;

    ck_assert_int_eq(slc_registry_add(r, 3, &id), SLC_OK);
    ck_assert_uint_eq(id, SLC_TEST_BASE);
    ck_assert_uint_eq(r->e[id & r->mask].id, id);
    ck_assert_uint_eq(r->e[id & r->mask].proc, 3);

    memset(&e, 0xff, sizeof(e));
    ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_OK);
    ck_assert_uint_eq(e.id, id);
    ck_assert_uint_eq(e.proc, 3);
    ck_assert_uint_eq(e.thread_id, 0);
    ck_assert_uint_eq(e.server, 0);

    slc_registry_set_backend(r, id, 2, 4711);
    ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_OK);
    ck_assert_uint_eq(e.server, 2);
    ck_assert_uint_eq(e.thread_id, 4711);
    ck_assert_uint_eq(e.proc, 3);
    ck_assert_uint_eq(e.run_thread_id, 0);

    /* a command running on another backend, then back on its own */
    slc_registry_set_running(r, id, 5, 99);
    ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_OK);
    ck_assert_uint_eq(e.run_server, 5);
    ck_assert_uint_eq(e.run_thread_id, 99);
    ck_assert_uint_eq(e.thread_id, 4711);
    slc_registry_set_running(r, id, 0, 0);
    ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_OK);
    ck_assert_uint_eq(e.run_thread_id, 0);
    slc_registry_set_running(r, id, 5, 99);

    /* the same slot, another id: neither found nor touched */
    ck_assert_int_eq(slc_registry_get(r, id + 1024, &e), SLC_ERROR);
    slc_registry_set_backend(r, id + 1024, 9, 9);
    slc_registry_del(r, id + 1024);
    ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_OK);
    ck_assert_uint_eq(e.thread_id, 4711);

    /* ids below the base are the servers' own */
    ck_assert_int_eq(slc_registry_get(r, 0, &e), SLC_ERROR);
    ck_assert_int_eq(slc_registry_get(r, 5, &e), SLC_ERROR);
    ck_assert_int_eq(slc_registry_get(r, SLC_TEST_BASE - 1, &e), SLC_ERROR);

    ck_assert_int_eq(slc_registry_add(r, 3, &id2), SLC_OK);
    ck_assert_uint_eq(id2, id + 1);
    slc_registry_del(r, id);
    ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_ERROR);
    ck_assert_uint_eq(r->e[id & r->mask].id, 0);
    ck_assert_uint_eq(r->e[id & r->mask].thread_id, 0);
    ck_assert_uint_eq(r->e[id & r->mask].server, 0);
    ck_assert_uint_eq(r->e[id & r->mask].run_thread_id, 0);
    ck_assert_int_eq(slc_registry_get(r, id2, &e), SLC_OK);
    /* a deleted id is not set again */
    slc_registry_set_backend(r, id, 1, 1);
    ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_ERROR);
    free(r);
}
END_TEST

START_TEST(test_unique)
{
    slc_registry_t        *r = slc_test_new(0, NULL);
    slc_registry_entry_t   e;
    uint32_t               id, prev = 0, held[10];
    uint8_t               *seen = calloc(1, 1u << 17);
    unsigned               i, k;

    ck_assert_ptr_nonnull(seen);
    /* ten long-lived sessions, so that their slots come round occupied */
    for (k = 0; k < 10; k++) {
        ck_assert_int_eq(slc_registry_add(r, 1, &held[k]), SLC_OK);
    }
    for (i = 0; i < 100000; i++) {
        ck_assert_int_eq(slc_registry_add(r, 0, &id), SLC_OK);
        ck_assert_uint_ge(id, SLC_TEST_BASE);
        ck_assert_uint_gt(id, prev);
        ck_assert_uint_lt(id - SLC_TEST_BASE, 1u << 17);
        ck_assert_msg(!seen[id - SLC_TEST_BASE], "id %x twice", id);
        seen[id - SLC_TEST_BASE] = 1;
        for (k = 0; k < 10; k++) {
            ck_assert_uint_ne(id, held[k]);
            ck_assert_uint_ne(id & r->mask, held[k] & r->mask);
        }
        ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_OK);
        ck_assert_uint_eq(e.proc, 0);
        slc_registry_del(r, id);
        prev = id;
    }
    for (k = 0; k < 10; k++) {
        ck_assert_int_eq(slc_registry_get(r, held[k], &e), SLC_OK);
        ck_assert_uint_eq(e.proc, 1);
    }
    free(seen);
    free(r);
}
END_TEST

/* With every slot taken an id is still handed out, unique, unnamed. */
START_TEST(test_full)
{
    slc_registry_t        *r = slc_test_new(0, NULL);
    slc_registry_entry_t   e;
    uint32_t               id, last = 0;
    unsigned               i;

    for (i = 0; i <= r->mask; i++) {
        ck_assert_int_eq(slc_registry_add(r, 0, &id), SLC_OK);
        ck_assert_uint_eq(id, SLC_TEST_BASE + i);
        last = id;
    }
    ck_assert_int_eq(slc_registry_add(r, 0, &id), SLC_AGAIN);
    ck_assert_uint_gt(id, last);
    ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_ERROR);
    /* the owner of the slot it maps to is untouched */
    ck_assert_int_eq(slc_registry_get(r, id - 1024, &e), SLC_OK);
    last = id;
    ck_assert_int_eq(slc_registry_add(r, 0, &id), SLC_AGAIN);
    ck_assert_uint_gt(id, last);
    for (i = 0; i <= r->mask; i++) {
        ck_assert_uint_eq(r->e[i].id, SLC_TEST_BASE + i);
    }

    /* one slot frees up: the next add, counting from 1152, finds it */
    ck_assert_uint_eq(id, SLC_TEST_BASE + 1151);
    slc_registry_del(r, SLC_TEST_BASE + 137);
    ck_assert_int_eq(slc_registry_add(r, 0, &id), SLC_OK);
    ck_assert_uint_eq(id, SLC_TEST_BASE + 1161);
    ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_OK);
    free(r);
}
END_TEST

START_TEST(test_reap)
{
    slc_registry_t        *r = slc_test_new(0, NULL);
    slc_registry_entry_t   e;
    uint32_t               ids[30];
    unsigned               i;

    for (i = 0; i < 30; i++) {
        ck_assert_int_eq(slc_registry_add(r, i % 3, &ids[i]), SLC_OK);
        slc_registry_set_backend(r, ids[i], 1, 100 + i);
    }
    slc_registry_del(r, ids[1]);        /* proc 1 */
    ck_assert_uint_eq(slc_registry_reap(r, 1), 9);
    ck_assert_uint_eq(slc_registry_reap(r, 1), 0);
    ck_assert_uint_eq(slc_registry_reap(r, 7), 0);
    for (i = 0; i < 30; i++) {
        int rc = slc_registry_get(r, ids[i], &e);

        if (i % 3 == 1) {
            ck_assert_int_eq(rc, SLC_ERROR);
            ck_assert_uint_eq(r->e[ids[i] & r->mask].id, 0);
            ck_assert_uint_eq(r->e[ids[i] & r->mask].thread_id, 0);
        } else {
            ck_assert_int_eq(rc, SLC_OK);
            ck_assert_uint_eq(e.proc, i % 3);
            ck_assert_uint_eq(e.thread_id, 100 + i);
        }
    }
    ck_assert_uint_eq(slc_registry_reap(r, 0), 10);
    ck_assert_uint_eq(slc_registry_reap(r, 2), 10);
    for (i = 0; i <= r->mask; i++) {
        ck_assert_uint_eq(r->e[i].id, 0);
    }
    free(r);
}
END_TEST

/* After 2^31 ids the counter comes back to the base, past live slots. */
START_TEST(test_wrap)
{
    slc_registry_t        *r = slc_test_new(0, NULL);
    slc_registry_entry_t   e;
    uint32_t               first, id;

    ck_assert_int_eq(slc_registry_add(r, 0, &first), SLC_OK);
    ck_assert_uint_eq(first, SLC_TEST_BASE);

    r->next = 0x7ffffffe;
    ck_assert_int_eq(slc_registry_add(r, 0, &id), SLC_OK);
    ck_assert_uint_eq(id, 0xfffffffeu);
    ck_assert_int_eq(slc_registry_add(r, 0, &id), SLC_OK);
    ck_assert_uint_eq(id, 0xffffffffu);
    ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_OK);
    /* 0x80000000 again, but its slot is still first's: skipped */
    ck_assert_int_eq(slc_registry_add(r, 0, &id), SLC_OK);
    ck_assert_uint_eq(id, SLC_TEST_BASE + 1);
    ck_assert_int_eq(slc_registry_get(r, first, &e), SLC_OK);
    ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_OK);

    /* once first is gone, the base id is handed out again */
    slc_registry_del(r, first);
    r->next = 0x7fffffff;               /* 0xffffffff: its slot is taken */
    ck_assert_int_eq(slc_registry_add(r, 0, &id), SLC_OK);
    ck_assert_uint_eq(id, SLC_TEST_BASE);
    ck_assert_int_eq(slc_registry_get(r, id, &e), SLC_OK);
    free(r);
}
END_TEST


static Suite *
slc_registry_suite(void)
{
    Suite  *s = suite_create("mysql_registry");
    TCase  *tc = tcase_create("registry");

    /* 100 000 ids under the sanitizers: seconds, more on a loaded machine */
    tcase_set_timeout(tc, 60);

    tcase_add_test(tc, test_size);
    tcase_add_test(tc, test_init);
    tcase_add_test(tc, test_add_get_del);
    tcase_add_test(tc, test_unique);
    tcase_add_test(tc, test_full);
    tcase_add_test(tc, test_reap);
    tcase_add_test(tc, test_wrap);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{

    return slc_check_run(slc_registry_suite());
}
