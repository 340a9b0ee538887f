#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_hash.h"
#include "slc_log.h"
#include "slc_mysql_catalog.h"
#include "slc_mysql_catalog_zone.h"
#include "slc_mysql_monitor.h"
#include "slc_role.h"
#include "slc_seqlock.h"

#include <sched.h>

/*
 * The schema catalog: its directives (upstream level), its zones, the
 * questions workers ask, the master's stats, and the zone's writer side
 * (a snapshot and the switch).  What an image holds is built in
 * slc_mysql_catalog_build.c; the loads are slc_mysql_catalog_load.c.
 */

#define SLC_CATALOG_INTERVAL_MIN    100                 /* ms */
#define SLC_CATALOG_SIZE_MIN        (64 * 1024)
#define SLC_CATALOG_SIZE_MAX        (1024 * 1024 * 1024)
#define SLC_CATALOG_ZONE_PREFIX     "mysql_catalog:"

/* The module's conf of an upstream. */
typedef struct {
    long long       interval;       /* monitor_schema_interval, ms */
    size_t          size;           /* monitor_schema_size */
    slc_catalog_t  *catalog;        /* NULL: nobody wanted it */
    const char     *directive;      /* the first of ours given, for */
    const char     *file;           /* an error without monitor_user */
    unsigned        line;
} slc_catalog_conf_t;

static void *slc_catalog_create_conf(slc_conf_t *cf, unsigned level);
static const char *slc_catalog_merge_conf(slc_conf_t *cf, unsigned level,
    void *parent, void *child);
static const char *slc_catalog_set_interval(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static const char *slc_catalog_set_size(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static int  slc_catalog_init_conf(slc_cycle_t *cycle, char *err,
    size_t errlen);
static void slc_catalog_report(slc_cycle_t *cycle);
static void slc_catalog_exit_process(slc_cycle_t *cycle,
    const slc_role_t *role);

static const slc_command_t slc_catalog_commands[] = {
    { .name = "monitor_schema_interval",
      .type = SLC_CONF_UPSTREAM | SLC_CONF_TAKE1,
      .set = slc_catalog_set_interval, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_catalog_conf_t, interval) },
    { .name = "monitor_schema_size",
      .type = SLC_CONF_UPSTREAM | SLC_CONF_TAKE1,
      .set = slc_catalog_set_size, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_catalog_conf_t, size) },
    { .name = NULL }
};

slc_module_t slc_mysql_catalog_module = {
    .name = "mysql_catalog",
    .type = SLC_MODULE_CORE,
    .commands = slc_catalog_commands,
    .create_conf = slc_catalog_create_conf,
    .merge_conf = slc_catalog_merge_conf,
    .init_conf = slc_catalog_init_conf,
    .report = slc_catalog_report,
    .exit_process = slc_catalog_exit_process,
};

/* ---- configuration ---------------------------------------------------- */

static slc_catalog_conf_t *
slc_catalog_conf(const slc_upstream_t *up)
{
    return slc_module_conf(up->mod_conf, &slc_mysql_catalog_module);
}

static void *
slc_catalog_create_conf(slc_conf_t *cf, unsigned level)
{
    slc_catalog_conf_t *cc;

    if (level != SLC_CONF_UPSTREAM) {
        return NULL;
    }
    cc = slc_palloc(cf->pool, sizeof(*cc));
    if (cc == NULL) {
        return SLC_CONF_ERROR;
    }
    cc->interval = SLC_CONF_UNSET;
    cc->size = SLC_CONF_UNSET_SIZE;
    return cc;
}

static const char *
slc_catalog_merge_conf(slc_conf_t *cf, unsigned level, void *parent,
    void *child)
{
    slc_catalog_conf_t *cc = child;

    (void) cf;
    (void) level;
    (void) parent;
    slc_conf_merge_value(cc->interval, SLC_CONF_UNSET, 10000);
    slc_conf_merge_size(cc->size, SLC_CONF_UNSET_SIZE,
        (size_t) 1024 * 1024);
    return NULL;
}

/* Where the first of our directives is, for the check of monitor_user. */
static void
slc_catalog_conf_where(slc_catalog_conf_t *cc, slc_conf_t *cf,
    const slc_command_t *cmd)
{
    if (cc->directive == NULL) {
        cc->directive = cmd->name;
        cc->file = cf->filename;
        cc->line = cf->line;
    }
}

