#include "slc_core.h"
#include "slc_listen.h"

#include <sys/stat.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>

static int
slc_listen_parse_port(const char *s, in_port_t *port)
{
    char *end;
    long  v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno != 0 || v < 1 || v > 65535) {
        return SLC_ERROR;
    }
    *port = htons((in_port_t) v);
    return SLC_OK;
}

static int
slc_listen_parse_unix(const char *path, slc_listen_t *l, char *err,
    size_t errlen)
{
    struct sockaddr_un *sun = (struct sockaddr_un *) &l->addr;

    if (*path == '\0' || strlen(path) >= sizeof(sun->sun_path)) {
        snprintf(err, errlen, "invalid unix socket path \"%s\"", path);
        return SLC_ERROR;
    }
    sun->sun_family = AF_UNIX;
    strlcpy(sun->sun_path, path, sizeof(sun->sun_path));
    l->addrlen = sizeof(*sun);
    l->is_unix = 1;
    return SLC_OK;
}

static int
slc_listen_parse_inet6(const char *s, slc_listen_t *l)
{
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &l->addr;
    const char          *close = strchr(s, ']');
    char                 host[64];

    if (close == NULL || close[1] != ':' || (size_t) (close - s) >= 64) {
        return SLC_ERROR;
    }
    memcpy(host, s + 1, (size_t) (close - s - 1));
    host[close - s - 1] = '\0';
    sin6->sin6_family = AF_INET6;
    l->addrlen = sizeof(*sin6);
    if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1) {
        return SLC_ERROR;
    }
    return slc_listen_parse_port(close + 2, &sin6->sin6_port);
}

static int
slc_listen_parse_inet(const char *s, slc_listen_t *l)
{
    struct sockaddr_in *sin = (struct sockaddr_in *) &l->addr;
    const char         *colon = strrchr(s, ':');
    char                host[64];

    sin->sin_family = AF_INET;
    l->addrlen = sizeof(*sin);
    if (colon == NULL) {
        sin->sin_addr.s_addr = htonl(INADDR_ANY);
        return slc_listen_parse_port(s, &sin->sin_port);
    }
    if ((size_t) (colon - s) >= sizeof(host)) {
        return SLC_ERROR;
    }
    memcpy(host, s, (size_t) (colon - s));
    host[colon - s] = '\0';
    if (strcmp(host, "*") == 0) {
        sin->sin_addr.s_addr = htonl(INADDR_ANY);
    } else if (inet_pton(AF_INET, host, &sin->sin_addr) != 1) {
        return SLC_ERROR;
    }
    return slc_listen_parse_port(colon + 1, &sin->sin_port);
}

int
slc_listen_parse(const char *s, slc_listen_t *l, char *err, size_t errlen)
{
    int rc;

    memset(&l->addr, 0, sizeof(l->addr));
    strlcpy(l->text, s, sizeof(l->text));
    if (strncmp(s, "unix:", 5) == 0) {
        return slc_listen_parse_unix(s + 5, l, err, errlen);
    }
    rc = s[0] == '[' ? slc_listen_parse_inet6(s, l)
                     : slc_listen_parse_inet(s, l);
    if (rc != SLC_OK) {
        snprintf(err, errlen, "invalid listen address \"%s\" (expected "
            "PORT, ADDR:PORT, [ADDR6]:PORT or unix:PATH)", s);
    }
    return rc;
}

int
slc_listen_socket(slc_listen_t *l, char *err, size_t errlen)
{
    int fd, on = 1;
    int family = l->addr.ss_family;

    fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        snprintf(err, errlen, "socket() for %s failed (%s)", l->text,
            strerror(errno));
        return -1;
    }
    if (!l->is_unix) {
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on));
        if (family == AF_INET6) {
            (void) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
        }
    } else {
        struct sockaddr_un *sun = (struct sockaddr_un *) &l->addr;
        struct stat st;
        /* a stale socket of a previous run: remove it, never a file */
        if (lstat(sun->sun_path, &st) == 0 && S_ISSOCK(st.st_mode)) {
            unlink(sun->sun_path);
        }
    }
    if (bind(fd, (struct sockaddr *) &l->addr, l->addrlen) == -1
        || listen(fd, l->backlog) == -1)
    {
        snprintf(err, errlen, "%s:%u: bind() or listen() to %s failed (%s)",
            l->file, l->line, l->text, strerror(errno));
        close(fd);
        return -1;
    }
    if (l->is_unix) {
        chmod(((struct sockaddr_un *) &l->addr)->sun_path, 0777);
    }
    return fd;
}

static slc_listen_t *
slc_listen_find(slc_listen_t *old, const slc_listen_t *l)
{
    for (; old != NULL; old = old->next) {
        if (old->nfds > 0 && old->addrlen == l->addrlen
            && memcmp(&old->addr, &l->addr, l->addrlen) == 0)
        {
            return old;
        }
    }
    return NULL;
}

static int
slc_listen_open(slc_listen_t *l, slc_listen_t *old, unsigned nworkers,
    char *err, size_t errlen)
{
    slc_listen_t *o = slc_listen_find(old, l);
    unsigned      want = l->is_unix ? 1 : nworkers;
    unsigned      i;

    l->fds = calloc(want, sizeof(int));
    if (l->fds == NULL) {
        snprintf(err, errlen, "out of memory");
        return SLC_ERROR;
    }
    /* dup, not take: if this reload fails, the old list stays whole */
    for (i = 0; o != NULL && i < o->nfds && i < want; i++) {
        int fd = fcntl(o->fds[i], F_DUPFD_CLOEXEC, 0);
        if (fd == -1) {
            snprintf(err, errlen, "dup() of %s failed (%s)", l->text,
                strerror(errno));
            return SLC_ERROR;
        }
        l->fds[l->nfds++] = fd;
        o->carried = 1;
    }
    while (l->nfds < want) {
        int fd = slc_listen_socket(l, err, errlen);
        if (fd == -1) {
            return SLC_ERROR;
        }
        l->fds[l->nfds++] = fd;
    }
    return SLC_OK;
}

int
slc_listen_open_all(slc_listen_t *list, slc_listen_t *old,
    unsigned nworkers, char *err, size_t errlen)
{
    for (slc_listen_t *l = list; l != NULL; l = l->next) {
        if (slc_listen_open(l, old, nworkers, err, errlen) != SLC_OK) {
            return SLC_ERROR;
        }
    }
    return SLC_OK;
}

void
slc_listen_close_all(slc_listen_t *list, int unlink_unix)
{
    for (slc_listen_t *l = list; l != NULL; l = l->next) {
        for (unsigned i = 0; i < l->nfds; i++) {
            close(l->fds[i]);
        }
        if (l->nfds > 0 && l->is_unix && unlink_unix && !l->carried) {
            unlink(((struct sockaddr_un *) &l->addr)->sun_path);
        }
        l->nfds = 0;
        free(l->fds);
        l->fds = NULL;
    }
}

void
slc_listen_keep_slot(slc_listen_t *list, unsigned slot)
{
    for (slc_listen_t *l = list; l != NULL; l = l->next) {
        if (l->is_unix) {
            continue;
        }
        for (unsigned i = 0; i < l->nfds; i++) {
            if (i != slot) {
                close(l->fds[i]);
                l->fds[i] = -1;
            }
        }
    }
}
