#!/usr/bin/python3
"""The peer lockbench bench compares against: redis-py's Lock (Debian's
python3-redis), used the way its users do, under the same contended load as
`lockbench run --work counter --hold 0`: N processes, one lock, a
non-atomic GET + SET of a counter inside.

redis-py's Lock is SET NX PX with a random token and a Lua compare-and-delete
release; a waiter polls every `sleep` seconds (0.1 by default).

Prints one line of JSON: sections, elapsed seconds, final counter.
"""
import argparse
import json
import os
import sys
import time

import redis


def worker(args, deadline, out):
    r = redis.Redis(host=args.host, port=args.port)
    lock = r.lock(args.prefix + "lock", timeout=args.ttl / 1000.0, sleep=args.sleep,
                  blocking_timeout=10)
    sections = 0
    while time.monotonic() < deadline:
        if not lock.acquire():
            continue
        try:
            value = int(r.get(args.prefix + "counter") or 0)
            r.set(args.prefix + "counter", value + 1)
            sections += 1
        finally:
            try:
                lock.release()
            except redis.exceptions.LockError:
                pass
    os.write(out, ("%d\n" % sections).encode())
    os._exit(0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--duration", type=float, default=3)
    p.add_argument("--ttl", type=int, default=2000)
    p.add_argument("--sleep", type=float, default=0.1)
    p.add_argument("--prefix", default="lbpeer:")
    args = p.parse_args()
    r = redis.Redis(host=args.host, port=args.port)
    r.delete(args.prefix + "counter", args.prefix + "lock")
    rd, wr = os.pipe()
    start = time.monotonic()
    deadline = start + args.duration
    pids = []
    for _ in range(args.clients):
        pid = os.fork()
        if pid == 0:
            os.close(rd)
            worker(args, deadline, wr)
        pids.append(pid)
    os.close(wr)
    for pid in pids:
        os.waitpid(pid, 0)
    elapsed = time.monotonic() - start
    with os.fdopen(rd) as f:
        sections = sum(int(line) for line in f if line.strip())
    counter = int(r.get(args.prefix + "counter") or 0)
    r.delete(args.prefix + "counter", args.prefix + "lock")
    json.dump({"sections": sections, "elapsed": elapsed, "counter": counter}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
