/*
 * What a binlog event group wrote (modules/cache/slc_cache_binlog_group.c,
 * compiled into this test with the policy, the store's table hash, the
 * invalidation sets and the session's scratch it stands on): the tables of
 * row events' table maps, lowercased and without repeats; statements
 * classified as a client's would be, under NO_BACKSLASH_ESCAPES or not;
 * what steers a group (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, XA); standalone
 * DDL and the catalog's staleness; XA transactions from their prepare to
 * their XA COMMIT or XA ROLLBACK, and more of them than are remembered;
 * everything at once, and why; and where a QUERY_EVENT's status variables
 * hold the sql_mode.  No catalog: what triggers write is not asked.
 */

#include "slc_test.h"
#include "slc_test_modules.h"

#include <string.h>

#include "../../modules/cache/slc_cache_policy.c"
#include "../../modules/cache/slc_cache_store.c"
#include "../../modules/cache/slc_cache_session.c"
#include "../../modules/cache/slc_cache_inv.c"
#include "../../modules/cache/slc_cache_binlog_group.c"

/* What slc_cache_inv.c calls in slc_cache.c, not compiled in: the group
   only gathers hashes, the reader applies them. */
void
slc_cache_zones_invalidate(const slc_cycle_t *cycle, const uint32_t *hash,
    unsigned n, int all, uint64_t now)
{
    (void) cycle;
    (void) hash;
    (void) n;
    (void) all;
    (void) now;
    ck_abort_msg("a group invalidates nothing itself");
}

SLC_TEST_MODULES("core", &slc_core_module);

/* GTID event flags, as slc_cache_binlog_group.c reads them. */
#define FL_STANDALONE    0x01
#define FL_TRANSACTIONAL 0x04
#define FL_ALLOW_PAR     0x08
#define FL_DDL           0x20
#define FL_PREPARED_XA   0x40
#define FL_COMPLETED_XA  0x80

#define MORE   SLC_BINLOG_GROUP_MORE
#define APPLY  SLC_BINLOG_GROUP_APPLY
#define DONE   SLC_BINLOG_GROUP_DONE

static uint64_t  slc_test_seq;

/* A GTID event of domain 0, server 1, the next seq. */
static void
slc_test_begin(slc_cache_binlog_group_t *g, unsigned flags,
    const slc_cache_binlog_xid_t *xid)
{
    slc_gtid_t gtid = { .domain = 0, .server = 1, .seq = ++slc_test_seq };

    slc_cache_binlog_group_begin(g, &gtid, flags, xid);
    ck_assert_int_eq(g->open, 1);
    ck_assert_uint_eq(g->gtid.seq, slc_test_seq);
    ck_assert_uint_eq(g->flags, flags);
}

static void
slc_test_table(slc_cache_binlog_group_t *g, const char *db, const char *t)
{
    slc_cache_binlog_group_table(g, db, strlen(db), t, strlen(t));
}

/* A statement in the default database "test", sql_mode known. */
static int
slc_test_query_nbe(slc_cache_binlog_group_t *g, const char *q, int nbe)
{
    return slc_cache_binlog_group_query(g, NULL, "test", 4, q, strlen(q),
        nbe, 0);
}

static int
slc_test_query(slc_cache_binlog_group_t *g, const char *q)
{
    return slc_test_query_nbe(g, q, 0);
}

/* Whether the group's set holds the table of key "db.table". */
static int
slc_test_has(const slc_cache_binlog_group_t *g, const char *key)
{
    uint32_t h = slc_cache_table_hash(key, strlen(key));

    for (unsigned i = 0; i < g->t.n; i++) {
        if (g->t.hash[i] == h) {
            return 1;
        }
    }
    return 0;
}

/* The set is empty: nothing named, not everything, no DDL. */
static void
slc_test_empty(const slc_cache_binlog_group_t *g)
{
    ck_assert_uint_eq(g->t.n, 0);
    ck_assert_uint_eq(g->t.all, 0);
    ck_assert_uint_eq(g->t.ddl, 0);
}

/* Everything, for reason why. */
static void
slc_test_all(const slc_cache_binlog_group_t *g, int why)
{
    ck_assert_uint_eq(g->t.all, 1);
    ck_assert_int_eq(g->t.why, why);
}

