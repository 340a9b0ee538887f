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
 *
 * (written here with blanks inside the comment markers).
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_event.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_filter.h"
#include "slc_mysql_proto.h"

#define SLC_TF_ROW  100

typedef struct {
    slc_session_t      *session;
    slc_timer_t         timer;
    int                 hold;       /* after the pause: answer OK */
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
}

/* A result set of one text column "v": its head, rows, end. */
static int
slc_tf_eof(slc_session_t *s)
{
    uint8_t  p[16];
    size_t   n;

    if (slc_cmd_client_caps(s) & SLC_CLIENT_DEPRECATE_EOF) {
        n = slc_mysql_ok_build(p, sizeof(p), 0, 0, slc_cmd_status(s), 0);
        p[0] = SLC_MYSQL_EOF;           /* OK with an EOF header */
    } else {
        p[0] = SLC_MYSQL_EOF;
        slc_mysql_le_put(p + 1, 0, 2);
        slc_mysql_le_put(p + 3, slc_cmd_status(s), 2);
        n = 5;
    }
    return slc_cmd_reply(s, p, n);
}

static int
slc_tf_head(slc_session_t *s)
{
    static const uint8_t def[] = {
        3, 'd', 'e', 'f', 0, 0, 0, 1, 'v', 0, 0x0c,
        33, 0, 0, 1, 0, 0, 0xfd, 0, 0, 0, 0, 0
    };
    uint8_t one = 1;

    if (slc_cmd_reply(s, &one, 1) != SLC_OK
        || slc_cmd_reply(s, def, sizeof(def)) != SLC_OK)
    {
        return SLC_ERROR;
    }
    if (!(slc_cmd_client_caps(s) & SLC_CLIENT_DEPRECATE_EOF)) {
        return slc_tf_eof(s);
    }
    return SLC_OK;
}

static int
slc_tf_row(slc_session_t *s, const char *v)
{
    uint8_t  p[SLC_TF_ROW + 9];
    size_t   n = strlen(v);
    uint8_t *e = slc_mysql_lenenc_int_put(p, n);

    memcpy(e, v, n);
    return slc_cmd_reply(s, p, (size_t) (e - p) + n);
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
    rc = slc_tf_eof(s);
    return rc == SLC_OK ? SLC_DONE : rc;
}

static int
slc_tf_ok(slc_session_t *s)
{
    uint8_t p[16];

    return slc_cmd_reply(s, p, slc_mysql_ok_build(p, sizeof(p), 0, 0,
                         slc_cmd_status(s), 0));
}

static int
slc_tf_command(slc_session_t *s, void *ctx, const slc_cmd_t *c)
{
    slc_tf_ctx_t *tf = ctx;
    const char   *q = (const char *) c->payload + 1;
    size_t        n = c->avail > 0 ? c->avail - 1 : 0;
    uint8_t       p[128];
    unsigned long long v = 0;

    tf->packets = tf->bytes = 0;
    if (c->command != SLC_COM_QUERY || n < 5 || memcmp(q, "/*tf:", 5) != 0) {
        return SLC_FILTER_PASS;
    }
    q += 5;
    n -= 5;
    if (n > 5 && memcmp(q, "rows ", 5) == 0) {
        tf->rows = strtoull(q + 5, NULL, 10);
        tf->sent = 0;
        if (slc_tf_head(s) != SLC_OK) {
            return SLC_FILTER_PASS;     /* cannot happen at a reply's start */
        }
        slc_cmd_reply_stream(s, slc_tf_stream, tf);
        return SLC_FILTER_ANSWER;
    }
    if (n >= 3 && memcmp(q, "err", 3) == 0) {
        (void) slc_cmd_reply(s, p, slc_mysql_err_build(p, sizeof(p), 1105,
            "HY000", "testfilter: refused"));
        return SLC_FILTER_ANSWER;
    }
    if (n >= 4 && memcmp(q, "last", 4) == 0) {
        (void) slc_tf_head(s);
        (void) slc_tf_row(s, tf->last);
        (void) slc_tf_eof(s);
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

    (void) s;
    tf->packets += p->first;
    tf->bytes += p->len;
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
}
