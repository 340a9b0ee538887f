/*
 * What a binlog event group wrote (slc_cache_binlog.h): the tables of its
 * row events' table maps, the tables its statements name (classified as a
 * client's would be, with what their triggers write), or everything; and
 * when it is to be applied: at its XID or COMMIT (ROLLBACK too: a group
 * the primary logged with ROLLBACK wrote non-transactional tables, which
 * stay written), after its one event when standalone (DDL), at the XA
 * COMMIT of a prepared XA transaction.  No Connector/C here: the reader
 * hands over the events' fields, the unit tests their own.
 */

#include "slc_core.h"
#include "slc_mysql_session.h"
#include "slc_cache_binlog.h"
#include "slc_cache_policy.h"
#include "slc_cache_session.h"
#include "slc_cache_store.h"
#include "slc_mysql_catalog.h"
#include "slc_sql_classify.h"

/* GTID event flags (MariaDB's log_event.h) */
#define SLC_BINLOG_FL_STANDALONE     0x01
#define SLC_BINLOG_FL_PREPARED_XA    0x40
#define SLC_BINLOG_FL_COMPLETED_XA   0x80

static void
slc_cache_binlog_tables_all(slc_cache_binlog_tables_t *t, int why)
{
    if (!t->all) {
        t->all = 1;
        t->why = why;
    }
}

static void
slc_cache_binlog_tables_add(slc_cache_binlog_tables_t *t, uint32_t hash)
{
    unsigned i;

    if (t->all) {
        return;
    }
    for (i = 0; i < t->n && t->hash[i] != hash; i++) {
        /* seen? */
    }
    if (i < t->n) {
        return;
    }
    if (t->n == SLC_BINLOG_GROUP_TABLES) {
        slc_cache_binlog_tables_all(t, SLC_BINLOG_ALL_TABLES);
        return;
    }
    t->hash[t->n++] = hash;
}

static void
slc_cache_binlog_tables_merge(slc_cache_binlog_tables_t *to,
    const slc_cache_binlog_tables_t *from)
{
    if (from->all) {
        slc_cache_binlog_tables_all(to, from->why);
    }
    for (unsigned i = 0; i < from->n; i++) {
        slc_cache_binlog_tables_add(to, from->hash[i]);
    }
    to->ddl |= from->ddl;
}

void
slc_cache_binlog_group_init(slc_cache_binlog_group_t *g)
{
    memset(g, 0, sizeof(*g));
}

void
slc_cache_binlog_group_free(slc_cache_binlog_group_t *g)
{
    for (unsigned i = 0; i < g->nxa; i++) {
        free(g->xa_tables[i]);
    }
    g->nxa = 0;
}

void
slc_cache_binlog_group_reset(slc_cache_binlog_group_t *g)
{
    g->open = 0;
    g->flags = 0;
    memset(&g->t, 0, sizeof(g->t));
}

void
slc_cache_binlog_group_begin(slc_cache_binlog_group_t *g,
    const slc_gtid_t *gtid, unsigned flags, const slc_cache_binlog_xid_t *xid)
{
    g->open = 1;
    g->gtid = *gtid;
    g->flags = flags;
    if (xid != NULL) {
        g->xid = *xid;
    } else {
        memset(&g->xid, 0, sizeof(g->xid));
    }
    /* a group left open keeps its tables for this one (over, not under) */
}

void
slc_cache_binlog_group_table(slc_cache_binlog_group_t *g, const char *db,
    size_t dblen, const char *table, size_t tlen)
{
    char     key[SLC_SQL_KEY_MAX];
    ssize_t  n = slc_sql_table_key_raw(key, db, dblen, table, tlen);

    if (n < 0) {
        slc_cache_binlog_tables_all(&g->t, SLC_BINLOG_ALL_STATEMENT);
        return;
    }
    slc_cache_binlog_tables_add(&g->t, slc_cache_table_hash(key,
                                                            (size_t) n));
}

