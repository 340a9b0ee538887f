#ifndef SLC_CACHE_SESSION_H
#define SLC_CACHE_SESSION_H

/*
 * The cache filter's per-session context, and the parts of the session
 * side that share it, each calling only those below it: the hooks
 * (slc_cache_filter.c), the prepared statements (slc_cache_ps.c), a
 * statement that may read (slc_cache_read.c) and what a statement writes
 * (slc_cache_inv.c), and under them all the session's surroundings
 * (slc_cache_session.c).  Private to the cache module.
 */

#include "slc_event.h"
#include "slc_mysql_filter.h"
#include "slc_mysql_rules.h"
#include "slc_cache.h"
#include "slc_cache_vars.h"
#include "slc_mysql_catalog.h"
#include "slc_sql_tail.h"

#define SLC_CACHE_PS_MAX     256    /* statements followed per session */

/* Whether a statement outside a transaction takes the level a SET
   TRANSACTION left for the next one (MariaDB: one that reads or writes a
   table does; SELECT 1, SET, DO, USE do not). */
#define SLC_CACHE_ISO_USE_NOT    0
#define SLC_CACHE_ISO_USE_YES    1
#define SLC_CACHE_ISO_USE_MAYBE  2

/* What the command in flight asks of its response (op). */
#define SLC_CACHE_OP_NONE   0
#define SLC_CACHE_OP_STORE  1   /* keep it */
#define SLC_CACHE_OP_SERVE  2   /* a hit is being sent */

/* What resets the server's session (then_reset). */
#define SLC_CACHE_RESET_CONNECTION  1
#define SLC_CACHE_RESET_USER        2

/* Tables to invalidate: their hashes, or all. */
typedef struct {
    unsigned    all:1;
    unsigned    n;
    uint32_t    hash[SLC_SQL_MAX_TABLES];
} slc_cache_inv_set_t;

/*
 * A prepared statement the filter follows (slc_cache_ps.c): one that
 * writes or sets (what its EXECUTE invalidates, or makes unknown), or a
 * SELECT whose EXECUTE the cache may answer, with what its key needs.
 */
typedef struct {
    uint32_t            id;
    unsigned            state:1;    /* may change the session's variables */
    unsigned            temp:1;     /* creates a temporary table */
    unsigned            ddl:1;      /* may change views or triggers */
    unsigned            read:1;     /* a SELECT: text, db, types kept (a
                                       write's text and db are kept too,
                                       to ask for its triggers at each
                                       EXECUTE) */
    unsigned            long_data:1;    /* SEND_LONG_DATA since its last
                                           EXECUTE or RESET */
    unsigned            meta_known:1;   /* CACHE_METADATA: meta is */
    uint64_t            meta;       /* the hash of the column definitions
                                       the client last got for it */
    uint16_t            params;
    uint32_t            len;        /* of text */
    uint64_t            state_hash; /* of the session's SETs when it was
                                       prepared (they shaped its parse) */
    slc_cache_inv_set_t inv;
    uint8_t            *text;       /* malloc'ed: the statement */
    slc_sql_info_t     *si;         /* malloc'ed: how it classified at
                                       PREPARE (its meaning is fixed then:
                                       no parse per EXECUTE) */
    char               *db;         /* malloc'ed: the default database
                                       it was prepared in */
    uint8_t            *types;      /* malloc'ed, 2 * params: the types
                                       the server has, NULL: not known */
} slc_cache_ps_t;

/*
 * Under MariaDB's CACHE_METADATA, the column definitions that go by in
 * the response to a PREPARE or an EXECUTE of a SELECT followed: packets
 * from..from+n-1 of the response are hashed (slc_cache_ps.c).
 */
typedef struct {
    unsigned                on:1;
    unsigned                prepare:1;  /* else an EXECUTE of id */
    unsigned                complete:1; /* all n hashed */
    unsigned                in:1;       /* the packet going is one */
    uint32_t                id;
    uint64_t                k;          /* packets begun */
    uint64_t                from;
    uint64_t                n;
    uint64_t                hash;
} slc_cache_meta_watch_t;