static const char *
slc_catalog_set_interval(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_catalog_conf_t *cc = conf;
    const char         *rv = slc_conf_set_msec_slot(cf, cmd, conf);

    if (rv != NULL) {
        return rv;
    }
    if (cc->interval < SLC_CATALOG_INTERVAL_MIN) {
        return "\"monitor_schema_interval\" is below 100ms";
    }
    slc_catalog_conf_where(cc, cf, cmd);
    return NULL;
}

static const char *
slc_catalog_set_size(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_catalog_conf_t *cc = conf;
    const char         *rv = slc_conf_set_size_slot(cf, cmd, conf);

    if (rv != NULL) {
        return rv;
    }
    if (cc->size < SLC_CATALOG_SIZE_MIN || cc->size > SLC_CATALOG_SIZE_MAX) {
        return "\"monitor_schema_size\" must be from 64k to 1g";
    }
    slc_catalog_conf_where(cc, cf, cmd);
    return NULL;
}

static int
slc_catalog_init_conf(slc_cycle_t *cycle, char *err, size_t errlen)
{
    slc_mysql_conf_t   *mc = slc_mysql_conf(cycle);
    slc_catalog_conf_t *cc;

    for (slc_upstream_t *up = mc != NULL ? mc->upstreams : NULL; up != NULL;
         up = up->next)
    {
        cc = slc_catalog_conf(up);
        if (cc != NULL && cc->directive != NULL
            && slc_monitor_conf(up)->user == NULL)
        {
            snprintf(err, errlen, "%s:%u: \"%s\" needs \"monitor_user\"",
                cc->file, cc->line, cc->directive);
            return SLC_ERROR;
        }
    }
    return SLC_OK;
}

/* ---- the zone --------------------------------------------------------- */

size_t
slc_catalog_half(size_t size)
{
    return size > SLC_CATALOG_ZONE_HDR
           ? ((size - SLC_CATALOG_ZONE_HDR) / 2) & ~(size_t) 63 : 0;
}

void
slc_catalog_zone_format(void *addr, size_t size)
{
    slc_catalog_zone_t *z = addr;

    memset(addr, 0, SLC_CATALOG_ZONE_HDR + 2 * sizeof(slc_catalog_image_t));
    memset((uint8_t *) addr + SLC_CATALOG_ZONE_HDR + slc_catalog_half(size),
        0, sizeof(slc_catalog_image_t));
    z->half = slc_catalog_half(size);
    z->magic = SLC_CATALOG_MAGIC;
}

/* A zone mapped afresh, or resized by a reload: empty (its first load
   tells the hook "all"). */
static void
slc_catalog_zone_init(slc_shm_zone_t *z, const void *prev)
{
    (void) prev;
    slc_catalog_zone_format(z->addr, z->size);
}

static int
slc_catalog_zone_attach(slc_shm_zone_t *z, slc_cycle_t *cycle, char *err,
    size_t errlen)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);
    const char       *name = z->name + sizeof(SLC_CATALOG_ZONE_PREFIX) - 1;
    slc_catalog_t    *c;

    (void) err;
    (void) errlen;
    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        c = slc_catalog_of(up);
        if (c == NULL || strcmp(up->name.data, name) != 0) {
            continue;
        }
        if (((slc_catalog_zone_t *) z->addr)->magic != SLC_CATALOG_MAGIC) {
            slc_catalog_zone_format(z->addr, z->size);
        }
        c->zone = z->addr;
        c->half = slc_catalog_half(z->size);
    }
    return SLC_OK;
}

int
slc_catalog_want(slc_cycle_t *cycle, slc_upstream_t *up, char *err,
    size_t errlen)
{
    slc_catalog_conf_t *cc = slc_catalog_conf(up);
    slc_shm_zone_t     *z;
    char                name[sizeof(SLC_CATALOG_ZONE_PREFIX) + 128];

    if (cc != NULL && cc->catalog != NULL) {
        return SLC_OK;
    }
    if (cc == NULL || slc_monitor_conf(up)->user == NULL) {
        snprintf(err, errlen, "upstream \"%s\" has no \"monitor_user\" (its "
            "schema catalog is loaded by the monitor)", up->name.data);
        return SLC_ERROR;
    }
    cc->catalog = slc_palloc(cycle->pool, sizeof(*cc->catalog));
    if (cc->catalog == NULL) {
        snprintf(err, errlen, "out of memory");
        return SLC_ERROR;
    }
    *cc->catalog = (slc_catalog_t) { .cycle = cycle, .up = up,
        .interval = cc->interval, .size = cc->size };
    snprintf(name, sizeof(name), SLC_CATALOG_ZONE_PREFIX "%s", up->name.data);
    z = slc_shm_zone_add(cycle, name, cc->size, &slc_mysql_catalog_module,
        err, errlen);
    if (z == NULL) {
        return SLC_ERROR;
    }
    z->init = slc_catalog_zone_init;
    z->attach = slc_catalog_zone_attach;
    return SLC_OK;
}

