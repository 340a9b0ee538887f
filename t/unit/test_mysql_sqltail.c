/*
 * The tail scanner (slc_sql_tail.h).  A golden table of texts with
 * the flags each must give; every text is fed whole, one byte at a time,
 * cut in two at every offset and in seeded random pieces, each piece
 * copied to an exact-size heap buffer (so ASan sees any overread), and
 * must give the same flags.  Then words around the longest the scanner
 * keeps, and a 1 MB text.
 */

#include "slc_test.h"

#include <string.h>

#include "slc_core.h"
#include "slc_sql_classify.h"
#include "slc_mysql_proto.h"
#include "slc_sql_tail.h"

#define MU  SLC_SQL_F_MULTI
#define SF  SLC_SQL_F_STORED_FUNC
#define UT  SLC_SQL_F_UNTERMINATED
#define AM  SLC_SQL_F_AMBIGUOUS
#define SQ  SLC_SQL_F_SEQUENCE
#define ND  SLC_SQL_F_NON_DETERMINISTIC
#define LI  SLC_SQL_F_LAST_ID
#define LF  SLC_SQL_F_LOCK_FUNC
#define SL  SLC_SQL_F_SAME_AS_LAST
#define FR  SLC_SQL_F_FOUND_ROWS
#define NB  SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES

typedef struct {
    const char  *q;
    unsigned     status;
    uint32_t     flags;
} slc_test_tail_t;

#define T(q, f)      { q, 0, f }
#define TS(q, s, f)  { q, s, f }

