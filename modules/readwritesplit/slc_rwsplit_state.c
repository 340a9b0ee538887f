/*
 * readwritesplit: what a statement that runs on the primary alone does to
 * the session's state (docs/architecture.md, "Session state the replicas
 * cannot be given"), and the session commands that reach the history and
 * the replicas once the primary accepted them.
 *
 * A statement the router sends to every backend (SET, USE, PREPARE) keeps
 * the replicas' state the primary's.  One that runs on the primary alone
 * may change it there only:
 *   - a multi-statement holding a SET, USE, PREPARE, EXECUTE, CALL...,
 *     a CALL, a compound statement, a statement of no known kind, an
 *     EXECUTE IMMEDIATE or an EXECUTE of a statement whose text is not
 *     known to be harmless, a SET of a session variable whose value reads
 *     a table: the session's state is no longer known; its replica
 *     backends go and its reads go to the primary (until a
 *     COM_RESET_CONNECTION or COM_CHANGE_USER, the database excepted
 *     when that too may have changed);
 *   - an assignment of a user variable (SELECT ... INTO @x, @y := ...,
 *     SET @z := (SELECT ...), a stored function, which may assign any):
 *     the session's reads of user variables go to the primary;
 *   - a temporary table made by EXECUTE: as one made by CREATE TEMPORARY
 *     TABLE (reads go to the primary).
 * Session tracking could tell some of it from the primary's OK packets,
 * but only with trackers the client would then see (session_track_
 * system_variables = '*', session_track_state_change): not used.
 */

#include <ctype.h>

#include "slc_core.h"
#include "slc_log.h"
#include "slc_mysql_cmd.h"
#include "slc_mysql_proto.h"
#include "slc_rwsplit.h"

#define SLC_RWSPLIT_SCOPE_USER     1u
#define SLC_RWSPLIT_SCOPE_SESSION  2u
#define SLC_RWSPLIT_SCOPE_GLOBAL   4u


/* --- reading a statement's words ----------------------------------------- */

/* Past blanks and comments from q[i]. */
static size_t
slc_rwsplit_state_blank(const uint8_t *q, size_t n, size_t i)
{
    for (;;) {
        while (i < n && isspace(q[i])) {
            i++;
        }
        if (i + 1 < n && q[i] == '/' && q[i + 1] == '*') {
            for (i += 2; i + 1 < n && !(q[i] == '*' && q[i + 1] == '/');
                 i++) { }
            i = i + 1 < n ? i + 2 : n;
        } else if (i < n && (q[i] == '#' || (i + 2 < n && q[i] == '-'
                   && q[i + 1] == '-' && isspace(q[i + 2]))))
        {
            while (i < n && q[i] != '\n') {
                i++;
            }
        } else {
            return i;
        }
    }
}

