/*
 * GTIDs and positions (slc_mysql_gtid.h), and last_gtid read from OK
 * packets (slc_mysql_ok_last_gtid, the tracker).  The OK packets are
 * MariaDB 10.11's, captured on a connection with CLIENT_SESSION_TRACK
 * after SET session_track_system_variables = '...,last_gtid'.
 */

#include "slc_test.h"

#include "slc_core.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_gtid.h"
#include "slc_mysql_proto.h"
#include "slc_mysql_okstate.h"
#include "slc_mysql_track.h"
#include "slc_test_seen.h"

/* Hex text into bytes; returns the length. */
static size_t
slc_test_hex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;

    for (; hex[0] != '\0' && hex[1] != '\0' && n < cap; hex += 2) {
        unsigned v;

        ck_assert_int_eq(sscanf(hex, "%2x", &v), 1);
        out[n++] = (uint8_t) v;
    }
    return n;
}

/* INSERT INTO test.t VALUES (1): last_gtid 0-1-3 */
#define SLC_OK_INSERT \
    "0001000240000000120010096c6173745f6774696405302d312d33"
/* INSERT of 2 rows (info "Records: 2 ..."), domain 3: last_gtid 3-1-1 */
#define SLC_OK_INSERT_INFO \
    "00020002400000265265636f7264733a203220204475706c6963617465733a2030" \
    "20205761726e696e67733a2030120010096c6173745f6774696405332d312d31"
/* SET time_zone='+01:00', autocommit=1: two entries, no last_gtid */
#define SLC_OK_TWO_VARS \
    "000000024000000023000e0a6175746f636f6d6d6974024f4e00110974696d655f" \
    "7a6f6e65062b30313a3030"
/* USE test: a schema entry (type 1) */
#define SLC_OK_SCHEMA "00000002400000000701050474657374"
/* CREATE TABLE: no session state */
#define SLC_OK_PLAIN  "00000002000000"

START_TEST(test_parse)
{
    slc_gtid_t g;

    ck_assert_int_eq(slc_gtid_parse("0-1-3", 5, &g), SLC_OK);
    ck_assert_uint_eq(g.domain, 0);
    ck_assert_uint_eq(g.server, 1);
    ck_assert_uint_eq(g.seq, 3);
    ck_assert_int_eq(slc_gtid_parse("4294967295-2-18446744073709551615",
                                    33, &g), SLC_OK);
    ck_assert_uint_eq(g.domain, 4294967295u);
    ck_assert(g.seq == UINT64_MAX);
    ck_assert_int_eq(slc_gtid_parse("4294967296-2-1", 14, &g), SLC_ERROR);
    ck_assert_int_eq(slc_gtid_parse("0-1-18446744073709551616", 24, &g),
                     SLC_ERROR);
    ck_assert_int_eq(slc_gtid_parse("0-1", 3, &g), SLC_ERROR);
    ck_assert_int_eq(slc_gtid_parse("0-1-", 4, &g), SLC_ERROR);
    ck_assert_int_eq(slc_gtid_parse("0-1-3,", 6, &g), SLC_ERROR);
    ck_assert_int_eq(slc_gtid_parse("a-1-3", 5, &g), SLC_ERROR);
    ck_assert_int_eq(slc_gtid_parse("", 0, &g), SLC_ERROR);
    /* len bounds it: the text need not end there */
    ck_assert_int_eq(slc_gtid_parse("0-1-35", 5, &g), SLC_OK);
    ck_assert_uint_eq(g.seq, 3);
}
END_TEST

START_TEST(test_pos_has)
{
    slc_gtid_t g = { .domain = 0, .server = 1, .seq = 5 };
    const char *pos = "0-1-5,1-2-10";

    ck_assert(slc_gtid_pos_has(pos, &g));
    g.seq = 6;
    ck_assert(!slc_gtid_pos_has(pos, &g));      /* not applied yet */
    g.seq = 4;
    g.server = 9;                               /* server ids do not count */
    ck_assert(slc_gtid_pos_has(pos, &g));
    g.domain = 1;
    g.seq = 10;
    ck_assert(slc_gtid_pos_has(pos, &g));
    g.seq = 11;
    ck_assert(!slc_gtid_pos_has(pos, &g));
    g.domain = 2;
    g.seq = 1;
    ck_assert(!slc_gtid_pos_has(pos, &g));      /* a domain it never saw */
    ck_assert(!slc_gtid_pos_has("", &g));
    g.domain = 1;
    ck_assert(slc_gtid_pos_has("0-1-5,\n 1-2-10 ", &g));   /* as shown */
    ck_assert(!slc_gtid_pos_has("0-1-5,1-2-x", &g));        /* malformed */
    /* seqs compare as numbers, not text */
    g.seq = 9;
    ck_assert(slc_gtid_pos_has("1-1-10", &g));
    g.seq = 100;
    ck_assert(!slc_gtid_pos_has("1-1-99", &g));
}
END_TEST