static const slc_test_tail_t  slc_test_tails[] = {
    /* multi-statements; a ";" in a string or a comment is none */
    T("", 0),
    T("SELECT 1", 0),
    T("SELECT 1;", 0),
    T("SELECT 1; \n\t", 0),
    T("SELECT 1; -- done", 0),
    T("SELECT 1; # done\n", 0),
    T("SELECT 1 ; /* c */ ", 0),
    T("SELECT 1;--", 0),
    T("SELECT 1;--\tx", 0),
    T("SELECT 1; /*!*/", 0),
    T("/*!50100 SELECT 1; */", 0),
    T("SELECT 1; SELECT 2", MU),
    T("SELECT 1;;", MU),
    T("SELECT 1; -", MU),
    T("SELECT 1; --x", MU),
    T("SELECT 1;--- x", MU),
    T("SELECT 1;/", MU),
    T("SELECT 1;x", MU),
    T("SELECT 1;@a", MU),
    T("SELECT 1;@", MU),
    T("SELECT 1;'a'", MU),
    T("SELECT 1; /*! 2 */", MU),
    T("/*! SELECT 1; SELECT 2 */", MU),
    T("SELECT 1---1; SELECT 2", MU),
    T("SELECT ';'", 0),
    T("SELECT \";\"", 0),
    T("SELECT `;`", 0),
    T("SELECT 'it''s; DROP TABLE x'", 0),
    T("SELECT 'a\\'; DROP TABLE t; -- '", 0),
    TS("SELECT 'a\\'; DROP TABLE t; -- '", NB, MU),
    T("SELECT 1 /* ; DELETE FROM t */", 0),
    T("SELECT 1 -- ; DELETE FROM t\n", 0),
    T("SELECT 1 # ; DELETE FROM t", 0),
    T("CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", MU | SF),

    /* calls: a name that is no built-in nor keyword, quoted, qualified */
    T("SELECT f(1)", SF),
    T("SELECT my_fn (1)", SF),
    T("SELECT my_fn /* x */ (1)", SF),
    T("SELECT my_fn\n-- c\n(1)", SF),
    T("SELECT `f`(1)", SF),
    T("SELECT \"f\"(1)", SF),
    T("SELECT db.f(1)", SF),
    T("SELECT `db` . `f` (1)", SF),
    T("SELECT t.count(1) FROM t", SF),
    T("SELECT t.last_insert_id() FROM t", SF),
    T("SELECT status(1)", SF),
    T("SELECT EXTRACT(YEAR FROM f(d)) FROM t", SF),
    T("INSERT INTO db.t (a) SELECT audit(1)", SF),
    T("WITH c AS (SELECT f(1)) SELECT * FROM c", SF),
    T("WITH c (a) AS (SELECT 1) SELECT g(a) FROM c", SF),
    T("SELECT 1 /*! , f(1) */", SF),
    T("SELECT /*!50100f(1)*/", SF),
    T("/*M!100100 SELECT f(1) */", SF),
    T("SELECT * FROM (SELECT 1) AS dt (a)", SF),
    T("SELECT * FROM t1, JSON_TABLE('[1]', '$' COLUMNS (a INT PATH '$')) j",
      SF),
    T("CREATE TABLE t (a INT)", SF),
    /* built-ins and keywords before "(" are no calls */
    T("SELECT COUNT(*), CONCAT(a, b), count (a), Date_Format(d, '%Y') "
      "FROM t", 0),
    T("SELECT CONCAT/**/(a), IFNULL\n(a, 0), ROUND(1.5, 1) FROM t", 0),
    T("SELECT a FROM t WHERE b IN (1, 2) AND c IN (SELECT 1) AND EXISTS "
      "(SELECT 1) AND d = ANY (SELECT 1) AND NOT (e)", 0),
    T("SELECT * FROM t1 JOIN t2 USING (a) WHERE (a, b) IN ((1, 2))", 0),
    T("SELECT CAST(a AS CHAR(3)), CONVERT(b USING utf8) FROM t", 0),
    T("SELECT ROW_NUMBER() OVER (PARTITION BY a ORDER BY b) FROM t", 0),
    T("SELECT lateral (1)", 0),
    T("SELECT CURRENT_TIMESTAMP, 'NOW()' FROM t", 0),

    /* a built-in's call sets its flags: a sequence's is a write */
    T("SELECT NEXTVAL(s)", SQ | ND),
    T("SELECT setval(s, 10), LASTVAL (s)", SQ | ND),
    T("SELECT next value for db.s", SQ),
    T("SELECT PREVIOUS /* c */ VALUE\nFOR s", SQ),
    T("INSERT INTO t VALUES (NEXT VALUE FOR s)", SQ),
    T("SELECT a FROM t ORDER BY NEXT, VALUE FOR UPDATE", 0),
    T("SELECT 'NEXT VALUE FOR s', `nextval`(s)", SF),
    T("SELECT db.nextval(s)", SF),
    T("SELECT LAST_INSERT_ID(), NOW(), FOUND_ROWS(), GET_LOCK('l', 1)",
      LI | ND | FR | SL | LF),
    T("VALUES (1), (2)", 0),
    T("INSERT INTO t VALUES (1), (2)", 0),
    T("INSERT INTO t (a, b) VALUES (1, 2), (3, 4)", 0),
    T("INSERT INTO db.t (a) VALUES (1)", 0),
    T("INSERT INTO `db`.`t` (`a`) VALUES (1)", 0),
    T("INSERT LOW_PRIORITY IGNORE t (a) VALUES (1)", 0),
    T("REPLACE INTO \"t\" (a) VALUES (1)", 0),
    T("LOAD DATA INFILE 'x' INTO TABLE t (a, b)", 0),
    T("SELECT REPLACE(a, 'x', 'y'), INSERT(a, 1, 2, 'z') FROM t", 0),
    T("SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS (a INT PATH '$')) j",
      0),
    T("SELECT MATCH (a) AGAINST ('x' IN BOOLEAN MODE) FROM t", 0),
    T("WITH c (a) AS (SELECT 1), d (b) AS (SELECT 2) SELECT * FROM c, d",
      0),
    T("SELECT 'f(1)', \"g(2)\", `h(3)` FROM t", 0),
    T("SELECT 1 -- f(1)", 0),
    T("SELECT 1 /* f(1) */", 0),
    T("SELECT 1 # f(1)", 0),
    T("SELECT @@session.f(1), @x(2), @'y'(3), @`z`(4)", 0),
    T("SELECT 123(4), 1e(2)", 0),

    /* a quote or comment left open */
    T("SELECT 'abc", UT),
    T("SELECT \"abc", UT),
    T("SELECT `abc", UT),
    T("SELECT 'a''", UT),
    T("SELECT 'a\\'", UT),
    TS("SELECT 'a\\'", NB, 0),
    T("SELECT @'abc", UT),
    T("SELECT 1 /* x", UT),
    T("SELECT 1 /*", UT),
    T("SELECT 1 /*M", UT),
    T("SELECT 1 /*M*/", 0),
    T("SELECT 1 /**/", 0),
    T("/*! SELECT 1", UT),
    T("SELECT /*!", UT),
    T("SELECT /*!1 *", UT),
    T("SELECT 1 -- x", 0),

    /* "\"" in a double-quoted token reads otherwise under ANSI_QUOTES */
    T("SELECT \"a\\\"; DELETE FROM t; -- \"", AM),
    T("SELECT @\"a\\\"b\"", AM),
    T("SELECT \"a\\\\\", \"a\\nb\", 'a\\\"b', `a\\`", 0),
    TS("SELECT \"a\\\" FROM t", NB, 0),
};

