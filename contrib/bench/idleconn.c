/*
 * idleconn: open N authenticated MySQL connections and hold them idle,
 * for the bench's memory measurement (RSS per idle session of a proxy).
 *
 *   idleconn [-h HOST] [-P PORT] [-S SOCKET] [-u USER] [-p PASSWORD]
 *            [-D DATABASE] -n N
 *
 * Connects one after the other with MariaDB Connector/C; each connection
 * is logged in (the server's OK arrived) before the next starts.  Prints
 * "READY N" on stdout once all N are open, then waits until stdin reaches
 * EOF, closes them all (COM_QUIT) and exits 0.  A failed connect prints
 * "ERROR I: message" on stdout, closes what it had opened and exits 1.
 *
 * Needs N + a few file descriptors: the soft RLIMIT_NOFILE is raised to
 * the hard limit, and N beyond that is refused up front.
 *
 * Build: cc -O2 -o idleconn idleconn.c $(mariadb_config --cflags --libs)
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <mysql.h>

#define IDLECONN_FD_RESERVE  32     /* stdio, library, resolver */

typedef struct {
    const char    *host;
    const char    *socket;
    const char    *user;
    const char    *password;
    const char    *database;
    unsigned       port;
    long           n;
} idleconn_opts_t;

static void
idleconn_usage(void)
{
    fprintf(stderr, "usage: idleconn [-h HOST] [-P PORT] [-S SOCKET] "
        "[-u USER] [-p PASSWORD] [-D DATABASE] -n N\n");
    exit(2);
}

static void
idleconn_parse(int argc, char **argv, idleconn_opts_t *o)
{
    int c;

    *o = (idleconn_opts_t) { .host = "127.0.0.1", .user = "app",
                             .password = "secret", .database = "test",
                             .port = 3306, .n = 0 };
    while ((c = getopt(argc, argv, "h:P:S:u:p:D:n:")) != -1) {
        switch (c) {
        case 'h': o->host = optarg; break;
        case 'P': o->port = (unsigned) atoi(optarg); break;
        case 'S': o->socket = optarg; break;
        case 'u': o->user = optarg; break;
        case 'p': o->password = optarg; break;
        case 'D': o->database = optarg; break;
        case 'n': o->n = atol(optarg); break;
        default:  idleconn_usage();
        }
    }
    if (o->n <= 0 || optind != argc) {
        idleconn_usage();
    }
}

/* Raise the soft limit to the hard one; 0 if N connections fit. */
static int
idleconn_rlimit(long n)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == -1) {
        perror("getrlimit");
        return -1;
    }
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) == -1) {
        perror("setrlimit");
        return -1;
    }
    if (rl.rlim_cur != RLIM_INFINITY
        && (rlim_t) n + IDLECONN_FD_RESERVE > rl.rlim_cur)
    {
        fprintf(stderr, "idleconn: %ld connections need more than the "
            "open files limit %llu\n", n, (unsigned long long) rl.rlim_cur);
        return -1;
    }
    return 0;
}

/* One logged-in connection, or one whose mysql_errno() says why not (the
 * caller closes it either way); NULL if out of memory. */
static MYSQL *
idleconn_open(const idleconn_opts_t *o)
{
    unsigned  timeout = 30;
    unsigned  proto = o->socket ? MYSQL_PROTOCOL_SOCKET : MYSQL_PROTOCOL_TCP;
    MYSQL    *m = mysql_init(NULL);

    if (m == NULL) {
        return NULL;
    }
    mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_optionsv(m, MYSQL_OPT_PROTOCOL, &proto);
    mysql_real_connect(m, o->socket ? "localhost" : o->host, o->user,
                       o->password, o->database, o->port, o->socket, 0);
    return m;
}

static void
idleconn_close_all(MYSQL **conns, long n)
{
    for (long i = 0; i < n; i++) {
        mysql_close(conns[i]);
    }
}

int
main(int argc, char **argv)
{
    idleconn_opts_t  o;
    MYSQL          **conns;
    char             buf[256];

    idleconn_parse(argc, argv, &o);
    if (idleconn_rlimit(o.n) != 0) {
        return 1;
    }
    conns = calloc((size_t) o.n, sizeof(*conns));
    if (conns == NULL || mysql_library_init(0, NULL, NULL) != 0) {
        fprintf(stderr, "idleconn: out of memory\n");
        return 1;
    }
    for (long i = 0; i < o.n; i++) {
        MYSQL *m = idleconn_open(&o);

        if (m == NULL || mysql_errno(m) != 0) {
            printf("ERROR %ld: %s\n", i,
                m ? mysql_error(m) : "mysql_init failed");
            fflush(stdout);
            if (m != NULL) {
                mysql_close(m);
            }
            idleconn_close_all(conns, i);
            return 1;
        }
        conns[i] = m;
    }
    printf("READY %ld\n", o.n);
    fflush(stdout);

    /* hold them until the bench closes our stdin */
    for ( ;; ) {
        ssize_t r = read(STDIN_FILENO, buf, sizeof(buf));

        if (r == 0 || (r == -1 && errno != EINTR)) {
            break;
        }
    }
    idleconn_close_all(conns, o.n);
    free(conns);
    mysql_library_end();
    return 0;
}
