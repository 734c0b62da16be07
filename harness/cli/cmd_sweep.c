/*
 * cmd_sweep.c - `lockbench sweep --vary clients=1,2,4,8`: the same load for
 * each strategy at each value of one parameter, each point on fresh servers;
 * sweep.csv and charts of throughput, p99 acquire latency, commands per
 * section and violations against the varied parameter, one line per strategy.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "esc.h"
#include "commands.h"
#include "options.h"
#include "outfile.h"
#include "report.h"
#include "results.h"
#include "signals.h"

/* A point's row of sweep.csv and its line on the terminal. */
static void point_row(FILE *csv, const struct lb_run_opts *o, int k, const struct lb_run_cfg *cfg,
		      const struct lb_run_result *res, const struct lb_summary *sum, int done,
		      int total)
{
	const struct lb_verdict *v = &res->verdict;
	char foreign[24], p99[48];

	lb_foreign_text(v, foreign, sizeof(foreign)); /* n/a, never 0, when not measured */
	lb_esc_fprintf(csv, LB_LANG_CSV,
		       "%s,%s,%lld,%llu,%.2f,%s,%s,%s,%llu,%lld,%s,%s,%llu,%llu,%s,%s,%s\n",
		       cfg->strategy->name, o->vary_name, (long long)o->vary[k],
		       (unsigned long long)v->sections, res->throughput_per_s,
		       /* the summary's: waits that never entered count, at their length
			* (acquire_lower_bounds names the figures that are then lower
			* bounds) */
		       lb_summary_get(sum, "acquire_p50_us"), lb_summary_get(sum, "acquire_p99_us"),
		       lb_summary_get(sum, "cmds_per_section"), /* n/a: not countable */
		       (unsigned long long)v->overlaps, res->lost_updates,
		       foreign, lb_summary_get(sum, "fairness"), /* n/a: nobody entered */
		       (unsigned long long)res->client_rss_kb, (unsigned long long)cfg->seed,
		       cfg->out_dir, lb_summary_get(sum, "split_brain_ms"),
		       lb_summary_get(sum, "acquire_lower_bounds"));
	fflush(csv);
	lb_acquire_text(res, 0.99, p99, sizeof(p99));
	/* the summary's text, n/a included: a count that could not be made is
	 * never printed as a number */
	lb_esc_fprintf(stdout, LB_LANG_TERM, "[%d/%d] %-13s %s=%-6lld %9.1f sections/s  "
		       "p99 %11s  %6s cmds/section  %llu overlaps\n", done, total,
		       cfg->strategy->name, o->vary_name, (long long)o->vary[k],
		       res->throughput_per_s, p99, lb_summary_get(sum, "cmds_per_section"),
		       (unsigned long long)v->overlaps);
	fflush(stdout);
}

/* Strategy @i at value @k, into its own directory under @base; what the
 * sweep's exit status becomes (@exit_code, or worse: a failure, then a skip). */
static int point(const struct lb_run_opts *o, size_t i, int k, const char *base, FILE *csv,
		 int *done, int total, int exit_code)
{
	struct lb_run_cfg cfg = o->cfg;
	struct lb_run_result res = { 0 };
	struct lb_summary sum;
	char word[72];

	cfg.strategy = o->strategies[i];
	cfg.status_line = false;
	lb_run_cfg_set(&cfg, o->vary_name, o->vary[k]);
	lb_path_word(cfg.strategy->name, word, sizeof(word));
	snprintf(cfg.out_dir, sizeof(cfg.out_dir), "%.3800s/%s/%s=%lld", base, word, o->vary_name,
		 (long long)o->vary[k]);
	if (lb_results_prepare_dir(cfg.out_dir) < 0 || lb_run(&cfg, &res) < 0) {
		lb_run_result_free(&res);
		return LB_EXIT_FAIL;
	}
	if (res.skipped[0]) {
		lb_esc_fprintf(stdout, LB_LANG_TERM, "[%d/%d] %-13s %s=%-6lld SKIPPED: %s\n",
			       ++*done, total, cfg.strategy->name, o->vary_name,
			       (long long)o->vary[k], res.skipped);
		lb_run_result_free(&res);
		/* a failure stays the sweep's status: a later skip does not hide it */
		return cfg.allow_skipped || exit_code == LB_EXIT_FAIL ? exit_code : LB_EXIT_SKIPPED;
	}
	lb_summary_build(&cfg, &res, &sum);
	if (lb_results_write(&cfg, &res, &sum) < 0)
		exit_code = LB_EXIT_FAIL;
	if (res.interrupted) /* a shorter run: not a point of the sweep */
		lb_esc_fprintf(stdout, LB_LANG_TERM, "[%d/%d] %-13s %s=%-6lld interrupted: not "
			       "in sweep.csv (%s)\n", ++*done, total, cfg.strategy->name,
			       o->vary_name, (long long)o->vary[k], cfg.out_dir);
	else
		point_row(csv, o, k, &cfg, &res, &sum, ++*done, total);
	lb_run_result_free(&res);
	return exit_code;
}

int lb_cmd_sweep(int argc, char **argv)
{
	struct lb_run_opts o;
	char base[PATH_MAX - 256];
	int rc = lb_run_opts_parse(argc, argv, LB_OPTS_SWEEP, &o);
	int exit_code = LB_EXIT_OK, done = 0;

	if (rc != 0)
		return rc > 0 ? LB_EXIT_OK : LB_EXIT_USAGE;
	if (o.out_given) {
		snprintf(base, sizeof(base), "%.3800s", o.cfg.out_dir);
	} else {
		char when[32];
		time_t now = time(NULL);
		strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", gmtime(&now));
		snprintf(base, sizeof(base), "results/sweeps/%s-%s", when, o.vary_name);
	}
	int rc_dir = lb_results_prepare_dir(base);
	if (rc_dir < 0)
		return rc_dir == LB_EINVAL ? LB_EXIT_USAGE : LB_EXIT_FAIL;
	struct lb_outfile out; /* in place: an interrupted sweep keeps its rows */
	if (lb_outfile_open(&out, base, "sweep.csv", false) < 0)
		return LB_EXIT_FAIL;
	fprintf(out.f, "strategy,param,value,sections,throughput_per_s,acquire_p50_us,acquire_p99_us,"
		       "cmds_per_section,overlaps,lost_updates,foreign_releases,fairness,client_rss_kb,seed,dir,"
		       "split_brain_ms,acquire_lower_bounds\n");
	int total = (int)o.n_strategies * o.n_vary;
	for (size_t i = 0; i < o.n_strategies && !lb_stop_requested(); i++)
		for (int k = 0; k < o.n_vary && !lb_stop_requested(); k++)
			exit_code = point(&o, i, k, base, out.f, &done, total, exit_code);
	if (lb_outfile_close(&out) < 0)
		exit_code = LB_EXIT_FAIL;
	lb_esc_fprintf(stdout, LB_LANG_TERM, "sweep in %s/sweep.csv\n", base);
	if (!o.cfg.no_report) {
		if (lb_report_dir(base) < 0)
			return LB_EXIT_FAIL;
		lb_esc_fprintf(stdout, LB_LANG_TERM, "report in %s/report.md (in a browser: %s/report.html)\n",
			       base, base);
	}
	return exit_code;
}
