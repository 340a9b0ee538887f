#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_log.h"
#include "slc_mysql_accounts.h"
#include "slc_mysql_monitor.h"
#include "slc_role.h"
#include "slc_seqlock.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/syscall.h>

/*
 * Accounts from the servers: the directive, the zones, the server's
 * matching rules and the lookup workers do at login.  The monitor
 * process's side (the loads) is slc_mysql_accounts_load.c.
 */

#define SLC_ACCOUNTS_READ_TRIES  64
/* MariaDB's max_hostname_length, which its sort values are built on */
#define SLC_ACCOUNT_SORT_MAXLEN  255

static void *slc_accounts_create_conf(slc_conf_t *cf, unsigned level);
static const char *slc_accounts_users_from(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static int slc_accounts_init_conf(slc_cycle_t *cycle, char *err,
    size_t errlen);
static void slc_accounts_init_process(slc_cycle_t *cycle,
    const slc_role_t *role);
static void slc_accounts_exit_process(slc_cycle_t *cycle,
    const slc_role_t *role);

static const slc_command_t slc_accounts_commands[] = {
    { .name = "users_from", .type = SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_accounts_users_from, .conf = SLC_CONF_MODULE },
    { .name = NULL }
};

slc_module_t slc_mysql_accounts_module = {
    .name = "mysql_accounts",
    .type = SLC_MODULE_CORE,
    .commands = slc_accounts_commands,
    .create_conf = slc_accounts_create_conf,
    .init_conf = slc_accounts_init_conf,
    .init_process = slc_accounts_init_process,
    .exit_process = slc_accounts_exit_process,
};

/* ---- matching --------------------------------------------------------- */

/*
 * MariaDB's get_magic_sort for one host pattern, which it inverts so that
 * larger is more specific: N literal characters, M `_`, K runs of `%`,
 * P the literal prefix before the first wildcard, L the room a `%` has.
 */
static uint64_t
slc_account_host_magic(const char *p)
{
    uint64_t n = 0, m = 0, k = 0, pre = 0, l, d, d1;

    for (size_t i = 0; p[i] != '\0'; i++) {
        if (p[i] == '%') {
            if (k == 0 && m == 0) {
                pre = n;
            }
            k++;
            while (p[i + 1] == '%') {
                i++;
            }
        } else if (p[i] == '_') {
            if (k == 0 && m == 0) {
                pre = n;
            }
            m++;
        } else {
            if (p[i] == '\\' && p[i + 1] != '\0') {
                i++;
            }
            n++;
        }
    }
    k = k < 31 ? k : 31;
    m = m < 31 ? m : 31;
    d = SLC_ACCOUNT_SORT_MAXLEN + 1;
    d1 = d < 32 ? d : 32;
    l = k > 0 && n + m < SLC_ACCOUNT_SORT_MAXLEN
        ? SLC_ACCOUNT_SORT_MAXLEN - n - m : 0;
    if (l > m) {
        return (((l * 2 + 1) * d + k) * d1 + m) * d + pre;
    }
    return (((m * 2) * d + l) * d1 + k) * d + pre;
}

uint64_t
slc_account_sort(const char *host, const char *user)
{
    /* an empty host matches any (as `%`), and is the least specific */
    uint64_t magic = host[0] == '\0' ? slc_account_host_magic("%") + 1
                                     : slc_account_host_magic(host);

    return ~((magic << 1) + (user[0] == '\0'));
}

/* "a.b.c.d" to a host-order address; SLC_ERROR unless exactly that. */
static int
slc_account_ipv4(const char *s, size_t len, uint32_t *ip)
{
    char           buf[INET_ADDRSTRLEN];
    struct in_addr a;

    if (len >= sizeof(buf)) {
        return SLC_ERROR;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (inet_pton(AF_INET, buf, &a) != 1) {
        return SLC_ERROR;
    }
    *ip = ntohl(a.s_addr);
    return SLC_OK;
}

void
slc_account_prepare(slc_account_t *a)
{
    const char *slash = strchr(a->host, '/');

    a->sort = slc_account_sort(a->host, a->user);
    a->ip = a->mask = 0;
    if (slash == NULL
        || slc_account_ipv4(a->host, (size_t) (slash - a->host), &a->ip)
           != SLC_OK
        || slc_account_ipv4(slash + 1, strlen(slash + 1), &a->mask)
           != SLC_OK)
    {
        a->ip = a->mask = 0;
    }
}

int
slc_account_cmp(const void *pa, const void *pb)
{
    const slc_account_t *a = pa, *b = pb;
    int                  c = strcmp(a->user, b->user);

    if (c != 0) {
        return c;
    }
    if (a->sort != b->sort) {
        return a->sort > b->sort ? -1 : 1;
    }
    return -strcmp(a->host, b->host);
}

/*
 * LIKE without the collation: `%` any run, `_` one byte, `\` escapes the
 * next.  One backtrack point (the last `%`), so the cost is bounded by
 * the product of the lengths, never exponential.
 */
static int
slc_account_wild(const char *s, const char *p, int fold)
{
    const char *star_p = NULL, *star_s = NULL;

    while (*s != '\0') {
        if (*p == '%') {
            while (*p == '%') {
                p++;
            }
            star_p = p;
            star_s = s;
            continue;
        }
        if (*p != '\0') {
            const char *q = p;
            char        pc;
            if (*q == '\\' && q[1] != '\0') {
                q++;
            }
            pc = *q;
            if ((*p == '_' && q == p)
                || (fold ? tolower((unsigned char) pc)
                           == tolower((unsigned char) *s)
                         : pc == *s))
            {
                p = q + 1;
                s++;
                continue;
            }
        }
        if (star_p == NULL) {
            return 0;
        }
        p = star_p;
        s = ++star_s;
    }
    while (*p == '%') {
        p++;
    }
    return *p == '\0';
}

int
slc_account_loopback(const char *ip)
{
    struct in_addr  a4;
    struct in6_addr a6;

    if (inet_pton(AF_INET, ip, &a4) == 1) {
        return ntohl(a4.s_addr) == INADDR_LOOPBACK;
    }
    return inet_pton(AF_INET6, ip, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

void
slc_account_client(slc_account_client_t *c, const char *host, int resolve)
{
    if (strcmp(host, "localhost") == 0) {
        c->name = host;                 /* a unix socket: no address */
        c->ip = NULL;
        return;
    }
    /* the server's ip_to_hostname: a loopback peer is "localhost" with
       no DNS; any other it would resolve, which sluice does not */
    c->name = resolve && slc_account_loopback(host) ? "localhost" : NULL;
    c->ip = host;
}

int
slc_account_host_match(const slc_account_t *a, const slc_account_client_t *c)
{
    uint32_t ip;

    if (a->host[0] == '\0') {
        return 1;
    }
    if (a->mask != 0) {
        return c->ip != NULL
               && slc_account_ipv4(c->ip, strlen(c->ip), &ip) == SLC_OK
               && (ip & a->mask) == a->ip;
    }
    /* a name is compared case-blind, an address as it is */
    return (c->name != NULL && slc_account_wild(c->name, a->host, 1))
           || (c->ip != NULL && slc_account_wild(c->ip, a->host, 0));
}

const slc_account_t *
slc_accounts_match(const slc_account_t *a, unsigned n, const char *user,
    const slc_account_client_t *c)
{
    const slc_account_t *best = NULL;
    unsigned             lo = 0, hi = n, i;

    /* the first entry of `user` (the table is sorted by user first) */
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (strcmp(a[mid].user, user) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    for (i = lo; i < n && strcmp(a[i].user, user) == 0; i++) {
        if (slc_account_host_match(&a[i], c)) {
            best = &a[i];
            break;
        }
    }
    /* the anonymous entries sort first; one beats a named match only
       when strictly more specific, as in MariaDB */
    for (i = 0; i < n && a[i].user[0] == '\0'; i++) {
        if (best != NULL && a[i].sort <= best->sort) {
            break;
        }
        if (slc_account_host_match(&a[i], c)) {
            return &a[i];
        }
    }
    return best;
}

/* ---- the lookup at login ---------------------------------------------- */

static const slc_accounts_conf_t *
slc_accounts_conf(const slc_mysql_srv_t *srv)
{
    return slc_module_conf(srv->mod_conf, &slc_mysql_accounts_module);
}

slc_accounts_zone_t *
slc_accounts_of(const slc_mysql_srv_t *srv)
{
    const slc_accounts_conf_t *c = slc_accounts_conf(srv);

    return c != NULL ? c->zone : NULL;
}

slc_upstream_t *
slc_accounts_upstream_of(const slc_mysql_srv_t *srv)
{
    const slc_accounts_conf_t *c = slc_accounts_conf(srv);

    return c != NULL ? c->upstream : NULL;
}

/* A stable copy of the account for user@host: SLC_OK, SLC_AGAIN (none
   such), SLC_ERROR (the writer never let go: treated as none). */
static int
slc_accounts_find(const slc_accounts_zone_t *z, const char *user,
    const char *host, slc_account_t *out)
{
    for (unsigned i = 0; i < SLC_ACCOUNTS_READ_TRIES; i++) {
        uint32_t t = __atomic_load_n(&z->active, __ATOMIC_ACQUIRE) & 1;
        const slc_accounts_table_t *tab = &z->tab[t];
        uint32_t s0 = slc_seqlock_read_begin(&tab->seq);
        const slc_account_t *a;
        slc_account_client_t c;
        unsigned n;

        if (s0 & 1) {
            sched_yield();
            continue;
        }
        n = __atomic_load_n(&tab->n, __ATOMIC_RELAXED);
        slc_account_client(&c, host,
            (int) __atomic_load_n(&tab->resolve, __ATOMIC_RELAXED));
        a = slc_accounts_match(tab->a, n < SLC_ACCOUNTS_MAX ? n
                               : SLC_ACCOUNTS_MAX, user, &c);
        if (a != NULL) {
            memcpy(out, a, sizeof(*out));
        }
        if (slc_seqlock_read_end(&tab->seq, s0)) {
            return a != NULL ? SLC_OK : SLC_AGAIN;
        }
    }
    return SLC_ERROR;
}

int
slc_accounts_cred_find(const slc_cycle_t *cycle, const slc_mysql_srv_t *srv,
    const char *user, const char *host, slc_mysql_cred_t *out)
{
    const slc_mysql_user_t *u;
    slc_accounts_zone_t    *z;
    slc_account_t           a;
    int                     rc;

    memset(out, 0, sizeof(*out));
    u = slc_mysql_user_find(slc_mysql_conf(cycle), user,
        strlen(user));
    if (u != NULL) {
        out->hash = u->hash;
        return SLC_OK;
    }
    z = slc_accounts_of(srv);
    if (z == NULL) {
        return SLC_ERROR;
    }
    rc = slc_accounts_find(z, user, host, &a);
    if (rc == SLC_OK) {
        if (a.native) {
            out->hash = a.hash;
        } else {
            strlcpy(out->plugin, a.plugin, sizeof(out->plugin));
        }
    }
    explicit_bzero(&a, sizeof(a));
    return rc == SLC_OK ? SLC_OK : SLC_ERROR;
}

const char *
slc_accounts_host_name(const slc_mysql_srv_t *srv, const char *host)
{
    const slc_accounts_zone_t *z = slc_accounts_of(srv);
    uint32_t                   t;

    if (z == NULL || !slc_account_loopback(host)) {
        return host;
    }
    /* one word of the table readers use: no seqlock needed */
    t = __atomic_load_n(&z->active, __ATOMIC_ACQUIRE) & 1;
    return __atomic_load_n(&z->tab[t].resolve, __ATOMIC_RELAXED)
           ? "localhost" : host;
}

/* ---- asking for a load ------------------------------------------------ */

slc_accounts_zone_t *
slc_accounts_wanted(const slc_cycle_t *cycle, const slc_mysql_srv_t *srv,
    const char *user)
{
    slc_accounts_zone_t *z = slc_accounts_of(srv);

    if (z == NULL || slc_mysql_user_find(slc_mysql_conf(cycle), user,
                                         strlen(user)) != NULL)
    {
        return NULL;
    }
    return z;
}

uint32_t
slc_accounts_request(slc_accounts_zone_t *z)
{
    uint32_t ticket = __atomic_add_fetch(&z->req, 1, __ATOMIC_ACQ_REL);

    /* a shared futex (no FUTEX_PRIVATE_FLAG): the waiter is the monitor
       process; waking nobody costs one system call, blocking never */
    (void) syscall(SYS_futex, &z->req, FUTEX_WAKE, 1, NULL, NULL, 0);
    return ticket;
}

int
slc_accounts_served(const slc_accounts_zone_t *z, uint32_t ticket)
{
    uint32_t served = __atomic_load_n(&z->served, __ATOMIC_ACQUIRE);

    return (int32_t) (served - ticket) >= 0;
}

/* ---- configuration ---------------------------------------------------- */

static void *
slc_accounts_create_conf(slc_conf_t *cf, unsigned level)
{
    slc_accounts_conf_t *c;

    if (level != SLC_CONF_SERVER) {
        return NULL;
    }
    c = slc_palloc(cf->pool, sizeof(*c));
    if (c == NULL) {
        return SLC_CONF_ERROR;
    }
    memset(c, 0, sizeof(*c));
    return c;
}

static const char *
slc_accounts_users_from(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_accounts_conf_t *c = conf;
    slc_str_t           *v = &cf->args[1];

    (void) cmd;
    if (c->upstream_name.len != 0) {
        return "\"users_from\" is duplicate";
    }
    c->upstream_name.data = slc_pstrndup(cf->pool, v->data, v->len);
    c->upstream_name.len = v->len;
    c->file = cf->filename;
    c->line = cf->line;
    return c->upstream_name.data == NULL ? "out of memory" : NULL;
}

static slc_upstream_t *
slc_accounts_upstream(slc_mysql_conf_t *mc, const slc_str_t *name)
{
    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        if (up->name.len == name->len
            && memcmp(up->name.data, name->data, name->len) == 0)
        {
            return up;
        }
    }
    return NULL;
}

static int slc_accounts_attach(slc_shm_zone_t *z, slc_cycle_t *cycle,
    char *err, size_t errlen);

/* The zone of an upstream: "mysql_accounts/NAME", declared once. */
static int
slc_accounts_zone_add(slc_cycle_t *cycle, slc_upstream_t *up, char *err,
    size_t errlen)
{
    char            name[160];
    slc_shm_zone_t *z;

    snprintf(name, sizeof(name), "mysql_accounts/%s", up->name.data);
    z = slc_shm_zone_add(cycle, name, sizeof(slc_accounts_zone_t),
        &slc_mysql_accounts_module, err, errlen);
    if (z == NULL) {
        return SLC_ERROR;
    }
    z->attach = slc_accounts_attach;
    return SLC_OK;
}

static int
slc_accounts_check(slc_mysql_conf_t *mc, slc_mysql_srv_t *srv,
    slc_accounts_conf_t *c, char *err, size_t errlen)
{
    c->upstream = slc_accounts_upstream(mc, &c->upstream_name);
    if (c->upstream == NULL) {
        snprintf(err, errlen, "%s:%u: \"users_from\": unknown upstream "
            "\"%s\"", c->file, c->line, c->upstream_name.data);
        return SLC_ERROR;
    }
    if (slc_monitor_conf(c->upstream)->user == NULL) {
        snprintf(err, errlen, "%s:%u: \"users_from\": upstream \"%s\" has "
            "no \"monitor_user\" (the accounts are read with it)", c->file,
            c->line, c->upstream_name.data);
        return SLC_ERROR;
    }
    if (srv->auth != SLC_AUTH_LOCAL) {
        snprintf(err, errlen, "%s:%u: \"users_from\" needs \"auth local\"",
            c->file, c->line);
        return SLC_ERROR;
    }
    return SLC_OK;
}

static int
slc_accounts_init_conf(slc_cycle_t *cycle, char *err, size_t errlen)
{
    slc_mysql_conf_t    *mc = slc_mysql_conf(cycle);
    slc_accounts_conf_t *c;

    if (mc == NULL) {
        return SLC_OK;
    }
    for (slc_mysql_srv_t *srv = mc->servers; srv != NULL; srv = srv->next) {
        c = slc_module_conf(srv->mod_conf, &slc_mysql_accounts_module);
        if (c == NULL || c->upstream_name.len == 0) {
            continue;
        }
        if (slc_accounts_check(mc, srv, c, err, errlen) != SLC_OK
            || slc_accounts_zone_add(cycle, c->upstream, err, errlen)
               != SLC_OK)
        {
            return SLC_ERROR;
        }
    }
    return SLC_OK;
}

/* Every block reading this upstream's accounts gets the zone. */
static int
slc_accounts_attach(slc_shm_zone_t *z, slc_cycle_t *cycle, char *err,
    size_t errlen)
{
    slc_mysql_conf_t    *mc = slc_mysql_conf(cycle);
    slc_accounts_conf_t *c;
    const char          *up = z->name + sizeof("mysql_accounts/") - 1;

    (void) err;
    (void) errlen;
    for (slc_mysql_srv_t *srv = mc->servers; srv != NULL; srv = srv->next) {
        c = slc_module_conf(srv->mod_conf, &slc_mysql_accounts_module);
        if (c != NULL && c->upstream != NULL
            && strcmp(c->upstream->name.data, up) == 0)
        {
            c->zone = z->addr;
        }
    }
    return SLC_OK;
}

/* The loads run in the monitor's process (slc_mysql_accounts_load.c). */
static void
slc_accounts_init_process(slc_cycle_t *cycle, const slc_role_t *role)
{
    if (role != NULL && role->module == &slc_mysql_monitor_module) {
        (void) slc_accounts_loader_init(cycle);
    }
}

static void
slc_accounts_exit_process(slc_cycle_t *cycle, const slc_role_t *role)
{
    (void) cycle;
    if (role != NULL && role->module == &slc_mysql_monitor_module) {
        slc_accounts_loader_exit();
    }
}
