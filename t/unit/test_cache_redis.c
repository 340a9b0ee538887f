/*
 * The Redis tier's pure parts (modules/cache_redis, compiled into this
 * test): the cluster slot of a key (CRC16/XMODEM and hash tags, against
 * the cluster specification's examples), an entry's value encoding (a
 * round trip, and every kind of damage refused), and the circuit
 * breaker's state machine.
 */

#include "slc_test.h"

#include <stdarg.h>
#include <string.h>

#include "../../modules/cache_redis/slc_cache_redis_slot.c"
#include "../../modules/cache_redis/slc_cache_redis_value.c"
#include "../../modules/cache_redis/slc_cache_redis_breaker.c"
#include "../../modules/cache_redis/slc_cache_redis_resp.c"
#include "../../modules/cache_redis/slc_cache_redis_slots.c"

static unsigned
slc_test_slot(const char *k)
{
    return slc_cache_redis_slot(k, strlen(k));
}


/* --- slots ------------------------------------------------------------- */

/* The CRC's check value, and slots the specification gives. */
START_TEST(test_crc16)
{
    ck_assert_uint_eq(slc_cache_redis_crc16("123456789", 9), 0x31c3);
    ck_assert_uint_eq(slc_cache_redis_crc16("", 0), 0);
    ck_assert_uint_eq(slc_test_slot("foo"), 12182);
    ck_assert_uint_eq(slc_test_slot("bar"), 5061);
    ck_assert_uint_eq(slc_test_slot("123456789"), 0x31c3 & 16383);
}
END_TEST

/* A hash tag: the bytes between the first '{' and the first '}' after
   it, when there are any. */
START_TEST(test_hash_tags)
{
    ck_assert_uint_eq(slc_test_slot("{user1000}.following"),
        slc_test_slot("{user1000}.followers"));
    ck_assert_uint_eq(slc_test_slot("{user1000}.following"),
        slc_test_slot("user1000"));
    ck_assert_uint_eq(slc_test_slot("foo{bar}{zap}"), slc_test_slot("bar"));
    /* the first '}' after the first '{': the tag is "{bar" */
    ck_assert_uint_eq(slc_test_slot("foo{{bar}}zap"), slc_test_slot("{bar"));
    /* an empty tag, or none closed: the whole key */
    ck_assert_uint_eq(slc_test_slot("foo{}{bar}"),
        slc_cache_redis_crc16("foo{}{bar}", 10) & 16383);
    ck_assert_uint_eq(slc_test_slot("foo{bar"),
        slc_cache_redis_crc16("foo{bar", 7) & 16383);
    ck_assert_uint_eq(slc_test_slot("}foo{"),
        slc_cache_redis_crc16("}foo{", 5) & 16383);
}
END_TEST


/* --- values ------------------------------------------------------------ */

static const uint8_t slc_test_key[] = "k\0ey with a NUL";
static const uint8_t slc_test_result[] = "\x01\x00\x00\x01\x01result";

static void
slc_test_value(slc_cache_redis_value_t *v, unsigned ntables)
{
    memset(v, 0, sizeof(*v));
    v->key = slc_test_key;
    v->klen = sizeof(slc_test_key) - 1;
    v->result = slc_test_result;
    v->rlen = sizeof(slc_test_result) - 1;
    v->ntables = ntables;
    for (unsigned i = 0; i < ntables; i++) {
        v->table[i] = 0x80000000u + i;
        v->gen[i] = 0x0102030405060708ULL * (i + 1);
    }
    for (unsigned i = 0; i < SLC_REDIS_VALUE_META; i++) {
        v->meta[i] = (uint8_t) (0xa0 + i);
    }
    v->allgen = 0x1122334455667788ULL;
    v->expires = 0x0807060504030201ULL;
}

static uint8_t *
slc_test_encode(const slc_cache_redis_value_t *v, size_t *len)
{
    uint8_t *buf;

    *len = slc_cache_redis_encoded_size(v);
    buf = malloc(*len);
    ck_assert_ptr_nonnull(buf);
    slc_cache_redis_encode(v, buf);
    return buf;
}

