/*
 * Unit tests for the monitor's zone (src/mysql/upstream/slc_mysql_monitor.c): the
 * entry layout, the seqlock (a read never returns a torn copy, a writer
 * killed while writing does not block the next one or the readers for
 * ever), the role a worker derives from an entry, and what a replica is
 * known to hold of its primaries (slc_monitor_sync, for the cache).
 */

#include "slc_test.h"
#include "slc_test_modules.h"
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "slc_core.h"
#include "slc_mysql_monitor.h"

extern slc_module_t slc_core_module;

SLC_TEST_MODULES("core mysql mysql_monitor",
    &slc_core_module, &slc_mysql_module, &slc_mysql_monitor_module);

START_TEST(test_layout)
{
    /* the seqlock word first, the status right after: a worker's read
       copies up to the texts only */
    ck_assert_uint_eq(offsetof(slc_monitor_entry_t, seq), 0);
    ck_assert_uint_eq(offsetof(slc_monitor_entry_t, st), 8);
    ck_assert_uint_eq(offsetof(slc_monitor_entry_t, gtid),
                      8 + sizeof(slc_monitor_status_t));
    ck_assert_uint_eq(sizeof(slc_monitor_status_t), 88);
    ck_assert_uint_eq(sizeof(slc_monitor_entry_t),
                      8 + 88 + 2 * SLC_MONITOR_TEXT);
    /* one entry per stats slot: under 1 MiB in all */
    ck_assert_uint_lt(SLC_STATS_MAX * sizeof(slc_monitor_entry_t), 1 << 20);
}
END_TEST

START_TEST(test_seqlock_basic)
{
    slc_monitor_entry_t e, out;
    uint32_t            seq;

    memset(&e, 0, sizeof(e));
    seq = slc_monitor_write_begin(&e);
    ck_assert_uint_eq(seq, 1);
    ck_assert_uint_eq(e.seq, 1);
    e.st.checked_at = 42;
    strlcpy(e.gtid, "0-1-7", sizeof(e.gtid));
    /* odd: a reader gives up after a few tries rather than read it */
    ck_assert_int_eq(slc_monitor_read(&e, &out, 1), SLC_ERROR);
    slc_monitor_write_end(&e, seq);
    ck_assert_uint_eq(e.seq, 2);
    ck_assert_int_eq(slc_monitor_read(&e, &out, 1), SLC_OK);
    ck_assert_uint_eq(out.st.checked_at, 42);
    ck_assert_str_eq(out.gtid, "0-1-7");
    /* a status-only read leaves the texts alone */
    memset(&out, 'x', sizeof(out));
    ck_assert_int_eq(slc_monitor_read(&e, &out, 0), SLC_OK);
    ck_assert_uint_eq(out.st.checked_at, 42);
    ck_assert_int_eq(out.gtid[0], 'x');
}
END_TEST

/* A writer killed between begin and end left the word odd. */
START_TEST(test_seqlock_takeover)
{
    slc_monitor_entry_t e, out;
    uint32_t            seq;

    memset(&e, 0, sizeof(e));
    e.seq = 5;
    seq = slc_monitor_write_begin(&e);
    ck_assert_uint_eq(seq, 7);
    e.st.checked_at = 9;
    slc_monitor_write_end(&e, seq);
    ck_assert_int_eq(slc_monitor_read(&e, &out, 1), SLC_OK);
    ck_assert_uint_eq(out.st.checked_at, 9);
}
END_TEST

/* A child writes entries whose fields all hold the same number while
   the parent reads: no successful read may mix two writes. */
