/*
 * test_chaos.c - `lockbench chaos` end to end on a short probabilistic
 * scenario: one CSV row per (strategy, seed), rates with 95% Wilson intervals
 * in chaos.md, fencing keeps lost updates at 0 under random faults, and
 * --check fails when the worst run is more severe than the [expect] line.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

FX_SUITE(chaos, 180);

static char tmpdir[64];

static void mktmp(void)
{
	strcpy(tmpdir, "/tmp/lbtest-chaos-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
}

static int lb(const char *const *args)
{
	return fx_lockbench(tmpdir, args);
}

static char *slurp(const char *rel)
{
	return fx_slurp(tmpdir, rel);
}

/* A two-second chaos mix: one holder kill, two pauses past the TTL, one restart. */
static void write_scenario(const char *path, const char *expect)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "[scenario]\nsummary = short chaos for the tests\n"
		   "description = random faults over two seconds\nprobabilistic = yes\n"
		   "[run]\nclients = 3\nduration = 2\nttl = 300\nhold = 20-60\n"
		   "wait = fixed:10\nthink = 5\n"
		   "[chaos]\nkills = 1\npauses = 2\npause = 400-700\nrestarts = 1\n"
		   "from = 0.2\nuntil = 1.5\n"
		   "[expect]\n%s",
		   expect);
	fclose(f);
}

