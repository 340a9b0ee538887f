#ifndef SLC_MYSQL_GTID_H
#define SLC_MYSQL_GTID_H

#include "slc_core.h"

/*
 * MariaDB GTIDs (domain-server-seq) and positions (a list of them, one
 * per domain, as in @@gtid_current_pos), for causal reads
 * (docs/architecture.md, "Causal reads").  A position has applied a GTID
 * when its entry for the GTID's domain has a seq at least as high: within
 * a domain a replica applies in order, and the server id does not enter
 * the comparison (MASTER_GTID_WAIT compares the same way).
 */

#define SLC_GTID_DOMAINS  8     /* domains a set follows; more: lost */
#define SLC_GTID_TEXT     (SLC_GTID_DOMAINS * 44)

typedef struct {
    uint32_t    domain;
    uint32_t    server;
    uint64_t    seq;
} slc_gtid_t;

/* The newest GTID seen per domain; `lost`: a domain did not fit. */
typedef struct {
    unsigned    n;
    unsigned    lost;
    slc_gtid_t  g[SLC_GTID_DOMAINS];
} slc_gtid_set_t;

/* "domain-server-seq", exactly (len bytes, no NUL needed): SLC_OK, or
   SLC_ERROR for anything else. */
int  slc_gtid_parse(const char *p, size_t len, slc_gtid_t *g);
/* Whether the position text `pos` ("d-s-n,d-s-n", spaces and newlines
   allowed around entries) has applied g.  A malformed entry: not. */
int  slc_gtid_pos_has(const char *pos, const slc_gtid_t *g);
/* The set a position text holds: SLC_OK, or SLC_ERROR for a malformed
   entry or more domains than a set follows.  A blank text: empty. */
int  slc_gtid_set_parse(const char *pos, slc_gtid_set_t *set);
/* Every GTID of the set applied by `pos` (an empty set: yes). */
int  slc_gtid_pos_has_set(const char *pos, const slc_gtid_set_t *set);
/* Keep g in the set, the higher seq per domain. */
void slc_gtid_set_add(slc_gtid_set_t *set, const slc_gtid_t *g);
/* Whether `have` has, per domain, at least what `want` holds. */
int  slc_gtid_set_covers(const slc_gtid_set_t *have,
    const slc_gtid_set_t *want);
/* The set as a position text ("d-s-n,d-s-n"); its length, or -1 when it
   does not fit. */
int  slc_gtid_set_format(const slc_gtid_set_t *set, char *buf, size_t len);

#endif /* SLC_MYSQL_GTID_H */
