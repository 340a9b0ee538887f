/*
 * The server {} blocks' traffic counters (slc_mysql_traffic.h).
 */

#include "slc_core.h"
#include "slc_listen.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_proto.h"
#include "slc_mysql_session.h"
#include "slc_mysql_traffic.h"
#include "slc_shm.h"
#include "slc_worker.h"

/* This worker's: its rows (by block column) and its sessions' cells. */
static slc_traffic_t  *slc_traffic_mine;
static uint32_t       *slc_traffic_cur;
static slc_traffic_zone_t *slc_traffic_zone;

size_t
slc_traffic_zone_size(void)
{
    return sizeof(slc_traffic_zone_t);
}

/* The block's name: its first `listen` in the file (the cycle keeps
   them last first). */
static const char *
slc_traffic_name(const slc_cycle_t *cycle, const slc_mysql_srv_t *srv)
{
    const char *name = "";

    for (const slc_listen_t *l = cycle->listens; l != NULL; l = l->next) {
        if (l->srv == srv) {
            name = l->text;
        }
    }
    return name;
}

/* Does the block have a rule called name? */
static int
slc_traffic_rule_named(const slc_mysql_srv_t *srv, const char *name)
{
    for (unsigned i = 0; srv->rules != NULL && i < srv->rules->n; i++) {
        if (strcmp(srv->rules->rule[i].name, name) == 0) {
            return 1;
        }
    }
    return 0;
}

/*
 * The block's rules to their counters, by name: a name counted before
 * keeps its slot, a new one takes a free slot, or the slot of a name the
 * block has no more (whose counts start over).  There always is one: a
 * block has at most SLC_SQL_RULES_MAX rules, and the new name holds none.
 */
static void
slc_traffic_rules_bind(slc_traffic_zone_t *t, slc_mysql_srv_t *srv)
{
    char (*names)[SLC_SQL_RULE_NAME_MAX] = t->rule_names[srv->traffic_col];
    slc_rule_count_t *cnt = t->rules[srv->traffic_col];

    for (unsigned i = 0; srv->rules != NULL && i < srv->rules->n; i++) {
        slc_sql_rule_t *r = &srv->rules->rule[i];
        char           *slot;

        slot = slc_shm_slot_claim(names, SLC_SQL_RULES_MAX,
            SLC_SQL_RULE_NAME_MAX, SLC_SQL_RULE_NAME_MAX, r->name);
        for (unsigned k = 0; slot == NULL && k < SLC_SQL_RULES_MAX; k++) {
            if (!slc_traffic_rule_named(srv, names[k])) {
                memset(&cnt[k], 0, sizeof(cnt[k]));
                strlcpy(names[k], r->name, SLC_SQL_RULE_NAME_MAX);
                slot = names[k];
            }
        }
        r->slot = (uint8_t) ((slot - names[0]) / SLC_SQL_RULE_NAME_MAX);
    }
}

int
slc_traffic_attach(slc_shm_zone_t *z, slc_cycle_t *cycle, char *err,
    size_t errlen)
{
    slc_traffic_zone_t *t = z->addr;
    slc_mysql_conf_t   *mc = slc_mysql_conf(cycle);
    char               *slot;

    for (slc_mysql_srv_t *srv = mc->servers; srv != NULL; srv = srv->next) {
        slot = slc_shm_slot_claim(t->names, SLC_TRAFFIC_BLOCKS,
            SLC_TRAFFIC_NAME, SLC_TRAFFIC_NAME, slc_traffic_name(cycle, srv));
        if (slot == NULL) {
            snprintf(err, errlen, "%s:%u: more than %d listeners counted "
                "since the start (restart sluice to count new ones)",
                srv->file, srv->line, SLC_TRAFFIC_BLOCKS);
            return SLC_ERROR;
        }
        srv->traffic_col = (unsigned) ((slot - t->names[0]) /
                                       SLC_TRAFFIC_NAME);
        slc_traffic_rules_bind(t, srv);
    }
    return SLC_OK;
}

