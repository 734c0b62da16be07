#!/usr/bin/python3
"""etcd_lock.py - lockbench's adapter for etcd's own lock: the server-side Lock
API (v3lock), through etcd's gRPC JSON gateway, with http.client.

Speaks lockbench's adapter protocol, version 3 (docs/adapters.md), through
lbproto.py (beside it). etcd 3.4's Lock RPC runs, inside the member that takes
it, the same clientv3/concurrency Mutex a Go program runs
(etcdserver/api/v3lock/lock.go: NewSession with the caller's lease, then
Mutex.Lock), the lock Jepsen's 2020 analysis of etcd 3.4.3 tested. What a Go
program's session does on its side, this adapter does over HTTP, in the same
order, with etcd's documented JSON API only:

  acquire  POST /v3/lease/grant {"TTL": ceil(ttl_ms/1000)}    (the lease; etcd
           grants at least its minimum, 2 s with default flags: the TTL it
           returns is the lease, reported in "extended ttl_ms=N")
           POST /v3/lock/lock {"name": b64(key), "lease": ID}  (waits until granted)
           with --fence: POST /v3/kv/range of the key Lock returned, whose
           create_revision is the fencing token (etcd's docs, "Notes on the usage
           of lock and lease": https://etcd.io/docs/v3.4/learning/why/)
  held     POST /v3/lease/keepalive every TTL/3 from the grant on, as clientv3's
           lessor does (clientv3/lease.go, recvKeepAlive: nextKeepAlive = now +
           TTL/3); each success is "extended ttl_ms=N"; an answer without a TTL
           (the lease is gone), or no answer for a whole TTL (clientv3's
           deadlineLoop closes the keep-alive then), is "lost ...": what a Go
           program sees as session.Done()
  release  POST /v3/lease/timetolive (TTL -1: the lease, and so the key, was
           gone: not-owned), POST /v3/lock/unlock {"key": ...}, POST
           /v3/lease/revoke

wait=one is one Lock call allowed to wait --window-ms (15 ms unless an
--adapter-arg window_ms=N says otherwise), then "busy", and the lease is
revoked (which deletes the waiter's key: etcd's own way to give up a place).
wait=library is the Lock call waiting as long as it takes; "quit" then revokes
the lease and abandons the call.

Nodes: nodes=http://HOST:PORT,... (a member's client URL each, in member
order). Every request goes to the member that last answered (member 0 at
first) and, on a connection error or timeout, to the next one; timeout_ms
bounds each, except a wait=library Lock call.

--check prints library=etcd-lock version=V, V being what /usr/bin/etcd
--version says (the server lockbench starts), and exits 0 when that and this
program's modules load. Arguments: --fence; window_ms=N.
"""
import base64
import http.client
import json
import math
import re
import socket
import subprocess
import sys
import threading
import time

import lbproto

PROTOCOL = 3
ETCD = "/usr/bin/etcd"
WINDOW_MS = 15


def etcd_version():
    # runs: etcd (etcd-server)
    out = subprocess.run([ETCD, "--version"], capture_output=True, text=True, timeout=5).stdout
    m = re.search(r"etcd Version: (\S+)", out)
    if not m:
        raise RuntimeError("%s --version did not say its version" % ETCD)
    return m.group(1)


def check():
    try:
        version = etcd_version()
    except Exception as e:  # missing, or not runnable: not usable here
        print("cannot run %s --version (Debian package etcd-server): %s" % (ETCD, e))
        return 1
    print("library=etcd-lock version=%s" % version)
    return 0


def b64(data):
    return base64.b64encode(data).decode()


class Unreachable(Exception):
    """No member answered."""


