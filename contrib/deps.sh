#!/bin/sh
# Install the Debian 12 packages sluice needs to build, test and run its
# sandbox, plus any package named on the command line (the bench adds its
# own).  Idempotent; uses sudo when not run as root.
set -eu

# (prometheus: its promtool checks a live scrape of the status listener,
# t/status.t; its service is not started, as below)
# The Debian package (contrib/build-deb.sh, t/packaging.t): dpkg-buildpackage
# (dpkg-dev) checks build-essential as well as the Build-Depends, dh is
# debhelper's; lintian checks the .deb; logrotate -d and the real thing
# check the logrotate snippet, systemd-analyze (systemd, not started in a
# container) the unit, groff (groff-base) the manual pages.
PKGS="gcc make pkg-config libbsd-dev libmd-dev libpcre2-dev libmariadb-dev \
check libhiredis-dev \
mariadb-server mariadb-client redis-server \
perl libdbi-perl libdbd-mariadb-perl procps iproute2 \
python3-mysqldb php-cli php-mysql sysbench \
default-jdk-headless libmariadb-java python3-pymysql \
golang-go golang-github-go-sql-driver-mysql-dev prometheus \
build-essential dpkg-dev debhelper lintian logrotate systemd groff-base $*"

# node and npm for t/rwsplit_node.t, which gets mysql2 with npm ci: Debian's,
# unless both are there already (another nodejs, such as nodesource's,
# bundles npm and conflicts with Debian's npm package)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1
then
    PKGS="$PKGS nodejs npm"
fi

SUDO=
if [ "$(id -u)" != 0 ]; then
    SUDO=sudo
fi

missing=
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" \
        || missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "deps: all packages present"
    exit 0
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# The packaged services (mariadb, redis, haproxy) must not start on their
# own ports: the sandbox and the bench start their own.  policy-rc.d 101 tells invoke-rc.d "not now".
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod 755 /usr/sbin/policy-rc.d
    cleanup_policy=1
fi
$SUDO apt-get install -y -qq --no-install-recommends $missing
if [ "${cleanup_policy:-0}" = 1 ]; then
    $SUDO rm -f /usr/sbin/policy-rc.d
fi
echo "deps: done"
