#!/usr/bin/env python3
"""my_lock.py - your lock, for lockbench's lab (docs/lab.md).

Fill in MyLock.acquire() and MyLock.release() below (extend() is optional),
then, from lockbench's directory:

    chmod +x my_lock.py
    build/lockbench adapter-test exec:./my_lock.py   # does it answer as it should?
    build/lockbench exercise 1 exec:./my_lock.py     # the oracle grades it

Everything below the line "lockbench's side" speaks lockbench's adapter
protocol for you (docs/adapters.md): you need not read it. It runs under
lockbench's own Python (strategies/adapters/python/venv, redis-py 8.2.0)
when it finds it, else under this python3 with its redis-py.
"""
import os
import sys
import traceback


class MyLock:
    """One client's lock on one key. lockbench makes one per client.

    self.r       a redis-py client (redis.Redis) of the lock's server
    self.key     the lock's key (a str)
    self.ttl_ms  the lease lockbench asks for, in milliseconds
    """

    def __init__(self, r, key, ttl_ms):
        self.r = r
        self.key = key
        self.ttl_ms = ttl_ms

    def acquire(self):
        """Try once, without waiting. Return the value you wrote (a str: your
        token) when you now hold the lock, or None when another client holds
        it. A redis error (an exception) is told to lockbench as an error,
        and lockbench asks again a little later."""
        raise NotImplementedError("write MyLock.acquire() (docs/lab.md)")

    def release(self):
        """Let go of the lock. Return True when you released your own lock,
        False when it was no longer yours (it expired, or another holds it)."""
        raise NotImplementedError("write MyLock.release() (docs/lab.md)")

    # Optional: define extend(self, ms) to make your lease ms long from now;
    # return True when it was still yours, False when not. Without it, this
    # lock says it does not extend.


# ---- lockbench's side: you need not read further --------------------------

def _python_with_redis():
    """Run under lockbench's virtualenv (redis-py pinned) when it is there."""
    here = os.path.dirname(os.path.realpath(__file__))
    adapters = os.environ.get("LOCKBENCH_ADAPTERS", "")
    for py in (os.path.join(adapters, "python/venv/bin/python3") if adapters else None,
               os.path.join(here, "../../strategies/adapters/python/venv/bin/python3")):
        if py and os.access(py, os.X_OK):
            venv = os.path.realpath(os.path.join(os.path.dirname(py), ".."))
            if os.path.realpath(sys.prefix) != venv:
                os.execv(py, [py] + sys.argv)
            return  # already in it

_python_with_redis()
try:
    import redis
except ImportError as e:
    sys.exit("my_lock.py: cannot import redis-py (%s): install python3-redis, or run "
             "lockbench's harness/deps.sh python" % e)


def _say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _token_word(value):
    """token=V when V can go on the line as one plain word."""
    text = value.decode() if isinstance(value, bytes) else str(value)
    ok = text and len(text) <= 200 and all(33 <= ord(c) < 127 for c in text)
    return " token=" + text if ok else ""


def _answer(lock_class, state, words):
    what = words[0]
    if what == "hello":
        has_extend = getattr(lock_class, "extend", None) is not None
        return ("hello 3 library=my-lock version=0.1 language=python extend=%s lost=no "
                "extends=never" % ("yes" if has_extend else "no"))
    if what == "config":
        cfg = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        timeout = int(cfg["timeout_ms"]) / 1000.0
        r = redis.Redis.from_url(cfg["nodes"].split(",")[0], socket_timeout=timeout,
                                 socket_connect_timeout=timeout)
        state["lock"] = lock_class(r, cfg["key"], int(cfg["ttl_ms"]))
        return "ok"
    lock = state.get("lock")
    if lock is None:
        return "error no config yet"
    if what == "acquire":
        got = lock.acquire()
        if got is None or got is False:
            return "busy"
        return "acquired" + ("" if got is True else _token_word(got))
    if what == "release":
        return "released" if lock.release() else "not-owned"
    if what == "extend":
        if getattr(lock, "extend", None) is None:
            return "unsupported"
        return "extended" if lock.extend(int(words[1])) else "not-owned"
    return "error unknown request " + what


def main(lock_class=MyLock):
    """Answer lockbench's requests on stdin, one line each, with lock_class."""
    state = {}
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        if words[0] == "quit":
            _say("bye")
            return 0
        try:
            _say(_answer(lock_class, state, words))
        except Exception as e:  # yours or redis's: an error, never a dead adapter
            if not isinstance(e, (redis.RedisError, OSError, NotImplementedError)):
                traceback.print_exc()  # into the run's adapter-<client>.log
            _say("error " + (" ".join(("%s: %s" % (type(e).__name__, e)).split()))[:300])
    return 0


if __name__ == "__main__":
    sys.exit(main())
