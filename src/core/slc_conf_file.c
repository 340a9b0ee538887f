#include <fcntl.h>
#include <glob.h>
#include <limits.h>

#include "slc_conf_file.h"

/*
 * The parser reads a whole file into memory and walks it with a tokenizer
 * that yields words and the three punctuation tokens ';', '{' and '}'.
 * Words up to the next punctuation form a directive in cf->args, which is
 * looked up, checked and handed to its handler.  A block handler recurses
 * through slc_conf_parse_block(); `include` recurses into another file.
 *
 * Error convention inside this file: a function returning const char *
 * returns NULL on success, cf->err when the message already carries
 * "FILE:LINE: ", or any other string, which the caller prefixes with the
 * current directive's position (the same contract as a handler's result).
 *
 * Memory: cf->args are copied, NUL terminated, into a temporary pool that
 * lives until slc_conf_parse_file() returns; handlers that keep a word must
 * copy it into cf->pool (the slot setters do).  File names are copied into
 * cf->pool, so a handler may keep cf->filename for later messages.
 *
 * Secrets: a file may hold a plaintext password, so every copy of its text
 * is zeroed before it is freed, on success and on error alike: the read
 * buffer (grown by hand, as realloc() would leave the old copy behind) and
 * the temporary pool of the words.  Nothing else copies the text.
 *
 * Comments: '#' starts a comment where a token could start.  Inside a word
 * it is an ordinary character (as in nginx), so `password ab#1;` keeps its
 * '#'; inside quotes it is always literal.
 */

#define SLC_CONF_MAX_INCLUDE    16
#define SLC_CONF_MAX_FILE       (64 * 1024 * 1024)

typedef enum {
    SLC_CONF_TOK_WORD,
    SLC_CONF_TOK_SEMI,
    SLC_CONF_TOK_OPEN,
    SLC_CONF_TOK_CLOSE,
    SLC_CONF_TOK_EOF,
    SLC_CONF_TOK_ERROR          /* cf->err is set */
} slc_conf_tok_t;

struct slc_conf_file_s {
    const char         *name;       /* in cf->pool */
    char               *buf;        /* the whole file, freed after parsing */
    size_t              len;
    size_t              pos;
    unsigned            line;       /* line at pos */
    unsigned            tok_line;   /* line where the last token started */
    int                 too_many;   /* directive had > SLC_CONF_MAX_ARGS */
    slc_pool_t         *temp;       /* cf->args; shared with includes */
};

/* One block's module confs (see slc_conf_parse_block), in cf->pool. */
struct slc_conf_mod_s {
    void              **conf;       /* slc_module_count() slots */
    unsigned            level;      /* SLC_CONF_MAIN ... SLC_CONF_SERVER */
    slc_conf_mod_t     *parent;     /* enclosing block's, NULL for main */
    const char         *file;       /* where the block opened, for merge */
    unsigned            line;       /* errors */
    slc_conf_mod_t     *next;       /* in the order blocks were opened */
};

static const char *slc_conf_include(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf);
static const char *slc_conf_parse_body(slc_conf_t *cf, const char *block,
    unsigned block_line);

/* Built in, looked up before the modules' tables. */
static const slc_command_t  slc_conf_builtin[] = {
    { .name = "include",
      .type = SLC_CONF_ANY | SLC_CONF_TAKE1,
      .set = slc_conf_include },

    { .name = NULL }
};

const char *
slc_conf_error(slc_conf_t *cf, const char *fmt, ...)
{
    va_list  ap;

    va_start(ap, fmt);
    vsnprintf(cf->errbuf, sizeof(cf->errbuf), fmt, ap);
    va_end(ap);
    return cf->errbuf;
}

