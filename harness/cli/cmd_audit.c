/*
 * cmd_audit.c - `lockbench audit STRATEGY`: a lock against the claims it
 * makes. For each claim (M D F O L, `lockbench list`'s letters: a recipe's
 * from its table, an adapter's from its hello, or --claims), the scenarios
 * that test it run once each on fresh servers, and each claim is judged on
 * what they wrote: held, broken (by which scenario, in which run, with the
 * figure), or not tested (no scenario of it applies here, and why). A report
 * card on the terminal, in DIR/audit.md (and report.html), and with --junit
 * in JUnit XML; exit 1 when a claim broke or went untested (skipped is never
 * passed) unless --allow-skipped lets the untested ones by.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accept.h"
#include "adapter.h"
#include "commands.h"
#include "esc.h"
#include "faults.h"
#include "junit.h"
#include "options.h"
#include "outfile.h"
#include "report.h"
#include "results.h"
#include "signals.h"

/* What breaks a claim in one scenario: a figure's condition (threshold.h),
 * or a class it must not be. */
static const struct audit_test {
	unsigned claim;            /* the claim's bit (enum lb_claim) */
	const char *scenario;
	const char *holds;         /* FIGURE OP N that must hold, or NULL */
	int not_class, not_class2; /* classes the run must not be (-1: none) */
} tests[] = {
	{ LB_CLAIM_MUTEX, "holder-pause", "overlaps == 0", -1, -1 },
	{ LB_CLAIM_MUTEX, "slow-holder", "overlaps == 0", -1, -1 },
	{ LB_CLAIM_MUTEX, "check-then-delete", "overlaps == 0", -1, -1 },
	{ LB_CLAIM_DEADLOCK_FREE, "holder-crash", NULL, LB_CLASS_DEADLOCK, -1 },
	{ LB_CLAIM_FAULT_TOLERANT, "redlock-minority-down", NULL, LB_CLASS_UNAVAILABLE,
	  LB_CLASS_DEADLOCK },
	{ LB_CLAIM_OWNER_RELEASE, "check-then-delete", "foreign_releases == 0", -1, -1 },
	{ LB_CLAIM_OWNER_RELEASE, "holder-pause", "foreign_releases == 0", -1, -1 },
	{ LB_CLAIM_NO_LAPSE, "holder-pause", "lost_leases == 0", -1, -1 },
	{ LB_CLAIM_NO_LAPSE, "slow-holder", "lost_leases == 0", -1, -1 },
};
#define N_TESTS (sizeof(tests) / sizeof(tests[0]))

/* What the claims mean, for the card. */
static const char *const meaning[LB_CLAIM_COUNT] = {
	"at most one holder at any moment",
	"a crashed holder's lock comes back",
	"works while a majority of its nodes is up",
	"only the holder can release it",
	"the lease does not lapse while the holder works",
};

/* What became of one scenario's run: the cache every test of that scenario
 * reads, so that each claim it tests says the same (a run skipped for one
 * claim is skipped for the next, not taken for a run that failed). */
enum run_status {
	RUN_NONE,                  /* not asked for yet */
	RUN_RAN,                   /* it ran: its summary in sum */
	RUN_NOT_APPLICABLE,        /* not started: the scenario does not apply (why) */
	RUN_SKIPPED,               /* started, and skipped: it could not run here (why) */
	RUN_FAILED,                /* it failed (lockbench said why on stderr) */
	RUN_UNREACHABLE,           /* your deployment refused it (said, naming the server) */
	RUN_INTERRUPTED,           /* the audit was interrupted before or during it */
};

struct audit_run {
	const char *scenario;      /* the key; NULL: a free slot */
	enum run_status status;
	char why[600];             /* a skip's or a not-applicable's reason */
	char dir[LB_DIR_MAX + 128];/* its run directory ("" when none was made) */
	struct lb_summary sum;     /* RUN_RAN */
	double seconds;            /* how long it took (wall clock), 0 when not started */
};

