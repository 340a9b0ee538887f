/*
 * nullserver: the least work a server can do per point select over TCP,
 * to tell how much of a cache hit's CPU is the host's and how much is
 * sluice's.
 *
 *   nullserver -P PORT [-h ADDRESS] [-t THREADS]
 *
 * Speaks just enough of the MySQL protocol for sysbench: a greeting, any
 * login accepted, and every COM_QUERY that starts with SELECT answered
 * with the same one-row result set from memory (the shape of sysbench's
 * point select: one CHAR(120) column); other statements get an OK,
 * COM_QUIT closes, anything else an error.  Like a sluice worker it is
 * one epoll loop per thread on its own SO_REUSEPORT listener, and answers
 * every read with one send: 1 recv + 1 send per query, no lookup, no
 * copy but the send's.  The CPU it takes per query is therefore what the
 * kernel charges any such server on this host (loopback TCP, waking the
 * client), the floor under a cache hit of any proxy.
 *
 * Not a server: no password is checked, no data kept.  It listens on
 * loopback unless told otherwise.
 *
 * Build: cc -O2 -pthread -o nullserver nullserver.c
 */

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define NULL_BUF_SIZE      16384    /* a point select is < 100 bytes */
#define NULL_MAX_EVENTS    512
#define NULL_MAX_THREADS   64

#define CAP_PROTOCOL_41     0x00000200u
#define CAP_SECURE_CONN     0x00008000u
#define CAP_PLUGIN_AUTH     0x00080000u
#define CAP_DEPRECATE_EOF   0x01000000u
#define NULL_CAPS           (0x00000001u | 0x00000004u | 0x00000008u \
                             | CAP_PROTOCOL_41 | 0x00002000u            \
                             | CAP_SECURE_CONN | 0x00010000u            \
                             | 0x00020000u | CAP_PLUGIN_AUTH            \
                             | 0x00200000u | CAP_DEPRECATE_EOF)

#define COM_QUIT            0x01
#define COM_QUERY           0x03

typedef struct {
    int         fd;
    int         ep;             /* its loop's epoll */
    int         want_out;       /* EPOLLOUT asked: a send was cut short */
    int         authed;         /* the handshake response came */
    uint32_t    caps;           /* the client's, once authed */
    size_t      in_len;
    size_t      out_len;
    size_t      out_sent;
    uint8_t     in[NULL_BUF_SIZE];
    uint8_t     out[NULL_BUF_SIZE];
} null_conn_t;

typedef struct {
    struct sockaddr_in  addr;
    int                 threads;
} null_opts_t;

static uint8_t  null_row[120];  /* sysbench's c: 119 characters */


static void
null_usage(void)
{
    fprintf(stderr, "usage: nullserver -P PORT [-h ADDRESS] [-t THREADS]\n");
    exit(2);
}

static void
null_parse(int argc, char **argv, null_opts_t *o)
{
    int c, port = 0;

    memset(o, 0, sizeof(*o));
    o->addr.sin_family = AF_INET;
    o->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    o->threads = 1;
    while ((c = getopt(argc, argv, "h:P:t:")) != -1) {
        switch (c) {
        case 'h':
            if (inet_pton(AF_INET, optarg, &o->addr.sin_addr) != 1)
                null_usage();
            break;
        case 'P': port = atoi(optarg); break;
        case 't': o->threads = atoi(optarg); break;
        default:  null_usage();
        }
    }
    if (port <= 0 || port > 65535 || o->threads < 1
        || o->threads > NULL_MAX_THREADS)
        null_usage();
    o->addr.sin_port = htons((uint16_t) port);
}

/* --- packets ------------------------------------------------------------ */

/* Appends a packet of LEN bytes with sequence id SEQ; the caller writes
 * the payload at the returned pointer. */
static uint8_t *
null_packet(null_conn_t *c, size_t len, uint8_t seq)
{
    uint8_t *p = c->out + c->out_len;

    if (c->out_len + 4 + len > sizeof(c->out))
        return NULL;
    p[0] = (uint8_t) len;
    p[1] = (uint8_t) (len >> 8);
    p[2] = (uint8_t) (len >> 16);
    p[3] = seq;
    c->out_len += 4 + len;
    return p + 4;
}

static int
null_ok(null_conn_t *c, uint8_t seq, uint8_t header)
{
    static const uint8_t body[] = { 0, 0, 0, 0x02, 0, 0, 0 };
    uint8_t *p = null_packet(c, sizeof(body), seq);

    if (p == NULL)
        return -1;
    memcpy(p, body, sizeof(body));
    p[0] = header;
    return 0;
}