START_TEST(test_set)
{
    slc_gtid_set_t a, b;
    slc_gtid_t     g = { .domain = 0, .server = 1, .seq = 7 };
    char           txt[SLC_GTID_TEXT];

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    ck_assert(slc_gtid_set_covers(&a, &b));     /* nothing wanted */
    ck_assert(slc_gtid_pos_has_set("", &b));
    slc_gtid_set_add(&a, &g);
    g.seq = 3;
    slc_gtid_set_add(&a, &g);                   /* older: kept the max */
    ck_assert_uint_eq(a.n, 1);
    ck_assert_uint_eq(a.g[0].seq, 7);
    g.domain = 2;
    g.server = 5;
    g.seq = 1;
    slc_gtid_set_add(&a, &g);
    ck_assert_int_eq(slc_gtid_set_format(&a, txt, sizeof(txt)), 11);
    ck_assert_str_eq(txt, "0-1-7,2-5-1");
    ck_assert_int_eq(slc_gtid_set_format(&a, txt, 8), -1);
    ck_assert(slc_gtid_pos_has_set("0-1-7,2-5-1", &a));
    ck_assert(!slc_gtid_pos_has_set("0-1-7", &a));
    ck_assert(!slc_gtid_pos_has_set("0-1-6,2-5-3", &a));
    ck_assert(!slc_gtid_set_covers(&b, &a));
    b = a;
    ck_assert(slc_gtid_set_covers(&b, &a));
    b.g[1].seq = 0;
    ck_assert(!slc_gtid_set_covers(&b, &a));
    for (unsigned d = 10; d < 10 + SLC_GTID_DOMAINS; d++) {
        g.domain = d;
        slc_gtid_set_add(&a, &g);
    }
    ck_assert_uint_eq(a.n, SLC_GTID_DOMAINS);
    ck_assert_uint_gt(a.lost, 0);               /* too many domains */
}
END_TEST

START_TEST(test_set_parse)
{
    slc_gtid_set_t s;
    char           many[SLC_GTID_TEXT * 2] = "";

    ck_assert_int_eq(slc_gtid_set_parse("", &s), SLC_OK);
    ck_assert_uint_eq(s.n, 0);
    ck_assert_int_eq(slc_gtid_set_parse(" \n", &s), SLC_OK);
    ck_assert_uint_eq(s.n, 0);
    ck_assert_int_eq(slc_gtid_set_parse("0-1-7, 2-5-1\n", &s), SLC_OK);
    ck_assert_uint_eq(s.n, 2);
    ck_assert_uint_eq(s.g[1].domain, 2);
    ck_assert_uint_eq(s.g[1].seq, 1);
    ck_assert(slc_gtid_pos_has_set("0-1-9,2-5-1", &s));
    ck_assert(!slc_gtid_pos_has_set("0-1-9", &s));
    /* malformed, an empty entry, MySQL's form: not a set */
    ck_assert_int_eq(slc_gtid_set_parse("0-1-7,", &s), SLC_ERROR);
    ck_assert_int_eq(slc_gtid_set_parse("0-1-x", &s), SLC_ERROR);
    ck_assert_int_eq(slc_gtid_set_parse(
        "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5", &s), SLC_ERROR);
    for (unsigned d = 0; d <= SLC_GTID_DOMAINS; d++) {
        snprintf(many + strlen(many), sizeof(many) - strlen(many),
                 "%s%u-1-1", d > 0 ? "," : "", d);
    }
    ck_assert_int_eq(slc_gtid_set_parse(many, &s), SLC_ERROR);
}
END_TEST

