/*
 * The query cache's policy (modules/cache/slc_cache_policy.c, compiled
 * into this test): a golden table of statements with the verdict each
 * must get in a given session, the table keys (normalised, default
 * database filled in, repeats dropped), what writes invalidate, and
 * cache_rule: parsing, bad regexes with their offset, first match wins for
 * each match kind, anchors, and the same answers with and without JIT.
 */

#include "slc_test.h"

#include "../../modules/cache/slc_cache_policy.c"

#define AC   SLC_SERVER_STATUS_AUTOCOMMIT
#define TR   SLC_SERVER_STATUS_IN_TRANS
#define TRO  SLC_SERVER_STATUS_IN_TRANS_READONLY

typedef struct {
    const char           *q;
    const char           *db;       /* default database, NULL: none */
    unsigned              status;
    int                   ro;       /* 1: the caller says READ ONLY, 2:
                                       READ COMMITTED, 4: READ
                                       UNCOMMITTED */
    int                   temp;     /* the session has temporary tables */
    slc_cache_verdict_t   v;
} slc_test_verdict_t;

/* In "shop", autocommit, no transaction. */
#define V(q, v)  { q, "shop", AC, 0, 0, SLC_CACHE_##v }
/* In another session. */
#define VS(q, db, st, ro, v)  { q, db, st, ro, 0, SLC_CACHE_##v }

