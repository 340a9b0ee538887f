#ifndef SLC_MYSQL_FILTER_H
#define SLC_MYSQL_FILTER_H

#include "slc_core.h"
#include "slc_sql_classify.h"
#include "slc_mysql_conf.h"
#include "slc_mysql_track.h"

/*
 * The command layer's interface for filters and routers
 * (docs/architecture.md, "Commands").
 *
 * A session whose server {} lists `filters`, or whose router routes per
 * command (slc_router_t.command), runs in command mode: the core reads
 * the client, stops at the head of every command and, once the response
 * to the one before is complete, calls each filter's `command` hook in
 * the order of the `filters` directive, then asks the router which
 * backend takes it.  The command's head is at hand (its whole first
 * packet when it fits one buffer, else the first buffer_size bytes); the
 * rest streams to where the head went, or is dropped if a filter answered.
 * Each response packet from the backend passes every filter's `packet`
 * hook before it goes to the client, and `done` marks the response's end.
 * A session with neither filters nor such a router never parses a
 * command: its router pumps bytes (readconn's fast path).
 */

/* A command at the head of the client's stream. */
typedef struct {
    uint8_t         command;    /* COM_* */
    uint32_t        len;        /* its first packet's payload length */
    const uint8_t  *payload;    /* payload[0] == command */
    size_t          avail;      /* payload bytes at hand: len or less */
} slc_cmd_t;

/* A response packet's payload, or a piece of one larger than a read (the
   header is not in data: plen and seq are its fields), framed once by
   the backend's tracker (slc_mysql_piece_t in slc_mysql_track.h).  With
   `end`, no byte of it has gone to the client yet: what must be true when
   the client sees the end is made true in the hook, and `reply` is the
   response's summary, as `done` will get it. */
typedef slc_mysql_piece_t slc_cmd_packet_t;

/* The `command` hook's verdicts. */
#define SLC_FILTER_PASS     0   /* the next filter, then the router */
#define SLC_FILTER_ANSWER   1   /* the filter answered (slc_reply*) */
#define SLC_FILTER_PAUSE    2   /* wait for slc_filter_resume() */

typedef struct slc_backend_s  slc_backend_t;

typedef struct slc_filter_s {
    /* per session context, allocated zeroed by the core when the
       session enters command mode, freed after `close` */
    size_t   ctx_size;
    /* the session enters command mode (authenticated): SLC_ERROR closes
       it */
    int    (*open)(slc_session_t *s, void *ctx);
    /* the session closes (also while paused: cancel what is pending) */
    void   (*close)(slc_session_t *s, void *ctx);
    int    (*command)(slc_session_t *s, void *ctx, const slc_cmd_t *cmd);
    /* the rest of a command whose first packet is larger than a buffer
       (slc_cmd_t.avail < len), in order, as it goes on to where its head
       went: bytes avail..len of the payload (a packet of 16 MiB or more
       is not shown: the command hook sees avail < len all the same) */
    void   (*rest)(slc_session_t *s, void *ctx, const uint8_t *p, size_t n);
    void   (*packet)(slc_session_t *s, void *ctx, const slc_cmd_packet_t *p);
    /* the response is complete: the tracker's summary and status flags */
    void   (*done)(slc_session_t *s, void *ctx, const slc_mysql_reply_t *r,
                   uint16_t status);
    /* a reload's handover (docs/architecture.md, "Reload"): what the next
       worker's filter must know of the session, into buf (at most cap
       bytes; 0: nothing); restore gets it back right after `open` there
       (a filter of the same module name, under the new configuration) */
    size_t (*save)(slc_session_t *s, void *ctx, uint8_t *buf, size_t cap);
    void   (*restore)(slc_session_t *s, void *ctx, const uint8_t *p,
                      size_t len);
} slc_filter_t;

/*
 * For the handover (slc_mysql_handover.c): the states of the session's
 * filters, each as its module's name (a byte of length, the name), a
 * 4-byte length and the bytes save gave; SLC_ERROR when they do not fit.
 * slc_cmd_filters_stash keeps such bytes with an adopted session until
 * its filters open.
 */
