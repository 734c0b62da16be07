#!/usr/bin/env python3
"""pottery_redlock.py - lockbench's adapter for pottery's Redlock (pottery/redlock.py).

Speaks lockbench's adapter protocol, version 2 (docs/adapters.md), on stdin and
stdout through lbproto.py (beside it). Uses only pottery's public API, as its
README shows: pottery.Redlock(key=..., masters={Redis, ...},
auto_release_time=...), Redlock.acquire(blocking=...), Redlock.release(),
and its exceptions ReleaseUnlockedLock and QuorumNotAchieved; one redis-py client per node
(Redis.from_url), every node lockbench gives it a master. A new Redlock for
every acquire, as `with Redlock(...)` is used: each has its own uuid (its
token).

pottery keeps the lock in the key "redlock:" + key on every master, outside
the key lockbench gives it: the manifest says so (outside_key), and it never
runs on --redis. It has no lost-lock callback and never extends by itself:
this adapter never sends "lost". Nor "extended": lockbench's "extend MS" asks
for the lease to end MS from now, and pottery's Redlock.extend() takes no
length: it re-arms its own auto_release_time (at most num_extensions, 3, times
a lock). Answering "extended" to any other MS said what pottery did not do
(measured by adapter-test: "extend 3000" on a 1000 ms lock answered
"extended", and another session acquired the lock 1500 ms later). So its
hello says extend=no and every extend is "unsupported".

--check prints the library and its version (importlib.metadata's) and exits 0
when pottery imports. Argument "defaults": auto_release_time stays pottery's
10 s instead of lockbench's --ttl.
"""
import sys

import lbproto

PROTOCOL = 2
DIST = "pottery"


def version():
    from importlib.metadata import version as dist_version
    return dist_version(DIST)


def check():
    try:
        import pottery  # noqa: F401
        v = version()
    except Exception as e:  # any failure is "not usable here"
        print("cannot import pottery (pip's pottery, in lockbench's virtualenv: "
              "bash harness/deps.sh python): %s" % e)
        return 1
    print("library=pottery version=%s python=%s" % (v, sys.executable))
    return 0


class PotteryRedlock:
    def __init__(self, redis, pottery, defaults):
        self.redis = redis
        self.pottery = pottery
        self.defaults = defaults
        self.lock = None

    def hello(self):
        return ("hello %d library=pottery version=%s language=python extend=no lost=no "
                "extends=never" % (PROTOCOL, version()))

    def config(self, cfg):
        timeout = int(cfg["timeout_ms"]) / 1000.0
        self.masters = frozenset(
            self.redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                      **lbproto.redis_py_tls(cfg, url))  # rediss://: redis-py's TLS
            for url in cfg["nodes"].split(","))
        self.key = cfg["key"]
        self.release_s = None if self.defaults else int(cfg["ttl_ms"]) / 1000.0
        self.blocking = cfg["wait"] == "library"  # its own: random 0-0.2 s sleeps, no end
        return "ok"

    def acquire(self):
        kw = {} if self.release_s is None else {"auto_release_time": self.release_s}
        lock = self.pottery.Redlock(key=self.key, masters=self.masters, **kw)
        if not lock.acquire(blocking=self.blocking):
            return "busy"
        self.lock = lock
        return "acquired"  # its uuid is private (Redlock._uuid): no token

    def release(self):
        lock, self.lock = self.lock, None
        try:
            lock.release()
        except self.pottery.ReleaseUnlockedLock:
            return "not-owned"
        return "released"

    def extend(self, ms):
        return "unsupported"  # as its hello says: Redlock.extend() takes no length


def main():
    args = sys.argv[1:]
    if args == ["--check"]:
        return check()
    import redis
    import pottery
    from redis.exceptions import RedisError
    return lbproto.serve(lambda: PotteryRedlock(redis, pottery, "defaults" in args),
                         (RedisError, OSError, pottery.PotteryError, RuntimeError, ValueError))


if __name__ == "__main__":
    sys.exit(main())
