/*
 * readwritesplit's routing decision (modules/readwritesplit/
 * slc_rwsplit_decide.c, compiled into this test): a table of facts and
 * where they send a statement, then statements as the classifier reads
 * them, under the session states that change their route.
 */

#include "slc_test.h"

#include "../../modules/readwritesplit/slc_rwsplit_decide.c"

#define TO_P    SLC_SQL_TO_PRIMARY
#define TO_R    SLC_SQL_TO_REPLICA
#define TO_A    SLC_SQL_TO_ALL
#define TO_L    SLC_SQL_TO_LAST

static const struct {
    slc_rwsplit_facts_t  f;
    slc_rwsplit_go_t     go;
} slc_test_facts[] = {
    /* writes */
    { { .route = TO_P }, SLC_RWSPLIT_GO_PRIMARY },
    { { .route = TO_P, .dml = 1 }, SLC_RWSPLIT_GO_PRIMARY },
    { { .route = TO_P, .primary_lost = 1 }, SLC_RWSPLIT_GO_PRIMARY_GONE },
    /* session commands: everywhere, whatever the state */
    { { .route = TO_A }, SLC_RWSPLIT_GO_ALL },
    { { .route = TO_A, .in_ro_trx = 1 }, SLC_RWSPLIT_GO_ALL },
    { { .route = TO_A, .primary_lost = 1 }, SLC_RWSPLIT_GO_ALL },
    { { .route = TO_L }, SLC_RWSPLIT_GO_LAST },
    /* reads */
    { { .route = TO_R }, SLC_RWSPLIT_GO_REPLICA_KEEP },
    { { .route = TO_R, .ro_trx_begin = 1 }, SLC_RWSPLIT_GO_REPLICA },
    { { .route = TO_R, .primary_lost = 1 }, SLC_RWSPLIT_GO_REPLICA_KEEP },
    { { .route = TO_R, .temp = 1 }, SLC_RWSPLIT_GO_OWN },
    { { .route = TO_R, .uservars = 1 }, SLC_RWSPLIT_GO_REPLICA_KEEP },
    { { .route = TO_R, .reads_uservar = 1 }, SLC_RWSPLIT_GO_REPLICA_KEEP },
    { { .route = TO_R, .uservars = 1, .reads_uservar = 1 },
        SLC_RWSPLIT_GO_OWN },
    /* a hint wins over what the session made on the primary */
    { { .route = TO_R, .hint_replica = 1 }, SLC_RWSPLIT_GO_REPLICA_HINT },
    { { .route = TO_R, .hint_replica = 1, .temp = 1 },
      SLC_RWSPLIT_GO_REPLICA_HINT },
    { { .route = TO_R, .hint_replica = 1, .uservars = 1,
        .reads_uservar = 1 }, SLC_RWSPLIT_GO_REPLICA_HINT },
    /* inside a READ ONLY transaction on a replica: there, to its end */
    { { .route = TO_R, .in_ro_trx = 1 }, SLC_RWSPLIT_GO_RO_TRX },
    { { .route = TO_P, .in_ro_trx = 1 }, SLC_RWSPLIT_GO_RO_TRX },
    { { .route = TO_L, .in_ro_trx = 1 }, SLC_RWSPLIT_GO_RO_TRX },
    { { .route = TO_P, .in_ro_trx = 1, .dml = 1 }, SLC_RWSPLIT_GO_RO_WRITE },
    { { .route = TO_R, .in_ro_trx = 1, .temp = 1 }, SLC_RWSPLIT_GO_RO_TRX },
};

START_TEST(test_facts)
{
    slc_rwsplit_go_t go = slc_rwsplit_decide(&slc_test_facts[_i].f);

    ck_assert_msg(go == slc_test_facts[_i].go, "case %d: %s, not %s", _i,
        slc_rwsplit_go_name(go), slc_rwsplit_go_name(slc_test_facts[_i].go));
}
END_TEST

/* Session states a statement is decided under. */
#define S_AUTO      0       /* autocommit, nothing on the primary */
#define S_TRX       1       /* in a transaction on the primary */
#define S_RO        2       /* in a READ ONLY transaction on a replica */
#define S_TEMP      3       /* temporary tables made */
#define S_VARS      4       /* user variables assigned on the primary */
#define S_LOST      5       /* the primary lost */

