#ifndef SLC_MYSQL_SESSION_H
#define SLC_MYSQL_SESSION_H

#include "slc_core.h"
#include "slc_buf.h"
#include "slc_event.h"
#include "slc_mysql_conf.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_peer.h"
#include "slc_mysql_track.h"
#include "slc_mysql_intercept.h"
#include "slc_packet.h"

/*
 * A client session: the client connection, its authentication, and the
 * backend connection(s) the router opens for it.  Everything of a session
 * lives in one worker.  Memory is freed only after the event batch in which
 * it was closed (slc_loop_defer), so handlers never see freed memory.
 */

#define SLC_MAX_USER   384      /* 80 characters of utf8mb4, with room */
#define SLC_MAX_DB     256

/* Capabilities the proxy can never carry between client and backend. */
#define SLC_CAPS_NEVER                                                       \
    (SLC_CLIENT_SSL | SLC_CLIENT_COMPRESS | SLC_CLIENT_ZSTD_COMPRESSION      \
     | SLC_CLIENT_SSL_VERIFY_SERVER_CERT)

typedef struct slc_backend_s  slc_backend_t;

typedef enum {
    SLC_SS_GREETING,       /* greeting sent, awaiting HandshakeResponse */
    SLC_SS_SWITCH,         /* AuthSwitchRequest sent, awaiting the token */
    SLC_SS_DELAY,          /* verified; the answer waits (auth_failure_*) */
    SLC_SS_BACKEND,        /* router opening the backend */
    SLC_SS_RELAY,          /* passthrough: relaying the auth exchange */
    SLC_SS_READY,          /* authenticated; the router moves the bytes */
    SLC_SS_CLOSING,        /* flushing a final packet, then close */
    SLC_SS_CLOSED
} slc_session_state_t;

#define SLC_SESSION_MAGIC  0x5e551011

struct slc_session_s {
    uint64_t               id;        /* slc_mysql_registry.h */
    uint32_t               magic;     /* SLC_SESSION_MAGIC (SLC_CHECK_OBJ) */
    slc_session_state_t    state;
    slc_conn_t             client;
    slc_buf_t             *in;        /* from the client, not yet consumed */
    slc_buf_t             *out;       /* to the client, not yet written */
    slc_cycle_t           *cycle;
    slc_mysql_srv_t       *srv;
    slc_timer_t            timer;
    char                   peer[64];     /* address:port, for logs */
    /* address only ("localhost": a unix socket), as accounts match it;
       messages name slc_accounts_host_name() of it */
    char                   host[48];
    slc_peer_t            *addr;      /* held until authenticated/closed */

    /* identity, as the client gave it */
    uint8_t                scramble[SLC_MYSQL_SCRAMBLE_LEN];
    uint8_t                seq;       /* next sequence id to the client */
    uint32_t               caps;      /* client's capabilities */
    uint32_t               mariadb_caps;
    uint32_t               max_packet;
    uint16_t               charset;   /* collation id: the login's,
                                         then COM_CHANGE_USER's */
    char                   user[SLC_MAX_USER + 1];
    char                   db[SLC_MAX_DB + 1];
    int                    has_db;
    uint8_t               *attrs;     /* malloc'ed copy or NULL */
    size_t                 attrs_len;
    uint8_t                stage1[20];  /* recovered SHA1(password) */
    int                    denied;      /* SLC_SS_DELAY: the verdict */
    int                    with_password;
    slc_timer_t            delay;       /* SLC_SS_DELAY: its end */
    /* users_from (slc_mysql_accounts.h): a login that missed waits in
       SLC_SS_DELAY for a load of the accounts, then is checked again
       with the token kept here (wiped with the session) */
    uint8_t                token[SLC_MYSQL_SCRAMBLE_LEN];
    uint8_t                token_len;
    unsigned               accounts_wait:1;     /* waiting for a load */
    unsigned               accounts_asked:1;    /* once per login */
    uint32_t               accounts_ticket;
    uint64_t               accounts_deadline;   /* loop ms */

    slc_backend_t         *backend;   /* the router's (readconn: only) one */

