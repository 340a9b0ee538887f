/*
 * The statement classifier (slc_sql_classify.h).  A golden table of
 * statements with the kind, the exact flags, the route outside a
 * transaction and the tables each must give; then routes inside
 * transactions, hints, every prefix of every statement (copied to an
 * exact-size heap buffer, so ASan sees any overread), more tables than
 * fit, and 1 MB statements (bounded by design: one pass, no recursion).
 */

#include "slc_test.h"

#include <string.h>

#include "slc_core.h"
#include "slc_sql_builtins.h"
#include "slc_sql_classify.h"
#include "slc_sql_tail.h"

/* Short names for the golden table. */
#define WR  SLC_SQL_F_WRITE
#define LR  SLC_SQL_F_LOCKING_READ
#define SI  SLC_SQL_F_SELECT_INTO
#define VA  SLC_SQL_F_USER_VAR_ASSIGN
#define VR  SLC_SQL_F_USER_VAR_READ
#define SV  SLC_SQL_F_SYSVAR_READ
#define MU  SLC_SQL_F_MULTI
#define LI  SLC_SQL_F_LAST_ID
#define LF  SLC_SQL_F_LOCK_FUNC
#define SQ  SLC_SQL_F_SEQUENCE
#define CI  SLC_SQL_F_CONN_ID
#define RO  SLC_SQL_F_READ_ONLY_TRX
#define RW  SLC_SQL_F_READ_WRITE_TRX
#define SN  SLC_SQL_F_SNAPSHOT
#define SS  SLC_SQL_F_SESSION_STATE
#define SL  SLC_SQL_F_SAME_AS_LAST
#define ND  SLC_SQL_F_NON_DETERMINISTIC
#define BL  SLC_SQL_F_BINLOG
#define GL  SLC_SQL_F_GLOBAL
#define TM  SLC_SQL_F_TEMPORARY
#define DT  SLC_SQL_F_DROP_TABLE
#define UT  SLC_SQL_F_UNTERMINATED
#define NC  SLC_SQL_F_SQL_NO_CACHE
#define SF  SLC_SQL_F_STORED_FUNC
#define DD  SLC_SQL_F_DDL
#define MS  SLC_SQL_F_MULTI_STATE
#define TP  SLC_SQL_F_TABLES_PARTIAL
#define AM  SLC_SQL_F_AMBIGUOUS
#define CF  SLC_SQL_F_CALC_FOUND_ROWS
#define FR  SLC_SQL_F_FOUND_ROWS

#define S(q, k, f, r, t)  { q, SLC_SQL_##k, f, SLC_SQL_TO_##r, t }

typedef struct {
    const char       *q;
    slc_sql_kind_t    kind;
    uint32_t          flags;
    slc_sql_route_t   route;        /* autocommit, no transaction */
    const char       *tables;       /* "db.t,u" */
} slc_test_stmt_t;

