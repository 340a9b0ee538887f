#ifndef SLC_SQL_KEYS_H
#define SLC_SQL_KEYS_H

/*
 * The tables a classified statement names, as keys "db.table" (the query
 * cache's entries and invalidations, the query rules' match_table and
 * match_schema).  Pure: no allocation, no I/O.
 */

#include "slc_core.h"
#include "slc_sql_classify.h"

/* A name is at most 64 characters, 4 bytes each in utf8mb4. */
#define SLC_SQL_NAME_MAX  256
#define SLC_SQL_KEY_MAX   (2 * SLC_SQL_NAME_MAX + 2)

/*
 * The tables of a statement as "db.table": the default database filled in
 * for an unqualified name (".table" when there is none), backticks removed
 * (a doubled one is one), ASCII letters lowercased (as the server compares
 * names under lower_case_table_names=1; under 0 two tables that differ by
 * case share a key, which only invalidates more), repeats dropped.  The
 * same keys serve a SELECT's entry and a write's invalidation.
 */
typedef struct {
    unsigned   n;
    slc_str_t  key[SLC_SQL_MAX_TABLES];     /* into buf, NUL terminated */
    size_t     db_len[SLC_SQL_MAX_TABLES];  /* key[i]'s database part */
    slc_str_t  db;                          /* the default database, the
                                               same way ("" when none) */
    char       buf[SLC_SQL_MAX_TABLES * SLC_SQL_KEY_MAX
                   + SLC_SQL_NAME_MAX + 1];
} slc_sql_keys_t;

/* SLC_OK, or SLC_ERROR when a name is longer than the server allows (the
   statement fails there; a write's caller invalidates everything). */
int  slc_sql_table_keys(const uint8_t *q, const slc_sql_info_t *si,
    const char *db, size_t db_len, slc_sql_keys_t *out);

/* The key of a table named as the server stores it (a binlog's table
   map: no quotes), into dst (SLC_SQL_KEY_MAX bytes): its length, or -1
   when a name is too long. */
ssize_t slc_sql_table_key_raw(char *dst, const char *db, size_t dblen,
    const char *table, size_t tlen);

#endif /* SLC_SQL_KEYS_H */