/* Formats "FILE:LINE: message" into cf->err and returns cf->err. */
static const char *
slc_conf_fail(slc_conf_t *cf, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static const char *
slc_conf_fail(slc_conf_t *cf, unsigned line, const char *fmt, ...)
{
    char     msg[SLC_CONF_ERRLEN];
    va_list  ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    snprintf(cf->err, sizeof(cf->err), "%s:%u: %s", cf->filename, line, msg);
    return cf->err;
}

static int
slc_conf_str_is(const slc_str_t *s, const char *name)
{
    return s->len == strlen(name) && memcmp(s->data, name, s->len) == 0;
}

/* ---- tokenizer ---- */

static int
slc_conf_is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int
slc_conf_is_delim(int c)
{
    return slc_conf_is_space(c) || c == ';' || c == '{' || c == '}';
}

static void
slc_conf_skip_blank(slc_conf_file_t *f)
{
    char  c;

    while (f->pos < f->len) {
        c = f->buf[f->pos];

        if (c == '#') {
            while (f->pos < f->len && f->buf[f->pos] != '\n') {
                f->pos++;
            }
            continue;
        }

        if (!slc_conf_is_space(c)) {
            return;
        }

        if (c == '\n') {
            f->line++;
        }
        f->pos++;
    }
}

/*
 * Copies src[0..n) to dst resolving \" \' \\ \n \t; any other backslash is
 * kept with its character, so "\d+" reaches a regex intact.  dst has room
 * for n + 1 bytes; returns the length written before the NUL.
 */
static size_t
slc_conf_unescape(char *dst, const char *src, size_t n)
{
    size_t  i, o;
    char    c;

    o = 0;
    for (i = 0; i < n; i++) {
        c = src[i];
        if (c == '\\' && i + 1 < n) {
            switch (src[i + 1]) {
            case '"': case '\'': case '\\': c = src[++i]; break;
            case 'n': c = '\n'; i++; break;
            case 't': c = '\t'; i++; break;
            default: break;
            }
        }
        dst[o++] = c;
    }
    dst[o] = '\0';
    return o;
}

/* Offset of the quote closing the string opened at f->pos, or f->len. */
static size_t
slc_conf_find_quote(slc_conf_file_t *f, unsigned *lines)
{
    char    q;
    size_t  i;

    q = f->buf[f->pos];
    *lines = 0;
    for (i = f->pos + 1; i < f->len && f->buf[i] != q; i++) {
        if (f->buf[i] == '\\' && i + 1 < f->len) {
            i++;
        }
        if (f->buf[i] == '\n') {
            (*lines)++;
        }
    }
    return i;
}

static slc_conf_tok_t
slc_conf_read_quoted(slc_conf_t *cf, slc_str_t *tok)
{
    slc_conf_file_t  *f = cf->file;
    size_t            end, n;
    unsigned          lines;

    end = slc_conf_find_quote(f, &lines);
    if (end == f->len) {
        slc_conf_fail(cf, f->tok_line, "unterminated quoted string");
        return SLC_CONF_TOK_ERROR;
    }

    n = end - f->pos - 1;
    tok->data = slc_palloc(f->temp, n + 1);
    if (tok->data == NULL) {
        slc_conf_fail(cf, f->tok_line, "out of memory");
        return SLC_CONF_TOK_ERROR;
    }
    tok->len = slc_conf_unescape(tok->data, f->buf + f->pos + 1, n);

    f->pos = end + 1;
    f->line += lines;

    /* "a"b would be one word to some readers and two to others. */
    if (f->pos < f->len && !slc_conf_is_delim(f->buf[f->pos])) {
        slc_conf_fail(cf, f->line, "unexpected \"%c\" after quoted string",
                      f->buf[f->pos]);
        return SLC_CONF_TOK_ERROR;
    }
    return SLC_CONF_TOK_WORD;
}

static slc_conf_tok_t
slc_conf_read_word(slc_conf_t *cf, slc_str_t *tok)
{
    slc_conf_file_t  *f = cf->file;
    size_t            start;

    start = f->pos;
    while (f->pos < f->len && !slc_conf_is_delim(f->buf[f->pos])) {
        f->pos++;
    }

    tok->len = f->pos - start;
    tok->data = slc_pstrndup(f->temp, f->buf + start, tok->len);
    if (tok->data == NULL) {
        slc_conf_fail(cf, f->tok_line, "out of memory");
        return SLC_CONF_TOK_ERROR;
    }
    return SLC_CONF_TOK_WORD;
}

/* The next token; a word is stored in *tok. */
static slc_conf_tok_t
slc_conf_read_token(slc_conf_t *cf, slc_str_t *tok)
{
    slc_conf_file_t  *f = cf->file;

    slc_conf_skip_blank(f);
    f->tok_line = f->line;

    if (f->pos == f->len) {
        return SLC_CONF_TOK_EOF;
    }

    switch (f->buf[f->pos]) {
    case ';': f->pos++; return SLC_CONF_TOK_SEMI;
    case '{': f->pos++; return SLC_CONF_TOK_OPEN;
    case '}': f->pos++; return SLC_CONF_TOK_CLOSE;
    case '"': case '\'': return slc_conf_read_quoted(cf, tok);
    default: return slc_conf_read_word(cf, tok);
    }
}

/*
 * Reads words into cf->args and returns the token that ended them.  Words
 * beyond SLC_CONF_MAX_ARGS are dropped and flagged, so the directive is still
 * looked up first and then fails its argument count check.
 */
static slc_conf_tok_t
slc_conf_read_directive(slc_conf_t *cf)
{
    slc_conf_tok_t  tt;
    slc_str_t       tok;

    cf->nargs = 0;
    cf->file->too_many = 0;

    for (;;) {
        tt = slc_conf_read_token(cf, &tok);
        if (tt != SLC_CONF_TOK_WORD) {
            return tt;
        }

        if (cf->nargs == 0) {
            cf->line = cf->file->tok_line;
        }

        if (cf->nargs == SLC_CONF_MAX_ARGS) {
            cf->file->too_many = 1;
            continue;
        }
        cf->args[cf->nargs++] = tok;
    }
}

/* ---- directive lookup and checks ---- */

/*
 * The first command in `cmd` named cf->args[0] that is allowed in the
 * current context; sets *seen if the name exists only for other contexts.
 */
static const slc_command_t *
slc_conf_find_in(slc_conf_t *cf, const slc_command_t *cmd, int *seen)
{
    for ( /* void */ ; cmd->name != NULL; cmd++) {
        if (!slc_conf_str_is(&cf->args[0], cmd->name)) {
            continue;
        }
        if (cmd->type & cf->ctx_type) {
            return cmd;
        }
        *seen = 1;
    }
    return NULL;
}

/* *found: the directive; *module: the index of its module, -1 if none. */
static const char *
slc_conf_find(slc_conf_t *cf, const slc_command_t **found, int *module)
{
    const slc_excluded_directive_t  *ex;
    const slc_command_t             *cmd;
    const char                      *name = cf->args[0].data;
    int                              seen, i;

    seen = 0;
    *module = -1;
    cmd = slc_conf_find_in(cf, slc_conf_builtin, &seen);
    for (i = 0; cmd == NULL && slc_modules[i] != NULL; i++) {
        if (slc_modules[i]->commands != NULL) {
            cmd = slc_conf_find_in(cf, slc_modules[i]->commands, &seen);
            *module = i;
        }
    }

    if (cmd != NULL) {
        *found = cmd;
        return NULL;
    }

    if (seen) {
        return slc_conf_error(cf, "\"%s\" directive is not allowed here",
                              name);
    }

    for (ex = slc_conf_excluded; ex->directive != NULL; ex++) {
        if (slc_conf_str_is(&cf->args[0], ex->directive)) {
            return slc_conf_error(cf, "\"%s\" directive belongs to module "
                                  "\"%s\", which was not compiled in "
                                  "(./configure --with-%s)",
                                  name, ex->module, ex->module);
        }
    }

    return slc_conf_error(cf, "unknown directive \"%s\"", name);
}

static const char *
slc_conf_check_end(slc_conf_t *cf, const slc_command_t *cmd,
    slc_conf_tok_t end)
{
    if (cmd->type & SLC_CONF_BLOCK) {
        if (end != SLC_CONF_TOK_OPEN) {
            return slc_conf_error(cf, "directive \"%s\" has no opening \"{\"",
                                  cmd->name);
        }
        return NULL;
    }

    if (end != SLC_CONF_TOK_SEMI) {
        return slc_conf_error(cf, "directive \"%s\" is not terminated by "
                              "\";\"", cmd->name);
    }
    return NULL;
}

/* Whether n words after the name fit the argument bits of `type`. */
static int
slc_conf_nargs_ok(unsigned type, unsigned n)
{
    if (n == 0) {
        return (type & SLC_CONF_NOARGS) != 0;
    }
    if (type & SLC_CONF_FLAG) {
        return n == 1;
    }
    if (type & SLC_CONF_1MORE) {
        return 1;
    }
    if (type & SLC_CONF_2MORE) {
        return n >= 2;
    }
    if (n <= 4) {
        return (type & (SLC_CONF_TAKE1 << (n - 1))) != 0;
    }
    return 0;
}

static const char *
slc_conf_bad_flag(slc_conf_t *cf)
{
    return slc_conf_error(cf, "invalid value \"%s\" in \"%s\" directive, "
                          "it must be \"on\" or \"off\"",
                          cf->args[1].data, cf->args[0].data);
}

static int
slc_conf_is_flag(const slc_str_t *s)
{
    return slc_conf_str_is(s, "on") || slc_conf_str_is(s, "off");
}

static const char *
slc_conf_check_args(slc_conf_t *cf, const slc_command_t *cmd)
{
    if (cf->file->too_many || !slc_conf_nargs_ok(cmd->type, cf->nargs - 1)) {
        return slc_conf_error(cf, "invalid number of arguments in \"%s\" "
                              "directive", cmd->name);
    }

    if ((cmd->type & SLC_CONF_FLAG) && !slc_conf_is_flag(&cf->args[1])) {
        return slc_conf_bad_flag(cf);
    }
    return NULL;
}

/*
 * The object a directive's handler fills: the block's, or its module's
 * conf for this block.  A module directive allowed in a context whose
 * block keeps no conf of that module is a mistake in the module's table;
 * it is reported as an error rather than written anywhere.
 */
static const char *
slc_conf_target(slc_conf_t *cf, const slc_command_t *cmd, int module,
    void **conf)
{
    if (cmd->conf != SLC_CONF_MODULE) {
        *conf = cf->ctx;
        return NULL;
    }
    if (cf->mod == NULL || module < 0 || cf->mod->conf[module] == NULL) {
        return slc_conf_error(cf, "\"%s\" directive has no module "
                              "configuration in this block", cmd->name);
    }
    *conf = cf->mod->conf[module];
    return NULL;
}

/* Handles the directive in cf->args, which ended with token `end`. */
static const char *
slc_conf_directive(slc_conf_t *cf, slc_conf_tok_t end)
{
    const slc_command_t  *cmd = NULL;
    const char           *rv;
    void                 *conf = NULL;
    int                   module;

    if (end == SLC_CONF_TOK_EOF) {
        return slc_conf_fail(cf, cf->file->tok_line,
                             "unexpected end of file, expecting \";\" or "
                             "\"}\"");
    }

    rv = slc_conf_find(cf, &cmd, &module);
    if (rv == NULL) {
        rv = slc_conf_check_end(cf, cmd, end);
    }
    if (rv == NULL) {
        rv = slc_conf_check_args(cf, cmd);
    }
    if (rv == NULL) {
        rv = slc_conf_target(cf, cmd, module, &conf);
    }
    if (rv == NULL) {
        rv = cmd->set(cf, cmd, conf);
    }

    if (rv == NULL || rv == cf->err) {
        return rv;
    }
    return slc_conf_fail(cf, cf->line, "%s", rv);
}

/* ---- bodies, blocks and files ---- */

/* A ';', '{', '}' or end of file that no directive precedes. */
static const char *
slc_conf_unexpected(slc_conf_t *cf, slc_conf_tok_t tt, const char *block,
    unsigned block_line)
{
    unsigned  line = cf->file->tok_line;

    switch (tt) {
    case SLC_CONF_TOK_SEMI:
        return slc_conf_fail(cf, line, "unexpected \";\"");
    case SLC_CONF_TOK_OPEN:
        return slc_conf_fail(cf, line, "unexpected \"{\"");
    case SLC_CONF_TOK_CLOSE:
        return slc_conf_fail(cf, line, "unexpected \"}\"");
    default:
        return slc_conf_fail(cf, line, "unexpected end of file, expecting "
                             "\"}\" to close \"%s\" from line %u",
                             block, block_line);
    }
}

/*
 * Parses directives up to the '}' closing `block` (opened on block_line),
 * or, when block is NULL, up to the end of the file.
 */
static const char *
slc_conf_parse_body(slc_conf_t *cf, const char *block, unsigned block_line)
{
    slc_conf_tok_t  tt;
    const char     *rv;

    for (;;) {
        tt = slc_conf_read_directive(cf);
        if (tt == SLC_CONF_TOK_ERROR) {
            return cf->err;
        }

        if (cf->nargs > 0) {
            rv = slc_conf_directive(cf, tt);
            if (rv != NULL) {
                return rv;
            }
            continue;
        }

        if (tt == SLC_CONF_TOK_EOF && block == NULL) {
            return NULL;
        }
        if (tt == SLC_CONF_TOK_CLOSE && block != NULL) {
            return NULL;
        }
        return slc_conf_unexpected(cf, tt, block, block_line);
    }
}

/* ---- module confs ---- */

/*
 * Opens the module confs of a block at `level` inside the current one and
 * appends them to the list that slc_conf_merge() walks.  Returns NULL or
 * an error like a handler.
 */
static const char *
slc_conf_mod_open(slc_conf_t *cf, unsigned level, slc_conf_mod_t **out)
{
    unsigned         n = slc_module_count();
    slc_conf_mod_t  *m;
    void            *c;

    m = slc_palloc(cf->pool, sizeof(*m));
    if (m == NULL
        || (m->conf = slc_palloc(cf->pool, (n + 1) * sizeof(void *))) == NULL)
    {
        return "out of memory";
    }
    for (unsigned i = 0; i < n; i++) {
        if (slc_modules[i]->create_conf == NULL) {
            continue;
        }
        c = slc_modules[i]->create_conf(cf, level);
        if (c == SLC_CONF_ERROR) {
            return "out of memory";
        }
        m->conf[i] = c;
    }
    m->level = level;
    m->parent = cf->mod;
    m->file = cf->filename;
    m->line = cf->line;
    if (cf->mod_last != NULL) {
        cf->mod_last->next = m;
    } else {
        cf->mod_first = m;
    }
    cf->mod_last = m;
    *out = m;
    return NULL;
}

void **
slc_conf_main_confs(slc_conf_t *cf)
{
    slc_conf_mod_t  *m;
    const char      *rv;

    cf->mod = NULL;
    cf->mod_first = cf->mod_last = NULL;
    rv = slc_conf_mod_open(cf, SLC_CONF_MAIN, &m);
    if (rv != NULL) {
        strlcpy(cf->err, rv, sizeof(cf->err));
        return NULL;
    }
    cf->mod = m;
    return m->conf;
}

/*
 * After the whole file: blocks were opened outer first, so walking them in
 * that order merges a parent before any of its children inherit from it,
 * whatever the order of the directives inside the parent.
 */
static const char *
slc_conf_merge(slc_conf_t *cf)
{
    const char  *rv;

    for (slc_conf_mod_t *m = cf->mod_first; m != NULL; m = m->next) {
        if (m->parent == NULL) {
            continue;
        }
        cf->filename = m->file;
        cf->line = m->line;
        for (unsigned i = 0; slc_modules[i] != NULL; i++) {
            if (slc_modules[i]->merge_conf == NULL || m->conf[i] == NULL) {
                continue;
            }
            rv = slc_modules[i]->merge_conf(cf, m->level, m->parent->conf[i],
                                            m->conf[i]);
            if (rv != NULL) {
                return slc_conf_fail(cf, m->line, "%s", rv);
            }
        }
    }
    return NULL;
}

/* ---- blocks ---- */

/*
 * The block's handler is still running and may look at its own cf->args
 * after this returns, so they are saved across the nested directives.
 */
const char *
slc_conf_parse_block(slc_conf_t *cf, unsigned ctx_type, void *ctx,
    void ***confs)
{
    slc_str_t        args[SLC_CONF_MAX_ARGS];
    void            *octx = cf->ctx;
    unsigned         otype = cf->ctx_type;
    unsigned         nargs = cf->nargs;
    unsigned         line = cf->line;
    slc_conf_mod_t  *omod = cf->mod, *mod = NULL;
    const char      *rv;

    if (confs != NULL) {
        rv = slc_conf_mod_open(cf, ctx_type, &mod);
        if (rv != NULL) {
            return rv;
        }
        *confs = mod->conf;
    }
    memcpy(args, cf->args, sizeof(args));

    cf->ctx = ctx;
    cf->ctx_type = ctx_type;
    cf->mod = mod;
    rv = slc_conf_parse_body(cf, args[0].data, line);

    cf->ctx = octx;
    cf->ctx_type = otype;
    cf->mod = omod;
    memcpy(cf->args, args, sizeof(args));
    cf->nargs = nargs;
    cf->line = line;
    return rv;
}

/* Zero the first `len` bytes of a file buffer, then free it. */
static void
slc_conf_buf_free(char *buf, size_t len)
{
    if (buf != NULL) {
        explicit_bzero(buf, len);
        free(buf);
    }
}

/* A buffer of `cap` bytes holding the `len` of `buf`, which is wiped. */
static char *
slc_conf_buf_grow(char *buf, size_t len, size_t cap)
{
    char *nbuf = malloc(cap);

    if (nbuf != NULL && len != 0) {
        memcpy(nbuf, buf, len);
    }
    slc_conf_buf_free(buf, len);
    return nbuf;
}

/* Reads all of fd into a malloc()ed f->buf. */
static const char *
slc_conf_read_all(slc_conf_t *cf, slc_conf_file_t *f, int fd,
    const char *path)
{
    size_t    cap = 0;
    char     *buf = NULL;
    ssize_t   n = 0;
    int       err;

    for (f->len = 0; /* void */ ; f->len += (size_t) n) {
        if (f->len == cap) {
            if (cap >= SLC_CONF_MAX_FILE) {
                slc_conf_buf_free(buf, f->len);
                return slc_conf_error(cf, "\"%s\" is too large", path);
            }
            cap = cap ? cap * 2 : 4096;
            buf = slc_conf_buf_grow(buf, f->len, cap);
            if (buf == NULL) {
                return "out of memory";
            }
        }

        n = read(fd, buf + f->len, cap - f->len);
        if (n == 0) {
            break;
        }
        if (n == -1 && errno == EINTR) {
            n = 0;
            continue;
        }
        if (n == -1) {
            err = errno;
            slc_conf_buf_free(buf, f->len);
            return slc_conf_error(cf, "read() \"%s\" failed (%s)", path,
                                  strerror(err));
        }
    }

    f->buf = buf;
    return NULL;
}

static const char *
slc_conf_load(slc_conf_t *cf, slc_conf_file_t *f, const char *path)
{
    const char  *rv;
    int          fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        return slc_conf_error(cf, "open() \"%s\" failed (%s)", path,
                              strerror(errno));
    }

    rv = slc_conf_read_all(cf, f, fd, path);
    close(fd);
    if (rv != NULL) {
        return rv;
    }

    f->name = slc_pstrndup(cf->pool, path, strlen(path));
    if (f->name == NULL) {
        slc_conf_buf_free(f->buf, f->len);
        return "out of memory";
    }
    return NULL;
}

