#include "slc_core.h"
#include "slc_event.h"
#include "slc_log.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#define SLC_EVENT_BATCH  512

slc_loop_t  *slc_loop;

int
slc_timer_cmp(slc_timer_t *a, slc_timer_t *b)
{
    if (a->when != b->when) {
        return a->when < b->when ? -1 : 1;
    }
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

RB_GENERATE(slc_timer_tree, slc_timer_s, entry, slc_timer_cmp)

uint64_t
slc_time_ms(void)
{
    return slc_time_us() / 1000;
}

uint64_t
slc_time_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

int
slc_loop_init(slc_loop_t *loop)
{
    memset(loop, 0, sizeof(*loop));
    RB_INIT(&loop->timers);
    TAILQ_INIT(&loop->posted);
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epfd == -1) {
        return SLC_ERROR;
    }
    loop->now_us = slc_time_us();
    loop->now = loop->now_us / 1000;
    return SLC_OK;
}

void
slc_loop_done(slc_loop_t *loop)
{
    if (loop->epfd != -1) {
        close(loop->epfd);
        loop->epfd = -1;
    }
}

int
slc_conn_register(slc_loop_t *loop, slc_conn_t *c)
{
    struct epoll_event ee;

    ee.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ee.data.ptr = c;
    return epoll_ctl(loop->epfd, EPOLL_CTL_ADD, c->fd, &ee) == 0
        ? SLC_OK : SLC_ERROR;
}

int
slc_conn_register_listen(slc_loop_t *loop, slc_conn_t *c, int excl)
{
    struct epoll_event ee;

    ee.events = EPOLLIN | (excl ? EPOLLEXCLUSIVE : 0);
    ee.data.ptr = c;
    c->listening = 1;
    return epoll_ctl(loop->epfd, EPOLL_CTL_ADD, c->fd, &ee) == 0
        ? SLC_OK : SLC_ERROR;
}

void
slc_conn_unregister(slc_loop_t *loop, slc_conn_t *c)
{
    if (c->fd != -1) {
        (void) epoll_ctl(loop->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    }
}

void
slc_conn_close(slc_conn_t *c)
{
    if (c->fd != -1) {
        close(c->fd);       /* also removes it from the epoll set */
        c->fd = -1;
    }
    c->closed = 1;
    c->readable = 0;
    c->writable = 0;
}

ssize_t
slc_conn_read(slc_conn_t *c, void *buf, size_t len)
{
    /* recv, not read: a connection is a socket, and recv skips the file
       layer's checks (a point of a cache hit's CPU) */
    ssize_t n = recv(c->fd, buf, len, 0);

    if (n > 0) {
        /* A short read drained the socket: no need for a read that would
           only return EAGAIN; the next edge sets readable again.  After
           the peer's hang-up there is no next edge: the next read is the
           one that sees the EOF. */
        if ((size_t) n < len && !c->rdhup) {
            c->readable = 0;
        }
        if (c->bytes != NULL) {
            __atomic_add_fetch(&c->bytes[0], (uint64_t) n, __ATOMIC_RELAXED);
        }
        return n;
    }
    c->readable = 0;
    if (n == 0) {
        c->eof = 1;
        return 0;
    }
    if (errno == EAGAIN || errno == EINTR) {
        return 0;
    }
    c->error = 1;
    return SLC_ERROR;
}

int
slc_conn_hung_up(const slc_conn_t *c)
{
    return c->rdhup || c->eof || c->error;
}

ssize_t
slc_conn_write(slc_conn_t *c, const void *buf, size_t len)
{
    ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);

    if (n >= 0) {
        if ((size_t) n < len) {
            c->writable = 0;
        }
        if (c->bytes != NULL) {
            __atomic_add_fetch(&c->bytes[1], (uint64_t) n, __ATOMIC_RELAXED);
        }
        return n;
    }
    c->writable = 0;
    if (errno == EAGAIN || errno == EINTR) {
        return 0;
    }
    c->error = 1;
    return SLC_ERROR;
}

int
slc_conn_flush(slc_conn_t *c, slc_buf_t **bp)
{
    slc_buf_t *b = *bp;

    while (b != NULL && slc_buf_len(b) > 0 && c->writable) {
        ssize_t n = slc_conn_write(c, b->pos, slc_buf_len(b));
        if (n < 0) {
            return SLC_ERROR;
        }
        b->pos += n;
    }
    if (b != NULL && slc_buf_len(b) == 0) {
        slc_buf_put(b);
        *bp = NULL;
    }
    return SLC_OK;
}

void
slc_timer_add(slc_loop_t *loop, slc_timer_t *t, uint64_t ms)
{
    if (t->armed) {
        RB_REMOVE(slc_timer_tree, &loop->timers, t);
    }
    t->when = loop->now + ms;
    t->seq = loop->timer_seq++;
    t->armed = 1;
    RB_INSERT(slc_timer_tree, &loop->timers, t);
}

