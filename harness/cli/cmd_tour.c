/*
 * cmd_tour.c - `lockbench tour`: one report.html deck of the classic lessons
 * in teaching order, each wrong recipe beside its fix under the same fault,
 * then Redlock and failover. By default it is drawn from the reference runs
 * shipped in docs/tour (a class sees what was rehearsed, the same figures
 * every time; nothing is run, no server started); --live runs every lesson
 * afresh with the same scenarios, strategies and seed, then draws those.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "esc.h"
#include "options.h"
#include "owned.h"
#include "report.h"
#include "results.h"
#include "signals.h"
#include "util.h"

/* The order a 90-minute class follows (docs/index.md, "A lesson plan"): what
 * a lock is for, then the single-node recipes' mistakes one at a time, each
 * fix the next lesson's starting point (an atomic release, a TTL set with the
 * lock, a token, a fence, a renewal), then what more servers change (Redlock)
 * and what replication changes (failover). */
static const struct lb_lesson lessons[] = {
	{ "baseline", "No lock, then a correct one",
	  "Four clients share one counter. With no lock their sections overlap (red) from the "
	  "start and updates are lost; with token-lua no two are ever inside at once and the "
	  "counter keeps every update. This is what the oracle sees: who was inside, when.",
	  "docs/pitfalls/baseline.md",
	  { { "baseline", "none", "none", "none" },
	    { "baseline", "token-lua", "token-lua", "token-lua" } },
	  "Four clients add 1 to a shared counter 5 ms at a time, first with no lock, then with"
	  " a lock. With no lock, how often will two of them be inside at once, and how many of"
	  " their updates survive?",
	  "Step to the first overlap, 1 ms in: two lanes red. Then token-lua: never two inside."
	  " Read the table: sections, overlaps, lost updates. This is all the oracle looks at: "
	  "who was inside, when.",
	  "A lock turns read-then-write into one step as far as the other clients can tell; it "
	  "does not protect the counter from a holder that outlives its lease (lessons 4 to 6).",
	  "inside at once",
	  { { "GET counter        # 41\n"
		    ">SET counter 42    # another client read 41 too",
		    "SET lock TOKEN NX PX 1000   # nil: wait, try again\n"
		    "GET counter\n"
		    "SET counter 42\n"
		    "EVAL \"<compare-and-delete>\" 1 lock TOKEN" },
	    { "n = int(r.get(\"counter\"))\n"
		    ">r.set(\"counter\", n + 1)  # lost if another read n too",
		    "tok = uuid.uuid4().hex\n"
		    "while not r.set(\"lock\", tok, nx=True, px=1000):\n"
		    "    time.sleep(0.005)\n"
		    "r.set(\"counter\", int(r.get(\"counter\")) + 1)\n"
		    "cad(keys=[\"lock\"], args=[tok])  # r.register_script(CAD)" },
	    { "const n = Number(await r.get('counter'));\n"
		    ">await r.set('counter', n + 1);",
		    "const tok = crypto.randomUUID();\n"
		    "while (!await r.set('lock', tok, { NX: true, PX: 1000 })) await sleep(5);\n"
		    "await r.set('counter', Number(await r.get('counter')) + 1);\n"
		    "await r.eval(CAD, { keys: ['lock'], arguments: [tok] });" } } },
	{ "check-then-delete", "Check, then delete: a release in two commands",
	  "get-del releases with GET and a compare, then DEL: two commands. Here the releasing "
	  "client stalls 1.5 s between them; its lease runs out, another client takes the lock, "
	  "and the DEL deletes that client's lock (orange triangle). token-lua compares and "
	  "deletes in one Lua script: the same load, no window, safe.",
	  "docs/pitfalls/check-then-delete.md",
	  { { "check-then-delete", "get-del", "get-del", "get-del" },
	    { "check-then-delete", "token-lua", "token-lua", "token-lua" } },
	  "get-del releases with GET, a compare, then DEL. Its client stalls 1.5 s between the "
	  "GET and the DEL, past its 1 s lease. What will its DEL delete?",
	  "Step 1 names the instant (between GET and DEL). Point at the DEL that deletes "
	  "another client's lock (orange triangle; the Redis lane goes empty), then the overlap"
	  " it lets in. token-lua: the same stall, nothing deleted.",
	  "The Lua script compares and deletes in one command, so no lease can run out between "
	  "the two; a holder still inside after its lease ran out is not stopped by it (next "
	  "lessons).",
	  "deleted another client's lock",
	  { { "GET lock           # TOKEN: still mine\n"
		    "# ... 1.5 s: the lease runs out, B takes the lock\n"
		    ">DEL lock           # deletes B's lock",
		    "EVAL \"if redis.call('get',KEYS[1])==ARGV[1]\n"
		    "  then return redis.call('del',KEYS[1]) end\n"
		    "  return 0\" 1 lock TOKEN" },
	    { "if r.get(\"lock\") == tok:\n"
		    ">    r.delete(\"lock\")  # may be another's by now",
		    "cad = r.register_script(\n"
		    "    \"if redis.call('get',KEYS[1])==ARGV[1] then \"\n"
		    "    \"return redis.call('del',KEYS[1]) end return 0\")\n"
		    "cad(keys=[\"lock\"], args=[tok])" },
	    { "if (await r.get('lock') === tok)\n"
		    ">  await r.del('lock'); // may be another's by now",
		    "await r.eval(\n"
		    "  \"if redis.call('get',KEYS[1])==ARGV[1] then \" +\n"
		    "  \"return redis.call('del',KEYS[1]) end return 0\",\n"
		    "  { keys: ['lock'], arguments: [tok] });" } } },
	{ "crash-before-expire", "A crash between SETNX and EXPIRE",
	  "The holder is killed between SETNX and EXPIRE (set-nx-px, one command, has no such "
	  "instant: its holder is killed right after acquiring). setnx-then-expire, the pitfall "
	  "as people write it, leaves a key without a TTL that nobody ever frees: deadlock (the "
	  "Redis lane hatches it: no TTL). setnx-expire-as-written, the blog's recipe copied "
	  "verbatim, deadlocks too, for another reason: every waiter re-arms the TTL, so the dead "
	  "holder's key never expires while anyone waits. setnx-expire's waiter sets a TTL only "
	  "on a key that has none, and set-nx-px sets the key and its TTL in one command: the "
	  "lock comes back after the 1 s TTL.",
	  "docs/pitfalls/crash-before-expire.md",
	  { { "crash-before-expire", "setnx-then-expire", "setnx-then-expire", "setnx-then-expire" },
	    { "crash-before-expire", "setnx-expire-as-written", "setnx-expire-as-written",
	      "setnx-expire-as-written" },
	    { "crash-before-expire", "setnx-expire", "setnx-expire", "setnx-expire" },
	    { "crash-before-expire", "set-nx-px", "set-nx-px", "set-nx-px" } },
	  "A client is killed right after SETNX succeeds, before its EXPIRE. Will the lock ever"
	  " be free again, and when?",
	  "Point at the crashes (one per run, about 0.3 s in) and at the Redis lane: a key with"
	  " no TTL is hatched. setnx-then-expire and the blog's recipe as written never get the"
	  " lock back; setnx-expire and set-nx-px do, a TTL after the crash.",
	  "SET with NX and PX sets the key and its TTL in one command, so no crash leaves a key"
	  " without a TTL; the lock is still lost for up to a whole TTL after its holder died.",
	  "crashed between SETNX and EXPIRE",
	  { { "SETNX lock TOKEN    # 1: mine\n"
		    ">EXPIRE lock 1      # never sent: the client died",
		    "SET lock TOKEN NX PX 1000   # the key and its TTL at once" },
	    { "if r.setnx(\"lock\", tok):\n"
		    ">    r.expire(\"lock\", 1)  # a crash before this: no TTL",
		    "r.set(\"lock\", tok, nx=True, px=1000)" },
	    { "if (await r.setNX('lock', tok))\n"
		    ">  await r.expire('lock', 1); // a crash before this: no TTL",
		    "await r.set('lock', tok, { NX: true, PX: 1000 });" } } },
	{ "holder-pause", "The holder pauses past its TTL",
	  "The client holding the lock is frozen for 2.5 s (SIGSTOP, as a long GC pause would); "
	  "its 1 s lease runs out and another client enters. When it wakes, set-nx-px's plain "
	  "DEL deletes the new holder's lock (orange triangles) and lets a third in, again and "
	  "again. token-lua deletes only its own lock, but the woken client still finishes its "
	  "section beside the new holder: a lease cannot stop that. fenced's resource refuses "
	  "the stale write: two inside, no update lost (contained).",
	  "docs/pitfalls/holder-pause.md",
	  { { "holder-pause", "set-nx-px", "set-nx-px", "set-nx-px" },
	    { "holder-pause", "token-lua", "token-lua", "token-lua" },
	    { "holder-pause", "fenced", "fenced", "fenced" } },
	  "The holder is frozen for 2.5 s (a long GC pause) under a 1 s lease. Another client "
	  "takes the lock. When the frozen one wakes, what will its DEL do, and what will its "
	  "write do?",
	  "Step to the x where the lease runs out, the overlap just after, the wake-up and what"
	  " each release then does: set-nx-px's DEL deletes the new holder's lock and the "
	  "cascade follows; token-lua's leaves it alone; fenced's resource refuses the stale "
	  "write (red ring). Press z at the wake-up.",
	  "A token makes the woken client's release leave the new holder's lock alone; only a "
	  "fence the resource checks stops its stale write: no lease can stop a paused client "
	  "that wakes up and carries on.",
	  "release deletes",
	  { { "SET lock TOKEN NX PX 1000\n"
		    "# ... frozen 2.5 s: the lease runs out, B takes it\n"
		    ">DEL lock           # deletes B's lock",
		    "SET lock TOKEN NX PX 1000\n"
		    "INCR fence         # 42: sent with every write\n"
		    "EVAL \"<compare-and-delete>\" 1 lock TOKEN\n"
		    "# the resource refuses a fence below the highest it saw" },
	    { "r.set(\"lock\", tok, nx=True, px=1000)\n"
		    "work()  # a 2.5 s pause here\n"
		    ">r.delete(\"lock\")",
		    "r.set(\"lock\", tok, nx=True, px=1000)\n"
		    "fence = r.incr(\"fence\")\n"
		    "store.write(value, fence=fence)  # refused if stale\n"
		    "cad(keys=[\"lock\"], args=[tok])" },
	    { "await r.set('lock', tok, { NX: true, PX: 1000 });\n"
		    "await work(); // a 2.5 s pause here\n"
		    ">await r.del('lock');",
		    "await r.set('lock', tok, { NX: true, PX: 1000 });\n"
		    "const fence = await r.incr('fence');\n"
		    "await store.write(value, { fence }); // refused if stale\n"
		    "await r.eval(CAD, { keys: ['lock'], arguments: [tok] });" } } },
	{ "slow-holder", "A section slower than the TTL",
	  "One client's section takes 1.5 s under a 1 s TTL; nothing pauses it. With set-nx-px "
	  "the lease runs out while it is inside, the other client enters, and the slow one's "
	  "late DEL removes that client's lock (orange triangles), again and again. renewal's "
	  "watchdog extends the lease every TTL/3 while the holder is alive: nobody enters "
	  "until the slow section ends.",
	  "docs/pitfalls/slow-holder.md",
	  { { "slow-holder", "set-nx-px", "set-nx-px", "set-nx-px" },
	    { "slow-holder", "renewal", "renewal", "renewal" } },
	  "Nothing pauses this holder, but its section takes 1.5 s under a 1 s TTL. What "
	  "happens at 1 s, and at 1.5 s?",
	  "Point at the lease running out while the slow section goes on, the overlap, then the"
	  " slow client's late DEL removing the newcomer's lock, again and again. renewal: its "
	  "watchdog extends the lease every TTL/3; nobody enters until the slow section ends.",
	  "Renewing the lease while the holder is alive keeps it for as long as the section "
	  "lasts; a holder frozen between two renewals still loses it (lesson 4): renewal needs"
	  " a fence too.",
	  "release deletes",
	  { { "SET lock TOKEN NX PX 1000\n"
		    "# ... the section takes 1.5 s\n"
		    ">DEL lock           # the lock is another's by now",
		    "SET lock TOKEN NX PX 1000\n"
		    "# every 333 ms, while inside:\n"
		    "EVAL \"if redis.call('get',KEYS[1])==ARGV[1] then\n"
		    "  return redis.call('pexpire',KEYS[1],1000) end return 0\" 1 lock TOKEN" },
	    { "r.set(\"lock\", tok, nx=True, px=1000)\n"
		    "slow_work()  # 1.5 s\n"
		    ">r.delete(\"lock\")",
		    "r.set(\"lock\", tok, nx=True, px=1000)\n"
		    "# a thread, every 333 ms while inside:\n"
		    "renew(keys=[\"lock\"], args=[tok, 1000])  # compare-and-pexpire\n"
		    "slow_work()\n"
		    "cad(keys=[\"lock\"], args=[tok])" },
	    { "await r.set('lock', tok, { NX: true, PX: 1000 });\n"
		    "await slowWork(); // 1.5 s\n"
		    ">await r.del('lock');",
		    "await r.set('lock', tok, { NX: true, PX: 1000 });\n"
		    "const t = setInterval(() => r.eval(RENEW,\n"
		    "  { keys: ['lock'], arguments: [tok, '1000'] }), 333);\n"
		    "await slowWork(); clearInterval(t);\n"
		    "await r.eval(CAD, { keys: ['lock'], arguments: [tok] });" } } },
	{ "fence-reset", "Fencing, and a fence that goes back",
	  "Lock node 0 restarts empty while a client holds the lock, and the next client takes "
	  "it at once: two inside. token-lua loses an update. For fenced the fence counter "
	  "restarted with the node, so new fences begin again below the highest the resource "
	  "has accepted, and the resource refuses writes that carry them: no update is lost "
	  "(contained), at the price of refused writes. A fence counter must never go back.",
	  "docs/pitfalls/fence-reset.md",
	  { { "fence-reset", "token-lua", "token-lua", "token-lua" },
	    { "fence-reset", "fenced", "fenced", "fenced" } },
	  "The lock's Redis restarts empty while a client holds the lock; it also held the "
	  "fence counter. Will the next fences be higher than the last one the resource "
	  "accepted?",
	  "Point at the restart (about 1.5 s in) and the overlaps just after: token-lua loses "
	  "an update; fenced's newcomer is refused (its fence is lower), then the old holder's "
	  "own write. Then the table: fenced contained, at the price of refused writes.",
	  "A resource that refuses every fence below the highest it accepted stays safe, but a "
	  "fence counter that restarts from zero makes it refuse honest writes until the count "
	  "catches up: keep the counter where it survives (persisted, or on the resource).",
	  "inside at once",
	  { { "SET lock TOKEN NX PX 1000\n"
		    "# the lock's Redis restarts empty\n"
		    ">SET lock TOKEN2 NX PX 1000   # OK: a second holder",
		    "INCR fence   # 1 after the restart: below the highest\n"
		    "# the resource refuses it: safe, but it refuses\n"
		    "# honest writes too until the counter catches up\n"
		    "CONFIG SET appendonly yes    # a counter that survives" },
	    { "r.set(\"lock\", tok, nx=True, px=1000)\n"
		    "# Redis restarts empty: its keys are gone\n"
		    ">r2.set(\"lock\", tok2, nx=True, px=1000)  # granted too",
		    "fence = r.incr(\"fence\")  # goes back after a restart\n"
		    "store.write(value, fence=fence)  # refuses it" },
	    { "await r.set('lock', tok, { NX: true, PX: 1000 });\n"
		    "// Redis restarts empty: its keys are gone\n"
		    ">await r2.set('lock', tok2, { NX: true, PX: 1000 }); // OK",
		    "const fence = await r.incr('fence'); // goes back\n"
		    "await store.write(value, { fence }); // refused" } } },
	{ "redlock-node-restart", "Redlock: a node restarts empty",
	  "Five lock nodes, a quorum of three. Client 0 holds nodes 0, 1 and 2 (it cannot reach "
	  "3 and 4); node 2 restarts without persistence and forgets the lock (dashed in the "
	  "node lanes), and client 1 takes nodes 2, 3 and 4: both inside. With delayed restarts "
	  "node 2 stays down for the max TTL, longer than the run: no second majority, no "
	  "overlap, and every acquire meanwhile fails on node 2 (unavailable).",
	  "docs/pitfalls/redlock-node-restart.md",
	  { { "redlock-node-restart", "redlock", "redlock", "redlock" },
	    { "redlock-node-restart-delayed", "redlock", "redlock-delayed",
	      "redlock, delayed restarts" } },
	  "Redlock: five nodes, a lock needs three. Client 0 holds nodes 0, 1 and 2. Node 2 "
	  "restarts and forgets. Can client 1 get three nodes now?",
	  "Set-up first, one step: client 1 starts late, client 0 is cut off from nodes 3 and "
	  "4, its section made long. Point at node 2 back empty (dashed in the node lanes) and "
	  "at the overlap: client 0 on 0, 1, 2, client 1 on 2, 3, 4. With delayed restarts: no "
	  "overlap, unavailable.",
	  "A node that stays down for the longest TTL before it takes locks again cannot grant "
	  "a second majority; Redlock still trusts every node's clock (next lesson) and gives "
	  "no fence.",
	  "comes back, empty",
	  { { "SET lock TOKEN NX PX 1000   # on nodes 0, 1, 2: 3 of 5\n"
		    "# node 2 restarts without persistence\n"
		    ">SET lock TOKEN2 NX PX 1000  # on nodes 2, 3, 4: 3 of 5",
		    "# node 2 restarts only after the longest TTL\n"
		    "# (or: appendonly yes, appendfsync always)\n"
		    "SET lock TOKEN2 NX PX 1000  # nodes 3, 4 only: 2 of 5" },
	    { "ok = sum(bool(n.set(\"lock\", tok, nx=True, px=1000))\n"
		    "         for n in nodes)\n"
		    ">held = ok >= 3  # node 2 may forget it",
		    "# node 2 comes back after the longest TTL:\n"
		    "# no second majority while the first lock lives\n"
		    "held = ok >= 3" },
	    { "let ok = 0;\n"
		    "for (const n of nodes) ok += (await n.set('lock', tok, { NX: true, PX: 1000 })) ? 1 : 0;\n"
		    ">const held = ok >= 3; // node 2 may forget it",
		    "// node 2 comes back after the longest TTL:\n"
		    "// no second majority while the first lock lives\n"
		    "const held = ok >= 3;" } } },
	{ "redlock-clock-jump", "Redlock: a node's clock jumps",
	  "As in the last lesson client 0 holds nodes 0, 1 and 2. This time node 2's clock "
	  "jumps 10 s forward and Redis expires client 0's key there early; client 1 takes "
	  "nodes 2, 3 and 4: both hold the lock. Redlock assumes clocks that drift slowly, not "
	  "clocks that jump.",
	  "docs/pitfalls/redlock-clock-jump.md",
	  { { "redlock-clock-jump", "redlock", "redlock", "redlock" } },
	  "The same five nodes, no restart: node 2's clock jumps 10 s forward. What happens to "
	  "client 0's key on node 2?",
	  "The same set-up as lesson 7. Point at the clock jump (about 0.3 s in): node 2 "
	  "expires client 0's key early. Then the overlap: both hold a majority. Redlock "
	  "assumes clocks that drift slowly, not clocks that jump.",
	  "Nothing in Redlock itself fixes this: its safety rests on every node's clock; a "
	  "fence checked by the resource, or a lock on a consensus store (etcd, ZooKeeper), "
	  "does not.",
	  "clock jumps",
	  { { "SET lock TOKEN NX PX 1000   # nodes 0, 1, 2\n"
		    "# node 2's clock jumps 10 s: the key expires there\n"
		    ">SET lock TOKEN2 NX PX 1000  # nodes 2, 3, 4: granted",
		    "# no fix inside Redlock: fence the resource\n"
		    "INCR fence   # on one store, sent with each write" },
	    { "ok = sum(bool(n.set(\"lock\", tok, nx=True, px=1000))\n"
		    "         for n in nodes)\n"
		    ">held = ok >= 3  # PX counts on node 2's clock",
		    "fence = fence_store.incr(\"fence\")\n"
		    "store.write(value, fence=fence)" },
	    { "let ok = 0;\n"
		    "for (const n of nodes) ok += (await n.set('lock', tok, { NX: true, PX: 1000 })) ? 1 : 0;\n"
		    ">const held = ok >= 3; // PX counts on node 2's clock",
		    "const fence = await fenceStore.incr('fence');\n"
		    "await store.write(value, { fence });" } } },
	{ "failover", "Failover: the replica had not seen the lock",
	  "The lock lives on a primary whose replica lags. A client takes the lock, the primary "
	  "is killed before the write reaches the replica, the replica is promoted without it, "
	  "and the next client takes the lock while the first is still inside. set-nx-px's "
	  "late DEL then removes the newcomer's lock; fenced's resource refuses the stale write "
	  "(contained); wait-replicas enters only once WAIT 1 saw a replica acknowledge: no "
	  "overlap, and once no replica acknowledges its acquires fail (unavailable).",
	  "docs/pitfalls/failover.md",
	  { { "failover", "set-nx-px", "set-nx-px", "set-nx-px" },
	    { "failover", "fenced", "fenced", "fenced" },
	    { "failover", "wait-replicas", "wait-replicas", "wait-replicas" } },
	  "The lock is on a primary whose replica lags. The primary dies right after granting "
	  "the lock, and the replica is promoted. Does the new primary know the lock is held?",
	  "Point at the cut, the kill and the promotion, then the overlap: the lock granted "
	  "again on the promoted replica. set-nx-px's late DEL removes the newcomer's lock; "
	  "fenced's resource refuses the stale write; wait-replicas: no overlap, then "
	  "unavailable once no replica acknowledges.",
	  "WAIT 1 makes a client enter only once a replica has the lock, so a promoted replica "
	  "knows it; when no replica acknowledges, nobody gets the lock (unavailable), and WAIT"
	  " is not a guarantee against every failover.",
	  "promoted",
	  { { "SET lock TOKEN NX PX 1000   # on the primary only\n"
		    "# the primary dies; its replica never saw the key\n"
		    ">SET lock TOKEN2 NX PX 1000  # granted by the new primary",
		    "SET lock TOKEN NX PX 1000\n"
		    "WAIT 1 100   # 1: a replica has it; 0: release, not held" },
	    { "r.set(\"lock\", tok, nx=True, px=1000)\n"
		    ">held = True  # only the primary knows",
		    "r.set(\"lock\", tok, nx=True, px=1000)\n"
		    "held = r.wait(1, 100) >= 1\n"
		    "if not held:\n"
		    "    cad(keys=[\"lock\"], args=[tok])" },
	    { "await r.set('lock', tok, { NX: true, PX: 1000 });\n"
		    ">const held = true; // only the primary knows",
		    "await r.set('lock', tok, { NX: true, PX: 1000 });\n"
		    "const held = (await r.sendCommand(['WAIT', '1', '100'])) >= 1;\n"
		    "if (!held) await r.eval(CAD, { keys: ['lock'], arguments: [tok] });" } } },
};
#define N_LESSONS ((int)(sizeof(lessons) / sizeof(lessons[0])))

