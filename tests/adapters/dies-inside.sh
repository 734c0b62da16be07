#!/bin/sh
# A library that takes its process down inside the section, 30 ms after the
# grant (before its release is asked): a death of the holder, not a lost
# lease; lockbench sees it at the next request.
read -r line; echo "hello 2 library=fragile-inside version=1 language=sh extend=no lost=yes extends=never"
read -r line; echo "ok"
while read -r line; do
  case $line in
    acquire)
      if mkdir "${LBTEST_FRAGILE:-/tmp/lbtest-fragile}" 2>/dev/null; then
        echo "acquired"; sleep 0.03; exit 1
      else echo "busy"; fi ;;
    release) echo "released" ;;
    quit) echo bye; exit 0 ;;
  esac
done
