/*
 * Response tracker.  Each exchange is written as a script: messages in both
 * directions, grouped in steps, with the expected idle and in-transaction
 * state after each step.  Every script is run fed whole, one byte at a time
 * and in seeded random chunks; at every chunk edge that falls inside a
 * message the session must not be idle.  Fuzz tests feed garbage and
 * mutated exchanges (run under ASan to mean anything).
 */

#include "slc_test.h"

#include "slc_core.h"
#include "slc_mysql_proto.h"
#include "slc_mysql_track.h"
#include "slc_test_seen.h"

#define SLC_TEST_CLI        0
#define SLC_TEST_SRV        1
#define SLC_TEST_ANY        -1      /* expectation not checked */
#define SLC_TEST_MAXSTEPS   128
#define SLC_TEST_MAX        SLC_MYSQL_MAX_PAYLOAD

#define SLC_TEST_CAPS  (SLC_CLIENT_LONG_PASSWORD | SLC_CLIENT_LONG_FLAG      \
                        | SLC_CLIENT_LOCAL_FILES | SLC_CLIENT_PROTOCOL_41    \
                        | SLC_CLIENT_TRANSACTIONS                            \
                        | SLC_CLIENT_SECURE_CONNECTION                       \
                        | SLC_CLIENT_MULTI_STATEMENTS                        \
                        | SLC_CLIENT_MULTI_RESULTS                           \
                        | SLC_CLIENT_PS_MULTI_RESULTS                        \
                        | SLC_CLIENT_PLUGIN_AUTH | SLC_CLIENT_SESSION_TRACK)

#define SLC_TEST_AC         SLC_SERVER_STATUS_AUTOCOMMIT
#define SLC_TEST_TRANS      (SLC_SERVER_STATUS_AUTOCOMMIT                    \
                             | SLC_SERVER_STATUS_IN_TRANS)
#define SLC_TEST_MORE       SLC_SERVER_MORE_RESULTS_EXISTS
#define SLC_TEST_CURSOR     SLC_SERVER_STATUS_CURSOR_EXISTS
#define SLC_TEST_LAST_ROW   0x0080u

/* Inline payload bytes: slc_test_srv(SLC_TEST_BYTES(0x00, 0x01)). */
#define SLC_TEST_BYTES(...)                                                  \
    (const uint8_t []) { __VA_ARGS__ },                                      \
    sizeof((const uint8_t []) { __VA_ARGS__ })

typedef struct {
    int        dir;
    uint8_t   *buf;
    size_t     len;
    size_t     cap;
    size_t    *ends;        /* offsets where a message ends, ascending */
    size_t     nends;
    size_t     cape;
    int        idle;        /* expected after the step */
    int        trans;
    int        closed;
    int        end;         /* the response's end is checked: */
    uint8_t    last;        /* slc_mysql_reply_t's, after the step */
    uint16_t   warnings;
    uint8_t    status_at;
} slc_test_step_t;

typedef struct {
    uint32_t          caps;
    uint32_t          mcaps;
    uint16_t          status;
    uint16_t          cur;      /* flags of the last OK or EOF written */
    uint16_t          warn;     /* warnings of the OKs and EOFs written */
    uint8_t           sseq;     /* next server sequence id */
    int               nsteps;
    slc_test_step_t   steps[SLC_TEST_MAXSTEPS];
} slc_test_script_t;

typedef struct {
    const char  *name;
    size_t       max;           /* largest chunk, 0: a whole step */
    uint64_t     seed;
} slc_test_mode_t;

static const slc_test_mode_t  slc_test_modes[] = {
    { "whole", 0, 0 },
    { "bytes", 1, 0 },
    { "rand3", 3, 11 },
    { "rand9", 9, 12 },
    { "rand64", 64, 13 },
    { "rand4k", 4096, 14 },
    { "rand1m", 1 << 20, 15 },
};

static slc_test_script_t  slc_test_sc;
static uint64_t           slc_test_rng_state;


/* --- helpers ----------------------------------------------------------- */

static uint64_t
slc_test_rand(void)
{
    uint64_t  x = slc_test_rng_state;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    slc_test_rng_state = x;
    return x;
}

static void
slc_test_seed(uint64_t seed)
{
    slc_test_rng_state = seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
}

static void *
slc_test_grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) {
        return p;
    }
    *cap = slc_max(need, *cap * 2);
    p = realloc(p, *cap * size);
    ck_assert_ptr_nonnull(p);
    return p;
}

static size_t
slc_test_le(uint8_t *p, uint64_t v, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        p[i] = (uint8_t) (v >> (8 * i));
    }
    return n;
}

static size_t
slc_test_lenenc(uint8_t *p, uint64_t v)
{
    if (v < 0xfb) {
        p[0] = (uint8_t) v;
        return 1;
    }
    if (v <= 0xffff) {
        p[0] = 0xfc;
        return 1 + slc_test_le(p + 1, v, 2);
    }
    if (v <= 0xffffff) {
        p[0] = 0xfd;
        return 1 + slc_test_le(p + 1, v, 3);
    }
    p[0] = 0xfe;
    return 1 + slc_test_le(p + 1, v, 8);
}

static int
slc_test_deprecate_eof(void)
{
    return (slc_test_sc.caps & SLC_CLIENT_DEPRECATE_EOF) != 0;
}


/* --- script building --------------------------------------------------- */

static void
slc_test_begin(uint32_t caps, uint16_t status)
{
    int  i;

    for (i = 0; i < slc_test_sc.nsteps; i++) {
        free(slc_test_sc.steps[i].buf);
        free(slc_test_sc.steps[i].ends);
    }
    memset(&slc_test_sc, 0, sizeof(slc_test_sc));
    slc_test_sc.caps = caps;
    slc_test_sc.status = status;
    slc_test_sc.cur = status;
    slc_test_sc.sseq = 1;
}

/* The open step of that direction, or a new one. */
static slc_test_step_t *
slc_test_step(int dir)
{
    slc_test_script_t  *sc = &slc_test_sc;
    slc_test_step_t    *s;

    if (sc->nsteps > 0) {
        s = &sc->steps[sc->nsteps - 1];
        if (s->dir == dir && !s->closed) {
            return s;
        }
    }
    ck_assert_int_lt(sc->nsteps, SLC_TEST_MAXSTEPS);
    s = &sc->steps[sc->nsteps++];
    s->dir = dir;
    s->idle = SLC_TEST_ANY;
    s->trans = SLC_TEST_ANY;
    return s;
}

static void
slc_test_append(slc_test_step_t *s, const void *p, size_t n)
{
    s->buf = slc_test_grow(s->buf, &s->cap, s->len + n, 1);
    if (n > 0) {
        memcpy(s->buf + s->len, p, n);
    }
    s->len += n;
}

/* A message, split into 0xffffff-byte packets as the protocol does;
   returns the sequence id after it. */
static uint8_t
slc_test_msg(int dir, uint8_t seq, const void *payload, size_t n)
{
    slc_test_step_t  *s = slc_test_step(dir);
    const uint8_t    *p = payload;
    uint8_t           h[SLC_MYSQL_HDR_LEN];
    size_t            c;

    do {
        c = slc_min(n, (size_t) SLC_TEST_MAX);
        slc_test_le(h, c, 3);
        h[3] = seq++;
        slc_test_append(s, h, sizeof(h));
        slc_test_append(s, p, c);
        p += c;
        n -= c;
    } while (c == SLC_TEST_MAX);

    s->ends = slc_test_grow(s->ends, &s->cape, s->nends + 1, sizeof(size_t));
    s->ends[s->nends++] = s->len;
    return seq;
}

/* Close the current step: the state expected once it is all fed. */
static void
slc_test_expect(int idle, int trans)
{
    slc_test_step_t  *s;

    ck_assert_int_gt(slc_test_sc.nsteps, 0);
    s = &slc_test_sc.steps[slc_test_sc.nsteps - 1];
    s->idle = idle;
    s->trans = trans;
    s->closed = 1;
}

/* And what slc_mysql_reply_t says of the packet that ended the response:
   its first byte, its warnings and where its status flags are. */
static void
slc_test_expect_end(uint8_t last, uint16_t warnings, uint8_t status_at)
{
    slc_test_step_t  *s;

    ck_assert_int_gt(slc_test_sc.nsteps, 0);
    s = &slc_test_sc.steps[slc_test_sc.nsteps - 1];
    ck_assert(s->closed);
    s->end = 1;
    s->last = last;
    s->warnings = warnings;
    s->status_at = status_at;
}