#define SLC_TEST_NTAILS  (sizeof(slc_test_tails) / sizeof(slc_test_tails[0]))

static uint64_t  slc_test_rng;   /* xorshift: never 0 */

static uint64_t
slc_test_rand(void)
{
    slc_test_rng ^= slc_test_rng << 13;
    slc_test_rng ^= slc_test_rng >> 7;
    slc_test_rng ^= slc_test_rng << 17;
    return slc_test_rng;
}

/* q[from..to) fed as a piece of its own, in an exact-size heap buffer. */
static void
slc_test_feed(slc_sql_tail_t *t, const char *q, size_t from, size_t to)
{
    uint8_t  *p = malloc(to > from ? to - from : 1);

    ck_assert_ptr_nonnull(p);
    memcpy(p, q + from, to - from);
    slc_sql_tail_feed(t, p, to - from);
    free(p);
}

/* The flags of q fed in pieces of at most `max` bytes (0: whole; pieces
   of random sizes from 0 when rnd). */
static uint32_t
slc_test_flags(const char *q, size_t n, unsigned status, size_t max,
               int rnd)
{
    slc_sql_tail_t  t;
    size_t         i = 0, k;

    slc_sql_tail_init(&t, status);
    while (i < n) {
        k = max == 0 ? n - i : rnd ? (size_t) (slc_test_rand() % (max + 1))
                                   : max;
        if (k > n - i) {
            k = n - i;
        }
        slc_test_feed(&t, q, i, i + k);
        i += k;
    }
    return slc_sql_tail_flags(&t);
}

START_TEST(test_sqltail_golden)
{
    const slc_test_tail_t  *tt = &slc_test_tails[_i];
    size_t                  n = strlen(tt->q);
    uint32_t                f;

    f = slc_test_flags(tt->q, n, tt->status, 0, 0);
    ck_assert_msg(f == tt->flags, "\"%s\": flags 0x%x, want 0x%x", tt->q,
                  f, tt->flags);
    f = slc_test_flags(tt->q, n, tt->status, 1, 0);
    ck_assert_msg(f == tt->flags, "\"%s\" byte by byte: 0x%x", tt->q, f);
    slc_test_rng = 0x9e3779b97f4a7c15ull + _i;
    for (int k = 0; k < 32; k++) {
        f = slc_test_flags(tt->q, n, tt->status, 1 + (size_t) k % 9, 1);
        ck_assert_msg(f == tt->flags, "\"%s\" in random pieces: 0x%x",
                      tt->q, f);
    }
}
END_TEST

/* Cut in two at every offset, and read at the cut as if it ended there:
   but for MULTI and UNTERMINATED (a "-" the rest makes a comment, a quote
   it closes) the flags so far are some of the whole text's. */
