/*
 * cmd_exercise.c - `lockbench exercise`: the lab (docs/lab.md). Each exercise
 * is a few scenarios a student's lock must survive, each with the condition
 * that grades it (classes the oracle must not give, and a figure of the
 * run's summary, FIGURE OP N as --expect reads it) and a hint. `exercise N
 * STRATEGY` runs them, once each on fresh servers, exactly as `run` does
 * (the oracle judges; nothing here re-judges a history), and prints per
 * scenario PASS or FAIL, what broke in plain words, the oracle's own reason
 * and the hint. `exercise --list` lists them with the lesson each belongs to.
 *
 * The exercises are this table, not files: a grade is the project's claim
 * about a lock, reviewed and tested with the code that prints it
 * (tests/test_exercise.c grades a correct lock and two wrong ones), and a
 * student's checkout cannot pass itself by editing a file.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "commands.h"
#include "esc.h"
#include "faults.h"
#include "options.h"
#include "readers.h"
#include "results.h"
#include "signals.h"
#include "threshold.h"

#define EX_CHECKS 3

/* One scenario of an exercise: what it must hold, and the hint when not. */
struct ex_check {
	const char *scenario;
	const char *holds;         /* FIGURE OP N that must hold too, or NULL */
	int not_class, not_class2; /* classes the run must not be (-1: none) */
	const char *hint;
};

struct exercise {
	const char *title;
	const char *lesson;        /* the tour's lesson it follows (docs/index.md) */
	struct ex_check checks[EX_CHECKS];
};

static const struct exercise exercises[] = {
	{ "a lock that survives its holder's crash", "3, crash-before-expire",
	  { { "baseline", "overlaps == 0", -1, -1,
	      "two clients were inside at once with no fault at all: acquire may succeed only "
	      "when the key was not set (SET key token NX ...), and must say busy otherwise" },
	    { "holder-crash", NULL, LB_CLASS_DEADLOCK, -1,
	      "a dead holder never releases: the key must expire on its own. Set it with its "
	      "TTL in the same command, SET key token NX PX ttl_ms (SETNX then EXPIRE leaves "
	      "a crash between the two without a TTL)" },
	    { "crash-before-expire", NULL, LB_CLASS_DEADLOCK, -1,
	      "the holder was killed right after its acquire: a key written without its TTL "
	      "in the same command stays forever. SET key token NX PX ttl_ms, one command" } } },
	{ "a late holder must not delete the next one's lock", "4, holder-pause",
	  { { "holder-pause", "foreign_releases == 0", -1, -1,
	      "the paused holder woke after its lease had expired and its release deleted the "
	      "next holder's lock. Write a value of your own (a random token) when you "
	      "acquire, and release with one Lua script that deletes the key only if it still "
	      "holds your token (a GET then a DEL is two commands: another can take the lock "
	      "in between)" } } },
	{ "a lost reply: recognise your own lock", "none in the tour: docs/pitfalls/lost-reply-acquire.md",
	  { { "lost-reply-release", NULL, LB_CLASS_FOREIGN, LB_CLASS_OVERLAP,
	      "a release whose reply was lost was applied: the lock is gone. Never retry it "
	      "as a plain DEL (it would delete the next holder's lock): compare-and-delete "
	      "with your token, or leave it to the TTL" },
	    { "lost-reply-acquire", "acquire_max_ms < 500", LB_CLASS_OVERLAP, LB_CLASS_FOREIGN,
	      "your SET was applied but its reply was lost: the key held your token, your "
	      "next acquire, with a new token, found it busy, and everyone waited for the TTL "
	      "(the longest acquire is the figure). Keep the token of an acquire that ended in an error, try again with that "
	      "same token, and when the key already holds it (GET), the lock is yours" } } },
};
#define N_EXERCISES ((int)(sizeof(exercises) / sizeof(exercises[0])))

