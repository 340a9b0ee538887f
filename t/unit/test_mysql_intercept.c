/*
 * The client command scanner and the KILL recogniser
 * (slc_mysql_intercept.h).  KILL statements come from a golden table; the
 * scanner gets single calls whose answer is spelled out, then scripted
 * inputs fed whole, in every two-chunk split and byte by byte, the way
 * slc_proxycmd_scan feeds it: released bytes are gone, held bytes are
 * presented again with the next chunk behind them.  Every split must
 * release the same bytes and stop at the same commands.  Small inputs are
 * copied to exact-size heap buffers so that ASan sees any overread.
 */

#include "slc_test.h"

#include "slc_core.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_intercept.h"

#define SLC_TEST_WATCH    (SLC_WATCH_KILL | SLC_WATCH_CHANGE_USER)
#define SLC_TEST_HELD     16384           /* max_held unless a test says */
#define SLC_TEST_COPY     4096            /* copy pending bytes up to this */
#define SLC_TEST_MAXSTOP  16


/* --- KILL statements ---------------------------------------------------- */

#define SLC_TEST_NO  SLC_ERROR, 0, 0, NULL

static const struct {
    const char  *q;
    int          rc;
    uint64_t     id;
    int          query;
    const char  *mode;
} slc_test_kills[] = {
    { "KILL 2147483650", SLC_OK, 2147483650u, 0, "" },
    { "kill query 2147483650;", SLC_OK, 2147483650u, 1, "" },
    { "KILL HARD QUERY 5", SLC_OK, 5, 1, "HARD " },
    { "KILL SOFT CONNECTION 7", SLC_OK, 7, 0, "SOFT " },
    { "  /* c */ KILL/*x*/QUERY/**/12 ; ", SLC_OK, 12, 1, "" },
    { "KILL 12 -- trailing", SLC_OK, 12, 0, "" },
    { "KILL 12 # x", SLC_OK, 12, 0, "" },
    { "KILL 12 #", SLC_OK, 12, 0, "" },
    { "KILL 12 --\tx\n", SLC_OK, 12, 0, "" },
    { "KILL 12 -- ", SLC_OK, 12, 0, "" },
    { "-- x\nKILL 1", SLC_OK, 1, 0, "" },
    { "#x\nkill 1", SLC_OK, 1, 0, "" },
    { "kill 1\n", SLC_OK, 1, 0, "" },
    { "\t\r\nKILL\n\tCONNECTION\r\n3\n", SLC_OK, 3, 0, "" },
    { "KiLl QuErY 9", SLC_OK, 9, 1, "" },
    { "kill hard 9", SLC_OK, 9, 0, "HARD " },
    { "Kill Soft Query 9", SLC_OK, 9, 1, "SOFT " },
    { "KILL connection 4294967295", SLC_OK, 4294967295u, 0, "" },
    { "KILL 4294967296", SLC_OK, 4294967296ull, 0, "" },
    { "KILL 0", SLC_OK, 0, 0, "" },
    { "KILL 007", SLC_OK, 7, 0, "" },
    { "KILL 1234567890123456789", SLC_OK, 1234567890123456789ull, 0, "" },
    { "KILL 5 ;", SLC_OK, 5, 0, "" },
    { "KILL 5/* c */;/* d */", SLC_OK, 5, 0, "" },
    { "KILL QUERY ID 5", SLC_TEST_NO },
    { "KILL USER bob", SLC_TEST_NO },
    { "KILL 5+1", SLC_TEST_NO },
    { "KILL 12a", SLC_TEST_NO },
    { "KILL 12_", SLC_TEST_NO },
    { "KILL 5.0", SLC_TEST_NO },
    { "KILL 0x10", SLC_TEST_NO },
    { "KILL -5", SLC_TEST_NO },
    { "KILL", SLC_TEST_NO },
    { "KILL ;", SLC_TEST_NO },
    { "KILL QUERY", SLC_TEST_NO },
    { "KILL 123456789012345678901", SLC_TEST_NO },      /* 21 digits */
    { "KILL 12345678901234567890", SLC_TEST_NO },       /* 20 digits */
    { "KILLQUERY 5", SLC_TEST_NO },
    { "KILL5", SLC_TEST_NO },
    { "KILL QUERY5", SLC_TEST_NO },
    { "KILL QUERY HARD 5", SLC_TEST_NO },
    { "KILL CONNECTION QUERY 5", SLC_TEST_NO },
    { "KILL CONNECTION_ID()", SLC_TEST_NO },
    { "KILL (5)", SLC_TEST_NO },
    { "KILL `5`", SLC_TEST_NO },
    { "SELECT 1", SLC_TEST_NO },
    { "", SLC_TEST_NO },
    { "   ", SLC_TEST_NO },
    { "/* only */", SLC_TEST_NO },
    { "KILL 5; SELECT 1", SLC_TEST_NO },
    { "KILL 5;;", SLC_TEST_NO },
    { ";KILL 5", SLC_TEST_NO },
    { "KILL 5 /*", SLC_TEST_NO },
    { "KILL 5 /* x *", SLC_TEST_NO },
    { "KILL 5 -", SLC_TEST_NO },
    { "KILL 5 --", SLC_TEST_NO },
    { "KILL 5 --x", SLC_TEST_NO },
    { "KILL /* 5", SLC_TEST_NO },
    /*
     * Executable comments hold what the server runs: the statement as a
     * whole, or a word of it that changes what is killed.  Either way it
     * is not a KILL we may rewrite (the rewrite drops the comment).
     */
    { "/*!50000 KILL 5 */", SLC_TEST_NO },
    { "/*!KILL 5*/", SLC_TEST_NO },
    { "KILL /*!50000 QUERY */ 5", SLC_TEST_NO },
    { "KILL /*M!100100 QUERY */ 5", SLC_TEST_NO },
    { "KILL 5 /*!, 6 */", SLC_TEST_NO },
};

