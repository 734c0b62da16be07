/*
 * gate.c - --check, --expect and --threshold judged on a run's summary
 * (gate.h).
 */
#include "gate.h"

#include <stdlib.h>
#include <string.h>

#include "esc.h"

bool lb_gate_active(const struct lb_gate *g)
{
	return g->check || g->has_expect || g->n_thresholds > 0;
}

/* The expectation of the class that applies: --expect, else with --check
 * the scenario's line. */
static const struct lb_scenario_expect *expectation(const struct lb_gate *g,
						    const struct lb_scenario *sc,
						    const char *strategy)
{
	if (g->has_expect)
		return &g->expect;
	return g->check && sc ? lb_scenario_expect_of(sc, strategy) : NULL;
}

/* How many conditions @g puts on a run of @strategy under @sc. */
static int conditions(const struct lb_gate *g, const struct lb_scenario *sc, const char *strategy)
{
	return (expectation(g, sc, strategy) != NULL) + g->n_thresholds +
	       (g->check && sc ? sc->n_thresholds : 0);
}

/* Does a threshold of @g (or, with --check, of @sc) name @column? */
static bool named(const struct lb_gate *g, const struct lb_scenario *sc, const char *column)
{
	for (int i = 0; i < g->n_thresholds; i++)
		if (!strcmp(g->thresholds[i].column, column))
			return true;
	for (int i = 0; g->check && sc && i < sc->n_thresholds; i++)
		if (!strcmp(sc->thresholds[i].column, column))
			return true;
	return false;
}

/* The condition no expectation leaves out: with no class expected (only
 * thresholds), an overlap or a lost update fails the run, unless a
 * threshold of its own says how many may happen. Which of the two it
 * judges: bit 0 overlaps, bit 1 lost_updates (0: no such condition). */
static unsigned safety(const struct lb_gate *g, const struct lb_scenario *sc, const char *strategy)
{
	if (expectation(g, sc, strategy))
		return 0;
	return (unsigned)!named(g, sc, "overlaps") | (unsigned)!named(g, sc, "lost_updates") << 1;
}

/* Judge the safety condition on @s: held or not, its line in @line. */
static enum lb_held safety_held(unsigned which, const struct lb_summary *s, char *line, size_t len)
{
	const char *ov = lb_summary_get(s, "overlaps"), *lost = lb_summary_get(s, "lost_updates");
	bool broken = ((which & 1) && ov && strcmp(ov, "0") && strcmp(ov, "n/a")) ||
		      ((which & 2) && lost && strcmp(lost, "0") && strcmp(lost, "n/a"));

	snprintf(line, len, "%s%s%s: %s overlaps, %s lost updates (no --expect CLASS allows "
		 "them)", which & 1 ? "no overlap" : "", which == 3 ? " and " : "",
		 which & 2 ? "no lost update" : "", ov ? ov : "-", lost ? lost : "-");
	return broken ? LB_NOT_HELD : LB_HELD;
}

int lb_gate_ready(const struct lb_gate *g, const struct lb_scenario *sc, const char *strategy,
		  char *why, size_t len)
{
	if (!g->check)
		return 0;
	if (!sc && g->has_expect)
		return 0; /* no scenario: --expect is the whole of it */
	if (!sc) {
		snprintf(why, len, "--check judges a run against its scenario's [expect] section: "
			 "give --scenario NAME, or say what you expect with --expect CLASS");
		return LB_EINVAL;
	}
	if (!conditions(g, sc, strategy)) {
		lb_esc_snprintf(why, len, LB_LANG_TERM, "--check: scenario %s expects nothing of %s "
				"(no [expect] line for it, no threshold): say what you expect with "
				"--expect CLASS", sc->name, strategy);
		return LB_EINVAL;
	}
	return 0;
}

/* One condition's line: "  check        held: ...", "NOT HELD" or
 * "INCONCLUSIVE", on @f and in @log (what a JUnit case carries). */
static enum lb_held condition(FILE *f, FILE *log, enum lb_held held, const char *what)
{
	static const char *const word[] = { "NOT HELD:", "held:", "INCONCLUSIVE:" };

	lb_esc_fprintf(f, LB_LANG_TERM, "  check        %-9s %s\n", word[held], what);
	fprintf(log, "%s %s\n", word[held], what);
	return held;
}

/* The figures a JUnit case shows beside its conditions. */
static void figures(FILE *log, const struct lb_summary *s)
{
	static const char *const shown[] = { "observed", "overlaps", "lost_updates",
					     "foreign_releases", "acquire_p99_us", "throughput_per_s",
					     "seed" };

	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		const char *v = lb_summary_get(s, shown[i]);
		fprintf(log, "%s%s=%s", i ? " " : "figures: ", shown[i], v ? v : "-");
	}
	fputc('\n', log);
}

/* The JUnit case of a run, if --junit was given. */
static void junit_case(const struct lb_gate *g, const struct lb_scenario *sc, const char *strategy,
		       double seconds, int failed, const char *message, const char *log,
		       const char *dir)
{
	char *text = NULL;
	size_t len;

	if (!g->junit)
		return;
	FILE *f = open_memstream(&text, &len); /* whole: never cut */
	if (f) {
		fprintf(f, "%srun directory: %s\n", log, dir);
		fclose(f);
	}
	lb_junit_case(g->junit, sc ? sc->name : "none", strategy, seconds,
		      failed ? LB_JUNIT_FAIL : LB_JUNIT_PASS, message, text ? text : "out of memory");
	free(text);
}