struct audit {
	const struct lock_strategy *s;
	unsigned claims;
	const char *claims_from;
	uint64_t seed;
	bool allow_skipped, no_report;
	char out[LB_DIR_MAX + 1];
	char junit[LB_DIR_MAX + 1];
	/* the deployment options as given (--redis URL, --etcd URLS, --allow-faults,
	 * --hook ...): each run's command line, read by run's own table */
#define AUDIT_DEPLOY_WORDS 48
	char *deploy[AUDIT_DEPLOY_WORDS];
	int n_deploy;
	bool unreachable;          /* a run found the deployment unreachable: exit 3 */
	struct audit_run runs[N_TESTS]; /* one a scenario, at most one a test */
	/* per test: -2 its run failed, -1 not tested, 0 broken, 1 held; what it
	 * saw; its run (NULL: the test was not asked for) */
	int verdict[N_TESTS];
	char saw[N_TESTS][600];
	const struct audit_run *run[N_TESTS];
	int count[5];              /* claims by verdict + 2: run failed, untested, broken, held,
				      broken only as accepted */
	/* --accept, --accept-file: the failures accepted (accept.h), and per test
	 * the one that accepts it (-1: none) */
	struct lb_accept_list acc;
	int accepted[N_TESTS];
	int no_longer;             /* accepted failures that did not fail */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: lockbench audit STRATEGY [--claims LETTERS] [--seed N] [--out DIR]\n"
		   "                       [--accept CLAIM:SCENARIO[,...]] [--accept-file FILE]\n"
		   "                       [--junit FILE] [--allow-skipped] [--no-report]\n\n"
		   "Tests each claim STRATEGY makes (any strategy: a recipe, a library, exec:PATH)\n"
		   "with the scenarios that test it, each run once on fresh servers, and prints a\n"
		   "report card: the claim, held or broken, the scenario and run that broke it.\n"
		   "  M mutex           holder-pause, slow-holder, check-then-delete: overlaps == 0\n"
		   "  D deadlock-free   holder-crash: not deadlock\n"
		   "  F fault-tolerant  redlock-minority-down: not unavailable, not deadlock\n"
		   "  O owner-release   check-then-delete, holder-pause: foreign_releases == 0\n"
		   "  L no-lapse        holder-pause, slow-holder: lost_leases == 0\n"
		   "The claims are the strategy's (`lockbench list`; an adapter's hello says them,\n"
		   "protocol version 3), or --claims LETTERS (of MDFOL). A scenario that does not\n"
		   "apply to the strategy (check-then-delete needs the failpoint between-get-del in\n"
		   "its code: an adapter announces it) tests nothing, and says why.\n"
		   "  --seed N          every run's seed (1)\n"
		   "  --out DIR         where the runs and audit.md go\n"
		   "                    (results/audit/<UTC time>-<strategy>)\n"
		   "  --accept CLAIM:SCENARIO[,...]  a failure you accept: CLAIM (a letter of\n"
		   "                    MDFOL, or its name) broken under SCENARIO does not fail\n"
		   "                    the audit (the card says ACCEPTED); repeatable\n"
		   "  --accept-file FILE  the same from a file you commit, each with its reason:\n"
		   "                    an [accept] section of CLAIM:SCENARIO = REASON lines\n"
		   "                    (; and # comments). An accepted failure that no longer\n"
		   "                    fails is said, to be taken off the list\n"
		   "  --junit FILE      the card as JUnit XML, a test case a claim (its time the\n"
		   "                    runs' elapsed time)\n"
		   "  --allow-skipped   a claim no scenario could test does not fail the audit\n"
		   "  --no-report       no charts, report.md or report.html\n"
		   "Your own deployment, as `lockbench run` takes it (each scenario's run on it):\n");
	lb_deploy_opts_usage(f);
	fprintf(f, "\nExit status: 0 every claim held (or broke only as accepted), 1 a claim broke\n"
		   "under a scenario not accepted, or could not be tested (unless\n"
		   "--allow-skipped), or a run failed, 2 usage (an --accept or --accept-file\n"
		   "that cannot be read, or names a scenario that does not test the claim: the\n"
		   "file, the line, the field), 3 your deployment could not be reached (a server\n"
		   "refused, unknown, not a member: said, naming it; the audit stops there), 130\n"
		   "or 143 interrupted.\n");
}

/* A deployment option (lb_deploy_options' @k) and its value, kept for the runs. */
static int deploy_arg(struct audit *a, const struct option *o, const char *value)
{
	char word[64];

	if (a->n_deploy + 2 > AUDIT_DEPLOY_WORDS) {
		lb_errorf("audit: too many deployment options (at most %d words)", AUDIT_DEPLOY_WORDS);
		return LB_EINVAL;
	}
	snprintf(word, sizeof(word), "--%s", o->name);
	if (!(a->deploy[a->n_deploy++] = strdup(word)) ||
	    (value && !(a->deploy[a->n_deploy++] = strdup(value))))
		return LB_ENOMEM;
	return 0;
}

