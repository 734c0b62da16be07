#!/usr/bin/env python3
"""redis_py_lock.py - lockbench's adapter for redis-py's Lock (redis/lock.py).

Speaks lockbench's adapter protocol, version 2 (docs/adapters.md), on stdin and
stdout, one line each way, through lbproto.py (beside it). Uses only redis-py's
public API, as its docs show: redis.Redis.from_url(...) (on rediss:// with
its TLS arguments ssl_ca_certs, ssl_certfile, ssl_keyfile, ssl_cert_reqs and
ssl_check_hostname),
redis.sentinel.Sentinel(...).master_for(...) on a Sentinel deployment (on
TLS Sentinels with ssl=True and those TLS arguments, in sentinel_kwargs too),
Redis.lock(name, timeout=..., blocking=...), Lock.acquire(), Lock.release(),
Lock.extend(), and the exceptions LockError, LockNotOwnedError and RedisError.
redis-py has no lost-lock callback: this adapter never sends "lost".

--check prints the library and version and exits 0 when redis-py imports.
The version is the installed distribution's own (importlib.metadata's
version('redis'), what pip or Debian recorded), in --check and in the hello:
lockbench writes it in meta.txt and summary.json, and checks it against the
version asked (redis-py@8.2.0, or any version run from --library-env DIR).
Arguments (lockbench run --adapter-arg ...): "defaults" keeps redis-py's own
default timeout=None (no TTL at all) instead of lockbench's --ttl. "retry"
builds the client with the constructor, redis.Redis(host=..., port=...),
instead of Redis.from_url: its connections then
keep the constructor's default retry, Retry(ExponentialWithJitterBackoff(0.01,
1), 10) on ConnectionError and TimeoutError (redis/client.py, Redis.__init__),
where from_url's have none (Retry(NoBackoff(), 0), redis/connection.py). A
command whose connection was reset is sent again, with the same arguments
(docs/pitfalls/lost-reply-acquire.md). One node only (no Sentinel).
"""
import sys

import lbproto

PROTOCOL = 2


def version(redis):
    """The installed redis-py's version, from its distribution's metadata."""
    try:
        from importlib.metadata import version as dist_version
        return dist_version("redis")
    except Exception:  # no metadata (a copied tree): the module's own word
        return redis.__version__


def check():
    try:
        import redis
    except Exception as e:  # any failure to import is "not usable here"
        print("cannot import redis (Debian package python3-redis, or pip's redis in a "
              "virtualenv): %s" % e)
        return 1
    print("library=redis-py version=%s python=%s" % (version(redis), sys.executable))
    return 0


class RedisPyLock:
    def __init__(self, redis, defaults, retry=False):
        self.redis = redis
        self.defaults = defaults
        self.retry = retry
        self.lock = None

    def hello(self):
        return ("hello %d library=redis-py version=%s language=python extend=yes lost=no extends=never"
                % (PROTOCOL, version(self.redis)))

    def config(self, cfg):
        timeout = int(cfg["timeout_ms"]) / 1000.0
        url, auth = lbproto.first_node(cfg)
        if "sentinels" in cfg and self.retry:
            # an error answer to config (a ValueError would end the adapter)
            raise self.redis.exceptions.RedisError(
                "the adapter argument retry is for one node, not a Sentinel deployment")
        if "sentinels" in cfg:
            # a Sentinel deployment: redis-py's own Sentinel support, as its
            # docs show; master_for asks the Sentinels on every connect and
            # again after a READONLY reply. The primary's AUTH and database
            # (--master-auth) are those nodes= gives; the Sentinels' own
            # (sentinel_auth=) goes in sentinel_kwargs, which redis-py uses for
            # its connections to the Sentinels instead of the socket options.
            # TLS Sentinels (rediss://): ssl=True and redis-py's own TLS
            # arguments for both, the Sentinels' connections (sentinel_kwargs)
            # and the primary's (master_for: its SentinelManagedSSLConnection).
            from redis.sentinel import Sentinel
            tls = lbproto.redis_py_tls(cfg, cfg["nodes"].split(",")[0])
            if tls:
                tls["ssl"] = True
            client = Sentinel(lbproto.sentinel_hosts(cfg), socket_timeout=timeout,
                              socket_connect_timeout=timeout,
                              sentinel_kwargs=dict(socket_timeout=timeout,
                                                   socket_connect_timeout=timeout,
                                                   **lbproto.sentinel_auth(cfg), **tls)).master_for(
                cfg["master"], socket_timeout=timeout, socket_connect_timeout=timeout, **auth,
                **tls)
        else:
            # the library talks to one Redis: the first node lockbench names
            # (rediss://: redis-py's own TLS arguments, lbproto.redis_py_tls)
            node = cfg["nodes"].split(",")[0]
            if self.retry:
                # the constructor, and its default retry (10, backed off)
                client = self.redis.Redis(host=url.hostname, port=url.port or 6379,
                                          socket_timeout=timeout,
                                          socket_connect_timeout=timeout,
                                          ssl=url.scheme == "rediss", **auth,
                                          **lbproto.redis_py_tls(cfg, node))
            else:
                client = self.redis.Redis.from_url(node, socket_timeout=timeout,
                                                   socket_connect_timeout=timeout,
                                                   **lbproto.redis_py_tls(cfg, node))
        ttl = None if self.defaults else int(cfg["ttl_ms"]) / 1000.0
        if cfg["wait"] == "library":
            # redis-py's defaults: blocking, sleep=0.1 s, blocking_timeout=None (forever)
            self.lock = client.lock(cfg["key"], timeout=ttl)
        else:
            self.lock = client.lock(cfg["key"], timeout=ttl, blocking=False)
        return "ok"

    def acquire(self):
        if not self.lock.acquire():
            return "busy"
        token = self.lock.local.token  # where redis-py keeps the token it wrote
        return "acquired token=%s" % (token.decode() if isinstance(token, bytes) else token)

    def release(self):
        try:
            self.lock.release()
        except self.redis.exceptions.LockNotOwnedError:
            return "not-owned"
        return "released"

    def extend(self, ms):
        try:
            self.lock.extend(ms / 1000.0, replace_ttl=True)
        except self.redis.exceptions.LockNotOwnedError:
            return "not-owned"
        return "extended"


def main():
    args = sys.argv[1:]
    if args == ["--check"]:
        return check()
    import redis
    from redis.exceptions import LockError, RedisError
    return lbproto.serve(lambda: RedisPyLock(redis, "defaults" in args, "retry" in args), (LockError, RedisError, OSError))


if __name__ == "__main__":
    sys.exit(main())
