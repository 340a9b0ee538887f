/*
 * Unit tests for the accounts from the servers
 * (src/mysql/upstream/slc_mysql_accounts.c): host patterns match as MariaDB
 * matches them, the table sorts as its acl_users do, the entry picked for
 * user@host is the server's, a loopback client is also `localhost` when
 * the server resolves names (skip_name_resolve OFF) and only its address
 * when not, a published table is read back with its setting, and the
 * request/served tickets survive the counter wrapping.
 */

#include "slc_test.h"
#include "slc_test_modules.h"

#include "slc_core.h"
#include "slc_mysql_accounts.h"
#include "slc_mysql_monitor.h"

extern slc_module_t slc_core_module;

SLC_TEST_MODULES("core mysql mysql_monitor mysql_accounts",
    &slc_core_module, &slc_mysql_module, &slc_mysql_monitor_module,
    &slc_mysql_accounts_module);

static slc_account_t
slc_test_account(const char *user, const char *host, const char *plugin)
{
    slc_account_t a;

    memset(&a, 0, sizeof(a));
    strlcpy(a.user, user, sizeof(a.user));
    strlcpy(a.host, host, sizeof(a.host));
    strlcpy(a.plugin, plugin, sizeof(a.plugin));
    a.native = strcmp(plugin, "mysql_native_password") == 0;
    slc_account_prepare(&a);
    return a;
}

/* `client` as sessions keep it: "localhost" (a unix socket) or an
   address; the server resolves names if `resolve`. */
static int
slc_test_match_as(const char *pattern, const char *client, int resolve)
{
    slc_account_t        a = slc_test_account("u", pattern,
                                              "mysql_native_password");
    slc_account_client_t c;

    slc_account_client(&c, client, resolve);
    return slc_account_host_match(&a, &c);
}

/* skip_name_resolve ON: addresses only */
static int
slc_test_match(const char *pattern, const char *client)
{
    return slc_test_match_as(pattern, client, 0);
}

START_TEST(test_host_match)
{
    static const struct {
        const char *pattern, *client;
        int         match;
    } cases[] = {
        { "%", "10.1.2.3", 1 },
        { "%", "localhost", 1 },
        { "", "10.1.2.3", 1 },          /* empty: any host */
        { "127.0.0.1", "127.0.0.1", 1 },
        { "127.0.0.1", "127.0.0.10", 0 },
        { "127.0.0.1", "localhost", 0 },
        { "localhost", "localhost", 1 },
        { "LocalHost", "localhost", 1 },    /* names are case-blind */
        { "local%", "localhost", 1 },
        { "localhos_", "localhost", 1 },
        { "localhost", "127.0.0.1", 0 },    /* no name resolution */
        { "127.0.0._", "127.0.0.1", 1 },
        { "127.0.0._", "127.0.0.12", 0 },
        { "127.0.0.__", "127.0.0.12", 1 },
        { "127.%", "127.0.0.1", 1 },
        { "127.%", "128.0.0.1", 0 },
        { "%.0.0.1", "127.0.0.1", 1 },
        { "1%2%3", "1.2.3", 1 },
        { "1%2%3", "1.2.3.4", 0 },
        { "1%%%3", "123", 1 },
        { "%1%1%1%1%1%2", "11111111111111111111111111111111", 0 },
        { "10.0.0.\\_", "10.0.0.1", 0 },    /* an escaped `_` is literal */
        { "10.0.0.\\_", "10.0.0._", 1 },
        { "10.0.0.\\%", "10.0.0.1", 0 },
        /* IP/netmask, IPv4 */
        { "10.0.0.0/255.255.255.0", "10.0.0.5", 1 },
        { "10.0.0.0/255.255.255.0", "10.0.1.5", 0 },
        { "10.0.0.0/255.0.0.0", "10.200.1.5", 1 },
        { "127.0.0.0/255.0.0.0", "localhost", 0 },
        { "10.0.0.0/255.255.255.0", "fe80::1", 0 },
        /* not a netmask: compared as a pattern */
        { "10.0.0.0/24", "10.0.0.5", 0 },
        { "::1", "::1", 1 },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_assert_msg(slc_test_match(cases[i].pattern, cases[i].client)
                      == cases[i].match, "'%s' against %s: expected %d",
                      cases[i].pattern, cases[i].client, cases[i].match);
    }
}
END_TEST

