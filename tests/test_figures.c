/*
 * test_figures.c - the figure table (harness/params/figures.c): every summary
 * column has a unit and a range; values are written, range-checked and
 * compared at the precision the summary writes; and docs/running.md
 * documents every column.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"
#include "fixture.h"

FX_SUITE(figures, 60);

Test(figures, every_row_has_a_unit_and_a_range)
{
	size_t n;
	const struct lb_figdef *t = lb_figdefs(&n);

	cr_assert_gt(n, 50);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(lb_figdef_find(t[i].name), &t[i], "%s appears twice", t[i].name);
		if (t[i].kind == LB_FD_TEXT)
			continue;
		cr_assert(t[i].unit != NULL, "%s has no unit", t[i].name);
		cr_assert_leq(t[i].min, t[i].max, "%s: an empty range", t[i].name);
		/* a wrapped 64-bit counter is outside the range of every figure the run
		 * measures (a setting such as the seed may take any 64-bit value) */
		if (t[i].source != LB_FD_SETTING)
			cr_assert_lt(t[i].max, 1.7e18, "%s: a wrapped counter would pass", t[i].name);
	}
	cr_assert_null(lb_figdef_find("no_such_figure"));
}

/* Item 2 of issue 30: the wrap 1676976733973595648.00 was printed and written. */
Test(figures, a_wrapped_counter_is_refused_not_written)
{
	const struct lb_figdef *f = lb_figdef_find("cmds_per_section");
	char buf[64], why[200];

	cr_assert_eq(lb_figdef_format(f, 1676976733973595648.0, true, buf, sizeof(buf), why,
				      sizeof(why)), LB_EINVAL);
	cr_assert_str_eq(buf, "n/a");
	cr_assert(strstr(why, "outside its range"), "%s", why);
	cr_assert_neq(lb_figdef_check(f, "1676976733973595648.00", why, sizeof(why)), 0);
	cr_assert_eq(lb_figdef_format(f, 5.678, true, buf, sizeof(buf), why, sizeof(why)), 0);
	cr_assert_str_eq(buf, "5.68");
	cr_assert_eq(lb_figdef_format(f, 0, false, buf, sizeof(buf), why, sizeof(why)), 0);
	cr_assert_str_eq(buf, "n/a");
	/* n/a where a figure is always measured is refused too */
	const struct lb_figdef *s = lb_figdef_find("sections");
	cr_assert_eq(lb_figdef_format(s, 0, false, buf, sizeof(buf), why, sizeof(why)), LB_EINVAL);
	cr_assert_neq(lb_figdef_check(s, "n/a", why, sizeof(why)), 0);
	cr_assert_neq(lb_figdef_check(s, "-1", why, sizeof(why)), 0);
	cr_assert_neq(lb_figdef_check(s, "3.0", why, sizeof(why)), 0, "not an integer");
	cr_assert_neq(lb_figdef_check(s, "18446744073709551615", why, sizeof(why)), 0);
	cr_assert_eq(lb_figdef_check(s, "42", why, sizeof(why)), 0, "%s", why);
}

Test(figures, written_with_the_rows_decimals)
{
	const struct lb_figdef *t = lb_figdef_find("throughput_per_s");
	char why[200];

	cr_assert_eq(lb_figdef_check(t, "0.37", why, sizeof(why)), 0, "%s", why);
	cr_assert_neq(lb_figdef_check(t, "0.375", why, sizeof(why)), 0);
	cr_assert(strstr(why, "decimals"), "%s", why);
	cr_assert_neq(lb_figdef_check(t, "abc", why, sizeof(why)), 0);
	cr_assert_neq(lb_figdef_check(t, "nan", why, sizeof(why)), 0);
	const struct lb_figdef *o = lb_figdef_find("observed");
	cr_assert_eq(lb_figdef_check(o, "safe", why, sizeof(why)), 0);
	cr_assert_neq(lb_figdef_check(o, "fine", why, sizeof(why)), 0);
}

/* Item 3: a recomputed figure agrees when it rounds to what was written:
 * 3 sections in 8 s is 0.375 a second, written 0.38 (or 0.37 for 7.999999 s). */
Test(figures, agreement_at_the_written_precision)
{
	const struct lb_figdef *t = lb_figdef_find("throughput_per_s");

	cr_assert(lb_figdef_agrees(t, "0.37", 3 / 8.000001, true, 0));
	cr_assert(lb_figdef_agrees(t, "0.38", 0.375, true, 0));
	cr_assert(lb_figdef_agrees(t, "0.43", 3 / 7.0, true, 0));
	cr_assert_not(lb_figdef_agrees(t, "0.44", 3 / 7.0, true, 0));
	cr_assert_not(lb_figdef_agrees(t, "n/a", 0.43, true, 0));
	cr_assert_not(lb_figdef_agrees(t, "0.43", 0.43, false, 0));
	cr_assert(lb_figdef_agrees(t, "n/a", 0, false, 0));
	const struct lb_figdef *s = lb_figdef_find("sections");
	cr_assert(lb_figdef_agrees(s, "12", 12, true, 0));
	cr_assert_not(lb_figdef_agrees(s, "12", 11, true, 0.6), "integers agree exactly");
}

/* Every column is documented where the summary columns are. */
Test(figures, docs_describe_every_column)
{
	char path[PATH_MAX];
	size_t n;

	snprintf(path, sizeof(path), "%s/docs", fx_root());
	const char *doc = fx_slurp(path, "running.md");
	const struct lb_figdef *t = lb_figdefs(&n);
	for (size_t i = 0; i < n; i++) {
		char needle[64];
		snprintf(needle, sizeof(needle), "`%s`", t[i].name);
		cr_assert(strstr(doc, needle), "docs/running.md does not describe %s", t[i].name);
	}
}
