#!/bin/sh
# Answers, and on quit says bye but stays, with a child that ignores TERM: what its
# hello probe (before a run with a failpoint fault) started must not outlive lockbench.
trap '' TERM INT HUP
while read -r w rest; do
  case "$w" in
    hello) echo "hello 3 library=stays version=1 language=sh extend=no lost=no extends=never failpoints=between-get-del";;
    config) echo ok;;
    acquire) echo busy;;
    release) echo not-owned;;
    quit) echo bye; (trap '' TERM INT HUP; sleep 7771) & sleep 7772;;
  esac
done