START_TEST(test_sqltail_cuts)
{
    const slc_test_tail_t  *tt = &slc_test_tails[_i];
    size_t                  n = strlen(tt->q);

    for (size_t cut = 0; cut <= n; cut++) {
        slc_sql_tail_t  t;
        uint32_t       f;

        slc_sql_tail_init(&t, tt->status);
        slc_test_feed(&t, tt->q, 0, cut);
        f = slc_sql_tail_flags(&t);
        ck_assert_msg((f & ~(MU | UT) & ~tt->flags) == 0,
                      "\"%s\" cut at %zu: 0x%x", tt->q, cut, f);
        slc_test_feed(&t, tt->q, cut, n);
        f = slc_sql_tail_flags(&t);
        ck_assert_msg(f == tt->flags, "\"%s\" cut at %zu: 0x%x", tt->q, cut,
                      f);
    }
}
END_TEST

/* Words about the longest kept: a long one is no built-in nor keyword. */
START_TEST(test_sqltail_long_words)
{
    static const struct {
        size_t    len;
        char      c;
        uint32_t  flags;
    } w[] = {
        { 1, 'a', SF }, { 63, 'a', SF }, { 64, 'a', SF }, { 65, 'a', SF },
        { 1000, 'a', SF }, { 64, '1', 0 }, { 1000, '9', 0 },
    };
    char  q[1100];

    for (size_t i = 0; i < slc_nelems(w); i++) {
        size_t  n = 0;

        n += (size_t) snprintf(q, sizeof(q), "SELECT ");
        memset(q + n, w[i].c, w[i].len);
        n += w[i].len;
        memcpy(q + n, "(1)", 3);
        n += 3;
        for (size_t max = 0; max < 70; max += 7) {
            ck_assert_msg(slc_test_flags(q, n, 0, max, 0) == w[i].flags,
                          "%zu x %c in pieces of %zu", w[i].len, w[i].c,
                          max);
        }
    }
    ck_assert_uint_eq(slc_test_flags("SELECT "
                                     "MASTER_SSL_VERIFY_SERVER_CERT(1)", 39,
                                     0, 5, 0), 0);
}
END_TEST

#define SLC_TEST_MB  (1024 * 1024)

/* A long INSERT, and the same with a call and a statement at its end. */
START_TEST(test_sqltail_big)
{
    char     *q = malloc(SLC_TEST_MB + 64);
    size_t    n;

    ck_assert_ptr_nonnull(q);
    n = (size_t) snprintf(q, 64, "INSERT INTO t (a, b) VALUES ");
    while (n + 32 < SLC_TEST_MB) {
        n += (size_t) snprintf(q + n, 32, "(1, 'x;y(z)\\''), ");
    }
    memcpy(q + n, "(2, \"w\")", 8);
    n += 8;
    ck_assert_uint_eq(slc_test_flags(q, n, 0, 0, 0), 0);
    ck_assert_uint_eq(slc_test_flags(q, n, 0, 4096, 0), 0);
    slc_test_rng = 42;
    ck_assert_uint_eq(slc_test_flags(q, n, 0, 1000, 1), 0);
    memcpy(q + n - 8, "(f(2), 3); DO 1", 15);
    ck_assert_uint_eq(slc_test_flags(q, n + 7, 0, 4096, 0), SF | MU);
    free(q);
}
END_TEST

static Suite *
slc_sql_tail_suite(void)
{
    Suite  *s = suite_create("mysql_sqltail");
    TCase  *tc = tcase_create("sqltail");

    tcase_add_loop_test(tc, test_sqltail_golden, 0, SLC_TEST_NTAILS);
    tcase_add_loop_test(tc, test_sqltail_cuts, 0, SLC_TEST_NTAILS);
    tcase_add_test(tc, test_sqltail_long_words);
    tcase_add_test(tc, test_sqltail_big);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return slc_check_run(slc_sql_tail_suite());
}
