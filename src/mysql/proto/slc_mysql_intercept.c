/*
 * The client-side command scanner and the KILL statement recogniser
 * (contract in slc_mysql_intercept.h).  Pure: no I/O, no logging.
 */

#include "slc_core.h"
#include "slc_mysql_codec.h"
#include "slc_mysql_intercept.h"
#include "slc_mysql_proto.h"

#include <ctype.h>

int
slc_mysql_scan_watched(unsigned watch, const uint8_t *pl, size_t avail)
{
    switch (pl[0]) {
    case SLC_COM_QUERY:
        return (watch & SLC_WATCH_KILL)
               ? slc_mysql_kill_maybe(pl + 1, avail - 1) : 0;
    case SLC_COM_PROCESS_KILL:
        return (watch & SLC_WATCH_KILL) ? 2 : 0;
    case SLC_COM_CHANGE_USER:
        return (watch & SLC_WATCH_CHANGE_USER) ? 2 : 0;
    default:
        return 0;
    }
}

/*
 * A command begins at q (its header: payload plen; avail bytes at hand):
 * SLC_SCAN_ALL when it may go on, else where the scan stops before it
 * (sc->big: it is larger than a buffer holds).
 */
static int
slc_mysql_scan_command(slc_mysql_scan_t *sc, unsigned watch,
    const uint8_t *q, size_t avail, uint32_t plen, size_t max_held)
{
    size_t need = (size_t) plen + SLC_MYSQL_HDR_LEN;
    int    w;

    if (avail == SLC_MYSQL_HDR_LEN) {
        return SLC_SCAN_MORE;           /* the command byte is to come */
    }
    if (watch & SLC_WATCH_ALL) {
        /* every command stops, with as much of it as a buffer holds */
        sc->big = need > max_held;
        return avail >= slc_min(need, max_held) ? SLC_SCAN_CMD
                                                : SLC_SCAN_MORE;
    }
    w = slc_mysql_scan_watched(watch, q + 4,
        slc_min((size_t) plen, avail - 4));
    if (w != 0 && need > max_held) {
        if (q[4] == SLC_COM_CHANGE_USER) {
            sc->big = 1;
            return SLC_SCAN_CMD;
        }
        w = 0;                          /* too long to be a KILL we read */
    }
    if (w != 0 && need > avail) {
        return SLC_SCAN_MORE;
    }
    return w == 2 ? SLC_SCAN_CMD : SLC_SCAN_ALL;
}

size_t
slc_mysql_scan_client(slc_mysql_scan_t *sc, int infile, unsigned watch,
    const uint8_t *p, size_t len, size_t max_held, int *stop)
{
    size_t    off = 0;
    uint32_t  plen;

    *stop = SLC_SCAN_ALL;
    sc->big = 0;
    for ( ;; ) {
        size_t k = slc_min((size_t) sc->left, len - off);

        off += k;
        sc->left -= (uint32_t) k;
        if (sc->left > 0 || off == len) {
            return off;
        }
        /* at a packet boundary */
        if (len - off < SLC_MYSQL_HDR_LEN) {
            *stop = SLC_SCAN_MORE;      /* a header cut short */
            return off;
        }
        plen = (uint32_t) slc_mysql_le_get(p + off, 3);
        if (!sc->more && !infile && p[off + 3] == 0 && plen > 0
            && (*stop = slc_mysql_scan_command(sc, watch, p + off, len - off,
                                               plen, max_held))
               != SLC_SCAN_ALL)
        {
            return off;
        }
        if (infile && plen == 0) {
            infile = 0;                 /* the empty packet ends the file */
        }
        sc->more = plen == SLC_MYSQL_MAX_PAYLOAD;
        sc->left = plen;
        off += SLC_MYSQL_HDR_LEN;
    }
}

void
slc_mysql_scan_pass(slc_mysql_scan_t *sc, uint32_t plen, size_t taken)
{
    sc->left = (uint32_t) ((size_t) plen + SLC_MYSQL_HDR_LEN - taken);
    sc->more = plen == SLC_MYSQL_MAX_PAYLOAD;
    sc->big = 0;
}

void
slc_mysql_scan_skip(slc_mysql_scan_t *sc)
{
    sc->left = 0;
    sc->more = 0;
    sc->big = 0;
}


/* --- KILL --------------------------------------------------------------- */

/*
 * An executable comment (slash, star, '!'; MariaDB's slash, star, 'M!')
 * holds words the server runs: in KILL, one that holds QUERY kills a
 * query, not the connection.  A rewrite would drop it, so it is not a
 * blank but a token, and no KILL holding one parses.
 */