static slc_cache_binlog_xid_t
slc_test_xid(const char *data)
{
    slc_cache_binlog_xid_t x = { .format = 1, .len = 0 };

    x.len = (uint8_t) strlen(data);
    memcpy(x.data, data, x.len);
    return x;
}


/* --- row events ---------------------------------------------------------- */

/*
 * A row-format group: its table maps name each table once, lowercased
 * ("Test"."T1" and "test"."t1" are one), and its XID applies them.
 */
START_TEST(test_rows)
{
    slc_cache_binlog_group_t g;
    char                     key[SLC_SQL_KEY_MAX];
    ssize_t                  n;

    n = slc_sql_table_key_raw(key, "Test", 4, "T1", 2);
    ck_assert_int_eq(n, 7);
    ck_assert_str_eq(key, "test.t1");

    slc_cache_binlog_group_init(&g);
    slc_test_begin(&g, FL_TRANSACTIONAL | FL_ALLOW_PAR, NULL);
    ck_assert_uint_eq(g.xid.len, 0);
    slc_test_table(&g, "Test", "T1");
    slc_test_table(&g, "test", "t2");
    slc_test_table(&g, "test", "t1");
    ck_assert_uint_eq(g.t.n, 2);
    ck_assert_uint_eq(g.t.all, 0);
    ck_assert_uint_eq(g.t.hash[0], slc_cache_table_hash(key, (size_t) n));
    ck_assert_uint_eq(g.t.hash[1], slc_cache_table_hash("test.t2", 7));
    ck_assert(slc_test_has(&g, "test.t1") && slc_test_has(&g, "test.t2"));
    ck_assert(!slc_test_has(&g, "test.t3"));
    ck_assert_int_eq(slc_cache_binlog_group_xid(&g), APPLY);

    slc_cache_binlog_group_reset(&g);
    ck_assert_int_eq(g.open, 0);
    ck_assert_uint_eq(g.flags, 0);
    slc_test_empty(&g);
    slc_cache_binlog_group_free(&g);
}
END_TEST

/* A group left open (never so on a primary) is not lost: its tables go
   with the next one. */
START_TEST(test_open_group_carried)
{
    slc_cache_binlog_group_t g;
    slc_cache_binlog_xid_t   x = slc_test_xid("x1");

    slc_cache_binlog_group_init(&g);
    slc_test_begin(&g, FL_PREPARED_XA, &x);
    ck_assert_uint_eq(g.xid.len, 2);
    slc_test_table(&g, "test", "t1");
    slc_test_begin(&g, FL_TRANSACTIONAL, NULL);
    ck_assert_uint_eq(g.xid.len, 0);            /* the new group's */
    ck_assert_uint_eq(g.xid.format, 0);
    slc_test_table(&g, "test", "t2");
    ck_assert_uint_eq(g.t.n, 2);
    ck_assert(slc_test_has(&g, "test.t1") && slc_test_has(&g, "test.t2"));
    slc_cache_binlog_group_free(&g);
}
END_TEST


/* --- statements ---------------------------------------------------------- */

/*
 * A statement-based group: BEGIN, the writes, COMMIT.  ROLLBACK ends it
 * too (what the primary logs with ROLLBACK wrote non-transactional
 * tables); ROLLBACK TO and SAVEPOINT do not, and name nothing.
 */