static const slc_test_stmt_t  slc_test_stmts[] = {
    /* reads */
    S("SELECT 1", SELECT, 0, REPLICA, ""),
    S("select * from t", SELECT, 0, REPLICA, "t"),
    S("SELECT a FROM db.t WHERE x = 1", SELECT, 0, REPLICA, "db.t"),
    S("SELECT * FROM `db`.`t`", SELECT, 0, REPLICA, "db.t"),
    S("SELECT * FROM `my db` . `my``t`", SELECT, 0, REPLICA, "my db.my``t"),
    S("SELECT * FROM t1, t2 AS b, `t3` c WHERE 1", SELECT, 0, REPLICA,
      "t1,t2,t3"),
    S("SELECT * FROM t1 JOIN t2 ON t1.a = t2.a LEFT JOIN db.t3 USING (a)",
      SELECT, 0, REPLICA, "t1,t2,db.t3"),
    S("SELECT * FROM t WHERE id IN (SELECT id FROM u)", SELECT, 0, REPLICA,
      "t,u"),
    S("SELECT (SELECT MAX(a) FROM u) FROM t", SELECT, 0, REPLICA, "u,t"),
    S("SELECT * FROM (SELECT * FROM t) AS d", SELECT, 0, REPLICA, "t"),
    S("SELECT * FROM (t1 JOIN t2)", SELECT, 0, REPLICA, "t1,t2"),
    S("(SELECT 1) UNION (SELECT 2)", SELECT, 0, REPLICA, ""),
    S("((SELECT a FROM t)) UNION ALL SELECT b FROM u", SELECT, 0, REPLICA,
      "t,u"),
    S("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", SELECT, 0,
      REPLICA, "t,u"),
    S("(SELECT a FROM t) UNION (SELECT b FROM u) ORDER BY 1", SELECT, 0,
      REPLICA, "t,u"),
    S("SELECT a FROM t1 INTERSECT SELECT a FROM t2", SELECT, 0, REPLICA,
      "t1,t2"),
    S("WITH cte AS (SELECT * FROM t) SELECT * FROM cte", SELECT, 0, REPLICA,
      "t,cte"),
    S("WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r "
      "WHERE n < 5) SELECT * FROM r", SELECT, 0, REPLICA, "r,r"),
    S("WITH a AS (SELECT 1), b AS (SELECT 2) SELECT * FROM a, b", SELECT, 0,
      REPLICA, "a,b"),
    S("VALUES (1), (2)", SELECT, 0, REPLICA, ""),
    S("TABLE t", SELECT, 0, REPLICA, "t"),
    S("TABLE db.t ORDER BY a", SELECT, 0, REPLICA, "db.t"),
    S("SELECT * FROM t1 STRAIGHT_JOIN t2", SELECT, 0, REPLICA, "t1,t2"),
    S("SELECT * FROM t1 CROSS JOIN t2 NATURAL JOIN t3", SELECT, 0, REPLICA,
      "t1,t2,t3"),
    S("SELECT * FROM dual", SELECT, 0, REPLICA, ""),
    S("SELECT 1 FROM DUAL", SELECT, 0, REPLICA, ""),
    S("SELECT * FROM t1 LIMIT 1, 2", SELECT, 0, REPLICA, "t1"),
    S("SELECT * FROM t1 a, t2 b WHERE a.x = b.x", SELECT, 0, REPLICA,
      "t1,t2"),
    S("SELECT * FROM t1 PARTITION (p0, p1)", SELECT, 0, REPLICA, "t1"),
    S("SELECT * FROM t AS status", SELECT, 0, REPLICA, "t"),
    S("SELECT * FROM status", SELECT, 0, REPLICA, "status"),
    S("SELECT * FROM mysql.user", SELECT, 0, REPLICA, "mysql.user"),
    S("SELECT * FROM user", SELECT, 0, REPLICA, "user"),
    S("SELECT * FROM t USE INDEX (i) WHERE 1", SELECT, 0, REPLICA, "t"),
    S("SELECT COUNT(*) FROM t GROUP BY a HAVING COUNT(*) > 1", SELECT, 0,
      REPLICA, "t"),
    S("SELECT * FROM t WINDOW w AS (ORDER BY a)", SELECT, 0, REPLICA, "t"),
    S("SELECT * FROM t1 WHERE EXISTS (SELECT 1 FROM t2)", SELECT, 0,
      REPLICA, "t1,t2"),
    S("SELECT SQL_CALC_FOUND_ROWS * FROM t LIMIT 10", SELECT, CF, REPLICA,
      "t"),
    S("select distinct sql_calc_found_rows a FROM t", SELECT, CF, REPLICA,
      "t"),
    S("(SELECT SQL_CALC_FOUND_ROWS a FROM t LIMIT 1) UNION (SELECT b FROM u)",
      SELECT, CF, REPLICA, "t,u"),
    S("SELECT a FROM t UNION SELECT SQL_CALC_FOUND_ROWS b FROM u", SELECT,
      CF, REPLICA, "t,u"),
    S("SELECT SQL_CALC_FOUND_ROWS (a) FROM t", SELECT, CF, REPLICA, "t"),
    S("SELECT 'SQL_CALC_FOUND_ROWS', `sql_calc_found_rows` FROM t", SELECT,
      0, REPLICA, "t"),
    S("SELECT * FROM t WHERE a = ?", SELECT, 0, REPLICA, "t"),
    S("SELECT 0x41, X'41', b'01', _utf8'x', N'y'", SELECT, 0, REPLICA, ""),
    S("SELECT 1.5e-3 - 2", SELECT, 0, REPLICA, ""),
    S("SELECT 1--1", SELECT, 0, REPLICA, ""),
    S("SELECT 1 --\n", SELECT, 0, REPLICA, ""),
    S("SELECT 1 --", SELECT, 0, REPLICA, ""),
    S("SELECT * FROM t;", SELECT, 0, REPLICA, "t"),
    S("SELECT * FROM t; ", SELECT, 0, REPLICA, "t"),
    S("  \n\tselect\n*\nfrom\nt", SELECT, 0, REPLICA, "t"),
    S("SeLeCt * FrOm T", SELECT, 0, REPLICA, "T"),
    S("select*from t", SELECT, 0, REPLICA, "t"),
    S("SELECT SQL_NO_CACHE * FROM t", SELECT, NC, REPLICA, "t"),
    S("SELECT /*+ MAX_EXECUTION_TIME(1000) */ * FROM t", SELECT, 0, REPLICA,
      "t"),
    /* a documented limit: FROM inside EXTRACT names a column */
    S("SELECT * FROM t WHERE EXTRACT(YEAR FROM d) = 2020", SELECT, 0,
      REPLICA, "t,d"),

    /* locking reads, and what only looks like one */
    S("SELECT * FROM t FOR UPDATE", SELECT, LR, PRIMARY, "t"),
    S("SELECT * FROM t WHERE a = 1 FOR SHARE", SELECT, LR, PRIMARY, "t"),
    S("SELECT * FROM t LOCK IN SHARE MODE", SELECT, LR, PRIMARY, "t"),
    S("select * from t for update nowait", SELECT, LR, PRIMARY, "t"),
    S("SELECT * FROM t FOR UPDATE SKIP LOCKED", SELECT, LR, PRIMARY, "t"),
    S("SELECT * FROM t1 UNION ALL SELECT * FROM t2 FOR UPDATE", SELECT, LR,
      PRIMARY, "t1,t2"),
    S("SELECT * FROM t FOR\n/* x */ UPDATE", SELECT, LR, PRIMARY, "t"),
    S("SELECT * FROM t WHERE a = 'FOR UPDATE'", SELECT, 0, REPLICA, "t"),
    S("SELECT 'FOR UPDATE'", SELECT, 0, REPLICA, ""),
    S("SELECT \"LOCK IN SHARE MODE\"", SELECT, 0, REPLICA, ""),
    S("SELECT 1 -- FOR UPDATE", SELECT, 0, REPLICA, ""),
    S("SELECT 1 # FOR UPDATE", SELECT, 0, REPLICA, ""),
    S("SELECT 1 /* FOR UPDATE */", SELECT, 0, REPLICA, ""),
    S("SELECT 1 FROM t WHERE c = 'FOR UPDATE' /* FOR UPDATE */ "
      "-- FOR UPDATE\n", SELECT, 0, REPLICA, "t"),
    S("SELECT `for`, `update` FROM t", SELECT, 0, REPLICA, "t"),
    S("SELECT * FROM t WHERE `for` = 1 AND `update` = 2", SELECT, 0,
      REPLICA, "t"),
    S("SELECT `update`, `delete` FROM `insert`", SELECT, 0, REPLICA,
      "insert"),
    S("SELECT 1 /*! FOR UPDATE */", SELECT, LR, PRIMARY, ""),
    S("SELECT * FROM t /*!50100 FOR UPDATE */", SELECT, LR, PRIMARY, "t"),

    /* SELECT ... INTO */
    S("SELECT a INTO @x FROM t", SELECT, SI | VA, PRIMARY, "t"),
    S("SELECT a, b INTO @x, @y FROM t", SELECT, SI | VA, PRIMARY, "t"),
    S("SELECT * FROM t INTO OUTFILE '/tmp/x'", SELECT, SI, PRIMARY, "t"),
    S("SELECT * INTO DUMPFILE '/tmp/x' FROM t", SELECT, SI, PRIMARY, "t"),
    S("SELECT 'INTO @x' FROM t", SELECT, 0, REPLICA, "t"),

    /* user and system variables */
    S("SELECT @a := 1", SELECT, VA, PRIMARY, ""),
    S("SELECT @a:=1", SELECT, VA, PRIMARY, ""),
    S("SELECT @a", SELECT, VR, REPLICA, ""),
    S("SELECT @a := @a + 1 FROM t", SELECT, VA | VR, PRIMARY, "t"),
    S("SELECT a FROM t WHERE b = @x", SELECT, VR, REPLICA, "t"),
    S("SELECT @`quoted var`", SELECT, VR, REPLICA, ""),
    S("SELECT 1,@a", SELECT, VR, REPLICA, ""),
    S("SELECT (@a)", SELECT, VR, REPLICA, ""),
    S("SELECT @'v' := 2", SELECT, VA, PRIMARY, ""),
    S("SELECT 'a' ':=' 'b'", SELECT, 0, REPLICA, ""),
    S("SELECT * FROM t WHERE a = '@x := 1'", SELECT, 0, REPLICA, "t"),
    S("SELECT @@version", SELECT, SV, REPLICA, ""),
    S("SELECT @@global.read_only", SELECT, SV, REPLICA, ""),
    S("SELECT @@identity", SELECT, SV | LI, PRIMARY, ""),
    S("SELECT @@last_insert_id", SELECT, SV | LI, PRIMARY, ""),
    S("SELECT @@IDENTITY", SELECT, SV | LI, PRIMARY, ""),

    /* functions that tie a statement to the primary */
    S("SELECT LAST_INSERT_ID()", SELECT, LI | ND, PRIMARY, ""),
    S("select last_insert_id ( )", SELECT, LI | ND, PRIMARY, ""),
    S("SELECT last_insert_id FROM t", SELECT, 0, REPLICA, "t"),
    S("SELECT t.last_insert_id() FROM t", SELECT, SF, PRIMARY, "t"),
    S("SELECT 'LAST_INSERT_ID()'", SELECT, 0, REPLICA, ""),
    S("SELECT GET_LOCK('a', 10)", SELECT, LF | ND, PRIMARY, ""),
    S("SELECT GET_LOCK\n('a', 1)", SELECT, LF | ND, PRIMARY, ""),
    S("SELECT RELEASE_LOCK('a')", SELECT, LF | ND, PRIMARY, ""),
    S("SELECT IS_FREE_LOCK('a')", SELECT, LF | ND, PRIMARY, ""),
    S("SELECT IS_USED_LOCK('a')", SELECT, LF | ND, PRIMARY, ""),
    S("SELECT RELEASE_ALL_LOCKS()", SELECT, LF | ND, PRIMARY, ""),
    S("SELECT NEXTVAL(s)", SELECT, SQ | ND, PRIMARY, ""),
    S("SELECT NEXT VALUE FOR s", SELECT, SQ, PRIMARY, ""),
    S("SELECT next value for db.s", SELECT, SQ, PRIMARY, ""),
    S("SELECT PREVIOUS VALUE FOR s", SELECT, SQ, PRIMARY, ""),
    S("SELECT LASTVAL(s)", SELECT, SQ | ND, PRIMARY, ""),
    S("SELECT SETVAL(s, 10)", SELECT, SQ | ND, PRIMARY, ""),
    S("INSERT INTO t VALUES (NEXT VALUE FOR s)", INSERT, WR | SQ, PRIMARY,
      "t"),
    S("SELECT CONNECTION_ID()", SELECT, CI | ND, PRIMARY, ""),
    S("SELECT CONNECTION_ID /* x */ ()", SELECT, CI | ND, PRIMARY, ""),

    /* same backend as the statement before */
    S("SELECT ROW_COUNT()", SELECT, SL | ND, LAST, ""),
    S("SELECT FOUND_ROWS()", SELECT, FR | SL | ND, LAST, ""),
    S("select found_rows ( )", SELECT, FR | SL | ND, LAST, ""),
    S("SELECT found_rows FROM t", SELECT, 0, REPLICA, "t"),
    S("SELECT db.found_rows()", SELECT, SF, PRIMARY, ""),
    S("SELECT SQL_CALC_FOUND_ROWS * FROM t; SELECT FOUND_ROWS()", SELECT,
      CF | MU | FR | SL | ND, PRIMARY, "t"),
    S("SELECT @@warning_count", SELECT, SV | SL, LAST, ""),
    S("SELECT @@error_count", SELECT, SV | SL, LAST, ""),
    S("SELECT @@session.error_count", SELECT, SV | SL, LAST, ""),
    S("SELECT @@SESSION.WARNING_COUNT", SELECT, SV | SL, LAST, ""),
    S("SHOW WARNINGS", SHOW, SL, LAST, ""),
    S("SHOW WARNINGS LIMIT 5", SHOW, SL, LAST, ""),
    S("show errors", SHOW, SL, LAST, ""),
    S("SHOW COUNT(*) WARNINGS", SHOW, SL, LAST, ""),
    S("SHOW STATUS", SHOW, SL, LAST, ""),
    S("SHOW SESSION STATUS LIKE 'Com%'", SHOW, SL, LAST, ""),
    S("SHOW LOCAL STATUS", SHOW, SL, LAST, ""),
    S("SHOW PROFILES", SHOW, SL, LAST, ""),
    S("SHOW PROFILE", SHOW, SL, LAST, ""),
    S("GET DIAGNOSTICS @n = NUMBER", ADMIN, SL | VR, LAST, ""),
    S("GET DIAGNOSTICS CONDITION 1 @m = MESSAGE_TEXT", ADMIN, SL | VR,
      LAST, ""),

    /* non-deterministic: readable, not cacheable */
    S("SELECT NOW()", SELECT, ND, REPLICA, ""),
    S("SELECT BENCHMARK(10, MD5('a'))", SELECT, ND, REPLICA, ""),
    S("SELECT CONVERT_TZ(d, 'UTC', 'Europe/Paris') FROM t", SELECT, ND,
      REPLICA, "t"),
    S("SELECT ENCRYPT('x')", SELECT, ND, REPLICA, ""),
    S("SELECT LOAD_FILE('/etc/hosts')", SELECT, ND, REPLICA, ""),
    S("SELECT MASTER_POS_WAIT('b.1', 4)", SELECT, ND, REPLICA, ""),
    S("SELECT MASTER_GTID_WAIT('0-1-1')", SELECT, ND, REPLICA, ""),
    S("SELECT SOURCE_POS_WAIT('b.1', 4)", SELECT, ND | SF, PRIMARY, ""),
    S("SELECT BINLOG_GTID_POS('b.1', 4)", SELECT, ND, REPLICA, ""),
    S("SELECT WAIT_FOR_EXECUTED_GTID_SET('x')", SELECT, ND | SF, PRIMARY,
      ""),
    S("SELECT WAIT_UNTIL_SQL_THREAD_AFTER_GTIDS('x')", SELECT, ND | SF,
      PRIMARY, ""),
    S("SELECT `NOW`() FROM t", SELECT, SF, PRIMARY, "t"),
    /* calls of functions that are no built-in: stored functions */
    S("SELECT audit(1)", SELECT, SF, PRIMARY, ""),
    S("SELECT test.audit(1)", SELECT, SF, PRIMARY, ""),
    S("SELECT `test`.`audit`(1)", SELECT, SF, PRIMARY, ""),
    S("SELECT `audit`(1)", SELECT, SF, PRIMARY, ""),
    S("SELECT my_fn /* x */ (1)", SELECT, SF, PRIMARY, ""),
    S("SELECT status(1)", SELECT, SF, PRIMARY, ""),
    S("SELECT a FROM t WHERE b = f(a)", SELECT, SF, PRIMARY, "t"),
    S("WITH c AS (SELECT f(1)) SELECT * FROM c", SELECT, SF, PRIMARY, "c"),
    S("SELECT CONCAT(a, b), count(*), Date_Format(d, '%Y') FROM t",
      SELECT, 0, REPLICA, "t"),
    S("SELECT JSON_EXTRACT(j, '$.a'), ROUND(x, 2), IFNULL(a, 0) FROM t",
      SELECT, 0, REPLICA, "t"),
    S("SELECT ROW_NUMBER() OVER (PARTITION BY a ORDER BY b) FROM t",
      SELECT, 0, REPLICA, "t"),
    S("SELECT a FROM t WHERE b IN (1, 2) AND (c OR NOT (d)) AND EXISTS "
      "(SELECT 1 FROM u)", SELECT, 0, REPLICA, "t,u"),
    S("SELECT * FROM t JOIN u USING (id) FORCE INDEX (k)", SELECT, 0,
      REPLICA, "t,u"),
    S("SELECT * FROM (SELECT a FROM t) x WHERE a = ANY (SELECT 1)",
      SELECT, 0, REPLICA, "t"),
    S("SELECT * FROM db.t PARTITION (p0)", SELECT, 0, REPLICA, "db.t"),
    S("WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
      "SELECT n FROM c", SELECT, 0, REPLICA, "c,c"),
    S("SELECT MATCH (a) AGAINST ('x' IN BOOLEAN MODE) FROM t", SELECT, 0,
      REPLICA, "t"),
    S("SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS (a INT PATH '$')) "
      "AS j", SELECT, 0, REPLICA, "JSON_TABLE"),
    S("SELECT CAST(a AS DECIMAL(10, 2)), CONVERT(b, CHAR(3)) FROM t",
      SELECT, 0, REPLICA, "t"),
    S("INSERT INTO t (a) VALUES (1)", INSERT, WR, PRIMARY, "t"),
    S("INSERT LOW_PRIORITY t (a) VALUES (1)", INSERT, WR, PRIMARY, "t"),
    S("LOAD DATA INFILE 'x' INTO TABLE db.t (a, @b) SET c = @b", LOAD,
      WR | VR, PRIMARY, "db.t"),
    S("SELECT * FROM t1, JSON_TABLE('[1]', '$[*]' COLUMNS (a INT PATH '$'))"
      " AS j", SELECT, 0, REPLICA, "t1,JSON_TABLE"),
    /* a FROM that names no table: a call after it is one */
    S("SELECT EXTRACT(YEAR FROM f(d)) FROM t", SELECT, SF, PRIMARY, "f,t"),
    S("SELECT TRIM(BOTH 'x' FROM db.f(a)) FROM t", SELECT, SF, PRIMARY,
      "db.f,t"),
    S("SELECT SUBSTRING(a FROM `f`(1)) FROM t", SELECT, SF, PRIMARY,
      "f,t"),
    S("SELECT * FROM t FOR SYSTEM_TIME FROM f(1) TO NOW()", SELECT,
      SF | ND, PRIMARY, "t,f"),
    S("SELECT EXTRACT(YEAR FROM NOW())", SELECT, ND, REPLICA, "NOW"),
    S("INSERT INTO db.t (a) SELECT audit(1)", INSERT, WR | SF, PRIMARY,
      "db.t"),
    /* non-reserved words that are table names after FROM */
    S("SELECT * FROM tables", SELECT, 0, REPLICA, "tables"),
    S("SELECT * FROM temporary JOIN tables", SELECT, 0, REPLICA,
      "temporary,tables"),
    /* a comma after a join condition or an index hint: more tables */
    S("SELECT * FROM t1 JOIN t2 ON t1.a = t2.a, t3", SELECT, 0, REPLICA,
      "t1,t2,t3"),
    S("SELECT * FROM t1 LEFT JOIN t2 USING (a, b), db.t3", SELECT, 0,
      REPLICA, "t1,t2,db.t3"),
    S("SELECT * FROM t USE INDEX (i), u", SELECT, 0, REPLICA, "t,u"),
    S("SELECT * FROM t IGNORE KEY FOR ORDER BY (i) JOIN u ON (a), v "
      "WHERE a IN (1, 2)", SELECT, 0, REPLICA, "t,u,v"),
    S("SELECT * FROM t1 JOIN t2 ON a = 1 WHERE b IN (1, 2) ORDER BY a, b",
      SELECT, 0, REPLICA, "t1,t2"),
    S("SELECT * FROM t1 JOIN t2 ON a GROUP BY a, b LIMIT 1, 2", SELECT, 0,
      REPLICA, "t1,t2"),
    S("SELECT * FROM t1 JOIN t2 ON ROW(a, b) = ROW(1, 2), t3", SELECT, 0,
      REPLICA, "t1,t2,t3"),
    S("DELETE FROM t1 USING t1, t2 WHERE 1", DELETE, WR, PRIMARY,
      "t1,t2"),
    S("INSERT INTO t SELECT * FROM u ON DUPLICATE KEY UPDATE a = 1, b = 2",
      INSERT, WR, PRIMARY, "t,u"),
    S("UPDATE t1 JOIN t2 ON t1.id = t2.id SET a = 1, b = 2", UPDATE, WR,
      PRIMARY, "t1,t2"),
    /* a parenthesised list of tables names all of them; a derived table's
       query, a list of values or columns names none */
    S("SELECT r2.b FROM (r1, r2) WHERE r1.a = r2.a", SELECT, 0, REPLICA,
      "r1,r2"),
    S("UPDATE (r1, r2) SET r2.b = 1", UPDATE, WR, PRIMARY, "r1,r2"),
    S("UPDATE r1 JOIN (r1 AS x, r2) SET r2.b = 1", UPDATE, WR, PRIMARY,
      "r1,r1,r2"),
    S("DELETE r2 FROM (r1, r2) WHERE r1.a = r2.a", DELETE, WR, PRIMARY,
      "r1,r2"),
    S("SELECT * FROM ((a, b), c)", SELECT, 0, REPLICA, "a,b,c"),
    S("SELECT * FROM (a JOIN b ON a.x = b.x, c)", SELECT, 0, REPLICA,
      "a,b,c"),
    S("SELECT * FROM t1, (t2, db.t3) JOIN t4 ON 1, t5", SELECT, 0, REPLICA,
      "t1,t2,db.t3,t4,t5"),
    S("SELECT * FROM t1 LEFT JOIN (t2, t3) ON t2.a = t1.a", SELECT, 0,
      REPLICA, "t1,t2,t3"),
    S("UPDATE t1, (t2, (t3)) SET a = 1", UPDATE, WR, PRIMARY, "t1,t2,t3"),
    S("SELECT * FROM (SELECT a, b FROM t) AS d, e", SELECT, 0, REPLICA,
      "t,e"),
    S("SELECT * FROM ((SELECT a, b FROM t) AS x, u)", SELECT, 0, REPLICA,
      "t,u"),
    S("SELECT * FROM (WITH c AS (SELECT 1), d AS (SELECT 2) SELECT * "
      "FROM c, d) AS x", SELECT, 0, REPLICA, "c,d"),
    S("SELECT * FROM (VALUES (1, 2), (3, 4)) AS v, t", SELECT, 0, REPLICA,
      "t"),
    S("SELECT * FROM (t1) WHERE x IN (1, 2)", SELECT, 0, REPLICA, "t1"),
    S("INSERT INTO t (a, b) VALUES (1, 2), (3, 4)", INSERT, WR, PRIMARY,
      "t"),
    S("SELECT * FROM t USE INDEX (i1, i2), u", SELECT, 0, REPLICA, "t,u"),
    S("SELECT * FROM t USE INDEX FOR JOIN (i), u", SELECT, 0, REPLICA,
      "t,u"),
    S("SELECT * FROM { OJ t1 LEFT OUTER JOIN t2 ON t1.a = t2.a }", SELECT,
      TP, REPLICA, "t2"),
    /* MariaDB's system-versioned tables */
    S("SELECT * FROM t1 FOR SYSTEM_TIME AS OF TIMESTAMP '2020-01-01', t2",
      SELECT, 0, REPLICA, "t1,t2"),
    S("SELECT * FROM t1 FOR SYSTEM_TIME ALL JOIN t2 FOR SYSTEM_TIME ALL "
      "ON t1.a = t2.a, t3", SELECT, 0, REPLICA, "t1,t2,t3"),
    S("SELECT * FROM t1 FOR SYSTEM_TIME BETWEEN '2020-01-01' AND "
      "'2021-01-01' x, t2 WHERE a IN (1, 2)", SELECT, 0, REPLICA, "t1,t2"),
    S("SELECT * FROM (t1 FOR SYSTEM_TIME ALL, t2)", SELECT, 0, REPLICA,
      "t1,t2"),
    S("SELECT * FROM t1, t2 FOR UPDATE", SELECT, LR, PRIMARY, "t1,t2"),
    S("SELECT NOW ()", SELECT, ND, REPLICA, ""),
    S("SELECT CURRENT_TIMESTAMP", SELECT, ND, REPLICA, ""),
    S("SELECT current_date, utc_time", SELECT, ND, REPLICA, ""),
    S("SELECT RAND()", SELECT, ND, REPLICA, ""),
    S("SELECT UUID()", SELECT, ND, REPLICA, ""),
    S("SELECT * FROM t WHERE d > CURDATE()", SELECT, ND, REPLICA, "t"),
    S("SELECT USER()", SELECT, ND, REPLICA, ""),
    S("SELECT DATABASE()", SELECT, ND, REPLICA, ""),
    S("SELECT now FROM t", SELECT, 0, REPLICA, "t"),
    S("SELECT a.now() FROM a", SELECT, SF, PRIMARY, "a"),

    /* SHOW */
    S("SHOW TABLES", SHOW, 0, REPLICA, ""),
    S("SHOW DATABASES", SHOW, 0, REPLICA, ""),
    S("SHOW MASTER STATUS", SHOW, BL, PRIMARY, ""),
    S("show master status", SHOW, BL, PRIMARY, ""),
    S("SHOW BINLOG EVENTS", SHOW, BL, PRIMARY, ""),
    S("SHOW BINLOG STATUS", SHOW, BL, PRIMARY, ""),
    S("SHOW BINARY LOGS", SHOW, BL, PRIMARY, ""),
    S("SHOW MASTER LOGS", SHOW, BL, PRIMARY, ""),
    S("SHOW SLAVE STATUS", SHOW, 0, REPLICA, ""),
    S("SHOW REPLICA STATUS", SHOW, 0, REPLICA, ""),
    S("SHOW GLOBAL STATUS", SHOW, 0, REPLICA, ""),
    S("SHOW VARIABLES LIKE 'max%'", SHOW, 0, REPLICA, ""),
    S("SHOW FULL PROCESSLIST", SHOW, 0, REPLICA, ""),
    S("SHOW CREATE TABLE t", SHOW, 0, REPLICA, "t"),
    S("SHOW COLUMNS FROM db.t", SHOW, 0, REPLICA, "db.t"),
    S("SHOW INDEX FROM t", SHOW, 0, REPLICA, "t"),
    S("SHOW ENGINE INNODB STATUS", SHOW, 0, REPLICA, ""),
    S("SHOW GRANTS", SHOW, 0, REPLICA, ""),

    /* EXPLAIN, DESCRIBE, ANALYZE */
    S("EXPLAIN SELECT * FROM t", EXPLAIN, 0, REPLICA, "t"),
    S("EXPLAIN EXTENDED SELECT 1", EXPLAIN, 0, REPLICA, ""),
    S("EXPLAIN FORMAT=JSON SELECT * FROM t", EXPLAIN, 0, REPLICA, "t"),
    S("EXPLAIN (SELECT 1)", EXPLAIN, 0, REPLICA, ""),
    S("EXPLAIN WITH c AS (SELECT 1) SELECT * FROM c", EXPLAIN, 0, REPLICA,
      "c"),
    S("EXPLAIN UPDATE t SET a = 1", EXPLAIN, WR, PRIMARY, "t"),
    S("EXPLAIN DELETE FROM t", EXPLAIN, WR, PRIMARY, "t"),
    S("EXPLAIN INSERT INTO t VALUES (1)", EXPLAIN, WR, PRIMARY, "t"),
    S("EXPLAIN FOR CONNECTION 5", EXPLAIN, WR, PRIMARY, ""),
    S("DESCRIBE t", EXPLAIN, 0, REPLICA, "t"),
    S("DESC db.t", EXPLAIN, 0, REPLICA, "db.t"),
    S("EXPLAIN t", EXPLAIN, 0, REPLICA, "t"),
    S("DESCRIBE `t` a", EXPLAIN, 0, REPLICA, "t"),
    S("DESCRIBE SELECT 1", EXPLAIN, 0, REPLICA, ""),
    S("ANALYZE SELECT * FROM t", EXPLAIN, 0, REPLICA, "t"),
    S("ANALYZE FORMAT=JSON SELECT 1", EXPLAIN, 0, REPLICA, ""),
    S("ANALYZE UPDATE t SET a = 1", EXPLAIN, WR, PRIMARY, "t"),
    S("ANALYZE TABLE t", ADMIN, WR, PRIMARY, "t"),
    S("ANALYZE NO_WRITE_TO_BINLOG TABLE t1, t2", ADMIN, WR, PRIMARY,
      "t1,t2"),
    S("ANALYZE LOCAL TABLE t", ADMIN, WR, PRIMARY, "t"),

    /* writes */
    S("INSERT INTO t VALUES (1)", INSERT, WR, PRIMARY, "t"),
    S("INSERT INTO db.t (a, b) VALUES (1, 2)", INSERT, WR, PRIMARY, "db.t"),
    S("INSERT t SET a = 1", INSERT, WR, PRIMARY, "t"),
    S("INSERT LOW_PRIORITY IGNORE INTO `t` SELECT * FROM u", INSERT, WR,
      PRIMARY, "t,u"),
    S("INSERT INTO t SELECT * FROM u ON DUPLICATE KEY UPDATE a = VALUES(a)",
      INSERT, WR, PRIMARY, "t,u"),
    S("INSERT INTO`t`VALUES(1)", INSERT, WR, PRIMARY, "t"),
    S("INSERT /*!IGNORE*/ INTO t VALUES (1)", INSERT, WR, PRIMARY, "t"),
    S("INSERT INTO t VALUES ('SELECT 1')", INSERT, WR, PRIMARY, "t"),
    S("REPLACE INTO t VALUES (1)", REPLACE, WR, PRIMARY, "t"),
    S("REPLACE t SELECT * FROM u", REPLACE, WR, PRIMARY, "t,u"),
    S("UPDATE t SET a = 1 WHERE b = 2", UPDATE, WR, PRIMARY, "t"),
    S("UPDATE LOW_PRIORITY IGNORE t1, db.t2 SET t1.a = t2.a", UPDATE, WR,
      PRIMARY, "t1,db.t2"),
    S("UPDATE t1 JOIN t2 ON t1.id = t2.id SET t1.a = 1", UPDATE, WR,
      PRIMARY, "t1,t2"),
    S("UPDATE`t`SET`update`=1", UPDATE, WR, PRIMARY, "t"),
    S("update t set a = now()", UPDATE, WR | ND, PRIMARY, "t"),
    S("DELETE FROM t WHERE a = 1", DELETE, WR, PRIMARY, "t"),
    S("DELETE t1, t2 FROM t1 JOIN t2 ON t1.a = t2.a", DELETE, WR, PRIMARY,
      "t1,t2"),
    S("DELETE LOW_PRIORITY QUICK IGNORE FROM t", DELETE, WR, PRIMARY, "t"),
    S("WITH d AS (SELECT id FROM t) DELETE FROM u WHERE id IN "
      "(SELECT id FROM d)", DELETE, WR, PRIMARY, "t,u,d"),
    S("WITH x AS (SELECT 1) UPDATE t SET a = 1", UPDATE, WR, PRIMARY, "t"),
    S("WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", INSERT, WR,
      PRIMARY, "t,x"),
    S("CALL p(1)", CALL, WR, PRIMARY, ""),
    S("call db.p()", CALL, WR, PRIMARY, ""),
    S("LOAD DATA INFILE '/tmp/x' INTO TABLE t", LOAD, WR, PRIMARY, "t"),
    S("LOAD DATA LOCAL INFILE 'x' INTO TABLE db.t FIELDS TERMINATED BY ','",
      LOAD, WR, PRIMARY, "db.t"),
    S("LOAD XML LOCAL INFILE 'x' INTO TABLE t", LOAD, WR, PRIMARY, "t"),
    S("DO 1", DO, 0, PRIMARY, ""),
    S("DO GET_LOCK('l', 0)", DO, LF | ND, PRIMARY, ""),
    S("DO SLEEP(1)", DO, ND, PRIMARY, ""),

    /* DDL and temporary tables */
    S("CREATE TABLE t (a INT)", DDL, WR, PRIMARY, "t"),
    S("CREATE TEMPORARY TABLE tmp1 (a INT)", DDL, WR | TM, PRIMARY, "tmp1"),
    S("create temporary table db.tmp (a int)", DDL, WR | TM, PRIMARY,
      "db.tmp"),
    S("CREATE TEMPORARY TABLE IF NOT EXISTS `tmp 2` SELECT * FROM t", DDL,
      WR | TM, PRIMARY, "tmp 2,t"),
    S("CREATE OR REPLACE TEMPORARY TABLE tmp1 AS SELECT 1", DDL, WR | TM,
      PRIMARY, "tmp1"),
    S("CREATE TABLE t2 LIKE t1", DDL, WR, PRIMARY, "t2,t1"),
    S("CREATE TABLE t (a TIMESTAMP DEFAULT CURRENT_TIMESTAMP)", DDL,
      WR | ND, PRIMARY, "t"),
    S("DROP TABLE t", DDL, WR | DT, PRIMARY, "t"),
    S("DROP TEMPORARY TABLE IF EXISTS tmp1, tmp2", DDL, WR | TM | DT,
      PRIMARY, "tmp1,tmp2"),
    S("DROP TABLES a, db.b", DDL, WR | DT, PRIMARY, "a,db.b"),
    S("DROP DATABASE d", DDL, WR, PRIMARY, ""),
    S("DROP INDEX i ON t", DDL, WR, PRIMARY, ""),
    S("ALTER TABLE t ADD COLUMN c INT", DDL, WR, PRIMARY, "t"),
    S("ALTER TABLE t ADD COLUMN a INT, ADD COLUMN b INT", DDL, WR, PRIMARY,
      "t"),
    S("RENAME TABLE a TO b, c TO d", DDL, WR, PRIMARY, "a,b,c,d"),
    S("RENAME TABLE db.a TO db2.b", DDL, WR, PRIMARY, "db.a,db2.b"),
    S("RENAME USER a TO b", DDL, WR, PRIMARY, ""),
    S("ALTER TABLE t RENAME TO u", DDL, WR, PRIMARY, "t,u"),
    S("ALTER TABLE t RENAME AS db.u", DDL, WR, PRIMARY, "t,db.u"),
    S("ALTER TABLE t RENAME u", DDL, WR, PRIMARY, "t,u"),
    S("ALTER TABLE t RENAME COLUMN a TO b", DDL, WR, PRIMARY, "t"),
    S("ALTER TABLE t RENAME INDEX i TO j", DDL, WR, PRIMARY, "t"),
    S("TRUNCATE TABLE t", DDL, WR, PRIMARY, "t"),
    S("TRUNCATE t", DDL, WR, PRIMARY, "t"),
    S("CREATE INDEX i ON t (a)", DDL, WR, PRIMARY, ""),
    S("CREATE VIEW v AS SELECT * FROM t", DDL, WR, PRIMARY, "t"),
    S("CREATE DATABASE d", DDL, WR, PRIMARY, ""),
    S("CREATE SEQUENCE s", DDL, WR, PRIMARY, ""),
    S("CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", DDL, WR | TP,
      PRIMARY, ""),
    S("CREATE TABLE t (a INT); UPDATE u SET a = 1", DDL, WR | TP, PRIMARY,
      "t"),
    S("CREATE USER 'u'@'h' IDENTIFIED BY 'p'", DDL, WR, PRIMARY, ""),
    S("CREATE USER bob@localhost", DDL, WR, PRIMARY, ""),
    S("DROP USER `bob`@`%`", DDL, WR, PRIMARY, ""),
    S("/*!40000 ALTER TABLE t DISABLE KEYS */", DDL, WR, PRIMARY, "t"),

    /* session state: every backend */
    S("SET NAMES utf8mb4", SET, SS, ALL, ""),
    S("SET NAMES 'utf8' COLLATE 'utf8_bin'", SET, SS, ALL, ""),
    S("SET autocommit = 0", SET, SS, ALL, ""),
    S("set autocommit=1", SET, SS, ALL, ""),
    S("SET @@autocommit = 1", SET, SV | SS, ALL, ""),
    S("SET SESSION sql_mode = 'ANSI'", SET, SS, ALL, ""),
    S("SET sql_mode = DEFAULT", SET, SS, ALL, ""),
    S("SET character_set_results = NULL", SET, SS, ALL, ""),
    S("SET TRANSACTION ISOLATION LEVEL READ COMMITTED", SET, SS, ALL, ""),
    S("SET SESSION TRANSACTION READ ONLY", SET, SS, ALL, ""),
    S("SET ROLE r", SET, SS, ALL, ""),
    S("SET @x = 1", SET, VA | SS, ALL, ""),
    S("SET @x := 1, @y = 2", SET, VA | SS, ALL, ""),
    S("SET @x = @y + 1", SET, VA | VR | SS, ALL, ""),
    S("/*!40101 SET NAMES utf8 */", SET, SS, ALL, ""),
    S("/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */",
      SET, VA | SV | SS, ALL, ""),
    S("USE db", USE, SS, ALL, ""),
    S("use `my db`", USE, SS, ALL, ""),
    S("PREPARE s FROM 'SELECT 1'", PREPARE, SS, ALL, ""),
    S("PREPARE s FROM @q", PREPARE, VR | SS, ALL, ""),
    S("DEALLOCATE PREPARE s", DEALLOCATE, SS, ALL, ""),
    S("DROP PREPARE stmt1", DEALLOCATE, SS, ALL, ""),
    /* SETs that are not only a session's */
    S("SET @x = (SELECT MAX(a) FROM t)", SET, VA, PRIMARY, "t"),
    S("SET @x = LAST_INSERT_ID()", SET, VA | LI | ND, PRIMARY, ""),
    S("SET GLOBAL max_connections = 10", SET, GL, PRIMARY, ""),
    S("SET @@global.max_connections = 10", SET, SV | GL, PRIMARY, ""),
    S("SET PERSIST x = 1", SET, GL, PRIMARY, ""),
    S("SET PASSWORD = PASSWORD('x')", SET, WR, PRIMARY, ""),
    S("SET DEFAULT ROLE r FOR u", SET, WR, PRIMARY, ""),
    S("SET @a = 1; SET @b = 2", SET, VA | MU | MS, PRIMARY, ""),
    /* SET STATEMENT ... FOR: the statement after FOR decides */
    S("SET STATEMENT max_statement_time=1 FOR SELECT * FROM t", SELECT, 0,
      REPLICA, "t"),
    S("SET STATEMENT sql_mode='' FOR UPDATE t SET a = 1", UPDATE, WR,
      PRIMARY, "t"),
    S("EXECUTE s", EXECUTE, 0, PRIMARY, ""),
    S("EXECUTE s USING @a", EXECUTE, VR, PRIMARY, ""),

    /* transaction control */
    S("BEGIN", BEGIN, 0, PRIMARY, ""),
    S("BEGIN WORK", BEGIN, 0, PRIMARY, ""),
    S("START TRANSACTION", BEGIN, 0, PRIMARY, ""),
    S("START TRANSACTION READ ONLY", BEGIN, RO, REPLICA, ""),
    S("start transaction read only", BEGIN, RO, REPLICA, ""),
    S("START TRANSACTION READ WRITE", BEGIN, RW, PRIMARY, ""),
    S("START TRANSACTION WITH CONSISTENT SNAPSHOT", BEGIN, SN, PRIMARY, ""),
    S("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY", BEGIN,
      SN | RO, REPLICA, ""),
    S("COMMIT", COMMIT, 0, PRIMARY, ""),
    S("COMMIT WORK AND NO CHAIN", COMMIT, 0, PRIMARY, ""),
    S("ROLLBACK", ROLLBACK, 0, PRIMARY, ""),
    S("ROLLBACK WORK", ROLLBACK, 0, PRIMARY, ""),
    S("ROLLBACK TO SAVEPOINT s1", SAVEPOINT, 0, PRIMARY, ""),
    S("ROLLBACK WORK TO s1", SAVEPOINT, 0, PRIMARY, ""),
    S("SAVEPOINT s1", SAVEPOINT, 0, PRIMARY, ""),
    S("RELEASE SAVEPOINT s1", SAVEPOINT, 0, PRIMARY, ""),
    S("XA START 'x'", XA, 0, PRIMARY, ""),
    S("XA END 'x'", XA, 0, PRIMARY, ""),
    S("XA PREPARE 'x'", XA, 0, PRIMARY, ""),
    S("XA COMMIT 'x' ONE PHASE", XA, 0, PRIMARY, ""),
    S("XA ROLLBACK 'x'", XA, 0, PRIMARY, ""),
    S("XA RECOVER", XA, 0, PRIMARY, ""),
    S("BEGIN NOT ATOMIC SELECT 1; SELECT 2; END", COMPOUND, WR | TP,
      PRIMARY, ""),

    /* administration, locks, handlers */
    S("LOCK TABLES t READ", LOCK, WR, PRIMARY, "t"),
    S("LOCK TABLES t1 READ, t2 WRITE", LOCK, WR, PRIMARY, "t1,t2"),
    S("LOCK TABLE t AS a WRITE", LOCK, WR, PRIMARY, "t"),
    S("UNLOCK TABLES", LOCK, WR, PRIMARY, ""),
    S("HANDLER t OPEN", HANDLER, 0, PRIMARY, "t"),
    S("HANDLER t READ FIRST", HANDLER, 0, PRIMARY, "t"),
    S("HANDLER t CLOSE", HANDLER, 0, PRIMARY, "t"),
    S("FLUSH TABLES", ADMIN, WR, PRIMARY, ""),
    S("FLUSH PRIVILEGES", ADMIN, WR, PRIMARY, ""),
    S("FLUSH TABLES WITH READ LOCK", ADMIN, WR, PRIMARY, ""),
    S("FLUSH TABLES t1, t2", ADMIN, WR, PRIMARY, "t1,t2"),
    S("KILL 5", ADMIN, WR, PRIMARY, ""),
    S("KILL QUERY 5", ADMIN, WR, PRIMARY, ""),
    S("GRANT SELECT ON db.* TO 'u'@'h'", ADMIN, WR, PRIMARY, ""),
    S("OPTIMIZE TABLE t", ADMIN, WR, PRIMARY, "t"),
    S("CHECK TABLE t1, t2", ADMIN, WR, PRIMARY, "t1,t2"),
    S("REPAIR TABLE t", ADMIN, WR, PRIMARY, "t"),
    S("CHECKSUM TABLE t", ADMIN, WR, PRIMARY, "t"),
    S("RESET MASTER", ADMIN, WR, PRIMARY, ""),
    S("PURGE BINARY LOGS TO 'x'", ADMIN, WR, PRIMARY, ""),
    S("CHANGE MASTER TO MASTER_HOST='h'", ADMIN, WR, PRIMARY, ""),
    S("START SLAVE", ADMIN, WR, PRIMARY, ""),
    S("STOP SLAVE", ADMIN, WR, PRIMARY, ""),
    S("START", ADMIN, 0, PRIMARY, ""),
    S("SHUTDOWN", ADMIN, WR, PRIMARY, ""),
    S("INSTALL PLUGIN p SONAME 'x'", ADMIN, WR, PRIMARY, ""),
    S("SIGNAL SQLSTATE '45000'", ADMIN, WR, PRIMARY, ""),

    /* multi-statements; a ";" in a string or comment is none */
    S("SELECT 1; SELECT 2", SELECT, MU, PRIMARY, ""),
    S("SELECT 1; SELECT 2;", SELECT, MU, PRIMARY, ""),
    S("SELECT 1; USE db2", SELECT, MU | MS, PRIMARY, ""),
    S("DO 1; SET sql_select_limit=1", DO, MU | MS, PRIMARY, ""),
    S("SELECT 1; CALL p()", SELECT, MU | MS | WR, PRIMARY, ""),
    S("SELECT 1; EXECUTE IMMEDIATE 'SET @a=1'", SELECT, MU | MS, PRIMARY, ""),
    S("SELECT 1;;", SELECT, MU, PRIMARY, ""),
    S("SELECT 1;", SELECT, 0, REPLICA, ""),
    S("SELECT 1; -- done", SELECT, 0, REPLICA, ""),
    S("SELECT 1 ; /* c */ ", SELECT, 0, REPLICA, ""),
    S("SELECT ';'; ", SELECT, 0, REPLICA, ""),
    S("SELECT 'it''s; DROP TABLE x'", SELECT, 0, REPLICA, ""),
    S("SELECT \"a;b\"; ", SELECT, 0, REPLICA, ""),
    S("SELECT `a;b` FROM t", SELECT, 0, REPLICA, "t"),
    S("SELECT 1 /* ; DELETE FROM t */", SELECT, 0, REPLICA, ""),
    S("SELECT * FROM t WHERE a = 'x'';DELETE FROM t'", SELECT, 0, REPLICA,
      "t"),
    S("INSERT INTO t VALUES (';'); SELECT 1", INSERT, WR | MU, PRIMARY,
      "t"),
    S("SET @a = 1; SELECT @a", SET, VA | MU | VR | MS, PRIMARY, ""),
    S("SELECT * FROM t1; DROP TABLE t2", SELECT, MU | WR | DT | DD, PRIMARY,
      "t1,t2"),
    S("SELECT 1; CREATE TEMPORARY TABLE tmp (a INT)", SELECT,
      MU | WR | TM | DD,
      PRIMARY, "tmp"),
    S("SELECT 1; SELECT 2 FOR UPDATE", SELECT, MU | LR, PRIMARY, ""),
    S("SELECT 1; SELECT * FROM t WHERE a = 'x;y'; SELECT 3", SELECT, MU,
      PRIMARY, "t"),

    /* backslash escapes (NO_BACKSLASH_ESCAPES: below) */
    S("SELECT 'a\\'; DROP TABLE t; -- '", SELECT, 0, REPLICA, ""),
    /* under ANSI_QUOTES the name "\" ends at the second quote, and a
       DELETE follows: the primary */
    S("SELECT * FROM t WHERE a = \"\\\";DELETE\"", SELECT, AM, PRIMARY,
      "t"),
    S("SELECT * FROM t WHERE a = 'don\\'t'", SELECT, 0, REPLICA, "t"),
    S("SELECT 'a\\\\'", SELECT, 0, REPLICA, ""),
    S("SELECT 'a\\nb'", SELECT, 0, REPLICA, ""),
    S("SELECT `a\\`", SELECT, 0, REPLICA, ""),

    /* ANSI_QUOTES: "x" where a table's name goes is one (a string is a
       syntax error there); elsewhere it may be a string */
    S("SELECT v FROM \"t1\"", SELECT, 0, REPLICA, "t1"),
    S("SELECT * FROM \"db\".\"t\", db.\"u\", \"db\".v", SELECT, 0,
      REPLICA, "db.t,db.u,db.v"),
    S("SELECT * FROM \"t\" AS x JOIN \"u\" ON 1, (\"v\", w)", SELECT, 0,
      REPLICA, "t,u,v,w"),
    S("SELECT \"a\", \"b\" FROM t WHERE c = \"d\"", SELECT, 0, REPLICA,
      "t"),
    S("SELECT * FROM 't1'", SELECT, 0, REPLICA, ""),
    S("UPDATE \"t\" SET a = \"x\"", UPDATE, WR, PRIMARY, "t"),
    S("INSERT INTO \"t\" (\"a\", \"b\") VALUES (\"x\", 'y')", INSERT, WR,
      PRIMARY, "t"),
    S("REPLACE INTO \"db\".\"t\" (\"a\") VALUES (1)", REPLACE, WR,
      PRIMARY, "db.t"),
    S("DELETE FROM \"t\" WHERE a = 1", DELETE, WR, PRIMARY, "t"),
    S("TABLE \"t\"", SELECT, 0, REPLICA, "t"),
    S("DESCRIBE \"t\"", EXPLAIN, 0, REPLICA, "t"),
    S("CREATE TABLE \"t\" (\"a\" INT)", DDL, WR, PRIMARY, "t"),
    S("DROP TABLE \"a\", \"b\"", DDL, WR | DT, PRIMARY, "a,b"),
    S("RENAME TABLE \"a\" TO \"b\"", DDL, WR, PRIMARY, "a,b"),
    S("CREATE USER \"u\"@\"h\"", DDL, WR, PRIMARY, ""),
    S("SELECT * FROM \"a\"\"b\"", SELECT, TP, REPLICA, "a\"\"b"),
    S("SELECT * FROM \"a`b\"", SELECT, TP, REPLICA, "a`b"),
    S("SELECT \"f\"(1)", SELECT, SF, PRIMARY, ""),
    S("SELECT db.\"f\"(1), \"db\".g(2)", SELECT, SF, PRIMARY, ""),
    S("SELECT * FROM JSON_TABLE(\"[1]\", \"$[*]\" COLUMNS (a INT PATH "
      "\"$\")) AS j", SELECT, 0, REPLICA, "JSON_TABLE"),
    /* a backslash before a double quote: the text reads otherwise under
       ANSI_QUOTES; before anything else, the same */
    S("SELECT \"a\\\"; DELETE FROM t; -- \"", SELECT, AM, PRIMARY, ""),
    S("INSERT INTO t VALUES (\"it\\\"s\")", INSERT, WR | AM, PRIMARY, "t"),
    S("SELECT @\"a\\\"b\"", SELECT, VR | AM, PRIMARY, ""),
    S("SELECT \"a\\\\\", \"a\\nb\", 'a\\\"b' FROM t", SELECT, 0, REPLICA,
      "t"),
    S("/* sluice: route=replica */ SELECT \"a\\\"\"", SELECT, AM, PRIMARY,
      ""),

    /* executable comments are code */
    S("/*!50100 SELECT * FROM t */", SELECT, 0, REPLICA, "t"),
    S("/*M!100100 SELECT 1 */", SELECT, 0, REPLICA, ""),
    S("/*M! SELECT 2 */", SELECT, 0, REPLICA, ""),
    S("/*!99999 SELECT 1 */", SELECT, 0, REPLICA, ""),
    S("SELECT /*!STRAIGHT_JOIN*/ a FROM t", SELECT, 0, REPLICA, "t"),
    S("SELECT 1 /*!, 2 */", SELECT, 0, REPLICA, ""),
    S("SELECT /*! '*/' */ 1", SELECT, 0, REPLICA, ""),

    /* hints in a leading comment */
    S("/* sluice: route=primary */ SELECT 1", SELECT, 0, PRIMARY, ""),
    S("/*sluice:route=last*/ SELECT 1", SELECT, 0, LAST, ""),
    S("-- sluice: route=primary\nSELECT 1", SELECT, 0, PRIMARY, ""),
    S("# sluice: route=master\nSELECT 1", SELECT, 0, PRIMARY, ""),
    S("/* SLUICE: ROUTE = PRIMARY */ SELECT 1", SELECT, 0, PRIMARY, ""),
    S("/* sluice: route=replica */ SELECT GET_LOCK('x', 1)", SELECT,
      LF | ND, REPLICA, ""),
    S("/* sluice: route=replica */ INSERT INTO t VALUES (1)", INSERT, WR,
      REPLICA, "t"),
    S("/* sluice: route=replica */ SET NAMES utf8", SET, SS, ALL, ""),
    S("/* sluice: route=replica */ FOO", UNKNOWN, 0, PRIMARY, ""),
    S("/* sluice: route=last */ INSERT INTO t VALUES (1)", INSERT, WR, LAST,
      "t"),
    S("SELECT /* sluice: route=primary */ 1", SELECT, 0, REPLICA, ""),
    S("/* sluice: route=nowhere */ SELECT 1", SELECT, 0, REPLICA, ""),
    S("/* x */ /* sluice: route=primary */ SELECT 1", SELECT, 0, PRIMARY,
      ""),
    S("/*! sluice: route=primary */ SELECT 1", UNKNOWN, 0, PRIMARY, ""),

    /* DDL past the first statement of several (a catalog of views and
       triggers that may have changed) */
    S("SELECT 1; CREATE VIEW v AS SELECT 1", SELECT, MU | WR | DD, PRIMARY,
      ""),
    S("SELECT 1; DROP TRIGGER t; SELECT 2", SELECT, MU | WR | DD, PRIMARY,
      ""),
    S("UPDATE t SET a = 1; SELECT 2", UPDATE, MU | WR, PRIMARY, "t"),

    /* what cannot be told goes to the primary */
    S("", EMPTY, 0, PRIMARY, ""),
    S("   ", EMPTY, 0, PRIMARY, ""),
    S("/* nothing */", EMPTY, 0, PRIMARY, ""),
    S("-- x", EMPTY, 0, PRIMARY, ""),
    S(";", UNKNOWN, 0, PRIMARY, ""),
    S("FOO BAR", UNKNOWN, 0, PRIMARY, ""),
    S("HELP 'x'", UNKNOWN, 0, PRIMARY, ""),
    S("`select` 1", UNKNOWN, 0, PRIMARY, ""),
    S("'x'", UNKNOWN, 0, PRIMARY, ""),
    S("label: BEGIN NOT ATOMIC END", UNKNOWN, 0, PRIMARY, ""),
    S("WITH x AS (SELECT 1)", UNKNOWN, 0, PRIMARY, ""),
    S("SELECT 'abc", UNKNOWN, UT, PRIMARY, ""),
    S("SELECT \"abc", UNKNOWN, UT, PRIMARY, ""),
    S("SELECT `abc", UNKNOWN, UT, PRIMARY, ""),
    S("SELECT 1 /* x", UNKNOWN, UT, PRIMARY, ""),
    S("/*! SELECT 1", UNKNOWN, UT, PRIMARY, ""),
    S("SELECT 'a\\'", UNKNOWN, UT, PRIMARY, ""),
    S("SELECT @'abc", UNKNOWN, UT, PRIMARY, ""),
};