/* What a class means, in the words of a first class on locks. */
static const char *plain(int cls)
{
	switch (cls) {
	case LB_CLASS_SAFE:
		return "no two clients were inside at once, and every lock was freed";
	case LB_CLASS_OVERLAP:
		return "two clients were inside the lock at the same moment";
	case LB_CLASS_FOREIGN:
		return "a client deleted a lock another client held, and let a third in beside it";
	case LB_CLASS_DEADLOCK:
		return "the lock was never freed after its holder died: the others waited to the end";
	case LB_CLASS_UNAVAILABLE:
		return "an acquire failed with an error while the fault lasted, and nobody overlapped";
	case LB_CLASS_CONTAINED:
		return "two clients overlapped, but the late one's write was refused or aborted";
	case LB_CLASS_INCONCLUSIVE:
		return "the run showed nothing to judge";
	default:
		return "the run was interrupted";
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: lockbench exercise --list\n"
		   "       lockbench exercise N STRATEGY [--seed N] [--out DIR] [--no-report]\n\n"
		   "The lab (docs/lab.md): write a lock, then let the oracle grade it. Each\n"
		   "exercise runs a few scenarios once each on fresh servers against STRATEGY\n"
		   "(your lock: exec:./my_lock.py, made from docs/lab/my_lock.py or\n"
		   "my_lock.js; or any strategy lockbench lists) and prints, per scenario, PASS\n"
		   "or FAIL, what broke in plain words, the oracle's reason and a hint.\n"
		   "  --list            the exercises, the lesson each follows, their scenarios\n"
		   "  --seed N          every run's seed (1)\n"
		   "  --out DIR         where the runs go, one directory a scenario\n"
		   "                    (results/exercise/<UTC time>-<strategy>)\n"
		   "  --no-report       no charts, report.md or report.html in the runs\n"
		   "A scenario's `only` list (the strategies its [expect] was measured on) does\n"
		   "not keep your lock out of it here.\n\n"
		   "Exit status: 0 the lock passed every scenario of the exercise, 1 it failed\n"
		   "one (or a run showed nothing to judge, or failed), 2 usage (N not an\n"
		   "exercise, an unknown strategy, an exec: PATH that is no executable file, an\n"
		   "--out that cannot be made: as run says them), 3 a run could not happen here\n"
		   "(no redis-server, your program's adapter refused: said) and none failed,\n"
		   "130 or 143 interrupted: a scenario the interruption cut is not run, not\n"
		   "failed.\n");
}

static void list(void)
{
	for (int i = 0; i < N_EXERCISES; i++) {
		const struct exercise *e = &exercises[i];
		printf("%d  %s\n   lesson: %s\n   scenarios:", i + 1, e->title, e->lesson);
		for (int k = 0; k < EX_CHECKS && e->checks[k].scenario; k++)
			printf("%s %s", k ? "," : "", e->checks[k].scenario);
		printf("\n");
	}
	printf("\nlockbench exercise N exec:./my_lock.py grades your lock on exercise N "
	       "(docs/lab.md)\n");
}

struct grading {
	const struct lock_strategy *s;
	const struct exercise *e;
	uint64_t seed;
	bool no_report;
	char out[LB_DIR_MAX + 1];
	int passed, failed, skipped;
};

enum { EX_PASS, EX_FAIL, EX_SKIP };

/* Run @c's scenario once into g->out/SCENARIO (as audit does: run's own
 * function), its summary into @sum: EX_PASS ran, EX_FAIL failed (said),
 * EX_SKIP could not run or does not apply (why in @why). */
static int run_one(const struct grading *g, const struct ex_check *c, char *dir, size_t dlen,
		   struct lb_summary *sum, char *why, size_t wlen)
{
	static struct lb_run_opts o; /* large: a scenario inside */
	struct lb_run_result res = { 0 };
	char *argv[] = { "exercise", NULL }, seed[24], path[LB_DIR_MAX + 160];

