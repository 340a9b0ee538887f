#ifndef SLC_MYSQL_CATALOG_H
#define SLC_MYSQL_CATALOG_H

#include "slc_core.h"
#include "slc_mysql_conf.h"

/*
 * The schema catalog (docs/architecture.md, "Schema catalog"): what an
 * upstream's primary says about names that a statement's text alone does
 * not tell, for a query cache that must never serve a stale answer:
 *
 *   - which names are views, and which base tables each reads (through
 *     views of views), with the classifier's flags of their definitions
 *     (a view that calls NOW() or a stored function is as uncacheable as
 *     a SELECT that does);
 *   - which tables have triggers, and which tables those triggers write
 *     (through triggers of the tables they write), or "everything" when a
 *     trigger's writes cannot be named (a compound body, a CALL, a stored
 *     function);
 *   - the server's global sql_mode (ANSI_QUOTES: "x" is a name) and
 *     transaction isolation (READ UNCOMMITTED: a read may see what is
 *     never committed).
 *
 * The monitor process loads it from the primary it sees (Connector/C,
 * blocking: information_schema.VIEWS and TRIGGERS, @@global.sql_mode and
 * @@global.tx_isolation) every monitor_schema_interval, and within a
 * monitor_interval of a worker saying that DDL went through the proxy
 * (slc_catalog_ddl_seen).  It writes it into a zone of its own per
 * upstream ("mysql_catalog:NAME", monitor_schema_size bytes): two
 * images, the monitor writing the one workers do not use, then switching
 * them to it.  Workers read without a lock (each image has a seqlock they
 * check around each read: a read that raced a load is retried, then
 * answered UNKNOWN; src/mysql/upstream/slc_mysql_catalog_zone.h has the layout and
 * the memory ordering).  A zone of the same name and size is kept across
 * a reload, catalog and all.
 *
 * Names are table keys as the cache makes them: "db.table", ASCII letters
 * lowercased, quotes removed (a doubled backtick is one), NUL terminated.
 *
 * The account: the monitor's.  It must see every view's definition and
 * every trigger: global SHOW VIEW and TRIGGER privileges (GRANT SHOW VIEW,
 * TRIGGER ON *.* TO monitor).  Without them information_schema would show
 * fewer views and triggers than there are, silently, so the catalog checks
 * the account's global privileges at each load and, lacking one, is blind:
 * every question gets UNKNOWN (logged once per change, at error).  The
 * server shows a view's definition only to an account that may also
 * SELECT from it: a view it cannot read is a view that cannot be placed
 * (UNKNOWN; logged at warn).
 *
 * Known limits: DDL made elsewhere than through the proxy is learned at
 * the next load (monitor_schema_interval), and the cache is told what it
 * changed then (slc_catalog_on_change), not before; a load that does not
 * fit the zone leaves the catalog blind until one fits.  Keys fold case
 * as the cache's do: under lower_case_table_names=0 a view and a table
 * whose names differ only by case share a key, and a session's temporary
 * table may shadow a view's name; a caller that keys a view's reads by
 * the view's own name as well as its base tables stays right in both.
 */

#define SLC_CATALOG_NAMES_MAX   16      /* names an answer carries */
#define SLC_CATALOG_NAME_MAX    514     /* "db.table" with 4-byte UTF-8 */

typedef struct slc_catalog_s  slc_catalog_t;

/*
 * Names given back to a worker, in its own memory: name[i] points into
 * buf.  The caller zeroes it (n, all, flags) before its first question;
 * each answer appends, and a name already there is not repeated.
 */
typedef struct {
    unsigned    n;
    unsigned    all:1;          /* writes: everything may change */
    uint32_t    flags;          /* reads: SLC_SQL_F_* of the views read */
    slc_str_t   name[SLC_CATALOG_NAMES_MAX];    /* into buf */
    char        buf[SLC_CATALOG_NAMES_MAX * (SLC_CATALOG_NAME_MAX + 1)];
} slc_catalog_names_t;

typedef enum {
    SLC_CATALOG_TABLE = 0,      /* no view of that name: itself */
    SLC_CATALOG_VIEW,           /* a view: its base tables appended */
    SLC_CATALOG_UNKNOWN         /* cannot say: not loaded, stale (DDL
                                   seen since the load began), blind, a
                                   view whose tables cannot all be named,
                                   more names than fit, a racing load */
} slc_catalog_kind_t;

