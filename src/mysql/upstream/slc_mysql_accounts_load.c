#include "slc_core.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_mysql_accounts.h"
#include "slc_mysql_monitor.h"
#include "slc_mysql_proto.h"
#include "slc_seqlock.h"

#include <mysql.h>
#include <ma_pvio.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>

/*
 * The loads, in the monitor's process: one loader per users_from zone,
 * with its own Connector/C connection (blocking, as the monitor's) to the
 * upstream's primary, as the monitor account.
 *
 * Waking: a worker bumps `req` in the zone and wakes it as a futex.  The
 * event loop cannot wait on a futex, so each loader has a thread that
 * does only that: it sleeps on `req` and writes a byte into a pipe the
 * loop reads.  The thread touches nothing else (no Connector/C, no log),
 * and has every signal blocked, so the process's signal handling is the
 * loop's as before.  A load begins at once unless one began less than
 * SLC_ACCOUNTS_INTERVAL ago (`loaded_at`, shared by every process, so an
 * old and a new monitor around a reload count together): then a timer
 * starts it when the interval is over.
 *
 * Host names: @@skip_name_resolve is read once a connection (the server
 * cannot change it without a restart, which ends the connection) and
 * published with every table read over it.
 *
 * Secrets: the authentication_string values are copied into the table
 * and wiped from Connector/C's result and buffers right after; they are
 * never logged.
 */

typedef struct {
    slc_accounts_zone_t      *z;
    slc_upstream_t           *up;
    MYSQL                    *mysql;    /* to `us`, NULL: not connected */
    const slc_upstream_server_t *us;
    int                       legacy;   /* no mysql.global_priv: MySQL */
    int                       resolve;  /* `us` resolves client names */
    int                       first;    /* the start's own load is due */
    int                       no_primary;   /* logged: none known yet */
    slc_timer_t               timer;
    pthread_t                 thread;
} slc_accounts_loader_t;

static slc_accounts_loader_t *slc_loaders;
static unsigned               slc_nloaders;
static int                    slc_loader_pipe[2] = { -1, -1 };
static slc_conn_t             slc_loader_wake;

static uint64_t
slc_accounts_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* ms between two looks for a primary, when none is known */
#define SLC_ACCOUNTS_RETRY  100

/* ---- the waking thread ------------------------------------------------ */

static void *
slc_accounts_thread(void *arg)
{
    slc_accounts_loader_t *l = arg;
    uint32_t               seen = __atomic_load_n(&l->z->req,
                                                  __ATOMIC_ACQUIRE);
    uint32_t               now;
    char                   b = 1;

    for ( ;; ) {
        /* returns at once when req is no longer `seen` */
        (void) syscall(SYS_futex, &l->z->req, FUTEX_WAIT, seen, NULL,
            NULL, 0);
        now = __atomic_load_n(&l->z->req, __ATOMIC_ACQUIRE);
        if (now != seen) {
            seen = now;
            /* a full pipe already says "look" */
            (void) !write(slc_loader_pipe[1], &b, 1);
        }
    }
    return NULL;
}

static int
slc_accounts_thread_start(slc_accounts_loader_t *l)
{
    sigset_t all, old;
    int      rc;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&l->thread, NULL, slc_accounts_thread, l);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc == 0 ? SLC_OK : SLC_ERROR;
}

/* ---- reading the accounts --------------------------------------------- */

/* What Connector/C kept of the last result: its network buffer and the
   read-ahead cache hold the rows as they came. */
static void
slc_accounts_wipe_conn(MYSQL *m)
{
    if (m->net.buff != NULL && m->net.buff_end > m->net.buff) {
        explicit_bzero(m->net.buff, (size_t) (m->net.buff_end
                                              - m->net.buff));
    }
    if (m->net.pvio != NULL && m->net.pvio->cache != NULL) {
        explicit_bzero(m->net.pvio->cache, m->net.pvio->cache_size);
    }
}

/* One row (user, host, plugin, authentication_string) into `a`. */
static void
slc_accounts_row(slc_account_t *a, MYSQL_ROW row, unsigned long *len)
{
    const char *plugin = row[2] != NULL ? row[2] : "";
    const char *auth = row[3] != NULL ? row[3] : "";

    memset(a, 0, sizeof(*a));
    strlcpy(a->user, row[0] != NULL ? row[0] : "", sizeof(a->user));
    strlcpy(a->host, row[1] != NULL ? row[1] : "", sizeof(a->host));
    strlcpy(a->plugin, plugin, sizeof(a->plugin));
    a->native = plugin[0] == '\0'
                || strcmp(plugin, SLC_MYSQL_NATIVE_PLUGIN) == 0;
    if (a->native && slc_mysql_native_hash_parse(auth, len[3], &a->hash)
                     != SLC_OK)
    {
        /* not a hash (a locked account's marker): matches no token, as
           on the server */
        a->hash.is_empty = 0;
        arc4random_buf(a->hash.stage2, sizeof(a->hash.stage2));
    }
    slc_account_prepare(a);
}

