/* cmd_run.c - `lockbench run`: one strategy under contention, judged. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "dryrun.h"
#include "faults.h"
#include "esc.h"
#include "gate.h"
#include "openmetrics.h"
#include "options.h"
#include "owned.h"
#include "report.h"
#include "results.h"
#include "signals.h"

/* The files of a run that completed, its table on @out, its report. Exit code. */
static int write_and_print(struct lb_run_cfg *cfg, struct lb_run_result *res,
			   struct lb_summary *sum, FILE *out, bool json)
{
	lb_summary_build(cfg, res, sum);
	lb_results_print(out, cfg, res, sum);
	lb_remote_bounds_write(out, res);
	if (lb_results_write(cfg, res, sum) < 0) {
		if (sum->invalid)
			lb_errorf("%d figure%s outside %s range (above): written n/a in %s/summary.csv; "
				  "a bug in lockbench, and the run fails", sum->invalid,
				  sum->invalid == 1 ? " was" : "s were", sum->invalid == 1 ? "its" : "their",
				  cfg->out_dir);
		else
			lb_errorf("the figures above were measured but not all files could be written");
		return LB_EXIT_FAIL;
	}
	lb_esc_fprintf(out, LB_LANG_TERM, "  results in %s/\n", cfg->out_dir);
	if (json) {
		lb_summary_json(stdout, sum);
		fflush(stdout);
	}
	if (!cfg->no_report) {
		if (lb_report_dir(cfg->out_dir) < 0)
			return LB_EXIT_FAIL;
		lb_esc_fprintf(out, LB_LANG_TERM, "  report in %s/report.md (step through it: "
			       "%s/report.html)\n", cfg->out_dir, cfg->out_dir);
	}
	return LB_EXIT_OK;
}

int lb_run_and_report(struct lb_run_cfg *cfg, struct lb_run_result *res,
		      const struct lb_gate *gate, bool json)
{
	struct lb_summary sum;
	FILE *out = json ? stderr : stdout; /* with --json, standard output is the JSON alone */
	bool gated = gate && lb_gate_active(gate);
	int rc;

	int rc_dir = lb_results_prepare_dir(cfg->out_dir);
	if (rc_dir < 0) /* refused: not a new or empty directory (usage), or unwritable */
		return rc_dir == LB_EINVAL ? LB_EXIT_USAGE : LB_EXIT_FAIL;
	rc = lb_run(cfg, res);
	if (rc == LB_ENOTHERE) { /* the run cannot happen here: 3, never passed */
		lb_errorf("run of %s could not happen: %s (above)", cfg->strategy->name,
			  lb_strerror(rc));
		if (gated)
			lb_gate_unjudged(gate, cfg->scenario, cfg->strategy->name, "the run could not "
					 "happen: a server it needs cannot be reached or refused it",
					 cfg->out_dir, out);
		return gated ? LB_EXIT_FAIL : LB_EXIT_SKIPPED;
	}
	if (rc == LB_ECANCELED && lb_stop_requested()) { /* exit 130 or 143: main */
		lb_errorf("run of %s interrupted (%s) before its clients were all started: nothing "
			  "was measured, so nothing is reported (the servers' logs are in %s)",
			  cfg->strategy->name, lb_stop_signal() == SIGTERM ? "SIGTERM" : "Ctrl-C",
			  cfg->out_dir);
		if (gated)
			lb_gate_unjudged(gate, cfg->scenario, cfg->strategy->name, "the run was "
					 "interrupted before it started", cfg->out_dir, out);
		return LB_EXIT_FAIL;
	}
	if (rc < 0) {
		lb_errorf("run of %s failed: %s", cfg->strategy->name, lb_strerror(rc));
		if (gated)
			lb_gate_unjudged(gate, cfg->scenario, cfg->strategy->name, "the run failed",
					 cfg->out_dir, out);
		return LB_EXIT_FAIL;
	}
	if (res->skipped[0]) {
		lb_esc_fprintf(out, LB_LANG_TERM, "%s under %s: SKIPPED (could not run here): %s\n",
			       cfg->strategy->name, cfg->scenario_name, res->skipped);
		if (gated) { /* skipped is never passed, --allow-skipped or not */
			lb_gate_unjudged(gate, cfg->scenario, cfg->strategy->name,
					 "the run was skipped: nothing was measured", cfg->out_dir, out);
			return LB_EXIT_FAIL;
		}
		return cfg->allow_skipped ? LB_EXIT_OK : LB_EXIT_SKIPPED;
	}
	rc = write_and_print(cfg, res, &sum, out, json);
	int undecided = 0;
	if (gated && rc == LB_EXIT_OK &&
	    lb_gate_judge(gate, cfg->scenario, cfg->strategy->name, &sum, cfg->out_dir, out,
			  &undecided) > 0)
		rc = LB_EXIT_NOT_HELD;
	else if (gated && rc == LB_EXIT_OK && undecided > 0)
		rc = LB_EXIT_INCONCLUSIVE;
	else if (gated && rc != LB_EXIT_OK)
		lb_gate_unjudged(gate, cfg->scenario, cfg->strategy->name,
				 "the run's files could not all be written", cfg->out_dir, out);
	return rc;
}

