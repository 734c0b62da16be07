#!/usr/bin/env python3
"""redis_py_lock.py - lockbench's adapter for redis-py's Lock (redis/lock.py).

Speaks lockbench's adapter protocol, version 1 (docs/adapters.md), on stdin and
stdout, one line each way. Uses only redis-py's public API, as its docs show:
redis.Redis.from_url(...), redis.sentinel.Sentinel(...).master_for(...) on a
Sentinel deployment, Redis.lock(name, timeout=..., blocking=...),
Lock.acquire(), Lock.release(), Lock.extend(), and the exceptions LockError,
LockNotOwnedError and RedisError. redis-py has no lost-lock callback: this
adapter never sends "lost".

--check prints the library and version and exits 0 when redis-py imports.
Arguments (lockbench run --adapter-arg ...): "defaults" keeps redis-py's own
default timeout=None (no TTL at all) instead of lockbench's --ttl.
"""
import os
import sys

PROTOCOL = 2


def check():
    try:
        import redis
    except Exception as e:  # any failure to import is "not usable here"
        print("cannot import redis (Debian package python3-redis): %s" % e)
        return 1
    print("library=redis-py version=%s" % redis.__version__)
    return 0


def main():
    args = sys.argv[1:]
    if args == ["--check"]:
        return check()
    import redis
    from redis.exceptions import LockError, LockNotOwnedError, RedisError

    defaults = "defaults" in args
    lock = None

    def say(line):
        try:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            # lockbench has closed its end (the run is over): nobody to answer
            os._exit(0)

    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        cmd = words[0]
        try:
            if cmd == "hello":
                say("hello %d library=redis-py version=%s language=python extend=yes lost=no extends=never"
                    % (PROTOCOL, redis.__version__))
            elif cmd == "config":
                cfg = dict(w.split("=", 1) for w in words[1:])
                timeout = int(cfg["timeout_ms"]) / 1000.0
                if "sentinels" in cfg:
                    # a Sentinel deployment: redis-py's own Sentinel support, as its
                    # docs show; master_for asks the Sentinels on every connect and
                    # again after a READONLY reply
                    from redis.sentinel import Sentinel
                    from urllib.parse import unquote, urlsplit
                    hosts = [(hp.rsplit(":", 1)[0], int(hp.rsplit(":", 1)[1]))
                             for hp in cfg["sentinels"].split(",")]
                    # the primary's AUTH and database (--master-auth), as nodes= says them
                    url = urlsplit(cfg["nodes"].split(",")[0])
                    auth = {"username": unquote(url.username) if url.username else None,
                            "password": unquote(url.password) if url.password else None,
                            "db": int(url.path.strip("/") or 0)}
                    client = Sentinel(hosts, socket_timeout=timeout,
                                      socket_connect_timeout=timeout).master_for(
                        cfg["master"], socket_timeout=timeout, socket_connect_timeout=timeout,
                        **auth)
                else:
                    # the library talks to one Redis: the first node lockbench names
                    client = redis.Redis.from_url(cfg["nodes"].split(",")[0],
                                                  socket_timeout=timeout,
                                                  socket_connect_timeout=timeout)
                ttl = None if defaults else int(cfg["ttl_ms"]) / 1000.0
                if cfg["wait"] == "library":
                    # redis-py's defaults: blocking, sleep=0.1 s, blocking_timeout=None (forever)
                    lock = client.lock(cfg["key"], timeout=ttl)
                else:
                    lock = client.lock(cfg["key"], timeout=ttl, blocking=False)
                say("ok")
            elif cmd == "acquire":
                if lock.acquire():
                    token = lock.local.token  # where redis-py keeps the token it wrote
                    say("acquired token=%s" % (token.decode() if isinstance(token, bytes) else token))
                else:
                    say("busy")
            elif cmd == "release":
                lock.release()
                say("released")
            elif cmd == "extend":
                lock.extend(int(words[1]) / 1000.0, replace_ttl=True)
                say("extended")
            elif cmd == "quit":
                say("bye")
                return 0
            else:
                say("error unknown request %s" % cmd)
        except LockNotOwnedError:
            say("not-owned")
        except (LockError, RedisError, OSError) as e:
            say("error %s: %s" % (type(e).__name__, " ".join(str(e).split())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
