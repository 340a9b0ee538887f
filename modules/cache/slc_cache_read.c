/*
 * A statement that may read (docs/architecture.md, "The query cache"):
 * the verdict and the rule, then the key, a lookup, and a hit answered
 * from the zone (slc_cache_hit.c), a wait while another session stores
 * the key (single flight), or the response kept as it streams to the
 * client (its end: slc_cache_filter.c).  A COM_QUERY's text comes from
 * the filter's command hook, a prepared SELECT's from its EXECUTE
 * (slc_cache_ps.c).  And the replay of a hit's statement at the server
 * before one that asks what the last one did.
 *
 * The key is exact: the statement's bytes, the default database, the
 * user (unless cache_users shared), the character set of the login, the
 * session's SETs of system variables (their text, in order), and the
 * client capabilities that change a result's bytes (DEPRECATE_EOF, the
 * session-state OK, MariaDB's extended metadata and CACHE_METADATA); a
 * binary EXECUTE's adds its parameters (slc_cache_read_key).  The whole
 * key is compared on every hit.
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_proto.h"
#include "slc_mysql_session.h"
#include "slc_cache_session.h"
#include "slc_cache_binlog.h"


#define SLC_CACHE_WAIT_STEP  2  /* ms between looks at a pending entry */

/* The capability bits that change the bytes of a result set: the EOF or
   OK that ends it, the OK's layout, MariaDB's extended type information
   in the column definitions and its "metadata follows" byte after the
   column count. */
#define SLC_CACHE_KEY_CAPS                                                   \
    (SLC_CLIENT_DEPRECATE_EOF | SLC_CLIENT_SESSION_TRACK)
#define SLC_CACHE_KEY_MARIADB_CAPS                                           \
    (SLC_MARIADB_CLIENT_EXTENDED_TYPE_INFO | SLC_MARIADB_CLIENT_CACHE_METADATA)

/* The key's format byte: a text and a binary entry never meet. */
#define SLC_CACHE_KEY_TEXT    1
#define SLC_CACHE_KEY_BINARY  2

static void slc_cache_read_wait_timer(slc_timer_t *t);


/* --- the key, keeping the response -------------------------------------- */

static size_t
slc_cache_read_put_str(uint8_t *k, const void *p, size_t n)
{
    k[0] = (uint8_t) (n >> 8);
    k[1] = (uint8_t) n;
    memcpy(k + 2, p, n);
    return n + 2;
}

/*
 * The key of statement q in this session, into a buffer of the worker's
 * (it is copied into the entry, or into the context while waiting).  A
 * binary EXECUTE's (x) has its own format byte and the statement's
 * database, then the hash of the session's SETs when it was prepared
 * (they shaped its parse), the hash of the column definitions its client
 * holds (under CACHE_METADATA), the statement, the parameters' types,
 * NULL bitmap and values.
 */
static const uint8_t *
slc_cache_read_key(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_cache_exec_t *x, size_t *klen)
{
    static uint8_t *buf;
    static size_t   cap;
    slc_session_t  *s = cc->s;
    const char     *db = x != NULL ? x->ps->db : cc->db;
    size_t          need = 9 + 2 + SLC_MAX_USER + 2 + SLC_MAX_DB
                           + 2 + SLC_CACHE_STATE_MAX + n;
    size_t          k = 0;
    uint32_t        caps = s->caps & SLC_CACHE_KEY_CAPS;

    if (x != NULL) {
        need += 20 + 2 * (size_t) x->ps->params + x->nulls_len
                + x->values_len;
    }

    if (need > cap) {
        uint8_t *p = realloc(buf, need);

        if (p == NULL) {
            return NULL;
        }
        buf = p;
        cap = need;
    }
    slc_mysql_le_put(buf, caps, 4);
    slc_mysql_le_put(buf + 4, s->mariadb_caps & SLC_CACHE_KEY_MARIADB_CAPS,
                     2);
    slc_mysql_le_put(buf + 6, s->charset, 2);
    buf[8] = x != NULL ? SLC_CACHE_KEY_BINARY : SLC_CACHE_KEY_TEXT;
    k = 9;
    if (cc->conf->shared) {
        k += slc_cache_read_put_str(buf + k, "", 0);
    } else {
        k += slc_cache_read_put_str(buf + k, s->user, strlen(s->user));
    }
    k += slc_cache_read_put_str(buf + k, db, strlen(db));
    k += slc_cache_read_put_str(buf + k, cc->vars.len > 0 ? cc->vars.buf : "",
                           cc->vars.len);
    if (x == NULL) {
        memcpy(buf + k, q, n);
        *klen = k + n;
        return buf;
    }
    slc_mysql_le_put(buf + k, x->ps->state_hash, 8);
    slc_mysql_le_put(buf + k + 8, x->ps->meta, 8);    /* CACHE_METADATA */
    slc_mysql_le_put(buf + k + 16, n, 4);
    k += 20;
    memcpy(buf + k, q, n);
    k += n;
    memcpy(buf + k, x->types, 2 * (size_t) x->ps->params);
    k += 2 * (size_t) x->ps->params;
    memcpy(buf + k, x->nulls, x->nulls_len);
    k += x->nulls_len;
    memcpy(buf + k, x->values, x->values_len);
    *klen = k + x->values_len;
    return buf;
}