START_TEST(test_seqlock_concurrent)
{
    slc_monitor_entry_t *e = mmap(NULL, sizeof(*e), PROT_READ | PROT_WRITE,
                                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    slc_monitor_entry_t  out;
    unsigned             ok = 0, torn = 0;
    pid_t                pid;
    int                  status;

    ck_assert_ptr_ne(e, MAP_FAILED);
    memset(e, 0, sizeof(*e));
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        for (uint64_t n = 1; n <= 200000; n++) {
            uint32_t seq = slc_monitor_write_begin(e);
            e->st.checked_at = n;
            e->st.changes = n;
            e->st.seconds_behind = (int64_t) n;
            snprintf(e->gtid, sizeof(e->gtid), "%llu", (unsigned long long) n);
            memset(e->error, (int) ('a' + n % 26), sizeof(e->error) - 1);
            slc_monitor_write_end(e, seq);
        }
        _exit(0);
    }
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (slc_monitor_read(e, &out, 1) != SLC_OK) {
            continue;
        }
        ok++;
        if (out.st.checked_at != out.st.changes
            || (uint64_t) out.st.seconds_behind != out.st.checked_at
            || strtoull(out.gtid, NULL, 10) != out.st.checked_at
            || (out.st.checked_at != 0
                && (out.error[0] != (char) ('a' + out.st.checked_at % 26)
                    || out.error[SLC_MONITOR_TEXT - 2] != out.error[0])))
        {
            torn++;
        }
    }
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_uint_gt(ok, 0);
    ck_assert_uint_eq(torn, 0);
    munmap(e, sizeof(*e));
}
END_TEST

static slc_monitor_conf_t     slc_test_mconf;
static void                  *slc_test_confs[3];
static slc_upstream_t         slc_test_up;
static slc_upstream_server_t  slc_test_us;
static slc_monitor_entry_t    slc_test_e;

static void
slc_test_state(uint64_t checked, uint32_t flags, uint32_t role, int64_t lag)
{
    uint32_t seq = slc_monitor_write_begin(&slc_test_e);

    slc_test_e.st.checked_at = checked;
    slc_test_e.st.flags = flags;
    slc_test_e.st.role = role;
    slc_test_e.st.seconds_behind = lag;
    slc_monitor_write_end(&slc_test_e, seq);
}

static void
slc_test_server(unsigned role, int is_auto, int monitored)
{
    slc_test_confs[slc_module_index(&slc_mysql_monitor_module)]
        = &slc_test_mconf;
    slc_test_up.mod_conf = slc_test_confs;
    memset(&slc_test_us, 0, sizeof(slc_test_us));
    slc_test_us.upstream = &slc_test_up;
    slc_test_us.role = role;
    slc_test_us.role_auto = (unsigned) is_auto;
    slc_test_us.monitor = monitored ? &slc_test_e : NULL;
    memset(&slc_test_e, 0, sizeof(slc_test_e));
}

#define UP    SLC_MONITOR_UP
#define REPL  (SLC_MONITOR_UP | SLC_MONITOR_REPLICA \
               | SLC_MONITOR_IO_RUNNING | SLC_MONITOR_SQL_RUNNING)

START_TEST(test_role_auto)
{
    slc_test_server(SLC_ROLE_ANY, 1, 1);
    slc_test_mconf.max_replication_lag = 0;
    /* not checked yet: no role */
    ck_assert_uint_eq(slc_monitor_role(&slc_test_us), 0);
    slc_test_state(1, UP, SLC_ROLE_PRIMARY, -1);
    ck_assert_uint_eq(slc_monitor_role(&slc_test_us), SLC_ROLE_PRIMARY);
    slc_test_state(2, UP | SLC_MONITOR_READ_ONLY, 0, -1);
    ck_assert_uint_eq(slc_monitor_role(&slc_test_us), 0);
    slc_test_state(3, REPL, SLC_ROLE_REPLICA, 0);
    ck_assert_uint_eq(slc_monitor_role(&slc_test_us), SLC_ROLE_REPLICA);
    /* SQL thread stopped */
    slc_test_state(4, REPL & ~(uint32_t) SLC_MONITOR_SQL_RUNNING,
                   SLC_ROLE_REPLICA, -1);
    ck_assert_uint_eq(slc_monitor_role(&slc_test_us), 0);
    /* lag: within and beyond max_replication_lag */
    slc_test_mconf.max_replication_lag = 10000;
    slc_test_state(5, REPL, SLC_ROLE_REPLICA, 10);
    ck_assert_uint_eq(slc_monitor_role(&slc_test_us), SLC_ROLE_REPLICA);
    slc_test_state(6, REPL, SLC_ROLE_REPLICA, 11);
    ck_assert_uint_eq(slc_monitor_role(&slc_test_us), 0);
    /* down */
    slc_test_state(7, 0, 0, -1);
    ck_assert_uint_eq(slc_monitor_role(&slc_test_us), 0);
}
END_TEST

