/*
 * The session's SETs as the query cache keys them (modules/cache/
 * slc_cache_vars.c, compiled into this test): the last SET of a variable
 * wins (SET x=1; SET x=1000; SET x=1 is SET x=1: the repeat dropped from
 * the key gave 6 rows for 1), the order of the rest is kept, a value that
 * reads the session keeps the whole history, scopes, what stays out of the
 * key (user variables, PASSWORD, GLOBAL, autocommit), isolation levels of
 * the session and of the next transaction, ANSI_QUOTES, the size limit,
 * and the handover's bytes.
 */

#include "slc_test.h"

#include <string.h>

#include "../../modules/cache/slc_cache_vars.c"

/* The entries as one string, "|" between them. */
static const char *
slc_test_entries(const slc_cache_vars_t *v)
{
    static char out[SLC_CACHE_STATE_MAX + 1];
    size_t      k = 0;

    for (uint32_t i = 0; i < v->len; i++) {
        out[k++] = v->buf[i] == '\0' ? '|' : v->buf[i];
    }
    out[k] = '\0';
    return out;
}

/* Apply each SET of a NULL-terminated list to a fresh state. */
static void
slc_test_apply(slc_cache_vars_t *v, const char *const *sets)
{
    slc_cache_vars_init(v);
    for (unsigned i = 0; sets[i] != NULL; i++) {
        slc_cache_vars_set(v, (const uint8_t *) sets[i], strlen(sets[i]));
    }
}

typedef struct {
    const char  *sets[6];
    const char  *entries;
    int          history;
} slc_test_state_t;

static const slc_test_state_t slc_test_states[] = {
    /* the repeat that was dropped from the key */
    { { "SET sql_select_limit=1", "SET sql_select_limit=1000",
        "SET sql_select_limit=1" }, "sql_select_limit=1|", 0 },
    { { "SET sql_select_limit=1", "SET sql_select_limit=1000" },
      "sql_select_limit=1000|", 0 },
    /* one entry per variable, however it is spelt */
    { { "SET @@session.sql_mode='A'", "SET SESSION sql_mode = 'B'",
        "set LOCAL SQL_MODE='C'" }, "sql_mode='C'|", 0 },
    { { "SET NAMES utf8mb4", "SET character_set_results=latin1",
        "SET NAMES utf8mb4" },
      "character_set_results=latin1|names=utf8mb4|", 0 },
    { { "SET NAMES latin1 COLLATE latin1_bin" },
      "names=latin1 COLLATE latin1_bin|", 0 },
    { { "SET CHARACTER SET utf8", "SET CHARSET latin1" },
      "charset=latin1|", 0 },
    /* several at once; scope words carry over */
    { { "SET a=1, SESSION b='x,y', c=-1.5" }, "a=1|b='x,y'|c=-1.5|", 0 },
    { { "SET GLOBAL a=1, b=2, SESSION c=3" }, "c=3|", 0 },
    { { "SET @@global.a=1, b=2" }, "b=2|", 0 },
    /* left out */
    { { "SET @x = 1", "SET @y := (SELECT 1)", "SET autocommit=0" }, "", 0 },
    { { "SET PASSWORD = PASSWORD('secret')" }, "", 0 },
    { { "SET PASSWORD FOR app = 'x'" }, "", 0 },
    { { "SET @x=1, sql_mode=''" }, "sql_mode=''|", 0 },
    { { "SET tx_isolation='READ-COMMITTED'",
        "SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED" }, "",
      0 },
    /* a value that reads the session: the history, nothing removed */
    { { "SET sql_mode='A'", "SET sql_mode=CONCAT(@@sql_mode, ',B')",
        "SET sql_mode='A'" },
      "sql_mode='A'|sql_mode=CONCAT(@@sql_mode, ',B')|sql_mode='A'|", 1 },
    { { "SET x=@y" }, "x=@y|", 1 },
    /* what it cannot read is kept whole */
    { { "/*!40101 SET NAMES utf8 */" }, "?=/*!40101 SET NAMES utf8 */|", 1 },
    { { "SET = 1" }, "?=SET = 1|", 1 },
    { { "SET STATEMENT max_statement_time=1 FOR SELECT 1" },
      "?=SET STATEMENT max_statement_time=1 FOR SELECT 1|", 1 },
    /* a last ";", comments */
    { { "SET a=1;", "SET /* c */ b = 2 -- x\n" }, "a=1|b=2|", 0 },
};

