#!/bin/sh
# Build sluice's Debian package from the working tree (edits not committed
# included):
#
#   sh contrib/build-deb.sh [OUTDIR]          (make deb: OUTDIR objs/deb)
#
# copies what the build reads into a scratch directory, makes contrib/debian
# its debian/, runs `dpkg-buildpackage -us -uc -b` there and moves the
# .deb, .buildinfo and .changes into OUTDIR (default objs/deb).  The tree
# itself gets no debian/ and no build files.  contrib/deps.sh installs what
# it needs.  DEB_BUILD_OPTIONS, if set, replaces "nocheck parallel=NCPU".
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/objs/deb}

version=$(sed -n 's/^SLC_VERSION=//p' "$top/configure")
debversion=$(dpkg-parsechangelog -l "$top/contrib/debian/changelog" \
    -S Version)
if [ "$version" != "$debversion" ]; then
    echo "build-deb: configure says $version, contrib/debian/changelog" \
        "says $debversion: add a changelog entry" >&2
    exit 1
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/sluice-deb.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
trap 'exit 1' HUP INT TERM

src=$scratch/sluice-$version
mkdir "$src"
for f in configure Makefile.in README conf contrib docs modules src; do
    cp -R "$top/$f" "$src/"
done
cp -R "$top/contrib/debian" "$src/debian"

# A make that runs this (make deb, make test) must not hand its jobserver
# or its flags to the package's own build.
unset MAKEFLAGS MFLAGS MAKELEVEL
export DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-nocheck parallel=$(nproc)}"
(cd "$src" && dpkg-buildpackage -us -uc -b)

mv "$scratch"/*_"$version"_* "$out"/
ls "$out"/sluice_"$version"_*.deb
