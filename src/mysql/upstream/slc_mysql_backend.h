#ifndef SLC_MYSQL_BACKEND_H
#define SLC_MYSQL_BACKEND_H

#include "slc_core.h"
#include "slc_buf.h"
#include "slc_event.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_conf.h"
#include "slc_mysql_track.h"
#include "slc_packet.h"

typedef struct slc_backend_s  slc_backend_t;

/*
 * A backend connection of a session: non-blocking connect, greeting, and
 * login as the session's user (auth local), or the greeting handed to
 * whoever relays the client's own authentication (auth passthrough).
 * The backend reports everything through its ops (mandatory): who opened
 * it decides what the client hears and logs it; the backend logs nothing
 * and calls nothing above it.  Once logged in, the layer that drives it
 * (the command layer, or a router in byte mode) takes its connection's
 * handlers and swaps its ops for its own.
 */

/*
 * Why a backend failed.  `why` is always set: for the log, and for a
 * message to the client; the server's own ERR, when it sent one, is in
 * err (its payload): to the connection (a greeting) or, with `login`, to
 * the login.
 */
typedef struct {
    const char     *why;
    unsigned        down:1;       /* its server was marked down for it */
    unsigned        login:1;      /* err answers the login */
    const uint8_t  *err;          /* the server's ERR payload, or NULL */
    uint32_t        err_len;
    const char     *plugin;       /* an authentication plugin it asked for
                                     that sluice cannot answer, or NULL */
    size_t          plugin_len;
} slc_backend_fail_t;

/*
 * Who a backend logs in as (auth local): what the login's handshake
 * response carries, and the credential derived from the password.  The
 * pointers are the giver's, valid for the call that asked for it.
 */
typedef struct {
    const char     *user;
    const char     *db;           /* NULL: none */
    uint16_t        charset;      /* collation id; over 255 (the
                                     login's field is one byte) the
                                     login carries a stand-in and b
                                     sets it with SET collation_connection
                                     before ready: its OK is b's own, an
                                     ERR fails b (not marked down) */
    uint32_t        caps;         /* the client's capabilities */
    uint32_t        mariadb_caps;
    uint32_t        max_packet;   /* 0: 16 MiB */
    const uint8_t  *attrs;        /* connect attributes, or NULL */
    size_t          attrs_len;
    const uint8_t  *stage1;       /* SHA1(password), 20 bytes */
    unsigned        empty_password:1;   /* its token is empty */
} slc_backend_ident_t;

typedef struct slc_backend_ops_s  slc_backend_ops_t;

struct slc_backend_ops_s {
    /*
     * Optional: the server greeted (b->thread_id and b->scramble are its);
     * p is the greeting.  Return 1 when the callee takes the exchange over
     * (passthrough relays it: b->state is then SLC_BS_RELAY and `relay`
     * hears every read of b), 0 for b to log in from its session's
     * identity.
     */
    int   (*greeting)(slc_backend_t *b, uint8_t *p, uint32_t len);
    void  (*relay)(slc_backend_t *b);
    /* Who b logs in as (asked when the server greets, and again if it
       switches the authentication plugin); required unless greeting
       takes every exchange over.  The callee wipes what it gave once b
       is done with it: b copies nothing of it. */
    void  (*identity)(slc_backend_t *b, slc_backend_ident_t *id);
    /* Logged in: the server's last OK, still in b->in (nothing may read
       b from here: `go` follows once it is consumed): the login's, or
       that of the SET that set a collation over 255 (ident's charset). */
    void  (*ready)(slc_backend_t *b, const uint8_t *ok, size_t len);
    /* Optional: after ready, the OK consumed: traffic may start. */
    void  (*go)(slc_backend_t *b);
    /* Optional: b closes; whether it says COM_QUIT first (the client
       ended with one on the session's own backend, and b is another of
       the session's: its server then counts a clean end too). */
    int   (*quits)(const slc_backend_t *b);
    /* b failed (f, valid for the call only); it is still open: the callee
       closes it, or has its owner close it. */
    void  (*fail)(slc_backend_t *b, const slc_backend_fail_t *f);
    /*
     * A router's table, optional: b failed (or answered "killed" or
     * "shutting down") with a command of the client's in flight or
     * waiting on it and nothing of the response sent yet.  The router
     * may give another backend of the session's, logged in and idle, and
     * the whole command (first byte: the COM_*) to run there instead; the
     * client then never hears of b's failure.  NULL: the client gets the
     * ERR.  fail follows.
     */
    slc_backend_t *(*retry)(slc_backend_t *b, const uint8_t **payload,
                            size_t *len);
};