START_TEST(test_statements)
{
    slc_cache_binlog_group_t g;

    slc_cache_binlog_group_init(&g);
    slc_test_begin(&g, FL_ALLOW_PAR, NULL);
    ck_assert_int_eq(slc_test_query(&g, "BEGIN"), MORE);
    slc_test_empty(&g);
    ck_assert_int_eq(slc_test_query(&g, "SAVEPOINT sp1"), MORE);
    ck_assert_int_eq(slc_test_query(&g, "ROLLBACK TO sp1"), MORE);
    ck_assert_int_eq(slc_test_query(&g, "ROLLBACK TO `sp1`"), MORE);
    slc_test_empty(&g);
    ck_assert_int_eq(slc_test_query(&g, "INSERT INTO t3 VALUES (1)"), MORE);
    ck_assert_uint_eq(g.t.n, 1);
    ck_assert(slc_test_has(&g, "test.t3"));
    ck_assert_int_eq(slc_test_query(&g,
        "UPDATE a, b SET a.x = b.x WHERE a.id = b.id"), MORE);
    ck_assert_uint_eq(g.t.n, 3);
    ck_assert(slc_test_has(&g, "test.a") && slc_test_has(&g, "test.b"));
    ck_assert_int_eq(slc_test_query(&g, "SET @v = 1"), MORE);
    ck_assert_uint_eq(g.t.n, 3);
    ck_assert_uint_eq(g.t.all, 0);
    ck_assert_uint_eq(g.t.ddl, 0);
    ck_assert_int_eq(slc_test_query(&g, "COMMIT"), APPLY);
    slc_cache_binlog_group_reset(&g);

    slc_test_begin(&g, FL_ALLOW_PAR, NULL);
    ck_assert_int_eq(slc_test_query(&g, "BEGIN"), MORE);
    ck_assert_int_eq(slc_test_query(&g, "DELETE FROM t4"), MORE);
    ck_assert_int_eq(slc_test_query(&g, "ROLLBACK"), APPLY);
    ck_assert_uint_eq(g.t.n, 1);
    ck_assert(slc_test_has(&g, "test.t4"));
    slc_cache_binlog_group_free(&g);
}
END_TEST

/* Names as the statement writes them: qualified, in capitals, quoted. */
START_TEST(test_statement_names)
{
    slc_cache_binlog_group_t g;

    slc_cache_binlog_group_init(&g);
    slc_test_begin(&g, FL_ALLOW_PAR, NULL);
    ck_assert_int_eq(slc_test_query(&g, "INSERT INTO Other.T VALUES (1)"),
        MORE);
    ck_assert_int_eq(slc_test_query(&g, "UPDATE `T3` SET a = 1"), MORE);
    ck_assert_int_eq(slc_test_query(&g, "REPLACE INTO test.t3 VALUES (2)"),
        MORE);
    ck_assert_uint_eq(g.t.n, 2);
    ck_assert(slc_test_has(&g, "other.t") && slc_test_has(&g, "test.t3"));
    ck_assert(!slc_test_has(&g, "test.t"));
    ck_assert_uint_eq(g.t.all, 0);

    /* LOAD DATA, as EXECUTE_LOAD_QUERY_EVENT carries it */
    ck_assert_int_eq(slc_test_query(&g, "LOAD DATA INFILE "
        "'/tmp/SQL_LOAD-1-2-3.data' INTO TABLE `t6` FIELDS TERMINATED BY "
        "','"), MORE);
    ck_assert_uint_eq(g.t.n, 3);
    ck_assert(slc_test_has(&g, "test.t6"));

    /* no default database: ".t" */
    ck_assert_int_eq(slc_cache_binlog_group_query(&g, NULL, "", 0,
        "DELETE FROM t5", 14, 0, 0), MORE);
    ck_assert_uint_eq(g.t.n, 4);
    ck_assert(slc_test_has(&g, ".t5"));
    slc_cache_binlog_group_free(&g);
}
END_TEST

/*
 * Standalone DDL ends its group at once.  Whether the catalog goes stale
 * (ddl) is slc_cache_ddl_may's: a RENAME yes, an ALTER that renames
 * nothing and TRUNCATE no.
 */