class Gateway:
    """etcd's JSON gateway on each member, tried in member order from the one
    that last answered."""

    def __init__(self, nodes, timeout):
        self.nodes = nodes
        self.timeout = timeout
        self.at = 0
        self.mu = threading.Lock()

    def post(self, path, body, timeout=None, wait=None):
        """The answer to POST path (a dict). @wait: how long the answer may
        take once sent (None: the timeout; 0: forever); a timeout while waiting
        for it raises socket.timeout, and is not taken for a dead member."""
        data = json.dumps(body)
        errors = []
        with self.mu:
            start = self.at
        for i in range(len(self.nodes)):
            n = (start + i) % len(self.nodes)
            host, port = self.nodes[n]
            conn = http.client.HTTPConnection(host, port, timeout=timeout or self.timeout)
            sent = False
            try:
                conn.connect()
                conn.request("POST", path, data, {"Content-Type": "application/json"})
                sent = True
                if wait is not None:
                    conn.sock.settimeout(wait or None)
                resp = conn.getresponse()
                text = resp.read()
            except socket.timeout as e:
                if wait is not None and sent:
                    raise  # sent, and no answer yet: the lock is not ours in time
                errors.append("%s:%d %s" % (host, port, e or "timed out"))
                continue
            except (OSError, http.client.HTTPException) as e:
                errors.append("%s:%d %s" % (host, port, lbproto.one_line(e)))
                continue
            finally:
                conn.close()
            with self.mu:
                self.at = n
            answer = json.loads(text or b"{}")
            if resp.status != 200:
                raise RuntimeError("%s %s: HTTP %d %s" % (path, "%s:%d" % (host, port), resp.status,
                                                          answer.get("error", answer.get("message", ""))))
            return answer
        raise Unreachable("%s: no member answered (%s)" % (path, "; ".join(errors)))


class Keeper:
    """One lease's keep-alive: its TTL as last granted or renewed, when, and
    what the keep-alive found if it found the lease gone."""

    def __init__(self, lease, ttl):
        self.lease, self.ttl = lease, ttl
        self.renewed_at = time.monotonic()
        self.gone = None
        self.stop = threading.Event()


