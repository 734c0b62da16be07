/*
 * cmd_compare.c - `lockbench compare`: the same load for several strategies,
 * one after another, each on fresh servers, and one table side by side.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esc.h"
#include "commands.h"
#include "faults.h"
#include "metrics.h"
#include "options.h"
#include "outfile.h"
#include "report.h"
#include "results.h"
#include "signals.h"

/* An acquire figure of @s (@tag: p50, p99) in microseconds, as milliseconds,
 * ">=" before it when a wait that never entered makes it a lower bound
 * (acquire_lower_bounds), or n/a. */
static void ms(const struct lb_summary *s, const char *tag, char *buf, size_t len)
{
	char name[32];
	snprintf(name, sizeof(name), "acquire_%s_us", tag);
	const char *v = lb_summary_get(s, name), *lower = lb_summary_get(s, "acquire_lower_bounds");
	bool bound = false;
	for (const char *p = lower; p && (p = strstr(p, tag)); p += strlen(tag))
		bound |= (p == lower || p[-1] == ';') && (p[strlen(tag)] == ';' || !p[strlen(tag)]);

	if (v && strcmp(v, "n/a"))
		snprintf(buf, len, "%s%.2f", bound ? ">=" : "", strtod(v, NULL) / 1000.0);
	else
		snprintf(buf, len, "n/a");
}

static const char *val(const struct lb_summary *s, const char *name)
{
	const char *v = lb_summary_get(s, name);
	return v ? v : "?";
}

/* One run's row, from the summary.csv it wrote: the table says what the
 * files say, n/a included. */
static void row(FILE *f, int width, const char *name, const char *dir)
{
	char path[PATH_MAX], p50[32], p99[32], outcome[96];
	struct lb_summary s;

	snprintf(path, sizeof(path), "%.4000s/summary.csv", dir);
	if (lb_summary_read(path, &s) < 0) {
		fprintf(f, "%-*s no summary.csv to show (above)\n", width, name);
		return;
	}
	ms(&s, "p50", p50, sizeof(p50));
	ms(&s, "p99", p99, sizeof(p99));
	const char *rate = val(&s, "lock_cmds_per_held_s"), *bound = val(&s, "lock_cmds_bound_per_s");
	snprintf(outcome, sizeof(outcome), "%s", val(&s, "observed"));
	if (strcmp(rate, "n/a") && strcmp(bound, "n/a") &&
	    lb_lock_cost_flagged(strtod(rate, NULL), strtod(bound, NULL)))
		snprintf(outcome + strlen(outcome), sizeof(outcome) - strlen(outcome),
			 "; traffic %.0fx the bound", strtod(rate, NULL) / strtod(bound, NULL));
	fprintf(f, "%-*s %9s %9s %8s %8s %9s %10s %8s %8s %8s %8s %8s %6s %6s  %s\n", width, name,
		val(&s, "sections"), val(&s, "throughput_per_s"), p50, p99, val(&s, "cmds_per_section"),
		rate, val(&s, "overlaps"), val(&s, "lost_updates"), val(&s, "stale_writes_rejected"),
		val(&s, "writes_aborted"), val(&s, "foreign_releases"), val(&s, "lost_leases"),
		val(&s, "fairness"), outcome);
}

static void header(FILE *f, int width)
{
	fprintf(f, "%-*s %9s %9s %8s %8s %9s %10s %8s %8s %8s %8s %8s %6s %6s  %s\n", width,
		"strategy", "sections", "per sec", "p50 ms", "p99 ms", "cmd/sect", "cmd/s held",
		"overlaps", "lost-upd", "refused", "aborted", "foreign", "lost", "fair", "outcome");
}

