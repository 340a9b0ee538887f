#ifndef SLC_MYSQL_CONF_H
#define SLC_MYSQL_CONF_H

#include "slc_core.h"
#include "slc_latency.h"
#include "slc_conf_file.h"
#include "slc_cycle.h"
#include "slc_hash.h"
#include "slc_log.h"
#include "slc_mysql_auth.h"
#include <sys/socket.h>

/*
 * The mysql {} block: users, upstreams and server {} blocks (listeners
 * with a router).  Parsed into the cycle's pool; immutable afterwards, so
 * workers read it without locks.
 */

#define SLC_ROLE_PRIMARY   0x1
#define SLC_ROLE_REPLICA   0x2
#define SLC_ROLE_ANY       (SLC_ROLE_PRIMARY | SLC_ROLE_REPLICA)

#define SLC_AUTH_LOCAL        0
#define SLC_AUTH_PASSTHROUGH  1

typedef struct slc_mysql_conf_s      slc_mysql_conf_t;
typedef struct slc_mysql_user_s      slc_mysql_user_t;
typedef struct slc_upstream_s        slc_upstream_t;
typedef struct slc_upstream_server_s slc_upstream_server_t;
typedef struct slc_mysql_srv_s       slc_mysql_srv_t;
typedef struct slc_server_stats_s    slc_server_stats_t;
typedef struct slc_session_s         slc_session_t;
struct slc_sql_rule_s;
struct slc_sql_rules_s;

struct slc_mysql_user_s {
    slc_str_t                 name;
    int                       has_password;
    slc_mysql_native_hash_t   hash;
    const char               *file;
    unsigned                  line;
    slc_mysql_user_t         *next;
};

/* One process's share of a server's shared counters (mysql_held zone). */
typedef struct {
    uint32_t             active;
    uint32_t             handshakes;
} slc_held_t;

/* Counters every worker updates with atomic adds; they live in shm. */
struct slc_server_stats_s {
    char                 key[160];        /* "upstream/address" */
    uint64_t             active;          /* open backend connections */
    uint64_t             handshakes;      /* of those, passthrough clients
                                             not yet authenticated */
    uint64_t             connections;     /* total opened */
    uint64_t             connect_errors;
    uint64_t             bytes_in;        /* from the server */
    uint64_t             bytes_out;       /* to the server */
    slc_latency_t        response;        /* its responses' times */
};

struct slc_upstream_server_s {
    char                      name[128];  /* address as configured */
    struct sockaddr_storage   addr;
    socklen_t                 addrlen;
    unsigned                  role;     /* SLC_ROLE_ANY when role_auto */
    unsigned                  role_auto;    /* role=auto: as monitored */
    unsigned                  weight;
    unsigned                  max_connections;  /* 0 = unlimited */
    slc_server_stats_t       *stats;      /* shm */
    /* this server's column of the per-process table (shm, mysql_held):
       the cell of process index p is held[p * SLC_STATS_MAX], what p
       added to `active` and `handshakes`; only p writes it */
    slc_held_t               *held;
    slc_upstream_t           *upstream;
    /* the monitor's entry (shm, mysql_monitor), NULL: not monitored */
    struct slc_monitor_entry_s *monitor;
    /* its admin state (shm, mysql_admin: slc_mysql_upstream_admin.h) */
    uint32_t                 *admin;
    /* worker-local health: a failed connect keeps it out for a while */
    uint64_t                  down_until;
    slc_log_burst_t           handshake_burst;  /* max_handshakes log */
};

/*
 * The mysql module's own conf at the mysql and server levels: what a
 * server {} inherits from mysql {} when it does not set it (merge_conf).
 * The session code reads the merged values through its server
 * (srv->timeouts, srv->auth, ...), which init_conf fills from here.
 */
typedef struct {
    long long                 connect_timeout;  /* ms */
    long long                 auth_timeout;     /* ms, client handshake */
    long long                 idle_timeout;     /* ms, 0 = never */
} slc_mysql_timeouts_t;

