/*
 * Unit tests for the configuration parser (src/core/slc_conf_file.c) and
 * the value parsers (src/core/slc_conf_value.c).
 *
 * The module list is fake: two "modules" whose tables exercise every
 * argument kind, a block nested in a block, and one directive name ("timeout")
 * defined for two contexts by two modules.  Each test writes its files into
 * a fresh mkdtemp() directory and checks errors byte for byte, paths and
 * line numbers included.
 */

#include <sys/stat.h>
#include "slc_test.h"
#include <ftw.h>
#include <limits.h>

#include "slc_conf_file.h"

#define SLC_TEST_MAX_SERVERS  4

typedef struct {
    char        name[64];       /* copied before the block is parsed */
    int         args_kept;      /* cf->args intact after the block */
    slc_str_t   address;
    int         backup;
    void      **mod_conf;       /* module contexts, server level */
} slc_test_server_t;

typedef struct {
    int                 seen;
    long long           timeout;
    unsigned            nlisten;
    unsigned            nservers;
    slc_test_server_t   servers[SLC_TEST_MAX_SERVERS];
    void              **mod_conf;   /* module contexts, mysql level */
} slc_test_mysql_t;

typedef struct {
    slc_str_t           name;
    int                 verbose;
    size_t              buffer_size;
    long long           timeout;
    long long           workers;
    char                pair[64];
    unsigned            nlisten;
    char                marks[256];
    slc_test_mysql_t    mysql;
    void              **mod_conf;   /* module contexts, main level */
} slc_test_main_t;

/* The conf of the module with contexts (slc_test_ctx_module). */
typedef struct {
    unsigned            level;      /* the level create_conf was given */
    long long           count;      /* main, mysql, server */
    size_t              size;       /* server */
    long long           time;       /* mysql, server */
    slc_str_t           label;      /* server */
    int                 kind;       /* mysql, server */
    int                 merged;     /* merge_conf ran on it */
} slc_test_ctx_t;

/* ---- fake modules ---- */

static const char *
slc_test_mysql_block(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_test_main_t  *m = conf;

    (void) cmd;
    m->mysql.seen = 1;
    m->mysql.timeout = -1;
    return slc_conf_parse_block(cf, SLC_CONF_MYSQL, &m->mysql,
                                &m->mysql.mod_conf);
}

static const char *
slc_test_server_block(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_test_mysql_t   *my = conf;
    slc_test_server_t  *srv;
    const char         *rv;

    (void) cmd;
    if (my->nservers == SLC_TEST_MAX_SERVERS) {
        return "too many servers";
    }
    srv = &my->servers[my->nservers++];
    strlcpy(srv->name, cf->args[1].data, sizeof(srv->name));

    rv = slc_conf_parse_block(cf, SLC_CONF_SERVER, srv, &srv->mod_conf);
    if (rv != NULL) {
        return rv;
    }

    srv->args_kept = cf->nargs == 2
                     && strcmp(cf->args[0].data, "server") == 0
                     && strcmp(cf->args[1].data, srv->name) == 0;

    /* A check that needs the whole block, reported at the block's line. */
    if (srv->backup && my->nservers == 1) {
        return slc_conf_error(cf, "first server \"%s\" cannot be a backup",
                              srv->name);
    }
    return NULL;
}

static const char *
slc_test_pair(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_test_main_t  *m = conf;

    (void) cmd;
    snprintf(m->pair, sizeof(m->pair), "%s=%s", cf->args[1].data,
             cf->args[2].data);
    return NULL;
}

/* Counts arguments; works in main and mysql through cmd->offset. */
static const char *
slc_test_listen(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    *(unsigned *) ((char *) conf + cmd->offset) += cf->nargs - 1;
    return NULL;
}

/* Appends its argument to main's marks, from any context. */
static slc_test_main_t  slc_test_conf;

static const char *
slc_test_mark(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    (void) cmd;
    (void) conf;
    strlcat(slc_test_conf.marks, cf->args[1].data,
            sizeof(slc_test_conf.marks));
    return NULL;
}

static const char *
slc_test_fail(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    (void) cmd;
    (void) conf;
    return slc_conf_error(cf, "fail says %s", cf->args[1].data);
}

static const slc_command_t  slc_test_core_commands[] = {
    { .name = "name",
      .type = SLC_CONF_MAIN | SLC_CONF_TAKE1,
      .set = slc_conf_set_str_slot,
      .offset = offsetof(slc_test_main_t, name) },

    { .name = "verbose",
      .type = SLC_CONF_MAIN | SLC_CONF_FLAG,
      .set = slc_conf_set_flag_slot,
      .offset = offsetof(slc_test_main_t, verbose) },

    { .name = "buffer_size",
      .type = SLC_CONF_MAIN | SLC_CONF_TAKE1,
      .set = slc_conf_set_size_slot,
      .offset = offsetof(slc_test_main_t, buffer_size) },

    { .name = "timeout",
      .type = SLC_CONF_MAIN | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot,
      .offset = offsetof(slc_test_main_t, timeout) },

    { .name = "workers",
      .type = SLC_CONF_MAIN | SLC_CONF_TAKE1,
      .set = slc_conf_set_num_slot,
      .offset = offsetof(slc_test_main_t, workers) },

    { .name = "pair",
      .type = SLC_CONF_MAIN | SLC_CONF_TAKE2,
      .set = slc_test_pair },

    { .name = "listen",
      .type = SLC_CONF_MAIN | SLC_CONF_1MORE,
      .set = slc_test_listen,
      .offset = offsetof(slc_test_main_t, nlisten) },

    { .name = "mark",
      .type = SLC_CONF_ANY | SLC_CONF_TAKE1,
      .set = slc_test_mark },

    { .name = "fail",
      .type = SLC_CONF_MAIN | SLC_CONF_TAKE1,
      .set = slc_test_fail },

    { .name = "mysql",
      .type = SLC_CONF_MAIN | SLC_CONF_BLOCK | SLC_CONF_NOARGS,
      .set = slc_test_mysql_block },

    { .name = NULL }
};

