/*
 * Length-encoded integers and strings.  First byte < 0xfb: the value itself;
 * 0xfc, 0xfd, 0xfe: a 2, 3 or 8-byte little-endian value follows.  0xfb
 * stands for NULL in a text row and 0xff starts an ERR packet, so neither
 * is an integer.  Non-minimal encodings (0xfc 0x05 0x00) are accepted, as
 * the server accepts them.
 */

#include "slc_core.h"
#include "slc_mysql_codec.h"

size_t
slc_mysql_lenenc_int_get(const uint8_t *p, size_t len, uint64_t *v)
{
    size_t  n;

    if (len == 0 || (n = slc_mysql_lenenc_int_len(p[0])) == 0 || len < n) {
        return 0;
    }
    *v = n == 1 ? p[0] : slc_mysql_le_get(p + 1, n - 1);
    return n;
}

size_t
slc_mysql_lenenc_int_size(uint64_t v)
{
    if (v < 0xfb) {
        return 1;
    }
    if (v <= 0xffff) {
        return 3;
    }
    if (v <= 0xffffff) {
        return 4;
    }
    return 9;
}

uint8_t *
slc_mysql_lenenc_int_put(uint8_t *p, uint64_t v)
{
    switch (slc_mysql_lenenc_int_size(v)) {
    case 1:
        *p++ = (uint8_t) v;
        return p;
    case 3:
        *p++ = 0xfc;
        return slc_mysql_le_put(p, v, 2);
    case 4:
        *p++ = 0xfd;
        return slc_mysql_le_put(p, v, 3);
    default:
        *p++ = 0xfe;
        return slc_mysql_le_put(p, v, 8);
    }
}

size_t
slc_mysql_lenenc_str_get(const uint8_t *p, size_t len, const uint8_t **s,
    uint64_t *slen)
{
    uint64_t  n;
    size_t    hl;

    hl = slc_mysql_lenenc_int_get(p, len, &n);
    if (hl == 0 || n > len - hl) {
        return 0;
    }
    *s = p + hl;
    *slen = n;
    return hl + (size_t) n;
}
