#include "slc_core.h"
#include "slc_event.h"
#include "slc_mysql_monitor.h"
#include "slc_mysql_upstream.h"
#include "slc_mysql_upstream_admin.h"
#include "slc_worker.h"

/* This process's count of connections to `us`, so that the master can
   take them back if it dies (slc_upstream_stats_reap). */
static slc_held_t *
slc_upstream_held(slc_upstream_server_t *us)
{
    return &us->held[(size_t) slc_worker_proc * SLC_STATS_MAX];
}

int
slc_upstream_acquire(slc_upstream_server_t *us)
{
    uint64_t cur = __atomic_load_n(&us->stats->active, __ATOMIC_RELAXED);

    do {
        if (us->max_connections && cur >= us->max_connections) {
            return 0;
        }
    } while (!__atomic_compare_exchange_n(&us->stats->active, &cur, cur + 1,
                 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    /* after the shared counter, and before it on release: a worker killed
       in between leaves one too many counted, never one too few */
    slc_upstream_held(us)->active++;
    __atomic_add_fetch(&us->stats->connections, 1, __ATOMIC_RELAXED);
    return 1;
}

/* (active + 1) / weight, compared without division. */
static int
slc_upstream_better(slc_upstream_server_t *a, slc_upstream_server_t *b)
{
    uint64_t la = __atomic_load_n(&a->stats->active, __ATOMIC_RELAXED) + 1;
    uint64_t lb = __atomic_load_n(&b->stats->active, __ATOMIC_RELAXED) + 1;

    return la * b->weight < lb * a->weight;
}

static slc_upstream_server_t *
slc_upstream_best(slc_upstream_t *up, unsigned roles, int want_up,
    const uint8_t *tried)
{
    slc_upstream_server_t *best = NULL;
    uint64_t               now = slc_loop->now;

    for (unsigned i = 0; i < up->nservers; i++) {
        slc_upstream_server_t *us = &up->servers[i];
        if (!slc_upstream_usable(us) || !(slc_monitor_role(us) & roles)
            || slc_upstream_isset(tried, i)
            || (want_up && us->down_until > now))
        {
            continue;
        }
        if (best == NULL || slc_upstream_better(us, best)) {
            best = us;
        }
    }
    return best;
}

slc_upstream_server_t *
slc_upstream_find(const slc_upstream_t *up, const char *name)
{
    for (unsigned i = 0; i < up->nservers; i++) {
        if (strcmp(up->servers[i].name, name) == 0) {
            return &up->servers[i];
        }
    }
    return NULL;
}

slc_upstream_server_t *
slc_upstream_pick(slc_upstream_t *up, unsigned roles, const uint8_t *skip,
    int *full)
{
    uint8_t                tried[SLC_UPSTREAM_SET_BYTES] = { 0 };
    slc_upstream_server_t *us;

    if (skip != NULL) {
        memcpy(tried, skip, sizeof(tried));
    }

    *full = 0;
    for (int want_up = 1; want_up >= 0; want_up--) {
        while ((us = slc_upstream_best(up, roles, want_up, tried)) != NULL) {
            if (slc_upstream_acquire(us)) {
                return us;
            }
            *full = 1;
            slc_upstream_set(tried, (unsigned) (us - up->servers));
        }
    }
    return NULL;
}

void
slc_upstream_take(slc_upstream_server_t *us)
{
    __atomic_add_fetch(&us->stats->active, 1, __ATOMIC_RELAXED);
    slc_upstream_held(us)->active++;        /* ordered as in acquire */
}

void
slc_upstream_release(slc_upstream_server_t *us)
{
    slc_upstream_held(us)->active--;
    __atomic_sub_fetch(&us->stats->active, 1, __ATOMIC_RELAXED);
}

int
slc_upstream_handshake_acquire(slc_upstream_server_t *us, uint64_t max)
{
    uint64_t cur = __atomic_load_n(&us->stats->handshakes, __ATOMIC_RELAXED);

    do {
        if (max && cur >= max) {
            return 0;
        }
    } while (!__atomic_compare_exchange_n(&us->stats->handshakes, &cur,
                 cur + 1, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    slc_upstream_held(us)->handshakes++;    /* ordered as for active */
    return 1;
}

void
slc_upstream_handshake_release(slc_upstream_server_t *us)
{
    slc_upstream_held(us)->handshakes--;
    __atomic_sub_fetch(&us->stats->handshakes, 1, __ATOMIC_RELAXED);
}

void
slc_upstream_mark_down(slc_upstream_server_t *us)
{
    us->down_until = slc_loop->now + SLC_UPSTREAM_FAIL_MS;
    __atomic_add_fetch(&us->stats->connect_errors, 1, __ATOMIC_RELAXED);
}

void
slc_upstream_count_bytes(slc_upstream_server_t *us, size_t in, size_t out)
{
    if (in) {
        __atomic_add_fetch(&us->stats->bytes_in, in, __ATOMIC_RELAXED);
    }
    if (out) {
        __atomic_add_fetch(&us->stats->bytes_out, out, __ATOMIC_RELAXED);
    }
}
