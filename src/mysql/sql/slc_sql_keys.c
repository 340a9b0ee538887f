/*
 * Table keys of a classified statement (slc_sql_keys.h).
 */

#include "slc_core.h"
#include "slc_sql_keys.h"

/*
 * A name into dst (room for SLC_SQL_NAME_MAX + 1): lowercased, a
 * doubled backtick made one.  Its length, or -1 when it is too long.
 */
static ssize_t
slc_sql_name_copy(char *dst, const uint8_t *p, size_t n)
{
    size_t  o = 0;

    for (size_t i = 0; i < n; i++) {
        uint8_t  c = p[i];

        if (c == '`' && i + 1 < n && p[i + 1] == '`') {
            i++;
        }
        if (o == SLC_SQL_NAME_MAX) {
            return -1;
        }
        dst[o++] = (char) ((c >= 'A' && c <= 'Z') ? c + 32 : c);
    }
    dst[o] = '\0';
    return (ssize_t) o;
}

/* A raw name (as the server stores it) into dst, lowercased. */
static ssize_t
slc_sql_name_raw(char *dst, const char *p, size_t n)
{
    if (n > SLC_SQL_NAME_MAX) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t  c = (uint8_t) p[i];

        dst[i] = (char) ((c >= 'A' && c <= 'Z') ? c + 32 : c);
    }
    dst[n] = '\0';
    return (ssize_t) n;
}

ssize_t
slc_sql_table_key_raw(char *dst, const char *db, size_t dblen,
    const char *table, size_t tlen)
{
    ssize_t  d = slc_sql_name_raw(dst, db, dblen), t;

    if (d < 0) {
        return -1;
    }
    dst[d] = '.';
    t = slc_sql_name_raw(dst + d + 1, table, tlen);
    return t < 0 ? -1 : d + 1 + t;
}

/* The key of name nm at dst; its length, or -1. */
static ssize_t
slc_sql_key_make(char *dst, const uint8_t *q, const slc_sql_name_t *nm,
    const slc_str_t *db, size_t *db_len)
{
    ssize_t  d, t;

    if (nm->db_len > 0) {
        d = slc_sql_name_copy(dst, q + nm->db_off, nm->db_len);
        if (d < 0) {
            return -1;
        }
    } else {
        memcpy(dst, db->data, db->len);
        d = (ssize_t) db->len;
    }
    dst[d] = '.';
    t = slc_sql_name_copy(dst + d + 1, q + nm->off, nm->len);
    *db_len = (size_t) d;
    return t < 0 ? -1 : d + 1 + t;
}

static int
slc_sql_key_seen(const slc_sql_keys_t *out, const char *k, size_t n)
{
    for (unsigned i = 0; i < out->n; i++) {
        if (out->key[i].len == n && memcmp(out->key[i].data, k, n) == 0) {
            return 1;
        }
    }
    return 0;
}

int
slc_sql_table_keys(const uint8_t *q, const slc_sql_info_t *si,
    const char *db, size_t db_len, slc_sql_keys_t *out)
{
    char     *p = out->buf;
    ssize_t   n;

    out->n = 0;
    out->db.data = p;
    n = slc_sql_name_copy(p, (const uint8_t *) (db ? db : ""),
                            db ? db_len : 0);
    if (n < 0) {
        out->db.len = 0;
        p[0] = '\0';
        return SLC_ERROR;
    }
    out->db.len = (size_t) n;
    p += n + 1;
    for (unsigned i = 0; i < si->ntables; i++) {
        size_t  dl;

        n = slc_sql_key_make(p, q, &si->tables[i], &out->db, &dl);
        if (n < 0) {
            return SLC_ERROR;
        }
        if (slc_sql_key_seen(out, p, (size_t) n)) {
            continue;
        }
        out->key[out->n] = (slc_str_t) { (size_t) n, p };
        out->db_len[out->n++] = dl;
        p += n + 1;
    }
    return SLC_OK;
}
