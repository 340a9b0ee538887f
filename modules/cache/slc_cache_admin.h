#ifndef SLC_CACHE_ADMIN_H
#define SLC_CACHE_ADMIN_H

/*
 * The cache's admin command (issue 23, section 2):
 *   cache flush                    every entry of every zone
 *   cache flush zone NAME          every entry of one zone
 *   cache flush table DB.TABLE     the entries that read a table, in
 *                                  every zone (any may hold them)
 * An entry is not removed but made stale, as a write makes it (the
 * table generations move): the next lookup misses and stores anew.
 * This host's zones only: a Redis tier's entries stay until a write or
 * their TTL.
 */

#include "slc_core.h"
#include "slc_admin.h"

extern const slc_admin_command_t  slc_cache_admin_commands[];

#endif /* SLC_CACHE_ADMIN_H */