/* The OKs and EOFs written from now on carry n warnings. */
static void
slc_test_warnings(uint16_t n)
{
    slc_test_sc.warn = n;
}

static void
slc_test_cli(uint8_t seq, const void *p, size_t n)
{
    slc_test_msg(SLC_TEST_CLI, seq, p, n);
}

static void
slc_test_srv(const void *p, size_t n)
{
    slc_test_sc.sseq = slc_test_msg(SLC_TEST_SRV, slc_test_sc.sseq, p, n);
}

/* A command: one byte and its argument. */
static void
slc_test_cmd(uint8_t cmd, const void *arg, size_t n)
{
    uint8_t  *p = malloc(n + 1);

    ck_assert_ptr_nonnull(p);
    p[0] = cmd;
    memcpy(p + 1, arg, n);
    slc_test_cli(0, p, n + 1);
    free(p);
    slc_test_sc.sseq = 1;
}

static void
slc_test_query(const char *sql)
{
    slc_test_cmd(SLC_COM_QUERY, sql, strlen(sql));
}

static void
slc_test_ok_ex(uint8_t hdr, uint64_t affected, uint64_t id, uint16_t status,
    size_t info)
{
    uint8_t  p[64 + 256];
    size_t   n = 0;

    ck_assert_uint_le(info, 256);
    p[n++] = hdr;
    n += slc_test_lenenc(p + n, affected);
    n += slc_test_lenenc(p + n, id);
    n += slc_test_le(p + n, status, 2);
    n += slc_test_le(p + n, slc_test_sc.warn, 2);
    slc_test_sc.cur = status;
    memset(p + n, 'i', info);
    slc_test_srv(p, n + info);
}

static void
slc_test_ok(uint16_t status)
{
    slc_test_ok_ex(SLC_MYSQL_OK, 0, 0, status, 0);
}

static void
slc_test_err(void)
{
    slc_test_srv(SLC_TEST_BYTES(0xff, 0x28, 0x04, '#', '4', '2', '0', '0',
                                '0', 'b', 'a', 'd'));
}

static void
slc_test_eof(uint16_t status)
{
    uint8_t  p[5] = { 0xfe, 0, 0, 0, 0 };

    slc_test_le(p + 1, slc_test_sc.warn, 2);
    slc_test_le(p + 3, status, 2);
    slc_test_srv(p, sizeof(p));
    slc_test_sc.cur = status;
}

/* The end of a result: EOF, or an OK with 0xfe header under DEPRECATE_EOF. */
static void
slc_test_term(uint16_t status)
{
    if (slc_test_deprecate_eof()) {
        slc_test_ok_ex(SLC_MYSQL_EOF, 0, 0, status, 0);
    } else {
        slc_test_eof(status);
    }
}

/* The same with an affected-rows count, which only the OK form carries. */
static void
slc_test_term_rows(uint64_t rows, uint16_t status)
{
    if (slc_test_deprecate_eof()) {
        slc_test_ok_ex(SLC_MYSQL_EOF, rows, 0, status, 0);
    } else {
        slc_test_eof(status);
    }
}

static void
slc_test_defs(unsigned n)
{
    static const uint8_t  def[] = {
        3, 'd', 'e', 'f', 1, 'd', 1, 't', 1, 't', 1, 'c', 1, 'c',
        0x0c, 0x21, 0x00, 0x0b, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00,
        0x00, 0x00, 0x00
    };

    while (n-- > 0) {
        slc_test_srv(def, sizeof(def));
    }
}

/* Definitions, and the EOF that ends them unless DEPRECATE_EOF. */
static void
slc_test_defs_eof(unsigned n)
{
    slc_test_defs(n);
    if (!slc_test_deprecate_eof()) {
        slc_test_eof(slc_test_sc.cur);
    }
}

/* Column count and column definitions of a result set. */
static void
slc_test_meta(unsigned cols)
{
    uint8_t  p[9];

    slc_test_srv(p, slc_test_lenenc(p, cols));
    slc_test_defs_eof(cols);
}

static void
slc_test_prepare_ok(unsigned cols, unsigned params)
{
    uint8_t  p[12] = { 0x00, 7, 0, 0, 0 };

    slc_test_le(p + 5, cols, 2);
    slc_test_le(p + 7, params, 2);
    slc_test_le(p + 10, slc_test_sc.warn, 2);
    slc_test_srv(p, sizeof(p));
}

/* COM_STMT_EXECUTE of statement 1 with these flags and no parameters. */
static void
slc_test_execute(uint8_t flags)
{
    slc_test_cmd(SLC_COM_STMT_EXECUTE,
                 SLC_TEST_BYTES(1, 0, 0, 0, flags, 1, 0, 0, 0));
}


/* --- script running ---------------------------------------------------- */

/* slc_min() evaluates its arguments twice: draw first. */
static size_t
slc_test_chunk(const slc_test_mode_t *m, size_t left)
{
    size_t  n;

    if (m->max == 0) {
        return left;
    }
    n = 1 + (size_t) (slc_test_rand() % m->max);
    return slc_min(left, n);
}

/* What the observer (slc_test_seen.h), installed for every scripted run,
   was shown of server step s (i) fed from `before`: the bytes as fed,
   and one piece with `end` when the step leaves the tracker idle. */
static void
slc_test_seen_check(const slc_mysql_track_t *t, const slc_test_step_t *s,
    const slc_test_mode_t *m, int i, size_t before)
{
    const slc_test_seen_t *o = t->observe_data;
    int                    idle = slc_mysql_track_idle(t);

    if (o->bad != NULL) {
        ck_abort_msg("%s: step %d: observer: %s", m->name, i, o->bad);
    }
    if (t->broken) {
        return;                         /* it shows nothing more */
    }
    if (o->len - before != s->len
        || (s->len > 0 && memcmp(o->buf + before, s->buf, s->len) != 0))
    {
        ck_abort_msg("%s: step %d: the observer rebuilt %zu bytes, not "
                     "the %zu fed", m->name, i, o->len - before, s->len);
    }
    if (s->len > 0 && o->ends != (idle ? 1 : 0)) {
        ck_abort_msg("%s: step %d: %d pieces with end, the tracker %s",
                     m->name, i, o->ends, idle ? "idle" : "busy");
    }
}

/* Plain ifs rather than ck_assert: these run per byte, and a passing
   ck_assert still reports a mark point to the parent. */
static void
slc_test_run_step(slc_mysql_track_t *t, const slc_test_step_t *s,
    const slc_test_mode_t *m, int i)
{
    slc_test_seen_t *o = t->observe_data;
    size_t           off = 0, e = 0, n, before = o->len;
    int              rc;

    o->step_end = s->buf + s->len;
    o->ends = 0;
    while (off < s->len) {
        n = slc_test_chunk(m, s->len - off);
        rc = (s->dir == SLC_TEST_CLI)
             ? slc_mysql_track_client(t, s->buf + off, n)
             : slc_mysql_track_server(t, s->buf + off, n);
        if (rc != SLC_OK) {
            ck_abort_msg("%s: step %d: feeding failed", m->name, i);
        }
        off += n;
        while (e < s->nends && s->ends[e] < off) {
            e++;
        }
        if (off < s->len && (e == s->nends || s->ends[e] != off)
            && slc_mysql_track_idle(t))
        {
            ck_abort_msg("%s: step %d: idle inside a message at %zu",
                         m->name, i, off);
        }
    }
    if (s->idle != SLC_TEST_ANY && slc_mysql_track_idle(t) != s->idle) {
        ck_abort_msg("%s: step %d: idle is %d", m->name, i, !s->idle);
    }
    if (s->trans != SLC_TEST_ANY && slc_mysql_track_in_trans(t) != s->trans)
    {
        ck_abort_msg("%s: step %d: in_trans is %d", m->name, i, !s->trans);
    }
    if (s->end && (t->reply.last != s->last
                   || t->reply.warnings != s->warnings
                   || t->reply.status_at != s->status_at))
    {
        ck_abort_msg("%s: step %d: end 0x%02x, warnings %u, flags at %u; "
                     "not 0x%02x, %u, %u", m->name, i, t->reply.last,
                     t->reply.warnings, t->reply.status_at, s->last,
                     s->warnings, s->status_at);
    }
    if (s->dir != SLC_TEST_CLI) {
        slc_test_seen_check(t, s, m, i, before);
    }
}