int lb_cmd_compare(int argc, char **argv)
{
	struct lb_run_opts o;
	char base[PATH_MAX - 64], table_path[PATH_MAX];
	int rc = lb_run_opts_parse(argc, argv, LB_OPTS_COMPARE, &o);
	int exit_code = LB_EXIT_OK, reported = 0; /* runs with a report of their own */

	if (rc != 0)
		return rc > 0 ? LB_EXIT_OK : LB_EXIT_USAGE;
	for (size_t i = 0; i < o.n_strategies; i++) { /* every run fits, before any starts */
		struct lb_run_cfg one = o.cfg;
		one.strategy = o.strategies[i];
		if (lb_scenario_fits(&one) < 0)
			return LB_EXIT_USAGE;
	}
	if (o.out_given)
		snprintf(base, sizeof(base), "%.3900s", o.cfg.out_dir);
	else
		lb_default_out_dir("results/runs", "compare", base, sizeof(base));
	if (o.junit_path[0] && !strcmp(o.junit_path, base)) {
		lb_errorf("--junit %s is the comparison's directory (--out): name a file beside it",
			  o.junit_path);
		return LB_EXIT_USAGE;
	}
	int rc_dir = lb_results_prepare_dir(base);
	if (rc_dir < 0)
		return rc_dir == LB_EINVAL ? LB_EXIT_USAGE : LB_EXIT_FAIL;
	struct lb_outfile out;
	if (lb_outfile_open(&out, base, "compare.txt", true) < 0)
		return LB_EXIT_FAIL;
	FILE *table = out.f;
	snprintf(table_path, sizeof(table_path), "%s", out.path);
	struct lb_junit junit;
	if (o.junit_path[0]) {
		if (lb_junit_open(&junit, o.junit_path, "lockbench compare") < 0) {
			lb_outfile_abort(&out);
			return LB_EXIT_FAIL;
		}
		o.gate.junit = &junit;
	}
	int width = 8; /* the longest name as shown: no column slips */
	char shown[1024]; /* a name as the table shows it: one line, no control byte */
	for (size_t i = 0; i < o.n_strategies; i++) {
		int w = lb_esc_snprintf(shown, sizeof(shown), LB_LANG_TERM, "%s", o.strategies[i]->name);
		width = w > width && w < (int)sizeof(shown) ? w : width;
	}
	header(table, width);
	for (size_t i = 0; i < o.n_strategies && !lb_stop_requested(); i++) {
		struct lb_run_cfg cfg = o.cfg;
		struct lb_run_result res = { 0 };

		cfg.strategy = o.strategies[i];
		cfg.status_line = cfg.status_line && isatty(STDOUT_FILENO);
		char word[72];
		lb_path_word(cfg.strategy->name, word, sizeof(word));
		snprintf(cfg.out_dir, sizeof(cfg.out_dir), "%.3900s/%s", base, word);
		int rc_one = lb_run_and_report(&cfg, &res, &o.gate, false);
		lb_esc_snprintf(shown, sizeof(shown), LB_LANG_TERM, "%s", cfg.strategy->name);
		if (rc_one == LB_EXIT_SKIPPED) {
			lb_esc_fprintf(table, LB_LANG_TERM, "%-*s %s: %s\n", width, shown,
				       res.skipped[0] ? "skipped" : "could not run",
				       res.skipped[0] ? res.skipped : "(above)");
			if (exit_code == LB_EXIT_OK)
				exit_code = LB_EXIT_SKIPPED;
		} else if (rc_one != LB_EXIT_OK && rc_one != LB_EXIT_NOT_HELD &&
			   rc_one != LB_EXIT_INCONCLUSIVE) {
			exit_code = LB_EXIT_FAIL;
			fprintf(table, "%-*s failed (above)\n", width, shown);
		} else if (res.skipped[0]) { /* --allow-skipped */
			lb_esc_fprintf(table, LB_LANG_TERM, "%-*s skipped: %s\n", width, shown, res.skipped);
		} else if (res.interrupted) { /* a shorter run: its figures compare with nothing */
			lb_esc_fprintf(table, LB_LANG_TERM, "%-*s interrupted after %.1f s: not compared (%s)\n",
				       width, shown, res.elapsed_s, cfg.out_dir);
		} else {
			row(table, width, shown, cfg.out_dir);
			reported += !cfg.no_report;
		}
		if (rc_one == LB_EXIT_NOT_HELD) /* a result, and a failed condition */
			exit_code = LB_EXIT_FAIL;
		if (rc_one == LB_EXIT_INCONCLUSIVE && exit_code == LB_EXIT_OK)
			exit_code = LB_EXIT_INCONCLUSIVE; /* a result, a condition undecided */
		lb_run_result_free(&res);
		printf("\n");
	}
	if (lb_outfile_close(&out) < 0)
		exit_code = LB_EXIT_FAIL;
	if (o.gate.junit && lb_junit_close(&junit) < 0)
		exit_code = LB_EXIT_FAIL;
	printf("Side by side (%d clients, %g s each, ttl %lld ms, same seed %llu):\n\n",
	       o.cfg.clients, o.cfg.duration_s, (long long)o.cfg.ttl_ms,
	       (unsigned long long)o.cfg.seed);
	FILE *in = fopen(table_path, "r");
	char line[4096];
	while (in && fgets(line, sizeof(line), in))
		fputs(line, stdout);
	if (in)
		fclose(in);
	lb_esc_fprintf(stdout, LB_LANG_TERM, "\ntable in %s\n", table_path);
	/* an index of the runs in the order given, with the table */
	if (reported > 0 && !lb_stop_requested()) { /* none ran: nothing to index */
		if (lb_report_dir(base) < 0)
			exit_code = LB_EXIT_FAIL;
		else
			lb_esc_fprintf(stdout, LB_LANG_TERM, "report: %s/report.md\nin a browser: %s/report.html\n",
				       base, base);
	}
	return exit_code;
}