/* What a binary EXECUTE adds to the key (slc_cache_read_key). */
typedef struct {
    const slc_cache_ps_t   *ps;
    const uint8_t          *types;      /* 2 * ps->params */
    const uint8_t          *nulls;      /* the NULL bitmap */
    size_t                  nulls_len;
    const uint8_t          *values;
    size_t                  values_len;
    unsigned                no_serve:1; /* it binds types the server does
                                           not have: it must go there */
} slc_cache_exec_t;

typedef struct {
    slc_session_t          *s;
    slc_cache_conf_t       *conf;
    slc_cache_t            *cache;
    slc_cache_counters_t   *cnt;
    slc_catalog_t          *catalog;    /* its upstream's views, triggers */
    slc_catalog_facts_t     facts;      /* the server's globals, as read */
    uint64_t                facts_at;   /* at this loop time */

    /* what the session's results depend on */
    slc_cache_vars_t        vars;       /* its SETs */
    char                    db[SLC_MAX_DB + 1];
    unsigned                unknown:1;  /* variables not known: no cache */
    unsigned                temp:1;     /* created a temporary table */
    unsigned                ps_unknown:1;   /* statements of before a
                                               handover, or too many */
    unsigned                diag:1;     /* the server's warnings or error
                                           are another statement's: SHOW
                                           WARNINGS after a hit would show
                                           them, so no hit until a
                                           statement clears them */
    unsigned                user_gen;   /* s->user_gen it knew */
    uint8_t                 trx_iso;    /* the open transaction's level
                                           (SLC_CACHE_ISO_*, NONE: none
                                           seen open) */

    /* the command in flight */
    unsigned                op;
    uint16_t                status_before;  /* the session's, at it */
    uint8_t                 iso_use;    /* it takes SET TRANSACTION's
                                           level: SLC_CACHE_ISO_USE_* */
    int                     rule;       /* its rule, -1: none */
    char                    rule_key[SLC_SQL_RULE_NAME_MAX + 8];
                                        /* its entry's name for the rule
                                           (slc_cache_rule_key) */
    slc_cache_store_t       st;
    uint64_t                sent_after; /* the loop's time when it passed */
    uint64_t                npkt;       /* response packets begun */
    uint64_t                ncols;
    uint64_t                stored;
    uint32_t                last_off;   /* the last packet's start */
    slc_cache_meta_t        meta;
    unsigned                bad:1;      /* a response not to keep */
    unsigned                binary:1;   /* an EXECUTE's (CACHE_METADATA:
                                           with or without definitions) */
    uint64_t                ndefs;      /* column definitions in it */
    /* its effects once the server accepted it */
    unsigned                inflight:1; /* no end of its response yet */
    unsigned                clears:1;   /* it clears the server's warnings
                                           (it names a table, no SHOW) */
    unsigned                multi:1;    /* several statements: a write may
                                           be seen done before the end */
    unsigned                ddl:1;      /* it may change views, triggers:
                                           the catalog is stale */
    unsigned                long_read:1;    /* a SELECT larger than a
                                               buffer: its tail is scanned
                                               for what could write */
    uint32_t                tail_left;  /* its bytes still to come */
    slc_sql_tail_t           tail;
    slc_cache_inv_set_t     inv;
    unsigned                then_unknown:1;
    unsigned                then_temp:1;
    unsigned                then_reset:2;   /* SLC_CACHE_RESET_* */
    unsigned                then_db:1;
    unsigned                then_set:1;
    unsigned                then_prepare:1;
    char                    next_db[SLC_MAX_DB + 1];
    char                   *set_text;   /* malloc'ed */
    size_t                  set_len;
    slc_cache_ps_t          prep;       /* a PREPARE's, until its id */
    unsigned                then_unbind:1;  /* an EXECUTE that bound types
                                               (bind_id's): if it fails,
                                               they are not known */
    uint32_t                bind_id;
    slc_cache_meta_watch_t  mw;

    /* writes of the open transaction, invalidated at its end */
    slc_cache_inv_set_t     trx;

    /* single flight: waiting for another session's store */
    slc_timer_t             timer;
    uint64_t                wait_until;
    uint8_t                *key;        /* malloc'ed while it waits */
    size_t                  klen;
    uint64_t                hash;

    slc_cache_serve_t       serve;

    /* the remote tier (slc_cache_remote_t): its request, from the lookup
       the session waits for to the store of the backend's answer after a
       miss */
    void                   *rreq;
    long long               ttl;        /* of the store in flight */
    /* strict mode: the bump the response waits for (its gate held), and
       what a later statement of the response wrote meanwhile */
    void                   *rbump;
    unsigned                in_packet:1;    /* in the packet hook: a bump
                                               may hold the response */
    slc_cache_inv_set_t     rnext;

    /* the statement of the last hit, which the server did not run: run
       before a statement that asks what the last one did (FOUND_ROWS(),
       ROW_COUNT(), SHOW WARNINGS...), so that the server answers for it */
    const slc_cmd_t        *cur;        /* the command hook's command */
    uint8_t                *hit_cmd;    /* malloc'ed: its payload */
    uint32_t                hit_len;
    uint32_t                hit_cap;
    uint32_t                hit_rows;   /* the rows it answered */
    unsigned                hit_last:1;     /* the last command was it */
    unsigned                hit_before:1;   /* hit_last, as the command
                                               in flight found it */
    unsigned                select:1;   /* the command is a SELECT */
    unsigned                hit_select:1;   /* no SELECT reached the
                                               server since it */
    uint8_t                *wait_cmd;   /* malloc'ed while it waits: the
                                           command's payload */
    uint32_t                wait_len;

    slc_cache_ps_t         *ps;         /* prepared statements followed */
    uint32_t                ps_last;    /* the id of the last PREPARE */
    unsigned                nps;
} slc_cache_ctx_t;