static void
slc_test_run_mode(const slc_test_mode_t *m)
{
    slc_mysql_track_t  t = { 0 };
    slc_test_seen_t    o = { 0 };
    int                i;

    slc_mysql_track_init(&t, slc_test_sc.caps, slc_test_sc.status);
    slc_mysql_track_set_mariadb_caps(&t, slc_test_sc.mcaps);
    slc_mysql_track_observe(&t, slc_test_observe, &o);
    slc_test_seed(m->seed);
    for (i = 0; i < slc_test_sc.nsteps; i++) {
        slc_test_run_step(&t, &slc_test_sc.steps[i], m, i);
    }
    slc_mysql_track_free(&t);
    free(o.buf);
}

/* Buffers are trimmed to size first, so ASan sees any read past a chunk
   that ends a step. */
static void
slc_test_run(void)
{
    slc_test_step_t  *s;
    size_t            i;
    int               k;

    for (k = 0; k < slc_test_sc.nsteps; k++) {
        s = &slc_test_sc.steps[k];
        s->buf = realloc(s->buf, s->len);
        s->cap = s->len;
        ck_assert(s->len == 0 || s->buf != NULL);
    }
    for (i = 0; i < slc_nelems(slc_test_modes); i++) {
        slc_test_run_mode(&slc_test_modes[i]);
    }
    slc_test_begin(0, 0);
}

/* _i of a loop test: 0 classic EOF, 1 DEPRECATE_EOF. */
static uint32_t
slc_test_caps(int deprecate_eof)
{
    return SLC_TEST_CAPS | (deprecate_eof ? SLC_CLIENT_DEPRECATE_EOF : 0);
}


/* --- simple responses -------------------------------------------------- */

START_TEST(test_ok_in_trans)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_query("BEGIN");
    slc_test_expect(0, 0);
    slc_test_ok(SLC_TEST_TRANS);
    slc_test_expect(1, 1);

    /* wide lenenc fields before the flags, and an info string long enough
       to outlast the head the tracker keeps */
    slc_test_query("INSERT INTO t SELECT * FROM u");
    slc_test_expect(0, 1);
    slc_test_ok_ex(SLC_MYSQL_OK, 0x123456, 0x10000000000ull, SLC_TEST_TRANS,
                   100);
    slc_test_expect(1, 1);
    slc_test_query("UPDATE t SET a = 1");
    slc_test_ok_ex(SLC_MYSQL_OK, 300, 0xfb, SLC_TEST_TRANS, 3);
    slc_test_expect(1, 1);

    slc_test_query("COMMIT");
    slc_test_expect(0, 1);
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_run();
}
END_TEST

START_TEST(test_err)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_TRANS);

    slc_test_query("SELEC 1");
    slc_test_expect(0, 1);
    slc_test_err();
    slc_test_expect(1, 1);          /* an ERR carries no flags */

    /* an error after the rows began */
    slc_test_query("SELECT a FROM t");
    slc_test_meta(1);
    slc_test_srv(SLC_TEST_BYTES(0x01, '1'));
    slc_test_expect(0, 1);
    slc_test_err();
    slc_test_expect(1, 1);
    slc_test_run();
}
END_TEST

START_TEST(test_simple_commands)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_cmd(SLC_COM_PING, "", 0);
    slc_test_expect(0, 0);
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_cmd(SLC_COM_INIT_DB, "test", 4);
    slc_test_ok(SLC_TEST_TRANS);
    slc_test_expect(1, 1);
    slc_test_cmd(SLC_COM_SET_OPTION, SLC_TEST_BYTES(1, 0));
    slc_test_expect(0, 1);
    slc_test_term(SLC_TEST_AC);     /* COM_SET_OPTION answers with EOF */
    slc_test_expect(1, 0);
    slc_test_cmd(SLC_COM_STMT_RESET, SLC_TEST_BYTES(1, 0, 0, 0));
    slc_test_err();
    slc_test_expect(1, 0);
    slc_test_cmd(SLC_COM_RESET_CONNECTION, "", 0);
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_run();
}
END_TEST

START_TEST(test_statistics)
{
    static const char  stats[] = "Uptime: 42  Threads: 1  Questions: 7  "
                                 "Slow queries: 0  Opens: 17";

    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);
    slc_test_cmd(0x09, "", 0);
    slc_test_expect(0, 0);
    slc_test_srv(stats, sizeof(stats) - 1);
    slc_test_expect(1, 0);
    slc_test_cmd(0x09, "", 0);
    slc_test_srv("", 0);
    slc_test_expect(1, 0);
    slc_test_run();
}
END_TEST


/* --- result sets ------------------------------------------------------- */

/* Rows whose first byte, alone, would read as OK, NULL or EOF. */
static void
slc_test_tricky_rows(void)
{
    uint8_t  big[3 + 300 + 1];

    slc_test_srv(SLC_TEST_BYTES(0x00, 0x01, 'x'));       /* '', 'x' */
    slc_test_srv(SLC_TEST_BYTES(0xfb, 0xfb));           /* NULL, NULL */
    slc_test_srv(SLC_TEST_BYTES(0x00, 0x00));           /* '', '' */
    slc_test_srv(SLC_TEST_BYTES(0x00, 0x06, 0, 0, 0, 2, 0, 0));
    slc_test_srv(SLC_TEST_BYTES(0xfb, 0x04, 0xfe, 0, 0, 0));
    big[0] = 0xfc;                                      /* 300 bytes, '' */
    slc_test_le(big + 1, 300, 2);
    memset(big + 3, 0xfe, 300);
    big[303] = 0x00;
    slc_test_srv(big, sizeof(big));
}

START_TEST(test_text_resultset)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_query("SELECT a, b FROM t");
    slc_test_expect(0, 0);
    slc_test_meta(2);
    slc_test_expect(0, 0);
    slc_test_tricky_rows();
    slc_test_expect(0, 0);
    slc_test_term(SLC_TEST_TRANS);
    slc_test_expect(1, 1);

    /* no rows at all */
    slc_test_query("SELECT a FROM t WHERE 0");
    slc_test_meta(1);
    slc_test_expect(0, 1);
    slc_test_term(SLC_TEST_AC);
    slc_test_expect(1, 0);

    /* the flags follow a wide affected-rows field in an OK terminator */
    slc_test_query("BEGIN; SELECT a FROM t; COMMIT");
    slc_test_ok(SLC_TEST_TRANS | SLC_TEST_MORE);
    slc_test_meta(1);
    slc_test_srv(SLC_TEST_BYTES(0x01, '1'));
    slc_test_term_rows(300, SLC_TEST_TRANS | SLC_TEST_MORE);
    slc_test_expect(0, 1);
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_query("SELECT a FROM t");
    slc_test_meta(1);
    slc_test_srv(SLC_TEST_BYTES(0x01, '1'));
    slc_test_term_rows(0x10000, SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_run();
}
END_TEST

START_TEST(test_field_list)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_cmd(SLC_COM_FIELD_LIST, "t\0", 2);
    slc_test_defs(3);
    slc_test_expect(0, 0);
    slc_test_term(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_cmd(SLC_COM_FIELD_LIST, "nope\0", 5);
    slc_test_err();
    slc_test_expect(1, 0);
    slc_test_run();
}
END_TEST

/*
 * A text row with a 16 MiB string (first byte 0xfe) travels as a full
 * 0xffffff packet and a short one; a row of exactly 0xffffff bytes is
 * followed by an empty packet.  Neither is a terminator, and neither is a
 * command when the client sends one that long.
 */
START_TEST(test_big_row)
{
    size_t    n = 0x1000000, plen = 1 + 8 + n;
    uint8_t  *p = calloc(1, plen);

    ck_assert_ptr_nonnull(p);
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_query("SELECT big FROM t");
    slc_test_meta(1);
    p[0] = 0xfe;
    slc_test_le(p + 1, n, 8);
    slc_test_srv(p, plen);
    slc_test_expect(0, 0);
    p[0] = 0xfd;
    slc_test_le(p + 1, SLC_TEST_MAX - 4, 3);
    memset(p + 4, 0, 8);
    slc_test_srv(p, SLC_TEST_MAX);
    slc_test_expect(0, 0);
    slc_test_term(SLC_TEST_TRANS);
    slc_test_expect(1, 1);

    /* long data has no reply, yet idle waits for the message's end */
    memset(p, 0, plen);
    p[0] = SLC_COM_STMT_SEND_LONG_DATA;
    slc_test_cli(0, p, plen);
    slc_test_expect(1, 1);

    p[0] = SLC_COM_QUERY;
    slc_test_cli(0, p, plen);
    slc_test_expect(0, 1);
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_cli(0, p, SLC_TEST_MAX);
    slc_test_expect(0, 0);
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);
    free(p);
    slc_test_run();
}
END_TEST

