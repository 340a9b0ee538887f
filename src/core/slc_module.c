#include "slc_core.h"
#include "slc_module.h"

/* Lookups in the module list that ./configure generated. */

int
slc_module_index(const slc_module_t *m)
{
    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i] == m) {
            return i;
        }
    }
    return -1;
}

int
slc_module_excluded(const char *name)
{
    const char *p = slc_module_excluded_names;
    size_t      n = strlen(name);

    while ((p = strstr(p, name)) != NULL) {
        if (p[-1] == ' ' && (p[n] == ' ' || p[n] == '\0')) {
            return 1;
        }
        p += n;
    }
    return 0;
}

void
slc_module_reap_process(slc_cycle_t *cycle, unsigned proc)
{
    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i]->reap_process != NULL) {
            slc_modules[i]->reap_process(cycle, proc);
        }
    }
}
