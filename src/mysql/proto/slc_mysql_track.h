#ifndef SLC_MYSQL_TRACK_H
#define SLC_MYSQL_TRACK_H

#include "slc_core.h"
#include "slc_mysql_gtid.h"
#include "slc_mysql_proto.h"

/*
 * Response tracker: follows the packet framing of both directions of an
 * authenticated session, without copying or buffering the stream, to know
 * where the session stands:
 *   - whether a command is in flight (sent by the client, its response not
 *     yet complete), so a session is "idle" only between responses;
 *   - the server status flags of the last OK/EOF (in transaction,
 *     autocommit), so a graceful shutdown never cuts a transaction.
 *
 * Feed it every byte exactly once, in order, per direction, in chunks of any
 * size (a header or the first bytes of a payload may straddle chunks; the
 * tracker keeps the few bytes it needs).  Packets of 0xffffff bytes continue
 * into the next packet and are one message.  Pipelined commands are counted.
 * Feed client bytes when they go to the server and server bytes before they
 * go to the client, so a command is always seen before its reply.
 *
 * It understands: OK/ERR responses; text and binary result sets with and
 * without CLIENT_DEPRECATE_EOF; multi-result sets (SERVER_MORE_RESULTS_EXISTS);
 * COM_STMT_PREPARE responses (params and columns definitions); commands
 * without a response (COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA, COM_QUIT);
 * LOCAL INFILE (0xfb request, client data ending in an empty packet, then
 * OK/ERR); COM_FIELD_LIST; COM_STATISTICS (one string packet); COM_CHANGE_USER
 * with an auth switch; cursors (SERVER_STATUS_CURSOR_EXISTS after column
 * definitions ends the response) and COM_STMT_FETCH; MariaDB progress
 * reports (ERR with code 0xffff) and CACHE_METADATA.  A command byte the
 * server does not know (or an empty command) gets exactly one ERR
 * (ER_UNKNOWN_COM_ERROR: the server maps it to COM_END, an empty packet to
 * COM_SLEEP), so it is followed like COM_PING.
 *
 * Pipelines of any depth are followed: pending commands are kept as runs of
 * one response kind (1000 pipelined queries are one run), in a ring that
 * starts at SLC_MYSQL_TRACK_RUNS runs, doubles as needed and shrinks back
 * once drained.  Only a client that keeps more than SLC_MYSQL_TRACK_MAXRUNS
 * changes of kind unanswered (64 KiB of runs; no driver or pool does that)
 * exhausts it.
 *
 * "Broken" means: the tracker no longer knows where a response ends, so the
 * session is permanently busy (never idle) and a graceful shutdown or
 * reload leaves it to the old worker until the client leaves (or TERM).
 * What still breaks it: a stream that is not request/response
 * (COM_BINLOG_DUMP and MySQL's GTID dump, clone and replication streams,
 * a negotiated COM_MULTI), the limits below, a peer breaking the protocol
 * (a reply nobody asked for, a client packet out of sequence, a packet that
 * cannot stand where it stands) and the run limit above.  There is no timed
 * fallback on purpose: at the byte level a session waiting for a slow query
 * (SELECT SLEEP(600), a long ALTER) looks exactly like an idle one, both
 * directions quiet at a packet boundary, and cutting it is what graceful
 * shutdown exists to avoid.  Once broken, the client side is still framed,
 * only to notice COM_QUIT.
 *
 * The tracker also records that the client sent COM_QUIT (it sees every
 * command, however the reads split them), so the server hanging up
 * afterwards is a normal end.
 */

#define SLC_MYSQL_TRACK_RUNS     8          /* first ring, in runs */
#define SLC_MYSQL_TRACK_MAXRUNS  16384      /* a power of two */
#define SLC_MYSQL_TRACK_RUNLEN   0xffffffu  /* commands per run at most */
#define SLC_MYSQL_TRACK_HEAD     24   /* OK needs 1 + 9 + 9 + 2 bytes */
#define SLC_MYSQL_TRACK_OKMAX    1024 /* an OK with session state, kept */
#define SLC_SERVER_STATUS_CURSOR_EXISTS 0x0040u
/* MariaDB extended capability (bit 36 of 64, bit 4 of the upper word). */
#define SLC_MARIADB_CLIENT_CACHE_METADATA 0x00000010u
#define SLC_MARIADB_CLIENT_COM_MULTI      0x00000002u
#define SLC_MARIADB_CLIENT_EXTENDED_TYPE_INFO 0x00000008u

