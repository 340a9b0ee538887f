/*
 * The cache filter's session side (docs/architecture.md, "The query
 * cache"): per command, look a cacheable SELECT up (a COM_QUERY here, an
 * EXECUTE of a prepared one through slc_cache_ps.c) and answer it from the
 * zone, or let it pass and keep its response as it streams to the client;
 * note what the session's results depend on (its default database, its
 * variables); invalidate the tables a write changed once the server
 * accepted it, at the end of its transaction.
 *
 * The key is exact: the statement's bytes, the default database, the
 * user (unless cache_users shared), the character set of the login, the
 * session's SETs of system variables (their text, in order), and the
 * client capabilities that change a result's bytes (DEPRECATE_EOF, the
 * session-state OK, MariaDB's extended metadata and CACHE_METADATA); a
 * binary EXECUTE's adds its parameters (slc_cache_key).  The whole key is
 * compared on every hit.  A session whose variables cannot be known (a
 * stored procedure or a text-protocol EXECUTE may have set some, a
 * prepared SET, a handover from the worker that knew them, more SETs than
 * the key carries) is not served from the cache and stores nothing until
 * a COM_RESET_CONNECTION or COM_CHANGE_USER.
 */

#include <ctype.h>

#include "slc_core.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_monitor.h"
#include "slc_mysql_proto.h"
#include "slc_mysql_session.h"
#include "slc_cache_session.h"


#define SLC_CACHE_WAIT_STEP  2  /* ms between looks at a pending entry */

/* The capability bits that change the bytes of a result set: the EOF or
   OK that ends it, the OK's layout, MariaDB's extended type information
   in the column definitions and its "metadata follows" byte after the
   column count. */
#define SLC_CACHE_KEY_CAPS  (SLC_CLIENT_DEPRECATE_EOF | SLC_CLIENT_SESSION_TRACK)
#define SLC_CACHE_KEY_MARIADB_CAPS                                           \
    (SLC_MARIADB_CLIENT_EXTENDED_TYPE_INFO | SLC_MARIADB_CLIENT_CACHE_METADATA)

/* The key's format byte: a text and a binary entry never meet. */
#define SLC_CACHE_KEY_TEXT    1
#define SLC_CACHE_KEY_BINARY  2

static int  slc_cache_open(slc_session_t *s, void *ctx);
static void slc_cache_close(slc_session_t *s, void *ctx);
static int  slc_cache_command(slc_session_t *s, void *ctx,
    const slc_cmd_t *c);
static void slc_cache_rest(slc_session_t *s, void *ctx, const uint8_t *p,
    size_t n);
static void slc_cache_packet(slc_session_t *s, void *ctx,
    const slc_cmd_packet_t *p);
static void slc_cache_done(slc_session_t *s, void *ctx,
    const slc_mysql_reply_t *r, uint16_t status);
static size_t slc_cache_save(slc_session_t *s, void *ctx, uint8_t *buf,
    size_t cap);
static void slc_cache_restore(slc_session_t *s, void *ctx, const uint8_t *p,
    size_t len);

const slc_filter_t slc_cache_filter = {
    .ctx_size = sizeof(slc_cache_ctx_t),
    .open = slc_cache_open,
    .close = slc_cache_close,
    .command = slc_cache_command,
    .rest = slc_cache_rest,
    .packet = slc_cache_packet,
    .done = slc_cache_done,
    .save = slc_cache_save,
    .restore = slc_cache_restore,
};


/* --- the session's state ------------------------------------------------ */

static void slc_cache_wait_timer(slc_timer_t *t);
static void slc_cache_reset(slc_cache_ctx_t *cc, int keep_db);
static void slc_cache_not_stored(slc_cache_ctx_t *cc, unsigned why);

static int
slc_cache_open(slc_session_t *s, void *ctx)
{
    slc_cache_ctx_t *cc = ctx;

    cc->s = s;
    cc->conf = slc_module_conf(s->srv->mod_conf, &slc_cache_module);
    cc->cache = cc->conf->zone->cache;
    cc->cnt = slc_cache_counters(cc->cache);
    cc->catalog = slc_catalog_of(s->srv->upstream);
    cc->rule = -1;
    cc->timer.handler = slc_cache_wait_timer;
    cc->timer.data = cc;
    slc_cache_vars_init(&cc->vars);
    strlcpy(cc->db, s->has_db ? s->db : "", sizeof(cc->db));
    /* what it set and prepared stayed with the worker it came from */
    cc->unknown = s->adopted;
    cc->ps_unknown = s->adopted;
    cc->diag = s->adopted;              /* its warnings: not known */
    cc->user_gen = s->user_gen;
    return SLC_OK;
}

