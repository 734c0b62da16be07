#!/usr/bin/python3
"""The null adapter in Python (manifest null-python.adapter): grants every
acquire at once and sends nothing to Redis, through lbproto.serve, the loop
every Python library adapter here runs (redis_py_lock.py, tooz_lock.py). What
a section costs through it is the protocol and that loop, which `lockbench
bench` sets against the C null adapter and a redis-py section. With the
argument "threaded" it serves as the consensus locks' adapters do
(kazoo_lock.py: serve(..., quit_stops=True), a thread a
request)."""
import sys

import lbproto


class Null:
    def hello(self):
        return ("hello 3 library=null version=1 language=python extend=yes lost=no "
                "extends=never claims=-")

    def config(self, cfg):
        return "ok"

    def acquire(self):
        return "acquired"

    def release(self):
        return "released"

    def extend(self, ms):
        return "extended"

    def quit(self):
        pass


if __name__ == "__main__":
    if "--check" in sys.argv[1:]:
        print("library=null version=1")
        sys.exit(0)
    sys.exit(lbproto.serve(Null, (), quit_stops="threaded" in sys.argv[1:]))