/*
 * Parses the file at `path` in the current context.  Returns like a
 * handler: a failure to read the file is left for the caller to place.
 */
static const char *
slc_conf_parse_path(slc_conf_t *cf, const char *path, slc_pool_t *temp)
{
    slc_conf_file_t   f;
    const char       *rv;

    memset(&f, 0, sizeof(f));
    rv = slc_conf_load(cf, &f, path);
    if (rv != NULL) {
        return rv;
    }

    f.line = 1;
    f.temp = temp;
    cf->file = &f;
    cf->filename = f.name;

    rv = slc_conf_parse_body(cf, NULL, 0);

    slc_conf_buf_free(f.buf, f.len);
    cf->file = NULL;
    return rv;
}

int
slc_conf_parse_file(slc_conf_t *cf, const char *filename)
{
    slc_pool_t  *temp;
    const char  *rv;

    cf->err[0] = '\0';
    cf->file = NULL;
    cf->depth = 0;
    cf->nargs = 0;
    cf->ctx_type = SLC_CONF_MAIN;

    temp = slc_pool_create(0);
    if (temp == NULL) {
        snprintf(cf->err, sizeof(cf->err), "out of memory");
        return SLC_ERROR;
    }

    rv = slc_conf_parse_path(cf, filename, temp);

    /* cf->args pointed into temp, which may hold a password */
    slc_pool_destroy_wipe(temp);
    cf->nargs = 0;

    if (rv == NULL) {
        rv = slc_conf_merge(cf);
    }

    if (rv == NULL) {
        return SLC_OK;
    }
    if (rv != cf->err) {
        /* The top file could not be read: there is no line to name. */
        strlcpy(cf->err, rv, sizeof(cf->err));
    }
    return SLC_ERROR;
}

