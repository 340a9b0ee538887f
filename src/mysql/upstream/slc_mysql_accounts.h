#ifndef SLC_MYSQL_ACCOUNTS_H
#define SLC_MYSQL_ACCOUNTS_H

#include "slc_core.h"
#include "slc_mysql_auth.h"
#include "slc_mysql_conf.h"

/*
 * Accounts from the servers (docs/architecture.md, "Accounts"): with
 * `users_from UPSTREAM;` in a server {} block, `auth local` also knows
 * every account of that upstream's primary.  The monitor process loads
 * them (user, host pattern, plugin, authentication_string) with the
 * monitor account into the zone `mysql_accounts/UPSTREAM`; workers read
 * it without locks (a seqlock per table, two tables: the monitor fills
 * the one readers do not use, then flips `active`).
 *
 * A worker that meets an unknown user or a wrong password asks for a
 * reload (slc_accounts_request: a counter in the zone, and a futex wake
 * of the monitor's waiting thread) and polls for the load that started
 * after its request (slc_accounts_served), so an account created a moment
 * ago logs in on the first try.  The monitor loads at most once a second
 * per upstream, whoever asks (`loaded_at`, shared by every process).
 *
 * Host names: with the server's @@skip_name_resolve OFF (its default) it
 * names a TCP client at a loopback address (127.0.0.1, ::1) `localhost`
 * without asking DNS, and matches host patterns against that name and
 * the address both.  The loader reads the setting with the accounts, and
 * each table says which it holds (`resolve`), so a loopback client
 * matches 'u'@'localhost' as it would on the server.  Other addresses
 * the server would resolve by reverse DNS; sluice does not (the worker's
 * loop never waits on DNS): they match by address only (docs/directives.md,
 * users_from).
 */

#define SLC_ACCOUNT_USER_MAX    128     /* characters of mysql.user.User */
#define SLC_ACCOUNT_HOST_MAX    255
#define SLC_ACCOUNT_PLUGIN_MAX  64
#define SLC_ACCOUNTS_MAX        4096    /* per table; more are dropped */
#define SLC_ACCOUNTS_INTERVAL   1000    /* ms between two loads, at least */
/* a login waiting for a load polls every SLC_ACCOUNTS_POLL ms, for
   SLC_ACCOUNTS_WAIT ms at most */
#define SLC_ACCOUNTS_POLL       5
#define SLC_ACCOUNTS_WAIT       2500

typedef struct {
    uint64_t                  sort;     /* the server's: larger is more
                                           specific (slc_account_sort) */
    uint32_t                  ip;       /* IP/netmask entries: mask != 0 */
    uint32_t                  mask;
    uint32_t                  native;   /* mysql_native_password (or none) */
    uint32_t                  pad;
    slc_mysql_native_hash_t   hash;     /* native only */
    char                      user[SLC_ACCOUNT_USER_MAX * 3 + 1];
    char                      host[SLC_ACCOUNT_HOST_MAX + 1];
    char                      plugin[SLC_ACCOUNT_PLUGIN_MAX + 1];
} slc_account_t;

typedef struct {
    uint32_t                  seq;      /* seqlock (slc_seqlock.h) */
    uint32_t                  n;
    /* 1: the server these accounts came from resolves client names
       (@@skip_name_resolve OFF), so a loopback peer is `localhost` */
    uint32_t                  resolve;
    uint32_t                  pad;
    slc_account_t             a[SLC_ACCOUNTS_MAX];  /* slc_account_cmp */
} slc_accounts_table_t;

typedef struct {
    /* bumped by a worker that wants a load; the monitor's thread sleeps
       on it (futex) */
    uint32_t                  req;
    /* the value of req when the last finished load began: a request
       `r` is served once served - r >= 0 */
    uint32_t                  served;
    uint32_t                  active;   /* the table readers use */
    uint32_t                  pad;
    uint64_t                  loads;    /* loads published (generation) */
    uint64_t                  loaded_at;    /* ms, CLOCK_MONOTONIC, of the
                                               last load's start */
    slc_accounts_table_t      tab[2];
} slc_accounts_zone_t;

/* The accounts module's conf of a server {} block. */
typedef struct {
    slc_str_t                 upstream_name;    /* users_from, or empty */
    slc_upstream_t           *upstream;
    slc_accounts_zone_t      *zone;     /* set by the zone's attach */
    const char               *file;
    unsigned                  line;
} slc_accounts_conf_t;

extern slc_module_t  slc_mysql_accounts_module;

/* ---- matching, as the server matches (pure, unit tested) ------------- */

/*
 * The server's specificity of a (host pattern, user): MariaDB's
 * get_magic_sort("hu"), larger is more specific: a host without
 * wildcards (name, IP, IP/netmask) before patterns, fewer and later
 * wildcards before more, `%` last; then a named user before the
 * anonymous one.
 */