	lb_run_opts_parse(1, argv, LB_OPTS_RUN_DEFAULTS, &o);
	if (lb_scenario_load(c->scenario, &o.scenario) < 0)
		return EX_FAIL;
	o.scenario.only[0] = '\0'; /* measured on a few; it applies to every one-node lock */
	if (lb_scenario_why_not(&o.scenario, g->s->name, why, wlen))
		return EX_SKIP;
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)g->seed);
	o.cfg.strategy = g->s;
	o.cfg.seed = g->seed;
	o.cfg.status_line = false;
	o.cfg.no_report = g->no_report;
	lb_run_opts_apply_scenario(&o, &o.scenario);
	char *words[] = { "run", "--scenario", (char *)c->scenario, "--strategy",
			  (char *)g->s->name, "--seed", seed };
	lb_sh_cmdline(o.cfg.cmdline, sizeof(o.cfg.cmdline), "lockbench", 7, words);
	snprintf(dir, dlen, "%s/%s", g->out, c->scenario);
	snprintf(o.cfg.out_dir, sizeof(o.cfg.out_dir), "%s", dir);
	int rc = lb_run_and_report(&o.cfg, &res, NULL, false);
	bool skipped = res.skipped[0] != '\0';
	snprintf(why, wlen, "%s", skipped ? res.skipped : "it could not run here (said above)");
	lb_run_result_free(&res);
	if (lb_stop_requested()) { /* cut short: nothing of the lock to grade */
		snprintf(why, wlen, "interrupted (Ctrl-C or SIGTERM): not graded");
		return EX_SKIP;
	}
	if (rc == LB_EXIT_SKIPPED || skipped)
		return EX_SKIP;
	if (rc != LB_EXIT_OK)
		return EX_FAIL;
	snprintf(path, sizeof(path), "%s/summary.csv", dir);
	return lb_summary_read(path, sum) < 0 ? EX_FAIL : EX_PASS;
}

/* Grade @c on the run's summary @s: EX_PASS or EX_FAIL, the condition as
 * judged in @saw, the class into @cls (-1: none). A run with nothing to judge
 * fails: an untested lock has passed nothing. */
static int grade(const struct ex_check *c, const struct lb_summary *s, char *saw, size_t len,
		 int *cls)
{
	const char *observed = lb_summary_get(s, "observed");

	*cls = observed ? lb_class_parse(observed) : -1;
	if (*cls < 0 || *cls == LB_CLASS_INCONCLUSIVE || *cls == LB_CLASS_INTERRUPTED) {
		snprintf(saw, len, "the run is %.20s: nothing to grade",
			 observed ? observed : "without a class");
		return EX_FAIL;
	}
	if (*cls == c->not_class || *cls == c->not_class2) {
		snprintf(saw, len, "the oracle: %s", observed);
		return EX_FAIL;
	}
	if (!c->holds) {
		snprintf(saw, len, "the oracle: %s", observed);
		return EX_PASS;
	}
	struct lb_threshold th;
	char why[300];
	if (lb_threshold_parse(c->holds, &th, why, sizeof(why)) < 0)
		return EX_FAIL;
	return lb_threshold_judge(&th, lb_summary_value(s, th.column), saw, len) == LB_HELD ?
	       EX_PASS : EX_FAIL;
}

/* One scenario: run, grade, print its lines. */
static void check(struct grading *g, const struct ex_check *c)
{
	char dir[LB_DIR_MAX + 128] = "", why[600] = "", saw[600] = "";
	struct lb_summary sum;
	int cls = -1;

	if (lb_stop_requested()) {
		g->skipped++;
		return;
	}
	lb_esc_fprintf(stdout, LB_LANG_TERM, "\n== %s under %s\n", g->s->name, c->scenario);
	int r = run_one(g, c, dir, sizeof(dir), &sum, why, sizeof(why));
	if (r == EX_SKIP) {
		g->skipped++;
		lb_esc_fprintf(stdout, LB_LANG_TERM, "  NOT RUN %-20s %s\n", c->scenario, why);
		return;
	}
	if (r == EX_FAIL) {
		g->failed++;
		lb_esc_fprintf(stdout, LB_LANG_TERM, "  FAIL %-20s the run failed (said above)\n",
			       c->scenario);
		return;
	}
	const char *seen = lb_summary_get(&sum, "observed");
	if (lb_stop_requested() || (seen && lb_class_parse(seen) == LB_CLASS_INTERRUPTED)) {
		g->skipped++; /* Ctrl-C cut it: nothing of the lock to grade */
		lb_esc_fprintf(stdout, LB_LANG_TERM, "  NOT RUN %-20s interrupted (Ctrl-C or "
			       "SIGTERM): not graded\n", c->scenario);
		return;
	}
	r = grade(c, &sum, saw, sizeof(saw), &cls);
	const char *reason = lb_summary_get(&sum, "observed_why");
	lb_esc_fprintf(stdout, LB_LANG_TERM, "  %s %-20s %s\n", r == EX_PASS ? "PASS" : "FAIL",
		       c->scenario, saw);
	lb_esc_fprintf(stdout, LB_LANG_TERM, "       what happened: %s (%s)\n",
		       cls >= 0 ? plain(cls) : "no class", cls >= 0 ? lb_class_name(cls) : "-");
	if (reason && reason[0])
		lb_esc_fprintf(stdout, LB_LANG_TERM, "       the oracle: %s\n", reason);
	if (r == EX_PASS) {
		g->passed++;
		return;
	}
	g->failed++;
	lb_esc_fprintf(stdout, LB_LANG_TERM, "       hint: %s\n       the run: %s%s\n", c->hint,
		       dir, g->no_report ? "" : " (report.html steps through it)");
}