class EtcdLock:
    def __init__(self, fence, window_ms):
        self.fence = fence
        self.window = window_ms / 1000.0
        self.gw = None
        self.lease = None       # the lease of the acquire under way or held
        self.key = None         # the lock key Lock returned (bytes)
        self.held = False       # between "acquired" and "release": notices go out
        self.keeper = None      # the keep-alive of that lease

    def hello(self):
        return ("hello %d library=etcd-lock version=%s language=python extend=no lost=yes extends=reported"
                " claims=MDFOL" % (PROTOCOL, etcd_version()))

    def config(self, cfg):
        nodes = lbproto.node_urls(cfg, "http")
        self.gw = Gateway(nodes, int(cfg["timeout_ms"]) / 1000.0)
        self.name = cfg["key"].encode()
        self.ttl = max(1, math.ceil(int(cfg["ttl_ms"]) / 1000))
        self.library_wait = cfg["wait"] == "library"
        return "ok"

    # ---- the lease, as a clientv3 session keeps it ----

    def keep_alive(self, k):
        """Every TTL/3 from the grant: keep lease @k alive; say what happened
        while it is held, and keep a loss found before for acquire to say."""
        while not k.stop.wait(k.ttl / 3.0):
            try:
                got = self.gw.post("/v3/lease/keepalive", {"ID": k.lease}).get("result", {})
                left = int(got.get("TTL", 0))
            except (Unreachable, OSError, RuntimeError, ValueError) as e:
                self.log("keep-alive of lease %x failed: %s" % (int(k.lease), e))
                if time.monotonic() - k.renewed_at >= k.ttl:
                    self.notice(k, None, "lost keep-alive unanswered for a whole TTL (%d s): the lease may be gone"
                                % k.ttl)
                    return
                continue
            if left <= 0:
                self.notice(k, None, "lost keep-alive found lease %x gone (TTL %d): the lock key with it"
                            % (int(k.lease), left))
                return
            k.renewed_at, k.ttl = time.monotonic(), left
            self.notice(k, "extended ttl_ms=%d" % (left * 1000), None)

    def notice(self, k, extended, lost):
        with self.out.lock:
            if self.held and not k.stop.is_set():
                self.out.say(extended or lost)
                return
            if lost:
                k.gone = lost  # for acquire: a Go program's session.Done() is closed already
        self.log("not held: %s" % (extended or lost))

    def log(self, text):
        sys.stderr.write("%s etcd_lock: %s\n" % (time.strftime("%H:%M:%S"), text))
        sys.stderr.flush()

    def start_lease(self):
        got = self.gw.post("/v3/lease/grant", {"TTL": self.ttl})
        if got.get("error"):
            raise RuntimeError("lease grant: %s" % got["error"])
        self.lease = got["ID"]
        self.keeper = k = Keeper(got["ID"], int(got["TTL"]))
        threading.Thread(target=self.keep_alive, args=(k,), daemon=True).start()

    def end_lease(self):
        """Stop keeping the lease alive and revoke it (which deletes its key)."""
        if self.keeper:
            self.keeper.stop.set()
        lease, self.lease, self.key = self.lease, None, None
        if lease is not None:
            try:
                self.gw.post("/v3/lease/revoke", {"ID": lease})
            except RuntimeError as e:  # already gone: etcd says "requested lease not found"
                self.log("revoke of lease %x: %s" % (int(lease), e))

    # ---- the requests ----

    def acquire(self):
        # fenced: a grant whose key is gone is no grant (below); a library
        # wait then queues again, as a program that checks its token would
        while True:
            got = self.acquire_once()
            if got != "again":
                return got

    def acquire_once(self):
        self.start_lease()
        body = {"name": b64(self.name), "lease": self.lease}
        try:
            if self.library_wait:
                got = self.gw.post("/v3/lock/lock", body, wait=0)
            else:
                got = self.gw.post("/v3/lock/lock", body, wait=self.window)
        except socket.timeout:
            self.end_lease()  # gives up its place: the revoke deletes the waiter's key
            return "busy"
        except Unreachable:
            # no member answered: a revoke would not be answered either (the
            # request's deadline has room for two rounds of members, not
            # three); the lease runs out by itself
            self.keeper.stop.set()
            self.lease = None
            raise
        except Exception:
            self.end_lease()
            raise
        self.key = base64.b64decode(got["key"])
        reply = "acquired token=%x" % int(self.lease)
        if self.fence:
            kvs = self.gw.post("/v3/kv/range", {"key": got["key"]}).get("kvs", [])
            if not kvs:
                # Lock said yes and the key is not there: its lease ran out while
                # it waited (etcd 3.4's Mutex does not look again: etcd PR #11408)
                self.log("Lock returned %r, which no longer exists: no fencing token, not ours"
                         % self.key)
                self.end_lease()
                return "again" if self.library_wait else "busy"
            reply += " fence=%d" % int(kvs[0]["create_revision"])
        k = self.keeper
        # the lease is what etcd granted (or last renewed), not what lockbench
        # asked: say so at once; a loss the keep-alive found while Lock waited
        # follows at once (the lease ran out: Lock's answer came anyway); the
        # keep-alive speaks only after these lines
        with self.out.lock:
            self.out.say(reply)
            if k.gone:
                self.out.say(k.gone)
            else:
                self.out.say("extended ttl_ms=%d" % max(1, (k.ttl - (time.monotonic() - k.renewed_at)) * 1000))
                self.held = True
        return None

    def release(self):
        with self.out.lock:
            self.held = False
        if self.key is None:  # its acquire did not end with the lock
            return "not-owned"
        self.keeper.stop.set()
        ttl = int(self.gw.post("/v3/lease/timetolive", {"ID": self.lease}).get("TTL", -1))
        try:
            self.gw.post("/v3/lock/unlock", {"key": b64(self.key)})
        finally:
            self.end_lease()
        return "released" if ttl > 0 else "not-owned"

    def extend(self, ms):
        return "unsupported"

    def quit(self):
        with self.out.lock:
            self.held = False
        try:
            self.end_lease()
        except Exception as e:  # leaving anyway: the lease runs out by itself
            self.log("quit: %s" % lbproto.one_line(e))


def main():
    args = sys.argv[1:]
    if "--check" in args:
        return check()
    window = WINDOW_MS
    for a in args:
        if a.startswith("window_ms="):
            window = int(a.split("=", 1)[1])
            if not 1 <= window <= 60000:
                sys.exit("etcd_lock.py: window_ms=N takes 1 to 60000, got %d" % window)
        elif a not in ("--fence", "--check"):
            sys.exit("etcd_lock.py: unknown argument %r (expected --fence, window_ms=N, --check)" % a)
    return lbproto.serve(lambda: EtcdLock("--fence" in args, window),
                         (Unreachable, OSError, RuntimeError, KeyError, ValueError), quit_stops=True)


if __name__ == "__main__":
    sys.exit(main())