START_TEST(test_multi_results)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_query("CALL p()");
    slc_test_meta(1);
    slc_test_srv(SLC_TEST_BYTES(0x01, '1'));
    slc_test_term(SLC_TEST_AC | SLC_TEST_MORE);
    slc_test_expect(0, 0);
    slc_test_meta(2);
    slc_test_srv(SLC_TEST_BYTES(0x00, 0xfb));
    slc_test_term(SLC_TEST_TRANS | SLC_TEST_MORE);
    slc_test_expect(0, 1);
    slc_test_ok(SLC_TEST_TRANS);
    slc_test_expect(1, 1);

    /* OKs chained by MORE_RESULTS, then a result set */
    slc_test_query("SET @a = 1; COMMIT; SELECT @a");
    slc_test_ok(SLC_TEST_TRANS | SLC_TEST_MORE);
    slc_test_ok(SLC_TEST_AC | SLC_TEST_MORE);
    slc_test_expect(0, 0);
    slc_test_meta(1);
    slc_test_srv(SLC_TEST_BYTES(0x01, '1'));
    slc_test_term(SLC_TEST_AC);
    slc_test_expect(1, 0);

    /* an error stops the statements that follow */
    slc_test_query("DO 1; DO x; DO 3");
    slc_test_ok(SLC_TEST_AC | SLC_TEST_MORE);
    slc_test_expect(0, 0);
    slc_test_err();
    slc_test_expect(1, 0);
    slc_test_run();
}
END_TEST


/* --- prepared statements ----------------------------------------------- */

START_TEST(test_prepare)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_cmd(SLC_COM_STMT_PREPARE, "DO 1", 4);
    slc_test_expect(0, 0);
    slc_test_prepare_ok(0, 0);
    slc_test_expect(1, 0);

    slc_test_cmd(SLC_COM_STMT_PREPARE, "DO ?, ?", 7);
    slc_test_prepare_ok(0, 2);
    slc_test_expect(0, 0);
    slc_test_defs_eof(2);
    slc_test_expect(1, 0);

    slc_test_cmd(SLC_COM_STMT_PREPARE, "SELECT a, b, c FROM t", 21);
    slc_test_prepare_ok(3, 0);
    slc_test_defs(2);
    slc_test_expect(0, 0);
    slc_test_defs_eof(1);
    slc_test_expect(1, 0);

    slc_test_cmd(SLC_COM_STMT_PREPARE, "SELECT a FROM t WHERE ? < ?", 27);
    slc_test_prepare_ok(1, 2);
    slc_test_defs_eof(2);
    slc_test_expect(0, 0);
    slc_test_defs_eof(1);
    slc_test_expect(1, 0);

    slc_test_cmd(SLC_COM_STMT_PREPARE, "SELEC", 5);
    slc_test_err();
    slc_test_expect(1, 0);
    slc_test_run();
}
END_TEST

/* Binary rows always start with 0x00, short ones included. */
static void
slc_test_binary_rows(unsigned n)
{
    while (n-- > 0) {
        slc_test_srv(SLC_TEST_BYTES(0x00, 0x00, 0x2a, 0, 0, 0));
    }
}

START_TEST(test_execute)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_execute(0);
    slc_test_expect(0, 0);
    slc_test_ok(SLC_TEST_TRANS);
    slc_test_expect(1, 1);

    slc_test_execute(0);
    slc_test_meta(1);
    slc_test_binary_rows(3);
    slc_test_expect(0, 1);
    slc_test_term(SLC_TEST_TRANS);
    slc_test_expect(1, 1);
    slc_test_run();
}
END_TEST

START_TEST(test_cursor_fetch)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_execute(0x01);
    slc_test_expect(0, 0);
    slc_test_srv(SLC_TEST_BYTES(0x01));
    slc_test_defs(1);
    slc_test_expect(0, 0);
    slc_test_term(SLC_TEST_AC | SLC_TEST_CURSOR);
    slc_test_expect(1, 0);

    slc_test_cmd(0x1c, SLC_TEST_BYTES(7, 0, 0, 0, 2, 0, 0, 0));
    slc_test_expect(0, 0);
    slc_test_binary_rows(2);
    slc_test_expect(0, 0);
    slc_test_term(SLC_TEST_AC | SLC_TEST_CURSOR);
    slc_test_expect(1, 0);

    slc_test_cmd(0x1c, SLC_TEST_BYTES(7, 0, 0, 0, 2, 0, 0, 0));
    slc_test_binary_rows(1);
    slc_test_term(SLC_TEST_AC | SLC_TEST_LAST_ROW);
    slc_test_expect(1, 0);

    slc_test_cmd(0x1c, SLC_TEST_BYTES(7, 0, 0, 0, 2, 0, 0, 0));
    slc_test_err();
    slc_test_expect(1, 0);

    /* a cursor was asked for but not opened: the rows come now */
    slc_test_execute(0x01);
    slc_test_meta(1);
    slc_test_binary_rows(2);
    slc_test_expect(0, 0);
    slc_test_term(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_run();
}
END_TEST

/*
 * A cursor inside a stored procedure sets CURSOR_EXISTS although the client
 * asked for none; the rows still follow the EOF then (MariaDB connector/C
 * learned that the hard way).
 */
START_TEST(test_cursor_flag_without_request)
{
    slc_test_begin(slc_test_caps(0), SLC_TEST_AC);

    slc_test_execute(0);
    slc_test_srv(SLC_TEST_BYTES(0x01));
    slc_test_defs(1);
    slc_test_eof(SLC_TEST_AC | SLC_TEST_CURSOR);
    slc_test_expect(0, 0);
    slc_test_binary_rows(2);
    slc_test_eof(SLC_TEST_AC);
    slc_test_expect(1, 0);

    slc_test_query("CALL p()");
    slc_test_srv(SLC_TEST_BYTES(0x01));
    slc_test_defs(1);
    slc_test_eof(SLC_TEST_AC | SLC_TEST_CURSOR);
    slc_test_expect(0, 0);
    slc_test_srv(SLC_TEST_BYTES(0x01, '1'));
    slc_test_eof(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_run();
}
END_TEST

START_TEST(test_no_response)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_cmd(SLC_COM_STMT_SEND_LONG_DATA,
                 SLC_TEST_BYTES(7, 0, 0, 0, 0, 0, 'a', 'b', 'c'));
    slc_test_expect(1, 0);
    slc_test_cmd(SLC_COM_STMT_CLOSE, SLC_TEST_BYTES(7, 0, 0, 0));
    slc_test_expect(1, 0);

    /* behind a command that does have one */
    slc_test_cmd(SLC_COM_STMT_PREPARE, "DO 1", 4);
    slc_test_cmd(SLC_COM_STMT_CLOSE, SLC_TEST_BYTES(8, 0, 0, 0));
    slc_test_expect(0, 0);
    slc_test_prepare_ok(0, 0);
    slc_test_expect(1, 0);

    slc_test_cmd(SLC_COM_QUIT, "", 0);
    slc_test_expect(1, 0);
    slc_test_run();
}
END_TEST

/* MariaDB CACHE_METADATA: a "metadata follows" byte after the count. */
START_TEST(test_cache_metadata)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);
    slc_test_sc.mcaps = SLC_MARIADB_CLIENT_CACHE_METADATA;

    slc_test_execute(0);
    slc_test_srv(SLC_TEST_BYTES(0x02, 0x00));
    if (!slc_test_deprecate_eof()) {
        slc_test_eof(SLC_TEST_AC);
    }
    slc_test_expect(0, 0);
    slc_test_binary_rows(2);
    slc_test_term(SLC_TEST_AC);
    slc_test_expect(1, 0);

    slc_test_execute(0);
    slc_test_srv(SLC_TEST_BYTES(0x01, 0x01));
    slc_test_defs_eof(1);
    slc_test_binary_rows(1);
    slc_test_expect(0, 0);
    slc_test_term(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_run();
}
END_TEST


/* --- the response's end (slc_mysql_reply_t) ----------------------------- */