START_TEST(test_kill_parse)
{
    const char        *q = slc_test_kills[_i].q;
    size_t             n = strlen(q);
    uint8_t           *buf = malloc(n > 0 ? n : 1);
    slc_mysql_kill_t   k;
    int                rc;

    ck_assert_ptr_nonnull(buf);
    memcpy(buf, q, n);                  /* no NUL: ASan sees an overread */
    rc = slc_mysql_kill_parse(buf, n, &k);
    ck_assert_msg(rc == slc_test_kills[_i].rc, "\"%s\": rc %d", q, rc);
    if (rc == SLC_OK) {
        ck_assert_msg(k.id == slc_test_kills[_i].id, "\"%s\": id %llu", q,
                      (unsigned long long) k.id);
        ck_assert_int_eq(k.query, slc_test_kills[_i].query);
        ck_assert_str_eq(k.mode, slc_test_kills[_i].mode);
        /* what parses is recognised early too */
        ck_assert_int_eq(slc_mysql_kill_maybe(buf, n), 2);
    }
    free(buf);
}
END_TEST

/* Every prefix of a statement that parses may be a KILL (never 0). */
START_TEST(test_kill_maybe_prefixes)
{
    const char  *q = slc_test_kills[_i].q;
    size_t       n = strlen(q), m;
    uint8_t     *buf;
    int          v;

    if (slc_test_kills[_i].rc != SLC_OK) {
        return;
    }
    for (m = 0; m <= n; m++) {
        buf = malloc(m > 0 ? m : 1);
        ck_assert_ptr_nonnull(buf);
        memcpy(buf, q, m);
        v = slc_mysql_kill_maybe(buf, m);
        ck_assert_msg(v != 0, "\"%.*s\" of \"%s\" said no", (int) m, q, q);
        free(buf);
    }
}
END_TEST

