#ifndef SLC_MYSQL_MONITOR_H
#define SLC_MYSQL_MONITOR_H

#include "slc_core.h"
#include "slc_mysql_conf.h"

/*
 * The monitor (docs/architecture.md, "Monitor"): one process of the role
 * `monitor`, declared when an upstream has `monitor_user`, checks every
 * server of those upstreams each `monitor_interval` with Connector/C
 * (blocking calls: it serves no client) and writes what it saw into the
 * zone `mysql_monitor`.  Workers read the zone without locks: each entry
 * is a seqlock, which only the monitor writes.
 *
 * The zone has one entry per slot of `mysql_stats` (same index, so keyed
 * by "upstream/address" too): a server kept across a reload keeps what
 * the monitor last saw of it.
 */

#define SLC_MONITOR_UP          0x01    /* the last check succeeded */
#define SLC_MONITOR_READ_ONLY   0x02    /* @@read_only = ON */
#define SLC_MONITOR_REPLICA     0x04    /* SHOW SLAVE STATUS has a row */
#define SLC_MONITOR_IO_RUNNING  0x08    /* Slave_IO_Running = Yes */
#define SLC_MONITOR_SQL_RUNNING 0x10    /* Slave_SQL_Running = Yes */
#define SLC_MONITOR_GTID_LONG   0x20    /* the position did not fit */

#define SLC_MONITOR_TEXT  256

/* What one check saw; copied out whole under the seqlock. */
typedef struct {
    uint64_t            checked_at;     /* ms since the epoch; 0: never */
    uint64_t            changes;        /* bumped when up or role change */
    int64_t             seconds_behind; /* Seconds_Behind_Master, -1: NULL */
    uint32_t            flags;          /* SLC_MONITOR_* */
    uint32_t            role;           /* SLC_ROLE_PRIMARY, _REPLICA, 0 */
    uint32_t            pad;
    /* CLOCK_MONOTONIC ms, the same clock as the workers' loops */
    uint64_t            asked_at;       /* the check began: its position
                                           holds every commit before it */
    uint64_t            answered_at;    /* rounded up: its answer had come */
    /* a replica: it holds every commit a primary of its upstream had at
       synced_at, and has since synced_seen (both 0: not known); the pair
       before it too, for a read sent before the newest was seen */
    uint64_t            synced_at;
    uint64_t            synced_seen;
    uint64_t            synced_prev_at;
    uint64_t            synced_prev_seen;
} slc_monitor_status_t;

typedef struct slc_monitor_entry_s {
    /* odd while the monitor writes; a reader retries on change */
    uint32_t            seq;
    uint32_t            pad;
    slc_monitor_status_t st;
    char                gtid[SLC_MONITOR_TEXT];     /* gtid_current_pos */
    char                error[SLC_MONITOR_TEXT];    /* last error */
} slc_monitor_entry_t;

/* An upstream's monitor conf (its module conf at the upstream level). */
typedef struct {
    const char         *user;           /* NULL: no monitor */
    /* the password XOR pad, never the plaintext (t/plaintext.t) */
    uint8_t            *password;
    uint8_t            *pad;
    size_t              password_len;
    long long           interval;       /* ms */
    long long           connect_timeout;    /* ms */
    long long           read_timeout;   /* ms; 0: connect_timeout (the
                                           binlog reader's is longer) */
    long long           max_replication_lag; /* ms, 0: no limit */
    const char         *file;
    unsigned            line;
} slc_monitor_conf_t;

extern slc_module_t  slc_mysql_monitor_module;

/*
 * The seqlock.  begin/end bracket a write: begin returns the odd value
 * it set, end stores it + 1.  A writer that finds the entry odd waits a
 * little (another monitor, an old one finishing its step on reload),
 * then takes over (one killed while writing leaves it odd for ever).
 * read copies the status (and the texts when `full`) and returns
 * SLC_OK, or SLC_ERROR when no stable copy came in a few tries.
 */
uint32_t slc_monitor_write_begin(slc_monitor_entry_t *e);
void     slc_monitor_write_end(slc_monitor_entry_t *e, uint32_t seq);
int      slc_monitor_read(const slc_monitor_entry_t *e,
    slc_monitor_entry_t *out, int full);

/*
 * The role `us` has now for a pick (SLC_ROLE_*), 0 when it must not be
 * chosen: without a monitor, its configured role; with one, 0 when the
 * monitor saw it down, or a replica with a replication thread stopped
 * or further behind than max_replication_lag; a `role=auto` server takes
 * the role seen (none before the first check).
 */
unsigned slc_monitor_role(const slc_upstream_server_t *us);
/* Whether the monitor's last check of `us` found it down (0 without a
   monitor or before its first check). */
int      slc_monitor_seen_down(const slc_upstream_server_t *us);

/*
 * What the replica `us` was known to hold by the time `before`
 * (CLOCK_MONOTONIC ms; the cache keeps a replica's answer only if it
 * holds every write its tables saw): every commit its upstream's primary
 * had at *at, the latest such time the monitor had seen by `before`.
 * SLC_ERROR when nothing was known by then: no monitor, a MySQL server
 * (its positions are not compared), never seen in step, or seen only
 * after `before` (the two last findings are kept, so a check that ends
 * while a read is out does not hide the one before it).
 */
int slc_monitor_synced(const slc_upstream_server_t *us, uint64_t before,
    uint64_t *at);

/*
 * The monitor's step for a replica's fresh check `e` (its previous status
 * `old`): against the last check of every primary of `up`, fill
 * e->st.synced_at and synced_seen (kept from `old` unless they grow; when
 * they grow, the old pair moves to synced_prev_at/_seen).
 * Exposed for its unit test.
 */
void slc_monitor_sync(const slc_upstream_t *up,
    const slc_monitor_status_t *old, slc_monitor_entry_t *e);

/* A password directive's argument (cf->args[1]) into c, masked; the
   argument is wiped.  NULL, or the error (`name` is the directive). */
const char *slc_monitor_secret(slc_conf_t *cf, const char *name,
    slc_monitor_conf_t *c);

/* The monitor conf of an upstream (its user is NULL: not monitored). */
const slc_monitor_conf_t *slc_monitor_conf(const slc_upstream_t *up);

/*
 * Log in to `us` with the upstream's monitor account (blocking, the
 * monitor process only): *mysql is set (NULL: out of memory) and must be
 * closed by the caller whatever the result.  The password is unmasked on
 * the stack for the call and wiped, with Connector/C's copy.
 */
struct st_mysql;
int slc_monitor_login(struct st_mysql **mysql,
    const slc_upstream_server_t *us, const slc_monitor_conf_t *c);

/* The role's name for logs: "primary", "replica", "none". */
const char *slc_monitor_role_name(unsigned role);

#endif /* SLC_MYSQL_MONITOR_H */