/* The run's options for @scenario on the audit's deployment, parsed by
 * run's own table and checks into @o: 0, or LB_EINVAL (said). @scenario NULL:
 * the deployment alone, checked once before any run. */
static int deploy_parse(const struct audit *a, const char *scenario, const char *seed,
			struct lb_run_opts *o)
{
	char *argv[AUDIT_DEPLOY_WORDS + 12];
	int n = 0;

	argv[n++] = "run";
	argv[n++] = "--strategy";
	argv[n++] = (char *)a->s->name;
	if (scenario) {
		argv[n++] = "--scenario";
		argv[n++] = (char *)scenario;
		argv[n++] = "--seed";
		argv[n++] = (char *)seed;
	}
	for (int i = 0; i < a->n_deploy; i++)
		argv[n++] = a->deploy[i];
	argv[n] = NULL;
	return lb_run_opts_parse(n, argv, scenario ? LB_OPTS_RUN : LB_OPTS_RUN, o) != 0 ? LB_EINVAL : 0;
}

/* LETTERS of MDFOL into claim bits; false when another letter is in it. */
static bool claim_letters(const char *v, unsigned *out)
{
	static const char letters[] = "MDFOL";

	*out = 0;
	for (const char *c = v; *c; c++) {
		const char *at = strchr(letters, *c);
		if (!at)
			return false;
		*out |= 1u << (at - letters);
	}
	return *v != '\0';
}

static int parse(int argc, char **argv, struct audit *a)
{
	static const struct option own[] = {
		{ "claims", required_argument, NULL, 'c' }, { "seed", required_argument, NULL, 's' },
		{ "out", required_argument, NULL, 'o' },    { "junit", required_argument, NULL, 'j' },
		{ "allow-skipped", no_argument, NULL, 'a' }, { "no-report", no_argument, NULL, 'n' },
		{ "accept", required_argument, NULL, 'A' }, { "accept-file", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
	};
	enum { DEPLOY = 1000, N_OWN = sizeof(own) / sizeof(own[0]) };
	struct option opts[N_OWN + 16];
	size_t n_deploy;
	const struct option *deploy = lb_deploy_options(DEPLOY, &n_deploy);
	int64_t v;
	int c, rc;

	memcpy(opts, own, sizeof(own));
	memcpy(opts + N_OWN, deploy, n_deploy * sizeof(*deploy)); /* run's, not a copy */
	opts[N_OWN + n_deploy] = (struct option){ NULL, 0, NULL, 0 };
	a->seed = 1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c >= DEPLOY && c < DEPLOY + (int)n_deploy) {
			if ((rc = deploy_arg(a, &deploy[c - DEPLOY], optarg)) < 0)
				return rc;
			continue;
		}
		switch (c) {
		case 'c':
			if (!claim_letters(optarg, &a->claims)) {
				lb_errorf("--claims '%s': expected letters of MDFOL (lockbench list's)",
					  optarg);
				return LB_EINVAL;
			}
			a->claims_from = "--claims";
			break;
		case 's':
			if (!lb_parse_i64(optarg, 0, INT64_MAX, &v)) {
				lb_errorf("--seed '%s': expected a non-negative integer", optarg);
				return LB_EINVAL;
			}
			a->seed = (uint64_t)v;
			break;
		case 'o':
			if (!lb_dir_arg_ok("--out", optarg))
				return LB_EINVAL;
			snprintf(a->out, sizeof(a->out), "%s", optarg);
			break;
		case 'j':
			if (!lb_file_arg_ok("--junit", optarg))
				return LB_EINVAL;
			snprintf(a->junit, sizeof(a->junit), "%s", optarg);
			break;
		case 'a':
			a->allow_skipped = true;
			break;
		case 'A':
			if (lb_accept_arg(&a->acc, optarg) < 0)
				return LB_EINVAL;
			break;
		case 'F':
			if (lb_accept_file(&a->acc, optarg) < 0)
				return LB_EINVAL;
			break;
		case 'n':
			a->no_report = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			lb_errorf("unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
			return LB_EINVAL;
		}
	}
	if (optind != argc - 1) {
		lb_errorf(optind < argc ? "audit takes one strategy, got '%s' too (see --help)" :
			  "audit needs a STRATEGY (see --help)%s", optind < argc ? argv[optind + 1] : "");
		return LB_EINVAL;
	}
	if (!(a->s = lb_strategy_or_usage(argv[optind])))
		return LB_EINVAL;
	struct lb_run_opts *o = calloc(1, sizeof(*o)); /* large: a scenario inside */
	rc = !o ? LB_ENOMEM : a->n_deploy ? deploy_parse(a, NULL, NULL, o) : 0;
	free(o);
	return rc; /* a deployment option wrong for this lock: usage, before any run */
}

