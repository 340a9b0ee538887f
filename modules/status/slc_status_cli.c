/*
 * `sluice -s status` (slc_status_cli.h): GET /status/text from the
 * configuration's status_listen, its body to stdout.  Blocking, bounded
 * in time (status_timeout per read and write) and size (16 MiB).
 */

#include "slc_core.h"
#include "slc_status.h"
#include "slc_status_cli.h"
#include "slc_status_serve.h"

#include <sys/socket.h>
#include <sys/time.h>

#define SLC_STATUS_CLI_MAX  (16u << 20)

/* Connected to the listener, with timeouts; -1 and err. */
static int
slc_status_cli_connect(const slc_status_conf_t *sc, char *err,
    size_t errlen)
{
    struct timeval tv = { .tv_sec = sc->timeout / 1000,
                          .tv_usec = (sc->timeout % 1000) * 1000 };
    int            fd = socket(sc->listen.addr.ss_family,
                               SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd == -1) {
        snprintf(err, errlen, "socket() failed (%s)", strerror(errno));
        return -1;
    }
    (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    (void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, (const struct sockaddr *) &sc->listen.addr,
                sc->listen.addrlen) == -1)
    {
        snprintf(err, errlen, "cannot reach the status listener %s (%s): "
            "is sluice running?", sc->listen.text, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* The whole answer (the server closes: Connection: close), malloc'ed
   and NUL-terminated; NULL and err. */
static char *
slc_status_cli_fetch(int fd, const char *addr, char *err, size_t errlen)
{
    static const char req[] = "GET /status/text HTTP/1.1\r\nHost: sluice\r\n"
                              "Connection: close\r\n\r\n";
    size_t            len = 0, cap = 65536;
    char             *buf = malloc(cap), *p;
    ssize_t           n;

    if (buf == NULL || send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL)
                       != (ssize_t) sizeof(req) - 1)
    {
        snprintf(err, errlen, "cannot ask %s (%s)", addr,
            buf == NULL ? "out of memory" : strerror(errno));
        free(buf);
        return NULL;
    }
    while ((n = recv(fd, buf + len, cap - len - 1, 0)) > 0) {
        len += (size_t) n;
        if (len + 1 == cap) {
            if (cap >= SLC_STATUS_CLI_MAX
                || (p = realloc(buf, cap * 2)) == NULL)
            {
                snprintf(err, errlen, "the answer of %s is too large", addr);
                free(buf);
                return NULL;
            }
            buf = p;
            cap *= 2;
        }
    }
    if (n < 0) {
        snprintf(err, errlen, "no answer from %s (%s)", addr,
            strerror(errno));
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

int
slc_status_print(slc_cycle_t *cycle, char *err, size_t errlen)
{
    const slc_status_conf_t *sc = slc_module_conf(cycle->mod_conf,
                                                  &slc_status_module);
    char                    *answer, *body;
    int                      fd;

    if (sc == NULL || sc->listen.text[0] == '\0') {
        return SLC_DONE;
    }
    if ((fd = slc_status_cli_connect(sc, err, errlen)) == -1) {
        return SLC_ERROR;
    }
    answer = slc_status_cli_fetch(fd, sc->listen.text, err, errlen);
    close(fd);
    if (answer == NULL) {
        return SLC_ERROR;
    }
    body = strstr(answer, "\r\n\r\n");
    if (strncmp(answer, "HTTP/1.1 200 ", 13) != 0 || body == NULL) {
        snprintf(err, errlen, "%s answered \"%.*s\"", sc->listen.text,
            (int) slc_min(strcspn(answer, "\r\n"), 60), answer);
        free(answer);
        return SLC_ERROR;
    }
    fputs(body + 4, stdout);
    free(answer);
    return SLC_OK;
}
