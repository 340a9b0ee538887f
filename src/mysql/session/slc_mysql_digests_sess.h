#ifndef SLC_MYSQL_DIGESTS_SESS_H
#define SLC_MYSQL_DIGESTS_SESS_H

#include "slc_core.h"
#include "slc_mysql_digests.h"

/*
 * A session's digests (issue 23, section 3), for the command layer: the
 * digest of the command in flight, taken as it begins and recorded as its
 * answer ends (slc_mysql_digests.h), and its prepared statements': the
 * digest of each statement's text by the id the client was given (the
 * PREPARE_OK's, which readconn and readwritesplit pass on as the server
 * gave it), so that each COM_STMT_EXECUTE counts under its statement's
 * digest.  At most SLC_DIGESTS_PS statements per session (about 300
 * bytes each, allocated 8 at a time): one past that takes the place of
 * the one kept longest, whose executes are then not digested; so are
 * those of statements prepared before a reload's handover.
 */

#define SLC_DIGESTS_PS  64

typedef struct slc_digests_ps_s  slc_digests_ps_t;

typedef struct {
    slc_digest_stmt_t  *st;         /* malloc'd on the first use */
    slc_digests_ps_t   *ps;         /* malloc'd on the first PREPARE */
    unsigned            digesting:1;    /* st is to be recorded */
    unsigned            preparing:1;    /* st is a PREPARE's text */
} slc_digests_sess_t;

/*
 * Command `payload[0..avail)` begins (COM_QUERY and COM_STMT_EXECUTE are
 * counted; COM_STMT_PREPARE's text is kept for its id; CLOSE, RESET and
 * CHANGE_USER forget statements).  nobs: NO_BACKSLASH_ESCAPES; user, db
 * the session's; how its server's `digests` (SLC_DIGESTS_*).
 */
void slc_digests_begin(slc_digests_sess_t *d, const uint8_t *payload,
    size_t avail, int nobs, const char *user, const char *db,
    unsigned how);
/*
 * Its answer ended: `us` µs, `err` an ERR (or no answer), `rows` result
 * set rows; `stmt_id` the PREPARE_OK's id when it was a PREPARE that one
 * answered.
 */
void slc_digests_end(slc_digests_sess_t *d, uint64_t us, int err,
    uint64_t rows, uint32_t stmt_id);
void slc_digests_sess_free(slc_digests_sess_t *d);

#endif /* SLC_MYSQL_DIGESTS_SESS_H */