void
slc_timer_del(slc_loop_t *loop, slc_timer_t *t)
{
    if (t->armed) {
        RB_REMOVE(slc_timer_tree, &loop->timers, t);
        t->armed = 0;
    }
}

int
slc_loop_defer(slc_loop_t *loop, slc_defer_t *d, void (*fn)(void *),
    void *arg)
{
    d->fn = fn;
    d->arg = arg;
    d->next = loop->deferred;
    loop->deferred = d;
    return SLC_OK;
}

void
slc_post(slc_loop_t *loop, slc_posted_t *ev, void (*fn)(void *), void *arg)
{
    if (ev->posted) {
        return;
    }
    ev->fn = fn;
    ev->arg = arg;
    ev->round = loop->post_round;
    ev->posted = 1;
    TAILQ_INSERT_TAIL(&loop->posted, ev, link);
}

void
slc_post_cancel(slc_loop_t *loop, slc_posted_t *ev)
{
    if (ev->posted) {
        TAILQ_REMOVE(&loop->posted, ev, link);
        ev->posted = 0;
    }
}

/*
 * One round: what was posted before it started.  Work posted from here on
 * carries the new round number and, the queue being FIFO, sits behind all
 * of the older work, so the round stops at the first such entry.
 */
static void
slc_loop_run_posted(slc_loop_t *loop)
{
    slc_posted_t *ev;
    uint64_t      round = ++loop->post_round;

    while ((ev = TAILQ_FIRST(&loop->posted)) != NULL && ev->round != round) {
        TAILQ_REMOVE(&loop->posted, ev, link);
        ev->posted = 0;
        ev->fn(ev->arg);
    }
}

static void
slc_loop_expire_timers(slc_loop_t *loop)
{
    slc_timer_t *t;

    while ((t = RB_MIN(slc_timer_tree, &loop->timers)) != NULL
           && t->when <= loop->now)
    {
        RB_REMOVE(slc_timer_tree, &loop->timers, t);
        t->armed = 0;
        t->handler(t);
    }
}

static void
slc_loop_run_deferred(slc_loop_t *loop)
{
    while (loop->deferred != NULL) {
        slc_defer_t *d = loop->deferred;
        loop->deferred = d->next;
        d->fn(d->arg);
    }
}

int
slc_loop_timeout(slc_loop_t *loop, int max_wait)
{
    slc_timer_t *t = RB_MIN(slc_timer_tree, &loop->timers);

    if (!TAILQ_EMPTY(&loop->posted)) {
        return 0;                   /* posted work runs after a poll */
    }
    if (t == NULL) {
        return max_wait;
    }
    if (t->when <= loop->now) {
        return 0;
    }
    uint64_t d = t->when - loop->now;
    if (max_wait >= 0 && (uint64_t) max_wait < d) {
        return max_wait;
    }
    /* a far timer (over 24.8 days) must not wrap into a negative (wait
       forever) or tiny int: sleep a day at most and look again */
    return d > SLC_EVENT_MAX_WAIT ? SLC_EVENT_MAX_WAIT : (int) d;
}

static void
slc_loop_dispatch(struct epoll_event *ev)
{
    slc_conn_t *c = ev->data.ptr;
    uint32_t    e = ev->events;

    if (c->closed) {
        return;
    }
    if (c->listening) {
        c->on_read(c);
        return;
    }
    if (e & (EPOLLRDHUP | EPOLLHUP)) {
        c->rdhup = 1;
    }
    if (e & (EPOLLERR | EPOLLHUP)) {
        /* let both handlers find out through their own read/write */
        e |= EPOLLIN | EPOLLOUT;
    }
    if (e & (EPOLLIN | EPOLLRDHUP)) {
        c->readable = 1;
        c->on_read(c);
    }
    if ((e & EPOLLOUT) && !c->closed) {
        c->writable = 1;
        c->on_write(c);
    }
}

void
slc_loop_once(slc_loop_t *loop, int max_wait)
{
    struct epoll_event events[SLC_EVENT_BATCH];
    int                n;

    /* signals are blocked except while waiting: none is ever lost
       between checking the flags and going to sleep */
    n = epoll_pwait(loop->epfd, events, SLC_EVENT_BATCH,
        slc_loop_timeout(loop, max_wait), loop->sigmask);
    loop->now_us = slc_time_us();
    loop->now = loop->now_us / 1000;
    if (n == -1 && errno != EINTR) {
        slc_log_errno(SLC_LOG_ALERT, errno, "epoll_wait() failed");
    }
    for (int i = 0; i < n; i++) {
        slc_loop_dispatch(&events[i]);
    }
    slc_loop_run_deferred(loop);
    slc_loop_expire_timers(loop);
    slc_loop_run_posted(loop);
    slc_loop_run_deferred(loop);
}
