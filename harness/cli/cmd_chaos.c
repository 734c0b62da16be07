/*
 * cmd_chaos.c - `lockbench chaos`: a probabilistic scenario run over K seeds
 * per strategy, reported as violation rates with 95% confidence intervals
 * (Wilson score interval; Wilson 1927), never as one run's verdict.
 *
 * Each seed draws its own faults (scenario [chaos]: holder kills, pauses, node
 * restarts at random moments), so a rate says how often a strategy breaks
 * under that mix, and the interval says how much K runs can tell. The
 * scenario's [expect] lines are read as "at worst": with --check, a strategy
 * whose worst run is more severe than its line fails.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "esc.h"
#include "commands.h"
#include "options.h"
#include "outfile.h"
#include "report.h"
#include "results.h"
#include "scenario.h"
#include "signals.h"

#define MAX_SEEDS 200

struct tally {
	const struct lock_strategy *s;
	int runs, overlap, lost, foreign, deadlock, unavailable, contained;
	int foreign_na;  /* runs whose foreign releases were not measured */
	int skipped;             /* seeds that could not run here */
	char why[512];           /* the reason of the last skip */
	int worst;               /* enum lb_class, by severity */
	long long lost_updates;  /* summed */
	int expected;            /* -1: none */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: lockbench chaos [--scenario NAME] [--strategies a,b] [--strategy NAME]\n"
		   "                       [--seeds K] [--seed N] [--check] [--allow-skipped]\n"
		   "                       [--out DIR] [--chart-scale X]\n\n"
		   "Runs a probabilistic scenario (chaos by default) K times (5) per strategy,\n"
		   "seeds N..N+K-1, each seed drawing its own faults, and reports per strategy the\n"
		   "share of runs with an overlap, a lost update, a foreign release and a\n"
		   "deadlock, each with a 95%% Wilson interval. --strategy takes one name whole\n"
		   "(an exec: path with a comma) and may repeat, beside --strategies' list;\n"
		   "without either, every strategy the scenario applies to. Writes\n"
		   "DIR/chaos.csv, chaos.md and chaos.png (default DIR: results/chaos/<UTC\n"
		   "time>). --check: exit 1 when a strategy's worst run is more severe than the\n"
		   "scenario's [expect] line, or when a seed could not run here (skipped, with\n"
		   "its reason) unless --allow-skipped.\n\n"
		   "Exit status: 0 done, 1 a check failed or a runtime failure, 2 usage, 130 or\n"
		   "143 interrupted (Ctrl-C, SIGTERM): the run cut short is not counted.\n");
}

/* 95% Wilson score interval of k successes in n. */
static void wilson(int k, int n, double *lo, double *hi)
{
	const double z = 1.959964;
	if (n == 0) {
		*lo = 0;
		*hi = 1;
		return;
	}
	double p = (double)k / n, z2n = z * z / n;
	double c = (p + z2n / 2) / (1 + z2n);
	double h = z * sqrt(p * (1 - p) / n + z2n / (4.0 * n)) / (1 + z2n);
	*lo = c - h < 0 ? 0 : c - h;
	*hi = c + h > 1 ? 1 : c + h;
}

static void rate(FILE *f, int k, int n)
{
	double lo, hi;
	wilson(k, n, &lo, &hi);
	fprintf(f, " %d/%d (%.0f–%.0f%%) |", k, n, 100 * lo, 100 * hi);
}