START_TEST(test_round_trip)
{
    for (unsigned n = 0; n <= SLC_REDIS_VALUE_TABLES; n += 8) {
        slc_cache_redis_value_t v, d;
        size_t                  len;
        uint8_t                *buf;

        slc_test_value(&v, n);
        buf = slc_test_encode(&v, &len);
        ck_assert_uint_eq(len, 48 + 12 * n + v.klen + v.rlen);
        ck_assert_int_eq(slc_cache_redis_decode(buf, len, &d), SLC_OK);
        ck_assert_uint_eq(d.ntables, n);
        ck_assert_uint_eq(d.klen, v.klen);
        ck_assert_mem_eq(d.key, v.key, v.klen);
        ck_assert_uint_eq(d.rlen, v.rlen);
        ck_assert_mem_eq(d.result, v.result, v.rlen);
        ck_assert_mem_eq(d.meta, v.meta, SLC_REDIS_VALUE_META);
        ck_assert(d.allgen == v.allgen);
        ck_assert(d.expires == v.expires);
        for (unsigned i = 0; i < n; i++) {
            ck_assert_uint_eq(d.table[i], v.table[i]);
            ck_assert(d.gen[i] == v.gen[i]);
        }
        free(buf);
    }
}
END_TEST

/* An empty key and result still make a whole value. */
START_TEST(test_empty)
{
    slc_cache_redis_value_t v, d;
    uint8_t                 buf[48];

    memset(&v, 0, sizeof(v));
    ck_assert_uint_eq(slc_cache_redis_encoded_size(&v), sizeof(buf));
    slc_cache_redis_encode(&v, buf);
    ck_assert_int_eq(slc_cache_redis_decode(buf, sizeof(buf), &d), SLC_OK);
    ck_assert_uint_eq(d.klen + d.rlen + d.ntables, 0);
}
END_TEST

/* Every prefix of a value, and a byte too many, are refused. */
START_TEST(test_truncated)
{
    slc_cache_redis_value_t v, d;
    size_t                  len;
    uint8_t                *buf, *more;

    slc_test_value(&v, 3);
    buf = slc_test_encode(&v, &len);
    for (size_t k = 0; k < len; k++) {
        ck_assert_msg(slc_cache_redis_decode(buf, k, &d) == SLC_ERROR,
            "%zu of %zu bytes accepted", k, len);
    }
    more = malloc(len + 1);
    memcpy(more, buf, len);
    more[len] = 0;
    ck_assert_int_eq(slc_cache_redis_decode(more, len + 1, &d), SLC_ERROR);
    free(more);
    free(buf);
}
END_TEST

/* Another magic or version, too many tables, reserved bytes set, lengths
   that overflow: refused. */
START_TEST(test_foreign)
{
    slc_cache_redis_value_t v, d;
    size_t                  len;
    uint8_t                *buf;
    static const size_t     at[] = { 0, 3, 4, 6, 7, 11, 15 };
    static const uint8_t    text[] =
        "{\"not\":\"ours\",\"but\":\"long enough\"}";

    slc_test_value(&v, 2);
    buf = slc_test_encode(&v, &len);
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        buf[at[i]] ^= 0x80;
        ck_assert_msg(slc_cache_redis_decode(buf, len, &d) == SLC_ERROR,
            "byte %zu changed, accepted", at[i]);
        buf[at[i]] ^= 0x80;
    }
    buf[5] = SLC_REDIS_VALUE_TABLES + 1;
    ck_assert_int_eq(slc_cache_redis_decode(buf, len, &d), SLC_ERROR);
    ck_assert_int_eq(slc_cache_redis_decode(text, sizeof(text) - 1, &d),
        SLC_ERROR);
    free(buf);
}
END_TEST


/* --- the breaker ------------------------------------------------------- */

/* Closed until `threshold` failures in a row; a success between resets
   the count. */
/* Commands in RESP: the array header, bulk strings, numbers, an
   argument written in place; the buffer reused by the next command. */
