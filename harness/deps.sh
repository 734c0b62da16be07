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
# members lockbench starts (harness/servers/consensus.c) and etcdctl; zookeeper, the JRE
# (openjdk-17-jre-headless, Debian 12's default-jre-headless) and libslf4j-java
# (ZooKeeper's log to the console) the ZooKeeper servers; python3-kazoo its
# Python client. poppler-utils gives pdftoppm and pdftotext, which read the
# pages of `lockbench tour --pdf` back (tests/test_browser.c). stunnel4 is the
# TLS tunnel lockbench puts in front of a rediss:// server for the C recipes
# (harness/servers/tunnel.c: Debian 12's hiredis 0.14 has no TLS); openssl makes the
# test's CA and certificates (tests/test_tunnel.c). Only etcd-server starts a
# service: see below.
# What to install, by group: `deps.sh` alone (make deps, make test) installs
# every group; `deps.sh GROUP...` only those named, with "build" always
# (a Redis-only CI job: `bash harness/deps.sh redis`, no JVM, etcd or
# Chromium). python: the Debian Python libraries, and the virtualenv of the
# pinned PyPI libraries (python_venv, below). go: no Debian package (the Go
# toolchain is the machine's), the Go Redis lock libraries' adapters
# (go_adapters, below); etcd builds etcd's lock adapter the same way.
# pinned PyPI libraries (python_venv, below). java: the Java lock libraries'
# adapter (strategies/adapters/java): bash runs its launcher (lockbench-java),
# Maven builds it with the JDK's javac, and it runs on the JRE (its launcher's
# "runs:" line); Redisson and Curator themselves come from Maven Central
# (java_libs, below).
declare -A group=(
  [build]="build-essential pkg-config libhiredis-dev libcriterion-dev libinih-dev gnuplot-nox man-db util-linux procps openssh-client"
  [redis]="redis-server redis-tools stunnel4 openssl"
  [python]="python3 python3-minimal python3-redis python3-venv python3-tooz"
  [node]="nodejs"
  [php]="php-cli php-symfony-lock php-redis"
  [etcd]="etcd-server etcd-client python3"
  [zookeeper]="zookeeper default-jre-headless openjdk-17-jre-headless libslf4j-java python3-kazoo"
  [browser]="chromium poppler-utils"
  [go]=""
  [java]="bash maven openjdk-17-jdk-headless default-jre-headless openjdk-17-jre-headless"
)
all_groups=(build redis python node php etcd zookeeper browser go java)
# The full list, as tests/test_deps.c reads it (every package of every group):
packages=(build-essential pkg-config libhiredis-dev libcriterion-dev libinih-dev
          redis-server redis-tools gnuplot-nox python3 python3-minimal python3-redis
          python3-venv man-db util-linux nodejs chromium procps php-cli php-symfony-lock php-redis
          python3-tooz etcd-server etcd-client zookeeper default-jre-headless
          openjdk-17-jre-headless libslf4j-java python3-kazoo poppler-utils stunnel4 openssl
          bash maven openjdk-17-jdk-headless openssh-client)

wanted=()
for a in "$@"; do
  [[ $a == fuzz || $a == deb || $a == test ]] && continue
  [[ -n ${group[$a]+set} ]] || { echo "lockbench: deps.sh: no group '$a' (expected: ${all_groups[*]} , fuzz, deb or test)" >&2; exit 2; }
  wanted+=("$a")
