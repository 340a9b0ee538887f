/*
 * Packet framing: headers, whole and partial packets, and messages split
 * into 0xffffff-byte packets.
 */

#include "slc_test.h"

#include "slc_core.h"
#include "slc_mysql_codec.h"

#define SLC_TEST_MAX  SLC_MYSQL_MAX_PAYLOAD

/* A zeroed buffer; calloc leaves untouched pages unmapped, so 50 MB is ok. */
static uint8_t *
slc_test_buf(size_t n)
{
    uint8_t  *p = calloc(1, n);

    ck_assert_ptr_nonnull(p);
    return p;
}

/* Write a packet header at p and return where the next one starts. */
static uint8_t *
slc_test_packet(uint8_t *p, uint32_t plen, uint8_t seq)
{
    slc_mysql_hdr_write(p, plen, seq);
    return p + SLC_MYSQL_HDR_LEN + plen;
}

START_TEST(test_hdr_write_read)
{
    static const uint32_t  lens[] = { 0, 1, 0xff, 0x100, 0x123456,
                                      SLC_TEST_MAX };
    uint8_t                h[4], seq;
    uint32_t               plen;
    size_t                 i;

    for (i = 0; i < slc_nelems(lens); i++) {
        slc_mysql_hdr_write(h, lens[i], (uint8_t) (i * 51));
        slc_mysql_hdr_read(h, &plen, &seq);
        ck_assert_uint_eq(plen, lens[i]);
        ck_assert_uint_eq(seq, (uint8_t) (i * 51));
    }

    slc_mysql_hdr_write(h, 0x123456, 0xfe);
    ck_assert_uint_eq(h[0], 0x56);
    ck_assert_uint_eq(h[1], 0x34);
    ck_assert_uint_eq(h[2], 0x12);
    ck_assert_uint_eq(h[3], 0xfe);
}
END_TEST

START_TEST(test_peek_partial)
{
    /* COM_QUERY "select 1" as the mariadb client sends it */
    static const uint8_t  pkt[] = {
        0x09, 0x00, 0x00, 0x00, 0x03, 's', 'e', 'l', 'e', 'c', 't', ' ', '1'
    };
    uint32_t              plen = 77;
    uint8_t               seq = 77;
    size_t                n;

    for (n = 0; n < sizeof(pkt); n++) {
        ck_assert_int_eq(slc_mysql_packet_peek(pkt, n, &plen, &seq), 0);
    }
    /* nothing is written when the packet is incomplete */
    ck_assert_uint_eq(plen, 77);
    ck_assert_uint_eq(seq, 77);

    ck_assert_int_eq(slc_mysql_packet_peek(pkt, sizeof(pkt), &plen, &seq), 1);
    ck_assert_uint_eq(plen, 9);
    ck_assert_uint_eq(seq, 0);
}
END_TEST

START_TEST(test_peek_empty_and_trailing)
{
    uint8_t   buf[16] = { 0x00, 0x00, 0x00, 0x05, 0xaa, 0xbb };
    uint32_t  plen;
    uint8_t   seq;

    ck_assert_int_eq(slc_mysql_packet_peek(buf, 4, &plen, &seq), 1);
    ck_assert_uint_eq(plen, 0);
    ck_assert_uint_eq(seq, 5);
    /* bytes of the next packet do not change the answer */
    ck_assert_int_eq(slc_mysql_packet_peek(buf, sizeof(buf), &plen, &seq), 1);
    ck_assert_uint_eq(plen, 0);
}
END_TEST

START_TEST(test_peek_max_payload)
{
    size_t    n = SLC_MYSQL_HDR_LEN + SLC_TEST_MAX;
    uint8_t  *buf = slc_test_buf(n);
    uint32_t  plen;
    uint8_t   seq;

    slc_test_packet(buf, SLC_TEST_MAX, 3);
    ck_assert_int_eq(slc_mysql_packet_peek(buf, n - 1, &plen, &seq), 0);
    ck_assert_int_eq(slc_mysql_packet_peek(buf, n, &plen, &seq), 1);
    ck_assert_uint_eq(plen, SLC_TEST_MAX);
    ck_assert_uint_eq(seq, 3);
    free(buf);
}
END_TEST

START_TEST(test_span_single)
{
    uint8_t   buf[64] = { 0 };
    size_t    wire;
    uint64_t  plen;
    unsigned  np;

    slc_test_packet(buf, 10, 0);
    ck_assert_int_eq(slc_mysql_message_span(buf, 14, &wire, &plen, &np), 1);
    ck_assert_uint_eq(wire, 14);
    ck_assert_uint_eq(plen, 10);
    ck_assert_uint_eq(np, 1);
    ck_assert_int_eq(slc_mysql_message_span(buf, 13, &wire, &plen, &np), 0);
    ck_assert_int_eq(slc_mysql_message_span(buf, 0, &wire, &plen, &np), 0);
    ck_assert_int_eq(slc_mysql_message_span(buf, sizeof(buf), &wire, &plen,
                                            &np), 1);
    ck_assert_uint_eq(wire, 14);
}
END_TEST