static int parse(int argc, char **argv, struct grading *g, bool *listing)
{
	static const struct option opts[] = {
		{ "list", no_argument, NULL, 'l' }, { "seed", required_argument, NULL, 's' },
		{ "out", required_argument, NULL, 'o' }, { "no-report", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int64_t v;
	int c;

	g->seed = 1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			*listing = true;
			break;
		case 's':
			if (!lb_parse_i64(optarg, 0, INT64_MAX, &v)) {
				lb_errorf("--seed '%s': expected a non-negative integer", optarg);
				return LB_EINVAL;
			}
			g->seed = (uint64_t)v;
			break;
		case 'o':
			if (!lb_dir_arg_ok("--out", optarg))
				return LB_EINVAL;
			snprintf(g->out, sizeof(g->out), "%s", optarg);
			break;
		case 'n':
			g->no_report = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			lb_errorf("unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
			return LB_EINVAL;
		}
	}
	if (*listing) {
		if (optind == argc)
			return 0;
		lb_errorf("exercise --list takes nothing more, got '%s'", argv[optind]);
		return LB_EINVAL;
	}
	if (argc - optind != 2) {
		lb_errorf("exercise needs N and a STRATEGY: lockbench exercise N exec:./my_lock.py "
			  "(see --help)");
		return LB_EINVAL;
	}
	if (!lb_parse_i64(argv[optind], 1, N_EXERCISES, &v)) {
		lb_errorf("exercise '%s': expected a number from 1 to %d (lockbench exercise --list)",
			  argv[optind], N_EXERCISES);
		return LB_EINVAL;
	}
	g->e = &exercises[v - 1];
	return (g->s = lb_strategy_or_usage(argv[optind + 1])) ? 0 : LB_EINVAL;
}

int lb_cmd_exercise(int argc, char **argv)
{
	static struct grading g;
	bool listing = false;
	int rc;

	memset(&g, 0, sizeof(g));
	if ((rc = parse(argc, argv, &g, &listing)) != 0)
		return rc > 0 ? LB_EXIT_OK : LB_EXIT_USAGE;
	if (listing) {
		list();
		return LB_EXIT_OK;
	}
	int n = (int)(g.e - exercises) + 1, total = 0;
	if (!g.out[0])
		lb_default_out_dir("results/exercise", g.s->name, g.out, sizeof(g.out));
	if ((rc = lb_results_prepare_dir(g.out)) < 0)
		return rc == LB_EINVAL ? LB_EXIT_USAGE : LB_EXIT_FAIL;
	lb_esc_fprintf(stdout, LB_LANG_TERM, "exercise %d: %s (lesson: %s), graded on %s\n", n,
		       g.e->title, g.e->lesson, g.s->name);
	for (int k = 0; k < EX_CHECKS && g.e->checks[k].scenario; k++, total++)
		check(&g, &g.e->checks[k]);
	lb_esc_fprintf(stdout, LB_LANG_TERM, "\nexercise %d: %s: %d of %d scenarios passed%s%s; "
		       "the runs in %s\n", n, g.failed ? "FAILED" : g.skipped ? "NOT GRADED" :
		       "PASSED", g.passed, total, g.failed ? "" : g.skipped ? ", some not run" : "",
		       lb_stop_requested() ? " (interrupted)" : "", g.out);
	return g.failed ? LB_EXIT_FAIL : g.skipped ? LB_EXIT_SKIPPED : LB_EXIT_OK;
}
