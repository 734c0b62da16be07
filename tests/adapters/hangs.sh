#!/bin/sh
# A broken adapter: configures, then never answers an acquire.
read -r line; echo "hello 1 library=hang version=1 language=sh extend=no lost=no"
read -r line; echo "ok"
read -r line; exec sleep 60
