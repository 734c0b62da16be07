/*
 * threshold.h - a condition on one figure of a run's summary, FIGURE OP N
 * (k6's thresholds: `acquire_p99_ms < 50`), read against the figure table
 * (figures.h) and judged on the value summary.csv holds. It serves
 * `--threshold`, the figure an expectation asks of (`--expect overlap,
 * overlaps >= 1`, a scenario's [expect] lines) and a scenario's `threshold =`
 * lines. It is judged after the run, from what was written: nothing it says
 * reaches the code that measures.
 *
 * FIGURE is a column of summary.csv that holds a number (docs/running.md
 * lists them), written with _ or -; a column in us, ms or s may be named in
 * another unit by its suffix (acquire_p99_ms is acquire_p99_us / 1000,
 * elapsed_ms is elapsed_s * 1000). OP is <, <=, >, >=, == or !=; N a number.
 * The figure and N are compared as the decimals they are written in, the
 * unit's power of ten moving the point: no binary fraction in between
 * (1.005 s is 1005 ms, exactly).
 *
 * A figure may be known only as an interval (an acquire percentile with
 * waits cut off by the run's end: each such wait is somewhere at or above its
 * length): the condition holds when every value of it holds, does not when
 * none does, and is undecided in between. A figure of an event that never
 * happened (no split brain: summary.csv's figures_absent) holds what any
 * such event would have held: < and <= (there was none at or above N) and !=,
 * never >, >= or ==. A figure that reads n/a (not measured) is undecided.
 */
#ifndef LB_THRESHOLD_H
#define LB_THRESHOLD_H

#include <stdbool.h>
#include <stddef.h>

enum lb_cmp { LB_CMP_LT, LB_CMP_LE, LB_CMP_GT, LB_CMP_GE, LB_CMP_EQ, LB_CMP_NE };

struct lb_threshold {
	char text[96];      /* as written, spaces made one: "acquire_p99_ms < 50" */
	char figure[40];    /* as named: acquire_p99_ms, foreign-releases */
	char column[32];    /* the summary column: acquire_p99_us */
	char unit[24];      /* the unit N is in: the column's, or the one named */
	int shift;          /* the column's value times 10^shift is in that unit */
	enum lb_cmp op;
	double bound;       /* N */
	char bound_text[64]; /* N as written: what it is compared as */
};

/* Parse "FIGURE OP N" (spaces optional). 0, or LB_EINVAL with what was
 * expected in @why (an unknown figure names the figures it may mean). */
int lb_threshold_parse(const char *text, struct lb_threshold *t, char *why, size_t why_len);

/* What lb_threshold_judge answers. */
enum lb_held { LB_NOT_HELD = 0, LB_HELD = 1, LB_UNDECIDED = 2 };
/*
 * Judge @t on @value, the column as the summary tells it (lb_summary_value):
 *   "V"       the figure (a number; "inf" for an unbounded one)
 *   "[L,H]"   the figure lies between L and H
 *   ">=L"     the figure is L or more, with no upper bound
 *   "none"    the event the figure times never happened (figures_absent)
 *   "n/a", NULL  not measured
 * @line gets "acquire_p99_ms < 50: [12.3, 14.1] ms" (or ": n/a, not
 * measured"), what the report prints beside held, NOT HELD or INCONCLUSIVE.
 */
enum lb_held lb_threshold_judge(const struct lb_threshold *t, const char *value, char *line,
				size_t len);
/* "<=" for LB_CMP_LE, ... */
const char *lb_cmp_text(enum lb_cmp op);

#endif
