/*
 * Query digests in shared memory (slc_mysql_digests.h): regions a worker
 * claims and writes alone, space-saving top-K in each.
 */

#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_digests.h"
#include "slc_seqlock.h"
#include "slc_shm.h"

typedef struct {
    int32_t             owner;      /* pid, 0: free */
    uint32_t            n;          /* entries used */
    uint64_t            gen;        /* the reset it was emptied at */
    uint64_t            evicted;
    slc_digest_entry_t  overflow;   /* what the evicted counted */
} slc_digests_region_t;

typedef struct {
    uint32_t            top;
    uint32_t            nregions;
    uint32_t            mask;       /* the index's slots - 1 */
    uint32_t            pad;
    uint64_t            reset;      /* digests reset: how many */
    size_t              region_size;
    uint8_t             regions[];
} slc_digests_zone_t;

/* This worker's region, and where its parts are. */
static struct {
    slc_digests_zone_t    *z;
    slc_digests_region_t  *r;
    uint32_t              *heap;
    uint32_t              *index;   /* entry + 1, 0: empty */
    slc_digest_entry_t    *e;
} slc_digests;

static size_t
slc_digests_index_slots(unsigned top)
{
    size_t n = 16;

    while (n < 2 * (size_t) top) {
        n <<= 1;
    }
    return n;
}

static size_t
slc_digests_region_size(unsigned top)
{
    size_t n = sizeof(slc_digests_region_t)
               + sizeof(uint32_t) * (top + slc_digests_index_slots(top));

    n = (n + 63) & ~(size_t) 63;
    return n + sizeof(slc_digest_entry_t) * top;
}

size_t
slc_digests_zone_size(unsigned top, unsigned workers)
{
    return sizeof(slc_digests_zone_t)
           + (2 * (size_t) workers + 2) * slc_digests_region_size(top);
}

static slc_digests_region_t *
slc_digests_region(const slc_digests_zone_t *z, unsigned i)
{
    return (slc_digests_region_t *) (z->regions + i * z->region_size);
}

static slc_digest_entry_t *
slc_digests_entries(const slc_digests_zone_t *z, slc_digests_region_t *r)
{
    size_t off = sizeof(slc_digests_region_t)
                 + sizeof(uint32_t) * (z->top + z->mask + 1);

    return (slc_digest_entry_t *) ((uint8_t *) r + ((off + 63) & ~63UL));
}

int
slc_digests_attach(slc_shm_zone_t *z, slc_cycle_t *cycle, char *err,
    size_t errlen)
{
    slc_mysql_conf_t   *mc = slc_mysql_conf(cycle);
    slc_digests_zone_t *dz = z->addr;

    (void) err;
    (void) errlen;
    /* the same configuration the size was made of: a zone carried over
       has its layout already, and the same */
    dz->top = (uint32_t) mc->digest_top;
    dz->nregions = 2 * (uint32_t) cycle->worker_processes + 2;
    dz->mask = (uint32_t) slc_digests_index_slots(dz->top) - 1;
    dz->region_size = slc_digests_region_size(dz->top);
    return SLC_OK;
}


/* --- the writer: one process per region ---------------------------------- */

static uint32_t
slc_digests_home(uint64_t hash)
{
    return (uint32_t) (hash ^ (hash >> 32)) & slc_digests.z->mask;
}

static void
slc_digests_heap_swap(uint32_t a, uint32_t b)
{
    uint32_t *h = slc_digests.heap, t = h[a];

    h[a] = h[b];
    h[b] = t;
    slc_digests.e[h[a]].heap_pos = a;
    slc_digests.e[h[b]].heap_pos = b;
}

static uint64_t
slc_digests_heap_count(uint32_t i)
{
    return slc_digests.e[slc_digests.heap[i]].count;
}

/* The least counted at the heap's top: position i's count grew. */
static void
slc_digests_heap_down(uint32_t i)
{
    uint32_t n = slc_digests.r->n;

    for ( ;; ) {
        uint32_t l = 2 * i + 1, m = i;

        if (l < n && slc_digests_heap_count(l) < slc_digests_heap_count(m)) {
            m = l;
        }
        if (l + 1 < n
            && slc_digests_heap_count(l + 1) < slc_digests_heap_count(m))
        {
            m = l + 1;
        }
        if (m == i) {
            return;
        }
        slc_digests_heap_swap(i, m);
        i = m;
    }
}

