/*
 * The cache's admin command (slc_cache_admin.h).
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_cache.h"
#include "slc_cache_admin.h"
#include "slc_cache_store.h"

static int
slc_cache_admin_usage(slc_metrics_t *out)
{
    slc_metrics_printf(out, "error: usage: cache flush [zone NAME | table "
        "DB.TABLE | rule NAME]\n");
    return SLC_ERROR;
}

static int
slc_cache_admin_flush(slc_cycle_t *cycle, const slc_admin_req_t *req,
    slc_metrics_t *out)
{
    const char *what = req->argc > req->first ? req->argv[req->first] : "";
    const char *name = req->argc == req->first + 2
                       ? req->argv[req->first + 1] : NULL;
    uint64_t    now = slc_time_ms() + 1;    /* after what it answers */
    unsigned    n = 0;
    char        clean[200];
    char        rkey[SLC_SQL_RULE_NAME_MAX + 8];

    if (req->argc != req->first && name == NULL) {
        return slc_cache_admin_usage(out);
    }
    if (name != NULL && strcmp(what, "zone") != 0
        && strcmp(what, "rule") != 0
        && (strcmp(what, "table") != 0 || strchr(name, '.') == NULL))
    {
        return slc_cache_admin_usage(out);
    }
    if (name != NULL && what[0] == 'r') {
        if (strlen(name) >= SLC_SQL_RULE_NAME_MAX) {
            return slc_cache_admin_usage(out);
        }
        name = slc_cache_rule_key(rkey, name) > 0 ? rkey : name;
    }
    for (slc_cache_zone_t *z = slc_cache_zones(cycle); z != NULL;
         z = z->next)
    {
        if (z->cache == NULL
            || (name != NULL && what[0] == 'z' && strcmp(z->name, name) != 0))
        {
            continue;
        }
        if (name != NULL && (what[0] == 't' || what[0] == 'r')) {
            slc_cache_invalidate(z->cache, name, strlen(name), now);
        } else {
            slc_cache_invalidate_all(z->cache, now);
        }
        n++;
    }
    slc_admin_clean(clean, sizeof(clean), name == rkey ? rkey + 6
                                          : name != NULL ? name : "");
    if (n == 0 && name != NULL && what[0] == 'z') {
        slc_metrics_printf(out, "error: no cache zone \"%s\"\n", clean);
        return SLC_ERROR;
    }
    slc_log(SLC_LOG_NOTICE, "admin: uid %u on %s: cache flush %s%s%s (%u "
        "zone%s)", (unsigned) req->uid, req->socket, name != NULL ? what
        : "", name != NULL ? " " : "", clean, n, n == 1 ? "" : "s");
    slc_metrics_printf(out, "flushed: %u zone%s\n", n, n == 1 ? "" : "s");
    return SLC_OK;
}

const slc_admin_command_t slc_cache_admin_commands[] = {
    { .name = "cache flush", .level = SLC_ADMIN_OPERATOR,
      .usage = "[zone NAME | table DB.TABLE | rule NAME]",
      .help = "make the entries stale: all, a zone's, a table's, those "
              "stored under a rule",
      .run = slc_cache_admin_flush },
    { .name = NULL }
};