static const slc_test_verdict_t  slc_test_verdicts[] = {
    /* cacheable */
    V("SELECT 1", CACHEABLE),
    V("SELECT * FROM t", CACHEABLE),
    V("select a, b from t where id = 42", CACHEABLE),
    V("SELECT * FROM shop.prices WHERE id IN (1, 2, 3)", CACHEABLE),
    V("SELECT COUNT(*) FROM t1 JOIN t2 ON t1.a = t2.a", CACHEABLE),
    V("SELECT * FROM t WHERE d > '2024-01-01' ORDER BY d LIMIT 10",
      CACHEABLE),
    V("(SELECT a FROM t) UNION (SELECT b FROM u)", CACHEABLE),
    V("WITH c AS (SELECT * FROM t) SELECT * FROM c", CACHEABLE),
    V("VALUES (1), (2)", CACHEABLE),
    V("TABLE t", CACHEABLE),
    V("SELECT CONCAT(a, 'x'), UPPER(b), MD5(c) FROM t", CACHEABLE),
    V("SELECT * FROM t WHERE a = 'NOW()'", CACHEABLE),
    V("SELECT * FROM t WHERE a = \"RAND()\"", CACHEABLE),
    V("SELECT `now` FROM t", CACHEABLE),
    V("SELECT `NOW`() FROM t", STORED_FUNCTION),    /* the server's too */
    V("SELECT now FROM t", CACHEABLE),
    V("SELECT 'SQL_NO_CACHE' FROM t", CACHEABLE),
    V("SELECT `sql_no_cache` FROM t", CACHEABLE),
    V("SELECT a /* SQL_NO_CACHE */ FROM t", CACHEABLE),
    V("SELECT a -- NOW()\nFROM t", CACHEABLE),
    V("SELECT a # FOR UPDATE\nFROM t", CACHEABLE),
    V("SELECT 'a@b.c' FROM t", CACHEABLE),
    V("SELECT '@@version' FROM t", CACHEABLE),
    V("SELECT * FROM t WHERE a = 'x''y'", CACHEABLE),
    V("SELECT * FROM `information_schema_copy`.t", CACHEABLE),
    V("SELECT * FROM mysqlx.t", CACHEABLE),
    V("SELECT SQL_CACHE a FROM t", CACHEABLE),
    V("SELECT 1 FROM DUAL", CACHEABLE),
    V("SELECT UNIX_TIMESTAMPS FROM t", CACHEABLE),
    V("SELECT * FROM t1, t2 WHERE t1.a = t2.b", CACHEABLE),
    V("SELECT a FROM t GROUP BY a HAVING COUNT(*) > 1", CACHEABLE),
    V("SELECT * FROM t WINDOW w AS (ORDER BY a)", CACHEABLE),
    V("SELECT JSON_EXTRACT(j, '$.a') FROM t", CACHEABLE),
    V("/* sluice: route=replica */ SELECT * FROM t", CACHEABLE),
    VS("SELECT * FROM t", NULL, AC, 0, CACHEABLE),
    /* READ ONLY transactions: under READ COMMITTED (ro 2) only */
    VS("SELECT * FROM t", "shop", TR, 1 | 2, CACHEABLE),
    VS("SELECT * FROM t", "shop", TR | TRO, 2, CACHEABLE),
    VS("SELECT * FROM t", "shop", TR | AC | TRO, 2, CACHEABLE),
    VS("SELECT * FROM t", "shop", 0, 1 | 2, CACHEABLE),
    /* a snapshot: neither stored nor served */
    VS("SELECT * FROM t", "shop", TR, 1, SNAPSHOT),
    VS("SELECT * FROM t", "shop", TR | TRO, 0, SNAPSHOT),
    VS("SELECT * FROM t", "shop", TR | AC | TRO, 0, SNAPSHOT),
    VS("SELECT * FROM t", "shop", 0, 1, SNAPSHOT),
    /* READ COMMITTED is no excuse in a read-write one */
    VS("SELECT * FROM t", "shop", TR, 2, RW_TRX),
    /* READ UNCOMMITTED, or a level not known (ro 4) */
    VS("SELECT * FROM t", "shop", AC, 4, ISOLATION),
    VS("SELECT * FROM t", "shop", TR | TRO, 2 | 4, ISOLATION),
    VS("SELECT 1", "shop", AC, 4, ISOLATION),
    VS("SELECT 1", "mysql", AC, 0, CACHEABLE),
    VS("SELECT 1", "information_schema", AC, 0, CACHEABLE),
    VS("SELECT * FROM shop.t", "sys", AC, 0, CACHEABLE),

    /* unterminated */
    V("SELECT 'abc", UNTERMINATED),
    V("SELECT * FROM t /* open", UNTERMINATED),
    V("SELECT \"x", UNTERMINATED),
    V("SELECT `t", UNTERMINATED),
    V("SELECT /*!SQL_NO_CACHE a FROM t", UNTERMINATED),

    /* multi */
    V("SELECT 1; SELECT 2", MULTI),
    V("SELECT * FROM t; DELETE FROM t", MULTI),
    V("SELECT a FROM t;SELECT b FROM u;", MULTI),

    /* not a select */
    V("", NOT_SELECT),
    V("  /* only a comment */ ", NOT_SELECT),
    V("INSERT INTO t VALUES (1)", NOT_SELECT),
    V("UPDATE t SET a = 1", NOT_SELECT),
    V("DELETE FROM t", NOT_SELECT),
    V("REPLACE INTO t VALUES (1)", NOT_SELECT),
    V("SHOW TABLES", NOT_SELECT),
    V("SHOW VARIABLES LIKE 'x'", NOT_SELECT),
    V("EXPLAIN SELECT * FROM t", NOT_SELECT),
    V("DESCRIBE t", NOT_SELECT),
    V("SET NAMES utf8mb4", NOT_SELECT),
    V("USE shop", NOT_SELECT),
    V("BEGIN", NOT_SELECT),
    V("COMMIT", NOT_SELECT),
    V("CALL p()", NOT_SELECT),
    V("DO 1", NOT_SELECT),
    V("HANDLER t READ FIRST", NOT_SELECT),
    V("CREATE TABLE t2 AS SELECT * FROM t", NOT_SELECT),
    V("WITH c AS (SELECT 1) DELETE FROM t", NOT_SELECT),
    V("FOO BAR", NOT_SELECT),
    V("SELECTX 1", NOT_SELECT),

    /* read-write transaction, autocommit off */
    VS("SELECT * FROM t", "shop", TR, 0, RW_TRX),
    VS("SELECT * FROM t", "shop", TR | AC, 0, RW_TRX),
    VS("SELECT 1", "shop", TR | AC, 0, RW_TRX),
    VS("SELECT * FROM t", "shop", 0, 0, RW_TRX),
    VS("SELECT NOW()", "shop", TR, 0, RW_TRX),

    /* FOUND_ROWS() after it would answer for an older statement */
    V("SELECT SQL_CALC_FOUND_ROWS * FROM t LIMIT 1", FUNCTION),

    /* SQL_NO_CACHE */
    V("SELECT SQL_NO_CACHE * FROM t", SQL_NO_CACHE),
    V("select sql_no_cache a from t", SQL_NO_CACHE),
    V("SELECT /*!SQL_NO_CACHE*/ a FROM t", SQL_NO_CACHE),
    V("SELECT /*!40001 SQL_NO_CACHE */ a FROM t", SQL_NO_CACHE),
    V("SELECT /*M!100000 SQL_NO_CACHE */ a FROM t", SQL_NO_CACHE),
    V("SELECT DISTINCT SQL_NO_CACHE a FROM t", SQL_NO_CACHE),
    V("(SELECT SQL_NO_CACHE a FROM t)", SQL_NO_CACHE),
    V("SELECT SQL_NO_CACHE NOW()", SQL_NO_CACHE),

    /* locking reads */
    V("SELECT * FROM t FOR UPDATE", LOCKING_READ),
    V("SELECT * FROM t WHERE id = 1 FOR UPDATE NOWAIT", LOCKING_READ),
    V("SELECT * FROM t LOCK IN SHARE MODE", LOCKING_READ),
    V("SELECT * FROM t FOR SHARE", LOCKING_READ),
    V("select * from t for  /* x */ update", LOCKING_READ),
    V("SELECT * FROM t FOR UPDATE SKIP LOCKED", LOCKING_READ),

    /* INTO */
    V("SELECT a INTO @x FROM t", INTO),
    V("SELECT a FROM t INTO @x", INTO),
    V("SELECT a INTO OUTFILE '/tmp/x' FROM t", INTO),
    V("SELECT a FROM t INTO DUMPFILE '/tmp/x'", INTO),
    V("SELECT 1 INTO @a", INTO),

    /* user variables */
    V("SELECT @x", USER_VAR),
    V("SELECT * FROM t WHERE a = @x", USER_VAR),
    V("SELECT @x := 1", USER_VAR),
    V("SELECT a, @n := @n + 1 FROM t", USER_VAR),
    V("SELECT @`x y` FROM t", USER_VAR),
    V("SELECT @'x' FROM t", USER_VAR),
    V("SELECT * FROM t WHERE a = /*!@x*/ 1", USER_VAR),

    /* system variables */
    V("SELECT @@version", SYSTEM_VAR),
    V("SELECT @@session.time_zone", SYSTEM_VAR),
    V("SELECT @@GLOBAL.read_only", SYSTEM_VAR),
    V("SELECT * FROM t WHERE a < @@max_allowed_packet", SYSTEM_VAR),
    V("SELECT @@identity", SYSTEM_VAR),
    V("SELECT @@warning_count", SYSTEM_VAR),

    /* non-deterministic or session-dependent functions: MaxScale's list */
    V("SELECT BENCHMARK(1000, MD5('a'))", FUNCTION),
    V("SELECT CONNECTION_ID()", FUNCTION),
    V("SELECT CONVERT_TZ(d, '+00:00', 'Europe/Paris') FROM t", FUNCTION),
    V("SELECT CURDATE()", FUNCTION),
    V("SELECT CURRENT_DATE", FUNCTION),
    V("SELECT CURRENT_DATE()", FUNCTION),
    V("SELECT CURRENT_TIME", FUNCTION),
    V("SELECT CURRENT_TIMESTAMP", FUNCTION),
    V("SELECT CURRENT_TIMESTAMP(6)", FUNCTION),
    V("SELECT CURRENT_USER", FUNCTION),
    V("SELECT CURRENT_USER()", FUNCTION),
    V("SELECT CURTIME()", FUNCTION),
    V("SELECT DATABASE()", FUNCTION),
    V("SELECT ENCRYPT('x', 'ab')", FUNCTION),
    V("SELECT FOUND_ROWS()", FUNCTION),
    V("SELECT GET_LOCK('l', 0)", FUNCTION),
    V("SELECT IS_FREE_LOCK('l')", FUNCTION),
    V("SELECT IS_USED_LOCK('l')", FUNCTION),
    V("SELECT LAST_INSERT_ID()", FUNCTION),
    V("SELECT LOAD_FILE('/etc/passwd')", FUNCTION),
    V("SELECT LOCALTIME", FUNCTION),
    V("SELECT LOCALTIME()", FUNCTION),
    V("SELECT LOCALTIMESTAMP", FUNCTION),
    V("SELECT MASTER_POS_WAIT('b.000001', 4)", FUNCTION),
    V("SELECT NOW()", FUNCTION),
    V("SELECT RAND()", FUNCTION),
    V("SELECT RELEASE_LOCK('l')", FUNCTION),
    V("SELECT ROW_COUNT()", FUNCTION),
    V("SELECT SESSION_USER()", FUNCTION),
    V("SELECT SLEEP(1)", FUNCTION),
    V("SELECT SYSDATE()", FUNCTION),
    V("SELECT SYSTEM_USER()", FUNCTION),
    V("SELECT UNIX_TIMESTAMP()", FUNCTION),
    V("SELECT USER()", FUNCTION),
    V("SELECT UUID()", FUNCTION),
    V("SELECT UUID_SHORT()", FUNCTION),
    /* and more */
    V("SELECT CURRENT_ROLE()", FUNCTION),
    V("SELECT CURRENT_ROLE", FUNCTION),
    V("SELECT SCHEMA()", FUNCTION),
    V("SELECT UTC_DATE", FUNCTION),
    V("SELECT UTC_TIME()", FUNCTION),
    V("SELECT UTC_TIMESTAMP", FUNCTION),
    V("SELECT RANDOM_BYTES(8)", FUNCTION),
    V("SELECT SYS_GUID()", FUNCTION),
    V("SELECT RELEASE_ALL_LOCKS()", FUNCTION),
    V("SELECT NEXTVAL(s)", FUNCTION),
    V("SELECT NEXT VALUE FOR s", FUNCTION),
    V("SELECT LASTVAL(s)", FUNCTION),
    V("SELECT MASTER_GTID_WAIT('0-1-1')", FUNCTION),
    V("SELECT SOURCE_POS_WAIT('b.000001', 4)", FUNCTION),
    V("SELECT BINLOG_GTID_POS('b.000001', 4)", FUNCTION),
    V("SELECT WAIT_FOR_EXECUTED_GTID_SET('x')", FUNCTION),
    V("SELECT WAIT_UNTIL_SQL_THREAD_AFTER_GTIDS('x')", FUNCTION),
    /* spelled otherwise, or in a clause */
    V("select now()", FUNCTION),
    V("SELECT Now ( )", FUNCTION),
    V("SELECT NOW/* x */()", FUNCTION),
    V("SELECT /*!NOW()*/", FUNCTION),
    V("SELECT * FROM t WHERE d > NOW() - INTERVAL 1 DAY", FUNCTION),
    V("SELECT * FROM t ORDER BY RAND() LIMIT 1", FUNCTION),
    V("SELECT * FROM t WHERE owner = CURRENT_USER", FUNCTION),
    V("SELECT a FROM t WHERE b IN (SELECT c FROM u WHERE d < CURDATE())",
      FUNCTION),
    V("SELECT CAST(NOW() AS DATE)", FUNCTION),
    V("SELECT DATE(SYSDATE())", FUNCTION),
    V("SELECT SQL_CALC_FOUND_ROWS * FROM t; SELECT FOUND_ROWS()", MULTI),

    /* built-ins and grammar before "(": cacheable */
    V("SELECT COUNT(*) FROM t", CACHEABLE),
    V("SELECT CONCAT(a, b) FROM t", CACHEABLE),
    V("SELECT DATE_FORMAT(x, '%Y') FROM t", CACHEABLE),
    V("SELECT JSON_EXTRACT(j, '$.a') FROM t", CACHEABLE),
    V("SELECT ROUND(x, 2), IFNULL(a, 0), NULLIF(a, b) FROM t", CACHEABLE),
    V("SELECT group_concat(a ORDER BY b SEPARATOR ',') FROM t", CACHEABLE),
    V("SELECT SUM(a) OVER (PARTITION BY b ORDER BY c) FROM t", CACHEABLE),
    V("SELECT ROW_NUMBER() OVER (ORDER BY a), LAG(a, 1) OVER w FROM t "
      "WINDOW w AS (ORDER BY a)", CACHEABLE),
    V("SELECT * FROM t WHERE a IN (1, 2)", CACHEABLE),
    V("SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.a)",
      CACHEABLE),
    V("SELECT * FROM t WHERE NOT (a = 1) AND (b = 2 OR (c = 3))",
      CACHEABLE),
    V("SELECT * FROM t WHERE a > ALL (SELECT b FROM u)", CACHEABLE),
    V("SELECT * FROM t1 JOIN t2 USING (id)", CACHEABLE),
    V("SELECT * FROM t FORCE INDEX (k) WHERE a = 1", CACHEABLE),
    V("SELECT * FROM t USE KEY (k)", CACHEABLE),
    V("SELECT x.a FROM (SELECT a FROM t) x", CACHEABLE),
    V("SELECT * FROM t PARTITION (p0)", CACHEABLE),
    V("SELECT CAST(a AS DECIMAL(10, 2)), CONVERT(b USING utf8mb4) FROM t",
      CACHEABLE),
    V("SELECT IF(a, b, c), COALESCE(a, b), GREATEST(a, 1) FROM t",
      CACHEABLE),
    V("SELECT ST_Distance(g, POINT(1, 2)) FROM t", CACHEABLE),
    V("SELECT * FROM t WHERE MATCH (a) AGAINST ('x' IN BOOLEAN MODE)",
      CACHEABLE),
    V("SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS (a INT PATH '$')) "
      "AS j", CACHEABLE),
    V("WITH c (n) AS (SELECT a FROM t) SELECT n FROM c", CACHEABLE),
    V("(SELECT a FROM t) UNION ALL (SELECT b FROM u)", CACHEABLE),
    V("SELECT (a + 1) * (b - 2) FROM t", CACHEABLE),

    /* stored functions: not cacheable */
    V("SELECT audit(1)", STORED_FUNCTION),
    V("SELECT test.audit(1)", STORED_FUNCTION),
    V("SELECT `test`.`audit`(1)", STORED_FUNCTION),
    V("SELECT `audit`(1)", STORED_FUNCTION),
    V("SELECT my_fn (1)", STORED_FUNCTION),
    V("SELECT my_fn/* x */(1)", STORED_FUNCTION),
    V("SELECT audit(1) FROM t", STORED_FUNCTION),
    V("SELECT a FROM t WHERE b = price_of(a)", STORED_FUNCTION),
    V("SELECT a FROM t WHERE b IN (SELECT f(c) FROM u)", STORED_FUNCTION),
    V("SELECT COUNT(*) FROM t GROUP BY bucket(a)", STORED_FUNCTION),
    V("WITH c AS (SELECT f(1) AS x) SELECT x FROM c", STORED_FUNCTION),
    V("SELECT status(1)", STORED_FUNCTION),     /* a keyword, not reserved */
    V("SELECT x.now()", STORED_FUNCTION),       /* qualified: never a
                                                   built-in */
    V("SELECT * FROM (SELECT 1) AS dt (a)", STORED_FUNCTION),  /* limit */

    /* system schemas */
    V("SELECT * FROM information_schema.tables", SYSTEM_SCHEMA),
    V("SELECT * FROM INFORMATION_SCHEMA.TABLES", SYSTEM_SCHEMA),
    V("SELECT * FROM `information_schema`.`processlist`", SYSTEM_SCHEMA),
    V("SELECT * FROM performance_schema.threads", SYSTEM_SCHEMA),
    V("SELECT * FROM mysql.user", SYSTEM_SCHEMA),
    V("SELECT * FROM `MySQL`.user", SYSTEM_SCHEMA),
    V("SELECT * FROM sys.session", SYSTEM_SCHEMA),
    V("SELECT * FROM t JOIN mysql.user u ON t.a = u.user", SYSTEM_SCHEMA),
    V("SELECT * FROM t WHERE a IN (SELECT table_name FROM "
      "information_schema.tables)", SYSTEM_SCHEMA),
    V("SELECT * FROM t, sys.x", SYSTEM_SCHEMA),
    V("SELECT * FROM t1 JOIN t2 ON t1.a = t2.a, mysql.db", SYSTEM_SCHEMA),
    VS("SELECT * FROM user", "mysql", AC, 0, SYSTEM_SCHEMA),
    VS("SELECT * FROM tables", "information_schema", AC, 0, SYSTEM_SCHEMA),
    VS("SELECT * FROM tables", "INFORMATION_SCHEMA", AC, 0, SYSTEM_SCHEMA),
    VS("SELECT * FROM threads", "performance_schema", AC, 0, SYSTEM_SCHEMA),
    VS("SELECT * FROM temporary JOIN tables", "information_schema", AC, 0,
       SYSTEM_SCHEMA),
    VS("SELECT * FROM session", "sys", AC, 0, SYSTEM_SCHEMA),
    VS("SELECT * FROM shop.t, x", "mysql", AC, 0, SYSTEM_SCHEMA),
    VS("SELECT * FROM user", "mysqldb", AC, 0, CACHEABLE),

    /* temporary tables */
    { "SELECT * FROM t", "shop", AC, 0, 1, SLC_CACHE_TEMPORARY },
    { "SELECT 1", "shop", AC, 0, 1, SLC_CACHE_CACHEABLE },

    /* order: the first reason that applies */
    V("SELECT NOW() FROM t FOR UPDATE", LOCKING_READ),
    V("SELECT SQL_NO_CACHE @x", SQL_NO_CACHE),
    V("SELECT @@version, NOW()", SYSTEM_VAR),
    V("SELECT NOW() FROM mysql.user", FUNCTION),
    V("SELECT audit(NOW())", FUNCTION),
    V("SELECT audit(1) FROM mysql.user", SYSTEM_SCHEMA),
    { "SELECT audit(a) FROM t", "shop", AC, 0, 1, SLC_CACHE_TEMPORARY },
    VS("SELECT audit(1)", "shop", TR, 0, RW_TRX),
    VS("SELECT SQL_NO_CACHE 1", "shop", TR, 0, RW_TRX),
    VS("INSERT INTO t VALUES (1)", "shop", TR, 0, NOT_SELECT),
};

