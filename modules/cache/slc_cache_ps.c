/*
 * The cache filter's prepared statements (docs/architecture.md, "The query
 * cache"): the records of the session's statements that write or set (an
 * EXECUTE invalidates what the statement's text would, or makes the
 * session's variables unknown), and of its SELECTs, whose binary-protocol
 * EXECUTE the cache answers or keeps like a text SELECT.
 *
 * A SELECT is recorded once the server's PREPARE_OK gives its id: its
 * text, its number of parameters, the default database and how many bytes
 * of the session's SETs it was prepared under (its tables and the SETs
 * that shaped its parse, such as sql_mode, belong to that moment).  Its
 * EXECUTE is looked up, under the same verdict, rules and session
 * conditions as the text, when it opens no cursor (flags 0: a cursor's
 * rows come through COM_STMT_FETCH), runs once (iteration count 1), no
 * long data was sent for it since its last EXECUTE or RESET, and its
 * parameters' types are known.  The key (slc_cache_read_key) adds the types,
 * the NULL bitmap and the values to the statement.
 *
 * Types: an EXECUTE with new-params-bound-flag 0 uses the types the
 * server got last for the statement.  The record keeps the types of the
 * last EXECUTE that reached the server (one answered from the cache never
 * does), so an EXECUTE that binds types the server lacks (the first after
 * the PREPARE, or other types) is not answered from the cache: it goes to
 * the server, which learns them, and its response is kept.  An EXECUTE
 * that bound types and failed leaves them unknown, and COM_STMT_BULK_EXECUTE
 * too: until the next EXECUTE that binds types, none is cached.
 *
 * CACHE_METADATA (MariaDB): the server leaves an EXECUTE's column
 * definitions out when the client holds them already.  The record keeps
 * a hash of those the client holds (from the PREPARE_OK, then from each
 * EXECUTE response that carries them), which the key includes; a
 * response that changes them is not kept, so a hit never changes them
 * and the client keeps holding what the server thinks it holds.
 *
 * MariaDB's id -1 names the statement prepared last (ps_last).
 *
 * Memory: at most SLC_CACHE_PS_MAX records a session; a write's record
 * takes the place of a SELECT's when full (a SELECT not followed is only
 * never cached; a write not followed makes every unknown EXECUTE
 * invalidate everything).
 */

#include "slc_core.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_proto.h"
#include "slc_mysql_session.h"
#include "slc_cache_session.h"

#define SLC_CACHE_FNV_BASIS  0xcbf29ce484222325ull

#define slc_cache_ps_cm(cc)                                                  \
    ((cc)->s->mariadb_caps & SLC_MARIADB_CLIENT_CACHE_METADATA)

void
slc_cache_ps_free(slc_cache_ps_t *p)
{
    free(p->text);
    free(p->si);
    free(p->db);
    free(p->types);
    p->text = NULL;
    p->si = NULL;
    p->db = NULL;
    p->types = NULL;
}

void
slc_cache_ps_forget(slc_cache_ctx_t *cc)
{
    for (unsigned i = 0; i < cc->nps; i++) {
        slc_cache_ps_free(&cc->ps[i]);
    }
    free(cc->ps);
    cc->ps = NULL;
    cc->nps = 0;
    cc->ps_last = 0;                    /* no statement has id 0 */
}

int
slc_cache_ps_writes(const slc_cache_ctx_t *cc)
{
    for (unsigned i = 0; i < cc->nps; i++) {
        if (!cc->ps[i].read) {
            return 1;
        }
    }
    return 0;
}

static slc_cache_ps_t *
slc_cache_ps_find(slc_cache_ctx_t *cc, uint32_t id)
{
    for (unsigned i = 0; i < cc->nps; i++) {
        if (cc->ps[i].id == id) {
            return &cc->ps[i];
        }
    }
    return NULL;
}

/* A SELECT's record whose place a write may take, or NULL. */
static slc_cache_ps_t *
slc_cache_ps_victim(slc_cache_ctx_t *cc)
{
    for (unsigned i = 0; i < cc->nps; i++) {
        if (cc->ps[i].read) {
            return &cc->ps[i];
        }
    }
    return NULL;
}

