/*
 * readwritesplit's session history (modules/readwritesplit/
 * slc_rwsplit_hist.c, compiled into this test): the key that decides what
 * a later session command replaces, replacement keeping the order of the
 * rest, DEALLOCATE removing its PREPARE, the bounds, and the form a
 * handover carries; and the session's routing state (slc_rwsplit_sess_t,
 * slc_rwsplit_state.c compiled in too): what its owner's functions make
 * of it.
 */

#include "slc_test.h"
#include "slc_test_modules.h"

#include "../../modules/readwritesplit/slc_rwsplit_hist.c"
#include "../../modules/readwritesplit/slc_rwsplit_state.c"

/* What slc_rwsplit_state.c calls in slc_rwsplit.c, not compiled in: no
   test here has a replica backend. */
void
slc_rwsplit_drop_replica(slc_rwsplit_ctx_t *rc, slc_backend_t *b)
{
    (void) rc;
    (void) b;
    ck_abort_msg("no replica backend in this test");
}

slc_rwsplit_copies_t *
slc_rwsplit_copies(slc_rwsplit_ctx_t *rc, const slc_backend_t *b)
{
    (void) rc;
    (void) b;
    ck_abort_msg("no replica backend in this test");
    return NULL;
}

SLC_TEST_MODULES("core", &slc_core_module);

static const struct {
    const char *sql;
    const char *key;
    int         drop;
} slc_test_keys[] = {
    { "SET @a = 1", "set @a", 0 },
    { "set @A:=2", "set @a", 0 },
    { "SET SESSION sql_mode = ''", "set sql_mode", 0 },
    { "SET LOCAL sql_mode=DEFAULT", "set sql_mode", 0 },
    { "SET @@session.sql_mode = 'ANSI'", "set sql_mode", 0 },
    { "SET @@sql_mode = 'ANSI'", "set sql_mode", 0 },
    { "SET @@local.sql_mode = 'ANSI'", "set sql_mode", 0 },
    { "  SET autocommit=0", "set autocommit", 0 },
    { "SET NAMES utf8mb4", "names", 0 },
    { "SET CHARACTER SET latin1", "names", 0 },
    { "SET a = 1, b = 2", "", 0 },
    { "SET a = CONCAT('x', ','), b = 2", "", 0 },
    { "SET a = CONCAT('x', ',')", "set a", 0 },
    { "SET a = IF(1, 2, 3)", "set a", 0 },
    { "SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "", 0 },
    { "/* c */ SET @a = 1", "", 0 },
    { "USE test", "use", 0 },
    { "PREPARE s1 FROM 'SELECT 1'", "prepare s1", 0 },
    { "DEALLOCATE PREPARE S1", "prepare s1", 1 },
    { "DROP PREPARE s1", "prepare s1", 1 },
};

START_TEST(test_key)
{
    const char     *sql = slc_test_keys[_i].sql;
    char            key[SLC_RWSPLIT_KEY_LEN];
    int             drop = -1;
    slc_sql_info_t  si;

    (void) slc_sql_classify((const uint8_t *) sql, strlen(sql), 0, &si);
    slc_rwsplit_hist_key((const uint8_t *) sql, strlen(sql), si.kind, key,
                     &drop);
    ck_assert_str_eq(key, slc_test_keys[_i].key);
    ck_assert_int_eq(drop, slc_test_keys[_i].drop);
}
END_TEST

static slc_rwsplit_ctx_t *
slc_test_ctx(unsigned max)
{
    slc_rwsplit_ctx_t *rc = calloc(1, sizeof(*rc));

    ck_assert_ptr_nonnull(rc);
    rc->hist_max = max;
    rc->hist = calloc(max + 1, sizeof(rc->hist[0]));
    ck_assert_ptr_nonnull(rc->hist);
    return rc;
}

static void
slc_test_free(slc_rwsplit_ctx_t *rc)
{
    slc_rwsplit_hist_clear(rc);
    free(rc->hist);
    free(rc);
}

static const char *
slc_test_add(slc_rwsplit_ctx_t *rc, const char *sql)
{
    slc_sql_info_t si;

    (void) slc_sql_classify((const uint8_t *) sql, strlen(sql), 0, &si);
    return slc_rwsplit_hist_add(rc, (const uint8_t *) sql, strlen(sql),
                            si.kind);
}

START_TEST(test_replace_keeps_order)
{
    slc_rwsplit_ctx_t *rc = slc_test_ctx(3);

    ck_assert_ptr_null(slc_test_add(rc, "SET @a = 1"));
    ck_assert_ptr_null(slc_test_add(rc, "USE db1"));
    ck_assert_ptr_null(slc_test_add(rc, "SET @b = 1"));
    for (int i = 0; i < 100; i++) {
        ck_assert_ptr_null(slc_test_add(rc, "SET @a = 2"));
        ck_assert_ptr_null(slc_test_add(rc, "USE db2"));
    }
    ck_assert_uint_eq(rc->nhist, 3);
    ck_assert_str_eq(rc->hist[0].text, "SET @b = 1");
    ck_assert_str_eq(rc->hist[1].text, "SET @a = 2");
    ck_assert_str_eq(rc->hist[2].text, "USE db2");
    ck_assert_int_eq(slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_PRIMARY_ONLY),
                     0);
    /* a 4th distinct entry does not fit */
    ck_assert_str_eq(slc_test_add(rc, "SET @c = 1"),
                     "session_history_max reached");
    ck_assert_int_eq(slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_PRIMARY_ONLY),
                     1);
    ck_assert_uint_eq(rc->nhist, 3);
    slc_test_free(rc);
}
END_TEST

