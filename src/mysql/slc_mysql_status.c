#include "slc_core.h"
#include "slc_mysql_codec.h"

/* Status flags of an OK packet (0 when it is too short to hold them). */
uint16_t
slc_mysql_ok_status(const uint8_t *p, size_t len)
{
    uint64_t v;
    size_t   off = 1, n;

    for (int i = 0; i < 2; i++) {       /* affected rows, last insert id */
        n = slc_mysql_lenenc_int_get(p + off, len - off, &v);
        if (n == 0) {
            return 0;
        }
        off += n;
    }
    if (off + 2 > len) {
        return 0;
    }
    return (uint16_t) (p[off] | p[off + 1] << 8);
}
