/*
 * The admin process (slc_admin_serve.h): unix sockets, a line a command,
 * each answer ending with an empty line.
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_serve.h"
#include "slc_admin_serve.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#define SLC_ADMIN_ANSWER_MAX  (4u << 20)

typedef struct {
    slc_serve_conn_t            base;       /* first: slc_serve.h */
    const slc_admin_socket_t   *sock;
    uid_t                       uid;
    pid_t                       pid;
    char                        in[SLC_ADMIN_LINE];
    size_t                      in_len;
    slc_metrics_t               out;        /* the answers not yet sent */
    size_t                      out_off;
} slc_admin_conn_t;

typedef struct {
    slc_conn_t                  conn;
    const slc_admin_socket_t   *sock;
} slc_admin_listener_t;

static void slc_admin_on_io(slc_conn_t *c);
static void slc_admin_release(slc_serve_conn_t *c);
static int  slc_admin_writing(const slc_serve_conn_t *c);

static struct {
    slc_cycle_t                *cycle;
    slc_admin_listener_t        listen[SLC_ADMIN_SOCKETS];
    unsigned                    nlisten;
    slc_serve_t                 serve;
} slc_admin = {
    .serve = { .size = sizeof(slc_admin_conn_t), .max = SLC_ADMIN_CONNS,
               .timeout_ms = SLC_ADMIN_IDLE_MS, .on_io = slc_admin_on_io,
               .release = slc_admin_release,
               .writing = slc_admin_writing },
};


/* --- connections ---------------------------------------------------------- */

static void
slc_admin_release(slc_serve_conn_t *c)
{
    slc_metrics_free(&((slc_admin_conn_t *) c)->out);
}

static int
slc_admin_writing(const slc_serve_conn_t *c)
{
    return ((const slc_admin_conn_t *) c)->out.len > 0;
}