static void usage(FILE *f)
{
	fprintf(f, "usage: lockbench tour [--out DIR] [--live [--seed N]] [--pdf]\n\n"
		   "Builds one report.html, a deck of the classic lessons in teaching order\n"
		   "(docs/index.md, \"A lesson plan\"): each wrong recipe beside its fix under\n"
		   "the same fault, then Redlock and failover; a contents list, a lesson\n"
		   "picker, and one step-through that goes on to the next lesson past a\n"
		   "lesson's last step. A classroom view: the step's sentence and the chart\n"
		   "of its run on one screen from 1024x768 up, one run at a time, each lesson\n"
		   "opening with a question and drawn up to the step shown; under it the\n"
		   "recipe and its fix as Redis commands, redis-py and node-redis, the line\n"
		   "that breaks marked at its step. Keys: n, p (or the arrows) step; f\n"
		   "presenter mode (a larger chart, the speaker notes); z zoom; a every run.\n\n"
		   "  --out DIR   where report.html goes (results/tour/<UTC time>-tour);\n"
		   "              never the reference runs' directory or inside it\n"
		   "  --live      run every lesson afresh (the same scenarios and strategies,\n"
		   "              one after another, each on fresh servers) into DIR/LESSON/RUN,\n"
		   "              then draw the deck from those runs\n"
		   "  --seed N    the seed of every --live run (7, the reference runs' seed)\n"
		   "  --pdf       also DIR/tour.pdf, printed by Chromium (headless): a title\n"
		   "              page, the legend, a page per lesson (its question, its runs\n"
		   "              whole, its code and why) and a one-page handout with the\n"
		   "              glossary of docs/glossary.md\n\n"
		   "Without --live nothing is run and no server is started: the deck is drawn\n"
		   "from the reference runs shipped in docs/tour (the commit and command that\n"
		   "made them are in docs/tour/SOURCE.md; `make tour-reference` makes them\n"
		   "again), so a class sees the same figures every time. Every run is checked\n"
		   "first, as `lockbench check` would (its summary.csv must agree with its own\n"
		   "files); nothing is written when one does not.\n\n"
		   "Files: the reference runs are looked up in $LOCKBENCH_TOUR, ./docs/tour,\n"
		   "the source tree beside the binary, then PREFIX/share/lockbench/tour\n"
		   "(make install).\n\n"
		   "Exit status: 0 written, 1 a runtime failure (a run failed, DIR cannot be\n"
		   "written, Chromium could not print), 2 usage error, 3 a --live run could not happen here, 4 a\n"
		   "reference run is missing, unreadable, or disagrees with its own files.\n");
}

