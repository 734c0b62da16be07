#!/usr/bin/python3
"""Test fixture: seed 001's SETNX-then-EXPIRE as a program (protocol version 3). Its code
announces the failpoint after-setnx between the two commands, so crash-before-expire can
kill it there: the lock is left with no TTL, as the setnx-expire-as-written recipe's is."""
import sys
import uuid

import redis

RELEASE = ("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
           "else return 0 end")


def say(line):
    print(line, flush=True)


def at(failpoint):
    """Deliberately goes on at end of file: lockbench's SIGSTOP must keep a crash's end
    of file from letting the PEXPIRE after the failpoint through."""
    say("at " + failpoint)
    sys.stdin.readline()


def one_line(e):
    return " ".join(str(e).split()) or type(e).__name__


r = key = token = None
ttl = 0
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "hello":
        say("hello 3 library=setnx-then-expire version=1 language=python extend=no lost=no "
            "extends=never claims=MDO failpoints=after-setnx")
    elif words[0] == "config":
        cfg = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        timeout = int(cfg["timeout_ms"]) / 1000
        r = redis.Redis.from_url(cfg["nodes"].split(",")[0], socket_timeout=timeout,
                                 socket_connect_timeout=timeout)
        key, ttl = cfg["key"], int(cfg["ttl_ms"])
        say("ok")
    elif words[0] == "acquire":
        try:
            token = uuid.uuid4().hex
            if r.setnx(key, token):
                at("after-setnx")
                r.pexpire(key, ttl)
                say("acquired token=" + token)
            else:
                say("busy")
        except redis.RedisError as e:
            say("error " + one_line(e))
    elif words[0] == "release":
        try:
            say("released" if r.eval(RELEASE, 1, key, token) == 1 else "not-owned")
        except redis.RedisError as e:
            say("error " + one_line(e))
    elif words[0] == "quit":
        say("bye")
        break
