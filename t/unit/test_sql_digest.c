/*
 * Unit tests for statement digests (src/mysql/sql/slc_sql_digest.c):
 * literals, lists and rows folded, comments and case, the cut and its
 * hash, what is not a literal kept.
 */

#include "slc_test.h"

#include <string.h>

#include "slc_sql_digest.h"

static char             text[256];
static slc_sql_digest_t dg;

static const char *
digest(const char *q)
{
    slc_sql_digest((const uint8_t *) q, strlen(q), 0, text, sizeof(text),
        &dg);
    return text;
}

static uint64_t
hash_of(const char *q)
{
    digest(q);
    return dg.hash;
}

START_TEST(test_literals)
{
    ck_assert_str_eq(digest("SELECT v FROM t WHERE id = 42"),
                     "select v from t where id = ?");
    ck_assert_uint_eq(dg.len, strlen(text));
    ck_assert(!dg.truncated && !dg.bad);
    ck_assert_str_eq(digest("select  v FROM t\n WHERE id=7 -- why\n"),
                     "select v from t where id = ?");
    ck_assert_str_eq(digest("SELECT V FROM T"), "select V from T");
    ck_assert_str_eq(digest("SELECT NOW(), Concat(a)"),
                     "select now (), concat (a)");
    ck_assert_uint_eq(hash_of("SELECT v FROM t WHERE id = 42"),
                      hash_of("select v /* c */ from t where id='x'"));
    ck_assert_str_eq(digest("SELECT x'1F', _utf8mb4'abc', -5, a - 1, "
                            "1.5e3, ?"),
                     "select ?, ?, ?, a - ?, ?, ?");
    ck_assert_str_eq(digest("SELECT f(-1), (+2)"), "select f (?), (?)");
    ck_assert_uint_eq(hash_of("SELECT f(1)"), hash_of("SELECT f (2)"));
    ck_assert_str_eq(digest("SET @a := 5, @@SESSION.sql_mode = 'x'"),
                     "set @a := ?, @@session.sql_mode = ?");
}
END_TEST

START_TEST(test_lists)
{
    ck_assert_str_eq(digest("SELECT * FROM t WHERE id IN (1, 2, 3)"),
                     "select * from t where id in (...)");
    ck_assert_uint_eq(hash_of("SELECT * FROM t WHERE id IN (1,2,3)"),
                      hash_of("select * from t where id in ('a')"));
    ck_assert_str_eq(digest("INSERT INTO t VALUES (1,'a'),(2,'b'), (3, "
                            "NULL)"), "insert into t values (...)");
    ck_assert_uint_eq(hash_of("INSERT INTO t VALUES (1,'a')"),
                      hash_of("insert into t values (1,'a'),(2,'b')"));
    ck_assert_str_eq(digest("SELECT * FROM t WHERE id IN (SELECT id "
                            "FROM u)"),
                     "select * from t where id in (select id from u)");
    ck_assert_str_eq(digest("SELECT * FROM t WHERE id IN (x, 1)"),
                     "select * from t where id in (x, ?)");
    /* rows of literals only are folded */
    ck_assert_str_eq(digest("INSERT INTO t VALUES (NOW(), 1), (2, 3)"),
                     "insert into t values (now (), ?), (?, ?)");
    ck_assert_str_eq(digest("SELECT 1 IN (x'00', _latin1'a')"),
                     "select ? in (...)");
}
END_TEST

START_TEST(test_kept)
{
    ck_assert_str_eq(digest("SELECT `Col` FROM `My Table`"),
                     "select `Col` from `My Table`");
    ck_assert_str_eq(digest("SELECT /*!50000 STRAIGHT_JOIN */ a FROM b"),
                     "select straight_join a from b");
    ck_assert_str_eq(digest("SELECT a.b FROM c.d;"),
                     "select a.b from c.d;");
    digest("SELECT 'open");
    ck_assert(dg.bad);
}
END_TEST

START_TEST(test_cut)
{
    char     small[16];
    char     a[300], b[300], ta[256];
    uint64_t ha;

    slc_sql_digest((const uint8_t *) "SELECT abcdefghij FROM t", 24, 0,
        small, sizeof(small), &dg);
    ck_assert(dg.truncated);
    ck_assert_uint_eq(dg.len, 15);
    ck_assert_str_eq(small, "select abcdefgh");
    memset(a, 'a', sizeof(a));
    memcpy(a, "SELECT ", 7);
    a[sizeof(a) - 1] = '\0';
    memcpy(b, a, sizeof(b));
    b[sizeof(b) - 2] = 'b';
    ha = hash_of(a);
    ck_assert(dg.truncated);
    strcpy(ta, text);
    ck_assert_uint_ne(ha, hash_of(b));  /* they differ past the cut */
    ck_assert_str_eq(ta, text);         /* the same text kept */
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("sql_digest");
    TCase *tc = tcase_create("digest");

    tcase_add_test(tc, test_literals);
    tcase_add_test(tc, test_lists);
    tcase_add_test(tc, test_kept);
    tcase_add_test(tc, test_cut);
    suite_add_tcase(s, tc);
    return slc_check_run(s);
}
