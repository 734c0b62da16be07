#!/usr/bin/python3
"""The null adapter: grants every acquire at once and sends nothing to Redis.
What a section costs through it is the adapter protocol itself (two request
and reply round trips over pipes, and a Python loop), which `lockbench bench`
sets against a redis-py section."""
import sys

for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "hello":
        reply = "hello 2 library=null version=1 language=python extend=no lost=no extends=never"
    elif word == "config":
        reply = "ok"
    elif word == "acquire":
        reply = "acquired"
    elif word == "release":
        reply = "released"
    elif word == "quit":
        print("bye", flush=True)
        break
    else:
        reply = "error unknown request"
    print(reply, flush=True)
