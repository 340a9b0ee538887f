/*
 * Unit tests for the Prometheus text writer (src/core/slc_metrics.c) and
 * the latency histogram (src/core/slc_latency.c): exact output, escaping
 * of what a client may have sent, the naming rules that keep a scrape
 * valid (a writer misused fails rather than print), the bound on its
 * memory, and the buckets' edges.
 */

#include "slc_test.h"

#include <math.h>
#include <string.h>

#include "slc_metrics.h"
#include "slc_latency.h"

START_TEST(test_counter_gauge)
{
    slc_metrics_t      m;
    const char *const  l1[] = { "server", "db/10.0.0.1:3306", NULL };
    const char *const  l2[] = { "server", "b", "state", "up", NULL };

    slc_metrics_init(&m, 1 << 20);
    slc_metrics_family(&m, "sluice_queries_total", SLC_METRIC_COUNTER,
        "Statements answered.");
    slc_metrics_u64(&m, l1, 42);
    slc_metrics_family(&m, "sluice_server_up", SLC_METRIC_GAUGE,
        "Whether the server is in that state.");
    slc_metrics_u64(&m, l2, 1);
    slc_metrics_double(&m, NULL, 0.25);
    ck_assert_int_eq(m.error, SLC_METRICS_OK);
    ck_assert_str_eq(m.buf,
        "# HELP sluice_queries_total Statements answered.\n"
        "# TYPE sluice_queries_total counter\n"
        "sluice_queries_total{server=\"db/10.0.0.1:3306\"} 42\n"
        "# HELP sluice_server_up Whether the server is in that state.\n"
        "# TYPE sluice_server_up gauge\n"
        "sluice_server_up{server=\"b\",state=\"up\"} 1\n"
        "sluice_server_up 0.25\n");
    ck_assert_uint_eq(m.families, 2);
    slc_metrics_free(&m);
}
END_TEST

START_TEST(test_escaping)
{
    slc_metrics_t      m;
    const char *const  l[] = { "user", "a\"b\\c\nd", NULL };

    slc_metrics_init(&m, 1 << 20);
    slc_metrics_family(&m, "sluice_x", SLC_METRIC_GAUGE, "two\nlines \\ \"q\"");
    slc_metrics_u64(&m, l, 1);
    ck_assert_int_eq(m.error, SLC_METRICS_OK);
    ck_assert_str_eq(m.buf,
        "# HELP sluice_x two\\nlines \\\\ \"q\"\n"
        "# TYPE sluice_x gauge\n"
        "sluice_x{user=\"a\\\"b\\\\c\\nd\"} 1\n");
    slc_metrics_free(&m);
}
END_TEST

START_TEST(test_values)
{
    slc_metrics_t m;

    slc_metrics_init(&m, 1 << 20);
    slc_metrics_family(&m, "sluice_v", SLC_METRIC_GAUGE, "v");
    slc_metrics_double(&m, NULL, 0.1);
    slc_metrics_double(&m, NULL, 42);
    slc_metrics_double(&m, NULL, -3.5);
    slc_metrics_double(&m, NULL, 1e300);
    slc_metrics_double(&m, NULL, INFINITY);
    slc_metrics_double(&m, NULL, -INFINITY);
    slc_metrics_double(&m, NULL, NAN);
    slc_metrics_u64(&m, NULL, UINT64_MAX);
    ck_assert_int_eq(m.error, SLC_METRICS_OK);
    ck_assert_str_eq(strstr(m.buf, "gauge\n") + 6,
        "sluice_v 0.1\nsluice_v 42\nsluice_v -3.5\nsluice_v 1e+300\n"
        "sluice_v +Inf\nsluice_v -Inf\nsluice_v NaN\n"
        "sluice_v 18446744073709551615\n");
    slc_metrics_free(&m);
}
END_TEST

/* Each misuse fails the writer: the output would not be a valid scrape. */
static int
misuse(void (*fn)(slc_metrics_t *))
{
    slc_metrics_t m;
    int           e;

    slc_metrics_init(&m, 1 << 20);
    fn(&m);
    e = m.error;
    slc_metrics_free(&m);
    return e;
}