static const slc_command_t  slc_test_mysql_commands[] = {
    { .name = "timeout",
      .type = SLC_CONF_MYSQL | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot,
      .offset = offsetof(slc_test_mysql_t, timeout) },

    { .name = "listen",
      .type = SLC_CONF_MYSQL | SLC_CONF_1MORE,
      .set = slc_test_listen,
      .offset = offsetof(slc_test_mysql_t, nlisten) },

    { .name = "server",
      .type = SLC_CONF_MYSQL | SLC_CONF_BLOCK | SLC_CONF_TAKE1,
      .set = slc_test_server_block },

    { .name = "address",
      .type = SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_str_slot,
      .offset = offsetof(slc_test_server_t, address) },

    { .name = "backup",
      .type = SLC_CONF_SERVER | SLC_CONF_FLAG,
      .set = slc_conf_set_flag_slot,
      .offset = offsetof(slc_test_server_t, backup) },

    { .name = NULL }
};

/* ---- a module with contexts at main, mysql and server level ---- */

static const slc_conf_enum_t  slc_test_kinds[] = {
    { "a", 1 },
    { "b", 2 },
    { "c", 3 },
    { NULL, 0 }
};

static const slc_command_t  slc_test_ctx_commands[] = {
    { .name = "ctx_count",
      .type = SLC_CONF_MAIN | SLC_CONF_MYSQL | SLC_CONF_SERVER
              | SLC_CONF_TAKE1,
      .set = slc_conf_set_num_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_test_ctx_t, count) },

    { .name = "ctx_size",
      .type = SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_size_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_test_ctx_t, size) },

    { .name = "ctx_time",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_msec_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_test_ctx_t, time) },

    { .name = "ctx_label",
      .type = SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_str_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_test_ctx_t, label) },

    { .name = "ctx_kind",
      .type = SLC_CONF_MYSQL | SLC_CONF_SERVER | SLC_CONF_TAKE1,
      .set = slc_conf_set_enum_slot, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_test_ctx_t, kind),
      .post = slc_test_kinds },

    { .name = NULL }
};

static void *
slc_test_ctx_create(slc_conf_t *cf, unsigned level)
{
    slc_test_ctx_t  *c;

    c = slc_palloc(cf->pool, sizeof(*c));
    if (c == NULL) {
        return SLC_CONF_ERROR;
    }
    c->level = level;
    c->count = SLC_CONF_UNSET;
    c->size = SLC_CONF_UNSET_SIZE;
    c->time = SLC_CONF_UNSET;
    c->kind = SLC_CONF_UNSET;
    return c;
}

static const char *
slc_test_ctx_merge(slc_conf_t *cf, unsigned level, void *parent,
    void *child)
{
    slc_test_ctx_t  *prev = parent, *c = child;

    ck_assert_ptr_nonnull(prev);
    ck_assert_uint_eq(c->level, level);
    /* outer blocks are merged before their children */
    ck_assert_int_eq(prev->merged || prev->level == SLC_CONF_MAIN, 1);
    slc_conf_merge_value(c->count, prev->count, 1);
    slc_conf_merge_size(c->size, prev->size, 4096);
    slc_conf_merge_value(c->time, prev->time, 60000);
    slc_conf_merge_value(c->kind, prev->kind, 1);
    c->merged = 1;
    if (c->count > 100) {
        return slc_conf_error(cf, "ctx_count %lld is above 100", c->count);
    }
    return NULL;
}

static slc_module_t  slc_test_ctx_module = {
    .name = "test_ctx",
    .type = SLC_MODULE_FILTER,
    .commands = slc_test_ctx_commands,
    .create_conf = slc_test_ctx_create,
    .merge_conf = slc_test_ctx_merge,
};

/* A module directive whose module keeps no conf: a table mistake. */
static const slc_command_t  slc_test_noctx_commands[] = {
    { .name = "noctx",
      .type = SLC_CONF_MAIN | SLC_CONF_TAKE1,
      .set = slc_conf_set_num_slot, .conf = SLC_CONF_MODULE },

    { .name = NULL }
};

static slc_module_t  slc_test_noctx_module = {
    .name = "test_noctx",
    .type = SLC_MODULE_FILTER,
    .commands = slc_test_noctx_commands,
};

static slc_module_t  slc_test_core_module = {
    .name = "test_core",
    .type = SLC_MODULE_CORE,
    .commands = slc_test_core_commands,
};

/* No directives at all: the lookup must skip it. */
static slc_module_t  slc_test_empty_module = {
    .name = "test_empty",
    .type = SLC_MODULE_FILTER,
};

static slc_module_t  slc_test_mysql_module = {
    .name = "test_mysql",
    .type = SLC_MODULE_CORE,
    .commands = slc_test_mysql_commands,
};

slc_module_t  *slc_modules[] = {
    &slc_test_core_module,
    &slc_test_empty_module,
    &slc_test_mysql_module,
    &slc_test_ctx_module,
    &slc_test_noctx_module,
    NULL
};

const slc_excluded_directive_t  slc_conf_excluded[] = {
    { "cache_zone", "cache" },
    { "cache_ttl", "cache" },
    { NULL, NULL }
};

const char  slc_configure_args[] = "--test";

/* ---- fixture ---- */

/*
 * main() owns slc_test_top and removes it after the run: a failed check ends
 * its forked test before the teardown, which would leave files behind.
 */
static char         slc_test_top[64];          /* /tmp/slc_conf_XXXXXX */
static char         slc_test_dir[96];          /* one per test, inside */
static char         slc_test_expect[2048];
static slc_pool_t  *slc_test_pool;
static slc_conf_t   slc_test_cf;