/* Each accepted failure to the test it names: LB_EINVAL (said, where it was
 * given) when its scenario does not test its claim. */
static int resolve_accepts(struct audit *a)
{
	for (size_t i = 0; i < N_TESTS; i++)
		a->accepted[i] = -1;
	for (int k = 0; k < a->acc.n; k++) {
		const struct lb_accept *x = &a->acc.a[k];
		char which[200] = "";
		size_t i;
		for (i = 0; i < N_TESTS; i++) {
			if (tests[i].claim != 1u << x->claim)
				continue;
			if (!strcmp(tests[i].scenario, x->scenario))
				break;
			snprintf(which + strlen(which), sizeof(which) - strlen(which), "%s%c:%s",
				 which[0] ? ", " : "", "MDFOL"[x->claim], tests[i].scenario);
		}
		if (i == N_TESTS) {
			lb_errorf("%s: field %c:%s: %s does not test %c (%s): expected one of %s", x->where,
				  "MDFOL"[x->claim], x->scenario, x->scenario, "MDFOL"[x->claim],
				  lb_claim_name(x->claim), which);
			return LB_EINVAL;
		}
		a->accepted[i] = k;
	}
	return 0;
}

/* The claims to test: --claims, else the adapter's hello, else its table's. */
static int find_claims(struct audit *a)
{
	if (a->claims_from)
		return 0;
	char why[400];
	/* a library that cannot run here keeps its manifest's claims: each is then
	 * not tested, with the reason its runs are skipped */
	if (lb_strategy_is_external(a->s) && lb_adapter_usable(a->s, why, sizeof(why)) &&
	    lb_adapter_greet(a->s) < 0)
		return LB_EPROTO;
	a->claims = a->s->claims;
	a->claims_from = lb_adapter_claims_declared(a->s) ? "its hello" :
			 lb_strategy_is_external(a->s) ? "its manifest" : "its table";
	if (!a->claims) {
		lb_esc_fprintf(stderr, LB_LANG_TERM, "lockbench: %s makes no claim to test (%s); say "
			       "which with --claims LETTERS (of MDFOL)\n", a->s->name,
			       lb_adapter_claims_declared(a->s) ? "its hello says claims=-" :
			       lb_strategy_is_external(a->s) ? "its hello has no claims=, protocol "
			       "version 3" : "lockbench list");
		return LB_EINVAL;
	}
	return 0;
}

/* Run the scenario of @run once into a->out/SCENARIO: its status, its
 * summary, its reason, its directory and its duration into @run. */
