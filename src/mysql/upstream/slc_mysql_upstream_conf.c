#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_log.h"
#include "slc_mysql_conf.h"
#include "slc_mysql_upstream.h"
#include "slc_worker.h"

#include <netdb.h>
#include <sys/un.h>

/*
 * upstream NAME { server ADDRESS role=... weight=... max_connections=...; }
 * and the binding of every server to its counters in shared memory.
 */

const char *
slc_mysql_upstream_block(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_mysql_conf_t *mc = conf;
    slc_upstream_t   *up;
    const char       *rv;

    (void) cmd;
    for (up = mc->upstreams; up != NULL; up = up->next) {
        if (strcmp(up->name.data, cf->args[1].data) == 0) {
            return slc_conf_error(cf, "duplicate upstream \"%s\"",
                cf->args[1].data);
        }
    }
    up = slc_palloc(cf->pool, sizeof(*up));
    if (up == NULL) {
        return "out of memory";
    }
    up->name.data = slc_pstrndup(cf->pool, cf->args[1].data, cf->args[1].len);
    up->name.len = cf->args[1].len;
    up->file = cf->filename;
    up->line = cf->line;
    rv = slc_conf_parse_block(cf, SLC_CONF_UPSTREAM, up, &up->mod_conf);
    if (rv != NULL) {
        return rv;
    }
    if (up->nservers == 0) {
        return slc_conf_error(cf, "no servers in upstream \"%s\"",
            up->name.data);
    }
    up->next = mc->upstreams;
    mc->upstreams = up;
    return NULL;
}

const char *
slc_upstream_conf_sockaddr(slc_conf_t *cf, const char *s,
    struct sockaddr_storage *addr, socklen_t *addrlen)
{
    struct addrinfo  hints = { .ai_socktype = SOCK_STREAM }, *res;
    char             host[128];
    const char      *port;
    int              rc;

    if (strncmp(s, "unix:", 5) == 0) {
        struct sockaddr_un *sun = (struct sockaddr_un *) addr;
        if (strlcpy(sun->sun_path, s + 5, sizeof(sun->sun_path))
            >= sizeof(sun->sun_path))
        {
            return "unix socket path is too long";
        }
        sun->sun_family = AF_UNIX;
        *addrlen = sizeof(*sun);
        return NULL;
    }
    port = strrchr(s, ':');
    if (port == NULL || port == s || (size_t) (port - s) >= sizeof(host)) {
        return slc_conf_error(cf, "invalid server address \"%s\" (expected "
            "HOST:PORT, [IPV6]:PORT or unix:PATH)", s);
    }
    memcpy(host, s, (size_t) (port - s));
    host[port - s] = '\0';
    if (host[0] == '[' && host[strlen(host) - 1] == ']') {
        memmove(host, host + 1, strlen(host) - 2);
        host[strlen(host) - 2] = '\0';
    }
    rc = getaddrinfo(host, port + 1, &hints, &res);
    if (rc != 0) {
        return slc_conf_error(cf, "cannot resolve server \"%s\" (%s)", s,
            gai_strerror(rc));
    }
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    *addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    return NULL;
}

static const char *
slc_upstream_conf_addr(slc_conf_t *cf, const char *s,
    slc_upstream_server_t *us)
{
    strlcpy(us->name, s, sizeof(us->name));
    return slc_upstream_conf_sockaddr(cf, s, &us->addr, &us->addrlen);
}

static const char *
slc_upstream_conf_param(slc_conf_t *cf, slc_upstream_server_t *us,
    const slc_str_t *a)
{
    long long n;
    int       rc;

    if (strncmp(a->data, "role=", 5) == 0) {
        if (strcmp(a->data + 5, "primary") == 0) {
            us->role = SLC_ROLE_PRIMARY;
        } else if (strcmp(a->data + 5, "replica") == 0) {
            us->role = SLC_ROLE_REPLICA;
        } else if (strcmp(a->data + 5, "auto") == 0) {
            /* either, as the monitor sees it (slc_monitor_role) */
            us->role = SLC_ROLE_ANY;
            us->role_auto = 1;
        } else {
            return slc_conf_error(cf, "invalid \"%s\" (role=primary, "
                "role=replica or role=auto)", a->data);
        }
        return NULL;
    }
    if ((rc = slc_conf_parse_param(a, "weight", 1, 1000, &n)) != 0) {
        if (rc < 0) {
            return slc_conf_error(cf, "invalid \"%s\" (1 to 1000)", a->data);
        }
        us->weight = (unsigned) n;
        return NULL;
    }
    if ((rc = slc_conf_parse_param(a, "max_connections", 0, 10000000, &n))
        != 0)
    {
        if (rc < 0) {
            return slc_conf_error(cf, "invalid \"%s\"", a->data);
        }
        us->max_connections = (unsigned) n;
        return NULL;
    }
    return slc_conf_error(cf, "invalid parameter \"%s\" (role=, weight=, "
        "max_connections=)", a->data);
}

