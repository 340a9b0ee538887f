#include "slc_core.h"
#include "slc_hash.h"
#include "slc_mysql_catalog.h"
#include "slc_mysql_catalog_zone.h"
#include "slc_sql_classify.h"
#include "slc_mysql_proto.h"
#include "slc_palloc.h"

#include <time.h>

/*
 * Building a catalog from one load's rows (pure: no server, no shared
 * memory but the publish at the end), in three phases:
 *
 *   1. every row into nodes, one per name ("db.table" keys, as the cache
 *      makes them): a view's definition classified (the names it reads,
 *      its flags, whether it can be placed at all), a trigger's body
 *      classified (the names it writes, or "anything");
 *   2. closures: a view's base tables through views of views (depth-first
 *      walk, remembered per view), then for each table with triggers and
 *      each view what a write to it writes too (breadth-first, through
 *      the triggers of what is written and the base tables of views);
 *   3. the image: buckets, entries, lists and names, in one buffer.
 *
 * Then the publish compares the new image with the one readers use
 * (slc_mysql_catalog_diff.c), switches the readers to it, and tells the
 * hook what changed.  The nodes live in a pool that dies with the build.
 */

typedef struct slc_catalog_node_s  slc_catalog_node_t;

struct slc_catalog_node_s {
    slc_str_t          key;
    uint32_t           hash;
    uint32_t           off;         /* its name in the image, 0: none */
    unsigned           view:1;      /* a row of VIEWS names it */
    unsigned           placeable:1; /* ... and its definition was read */
    unsigned           walk:2;      /* SLC_CAT_WALK_* */
    unsigned           known:1;     /* walked: its closure is whole */
    unsigned           wall:1;      /* a trigger on it writes anything */
    unsigned           closed_all:1;    /* a write to it: anything */
    unsigned           entry:1;     /* has an entry in the image */
    unsigned           named:1;     /* its name is in the image */
    unsigned           height;      /* walked: views down to tables */
    uint32_t           own_flags;   /* its definition's */
    uint32_t           flags;       /* walked: its closure's */
    uint64_t           def_hash;
    uint64_t           trg_hash;
    unsigned           ntriggers;
    unsigned           nuses, nbase, nwrites, nclosed;
    uint32_t           mark;        /* a write closure's visit */
    slc_catalog_node_t    *uses[SLC_CATALOG_NAMES_MAX];    /* definition */
    slc_catalog_node_t    *base[SLC_CATALOG_NAMES_MAX];    /* view closure */
    slc_catalog_node_t    *writes[SLC_CATALOG_NAMES_MAX];  /* its triggers' */
    slc_catalog_node_t    *closed[SLC_CATALOG_NAMES_MAX];  /* write closure */
    slc_catalog_node_t    *next;
};

#define SLC_CAT_WALK_NONE   0
#define SLC_CAT_WALK_BUSY   1       /* on the walk's path: a cycle */
#define SLC_CAT_WALK_DONE   2

/* A walk's answers besides SLC_OK: UNKNOWN is the view's own (kept),
   DEEP is the start's (the views under it may be fine from elsewhere). */
#define SLC_CAT_UNKNOWN     1
#define SLC_CAT_DEEP        2

typedef struct {
    slc_pool_t        *pool;
    slc_hash_t         names;       /* key -> node */
    slc_catalog_node_t    *first;
    slc_catalog_node_t   **last;
    uint32_t           stamp;
    slc_catalog_outcome_t *out;
} slc_catalog_build_t;

#define SLC_CATALOG_HOOKS  4

static slc_catalog_changed_pt  slc_catalog_hooks[SLC_CATALOG_HOOKS];

void
slc_catalog_on_change(slc_catalog_changed_pt fn)
{
    for (unsigned i = 0; i < SLC_CATALOG_HOOKS; i++) {
        if (slc_catalog_hooks[i] == fn || slc_catalog_hooks[i] == NULL) {
            slc_catalog_hooks[i] = fn;  /* once, however often asked */
            return;
        }
    }
}

static void
slc_catalog_tell(slc_catalog_t *c, const slc_str_t *names, unsigned n,
    int all)
{
    for (unsigned i = 0; i < SLC_CATALOG_HOOKS && slc_catalog_hooks[i]; i++)
    {
        slc_catalog_hooks[i](c->cycle, c->up, names, n, all);
    }
}

