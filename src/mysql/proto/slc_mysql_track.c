/*
 * Response tracker (contract in slc_mysql_track.h).
 *
 * Each direction is framed on its own: a 4-byte header, then the first
 * payload bytes kept in the frame's head, then the rest of the payload
 * skipped by arithmetic, so a chunk in the middle of a large packet costs
 * O(1).  Once the head of the first packet of a message is complete (the
 * whole payload, or SLC_MYSQL_TRACK_HEAD bytes), the message is classified:
 * on the client side as a command, on the server side as the next step of
 * the response to the oldest pending command.  Packets that continue a
 * 0xffffff one are never classified.
 *
 * What a server packet is depends only on where it stands in the response,
 * never on its first byte alone: a text row may start with 0x00 (empty
 * string), 0xfb (NULL) or 0xfe (a string of 16 MiB or more), a binary row
 * always starts with 0x00.
 */

#include "slc_core.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_okstate.h"
#include "slc_mysql_track.h"

#define SLC_MYSQL_LOCAL_INFILE      0xfb

/* COM_STMT_EXECUTE flags byte: read only, for update, scrollable. */
#define SLC_TRACK_CURSOR_TYPES      0x07

/* What a command's response looks like; a pending entry is one of these,
   with SLC_TRACK_CURSOR added when an execute asked for a cursor. */
enum {
    SLC_TRACK_NONE = 0,       /* no response at all */
    SLC_TRACK_SIMPLE,         /* one OK, EOF or ERR */
    SLC_TRACK_STATS,          /* one string packet */
    SLC_TRACK_QUERY,          /* OK, ERR, LOCAL INFILE or text results */
    SLC_TRACK_EXEC,           /* OK, ERR or binary results */
    SLC_TRACK_FETCH,          /* binary rows, then a terminator */
    SLC_TRACK_PREPARE,        /* PREPARE_OK and definitions, or ERR */
    SLC_TRACK_FIELD_LIST,     /* column definitions, then a terminator */
    SLC_TRACK_CHANGE_USER,    /* auth exchange ending in OK or ERR */
    SLC_TRACK_UNKNOWN         /* cannot be followed */
};
#define SLC_TRACK_KIND_MASK   0x0f
#define SLC_TRACK_CURSOR      0x80

/*
 * Where the response to the oldest pending command stands.  Each "_EOF"
 * state directly follows its definitions state: without DEPRECATE_EOF the
 * definitions end with an EOF packet, and slc_mysql_track_defs_end() only
 * adds one.
 */
enum {
    SLC_TRACK_FIRST = 0,      /* first packet of a response or result */
    SLC_TRACK_COLS,           /* column definitions of a result set */
    SLC_TRACK_COLS_EOF,
    SLC_TRACK_PARAMS,         /* prepare: parameter definitions */
    SLC_TRACK_PARAMS_EOF,
    SLC_TRACK_PCOLS,          /* prepare: column definitions */
    SLC_TRACK_PCOLS_EOF,
    SLC_TRACK_ROWS,           /* rows until a terminator */
    SLC_TRACK_FIELDS          /* COM_FIELD_LIST definitions */
};

typedef void (*slc_mysql_track_msg_pt)(slc_mysql_track_t *t,
    const slc_mysql_frame_t *f);


/* --- small decoders ---------------------------------------------------- */

/* First payload byte of a message, -1 for an empty one. */
static int
slc_mysql_track_byte(const slc_mysql_frame_t *f)
{
    return f->head_len > 0 ? f->head[0] : -1;
}

/* A real ERR, not a MariaDB progress report (which never ends anything). */
static int
slc_mysql_track_is_progress(const slc_mysql_frame_t *f)
{
    return f->head_len >= 3 && f->head[0] == SLC_MYSQL_ERR
           && slc_mysql_le_get(f->head + 1, 2) == SLC_MYSQL_ERR_PROGRESS;
}

/* Status flags of an OK packet (0x00 or 0xfe header), -1 if cut short. */
static int
slc_mysql_track_ok_status(const slc_mysql_frame_t *f)
{
    return slc_mysql_ok_status(f->head, f->head_len);
}

/*
 * A 0xfe packet that ends something is, under DEPRECATE_EOF, an OK with
 * that header (7 bytes at least); a shorter one can only be a classic
 * EOF: 0xfe, warnings, status.
 */
static int
slc_mysql_track_eof_is_ok(const slc_mysql_track_t *t,
    const slc_mysql_frame_t *f)
{
    return (t->caps & SLC_CLIENT_DEPRECATE_EOF) && f->plen >= 7;
}

/* Status flags of a 0xfe packet that ends something. */
static int
slc_mysql_track_term_status(const slc_mysql_track_t *t,
    const slc_mysql_frame_t *f)
{
    if (slc_mysql_track_eof_is_ok(t, f)) {
        return slc_mysql_track_ok_status(f);
    }
    return f->head_len >= 5 ? (int) slc_mysql_le_get(f->head + 3, 2) : -1;
}

/*
 * Is this 0xfe packet in a row position a terminator?  A text row starting
 * with 0xfe holds a string of 2^24 bytes or more, so its first packet is a
 * full 0xffffff one; a classic EOF is shorter than 9 bytes.
 */
static int
slc_mysql_track_is_term(const slc_mysql_track_t *t,
    const slc_mysql_frame_t *f)
{
    if (f->plen < 9) {
        return 1;
    }
    return (t->caps & SLC_CLIENT_DEPRECATE_EOF)
           && f->plen < SLC_MYSQL_MAX_PAYLOAD;
}

