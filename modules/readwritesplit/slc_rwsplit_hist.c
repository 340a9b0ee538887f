/*
 * readwritesplit's session history: the session commands (SET, USE,
 * PREPARE ...) a backend opened later must see before it takes a
 * statement.  Bounded by session_history_max; a later SET of the same
 * variable, a later USE, a later PREPARE of the same name replaces the
 * earlier one (and DEALLOCATE removes its PREPARE), so a long-lived
 * session that sets the same few things over and over never runs out.
 * When the history cannot hold what the session did (too many distinct
 * commands, one too long), the session stops opening replicas: a new one
 * could not be given the state.
 */

#include <ctype.h>

#include "slc_core.h"
#include "slc_sql_classify.h"
#include "slc_rwsplit.h"

static int
slc_rwsplit_word_char(uint8_t c)
{
    return isalnum(c) || c == '_' || c == '$' || c == '@' || c == '.'
           || c >= 0x80;
}

static size_t
slc_rwsplit_skip_blank(const uint8_t *q, size_t n, size_t i)
{
    while (i < n && isspace(q[i])) {
        i++;
    }
    return i;
}

/* The word at q[i] (lowercased into w, at most cap - 1 bytes): its end. */
static size_t
slc_rwsplit_word(const uint8_t *q, size_t n, size_t i, char *w, size_t cap)
{
    size_t k = 0;

    while (i < n && slc_rwsplit_word_char(q[i])) {
        if (k + 1 < cap) {
            w[k++] = (char) tolower(q[i]);
        }
        i++;
    }
    w[k] = '\0';
    return i;
}

size_t
slc_rwsplit_value_end(const uint8_t *q, size_t n, size_t i)
{
    int depth = 0;

    for (; i < n; i++) {
        uint8_t c = q[i];

        if (c == '\'' || c == '"' || c == '`') {
            for (i++; i < n && q[i] != c; i++) {
                if (q[i] == '\\' && c != '`') {
                    i++;
                }
            }
        } else if (c == '(') {
            depth++;
        } else if (c == ')') {
            depth--;
        } else if (c == ',' && depth == 0) {
            return i;
        }
    }
    return n;
}

/* Whether a comma ends an assignment at depth 0 (SET a = 1, b = 2):
   such a SET replaces nothing. */
static int
slc_rwsplit_multi_assign(const uint8_t *q, size_t n, size_t i)
{
    return slc_rwsplit_value_end(q, n, i) < n;
}

/*
 * The key of a session command: what a later one of the same key
 * replaces.  "" (no key: nothing is replaced) unless the text starts with
 * the keyword itself (no comment before it) and sets one thing.  A
 * DEALLOCATE's key is its PREPARE's, with *drop set.
 */
void
slc_rwsplit_hist_key(const uint8_t *q, size_t n, slc_sql_kind_t kind,
    char key[SLC_RWSPLIT_KEY_LEN], int *drop)
{
    char   w[SLC_RWSPLIT_KEY_LEN - 8];
    size_t i;

    key[0] = '\0';
    *drop = 0;
    i = slc_rwsplit_word(q, n, slc_rwsplit_skip_blank(q, n, 0), w, sizeof(w));
    switch (kind) {
    case SLC_SQL_USE:
        snprintf(key, SLC_RWSPLIT_KEY_LEN, "use");
        return;
    case SLC_SQL_PREPARE:
    case SLC_SQL_DEALLOCATE:
        if (kind == SLC_SQL_DEALLOCATE) {           /* DEALLOCATE|DROP */
            i = slc_rwsplit_word(q, n, slc_rwsplit_skip_blank(q, n, i), w,
                             sizeof(w));
            *drop = 1;
        }
        slc_rwsplit_word(q, n, slc_rwsplit_skip_blank(q, n, i), w, sizeof(w));
        if (w[0] != '\0') {
            snprintf(key, SLC_RWSPLIT_KEY_LEN, "prepare %s", w);
        }
        return;
    case SLC_SQL_SET:
        break;
    default:
        return;
    }
    if (strcmp(w, "set") != 0) {
        return;
    }
    i = slc_rwsplit_word(q, n, slc_rwsplit_skip_blank(q, n, i), w, sizeof(w));
    if (strcmp(w, "session") == 0 || strcmp(w, "local") == 0) {
        i = slc_rwsplit_word(q, n, slc_rwsplit_skip_blank(q, n, i), w,
            sizeof(w));
    }
    if (strcmp(w, "names") == 0 || strcmp(w, "character") == 0
        || strcmp(w, "charset") == 0)
    {
        snprintf(key, SLC_RWSPLIT_KEY_LEN, "names");  /* both set the same */
        return;
    }
    if (w[0] == '\0' || strcmp(w, "transaction") == 0
        || slc_rwsplit_multi_assign(q, n, i))
    {
        return;
    }
    /* @@session.x, @@local.x, @@x and x are one variable */
    const char *v = w;
    if (strncmp(v, "@@session.", 10) == 0) {
        v += 10;
    } else if (strncmp(v, "@@local.", 8) == 0) {
        v += 8;
    } else if (strncmp(v, "@@", 2) == 0) {
        v += 2;
    }
    snprintf(key, SLC_RWSPLIT_KEY_LEN, "set %s", v);
}

