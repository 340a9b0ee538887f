/*
 * The tokenizer's character classes (slc_sql_lex.h), in a file of their
 * own: the classifier compiles the tokenizer into itself, and a table has
 * one definition.
 */

#include "slc_core.h"
#include "slc_sql_lex.h"

const uint8_t  slc_sql_cclass[256] = {
    [' '] = SLC_SQL_C_BLANK, ['\t'] = SLC_SQL_C_BLANK,
    ['\n'] = SLC_SQL_C_BLANK, ['\r'] = SLC_SQL_C_BLANK,
    ['\f'] = SLC_SQL_C_BLANK, ['\v'] = SLC_SQL_C_BLANK,
    ['a' ... 'z'] = SLC_SQL_C_WORD, ['A' ... 'Z'] = SLC_SQL_C_WORD,
    ['0' ... '9'] = SLC_SQL_C_WORD, ['_'] = SLC_SQL_C_WORD,
    ['$'] = SLC_SQL_C_WORD, [0x80 ... 0xff] = SLC_SQL_C_WORD,
};
