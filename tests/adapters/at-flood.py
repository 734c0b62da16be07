#!/usr/bin/python3
"""Answers an acquire with an endless stream of 'at x' (a failpoint its hello names) and
never an answer: lockbench must stop it at a protocol limit, not loop past its deadlines."""
import sys
import threading

def drain():
    for _ in sys.stdin:
        pass

for line in sys.stdin:
    w = line.split()[0] if line.split() else ""
    if w == "hello":
        print("hello 3 library=flood version=1 language=python extend=no lost=no extends=never "
              "failpoints=x", flush=True)
    elif w == "config":
        print("ok", flush=True)
    elif w == "acquire":
        threading.Thread(target=drain, daemon=True).start()
        out = sys.stdout.buffer
        try:
            while True:
                out.write(b"at x\n" * 1000)
                out.flush()
        except BrokenPipeError:
            sys.exit(0)
    elif w == "quit":
        print("bye", flush=True)
        break