static const struct {
    const char  *q;
    int          v;
} slc_test_maybes[] = {
    { "", 1 },
    { "  ", 1 },
    { "/", 1 },
    { "/*", 1 },
    { "/* unterminated", 1 },
    { "/* c */", 1 },
    { "/* c */ k", 1 },
    { "K", 1 },
    { "kil", 1 },
    { "kill", 1 },
    { "KILL", 1 },
    { "kill ", 2 },
    { "KILL\t", 2 },
    { "KILL/", 2 },
    { "kill 5", 2 },
    { "KILL5", 0 },                     /* one word: an identifier */
    { "KILL_", 0 },
    { "killer", 0 },
    { "kilo", 0 },
    { "select", 0 },
    { "s", 0 },
    { "x", 0 },
    { ";", 0 },
    { "-", 1 },                         /* "-- " may come */
    { "--", 1 },
    { "-- ", 1 },
    { "-x", 0 },
    { "--x", 0 },
    { "#", 1 },
    { "#x", 1 },
    { "-- x\nKILL 1", 2 },
    { "#x\nkill 1", 2 },
    { "#x\nselect 1", 0 },
    { "  /* c */ KILL/*x*/QUERY/**/12", 2 },
};

START_TEST(test_kill_maybe)
{
    const char  *q = slc_test_maybes[_i].q;
    size_t       n = strlen(q);
    uint8_t     *buf = malloc(n > 0 ? n : 1);
    int          v;

    ck_assert_ptr_nonnull(buf);
    memcpy(buf, q, n);
    v = slc_mysql_kill_maybe(buf, n);
    ck_assert_msg(v == slc_test_maybes[_i].v, "\"%s\": %d, want %d", q, v,
                  slc_test_maybes[_i].v);
    free(buf);
}
END_TEST


/* --- wire builder ------------------------------------------------------- */

typedef struct {
    uint8_t  *p;
    size_t    len;
    size_t    cap;
} slc_test_wire_t;

static void
slc_test_wire_grow(slc_test_wire_t *w, size_t n)
{
    if (w->len + n <= w->cap) {
        return;
    }
    w->cap = (w->len + n) * 2;
    w->p = realloc(w->p, w->cap);
    ck_assert_ptr_nonnull(w->p);
}

/* A packet of payload `pl` (plen bytes; NULL: filled with 'x');
   returns its offset. */
static size_t
slc_test_pkt(slc_test_wire_t *w, uint8_t seq, const void *pl, size_t plen)
{
    size_t  off = w->len;

    slc_test_wire_grow(w, SLC_MYSQL_HDR_LEN + plen);
    slc_mysql_hdr_write(w->p + off, (uint32_t) plen, seq);
    if (pl != NULL) {
        memcpy(w->p + off + SLC_MYSQL_HDR_LEN, pl, plen);
    } else {
        memset(w->p + off + SLC_MYSQL_HDR_LEN, 'x', plen);
    }
    w->len += SLC_MYSQL_HDR_LEN + plen;
    return off;
}

/* A one-byte command followed by text, seq 0. */
static size_t
slc_test_cmd(slc_test_wire_t *w, uint8_t cmd, const char *text)
{
    size_t   n = strlen(text);
    uint8_t  *pl = malloc(n + 1);
    size_t   off;

    ck_assert_ptr_nonnull(pl);
    pl[0] = cmd;
    memcpy(pl + 1, text, n);
    off = slc_test_pkt(w, 0, pl, n + 1);
    free(pl);
    return off;
}

static size_t
slc_test_query(slc_test_wire_t *w, const char *q)
{
    return slc_test_cmd(w, SLC_COM_QUERY, q);
}

/* A packet of plen bytes whose payload starts with `first`. */
static size_t
slc_test_fill(slc_test_wire_t *w, uint8_t seq, uint8_t first, size_t plen)
{
    size_t  off = slc_test_pkt(w, seq, NULL, plen);

    if (plen > 0) {
        w->p[off + SLC_MYSQL_HDR_LEN] = first;
    }
    return off;
}

/* One scan call on an exact-size copy of p[0..len). */
static size_t
slc_test_scan1(slc_mysql_scan_t *sc, int infile, unsigned watch,
    const uint8_t *p, size_t len, size_t max_held, int *stop)
{
    uint8_t  *buf = NULL;
    size_t    n;

    if (len <= SLC_TEST_COPY) {
        buf = malloc(len > 0 ? len : 1);
        ck_assert_ptr_nonnull(buf);
        memcpy(buf, p, len);
        p = buf;
    }
    n = slc_mysql_scan_client(sc, infile, watch, p, len, max_held, stop);
    free(buf);
    ck_assert_uint_le(n, len);
    return n;
}