static int
null_err(null_conn_t *c, uint8_t seq, const char *msg)
{
    size_t n = strlen(msg);
    uint8_t *p = null_packet(c, 9 + n, seq);

    if (p == NULL)
        return -1;
    memcpy(p, "\xff\x2f\x04#HY000", 9);   /* 1071 */
    memcpy(p + 9, msg, n);
    return 0;
}

static uint8_t *
null_lenenc_str(uint8_t *p, const void *s, size_t n)
{
    *p++ = (uint8_t) n;                 /* every string here is < 251 */
    memcpy(p, s, n);
    return p + n;
}

/* One column `c` CHAR(120) of test.sbtest1, one row, then EOF or the OK
 * that replaces it under CLIENT_DEPRECATE_EOF. */
static int
null_resultset(null_conn_t *c)
{
    static const uint8_t tail[] = { 0x0c, 45, 0, 0xe0, 0x01, 0, 0,
                                    0xfe, 0x01, 0x10, 0, 0, 0 };
    uint8_t  def[64], *p, *q;
    uint8_t  seq = 1;
    int      deprecate = (c->caps & CAP_DEPRECATE_EOF) != 0;

    q = def;
    q = null_lenenc_str(q, "def", 3);
    q = null_lenenc_str(q, "test", 4);
    q = null_lenenc_str(q, "sbtest1", 7);
    q = null_lenenc_str(q, "sbtest1", 7);
    q = null_lenenc_str(q, "c", 1);
    q = null_lenenc_str(q, "c", 1);
    memcpy(q, tail, sizeof(tail));
    q += sizeof(tail);

    if ((p = null_packet(c, 1, seq++)) == NULL)
        return -1;
    p[0] = 1;
    if ((p = null_packet(c, (size_t) (q - def), seq++)) == NULL)
        return -1;
    memcpy(p, def, (size_t) (q - def));
    if (!deprecate) {
        if ((p = null_packet(c, 5, seq++)) == NULL)
            return -1;
        memcpy(p, "\xfe\x00\x00\x02\x00", 5);
    }
    if ((p = null_packet(c, 1 + sizeof(null_row) - 1, seq++)) == NULL)
        return -1;
    null_lenenc_str(p, null_row, sizeof(null_row) - 1);
    if (deprecate)
        return null_ok(c, seq, 0xfe);
    if ((p = null_packet(c, 5, seq)) == NULL)
        return -1;
    memcpy(p, "\xfe\x00\x00\x02\x00", 5);
    return 0;
}

/* The greeting: protocol 10, mysql_native_password, a fixed scramble
 * (nothing is checked). */
static int
null_greeting(null_conn_t *c)
{
    static const char version[] = "5.5.5-10.11.0-nullserver";
    uint8_t  buf[128], *q = buf;

    *q++ = 10;
    memcpy(q, version, sizeof(version));
    q += sizeof(version);
    memcpy(q, "\x01\x00\x00\x00" "abcdefgh" "\x00", 13);
    q += 13;
    *q++ = (uint8_t) NULL_CAPS;
    *q++ = (uint8_t) (NULL_CAPS >> 8);
    *q++ = 45;
    *q++ = 0x02;
    *q++ = 0;
    *q++ = (uint8_t) (NULL_CAPS >> 16);
    *q++ = (uint8_t) (NULL_CAPS >> 24);
    *q++ = 21;
    memset(q, 0, 10);
    q += 10;
    memcpy(q, "ijklmnopqrst", 13);
    q += 13;
    memcpy(q, "mysql_native_password", 22);
    q += 22;

    uint8_t *p = null_packet(c, (size_t) (q - buf), 0);
    if (p == NULL)
        return -1;
    memcpy(p, buf, (size_t) (q - buf));
    return 0;
}

/* Answers one whole packet of the client's. -1: close the connection. */
static int
null_answer(null_conn_t *c, const uint8_t *pl, size_t len, uint8_t seq)
{
    if (!c->authed) {
        if (len < 4)
            return -1;
        c->caps = (uint32_t) pl[0] | (uint32_t) pl[1] << 8
                  | (uint32_t) pl[2] << 16 | (uint32_t) pl[3] << 24;
        c->authed = 1;
        return null_ok(c, (uint8_t) (seq + 1), 0);
    }
    if (len == 0 || pl[0] == COM_QUIT)
        return -1;
    if (pl[0] != COM_QUERY)
        return null_err(c, 1, "nullserver answers COM_QUERY only");
    pl++, len--;
    while (len > 0 && (*pl == ' ' || *pl == '\n' || *pl == '\t'))
        pl++, len--;
    if (len >= 6 && strncasecmp((const char *) pl, "select", 6) == 0)
        return null_resultset(c);
    return null_ok(c, 1, 0);
}

