#!/usr/bin/python3
"""A test adapter that holds no real lock (it grants every acquire, like the
null adapter) and writes to its stderr, at config, the local address of a
TCP connection it opens to the first Sentinel (or node): on the Sentinel
topology the shim must make it the client's own address."""
import socket
import sys


def first_address(words):
    for w in words:
        for key in ("sentinels=", "nodes="):
            if w.startswith(key):
                hostport = w[len(key):].split(",")[0].replace("redis://", "")
                host, port = hostport.rsplit(":", 1)
                return host, int(port)
    return None


for line in sys.stdin:
    words = line.split()
    word = words[0] if words else ""
    if word == "hello":
        reply = "hello 1 library=source-probe version=1 language=python extend=no lost=no"
    elif word == "config":
        sentinels = [w for w in words if w.startswith("sentinels=")]
        addr = first_address(sentinels or words)
        with socket.create_connection(addr, timeout=5) as s:
            print("source %s" % s.getsockname()[0], file=sys.stderr, flush=True)
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
