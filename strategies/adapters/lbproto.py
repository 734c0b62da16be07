"""lbproto.py - what lockbench's Python library adapters share (docs/adapters.md).

Not an adapter itself: redis_py_lock.py and tooz_lock.py import it from their own
directory. It holds the protocol's plumbing only (reading requests, writing
replies, the words of config); each adapter keeps its library's calls to itself.

An adapter is an object with a method per request, each returning its reply line:
hello(), config(cfg), acquire(), release(), extend(ms). serve() reads the
requests, calls them, and turns the exceptions an adapter names into
"error TYPE: MESSAGE" on one line.

serve(..., quit_stops=True) is for a library whose acquire may wait without
end (a consensus lock's Lock call): each request runs in a thread of its own
while the main thread goes on reading, so that "quit" is answered at once;
the adapter's quit() then stops what is left (revokes its lease, closes its
session) and the request still waiting is abandoned. Notices (lost ...,
extended ttl_ms=N) may come from any thread: say() writes one whole line at
a time, and an adapter that must write its answer and a notice with nothing
between them holds lbproto.output around both and returns None.
"""
import os
import queue
import sys
import threading
import traceback
from urllib.parse import unquote, urlsplit

output = threading.RLock()  # held while a line is written


def say(line):
    with output:
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


def node_urls(cfg, scheme):
    """nodes=URL,URL,... of a consensus topology (docs/adapters.md): each
    SCHEME://HOST:PORT, in member order, as a list of (host, port). Anything
    else is refused with what was expected."""
    out = []
    for url in cfg["nodes"].split(","):
        u = urlsplit(url)
        if u.scheme != scheme or not u.hostname or u.port is None or u.path not in ("", "/"):
            raise ValueError("nodes: expected %s://HOST:PORT, got %r" % (scheme, url))
        out.append((u.hostname, u.port))
    return out


def _calls(adapter):
    return {"hello": lambda w: adapter.hello(),
             "config": lambda w: adapter.config(dict(x.split("=", 1) for x in w[1:])),
             "acquire": lambda w: adapter.acquire(),
             "release": lambda w: adapter.release(),
             "extend": lambda w: adapter.extend(int(w[1]))}


def serve(adapter, errors, quit_stops=False):
    """Answer lockbench's requests on stdin until quit or end of file."""
    if quit_stops:
        return _serve_threaded(adapter, errors)
    calls = _calls(adapter)
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


def _answer(adapter, errors, call, words):
    try:
        return call(words)
    except errors as e:
        return "error " + one_line(e)
    except Exception as e:  # in a thread: unanswered, the request would hang the run
        traceback.print_exc()
        return "error " + one_line(e)


def _serve_threaded(adapter, errors):
    """serve(), each request in a thread while stdin is still read: "quit" (or
    end of file) is taken at once, even while an acquire waits; adapter.quit()
    stops what it holds, and the waiting request is abandoned (its answer is
    never written: the process exits)."""
    calls = _calls(adapter)
    events = queue.Queue()  # ("line", raw or None at end of file) and ("answer", reply)

    def reader():
        for raw in sys.stdin:
            events.put(("line", raw))
        events.put(("line", None))

    def run(call, words):
        events.put(("answer", _answer(adapter, errors, call, words)))
    threading.Thread(target=reader, daemon=True).start()
    waiting = None  # the request whose answer is still to come
    later = []      # requests sent before it came: answered in turn
    while True:
        what, text = events.get()
        if what == "answer":
            if text is not None:  # None: the adapter wrote its answer itself
                say(text)
            waiting = None
        else:
            words = text.split() if text is not None else ["quit"]
            if words and words[0] == "quit":
                adapter.quit()
                if text is not None:
                    say("bye")
                os._exit(0)  # a request still waiting in a library call is abandoned
            if words:
                later.append(words)
        while later and not waiting:
            words = later.pop(0)
            call = calls.get(words[0])
            if call is None:
                say("error unknown request %s" % words[0])
                continue
            waiting = words[0]
            threading.Thread(target=run, args=(call, words), daemon=True).start()