/* FNV-1a, 64 bits: a definition's fingerprint for the diff. */
static uint64_t
slc_catalog_hash64(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= ((const uint8_t *) p)[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

#define SLC_CAT_HASH64_BASIS  0xcbf29ce484222325ull

unsigned
slc_catalog_sql_mode(const char *s, size_t len)
{
    unsigned mode = 0;

    for (size_t i = 0, j; i < len; i = j + 1) {
        for (j = i; j < len && s[j] != ','; j++) {
            /* to the next comma */
        }
        if (j - i == 11 && memcmp(s + i, "ANSI_QUOTES", 11) == 0) {
            mode |= SLC_CATALOG_MODE_ANSI_QUOTES;
        } else if (j - i == 20
                   && memcmp(s + i, "NO_BACKSLASH_ESCAPES", 20) == 0)
        {
            mode |= SLC_CATALOG_MODE_NO_BACKSLASH_ESCAPES;
        }
    }
    return mode;
}

/* ---- names ------------------------------------------------------------ */

/*
 * A part of a name into dst, as the cache makes it: ASCII letters
 * lowercased and, when `quoted` (a name from a statement's text, inside
 * its backticks), a doubled backtick made one.  Its length, or -1 when it
 * is longer than a name may be.
 */
static ssize_t
slc_catalog_part(char *dst, const char *p, size_t n, int quoted)
{
    size_t o = 0;

    for (size_t i = 0; i < n; i++) {
        char c = p[i];

        if (quoted && c == '`' && i + 1 < n && p[i + 1] == '`') {
            i++;
        }
        if (o == SLC_CATALOG_PART_MAX) {
            return -1;
        }
        dst[o++] = (c >= 'A' && c <= 'Z') ? (char) (c + 32) : c;
    }
    return (ssize_t) o;
}

/* "db.table" into dst (SLC_CATALOG_NAME_MAX + 1): its length, or -1. */
static ssize_t
slc_catalog_key(char *dst, const slc_str_t *db, int dbq, const char *t,
    size_t tlen, int tq)
{
    ssize_t d = slc_catalog_part(dst, db->data, db->len, dbq), n;

    if (d < 0) {
        return -1;
    }
    dst[d] = '.';
    n = slc_catalog_part(dst + d + 1, t, tlen, tq);
    if (n < 0) {
        return -1;
    }
    dst[d + 1 + n] = '\0';
    return d + 1 + n;
}

/* The node of a key, made on first sight; NULL: out of memory. */
static slc_catalog_node_t *
slc_catalog_node(slc_catalog_build_t *b, const char *key, size_t len)
{
    slc_catalog_node_t *n = slc_hash_find(&b->names, key, len);

    if (n != NULL) {
        return n;
    }
    n = slc_palloc(b->pool, sizeof(*n));
    if (n == NULL) {
        return NULL;
    }
    n->key.data = slc_pstrndup(b->pool, key, len);
    n->key.len = len;
    n->hash = slc_hash_key(key, len);
    if (n->key.data == NULL
        || slc_hash_add(&b->names, n->key.data, len, n) != SLC_OK)
    {
        return NULL;
    }
    *b->last = n;
    b->last = &n->next;
    return n;
}

/* The node of an object named by information_schema (no quotes there). */
static slc_catalog_node_t *
slc_catalog_row_node(slc_catalog_build_t *b, const slc_str_t *db,
    const slc_str_t *name, int *too_long)
{
    char    key[SLC_CATALOG_NAME_MAX + 1];
    ssize_t n = slc_catalog_key(key, db, 0, name->data, name->len, 0);

    *too_long = n < 0;
    return n < 0 ? NULL : slc_catalog_node(b, key, (size_t) n);
}

/* Add n to a set of at most SLC_CATALOG_NAMES_MAX: SLC_ERROR when full. */
static int
slc_catalog_set_add(slc_catalog_node_t **set, unsigned *count,
    slc_catalog_node_t *n)
{
    for (unsigned i = 0; i < *count; i++) {
        if (set[i] == n) {
            return SLC_OK;
        }
    }
    if (*count == SLC_CATALOG_NAMES_MAX) {
        return SLC_ERROR;
    }
    set[(*count)++] = n;
    return SLC_OK;
}

/*
 * The tables a classified text names, into a set (at most `max`): an
 * unqualified one is in `schema`.  SLC_ERROR: a name too long, more than
 * fit, out of memory (the caller cannot name them all).
 */
static int
slc_catalog_text_names(slc_catalog_build_t *b, const slc_str_t *text,
    const slc_sql_info_t *si, const slc_str_t *schema,
    slc_catalog_node_t **set, unsigned *count)
{
    char            key[SLC_CATALOG_NAME_MAX + 1];
    slc_catalog_node_t *n;

    for (unsigned i = 0; i < si->ntables; i++) {
        const slc_sql_name_t *nm = &si->tables[i];
        slc_str_t db = nm->db_len > 0
                       ? (slc_str_t) { nm->db_len, text->data + nm->db_off }
                       : *schema;
        ssize_t   len = slc_catalog_key(key, &db, nm->db_len > 0,
                            text->data + nm->off, nm->len, 1);

        if (len < 0 || (n = slc_catalog_node(b, key, (size_t) len)) == NULL
            || slc_catalog_set_add(set, count, n) != SLC_OK)
        {
            return SLC_ERROR;
        }
    }
    return SLC_OK;
}

/* ---- phase 1: rows ---------------------------------------------------- */

static void
slc_catalog_hidden(slc_catalog_build_t *b, const slc_catalog_node_t *v)
{
    if (b->out->hidden++ == 0) {
        memcpy(b->out->hidden_name, v->key.data, v->key.len);
        b->out->hidden_name[v->key.len] = '\0';
    }
}

/*
 * A view: placeable when its definition (canonical text: qualified names
 * in backticks, strings with backslash escapes whatever the sql_mode) is
 * one SELECT whose tables are all named.
 */
static int
slc_catalog_view_row(slc_catalog_build_t *b, const slc_catalog_view_row_t *r)
{
    const uint32_t  bad = SLC_SQL_F_TABLES_PARTIAL | SLC_SQL_F_UNTERMINATED
                          | SLC_SQL_F_MULTI;
    slc_sql_info_t  si;
    slc_catalog_node_t *v;
    int             too_long;

    v = slc_catalog_row_node(b, &r->schema, &r->name, &too_long);
    if (v == NULL || v->view) {
        /* a name the cache cannot make either; a repeated row */
        return too_long || v != NULL ? SLC_OK : SLC_ERROR;
    }
    v->view = 1;
    v->def_hash = slc_catalog_hash64(SLC_CAT_HASH64_BASIS, r->definition.data,
        r->definition.len);
    if (r->definition.len == 0) {
        slc_catalog_hidden(b, v);       /* no SELECT on it: not shown */
        return SLC_OK;
    }
    if (slc_sql_classify((const uint8_t *) r->definition.data,
            r->definition.len, 0, &si) != SLC_OK
        || si.kind != SLC_SQL_SELECT || (si.flags & bad))
    {
        return SLC_OK;
    }
    if (slc_catalog_text_names(b, &r->definition, &si, &r->schema, v->uses,
            &v->nuses) != SLC_OK)
    {
        v->nuses = 0;
        return SLC_OK;
    }
    v->placeable = 1;
    v->own_flags = si.flags;
    return SLC_OK;
}

/*
 * What a trigger's body writes: SLC_OK with its tables added to t's set
 * (every name it lists counts as written: safe), or SLC_ERROR when its
 * writes cannot be named: not one statement of a plain kind, a call, a
 * sequence moved, a name too long or too many, a double quote under
 * ANSI_QUOTES (a name the classifier reads as a string).
 */
static int
slc_catalog_trigger_writes(slc_catalog_build_t *b,
    const slc_catalog_trigger_row_t *r,
    slc_catalog_node_t *t)
{
    const uint32_t bad = SLC_SQL_F_MULTI | SLC_SQL_F_STORED_FUNC
                         | SLC_SQL_F_TABLES_PARTIAL | SLC_SQL_F_UNTERMINATED
                         | SLC_SQL_F_SEQUENCE;
    unsigned       status = (r->sql_mode
                             & SLC_CATALOG_MODE_NO_BACKSLASH_ESCAPES)
                            ? SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES : 0;
    slc_sql_info_t si;

    if ((r->sql_mode & SLC_CATALOG_MODE_ANSI_QUOTES)
        && memchr(r->body.data, '"', r->body.len) != NULL)
    {
        return SLC_ERROR;
    }
    if (slc_sql_classify((const uint8_t *) r->body.data, r->body.len, status,
            &si) != SLC_OK || (si.flags & bad))
    {
        return SLC_ERROR;
    }
    switch (si.kind) {
    case SLC_SQL_INSERT: case SLC_SQL_UPDATE: case SLC_SQL_DELETE:
    case SLC_SQL_REPLACE: case SLC_SQL_SET: case SLC_SQL_SELECT:
    case SLC_SQL_DO:
        break;
    default:
        return SLC_ERROR;           /* BEGIN ... END, CALL, UNKNOWN ... */
    }
    return slc_catalog_text_names(b, &r->body, &si, &r->schema, t->writes,
        &t->nwrites);
}

static int
slc_catalog_trigger_row(slc_catalog_build_t *b,
    const slc_catalog_trigger_row_t *r)
{
    slc_catalog_node_t *t;
    uint64_t        h = SLC_CAT_HASH64_BASIS;
    int             too_long;

    t = slc_catalog_row_node(b, &r->table_schema, &r->table, &too_long);
    if (t == NULL) {
        return too_long ? SLC_OK : SLC_ERROR;
    }
    t->ntriggers++;
    /* a sum: the same triggers in any order give the same fingerprint */
    h = slc_catalog_hash64(h, r->schema.data, r->schema.len);
    h = slc_catalog_hash64(h, "", 1);
    h = slc_catalog_hash64(h, r->body.data, r->body.len);
    h = slc_catalog_hash64(h, &r->sql_mode, sizeof(r->sql_mode));
    t->trg_hash += h;
    if (!t->wall && slc_catalog_trigger_writes(b, r, t) != SLC_OK) {
        t->wall = 1;
    }
    return SLC_OK;
}

/* ---- phase 2: closures ------------------------------------------------ */

/*
 * The base tables of view v, reached at depth d (1: the view asked
 * about), into v->base with the OR of the flags of every definition on
 * the way.  A view on a cycle, one that cannot be placed, one under which
 * a view cannot be placed, one with more base tables than an answer holds
 * is unknown, and so is every view above it: remembered.  Deeper than
 * SLC_CATALOG_DEPTH_MAX from where the walk began is that start's
 * problem only (SLC_CAT_DEEP): the views under it are walked again from
 * their own start.  So the C stack is at most DEPTH_MAX + 1 frames deep,
 * and each view is walked once but for such paths.
 */
static int
slc_catalog_walk(slc_catalog_node_t *v, unsigned d)
{
    int rc = v->placeable ? SLC_OK : SLC_CAT_UNKNOWN;

    if (v->walk == SLC_CAT_WALK_DONE) {
        return d + v->height - 1 > SLC_CATALOG_DEPTH_MAX ? SLC_CAT_DEEP
               : v->known ? SLC_OK : SLC_CAT_UNKNOWN;
    }
    if (v->walk == SLC_CAT_WALK_BUSY) {
        return SLC_CAT_UNKNOWN;
    }
    if (d > SLC_CATALOG_DEPTH_MAX) {
        return SLC_CAT_DEEP;
    }
    v->walk = SLC_CAT_WALK_BUSY;
    v->height = 1;
    v->flags = v->own_flags;
    for (unsigned i = 0; rc == SLC_OK && i < v->nuses; i++) {
        slc_catalog_node_t *u = v->uses[i];

        if (!u->view) {
            rc = slc_catalog_set_add(v->base, &v->nbase, u) == SLC_OK
                 ? SLC_OK : SLC_CAT_UNKNOWN;
            continue;
        }
        rc = slc_catalog_walk(u, d + 1);
        for (unsigned k = 0; rc == SLC_OK && k < u->nbase; k++) {
            if (slc_catalog_set_add(v->base, &v->nbase,
                u->base[k]) != SLC_OK) {
                rc = SLC_CAT_UNKNOWN;
            }
        }
        v->flags |= u->flags;
        v->height = slc_max(v->height, u->height + 1);
    }
    if (rc == SLC_CAT_DEEP) {
        v->walk = SLC_CAT_WALK_NONE;
        v->nbase = 0;
        return rc;
    }
    v->walk = SLC_CAT_WALK_DONE;
    v->known = rc == SLC_OK;
    return rc;
}

static void
slc_catalog_walk_views(slc_catalog_build_t *b)
{
    for (slc_catalog_node_t *v = b->first; v != NULL; v = v->next) {
        if (v->view && slc_catalog_walk(v, 1) == SLC_CAT_DEEP) {
            v->walk = SLC_CAT_WALK_DONE;     /* too deep from itself */
            v->known = 0;
            v->height = SLC_CATALOG_DEPTH_MAX + 1;
        }
    }
}

/* One name reached by a write to t: added to its closure and queued. */
static void
slc_catalog_reach(slc_catalog_build_t *b, slc_catalog_node_t *t,
    slc_catalog_node_t *y,
    slc_catalog_node_t **queue, unsigned *tail)
{
    if (y->mark == b->stamp) {
        return;
    }
    y->mark = b->stamp;
    if (t->nclosed == SLC_CATALOG_NAMES_MAX) {
        t->closed_all = 1;
        return;
    }
    t->closed[t->nclosed++] = y;
    queue[(*tail)++] = y;
}

/*
 * What a write to t writes too: breadth-first through the base tables of
 * a view written and the tables the triggers of what is written write.
 * A trigger that may write anything, a view that cannot be placed, more
 * names than an answer holds: anything.  The queue never holds more than
 * the closure plus t.
 */
static void
slc_catalog_write_close(slc_catalog_build_t *b, slc_catalog_node_t *t)
{
    slc_catalog_node_t *queue[SLC_CATALOG_NAMES_MAX + 1];
    unsigned        head = 0, tail = 0;

    t->mark = ++b->stamp;
    queue[tail++] = t;
    while (head < tail && !t->closed_all) {
        slc_catalog_node_t *x = queue[head++];

        if ((x->view && !x->known) || x->wall) {
            t->closed_all = 1;
            break;
        }
        for (unsigned i = 0; x->view && i < x->nbase; i++) {
            slc_catalog_reach(b, t, x->base[i], queue, &tail);
        }
        for (unsigned i = 0; i < x->nwrites; i++) {
            slc_catalog_reach(b, t, x->writes[i], queue, &tail);
        }
    }
}

/* ---- phase 3: the image ----------------------------------------------- */

typedef struct {
    unsigned    nentries;
    uint32_t    nbuckets;
    size_t      nrefs;
    size_t      names;      /* bytes */
} slc_catalog_size_t;

static void
slc_catalog_name_needed(slc_catalog_node_t *n, slc_catalog_size_t *sz)
{
    if (!n->named) {
        n->named = 1;
        sz->names += 2 + n->key.len + 1;
    }
}

/* Which nodes get an entry and which names the image holds: its size. */
static size_t
slc_catalog_measure(slc_catalog_build_t *b, slc_catalog_size_t *sz)
{
    for (slc_catalog_node_t *n = b->first; n != NULL; n = n->next) {
        if (!n->view && n->ntriggers == 0) {
            continue;
        }
        n->entry = 1;
        sz->nentries++;
        slc_catalog_name_needed(n, sz);
        for (unsigned i = 0; n->known && i < n->nbase; i++) {
            slc_catalog_name_needed(n->base[i], sz);
        }
        for (unsigned i = 0; !n->closed_all && i < n->nclosed; i++) {
            slc_catalog_name_needed(n->closed[i], sz);
        }
        sz->nrefs += (n->known ? n->nbase : 0)
                     + (n->closed_all ? 0 : n->nclosed);
    }
    sz->nbuckets = 16;
    while (sz->nbuckets < 2 * sz->nentries) {
        sz->nbuckets *= 2;
    }
    return sizeof(slc_catalog_image_t) + (size_t) sz->nbuckets * 4
           + (size_t) sz->nentries * sizeof(slc_catalog_entry_t)
           + sz->nrefs * 4 + sz->names;
}

/* A list of names at *ref: its offset. */
static uint32_t
slc_catalog_list(uint8_t *img, uint32_t *ref, slc_catalog_node_t **set,
    unsigned n)
{
    uint32_t at = *ref;

    for (unsigned i = 0; i < n; i++, *ref += 4) {
        memcpy(img + *ref, &set[i]->off, 4);
    }
    return at;
}

static void
slc_catalog_write_entry(uint8_t *img, uint32_t *ref, slc_catalog_node_t *n,
    slc_catalog_entry_t *e)
{
    e->name = n->off;
    e->hash = n->hash;
    e->view = !n->view ? SLC_CATALOG_E_NONE
              : n->known ? SLC_CATALOG_E_VIEW : SLC_CATALOG_E_UNKNOWN;
    e->flags = n->known ? n->flags : 0;
    e->nreads = (uint16_t) (n->known ? n->nbase : 0);
    e->reads = slc_catalog_list(img, ref, n->base, e->nreads);
    e->writes = n->closed_all ? SLC_CATALOG_W_ALL
                : n->nclosed > 0 ? SLC_CATALOG_W_LIST : SLC_CATALOG_W_NONE;
    e->nwrites = (uint16_t) (n->closed_all ? 0 : n->nclosed);
    e->wlist = slc_catalog_list(img, ref, n->closed, e->nwrites);
    e->ntriggers = (uint16_t) slc_min(n->ntriggers, 65535u);
    e->def_hash = n->def_hash;
    e->trg_hash = n->trg_hash;
}

/* The image into img (zeroed, as large as measured). */
static void
slc_catalog_write(slc_catalog_build_t *b, uint8_t *img,
    const slc_catalog_size_t *sz)
{
    slc_catalog_image_t *h = (slc_catalog_image_t *) img;
    uint32_t            *bucket = (uint32_t *) (h + 1);
    slc_catalog_entry_t *e = (slc_catalog_entry_t *) (bucket + sz->nbuckets);
    uint32_t             ref = (uint32_t) ((uint8_t *) (e + sz->nentries)
                                           - img);
    uint32_t             at = ref + (uint32_t) sz->nrefs * 4, i = 0;

    for (slc_catalog_node_t *n = b->first; n != NULL; n = n->next) {
        uint16_t len = (uint16_t) n->key.len;

        if (n->named) {
            n->off = at;
            memcpy(img + at, &len, 2);
            memcpy(img + at + 2, n->key.data, len);
            at += 2 + len + 1;
        }
    }
    for (slc_catalog_node_t *n = b->first; n != NULL; n = n->next) {
        uint32_t k = n->hash & (sz->nbuckets - 1);

        if (!n->entry) {
            continue;
        }
        slc_catalog_write_entry(img, &ref, n, &e[i]);
        while (bucket[k] != 0) {
            k = (k + 1) & (sz->nbuckets - 1);
        }
        bucket[k] = ++i;
    }
    h->nbuckets = sz->nbuckets;
    h->nentries = sz->nentries;
    h->used = at;
}

/* Phases 1 and 2. */
static int
slc_catalog_nodes(slc_catalog_build_t *b, const slc_catalog_rows_t *rows)
{
    for (unsigned i = 0; i < rows->nviews; i++) {
        if (slc_catalog_view_row(b, &rows->views[i]) != SLC_OK) {
            return SLC_ERROR;
        }
    }
    for (unsigned i = 0; i < rows->ntriggers; i++) {
        if (slc_catalog_trigger_row(b, &rows->triggers[i]) != SLC_OK) {
            return SLC_ERROR;
        }
    }
    slc_catalog_walk_views(b);
    for (slc_catalog_node_t *n = b->first; n != NULL; n = n->next) {
        if (n->view || n->ntriggers > 0) {
            slc_catalog_write_close(b, n);
        }
    }
    return SLC_OK;
}

/*
 * The image of `rows` into img (room bytes): SLC_OK, SLC_AGAIN when it
 * does not fit (out->need says what it takes), SLC_ERROR: out of memory.
 */
static int
slc_catalog_build(const slc_catalog_rows_t *rows, uint8_t *img, size_t room,
    slc_catalog_outcome_t *out)
{
    slc_catalog_build_t b = { .out = out };
    slc_catalog_size_t  sz = { 0 };
    int             rc = SLC_ERROR;

    b.pool = slc_pool_create(64 * 1024);
    if (b.pool == NULL) {
        return SLC_ERROR;
    }
    slc_hash_init(&b.names, b.pool);
    b.last = &b.first;
    if (slc_catalog_nodes(&b, rows) == SLC_OK) {
        out->need = slc_catalog_measure(&b, &sz);
        rc = out->need > room || out->need > UINT32_MAX ? SLC_AGAIN : SLC_OK;
    }
    if (rc == SLC_OK) {
        memset(img, 0, out->need);
        slc_catalog_write(&b, img, &sz);
    }
    slc_pool_destroy(b.pool);
    return rc;
}

/* ---- publishing ------------------------------------------------------- */

static uint64_t
slc_catalog_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* The image's header: the load's facts, state and counts. */
static void
slc_catalog_header(const slc_catalog_rows_t *rows, slc_catalog_image_t *h,
    int fits)
{
    h->state = SLC_CATALOG_S_LOADED
               | (rows->blind ? SLC_CATALOG_S_BLIND : 0)
               | (fits ? 0 : SLC_CATALOG_S_TOO_SMALL)
               | ((rows->sql_mode & SLC_CATALOG_MODE_ANSI_QUOTES)
                  ? SLC_CATALOG_S_ANSI_QUOTES : 0)
               | (rows->read_uncommitted ? SLC_CATALOG_S_READ_UNCOMMITTED
                                         : 0);
    h->ddl_at = rows->ddl_at;
    h->nviews = rows->nviews;
    h->ntriggers = rows->ntriggers;
    h->loaded_at = slc_catalog_now();
    strlcpy(h->server, rows->server != NULL ? rows->server : "",
        sizeof(h->server));
    if (!fits || rows->blind) {
        h->nbuckets = h->nentries = 0;
        h->used = sizeof(*h);
    }
}

/* Build into img; an image that cannot answer (blind, too small) is a
   header alone.  SLC_ERROR: out of memory. */
static int
slc_catalog_write_image(slc_catalog_t *c, const slc_catalog_rows_t *rows,
    uint8_t *img,
    slc_catalog_outcome_t *out)
{
    int rc = SLC_AGAIN;

    memset(img, 0, sizeof(slc_catalog_image_t));
    if (!rows->blind) {
        rc = slc_catalog_build(rows, img, c->half, out);
        if (rc == SLC_ERROR) {
            return SLC_ERROR;
        }
    }
    out->fits = rows->blind || rc == SLC_OK;
    slc_catalog_header(rows, (slc_catalog_image_t *) img, out->fits);
    ((slc_catalog_image_t *) img)->hidden = out->hidden;
    return SLC_OK;
}

/*
 * The new image against the one readers use (old): what changed, into
 * `ch` and out, and the new image's version (+1 when anything did, its
 * state included).  An image that cannot answer tells nothing.
 */
static void
slc_catalog_compare(const uint8_t *old, uint8_t *img, size_t half,
    slc_catalog_changes_t *ch, slc_catalog_outcome_t *out)
{
    const slc_catalog_image_t *oh = (const slc_catalog_image_t *) old;
    slc_catalog_image_t       *nh = (slc_catalog_image_t *) img;

    if (!(nh->state & (SLC_CATALOG_S_BLIND | SLC_CATALOG_S_TOO_SMALL))) {
        slc_catalog_diff(old, img, half, ch);
    }
    out->changed = ch->all || ch->n > 0;
    out->all = ch->all;
    out->nchanged = ch->all ? 0 : ch->n;
    nh->version = oh->version + (out->changed || oh->state != nh->state);
}

int
slc_catalog_publish(slc_catalog_t *c, const slc_catalog_rows_t *rows,
    slc_catalog_outcome_t *out)
{
    uint8_t               *img = malloc(c->half), *old = malloc(c->half);
    slc_catalog_changes_t *ch = calloc(1, sizeof(*ch));
    int                    rc = SLC_ERROR;

    memset(out, 0, sizeof(*out));
    out->room = c->half;
    if (img != NULL && old != NULL && ch != NULL
        && slc_catalog_write_image(c, rows, img, out) == SLC_OK)
    {
        if (slc_catalog_snapshot(c, old) != SLC_OK) {
            /* a writer stuck in the other image: as never loaded */
            memset(old, 0, sizeof(slc_catalog_image_t));
        }
        slc_catalog_compare(old, img, c->half, ch, out);
        slc_catalog_switch(c, img, ((slc_catalog_image_t *) img)->used);
        /* after the switch: what is stored from now on knows the new */
        if (out->changed) {
            slc_catalog_tell(c, ch->name, out->nchanged, ch->all);
        }
        rc = SLC_OK;
    }
    free(ch);
    free(old);
    free(img);
    return rc;
}
