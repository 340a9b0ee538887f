#ifndef SLC_MYSQL_PROTO_H
#define SLC_MYSQL_PROTO_H

/* Constants of the MySQL/MariaDB client/server protocol. */

#define SLC_MYSQL_HDR_LEN           4
#define SLC_MYSQL_MAX_PAYLOAD       0xffffffu    /* a longer message splits */

/* Capability flags (lower and upper 16 bits of the 32-bit field). */
#define SLC_CLIENT_LONG_PASSWORD        0x00000001u  /* MariaDB: CLIENT_MYSQL */
#define SLC_CLIENT_FOUND_ROWS           0x00000002u
#define SLC_CLIENT_LONG_FLAG            0x00000004u
#define SLC_CLIENT_CONNECT_WITH_DB      0x00000008u
#define SLC_CLIENT_NO_SCHEMA            0x00000010u
#define SLC_CLIENT_COMPRESS             0x00000020u
#define SLC_CLIENT_ODBC                 0x00000040u
#define SLC_CLIENT_LOCAL_FILES          0x00000080u
#define SLC_CLIENT_IGNORE_SPACE         0x00000100u
#define SLC_CLIENT_PROTOCOL_41          0x00000200u
#define SLC_CLIENT_INTERACTIVE          0x00000400u
#define SLC_CLIENT_SSL                  0x00000800u
#define SLC_CLIENT_IGNORE_SIGPIPE       0x00001000u
#define SLC_CLIENT_TRANSACTIONS         0x00002000u
#define SLC_CLIENT_RESERVED             0x00004000u
#define SLC_CLIENT_SECURE_CONNECTION    0x00008000u
#define SLC_CLIENT_MULTI_STATEMENTS     0x00010000u
#define SLC_CLIENT_MULTI_RESULTS        0x00020000u
#define SLC_CLIENT_PS_MULTI_RESULTS     0x00040000u
#define SLC_CLIENT_PLUGIN_AUTH          0x00080000u
#define SLC_CLIENT_CONNECT_ATTRS        0x00100000u
#define SLC_CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA 0x00200000u
#define SLC_CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS   0x00400000u
#define SLC_CLIENT_SESSION_TRACK        0x00800000u
#define SLC_CLIENT_DEPRECATE_EOF        0x01000000u
#define SLC_CLIENT_OPTIONAL_RESULTSET_METADATA 0x02000000u
#define SLC_CLIENT_ZSTD_COMPRESSION     0x04000000u
#define SLC_CLIENT_SSL_VERIFY_SERVER_CERT 0x40000000u
#define SLC_CLIENT_REMEMBER_OPTIONS     0x80000000u

/* Server status flags. */
#define SLC_SERVER_STATUS_IN_TRANS      0x0001u
#define SLC_SERVER_STATUS_AUTOCOMMIT    0x0002u
#define SLC_SERVER_STATUS_NO_BACKSLASH_ESCAPES 0x0200u
#define SLC_SERVER_STATUS_IN_TRANS_READONLY    0x2000u
#define SLC_SERVER_SESSION_STATE_CHANGED       0x4000u
#define SLC_SESSION_TRACK_SYSTEM_VARIABLES     0x00
#define SLC_SERVER_MORE_RESULTS_EXISTS  0x0008u

/* Commands. */
#define SLC_COM_SLEEP               0x00
#define SLC_COM_QUIT                0x01
#define SLC_COM_INIT_DB             0x02
#define SLC_COM_QUERY               0x03
#define SLC_COM_FIELD_LIST          0x04
#define SLC_COM_CREATE_DB           0x05
#define SLC_COM_DROP_DB             0x06
#define SLC_COM_REFRESH             0x07
#define SLC_COM_SHUTDOWN            0x08
#define SLC_COM_STATISTICS          0x09
#define SLC_COM_PROCESS_INFO        0x0a
#define SLC_COM_CONNECT             0x0b
#define SLC_COM_PROCESS_KILL        0x0c
#define SLC_COM_DEBUG               0x0d
#define SLC_COM_TIME                0x0f
#define SLC_COM_PING                0x0e
#define SLC_COM_DELAYED_INSERT      0x10
#define SLC_COM_CHANGE_USER         0x11
#define SLC_COM_BINLOG_DUMP         0x12
#define SLC_COM_REGISTER_SLAVE      0x15
#define SLC_COM_STMT_PREPARE        0x16
#define SLC_COM_STMT_EXECUTE        0x17
#define SLC_COM_STMT_SEND_LONG_DATA 0x18
#define SLC_COM_STMT_CLOSE          0x19
#define SLC_COM_STMT_RESET          0x1a
#define SLC_COM_SET_OPTION          0x1b
#define SLC_COM_STMT_FETCH          0x1c
#define SLC_COM_RESET_CONNECTION    0x1f
#define SLC_COM_STMT_BULK_EXECUTE   0xfa    /* MariaDB */

/* First payload byte of generic responses. */
#define SLC_MYSQL_OK                0x00
#define SLC_MYSQL_EOF               0xfe
#define SLC_MYSQL_AUTH_SWITCH       0xfe
#define SLC_MYSQL_AUTH_MORE_DATA    0x01
#define SLC_MYSQL_ERR               0xff
/* The error code of a MariaDB progress report: an ERR-headed packet that
   comes before the real response and ends nothing. */
#define SLC_MYSQL_ERR_PROGRESS      0xffff

#define SLC_MYSQL_SCRAMBLE_LEN      20
#define SLC_MYSQL_NATIVE_PLUGIN     "mysql_native_password"

/* Error codes sluice sends itself. */
#define SLC_MYSQL_TYPE_VAR_STRING   0xfd

#define SLC_ER_CON_COUNT_ERROR      1040    /* 08004 Too many connections */
#define SLC_ER_HANDSHAKE_ERROR      1043    /* 08S01 Bad handshake */
#define SLC_ER_ACCESS_DENIED_ERROR  1045    /* 28000 */
#define SLC_ER_UNKNOWN_COM_ERROR    1047    /* 08S01 */
#define SLC_ER_NO_SUCH_THREAD       1094    /* HY000 Unknown thread id */
#define SLC_ER_KILL_DENIED_ERROR    1095    /* HY000 not owner of thread */
#define SLC_ER_NET_PACKET_TOO_LARGE 1153    /* 08S01 */
#define SLC_ER_NET_PACKETS_OUT_OF_ORDER 1156
#define SLC_ER_MAX_PREPARED_STMT_COUNT_REACHED 1461   /* 42000 */
#define SLC_ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION 1792  /* 25006 */
/*
 * A backend that cannot be reached: a server-range code, because client
 * libraries (libmariadb 3.3) take an ERR carrying one of their own client
 * codes (2000-2999) during login for a forgery and report "malformed
 * packet" instead.  1429 is ER_CONNECT_TO_FOREIGN_DATA_SOURCE.
 */
#define SLC_ER_NOT_SUPPORTED_AUTH_MODE 1251 /* 08004 client lacks the plugin */
#define SLC_ER_CONNECT_TO_BACKEND   1429    /* HY000 backend unreachable */
#define SLC_ER_CONNECTION_KILLED    1927    /* 70100 (MariaDB) */
#define SLC_ER_SERVER_SHUTDOWN      1053    /* 08S01 */

#endif /* SLC_MYSQL_PROTO_H */