/* --openmetrics FILE: the figures of the summary as written (none when the
 * run wrote none: skipped, failed, said above). */
static int openmetrics(const struct lb_run_opts *o)
{
	struct lb_summary sum;
	char path[sizeof(o->cfg.out_dir) + 16];

	snprintf(path, sizeof(path), "%s/summary.csv", o->cfg.out_dir);
	if (access(path, F_OK) != 0) {
		lb_errorf("--openmetrics %s not written: the run wrote no figures", o->openmetrics_path);
		return 0;
	}
	if (lb_summary_read(path, &sum) < 0)
		return LB_EINVAL;
	return lb_openmetrics_write(o->openmetrics_path, &sum);
}

int lb_cmd_run(int argc, char **argv)
{
	struct lb_run_opts o;
	struct lb_run_result res = { 0 };
	int rc = lb_run_opts_parse(argc, argv, LB_OPTS_RUN, &o);

	if (rc != 0)
		return rc > 0 ? LB_EXIT_OK : LB_EXIT_USAGE;
	if (lb_scenario_fits(&o.cfg) < 0)
		return LB_EXIT_USAGE;
	if (o.dry_run)
		return lb_dry_run(stdout, &o.cfg) < 0 ? LB_EXIT_FAIL : LB_EXIT_OK;
	o.cfg.status_line = o.cfg.status_line && isatty(STDOUT_FILENO) && !o.json; /* stdout: JSON */
	if (!o.out_given)
		lb_default_out_dir("results/runs", o.cfg.strategy->name, o.cfg.out_dir,
				   sizeof(o.cfg.out_dir));
	struct lb_junit junit;
	if (o.junit_path[0] && !strcmp(o.junit_path, o.cfg.out_dir)) {
		lb_errorf("--junit %s is the run's directory (--out): name a file beside it",
			  o.junit_path);
		return LB_EXIT_USAGE;
	}
	if (o.junit_path[0]) {
		if (lb_junit_open(&junit, o.junit_path, "lockbench run") < 0)
			return LB_EXIT_FAIL;
		o.gate.junit = &junit;
	}
	struct stat st;
	bool made = lstat(o.cfg.out_dir, &st) != 0 && errno == ENOENT;
	rc = lb_run_and_report(&o.cfg, &res, &o.gate, o.json);
	/* a run that could not happen wrote nothing: no empty --out is left */
	if (rc == LB_EXIT_SKIPPED && !res.n_sections)
		lb_owned_unclaim(o.cfg.out_dir, made);
	if (rc == LB_EXIT_NOT_HELD)
		rc = LB_EXIT_FAIL;
	if (o.openmetrics_path[0] && openmetrics(&o) < 0)
		rc = LB_EXIT_FAIL;
	lb_run_result_free(&res);
	if (o.gate.junit && lb_junit_close(&junit) < 0)
		rc = LB_EXIT_FAIL;
	return rc;
}
