#ifndef SLC_CACHE_POLICY_H
#define SLC_CACHE_POLICY_H

/*
 * What the query cache may keep, under which names its entries are
 * invalidated, and the cache_rule list.  Pure functions over the statement
 * classifier's result (slc_sql_classify.h): no I/O, no logging, no shared
 * memory; the cache filter calls them and keeps the counters.
 */

#include "slc_core.h"
#include "slc_sql_classify.h"
#include "slc_sql_keys.h"
#include "slc_sql_rule.h"


/* --- the verdict -------------------------------------------------------- */

/*
 * CACHEABLE or why not; the first that applies, in this order.  Only
 * STORED_FUNCTION and TABLES_UNKNOWN may be overridden, by a rule that
 * says so (slc_cache_rule_allows).
 */
typedef enum {
    SLC_CACHE_CACHEABLE = 0,
    SLC_CACHE_UNTERMINATED,     /* a quote or comment left open */
    SLC_CACHE_MULTI,            /* more than one statement */
    SLC_CACHE_NOT_SELECT,       /* not a SELECT (nor VALUES, TABLE t) */
    SLC_CACHE_ISOLATION,        /* READ UNCOMMITTED, or a level not known:
                                   it may read what is never committed */
    SLC_CACHE_RW_TRX,           /* in a read-write transaction, or
                                   autocommit off outside READ ONLY */
    SLC_CACHE_SNAPSHOT,         /* in a READ ONLY transaction that reads a
                                   snapshot (REPEATABLE READ, SERIALIZABLE,
                                   WITH CONSISTENT SNAPSHOT): not the
                                   current data, nor what another session
                                   stored */
    SLC_CACHE_SQL_NO_CACHE,
    SLC_CACHE_LOCKING_READ,     /* FOR UPDATE, FOR SHARE, LOCK IN SHARE
                                   MODE */
    SLC_CACHE_INTO,             /* SELECT ... INTO @x | OUTFILE | DUMPFILE */
    SLC_CACHE_USER_VAR,         /* @x read or assigned */
    SLC_CACHE_SYSTEM_VAR,       /* @@x */
    SLC_CACHE_FUNCTION,         /* non-deterministic or session-dependent:
                                   NOW(), RAND(), USER(), GET_LOCK()... */
    SLC_CACHE_SYSTEM_SCHEMA,    /* information_schema, performance_schema,
                                   mysql, sys */
    SLC_CACHE_TEMPORARY,        /* the session has temporary tables */
    SLC_CACHE_STORED_FUNCTION,  /* calls a function that is no built-in:
                                   it may write (served from the cache,
                                   the write would be lost) or answer
                                   otherwise each time */
    SLC_CACHE_TABLES_UNKNOWN,   /* more tables than the classifier names */
    SLC_CACHE_SCHEMA_UNKNOWN,   /* a name the schema catalog cannot place:
                                   not loaded yet, DDL seen since its load,
                                   blind, a view whose tables cannot all
                                   be named or that reads more than an
                                   entry holds (the filter's, at store) */
    SLC_CACHE_NVERDICTS
} slc_cache_verdict_t;

/* What the verdict needs to know of the session. */
typedef struct {
    const char  *db;            /* default database, NULL or "" when none */
    size_t       db_len;
    unsigned     status;        /* the server's last status flags */
    unsigned     read_only_trx:1;   /* the open transaction is READ ONLY */
    unsigned     read_committed:1;  /* and READ COMMITTED: each statement
                                       reads the data committed when it
                                       starts, as autocommit does */
    unsigned     dirty:1;           /* READ UNCOMMITTED, or not known */
    unsigned     temp_tables:1;     /* the session created a temporary
                                       table (it would shadow a real one
                                       under the same name for this
                                       session only) */
} slc_cache_session_t;

