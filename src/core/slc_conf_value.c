#include <limits.h>

#include "slc_conf_file.h"

/*
 * Value parsers for configuration words.  Each takes the whole word and
 * returns -1 unless all of it is valid: no sign, no spaces, no trailing
 * garbage, and a result that fits in a long long.
 */

/*
 * Reads the decimal number at s->data[*pos], advancing *pos.  -1 if there is
 * no digit there or the number overflows.
 */
static long long
slc_conf_read_number(const slc_str_t *s, size_t *pos)
{
    long long  n;
    size_t     i;
    int        d;

    n = 0;
    for (i = *pos; i < s->len && s->data[i] >= '0' && s->data[i] <= '9'; i++) {
        d = s->data[i] - '0';
        if (n > (LLONG_MAX - d) / 10) {
            return -1;
        }
        n = n * 10 + d;
    }

    if (i == *pos) {
        return -1;
    }

    *pos = i;
    return n;
}

/* n * mult, or -1 on overflow; both are non-negative. */
static long long
slc_conf_scale(long long n, long long mult)
{
    if (n > LLONG_MAX / mult) {
        return -1;
    }
    return n * mult;
}

long long
slc_conf_parse_int(const slc_str_t *s)
{
    size_t     pos;
    long long  n;

    pos = 0;
    n = slc_conf_read_number(s, &pos);
    if (n < 0 || pos != s->len) {
        return -1;
    }
    return n;
}

long long
slc_conf_parse_size(const slc_str_t *s)
{
    size_t     pos;
    long long  n, mult;

    pos = 0;
    n = slc_conf_read_number(s, &pos);
    if (n < 0) {
        return -1;
    }

    if (pos == s->len) {
        return n;
    }

    if (pos + 1 != s->len) {
        return -1;
    }

    switch (s->data[pos]) {
    case 'k': case 'K': mult = 1024LL; break;
    case 'm': case 'M': mult = 1024LL * 1024; break;
    case 'g': case 'G': mult = 1024LL * 1024 * 1024; break;
    default:
        return -1;
    }

    return slc_conf_scale(n, mult);
}

/*
 * Time units, largest first.  A value must use them in this order, each at
 * most once ("1m30s", not "30s1m" nor "1s1s"), which catches most typos.
 */
static const struct {
    const char  *name;
    long long    msec;
} slc_conf_time_units[] = {
    { "d",  24LL * 60 * 60 * 1000 },
    { "h",  60LL * 60 * 1000 },
    { "m",  60LL * 1000 },
    { "s",  1000 },
    { "ms", 1 },
};

/*
 * The index of the unit at s->data[*pos] (advancing *pos past it), or -1.
 * "ms" is tried before "m": "5ms" can never mean five minutes and a second
 * with no number.
 */
static int
slc_conf_read_unit(const slc_str_t *s, size_t *pos)
{
    size_t  left, len;
    int     i;

    left = s->len - *pos;
    for (i = (int) slc_nelems(slc_conf_time_units) - 1; i >= 0; i--) {
        len = strlen(slc_conf_time_units[i].name);
        if (len <= left
            && memcmp(s->data + *pos, slc_conf_time_units[i].name, len) == 0)
        {
            *pos += len;
            return i;
        }
    }
    return -1;
}

/*
 * A bare number means seconds, but only on its own: "1m30" is rejected as
 * ambiguous rather than guessed.
 */
long long
slc_conf_parse_msec(const slc_str_t *s)
{
    size_t     pos;
    long long  n, total;
    int        unit, prev;

    pos = 0;
    n = slc_conf_read_number(s, &pos);
    if (n < 0) {
        return -1;
    }
    if (pos == s->len) {
        return slc_conf_scale(n, 1000);
    }

    total = 0;
    prev = -1;
    for (;;) {
        unit = slc_conf_read_unit(s, &pos);
        if (unit <= prev) {
            return -1;
        }
        prev = unit;

        n = slc_conf_scale(n, slc_conf_time_units[unit].msec);
        if (n < 0 || n > LLONG_MAX - total) {
            return -1;
        }
        total += n;

        if (pos == s->len) {
            return total;
        }

        n = slc_conf_read_number(s, &pos);
        if (n < 0) {
            return -1;
        }
    }
}

int
slc_conf_parse_signed(const slc_str_t *s, long long min, long long max,
    long long *out)
{
    int        neg = s->len > 0 && s->data[0] == '-';
    slc_str_t  digits = { s->len - neg, s->data + neg };
    long long  n = slc_conf_parse_int(&digits);

    if (n < 0) {
        return SLC_ERROR;
    }
    *out = neg ? -n : n;
    return *out >= min && *out <= max ? SLC_OK : SLC_ERROR;
}

int
slc_conf_parse_param(const slc_str_t *arg, const char *name, long long min,
    long long max, long long *out)
{
    size_t    n = strlen(name);
    slc_str_t v;

    if (arg->len <= n || strncmp(arg->data, name, n) != 0
        || arg->data[n] != '=')
    {
        return 0;
    }
    v.data = arg->data + n + 1;
    v.len = arg->len - n - 1;
    *out = slc_conf_parse_int(&v);
    return *out >= min && *out <= max ? 1 : -1;
}
