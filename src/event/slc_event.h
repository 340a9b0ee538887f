#ifndef SLC_EVENT_H
#define SLC_EVENT_H

#include "slc_core.h"
#include "slc_buf.h"
#include <sys/queue.h>
#include <sys/tree.h>

/*
 * The per-worker event loop: epoll, edge-triggered.
 *
 * A connection is registered once for both directions (EPOLLIN | EPOLLOUT |
 * EPOLLRDHUP | EPOLLET) and never modified again: readiness is remembered in
 * `readable` / `writable`, set when epoll reports it and cleared by the I/O
 * helpers when a read or write comes back short or with EAGAIN.  Handlers
 * therefore stop and resume a direction (backpressure) without a syscall.
 *
 * A peer's hang-up (EPOLLRDHUP, EPOLLHUP) is remembered in `rdhup`: it may
 * come in the same event as the peer's last bytes, and an edge-triggered
 * loop gets no second edge for it.  While `rdhup` is set a short read does
 * not clear `readable`, so the next read finds the EOF; and a handler that
 * reads nothing for now (a session waiting for its backend) can still see
 * that its peer is gone.
 *
 * A connection closed while events for it are still queued in the current
 * batch is only marked closed here; the owner frees its memory from a
 * "release" callback that runs after the batch (see slc_loop_defer).
 *
 * One iteration of the loop:
 *
 *     wait (epoll; timeout 0 while work is posted)
 *     dispatch the batch of I/O events
 *     release what the batch closed (slc_loop_defer)
 *     expire timers
 *     run posted work (slc_post), FIFO, what was posted before this step
 *     release what timers and posted work closed
 */

typedef struct slc_conn_s   slc_conn_t;
typedef struct slc_timer_s  slc_timer_t;
typedef struct slc_loop_s   slc_loop_t;

typedef void (*slc_conn_handler_pt)(slc_conn_t *c);
typedef void (*slc_timer_handler_pt)(slc_timer_t *t);

struct slc_conn_s {
    int                  fd;
    unsigned             readable:1;
    unsigned             writable:1;
    unsigned             eof:1;         /* a read returned EOF */
    unsigned             rdhup:1;       /* peer hung up: EOF after the data */
    unsigned             error:1;
    unsigned             closed:1;
    unsigned             listening:1;
    slc_conn_handler_pt  on_read;       /* may be called with nothing to read */
    slc_conn_handler_pt  on_write;
    void                *data;
    /* bytes read [0] and written [1], added atomically (several
       processes may share the pair), NULL: not counted */
    uint64_t            *bytes;
};

struct slc_timer_s {
    RB_ENTRY(slc_timer_s)  entry;
    uint64_t               when;        /* ms, monotonic */
    uint64_t               seq;         /* tie breaker */
    unsigned               armed:1;
    slc_timer_handler_pt   handler;
    void                  *data;
};

RB_HEAD(slc_timer_tree, slc_timer_s);
RB_PROTOTYPE(slc_timer_tree, slc_timer_s, entry, slc_timer_cmp)

/*
 * Work posted to run before the next wait (slc_post): a library with a
 * callback API (hiredis, Connector/C's non-blocking calls) or a handler
 * that must not re-enter another one posts the rest of its work instead of
 * calling it from where it is.  The owner embeds it, and cancels it before
 * the memory goes (slc_post_cancel).
 */
typedef struct slc_posted_s  slc_posted_t;

struct slc_posted_s {
    TAILQ_ENTRY(slc_posted_s)  link;
    void                     (*fn)(void *);
    void                      *arg;
    uint64_t                   round;    /* the loop's round when posted */
    unsigned                   posted:1;
};

TAILQ_HEAD(slc_posted_queue, slc_posted_s);

typedef struct slc_defer_s {
    void                 (*fn)(void *);
    void                  *arg;
    struct slc_defer_s    *next;
} slc_defer_t;