START_TEST(test_resp)
{
    slc_cache_redis_resp_t  r = { 0 };
    static const char       want[] = "*4\r\n$3\r\nSET\r\n$2\r\nk\0\r\n"
                                     "$3\r\nabc\r\n$20\r\n"
                                     "18446744073709551615\r\n";
    uint8_t                 dec[24], *p;

    slc_cache_redis_resp_begin(&r, 4);
    slc_cache_redis_resp_str(&r, "SET");
    slc_cache_redis_resp_arg(&r, "k", 2);
    p = slc_cache_redis_resp_open(&r, 3);
    ck_assert_ptr_nonnull(p);
    memcpy(p, "abc", 3);
    slc_cache_redis_resp_num(&r, 18446744073709551615ULL);
    ck_assert(!r.oom);
    ck_assert_uint_eq(r.len, sizeof(want) - 1);
    ck_assert_mem_eq(r.buf, want, r.len);
    slc_cache_redis_resp_begin(&r, 1);
    slc_cache_redis_resp_num(&r, 0);
    ck_assert_uint_eq(r.len, 11);
    ck_assert_mem_eq(r.buf, "*1\r\n$1\r\n0\r\n", 11);
    ck_assert_uint_eq(slc_cache_redis_resp_dec(dec, 10), 2);
    ck_assert_mem_eq(dec, "10", 2);
    free(r.buf);
}
END_TEST

/* Replies built by hand, as hiredis would give them. */
static redisReply *
slc_test_reply_int(long long v)
{
    redisReply *r = calloc(1, sizeof(*r));

    r->type = REDIS_REPLY_INTEGER;
    r->integer = v;
    return r;
}

static redisReply *
slc_test_reply_str(const char *s)
{
    redisReply *r = calloc(1, sizeof(*r));

    r->type = REDIS_REPLY_STRING;
    r->str = strdup(s);
    r->len = strlen(s);
    return r;
}

static redisReply *
slc_test_reply_arr(size_t n, ...)
{
    redisReply *r = calloc(1, sizeof(*r));
    va_list     ap;

    r->type = REDIS_REPLY_ARRAY;
    r->elements = n;
    r->element = calloc(n ? n : 1, sizeof(redisReply *));
    va_start(ap, n);
    for (size_t i = 0; i < n; i++) {
        r->element[i] = va_arg(ap, redisReply *);
    }
    va_end(ap);
    return r;
}

static void
slc_test_reply_free(redisReply *r)
{
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        slc_test_reply_free(r->element[i]);
    }
    free(r->element);
    free(r->str);
    free(r);
}

static redisReply *
slc_test_range(long long lo, long long hi, const char *host, long long port)
{
    return slc_test_reply_arr(4, slc_test_reply_int(lo), slc_test_reply_int(hi),
        slc_test_reply_arr(3, slc_test_reply_str(host),
            slc_test_reply_int(port), slc_test_reply_str("0123456789abcdef")),
        slc_test_reply_arr(3, slc_test_reply_str("10.0.0.9"),
            slc_test_reply_int(7000), slc_test_reply_str("replica")));
}

/* CLUSTER SLOTS of three masters (two ranges on one): each slot's master,
   a replica never taken; a bad reply leaves the map as it was. */
