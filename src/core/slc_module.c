#include "slc_core.h"
#include "slc_module.h"

/* Lookups in the module list that ./configure generated. */

int
slc_module_index(const slc_module_t *m)
{
    if (m->ctx_index > 0) {
        return m->ctx_index - 1;
    }
    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i] == m) {
            slc_modules[i]->ctx_index = i + 1;
            return i;
        }
    }
    return -1;
}

const slc_module_t *
slc_module_named(const char *name)
{
    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (strcmp(slc_modules[i]->name, name) == 0) {
            return slc_modules[i];
        }
    }
    return NULL;
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
slc_module_reap_process(slc_cycle_t *cycle, pid_t pid, unsigned proc)
{
    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i]->reap_pid != NULL) {
            slc_modules[i]->reap_pid(cycle, pid);
        }
        if (slc_modules[i]->reap_process != NULL) {
            slc_modules[i]->reap_process(cycle, proc);
        }
    }
}

void
slc_module_report(slc_cycle_t *cycle)
{
    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i]->report != NULL) {
            slc_modules[i]->report(cycle);
        }
    }
}

int
slc_module_print_status(slc_cycle_t *cycle, char *err, size_t errlen)
{
    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i]->print_status != NULL) {
            int rc = slc_modules[i]->print_status(cycle, err, errlen);

            if (rc != SLC_DONE) {
                return rc;
            }
        }
    }
    return SLC_DONE;
}

void
slc_module_init_process(slc_cycle_t *cycle, const slc_role_t *role)
{
    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i]->init_process != NULL) {
            slc_modules[i]->init_process(cycle, role);
        }
    }
}

void
slc_module_exit_process(slc_cycle_t *cycle, const slc_role_t *role)
{
    int n = 0;

    while (slc_modules[n] != NULL) {
        n++;
    }
    while (n-- > 0) {
        if (slc_modules[n]->exit_process != NULL) {
            slc_modules[n]->exit_process(cycle, role);
        }
    }
}

unsigned
slc_module_conn_count(void)
{
    unsigned n = 0;

    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i]->conn_count != NULL) {
            n += slc_modules[i]->conn_count();
        }
    }
    return n;
}

void
slc_module_close_idle(void)
{
    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i]->close_idle != NULL) {
            slc_modules[i]->close_idle();
        }
    }
}

void
slc_module_handover(void)
{
    for (int i = 0; slc_modules[i] != NULL; i++) {
        if (slc_modules[i]->handover != NULL) {
            slc_modules[i]->handover();
        }
    }
}