static int
slc_test_ok(const char *hex, slc_gtid_t *g)
{
    uint8_t p[512];
    size_t  n = slc_test_hex(hex, p, sizeof(p));

    return slc_mysql_ok_last_gtid(p, n, g);
}

START_TEST(test_ok_packets)
{
    slc_gtid_t g;
    uint8_t    p[512];
    size_t     n;

    ck_assert_int_eq(slc_test_ok(SLC_OK_INSERT, &g), 1);
    ck_assert_uint_eq(g.domain, 0);
    ck_assert_uint_eq(g.server, 1);
    ck_assert_uint_eq(g.seq, 3);
    ck_assert_int_eq(slc_test_ok(SLC_OK_INSERT_INFO, &g), 1);
    ck_assert_uint_eq(g.domain, 3);
    ck_assert_uint_eq(g.seq, 1);
    ck_assert_int_eq(slc_test_ok(SLC_OK_TWO_VARS, &g), 0);
    ck_assert_int_eq(slc_test_ok(SLC_OK_SCHEMA, &g), 0);
    ck_assert_int_eq(slc_test_ok(SLC_OK_PLAIN, &g), 0);

    /* cut short anywhere in the state: malformed, never a GTID */
    n = slc_test_hex(SLC_OK_INSERT, p, sizeof(p));
    for (size_t k = 7; k < n; k++) {
        ck_assert_int_eq(slc_mysql_ok_last_gtid(p, k, &g), -1);
    }
    /* a value that is no GTID */
    n = slc_test_hex(SLC_OK_INSERT, p, sizeof(p));
    p[n - 1] = 'x';
    ck_assert_int_eq(slc_mysql_ok_last_gtid(p, n, &g), -1);
}
END_TEST

/* Several entries in one OK: schema, two variables, last_gtid. */
START_TEST(test_ok_several_entries)
{
    static const char state[] =
        "01050474657374"                                /* schema test */
        "00110974696d655f7a6f6e65062b30313a3030"        /* time_zone */
        "0010096c6173745f6774696405372d322d39"          /* last_gtid 7-2-9 */
        "000e0a6175746f636f6d6d6974024f4e";             /* autocommit */
    uint8_t    p[512], *q = p;
    slc_gtid_t g;
    size_t     n;

    *q++ = 0x00;                /* OK */
    *q++ = 0x01;                /* affected rows */
    *q++ = 0x00;                /* insert id */
    *q++ = 0x02;                /* status: autocommit, state changed */
    *q++ = 0x40;
    *q++ = 0x00;                /* warnings */
    *q++ = 0x00;
    *q++ = 0x00;                /* info: empty */
    n = slc_test_hex(state, q + 1, sizeof(p) - 9);
    *q++ = (uint8_t) n;
    q += n;
    ck_assert_int_eq(slc_mysql_ok_last_gtid(p, (size_t) (q - p), &g), 1);
    ck_assert_uint_eq(g.domain, 7);
    ck_assert_uint_eq(g.server, 2);
    ck_assert_uint_eq(g.seq, 9);
}
END_TEST

/* The tracker reads last_gtid from the OK however the bytes come. */
static void
slc_test_track_feed(size_t chunk, const char *ok_hex, uint64_t gtids,
    uint64_t lost)
{
    slc_mysql_track_t t;
    uint8_t           ok[600], pk[604], q[] = { 5, 0, 0, 0, 3, 'x', 'y',
                                                'z', '1' };
    size_t            n = slc_test_hex(ok_hex, ok, sizeof(ok));

    memset(&t, 0, sizeof(t));
    slc_mysql_track_init(&t, SLC_CLIENT_PROTOCOL_41
        | SLC_CLIENT_SESSION_TRACK | SLC_CLIENT_DEPRECATE_EOF,
        SLC_SERVER_STATUS_AUTOCOMMIT);
    ck_assert_int_eq(slc_mysql_track_want_gtid(&t), SLC_OK);
    pk[0] = (uint8_t) n;
    pk[1] = pk[2] = 0;
    pk[3] = 1;
    memcpy(pk + 4, ok, n);
    for (int round = 0; round < 2; round++) {
        slc_mysql_track_client(&t, q, sizeof(q));
        for (size_t off = 0; off < n + 4; off += chunk) {
            slc_mysql_track_server(&t, pk + off,
                slc_min(chunk, n + 4 - off));
        }
        ck_assert(slc_mysql_track_idle(&t));
    }
    ck_assert_uint_eq(slc_mysql_track_gtids(&t), gtids);
    ck_assert_uint_eq(slc_mysql_track_gtid_lost(&t), lost);
    slc_mysql_track_free(&t);
}