START_TEST(test_slots)
{
    static slc_cache_redis_slots_t m;
    redisReply *r = slc_test_reply_arr(4,
        slc_test_range(0, 5460, "10.0.0.1", 7001),
        slc_test_range(5461, 10922, "10.0.0.2", 7002),
        slc_test_range(10923, 16000, "10.0.0.3", 7003),
        slc_test_range(16001, 16383, "10.0.0.1", 7001));
    redisReply *bad[] = {
        slc_test_reply_arr(1, slc_test_range(5, 4, "10.0.0.1", 7001)),
        slc_test_reply_arr(1, slc_test_range(0, 16384, "10.0.0.1", 7001)),
        slc_test_reply_arr(1, slc_test_range(0, 1, "10.0.0.1", 70000)),
        slc_test_reply_arr(1, slc_test_range(0, 1, "a:b", 7001)),
        slc_test_reply_arr(1, slc_test_reply_arr(2, slc_test_reply_int(0),
                                                 slc_test_reply_int(1))),
        slc_test_reply_str("not an array"),
    };

    ck_assert_int_eq(slc_cache_redis_slots_parse(r, &m), SLC_OK);
    ck_assert_uint_eq(m.n, 3);
    ck_assert_str_eq(m.node[m.slot[0]], "10.0.0.1:7001");
    ck_assert_str_eq(m.node[m.slot[5460]], "10.0.0.1:7001");
    ck_assert_str_eq(m.node[m.slot[5461]], "10.0.0.2:7002");
    ck_assert_str_eq(m.node[m.slot[16000]], "10.0.0.3:7003");
    ck_assert_str_eq(m.node[m.slot[16383]], "10.0.0.1:7001");
    ck_assert_str_eq(m.node[m.slot[slc_cache_redis_slot("{g}:*", 5)]],
                     m.node[m.slot[slc_cache_redis_slot("{g}:1", 5)]]);
    for (size_t i = 0; i < slc_nelems(bad); i++) {
        ck_assert_int_eq(slc_cache_redis_slots_parse(bad[i], &m), SLC_ERROR);
        ck_assert_uint_eq(m.n, 3);          /* as it was */
        slc_test_reply_free(bad[i]);
    }
    slc_test_reply_free(r);
    r = slc_test_reply_arr(1, slc_test_range(0, 99, "10.0.0.1", 7001));
    ck_assert_int_eq(slc_cache_redis_slots_parse(r, &m), SLC_OK);
    ck_assert_uint_eq(m.slot[100], SLC_REDIS_NO_NODE);  /* unserved */
    slc_test_reply_free(r);
}
END_TEST

/* MOVED and ASK, and what is neither. */
START_TEST(test_redirect)
{
    static const char *bad[] = {
        "ERR unknown", "MOVED", "MOVED x 10.0.0.1:7001", "MOVED 16384 h:1",
        "MOVED 1 h", "MOVED 1 h:1 extra", "ASK 1 ", "MOVED  1 h:1",
    };
    char     node[64];
    unsigned slot;
    int      ask;

    ck_assert_int_eq(slc_cache_redis_redirect_parse("MOVED 3999 10.0.0.2:7002",
        24, &ask, &slot, node, sizeof(node)), SLC_OK);
    ck_assert(!ask);
    ck_assert_uint_eq(slot, 3999);
    ck_assert_str_eq(node, "10.0.0.2:7002");
    ck_assert_int_eq(slc_cache_redis_redirect_parse("ASK 0 [::1]:7003", 16,
        &ask, &slot, node, sizeof(node)), SLC_OK);
    ck_assert(ask);
    ck_assert_uint_eq(slot, 0);
    ck_assert_str_eq(node, "[::1]:7003");
    for (size_t i = 0; i < slc_nelems(bad); i++) {
        ck_assert_int_eq(slc_cache_redis_redirect_parse(bad[i],
            strlen(bad[i]), &ask, &slot, node, sizeof(node)), SLC_ERROR);
    }
}
END_TEST

START_TEST(test_node_addr)
{
    char host[64];
    int  port = 0;

    ck_assert_int_eq(slc_cache_redis_node_addr("127.0.0.1:7000", host,
                                               sizeof(host), &port), SLC_OK);
    ck_assert_str_eq(host, "127.0.0.1");
    ck_assert_int_eq(port, 7000);
    /* a name (resolved blocking), no port, a bad port, too long */
    ck_assert_int_eq(slc_cache_redis_node_addr("redis-1:7000", host,
                                               sizeof(host), &port),
                     SLC_ERROR);
    ck_assert_int_eq(slc_cache_redis_node_addr("127.0.0.1", host,
                                               sizeof(host), &port),
                     SLC_ERROR);
    ck_assert_int_eq(slc_cache_redis_node_addr("127.0.0.1:0", host,
                                               sizeof(host), &port),
                     SLC_ERROR);
    ck_assert_int_eq(slc_cache_redis_node_addr("127.0.0.1:70000", host,
                                               sizeof(host), &port),
                     SLC_ERROR);
    ck_assert_int_eq(slc_cache_redis_node_addr("127.0.0.1:7000x", host,
                                               sizeof(host), &port),
                     SLC_ERROR);
    ck_assert_int_eq(slc_cache_redis_node_addr("127.0.0.1:7000", host, 4,
                                               &port), SLC_ERROR);
}
END_TEST

