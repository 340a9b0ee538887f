#ifndef SLC_STATUS_CLI_H
#define SLC_STATUS_CLI_H

#include "slc_core.h"
#include "slc_cycle.h"

/*
 * The status module's print_status hook (`sluice -s status`, and `-s
 * stats`): GET /status/text from the status_listen of the configuration
 * the command read, its body to stdout.  SLC_DONE without a status_listen;
 * SLC_ERROR (err says why) when the listener cannot be reached, does not
 * answer 200 within status_timeout, or answers more than 16 MiB.
 */
int slc_status_print(slc_cycle_t *cycle, char *err, size_t errlen);

#endif /* SLC_STATUS_CLI_H */