START_TEST(test_loopback)
{
    ck_assert(slc_account_loopback("127.0.0.1"));
    ck_assert(slc_account_loopback("::1"));
    ck_assert(slc_account_loopback("0:0:0:0:0:0:0:1"));
    /* the server's is_ip_loopback: 127.0.0.1 exactly, not 127/8 */
    ck_assert(!slc_account_loopback("127.0.0.2"));
    ck_assert(!slc_account_loopback("127.1.0.1"));
    ck_assert(!slc_account_loopback("::ffff:127.0.0.1"));
    ck_assert(!slc_account_loopback("10.0.0.1"));
    ck_assert(!slc_account_loopback("localhost"));  /* a unix socket */
    ck_assert(!slc_account_loopback(""));
}
END_TEST

/* With the server resolving names, a loopback peer is "localhost" and its
   address both, as sctx->host and sctx->ip. */
START_TEST(test_host_match_resolve)
{
    static const struct {
        const char *pattern, *client;
        int         on, off;    /* match with skip_name_resolve ON, OFF */
    } cases[] = {
        { "localhost", "127.0.0.1", 0, 1 },
        { "localhost", "::1", 0, 1 },
        { "LOCALHOST", "127.0.0.1", 0, 1 },     /* names: case-blind */
        { "local%", "127.0.0.1", 0, 1 },
        { "localhos_", "::1", 0, 1 },
        /* the address still matches as it is */
        { "127.0.0.1", "127.0.0.1", 1, 1 },
        { "127.%", "127.0.0.1", 1, 1 },
        { "127.0.0.0/255.0.0.0", "127.0.0.1", 1, 1 },
        { "::1", "::1", 1, 1 },
        { "%", "127.0.0.1", 1, 1 },
        /* other loopback addresses are not "localhost" to the server */
        { "localhost", "127.0.0.2", 0, 0 },
        { "127.0.0.2", "127.0.0.2", 1, 1 },
        /* sluice resolves no other address: a name never matches it */
        { "localhost", "10.0.0.1", 0, 0 },
        { "%.example.com", "10.0.0.1", 0, 0 },
        { "10.0.0.%", "10.0.0.1", 1, 1 },
        /* a unix socket is "localhost" either way, and has no address */
        { "localhost", "localhost", 1, 1 },
        { "127.0.0.1", "localhost", 0, 0 },
        { "127.0.0.0/255.0.0.0", "localhost", 0, 0 },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_assert_msg(slc_test_match_as(cases[i].pattern, cases[i].client,
                                        0) == cases[i].on,
                      "'%s' against %s, skip_name_resolve ON: expected %d",
                      cases[i].pattern, cases[i].client, cases[i].on);
        ck_assert_msg(slc_test_match_as(cases[i].pattern, cases[i].client,
                                        1) == cases[i].off,
                      "'%s' against %s, skip_name_resolve OFF: expected %d",
                      cases[i].pattern, cases[i].client, cases[i].off);
    }
}
END_TEST

/* Most specific first, as MariaDB sorts (get_magic_sort). */
START_TEST(test_sort_hosts)
{
    static const char *order[] = {
        "localhost", "127.0.0.1", "10.0.0.0/255.0.0.0",  /* no wildcard */
        "127.0.0._",            /* one `_`: fewer strings than any `%` */
        "%.example.com",        /* the longer the literal, the less a `%`
                                   can match, wherever it stands */
        "127.0.0.%",
        "127.0.%",
        "127.%",
        "%",
        "",
    };
    uint64_t prev = UINT64_MAX;

    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        uint64_t s = slc_account_sort(order[i], "u");
        if (i >= 3) {
            ck_assert_msg(s < prev, "'%s' sorts before '%s'", order[i],
                          order[i - 1]);
        } else {
            /* hosts without wildcards are all as specific */
            ck_assert_uint_eq(s, slc_account_sort("localhost", "u"));
        }
        prev = s;
    }
    /* the same host: a named user before the anonymous one */
    ck_assert_uint_gt(slc_account_sort("%", "u"), slc_account_sort("%", ""));
    /* a more specific host first, whoever the user */
    ck_assert_uint_gt(slc_account_sort("127.0.0.1", ""),
                      slc_account_sort("%", "u"));
    /* the literal prefix breaks ties, the way the server's code does it
       (a longer prefix sorts later) */
    ck_assert_uint_gt(slc_account_sort("a_bc", "u"),
                      slc_account_sort("abc_", "u"));
    ck_assert_uint_gt(slc_account_sort("%a", "u"),
                      slc_account_sort("a%", "u"));
}
END_TEST