/* slc_cache_session.c */

/* The scratch of a hook call: table keys; the schema catalog's names,
   zeroed for a first question (slc_catalog_names_t). */
slc_sql_keys_t    *slc_cache_session_keys(void);
slc_catalog_names_t *slc_cache_session_names(void);
/* The session's sql_mode may have ANSI_QUOTES (its SET, or the server's
   default). */
int  slc_cache_session_ansi(slc_cache_ctx_t *cc);
/* The statement of command c (whole: avail == len), as the command layer
   classified it (slc_cmd_classify) and the session's sql_mode may read
   it: one that ANSI_QUOTES would read otherwise is UNKNOWN.  Not a
   copy: valid for the command. */
const slc_sql_info_t *slc_cache_session_classify(slc_cache_ctx_t *cc,
    const slc_cmd_t *c);
/* Whether a text statement takes SET TRANSACTION's level (iso_use). */
uint8_t slc_cache_session_iso_use(const slc_sql_info_t *si);
/* After a response (ok: not an ERR): the levels it leaves. */
void slc_cache_session_iso_after(slc_cache_ctx_t *cc, int ok);
/* What the verdict (slc_cache_cacheable) knows of the session, for the
   command in flight whose unqualified names are in db. */
void slc_cache_session_of(slc_cache_ctx_t *cc, const char *db,
    slc_cache_session_t *ss);
/* The index (in srv->rules) of the rule whose cache actions the statement
   gets (slc_rules_eval), -1 for none; no counter. */
int  slc_cache_session_rule(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_sql_keys_t *keys);

/* slc_cache_inv.c */

/* What statement q[0..n) (classified into *si, its unqualified names in
   database db) invalidates once accepted: its tables, what their
   triggers write (the schema catalog), or everything. */
void slc_cache_inv_of(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_sql_info_t *si, const char *db, slc_cache_inv_set_t *out);
/* A statement that goes to the server reads a view that calls a stored
   function: it may write anything (out->all), as the call itself would. */
void slc_cache_inv_view_calls(slc_cache_ctx_t *cc, const uint8_t *q,
    const slc_sql_info_t *si, const char *db, slc_cache_inv_set_t *out);
