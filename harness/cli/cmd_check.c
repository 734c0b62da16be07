/*
 * cmd_check.c - `lockbench check DIR`: recompute a run's figures and class
 * from its files and compare them with its summary.csv (verify.h); for a
 * directory of runs (compare, matrix, sweep, chaos, demo), every run under it.
 * Exit 0 when they agree, 1 with the differences listed otherwise.
 * `check --history FILE` is handed to cmd_check_history.c.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "esc.h"
#include "commands.h"
#include "signals.h"
#include "util.h"
#include "verify.h"

#define MAX_DEPTH 6 /* a demo's matrix: demo/1-matrix/scenario/strategy/rep */

struct tally {
	int runs, differ, unreadable;
	bool porcupine;       /* --porcupine: each run through Porcupine too */
	int64_t pc_timeout_ms;
	int pc_ok, pc_not, pc_unknown, pc_worst; /* its verdicts, and the worst exit status */
	bool stopped; /* by Ctrl-C or SIGTERM, before every run was checked */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: lockbench check DIR [--porcupine [--porcupine-timeout MS]]\n"
		   "       (DIR: a run, or a compare, matrix, sweep, chaos or demo directory:\n"
		   "       every run under it)\n"
		   "       lockbench check --history FILE [--out DIR] [--clock-uncertainty MS]\n\n"
		   "Recomputes every figure of a run from its own files and compares it with\n"
		   "DIR/summary.csv at the precision the summary writes: from history.csv the\n"
		   "sections, throughput, overlaps and overlap time, holders, foreign releases\n"
		   "(those the servers saw judged again with keyevents.csv),\n"
		   "lost leases, holder deaths, orphan time, recovery (with waiters.csv and the\n"
		   "TTL), fairness, hand-offs and the split brain (with events.csv); from\n"
		   "latency.csv and latency-censored.csv the acquire latencies and which are\n"
		   "lower bounds;\n"
		   "from the measured counts in summary.csv the lost-update arithmetic, retries,\n"
		   "commands per section and the lock's own cost; and from all of them the\n"
		   "outcome class and its reason. Every column must have a unit and a range\n"
		   "(harness/params/figures.c) and a value inside it, and an overlap must have been\n"
		   "seen by the canary (canary_violations >= 1 when overlaps >= 1).\n"
		   "A directory written by check --history --out is checked against the file\n"
		   "it kept (imported.csv): every figure, history.csv, names.csv, overlaps.csv\n"
		   "and fences.csv are derived from it again.\n\n"
		   "For a directory of runs, one line per run that agrees and the full list for\n"
		   "one that does not.\n\n"
		   "--porcupine: a second checker, written elsewhere. Each run's lock operations\n"
		   "(every section's acquire, from its call to its enter, and its end, from its\n"
		   "exit to its release's return; every attempt that ended in an error or without\n"
		   "an answer as an acquire that may have been applied) are written to\n"
		   "DIR/porcupine-ops.csv and held to a mutex by Porcupine (lockbench-porcupine,\n"
		   "which harness/deps.sh builds with Go), which says linearizable, not\n"
		   "linearizable (and on which lock), or unknown (no answer in time: never a\n"
		   "pass), and draws DIR/porcupine.html with the run's events as annotations.\n"
		   "Where lockbench counts an overlap, Porcupine finds the history not\n"
		   "linearizable (docs/running.md, \"check --porcupine\": the mapping, and where\n"
		   "the two models differ).\n"
		   "  --porcupine-timeout MS  Porcupine's limit (60000 by default; 1 to 3600000)\n\n"
		   "--history FILE: a production history through the oracle. FILE is a CSV of\n"
		   "critical sections: a header naming client, enter and exit, and any of key,\n"
		   "token, fence, server and clock_uncertainty_ms, in any order; one row per\n"
		   "section; times as epoch seconds (1764072000.123456789) or RFC 3339\n"
		   "(2026-11-25T12:00:00.123456Z, +01:00); blank lines and # comments allowed.\n"
		   "Prints every overlap of two clients on one lock: CERTAIN when it holds even\n"
		   "with each clock off by its uncertainty in the worst direction, possible when\n"
		   "only some errors within the bounds make it (a short overlap, or a near miss);\n"
		   "every fence that went backwards against the enters on its lock; and the\n"
		   "totals. A clock's uncertainty is its row's clock_uncertainty_ms, else\n"
		   "  --clock-uncertainty MS  (0 by default; up to 3600000, 6 decimals)\n"
		   "  --out DIR              also write DIR (new, or empty) as a run directory,\n"
		   "                         whole or not at all: the file as given\n"
		   "                         (imported.csv), history.csv, names.csv,\n"
		   "                         overlaps.csv, fences.csv, summary.csv, report.md and\n"
		   "                         report.html; `lockbench check DIR` re-derives it\n"
		   "(docs/running.md, \"Your production history through the oracle\")\n\n"
		   "Exit status: 0 every summary agrees with its files (--history: no overlap is\n"
		   "certain; how many are possible is said), 1 one differs, each difference\n"
		   "listed (--history: an overlap is certain, or DIR could not be written),\n"
		   "2 usage error, 4 an input cannot be read or is malformed (the file, line and\n"
		   "field are named), or DIR holds no run.\n"
		   "With --porcupine, also: 1 a history is not linearizable (or its files could\n"
		   "not be written in DIR), 5 Porcupine gave no answer in time (unknown),\n"
		   "3 the checker is not installed here (nothing was checked); the worst of all\n"
		   "(4, 3, 1, 5, 0 in that order) is the status.\n");
}