#define SLC_TEST_OK   SLC_MYSQL_OK
#define SLC_TEST_EOF  SLC_MYSQL_EOF
#define SLC_TEST_ERR  SLC_MYSQL_ERR

/*
 * The packet that ends a response tells the command layer what it was,
 * its warnings and where its status flags are: an OK's after two lenenc
 * fields, a classic EOF's at 3.  An ERR has neither, and nothing of an
 * earlier OK or EOF stays.
 */
START_TEST(test_end_ok)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_query("INSERT INTO t VALUES (1)");
    slc_test_warnings(2);
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_OK, 2, 3);     /* 0 rows, id 0, flags */

    /* wide lenenc fields before the flags, an info string after */
    slc_test_query("INSERT INTO t SELECT * FROM u");
    slc_test_warnings(0x1234);
    slc_test_ok_ex(SLC_MYSQL_OK, 0x123456, 0x10000000000ull, SLC_TEST_AC,
                   100);
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_OK, 0x1234, 1 + 4 + 9);

    slc_test_query("SELEC 1");
    slc_test_err();
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_ERR, 0, 0);

    /* an OK cut short after its flags, then before them */
    slc_test_cmd(SLC_COM_PING, "", 0);
    slc_test_srv(SLC_TEST_BYTES(0x00, 0x00, 0x00, 0x02, 0x00));
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_OK, 0, 3);
    slc_test_cmd(SLC_COM_PING, "", 0);
    slc_test_srv(SLC_TEST_BYTES(0x00, 0x00, 0x00));
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_OK, 0, 0);
    slc_test_run();
}
END_TEST

/* An EOF that ends a response: a classic one, or under DEPRECATE_EOF an
   OK with its header (its flags after the affected rows). */
START_TEST(test_end_eof)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_warnings(1);
    slc_test_cmd(SLC_COM_SET_OPTION, SLC_TEST_BYTES(1, 0));
    slc_test_term(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_EOF, 1, 3);

    slc_test_cmd(SLC_COM_FIELD_LIST, "t\0", 2);
    slc_test_defs(2);
    slc_test_warnings(4);
    slc_test_term_rows(300, SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_EOF, 4, _i ? 1 + 3 + 1 : 3);
    slc_test_run();
}
END_TEST

START_TEST(test_end_text_result)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    /* the definitions' EOF is not the end; rows that start with 0x00 or
       0xfe are no OK or EOF */
    slc_test_query("SELECT a, b FROM t");
    slc_test_warnings(7);
    slc_test_meta(2);
    slc_test_tricky_rows();
    slc_test_warnings(2);
    slc_test_term_rows(300, SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_EOF, 2, _i ? 1 + 3 + 1 : 3);

    /* an ERR after the rows ends it */
    slc_test_query("SELECT a FROM t");
    slc_test_warnings(7);
    slc_test_meta(1);
    slc_test_srv(SLC_TEST_BYTES(0x01, '1'));
    slc_test_expect(0, 0);
    slc_test_err();
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_ERR, 0, 0);
    slc_test_run();
}
END_TEST

START_TEST(test_end_binary_result)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_execute(0);
    slc_test_warnings(7);
    slc_test_meta(1);
    slc_test_binary_rows(3);
    slc_test_warnings(1);
    slc_test_term(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_EOF, 1, 3);

    slc_test_execute(0);
    slc_test_warnings(5);
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_OK, 5, 3);
    slc_test_run();
}
END_TEST

/* Several results: the last one's end is the response's. */
START_TEST(test_end_multi_results)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_query("CALL p()");
    slc_test_warnings(1);
    slc_test_meta(1);
    slc_test_srv(SLC_TEST_BYTES(0x01, '1'));
    slc_test_term(SLC_TEST_AC | SLC_TEST_MORE);
    slc_test_expect(0, 0);
    slc_test_warnings(3);
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_OK, 3, 3);

    slc_test_query("DO 1; SELECT a FROM t");
    slc_test_warnings(9);
    slc_test_ok(SLC_TEST_AC | SLC_TEST_MORE);
    slc_test_warnings(0);
    slc_test_meta(1);
    slc_test_srv(SLC_TEST_BYTES(0x01, '1'));
    slc_test_term_rows(0x10000, SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_EOF, 0, _i ? 1 + 4 + 1 : 3);

    slc_test_query("DO 1; DO x");
    slc_test_warnings(2);
    slc_test_ok(SLC_TEST_AC | SLC_TEST_MORE);
    slc_test_err();
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_ERR, 0, 0);
    slc_test_run();
}
END_TEST

/* A PREPARE_OK carries warnings but no flags; the definitions' EOF, if
   any, ends the response (under DEPRECATE_EOF, a definition does). */
START_TEST(test_end_prepare)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_query("DO 1");
    slc_test_warnings(2);
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_cmd(SLC_COM_STMT_PREPARE, "DO 1", 4);
    slc_test_warnings(0);
    slc_test_prepare_ok(0, 0);
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_OK, 0, 0);

    slc_test_cmd(SLC_COM_STMT_PREPARE, "SELECT a FROM t WHERE ? < ?", 27);
    slc_test_warnings(5);
    slc_test_prepare_ok(1, 2);
    slc_test_defs_eof(2);
    slc_test_warnings(6);
    slc_test_defs_eof(1);
    slc_test_expect(1, 0);
    if (_i) {
        slc_test_expect_end(3, 5, 0);   /* "def": a definition's lenenc */
    } else {
        slc_test_expect_end(SLC_TEST_EOF, 6, 3);
    }

    slc_test_cmd(SLC_COM_STMT_PREPARE, "SELEC", 5);
    slc_test_err();
    slc_test_expect(1, 0);
    slc_test_expect_end(SLC_TEST_ERR, 0, 0);
    slc_test_run();
}
END_TEST


/* --- exchanges with more client packets -------------------------------- */

/*
 * 300 data packets wrap the sequence id through 0, and their first bytes
 * look like commands: only the empty packet ends the upload.
 */
START_TEST(test_local_infile)
{
    uint8_t  data[16];
    int      i;

    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_query("LOAD DATA LOCAL INFILE 'x' INTO TABLE t");
    slc_test_srv(SLC_TEST_BYTES(0xfb, 'x'));
    slc_test_expect(0, 0);
    for (i = 0; i < 300; i++) {
        memset(data, 'a' + i % 26, sizeof(data));
        data[0] = (uint8_t) i;
        slc_test_cli((uint8_t) (2 + i), data, sizeof(data));
    }
    slc_test_expect(0, 0);
    slc_test_cli((uint8_t) (2 + i), "", 0);
    slc_test_expect(0, 0);
    slc_test_ok_ex(SLC_MYSQL_OK, 300, 0, SLC_TEST_TRANS, 40);
    slc_test_expect(1, 1);

    slc_test_query("COMMIT");
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);

    /* the file could not be read: an empty upload, then ERR */
    slc_test_query("LOAD DATA LOCAL INFILE 'y' INTO TABLE t");
    slc_test_srv(SLC_TEST_BYTES(0xfb, 'y'));
    slc_test_cli(2, "", 0);
    slc_test_expect(0, 0);
    slc_test_err();
    slc_test_expect(1, 0);

    /* should the server answer before the upload ends, the upload still
       has to end before the session is idle */
    slc_test_query("LOAD DATA LOCAL INFILE 'z' INTO TABLE t");
    slc_test_srv(SLC_TEST_BYTES(0xfb, 'z'));
    slc_test_cli(2, "abc", 3);
    slc_test_err();
    slc_test_expect(0, 0);
    slc_test_cli(3, "", 0);
    slc_test_expect(1, 0);
    slc_test_run();
}
END_TEST

START_TEST(test_change_user)
{
    static const uint8_t  scramble[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
    static const char     sw[] = "\xfe" "mysql_native_password\0"
                                 "abcdefghijklmnopqrst";
    static const char     sw2[] = "\xfe" "caching_sha2_password\0"
                                  "abcdefghijklmnopqrst";

    slc_test_begin(slc_test_caps(_i), SLC_TEST_TRANS);

    slc_test_cmd(SLC_COM_CHANGE_USER, "bob\0\0test\0", 10);
    slc_test_expect(0, 1);
    slc_test_srv(sw, sizeof(sw));
    slc_test_expect(0, 1);
    slc_test_cli(3, scramble, sizeof(scramble));
    slc_test_expect(0, 1);
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);

    /* caching_sha2: switch, fast auth fails, full auth, then OK */
    slc_test_cmd(SLC_COM_CHANGE_USER, "amy\0\0test\0", 10);
    slc_test_srv(sw2, sizeof(sw2));
    slc_test_cli(3, scramble, sizeof(scramble));
    slc_test_srv(SLC_TEST_BYTES(0x01, 0x04));
    slc_test_expect(0, 0);
    slc_test_cli(5, "secret", 7);
    slc_test_expect(0, 0);
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);

    slc_test_cmd(SLC_COM_CHANGE_USER, "eve\0\0test\0", 10);
    slc_test_srv(sw, sizeof(sw));
    slc_test_cli(3, scramble, sizeof(scramble));
    slc_test_err();
    slc_test_expect(1, 0);
    slc_test_run();
}
END_TEST

