#ifndef SLC_CYCLE_H
#define SLC_CYCLE_H

#include "slc_core.h"
#include "slc_module.h"
#include "slc_palloc.h"
#include "slc_shm.h"
#include "slc_listen.h"

/*
 * A configuration generation.  A reload parses a new cycle next to the
 * running one; only when it is complete (config valid, sockets and zones in
 * place) does it replace the old one, which is then released.  Everything
 * parsed lives in cycle->pool.
 */

#define SLC_NICE_UNSET  100

struct slc_cycle_s {
    slc_pool_t         *pool;
    unsigned            generation;
    const char         *prefix;          /* ends with '/' */
    const char         *conf_file;

    /* main context */
    int                 worker_processes;  /* resolved, >= 1 */
    int                 daemon;
    int                 master_process;
    const char         *pid_path;
    const char         *error_log;
    int                 log_level;
    long long           shutdown_timeout;  /* ms */
    long long           rlimit_nofile;     /* 0: leave as inherited */
    int                 worker_priority;   /* nice; SLC_NICE_UNSET: inherited */
    int                 worker_sched_batch; /* SCHED_BATCH, else OTHER */

    /* events {} */
    unsigned            worker_connections;

    void              **mod_conf;          /* main level, by module index */
    slc_listen_t       *listens;           /* all server blocks' listens */
    slc_shm_zone_t     *zones;
    slc_role_t         *roles;             /* slc_cycle_add_role, in order */
};

extern slc_module_t  slc_core_module;

/* Parse `conf_file` into a new cycle; NULL with err = "file:line: msg". */
slc_cycle_t *slc_cycle_parse(const char *prefix, const char *conf_file,
    unsigned generation, char *err, size_t errlen);
void         slc_cycle_free(slc_cycle_t *cycle);
/*
 * Declare a process role (slc_role.h) in this cycle: `role` is copied into
 * the cycle's pool (the same template may serve every generation), the
 * copy is returned for the module to fill in data, NULL when out of memory
 * or when a role of that name is already declared.
 */
slc_role_t  *slc_cycle_add_role(slc_cycle_t *cycle, const slc_role_t *role);
/* A path from the config: absolute, or relative to the prefix. */
const char  *slc_cycle_path(slc_cycle_t *cycle, const char *path);

#endif /* SLC_CYCLE_H */
