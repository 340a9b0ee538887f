/*
 * The status listener's configuration and process role (slc_status.h):
 *
 *   status_listen 127.0.0.1:9104;    main context; or unix:PATH
 *   status_timeout 5s;               a request's time, and an idle one's
 *
 * `sluice -t` checks them; with a listener the master runs one process
 * of the role "status" (a reload starts the new one and lets the old one
 * finish its answers).
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_cycle.h"
#include "slc_role.h"
#include "slc_status.h"
#include "slc_status_cli.h"
#include "slc_status_serve.h"

static void *slc_status_create_conf(slc_conf_t *cf, unsigned level);
static int  slc_status_init_conf(slc_cycle_t *cycle, char *err,
    size_t errlen);
static const char *slc_status_listen(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);
static const char *slc_status_timeout(slc_conf_t *cf,
    const slc_command_t *cmd, void *conf);

static const slc_command_t slc_status_commands[] = {
    { .name = "status_listen", .type = SLC_CONF_MAIN | SLC_CONF_TAKE1,
      .set = slc_status_listen, .conf = SLC_CONF_MODULE },
    { .name = "status_timeout", .type = SLC_CONF_MAIN | SLC_CONF_TAKE1,
      .set = slc_status_timeout, .conf = SLC_CONF_MODULE,
      .offset = offsetof(slc_status_conf_t, timeout) },
    { .name = NULL }
};

slc_module_t slc_status_module = {
    .name = "status",
    .type = SLC_MODULE_CORE,
    .commands = slc_status_commands,
    .create_conf = slc_status_create_conf,
    .init_conf = slc_status_init_conf,
    .print_status = slc_status_print,
};

static void *
slc_status_create_conf(slc_conf_t *cf, unsigned level)
{
    slc_status_conf_t *sc;

    if (level != SLC_CONF_MAIN) {
        return NULL;
    }
    if ((sc = slc_palloc(cf->pool, sizeof(*sc))) == NULL) {
        return SLC_CONF_ERROR;
    }
    memset(sc, 0, sizeof(*sc));
    sc->timeout = SLC_CONF_UNSET;
    return sc;
}

/* The main level has no parent to merge from: checked as it is set, its
   default given by init_conf. */
static const char *
slc_status_timeout(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_status_conf_t *sc = conf;
    const char        *rv = slc_conf_set_msec_slot(cf, cmd, conf);

    if (rv != NULL) {
        return rv;
    }
    if (sc->timeout < 100 || sc->timeout > 600000) {
        return slc_conf_error(cf, "\"status_timeout\" is not in 100ms "
            "to 10m");
    }
    return NULL;
}

static const char *
slc_status_listen(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_status_conf_t *sc = conf;
    char               err[256];

    (void) cmd;
    if (sc->listen.text[0] != '\0') {
        return slc_conf_error(cf, "\"status_listen\" is duplicate");
    }
    if (slc_listen_parse(cf->args[1].data, &sc->listen, err, sizeof(err))
        != SLC_OK)
    {
        return slc_conf_error(cf, "%s", err);
    }
    sc->listen.backlog = 64;
    sc->listen.file = cf->filename;
    sc->listen.line = cf->line;
    return NULL;
}

static int
slc_status_role_init(slc_cycle_t *cycle, slc_role_t *role, unsigned n)
{
    (void) n;
    return slc_status_serve(cycle, role->data);
}

static void
slc_status_role_quit(slc_role_t *role)
{
    (void) role;
    slc_status_quit();
}

static int
slc_status_role_busy(slc_role_t *role)
{
    (void) role;
    return slc_status_busy();
}

/* A listener: its process. */
static int
slc_status_init_conf(slc_cycle_t *cycle, char *err, size_t errlen)
{
    slc_status_conf_t *sc = slc_module_conf(cycle->mod_conf,
                                            &slc_status_module);
    slc_role_t         role = {
        .name = "status", .count = 1, .module = &slc_status_module,
        .data = sc, .init = slc_status_role_init,
        .quit = slc_status_role_quit, .busy = slc_status_role_busy,
    };

    if (sc == NULL || sc->listen.text[0] == '\0') {
        return SLC_OK;
    }
    slc_conf_merge_value(sc->timeout, SLC_CONF_UNSET, 5000);
    if (slc_cycle_add_role(cycle, &role) == NULL) {
        snprintf(err, errlen, "cannot declare the status process");
        return SLC_ERROR;
    }
    return SLC_OK;
}