static void
slc_cache_forget(slc_cache_ctx_t *cc)
{
    slc_cache_vars_reset(&cc->vars);
    slc_cache_ps_forget(cc);
}

static void
slc_cache_close(slc_session_t *s, void *ctx)
{
    slc_cache_ctx_t *cc = ctx;

    (void) s;
    if (cc->op == SLC_CACHE_OP_STORE) {
        slc_cache_not_stored(cc, SLC_CACHE_NS_CLOSED);
    }
    if (cc->op == SLC_CACHE_OP_SERVE) {
        slc_cache_serve_end(&cc->serve);
    }
    slc_cache_inv_unanswered(cc);
    slc_timer_del(slc_loop, &cc->timer);
    free(cc->key);
    free(cc->wait_cmd);
    free(cc->hit_cmd);
    free(cc->set_text);
    slc_cache_ps_free(&cc->prep);
    slc_cache_forget(cc);
}

/*
 * A reload's handover: what the key needs of the session goes along (its
 * default database and SETs, whether its variables are known, whether it
 * created a temporary table); its prepared statements' records do not, so
 * an EXECUTE the next worker cannot place invalidates everything there.
 * Version 2: flags (1 unknown, 2 temp, 4 statements, 8 the server's
 * warnings are another statement's: slc_cache_diag), the database's
 * length (1) and bytes, then the SETs (slc_cache_vars_save).
 */
#define SLC_CACHE_SAVE_V2  2

static size_t
slc_cache_save(slc_session_t *s, void *ctx, uint8_t *buf, size_t cap)
{
    slc_cache_ctx_t *cc = ctx;
    size_t           dl = strlen(cc->db), n;

    (void) s;
    if (3 + dl > cap || dl > 255) {
        return 0;                       /* the next worker: not known */
    }
    buf[0] = SLC_CACHE_SAVE_V2;
    buf[1] = (uint8_t) (cc->unknown | cc->temp << 1
                        | (cc->ps_unknown || slc_cache_ps_writes(cc)) << 2
                        | cc->diag << 3);
    buf[2] = (uint8_t) dl;
    memcpy(buf + 3, cc->db, dl);
    n = slc_cache_vars_save(&cc->vars, buf + 3 + dl, cap - 3 - dl);
    return n == 0 ? 0 : 3 + dl + n;
}

static void
slc_cache_restore(slc_session_t *s, void *ctx, const uint8_t *p,
    size_t len)
{
    slc_cache_ctx_t *cc = ctx;
    size_t           dl;

    (void) s;
    if (len < 3 || p[0] != SLC_CACHE_SAVE_V2 || (dl = p[2]) > SLC_MAX_DB
        || len < 3 + dl
        || slc_cache_vars_restore(&cc->vars, p + 3 + dl, len - 3 - dl)
           != SLC_OK)
    {
        return;                         /* unknown, as open() left it */
    }
    memcpy(cc->db, p + 3, dl);
    cc->db[dl] = '\0';
    cc->unknown = (p[1] & 1) || cc->vars.overflow;
    cc->temp = (p[1] >> 1) & 1;
    cc->ps_unknown = (p[1] >> 2) & 1;
    cc->diag = (p[1] >> 3) & 1;
}

/* USE db, USE `d``b`: the name as the server takes it, or SLC_ERROR. */
static int
slc_cache_use_name(const uint8_t *q, size_t n, char *out, size_t cap)
{
    size_t i = 0, k = 0;

    while (i < n && isspace(q[i])) {
        i++;
    }
    if (i + 3 > n || strncasecmp((const char *) q + i, "USE", 3) != 0) {
        return SLC_ERROR;
    }
    for (i += 3; i < n && isspace(q[i]); i++) {
        /* blanks */
    }
    if (i < n && q[i] == '`') {
        for (i++; i < n; i++) {
            if (q[i] == '`') {
                if (i + 1 < n && q[i + 1] == '`') {
                    i++;
                } else {
                    break;
                }
            }
            if (k + 1 >= cap) {
                return SLC_ERROR;
            }
            out[k++] = (char) q[i];
        }
        i++;
    } else {
        while (i < n && (isalnum(q[i]) || q[i] == '_' || q[i] == '$'
                         || q[i] >= 0x80))
        {
            if (k + 1 >= cap) {
                return SLC_ERROR;
            }
            out[k++] = (char) q[i++];
        }
    }
    while (i < n && (isspace(q[i]) || q[i] == ';')) {
        i++;
    }
    out[k] = '\0';
    return k > 0 && i == n ? SLC_OK : SLC_ERROR;
}


/* --- looking up --------------------------------------------------------- */

