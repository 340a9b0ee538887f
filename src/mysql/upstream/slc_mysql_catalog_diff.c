#include "slc_core.h"
#include "slc_mysql_catalog.h"
#include "slc_mysql_catalog_zone.h"

/*
 * What changed from one image of a catalog to the next, for the change
 * hook (slc_catalog_on_change): entries are compared by name, view part
 * (kind, flags, definition, base tables) and trigger part (their bodies,
 * what a write reaches), lists as sets of names.  Both images are whole
 * copies (the old one taken under its seqlock), but every access is
 * bounds-checked all the same.
 */

static void
slc_catalog_changed(slc_catalog_changes_t *ch, const char *name, size_t len)
{
    for (unsigned i = 0; i < ch->n; i++) {
        if (ch->name[i].len == len && memcmp(ch->name[i].data, name, len)
                                      == 0)
        {
            return;
        }
    }
    if (ch->n == SLC_CATALOG_CHANGES_MAX) {
        ch->all = 1;
        return;
    }
    ch->name[ch->n++] = (slc_str_t) { len, (char *) name };
}

/* Whether every name of list a (image ia) is in list b (image ib). */
static int
slc_catalog_list_in(const void *ia, uint32_t a, unsigned na, const void *ib,
    uint32_t b, unsigned nb, size_t half)
{
    for (unsigned i = 0; i < na; i++) {
        size_t      la, lb;
        const char *x = slc_catalog_name(ia, half,
                            slc_catalog_ref(ia, half, a, i), &la);
        unsigned    k;

        for (k = 0; x != NULL && k < nb; k++) {
            const char *y = slc_catalog_name(ib, half,
                                slc_catalog_ref(ib, half, b, k), &lb);
            if (y != NULL && la == lb && memcmp(x, y, la) == 0) {
                break;
            }
        }
        if (x == NULL || k == nb) {
            return 0;
        }
    }
    return 1;
}

static int
slc_catalog_same_list(const void *ia, uint32_t a, unsigned na, const void *ib,
    uint32_t b, unsigned nb, size_t half)
{
    return na == nb && slc_catalog_list_in(ia, a, na, ib, b, nb, half)
           && slc_catalog_list_in(ib, b, nb, ia, a, na, half);
}

/* The names of a list, changed. */
static void
slc_catalog_changed_list(slc_catalog_changes_t *ch, const void *img,
    size_t half,
    uint32_t list, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        size_t      len;
        const char *name = slc_catalog_name(img, half,
                               slc_catalog_ref(img, half, list, i), &len);
        if (name == NULL) {
            ch->all = 1;
            return;
        }
        slc_catalog_changed(ch, name, len);
    }
}

/*
 * An entry of the new image `e` (its name `name`) against the old one's
 * `o` (NULL: none): a view that appeared, changed (its definition, its
 * closure, its flags) or vanished; triggers that appeared or changed, or
 * whose writes changed: the name, and what a write to it writes now
 * (the writes that went by before the catalog knew invalidated nothing
 * there).
 */
static void
slc_catalog_diff_entry(const void *old, const void *new, size_t half,
    const slc_catalog_entry_t *o, const slc_catalog_entry_t *e,
    const char *name, size_t len, slc_catalog_changes_t *ch)
{
    static const slc_catalog_entry_t none;
    int view, trg;

    if (o == NULL) {
        o = &none;
    }
    view = o->view != e->view || o->flags != e->flags
           || o->def_hash != e->def_hash
           || !slc_catalog_same_list(old, o->reads, o->nreads, new, e->reads,
                  e->nreads, half);
    trg = o->ntriggers != e->ntriggers || o->trg_hash != e->trg_hash
          || o->writes != e->writes
          || !slc_catalog_same_list(old, o->wlist, o->nwrites, new, e->wlist,
                 e->nwrites, half);
    if (view || trg) {
        slc_catalog_changed(ch, name, len);
    }
    if (trg && e->writes == SLC_CATALOG_W_ALL) {
        ch->all = 1;
    } else if (trg) {
        slc_catalog_changed_list(ch, new, half, e->wlist, e->nwrites);
    }
}

void
slc_catalog_diff(const void *old, const void *new, size_t half,
    slc_catalog_changes_t *ch)
{
    const slc_catalog_image_t *oh = old, *nh = new;
    const uint32_t             facts = SLC_CATALOG_S_ANSI_QUOTES
                                       | SLC_CATALOG_S_READ_UNCOMMITTED;
    const slc_catalog_entry_t *e, *o;
    const char                *name;
    size_t                     len;

    if ((oh->state & (SLC_CATALOG_S_LOADED | SLC_CATALOG_S_BLIND
                      | SLC_CATALOG_S_TOO_SMALL)) != SLC_CATALOG_S_LOADED
        || ((oh->state ^ nh->state) & facts))
    {
        ch->all = 1;        /* nothing to compare with, or keys changed */
        return;
    }
    for (unsigned i = 0; !ch->all && (e = slc_catalog_entry(new, half, i))
                                     != NULL; i++)
    {
        name = slc_catalog_name(new, half, e->name, &len);
        o = name != NULL ? slc_catalog_find(old, half, name, len) : NULL;
        if (name != NULL) {
            slc_catalog_diff_entry(old, new, half, o, e, name, len, ch);
        }
    }
    for (unsigned i = 0; !ch->all && (o = slc_catalog_entry(old, half, i))
                                     != NULL; i++)
    {
        name = slc_catalog_name(old, half, o->name, &len);
        if (name != NULL && slc_catalog_find(new, half, name, len) == NULL) {
            slc_catalog_changed(ch, name, len);
        }
    }
}