#define SLC_TEST_NVERDICTS  slc_nelems(slc_test_verdicts)

static slc_cache_verdict_t
slc_test_verdict(const slc_test_verdict_t *tv)
{
    size_t               n = strlen(tv->q);
    uint8_t             *q = malloc(n + 1);     /* exact size: ASan */
    slc_sql_info_t       si;
    slc_cache_session_t  ss = {
        .db = tv->db, .db_len = tv->db ? strlen(tv->db) : 0,
        .status = tv->status, .read_only_trx = (tv->ro & 1) != 0,
        .read_committed = (tv->ro & 2) != 0, .dirty = (tv->ro & 4) != 0,
        .temp_tables = tv->temp != 0
    };
    slc_cache_verdict_t  v;

    ck_assert_ptr_nonnull(q);
    memcpy(q, tv->q, n);
    (void) slc_sql_classify(q, n, 0, &si);
    v = slc_cache_cacheable(q, n, &si, &ss);
    free(q);
    return v;
}

START_TEST(test_verdict)
{
    const slc_test_verdict_t  *tv = &slc_test_verdicts[_i];
    slc_cache_verdict_t        v = slc_test_verdict(tv);

    ck_assert_msg(v == tv->v, "\"%s\" (db %s, status 0x%x, ro %d): %s, "
                  "want %s", tv->q, tv->db ? tv->db : "-", tv->status,
                  tv->ro, slc_cache_verdict_name(v),
                  slc_cache_verdict_name(tv->v));
}
END_TEST

