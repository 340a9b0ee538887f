#!/bin/sh
# Quick start on a fresh Debian 12 machine: install the packages, build
# sluice, start a sandbox MariaDB primary and replica (real replication) in
# ./sandbox, and run sluice in the foreground in front of them:
#   127.0.0.1:4006  readconn to the primary (user app, password secret)
#   127.0.0.1:4007  readconn to the replica
#   127.0.0.1:4008  readwritesplit: reads to the replica, writes to the
#                   primary (a first step, docs/architecture.md)
#   127.0.0.1:4009  auth passthrough to the primary (any server account)
#   127.0.0.1:4010  the primary behind the query cache (zone of 64 MB),
#                   which the primary's binlog invalidates: a write made
#                   anywhere (4006, the server itself) is seen at once
# Ctrl-C stops sluice; `contrib/sandbox/sluice-sandbox stop sandbox` stops
# the servers.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)

sh contrib/deps.sh
[ -f Makefile ] || ./configure
make -j"$(nproc)"

eval "$(perl contrib/sandbox/sluice-sandbox start "$top/sandbox" --redis)"
mkdir -p sandbox/sluice/logs
cat > sandbox/sluice/sluice.conf <<CONF
daemon off;
worker_processes auto;
error_log logs/error.log info;
events { worker_connections 10000; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=64m;
    # the cache's shared tier: what any sluice host using this Redis read
    redis shared { server 127.0.0.1:$SLUICE_REDIS_PORT; }
    upstream sandbox {
        server 127.0.0.1:$SLUICE_PRIMARY_PORT role=primary;
        server 127.0.0.1:$SLUICE_REPLICA_PORT role=replica;
        # the cache learns views and triggers through the monitor
        monitor_user monitor; monitor_password "monitor";
        # and every committed write from the primary's binlog
        binlog on; binlog_user repl; binlog_password "repl";
    }
    server { listen 127.0.0.1:4006; router readconn; readconn_role primary;
             upstream sandbox; }
    server { listen 127.0.0.1:4007; router readconn; readconn_role replica;
             upstream sandbox; }
    server { listen 127.0.0.1:4008; router readwritesplit;
             upstream sandbox; }
    server { listen 127.0.0.1:4009; router readconn; auth passthrough;
             upstream sandbox; }
    server { listen 127.0.0.1:4010; router readconn; readconn_role primary;
             upstream sandbox; filters cache; cache qc; cache_ttl 1h; }
    server { listen 127.0.0.1:4011; router readconn; readconn_role primary;
             upstream sandbox; filters cache; cache qc; cache_ttl 1h;
             cache_redis shared; }
}
CONF
cat <<MSG
sluice is starting in the foreground (logs: sandbox/sluice/logs/error.log).
Try, in another terminal:
  mariadb -h 127.0.0.1 -P 4006 -u app -psecret test -e 'select @@hostname, @@port'
  mariadb -h 127.0.0.1 -P 4007 -u app -psecret test -e 'select @@port'
  mariadb -h 127.0.0.1 -P 4008 -u app -psecret test -e 'select @@port'
  mariadb -h 127.0.0.1 -P 4010 -u app -psecret test -e 'select @@port'
  mariadb -h 127.0.0.1 -P 4011 -u app -psecret test -e 'select @@port'
  redis-cli -p $SLUICE_REDIS_PORT --scan --pattern 'sluice:*'
  objs/sluice -p "$top/sandbox/sluice/" -c "$top/sandbox/sluice/sluice.conf" -s stats
MSG
exec objs/sluice -p "$top/sandbox/sluice/" -c "$top/sandbox/sluice/sluice.conf"