START_TEST(test_ddl)
{
    slc_cache_binlog_group_t g;

    slc_cache_binlog_group_init(&g);
    slc_test_begin(&g, FL_STANDALONE | FL_DDL, NULL);
    ck_assert_int_eq(slc_test_query(&g, "ALTER TABLE t4 ADD COLUMN c INT"),
        APPLY);
    ck_assert_uint_eq(g.t.n, 1);
    ck_assert(slc_test_has(&g, "test.t4"));
    ck_assert_uint_eq(g.t.all, 0);
    ck_assert_uint_eq(g.t.ddl, 0);
    slc_cache_binlog_group_reset(&g);

    slc_test_begin(&g, FL_STANDALONE | FL_DDL, NULL);
    ck_assert_int_eq(slc_test_query(&g, "ALTER TABLE t4 RENAME TO t4b"),
        APPLY);
    ck_assert_uint_eq(g.t.ddl, 1);
    ck_assert(slc_test_has(&g, "test.t4"));
    slc_cache_binlog_group_reset(&g);

    slc_test_begin(&g, FL_STANDALONE | FL_DDL, NULL);
    ck_assert_int_eq(slc_test_query(&g, "RENAME TABLE t5 TO t6"), APPLY);
    ck_assert_uint_eq(g.t.n, 2);
    ck_assert(slc_test_has(&g, "test.t5") && slc_test_has(&g, "test.t6"));
    /* a rename may change what a view reads: everything */
    ck_assert_uint_eq(g.t.all, 1);
    ck_assert_uint_eq(g.t.why, SLC_BINLOG_ALL_STATEMENT);
    ck_assert_uint_eq(g.t.ddl, 1);
    slc_cache_binlog_group_reset(&g);

    slc_test_begin(&g, FL_STANDALONE | FL_DDL, NULL);
    ck_assert_int_eq(slc_test_query(&g, "TRUNCATE TABLE t7"), APPLY);
    ck_assert_uint_eq(g.t.n, 1);
    ck_assert(slc_test_has(&g, "test.t7"));
    ck_assert_uint_eq(g.t.ddl, 0);
    slc_cache_binlog_group_reset(&g);

    slc_cache_binlog_group_free(&g);
}
END_TEST

/* A new table changes no view or trigger; a view, a trigger, a database
   do (these name no table here: everything). */
START_TEST(test_ddl_create)
{
    static const struct {
        const char *q;
        const char *table;      /* named, NULL: everything */
        unsigned    ddl;
    } ddl[] = {
        { "CREATE TABLE t2 (a INT)", "test.t2", 0 },
        { "CREATE TEMPORARY TABLE t9 (a INT)", "test.t9", 0 },
        { "CREATE OR REPLACE VIEW v AS SELECT 1", NULL, 1 },
        { "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW "
          "SET NEW.a = 1", NULL, 1 },
        { "DROP DATABASE x", NULL, 1 },
    };
    slc_cache_binlog_group_t  g;

    slc_cache_binlog_group_init(&g);
    for (size_t i = 0; i < sizeof(ddl) / sizeof(ddl[0]); i++) {
        slc_test_begin(&g, FL_STANDALONE | FL_DDL, NULL);
        ck_assert_msg(slc_test_query(&g, ddl[i].q) == APPLY, "%s", ddl[i].q);
        ck_assert_msg(g.t.ddl == ddl[i].ddl, "%s", ddl[i].q);
        if (ddl[i].table != NULL) {
            ck_assert_msg(!g.t.all && slc_test_has(&g, ddl[i].table), "%s",
                ddl[i].q);
        } else {
            ck_assert_msg(g.t.all && g.t.why == SLC_BINLOG_ALL_STATEMENT,
                "%s", ddl[i].q);
        }
        slc_cache_binlog_group_reset(&g);
    }
    slc_cache_binlog_group_free(&g);
}
END_TEST

/* What the classifier cannot place, or a text that may read otherwise
   (its sql_mode unknown): everything. */
START_TEST(test_unplaceable)
{
    static const char *const  qs[] = {
        "CALL p()", "SELECT f(1)", "SET @v = f(1)", "EXECUTE s",
        "FOO BAR", "INSERT INTO t1 SELECT f(a) FROM t2",
    };
    slc_cache_binlog_group_t  g;

    slc_cache_binlog_group_init(&g);
    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
        slc_test_begin(&g, FL_ALLOW_PAR, NULL);
        ck_assert_msg(slc_test_query(&g, qs[i]) == MORE, "%s", qs[i]);
        ck_assert_msg(g.t.all && g.t.why == SLC_BINLOG_ALL_STATEMENT, "%s",
            qs[i]);
        slc_cache_binlog_group_reset(&g);
    }

    /* a plain INSERT, its sql_mode not known */
    slc_test_begin(&g, FL_ALLOW_PAR, NULL);
    ck_assert_int_eq(slc_cache_binlog_group_query(&g, NULL, "test", 4,
        "INSERT INTO t1 VALUES (1)", 25, 0, 1), MORE);
    slc_test_all(&g, SLC_BINLOG_ALL_STATEMENT);
    ck_assert_uint_eq(g.t.n, 0);
    slc_cache_binlog_group_reset(&g);

    /* ... standalone: applied at once */
    slc_test_begin(&g, FL_STANDALONE, NULL);
    ck_assert_int_eq(slc_cache_binlog_group_query(&g, NULL, "test", 4,
        "INSERT INTO t1 VALUES (1)", 25, 0, 1), APPLY);
    slc_test_all(&g, SLC_BINLOG_ALL_STATEMENT);
    slc_cache_binlog_group_free(&g);
}
END_TEST