/* Every reason has a name and a statement above; 150 statements at least. */
START_TEST(test_verdict_names)
{
    unsigned  seen[SLC_CACHE_NVERDICTS] = { 0 };

    ck_assert_uint_ge(SLC_TEST_NVERDICTS, 150);
    for (size_t i = 0; i < SLC_TEST_NVERDICTS; i++) {
        seen[slc_test_verdicts[i].v]++;
    }
    for (int v = 0; v < SLC_CACHE_NVERDICTS; v++) {
        const char  *name = slc_cache_verdict_name((slc_cache_verdict_t) v);

        ck_assert_ptr_nonnull(name);
        ck_assert_str_ne(name, "?");
        if (v != SLC_CACHE_TABLES_UNKNOWN       /* its own test below */
            && v != SLC_CACHE_SCHEMA_UNKNOWN)   /* the filter's, at store */
        {
            ck_assert_msg(seen[v] > 0, "no statement for %s", name);
        }
    }
    ck_assert_str_eq(slc_cache_verdict_name(SLC_CACHE_NVERDICTS), "?");
}
END_TEST

/* What the views a statement reads hold (the schema catalog's flags of
   their definitions and their base tables). */
START_TEST(test_view_verdict)
{
    static const slc_str_t  plain[] = { slc_string("shop.t"),
                                        slc_string("shop.u") };
    static const slc_str_t  sys[] = { slc_string("shop.t"),
                                      slc_string("mysql.user") };

    ck_assert_int_eq(slc_cache_view_verdict(0, plain, 2),
                     SLC_CACHE_CACHEABLE);
    ck_assert_int_eq(slc_cache_view_verdict(SLC_SQL_F_NON_DETERMINISTIC,
                     plain, 2), SLC_CACHE_FUNCTION);
    ck_assert_int_eq(slc_cache_view_verdict(SLC_SQL_F_STORED_FUNC, plain,
                     2), SLC_CACHE_STORED_FUNCTION);
    ck_assert_int_eq(slc_cache_view_verdict(SLC_SQL_F_USER_VAR_READ, plain,
                     2), SLC_CACHE_USER_VAR);
    ck_assert_int_eq(slc_cache_view_verdict(0, sys, 2),
                     SLC_CACHE_SYSTEM_SCHEMA);
    ck_assert_int_eq(slc_cache_view_verdict(SLC_SQL_F_TABLES_PARTIAL, plain,
                     2), SLC_CACHE_TABLES_UNKNOWN);
    ck_assert_str_eq(slc_cache_verdict_name(SLC_CACHE_SCHEMA_UNKNOWN),
                     "schema_unknown");
}
END_TEST

/* More tables than the classifier names: "tables unknown", last. */
START_TEST(test_verdict_tables_unknown)
{
    char                 q[1024];
    size_t               n = 0;
    slc_sql_info_t       si;
    slc_cache_session_t  ss = { .db = "shop", .db_len = 4, .status = AC };

    n += (size_t) snprintf(q + n, sizeof(q) - n, "SELECT * FROM t0");
    for (int i = 1; i < SLC_SQL_MAX_TABLES + 3; i++) {
        n += (size_t) snprintf(q + n, sizeof(q) - n, ", t%d", i);
    }
    (void) slc_sql_classify((uint8_t *) q, n, 0, &si);
    ck_assert_int_eq(slc_cache_cacheable((uint8_t *) q, n, &si, &ss),
                     SLC_CACHE_TABLES_UNKNOWN);
    ck_assert_str_eq(slc_cache_verdict_name(SLC_CACHE_TABLES_UNKNOWN),
                     "tables_unknown");

    /* a system schema among the first ones still says so */
    memcpy(q + 14, "mysql.x, t0", 11);
    (void) slc_sql_classify((uint8_t *) q, n, 0, &si);
    ck_assert_int_eq(slc_cache_cacheable((uint8_t *) q, n, &si, &ss),
                     SLC_CACHE_SYSTEM_SCHEMA);
}
END_TEST


/* --- table keys --------------------------------------------------------- */

static const struct {
    const char  *q;
    const char  *db;
    const char  *keys;      /* "a.b c.d", or "!" for SLC_ERROR */
} slc_test_keys[] = {
    { "SELECT 1", "shop", "" },
    { "SELECT * FROM t", "shop", "shop.t" },
    { "SELECT * FROM T", "Shop", "shop.t" },
    { "SELECT * FROM t", NULL, ".t" },
    { "SELECT * FROM t", "", ".t" },
    { "SELECT * FROM Db.Prices", "shop", "db.prices" },
    { "SELECT * FROM `Db`.`Prices`", "shop", "db.prices" },
    { "SELECT * FROM `my db` . `my``t`", "shop", "my db.my`t" },
    { "SELECT * FROM `a``b`.`c````d`", "shop", "a`b.c``d" },
    { "SELECT * FROM `t`", "my`db", "my`db.t" },
    { "SELECT * FROM t, T, shop.t, `t` x", "shop", "shop.t" },
    { "SELECT * FROM t1 JOIN o.t2 ON t1.a = t2.a, t3", "s",
      "s.t1 o.t2 s.t3" },
    { "SELECT * FROM t WHERE id IN (SELECT id FROM u)", "s", "s.t s.u" },
    { "SELECT * FROM `\xc3\x84" "Bc`", "s", "s.\xc3\x84" "bc" },
    { "INSERT INTO t VALUES (1)", "s", "s.t" },
    { "INSERT INTO d.t SELECT * FROM u", "s", "d.t s.u" },
    { "REPLACE t SELECT * FROM u", "s", "s.t s.u" },
    { "UPDATE t1 JOIN t2 ON t1.a = t2.a SET t1.b = 1", "s", "s.t1 s.t2" },
    { "UPDATE LOW_PRIORITY IGNORE T1, Db.T2 SET a = 1", "s", "s.t1 db.t2" },
    { "DELETE FROM t WHERE a = 1", "s", "s.t" },
    { "DELETE t1, t2 FROM t1 JOIN t2", "s", "s.t1 s.t2" },
    { "TRUNCATE TABLE d.t", "s", "d.t" },
    { "TRUNCATE t", "s", "s.t" },
    { "LOAD DATA LOCAL INFILE 'x' INTO TABLE t", "s", "s.t" },
    { "LOAD DATA INFILE 'x' REPLACE INTO TABLE d.t", "s", "d.t" },
    { "ALTER TABLE t ADD c INT", "s", "s.t" },
    { "ALTER TABLE t RENAME TO d.u", "s", "s.t d.u" },
    { "DROP TABLE IF EXISTS t, d.u", "s", "s.t d.u" },
    { "RENAME TABLE a TO b, d.c TO e.f", "s", "s.a s.b d.c e.f" },
    { "CREATE TABLE t2 LIKE t1", "s", "s.t2 s.t1" },
    { NULL, NULL, NULL },
};

static void
slc_test_keys_str(const slc_sql_keys_t *k, char *buf, size_t n)
{
    buf[0] = '\0';
    for (unsigned i = 0; i < k->n; i++) {
        ck_assert_uint_eq(strlen(k->key[i].data), k->key[i].len);
        ck_assert_int_eq(k->key[i].data[k->db_len[i]], '.');
        if (i > 0) {
            strlcat(buf, " ", n);
        }
        strlcat(buf, k->key[i].data, n);
    }
}