static void m_no_family(slc_metrics_t *m) { slc_metrics_u64(m, NULL, 1); }
static void m_counter_name(slc_metrics_t *m)
{
    slc_metrics_family(m, "sluice_queries", SLC_METRIC_COUNTER, "x");
}
static void m_gauge_total(slc_metrics_t *m)
{
    slc_metrics_family(m, "sluice_up_total", SLC_METRIC_GAUGE, "x");
}
static void m_bad_name(slc_metrics_t *m)
{
    slc_metrics_family(m, "1sluice", SLC_METRIC_GAUGE, "x");
}
static void m_dash(slc_metrics_t *m)
{
    slc_metrics_family(m, "sluice-x", SLC_METRIC_GAUGE, "x");
}
static void m_twice(slc_metrics_t *m)
{
    slc_metrics_family(m, "sluice_x", SLC_METRIC_GAUGE, "x");
    slc_metrics_family(m, "sluice_x", SLC_METRIC_GAUGE, "x");
}
static void m_label(slc_metrics_t *m)
{
    const char *const l[] = { "__name", "x", NULL };

    slc_metrics_family(m, "sluice_x", SLC_METRIC_GAUGE, "x");
    slc_metrics_u64(m, l, 1);
}
static void m_label_colon(slc_metrics_t *m)
{
    const char *const l[] = { "a:b", "x", NULL };

    slc_metrics_family(m, "sluice_x", SLC_METRIC_GAUGE, "x");
    slc_metrics_u64(m, l, 1);
}
static void m_le(slc_metrics_t *m)
{
    const char *const l[] = { "le", "1", NULL };

    slc_metrics_family(m, "sluice_x", SLC_METRIC_GAUGE, "x");
    slc_metrics_u64(m, l, 1);
}
static void m_hist_plain(slc_metrics_t *m)
{
    slc_metrics_family(m, "sluice_h_seconds", SLC_METRIC_HISTOGRAM, "x");
    slc_metrics_u64(m, NULL, 1);
}
static void m_hist_order(slc_metrics_t *m)
{
    const double   le[] = { 1, 0.5 };
    const uint64_t c[] = { 1, 1, 1 };

    slc_metrics_family(m, "sluice_h_seconds", SLC_METRIC_HISTOGRAM, "x");
    slc_metrics_histogram(m, NULL, le, c, 2, 1);
}

START_TEST(test_misuse)
{
    ck_assert_int_eq(misuse(m_no_family), SLC_METRICS_MISUSE);
    ck_assert_int_eq(misuse(m_counter_name), SLC_METRICS_MISUSE);
    ck_assert_int_eq(misuse(m_gauge_total), SLC_METRICS_MISUSE);
    ck_assert_int_eq(misuse(m_bad_name), SLC_METRICS_MISUSE);
    ck_assert_int_eq(misuse(m_dash), SLC_METRICS_MISUSE);
    ck_assert_int_eq(misuse(m_twice), SLC_METRICS_MISUSE);
    ck_assert_int_eq(misuse(m_label), SLC_METRICS_MISUSE);
    ck_assert_int_eq(misuse(m_label_colon), SLC_METRICS_MISUSE);
    ck_assert_int_eq(misuse(m_le), SLC_METRICS_MISUSE);
    ck_assert_int_eq(misuse(m_hist_plain), SLC_METRICS_MISUSE);
    ck_assert_int_eq(misuse(m_hist_order), SLC_METRICS_MISUSE);
    ck_assert(slc_metrics_name_ok("sluice:a_b9", 0));
    ck_assert(!slc_metrics_name_ok("sluice:a", 1));
    ck_assert(!slc_metrics_name_ok("", 0));
}
END_TEST

