"""lbproto.py - what lockbench's Python library adapters share (docs/adapters.md).

Not an adapter itself: redis_py_lock.py and tooz_lock.py import it from their own
directory. It holds the protocol's plumbing only (reading requests, writing
replies, the words of config); each adapter keeps its library's calls to itself.

An adapter is an object with a method per request, each returning its reply line:
hello(), config(cfg), acquire(), release(), extend(ms); serve(make, ...) takes
a function that makes one, and makes one per session (a process serves one;
an adapter host many, each with its own). serve() reads the requests, calls
them, and turns the exceptions an adapter names into "error TYPE: MESSAGE" on
one line. The adapter's channel is adapter.out: out.say(line) writes a line.

serve(..., quit_stops=True) is for a library whose acquire may wait without
end (a consensus lock's Lock call): each request runs in a thread of its own
while the main thread goes on reading, so that "quit" is answered at once;
the adapter's quit() then stops what is left (revokes its lease, closes its
session) and the request still waiting is abandoned. Notices (lost ...,
extended ttl_ms=N) may come from any thread: out.say() writes one whole line
at a time, and an adapter that must write its answer and a notice with
nothing between them holds out.lock around both and returns None.
"""
import os
import queue
import signal
import socket
import sys
import threading
import traceback
from urllib.parse import unquote, urlsplit


class Channel:
    """One session's lines: requests read from @rfile (a binary buffered
    reader), replies and notices written to @write (one call per line: one
    system call, no buffer to flush). Notices may come from any thread:
    say() writes one whole line at a time, and an adapter that must write its
    answer and a notice with nothing between them holds its channel's lock
    around both (adapter.out.lock) and returns None."""

    def __init__(self, rfile, write, on_broken):
        self.rfile = rfile
        self.write = write
        self.on_broken = on_broken
        self.lock = threading.RLock()  # held while a line is written
        self.closed = False
        self.threaded = False   # serve(..., quit_stops=True): lines come through the reader
        self.go = None          # threading.Event while "at NAME" waits for its "go"

    def at(self, name):
        """Failpoint NAME (one the adapter's hello names in failpoints=): write
        "at NAME" and wait for lockbench's "go" (docs/adapters.md); whatever
        the scenario armed there acts meanwhile. False when the session ends
        instead (end of file, quit): the caller stops."""
        if not self.threaded:
            self.say("at " + name)
            raw = self.rfile.readline()
            return raw.decode("ascii", "replace").split() == ["go"]
        go = threading.Event()
        with self.lock:
            self.go = go
        self.say("at " + name)
        go.wait()
        with self.lock:
            self.go = None
            return not self.closed

    def say(self, line):
        with self.lock:
            if self.closed:
                return
            try:
                self.write((line + "\n").encode())
            except OSError:  # lockbench has closed its end: nobody to answer
                self.closed = True
                self.on_broken()


def _stdio_gone():
    os._exit(0)  # lockbench has closed the pipe (the run is over)


def _write_all(fd):
    def write(data):
        while data:
            data = data[os.write(fd, data):]
    return write


# the channel of a process that serves one session on stdin and stdout
stdio = Channel(sys.stdin.buffer, _write_all(1), _stdio_gone)
output = stdio.lock  # older names: a single-session adapter's channel
say = stdio.say


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


def sentinel_auth(cfg):
    """sentinel_auth=redis://[USER]:PASSWORD@H:P, the Sentinels' own AUTH when
    --sentinel gave one (docs/adapters.md), as username and password
    (%XX-decoded); {} when the Sentinels need none."""
    if "sentinel_auth" not in cfg:
        return {}
    url = urlsplit(cfg["sentinel_auth"])
    return {"username": unquote(url.username) if url.username else None,
            "password": unquote(url.password) if url.password else None}


def tls_options(cfg):
    """config's TLS words (docs/adapters.md: only with rediss:// nodes) as
    {"ca": PATH, "cert": PATH, "key": PATH, "insecure": bool}, each path
    absolute and %XX-decoded; a path absent is None (the library's default:
    the system's CAs, no client certificate)."""
    return {"ca": unquote(cfg["tls_ca"]) if "tls_ca" in cfg else None,
            "cert": unquote(cfg["tls_cert"]) if "tls_cert" in cfg else None,
            "key": unquote(cfg["tls_key"]) if "tls_key" in cfg else None,
            "insecure": cfg.get("tls_insecure") == "1"}


def redis_py_tls(cfg, url):
    """redis-py's own TLS arguments (Redis.from_url(url, **these), for its
    SSLConnection) for a rediss:// @url: the CA, the client certificate and
    key, and the check of the server's certificate and name (redis-py 4's
    default checks no name: asked here, as lockbench's tunnel checks it),
    none of it with tls_insecure=1. {} for a redis:// URL."""
    if urlsplit(url).scheme != "rediss":
        return {}
    tls = tls_options(cfg)
    out = {"ssl_cert_reqs": "none" if tls["insecure"] else "required",
           "ssl_check_hostname": not tls["insecure"]}
    for name, arg in (("ca", "ssl_ca_certs"), ("cert", "ssl_certfile"), ("key", "ssl_keyfile")):
        if tls[name]:
            out[arg] = tls[name]
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


