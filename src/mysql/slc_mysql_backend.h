#ifndef SLC_MYSQL_BACKEND_H
#define SLC_MYSQL_BACKEND_H

#include "slc_core.h"
#include "slc_mysql_session.h"

/*
 * A backend connection of a session: non-blocking connect, greeting,
 * authentication as the session's user (auth local) or relaying of the
 * client's own authentication (auth passthrough).  When it is done the
 * backend calls the session back: slc_session_ready() for auth local, or
 * it hands the session to the router's forwarding for passthrough.  Any
 * failure is reported to the client as an ERR and closes the session.
 */

/*
 * A backend of a session that is not the session's own (s->backend): the
 * proxy's side connection for a command it serves itself (a KILL through
 * another server).  It logs in as the session's user like the session's
 * own would; then it, not the session, hears how that ended.
 */
typedef struct {
    void  (*ready)(slc_backend_t *b);
    /* why: what failed; the backend is still open, the callee closes it.
       In command mode also when it fails or speaks unasked later: the
       router decides what the client is told (a command waiting for it
       gets ERR 1429, one in flight on it ERR 1927, unless the callee
       answered) */
    void  (*fail)(slc_backend_t *b, const char *why);
    /* command mode: the response to a command sent on it is complete */
    void  (*done)(slc_backend_t *b, const slc_mysql_reply_t *r);
    /*
     * Command mode, optional: b failed (or answered "killed" or "shutting
     * down") with a command of the client's in flight or waiting on it
     * and nothing of the response sent yet.  The router may give another
     * backend of the session's, logged in and idle, and the whole command
     * (first byte: the COM_*) to run there instead; the client then never
     * hears of b's failure.  NULL: the client gets the ERR.  fail follows.
     */
    slc_backend_t *(*retry)(slc_backend_t *b, const uint8_t **payload,
                            size_t *len);
} slc_backend_ops_t;

typedef enum {
    SLC_BS_CONNECTING,
    SLC_BS_GREETING,
    SLC_BS_AUTH,
    SLC_BS_RELAY,
    SLC_BS_READY
} slc_backend_state_t;

struct slc_backend_s {
    slc_conn_t              conn;
    slc_backend_state_t     state;
    slc_session_t          *session;
    slc_upstream_server_t  *server;
    slc_buf_t              *in;       /* from the backend */
    slc_buf_t              *out;      /* to the backend */
    slc_timer_t             timer;
    uint8_t                 seq;
    uint32_t                caps;     /* negotiated with the backend */
    uint32_t                mariadb_caps;
    uint16_t                status;
    uint8_t                 mysql;    /* the server is MySQL, not MariaDB
                                         (its greeting's version) */
    uint32_t                thread_id;  /* the server's id for it */
    uint8_t                 scramble[SLC_MYSQL_SCRAMBLE_LEN];  /* the last
                                         the server sent: COM_CHANGE_USER
                                         answers it */
    int                     counted;  /* holds a slot in stats->active */
    int                     handshaking;  /* and one in stats->handshakes */
    /* follows the commands and responses on this connection once it is
       logged in (slc_backend_track_start) */
    slc_mysql_track_t       track;
    uint32_t                held;     /* bytes at the end of `in` the
                                         tracker may still rewrite
                                         (slc_mysql_track_server_edit):
                                         not sent to the client yet */
    const slc_backend_ops_t *ops;     /* NULL: the session's own */
    void                   *data;     /* the ops' own */
    slc_defer_t             defer;
};

/*
 * Open a connection to `us` for the session; the caller has acquired a
 * connection slot on it (slc_upstream_pick), which the backend now owns.
 */
int  slc_backend_open(slc_session_t *s, slc_upstream_server_t *us);
void slc_backend_close(slc_backend_t *b);
/*
 * A side connection to `us` as the session's user (auth local): takes a
 * connection slot itself (NULL with *full set when max_connections is
 * reached), and reports through `ops`.  NULL also when it failed at once
 * (ops->fail was not called).
 */
slc_backend_t *slc_backend_open_aux(slc_session_t *s,
    slc_upstream_server_t *us, const slc_backend_ops_t *ops, void *data,
    int *full);
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

/*
 * auth passthrough (slc_mysql_passthrough.c): relay the server's greeting
 * (patched in place: TLS and compression cleared, the session's id as the
 * thread id) to the client, then the exchange both ways until the server's
 * OK or ERR.  relay_start runs on every read of the backend meanwhile.
 */
void slc_backend_relay_greeting(slc_backend_t *b, uint8_t *p, uint32_t len);
void slc_backend_relay_start(slc_backend_t *b);

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