static void
slc_test_setup(void)
{
    snprintf(slc_test_dir, sizeof(slc_test_dir), "%s/XXXXXX", slc_test_top);
    ck_assert_ptr_nonnull(mkdtemp(slc_test_dir));

    slc_test_pool = slc_pool_create(0);
    ck_assert_ptr_nonnull(slc_test_pool);

    memset(&slc_test_conf, 0, sizeof(slc_test_conf));
    slc_test_conf.timeout = -1;
    slc_test_conf.workers = -1;

    memset(&slc_test_cf, 0, sizeof(slc_test_cf));
    slc_test_cf.pool = slc_test_pool;
    slc_test_cf.ctx = &slc_test_conf;
    slc_test_conf.mod_conf = slc_conf_main_confs(&slc_test_cf);
    ck_assert_ptr_nonnull(slc_test_conf.mod_conf);
}

/* The test_ctx module's conf in a block's array. */
static slc_test_ctx_t *
slc_test_ctx(void **confs)
{
    return confs[3];
}

static int
slc_test_rm(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
    (void) st;
    (void) flag;
    (void) ftw;
    return remove(path);
}

static void
slc_test_rm_tree(const char *dir)
{
    nftw(dir, slc_test_rm, 16, FTW_DEPTH | FTW_PHYS);
}

static void
slc_test_teardown(void)
{
    slc_test_rm_tree(slc_test_dir);
    slc_pool_destroy(slc_test_pool);
}

/* Full path of a file in the test directory (one static buffer per slot). */
static const char *
slc_test_path(const char *name)
{
    static char  buf[4][PATH_MAX];
    static int   n;
    char        *p = buf[n++ % 4];

    snprintf(p, PATH_MAX, "%s/%s", slc_test_dir, name);
    return p;
}

static void
slc_test_write(const char *name, const char *text)
{
    FILE  *fp;

    fp = fopen(slc_test_path(name), "w");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(text, 1, strlen(text), fp), strlen(text));
    ck_assert_int_eq(fclose(fp), 0);
}

static void
slc_test_mkdir(const char *name)
{
    ck_assert_int_eq(mkdir(slc_test_path(name), 0700), 0);
}

static int
slc_test_parse(const char *name)
{
    return slc_conf_parse_file(&slc_test_cf, slc_test_path(name));
}

/* Writes main.conf, parses it and expects success. */
static void
slc_test_ok(const char *text)
{
    slc_test_write("main.conf", text);
    ck_assert_msg(slc_test_parse("main.conf") == SLC_OK,
                  "unexpected error: %s", slc_test_cf.err);
}

/* Parses `name` and expects exactly "DIR/file:line: msg". */
static void
slc_test_fails_in(const char *name, const char *file, unsigned line,
    const char *msg)
{
    snprintf(slc_test_expect, sizeof(slc_test_expect), "%s:%u: %s",
             slc_test_path(file), line, msg);

    ck_assert_int_eq(slc_test_parse(name), SLC_ERROR);
    ck_assert_str_eq(slc_test_cf.err, slc_test_expect);
}

/* Writes main.conf and expects it to fail at line with msg. */
static void
slc_test_fails(const char *text, unsigned line, const char *msg)
{
    slc_test_write("main.conf", text);
    slc_test_fails_in("main.conf", "main.conf", line, msg);
}

/* ---- syntax ---- */

START_TEST(test_empty_file)
{
    slc_test_ok("");
    ck_assert_ptr_null(slc_test_conf.name.data);
    ck_assert_int_eq(slc_test_conf.timeout, -1);

    slc_test_ok("\n\n   \t\r\n# only a comment\n#\n");
    ck_assert_ptr_null(slc_test_conf.name.data);
}
END_TEST

START_TEST(test_all_slots)
{
    slc_test_ok("name proxy1;\n"
                "verbose on;\n"
                "buffer_size 64k;\n"
                "timeout 1m30s;\n"
                "workers 8;\n"
                "pair a b;\n"
                "listen x y z;\n");

    ck_assert_str_eq(slc_test_conf.name.data, "proxy1");
    ck_assert_uint_eq(slc_test_conf.name.len, 6);
    ck_assert_int_eq(slc_test_conf.verbose, 1);
    ck_assert_uint_eq(slc_test_conf.buffer_size, 65536);
    ck_assert_int_eq(slc_test_conf.timeout, 90000);
    ck_assert_int_eq(slc_test_conf.workers, 8);
    ck_assert_str_eq(slc_test_conf.pair, "a=b");
    ck_assert_uint_eq(slc_test_conf.nlisten, 3);
}
END_TEST

/* Documented: a repeated directive is not an error, the last one wins. */
START_TEST(test_last_wins)
{
    slc_test_ok("verbose on; verbose off;\nname a; name bb;\n");
    ck_assert_int_eq(slc_test_conf.verbose, 0);
    ck_assert_str_eq(slc_test_conf.name.data, "bb");
}
END_TEST

/* The stored string must outlive the parse (it is in cf->pool). */
START_TEST(test_str_slot_copied)
{
    slc_test_ok("name \"kept after the temporary pool is gone\";\n");
    ck_assert_str_eq(slc_test_conf.name.data,
                     "kept after the temporary pool is gone");
}
END_TEST

START_TEST(test_comments)
{
    slc_test_ok("# leading comment ; { } \" '\n"
                "name a#b;   # trailing comment with ; and }\n"
                "pair \"#x\" '#y';#glued comment\n"
                "mark\n"
                "# comment between words\n"
                "m1;\n");

    ck_assert_str_eq(slc_test_conf.name.data, "a#b");
    ck_assert_str_eq(slc_test_conf.pair, "#x=#y");
    ck_assert_str_eq(slc_test_conf.marks, "m1");
}
END_TEST

START_TEST(test_quotes)
{
    slc_test_ok("name \"a b;{}\";\n"
                "pair 'single \"q\"' \"double 'q'\";\n");

    ck_assert_str_eq(slc_test_conf.name.data, "a b;{}");
    ck_assert_str_eq(slc_test_conf.pair, "single \"q\"=double 'q'");
}
END_TEST

START_TEST(test_escapes)
{
    slc_test_ok("name \"q\\\" s\\' b\\\\ n\\n t\\t d\\d\";\n"
                "pair 'it\\'s' x;\n");

    ck_assert_str_eq(slc_test_conf.name.data,
                     "q\" s' b\\ n\n t\t d\\d");
    ck_assert_str_eq(slc_test_conf.pair, "it's=x");
}
END_TEST

