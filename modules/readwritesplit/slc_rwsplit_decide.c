/*
 * readwritesplit's routing decision (contract in slc_rwsplit_decide.h).
 */

#include "slc_core.h"
#include "slc_rwsplit_decide.h"

/* A write the server refuses in a read-only transaction. */
static int
slc_rwsplit_is_dml(const slc_sql_info_t *si)
{
    switch (si->kind) {
    case SLC_SQL_INSERT: case SLC_SQL_UPDATE: case SLC_SQL_DELETE:
    case SLC_SQL_REPLACE:
        return 1;
    case SLC_SQL_LOAD:
        return (si->flags & SLC_SQL_F_WRITE) != 0;
    default:
        return 0;
    }
}

void
slc_rwsplit_facts_of(const slc_sql_info_t *si, int in_trx, int in_ro_trx,
    slc_rwsplit_facts_t *f)
{
    *f = (slc_rwsplit_facts_t) {
        .route = slc_sql_route(si, in_trx && !in_ro_trx, in_ro_trx),
        .hint_replica = si->hint == SLC_SQL_HINT_REPLICA,
        .dml = slc_rwsplit_is_dml(si),
        .reads_uservar = (si->flags & SLC_SQL_F_USER_VAR_READ) != 0,
        .ro_trx_begin = (si->flags & SLC_SQL_F_READ_ONLY_TRX) != 0,
        .in_ro_trx = in_ro_trx != 0,
    };
}

/* A read: a replica, unless the session's state says only its own
   backend can answer it. */
static slc_rwsplit_go_t
slc_rwsplit_decide_read(const slc_rwsplit_facts_t *f)
{
    if (f->hint_replica) {
        return SLC_RWSPLIT_GO_REPLICA_HINT;
    }
    if (f->temp || (f->uservars && f->reads_uservar)) {
        return SLC_RWSPLIT_GO_OWN;
    }
    return f->ro_trx_begin ? SLC_RWSPLIT_GO_REPLICA
                           : SLC_RWSPLIT_GO_REPLICA_KEEP;
}

slc_rwsplit_go_t
slc_rwsplit_decide(const slc_rwsplit_facts_t *f)
{
    if (f->in_ro_trx && f->route != SLC_SQL_TO_ALL) {
        return f->dml ? SLC_RWSPLIT_GO_RO_WRITE : SLC_RWSPLIT_GO_RO_TRX;
    }
    switch (f->route) {
    case SLC_SQL_TO_ALL:
        return SLC_RWSPLIT_GO_ALL;
    case SLC_SQL_TO_LAST:
        return SLC_RWSPLIT_GO_LAST;
    case SLC_SQL_TO_REPLICA:
        return slc_rwsplit_decide_read(f);
    default:
        return f->primary_lost ? SLC_RWSPLIT_GO_PRIMARY_GONE
                               : SLC_RWSPLIT_GO_PRIMARY;
    }
}

const char *
slc_rwsplit_go_name(slc_rwsplit_go_t go)
{
    static const char *const names[] = {
        "primary", "primary gone", "own", "replica", "replica, kept",
        "replica (hint)", "all", "last", "read-only transaction",
        "write in a read-only transaction",
    };

    return (size_t) go < slc_nelems(names) ? names[go] : "?";
}