/* --- single calls ------------------------------------------------------- */

START_TEST(test_scan_select)
{
    slc_test_wire_t   w = { 0 };
    slc_mysql_scan_t  sc = { 0 };
    int               stop = -1;

    slc_test_query(&w, "SELECT 1");
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p, w.len,
                                     SLC_TEST_HELD, &stop), w.len);
    ck_assert_int_eq(stop, SLC_SCAN_ALL);
    ck_assert_uint_eq(sc.left, 0);
    free(w.p);
}
END_TEST

START_TEST(test_scan_kill)
{
    slc_test_wire_t   w = { 0 };
    slc_mysql_scan_t  sc = { 0 };
    size_t            second;
    int               stop;

    slc_test_query(&w, "KILL 2147483650");
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p, w.len,
                                     SLC_TEST_HELD, &stop), 0);
    ck_assert_int_eq(stop, SLC_SCAN_CMD);
    ck_assert_int_eq(sc.big, 0);

    /* behind a SELECT: the SELECT goes, the KILL is at its offset */
    w.len = 0;
    slc_test_query(&w, "SELECT 1");
    second = slc_test_query(&w, "kill query 5");
    memset(&sc, 0, sizeof(sc));
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p, w.len,
                                     SLC_TEST_HELD, &stop), second);
    ck_assert_int_eq(stop, SLC_SCAN_CMD);

    /* the KILL cut in the middle: held from its start */
    memset(&sc, 0, sizeof(sc));
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p,
                                     w.len - 3, SLC_TEST_HELD, &stop),
                      second);
    ck_assert_int_eq(stop, SLC_SCAN_MORE);

    /* COM_PROCESS_KILL */
    w.len = 0;
    slc_test_pkt(&w, 0, "\x0c\x02\x00\x00\x80", 5);
    memset(&sc, 0, sizeof(sc));
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p, w.len,
                                     SLC_TEST_HELD, &stop), 0);
    ck_assert_int_eq(stop, SLC_SCAN_CMD);
    free(w.p);
}
END_TEST

START_TEST(test_scan_header_cut)
{
    slc_test_wire_t   w = { 0 };
    slc_mysql_scan_t  sc = { 0 };
    int               stop;

    slc_test_query(&w, "SELECT 1");
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p, 2,
                                     SLC_TEST_HELD, &stop), 0);
    ck_assert_int_eq(stop, SLC_SCAN_MORE);
    /* a whole header of a command: its first byte is still to come */
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p, 4,
                                     SLC_TEST_HELD, &stop), 0);
    ck_assert_int_eq(stop, SLC_SCAN_MORE);
    /* COM_QUERY with no text yet: may still be a KILL */
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p, 5,
                                     SLC_TEST_HELD, &stop), 0);
    ck_assert_int_eq(stop, SLC_SCAN_MORE);
    /* "S": not a KILL, all of it may go */
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p, 6,
                                     SLC_TEST_HELD, &stop), 6);
    ck_assert_int_eq(stop, SLC_SCAN_ALL);
    ck_assert_uint_eq(sc.left, w.len - 6);
    free(w.p);
}
END_TEST

/* An empty packet is never a command: its 4 bytes are all there is. */
START_TEST(test_scan_empty_packet)
{
    slc_test_wire_t   w = { 0 };
    slc_mysql_scan_t  sc = { 0 };
    int               stop;

    slc_test_pkt(&w, 0, NULL, 0);
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p, w.len,
                                     SLC_TEST_HELD, &stop), 4);
    ck_assert_int_eq(stop, SLC_SCAN_ALL);
    free(w.p);
}
END_TEST

/*
 * The empty packet that ends a message of exactly 0xffffff bytes, alone
 * in a read after the big packet went on in an earlier one.
 */