START_TEST(test_pipelined)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_query("SELECT 1");
    slc_test_query("SELECT 2");
    slc_test_expect(0, 0);
    slc_test_meta(1);
    slc_test_srv(SLC_TEST_BYTES(0x01, '1'));
    slc_test_term(SLC_TEST_AC);
    slc_test_expect(0, 0);
    slc_test_meta(1);
    slc_test_srv(SLC_TEST_BYTES(0x01, '2'));
    slc_test_term(SLC_TEST_AC);
    slc_test_expect(1, 0);

    /* MariaDB's prepare + execute(-1), and a third command, in one go */
    slc_test_cmd(SLC_COM_STMT_PREPARE, "SELECT a FROM t", 15);
    slc_test_cmd(SLC_COM_STMT_EXECUTE,
                 SLC_TEST_BYTES(0xff, 0xff, 0xff, 0xff, 0, 1, 0, 0, 0));
    slc_test_cmd(SLC_COM_PING, "", 0);
    slc_test_expect(0, 0);
    slc_test_prepare_ok(1, 0);
    slc_test_defs_eof(1);
    slc_test_meta(1);
    slc_test_binary_rows(1);
    slc_test_term(SLC_TEST_AC);
    slc_test_expect(0, 0);
    slc_test_ok(SLC_TEST_TRANS);
    slc_test_expect(1, 1);
    slc_test_run();
}
END_TEST

START_TEST(test_progress_report)
{
    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    slc_test_query("ALTER TABLE t ADD c INT");
    slc_test_srv(SLC_TEST_BYTES(0xff, 0xff, 0xff, 0x01, 0x01, 0x02,
                                0x10, 0x27, 0x00, 0x01, 'x'));
    slc_test_expect(0, 0);
    slc_test_srv(SLC_TEST_BYTES(0xff, 0xff, 0xff, 0x01, 0x02, 0x02,
                                0x10, 0x27, 0x00, 0x01, 'x'));
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);
    slc_test_run();
}
END_TEST


/* --- partial input and what cannot be followed ------------------------- */

START_TEST(test_half_received)
{
    static const uint8_t  ping[] = { 1, 0, 0, 0, SLC_COM_PING };
    static const uint8_t  ok[] = { 7, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0 };
    uint8_t               okl[4 + 7 + 60] = { 7 + 60, 0, 0, 1,
                                              0, 0, 0, 2, 0, 0, 0 };
    slc_mysql_track_t     t = { 0 };

    slc_mysql_track_init(&t, SLC_TEST_CAPS, SLC_TEST_AC);
    ck_assert_int_eq(slc_mysql_track_idle(&t), 1);

    /* a client header cut short: nothing pending yet, still not idle */
    slc_mysql_track_client(&t, ping, 2);
    ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
    slc_mysql_track_client(&t, ping + 2, 2);
    ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
    slc_mysql_track_client(&t, ping + 4, 1);
    ck_assert_int_eq(slc_mysql_track_idle(&t), 0);

    slc_mysql_track_server(&t, ok, 3);
    ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
    slc_mysql_track_server(&t, ok + 3, 5);
    ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
    slc_mysql_track_server(&t, ok + 8, sizeof(ok) - 8);
    ck_assert_int_eq(slc_mysql_track_idle(&t), 1);

    /* the OK is understood after its head, yet the packet goes on */
    slc_mysql_track_client(&t, ping, sizeof(ping));
    memset(okl + 11, 'i', 60);
    slc_mysql_track_server(&t, okl, 4 + 30);
    ck_assert_uint_eq(t.npend, 0);
    ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
    slc_mysql_track_server(&t, okl + 34, sizeof(okl) - 34);
    ck_assert_int_eq(slc_mysql_track_idle(&t), 1);
    slc_mysql_track_free(&t);
}
END_TEST

/* A chunk in the middle of a huge packet is skipped without looking. */
START_TEST(test_skip_large_payload)
{
    static uint8_t      zeros[1 << 16];
    uint8_t             hdr[4] = { 0xff, 0xff, 0xff, 0 };
    slc_mysql_track_t   t = { 0 };
    size_t              left = SLC_TEST_MAX, n;

    slc_mysql_track_init(&t, SLC_TEST_CAPS, SLC_TEST_AC);
    zeros[0] = SLC_COM_QUERY;
    slc_mysql_track_client(&t, hdr, sizeof(hdr));
    while (left > 0) {
        n = slc_min(left, sizeof(zeros));
        slc_mysql_track_client(&t, zeros, n);
        left -= n;
        ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
        zeros[0] = 0;
    }
    ck_assert_uint_eq(t.npend, 1);
    hdr[0] = hdr[1] = hdr[2] = 0;
    hdr[3] = 1;
    slc_mysql_track_client(&t, hdr, sizeof(hdr));
    ck_assert_uint_eq(t.npend, 1);
    slc_mysql_track_server(&t, (const uint8_t *) "\7\0\0\1\0\0\0\2\0\0\0", 11);
    ck_assert_int_eq(slc_mysql_track_idle(&t), 1);
    slc_mysql_track_free(&t);
}
END_TEST

/* Deeper than any fixed queue: one run of a kind, then kinds that change
   at every command, result sets among them. */
START_TEST(test_deep_pipeline)
{
    int  i;

    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    for (i = 0; i < 1000; i++) {
        slc_test_query("SELECT 1");
    }
    for (i = 0; i < 1000; i++) {
        slc_test_cmd(SLC_COM_PING, "", 0);
    }
    slc_test_expect(0, 0);
    for (i = 0; i < 1000; i++) {
        slc_test_meta(1);
        slc_test_srv(SLC_TEST_BYTES(0x01, '1'));
        slc_test_term(SLC_TEST_AC);
    }
    slc_test_expect(0, 0);
    for (i = 0; i < 999; i++) {
        slc_test_ok(SLC_TEST_AC);
    }
    slc_test_expect(0, 0);
    slc_test_ok(SLC_TEST_AC);
    slc_test_expect(1, 0);

    for (i = 0; i < 1000; i++) {
        slc_test_query("SELECT 1");
        slc_test_cmd(SLC_COM_PING, "", 0);
        slc_test_cmd(SLC_COM_STMT_PREPARE, "SELECT ?", 8);
        slc_test_execute(0);
        slc_test_cmd(SLC_COM_STMT_CLOSE, SLC_TEST_BYTES(7, 0, 0, 0));
    }
    slc_test_expect(0, 0);
    for (i = 0; i < 1000; i++) {
        slc_test_meta(1);
        slc_test_srv(SLC_TEST_BYTES(0x01, '1'));
        slc_test_term(SLC_TEST_AC);
        slc_test_ok(SLC_TEST_AC);
        slc_test_prepare_ok(1, 1);
        slc_test_defs_eof(1);
        slc_test_defs_eof(1);
        slc_test_meta(1);
        slc_test_binary_rows(2);
        slc_test_term(i == 999 ? SLC_TEST_TRANS : SLC_TEST_AC);
    }
    slc_test_expect(1, 1);
    slc_test_run();
}
END_TEST

