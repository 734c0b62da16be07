"""lbproto.py - what lockbench's Python library adapters share (docs/adapters.md).

Not an adapter itself: redis_py_lock.py and tooz_lock.py import it from their own
directory. It holds the protocol's plumbing only (reading requests, writing
replies, the words of config); each adapter keeps its library's calls to itself.

An adapter is an object with a method per request, each returning its reply line:
hello(), config(cfg), acquire(), release(), extend(ms). serve() reads the
requests, calls them, and turns the exceptions an adapter names into
"error TYPE: MESSAGE" on one line.
"""
import os
import sys
from urllib.parse import unquote, urlsplit


def say(line):
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # lockbench has closed its end (the run is over): nobody to answer
        os._exit(0)


def one_line(e):
    """An exception as the text of an error reply: its type, its words on one line."""
    return "%s: %s" % (type(e).__name__, " ".join(str(e).split()))


def first_node(cfg):
    """The first URL of nodes= (a single-node lock's node), split, with its user,
    password (%XX-decoded) and database."""
    url = urlsplit(cfg["nodes"].split(",")[0])
    return url, {"username": unquote(url.username) if url.username else None,
                 "password": unquote(url.password) if url.password else None,
                 "db": int(url.path.strip("/") or 0)}


def sentinel_hosts(cfg):
    """sentinels=H:P[,H:P...] as a list of (host, port)."""
    out = []
    for hp in cfg["sentinels"].split(","):
        host, port = hp.rsplit(":", 1)
        out.append((host, int(port)))
    return out


def serve(adapter, errors):
    """Answer lockbench's requests on stdin until quit or end of file."""
    calls = {"hello": lambda w: adapter.hello(),
             "config": lambda w: adapter.config(dict(x.split("=", 1) for x in w[1:])),
             "acquire": lambda w: adapter.acquire(),
             "release": lambda w: adapter.release(),
             "extend": lambda w: adapter.extend(int(w[1]))}
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        if words[0] == "quit":
            say("bye")
            return 0
        call = calls.get(words[0])
        if call is None:
            say("error unknown request %s" % words[0])
            continue
        try:
            say(call(words))
        except errors as e:
            say("error " + one_line(e))
    return 0
