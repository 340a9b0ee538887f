#ifndef SLC_STATUS_HTTP_H
#define SLC_STATUS_HTTP_H

/* slc_status_http.c: the status listener's HTTP requests (slc_status.h
   says what it serves). */

#include "slc_core.h"

/*
 * What a request may be: its head (request line and headers) at most
 * SLC_STATUS_HEAD_MAX bytes, no body, a path of at most
 * SLC_STATUS_PATH_MAX bytes.  Anything else is refused with the status
 * code that says why and the connection closed: the parser is the first
 * thing an untrusted peer reaches.
 */
#define SLC_STATUS_HEAD_MAX   8192
#define SLC_STATUS_PATH_MAX   256

typedef struct {
    char        path[SLC_STATUS_PATH_MAX];  /* the target, NUL-ended,
                                               its query cut off */
    unsigned    head:1;         /* HEAD: the headers, no body */
    unsigned    close:1;        /* the client asked (or HTTP/1.0 without
                                   keep-alive): close after the answer */
} slc_status_req_t;

/*
 * Parse the request at p[0..len): 0 while its head is not whole (more
 * bytes are needed; the caller refuses past SLC_STATUS_HEAD_MAX), the
 * bytes it took (>0) with *req filled, or minus an HTTP status: -400 (not
 * a request line, a body, a bare CR), -405 (a method other than GET or
 * HEAD), -414 (a path too long), -431 (the head too long), -505 (not
 * HTTP/1.x).
 */
int slc_status_http_parse(const char *p, size_t len, slc_status_req_t *req);

#endif /* SLC_STATUS_HTTP_H */
