#!/bin/sh
# A library whose helper leaves lockbench's reach: a new session (setsid) and
# a second fork, so that no process group and no PR_SET_PDEATHSIG reach it
# (a daemonising helper). lockbench must still stop it.
read -r line; echo "hello 2 library=escaper version=1 language=sh extend=no lost=no extends=never"
read -r line
setsid sh -c 'sleep 317 & exit 0' </dev/null >/dev/null 2>&1
echo "ok"
while read -r line; do
  case $line in
    acquire) echo "acquired" ;;
    release) echo "released" ;;
    quit) echo bye; exit 0 ;;
  esac
done
