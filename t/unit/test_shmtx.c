/*
 * Unit tests for the pid-owned lock (src/core/slc_shmtx.c) and its
 * release by the master (slc_master_reap_process), with real processes:
 * a holder killed with SIGKILL, a waiter that must get the lock once the
 * master has reaped the holder, two processes counting under the lock,
 * and a slab zone carried over by a reload that keeps its lock registered.
 */

#include "slc_test.h"
#include "slc_test_modules.h"
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "slc_cycle.h"
#include "slc_master.h"
#include "slc_shmtx.h"
#include "slc_slab.h"

#define SLC_TEST_COUNT  100000

typedef struct {
    slc_shmtx_t        mtx;
    slc_shmtx_t        other;
    volatile uint64_t  counter;
} slc_test_shared_t;

static slc_test_shared_t  *slc_test_shared;
static slc_shm_zone_t      slc_test_zone;
static slc_cycle_t         slc_test_cycle;

/* What the module hook saw when the master called it. */
static int                 slc_test_hook_calls;
static unsigned            slc_test_hook_proc;
static pid_t               slc_test_hook_holder;

static void
slc_test_reap_process(slc_cycle_t *cycle, unsigned proc)
{
    (void) cycle;
    slc_test_hook_calls++;
    slc_test_hook_proc = proc;
    slc_test_hook_holder = slc_shmtx_holder(&slc_test_shared->mtx);
}

static slc_module_t  slc_test_module = {
    .name = "test_reap",
    .type = SLC_MODULE_CORE,
    .reap_process = slc_test_reap_process,
};

SLC_TEST_MODULES("test_reap", &slc_test_module);

static void
slc_test_setup(void)
{
    slc_test_shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(slc_test_shared, MAP_FAILED);
    slc_test_zone = (slc_shm_zone_t) {
        .name = "test", .size = 4096, .addr = slc_test_shared,
    };
    slc_test_cycle = (slc_cycle_t) { .zones = &slc_test_zone };
    ck_assert_int_eq(slc_shmtx_create(&slc_test_shared->mtx,
        &slc_test_zone), SLC_OK);
    ck_assert_int_eq(slc_shmtx_create(&slc_test_shared->other,
        &slc_test_zone), SLC_OK);
    slc_pid = getpid();
}

static void
slc_test_teardown(void)
{
    munmap(slc_test_shared, 4096);
}

/* A child that takes the lock, says so on `fd`, and waits to be killed. */
static pid_t
slc_test_spawn_holder(slc_shmtx_t *mtx)
{
    int   fds[2];
    char  c;
    pid_t pid;

    ck_assert_int_eq(pipe(fds), 0);
    pid = fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0) {
        slc_pid = getpid();
        slc_shmtx_lock(mtx);
        (void) write(fds[1], "l", 1);
        for ( ;; ) {
            pause();
        }
    }
    close(fds[1]);
    ck_assert_int_eq(read(fds[0], &c, 1), 1);
    close(fds[0]);
    return pid;
}

