/*
 * Handover channels (src/core/slc_channel.c), in one process: a message
 * and its descriptors sent by the worker of a slot reach the module's
 * handover_recv hook on the reader of that slot, whole and with working
 * descriptors; a slot a reload dropped sends to slot % worker_processes;
 * a full channel says AGAIN; a stopping master turns handover off.
 */

#include "slc_test.h"
#include "slc_test_modules.h"

#include "slc_core.h"
#include "slc_channel.h"
#include "slc_event.h"

#include <sys/socket.h>

static int       slc_test_got;
static uint8_t   slc_test_msg[256];
static size_t    slc_test_len;
static int       slc_test_fds[SLC_CHANNEL_MAX_FDS];
static unsigned  slc_test_nfds;
static int       slc_test_close_fds;    /* close what arrives at once */

static void
slc_test_recv(int *fds, unsigned nfds, const uint8_t *msg, size_t len)
{
    slc_test_got++;
    slc_test_len = len < sizeof(slc_test_msg) ? len : sizeof(slc_test_msg);
    memcpy(slc_test_msg, msg, slc_test_len);
    slc_test_nfds = nfds;
    memcpy(slc_test_fds, fds, nfds * sizeof(int));
    for (unsigned i = 0; slc_test_close_fds && i < nfds; i++) {
        close(fds[i]);
    }
}

static slc_module_t  slc_test_module = {
    .name = "test_channel", .type = SLC_MODULE_CORE,
    .handover_recv = slc_test_recv,
};

SLC_TEST_MODULES("test_channel", &slc_test_module);

static slc_loop_t  slc_test_loop;

static void
slc_test_setup(void)
{
    static int done;

    if (!done) {
        ck_assert_int_eq(slc_loop_init(&slc_test_loop), SLC_OK);
        slc_loop = &slc_test_loop;
        ck_assert_int_eq(slc_channel_grow(2), SLC_OK);
        done = 1;
    }
    slc_channel_publish(2);
    slc_test_got = 0;
}

static void
slc_test_wait(int n)
{
    uint64_t end = slc_time_ms() + 2000;

    while (slc_test_got < n && slc_time_ms() < end) {
        slc_loop_once(slc_loop, 10);
    }
}

/* A message with two descriptors arrives whole; they work. */
START_TEST(test_send_recv)
{
    int  sp[2], pp[2];
    char c = 0;

    slc_test_setup();
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
    ck_assert_int_eq(pipe(pp), 0);
    slc_channel_listen(0);
    ck_assert(slc_channel_enabled(0));
    int fds[2] = { sp[1], pp[0] };
    ck_assert_int_eq(slc_channel_send(0, &slc_test_module, "session-1", 9,
                                      fds, 2), SLC_OK);
    close(sp[1]);                       /* the sender's copies go */
    close(pp[0]);
    slc_test_wait(1);
    ck_assert_int_eq(slc_test_got, 1);
    ck_assert_uint_eq(slc_test_len, 9);
    ck_assert_mem_eq(slc_test_msg, "session-1", 9);
    ck_assert_uint_eq(slc_test_nfds, 2);
    /* the socket and the pipe still lead where they did */
    ck_assert_int_eq(write(sp[0], "x", 1), 1);
    ck_assert_int_eq(read(slc_test_fds[0], &c, 1), 1);
    ck_assert_int_eq(c, 'x');
    ck_assert_int_eq(write(pp[1], "y", 1), 1);
    ck_assert_int_eq(read(slc_test_fds[1], &c, 1), 1);
    ck_assert_int_eq(c, 'y');
    close(sp[0]);
    close(pp[1]);
    close(slc_test_fds[0]);
    close(slc_test_fds[1]);
    slc_channel_unlisten();
}
END_TEST

/* A reload to one worker: slot 1's sessions go to slot 0. */
START_TEST(test_dropped_slot)
{
    int p[2];

    slc_test_setup();
    slc_channel_publish(1);
    ck_assert_int_eq(pipe(p), 0);
    slc_channel_listen(0);
    ck_assert_int_eq(slc_channel_send(1, &slc_test_module, "from-1", 6,
                                      &p[0], 1), SLC_OK);
    close(p[0]);
    slc_test_wait(1);
    ck_assert_int_eq(slc_test_got, 1);
    ck_assert_mem_eq(slc_test_msg, "from-1", 6);
    close(slc_test_fds[0]);
    close(p[1]);
    slc_channel_unlisten();
}
END_TEST

/* Nobody reads: the channel fills, and send says AGAIN, never blocks;
   what was sent waits there for the reader. */
START_TEST(test_full)
{
    static uint8_t big[SLC_CHANNEL_MAX_MSG];
    int            rc = SLC_OK, sent = 0, p[2];

    slc_test_setup();
    ck_assert_int_eq(pipe(p), 0);
    memset(big, 'z', sizeof(big));
    while (sent < 10000
           && (rc = slc_channel_send(1, &slc_test_module, big, sizeof(big),
                                     &p[0], 1)) == SLC_OK)
    {
        sent++;
    }
    close(p[0]);
    close(p[1]);
    ck_assert_int_eq(rc, SLC_AGAIN);
    ck_assert_int_gt(sent, 0);
    slc_channel_listen(1);
    ck_assert_uint_gt(slc_channel_pending(), 0);
    slc_test_close_fds = 1;
    slc_test_wait(sent);
    slc_test_close_fds = 0;
    ck_assert_int_eq(slc_test_got, sent);
    ck_assert_uint_eq(slc_test_len, sizeof(slc_test_msg));
    slc_channel_unlisten();
}
END_TEST

/* No descriptor, or too many: refused, never sent. */
START_TEST(test_refused)
{
    int fds[SLC_CHANNEL_MAX_FDS + 1] = { 0 };

    slc_test_setup();
    ck_assert_int_eq(slc_channel_send(0, &slc_test_module, "x", 1, NULL, 0),
                     SLC_ERROR);
    ck_assert_int_eq(slc_channel_send(0, &slc_test_module, "x", 1, fds,
                                      SLC_CHANNEL_MAX_FDS + 1), SLC_ERROR);
}
END_TEST

/* A stopping master: no handover from then on. */
START_TEST(test_stop)
{
    slc_test_setup();
    ck_assert(slc_channel_enabled(0));
    slc_channel_stop();
    ck_assert(!slc_channel_enabled(0));
    ck_assert(!slc_channel_enabled(1));
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("channel");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_send_recv);
    tcase_add_test(tc, test_dropped_slot);
    tcase_add_test(tc, test_full);
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_stop);
    suite_add_tcase(s, tc);
    return slc_check_run(s);
}
