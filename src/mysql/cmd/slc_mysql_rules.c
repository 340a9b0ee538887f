/*
 * The query rules at work on a session's statements (slc_mysql_rules.h).
 */

#include "slc_core.h"
#include "slc_event.h"
#include "slc_log.h"
#include "slc_mysql_proto.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_rules.h"
#include "slc_mysql_session.h"
#include "slc_mysql_traffic.h"
#include "slc_sql_digest.h"

/* A worker's scratch: one statement at a time. */
static struct {
    slc_sql_info_t   si;
    slc_sql_keys_t   keys;
    char             digest[256];
    uint8_t         *out;           /* a buffer's worth, for rewrites */
    size_t           cap;
    slc_log_burst_t  failed_burst;
    /* each rule's refusals: one rule's do not hide another's */
    slc_log_burst_t  refused[SLC_TRAFFIC_BLOCKS][SLC_SQL_RULES_MAX];
} slc_rules_tmp;

const slc_sql_rule_t *
slc_rules_get(const slc_session_t *s, int i)
{
    return &s->srv->rules->rule[i];
}

static void
slc_rules_count(slc_session_t *s, const slc_sql_rule_verdict_t *v)
{
    slc_rule_count_t *rc = slc_traffic_rules(s->srv);
    unsigned          n = s->srv->rules->n;

    for (unsigned i = 0; rc != NULL && i < n; i++) {
        uint8_t slot = s->srv->rules->rule[i].slot;

        if (v->matched & (1ull << i)) {
            slc_traffic_add(&rc[slot].matches, 1);
        }
        if (v->failed & (1ull << i)) {
            slc_traffic_add(&rc[slot].failures, 1);
        }
    }
    if (v->failed != 0) {
        unsigned held;

        if (slc_log_burst(&slc_rules_tmp.failed_burst, slc_loop->now,
                          &held))
        {
            slc_log(SLC_LOG_WARN, "session %llu: a rule's pattern hit the "
                "match limit (rule_match_limit %u; %u more since the last "
                "line)", (unsigned long long) s->id,
                s->srv->rules->match_limit, held);
        }
    }
}

void
slc_rules_refused(slc_session_t *s, int i, const char *why)
{
    const slc_sql_rule_t *r = slc_rules_get(s, i);
    slc_rule_count_t     *rc = slc_traffic_rules(s->srv);
    unsigned              held;

    if (rc != NULL) {
        slc_traffic_add(&rc[r->slot].refused, 1);
    }
    if (slc_log_burst(&slc_rules_tmp.refused[s->srv->traffic_col][r->slot],
                      slc_loop->now, &held))
    {
        slc_log(SLC_LOG_WARN, "session %llu: rule \"%s\" not followed: "
            "%s (%u more since the last line)", (unsigned long long) s->id,
            r->name, why, held);
    }
}

static void
slc_rules_run(slc_session_t *s, const uint8_t *q, size_t n, int nobs,
    const slc_sql_keys_t *keys, const char *digest,
    const slc_sql_info_t *si, slc_sql_rule_verdict_t *v)
{
    const slc_sql_rules_t  *rl = s->srv->rules;
    slc_sql_rule_subject_t  sub = {
        .q = q, .len = n, .user = s->user, .db = s->has_db ? s->db : "",
        .keys = keys, .digest = "",
    };

    if (digest != NULL) {
        sub.digest = digest;
        sub.digest_len = strlen(digest);
    } else if (rl->needs & SLC_RULE_NEEDS(SLC_RULE_ON_DIGEST)) {
        slc_sql_digest_t d;

        slc_sql_digest(q, n, nobs, slc_rules_tmp.digest,
            sizeof(slc_rules_tmp.digest), &d);
        sub.digest = slc_rules_tmp.digest;
        sub.digest_len = d.len;
    }
    if (keys == NULL && (rl->needs & (SLC_RULE_NEEDS(SLC_RULE_ON_TABLE)
                                      | SLC_RULE_NEEDS(SLC_RULE_ON_SCHEMA))))
    {
        if (si == NULL) {
            (void) slc_sql_classify(q, n,
                nobs ? SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES : 0,
                &slc_rules_tmp.si);
            si = &slc_rules_tmp.si;
        }
        if (slc_sql_table_keys(q, si, sub.db,
                strlen(sub.db), &slc_rules_tmp.keys) != SLC_OK)
        {
            slc_rules_tmp.keys.n = 0;
        }
        sub.keys = &slc_rules_tmp.keys;
    }
    slc_sql_rules_eval(rl, &sub, v);
}