static void
slc_test_kill(pid_t pid)
{
    int status;

    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* waitpid with a deadline: the exit status, or -1 if still running. */
static int
slc_test_wait(pid_t pid, int seconds)
{
    struct timespec nap = { 0, 1000000 };
    int             status;

    for (int i = 0; i < seconds * 1000; i++) {
        pid_t r = waitpid(pid, &status, WNOHANG);

        ck_assert_int_ne(r, -1);
        if (r == pid) {
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
        }
        nanosleep(&nap, NULL);
    }
    return -1;
}

START_TEST(test_basic)
{
    slc_shmtx_t *mtx = &slc_test_shared->mtx;

    ck_assert_int_eq(slc_shmtx_holder(mtx), 0);
    ck_assert_int_eq(slc_shmtx_trylock(mtx), 1);
    ck_assert_int_eq(slc_shmtx_holder(mtx), getpid());
    ck_assert_int_eq(slc_shmtx_trylock(mtx), 0);        /* not recursive */
    /* only the holder's pid frees it */
    ck_assert_int_eq(slc_shmtx_force_unlock(mtx, getpid() + 1), 0);
    ck_assert_int_eq(slc_shmtx_force_unlock(mtx, 0), 0);
    ck_assert_int_eq(slc_shmtx_holder(mtx), getpid());
    slc_shmtx_unlock(mtx);
    ck_assert_int_eq(slc_shmtx_holder(mtx), 0);
    slc_shmtx_lock(mtx);
    ck_assert_int_eq(slc_shmtx_force_unlock(mtx, getpid()), 1);
    ck_assert_int_eq(slc_shmtx_holder(mtx), 0);
    ck_assert_int_eq(slc_shmtx_force_unlock(mtx, getpid()), 0);
}
END_TEST

/* A zone registers a fixed number of locks, and says when it is full. */
START_TEST(test_registry_full)
{
    slc_shm_zone_t  z = { .name = "full" };
    slc_shmtx_t     m[SLC_SHM_ZONE_LOCKS + 1];

    for (unsigned i = 0; i < SLC_SHM_ZONE_LOCKS; i++) {
        ck_assert_int_eq(slc_shmtx_create(&m[i], &z), SLC_OK);
    }
    ck_assert_int_eq(slc_shmtx_create(&m[SLC_SHM_ZONE_LOCKS], &z),
        SLC_ERROR);
    ck_assert_uint_eq(z.nlocks, SLC_SHM_ZONE_LOCKS);
}
END_TEST

/*
 * A holder killed with SIGKILL keeps the lock (nothing ran in it); the
 * master's reap path frees it, before the modules' hooks run, and leaves
 * a lock held by a live process alone.
 */
START_TEST(test_killed_holder)
{
    slc_shmtx_t *mtx = &slc_test_shared->mtx;
    pid_t        child = slc_test_spawn_holder(mtx);

    ck_assert_int_eq(slc_shmtx_trylock(&slc_test_shared->other), 1);
    ck_assert_int_eq(slc_shmtx_trylock(mtx), 0);
    ck_assert_int_eq(slc_shmtx_holder(mtx), child);
    slc_test_kill(child);
    ck_assert_int_eq(slc_shmtx_trylock(mtx), 0);        /* still held */
    ck_assert_int_eq(slc_shmtx_holder(mtx), child);

    slc_master_reap_process(&slc_test_cycle, child, 7);
    ck_assert_int_eq(slc_test_hook_calls, 1);
    ck_assert_uint_eq(slc_test_hook_proc, 7);
    ck_assert_int_eq(slc_test_hook_holder, 0);          /* freed first */
    ck_assert_int_eq(slc_shmtx_holder(&slc_test_shared->other), getpid());
    ck_assert_int_eq(slc_shmtx_trylock(mtx), 1);
    slc_shmtx_unlock(mtx);

    /* reaping a process that held nothing changes nothing */
    slc_master_reap_process(&slc_test_cycle, child, 7);
    ck_assert_int_eq(slc_shmtx_holder(&slc_test_shared->other), getpid());
    slc_shmtx_unlock(&slc_test_shared->other);
}
END_TEST

/* A waiter blocked on a dead holder's lock gets it once it is reaped. */
START_TEST(test_waiter_after_reap)
{
    slc_shmtx_t *mtx = &slc_test_shared->mtx;
    pid_t        holder = slc_test_spawn_holder(mtx);
    pid_t        waiter = fork();

    ck_assert_int_ne(waiter, -1);
    if (waiter == 0) {
        slc_pid = getpid();
        slc_shmtx_lock(mtx);
        slc_test_shared->counter = 1;
        slc_shmtx_unlock(mtx);
        _exit(0);
    }
    slc_test_kill(holder);
    /* the dead holder wedges it: the waiter cannot have gone on */
    ck_assert_int_eq(waitpid(waiter, NULL, WNOHANG), 0);
    ck_assert_uint_eq(slc_test_shared->counter, 0);
    slc_master_reap_process(&slc_test_cycle, holder, 0);
    ck_assert_int_eq(slc_test_wait(waiter, 10), 0);
    ck_assert_uint_eq(slc_test_shared->counter, 1);
    ck_assert_int_eq(slc_shmtx_holder(mtx), 0);
}
END_TEST

/* Two processes, a plain read-modify-write each: exact under the lock. */
START_TEST(test_contention)
{
    slc_shmtx_t *mtx = &slc_test_shared->mtx;
    pid_t        pid[2];

    for (int k = 0; k < 2; k++) {
        pid[k] = fork();
        ck_assert_int_ne(pid[k], -1);
        if (pid[k] == 0) {
            slc_pid = getpid();
            for (int i = 0; i < SLC_TEST_COUNT; i++) {
                slc_shmtx_lock(mtx);
                uint64_t v = slc_test_shared->counter;
                slc_test_shared->counter = v + 1;
                slc_shmtx_unlock(mtx);
            }
            _exit(0);
        }
    }
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(slc_test_wait(pid[k], 60), 0);
    }
    ck_assert_uint_eq(slc_test_shared->counter, 2 * SLC_TEST_COUNT);
    ck_assert_int_eq(slc_shmtx_holder(mtx), 0);
}
END_TEST