static const char *slc_accounts_query[2] = {
    "SELECT User, Host, JSON_VALUE(Priv, '$.plugin'), "
    "JSON_VALUE(Priv, '$.authentication_string') FROM mysql.global_priv "
    "WHERE JSON_VALUE(Priv, '$.is_role') IS NULL "
    "OR JSON_VALUE(Priv, '$.is_role') = 'false'",
    /* MySQL and MariaDB before 10.4 */
    "SELECT User, Host, plugin, authentication_string FROM mysql.user",
};

static MYSQL_RES *
slc_accounts_select(slc_accounts_loader_t *l)
{
    if (mysql_query(l->mysql, slc_accounts_query[l->legacy]) != 0) {
        if (l->legacy || mysql_errno(l->mysql) != 1146) {
            return NULL;
        }
        l->legacy = 1;      /* no such table */
        return slc_accounts_select(l);
    }
    return mysql_store_result(l->mysql);
}

/* The rows into `a` (SLC_ACCOUNTS_MAX at most); wipes the result. */
static unsigned
slc_accounts_rows(MYSQL_RES *res, slc_account_t *a, unsigned *dropped)
{
    MYSQL_ROW      row;
    unsigned long *len;
    unsigned       n = 0;

    *dropped = 0;
    while ((row = mysql_fetch_row(res)) != NULL) {
        len = mysql_fetch_lengths(res);
        if (mysql_num_fields(res) < 4 || len == NULL) {
            break;
        }
        if (n < SLC_ACCOUNTS_MAX) {
            slc_accounts_row(&a[n++], row, len);
        } else {
            ++*dropped;
        }
        if (row[3] != NULL) {
            explicit_bzero(row[3], len[3]);
        }
    }
    return n;
}

/* The upstream's primary as the monitor sees it (or as configured). */
static const slc_upstream_server_t *
slc_accounts_primary(const slc_upstream_t *up)
{
    for (unsigned i = 0; i < up->nservers; i++) {
        if (slc_monitor_role(&up->servers[i]) & SLC_ROLE_PRIMARY) {
            return &up->servers[i];
        }
    }
    return NULL;
}

static void
slc_accounts_disconnect(slc_accounts_loader_t *l)
{
    if (l->mysql != NULL) {
        mysql_close(l->mysql);
        l->mysql = NULL;
    }
}

/* Whether the server names loopback clients `localhost`, into
   l->resolve. */
static int
slc_accounts_query_resolve(slc_accounts_loader_t *l)
{
    MYSQL_RES *res;
    MYSQL_ROW  row;
    int        rc = SLC_ERROR;

    if (mysql_query(l->mysql, "SELECT @@global.skip_name_resolve") != 0
        || (res = mysql_store_result(l->mysql)) == NULL)
    {
        return SLC_ERROR;
    }
    row = mysql_fetch_row(res);
    if (row != NULL && row[0] != NULL) {
        l->resolve = atoi(row[0]) == 0;
        rc = SLC_OK;
    }
    mysql_free_result(res);
    return rc;
}

static int
slc_accounts_connect_failed(slc_accounts_loader_t *l, const char *what)
{
    slc_log(SLC_LOG_ERR, "accounts of upstream \"%s\": cannot %s %s: %s",
        l->up->name.data, what, l->us->name,
        l->mysql != NULL ? mysql_error(l->mysql) : "out of memory");
    slc_accounts_disconnect(l);
    return SLC_ERROR;
}

static int
slc_accounts_connect(slc_accounts_loader_t *l,
    const slc_upstream_server_t *us)
{
    if (l->mysql != NULL && l->us != us) {
        slc_accounts_disconnect(l);     /* the primary moved */
    }
    if (l->mysql != NULL) {
        return SLC_OK;
    }
    l->us = us;
    if (slc_monitor_login(&l->mysql, us, slc_monitor_conf(l->up))
        != SLC_OK)
    {
        return slc_accounts_connect_failed(l, "log in to");
    }
    if (slc_accounts_query_resolve(l) != SLC_OK) {
        return slc_accounts_connect_failed(l,
            "read @@skip_name_resolve from");
    }
    return SLC_OK;
}