START_TEST(test_states)
{
    const slc_test_state_t *c = &slc_test_states[_i];
    slc_cache_vars_t        v;

    slc_test_apply(&v, c->sets);
    ck_assert_str_eq(slc_test_entries(&v), c->entries);
    ck_assert_int_eq(v.history, c->history);
    ck_assert(!v.overflow);
    ck_assert(v.len == 0 || v.hash == slc_cache_vars_hash(v.buf, v.len));
    slc_cache_vars_reset(&v);
}
END_TEST

START_TEST(test_same_state_same_bytes)
{
    const char *const  a[] = { "SET x=1", "SET x=1000", "SET x=1", NULL };
    const char *const  b[] = { "SET x=1", NULL };
    slc_cache_vars_t   va, vb;

    slc_test_apply(&va, a);
    slc_test_apply(&vb, b);
    ck_assert_uint_eq(va.len, vb.len);
    ck_assert_mem_eq(va.buf, vb.buf, va.len);
    ck_assert(va.hash == vb.hash);
    slc_cache_vars_reset(&va);
    slc_cache_vars_reset(&vb);
}
END_TEST

START_TEST(test_isolation)
{
    static const struct {
        const char  *set;
        uint8_t      iso, next;
    } c[] = {
        { "SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
          SLC_CACHE_ISO_GLOBAL, SLC_CACHE_ISO_RU },
        { "SET TRANSACTION READ ONLY, ISOLATION LEVEL READ COMMITTED",
          SLC_CACHE_ISO_GLOBAL, SLC_CACHE_ISO_RC },
        { "SET TRANSACTION READ ONLY", SLC_CACHE_ISO_GLOBAL,
          SLC_CACHE_ISO_NONE },
        { "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE",
          SLC_CACHE_ISO_SER, SLC_CACHE_ISO_NONE },
        { "SET LOCAL TRANSACTION ISOLATION LEVEL REPEATABLE READ",
          SLC_CACHE_ISO_RR, SLC_CACHE_ISO_NONE },
        { "SET GLOBAL TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
          SLC_CACHE_ISO_GLOBAL, SLC_CACHE_ISO_NONE },
        { "SET tx_isolation = 'read-uncommitted'", SLC_CACHE_ISO_RU,
          SLC_CACHE_ISO_NONE },
        { "SET @@session.transaction_isolation='READ-COMMITTED'",
          SLC_CACHE_ISO_RC, SLC_CACHE_ISO_NONE },
        { "SET tx_isolation = 0", SLC_CACHE_ISO_RU, SLC_CACHE_ISO_NONE },
        { "SET tx_isolation = DEFAULT", SLC_CACHE_ISO_GLOBAL,
          SLC_CACHE_ISO_NONE },
        { "SET tx_isolation = @lvl", SLC_CACHE_ISO_UNKNOWN,
          SLC_CACHE_ISO_NONE },
        { "SET TRANSACTION ISOLATION LEVEL SOMETHING",
          SLC_CACHE_ISO_GLOBAL, SLC_CACHE_ISO_UNKNOWN },
        { "/*!80000 SET TRANSACTION ISOLATION LEVEL READ COMMITTED */",
          SLC_CACHE_ISO_UNKNOWN, SLC_CACHE_ISO_UNKNOWN },
    };
    slc_cache_vars_t v;

    for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        slc_cache_vars_init(&v);
        slc_cache_vars_set(&v, (const uint8_t *) c[i].set, strlen(c[i].set));
        ck_assert_msg(v.iso == c[i].iso && v.iso_next == c[i].next,
            "%s: iso %u next %u", c[i].set, v.iso, v.iso_next);
        slc_cache_vars_reset(&v);
    }
}
END_TEST