START_TEST(test_empty_quoted)
{
    slc_test_ok("name \"\";\npair '' \"\";\n");

    ck_assert_ptr_nonnull(slc_test_conf.name.data);
    ck_assert_uint_eq(slc_test_conf.name.len, 0);
    ck_assert_str_eq(slc_test_conf.pair, "=");
}
END_TEST

/* A string spanning lines must still count them for later errors. */
START_TEST(test_multiline_quote_lines)
{
    slc_test_fails("name \"line1\nline2\nline3\";\nbogus;\n", 4,
                   "unknown directive \"bogus\"");
}
END_TEST

START_TEST(test_crlf)
{
    slc_test_ok("name a;\r\nverbose on;\r\n");
    ck_assert_str_eq(slc_test_conf.name.data, "a");

    slc_test_fails("name a;\r\n\r\nbogus;\r\n", 3,
                   "unknown directive \"bogus\"");
}
END_TEST

START_TEST(test_words_without_spaces)
{
    slc_test_ok("mysql{server s1{backup off;}}name x;");
    ck_assert_uint_eq(slc_test_conf.mysql.nservers, 1);
    ck_assert_int_eq(slc_test_conf.mysql.servers[0].backup, 0);
    ck_assert_str_eq(slc_test_conf.name.data, "x");
}
END_TEST

/* ---- errors ---- */

START_TEST(test_err_unknown)
{
    slc_test_fails("name a;\n\nfoo bar;\n", 3, "unknown directive \"foo\"");
}
END_TEST

START_TEST(test_err_excluded)
{
    slc_test_fails("\ncache_ttl 5s;\n", 2,
                   "\"cache_ttl\" directive belongs to module \"cache\", "
                   "which was not compiled in (./configure --with-cache)");
}
END_TEST

START_TEST(test_err_not_allowed)
{
    slc_test_fails("server a {\n}\n", 1,
                   "\"server\" directive is not allowed here");

    slc_test_fails("mysql {\n  address x;\n}\n", 2,
                   "\"address\" directive is not allowed here");

    slc_test_fails("mysql {\n  server a {\n    timeout 1s;\n  }\n}\n", 3,
                   "\"timeout\" directive is not allowed here");
}
END_TEST

START_TEST(test_err_nargs)
{
    slc_test_fails("name;\n", 1,
                   "invalid number of arguments in \"name\" directive");
    slc_test_fails("\nname a b;\n", 2,
                   "invalid number of arguments in \"name\" directive");
    slc_test_fails("pair a;\n", 1,
                   "invalid number of arguments in \"pair\" directive");
    slc_test_fails("pair a b c;\n", 1,
                   "invalid number of arguments in \"pair\" directive");
    slc_test_fails("listen;\n", 1,
                   "invalid number of arguments in \"listen\" directive");
    slc_test_fails("verbose;\n", 1,
                   "invalid number of arguments in \"verbose\" directive");
    slc_test_fails("verbose on off;\n", 1,
                   "invalid number of arguments in \"verbose\" directive");
    slc_test_fails("mysql x {\n}\n", 1,
                   "invalid number of arguments in \"mysql\" directive");
}
END_TEST

/* 15 words fit in cf->args after the name; the 16th is counted, not lost. */
START_TEST(test_err_too_many_args)
{
    slc_test_ok("listen 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15;\n");
    ck_assert_uint_eq(slc_test_conf.nlisten, 15);

    slc_test_fails("listen 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16;\n", 1,
                   "invalid number of arguments in \"listen\" directive");
}
END_TEST

START_TEST(test_err_flag)
{
    slc_test_fails("verbose yes;\n", 1,
                   "invalid value \"yes\" in \"verbose\" directive, "
                   "it must be \"on\" or \"off\"");
    slc_test_fails("mysql {\n server a {\n  backup ON;\n }\n}\n", 3,
                   "invalid value \"ON\" in \"backup\" directive, "
                   "it must be \"on\" or \"off\"");
}
END_TEST

START_TEST(test_err_slot_values)
{
    slc_test_fails("buffer_size 10q;\n", 1,
                   "invalid value \"10q\" in \"buffer_size\" directive, "
                   "it must be a size such as 512, 16k, 1m or 2g");
    slc_test_fails("timeout soon;\n", 1,
                   "invalid value \"soon\" in \"timeout\" directive, "
                   "it must be a time such as 500ms, 10s, 1m30s or 2h");
    slc_test_fails("workers -1;\n", 1,
                   "invalid value \"-1\" in \"workers\" directive, "
                   "it must be a non-negative integer");
}
END_TEST

START_TEST(test_err_no_opening_brace)
{
    slc_test_fails("\nmysql;\n", 2,
                   "directive \"mysql\" has no opening \"{\"");
    slc_test_fails("mysql {\n  server a;\n}\n", 2,
                   "directive \"server\" has no opening \"{\"");
}
END_TEST

START_TEST(test_err_not_terminated)
{
    slc_test_fails("name a {\n}\n", 1,
                   "directive \"name\" is not terminated by \";\"");
    slc_test_fails("mysql {\n  timeout 5s\n}\n", 2,
                   "directive \"timeout\" is not terminated by \";\"");
}
END_TEST

START_TEST(test_err_unexpected_close)
{
    slc_test_fails("name a;\n}\n", 2, "unexpected \"}\"");
    slc_test_fails("mysql {\n}\n}\n", 3, "unexpected \"}\"");
}
END_TEST

START_TEST(test_err_unexpected_punct)
{
    slc_test_fails("name a;\n;\n", 2, "unexpected \";\"");
    slc_test_fails("\n\n{\n}\n", 3, "unexpected \"{\"");
}
END_TEST

/* A directive cut off by the end of the file: reported where the file ends. */
START_TEST(test_err_eof_in_directive)
{
    slc_test_fails("name a;\nname b", 2,
                   "unexpected end of file, expecting \";\" or \"}\"");
    slc_test_fails("name a;\nname b\n\n", 4,
                   "unexpected end of file, expecting \";\" or \"}\"");
}
END_TEST

