/*
 * Admin commands (slc_admin.h): the levels' names, and finding a line's
 * command in the modules' tables.
 */

#include "slc_core.h"
#include "slc_admin.h"
#include "slc_module.h"

const char *
slc_admin_level_name(unsigned level)
{
    return level == SLC_ADMIN_READ ? "read"
           : level == SLC_ADMIN_OPERATOR ? "operator"
           : level == SLC_ADMIN_ADMIN ? "admin" : "none";
}

void
slc_admin_clean(char *dst, size_t n, const char *src)
{
    size_t i = 0;

    for ( ; i + 1 < n && src[i] != '\0'; i++) {
        unsigned char c = (unsigned char) src[i];

        dst[i] = (char) (c >= 0x20 && c < 0x7f ? c : '?');
    }
    if (n > 0) {
        dst[i] = '\0';
    }
}

uint64_t
slc_admin_number(const char *s, uint64_t max)
{
    uint64_t v = 0;

    if (*s == '\0' || strlen(s) > 19) {
        return 0;
    }
    for ( ; *s != '\0'; s++) {
        if (*s < '0' || *s > '9') {
            return 0;
        }
        v = v * 10 + (uint64_t) (*s - '0');
    }
    return v <= max ? v : 0;
}

/* How many of argv's words `name` is (its words all match), else 0. */
static unsigned
slc_admin_match(const char *name, const char *const *argv, unsigned argc)
{
    unsigned n = 0;

    while (*name != '\0') {
        size_t len = strcspn(name, " ");

        if (n == argc || strlen(argv[n]) != len
            || strncmp(argv[n], name, len) != 0)
        {
            return 0;
        }
        n++;
        name += len;
        name += *name == ' ';
    }
    return n;
}

const slc_admin_command_t *
slc_admin_find(const char *const *argv, unsigned argc, unsigned *words)
{
    const slc_admin_command_t *best = NULL;

    *words = 0;
    for (int i = 0; slc_modules[i] != NULL; i++) {
        for (const slc_admin_command_t *c = slc_modules[i]->admin;
             c != NULL && c->name != NULL; c++)
        {
            unsigned n = slc_admin_match(c->name, argv, argc);

            if (n > *words) {
                best = c;
                *words = n;
            }
        }
    }
    return best;
}