/* Read the accounts from `us` into `a`: how many, or -1 (logged). */
static int
slc_accounts_read(slc_accounts_loader_t *l, const slc_upstream_server_t *us,
    slc_account_t *a)
{
    MYSQL_RES *res;
    unsigned   n, dropped;

    if (slc_accounts_connect(l, us) != SLC_OK) {
        return -1;
    }
    res = slc_accounts_select(l);
    if (res == NULL) {
        slc_log(SLC_LOG_ERR, "accounts of upstream \"%s\": cannot read "
            "them from %s (the monitor account needs SELECT on "
            "mysql.global_priv): %s", l->up->name.data, l->us->name,
            mysql_error(l->mysql));
        slc_accounts_disconnect(l);
        return -1;
    }
    n = slc_accounts_rows(res, a, &dropped);
    mysql_free_result(res);
    slc_accounts_wipe_conn(l->mysql);
    if (dropped > 0) {
        slc_log(SLC_LOG_WARN, "accounts of upstream \"%s\": %u accounts "
            "beyond the first %d were left out", l->up->name.data, dropped,
            SLC_ACCOUNTS_MAX);
    }
    return (int) n;
}

/* ---- publishing -------------------------------------------------------- */

void
slc_accounts_publish(slc_accounts_zone_t *z, slc_account_t *a, unsigned n,
    int resolve)
{
    uint32_t              t, seq;
    slc_accounts_table_t *tab;

    qsort(a, n, sizeof(*a), slc_account_cmp);
    t = (__atomic_load_n(&z->active, __ATOMIC_ACQUIRE) & 1) ^ 1;
    tab = &z->tab[t];
    seq = slc_seqlock_write_begin(&tab->seq);
    /* the old contents go first: a table shrinks without leaving a
       dropped account's hash behind */
    explicit_bzero(tab->a, sizeof(tab->a[0]) * (tab->n < SLC_ACCOUNTS_MAX
                                                ? tab->n : SLC_ACCOUNTS_MAX));
    memcpy(tab->a, a, sizeof(*a) * n);
    tab->n = n;
    tab->resolve = resolve != 0;
    slc_seqlock_write_end(&tab->seq, seq);
    __atomic_store_n(&z->active, t, __ATOMIC_RELEASE);
    __atomic_add_fetch(&z->loads, 1, __ATOMIC_ACQ_REL);
}