START_TEST(test_err_missing_close)
{
    slc_test_fails("mysql {\n  server a {\n    backup on;\n", 4,
                   "unexpected end of file, expecting \"}\" to close "
                   "\"server\" from line 2");
    slc_test_fails("# c\nmysql {\n  server a {\n  }\n", 5,
                   "unexpected end of file, expecting \"}\" to close "
                   "\"mysql\" from line 2");
}
END_TEST

START_TEST(test_err_unterminated_quote)
{
    slc_test_fails("name a;\nname \"abc;\nverbose on;\n", 2,
                   "unterminated quoted string");
    slc_test_fails("name 'abc\\';\n", 1, "unterminated quoted string");
}
END_TEST

START_TEST(test_err_glued_quote)
{
    slc_test_fails("name \"a\"b;\n", 1,
                   "unexpected \"b\" after quoted string");
}
END_TEST

START_TEST(test_err_handler)
{
    slc_test_fails("\n\nfail now;\n", 3, "fail says now");
}
END_TEST

/* The directive's line is that of its name, not of its last word. */
START_TEST(test_err_multiline_directive)
{
    slc_test_fails("\nname\n  a\n  b;\n", 2,
                   "invalid number of arguments in \"name\" directive");
}
END_TEST

/* A block handler failing after its block names the block's own line. */
START_TEST(test_err_block_handler_after)
{
    slc_test_fails("mysql {\n  server a {\n    backup on;\n\n  }\n}\n", 2,
                   "first server \"a\" cannot be a backup");
}
END_TEST

/* An error after a block is reported at its own line, not the block's. */
START_TEST(test_err_after_block)
{
    slc_test_fails("mysql {\n  server a {\n  }\n}\nbogus;\n", 5,
                   "unknown directive \"bogus\"");
}
END_TEST

START_TEST(test_err_missing_top_file)
{
    snprintf(slc_test_expect, sizeof(slc_test_expect),
             "open() \"%s\" failed (No such file or directory)",
             slc_test_path("none.conf"));

    ck_assert_int_eq(slc_test_parse("none.conf"), SLC_ERROR);
    ck_assert_str_eq(slc_test_cf.err, slc_test_expect);
}
END_TEST

/* ---- blocks and contexts ---- */

START_TEST(test_nested_blocks)
{
    slc_test_mysql_t  *my = &slc_test_conf.mysql;

    slc_test_ok("timeout 10s;\n"
                "mysql {\n"
                "    timeout 500ms;\n"
                "    listen a b;\n"
                "    server primary {\n"
                "        address \"10.0.0.1:3306\";\n"
                "    }\n"
                "    server replica {\n"
                "        address 10.0.0.2:3306;\n"
                "        backup on;\n"
                "        mark inside;\n"
                "    }\n"
                "}\n"
                "listen c;\n");

    /* Same name, two contexts, two modules, two slots. */
    ck_assert_int_eq(slc_test_conf.timeout, 10000);
    ck_assert_int_eq(my->timeout, 500);

    ck_assert_uint_eq(my->nlisten, 2);
    ck_assert_uint_eq(slc_test_conf.nlisten, 1);
    ck_assert_int_eq(my->seen, 1);

    ck_assert_uint_eq(my->nservers, 2);
    ck_assert_str_eq(my->servers[0].name, "primary");
    ck_assert_str_eq(my->servers[0].address.data, "10.0.0.1:3306");
    ck_assert_int_eq(my->servers[0].backup, 0);
    ck_assert_str_eq(my->servers[1].name, "replica");
    ck_assert_str_eq(my->servers[1].address.data, "10.0.0.2:3306");
    ck_assert_int_eq(my->servers[1].backup, 1);
    ck_assert_str_eq(slc_test_conf.marks, "inside");

    /* A block handler sees its own cf->args again after the block. */
    ck_assert_int_eq(my->servers[0].args_kept, 1);
    ck_assert_int_eq(my->servers[1].args_kept, 1);
}
END_TEST

START_TEST(test_empty_blocks)
{
    slc_test_ok("mysql { }\nmysql {\n}\n");
    ck_assert_int_eq(slc_test_conf.mysql.seen, 1);
}
END_TEST

/* ---- include ---- */

START_TEST(test_include_glob_sorted)
{
    slc_test_mkdir("conf.d");
    slc_test_write("conf.d/b.conf", "mark b;\nname from_b;\n");
    slc_test_write("conf.d/a.conf", "mark a;\nname from_a;\n");
    slc_test_write("conf.d/skip.txt", "bogus;\n");

    slc_test_ok("mark 0;\ninclude conf.d/*.conf;\nmark z;\n");

    ck_assert_str_eq(slc_test_conf.marks, "0abz");
    ck_assert_str_eq(slc_test_conf.name.data, "from_b");
}
END_TEST

START_TEST(test_include_glob_no_match)
{
    slc_test_ok("include nothing/*.conf;\ninclude none?.conf;\nmark ok;\n");
    ck_assert_str_eq(slc_test_conf.marks, "ok");
}
END_TEST

START_TEST(test_include_missing)
{
    char  msg[PATH_MAX + 64];

    snprintf(msg, sizeof(msg),
             "open() \"%s\" failed (No such file or directory)",
             slc_test_path("missing.conf"));
    slc_test_fails("mark a;\ninclude missing.conf;\n", 2, msg);
}
END_TEST

START_TEST(test_include_absolute)
{
    char  text[PATH_MAX + 64];

    slc_test_mkdir("abs");
    slc_test_write("abs/x.conf", "mark x;\n");
    snprintf(text, sizeof(text), "include \"%s\";\n",
             slc_test_path("abs/x.conf"));
    slc_test_ok(text);
    ck_assert_str_eq(slc_test_conf.marks, "x");
}
END_TEST

