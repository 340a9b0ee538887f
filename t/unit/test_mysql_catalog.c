/*
 * Unit tests for the schema catalog (src/mysql/slc_mysql_catalog*.c),
 * built from rows given here as information_schema gives them (canonical
 * view definitions as MariaDB 10.11 prints them): a view's base tables
 * through views of views and the flags of their definitions, views that
 * cannot be placed (hidden, not a SELECT, a cycle, too deep, too many
 * tables), what a trigger writes through other triggers (a cycle, a
 * compound body, sql_mode), names as the cache keys them, the blind and
 * stale states, what the change hook is told, an image that does not fit,
 * readers racing a writer, and a torn image read without harm.
 */

#include "slc_test.h"
#include "slc_test_modules.h"

#include <pthread.h>

#include "slc_core.h"
#include "slc_mysql_catalog.h"
#include "slc_mysql_catalog_zone.h"
#include "slc_sql_classify.h"
#include "slc_mysql_monitor.h"

extern slc_module_t slc_core_module;

SLC_TEST_MODULES("core mysql mysql_monitor mysql_catalog",
    &slc_core_module, &slc_mysql_module, &slc_mysql_monitor_module,
    &slc_mysql_catalog_module);

#define SLC_TEST_ZONE  (256 * 1024)

/* ---- rows and a catalog over the test's memory ------------------------- */

#define S(x)  ((slc_str_t) { sizeof(x) - 1, (char *) (x) })

#define VIEW(db, name, def)                                                  \
    ((slc_catalog_view_row_t) { S(db), S(name), S(def) })
#define TRG(db, table, body, mode)                                           \
    ((slc_catalog_trigger_row_t) { S(db), S(db), S(table), S(body), mode })

typedef struct {
    slc_catalog_t              *c;
    void                       *mem;
    slc_catalog_view_row_t      v[64];
    unsigned                    nv;
    slc_catalog_trigger_row_t   t[64];
    unsigned                    nt;
    slc_catalog_rows_t          rows;
    slc_catalog_outcome_t       out;
} slc_test_cat_t;

/* What the hook was told last. */
static struct {
    unsigned    calls;
    int         all;
    unsigned    n;
    char        names[1024];    /* " a b c " */
} slc_test_hook;

static void
slc_test_changed(slc_cycle_t *cycle, const slc_upstream_t *up,
    const slc_str_t *names, unsigned n, int all)
{
    (void) cycle;
    (void) up;
    slc_test_hook.calls++;
    slc_test_hook.all = all;
    slc_test_hook.n = n;
    strlcpy(slc_test_hook.names, " ", sizeof(slc_test_hook.names));
    for (unsigned i = 0; i < n; i++) {
        ck_assert_uint_eq(strlen(names[i].data), names[i].len);
        strlcat(slc_test_hook.names, names[i].data,
            sizeof(slc_test_hook.names));
        strlcat(slc_test_hook.names, " ", sizeof(slc_test_hook.names));
    }
}

static int
slc_test_told(const char *name)
{
    char w[600];

    snprintf(w, sizeof(w), " %s ", name);
    return strstr(slc_test_hook.names, w) != NULL;
}

static void
slc_test_open(slc_test_cat_t *tc, size_t size)
{
    memset(tc, 0, sizeof(*tc));
    tc->mem = aligned_alloc(64, size);
    ck_assert_ptr_nonnull(tc->mem);
    tc->c = slc_catalog_mem(tc->mem, size);
    ck_assert_ptr_nonnull(tc->c);
    slc_catalog_on_change(slc_test_changed);
    memset(&slc_test_hook, 0, sizeof(slc_test_hook));
}

static void
slc_test_close(slc_test_cat_t *tc)
{
    free(tc->c);
    free(tc->mem);
}

static int
slc_test_publish(slc_test_cat_t *tc)
{
    tc->rows.views = tc->v;
    tc->rows.nviews = tc->nv;
    tc->rows.triggers = tc->t;
    tc->rows.ntriggers = tc->nt;
    tc->rows.ddl_at = slc_catalog_load_begin(tc->c);
    tc->rows.server = "127.0.0.1:3306";
    return slc_catalog_publish(tc->c, &tc->rows, &tc->out);
}

/* The answer to a read of `key` as text: "table", "unknown", or "view"
   and its names in order. */
static const char *
slc_test_reads(slc_test_cat_t *tc, const char *key, uint32_t *flags)
{
    static char         buf[2048];
    slc_catalog_names_t out;
    slc_catalog_kind_t  k;

    memset(&out, 0, sizeof(out));
    k = slc_catalog_reads(tc->c, key, strlen(key), &out);
    if (flags != NULL) {
        *flags = out.flags;
    }
    if (k != SLC_CATALOG_VIEW) {
        ck_assert_uint_eq(out.n, 0);
        return k == SLC_CATALOG_TABLE ? "table" : "unknown";
    }
    strlcpy(buf, "view", sizeof(buf));
    for (unsigned i = 0; i < out.n; i++) {
        ck_assert_uint_eq(strlen(out.name[i].data), out.name[i].len);
        strlcat(buf, " ", sizeof(buf));
        strlcat(buf, out.name[i].data, sizeof(buf));
    }
    return buf;
}