/* ---- include ---- */

/*
 * A relative pattern is taken from the directory of the including file.
 * Known limit: with a wildcard in the pattern, that directory's name is part
 * of the glob too, so a directory whose name holds '*', '?' or '[' may not
 * match itself.
 */
static const char *
slc_conf_include_path(slc_conf_t *cf, char *path, size_t size)
{
    const slc_str_t  *arg = &cf->args[1];
    const char       *slash;
    int               dirlen, n;

    slash = strrchr(cf->filename, '/');
    if (arg->data[0] == '/' || slash == NULL) {
        dirlen = 0;
    } else {
        dirlen = (int) (slash - cf->filename) + 1;
    }

    n = snprintf(path, size, "%.*s%s", dirlen, cf->filename, arg->data);
    if (n < 0 || (size_t) n >= size) {
        return slc_conf_error(cf, "include path \"%s\" is too long",
                              arg->data);
    }
    return NULL;
}

/* Parses one included file in the current context, then returns to ours. */
static const char *
slc_conf_include_file(slc_conf_t *cf, const char *path)
{
    slc_conf_file_t  *file = cf->file;
    const char       *filename = cf->filename;
    unsigned          line = cf->line;
    const char       *rv;

    cf->depth++;
    rv = slc_conf_parse_path(cf, path, file->temp);
    cf->depth--;

    cf->file = file;
    cf->filename = filename;
    cf->line = line;
    return rv;
}

