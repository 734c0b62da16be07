#!/usr/bin/env bash
# make deb: lockbench_VERSION_ARCH.deb in BUILD (argument 1), built by
# Debian's own tools (debhelper, dpkg-buildpackage -b -us -uc) in a build tree
# outside the source tree: a copy of the source (without build/, results/,
# .git and node_modules) with harness/debian as its debian/. The package is
# what `make install PREFIX=/usr` installs (docs/running.md, "A Debian
# package"), then checked by lintian: any error or warning fails the target.
set -euo pipefail

src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mkdir -p "${1:-build}" && cd "${1:-build}" && pwd)"
version=$(sed -n 's/^#define LOCKBENCH_VERSION "\(.*\)"$/\1/p' "$src/harness/core/util.h")
changelog=$(dpkg-parsechangelog -l "$src/harness/debian/changelog" -S Version)
if [[ -z $version || $version != "$changelog" ]]; then
  echo "lockbench: harness/debian/changelog is at version '$changelog', lockbench at '$version'" \
       "(harness/core/util.h, LOCKBENCH_VERSION): add a changelog entry (dch -v $version)" >&2
  exit 1
fi
arch=$(dpkg --print-architecture)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lockbench-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
tree="$tmp/lockbench-$version"
mkdir "$tree"
tar -C "$src" --exclude=./build --exclude=./results --exclude=./.git \
    --exclude=node_modules --exclude=./strategies/adapters/python/venv \
    --exclude=./strategies/adapters/go/bin --exclude=./strategies/adapters/java/build \
    -cf - . | tar -C "$tree" -xf -
mkdir -p "$tree/results"   # the top level the design card fixes
cp -R "$src/harness/debian" "$tree/debian"
echo "lockbench: building lockbench_${version}_$arch.deb in $tree (dpkg-buildpackage -b -us -uc)" >&2
# the package's own build, not this make's: no BUILD=... or -j from MAKEFLAGS
(cd "$tree" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL dpkg-buildpackage -b -us -uc) > "$tmp/build.log" 2>&1 || {
  tail -40 "$tmp/build.log" >&2
  echo "lockbench: dpkg-buildpackage failed (the last lines of its log above)" >&2
  exit 1
}
deb="lockbench_${version}_$arch.deb"
cp "$tmp/$deb" "$out/$deb.tmp" && mv "$out/$deb.tmp" "$out/$deb"
# lintian: errors and warnings fail; what docs/running.md explains is in
# harness/debian/lockbench.lintian-overrides, installed with the package
lintian --fail-on error,warning "$out/$deb" >&2
echo "$out/$deb"
