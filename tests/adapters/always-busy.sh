#!/bin/sh
# A lock that never grants: every acquire is busy. It claims D and O (protocol 3),
# so an audit must find nothing that shows them, never "held".
while read -r w rest; do
  case "$w" in
    hello) echo "hello 3 library=never-grants version=1 language=sh extend=no lost=no extends=never claims=DO failpoints=between-get-del";;
    config) echo ok;;
    acquire) echo busy;;
    release) echo not-owned;;
    quit) echo bye; exit 0;;
  esac
done