/* Remember the flags if the packet carried them; returns them as given. */
static int
slc_mysql_track_set_status(slc_mysql_track_t *t, int status)
{
    if (status >= 0) {
        t->status = (uint16_t) status;
    }
    return status;
}


/* --- pending commands -------------------------------------------------- */

#define SLC_TRACK_RUN_ENTRY(r)  ((uint8_t) ((r) & 0xff))
#define SLC_TRACK_RUN_LEN(r)    (((r) >> 8) + 1)

/* The pending entry of the oldest command (kind and cursor flag). */
static uint8_t
slc_mysql_track_entry(const slc_mysql_track_t *t)
{
    return SLC_TRACK_RUN_ENTRY(t->runs[t->rfirst]);
}

static unsigned
slc_mysql_track_kind(const slc_mysql_track_t *t)
{
    return slc_mysql_track_entry(t) & SLC_TRACK_KIND_MASK;
}

/* Room for one more run: the ring doubles, unwrapped into the new one. */
static int
slc_mysql_track_grow(slc_mysql_track_t *t)
{
    uint32_t  cap = t->rcap ? t->rcap * 2 : SLC_MYSQL_TRACK_RUNS;
    uint32_t *r, i;

    if (cap > SLC_MYSQL_TRACK_MAXRUNS
        || (r = reallocarray(NULL, cap, sizeof(*r))) == NULL)
    {
        return SLC_ERROR;
    }
    for (i = 0; i < t->nruns; i++) {
        r[i] = t->runs[(t->rfirst + i) & (t->rcap - 1)];
    }
    free(t->runs);
    t->runs = r;
    t->rcap = cap;
    t->rfirst = 0;
    return SLC_OK;
}

static void
slc_mysql_track_push(slc_mysql_track_t *t, uint8_t entry)
{
    uint32_t  *last;

    if (t->nruns > 0) {
        last = &t->runs[(t->rfirst + t->nruns - 1) & (t->rcap - 1)];
        if (SLC_TRACK_RUN_ENTRY(*last) == entry
            && SLC_TRACK_RUN_LEN(*last) < SLC_MYSQL_TRACK_RUNLEN)
        {
            *last += 1u << 8;
            t->npend++;
            return;
        }
    }
    if (t->nruns == t->rcap && slc_mysql_track_grow(t) != SLC_OK) {
        t->broken = 1;
        return;
    }
    t->runs[(t->rfirst + t->nruns) & (t->rcap - 1)] = entry;
    t->nruns++;
    t->npend++;
}

/*
 * What ended the response (slc_mysql_reply_t), f its last packet: once
 * per response, so that no layer above reads the packet again.  A classic
 * EOF has warnings, then flags; an OK's flags follow its affected rows
 * and id, then its warnings.  A PREPARE's warnings are its PREPARE_OK's
 * (slc_mysql_track_note), unless an EOF ends it.
 */
static void
slc_mysql_track_ended(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    int     b = slc_mysql_track_byte(f);
    size_t  at = 0;

    t->reply.last = (uint8_t) b;
    if (b == SLC_MYSQL_EOF && !slc_mysql_track_eof_is_ok(t, f)) {
        t->reply.status_at = f->head_len >= 5 ? 3 : 0;
        t->reply.warnings = f->head_len >= 5
                            ? (uint16_t) slc_mysql_le_get(f->head + 1, 2) : 0;
        return;
    }
    if (b != SLC_MYSQL_ERR && slc_mysql_track_kind(t) == SLC_TRACK_PREPARE) {
        t->reply.status_at = 0;         /* a PREPARE_OK, a definition */
        return;
    }
    if (b == SLC_MYSQL_OK || b == SLC_MYSQL_EOF) {
        at = slc_mysql_ok_status_at(f->head, f->head_len);
    }
    t->reply.status_at = (uint8_t) at;
    t->reply.warnings = at != 0 && at + 4 <= f->head_len
                        ? (uint16_t) slc_mysql_le_get(f->head + at + 2, 2)
                        : 0;
}

/* The response to the oldest pending command is complete, f its last
   packet.  A ring that a deep pipeline grew is given back once drained. */
static void
slc_mysql_track_done(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    uint32_t  *first = &t->runs[t->rfirst];

    slc_mysql_track_ended(t, f);

    if (SLC_TRACK_RUN_LEN(*first) > 1) {
        *first -= 1u << 8;
    } else {
        t->rfirst = (t->rfirst + 1) & (t->rcap - 1);
        t->nruns--;
    }
    t->npend--;
    t->reply.done++;
    if (t->g != NULL && t->g->row_want) {
        t->g->row_want = 0;             /* no row with a GTID came */
        t->g->gtid_lost++;
    }
    t->reply.errs += t->reply.first == SLC_MYSQL_ERR;
    if (t->nruns == 0 && t->rcap > SLC_MYSQL_TRACK_RUNS) {
        free(t->runs);
        t->runs = NULL;
        t->rcap = 0;
    }
    t->rfirst = t->nruns == 0 ? 0 : t->rfirst;
    t->rstate = SLC_TRACK_FIRST;
    t->count = 0;
    t->count2 = 0;
}

/* A result ended with f, of these flags: another one follows, or the
   response is complete. */