/*
 * NO_BACKSLASH_ESCAPES: a backslash escapes nothing, and the quote after
 * it ends the string.  Read without it the same text is left open: it
 * cannot be placed.
 */
START_TEST(test_nbe)
{
    static const char         q[] = "INSERT INTO t8 VALUES ('a\\')";
    slc_cache_binlog_group_t  g;

    slc_cache_binlog_group_init(&g);
    slc_test_begin(&g, FL_ALLOW_PAR, NULL);
    ck_assert_int_eq(slc_test_query_nbe(&g, q, 1), MORE);
    ck_assert_uint_eq(g.t.all, 0);
    ck_assert_uint_eq(g.t.n, 1);
    ck_assert(slc_test_has(&g, "test.t8"));
    slc_cache_binlog_group_reset(&g);

    slc_test_begin(&g, FL_ALLOW_PAR, NULL);
    ck_assert_int_eq(slc_test_query_nbe(&g, q, 0), MORE);
    slc_test_all(&g, SLC_BINLOG_ALL_STATEMENT);
    slc_cache_binlog_group_reset(&g);

    /* the other way round: 'a\'' is one string without NBE only */
    slc_test_begin(&g, FL_ALLOW_PAR, NULL);
    ck_assert_int_eq(slc_test_query_nbe(&g,
        "INSERT INTO t9 VALUES ('a\\'')", 0), MORE);
    ck_assert_uint_eq(g.t.all, 0);
    ck_assert(slc_test_has(&g, "test.t9"));
    ck_assert_int_eq(slc_test_query_nbe(&g,
        "INSERT INTO t9 VALUES ('a\\'')", 1), MORE);
    slc_test_all(&g, SLC_BINLOG_ALL_STATEMENT);
    slc_cache_binlog_group_free(&g);
}
END_TEST


/* --- XA ------------------------------------------------------------------ */

/* Prepare xid x with a table map of test.table; the group ends DONE.  The
   xid is the GTID event's: XA END's text is not read. */
static void
slc_test_prepare(slc_cache_binlog_group_t *g,
    const slc_cache_binlog_xid_t *x, const char *table)
{
    slc_test_begin(g, FL_PREPARED_XA, x);
    slc_test_table(g, "test", table);
    ck_assert_int_eq(slc_test_query(g, "XA END X'7831',X'',1"), MORE);
    ck_assert_int_eq(slc_cache_binlog_group_xa_prepare(g), DONE);
    slc_cache_binlog_group_reset(g);
}

/* The XA COMMIT or XA ROLLBACK group of x: what it returns. */
static int
slc_test_complete(slc_cache_binlog_group_t *g,
    const slc_cache_binlog_xid_t *x, const char *q)
{
    slc_test_begin(g, FL_COMPLETED_XA | FL_STANDALONE, x);
    slc_test_empty(g);
    return slc_test_query(g, q);
}

/*
 * A prepared XA transaction's tables wait for its XA COMMIT, a group of
 * its own that names none; its XA ROLLBACK applies nothing.
 */