static void run_scenario(struct audit *a, struct audit_run *run)
{
	struct lb_run_opts o;
	struct lb_run_result res = { 0 };
	const char *scenario = run->scenario;
	char *argv[] = { "audit", NULL }, seed[24], path[LB_DIR_MAX + 160];

	run->status = RUN_FAILED;
	lb_run_opts_parse(1, argv, LB_OPTS_RUN_DEFAULTS, &o);
	if (lb_scenario_load(scenario, &o.scenario) < 0)
		return;
	run->status = RUN_NOT_APPLICABLE;
	if (lb_scenario_why_not(&o.scenario, a->s->name, run->why, sizeof(run->why)))
		return;
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)a->seed);
	for (int i = 0; i < o.scenario.n_faults; i++) { /* a stall at an instant it does not have */
		const struct lb_fault *f = &o.scenario.faults[i];
		if ((f->action == LB_ACT_CRASH || f->action == LB_ACT_SLEEP) && !f->fallback_holder &&
		    !lb_strategy_has_failpoint(a->s, f->failpoint)) {
			snprintf(run->why, sizeof(run->why), "%s has no failpoint %s (the instant the "
				 "scenario's fault acts at): it would test nothing", a->s->name,
				 f->failpoint);
			return;
		}
	}
	if (a->n_deploy && deploy_parse(a, scenario, seed, &o) < 0) { /* run's table and checks */
		run->status = RUN_FAILED;
		return;
	}
	o.cfg.strategy = a->s;
	o.cfg.seed = a->seed;
	o.cfg.status_line = false;
	o.cfg.no_report = a->no_report;
	lb_run_opts_apply_scenario(&o, &o.scenario);
	char *words[] = { "run", "--scenario", (char *)scenario, "--strategy", (char *)a->s->name,
			  "--seed", seed };
	if (!a->n_deploy) /* else recorded by lb_run_opts_parse, passwords masked */
		lb_sh_cmdline(o.cfg.cmdline, sizeof(o.cfg.cmdline), "lockbench", 7, words);
	snprintf(run->dir, sizeof(run->dir), "%s/%s", a->out, scenario);
	snprintf(o.cfg.out_dir, sizeof(o.cfg.out_dir), "%s", run->dir);
	int64_t t0 = lb_now_ns();
	int rc = lb_run_and_report(&o.cfg, &res, NULL, false);
	run->seconds = (double)(lb_now_ns() - t0) / LB_NS_PER_S;
	bool skipped = res.skipped[0] != '\0';
	snprintf(run->why, sizeof(run->why), "%s", skipped ? res.skipped :
		 "it could not run here (lockbench said why above)");
	lb_run_result_free(&res);
	if (rc != LB_EXIT_OK && rc != LB_EXIT_SKIPPED)
		run->status = lb_stop_requested() ? RUN_INTERRUPTED : RUN_FAILED;
	else if (rc == LB_EXIT_SKIPPED && !skipped && lb_cfg_theirs(&o.cfg))
		run->status = RUN_UNREACHABLE; /* the deployment refused it: said, naming the server */
	else if (skipped || rc == LB_EXIT_SKIPPED)
		run->status = RUN_SKIPPED;
	else if (snprintf(path, sizeof(path), "%s/summary.csv", run->dir) < 0 ||
		 lb_summary_read(path, &run->sum) < 0)
		run->status = RUN_FAILED;
	else
		run->status = RUN_RAN;
}

/* Judge test @t on the summary @s: 1 held, 0 broken, -1 not tested (a run
 * that shows nothing: inconclusive, cut short); what it saw in @saw. */
static int judge(const struct audit_test *t, const struct lb_summary *s, char *saw, size_t len)
{
	const char *observed = lb_summary_get(s, "observed");
	int cls = observed ? lb_class_parse(observed) : -1;

	if (cls < 0 || cls == LB_CLASS_INCONCLUSIVE || cls == LB_CLASS_INTERRUPTED) {
		const char *why = lb_summary_get(s, "observed_why");
		snprintf(saw, len, "the run is %.20s, it shows nothing to judge: %.400s",
			 observed ? observed : "without a class", why ? why : "");
		return -1;
	}
	if (t->holds) {
		struct lb_threshold th;
		char why[300];
		if (lb_threshold_parse(t->holds, &th, why, sizeof(why)) < 0)
			return 0;
		const char *value = lb_summary_value(s, th.column);
		enum lb_held held = lb_threshold_judge(&th, value, saw, len);
		size_t n = strlen(saw);
		snprintf(saw + n, len - n, " (observed %s)", observed ? observed : "?");
		if (!value || !strcmp(value, "n/a") || held == LB_UNDECIDED)
			return -1; /* not measured here (a consensus lock's foreign releases):
				      nothing to judge, neither held nor broken */
		return held == LB_HELD;
	}
	bool held = cls != t->not_class && cls != t->not_class2;
	snprintf(saw, len, "observed %s", observed ? observed : "no class");
	return held;
}

/* The run of @scenario, from the cache: run once, the first time a test
 * asks for it (after an interrupt, it is not started). */