START_TEST(test_track)
{
    for (size_t chunk = 1; chunk < 80; chunk++) {
        slc_test_track_feed(chunk, SLC_OK_INSERT_INFO, 2, 0);
        slc_test_track_feed(chunk, SLC_OK_TWO_VARS, 0, 0);
        slc_test_track_feed(chunk, SLC_OK_PLAIN, 0, 0);
    }
}
END_TEST

/* slc_mysql_okstate_hide_gtid: last_gtid out, the rest kept. */
START_TEST(test_hide)
{
    uint8_t ok[600], out[600], want[600];
    size_t  n, k, w;

    /* the only entry: flag cleared, state gone */
    n = slc_test_hex(SLC_OK_INSERT, ok, sizeof(ok));
    k = slc_mysql_okstate_hide_gtid(ok, n, out);
    w = slc_test_hex("0001000200000000", want, sizeof(want));
    ck_assert_uint_eq(k, w);
    ck_assert(memcmp(out, want, w) == 0);
    /* the info string stays */
    n = slc_test_hex(SLC_OK_INSERT_INFO, ok, sizeof(ok));
    k = slc_mysql_okstate_hide_gtid(ok, n, out);
    ck_assert_uint_eq(k, n - 19);
    ck_assert_uint_eq(out[3] | out[4] << 8, 0x0002);
    ck_assert(memcmp(out + 7, ok + 7, k - 7) == 0);
    /* nothing to hide: 0, the packet as it is */
    n = slc_test_hex(SLC_OK_TWO_VARS, ok, sizeof(ok));
    ck_assert_uint_eq(slc_mysql_okstate_hide_gtid(ok, n, out), 0);
    n = slc_test_hex(SLC_OK_PLAIN, ok, sizeof(ok));
    ck_assert_uint_eq(slc_mysql_okstate_hide_gtid(ok, n, out), 0);
    /* autocommit and time_zone entries, then last_gtid: the two stay */
    n = slc_test_hex("00000002400000" "0035" "000e0a6175746f636f6d6d6974024f4e0011"
                     "0974696d655f7a6f6e65062b30313a3030"
                     "0010096c6173745f6774696405302d312d33", ok, sizeof(ok));
    k = slc_mysql_okstate_hide_gtid(ok, n, out);
    w = slc_test_hex(SLC_OK_TWO_VARS, want, sizeof(want));
    ck_assert_uint_eq(k, w);
    ck_assert(memcmp(out, want, w) == 0);
    /* malformed: a state string longer than the packet */
    n = slc_test_hex("0001000240000000300010096c6173745f6774696405302d312d33",
                     ok, sizeof(ok));
    ck_assert_uint_eq(slc_mysql_okstate_hide_gtid(ok, n, out), 0);
}
END_TEST

/*
 * Server bytes stream[0..len) fed in chunks of `chunk` the way the command
 * layer's pump feeds them (slc_cmd_track): what the tracker holds back
 * moves to the start of the buffer and the next chunk follows it; what it
 * releases goes to got.  Returns the bytes released; nothing may stay held.
 */
static size_t
slc_test_feed_held(slc_mysql_track_t *t, const uint8_t *stream, size_t len,
    size_t chunk, uint8_t *buf, uint8_t *got)
{
    size_t held = 0, ngot = 0, hold, cut, have;

    for (size_t off = 0; off < len; off += chunk) {
        size_t c = slc_min(chunk, len - off);

        memcpy(buf + held, stream + off, c);
        cut = slc_mysql_track_server_edit(t, buf + held, c, &hold);
        ck_assert_uint_le(cut, held + c);       /* the end stays in buf */
        have = held + c - cut;
        ck_assert_uint_le(hold, have);
        memcpy(got + ngot, buf, have - hold);
        ngot += have - hold;
        memmove(buf, buf + have - hold, hold);
        held = hold;
    }
    ck_assert_uint_eq(held, 0);
    return ngot;
}