/* Matches are parsed in glob(3)'s sorted order; none at all is fine. */
static const char *
slc_conf_include_glob(slc_conf_t *cf, const char *pattern)
{
    glob_t       g;
    const char  *rv;
    size_t       i;
    int          rc;

    memset(&g, 0, sizeof(g));
    rc = glob(pattern, 0, NULL, &g);
    if (rc == GLOB_NOMATCH) {
        globfree(&g);
        return NULL;
    }
    if (rc != 0) {
        globfree(&g);
        return slc_conf_error(cf, "glob() \"%s\" failed", pattern);
    }

    rv = NULL;
    for (i = 0; rv == NULL && i < g.gl_pathc; i++) {
        rv = slc_conf_include_file(cf, g.gl_pathv[i]);
    }

    globfree(&g);
    return rv;
}

/*
 * A pattern without wildcards is opened directly, so a missing file is an
 * error with the real errno instead of an empty match.  Only the argument is
 * checked for wildcards, not the directory it is relative to.
 */
static const char *
slc_conf_include(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    char         path[PATH_MAX];
    const char  *rv;

    (void) cmd;
    (void) conf;

    if (cf->depth >= SLC_CONF_MAX_INCLUDE) {
        return slc_conf_error(cf, "includes nested deeper than %d levels, "
                              "does a file include itself?",
                              SLC_CONF_MAX_INCLUDE);
    }

    rv = slc_conf_include_path(cf, path, sizeof(path));
    if (rv != NULL) {
        return rv;
    }

    if (strpbrk(cf->args[1].data, "*?[") == NULL) {
        return slc_conf_include_file(cf, path);
    }
    return slc_conf_include_glob(cf, path);
}

