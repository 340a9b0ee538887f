/*
 * readwritesplit: prepared statements of the binary protocol (COM_STMT_*;
 * docs/architecture.md, "Prepared statements").
 *
 * Every statement is prepared on the primary, and the client sees the
 * primary's statement id: nothing to rewrite in a PREPARE_OK, and a
 * statement this router does not know (one prepared before a reload, or
 * whose PREPARE it could not follow) is simply the primary's.  A statement
 * the classifier would send to a replica is also prepared on a replica
 * backend: a copy of the client's PREPARE when one is open, else a PREPARE
 * of ours (slc_cmd_inject) when an EXECUTE could first run there.  Its id
 * on each replica backend is kept, and an EXECUTE that runs on a replica
 * is rewritten with it (slc_cmd_rewrite).
 *
 * An EXECUTE runs where slc_rwsplit_query would run the statement's text now
 * (transaction state, read-your-writes, hints), on a replica once the
 * statement is prepared there, or when its PREPARE is on its way there
 * (the copy of the client's, sent with it: a statement prepared, executed
 * once and closed, as Go's database/sql and PDO do, then waits a moment
 * for that PREPARE_OK rather than running on the primary; a refusal sends
 * it on to the primary).  A PREPARE that only starts now does not hold
 * the read up: it runs on the primary, and the replica has the statement
 * next time.  Inside a read-only transaction on a replica, and for a
 * prepared START TRANSACTION READ ONLY, the EXECUTE must run there; it
 * waits for the PREPARE, and gets the id from its PREPARE_OK.
 *
 * Parameter types: an EXECUTE with new-params-bound-flag 0 uses the types
 * of the statement's last EXECUTE that sent them, on that server.  The
 * router keeps the last types and which servers have them; a server that
 * lacks them, primary or replica, gets them inserted into an EXECUTE that
 * lacks them (or, for a replica, when that does not fit a buffer, the
 * EXECUTE runs on the primary).  A statement whose types only a replica
 * has goes with its types in a reload's handover (slc_rwsplit_ps_save), since
 * the next worker runs it on the primary.
 *
 * Cursors (an EXECUTE with flags), long data, the id -1 (MariaDB's "the
 * last prepared") and COM_STMT_BULK_EXECUTE stay on the primary, so that
 * COM_STMT_FETCH needs no routing.  A prepared autocommit read that a
 * replica fails before answering (retry_failed_reads) runs again on the
 * primary, as the client sent it (the client's id is the primary's), with
 * the types put in if the primary lacks them; never on another replica,
 * whose id would differ.  Memory: the text of each statement is kept (for
 * a PREPARE on a replica opened later), max_prepared_statements of them
 * at most.
 */

#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_session.h"
#include "slc_sql_classify.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_router.h"
#include "slc_rwsplit.h"


typedef enum {
    SLC_RWSPLIT_REP_PENDING = 1,        /* its PREPARE is on the way */
    SLC_RWSPLIT_REP_READY,              /* rid is its id there */
    SLC_RWSPLIT_REP_FAILED              /* refused: not on that replica */
} slc_rwsplit_rep_t;

/* A statement on a replica backend. */
typedef struct {
    slc_backend_t  *b;              /* NULL: a free slot */
    uint32_t        rid;            /* its id there */
    slc_rwsplit_rep_t   state;
    unsigned        types:1;        /* has the statement's types */
} slc_rwsplit_on_t;

struct slc_rwsplit_stmt_s {
    RB_ENTRY(slc_rwsplit_stmt_s) entry;
    uint32_t        id;             /* the primary's, the client's */
    uint16_t        params;
    unsigned        primary_types:1;    /* the primary has `types` */
    unsigned        primary_only:1; /* session state (SET ...): never a
                                       replica */
    unsigned        long_data:1;    /* long data sent to the primary */
    unsigned        ro_begin:1;     /* START TRANSACTION READ ONLY */
    unsigned        stub:1;         /* came with a handover: its id, its
                                       types, no text: the primary's */
    slc_sql_kind_t  kind;
    slc_rwsplit_on_t    on[SLC_RWSPLIT_MAX_REPLICAS];
    uint8_t        *types;          /* 2 * params, the last bound */
    size_t          len;
    uint8_t         prepare[];      /* the COM_STMT_PREPARE payload */
};