START_TEST(test_deallocate)
{
    slc_rwsplit_ctx_t *rc = slc_test_ctx(4);

    ck_assert_ptr_null(slc_test_add(rc, "PREPARE s FROM 'SELECT 1'"));
    ck_assert_ptr_null(slc_test_add(rc, "SET @x = 1"));
    ck_assert_ptr_null(slc_test_add(rc, "DEALLOCATE PREPARE s"));
    ck_assert_uint_eq(rc->nhist, 1);
    ck_assert_str_eq(rc->hist[0].text, "SET @x = 1");
    /* several assignments at once are kept as they are, never replaced */
    ck_assert_ptr_null(slc_test_add(rc, "SET @x = 2, @y = 3"));
    ck_assert_ptr_null(slc_test_add(rc, "SET @x = 4"));
    ck_assert_uint_eq(rc->nhist, 2);
    ck_assert_str_eq(rc->hist[0].text, "SET @x = 2, @y = 3");
    ck_assert_str_eq(rc->hist[1].text, "SET @x = 4");
    slc_test_free(rc);
}
END_TEST

START_TEST(test_unkeepable)
{
    slc_rwsplit_ctx_t *rc = slc_test_ctx(4);
    char           big[SLC_RWSPLIT_HIST_LEN + 20];
    const uint8_t  nul[] = "SET @a = 'x\0y'";

    memset(big, ' ', sizeof(big) - 1);
    memcpy(big, "SET @big = 1", 12);
    big[sizeof(big) - 1] = '\0';
    ck_assert_str_eq(slc_test_add(rc, big),
                     "a session command too long to keep");
    ck_assert_int_eq(slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_PRIMARY_ONLY),
                     1);
    slc_rwsplit_state_forget(rc, 0);
    ck_assert_ptr_nonnull(slc_rwsplit_hist_add(rc, nul, sizeof(nul) - 1,
                                           SLC_SQL_SET));
    ck_assert_int_eq(slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_PRIMARY_ONLY),
                     1);
    ck_assert_uint_eq(rc->nhist, 0);
    slc_test_free(rc);
}
END_TEST