/*
 * The OK with last_gtid, in chunks of every size, the way the
 * command layer's pump feeds them (slc_cmd_track): what reaches the
 * client is the OK without it, the GTID is read, and the bytes held back
 * are always the end of what was read.
 */
static void
slc_test_hide_feed(size_t chunk)
{
    slc_mysql_track_t t;
    uint8_t           ok[600], stream[700], buf[800], got[700], want[700];
    uint8_t           q[] = { 5, 0, 0, 0, 3, 'x', 'y', 'z', '1' };
    size_t            n = slc_test_hex(SLC_OK_INSERT_INFO, ok, sizeof(ok));
    size_t            len = 0, ngot, w;
    slc_test_seen_t   o = { 0 };

    memset(&t, 0, sizeof(t));
    slc_mysql_track_init(&t, SLC_CLIENT_PROTOCOL_41
        | SLC_CLIENT_SESSION_TRACK | SLC_CLIENT_DEPRECATE_EOF,
        SLC_SERVER_STATUS_AUTOCOMMIT);
    ck_assert_int_eq(slc_mysql_track_want_gtid(&t), SLC_OK);
    slc_mysql_track_hide_gtid(&t, 1);
    slc_mysql_hdr_write(stream, (uint32_t) n, 1);
    memcpy(stream + 4, ok, n);
    len = n + 4;
    slc_mysql_track_client(&t, q, sizeof(q));
    slc_mysql_track_observe(&t, slc_test_observe, &o);
    ngot = slc_test_feed_held(&t, stream, len, chunk, buf, got);
    ck_assert(slc_mysql_track_idle(&t));
    ck_assert_uint_eq(slc_mysql_track_gtids(&t), 1);
    w = slc_mysql_okstate_hide_gtid(ok, n, want + 4);
    slc_mysql_hdr_write(want, (uint32_t) w, 1);
    ck_assert_uint_eq(ngot, w + 4);
    ck_assert(memcmp(got, want, ngot) == 0);
    /* the observer saw the OK as the client does: rewritten, once */
    ck_assert_msg(o.bad == NULL, "chunk %zu: %s", chunk, o.bad);
    ck_assert_uint_eq(o.len, ngot);
    ck_assert(memcmp(o.buf, want, ngot) == 0);
    ck_assert_int_eq(o.ends, 1);
    free(o.buf);
    slc_mysql_track_free(&t);
}

START_TEST(test_track_hide)
{
    for (size_t chunk = 1; chunk < 90; chunk++) {
        slc_test_hide_feed(chunk);
    }
}
END_TEST

/* An OK longer than the tracker keeps (a long info string): neither read
   nor rewritten, passed on whole, nothing held back at its end; its GTID
   counts as lost. */
START_TEST(test_track_hide_long_ok)
{
    static uint8_t    pk[1200], buf[1400], got[1400];
    slc_mysql_track_t t;
    uint8_t           q[] = { 5, 0, 0, 0, 3, 'x', 'y', 'z', '1' };
    size_t            n = 0, len, ngot;
    slc_test_seen_t   o = { 0 };

    memset(&t, 0, sizeof(t));
    slc_mysql_track_init(&t, SLC_CLIENT_PROTOCOL_41
        | SLC_CLIENT_SESSION_TRACK | SLC_CLIENT_DEPRECATE_EOF,
        SLC_SERVER_STATUS_AUTOCOMMIT);
    ck_assert_int_eq(slc_mysql_track_want_gtid(&t), SLC_OK);
    slc_mysql_track_hide_gtid(&t, 1);
    n = 4;
    pk[n++] = 0x00;                             /* OK */
    pk[n++] = 1;                                /* affected */
    pk[n++] = 0;                                /* insert id */
    pk[n++] = 0x02; pk[n++] = 0x40;             /* status: state changed */
    pk[n++] = 0; pk[n++] = 0;                   /* warnings */
    pk[n++] = 0xfc; pk[n++] = 0x4c; pk[n++] = 0x04;     /* info: 1100 */
    memset(pk + n, 'i', 1100);
    n += 1100;
    n += slc_test_hex("120010096c6173745f6774696405302d312d33", pk + n, 40);
    slc_mysql_hdr_write(pk, (uint32_t) (n - 4), 1);
    len = n;
    slc_mysql_track_client(&t, q, sizeof(q));
    slc_mysql_track_observe(&t, slc_test_observe, &o);
    ngot = slc_test_feed_held(&t, pk, len, 100, buf, got);
    ck_assert(slc_mysql_track_idle(&t));
    ck_assert_uint_eq(ngot, len);
    ck_assert(memcmp(got, pk, len) == 0);
    ck_assert_uint_eq(slc_mysql_track_gtids(&t), 0);
    ck_assert_uint_eq(slc_mysql_track_gtid_lost(&t), 1);
    /* held while it might be rewritten, then shown from its start */
    ck_assert_msg(o.bad == NULL, "%s", o.bad);
    ck_assert_uint_eq(o.len, len);
    ck_assert(memcmp(o.buf, pk, len) == 0);
    ck_assert_int_eq(o.ends, 1);
    free(o.buf);
    slc_mysql_track_free(&t);
}
END_TEST