static int
slc_mysql_kill_exec(const uint8_t *q, size_t n, size_t i)
{
    return (i + 2 < n && q[i + 2] == '!')
           || (i + 3 < n && q[i + 2] == 'M' && q[i + 3] == '!');
}

/*
 * Skip blanks and comments.  Returns the offset of the next token, or n
 * when the text ends (also inside an unterminated comment); sets *open
 * when it ended inside a block comment or on what may start a comment
 * ("/", "-", "--").
 */
static size_t
slc_mysql_kill_blank(const uint8_t *q, size_t n, size_t i, int *open)
{
    *open = 0;
    while (i < n) {
        if (isspace(q[i])) {
            i++;
        } else if (q[i] == '#'
                   || (q[i] == '-' && i + 2 < n && q[i + 1] == '-'
                       && isspace(q[i + 2])))
        {
            while (i < n && q[i] != '\n') {
                i++;
            }
        } else if (q[i] == '/' && i + 1 < n && q[i + 1] == '*') {
            const uint8_t *e = NULL;

            if (slc_mysql_kill_exec(q, n, i)) {
                break;
            }
            for (size_t j = i + 2; j + 1 < n; j++) {
                if (q[j] == '*' && q[j + 1] == '/') {
                    e = q + j;
                    break;
                }
            }
            if (e == NULL) {
                *open = 1;
                return n;
            }
            i = (size_t) (e - q) + 2;
        } else if ((q[i] == '/' && i + 1 >= n)
                   || (q[i] == '-' && i + 2 >= n
                       && (i + 1 >= n || q[i + 1] == '-')))
        {
            *open = 1;                  /* a comment may start here */
            return n;
        } else {
            break;
        }
    }
    return i;
}

/* The word at q[i] (letters only), case-insensitive. */
static int
slc_mysql_kill_word(const uint8_t *q, size_t n, size_t *i, const char *w)
{
    size_t l = strlen(w);

    if (n - *i < l || strncasecmp((const char *) q + *i, w, l) != 0
        || (*i + l < n && (isalnum(q[*i + l]) || q[*i + l] == '_'
                           || q[*i + l] == '$')))
    {
        return 0;
    }
    *i += l;
    return 1;
}

int
slc_mysql_kill_maybe(const uint8_t *q, size_t n)
{
    int     open;
    size_t  i = slc_mysql_kill_blank(q, n, 0, &open);

    if (i == n) {
        return 1;
    }
    if (n - i < 5) {
        return strncasecmp((const char *) q + i, "kill", n - i) == 0
               ? 1 : 0;
    }
    return slc_mysql_kill_word(q, n, &i, "kill") ? 2 : 0;
}

int
slc_mysql_kill_parse(const uint8_t *q, size_t n, slc_mysql_kill_t *k)
{
    int       open;
    size_t    i = 0, d;
    uint64_t  id = 0;

    memset(k, 0, sizeof(*k));
    k->mode = "";
    i = slc_mysql_kill_blank(q, n, i, &open);
    if (!slc_mysql_kill_word(q, n, &i, "kill")) {
        return SLC_ERROR;
    }
    i = slc_mysql_kill_blank(q, n, i, &open);
    if (slc_mysql_kill_word(q, n, &i, "hard")) {
        k->mode = "HARD ";
    } else if (slc_mysql_kill_word(q, n, &i, "soft")) {
        k->mode = "SOFT ";
    }
    i = slc_mysql_kill_blank(q, n, i, &open);
    if (slc_mysql_kill_word(q, n, &i, "query")) {
        k->query = 1;
    } else {
        (void) slc_mysql_kill_word(q, n, &i, "connection");
    }
    i = slc_mysql_kill_blank(q, n, i, &open);
    for (d = i; i < n && isdigit(q[i]) && i - d < 20; i++) {
        id = id * 10 + (uint64_t) (q[i] - '0');
    }
    if (i == d || i - d >= 20
        || (i < n && (isalnum(q[i]) || q[i] == '_' || q[i] == '.')))
    {
        return SLC_ERROR;               /* QUERY ID n, USER x, an expression */
    }
    i = slc_mysql_kill_blank(q, n, i, &open);
    if (i < n && q[i] == ';') {
        i = slc_mysql_kill_blank(q, n, i + 1, &open);
    }
    if (i != n || open) {
        return SLC_ERROR;
    }
    k->id = id;
    return SLC_OK;
}
