#ifndef SLC_CORE_H
#define SLC_CORE_H

/*
 * Common includes and small helpers for every sluice source file.
 * libbsd is used in overlay mode (-DLIBBSD_OVERLAY -isystem .../bsd), so the
 * plain <string.h>, <stdlib.h>, <sys/queue.h> and <sys/tree.h> carry
 * strlcpy, reallocarray, arc4random_buf and the BSD list/tree macros.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slc_auto_config.h"

#define SLC_OK       0
#define SLC_ERROR   -1
#define SLC_AGAIN   -2
#define SLC_DONE    -3      /* an exchange has ended (not an error) */

#define slc_min(a, b)   ((a) < (b) ? (a) : (b))
#define slc_max(a, b)   ((a) > (b) ? (a) : (b))
#define slc_nelems(a)   (sizeof(a) / sizeof((a)[0]))
/* A macro's value as a string literal. */
#define SLC_STR_(x)     #x
#define SLC_STR(x)      SLC_STR_(x)

/*
 * An object's magic number, checked where it enters a subsystem (a
 * handler, an entry point): a pointer to freed or foreign memory stops the
 * process there, with the place in the log, not three calls later.  Set
 * when the object is made, cleared when it is freed.  Always on: one
 * compare.
 */
#define SLC_CHECK_OBJ(o, m)                                                  \
    do {                                                                     \
        if ((o) == NULL || (o)->magic != (m)) {                              \
            slc_check_failed(#o, __FILE__, __LINE__);                        \
        }                                                                    \
    } while (0)

void slc_check_failed(const char *what, const char *file, int line)
    __attribute__((noreturn, cold));

/* A counted string that does not own its bytes unless said otherwise. */
typedef struct {
    size_t  len;
    char   *data;
} slc_str_t;

#define slc_string(s)   { sizeof(s) - 1, (char *) (s) }

#endif /* SLC_CORE_H */
