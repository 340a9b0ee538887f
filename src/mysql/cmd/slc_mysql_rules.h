#ifndef SLC_MYSQL_RULES_H
#define SLC_MYSQL_RULES_H

#include "slc_core.h"
#include "slc_mysql_filter.h"
#include "slc_sql_rule.h"

/*
 * The query rules at work (issue 23, section 4): a server {} block's
 * rules (slc_sql_rule.h, srv->rules) run on each COM_QUERY and
 * COM_STMT_PREPARE before the filters see it (slc_mysql_cmd.c): a block
 * answers the ERR, a rewrite replaces the statement in the client's
 * buffer (so the filters, the router and the server all see the new
 * one), and the verdict stays with the command for the router (route)
 * and the cache (its actions).  Counted per rule in the zone
 * mysql_traffic (slc_traffic_rules).
 */

/* The ERR the proxy answers instead of a statement (a block). */
typedef struct {
    uint16_t     code;
    const char  *state;
    const char  *msg;
} slc_rules_err_t;

/*
 * The rules on the held command cmd (its head: a statement longer than a
 * buffer is matched on the bytes at hand, and not rewritten).  nobs:
 * the session's NO_BACKSLASH_ESCAPES; `digest`: the statement's digest
 * if the caller made one, else NULL; si: the statement classified, if
 * the caller has it, else NULL (classified here when a rule tests
 * tables).  SLC_OK: it goes on, rewritten or
 * not (*cmd read again); SLC_DONE: the caller answers *err instead (a
 * block, a rewrite that does not fit) and drops it.  *v: the verdict,
 * all -1 when no rule matched or none applies.
 */
int   slc_rules_command(slc_session_t *s, slc_cmd_t *cmd, int nobs,
    const char *digest, const slc_sql_info_t *si,
    slc_sql_rule_verdict_t *v, slc_rules_err_t *err);

/*
 * The verdict on statement q[0..n) of s, not counted (a prepared
 * statement's text at EXECUTE, a write the cache looks at; the client's
 * command has its own, slc_cmd_rules); keys: its table keys if the
 * caller has them (else made when a rule needs them).
 */
void  slc_rules_eval(slc_session_t *s, const uint8_t *q, size_t n,
    int nobs, const slc_sql_keys_t *keys, slc_sql_rule_verdict_t *v);

/* The rule at index i of s's server (i >= 0). */
const slc_sql_rule_t *slc_rules_get(const slc_session_t *s, int i);

/* The router did not do what rule i said (a write routed to a replica,
   a server not there): counted, logged at most once a second per rule. */
void  slc_rules_refused(slc_session_t *s, int i, const char *why);

#endif /* SLC_MYSQL_RULES_H */