    /* commands the proxy handles itself (slc_mysql_proxycmd.c) */
    slc_mysql_scan_t       scan;
    size_t                 in_ready;  /* bytes at in->pos free to go on */
    unsigned               held:1;    /* a command to look at is at in->pos */
    unsigned               paused:1;  /* the proxy is answering it */
    unsigned               cu_failures:2;  /* failed COM_CHANGE_USERs */
    unsigned               registered:1;   /* in the registry (by id) */
    struct slc_change_user_s *change_user;  /* one in progress, or NULL */
    void                  *kill;      /* a KILL's side connection */
    uint64_t               last_active;  /* loop time of the last read */
    void                  *router_data;  /* malloc'ed by the router,
                                             freed with the session */
    struct slc_cmd_s      *cmd;       /* command mode, else NULL */
    unsigned               user_gen;  /* +1 at each COM_CHANGE_USER the
                                         proxy applied (on s->backend
                                         only: a router drops its other
                                         backends, which are the old
                                         user's) */

    slc_defer_t            defer;
    TAILQ_ENTRY(slc_session_s) link;
    /* this worker's counters of its server {} (slc_mysql_traffic.h),
       NULL outside a worker; and when its command in flight began (loop
       µs, 0: none timed) */
    struct slc_traffic_s  *traffic;
    uint64_t               started_us;

    /* a reload could not hand it over (slc_mysql_handover.h): it stays
       with this worker, under worker_shutdown_timeout */
    unsigned               no_handover:1;
    /* it came with a reload's handover: what filters learned of it (its
       default database, its variables) stayed with the old worker */
    unsigned               adopted:1;
    /* and the states of its filters that came along, until they open
       (slc_cmd_filters_stash): their length (4 bytes), then them; one
       pointer, so that a session that never moved pays 8 bytes */
    uint8_t               *filter_state;
};

TAILQ_HEAD(slc_session_list, slc_session_s);

/* Worker-wide session bookkeeping. */
typedef struct {
    struct slc_session_list  sessions;
    unsigned                 count;
    int                      closing;    /* close sessions once idle */
    int                      maint;      /* some wait to be closed once
                                            idle: their server is in
                                            maintenance */
} slc_sessions_t;

extern slc_sessions_t  slc_sessions;

/* The handler of every mysql `listen` (slc_listen_t.handler). */
void slc_session_accept(int fd, slc_listen_t *l,
    const struct sockaddr_storage *ss);

/*
 * Queue a packet for the client with the session's next sequence id and
 * try to write it.  SLC_ERROR if it does not fit the output buffer.
 */
