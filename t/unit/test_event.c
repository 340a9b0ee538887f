/*
 * Unit tests for the event loop's timers, its posted-work queue and the
 * buffer free list (src/event/slc_event.c, src/core/slc_buf.c).
 */

#include "slc_test.h"

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

/* --- posted work ------------------------------------------------------ */

#define SLC_TEST_NPOSTED  8

typedef struct {
    slc_loop_t    *loop;
    slc_posted_t   ev[SLC_TEST_NPOSTED];
    int            ran[64];
    int            nran;
    int            repost;      /* times ev[0] posts itself again */
    uint64_t       round[64];   /* loop->post_round when each ran */
} slc_test_post_t;

static slc_test_post_t  tp;

static void
slc_test_posted(void *arg)
{
    int i = (int) (intptr_t) arg;

    tp.round[tp.nran] = tp.loop->post_round;
    tp.ran[tp.nran++] = i;
    if (i == 0 && tp.repost > 0) {
        tp.repost--;
        slc_post(tp.loop, &tp.ev[0], slc_test_posted, arg);
    }
    if (i == 1) {
        /* cancels one posted before it, not run yet in this round */
        slc_post_cancel(tp.loop, &tp.ev[2]);
    }
}

static void
slc_test_post_setup(slc_loop_t *loop)
{
    memset(&tp, 0, sizeof(tp));
    tp.loop = loop;
    ck_assert_int_eq(slc_loop_init(loop), SLC_OK);
}

/* FIFO; a second post of a pending event is a no-op; the wait is a poll
   while work is posted and not otherwise. */
START_TEST(test_post_fifo)
{
    slc_loop_t  loop;
    uint64_t    t0;

    slc_test_post_setup(&loop);
    ck_assert_int_eq(slc_loop_timeout(&loop, 1000), 1000);
    for (int i = 3; i < SLC_TEST_NPOSTED; i++) {
        slc_post(&loop, &tp.ev[i], slc_test_posted, (void *) (intptr_t) i);
    }
    /* already posted: keeps its place and its argument */
    slc_post(&loop, &tp.ev[3], slc_test_posted, (void *) (intptr_t) 99);
    ck_assert(slc_post_pending(&tp.ev[3]));
    ck_assert_int_eq(slc_loop_timeout(&loop, 1000), 0);
    t0 = slc_time_ms();
    slc_loop_once(&loop, 1000);
    ck_assert_uint_lt(slc_time_ms() - t0, 500);     /* did not wait */
    ck_assert_int_eq(tp.nran, SLC_TEST_NPOSTED - 3);
    for (int i = 0; i < tp.nran; i++) {
        ck_assert_int_eq(tp.ran[i], i + 3);
        ck_assert(!slc_post_pending(&tp.ev[i + 3]));
    }
    ck_assert_int_eq(slc_loop_timeout(&loop, 1000), 1000);
    slc_loop_done(&loop);
}
END_TEST

/* A cancelled event does not run, whether cancelled before the round or
   by work that ran earlier in the same round; cancelling twice, or an
   event never posted, is harmless. */
START_TEST(test_post_cancel)
{
    slc_loop_t  loop;

    slc_test_post_setup(&loop);
    slc_post_cancel(&loop, &tp.ev[5]);              /* never posted */
    for (int i = 1; i < 5; i++) {
        slc_post(&loop, &tp.ev[i], slc_test_posted, (void *) (intptr_t) i);
    }
    slc_post_cancel(&loop, &tp.ev[4]);
    slc_post_cancel(&loop, &tp.ev[4]);
    ck_assert(!slc_post_pending(&tp.ev[4]));
    slc_loop_once(&loop, 0);
    ck_assert_int_eq(tp.nran, 2);                   /* 1 cancelled 2 */
    ck_assert_int_eq(tp.ran[0], 1);
    ck_assert_int_eq(tp.ran[1], 3);
    ck_assert(!slc_post_pending(&tp.ev[2]));
    ck_assert_int_eq(slc_loop_timeout(&loop, -1), -1);
    slc_loop_done(&loop);
}
END_TEST

/* Work posted by posted work runs in the next round, after a poll, never
   in the same one: an event that keeps posting itself runs once per loop
   iteration, and what was posted behind it still runs in order. */
START_TEST(test_post_from_posted)
{
    slc_loop_t  loop;

    slc_test_post_setup(&loop);
    tp.repost = 3;
    slc_post(&loop, &tp.ev[0], slc_test_posted, (void *) (intptr_t) 0);
    slc_post(&loop, &tp.ev[3], slc_test_posted, (void *) (intptr_t) 3);
    slc_loop_once(&loop, 1000);
    ck_assert_int_eq(tp.nran, 2);
    ck_assert_int_eq(tp.ran[0], 0);
    ck_assert_int_eq(tp.ran[1], 3);
    ck_assert(slc_post_pending(&tp.ev[0]));         /* for the next round */
    ck_assert_int_eq(slc_loop_timeout(&loop, 1000), 0);
    for (int i = 0; i < 3; i++) {
        slc_loop_once(&loop, 1000);
        ck_assert_int_eq(tp.nran, 3 + i);
        ck_assert_int_eq(tp.ran[2 + i], 0);
        ck_assert_uint_eq(tp.round[2 + i], tp.round[1 + i] + 1);
    }
    ck_assert(!slc_post_pending(&tp.ev[0]));
    slc_loop_done(&loop);
}
END_TEST

/* Timers that fire post work that runs before the next wait. */
static slc_loop_t  *slc_test_timer_loop;

static void
slc_test_timer_posts(slc_timer_t *t)
{
    (void) t;
    slc_post(slc_test_timer_loop, &tp.ev[6], slc_test_posted,
        (void *) (intptr_t) 6);
}

START_TEST(test_post_from_timer)
{
    slc_loop_t   loop;
    slc_timer_t  t = { .handler = slc_test_timer_posts };
    uint64_t     end;

    slc_test_post_setup(&loop);
    slc_test_timer_loop = &loop;
    slc_timer_add(&loop, &t, 1);
    end = slc_time_ms() + 2000;
    while (t.armed && slc_time_ms() < end) {
        slc_loop_once(&loop, 5);
    }
    ck_assert(!t.armed);
    /* the iteration that fired the timer ran what it posted */
    ck_assert_int_eq(tp.nran, 1);
    ck_assert_int_eq(tp.ran[0], 6);
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

    tcase_add_test(tc, test_timer_order);
    tcase_add_test(tc, test_timer_del_rearm);
    tcase_add_test(tc, test_timer_far_timeout);
    tcase_add_test(tc, test_post_fifo);
    tcase_add_test(tc, test_post_cancel);
    tcase_add_test(tc, test_post_from_posted);
    tcase_add_test(tc, test_post_from_timer);
    tcase_add_test(tc, test_buf_reuse);
    tcase_add_test(tc, test_buf_compact);
    suite_add_tcase(s, tc);
    return slc_check_run(s);
}
