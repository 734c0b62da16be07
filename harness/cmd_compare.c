/*
 * cmd_compare.c - `lockbench compare`: the same load for several strategies,
 * one after another, each on fresh servers, and one table side by side.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "options.h"
#include "outfile.h"
#include "report.h"
#include "results.h"
#include "signals.h"

/* An acquire figure in ms, 9 wide; ">=" when it is a lower bound (results.h). */
static const char *acquire_ms(const struct lb_run_result *r, double q, char *buf, size_t len)
{
	bool lower;
	double ms = lb_acquire_quantile_us(r, q, &lower) / 1000.0;
	snprintf(buf, len, "%s%.2f", lower ? ">=" : "", ms);
	return buf;
}

static void row(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *r)
{
	const struct lb_verdict *v = &r->verdict;
	char p50[32], p99[32];

	fprintf(f, "%-13s %9llu %9.1f %9s %9s %8.2f %8llu %8lld %8llu %6llu %6.3f\n",
		cfg->strategy->name, (unsigned long long)v->sections, r->throughput_per_s,
		acquire_ms(r, 0.5, p50, sizeof(p50)), acquire_ms(r, 0.99, p99, sizeof(p99)),
		r->cmds_per_section,
		(unsigned long long)v->overlaps, r->lost_updates,
		(unsigned long long)v->foreign_releases, (unsigned long long)v->lost_leases,
		v->fairness);
}

static const char header[] =
	"strategy       sections   per sec   p50 ms    p99 ms  cmd/sect overlaps lost-upd  foreign   lost   fair\n";

int lb_cmd_compare(int argc, char **argv)
{
	struct lb_run_opts o;
	char base[PATH_MAX - 64], table_path[PATH_MAX];
	int rc = lb_run_opts_parse(argc, argv, LB_OPTS_COMPARE, &o);
	int exit_code = LB_EXIT_OK, reported = 0; /* runs with a report of their own */

	if (rc != 0)
		return rc > 0 ? LB_EXIT_OK : LB_EXIT_USAGE;
	if (o.out_given)
		snprintf(base, sizeof(base), "%.3900s", o.cfg.out_dir);
	else
		lb_default_out_dir("results/runs", "compare", base, sizeof(base));
	if (lb_results_prepare_dir(base) < 0)
		return LB_EXIT_FAIL;
	struct lb_outfile out;
	if (lb_outfile_open(&out, base, "compare.txt", true) < 0)
		return LB_EXIT_FAIL;
	FILE *table = out.f;
	snprintf(table_path, sizeof(table_path), "%s", out.path);
	fputs(header, table);
	for (size_t i = 0; i < o.n_strategies && !lb_stop_requested(); i++) {
		struct lb_run_cfg cfg = o.cfg;
		struct lb_run_result res = { 0 };

		cfg.strategy = o.strategies[i];
		cfg.status_line = cfg.status_line && isatty(STDOUT_FILENO);
		snprintf(cfg.out_dir, sizeof(cfg.out_dir), "%.3900s/%.60s", base, cfg.strategy->name);
		int rc_one = lb_run_and_report(&cfg, &res);
		if (rc_one == LB_EXIT_SKIPPED) {
			fprintf(table, "%-16s skipped: %s\n", cfg.strategy->name, res.skipped);
			if (exit_code == LB_EXIT_OK)
				exit_code = LB_EXIT_SKIPPED;
		} else if (rc_one != LB_EXIT_OK) {
			exit_code = LB_EXIT_FAIL;
		} else if (res.skipped[0]) { /* --allow-skipped */
			fprintf(table, "%-16s skipped: %s\n", cfg.strategy->name, res.skipped);
		} else if (res.interrupted) { /* a shorter run: its figures compare with nothing */
			fprintf(table, "%-16s interrupted after %.1f s: not compared (%s)\n",
				cfg.strategy->name, res.elapsed_s, cfg.out_dir);
		} else {
			row(table, &cfg, &res);
			reported += !cfg.no_report;
		}
		lb_run_result_free(&res);
		printf("\n");
	}
	if (lb_outfile_close(&out) < 0)
		exit_code = LB_EXIT_FAIL;
	printf("Side by side (%d clients, %g s each, ttl %lld ms, same seed %llu):\n\n",
	       o.cfg.clients, o.cfg.duration_s, (long long)o.cfg.ttl_ms,
	       (unsigned long long)o.cfg.seed);
	FILE *in = fopen(table_path, "r");
	char line[512];
	while (in && fgets(line, sizeof(line), in))
		fputs(line, stdout);
	if (in)
		fclose(in);
	printf("\ntable in %s\n", table_path);
	/* an index of the runs in the order given, with the table */
	if (reported > 0 && !lb_stop_requested()) { /* none ran: nothing to index */
		if (lb_report_dir(base) < 0)
			exit_code = LB_EXIT_FAIL;
		else
			printf("report: %s/report.md\nin a browser: %s/report.html\n", base, base);
	}
	return exit_code;
}
