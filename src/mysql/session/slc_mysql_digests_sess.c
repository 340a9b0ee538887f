/*
 * A session's digests: the command in flight's and its prepared
 * statements' (slc_mysql_digests_sess.h).
 */

#include "slc_core.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_digests_sess.h"
#include "slc_mysql_proto.h"

typedef struct {
    uint32_t            id;
    unsigned            used:1;
    slc_digest_stmt_t   st;
} slc_digests_ps_one_t;

/* Grown 8 at a time up to SLC_DIGESTS_PS: a session that prepares a
   few statements holds a few. */
struct slc_digests_ps_s {
    unsigned              n;        /* slots */
    unsigned              next;     /* the slot the next one takes */
    slc_digests_ps_one_t  one[];
};

static slc_digests_ps_one_t *
slc_digests_ps_slot(slc_digests_ps_t *t, uint32_t id)
{
    for (unsigned i = 0; t != NULL && i < t->n; i++) {
        if (t->one[i].used && t->one[i].id == id) {
            return &t->one[i];
        }
    }
    return NULL;
}

/* A slot for a new statement: a free one, 8 more, or the oldest's. */
static slc_digests_ps_one_t *
slc_digests_ps_free_slot(slc_digests_sess_t *d)
{
    slc_digests_ps_t *t = d->ps;
    unsigned          n = t != NULL ? t->n : 0;

    for (unsigned i = 0; i < n; i++) {
        if (!t->one[i].used) {
            return &t->one[i];
        }
    }
    if (n < SLC_DIGESTS_PS) {
        t = realloc(t, sizeof(*t) + (n + 8) * sizeof(t->one[0]));
        if (t != NULL) {
            memset(&t->one[n], 0, 8 * sizeof(t->one[0]));
            t->n = n + 8;
            t->next = n == 0 ? 0 : t->next;
            d->ps = t;
            return &t->one[n];
        }
        if (d->ps == NULL) {
            return NULL;            /* its executes go undigested */
        }
        t = d->ps;
    }
    n = t->next;
    t->next = (t->next + 1) % t->n;
    return &t->one[n];
}

static void
slc_digests_ps_add(slc_digests_sess_t *d, uint32_t id)
{
    slc_digests_ps_one_t *o = slc_digests_ps_slot(d->ps, id);

    if (o == NULL && (o = slc_digests_ps_free_slot(d)) == NULL) {
        return;
    }
    o->id = id;
    o->used = 1;
    o->st = *d->st;
}

/* The statement commands: an EXECUTE's digest, a CLOSE's forgetting. */
static void
slc_digests_stmt(slc_digests_sess_t *d, const uint8_t *payload,
    size_t avail, const char *user, const char *db)
{
    slc_digests_ps_one_t *o;

    if (avail < 5) {
        return;
    }
    o = slc_digests_ps_slot(d->ps, (uint32_t) slc_mysql_le_get(payload + 1,
                                                                4));
    if (o == NULL) {
        return;
    }
    if (payload[0] == SLC_COM_STMT_CLOSE) {
        o->used = 0;
        return;
    }
    *d->st = o->st;
    d->st->user = o->st.user != NULL ? user : NULL;
    d->st->db = o->st.db != NULL ? db : NULL;
    d->digesting = 1;
}

void
slc_digests_begin(slc_digests_sess_t *d, const uint8_t *payload,
    size_t avail, int nobs, const char *user, const char *db,
    unsigned how)
{
    uint8_t com = avail > 0 ? payload[0] : SLC_COM_SLEEP;

    d->digesting = d->preparing = 0;
    if (com == SLC_COM_RESET_CONNECTION || com == SLC_COM_CHANGE_USER) {
        for (unsigned i = 0; d->ps != NULL && i < d->ps->n; i++) {
            d->ps->one[i].used = 0;
        }
    }
    if (how == 0 || (com != SLC_COM_QUERY && com != SLC_COM_STMT_PREPARE
                     && com != SLC_COM_STMT_EXECUTE
                     && com != SLC_COM_STMT_CLOSE)
        || (d->st == NULL && (d->st = malloc(sizeof(*d->st))) == NULL))
    {
        return;
    }
    if (com == SLC_COM_STMT_EXECUTE || com == SLC_COM_STMT_CLOSE) {
        slc_digests_stmt(d, payload, avail, user, db);
        return;
    }
    slc_digests_prepare(d->st, payload + 1, avail - 1, nobs, user, db, how);
    d->digesting = com == SLC_COM_QUERY;
    d->preparing = com == SLC_COM_STMT_PREPARE;
}

void
slc_digests_end(slc_digests_sess_t *d, uint64_t us, int err, uint64_t rows,
    uint32_t stmt_id)
{
    if (d->digesting) {
        slc_digests_record(d->st, us, err, rows);
    } else if (d->preparing && !err && stmt_id != 0) {
        slc_digests_ps_add(d, stmt_id);
    }
    d->digesting = d->preparing = 0;
}

void
slc_digests_sess_free(slc_digests_sess_t *d)
{
    free(d->st);
    free(d->ps);
    d->st = NULL;
    d->ps = NULL;
}
