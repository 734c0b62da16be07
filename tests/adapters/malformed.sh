#!/bin/sh
# A broken adapter: answers its hello with a line that is not one.
read -r line
echo "HELLO? is anybody there"
read -r line