slc_catalog_t *
slc_catalog_of(const slc_upstream_t *up)
{
    const slc_catalog_conf_t *cc = slc_catalog_conf(up);

    return cc != NULL ? cc->catalog : NULL;
}

slc_catalog_t *
slc_catalog_mem(void *addr, size_t size)
{
    slc_catalog_t *c;

    if (slc_catalog_half(size) < 1024 || size > SLC_CATALOG_SIZE_MAX) {
        return NULL;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return NULL;
    }
    slc_catalog_zone_format(addr, size);
    c->zone = addr;
    c->half = slc_catalog_half(size);
    c->size = size;
    return c;
}

/* ---- reading an image (bounds checked: it may be torn) ---------------- */

const char *
slc_catalog_name(const void *img, size_t half, uint32_t off, size_t *len)
{
    const uint8_t *p = slc_catalog_at(img, half, off, 2);
    uint16_t       n;

    if (p == NULL || off == 0) {
        return NULL;
    }
    memcpy(&n, p, 2);
    if (n > SLC_CATALOG_NAME_MAX
        || slc_catalog_at(img, half, (uint64_t) off + 2, n) == NULL)
    {
        return NULL;
    }
    *len = n;
    return (const char *) p + 2;
}

uint32_t
slc_catalog_ref(const void *img, size_t half, uint32_t off, unsigned i)
{
    const uint8_t *p = slc_catalog_at(img, half, off + (uint64_t) i * 4, 4);
    uint32_t       r = 0;

    if (p != NULL) {
        memcpy(&r, p, 4);
    }
    return r;
}

/*
 * The counts of an image's header, each loaded once (a torn image may
 * change under the reader: what bounds an access is checked as it is
 * used), and where its entries begin.  SLC_ERROR when they do not fit.
 */
static int
slc_catalog_counts(const void *img, size_t half, uint32_t *nb, uint32_t *ne,
    uint64_t *at)
{
    const slc_catalog_image_t *h = img;

    *nb = __atomic_load_n(&h->nbuckets, __ATOMIC_RELAXED);
    *ne = __atomic_load_n(&h->nentries, __ATOMIC_RELAXED);
    *at = sizeof(*h) + (uint64_t) *nb * 4;
    if ((*nb & (*nb - 1)) != 0
        || slc_catalog_at(img, half, *at,
               (uint64_t) *ne * sizeof(slc_catalog_entry_t)) == NULL)
    {
        return SLC_ERROR;
    }
    return SLC_OK;
}

const slc_catalog_entry_t *
slc_catalog_entry(const void *img, size_t half, unsigned i)
{
    uint32_t nb, ne;
    uint64_t at;

    if (slc_catalog_counts(img, half, &nb, &ne, &at) != SLC_OK || i >= ne) {
        return NULL;
    }
    return (const slc_catalog_entry_t *) ((const uint8_t *) img + at) + i;
}

const slc_catalog_entry_t *
slc_catalog_find(const void *img, size_t half, const char *key, size_t len)
{
    const uint32_t            *bucket = (const uint32_t *)
                                        ((const slc_catalog_image_t *) img
                                         + 1);
    const slc_catalog_entry_t *entries, *e;
    uint32_t                   nb, ne, hash, b;
    uint64_t                   at;
    const char                *name;
    size_t                     n;

    if (slc_catalog_counts(img, half, &nb, &ne, &at) != SLC_OK || nb == 0) {
        return NULL;
    }
    entries = (const slc_catalog_entry_t *) ((const uint8_t *) img + at);
    hash = slc_hash_key(key, len);
    for (uint32_t i = 0, k = hash & (nb - 1); i < nb;
         i++, k = (k + 1) & (nb - 1))
    {
        b = bucket[k];
        if (b == 0 || b > ne) {
            return NULL;
        }
        e = &entries[b - 1];
        name = e->hash == hash ? slc_catalog_name(img, half, e->name, &n)
                               : NULL;
        if (name != NULL && n == len && memcmp(name, key, len) == 0) {
            return e;
        }
    }
    return NULL;
}