START_TEST(test_track_not_wanted)
{
    slc_mysql_track_t t;
    uint8_t           pk[64], q[] = { 1, 0, 0, 0, 3 };
    size_t            n = slc_test_hex(SLC_OK_INSERT, pk + 4, 60);

    memset(&t, 0, sizeof(t));
    slc_mysql_track_init(&t, SLC_CLIENT_PROTOCOL_41
        | SLC_CLIENT_SESSION_TRACK, SLC_SERVER_STATUS_AUTOCOMMIT);
    pk[0] = (uint8_t) n;
    pk[1] = pk[2] = 0;
    pk[3] = 1;
    slc_mysql_track_client(&t, q, sizeof(q));
    slc_mysql_track_server(&t, pk, n + 4);
    ck_assert(slc_mysql_track_idle(&t));
    ck_assert_uint_eq(slc_mysql_track_gtids(&t), 0);
    slc_mysql_track_free(&t);
}
END_TEST

/* INSERT ... RETURNING under DEPRECATE_EOF: the GTID is in the OK (0xfe)
   that ends the result set. */
START_TEST(test_track_returning)
{
    static const char *pk[] = {
        "01",
        "03646566047465737401740174016101610c3f000b000000030000000000",
        "0139",
        "fe00000240000000120010096c6173745f6774696405302d312d34",
    };
    slc_mysql_track_t t;
    uint8_t           q[] = { 2, 0, 0, 0, 3, 'x' }, buf[128];

    memset(&t, 0, sizeof(t));
    slc_mysql_track_init(&t, SLC_CLIENT_PROTOCOL_41
        | SLC_CLIENT_SESSION_TRACK | SLC_CLIENT_DEPRECATE_EOF,
        SLC_SERVER_STATUS_AUTOCOMMIT);
    ck_assert_int_eq(slc_mysql_track_want_gtid(&t), SLC_OK);
    slc_mysql_track_client(&t, q, sizeof(q));
    for (unsigned i = 0; i < 4; i++) {
        size_t n = slc_test_hex(pk[i], buf + 4, sizeof(buf) - 4);

        buf[0] = (uint8_t) n;
        buf[1] = buf[2] = 0;
        buf[3] = (uint8_t) (i + 1);
        for (size_t off = 0; off < n + 4; off++) {
            slc_mysql_track_server(&t, buf + off, 1);
        }
    }
    ck_assert(slc_mysql_track_idle(&t));
    ck_assert_uint_eq(slc_mysql_track_gtids(&t), 1);
    ck_assert_uint_eq(t.g->gtid.seq, 4);
    ck_assert_uint_eq(slc_mysql_track_gtid_lost(&t), 0);
    slc_mysql_track_free(&t);
}
END_TEST

/*
 * A client without CLIENT_SESSION_TRACK: the proxy asks SELECT
 * @@last_gtid itself and the tracker reads the row of that response only
 * (classic EOFs, fed a byte at a time).
 */
