#!/usr/bin/python3
"""An adapter host that dies mid-run (tests/test_adapter_hosts.c): as a host
(LOCKBENCH_ADAPTER_HOST names its socket) it serves each connection as a
session of a lock held in this process (a threading.Lock: one holder among its
sessions), and exits with status 3 after 1.5 s (LBTEST_HOST_LIFE), taking every
session with it.
Run without a host's socket, it serves one session on stdin and stdout."""
import os
import socket
import sys
import threading
import time

held = threading.Lock()


def serve(rfile, write):
    mine = False
    for raw in rfile:
        words = raw.split()
        if not words:
            continue
        w = words[0]
        if w == b"hello":
            reply = "hello 3 library=host-dies version=1 language=python extend=no lost=no extends=never"
        elif w == b"config":
            reply = "ok"
        elif w == b"acquire":
            mine = held.acquire(blocking=False)
            reply = "acquired" if mine else "busy"
        elif w == b"release":
            if mine:
                held.release()
            reply, mine = "released" if mine else "not-owned", False
        elif w == b"quit":
            write(b"bye\n")
            return
        else:
            reply = "error unknown request"
        write((reply + "\n").encode())


def session(conn):
    try:
        serve(conn.makefile("rb"), conn.sendall)
    except OSError:
        pass
    conn.close()


path = os.environ.get("LOCKBENCH_ADAPTER_HOST")
if not path:
    serve(sys.stdin.buffer, lambda b: (sys.stdout.buffer.write(b), sys.stdout.flush()))
    sys.exit(0)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(path)
listener.listen(64)
threading.Timer(float(os.environ.get("LBTEST_HOST_LIFE", "1.5")), lambda: os._exit(3)).start()
while True:
    c, _ = listener.accept()
    threading.Thread(target=session, args=(c,), daemon=True).start()