/* The answer to a write of `key`: "error", "all", or "writes" and names. */
static const char *
slc_test_writes(slc_test_cat_t *tc, const char *key)
{
    static char         buf[2048];
    slc_catalog_names_t out;

    memset(&out, 0, sizeof(out));
    if (slc_catalog_writes(tc->c, key, strlen(key), &out) != SLC_OK) {
        return "error";
    }
    if (out.all) {
        return "all";
    }
    strlcpy(buf, "writes", sizeof(buf));
    for (unsigned i = 0; i < out.n; i++) {
        strlcat(buf, " ", sizeof(buf));
        strlcat(buf, out.name[i].data, sizeof(buf));
    }
    return buf;
}

/* ---- views ------------------------------------------------------------- */

/* As MariaDB 10.11 prints them in information_schema.VIEWS. */
#define DEF_V1 "select `test`.`t1`.`id` AS `id`,`test`.`t2`.`b` AS `b` from " \
    "(`test`.`t1` join `test`.`t2` on(`test`.`t1`.`id` = `test`.`t2`.`id`)) " \
    "where `test`.`t2`.`b` <> 'x\\'y\\\\z'"
#define DEF_V2 "select `v1`.`id` AS `id`,`v1`.`b` AS `b` from `test`.`v1` " \
    "where `v1`.`id` > 1"
#define DEF_NOW "select `test`.`t1`.`id` AS `id`,current_timestamp() AS `n` " \
    "from `test`.`t1`"

START_TEST(test_view_closure)
{
    slc_test_cat_t      tc;
    slc_catalog_names_t out;

    slc_test_open(&tc, SLC_TEST_ZONE);
    tc.v[tc.nv++] = VIEW("test", "v2", DEF_V2);     /* before its base */
    tc.v[tc.nv++] = VIEW("test", "v1", DEF_V1);
    tc.v[tc.nv++] = VIEW("test", "vu", "select `test`.`t1`.`a` AS `a` from "
        "`test`.`t1` union select `test`.`Log`.`id` AS `id` from "
        "`test`.`Log`");
    tc.v[tc.nv++] = VIEW("test", "vs", "select `x`.`id` AS `id` from "
        "(select `test`.`t3`.`id` AS `id` from `test`.`t3`) `x` where "
        "`x`.`id` in (select `test`.`v1`.`id` from `test`.`v1`)");
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert(tc.out.fits);
    ck_assert_str_eq(slc_test_reads(&tc, "test.v1", NULL),
        "view test.t1 test.t2");
    ck_assert_str_eq(slc_test_reads(&tc, "test.v2", NULL),
        "view test.t1 test.t2");
    ck_assert_str_eq(slc_test_reads(&tc, "test.vu", NULL),
        "view test.t1 test.log");
    ck_assert_str_eq(slc_test_reads(&tc, "test.vs", NULL),
        "view test.t3 test.t1 test.t2");
    ck_assert_str_eq(slc_test_reads(&tc, "test.t1", NULL), "table");
    ck_assert_str_eq(slc_test_reads(&tc, "other.v1", NULL), "table");
    /* answers accumulate, each name once */
    memset(&out, 0, sizeof(out));
    ck_assert_int_eq(slc_catalog_reads(tc.c, "test.v1", 7, &out),
        SLC_CATALOG_VIEW);
    ck_assert_int_eq(slc_catalog_reads(tc.c, "test.vu", 7, &out),
        SLC_CATALOG_VIEW);
    ck_assert_uint_eq(out.n, 3);
    ck_assert_str_eq(out.name[2].data, "test.log");
    slc_test_close(&tc);
}
END_TEST

START_TEST(test_view_flags)
{
    slc_test_cat_t tc;
    uint32_t       f;

    slc_test_open(&tc, SLC_TEST_ZONE);
    tc.v[tc.nv++] = VIEW("test", "vnow", DEF_NOW);
    tc.v[tc.nv++] = VIEW("test", "vv", "select `vnow`.`id` AS `id` from "
        "`test`.`vnow`");
    tc.v[tc.nv++] = VIEW("test", "vf", "select `test`.`f`(`test`.`t1`.`id`) "
        "AS `x` from `test`.`t1`");
    tc.v[tc.nv++] = VIEW("test", "vpure", "select `test`.`t1`.`id` AS `id` "
        "from `test`.`t1`");
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_str_eq(slc_test_reads(&tc, "test.vnow", &f), "view test.t1");
    ck_assert(f & SLC_SQL_F_NON_DETERMINISTIC);
    /* a view of it carries its flags */
    ck_assert_str_eq(slc_test_reads(&tc, "test.vv", &f), "view test.t1");
    ck_assert(f & SLC_SQL_F_NON_DETERMINISTIC);
    ck_assert_str_eq(slc_test_reads(&tc, "test.vf", &f), "view test.t1");
    ck_assert(f & SLC_SQL_F_STORED_FUNC);
    ck_assert_str_eq(slc_test_reads(&tc, "test.vpure", &f), "view test.t1");
    ck_assert_uint_eq(f, 0);
    slc_test_close(&tc);
}
END_TEST

