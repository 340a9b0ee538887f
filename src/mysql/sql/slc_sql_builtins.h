#ifndef SLC_SQL_BUILTINS_H
#define SLC_SQL_BUILTINS_H

#include "slc_core.h"

/*
 * The names MariaDB 10.11 never takes for a stored function's when "("
 * follows them unquoted and unqualified: its built-in functions (CONCAT,
 * COUNT, JSON_EXTRACT, ST_DISTANCE...) and the words of its grammar
 * (IN, OVER, PARTITION, AND, VARCHAR...).  The list is the server's own
 * answer, made by contrib/builtins.sh.  A name it lacks (a built-in of a
 * later version, a UDF, a plugin's function) is taken for a stored
 * function: the cache then keeps the statement out, which is only slower.
 */

/*
 * q[0..len) upper-cased (ASCII letters) into up, and the hash of that
 * (slc_hash_key), by which this list and the classifier's keywords are
 * found.
 */
uint32_t slc_sql_upcase(const uint8_t *q, size_t len, char *up);

/* 1 when q[0..len) (any case) is such a name, else 0. */
int  slc_sql_builtin_find(const uint8_t *q, size_t len);

/* For the unit test: the list is in order, without repeats, and the hash
   finds every name in either case. */
int  slc_sql_builtins_check(void);

#endif /* SLC_SQL_BUILTINS_H */