typedef enum {
    SLC_BS_CONNECTING,
    SLC_BS_GREETING,
    SLC_BS_AUTH,
    SLC_BS_COLLATION,       /* logged in, its SET collation_connection
                               not answered yet (ident's charset) */
    SLC_BS_RELAY,
    SLC_BS_READY
} slc_backend_state_t;

#define SLC_BACKEND_MAGIC  0xbac4e11d

struct slc_backend_s {
    slc_conn_t              conn;
    slc_backend_state_t     state;
    uint32_t                magic;    /* SLC_BACKEND_MAGIC */
    slc_session_t          *session;
    slc_upstream_server_t  *server;
    uint8_t                 role;     /* the server's when it was opened
                                         (SLC_ROLE_*): the route of what
                                         it answers, in the metrics */
    slc_buf_t              *in;       /* from the backend */
    slc_buf_t              *out;      /* to the backend */
    slc_timer_t             timer;
    uint8_t                 seq;
    uint32_t                caps;     /* negotiated with the backend */
    uint32_t                mariadb_caps;
    uint16_t                status;
    uint16_t                collation;  /* to set once logged in (over
                                           255: the login carried a
                                           stand-in); 0: none */
    uint8_t                 mysql;    /* the server is MySQL, not MariaDB
                                         (its greeting's version) */
    uint32_t                thread_id;  /* the server's id for it */
    uint8_t                 scramble[SLC_MYSQL_SCRAMBLE_LEN];  /* the last
                                         the server sent: COM_CHANGE_USER
                                         answers it */
    unsigned                counted:1;      /* holds a slot in
                                               stats->active */
    unsigned                handshaking:1;  /* and one in
                                               stats->handshakes */
    unsigned                failed:1;       /* reported: on its way out */
    uint32_t                held;     /* bytes at the end of `in` the
                                         tracker may still rewrite
                                         (slc_mysql_track_server_edit):
                                         not sent to the client yet */
    /* follows the commands and responses on this connection once it is
       logged in (slc_backend_track_start) */
    slc_mysql_track_t       track;
    const slc_backend_ops_t *ops;     /* who drives it: never NULL */
    const slc_backend_ops_t *owner;   /* command mode: the router's, whose
                                         backend it is (NULL: the
                                         session's own) */
    void                   *data;     /* the owner's (or ops') own */
    slc_defer_t             defer;
};

/*
 * Open a connection to `us` for the session s (b->session: the backend
 * never looks into it), reporting through `ops` (data: theirs); it must
 * greet within connect_timeout ms.  The caller took a connection slot on `us`
 * (slc_upstream_pick or _acquire), which the backend now owns.  NULL when
 * it failed at once: *f says why (its server marked down if f->down),
 * the slot is given back, and ops were not called.
 */
slc_backend_t *slc_backend_open(slc_session_t *s, slc_upstream_server_t *us,
    const slc_backend_ops_t *ops, void *data, uint64_t connect_timeout,
    slc_backend_fail_t *f);
void slc_backend_close(slc_backend_t *b);
/* Logged in, idle, outside a transaction, no COM_QUIT sent, nothing
   buffered either way. */
int  slc_backend_at_rest(const slc_backend_t *b);
/*
 * What went wrong, for a log line naming the server: "failed: WHY",
 * "refused the connection: CODE MESSAGE", "refused the login: ...".
 */
void slc_backend_fail_text(const slc_backend_fail_t *f, char *buf,
    size_t len);
/*
 * Start following the connection's traffic from the server's OK that ended
 * a login or COM_CHANGE_USER, with the capabilities the connection
 * negotiated (the OK's status flags; 0 if it has none).
 */
void slc_backend_track_start(slc_backend_t *b, uint32_t caps,
    uint32_t mariadb_caps, const uint8_t *ok, size_t len);
/* Queue a packet (sequence id b->seq, then incremented) and write it. */
int  slc_backend_send(slc_backend_t *b, const uint8_t *payload, size_t len);
/* The client is authenticated: give back the max_handshakes slot. */
void slc_backend_handshake_done(slc_backend_t *b);

/* Greeting the worker learned from a backend, mirrored to clients. */
typedef struct {
    int       known;
    char      version[64];
    uint32_t  caps;
    uint32_t  mariadb_caps;
    uint8_t   charset;
} slc_backend_profile_t;

extern slc_backend_profile_t  slc_backend_profile;

#endif /* SLC_MYSQL_BACKEND_H */