static void
slc_mysql_track_end_result(slc_mysql_track_t *t, const slc_mysql_frame_t *f,
    int status)
{
    unsigned  kind = slc_mysql_track_kind(t);

    if (status >= 0 && (status & SLC_SERVER_MORE_RESULTS_EXISTS)
        && (kind == SLC_TRACK_QUERY || kind == SLC_TRACK_EXEC))
    {
        t->rstate = SLC_TRACK_FIRST;
        return;
    }
    slc_mysql_track_done(t, f);
}


/* --- client side ------------------------------------------------------- */

/* MySQL's COM_BINLOG_DUMP_GTID, COM_CLONE and group replication stream:
   MariaDB answers ERR to them, MySQL starts a stream. */
#define SLC_COM_MYSQL_BINLOG_DUMP_GTID  0x1e
#define SLC_COM_MYSQL_CLONE             0x20
#define SLC_COM_MYSQL_GR_STREAM         0x21
#define SLC_COM_MULTI                   0xfe    /* MariaDB 10.2 to 10.5 */

int
slc_mysql_track_answered(uint8_t cmd)
{
    return cmd != SLC_COM_QUIT && cmd != SLC_COM_STMT_CLOSE
           && cmd != SLC_COM_STMT_SEND_LONG_DATA;
}

static unsigned
slc_mysql_track_cmd_kind(const slc_mysql_track_t *t, uint8_t cmd)
{
    if (!slc_mysql_track_answered(cmd)) {
        return SLC_TRACK_NONE;
    }
    switch (cmd) {
    case SLC_COM_QUERY:
    case SLC_COM_PROCESS_INFO:
        return SLC_TRACK_QUERY;
    case SLC_COM_STMT_EXECUTE:
    case SLC_COM_STMT_BULK_EXECUTE:
        return SLC_TRACK_EXEC;
    case SLC_COM_STMT_FETCH:
        return SLC_TRACK_FETCH;
    case SLC_COM_STMT_PREPARE:
        return SLC_TRACK_PREPARE;
    case SLC_COM_FIELD_LIST:
        return SLC_TRACK_FIELD_LIST;
    case SLC_COM_STATISTICS:
        return SLC_TRACK_STATS;
    case SLC_COM_CHANGE_USER:
        return SLC_TRACK_CHANGE_USER;
    case SLC_COM_BINLOG_DUMP:
    case SLC_COM_MYSQL_BINLOG_DUMP_GTID:
    case SLC_COM_MYSQL_CLONE:
    case SLC_COM_MYSQL_GR_STREAM:
        return SLC_TRACK_UNKNOWN;       /* a stream, not a response */
    case SLC_COM_MULTI:
        return (t->mariadb_caps & SLC_MARIADB_CLIENT_COM_MULTI)
               ? SLC_TRACK_UNKNOWN : SLC_TRACK_SIMPLE;
    default:
        /* OK, EOF or ERR: COM_PING, COM_INIT_DB, COM_SET_OPTION...; and a
           byte the server does not know (any other, COM_SLEEP, COM_TIME,
           COM_DAEMON...) gets one ERR, ER_UNKNOWN_COM_ERROR */
        return SLC_TRACK_SIMPLE;
    }
}

static void
slc_mysql_track_command(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    unsigned  kind;
    uint8_t   entry;

    if (f->head_len == 0) {
        /* the server reads an empty command as COM_SLEEP: one ERR */
        slc_mysql_track_push(t, SLC_TRACK_SIMPLE);
        return;
    }
    t->quit |= (f->head[0] == SLC_COM_QUIT);
    if (t->on_command != NULL) {
        t->on_command(t->command_data, f->head[0]);
    }
    kind = slc_mysql_track_cmd_kind(t, f->head[0]);
    if (kind == SLC_TRACK_NONE) {
        return;
    }
    if (kind == SLC_TRACK_UNKNOWN) {
        t->broken = 1;
        return;
    }
    entry = (uint8_t) kind;
    if (f->head[0] == SLC_COM_STMT_EXECUTE && f->head_len > 5
        && (f->head[5] & SLC_TRACK_CURSOR_TYPES))
    {
        entry |= SLC_TRACK_CURSOR;
    }
    slc_mysql_track_push(t, entry);
}

/*
 * A client message starts a command when its sequence id is 0.  LOCAL
 * INFILE data is told apart by state, not by sequence id, since a long
 * upload wraps the id through 0; an auth exchange inside COM_CHANGE_USER
 * carries ids above 0 and is no command.
 */
static void
slc_mysql_track_cli_msg(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    if (t->broken) {
        /* framing only: a COM_QUIT still makes the end a normal one */
        t->quit |= (f->seq == 0 && f->head_len > 0
                    && f->head[0] == SLC_COM_QUIT);
        return;
    }
    if (t->infile) {
        if (f->plen == 0) {
            t->infile = 0;
        }
        return;
    }
    if (f->seq != 0) {
        if (t->npend == 0
            || slc_mysql_track_kind(t) != SLC_TRACK_CHANGE_USER)
        {
            t->broken = 1;
        }
        return;
    }
    slc_mysql_track_command(t, f);
}


/* --- server side: definitions ----------------------------------------- */

/* After the definitions of a phase and their EOF, if any (f: the last
   of them). */
