/*
 * Held commands of a forwarding session (contract in slc_mysql_proxycmd.h).
 */

#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_proxycmd.h"
#include "slc_mysql_router.h"

unsigned
slc_proxycmd_watch(const slc_session_t *s)
{
    return SLC_WATCH_KILL | (s->srv->auth == SLC_AUTH_LOCAL
                             ? SLC_WATCH_CHANGE_USER : 0);
}

/*
 * In command mode every command stops, and what is released belongs to
 * the command in flight: its backend's tracker follows it (none follows
 * the rest of a command the proxy answered).
 */
void
slc_proxycmd_scan(slc_session_t *s)
{
    slc_buf_t     *b = s->in;
    uint8_t       *p = b->pos + s->in_ready;
    slc_backend_t *to = s->cmd != NULL ? slc_session_fwd->target(s)
                                       : s->backend;   /* the pump's */
    size_t         n;
    int            stop;

    n = slc_mysql_scan_client(&s->scan, to != NULL && to->track.infile,
        s->cmd != NULL ? SLC_WATCH_ALL : slc_proxycmd_watch(s), p,
        (size_t) (b->last - p), slc_buf_size(), &stop);
    if (to != NULL) {
        slc_mysql_track_client(&to->track, p, n);
    }
    if (s->cmd != NULL) {
        slc_session_fwd->released(s, p, n);
    }
    s->in_ready += n;
    s->held = stop == SLC_SCAN_CMD;
}

static uint32_t
slc_proxycmd_len(const slc_session_t *s)
{
    const uint8_t *p = s->in->pos;

    return (uint32_t) slc_mysql_le_get(p, 3);
}

/* Everything before the command was answered and forwarded. */
static int
slc_proxycmd_idle(const slc_session_t *s)
{
    return slc_mysql_track_idle(&s->backend->track)
           && (s->backend->in == NULL || slc_buf_len(s->backend->in) == 0);
}

static void
slc_proxycmd_done(slc_session_t *s)
{
    slc_mysql_scan_skip(&s->scan);
    s->held = 0;
    if (slc_buf_len(s->in) > s->in_ready) {
        slc_proxycmd_scan(s);            /* what came after the command */
    }
}

int
slc_proxycmd_pass(slc_session_t *s)
{
    size_t n = slc_proxycmd_len(s) + SLC_MYSQL_HDR_LEN;

    slc_mysql_track_client(&s->backend->track, s->in->pos, n);
    s->in_ready = n;
    slc_proxycmd_done(s);
    return SLC_OK;
}

/* The new packet ends where the old one did, so nothing after it moves. */
int
slc_proxycmd_replace(slc_session_t *s, const uint8_t *payload, size_t len)
{
    size_t old = slc_proxycmd_len(s);

    if (len > old) {
        return SLC_ERROR;
    }
    s->in->pos += old - len;
    slc_mysql_hdr_write(s->in->pos, (uint32_t) len, 0);
    memmove(s->in->pos + SLC_MYSQL_HDR_LEN, payload, len);
    return slc_proxycmd_pass(s);
}

void
slc_proxycmd_drop(slc_session_t *s)
{
    s->in->pos += slc_proxycmd_len(s) + SLC_MYSQL_HDR_LEN;
    s->in_ready = 0;
    slc_mysql_scan_skip(&s->scan);
    s->held = 0;
}

int
slc_proxycmd_answer(slc_session_t *s, const uint8_t *payload, size_t len)
{
    slc_proxycmd_drop(s);
    s->seq = 1;
    if (slc_session_send(s, payload, len) != SLC_OK) {
        slc_session_close(s, SLC_LOG_INFO, "client write failed");
        return SLC_ERROR;
    }
    if (slc_buf_len(s->in) > 0) {
        slc_proxycmd_scan(s);
    }
    return SLC_OK;
}

int
slc_proxycmd_answer_err(slc_session_t *s, uint16_t code, const char *state,
    const char *fmt, ...)
{
    uint8_t  pkt[600];
    char     msg[512];
    va_list  ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    slc_session_log(s, SLC_LOG_INFO, "answered error %u: %s", code, msg);
    return slc_proxycmd_answer(s, pkt,
        slc_mysql_err_build(pkt, sizeof(pkt), code, state, msg));
}

void
slc_proxycmd_resume(slc_session_t *s)
{
    s->paused = 0;
    slc_session_fwd->resume(s);
}

int
slc_proxycmd_run(slc_session_t *s)
{
    const uint8_t *pl = s->in->pos + SLC_MYSQL_HDR_LEN;
    uint32_t       len = slc_proxycmd_len(s);

    if (s->paused) {
        return SLC_AGAIN;
    }
    if (s->scan.big) {
        slc_session_fail(s, SLC_ER_NET_PACKET_TOO_LARGE, "08S01",
            "COM_CHANGE_USER larger than buffer_size");
        return SLC_ERROR;
    }
    if (!slc_proxycmd_idle(s)) {
        if (!s->backend->track.broken) {
            return SLC_AGAIN;   /* the router calls again once it is */
        }
        /* the tracker lost the framing and cannot say: a KILL goes on as
           it is, a change of user cannot be made safely */
        if (pl[0] != SLC_COM_CHANGE_USER) {
            return slc_proxycmd_pass(s);
        }
        slc_session_fail(s, SLC_ER_UNKNOWN_COM_ERROR, "08S01",
            "COM_CHANGE_USER cannot be served in this session");
        return SLC_ERROR;
    }
    if (pl[0] == SLC_COM_CHANGE_USER) {
        return slc_change_user_run(s, pl, len);
    }
    return slc_kill_run(s, pl, len);
}