/* ---- generic slot setters ---- */

/*
 * Each stores cf->args[1] at conf + cmd->offset.  A directive given twice is
 * not an error: the last one wins.  A module that must refuse duplicates
 * checks the slot for its unset value in its own handler.
 */

#define slc_conf_slot(conf, cmd, type)                                      \
    ((type *) (void *) ((char *) (conf) + (cmd)->offset))

const char *
slc_conf_set_flag_slot(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    int  *p = slc_conf_slot(conf, cmd, int);

    if (slc_conf_str_is(&cf->args[1], "on")) {
        *p = 1;
    } else if (slc_conf_str_is(&cf->args[1], "off")) {
        *p = 0;
    } else {
        return slc_conf_bad_flag(cf);
    }
    return NULL;
}

static const char *
slc_conf_bad_value(slc_conf_t *cf, const char *what)
{
    return slc_conf_error(cf, "invalid value \"%s\" in \"%s\" directive, "
                          "it must be %s",
                          cf->args[1].data, cf->args[0].data, what);
}

const char *
slc_conf_set_num_slot(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    long long  n;

    n = slc_conf_parse_int(&cf->args[1]);
    if (n < 0) {
        return slc_conf_bad_value(cf, "a non-negative integer");
    }
    *slc_conf_slot(conf, cmd, long long) = n;
    return NULL;
}