START_TEST(test_view_unplaceable)
{
    static char     defs[20][160];
    slc_test_cat_t  tc;
    char            many[1024] = "select 1 AS `x` from `test`.`m0`";

    slc_test_open(&tc, SLC_TEST_ZONE);
    /* the account may not see it: no definition */
    tc.v[tc.nv++] = VIEW("test", "hidden", "");
    tc.v[tc.nv++] = VIEW("test", "overhidden", "select `hidden`.`a` AS `a` "
        "from `test`.`hidden`");
    tc.v[tc.nv++] = VIEW("test", "cut", "select 'abc AS `x` from `test`.`t`");
    /* a cycle (the server refuses one at CREATE, not after a DROP) */
    tc.v[tc.nv++] = VIEW("test", "ca", "select 1 AS `1` from `test`.`cb`");
    tc.v[tc.nv++] = VIEW("test", "cb", "select 1 AS `1` from `test`.`ca`");
    tc.v[tc.nv++] = VIEW("test", "overcycle", "select 1 AS `1` from "
        "`test`.`t1` join `test`.`cb`");
    /* 16 views deep is placed, 17 is not; the top one first */
    for (int i = 17; i >= 1; i--) {
        char *name = defs[i];
        snprintf(name, 16, "d%d", i);
        snprintf(defs[i] + 16, sizeof(defs[i]) - 16, "select 1 AS `1` from "
            "`test`.`%s%d`", i > 1 ? "d" : "t", i > 1 ? i - 1 : 0);
        tc.v[tc.nv++] = (slc_catalog_view_row_t) { S("test"),
            { strlen(name), name }, { strlen(defs[i] + 16), defs[i] + 16 } };
    }
    /* 17 base tables through two views */
    for (int i = 1; i < 9; i++) {
        snprintf(many + strlen(many), sizeof(many) - strlen(many),
            " join `test`.`m%d`", i);
    }
    tc.v[tc.nv++] = VIEW("test", "nn", "select 1 AS `1` from `test`.`n0` "
        "join `test`.`n1` join `test`.`n2` join `test`.`n3` join `test`.`n4` "
        "join `test`.`n5` join `test`.`n6` join `test`.`n7`");
    tc.v[tc.nv++] = (slc_catalog_view_row_t) { S("test"), S("mm"),
        { strlen(many), many } };
    tc.v[tc.nv++] = VIEW("test", "mmm", "select 1 AS `1` from `test`.`mm` "
        "join `test`.`nn`");
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_uint_eq(tc.out.hidden, 1);
    ck_assert_str_eq(tc.out.hidden_name, "test.hidden");
    ck_assert_str_eq(slc_test_reads(&tc, "test.hidden", NULL), "unknown");
    ck_assert_str_eq(slc_test_reads(&tc, "test.overhidden", NULL),
        "unknown");
    ck_assert_str_eq(slc_test_reads(&tc, "test.cut", NULL), "unknown");
    ck_assert_str_eq(slc_test_reads(&tc, "test.ca", NULL), "unknown");
    ck_assert_str_eq(slc_test_reads(&tc, "test.cb", NULL), "unknown");
    ck_assert_str_eq(slc_test_reads(&tc, "test.overcycle", NULL), "unknown");
    ck_assert_str_eq(slc_test_reads(&tc, "test.d16", NULL), "view test.t0");
    ck_assert_str_eq(slc_test_reads(&tc, "test.d17", NULL), "unknown");
    ck_assert_str_eq(slc_test_reads(&tc, "test.d1", NULL), "view test.t0");
    ck_assert_str_eq(slc_test_reads(&tc, "test.mm", NULL), "view test.m0 "
        "test.m1 test.m2 test.m3 test.m4 test.m5 test.m6 test.m7 test.m8");
    ck_assert_str_eq(slc_test_reads(&tc, "test.mmm", NULL), "unknown");
    /* a write through a view that cannot be placed: anything */
    ck_assert_str_eq(slc_test_writes(&tc, "test.ca"), "all");
    ck_assert_str_eq(slc_test_writes(&tc, "test.d16"), "writes test.t0");
    slc_test_close(&tc);
}
END_TEST

