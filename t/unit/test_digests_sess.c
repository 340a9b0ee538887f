/*
 * Unit tests for a session's digests (src/mysql/session/
 * slc_mysql_digests_sess.c): which commands are digested, a prepared
 * statement's digest found again by the PREPARE_OK's id at EXECUTE,
 * forgotten at CLOSE, RESET and CHANGE_USER, not kept when the PREPARE
 * failed, and the table's bound (the oldest replaced).
 */

#include "slc_test.h"
#include "slc_test_modules.h"

#include <stdio.h>
#include <string.h>

#include "slc_mysql_digests_sess.h"
#include "slc_mysql_proto.h"

static slc_module_t  slc_test_module = {
    .name = "test_digests_sess", .type = SLC_MODULE_CORE,
};

SLC_TEST_MODULES("test_digests_sess", &slc_test_module);

static uint8_t  pkt[300];

/* A command: its byte, then text (or a 4-byte statement id). */
static size_t
cmd_text(uint8_t com, const char *text)
{
    size_t n = strlen(text);

    pkt[0] = com;
    memcpy(pkt + 1, text, n);
    return n + 1;
}

static size_t
cmd_id(uint8_t com, uint32_t id)
{
    pkt[0] = com;
    for (int i = 0; i < 4; i++) {
        pkt[1 + i] = (uint8_t) (id >> (8 * i));
    }
    return 5;
}

static void
begin(slc_digests_sess_t *d, size_t n)
{
    slc_digests_begin(d, pkt, n, 0, "app", "test", SLC_DIGESTS_ON);
}

/* Prepare `text` and have the server answer PREPARE_OK with id. */
static void
prepare(slc_digests_sess_t *d, const char *text, uint32_t id)
{
    begin(d, cmd_text(SLC_COM_STMT_PREPARE, text));
    ck_assert(!d->digesting);
    slc_digests_end(d, 10, 0, 0, id);
}

/* Does an EXECUTE of id count, under which text? */
static const char *
execute(slc_digests_sess_t *d, uint32_t id)
{
    begin(d, cmd_id(SLC_COM_STMT_EXECUTE, id));
    return d->digesting ? d->st->text : NULL;
}

START_TEST(test_which)
{
    slc_digests_sess_t d = { 0 };

    begin(&d, cmd_text(SLC_COM_QUERY, "SELECT 1"));
    ck_assert(d.digesting);
    ck_assert_str_eq(d.st->text, "select ?");
    slc_digests_end(&d, 10, 0, 1, 0);
    ck_assert(!d.digesting);
    begin(&d, cmd_id(SLC_COM_PING, 0) - 4);
    ck_assert(!d.digesting);
    begin(&d, 0);                       /* an empty packet */
    ck_assert(!d.digesting);
    slc_digests_begin(&d, pkt, cmd_text(SLC_COM_QUERY, "SELECT 1"), 0,
        "app", "test", 0);              /* digests off */
    ck_assert(!d.digesting);
    slc_digests_sess_free(&d);
}
END_TEST

START_TEST(test_prepared)
{
    slc_digests_sess_t d = { 0 };

    ck_assert_ptr_null(execute(&d, 1));
    prepare(&d, "SELECT v FROM t WHERE id = ?", 7);
    ck_assert_str_eq(execute(&d, 7), "select v from t where id = ?");
    ck_assert_ptr_null(execute(&d, 8));
    /* a failed PREPARE keeps nothing */
    begin(&d, cmd_text(SLC_COM_STMT_PREPARE, "SELECT nope"));
    slc_digests_end(&d, 10, 1, 0, 0);
    ck_assert_ptr_null(execute(&d, 0));
    /* CLOSE forgets it */
    begin(&d, cmd_id(SLC_COM_STMT_CLOSE, 7));
    ck_assert(!d.digesting);
    ck_assert_ptr_null(execute(&d, 7));
    /* RESET and CHANGE_USER forget them all */
    prepare(&d, "SELECT 1", 1);
    prepare(&d, "SELECT 2 FROM t", 2);
    ck_assert_ptr_nonnull(execute(&d, 2));
    begin(&d, cmd_id(SLC_COM_RESET_CONNECTION, 0) - 4);
    ck_assert_ptr_null(execute(&d, 1));
    ck_assert_ptr_null(execute(&d, 2));
    prepare(&d, "SELECT 1", 1);
    begin(&d, cmd_text(SLC_COM_CHANGE_USER, "other"));
    ck_assert_ptr_null(execute(&d, 1));
    slc_digests_sess_free(&d);
}
END_TEST

START_TEST(test_bound)
{
    slc_digests_sess_t d = { 0 };
    char               text[64];

    for (uint32_t id = 1; id <= SLC_DIGESTS_PS + 3; id++) {
        snprintf(text, sizeof(text), "SELECT c%u FROM t", id);
        prepare(&d, text, id);
    }
    /* the first three gave their places to the last three */
    for (uint32_t id = 1; id <= 3; id++) {
        ck_assert_ptr_null(execute(&d, id));
    }
    for (uint32_t id = 4; id <= SLC_DIGESTS_PS + 3; id++) {
        snprintf(text, sizeof(text), "select c%u from t", id);
        ck_assert_str_eq(execute(&d, id), text);
    }
    /* the same id prepared again takes its own place */
    prepare(&d, "SELECT again", 10);
    ck_assert_str_eq(execute(&d, 10), "select again");
    ck_assert_str_eq(execute(&d, 11), "select c11 from t");
    slc_digests_sess_free(&d);
    ck_assert_ptr_null(d.ps);
}
END_TEST

static Suite *
slc_digests_sess_suite(void)
{
    Suite  *s = suite_create("digests_sess");
    TCase  *tc = tcase_create("sess");

    tcase_add_test(tc, test_which);
    tcase_add_test(tc, test_prepared);
    tcase_add_test(tc, test_bound);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    return slc_check_run(slc_digests_sess_suite());
}
