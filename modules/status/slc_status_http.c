/*
 * The status listener's HTTP requests (slc_status_http.h): GET and HEAD
 * of a path, nothing more.  Strict where laxness would let a peer smuggle
 * or hold something: a body of any kind (Content-Length other than 0,
 * Transfer-Encoding), folded headers, a CR not followed by LF and bytes
 * outside a token where a token belongs are refused; lines may end in
 * CRLF or a bare LF.  Pure: the caller reads, bounds and answers.
 */

#include "slc_core.h"
#include "slc_status_http.h"

/* RFC 9110's tchar. */
static int
slc_status_tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c >= '0' && c <= '9') || strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* The end of the head (after its blank line) within p[0..len): 0 if not
   there yet; -400 for a CR without its LF. */
static long
slc_status_http_end(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '\r' && (i + 1 < len && p[i + 1] != '\n')) {
            return -400;
        }
        if (p[i] != '\n') {
            continue;
        }
        if (i + 1 < len && p[i + 1] == '\n') {
            return (long) i + 2;
        }
        if (i + 2 < len && p[i + 1] == '\r' && p[i + 2] == '\n') {
            return (long) i + 3;
        }
    }
    return 0;
}

/* The line at *pp ending before `end`: its length without CR LF, *pp
   moved past it. */
static size_t
slc_status_http_line(const char **pp, const char *end, const char **line)
{
    const char *p = *pp, *nl = memchr(p, '\n', (size_t) (end - p));
    size_t      n;

    nl = nl != NULL ? nl : end;
    n = (size_t) (nl - p);
    if (n > 0 && p[n - 1] == '\r') {
        n--;
    }
    *line = p;
    *pp = nl < end ? nl + 1 : end;
    return n;
}

static int
slc_status_http_request_line(const char *l, size_t n, slc_status_req_t *req,
    int *http10)
{
    size_t m = 0, t, tlen;

    while (m < n && slc_status_tchar(l[m])) {
        m++;
    }
    if (m == 0 || m == n || l[m] != ' ') {
        return -400;
    }
    if (m == 3 && memcmp(l, "GET", 3) == 0) {
        req->head = 0;
    } else if (m == 4 && memcmp(l, "HEAD", 4) == 0) {
        req->head = 1;
    } else {
        return -405;
    }
    for (t = m + 1, tlen = 0; t + tlen < n && l[t + tlen] != ' '; tlen++) {
        if ((unsigned char) l[t + tlen] <= 0x20 || l[t + tlen] == 0x7f) {
            return -400;
        }
    }
    if (tlen == 0 || l[t] != '/' || t + tlen == n) {
        return -400;
    }
    if (tlen >= SLC_STATUS_PATH_MAX) {
        return -414;
    }
    memcpy(req->path, l + t, tlen);
    req->path[tlen] = '\0';
    req->path[strcspn(req->path, "?#")] = '\0';
    l += t + tlen + 1;
    n -= t + tlen + 1;
    if (n != 8 || memcmp(l, "HTTP/", 5) != 0 || l[6] != '.'
        || l[5] < '0' || l[5] > '9' || l[7] < '0' || l[7] > '9')
    {
        return -400;                /* not HTTP/D.D */
    }
    if (l[5] != '1' || l[7] > '1') {
        return -505;
    }
    *http10 = l[7] == '0';
    return 0;
}

/* Whether header value v[0..n) holds token tok, case-insensitively. */
static int
slc_status_http_has(const char *v, size_t n, const char *tok)
{
    size_t t = strlen(tok);

    for (size_t i = 0; i + t <= n; i++) {
        if (strncasecmp(v + i, tok, t) == 0) {
            return 1;
        }
    }
    return 0;
}

static int
slc_status_http_header(const char *l, size_t n, slc_status_req_t *req,
    int *keep)
{
    size_t m = 0, v;

    while (m < n && slc_status_tchar(l[m])) {
        m++;
    }
    if (m == 0 || m == n || l[m] != ':') {
        return -400;                /* folded, or not a header */
    }
    for (v = m + 1; v < n && (l[v] == ' ' || l[v] == '\t'); v++) {
        /* the value's leading blanks */
    }
    if ((m == 14 && strncasecmp(l, "Content-Length", 14) == 0
         && !(n - v == 1 && l[v] == '0'))
        || (m == 17 && strncasecmp(l, "Transfer-Encoding", 17) == 0))
    {
        return -400;                /* a body: not for GET here */
    }
    if (m == 10 && strncasecmp(l, "Connection", 10) == 0) {
        if (slc_status_http_has(l + v, n - v, "close")) {
            req->close = 1;
        }
        if (slc_status_http_has(l + v, n - v, "keep-alive")) {
            *keep = 1;
        }
    }
    return 0;
}

int
slc_status_http_parse(const char *p, size_t len, slc_status_req_t *req)
{
    long        end = slc_status_http_end(p,
                          slc_min(len, (size_t) SLC_STATUS_HEAD_MAX));
    const char *q = p, *stop, *l;
    size_t      n;
    int         rc, http10 = 0, keep = 0;

    if (end <= 0) {
        return end < 0 ? (int) end
               : len >= SLC_STATUS_HEAD_MAX ? -431 : 0;
    }
    memset(req, 0, sizeof(*req));
    stop = p + end;
    n = slc_status_http_line(&q, stop, &l);
    if ((rc = slc_status_http_request_line(l, n, req, &http10)) != 0) {
        return rc;
    }
    while ((n = slc_status_http_line(&q, stop, &l)) > 0) {
        if ((rc = slc_status_http_header(l, n, req, &keep)) != 0) {
            return rc;
        }
    }
    if (http10 && !keep) {
        req->close = 1;
    }
    return (int) end;
}