/* The depth limit does not depend on the order the rows come in. */
START_TEST(test_view_depth_order)
{
    static char     defs[20][160];
    slc_test_cat_t  tc;

    slc_test_open(&tc, SLC_TEST_ZONE);
    for (int i = 1; i <= 17; i++) {
        char *name = defs[i];
        snprintf(name, 16, "d%d", i);
        snprintf(defs[i] + 16, sizeof(defs[i]) - 16, "select 1 AS `1` from "
            "`test`.`%s%d`", i > 1 ? "d" : "t", i > 1 ? i - 1 : 0);
        tc.v[tc.nv++] = (slc_catalog_view_row_t) { S("test"),
            { strlen(name), name }, { strlen(defs[i] + 16), defs[i] + 16 } };
    }
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_str_eq(slc_test_reads(&tc, "test.d16", NULL), "view test.t0");
    ck_assert_str_eq(slc_test_reads(&tc, "test.d17", NULL), "unknown");
    slc_test_close(&tc);
}
END_TEST

/* ---- triggers ---------------------------------------------------------- */

START_TEST(test_trigger_closure)
{
    slc_test_cat_t tc;

    slc_test_open(&tc, SLC_TEST_ZONE);
    tc.t[tc.nt++] = TRG("test", "t1", "INSERT INTO Log VALUES (NEW.id, NOW())",
        0);
    tc.t[tc.nt++] = TRG("test", "log", "UPDATE stats SET n = n + 1", 0);
    tc.t[tc.nt++] = TRG("test", "t1", "SET NEW.a = NEW.a + 1", 0);
    tc.t[tc.nt++] = TRG("test", "own", "SET NEW.a = (SELECT MAX(x) FROM "
        "test.own)", 0);
    tc.t[tc.nt++] = TRG("test", "setonly", "SET NEW.a = 1", 0);
    /* a cycle */
    tc.t[tc.nt++] = TRG("test", "ca", "INSERT INTO cb VALUES (1)", 0);
    tc.t[tc.nt++] = TRG("test", "cb", "DELETE FROM ca WHERE id = OLD.id", 0);
    /* writes that cannot be named */
    tc.t[tc.nt++] = TRG("test", "t2", "BEGIN INSERT INTO Log VALUES "
        "(OLD.id, NOW()); DELETE FROM t1 WHERE id = OLD.id; END", 0);
    tc.t[tc.nt++] = TRG("test", "tcall", "CALL p(NEW.id)", 0);
    tc.t[tc.nt++] = TRG("test", "tfn", "UPDATE x SET a = f(NEW.id)", 0);
    tc.t[tc.nt++] = TRG("test", "tnot", "BEGIN NOT ATOMIC INSERT INTO x "
        "VALUES (1); END", 0);
    /* writes a table whose trigger writes anything */
    tc.t[tc.nt++] = TRG("test", "tup", "INSERT INTO t2 VALUES (NEW.id)", 0);
    /* a view written: its base tables, and their triggers' writes */
    tc.v[tc.nv++] = VIEW("test", "vt1", "select `test`.`t1`.`id` AS `id` "
        "from `test`.`t1`");
    tc.t[tc.nt++] = TRG("test", "tview", "INSERT INTO vt1 VALUES (NEW.id)",
        0);
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_str_eq(slc_test_writes(&tc, "test.t1"),
        "writes test.log test.stats");
    ck_assert_str_eq(slc_test_writes(&tc, "test.log"), "writes test.stats");
    ck_assert_str_eq(slc_test_writes(&tc, "test.stats"), "writes");
    ck_assert_str_eq(slc_test_writes(&tc, "test.own"), "writes");
    ck_assert_str_eq(slc_test_writes(&tc, "test.setonly"), "writes");
    ck_assert_str_eq(slc_test_writes(&tc, "test.nothing"), "writes");
    ck_assert_str_eq(slc_test_writes(&tc, "test.ca"), "writes test.cb");
    ck_assert_str_eq(slc_test_writes(&tc, "test.cb"), "writes test.ca");
    ck_assert_str_eq(slc_test_writes(&tc, "test.t2"), "all");
    ck_assert_str_eq(slc_test_writes(&tc, "test.tcall"), "all");
    ck_assert_str_eq(slc_test_writes(&tc, "test.tfn"), "all");
    ck_assert_str_eq(slc_test_writes(&tc, "test.tnot"), "all");
    ck_assert_str_eq(slc_test_writes(&tc, "test.tup"), "all");
    ck_assert_str_eq(slc_test_writes(&tc, "test.vt1"),
        "writes test.t1 test.log test.stats");
    ck_assert_str_eq(slc_test_writes(&tc, "test.tview"),
        "writes test.vt1 test.t1 test.log test.stats");
    /* a table with triggers is not a view */
    ck_assert_str_eq(slc_test_reads(&tc, "test.t1", NULL), "table");
    slc_test_close(&tc);
}
END_TEST