/* The reference runs' directory, as scenarios are found (scenario.c). */
static bool tour_dir(char *out, size_t len)
{
	struct stat st;
	const char *env = getenv("LOCKBENCH_TOUR");

	if (env && *env) { /* given: that one or none, never another behind it */
		if (strlen(env) >= len) {
			lb_errorf("tour: LOCKBENCH_TOUR is longer than %zu bytes", len - 1);
			return false;
		}
		snprintf(out, len, "%s", env);
		return stat(out, &st) == 0 && S_ISDIR(st.st_mode);
	}
	if (stat("docs/tour", &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(out, len, "docs/tour");
		return true;
	}
	return lb_find_installed("docs/tour", "share", out, len) && stat(out, &st) == 0 &&
	       S_ISDIR(st.st_mode);
}

/* @out is the reference runs' directory (@root, or the one tour_dir finds
 * when NULL) or inside it: a deck or --live runs written there would mix
 * with, or replace, what a class was shown. */
static bool inside_reference(const char *out, const char *root)
{
	char ref[PATH_MAX], found[PATH_MAX - 64], real_out[PATH_MAX], dir[PATH_MAX];

	if (!root && !tour_dir(found, sizeof(found)))
		return false;
	if (!realpath(root ? root : found, ref))
		return false;
	/* --out may not exist yet: its nearest existing parent decides */
	snprintf(dir, sizeof(dir), "%s", out);
	while (!realpath(dir, real_out)) {
		char *slash = strrchr(dir, '/');
		if (!slash) /* a name in the working directory */
			snprintf(dir, sizeof(dir), ".");
		else if (slash == dir)
			return false;
		else
			*slash = '\0';
	}
	size_t n = strlen(ref);
	return !strncmp(real_out, ref, n) && (real_out[n] == '\0' || real_out[n] == '/');
}

/* docs/glossary.md, the handout's glossary: in ./docs, the source tree beside
 * the binary, then PREFIX/share/lockbench (make install); NULL when none. */
static const char *glossary(char *out, size_t len)
{
	if (access("docs/glossary.md", R_OK) == 0) {
		snprintf(out, len, "docs/glossary.md");
		return out;
	}
	return lb_find_installed("docs/glossary.md", "share", out, len) ? out : NULL;
}

/* DIR/tour.pdf: the deck's report.html#print, printed. */
static int print_deck(const char *out)
{
	char abs[PATH_MAX], page[PATH_MAX + 16];
	if (!realpath(out, abs)) {
		lb_errorf("tour: %s: %s", out, strerror(errno));
		return LB_ESYS;
	}
	snprintf(page, sizeof(page), "%s/report.html", abs);
	return lb_print_page(page, "#print", abs, "tour.pdf");
}

/* Every lesson's runs, afresh, into @base/LESSON/RUN. */
static int run_live(const char *base, const char *seed)
{
	int total = 0, k = 0;

	for (int i = 0; i < N_LESSONS; i++)
		for (int j = 0; j < LB_LESSON_RUNS && lessons[i].runs[j].scenario; j++)
			total++;
	for (int i = 0; i < N_LESSONS; i++)
		for (int j = 0; j < LB_LESSON_RUNS && lessons[i].runs[j].scenario; j++) {
			const struct lb_lesson_run *r = &lessons[i].runs[j];
			char out[PATH_MAX];
			snprintf(out, sizeof(out), "%.3900s/%s/%s", base, lessons[i].id, r->dir);
			printf("== tour %d/%d: %s under %s\n", ++k, total, r->strategy, r->scenario);
			fflush(stdout);
			char *argv[] = { "run", "--scenario", (char *)r->scenario, "--strategy",
					 (char *)r->strategy, "--seed", (char *)seed, "--no-status",
					 "--out", out, NULL };
			int rc = lb_cmd_run(10, argv);
			if (lb_stop_requested())
				return LB_EXIT_FAIL;
			if (rc != LB_EXIT_OK) {
				lb_errorf("tour: %s under %s did not run (above): no deck", r->strategy,
					  r->scenario);
				return rc;
			}
			printf("\n");
		}
	return LB_EXIT_OK;
}

int lb_cmd_tour(int argc, char **argv)
{
	static const struct option opts[] = { { "out", required_argument, NULL, 'o' },
					      { "live", no_argument, NULL, 'l' },
					      { "seed", required_argument, NULL, 's' },
					      { "pdf", no_argument, NULL, 'p' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	char out[PATH_MAX - 64] = "", root[PATH_MAX - 64], source[PATH_MAX + 128], seed[24] = "7";
	char gloss[PATH_MAX];
	bool live = false, seeded = false, pdf = false;
	int64_t v;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == ':') /* a value missing: said as a wrong one */
			c = optopt;
		if (c == 'h') {
			usage(stdout);
			return LB_EXIT_OK;
		} else if (c == 'o' && optarg && optarg[0]) {
			snprintf(out, sizeof(out), "%.3900s", optarg);
		} else if (c == 'l') {
			live = true;
		} else if (c == 'p') {
			pdf = true;
		} else if (c == 's' && optarg && lb_parse_i64(optarg, 0, INT64_MAX, &v)) {
			snprintf(seed, sizeof(seed), "%lld", (long long)v);
			seeded = true;
		} else {
			lb_errorf("tour: %s%s", c == 's' ? "--seed takes a number from 0" :
				  c == 'o' ? "--out takes a directory" : "unknown option ",
				  c == 's' || c == 'o' ? "" : argv[optind - 1]);
			usage(stderr);
			return LB_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		lb_errorf("tour: unexpected argument '%s'", argv[optind]);
		return LB_EXIT_USAGE;
	}
	if (seeded && !live) {
		lb_errorf("tour: --seed is the seed of --live's runs; the reference runs have theirs");
		return LB_EXIT_USAGE;
	}
	if (!live && !tour_dir(root, sizeof(root))) { /* before --out is made */
		lb_errorf("tour: no reference runs found (docs/tour; set LOCKBENCH_TOUR, or use "
			  "--live)");
		return LB_EXIT_INPUT;
	}
	if (!out[0])
		lb_default_out_dir("results/tour", "tour", out, sizeof(out));
	if (inside_reference(out, live ? NULL : root)) {
		lb_errorf("tour: --out %s is where the reference runs are: name another directory "
			  "(make tour-reference remakes them)", out);
		return LB_EXIT_USAGE;
	}
	/* a new or empty directory (owned.h): claimed now for --live's runs; the
	 * deck claims it only when every run is read, so a failed one leaves nothing */
	int rc_dir = live ? lb_results_prepare_dir(out) : lb_owned_fresh("--out", out);
	if (rc_dir < 0)
		return rc_dir == LB_EINVAL ? LB_EXIT_USAGE : LB_EXIT_FAIL;
	if (live) {
		int rc = run_live(out, seed);
		if (rc != LB_EXIT_OK)
			return rc;
		snprintf(root, sizeof(root), "%s", out);
		snprintf(source, sizeof(source), "Every run here was run afresh by `lockbench tour "
			 "--live --seed %s`: the figures are this session's, not the rehearsed ones.",
			 seed);
	} else {
		snprintf(source, sizeof(source), "Every run here is a reference run shipped in %s "
			 "(SOURCE.md there names the commit and command that made it): the same "
			 "figures every time.", root);
	}
	int rc = lb_report_html_deck(out, root, lessons, N_LESSONS, source,
				     glossary(gloss, sizeof(gloss)));
	if (rc < 0)
		return rc == LB_EINVAL ? LB_EXIT_INPUT : LB_EXIT_FAIL;
	lb_esc_fprintf(stdout, LB_LANG_TERM, "tour: %d lessons from %s\nin a browser: %s/report.html\n",
		       N_LESSONS, root, out);
	if (pdf) {
		lb_stop_work_begin(); /* Ctrl-C stops the browser; the deck stands */
		if ((rc = print_deck(out)) < 0)
			return lb_stop_requested() ? 128 + lb_stop_signal() : LB_EXIT_FAIL;
		lb_esc_fprintf(stdout, LB_LANG_TERM, "printed: %s/tour.pdf\n", out);
	}
	return LB_EXIT_OK;
}
