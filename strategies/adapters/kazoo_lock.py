#!/usr/bin/python3
"""kazoo_lock.py - lockbench's adapter for kazoo's Lock recipe
(kazoo/recipe/lock.py) on ZooKeeper.

Speaks lockbench's adapter protocol, version 3 (docs/adapters.md), through
lbproto.py (beside it). Uses only kazoo's public API, as its documentation
shows: KazooClient(hosts=..., timeout=..., randomize_hosts=False), start(),
add_listener(), client.Lock(path, identifier), Lock.acquire(blocking=...),
Lock.release(), Lock.cancel(), get_children(), get(), client_id, connected,
stop(), start_async(), KazooRetry, and the exceptions KazooException,
NoNodeError, ConnectionLoss and SessionExpiredError.

The lease is the ZooKeeper session: KazooClient's timeout (ttl_ms here; kazoo's
default 10 s), which the servers clamp to [2, 20] x their tickTime. ZooKeeper
ends the session, and deletes its ephemeral lock node, when the client has not
been heard from for that long; kazoo's connection thread pings when the
connection has been idle for a third of it (kazoo/protocol/connection.py). So
the lease is extended silently while the process runs (extends=silently: when
it ends is not known to the holder), and a paused process's lease runs out.

The lock: Lock.acquire() creates an ephemeral sequential node
PATH/<uuid>__lock__<seq> holding the identifier; the lowest sequence holds the
lock; a waiter watches its predecessor. wait=one is acquire(blocking=False),
given the config's timeout_ms as kazoo's retry deadline; wait=library is
acquire() (blocking, forever), abandoned at quit (Lock.cancel(), then stop():
closing the session deletes the node).

lost: a connection listener. kazoo's docs ("Understanding Kazoo States",
https://kazoo.readthedocs.io/en/latest/basic_usage.html) tell a Lock user to
pause what it is doing on SUSPENDED (the session may expire before the client
reconnects) and that on LOST its ephemeral nodes are gone. Both are passed on
as "lost ..." while the lock is held: the holder cannot tell a short SUSPENDED
from the start of a LOST, and the safe reading is the one kazoo's docs give.
A loss after kazoo's grant and before the answer (the adapter still reads its
node, which can take timeout_ms on a cut link) is kept, and said as "lost" at
once after the "acquired" answer (docs/libraries/kazoo.md says why not "busy").
That window is the failpoint after-grant ("at after-grant", then "go").

--fence: the fencing token is the lock node's czxid, the zxid of the
transaction that created it (the stat get() gives of the child whose data
is this client's identifier). A zxid orders every change the ensemble makes, so a later
holder's node always has a larger one; the sequence number is only the parent's
child counter (it starts again if the parent is recreated). Kleppmann
("How to do distributed locking", 2016) names either as a fencing token.

release: before Lock.release() the adapter looks for its node (as above): gone,
or owned by another session, is "not-owned". kazoo's own release says True even
then: it deletes the node it remembers and ignores NoNodeError. A holder
resumed after a pause finds kazoo SUSPENDED (or still CONNECTED on a socket
the server has closed): the release first waits, within its time, for the
connection to settle (kazoo reconnects; a session the servers expired is LOST,
and kazoo opens a new one), then looks. A release that fails (no server
answers within its time) is an error, and kazoo's Lock still holds its node:
the next acquire releases it first (else acquire(blocking=False) says False
for ever); one whose session was LOST since the grant is "not-owned" (its
ephemeral node went with the session).

Every request's time: kazoo's calls wait for a connection without bound (its
retry deadline is looked at only between attempts), so an acquire on a link
that never answers would never be answered. Each request has timeout_ms per
server (half of lockbench's deadline, twice that plus 2 s); a kazoo call still
waiting then is given up as a program would give it up: the session is closed
(stop(), which fails every call still waiting, and ZooKeeper deletes the
session's nodes), a new one is started (start_async()) with a new Lock, and
the answer is an error.

The path: /lockbench/KEY, KEY %-encoded where ZooKeeper would read a '/'.
--check prints library=kazoo version=V and exits 0 when kazoo imports.
"""
import logging
import os
import sys
import threading
import time
import uuid
from urllib.parse import quote

import lbproto

MIN_SESSION_MS = 1000  # ZooKeeper's minSessionTimeout on lockbench's servers (2 x tickTime)

