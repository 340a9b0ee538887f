/*
 * What a statement writes, and when the cache forgets it
 * (docs/architecture.md, "The query cache", *Invalidation*): a write's
 * tables (by hash), what their triggers write (the schema catalog), or
 * everything; gathered per command (slc_cache_ctx_t.inv) and per open
 * transaction (trx), and bumped in every zone of the configuration once
 * the server accepted the write outside a transaction, before the client
 * sees its answer (slc_cache_inv_settle), early between the statements
 * of a multi-statement, or at once when the answer never came.
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_mysql_proto.h"
#include "slc_mysql_session.h"
#include "slc_cache_session.h"


/* --- what a statement writes -------------------------------------------- */

/* One more table to invalidate; everything when the set is full. */
static void
slc_cache_inv_add(slc_cache_inv_set_t *out, uint32_t hash)
{
    unsigned i;

    for (i = 0; i < out->n && out->hash[i] != hash; i++) {
        /* seen? */
    }
    if (i < out->n || out->all) {
        return;
    }
    if (out->n == SLC_SQL_MAX_TABLES) {
        out->all = 1;
    } else {
        out->hash[out->n++] = hash;
    }
}

void
slc_cache_inv_merge(slc_cache_inv_set_t *to, const slc_cache_inv_set_t *from)
{
    if (from->all) {
        to->all = 1;
        return;
    }
    for (unsigned i = 0; i < from->n && !to->all; i++) {
        slc_cache_inv_add(to, from->hash[i]);
    }
}

static void slc_cache_inv_acked(void *arg, int ok);

/* Strict mode: the tier's bump, which the response waits for. */
static int
slc_cache_inv_strict(slc_cache_ctx_t *cc, const slc_cache_inv_set_t *set)
{
    const slc_cache_conf_t *conf = cc->conf;

    cc->rbump = conf->remote->invalidate(conf->remote_tier, set->hash,
        set->n, set->all, &cc->cnt->remote, slc_cache_inv_acked, cc);
    return cc->rbump != NULL;
}

/*
 * The bump a strict write's response waits for is done: the next one if
 * a later statement of the response wrote more, else the response goes
 * on.  A bump that failed lets it go all the same (the write committed),
 * counted: the guarantee then rests on the binlog reader, which bumps
 * again or marks the tables (docs/architecture.md, the Redis tier).
 */
static void
slc_cache_inv_acked(void *arg, int ok)
{
    slc_cache_ctx_t     *cc = arg;
    slc_cache_inv_set_t  next = cc->rnext;

    cc->rbump = NULL;
    if (!ok) {
        slc_cache_bump(cc->cnt->remote.strict_failed);
    }
    memset(&cc->rnext, 0, sizeof(cc->rnext));
    if ((next.all || next.n > 0) && slc_cache_inv_strict(cc, &next)) {
        return;
    }
    slc_filter_ungate(cc->s);
}

/* The remote tier's generations move too: waited for in strict mode
   while a response is on its way (the gate holds it), else not. */
static void
slc_cache_inv_remote(slc_cache_ctx_t *cc, const slc_cache_inv_set_t *set)
{
    const slc_cache_conf_t *conf = cc->conf;

    if (!conf->remote_strict || !cc->in_packet) {
        conf->remote->invalidate(conf->remote_tier, set->hash, set->n,
            set->all, &cc->cnt->remote, NULL, NULL);
    } else if (cc->rbump != NULL) {
        slc_cache_inv_merge(&cc->rnext, set);   /* after the one out */
    } else if (slc_cache_inv_strict(cc, set)) {
        slc_filter_gate(cc->s);
        slc_cache_bump(cc->cnt->remote.strict_held);
    } else {
        slc_cache_bump(cc->cnt->remote.strict_failed);
    }
}

void
slc_cache_inv_apply(slc_cache_ctx_t *cc, slc_cache_inv_set_t *set)
{
    if (set->all || set->n > 0) {
        slc_cache_zones_invalidate(cc->s->cycle, set->hash, set->n,
            set->all, slc_loop->now);
        if (cc->conf->remote != NULL) {
            /* Redis' generations too, and the zones again once Redis has
               them (slc_cache_redis_tier.c) */
            slc_cache_inv_remote(cc, set);
        }
        memset(set, 0, sizeof(*set));
    }
}