/* The record *p joins the list, which owns what it holds from now on. */
static void
slc_cache_ps_add(slc_cache_ctx_t *cc, slc_cache_ps_t *p)
{
    slc_cache_ps_t *n;

    if (cc->nps == SLC_CACHE_PS_MAX) {
        n = p->read ? NULL : slc_cache_ps_victim(cc);
        if (n == NULL) {
            /* a SELECT is then never cached; a write's EXECUTE we
               cannot place invalidates everything */
            cc->ps_unknown = cc->ps_unknown || !p->read;
            slc_cache_ps_free(p);
            return;
        }
        slc_cache_ps_free(n);
        *n = *p;
    } else if ((n = realloc(cc->ps, (cc->nps + 1) * sizeof(*n))) == NULL) {
        cc->ps_unknown = cc->ps_unknown || !p->read;
        slc_cache_ps_free(p);
        return;
    } else {
        cc->ps = n;
        cc->ps[cc->nps++] = *p;
    }
    memset(p, 0, sizeof(*p));
}

/* What a SELECT's record keeps: SLC_ERROR without memory. */
static int
slc_cache_ps_keep(slc_cache_ctx_t *cc, slc_cache_ps_t *p, const uint8_t *q,
    size_t n, const slc_sql_info_t *si)
{
    size_t dl = strlen(cc->db) + 1;

    if (n > UINT32_MAX || (p->text = malloc(n)) == NULL
        || (p->si = malloc(sizeof(*si))) == NULL
        || (p->db = malloc(dl)) == NULL)
    {
        slc_cache_ps_free(p);
        return SLC_ERROR;
    }
    memcpy(p->db, cc->db, dl);
    memcpy(p->text, q, n);
    *p->si = *si;                       /* its names point into text */
    p->len = (uint32_t) n;
    p->state_hash = cc->vars.hash;
    return SLC_OK;
}

void
slc_cache_ps_prepare(slc_cache_ctx_t *cc, const slc_cmd_t *c)
{
    const uint8_t  *q = c->payload + 1;
    size_t          n = c->len - 1;
    const slc_sql_info_t *si;

    slc_cache_ps_free(&cc->prep);
    memset(&cc->prep, 0, sizeof(cc->prep));
    cc->then_prepare = 1;               /* its id: the last prepared */
    if (c->avail < c->len) {
        cc->ps_unknown = 1;
        return;
    }
    si = slc_cache_session_classify(cc, c);
    slc_cache_inv_of(cc, q, n, si, cc->db, &cc->prep.inv);
    cc->prep.state = si->kind == SLC_SQL_SET || si->kind == SLC_SQL_CALL
                     || si->kind == SLC_SQL_UNKNOWN || si->kind == SLC_SQL_USE;
    cc->prep.temp = (si->flags & SLC_SQL_F_TEMPORARY) != 0;
    cc->prep.ddl = (si->kind == SLC_SQL_DDL && !cc->prep.temp
                    && slc_cache_ddl_may(q, n))
                   || si->kind == SLC_SQL_CALL || si->kind == SLC_SQL_UNKNOWN
                   || si->kind == SLC_SQL_COMPOUND;
    cc->prep.read = si->kind == SLC_SQL_SELECT
                    && !(si->flags & SLC_SQL_F_MULTI) && !cc->prep.state
                    && !cc->prep.inv.all && cc->prep.inv.n == 0
                    && slc_cache_ps_keep(cc, &cc->prep, q, n, si) == SLC_OK;
    if (!cc->prep.read && !cc->prep.inv.all && cc->prep.inv.n > 0
        && slc_cache_ps_keep(cc, &cc->prep, q, n, si) != SLC_OK)
    {
        cc->prep.inv.all = 1;   /* its tables' triggers: not at EXECUTE */
    }
    if (cc->prep.read && slc_cache_ps_cm(cc)) {
        cc->mw = (slc_cache_meta_watch_t) { .on = 1, .prepare = 1 };
    }
}

void
slc_cache_ps_prepared(slc_cache_ctx_t *cc, const slc_mysql_reply_t *r)
{
    slc_cache_ps_t *old = slc_cache_ps_find(cc, r->stmt_id);

    cc->ps_last = r->stmt_id;
    if (old != NULL) {
        /* the server numbers them upwards: a record of before a
           handover's unknown gap never names this statement */
        slc_cache_ps_free(old);
        *old = cc->ps[--cc->nps];
    }
    cc->prep.id = r->stmt_id;
    cc->prep.params = r->params;
    if (cc->prep.read || cc->prep.state || cc->prep.temp || cc->prep.ddl
        || cc->prep.inv.all || cc->prep.inv.n > 0)
    {
        slc_cache_ps_add(cc, &cc->prep);
    }
}

/* The statement an id names: MariaDB's -1 is the last prepared. */
static slc_cache_ps_t *
slc_cache_ps_of(slc_cache_ctx_t *cc, const slc_cmd_t *c)
{
    uint32_t id;

    if (c->avail < 5) {
        return NULL;
    }
    id = (uint32_t) slc_mysql_le_get(c->payload + 1, 4);
    return slc_cache_ps_find(cc, id == SLC_MYSQL_STMT_LAST_ID ? cc->ps_last
                                                              : id);
}