static void
slc_mysql_track_defs_next(slc_mysql_track_t *t, const slc_mysql_frame_t *f,
    int status)
{
    switch (t->rstate) {
    case SLC_TRACK_COLS:
    case SLC_TRACK_COLS_EOF:
        /* an opened cursor ends the execute; rows come with fetches */
        if ((slc_mysql_track_entry(t) & SLC_TRACK_CURSOR) && status >= 0
            && (status & SLC_SERVER_STATUS_CURSOR_EXISTS))
        {
            slc_mysql_track_done(t, f);
            return;
        }
        t->rstate = SLC_TRACK_ROWS;
        return;
    case SLC_TRACK_PARAMS:
    case SLC_TRACK_PARAMS_EOF:
        if (t->count2 == 0) {
            slc_mysql_track_done(t, f);
            return;
        }
        t->count = t->count2;
        t->count2 = 0;
        t->rstate = SLC_TRACK_PCOLS;
        return;
    default:
        slc_mysql_track_done(t, f);
    }
}

static void
slc_mysql_track_defs_end(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    if (!(t->caps & SLC_CLIENT_DEPRECATE_EOF)) {
        t->rstate++;                    /* the matching _EOF state */
        return;
    }
    slc_mysql_track_defs_next(t, f, -1);
}

static void
slc_mysql_track_def(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    int  b = slc_mysql_track_byte(f);

    if (b == SLC_MYSQL_ERR) {
        slc_mysql_track_done(t, f);
        return;
    }
    if (b == SLC_MYSQL_EOF) {
        /* a definition starts with the catalog "def": lost track */
        t->broken = 1;
        return;
    }
    if (--t->count == 0) {
        slc_mysql_track_defs_end(t, f);
    }
}

static void
slc_mysql_track_def_eof(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    int  b = slc_mysql_track_byte(f);

    if (b == SLC_MYSQL_ERR) {
        slc_mysql_track_done(t, f);
        return;
    }
    if (b != SLC_MYSQL_EOF) {
        t->broken = 1;
        return;
    }
    slc_mysql_track_defs_next(t, f,
        slc_mysql_track_set_status(t, slc_mysql_track_term_status(t, f)));
}


/* --- server side: first packets --------------------------------------- */

/* Column count of a result set, or OK, ERR, LOCAL INFILE request. */
static void
slc_mysql_track_result(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    int       b = slc_mysql_track_byte(f);
    uint64_t  cols;
    size_t    n;

    if (b == SLC_MYSQL_OK) {
        slc_mysql_track_end_result(t, f,
            slc_mysql_track_set_status(t, slc_mysql_track_ok_status(f)));
        return;
    }
    if (b == SLC_MYSQL_ERR) {
        slc_mysql_track_done(t, f);
        return;
    }
    if (b == SLC_MYSQL_LOCAL_INFILE
        && slc_mysql_track_kind(t) == SLC_TRACK_QUERY)
    {
        t->infile = 1;                  /* then OK or ERR, as here */
        return;
    }

    n = slc_mysql_lenenc_int_get(f->head, f->head_len, &cols);
    if (n == 0 || cols == 0) {
        t->broken = 1;
        return;
    }
    t->rstate = SLC_TRACK_COLS;
    t->count = cols;
    if (t->mariadb_caps & SLC_MARIADB_CLIENT_CACHE_METADATA) {
        /* a "metadata follows" byte; 0: the client has the definitions */
        if (n >= f->head_len) {
            t->broken = 1;
        } else if (f->head[n] == 0) {
            slc_mysql_track_defs_end(t, f);
        }
    }
}

static void
slc_mysql_track_prepare_ok(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    int       b = slc_mysql_track_byte(f);
    unsigned  cols, params;

    if (b == SLC_MYSQL_ERR) {
        slc_mysql_track_done(t, f);
        return;
    }
    /* 0x00, statement id (4), columns (2), params (2), filler, warnings */
    if (b != SLC_MYSQL_OK || f->head_len < 9) {
        t->broken = 1;
        return;
    }
    cols = slc_mysql_le_get(f->head + 5, 2);
    params = slc_mysql_le_get(f->head + 7, 2);
    if (params > 0) {
        t->rstate = SLC_TRACK_PARAMS;
        t->count = params;
        t->count2 = cols;
    } else if (cols > 0) {
        t->rstate = SLC_TRACK_PCOLS;
        t->count = cols;
    } else {
        slc_mysql_track_done(t, f);
    }
}

/* One packet: OK, EOF (COM_SET_OPTION, COM_DEBUG) or ERR. */
static void
slc_mysql_track_simple(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    int  b = slc_mysql_track_byte(f);

    if (b == SLC_MYSQL_OK) {
        slc_mysql_track_set_status(t, slc_mysql_track_ok_status(f));
    } else if (b == SLC_MYSQL_EOF) {
        slc_mysql_track_set_status(t, slc_mysql_track_term_status(t, f));
    } else if (b != SLC_MYSQL_ERR) {
        t->broken = 1;
        return;
    }
    slc_mysql_track_done(t, f);
}

/* COM_CHANGE_USER: auth switch and more-data rounds until OK or ERR. */
static void
slc_mysql_track_auth(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    int  b = slc_mysql_track_byte(f);

    if (b == SLC_MYSQL_OK) {
        slc_mysql_track_set_status(t, slc_mysql_track_ok_status(f));
        slc_mysql_track_done(t, f);
    } else if (b == SLC_MYSQL_ERR) {
        slc_mysql_track_done(t, f);
    } else if (b != SLC_MYSQL_AUTH_SWITCH && b != SLC_MYSQL_AUTH_MORE_DATA) {
        t->broken = 1;
    }
}


/* --- server side: rows and dispatch ----------------------------------- */

static void slc_mysql_track_ok_capture(slc_mysql_track_t *t,
    const slc_mysql_frame_t *f);