/*
 * The verdict on q[0..len), classified into *si.  Autocommit on, or a READ
 * ONLY transaction (read_only_trx or SLC_SERVER_STATUS_IN_TRANS_READONLY)
 * under READ COMMITTED, is needed: with autocommit off every read opens or
 * continues a transaction whose snapshot a cached result would not belong
 * to, and a REPEATABLE READ transaction reads its snapshot (an entry
 * stored from it is old data; an entry served to it may be newer than
 * its snapshot).
 */
slc_cache_verdict_t  slc_cache_cacheable(const uint8_t *q, size_t len,
                                         const slc_sql_info_t *si,
                                         const slc_cache_session_t *ss);

/*
 * The verdict on what the views a statement reads hold: the OR of their
 * definitions' classifier flags and their base tables' keys (the schema
 * catalog's).  CACHEABLE, or the first reason of slc_cache_cacheable's
 * order that applies (a view calling NOW() or a stored function is as
 * uncacheable as a SELECT that does; no rule overrides it).
 */
slc_cache_verdict_t  slc_cache_view_verdict(uint32_t flags,
                                            const slc_str_t *bases,
                                            unsigned n);

/* "cacheable", "not_select", "tables_unknown"...: for counters and logs. */
const char          *slc_cache_verdict_name(slc_cache_verdict_t v);

/* The schemas whose tables are never cached (case-insensitive). */
int                  slc_cache_is_system_schema(const char *db, size_t len);


/*
 * What a statement invalidates: nothing (not a write), its table keys, or
 * everything, when a write's tables cannot all be named (CALL, a stored
 * routine, DROP DATABASE, any ADMIN write (GRANT, REVOKE, FLUSH, KILL,
 * OPTIMIZE TABLE...), a DDL without a table, a
 * multi-statement with a write, more tables than fit, a name too long,
 * EXECUTE, an UNKNOWN statement).
 */
typedef enum {
    SLC_CACHE_INV_NONE = 0,
    SLC_CACHE_INV_TABLES,
    SLC_CACHE_INV_ALL
} slc_cache_inv_t;

slc_cache_inv_t  slc_cache_invalidates(const slc_sql_info_t *si);

/*
 * Whether DDL q[0..n) may change a view or a trigger, or what a view
 * reads (the schema catalog is then stale): all but TRUNCATE, CREATE
 * [TEMPORARY] TABLE, CREATE INDEX and an ALTER TABLE that renames
 * nothing.
 */
int  slc_cache_ddl_may(const uint8_t *q, size_t n);


/* --- rules -------------------------------------------------------------- */

/*
 * cache_rule's arguments after its name, into the rule engine's *r
 * (slc_sql_rule.h: the server's one list of rules):
 *   NAME match=text|table|database|user "REGEX" ACTION...
 * where ACTION is ttl=DURATION (slc_conf_parse_msec: 500ms, 10s, 1m30s),
 * no_cache, cache_unknown_tables or cache_stored_functions (with or
 * without a ttl= and each other): the rule of a `rule {}` block with
 * match_text, match_table, match_schema or match_user and the same cache
 * actions.  SLC_ERROR with why in err (*r freed).
 */
int   slc_cache_rule_parse(const slc_str_t *args, unsigned nargs,
                           slc_sql_rule_t *r, char *err, size_t errlen);

/*
 * The name an entry stored under rule `name` depends on, as it depends
 * on its tables ("\1rule.NAME", no table's key): `cache flush rule NAME`
 * moves its generation.  Into dst (SLC_SQL_RULE_NAME_MAX + 8 bytes): its
 * length.
 */
size_t slc_cache_rule_key(char *dst, const char *name);

/*
 * Whether a statement of verdict v, classified into *si, may be cached
 * under rule r (NULL: no rule with a cache action matched): CACHEABLE
 * always, TABLES_UNKNOWN and STORED_FUNCTION only when r allows
 * everything the statement holds of the two (cache_unknown_tables,
 * cache_stored_functions), the rest never.
 */
int   slc_cache_rule_allows(const slc_sql_rule_t *r, slc_cache_verdict_t v,
                            const slc_sql_info_t *si);

#endif /* SLC_CACHE_POLICY_H */
