#include "slc_core.h"
#include "slc_seqlock.h"

#include <sched.h>

/* How long a writer waits for another's odd value before it takes over. */
#define SLC_SEQLOCK_WRITE_SPINS  10000

uint32_t
slc_seqlock_write_begin(uint32_t *seq)
{
    uint32_t s, odd;

    for (unsigned i = 0; ; i++) {
        s = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
        if ((s & 1) && i < SLC_SEQLOCK_WRITE_SPINS) {
            sched_yield();
            continue;
        }
        odd = (s & 1) ? s + 2 : s + 1;
        if (__atomic_compare_exchange_n(seq, &s, odd, 0,
                __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        {
            /* the odd value is visible before any field changes */
            __atomic_thread_fence(__ATOMIC_RELEASE);
            return odd;
        }
    }
}

void
slc_seqlock_write_end(uint32_t *seq, uint32_t odd)
{
    __atomic_store_n(seq, odd + 1, __ATOMIC_RELEASE);
}
