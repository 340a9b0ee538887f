/*
 * Session registry (contract in slc_mysql_registry.h).  Entries are
 * claimed with a compare-and-swap on `id`; the other fields are written by
 * the owner only, after the claim, and read by others with relaxed loads:
 * a reader that sees a claimed entry whose backend is not set yet treats
 * the session as having no backend, which is true a moment earlier.
 */

#include "slc_core.h"
#include "slc_mysql_registry.h"

#define SLC_REGISTRY_MIN_SLOTS   1024u
#define SLC_REGISTRY_MAX_SLOTS   (1u << 22)
#define SLC_REGISTRY_TRIES       64

/* An entry no backend is known of yet. */
static void
slc_registry_clear(slc_registry_entry_t *e)
{
    e->thread_id = 0;
    e->server = 0;
    e->run_thread_id = 0;
    e->run_server = 0;
    e->kill = 0;
    e->user[0] = e->host[0] = '\0';
}

size_t
slc_registry_size(uint64_t sessions)
{
    uint64_t slots = SLC_REGISTRY_MIN_SLOTS;

    /* twice the sessions: a free slot is found in a probe or two */
    while (slots < 2 * sessions && slots < SLC_REGISTRY_MAX_SLOTS) {
        slots <<= 1;
    }
    return sizeof(slc_registry_t) + slots * sizeof(slc_registry_entry_t);
}

void
slc_registry_init(slc_registry_t *r, size_t size,
    const slc_registry_t *prev)
{
    size_t slots = (size - sizeof(*r)) / sizeof(slc_registry_entry_t);

    memset(r, 0, size);
    r->mask = (uint32_t) (slots - 1);
    for (size_t i = 0; i < slots; i++) {
        r->e[i].proc = UINT32_MAX;      /* no process's (slc_registry_del) */
    }
    if (prev != NULL) {
        /* ids stay unique across a resize: old sessions keep theirs */
        r->next = __atomic_load_n(&prev->next, __ATOMIC_RELAXED);
    }
}

static uint32_t
slc_registry_id(uint64_t n)
{
    return SLC_REGISTRY_ID_BASE + (uint32_t) (n & 0x7fffffffu);
}

