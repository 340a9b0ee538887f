#ifndef SLC_TEST_LOOP_H
#define SLC_TEST_LOOP_H

/*
 * For unit tests that run sluice's own loop (slc_loop) against sockets
 * they hold the other end of: run it until a condition holds or a
 * deadline passes, never sleeping on a guess.  Returns the condition,
 * for the test to assert.
 */

#include "slc_event.h"

static inline int
slc_check_until(int (*cond)(void), uint64_t ms)
{
    uint64_t end = slc_time_ms() + ms;

    while (!cond() && slc_time_ms() < end) {
        slc_loop_once(slc_loop, 10);
    }
    return cond();
}

#endif /* SLC_TEST_LOOP_H */