typedef struct {
    slc_mysql_timeouts_t      timeouts;
    int                       auth;             /* SLC_AUTH_* */
    const char               *server_version;   /* NULL: learn it */
    long long                 max_handshakes;
    long long                 max_handshakes_per_host;
    long long                 auth_failure_threshold;
    long long                 auth_failure_delay;
    long long                 auth_failure_max_delay;
    long long                 digests;      /* SLC_DIGESTS_* */
} slc_mysql_srv_conf_t;

struct slc_upstream_s {
    slc_str_t                 name;
    void                    **mod_conf;   /* by module index */
    slc_upstream_server_t    *servers;
    unsigned                  nservers;
    unsigned                  nalloc;
    const char               *file;
    unsigned                  line;
    slc_upstream_t           *next;
};

/* A server {} block.  init_conf fills auth, server_version, timeouts
   and the limits from max_handshakes on from its merged
   slc_mysql_srv_conf_t. */
struct slc_mysql_srv_s {
    const slc_module_t       *router;
    slc_upstream_t           *upstream;
    slc_str_t                 upstream_name;
    int                       auth;
    const char               *server_version;   /* NULL: learn it */
    const slc_mysql_timeouts_t *timeouts;      /* merged, never NULL */
    long long                 max_handshakes;   /* per backend, 0 = off */
    long long                 max_handshakes_per_host;  /* per worker */
    long long                 auth_failure_threshold;   /* 0 = off */
    long long                 auth_failure_delay;       /* ms */
    long long                 auth_failure_max_delay;   /* ms */
    void                    **mod_conf;   /* by module index */
    /* `filters`: each module's slc_filter_t, in the directive's order */
    const struct slc_filter_s *const *filters;
    unsigned                  nfilters;
    const char               *file;
    unsigned                  line;
    unsigned                  nlisten;
    unsigned                  traffic_col;  /* slc_mysql_traffic.h */
    unsigned                  digests;      /* SLC_DIGESTS_* */
    /* its query rules and cache_rules, in order (slc_sql_rule.h); NULL:
       none */
    struct slc_sql_rules_s   *rules;
    slc_mysql_srv_t          *next;
};

/*
 * The server's rule list, made on first use (the rule and cache_rule
 * directives; freed with the cycle's pool): NULL when out of memory.
 */
struct slc_sql_rules_s *slc_mysql_rule_list(slc_conf_t *cf,
    slc_mysql_srv_t *srv);
/* A rule NAME { } block's, or a cache_rule's, rule *r goes on srv's list
   (which takes it, or frees it): NULL or the error. */
const char *slc_mysql_rule_add(slc_conf_t *cf, slc_mysql_srv_t *srv,
    struct slc_sql_rule_s *r);
/* The checks of srv's rules once its router and upstream are known;
   a route server=NAME is resolved then (slc_sql_rule_t.server_at). */
int  slc_mysql_rule_check(const slc_mysql_srv_t *srv, char *err,
    size_t errlen);

/*
 * The module's conf at the main level, which a mysql {} block fills
 * (slc_mysql_conf() finds it).
 */
struct slc_mysql_conf_s {
    int                       block;      /* a mysql {} was parsed */
    void                    **mod_conf;   /* mysql {} level, by module */
    slc_mysql_user_t         *users;      /* last in the file first */
    slc_hash_t                user_hash;  /* name -> slc_mysql_user_t */
    slc_upstream_t           *upstreams;
    slc_mysql_srv_t          *servers;
    size_t                    buffer_size;
    slc_shm_zone_t           *stats_zone;
    slc_shm_zone_t           *registry_zone;   /* slc_mysql_registry.h */
    slc_shm_zone_t           *held_zone;
    slc_shm_zone_t           *traffic_zone;    /* slc_mysql_traffic.h */
    slc_shm_zone_t           *admin_zone;  /* slc_mysql_upstream_admin.h */
    slc_shm_zone_t           *digests_zone;    /* slc_mysql_digests.h */
    long long                 digest_top;      /* entries per region */
    long long                 digest_metrics;  /* top N in /metrics */
};

#define SLC_STATS_MAX  1024

