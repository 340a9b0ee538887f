/*
 * The binlog source's configuration, zone and role (slc_cache_binlog.h):
 *
 *   upstream db {
 *       server ... role=auto;
 *       monitor_user sluice_mon; monitor_password ...;
 *       binlog on;                      read the primary's binlog
 *       binlog_user sluice_bl;          default: the monitor's account
 *       binlog_password ...;
 *       binlog_server_id 4000001;       default: derived, never small
 *       binlog_lost bypass;             or serve
 *   }
 */

#include "slc_core.h"
#include "slc_conf_file.h"
#include "slc_cycle.h"
#include "slc_log.h"
#include "slc_module.h"
#include "slc_role.h"
#include "slc_seqlock.h"
#include "slc_shm.h"
#include "slc_mysql_conf.h"
#include "slc_mysql_upstream.h"
#include "slc_cache.h"
#include "slc_cache_binlog.h"

const slc_conf_enum_t slc_cache_binlog_lost_names[] = {
    { "bypass", SLC_BINLOG_LOST_BYPASS },
    { "serve", SLC_BINLOG_LOST_SERVE },
    { NULL, 0 }
};


/* --- configuration ------------------------------------------------------- */

void *
slc_cache_binlog_create_conf(slc_conf_t *cf)
{
    slc_cache_binlog_conf_t *bc = slc_palloc(cf->pool, sizeof(*bc));

    if (bc == NULL) {
        return SLC_CONF_ERROR;
    }
    memset(bc, 0, sizeof(*bc));
    bc->on = SLC_CONF_UNSET;
    bc->server_id = SLC_CONF_UNSET;
    bc->lost = SLC_CONF_UNSET;
    return bc;
}

const char *
slc_cache_binlog_on(slc_conf_t *cf, const slc_command_t *cmd, void *conf)
{
    slc_cache_binlog_conf_t *bc = conf;

    bc->file = cf->filename;
    bc->line = cf->line;
    return slc_conf_set_flag_slot(cf, cmd, conf);
}

const char *
slc_cache_binlog_password(slc_conf_t *cf, const slc_command_t *cmd,
    void *conf)
{
    slc_cache_binlog_conf_t *bc = conf;

    (void) cmd;
    return slc_monitor_secret(cf, "binlog_password", &bc->account);
}

const char *
slc_cache_binlog_merge_conf(slc_cache_binlog_conf_t *bc)
{
    int set = bc->account.user != NULL || bc->account.password != NULL
              || bc->server_id != SLC_CONF_UNSET
              || bc->lost != SLC_CONF_UNSET;

    slc_conf_merge_value(bc->on, SLC_CONF_UNSET, 0);
    slc_conf_merge_value(bc->lost, SLC_CONF_UNSET, SLC_BINLOG_LOST_BYPASS);
    if (set && !bc->on) {
        return "\"binlog_user\", \"binlog_password\", \"binlog_server_id\" "
               "and \"binlog_lost\" need \"binlog on\"";
    }
    if ((bc->account.user == NULL) != (bc->account.password == NULL)) {
        return "\"binlog_user\" and \"binlog_password\" go together";
    }
    if (bc->server_id != SLC_CONF_UNSET
        && (bc->server_id < 1 || bc->server_id > 4294967295LL))
    {
        return "\"binlog_server_id\" is not in 1 to 4294967295";
    }
    return NULL;
}

slc_cache_binlog_conf_t *
slc_cache_binlog_conf(const slc_upstream_t *up)
{
    return up->mod_conf != NULL
           ? slc_module_conf(up->mod_conf, &slc_cache_module) : NULL;
}

uint32_t
slc_cache_binlog_default_id(const char *upstream, unsigned generation)
{
    char      host[256] = "", mid[64] = "", pid[32];
    uint32_t  h = 2166136261u;
    FILE     *f;

    gethostname(host, sizeof(host) - 1);
    f = fopen("/etc/machine-id", "r");
    if (f != NULL) {
        if (fgets(mid, sizeof(mid), f) == NULL) {
            mid[0] = '\0';
        }
        fclose(f);
    }
    snprintf(pid, sizeof(pid), "%d/%u", (int) getpid(), generation);
    for (const char *s[4] = { host, mid, pid, upstream }, **p = s; p < s + 4;
         p++)
    {
        for (const char *c = *p; *c != '\0'; c++) {
            h = (h ^ (uint8_t) *c) * 16777619u;
        }
        h = (h ^ '/') * 16777619u;
    }
    return 0x40000000u | (h & 0x3fffffffu);
}