START_TEST(test_role_explicit)
{
    /* no monitor: as configured */
    slc_test_server(SLC_ROLE_PRIMARY, 0, 0);
    ck_assert_uint_eq(slc_monitor_role(&slc_test_us), SLC_ROLE_PRIMARY);
    /* monitored, not checked yet: as configured */
    slc_test_server(SLC_ROLE_PRIMARY, 0, 1);
    ck_assert_uint_eq(slc_monitor_role(&slc_test_us), SLC_ROLE_PRIMARY);
    /* the configured role holds whatever the server says of itself */
    slc_test_state(1, UP | SLC_MONITOR_READ_ONLY, 0, -1);
    ck_assert_uint_eq(slc_monitor_role(&slc_test_us), SLC_ROLE_PRIMARY);
    /* but down is down */
    slc_test_state(2, 0, 0, -1);
    ck_assert_uint_eq(slc_monitor_role(&slc_test_us), 0);
    /* a replica must replicate */
    slc_test_server(SLC_ROLE_REPLICA, 0, 1);
    slc_test_mconf.max_replication_lag = 0;
    slc_test_state(1, UP, SLC_ROLE_PRIMARY, -1);
    ck_assert_uint_eq(slc_monitor_role(&slc_test_us), 0);
    slc_test_state(2, REPL, SLC_ROLE_REPLICA, 3600);
    ck_assert_uint_eq(slc_monitor_role(&slc_test_us), SLC_ROLE_REPLICA);
}
END_TEST

