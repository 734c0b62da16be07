/*
 * cmd_tour.c - `lockbench tour`: one report.html deck of the classic lessons
 * in teaching order, each wrong recipe beside its fix under the same fault,
 * then Redlock and failover. By default it is drawn from the reference runs
 * shipped in docs/tour (a class sees what was rehearsed, the same figures
 * every time; nothing is run, no server started); --live runs every lesson
 * afresh with the same scenarios, strategies and seed, then draws those.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	    { "baseline", "token-lua", "token-lua", "token-lua" } } },
	{ "check-then-delete", "Check, then delete: a release in two commands",
	  "get-del releases with GET and a compare, then DEL: two commands. Here the releasing "
	  "client stalls 1.5 s between them; its lease runs out, another client takes the lock, "
	  "and the DEL deletes that client's lock (orange triangle). token-lua compares and "
	  "deletes in one Lua script: the same load, no window, safe.",
	  "docs/pitfalls/check-then-delete.md",
	  { { "check-then-delete", "get-del", "get-del", "get-del" },
	    { "check-then-delete", "token-lua", "token-lua", "token-lua" } } },
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
	    { "crash-before-expire", "set-nx-px", "set-nx-px", "set-nx-px" } } },
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
	    { "holder-pause", "fenced", "fenced", "fenced" } } },
	{ "slow-holder", "A section slower than the TTL",
	  "One client's section takes 1.5 s under a 1 s TTL; nothing pauses it. With set-nx-px "
	  "the lease runs out while it is inside, the other client enters, and the slow one's "
	  "late DEL removes that client's lock (orange triangles), again and again. renewal's "
	  "watchdog extends the lease every TTL/3 while the holder is alive: nobody enters "
	  "until the slow section ends.",
	  "docs/pitfalls/slow-holder.md",
	  { { "slow-holder", "set-nx-px", "set-nx-px", "set-nx-px" },
	    { "slow-holder", "renewal", "renewal", "renewal" } } },
	{ "fence-reset", "Fencing, and a fence that goes back",
	  "Lock node 0 restarts empty while a client holds the lock, and the next client takes "
	  "it at once: two inside. token-lua loses an update. For fenced the fence counter "
	  "restarted with the node, so new fences begin again below the highest the resource "
	  "has accepted, and the resource refuses writes that carry them: no update is lost "
	  "(contained), at the price of refused writes. A fence counter must never go back.",
	  "docs/pitfalls/fence-reset.md",
	  { { "fence-reset", "token-lua", "token-lua", "token-lua" },
	    { "fence-reset", "fenced", "fenced", "fenced" } } },
	{ "redlock-node-restart", "Redlock: a node restarts empty",
	  "Five lock nodes, a quorum of three. Client 0 holds nodes 0, 1 and 2 (it cannot reach "
	  "3 and 4); node 2 restarts without persistence and forgets the lock (dashed in the "
	  "node lanes), and client 1 takes nodes 2, 3 and 4: both inside. With delayed restarts "
	  "node 2 stays down for the max TTL, longer than the run: no second majority, no "
	  "overlap, and every acquire meanwhile fails on node 2 (unavailable).",
	  "docs/pitfalls/redlock-node-restart.md",
	  { { "redlock-node-restart", "redlock", "redlock", "redlock" },
	    { "redlock-node-restart-delayed", "redlock", "redlock-delayed",
	      "redlock, delayed restarts" } } },
	{ "redlock-clock-jump", "Redlock: a node's clock jumps",
	  "As in the last lesson client 0 holds nodes 0, 1 and 2. This time node 2's clock "
	  "jumps 10 s forward and Redis expires client 0's key there early; client 1 takes "
	  "nodes 2, 3 and 4: both hold the lock. Redlock assumes clocks that drift slowly, not "
	  "clocks that jump.",
	  "docs/pitfalls/redlock-clock-jump.md",
	  { { "redlock-clock-jump", "redlock", "redlock", "redlock" } } },
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
	    { "failover", "wait-replicas", "wait-replicas", "wait-replicas" } } },
};
#define N_LESSONS ((int)(sizeof(lessons) / sizeof(lessons[0])))

static void usage(FILE *f)
{
	fprintf(f, "usage: lockbench tour [--out DIR] [--live [--seed N]]\n\n"
		   "Builds one report.html, a deck of the classic lessons in teaching order\n"
		   "(docs/index.md, \"A lesson plan\"): each wrong recipe beside its fix under\n"
		   "the same fault, then Redlock and failover; a contents list, a lesson\n"
		   "picker, and one step-through that goes on to the next lesson past a\n"
		   "lesson's last step.\n\n"
		   "  --out DIR   where report.html goes (results/tour/<UTC time>-tour);\n"
		   "              never the reference runs' directory or inside it\n"
		   "  --live      run every lesson afresh (the same scenarios and strategies,\n"
		   "              one after another, each on fresh servers) into DIR/LESSON/RUN,\n"
		   "              then draw the deck from those runs\n"
		   "  --seed N    the seed of every --live run (7, the reference runs' seed)\n\n"
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
		   "written), 2 usage error, 3 a --live run could not happen here, 4 a\n"
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
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	char out[PATH_MAX - 64] = "", root[PATH_MAX - 64], source[PATH_MAX + 128], seed[24] = "7";
	bool live = false, seeded = false;
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
	int rc = lb_report_html_deck(out, root, lessons, N_LESSONS, source);
	if (rc < 0)
		return rc == LB_EINVAL ? LB_EXIT_INPUT : LB_EXIT_FAIL;
	lb_esc_fprintf(stdout, LB_LANG_TERM, "tour: %d lessons from %s\nin a browser: %s/report.html\n",
		       N_LESSONS, root, out);
	return LB_EXIT_OK;
}
