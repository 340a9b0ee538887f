/*
 * The resumable scan of a long statement (slc_mysql_sqltail.h): golden
 * rows of what a text may do beyond a plain read (another statement, a
 * stored function's call, a sequence's, an open quote, ANSI_QUOTES'
 * ambiguity), each fed whole, byte by byte and in random pieces, which
 * must all agree.  A SELECT of 20 KB that the cache sees only the head of
 * emptied the whole cache: this is what tells it was a read.
 */

#include "slc_test.h"

#include <stdlib.h>
#include <string.h>

#include "slc_mysql_proto.h"
#include "slc_mysql_sqltail.h"

#define MU  SLC_SQL_F_MULTI
#define SF  SLC_SQL_F_STORED_FUNC
#define SQ  SLC_SQL_F_SEQUENCE
#define UT  SLC_SQL_F_UNTERMINATED
#define AM  SLC_SQL_F_AMBIGUOUS
#define ND  SLC_SQL_F_NON_DETERMINISTIC

/* the flags that matter here (a built-in's own flags come along) */
#define SLC_TEST_MASK  (MU | SF | SQ | UT | AM)

typedef struct {
    const char  *q;
    uint32_t     flags;
} slc_test_tail_t;

static const slc_test_tail_t slc_test_tails[] = {
    { "SELECT a FROM t WHERE x IN (1, 2, 3)", 0 },
    { "SELECT COUNT(*), CONCAT(a, 'f(') FROM t", 0 },
    { "SELECT 1;", 0 },
    { "SELECT 1;  -- done\n", 0 },
    { "SELECT 1; /* nothing */ ", 0 },
    { "SELECT 1; DELETE FROM t", MU },
    { "SELECT 1;x", MU },
    { "SELECT 1; -1", MU },
    { "SELECT ';' , \"a;b\", `c;d` FROM t", 0 },
    { "SELECT 1 -- ; DELETE\n FROM t", 0 },
    { "SELECT 1 # ; DELETE\n FROM t", 0 },
    { "SELECT 1 /* ; DELETE */ FROM t", 0 },
    { "SELECT 1 /*! ; DELETE FROM t */", MU },
    { "SELECT 1 /*M!100100 ; DELETE FROM t */", MU },
    { "SELECT 2*3 /*!, f(1) */", SF },
    { "SELECT audit(a) FROM t", SF },
    { "SELECT audit (a) FROM t", SF },
    { "SELECT audit /* c */ (a) FROM t", SF },
    { "SELECT `concat`(a) FROM t", SF },
    { "SELECT \"f\"(a) FROM t", SF },
    { "SELECT db.f(a) FROM t", SF },
    { "SELECT a FROM t WHERE b IN (SELECT c FROM u) AND EXISTS (SELECT 1)",
      0 },
    { "SELECT 'audit(' FROM t", 0 },
    { "SELECT 'it''s audit(' FROM t", 0 },
    { "SELECT 'a\\' audit(' FROM t", 0 },
    { "SELECT NEXTVAL(s)", SQ },
    { "SELECT setval(s, 5)", SQ },
    { "SELECT NEXT VALUE FOR s", SQ },
    { "SELECT previous value for s", SQ },
    { "SELECT NEXT, VALUE FOR s", 0 },
    { "SELECT NOW()", 0 },
    { "SELECT 'abc", UT },
    { "SELECT \"abc", UT },
    { "SELECT `abc", UT },
    { "SELECT 1 /* x", UT },
    { "SELECT 1 /*! 2", UT },
    { "SELECT a FROM t WHERE b = \"x\\\"y\"", AM },
    { "SELECT a FROM t WHERE b = 'x\\'y'", 0 },
    { "SELECT a FROM \"t\" WHERE b = \"\"\"\"", 0 },
    { "SELECT x_very_long_name_of_a_function_that_no_server_has_built_in_ever"
      "(1)", SF },
};

