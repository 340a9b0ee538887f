#include "slc_core.h"
#include "slc_signal.h"

volatile sig_atomic_t  slc_sig_reload;
volatile sig_atomic_t  slc_sig_quit;
volatile sig_atomic_t  slc_sig_terminate;
volatile sig_atomic_t  slc_sig_reopen;
volatile sig_atomic_t  slc_sig_report;
volatile sig_atomic_t  slc_sig_child;

static void
slc_signal_handler(int signo)
{
    switch (signo) {
    case SIGHUP:  slc_sig_reload = 1; break;
    case SIGQUIT: slc_sig_quit = 1; break;
    case SIGTERM:
    case SIGINT:  slc_sig_terminate = 1; break;
    case SIGUSR1: slc_sig_reopen = 1; break;
    case SIGUSR2: slc_sig_report = 1; break;
    case SIGCHLD: slc_sig_child = 1; break;
    }
}

int
slc_signal_init(sigset_t *waitmask)
{
    static const int  sigs[] = { SIGHUP, SIGQUIT, SIGTERM, SIGINT, SIGUSR1,
                                 SIGUSR2, SIGCHLD };
    struct sigaction  sa;
    sigset_t          set;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = slc_signal_handler;
    sigemptyset(&sa.sa_mask);
    sigemptyset(&set);
    for (size_t i = 0; i < slc_nelems(sigs); i++) {
        if (sigaction(sigs[i], &sa, NULL) == -1) {
            return -1;
        }
        sigaddset(&set, sigs[i]);
    }
    signal(SIGPIPE, SIG_IGN);
    if (sigprocmask(SIG_BLOCK, &set, waitmask) == -1) {
        return -1;
    }
    sigdelset(waitmask, SIGHUP);
    for (size_t i = 0; i < slc_nelems(sigs); i++) {
        sigdelset(waitmask, sigs[i]);
    }
    return 0;
}