static int
slc_rwsplit_stmt_cmp(slc_rwsplit_stmt_t *a, slc_rwsplit_stmt_t *b)
{
    return a->id < b->id ? -1 : a->id > b->id;
}

RB_GENERATE(slc_rwsplit_stmts, slc_rwsplit_stmt_s, entry, slc_rwsplit_stmt_cmp)

static slc_rwsplit_stmt_t *
slc_rwsplit_ps_find(slc_rwsplit_ctx_t *rc, uint32_t id)
{
    slc_rwsplit_stmt_t key;

    key.id = id;
    return RB_FIND(slc_rwsplit_stmts, &rc->stmts, &key);
}

static slc_rwsplit_on_t *
slc_rwsplit_ps_on(slc_rwsplit_stmt_t *st, const slc_backend_t *b)
{
    for (unsigned i = 0; i < SLC_RWSPLIT_MAX_REPLICAS; i++) {
        if (st->on[i].b == b) {
            return &st->on[i];
        }
    }
    return NULL;
}

static slc_rwsplit_ps_wait_t *
slc_rwsplit_ps_wait(slc_rwsplit_ctx_t *rc, const slc_backend_t *b)
{
    for (unsigned i = 0; i < SLC_RWSPLIT_MAX_REPLICAS; i++) {
        if (rc->ps_wait[i].b == b) {
            return &rc->ps_wait[i];
        }
    }
    return NULL;
}

/* A command for a replica's copy of a statement (CLOSE, RESET). */
static void
slc_rwsplit_ps_tell(slc_backend_t *b, uint8_t com, uint32_t rid)
{
    uint8_t p[5];

    p[0] = com;
    slc_mysql_le_put(p + 1, rid, 4);
    (void) slc_cmd_inject(b, p, sizeof(p));     /* 5 bytes: fits */
}

/* The EXECUTE waiting for a replica's PREPARE is no longer. */
static void
slc_rwsplit_ps_unwait(slc_rwsplit_ctx_t *rc)
{
    free(rc->ps_xhead);
    rc->ps_xhead = NULL;
    rc->ps_xst = NULL;
    rc->ps_xb = NULL;
}

/* A statement is forgotten (closed, or its PREPARE failed on the
   primary); a copy on its way to a replica is closed when it arrives. */
static void
slc_rwsplit_ps_free(slc_rwsplit_ctx_t *rc, slc_rwsplit_stmt_t *st, int in_tree)
{
    if (in_tree) {
        RB_REMOVE(slc_rwsplit_stmts, &rc->stmts, st);
        rc->nstmts--;
    }
    for (unsigned i = 0; i < SLC_RWSPLIT_MAX_REPLICAS; i++) {
        if (rc->ps_wait[i].st == st) {
            rc->ps_wait[i].st = NULL;
        }
    }
    if (rc->ps_xst == st) {
        slc_rwsplit_ps_unwait(rc);
    }
    if (rc->retry_st == st) {
        rc->retry_st = NULL;
    }
    free(st->types);
    free(st);
}

void
slc_rwsplit_ps_forget(slc_rwsplit_ctx_t *rc)
{
    slc_rwsplit_stmt_t *st, *next;

    RB_FOREACH_SAFE(st, slc_rwsplit_stmts, &rc->stmts, next) {
        slc_rwsplit_ps_free(rc, st, 1);
    }
    if (rc->ps_pending != NULL) {
        slc_rwsplit_ps_free(rc, rc->ps_pending, 0);
        rc->ps_pending = NULL;
    }
    memset(rc->ps_wait, 0, sizeof(rc->ps_wait));
}