/* ---- the workers' questions ------------------------------------------- */

/* A question, asked of one image under its seqlock. */
typedef struct {
    const char             *key;
    size_t                  len;
    slc_catalog_names_t    *out;
    slc_catalog_facts_t    *facts;
    void                   *img;        /* a copy of the image */
} slc_catalog_q_t;

typedef int (*slc_catalog_ask_pt)(const slc_catalog_t *c,
    const slc_catalog_image_t *h, slc_catalog_q_t *q);

/* Loaded, not blind, and no DDL seen since its load began. */
static int
slc_catalog_current(const slc_catalog_t *c, const slc_catalog_image_t *h)
{
    uint32_t st = h->state;

    return (st & (SLC_CATALOG_S_LOADED | SLC_CATALOG_S_BLIND
                  | SLC_CATALOG_S_TOO_SMALL)) == SLC_CATALOG_S_LOADED
           && __atomic_load_n(&c->zone->ddl, __ATOMIC_ACQUIRE) == h->ddl_at;
}

/*
 * Ask `fn` of the image readers use, and keep its answer only if no write
 * overlapped the reading (else what it appended is taken back and it is
 * asked again).  `fail` after SLC_CATALOG_READ_TRIES.
 */
static int
slc_catalog_ask(const slc_catalog_t *c, slc_catalog_ask_pt fn,
    slc_catalog_q_t *q, int fail)
{
    slc_catalog_names_t *out = q->out;
    unsigned             n = out != NULL ? out->n : 0;
    unsigned             all = out != NULL ? out->all : 0;
    uint32_t             flags = out != NULL ? out->flags : 0;

    for (unsigned i = 0; c != NULL && c->zone != NULL
                         && i < SLC_CATALOG_READ_TRIES; i++)
    {
        uint32_t t = __atomic_load_n(&c->zone->active, __ATOMIC_ACQUIRE);
        const slc_catalog_image_t *h = slc_catalog_image(c, t);
        uint32_t s0 = slc_seqlock_read_begin(&h->seq);
        int      rc;

        if (s0 & 1) {
            sched_yield();
            continue;
        }
        rc = fn(c, h, q);
        if (slc_seqlock_read_end(&h->seq, s0)) {
            return rc;
        }
        if (out != NULL) {
            out->n = n;
            out->all = all;
            out->flags = flags;
        }
    }
    return fail;
}

/*
 * Append the names of a list to out, each once: SLC_OK, SLC_AGAIN when
 * they do not all fit, SLC_ERROR when the list is not whole (torn).
 */
static int
slc_catalog_append(const slc_catalog_t *c, const slc_catalog_image_t *h,
    uint32_t list, unsigned n, slc_catalog_names_t *out)
{
    for (unsigned i = 0; i < n; i++) {
        size_t      len;
        const char *name = slc_catalog_name(h, c->half,
                               slc_catalog_ref(h, c->half, list, i), &len);
        unsigned    k;

        if (name == NULL) {
            return SLC_ERROR;
        }
        for (k = 0; k < out->n && (out->name[k].len != len
                     || memcmp(out->name[k].data, name, len) != 0); k++)
        {
            /* already there? */
        }
        if (k < out->n) {
            continue;
        }
        if (out->n == SLC_CATALOG_NAMES_MAX) {
            return SLC_AGAIN;
        }
        out->name[k].data = out->buf + k * (SLC_CATALOG_NAME_MAX + 1);
        out->name[k].len = len;
        memcpy(out->name[k].data, name, len);
        out->name[k].data[len] = '\0';
        out->n++;
    }
    return SLC_OK;
}