void
slc_cache_ps_unbind(slc_cache_ctx_t *cc, uint32_t id)
{
    slc_cache_ps_t *p = slc_cache_ps_find(cc, id);

    if (p != NULL) {
        free(p->types);
        p->types = NULL;
    }
}

/*
 * The types an EXECUTE of p (its new-params-bound-flag at fpos) binds its
 * values with: those it sends, which the record keeps as the server's
 * from now on, or those the server has.  NULL when not known.  *fresh:
 * it sends types the server does not have yet.
 */
static const uint8_t *
slc_cache_ps_bind(slc_cache_ctx_t *cc, slc_cache_ps_t *p, const slc_cmd_t *c,
    size_t fpos, int *fresh)
{
    size_t         n = 2 * (size_t) p->params;
    const uint8_t *t;

    *fresh = 0;
    if (fpos == 0) {
        return c->payload;              /* no parameters: no types */
    }
    if (c->avail > fpos && c->payload[fpos] == 0) {
        return p->types;
    }
    if (c->avail < fpos + 1 + n) {
        slc_cache_ps_unbind(cc, p->id);     /* new ones, not at hand */
        return NULL;
    }
    t = c->payload + fpos + 1;
    cc->then_unbind = 1;
    cc->bind_id = p->id;
    if (p->types != NULL && memcmp(p->types, t, n) == 0) {
        return p->types;
    }
    *fresh = 1;
    if (p->types == NULL) {
        p->types = malloc(n);
    }
    if (p->types != NULL) {
        memcpy(p->types, t, n);
    }
    return t;
}

/* An EXECUTE of the SELECT p: answered or kept when it may be. */
static int
slc_cache_ps_read(slc_cache_ctx_t *cc, slc_cache_ps_t *p, const slc_cmd_t *c)
{
    const uint8_t    *pl = c->payload;
    size_t            fpos = slc_mysql_exec_flag_pos(p->params), vpos;
    int               long_data = p->long_data, fresh;
    slc_cache_exec_t  x = { .ps = p };

    p->long_data = 0;                   /* this EXECUTE uses it up */
    x.types = slc_cache_ps_bind(cc, p, c, fpos, &fresh);
    if (x.types == NULL || long_data || c->avail < c->len
        || (slc_cache_ps_cm(cc) && !p->meta_known)
        || c->len < SLC_MYSQL_EXEC_HEAD || (fpos > 0 && c->len <= fpos)
        || pl[5] != 0 || slc_mysql_le_get(pl + 6, 4) != 1)
    {
        return SLC_FILTER_PASS;         /* a cursor, a batch, unknown */
    }
    vpos = fpos == 0 ? SLC_MYSQL_EXEC_HEAD
                     : fpos + 1 + (pl[fpos] != 0 ? 2 * (size_t) p->params
                                                 : 0);
    x.nulls = pl + SLC_MYSQL_EXEC_HEAD;
    x.nulls_len = fpos == 0 ? 0 : fpos - SLC_MYSQL_EXEC_HEAD;
    x.values = pl + vpos;
    x.values_len = c->len - vpos;
    x.no_serve = fresh;
    return slc_cache_read(cc, p->text, p->len, p->si, &x);
}

int
slc_cache_ps_execute(slc_cache_ctx_t *cc, const slc_cmd_t *c)
{
    slc_cache_ps_t *p = slc_cache_ps_of(cc, c);
    int             v;

    if (p == NULL) {
        if (cc->ps_unknown) {
            cc->inv.all = 1;
            cc->then_unknown = 1;
        }
        return SLC_FILTER_PASS;
    }
    if (p->read && slc_cache_read_replay(cc, p->si->flags)) {
        return SLC_FILTER_PASS;
    }
    if (!p->read && p->si != NULL) {
        /* a write's tables now: the triggers they have may be new */
        slc_cache_inv_of(cc, p->text, p->len, p->si, p->db, &cc->inv);
    } else {
        cc->inv = p->inv;
    }
    if (p->ddl && cc->catalog != NULL) {
        slc_catalog_ddl_seen(cc->catalog);
        cc->ddl = 1;
    }
    cc->then_unknown = p->state;
    cc->then_temp = p->temp || p->state;    /* a CALL may create one */
    if (!p->read) {
        return SLC_FILTER_PASS;
    }
    cc->clears = p->si->ntables > 0;    /* a SELECT naming a table */
    if (c->command != SLC_COM_STMT_EXECUTE) {
        p->long_data = 0;               /* a batch: it sends its own */
        slc_cache_ps_unbind(cc, p->id); /* types, which then stay */
        p->meta_known = 0;
        return SLC_FILTER_PASS;
    }
    if (slc_cache_ps_cm(cc)) {
        cc->mw = (slc_cache_meta_watch_t) { .on = 1, .id = p->id };
    }
    v = slc_cache_ps_read(cc, p, c);
    if (v == SLC_FILTER_PASS && cc->op != SLC_CACHE_OP_STORE) {
        slc_cache_inv_view_calls(cc, p->text, p->si, p->db, &cc->inv);
    }
    return v;
}

