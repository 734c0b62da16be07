#!/usr/bin/env bash
# Installs the Debian packages lockbench needs, and only those that are missing.
# As root it runs apt-get; otherwise sudo apt-get if sudo works without a
# password prompt; otherwise it prints the exact command to run and exits 1.
set -euo pipefail

# Every program lockbench runs names its package where it runs it ("runs:
# PROG (PACKAGE)"), and tests/test_deps.c checks that each is listed here.
# man-db renders the man page (a test runs man -l); util-linux's unshare gives
# the full-disk test a private tmpfs.
packages=(build-essential pkg-config libhiredis-dev libcriterion-dev libinih-dev
          redis-server redis-tools gnuplot-nox python3 python3-minimal python3-redis
          man-db util-linux)

# `deps.sh fuzz` (make fuzz): AFL++ as well, only when fuzzing (it pulls in clang).
[[ ${1:-} == fuzz ]] && packages+=(afl++)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
(( ${#missing[@]} == 0 )) && exit 0

cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
echo "lockbench: installing missing packages: ${missing[*]}" >&2
if (( EUID == 0 )); then
  bash -c "$cmd"
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo bash -c "$cmd"
else
  echo "lockbench: cannot install packages (not root, no password-less sudo). Run:" >&2
  echo "  sudo bash -c '$cmd'" >&2
  exit 1
fi
