#!/bin/sh
# A broken adapter: answers acquire twice ("acquired", then "busy"). The
# second line answers nothing: it must never be taken for the answer to the
# next request (release).
read -r line; echo "hello 2 library=chatty version=1 language=sh extend=no lost=no extends=never"
read -r line; echo "ok"
while read -r line; do
  case $line in
    acquire) echo "acquired"; echo "busy" ;;
    release) echo "released" ;;
    quit) echo bye; exit 0 ;;
  esac
done