START_TEST(test_ansi)
{
    static const struct {
        const char  *set;
        uint8_t      ansi;
    } c[] = {
        { "SET sql_mode='ANSI_QUOTES'", SLC_CACHE_ANSI_ON },
        { "SET sql_mode='STRICT_TRANS_TABLES,ansi'", SLC_CACHE_ANSI_ON },
        { "SET sql_mode = 'ORACLE'", SLC_CACHE_ANSI_ON },
        { "SET sql_mode='POSTGRESQL,NO_ZERO_DATE'", SLC_CACHE_ANSI_ON },
        { "SET sql_mode='STRICT_TRANS_TABLES'", SLC_CACHE_ANSI_OFF },
        { "SET sql_mode=''", SLC_CACHE_ANSI_OFF },
        { "SET sql_mode='ANSI_QUOTESX'", SLC_CACHE_ANSI_OFF },
        { "SET sql_mode=DEFAULT", SLC_CACHE_ANSI_GLOBAL },
        { "SET sql_mode=CONCAT(@@sql_mode, ',X')", SLC_CACHE_ANSI_ON },
        { "SET sql_mode=4", SLC_CACHE_ANSI_ON },
        { "SET GLOBAL sql_mode='ANSI'", SLC_CACHE_ANSI_GLOBAL },
    };
    slc_cache_vars_t v;

    for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        slc_cache_vars_init(&v);
        slc_cache_vars_set(&v, (const uint8_t *) c[i].set, strlen(c[i].set));
        ck_assert_msg(v.ansi == c[i].ansi, "%s: %u", c[i].set, v.ansi);
        slc_cache_vars_reset(&v);
    }
}
END_TEST

/* Repeats stay one entry however many; a history grows to the limit. */
START_TEST(test_bounded)
{
    slc_cache_vars_t v;
    char             q[64];

    slc_cache_vars_init(&v);
    for (unsigned i = 0; i < 10000; i++) {
        int n = snprintf(q, sizeof(q), "SET NAMES utf8mb4");

        slc_cache_vars_set(&v, (const uint8_t *) q, (size_t) n);
    }
    ck_assert_str_eq(slc_test_entries(&v), "names=utf8mb4|");
    for (unsigned i = 0; i < 10000 && !v.overflow; i++) {
        int n = snprintf(q, sizeof(q), "SET x%u = @y", i);

        slc_cache_vars_set(&v, (const uint8_t *) q, (size_t) n);
    }
    ck_assert(v.overflow);
    ck_assert_uint_le(v.len, SLC_CACHE_STATE_MAX);
    slc_cache_vars_reset(&v);
    ck_assert(!v.overflow && v.len == 0 && v.buf == NULL);
}
END_TEST

START_TEST(test_handover)
{
    const char *const  sets[] = {
        "SET sql_mode='ANSI'", "SET x=@y",
        "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
        "SET tx_isolation='READ-UNCOMMITTED'", NULL
    };
    slc_cache_vars_t   a, b;
    uint8_t            buf[4096];
    size_t             n;

    slc_test_apply(&a, sets);
    ck_assert_uint_eq(slc_cache_vars_save(&a, buf, 10), 0);
    n = slc_cache_vars_save(&a, buf, sizeof(buf));
    ck_assert_uint_gt(n, 0);
    slc_cache_vars_init(&b);
    ck_assert_int_eq(slc_cache_vars_restore(&b, buf, n), SLC_OK);
    ck_assert_uint_eq(a.len, b.len);
    ck_assert_mem_eq(a.buf, b.buf, a.len);
    ck_assert(a.hash == b.hash && b.history && b.iso == SLC_CACHE_ISO_RU
              && b.iso_next == SLC_CACHE_ISO_RC
              && b.ansi == SLC_CACHE_ANSI_ON);
    /* truncated, lengths that lie, levels out of range */
    ck_assert_int_eq(slc_cache_vars_restore(&b, buf, n - 1), SLC_ERROR);
    buf[1] = 99;
    ck_assert_int_eq(slc_cache_vars_restore(&b, buf, n), SLC_ERROR);
    ck_assert(b.len == 0 && b.iso == SLC_CACHE_ISO_GLOBAL);
    slc_cache_vars_reset(&a);
    slc_cache_vars_reset(&b);
}
END_TEST

static Suite *
slc_cache_vars_suite(void)
{
    Suite *s = suite_create("cache_vars");
    TCase *tc = tcase_create("core");

    tcase_add_loop_test(tc, test_states, 0,
        (int) (sizeof(slc_test_states) / sizeof(slc_test_states[0])));
    tcase_add_test(tc, test_same_state_same_bytes);
    tcase_add_test(tc, test_isolation);
    tcase_add_test(tc, test_ansi);
    tcase_add_test(tc, test_bounded);
    tcase_add_test(tc, test_handover);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return slc_check_run(slc_cache_vars_suite());
}