static const struct audit_run *scenario_run(struct audit *a, const char *scenario)
{
	size_t k = 0;

	while (k < N_TESTS && a->runs[k].scenario && strcmp(a->runs[k].scenario, scenario))
		k++;
	struct audit_run *run = &a->runs[k]; /* N_TESTS slots: one a test at most */
	if (run->scenario)
		return run;
	run->scenario = scenario;
	if (lb_stop_requested()) {
		run->status = RUN_INTERRUPTED;
		return run;
	}
	lb_esc_fprintf(stdout, LB_LANG_TERM, "\n== %s under %s\n", a->s->name, scenario);
	run_scenario(a, run);
	return run;
}

/* Run every scenario the claims need (each once, the cache keyed by
 * scenario) and judge each test on its run's real status: ran (judged),
 * skipped or not applicable (not tested, and why), failed (-2: it said
 * why), interrupted (not tested). */
static void run_tests(struct audit *a)
{
	for (size_t i = 0; i < N_TESTS; i++) {
		a->verdict[i] = -1;
		if (!(a->claims & tests[i].claim))
			continue;
		if (a->unreachable) {
			snprintf(a->saw[i], sizeof(a->saw[i]), "your deployment could not be reached");
			continue;
		}
		const struct audit_run *run = a->run[i] = scenario_run(a, tests[i].scenario);
		switch (run->status) {
		case RUN_RAN:
			a->verdict[i] = judge(&tests[i], &run->sum, a->saw[i], sizeof(a->saw[i]));
			break;
		case RUN_NOT_APPLICABLE:
		case RUN_SKIPPED:
			snprintf(a->saw[i], sizeof(a->saw[i]), "%s", run->why);
			break;
		case RUN_UNREACHABLE: /* no other run would reach it either */
			a->verdict[i] = -2;
			a->unreachable = true;
			snprintf(a->saw[i], sizeof(a->saw[i]), "your deployment could not be reached "
				 "(lockbench said why above); the audit stopped there");
			break;
		case RUN_FAILED:
			a->verdict[i] = -2;
			snprintf(a->saw[i], sizeof(a->saw[i]), "the run failed (lockbench said why above)");
			break;
		default:
			snprintf(a->saw[i], sizeof(a->saw[i]), "the audit was interrupted");
			break;
		}
	}
}

/* A claim's verdict over its tests: a run that failed, else the first test
 * that broke it (not accepted), else the first accepted failure, else held if
 * one held, else not tested. -2 a run failed | -1 untested | 0 broken | 1
 * held | 2 broken only where accepted; @which: the test that decides. */
static int claim_verdict(const struct audit *a, unsigned bit, size_t *which)
{
	static const int rank[] = { 4, 0, 3, 1, 2 }; /* by verdict + 2 */
	int v = -1;

	*which = N_TESTS;
	for (size_t i = 0; i < N_TESTS; i++) {
		if (tests[i].claim != bit)
			continue;
		if (*which == N_TESTS)
			*which = i;
		int t = a->verdict[i] == 0 && a->accepted[i] >= 0 ? 2 : a->verdict[i];
		if (rank[t + 2] > rank[v + 2]) {
			*which = i;
			v = t;
		}
	}
	return v;
}

/* Did test @i break, as an accepted failure says it does? */
static bool accepted(const struct audit *a, size_t i)
{
	return a->verdict[i] == 0 && a->accepted[i] >= 0;
}

/* What the tests of claim @bit showed, one "; " apart, into @f: each test's
 * scenario, and, for a run that did not run, why. */
static void claim_detail(const struct audit *a, unsigned bit, FILE *f)
{
	bool first = true;

	for (size_t i = 0; i < N_TESTS; i++) {
		if (tests[i].claim != bit)
			continue;
		enum run_status st = a->run[i] ? a->run[i]->status : RUN_NONE;
		fprintf(f, "%s%s: %s%s", first ? "" : "; ", tests[i].scenario,
			st == RUN_SKIPPED ? "skipped: " : st == RUN_NOT_APPLICABLE ||
			st == RUN_INTERRUPTED ? "not run: " : "", a->saw[i]);
		if (accepted(a, i)) {
			const char *why = a->acc.a[a->accepted[i]].reason;
			fprintf(f, " [accepted%s%s]", why[0] ? ": " : "", why);
		}
		first = false;
	}
}

/* The wall-clock seconds of the runs that tested claim @bit, each run once
 * (a run serves every claim of its scenario). */