void
slc_cache_ps_command(slc_cache_ctx_t *cc, const slc_cmd_t *c)
{
    slc_cache_ps_t *p;

    if ((p = slc_cache_ps_of(cc, c)) == NULL) {
        return;
    }
    switch (c->command) {
    case SLC_COM_STMT_CLOSE:
        slc_cache_ps_free(p);
        *p = cc->ps[--cc->nps];
        break;
    case SLC_COM_STMT_RESET:
        p->long_data = 0;
        break;
    case SLC_COM_STMT_SEND_LONG_DATA:
        p->long_data = 1;
        break;
    default:
        break;
    }
}


/* --- CACHE_METADATA: the definitions the client holds ------------------- */

/* FNV-1a, 64 bits, of n more bytes after h: the definitions come in
   pieces (the key's hash, slc_cache_key_hash, takes a whole buffer). */
static uint64_t
slc_cache_ps_fnv(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h = (h ^ p[i]) * 0x100000001b3ull;
    }
    return h;
}

/*
 * The first packet of the response says which packets are column
 * definitions: a PREPARE_OK's parameter and column counts (each list then
 * ends with an EOF without DEPRECATE_EOF), an EXECUTE's "metadata follows"
 * (0: the client keeps what it has).  Anything else changes nothing.
 */
static void
slc_cache_ps_watch_first(slc_cache_ctx_t *cc, const slc_cmd_packet_t *p)
{
    slc_cache_meta_watch_t *w = &cc->mw;
    int                     eof = !(cc->s->caps & SLC_CLIENT_DEPRECATE_EOF);
    uint64_t                params;
    size_t                  n;

    if (w->prepare) {
        if (p->len < 9 || p->data[0] != SLC_MYSQL_OK) {
            w->on = 0;
            return;
        }
        params = slc_mysql_le_get(p->data + 7, 2);
        w->n = slc_mysql_le_get(p->data + 5, 2);
        w->from = 1 + params + (params > 0 && eof);
    } else {
        if (p->len == 0 || p->data[0] == SLC_MYSQL_OK
            || p->data[0] == SLC_MYSQL_ERR || p->data[0] == 0xfb
            || (n = slc_mysql_lenenc_int_get(p->data, p->len, &w->n)) == 0
            || n >= p->len || p->data[n] != 1)
        {
            w->on = 0;
            return;
        }
        w->from = 1;
    }
    w->hash = SLC_CACHE_FNV_BASIS;
    w->complete = w->n == 0;
}

void
slc_cache_ps_packet(slc_cache_ctx_t *cc, const slc_cmd_packet_t *p)
{
    slc_cache_meta_watch_t *w = &cc->mw;
    uint8_t                 len[4];

    if (p->first) {
        uint64_t k = w->k++;

        if (k == 0) {
            slc_cache_ps_watch_first(cc, p);
            return;
        }
        w->in = k >= w->from && k < w->from + w->n;
        if (w->in) {
            slc_mysql_le_put(len, p->plen, sizeof(len));
            w->hash = slc_cache_ps_fnv(w->hash, len, sizeof(len));
        }
    }
    if (w->in) {
        w->hash = slc_cache_ps_fnv(w->hash, p->data, p->len);
        if (p->last && w->k == w->from + w->n) {
            w->complete = 1;
        }
    }
}

int
slc_cache_ps_watched(slc_cache_ctx_t *cc)
{
    slc_cache_meta_watch_t *w = &cc->mw;
    slc_cache_ps_t         *p;
    int                     same;

    w->on = 0;
    if (w->k == 0) {
        return 1;                       /* no response went by */
    }
    if (w->prepare) {
        cc->prep.meta = w->hash;
        cc->prep.meta_known = w->complete;
        return 1;
    }
    if ((p = slc_cache_ps_find(cc, w->id)) == NULL) {
        return 0;
    }
    same = p->meta_known && w->complete && p->meta == w->hash;
    p->meta = w->hash;
    p->meta_known = w->complete;
    return same;
}
