/*
 * Unit tests for the status for a person (modules/status/slc_status_text.c):
 * zero series left out, labels unquoted, bytes a terminal would act on
 * replaced, a histogram summed up by its count, mean and quantile bounds.
 */

#include "slc_test.h"

#include <string.h>

#include "../../modules/status/slc_status_text.c"

static char out[4096];

static const char *
text(const char *metrics)
{
    slc_metrics_t m;

    slc_metrics_init(&m, sizeof(out));
    slc_status_text(metrics, &m);
    ck_assert_int_eq(m.error, SLC_METRICS_OK);
    snprintf(out, sizeof(out), "%s", m.buf != NULL ? m.buf : "");
    slc_metrics_free(&m);
    return out;
}

START_TEST(test_counters)
{
    const char *t = text(
        "# HELP sluice_commands_total Commands.\n"
        "# TYPE sluice_commands_total counter\n"
        "sluice_commands_total{listener=\"a:1\",command=\"query\"} 12\n"
        "sluice_commands_total{listener=\"a:1\",command=\"ping\"} 0\n"
        "# HELP sluice_sessions Open.\n"
        "# TYPE sluice_sessions gauge\n"
        "sluice_sessions{listener=\"a:1\"} 0\n"
        "# TYPE sluice_worker_processes gauge\n"
        "sluice_worker_processes 2\n");

    ck_assert_str_eq(t, "commands_total\n"
                        "  listener=a:1 command=query  12\n"
                        "worker_processes  2\n");
}
END_TEST

START_TEST(test_hostile_label)
{
    const char *t = text(
        "# TYPE sluice_x gauge\n"
        "sluice_x{user=\"a\\\"b\\\\c\x1b[2J\",z=\"1,2\"} 1\n");

    ck_assert_str_eq(t, "x\n  user=a\"b\\c?[2J z=1,2  1\n");
}
END_TEST

START_TEST(test_histogram)
{
    const char *t = text(
        "# TYPE sluice_d_seconds histogram\n"
        "sluice_d_seconds_bucket{route=\"p\",le=\"0.001\"} 50\n"
        "sluice_d_seconds_bucket{route=\"p\",le=\"0.01\"} 98\n"
        "sluice_d_seconds_bucket{route=\"p\",le=\"0.1\"} 99\n"
        "sluice_d_seconds_bucket{route=\"p\",le=\"+Inf\"} 100\n"
        "sluice_d_seconds_sum{route=\"p\"} 0.5\n"
        "sluice_d_seconds_count{route=\"p\"} 100\n"
        "sluice_d_seconds_bucket{route=\"r\",le=\"0.001\"} 0\n"
        "sluice_d_seconds_bucket{route=\"r\",le=\"+Inf\"} 0\n"
        "sluice_d_seconds_sum{route=\"r\"} 0\n"
        "sluice_d_seconds_count{route=\"r\"} 0\n");

    ck_assert_str_eq(t, "d_seconds\n  route=p  count 100 mean 5 ms "
                        "p50 <= 1 ms p99 <= 100 ms\n");
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("status_text");
    TCase *tc = tcase_create("text");

    tcase_add_test(tc, test_counters);
    tcase_add_test(tc, test_hostile_label);
    tcase_add_test(tc, test_histogram);
    suite_add_tcase(s, tc);
    return slc_check_run(s);
}