int
slc_registry_add(slc_registry_t *r, unsigned proc, uint32_t *id)
{
    for (int i = 0; i < SLC_REGISTRY_TRIES; i++) {
        uint64_t              n = __atomic_fetch_add(&r->next, 1,
                                      __ATOMIC_RELAXED);
        uint32_t              cand = slc_registry_id(n);
        slc_registry_entry_t *e = &r->e[cand & r->mask];
        uint64_t              free_id = 0;

        *id = cand;
        if (__atomic_compare_exchange_n(&e->id, &free_id, cand, 0,
                __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        {
            slc_registry_clear(e);
            e->proc = proc;
            return SLC_OK;
        }
    }
    return SLC_AGAIN;
}

static slc_registry_entry_t *
slc_registry_mine(slc_registry_t *r, uint32_t id)
{
    slc_registry_entry_t *e = &r->e[id & r->mask];

    return __atomic_load_n(&e->id, __ATOMIC_RELAXED) == id ? e : NULL;
}

void
slc_registry_set_client(slc_registry_t *r, uint32_t id, const char *user,
    const char *host)
{
    slc_registry_entry_t *e = slc_registry_mine(r, id);

    if (e != NULL) {
        strlcpy(e->user, user, sizeof(e->user));
        strlcpy(e->host, host, sizeof(e->host));
    }
}

void
slc_registry_set_backend(slc_registry_t *r, uint32_t id, uint32_t server,
    uint32_t thread_id)
{
    slc_registry_entry_t *e = slc_registry_mine(r, id);

    if (e != NULL) {
        __atomic_store_n(&e->server, server, __ATOMIC_RELAXED);
        __atomic_store_n(&e->thread_id, thread_id, __ATOMIC_RELEASE);
    }
}

/* thread_id last, and 0 first: a reader that sees a thread id sees its
   server (slc_registry_get reads them in the other order and checks). */
void
slc_registry_set_running(slc_registry_t *r, uint32_t id, uint32_t server,
    uint32_t thread_id)
{
    slc_registry_entry_t *e = slc_registry_mine(r, id);

    if (e != NULL) {
        __atomic_store_n(&e->run_thread_id, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&e->run_server, server, __ATOMIC_RELEASE);
        __atomic_store_n(&e->run_thread_id, thread_id, __ATOMIC_RELEASE);
    }
}

void
slc_registry_del(slc_registry_t *r, uint32_t id)
{
    slc_registry_entry_t *e = slc_registry_mine(r, id);

    if (e != NULL) {
        slc_registry_clear(e);
        /* no process's: the master reaping the old owner must not clear
           the entry once the next owner has claimed it and before it
           wrote its own index (a handover claims it from another process) */
        __atomic_store_n(&e->proc, UINT32_MAX, __ATOMIC_RELAXED);
        __atomic_store_n(&e->id, 0, __ATOMIC_RELEASE);
    }
}

int
slc_registry_claim(slc_registry_t *r, unsigned proc, uint32_t id)
{
    slc_registry_entry_t *e = &r->e[id & r->mask];
    uint64_t              free_id = 0;

    if (id < SLC_REGISTRY_ID_BASE
        || !__atomic_compare_exchange_n(&e->id, &free_id, id, 0,
               __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
    {
        return SLC_AGAIN;
    }
    slc_registry_clear(e);
    e->proc = proc;
    return SLC_OK;
}

int
slc_registry_get(const slc_registry_t *r, uint32_t id,
    slc_registry_entry_t *out)
{
    const slc_registry_entry_t *e;

    if (id < SLC_REGISTRY_ID_BASE) {
        return SLC_ERROR;
    }
    e = &r->e[id & r->mask];
    if (__atomic_load_n(&e->id, __ATOMIC_ACQUIRE) != id) {
        return SLC_ERROR;
    }
    out->id = id;
    out->thread_id = __atomic_load_n(&e->thread_id, __ATOMIC_ACQUIRE);
    out->server = __atomic_load_n(&e->server, __ATOMIC_RELAXED);
    out->proc = e->proc;
    memcpy(out->user, e->user, sizeof(out->user));
    memcpy(out->host, e->host, sizeof(out->host));
    out->user[sizeof(out->user) - 1] = '\0';
    out->host[sizeof(out->host) - 1] = '\0';
    out->run_thread_id = __atomic_load_n(&e->run_thread_id,
                                         __ATOMIC_ACQUIRE);
    out->run_server = __atomic_load_n(&e->run_server, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&e->run_thread_id, __ATOMIC_ACQUIRE)
        != out->run_thread_id)
    {
        out->run_thread_id = 0;         /* it moved: its own backend */
        out->run_server = 0;
    }
    /* freed and reused while we read: not the session asked for */
    if (__atomic_load_n(&e->id, __ATOMIC_ACQUIRE) != id) {
        return SLC_ERROR;
    }
    return SLC_OK;
}

int
slc_registry_mark_kill(slc_registry_t *r, uint32_t id)
{
    slc_registry_entry_t *e = &r->e[id & r->mask];

    if (id < SLC_REGISTRY_ID_BASE
        || __atomic_load_n(&e->id, __ATOMIC_ACQUIRE) != id)
    {
        return SLC_ERROR;
    }
    __atomic_store_n(&e->kill, 1, __ATOMIC_RELEASE);
    /* freed and reused meanwhile: the mark is the new session's, which
       nobody asked for; take it back */
    if (__atomic_load_n(&e->id, __ATOMIC_ACQUIRE) != id) {
        __atomic_store_n(&e->kill, 0, __ATOMIC_RELEASE);
        return SLC_ERROR;
    }
    return SLC_OK;
}

int
slc_registry_killed(slc_registry_t *r, uint32_t id)
{
    slc_registry_entry_t *e = slc_registry_mine(r, id);

    return e != NULL && __atomic_load_n(&e->kill, __ATOMIC_ACQUIRE);
}

unsigned
slc_registry_reap(slc_registry_t *r, unsigned proc)
{
    unsigned n = 0;

    for (uint64_t i = 0; i <= r->mask; i++) {
        slc_registry_entry_t *e = &r->e[i];
        if (__atomic_load_n(&e->id, __ATOMIC_RELAXED) != 0
            && e->proc == proc)
        {
            slc_registry_clear(e);
            __atomic_store_n(&e->id, 0, __ATOMIC_RELEASE);
            n++;
        }
    }
    return n;
}