/*
 * The tables an entry of the statement depends on: its own, and for each
 * view among them the base tables it reads (the schema catalog's), into
 * dep[].  SLC_CACHE_CACHEABLE, or why the entry must not be kept: a name
 * the catalog cannot place (SCHEMA_UNKNOWN), a view whose definition is
 * not cacheable (slc_cache_view_verdict).  Only when a store begins: a
 * hit never asks (its entry was placed when stored; DDL on a view or a
 * trigger invalidates the names it changes).
 */
static slc_cache_verdict_t
slc_cache_read_depends(slc_cache_ctx_t *cc, const slc_sql_keys_t *keys,
    slc_str_t *dep, unsigned *ndep)
{
    slc_catalog_names_t *r = slc_cache_session_names();
    slc_cache_verdict_t  v;
    unsigned             n = 0;

    for (unsigned i = 0; i < keys->n; i++) {
        if (cc->catalog != NULL
            && slc_catalog_reads(cc->catalog, keys->key[i].data,
                                 keys->key[i].len, r) == SLC_CATALOG_UNKNOWN)
        {
            return SLC_CACHE_SCHEMA_UNKNOWN;
        }
        dep[n++] = keys->key[i];
    }
    v = slc_cache_view_verdict(r->flags, r->name, r->n);
    for (unsigned i = 0; i < r->n && v == SLC_CACHE_CACHEABLE; i++) {
        unsigned j;

        for (j = 0; j < n && (dep[j].len != r->name[i].len
                              || memcmp(dep[j].data, r->name[i].data,
                                        dep[j].len) != 0); j++)
        {
            /* seen? */
        }
        if (j < n) {
            continue;
        }
        if (n == SLC_CACHE_TABLES) {
            v = SLC_CACHE_SCHEMA_UNKNOWN;   /* more than an entry holds */
            break;
        }
        dep[n++] = r->name[i];
    }
    *ndep = n;
    return v;
}

static int slc_cache_read_remote(slc_cache_ctx_t *cc, const uint8_t *key,
    size_t klen, const slc_str_t *dep, unsigned ndep);

/*
 * Start keeping the response to the command that passes on.  With `ask`,
 * the remote tier is asked first (SLC_FILTER_PAUSE: the session waits
 * for it); else, or when it is not asked, SLC_FILTER_PASS.
 */