START_TEST(test_span_empty_packet)
{
    uint8_t   buf[4];
    size_t    wire;
    uint64_t  plen;
    unsigned  np;

    slc_test_packet(buf, 0, 9);
    ck_assert_int_eq(slc_mysql_message_span(buf, 4, &wire, &plen, &np), 1);
    ck_assert_uint_eq(wire, 4);
    ck_assert_uint_eq(plen, 0);
    ck_assert_uint_eq(np, 1);
}
END_TEST

/* Exactly 0xffffff bytes: a full packet and then an empty one ends it. */
START_TEST(test_span_exact_max_then_empty)
{
    size_t    n = 2 * SLC_MYSQL_HDR_LEN + SLC_TEST_MAX + 8;
    uint8_t  *buf = slc_test_buf(n), *p;
    size_t    wire;
    uint64_t  plen;
    unsigned  np;

    p = slc_test_packet(buf, SLC_TEST_MAX, 0);
    slc_test_packet(p, 0, 1);

    /* the full packet alone is not the whole message */
    ck_assert_int_eq(slc_mysql_message_span(buf, (size_t) (p - buf), &wire,
                                            &plen, &np), 0);
    ck_assert_int_eq(slc_mysql_message_span(buf, (size_t) (p - buf) + 3,
                                            &wire, &plen, &np), 0);
    ck_assert_int_eq(slc_mysql_message_span(buf, n, &wire, &plen, &np), 1);
    ck_assert_uint_eq(wire, 2 * SLC_MYSQL_HDR_LEN + SLC_TEST_MAX);
    ck_assert_uint_eq(plen, SLC_TEST_MAX);
    ck_assert_uint_eq(np, 2);
    free(buf);
}
END_TEST

/* 40 MB: two full packets and a short one, truncated at every stage. */
START_TEST(test_span_multi)
{
    uint64_t  total = 2 * (uint64_t) SLC_TEST_MAX + 12345;
    size_t    n = 3 * SLC_MYSQL_HDR_LEN + (size_t) total;
    uint8_t  *buf = slc_test_buf(n + 100), *p;
    size_t    wire, cut[6], i;
    uint64_t  plen;
    unsigned  np;

    p = slc_test_packet(buf, SLC_TEST_MAX, 0);
    p = slc_test_packet(p, SLC_TEST_MAX, 1);
    slc_test_packet(p, 12345, 2);

    cut[0] = 3;                                   /* inside 1st header */
    cut[1] = SLC_MYSQL_HDR_LEN + 1000;            /* inside 1st payload */
    cut[2] = SLC_MYSQL_HDR_LEN + SLC_TEST_MAX;    /* at the 2nd header */
    cut[3] = (size_t) (p - buf) + 2;              /* inside 3rd header */
    cut[4] = (size_t) (p - buf) + SLC_MYSQL_HDR_LEN;  /* 3rd payload 0 B */
    cut[5] = n - 1;                               /* one byte short */
    for (i = 0; i < slc_nelems(cut); i++) {
        ck_assert_int_eq(slc_mysql_message_span(buf, cut[i], &wire, &plen,
                                                &np), 0);
    }

    ck_assert_int_eq(slc_mysql_message_span(buf, n, &wire, &plen, &np), 1);
    ck_assert_uint_eq(wire, n);
    ck_assert_uint_eq(plen, total);
    ck_assert_uint_eq(np, 3);

    /* the start of the next message does not belong to this one */
    ck_assert_int_eq(slc_mysql_message_span(buf, n + 100, &wire, &plen, &np),
                     1);
    ck_assert_uint_eq(wire, n);
    free(buf);
}
END_TEST

static Suite *
slc_packet_suite(void)
{
    Suite  *s = suite_create("mysql_packet");
    TCase  *tc = tcase_create("framing");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_hdr_write_read);
    tcase_add_test(tc, test_peek_partial);
    tcase_add_test(tc, test_peek_empty_and_trailing);
    tcase_add_test(tc, test_peek_max_payload);
    tcase_add_test(tc, test_span_single);
    tcase_add_test(tc, test_span_empty_packet);
    tcase_add_test(tc, test_span_exact_max_then_empty);
    tcase_add_test(tc, test_span_multi);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{

    return slc_check_run(slc_packet_suite());
}