START_TEST(test_keys)
{
    for (size_t i = 0; slc_test_keys[i].q != NULL; i++) {
        const char        *q = slc_test_keys[i].q;
        const char        *db = slc_test_keys[i].db;
        slc_sql_info_t     si;
        slc_sql_keys_t   k;
        char               got[2048];

        (void) slc_sql_classify((const uint8_t *) q, strlen(q), 0, &si);
        ck_assert_int_eq(slc_sql_table_keys((const uint8_t *) q, &si, db,
                                              db ? strlen(db) : 0, &k),
                         SLC_OK);
        slc_test_keys_str(&k, got, sizeof(got));
        ck_assert_msg(strcmp(got, slc_test_keys[i].keys) == 0,
                      "\"%s\" in %s: \"%s\", want \"%s\"", q,
                      db ? db : "-", got, slc_test_keys[i].keys);
    }
}
END_TEST

/* The default database is kept lowercased; names too long fail. */
START_TEST(test_keys_limits)
{
    char              q[2048], name[SLC_SQL_NAME_MAX + 2];
    slc_sql_info_t    si;
    slc_sql_keys_t  k;

    memset(&si, 0, sizeof(si));
    ck_assert_int_eq(slc_sql_table_keys((const uint8_t *) "", &si, "ShOp",
                                          4, &k), SLC_OK);
    ck_assert_str_eq(k.db.data, "shop");
    ck_assert_uint_eq(k.n, 0);

    /* a name of exactly the limit fits, one more does not */
    memset(name, 'a', SLC_SQL_NAME_MAX);
    name[SLC_SQL_NAME_MAX] = '\0';
    snprintf(q, sizeof(q), "SELECT * FROM `%s`.`%s`", name, name);
    (void) slc_sql_classify((uint8_t *) q, strlen(q), 0, &si);
    ck_assert_int_eq(slc_sql_table_keys((uint8_t *) q, &si, name,
                                          SLC_SQL_NAME_MAX, &k), SLC_OK);
    ck_assert_uint_eq(k.key[0].len, 2 * SLC_SQL_NAME_MAX + 1);
    name[SLC_SQL_NAME_MAX] = 'a';
    name[SLC_SQL_NAME_MAX + 1] = '\0';
    snprintf(q, sizeof(q), "SELECT * FROM `%s`", name);
    (void) slc_sql_classify((uint8_t *) q, strlen(q), 0, &si);
    ck_assert_int_eq(slc_sql_table_keys((uint8_t *) q, &si, "s", 1, &k),
                     SLC_ERROR);
    ck_assert_int_eq(slc_sql_table_keys((uint8_t *) q, &si, name,
                                          strlen(name), &k), SLC_ERROR);
}
END_TEST

/* Sixteen different longest names fill the buffer exactly. */
START_TEST(test_keys_full)
{
    char              *q = malloc(16 * 600), name[SLC_SQL_NAME_MAX + 1];
    size_t             n = 0;
    slc_sql_info_t     si;
    slc_sql_keys_t   k;

    ck_assert_ptr_nonnull(q);
    n += (size_t) sprintf(q, "SELECT * FROM ");
    for (int i = 0; i < SLC_SQL_MAX_TABLES; i++) {
        memset(name, 'A' + i, SLC_SQL_NAME_MAX);
        name[SLC_SQL_NAME_MAX] = '\0';
        n += (size_t) sprintf(q + n, "%s`%s`.`%s`", i ? ", " : "", name,
                              name);
    }
    (void) slc_sql_classify((uint8_t *) q, n, 0, &si);
    ck_assert_uint_eq(si.ntables, SLC_SQL_MAX_TABLES);
    memset(name, 'z', SLC_SQL_NAME_MAX);
    ck_assert_int_eq(slc_sql_table_keys((uint8_t *) q, &si, name,
                                          SLC_SQL_NAME_MAX, &k), SLC_OK);
    ck_assert_uint_eq(k.n, SLC_SQL_MAX_TABLES);
    ck_assert_int_eq(k.key[15].data[0], 'p');
    ck_assert_uint_eq(k.key[15].len, 2 * SLC_SQL_NAME_MAX + 1);
    free(q);
}
END_TEST

static const struct {
    const char       *q;
    slc_cache_inv_t   inv;
} slc_test_inv[] = {
    { "SELECT * FROM t", SLC_CACHE_INV_NONE },
    { "SELECT NOW()", SLC_CACHE_INV_NONE },
    { "", SLC_CACHE_INV_NONE },
    { "SET NAMES utf8", SLC_CACHE_INV_NONE },
    { "SHOW TABLES", SLC_CACHE_INV_NONE },
    { "BEGIN", SLC_CACHE_INV_NONE },
    { "INSERT INTO t VALUES (1)", SLC_CACHE_INV_TABLES },
    { "UPDATE t SET a = 1", SLC_CACHE_INV_TABLES },
    { "DELETE FROM t", SLC_CACHE_INV_TABLES },
    { "REPLACE INTO t VALUES (1)", SLC_CACHE_INV_TABLES },
    { "TRUNCATE t", SLC_CACHE_INV_TABLES },
    { "LOAD DATA INFILE 'x' INTO TABLE t", SLC_CACHE_INV_TABLES },
    { "ALTER TABLE t ADD c INT", SLC_CACHE_INV_TABLES },
    { "DROP TABLE t", SLC_CACHE_INV_TABLES },
    { "RENAME TABLE a TO b", SLC_CACHE_INV_TABLES },
    { "EXPLAIN UPDATE t SET a = 1", SLC_CACHE_INV_TABLES },
    { "CALL p()", SLC_CACHE_INV_ALL },
    /* a stored function may write anything; built-ins write nothing */
    { "SELECT audit(1)", SLC_CACHE_INV_ALL },
    { "SELECT a FROM t WHERE b = shop.f(a)", SLC_CACHE_INV_ALL },
    { "DO audit(1)", SLC_CACHE_INV_ALL },
    { "INSERT INTO t SELECT audit(1)", SLC_CACHE_INV_ALL },
    { "SELECT CONCAT(a, 'x'), COUNT(*) FROM t", SLC_CACHE_INV_NONE },
    { "EXECUTE s", SLC_CACHE_INV_ALL },
    { "DROP DATABASE shop", SLC_CACHE_INV_ALL },
    { "DROP VIEW v", SLC_CACHE_INV_ALL },
    { "GRANT SELECT ON shop.* TO u", SLC_CACHE_INV_ALL },
    { "REVOKE SELECT ON shop.t FROM u", SLC_CACHE_INV_ALL },
    { "FLUSH TABLES", SLC_CACHE_INV_ALL },
    { "FLUSH TABLES t", SLC_CACHE_INV_ALL },
    { "OPTIMIZE TABLE t", SLC_CACHE_INV_ALL },
    { "GET DIAGNOSTICS @n = NUMBER", SLC_CACHE_INV_NONE },
    { "INSERT INTO tables VALUES (1)", SLC_CACHE_INV_TABLES },
    { "BEGIN NOT ATOMIC UPDATE t SET a = 1; END", SLC_CACHE_INV_ALL },
    { "SELECT 1; UPDATE t SET a = 1", SLC_CACHE_INV_ALL },
    { "UPDATE t SET a = 1; CALL p()", SLC_CACHE_INV_ALL },
    { "FOO BAR", SLC_CACHE_INV_ALL },
    { "INSERT INTO t VALUES ('x", SLC_CACHE_INV_ALL },
};

START_TEST(test_invalidates)
{
    for (size_t i = 0; i < slc_nelems(slc_test_inv); i++) {
        const char      *q = slc_test_inv[i].q;
        slc_sql_info_t   si;

        (void) slc_sql_classify((const uint8_t *) q, strlen(q), 0, &si);
        ck_assert_msg(slc_cache_invalidates(&si) == slc_test_inv[i].inv,
                      "\"%s\": %d", q, slc_cache_invalidates(&si));
    }
}
END_TEST