static void slc_mysql_track_row_capture(slc_mysql_track_t *t,
    const slc_mysql_frame_t *f);

static void
slc_mysql_track_row(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    int  b = slc_mysql_track_byte(f);
    int  term = b == SLC_MYSQL_EOF && slc_mysql_track_is_term(t, f);

    if (b != SLC_MYSQL_ERR && !term) {
        t->reply.rows++;
        if (t->g != NULL && t->g->row_want) {
            slc_mysql_track_row_capture(t, f);
        }
    } else if (b == SLC_MYSQL_ERR) {
        slc_mysql_track_done(t, f);
    } else {
        if (t->g != NULL && slc_mysql_track_eof_is_ok(t, f)) {
            slc_mysql_track_ok_capture(t, f);   /* an OK: its state */
        }
        slc_mysql_track_end_result(t, f,
            slc_mysql_track_set_status(t, slc_mysql_track_term_status(t, f)));
    }
}

/* COM_FIELD_LIST: definitions never start with 0xfe, so one ends them. */
static void
slc_mysql_track_field(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    int  b = slc_mysql_track_byte(f);

    if (b == SLC_MYSQL_EOF) {
        slc_mysql_track_set_status(t, slc_mysql_track_term_status(t, f));
    } else if (b != SLC_MYSQL_ERR) {
        return;
    }
    slc_mysql_track_done(t, f);
}

/* What the command layer reads of a response (slc_mysql_reply_t): a new
   result begins. */
static void
slc_mysql_track_note(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    int  b = slc_mysql_track_byte(f);

    t->reply.first = (uint8_t) b;
    t->reply.err = b == SLC_MYSQL_ERR && f->head_len >= 3
                   ? (uint16_t) slc_mysql_le_get(f->head + 1, 2) : 0;
    if (slc_mysql_track_kind(t) == SLC_TRACK_PREPARE
        && b == SLC_MYSQL_OK && f->head_len >= 9)
    {
        /* 0x00, id (4), columns (2), params (2), filler, warnings (2) */
        t->reply.stmt_id = (uint32_t) slc_mysql_le_get(f->head + 1, 4);
        t->reply.columns = (uint16_t) slc_mysql_le_get(f->head + 5, 2);
        t->reply.params = (uint16_t) slc_mysql_le_get(f->head + 7, 2);
        t->reply.warnings = f->head_len >= 12
                            ? (uint16_t) slc_mysql_le_get(f->head + 10, 2) : 0;
    }
}

/*
 * Causal reads: an OK that carries session state is kept whole
 * (slc_mysql_track_keep), for its last_gtid: one that opens a response
 * (ok_start), or, under DEPRECATE_EOF, the OK that ends a result set
 * (INSERT ... RETURNING; ok_capture from the row state).  A PREPARE_OK
 * and a row of COM_STMT_FETCH start with 0x00 too, and are no OKs.
 */
static void
slc_mysql_track_capture(slc_mysql_track_t *t, const slc_mysql_frame_t *f,
    int row)
{
    if (f->plen > SLC_MYSQL_TRACK_OKMAX) {
        t->g->gtid_lost++;
        return;
    }
    memcpy(t->g->ok, f->head, f->head_len);
    t->g->ok_len = f->head_len;
    t->g->ok_on = 1;
    t->g->row = (uint8_t) row;
}

static void
slc_mysql_track_ok_capture(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    int status = slc_mysql_track_ok_status(f);

    if (status >= 0 && (status & SLC_SERVER_SESSION_STATE_CHANGED)) {
        slc_mysql_track_capture(t, f, 0);
    }
}

/* The row of a GTID query (slc_mysql_track_want_row_gtid), kept whole
   as an OK is. */
static void
slc_mysql_track_row_capture(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    t->g->row_want = 0;
    slc_mysql_track_capture(t, f, 1);
}

static void
slc_mysql_track_ok_start(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    unsigned kind = slc_mysql_track_kind(t);

    if (t->g != NULL && f->head_len > 0 && f->head[0] == SLC_MYSQL_OK
        && (kind == SLC_TRACK_SIMPLE || kind == SLC_TRACK_QUERY
            || kind == SLC_TRACK_EXEC))
    {
        slc_mysql_track_ok_capture(t, f);
    }
}

static void
slc_mysql_track_keep(slc_mysql_track_t *t, const uint8_t *p, size_t n)
{
    if (t->g->ok_len + n > SLC_MYSQL_TRACK_OKMAX) {
        t->g->ok_on = 0;                /* cannot be: plen was checked */
        t->g->gtid_lost++;
        return;
    }
    memcpy(t->g->ok + t->g->ok_len, p, n);
    t->g->ok_len += (uint32_t) n;
}

static void
slc_mysql_track_ok_end(slc_mysql_track_t *t)
{
    slc_gtid_t g;
    int        rc = t->g->row
                    ? slc_mysql_row_gtid(t->g->ok, t->g->ok_len, &g)
                    : slc_mysql_ok_last_gtid(t->g->ok, t->g->ok_len, &g);

    t->g->ok_on = 0;
    t->g->row = 0;
    if (rc < 0) {
        t->g->gtid_lost++;
    } else if (rc > 0) {
        t->g->gtid = g;
        t->g->gtids++;
    }
}