void
slc_rwsplit_ps_replica_gone(slc_rwsplit_ctx_t *rc, slc_backend_t *b)
{
    slc_rwsplit_stmt_t     *st;
    slc_rwsplit_on_t       *o;
    slc_rwsplit_ps_wait_t  *w;

    RB_FOREACH(st, slc_rwsplit_stmts, &rc->stmts) {
        if ((o = slc_rwsplit_ps_on(st, b)) != NULL) {
            memset(o, 0, sizeof(*o));
        }
    }
    if (rc->ps_pending != NULL
        && (o = slc_rwsplit_ps_on(rc->ps_pending, b)) != NULL)
    {
        memset(o, 0, sizeof(*o));
    }
    if ((w = slc_rwsplit_ps_wait(rc, b)) != NULL) {
        memset(w, 0, sizeof(*w));
    }
    if (rc->ps_xb == b) {
        slc_rwsplit_ps_unwait(rc);
    }
}


/* --- PREPARE ------------------------------------------------------------- */

/*
 * The PREPARE the last command sent to the primary was answered: with its
 * PREPARE_OK when the primary answered one response since (its id and
 * parameter count), else the statement is left to the primary alone.
 */
void
slc_rwsplit_ps_settle(slc_session_t *s, slc_rwsplit_ctx_t *rc)
{
    slc_rwsplit_stmt_t          *st = rc->ps_pending;
    const slc_mysql_reply_t *r = &s->backend->track.reply;

    slc_rwsplit_ps_unwait(rc);
    if (st == NULL) {
        return;
    }
    rc->ps_pending = NULL;
    st->id = r->stmt_id;
    if (r->done != rc->ps_mark + 1 || r->first != SLC_MYSQL_OK
        || slc_rwsplit_ps_find(rc, r->stmt_id) != NULL)
    {
        slc_rwsplit_ps_free(rc, st, 0);
        return;
    }
    st->params = r->params;
    RB_INSERT(slc_rwsplit_stmts, &rc->stmts, st);
    rc->nstmts++;
    rc->ps_last = st->id;
}

/* Prepare st on replica backend b (a copy of the client's PREPARE, or a
   command of ours), one statement at a time per replica, so that b's next
   PREPARE_OK is st's.  SLC_OK when it is there or on its way. */
static int
slc_rwsplit_ps_lazy(slc_rwsplit_ctx_t *rc, slc_rwsplit_stmt_t *st,
    slc_backend_t *b,
    int copy)
{
    slc_rwsplit_on_t      *o = slc_rwsplit_ps_on(st, b);
    slc_rwsplit_ps_wait_t *w;
    uint32_t           prev = b->track.reply.stmt_id;

    if (o != NULL) {
        return o->state == SLC_RWSPLIT_REP_FAILED ? SLC_ERROR : SLC_OK;
    }
    if (b->state != SLC_BS_READY || slc_rwsplit_ps_wait(rc, b) != NULL
        || (w = slc_rwsplit_ps_wait(rc, NULL)) == NULL
        || (o = slc_rwsplit_ps_on(st, NULL)) == NULL)
    {
        return SLC_ERROR;
    }
    if (copy ? slc_cmd_also(b->session, b) != SLC_OK
             : slc_cmd_inject(b, st->prepare, st->len) != SLC_OK)
    {
        return SLC_ERROR;
    }
    *w = (slc_rwsplit_ps_wait_t) { .b = b, .st = st, .prev = prev };
    *o = (slc_rwsplit_on_t) { .b = b, .state = SLC_RWSPLIT_REP_PENDING };
    return SLC_OK;
}

/*
 * Replica b answered what it had on the way, the last of it our PREPARE:
 * a new statement id says it was prepared (the server numbers them upwards
 * per connection; an ERR leaves the last id as it was).  An EXECUTE that
 * waits for it gets the id now.
 */