static int
slc_rwsplit_state_word_char(uint8_t c)
{
    return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

/* Whether the word at q[i] is w (lowercase, whole): its end, else 0. */
static size_t
slc_rwsplit_state_is(const uint8_t *q, size_t n, size_t i, const char *w)
{
    size_t k = strlen(w);

    if (i + k > n || strncasecmp((const char *) q + i, w, k) != 0
        || (i + k < n && slc_rwsplit_state_word_char(q[i + k])))
    {
        return 0;
    }
    return i + k;
}

/*
 * The scopes a SET assigns (SLC_RWSPLIT_SCOPE_*): @x is the user's, @@global.x
 * and any name after GLOBAL the server's; everything else (a name,
 * @@session.x, NAMES, TRANSACTION, ROLE...) the session's.
 */
static unsigned
slc_rwsplit_set_scopes(const uint8_t *q, size_t n)
{
    unsigned scopes = 0, dflt = SLC_RWSPLIT_SCOPE_SESSION;
    size_t   i = slc_rwsplit_state_blank(q, n, 0), e;

    if ((i = slc_rwsplit_state_is(q, n, i, "set")) == 0) {
        return SLC_RWSPLIT_SCOPE_SESSION;
    }
    while (i < n) {
        i = slc_rwsplit_state_blank(q, n, i);
        if ((e = slc_rwsplit_state_is(q, n, i, "global")) != 0) {
            dflt = SLC_RWSPLIT_SCOPE_GLOBAL;
            i = slc_rwsplit_state_blank(q, n, e);
        } else if ((e = slc_rwsplit_state_is(q, n, i, "session")) != 0
                   || (e = slc_rwsplit_state_is(q, n, i, "local")) != 0)
        {
            dflt = SLC_RWSPLIT_SCOPE_SESSION;
            i = slc_rwsplit_state_blank(q, n, e);
        }
        if (i + 9 <= n && strncasecmp((const char *) q + i, "@@global.", 9)
            == 0)
        {
            scopes |= SLC_RWSPLIT_SCOPE_GLOBAL;
        } else if (i + 1 < n && q[i] == '@' && q[i + 1] == '@') {
            scopes |= SLC_RWSPLIT_SCOPE_SESSION;
        } else if (i < n && q[i] == '@') {
            scopes |= SLC_RWSPLIT_SCOPE_USER;
        } else {
            scopes |= dflt;
        }
        i = slc_rwsplit_value_end(q, n, i) + 1;
    }
    return scopes;
}

/*
 * The text of a string literal at q[i] ('...' or "..."), unescaped into
 * out (cap bytes): its length, or (size_t) -1 when q[i] starts none or it
 * does not fit.
 */
static size_t
slc_rwsplit_state_literal(const uint8_t *q, size_t n, size_t i,
    unsigned status,
    uint8_t *out, size_t cap)
{
    uint8_t quote;
    size_t  k = 0;
    int     bs = !(status & SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES);

    if (i >= n || (q[i] != '\'' && q[i] != '"')) {
        return (size_t) -1;
    }
    quote = q[i++];
    for (; i < n && k < cap; i++) {
        if (q[i] == quote && i + 1 < n && q[i + 1] == quote) {
            out[k++] = quote;           /* doubled */
            i++;
        } else if (q[i] == quote) {
            return k;
        } else if (q[i] == '\\' && bs && i + 1 < n) {
            out[k++] = q[++i];          /* \' \" \\: the character; the
                                           rest (\n...) is no quote and
                                           no statement keyword */
        } else {
            out[k++] = q[i];
        }
    }
    return (size_t) -1;
}


/* --- what a statement does to the state ---------------------------------- */

static unsigned slc_rwsplit_state_execute(const slc_rwsplit_ctx_t *rc,
    const uint8_t *q, size_t n, unsigned status);

unsigned
slc_rwsplit_state_effect(const slc_rwsplit_ctx_t *rc, const uint8_t *q,
    size_t n,
    const slc_sql_info_t *si, unsigned status)
{
    uint32_t f = si->flags;
    unsigned fx = 0, scopes;

    if (f & (SLC_SQL_F_MULTI_STATE | SLC_SQL_F_UNTERMINATED
             | SLC_SQL_F_AMBIGUOUS))
    {
        return SLC_RWSPLIT_FX_UNKNOWN;
    }
    switch (si->kind) {
    case SLC_SQL_CALL: case SLC_SQL_COMPOUND: case SLC_SQL_UNKNOWN:
    case SLC_SQL_USE: case SLC_SQL_PREPARE: case SLC_SQL_DEALLOCATE:
        return SLC_RWSPLIT_FX_UNKNOWN;
    case SLC_SQL_EXECUTE:
        return rc != NULL ? slc_rwsplit_state_execute(rc, q, n, status)
                          : SLC_RWSPLIT_FX_UNKNOWN;
    case SLC_SQL_SET:
        scopes = slc_rwsplit_set_scopes(q, n);
        if (scopes & SLC_RWSPLIT_SCOPE_SESSION) {
            return SLC_RWSPLIT_FX_UNKNOWN;
        }
        break;
    default:
        break;
    }
    if (f & (SLC_SQL_F_USER_VAR_ASSIGN | SLC_SQL_F_SELECT_INTO
             | SLC_SQL_F_STORED_FUNC))
    {
        fx |= SLC_RWSPLIT_FX_USERVARS;
    }
    if (f & SLC_SQL_F_TEMPORARY) {
        fx |= SLC_RWSPLIT_FX_TEMP;
    }
    return fx;
}

/*
 * EXECUTE name [USING ...]: what the text its PREPARE gave (the history
 * keeps it) does; EXECUTE IMMEDIATE 'text': what the text does.  A text
 * that is not a literal, or not known: unknown.
 */
static unsigned
slc_rwsplit_state_execute(const slc_rwsplit_ctx_t *rc, const uint8_t *q,
    size_t n,
    unsigned status)
{
    uint8_t        text[SLC_RWSPLIT_HIST_LEN];
    const char    *prep;
    slc_sql_info_t si;
    size_t         i = slc_rwsplit_state_blank(q, n, 0), e, len;

    if ((i = slc_rwsplit_state_is(q, n, i, "execute")) == 0) {
        return SLC_RWSPLIT_FX_UNKNOWN;
    }
    i = slc_rwsplit_state_blank(q, n, i);
    if ((e = slc_rwsplit_state_is(q, n, i, "immediate")) != 0) {
        len = slc_rwsplit_state_literal(q, n, slc_rwsplit_state_blank(q, n, e),
            status,
                                 text, sizeof(text));
    } else {
        prep = slc_rwsplit_hist_prepared(rc, q + i, n - i);
        if (prep == NULL) {
            return SLC_RWSPLIT_FX_UNKNOWN;
        }
        len = strlen(prep);
        e = slc_rwsplit_state_is((const uint8_t *) prep, len,
                          slc_rwsplit_state_blank((const uint8_t *) prep, len,
                              0),
                          "prepare");
        /* PREPARE name FROM 'text' */
        e = slc_rwsplit_state_blank((const uint8_t *) prep, len, e);
        while (e < len && (slc_rwsplit_state_word_char((uint8_t) prep[e])
                           || prep[e] == '`'))
        {
            e++;
        }
        e = slc_rwsplit_state_is((const uint8_t *) prep, len,
                          slc_rwsplit_state_blank((const uint8_t *) prep, len,
                              e),
                          "from");
        len = e == 0 ? (size_t) -1
            : slc_rwsplit_state_literal((const uint8_t *) prep, len,
                  slc_rwsplit_state_blank((const uint8_t *) prep, len, e),
                      status,
                  text, sizeof(text));
    }
    if (len == (size_t) -1) {
        return SLC_RWSPLIT_FX_UNKNOWN;
    }
    (void) slc_sql_classify(text, len, status, &si);
    if (si.flags & SLC_SQL_F_SESSION_STATE) {
        return SLC_RWSPLIT_FX_UNKNOWN;      /* a SET, USE... on the primary */
    }
    return slc_rwsplit_state_effect(NULL, text, len, &si, status);
}

void
slc_rwsplit_state_apply(slc_session_t *s, slc_rwsplit_ctx_t *rc, unsigned fx)
{
    if (fx & SLC_RWSPLIT_FX_USERVARS) {
        rc->sess.flags |= SLC_RWSPLIT_SESS_USERVARS;
    }
    if (fx & SLC_RWSPLIT_FX_TEMP) {
        rc->sess.flags |= SLC_RWSPLIT_SESS_TEMP;
    }
    if (!(fx & SLC_RWSPLIT_FX_UNKNOWN)) {
        return;
    }
    rc->sess.flags |= SLC_RWSPLIT_SESS_DB_UNKNOWN;
    if (rc->nreplicas > 0
        || !slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_PRIMARY_ONLY))
    {
        slc_session_log(s, SLC_LOG_INFO, "readwritesplit: a statement on "
            "the primary may have changed the session's state: its reads "
            "go to the primary");
    }
    rc->sess.flags |= SLC_RWSPLIT_SESS_PRIMARY_ONLY;
    while (rc->nreplicas > 0) {
        slc_rwsplit_drop_replica(rc, rc->replica[0]);
    }
}