START_TEST(test_trigger_sql_mode)
{
    slc_test_cat_t tc;

    slc_test_open(&tc, SLC_TEST_ZONE);
    ck_assert_uint_eq(slc_catalog_sql_mode("STRICT_TRANS_TABLES,"
        "ANSI_QUOTES,NO_BACKSLASH_ESCAPES", 52),
        SLC_CATALOG_MODE_ANSI_QUOTES
        | SLC_CATALOG_MODE_NO_BACKSLASH_ESCAPES);
    ck_assert_uint_eq(slc_catalog_sql_mode("ANSI_QUOTESX,XANSI_QUOTES", 25),
        0);
    ck_assert_uint_eq(slc_catalog_sql_mode("", 0), 0);
    /* "Log" is a name under ANSI_QUOTES: the classifier reads a string */
    tc.t[tc.nt++] = TRG("test", "aq", "INSERT INTO \"Log\" VALUES (NEW.id)",
        SLC_CATALOG_MODE_ANSI_QUOTES);
    tc.t[tc.nt++] = TRG("test", "aq2", "INSERT INTO Log VALUES ('no quote')",
        SLC_CATALOG_MODE_ANSI_QUOTES);
    /* a backslash escapes nothing here: the string ends after it */
    tc.t[tc.nt++] = TRG("test", "nbe", "INSERT INTO Log VALUES ('x\\')",
        SLC_CATALOG_MODE_NO_BACKSLASH_ESCAPES);
    tc.t[tc.nt++] = TRG("test", "be", "INSERT INTO Log VALUES ('x\\')", 0);
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_str_eq(slc_test_writes(&tc, "test.aq"), "all");
    ck_assert_str_eq(slc_test_writes(&tc, "test.aq2"), "writes test.log");
    ck_assert_str_eq(slc_test_writes(&tc, "test.nbe"), "writes test.log");
    ck_assert_str_eq(slc_test_writes(&tc, "test.be"), "all");
    slc_test_close(&tc);
}
END_TEST

START_TEST(test_trigger_many)
{
    static char    bodies[20][64], tables[20][16];
    slc_test_cat_t tc;

    slc_test_open(&tc, SLC_TEST_ZONE);
    /* a chain w0 -> w1 -> ... -> w17: 17 tables written from w0 */
    for (int i = 0; i < 17; i++) {
        snprintf(tables[i], sizeof(tables[i]), "w%d", i);
        snprintf(bodies[i], sizeof(bodies[i]), "INSERT INTO w%d VALUES (1)",
            i + 1);
        tc.t[tc.nt++] = (slc_catalog_trigger_row_t) { S("test"), S("test"),
            { strlen(tables[i]), tables[i] },
            { strlen(bodies[i]), bodies[i] }, 0 };
    }
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_str_eq(slc_test_writes(&tc, "test.w0"), "all");
    ck_assert_str_eq(slc_test_writes(&tc, "test.w1"), "writes test.w2 "
        "test.w3 test.w4 test.w5 test.w6 test.w7 test.w8 test.w9 test.w10 "
        "test.w11 test.w12 test.w13 test.w14 test.w15 test.w16 test.w17");
    slc_test_close(&tc);
}
END_TEST

/* ---- names ------------------------------------------------------------- */

START_TEST(test_names)
{
    slc_test_cat_t tc;

    slc_test_open(&tc, SLC_TEST_ZONE);
    /* information_schema's names are raw: a backtick is one */
    tc.v[tc.nv++] = VIEW("Test", "Weird`V", "select `Test`.`A``B`.`x` AS `x` "
        "from `Test`.`A``B` join `T2`");
    /* an unqualified name is in the view's schema, bytes past ASCII kept */
    tc.v[tc.nv++] = VIEW("Sch", "\xc3\x84V", "select `t`.`x` AS `x` from "
        "`\xc3\x84T` `t`");
    tc.t[tc.nt++] = (slc_catalog_trigger_row_t) { S("Trg"), S("Tbl"),
        S("T1"), S("INSERT INTO `Lo``g` SELECT * FROM other.`X`"), 0 };
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_str_eq(slc_test_reads(&tc, "test.weird`v", NULL),
        "view test.a`b test.t2");
    ck_assert_str_eq(slc_test_reads(&tc, "Test.Weird`V", NULL), "table");
    ck_assert_str_eq(slc_test_reads(&tc, "sch.\xc3\x84v", NULL),
        "view sch.\xc3\x84t");
    /* the trigger's table is in EVENT_OBJECT_SCHEMA, its unqualified
       names in TRIGGER_SCHEMA */
    ck_assert_str_eq(slc_test_writes(&tc, "tbl.t1"),
        "writes trg.lo`g other.x");
    slc_test_close(&tc);
}
END_TEST

/* ---- states ------------------------------------------------------------ */

