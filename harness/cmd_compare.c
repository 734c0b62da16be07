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

static void row(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *r)
{
	const struct lb_verdict *v = &r->verdict;
	char foreign[24];

	lb_foreign_text(v, foreign, sizeof(foreign)); /* n/a, never 0, when not measured */
	fprintf(f, "%-13s %9llu %9.1f %9.2f %9.2f %8.2f %8llu %8lld %8s %6llu %6.3f\n",
		cfg->strategy->name, (unsigned long long)v->sections, r->throughput_per_s,
		lb_hist_quantile_us(&r->latency, 0.5) / 1000.0,
		lb_hist_quantile_us(&r->latency, 0.99) / 1000.0, r->cmds_per_section,
		(unsigned long long)v->overlaps, r->lost_updates, foreign, (unsigned long long)v->lost_leases,
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