/* What the server's globals say (all 0 when not known). */
typedef struct {
    unsigned    ready:1;        /* loaded, current, not blind */
    unsigned    ansi_quotes:1;  /* @@global.sql_mode makes "x" a name */
    unsigned    read_uncommitted:1;  /* @@global.tx_isolation */
} slc_catalog_facts_t;

/* The core module "mysql_catalog": its directives (monitor_schema_interval,
   monitor_schema_size: upstream level), zones and stats. */
extern slc_module_t  slc_mysql_catalog_module;

/* --- configuration (master, before fork) -------------------------------- */

/*
 * A module needs the catalog of upstream `up` (the cache, for every
 * upstream a server {} with its filter uses): from any module's
 * init_conf, whatever the modules' order; wanting it twice is once.
 * Declares the zone.  SLC_ERROR with the reason in err (no "file:line: "
 * prefix: the caller places it at its own directive) when `up` has no
 * monitor_user (the catalog is the monitor's work).
 */
int  slc_catalog_want(slc_cycle_t *cycle, slc_upstream_t *up, char *err,
    size_t errlen);

/* The catalog of `up`, NULL when nobody wanted it. */
slc_catalog_t *slc_catalog_of(const slc_upstream_t *up);

/* --- workers ------------------------------------------------------------ */

/* SLC_OK with *f filled (f->ready set), or SLC_ERROR with *f all 0 when
   the catalog is not ready. */
int  slc_catalog_facts(slc_catalog_t *c, slc_catalog_facts_t *f);

/*
 * A read of `key`: TABLE (out untouched), VIEW (its base tables' names
 * appended to out, out->flags |= its definitions' flags), or UNKNOWN.
 * Appending past SLC_CATALOG_NAMES_MAX is UNKNOWN.
 */
slc_catalog_kind_t slc_catalog_reads(slc_catalog_t *c, const char *key,
    size_t len, slc_catalog_names_t *out);

/*
 * A write to `key`: what its triggers write too (through the triggers of
 * the tables they write), appended to out, or out->all (a trigger whose
 * writes cannot be named, more names than fit).  A view written writes
 * its base tables (and what their triggers write).  Nothing appended: a
 * table without triggers, or whose triggers write no other table.
 * SLC_ERROR when the catalog cannot say (not ready): the caller takes it
 * as everything.
 */
int  slc_catalog_writes(slc_catalog_t *c, const char *key, size_t len,
    slc_catalog_names_t *out);

/* DDL went through the proxy: not ready until a load that began after. */
void slc_catalog_ddl_seen(slc_catalog_t *c);

/* What `sluice -s stats` logs of a catalog (any process). */
typedef struct {
    unsigned    loaded:1;       /* a load was published */
    unsigned    blind:1;        /* ... by an account without the grants */
    unsigned    too_small:1;    /* ... that did not fit: blind */
    unsigned    current:1;      /* no DDL seen since it began */
    uint32_t    views;          /* rows of its load */
    uint32_t    triggers;
    uint32_t    hidden;         /* views whose definition was not shown */
    uint32_t    entries;        /* names it knows something of */
    uint64_t    loads;          /* loads published into the zone */
    uint64_t    version;        /* loads that changed something */
    size_t      used;           /* bytes of its image */
    size_t      size;           /* monitor_schema_size */
    char        server[128];    /* loaded from */
} slc_catalog_stats_t;

/* SLC_ERROR: no catalog, or no stable copy. */
int  slc_catalog_stats(slc_catalog_t *c, slc_catalog_stats_t *st);

/* --- the monitor process ------------------------------------------------ */

/*
 * After a load, what it changed: names whose view definition or triggers
 * appeared, changed or vanished, and the tables those triggers write
 * (the writes that went by before the catalog knew the trigger
 * invalidated nothing there; so for a new view, the base tables a write
 * through it reaches); all when that cannot be said (a first load into a
 * new zone or after a blind one, the server's ANSI_QUOTES or isolation
 * changed, a changed name that may write anything, more changes than
 * fit).  Called in the monitor process, which maps every zone: the cache
 * invalidates them there, after readers see the new catalog.  Up to four
 * hooks, each called once per change in the order they came (registering
 * one again is a no-op); names[] (NUL terminated) live for the call only.
 */