/* Relative to the including file's directory, not to the first file's. */
START_TEST(test_include_relative_nested)
{
    slc_test_mkdir("d1");
    slc_test_mkdir("d1/d2");
    slc_test_write("d1/one.conf", "mark 1;\ninclude d2/two.conf;\n");
    slc_test_write("d1/d2/two.conf", "mark 2;\n");

    slc_test_ok("include d1/one.conf;\n");
    ck_assert_str_eq(slc_test_conf.marks, "12");
}
END_TEST

/* Each file keeps its own line count, before and after the include. */
START_TEST(test_include_line_numbers)
{
    slc_test_write("inc.conf", "\n\nmark i;\n");
    slc_test_write("main.conf", "mark a;\n\ninclude inc.conf;\n\nbogus;\n");
    slc_test_fails_in("main.conf", "main.conf", 5,
                      "unknown directive \"bogus\"");
    ck_assert_str_eq(slc_test_conf.marks, "ai");

    slc_test_write("inc.conf", "mark i;\n\n\nbogus;\n");
    slc_test_write("main.conf", "mark a;\ninclude inc.conf;\n");
    slc_test_fails_in("main.conf", "inc.conf", 4,
                      "unknown directive \"bogus\"");
}
END_TEST

START_TEST(test_include_in_block)
{
    slc_test_write("servers.conf",
                   "server s1 { }\nserver s2 {\n    backup on;\n}\n");
    slc_test_ok("mysql {\n    include servers.conf;\n    timeout 2s;\n}\n");

    ck_assert_uint_eq(slc_test_conf.mysql.nservers, 2);
    ck_assert_int_eq(slc_test_conf.mysql.servers[1].backup, 1);
    ck_assert_int_eq(slc_test_conf.mysql.timeout, 2000);
}
END_TEST

/* An included file is parsed in the includer's context... */
START_TEST(test_include_context)
{
    slc_test_write("inc.conf", "\nname x;\n");
    slc_test_write("main.conf", "mysql {\n    include inc.conf;\n}\n");
    slc_test_fails_in("main.conf", "inc.conf", 2,
                      "\"name\" directive is not allowed here");
}
END_TEST

/* ...and cannot close the includer's block. */
START_TEST(test_include_unbalanced)
{
    slc_test_write("inc.conf", "timeout 1s;\n}\n");
    slc_test_write("main.conf", "mysql {\n    include inc.conf;\n");
    slc_test_fails_in("main.conf", "inc.conf", 2, "unexpected \"}\"");

    slc_test_write("inc.conf", "server a {\n");
    slc_test_write("main.conf", "mysql {\n    include inc.conf;\n}\n");
    slc_test_fails_in("main.conf", "inc.conf", 2,
                      "unexpected end of file, expecting \"}\" to close "
                      "\"server\" from line 1");
}
END_TEST

/*
 * A later match failing names the include's line, not a line of the file
 * included before it.
 */
START_TEST(test_include_glob_later_fails)
{
    char  msg[PATH_MAX + 64];

    slc_test_mkdir("d");
    slc_test_write("d/a.conf", "mark a;\n\n\n\n\n");
    slc_test_mkdir("d/b");

    snprintf(msg, sizeof(msg), "read() \"%s\" failed (Is a directory)",
             slc_test_path("d/b"));
    slc_test_fails("\n\ninclude d/*;\n", 3, msg);
    ck_assert_str_eq(slc_test_conf.marks, "a");
}
END_TEST

START_TEST(test_include_loop)
{
    slc_test_fails("include main.conf;\n", 1,
                   "includes nested deeper than 16 levels, "
                   "does a file include itself?");
}
END_TEST

START_TEST(test_include_nargs)
{
    slc_test_fails("include a b;\n", 1,
                   "invalid number of arguments in \"include\" directive");
}
END_TEST

/* ---- value parsers ---- */

typedef struct {
    const char  *in;
    long long    out;
} slc_test_value_t;

static const slc_test_value_t  slc_test_ints[] = {
    { "0", 0 },
    { "7", 7 },
    { "007", 7 },
    { "1234567890", 1234567890 },
    { "9223372036854775807", LLONG_MAX },
    { "9223372036854775808", -1 },
    { "99999999999999999999", -1 },
    { "", -1 },
    { "-1", -1 },
    { "+1", -1 },
    { " 1", -1 },
    { "1 ", -1 },
    { "1k", -1 },
    { "0x10", -1 },
    { "1.5", -1 },
};

static const slc_test_value_t  slc_test_sizes[] = {
    { "0", 0 },
    { "512", 512 },
    { "1k", 1024 },
    { "64K", 65536 },
    { "1m", 1048576 },
    { "16M", 16777216 },
    { "2g", 2147483648LL },
    { "3G", 3221225472LL },
    { "0k", 0 },
    { "9223372036854775807", LLONG_MAX },
    { "8589934591g", 8589934591LL * 1073741824 },
    { "8589934592g", -1 },
    { "9007199254740992k", -1 },
    { "99999999999999999999", -1 },
    { "", -1 },
    { "k", -1 },
    { "1kb", -1 },
    { "1kk", -1 },
    { "1t", -1 },
    { "-1k", -1 },
    { "1 k", -1 },
    { "1.5m", -1 },
};

static const slc_test_value_t  slc_test_msecs[] = {
    { "0", 0 },
    { "10", 10000 },
    { "500ms", 500 },
    { "0ms", 0 },
    { "10s", 10000 },
    { "5m", 300000 },
    { "2h", 7200000 },
    { "1d", 86400000 },
    { "1m30s", 90000 },
    { "1d2h3m4s5ms", 93784005 },
    { "1h500ms", 3600500 },
    { "90s", 90000 },
    { "9223372036854775807ms", LLONG_MAX },
    { "9223372036854775s", 9223372036854775000LL },
    { "9223372036854776s", -1 },
    { "9223372036854776", -1 },
    { "9223372036854775s807ms", LLONG_MAX },
    { "9223372036854775s808ms", -1 },
    { "", -1 },
    { "s", -1 },
    { "ms", -1 },
    { "1x", -1 },
    { "1S", -1 },
    { "1m30", -1 },
    { "30s1m", -1 },
    { "1s1s", -1 },
    { "1ms1s", -1 },
    { "1 s", -1 },
    { "-1s", -1 },
    { "1.5s", -1 },
    { "1sec", -1 },
    { "1mss", -1 },
};