static int
slc_cache_read_keep(slc_cache_ctx_t *cc, const uint8_t *key, size_t klen,
    uint64_t hash, const slc_sql_keys_t *keys, long long ttl,
    const slc_cache_exec_t *x, int ask)
{
    slc_cache_refusal_e r;
    long long           soft = cc->conf->soft_ttl;
    slc_str_t           dep[SLC_CACHE_TABLES];
    unsigned            ndep;
    slc_cache_verdict_t v;

    if (keys->n > SLC_CACHE_TABLES) {
        v = SLC_CACHE_TABLES_UNKNOWN;
    } else {
        v = slc_cache_read_depends(cc, keys, dep, &ndep);
    }
    if (v == SLC_CACHE_CACHEABLE && cc->rule >= 0) {
        /* `cache flush rule NAME` reaches it as a table's would */
        if (ndep == SLC_CACHE_TABLES) {
            v = SLC_CACHE_SCHEMA_UNKNOWN;
        } else {
            dep[ndep].data = cc->rule_key;
            dep[ndep++].len = slc_cache_rule_key(cc->rule_key,
                slc_rules_get(cc->s, cc->rule)->name);
        }
    }
    if (v != SLC_CACHE_CACHEABLE) {
        slc_cache_bump(cc->cnt->uncacheable[v]);
        return SLC_FILTER_PASS;
    }
    r = slc_cache_store_begin(cc->cache, &cc->st, key, klen, hash,
        dep, ndep, (uint64_t) ttl,
        soft > 0 && soft < ttl ? (uint64_t) soft : 0, slc_loop->now);
    if (r != SLC_CACHE_OK) {
        /* (the store counted it); strict: Redis is asked all the same,
           its hits are served without the zone */
        return ask && cc->conf->remote_strict
               ? slc_cache_read_remote(cc, key, klen, dep, ndep)
               : SLC_FILTER_PASS;
    }
    cc->op = SLC_CACHE_OP_STORE;
    cc->ttl = ttl;
    cc->sent_after = slc_loop->now;
    cc->npkt = 0;
    cc->ncols = 0;
    cc->ndefs = 0;
    cc->binary = x != NULL;
    cc->stored = 0;
    cc->bad = 0;
    memset(&cc->meta, 0, sizeof(cc->meta));
    return ask && cc->conf->remote != NULL
           ? slc_cache_read_remote(cc, key, klen, dep, ndep)
           : SLC_FILTER_PASS;
}


/* --- answering, waiting ------------------------------------------------- */

/* The payload of the command a hit answers, for a replay (hit_cmd). */
static void
slc_cache_read_hit_note(slc_cache_ctx_t *cc, const uint8_t *p, size_t n)
{
    uint8_t *b = cc->hit_cmd;

    cc->hit_last = cc->hit_select = 0;
    if (n > cc->hit_cap) {
        if (n > UINT32_MAX || (b = realloc(cc->hit_cmd, n)) == NULL) {
            return;                     /* no replay: the server's answer */
        }
        cc->hit_cmd = b;
        cc->hit_cap = (uint32_t) n;
    }
    memcpy(b, p, n);
    cc->hit_len = (uint32_t) n;
    cc->hit_last = cc->hit_select = 1;
}

/*
 * A statement that asks what the statement before it did (SAME_AS_LAST:
 * ROW_COUNT(), SHOW WARNINGS, @@warning_count...) right after a hit, or
 * FOUND_ROWS() with no SELECT at the server since a hit: the server would
 * answer for an older statement, so the hit's statement runs there first
 * (slc_cmd_prelude), unseen, and the client's goes on after.  1 when the
 * replay is queued (the hook returns PASS).
 */
int
slc_cache_read_replay(slc_cache_ctx_t *cc, uint32_t flags)
{
    uint8_t gen[256];
    int     n;

    if ((flags & SLC_SQL_F_SAME_AS_LAST) && cc->hit_before) {
        /* right after the hit: the same statement, same state, same data
           (the entry was not invalidated) */
        n = slc_cmd_prelude(cc->s, cc->hit_cmd, cc->hit_len);
    } else if ((flags & SLC_SQL_F_FOUND_ROWS) && cc->hit_select) {
        /* later, the session or the data may have changed since: a
           SELECT of as many rows as the hit had, which is what
           FOUND_ROWS() tells after a SELECT without SQL_CALC_FOUND_ROWS */
        gen[0] = SLC_COM_QUERY;
        n = snprintf((char *) gen + 1, sizeof(gen) - 1, "WITH RECURSIVE "
            "sluice_r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM sluice_r "
            "WHERE n < 1024) SELECT 1 FROM sluice_r a, sluice_r b LIMIT %u",
            cc->hit_rows);
        n = slc_cmd_prelude(cc->s, gen, (size_t) n + 1);
    } else {
        return 0;
    }
    cc->hit_before = cc->hit_select = 0;
    if (n != SLC_OK) {
        return 0;                       /* no room: as the server says */
    }
    cc->inflight = 0;                   /* this one comes back */
    slc_cache_bump(cc->cnt->replays);
    return 1;
}

