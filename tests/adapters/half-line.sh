#!/bin/sh
# An adapter that writes half an answer ("acqui", no newline) at its 3rd
# acquire and exits: a protocol error, never a quiet end of a client.
n=0
read -r line; echo "hello 1 library=half version=1 language=sh extend=no lost=no"
read -r line; echo "ok"
while read -r line; do
  case $line in
    acquire)
      n=$((n + 1))
      if [ "$n" -ge 3 ]; then printf 'acqui'; exit 0; fi
      echo "acquired" ;;
    release) echo "released" ;;
    quit) echo bye; exit 0 ;;
  esac
done
