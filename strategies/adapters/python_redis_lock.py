#!/usr/bin/env python3
"""python_redis_lock.py - lockbench's adapter for python-redis-lock (redis_lock).

Speaks lockbench's adapter protocol, version 2 (docs/adapters.md), on stdin and
stdout through lbproto.py (beside it). Uses only python-redis-lock's public API,
as its README shows: redis_lock.Lock(conn, name, expire=..., auto_renewal=...),
Lock.acquire(blocking=...), Lock.release(), Lock.extend(expire=...), Lock.id,
and its exceptions NotAcquired and NotExpirable; the connection is redis-py's
Redis.from_url. A new Lock for every acquire, as `with redis_lock.Lock(conn,
name):` makes one: each section has an id (its token) of its own.

The library keeps the lock in the key "lock:" + name (and wakes waiters
through the list "lock-signal:" + name), outside the key lockbench gives it:
its manifests say so (outside_key), and it never runs on --redis.

expire is whole seconds (the library int()s it): lockbench's --ttl is rounded
up to the next second, and the acquired line's validity_ms says the lease it
set. It has no lost-lock callback: this adapter never sends "lost".

Arguments (from the manifest or --adapter-arg): "renew" passes
auto_renewal=True: a thread extends the lease every expire*2/3 s while the
lock is held (redis_lock/__init__.py, Lock._lock_renewer); its failures are
the thread's own (an uncaught NotAcquired ends it, python-redis-lock #85: its
traceback goes to the adapter's stderr, adapter-N.log). "defaults" keeps the
library's expire=None (no TTL) instead of lockbench's --ttl.

--check prints the library and its version (importlib.metadata's) and exits 0
when redis_lock imports.
"""
import math
import sys

import lbproto

PROTOCOL = 2
DIST = "python-redis-lock"


def version():
    from importlib.metadata import version as dist_version
    return dist_version(DIST)


def check():
    try:
        import redis_lock  # noqa: F401
        v = version()
    except Exception as e:  # any failure is "not usable here"
        print("cannot import redis_lock (pip's python-redis-lock, in lockbench's virtualenv: "
              "bash harness/deps.sh python): %s" % e)
        return 1
    print("library=python-redis-lock version=%s python=%s" % (v, sys.executable))
    return 0


class PythonRedisLock:
    def __init__(self, redis, redis_lock, renew, defaults):
        self.redis = redis
        self.redis_lock = redis_lock
        self.renew = renew
        self.defaults = defaults
        self.lock = None

    def hello(self):
        return ("hello %d library=python-redis-lock version=%s language=python extend=yes "
                "lost=no extends=%s" % (PROTOCOL, version(), "silently" if self.renew else "never"))

    def config(self, cfg):
        timeout = int(cfg["timeout_ms"]) / 1000.0
        if "sentinels" in cfg:
            # a Sentinel deployment: the library takes any redis-py client, so
            # redis-py's own Sentinel client (master_for) is the one given
            from redis.sentinel import Sentinel
            url, auth = lbproto.first_node(cfg)
            self.client = Sentinel(lbproto.sentinel_hosts(cfg), socket_timeout=timeout,
                                   socket_connect_timeout=timeout).master_for(
                cfg["master"], socket_timeout=timeout, socket_connect_timeout=timeout, **auth)
        else:
            # (rediss://: redis-py's own TLS arguments, lbproto.redis_py_tls)
            node = cfg["nodes"].split(",")[0]
            self.client = self.redis.Redis.from_url(node, socket_timeout=timeout,
                                                    socket_connect_timeout=timeout,
                                                    **lbproto.redis_py_tls(cfg, node))
        self.key = cfg["key"]
        # whole seconds, at least one: the library's unit
        self.expire = None if self.defaults and not self.renew else max(1, math.ceil(int(cfg["ttl_ms"]) / 1000))
        self.blocking = cfg["wait"] == "library"  # its own wait: BLPOP on the signal list
        return "ok"

    def acquire(self):
        lock = self.redis_lock.Lock(self.client, self.key, expire=self.expire,
                                    auto_renewal=self.renew)
        if not lock.acquire(blocking=self.blocking):
            return "busy"
        self.lock = lock
        if self.expire is None:
            return "acquired token=%s" % lock.id
        return "acquired token=%s validity_ms=%d" % (lock.id, self.expire * 1000)

    def release(self):
        lock, self.lock = self.lock, None
        try:
            lock.release()
        except self.redis_lock.NotAcquired:
            return "not-owned"
        return "released"

    def extend(self, ms):
        try:
            self.lock.extend(expire=max(1, math.ceil(ms / 1000)))
        except self.redis_lock.NotAcquired:
            return "not-owned"
        return "extended"


def main():
    args = sys.argv[1:]
    if args == ["--check"]:
        return check()
    import redis
    import redis_lock
    from redis.exceptions import RedisError
    return lbproto.serve(lambda: PythonRedisLock(redis, redis_lock, "renew" in args, "defaults" in args),
                         (RedisError, OSError, RuntimeError, ValueError, TypeError))


if __name__ == "__main__":
    sys.exit(main())