/* --- session commands held until the primary accepts them ---------------- */

void
slc_rwsplit_state_hold(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const uint8_t *q,
    size_t n, slc_sql_kind_t kind)
{
    free(rc->held);
    rc->held = malloc(n + 1);
    if (rc->held == NULL) {
        slc_rwsplit_state_apply(s, rc, SLC_RWSPLIT_FX_UNKNOWN);
        return;
    }
    rc->held[0] = SLC_COM_QUERY;
    memcpy(rc->held + 1, q, n);
    rc->held_len = n + 1;
    rc->held_kind = kind;
}

void
slc_rwsplit_state_drop(slc_rwsplit_ctx_t *rc)
{
    free(rc->held);
    rc->held = NULL;
}

/* Accepted: into the history, and to every replica backend open (one
   still logging in replays the history when ready). */
static void
slc_rwsplit_state_accepted(slc_session_t *s, slc_rwsplit_ctx_t *rc)
{
    const uint8_t *q = rc->held + 1;
    size_t         n = rc->held_len - 1;
    int            was = slc_rwsplit_state_has(rc,
                                       SLC_RWSPLIT_SESS_PRIMARY_ONLY);
    const char    *why;

    why = slc_rwsplit_hist_add(rc, q, n, rc->held_kind);
    if (rc->held_kind == SLC_SQL_USE) {
        rc->sess.flags = why != NULL
                         ? rc->sess.flags | SLC_RWSPLIT_SESS_DB_UNKNOWN
                         : rc->sess.flags & ~SLC_RWSPLIT_SESS_DB_UNKNOWN;
    }
    if (why != NULL && !was) {
        slc_session_log(s, SLC_LOG_INFO, "readwritesplit: %s: no new "
            "replica backend for this session, its reads go to the "
            "primary once those open fail", why);
    }
    for (unsigned i = 0; i < rc->nreplicas; ) {
        slc_backend_t *b = rc->replica[i];
        slc_rwsplit_copies_t *rep = slc_rwsplit_copies(rc, b);

        if (b->state != SLC_BS_READY) {
            i++;                        /* replays the history when ready */
        } else if (rep != NULL
                   && slc_cmd_inject(b, rc->held, rc->held_len) == SLC_OK)
        {
            rep->copies++;
            i++;
        } else {
            slc_rwsplit_drop_replica(rc, b);        /* it moved b's slot */
        }
    }
}