void
slc_rwsplit_ps_replica_done(slc_backend_t *b, const slc_mysql_reply_t *r)
{
    slc_session_t     *s = b->session;
    slc_rwsplit_ctx_t     *rc = s->router_data;
    slc_rwsplit_ps_wait_t *w = slc_rwsplit_ps_wait(rc, b);
    slc_rwsplit_stmt_t    *st;
    slc_rwsplit_on_t      *o;
    int                ok;

    if (w == NULL) {
        return;
    }
    ok = r->stmt_id != w->prev;
    st = w->st;
    memset(w, 0, sizeof(*w));
    if (!ok && st == NULL && slc_rwsplit_copies(rc, b) != NULL) {
        slc_rwsplit_copies(rc, b)->errs_seen++;
    }
    if (st == NULL) {
        if (ok) {
            /* closed */
            slc_rwsplit_ps_tell(b, SLC_COM_STMT_CLOSE, r->stmt_id);
        }
        return;
    }
    if ((o = slc_rwsplit_ps_on(st, b)) == NULL) {
        return;
    }
    o->state = ok ? SLC_RWSPLIT_REP_READY : SLC_RWSPLIT_REP_FAILED;
    o->rid = r->stmt_id;
    if (!ok && slc_rwsplit_copies(rc, b) != NULL) {
        slc_rwsplit_copies(rc, b)->errs_seen++;    /* ours: no session command
                                               refused */
    }
    if (!ok) {
        slc_session_log(s, SLC_LOG_INFO, "readwritesplit: replica %s "
            "refused a prepared statement (error %u): it runs on the "
            "primary", b->server->name, r->err);
    }
    if (rc->ps_xst == st && rc->ps_xb == b && !ok && !rc->ps_xmust) {
        /* an autocommit read: the primary runs it, as the client sent it
           (its id is the primary's) */
        slc_rwsplit_ps_unwait(rc);
        (void) slc_cmd_retarget(s, b, s->backend);
        return;
    }
    if (rc->ps_xst == st && rc->ps_xb == b) {
        /* refused: id 0, which no statement has, and the client gets the
           replica's ERR; never the client's id, which may name another
           statement there */
        slc_mysql_le_put(rc->ps_xhead + 1, ok ? o->rid : 0, 4);
        if (slc_cmd_rewrite(s, rc->ps_xhead, rc->ps_xlen, rc->ps_xkeep)
            == SLC_OK && ok && rc->ps_xkeep > 5)
        {
            o->types = 1;
        }
        slc_rwsplit_ps_unwait(rc);
    }
}

static slc_backend_t *
slc_rwsplit_ps_prepare(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const slc_cmd_t *c)
{
    slc_rwsplit_stmt_t       *st;
    slc_sql_info_t        si;
    slc_sql_route_t       route;
    slc_backend_t        *b;
    char                  msg[128];

    if (rc->nstmts >= (unsigned long long) rc->conf->max_prepared_statements)
    {
        snprintf(msg, sizeof(msg), "Can't create more than "
            "max_prepared_statements statements (current value: %lld)",
            rc->conf->max_prepared_statements);
        if (slc_reply_err(s, SLC_ER_MAX_PREPARED_STMT_COUNT_REACHED,
                              "42000", msg) != SLC_OK)
        {
            slc_session_close(s, SLC_LOG_ERR, "out of memory");
        }
        return NULL;
    }
    if (c->avail < c->len
        || (st = calloc(1, sizeof(*st) + c->len)) == NULL)
    {
        return s->backend;          /* unknown: the primary's alone */
    }
    memcpy(st->prepare, c->payload, c->len);
    st->len = c->len;
    si = *slc_cmd_classify(s, c);
    route = slc_sql_route(&si, 0, 0);
    st->primary_only = route == SLC_SQL_TO_ALL;
    st->kind = si.kind;
    st->ro_begin = si.kind == SLC_SQL_BEGIN
                   && (si.flags & SLC_SQL_F_READ_ONLY_TRX);
    rc->ps_pending = st;
    /* its PREPARE_OK comes after the answers to what is already on its
       way to the primary: the causal-reads SET that a session's first
       command gets ahead of it (slc_rwsplit_causal_command) */
    rc->ps_mark = s->backend->track.reply.done + s->backend->track.npend;
    if (route == SLC_SQL_TO_REPLICA) {
        /* where it would run now: opens a replica backend if it may */
        b = slc_rwsplit_query(s, rc, c);
        rc->retry_on = NULL;
        if (b != NULL && b != s->backend) {
            (void) slc_rwsplit_ps_lazy(rc, st, b, 1);
        }
    }
    return s->backend;
}