START_TEST(test_xa)
{
    slc_cache_binlog_group_t g;
    slc_cache_binlog_xid_t   x1 = slc_test_xid("x1"), x2 = slc_test_xid("x2");

    slc_cache_binlog_group_init(&g);
    slc_test_prepare(&g, &x1, "t10");
    ck_assert_uint_eq(g.nxa, 1);
    slc_test_empty(&g);
    slc_test_prepare(&g, &x2, "t11");
    ck_assert_uint_eq(g.nxa, 2);

    ck_assert_int_eq(slc_test_complete(&g, &x1, "XA COMMIT X'7831',X'',1"),
        APPLY);
    ck_assert_uint_eq(g.t.n, 1);
    ck_assert(slc_test_has(&g, "test.t10"));
    ck_assert_uint_eq(g.t.all, 0);
    ck_assert_uint_eq(g.nxa, 1);
    slc_cache_binlog_group_reset(&g);

    ck_assert_int_eq(slc_test_complete(&g, &x2,
        "XA ROLLBACK X'7832',X'',1"), DONE);
    slc_test_empty(&g);
    ck_assert_uint_eq(g.nxa, 0);
    slc_cache_binlog_group_reset(&g);

    /* committed once: a second XA COMMIT of it is of an unknown prepare */
    ck_assert_int_eq(slc_test_complete(&g, &x1, "XA COMMIT X'7831',X'',1"),
        APPLY);
    slc_test_all(&g, SLC_BINLOG_ALL_XA);
    ck_assert_uint_eq(g.t.n, 0);
    slc_cache_binlog_group_reset(&g);

    /* an XA ROLLBACK of one not known wrote nothing either way */
    ck_assert_int_eq(slc_test_complete(&g, &x2,
        "XA ROLLBACK X'7832',X'',1"), DONE);
    slc_test_empty(&g);
    slc_cache_binlog_group_free(&g);
}
END_TEST

/* The same xid prepared again (its first XA ROLLBACK not seen): the
   newer prepare's tables. */
START_TEST(test_xa_again)
{
    slc_cache_binlog_group_t g;
    slc_cache_binlog_xid_t   x1 = slc_test_xid("x1"), other;

    other = slc_test_xid("x1");
    other.format = 2;
    slc_cache_binlog_group_init(&g);
    slc_test_prepare(&g, &x1, "t10");
    slc_test_prepare(&g, &x1, "t12");
    ck_assert_uint_eq(g.nxa, 1);
    /* the same bytes under another format are another xid */
    ck_assert_int_eq(slc_test_complete(&g, &other,
        "XA COMMIT X'7831',X'',2"), APPLY);
    slc_test_all(&g, SLC_BINLOG_ALL_XA);
    slc_cache_binlog_group_reset(&g);
    ck_assert_int_eq(slc_test_complete(&g, &x1, "xa commit X'7831',X'',1"),
        APPLY);
    ck_assert_uint_eq(g.t.n, 1);
    ck_assert(slc_test_has(&g, "test.t12"));
    ck_assert(!slc_test_has(&g, "test.t10"));
    ck_assert_uint_eq(g.t.all, 0);
    ck_assert_uint_eq(g.nxa, 0);
    slc_cache_binlog_group_free(&g);
}
END_TEST

/* What a prepare could not place, and its staleness of the catalog, wait
   for its XA COMMIT too. */
START_TEST(test_xa_everything)
{
    slc_cache_binlog_group_t g;
    slc_cache_binlog_xid_t   x1 = slc_test_xid("x1");

    slc_cache_binlog_group_init(&g);
    slc_test_begin(&g, FL_PREPARED_XA, &x1);
    slc_test_table(&g, "test", "t10");
    ck_assert_int_eq(slc_test_query(&g, "CALL p()"), MORE);
    ck_assert_uint_eq(g.t.ddl, 1);
    ck_assert_int_eq(slc_cache_binlog_group_xa_prepare(&g), DONE);
    slc_cache_binlog_group_reset(&g);

    ck_assert_int_eq(slc_test_complete(&g, &x1, "XA COMMIT X'7831',X'',1"),
        APPLY);
    slc_test_all(&g, SLC_BINLOG_ALL_STATEMENT);
    ck_assert_uint_eq(g.t.ddl, 1);
    ck_assert_uint_eq(g.nxa, 0);
    slc_cache_binlog_group_free(&g);
}
END_TEST

/*
 * More prepared XA transactions than are remembered: the one that did
 * not fit is lost (its XA COMMIT will invalidate everything), the others
 * are kept, and free releases what they hold.
 */