/*
 * Whether a rule that matches the statement says its stored functions are
 * pure (cache_stored_functions): then calling them writes nothing.  The
 * rule's counters are the SELECT path's to bump.
 */
static int
slc_cache_inv_fn_pure(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_sql_info_t *si)
{
    slc_sql_keys_t       *keys = slc_cache_session_keys();
    const slc_sql_rule_t   *r;
    int                     i;

    if (cc->s->srv->rules == NULL) {
        return 0;
    }
    if (slc_sql_table_keys(q, si, cc->db, strlen(cc->db), keys) != SLC_OK) {
        keys->n = 0;
    }
    i = slc_cache_session_rule(cc, q, n, keys);
    r = i >= 0 ? slc_rules_get(cc->s, i) : NULL;
    return r != NULL && r->cache.stored_functions && !r->cache.no_cache;
}

/*
 * A write's tables and what their triggers write through the tables they
 * write (a view written through: its base tables too), as the catalog
 * says; everything when it cannot say (not loaded, DDL seen since).
 */
static void
slc_cache_inv_tables(slc_catalog_t *catalog, const slc_sql_keys_t *keys,
    slc_cache_inv_set_t *out)
{
    slc_catalog_names_t *w = slc_cache_session_names();

    for (unsigned i = 0; i < keys->n; i++) {
        slc_cache_inv_add(out, slc_cache_table_hash(keys->key[i].data,
                                                    keys->key[i].len));
        if (catalog != NULL
            && slc_catalog_writes(catalog, keys->key[i].data,
                                  keys->key[i].len, w) != SLC_OK)
        {
            out->all = 1;
            return;
        }
    }
    out->all |= w->all;
    for (unsigned i = 0; i < w->n && !out->all; i++) {
        slc_cache_inv_add(out, slc_cache_table_hash(w->name[i].data,
                                                    w->name[i].len));
    }
}

/*
 * CREATE ... SELECT f(): the classifier looks for no call in DDL (its
 * definitions hold names and parentheses), so the SELECT part of a DDL
 * statement is scanned here: a stored function there may write anything.
 */
static int
slc_cache_inv_ddl_calls(const uint8_t *q, size_t n)
{
    slc_sql_tail_t t;

    for (size_t i = 0; i + 6 <= n; i++) {
        if (strncasecmp((const char *) q + i, "SELECT", 6) == 0) {
            slc_sql_tail_init(&t, 0);
            slc_sql_tail_feed(&t, q + i, n - i);
            return (slc_sql_tail_flags(&t) & SLC_SQL_F_STORED_FUNC) != 0;
        }
    }
    return 0;
}

void
slc_cache_inv_text(slc_catalog_t *catalog, const uint8_t *q, size_t n,
    const slc_sql_info_t *si, const char *db, slc_cache_inv_set_t *out)
{
    slc_sql_keys_t *keys = slc_cache_session_keys();

    memset(out, 0, sizeof(*out));
    switch (slc_cache_invalidates(si)) {
    case SLC_CACHE_INV_NONE:
        return;
    case SLC_CACHE_INV_TABLES:
        if ((si->kind != SLC_SQL_DDL || !slc_cache_inv_ddl_calls(q, n))
            && slc_sql_table_keys(q, si, db, strlen(db), keys) == SLC_OK)
        {
            slc_cache_inv_tables(catalog, keys, out);
            return;
        }
        /* fall through */
    default:
        out->all = 1;
    }
}

void
slc_cache_inv_of(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_sql_info_t *si, const char *db, slc_cache_inv_set_t *out)
{
    slc_sql_info_t pure;

    if ((si->flags & SLC_SQL_F_STORED_FUNC)
        && slc_cache_inv_fn_pure(cc, q, n, si))
    {
        pure = *si;
        pure.flags &= ~SLC_SQL_F_STORED_FUNC;
        si = &pure;
    }
    slc_cache_inv_text(cc->catalog, q, n, si, db, out);
}