/* One SESSION_TRACK_SYSTEM_VARIABLES entry: name, value pairs. */
static int
slc_mysql_track_sysvars(const uint8_t *p, size_t len, slc_gtid_t *g)
{
    const uint8_t *name, *val;
    uint64_t       nlen, vlen;
    size_t         off = 0, k;
    int            found = 0;

    while (off < len) {
        k = slc_mysql_lenenc_str_get(p + off, len - off, &name, &nlen);
        if (k == 0) {
            return -1;
        }
        off += k;
        k = slc_mysql_lenenc_str_get(p + off, len - off, &val, &vlen);
        if (k == 0) {
            return -1;
        }
        off += k;
        if (nlen == 9 && memcmp(name, "last_gtid", 9) == 0) {
            if (slc_gtid_parse((const char *) val, vlen, g) != SLC_OK) {
                return -1;
            }
            found = 1;
        }
    }
    return found;
}

int
slc_mysql_ok_last_gtid(const uint8_t *p, size_t len, slc_gtid_t *g)
{
    const uint8_t *s;
    uint64_t       slen, elen;
    size_t         off = slc_mysql_ok_status_at(p, len), k;
    int            found = 0, rc;

    if (off == 0 || len - off < 4) {
        return -1;
    }
    if (!(slc_mysql_le_get(p + off, 2) & SLC_SERVER_SESSION_STATE_CHANGED)) {
        return 0;
    }
    off += 4;                           /* status, warnings */
    k = slc_mysql_lenenc_str_get(p + off, len - off, &s, &slen);  /* info */
    if (k == 0) {
        return -1;
    }
    off += k;
    k = slc_mysql_lenenc_str_get(p + off, len - off, &s, &slen);  /* state */
    if (k == 0 || off + k != len) {
        return -1;
    }
    for (size_t i = 0; i < slen; i += k + elen) {
        uint8_t type = s[i++];

        k = slc_mysql_lenenc_int_get(s + i, slen - i, &elen);
        if (k == 0 || elen > slen - i - k) {
            return -1;
        }
        if (type != SLC_SESSION_TRACK_SYSTEM_VARIABLES) {
            continue;
        }
        rc = slc_mysql_track_sysvars(s + i + k, elen, g);
        if (rc < 0) {
            return -1;
        }
        found |= rc;
    }
    return found;
}

int
slc_mysql_row_gtid(const uint8_t *p, size_t len, slc_gtid_t *g)
{
    const uint8_t *v;
    uint64_t       vlen;
    size_t         k = slc_mysql_lenenc_str_get(p, len, &v, &vlen);

    if (k == 0 || k != len) {
        return -1;                      /* NULL (0xfb), or more columns */
    }
    if (vlen == 0) {
        return 0;
    }
    return slc_gtid_parse((const char *) v, vlen, g) == SLC_OK ? 1 : -1;
}

void
slc_mysql_track_want_row_gtid(slc_mysql_track_t *t)
{
    t->g->row_want = 1;
}

int
slc_mysql_track_want_gtid(slc_mysql_track_t *t)
{
    if (t->g == NULL && (t->g = calloc(1, sizeof(*t->g))) == NULL) {
        return SLC_ERROR;
    }
    return SLC_OK;
}

static void
slc_mysql_track_first(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    slc_mysql_track_note(t, f);
    slc_mysql_track_ok_start(t, f);
    switch (slc_mysql_track_kind(t)) {
    case SLC_TRACK_SIMPLE:
        slc_mysql_track_simple(t, f);
        break;
    case SLC_TRACK_STATS:
        slc_mysql_track_done(t, f);
        break;
    case SLC_TRACK_QUERY:
    case SLC_TRACK_EXEC:
        slc_mysql_track_result(t, f);
        break;
    case SLC_TRACK_FETCH:
        t->rstate = SLC_TRACK_ROWS;
        slc_mysql_track_row(t, f);
        break;
    case SLC_TRACK_PREPARE:
        slc_mysql_track_prepare_ok(t, f);
        break;
    case SLC_TRACK_FIELD_LIST:
        t->rstate = SLC_TRACK_FIELDS;
        slc_mysql_track_field(t, f);
        break;
    case SLC_TRACK_CHANGE_USER:
        slc_mysql_track_auth(t, f);
        break;
    default:
        t->broken = 1;
    }
}

static void
slc_mysql_track_srv_msg(slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    if (t->broken) {
        return;
    }
    if (t->npend == 0) {
        t->broken = 1;                  /* nothing was asked */
        return;
    }
    if (slc_mysql_track_is_progress(f)) {
        return;
    }

    switch (t->rstate) {
    case SLC_TRACK_FIRST:
        slc_mysql_track_first(t, f);
        break;
    case SLC_TRACK_COLS:
    case SLC_TRACK_PARAMS:
    case SLC_TRACK_PCOLS:
        slc_mysql_track_def(t, f);
        break;
    case SLC_TRACK_COLS_EOF:
    case SLC_TRACK_PARAMS_EOF:
    case SLC_TRACK_PCOLS_EOF:
        slc_mysql_track_def_eof(t, f);
        break;
    case SLC_TRACK_ROWS:
        slc_mysql_track_row(t, f);
        break;
    case SLC_TRACK_FIELDS:
        slc_mysql_track_field(t, f);
        break;
    default:
        t->broken = 1;
    }
}


/* --- framing ----------------------------------------------------------- */