int  slc_session_send(slc_session_t *s, const uint8_t *payload, size_t len);
/* ERR to the client, then close once written. */
void slc_session_fail(slc_session_t *s, uint16_t code, const char *state,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The same, logged at `level` (a refusal logged once per burst). */
void slc_session_fail_at(slc_session_t *s, int level, uint16_t code,
    const char *state, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Close once what is queued for the client is written (after an ERR). */
void slc_session_linger(slc_session_t *s);
/* Close now: both sides, logged once with `why` at `level`. */
void slc_session_close(slc_session_t *s, int level, const char *why);
/* Write what is queued to the client; SLC_ERROR if the client is gone. */
int  slc_session_flush(slc_session_t *s);
/* The client is authenticated: it no longer counts toward
   max_handshakes_per_host.  Idempotent; closing does it too. */
void slc_session_handshake_done(slc_session_t *s);
/* Start the idle_timeout clock (authenticated sessions). */
void slc_session_arm_idle(slc_session_t *s);
/*
 * At rest: logged in, between commands, its own backend idle and outside
 * a transaction, nothing buffered either way, no command of the proxy's
 * own under way: where a session may be handed over or closed on
 * shutdown.
 */
int  slc_session_at_rest(const slc_session_t *s);
/* Called by the router when the session became idle (for shutdown). */
void slc_session_idle_check(slc_session_t *s);
/*
 * The mysql module's worker hooks (slc_module_t): the sessions open, and
 * worker_shutdown_timeout passed: close the sessions that are idle now,
 * and from now on each one once it becomes idle.
 */
unsigned slc_sessions_count(void);
void     slc_sessions_close_idle(void);

/*
 * A session handed over by an old worker (slc_mysql_handover.c): what
 * slc_session_accept sets up for a new client, on the connection `fd` of
 * server block `srv`, without a new id, a greeting or a timer; the caller
 * fills in the rest.  NULL when out of memory.
 */
slc_session_t *slc_session_new_adopted(int fd, slc_mysql_srv_t *srv);

/* Log with the session's context: "*ID MSG, client: ..., user: ...,
   backend: ..." (the backend: the session's own, if it has one). */
void slc_session_log(slc_session_t *s, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same, naming the backend server `us` (NULL: none). */
void slc_session_log_server(slc_session_t *s,
    const slc_upstream_server_t *us, int level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * The client's HandshakeResponse41, for auth local and passthrough alike:
 * parse it into *r (pointing into `p`) and copy what outlives it into the
 * session: user, default database, charset and capabilities (less
 * SLC_CAPS_NEVER), and with keep_attrs a malloc'ed copy of the connect
 * attributes (to log in to the backend with them).  SLC_ERROR when it is
 * malformed, asks for TLS, has a field too long or there is no memory:
 * logged here; the caller answers the client.
 */
int  slc_session_handshake_response(slc_session_t *s, const uint8_t *p,
    uint32_t len, int keep_attrs, slc_mysql_hsresp_t *r);

/* Local authentication (auth local): slc_mysql_auth_local.c */
int  slc_auth_local_greet(slc_session_t *s);
void slc_auth_local_read(slc_conn_t *c);

/* The router's start(), once the client is authenticated. */
void slc_session_start_router(slc_session_t *s);
/* The session's backend is ready and the client authenticated: the data
   phase begins, in command mode or the byte pump (the forward hooks'
   go). */
void slc_session_go(slc_session_t *s);

/*
 * How a logged-in session forwards: command mode or the byte pump, both
 * of the cmd floor (src/mysql/cmd/slc_mysql_forward.c).  The session
 * floor calls them only through these hooks, which the mysql module
 * installs in every process before the first session
 * (slc_session_forward_set), so that it names nothing above it.
 */
typedef struct {
    /* logged in (or relayed, or handed over): forward */
    void           (*go)(slc_session_t *s);
    /* the proxy's own command is over: the paused session goes on */
    void           (*resume)(slc_session_t *s);
    /* command mode (s->cmd): the backend whose tracker follows the
       client's released bytes (the pump's is s->backend) */
    slc_backend_t *(*target)(const slc_session_t *s);
    /* command mode: the scan released n client bytes at p */
    void           (*released)(slc_session_t *s, const uint8_t *p,
                       size_t n);
    /* nothing in flight in command mode, no answer being written */
    int            (*at_rest)(const slc_session_t *s);
    /* the session closes (its filters, its router's backends); is freed */
    void           (*close)(slc_session_t *s);
    void           (*free)(slc_session_t *s);
    /* a reload's handover: the filters' state, saved; stashed once the
       session is adopted (SLC_OK, or SLC_ERROR: does not fit) */
    int            (*save)(slc_session_t *s, uint8_t *buf, size_t cap,
                       size_t *len);
    int            (*stash)(slc_session_t *s, const uint8_t *p, size_t len);
} slc_session_forward_t;

void slc_session_forward_set(const slc_session_forward_t *f);
/* The hooks installed (NULL before). */
extern const slc_session_forward_t  *slc_session_fwd;
/*
 * Read what the client sent into s->in (taken on demand, compacted when
 * full of a held command).  SLC_ERROR when the session was closed (the
 * client hung up, no memory).
 */
int  slc_session_client_in(slc_session_t *s);
/* Backend is ready (auth local): send the client its OK and go. */
void slc_session_ready(slc_session_t *s, const uint8_t *ok, size_t ok_len);

/*
 * The client's next packet of an authentication exchange, in sequence:
 * SLC_OK (s->seq moved past it; consume it with slc_packet_consume),
 * SLC_AGAIN, or SLC_ERROR when the session was closed or failed.
 */
int  slc_session_read_auth(slc_session_t *s, uint8_t **p, uint32_t *len);

#endif /* SLC_MYSQL_SESSION_H */