static int write_md(const char *out, const struct lb_scenario *sc, struct tally *t, size_t n,
		    int seeds, uint64_t seed, const char *cmdline)
{
	struct lb_outfile o;
	if (lb_outfile_open(&o, out, "chaos.md", true) < 0)
		return LB_ESYS;
	FILE *f = o.f;
	lb_esc_fprintf(f, LB_LANG_MD, "# %s: violation rates over %d seeds\n\n%s\n\n"
		       "Probabilistic: every seed draws its own faults, and timing varies between runs, "
		       "so these are rates with 95%% Wilson intervals, not verdicts. Seeds %llu to %llu; "
		       "reproduce with ", sc->name, seeds, sc->description, (unsigned long long)seed,
		       (unsigned long long)(seed + (uint64_t)seeds - 1));
	lb_md_code(f, cmdline);
	fprintf(f, ".\n\n"
		   "| strategy | runs with overlap | with lost updates | with foreign release | "
		   "deadlocked | contained | worst run | expected at worst |\n"
		   "|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < n; i++) {
		lb_esc_fprintf(f, LB_LANG_MD, "| %s |", t[i].s->name);
		rate(f, t[i].overlap, t[i].runs);
		rate(f, t[i].lost, t[i].runs);
		if (t[i].foreign_na) /* a rate of runs, some of which could not tell */
			fprintf(f, " n/a (%d of %d runs not measured) |", t[i].foreign_na, t[i].runs);
		else
			rate(f, t[i].foreign, t[i].runs);
		rate(f, t[i].deadlock, t[i].runs);
		rate(f, t[i].contained, t[i].runs);
		bool ok = t[i].expected < 0 ||
			  lb_class_severity((enum lb_class)t[i].worst) <=
			  lb_class_severity((enum lb_class)t[i].expected);
		fprintf(f, " %s | %s %s |\n", lb_class_name((enum lb_class)t[i].worst),
			t[i].expected >= 0 ? lb_class_name((enum lb_class)t[i].expected) : "-",
			t[i].expected < 0 ? "" : ok ? "✔" : "✘");
	}
	for (size_t i = 0; i < n; i++)
		if (t[i].skipped)
			lb_esc_fprintf(f, LB_LANG_MD, "\n⚠ %s: %d seed%s skipped (not counted, and not a "
				       "pass): %s\n", t[i].s->name, t[i].skipped,
				       t[i].skipped == 1 ? "" : "s", t[i].why);
	fprintf(f, "\n![violation rates](chaos.png)\n");
	return lb_outfile_close(&o);
}

/* Four bars per strategy, the same as chaos.md's columns: the share of runs
 * with an overlap, a lost update, a foreign release and a deadlock, each with
 * its interval. */
static int write_chart(const char *out, struct tally *t, size_t n, const char *title)
{
	static const char *const what[4] = { "overlap", "lost updates", "foreign release", "deadlock" };
	static const char *const colour[4] = { "#ee7733", "#cc3311", "#0077bb", "#555555" };
	struct lb_outfile od, og;
	if (lb_outfile_open(&od, out, "chaos.dat", true) < 0)
		return LB_ESYS;
	FILE *d = od.f;
	/* names are not data here: they reach gnuplot as the quoted tic labels of
	 * chaos.gp, so no byte of a name can split a column */
	fprintf(d, "# i then, for overlap, lost, foreign, deadlock: rate lo hi (NaN: no run); "
		   "the strategy of each i is in chaos.gp's xtics\n");
	for (size_t i = 0; i < n; i++) {
		const int hits[4] = { t[i].overlap, t[i].lost, t[i].foreign, t[i].deadlock };
		fprintf(d, "%zu", i);
		for (int k = 0; k < 4; k++) {
			double lo, hi;
			wilson(hits[k], t[i].runs, &lo, &hi);
			if (t[i].runs)
				fprintf(d, " %.4f %.4f %.4f", (double)hits[k] / t[i].runs, lo, hi);
			else
				fprintf(d, " NaN NaN NaN");
		}
		fprintf(d, "\n");
	}
	if (lb_outfile_close(&od) < 0 || lb_outfile_open(&og, out, "chaos.gp", true) < 0)
		return LB_ESYS;
	FILE *g = og.f;
	lb_chart_png(g, "chaos", (int)(300 + 120 * n), 440);
	char full[256];
	snprintf(full, sizeof(full), "%.120s: share of runs with each violation (95%% Wilson intervals)",
		 title);
	lb_esc_fprintf(g, LB_LANG_GNUPLOT, "set title %s\n", full);
	fprintf(g, "set yrange [0:1.05]\nset ylabel 'share of runs'\nset key outside top center horizontal\n"
		   "set style fill solid 0.8\nset boxwidth 0.18\nset xtics rotate by -30 left (");
	for (size_t i = 0; i < n; i++)
		lb_esc_fprintf(g, LB_LANG_GNUPLOT, i ? ", %s %zu" : "%s %zu", t[i].s->name, i);
	fprintf(g, ")\nset grid ytics\nset xrange [-0.6:%zu.6]\nplot ", n - 1);
	for (int k = 0; k < 4; k++) {
		double dx = -0.3 + 0.2 * k;
		int col = 2 + 3 * k;
		fprintf(g, "%s'chaos.dat' using ($1%+.2f):%d with boxes lc rgb '%s' title '%s', "
			   "'' using ($1%+.2f):%d:%d:%d with yerrorbars lc rgb 'black' pt -1 notitle",
			k ? ", \\\n     " : "", dx, col, colour[k], what[k], dx, col,
			col + 1, col + 2);
	}
	fprintf(g, "\n");
	if (lb_outfile_close(&og) < 0)
		return LB_ESYS;
	char why[400];
	if (lb_gnuplot(out, "chaos.gp", why, sizeof(why)) < 0)
		lb_errorf("%s/chaos.png was not drawn: %s (the figures are in chaos.md)", out, why);
	return 0;
}