#define SLC_TEST_NTAILS  (sizeof(slc_test_tails) / sizeof(slc_test_tails[0]))

/* Feed q in pieces of the sizes `cut` gives, each from its own heap copy
   of exactly that size (ASan sees any read past it). */
static uint32_t
slc_test_feed(const char *q, size_t (*cut)(size_t left))
{
    slc_sqltail_t t;
    size_t        n = strlen(q), off = 0;

    slc_sqltail_init(&t, 0);
    while (off < n) {
        size_t   k = cut(n - off);
        uint8_t *piece = malloc(k);

        ck_assert_ptr_nonnull(piece);
        memcpy(piece, q + off, k);
        slc_sqltail_feed(&t, piece, k);
        free(piece);
        off += k;
    }
    return slc_sqltail_flags(&t) & SLC_TEST_MASK;
}

static size_t slc_test_whole(size_t left) { return left; }
static size_t slc_test_bytes(size_t left) { (void) left; return 1; }
static size_t slc_test_random(size_t left)
{
    return 1 + (size_t) random() % left;
}

START_TEST(test_tails)
{
    const slc_test_tail_t *c = &slc_test_tails[_i];

    ck_assert_msg(slc_test_feed(c->q, slc_test_whole) == c->flags,
        "\"%s\" whole: 0x%x, want 0x%x", c->q,
        slc_test_feed(c->q, slc_test_whole), c->flags);
    ck_assert_msg(slc_test_feed(c->q, slc_test_bytes) == c->flags,
        "\"%s\" byte by byte: 0x%x", c->q,
        slc_test_feed(c->q, slc_test_bytes));
    for (int i = 0; i < 50; i++) {
        ck_assert_msg(slc_test_feed(c->q, slc_test_random) == c->flags,
            "\"%s\" in random pieces", c->q);
    }
}
END_TEST

/* NO_BACKSLASH_ESCAPES: a backslash ends nothing, so the quote closes. */
START_TEST(test_no_backslash_escapes)
{
    static const char q[] = "SELECT 'a\\'; DELETE FROM t";
    slc_sqltail_t     t;

    slc_sqltail_init(&t, SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES);
    slc_sqltail_feed(&t, (const uint8_t *) q, sizeof(q) - 1);
    ck_assert_uint_eq(slc_sqltail_flags(&t) & SLC_TEST_MASK, MU);
    slc_sqltail_init(&t, 0);
    slc_sqltail_feed(&t, (const uint8_t *) q, sizeof(q) - 1);
    ck_assert_uint_eq(slc_sqltail_flags(&t) & SLC_TEST_MASK, UT);
}
END_TEST

/* A long read, as the cache sees one: 20 KB of IN list, and the same with
   a write after it. */
START_TEST(test_long)
{
    size_t  n = 20000, k = 0;
    char   *q = malloc(n + 64);

    ck_assert_ptr_nonnull(q);
    k += (size_t) sprintf(q, "SELECT a FROM t WHERE b IN ('x'");
    while (k < n) {
        k += (size_t) sprintf(q + k, ",'y%zu'", k);
    }
    strcpy(q + k, ")");
    ck_assert_uint_eq(slc_test_feed(q, slc_test_random), 0);
    strcpy(q + k, "); UPDATE t SET a = 1");
    ck_assert_uint_eq(slc_test_feed(q, slc_test_random), MU);
    strcpy(q + k, ") AND audit(b)");
    ck_assert_uint_eq(slc_test_feed(q, slc_test_random), SF);
    free(q);
}
END_TEST

static Suite *
slc_sqltail_suite(void)
{
    Suite *s = suite_create("mysql_sqltail");
    TCase *tc = tcase_create("core");

    srandom(12345);
    tcase_add_loop_test(tc, test_tails, 0, (int) SLC_TEST_NTAILS);
    tcase_add_test(tc, test_no_backslash_escapes);
    tcase_add_test(tc, test_long);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return slc_check_run(slc_sqltail_suite());
}