#define SLC_TEST_NSTMTS  (sizeof(slc_test_stmts) / sizeof(slc_test_stmts[0]))

/* "db.t,u" for the tables of si. */
static void
slc_test_tables(const uint8_t *q, const slc_sql_info_t *si, char *buf,
                size_t size)
{
    size_t  n = 0;

    buf[0] = '\0';
    for (unsigned i = 0; i < si->ntables; i++) {
        const slc_sql_name_t  *nm = &si->tables[i];

        n += (size_t) snprintf(buf + n, size - n, "%s%.*s%s%.*s",
                               i > 0 ? "," : "", (int) nm->db_len,
                               (const char *) q + nm->db_off,
                               nm->db_len > 0 ? "." : "", (int) nm->len,
                               (const char *) q + nm->off);
        ck_assert(n < size);
    }
}

/* q copied to an exact-size heap buffer, no NUL. */
static uint8_t *
slc_test_copy(const char *q, size_t n)
{
    uint8_t  *buf = malloc(n > 0 ? n : 1);

    ck_assert_ptr_nonnull(buf);
    memcpy(buf, q, n);
    return buf;
}

static void
slc_test_check(const slc_test_stmt_t *ts, unsigned status)
{
    size_t           n = strlen(ts->q);
    uint8_t         *buf = slc_test_copy(ts->q, n);
    slc_sql_info_t   si;
    char             tables[512];
    int              rc;

    rc = slc_sql_classify(buf, n, status, &si);
    ck_assert_int_eq(rc, (si.flags & UT) ? SLC_ERROR : SLC_OK);
    ck_assert_msg(si.kind == ts->kind, "\"%s\": kind %s", ts->q,
                  slc_sql_kind_name(si.kind));
    ck_assert_msg(si.flags == ts->flags, "\"%s\": flags 0x%x, want 0x%x",
                  ts->q, si.flags, ts->flags);
    ck_assert_msg(slc_sql_route(&si, 0, 0) == ts->route, "\"%s\": route %d",
                  ts->q, slc_sql_route(&si, 0, 0));
    slc_test_tables(buf, &si, tables, sizeof(tables));
    ck_assert_msg(strcmp(tables, ts->tables) == 0, "\"%s\": tables \"%s\"",
                  ts->q, tables);
    free(buf);
}