const char *
slc_mysql_upstream_server(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_upstream_t        *up = conf;
    slc_upstream_server_t *us;
    const char            *rv;

    (void) cmd;
    if (up->nservers == 256) {
        return "too many servers in upstream (at most 256)";
    }
    if (up->nservers == up->nalloc) {
        unsigned n = up->nalloc ? up->nalloc * 2 : 4;
        us = slc_palloc(cf->pool, n * sizeof(*us));
        if (us == NULL) {
            return "out of memory";
        }
        if (up->nservers) {
            memcpy(us, up->servers, up->nservers * sizeof(*us));
        }
        up->servers = us;
        up->nalloc = n;
    }
    us = &up->servers[up->nservers];
    memset(us, 0, sizeof(*us));
    us->weight = 1;
    if ((rv = slc_upstream_conf_addr(cf, cf->args[1].data, us)) != NULL) {
        return rv;
    }
    for (unsigned i = 2; i < cf->nargs; i++) {
        if ((rv = slc_upstream_conf_param(cf, us, &cf->args[i])) != NULL) {
            return rv;
        }
    }
    if (us->role == 0) {
        return slc_conf_error(cf, "server \"%s\" has no role (add "
            "role=primary, role=replica or role=auto)", us->name);
    }
    if (slc_upstream_find(up, us->name) != NULL) {
        return slc_conf_error(cf, "duplicate server \"%s\"", us->name);
    }
    us->upstream = up;
    up->nservers++;
    return NULL;
}

static void
slc_upstream_stats_sub(uint64_t *counter, uint64_t n)
{
    uint64_t cur = __atomic_load_n(counter, __ATOMIC_RELAXED), next;

    do {
        next = cur > n ? cur - n : 0;
    } while (!__atomic_compare_exchange_n(counter, &cur, next, 1,
                 __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

static slc_server_stats_t *
slc_upstream_stats_slot(slc_server_stats_t *tab, const char *key)
{
    for (unsigned i = 0; i < SLC_STATS_MAX; i++) {
        if (tab[i].key[0] == '\0') {
            strlcpy(tab[i].key, key, sizeof(tab[i].key));
            return &tab[i];
        }
        if (strcmp(tab[i].key, key) == 0) {
            return &tab[i];
        }
    }
    return NULL;
}

int
slc_upstream_stats_attach(const slc_mysql_conf_t *mc, slc_shm_zone_t *z,
    char *err, size_t errlen)
{
    char              key[160];

    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        for (unsigned i = 0; i < up->nservers; i++) {
            slc_upstream_server_t *us = &up->servers[i];
            snprintf(key, sizeof(key), "%s/%s", up->name.data, us->name);
            us->stats = slc_upstream_stats_slot(z->addr, key);
            if (us->stats == NULL) {
                snprintf(err, errlen, "too many upstream servers for the "
                    "stats zone (%d)", SLC_STATS_MAX);
                return SLC_ERROR;
            }
            us->held = (slc_held_t *) mc->held_zone->addr
                       + (us->stats - (slc_server_stats_t *) z->addr);
        }
    }
    return SLC_OK;
}

int
slc_upstream_stats_key_index(const slc_mysql_conf_t *mc,
    const slc_upstream_server_t *us)
{
    slc_server_stats_t *st;
    char                key[160];

    snprintf(key, sizeof(key), "%s/%s", us->upstream->name.data, us->name);
    st = slc_upstream_stats_slot(mc->stats_zone->addr, key);
    return st != NULL ? (int) slc_upstream_stats_index(mc, st) : -1;
}

slc_upstream_server_t *
slc_upstream_stats_server(const slc_mysql_conf_t *mc, uint32_t index)
{
    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        for (unsigned i = 0; i < up->nservers; i++) {
            if (up->servers[i].stats != NULL
                && slc_upstream_stats_index(mc, up->servers[i].stats) == index)
            {
                return &up->servers[i];
            }
        }
    }
    return NULL;
}

/*
 * The process is dead: nobody writes its row any more.  A count it held
 * goes back to `active`, never below zero (a worker killed between its two
 * updates leaves at worst one connection counted, never one too few).
 */
void
slc_upstream_stats_reap(const slc_mysql_conf_t *mc, unsigned proc)
{
    slc_server_stats_t *stats;
    slc_held_t         *row;

    if (mc->held_zone == NULL || mc->held_zone->addr == NULL
        || proc >= SLC_PROC_MAX)
    {
        return;
    }
    stats = mc->stats_zone->addr;
    row = (slc_held_t *) mc->held_zone->addr + (size_t) proc * SLC_STATS_MAX;
    for (unsigned i = 0; i < SLC_STATS_MAX; i++) {
        if (row[i].active == 0 && row[i].handshakes == 0) {
            continue;
        }
        slc_log(SLC_LOG_NOTICE, "worker process index %u held %u backend "
            "connection(s) and %u handshake(s) of \"%s\", released", proc,
            row[i].active, row[i].handshakes, stats[i].key);
        slc_upstream_stats_sub(&stats[i].active, row[i].active);
        slc_upstream_stats_sub(&stats[i].handshakes, row[i].handshakes);
        row[i].active = row[i].handshakes = 0;
    }
}