void
slc_rules_eval(slc_session_t *s, const uint8_t *q, size_t n, int nobs,
    const slc_sql_keys_t *keys, slc_sql_rule_verdict_t *v)
{
    slc_rules_run(s, q, n, nobs, keys, NULL, NULL, v);
}

/*
 * The held command's payload becomes cmd byte + p[0..m): the bytes after
 * it (a pipeline) move along; the buffer is compacted when the new one is
 * longer than its free tail.  SLC_ERROR when it cannot fit.
 */
static int
slc_rules_splice(slc_session_t *s, const uint8_t *p, size_t m)
{
    slc_buf_t *in = s->in;
    size_t     old = slc_mysql_le_get(in->pos, 3);
    size_t     nl = m + 1;
    size_t     used = slc_buf_len(in);
    uint8_t    seq = in->pos[3];

    if (nl >= SLC_MYSQL_MAX_PAYLOAD
        || used - old + nl > (size_t) (in->end - in->start))
    {
        return SLC_ERROR;
    }
    if (nl > old && (size_t) (in->end - in->last) < nl - old) {
        memmove(in->start, in->pos, used);
        in->pos = in->start;
        in->last = in->pos + used;
    }
    memmove(in->pos + SLC_MYSQL_HDR_LEN + nl,
            in->pos + SLC_MYSQL_HDR_LEN + old,
            used - SLC_MYSQL_HDR_LEN - old);
    in->last = in->pos + used - old + nl;
    memcpy(in->pos + SLC_MYSQL_HDR_LEN + 1, p, m);
    slc_mysql_hdr_write(in->pos, (uint32_t) nl, seq);
    return SLC_OK;
}

/* Rule i's rewrite of the held statement; SLC_DONE: refused, *err
   says what to answer. */
static int
slc_rules_rewrite(slc_session_t *s, int i, const slc_cmd_t *cmd,
    slc_rules_err_t *err)
{
    const slc_sql_rule_t *r = slc_rules_get(s, i);
    ssize_t               m = -1;

    if (slc_rules_tmp.out == NULL) {
        slc_rules_tmp.cap = slc_buf_size();
        slc_rules_tmp.out = malloc(slc_rules_tmp.cap);
    }
    if (slc_rules_tmp.out != NULL && cmd->avail == cmd->len) {
        m = slc_sql_rule_rewrite(s->srv->rules, r, cmd->payload + 1,
            cmd->avail - 1, slc_rules_tmp.out, slc_rules_tmp.cap);
    }
    if (m >= 0 && slc_rules_splice(s, slc_rules_tmp.out, (size_t) m)
                  == SLC_OK)
    {
        return SLC_OK;
    }
    slc_rules_refused(s, i, "the rewritten statement does not fit a "
        "buffer, or the statement did not");
    *err = (slc_rules_err_t) { 1105, "HY000", "the statement's rewrite by "
                               "a rule does not fit the proxy's buffer" };
    return SLC_DONE;
}

int
slc_rules_command(slc_session_t *s, slc_cmd_t *cmd, int nobs,
    const char *digest, const slc_sql_info_t *si,
    slc_sql_rule_verdict_t *v, slc_rules_err_t *err)
{
    *v = (slc_sql_rule_verdict_t) {
        .first = -1, .route = -1, .block = -1, .rewrite = -1, .cache = -1,
    };
    if (s->srv->rules == NULL || cmd->avail < 1
        || (cmd->command != SLC_COM_QUERY
            && cmd->command != SLC_COM_STMT_PREPARE))
    {
        return SLC_OK;
    }
    slc_rules_run(s, cmd->payload + 1, cmd->avail - 1, nobs, NULL, digest,
        si, v);
    if (v->first < 0 && v->failed == 0) {
        return SLC_OK;
    }
    slc_rules_count(s, v);
    if (v->block >= 0) {
        const slc_sql_rule_t *r = slc_rules_get(s, v->block);

        *err = (slc_rules_err_t) { r->code_err,
            r->code_err == 1148 ? "42000" : "HY000", r->msg };
        return SLC_DONE;
    }
    if (v->rewrite >= 0) {
        int rc = slc_rules_rewrite(s, v->rewrite, cmd, err);
        if (rc != SLC_OK) {
            return rc;
        }
        v->q = s->in->pos + SLC_MYSQL_HDR_LEN + 1;
        v->n = slc_mysql_le_get(s->in->pos, 3) - 1;
    }
    return SLC_OK;
}
