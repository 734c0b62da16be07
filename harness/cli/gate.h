/*
 * gate.h - what a command's exit status answers to besides running, for a
 * build to fail on (docs/running.md, "Failing a build"):
 *   --check       the scenario's [expect] section: its line for the strategy
 *                 and its `threshold =` lines
 *   --expect E    CLASS[, FIGURE OP N], as an [expect] line's value; with
 *                 --check, it takes the place of the scenario's line
 *   --threshold T FIGURE OP N on any figure of summary.csv (threshold.h)
 * Each is judged on the run's summary after it was written, never inside the
 * code that measures; a run that was skipped or cut short holds none of them.
 */
#ifndef LB_GATE_H
#define LB_GATE_H

#include <stdbool.h>
#include <stdio.h>

#include "junit.h"
#include "results.h"
#include "scenario.h"

struct lb_gate {
	bool check;
	bool has_expect;
	struct lb_scenario_expect expect;
	struct lb_threshold thresholds[LB_MAX_THRESHOLDS];
	int n_thresholds;
	struct lb_junit *junit;   /* --junit FILE: each run judged is a test case there */
};

/* Is there anything to judge? */
bool lb_gate_active(const struct lb_gate *g);
/* Before any run: can @g be judged for @strategy under @sc (NULL: no
 * scenario)? 0, or LB_EINVAL with the reason in @why (--check with nothing
 * to check against). */
int lb_gate_ready(const struct lb_gate *g, const struct lb_scenario *sc, const char *strategy,
		  char *why, size_t len);
/* Judge the written summary @s of @strategy's run under @sc (its files in
 * @dir): one line per condition on @f, then the verdict, and a JUnit case
 * (a failure when any condition did not hold or was undecided). The number
 * of conditions not held; *@undecided (if not NULL) gets how many were
 * neither held nor broken (threshold.h: a figure known as an interval that
 * straddles N, or not measured). */
int lb_gate_judge(const struct lb_gate *g, const struct lb_scenario *sc, const char *strategy,
		  const struct lb_summary *s, const char *dir, FILE *f, int *undecided);
/* A run that did not complete (skipped, failed): every condition fails, and
 * @f (and the JUnit case) says why. The number of conditions. */
int lb_gate_unjudged(const struct lb_gate *g, const struct lb_scenario *sc, const char *strategy,
		     const char *why, const char *dir, FILE *f);

#endif