START_TEST(test_scan_empty_after_max)
{
    slc_test_wire_t   w = { 0 };
    slc_mysql_scan_t  sc = { 0 };
    size_t            end;
    int               stop;

    slc_test_fill(&w, 0, SLC_COM_QUERY, SLC_MYSQL_MAX_PAYLOAD);
    end = w.len;
    slc_test_pkt(&w, 1, NULL, 0);
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p, end,
                                     SLC_TEST_HELD, &stop), end);
    ck_assert_int_eq(stop, SLC_SCAN_ALL);
    ck_assert_int_eq(sc.more, 1);
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p + end, 4,
                                     SLC_TEST_HELD, &stop), 4);
    ck_assert_int_eq(stop, SLC_SCAN_ALL);
    ck_assert_int_eq(sc.more, 0);

    /* the same empty packet with seq 0 (a wrapped sequence) */
    memset(&sc, 0, sizeof(sc));
    w.p[end + 3] = 0;
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p, w.len,
                                     SLC_TEST_HELD, &stop), w.len);
    ck_assert_int_eq(stop, SLC_SCAN_ALL);
    free(w.p);
}
END_TEST

/* Too long to hold: a COM_CHANGE_USER is stopped at, a KILL goes on. */
START_TEST(test_scan_over_max_held)
{
    slc_test_wire_t   w = { 0 };
    slc_mysql_scan_t  sc = { 0 };
    size_t            second;
    int               stop;

    slc_test_query(&w, "SELECT 1");
    second = slc_test_fill(&w, 0, SLC_COM_CHANGE_USER, 200);
    /* only part of it has come */
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p, w.len - 50,
                                     100, &stop), second);
    ck_assert_int_eq(stop, SLC_SCAN_CMD);
    ck_assert_int_eq(sc.big, 1);
    /* the next call starts afresh */
    slc_mysql_scan_skip(&sc);
    ck_assert_int_eq(sc.big, 0);

    w.len = 0;
    slc_test_query(&w, "KILL 2147483650 /* padding padding padding */");
    memset(&sc, 0, sizeof(sc));
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p, w.len,
                                     20, &stop), w.len);
    ck_assert_int_eq(stop, SLC_SCAN_ALL);
    ck_assert_int_eq(sc.big, 0);
    memset(&sc, 0, sizeof(sc));
    ck_assert_uint_eq(slc_test_scan1(&sc, 0, SLC_TEST_WATCH, w.p, 12,
                                     20, &stop), 12);
    ck_assert_int_eq(stop, SLC_SCAN_ALL);
    ck_assert_uint_eq(sc.left, w.len - 12);
    free(w.p);
}
END_TEST


/* --- scripted inputs, fed in pieces ------------------------------------- */

typedef struct {
    const char       *name;
    slc_test_wire_t   in;
    size_t            infile_end;   /* LOCAL INFILE data before this */
    unsigned          watch;
    size_t            max_held;
    size_t            stops[SLC_TEST_MAXSTOP];   /* expected, in order */
    size_t            nstops;
    int               big;          /* the last stop is a refused one */
} slc_test_script_t;

typedef struct {
    size_t  released;
    size_t  stops[SLC_TEST_MAXSTOP];
    int     bigs[SLC_TEST_MAXSTOP];
    size_t  nstops;
    int     ended;                  /* stopped for good at a big one */
} slc_test_run_t;

static void
slc_test_stop(slc_test_script_t *t, size_t off)
{
    ck_assert_uint_lt(t->nstops, SLC_TEST_MAXSTOP);
    t->stops[t->nstops++] = off;
}

/*
 * Scan what is pending in in[cons..end) until it is all released or the
 * rest is held; a command stopped at is passed on whole, as
 * slc_proxycmd_pass does.  Returns the new cons.
 */
