#!/bin/sh
# A library's helper that clears its environment (env -i: no LOCKBENCH_RUN
# mark) and leaves lockbench's session (setsid), then stays: after a kill -9
# of lockbench no subreaper is left to adopt it and no mark names it; only
# the run's cgroup still holds it (docs/running.md). It sleeps 5113 s, a
# number no other test looks for.
read -r line; echo "hello 2 library=setsid-env version=1 language=sh extend=no lost=no extends=never"
read -r line
env -i /usr/bin/setsid /bin/sleep 5113 </dev/null >/dev/null 2>&1 &
echo "ok"
while read -r line; do
  case $line in
    acquire) echo "acquired" ;;
    release) echo "released" ;;
    quit) echo bye; exit 0 ;;
  esac
done