static inline __attribute__((always_inline)) size_t
slc_mysql_frame_header(slc_mysql_frame_t *f, const uint8_t *p, size_t len)
{
    size_t  n = slc_min(len, (size_t) (SLC_MYSQL_HDR_LEN - f->hdr_len));

    memcpy(f->hdr + f->hdr_len, p, n);
    f->hdr_len += (uint32_t) n;
    if (f->hdr_len < SLC_MYSQL_HDR_LEN) {
        return n;
    }

    f->plen = (uint32_t) slc_mysql_le_get(f->hdr, 3);
    f->seq = f->hdr[3];
    f->remaining = f->plen;
    f->continued = f->more;
    f->more = (f->plen == SLC_MYSQL_MAX_PAYLOAD);
    f->head_len = 0;
    f->seen = f->continued;             /* continuations are not looked at */
    return n;
}

/* Keep the head bytes not yet kept, skip the rest. */
static inline __attribute__((always_inline)) size_t
slc_mysql_frame_payload(slc_mysql_frame_t *f, const uint8_t *p, size_t len)
{
    size_t  n = slc_min(len, (size_t) f->remaining);
    size_t  want = slc_min((size_t) f->plen, sizeof(f->head));
    size_t  c;

    if (!f->seen && f->head_len < want) {
        c = slc_min(n, want - f->head_len);
        memcpy(f->head + f->head_len, p, c);
        f->head_len += (uint32_t) c;
    }
    f->remaining -= (uint32_t) n;
    return n;
}

static int
slc_mysql_frame_head_ready(const slc_mysql_frame_t *f)
{
    return f->hdr_len == SLC_MYSQL_HDR_LEN && !f->seen
           && f->head_len == slc_min(f->plen, (uint32_t) sizeof(f->head));
}

/* Between messages: no header or payload half received, no continuation
   owed. */
static int
slc_mysql_frame_at_boundary(const slc_mysql_frame_t *f)
{
    return f->hdr_len == 0 && !f->more;
}

/*
 * The OK just completed, whose last p bytes of the caller's (w: they may
 * be written, len more follow them) are all of it: rewritten without
 * last_gtid.  Returns by how many bytes it shrank.
 */
static size_t
slc_mysql_track_ok_edit(slc_mysql_track_t *t, const slc_mysql_frame_t *f,
    uint8_t *end, size_t len)
{
    uint8_t  out[SLC_MYSQL_MAX_OKSTATE];
    uint8_t *start = end - SLC_MYSQL_HDR_LEN - f->plen;
    size_t   n;

    if (f->plen != t->g->ok_len
        || (n = slc_mysql_okstate_hide_gtid(t->g->ok, t->g->ok_len, out))
           == 0)
    {
        return 0;
    }
    slc_mysql_hdr_write(start, (uint32_t) n, f->seq);
    memcpy(start + SLC_MYSQL_HDR_LEN, out, n);
    memmove(start + SLC_MYSQL_HDR_LEN + n, end, len);
    return f->plen - n;
}

/* The bytes of the current server packet the caller must hold back (see
   slc_mysql_track_server_edit). */
static size_t
slc_mysql_track_hold(const slc_mysql_track_t *t, const slc_mysql_frame_t *f)
{
    if (f->hdr_len < SLC_MYSQL_HDR_LEN) {
        return f->hdr_len;              /* 0 at a boundary */
    }
    if (f->continued || (f->seen && !t->g->ok_on)) {
        return 0;                       /* a row, definitions...: as is */
    }
    return SLC_MYSQL_HDR_LEN + f->plen - f->remaining;
}

/*
 * Show the observer what the step that ended at `end` gave of the current
 * server packet (n payload bytes; the packet complete when remaining is
 * 0, its payload then cut by `cut` bytes if it was rewritten).  With
 * `edit` (the caller holds back what _server_edit says), a packet whose
 * head is not read yet, or an OK being kept, is shown only once released
 * or rewritten: all of its payload so far, which lies directly before
 * `end`.
 */
static int
slc_mysql_track_show(slc_mysql_track_t *t, slc_mysql_frame_t *f,
    const uint8_t *end, size_t n, size_t cut, const uint8_t *w)
{
    int               edit = w != NULL && t->g != NULL && t->g->hide;
    size_t            got = f->plen - f->remaining - cut;
    slc_mysql_piece_t pc = {
        .plen = f->plen - (uint32_t) cut, .seq = f->seq,
        .last = f->remaining == 0,
    };

    if (edit && f->remaining > 0 && !f->continued
        && (!f->seen || t->g->ok_on))
    {
        t->observe_held = 1;
        return SLC_OK;
    }
    if (t->observe_held || cut > 0) {   /* rewritten: none of it shown */
        pc.data = end - got;
        pc.len = got;
        pc.first = 1;
        t->observe_held = 0;
    } else {
        pc.data = end - n;
        pc.len = n;
        pc.first = got == n;
    }
    if (pc.last && !f->more && t->reply.done != f->done_at && t->npend == 0
        && !t->infile && slc_mysql_frame_at_boundary(&t->cli))
    {
        pc.end = 1;
        pc.reply = &t->reply;
    }
    return t->observe(t->observe_data, &pc);
}

/*
 * Frame the bytes of one direction.  Every step consumes at least one
 * byte and there are at most two steps per packet (header, payload) plus
 * one per chunk edge: O(packets) per chunk.  With w (the caller's
 * writable p, slc_mysql_track_server_edit): OKs edited in place, and by
 * how many bytes the bytes ending at p + len shrank returned (an OK that
 * began in bytes held before p may shrink by more than len); else 0.
 * `show` (the server's side, an observer set) is a constant where it is
 * inlined: without an observer the loop pays nothing for it.
 */