static double claim_seconds(const struct audit *a, unsigned bit)
{
	double s = 0;

	for (size_t i = 0; i < N_TESTS; i++) {
		size_t same = 0;
		while (same < i && (tests[same].claim != bit || a->run[same] != a->run[i]))
			same++;
		if (tests[i].claim == bit && a->run[i] && same == i)
			s += a->run[i]->seconds;
	}
	return s > 0 ? s : -1; /* no run: no time (JUnit leaves it out) */
}

/* Claim @c's JUnit case: its message says the deciding test, its text every
 * test and the deciding run's directory, whole (never cut); its time the
 * runs that tested it. */
static void claim_case(const struct audit *a, struct lb_junit *j, unsigned c, int v, size_t w,
		       bool fails, const char *detail)
{
	char name[64], *msg = NULL, *text = NULL;
	size_t len;
	FILE *f;

	snprintf(name, sizeof(name), "%c %s", "MDFOL"[c], lb_claim_name(c));
	if ((f = open_memstream(&msg, &len))) {
		if (v == 2)
			fprintf(f, "accepted: %s", detail);
		else
			fprintf(f, "%s%s: %s", v == -1 ? "skipped: " : "", w < N_TESTS ?
				tests[w].scenario : "-", w < N_TESTS ? a->saw[w] : "");
		fclose(f);
	}
	if ((f = open_memstream(&text, &len))) {
		bool has_dir = w < N_TESTS && a->run[w] && (a->run[w]->status == RUN_RAN ||
							    a->run[w]->status == RUN_FAILED);
		fprintf(f, "%s\n%s%s\n", detail, has_dir ? "run directory: " : "",
			has_dir ? a->run[w]->dir : "");
		fclose(f);
	}
	lb_junit_case(j, a->s->name, name, claim_seconds(a, 1u << c), fails ? LB_JUNIT_FAIL :
		      v == -1 ? LB_JUNIT_SKIPPED : LB_JUNIT_PASS, v == 1 ? "held" : msg ? msg :
		      "out of memory", text ? text : "out of memory");
	free(msg);
	free(text);
}

/* The accepted failures and what became of each, on the terminal and in
 * audit.md: one that held no longer fails, and is said so to be taken off
 * the list. */
static void accepted_list(struct audit *a, FILE *md)
{
	if (!a->acc.n)
		return;
	printf("accepted failures:\n");
	fprintf(md, "\nAccepted failures (--accept, --accept-file):\n\n");
	for (size_t i = 0; i < N_TESTS; i++) {
		if (a->accepted[i] < 0)
			continue;
		const struct lb_accept *x = &a->acc.a[a->accepted[i]];
		int v = a->verdict[i];
		const char *now = !(a->claims & tests[i].claim) ? "not audited (not a claim tested "
				  "here)" : v == 0 ? "fails, as accepted" : v == 1 ? "NO LONGER FAILS: "
				  "it held; take it off the list" : v == -2 ? "its run failed" :
				  "not tested here";
		a->no_longer += (a->claims & tests[i].claim) && v == 1;
		lb_esc_fprintf(stdout, LB_LANG_TERM, "  %c:%-20s %s (%s%s%s)\n", "MDFOL"[x->claim],
			       x->scenario, now, x->where, x->reason[0] ? ": " : "", x->reason);
		lb_esc_fprintf(md, LB_LANG_MD, "- %c:%s: %s (%s%s%s)\n", "MDFOL"[x->claim],
			       x->scenario, now, x->where, x->reason[0] ? ": " : "", x->reason);
	}
}

/* The card: the terminal, audit.md, and JUnit. Failed claims (broken, or
 * untested unless allowed). */