/* --- the loop ------------------------------------------------------------ */

/* Sends what is pending; what the socket does not take waits for
 * EPOLLOUT (a client that does not read its answers). */
static int
null_flush(null_conn_t *c)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

    while (c->out_sent < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_sent,
                         c->out_len - c->out_sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (c->want_out)
                return 0;
            ev.events = EPOLLOUT;       /* read no more meanwhile */
            c->want_out = 1;
            return epoll_ctl(c->ep, EPOLL_CTL_MOD, c->fd, &ev);
        }
        c->out_sent += (size_t) n;
    }
    c->out_len = c->out_sent = 0;
    if (!c->want_out)
        return 0;
    c->want_out = 0;
    return epoll_ctl(c->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Reads what came, answers every whole packet, sends the answers at once.
 * -1: close. */
static int
null_readable(null_conn_t *c)
{
    ssize_t  n;
    size_t   off = 0;

    n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
        return -1;
    if (n < 0)
        return 0;
    c->in_len += (size_t) n;
    while (c->in_len - off >= 4) {
        const uint8_t *h = c->in + off;
        size_t len = (size_t) h[0] | (size_t) h[1] << 8 | (size_t) h[2] << 16;
        if (len + 4 > sizeof(c->in))
            return -1;
        if (c->in_len - off < len + 4)
            break;
        if (null_answer(c, h + 4, len, h[3]) < 0)
            return -1;
        off += len + 4;
    }
    memmove(c->in, c->in + off, c->in_len - off);
    c->in_len -= off;
    return null_flush(c);
}

static void
null_accept(int ep, int lfd)
{
    int one = 1, fd;

    while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
        null_conn_t *c = calloc(1, sizeof(*c));
        struct epoll_event ev = { .events = EPOLLIN };

        if (c == NULL) {
            close(fd);
            continue;
        }
        c->fd = fd;
        c->ep = ep;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        ev.data.ptr = c;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0
            || null_greeting(c) < 0 || null_flush(c) < 0) {
            close(fd);
            free(c);
        }
    }
}

static int
null_listen(const null_opts_t *o)
{
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

    if (fd < 0
        || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0
        || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0
        || bind(fd, (const struct sockaddr *) &o->addr, sizeof(o->addr)) < 0
        || listen(fd, 1024) < 0) {
        perror("nullserver: listen");
        exit(1);
    }
    return fd;
}

static void *
null_loop(void *arg)
{
    struct epoll_event  evs[NULL_MAX_EVENTS];
    struct epoll_event  lev = { .events = EPOLLIN, .data.ptr = NULL };
    int                 lfd = (int) (intptr_t) arg;
    int                 ep = epoll_create1(0);

    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev) < 0) {
        perror("nullserver: epoll");
        exit(1);
    }
    for ( ;; ) {
        int n = epoll_wait(ep, evs, NULL_MAX_EVENTS, -1);

        for (int i = 0; i < n; i++) {
            null_conn_t *c = evs[i].data.ptr;
            if (c == NULL) {
                null_accept(ep, lfd);
                continue;
            }
            if ((evs[i].events & EPOLLOUT) && null_flush(c) < 0) {
                close(c->fd);
                free(c);
                continue;
            }
            if ((evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
                && null_readable(c) < 0) {
                close(c->fd);
                free(c);
            }
        }
    }
    return NULL;
}

int
main(int argc, char **argv)
{
    null_opts_t  o;
    pthread_t    t[NULL_MAX_THREADS];

    null_parse(argc, argv, &o);
    for (size_t i = 0; i < sizeof(null_row); i++)
        null_row[i] = (uint8_t) ('0' + i % 10);
    for (int i = 0; i < o.threads; i++) {
        int lfd = null_listen(&o);
        if (pthread_create(&t[i], NULL, null_loop, (void *) (intptr_t) lfd)) {
            fprintf(stderr, "nullserver: cannot start a thread\n");
            return 1;
        }
    }
    printf("READY\n");
    fflush(stdout);
    pthread_join(t[0], NULL);
    return 0;
}
