#!/bin/sh
# An adapter that closes its output at its 3rd acquire and keeps running
# (stops speaking, never exits): lockbench must take it for gone, stop it,
# and not judge a run it was not there for.
n=0
dir=${LBTEST_MUTE:-/tmp/lbtest-mute}
read -r line; echo "hello 1 library=mute version=1 language=sh extend=no lost=no"
read -r line; echo "ok"
while read -r line; do
  case $line in
    acquire)
      n=$((n + 1))
      if [ "$n" -ge 3 ]; then exec 1>&-; exec sleep 2791; fi
      if mkdir "$dir" 2>/dev/null; then echo "acquired"; else echo "busy"; fi ;;
    release) rmdir "$dir" 2>/dev/null; echo "released" ;;
    quit) echo bye; exit 0 ;;
  esac
done