START_TEST(test_breaker_opens)
{
    slc_cache_redis_breaker_t b;

    slc_cache_redis_breaker_init(&b, 3, 1000, 30000);
    ck_assert(slc_cache_redis_breaker_allow(&b, 0));
    ck_assert_int_eq(slc_cache_redis_breaker_failure(&b, 10), 0);
    ck_assert_int_eq(slc_cache_redis_breaker_failure(&b, 20), 0);
    ck_assert_int_eq(slc_cache_redis_breaker_success(&b), 0);
    ck_assert_int_eq(slc_cache_redis_breaker_failure(&b, 30), 0);
    ck_assert_int_eq(slc_cache_redis_breaker_failure(&b, 40), 0);
    ck_assert_int_eq(b.state, SLC_REDIS_CLOSED);
    ck_assert_int_eq(slc_cache_redis_breaker_failure(&b, 50), 1);
    ck_assert_int_eq(b.state, SLC_REDIS_OPEN);
    ck_assert_uint_eq(b.opened, 1);
    ck_assert(!slc_cache_redis_breaker_allow(&b, 51));
    ck_assert(!slc_cache_redis_breaker_allow(&b, 1049));
    /* a request sent before it opened fails late: no news */
    ck_assert_int_eq(slc_cache_redis_breaker_failure(&b, 60), 0);
    ck_assert_uint_eq(b.until, 1050);
}
END_TEST

/* After the back-off one probe goes; it fails: open again for twice as
   long, up to the cap; it succeeds: closed, back-off reset. */
START_TEST(test_breaker_probe)
{
    slc_cache_redis_breaker_t b;
    uint64_t                  now = 0, want = 1000;

    slc_cache_redis_breaker_init(&b, 1, 1000, 4000);
    ck_assert_int_eq(slc_cache_redis_breaker_failure(&b, now), 1);
    for (int i = 0; i < 5; i++) {
        now = b.until;
        ck_assert(slc_cache_redis_breaker_allow(&b, now));
        ck_assert_int_eq(b.state, SLC_REDIS_HALF_OPEN);
        ck_assert(!slc_cache_redis_breaker_allow(&b, now));   /* one */
        ck_assert_int_eq(slc_cache_redis_breaker_failure(&b, now), 1);
        want = want * 2 > 4000 ? 4000 : want * 2;
        ck_assert_uint_eq(b.until - now, want);
    }
    now = b.until;
    ck_assert(slc_cache_redis_breaker_allow(&b, now));
    ck_assert_int_eq(slc_cache_redis_breaker_success(&b), 1);
    ck_assert_int_eq(b.state, SLC_REDIS_CLOSED);
    ck_assert_uint_eq(b.closed, 1);
    ck_assert_uint_eq(b.opened, 6);
    ck_assert_int_eq(slc_cache_redis_breaker_failure(&b, now), 1);
    ck_assert_uint_eq(b.until - now, 1000);
}
END_TEST

static Suite *
slc_cache_redis_suite(void)
{
    Suite *s = suite_create("cache_redis");
    TCase *tc = tcase_create("pure");

    tcase_add_test(tc, test_crc16);
    tcase_add_test(tc, test_hash_tags);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_truncated);
    tcase_add_test(tc, test_foreign);
    tcase_add_test(tc, test_resp);
    tcase_add_test(tc, test_slots);
    tcase_add_test(tc, test_redirect);
    tcase_add_test(tc, test_node_addr);
    tcase_add_test(tc, test_breaker_opens);
    tcase_add_test(tc, test_breaker_probe);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return slc_check_run(slc_cache_redis_suite());
}