START_TEST(test_blind)
{
    slc_test_cat_t      tc;
    slc_catalog_facts_t f;
    slc_catalog_stats_t st;

    slc_test_open(&tc, SLC_TEST_ZONE);
    /* never loaded */
    ck_assert_str_eq(slc_test_reads(&tc, "test.v1", NULL), "unknown");
    ck_assert_str_eq(slc_test_writes(&tc, "test.t1"), "error");
    ck_assert_int_eq(slc_catalog_facts(tc.c, &f), SLC_ERROR);
    ck_assert_int_eq(slc_catalog_stats(tc.c, &st), SLC_OK);
    ck_assert(!st.loaded);
    /* blind: the rows may be short, nothing is answered */
    tc.v[tc.nv++] = VIEW("test", "v1", DEF_V1);
    tc.rows.blind = 1;
    tc.rows.sql_mode = SLC_CATALOG_MODE_ANSI_QUOTES;
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_uint_eq(slc_test_hook.calls, 0);
    ck_assert_str_eq(slc_test_reads(&tc, "test.v1", NULL), "unknown");
    ck_assert_str_eq(slc_test_reads(&tc, "test.t1", NULL), "unknown");
    ck_assert_str_eq(slc_test_writes(&tc, "test.t1"), "error");
    f.ready = 1;
    ck_assert_int_eq(slc_catalog_facts(tc.c, &f), SLC_ERROR);
    ck_assert(!f.ready && !f.ansi_quotes);
    ck_assert_int_eq(slc_catalog_stats(tc.c, &st), SLC_OK);
    ck_assert(st.loaded && st.blind && !st.too_small);
    /* the grant added: everything may have changed */
    tc.rows.blind = 0;
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_uint_eq(slc_test_hook.calls, 1);
    ck_assert(slc_test_hook.all);
    ck_assert_str_eq(slc_test_reads(&tc, "test.v1", NULL),
        "view test.t1 test.t2");
    ck_assert_int_eq(slc_catalog_facts(tc.c, &f), SLC_OK);
    ck_assert(f.ready && f.ansi_quotes && !f.read_uncommitted);
    slc_test_close(&tc);
}
END_TEST

START_TEST(test_ddl_seen)
{
    slc_test_cat_t      tc;
    slc_catalog_stats_t st;
    uint32_t            d;

    slc_test_open(&tc, SLC_TEST_ZONE);
    tc.v[tc.nv++] = VIEW("test", "v1", DEF_V1);
    tc.rows.read_uncommitted = 1;
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_str_eq(slc_test_reads(&tc, "test.v1", NULL),
        "view test.t1 test.t2");
    slc_catalog_ddl_seen(tc.c);
    ck_assert_str_eq(slc_test_reads(&tc, "test.v1", NULL), "unknown");
    ck_assert_str_eq(slc_test_writes(&tc, "test.t1"), "error");
    ck_assert_int_eq(slc_catalog_stats(tc.c, &st), SLC_OK);
    ck_assert(st.loaded && !st.current);
    /* a load that began before more DDL is stale too */
    d = slc_catalog_load_begin(tc.c);
    slc_catalog_ddl_seen(tc.c);
    tc.rows.views = tc.v;
    tc.rows.nviews = tc.nv;
    tc.rows.ddl_at = d;
    ck_assert_int_eq(slc_catalog_publish(tc.c, &tc.rows, &tc.out), SLC_OK);
    ck_assert_str_eq(slc_test_reads(&tc, "test.v1", NULL), "unknown");
    /* one that began after: current */
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_str_eq(slc_test_reads(&tc, "test.v1", NULL),
        "view test.t1 test.t2");
    ck_assert_int_eq(slc_catalog_stats(tc.c, &st), SLC_OK);
    ck_assert(st.current);
    ck_assert_uint_eq(st.loads, 3);
    slc_test_close(&tc);
}
END_TEST

/* ---- what the hook is told -------------------------------------------- */