try:
    from kazoo.client import KazooClient, KazooState
    from kazoo.retry import KazooRetry
    from kazoo.exceptions import ConnectionLoss, KazooException, NoNodeError, SessionExpiredError
except ImportError:  # --check says why
    pass

PROTOCOL = 3
LOST = "lost kazoo connection %s: the session, and the lock node, may be gone"


class Overrun(Exception):
    """A kazoo call still waiting when its request's time ran out (the session
    was closed to end it: KazooLock.bounded)."""


def kazoo_version():
    # kazoo's own (Debian's egg-info says 2.8.0.dev0 for the same 2.8.0)
    from kazoo.version import __version__
    return __version__


def check():
    try:
        import kazoo.client  # noqa: F401
        import kazoo.recipe.lock  # noqa: F401
        version = kazoo_version()
    except Exception as e:  # any failure to import is "not usable here"
        print("cannot import kazoo (Debian package python3-kazoo): %s" % e)
        return 1
    print("library=kazoo version=%s" % version)
    return 0


class Negotiated(logging.Filter):
    """kazoo logs the session timeout the servers negotiated only at its
    BLATHER level, with the session's id and password: keep only the timeout
    of that record (the real lease), and what is INFO and above."""

    def filter(self, record):
        if record.levelno >= logging.INFO:
            return True
        if "negotiated session timeout" not in str(record.msg) or len(record.args) < 3:
            return False
        record.msg, record.args = "negotiated session timeout: %s ms", (record.args[2],)
        record.levelno, record.levelname = logging.INFO, "INFO"
        return True