void
slc_cache_binlog_group_unreadable(slc_cache_binlog_group_t *g)
{
    slc_cache_binlog_tables_all(&g->t, SLC_BINLOG_ALL_EVENT);
}


/* --- XA ------------------------------------------------------------------ */

static int
slc_cache_binlog_xa_find(const slc_cache_binlog_group_t *g,
    const slc_cache_binlog_xid_t *x)
{
    for (unsigned i = 0; i < g->nxa; i++) {
        if (g->xa[i].format == x->format && g->xa[i].len == x->len
            && memcmp(g->xa[i].data, x->data, x->len) == 0)
        {
            return (int) i;
        }
    }
    return -1;
}

static void
slc_cache_binlog_xa_drop(slc_cache_binlog_group_t *g, unsigned i)
{
    free(g->xa_tables[i]);
    g->nxa--;
    g->xa[i] = g->xa[g->nxa];
    g->xa_tables[i] = g->xa_tables[g->nxa];
}

int
slc_cache_binlog_group_xa_prepare(slc_cache_binlog_group_t *g)
{
    slc_cache_binlog_tables_t *t;
    int                        i = slc_cache_binlog_xa_find(g, &g->xid);

    if (i >= 0) {                       /* the same xid again: the newer */
        slc_cache_binlog_xa_drop(g, (unsigned) i);
    }
    t = g->nxa < SLC_BINLOG_XA_MAX ? malloc(sizeof(*t)) : NULL;
    if (t == NULL) {
        g->xa_lost = 1;                 /* its XA COMMIT: everything */
        return SLC_BINLOG_GROUP_DONE;
    }
    *t = g->t;
    g->xa[g->nxa] = g->xid;
    g->xa_tables[g->nxa++] = t;
    return SLC_BINLOG_GROUP_DONE;
}

/* XA COMMIT or XA ROLLBACK of a prepared transaction (its own group). */
static int
slc_cache_binlog_xa_end(slc_cache_binlog_group_t *g, int commit)
{
    int i = slc_cache_binlog_xa_find(g, &g->xid);

    if (i < 0) {
        if (!commit) {
            return SLC_BINLOG_GROUP_DONE;
        }
        /* prepared before the reader started, or forgotten */
        slc_cache_binlog_tables_all(&g->t, SLC_BINLOG_ALL_XA);
        return SLC_BINLOG_GROUP_APPLY;
    }
    if (commit) {
        slc_cache_binlog_tables_merge(&g->t, g->xa_tables[i]);
    }
    slc_cache_binlog_xa_drop(g, (unsigned) i);
    return commit ? SLC_BINLOG_GROUP_APPLY : SLC_BINLOG_GROUP_DONE;
}


/* --- statements ---------------------------------------------------------- */

/* Whether q starts with the words w (case-insensitive, then a blank or
   the end). */
static int
slc_cache_binlog_starts(const char *q, size_t n, const char *w)
{
    size_t k = strlen(w);

    while (n > 0 && slc_sql_is_blank((uint8_t) *q)) {
        q++;
        n--;
    }
    return n >= k && strncasecmp(q, w, k) == 0
           && (n == k || !slc_sql_is_word_char((uint8_t) q[k]));
}

/* The group ends after this event if it is standalone (DDL, XA COMMIT). */
static int
slc_cache_binlog_end(const slc_cache_binlog_group_t *g)
{
    return (g->flags & SLC_BINLOG_FL_STANDALONE) ? SLC_BINLOG_GROUP_APPLY
                                                 : SLC_BINLOG_GROUP_MORE;
}