static int
slc_cache_read_answer(slc_cache_ctx_t *cc)
{
    if (slc_cache_serve(cc->s, &cc->serve) != SLC_OK) {
        return SLC_FILTER_PASS;         /* no memory: the server answers */
    }
    if (cc->rule >= 0 && cc->conf->rule_slot[cc->rule] < SLC_CACHE_RULES_MAX)
    {
        slc_cache_bump(cc->cnt->rules[cc->conf->rule_slot[cc->rule]].hits);
    }
    cc->op = SLC_CACHE_OP_SERVE;
    cc->hit_rows = cc->serve.meta.rows;
    if (cc->cur != NULL) {
        slc_cache_read_hit_note(cc, cc->cur->payload, cc->cur->len);
    } else {
        slc_cache_read_hit_note(cc, cc->wait_cmd, cc->wait_len);
    }
    return SLC_FILTER_ANSWER;
}

/*
 * Hits wait for the upstream's binlog reader (`binlog_lost bypass`):
 * while it is not live, a write it has not seen may have made any entry
 * stale.  What the server answers meanwhile is still kept: the reader
 * invalidates what it missed before it is live again.
 */
static int
slc_cache_read_gated(slc_cache_ctx_t *cc)
{
    const slc_cache_binlog_t *b = cc->conf->binlog_gate;

    if (b == NULL || slc_cache_binlog_serves(b, slc_loop->now)) {
        return 0;
    }
    slc_cache_bump(cc->cnt->binlog_bypass);
    return 1;
}

/* No binlog reader: other hosts' writes come pushed through Redis, and
   the zone is not trusted while the push is not live (Redis' entries
   are: their generations are Redis' own). */
static int
slc_cache_read_untrusted(slc_cache_ctx_t *cc)
{
    const slc_cache_conf_t *conf = cc->conf;

    if (conf->binlog != NULL || conf->remote == NULL
        || conf->remote->trusted(conf->remote_tier, slc_loop->now))
    {
        return 0;
    }
    slc_cache_bump(cc->cnt->remote.push_bypass);
    return 1;
}

/* Another session is storing this key: look again shortly, up to
   cache_wait_timeout, then go to the server. */
static int
slc_cache_read_wait(slc_cache_ctx_t *cc, const uint8_t *key, size_t klen,
    uint64_t hash)
{
    cc->key = malloc(klen);
    cc->wait_cmd = malloc(cc->cur->len);
    if (cc->key == NULL || cc->wait_cmd == NULL) {
        free(cc->key);
        free(cc->wait_cmd);
        cc->key = NULL;
        cc->wait_cmd = NULL;
        return SLC_FILTER_PASS;
    }
    memcpy(cc->wait_cmd, cc->cur->payload, cc->cur->len);
    cc->wait_len = cc->cur->len;
    memcpy(cc->key, key, klen);
    cc->klen = klen;
    cc->hash = hash;
    cc->wait_until = slc_loop->now + (uint64_t) cc->conf->wait;
    slc_cache_bump(cc->cnt->waits);
    cc->timer.handler = slc_cache_read_wait_timer;
    cc->timer.data = cc;
    slc_timer_add(slc_loop, &cc->timer, SLC_CACHE_WAIT_STEP);
    return SLC_FILTER_PAUSE;
}

static void
slc_cache_read_wait_timer(slc_timer_t *t)
{
    slc_cache_ctx_t *cc = t->data;
    int              verdict = SLC_FILTER_PASS;

    cc->cur = NULL;
    switch (slc_cache_read_gated(cc) || slc_cache_read_untrusted(cc)
            ? SLC_CACHE_MISS
            : slc_cache_lookup(cc->cache, cc->key, cc->klen, cc->hash,
                               slc_loop->now, &cc->serve.hit))
    {
    case SLC_CACHE_HIT:
        verdict = slc_cache_read_answer(cc);
        break;
    case SLC_CACHE_PENDING:
        if (slc_loop->now < cc->wait_until) {
            slc_timer_add(slc_loop, &cc->timer, SLC_CACHE_WAIT_STEP);
            return;
        }
        slc_cache_bump(cc->cnt->wait_timeouts);
        break;
    default:
        break;          /* the store failed or expired: the server, once */
    }
    free(cc->key);
    free(cc->wait_cmd);
    cc->key = NULL;
    cc->wait_cmd = NULL;
    slc_filter_resume(cc->s, verdict);
}


