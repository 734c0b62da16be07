#!/bin/sh
# A library that cannot reach its server (a password it was not given):
# every acquire is an error in the library's own words, never a section.
read -r line; echo "hello 1 library=unreachable version=1 language=sh extend=no lost=no"
read -r line; echo "ok"
while read -r line; do
  case $line in
    acquire) echo "error AuthenticationError: invalid username-password pair or user is disabled." ;;
    release) echo "released" ;;
    quit) echo bye; exit 0 ;;
  esac
done