/* A statement that writes: what it names, through the catalog. */
static void
slc_cache_binlog_write(slc_cache_binlog_group_t *g, slc_catalog_t *catalog,
    const char *db, size_t dblen, const uint8_t *q, size_t n,
    const slc_sql_info_t *si)
{
    slc_cache_inv_set_t  set;
    char                 dbz[SLC_SQL_NAME_MAX + 1];

    if (dblen > SLC_SQL_NAME_MAX) {
        slc_cache_binlog_tables_all(&g->t, SLC_BINLOG_ALL_STATEMENT);
        return;
    }
    if (dblen > 0) {                    /* (no default database: NULL) */
        memcpy(dbz, db, dblen);
    }
    dbz[dblen] = '\0';
    slc_cache_inv_text(catalog, q, n, si, dbz, &set);
    if (set.all) {
        slc_cache_binlog_tables_all(&g->t, SLC_BINLOG_ALL_STATEMENT);
    }
    for (unsigned i = 0; i < set.n; i++) {
        slc_cache_binlog_tables_add(&g->t, set.hash[i]);
    }
    if (slc_cache_inv_ddl_may(q, n, si)) {
        /* a view or a trigger made, changed or dropped: entries stored
           under the view's name (a statement names the new definition's
           tables, not the view) and what a trigger writes may be stale,
           and the catalog cannot say until its next load: everything */
        g->t.ddl = 1;
        slc_cache_binlog_tables_all(&g->t, SLC_BINLOG_ALL_STATEMENT);
    }
}

int
slc_cache_binlog_group_query(slc_cache_binlog_group_t *g,
    slc_catalog_t *catalog, const char *db, size_t dblen, const char *q,
    size_t n, int nbe, int mode_unknown)
{
    slc_sql_info_t  si;

    if (slc_cache_binlog_starts(q, n, "BEGIN")) {
        return SLC_BINLOG_GROUP_MORE;
    }
    if (slc_cache_binlog_starts(q, n, "COMMIT")
        || (slc_cache_binlog_starts(q, n, "ROLLBACK")
            && !slc_cache_binlog_starts(q, n, "ROLLBACK TO")))
    {
        return SLC_BINLOG_GROUP_APPLY;
    }
    while (n > 0 && slc_sql_is_blank((uint8_t) *q)) {
        q++;
        n--;
    }
    if (slc_cache_binlog_starts(q, n, "XA")) {
        if (g->flags & SLC_BINLOG_FL_COMPLETED_XA) {
            return slc_cache_binlog_xa_end(g,
                !slc_cache_binlog_starts(q + 2, n - 2, "ROLLBACK"));
        }
        return SLC_BINLOG_GROUP_MORE;   /* XA START, XA END */
    }
    if (mode_unknown) {
        slc_cache_binlog_tables_all(&g->t, SLC_BINLOG_ALL_STATEMENT);
        return slc_cache_binlog_end(g);
    }
    slc_sql_classify((const uint8_t *) q, n,
        nbe ? SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES : 0, &si);
    switch (si.kind) {
    case SLC_SQL_SAVEPOINT: case SLC_SQL_EMPTY: case SLC_SQL_SET:
    case SLC_SQL_USE: case SLC_SQL_BEGIN:
        if (!(si.flags & (SLC_SQL_F_WRITE | SLC_SQL_F_STORED_FUNC))) {
            return slc_cache_binlog_end(g);
        }
        break;
    default:
        break;
    }
    slc_cache_binlog_write(g, catalog, db, dblen, (const uint8_t *) q, n,
        &si);
    return slc_cache_binlog_end(g);
}

int
slc_cache_binlog_group_xid(slc_cache_binlog_group_t *g)
{
    (void) g;
    return SLC_BINLOG_GROUP_APPLY;
}


/* --- the sql_mode of a statement ----------------------------------------- */

int
slc_cache_binlog_sql_mode(const uint8_t *st, size_t len, uint64_t *mode)
{
    size_t i = 0;

    while (i < len) {
        switch (st[i]) {
        case 0x00:                      /* Q_FLAGS2_CODE, 4 bytes */
            i += 5;
            break;
        case 0x01:                      /* Q_SQL_MODE_CODE, 8 bytes */
            if (i + 9 > len) {
                return SLC_ERROR;
            }
            *mode = 0;
            for (int k = 7; k >= 0; k--) {
                *mode = (*mode << 8) | st[i + 1 + (size_t) k];
            }
            return SLC_OK;
        default:
            return SLC_ERROR;           /* not where MariaDB writes it */
        }
    }
    return SLC_ERROR;
}