/* --- the remote tier ---------------------------------------------------- */

void
slc_cache_read_remote_end(slc_cache_ctx_t *cc)
{
    if (cc->rreq != NULL) {
        cc->conf->remote->release(cc->rreq);
        cc->rreq = NULL;
    }
}

/*
 * A remote hit: copied into the zone (the store begun before the lookup
 * went out, so that a write seen meanwhile refuses it), and answered.
 * Its expiry is the remote entry's.
 */
static int
slc_cache_read_remote_hit(slc_cache_ctx_t *cc,
    const slc_cache_remote_hit_t *hit)
{
    uint64_t age = slc_loop->now - cc->sent_after;
    int      ok = 1;

    if (cc->conf->remote_strict) {
        /* strict: the zone serves no hit, so it keeps no copy */
        slc_cache_store_abort(&cc->st);
    } else if ((ok = slc_cache_store_append(&cc->st, hit->result, hit->rlen)
                == SLC_CACHE_OK))
    {
        /* (an append refused aborted the store) */
        slc_cache_store_meta(&cc->st, hit->meta, SLC_CACHE_META);
        slc_cache_store_ttl(&cc->st, age + hit->ttl, 0);
        ok = slc_cache_store_commit(&cc->st) == SLC_CACHE_OK;
    }
    cc->op = SLC_CACHE_OP_NONE;         /* (the store ended either way) */
    slc_cache_read_remote_end(cc);
    if (!ok) {
        /* a write seen since the lookup went out (RACED), or no room:
           the server answers, unkept */
        return SLC_FILTER_PASS;
    }
    if (slc_cache_hit_make(&cc->serve.hit, hit->result, hit->rlen,
                           hit->meta) != SLC_OK)
    {
        return SLC_FILTER_PASS;
    }
    slc_cache_bump(cc->cnt->remote.hits);
    return slc_cache_read_answer(cc);
}

static void
slc_cache_read_remote_done(void *arg, const slc_cache_remote_hit_t *hit)
{
    slc_cache_ctx_t *cc = arg;
    int              verdict = SLC_FILTER_PASS;

    cc->cur = NULL;
    if (hit != NULL
        && (cc->op == SLC_CACHE_OP_STORE || cc->conf->remote_strict))
    {
        verdict = slc_cache_read_remote_hit(cc, hit);
    }
    free(cc->wait_cmd);
    cc->wait_cmd = NULL;
    slc_filter_resume(cc->s, verdict);
}

/*
 * A zone miss being kept: the remote tier is asked first, with the
 * tables the entry reads, and the session waits (at most the tier's
 * timeout).  The command's payload is kept for a replay after a hit.
 */
static int
slc_cache_read_remote(slc_cache_ctx_t *cc, const uint8_t *key, size_t klen,
    const slc_str_t *dep, unsigned ndep)
{
    uint32_t               table[SLC_CACHE_TABLES];
    slc_cache_remote_ask_t ask = {
        .key = key, .klen = klen, .table = table, .ntables = ndep,
    };

    for (unsigned i = 0; i < ndep; i++) {
        table[i] = slc_cache_table_hash(dep[i].data, dep[i].len);
    }
    cc->wait_cmd = malloc(cc->cur->len);
    if (cc->wait_cmd == NULL) {
        return SLC_FILTER_PASS;
    }
    memcpy(cc->wait_cmd, cc->cur->payload, cc->cur->len);
    cc->wait_len = cc->cur->len;
    cc->rreq = cc->conf->remote->lookup(cc->conf->remote_tier, &ask,
        &cc->cnt->remote, slc_cache_read_remote_done, cc);
    if (cc->rreq == NULL) {
        free(cc->wait_cmd);
        cc->wait_cmd = NULL;
        return SLC_FILTER_PASS;
    }
    return SLC_FILTER_PAUSE;
}