static size_t
slc_test_drain(const slc_test_script_t *t, slc_mysql_scan_t *sc,
    slc_test_run_t *r, size_t cons, size_t end)
{
    uint32_t  plen;
    uint8_t   seq;
    size_t    n;
    int       stop;

    while (cons < end && !r->ended) {
        n = slc_test_scan1(sc, cons < t->infile_end, t->watch,
                           t->in.p + cons, end - cons, t->max_held, &stop);
        cons += n;
        r->released += n;
        if (stop == SLC_SCAN_ALL) {
            ck_assert_uint_eq(cons, end);
            break;
        }
        if (stop == SLC_SCAN_MORE) {
            ck_assert_uint_gt(end - cons, 0);
            ck_assert_uint_le(end - cons, t->max_held);
            break;
        }
        ck_assert_int_eq(stop, SLC_SCAN_CMD);
        ck_assert_uint_lt(r->nstops, SLC_TEST_MAXSTOP);
        r->stops[r->nstops] = cons;
        r->bigs[r->nstops++] = sc->big;
        if (sc->big) {
            r->ended = 1;               /* the caller fails the session */
            break;
        }
        ck_assert_uint_ge(end - cons, SLC_MYSQL_HDR_LEN);
        slc_mysql_hdr_read(t->in.p + cons, &plen, &seq);
        ck_assert_uint_le(SLC_MYSQL_HDR_LEN + plen, end - cons);
        cons += SLC_MYSQL_HDR_LEN + plen;
        r->released += SLC_MYSQL_HDR_LEN + plen;
        slc_mysql_scan_skip(sc);
    }
    return cons;
}

/* Feed the input in chunks ending at cuts[0..ncuts) and at its end. */
static void
slc_test_feed(const slc_test_script_t *t, const size_t *cuts, size_t ncuts,
    size_t step, slc_test_run_t *r)
{
    slc_mysql_scan_t  sc = { 0 };
    size_t            cons = 0, end = 0, i;

    memset(r, 0, sizeof(*r));
    for (i = 0; i < ncuts; i++) {
        ck_assert_uint_ge(cuts[i], end);
        end = cuts[i];
        cons = slc_test_drain(t, &sc, r, cons, end);
    }
    while (end < t->in.len) {
        end = step > 0 ? slc_min(end + step, t->in.len) : t->in.len;
        cons = slc_test_drain(t, &sc, r, cons, end);
    }
}

static void
slc_test_check_run(const slc_test_script_t *t, const slc_test_run_t *r,
    const char *how, size_t cut)
{
    size_t  i;

    ck_assert_msg(r->nstops == t->nstops, "%s %s %zu: %zu stops, want %zu",
                  t->name, how, cut, r->nstops, t->nstops);
    for (i = 0; i < t->nstops; i++) {
        ck_assert_msg(r->stops[i] == t->stops[i],
                      "%s %s %zu: stop %zu at %zu, want %zu", t->name, how,
                      cut, i, r->stops[i], t->stops[i]);
        ck_assert_int_eq(r->bigs[i], t->big && i + 1 == t->nstops);
    }
    ck_assert_msg(r->released == (t->big ? t->stops[t->nstops - 1]
                                         : t->in.len),
                  "%s %s %zu: released %zu of %zu", t->name, how, cut,
                  r->released, t->in.len);
}