/* --- EXECUTE ------------------------------------------------------------- */

/* The client bound types: keep them; new ones, no server has them yet. */
static void
slc_rwsplit_ps_bound(slc_rwsplit_stmt_t *st, const uint8_t *types,
    size_t avail)
{
    size_t n = 2 * (size_t) st->params;

    if (st->types != NULL && avail >= n && memcmp(st->types, types, n) == 0)
    {
        return;
    }
    st->primary_types = 0;
    for (unsigned i = 0; i < SLC_RWSPLIT_MAX_REPLICAS; i++) {
        st->on[i].types = 0;
    }
    if (avail < n) {
        free(st->types);            /* not at hand: not kept */
        st->types = NULL;
        return;
    }
    if (st->types == NULL && (st->types = malloc(n)) == NULL) {
        return;
    }
    memcpy(st->types, types, n);
}

/*
 * The head of the EXECUTE for a replica, into h (room for `cap` bytes):
 * *len bytes replacing *keep of the client's: the statement's id there,
 * and, with `types`, the types the client bound earlier
 * (new-params-bound-flag set).  NULL when they are not known or do not
 * fit `cap`; h itself otherwise.
 */
static uint8_t *
slc_rwsplit_ps_head_in(uint8_t *h, size_t cap, const slc_rwsplit_stmt_t *st,
    const slc_cmd_t *c, size_t fpos, int types, uint32_t rid, size_t *len,
    size_t *keep)
{
    if (!types) {
        *len = *keep = 5;
    } else if (st->types == NULL || c->payload[fpos] != 0) {
        return NULL;
    } else {
        *keep = fpos + 1;
        *len = *keep + 2 * (size_t) st->params;
    }
    if (h == NULL || *len > cap) {
        return NULL;
    }
    memcpy(h, c->payload, types ? fpos : 5);
    slc_mysql_le_put(h + 1, rid, 4);
    if (types) {
        h[fpos] = 1;
        memcpy(h + *keep, st->types, *len - *keep);
    }
    return h;
}

/* The same, malloc'ed (the caller frees it). */
static uint8_t *
slc_rwsplit_ps_head(const slc_rwsplit_stmt_t *st, const slc_cmd_t *c,
    size_t fpos,
    int types, uint32_t rid, size_t *len, size_t *keep)
{
    size_t   cap = types ? fpos + 1 + 2 * (size_t) st->params : 5;
    uint8_t *h = malloc(cap);

    if (slc_rwsplit_ps_head_in(h, cap, st, c, fpos, types, rid, len, keep)
        == NULL)
    {
        free(h);
        return NULL;
    }
    return h;
}

/*
 * The EXECUTE goes to replica b where it may: b has the statement (its id
 * there) and the types, or can be given them.  Elsewhere it runs on the
 * primary, which has both, and the statement is prepared on b for the
 * next time.  Inside a read-only transaction on b it must run there: it
 * waits for the PREPARE (slc_rwsplit_ps_replica_done gives it the id).
 */
