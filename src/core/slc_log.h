#ifndef SLC_LOG_H
#define SLC_LOG_H

#include "slc_core.h"

/*
 * The error log.  One line per event, written with a single write(2) on an
 * O_APPEND descriptor so lines of several processes never interleave:
 *   2026/11/22 04:25:26 [notice] 1234: *17 message
 * Before a log file is open, lines go to stderr.  Passwords, scrambles and
 * auth responses are never passed to these functions.
 */

#define SLC_LOG_EMERG   0
#define SLC_LOG_ALERT   1
#define SLC_LOG_CRIT    2
#define SLC_LOG_ERR     3
#define SLC_LOG_WARN    4
#define SLC_LOG_NOTICE  5
#define SLC_LOG_INFO    6
#define SLC_LOG_DEBUG   7

extern int  slc_log_level;

int  slc_log_level_parse(const char *name);    /* -1 if unknown */
/* Open (or re-open) `path`; the old descriptor is replaced atomically. */
int  slc_log_open(const char *path, char *err, size_t errlen);
int  slc_log_reopen(void);

void slc_log(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void slc_log_errno(int level, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * A warning that many clients can trigger at once (a limit reached) is
 * logged at most once a second, not once per client: slc_log_burst() says
 * whether a line is due at `now` (ms) and, if so, how many events were
 * held back since the last line.  One slc_log_burst_t per limit, zeroed.
 */
typedef struct {
    uint64_t  next;     /* no line before this time (ms) */
    unsigned  held;     /* events since the last line, not logged */
} slc_log_burst_t;

int  slc_log_burst(slc_log_burst_t *b, uint64_t now, unsigned *held);

#define slc_log_enabled(level)  ((level) <= slc_log_level)

/*
 * Escape bytes a peer sent before they are logged: every byte outside
 * printable ASCII becomes \xHH, and so do '"' and '\\' when `quoted` (the
 * text is logged between double quotes), so a newline cannot forge a line,
 * an escape sequence cannot reach a terminal and a quote cannot end the
 * field early.  Writes at most cap - 1 bytes and a NUL, never a cut escape;
 * returns the length written.  Sizing: 4 * len + 1 holds everything.
 */
size_t slc_log_escape(char *dst, size_t cap, const void *src, size_t len,
    int quoted);

#ifdef SLC_DEBUG
#define slc_log_debug(...)                                                   \
    do { if (slc_log_enabled(SLC_LOG_DEBUG)) slc_log(SLC_LOG_DEBUG,          \
        __VA_ARGS__); } while (0)
#else
#define slc_log_debug(...)  do { } while (0)
#endif

#endif /* SLC_LOG_H */
