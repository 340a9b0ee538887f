#!/bin/sh
# Install the Debian 12 packages the bench needs on top of those of
# contrib/deps.sh (compiler, MariaDB server and Connector/C, Perl DBI):
# sysbench, HAProxy, gnuplot and valgrind (cgcost).  Idempotent; uses sudo when not root.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)

exec sh "$top/contrib/deps.sh" sysbench haproxy gnuplot-nox valgrind