START_TEST(test_table_order)
{
    slc_account_t a[6];

    a[0] = slc_test_account("u", "%", "mysql_native_password");
    a[1] = slc_test_account("", "localhost", "mysql_native_password");
    a[2] = slc_test_account("u", "127.0.0.1", "mysql_native_password");
    a[3] = slc_test_account("u", "localhost", "mysql_native_password");
    a[4] = slc_test_account("a", "%", "mysql_native_password");
    a[5] = slc_test_account("u", "127.%", "mysql_native_password");
    qsort(a, 6, sizeof(a[0]), slc_account_cmp);
    /* by user, then most specific host, then host descending */
    ck_assert_str_eq(a[0].user, "");
    ck_assert_str_eq(a[1].user, "a");
    ck_assert_str_eq(a[2].host, "localhost");
    ck_assert_str_eq(a[3].host, "127.0.0.1");
    ck_assert_str_eq(a[4].host, "127.%");
    ck_assert_str_eq(a[5].host, "%");
}
END_TEST

static const slc_account_t *
slc_test_pick_as(slc_account_t *a, unsigned n, const char *user,
    const char *host, int resolve)
{
    slc_account_client_t c;

    qsort(a, n, sizeof(a[0]), slc_account_cmp);
    slc_account_client(&c, host, resolve);
    return slc_accounts_match(a, n, user, &c);
}

static const slc_account_t *
slc_test_pick(slc_account_t *a, unsigned n, const char *user,
    const char *host)
{
    return slc_test_pick_as(a, n, user, host, 0);
}

START_TEST(test_pick)
{
    slc_account_t        a[5];
    const slc_account_t *m;

    a[0] = slc_test_account("u", "%", "mysql_native_password");
    a[1] = slc_test_account("u", "127.0.0.1", "ed25519");
    a[2] = slc_test_account("v", "%", "mysql_native_password");
    a[3] = slc_test_account("", "10.0.0.0/255.0.0.0", "mysql_native_password");
    a[4] = slc_test_account("", "%", "mysql_native_password");

    m = slc_test_pick(a, 5, "u", "127.0.0.1");
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(m->host, "127.0.0.1");     /* exact beats % */
    ck_assert_str_eq(m->plugin, "ed25519");
    m = slc_test_pick(a, 5, "u", "192.168.1.1");
    ck_assert_str_eq(m->host, "%");
    ck_assert_str_eq(m->user, "u");             /* named beats anonymous */
    /* the classic: an anonymous entry with a more specific host wins
       over the user's own `%` entry, as on the server */
    m = slc_test_pick(a, 5, "u", "10.1.1.1");
    ck_assert_str_eq(m->user, "");
    ck_assert_str_eq(m->host, "10.0.0.0/255.0.0.0");
    /* an unknown user gets the anonymous account */
    m = slc_test_pick(a, 5, "nobody", "192.168.1.1");
    ck_assert_str_eq(m->user, "");
    ck_assert_str_eq(m->host, "%");
    /* no anonymous entries: nothing */
    a[0] = slc_test_account("u", "%", "mysql_native_password");
    a[1] = slc_test_account("v", "%", "mysql_native_password");
    m = slc_test_pick(a, 2, "nobody", "192.168.1.1");
    ck_assert_ptr_null(m);
    /* a user that exists at other hosts only */
    a[0] = slc_test_account("w", "10.%", "mysql_native_password");
    m = slc_test_pick(a, 1, "w", "localhost");
    ck_assert_ptr_null(m);
    ck_assert_ptr_null(slc_test_pick(a, 0, "w", "10.0.0.1"));
}
END_TEST

/* The case: 'u'@'localhost' only, a client over TCP from
   127.0.0.1; then the server's pick among a loopback peer's entries. */
