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
# (strategies/adapters/tooz_lock.py). etcd-server and etcd-client give the etcd
# members lockbench starts (harness/consensus.c) and etcdctl; zookeeper, the JRE
# (openjdk-17-jre-headless, Debian 12's default-jre-headless) and libslf4j-java
# (ZooKeeper's log to the console) the ZooKeeper servers; python3-kazoo its
# Python client. poppler-utils gives pdftoppm and pdftotext, which read the
# pages of `lockbench tour --pdf` back (tests/test_browser.c). Only etcd-server
# starts a service: see below.
packages=(build-essential pkg-config libhiredis-dev libcriterion-dev libinih-dev
          redis-server redis-tools gnuplot-nox python3 python3-minimal python3-redis
          man-db util-linux nodejs chromium procps php-cli php-symfony-lock php-redis
          python3-tooz etcd-server etcd-client zookeeper default-jre-headless
          openjdk-17-jre-headless libslf4j-java python3-kazoo poppler-utils)

# The Java lock libraries' adapter (strategies/adapters/java): bash runs its
# launcher (lockbench-java), Maven builds it
# with the JDK's javac; it runs on the JRE above (its launcher's "runs:" line).
packages+=(bash maven openjdk-17-jdk-headless)

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

# The Java libraries (Redisson, Apache Curator) at the exact versions of
# strategies/adapters/java/pom.xml, built into its build/ (ignored by git) when
# build/lockbench-java.jar is missing or older than the pom, the lock file or a
# source: mvn -C (strict checksums: a jar whose sha1 differs from the
# repository's is refused) into a Maven repository of its own (build/m2), the
# runtime jars copied to build/lib and each checked against the sha256
# committed in deps.sha256 (a jar that differs, or one more or one fewer, and
# nothing is kept). The jars are checked again on every run of this script.
# Nothing is fetched at run time.
java_libs() {
  local dir lock n
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/strategies/adapters/java"
  lock=$dir/deps.sha256
  [[ -f $dir/pom.xml ]] || return 0
  if [[ ! -f $dir/build/lockbench-java.jar || -n $(find "$dir/pom.xml" "$lock" "$dir/src" -newer "$dir/build/lockbench-java.jar" -print -quit) ]]; then
    echo "lockbench: building the Java lock libraries' adapter (mvn package in $dir)" >&2
    rm -rf "$dir/build/lib" "$dir/build/lockbench-java.jar"
    (cd "$dir" && mvn -B -q -C -Dmaven.repo.local="$dir/build/m2" package dependency:copy-dependencies \
       -DincludeScope=runtime -DoutputDirectory="$dir/build/lib" >&2) || {
      echo "lockbench: mvn failed in $dir: the Java library strategies will be listed as unavailable" >&2
      return 1
    }
    cp "$dir/build/target/lockbench-java.jar" "$dir/build/lockbench-java.jar.new"
  fi
  n=$(find "$dir/build/lib" -maxdepth 1 -name '*.jar' | wc -l)
  if ! (cd "$dir/build/lib" && sha256sum --check --strict --quiet "$lock" >&2) || (( n != $(wc -l < "$lock") )); then
    echo "lockbench: the jars in $dir/build/lib are not those of $lock ($n jars): removed" >&2
    rm -rf "$dir/build/lib" "$dir/build/lockbench-java.jar" "$dir/build/lockbench-java.jar.new"
    return 1
  fi
  [[ ! -f $dir/build/lockbench-java.jar.new ]] || mv "$dir/build/lockbench-java.jar.new" "$dir/build/lockbench-java.jar"
}

if (( ${#missing[@]} == 0 )); then
  node_libs
  java_libs
  exit
fi

cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
# Installing etcd-server starts a system etcd on ports 2379 and 2380 (its
# postinst runs invoke-rc.d, or deb-systemd-invoke under systemd) and enables
# it at boot. lockbench never talks to one and leaves none behind: while
# apt-get runs, a policy-rc.d that exits 101 ("action forbidden") denies every
# service start, unless the machine already has a policy-rc.d (then it is left
# as it is); afterwards the service is disabled (and stopped) for good.
if [[ " ${missing[*]} " == *" etcd-server "* ]]; then
  guard='if [ ! -e /usr/sbin/policy-rc.d ]; then printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && trap "rm -f /usr/sbin/policy-rc.d" EXIT; fi'
  disable='if [ -d /run/systemd/system ]; then systemctl disable --now etcd.service; else update-rc.d etcd disable; fi'
  cmd="$guard; $cmd && { $disable; } >&2"
  echo "lockbench: etcd-server's system service is kept from starting and disabled (lockbench starts its own members)" >&2
fi
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
java_libs