static inline __attribute__((always_inline)) size_t
slc_mysql_track_frame(slc_mysql_track_t *t, slc_mysql_frame_t *f,
    const uint8_t *p, size_t len, slc_mysql_track_msg_pt msg, uint8_t *w,
    const int show)
{
    size_t  n, cut, shrunk = 0;

    while (len > 0) {
        size_t h0 = f->head_len, body = 0;

        if (f->hdr_len < SLC_MYSQL_HDR_LEN) {
            n = slc_mysql_frame_header(f, p, len);
            if (show && f->hdr_len == SLC_MYSQL_HDR_LEN && !f->continued) {
                f->done_at = t->reply.done;     /* a message begins */
            }
        } else {
            n = slc_mysql_frame_payload(f, p, len);
            body = 1;
        }
        p += n;
        len -= n;

        if (slc_mysql_frame_head_ready(f)) {
            f->seen = 1;
            msg(t, f);
        }
        if (t->g != NULL && t->g->ok_on && body && f == &t->srv) {
            /* the OK's bytes past its head (kept by ok_capture) */
            size_t h = f->head_len - h0;
            slc_mysql_track_keep(t, p - n + h, n - h);
        }
        if (f->hdr_len < SLC_MYSQL_HDR_LEN || f->remaining > 0) {
            if (show && body
                && slc_mysql_track_show(t, f, p, n, 0, w) != SLC_OK)
            {
                return shrunk;
            }
            continue;
        }
        cut = 0;
        if (t->g != NULL && t->g->ok_on && f == &t->srv) {
            int row = t->g->row;

            slc_mysql_track_ok_end(t);
            if (w != NULL && t->g->hide && !row) {
                uint8_t *end = w + (p - w);

                cut = slc_mysql_track_ok_edit(t, f, end, len);
                p -= cut;
                shrunk += cut;
            }
        }
        if (show && slc_mysql_track_show(t, f, p, body ? n : 0, cut, w)
                    != SLC_OK)
        {
            return shrunk;
        }
        f->hdr_len = 0;
    }
    return shrunk;
}

/* A broken tracker still frames the client side (to see COM_QUIT); the
   server side it no longer looks at. */
static size_t
slc_mysql_track_feed(slc_mysql_track_t *t, slc_mysql_frame_t *f,
    const uint8_t *p, size_t len, slc_mysql_track_msg_pt msg, uint8_t *w)
{
    if (f != &t->srv) {
        return slc_mysql_track_frame(t, f, p, len, msg, w, 0);
    }
    if (t->broken) {
        return 0;
    }
    return t->observe != NULL
           ? slc_mysql_track_frame(t, f, p, len, msg, w, 1)
           : slc_mysql_track_frame(t, f, p, len, msg, w, 0);
}


/* --- public ------------------------------------------------------------ */

void
slc_mysql_track_init(slc_mysql_track_t *t, uint32_t caps, uint16_t status)
{
    void  (*on_command)(void *, uint8_t) = t->on_command;
    void   *command_data = t->command_data;

    free(t->runs);                      /* initialised again: a new user */
    free(t->g);
    memset(t, 0, sizeof(*t));
    t->on_command = on_command;
    t->command_data = command_data;
    t->caps = caps;
    t->status = status;
    t->rstate = SLC_TRACK_FIRST;
    /* other framing; metadata MySQL may leave out: see the header */
    if (caps & (SLC_CLIENT_COMPRESS
                | SLC_CLIENT_OPTIONAL_RESULTSET_METADATA))
    {
        t->broken = 1;
    }
}

void
slc_mysql_track_free(slc_mysql_track_t *t)
{
    free(t->runs);
    t->runs = NULL;
    free(t->g);
    t->g = NULL;
    t->rcap = t->rfirst = t->nruns = 0;
    t->npend = 0;
    t->broken = 1;
}

void
slc_mysql_track_set_mariadb_caps(slc_mysql_track_t *t, uint32_t caps)
{
    t->mariadb_caps = caps;
}

int
slc_mysql_track_client(slc_mysql_track_t *t, const uint8_t *p, size_t len)
{
    (void) slc_mysql_track_feed(t, &t->cli, p, len,
                                slc_mysql_track_cli_msg, NULL);
    return SLC_OK;
}

int
slc_mysql_track_server(slc_mysql_track_t *t, const uint8_t *p, size_t len)
{
    (void) slc_mysql_track_feed(t, &t->srv, p, len,
                                slc_mysql_track_srv_msg, NULL);
    return SLC_OK;
}

size_t
slc_mysql_track_server_edit(slc_mysql_track_t *t, uint8_t *p, size_t len,
    size_t *hold)
{
    size_t shrunk = slc_mysql_track_feed(t, &t->srv, p, len,
                                         slc_mysql_track_srv_msg, p);

    *hold = t->g != NULL && t->g->hide && !t->broken
            ? slc_mysql_track_hold(t, &t->srv) : 0;
    return shrunk;
}

void
slc_mysql_track_observe(slc_mysql_track_t *t, slc_mysql_observe_pt fn,
    void *data)
{
    t->observe = fn;
    t->observe_data = data;
    t->observe_held = 0;
}

int
slc_mysql_track_idle(const slc_mysql_track_t *t)
{
    return !t->broken && t->npend == 0 && !t->infile
           && slc_mysql_frame_at_boundary(&t->cli)
           && slc_mysql_frame_at_boundary(&t->srv);
}