/* The scripts; _i picks one. */
static void
slc_test_script(int which, slc_test_script_t *t)
{
    slc_test_wire_t  *w = &t->in;
    size_t            off;

    memset(t, 0, sizeof(*t));
    t->watch = SLC_TEST_WATCH;
    t->max_held = SLC_TEST_HELD;
    switch (which) {
    case 0:
        t->name = "select";
        slc_test_query(w, "SELECT 1");
        break;
    case 1:
        t->name = "kill";
        slc_test_stop(t, slc_test_query(w, "KILL 2147483650"));
        break;
    case 2:
        t->name = "select, kill, select";
        slc_test_query(w, "SELECT 1");
        slc_test_stop(t, slc_test_query(w, "kill query 2147483650;"));
        slc_test_query(w, "SELECT 2");
        break;
    case 3:
        t->name = "kills behind comments";
        slc_test_stop(t, slc_test_query(w, "-- x\nKILL 1"));
        slc_test_stop(t, slc_test_query(w, "#x\nkill 1"));
        slc_test_stop(t, slc_test_query(w, "/* c */ KILL 7"));
        slc_test_query(w, "/* kill */ SELECT 1");
        break;
    case 4:
        t->name = "near kills";
        slc_test_query(w, "kil");
        slc_test_query(w, "killer");
        slc_test_query(w, "KILL");
        slc_test_query(w, "  ");
        slc_test_query(w, "");
        slc_test_query(w, "-");
        slc_test_query(w, "--");
        slc_test_query(w, "/*!50000 KILL 5 */");
        slc_test_stop(t, slc_test_query(w, "KILL 5"));
        break;
    case 5:
        t->name = "COM_PROCESS_KILL and COM_CHANGE_USER";
        slc_test_cmd(w, SLC_COM_PING, "");
        slc_test_stop(t, slc_test_pkt(w, 0, "\x0c\x02\x00\x00\x80", 5));
        slc_test_stop(t, slc_test_fill(w, 0, SLC_COM_CHANGE_USER, 40));
        slc_test_cmd(w, SLC_COM_INIT_DB, "test");
        break;
    case 6:
        t->name = "seq != 0";
        slc_test_fill(w, 1, SLC_COM_CHANGE_USER, 40);
        slc_test_pkt(w, 3, "\x03KILL 5", 7);
        slc_test_pkt(w, 255, "\x0c\x02\x00\x00\x80", 5);
        slc_test_stop(t, slc_test_query(w, "KILL 5"));
        break;
    case 7:
        t->name = "watch without change user";
        t->watch = SLC_WATCH_KILL;
        slc_test_fill(w, 0, SLC_COM_CHANGE_USER, 40);
        slc_test_stop(t, slc_test_query(w, "KILL 5"));
        slc_test_fill(w, 0, SLC_COM_CHANGE_USER, 40);
        break;
    case 8:
        t->name = "watch nothing";
        t->watch = 0;
        slc_test_fill(w, 0, SLC_COM_CHANGE_USER, 40);
        slc_test_query(w, "KILL 5");
        slc_test_pkt(w, 0, "\x0c\x02\x00\x00\x80", 5);
        break;
    case 9:
        t->name = "local infile";
        slc_test_fill(w, 0, SLC_COM_CHANGE_USER, 30);
        slc_test_fill(w, 0, SLC_COM_PROCESS_KILL, 5);
        slc_test_pkt(w, 0, "\x03KILL 5", 7);
        slc_test_fill(w, 2, SLC_COM_CHANGE_USER, 30);
        slc_test_pkt(w, 0, NULL, 0);
        t->infile_end = w->len;
        slc_test_stop(t, slc_test_fill(w, 0, SLC_COM_CHANGE_USER, 30));
        slc_test_query(w, "SELECT 1");
        break;
    case 10:
        t->name = "change user over max_held";
        t->max_held = 100;
        slc_test_query(w, "SELECT 1");
        slc_test_stop(t, slc_test_fill(w, 0, SLC_COM_CHANGE_USER, 300));
        t->big = 1;
        slc_test_query(w, "SELECT 2");
        break;
    case 11:
        t->name = "kill over max_held";
        t->max_held = 40;
        slc_test_query(w, "KILL 2147483650 /* a comment that is long */");
        slc_test_stop(t, slc_test_query(w, "KILL 2147483650"));
        break;
    case 12:
        /* the continuation of a 0xffffff packet is not a command, even
           when its sequence id has wrapped to 0 */
        t->name = "max packet, continuation 0x11";
        slc_test_fill(w, 0, SLC_COM_QUERY, SLC_MYSQL_MAX_PAYLOAD);
        slc_test_fill(w, 0, SLC_COM_CHANGE_USER, 50);
        slc_test_stop(t, slc_test_query(w, "KILL 5"));
        break;
    case 13:
        t->name = "max packet, empty end";
        slc_test_fill(w, 0, SLC_COM_QUERY, SLC_MYSQL_MAX_PAYLOAD);
        slc_test_pkt(w, 1, NULL, 0);
        slc_test_stop(t, slc_test_fill(w, 0, SLC_COM_CHANGE_USER, 20));
        break;
    case 14:
        t->name = "two max packets";
        slc_test_fill(w, 0, SLC_COM_QUERY, SLC_MYSQL_MAX_PAYLOAD);
        off = slc_test_fill(w, 0, SLC_COM_PROCESS_KILL,
                            SLC_MYSQL_MAX_PAYLOAD);
        (void) off;
        slc_test_fill(w, 0, SLC_COM_CHANGE_USER, 3);
        slc_test_stop(t, slc_test_pkt(w, 0, "\x0c\x05\x00\x00\x00", 5));
        break;
    default:
        ck_abort_msg("no script %d", which);
    }
}