static void
slc_test_values(const slc_test_value_t *t, size_t n,
    long long (*parse)(const slc_str_t *), const char *what)
{
    slc_str_t  s;
    size_t     i;

    for (i = 0; i < n; i++) {
        s.data = (char *) t[i].in;
        s.len = strlen(t[i].in);
        ck_assert_msg(parse(&s) == t[i].out, "%s(\"%s\") = %lld, want %lld",
                      what, t[i].in, parse(&s), t[i].out);
    }
}

START_TEST(test_parse_int)
{
    slc_test_values(slc_test_ints, slc_nelems(slc_test_ints),
                    slc_conf_parse_int, "parse_int");
}
END_TEST

START_TEST(test_parse_size)
{
    slc_test_values(slc_test_sizes, slc_nelems(slc_test_sizes),
                    slc_conf_parse_size, "parse_size");
}
END_TEST

START_TEST(test_parse_msec)
{
    slc_test_values(slc_test_msecs, slc_nelems(slc_test_msecs),
                    slc_conf_parse_msec, "parse_msec");
}
END_TEST

/* Counted strings: bytes past len must not be read. */
START_TEST(test_parse_counted)
{
    slc_str_t  s = { 2, (char *) "12k" };

    ck_assert_int_eq(slc_conf_parse_int(&s), 12);
    ck_assert_int_eq(slc_conf_parse_size(&s), 12);
    s.data = (char *) "10ms";
    s.len = 3;
    ck_assert_int_eq(slc_conf_parse_msec(&s), 600000);
}
END_TEST

/* Signed numbers: sign, range ends, garbage, a lone '-'. */
START_TEST(test_parse_signed)
{
    static const struct { const char *in; int rc; long long out; } c[] = {
        { "0", SLC_OK, 0 }, { "19", SLC_OK, 19 }, { "-20", SLC_OK, -20 },
        { "-5", SLC_OK, -5 }, { "20", SLC_ERROR, 0 }, { "-21", SLC_ERROR, 0 },
        { "-", SLC_ERROR, 0 }, { "--5", SLC_ERROR, 0 }, { "", SLC_ERROR, 0 },
        { "5x", SLC_ERROR, 0 }, { "+5", SLC_ERROR, 0 },
    };

    for (size_t i = 0; i < slc_nelems(c); i++) {
        slc_str_t  s = { strlen(c[i].in), (char *) c[i].in };
        long long  n = 12345;
        int        rc = slc_conf_parse_signed(&s, -20, 19, &n);

        ck_assert_msg(rc == c[i].rc, "\"%s\": rc %d", c[i].in, rc);
        if (rc == SLC_OK) {
            ck_assert_int_eq(n, c[i].out);
        }
    }
}
END_TEST

/* "name=N" parameters: not this name, in range, out of range, garbage. */
START_TEST(test_parse_param)
{
    slc_str_t  s;
    long long  n = -5;

#define SLC_TEST_PARAM(word, want, value)                                  \
    s.data = (char *) (word);                                              \
    s.len = strlen(word);                                                  \
    ck_assert_int_eq(slc_conf_parse_param(&s, "weight", 1, 1000, &n),      \
        want);                                                             \
    if ((want) == 1) ck_assert_int_eq(n, value)

    SLC_TEST_PARAM("weight=3", 1, 3);
    SLC_TEST_PARAM("weight=1000", 1, 1000);
    SLC_TEST_PARAM("weight=0", -1, 0);
    SLC_TEST_PARAM("weight=1001", -1, 0);
    SLC_TEST_PARAM("weight=", -1, 0);
    SLC_TEST_PARAM("weight=3x", -1, 0);
    SLC_TEST_PARAM("weight=99999999999999999999", -1, 0);
    SLC_TEST_PARAM("weight", 0, 0);
    SLC_TEST_PARAM("weights=3", 0, 0);
    SLC_TEST_PARAM("max_connections=3", 0, 0);
    SLC_TEST_PARAM("", 0, 0);
#undef SLC_TEST_PARAM
}
END_TEST

/* ---- module contexts ---- */

/* Every kind of generic slot setter fills a module's server-level conf. */
START_TEST(test_ctx_server_slots)
{
    slc_test_ctx_t  *c;

    slc_test_ok("mysql {\n"
                "  server a {\n"
                "    ctx_count 7;\n"
                "    ctx_size 16k;\n"
                "    ctx_time 1m30s;\n"
                "    ctx_label \"one two\";\n"
                "    ctx_kind b;\n"
                "  }\n"
                "}\n");
    ck_assert_uint_eq(slc_test_conf.mysql.nservers, 1);
    c = slc_test_ctx(slc_test_conf.mysql.servers[0].mod_conf);
    ck_assert_uint_eq(c->level, SLC_CONF_SERVER);
    ck_assert_int_eq(c->count, 7);
    ck_assert_uint_eq(c->size, 16384);
    ck_assert_int_eq(c->time, 90000);
    ck_assert_str_eq(c->label.data, "one two");
    ck_assert_int_eq(c->kind, 2);
    ck_assert_int_eq(c->merged, 1);

    /* the block's own object was not written */
    ck_assert_ptr_null(slc_test_conf.mysql.servers[0].address.data);
    /* nor the outer levels */
    c = slc_test_ctx(slc_test_conf.mysql.mod_conf);
    ck_assert_int_eq(c->count, 1);
    ck_assert_int_eq(c->kind, 1);
    ck_assert_int_eq(slc_test_ctx(slc_test_conf.mod_conf)->count,
                     SLC_CONF_UNSET);
}
END_TEST

/*
 * A server inherits what it leaves unset from mysql {}, which inherits
 * from main, whatever the order: the mysql-level ctx_kind comes after the
 * server blocks, main's ctx_count after the mysql block.
 */