static int
slc_catalog_ask_reads(const slc_catalog_t *c, const slc_catalog_image_t *h,
    slc_catalog_q_t *q)
{
    const slc_catalog_entry_t *p;
    slc_catalog_entry_t        e;

    if (!slc_catalog_current(c, h)) {
        return SLC_CATALOG_UNKNOWN;
    }
    p = slc_catalog_find(h, c->half, q->key, q->len);
    if (p == NULL) {
        return SLC_CATALOG_TABLE;
    }
    e = *p;                 /* one copy: the checks and the use agree */
    if (e.view == SLC_CATALOG_E_NONE) {
        return SLC_CATALOG_TABLE;
    }
    if (e.view != SLC_CATALOG_E_VIEW
        || slc_catalog_append(c, h, e.reads, e.nreads, q->out) != SLC_OK)
    {
        return SLC_CATALOG_UNKNOWN;
    }
    q->out->flags |= e.flags;
    return SLC_CATALOG_VIEW;
}

slc_catalog_kind_t
slc_catalog_reads(slc_catalog_t *c, const char *key, size_t len,
    slc_catalog_names_t *out)
{
    slc_catalog_q_t q = { .key = key, .len = len, .out = out };

    return (slc_catalog_kind_t) slc_catalog_ask(c, slc_catalog_ask_reads, &q,
        SLC_CATALOG_UNKNOWN);
}

static int
slc_catalog_ask_writes(const slc_catalog_t *c, const slc_catalog_image_t *h,
    slc_catalog_q_t *q)
{
    const slc_catalog_entry_t *p;
    slc_catalog_entry_t        e;
    int                        rc;

    if (!slc_catalog_current(c, h)) {
        return SLC_ERROR;
    }
    p = slc_catalog_find(h, c->half, q->key, q->len);
    if (p == NULL) {
        return SLC_OK;
    }
    e = *p;
    if (e.writes == SLC_CATALOG_W_NONE) {
        return SLC_OK;
    }
    rc = e.writes == SLC_CATALOG_W_LIST
         ? slc_catalog_append(c, h, e.wlist, e.nwrites, q->out) : SLC_AGAIN;
    if (rc == SLC_AGAIN) {
        q->out->all = 1;
        rc = SLC_OK;
    }
    return rc;
}

int
slc_catalog_writes(slc_catalog_t *c, const char *key, size_t len,
    slc_catalog_names_t *out)
{
    slc_catalog_q_t q = { .key = key, .len = len, .out = out };

    return slc_catalog_ask(c, slc_catalog_ask_writes, &q, SLC_ERROR);
}

static int
slc_catalog_ask_facts(const slc_catalog_t *c, const slc_catalog_image_t *h,
    slc_catalog_q_t *q)
{
    uint32_t st = h->state;

    memset(q->facts, 0, sizeof(*q->facts));
    if (!slc_catalog_current(c, h)) {
        return SLC_ERROR;
    }
    q->facts->ready = 1;
    q->facts->ansi_quotes = (st & SLC_CATALOG_S_ANSI_QUOTES) != 0;
    q->facts->read_uncommitted = (st & SLC_CATALOG_S_READ_UNCOMMITTED) != 0;
    return SLC_OK;
}

int
slc_catalog_facts(slc_catalog_t *c, slc_catalog_facts_t *f)
{
    slc_catalog_q_t q = { .facts = f };
    int             rc;

    rc = slc_catalog_ask(c, slc_catalog_ask_facts, &q, SLC_ERROR);
    if (rc != SLC_OK) {
        memset(f, 0, sizeof(*f));
    }
    return rc;
}

void
slc_catalog_ddl_seen(slc_catalog_t *c)
{
    if (c != NULL && c->zone != NULL) {
        (void) __atomic_add_fetch(&c->zone->ddl, 1, __ATOMIC_SEQ_CST);
    }
}

/* ---- the writer's side ------------------------------------------------ */

uint32_t
slc_catalog_load_begin(slc_catalog_t *c)
{
    return __atomic_load_n(&c->zone->ddl, __ATOMIC_ACQUIRE);
}

/* The header and the `used` bytes after it; a header that says nothing
   sensible (never loaded) is copied alone. */
static int
slc_catalog_copy(const slc_catalog_t *c, const slc_catalog_image_t *h,
    slc_catalog_q_t *q)
{
    slc_catalog_image_t *img = q->img;
    uint32_t             used;

    memcpy(img, h, sizeof(*img));
    used = img->used;
    if (used < sizeof(*img) || used > c->half) {
        img->used = used = sizeof(*img);
        img->nbuckets = img->nentries = 0;
    }
    memcpy(img + 1, h + 1, used - sizeof(*img));
    return SLC_OK;
}