/* More tables than fit in a write: everything. */
START_TEST(test_invalidates_many)
{
    char            q[1024];
    size_t          n = 0;
    slc_sql_info_t  si;

    n += (size_t) snprintf(q + n, sizeof(q) - n, "UPDATE t0");
    for (int i = 1; i < SLC_SQL_MAX_TABLES + 3; i++) {
        n += (size_t) snprintf(q + n, sizeof(q) - n, ", t%d", i);
    }
    n += (size_t) snprintf(q + n, sizeof(q) - n, " SET a = 1");
    (void) slc_sql_classify((uint8_t *) q, n, 0, &si);
    ck_assert(si.flags & SLC_SQL_F_TABLES_PARTIAL);
    ck_assert_int_eq(slc_cache_invalidates(&si), SLC_CACHE_INV_ALL);
}
END_TEST


/* DDL that may change a view or a trigger: the schema catalog is stale. */
static const struct {
    const char  *q;
    int          may;
} slc_test_ddl[] = {
    { "TRUNCATE t", 0 },
    { "truncate table t", 0 },
    { "CREATE TABLE t (a INT)", 0 },
    { "CREATE TEMPORARY TABLE t (a INT)", 0 },
    { "CREATE INDEX i ON t (a)", 0 },
    { "CREATE UNIQUE INDEX i ON t (a)", 0 },
    { "  /* a comment */ create\ttable t (a INT)", 0 },
    { "ALTER TABLE t ADD c INT", 0 },
    { "ALTER TABLE t RENAME TO u", 1 },
    { "alter table t rename column a to b", 1 },
    { "CREATE VIEW v AS SELECT 1", 1 },
    { "CREATE OR REPLACE VIEW v AS SELECT 1", 1 },
    { "CREATE TRIGGER g AFTER INSERT ON t FOR EACH ROW SET @a = 1", 1 },
    { "/*!50001 CREATE TABLE t (a INT) */", 1 },
    { "DROP TABLE t", 1 },
    { "RENAME TABLE a TO b", 1 },
    { "ALTER VIEW v AS SELECT 2", 1 },
    { "", 1 },
};

START_TEST(test_ddl_may)
{
    for (size_t i = 0; i < slc_nelems(slc_test_ddl); i++) {
        const char *q = slc_test_ddl[i].q;

        ck_assert_msg(slc_cache_ddl_may((const uint8_t *) q, strlen(q))
                      == slc_test_ddl[i].may, "\"%s\"", q);
    }
}
END_TEST

/* --- rules -------------------------------------------------------------- */

/* Split "a b 'c d'" into words, as the config parser would. */
static unsigned
slc_test_args(char *line, slc_str_t *args, unsigned max)
{
    unsigned  n = 0;
    char     *p = line;

    while (*p != '\0' && n < max) {
        char  q = 0;

        while (*p == ' ') {
            p++;
        }
        if (*p == '\0') {
            break;
        }
        if (*p == '\'') {
            q = *p++;
        }
        args[n].data = p;
        while (*p != '\0' && (q ? *p != q : *p != ' ')) {
            p++;
        }
        args[n].len = (size_t) (p - args[n].data);
        n++;
        if (*p != '\0') {
            *p++ = '\0';
        }
    }
    return n;
}

/* A rule that holds nothing to free (a failed parse leaves it so). */
static void
slc_test_rule_empty(const slc_sql_rule_t *r)
{
    for (unsigned on = 0; on < SLC_RULE_ON_N; on++) {
        ck_assert_ptr_null(r->code[on]);
    }
    ck_assert_ptr_null(r->rewrite);
}

/* Parse and add one rule line; SLC_OK or SLC_ERROR with err set. */
static int
slc_test_rule(slc_sql_rules_t *rl, const char *line, char *err,
              size_t errlen)
{
    char            buf[512];
    slc_str_t       args[16];
    unsigned        n;
    slc_sql_rule_t  r;

    memset(&r, 0, sizeof(r));
    strlcpy(buf, line, sizeof(buf));
    n = slc_test_args(buf, args, 16);
    if (slc_cache_rule_parse(args, n, &r, err, errlen) != SLC_OK) {
        slc_test_rule_empty(&r);
        return SLC_ERROR;
    }
    return slc_sql_rules_add(rl, &r, err, errlen);
}

#define ON_TEXT    SLC_RULE_ON_TEXT
#define ON_TABLE   SLC_RULE_ON_TABLE
#define ON_SCHEMA  SLC_RULE_ON_SCHEMA     /* match=database */
#define ON_USER    SLC_RULE_ON_USER

START_TEST(test_rule_parse)
{
    static const struct {
        const char  *line;
        const char  *err;       /* NULL: valid */
        int          on;
        long long    ttl;
        int          no_cache;
        int          unknown;
    } p[] = {
        { "r1 match=text '^SELECT' ttl=10s", NULL, ON_TEXT, 10000, 0, 0 },
        { "r2 match=table '^shop\\.prices$' no_cache", NULL, ON_TABLE, -1,
          1, 0 },
        { "r3 match=database ^shop$ ttl=1m30s", NULL, ON_SCHEMA, 90000, 0,
          0 },
        { "r4 match=user ^report$ ttl=500ms cache_unknown_tables", NULL,
          ON_USER, 500, 0, 1 },
        { "r5 match=table . cache_unknown_tables", NULL, ON_TABLE, -1, 0,
          1 },
        { "r6.x-y_z match=text x ttl=5", NULL, ON_TEXT, 5000, 0, 0 },
        { "", "a name", 0, 0, 0, 0 },
        { "bad/name match=text x ttl=1s", "a name", 0, 0, 0, 0 },
        { "r match=column x ttl=1s", "match=text, match=table", 0, 0, 0, 0 },
        { "r text x ttl=1s", "match=text, match=table", 0, 0, 0, 0 },
        { "r", "match=text, match=table", 0, 0, 0, 0 },
        { "r match=text", "a regular expression", 0, 0, 0, 0 },
        { "r match=text x", "no action", 0, 0, 0, 0 },
        { "r match=text x ttl=0", "invalid ttl", 0, 0, 0, 0 },
        { "r match=text x ttl=10y", "invalid ttl", 0, 0, 0, 0 },
        { "r match=text x ttl=", "unknown action", 0, 0, 0, 0 },
        { "r match=text x cache", "unknown action", 0, 0, 0, 0 },
        { "r match=text x no_cache ttl=1s", "no_cache takes no other", 0, 0,
          0, 0 },
        { "r match=text x no_cache no_cache", "no_cache takes no other", 0,
          0, 0, 0 },
        { "r match=text x no_cache cache_unknown_tables",
          "no_cache takes no other", 0, 0, 0, 0 },
        { "r match=text x no_cache cache_stored_functions",
          "no_cache takes no other", 0, 0, 0, 0 },
        { "r match=text x cache_stored_function", "unknown action", 0, 0,
          0, 0 },
    };

    for (size_t i = 0; i < slc_nelems(p); i++) {
        char            buf[512], err[256] = "";
        slc_str_t       args[16];
        unsigned        n;
        slc_sql_rule_t  r;
        int             rc;

        memset(&r, 0, sizeof(r));
        strlcpy(buf, p[i].line, sizeof(buf));
        n = slc_test_args(buf, args, 16);
        rc = slc_cache_rule_parse(args, n, &r, err, sizeof(err));
        if (p[i].err != NULL) {
            ck_assert_msg(rc == SLC_ERROR && strstr(err, p[i].err) != NULL,
                          "\"%s\": %d \"%s\"", p[i].line, rc, err);
            slc_test_rule_empty(&r);
            continue;
        }
        ck_assert_msg(rc == SLC_OK, "\"%s\": %s", p[i].line, err);
        ck_assert_str_eq(r.name, args[0].data);
        /* the one test its match= names, and a cache action */
        for (int on = 0; on < SLC_RULE_ON_N; on++) {
            ck_assert_msg((r.code[on] != NULL) == (on == p[i].on),
                          "\"%s\": %s", p[i].line,
                          slc_sql_rule_on_name(on));
        }
        ck_assert(r.cache.set);
        ck_assert_int_eq(r.cache.ttl_ms, p[i].ttl);
        ck_assert_int_eq(r.cache.no_cache, p[i].no_cache);
        ck_assert_int_eq(r.cache.unknown_tables, p[i].unknown);
        ck_assert_int_eq(r.route, SLC_RULE_ROUTE_NONE);
        ck_assert(!r.block && !r.cont);
        ck_assert_ptr_null(r.rewrite);
        slc_sql_rule_free(&r);
        slc_test_rule_empty(&r);
    }
}
END_TEST