int  slc_cmd_filters_save(slc_session_t *s, uint8_t *buf, size_t cap,
    size_t *len);
int  slc_cmd_filters_stash(slc_session_t *s, const uint8_t *p, size_t len);

/* The filter of a `filters` entry: its module's `filter` table. */
#define slc_filter_of(module)  ((const slc_filter_t *) (module)->filter)

/*
 * For a router's command hook: the command goes to `b` too (session
 * state: SET, USE, PREPARE on every backend), besides the backend the
 * hook returns, whose reply alone reaches the client.  b must be another
 * logged-in backend of the session's, and the command one that fits a
 * buffer; SLC_ERROR otherwise.  b's reply is read in the background and
 * dropped; the router hears it through its done hook (an ERR there: the
 * router decides, typically dropping b), and a later command for b waits
 * until b has answered.
 */
#define SLC_CMD_MAX_ALSO  4
int  slc_cmd_also(slc_session_t *s, slc_backend_t *b);
/*
 * For a router's command hook: the command goes to the backend the hook
 * returns with the first `keep` bytes of its payload replaced by `head`
 * (`len` bytes, the command byte first); the rest follows as the client
 * sent it.  A statement id patched in place is len == keep == 5; a
 * COM_STMT_EXECUTE that gets the parameter types the client bound earlier
 * is longer.  head is copied.  Copies (slc_cmd_also) get the command as
 * the client sent it.  SLC_ERROR when keep is beyond the bytes at hand
 * (slc_cmd_t.avail), when head does not fit a buffer, or when the length
 * changes for a command of 16 MiB or more (its packets continue).  It
 * may be called again while the command waits for its backend (from the
 * router's done for that backend, before the command is sent): the last
 * call wins, so a router can fill in an id that an injected command's
 * answer gave.
 */
int  slc_cmd_rewrite(slc_session_t *s, const uint8_t *head, size_t len,
    size_t keep);
/*
 * A command of the proxy's own to backend b (a router's, attached with
 * slc_cmd_attach): replaying the session's history on a backend opened
 * later, a wait for a GTID before a read.  It is queued behind what b
 * has in flight; its response is followed in the background and dropped,
 * and the router hears it through its done hook when b is idle again (`errs`
 * in the reply counts the ERRs); a command for b waits until then.
 * SLC_ERROR when it does not fit a buffer or no memory.
 */
int  slc_cmd_inject(slc_backend_t *b, const uint8_t *payload, size_t len);
/*
 * For a router, from its done hook for `from`: the client's command that waits
 * for `from` (the router injected a command of its own ahead of it, a
 * MASTER_GTID_WAIT that timed out) goes to `to` instead, and is sent
 * once `to` is idle; nothing of it was sent to `from`.  SLC_ERROR when
 * no command waits for `from`.
 */
int  slc_cmd_retarget(slc_session_t *s, slc_backend_t *from,
    slc_backend_t *to);

/*
 * From a filter's `command` hook, which then returns SLC_FILTER_PASS: a
 * command of the filter's own (payload: the command byte first, copied)
 * runs before the client's, as if the client had sent it first: the
 * router's command hook places it (a statement id is translated as a
 * client's), its response is dropped unseen (no byte to the client, no
 * filter's packet or done hook; the router's done hook hears it),
 * and then the client's command starts over at the first filter.  If its
 * backend fails, it is dropped and the client's command goes on.  The
 * query cache puts the server where it would be had it run a statement
 * the cache answered (FOUND_ROWS() after a hit).  SLC_ERROR when one is
 * queued already or the input buffer has no room for it (nothing done).
 */
int  slc_cmd_prelude(slc_session_t *s, const uint8_t *payload, size_t len);

/*
 * From a packet hook: the response's bytes not yet sent to the client
 * (the packet shown and those after it) wait, until as many calls of
 * slc_filter_ungate as of slc_filter_gate were made.  The query cache's
 * strict mode holds a write's OK until Redis has its tables' new
 * generations.  A filter that gates must ungate (or the session close):
 * the backend's bytes stay in its buffer meanwhile, and nothing more is
 * read from it once that is full.
 */
