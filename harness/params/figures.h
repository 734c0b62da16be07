/*
 * figures.h - every column of summary.csv, in one table: what it counts (its
 * unit), the range a true value can take, whether it may read n/a, the
 * decimals it is written with, and how `lockbench check` knows it. The
 * summary writer formats and range-checks each value through this table, and
 * check reads the same rows, so the two can never disagree on a column's
 * precision: a recomputed figure agrees when it rounds to what was written.
 *
 * The columns of the run parameters (clients, hold_ms, seed, ...) are their
 * rows in params.c: the kind, unit and range come from there, and a column
 * of a parameter added since comes last, in that table's order.
 *
 * A value outside its row's range is a bug (a wrapped counter, a negative
 * time), never a result: the writer refuses it (n/a, and the run fails) and
 * check fails on it. A column with no row fails check too: a figure without
 * a unit and a range is not a figure.
 */
#ifndef LB_FIGURES_H
#define LB_FIGURES_H

#include <stdbool.h>
#include <stddef.h>

enum lb_figdef_kind {
	LB_FD_TEXT,  /* free text, or one of @words */
	LB_FD_INT,   /* an integer, written without decimals */
	LB_FD_NUM,   /* a number with @digits decimals (-1: as given, %g) */
};

/* How check knows a column. */
enum lb_figdef_source {
	LB_FD_SETTING,    /* the run's configuration: read, range-checked */
	LB_FD_MEASURED,   /* measured outside the run's files (servers, resource):
			      range-checked, and the input of recomputed figures */
	LB_FD_RECOMPUTED, /* recomputed from history.csv, latency.csv, events.csv and
			      the measured columns, and compared */
};

struct lb_figdef {
	const char *name;
	enum lb_figdef_kind kind;
	const char *unit;          /* "" for text */
	int digits;                /* LB_FD_NUM: decimals written; -1 as given */
	double min, max;           /* numbers: the range of a true value */
	bool na;                   /* may read "n/a" (not measured in this run) */
	const char *const *words;  /* text: the values allowed, or NULL for any */
	enum lb_figdef_source source;
	bool inf;                  /* may read "inf": an upper bound the run could not
				      give (acquire_p99_high_us) */
	const char *absent;        /* a figure of an event that may never happen: what
				      its absence is ("no split brain"); summary.csv's
				      figures_absent says when its n/a is that (NULL: its
				      n/a is always "not measured") */
};

/* The row of column @name, or NULL. */
const struct lb_figdef *lb_figdef_find(const char *name);
/* Every row, in the order summary.csv writes them; *@n gets how many. */
const struct lb_figdef *lb_figdefs(size_t *n);

/*
 * Write @v as @f's column does into @buf: its decimals, or "n/a" when @known
 * is false. LB_EINVAL (and "n/a" in @buf, the reason in @why) when @v is not
 * finite or outside the range, or when @known is false and the row allows no
 * n/a: a bug to report, never a number to print.
 */
int lb_figdef_format(const struct lb_figdef *f, double v, bool known, char *buf, size_t len,
		     char *why, size_t why_len);
/* A written @value against its row: 0, or LB_EINVAL with the reason in @why
 * (not a number, outside the range, n/a where none is allowed, decimals other
 * than the row's, a word the row does not know). */
int lb_figdef_check(const struct lb_figdef *f, const char *value, char *why, size_t why_len);
/*
 * Whether a recomputed figure agrees with the written @value: @known false
 * agrees only with "n/a"; a number agrees when it is within half a unit of
 * the last decimal written (the summary rounds; check never asks for more
 * than it writes), plus @slack for what the inputs themselves lost to their
 * rounding. Integers agree exactly.
 */
bool lb_figdef_agrees(const struct lb_figdef *f, const char *value, double got, bool known,
		      double slack);

#endif