/* The ring grows with the pipeline, is bounded, and shrinks once drained. */
START_TEST(test_pipeline_memory)
{
    static const uint8_t  ping[] = { 1, 0, 0, 0, SLC_COM_PING };
    static const uint8_t  query[] = { 2, 0, 0, 0, SLC_COM_QUERY, '1' };
    static const uint8_t  ok[] = { 7, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0 };
    slc_mysql_track_t     t = { 0 };
    uint32_t              i;

    slc_mysql_track_init(&t, SLC_TEST_CAPS, SLC_TEST_AC);
    for (i = 0; i < 100000; i++) {
        slc_mysql_track_client(&t, ping, sizeof(ping));
    }
    ck_assert_uint_eq(t.nruns, 1);
    ck_assert_uint_eq(t.rcap, SLC_MYSQL_TRACK_RUNS);
    for (i = 0; i < 100000; i++) {
        ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
        slc_mysql_track_server(&t, ok, sizeof(ok));
    }
    ck_assert_int_eq(slc_mysql_track_idle(&t), 1);

    /* kinds changing at every command, as deep as the ring allows */
    for (i = 0; i < SLC_MYSQL_TRACK_MAXRUNS; i++) {
        slc_mysql_track_client(&t, (i & 1) ? ping : query,
                               (i & 1) ? sizeof(ping) : sizeof(query));
    }
    ck_assert_uint_eq(t.rcap, SLC_MYSQL_TRACK_MAXRUNS);
    for (i = 0; i < SLC_MYSQL_TRACK_MAXRUNS; i++) {
        ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
        slc_mysql_track_server(&t, ok, sizeof(ok));
    }
    ck_assert_int_eq(slc_mysql_track_idle(&t), 1);
    ck_assert_uint_le(t.rcap, SLC_MYSQL_TRACK_RUNS);

    /* one change of kind more than that: given up, never idle */
    for (i = 0; i <= SLC_MYSQL_TRACK_MAXRUNS; i++) {
        slc_mysql_track_client(&t, (i & 1) ? ping : query,
                               (i & 1) ? sizeof(ping) : sizeof(query));
    }
    for (i = 0; i <= SLC_MYSQL_TRACK_MAXRUNS; i++) {
        slc_mysql_track_server(&t, ok, sizeof(ok));
    }
    ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
    ck_assert_uint_le(t.rcap, SLC_MYSQL_TRACK_MAXRUNS);
    slc_mysql_track_free(&t);
}
END_TEST

/* The server answers a command it does not know with one ERR (1047). */
START_TEST(test_unknown_command)
{
    static const uint8_t  unknown[] = { 0x7f, 0x08, 0x19, 0x1d, 0xf9, 0xfe,
                                        SLC_COM_SLEEP, SLC_COM_TIME };
    size_t                i;

    slc_test_begin(slc_test_caps(_i), SLC_TEST_AC);

    for (i = 0; i < sizeof(unknown); i++) {
        if (unknown[i] == 0x08 || unknown[i] == 0x19) {
            continue;                   /* COM_SHUTDOWN, COM_STMT_CLOSE */
        }
        slc_test_cmd(unknown[i], "xyz", i % 4);
        slc_test_expect(0, 0);
        slc_test_srv(SLC_TEST_BYTES(0xff, 0x17, 0x04, '#', '0', '8', 'S',
                                    '0', '1', 'U', 'n', 'k'));
        slc_test_expect(1, 0);
    }

    /* an empty command is read as COM_SLEEP */
    slc_test_cli(0, "", 0);
    slc_test_expect(0, 0);
    slc_test_err();
    slc_test_expect(1, 0);

    /* pipelined with a query, and followed as before afterwards */
    slc_test_cmd(0x7f, "", 0);
    slc_test_query("SELECT 1");
    slc_test_expect(0, 0);
    slc_test_err();
    slc_test_expect(0, 0);
    slc_test_meta(1);
    slc_test_srv(SLC_TEST_BYTES(0x01, '1'));
    slc_test_term(SLC_TEST_TRANS);
    slc_test_expect(1, 1);
    slc_test_run();
}
END_TEST

/* COM_STMT_CLOSE then COM_QUIT in one chunk, as sysbench and JDBC send
   them: the tracker notices the QUIT however the bytes are split. */
START_TEST(test_quit_after_close)
{
    static const uint8_t  both[] = { 5, 0, 0, 0, SLC_COM_STMT_CLOSE, 1, 0,
                                     0, 0, 1, 0, 0, 0, SLC_COM_QUIT };
    static const uint8_t  close[] = { 5, 0, 0, 0, SLC_COM_STMT_CLOSE, 1, 0,
                                      0, 0 };
    static const uint8_t  dump[] = { 11, 0, 0, 0, 0x12, 4, 0, 0, 0, 0, 0,
                                     1, 0, 0, 0 };
    static const uint8_t  quit_arg[] = { 2, 0, 0, 0, SLC_COM_QUERY,
                                         SLC_COM_QUIT };
    slc_mysql_track_t     t = { 0 };
    size_t                cut;

    for (cut = 0; cut <= sizeof(both); cut++) {
        slc_mysql_track_init(&t, SLC_TEST_CAPS, SLC_TEST_AC);
        slc_mysql_track_client(&t, both, cut);
        ck_assert_int_eq(slc_mysql_track_quit_sent(&t),
                         cut == sizeof(both));
        slc_mysql_track_client(&t, both + cut, sizeof(both) - cut);
        ck_assert_int_eq(slc_mysql_track_quit_sent(&t), 1);
        ck_assert_int_eq(slc_mysql_track_idle(&t), 1);
        slc_mysql_track_free(&t);
    }

    /* a 0x01 that is no command is no QUIT */
    slc_mysql_track_init(&t, SLC_TEST_CAPS, SLC_TEST_AC);
    slc_mysql_track_client(&t, close, sizeof(close));
    slc_mysql_track_client(&t, quit_arg, sizeof(quit_arg));
    ck_assert_int_eq(slc_mysql_track_quit_sent(&t), 0);
    slc_mysql_track_free(&t);

    /* a tracker that gave up still sees it */
    slc_mysql_track_init(&t, SLC_TEST_CAPS, SLC_TEST_AC);
    slc_mysql_track_client(&t, dump, sizeof(dump));
    slc_mysql_track_client(&t, both, sizeof(both));
    ck_assert_int_eq(slc_mysql_track_quit_sent(&t), 1);
    ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
    slc_mysql_track_free(&t);
}
END_TEST

START_TEST(test_cannot_follow)
{
    static const uint8_t  dump[] = { 11, 0, 0, 0, 0x12, 4, 0, 0, 0, 0, 0,
                                     1, 0, 0, 0 };
    static const uint8_t  ping[] = { 1, 0, 0, 0, SLC_COM_PING };
    static const uint8_t  ok[] = { 7, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0 };
    static const uint8_t  multi[] = { 1, 0, 0, 0, 0xfe };
    slc_mysql_track_t     t = { 0 };

    /* COM_BINLOG_DUMP */
    slc_mysql_track_init(&t, SLC_TEST_CAPS, SLC_TEST_AC);
    slc_mysql_track_client(&t, dump, sizeof(dump));
    slc_mysql_track_server(&t, ok, sizeof(ok));
    ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
    slc_mysql_track_free(&t);

    /* COM_MULTI, where negotiated: several responses in one */
    slc_mysql_track_init(&t, SLC_TEST_CAPS, SLC_TEST_AC);
    slc_mysql_track_set_mariadb_caps(&t, SLC_MARIADB_CLIENT_COM_MULTI);
    slc_mysql_track_client(&t, multi, sizeof(multi));
    slc_mysql_track_server(&t, ok, sizeof(ok));
    ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
    slc_mysql_track_free(&t);

    /* a reply nobody asked for */
    slc_mysql_track_init(&t, SLC_TEST_CAPS, SLC_TEST_AC);
    slc_mysql_track_server(&t, ok, sizeof(ok));
    slc_mysql_track_client(&t, ping, sizeof(ping));
    slc_mysql_track_server(&t, ok, sizeof(ok));
    ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
    slc_mysql_track_free(&t);

    /* a client packet out of sequence */
    slc_mysql_track_init(&t, SLC_TEST_CAPS, SLC_TEST_AC);
    slc_mysql_track_client(&t, (const uint8_t *) "\1\0\0\3\x0e", 5);
    ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
    slc_mysql_track_free(&t);

    /* compressed framing */
    slc_mysql_track_init(&t, SLC_TEST_CAPS | SLC_CLIENT_COMPRESS, 0);
    ck_assert_int_eq(slc_mysql_track_idle(&t), 0);
}
END_TEST


/* --- fuzz -------------------------------------------------------------- */

static void
slc_test_fuzz_feed(slc_mysql_track_t *t, int dir, const uint8_t *p,
    size_t len)
{
    size_t  n;

    while (len > 0) {
        n = 1 + (size_t) (slc_test_rand() % 37);
        n = slc_min(len, n);
        if (dir == SLC_TEST_CLI) {
            slc_mysql_track_client(t, p, n);
        } else {
            slc_mysql_track_server(t, p, n);
        }
        p += n;
        len -= n;
        if (t->rcap > SLC_MYSQL_TRACK_MAXRUNS || t->nruns > t->rcap
            || t->nruns > t->npend
            || (slc_mysql_track_idle(t) && t->npend != 0))
        {
            ck_abort_msg("tracker invariant broken");
        }
    }
}