void slc_filter_gate(slc_session_t *s);
/* May be called from any callback; the response goes on from the loop's
   posted queue. */
void slc_filter_ungate(slc_session_t *s);

/*
 * A paused command goes on: `verdict` as the `command` hook would have
 * returned it (SLC_FILTER_PASS or SLC_FILTER_ANSWER).  May be called from
 * any callback; the session continues from the loop's posted queue, never
 * inside the caller.
 */
void slc_filter_resume(slc_session_t *s, int verdict);

/*
 * Answering a command.  Packets get the client's next sequence ids (the
 * command was 0).  slc_reply queues one packet: SLC_OK, SLC_AGAIN
 * when the output buffer has no room for it now (nothing queued; write
 * it from the stream callback later), SLC_ERROR if it can never fit.
 *
 * A reply longer than the output buffer is a stream: the core calls
 * fn(s, data) whenever the client took what was queued; fn queues packets
 * with slc_reply until it gets SLC_AGAIN, and returns SLC_AGAIN to be
 * called again, SLC_DONE once the last packet is queued, or SLC_ERROR
 * (the session is closed).  Memory stays one buffer whatever the size.
 */
typedef int (*slc_cmd_stream_pt)(slc_session_t *s, void *data);

int  slc_reply(slc_session_t *s, const uint8_t *payload, size_t len);
/*
 * An answer already framed (a cached response, whose headers and sequence
 * ids are those the client must see): reply_space gives the free tail of
 * the output buffer (*room bytes; NULL: no memory), into which the caller
 * copies, then reply_commit queues the n bytes it wrote there.  From a
 * stream callback, the whole buffer is free each time.
 */
uint8_t *slc_reply_space(slc_session_t *s, size_t *room);
void     slc_reply_commit(slc_session_t *s, size_t n);
/* The command's answer goes on with fn(s, data), as above. */
void     slc_cmd_stream(slc_session_t *s, slc_cmd_stream_pt fn, void *data);
/* In a `done` hook: the backend that answered (a router's replica, or
   the session's own). */
const slc_backend_t *slc_cmd_answered_by(const slc_session_t *s);
/* The client's capabilities and the status flags an answer should carry
   (those of the session: in transaction, autocommit...). */
uint32_t slc_cmd_client_caps(const slc_session_t *s);
uint16_t slc_cmd_status(const slc_session_t *s);
/*
 * The statement command c carries (COM_QUERY's text, COM_STMT_PREPARE's),
 * whole in c (avail == len), classified (slc_sql_classify) once per
 * command, whoever asks first: a filter, then the router, get the same
 * result without reading the text again.  Valid until the next call for
 * another command (copy it to keep it); read under the session's
 * current status (NO_BACKSLASH_ESCAPES), so a prelude that changed it
 * has the text read again.
 */
const slc_sql_info_t *slc_cmd_classify(slc_session_t *s, const slc_cmd_t *c);

/*
 * The query rules' verdict on the client's command (slc_mysql_rules.h),
 * for its router and filters: NULL when the server has no rules or the
 * command is none they look at.
 */
const struct slc_sql_rule_verdict_s *slc_cmd_rules(const slc_session_t *s);

/*
 * Answers in the form the client negotiated (slc_mysql_reply.c): a text
 * result set is reply_columns (names of string columns, at most 64), a
 * reply_row per row (a NULL value is SQL NULL), then reply_end; or one
 * OK, or one ERR.  Each returns as slc_reply does; reply_columns
 * queues all its packets or none.
 */
int  slc_reply_columns(slc_session_t *s, const char *const *names,
    unsigned n);
int  slc_reply_row(slc_session_t *s, const char *const *values,
    const size_t *lens, unsigned n);
int  slc_reply_end(slc_session_t *s);
int  slc_reply_ok(slc_session_t *s, uint64_t affected);
int  slc_reply_err(slc_session_t *s, uint16_t code, const char *state,
    const char *msg);

#endif /* SLC_MYSQL_FILTER_H */
