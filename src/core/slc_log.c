#include "slc_core.h"
#include "slc_log.h"

#include <fcntl.h>
#include <time.h>

int slc_log_level = SLC_LOG_NOTICE;

static int          slc_log_fd = -1;
static char         slc_log_path[4096];

static const char  *slc_log_names[] = {
    "emerg", "alert", "crit", "error", "warn", "notice", "info", "debug"
};

int
slc_log_level_parse(const char *name)
{
    for (size_t i = 0; i < slc_nelems(slc_log_names); i++) {
        if (strcmp(name, slc_log_names[i]) == 0) {
            return (int) i;
        }
    }
    return -1;
}

int
slc_log_open(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd == -1) {
        snprintf(err, errlen, "open() \"%s\" failed (%s)", path,
            strerror(errno));
        return SLC_ERROR;
    }
    if (slc_log_fd != -1) {
        /* dup2 keeps the number, so nothing ever sees a closed log fd */
        dup2(fd, slc_log_fd);
        close(fd);
    } else {
        slc_log_fd = fd;
    }
    strlcpy(slc_log_path, path, sizeof(slc_log_path));
    return SLC_OK;
}

int
slc_log_reopen(void)
{
    char err[256];

    if (slc_log_path[0] == '\0') {
        return SLC_OK;
    }
    if (slc_log_open(slc_log_path, err, sizeof(err)) != SLC_OK) {
        slc_log(SLC_LOG_ALERT, "%s", err);
        return SLC_ERROR;
    }
    return SLC_OK;
}

size_t
slc_log_escape(char *dst, size_t cap, const void *src, size_t len,
    int quoted)
{
    static const char  hex[] = "0123456789abcdef";
    const uint8_t     *p = src;
    size_t             n = 0;

    if (cap == 0) {
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        uint8_t  c = p[i];
        int      plain = c >= 0x20 && c < 0x7f
                         && !(quoted && (c == '"' || c == '\\'));

        if (n + (plain ? 1 : 4) >= cap) {
            break;
        }
        if (plain) {
            dst[n++] = (char) c;
            continue;
        }
        dst[n++] = '\\';
        dst[n++] = 'x';
        dst[n++] = hex[c >> 4];
        dst[n++] = hex[c & 0xf];
    }
    dst[n] = '\0';
    return n;
}

/*
 * The last line of defence: a control byte that reached a log line through
 * a message nobody escaped is replaced, so one line stays one line.
 */
static void
slc_log_defuse(char *line, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if ((uint8_t) line[i] < 0x20 || (uint8_t) line[i] == 0x7f) {
            line[i] = '?';
        }
    }
}

static void
slc_log_write(int level, int err, const char *fmt, va_list ap)
{
    char        line[2048];
    struct tm   tm;
    time_t      now = time(NULL);
    size_t      n;

    localtime_r(&now, &tm);
    n = strftime(line, sizeof(line), "%Y/%m/%d %H:%M:%S ", &tm);
    n += snprintf(line + n, sizeof(line) - n, "[%s] %d: ",
        slc_log_names[level], (int) getpid());
    if (n < sizeof(line)) {
        int k = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
        n = k < 0 ? n : slc_min(n + (size_t) k, sizeof(line) - 1);
    }
    if (err && n < sizeof(line)) {
        int k = snprintf(line + n, sizeof(line) - n, " (%d: %s)", err,
            strerror(err));
        n = k < 0 ? n : slc_min(n + (size_t) k, sizeof(line) - 1);
    }
    if (n >= sizeof(line) - 1) {
        n = sizeof(line) - 2;
    }
    slc_log_defuse(line, n);
    line[n++] = '\n';

    if (slc_log_fd != -1) {
        (void) !write(slc_log_fd, line, n);
    }
    if (slc_log_fd == -1) {
        (void) !write(STDERR_FILENO, line, n);
    }
}

void
slc_log(int level, const char *fmt, ...)
{
    va_list ap;

    if (!slc_log_enabled(level)) {
        return;
    }
    va_start(ap, fmt);
    slc_log_write(level, 0, fmt, ap);
    va_end(ap);
}

void
slc_log_errno(int level, int err, const char *fmt, ...)
{
    va_list ap;

    if (!slc_log_enabled(level)) {
        return;
    }
    va_start(ap, fmt);
    slc_log_write(level, err, fmt, ap);
    va_end(ap);
}

int
slc_log_burst(slc_log_burst_t *b, uint64_t now, unsigned *held)
{
    if (now < b->next) {
        b->held++;
        return 0;
    }
    *held = b->held;
    b->held = 0;
    b->next = now + 1000;
    return 1;
}

void
slc_check_failed(const char *what, const char *file, int line)
{
    slc_log(SLC_LOG_CRIT, "%s:%d: %s is not what it should be (freed, or "
        "another object): stopping the process", file, line, what);
    abort();
}
