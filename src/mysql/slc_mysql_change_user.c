#include "slc_core.h"
#include "slc_mysql_command.h"

int
slc_command_change_user(slc_session_t *s, const uint8_t *pl, uint32_t len)
{
    (void) pl; (void) len;
    return slc_command_pass(s);
}
