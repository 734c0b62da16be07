#!/bin/sh
# A lock whose adapter exits at its 5th acquire (a library that gives up
# early): a mkdir lock, right while it runs. Every client's adapter ends
# after a fraction of the run, so the run shows nothing about the lock.
n=0
dir=${LBTEST_FIFTH:-/tmp/lbtest-fifth}
read -r line; echo "hello 1 library=fifth version=1 language=sh extend=no lost=no"
read -r line; echo "ok"
while read -r line; do
  case $line in
    acquire)
      n=$((n + 1))
      [ "$n" -ge 5 ] && exit 0
      if mkdir "$dir" 2>/dev/null; then echo "acquired"; else echo "busy"; fi ;;
    release) rmdir "$dir" 2>/dev/null; echo "released" ;;
    quit) echo bye; exit 0 ;;
  esac
done
