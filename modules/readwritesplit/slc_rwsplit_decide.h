#ifndef SLC_RWSPLIT_DECIDE_H
#define SLC_RWSPLIT_DECIDE_H

#include "slc_core.h"
#include "slc_sql_classify.h"

/*
 * Where a statement goes (slc_rwsplit_decide.c): one decision computed
 * from facts alone, the statement's class and the session's state, with
 * no backend, no I/O and no state changed; slc_rwsplit_route carries it out.
 * Pure: the unit test (t/unit/test_rwsplit_decide.c) walks its table.
 */

/* Each fact 0 or 1 (bytes, not bits: built per statement). */
typedef struct {
    slc_sql_route_t route;          /* slc_sql_route() of its class */
    uint8_t         hint_replica;   /* a hint sends it to a replica */
    uint8_t         dml;            /* INSERT, UPDATE, DELETE, REPLACE,
                                       LOAD DATA that writes */
    uint8_t         reads_uservar;  /* SLC_SQL_F_USER_VAR_READ */
    uint8_t         ro_trx_begin;   /* it begins a READ ONLY transaction */
    uint8_t         in_ro_trx;      /* a READ ONLY transaction runs on a
                                       replica */
    uint8_t         temp;           /* the session made temporary tables
                                       (on the primary) */
    uint8_t         uservars;       /* user variables were assigned on the
                                       primary by what no replica got */
    uint8_t         primary_lost;   /* no primary backend now */
} slc_rwsplit_facts_t;

typedef enum {
    SLC_RWSPLIT_GO_PRIMARY = 0,     /* the session's own backend, as a write:
                                   its state effects, the causal position */
    SLC_RWSPLIT_GO_PRIMARY_GONE,    /* a write with the primary lost: wait for
                                   one being reopened, or ERR */
    SLC_RWSPLIT_GO_OWN,             /* the session's own backend, a read that
                                   must see what only it has */
    SLC_RWSPLIT_GO_REPLICA,         /* a replica that has what the session must
                                   see (causal reads), else the own */
    SLC_RWSPLIT_GO_REPLICA_KEEP,    /* the same, and kept to be retried on the
                                   primary if the replica fails before
                                   answering (an autocommit read) */
    SLC_RWSPLIT_GO_REPLICA_HINT,    /* a replica as the hint says, whatever the
                                   session's state; the own if none */
    SLC_RWSPLIT_GO_ALL,             /* a session command: the primary, then
                                   every backend */
    SLC_RWSPLIT_GO_LAST,            /* where the previous statement ran */
    SLC_RWSPLIT_GO_RO_TRX,          /* the READ ONLY transaction's replica, to
                                   its end */
    SLC_RWSPLIT_GO_RO_WRITE         /* a write in it: ERR 1792, as the server
                                   would answer */
} slc_rwsplit_go_t;

/*
 * The statement's facts, of its class: the route (slc_sql_route, with
 * in_trx: the session is in a transaction on its own backend, and
 * in_ro_trx), and what it does; the session's own (temp, uservars,
 * primary_lost) are left 0 for the caller.
 */
void          slc_rwsplit_facts_of(const slc_sql_info_t *si, int in_trx,
    int in_ro_trx, slc_rwsplit_facts_t *f);
slc_rwsplit_go_t  slc_rwsplit_decide(const slc_rwsplit_facts_t *f);
const char   *slc_rwsplit_go_name(slc_rwsplit_go_t go);

#endif /* SLC_RWSPLIT_DECIDE_H */