/* Column `col` (0-based) of every CSV row of `strategy`, summed; rows counted. */
static long long csv_sum(const char *csv, const char *strategy, int col, int *rows)
{
	long long sum = 0;
	*rows = 0;
	for (const char *l = strchr(csv, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		size_t sl = strlen(strategy);
		if (strncmp(l + 1, strategy, sl) || l[1 + sl] != ',')
			continue;
		const char *p = l + 1;
		for (int c = 0; c < col && p; c++)
			p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
		cr_assert_not_null(p);
		sum += atoll(p);
		(*rows)++;
	}
	return sum;
}

Test(chaos, rates_over_seeds_and_fencing_holds, .init = mktmp)
{
	char sc[128], out[128];
	snprintf(sc, sizeof(sc), "%s/short-chaos.ini", tmpdir);
	snprintf(out, sizeof(out), "%s/c", tmpdir);
	write_scenario(sc, "none = overlap\nfenced = contained\n");
	const char *args[] = { "chaos", "--scenario", sc, "--strategies", "none,fenced",
			       "--seeds", "2", "--seed", "11", "--check", "--out", out, NULL };
	cr_assert_eq(lb(args), 0, "chaos --check failed:\n%s", slurp("output"));
	const char *csv = slurp("c/chaos.csv");
	cr_assert(!strncmp(csv, "strategy,seed,observed,overlaps,lost_updates,", 45), "%s", csv);
	int rows;
	long long overlaps = csv_sum(csv, "none", 3, &rows);
	cr_assert_eq(rows, 2, "%s", csv);
	cr_assert_gt(overlaps, 0, "three clients without a lock never overlapped:\n%s", csv);
	cr_assert(strstr(csv, "\nnone,11,") && strstr(csv, "\nnone,12,"), "seeds N..N+K-1: %s", csv);
	cr_assert_eq(csv_sum(csv, "fenced", 4, &rows), 0, "fencing lost an update:\n%s", csv);
	cr_assert_eq(rows, 2, "%s", csv);
	/* Each seed drew its own faults and fired them. */
	cr_assert_gt(csv_sum(csv, "fenced", 10, &rows), 0, "%s", csv);
	const char *md = slurp("c/chaos.md");
	/* 95% Wilson interval of 0 in 2 is 0-66%, of 2 in 2 is 34-100%. */
	cr_assert(strstr(md, "| none | 2/2 (34–100%) |"), "%s", md);
	cr_assert(strstr(md, "0/2 (0–66%)"), "%s", md);
	char png[160];
	snprintf(png, sizeof(png), "%s/chaos.png", out);
	cr_assert_eq(access(png, F_OK), 0, "no %s", png);
}

Test(chaos, check_fails_when_the_worst_run_is_worse, .init = mktmp)
{
	char sc[128], out[128];
	snprintf(sc, sizeof(sc), "%s/short-chaos.ini", tmpdir);
	snprintf(out, sizeof(out), "%s/c", tmpdir);
	write_scenario(sc, "none = safe\n");
	const char *args[] = { "chaos", "--scenario", sc, "--strategies", "none", "--seeds", "1",
			       "--check", "--out", out, NULL };
	cr_assert_eq(lb(args), 1, "--check passed 'none = safe':\n%s", slurp("output"));
	cr_assert(strstr(slurp("c/chaos.csv"), "\nnone,"));
}

/* --strategy takes one name whole and adds to --strategies, in the order
 * given: the runs are of those strategies alone. */
Test(chaos, strategy_names_one_whole, .init = mktmp)
{
	char sc[128], out[128];
	snprintf(sc, sizeof(sc), "%s/short-chaos.ini", tmpdir);
	snprintf(out, sizeof(out), "%s/c", tmpdir);
	write_scenario(sc, "none = overlap\nfenced = contained\n");
	const char *args[] = { "chaos", "--scenario", sc, "--strategy", "fenced", "--strategies",
			       "none", "--seeds", "1", "--seed", "5", "--out", out, NULL };
	cr_assert_eq(lb(args), 0, "%s", slurp("output"));
	const char *csv = slurp("c/chaos.csv");
	const char *f = strstr(csv, "\nfenced,5,"), *n = strstr(csv, "\nnone,5,");
	cr_assert(f && n && f < n, "fenced, then none, one seed each: %s", csv);
	int rows;
	csv_sum(csv, "fenced", 3, &rows);
	cr_assert_eq(rows, 1, "%s", csv);
	/* report draws each run's page and lists them, in chaos.csv's order */
	const char *report[] = { "report", out, NULL };
	cr_assert_eq(lb(report), 0, "%s", slurp("output"));
	const char *page = slurp("c/report.md");
	const char *rf = strstr(page, "- fenced, seed 5: contained ([report](fenced/5/report.md))");
	const char *rn = strstr(page, "- none, seed 5: overlap ([report](none/5/report.md))");
	cr_assert(rf && rn && rf < rn, "%s", page);
	cr_assert(strstr(slurp("c/none/5/report.md"), "# none under"), "%s",
		  slurp("c/none/5/report.md"));
	/* the command that repeats it names them */
	cr_assert(strstr(slurp("c/chaos.md"), "--strategy fenced --strategy none"), "%s",
		  slurp("c/chaos.md"));
	const char *empty[] = { "chaos", "--strategies", ",", NULL };
	cr_assert_eq(lb(empty), 2, "an empty list runs nothing, not everything: %s", slurp("output"));
	cr_assert(strstr(slurp("output"), "--strategies: empty list"), "%s", slurp("output"));
	const char *bad[] = { "chaos", "--strategy", "fenced,none", NULL };
	cr_assert_eq(lb(bad), 2, "a comma list given to --strategy is one name: %s", slurp("output"));
	cr_assert(strstr(slurp("output"), "unknown strategy 'fenced,none'"), "%s", slurp("output"));
}

Test(chaos, bad_arguments_are_refused, .init = mktmp)
{
	const char *seeds[] = { "chaos", "--seeds", "0", NULL };
	cr_assert_eq(lb(seeds), 2);
	cr_assert(strstr(slurp("output"), "--seeds '0': expected 1 to"), "%s", slurp("output"));
	const char *strat[] = { "chaos", "--strategies", "nope", NULL };
	cr_assert_eq(lb(strat), 2);
	cr_assert(strstr(slurp("output"), "nope"), "%s", slurp("output"));
}