static const struct {
    const char   *sql;
    int           state;
    slc_rwsplit_go_t  go;
} slc_test_sql[] = {
    { "SELECT 1", S_AUTO, SLC_RWSPLIT_GO_REPLICA_KEEP },
    { "SELECT v FROM t1 WHERE id = 1", S_AUTO, SLC_RWSPLIT_GO_REPLICA_KEEP },
    { "SELECT v FROM t1 WHERE id = 1", S_TRX, SLC_RWSPLIT_GO_PRIMARY },
    { "SELECT v FROM t1 FOR UPDATE", S_AUTO, SLC_RWSPLIT_GO_PRIMARY },
    { "SELECT v FROM t1", S_TEMP, SLC_RWSPLIT_GO_OWN },
    { "SELECT @x", S_VARS, SLC_RWSPLIT_GO_OWN },
    { "SELECT @x", S_AUTO, SLC_RWSPLIT_GO_REPLICA_KEEP },
    { "SELECT 1", S_VARS, SLC_RWSPLIT_GO_REPLICA_KEEP },
    { "SELECT v FROM t1", S_LOST, SLC_RWSPLIT_GO_REPLICA_KEEP },
    { "INSERT INTO t1 VALUES (1)", S_AUTO, SLC_RWSPLIT_GO_PRIMARY },
    { "INSERT INTO t1 VALUES (1)", S_LOST, SLC_RWSPLIT_GO_PRIMARY_GONE },
    { "UPDATE t1 SET v = 2", S_RO, SLC_RWSPLIT_GO_RO_WRITE },
    { "DELETE FROM t1", S_RO, SLC_RWSPLIT_GO_RO_WRITE },
    { "SELECT v FROM t1", S_RO, SLC_RWSPLIT_GO_RO_TRX },
    { "COMMIT", S_RO, SLC_RWSPLIT_GO_RO_TRX },
    { "SET @a = 1", S_AUTO, SLC_RWSPLIT_GO_ALL },
    { "SET @a = 1", S_RO, SLC_RWSPLIT_GO_ALL },
    { "USE test", S_AUTO, SLC_RWSPLIT_GO_ALL },
    { "START TRANSACTION READ ONLY", S_AUTO, SLC_RWSPLIT_GO_REPLICA },
    { "BEGIN", S_AUTO, SLC_RWSPLIT_GO_PRIMARY },
    { "CREATE TEMPORARY TABLE tt (a INT)", S_AUTO, SLC_RWSPLIT_GO_PRIMARY },
};

START_TEST(test_sql)
{
    const char      *q = slc_test_sql[_i].sql;
    int              st = slc_test_sql[_i].state;
    slc_sql_info_t   si;
    slc_rwsplit_facts_t  f;
    slc_rwsplit_go_t     go;

    ck_assert_int_eq(slc_sql_classify((const uint8_t *) q, strlen(q),
                                      SLC_SERVER_STATUS_AUTOCOMMIT, &si),
                     SLC_OK);
    slc_rwsplit_facts_of(&si, st == S_TRX, st == S_RO, &f);
    f.temp = st == S_TEMP;
    f.uservars = st == S_VARS;
    f.primary_lost = st == S_LOST;
    go = slc_rwsplit_decide(&f);
    ck_assert_msg(go == slc_test_sql[_i].go, "\"%s\" (state %d): %s, not %s",
        q, st, slc_rwsplit_go_name(go),
            slc_rwsplit_go_name(slc_test_sql[_i].go));
}
END_TEST

START_TEST(test_names)
{
    ck_assert_str_eq(slc_rwsplit_go_name(SLC_RWSPLIT_GO_PRIMARY), "primary");
    ck_assert_str_eq(slc_rwsplit_go_name(SLC_RWSPLIT_GO_RO_WRITE),
                     "write in a read-only transaction");
    ck_assert_str_eq(slc_rwsplit_go_name((slc_rwsplit_go_t) 99), "?");
}
END_TEST

static Suite *
slc_rwsplit_decide_suite(void)
{
    Suite  *s = suite_create("rwsplit_decide");
    TCase  *tc = tcase_create("decide");

    tcase_add_loop_test(tc, test_facts, 0, (int) slc_nelems(slc_test_facts));
    tcase_add_loop_test(tc, test_sql, 0, (int) slc_nelems(slc_test_sql));
    tcase_add_test(tc, test_names);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return slc_check_run(slc_rwsplit_decide_suite());
}