static void
slc_rwsplit_hist_remove(slc_rwsplit_ctx_t *rc, unsigned i)
{
    free(rc->hist[i].text);
    memmove(rc->hist + i, rc->hist + i + 1,
            (rc->nhist - i - 1) * sizeof(rc->hist[0]));
    rc->nhist--;
}

/*
 * Keep session command q[0..n) (text, without the command byte).  A
 * command the history cannot keep makes the session primary-only: NULL,
 * or why (for the caller's log).
 */
const char *
slc_rwsplit_hist_add(slc_rwsplit_ctx_t *rc, const uint8_t *q, size_t n,
    slc_sql_kind_t kind)
{
    char        key[SLC_RWSPLIT_KEY_LEN];
    int         drop;
    char       *text;
    const char *why;

    slc_rwsplit_hist_key(q, n, kind, key, &drop);
    for (unsigned i = 0; key[0] != '\0' && i < rc->nhist; i++) {
        if (strcmp(rc->hist[i].key, key) == 0) {
            slc_rwsplit_hist_remove(rc, i);
            break;
        }
    }
    if (drop) {
        return NULL;    /* DEALLOCATE: its PREPARE is gone, and so is it */
    }
    why = n > SLC_RWSPLIT_HIST_LEN ? "a session command too long to keep"
          : rc->nhist >= rc->hist_max ? "session_history_max reached"
          : memchr(q, '\0', n) != NULL ? "a session command with a NUL byte"
          : NULL;
    if (why == NULL && (text = malloc(n + 1)) == NULL) {
        why = "out of memory";
    }
    if (why != NULL) {
        slc_rwsplit_state_no_replica(rc);   /* cannot replay */
        return why;
    }
    memcpy(text, q, n);
    text[n] = '\0';
    strlcpy(rc->hist[rc->nhist].key, key, SLC_RWSPLIT_KEY_LEN);
    rc->hist[rc->nhist++].text = text;
    return NULL;
}

void
slc_rwsplit_hist_clear(slc_rwsplit_ctx_t *rc)
{
    while (rc->nhist > 0) {
        slc_rwsplit_hist_remove(rc, rc->nhist - 1);
    }
}

void
slc_rwsplit_hist_reset(slc_rwsplit_ctx_t *rc)
{
    for (unsigned i = rc->nhist; i-- > 0; ) {
        if (strcmp(rc->hist[i].key, "use") != 0) {
            slc_rwsplit_hist_remove(rc, i);
        }
    }
}

const char *
slc_rwsplit_hist_prepared(const slc_rwsplit_ctx_t *rc, const uint8_t *q,
    size_t n)
{
    char w[SLC_RWSPLIT_KEY_LEN - 8];
    char key[SLC_RWSPLIT_KEY_LEN];

    slc_rwsplit_word(q, n, slc_rwsplit_skip_blank(q, n, 0), w, sizeof(w));
    if (w[0] == '\0') {
        return NULL;
    }
    snprintf(key, sizeof(key), "prepare %s", w);
    for (unsigned i = 0; i < rc->nhist; i++) {
        if (strcmp(rc->hist[i].key, key) == 0) {
            return rc->hist[i].text;
        }
    }
    return NULL;
}

/*
 * For a handover: the history as NUL-terminated texts one after the
 * other, keys recomputed on arrival.  0 when it does not fit (the new
 * worker then keeps the session on the primary).
 */
size_t
slc_rwsplit_hist_save(const slc_rwsplit_ctx_t *rc, uint8_t *buf, size_t cap)
{
    size_t off = 0;

    for (unsigned i = 0; i < rc->nhist; i++) {
        size_t n = strlen(rc->hist[i].text) + 1;

        if (off + n > cap) {
            return 0;
        }
        memcpy(buf + off, rc->hist[i].text, n);
        off += n;
    }
    return off;
}

int
slc_rwsplit_hist_restore(slc_rwsplit_ctx_t *rc, const uint8_t *p, size_t len)
{
    size_t off = 0;

    if (len > 0 && p[len - 1] != '\0') {
        return SLC_ERROR;
    }
    while (off < len) {
        size_t          n = strlen((const char *) p + off);
        slc_sql_info_t  si;

        (void) slc_sql_classify(p + off, n, 0, &si);
        (void) slc_rwsplit_hist_add(rc, p + off, n, si.kind);
        off += n + 1;
    }
    return slc_rwsplit_state_has(rc, SLC_RWSPLIT_SESS_PRIMARY_ONLY)
           ? SLC_ERROR : SLC_OK;
}