START_TEST(test_save_restore)
{
    slc_rwsplit_ctx_t *a = slc_test_ctx(5), *b = slc_test_ctx(5);
    uint8_t        buf[256];
    size_t         n;

    ck_assert_ptr_null(slc_test_add(a, "SET NAMES latin1"));
    ck_assert_ptr_null(slc_test_add(a, "USE `we``ird`"));
    ck_assert_ptr_null(slc_test_add(a, "SET @v = 'a;b'"));
    n = slc_rwsplit_hist_save(a, buf, sizeof(buf));
    ck_assert_uint_gt(n, 0);
    ck_assert_int_eq(slc_rwsplit_hist_restore(b, buf, n), SLC_OK);
    ck_assert_uint_eq(b->nhist, 3);
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_str_eq(a->hist[i].text, b->hist[i].text);
        ck_assert_str_eq(a->hist[i].key, b->hist[i].key);
    }
    /* too small a buffer: nothing, never a part */
    ck_assert_uint_eq(slc_rwsplit_hist_save(a, buf, n - 1), 0);
    /* not NUL-terminated: refused */
    ck_assert_int_eq(slc_rwsplit_hist_restore(b, buf, n - 1), SLC_ERROR);
    slc_test_free(a);
    slc_test_free(b);
}
END_TEST

/* The routing state: what each event makes of it, and its handover. */
START_TEST(test_routing_state)
{
    slc_rwsplit_ctx_t *rc = slc_test_ctx(4);
    const unsigned     only = SLC_RWSPLIT_SESS_PRIMARY_ONLY;
    const unsigned     db = SLC_RWSPLIT_SESS_DB_UNKNOWN;

    ck_assert_uint_eq(rc->sess.flags, 0);
    slc_rwsplit_state_wrote(rc);
    slc_rwsplit_state_temp(rc);
    slc_rwsplit_state_apply(NULL, rc, SLC_RWSPLIT_FX_USERVARS);
    ck_assert(slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_WROTE));
    ck_assert(slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_TEMP));
    ck_assert(slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_USERVARS));
    /* a new primary backend: its temporary tables are gone */
    slc_rwsplit_state_new_primary(rc);
    ck_assert(!slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_TEMP));
    /* a new user forgets all; a reset keeps a database not known */
    slc_rwsplit_state_restored(rc, db | SLC_RWSPLIT_SESS_WROTE);
    slc_rwsplit_state_forget(rc, 1);
    ck_assert_uint_eq(rc->sess.flags, db | only);
    slc_rwsplit_state_forget(rc, 0);
    ck_assert_uint_eq(rc->sess.flags, 0);
    /* the handover carries all but "no new replica" (a session whose
       history did not come along is told apart by its absence) */
    slc_rwsplit_state_wrote(rc);
    slc_rwsplit_state_no_replica(rc);
    ck_assert_uint_eq(slc_rwsplit_state_saved(rc), SLC_RWSPLIT_SESS_WROTE);
    slc_rwsplit_state_restored(rc, 0xff);
    ck_assert_uint_eq(rc->sess.flags, SLC_RWSPLIT_SESS_SAVED);
    slc_rwsplit_state_forget(rc, 0);
    slc_rwsplit_state_unknown(rc);
    ck_assert_uint_eq(rc->sess.flags, only | db | SLC_RWSPLIT_SESS_WROTE);
    slc_test_free(rc);
}
END_TEST

static Suite *
slc_rwsplit_hist_suite(void)
{
    Suite  *s = suite_create("rwsplit_hist");
    TCase  *tc = tcase_create("hist");

    tcase_add_loop_test(tc, test_key, 0, (int) slc_nelems(slc_test_keys));
    tcase_add_test(tc, test_replace_keeps_order);
    tcase_add_test(tc, test_deallocate);
    tcase_add_test(tc, test_unkeepable);
    tcase_add_test(tc, test_save_restore);
    tcase_add_test(tc, test_routing_state);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return slc_check_run(slc_rwsplit_hist_suite());
}