typedef void (*slc_catalog_changed_pt)(slc_cycle_t *cycle,
    const slc_upstream_t *up, const slc_str_t *names, unsigned n, int all);

void slc_catalog_on_change(slc_catalog_changed_pt fn);

/*
 * A load is due for `up`'s catalog (the monitor's tick calls it after
 * each round of checks): none wanted, not due or no primary seen does
 * nothing; else it loads from the primary (blocking), publishes, logs.
 * The loads' code is slc_mysql_catalog_load.c.
 */
void slc_catalog_step(const slc_upstream_t *up);
/* The same, only when a worker saw DDL since the last load began (not
   while loads fail: the round of checks retries those): the monitor asks
   every few milliseconds. */
void slc_catalog_poll(const slc_upstream_t *up);

/* --- building from rows (the monitor's loads; the unit tests) ---------- */

/* The bits of a sql_mode that change how a text reads. */
#define SLC_CATALOG_MODE_ANSI_QUOTES          0x1
#define SLC_CATALOG_MODE_NO_BACKSLASH_ESCAPES 0x2

/* A row of information_schema.VIEWS (VIEW_DEFINITION is canonical:
   qualified names in backticks; empty when the account may not see it). */
typedef struct {
    slc_str_t   schema;         /* TABLE_SCHEMA */
    slc_str_t   name;           /* TABLE_NAME */
    slc_str_t   definition;     /* VIEW_DEFINITION */
} slc_catalog_view_row_t;

/* A row of information_schema.TRIGGERS (ACTION_STATEMENT as written,
   under the trigger's own SQL_MODE). */
typedef struct {
    slc_str_t   schema;         /* TRIGGER_SCHEMA: unqualified names */
    slc_str_t   table_schema;   /* EVENT_OBJECT_SCHEMA */
    slc_str_t   table;          /* EVENT_OBJECT_TABLE */
    slc_str_t   body;           /* ACTION_STATEMENT */
    unsigned    sql_mode;       /* SLC_CATALOG_MODE_* of its SQL_MODE */
} slc_catalog_trigger_row_t;

/* One load's rows; they are the caller's, read during the call only. */
typedef struct {
    const slc_catalog_view_row_t    *views;
    unsigned                         nviews;
    const slc_catalog_trigger_row_t *triggers;
    unsigned                         ntriggers;
    unsigned                         blind:1;   /* a grant is missing: the
                                                   rows may be short */
    unsigned                         read_uncommitted:1;
    unsigned                         sql_mode;  /* @@global.sql_mode */
    uint32_t                         ddl_at;    /* slc_catalog_load_begin */
    const char                      *server;    /* loaded from, for logs */
} slc_catalog_rows_t;

/* What a publish did. */
typedef struct {
    unsigned    fits:1;         /* 0: the image did not fit: blind */
    unsigned    changed:1;      /* the hook was called (or would be) */
    unsigned    all:1;          /* ... with all */
    unsigned    nchanged;       /* ... with so many names */
    unsigned    hidden;         /* views without a definition */
    size_t      need;           /* bytes the image took (or needed) */
    size_t      room;           /* bytes an image may take */
    char        hidden_name[SLC_CATALOG_NAME_MAX + 1];  /* the first */
} slc_catalog_outcome_t;

/* The SLC_CATALOG_MODE_* bits of a sql_mode's text ("A,B,C"). */
unsigned slc_catalog_sql_mode(const char *s, size_t len);

/* The value of the DDL counter as a load begins (rows->ddl_at). */
uint32_t slc_catalog_load_begin(slc_catalog_t *c);

/*
 * Build the catalog of `rows`, compare it with the one readers use now,
 * write it into the image they do not use and switch them to it, then
 * call the slc_catalog_on_change hook with what changed.  An image that
 * does not fit is published blind (out->fits 0).  SLC_ERROR: out of
 * memory, nothing published.  The monitor process (or a unit test).
 */
int  slc_catalog_publish(slc_catalog_t *c, const slc_catalog_rows_t *rows,
    slc_catalog_outcome_t *out);

/* A catalog over `size` bytes at `addr` (formatted as a new zone), for
   the unit tests; free() it.  NULL: too small, or out of memory. */
slc_catalog_t *slc_catalog_mem(void *addr, size_t size);

#endif /* SLC_MYSQL_CATALOG_H */