START_TEST(test_ctx_merge_inherits)
{
    slc_test_ctx_t  *a, *b, *my;

    slc_test_ok("mysql {\n"
                "  ctx_time 5s;\n"
                "  server a {\n"
                "  }\n"
                "  server b {\n"
                "    ctx_time 1s;\n"
                "    ctx_count 9;\n"
                "    ctx_kind a;\n"
                "  }\n"
                "  ctx_kind c;\n"
                "}\n"
                "ctx_count 3;\n");
    my = slc_test_ctx(slc_test_conf.mysql.mod_conf);
    a = slc_test_ctx(slc_test_conf.mysql.servers[0].mod_conf);
    b = slc_test_ctx(slc_test_conf.mysql.servers[1].mod_conf);

    ck_assert_int_eq(my->time, 5000);
    ck_assert_int_eq(my->count, 3);
    ck_assert_int_eq(my->kind, 3);

    ck_assert_int_eq(a->time, 5000);            /* from mysql {} */
    ck_assert_int_eq(a->count, 3);              /* from main, via mysql */
    ck_assert_int_eq(a->kind, 3);               /* set after the server */
    ck_assert_uint_eq(a->size, 4096);           /* the default */

    ck_assert_int_eq(b->time, 1000);            /* its own */
    ck_assert_int_eq(b->count, 9);
    ck_assert_int_eq(b->kind, 1);
}
END_TEST

/* A merge error names the block it is about. */
START_TEST(test_ctx_merge_error)
{
    slc_test_fails("mysql {\n"
                   "  server a {\n"
                   "  }\n"
                   "  server b {\n"
                   "    ctx_count 101;\n"
                   "  }\n"
                   "}\n", 4, "ctx_count 101 is above 100");

    /* set in mysql {}: that block is named, it is merged first */
    slc_test_teardown();
    slc_test_setup();
    slc_test_fails("mysql {\n"
                   "  ctx_count 200;\n"
                   "  server a {\n"
                   "  }\n"
                   "}\n", 1, "ctx_count 200 is above 100");
}
END_TEST

/* The generic setters' messages are the same for module directives. */
START_TEST(test_ctx_errors)
{
    slc_test_fails("mysql {\n  server a {\n    ctx_kind d;\n  }\n}\n", 3,
                   "invalid value \"d\" in \"ctx_kind\" directive, it must "
                   "be \"a\", \"b\" or \"c\"");
    slc_test_fails("mysql {\n  ctx_size 1k;\n}\n", 2,
                   "\"ctx_size\" directive is not allowed here");
    slc_test_fails("ctx_time 1s;\n", 1,
                   "\"ctx_time\" directive is not allowed here");
    slc_test_fails("noctx 1;\n", 1,
                   "\"noctx\" directive has no module configuration in "
                   "this block");
}
END_TEST

/* As for the block's own slots, the last one wins. */
START_TEST(test_ctx_last_wins)
{
    slc_test_ok("mysql {\n server a {\n ctx_count 1; ctx_count 2;\n"
                " }\n}\n");
    ck_assert_int_eq(
        slc_test_ctx(slc_test_conf.mysql.servers[0].mod_conf)->count, 2);
}
END_TEST

/* ---- runner ---- */

static void
slc_test_add(Suite *s, const char *name, const TTest **tests, size_t n)
{
    TCase   *tc;
    size_t   i;

    tc = tcase_create(name);
    tcase_add_checked_fixture(tc, slc_test_setup, slc_test_teardown);
    for (i = 0; i < n; i++) {
        tcase_add_test(tc, tests[i]);
    }
    suite_add_tcase(s, tc);
}

static Suite *
slc_test_conf_suite(void)
{
    const TTest  *syntax[] = {
        test_empty_file, test_all_slots, test_last_wins,
        test_str_slot_copied, test_comments, test_quotes, test_escapes,
        test_empty_quoted, test_multiline_quote_lines, test_crlf,
        test_words_without_spaces,
    };
    const TTest  *errors[] = {
        test_err_unknown, test_err_excluded, test_err_not_allowed,
        test_err_nargs, test_err_too_many_args, test_err_flag,
        test_err_slot_values, test_err_no_opening_brace,
        test_err_not_terminated, test_err_unexpected_close,
        test_err_unexpected_punct, test_err_eof_in_directive,
        test_err_missing_close, test_err_unterminated_quote,
        test_err_glued_quote, test_err_handler, test_err_after_block,
        test_err_missing_top_file, test_err_multiline_directive,
        test_err_block_handler_after,
    };
    const TTest  *blocks[] = {
        test_nested_blocks, test_empty_blocks,
    };
    const TTest  *include[] = {
        test_include_glob_sorted, test_include_glob_no_match,
        test_include_missing, test_include_absolute,
        test_include_relative_nested, test_include_line_numbers,
        test_include_in_block, test_include_context,
        test_include_unbalanced, test_include_glob_later_fails,
        test_include_loop, test_include_nargs,
    };
    const TTest  *contexts[] = {
        test_ctx_server_slots, test_ctx_merge_inherits,
        test_ctx_merge_error, test_ctx_errors, test_ctx_last_wins,
    };
    const TTest  *values[] = {
        test_parse_int, test_parse_size, test_parse_msec,
        test_parse_counted, test_parse_signed,
        test_parse_param,
    };
    Suite  *s;

    s = suite_create("conf_file");
    slc_test_add(s, "syntax", syntax, slc_nelems(syntax));
    slc_test_add(s, "errors", errors, slc_nelems(errors));
    slc_test_add(s, "blocks", blocks, slc_nelems(blocks));
    slc_test_add(s, "include", include, slc_nelems(include));
    slc_test_add(s, "contexts", contexts, slc_nelems(contexts));
    slc_test_add(s, "values", values, slc_nelems(values));
    return s;
}

int
main(void)
{
    int  failed;

    snprintf(slc_test_top, sizeof(slc_test_top), "/tmp/slc_conf_XXXXXX");
    if (mkdtemp(slc_test_top) == NULL) {
        perror("mkdtemp");
        return EXIT_FAILURE;
    }
    failed = slc_check_run(slc_test_conf_suite());
    slc_test_rm_tree(slc_test_top);
    return failed;
}