/* Requests up to `r0` have had their load (whether it worked or not). */
static void
slc_accounts_serve(slc_accounts_zone_t *z, uint32_t r0)
{
    uint32_t s = __atomic_load_n(&z->served, __ATOMIC_ACQUIRE);

    while ((int32_t) (r0 - s) > 0
           && !__atomic_compare_exchange_n(&z->served, &s, r0, 0,
                  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    {
        /* s was reloaded: try again */
    }
}

static void
slc_accounts_load(slc_accounts_loader_t *l, const slc_upstream_server_t *us)
{
    slc_account_t *a;
    uint32_t       r0 = __atomic_load_n(&l->z->req, __ATOMIC_ACQUIRE);
    int            n;

    a = calloc(SLC_ACCOUNTS_MAX, sizeof(*a));
    if (a == NULL) {
        slc_log(SLC_LOG_ERR, "accounts: out of memory");
        slc_accounts_serve(l->z, r0);
        return;
    }
    n = slc_accounts_read(l, us, a);
    if (n >= 0) {
        slc_accounts_publish(l->z, a, (unsigned) n, l->resolve);
        slc_log(SLC_LOG_INFO, "accounts of upstream \"%s\": %d loaded "
            "from %s (load %llu, skip_name_resolve %s)", l->up->name.data,
            n, l->us->name,
            (unsigned long long) __atomic_load_n(&l->z->loads,
                                                 __ATOMIC_RELAXED),
            l->resolve ? "OFF" : "ON");
    }
    explicit_bzero(a, sizeof(*a) * SLC_ACCOUNTS_MAX);
    free(a);
    slc_accounts_serve(l->z, r0);
}

/* ---- when ------------------------------------------------------------- */

/*
 * A load is due when a request is pending (or at the start); it begins
 * now if the last one (by any process) began an interval ago, else when
 * the interval is over.  Taking `loaded_at` with a compare-and-swap makes
 * two monitors (around a reload) load once between them.
 */
static void
slc_accounts_step(slc_accounts_loader_t *l)
{
    slc_accounts_zone_t         *z = l->z;
    uint64_t                     now = slc_accounts_now(), last;
    const slc_upstream_server_t *us;

    if (!l->first && __atomic_load_n(&z->req, __ATOMIC_ACQUIRE)
                     == __atomic_load_n(&z->served, __ATOMIC_ACQUIRE))
    {
        return;
    }
    /* role=auto servers have none before the monitor's first check; a
       primary down has none either: look again shortly */
    us = slc_accounts_primary(l->up);
    if (us == NULL) {
        if (!l->no_primary) {
            slc_log(SLC_LOG_WARN, "accounts of upstream \"%s\": no "
                "primary to read them from, yet", l->up->name.data);
        }
        l->no_primary = 1;
        slc_timer_add(slc_loop, &l->timer, SLC_ACCOUNTS_RETRY);
        return;
    }
    l->no_primary = 0;
    last = __atomic_load_n(&z->loaded_at, __ATOMIC_ACQUIRE);
    if (last != 0 && now < last + SLC_ACCOUNTS_INTERVAL) {
        if (!l->timer.armed) {
            slc_timer_add(slc_loop, &l->timer,
                last + SLC_ACCOUNTS_INTERVAL - now);
        }
        return;
    }
    if (!__atomic_compare_exchange_n(&z->loaded_at, &last, now, 0,
            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    {
        slc_timer_add(slc_loop, &l->timer, SLC_ACCOUNTS_INTERVAL);
        return;
    }
    l->first = 0;
    slc_accounts_load(l, us);
}

static void
slc_accounts_timer(slc_timer_t *t)
{
    slc_accounts_step(t->data);
}

static void
slc_accounts_woken(slc_conn_t *c)
{
    char     buf[64];
    ssize_t  n;

    do {
        n = read(c->fd, buf, sizeof(buf));
    } while (n > 0);
    c->readable = 0;
    for (unsigned i = 0; i < slc_nloaders; i++) {
        slc_accounts_step(&slc_loaders[i]);
    }
}

/* ---- the process ------------------------------------------------------ */

static int
slc_accounts_has_zone(slc_accounts_zone_t *z)
{
    for (unsigned i = 0; i < slc_nloaders; i++) {
        if (slc_loaders[i].z == z) {
            return 1;
        }
    }
    return 0;
}

static int
slc_accounts_pipe_open(void)
{
    if (pipe2(slc_loader_pipe, O_NONBLOCK | O_CLOEXEC) != 0) {
        return SLC_ERROR;
    }
    memset(&slc_loader_wake, 0, sizeof(slc_loader_wake));
    slc_loader_wake.fd = slc_loader_pipe[0];
    slc_loader_wake.on_read = slc_accounts_woken;
    return slc_conn_register(slc_loop, &slc_loader_wake);
}

static int
slc_accounts_loader_add(slc_accounts_zone_t *z, slc_upstream_t *up)
{
    slc_accounts_loader_t *l = &slc_loaders[slc_nloaders];

    memset(l, 0, sizeof(*l));
    l->z = z;
    l->up = up;
    l->first = 1;
    l->timer.handler = slc_accounts_timer;
    l->timer.data = l;
    if (slc_accounts_thread_start(l) != SLC_OK) {
        return SLC_ERROR;
    }
    slc_nloaders++;
    slc_timer_add(slc_loop, &l->timer, 0);
    return SLC_OK;
}

int
slc_accounts_loader_init(slc_cycle_t *cycle)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);
    unsigned          k = 0;

    for (slc_mysql_srv_t *srv = mc->servers; srv != NULL; srv = srv->next) {
        k += slc_accounts_of(srv) != NULL;
    }
    if (k == 0) {
        return SLC_OK;
    }
    slc_loaders = calloc(k, sizeof(*slc_loaders));
    if (slc_loaders == NULL || slc_accounts_pipe_open() != SLC_OK) {
        slc_log(SLC_LOG_ALERT, "accounts: cannot start the loader");
        return SLC_ERROR;
    }
    for (slc_mysql_srv_t *srv = mc->servers; srv != NULL; srv = srv->next) {
        slc_accounts_zone_t *z = slc_accounts_of(srv);
        if (z == NULL || slc_accounts_has_zone(z)) {
            continue;
        }
        if (slc_accounts_loader_add(z, slc_accounts_upstream_of(srv))
            != SLC_OK)
        {
            slc_log(SLC_LOG_ALERT, "accounts: cannot start the loader");
            return SLC_ERROR;
        }
    }
    return SLC_OK;
}

/* The threads end with the process; the connections say COM_QUIT. */
void
slc_accounts_loader_exit(void)
{
    for (unsigned i = 0; i < slc_nloaders; i++) {
        slc_accounts_disconnect(&slc_loaders[i]);
    }
}