/*
 * Known limits, where following would be guesswork, the tracker turns
 * permanently busy instead: CLIENT_COMPRESS (other framing) and MySQL's
 * CLIENT_OPTIONAL_RESULTSET_METADATA in caps.  An ERR leaves the status
 * flags as they were (it carries none).
 */

/* One direction's framing; private to the tracker. */
typedef struct {
    uint8_t     hdr[SLC_MYSQL_HDR_LEN];
    uint32_t    hdr_len;      /* header bytes received (0..4) */
    uint32_t    plen;         /* payload length of the current packet */
    uint32_t    remaining;    /* payload bytes of the current packet left */
    uint8_t     seq;
    uint8_t     continued;    /* current packet continues a 0xffffff one */
    uint8_t     more;         /* current packet is 0xffffff: one follows */
    uint8_t     seen;         /* the message head was classified */
    uint32_t    head_len;
    uint8_t     head[SLC_MYSQL_TRACK_HEAD];  /* first payload bytes */
    uint64_t    done_at;      /* responses done when the message began */
} slc_mysql_frame_t;

/*
 * The response the tracker last saw begin and complete, for the command
 * layer (slc_mysql_cmd.c): after feeding server bytes, `done` has grown
 * by the responses that completed in them.  `first` is the first byte of
 * the response's last result (0x00 OK, 0xff ERR, 0xfe EOF, else a result
 * set's column count), `err` an ERR's code; a PREPARE_OK fills stmt_id,
 * columns and params.  `last` is the first byte of the packet that ended
 * the response (0x00 OK, 0xfe EOF or DEPRECATE_EOF's OK with that header,
 * 0xff ERR, else a definition or a string; an empty packet reads as 0xff,
 * as in `first`).  When that is an OK or an EOF, `status_at` is where its
 * status flags are in its payload (3 in a classic EOF; 0: cut short) and
 * `warnings` its warning count; a PREPARE that its PREPARE_OK or a
 * definition ends has the PREPARE_OK's warnings; both are 0 otherwise.  The status flags are the
 * tracker's `status`: that packet's, when status_at is set.  So nobody
 * above parses the closing packet again.
 */
typedef struct {
    uint64_t    done;         /* responses completed so far */
    uint64_t    errs;         /* of those, ERR responses */
    uint64_t    rows;         /* result set rows seen so far (text and
                                 binary; not a cursor's fetches) */
    uint32_t    stmt_id;
    uint16_t    columns;
    uint16_t    params;
    uint16_t    err;
    uint16_t    warnings;
    uint8_t     first;
    uint8_t     last;
    uint8_t     status_at;
} slc_mysql_reply_t;

/*
 * A server packet's payload, or a piece of one larger than a read, as
 * the client will see it (the header is not in data: plen and seq are
 * its fields), for the observer (slc_mysql_track_observe).  `end`: the
 * piece ends the response and no other is owed (`reply` is then the
 * tracker's summary of it); it is seen before any byte of it goes on.
 */
typedef struct {
    const uint8_t  *data;       /* payload bytes of this piece */
    size_t          len;
    uint32_t        plen;       /* the packet's payload length */
    uint8_t         seq;
    unsigned        first:1;    /* data starts the payload */
    unsigned        last:1;     /* data ends with its last byte */
    unsigned        end:1;      /* and it ends the response */
    const slc_mysql_reply_t *reply;     /* with end: the response's
                                           summary */
} slc_mysql_piece_t;

/* SLC_OK to go on; else the tracker stops reading the bytes it was fed
   (the observer's session ended: they are nobody's). */
typedef int (*slc_mysql_observe_pt)(void *data, const slc_mysql_piece_t *pc);