START_TEST(test_classify_golden)
{
    slc_test_check(&slc_test_stmts[_i], 0);
}
END_TEST

/*
 * The server says NO_BACKSLASH_ESCAPES: a backslash is a character, and a
 * quote after it ends the string.
 */
static const slc_test_stmt_t  slc_test_nobs[] = {
    S("SELECT 'a\\'; DROP TABLE t; -- '", SELECT, MU | WR | DT | DD, PRIMARY,
      "t"),
    S("SELECT * FROM t WHERE a = \"\\\";DELETE FROM u\"", UNKNOWN,
      UT, PRIMARY, ""),
    S("SELECT 'a\\'", SELECT, 0, REPLICA, ""),
    S("SELECT 'don''t' FROM t", SELECT, 0, REPLICA, "t"),
    S("SELECT 'C:\\' FROM t FOR UPDATE", SELECT, LR, PRIMARY, "t"),
    S("SELECT \"a\\\" FROM t", SELECT, 0, REPLICA, "t"),
};

#define SLC_TEST_NNOBS  (sizeof(slc_test_nobs) / sizeof(slc_test_nobs[0]))

START_TEST(test_classify_no_backslash_escapes)
{
    slc_test_check(&slc_test_nobs[_i],
                   SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES);
}
END_TEST

