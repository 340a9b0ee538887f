#ifndef SLC_CONF_FILE_H
#define SLC_CONF_FILE_H

#include "slc_core.h"
#include "slc_module.h"
#include "slc_palloc.h"

/*
 * nginx-grammar configuration parser.
 *
 * Directives end with ';', blocks with '{ }', '#' starts a comment, words may
 * be "double" or 'single' quoted (backslash escapes \" \' \\ \n \t), and
 * `include PATTERN;` (any context, glob(3), relative to the directory of the
 * file that includes it) splices files in.  Every directive is looked up in
 * the command tables of the compiled-in modules; its context bit and argument
 * count are checked before its handler runs.
 *
 * Errors: every failure is reported as "FILE:LINE: message" in cf->err and
 * the parse returns SLC_ERROR.  Nothing here logs.
 */

/* Contexts: where a directive may appear. */
#define SLC_CONF_MAIN       0x00000001
#define SLC_CONF_EVENTS     0x00000002
#define SLC_CONF_MYSQL      0x00000004
#define SLC_CONF_USER       0x00000008
#define SLC_CONF_UPSTREAM   0x00000010
#define SLC_CONF_SERVER     0x00000020
#define SLC_CONF_REDIS      0x00000040    /* redis NAME { } (cache_redis) */
#define SLC_CONF_RULE       0x00000080    /* rule NAME { } in a server */
#define SLC_CONF_ANY        0x000000ff

/* Argument counts (number of words after the directive name). */
#define SLC_CONF_NOARGS     0x00000100
#define SLC_CONF_TAKE1      0x00000200
#define SLC_CONF_TAKE2      0x00000400
#define SLC_CONF_TAKE3      0x00000800
#define SLC_CONF_TAKE4      0x00001000
#define SLC_CONF_TAKE12     (SLC_CONF_TAKE1 | SLC_CONF_TAKE2)
#define SLC_CONF_TAKE123    (SLC_CONF_TAKE12 | SLC_CONF_TAKE3)
#define SLC_CONF_1MORE      0x00010000
#define SLC_CONF_2MORE      0x00020000
#define SLC_CONF_FLAG       0x00040000    /* exactly one of on|off */
#define SLC_CONF_BLOCK      0x00080000    /* ends with '{', not ';' */

#define SLC_CONF_MAX_ARGS   16
#define SLC_CONF_ERRLEN     512

/* slc_conf_t is declared in slc_module.h (its hooks take one). */

/*
 * A handler returns NULL on success or an error message (a static string or
 * one written into cf->errbuf).  The parser prefixes it with "FILE:LINE: ".
 * `conf` is cf->ctx, the object of the innermost enclosing block, or, for a
 * directive with .conf = SLC_CONF_MODULE, its module's conf for that block.
 */
typedef const char *(*slc_conf_set_pt)(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);

/* What a directive's `conf` argument (and so its .offset) points into. */
#define SLC_CONF_BLOCK_OBJ  0   /* the enclosing block's object (cf->ctx) */
#define SLC_CONF_MODULE     1   /* the conf that the directive's module
                                   created for the enclosing block */

/*
 * Unset values: a module's create_conf hook starts each slot at one of
 * these, so that merge_conf tells "not given here" (inherit) from a value.
 */
#define SLC_CONF_UNSET       (-1)
#define SLC_CONF_UNSET_SIZE  ((size_t) -1)
#define SLC_CONF_UNSET_PTR   ((void *) -1)

/* create_conf's failure (out of memory), as distinct from NULL (none). */
#define SLC_CONF_ERROR       ((void *) -1)

/* conf = conf if set, else prev if set, else def (int or long long). */
#define slc_conf_merge_value(conf, prev, def)                               \
    do {                                                                    \
        if ((conf) == SLC_CONF_UNSET) {                                     \
            (conf) = (prev) != SLC_CONF_UNSET ? (prev) : (def);             \
        }                                                                   \
    } while (0)

#define slc_conf_merge_size(conf, prev, def)                                \
    do {                                                                    \
        if ((conf) == SLC_CONF_UNSET_SIZE) {                                \
            (conf) = (prev) != SLC_CONF_UNSET_SIZE ? (prev) : (def);        \
        }                                                                   \
    } while (0)

#define slc_conf_merge_ptr(conf, prev, def)                                 \
    do {                                                                    \
        if ((void *) (conf) == SLC_CONF_UNSET_PTR) {                        \
            (conf) = (void *) (prev) != SLC_CONF_UNSET_PTR ? (prev) : (def);\
        }                                                                   \
    } while (0)

struct slc_command_s {
    const char         *name;
    unsigned            type;      /* context bits | argument bits */
    slc_conf_set_pt     set;
    unsigned            conf;      /* SLC_CONF_BLOCK_OBJ or SLC_CONF_MODULE */
    size_t              offset;    /* for the generic slot setters */
    const void         *post;      /* handler-specific data, may be NULL */
};