/* DDL through the proxy (or what may be: a CALL, SET GLOBAL...): the
   catalog is stale from now until a load that begins after it is done. */
void slc_cache_inv_ddl(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_sql_info_t *si);
/*
 * The same as slc_cache_inv_of by the text alone (the binlog's
 * statements too): a stored function counts as a write of anything;
 * `catalog` (NULL: none) adds what triggers and views write, or
 * everything when it cannot say.
 */
void slc_cache_inv_text(slc_catalog_t *catalog, const uint8_t *q,
    size_t n, const slc_sql_info_t *si, const char *db,
    slc_cache_inv_set_t *out);
/* Whether statement q may change a view or a trigger (the catalog is then
   stale until a load that begins after it is done). */
int  slc_cache_inv_ddl_may(const uint8_t *q, size_t n,
    const slc_sql_info_t *si);
/* *to gets from's tables too; everything when they do not fit. */
void slc_cache_inv_merge(slc_cache_inv_set_t *to,
    const slc_cache_inv_set_t *from);
/* Invalidate *set in every zone now, and empty it. */
void slc_cache_inv_apply(slc_cache_ctx_t *cc, slc_cache_inv_set_t *set);
/* The response (r) is about to end: what the command wrote goes into the
   transaction's, invalidated unless one is open. */
void slc_cache_inv_settle(slc_cache_ctx_t *cc, const slc_mysql_reply_t *r);
/* An OK or EOF in a multi-statement: what may be written so far, now. */
void slc_cache_inv_early(slc_cache_ctx_t *cc);
/* The command in flight got no end of its response: what it and the open
   transaction may have written, now and again at the transaction's end. */
void slc_cache_inv_unanswered(slc_cache_ctx_t *cc);

/* slc_cache_read.c */

/*
 * A statement that may read: answer it from the cache, or keep its
 * response, as the verdict, the rules and the session allow.  x: NULL
 * for a COM_QUERY, the binary EXECUTE's parameters otherwise (its tables
 * are named in the statement's database).  Returns the command hook's
 * verdict.
 */
int  slc_cache_read(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_sql_info_t *si, const slc_cache_exec_t *x);

/* The remote tier's request is done with (the response ended, the
   session closed). */
void slc_cache_read_remote_end(slc_cache_ctx_t *cc);

/* A statement of these flags needs the last hit's statement run at the
   server first: 1 when that is queued (the command hook returns PASS and
   sees the command again). */
int  slc_cache_read_replay(slc_cache_ctx_t *cc, uint32_t flags);

/* slc_cache_ps.c */

void slc_cache_ps_prepare(slc_cache_ctx_t *cc, const slc_cmd_t *c);
/* The PREPARE was accepted: its PREPARE_OK gives the statement's id. */
void slc_cache_ps_prepared(slc_cache_ctx_t *cc, const slc_mysql_reply_t *r);
int  slc_cache_ps_execute(slc_cache_ctx_t *cc, const slc_cmd_t *c);
/* COM_STMT_CLOSE, COM_STMT_RESET, COM_STMT_SEND_LONG_DATA. */
void slc_cache_ps_command(slc_cache_ctx_t *cc, const slc_cmd_t *c);
/* A response packet, for the CACHE_METADATA watch. */
void slc_cache_ps_packet(slc_cache_ctx_t *cc, const slc_cmd_packet_t *p);
/* The response ended: what the client now holds of its statement's column
   definitions.  0 if that changed (a response then not kept). */
int  slc_cache_ps_watched(slc_cache_ctx_t *cc);
/* The EXECUTE that bound types failed: the server's are not known. */
void slc_cache_ps_unbind(slc_cache_ctx_t *cc, uint32_t id);
/* Frees what a record holds (not the record). */
void slc_cache_ps_free(slc_cache_ps_t *p);
void slc_cache_ps_forget(slc_cache_ctx_t *cc);
/* 1 if a statement followed writes or sets (a handover cannot say
   which). */
int  slc_cache_ps_writes(const slc_cache_ctx_t *cc);

#endif /* SLC_CACHE_SESSION_H */
