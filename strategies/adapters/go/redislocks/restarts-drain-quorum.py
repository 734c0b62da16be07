#!/usr/bin/python3
"""redsync #147/#149 on the pinned redsync, through lockbench's adapter: five
in-memory redis-servers (no persistence) on loopback ports 27311-27315; a
holder takes the lock (ttl 10 s) and extends it after each restart of nodes
0, 1 and 2, one after another; another client tries after each extend.
Without WithSetNXOnExtend the third extend is not-owned and the other client
gets the lock; with it (argument setnx-on-extend) every extend holds five
nodes again. Every server it starts is killed before it exits.

  python3 restarts-drain-quorum.py ../bin/redsync [setnx-on-extend]
(docs/libraries/redsync.md)"""
import shutil, subprocess, sys, tempfile, time
BIN = sys.argv[1]
base = 27311
d = tempfile.mkdtemp(prefix="lockbench-redsync-149-")
procs = {}
def start(i):
    procs[i] = subprocess.Popen(["redis-server", "--port", str(base + i), "--bind", "127.0.0.1",
                                 "--save", "", "--appendonly", "no", "--dir", d,
                                 "--logfile", "%s/node%d.log" % (d, i)])
def ready(i):
    for _ in range(200):
        if subprocess.run(["redis-cli", "-p", str(base + i), "ping"], capture_output=True).stdout.strip() == b"PONG":
            return
        time.sleep(0.02)
    raise SystemExit("node %d not up" % i)
def restart(i):
    procs[i].kill(); procs[i].wait(); start(i); ready(i)
class S:
    def __init__(self, name):
        self.name = name
        self.p = subprocess.Popen([BIN, "version=4.18.1"] + sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    def ask(self, line):
        t = time.monotonic()
        self.p.stdin.write(line + "\n"); self.p.stdin.flush()
        r = self.p.stdout.readline().strip()
        print("%-7s %-60s -> %s (%d ms)" % (self.name, line if len(line) < 60 else line[:57] + "...", r, (time.monotonic() - t) * 1000))
        return r
try:
    for i in range(5): start(i)
    for i in range(5): ready(i)
    nodes = ",".join("redis://127.0.0.1:%d" % (base + i) for i in range(5))
    cfg = "config nodes=%s key=lb149 ttl_ms=10000 wait=one timeout_ms=1000 client=%%d" % nodes
    a, b = S("holder"), S("other")
    for s, c in ((a, 0), (b, 1)):
        s.ask("hello 3"); s.ask(cfg % c)
    a.ask("acquire"); b.ask("acquire")
    for i in range(3):
        restart(i)
        print("node %d restarted empty (no persistence)" % i)
        a.ask("extend 10000")
        b.ask("acquire")
    for s in (a, b):
        s.ask("quit")
finally:
    for p in procs.values():
        p.kill(); p.wait()
    shutil.rmtree(d, ignore_errors=True)