const char *
slc_conf_set_size_slot(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    long long  n;

    n = slc_conf_parse_size(&cf->args[1]);
    if (n < 0 || (unsigned long long) n != (size_t) n) {
        return slc_conf_bad_value(cf, "a size such as 512, 16k, 1m or 2g");
    }
    *slc_conf_slot(conf, cmd, size_t) = (size_t) n;
    return NULL;
}

const char *
slc_conf_set_msec_slot(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    long long  n;

    n = slc_conf_parse_msec(&cf->args[1]);
    if (n < 0) {
        return slc_conf_bad_value(cf, "a time such as 500ms, 10s, 1m30s "
                                  "or 2h");
    }
    *slc_conf_slot(conf, cmd, long long) = n;
    return NULL;
}

const char *
slc_conf_set_str_slot(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_str_t  *p = slc_conf_slot(conf, cmd, slc_str_t);
    char       *data;

    data = slc_pstrndup(cf->pool, cf->args[1].data, cf->args[1].len);
    if (data == NULL) {
        return "out of memory";
    }
    p->data = data;
    p->len = cf->args[1].len;
    return NULL;
}

const char *
slc_conf_set_cstr_slot(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    char **p = slc_conf_slot(conf, cmd, char *);

    *p = slc_pstrndup(cf->pool, cf->args[1].data, cf->args[1].len);
    return *p != NULL ? NULL : "out of memory";
}

const char *
slc_conf_parse_enum(slc_conf_t *cf, const slc_conf_enum_t *e, int *value)
{
    char    words[SLC_CONF_ERRLEN / 2];
    size_t  n = 0;

    for (int i = 0; e[i].name != NULL; i++) {
        if (slc_conf_str_is(&cf->args[1], e[i].name)) {
            *value = e[i].value;
            return NULL;
        }
    }
    /* "a", "b" or "c" */
    words[0] = '\0';
    for (int i = 0; e[i].name != NULL && n < sizeof(words); i++) {
        const char *sep = i == 0 ? "" : e[i + 1].name != NULL ? ", " : " or ";
        n += (size_t) snprintf(words + n, sizeof(words) - n, "%s\"%s\"", sep,
                               e[i].name);
    }
    return slc_conf_bad_value(cf, words);
}

const char *
slc_conf_set_enum_slot(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    return slc_conf_parse_enum(cf, cmd->post, slc_conf_slot(conf, cmd, int));
}
