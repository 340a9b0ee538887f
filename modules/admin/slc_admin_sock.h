#ifndef SLC_ADMIN_SOCK_H
#define SLC_ADMIN_SOCK_H

/*
 * Admin sockets (issue 23, section 2; docs/operations.md): in the main
 * context,
 *
 *   admin_socket PATH [level=read|operator|admin] [user=NAME]
 *                [group=NAME] [mode=0600];
 *
 * as many as SLC_ADMIN_SOCKETS, each a unix socket with its own level
 * (admin by default), owner and mode (0600 by default: the owner only).
 * With one, the master runs a process of the role "admin" that serves
 * them all (slc_admin_serve.c): a line is a command of the modules'
 * tables (slc_admin.h) or help or quit; its answer ends with an empty
 * line.  What a command changes lasts until the next reload.
 */

#include "slc_core.h"
#include "slc_admin.h"
#include "slc_module.h"

#include <sys/types.h>

#define SLC_ADMIN_SOCKETS  8

typedef struct {
    char            path[108];      /* sun_path's size */
    unsigned        level;          /* SLC_ADMIN_* */
    uid_t           uid;            /* (uid_t) -1: the process's */
    gid_t           gid;
    unsigned        mode;
    const char     *file;
    unsigned        line;
} slc_admin_socket_t;

typedef struct {
    slc_admin_socket_t  sockets[SLC_ADMIN_SOCKETS];
    unsigned            nsockets;
} slc_admin_conf_t;

extern slc_module_t  slc_admin_module;

#endif /* SLC_ADMIN_SOCK_H */
