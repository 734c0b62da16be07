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
 * A figure that reads n/a holds no threshold: what was not measured cannot
 * pass.
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
	double scale;       /* the column's value times this (or divided by it, when
			       @divide) is in that unit: a power of ten, exact */
	bool divide;
	enum lb_cmp op;
	double bound;       /* N */
};

/* Parse "FIGURE OP N" (spaces optional). 0, or LB_EINVAL with what was
 * expected in @why (an unknown figure names the nearest ones). */
int lb_threshold_parse(const char *text, struct lb_threshold *t, char *why, size_t why_len);
/*
 * Judge @t on @value, the column as summary.csv holds it (NULL: absent;
 * ">=V": V is a lower bound of the figure, which then holds only > and >=).
 * 1 held, 0 not; @line gets "acquire_p99_ms < 50: 12.3 ms" (or ": n/a,
 * not measured"), what the report prints beside pass or FAIL.
 */
int lb_threshold_judge(const struct lb_threshold *t, const char *value, char *line, size_t len);
/* "<=" for LB_CMP_LE, ... */
const char *lb_cmp_text(enum lb_cmp op);

#endif
