#ifndef SLC_SQL_CLASSIFY_H
#define SLC_SQL_CLASSIFY_H

#include "slc_core.h"
#include "slc_mysql_proto.h"
#include "slc_sql_lex.h"

/*
 * The statement classifier: what a COM_QUERY's text is, for a router that
 * splits reads from writes and a cache that keeps SELECT results.  It is a
 * tokenizer, not a parser: one pass over the text, no recursion, no
 * allocation, bounded by the length.  It knows comments (-- , #, block),
 * executable comments (slash-star-! with or without a version, MariaDB's
 * slash-star-M!) whose content it reads as code, quotes with backslash
 * escapes (unless the server says NO_BACKSLASH_ESCAPES) and doubled
 * quotes, backticks, and case-insensitive keywords
 * (only unquoted words are keywords: a column `update` is not a write).
 *
 * What it reports is what the text says, never what the server will do:
 * a statement it cannot place (an unknown first word, an unterminated
 * quote or comment, a WITH without a main statement) is SLC_SQL_UNKNOWN,
 * and everything unknown goes to the primary, where it is always right.
 *
 * Known limits (all of them err towards the primary or towards listing a
 * name that is not a table):
 *   - executable comments are code whatever their version number;
 *   - ANSI_QUOTES (also in the modes ANSI, DB2, MAXDB, MSSQL, ORACLE,
 *     POSTGRESQL) is not known here.  A string in a table name's place is
 *     a syntax error without it, so "x" there is read as a name, as `x`
 *     (qualified too: "db"."t", db."t"), and "x"( as a call; elsewhere
 *     "x" is a string.  A backslash before a double quote inside "..."
 *     escapes it only without ANSI_QUOTES: with it the quote ends a name
 *     and the rest of the text (other statements, maybe) reads otherwise.
 *     The text is read without ANSI_QUOTES and SLC_SQL_F_AMBIGUOUS set;
 *     a double-quoted table name holding a quote character sets
 *     SLC_SQL_F_TABLES_PARTIAL (its doubled "" is one quote, unlike in
 *     `x`, so a consumer would not match it with the same name backticked);
 *   - in a multi-statement the kind is the first statement's; the others
 *     add their flags and tables (so tables[0] of a CREATE TEMPORARY TABLE
 *     that is not the first statement is not the table created);
 *   - a routine's body (CREATE PROCEDURE ... BEGIN ...; ...; END, BEGIN
 *     NOT ATOMIC) is one statement, not a multi-statement; a labelled
 *     compound statement is UNKNOWN;
 *   - tables are the names after FROM, JOIN, UPDATE, INTO (of INSERT and
 *     REPLACE), TABLE/TABLES, DELETE's and DESCRIBE's, HANDLER, RENAME
 *     TABLE's and ALTER TABLE ... RENAME's TO, and after commas of those
 *     lists (also after a join condition, an index hint or MariaDB's FOR
 *     SYSTEM_TIME ...), in parentheses too: FROM ((a, b) JOIN c ON x, d)
 *     lists a, b, c, d, while FROM (SELECT ...) lists its query's own.
 *     FROM inside EXTRACT/TRIM/SUBSTRING and SHOW ... FROM db list names
 *     that are not tables (a call after it, FROM f(d), is still a call),
 *     and CTE names are listed too;
 *   - where a table may be missed, SLC_SQL_F_TABLES_PARTIAL says so: more
 *     than SLC_SQL_MAX_TABLES, a list nested in more than 64 parentheses,
 *     ODBC's FROM { OJ ... }, and a ";" followed by more in CREATE, ALTER
 *     or BEGIN NOT ATOMIC (the end of a statement of a routine's body, or
 *     of the whole statement: CREATE TABLE t (a INT); UPDATE u ...);
 *   - a call (SLC_SQL_F_STORED_FUNC) is a word not in MariaDB 10.11's list
 *     of built-ins and grammar words (slc_sql_builtins.h), a quoted
 *     name or a qualified one, followed by "(", except the table of
 *     INSERT, REPLACE or LOAD (INSERT INTO t (a)) and FROM JSON_TABLE(,
 *     a CTE's column list (WITH c (a) AS, at the top level), and a word
 *     right after a string or ")" (JSON_TABLE's
 *     '$' COLUMNS (...), MATCH (a) AGAINST (...)), where no call can be.
 *     A function the list lacks (a UDF, a later version's built-in) and
 *     `concat`(...) are calls; a derived table's column list
 *     (FROM (...) AS x (a, b)) is one too.  DDL and CALL, writes both,
 *     never carry the flag.
 */

