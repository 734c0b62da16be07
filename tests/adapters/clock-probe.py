#!/usr/bin/python3
"""A test adapter that holds no real lock (it grants every acquire, like the
null adapter) and writes to its stderr, at each acquire, the wall clock it
sees (time.time()): the client clock faults must reach it through the shim."""
import sys
import time

for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "hello":
        reply = "hello 1 library=clock-probe version=1 language=python extend=no lost=no"
    elif word == "config":
        reply = "ok"
    elif word == "acquire":
        print("wall %.3f mono %.3f" % (time.time(), time.monotonic()), file=sys.stderr, flush=True)
        reply = "acquired"
    elif word == "release":
        reply = "released"
    elif word == "quit":
        print("bye", flush=True)
        break
    else:
        reply = "error unknown request"
    print(reply, flush=True)
