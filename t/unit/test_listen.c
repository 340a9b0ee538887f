/*
 * Unit tests for listen address parsing (src/event/slc_listen.c).
 */

#include "slc_test.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include "slc_listen.h"

static slc_listen_t  l;
static char          err[256];

static int
slc_test_parse(const char *s)
{
    memset(&l, 0, sizeof(l));
    err[0] = '\0';
    return slc_listen_parse(s, &l, err, sizeof(err));
}

static in_port_t
slc_test_port4(void)
{
    return ntohs(((struct sockaddr_in *) &l.addr)->sin_port);
}

START_TEST(test_port_only)
{
    ck_assert_int_eq(slc_test_parse("4006"), SLC_OK);
    ck_assert_int_eq(l.addr.ss_family, AF_INET);
    ck_assert_uint_eq(slc_test_port4(), 4006);
    ck_assert_uint_eq(((struct sockaddr_in *) &l.addr)->sin_addr.s_addr,
        htonl(INADDR_ANY));
    ck_assert_str_eq(l.text, "4006");
    ck_assert_int_eq(l.is_unix, 0);
}
END_TEST

START_TEST(test_star_and_ipv4)
{
    ck_assert_int_eq(slc_test_parse("*:4007"), SLC_OK);
    ck_assert_uint_eq(slc_test_port4(), 4007);
    ck_assert_uint_eq(((struct sockaddr_in *) &l.addr)->sin_addr.s_addr,
        htonl(INADDR_ANY));

    ck_assert_int_eq(slc_test_parse("127.0.0.1:4008"), SLC_OK);
    ck_assert_uint_eq(slc_test_port4(), 4008);
    ck_assert_uint_eq(((struct sockaddr_in *) &l.addr)->sin_addr.s_addr,
        htonl(INADDR_LOOPBACK));
}
END_TEST

START_TEST(test_ipv6)
{
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &l.addr;

    ck_assert_int_eq(slc_test_parse("[::1]:4009"), SLC_OK);
    ck_assert_int_eq(l.addr.ss_family, AF_INET6);
    ck_assert_uint_eq(ntohs(sin6->sin6_port), 4009);
    ck_assert(IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr));
    ck_assert_uint_eq(l.addrlen, sizeof(struct sockaddr_in6));
}
END_TEST

START_TEST(test_unix)
{
    struct sockaddr_un *sun = (struct sockaddr_un *) &l.addr;

    ck_assert_int_eq(slc_test_parse("unix:/tmp/sluice.sock"), SLC_OK);
    ck_assert_int_eq(l.is_unix, 1);
    ck_assert_int_eq(sun->sun_family, AF_UNIX);
    ck_assert_str_eq(sun->sun_path, "/tmp/sluice.sock");
}
END_TEST

/* Golden table of what must be refused, with a useful message. */
static const char *const slc_test_bad[] = {
    "", "0", "65536", "-1", "40x6", "127.0.0.1:", "127.0.0.1:0",
    "300.0.0.1:4006", "localhost:4006", "[::1]", "[::1]4006", "[::1:4006",
    "[zz]:4006", "unix:", ":4006", "1.2.3.4:99999",
};

START_TEST(test_bad)
{
    const char *s = slc_test_bad[_i];

    ck_assert_msg(slc_test_parse(s) == SLC_ERROR, "\"%s\" accepted", s);
    ck_assert_msg(err[0] != '\0', "no message for \"%s\"", s);
}
END_TEST

START_TEST(test_unix_too_long)
{
    char path[300];

    memset(path, 'a', sizeof(path) - 1);
    path[sizeof(path) - 1] = '\0';
    memcpy(path, "unix:/", 6);
    ck_assert_int_eq(slc_test_parse(path), SLC_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "invalid unix socket path"));
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("listen");
    TCase   *tc = tcase_create("parse");

    tcase_add_test(tc, test_port_only);
    tcase_add_test(tc, test_star_and_ipv4);
    tcase_add_test(tc, test_ipv6);
    tcase_add_test(tc, test_unix);
    tcase_add_loop_test(tc, test_bad, 0, (int) slc_nelems(slc_test_bad));
    tcase_add_test(tc, test_unix_too_long);
    suite_add_tcase(s, tc);
    return slc_check_run(s);
}
