#!/bin/sh
# An adapter whose "library" takes its process down while holding the lock:
# the first acquire succeeds (nobody else can get in: it answers busy to all
# later ones), then the process exits instead of releasing.
read -r line; echo "hello 1 library=fragile version=1 language=sh extend=no lost=no"
read -r line; echo "ok"
while read -r line; do
  case $line in
    acquire)
      if mkdir "${LBTEST_FRAGILE:-/tmp/lbtest-fragile}" 2>/dev/null; then echo "acquired"; else echo "busy"; fi ;;
    release) exit 1 ;;
    quit) echo bye; exit 0 ;;
  esac
done