/* --- the zone and the role ----------------------------------------------- */

static slc_upstream_t *
slc_cache_binlog_upstream(slc_mysql_conf_t *mc, const char *name)
{
    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        if (name[0] != '\0' && strcmp(up->name.data, name) == 0) {
            return up;
        }
    }
    return NULL;
}

/* Whether a server with the cache filter in front uses `up`. */
static int
slc_cache_binlog_cached(slc_cycle_t *cycle, const slc_upstream_t *up)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);

    for (slc_mysql_srv_t *srv = mc->servers; srv != NULL; srv = srv->next) {
        if (srv->upstream == up && slc_cache_filtered(srv)) {
            return 1;
        }
    }
    return 0;
}

/*
 * Each reading upstream gets its entry (kept by name: a reload resumes
 * where the last reader stopped); entries no upstream names any more are
 * freed.  Each server of the cache whose upstream reads with
 * `binlog_lost bypass` is given the entry to check before a hit.
 */
static int
slc_cache_binlog_attach(slc_shm_zone_t *z, slc_cycle_t *cycle, char *err,
    size_t errlen)
{
    slc_mysql_conf_t        *mc = slc_mysql_conf(cycle);
    slc_cache_binlog_t      *tab = z->addr;
    slc_cache_binlog_conf_t *bc;

    for (unsigned i = 0; i < SLC_BINLOG_MAX; i++) {
        slc_upstream_t *up = slc_cache_binlog_upstream(mc, tab[i].upstream);

        bc = up != NULL ? slc_cache_binlog_conf(up) : NULL;
        if (bc == NULL || !bc->on) {
            tab[i].upstream[0] = '\0';
        }
    }
    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        bc = slc_cache_binlog_conf(up);
        if (bc == NULL || !bc->on) {
            continue;
        }
        bc->entry = slc_shm_slot_claim(tab, SLC_BINLOG_MAX, sizeof(*tab),
            sizeof(tab->upstream), up->name.data);
        if (bc->entry == NULL) {
            snprintf(err, errlen, "more than %d upstreams with \"binlog "
                "on\"", SLC_BINLOG_MAX);
            return SLC_ERROR;
        }
    }
    for (slc_mysql_srv_t *srv = mc->servers; srv != NULL; srv = srv->next) {
        slc_cache_conf_t *cc = slc_module_conf(srv->mod_conf,
                                               &slc_cache_module);

        bc = srv->upstream != NULL ? slc_cache_binlog_conf(srv->upstream)
                                   : NULL;
        cc->binlog = bc != NULL && bc->on ? bc->entry : NULL;
        cc->binlog_gate = cc->binlog != NULL
                          && bc->lost == SLC_BINLOG_LOST_BYPASS
                          ? bc->entry : NULL;
    }
    return SLC_OK;
}

/* An upstream that reads: a cache in front, and an account. */
static int
slc_cache_binlog_check(slc_cycle_t *cycle, slc_upstream_t *up,
    slc_cache_binlog_conf_t *bc, char *err, size_t errlen)
{
    const slc_monitor_conf_t *mon = slc_monitor_conf(up);

    if (!slc_cache_binlog_cached(cycle, up)) {
        snprintf(err, errlen, "%s:%u: \"binlog on\": no server with "
            "\"filters cache\" uses upstream \"%s\"", bc->file, bc->line,
            up->name.data);
        return SLC_ERROR;
    }
    if (bc->account.user == NULL) {
        /* the monitor's (the cache already needs one) */
        bc->account.user = mon->user;
        bc->account.password = mon->password;
        bc->account.pad = mon->pad;
        bc->account.password_len = mon->password_len;
    }
    bc->account.connect_timeout = mon->connect_timeout;
    bc->account.read_timeout = SLC_BINLOG_READ_TIMEOUT;
    if (bc->server_id == SLC_CONF_UNSET) {
        bc->server_id = slc_cache_binlog_default_id(up->name.data,
            cycle->generation);
    }
    return SLC_OK;
}