struct chaos_opts {
	const char *sc_name;
	const struct lock_strategy *given[LB_MAX_STRATEGIES]; /* --strategies, --strategy */
	int n_given;
	char out[PATH_MAX - 300];
	int seeds;
	bool check, allow_skipped;
	uint64_t seed;
};

/* One strategy, its name whole (a name may hold a comma): 0 or -1 (said). */
static int add_one(struct chaos_opts *co, const char *name)
{
	const struct lock_strategy *st = lb_strategy_or_usage(name);

	if (!st)
		return -1;
	if (co->n_given == LB_MAX_STRATEGIES) {
		lb_errorf("more than %d strategies", LB_MAX_STRATEGIES);
		return -1;
	}
	co->given[co->n_given++] = st;
	return 0;
}

/* A comma list of strategies: 0 or -1 (said). */
static int add_list(struct chaos_opts *co, const char *list)
{
	char buf[1024];

	if (strlen(list) >= sizeof(buf)) {
		lb_errorf("--strategies: longer than %zu bytes", sizeof(buf) - 1);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	int added = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save), added++)
		if (add_one(co, t) < 0)
			return -1;
	if (!added) {
		lb_errorf("--strategies: empty list");
		return -1;
	}
	return 0;
}

/* The command line: 0, 1 after --help, or 2 (said). */
static int parse(int argc, char **argv, struct chaos_opts *co)
{
	static const struct option opts[] = {
		{ "scenario", required_argument, NULL, 'S' }, { "strategies", required_argument, NULL, 's' },
		{ "seeds", required_argument, NULL, 'k' }, { "seed", required_argument, NULL, 'n' },
		{ "check", no_argument, NULL, 'c' }, { "out", required_argument, NULL, 'o' },
		{ "allow-skipped", no_argument, NULL, 'a' }, { "chart-scale", required_argument, NULL, 'x' },
		{ "strategy", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int64_t v;
	int opt;

	*co = (struct chaos_opts){ .sc_name = "chaos", .seeds = 5, .seed = 1 };
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'S': co->sc_name = optarg; break;
		case 'x':
			if (lb_chart_scale_arg(optarg) < 0)
				return 2;
			break;
		case 's':
			if (add_list(co, optarg) < 0)
				return 2;
			break;
		case 't':
			if (add_one(co, optarg) < 0)
				return 2;
			break;
		case 'k':
			if (!lb_parse_i64(optarg, 1, MAX_SEEDS, &v)) {
				lb_errorf("--seeds '%s': expected 1 to %d", optarg, MAX_SEEDS);
				return 2;
			}
			co->seeds = (int)v;
			break;
		case 'n':
			if (!lb_parse_i64(optarg, 0, INT64_MAX, &v)) {
				lb_errorf("--seed '%s': expected a non-negative integer", optarg);
				return 2;
			}
			co->seed = (uint64_t)v;
			break;
		case 'c': co->check = true; break;
		case 'a': co->allow_skipped = true; break;
		case 'o':
			if (!lb_dir_arg_ok("--out", optarg))
				return 2;
			snprintf(co->out, sizeof(co->out), "%s", optarg);
			break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		lb_errorf("unexpected argument '%s'", argv[optind]);
		return 2;
	}
	return 0;
}

/* The strategies: those given (--strategies, --strategy), each one the
 * scenario applies to (else a usage error, as run says it: -1), or every one
 * it applies to; how many. */
static int pick(const struct chaos_opts *co, const struct lb_scenario *sc, struct tally *t)
{
	int n = 0;
	char why[400];

	for (int i = 0; i < co->n_given; i++) {
		if (lb_scenario_why_not(sc, co->given[i]->name, why, sizeof(why))) {
			lb_errorf("%s", why);
			return -1;
		}
		t[n++] = (struct tally){ .s = co->given[i] };
	}
	for (size_t i = 0; !co->n_given && i < lb_strategy_count() && n < LB_MAX_STRATEGIES; i++)
		if (lb_scenario_applies(sc, lb_strategy_at(i)->name))
			t[n++] = (struct tally){ .s = lb_strategy_at(i) };
	return n;
}

/* A run's row in chaos.csv, counted into its strategy's tally. */
static void tally_run(struct tally *x, FILE *csv, const struct lb_run_cfg *cfg,
		      const struct lb_run_result *res)
{
	const struct lb_verdict *vd = &res->verdict;
	char foreign[24];

	x->runs++;
	x->overlap += vd->overlaps > 0;
	x->lost += res->lost_updates > 0;
	x->foreign += vd->foreign_releases > 0;
	x->foreign_na += vd->foreign_source == LB_FOREIGN_NA;
	lb_foreign_text(vd, foreign, sizeof(foreign));
	x->deadlock += vd->recovered == LB_REC_NO;
	x->contained += res->observed == LB_CLASS_CONTAINED;
	x->lost_updates += res->lost_updates;
	if (x->runs == 1 || lb_class_severity(res->observed) >
			    lb_class_severity((enum lb_class)x->worst))
		x->worst = (int)res->observed;
	lb_esc_fprintf(csv, LB_LANG_CSV, "%s,%llu,%s,%llu,%lld,%s,%s,%llu,%llu,%llu,%zu,%s\n",
		       x->s->name, (unsigned long long)cfg->seed, lb_class_name(res->observed),
		       (unsigned long long)vd->overlaps, res->lost_updates, foreign,
		       lb_recovered_name(vd->recovered),
		       (unsigned long long)res->stale_writes_rejected,
		       (unsigned long long)res->writes_aborted,
		       (unsigned long long)res->acquire_errors, res->n_events, cfg->out_dir);
	fflush(csv);
	lb_esc_fprintf(stdout, LB_LANG_TERM, "  %-14s seed %-4llu %s\n", x->s->name,
		       (unsigned long long)cfg->seed, lb_class_name(res->observed));
	fflush(stdout);
}

/* One strategy under one seed, into @out/<strategy>/<seed>: 0 or an error. */
static int run_seed(struct tally *x, FILE *csv, const struct lb_scenario *sc, const char *out,
		    uint64_t seed)
{
	struct lb_run_opts o;
	struct lb_run_result res = { 0 };
	struct lb_summary sum;
	char *av[] = { "chaos", NULL };
	char one_seed[24], word[72];
	int rc;

	lb_run_opts_parse(1, av, LB_OPTS_RUN_DEFAULTS, &o);
	o.cfg.strategy = x->s;
	o.cfg.seed = seed;
	o.cfg.status_line = false;
	o.cfg.no_report = true;
	lb_run_opts_apply_scenario(&o, sc);
	snprintf(one_seed, sizeof(one_seed), "%llu", (unsigned long long)seed);
	char *run_words[] = { "run", "--scenario", (char *)lb_scenario_arg(sc), "--strategy",
			      (char *)x->s->name, "--seed", one_seed };
	lb_sh_cmdline(o.cfg.cmdline, sizeof(o.cfg.cmdline), "lockbench", 7, run_words);
	lb_path_word(x->s->name, word, sizeof(word));
	snprintf(o.cfg.out_dir, sizeof(o.cfg.out_dir), "%.3000s/%s/%llu", out, word,
		 (unsigned long long)seed);
	if ((rc = lb_results_prepare_dir(o.cfg.out_dir)) < 0 || (rc = lb_run(&o.cfg, &res)) < 0) {
		lb_run_result_free(&res);
		return rc;
	}
	if (res.skipped[0]) { /* never counted as a run, never as a pass */
		x->skipped++;
		snprintf(x->why, sizeof(x->why), "%s", res.skipped);
		lb_esc_fprintf(csv, LB_LANG_CSV, "%s,%llu,skipped,,,,,,,,,%s\n", x->s->name,
			       (unsigned long long)seed, o.cfg.out_dir);
		fflush(csv);
		lb_esc_fprintf(stdout, LB_LANG_TERM, "  %-14s seed %-4llu SKIPPED: %s\n",
			       x->s->name, (unsigned long long)seed, res.skipped);
	} else {
		lb_summary_build(&o.cfg, &res, &sum);
		rc = lb_results_write(&o.cfg, &res, &sum);
		if (res.observed == LB_CLASS_INTERRUPTED) { /* cut short: not counted */
			lb_esc_fprintf(csv, LB_LANG_CSV, "%s,%llu,interrupted,,,,,,,,,%s\n",
				       x->s->name, (unsigned long long)seed, o.cfg.out_dir);
			lb_esc_fprintf(stdout, LB_LANG_TERM, "  %-14s seed %-4llu interrupted (not "
				       "counted)\n", x->s->name, (unsigned long long)seed);
		} else {
			tally_run(x, csv, &o.cfg, &res);
		}
	}
	lb_run_result_free(&res);
	return rc;
}

/* The table on the terminal; how many strategies did worse than expected,
 * and into *@skipped how many runs were skipped. */
static int print_table(const struct tally *t, size_t n, int *skipped)
{
	int worse = 0;

	*skipped = 0;
	printf("\n%-24s %-22s %-22s %-16s %s\n", "strategy", "overlap", "lost updates", "worst",
	       "expected at worst");
	for (size_t i = 0; i < n; i++) {
		double a, b, c, e;
		char o1[32], o2[32];
		*skipped += t[i].skipped;
		if (t[i].skipped)
			lb_esc_fprintf(stdout, LB_LANG_TERM, "%-24s %d seed%s skipped: %s\n", t[i].s->name,
				       t[i].skipped, t[i].skipped == 1 ? "" : "s", t[i].why);
		if (!t[i].runs)
			continue;
		wilson(t[i].overlap, t[i].runs, &a, &b);
		wilson(t[i].lost, t[i].runs, &c, &e);
		snprintf(o1, sizeof(o1), "%d/%d [%.0f-%.0f%%]", t[i].overlap, t[i].runs, 100 * a, 100 * b);
		snprintf(o2, sizeof(o2), "%d/%d [%.0f-%.0f%%]", t[i].lost, t[i].runs, 100 * c, 100 * e);
		bool bad = t[i].expected >= 0 && lb_class_severity((enum lb_class)t[i].worst) >
						  lb_class_severity((enum lb_class)t[i].expected);
		worse += bad;
		lb_esc_fprintf(stdout, LB_LANG_TERM, "%-24s %-22s %-22s %-16s %s%s\n", t[i].s->name, o1, o2,
		       lb_class_name((enum lb_class)t[i].worst),
		       t[i].expected >= 0 ? lb_class_name((enum lb_class)t[i].expected) : "-",
		       bad ? "  WORSE" : "");
	}
	return worse;
}

/* Every strategy under every seed, a row of chaos.csv (@csv_out, closed
 * here) as each ends: 0 or an error. */
static int run_all(struct lb_outfile *csv_out, const struct chaos_opts *co,
		   const struct lb_scenario *sc, struct tally *t, size_t n)
{
	int rc = 0;

	fprintf(csv_out->f, "strategy,seed,observed,overlaps,lost_updates,foreign_releases,recovered,"
			    "stale_writes_rejected,writes_aborted,acquire_errors,faults_fired,dir\n");
	for (size_t i = 0; i < n && rc == 0 && !lb_stop_requested(); i++) {
		t[i].expected = lb_scenario_expected(sc, t[i].s->name);
		for (int k = 0; k < co->seeds && rc == 0 && !lb_stop_requested(); k++)
			rc = run_seed(&t[i], csv_out->f, sc, co->out, co->seed + (uint64_t)k);
	}
	if (lb_outfile_close(csv_out) < 0 && rc == 0)
		rc = LB_ESYS;
	return rc;
}

static int chaos(struct chaos_opts *co, struct lb_scenario *sc)
{
	struct tally t[LB_MAX_STRATEGIES];
	char cmdline[4096], seeds_text[16], seed_text[24];
	int n, skipped;

	if (lb_scenario_load(co->sc_name, sc) < 0)
		return 2;
	if ((n = pick(co, sc, t)) < 0)
		return 2; /* a strategy the scenario leaves out, said */
	if (!co->out[0]) {
		char when[32];
		time_t now = time(NULL);
		strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", gmtime(&now));
		snprintf(co->out, sizeof(co->out), "results/chaos/%s", when);
	}
	snprintf(seeds_text, sizeof(seeds_text), "%d", co->seeds);
	snprintf(seed_text, sizeof(seed_text), "%llu", (unsigned long long)co->seed);
	/* the command that repeats it: the strategies given, each whole */
	char *words[7 + 2 * LB_MAX_STRATEGIES] = { "chaos", "--scenario", (char *)lb_scenario_arg(sc),
						   "--seeds", seeds_text, "--seed", seed_text };
	int n_words = 7;
	for (int i = 0; i < co->n_given; i++) {
		words[n_words++] = "--strategy";
		words[n_words++] = (char *)co->given[i]->name;
	}
	lb_sh_cmdline(cmdline, sizeof(cmdline), "lockbench", n_words, words);
	struct lb_outfile csv_out; /* in place: an interrupted run keeps its rows */
	int rc_dir = lb_results_prepare_dir(co->out);
	if (rc_dir < 0)
		return rc_dir == LB_EINVAL ? LB_EXIT_USAGE : LB_EXIT_FAIL;
	if (lb_outfile_open(&csv_out, co->out, "chaos.csv", false) < 0)
		return 1;
	int rc = run_all(&csv_out, co, sc, t, (size_t)n);
	int worse = print_table(t, (size_t)n, &skipped);
	if (rc == 0)
		rc = write_md(co->out, sc, t, (size_t)n, co->seeds, co->seed, cmdline);
	if (rc == 0 && n > 0)
		write_chart(co->out, t, (size_t)n, sc->name);
	lb_esc_fprintf(stdout, LB_LANG_TERM, "\nrates and intervals in %s/chaos.md\n", co->out);
	if (rc < 0)
		return 1;
	if (co->check && skipped && !co->allow_skipped) {
		printf("--check fails: %d run%s did not happen (skipped is never passed; "
		       "--allow-skipped accepts it)\n", skipped, skipped == 1 ? "" : "s");
		return 1;
	}
	return co->check && worse ? 1 : 0;
}

int lb_cmd_chaos(int argc, char **argv)
{
	struct chaos_opts co;
	int rc = parse(argc, argv, &co);

	if (rc)
		return rc == 1 ? 0 : rc;
	struct lb_scenario *sc = malloc(sizeof(*sc));
	if (!sc)
		return 1;
	rc = chaos(&co, sc);
	free(sc);
	return rc;
}