/* Every prefix classifies without reading past its end. */
START_TEST(test_classify_prefixes)
{
    const char      *q = slc_test_stmts[_i].q;
    size_t           n = strlen(q);
    slc_sql_info_t   si;

    for (size_t k = 0; k <= n; k++) {
        uint8_t  *buf = slc_test_copy(q, k);

        (void) slc_sql_classify(buf, k, 0, &si);
        ck_assert_int_lt(si.kind, SLC_SQL_NKINDS);
        ck_assert_uint_le(si.ntables, SLC_SQL_MAX_TABLES);
        for (unsigned i = 0; i < si.ntables; i++) {
            ck_assert_uint_le(si.tables[i].off + si.tables[i].len, k);
            ck_assert_uint_le(si.tables[i].db_off + si.tables[i].db_len, k);
        }
        free(buf);
    }
}
END_TEST

/*
 * The tail scanner (slc_sql_tail.h), shown the same text, flags at
 * least what the classifier does of the flags it knows: a consumer that
 * reads a long text's head with one and the rest with the other may not
 * lose a statement or a call at the cut.
 */
static void
slc_test_tail(const slc_test_stmt_t *ts, unsigned status)
{
    const uint32_t   known = SLC_SQL_F_MULTI | SLC_SQL_F_STORED_FUNC
                             | SLC_SQL_F_SEQUENCE | SLC_SQL_F_UNTERMINATED
                             | SLC_SQL_F_AMBIGUOUS;
    size_t           n = strlen(ts->q);
    slc_sql_tail_t    t;
    slc_sql_info_t   si;
    uint32_t         f;

    (void) slc_sql_classify((const uint8_t *) ts->q, n, status, &si);
    slc_sql_tail_init(&t, status);
    slc_sql_tail_feed(&t, (const uint8_t *) ts->q, n);
    f = slc_sql_tail_flags(&t);
    ck_assert_msg((si.flags & known & ~f) == 0,
                  "\"%s\": the scanner's 0x%x lacks some of 0x%x", ts->q, f,
                  si.flags & known);
}

