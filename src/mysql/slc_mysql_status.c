#include "slc_core.h"
#include "slc_mysql_codec.h"

/* Where the status flags of an OK packet are, or 0 if it is too short. */
static size_t
slc_mysql_ok_status_at(const uint8_t *p, size_t len)
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
    return off + 2 <= len ? off : 0;
}

/* Status flags of an OK packet (0 when it is too short to hold them). */
uint16_t
slc_mysql_ok_status(const uint8_t *p, size_t len)
{
    size_t off = slc_mysql_ok_status_at(p, len);

    return off ? (uint16_t) (p[off] | p[off + 1] << 8) : 0;
}

void
slc_mysql_ok_set_status(uint8_t *p, size_t len, uint16_t status)
{
    size_t off = slc_mysql_ok_status_at(p, len);

    if (off) {
        p[off] = (uint8_t) status;
        p[off + 1] = (uint8_t) (status >> 8);
    }
}
