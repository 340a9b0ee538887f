#ifndef SLC_MYSQL_HANDOVER_H
#define SLC_MYSQL_HANDOVER_H

#include "slc_core.h"
#include "slc_mysql_session.h"

/*
 * Handing sessions over on reload (docs/architecture.md, "Reload").  An
 * old worker told to quit for a reload sends each session that is at rest
 * (between commands, outside a transaction, nothing buffered or pending)
 * to the new worker of its slot through the core's channel
 * (slc_channel.h): the client and backend sockets, and this message with
 * what the new worker needs to go on.  Whatever the client sends meanwhile
 * waits in the kernel's socket buffer for the new worker: the old one read
 * nothing of it, so no byte is lost or reordered.
 *
 * The message: a fixed layout (magic, version, size) then the connect
 * attributes, then the router's own state (its `save` hook).  Both ends
 * run the same binary (a reload does not exec), so the layout is the
 * struct's; the magic and version still guard it.  It
 * holds stage1 (SHA1(password), auth local): every buffer it passes
 * through is wiped.
 */

#define SLC_HANDOVER_MAGIC    0x534c484fu      /* "SLHO" */
#define SLC_HANDOVER_VERSION  4
#define SLC_HANDOVER_KEY      160             /* slc_server_stats_t.key */
/* a router's backends besides the session's own: the channel carries
   SLC_CHANNEL_MAX_FDS descriptors, the client's and the own backend's
   first */
#define SLC_HANDOVER_EXTRA    2

/* A backend connection, logged in and idle. */
typedef struct {
    uint16_t   status;
    uint32_t   caps;
    uint32_t   mariadb_caps;
    uint32_t   thread_id;
    uint8_t    scramble[SLC_MYSQL_SCRAMBLE_LEN];
    /* its response tracker (idle: only what outlives a command) */
    uint32_t   track_caps;
    uint32_t   track_mariadb_caps;
    uint16_t   track_status;
    uint8_t    tag;                        /* the router's (extra ones) */
    uint8_t    mysql;                      /* slc_backend_t.mysql */
    char       server[SLC_HANDOVER_KEY];   /* "upstream/address" */
} slc_handover_backend_t;

typedef struct {
    uint32_t   magic;
    uint32_t   version;
    uint32_t   size;            /* of the whole message */
    uint32_t   attrs_len;       /* connect attributes after this struct */
    uint32_t   router_len;      /* then the router's state (save) */
    uint64_t   id;              /* the client saw it: it stays */
    uint32_t   proc;            /* the sender's process index (the log) */
    int32_t    auth;            /* SLC_AUTH_* it logged in with */

    /* the client's side */
    uint32_t   caps;
    uint32_t   mariadb_caps;
    uint32_t   max_packet;
    uint16_t   charset;         /* a collation id */
    uint8_t    has_db;
    uint8_t    with_password;
    uint8_t    cu_failures;
    uint8_t    scramble[SLC_MYSQL_SCRAMBLE_LEN];   /* COM_CHANGE_USER */
    uint8_t    stage1[20];                         /* auth local */
    char       user[SLC_MAX_USER + 1];
    char       db[SLC_MAX_DB + 1];
    char       peer[64];
    char       host[48];

    slc_handover_backend_t  own;        /* s->backend */
    uint32_t                nextra;     /* the router's others */
    slc_handover_backend_t  extra[SLC_HANDOVER_EXTRA];
} slc_handover_msg_t;

/*
 * Encode session s (with its backend, the `n` extra backends b[] of its
 * router, tagged by tags[], and its router's state rstate[0..rlen)) into
 * buf: the message's size, or 0 when it
 * does not fit in `cap`.  Decode checks what arrived: SLC_OK with
 * *m filled and *attrs pointing into p (the router's state follows the
 * attributes), or SLC_ERROR with *err.
 */
size_t slc_mysql_handover_encode(const slc_session_t *s,
    slc_backend_t *const *b, const uint8_t *tags, unsigned n,
    const uint8_t *rstate, size_t rlen, unsigned proc, uint8_t *buf,
    size_t cap);
int    slc_mysql_handover_decode(const uint8_t *p, size_t len,
    slc_handover_msg_t *m, const uint8_t **attrs, const char **err);

/* Whether this worker hands its sessions over (it quits for a reload). */
int    slc_mysql_handover_active(void);
/*
 * Hand over session s, at rest.  SLC_OK: sent, and closed here (its
 * sockets live on in the new worker); SLC_AGAIN: the channel is full, it
 * is tried again shortly; SLC_ERROR: it cannot be (logged), and stays.
 */
int    slc_mysql_handover_session(slc_session_t *s);

/* The mysql module's hooks (slc_module_t): quitting for a reload, and a
   session arriving from an old worker. */
void   slc_mysql_handover_start(void);
void   slc_mysql_handover_recv(int *fds, unsigned nfds, const uint8_t *msg,
    size_t len);

#endif /* SLC_MYSQL_HANDOVER_H */