START_TEST(test_pick_loopback)
{
    slc_account_t        a[4];
    const slc_account_t *m;

    a[0] = slc_test_account("u", "localhost", "mysql_native_password");
    ck_assert_ptr_null(slc_test_pick_as(a, 1, "u", "127.0.0.1", 0));
    m = slc_test_pick_as(a, 1, "u", "127.0.0.1", 1);
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(m->host, "localhost");
    ck_assert_ptr_nonnull(slc_test_pick_as(a, 1, "u", "::1", 1));
    ck_assert_ptr_null(slc_test_pick_as(a, 1, "u", "127.0.0.2", 1));
    ck_assert_ptr_null(slc_test_pick_as(a, 1, "u", "10.0.0.1", 1));

    /* both match a loopback peer; as specific, the server's order (host
       descending) puts localhost first */
    a[0] = slc_test_account("u", "127.0.0.1", "mysql_native_password");
    a[1] = slc_test_account("u", "localhost", "ed25519");
    a[2] = slc_test_account("u", "%", "mysql_native_password");
    m = slc_test_pick_as(a, 3, "u", "127.0.0.1", 1);
    ck_assert_str_eq(m->host, "localhost");
    m = slc_test_pick_as(a, 3, "u", "127.0.0.1", 0);
    ck_assert_str_eq(m->host, "127.0.0.1");
    m = slc_test_pick_as(a, 3, "u", "::1", 1);
    ck_assert_str_eq(m->host, "localhost");
    m = slc_test_pick_as(a, 3, "u", "::1", 0);
    ck_assert_str_eq(m->host, "%");

    /* the anonymous ''@'localhost' of a fresh install beats 'u'@'%' for
       a loopback peer once the server resolves, as on the server */
    a[0] = slc_test_account("u", "%", "mysql_native_password");
    a[1] = slc_test_account("", "localhost", "mysql_native_password");
    m = slc_test_pick_as(a, 2, "u", "127.0.0.1", 1);
    ck_assert_str_eq(m->user, "");
    m = slc_test_pick_as(a, 2, "u", "127.0.0.1", 0);
    ck_assert_str_eq(m->user, "u");
}
END_TEST

START_TEST(test_publish)
{
    slc_accounts_zone_t *z = calloc(1, sizeof(*z));
    slc_account_t        a[3];
    slc_account_client_t c;
    const slc_accounts_table_t *tab;

    ck_assert_ptr_nonnull(z);
    a[0] = slc_test_account("u", "%", "mysql_native_password");
    a[1] = slc_test_account("a", "%", "mysql_native_password");
    a[2] = slc_test_account("u", "localhost", "mysql_native_password");
    slc_accounts_publish(z, a, 3, 1);
    ck_assert_uint_eq(z->loads, 1);
    tab = &z->tab[z->active];
    ck_assert_uint_eq(tab->n, 3);
    ck_assert_uint_eq(tab->seq, 2);     /* even: written and done */
    ck_assert_uint_eq(tab->resolve, 1);
    slc_account_client(&c, "localhost", (int) tab->resolve);
    ck_assert_str_eq(slc_accounts_match(tab->a, tab->n, "u", &c)->host,
                     "localhost");
    /* the next load goes into the other table, and replaces it whole,
       with its own setting */
    slc_accounts_publish(z, a, 1, 0);
    ck_assert_uint_eq(z->loads, 2);
    ck_assert_ptr_ne(&z->tab[z->active], tab);
    ck_assert_uint_eq(z->tab[z->active].n, 1);
    ck_assert_uint_eq(z->tab[z->active].resolve, 0);
    slc_accounts_publish(z, a, 0, 1);
    ck_assert_uint_eq(z->tab[z->active].n, 0);
    ck_assert_uint_eq(z->tab[z->active].resolve, 1);
    /* a table that shrank keeps no hash of the accounts it dropped */
    for (unsigned i = 1; i < 3; i++) {
        const char *p = (const char *) &z->tab[z->active].a[i];
        for (size_t j = 0; j < sizeof(slc_account_t); j++) {
            ck_assert_int_eq(p[j], 0);
        }
    }
    free(z);
}
END_TEST

START_TEST(test_tickets)
{
    slc_accounts_zone_t *z = calloc(1, sizeof(*z));
    uint32_t             t1, t2;

    ck_assert_ptr_nonnull(z);
    z->req = z->served = UINT32_MAX - 1;        /* about to wrap */
    t1 = slc_accounts_request(z);
    ck_assert(!slc_accounts_served(z, t1));
    t2 = slc_accounts_request(z);               /* wraps to 0 */
    ck_assert_uint_eq(t2, 0);
    z->served = t1;                             /* a load began at t1 */
    ck_assert(slc_accounts_served(z, t1));
    ck_assert(!slc_accounts_served(z, t2));
    z->served = t2;
    ck_assert(slc_accounts_served(z, t1));
    ck_assert(slc_accounts_served(z, t2));
    free(z);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("mysql_accounts");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_host_match);
    tcase_add_test(tc, test_loopback);
    tcase_add_test(tc, test_host_match_resolve);
    tcase_add_test(tc, test_sort_hosts);
    tcase_add_test(tc, test_table_order);
    tcase_add_test(tc, test_pick);
    tcase_add_test(tc, test_pick_loopback);
    tcase_add_test(tc, test_publish);
    tcase_add_test(tc, test_tickets);
    suite_add_tcase(s, tc);
    return slc_check_run(s);
}