#define SLC_SQL_MAX_TABLES  16

typedef enum {
    SLC_SQL_UNKNOWN = 0,    /* cannot tell: the primary */
    SLC_SQL_EMPTY,          /* only blanks and comments */
    SLC_SQL_SELECT,         /* SELECT, (SELECT, WITH ... SELECT, VALUES,
                               TABLE t */
    SLC_SQL_SHOW,
    SLC_SQL_EXPLAIN,        /* DESCRIBE/DESC/EXPLAIN/ANALYZE <statement>,
                               DESCRIBE t */
    SLC_SQL_SET,
    SLC_SQL_USE,
    SLC_SQL_BEGIN,          /* BEGIN [WORK], START TRANSACTION ... */
    SLC_SQL_COMMIT,
    SLC_SQL_ROLLBACK,
    SLC_SQL_SAVEPOINT,      /* SAVEPOINT, RELEASE SAVEPOINT, ROLLBACK TO */
    SLC_SQL_XA,
    SLC_SQL_INSERT,
    SLC_SQL_UPDATE,
    SLC_SQL_DELETE,
    SLC_SQL_REPLACE,
    SLC_SQL_DDL,            /* CREATE, ALTER, DROP, RENAME, TRUNCATE */
    SLC_SQL_CALL,
    SLC_SQL_LOAD,           /* LOAD DATA/XML [LOCAL] INFILE, LOAD INDEX */
    SLC_SQL_PREPARE,
    SLC_SQL_EXECUTE,
    SLC_SQL_DEALLOCATE,     /* DEALLOCATE PREPARE, DROP PREPARE */
    SLC_SQL_DO,
    SLC_SQL_LOCK,           /* LOCK TABLES, UNLOCK TABLES */
    SLC_SQL_HANDLER,
    SLC_SQL_ADMIN,          /* FLUSH, KILL, GRANT, OPTIMIZE, ANALYZE TABLE,
                               CHECK, REPAIR, START SLAVE, GET DIAGNOSTICS.. */
    SLC_SQL_COMPOUND,       /* BEGIN NOT ATOMIC ... END */
    SLC_SQL_NKINDS
} slc_sql_kind_t;

/* What the text holds; any kind may carry any flag. */
#define SLC_SQL_F_WRITE            0x00000001u /* changes data, schema or
                                                  server state (for
                                                  EXPLAIN: of a write) */
#define SLC_SQL_F_LOCKING_READ     0x00000002u /* FOR UPDATE, FOR SHARE,
                                                  LOCK IN SHARE MODE */
#define SLC_SQL_F_SELECT_INTO      0x00000004u /* SELECT ... INTO */
#define SLC_SQL_F_USER_VAR_ASSIGN  0x00000008u /* := anywhere, SET @x = */
#define SLC_SQL_F_USER_VAR_READ    0x00000010u /* @x read */
#define SLC_SQL_F_SYSVAR_READ      0x00000020u /* @@x */
#define SLC_SQL_F_MULTI            0x00000040u /* ; followed by more */
#define SLC_SQL_F_LAST_ID          0x00000080u /* LAST_INSERT_ID(),
                                                  @@identity,
                                                  @@last_insert_id */
#define SLC_SQL_F_LOCK_FUNC        0x00000100u /* GET_LOCK and family */
#define SLC_SQL_F_SEQUENCE         0x00000200u /* NEXTVAL, LASTVAL, SETVAL,
                                                  NEXT/PREVIOUS VALUE FOR */
