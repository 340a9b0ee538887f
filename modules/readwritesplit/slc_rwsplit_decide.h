#ifndef SLC_RWSPLIT_DECIDE_H
#define SLC_RWSPLIT_DECIDE_H

#include "slc_core.h"
#include "slc_mysql_classify.h"

/*
 * Where a statement goes (slc_rwsplit_decide.c): one decision computed
 * from facts alone, the statement's class and the session's state, with
 * no backend, no I/O and no state changed; slc_rws_route carries it out.
 * Pure: the unit test (t/unit/test_rwsplit_decide.c) walks its table.
 */

typedef struct {
    slc_sql_route_t route;          /* slc_sql_route() of its class */
    unsigned        hint_replica:1; /* a hint sends it to a replica */
    unsigned        dml:1;          /* INSERT, UPDATE, DELETE, REPLACE,
                                       LOAD DATA that writes) */
    unsigned        reads_uservar:1;    /* SLC_SQL_F_USER_VAR_READ */
    unsigned        ro_trx_begin:1; /* it begins a READ ONLY transaction */
    unsigned        in_ro_trx:1;    /* a READ ONLY transaction runs on a
                                       replica */
    unsigned        temp:1;         /* the session made temporary tables
                                       (on the primary) */
    unsigned        uservars:1;     /* user variables were assigned on the
                                       primary by what no replica got */
    unsigned        primary_lost:1; /* no primary backend now */
} slc_rws_facts_t;

typedef enum {
    SLC_RWS_GO_PRIMARY = 0,     /* the session's own backend, as a write:
                                   its state effects, the causal position */
    SLC_RWS_GO_PRIMARY_GONE,    /* a write with the primary lost: wait for
                                   one being reopened, or ERR */
    SLC_RWS_GO_OWN,             /* the session's own backend, a read that
                                   must see what only it has */
    SLC_RWS_GO_REPLICA,         /* a replica that has what the session must
                                   see (causal reads), else the own */
    SLC_RWS_GO_REPLICA_KEEP,    /* the same, and kept to be retried on the
                                   primary if the replica fails before
                                   answering (an autocommit read) */
    SLC_RWS_GO_REPLICA_HINT,    /* a replica as the hint says, whatever the
                                   session's state; the own if none */
    SLC_RWS_GO_ALL,             /* a session command: the primary, then
                                   every backend */
    SLC_RWS_GO_LAST,            /* where the previous statement ran */
    SLC_RWS_GO_RO_TRX,          /* the READ ONLY transaction's replica, to
                                   its end */
    SLC_RWS_GO_RO_WRITE         /* a write in it: ERR 1792, as the server
                                   would answer */
} slc_rws_go_t;

/*
 * The statement's facts, of its class: the route (slc_sql_route, with
 * in_trx: the session is in a transaction on its own backend, and
 * in_ro_trx), and what it does; the session's own (temp, uservars,
 * primary_lost) are left 0 for the caller.
 */
void          slc_rws_facts_of(const slc_sql_info_t *si, int in_trx,
    int in_ro_trx, slc_rws_facts_t *f);
slc_rws_go_t  slc_rws_decide(const slc_rws_facts_t *f);
const char   *slc_rws_go_name(slc_rws_go_t go);

#endif /* SLC_RWSPLIT_DECIDE_H */
