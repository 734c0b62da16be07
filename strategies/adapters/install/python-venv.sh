#!/usr/bin/env bash
# python-venv.sh DIR DIST VERSION - `lockbench install`'s hook for Python
# libraries (a manifest's env = python-venv): makes the virtualenv DIR (in
# lockbench's cache) holding the PyPI package DIST at VERSION, with pip, the
# ecosystem's own client. What pip downloaded (the package and each
# dependency it resolved) is pinned by the sha256 of the file it got, in
# DIR/requirements.txt, and installed from those files alone with
# --require-hashes; the files stay in DIR/wheels (a test makes a project's
# virtualenv from them without the network). Nothing is replaced that this
# script did not make: a DIR without its marker (.lockbench-install) is left
# alone, and the command fails saying so. $LOCKBENCH_PYTHON: the Python to make
# the virtualenv with (default /usr/bin/python3, Debian's python3).
set -euo pipefail

dir=$1 dist=$2 version=$3
python=${LOCKBENCH_PYTHON:-/usr/bin/python3}
say() { echo "lockbench install: $*" >&2; }

if [[ -e $dir ]]; then
  if [[ ! -f $dir/.lockbench-install ]]; then
    say "$dir exists and was not made by lockbench install: left alone (remove it, or set LOCKBENCH_CACHE)"
    exit 1
  fi
  have=$("$dir/bin/python3" -c 'import sys, importlib.metadata as m; print(m.version(sys.argv[1]))' "$dist" 2>/dev/null || true)
  if [[ $have == "$version" ]]; then
    say "$dist $version is installed in $dir (pinned by hash in $dir/requirements.txt)"
    exit 0
  fi
fi
command -v "$python" >/dev/null || { say "$python not found (Debian's python3 and python3-venv)"; exit 1; }
mkdir -p "$(dirname "$dir")"
tmp=$(mktemp -d "$(dirname "$dir")/.$(basename "$dir").XXXXXX")
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/.lockbench-install"
"$python" -m venv "$tmp"
say "pip download $dist==$version (and its dependencies) into $dir/wheels"
"$tmp/bin/python3" -m pip download --quiet --disable-pip-version-check --dest "$tmp/wheels" "$dist==$version"
# each file pip got: its project, version and sha256, as pip hash gives it
"$tmp/bin/python3" - "$tmp/wheels" > "$tmp/requirements.txt" <<'PY'
import hashlib, os, sys
d = sys.argv[1]
print("# what pip downloaded for lockbench install, pinned by the sha256 of each file")
for f in sorted(os.listdir(d)):
    if f.endswith(".whl"):
        name, ver = f.split("-")[:2]
    else:
        stem = f[:-7] if f.endswith(".tar.gz") else os.path.splitext(f)[0]
        name, ver = stem.rsplit("-", 1)
    h = hashlib.sha256(open(os.path.join(d, f), "rb").read()).hexdigest()
    print("%s==%s --hash=sha256:%s" % (name, ver, h))
PY
"$tmp/bin/python3" -m pip install --quiet --disable-pip-version-check --no-index \
  --find-links "$tmp/wheels" --require-hashes -r "$tmp/requirements.txt"
have=$("$tmp/bin/python3" -c 'import sys, importlib.metadata as m; print(m.version(sys.argv[1]))' "$dist")
[[ $have == "$version" ]] || { say "pip installed $dist $have, not $version"; exit 1; }
# the venv's own paths name $tmp: its python3 (a link to $python) and
# pyvenv.cfg do not, and lockbench runs only DIR/bin/python3
[[ -e $dir ]] && rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
say "$dist $version installed in $dir; pinned:"
grep -v '^#' "$dir/requirements.txt" >&2
