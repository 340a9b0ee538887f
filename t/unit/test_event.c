/*
 * Unit tests for the event loop's timers and the buffer free list
 * (src/event/slc_event.c, src/core/slc_buf.c).
 */

#include <check.h>

#include "slc_buf.h"
#include "slc_event.h"

#define SLC_TEST_NTIMERS  64

static int          fired[SLC_TEST_NTIMERS];
static int          nfired;
static slc_timer_t  timers[SLC_TEST_NTIMERS];

static void
slc_test_fire(slc_timer_t *t)
{
    fired[nfired++] = (int) (t - timers);
}

static void
slc_test_run_until(slc_loop_t *loop, int n, uint64_t deadline_ms)
{
    uint64_t end = slc_time_ms() + deadline_ms;

    while (nfired < n && slc_time_ms() < end) {
        slc_loop_once(loop, 5);
    }
}

/* Timers fire in deadline order, ties in the order they were added. */
START_TEST(test_timer_order)
{
    slc_loop_t loop;

    ck_assert_int_eq(slc_loop_init(&loop), SLC_OK);
    nfired = 0;
    for (int i = 0; i < SLC_TEST_NTIMERS; i++) {
        timers[i] = (slc_timer_t) { .handler = slc_test_fire };
        /* 0..7 ms in a scrambled order, with many ties */
        slc_timer_add(&loop, &timers[i], (uint64_t) ((i * 5) % 8));
    }
    slc_test_run_until(&loop, SLC_TEST_NTIMERS, 2000);
    ck_assert_int_eq(nfired, SLC_TEST_NTIMERS);
    for (int i = 1; i < nfired; i++) {
        slc_timer_t *a = &timers[fired[i - 1]], *b = &timers[fired[i]];
        ck_assert(a->when < b->when
                  || (a->when == b->when && fired[i - 1] < fired[i]));
    }
    slc_loop_done(&loop);
}
END_TEST

/* A deleted or re-armed timer fires once, at its last deadline. */
START_TEST(test_timer_del_rearm)
{
    slc_loop_t loop;

    ck_assert_int_eq(slc_loop_init(&loop), SLC_OK);
    nfired = 0;
    for (int i = 0; i < 4; i++) {
        timers[i] = (slc_timer_t) { .handler = slc_test_fire };
        slc_timer_add(&loop, &timers[i], 1);
    }
    slc_timer_del(&loop, &timers[1]);
    slc_timer_del(&loop, &timers[1]);          /* twice is harmless */
    slc_timer_add(&loop, &timers[2], 30);      /* moved later */
    slc_test_run_until(&loop, 3, 2000);
    ck_assert_int_eq(nfired, 3);
    ck_assert_int_eq(fired[0], 0);
    ck_assert_int_eq(fired[1], 3);
    ck_assert_int_eq(fired[2], 2);
    ck_assert_int_eq(timers[1].armed, 0);
    slc_loop_done(&loop);
}
END_TEST

/* A timer further away than INT_MAX ms (24.8 days) gives a positive wait
   of at most a day, not a wrapped negative (forever) or tiny one. */
START_TEST(test_timer_far_timeout)
{
    slc_loop_t   loop;
    slc_timer_t  t = { .handler = slc_test_fire };
    uint64_t     days[] = { 25, 50, 49710 /* 2^32 ms + a bit */, 100000 };

    ck_assert_int_eq(slc_loop_init(&loop), SLC_OK);
    ck_assert_int_eq(slc_loop_timeout(&loop, -1), -1);
    for (size_t i = 0; i < sizeof(days) / sizeof(days[0]); i++) {
        slc_timer_add(&loop, &t, days[i] * 24 * 3600 * 1000 + 5);
        ck_assert_int_eq(slc_loop_timeout(&loop, -1), SLC_EVENT_MAX_WAIT);
        ck_assert_int_eq(slc_loop_timeout(&loop, 7), 7);
        slc_timer_del(&loop, &t);
    }
    slc_timer_add(&loop, &t, 1000);
    ck_assert_int_le(slc_loop_timeout(&loop, -1), 1000);
    ck_assert_int_gt(slc_loop_timeout(&loop, -1), 0);
    slc_timer_del(&loop, &t);
    slc_loop_done(&loop);
}
END_TEST

/* Buffers come back empty and are reused; the free list is bounded. */
START_TEST(test_buf_reuse)
{
    slc_buf_t *b[8];

    slc_buf_setup(1024, 4);
    ck_assert_uint_eq(slc_buf_size(), 1024);
    for (int i = 0; i < 8; i++) {
        b[i] = slc_buf_get();
        ck_assert_ptr_nonnull(b[i]);
        ck_assert_uint_eq(slc_buf_len(b[i]), 0);
        ck_assert_uint_eq(slc_buf_room(b[i]), 1024);
        b[i]->last += 100;
        b[i]->pos += 40;
    }
    for (int i = 0; i < 8; i++) {
        slc_buf_put(b[i]);
    }
    slc_buf_t *again = slc_buf_get();
    ck_assert_uint_eq(slc_buf_len(again), 0);
    ck_assert_uint_eq(slc_buf_room(again), 1024);
    ck_assert_ptr_eq(again, b[3]);      /* last kept one, LIFO */
    slc_buf_put(again);
    slc_buf_put(NULL);
    slc_buf_setup(16384, 64);
}
END_TEST

START_TEST(test_buf_compact)
{
    slc_buf_t *b;

    slc_buf_setup(64, 4);
    b = slc_buf_get();
    memcpy(b->last, "0123456789", 10);
    b->last += 10;
    b->pos += 6;
    slc_buf_compact(b);
    ck_assert_ptr_eq(b->pos, b->start);
    ck_assert_uint_eq(slc_buf_len(b), 4);
    ck_assert_int_eq(memcmp(b->pos, "6789", 4), 0);
    ck_assert_uint_eq(slc_buf_room(b), 60);
    slc_buf_put(b);
    slc_buf_setup(16384, 64);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("event");
    TCase   *tc = tcase_create("timers and buffers");
    SRunner *sr;
    int      failed;

    tcase_add_test(tc, test_timer_order);
    tcase_add_test(tc, test_timer_del_rearm);
    tcase_add_test(tc, test_timer_far_timeout);
    tcase_add_test(tc, test_buf_reuse);
    tcase_add_test(tc, test_buf_compact);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
