#ifndef SLC_RWSPLIT_H
#define SLC_RWSPLIT_H

/*
 * readwritesplit's session context, shared by the router's files
 * (slc_rwsplit.c: backends and routing; more files join it as the router
 * grows: prepared statements, causal reads).
 */

#include "slc_core.h"

typedef struct slc_backend_s  slc_backend_t;

#define SLC_RWS_HIST_MAX   50       /* session_history_max, for now fixed */
#define SLC_RWS_HIST_LEN   1024     /* a longer session command: not kept,
                                       the session stops using replicas */
#define SLC_RWS_TAG_REPLICA  1

typedef struct {
    slc_backend_t  *replica;
    slc_backend_t  *last;           /* where the last statement ran */
    unsigned        copies;         /* copies and replays unanswered */
    uint64_t        errs_seen;
    unsigned        wrote:1;        /* read-your-writes, first step */
    unsigned        temp:1;         /* created a temporary table */
    unsigned        primary_only:1; /* history lost or too long */
    unsigned        nhist;
    char           *hist[SLC_RWS_HIST_MAX];
    unsigned        user_gen;       /* s->user_gen the backends are for */
} slc_rws_ctx_t;

#endif /* SLC_RWSPLIT_H */