struct slc_loop_s {
    int                    epfd;
    int                    stop;
    uint64_t               now;          /* ms, updated once per iteration */
    uint64_t               now_us;       /* the same in µs */
    uint64_t               timer_seq;
    struct slc_timer_tree  timers;
    slc_defer_t           *deferred;
    struct slc_posted_queue posted;
    uint64_t               post_round;  /* rounds of posted work run */
    const void            *sigmask;      /* sigset_t during epoll_pwait */
};

/* The longest single wait for a timer, a day: a deadline further away is
   waited for in several sleeps rather than overflowing the int timeout. */
#define SLC_EVENT_MAX_WAIT  (24 * 3600 * 1000)

extern slc_loop_t  *slc_loop;   /* this worker's loop */

int   slc_loop_init(slc_loop_t *loop);
void  slc_loop_done(slc_loop_t *loop);
/* One iteration: wait (at most until the next timer or `max_wait` ms). */
void  slc_loop_once(slc_loop_t *loop, int max_wait);
/* The epoll timeout of the next wait: 0 while work is posted, else until
   the next timer, at most `max_wait` ms (-1: no limit) and at most
   SLC_EVENT_MAX_WAIT. */
int   slc_loop_timeout(slc_loop_t *loop, int max_wait);
uint64_t slc_time_ms(void);   /* monotonic */
uint64_t slc_time_us(void);

int   slc_conn_register(slc_loop_t *loop, slc_conn_t *c);
/* Level-triggered read interest only, shared between processes without a
   thundering herd (EPOLLEXCLUSIVE): for listening sockets. */
int   slc_conn_register_listen(slc_loop_t *loop, slc_conn_t *c, int excl);
void  slc_conn_unregister(slc_loop_t *loop, slc_conn_t *c);
/* close(2) the fd and mark closed; memory stays with the owner. */
void  slc_conn_close(slc_conn_t *c);

/*
 * Queue fn(arg) to run after the current batch of events and the timers
 * that are due, before the loop waits again; while anything is posted the
 * next wait is a poll (timeout 0).  Posted work runs in the order it was
 * posted.  Posting an event that is already posted does nothing (it keeps
 * its place, fn and arg).  Work posted while posted work runs (an event
 * posting itself again included) runs in the next round, after one more
 * poll for I/O: a handler that keeps posting cannot starve the sockets.
 */
void  slc_post(slc_loop_t *loop, slc_posted_t *ev, void (*fn)(void *),
    void *arg);
/* Take a posted event off the queue; nothing if it is not posted. */
void  slc_post_cancel(slc_loop_t *loop, slc_posted_t *ev);
/* Whether `ev` is posted and has not run yet. */
static inline int
slc_post_pending(const slc_posted_t *ev)
{
    return ev->posted;
}

/* Run fn(arg) after the current batch of events (to free memory safely). */
int   slc_loop_defer(slc_loop_t *loop, slc_defer_t *d, void (*fn)(void *),
    void *arg);

void  slc_timer_add(slc_loop_t *loop, slc_timer_t *t, uint64_t ms);
void  slc_timer_del(slc_loop_t *loop, slc_timer_t *t);

/*
 * Non-blocking I/O that keeps the readiness flags.  They return bytes
 * moved, 0 (nothing moved: EAGAIN, or for read also EOF, see c->eof) or
 * SLC_ERROR (c->error set, errno kept).
 */
ssize_t slc_conn_read(slc_conn_t *c, void *buf, size_t len);
ssize_t slc_conn_write(slc_conn_t *c, const void *buf, size_t len);
/*
 * Whether the peer of a connection that is not being read now has hung up
 * (or the connection failed), without taking any byte it sent: the loop
 * remembered EPOLLRDHUP/EPOLLHUP in `rdhup`, so no syscall is needed.
 */
int     slc_conn_hung_up(const slc_conn_t *c);

/*
 * Write what *bp holds while `c` takes it; when the buffer drains it goes
 * back to the free list and *bp becomes NULL.  SLC_ERROR on a write error.
 */
int     slc_conn_flush(slc_conn_t *c, slc_buf_t **bp);

#endif /* SLC_EVENT_H */