void
slc_cache_inv_view_calls(slc_cache_ctx_t *cc, const uint8_t *q,
    const slc_sql_info_t *si, const char *db, slc_cache_inv_set_t *out)
{
    slc_sql_keys_t    *keys = slc_cache_session_keys();
    slc_catalog_names_t *r = slc_cache_session_names();

    if (cc->catalog == NULL || si->ntables == 0
        || slc_sql_table_keys(q, si, db, strlen(db), keys) != SLC_OK)
    {
        return;
    }
    for (unsigned i = 0; i < keys->n; i++) {
        if (slc_catalog_reads(cc->catalog, keys->key[i].data,
                              keys->key[i].len, r) == SLC_CATALOG_UNKNOWN)
        {
            return;     /* cannot say: as the statement's own text says */
        }
    }
    if (r->flags & SLC_SQL_F_STORED_FUNC) {
        out->all = 1;
    }
}

int
slc_cache_inv_ddl_may(const uint8_t *q, size_t n, const slc_sql_info_t *si)
{
    switch (si->kind) {
    case SLC_SQL_DDL:
        return !(si->flags & SLC_SQL_F_TEMPORARY) && slc_cache_ddl_may(q, n);
    case SLC_SQL_UNKNOWN: case SLC_SQL_CALL: case SLC_SQL_EXECUTE:
    case SLC_SQL_COMPOUND:
        return 1;
    default:        /* SET GLOBAL: the server's sql_mode, isolation */
        return (si->flags & (SLC_SQL_F_DDL | SLC_SQL_F_GLOBAL)) != 0;
    }
}

void
slc_cache_inv_ddl(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_sql_info_t *si)
{
    if (cc->catalog != NULL && slc_cache_inv_ddl_may(q, n, si)) {
        slc_catalog_ddl_seen(cc->catalog);
        cc->ddl = 1;                    /* and again once it is done */
    }
}


/* --- when --------------------------------------------------------------- */

/*
 * The response's last packet is about to go to the client: what the
 * command wrote must be invalidated before the client can see that it
 * was done (a read it sends on seeing the OK, through another worker,
 * must not find the old entry).  A statement that failed changed nothing,
 * unless several ran (an earlier one may have written); a transaction's
 * writes wait for its end.  done() finds nothing more to do.
 */
void
slc_cache_inv_settle(slc_cache_ctx_t *cc, const slc_mysql_reply_t *r)
{
    if (cc->ddl) {
        /* a load that began before the DDL was done may have missed it:
           the catalog is stale until one that begins after */
        slc_catalog_ddl_seen(cc->catalog);
    }
    if (r->first != SLC_MYSQL_ERR || cc->inv.all) {
        slc_cache_inv_merge(&cc->trx, &cc->inv);
    }
    memset(&cc->inv, 0, sizeof(cc->inv));
    if (!(slc_cmd_status(cc->s) & SLC_SERVER_STATUS_IN_TRANS)) {
        slc_cache_inv_apply(cc, &cc->trx);
    }
}

/*
 * In a multi-statement, an OK or EOF may end one statement of several,
 * whose write the client sees done before the response ends: invalidate
 * everything it may have written already (early is safe: an entry stored
 * meanwhile is invalidated again at the end), and keep the sets.
 */
void
slc_cache_inv_early(slc_cache_ctx_t *cc)
{
    slc_cache_inv_set_t now = cc->trx;

    slc_cache_inv_merge(&now, &cc->inv);
    slc_cache_inv_apply(cc, &now);
}

/*
 * A command whose response never ended (its backend failed, the client
 * left): a write in it may have committed all the same, and so may the
 * open transaction (a COMMIT cut short).  Invalidate both now rather than
 * never, and keep them for the transaction's end too.
 * (A server that commits later than this is covered by the ttl.)
 */
void
slc_cache_inv_unanswered(slc_cache_ctx_t *cc)
{
    slc_cache_inv_set_t now;

    if (!cc->inflight) {
        return;
    }
    cc->inflight = 0;
    if (cc->ddl) {
        slc_catalog_ddl_seen(cc->catalog);  /* it may be done by now */
    }
    slc_cache_inv_merge(&cc->trx, &cc->inv);
    if (cc->trx.all || cc->trx.n > 0) {
        now = cc->trx;
        slc_cache_inv_apply(cc, &now);
    }
}
