#ifndef SLC_STATUS_SERVE_H
#define SLC_STATUS_SERVE_H

/* slc_status_serve.c: the status process's HTTP server (slc_status.h). */

#include "slc_core.h"
#include "slc_cycle.h"
#include "slc_listen.h"

#define SLC_STATUS_CONNS      64        /* at once */
#define SLC_STATUS_REQUESTS   100       /* per connection */
#define SLC_STATUS_BODY_MAX   (16u << 20)  /* a /metrics answer */

typedef struct {
    slc_listen_t    listen;         /* its address; listen.text "": off */
    long long       timeout;        /* ms: `status_timeout`, 5 s */
} slc_status_conf_t;

/* The role's init: listen on conf's address (SO_REUSEPORT: a reload's
   new process binds while the old one finishes).  SLC_ERROR, logged, if
   it cannot. */
int  slc_status_serve(const slc_cycle_t *cycle, const slc_status_conf_t *conf);
/* QUIT: stop listening, close idle connections, finish the others. */
void slc_status_quit(void);
/* Whether a connection is still open. */
int  slc_status_busy(void);

#endif /* SLC_STATUS_SERVE_H */