static bool is_run(const char *dir)
{
	char path[4200];

	snprintf(path, sizeof(path), "%.4000s/summary.csv", dir);
	return access(path, F_OK) == 0;
}

/* The worse of two exit statuses: 4, 3, 1, 5, 0 in that order. */
static int worse(int a, int b)
{
	static const int order[] = { LB_EXIT_INPUT, LB_EXIT_SKIPPED, LB_EXIT_FAIL,
				     LB_EXIT_INCONCLUSIVE };
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (a == order[i] || b == order[i])
			return order[i];
	return a ? a : b;
}

static void porcupine_one(const char *dir, struct tally *t)
{
	int rc = lb_check_porcupine(dir, t->pc_timeout_ms);

	if (rc == LB_EXIT_OK)
		t->pc_ok++;
	else if (rc == LB_EXIT_FAIL)
		t->pc_not++;
	else if (rc == LB_EXIT_INCONCLUSIVE)
		t->pc_unknown++;
	if (rc > 128)
		t->stopped = true;
	else
		t->pc_worst = worse(t->pc_worst, rc);
}

/* One run; @verbose: every figure, else one line unless it differs. */
static void check_one(const char *dir, bool verbose, struct tally *t)
{
	struct lb_verify v;
	int rc = lb_verify_run(dir, verbose ? stdout : NULL, &v);

	t->runs++;
	if (rc == LB_ECANCELED || lb_stop_work()) {
		t->stopped = true; /* Ctrl-C: not the run's fault */
		return;
	}
	if (rc < 0) {
		t->unreadable++;
		lb_esc_fprintf(stdout, LB_LANG_TERM, "UNREADABLE %s: %s (above)\n", dir, lb_strerror(rc));
		return;
	}
	if (v.differences && !verbose) /* again, with every figure */
		lb_verify_run(dir, stdout, &v);
	if (v.differences) {
		t->differ++;
		lb_esc_fprintf(stdout, LB_LANG_TERM, "%d difference%s in %s: %s\n", v.differences,
			       v.differences == 1 ? "" : "s", dir, v.which);
	} else if (verbose) {
		printf("summary.csv agrees with %s (%d figures)\n", v.imported ?
		       "imported.csv, the file it was imported from, and history.csv" :
		       "history.csv, latency.csv, events.csv and attempts.csv", v.figures);
	} else {
		lb_esc_fprintf(stdout, LB_LANG_TERM, "ok   %s (%d figures)\n", dir, v.figures);
	}
	if (t->porcupine)
		porcupine_one(dir, t);
}

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Every run under @dir, in name order; symbolic links are not followed. */
static void walk(const char *dir, int depth, struct tally *t)
{
	struct dirent **ents;
	char path[4200];
	struct stat st;
	int n = scandir(dir, &ents, NULL, name_cmp);

	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		if (t->stopped || lb_stop_work()) {
			t->stopped = true;
			free(ents[i]);
			continue;
		}
		snprintf(path, sizeof(path), "%.4000s/%.190s", dir, name);
		if (name[0] != '.' && lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (is_run(path))
				check_one(path, false, t);
			else if (depth < MAX_DEPTH)
				walk(path, depth + 1, t);
		}
		free(ents[i]);
	}
	free(ents);
}