typedef struct slc_conf_file_s  slc_conf_file_t;
typedef struct slc_conf_mod_s   slc_conf_mod_t;

struct slc_conf_s {
    slc_pool_t         *pool;      /* config generation's pool */
    slc_cycle_t        *cycle;     /* generation being built */
    void               *ctx;       /* innermost block's object */
    unsigned            ctx_type;  /* SLC_CONF_MAIN ... SLC_CONF_SERVER */

    slc_str_t           args[SLC_CONF_MAX_ARGS]; /* args[0] = directive */
    unsigned            nargs;     /* including args[0] */

    slc_conf_file_t    *file;      /* current file, private to the parser */
    const char         *filename;  /* current file name */
    unsigned            line;      /* line of the current directive */
    unsigned            depth;     /* include depth, to stop loops */

    /* module confs: the innermost block's, and every block's in the
       order they were opened (merged in that order after the parse) */
    slc_conf_mod_t     *mod;
    slc_conf_mod_t     *mod_first;
    slc_conf_mod_t     *mod_last;

    char                errbuf[SLC_CONF_ERRLEN];  /* for handlers */
    char                err[SLC_CONF_ERRLEN + 256]; /* final FILE:LINE: msg */
};

/*
 * Parse a whole file in the MAIN context with cf->ctx as the main object,
 * then merge the module confs of every block (merge_conf hooks).  The
 * caller zeroes *cf and sets pool, cycle and ctx; it calls
 * slc_conf_main_confs() first if the main context holds module confs.
 */
int slc_conf_parse_file(slc_conf_t *cf, const char *filename);

/*
 * The main context's module confs: calls every module's create_conf with
 * SLC_CONF_MAIN and makes them the current block's.  Returns the array
 * (one slot per module, by slc_module_index(); in cf->pool) for the main
 * object to keep, or NULL with the error in cf->err.
 */
void **slc_conf_main_confs(slc_conf_t *cf);

/*
 * Called by a block directive's handler (after its args are in cf->args):
 * parses the directives up to the matching '}' with `ctx` as the block's
 * object and `ctx_type` as its context, then restores the outer ones.
 * With `confs` non-NULL the block holds module confs at level ctx_type:
 * every module's create_conf runs first, *confs is set to the array (kept
 * by the block's object), SLC_CONF_MODULE directives fill the confs, and
 * the merge after the whole file completes them.  With
 * NULL, no module conf is reachable in the block.
 * Returns NULL or an error string exactly like a handler (so a handler can
 * `return slc_conf_parse_block(cf, ...)`).
 */
const char *slc_conf_parse_block(slc_conf_t *cf, unsigned ctx_type,
    void *ctx, void ***confs);

/* Value parsers: -1 when the word is not valid. */
long long slc_conf_parse_int(const slc_str_t *s);            /* 0..LLONG_MAX */
long long slc_conf_parse_size(const slc_str_t *s);  /* 512, 64k, 1m, 2g */
long long slc_conf_parse_msec(const slc_str_t *s);  /* 500ms 10s 5m 1h 1d,
                                           combined "1m30s"; bare = seconds */

/* An integer with an optional '-' in [min, max] into *out: SLC_OK or
   SLC_ERROR. */
int slc_conf_parse_signed(const slc_str_t *s, long long min, long long max,
    long long *out);

/*
 * A "name=N" parameter word: 0 when `arg` is not `name=`, 1 with *out set
 * when N is an integer in [min, max], -1 when it is not.
 */
int slc_conf_parse_param(const slc_str_t *arg, const char *name,
    long long min, long long max, long long *out);

/* A word of an enumerated directive and the value it stands for; a table
   of them ends with a NULL name. */
typedef struct {
    const char  *name;
    int          value;
} slc_conf_enum_t;

/* *value = the value of cf->args[1] in table `e`, or the error "invalid
   value ... it must be "a", "b" or "c"" (NULL on success). */
const char *slc_conf_parse_enum(slc_conf_t *cf, const slc_conf_enum_t *e,
    int *value);

/* Generic slot setters: store at (char *) conf + cmd->offset. */
const char *slc_conf_set_flag_slot(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf);   /* int: 1 on, 0 off */
const char *slc_conf_set_num_slot(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf);   /* long long */
const char *slc_conf_set_size_slot(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf);   /* size_t */
const char *slc_conf_set_msec_slot(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf);   /* long long milliseconds */
const char *slc_conf_set_str_slot(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf);   /* slc_str_t copied into cf->pool, NUL terminated */
const char *slc_conf_set_cstr_slot(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf);   /* char *, copied into cf->pool */
const char *slc_conf_set_enum_slot(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf);   /* int; cmd->post is the slc_conf_enum_t table */

/* Format a handler error into cf->errbuf and return it. */
const char *slc_conf_error(slc_conf_t *cf, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* SLC_CONF_FILE_H */
