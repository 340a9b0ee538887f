/*
 * The cache filter's hooks (docs/architecture.md, "The query cache"): a
 * command's life in the session.  Per command, what it will change once
 * the server accepts it (its default database, its SETs, a temporary
 * table, a reset, the variables no longer known) and, for a statement
 * that may read, the lookup (slc_cache_read.c; a prepared one's EXECUTE
 * through slc_cache_ps.c); per response packet, the entry being kept and
 * the invalidation before the client sees the end (slc_cache_inv.c); at
 * the end, the entry committed and what the command changed applied.
 * The session's state goes along with a reload's handover.
 *
 * A session whose variables cannot be known (a stored procedure or a
 * text-protocol EXECUTE may have set some, a prepared SET, a handover
 * from the worker that knew them, more SETs than the key carries) is not
 * served from the cache and stores nothing until a COM_RESET_CONNECTION
 * or COM_CHANGE_USER.
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
    slc_cache_read_remote_end(cc);
    if (cc->rbump != NULL) {
        cc->conf->remote->release(cc->rbump);
        cc->rbump = NULL;
    }
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


/* --- the command -------------------------------------------------------- */

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
    slc_sql_tail_init(&cc->tail, slc_cmd_status(cc->s));
    slc_sql_tail_feed(&cc->tail, c->payload + 1, c->avail - 1);
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
    slc_sql_tail_feed(&cc->tail, p, n);
    cc->tail_left -= (uint32_t) n;
    if (cc->tail_left > 0) {
        return;
    }
    f = slc_sql_tail_flags(&cc->tail);
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

/*
 * A text statement that sets what the session's results depend on, once
 * the server accepts it (a SET, a USE), or after which that cannot be
 * known (a CALL, an EXECUTE, several statements...): 1 when it is one,
 * which is then no cached read.
 */
static int
slc_cache_query_sets(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_sql_info_t *si)
{
    if (si->flags & SLC_SQL_F_MULTI) {
        cc->multi = 1;
        cc->then_unknown = 1;   /* any of them may SET or USE */
        return 1;
    }
    switch (si->kind) {
    case SLC_SQL_SET:
        if (si->flags & SLC_SQL_F_GLOBAL) {
            cc->inv.all = 1;            /* new sessions' defaults */
        }
        if ((cc->set_text = malloc(n)) == NULL) {
            cc->then_unknown = 1;
            return 1;
        }
        memcpy(cc->set_text, q, n);
        cc->set_len = n;
        cc->then_set = 1;
        return 1;
    case SLC_SQL_USE:
        cc->then_db = slc_cache_use_name(q, n, cc->next_db,
                                         sizeof(cc->next_db)) == SLC_OK;
        cc->then_unknown = !cc->then_db;
        return 1;
    case SLC_SQL_CALL:
    case SLC_SQL_EXECUTE:
    case SLC_SQL_COMPOUND:
    case SLC_SQL_UNKNOWN:
        cc->then_unknown = 1;           /* it may set variables */
        cc->then_temp = 1;              /* create a temporary table */
        cc->multi = 1;                  /* and return results between
                                           writes */
        return 1;
    default:
        return 0;
    }
}

static int
slc_cache_query(slc_cache_ctx_t *cc, const slc_cmd_t *c)
{
    const uint8_t       *q = c->payload + 1;
    size_t               n = c->len - 1;
    const slc_sql_info_t *si;
    int                  v;

    if (c->avail < c->len) {
        slc_cache_long(cc, c);
        return SLC_FILTER_PASS;
    }
    si = slc_cache_session_classify(cc, c);
    if (slc_cache_read_replay(cc, si->flags)) {
        return SLC_FILTER_PASS;
    }
    cc->clears = si->ntables > 0 && si->kind != SLC_SQL_SHOW;
    cc->iso_use = slc_cache_session_iso_use(si);
    slc_cache_inv_of(cc, q, n, si, cc->db, &cc->inv);
    slc_cache_inv_ddl(cc, q, n, si);
    if (slc_cache_query_sets(cc, q, n, si)) {
        return SLC_FILTER_PASS;
    }
    if (si->flags & SLC_SQL_F_TEMPORARY) {
        cc->then_temp = 1;
    }
    v = slc_cache_read(cc, q, n, si, NULL);
    if (v == SLC_FILTER_PASS && cc->op != SLC_CACHE_OP_STORE) {
        slc_cache_inv_view_calls(cc, q, si, cc->db, &cc->inv);
    }
    return v;
}

/*
 * A command begins: what the one before left is settled (a change of
 * user the core applied, a response that never ended), and the state of
 * the command in flight starts empty.
 */
static void
slc_cache_begin(slc_cache_ctx_t *cc, const slc_cmd_t *c)
{
    slc_session_t *s = cc->s;

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
}

/* COM_INIT_DB: the database it names, once the server accepts it. */
static void
slc_cache_init_db(slc_cache_ctx_t *cc, const slc_cmd_t *c)
{
    cc->then_db = c->avail == c->len && c->len - 1 <= SLC_MAX_DB;
    if (cc->then_db) {
        memcpy(cc->next_db, c->payload + 1, c->len - 1);
        cc->next_db[c->len - 1] = '\0';
        cc->then_db = strlen(cc->next_db) == c->len - 1;
    }
    cc->then_unknown = !cc->then_db;
}

static int
slc_cache_command(slc_session_t *s, void *ctx, const slc_cmd_t *c)
{
    slc_cache_ctx_t *cc = ctx;

    (void) s;
    slc_cache_begin(cc, c);
    switch (c->command) {
    case SLC_COM_QUERY:
        return slc_cache_query(cc, c);
    case SLC_COM_INIT_DB:
        slc_cache_init_db(cc, c);
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
    slc_cache_read_remote_end(cc);
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
    cc->in_packet = 1;                  /* (strict: a bump may gate) */
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
    cc->in_packet = 0;
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
 * The remote tier missed: it gets the answer too, with the generations
 * its lookup saw, before the zone's commit (which may yet refuse it for
 * a write seen since: so will the remote tier's generations, which move
 * only after a commit, and so only after the lookup that saw them).
 */
static void
slc_cache_commit_remote(slc_cache_ctx_t *cc)
{
    uint64_t age = slc_loop->now - cc->sent_after;
    uint8_t  meta[SLC_CACHE_META] = { 0 };

    if (cc->rreq != NULL && (uint64_t) cc->ttl > age) {
        memcpy(meta, &cc->meta, sizeof(cc->meta));
        cc->conf->remote->store(cc->rreq, &cc->st, meta,
            (uint64_t) cc->ttl - age);
    }
    slc_cache_read_remote_end(cc);
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
    slc_cache_commit_remote(cc);
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
