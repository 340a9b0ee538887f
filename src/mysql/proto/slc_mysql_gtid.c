/*
 * GTIDs and GTID positions (contract in slc_mysql_gtid.h).
 */

#include "slc_core.h"
#include <inttypes.h>

#include "slc_mysql_gtid.h"

/* A decimal number of at most `max`, at p[*i..len); SLC_OK and *i past
   it, or SLC_ERROR. */
static int
slc_gtid_num(const char *p, size_t len, size_t *i, uint64_t max,
    uint64_t *v)
{
    size_t start = *i;

    *v = 0;
    while (*i < len && p[*i] >= '0' && p[*i] <= '9') {
        unsigned d = (unsigned) (p[*i] - '0');

        if (*v > (max - d) / 10) {
            return SLC_ERROR;
        }
        *v = *v * 10 + d;
        (*i)++;
    }
    return *i > start ? SLC_OK : SLC_ERROR;
}

int
slc_gtid_parse(const char *p, size_t len, slc_gtid_t *g)
{
    uint64_t d, s, n;
    size_t   i = 0;

    if (slc_gtid_num(p, len, &i, UINT32_MAX, &d) != SLC_OK
        || i >= len || p[i++] != '-'
        || slc_gtid_num(p, len, &i, UINT32_MAX, &s) != SLC_OK
        || i >= len || p[i++] != '-'
        || slc_gtid_num(p, len, &i, UINT64_MAX, &n) != SLC_OK
        || i != len)
    {
        return SLC_ERROR;
    }
    g->domain = (uint32_t) d;
    g->server = (uint32_t) s;
    g->seq = n;
    return SLC_OK;
}

static int
slc_gtid_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * The entry of a position text at *p, blanks around it skipped: 1 with
 * *g, 0 for an empty or malformed one; *p moves past it and its comma,
 * to NULL after the last.
 */
static int
slc_gtid_next(const char **p, slc_gtid_t *g)
{
    const char *s = *p, *end = strchr(s, ',');
    size_t      a, b = end != NULL ? (size_t) (end - s) : strlen(s);

    *p = end != NULL ? end + 1 : NULL;
    for (a = 0; a < b && slc_gtid_space(s[a]); a++) {
        /* skip */
    }
    while (b > a && slc_gtid_space(s[b - 1])) {
        b--;
    }
    return b > a && slc_gtid_parse(s + a, b - a, g) == SLC_OK;
}

int
slc_gtid_pos_has(const char *pos, const slc_gtid_t *g)
{
    slc_gtid_t e;

    for (const char *p = pos; p != NULL; ) {
        if (slc_gtid_next(&p, &e) && e.domain == g->domain) {
            return e.seq >= g->seq;
        }
    }
    return 0;
}

int
slc_gtid_set_parse(const char *pos, slc_gtid_set_t *set)
{
    slc_gtid_t e;

    memset(set, 0, sizeof(*set));
    if (pos[strspn(pos, " \t\r\n")] == '\0') {
        return SLC_OK;              /* no GTID yet */
    }
    for (const char *p = pos; p != NULL; ) {
        if (!slc_gtid_next(&p, &e)) {
            return SLC_ERROR;
        }
        slc_gtid_set_add(set, &e);
    }
    return set->lost == 0 ? SLC_OK : SLC_ERROR;
}

int
slc_gtid_pos_has_set(const char *pos, const slc_gtid_set_t *set)
{
    for (unsigned i = 0; i < set->n; i++) {
        if (!slc_gtid_pos_has(pos, &set->g[i])) {
            return 0;
        }
    }
    return 1;
}

void
slc_gtid_set_add(slc_gtid_set_t *set, const slc_gtid_t *g)
{
    for (unsigned i = 0; i < set->n; i++) {
        if (set->g[i].domain == g->domain) {
            if (g->seq > set->g[i].seq) {
                set->g[i] = *g;
            }
            return;
        }
    }
    if (set->n == SLC_GTID_DOMAINS) {
        set->lost++;
        return;
    }
    set->g[set->n++] = *g;
}

int
slc_gtid_set_covers(const slc_gtid_set_t *have, const slc_gtid_set_t *want)
{
    for (unsigned i = 0; i < want->n; i++) {
        unsigned j;

        for (j = 0; j < have->n; j++) {
            if (have->g[j].domain == want->g[i].domain) {
                break;
            }
        }
        if (j == have->n || have->g[j].seq < want->g[i].seq) {
            return 0;
        }
    }
    return 1;
}

int
slc_gtid_set_format(const slc_gtid_set_t *set, char *buf, size_t len)
{
    size_t off = 0;

    if (len == 0) {
        return -1;
    }
    buf[0] = '\0';
    for (unsigned i = 0; i < set->n; i++) {
        int k = snprintf(buf + off, len - off, "%s%" PRIu32 "-%" PRIu32
                         "-%" PRIu64, i > 0 ? "," : "", set->g[i].domain,
                         set->g[i].server, set->g[i].seq);
        if (k < 0 || (size_t) k >= len - off) {
            return -1;
        }
        off += (size_t) k;
    }
    return (int) off;
}
