#ifndef SLC_CACHE_REDIS_RESP_H
#define SLC_CACHE_REDIS_RESP_H

/* slc_cache_redis_resp.c: commands in RESP (pure) (slc_cache_redis_service.h
   lists the tier's files). */

#include "slc_core.h"

typedef struct {
    uint8_t    *buf;        /* malloc'ed, grows; reused command after */
    size_t      len;        /* command to its end */
    size_t      cap;
    int         oom;        /* an append failed: the command is lost */
} slc_cache_redis_resp_t;

/* A command of nargs arguments begins (what the buffer held is gone). */
void     slc_cache_redis_resp_begin(slc_cache_redis_resp_t *r,
    unsigned nargs);
/* An argument: bytes, a C string, a decimal number. */
void     slc_cache_redis_resp_arg(slc_cache_redis_resp_t *r, const void *s,
    size_t n);
void     slc_cache_redis_resp_str(slc_cache_redis_resp_t *r, const char *s);
void     slc_cache_redis_resp_num(slc_cache_redis_resp_t *r,
    unsigned long long v);
/* v in decimal at out (at most 20 bytes): how many. */
size_t   slc_cache_redis_resp_dec(uint8_t *out, unsigned long long v);
/* An argument of n bytes the caller writes at the pointer returned
   (NULL without memory). */
uint8_t *slc_cache_redis_resp_open(slc_cache_redis_resp_t *r, size_t n);

#endif /* SLC_CACHE_REDIS_RESP_H */