START_TEST(test_classify_tail)
{
    slc_test_tail(&slc_test_stmts[_i], 0);
}
END_TEST

START_TEST(test_classify_tail_no_backslash_escapes)
{
    slc_test_tail(&slc_test_nobs[_i], SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES);
}
END_TEST

/* Routes inside transactions: read-write (rw) and READ ONLY (ro). */
static const struct {
    const char       *q;
    int               in_trx;
    int               ro;
    slc_sql_route_t   route;
} slc_test_trx[] = {
    { "SELECT * FROM t", 1, 0, SLC_SQL_TO_PRIMARY },
    { "SELECT * FROM t", 1, 1, SLC_SQL_TO_REPLICA },
    { "SHOW TABLES", 1, 0, SLC_SQL_TO_PRIMARY },
    { "INSERT INTO t VALUES (1)", 1, 0, SLC_SQL_TO_PRIMARY },
    { "INSERT INTO t VALUES (1)", 1, 1, SLC_SQL_TO_REPLICA },
    { "SELECT LAST_INSERT_ID()", 1, 1, SLC_SQL_TO_REPLICA },
    { "COMMIT", 1, 0, SLC_SQL_TO_PRIMARY },
    { "COMMIT", 1, 1, SLC_SQL_TO_REPLICA },
    { "SET NAMES utf8", 1, 0, SLC_SQL_TO_ALL },
    { "SET @x = 1", 1, 1, SLC_SQL_TO_ALL },
    { "USE db", 1, 0, SLC_SQL_TO_ALL },
    { "SHOW WARNINGS", 1, 0, SLC_SQL_TO_LAST },
    { "SELECT FOUND_ROWS()", 1, 1, SLC_SQL_TO_LAST },
    { "/* sluice: route=replica */ SELECT 1", 1, 0, SLC_SQL_TO_PRIMARY },
    { "/* sluice: route=replica */ SELECT 1", 1, 1, SLC_SQL_TO_REPLICA },
    { "/* sluice: route=last */ SELECT 1", 1, 0, SLC_SQL_TO_LAST },
    { "/* sluice: route=primary */ SELECT 1", 1, 1, SLC_SQL_TO_PRIMARY },
    { "FOO", 1, 1, SLC_SQL_TO_PRIMARY },
    { "SELECT 'x", 1, 1, SLC_SQL_TO_PRIMARY },
    { "SELECT 1; SELECT 2", 1, 1, SLC_SQL_TO_PRIMARY },
};

