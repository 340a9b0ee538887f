#ifndef SLC_SEQLOCK_H
#define SLC_SEQLOCK_H

#include "slc_core.h"

/*
 * A sequence lock over a record in shared memory that one process writes
 * and any number read without a lock (the monitor's entries, the accounts
 * tables).  The word is odd while the record is written.
 *
 * write_begin moves it to an odd value with a compare-and-swap and
 * returns that value; write_end stores it + 1 (release).  A writer that
 * finds it odd waits a little (two writers in the same instant, around a
 * reload), then takes over: one killed while writing leaves the word odd
 * for ever, and must not block the next writer.
 *
 * A reader takes read_begin (even, or it retries later), copies what it
 * needs, and keeps the copy only if read_end says the word did not move.
 */

uint32_t slc_seqlock_write_begin(uint32_t *seq);
void     slc_seqlock_write_end(uint32_t *seq, uint32_t odd);

/* The word as a reader starts (acquire); odd: a write is under way. */
static inline uint32_t
slc_seqlock_read_begin(const uint32_t *seq)
{
    return __atomic_load_n(seq, __ATOMIC_ACQUIRE);
}

/* 1 when nothing was written since read_begin returned `s0` (even). */
static inline int
slc_seqlock_read_end(const uint32_t *seq, uint32_t s0)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(seq, __ATOMIC_RELAXED) == s0 && !(s0 & 1);
}

#endif /* SLC_SEQLOCK_H */
