#!/bin/sh
# A broken adapter: dies before saying hello.
echo "this adapter cannot start" >&2
exit 3
