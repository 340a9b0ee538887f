#include "slc_core.h"
#include "slc_cycle.h"
#include "slc_shm.h"
#include "slc_shmtx.h"

#include <sys/mman.h>

void *
slc_shm_slot_claim(void *tab, unsigned n, size_t size, size_t namelen,
    const char *name)
{
    char *free = NULL, *slot = tab;

    for (unsigned i = 0; i < n; i++, slot += size) {
        if (strcmp(slot, name) == 0) {
            return slot;
        }
        if (free == NULL && slot[0] == '\0') {
            free = slot;
        }
    }
    if (free != NULL) {
        memset(free, 0, size);
        strlcpy(free, name, namelen);
    }
    return free;
}

slc_shm_zone_t *
slc_shm_zone_find(slc_cycle_t *cycle, const char *name)
{
    for (slc_shm_zone_t *z = cycle->zones; z != NULL; z = z->next) {
        if (strcmp(z->name, name) == 0) {
            return z;
        }
    }
    return NULL;
}

slc_shm_zone_t *
slc_shm_zone_add(slc_cycle_t *cycle, const char *name, size_t size,
    const void *tag, char *err, size_t errlen)
{
    slc_shm_zone_t *z = slc_shm_zone_find(cycle, name);

    if (z != NULL) {
        if (z->tag != tag || z->size != size) {
            snprintf(err, errlen, "shared memory zone \"%s\" is already "
                "declared with another size or owner", name);
            return NULL;
        }
        return z;
    }
    z = slc_palloc(cycle->pool, sizeof(*z));
    if (z == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    z->name = slc_pstrndup(cycle->pool, name, strlen(name));
    z->size = size;
    z->tag = tag;
    z->next = cycle->zones;
    cycle->zones = z;
    return z;
}

/* The old cycle's zone of this name and owner, of any size. */
static slc_shm_zone_t *
slc_shm_zone_match(slc_cycle_t *old, const slc_shm_zone_t *z)
{
    if (old == NULL) {
        return NULL;
    }
    for (slc_shm_zone_t *o = old->zones; o != NULL; o = o->next) {
        if (o->addr != NULL && strcmp(o->name, z->name) == 0
            && o->tag == z->tag)
        {
            return o;
        }
    }
    return NULL;
}

int
slc_shm_zones_map(slc_cycle_t *cycle, slc_cycle_t *old, char *err,
    size_t errlen)
{
    for (slc_shm_zone_t *z = cycle->zones; z != NULL; z = z->next) {
        slc_shm_zone_t *o = slc_shm_zone_match(old, z);

        if (o != NULL && o->size == z->size) {
            z->addr = o->addr;
            z->reused = 1;
            /* same memory, same locks: init is not called again */
            memcpy(z->locks, o->locks, sizeof(z->locks));
            z->nlocks = o->nlocks;
            continue;
        }
        z->addr = mmap(NULL, z->size, PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (z->addr == MAP_FAILED) {
            z->addr = NULL;
            snprintf(err, errlen, "mmap(%zu) for zone \"%s\" failed (%s)",
                z->size, z->name, strerror(errno));
            return SLC_ERROR;
        }
        if (z->init != NULL) {
            z->init(z, o != NULL ? o->addr : NULL);
        }
    }
    /* a second pass: an attach hook may read any zone of the cycle */
    for (slc_shm_zone_t *z = cycle->zones; z != NULL; z = z->next) {
        if (z->attach != NULL && z->attach(z, cycle, err, errlen) != SLC_OK) {
            return SLC_ERROR;
        }
    }
    return SLC_OK;
}

int
slc_shm_zone_lock_add(slc_shm_zone_t *z, slc_shmtx_t *mtx)
{
    if (z->nlocks == SLC_SHM_ZONE_LOCKS) {
        return SLC_ERROR;
    }
    z->locks[z->nlocks++] = mtx;
    return SLC_OK;
}

unsigned
slc_shm_zone_unlock(slc_shm_zone_t *z, pid_t pid)
{
    unsigned n = 0;

    for (unsigned i = 0; i < z->nlocks; i++) {
        n += (unsigned) slc_shmtx_force_unlock(z->locks[i], pid);
    }
    return n;
}

void
slc_shm_zones_release(slc_cycle_t *old, slc_cycle_t *cycle)
{
    for (slc_shm_zone_t *o = old->zones; o != NULL; o = o->next) {
        int kept = 0;

        for (slc_shm_zone_t *z = cycle ? cycle->zones : NULL; z != NULL;
             z = z->next)
        {
            kept |= (z->addr == o->addr);
        }
        if (!kept && o->addr != NULL) {
            munmap(o->addr, o->size);
        }
        o->addr = NULL;
    }
}
