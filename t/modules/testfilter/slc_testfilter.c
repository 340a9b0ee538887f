/*
 * testfilter: a filter that exercises every part of the command layer for
 * t/filter.t.  It acts on COM_QUERY text that starts with a comment of
 * its own and passes everything else:
 *
 *   / *tf:rows N* /         answers N rows itself (one column, 100 bytes a
 *                           row): a streamed reply longer than a buffer
 *   / *tf:err* /            answers ERR 1105
 *   / *tf:pause MS* / ...   pauses the session MS ms, then passes it on
 *   / *tf:hold MS* /        pauses MS ms, then answers OK
 *   / *tf:last* /           answers one row: what the packet and done
 *                           hooks saw of the previous response
 *                           ("packets bytes status first stmt_id columns
 *                           params")
 *   / *tf:pid* /            answers one row: the pid of the worker
 *   / *tf:stall MS* / ...   passes it on; once the client has the
 *                           response (the filters' done hook, before the
 *                           router's), blocks the worker MS ms, as a
 *                           worker preempted there would be
 *                           (t/rwsplit_causal_workers.t)
 *   / *tf:close N* / ...    passes it on; the packet hook closes the
 *                           session at the response's Nth packet, in the
 *                           middle of bytes the tracker is reading (a
 *                           hook that ends its session, t/filter.t)
 *
 * (written here with blanks inside the comment markers).
 *
 * And one test hook for t/cache_lockkill.t, the text being exactly
 *
 *   SELECT 'testfilter: hold shm zone NAME'
 *
 * where NAME is a shared-memory zone of the cycle ("cache/qc" for the
 * cache zone qc): the worker takes the zone's first lock (a slab pool's
 * mutex), logs at notice `testfilter: holding the lock of shm zone "NAME"
 * (holder PID)` and blocks inside it for ever, never to return to its
 * event loop, as a worker wedged or killed in the middle of an index
 * operation would.  Only SIGKILL ends it; then the master must release the
 * lock (slc_master_reap_process) or every other user of the zone waits
 * for ever.  A NAME that is no zone is passed on like any statement.
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_event.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_filter.h"
#include "slc_mysql_proto.h"
#include "slc_mysql_session.h"
#include "slc_shm.h"
#include "slc_shmtx.h"

#include <time.h>

#define SLC_TF_ROW  100
#define SLC_TF_HOLD "SELECT 'testfilter: hold shm zone "

typedef struct {
    slc_session_t      *session;
    slc_timer_t         timer;
    int                 hold;       /* after the pause: answer OK */
    unsigned long long  stall;      /* ms to block at done, or 0 */
    unsigned long long  close_at;   /* packet to close the session at */
    int                 closed;     /* the close hook ran */
    uint64_t            rows;       /* of a rows answer: to send */
    uint64_t            sent;
    int                 phase;      /* 0 header, 1 rows, 2 end */
    /* of the response in flight, and of the last complete one */
    uint64_t            packets, bytes;
    char                last[128];
} slc_tf_ctx_t;

static int  slc_tf_open(slc_session_t *s, void *ctx);
static void slc_tf_close(slc_session_t *s, void *ctx);
static int  slc_tf_command(slc_session_t *s, void *ctx, const slc_cmd_t *c);
static void slc_tf_packet(slc_session_t *s, void *ctx,
    const slc_cmd_packet_t *p);
static void slc_tf_done(slc_session_t *s, void *ctx,
    const slc_mysql_reply_t *r, uint16_t status);
static int  slc_tf_ok(slc_session_t *s);

static const slc_filter_t slc_tf_filter = {
    .ctx_size = sizeof(slc_tf_ctx_t),
    .open = slc_tf_open,
    .close = slc_tf_close,
    .command = slc_tf_command,
    .packet = slc_tf_packet,
    .done = slc_tf_done,
};

slc_module_t slc_testfilter_module = {
    .name = "testfilter",
    .type = SLC_MODULE_FILTER,
    .filter = &slc_tf_filter,
};

static void
slc_tf_timer(slc_timer_t *t)
{
    slc_tf_ctx_t *tf = t->data;

    if (tf->hold) {
        (void) slc_tf_ok(tf->session);
    }
    slc_filter_resume(tf->session, tf->hold ? SLC_FILTER_ANSWER
                                            : SLC_FILTER_PASS);
}

static int
slc_tf_open(slc_session_t *s, void *ctx)
{
    slc_tf_ctx_t *tf = ctx;

    tf->session = s;
    tf->timer.handler = slc_tf_timer;
    tf->timer.data = tf;
    strlcpy(tf->last, "none", sizeof(tf->last));
    return SLC_OK;
}

static void
slc_tf_close(slc_session_t *s, void *ctx)
{
    slc_tf_ctx_t *tf = ctx;

    (void) s;
    slc_timer_del(slc_loop, &tf->timer);
    tf->closed = 1;
}

static const char *const slc_tf_columns[] = { "v" };

static int
slc_tf_row(slc_session_t *s, const char *v)
{
    size_t n = strlen(v);

    return slc_reply_row(s, &v, &n, 1);
}

/* The stream of a rows answer: as much as the buffer takes each time. */
static int
slc_tf_stream(slc_session_t *s, void *data)
{
    slc_tf_ctx_t *tf = data;
    char          v[SLC_TF_ROW + 1];
    int           rc;

    while (tf->sent < tf->rows) {
        int n = snprintf(v, sizeof(v), "%llu:", (unsigned long long)
                         (tf->sent + 1));
        memset(v + n, 'x', SLC_TF_ROW - (size_t) n);
        v[SLC_TF_ROW] = '\0';
        if ((rc = slc_tf_row(s, v)) != SLC_OK) {
            return rc;
        }
        tf->sent++;
    }
    rc = slc_reply_end(s);
    return rc == SLC_OK ? SLC_DONE : rc;
}

