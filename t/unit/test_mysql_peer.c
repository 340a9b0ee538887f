/*
 * Unit tests for the per-worker table of client addresses
 * (src/mysql/session/slc_mysql_peer.c) and the once-a-second log of bursts
 * (slc_log_burst, src/core/slc_log.c).
 */

#include "slc_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "slc_log.h"
#include "slc_mysql_peer.h"

static struct sockaddr_storage
slc_test_addr(const char *ip, unsigned port)
{
    struct sockaddr_storage ss;
    struct sockaddr_in     *sin = (struct sockaddr_in *) &ss;

    memset(&ss, 0, sizeof(ss));
    sin->sin_family = AF_INET;
    sin->sin_port = htons((uint16_t) port);
    inet_pton(AF_INET, ip, &sin->sin_addr);
    return ss;
}

/* One entry per address whatever the port; held counts handshakes. */
START_TEST(test_peer_handshakes)
{
    struct sockaddr_storage a1 = slc_test_addr("10.0.0.1", 1000);
    struct sockaddr_storage a2 = slc_test_addr("10.0.0.1", 2000);
    struct sockaddr_storage b = slc_test_addr("10.0.0.2", 1000);
    slc_peer_t *p1 = slc_peer_hold(&a1), *p2 = slc_peer_hold(&a2);
    slc_peer_t *q = slc_peer_hold(&b);

    ck_assert_ptr_eq(p1, p2);
    ck_assert_ptr_ne(p1, q);
    ck_assert_uint_eq(slc_peer_handshakes(p1), 2);
    ck_assert_uint_eq(slc_peer_handshakes(q), 1);
    slc_peer_release(p2);
    ck_assert_uint_eq(slc_peer_handshakes(p1), 1);
    slc_peer_release(p1);
    slc_peer_release(q);
}
END_TEST

/* threshold 3, 100 ms doubling to 1 s; a success resets. */
START_TEST(test_peer_delay)
{
    struct sockaddr_storage a = slc_test_addr("10.0.0.3", 1);
    static const uint64_t   want[] = { 0, 0, 0, 100, 200, 400, 800, 1000,
                                       1000 };
    slc_peer_t *p = slc_peer_hold(&a);
    uint64_t    now = 1000000;

    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        ck_assert_uint_eq(slc_peer_auth_delay(p, 3, 100, 1000, now),
                          want[i]);
        slc_peer_auth_failed(p, now);
    }
    ck_assert_uint_eq(slc_peer_auth_delay(p, 0, 100, 1000, now), 0);
    slc_peer_auth_ok(p);
    ck_assert_uint_eq(slc_peer_auth_failures(p, now), 0);
    ck_assert_uint_eq(slc_peer_auth_delay(p, 3, 100, 1000, now), 0);
    slc_peer_release(p);
}
END_TEST

/* Failures outlive the sessions that made them, until forgotten. */
START_TEST(test_peer_forget)
{
    struct sockaddr_storage a = slc_test_addr("10.0.0.4", 1);
    slc_peer_t *p = slc_peer_hold(&a);
    uint64_t    now = 2000000;

    for (int i = 0; i < 5; i++) {
        slc_peer_auth_failed(p, now);
    }
    slc_peer_release(p);
    p = slc_peer_hold(&a);
    ck_assert_uint_eq(slc_peer_auth_failures(p, now + 1000), 5);
    ck_assert_uint_eq(slc_peer_auth_failures(p,
        now + SLC_PEER_FORGET_MS), 0);
    slc_peer_release(p);
}
END_TEST

/* At most SLC_PEER_MAX_FAILED addresses are remembered: the oldest go. */
START_TEST(test_peer_bounded)
{
    struct sockaddr_storage first = slc_test_addr("10.1.0.0", 1);
    uint64_t                now = 3000000;
    slc_peer_t             *p;

    for (unsigned i = 0; i <= SLC_PEER_MAX_FAILED; i++) {
        char ip[32];
        snprintf(ip, sizeof(ip), "10.1.%u.%u", i / 256, i % 256);
        struct sockaddr_storage a = slc_test_addr(ip, 1);
        p = slc_peer_hold(&a);
        slc_peer_auth_failed(p, now + i);
        slc_peer_release(p);
    }
    p = slc_peer_hold(&first);
    ck_assert_uint_eq(slc_peer_auth_failures(p, now + SLC_PEER_MAX_FAILED),
                      0);
    slc_peer_release(p);
}
END_TEST

START_TEST(test_log_burst)
{
    slc_log_burst_t b = { 0 };
    unsigned        held = 99;

    ck_assert_int_eq(slc_log_burst(&b, 5000, &held), 1);
    ck_assert_uint_eq(held, 0);
    for (int i = 0; i < 40; i++) {
        ck_assert_int_eq(slc_log_burst(&b, 5000 + (uint64_t) i, &held), 0);
    }
    ck_assert_int_eq(slc_log_burst(&b, 6000, &held), 1);
    ck_assert_uint_eq(held, 40);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("mysql_peer");
    TCase   *tc = tcase_create("client addresses");

    tcase_add_test(tc, test_peer_handshakes);
    tcase_add_test(tc, test_peer_delay);
    tcase_add_test(tc, test_peer_forget);
    tcase_add_test(tc, test_peer_bounded);
    tcase_add_test(tc, test_log_burst);
    suite_add_tcase(s, tc);
    return slc_check_run(s);
}