static int card(struct audit *a, FILE *md, struct lb_junit *j)
{
	int failed = 0;

	lb_esc_fprintf(stdout, LB_LANG_TERM, "\naudit of %s (claims from %s, seed %llu):\n",
		       a->s->name, a->claims_from, (unsigned long long)a->seed);
	lb_esc_fprintf(md, LB_LANG_MD, "# lockbench audit: %s\n\nEach claim %s makes (from %s), "
		       "tested by the scenarios that can break it, each run once (seed %llu).\n\n"
		       "| claim | what it promises | verdict | scenario: what the run showed |\n"
		       "|---|---|---|---|\n", a->s->name, a->s->name, a->claims_from,
		       (unsigned long long)a->seed);
	for (unsigned c = 0; c < LB_CLAIM_COUNT; c++) {
		if (!(a->claims & 1u << c))
			continue;
		size_t w, len;
		int v = claim_verdict(a, 1u << c, &w);
		const char *verdict = v == 2 ? "ACCEPTED" : v > 0 ? "held" : v == 0 ? "BROKEN" :
				      v == -2 ? "RUN FAILED" : "not tested";
		char *detail = NULL;
		FILE *f = open_memstream(&detail, &len);
		if (f) {
			claim_detail(a, 1u << c, f);
			fclose(f);
		}
		lb_esc_fprintf(stdout, LB_LANG_TERM, "  %c %-15s %-10s %s\n", "MDFOL"[c], lb_claim_name(c),
			       verdict, detail ? detail : "");
		lb_esc_fprintf(md, LB_LANG_MD, "| %c (%s) | %s | %s | %s |\n", "MDFOL"[c],
			       lb_claim_name(c), meaning[c], verdict, detail ? detail : "");
		bool fails = v == 0 || v == -2 || (v == -1 && !a->allow_skipped);
		failed += fails;
		a->count[v + 2]++;
		if (j)
			claim_case(a, j, c, v, w, fails, detail ? detail : "");
		free(detail);
	}
	if (j) { /* the suite's time: each run once, though it served several claims */
		j->seconds = 0;
		for (size_t k = 0; k < N_TESTS && a->runs[k].scenario; k++)
			j->seconds += a->runs[k].seconds;
	}
	accepted_list(a, md);
	fprintf(md, "\nThe runs are in the directories below, one a scenario.\n\n");
	return failed;
}

int lb_cmd_audit(int argc, char **argv)
{
	static struct audit a; /* the runs' directories: too large for the stack */
	struct lb_junit junit;
	struct lb_outfile md;
	int rc;

	memset(&a, 0, sizeof(a));
	if ((rc = parse(argc, argv, &a)) != 0)
		return rc > 0 ? LB_EXIT_OK : LB_EXIT_USAGE;
	if (resolve_accepts(&a) < 0)
		return LB_EXIT_USAGE;
	if ((rc = find_claims(&a)) < 0)
		return rc == LB_EINVAL ? LB_EXIT_USAGE : LB_EXIT_FAIL;
	if (!a.out[0])
		lb_default_out_dir("results/audit", a.s->name, a.out, sizeof(a.out));
	int rc_dir = lb_results_prepare_dir(a.out);
	if (rc_dir < 0)
		return rc_dir == LB_EINVAL ? LB_EXIT_USAGE : LB_EXIT_FAIL;
	run_tests(&a); /* what failed or was not run is on the card too */
	if (a.junit[0] && lb_junit_open(&junit, a.junit, "lockbench audit") < 0)
		return LB_EXIT_FAIL;
	if (lb_outfile_open(&md, a.out, "audit.md", true) < 0) {
		if (a.junit[0])
			lb_junit_close(&junit);
		return LB_EXIT_FAIL;
	}
	int failed = card(&a, md.f, a.junit[0] ? &junit : NULL);
	int exit_code = a.unreachable ? LB_EXIT_SKIPPED : failed ? LB_EXIT_FAIL : LB_EXIT_OK;
	if (lb_outfile_close(&md) < 0 || (a.junit[0] && lb_junit_close(&junit) < 0))
		exit_code = LB_EXIT_FAIL;
	if (!a.no_report && !lb_stop_requested() && lb_report_dir(a.out) < 0)
		exit_code = LB_EXIT_FAIL;
	char accepted[160] = "";
	if (a.acc.n)
		snprintf(accepted, sizeof(accepted), ", %d broken only as accepted (%d accepted "
			 "failure%s no longer fail%s)", a.count[4], a.no_longer, a.no_longer == 1 ? "" :
			 "s", a.no_longer == 1 ? "s" : "");
	lb_esc_fprintf(stdout, LB_LANG_TERM, "%s: %d held, %d broken%s, %d not tested%s, %d whose "
		       "run failed%s; the card in %s/audit.md%s\n", failed ? "FAILED" : "passed",
		       a.count[3], a.count[2], accepted, a.count[1], a.count[1] && a.allow_skipped ?
		       " (allowed)" : "", a.count[0], lb_stop_requested() ? " (interrupted)" : "",
		       a.out, a.no_report ? "" : " (and report.html)");
	return exit_code;
}