static void
slc_test_fuzz_init(slc_mysql_track_t *t)
{
    uint64_t  r = slc_test_rand();

    slc_mysql_track_init(t, SLC_TEST_CAPS
                            | ((r & 1) ? SLC_CLIENT_DEPRECATE_EOF : 0),
                         (uint16_t) (r >> 8));
    slc_mysql_track_set_mariadb_caps(t, (r & 2)
                                        ? SLC_MARIADB_CLIENT_CACHE_METADATA
                                        : 0);
}

/* Random bytes, copied to a buffer of their exact size for ASan. */
START_TEST(test_fuzz_random)
{
    slc_mysql_track_t  t = { 0 };
    uint8_t           *p;
    size_t             len, k;
    int                i, j;

    memset(&t, 0, sizeof(t));
    slc_test_seed(1234);
    for (i = 0; i < 4000; i++) {
        slc_test_fuzz_init(&t);
        for (j = 0; j < 4; j++) {
            len = (size_t) (slc_test_rand() % 300);
            p = malloc(len + (len == 0));
            ck_assert_ptr_nonnull(p);
            for (k = 0; k < len; k++) {
                p[k] = (uint8_t) slc_test_rand();
            }
            slc_test_fuzz_feed(&t, (int) (slc_test_rand() & 1), p, len);
            free(p);
        }
    }
    slc_mysql_track_free(&t);
}
END_TEST

/* Well-framed packets of interesting bytes reach far deeper states. */
static size_t
slc_test_fuzz_packet(uint8_t *p, int dir)
{
    static const uint8_t  bytes[] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x09,
                                      0x0e, 0x11, 0x16, 0x17, 0x19, 0x1c,
                                      0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff };
    size_t                plen = (size_t) (slc_test_rand() % 24), i;
    uint64_t              r = slc_test_rand();

    slc_test_le(p, plen, 3);
    p[3] = (dir == SLC_TEST_CLI && (r & 3)) ? 0 : (uint8_t) (r >> 8);
    for (i = 0; i < plen; i++) {
        r = slc_test_rand();
        p[4 + i] = (r & 1) ? bytes[(r >> 1) % sizeof(bytes)]
                           : (uint8_t) (r >> 8);
    }
    return 4 + plen;
}

START_TEST(test_fuzz_packets)
{
    slc_mysql_track_t  t = { 0 };
    uint8_t            buf[64], *p;
    size_t             n;
    int                i, j, dir;

    memset(&t, 0, sizeof(t));
    slc_test_seed(99);
    for (i = 0; i < 4000; i++) {
        slc_test_fuzz_init(&t);
        for (j = 0; j < 40; j++) {
            dir = (slc_test_rand() % 3) == 0 ? SLC_TEST_CLI : SLC_TEST_SRV;
            n = slc_test_fuzz_packet(buf, dir);
            if (j == 39) {
                n = (size_t) (slc_test_rand() % (n + 1));   /* cut */
            }
            p = malloc(n + (n == 0));
            ck_assert_ptr_nonnull(p);
            memcpy(p, buf, n);
            slc_test_fuzz_feed(&t, dir, p, n);
            free(p);
        }
    }
    slc_mysql_track_free(&t);
}
END_TEST

/* A real exchange with a few bytes flipped. */
START_TEST(test_fuzz_mutated)
{
    slc_test_step_t    st[SLC_TEST_MAXSTEPS];
    slc_mysql_track_t  t = { 0 };
    uint8_t           *p;
    int                nst, i, k, m;

    slc_test_begin(SLC_TEST_CAPS, SLC_TEST_AC);
    slc_test_query("SELECT a, b FROM t");
    slc_test_meta(2);
    slc_test_tricky_rows();
    slc_test_term(SLC_TEST_AC | SLC_TEST_MORE);
    slc_test_ok(SLC_TEST_AC);
    slc_test_cmd(SLC_COM_STMT_PREPARE, "SELECT ?", 8);
    slc_test_prepare_ok(1, 1);
    slc_test_defs_eof(1);
    slc_test_defs_eof(1);
    slc_test_execute(1);
    slc_test_meta(1);
    slc_test_eof(SLC_TEST_AC | SLC_TEST_CURSOR);
    slc_test_query("LOAD DATA LOCAL INFILE 'x' INTO TABLE t");
    slc_test_srv(SLC_TEST_BYTES(0xfb, 'x'));
    slc_test_cli(2, "abc", 3);
    slc_test_cli(3, "", 0);
    slc_test_ok(SLC_TEST_AC);
    nst = slc_test_sc.nsteps;
    memcpy(st, slc_test_sc.steps, sizeof(st));

    memset(&t, 0, sizeof(t));
    slc_test_seed(7);
    for (i = 0; i < 3000; i++) {
        slc_test_fuzz_init(&t);
        for (k = 0; k < nst; k++) {
            p = malloc(st[k].len);
            ck_assert_ptr_nonnull(p);
            memcpy(p, st[k].buf, st[k].len);
            for (m = (int) (slc_test_rand() % 3); m > 0; m--) {
                p[slc_test_rand() % st[k].len] = (uint8_t) slc_test_rand();
            }
            slc_test_fuzz_feed(&t, st[k].dir, p, st[k].len);
            free(p);
        }
    }
    slc_mysql_track_free(&t);
    slc_test_begin(0, 0);
}
END_TEST


static Suite *
slc_track_suite(void)
{
    Suite  *s = suite_create("mysql_track");
    TCase  *tc = tcase_create("responses");
    TCase  *big = tcase_create("big");
    TCase  *fz = tcase_create("fuzz");

    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_ok_in_trans, 0, 2);
    tcase_add_loop_test(tc, test_err, 0, 2);
    tcase_add_loop_test(tc, test_simple_commands, 0, 2);
    tcase_add_loop_test(tc, test_statistics, 0, 2);
    tcase_add_loop_test(tc, test_text_resultset, 0, 2);
    tcase_add_loop_test(tc, test_field_list, 0, 2);
    tcase_add_loop_test(tc, test_multi_results, 0, 2);
    tcase_add_loop_test(tc, test_prepare, 0, 2);
    tcase_add_loop_test(tc, test_execute, 0, 2);
    tcase_add_loop_test(tc, test_cursor_fetch, 0, 2);
    tcase_add_loop_test(tc, test_end_ok, 0, 2);
    tcase_add_loop_test(tc, test_end_eof, 0, 2);
    tcase_add_loop_test(tc, test_end_text_result, 0, 2);
    tcase_add_loop_test(tc, test_end_binary_result, 0, 2);
    tcase_add_loop_test(tc, test_end_multi_results, 0, 2);
    tcase_add_loop_test(tc, test_end_prepare, 0, 2);
    tcase_add_test(tc, test_cursor_flag_without_request);
    tcase_add_loop_test(tc, test_no_response, 0, 2);
    tcase_add_loop_test(tc, test_cache_metadata, 0, 2);
    tcase_add_loop_test(tc, test_local_infile, 0, 2);
    tcase_add_loop_test(tc, test_change_user, 0, 2);
    tcase_add_loop_test(tc, test_pipelined, 0, 2);
    tcase_add_loop_test(tc, test_progress_report, 0, 2);
    tcase_add_test(tc, test_half_received);
    tcase_add_test(tc, test_skip_large_payload);
    tcase_add_loop_test(tc, test_deep_pipeline, 0, 2);
    tcase_add_test(tc, test_pipeline_memory);
    tcase_add_loop_test(tc, test_unknown_command, 0, 2);
    tcase_add_test(tc, test_quit_after_close);
    tcase_add_test(tc, test_cannot_follow);
    suite_add_tcase(s, tc);

    tcase_set_timeout(big, 600);
    tcase_add_loop_test(big, test_big_row, 0, 2);
    suite_add_tcase(s, big);

    tcase_set_timeout(fz, 300);
    tcase_add_test(fz, test_fuzz_random);
    tcase_add_test(fz, test_fuzz_packets);
    tcase_add_test(fz, test_fuzz_mutated);
    suite_add_tcase(s, fz);
    return s;
}

int
main(void)
{

    return slc_check_run(slc_track_suite());
}
