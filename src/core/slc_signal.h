#ifndef SLC_SIGNAL_H
#define SLC_SIGNAL_H

#include <signal.h>

/*
 * Signals only set flags; the loops act on them.  They stay blocked except
 * inside sigsuspend (master) or epoll_pwait (worker), so a signal is never
 * lost between checking the flags and going to sleep.
 */

extern volatile sig_atomic_t  slc_sig_reload;      /* HUP */
extern volatile sig_atomic_t  slc_sig_quit;        /* QUIT */
extern volatile sig_atomic_t  slc_sig_terminate;   /* TERM, INT */
extern volatile sig_atomic_t  slc_sig_reopen;      /* USR1 */
extern volatile sig_atomic_t  slc_sig_report;      /* USR2: the master logs
                                                      the modules' counters */
extern volatile sig_atomic_t  slc_sig_child;       /* CHLD */

/* Install handlers, block them; *waitmask gets the mask to wait with. */
int slc_signal_init(sigset_t *waitmask);

#endif /* SLC_SIGNAL_H */
