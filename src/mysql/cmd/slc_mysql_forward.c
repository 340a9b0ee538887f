/*
 * How a logged-in session forwards, for the session floor (interface in
 * slc_mysql_session.h, slc_session_forward_t): command mode when its
 * server block has filters or its router routes per command, else the
 * router's ready() and the byte pump.
 */

#include "slc_core.h"
#include "slc_mysql_cmd.h"
#include "slc_mysql_filter.h"
#include "slc_mysql_forward.h"
#include "slc_mysql_pump.h"
#include "slc_mysql_router.h"

static void
slc_forward_go(slc_session_t *s)
{
    const slc_router_t *rt = slc_mysql_srv_router(s->srv);

    if (slc_cmd_wanted(s->srv)) {
        slc_cmd_start(s);
        return;
    }
    if (rt->ready != NULL) {
        rt->ready(s);
    }
    slc_pump_start(s);
}

static void
slc_forward_resume(slc_session_t *s)
{
    if (s->cmd != NULL) {
        slc_cmd_core_resume(s);
        return;
    }
    slc_pump_start(s);
}

static void
slc_forward_released(slc_session_t *s, const uint8_t *p, size_t n)
{
    if (n > 0) {
        slc_cmd_released(s, p, n);
    }
}

/* The filters' close hooks, then the router's backends. */
static void
slc_forward_close(slc_session_t *s)
{
    slc_cmd_close(s);
    if (slc_mysql_srv_router(s->srv)->close != NULL) {
        slc_mysql_srv_router(s->srv)->close(s);
    }
}

const slc_session_forward_t  slc_forward = {
    .go = slc_forward_go,
    .resume = slc_forward_resume,
    .target = slc_cmd_target,
    .released = slc_forward_released,
    .at_rest = slc_cmd_at_rest,
    .close = slc_forward_close,
    .free = slc_cmd_free,
    .save = slc_cmd_filters_save,
    .stash = slc_cmd_filters_stash,
};