static slc_cache_verdict_t
slc_test_classify(const char *q, slc_sql_info_t *si)
{
    slc_cache_session_t  ss = { .db = "shop", .db_len = 4, .status = AC };

    (void) slc_sql_classify((const uint8_t *) q, strlen(q), 0, si);
    return slc_cache_cacheable((const uint8_t *) q, strlen(q), si, &ss);
}

static void
slc_test_rule_of(const char *line, slc_sql_rule_t *r)
{
    char       buf[256], err[256];
    slc_str_t  args[16];
    unsigned   n;

    strlcpy(buf, line, sizeof(buf));
    n = slc_test_args(buf, args, 16);
    ck_assert_msg(slc_cache_rule_parse(args, n, r, err, sizeof(err))
                  == SLC_OK, "%s", err);
}

/*
 * cache_stored_functions lets a rule cache a statement that calls one,
 * cache_unknown_tables one with too many tables; a statement with both
 * needs both, whichever reason its verdict names.
 */
START_TEST(test_rule_allows)
{
    slc_sql_rule_t       fn, unk, both, ttl, no;
    slc_sql_info_t       si;
    slc_cache_verdict_t  v;
    char                 q[1024];
    size_t               n = 0;

    slc_test_rule_of("fn match=text audit ttl=10s cache_stored_functions",
                     &fn);
    slc_test_rule_of("unk match=text . cache_unknown_tables", &unk);
    slc_test_rule_of("both match=text . cache_stored_functions "
                     "cache_unknown_tables", &both);
    slc_test_rule_of("ttl match=text . ttl=1s", &ttl);
    slc_test_rule_of("no match=text . no_cache", &no);
    ck_assert(fn.cache.stored_functions && !fn.cache.unknown_tables);
    ck_assert_int_eq(fn.cache.ttl_ms, 10000);
    ck_assert(both.cache.stored_functions && both.cache.unknown_tables);
    ck_assert(!ttl.cache.stored_functions && !unk.cache.stored_functions);

    v = slc_test_classify("SELECT audit(1)", &si);
    ck_assert_int_eq(v, SLC_CACHE_STORED_FUNCTION);
    ck_assert(slc_cache_rule_allows(&fn, v, &si));
    ck_assert(slc_cache_rule_allows(&both, v, &si));
    ck_assert(!slc_cache_rule_allows(&unk, v, &si));
    ck_assert(!slc_cache_rule_allows(&ttl, v, &si));
    ck_assert(!slc_cache_rule_allows(&no, v, &si));
    ck_assert(!slc_cache_rule_allows(NULL, v, &si));

    v = slc_test_classify("SELECT COUNT(*) FROM t", &si);
    ck_assert_int_eq(v, SLC_CACHE_CACHEABLE);
    ck_assert(slc_cache_rule_allows(NULL, v, &si));
    ck_assert(slc_cache_rule_allows(&ttl, v, &si));

    v = slc_test_classify("SELECT NOW(), audit(1)", &si);
    ck_assert_int_eq(v, SLC_CACHE_FUNCTION);
    ck_assert(!slc_cache_rule_allows(&both, v, &si));

    /* too many tables and a stored function */
    n += (size_t) snprintf(q + n, sizeof(q) - n, "SELECT audit(1) FROM t0");
    for (int i = 1; i < SLC_SQL_MAX_TABLES + 3; i++) {
        n += (size_t) snprintf(q + n, sizeof(q) - n, ", t%d", i);
    }
    v = slc_test_classify(q, &si);
    ck_assert_int_eq(v, SLC_CACHE_STORED_FUNCTION);
    ck_assert(!slc_cache_rule_allows(&fn, v, &si));
    ck_assert(!slc_cache_rule_allows(&unk, v, &si));
    ck_assert(slc_cache_rule_allows(&both, v, &si));

    /* too many tables alone: "SELECT 1       FROM t0, ..." */
    memcpy(q, "SELECT 1       ", 15);
    v = slc_test_classify(q, &si);
    ck_assert_int_eq(v, SLC_CACHE_TABLES_UNKNOWN);
    ck_assert(!slc_cache_rule_allows(&fn, v, &si));
    ck_assert(slc_cache_rule_allows(&unk, v, &si));
    ck_assert(slc_cache_rule_allows(&both, v, &si));
    ck_assert(!slc_cache_rule_allows(&ttl, v, &si));

    slc_sql_rule_free(&fn);
    slc_sql_rule_free(&unk);
    slc_sql_rule_free(&both);
    slc_sql_rule_free(&ttl);
    slc_sql_rule_free(&no);
}
END_TEST

/* A bad regex says where; a name twice is refused; nothing leaks. */
START_TEST(test_rule_errors)
{
    slc_sql_rules_t  rl;
    char             err[256];

    slc_sql_rules_init(&rl);
    ck_assert_int_eq(slc_test_rule(&rl, "bad match=text 'ab(c' ttl=1s", err,
                                   sizeof(err)), SLC_ERROR);
    ck_assert_msg(strstr(err, "cache_rule \"bad\": bad regex at offset 4: ")
                  != NULL, "%s", err);
    ck_assert_int_eq(slc_test_rule(&rl, "bad2 match=table 'a[b' no_cache",
                                   err, sizeof(err)), SLC_ERROR);
    ck_assert_msg(strstr(err, "at offset 3: ") != NULL, "%s", err);
    ck_assert_int_eq(slc_test_rule(&rl, "bad3 match=text 'x{2,1}' no_cache",
                                   err, sizeof(err)), SLC_ERROR);
    ck_assert_msg(strstr(err, "at offset ") != NULL, "%s", err);
    ck_assert_int_eq(slc_test_rule(&rl, "ok match=text x ttl=1s", err,
                                   sizeof(err)), SLC_OK);
    /* the list's check: the server's one list of rule and cache_rule */
    ck_assert_int_eq(slc_test_rule(&rl, "ok match=user y no_cache", err,
                                   sizeof(err)), SLC_ERROR);
    ck_assert_str_eq(err, "rule \"ok\": duplicate name");
    ck_assert_uint_eq(rl.n, 1);
    slc_sql_rules_free(&rl);
    ck_assert_uint_eq(rl.n, 0);
    ck_assert_ptr_null(rl.md);
}
END_TEST

static const char  *slc_test_rule_lines[] = {
    "no_admin match=user '^admin$' no_cache",
    "prices match=table '^shop\\.prices$' no_cache",
    "shop_unknown match=database '^shop$' cache_unknown_tables ttl=2s",
    "reports match=text '(?i)^\\s*select\\b.*\\breport_' ttl=1h",
    "stats match=table '^stats\\.' ttl=5m",
    "anywhere match=table 'log' ttl=1s",
    "empty_db match=database '^$' ttl=3s",
};