void
slc_traffic_bind(slc_cycle_t *cycle, unsigned slot, unsigned proc)
{
    slc_mysql_conf_t   *mc = slc_mysql_conf(cycle);
    slc_traffic_zone_t *t;
    uint32_t            n;

    if (mc == NULL || mc->traffic_zone == NULL || slot >= SLC_TRAFFIC_SLOTS
        || proc >= SLC_PROC_MAX)
    {
        return;
    }
    t = mc->traffic_zone->addr;
    slc_traffic_zone = t;
    slc_traffic_mine = t->rows[slot];
    slc_traffic_cur = t->cur[proc];
    __atomic_store_n(&t->slot_of[proc], slot + 1, __ATOMIC_RELAXED);
    n = __atomic_load_n(&t->nprocs, __ATOMIC_RELAXED);
    while (n < proc + 1
           && !__atomic_compare_exchange_n(&t->nprocs, &n, proc + 1, 0,
                                           __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    {
        /* n holds the newer value: try again while it is lower */
    }
}

void
slc_traffic_reap(slc_cycle_t *cycle, unsigned proc)
{
    slc_mysql_conf_t   *mc = slc_mysql_conf(cycle);
    slc_traffic_zone_t *t;

    if (mc == NULL || mc->traffic_zone == NULL
        || mc->traffic_zone->addr == NULL || proc >= SLC_PROC_MAX)
    {
        return;
    }
    t = mc->traffic_zone->addr;
    __atomic_store_n(&t->slot_of[proc], 0, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < SLC_TRAFFIC_BLOCKS; i++) {
        __atomic_store_n(&t->cur[proc][i], 0, __ATOMIC_RELAXED);
    }
}

slc_rule_count_t *
slc_traffic_rules(const slc_mysql_srv_t *srv)
{
    return slc_traffic_zone != NULL ? slc_traffic_zone->rules[srv->traffic_col]
                                    : NULL;
}

slc_traffic_t *
slc_traffic_row(const slc_mysql_srv_t *srv)
{
    return slc_traffic_mine != NULL ? &slc_traffic_mine[srv->traffic_col]
                                    : NULL;
}

void
slc_traffic_session(const slc_mysql_srv_t *srv, int accepted, int delta)
{
    uint32_t *cur;

    if (slc_traffic_mine == NULL) {
        return;
    }
    if (accepted) {
        slc_traffic_add(&slc_traffic_mine[srv->traffic_col].accepted, 1);
    }
    cur = &slc_traffic_cur[srv->traffic_col];
    __atomic_store_n(cur, *cur + (uint32_t) delta, __ATOMIC_RELAXED);
}

unsigned
slc_traffic_cmd_kind(uint8_t com)
{
    switch (com) {
    case SLC_COM_QUERY:             return SLC_CMDK_QUERY;
    case SLC_COM_STMT_PREPARE:      return SLC_CMDK_PREPARE;
    case SLC_COM_STMT_EXECUTE:
    case SLC_COM_STMT_BULK_EXECUTE: return SLC_CMDK_EXECUTE;
    case SLC_COM_STMT_FETCH:        return SLC_CMDK_FETCH;
    case SLC_COM_STMT_CLOSE:
    case SLC_COM_STMT_RESET:        return SLC_CMDK_CLOSE;
    case SLC_COM_PING:              return SLC_CMDK_PING;
    case SLC_COM_INIT_DB:           return SLC_CMDK_INIT_DB;
    case SLC_COM_CHANGE_USER:       return SLC_CMDK_CHANGE_USER;
    case SLC_COM_RESET_CONNECTION:  return SLC_CMDK_RESET;
    case SLC_COM_QUIT:              return SLC_CMDK_QUIT;
    default:                        return SLC_CMDK_OTHER;
    }
}

void
slc_traffic_command(slc_session_t *s, uint8_t com)
{
    if (s->traffic == NULL) {
        return;
    }
    slc_traffic_add(&s->traffic->commands[slc_traffic_cmd_kind(com)], 1);
    if (s->started_us == 0) {
        s->started_us = slc_loop->now_us;
    }
}

void
slc_traffic_on_command(void *data, uint8_t com)
{
    slc_traffic_command(data, com);
}

static unsigned
slc_traffic_route(const slc_backend_t *b)
{
    return b == NULL ? SLC_ROUTE_CACHE
           : b->role == SLC_ROLE_PRIMARY ? SLC_ROUTE_PRIMARY
           : b->role == SLC_ROLE_REPLICA ? SLC_ROUTE_REPLICA
           : SLC_ROUTE_ANY;
}

void
slc_traffic_answered(slc_session_t *s, const slc_backend_t *b, uint64_t n,
    uint64_t errs, int more)
{
    slc_latency_t *h;
    uint64_t       us;
    unsigned       bucket;

    if (s->traffic == NULL || s->started_us == 0) {
        return;
    }
    us = slc_loop->now_us - s->started_us;
    bucket = slc_latency_bucket(us);
    h = &s->traffic->duration[slc_traffic_route(b)];
    for (uint64_t i = 0; i < n; i++) {
        slc_latency_observe_shared(h, bucket, us);
        if (b != NULL && b->server->stats != NULL) {
            slc_latency_observe_shared(&b->server->stats->response, bucket,
                us);
        }
    }
    if (errs > 0) {
        slc_traffic_add(&s->traffic->errors[SLC_ERRK_SERVER], errs);
    }
    s->started_us = more ? slc_loop->now_us : 0;
}