/* --- the statement ------------------------------------------------------ */

/* The rule of the statement, -1 for none; its ttl or no_cache. */
static int
slc_cache_read_rule(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_sql_keys_t *keys)
{
    int i = slc_cache_session_rule(cc, q, n, keys);

    if (i >= 0 && cc->conf->rule_slot[i] < SLC_CACHE_RULES_MAX) {
        slc_cache_bump(cc->cnt->rules[cc->conf->rule_slot[i]].matches);
    }
    return i;
}

/* A SELECT the verdict lets through: look it up, or store its answer. */
static int
slc_cache_read_select(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_sql_info_t *si, slc_cache_verdict_t v,
    const slc_sql_keys_t *keys, const slc_cache_exec_t *x)
{
    const slc_sql_rule_t   *r = NULL;
    long long               ttl = cc->conf->ttl;
    const uint8_t          *key;
    size_t                  klen;
    uint64_t                hash;

    cc->rule = slc_cache_read_rule(cc, q, n, keys);
    if (cc->rule >= 0) {
        r = slc_rules_get(cc->s, cc->rule);
        if (r->cache.no_cache) {
            return SLC_FILTER_PASS;
        }
        ttl = r->cache.ttl_ms >= 0 ? r->cache.ttl_ms : ttl;
    }
    if (!slc_cache_rule_allows(r, v, si)) {
        slc_cache_bump(cc->cnt->uncacheable[v]);
        return SLC_FILTER_PASS;
    }
    if (ttl <= 0 || (key = slc_cache_read_key(cc, q, n, x, &klen)) == NULL) {
        return SLC_FILTER_PASS;
    }
    hash = slc_cache_key_hash(key, klen);
    if ((x != NULL && x->no_serve) || cc->diag || slc_cache_read_gated(cc)) {
        /* (diag: the server answers, and so clears its warnings) */
        return slc_cache_read_keep(cc, key, klen, hash, keys, ttl, x, 0);
    }
    if (cc->conf->remote_strict || slc_cache_read_untrusted(cc)) {
        /* strict: every hit is Redis', checked against the generations
           Redis has now in the same round trip; the zone serves none */
        return slc_cache_read_keep(cc, key, klen, hash, keys, ttl, x, 1);
    }
    switch (slc_cache_lookup(cc->cache, key, klen, hash, slc_loop->now,
                             &cc->serve.hit))
    {
    case SLC_CACHE_HIT:
        return slc_cache_read_answer(cc);
    case SLC_CACHE_PENDING:
        return slc_cache_read_wait(cc, key, klen, hash);
    case SLC_CACHE_HIT_REFRESH:         /* the server refreshes it */
        return slc_cache_read_keep(cc, key, klen, hash, keys, ttl, x, 0);
    default:                            /* MISS: the remote tier, if any */
        return slc_cache_read_keep(cc, key, klen, hash, keys, ttl, x, 1);
    }
}

int
slc_cache_read(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_sql_info_t *si, const slc_cache_exec_t *x)
{
    const char          *db = x != NULL ? x->ps->db : cc->db;
    slc_cache_session_t  ss;
    slc_sql_keys_t    *keys;
    slc_cache_verdict_t  v;

    cc->select = si->kind == SLC_SQL_SELECT;
    if (si->kind != SLC_SQL_SELECT || cc->unknown) {
        return SLC_FILTER_PASS;
    }
    slc_cache_session_of(cc, db, &ss);
    v = slc_cache_cacheable(q, n, si, &ss);
    if (v != SLC_CACHE_CACHEABLE && v != SLC_CACHE_TABLES_UNKNOWN
        && v != SLC_CACHE_STORED_FUNCTION)
    {
        slc_cache_bump(cc->cnt->uncacheable[v]);
        return SLC_FILTER_PASS;
    }
    keys = slc_cache_session_keys();
    if (slc_sql_table_keys(q, si, db, ss.db_len, keys) != SLC_OK) {
        return SLC_FILTER_PASS;
    }
    return slc_cache_read_select(cc, q, n, si, v, keys, x);
}