/* A tracker's causal-reads state (slc_mysql_track_want_gtid). */
typedef struct {
    uint32_t    ok_len;       /* bytes kept of the OK being read */
    uint8_t     ok_on;        /* the packet being read is such an OK */
    uint8_t     row;          /* ... or the row a GTID query returned */
    uint8_t     row_want;     /* the next response answers such a query */
    uint8_t     hide;         /* last_gtid is taken out of the OKs the
                                 client sees (slc_mysql_track_server_edit) */
    uint64_t    gtids;
    uint64_t    gtid_lost;
    slc_gtid_t  gtid;
    uint8_t     ok[SLC_MYSQL_TRACK_OKMAX];
} slc_mysql_track_gtid_t;

typedef struct {
    slc_mysql_frame_t  cli;
    slc_mysql_frame_t  srv;

    uint32_t    caps;         /* negotiated capabilities (DEPRECATE_EOF) */
    uint32_t    mariadb_caps; /* negotiated MariaDB extended capabilities */
    uint16_t    status;       /* last server status flags */
    int         broken;       /* cannot follow any more: never idle */
    int         quit;         /* the client sent COM_QUIT */

    /* commands awaiting replies, oldest first: a ring of runs, each the
       pending entry in bits 0-7 and the number of commands - 1 above;
       malloc'ed (NULL until the first command), see slc_mysql_track_free */
    uint32_t   *runs;
    uint32_t    rcap;         /* runs the ring holds, a power of two */
    uint32_t    rfirst;
    uint32_t    nruns;
    uint64_t    npend;        /* commands in all runs */

    /* state of the response to the oldest pending command */
    int         rstate;
    uint64_t    count;        /* definitions left in the current phase */
    uint64_t    count2;       /* for prepare: columns after params */
    int         infile;       /* client is sending LOCAL INFILE data */
    slc_mysql_reply_t  reply;

    /*
     * Causal reads (slc_mysql_track_want_gtid): an OK that carries
     * session state (SERVER_SESSION_STATE_CHANGED) is kept whole, up to
     * SLC_MYSQL_TRACK_OKMAX bytes, and its last_gtid read when it ends.
     * `gtids` counts the values seen, the last in `gtid`; `gtid_lost`
     * the OKs with session state that could not be read (too long,
     * malformed): a GTID may have gone by unseen.  Allocated only when
     * wanted: a readconn backend carries one pointer.
     */
    slc_mysql_track_gtid_t *g;  /* NULL: not wanted */

    /* the server packets' observer (slc_mysql_track_observe) */
    slc_mysql_observe_pt  observe;
    void                 *observe_data;
    /* each command the client sends, by its first byte (NULL: none);
       kept when the tracker is initialised again */
    void                (*on_command)(void *data, uint8_t com);
    void                 *command_data;
    int                   observe_held; /* the packet's payload so far
                                           was held back, not seen */
} slc_mysql_track_t;

/* t must be zeroed before its first initialisation (sessions are
   calloc'ed); initialising it again (after COM_CHANGE_USER) releases what
   it held.  slc_mysql_track_free() when done with it. */
void slc_mysql_track_init(slc_mysql_track_t *t, uint32_t caps,
    uint16_t status);
/* Releases what the tracker allocated; never idle after, until initialised
   again.  Safe to call twice. */
void slc_mysql_track_free(slc_mysql_track_t *t);
/* Whether the server answers command byte cmd (all but COM_QUIT,
   COM_STMT_CLOSE and COM_STMT_SEND_LONG_DATA). */
int  slc_mysql_track_answered(uint8_t cmd);
/* The upper 32 bits of MariaDB's capabilities, as negotiated (0 with MySQL:
   only CACHE_METADATA changes what the tracker expects). */
void slc_mysql_track_set_mariadb_caps(slc_mysql_track_t *t, uint32_t caps);
/* Bytes the client sent to the server.  SLC_ERROR on a protocol violation
   the proxy should not forward (currently none: returns SLC_OK). */
int  slc_mysql_track_client(slc_mysql_track_t *t, const uint8_t *p,
    size_t len);
/* Bytes the server sent to the client. */
int  slc_mysql_track_server(slc_mysql_track_t *t, const uint8_t *p,
    size_t len);

