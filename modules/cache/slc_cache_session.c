/*
 * The cache filter's view of the session's surroundings (its context:
 * slc_cache_session.h): what the server's globals say (the schema
 * catalog's facts), how a statement reads under the session's sql_mode,
 * the isolation level it runs under and what it leaves to the next, what
 * the verdict knows of the session, the statement's rule, and the scratch
 * the filter's parts share within one hook call.  The filter's hooks
 * (slc_cache_filter.c), its prepared statements (slc_cache_ps.c), what a
 * write invalidates and how a read is answered stand on it.
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_mysql_proto.h"
#include "slc_mysql_session.h"
#include "slc_cache_session.h"


/* --- scratch ------------------------------------------------------------ */

/* 8 KiB each that a statement must not allocate: a worker is single
   threaded, and each is used within one hook call. */
static slc_sql_keys_t     slc_cache_session_keys_buf;
static slc_catalog_names_t  slc_cache_session_names_buf;

slc_sql_keys_t *
slc_cache_session_keys(void)
{
    return &slc_cache_session_keys_buf;
}

slc_catalog_names_t *
slc_cache_session_names(void)
{
    slc_cache_session_names_buf.n = 0;
    slc_cache_session_names_buf.all = 0;
    slc_cache_session_names_buf.flags = 0;
    return &slc_cache_session_names_buf;
}


/* --- the server's globals, the sql_mode --------------------------------- */

/*
 * What the server's globals say, from the schema catalog, looked at once
 * per millisecond of the worker's loop (a hit must not pay for it).
 * While it is not ready (before its first load, a moment after DDL
 * through the proxy, blind) nothing is known: the server's default
 * isolation may be READ UNCOMMITTED (so a session that did not set its
 * own gets no hit), and its sql_mode may have ANSI_QUOTES.
 */
static const slc_catalog_facts_t *
slc_cache_session_facts(slc_cache_ctx_t *cc)
{
    static const slc_catalog_facts_t none = { .ready = 0 };

    if (cc->catalog == NULL) {
        return &none;
    }
    if (cc->facts_at != slc_loop->now) {
        if (slc_catalog_facts(cc->catalog, &cc->facts) != SLC_OK) {
            cc->facts.ready = 0;
        }
        cc->facts_at = slc_loop->now;
    }
    return &cc->facts;
}

static int
slc_cache_session_global_ru(slc_cache_ctx_t *cc)
{
    const slc_catalog_facts_t *f = slc_cache_session_facts(cc);

    return !f->ready || f->read_uncommitted;
}

int
slc_cache_session_ansi(slc_cache_ctx_t *cc)
{
    const slc_catalog_facts_t *f;

    if (cc->vars.ansi != SLC_CACHE_ANSI_GLOBAL) {
        return cc->vars.ansi == SLC_CACHE_ANSI_ON;
    }
    f = slc_cache_session_facts(cc);
    return !f->ready || f->ansi_quotes;
}

const slc_sql_info_t *
slc_cache_session_classify(slc_cache_ctx_t *cc, const slc_cmd_t *c)
{
    static const slc_sql_info_t  unknown = {
        .kind = SLC_SQL_UNKNOWN, .flags = SLC_SQL_F_UNTERMINATED
    };
    const slc_sql_info_t        *si = slc_cmd_classify(cc->s, c);

    if ((si->flags & SLC_SQL_F_AMBIGUOUS) && slc_cache_session_ansi(cc)) {
        return &unknown;    /* under ANSI_QUOTES the text may read otherwise */
    }
    return si;
}


/* --- isolation ---------------------------------------------------------- */

/*
 * The isolation level a statement runs under, from the session's status
 * when it was sent: the open transaction's, else the next transaction's
 * (SET TRANSACTION) or the session's.  The server's default is READ
 * UNCOMMITTED only when its @@global.tx_isolation says so.
 */