done
# `deps.sh fuzz` (make fuzz): AFL++ as well, only when fuzzing (it pulls in clang),
# and clang's sanitizer runtime (libclang_rt.asan: the harnesses are built with
# ASan+UBSan, and Debian's afl++ does not pull it in; without it they do not link).
if (( ${#wanted[@]} > 0 )) || [[ ${1:-} == fuzz ]]; then
  packages=()
  (( ${#wanted[@]} > 0 )) || wanted=("${all_groups[@]}") # fuzz alone: everything, and afl++
  for g in build "${wanted[@]}"; do
    read -r -a more <<< "${group[$g]}"
    packages+=(${more[@]+"${more[@]}"})
  done
else
  wanted=("${all_groups[@]}")
fi
[[ " $* " == *" fuzz "* ]] && packages+=(afl++ libclang-rt-dev)
# `deps.sh deb` (make deb): Debian's packaging tools (debhelper, dpkg-dev's
# dpkg-buildpackage, lintian). `deps.sh test` (make test, make check): those, as
# tests/test_install.c builds the package, and the Prometheus Python client
# (Debian's python3-prometheus-client), whose OpenMetrics parser reads
# run --openmetrics in tests/test_gate.c; and OpenSSH's server (ssh, the client
# run --hosts starts, is in build), the
# sshd each namespaced host of tests/test_hosts.c runs (`sshd -D -f` the test's
# own config, on its own address; the system's ssh service is never enabled or
# started: Debian's package starts it only where policy-rc.d lets it).
[[ " $* " == *" deb "* || " $* " == *" test "* ]] && packages+=(debhelper dpkg-dev lintian)
[[ " $* " == *" test "* ]] && packages+=(python3-prometheus-client openssh-server iproute2)
wants() { [[ " ${wanted[*]} " == *" $1 "* ]]; }

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
# npm: Debian's package, unless the installed Node.js brings its own (as
# NodeSource's nodejs does: Debian's npm would conflict with it)
wants node && { command -v npm >/dev/null || missing+=(npm); }

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

# The PyPI libraries (strategies/adapters/python/requirements.txt: every package
# and dependency pinned by version and sha256) in the virtualenv
# strategies/adapters/python/venv (ignored by git), made with Debian's python3
# -m venv; pip installs those files and nothing else (--require-hashes). Made
# again only when missing or older than the requirements; nothing is fetched
# at run time. `lockbench install NAME@VERSION` fetches other versions.
python_venv() {
  local dir venv
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/strategies/adapters/python"
  venv=$dir/venv
  [[ -f $dir/requirements.txt ]] || return 0
  if [[ ! -f $venv/.installed || $dir/requirements.txt -nt $venv/.installed ]]; then
    echo "lockbench: making the Python libraries' virtualenv ($venv, pip install --require-hashes)" >&2
    rm -rf "$venv"
    # the files pip gets stay in venv/wheels: a test makes a project's
    # virtualenv from them (an upgrade, without the network)
    /usr/bin/python3 -m venv "$venv" &&
      "$venv/bin/python3" -m pip download --quiet --disable-pip-version-check --require-hashes \
        --no-deps --dest "$venv/wheels" -r "$dir/requirements.txt" &&
      "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check --require-hashes \
        --no-index --find-links "$venv/wheels" -r "$dir/requirements.txt" &&
      touch "$venv/.installed" || {
      echo "lockbench: the virtualenv could not be made: the PyPI library strategies will be listed as unavailable" >&2
      return 1
    }
  fi
}

# The Go adapters (strategies/adapters/go), each a module whose go.mod and
# go.sum pin every module: etcd's lock through etcd's own Go client, one
# program per client version (client-3.4, client-3.5: group etcd), and the Go
# Redis lock libraries, redsync and bsm/redislock with go-redis v9, one module
# and a program each (redislocks: group go). Each is built into
# strategies/adapters/go/bin (ignored by git) when the program is missing or
# older than its module's go.sum or sources. The Go toolchain is the
# machine's (go on PATH, or /usr/local/go; Debian 12's golang-go is 1.19,
# older than these modules ask). The modules come from the module proxy into
# Go's module cache (go mod download: each checked against go.sum), and the
# build runs with GOFLAGS=-mod=readonly and GOPROXY=off: it can change no
# go.mod and fetch nothing. The programs are static: nothing is fetched at run
# time. (Not vendored: that would copy the libraries' and their dependencies'
# sources into this repository.) Group etcd also builds lockbench-porcupine
# (strategies/adapters/go/porcupine: Porcupine v1.3.1, pinned by its go.sum),
# the second checker `lockbench check DIR --porcupine` runs; without it that
# check exits 3.
# go_adapters WHAT MODULE:PACKAGE:PROGRAM...: builds each PACKAGE of MODULE
# (a directory of strategies/adapters/go; sources also in $shared's) as bin/PROGRAM.
go_adapters() {
  local what=$1 dir go spec m pkg prog out
  shift
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/strategies/adapters/go"
  [[ -d $dir ]] || return 0
  go=$(command -v go || true)
  [[ -n $go ]] || { [[ -x /usr/local/go/bin/go ]] && go=/usr/local/go/bin/go; }
  if [[ -z $go ]]; then
    echo "lockbench: no Go toolchain (go): the $what strategies will be listed as unavailable" >&2
    return 1
  fi
  for spec in "$@"; do
    IFS=: read -r m pkg prog <<< "$spec"
    out=$dir/bin/$prog
    if [[ -x $out && -z $(find "$dir/$m" ${shared:+"$dir/$shared"} -newer "$out" \( -name '*.go' -o -name 'go.*' \) -print -quit) ]]; then
      continue
    fi
    echo "lockbench: building the $what adapter ($m/$pkg, into $out)" >&2
    (cd "$dir/$m" && "$go" mod download &&
       GOFLAGS="-mod=readonly -buildvcs=false" GOPROXY=off CGO_ENABLED=0 "$go" build -trimpath -o "$out.new" "./$pkg" &&
       mv "$out.new" "$out") || {
      echo "lockbench: building $dir/$m/$pkg failed: its $what strategies will be listed as unavailable" >&2
      return 1
    }
  done
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
    (cd "$dir" && mvn -B -q -C -Dstyle.color=never -Dmaven.repo.local="$dir/build/m2" package dependency:copy-dependencies \
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

libs() {
  local rc=0
  if wants node; then node_libs || rc=1; fi
  if wants python; then python_venv || rc=1; fi
  if wants etcd; then shared=etcdlock go_adapters "etcd-lock" client-3.4:.:etcd-lock-client-3.4 \
      client-3.5:.:etcd-lock-client-3.5 || rc=1; fi
  if wants etcd; then shared= go_adapters "second checker (check --porcupine)" \
      porcupine:.:lockbench-porcupine || rc=1; fi
  if wants go; then shared= go_adapters "Go Redis lock" redislocks:redsync:redsync \
      redislocks:bsm-redislock:bsm-redislock || rc=1; fi
  if wants java; then java_libs || rc=1; fi
  return $rc
}

if (( ${#missing[@]} == 0 )); then
  libs
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
libs