/*
 * As slc_mysql_track_server, for the bytes p[0..len) the caller is about
 * to send its client, which it lets the tracker change: with `hide` on
 * (slc_mysql_track_hide_gtid), an OK whose last_gtid the tracker read is
 * rewritten in place without it (slc_mysql_okstate_hide_gtid), the bytes
 * after it moving down.  Returns by how many bytes the data ending at
 * p + len shrank: the new end is p + len - that, which may lie before p
 * when the OK began in bytes held earlier.  *hold: how many bytes at
 * the end belong to a packet that may still be rewritten (its head not
 * read yet, or such an OK not complete); the caller sends them only once
 * a later call completed it, and keeps them directly before the bytes it
 * passes next (they may extend before p: what earlier calls held).
 */
size_t slc_mysql_track_server_edit(slc_mysql_track_t *t, uint8_t *p,
    size_t len, size_t *hold);
/*
 * The server's packets, framed once: as it follows the bytes it is fed
 * (slc_mysql_track_server, _server_edit), the tracker shows fn each
 * piece of a packet's payload in order, as the client will see it: a
 * packet held back (_server_edit's *hold) once it is released, an OK
 * rewritten once rewritten, whole.  fn NULL: none.  A broken tracker
 * shows nothing more.
 */
void slc_mysql_track_observe(slc_mysql_track_t *t, slc_mysql_observe_pt fn,
    void *data);
/* Hide last_gtid from the client (on) or not; after want_gtid. */
static inline void
slc_mysql_track_hide_gtid(slc_mysql_track_t *t, int on)
{
    if (t->g != NULL) {
        t->g->hide = (uint8_t) (on != 0);
    }
}
static inline int
slc_mysql_track_hiding(const slc_mysql_track_t *t)
{
    return t->g != NULL && t->g->hide;
}

/* Read last_gtid from OKs from now on (the connection negotiated
   CLIENT_SESSION_TRACK); SLC_ERROR: no memory.  Initialising the tracker
   again stops it. */
int  slc_mysql_track_want_gtid(slc_mysql_track_t *t);
/*
 * The next response to complete answers a query of the proxy's whose
 * single row holds a GTID in its single column (SELECT @@last_gtid, for
 * a client without CLIENT_SESSION_TRACK): it counts as a GTID seen; an
 * empty value as nothing; anything else (an ERR, no row, not a GTID) as
 * lost.  After slc_mysql_track_want_gtid, with nothing in flight.
 */
void slc_mysql_track_want_row_gtid(slc_mysql_track_t *t);
/* A text row's single value as a GTID: 1 and *g, 0 when it is empty,
   -1 otherwise. */
int  slc_mysql_row_gtid(const uint8_t *p, size_t len, slc_gtid_t *g);
/*
 * The last_gtid of an OK payload's session state (SESSION_TRACK_SYSTEM_
 * VARIABLES entries), on a connection with CLIENT_SESSION_TRACK: 1 and
 * *g, 0 when it has none, -1 when the packet is malformed or its value
 * is not a GTID.
 */
int  slc_mysql_ok_last_gtid(const uint8_t *p, size_t len, slc_gtid_t *g);

/* No command in flight and both directions at a packet boundary. */
int  slc_mysql_track_idle(const slc_mysql_track_t *t);
/* The client sent COM_QUIT: the server closing is a normal end. */
static inline int
slc_mysql_track_quit_sent(const slc_mysql_track_t *t)
{
    return t->quit;
}

static inline int
slc_mysql_track_in_trans(const slc_mysql_track_t *t)
{
    return (t->status & SLC_SERVER_STATUS_IN_TRANS) != 0;
}

/* Causal reads: GTIDs seen, OKs with session state that could not be
   read, and the last GTID (valid when gtids > 0); 0 when not wanted. */
static inline uint64_t
slc_mysql_track_gtids(const slc_mysql_track_t *t)
{
    return t->g != NULL ? t->g->gtids : 0;
}

static inline uint64_t
slc_mysql_track_gtid_lost(const slc_mysql_track_t *t)
{
    return t->g != NULL ? t->g->gtid_lost : 0;
}

#endif /* SLC_MYSQL_TRACK_H */
