#!/bin/sh
# An adapter whose library floods its standard error (80 MB): lockbench keeps
# its log (adapter-N.log) to the limit in docs/running.md, and the run goes on.
( head -c 80000000 /dev/zero >&2 & )
read -r line; echo "hello 2 library=flood version=1 language=sh extend=no lost=no extends=never"
read -r line; echo "ok"
while read -r line; do
  case $line in
    acquire) echo "acquired" ;;
    release) echo "released" ;;
    quit) echo bye; exit 0 ;;
  esac
done
