/*
 * The built-in function names (slc_sql_builtins.h): the classifier asks
 * once for every unreserved word followed by "(", so the lookup is a hash
 * of the upper-cased name and a probe or two, as for its keywords.
 */

#include "slc_sql_builtins.h"

#include <string.h>

#include "slc_hash.h"


static const char *const  slc_sql_builtins[] = {
#include "slc_sql_builtins.inc"
};

#define SLC_SQL_BUILTIN_MAX  64         /* longer names are none of them */
#define SLC_SQL_BHASH        2048       /* a power of two, over twice the
                                           names */

static uint16_t  slc_sql_bhash[SLC_SQL_BHASH];  /* index + 1, 0: empty */
static int       slc_sql_bhash_built;

uint32_t
slc_sql_upcase(const uint8_t *q, size_t len, char *up)
{
    for (size_t i = 0; i < len; i++) {
        up[i] = (char) ((q[i] >= 'a' && q[i] <= 'z') ? q[i] - 32 : q[i]);
    }
    return slc_hash_key(up, len);
}

/* Built on first use; every process builds the same. */
static void
slc_sql_bhash_build(void)
{
    for (size_t i = 0; i < slc_nelems(slc_sql_builtins); i++) {
        const char *s = slc_sql_builtins[i];
        uint32_t    h = slc_hash_key(s, strlen(s)) & (SLC_SQL_BHASH - 1);

        while (slc_sql_bhash[h] != 0) {
            h = (h + 1) & (SLC_SQL_BHASH - 1);
        }
        slc_sql_bhash[h] = (uint16_t) (i + 1);
    }
    slc_sql_bhash_built = 1;
}

int
slc_sql_builtin_find(const uint8_t *q, size_t len)
{
    char      up[SLC_SQL_BUILTIN_MAX];
    uint32_t  h;

    if (len == 0 || len >= SLC_SQL_BUILTIN_MAX) {
        return 0;
    }
    if (!slc_sql_bhash_built) {
        slc_sql_bhash_build();
    }
    for (h = slc_sql_upcase(q, len, up) & (SLC_SQL_BHASH - 1);
         slc_sql_bhash[h] != 0;
         h = (h + 1) & (SLC_SQL_BHASH - 1))
    {
        const char *s = slc_sql_builtins[slc_sql_bhash[h] - 1];

        if (strncmp(s, up, len) == 0 && s[len] == '\0') {
            return 1;
        }
    }
    return 0;
}

int
slc_sql_builtins_check(void)
{
    char  lower[SLC_SQL_BUILTIN_MAX];

    if (slc_nelems(slc_sql_builtins) * 2 > SLC_SQL_BHASH) {
        return 0;
    }
    for (size_t i = 0; i < slc_nelems(slc_sql_builtins); i++) {
        const char *s = slc_sql_builtins[i];
        size_t      n = strlen(s);

        if ((i > 0 && strcmp(slc_sql_builtins[i - 1], s) >= 0)
            || n >= SLC_SQL_BUILTIN_MAX
            || !slc_sql_builtin_find((const uint8_t *) s, n))
        {
            return 0;
        }
        for (size_t k = 0; k < n; k++) {
            lower[k] = (char) (s[k] >= 'A' && s[k] <= 'Z' ? s[k] + 32 : s[k]);
        }
        if (!slc_sql_builtin_find((const uint8_t *) lower, n)) {
            return 0;
        }
    }
    return 1;
}