void
slc_rwsplit_state_settle(slc_session_t *s, slc_rwsplit_ctx_t *rc,
    const slc_mysql_reply_t *r)
{
    if (rc->held == NULL) {
        return;
    }
    if (r->first != SLC_MYSQL_ERR) {
        slc_rwsplit_state_accepted(s, rc);
    }
    slc_rwsplit_state_drop(rc);             /* refused: never replayed */
}


/* --- the session's routing state: its one owner --------------------------- */

void
slc_rwsplit_state_wrote(slc_rwsplit_ctx_t *rc)
{
    rc->sess.flags |= SLC_RWSPLIT_SESS_WROTE;
}

void
slc_rwsplit_state_temp(slc_rwsplit_ctx_t *rc)
{
    rc->sess.flags |= SLC_RWSPLIT_SESS_TEMP;
}

void
slc_rwsplit_state_no_replica(slc_rwsplit_ctx_t *rc)
{
    rc->sess.flags |= SLC_RWSPLIT_SESS_PRIMARY_ONLY;
}

void
slc_rwsplit_state_new_primary(slc_rwsplit_ctx_t *rc)
{
    rc->sess.flags &= ~SLC_RWSPLIT_SESS_TEMP;
}

void
slc_rwsplit_state_forget(slc_rwsplit_ctx_t *rc, int reset)
{
    unsigned db = reset ? rc->sess.flags & SLC_RWSPLIT_SESS_DB_UNKNOWN : 0;

    rc->sess.flags = db | (db ? SLC_RWSPLIT_SESS_PRIMARY_ONLY : 0);
}

unsigned
slc_rwsplit_state_saved(const slc_rwsplit_ctx_t *rc)
{
    return rc->sess.flags & SLC_RWSPLIT_SESS_SAVED;
}

void
slc_rwsplit_state_restored(slc_rwsplit_ctx_t *rc, unsigned bits)
{
    rc->sess.flags = bits & SLC_RWSPLIT_SESS_SAVED;
}

void
slc_rwsplit_state_unknown(slc_rwsplit_ctx_t *rc)
{
    rc->sess.flags |= SLC_RWSPLIT_SESS_PRIMARY_ONLY
                      | SLC_RWSPLIT_SESS_DB_UNKNOWN | SLC_RWSPLIT_SESS_WROTE;
}
