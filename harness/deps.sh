#!/usr/bin/env bash
# Installs the Debian packages lockbench needs, and only those that are missing.
# As root it runs apt-get; otherwise sudo apt-get if sudo works without a
# password prompt; otherwise it prints the exact command to run and exits 1.
set -euo pipefail

# Every program lockbench runs names its package where it runs it ("runs:
# PROG (PACKAGE)"), and tests/test_deps.c checks that each is listed here.
# man-db renders the man page (a test runs man -l); util-linux's unshare gives
# the full-disk test a private tmpfs. nodejs runs the Node lock libraries'
# adapters (strategies/adapters/node); npm installs them, below. chromium
# (headless) is the real browser the test suite opens report.html in
# (tests/test_browser.c, tests/browser/drive.js). procps gives kill and pgrep,
# which tests/test_deployment.c's hooks and checks run (a minimal Debian image
# lacks them). php-cli, php-symfony-lock and php-redis run Symfony Lock's adapter
# (strategies/adapters/symfony_lock.php); python3-tooz runs OpenStack tooz's
# (strategies/adapters/tooz_lock.py). None of them starts a service.
packages=(build-essential pkg-config libhiredis-dev libcriterion-dev libinih-dev
          redis-server redis-tools gnuplot-nox python3 python3-minimal python3-redis
          man-db util-linux nodejs chromium procps php-cli php-symfony-lock php-redis
          python3-tooz)

# `deps.sh fuzz` (make fuzz): AFL++ as well, only when fuzzing (it pulls in clang).
[[ ${1:-} == fuzz ]] && packages+=(afl++)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
# npm: Debian's package, unless the installed Node.js brings its own (as
# NodeSource's nodejs does: Debian's npm would conflict with it)
command -v npm >/dev/null || missing+=(npm)

# The Node libraries, at the exact versions of the committed lockfile, into
# strategies/adapters/node/node_modules (ignored by git). npm ci runs only when
# that tree is missing or older than the lockfile; nothing is fetched at run time.
node_libs() {
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/strategies/adapters/node"
  [[ -f $dir/package-lock.json ]] || return 0
  if [[ ! -f $dir/node_modules/.package-lock.json || $dir/package-lock.json -nt $dir/node_modules/.package-lock.json ]]; then
    echo "lockbench: installing the Node lock libraries (npm ci in $dir)" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) || {
      echo "lockbench: npm ci failed in $dir: the Node library strategies will be listed as unavailable" >&2
      return 1
    }
  fi
}

if (( ${#missing[@]} == 0 )); then
  node_libs
  exit
fi

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
node_libs