static size_t
slc_cache_put_str(uint8_t *k, const void *p, size_t n)
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
 * holds (under
 * CACHE_METADATA), the statement, the parameters' types, NULL bitmap and
 * values.
 */
static const uint8_t *
slc_cache_key(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
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
        k += slc_cache_put_str(buf + k, "", 0);
    } else {
        k += slc_cache_put_str(buf + k, s->user, strlen(s->user));
    }
    k += slc_cache_put_str(buf + k, db, strlen(db));
    k += slc_cache_put_str(buf + k, cc->vars.len > 0 ? cc->vars.buf : "",
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
slc_cache_depends(slc_cache_ctx_t *cc, const slc_cache_keys_t *keys,
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

/* Start keeping the response to the command that passes on. */
static void
slc_cache_store(slc_cache_ctx_t *cc, const uint8_t *key, size_t klen,
    uint64_t hash, const slc_cache_keys_t *keys, long long ttl,
    const slc_cache_exec_t *x)
{
    slc_cache_refusal_e r;
    long long           soft = cc->conf->soft_ttl;
    slc_str_t           dep[SLC_CACHE_TABLES];
    unsigned            ndep;
    slc_cache_verdict_t v;

    if (keys->n > SLC_CACHE_TABLES) {
        v = SLC_CACHE_TABLES_UNKNOWN;
    } else {
        v = slc_cache_depends(cc, keys, dep, &ndep);
    }
    if (v != SLC_CACHE_CACHEABLE) {
        slc_cache_bump(cc->cnt->uncacheable[v]);
        return;
    }
    r = slc_cache_store_begin(cc->cache, &cc->st, key, klen, hash,
        dep, ndep, (uint64_t) ttl,
        soft > 0 && soft < ttl ? (uint64_t) soft : 0, slc_loop->now);
    if (r != SLC_CACHE_OK) {
        return;                         /* the store counted it */
    }
    cc->op = SLC_CACHE_OP_STORE;
    cc->sent_after = slc_loop->now;
    cc->npkt = 0;
    cc->ncols = 0;
    cc->ndefs = 0;
    cc->binary = x != NULL;
    cc->stored = 0;
    cc->bad = 0;
    memset(&cc->meta, 0, sizeof(cc->meta));
}

/* The payload of the command a hit answers, for a replay (hit_cmd). */
static void
slc_cache_hit_note(slc_cache_ctx_t *cc, const uint8_t *p, size_t n)
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
slc_cache_replay(slc_cache_ctx_t *cc, uint32_t flags)
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
slc_cache_answer(slc_cache_ctx_t *cc)
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
        slc_cache_hit_note(cc, cc->cur->payload, cc->cur->len);
    } else {
        slc_cache_hit_note(cc, cc->wait_cmd, cc->wait_len);
    }
    return SLC_FILTER_ANSWER;
}

/* Another session is storing this key: look again shortly, up to
   cache_wait_timeout, then go to the server. */
static int
slc_cache_wait(slc_cache_ctx_t *cc, const uint8_t *key, size_t klen,
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
    slc_timer_add(slc_loop, &cc->timer, SLC_CACHE_WAIT_STEP);
    return SLC_FILTER_PAUSE;
}