#define SLC_TEST_NTRX  (sizeof(slc_test_trx) / sizeof(slc_test_trx[0]))

START_TEST(test_classify_trx)
{
    const char      *q = slc_test_trx[_i].q;
    slc_sql_info_t   si;

    (void) slc_sql_classify((const uint8_t *) q, strlen(q), 0, &si);
    ck_assert_msg(slc_sql_route(&si, slc_test_trx[_i].in_trx,
                                slc_test_trx[_i].ro)
                  == slc_test_trx[_i].route, "\"%s\" in_trx %d ro %d", q,
                  slc_test_trx[_i].in_trx, slc_test_trx[_i].ro);
}
END_TEST

START_TEST(test_classify_hint)
{
    static const struct {
        const char      *q;
        slc_sql_hint_t   hint;
    } h[] = {
        { "/* sluice: route=primary */ SELECT 1", SLC_SQL_HINT_PRIMARY },
        { "/* sluice: route=replica */ SELECT 1", SLC_SQL_HINT_REPLICA },
        { "/* sluice: route=slave */ SELECT 1", SLC_SQL_HINT_REPLICA },
        { "/* sluice: route=last */ SELECT 1", SLC_SQL_HINT_LAST },
        { "/* sluice: route=lastly */ SELECT 1", SLC_SQL_HINT_NONE },
        { "/* sluice: route= */ SELECT 1", SLC_SQL_HINT_NONE },
        { "/* sluice */ SELECT 1", SLC_SQL_HINT_NONE },
        { "/* route=primary */ SELECT 1", SLC_SQL_HINT_NONE },
        { "/* sluice: route=replica */ /* sluice: route=primary */ SELECT 1",
          SLC_SQL_HINT_REPLICA },
        { "SELECT 1 /* sluice: route=primary */", SLC_SQL_HINT_NONE },
        { "/* sluice: route=primary", SLC_SQL_HINT_NONE },
    };

    for (size_t i = 0; i < sizeof(h) / sizeof(h[0]); i++) {
        slc_sql_info_t  si;

        (void) slc_sql_classify((const uint8_t *) h[i].q, strlen(h[i].q), 0,
                                &si);
        ck_assert_msg(si.hint == h[i].hint, "\"%s\": hint %d", h[i].q,
                      si.hint);
    }
}
END_TEST

