#!/bin/sh
# A library that grants the lock and says it lost it 20 ms later, inside the
# section (a failed extension, an onLockLost callback): every section must
# abort its write.
read -r line; echo "hello 2 library=losing version=1 language=sh extend=no lost=yes extends=never"
read -r line; echo "ok"
while read -r line; do
  case $line in
    acquire) echo "acquired"; ( sleep 0.02; echo "lost the lease could not be extended" ) & ;;
    release) wait; echo "not-owned" ;;
    quit) echo bye; exit 0 ;;
  esac
done
