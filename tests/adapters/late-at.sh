#!/bin/sh
# Reaches a failpoint 0.3 s into every acquire: at the run's end lockbench gives up on
# the acquire and sends quit, which this program reads as its go. lockbench must ask
# again (quit), not take the acquire's late answer for the answer to quit.
while read -r w rest; do
  case "$w" in
    hello) echo "hello 3 library=late-at version=1 language=sh extend=no lost=no extends=never failpoints=after-send";;
    config) echo ok;;
    acquire) sleep 0.3; echo "at after-send"; read -r go; echo busy;;
    release) echo released;;
    quit) echo bye; exit 0;;
  esac
done
