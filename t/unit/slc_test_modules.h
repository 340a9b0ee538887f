#ifndef SLC_TEST_MODULES_H
#define SLC_TEST_MODULES_H

/*
 * What ./configure generates in objs/slc_modules.c, for a unit test that
 * links its own module list: the modules (NULL-terminated here), none
 * left out, and their names for messages.  At file scope:
 *
 *     SLC_TEST_MODULES("core mysql", &slc_core_module, &slc_mysql_module);
 */

#include "slc_module.h"

#define SLC_TEST_MODULES(names, ...)                                        \
    slc_module_t  *slc_modules[] = { __VA_ARGS__, NULL };                   \
    const slc_excluded_directive_t  slc_conf_excluded[] = {                 \
        { NULL, NULL }                                                      \
    };                                                                      \
    const char  slc_configure_args[] = "--test";                            \
    const char  slc_module_names[] = names;                                 \
    const char  slc_module_excluded_names[] = ""

#endif /* SLC_TEST_MODULES_H */