static uint8_t
slc_cache_session_iso(slc_cache_ctx_t *cc, unsigned status)
{
    uint8_t iso;

    if (status & SLC_SERVER_STATUS_IN_TRANS) {
        iso = cc->trx_iso != SLC_CACHE_ISO_NONE ? cc->trx_iso
                                                : SLC_CACHE_ISO_UNKNOWN;
    } else {
        iso = cc->vars.iso_next != SLC_CACHE_ISO_NONE ? cc->vars.iso_next
                                                      : cc->vars.iso;
    }
    if (iso == SLC_CACHE_ISO_GLOBAL) {
        iso = slc_cache_session_global_ru(cc) ? SLC_CACHE_ISO_RU
                                              : SLC_CACHE_ISO_RR;
    }
    return iso;
}

uint8_t
slc_cache_session_iso_use(const slc_sql_info_t *si)
{
    if (si->flags & (SLC_SQL_F_MULTI | SLC_SQL_F_STORED_FUNC
                     | SLC_SQL_F_UNTERMINATED))
    {
        return SLC_CACHE_ISO_USE_MAYBE;
    }
    switch (si->kind) {
    case SLC_SQL_SET: case SLC_SQL_USE: case SLC_SQL_EMPTY:
        return SLC_CACHE_ISO_USE_NOT;
    case SLC_SQL_SELECT: case SLC_SQL_DO:
        return si->ntables == 0 ? SLC_CACHE_ISO_USE_NOT
                                : SLC_CACHE_ISO_USE_YES;
    case SLC_SQL_INSERT: case SLC_SQL_UPDATE: case SLC_SQL_DELETE:
    case SLC_SQL_REPLACE:
        return SLC_CACHE_ISO_USE_YES;
    default:
        return SLC_CACHE_ISO_USE_MAYBE;
    }
}

/*
 * A transaction that began runs at the level it began with (SET
 * TRANSACTION's is then spent), and ends with it; outside one, a
 * statement that read or wrote a table spent SET TRANSACTION's level, and
 * one that may have (or failed doing so) leaves it not known until one
 * surely did.
 */
void
slc_cache_session_iso_after(slc_cache_ctx_t *cc, int ok)
{
    slc_cache_vars_t *v = &cc->vars;
    unsigned          was = cc->status_before & SLC_SERVER_STATUS_IN_TRANS;
    unsigned          is = slc_cmd_status(cc->s) & SLC_SERVER_STATUS_IN_TRANS;

    if (!was && is) {
        cc->trx_iso = v->iso_next != SLC_CACHE_ISO_NONE ? v->iso_next
                                                        : v->iso;
        v->iso_next = SLC_CACHE_ISO_NONE;
    } else if (was && !is) {
        cc->trx_iso = SLC_CACHE_ISO_NONE;
        v->iso_next = SLC_CACHE_ISO_NONE;
    } else if (!is && v->iso_next != SLC_CACHE_ISO_NONE
               && cc->iso_use != SLC_CACHE_ISO_USE_NOT)
    {
        v->iso_next = ok && cc->iso_use == SLC_CACHE_ISO_USE_YES
                      ? SLC_CACHE_ISO_NONE : SLC_CACHE_ISO_UNKNOWN;
    }
}


/* --- the verdict's view, the rule --------------------------------------- */

void
slc_cache_session_of(slc_cache_ctx_t *cc, const char *db,
    slc_cache_session_t *ss)
{
    uint8_t iso = slc_cache_session_iso(cc, cc->status_before);

    *ss = (slc_cache_session_t) {
        .db = db, .db_len = strlen(db),
        .status = cc->status_before, .temp_tables = cc->temp,
        .read_committed = iso == SLC_CACHE_ISO_RC,
        .dirty = iso == SLC_CACHE_ISO_RU || iso == SLC_CACHE_ISO_UNKNOWN,
    };
}

int
slc_cache_session_rule(slc_cache_ctx_t *cc, const uint8_t *q, size_t n,
    const slc_sql_keys_t *keys)
{
    const slc_sql_rule_verdict_t *cv = slc_cmd_rules(cc->s);
    slc_sql_rule_verdict_t        v;

    if (cc->s->srv->rules == NULL) {
        return -1;
    }
    if (cv != NULL && cv->q == q && cv->n == n) {
        return cv->cache;               /* the command's own, made once */
    }
    slc_rules_eval(cc->s, q, n, (slc_cmd_status(cc->s)
                   & SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0, keys, &v);
    return v.cache;
}