static slc_backend_t *
slc_rwsplit_ps_to_replica(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    slc_rwsplit_stmt_t *st, const slc_cmd_t *c, slc_backend_t *b, size_t fpos,
    int bound)
{
    int           must = st->ro_begin
                         || slc_mysql_track_in_trans(&b->track);
    slc_rwsplit_on_t *o = slc_rwsplit_ps_on(st, b);
    int           types, waits;
    uint8_t      *h;
    size_t        len, keep;

    /* a PREPARE already on its way there (the copy of the client's, which
       went with it to the primary) is worth its wait: a statement
       prepared, executed once and closed (Go's database/sql, PDO) then
       runs on the replica too; unless a refusal would send the EXECUTE
       to a primary that lacks its types */
    waits = o != NULL && o->state == SLC_RWSPLIT_REP_PENDING
            && (must || bound || fpos == 0 || st->primary_types);
    if (!waits && (o == NULL || o->state != SLC_RWSPLIT_REP_READY)) {
        if (slc_rwsplit_ps_lazy(rc, st, b, 0) != SLC_OK || !must) {
            return s->backend;
        }
        o = slc_rwsplit_ps_on(st, b);
    }
    types = fpos > 0 && !bound && !o->types;
    if (!types && o->state == SLC_RWSPLIT_REP_READY) {
        /* the common case, every EXECUTE once the replica has the
           statement and its types: the id only, no malloc */
        uint8_t id[5];

        h = slc_rwsplit_ps_head_in(id, sizeof(id), st, c, fpos, 0, o->rid,
                               &len, &keep);
        if (slc_cmd_rewrite(s, h, len, keep) != SLC_OK) {
            return s->backend;
        }
        o->types = o->types || bound;   /* the client bound them now */
        return b;
    }
    h = slc_rwsplit_ps_head(st, c, fpos, types, o->rid, &len, &keep);
    if (h == NULL && types && must) {
        types = 0;                  /* the server will say what is wrong */
        h = slc_rwsplit_ps_head(st, c, fpos, 0, o->rid, &len, &keep);
    }
    if (h == NULL) {
        return s->backend;          /* no memory: where it is anyway */
    }
    if (o->state == SLC_RWSPLIT_REP_PENDING) {
        rc->ps_xhead = h;           /* the id comes with the PREPARE_OK */
        rc->ps_xlen = len;
        rc->ps_xkeep = keep;
        rc->ps_xst = st;
        rc->ps_xb = b;
        rc->ps_xmust = must != 0;
        return b;
    }
    if (slc_cmd_rewrite(s, h, len, keep) != SLC_OK) {
        free(h);
        return s->backend;
    }
    free(h);
    if (types || bound) {
        o->types = 1;
    }
    return b;
}

/*
 * A prepared session command (a SET, through a driver that prepares
 * everything: DBD::MariaDB with mariadb_server_prepare) runs on the
 * primary; once the primary accepted it, the replicas get its text, as a
 * text SET would reach them, and the history keeps it
 * (slc_rwsplit_state_hold).  With parameters the text says nothing: the
 * session's replica backends go, and it reads from the primary.
 */
static void
slc_rwsplit_ps_state(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const slc_rwsplit_stmt_t *st)
{
    if (st->params > 0) {
        slc_rwsplit_state_apply(s, rc, SLC_RWSPLIT_FX_UNKNOWN);
        return;
    }
    slc_rwsplit_state_hold(s, rc, st->prepare + 1, st->len - 1, st->kind);
}

/*
 * An EXECUTE for the primary that lacks types the primary never got (they
 * went to a replica, with an earlier EXECUTE): the types are put in, as
 * for a replica.
 */
static void
slc_rwsplit_ps_primary_types(slc_session_t *s, slc_rwsplit_stmt_t *st,
    const slc_cmd_t *c, size_t fpos, int bound)
{
    uint8_t *h;
    size_t   len, keep;

    if (bound || fpos == 0) {
        st->primary_types = st->primary_types || bound;
        return;
    }
    if (st->primary_types || st->types == NULL) {
        return;                         /* it has them, or nobody does */
    }
    h = slc_rwsplit_ps_head(st, c, fpos, 1, st->id, &len, &keep);
    if (h != NULL && slc_cmd_rewrite(s, h, len, keep) == SLC_OK) {
        st->primary_types = 1;
    }
    free(h);
}

