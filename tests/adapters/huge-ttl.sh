#!/bin/sh
# A library that says, after each grant, that it extended its lease by
# 9223372036854 ms (INT64_MAX / 10^6: 292 years): more than the protocol's
# bound (365 days, docs/adapters.md), a protocol error. Before the bound,
# now + N ms overflowed and the client aborted under UBSan.
read -r line; echo "hello 2 library=huge-ttl version=1 language=sh extend=no lost=no extends=reported"
read -r line; echo "ok"
while read -r line; do
  case $line in
    acquire) echo "acquired"; echo "extended ttl_ms=9223372036854" ;;
    release) echo "released" ;;
    quit) echo bye; exit 0 ;;
  esac
done