static void
slc_digests_heap_up(uint32_t i)
{
    while (i > 0
           && slc_digests_heap_count((i - 1) / 2) > slc_digests_heap_count(i))
    {
        slc_digests_heap_swap(i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void
slc_digests_index_add(uint32_t entry)
{
    uint32_t p = slc_digests_home(slc_digests.e[entry].hash);

    while (slc_digests.index[p] != 0) {
        p = (p + 1) & slc_digests.z->mask;
    }
    slc_digests.index[p] = entry + 1;
}

/* Entry `entry` leaves the index (backward shift: no tombstones). */
static void
slc_digests_index_del(uint32_t entry)
{
    uint32_t mask = slc_digests.z->mask, i, j;

    i = slc_digests_home(slc_digests.e[entry].hash);
    while (slc_digests.index[i] != entry + 1) {
        i = (i + 1) & mask;
    }
    for (j = (i + 1) & mask; slc_digests.index[j] != 0; j = (j + 1) & mask) {
        uint32_t k = slc_digests_home(
                         slc_digests.e[slc_digests.index[j] - 1].hash);

        if (((j - k) & mask) >= ((j - i) & mask)) {
            slc_digests.index[i] = slc_digests.index[j];
            i = j;
        }
    }
    slc_digests.index[i] = 0;
}

/* A claimed region made whole: an entry its dead writer left half
   written is closed, the index and the heap built again. */
static void
slc_digests_repair(void)
{
    uint32_t n = slc_digests.r->n;

    memset(slc_digests.index, 0,
           sizeof(uint32_t) * (slc_digests.z->mask + 1));
    for (uint32_t i = 0; i < n; i++) {
        slc_digest_entry_t *e = &slc_digests.e[i];

        if (e->seq & 1) {
            __atomic_store_n(&e->seq, e->seq + 1, __ATOMIC_RELEASE);
        }
        slc_digests.heap[i] = i;
        e->heap_pos = i;
        slc_digests_index_add(i);
    }
    for (uint32_t i = n / 2; i-- > 0; ) {
        slc_digests_heap_down(i);
    }
}

void
slc_digests_bind(slc_cycle_t *cycle)
{
    slc_mysql_conf_t   *mc = slc_mysql_conf(cycle);
    slc_digests_zone_t *z;
    int32_t             pid = (int32_t) getpid();

    if (mc == NULL || mc->digests_zone == NULL) {
        return;
    }
    z = mc->digests_zone->addr;
    for (unsigned i = 0; i < z->nregions; i++) {
        slc_digests_region_t *r = slc_digests_region(z, i);
        int32_t               free_owner = 0;

        if (__atomic_compare_exchange_n(&r->owner, &free_owner, pid, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        {
            slc_digests.z = z;
            slc_digests.r = r;
            slc_digests.heap = (uint32_t *) (r + 1);
            slc_digests.index = slc_digests.heap + z->top;
            slc_digests.e = slc_digests_entries(z, r);
            slc_digests_repair();
            return;
        }
    }
    slc_log(SLC_LOG_WARN, "digests: no free region of %u (three "
        "generations of workers at once?): this worker keeps none",
        z->nregions);
}

void
slc_digests_reap(slc_cycle_t *cycle, pid_t pid)
{
    slc_mysql_conf_t   *mc = slc_mysql_conf(cycle);
    slc_digests_zone_t *z;

    if (mc == NULL || mc->digests_zone == NULL
        || mc->digests_zone->addr == NULL)
    {
        return;
    }
    z = mc->digests_zone->addr;
    for (unsigned i = 0; i < z->nregions; i++) {
        int32_t want = (int32_t) pid;

        (void) __atomic_compare_exchange_n(&slc_digests_region(z, i)->owner,
            &want, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
    }
}

void
slc_digests_prepare(slc_digest_stmt_t *st, const uint8_t *q, size_t n,
    int nobs, const char *user, const char *db, unsigned how)
{
    uint64_t h;

    slc_sql_digest(q, n, nobs, st->text, sizeof(st->text), &st->dg);
    st->user = (how & SLC_DIGESTS_USER) ? user : NULL;
    st->db = (how & SLC_DIGESTS_DB) ? db : NULL;
    h = st->dg.hash;
    for (int k = 0; k < 2; k++) {
        const char *s = k == 0 ? st->user : st->db;

        h = (h ^ 0xff) * 0x100000001b3ULL;      /* a separator */
        for ( ; s != NULL && *s != '\0'; s++) {
            h = (h ^ (uint8_t) *s) * 0x100000001b3ULL;
        }
    }
    st->dg.hash = h != 0 ? h : 1;
}

/* One more run of e's statement. */
static void
slc_digests_add(slc_digest_entry_t *e, uint64_t us, int err, uint64_t rows)
{
    e->count++;
    e->errors += err != 0;
    e->rows += rows;
    e->sum_us += us;
    e->max_us = slc_max(e->max_us, us);
    e->hist[slc_latency_bucket(us)]++;
}

/* Entry i becomes st's, counting from `base` (space-saving's inherited
   count). */
static void
slc_digests_fill(uint32_t i, const slc_digest_stmt_t *st, uint64_t base,
    uint64_t us, int err, uint64_t rows)
{
    slc_digest_entry_t *e = &slc_digests.e[i];
    uint32_t            odd = slc_seqlock_write_begin(&e->seq);

    e->hash = st->dg.hash;
    e->count = base;
    e->error = base;
    e->errors = e->rows = e->sum_us = e->max_us = 0;
    memset(e->hist, 0, sizeof(e->hist));
    slc_digests_add(e, us, err, rows);
    strlcpy(e->user, st->user != NULL ? st->user : "", sizeof(e->user));
    strlcpy(e->db, st->db != NULL ? st->db : "", sizeof(e->db));
    memcpy(e->text, st->text, sizeof(e->text));
    slc_seqlock_write_end(&e->seq, odd);
}

/* The least counted entry goes to the overflow row, and its place is
   st's. */
static void
slc_digests_evict(const slc_digest_stmt_t *st, uint64_t us, int err,
    uint64_t rows)
{
    slc_digests_region_t *r = slc_digests.r;
    uint32_t              i = slc_digests.heap[0], odd;
    slc_digest_entry_t   *e = &slc_digests.e[i], *o = &r->overflow;

    odd = slc_seqlock_write_begin(&o->seq);
    o->count += e->count - e->error;
    o->errors += e->errors;
    o->rows += e->rows;
    o->sum_us += e->sum_us;
    o->max_us = slc_max(o->max_us, e->max_us);
    for (unsigned b = 0; b <= SLC_LATENCY_BUCKETS; b++) {
        o->hist[b] += e->hist[b];
    }
    slc_seqlock_write_end(&o->seq, odd);
    __atomic_store_n(&r->evicted, r->evicted + 1, __ATOMIC_RELAXED);
    slc_digests_index_del(i);
    slc_digests_fill(i, st, e->count, us, err, rows);
    slc_digests_index_add(i);
    slc_digests_heap_down(0);
}

/* An admin's digests reset: the region empties itself. */
static void
slc_digests_empty(slc_digests_region_t *r, uint64_t gen)
{
    uint32_t odd = slc_seqlock_write_begin(&r->overflow.seq);

    memset((uint8_t *) &r->overflow + sizeof(uint32_t), 0,
           sizeof(r->overflow) - sizeof(uint32_t));
    slc_seqlock_write_end(&r->overflow.seq, odd);
    __atomic_store_n(&r->n, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&r->evicted, 0, __ATOMIC_RELAXED);
    memset(slc_digests.index, 0,
           sizeof(uint32_t) * (slc_digests.z->mask + 1));
    __atomic_store_n(&r->gen, gen, __ATOMIC_RELEASE);
}

void
slc_digests_reset(const slc_cycle_t *cycle)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);

    if (mc != NULL && mc->digests_zone != NULL) {
        slc_digests_zone_t *z = mc->digests_zone->addr;

        __atomic_add_fetch(&z->reset, 1, __ATOMIC_RELEASE);
    }
}

void
slc_digests_record(const slc_digest_stmt_t *st, uint64_t us, int err,
    uint64_t rows)
{
    slc_digests_region_t *r = slc_digests.r;
    uint32_t              p, n;
    uint64_t              gen;

    if (r == NULL) {
        return;
    }
    gen = __atomic_load_n(&slc_digests.z->reset, __ATOMIC_ACQUIRE);
    if (r->gen != gen) {
        slc_digests_empty(r, gen);
    }
    for (p = slc_digests_home(st->dg.hash); slc_digests.index[p] != 0;
         p = (p + 1) & slc_digests.z->mask)
    {
        slc_digest_entry_t *e = &slc_digests.e[slc_digests.index[p] - 1];

        if (e->hash == st->dg.hash) {
            uint32_t odd = slc_seqlock_write_begin(&e->seq);

            slc_digests_add(e, us, err, rows);
            slc_seqlock_write_end(&e->seq, odd);
            slc_digests_heap_down(e->heap_pos);
            return;
        }
    }
    n = r->n;
    if (n == slc_digests.z->top) {
        slc_digests_evict(st, us, err, rows);
        return;
    }
    slc_digests_fill(n, st, 0, us, err, rows);
    slc_digests.heap[n] = n;
    slc_digests.e[n].heap_pos = n;
    __atomic_store_n(&r->n, n + 1, __ATOMIC_RELEASE);
    slc_digests_index_add(n);
    slc_digests_heap_up(n);
}


/* --- readers ------------------------------------------------------------- */

/* A stable copy of e; 0 when its writer kept changing it. */
static int
slc_digests_copy(const slc_digest_entry_t *e, slc_digest_entry_t *out)
{
    for (int tries = 0; tries < 16; tries++) {
        uint32_t s0 = slc_seqlock_read_begin(&e->seq);

        if (s0 & 1) {
            continue;
        }
        memcpy(out, e, sizeof(*out));
        if (slc_seqlock_read_end(&e->seq, s0)) {
            return 1;
        }
    }
    return 0;
}

static void
slc_digests_merge(slc_digest_entry_t *into, const slc_digest_entry_t *e)
{
    into->count += e->count;
    into->error += e->error;
    into->errors += e->errors;
    into->rows += e->rows;
    into->sum_us += e->sum_us;
    into->max_us = slc_max(into->max_us, e->max_us);
    for (unsigned b = 0; b <= SLC_LATENCY_BUCKETS; b++) {
        into->hist[b] += e->hist[b];
    }
}

static int
slc_digests_by_hash(const void *a, const void *b)
{
    uint64_t x = ((const slc_digest_entry_t *) a)->hash;
    uint64_t y = ((const slc_digest_entry_t *) b)->hash;

    return x < y ? -1 : x > y;
}

static int
slc_digests_by_count(const void *a, const void *b)
{
    uint64_t x = ((const slc_digest_entry_t *) a)->count;
    uint64_t y = ((const slc_digest_entry_t *) b)->count;

    return x > y ? -1 : x < y;
}

slc_digest_entry_t *
slc_digests_snapshot(const slc_cycle_t *cycle, size_t *n,
    slc_digest_entry_t *overflow, uint64_t *evicted)
{
    slc_mysql_conf_t   *mc = slc_mysql_conf(cycle);
    slc_digests_zone_t *z;
    slc_digest_entry_t *all, tmp;
    size_t              k = 0, m = 0;

    *n = 0;
    *evicted = 0;
    memset(overflow, 0, sizeof(*overflow));
    if (mc == NULL || mc->digests_zone == NULL
        || (z = mc->digests_zone->addr) == NULL || z->top == 0
        || (all = malloc(sizeof(*all) * z->top * z->nregions)) == NULL)
    {
        return NULL;
    }
    for (unsigned i = 0; i < z->nregions; i++) {
        slc_digests_region_t *r = slc_digests_region(z, i);
        slc_digest_entry_t   *e = slc_digests_entries(z, r);
        uint32_t              used = __atomic_load_n(&r->n, __ATOMIC_ACQUIRE);

        if (__atomic_load_n(&r->gen, __ATOMIC_ACQUIRE)
            != __atomic_load_n(&z->reset, __ATOMIC_ACQUIRE))
        {
            continue;                   /* emptied by a reset, not yet */
        }
        *evicted += __atomic_load_n(&r->evicted, __ATOMIC_RELAXED);
        if (slc_digests_copy(&r->overflow, &tmp)) {
            slc_digests_merge(overflow, &tmp);
        }
        for (uint32_t j = 0; j < used && j < z->top; j++) {
            k += slc_digests_copy(&e[j], &all[k]) && all[k].hash != 0;
        }
    }
    qsort(all, k, sizeof(*all), slc_digests_by_hash);
    for (size_t i = 0; i < k; i++) {
        if (m > 0 && all[m - 1].hash == all[i].hash) {
            slc_digests_merge(&all[m - 1], &all[i]);
        } else {
            all[m++] = all[i];
        }
    }
    qsort(all, m, sizeof(*all), slc_digests_by_count);
    *n = m;
    return all;
}