/*
 * A prepared read kept for a retry on the primary (slc_rwsplit_keep) whose
 * EXECUTE brought no types, which the primary never got: they are put in
 * when the retry happens, not at every EXECUTE.  Without memory the
 * retry goes as the client sent it, and the primary answers an ERR.
 */
void
slc_rwsplit_ps_retry_types(slc_rwsplit_ctx_t *rc)
{
    slc_rwsplit_stmt_t *st = rc->retry_st;
    size_t          fpos, len, keep;
    uint8_t        *h, *full;
    slc_cmd_t       c;

    rc->retry_st = NULL;
    if (st == NULL || st->primary_types
        || (fpos = slc_mysql_exec_flag_pos(st->params)) == 0
        || rc->retry_len <= fpos
        || rc->retry[fpos] != 0)
    {
        return;
    }
    c = (slc_cmd_t) { .command = SLC_COM_STMT_EXECUTE,
                      .len = (uint32_t) rc->retry_len,
                      .payload = rc->retry, .avail = rc->retry_len };
    h = slc_rwsplit_ps_head(st, &c, fpos, 1, st->id, &len, &keep);
    full = h != NULL ? malloc(len + c.len - keep) : NULL;
    if (full != NULL) {
        memcpy(full, h, len);
        memcpy(full + len, rc->retry + keep, c.len - keep);
        free(rc->retry);
        rc->retry = full;
        rc->retry_len = len + c.len - keep;
    }
    free(h);
}

static slc_backend_t *
slc_rwsplit_ps_execute(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const slc_cmd_t *c,
    slc_rwsplit_stmt_t *st, int last)
{
    size_t         fpos = slc_mysql_exec_flag_pos(st->params);
    int            bound = 0, simple;
    slc_backend_t *b = s->backend;
    slc_cmd_t      text;

    if (c->avail < SLC_MYSQL_EXEC_HEAD || (fpos > 0 && c->avail <= fpos)) {
        return s->backend;
    }
    if (fpos > 0 && c->payload[fpos] == 1) {
        bound = 1;
        slc_rwsplit_ps_bound(st, c->payload + fpos + 1, c->avail - fpos - 1);
    }
    if (st->stub) {
        b = s->backend;
    } else if (st->primary_only) {
        slc_rwsplit_ps_state(s, rc, st);
    } else {
        /* routed as its text would be, with the side effects (a write
           marks the session); its retry, of the text, is not the
           EXECUTE's (kept below) */
        text = (slc_cmd_t) { .command = SLC_COM_QUERY, .len = st->len,
                             .payload = st->prepare, .avail = st->len };
        b = slc_rwsplit_query(s, rc, &text);
        rc->retry_on = NULL;
        if (b == NULL) {
            return NULL;            /* answered (a write in a read-only
                                       transaction) */
        }
    }
    simple = !last && !st->long_data && c->payload[5] == 0;  /* no cursor */
    st->long_data = 0;
    if (b != NULL && b != s->backend && simple) {
        b = slc_rwsplit_ps_to_replica(s, rc, st, c, b, fpos, bound);
        if (b != s->backend && !st->ro_begin
            && !slc_mysql_track_in_trans(&b->track))
        {
            /* an autocommit read: it runs on the primary if the replica
               fails it (the client's id is the primary's) */
            slc_rwsplit_keep(rc, b, c, 1);
            rc->retry_st = st;
        }
    } else {
        b = s->backend;
    }
    if (b == s->backend) {
        slc_rwsplit_ps_primary_types(s, st, c, fpos, bound);
    }
    return b;
}


/* --- a reload's handover ------------------------------------------------- */

/*
 * What the next worker must know of the statements, which otherwise are
 * simply the primary's there: the types of those whose types only a
 * replica got (an EXECUTE that later lacks them goes to the primary with
 * them put in).  Records of id (4), params (2), types (2 * params).
 * (size_t) -1 when they do not fit.
 */
