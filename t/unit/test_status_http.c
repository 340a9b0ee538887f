/*
 * Unit tests for the status listener's request parser
 * (modules/status/slc_status_http.c): what it accepts, what each refusal
 * answers, and that a request is taken only when its head is whole.
 */

#include "slc_test.h"

#include <string.h>

#include "../../modules/status/slc_status_http.c"

static int
parse(const char *s, slc_status_req_t *req)
{
    return slc_status_http_parse(s, strlen(s), req);
}

START_TEST(test_accepts)
{
    slc_status_req_t req;
    const char      *two = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /";

    ck_assert_int_eq(parse(two, &req), 34);
    ck_assert_str_eq(req.path, "/metrics");
    ck_assert(!req.head && !req.close);
    ck_assert_int_eq(parse("HEAD /status?a=b HTTP/1.1\n\n", &req), 27);
    ck_assert(req.head);
    ck_assert_str_eq(req.path, "/status");
    ck_assert_int_gt(parse("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n",
                           &req), 0);
    ck_assert(req.close);
    ck_assert_int_gt(parse("GET / HTTP/1.0\r\n\r\n", &req), 0);
    ck_assert(req.close);               /* 1.0: close unless asked */
    ck_assert_int_gt(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n"
                           "\r\n", &req), 0);
    ck_assert(!req.close);
    ck_assert_int_gt(parse("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
                           &req), 0);
}
END_TEST

START_TEST(test_incomplete)
{
    slc_status_req_t req;
    char             big[SLC_STATUS_HEAD_MAX + 10];

    ck_assert_int_eq(parse("", &req), 0);
    ck_assert_int_eq(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n", &req),
        0);
    ck_assert_int_eq(parse("GET /metrics HTTP/1.1\r\n\r", &req), 0);
    memset(big, 'a', sizeof(big));
    memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
    ck_assert_int_eq(slc_status_http_parse(big, sizeof(big), &req), -431);
}
END_TEST

START_TEST(test_refuses)
{
    slc_status_req_t req;
    char             path[400];

    ck_assert_int_eq(parse("POST / HTTP/1.1\r\n\r\n", &req), -405);
    ck_assert_int_eq(parse("get / HTTP/1.1\r\n\r\n", &req), -405);
    ck_assert_int_eq(parse("GET / HTTP/2.0\r\n\r\n", &req), -505);
    ck_assert_int_eq(parse("GET / FOO/1.1\r\n\r\n", &req), -400);
    ck_assert_int_eq(parse("GET / HTTP/1.1 x\r\n\r\n", &req), -400);
    ck_assert_int_eq(parse("GET metrics HTTP/1.1\r\n\r\n", &req), -400);
    ck_assert_int_eq(parse("GET  / HTTP/1.1\r\n\r\n", &req), -400);
    ck_assert_int_eq(parse("GET /\x01 HTTP/1.1\r\n\r\n", &req), -400);
    ck_assert_int_eq(parse("GET / HTTP/1.1\rX\n\r\n", &req), -400);
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\n folded\r\n\r\n", &req), -400);
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\nNo colon\r\n\r\n", &req),
        -400);
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\nContent-Length: 3\r\n\r\n",
                           &req), -400);
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\nTransfer-Encoding: x\r\n\r\n",
                           &req), -400);
    memset(path, 'p', sizeof(path));
    memcpy(path, "GET /", 5);
    memcpy(path + 300, " HTTP/1.1\r\n\r\n", 14);
    path[314] = '\0';
    ck_assert_int_eq(parse(path, &req), -414);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("status_http");
    TCase *tc = tcase_create("parse");

    tcase_add_test(tc, test_accepts);
    tcase_add_test(tc, test_incomplete);
    tcase_add_test(tc, test_refuses);
    suite_add_tcase(s, tc);
    return slc_check_run(s);
}
