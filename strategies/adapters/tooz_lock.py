#!/usr/bin/python3
"""tooz_lock.py - lockbench's adapter for OpenStack tooz's Redis lock
(tooz/drivers/redis.py, RedisLock).

Speaks lockbench's adapter protocol, version 2 (docs/adapters.md), through
lbproto.py (beside it). Uses only tooz's public API, as its documentation
shows: tooz.coordination.get_coordinator(url, member_id),
coordinator.start(start_heart=True), coordinator.get_lock(name),
lock.acquire(blocking=...), lock.release(), and tooz.ToozError (which
ToozConnectionError is).

The lease: tooz's Redis driver takes it from the URL option lock_timeout, in
whole seconds (it reads int(lock_timeout)), so ttl_ms is rounded up to a whole
second, at least 1. The network timeout (socket_timeout) is whole seconds too.
start(start_heart=True) starts tooz's heart: a thread that calls the
coordinator's heartbeat(), which re-arms every lock it holds to lock_timeout
(redis-py's Lock.reacquire), about every min(lock_timeout, membership_timeout)/2
seconds. A failed re-arm is only logged by tooz (to this adapter's stderr:
lockbench keeps it as adapter-<client>.log); the lock still reads acquired and
nothing tells the application, so this adapter can never send "lost" and says
lost=no, extends=silently. No "extend" request: tooz's re-arm takes no length.

The token: redis-py's token is kept inside tooz's private RedisLock._lock; this
adapter does not reach for it, so "acquired" carries none (lockbench then
matches the servers' sets to the section by time).

The key: tooz names the Redis key "<namespace>_<name>_lock" with its namespace
as bytes, so on Python 3 the lock of name K is b'_tooz'_K_lock (the manifest's
outside_key); its heart also writes _tooz_beats:<member id> (PSETEX).

--check prints the library and version and exits 0 when tooz imports.
Arguments (lockbench run --adapter-arg ...): "defaults" keeps tooz's own
lock_timeout (its timeout option, 30 s) instead of lockbench's --ttl.
"""
import logging
import math
import sys
from urllib.parse import quote, unquote

import lbproto

PROTOCOL = 2


def tooz_version():
    from importlib import metadata
    return metadata.version("tooz")


def check():
    try:
        import tooz.coordination  # noqa: F401
        import tooz.drivers.redis  # noqa: F401  (its Redis driver, with redis-py)
        version = tooz_version()
    except Exception as e:  # any failure to import is "not usable here"
        print("cannot import tooz's Redis driver (Debian package python3-tooz): %s" % e)
        return 1
    print("library=tooz version=%s" % version)
    return 0


def seconds(ms):
    """A length in ms as the whole seconds tooz's options take, rounded up, at least 1."""
    return max(1, math.ceil(int(ms) / 1000))


class ToozLock:
    def __init__(self, coordination, defaults):
        self.coordination = coordination
        self.defaults = defaults
        self.blocking = False
        self.lock = None

    def hello(self):
        return ("hello %d library=tooz version=%s language=python extend=no lost=no extends=silently"
                % (PROTOCOL, tooz_version()))

    def url(self, cfg):
        """tooz's redis:// URL for this run (tooz/drivers/redis.py, RedisDriver's docstring)."""
        node, auth = lbproto.first_node(cfg)
        if auth["username"]:
            raise ValueError("tooz's Redis URL takes a password, not a user name")
        if node.password and unquote(node.password) != node.password:
            raise ValueError("tooz passes the URL's password on as written, not %-decoded")
        opts = ["socket_timeout=%d" % seconds(cfg["timeout_ms"])]
        if not self.defaults:
            opts.append("lock_timeout=%d" % seconds(cfg["ttl_ms"]))
        if auth["db"]:
            opts.append("db=%d" % auth["db"])
        if node.scheme == "rediss":
            # tooz's Redis driver passes ssl, ssl_certfile and ssl_keyfile of its
            # URL on to redis-py (RedisDriver.CLIENT_ARGS), and no CA file nor
            # ssl_cert_reqs: the server is checked against the system's CAs
            # (the manifest's tls = cert: lockbench refuses --tls-ca and
            # --tls-insecure for it)
            tls = lbproto.tls_options(cfg)
            if tls["ca"] or tls["insecure"]:
                raise ValueError("tooz's Redis URL takes no CA file and no ssl_cert_reqs: "
                                 "its TLS checks the server against the system's CAs")
            opts.append("ssl=true")
            opts += ["%s=%s" % (arg, quote(tls[name], safe="/"))
                     for name, arg in (("cert", "ssl_certfile"), ("key", "ssl_keyfile")) if tls[name]]
        password = ":%s@" % node.password if node.password else ""
        if "sentinels" in cfg:
            # tooz's own Sentinel support: the URL names a Sentinel and the
            # primary's name, further Sentinels as sentinel_fallback; the
            # password is the primary's
            hosts = cfg["sentinels"].split(",")
            # (%-encoded: tooz reads the query with parse_qs, which decodes it)
            opts.append("sentinel=%s" % quote(cfg["master"], safe=""))
            opts += ["sentinel_fallback=%s" % quote(hp, safe=":") for hp in hosts[1:]]
            where = hosts[0]
        else:
            where = node.netloc.rsplit("@", 1)[-1]
        return "redis://%s%s?%s" % (password, where, "&".join(opts))

    def config(self, cfg):
        url = self.url(cfg)
        member = "%s:client-%s" % (cfg["key"], cfg.get("client", "0"))
        coord = self.coordination.get_coordinator(url, member.encode())
        # the heart: a thread calling heartbeat(), which re-arms the held locks
        coord.start(start_heart=True)
        self.lock = coord.get_lock(cfg["key"])
        self.blocking = cfg["wait"] == "library"  # tooz's own wait: redis-py's, every 0.1 s, forever
        logging.getLogger("tooz_lock").info("tooz options %s, Redis key %s",
                                            url.split("?", 1)[1], self.lock.name)
        return "ok"

    def acquire(self):
        return "acquired" if self.lock.acquire(blocking=self.blocking) else "busy"

    def release(self):
        # what tooz tells its application up to the end: lock.acquired
        held = self.lock.acquired
        # tooz's release returns False when redis-py found the lock gone or another's,
        # and also when its own retry after a ConnectionError met the token redis-py
        # had already forgotten ("Cannot release an unlocked lock"): both not-owned here
        if self.lock.release():
            return "released"
        logging.getLogger("tooz_lock").warning(
            "release found the lock gone; until then tooz said acquired=%s", held)
        return "not-owned"

    def extend(self, ms):
        return "unsupported"


def main():
    args = sys.argv[1:]
    if args == ["--check"]:
        return check()
    # tooz reports through logging: a failed heartbeat is a WARNING, a failed
    # release an ERROR; to stderr, with the time, so that the run's
    # adapter-<client>.log shows when
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s.%(msecs)03d %(levelname)s %(name)s: %(message)s",
                        datefmt="%H:%M:%S")
    logging.getLogger("stevedore").setLevel(logging.WARNING)
    import tooz
    from tooz import coordination
    import tooz.drivers.redis  # noqa: F401  loaded once: an adapter host's sessions share it
    return lbproto.serve(lambda: ToozLock(coordination, "defaults" in args), (tooz.ToozError, ValueError, OSError))


if __name__ == "__main__":
    sys.exit(main())