uint64_t slc_account_sort(const char *host, const char *user);
/* Fill sort, ip and mask from user and host. */
void     slc_account_prepare(slc_account_t *a);
/* The table's order (qsort): user, then sort descending, then host
   descending, as the server sorts its acl_users. */
int      slc_account_cmp(const void *a, const void *b);
/*
 * A client as the server sees it at login: a host name, an address, or
 * both (the server's sctx->host and sctx->ip).
 */
typedef struct {
    const char               *name;     /* NULL: none */
    const char               *ip;       /* text; NULL: a unix socket */
} slc_account_client_t;

/* 1 if `ip` (text) is what the server counts as loopback: 127.0.0.1
   exactly (not the rest of 127/8), or ::1. */
int      slc_account_loopback(const char *ip);
/*
 * The client at `host`, as sessions keep it ("localhost" for a unix
 * socket, else the peer's address as text), for a server that resolves
 * names (`resolve`) or not: a unix socket is the name "localhost"; a
 * TCP peer is its address, and also the name "localhost" when it is
 * loopback and the server resolves.  `c` points into `host`.
 */
void     slc_account_client(slc_account_client_t *c, const char *host,
    int resolve);
/*
 * Whether the account's host matches the client, as the server's
 * compare_hostname: IP/netmask (IPv4) against the address; else the
 * pattern (`%`, `_` and `\` as in LIKE) against the name, case-blind,
 * or against the address as it is.  An empty host matches any client.
 */
int      slc_account_host_match(const slc_account_t *a,
    const slc_account_client_t *c);
/*
 * The account the server would pick for `user` from client `c` in a
 * table sorted by slc_account_cmp: the most specific match among that
 * user's entries and the anonymous ones, a named entry winning a tie.
 */
const slc_account_t *slc_accounts_match(const slc_account_t *a, unsigned n,
    const char *user, const slc_account_client_t *c);

/* ---- what workers use ------------------------------------------------ */

/*
 * The credentials of a login, from the config's `user` blocks first,
 * then from the block's users_from accounts: the one lookup for every
 * check of a token (login, COM_CHANGE_USER, a handed-over session).
 */
typedef struct {
    slc_mysql_native_hash_t   hash;
    /* another plugin than mysql_native_password: named here, and the
       login must be refused with it */
    char                      plugin[SLC_ACCOUNT_PLUGIN_MAX + 1];
} slc_mysql_cred_t;

/* SLC_OK: found (see plugin); SLC_ERROR: no such user for this host.
   `out` is the caller's and must be wiped by it (explicit_bzero). */
int  slc_accounts_cred_find(const slc_cycle_t *cycle,
    const slc_mysql_srv_t *srv,
    const char *user, const char *host, slc_mysql_cred_t *out);

/*
 * The host the server would name a client at `host` (as sessions keep
 * it) in its messages ('u'@'HOST'): "localhost" for a loopback peer when
 * the block's users_from server resolves names (as of the last load),
 * else `host` itself.  Without users_from the server's setting is not
 * known, and the address is named.
 */
const char *slc_accounts_host_name(const slc_mysql_srv_t *srv,
    const char *host);

/* The users_from zone of a server {} block, NULL without one, and its
   upstream. */
slc_accounts_zone_t *slc_accounts_of(const slc_mysql_srv_t *srv);
slc_upstream_t *slc_accounts_upstream_of(const slc_mysql_srv_t *srv);
/* The zone a refused login of `user` should wait for a load of: the
   block's users_from zone, unless a `user` block names `user` (config
   users win, a load would change nothing); else NULL. */
slc_accounts_zone_t *slc_accounts_wanted(const slc_cycle_t *cycle,
    const slc_mysql_srv_t *srv, const char *user);
/* Ask the monitor for a load (never blocks); returns the ticket. */
uint32_t slc_accounts_request(slc_accounts_zone_t *z);
/* 1 once a load that began after the request `ticket` has finished. */
int  slc_accounts_served(const slc_accounts_zone_t *z, uint32_t ticket);

/* ---- the monitor process (slc_mysql_accounts_load.c) ------------------ */

/* Start loading the zones of `cycle` in this (the monitor) process. */
int  slc_accounts_loader_init(slc_cycle_t *cycle);
void slc_accounts_loader_exit(void);

/* Publish a new table (the loader; also the unit tests): sorts `a`,
   writes the inactive table, with `resolve` (the server's
   skip_name_resolve is OFF), and flips. */
void slc_accounts_publish(slc_accounts_zone_t *z, slc_account_t *a,
    unsigned n, int resolve);

#endif /* SLC_MYSQL_ACCOUNTS_H */
