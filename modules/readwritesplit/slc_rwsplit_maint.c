/*
 * readwritesplit and the admin's maintenance (slc_router_t.maint): a
 * replica backend on a server an admin disabled is closed once the
 * session is at rest, unless it runs the session's READ ONLY transaction
 * (closed once that ends).  Its reads went elsewhere from the moment the
 * server was drained or disabled (slc_upstream_usable).
 */

#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_backend.h"
#include "slc_mysql_session.h"
#include "slc_mysql_upstream_admin.h"
#include "slc_rwsplit.h"

int
slc_rwsplit_maint(slc_session_t *s, int close)
{
    slc_rwsplit_ctx_t *rc = s->router_data;
    int                left = 0;

    for (unsigned i = 0; rc != NULL && i < rc->nreplicas; ) {
        slc_backend_t *b = rc->replica[i];

        if (!slc_upstream_in_maint(b->server)) {
            i++;
            continue;
        }
        if (!close || slc_mysql_track_in_trans(&b->track)
            || !slc_mysql_track_idle(&b->track))
        {
            left = 1;
            i++;
            continue;
        }
        slc_log(SLC_LOG_INFO, "*%llu replica backend %s closed: its server "
            "is in maintenance", (unsigned long long) s->id, b->server->name);
        slc_rwsplit_drop_replica(rc, b);    /* moves the last one to i */
    }
    return left;
}