START_TEST(test_changes)
{
    slc_test_cat_t      tc;
    slc_catalog_stats_t st;

    slc_test_open(&tc, SLC_TEST_ZONE);
    tc.v[tc.nv++] = VIEW("test", "v1", DEF_V1);
    tc.t[tc.nt++] = TRG("test", "t1", "INSERT INTO Log VALUES (NEW.id)", 0);
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    /* a new zone: all */
    ck_assert_uint_eq(slc_test_hook.calls, 1);
    ck_assert(slc_test_hook.all);
    ck_assert_int_eq(slc_catalog_stats(tc.c, &st), SLC_OK);
    ck_assert_uint_eq(st.version, 1);
    /* the same rows: nothing */
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_uint_eq(slc_test_hook.calls, 1);
    ck_assert(!tc.out.changed);
    ck_assert_int_eq(slc_catalog_stats(tc.c, &st), SLC_OK);
    ck_assert_uint_eq(st.version, 1);
    ck_assert_uint_eq(st.loads, 2);
    /* a view appears: it, and what a write through it writes */
    tc.v[tc.nv++] = VIEW("test", "v2", DEF_V2);
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_uint_eq(slc_test_hook.calls, 2);
    ck_assert(!slc_test_hook.all);
    ck_assert_str_eq(slc_test_hook.names,
        " test.v2 test.t1 test.t2 test.log ");
    /* a trigger appears on t2: t2, what it writes, and the views whose
       writes now reach further */
    tc.t[tc.nt++] = TRG("test", "t2", "UPDATE stats SET n = n + 1", 0);
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_uint_eq(slc_test_hook.calls, 3);
    ck_assert(slc_test_told("test.t2") && slc_test_told("test.stats")
              && slc_test_told("test.v1") && slc_test_told("test.v2"));
    /* a trigger's body changes */
    tc.t[0] = TRG("test", "t1", "INSERT INTO Log2 VALUES (NEW.id)", 0);
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert(slc_test_told("test.t1") && slc_test_told("test.log2"));
    ck_assert(!slc_test_told("test.log"));
    /* a view vanishes */
    tc.nv = 1;
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert_str_eq(slc_test_hook.names, " test.v2 ");
    /* one whose definition changed but not its tables */
    tc.v[0] = VIEW("test", "v1", "select `test`.`t1`.`id` AS `id` from "
        "(`test`.`t1` join `test`.`t2`)");
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert(slc_test_told("test.v1"));
    /* a trigger that writes anything: all */
    tc.t[tc.nt++] = TRG("test", "t3", "CALL p()", 0);
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert(slc_test_hook.all);
    /* the server's sql_mode changes the keys: all */
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    slc_test_hook.all = 0;
    tc.rows.sql_mode = SLC_CATALOG_MODE_ANSI_QUOTES;
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    ck_assert(slc_test_hook.all);
    slc_test_close(&tc);
}
END_TEST

START_TEST(test_too_small)
{
    static char         names[400][16];
    slc_test_cat_t      tc;
    slc_catalog_stats_t st;
    slc_catalog_view_row_t *many = calloc(400, sizeof(*many));

    slc_test_open(&tc, 64 * 1024);
    for (int i = 0; i < 400; i++) {
        snprintf(names[i], sizeof(names[i]), "view%03d", i);
        many[i] = (slc_catalog_view_row_t) { S("test"),
            { strlen(names[i]), names[i] }, S(DEF_V1) };
    }
    tc.rows.views = many;
    tc.rows.nviews = 400;
    tc.rows.ddl_at = slc_catalog_load_begin(tc.c);
    ck_assert_int_eq(slc_catalog_publish(tc.c, &tc.rows, &tc.out), SLC_OK);
    ck_assert(!tc.out.fits);
    ck_assert_uint_gt(tc.out.need, tc.out.room);
    ck_assert_uint_eq(slc_test_hook.calls, 0);
    ck_assert_int_eq(slc_catalog_stats(tc.c, &st), SLC_OK);
    ck_assert(st.loaded && st.too_small);
    ck_assert_str_eq(slc_test_reads(&tc, "test.view001", NULL), "unknown");
    ck_assert_str_eq(slc_test_writes(&tc, "test.t1"), "error");
    /* fewer views fit again: all */
    tc.rows.nviews = 10;
    ck_assert_int_eq(slc_catalog_publish(tc.c, &tc.rows, &tc.out), SLC_OK);
    ck_assert(tc.out.fits);
    ck_assert(slc_test_hook.all);
    ck_assert_str_eq(slc_test_reads(&tc, "test.view001", NULL),
        "view test.t1 test.t2");
    slc_test_close(&tc);
    free(many);
}
END_TEST

/* ---- readers racing a writer ------------------------------------------ */

typedef struct {
    slc_test_cat_t     *tc;
    volatile int        stop;
    unsigned long       views, unknown;
    int                 bad;
    char                what[256];
} slc_test_race_t;

/* Catalogs A and B name test.v differently; a reader must see one of
   them whole, never a mix nor a torn name. */
static void *
slc_test_reader(void *arg)
{
    slc_test_race_t *r = arg;

    while (!r->stop && !r->bad) {
        slc_catalog_names_t out;
        slc_catalog_kind_t  k;
        int                 a, b;

        memset(&out, 0, sizeof(out));
        k = slc_catalog_reads(r->tc->c, "test.v", 6, &out);
        if (k == SLC_CATALOG_UNKNOWN) {
            r->unknown++;
            continue;
        }
        a = k == SLC_CATALOG_VIEW && out.n == 2
            && strcmp(out.name[0].data, "test.a1") == 0
            && strcmp(out.name[1].data, "test.a2") == 0 && out.flags == 0;
        b = k == SLC_CATALOG_VIEW && out.n == 1
            && strcmp(out.name[0].data, "test.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb")
               == 0 && (out.flags & SLC_SQL_F_NON_DETERMINISTIC);
        if (!a && !b) {
            snprintf(r->what, sizeof(r->what), "kind %d n %u first %s", k,
                out.n, out.n > 0 ? out.name[0].data : "-");
            r->bad = 1;
        }
        r->views++;
    }
    return NULL;
}