START_TEST(test_histogram)
{
    slc_metrics_t      m;
    const char *const  l[] = { "route", "cache", NULL };
    const double       le[] = { 0.001, 0.01 };
    const uint64_t     c[] = { 3, 2, 1 };

    slc_metrics_init(&m, 1 << 20);
    slc_metrics_family(&m, "sluice_query_duration_seconds",
        SLC_METRIC_HISTOGRAM, "Query time.");
    slc_metrics_histogram(&m, l, le, c, 2, 0.0175);
    ck_assert_int_eq(m.error, SLC_METRICS_OK);
    ck_assert_str_eq(strstr(m.buf, "histogram\n") + 10,
        "sluice_query_duration_seconds_bucket{route=\"cache\",le=\"0.001\"} 3\n"
        "sluice_query_duration_seconds_bucket{route=\"cache\",le=\"0.01\"} 5\n"
        "sluice_query_duration_seconds_bucket{route=\"cache\",le=\"+Inf\"} 6\n"
        "sluice_query_duration_seconds_sum{route=\"cache\"} 0.0175\n"
        "sluice_query_duration_seconds_count{route=\"cache\"} 6\n");
    slc_metrics_free(&m);
}
END_TEST

START_TEST(test_bounded)
{
    slc_metrics_t m;

    slc_metrics_init(&m, 1000);
    slc_metrics_family(&m, "sluice_x", SLC_METRIC_GAUGE, "x");
    for (int i = 0; i < 1000; i++) {
        slc_metrics_u64(&m, NULL, (uint64_t) i);
    }
    ck_assert_int_eq(m.error, SLC_METRICS_FULL);
    ck_assert_uint_le(m.len, 1000);
    ck_assert_uint_le(m.cap, 1000);
    slc_metrics_free(&m);
}
END_TEST

START_TEST(test_latency)
{
    slc_latency_t h, sum;

    ck_assert_uint_eq(slc_latency_bucket(0), 0);
    ck_assert_uint_eq(slc_latency_bucket(100), 0);
    ck_assert_uint_eq(slc_latency_bucket(101), 1);
    ck_assert_uint_eq(slc_latency_bucket(999), 3);
    ck_assert_uint_eq(slc_latency_bucket(1000), 3);
    ck_assert_uint_eq(slc_latency_bucket(10000000), 15);
    ck_assert_uint_eq(slc_latency_bucket(10000001), 16);
    ck_assert_uint_eq(slc_latency_bucket(UINT64_MAX), 16);
    for (unsigned i = 0; i < SLC_LATENCY_BUCKETS; i++) {
        ck_assert(fabs(slc_latency_le_s[i] * 1e6
                       - (double) slc_latency_le_us[i]) < 1e-6);
        ck_assert_uint_eq(slc_latency_bucket(slc_latency_le_us[i]), i);
        ck_assert_uint_eq(slc_latency_bucket(slc_latency_le_us[i] + 1),
                          i + 1);
    }
    /* the table's guess and its step against a plain search, around
       every power of two */
    for (unsigned k = 0; k < 64; k++) {
        for (int d = -1; d <= 1; d++) {
            uint64_t us = (k == 0 ? 1 : (uint64_t) 1 << k) + (uint64_t) d;
            unsigned want = 0;

            while (want < SLC_LATENCY_BUCKETS
                   && slc_latency_le_us[want] < us) {
                want++;
            }
            ck_assert_uint_eq(slc_latency_bucket(us), want);
        }
    }
    memset(&h, 0, sizeof(h));
    memset(&sum, 0, sizeof(sum));
    slc_latency_observe(&h, 50);
    slc_latency_observe(&h, 300);
    slc_latency_observe(&h, 20000000);
    slc_latency_add_to(&h, &sum);
    slc_latency_add_to(&h, &sum);
    ck_assert_uint_eq(sum.count[0], 2);
    ck_assert_uint_eq(sum.count[2], 2);
    ck_assert_uint_eq(sum.count[SLC_LATENCY_BUCKETS], 2);
    ck_assert_uint_eq(sum.sum_us, 2 * (50 + 300 + 20000000));
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("text");

    tcase_add_test(tc, test_counter_gauge);
    tcase_add_test(tc, test_escaping);
    tcase_add_test(tc, test_values);
    tcase_add_test(tc, test_misuse);
    tcase_add_test(tc, test_histogram);
    tcase_add_test(tc, test_bounded);
    tcase_add_test(tc, test_latency);
    suite_add_tcase(s, tc);
    return slc_check_run(s);
}