size_t
slc_rwsplit_ps_save(slc_rwsplit_ctx_t *rc, uint8_t *buf, size_t cap)
{
    slc_rwsplit_stmt_t *st;
    size_t          off = 0, n;

    RB_FOREACH(st, slc_rwsplit_stmts, &rc->stmts) {
        if (st->primary_types || st->types == NULL || st->params == 0) {
            continue;
        }
        n = 6 + 2 * (size_t) st->params;
        if (off + n > cap) {
            return (size_t) -1;
        }
        slc_mysql_le_put(buf + off, st->id, 4);
        slc_mysql_le_put(buf + off + 4, st->params, 2);
        memcpy(buf + off + 6, st->types, n - 6);
        off += n;
    }
    return off;
}

int
slc_rwsplit_ps_restore(slc_rwsplit_ctx_t *rc, const uint8_t *p, size_t len)
{
    slc_rwsplit_stmt_t *st;
    size_t          off = 0, n;

    while (off + 6 <= len) {
        uint32_t id = (uint32_t) slc_mysql_le_get(p + off, 4);
        uint16_t params = (uint16_t) slc_mysql_le_get(p + off + 4, 2);

        n = 6 + 2 * (size_t) params;
        if (params == 0 || off + n > len || slc_rwsplit_ps_find(rc, id) != NULL
            || (st = calloc(1, sizeof(*st))) == NULL)
        {
            return SLC_ERROR;
        }
        if ((st->types = malloc(n - 6)) == NULL) {
            free(st);
            return SLC_ERROR;
        }
        memcpy(st->types, p + off + 6, n - 6);
        st->id = id;
        st->params = params;
        st->stub = 1;
        st->primary_only = 1;
        RB_INSERT(slc_rwsplit_stmts, &rc->stmts, st);
        rc->nstmts++;
        off += n;
    }
    return off == len ? SLC_OK : SLC_ERROR;
}


/* --- the other COM_STMT_* ------------------------------------------------ */

/* CLOSE or RESET: to every replica that has the statement, the client's
   command to the primary. */
static void
slc_rwsplit_ps_tell_all(slc_rwsplit_stmt_t *st, uint8_t com)
{
    for (unsigned i = 0; i < SLC_RWSPLIT_MAX_REPLICAS; i++) {
        if (st->on[i].b != NULL && st->on[i].state == SLC_RWSPLIT_REP_READY) {
            slc_rwsplit_ps_tell(st->on[i].b, com, st->on[i].rid);
        }
    }
}

slc_backend_t *
slc_rwsplit_ps_command(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const slc_cmd_t *c)
{
    slc_rwsplit_stmt_t *st;
    uint32_t        id;

    if (c->command == SLC_COM_STMT_PREPARE) {
        return slc_rwsplit_ps_prepare(s, rc, c);
    }
    if (c->avail < 5) {
        return s->backend;
    }
    id = (uint32_t) slc_mysql_le_get(c->payload + 1, 4);
    st = slc_rwsplit_ps_find(rc, id == SLC_MYSQL_STMT_LAST_ID ? rc->ps_last
                                                          : id);
    if (st == NULL) {
        return s->backend;          /* the primary's own */
    }
    switch (c->command) {
    case SLC_COM_STMT_EXECUTE:
        return slc_rwsplit_ps_execute(s, rc, c, st,
            id == SLC_MYSQL_STMT_LAST_ID);
    case SLC_COM_STMT_SEND_LONG_DATA:
        st->long_data = 1;          /* the EXECUTE follows it there */
        break;
    case SLC_COM_STMT_RESET:
        st->long_data = 0;
        slc_rwsplit_ps_tell_all(st, SLC_COM_STMT_RESET);
        break;
    case SLC_COM_STMT_CLOSE:
        slc_rwsplit_ps_tell_all(st, SLC_COM_STMT_CLOSE);
        slc_rwsplit_ps_free(rc, st, 1);
        break;
    }
    return s->backend;
}