/* DIR and --porcupine's options: 0, or LB_EXIT_USAGE (said). */
static int parse(int argc, char **argv, const char **dir, struct tally *t)
{
	*dir = NULL;
	t->pc_timeout_ms = 60000;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--porcupine")) {
			t->porcupine = true;
		} else if (!strcmp(argv[i], "--porcupine-timeout") && i + 1 < argc) {
			if (!lb_parse_i64(argv[++i], 1, 3600000, &t->pc_timeout_ms)) {
				lb_errorf("check: --porcupine-timeout: expected ms from 1 to 3600000, got '%s'",
					  argv[i]);
				return LB_EXIT_USAGE;
			}
		} else if (argv[i][0] == '-' || *dir) {
			usage(stderr);
			return LB_EXIT_USAGE;
		} else {
			*dir = argv[i];
		}
	}
	if (!*dir) {
		usage(stderr);
		return LB_EXIT_USAGE;
	}
	return 0;
}

int lb_cmd_check(int argc, char **argv)
{
	struct tally t = { 0 };
	const char *dir;
	char prog[4200];

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return LB_EXIT_OK;
	}
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--history", 9) && (!argv[i][9] || argv[i][9] == '='))
			return lb_check_history(argc, argv);
	if (parse(argc, argv, &dir, &t))
		return LB_EXIT_USAGE;
	if (!lb_dir_arg_ok("check", dir))
		return LB_EXIT_USAGE;
	if (t.porcupine && !lb_porcupine_find(prog, sizeof(prog))) {
		lb_errorf("check --porcupine: no checker at %s (bash harness/deps.sh etcd builds it, "
			  "with Go): nothing was checked", prog);
		return LB_EXIT_SKIPPED;
	}
	lb_stop_work_begin(); /* Ctrl-C stops it; a check that was done stands */
	if (is_run(dir)) {
		check_one(dir, true, &t);
	} else {
		walk(dir, 1, &t);
		if (t.stopped)
			return 128 + lb_stop_signal();
		if (t.runs == 0) {
			lb_errorf("%s holds no run (no summary.csv in it or below it)", dir);
			return LB_EXIT_INPUT;
		}
		lb_esc_fprintf(stdout, LB_LANG_TERM, "%d run%s under %s: %d agree, %d differ, %d unreadable\n", t.runs,
		       t.runs == 1 ? "" : "s", dir, t.runs - t.differ - t.unreadable, t.differ,
		       t.unreadable);
		if (t.porcupine)
			printf("porcupine: %d linearizable, %d not linearizable, %d unknown\n", t.pc_ok,
			       t.pc_not, t.pc_unknown);
	}
	if (t.stopped)
		return 128 + lb_stop_signal();
	return worse(t.unreadable ? LB_EXIT_INPUT : t.differ ? LB_EXIT_FAIL : LB_EXIT_OK, t.pc_worst);
}
