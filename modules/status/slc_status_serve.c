/*
 * The status process: HTTP on the status listener (slc_status_serve.h;
 * what it answers: slc_status.h).  One loop, no blocking call: a
 * connection reads into a fixed buffer of SLC_STATUS_HEAD_MAX bytes,
 * answers each whole request in order (pipelining), and is closed at the
 * first bad one (after its error answer), at its SLC_STATUS_REQUESTS-th,
 * when the peer asks, or when its deadline passes: `status_timeout` from
 * its accept and again from each answer, so a peer that trickles bytes
 * (slowloris) or idles is dropped.  An answer that cannot be written at
 * once waits in the connection's out buffer (bounded by the body's cap)
 * and nothing more is read meanwhile.
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_serve.h"
#include "slc_status_http.h"
#include "slc_status_json.h"
#include "slc_status_metrics.h"
#include "slc_status_serve.h"
#include "slc_status_text.h"

#include <sys/socket.h>
#include <time.h>

typedef struct {
    slc_serve_conn_t            base;          /* first: slc_serve.h */
    char                        in[SLC_STATUS_HEAD_MAX];
    size_t                      in_len;
    char                       *out;           /* malloc'ed */
    size_t                      out_len;
    size_t                      out_off;
    unsigned                    requests;
} slc_status_conn_t;

static void slc_status_on_read(slc_conn_t *c);
static void slc_status_release(slc_serve_conn_t *c);
static int  slc_status_writing(const slc_serve_conn_t *c);

static struct {
    const slc_cycle_t          *cycle;
    const slc_status_conf_t    *conf;
    slc_conn_t                  listen;
    slc_serve_t                 serve;
} slc_status = {
    .serve = { .size = sizeof(slc_status_conn_t), .max = SLC_STATUS_CONNS,
               .on_io = slc_status_on_read, .release = slc_status_release,
               .writing = slc_status_writing },
};


/* --- connections ---------------------------------------------------------- */

static void
slc_status_release(slc_serve_conn_t *c)
{
    free(((slc_status_conn_t *) c)->out);
}

static int
slc_status_writing(const slc_serve_conn_t *c)
{
    return ((const slc_status_conn_t *) c)->out_len > 0;
}