#define SLC_TEST_NSCRIPTS  15

START_TEST(test_scan_whole)
{
    slc_test_script_t  t;
    slc_test_run_t     r;

    slc_test_script(_i, &t);
    slc_test_feed(&t, NULL, 0, 0, &r);
    slc_test_check_run(&t, &r, "whole", 0);
    free(t.in.p);
}
END_TEST

/*
 * Is a cut at `cut` worth trying?  Every one in a small input; in one
 * with 16 MiB packets, those within SLC_TEST_NEAR bytes of a packet edge
 * (inside a long payload the scanner only counts down, and each check
 * costs a round trip to Check's parent).
 */
#define SLC_TEST_NEAR  64

static int
slc_test_near_edge(const slc_test_script_t *t, size_t cut)
{
    size_t    off = 0;
    uint32_t  plen;
    uint8_t   seq;

    if (t->in.len < 100000) {
        return 1;
    }
    while (off < t->in.len) {
        if (cut + SLC_TEST_NEAR >= off && cut <= off + SLC_TEST_NEAR) {
            return 1;
        }
        slc_mysql_hdr_read(t->in.p + off, &plen, &seq);
        off += SLC_MYSQL_HDR_LEN + plen;
    }
    return cut + SLC_TEST_NEAR >= t->in.len;
}

START_TEST(test_scan_two_chunks)
{
    slc_test_script_t  t;
    slc_test_run_t     r;
    size_t             cut, tried = 0;

    slc_test_script(_i, &t);
    for (cut = 1; cut < t.in.len; cut++) {
        if (!slc_test_near_edge(&t, cut)) {
            continue;
        }
        slc_test_feed(&t, &cut, 1, 0, &r);
        slc_test_check_run(&t, &r, "cut at", cut);
        tried++;
    }
    ck_assert_uint_ge(tried, slc_min(t.in.len - 1, 2 * SLC_TEST_NEAR));
    free(t.in.p);
}
END_TEST

START_TEST(test_scan_bytes)
{
    slc_test_script_t  t;
    slc_test_run_t     r;

    slc_test_script(_i, &t);
    if (t.in.len < 100000) {
        slc_test_feed(&t, NULL, 0, 1, &r);
        slc_test_check_run(&t, &r, "bytes", 1);
        slc_test_feed(&t, NULL, 0, 3, &r);
        slc_test_check_run(&t, &r, "by", 3);
    }
    free(t.in.p);
}
END_TEST


static Suite *
slc_intercept_suite(void)
{
    Suite  *s = suite_create("mysql_intercept");
    TCase  *tk = tcase_create("kill");
    TCase  *ts = tcase_create("scan");
    TCase  *tf = tcase_create("feed");

    tcase_add_loop_test(tk, test_kill_parse, 0,
                        (int) slc_nelems(slc_test_kills));
    tcase_add_loop_test(tk, test_kill_maybe_prefixes, 0,
                        (int) slc_nelems(slc_test_kills));
    tcase_add_loop_test(tk, test_kill_maybe, 0,
                        (int) slc_nelems(slc_test_maybes));
    suite_add_tcase(s, tk);

    tcase_add_test(ts, test_scan_select);
    tcase_add_test(ts, test_scan_kill);
    tcase_add_test(ts, test_scan_header_cut);
    tcase_add_test(ts, test_scan_empty_packet);
    tcase_add_test(ts, test_scan_empty_after_max);
    tcase_add_test(ts, test_scan_over_max_held);
    suite_add_tcase(s, ts);

    tcase_set_timeout(tf, 300);
    tcase_add_loop_test(tf, test_scan_whole, 0, SLC_TEST_NSCRIPTS);
    tcase_add_loop_test(tf, test_scan_two_chunks, 0, SLC_TEST_NSCRIPTS);
    tcase_add_loop_test(tf, test_scan_bytes, 0, SLC_TEST_NSCRIPTS);
    suite_add_tcase(s, tf);
    return s;
}

int
main(void)
{

    return slc_check_run(slc_intercept_suite());
}
