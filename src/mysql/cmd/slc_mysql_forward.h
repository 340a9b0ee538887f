#ifndef SLC_MYSQL_FORWARD_H
#define SLC_MYSQL_FORWARD_H

#include "slc_core.h"
#include "slc_mysql_session.h"

/*
 * The cmd floor's side of a session (slc_mysql_forward.c): the hooks the
 * session calls once it forwards (slc_session_forward_t), for command
 * mode (slc_mysql_cmd.c) and the byte pump (slc_mysql_pump.c) alike.
 * The mysql module installs them in every process
 * (slc_session_forward_set), so that the session floor names nothing of
 * this one.
 */
extern const slc_session_forward_t  slc_forward;

#endif /* SLC_MYSQL_FORWARD_H */