class KazooLock:
    def __init__(self, fence):
        self.fence = fence
        self.client = self.lock = None
        self.held = False
        self.granted = False  # kazoo has granted the lock, the answer is not written yet
        self.dropped = None   # the connection state that ended the session meanwhile
        self.session_over = False  # LOST since the grant: its ephemeral node is gone
        self.changed = threading.Condition()  # notified at each connection state

    def hello(self):
        return ("hello %d library=kazoo version=%s language=python extend=no lost=yes extends=silently"
                " claims=MDFOL failpoints=after-grant" % (PROTOCOL, kazoo_version()))

    def config(self, cfg):
        hosts = ",".join("%s:%d" % hp for hp in lbproto.node_urls(cfg, "zk"))
        self.timeout = int(cfg["timeout_ms"]) / 1000.0
        # a request's time: timeout_ms per server (lockbench waits twice that, plus 2 s)
        self.budget = self.timeout * len(lbproto.node_urls(cfg, "zk"))
        # the session timeout asked: ttl_ms, but not below ZooKeeper's own least
        # (2 x tickTime: 1 s on lockbench's servers), which the server would
        # grant anyway, and which kazoo also takes for its connect timeout
        session = max(int(cfg["ttl_ms"]), MIN_SESSION_MS) / 1000.0
        self.client = KazooClient(hosts=hosts, timeout=session, randomize_hosts=False,
                                  command_retry=KazooRetry(max_tries=-1, deadline=self.timeout))
        self.client.add_listener(self.state)
        self.client.start(timeout=max(self.timeout, 5.0))
        self.identifier = "client-%s-%d-%s" % (cfg.get("client", "0"), os.getpid(), uuid.uuid4().hex[:8])
        self.path = "/lockbench/" + quote(cfg["key"], safe="")
        self.lock = self.client.Lock(self.path, self.identifier)
        self.blocking = cfg["wait"] == "library"
        logging.getLogger("kazoo_lock").info("hosts %s, session timeout asked %s ms, lock path %s",
                                             hosts, cfg["ttl_ms"], self.path)
        return "ok"

    def state(self, state):
        """kazoo's connection listener (its thread: nothing that blocks). A
        loss while the lock is held is said at once; one between kazoo's grant
        and the adapter's answer (granted: the answer is still being made)
        is kept for acquire(), which says it right after its answer."""
        logging.getLogger("kazoo_lock").info("connection state %s", state)
        if state in (KazooState.SUSPENDED, KazooState.LOST):
            with self.out.lock:
                if state == KazooState.LOST:
                    self.session_over = True
                if self.held:
                    self.held = False
                    self.out.say(LOST % state)
                elif self.granted and not self.dropped:
                    self.dropped = state
        with self.changed:
            self.changed.notify_all()

    def settle(self, until):
        """Wait until kazoo is connected (a SUSPENDED ended by a reconnection,
        or a LOST by a new session), or the monotonic time @until: connected?"""
        with self.changed:
            while not self.client.connected:
                left = until - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
        return True

    def bounded(self, until, fn, *args, **kwargs):
        """fn(*args, **kwargs), a kazoo call, by the monotonic time @until.
        Past it the call is given up: the session is closed (stop(): every
        call still waiting fails at once, and ZooKeeper deletes the session's
        ephemeral nodes), a new session is started (start_async()) with a new
        Lock, and Overrun is raised."""
        fired = threading.Event()

        def give_up():
            fired.set()
            logging.getLogger("kazoo_lock").warning("no answer from ZooKeeper in time (kazoo "
                                                    "state %s): closing the session", self.client.state)
            try:
                self.client.stop()
            except Exception as e:  # the session expires by itself
                logging.getLogger("kazoo_lock").warning("stop: %s", lbproto.one_line(e))
        timer = threading.Timer(max(until - time.monotonic(), 0.0), give_up)
        timer.daemon = True
        timer.start()
        try:
            result = fn(*args, **kwargs)
        except (KazooException, self.client.handler.timeout_exception):
            if not fired.is_set():
                raise
            result = None
        finally:
            timer.cancel()
            timer.join()  # when it fired: until the session is closed
        if fired.is_set():
            self.client.start_async()
            self.lock = self.client.Lock(self.path, self.identifier)
            raise Overrun("no answer from ZooKeeper within %.1f s (kazoo state %s): the "
                          "session was closed, a new one is opening" % (self.budget, self.client.state))
        return result

    def my_node(self, until):
        """The path and ZnodeStat of the lock node whose data is this client's
        identifier, or (None, None). Each call waits at most the config's
        timeout, and none past the monotonic time @until (kazoo's own calls
        would wait for a reconnection)."""
        def t():
            return max(min(self.timeout, until - time.monotonic()), 0.001)
        for child in self.client.get_children_async(self.path).get(timeout=t()):
            try:
                data, stat = self.client.get_async(self.path + "/" + child).get(timeout=t())
            except NoNodeError:
                continue
            if data.decode(errors="replace") == self.identifier:
                return self.path + "/" + child, stat
        return None, None

    def acquire(self):
        until = time.monotonic() + self.budget
        try:
            if self.lock.is_acquired:
                # a release that failed (ZooKeeper out of reach) left kazoo's Lock
                # holding its node, and acquire(blocking=False) would say False for
                # ever: release it first, as a program that caught that error would
                # (once connected: kazoo's calls wait for a connection, unbounded)
                if not self.settle(until):
                    return "error a release failed and ZooKeeper is out of reach (kazoo state %s)" % (
                        self.client.state)
                logging.getLogger("kazoo_lock").warning("kazoo still holds the lock from a failed "
                                                        "release: releasing it before acquiring")
                self.bounded(until, self.lock.release)
            if self.blocking:  # the library's own wait: only quit ends it
                got = self.lock.acquire()
            else:
                got = self.bounded(until, self.lock.acquire, blocking=False, timeout=self.timeout)
        except Overrun as e:
            return "error %s" % e
        if not got:
            if not self.client.connected:
                # kazoo gives up its retries silently (False): not "busy"
                return "error not connected to ZooKeeper (kazoo state %s)" % self.client.state
            return "busy"
        with self.out.lock:
            # from here on a loss is kept (state()), and one before it shows in
            # the state: kazoo sets it before it calls its listeners
            self.granted = True
            self.dropped = None if self.client.state == KazooState.CONNECTED else self.client.state
            self.session_over = self.client.state == KazooState.LOST
        try:
            return self.answer(until)
        finally:
            with self.out.lock:
                self.granted = False

    def answer(self, until):
        """The answer to an acquire kazoo has granted: acquired (with the lock
        node's sequence, and its czxid when fencing), followed at once by
        lost when the connection was suspended or lost after the grant."""
        paused = time.monotonic()
        if not self.out.at("after-grant"):
            return None  # the session ends (quit): nothing to answer
        until += time.monotonic() - paused  # a stall there is the scenario's, not kazoo's
        reply = "acquired"
        try:
            path, stat = self.my_node(until)
        except (KazooException, self.client.handler.timeout_exception) as e:
            if self.fence:  # no token to fence with: give the lock back
                self.give_back(until)
                return "error cannot read the lock node's czxid: %s" % lbproto.one_line(e)
            path = stat = None
        if path:
            reply += " token=%s" % path.rsplit("__lock__", 1)[-1]
        if self.fence:
            if not stat:
                self.give_back(until)
                return "error the lock node is gone already: no fencing token"
            reply += " fence=%d" % stat.czxid
        with self.out.lock:
            self.out.say(reply)
            if self.dropped:
                # kazoo granted it, and its session may have ended since: what
                # a holder hears of that is this, the listener's notice
                self.out.say(LOST % self.dropped)
            else:
                self.held = True
        return None

    def give_back(self, until):
        """kazoo's release of a lock granted without an answer that holds it
        (its session closed instead when ZooKeeper does not answer in time)."""
        try:
            self.bounded(until, self.lock.release)
        except Overrun:
            pass

    def look(self, until):
        """(mine, why not known) of the lock node, once kazoo is connected:
        mine when its node is there and its ephemeralOwner this session. A
        look that meets a connection kazoo had not yet seen go (a process
        resumed after a pause: the server closed it meanwhile) is made again
        once kazoo has reconnected, within @until."""
        while True:
            if not self.settle(until):
                return False, "ZooKeeper out of reach for %.1f s (kazoo state %s)" % (
                    self.budget, self.client.state)
            try:
                path, stat = self.my_node(until)
                session = self.client.client_id[0] if self.client.client_id else None
                return stat is not None and stat.ephemeralOwner == session, None
            except (ConnectionLoss, SessionExpiredError) as e:
                if time.monotonic() >= until:
                    return False, lbproto.one_line(e)
                time.sleep(0.01)  # kazoo is told of the end of its connection meanwhile
            except (KazooException, self.client.handler.timeout_exception) as e:
                return False, lbproto.one_line(e)

    def release(self):
        with self.out.lock:
            self.held = False
        until = time.monotonic() + self.budget
        mine, looked = self.look(until)
        if looked and self.session_over:
            # LOST since the grant: the servers expired the session (or it was
            # closed), and its ephemeral node with it; kazoo's Lock still says
            # is_acquired: the next acquire releases it once connected (above)
            logging.getLogger("kazoo_lock").warning("release: the session was lost since the "
                                                    "grant, and its lock node with it (%s)", looked)
            return "not-owned"
        if looked and not self.client.connected:
            # kazoo's calls would wait for a connection, without bound: the
            # next acquire releases once connected (above)
            return "error %s: not released yet" % looked
        # kazoo's release in every case: else its Lock still says is_acquired
        # and every later acquire(blocking=False) of this client is False
        try:
            said = self.bounded(until, self.lock.release)
        except Overrun as e:
            return "error %s" % e
        if looked:
            return "error could not look for the lock node before releasing (%s); kazoo's release said %s" % (
                looked, said)
        if not mine:
            logging.getLogger("kazoo_lock").warning(
                "release: the lock node is gone (or another session's); kazoo's release said %s", said)
        return "released" if mine else "not-owned"

    def extend(self, ms):
        return "unsupported"

    def quit(self):
        with self.out.lock:
            self.held = False
        if self.lock:
            self.lock.cancel()
        if self.client:
            try:
                self.client.stop()  # closes the session: its ephemeral nodes go with it
                self.client.close()
            except Exception as e:  # leaving anyway: the session expires by itself
                logging.getLogger("kazoo_lock").warning("quit: %s", lbproto.one_line(e))


def main():
    args = sys.argv[1:]
    if "--check" in args:
        return check()
    for a in args:
        if a != "--fence":
            sys.exit("kazoo_lock.py: unknown argument %r (expected --fence, --check)" % a)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s.%(msecs)03d %(levelname)s %(name)s: %(message)s",
                        datefmt="%H:%M:%S")
    from kazoo.loggingsupport import BLATHER
    conn = logging.getLogger("kazoo.client")  # the logger kazoo's connection writes to
    conn.setLevel(BLATHER)
    conn.addFilter(Negotiated())
    return lbproto.serve(lambda: KazooLock("--fence" in args), (KazooException, OSError, ValueError),
                         quit_stops=True)


if __name__ == "__main__":
    sys.exit(main())