/*
 * Directive handlers, for the module's table (slc_mysql_module.c): the
 * mysql {} block's (slc_mysql_conf.c) and the upstream {} block's
 * (upstream/slc_mysql_upstream_conf.c).  Each returns NULL or the error.
 */
#define SLC_MYSQL_HANDLER(name)                                             \
    const char *name(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
SLC_MYSQL_HANDLER(slc_mysql_block);
SLC_MYSQL_HANDLER(slc_mysql_buffer_size);
SLC_MYSQL_HANDLER(slc_mysql_digests);
SLC_MYSQL_HANDLER(slc_mysql_rule_block);
SLC_MYSQL_HANDLER(slc_mysql_rule_directive);
SLC_MYSQL_HANDLER(slc_mysql_rule_match_limit);
SLC_MYSQL_HANDLER(slc_mysql_digest_top);
SLC_MYSQL_HANDLER(slc_mysql_digest_metrics);
SLC_MYSQL_HANDLER(slc_mysql_user);
SLC_MYSQL_HANDLER(slc_mysql_password);
SLC_MYSQL_HANDLER(slc_mysql_server_block);
SLC_MYSQL_HANDLER(slc_mysql_listen);
SLC_MYSQL_HANDLER(slc_mysql_router);
SLC_MYSQL_HANDLER(slc_mysql_filters);
SLC_MYSQL_HANDLER(slc_mysql_upstream_ref);
SLC_MYSQL_HANDLER(slc_mysql_upstream_block);
SLC_MYSQL_HANDLER(slc_mysql_upstream_server);

/* Resolve "HOST:PORT", "[IPV6]:PORT" or "unix:PATH" at config time (an
   upstream's servers; the cache's Redis servers). */
const char *slc_upstream_conf_sockaddr(slc_conf_t *cf, const char *s,
    struct sockaddr_storage *addr, socklen_t *addrlen);

/* A parsed server {} (its conf settled) has what it needs: listen, a
   router that takes its auth, a known upstream; else SLC_ERROR with
   file:line in err. */
int  slc_mysql_check_srv(slc_mysql_conf_t *mc, slc_mysql_srv_t *srv,
    char *err, size_t errlen);

slc_mysql_user_t *slc_mysql_user_find(const slc_mysql_conf_t *mc,
    const char *name, size_t len);
/* A server's slot in the mysql_stats zone (names it across workers). */
static inline uint32_t
slc_upstream_stats_index(const slc_mysql_conf_t *mc,
    const slc_server_stats_t *st)
{
    return (uint32_t) (st - (const slc_server_stats_t *) mc->stats_zone->addr);
}
/* The stats slot of `us` by its key, taken if new (whatever the order of
   the zones' attach hooks); -1 when the zone is full. */
int  slc_upstream_stats_key_index(const slc_mysql_conf_t *mc,
    const slc_upstream_server_t *us);
/* The server of this cycle whose stats slot is `index`, or NULL. */
slc_upstream_server_t *slc_upstream_stats_server(const slc_mysql_conf_t *mc,
    uint32_t index);
/* Bind every upstream server of mc to its slot in the stats zone `z` and
   to its column of the held zone (the stats zone's attach hook: every
   zone of the cycle is mapped, before the fork). */
int  slc_upstream_stats_attach(const slc_mysql_conf_t *mc, slc_shm_zone_t *z,
    char *err, size_t errlen);
/* The dead process `proc` still held what its row of the held zone says:
   subtract it from the shared `active` counters, and clear the row. */
void slc_upstream_stats_reap(const slc_mysql_conf_t *mc, unsigned proc);

/* The module (slc_mysql_module.c): its table names the layer above (the
   session's hooks), so those under it find it by name (slc_mysql_self). */
extern slc_module_t  slc_mysql_module;
const slc_module_t *slc_mysql_self(void);

/* The cycle's mysql {} conf, NULL when the file has no mysql {} block. */
slc_mysql_conf_t *slc_mysql_conf(const slc_cycle_t *cycle);

#endif /* SLC_MYSQL_CONF_H */
