#ifndef SLC_ADMIN_H
#define SLC_ADMIN_H

#include "slc_core.h"
#include "slc_metrics.h"

#include <sys/types.h>

struct slc_cycle_s;

/*
 * Admin commands (issue 23, section 2): the lines an operator types on
 * an admin socket (modules/admin), which the modules that own what they
 * show or change declare in their table (slc_module_t.admin).  The admin
 * process runs them: a command reads shared memory and the
 * configuration, and changes only what shared memory lets it change (a
 * server's admin state, a cache zone's generations, a session's kill
 * mark); it never waits on a worker.
 *
 * Levels, in HAProxy's spirit: a socket has one, and runs the commands
 * of its level and below.
 */

#define SLC_ADMIN_READ      1       /* show */
#define SLC_ADMIN_OPERATOR  2       /* drain, enable, flush, reset */
#define SLC_ADMIN_ADMIN     3       /* kill */

#define SLC_ADMIN_ARGS      8       /* words of a line at most */

typedef struct {
    const char     *argv[SLC_ADMIN_ARGS];   /* the line's words */
    unsigned        argc;
    unsigned        first;      /* argv[first..argc) follow the name */
    uid_t           uid;        /* the peer's (SO_PEERCRED) */
    pid_t           pid;
    const char     *socket;     /* the admin socket's path */
} slc_admin_req_t;

typedef struct slc_admin_command_s {
    const char     *name;       /* its first words: "show servers" */
    unsigned        level;      /* SLC_ADMIN_* */
    const char     *usage;      /* the arguments, for help */
    const char     *help;
    /*
     * Run it: the answer into `out` (text, lines ending in '\n').
     * SLC_OK, or SLC_ERROR with the error in out (one line).  A command
     * that changes something logs it, with req->uid, where it changed
     * it.
     */
    int           (*run)(struct slc_cycle_s *cycle,
                         const slc_admin_req_t *req, slc_metrics_t *out);
} slc_admin_command_t;

/* The names of the levels ("read", "operator", "admin"), by level. */
const char *slc_admin_level_name(unsigned level);
/* A word a client sent, fit for an answer or the log: printable ASCII,
   the rest as '?', at most n - 1 bytes. */
void slc_admin_clean(char *dst, size_t n, const char *src);
/* A word that must be a decimal number in [1, max] (a count, an id):
   its value, 0 when it is not one (signs, other bytes, too long). */
uint64_t slc_admin_number(const char *s, uint64_t max);
/* The command of the modules' tables whose name is the most of the
   line's first words (*words: how many), NULL when none is. */
const slc_admin_command_t *slc_admin_find(const char *const *argv,
    unsigned argc, unsigned *words);

#endif /* SLC_ADMIN_H */