def serve(make, errors, quit_stops=False):
    """Answer lockbench's requests: make() is a new adapter, for each session.
    A process serves one session on stdin and stdout; an adapter host (the
    environment's LOCKBENCH_ADAPTER_HOST names its Unix socket) serves every
    connection on that socket as a session of its own, in a thread, with an
    adapter of its own: its own library objects and connections, as a
    process of its own would have (docs/adapters.md, Adapter hosts)."""
    path = os.environ.get("LOCKBENCH_ADAPTER_HOST")
    if not path:
        return _session(make(), errors, quit_stops, stdio, lambda: os._exit(0))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(4096)
    # A session is a process forked from the host, which has loaded the
    # interpreter and the library once: its pages are the host's until it
    # writes them. Not a thread each: a thousand threads polling in one
    # interpreter queue for its lock (the GIL), and a holder's release waited
    # there more than 6 s behind the pollers (measured: the run was void).
    signal.signal(signal.SIGCHLD, _reap)
    import ctypes  # loaded once, here: every session's prctl uses it
    libc = ctypes.CDLL(None, use_errno=True)
    while True:
        conn, _ = listener.accept()
        pid = os.fork()
        if pid == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _die_with(libc, os.getppid())
            _hosted(conn, make, errors, quit_stops)
            os._exit(0)
        conn.close()


def _reap(signum, frame):
    """The host waits for its sessions that ended (their CPU time then counts
    in the host's, as lockbench reads it)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def _die_with(libc, host):
    """A session dies with its host (PR_SET_PDEATHSIG), as the host dies with
    lockbench: nothing outlives a kill -9."""
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != host:  # the host died before the line above
        os._exit(0)


def _hosted(conn, make, errors, quit_stops):
    """One session of a host, until quit or its end of file."""
    rfile = conn.makefile("rb")
    ch = Channel(rfile, conn.sendall, lambda: None)
    try:
        _session(make(), errors, quit_stops, ch, lambda: None)
    except Exception:  # this session's, not the host's: the others go on
        traceback.print_exc()
    finally:
        ch.closed = True
        rfile.close()
        conn.close()


def _session(adapter, errors, quit_stops, ch, leave):
    adapter.out = ch
    if quit_stops:
        return _serve_threaded(adapter, errors, ch, leave)
    calls = _calls(adapter)
    for raw in ch.rfile:
        words = raw.decode("ascii", "replace").split()
        if not words:
            continue
        if words[0] == "quit":
            ch.say("bye")
            # a process exits here, as the threaded loop does: no interpreter
            # teardown after bye (redis-py 4.3.4's took over 5 s once under
            # make test's load, and adapter-test's quit property failed)
            leave()
            return 0
        call = calls.get(words[0])
        if call is None:
            ch.say("error unknown request %s" % words[0])
            continue
        try:
            ch.say(call(words))
        except errors as e:
            ch.say("error " + one_line(e))
    return 0


def _answer(adapter, errors, call, words):
    try:
        return call(words)
    except errors as e:
        return "error " + one_line(e)
    except Exception as e:  # in a thread: unanswered, the request would hang the run
        traceback.print_exc()
        return "error " + one_line(e)


def _serve_threaded(adapter, errors, ch, leave):
    """_session(), each request in a thread while the requests are still read:
    "quit" (or end of file) is taken at once, even while an acquire waits;
    adapter.quit() stops what it holds, and the waiting request is abandoned
    (its answer is never written: the process exits, or the session's
    channel is closed)."""
    calls = _calls(adapter)
    ch.threaded = True
    events = queue.Queue()  # ("line", raw or None at end of file) and ("answer", reply)

    def reader():
        try:
            for raw in ch.rfile:
                events.put(("line", raw.decode("ascii", "replace")))
        except (OSError, ValueError):  # a host closed the session's file: it has ended
            pass
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
                ch.say(text)
            waiting = None
        else:
            words = text.split() if text is not None else ["quit"]
            with ch.lock:
                go = ch.go
            if go is not None and waiting and words == ["go"]:
                go.set()  # the waiting request's failpoint: it goes on
                continue
            if words and words[0] == "quit":
                adapter.quit()
                if text is not None:
                    ch.say("bye")
                with ch.lock:
                    ch.closed = True  # an abandoned request's answer is never written
                    if ch.go is not None:
                        ch.go.set()  # a request at a failpoint stops there
                leave()  # a process exits here: a request still waiting is abandoned
                return 0
            if words:
                later.append(words)
        while later and not waiting:
            words = later.pop(0)
            call = calls.get(words[0])
            if call is None:
                ch.say("error unknown request %s" % words[0])
                continue
            waiting = words[0]
            threading.Thread(target=run, args=(call, words), daemon=True).start()