static void
slc_status_accept(slc_conn_t *l)
{
    int fd;

    while ((fd = accept4(l->fd, NULL, NULL,
                         SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
    {
        if (slc_serve_add(&slc_status.serve, fd) == NULL) {
            slc_status_state.refused++;
        }
    }
}


/* --- answers -------------------------------------------------------------- */

static const char *
slc_status_reason(unsigned code)
{
    switch (code) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 505: return "HTTP Version Not Supported";
    default:  return "Internal Server Error";
    }
}

/* The answer's head and (unless HEAD) body appended to the out buffer. */
static void
slc_status_answer(slc_status_conn_t *sc, unsigned code, const char *type,
    const char *body, size_t len, int head)
{
    char    h[384];
    int     n;
    char   *p;

    slc_status_state.responses[slc_status_code_index(code)]++;
    n = snprintf(h, sizeof(h), "HTTP/1.1 %u %s\r\nServer: sluice\r\n"
        "Content-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n", code,
        slc_status_reason(code), type, len,
        code == 405 ? "Allow: GET, HEAD\r\n" : "",
        sc->base.closing ? "Connection: close\r\n" : "");
    len = head ? 0 : len;
    if ((p = realloc(sc->out, sc->out_len + (size_t) n + len)) == NULL) {
        sc->base.closing = 1;
        return;
    }
    sc->out = p;
    memcpy(p + sc->out_len, h, (size_t) n);
    memcpy(p + sc->out_len + (size_t) n, body, len);
    sc->out_len += (size_t) n + len;
}

static void
slc_status_error(slc_status_conn_t *sc, unsigned code)
{
    char body[64];
    int  n = snprintf(body, sizeof(body), "%u %s\n", code,
                      slc_status_reason(code));

    sc->base.closing = 1;
    slc_status_answer(sc, code, "text/plain; charset=utf-8", body,
        (size_t) n, 0);
}

/* GET /status/text: the metrics, read back for a person. */
static void
slc_status_page_text(const slc_cycle_t *cycle, slc_metrics_t *m)
{
    slc_metrics_t raw;

    slc_metrics_init(&raw, m->max);
    slc_status_metrics(cycle, &raw);
    if (raw.error != SLC_METRICS_OK) {
        m->error = raw.error;
    } else {
        slc_status_text(raw.buf != NULL ? raw.buf : "", m);
    }
    slc_metrics_free(&raw);
}

static const struct {
    const char  *path;
    const char  *type;
    void       (*write)(const slc_cycle_t *cycle, slc_metrics_t *m);
} slc_status_pages[] = {
    { "/metrics", "text/plain; version=0.0.4; charset=utf-8",
      slc_status_metrics },
    { "/status", "application/json", slc_status_json },
    { "/status/text", "text/plain; charset=utf-8", slc_status_page_text },
};

/* One request's answer. */
static void
slc_status_route(slc_status_conn_t *sc, const slc_status_req_t *req)
{
    slc_metrics_t m;
    unsigned      i = 0;

    while (i < slc_nelems(slc_status_pages)
           && strcmp(req->path, slc_status_pages[i].path) != 0)
    {
        i++;
    }
    if (i == slc_nelems(slc_status_pages)) {
        slc_status_answer(sc, 404, "text/plain; charset=utf-8",
            "404 Not Found\n", 14, req->head);
        return;
    }
    slc_metrics_init(&m, SLC_STATUS_BODY_MAX);
    slc_status_pages[i].write(slc_status.cycle, &m);
    if (m.error != SLC_METRICS_OK) {
        slc_log(SLC_LOG_ERR, "status: %s could not be written (%d)",
            req->path, m.error);
        slc_status_error(sc, 500);
    } else {
        slc_status_answer(sc, 200, slc_status_pages[i].type,
            m.buf != NULL ? m.buf : "", m.len, req->head);
    }
    slc_metrics_free(&m);
}

/* The whole requests in the in buffer, answered in order. */
static void
slc_status_requests(slc_status_conn_t *sc)
{
    slc_status_req_t req;
    int              n;

    while (!sc->base.closing && sc->in_len > 0) {
        n = slc_status_http_parse(sc->in, sc->in_len, &req);
        if (n == 0) {
            return;                     /* more to come */
        }
        if (n < 0) {
            slc_status_error(sc, (unsigned) -n);
            return;
        }
        sc->in_len -= (size_t) n;
        memmove(sc->in, sc->in + n, sc->in_len);
        sc->base.closing = req.close || slc_status.serve.quitting
                           || ++sc->requests >= SLC_STATUS_REQUESTS;
        slc_status_route(sc, &req);
        slc_serve_arm(&sc->base);
    }
}


/* --- I/O ------------------------------------------------------------------ */

/* Write what waits; 1 while the connection lives. */
static int
slc_status_flush(slc_status_conn_t *sc)
{
    while (sc->out_off < sc->out_len) {
        ssize_t n = slc_conn_write(&sc->base.conn, sc->out + sc->out_off,
                                   sc->out_len - sc->out_off);

        if (n < 0) {
            slc_serve_close(&sc->base);
            return 0;
        }
        if (n == 0) {
            return 1;                   /* full: on_write goes on */
        }
        sc->out_off += (size_t) n;
    }
    free(sc->out);
    sc->out = NULL;
    sc->out_len = sc->out_off = 0;
    if (sc->base.closing) {
        shutdown(sc->base.conn.fd, SHUT_WR);
        slc_serve_close(&sc->base);
        return 0;
    }
    return 1;
}

static void
slc_status_on_read(slc_conn_t *c)
{
    slc_status_conn_t *sc = c->data;
    ssize_t            n;

    if (sc->base.closed) {
        return;
    }
    for ( ;; ) {
        if (!slc_status_flush(sc) || sc->out_len > 0) {
            return;                     /* closed, or on_write goes on */
        }
        if (sc->in_len == sizeof(sc->in)) {
            slc_status_error(sc, 431);  /* no whole request in 8 KiB */
            continue;
        }
        n = slc_conn_read(c, sc->in + sc->in_len,
                          sizeof(sc->in) - sc->in_len);
        if (n < 0) {
            slc_serve_close(&sc->base);
            return;
        }
        if (n == 0) {
            if (!c->eof) {
                return;                 /* nothing more for now */
            }
            sc->base.closing = 1;            /* the peer is done sending */
            continue;
        }
        sc->in_len += (size_t) n;
        slc_status_requests(sc);
    }
}



/* --- the process ---------------------------------------------------------- */

int
slc_status_serve(const slc_cycle_t *cycle, const slc_status_conf_t *conf)
{
    slc_listen_t    l = conf->listen;
    char            err[256];
    struct timespec ts;
    int             fd;

    slc_status.cycle = cycle;
    slc_status.conf = conf;
    slc_status.serve.timeout_ms = (uint64_t) conf->timeout;
    clock_gettime(CLOCK_REALTIME, &ts);
    slc_status_state.loaded_ms = (uint64_t) ts.tv_sec * 1000
                                 + (uint64_t) ts.tv_nsec / 1000000;
    slc_status_conf_hash(cycle->conf_file);
    if ((fd = slc_listen_socket(&l, err, sizeof(err))) < 0) {
        slc_log(SLC_LOG_ERR, "status: %s", err);
        return SLC_ERROR;
    }
    slc_status.listen = (slc_conn_t) { .fd = fd,
                                       .on_read = slc_status_accept };
    if (slc_conn_register_listen(slc_loop, &slc_status.listen, 0)
        != SLC_OK)
    {
        close(fd);
        return SLC_ERROR;
    }
    slc_log(SLC_LOG_NOTICE, "status: listening on %s", l.text);
    return SLC_OK;
}

void
slc_status_quit(void)
{
    if (slc_status.listen.fd >= 0) {
        slc_conn_unregister(slc_loop, &slc_status.listen);
        slc_conn_close(&slc_status.listen);
    }
    slc_serve_quit(&slc_status.serve);
}

int
slc_status_busy(void)
{
    return slc_status.serve.nconns > 0;
}