/* A replica's sync with the primaries of its upstream. */
START_TEST(test_sync)
{
    static slc_monitor_entry_t  pe[2];
    slc_upstream_server_t       us[3];
    slc_upstream_t              up = { .servers = us, .nservers = 3 };
    slc_monitor_entry_t         re;
    slc_monitor_status_t        old;
    uint64_t                    at;

    memset(us, 0, sizeof(us));
    memset(pe, 0, sizeof(pe));
    us[0].monitor = &pe[0];
    us[1].monitor = &pe[1];
    us[2].monitor = NULL;               /* the replica's own: not read */
    pe[0].st.role = SLC_ROLE_PRIMARY;
    pe[0].st.flags = UP;
    pe[0].st.asked_at = 100;
    strcpy(pe[0].gtid, "0-1-10,1-1-5");
    pe[1].st.role = SLC_ROLE_REPLICA;   /* another replica: not compared */
    pe[1].st.flags = REPL;
    strcpy(pe[1].gtid, "0-1-99");

    memset(&old, 0, sizeof(old));
    memset(&re, 0, sizeof(re));
    re.st.role = SLC_ROLE_REPLICA;
    re.st.flags = REPL;
    re.st.answered_at = 150;
    strcpy(re.gtid, "0-1-10");          /* domain 1 missing: behind */
    slc_monitor_sync(&up, &old, &re);
    ck_assert_uint_eq(re.st.synced_at, 0);
    strcpy(re.gtid, "0-1-10,1-1-5");    /* in step with the check of 100 */
    slc_monitor_sync(&up, &old, &re);
    ck_assert_uint_eq(re.st.synced_at, 100);
    ck_assert_uint_eq(re.st.synced_seen, 150);

    /* behind a newer primary check: what was known stays */
    old = re.st;
    pe[0].st.asked_at = 200;
    strcpy(pe[0].gtid, "0-1-12,1-1-5");
    re.st.answered_at = 250;
    strcpy(re.gtid, "0-1-11,1-1-5");
    slc_monitor_sync(&up, &old, &re);
    ck_assert_uint_eq(re.st.synced_at, 100);
    ck_assert_uint_eq(re.st.synced_seen, 150);
    /* a position too long to trust, on either side: nothing new */
    strcpy(re.gtid, "0-1-12,1-1-5");
    pe[0].st.flags |= SLC_MONITOR_GTID_LONG;
    slc_monitor_sync(&up, &old, &re);
    ck_assert_uint_eq(re.st.synced_at, 100);
    pe[0].st.flags &= ~(uint32_t) SLC_MONITOR_GTID_LONG;
    re.st.flags |= SLC_MONITOR_GTID_LONG;
    slc_monitor_sync(&up, &old, &re);
    ck_assert_uint_eq(re.st.synced_at, 100);
    re.st.flags &= ~(uint32_t) SLC_MONITOR_GTID_LONG;
    /* MySQL's form on the primary: not compared */
    strcpy(pe[0].gtid, "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5");
    slc_monitor_sync(&up, &old, &re);
    ck_assert_uint_eq(re.st.synced_at, 100);
    /* caught up */
    strcpy(pe[0].gtid, "0-1-12,1-1-5");
    slc_monitor_sync(&up, &old, &re);
    ck_assert_uint_eq(re.st.synced_at, 200);
    ck_assert_uint_eq(re.st.synced_seen, 250);
    ck_assert_uint_eq(re.st.synced_prev_at, 100);   /* the one before */
    ck_assert_uint_eq(re.st.synced_prev_seen, 150);
    /* a read sent at 240 sees 100 (200 was learnt at 250, after it) */
    us[2].monitor = &re;
    ck_assert_int_eq(slc_monitor_synced(&us[2], 240, &at), SLC_OK);
    ck_assert_uint_eq(at, 100);
    ck_assert_int_eq(slc_monitor_synced(&us[2], 250, &at), SLC_OK);
    ck_assert_uint_eq(at, 200);
    ck_assert_int_eq(slc_monitor_synced(&us[2], 149, &at), SLC_ERROR);
    us[2].monitor = NULL;

    /* two primaries: it must hold both, from the older check */
    old = re.st;
    pe[1].st.role = SLC_ROLE_PRIMARY;
    pe[1].st.flags = UP;
    pe[1].st.asked_at = 300;
    strcpy(pe[1].gtid, "2-3-7");
    pe[0].st.asked_at = 310;
    re.st.answered_at = 320;
    slc_monitor_sync(&up, &old, &re);
    ck_assert_uint_eq(re.st.synced_at, 200);    /* no domain 2 */
    strcpy(re.gtid, "0-1-12,1-1-5,2-3-7");
    slc_monitor_sync(&up, &old, &re);
    ck_assert_uint_eq(re.st.synced_at, 300);
    ck_assert_uint_eq(re.st.synced_seen, 320);
    ck_assert_uint_eq(re.st.synced_prev_at, 200);
    ck_assert_uint_eq(re.st.synced_prev_seen, 250);
    /* a primary down does not count; with none up nothing is learnt */
    old = re.st;
    pe[0].st.flags = 0;
    pe[1].st.flags = 0;
    pe[0].st.asked_at = pe[1].st.asked_at = 400;
    re.st.answered_at = 420;
    slc_monitor_sync(&up, &old, &re);
    ck_assert_uint_eq(re.st.synced_at, 300);
    /* a server that is not a replica learns nothing */
    pe[0].st.flags = UP;
    re.st.role = SLC_ROLE_PRIMARY;
    slc_monitor_sync(&up, &old, &re);
    ck_assert_uint_eq(re.st.synced_at, 300);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("mysql_monitor");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_layout);
    tcase_add_test(tc, test_seqlock_basic);
    tcase_add_test(tc, test_seqlock_takeover);
    tcase_add_test(tc, test_seqlock_concurrent);
    tcase_add_test(tc, test_role_auto);
    tcase_add_test(tc, test_role_explicit);
    tcase_add_test(tc, test_sync);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return slc_check_run(s);
}