#define SLC_SQL_F_CONN_ID          0x00000400u /* CONNECTION_ID() */
#define SLC_SQL_F_READ_ONLY_TRX    0x00000800u /* START TRANSACTION READ
                                                  ONLY */
#define SLC_SQL_F_READ_WRITE_TRX   0x00001000u /* ... READ WRITE */
#define SLC_SQL_F_SNAPSHOT         0x00002000u /* WITH CONSISTENT SNAPSHOT */
#define SLC_SQL_F_SESSION_STATE    0x00004000u /* SET (session, no read),
                                                  USE, PREPARE, DEALLOCATE:
                                                  every backend */
#define SLC_SQL_F_SAME_AS_LAST     0x00008000u /* SHOW WARNINGS/ERRORS/
                                                  [SESSION] STATUS/PROFILE,
                                                  ROW_COUNT(), FOUND_ROWS(),
                                                  @@warning_count,
                                                  @@error_count,
                                                  GET DIAGNOSTICS */
#define SLC_SQL_F_NON_DETERMINISTIC 0x00010000u /* NOW(), RAND(), UUID(),
                                                  USER()...: not cacheable */
#define SLC_SQL_F_BINLOG           0x00020000u /* SHOW MASTER STATUS/LOGS,
                                                  SHOW BINLOG ..., SHOW
                                                  BINARY LOGS */
#define SLC_SQL_F_GLOBAL           0x00040000u /* SET GLOBAL/PERSIST,
                                                  SET @@global.x */
#define SLC_SQL_F_TEMPORARY        0x00080000u /* CREATE/DROP TEMPORARY */
#define SLC_SQL_F_DROP_TABLE       0x00100000u /* DROP TABLE: tables[] are
                                                  dropped */
#define SLC_SQL_F_TABLES_PARTIAL   0x00200000u /* tables[] may lack some
                                                  (see the known limits) */