int
slc_cache_binlog_init_conf(slc_cycle_t *cycle, char *err, size_t errlen)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);
    slc_shm_zone_t   *z;
    unsigned          n = 0;
    slc_role_t        role = {
        .name = "binlog", .module = &slc_cache_module,
        .init = slc_cache_binlog_process, .quit = slc_cache_binlog_quit,
        .busy = slc_cache_binlog_busy,
    };

    for (slc_upstream_t *up = mc->upstreams; up != NULL; up = up->next) {
        slc_cache_binlog_conf_t *bc = slc_cache_binlog_conf(up);

        if (bc == NULL || !bc->on) {
            continue;
        }
        if (slc_cache_binlog_check(cycle, up, bc, err, errlen) != SLC_OK) {
            return SLC_ERROR;
        }
        n++;
    }
    if (n == 0) {
        return SLC_OK;
    }
    z = slc_shm_zone_add(cycle, "cache_binlog",
        SLC_BINLOG_MAX * sizeof(slc_cache_binlog_t), &slc_cache_module,
        err, errlen);
    if (z == NULL) {
        return SLC_ERROR;
    }
    z->attach = slc_cache_binlog_attach;
    role.count = n;
    role.data = mc;
    if (slc_cycle_add_role(cycle, &role) == NULL) {
        snprintf(err, errlen, "cannot declare the binlog process");
        return SLC_ERROR;
    }
    return SLC_OK;
}


/* --- sluice -s stats ----------------------------------------------------- */

const char *
slc_cache_binlog_state_name(uint32_t state)
{
    static const char *names[] = {
        [SLC_BINLOG_STARTING] = "starting",
        [SLC_BINLOG_CATCHING_UP] = "catching_up",
        [SLC_BINLOG_LIVE] = "live",
        [SLC_BINLOG_LOST] = "lost",
    };

    return state < slc_nelems(names) ? names[state] : "?";
}

void
slc_cache_binlog_report(slc_cycle_t *cycle)
{
    slc_mysql_conf_t *mc = slc_mysql_conf(cycle);

    for (slc_upstream_t *up = mc != NULL ? mc->upstreams : NULL; up != NULL;
         up = up->next)
    {
        slc_cache_binlog_conf_t  *bc = slc_cache_binlog_conf(up);
        slc_cache_binlog_t       *b = bc != NULL ? bc->entry : NULL;
        slc_cache_binlog_stats_t *st;
        char                      pos[SLC_GTID_TEXT], from[128], e[256];

        if (b == NULL || !bc->on) {
            continue;
        }
        st = &b->st;
        for (unsigned k = 0; k < 8; k++) {
            uint32_t s0 = slc_seqlock_read_begin(&b->seq);
            memcpy(pos, b->pos, sizeof(pos));
            memcpy(from, b->primary, sizeof(from));
            memcpy(e, b->error, sizeof(e));
            if (!(s0 & 1) && slc_seqlock_read_end(&b->seq, s0)) {
                break;
            }
        }
        pos[sizeof(pos) - 1] = from[sizeof(from) - 1] = '\0';
        e[sizeof(e) - 1] = '\0';
        slc_log(SLC_LOG_NOTICE, "cache binlog \"%s\": state=%s pid=%d "
            "server_id=%u primary=%s position=%s events=%llu groups=%llu "
            "tables=%llu "
            "all_statement=%llu all_position=%llu all_event=%llu "
            "all_xa=%llu all_tables=%llu connects=%llu errors=%llu "
            "lost_ms=%llu%s%s", up->name.data,
            slc_cache_binlog_state_name(b->state), (int) b->pid,
            b->server_id,
            from[0] ? from : "-", pos[0] ? pos : "-",
            (unsigned long long) st->events,
            (unsigned long long) st->groups,
            (unsigned long long) st->tables,
            (unsigned long long) st->all[SLC_BINLOG_ALL_STATEMENT],
            (unsigned long long) st->all[SLC_BINLOG_ALL_POSITION],
            (unsigned long long) st->all[SLC_BINLOG_ALL_EVENT],
            (unsigned long long) st->all[SLC_BINLOG_ALL_XA],
            (unsigned long long) st->all[SLC_BINLOG_ALL_TABLES],
            (unsigned long long) st->connects,
            (unsigned long long) st->errors,
            (unsigned long long) st->lost_ms,
            e[0] ? " last_error=" : "", e);
    }
}
