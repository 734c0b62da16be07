#!/bin/sh
# An adapter slow to start: its hello comes 2718 s late (a library that takes a
# long time to load). A Ctrl-C meanwhile stops the run before it began.
read -r line; sleep 2718; echo "hello 1 library=slow version=1 language=sh extend=no lost=no"