#define SLC_SQL_F_UNTERMINATED     0x00400000u /* quote or comment open */
#define SLC_SQL_F_SQL_NO_CACHE     0x00800000u /* SQL_NO_CACHE */
#define SLC_SQL_F_STORED_FUNC      0x01000000u /* name( that is no MariaDB
                                                  built-in nor grammar,
                                                  `name`(, "name"(,
                                                  db.name(: a stored
                                                  function or UDF may be
                                                  called */
#define SLC_SQL_F_AMBIGUOUS        0x02000000u /* the text tokenizes
                                                  differently under
                                                  ANSI_QUOTES ("a\"..."): a
                                                  consumer that cannot
                                                  rule ANSI_QUOTES out must
                                                  treat it as UNKNOWN */
#define SLC_SQL_F_CALC_FOUND_ROWS  0x04000000u /* SQL_CALC_FOUND_ROWS, in
                                                  any SELECT of the text */
#define SLC_SQL_F_FOUND_ROWS       0x08000000u /* FOUND_ROWS() (also
                                                  SAME_AS_LAST and
                                                  NON_DETERMINISTIC) */
#define SLC_SQL_F_DDL              0x10000000u /* a multi-statement holds
                                                  DDL past its first
                                                  statement (whose kind
                                                  says the first's) */
#define SLC_SQL_F_MULTI_STATE      0x20000000u /* a statement of a multi-
                                                  statement may change the
                                                  session's state: SET,
                                                  USE, PREPARE, DEALLOCATE,
                                                  EXECUTE, CALL, a compound
                                                  statement, one of no
                                                  known kind */

/* Flags that send a statement to the primary whatever its kind (a stored
   function may write: MaxScale sends such reads to the primary too). */
#define SLC_SQL_F_PRIMARY                                                    \
    (SLC_SQL_F_WRITE | SLC_SQL_F_LOCKING_READ | SLC_SQL_F_SELECT_INTO        \
     | SLC_SQL_F_USER_VAR_ASSIGN | SLC_SQL_F_MULTI | SLC_SQL_F_LAST_ID       \
     | SLC_SQL_F_LOCK_FUNC | SLC_SQL_F_SEQUENCE | SLC_SQL_F_CONN_ID          \
     | SLC_SQL_F_BINLOG | SLC_SQL_F_GLOBAL | SLC_SQL_F_UNTERMINATED        \
     | SLC_SQL_F_STORED_FUNC)


/*
 * A name, as offsets into the classified text: the table (inside its
 * backticks or double quotes, when quoted; a doubled backtick is left as
 * it is) and its schema (db_len 0 when unqualified).
 */
typedef struct {
    uint32_t  off;
    uint32_t  len;
    uint32_t  db_off;
    uint32_t  db_len;
} slc_sql_name_t;

typedef struct {
    slc_sql_kind_t  kind;
    uint32_t        flags;
    slc_sql_hint_t  hint;
    unsigned        ntables;
    /* In order of appearance, repeats included.  CREATE [TEMPORARY]
       TABLE: tables[0] is the table created. */
    slc_sql_name_t  tables[SLC_SQL_MAX_TABLES];
} slc_sql_info_t;

/*
 * Classify q[0..len).  `status` is the session's last server status flags
 * (OK, EOF, or the greeting's): only SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES
 * counts, because with it a backslash escapes nothing and a quote after
 * one ends the string, so the same text holds other statements.  Always
 * fills *out; returns SLC_ERROR (kind UNKNOWN, flags
 * SLC_SQL_F_UNTERMINATED only, no tables; a hint before is kept) when a
 * quote or comment is left open or the text is longer than 4 GiB, else
 * SLC_OK.
 */
int          slc_sql_classify(const uint8_t *q, size_t len, unsigned status,
                              slc_sql_info_t *out);

/*
 * What a call w(...) of the unquoted, unqualified word w[0..n) sets, as
 * the classifier reads it: its function's flags (NEXTVAL:
 * SLC_SQL_F_SEQUENCE, NOW: SLC_SQL_F_NON_DETERMINISTIC...), and
 * SLC_SQL_F_STORED_FUNC unless it is a number, a word the classifier
 * holds reserved or a MariaDB built-in.  For slc_sql_tail.c, which
 * mirrors the classifier's call rule.
 */
uint32_t     slc_sql_call_flags(const uint8_t *w, size_t n);

const char  *slc_sql_kind_name(slc_sql_kind_t kind);
/* For the unit test: the keyword table is in order, without repeats,
   and its hash finds every keyword in either case, and no prefix. */
int          slc_sql_words_check(void);

/*
 * Where a statement goes, for a read/write split:
 *
 *   hint route=last                         LAST
 *   hint route=primary                      PRIMARY
 *   UNKNOWN, EMPTY, unterminated,
 *   AMBIGUOUS (ANSI_QUOTES may be on)       PRIMARY
 *   hint route=replica                      REPLICA, unless in a read-write
 *                                           transaction or session state
 *   multi-statement                         PRIMARY
 *   SAME_AS_LAST                            LAST
 *   SESSION_STATE                           ALL (every open backend)
 *   in a read-write transaction             PRIMARY
 *   in START TRANSACTION READ ONLY          REPLICA
 *   START TRANSACTION READ ONLY             REPLICA
 *   SELECT, SHOW, EXPLAIN without any of
 *   SLC_SQL_F_PRIMARY                       REPLICA
 *   everything else                         PRIMARY
 *
 * in_trx: the server says a transaction is open; read_only_trx: it was
 * opened READ ONLY.  Tables are the caller's business: a read that names a
 * temporary table of the session must go to the primary, and only the
 * router knows those (it keeps tables[0] of CREATE TEMPORARY TABLE).
 * Transaction control other than READ ONLY goes to the primary here; a
 * router that opens transactions lazily decides for itself.
 */
typedef enum {
    SLC_SQL_TO_PRIMARY = 0,
    SLC_SQL_TO_REPLICA,
    SLC_SQL_TO_ALL,
    SLC_SQL_TO_LAST
} slc_sql_route_t;

slc_sql_route_t  slc_sql_route(const slc_sql_info_t *si, int in_trx,
                               int read_only_trx);

#endif /* SLC_SQL_CLASSIFY_H */