/* ---- a slab zone through the real zone code and a reload ---- */

static int  slc_test_init_calls;

static void
slc_test_zone_init(slc_shm_zone_t *z, const void *prev)
{
    (void) prev;
    slc_test_init_calls++;
    ck_assert_int_eq(slc_slab_zone_init(z), SLC_OK);
}

static slc_shm_zone_t *
slc_test_slab_zone(slc_cycle_t *cycle, slc_cycle_t *old)
{
    char            err[256];
    slc_shm_zone_t *z;
    static int      tag;

    *cycle = (slc_cycle_t) { .pool = slc_pool_create(0) };
    ck_assert_ptr_nonnull(cycle->pool);
    z = slc_shm_zone_add(cycle, "slab", 64 * 1024, &tag, err, sizeof(err));
    ck_assert_ptr_nonnull(z);
    z->init = slc_test_zone_init;
    ck_assert_int_eq(slc_shm_zones_map(cycle, old, err, sizeof(err)),
        SLC_OK);
    return z;
}

/*
 * The slab's lock is registered by the zone's init hook; a reload carries
 * the zone over without calling init again, and the new cycle still frees
 * the lock from a holder that dies.
 */
START_TEST(test_slab_zone_reload)
{
    slc_cycle_t      one, two;
    slc_shm_zone_t  *z1 = slc_test_slab_zone(&one, NULL), *z2;
    slc_slab_pool_t *pool = z1->addr;
    pid_t            child;

    ck_assert_uint_eq(z1->nlocks, 1);
    ck_assert_ptr_nonnull(slc_slab_alloc(pool, 100));
    z2 = slc_test_slab_zone(&two, &one);
    ck_assert_int_eq(slc_test_init_calls, 1);
    ck_assert(z2->reused);
    ck_assert_ptr_eq(z2->addr, pool);
    ck_assert_uint_eq(z2->nlocks, 1);
    slc_shm_zones_release(&one, &two);
    slc_pool_destroy(one.pool);

    child = slc_test_spawn_holder(&pool->mutex);
    slc_test_kill(child);
    ck_assert_int_eq(slc_shmtx_trylock(&pool->mutex), 0);
    slc_master_reap_process(&two, child, 1);
    ck_assert_int_eq(slc_shmtx_holder(&pool->mutex), 0);
    ck_assert_ptr_nonnull(slc_slab_alloc(pool, 100));   /* takes the lock */
    slc_shm_zones_release(&two, NULL);
    slc_pool_destroy(two.pool);
}
END_TEST

/* ---- attach: every zone of every cycle, once all are mapped ---- */

static int  slc_test_attach_calls;

/* Binds zone "a" to zone "b" (as the stats zone binds the held zone):
   "b" must be mapped already, whatever the order of declaration. */