static void
slc_cache_wait_timer(slc_timer_t *t)
{
    slc_cache_ctx_t *cc = t->data;
    int              verdict = SLC_FILTER_PASS;

    cc->cur = NULL;
    switch (slc_cache_lookup(cc->cache, cc->key, cc->klen, cc->hash,
                             slc_loop->now, &cc->serve.hit))
    {
    case SLC_CACHE_HIT:
        verdict = slc_cache_answer(cc);
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

/* The rule of the statement, -1 for none; its ttl or no_cache. */
static int
slc_cache_rule(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_cache_keys_t *keys)
{
    int i = slc_cache_session_rule(cc, q, n, keys);

    if (i >= 0 && cc->conf->rule_slot[i] < SLC_CACHE_RULES_MAX) {
        slc_cache_bump(cc->cnt->rules[cc->conf->rule_slot[i]].matches);
    }
    return i;
}

/* A SELECT the verdict lets through: look it up, or store its answer. */
static int
slc_cache_select(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_sql_info_t *si, slc_cache_verdict_t v,
    const slc_cache_keys_t *keys, const slc_cache_exec_t *x)
{
    const slc_cache_rule_t *r = NULL;
    long long               ttl = cc->conf->ttl;
    const uint8_t          *key;
    size_t                  klen;
    uint64_t                hash;

    cc->rule = slc_cache_rule(cc, q, n, keys);
    if (cc->rule >= 0) {
        r = &cc->conf->rules.rule[cc->rule];
        if (r->no_cache) {
            return SLC_FILTER_PASS;
        }
        ttl = r->ttl_ms >= 0 ? r->ttl_ms : ttl;
    }
    if (!slc_cache_rule_allows(r, v, si)) {
        slc_cache_bump(cc->cnt->uncacheable[v]);
        return SLC_FILTER_PASS;
    }
    if (ttl <= 0 || (key = slc_cache_key(cc, q, n, x, &klen)) == NULL) {
        return SLC_FILTER_PASS;
    }
    hash = slc_cache_key_hash(key, klen);
    if ((x != NULL && x->no_serve) || cc->diag) {
        /* (diag: the server answers, and so clears its warnings) */
        slc_cache_store(cc, key, klen, hash, keys, ttl, x);
        return SLC_FILTER_PASS;
    }
    switch (slc_cache_lookup(cc->cache, key, klen, hash, slc_loop->now,
                             &cc->serve.hit))
    {
    case SLC_CACHE_HIT:
        return slc_cache_answer(cc);
    case SLC_CACHE_PENDING:
        return slc_cache_wait(cc, key, klen, hash);
    default:                            /* MISS, HIT_REFRESH */
        slc_cache_store(cc, key, klen, hash, keys, ttl, x);
        return SLC_FILTER_PASS;
    }
}

/*
 * A statement larger than a buffer: the filter sees its head now and the
 * rest as it goes (slc_cache_rest).  A write (or what the head cannot
 * place) invalidates everything and may have set anything.  A SELECT is
 * not cached (its tables are not all seen) and writes nothing, unless
 * its whole text, scanned from its first byte as it goes (slc_sqltail),
 * holds another statement, a call of a stored function or of a sequence
 * (NEXTVAL writes): then it is a write of everything too.  A text that
 * never came whole is one.
 */
/* The text's first word is SELECT (after blanks, plain comments and
   opening parentheses); an executable comment is no answer. */
static int
slc_cache_starts_select(const uint8_t *q, size_t n)
{
    size_t i = 0;

    while (i < n) {
        if (q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r'
            || q[i] == '(')
        {
            i++;
        } else if (q[i] == '/' && i + 2 < n && q[i + 1] == '*'
                   && q[i + 2] != '!' && q[i + 2] != 'M')
        {
            const uint8_t *e = memmem(q + i + 2, n - i - 2, "*/", 2);

            if (e == NULL) {
                return 0;
            }
            i = (size_t) (e - q) + 2;
        } else {
            break;
        }
    }
    return n - i > 6 && strncasecmp((const char *) q + i, "SELECT", 6) == 0
           && (q[i + 6] == ' ' || q[i + 6] == '\t' || q[i + 6] == '\n'
               || q[i + 6] == '\r' || q[i + 6] == '(' || q[i + 6] == '/'
               || q[i + 6] == '*' || q[i + 6] == '`' || q[i + 6] == '\''
               || q[i + 6] == '"' || q[i + 6] == '@');
}

static void
slc_cache_long(slc_cache_ctx_t *cc, const slc_cmd_t *c)
{
    cc->inv.all = 1;
    cc->then_unknown = 1;
    cc->iso_use = SLC_CACHE_ISO_USE_MAYBE;
    if (!slc_cache_starts_select(c->payload + 1, c->avail - 1)) {
        return;                     /* a write, or one we cannot say */
    }
    cc->long_read = 1;
    cc->tail_left = c->len - (uint32_t) c->avail;
    slc_sqltail_init(&cc->tail, slc_cmd_status(cc->s));
    slc_sqltail_feed(&cc->tail, c->payload + 1, c->avail - 1);
    slc_cache_bump(cc->cnt->uncacheable[SLC_CACHE_TABLES_UNKNOWN]);
}

static void
slc_cache_rest(slc_session_t *s, void *ctx, const uint8_t *p, size_t n)
{
    slc_cache_ctx_t *cc = ctx;
    uint32_t         f;

    (void) s;
    if (!cc->long_read || n > cc->tail_left) {
        return;                     /* not ours to scan: stays a write */
    }
    slc_sqltail_feed(&cc->tail, p, n);
    cc->tail_left -= (uint32_t) n;
    if (cc->tail_left > 0) {
        return;
    }
    f = slc_sqltail_flags(&cc->tail);
    if ((f & (SLC_SQL_F_MULTI | SLC_SQL_F_STORED_FUNC
              | SLC_SQL_F_SEQUENCE | SLC_SQL_F_UNTERMINATED))
        || ((f & SLC_SQL_F_AMBIGUOUS) && slc_cache_session_ansi(cc)))
    {
        return;
    }
    /* a read, whole: it wrote nothing, set nothing */
    cc->inv.all = 0;
    cc->then_unknown = 0;
    cc->iso_use = SLC_CACHE_ISO_USE_YES;
}

static int
slc_cache_query(slc_cache_ctx_t *cc, const slc_cmd_t *c)
{
    const uint8_t       *q = c->payload + 1;
    size_t               n = c->len - 1;
    slc_sql_info_t       si;
    int                  v;

    if (c->avail < c->len) {
        slc_cache_long(cc, c);
        return SLC_FILTER_PASS;
    }
    slc_cache_session_classify(cc, c, &si);
    if (slc_cache_replay(cc, si.flags)) {
        return SLC_FILTER_PASS;
    }
    cc->clears = si.ntables > 0 && si.kind != SLC_SQL_SHOW;
    cc->iso_use = slc_cache_session_iso_use(&si);
    slc_cache_inv_of(cc, q, n, &si, cc->db, &cc->inv);
    slc_cache_inv_ddl(cc, q, n, &si);
    if (si.flags & SLC_SQL_F_MULTI) {
        cc->multi = 1;
        cc->then_unknown = 1;   /* any of them may SET or USE */
        return SLC_FILTER_PASS;
    }
    switch (si.kind) {
    case SLC_SQL_SET:
        if (si.flags & SLC_SQL_F_GLOBAL) {
            cc->inv.all = 1;            /* new sessions' defaults */
        }
        if ((cc->set_text = malloc(n)) == NULL) {
            cc->then_unknown = 1;
            return SLC_FILTER_PASS;
        }
        memcpy(cc->set_text, q, n);
        cc->set_len = n;
        cc->then_set = 1;
        return SLC_FILTER_PASS;
    case SLC_SQL_USE:
        cc->then_db = slc_cache_use_name(q, n, cc->next_db,
                                         sizeof(cc->next_db)) == SLC_OK;
        cc->then_unknown = !cc->then_db;
        return SLC_FILTER_PASS;
    case SLC_SQL_CALL:
    case SLC_SQL_EXECUTE:
    case SLC_SQL_COMPOUND:
    case SLC_SQL_UNKNOWN:
        cc->then_unknown = 1;           /* it may set variables */
        cc->then_temp = 1;              /* create a temporary table */
        cc->multi = 1;                  /* and return results between
                                           writes */
        return SLC_FILTER_PASS;
    default:
        break;
    }
    if (si.flags & SLC_SQL_F_TEMPORARY) {
        cc->then_temp = 1;
    }
    v = slc_cache_read(cc, q, n, &si, NULL);
    if (v == SLC_FILTER_PASS && cc->op != SLC_CACHE_OP_STORE) {
        slc_cache_inv_view_calls(cc, q, &si, cc->db, &cc->inv);
    }
    return v;
}

int
slc_cache_read(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_sql_info_t *si, const slc_cache_exec_t *x)
{
    const char          *db = x != NULL ? x->ps->db : cc->db;
    slc_cache_session_t  ss;
    slc_cache_keys_t    *keys;
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
    if (slc_cache_table_keys(q, si, db, ss.db_len, keys) != SLC_OK) {
        return SLC_FILTER_PASS;
    }
    return slc_cache_select(cc, q, n, si, v, keys, x);
}

static int
slc_cache_command(slc_session_t *s, void *ctx, const slc_cmd_t *c)
{
    slc_cache_ctx_t *cc = ctx;

    if (cc->user_gen != s->user_gen) {
        /* a COM_CHANGE_USER the core applied: the server reset the
           session, temporary tables and statements included */
        cc->user_gen = s->user_gen;
        slc_cache_reset(cc, 0);
    }
    if (cc->op == SLC_CACHE_OP_STORE) {
        /* the last response never ended (its backend failed with part of
           it sent): no half entry, and the key is free again */
        slc_cache_not_stored(cc, SLC_CACHE_NS_CLOSED);
    }
    slc_cache_inv_unanswered(cc);
    cc->op = SLC_CACHE_OP_NONE;
    cc->rule = -1;
    cc->cur = c;
    cc->hit_before = cc->hit_last;
    cc->hit_last = 0;
    cc->select = 0;
    cc->inflight = slc_mysql_track_answered(c->command);
    cc->status_before = slc_cmd_status(s);
    cc->iso_use = c->command == SLC_COM_STMT_EXECUTE
                  || c->command == SLC_COM_STMT_BULK_EXECUTE
                  ? SLC_CACHE_ISO_USE_MAYBE : SLC_CACHE_ISO_USE_NOT;
    cc->clears = 0;
    memset(&cc->inv, 0, sizeof(cc->inv));
    cc->then_unknown = cc->then_temp = cc->then_reset = cc->multi = 0;
    cc->ddl = 0;
    cc->long_read = 0;
    cc->then_db = cc->then_set = cc->then_prepare = cc->then_unbind = 0;
    cc->mw.on = 0;
    free(cc->set_text);
    cc->set_text = NULL;
    slc_cache_ps_free(&cc->prep);
    switch (c->command) {
    case SLC_COM_QUERY:
        return slc_cache_query(cc, c);
    case SLC_COM_INIT_DB:
        cc->then_db = c->avail == c->len && c->len - 1 <= SLC_MAX_DB;
        if (cc->then_db) {
            memcpy(cc->next_db, c->payload + 1, c->len - 1);
            cc->next_db[c->len - 1] = '\0';
            cc->then_db = strlen(cc->next_db) == c->len - 1;
        }
        cc->then_unknown = !cc->then_db;
        break;
    case SLC_COM_CHANGE_USER:           /* under auth passthrough */
        cc->then_reset = SLC_CACHE_RESET_USER;
        break;
    case SLC_COM_RESET_CONNECTION:
        cc->then_reset = SLC_CACHE_RESET_CONNECTION;
        break;
    case SLC_COM_STMT_PREPARE:
        slc_cache_ps_prepare(cc, c);
        break;
    case SLC_COM_STMT_EXECUTE:
    case SLC_COM_STMT_BULK_EXECUTE:
        return slc_cache_ps_execute(cc, c);
    case SLC_COM_STMT_CLOSE:
    case SLC_COM_STMT_RESET:
    case SLC_COM_STMT_SEND_LONG_DATA:
        slc_cache_ps_command(cc, c);
        break;
    default:
        break;
    }
    return SLC_FILTER_PASS;
}


/* --- keeping a response ------------------------------------------------- */

/* The response is not kept: its store, if one began, is dropped and the
   reason (SLC_CACHE_NS_*) counted. */
static void
slc_cache_not_stored(slc_cache_ctx_t *cc, unsigned why)
{
    if (cc->st.entry != NULL) {
        slc_cache_store_abort(&cc->st);
    }
    slc_cache_bump(cc->cnt->not_stored[why]);
    cc->op = SLC_CACHE_OP_NONE;
}

/*
 * A packet's start: its place among the response's packets.  The first
 * holds the column count; without DEPRECATE_EOF an EOF follows the
 * column definitions, whose status flags a hit rewrites; the last packet
 * ends the result (done looks at it).
 */
static void
slc_cache_packet_start(slc_cache_ctx_t *cc, const slc_cmd_packet_t *p)
{
    const uint8_t *pl = p->data;
    size_t         have = p->len;
    uint64_t       k = cc->npkt++;

    if (p->plen >= SLC_MYSQL_MAX_PAYLOAD) {
        cc->bad = 1;                    /* one that continues: not kept */
        return;
    }
    cc->last_off = (uint32_t) cc->stored;
    if (k == 0) {
        size_t n = 0;

        if (have == 0 || pl[0] == SLC_MYSQL_OK || pl[0] == SLC_MYSQL_ERR
            || pl[0] == 0xfb
            || (n = slc_mysql_lenenc_int_get(pl, have, &cc->ncols)) == 0
            || cc->ncols == 0)
        {
            cc->bad = 1;                /* not a result set */
        }
        cc->ndefs = cc->ncols;
        /* CACHE_METADATA: "metadata follows", 0 when the server knew the
           client had the definitions: only an EXECUTE's (its key holds
           the definitions the client has) */
        if (cc->s->mariadb_caps & SLC_MARIADB_CLIENT_CACHE_METADATA) {
            if (have <= n || pl[n] > 1 || (pl[n] == 0 && !cc->binary)) {
                cc->bad = 1;
            } else if (pl[n] == 0) {
                cc->ndefs = 0;
            }
        }
        return;
    }
    if (!(cc->s->caps & SLC_CLIENT_DEPRECATE_EOF) && k == cc->ndefs + 1) {
        if (have < 5 || pl[0] != SLC_MYSQL_EOF || p->plen != 5) {
            cc->bad = 1;
            return;
        }
        cc->meta.eof_status = cc->last_off + SLC_MYSQL_HDR_LEN + 3;
    }
}

static void
slc_cache_packet(slc_session_t *s, void *ctx, const slc_cmd_packet_t *p)
{
    slc_cache_ctx_t *cc = ctx;
    uint8_t          hdr[SLC_MYSQL_HDR_LEN];
    size_t           n = p->len + (p->first ? SLC_MYSQL_HDR_LEN : 0);

    (void) s;
    if (cc->mw.on) {
        slc_cache_ps_packet(cc, p);
    }
    if (cc->multi && p->first && !p->end && p->len > 0
        && (p->data[0] == SLC_MYSQL_OK || p->data[0] == SLC_MYSQL_EOF))
    {
        /* an OK or EOF may end one of several statements (or be a row
           that starts so: early is safe) */
        slc_cache_inv_early(cc);
    }
    if (p->end) {
        slc_cache_inv_settle(cc, p->reply);
    }
    if (cc->op != SLC_CACHE_OP_STORE) {
        return;
    }
    if (p->first) {
        slc_cache_packet_start(cc, p);
    }
    if (cc->bad) {
        slc_cache_not_stored(cc, SLC_CACHE_NS_ERROR);
        return;
    }
    if (cc->stored + n > cc->conf->max_entry) {
        slc_cache_not_stored(cc, SLC_CACHE_NS_SIZE);
        return;
    }
    if (p->first) {
        /* the entry is the wire bytes, headers included */
        slc_mysql_hdr_write(hdr, p->plen, p->seq);
        if (slc_cache_store_append(&cc->st, hdr, sizeof(hdr))
            != SLC_CACHE_OK)
        {
            slc_cache_not_stored(cc, SLC_CACHE_NS_STORE);
            return;
        }
    }
    if (p->len > 0
        && slc_cache_store_append(&cc->st, p->data, p->len) != SLC_CACHE_OK)
    {
        slc_cache_not_stored(cc, SLC_CACHE_NS_STORE);
        return;
    }
    cc->stored += n;
}

/*
 * What a primary answered is kept.  A replica's answer only if the
 * monitor knew, before the read went out, that the replica held every
 * write its tables saw: otherwise it may predate an invalidation that has
 * already happened, and the stale entry would outlive it until its ttl.
 */
static int
slc_cache_in_step(const slc_cache_ctx_t *cc, const slc_backend_t *b)
{
    uint64_t at;

    if (slc_monitor_role(b->server) & SLC_ROLE_PRIMARY) {
        return 1;
    }
    return slc_monitor_synced(b->server, cc->sent_after, &at) == SLC_OK
           && slc_cache_store_synced(&cc->st, at);
}

/*
 * The response is complete (r, and `status` the flags of its last
 * packet): keep it if it is one whole result set, without error, warnings
 * (unless cache_warnings) or session state, with where the status flags
 * of its last packet are.
 */
static void
slc_cache_commit(slc_cache_ctx_t *cc, const slc_mysql_reply_t *r,
    uint16_t status)
{
    const slc_backend_t *b = slc_cmd_answered_by(cc->s);

    if (b == NULL || !slc_cache_in_step(cc, b)) {
        slc_cache_not_stored(cc, SLC_CACHE_NS_REPLICA);
        return;
    }
    /* its first packet was a column count (slc_cache_packet_start): it
       ends with its EOF (or DEPRECATE_EOF's OK with that header), not an
       ERR nor the OK of a result after it */
    if (cc->npkt < 3 || r->last != SLC_MYSQL_EOF || r->status_at == 0) {
        slc_cache_not_stored(cc, SLC_CACHE_NS_ERROR);
        return;
    }
    if (status & (SLC_SERVER_MORE_RESULTS_EXISTS
                  | SLC_SERVER_SESSION_STATE_CHANGED))
    {
        slc_cache_not_stored(cc, status & SLC_SERVER_MORE_RESULTS_EXISTS
                             ? SLC_CACHE_NS_ERROR : SLC_CACHE_NS_STATE);
        return;
    }
    if (r->warnings > 0 && !cc->conf->warnings) {
        slc_cache_not_stored(cc, SLC_CACHE_NS_WARNINGS);
        return;
    }
    cc->meta.end_status = cc->last_off + SLC_MYSQL_HDR_LEN + r->status_at;
    /* the column count, definitions, their EOF (none under DEPRECATE_EOF),
       the rows, the end */
    cc->meta.rows = (uint32_t) (cc->npkt - 2 - cc->ndefs
        - !(cc->s->caps & SLC_CLIENT_DEPRECATE_EOF));
    slc_cache_store_meta(&cc->st, &cc->meta, sizeof(cc->meta));
    if (slc_cache_store_commit(&cc->st) == SLC_CACHE_OK) {
        if (cc->rule >= 0
            && cc->conf->rule_slot[cc->rule] < SLC_CACHE_RULES_MAX)
        {
            slc_cache_bump(
                cc->cnt->rules[cc->conf->rule_slot[cc->rule]].stores);
        }
    }
    cc->op = SLC_CACHE_OP_NONE;
}


/* --- after the response ------------------------------------------------- */

/*
 * What the server's diagnostics area (SHOW WARNINGS, SHOW ERRORS,
 * @@warning_count) holds after a response: a statement that uses a table
 * clears it, an error or warnings fill it, other statements leave it.
 * The session's last backend is the one its SHOW WARNINGS goes to.
 */
static void
slc_cache_diag(slc_cache_ctx_t *cc, const slc_mysql_reply_t *r)
{
    if (r->last == SLC_MYSQL_ERR || r->warnings > 0) {
        cc->diag = 1;
    } else if (cc->clears) {
        cc->diag = 0;
    }
}

/*
 * The server reset the session (COM_RESET_CONNECTION, COM_CHANGE_USER):
 * variables, temporary tables and prepared statements are gone.  The
 * database is the new user's after a change of user the server accepted
 * (the core made it the session's), and stays what it was otherwise: a
 * reset keeps it, and so does a change the server refused (MariaDB
 * restores the old user, database and character set, not the rest).
 */
static void
slc_cache_reset(slc_cache_ctx_t *cc, int keep_db)
{
    slc_cache_forget(cc);
    if (!keep_db) {
        strlcpy(cc->db, cc->s->has_db ? cc->s->db : "", sizeof(cc->db));
    }
    cc->unknown = 0;
    cc->temp = 0;
    cc->ps_unknown = 0;
}

/* What the command changed, now that the server accepted it. */
static void
slc_cache_accepted(slc_cache_ctx_t *cc, const slc_mysql_reply_t *r)
{

    if (cc->then_db) {
        strlcpy(cc->db, cc->next_db, sizeof(cc->db));
    }
    if (cc->then_set) {
        slc_cache_vars_set(&cc->vars, (const uint8_t *) cc->set_text,
                           cc->set_len);
        cc->unknown |= cc->vars.overflow;
    }
    if (cc->then_temp) {
        cc->temp = 1;
    }
    if (cc->then_unknown) {
        cc->unknown = 1;
    }
    if (cc->then_prepare) {
        slc_cache_ps_prepared(cc, r);
    }
}

static void
slc_cache_done(slc_session_t *s, void *ctx, const slc_mysql_reply_t *r,
    uint16_t status)
{
    slc_cache_ctx_t *cc = ctx;
    int              ok = r->first != SLC_MYSQL_ERR;

    cc->inflight = 0;
    /* CACHE_METADATA: record the definitions the client holds now (after
       any response but a hit's); if this one changed them, a hit would
       not, so it is not kept */
    if (cc->mw.on && cc->op != SLC_CACHE_OP_SERVE) {
        int same = slc_cache_ps_watched(cc);

        if (!same && cc->op == SLC_CACHE_OP_STORE) {
            slc_cache_not_stored(cc, SLC_CACHE_NS_STATE);
        }
    }
    if (cc->op == SLC_CACHE_OP_STORE) {
        slc_cache_commit(cc, r, status);
    } else if (cc->op == SLC_CACHE_OP_SERVE) {
        cc->op = SLC_CACHE_OP_NONE;     /* the serve released its hit */
        return;
    }
    slc_cache_diag(cc, r);
    if (cc->select && ok) {
        cc->hit_select = 0;             /* FOUND_ROWS() is the server's
                                           (a SELECT that failed left it) */
    }
    if (cc->then_reset == SLC_CACHE_RESET_USER
        || (cc->then_reset == SLC_CACHE_RESET_CONNECTION && ok))
    {
        slc_cache_reset(cc, cc->then_reset == SLC_CACHE_RESET_CONNECTION
                            || !ok);
        cc->user_gen = s->user_gen;
    } else if (cc->then_reset) {
        cc->unknown = 1;                /* a refused reset: not known */
    }
    slc_cache_session_iso_after(cc, ok);
    /* a statement that failed changed nothing, unless several ran (an
       earlier one may have written) */
    if (ok || cc->inv.all) {
        slc_cache_inv_merge(&cc->trx, &cc->inv);
    }
    if (ok) {
        slc_cache_accepted(cc, r);
    } else if (cc->then_unknown) {
        cc->unknown = 1;                /* a CALL may fail half way */
    }
    if (!ok && cc->then_unbind) {
        slc_cache_ps_unbind(cc, cc->bind_id);
    }
    /* the session's transaction is the primary's (its own backend),
       whichever backend answered: not `status`, the answerer's */
    if (!(slc_cmd_status(s) & SLC_SERVER_STATUS_IN_TRANS)) {
        slc_cache_inv_apply(cc, &cc->trx);  /* committed, or autocommit */
    }
    free(cc->set_text);
    cc->set_text = NULL;
}