static void
slc_admin_accept(slc_conn_t *l)
{
    slc_admin_listener_t *al = l->data;
    slc_admin_conn_t     *ac;
    struct ucred          cred;
    socklen_t             len = sizeof(cred);
    int                   fd;

    while ((fd = accept4(l->fd, NULL, NULL,
                         SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
    {
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
            close(fd);
            continue;
        }
        if ((ac = (slc_admin_conn_t *) slc_serve_add(&slc_admin.serve, fd))
            == NULL)
        {
            slc_log(SLC_LOG_WARN, "admin: a connection to %s refused (%u "
                "open)", al->sock->path, slc_admin.serve.nconns);
            continue;
        }
        ac->sock = al->sock;
        ac->uid = cred.uid;
        ac->pid = cred.pid;
        slc_metrics_init(&ac->out, SLC_ADMIN_ANSWER_MAX);
    }
}


/* --- commands ------------------------------------------------------------- */

/* The commands this socket's level runs. */
static void
slc_admin_help(const slc_admin_conn_t *ac, slc_metrics_t *out)
{
    slc_metrics_printf(out, "help  this list\nquit  close the connection\n");
    for (int i = 0; slc_modules[i] != NULL; i++) {
        for (const slc_admin_command_t *c = slc_modules[i]->admin;
             c != NULL && c->name != NULL; c++)
        {
            if (c->level <= ac->sock->level) {
                slc_metrics_printf(out, "%s%s%s  %s\n", c->name,
                    c->usage[0] != '\0' ? " " : "", c->usage, c->help);
            }
        }
    }
}

/* One line's words into req; SLC_ERROR when it has too many. */
static int
slc_admin_split(char *line, slc_admin_req_t *req)
{
    char *save = NULL;

    req->argc = 0;
    for (char *w = strtok_r(line, " \t", &save); w != NULL;
         w = strtok_r(NULL, " \t", &save))
    {
        if (req->argc == SLC_ADMIN_ARGS) {
            return SLC_ERROR;
        }
        req->argv[req->argc++] = w;
    }
    return SLC_OK;
}

/* A command the line names, if this socket may run it: its answer. */
static void
slc_admin_run(slc_admin_conn_t *ac, slc_admin_req_t *req, slc_metrics_t *out)
{
    const slc_admin_command_t *c;
    char                       word[64];
    unsigned                   words;

    c = slc_admin_find(req->argv, req->argc, &words);
    if (c == NULL) {
        slc_admin_clean(word, sizeof(word), req->argv[0]);
        slc_metrics_printf(out, "error: unknown command \"%s\" (help lists "
            "them)\n", word);
        return;
    }
    if (c->level > ac->sock->level) {
        slc_metrics_printf(out, "error: \"%s\" needs the %s level, this "
            "socket has %s\n", c->name, slc_admin_level_name(c->level),
            slc_admin_level_name(ac->sock->level));
        return;
    }
    req->first = words;
    (void) c->run(slc_admin.cycle, req, out);
}

/* One line: logged with its peer, run, answered. */
static void
slc_admin_line(slc_admin_conn_t *ac, char *line)
{
    slc_admin_req_t req = { .uid = ac->uid, .pid = ac->pid,
                            .socket = ac->sock->path };
    slc_metrics_t   out;
    char            text[SLC_ADMIN_LINE];

    slc_admin_clean(text, sizeof(text), line);
    if (slc_admin_split(line, &req) != SLC_OK) {
        slc_metrics_printf(&ac->out, "error: more than %d words\n\n",
            SLC_ADMIN_ARGS);
        return;
    }
    if (req.argc == 0) {
        return;
    }
    slc_log(SLC_LOG_INFO, "admin: uid %u pid %d on %s: %s",
        (unsigned) ac->uid, (int) ac->pid, ac->sock->path, text);
    if (strcmp(req.argv[0], "quit") == 0 && req.argc == 1) {
        ac->base.closing = 1;
        return;
    }
    slc_metrics_init(&out, SLC_ADMIN_ANSWER_MAX);
    if (strcmp(req.argv[0], "help") == 0 && req.argc == 1) {
        slc_admin_help(ac, &out);
    } else {
        slc_admin_run(ac, &req, &out);
    }
    if (out.error != SLC_METRICS_OK) {
        slc_metrics_printf(&ac->out, "error: the answer is too large\n");
    } else if (out.len > 0) {
        slc_metrics_append(&ac->out, out.buf, out.len);
    }
    slc_metrics_printf(&ac->out, "\n");
    slc_metrics_free(&out);
}

/* The whole lines in the in buffer; a line past its size ends the
   connection after an error. */
static void
slc_admin_lines(slc_admin_conn_t *ac)
{
    char *nl;

    while (!ac->base.closing
           && (nl = memchr(ac->in, '\n', ac->in_len)) != NULL)
    {
        size_t n = (size_t) (nl - ac->in) + 1;

        *nl = '\0';
        if (nl > ac->in && nl[-1] == '\r') {
            nl[-1] = '\0';
        }
        slc_admin_line(ac, ac->in);
        ac->in_len -= n;
        memmove(ac->in, ac->in + n, ac->in_len);
        slc_serve_arm(&ac->base);
    }
    if (!ac->base.closing && ac->in_len == sizeof(ac->in)) {
        slc_metrics_printf(&ac->out, "error: a line is at most %d bytes\n\n",
            SLC_ADMIN_LINE - 1);
        ac->base.closing = 1;
    }
}


/* --- I/O ------------------------------------------------------------------ */

/* Write what waits; 1 while the connection lives. */
static int
slc_admin_flush(slc_admin_conn_t *ac)
{
    while (ac->out_off < ac->out.len) {
        ssize_t n = slc_conn_write(&ac->base.conn, ac->out.buf + ac->out_off,
                                   ac->out.len - ac->out_off);

        if (n < 0) {
            slc_serve_close(&ac->base);
            return 0;
        }
        if (n == 0) {
            return 1;                   /* full: on_write goes on */
        }
        ac->out_off += (size_t) n;
    }
    slc_metrics_free(&ac->out);
    slc_metrics_init(&ac->out, SLC_ADMIN_ANSWER_MAX);
    ac->out_off = 0;
    if (ac->base.closing) {
        shutdown(ac->base.conn.fd, SHUT_WR);
        slc_serve_close(&ac->base);
        return 0;
    }
    return 1;
}

static void
slc_admin_on_io(slc_conn_t *c)
{
    slc_admin_conn_t *ac = c->data;
    ssize_t           n;

    if (ac->base.closed) {
        return;
    }
    for ( ;; ) {
        if (!slc_admin_flush(ac) || ac->out.len > 0) {
            return;                     /* closed, or on_write goes on */
        }
        n = slc_conn_read(c, ac->in + ac->in_len,
                          sizeof(ac->in) - ac->in_len);
        if (n < 0) {
            slc_serve_close(&ac->base);
            return;
        }
        if (n == 0) {
            if (!c->eof) {
                return;                 /* nothing more for now */
            }
            if (ac->in_len > 0 && ac->in_len < sizeof(ac->in)) {
                ac->in[ac->in_len++] = '\n';    /* a last line unended */
                slc_admin_lines(ac);
            }
            ac->base.closing = 1;   /* the peer is done sending */
            continue;
        }
        ac->in_len += (size_t) n;
        slc_admin_lines(ac);
    }
}


/* --- the process ---------------------------------------------------------- */

/* A listening socket at as->path, with its owner and mode from the start
   (a stale socket there is removed first, never another file). */
static int
slc_admin_listen(const slc_admin_socket_t *as)
{
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    struct stat        st;
    mode_t             old;
    int                fd, rc;

    strlcpy(sun.sun_path, as->path, sizeof(sun.sun_path));
    if (lstat(as->path, &st) == 0 && S_ISSOCK(st.st_mode)) {
        unlink(as->path);
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        return -1;
    }
    old = umask(0177);
    rc = bind(fd, (struct sockaddr *) &sun, sizeof(sun));
    umask(old);
    if (rc == -1
        || ((as->uid != (uid_t) -1 || as->gid != (gid_t) -1)
            && chown(as->path, as->uid, as->gid) == -1)
        || chmod(as->path, (mode_t) as->mode) == -1
        || listen(fd, SLC_ADMIN_CONNS) == -1)
    {
        rc = errno;
        close(fd);
        errno = rc;
        return -1;
    }
    return fd;
}

int
slc_admin_serve(const slc_cycle_t *cycle, const slc_admin_conf_t *conf)
{
    slc_admin.cycle = (slc_cycle_t *) cycle;
    for (unsigned i = 0; i < conf->nsockets; i++) {
        const slc_admin_socket_t *as = &conf->sockets[i];
        slc_admin_listener_t     *al = &slc_admin.listen[i];
        int                       fd = slc_admin_listen(as);

        if (fd == -1) {
            slc_log_errno(SLC_LOG_ERR, errno, "%s:%u: admin_socket %s "
                "cannot listen", as->file, as->line, as->path);
            return SLC_ERROR;
        }
        al->sock = as;
        al->conn = (slc_conn_t) { .fd = fd, .on_read = slc_admin_accept,
                                  .data = al };
        if (slc_conn_register_listen(slc_loop, &al->conn, 0) != SLC_OK) {
            close(fd);
            return SLC_ERROR;
        }
        slc_admin.nlisten++;
        slc_log(SLC_LOG_NOTICE, "admin: listening on %s (level %s, mode "
            "%04o)", as->path, slc_admin_level_name(as->level), as->mode);
    }
    return SLC_OK;
}

void
slc_admin_serve_quit(void)
{
    for (unsigned i = 0; i < slc_admin.nlisten; i++) {
        slc_conn_unregister(slc_loop, &slc_admin.listen[i].conn);
        slc_conn_close(&slc_admin.listen[i].conn);
    }
    slc_admin.nlisten = 0;
    slc_serve_quit(&slc_admin.serve);
}

int
slc_admin_serve_busy(void)
{
    return slc_admin.serve.nconns > 0;
}
