#ifndef SLC_MYSQL_CHANGE_USER_H
#define SLC_MYSQL_CHANGE_USER_H

#include "slc_core.h"
#include "slc_mysql_session.h"

/* A COM_CHANGE_USER in progress under auth local (slc_mysql_change_user.c):
   what the client asked for, until the backend has agreed. */
struct slc_change_user_s {
    char       user[SLC_MAX_USER + 1];
    char       db[SLC_MAX_DB + 1];
    uint16_t   collation;           /* 0: keep the session's */
    uint8_t    stage1[20];          /* the new user's SHA1(password) */
    int        empty_password;
    uint8_t   *attrs;               /* malloc'ed copy or NULL */
    size_t     attrs_len;
    /* users_from: a refused change waits once for a load of the
       accounts (slc_mysql_accounts.h), with the token kept here */
    uint8_t    token[20];
    uint8_t    token_len;
    unsigned   asked:1;
    uint32_t   ticket;
    uint64_t   deadline;            /* loop ms */
};

#endif /* SLC_MYSQL_CHANGE_USER_H */