int
slc_catalog_snapshot(const slc_catalog_t *c, void *img)
{
    slc_catalog_q_t q = { .img = img };

    return slc_catalog_ask(c, slc_catalog_copy, &q, SLC_ERROR);
}

void
slc_catalog_switch(slc_catalog_t *c, const void *img, size_t len)
{
    slc_catalog_zone_t  *z = c->zone;
    uint32_t             t = (__atomic_load_n(&z->active, __ATOMIC_ACQUIRE)
                              & 1) ^ 1;
    slc_catalog_image_t *h = slc_catalog_image(c, t);
    uint32_t             seq;

    seq = slc_seqlock_write_begin(&h->seq);
    /* everything but the image's own seqlock word */
    memcpy((uint8_t *) h + sizeof(h->seq),
        (const uint8_t *) img + sizeof(h->seq), len - sizeof(h->seq));
    slc_seqlock_write_end(&h->seq, seq);
    __atomic_store_n(&z->active, t, __ATOMIC_RELEASE);
    (void) __atomic_add_fetch(&z->loads, 1, __ATOMIC_RELEASE);
}

/* ---- stats ------------------------------------------------------------ */

static int
slc_catalog_copy_header(const slc_catalog_t *c, const slc_catalog_image_t *h,
    slc_catalog_q_t *q)
{
    slc_catalog_stats_t *st = q->img;

    st->current = slc_catalog_current(c, h);
    st->loaded = (h->state & SLC_CATALOG_S_LOADED) != 0;
    st->blind = (h->state & SLC_CATALOG_S_BLIND) != 0;
    st->too_small = (h->state & SLC_CATALOG_S_TOO_SMALL) != 0;
    st->views = h->nviews;
    st->triggers = h->ntriggers;
    st->hidden = h->hidden;
    st->entries = h->nentries;
    st->used = h->used;
    st->version = h->version;
    memcpy(st->server, h->server, sizeof(st->server));
    st->server[sizeof(st->server) - 1] = '\0';
    return SLC_OK;
}

int
slc_catalog_stats(slc_catalog_t *c, slc_catalog_stats_t *st)
{
    slc_catalog_q_t q = { .img = st };

    memset(st, 0, sizeof(*st));
    if (c == NULL || c->zone == NULL) {
        return SLC_ERROR;
    }
    st->size = c->size;
    st->loads = __atomic_load_n(&c->zone->loads, __ATOMIC_RELAXED);
    return slc_catalog_ask(c, slc_catalog_copy_header, &q, SLC_ERROR);
}

static const char *
slc_catalog_state_name(const slc_catalog_stats_t *st)
{
    return !st->loaded ? "unloaded" : st->too_small ? "too_small"
           : st->blind ? "blind" : !st->current ? "stale" : "ready";
}

/* `sluice -s stats`: a line per catalog. */
static void
slc_catalog_report(slc_cycle_t *cycle)
{
    slc_mysql_conf_t   *mc = slc_mysql_conf(cycle);
    slc_catalog_stats_t st;

    for (slc_upstream_t *up = mc != NULL ? mc->upstreams : NULL; up != NULL;
         up = up->next)
    {
        if (slc_catalog_stats(slc_catalog_of(up), &st) != SLC_OK) {
            continue;
        }
        slc_log(SLC_LOG_NOTICE, "schema catalog of upstream \"%s\": "
            "state=%s views=%u triggers=%u hidden=%u entries=%u loads=%llu "
            "version=%llu used=%zu size=%zu from=%s", up->name.data,
            slc_catalog_state_name(&st), st.views, st.triggers, st.hidden,
            st.entries, (unsigned long long) st.loads,
            (unsigned long long) st.version, st.used, st.size,
            st.server[0] != '\0' ? st.server : "-");
    }
}

/* The monitor leaves: its connections to the primaries end. */
static void
slc_catalog_exit_process(slc_cycle_t *cycle, const slc_role_t *role)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);

    if (role == NULL || role->module != &slc_mysql_monitor_module
        || mc == NULL)
    {
        return;
    }
    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        slc_catalog_t *c = slc_catalog_of(up);
        if (c != NULL) {
            slc_catalog_loader_free(c);
        }
    }
}