int lb_gate_judge(const struct lb_gate *g, const struct lb_scenario *sc, const char *strategy,
		  const struct lb_summary *s, const char *dir, FILE *f, int *undecided_out)
{
	const struct lb_scenario_expect *e = expectation(g, sc, strategy);
	const char *observed = lb_summary_get(s, "observed");
	int cls = observed ? lb_class_parse(observed) : -1;
	int failed = 0, undecided = 0, n = conditions(g, sc, strategy);
	char line[800], text[400], why[300], first[800] = "", undecided_first[800] = "";
	char *buf = NULL;
	size_t len = 0;

	if (cls < 0 || cls == LB_CLASS_INTERRUPTED || cls == LB_CLASS_INCONCLUSIVE) {
		char why_not[400];
		const char *told = lb_summary_get(s, "observed_why");
		snprintf(why_not, sizeof(why_not), "%s%.300s", cls < 0 ? "the summary has no class" :
			 cls == LB_CLASS_INTERRUPTED ? "the run was cut short: what it measured is not "
			 "a whole run" : "the run is inconclusive, it shows nothing to judge: ",
			 cls == LB_CLASS_INCONCLUSIVE && told ? told : "");
		return lb_gate_unjudged(g, sc, strategy, why_not, dir, f);
	}
	FILE *log = open_memstream(&buf, &len);
	if (!log)
		return lb_gate_unjudged(g, sc, strategy, "out of memory", dir, f);
	struct lb_observed ob = { (enum lb_class)cls, lb_summary_value, s };
	if (e) {
		lb_expect_text(e, text, sizeof(text));
		bool met = lb_expect_met(e, &ob, why, sizeof(why));
		snprintf(line, sizeof(line), "expect %s (%s): %s", text, g->has_expect ? "--expect" :
			 "the scenario's [expect] line", met ? "observed as expected" : why);
		if (condition(f, log, met ? LB_HELD : LB_NOT_HELD, line) == LB_NOT_HELD && !failed++)
			snprintf(first, sizeof(first), "%s", line);
	}
	for (int i = 0; i < g->n_thresholds + (g->check && sc ? sc->n_thresholds : 0); i++) {
		bool own = i < g->n_thresholds;
		const struct lb_threshold *t = own ? &g->thresholds[i] :
						     &sc->thresholds[i - g->n_thresholds];
		enum lb_held held = lb_threshold_judge(t, lb_summary_value(s, t->column), text,
						       sizeof(text));
		snprintf(line, sizeof(line), "%s (%s)", text, own ? "--threshold" :
			 "the scenario's threshold");
		held = condition(f, log, held, line);
		if (held == LB_NOT_HELD && !failed++)
			snprintf(first, sizeof(first), "%s", line);
		if (held == LB_UNDECIDED && !undecided++ && !failed)
			snprintf(undecided_first, sizeof(undecided_first), "INCONCLUSIVE: %.780s", line);
	}
	if (safety(g, sc, strategy)) {
		n++;
		if (condition(f, log, safety_held(safety(g, sc, strategy), s, line, sizeof(line)),
			      line) == LB_NOT_HELD && !failed++)
			snprintf(first, sizeof(first), "%s", line);
	}
	if (failed)
		fprintf(f, "  check        FAILED: %d of %d condition%s not held (the exit status is "
			"not 0)\n", failed, n, n == 1 ? "" : "s");
	else if (undecided)
		fprintf(f, "  check        INCONCLUSIVE: %d of %d condition%s neither held nor broken "
			"(the exit status is 5)\n", undecided, n, n == 1 ? "" : "s");
	else
		fprintf(f, "  check        passed: %d condition%s held\n", n, n == 1 ? "" : "s");
	figures(log, s);
	fclose(log);
	snprintf(line, sizeof(line), "%d of %d conditions held", n - failed - undecided, n);
	junit_case(g, sc, strategy, lb_summary_num(s, "elapsed_s", -1), failed + undecided,
		   failed ? first : undecided ? undecided_first : line, buf ? buf : "", dir);
	free(buf);
	if (undecided_out)
		*undecided_out = undecided;
	return failed;
}

int lb_gate_unjudged(const struct lb_gate *g, const struct lb_scenario *sc, const char *strategy,
		     const char *why, const char *dir, FILE *f)
{
	int n = conditions(g, sc, strategy) + (safety(g, sc, strategy) != 0);
	char message[400];

	lb_esc_fprintf(f, LB_LANG_TERM, "  check        FAILED: %s; none of the %d condition%s can "
		       "hold (the exit status is not 0)\n", why, n, n == 1 ? "" : "s");
	snprintf(message, sizeof(message), "%s%s", strstr(why, "skipped") ? "skipped: " : "", why);
	junit_case(g, sc, strategy, -1, 1, message, "", dir);
	return n > 0 ? n : 1;
}
