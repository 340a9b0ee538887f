/*
 * The Redis tier's pure parts (modules/cache_redis, compiled into this
 * test): the cluster slot of a key (CRC16/XMODEM and hash tags, against
 * the cluster specification's examples), an entry's value encoding (a
 * round trip, and every kind of damage refused), and the circuit
 * breaker's state machine.
 */

#include "slc_test.h"

#include <string.h>

#include "../../modules/cache_redis/slc_cache_redis_slot.c"
#include "../../modules/cache_redis/slc_cache_redis_value.c"
#include "../../modules/cache_redis/slc_cache_redis_breaker.c"
#include "../../modules/cache_redis/slc_cache_redis_resp.c"

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
