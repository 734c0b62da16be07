/*
 * gate.c - --check, --expect and --threshold judged on a run's summary
 * (gate.h).
 */
#include "gate.h"

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

/* One condition's line: "  check        held: ..." or "NOT HELD". */
static int condition(FILE *f, bool held, const char *what)
{
	lb_esc_fprintf(f, LB_LANG_TERM, "  check        %s %s\n", held ? "held:    " : "NOT HELD:",
		       what);
	return !held;
}

int lb_gate_judge(const struct lb_gate *g, const struct lb_scenario *sc, const char *strategy,
		  const struct lb_summary *s, FILE *f)
{
	const struct lb_scenario_expect *e = expectation(g, sc, strategy);
	const char *observed = lb_summary_get(s, "observed");
	int cls = observed ? lb_class_parse(observed) : -1;
	int failed = 0, n = conditions(g, sc, strategy);
	char line[800], text[200], why[300];

	if (cls < 0 || cls == LB_CLASS_INTERRUPTED)
		return lb_gate_unjudged(g, sc, strategy, cls < 0 ? "the summary has no class" :
					"the run was cut short: what it measured is not a whole run",
					f);
	struct lb_observed ob = { (enum lb_class)cls, lb_summary_value, s };
	if (e) {
		lb_expect_text(e, text, sizeof(text));
		bool met = lb_expect_met(e, &ob, why, sizeof(why));
		snprintf(line, sizeof(line), "expect %s (%s): %s", text, g->has_expect ? "--expect" :
			 "the scenario's [expect] line", met ? "observed as expected" : why);
		failed += condition(f, met, line);
	}
	for (int i = 0; g->check && sc && i < sc->n_thresholds; i++) {
		const struct lb_threshold *t = &sc->thresholds[i];
		int held = lb_threshold_judge(t, lb_summary_get(s, t->column), text, sizeof(text));
		snprintf(line, sizeof(line), "%s (the scenario's threshold)", text);
		failed += condition(f, held == 1, line);
	}
	for (int i = 0; i < g->n_thresholds; i++) {
		const struct lb_threshold *t = &g->thresholds[i];
		int held = lb_threshold_judge(t, lb_summary_get(s, t->column), text, sizeof(text));
		snprintf(line, sizeof(line), "%s (--threshold)", text);
		failed += condition(f, held == 1, line);
	}
	if (failed)
		fprintf(f, "  check        FAILED: %d of %d condition%s not held (exit status 1)\n",
			failed, n, n == 1 ? "" : "s");
	else
		fprintf(f, "  check        passed: %d condition%s held\n", n, n == 1 ? "" : "s");
	return failed;
}

int lb_gate_unjudged(const struct lb_gate *g, const struct lb_scenario *sc, const char *strategy,
		     const char *why, FILE *f)
{
	int n = conditions(g, sc, strategy);

	lb_esc_fprintf(f, LB_LANG_TERM, "  check        FAILED: %s; none of the %d condition%s can "
		       "hold (exit status 1)\n", why, n, n == 1 ? "" : "s");
	return n > 0 ? n : 1;
}
