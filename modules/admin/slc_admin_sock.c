/*
 * The admin sockets' configuration and process role (slc_admin_sock.h).
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_cycle.h"
#include "slc_role.h"
#include "slc_admin_serve.h"
#include "slc_admin_sock.h"

#include <grp.h>
#include <pwd.h>

static void *slc_admin_sock_create_conf(slc_conf_t *cf, unsigned level);
static int  slc_admin_sock_init_conf(slc_cycle_t *cycle, char *err,
    size_t errlen);
static const char *slc_admin_sock_directive(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);

static const slc_command_t slc_admin_sock_commands[] = {
    { .name = "admin_socket", .type = SLC_CONF_MAIN | SLC_CONF_1MORE,
      .set = slc_admin_sock_directive, .conf = SLC_CONF_MODULE },
    { .name = NULL }
};

slc_module_t slc_admin_module = {
    .name = "admin",
    .type = SLC_MODULE_CORE,
    .commands = slc_admin_sock_commands,
    .create_conf = slc_admin_sock_create_conf,
    .init_conf = slc_admin_sock_init_conf,
};

static void *
slc_admin_sock_create_conf(slc_conf_t *cf, unsigned level)
{
    slc_admin_conf_t *ac;

    if (level != SLC_CONF_MAIN) {
        return NULL;
    }
    if ((ac = slc_palloc(cf->pool, sizeof(*ac))) == NULL) {
        return SLC_CONF_ERROR;
    }
    memset(ac, 0, sizeof(*ac));
    return ac;
}

/* One NAME=VALUE option of admin_socket into *as; NULL or the error. */
static const char *
slc_admin_sock_option(slc_conf_t *cf, slc_admin_socket_t *as,
    const char *opt)
{
    const char    *v = strchr(opt, '=');
    struct passwd *pw;
    struct group  *gr;
    char          *end;

    if (v == NULL || v[1] == '\0') {
        return slc_conf_error(cf, "invalid admin_socket option \"%s\"", opt);
    }
    v++;
    if (strncmp(opt, "level=", 6) == 0) {
        as->level = strcmp(v, "read") == 0 ? SLC_ADMIN_READ
                    : strcmp(v, "operator") == 0 ? SLC_ADMIN_OPERATOR
                    : strcmp(v, "admin") == 0 ? SLC_ADMIN_ADMIN : 0;
        return as->level != 0 ? NULL : slc_conf_error(cf, "invalid "
            "admin_socket level \"%s\" (read, operator or admin)", v);
    }
    if (strncmp(opt, "user=", 5) == 0) {
        if ((pw = getpwnam(v)) == NULL) {
            return slc_conf_error(cf, "admin_socket: unknown user \"%s\"", v);
        }
        as->uid = pw->pw_uid;
        return NULL;
    }
    if (strncmp(opt, "group=", 6) == 0) {
        if ((gr = getgrnam(v)) == NULL) {
            return slc_conf_error(cf, "admin_socket: unknown group \"%s\"",
                v);
        }
        as->gid = gr->gr_gid;
        return NULL;
    }
    if (strncmp(opt, "mode=", 5) == 0) {
        unsigned long m = strtoul(v, &end, 8);

        if (*end != '\0' || m > 0777 || (m & 0600) != 0600) {
            return slc_conf_error(cf, "invalid admin_socket mode \"%s\" "
                "(octal, at most 0777, the owner may read and write)", v);
        }
        as->mode = (unsigned) m;
        return NULL;
    }
    return slc_conf_error(cf, "invalid admin_socket option \"%s\"", opt);
}

static const char *
slc_admin_sock_directive(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_admin_conf_t   *ac = conf;
    slc_admin_socket_t *as;
    const char         *path = cf->args[1].data, *rv;

    (void) cmd;
    if (ac->nsockets == SLC_ADMIN_SOCKETS) {
        return slc_conf_error(cf, "too many admin_socket (at most %d)",
            SLC_ADMIN_SOCKETS);
    }
    if (path[0] != '/' || strlen(path) >= sizeof(as->path)) {
        return slc_conf_error(cf, "admin_socket \"%s\": an absolute path "
            "of at most %zu bytes", path, sizeof(as->path) - 1);
    }
    for (unsigned i = 0; i < ac->nsockets; i++) {
        if (strcmp(ac->sockets[i].path, path) == 0) {
            return slc_conf_error(cf, "duplicate admin_socket \"%s\"", path);
        }
    }
    as = &ac->sockets[ac->nsockets];
    *as = (slc_admin_socket_t) { .level = SLC_ADMIN_ADMIN, .uid = (uid_t) -1,
                                 .gid = (gid_t) -1, .mode = 0600,
                                 .file = cf->filename, .line = cf->line };
    strlcpy(as->path, path, sizeof(as->path));
    for (unsigned i = 2; i < cf->nargs; i++) {
        if ((rv = slc_admin_sock_option(cf, as, cf->args[i].data)) != NULL) {
            return rv;
        }
    }
    ac->nsockets++;
    return NULL;
}

static int
slc_admin_sock_role_init(slc_cycle_t *cycle, slc_role_t *role, unsigned n)
{
    (void) n;
    return slc_admin_serve(cycle, role->data);
}

static void
slc_admin_sock_role_quit(slc_role_t *role)
{
    (void) role;
    slc_admin_serve_quit();
}

static int
slc_admin_sock_role_busy(slc_role_t *role)
{
    (void) role;
    return slc_admin_serve_busy();
}

/* Sockets: their process. */
static int
slc_admin_sock_init_conf(slc_cycle_t *cycle, char *err, size_t errlen)
{
    slc_admin_conf_t *ac = slc_module_conf(cycle->mod_conf,
                                           &slc_admin_module);
    slc_role_t        role = {
        .name = "admin", .count = 1, .module = &slc_admin_module,
        .data = ac, .init = slc_admin_sock_role_init,
        .quit = slc_admin_sock_role_quit, .busy = slc_admin_sock_role_busy,
    };

    if (ac == NULL || ac->nsockets == 0) {
        return SLC_OK;
    }
    if (slc_cycle_add_role(cycle, &role) == NULL) {
        snprintf(err, errlen, "cannot declare the admin process");
        return SLC_ERROR;
    }
    return SLC_OK;
}
