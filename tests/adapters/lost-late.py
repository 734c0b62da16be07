#!/usr/bin/python3
"""A lock that tells its holder of a lost lease 3 s late: SET NX PX with a token,
released by a Lua compare-and-delete; a thread looks every 50 ms whether the key
still holds its token and, once it does not, waits 3 s more before it says
'lost'. `lockbench adapter-test` must fail its lost property with the lag
(about 3000 ms), and a run shows the same lag."""
import sys
import threading
import time
import uuid

import redis

RELEASE = ("if redis.call('get', KEYS[1]) == ARGV[1] then "
           "return redis.call('del', KEYS[1]) else return 0 end")
LATE_S = 3.0

out = threading.Lock()
r = key = ttl = None
token = None  # the token of the lock held, or None


def say(line):
    with out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def watch(mine):
    while token == mine:
        time.sleep(0.05)
        try:
            value = r.get(key)
        except redis.RedisError:
            continue
        if value is None or value.decode() != mine:
            time.sleep(LATE_S)
            if token == mine:
                say("lost the key was gone (told %d ms late)" % (LATE_S * 1000))
            return


for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "hello":
        say("hello 3 library=lost-late version=1 language=python extend=no lost=yes "
            "extends=never claims=DO")
    elif words[0] == "config":
        cfg = dict(w.split("=", 1) for w in words[1:])
        r = redis.Redis.from_url(cfg["nodes"].split(",")[0],
                                 socket_timeout=int(cfg["timeout_ms"]) / 1000)
        key, ttl = cfg["key"], int(cfg["ttl_ms"])
        say("ok")
    elif words[0] == "acquire":
        mine = uuid.uuid4().hex
        try:
            if r.set(key, mine, nx=True, px=ttl):
                token = mine
                threading.Thread(target=watch, args=(mine,), daemon=True).start()
                say("acquired token=" + mine)
            else:
                say("busy")
        except redis.RedisError as e:
            say("error " + " ".join(str(e).split()))
    elif words[0] == "release":
        mine, token = token, None
        try:
            say("released" if mine and r.eval(RELEASE, 1, key, mine) == 1 else "not-owned")
        except redis.RedisError as e:
            say("error " + " ".join(str(e).split()))
    elif words[0] == "extend":
        say("unsupported")
    elif words[0] == "quit":
        say("bye")
        break
