#ifndef SLC_SERVE_H
#define SLC_SERVE_H

#include "slc_core.h"
#include "slc_event.h"

/*
 * The connections of a small server in a helper process (the status
 * listener's HTTP, the admin socket's lines): a list with a cap, a
 * deadline per connection, a close that frees after the loop's batch
 * (the connection's events may still be queued), and a quit that closes
 * the idle ones and lets the others finish their answer.  The protocol
 * is the owner's: its connection struct begins with slc_serve_conn_t,
 * and its handlers read and write.
 */

typedef struct slc_serve_s       slc_serve_t;
typedef struct slc_serve_conn_s  slc_serve_conn_t;

struct slc_serve_conn_s {
    slc_conn_t              conn;       /* conn.data: this */
    slc_timer_t             deadline;
    slc_defer_t             release;
    slc_serve_t            *serve;
    unsigned                closing:1;  /* once its answer is out */
    unsigned                closed:1;   /* freed after the batch */
    slc_serve_conn_t       *next;
};

struct slc_serve_s {
    size_t                  size;       /* the owner's connection struct */
    unsigned                max;        /* connections at once */
    uint64_t                timeout_ms; /* slc_serve_arm's */
    slc_conn_handler_pt     on_io;      /* read and write */
    /* what the owner's struct holds besides itself (NULL: nothing) */
    void                  (*release)(slc_serve_conn_t *c);
    /* whether it still has an answer to write (quit lets it finish) */
    int                   (*writing)(const slc_serve_conn_t *c);
    slc_serve_conn_t       *conns;
    unsigned                nconns;
    int                     quitting;
};

/*
 * An accepted descriptor: a zeroed connection of s->size bytes, on the
 * loop, its deadline armed; NULL when it is refused (quitting, s->max
 * reached, no memory: fd is closed).
 */
slc_serve_conn_t *slc_serve_add(slc_serve_t *s, int fd);
/* Closed now (the descriptor, the timer), freed after the batch. */
void slc_serve_close(slc_serve_conn_t *c);
/* The deadline from now: s->timeout_ms. */
void slc_serve_arm(slc_serve_conn_t *c);
/* Accept no more; close the connections with nothing to write, the
   others once they have written it (closing). */
void slc_serve_quit(slc_serve_t *s);

#endif /* SLC_SERVE_H */