START_TEST(test_race)
{
    slc_catalog_view_row_t a[2] = {
        VIEW("test", "v", "select 1 AS `1` from `test`.`a1` join `test`.`a2`"),
        VIEW("test", "x", "select 1 AS `1` from `test`.`x1`"),
    };
    slc_catalog_view_row_t b[1] = {
        VIEW("test", "v", "select now() AS `1` from "
            "`test`.`bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb`"),
    };
    slc_test_cat_t  tc;
    slc_test_race_t r = { .tc = &tc };
    pthread_t       th[2];

    slc_test_open(&tc, SLC_TEST_ZONE);
    slc_catalog_on_change(NULL);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(pthread_create(&th[i], NULL, slc_test_reader, &r),
            0);
    }
    for (int i = 0; i < 3000 && !r.bad; i++) {
        tc.rows.views = (i & 1) ? b : a;
        tc.rows.nviews = (i & 1) ? 1 : 2;
        tc.rows.ddl_at = slc_catalog_load_begin(tc.c);
        ck_assert_int_eq(slc_catalog_publish(tc.c, &tc.rows, &tc.out),
            SLC_OK);
    }
    r.stop = 1;
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
    }
    ck_assert_msg(!r.bad, "a reader saw %s", r.what);
    ck_assert_uint_gt(r.views, 0);
    slc_test_close(&tc);
}
END_TEST

/* An image of garbage under an even seqlock (a foreign or broken zone):
   readers answer something and touch nothing outside the image. */
START_TEST(test_torn_image)
{
    slc_test_cat_t       tc;
    slc_catalog_image_t *h;
    uint8_t             *p;

    slc_test_open(&tc, SLC_TEST_ZONE);
    tc.v[tc.nv++] = VIEW("test", "v1", DEF_V1);
    tc.t[tc.nt++] = TRG("test", "t1", "INSERT INTO Log VALUES (NEW.id)", 0);
    ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
    h = slc_catalog_image(tc.c, tc.c->zone->active);
    p = (uint8_t *) h;
    srandom(7);
    for (int round = 0; round < 2000; round++) {
        size_t used = h->used;
        for (size_t i = sizeof(*h); i < used; i++) {
            if (random() % 8 == 0) {
                p[i] = (uint8_t) random();
            }
        }
        if (round % 3 == 0) {
            h->nbuckets = (uint32_t) random() % 64;
            h->nentries = (uint32_t) random();
        }
        (void) slc_test_reads(&tc, "test.v1", NULL);
        (void) slc_test_writes(&tc, "test.t1");
        if (round % 50 == 49) {
            ck_assert_int_eq(slc_test_publish(&tc), SLC_OK);
            h = slc_catalog_image(tc.c, tc.c->zone->active);
            p = (uint8_t *) h;
        }
    }
    slc_test_close(&tc);
}
END_TEST

START_TEST(test_layout)
{
    ck_assert_uint_le(sizeof(slc_catalog_zone_t), SLC_CATALOG_ZONE_HDR);
    ck_assert_uint_eq(sizeof(slc_catalog_entry_t) % 8, 0);
    ck_assert_uint_eq(sizeof(slc_catalog_image_t) % 8, 0);
    ck_assert_uint_eq(offsetof(slc_catalog_image_t, seq), 0);
    ck_assert_uint_eq(slc_catalog_half(1024 * 1024) % 64, 0);
    ck_assert_uint_le(SLC_CATALOG_ZONE_HDR + 2 * slc_catalog_half(100000),
        100000);
    /* a key: two names of 256 bytes, a dot */
    ck_assert_uint_ge(SLC_CATALOG_NAME_MAX, 2 * SLC_CATALOG_PART_MAX + 1);
    {
        static uint64_t small[16];
        ck_assert_ptr_null(slc_catalog_mem(small, sizeof(small)));
    }
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("mysql_catalog");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_layout);
    tcase_add_test(tc, test_view_closure);
    tcase_add_test(tc, test_view_flags);
    tcase_add_test(tc, test_view_unplaceable);
    tcase_add_test(tc, test_view_depth_order);
    tcase_add_test(tc, test_trigger_closure);
    tcase_add_test(tc, test_trigger_sql_mode);
    tcase_add_test(tc, test_trigger_many);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_blind);
    tcase_add_test(tc, test_ddl_seen);
    tcase_add_test(tc, test_changes);
    tcase_add_test(tc, test_too_small);
    tcase_add_test(tc, test_race);
    tcase_add_test(tc, test_torn_image);
    suite_add_tcase(s, tc);
    return slc_check_run(s);
}