static void
slc_test_row_query(slc_mysql_track_t *t, int want, const char *const *pk,
    unsigned npk)
{
    uint8_t q[] = { 2, 0, 0, 0, 3, 'x' }, buf[128];

    if (want) {
        slc_mysql_track_want_row_gtid(t);
    }
    slc_mysql_track_client(t, q, sizeof(q));
    for (unsigned i = 0; i < npk; i++) {
        size_t n = slc_test_hex(pk[i], buf + 4, sizeof(buf) - 4);

        buf[0] = (uint8_t) n;
        buf[1] = buf[2] = 0;
        buf[3] = (uint8_t) (i + 1);
        for (size_t off = 0; off < n + 4; off++) {
            slc_mysql_track_server(t, buf + off, 1);
        }
    }
    ck_assert(slc_mysql_track_idle(t));
}

#define SLC_COLDEF  "03646566047465737401740174016101610c3f000b000000030000000000"
#define SLC_EOF     "fe00000200"

START_TEST(test_track_row)
{
    static const char *gtid[] = { "01", SLC_COLDEF, SLC_EOF,
                                  "06302d312d3432", SLC_EOF };
    static const char *empty[] = { "01", SLC_COLDEF, SLC_EOF, "00", SLC_EOF };
    static const char *two[] = { "02", SLC_COLDEF, SLC_COLDEF, SLC_EOF,
                                 "06302d312d343201", SLC_EOF };
    static const char *junk[] = { "01", SLC_COLDEF, SLC_EOF, "0378797a",
                                  SLC_EOF };
    static const char *none[] = { "01", SLC_COLDEF, SLC_EOF, SLC_EOF };
    static const char *err[] = { "ff7a0423343230303078" };
    static const char *later[] = { "01", SLC_COLDEF, SLC_EOF,
                                   "06302d312d3939", SLC_EOF };
    slc_mysql_track_t t;

    memset(&t, 0, sizeof(t));
    slc_mysql_track_init(&t, SLC_CLIENT_PROTOCOL_41,
        SLC_SERVER_STATUS_AUTOCOMMIT);
    ck_assert_int_eq(slc_mysql_track_want_gtid(&t), SLC_OK);
    slc_test_row_query(&t, 1, gtid, 5);
    ck_assert_uint_eq(slc_mysql_track_gtids(&t), 1);
    ck_assert_uint_eq(t.g->gtid.seq, 42);
    ck_assert_uint_eq(slc_mysql_track_gtid_lost(&t), 0);

    slc_test_row_query(&t, 1, empty, 5);    /* nothing binlogged yet */
    ck_assert_uint_eq(slc_mysql_track_gtids(&t), 1);
    ck_assert_uint_eq(slc_mysql_track_gtid_lost(&t), 0);

    slc_test_row_query(&t, 0, later, 5);    /* the client's own query */
    ck_assert_uint_eq(slc_mysql_track_gtids(&t), 1);
    ck_assert_uint_eq(t.g->gtid.seq, 42);

    slc_test_row_query(&t, 1, two, 6);
    slc_test_row_query(&t, 1, junk, 5);
    slc_test_row_query(&t, 1, none, 4);
    slc_test_row_query(&t, 1, err, 1);
    ck_assert_uint_eq(slc_mysql_track_gtids(&t), 1);
    ck_assert_uint_eq(slc_mysql_track_gtid_lost(&t), 4);
    ck_assert_int_eq(t.g->row_want, 0);

    slc_test_row_query(&t, 0, later, 5);    /* disarmed after each */
    ck_assert_uint_eq(slc_mysql_track_gtids(&t), 1);
    ck_assert_uint_eq(slc_mysql_track_gtid_lost(&t), 4);
    slc_mysql_track_free(&t);
}
END_TEST

static Suite *
slc_gtid_suite(void)
{
    Suite *s = suite_create("mysql_gtid");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_parse);
    tcase_add_test(tc, test_pos_has);
    tcase_add_test(tc, test_set);
    tcase_add_test(tc, test_set_parse);
    tcase_add_test(tc, test_ok_packets);
    tcase_add_test(tc, test_ok_several_entries);
    tcase_add_test(tc, test_track);
    tcase_add_test(tc, test_track_not_wanted);
    tcase_add_test(tc, test_hide);
    tcase_add_test(tc, test_track_hide);
    tcase_add_test(tc, test_track_hide_long_ok);
    tcase_add_test(tc, test_track_returning);
    tcase_add_test(tc, test_track_row);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return slc_check_run(slc_gtid_suite());
}