/* More tables than fit: the first ones, and the flag. */
START_TEST(test_classify_many_tables)
{
    char             q[1024];
    size_t           n = 0;
    slc_sql_info_t   si;

    n += (size_t) snprintf(q + n, sizeof(q) - n, "SELECT * FROM t0");
    for (int i = 1; i < SLC_SQL_MAX_TABLES + 4; i++) {
        n += (size_t) snprintf(q + n, sizeof(q) - n, ", db.t%d", i);
    }
    ck_assert_int_eq(slc_sql_classify((uint8_t *) q, n, 0, &si), SLC_OK);
    ck_assert_uint_eq(si.ntables, SLC_SQL_MAX_TABLES);
    ck_assert_uint_eq(si.flags, SLC_SQL_F_TABLES_PARTIAL);
    ck_assert_int_eq(slc_sql_route(&si, 0, 0), SLC_SQL_TO_REPLICA);
    ck_assert_int_eq(memcmp(q + si.tables[15].db_off, "db", 2), 0);
    ck_assert_int_eq(memcmp(q + si.tables[15].off, "t15", 3), 0);
}
END_TEST

/* A list of tables deeper than the classifier keeps: said partial. */
START_TEST(test_classify_deep_list)
{
    char             q[256];
    size_t           n = 0;
    slc_sql_info_t   si;

    n += (size_t) snprintf(q + n, sizeof(q) - n, "SELECT * FROM ");
    for (int i = 0; i < 70; i++) {
        q[n++] = '(';
    }
    n += (size_t) snprintf(q + n, sizeof(q) - n, "a, b");
    for (int i = 0; i < 70; i++) {
        q[n++] = ')';
    }
    ck_assert_int_eq(slc_sql_classify((uint8_t *) q, n, 0, &si), SLC_OK);
    ck_assert_int_eq(si.kind, SLC_SQL_SELECT);
    ck_assert_uint_eq(si.flags, SLC_SQL_F_TABLES_PARTIAL);
    ck_assert_uint_eq(si.ntables, 1);
}
END_TEST

#define SLC_TEST_MB  (1024 * 1024)

/* 1 MB statements: a string, a comment, words, parentheses, tables. */
START_TEST(test_classify_big)
{
    uint8_t         *q = malloc(SLC_TEST_MB);
    slc_sql_info_t   si;
    size_t           n, h = SLC_TEST_MB / 2;

    ck_assert_ptr_nonnull(q);

    memset(q, 'a', SLC_TEST_MB);                 /* SELECT 'aaa...' FROM t */
    memcpy(q, "SELECT '", 8);
    memcpy(q + SLC_TEST_MB - 8, "' FROM t", 8);
    ck_assert_int_eq(slc_sql_classify(q, SLC_TEST_MB, 0, &si), SLC_OK);
    ck_assert_int_eq(si.kind, SLC_SQL_SELECT);
    ck_assert_uint_eq(si.ntables, 1);
    ck_assert_int_eq(slc_sql_route(&si, 0, 0), SLC_SQL_TO_REPLICA);

    memcpy(q + SLC_TEST_MB - 8, "aaaaaaaa", 8);  /* never closed */
    ck_assert_int_eq(slc_sql_classify(q, SLC_TEST_MB, 0, &si), SLC_ERROR);
    ck_assert_int_eq(si.kind, SLC_SQL_UNKNOWN);

    memcpy(q, "/* a  ", 6);                      /* a comment, then */
    memcpy(q + SLC_TEST_MB - 20, "*/ DELETE FROM t   ", 19);
    q[SLC_TEST_MB - 1] = ' ';
    ck_assert_int_eq(slc_sql_classify(q, SLC_TEST_MB, 0, &si), SLC_OK);
    ck_assert_int_eq(si.kind, SLC_SQL_DELETE);

    for (n = 0; n + 16 <= SLC_TEST_MB; n += 16) {  /* words, commas */
        memcpy(q + n, n == 0 ? "SELECT a FROM b " : ", b, c, now(), d", 16);
    }
    memcpy(q + n - 16, " FOR UPDATE     ", 16);
    ck_assert_int_eq(slc_sql_classify(q, n, 0, &si), SLC_OK);
    ck_assert_int_eq(si.kind, SLC_SQL_SELECT);
    ck_assert(si.flags & SLC_SQL_F_LOCKING_READ);
    ck_assert(si.flags & SLC_SQL_F_TABLES_PARTIAL);

    memset(q, '(', h);                           /* deep parentheses */
    memset(q + h, ')', SLC_TEST_MB - h);
    memcpy(q + h - 10, "SELECT 1  ", 10);
    ck_assert_int_eq(slc_sql_classify(q, SLC_TEST_MB, 0, &si), SLC_OK);
    ck_assert_int_eq(si.kind, SLC_SQL_SELECT);

    for (n = 0; n + 4 <= SLC_TEST_MB; n += 4) {  /* ";" after ";" */
        memcpy(q + n, n == 0 ? "DO 1" : "; ;1", 4);
    }
    ck_assert_int_eq(slc_sql_classify(q, n, 0, &si), SLC_OK);
    ck_assert_int_eq(si.kind, SLC_SQL_DO);
    ck_assert(si.flags & SLC_SQL_F_MULTI);
    free(q);
}
END_TEST

/* The built-in names: in order, found in any case; others are not. */
START_TEST(test_classify_builtins)
{
    static const char  *yes[] = {
        "CONCAT", "count", "Date_Format", "JSON_EXTRACT", "ROUND", "IFNULL",
        "ROW_NUMBER", "ST_DISTANCE_SPHERE", "OVER", "PARTITION", "AND",
        "GROUP_CONCAT", "JSON_ARRAYAGG", "LAG", "CAST", "COALESCE",
    };
    static const char  *no[] = {
        "AUDIT", "my_fn", "STATUS", "CONCA", "CONCATX", "", "COLUMNS",
        "JSON_TABLE", "SOURCE_POS_WAIT",
    };

    ck_assert(slc_sql_builtins_check());
    for (size_t i = 0; i < slc_nelems(yes); i++) {
        ck_assert_msg(slc_sql_builtin_find((const uint8_t *) yes[i],
                                           strlen(yes[i])), "%s", yes[i]);
    }
    for (size_t i = 0; i < slc_nelems(no); i++) {
        ck_assert_msg(!slc_sql_builtin_find((const uint8_t *) no[i],
                                            strlen(no[i])), "%s", no[i]);
    }
}
END_TEST

START_TEST(test_classify_words_sorted)
{
    ck_assert(slc_sql_words_check());
    ck_assert_uint_ge(SLC_TEST_NSTMTS, 200);
    for (int k = 0; k < SLC_SQL_NKINDS; k++) {
        ck_assert_ptr_nonnull(slc_sql_kind_name((slc_sql_kind_t) k));
    }
}
END_TEST

static Suite *
slc_classify_suite(void)
{
    Suite  *s = suite_create("mysql_classify");
    TCase  *tc = tcase_create("classify");

    tcase_add_loop_test(tc, test_classify_golden, 0, SLC_TEST_NSTMTS);
    tcase_add_loop_test(tc, test_classify_no_backslash_escapes, 0,
                        SLC_TEST_NNOBS);
    tcase_add_loop_test(tc, test_classify_prefixes, 0, SLC_TEST_NSTMTS);
    tcase_add_loop_test(tc, test_classify_tail, 0, SLC_TEST_NSTMTS);
    tcase_add_loop_test(tc, test_classify_tail_no_backslash_escapes, 0,
                        SLC_TEST_NNOBS);
    tcase_add_loop_test(tc, test_classify_trx, 0, SLC_TEST_NTRX);
    tcase_add_test(tc, test_classify_hint);
    tcase_add_test(tc, test_classify_many_tables);
    tcase_add_test(tc, test_classify_deep_list);
    tcase_add_test(tc, test_classify_big);
    tcase_add_test(tc, test_classify_words_sorted);
    tcase_add_test(tc, test_classify_builtins);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return slc_check_run(slc_classify_suite());
}
