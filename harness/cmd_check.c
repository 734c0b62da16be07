/*
 * cmd_check.c - `lockbench check DIR`: recompute what history.csv alone
 * determines and compare it with summary.csv. Exit 0 when they agree, 1 with
 * the differences listed otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "oracle.h"
#include "readers.h"
#include "results.h"

struct checker {
	const struct lb_summary *s;
	int differences;
};

static void compare(struct checker *c, const char *name, double got, double tol)
{
	const char *v = lb_summary_get(c->s, name);

	if (!v) {
		printf("  %-18s missing from summary.csv\n", name);
		c->differences++;
		return;
	}
	if (!strcmp(v, "n/a")) { /* not measured in this run (the summary says why) */
		printf("  %-18s summary n/a          (not measured: nothing to compare)\n", name);
		return;
	}
	double want = strtod(v, NULL);
	bool ok = fabs(got - want) <= tol * (fabs(want) > 1 ? fabs(want) : 1);
	printf("  %-18s summary %-12s history %-12.*f %s\n", name, v, tol < 1e-6 ? 0 : 3, got,
	       ok ? "ok" : "DIFFERS");
	c->differences += !ok;
}

static void compare_text(struct checker *c, const char *name, const char *got)
{
	const char *v = lb_summary_get(c->s, name);
	bool ok = v && !strcmp(v, got);

	printf("  %-18s summary %-12s history %-12s %s\n", name, v ? v : "(missing)", got,
	       ok ? "ok" : "DIFFERS");
	c->differences += !ok;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: lockbench check DIR   (a directory written by `lockbench run`)\n\n"
		   "Recomputes from DIR/history.csv everything the history alone determines\n"
		   "(sections, overlaps, overlap time, holders, foreign releases, lost leases,\n"
		   "holder deaths, orphan time, recovery, fairness, hand-offs) and the lost-update\n"
		   "arithmetic, and compares each figure with DIR/summary.csv. Foreign releases\n"
		   "the servers saw (foreign_source server) are judged again from the history and\n"
		   "DIR/keyevents.csv.\n\n"
		   "Exit status: 0 the summary agrees with the history, 1 they differ (each\n"
		   "difference is listed), 2 usage error, 4 an input cannot be read or is\n"
		   "malformed (the file, line and field are named).\n");
}

int lb_cmd_check(int argc, char **argv)
{
	char path[4096];
	struct lb_summary s;
	struct lb_section *sec = NULL;
	struct lb_verdict v;
	size_t n;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return LB_EXIT_OK;
	}
	if (argc != 2 || argv[1][0] == '-') {
		usage(stderr);
		return LB_EXIT_USAGE;
	}
	struct lb_run_shape shape;
	snprintf(path, sizeof(path), "%s/summary.csv", argv[1]);
	if (lb_summary_read(path, &s) < 0 || lb_summary_shape(&s, path, &shape) < 0)
		return LB_EXIT_INPUT;
	int clients = shape.clients, keys = shape.keys;
	double elapsed = shape.elapsed_s;
	snprintf(path, sizeof(path), "%s/history.csv", argv[1]);
	if (lb_history_read(path, clients, keys, &sec, &n) < 0)
		return LB_EXIT_INPUT;
	if (lb_oracle_judge(sec, n, clients, (int64_t)(elapsed * 1e9), &v, NULL) < 0) {
		free(sec);
		return LB_EXIT_FAIL;
	}
	/* foreign releases the servers saw: from keyevents.csv, judged again */
	const char *src = lb_summary_get(&s, "foreign_source");
	struct lb_key_event *ke = NULL;
	struct lb_foreign_result fr;
	size_t nk = 0;
	bool server = src && !strcmp(src, "server");
	snprintf(path, sizeof(path), "%s/keyevents.csv", argv[1]);
	if (server && lb_key_events_read(path, keys, &ke, &nk) < 0) {
		free(sec);
		return LB_EXIT_INPUT;
	}
	struct lb_foreign_opts fo = { LB_KEYWATCH_SLOP_NS, shape.ttl_ms * LB_NS_PER_MS,
				      (int64_t)(elapsed * 1e9) };
	int frc = lb_foreign_verdict(&v, sec, n, ke, nk, src && !strcmp(src, "n/a"), &fo, &fr);
	lb_foreign_result_free(&fr);
	free(ke);
	free(sec);
	if (frc < 0)
		return LB_EXIT_FAIL;

	struct checker c = { .s = &s };
	printf("check %s (%zu sections, %d clients, %d keys)\n", argv[1], n, clients, keys);
	compare(&c, "sections", (double)v.sections, 0);
	compare(&c, "throughput_per_s", elapsed > 0 ? (double)v.sections / elapsed : 0, 0.001);
	compare(&c, "overlaps", (double)v.overlaps, 0);
	compare(&c, "overlap_ms", v.overlap_ms, 0.001);
	compare(&c, "max_holders", v.max_holders, 0);
	compare(&c, "foreign_releases", (double)v.foreign_releases, 0);
	if (server)
		compare(&c, "foreign_unattributed", (double)v.foreign_unattributed, 0);
	if (lb_summary_get(&s, "foreign_releases_client"))
		compare(&c, "foreign_releases_client", (double)v.foreign_client, 0);
	compare(&c, "lost_leases", (double)v.lost_leases, 0);
	compare(&c, "holder_deaths", (double)v.holder_deaths, 0);
	compare(&c, "orphan_ms", v.orphan_ms, 0.001);
	compare_text(&c, "recovered", lb_recovered_name(v.recovered));
	compare(&c, "fairness", v.fairness, 0.0002);
	if (lb_summary_get(&s, "handoffs")) {
		compare(&c, "handoffs", (double)v.handoffs, 0);
		compare(&c, "handoff_p50_us", v.handoff_p50_us, 0.001);
		compare(&c, "handoff_p99_us", v.handoff_p99_us, 0.001);
	}
	/* lost updates: the counter is not in the history; check the arithmetic */
	const char *work = lb_summary_get(&s, "work"), *applied = lb_summary_get(&s, "applied_writes");
	bool counter = work && !strcmp(work, "counter");
	bool exact = applied && strcmp(applied, "n/a"); /* the resource counted what it applied */
	double final = lb_summary_num(&s, "counter_final", 0);
	double lost = !counter ? 0 : exact ? lb_summary_num(&s, "applied_writes", 0) - final :
			      lb_summary_num(&s, "counter_writes", 0) - final;
	double lost_max = lost + (counter && !exact ? lb_summary_num(&s, "uncertain_writes", 0) : 0);
	if (lost < 0)
		lost = 0;
	if (lost_max < 0)
		lost_max = 0;
	compare(&c, "lost_updates", lost, 0);
	if (lb_summary_get(&s, "lost_updates_max"))
		compare(&c, "lost_updates_max", lost_max, 0);
	if (c.differences) {
		printf("%d difference%s\n", c.differences, c.differences == 1 ? "" : "s");
		return LB_EXIT_FAIL;
	}
	printf("summary.csv agrees with history.csv\n");
	return LB_EXIT_OK;
}