START_TEST(test_xa_lost)
{
    slc_cache_binlog_group_t g;
    slc_cache_binlog_xid_t   x;
    char                     name[16];

    slc_cache_binlog_group_init(&g);
    for (unsigned i = 0; i < SLC_BINLOG_XA_MAX; i++) {
        snprintf(name, sizeof(name), "x%u", i);
        x = slc_test_xid(name);
        snprintf(name, sizeof(name), "t%u", i);
        slc_test_prepare(&g, &x, name);
        ck_assert_uint_eq(g.xa_lost, 0);
    }
    ck_assert_uint_eq(g.nxa, SLC_BINLOG_XA_MAX);
    x = slc_test_xid("lost");
    slc_test_prepare(&g, &x, "tlost");
    ck_assert_uint_eq(g.xa_lost, 1);
    ck_assert_uint_eq(g.nxa, SLC_BINLOG_XA_MAX);

    ck_assert_int_eq(slc_test_complete(&g, &x, "XA COMMIT X'6c6f7374'"),
        APPLY);
    slc_test_all(&g, SLC_BINLOG_ALL_XA);
    slc_cache_binlog_group_reset(&g);

    x = slc_test_xid("x7");
    ck_assert_int_eq(slc_test_complete(&g, &x, "XA COMMIT X'7837',X'',1"),
        APPLY);
    ck_assert_uint_eq(g.t.all, 0);
    ck_assert_uint_eq(g.t.n, 1);
    ck_assert(slc_test_has(&g, "test.t7"));
    ck_assert_uint_eq(g.nxa, SLC_BINLOG_XA_MAX - 1);
    slc_cache_binlog_group_reset(&g);
    slc_cache_binlog_group_free(&g);
    ck_assert_uint_eq(g.nxa, 0);
}
END_TEST


/* --- everything at once -------------------------------------------------- */

/* Up to SLC_BINLOG_GROUP_TABLES tables are named; one more: all. */
START_TEST(test_too_many_tables)
{
    slc_cache_binlog_group_t g;
    char                     name[16];

    slc_cache_binlog_group_init(&g);
    slc_test_begin(&g, FL_TRANSACTIONAL, NULL);
    for (unsigned i = 0; i < SLC_BINLOG_GROUP_TABLES; i++) {
        snprintf(name, sizeof(name), "t%u", i);
        slc_test_table(&g, "test", name);
        slc_test_table(&g, "TEST", name);       /* a repeat */
    }
    ck_assert_uint_eq(g.t.n, SLC_BINLOG_GROUP_TABLES);
    ck_assert_uint_eq(g.t.all, 0);
    ck_assert(slc_test_has(&g, "test.t0") && slc_test_has(&g, "test.t255"));
    slc_test_table(&g, "test", "one_more");
    slc_test_all(&g, SLC_BINLOG_ALL_TABLES);
    ck_assert_int_eq(slc_cache_binlog_group_xid(&g), APPLY);
    slc_cache_binlog_group_free(&g);
}
END_TEST

/* A name longer than the server allows, in a table map or as the
   default database: all. */