static const struct {
    const char  *q;
    const char  *db;
    const char  *user;
    int          rule;
} slc_test_matches[] = {
    { "SELECT * FROM prices", "shop", "admin", 0 },     /* first wins */
    { "SELECT * FROM prices", "shop", "app", 1 },
    { "SELECT * FROM Prices", "SHOP", "app", 1 },       /* keys lowercased */
    { "SELECT * FROM shop.prices", "other", "app", 1 },
    { "SELECT * FROM prices", "other", "app", -1 },
    { "SELECT * FROM shop.prices_old", "other", "app", 2 },  /* $ anchor */
    { "SELECT * FROM xshop.prices", "other", "app", -1 },    /* ^ anchor */
    { "SELECT * FROM orders", "shop", "app", 2 },
    { "SELECT 1", "shop", "app", 2 },       /* no tables: the default db */
    { "SELECT * FROM other.t, shop.u", "x", "app", 2 },
    { "SELECT * FROM t", "shop2", "app", -1 },
    { "SELECT * FROM t", "shop", "administrator", 2 },
    { "  select a from report_daily", "x", "app", 3 },
    { "SELECT a FROM t WHERE b = 'report_'", "x", "app", 3 },
    { "SELECT report_x FROM t", "x", "app", 3 },
    { "SELECT a FROM myreport_x", "x", "app", -1 },  /* \b */
    { "SELECT * FROM stats.hits", "x", "app", 4 },
    { "SELECT * FROM hits", "stats", "app", 4 },
    { "SELECT * FROM hits", "statsx", "app", -1 },
    { "SELECT * FROM t JOIN applog ON 1", "x", "app", 5 },
    { "SELECT * FROM t", NULL, "app", 6 },
    { "SELECT 1", NULL, "app", 6 },
    { "SELECT 1", NULL, NULL, 6 },
    { "SELECT 1", "x", NULL, -1 },
};

static void
slc_test_match_all(int jit)
{
    slc_sql_rules_t  rl;
    char             err[256];

    slc_sql_rules_init(&rl);
    rl.jit = jit != 0;
    for (size_t i = 0; i < slc_nelems(slc_test_rule_lines); i++) {
        ck_assert_msg(slc_test_rule(&rl, slc_test_rule_lines[i], err,
                                    sizeof(err)) == SLC_OK, "%s", err);
    }
    ck_assert_uint_eq(rl.needs, SLC_RULE_NEEDS(ON_TEXT)
                      | SLC_RULE_NEEDS(ON_TABLE) | SLC_RULE_NEEDS(ON_SCHEMA)
                      | SLC_RULE_NEEDS(ON_USER));
    ck_assert(!rl.routes);
    for (size_t i = 0; i < slc_nelems(slc_test_matches); i++) {
        const char              *q = slc_test_matches[i].q;
        const char              *db = slc_test_matches[i].db;
        const char              *user = slc_test_matches[i].user;
        int                      want = slc_test_matches[i].rule;
        slc_sql_info_t           si;
        slc_sql_keys_t           k;
        slc_sql_rule_verdict_t   v;
        slc_sql_rule_subject_t   s = {
            .q = (const uint8_t *) q, .len = strlen(q), .keys = &k,
            .user = user, .db = db ? db : ""
        };

        (void) slc_sql_classify(s.q, s.len, 0, &si);
        ck_assert_int_eq(slc_sql_table_keys(s.q, &si, db,
                                            db ? strlen(db) : 0, &k),
                         SLC_OK);
        slc_sql_rules_eval(&rl, &s, &v);
        ck_assert_msg(v.first == want && v.cache == want,
                      "jit %d: \"%s\" db %s user %s: rule %d/%d, want %d",
                      jit, q, db ? db : "-", user ? user : "-", v.first,
                      v.cache, want);
        /* first match wins: that rule's bit alone */
        ck_assert_uint_eq(v.matched, want < 0 ? 0 : 1ull << want);
        ck_assert_uint_eq(v.failed, 0);
        ck_assert_int_eq(v.route, -1);
        ck_assert_int_eq(v.block, -1);
        ck_assert_int_eq(v.rewrite, -1);
    }
    slc_sql_rules_free(&rl);
}

START_TEST(test_rule_match)
{
    slc_test_match_all(1);
}
END_TEST

START_TEST(test_rule_match_nojit)
{
    slc_test_match_all(0);
}
END_TEST

/* With JIT asked for and available, the patterns are JIT-compiled (so the
   two tests above run both matchers); without, they are not. */
START_TEST(test_rule_jit)
{
    slc_sql_rules_t  rl;
    char             err[256];
    uint32_t         have = 0;
    size_t           size = 0;

    (void) pcre2_config(PCRE2_CONFIG_JIT, &have);
    slc_sql_rules_init(&rl);
    ck_assert_int_eq(slc_test_rule(&rl, "j match=text ^a ttl=1s", err,
                                   sizeof(err)), SLC_OK);
    ck_assert_int_eq(pcre2_pattern_info(rl.rule[0].code[ON_TEXT],
                                        PCRE2_INFO_JITSIZE, &size), 0);
    ck_assert_int_eq(size > 0, have != 0);
    slc_sql_rules_free(&rl);

    rl.jit = 0;
    ck_assert_int_eq(slc_test_rule(&rl, "j match=text ^a ttl=1s", err,
                                   sizeof(err)), SLC_OK);
    ck_assert_int_eq(pcre2_pattern_info(rl.rule[0].code[ON_TEXT],
                                        PCRE2_INFO_JITSIZE, &size), 0);
    ck_assert_uint_eq(size, 0);
    slc_sql_rules_free(&rl);
}
END_TEST

/* Many rules (the array grows), the last one matching; a statement with
   bytes that are not UTF-8 is matched as bytes. */
START_TEST(test_rule_many)
{
    slc_sql_rules_t         rl;
    char                    err[256], line[64];
    const char             *q = "SELECT '\xff\xfe' FROM t";
    slc_sql_info_t          si;
    slc_sql_keys_t          k;
    slc_sql_rule_verdict_t  v;
    slc_sql_rule_subject_t  s = {
        .q = (const uint8_t *) q, .len = strlen(q), .keys = &k, .db = "x"
    };

    slc_sql_rules_init(&rl);
    for (int i = 0; i < 40; i++) {
        snprintf(line, sizeof(line), "r%d match=table '^x%d$' ttl=%ds", i, i,
                 i + 1);
        ck_assert_int_eq(slc_test_rule(&rl, line, err, sizeof(err)), SLC_OK);
    }
    ck_assert_int_eq(slc_test_rule(&rl, "bytes match=text '\\xff' no_cache",
                                   err, sizeof(err)), SLC_OK);
    (void) slc_sql_classify(s.q, s.len, 0, &si);
    (void) slc_sql_table_keys(s.q, &si, "x", 1, &k);
    slc_sql_rules_eval(&rl, &s, &v);
    ck_assert_int_eq(v.first, 40);
    ck_assert_int_eq(v.cache, 40);
    ck_assert_uint_eq(v.matched, 1ull << 40);
    ck_assert_int_eq(rl.rule[39].cache.ttl_ms, 40000);
    ck_assert(rl.rule[40].cache.no_cache);
    slc_sql_rules_free(&rl);
}
END_TEST

static Suite *
slc_cache_policy_suite(void)
{
    Suite  *s = suite_create("cache_policy");
    TCase  *tc = tcase_create("policy");

    tcase_add_loop_test(tc, test_verdict, 0, SLC_TEST_NVERDICTS);
    tcase_add_test(tc, test_view_verdict);
    tcase_add_test(tc, test_verdict_names);
    tcase_add_test(tc, test_verdict_tables_unknown);
    tcase_add_test(tc, test_keys);
    tcase_add_test(tc, test_keys_limits);
    tcase_add_test(tc, test_keys_full);
    tcase_add_test(tc, test_invalidates);
    tcase_add_test(tc, test_invalidates_many);
    tcase_add_test(tc, test_ddl_may);
    tcase_add_test(tc, test_rule_parse);
    tcase_add_test(tc, test_rule_errors);
    tcase_add_test(tc, test_rule_allows);
    tcase_add_test(tc, test_rule_match);
    tcase_add_test(tc, test_rule_match_nojit);
    tcase_add_test(tc, test_rule_jit);
    tcase_add_test(tc, test_rule_many);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return slc_check_run(slc_cache_policy_suite());
}