static int
slc_test_zone_attach(slc_shm_zone_t *z, slc_cycle_t *cycle, char *err,
    size_t errlen)
{
    slc_test_attach_calls++;
    for (slc_shm_zone_t *o = cycle->zones; o != NULL; o = o->next) {
        if (strcmp(o->name, "b") == 0 && o->addr != NULL) {
            *(void **) z->addr = o->addr;
            return SLC_OK;
        }
    }
    snprintf(err, errlen, "zone b is not mapped");
    return SLC_ERROR;
}

static void
slc_test_attach_cycle(slc_cycle_t *cycle, slc_cycle_t *old)
{
    char            err[256];
    slc_shm_zone_t *a;
    static int      tag;

    *cycle = (slc_cycle_t) { .pool = slc_pool_create(0) };
    ck_assert_ptr_nonnull(cycle->pool);
    /* "b" first: the last declared heads the list, so "a" is mapped
       before "b" and its attach must wait for the second pass */
    ck_assert_ptr_nonnull(slc_shm_zone_add(cycle, "b", 4096, &tag, err,
        sizeof(err)));
    a = slc_shm_zone_add(cycle, "a", 4096, &tag, err, sizeof(err));
    ck_assert_ptr_nonnull(a);
    a->attach = slc_test_zone_attach;
    ck_assert_int_eq(slc_shm_zones_map(cycle, old, err, sizeof(err)),
        SLC_OK);
}

/*
 * attach runs for a new zone and again for the same zone carried over on
 * reload (the new configuration binds anew), after every zone is mapped.
 */
START_TEST(test_zone_attach)
{
    slc_cycle_t one, two;
    void       *a1, *b1;

    slc_test_attach_cycle(&one, NULL);
    ck_assert_int_eq(slc_test_attach_calls, 1);
    a1 = one.zones->addr;
    b1 = one.zones->next->addr;
    ck_assert_ptr_eq(*(void **) a1, b1);

    *(void **) a1 = NULL;
    slc_test_attach_cycle(&two, &one);
    ck_assert(two.zones->reused);
    ck_assert_ptr_eq(two.zones->addr, a1);
    ck_assert_int_eq(slc_test_attach_calls, 2);
    ck_assert_ptr_eq(*(void **) a1, b1);
    slc_shm_zones_release(&one, &two);
    slc_pool_destroy(one.pool);
    slc_shm_zones_release(&two, NULL);
    slc_pool_destroy(two.pool);
}
END_TEST

/* An attach that fails fails the mapping, with its message. */
static int
slc_test_zone_attach_fail(slc_shm_zone_t *z, slc_cycle_t *cycle, char *err,
    size_t errlen)
{
    (void) z;
    (void) cycle;
    snprintf(err, errlen, "no slot left");
    return SLC_ERROR;
}

START_TEST(test_zone_attach_error)
{
    slc_cycle_t     cycle = { .pool = slc_pool_create(0) };
    slc_shm_zone_t *z;
    char            err[256] = "";
    static int      tag;

    ck_assert_ptr_nonnull(cycle.pool);
    z = slc_shm_zone_add(&cycle, "c", 4096, &tag, err, sizeof(err));
    ck_assert_ptr_nonnull(z);
    z->attach = slc_test_zone_attach_fail;
    ck_assert_int_eq(slc_shm_zones_map(&cycle, NULL, err, sizeof(err)),
        SLC_ERROR);
    ck_assert_str_eq(err, "no slot left");
    slc_shm_zones_release(&cycle, NULL);
    slc_pool_destroy(cycle.pool);
}
END_TEST

static Suite *
slc_test_shmtx_suite(void)
{
    Suite *s = suite_create("shmtx");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, slc_test_setup, slc_test_teardown);
    tcase_add_test(tc, test_basic);
    tcase_add_test(tc, test_registry_full);
    tcase_add_test(tc, test_killed_holder);
    tcase_add_test(tc, test_waiter_after_reap);
    tcase_add_test(tc, test_contention);
    tcase_add_test(tc, test_slab_zone_reload);
    tcase_add_test(tc, test_zone_attach);
    tcase_add_test(tc, test_zone_attach_error);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{

    return slc_check_run(slc_test_shmtx_suite());
}
