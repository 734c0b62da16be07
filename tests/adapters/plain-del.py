#!/usr/bin/python3
"""Test fixture: the commonest bug of a hand-written lock, behind the adapter protocol
(docs/adapters.md). Acquire: SET key token NX PX ttl. Release: a plain DEL, which deletes
whatever lock is there, the next holder's included (set-nx-px's recipe, as a program).

Arguments (lockbench's --adapter-arg):
  --no-token  do not say token= when acquired: lockbench must then tell whose lock a SET
              wrote from the times alone
  --getdel    release with GETDEL instead of DEL: the same unconditional delete, but the
              old value comes back, so the program can say on stderr whose lock it deleted
              ("foreign" or "own"): the truth a test checks lockbench's attribution against
"""
import sys
import uuid

import redis

ARGS = sys.argv[1:]
SAY_TOKEN = "--no-token" not in ARGS
GETDEL = "--getdel" in ARGS


def say(line):
    print(line, flush=True)


def one_line(e):
    return " ".join(str(e).split()) or type(e).__name__


r = key = token = None
ttl = 0
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "hello":
        say("hello 1 library=plain-del version=1 language=python extend=no lost=no")
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
            if r.set(key, token, nx=True, px=ttl):
                say("acquired token=" + token if SAY_TOKEN else "acquired")
            else:
                say("busy")
        except redis.RedisError as e:
            say("error " + one_line(e))
    elif words[0] == "release":
        try:
            if GETDEL:
                old = r.execute_command("GETDEL", key)
                if old is not None:
                    whose = "own" if old.decode() == token else "foreign"
                    print("%s %s" % (whose, old.decode()), file=sys.stderr, flush=True)
            else:
                r.delete(key)
            say("released")
        except redis.RedisError as e:
            say("error " + one_line(e))
    elif words[0] == "quit":
        say("bye")
        break