static int
slc_tf_ok(slc_session_t *s)
{
    return slc_reply_ok(s, 0);
}

/*
 * TEST HOOK (t/cache_lockkill.t): a query `SELECT 'testfilter: hold shm
 * zone NAME'` takes the first lock of zone NAME and never lets go; this
 * worker is blocked until it is killed.  Returns only when the query is
 * not that one or names no zone with a lock.
 */
static void
slc_tf_hold_zone(slc_session_t *s, const char *q, size_t n)
{
    size_t          pre = sizeof(SLC_TF_HOLD) - 1;
    char            name[64];
    slc_shm_zone_t *z;

    if (n <= pre + 1 || n - pre - 1 >= sizeof(name) || q[n - 1] != '\''
        || memcmp(q, SLC_TF_HOLD, pre) != 0)
    {
        return;
    }
    memcpy(name, q + pre, n - pre - 1);
    name[n - pre - 1] = '\0';
    z = slc_shm_zone_find(s->cycle, name);
    if (z == NULL || z->nlocks == 0) {
        return;
    }
    slc_shmtx_lock(z->locks[0]);
    /* the zone's name, not the client's bytes: nothing to escape */
    slc_session_log(s, SLC_LOG_NOTICE, "testfilter: holding the lock of "
        "shm zone \"%s\" (holder %d)", z->name,
        (int) slc_shmtx_holder(z->locks[0]));
    for ( ;; ) {
        pause();
    }
}

static int
slc_tf_command(slc_session_t *s, void *ctx, const slc_cmd_t *c)
{
    slc_tf_ctx_t *tf = ctx;
    const char   *q = (const char *) c->payload + 1;
    size_t        n = c->avail > 0 ? c->avail - 1 : 0;
    unsigned long long v = 0;

    tf->packets = tf->bytes = 0;
    if (c->command == SLC_COM_QUERY) {
        slc_tf_hold_zone(s, q, n);      /* returns unless it is the hook */
    }
    if (c->command != SLC_COM_QUERY || n < 5 || memcmp(q, "/*tf:", 5) != 0) {
        return SLC_FILTER_PASS;
    }
    q += 5;
    n -= 5;
    if (n > 5 && memcmp(q, "rows ", 5) == 0) {
        tf->rows = strtoull(q + 5, NULL, 10);
        tf->sent = 0;
        if (slc_reply_columns(s, slc_tf_columns, 1) != SLC_OK) {
            return SLC_FILTER_PASS;     /* cannot happen at a reply's start */
        }
        slc_cmd_stream(s, slc_tf_stream, tf);
        return SLC_FILTER_ANSWER;
    }
    if (n >= 3 && memcmp(q, "err", 3) == 0) {
        (void) slc_reply_err(s, 1105, "HY000", "testfilter: refused");
        return SLC_FILTER_ANSWER;
    }
    if (n >= 3 && memcmp(q, "pid", 3) == 0) {
        char pid[32];

        snprintf(pid, sizeof(pid), "%ld", (long) getpid());
        (void) slc_reply_columns(s, slc_tf_columns, 1);
        (void) slc_tf_row(s, pid);
        (void) slc_reply_end(s);
        return SLC_FILTER_ANSWER;
    }
    if (n > 6 && memcmp(q, "stall ", 6) == 0) {
        tf->stall = strtoull(q + 6, NULL, 10);
        return SLC_FILTER_PASS;
    }
    if (n > 6 && memcmp(q, "close ", 6) == 0) {
        tf->close_at = strtoull(q + 6, NULL, 10);
        return SLC_FILTER_PASS;
    }
    if (n >= 4 && memcmp(q, "last", 4) == 0) {
        (void) slc_reply_columns(s, slc_tf_columns, 1);
        (void) slc_tf_row(s, tf->last);
        (void) slc_reply_end(s);
        return SLC_FILTER_ANSWER;
    }
    if (n > 5 && (memcmp(q, "pause", 5) == 0 || memcmp(q, "hold ", 5) == 0)) {
        tf->hold = q[0] == 'h';
        v = strtoull(q + 5, NULL, 10);
        slc_timer_add(slc_loop, &tf->timer, v);
        return SLC_FILTER_PAUSE;
    }
    return SLC_FILTER_PASS;
}

static void
slc_tf_packet(slc_session_t *s, void *ctx, const slc_cmd_packet_t *p)
{
    slc_tf_ctx_t *tf = ctx;

    if (tf->closed) {
        slc_log(SLC_LOG_ALERT, "testfilter: a packet hook after close");
        return;
    }
    tf->packets += p->first;
    tf->bytes += p->len;
    if (tf->close_at > 0 && tf->packets == tf->close_at && p->first) {
        tf->close_at = 0;
        slc_session_close(s, SLC_LOG_INFO, "testfilter: closed in a packet "
            "hook");
    }
}

static void
slc_tf_done(slc_session_t *s, void *ctx, const slc_mysql_reply_t *r,
    uint16_t status)
{
    slc_tf_ctx_t *tf = ctx;

    (void) s;
    snprintf(tf->last, sizeof(tf->last), "%llu %llu %u %u %u %u %u",
        (unsigned long long) tf->packets, (unsigned long long) tf->bytes,
        status, r->first, r->stmt_id, r->columns, r->params);
    if (tf->stall > 0) {
        struct timespec ts = {
            .tv_sec = (time_t) (tf->stall / 1000),
            .tv_nsec = (long) (tf->stall % 1000) * 1000000
        };

        tf->stall = 0;
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
            /* the rest of it */
        }
    }
}