START_TEST(test_long_names)
{
    slc_cache_binlog_group_t g;
    char                     name[SLC_SQL_NAME_MAX + 2];

    memset(name, 'a', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';              /* 257 bytes */
    slc_cache_binlog_group_init(&g);

    slc_test_begin(&g, FL_TRANSACTIONAL, NULL);
    slc_test_table(&g, "test", name + 1);       /* 256: fits */
    slc_test_table(&g, name + 1, "t1");
    ck_assert_uint_eq(g.t.all, 0);
    ck_assert_uint_eq(g.t.n, 2);
    slc_test_table(&g, "test", name);
    slc_test_all(&g, SLC_BINLOG_ALL_STATEMENT);
    slc_cache_binlog_group_reset(&g);

    slc_test_begin(&g, FL_TRANSACTIONAL, NULL);
    slc_test_table(&g, name, "t1");
    slc_test_all(&g, SLC_BINLOG_ALL_STATEMENT);
    slc_cache_binlog_group_reset(&g);

    slc_test_begin(&g, FL_ALLOW_PAR, NULL);
    ck_assert_int_eq(slc_cache_binlog_group_query(&g, NULL, name,
        strlen(name), "INSERT INTO t1 VALUES (1)", 25, 0, 0), MORE);
    slc_test_all(&g, SLC_BINLOG_ALL_STATEMENT);
    slc_cache_binlog_group_free(&g);
}
END_TEST

/* An event that cannot be read: all, and the first reason stays. */
START_TEST(test_unreadable)
{
    slc_cache_binlog_group_t g;
    char                     name[16];

    slc_cache_binlog_group_init(&g);
    slc_test_begin(&g, FL_TRANSACTIONAL, NULL);
    slc_test_table(&g, "test", "t1");
    slc_cache_binlog_group_unreadable(&g);
    slc_test_all(&g, SLC_BINLOG_ALL_EVENT);
    ck_assert_int_eq(slc_test_query(&g, "CALL p()"), MORE);
    for (unsigned i = 0; i <= SLC_BINLOG_GROUP_TABLES; i++) {
        snprintf(name, sizeof(name), "t%u", i);
        slc_test_table(&g, "test", name);
    }
    slc_test_all(&g, SLC_BINLOG_ALL_EVENT);
    slc_cache_binlog_group_reset(&g);
    slc_test_empty(&g);

    /* outside any group */
    slc_cache_binlog_group_unreadable(&g);
    slc_test_all(&g, SLC_BINLOG_ALL_EVENT);
    ck_assert_int_eq(g.open, 0);
    slc_cache_binlog_group_free(&g);
}
END_TEST


/* --- the sql_mode of a statement ----------------------------------------- */

START_TEST(test_sql_mode)
{
    static const uint8_t  both[] = {
        0x00, 0x00, 0x00, 0x00, 0x40,
        0x01, 0x04, 0x00, 0x10, 0x00, 0x00, 0x01, 0x00, 0x80,
        0x06, 0x03, 's', 't', 'd',
    };
    static const uint8_t  alone[] = {
        0x01, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    static const uint8_t  other[] = {
        0x04, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    static const uint8_t  cut[] = { 0x01, 0x00, 0x00, 0x10 };
    static const uint8_t  flags2[] = { 0x00, 0x00, 0x00, 0x00, 0x40 };
    uint64_t              mode = 0;

    ck_assert_int_eq(slc_cache_binlog_sql_mode(both, sizeof(both), &mode),
        SLC_OK);
    ck_assert_uint_eq(mode, 0x8000010000100004ULL);
    ck_assert(mode & SLC_BINLOG_MODE_NBE);
    ck_assert(mode & SLC_BINLOG_MODE_QUOTES);
    ck_assert_int_eq(slc_cache_binlog_sql_mode(alone, sizeof(alone), &mode),
        SLC_OK);
    ck_assert_uint_eq(mode, SLC_BINLOG_MODE_NBE);
    ck_assert(!(mode & SLC_BINLOG_MODE_QUOTES));

    ck_assert_int_eq(slc_cache_binlog_sql_mode(other, sizeof(other), &mode),
        SLC_ERROR);
    ck_assert_int_eq(slc_cache_binlog_sql_mode(cut, sizeof(cut), &mode),
        SLC_ERROR);
    ck_assert_int_eq(slc_cache_binlog_sql_mode(alone, sizeof(alone) - 1,
        &mode), SLC_ERROR);
    ck_assert_int_eq(slc_cache_binlog_sql_mode(flags2, sizeof(flags2),
        &mode), SLC_ERROR);
    ck_assert_int_eq(slc_cache_binlog_sql_mode(flags2, 3, &mode),
        SLC_ERROR);
    ck_assert_int_eq(slc_cache_binlog_sql_mode(alone, 0, &mode), SLC_ERROR);
}
END_TEST


static Suite *
slc_cache_binlog_suite(void)
{
    Suite *s = suite_create("cache_binlog");
    TCase *tc = tcase_create("group");

    tcase_add_test(tc, test_rows);
    tcase_add_test(tc, test_open_group_carried);
    tcase_add_test(tc, test_statements);
    tcase_add_test(tc, test_statement_names);
    tcase_add_test(tc, test_ddl);
    tcase_add_test(tc, test_ddl_create);
    tcase_add_test(tc, test_unplaceable);
    tcase_add_test(tc, test_nbe);
    tcase_add_test(tc, test_xa);
    tcase_add_test(tc, test_xa_again);
    tcase_add_test(tc, test_xa_everything);
    tcase_add_test(tc, test_xa_lost);
    tcase_add_test(tc, test_too_many_tables);
    tcase_add_test(tc, test_long_names);
    tcase_add_test(tc, test_unreadable);
    tcase_add_test(tc, test_sql_mode);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return slc_check_run(slc_cache_binlog_suite());
}
