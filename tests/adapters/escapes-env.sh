#!/bin/sh
# As escapes.sh, and the helper also clears its environment (env -i), so it
# carries no LOCKBENCH_RUN mark: orphaned, it still comes to lockbench, a
# child subreaper during the run, which stops it at the run's end.
read -r line; echo "hello 2 library=escaper version=1 language=sh extend=no lost=no extends=never"
read -r line
env -i /usr/bin/setsid /bin/sh -c '/bin/sleep 318 & exit 0' </dev/null >/dev/null 2>&1
echo "ok"
while read -r line; do
  case $line in
    acquire) echo "acquired" ;;
    release) echo "released" ;;
    quit) echo bye; exit 0 ;;
  esac
done
