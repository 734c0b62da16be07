#!/bin/sh
# A broken adapter: speaks another version of the protocol.
read -r line
echo "hello 4 library=future version=9 language=sh extend=no lost=no"
read -r line
