#ifndef SLC_RWSPLIT_H
#define SLC_RWSPLIT_H

/*
 * readwritesplit's configuration and session context, shared by the
 * router's files: slc_rwsplit.c (backends and routing), slc_rwsplit_hist.c
 * (the session history).
 */

#include "slc_core.h"
#include "slc_mysql_classify.h"

typedef struct slc_backend_s  slc_backend_t;
typedef struct slc_module_s   slc_module_t;
typedef struct slc_session_s  slc_session_t;

#define SLC_RWS_HIST_LEN     1024   /* a longer session command: not kept,
                                       the session stops using replicas */
#define SLC_RWS_KEY_LEN      72
#define SLC_RWS_MAX_REPLICAS 2      /* what a handover can carry */
#define SLC_RWS_TAG_REPLICA  1

/* master_failure_mode */
#define SLC_RWS_FAIL_INSTANTLY  0   /* the session ends with its primary */
#define SLC_RWS_FAIL_ON_WRITE   1   /* reads go on, a write gets an ERR,
                                       the primary is reopened when back */

/* Its conf, at the mysql and server levels (a server inherits it). */
typedef struct {
    long long  session_history_max;
    long long  max_replica_connections;
    int        retry_failed_reads;
    int        master_failure_mode;
} slc_rws_conf_t;

typedef struct {
    char    key[SLC_RWS_KEY_LEN];   /* "" or what a later one replaces */
    char   *text;
} slc_rws_hist_t;

typedef struct {
    const slc_rws_conf_t *conf;
    slc_backend_t  *replica[SLC_RWS_MAX_REPLICAS];
    unsigned        nreplicas;
    slc_backend_t  *last;           /* where the last statement ran */
    unsigned        copies;         /* copies and replays unanswered */
    uint64_t        errs_seen;
    unsigned        wrote:1;        /* read-your-writes, first step */
    unsigned        temp:1;         /* created a temporary table */
    unsigned        primary_only:1; /* history lost or too long */
    unsigned        restored:1;     /* the history came with a handover */
    /* master_failure_mode fail_on_write: the primary backend was lost, a
       replica backend is the session's own meanwhile, and `primary` is
       the new primary backend being opened (tried every second) */
    unsigned        primary_lost:1;
    slc_backend_t  *primary;
    uint64_t        primary_next_try;   /* ms */
    /* a read sent to a replica, kept to be sent again elsewhere if that
       replica fails before answering (retry_failed_reads) */
    uint8_t        *retry;
    size_t          retry_len;
    slc_backend_t  *retry_on;
    unsigned        nhist;
    unsigned        hist_max;
    slc_rws_hist_t *hist;
    unsigned        user_gen;       /* s->user_gen the backends are for */
} slc_rws_ctx_t;

extern slc_module_t slc_readwritesplit_module;

/* slc_rwsplit.c */
int    slc_rws_replay(slc_rws_ctx_t *rc, slc_backend_t *b);
void   slc_rws_adopt_replica(slc_rws_ctx_t *rc, slc_backend_t *b);

/* slc_rwsplit_primary.c */
slc_backend_t *slc_rws_own_lost(slc_session_t *s, const char *why);
void   slc_rws_primary_check(slc_session_t *s, slc_rws_ctx_t *rc);
slc_backend_t *slc_rws_primary_gone(slc_session_t *s, slc_rws_ctx_t *rc);

/* slc_rwsplit_hist.c */
void   slc_rws_hist_key(const uint8_t *q, size_t n, slc_sql_kind_t kind,
    char key[SLC_RWS_KEY_LEN], int *drop);
const char *slc_rws_hist_add(slc_rws_ctx_t *rc, const uint8_t *q,
    size_t n, slc_sql_kind_t kind);
void   slc_rws_hist_clear(slc_rws_ctx_t *rc);
size_t slc_rws_hist_save(const slc_rws_ctx_t *rc, uint8_t *buf, size_t cap);
int    slc_rws_hist_restore(slc_rws_ctx_t *rc, const uint8_t *p, size_t len);

#endif /* SLC_RWSPLIT_H */
