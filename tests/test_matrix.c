/*
 * test_matrix.c - scenarios end to end: a fast subset of the matrix with
 * --check (an overlap, a deadlock and a foreign-release cell), proof that the
 * observed class comes from measurements (a wrong expectation fails), and the
 * fault events a run records.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "results.h"
#include "util.h"

FX_SUITE(matrix, 180);

static char tmpdir[64];

static void mktmp(void)
{
	strcpy(tmpdir, "/tmp/lbtest-matrix-XXXXXX");
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

/* The row of matrix.csv for a cell, first repetition. */
static bool cell_is(const char *csv, const char *scenario, const char *strategy,
		    const char *observed)
{
	char want[160];
	snprintf(want, sizeof(want), "\n%s,%s,%s,%s,1,yes,", scenario, strategy, observed, observed);
	return strstr(csv, want) != NULL;
}

Test(matrix, fast_subset_meets_expectations, .init = mktmp)
{
	char out[128];
	snprintf(out, sizeof(out), "%s/m", tmpdir);
	const char *args[] = { "matrix", "--scenarios", "holder-crash,check-then-delete,holder-pause",
			       "--strategies", "setnx,get-del,token-lua", "--check", "--out", out,
			       NULL };
	int rc = lb(args);
	cr_assert_eq(rc, 0, "matrix --check failed:\n%s", slurp("output"));
	const char *csv = slurp("m/matrix.csv");
	cr_assert(cell_is(csv, "holder-crash", "setnx", "deadlock"), "%s", csv);
	cr_assert(cell_is(csv, "check-then-delete", "get-del", "foreign-release"), "%s", csv);
	cr_assert(cell_is(csv, "holder-pause", "token-lua", "overlap"), "%s", csv);
	cr_assert(cell_is(csv, "holder-crash", "token-lua", "safe"), "%s", csv);
	const char *md = slurp("m/matrix.md");
	cr_assert(strstr(md, "✔ deadlock"));
	cr_assert_null(strstr(md, "✘ expected"), "%s", md);
}

Test(matrix, a_wrong_expectation_fails_the_check, .init = mktmp)
{
	char sc[128], out[128];
	snprintf(sc, sizeof(sc), "%s/wrong.ini", tmpdir);
	snprintf(out, sizeof(out), "%s/m", tmpdir);
	FILE *f = fopen(sc, "w");
	fprintf(f, "[scenario]\nsummary = token-lua claimed to overlap with no fault\n"
		   "description = a deliberately wrong expectation\n"
		   "[run]\nclients = 3\nduration = 1\nttl = 1000\nhold = 5\n"
		   "[expect]\ntoken-lua = overlap\nnone = overlap\n");
	fclose(f);
	const char *args[] = { "matrix", "--scenarios", sc, "--strategies", "token-lua,none",
			       "--check", "--out", out, NULL };
	cr_assert_eq(lb(args), 1, "--check passed a wrong expectation");
	const char *csv = slurp("m/matrix.csv");
	cr_assert(strstr(csv, "wrong,token-lua,overlap,safe,1,no,"), "%s", csv);
	cr_assert(strstr(csv, "wrong,none,overlap,overlap,1,yes,"), "%s", csv);
	cr_assert(strstr(slurp("m/matrix.md"), "✘ expected overlap, got safe"));
}

Test(matrix, faults_are_recorded_as_events, .init = mktmp)
{
	char out[128];
	snprintf(out, sizeof(out), "%s/r", tmpdir);
	const char *args[] = { "run", "--scenario", "holder-crash", "--strategy", "setnx",
			       "--out", out, "--no-status", NULL };
	cr_assert_eq(lb(args), 0);
	const char *ev = slurp("r/events.csv");
	cr_assert(strstr(ev, "t_ns,event,client,node,value\n"));
	cr_assert(strstr(ev, ",kill,"), "%s", ev);
	cr_assert(strstr(slurp("r/history.csv"), ",killed,"));
	const char *sum = slurp("r/summary.csv");
	cr_assert(strstr(sum, ",deadlock,deadlock"), "expected,observed at the end: %s", sum);
	const char *check[] = { "check", out, NULL };
	cr_assert_eq(lb(check), 0, "%s", slurp("output"));
}

Test(matrix, cli_flags_override_the_scenario, .init = mktmp)
{
	char out[128];
	snprintf(out, sizeof(out), "%s/o", tmpdir);
	const char *args[] = { "run", "--scenario", "baseline", "--strategy", "token-lua",
			       "--clients", "2", "--duration", "0.5", "--out", out, "--no-status",
			       NULL };
	cr_assert_eq(lb(args), 0);
	const char *sum = slurp("o/summary.csv");
	cr_assert(strstr(sum, "\ntoken-lua,baseline,2,0.5,1000,5,"), "%s", sum);
}

Test(matrix, scenario_for_another_strategy_is_refused, .init = mktmp)
{
	const char *args[] = { "run", "--scenario", "redlock-node-restart", "--strategy", "setnx",
			       NULL };
	cr_assert_eq(lb(args), 2);
	cr_assert(strstr(slurp("output"), "applies only to: redlock"));
}

/* Skipped is never passed: a cell that cannot run here (the clock shim is
 * missing) is reported as skipped with its reason, counted apart, and fails
 * --check unless --allow-skipped. */
Test(matrix, a_skipped_cell_fails_the_check, .init = mktmp)
{
	char out[128], out2[128];
	snprintf(out, sizeof(out), "%s/m", tmpdir);
	snprintf(out2, sizeof(out2), "%s/m2", tmpdir);
	setenv("LOCKBENCH_CLOCK_SHIM", "/nonexistent/libfakeclock.so", 1);
	const char *args[] = { "matrix", "--scenarios", "redlock-clock-jump", "--strategies", "redlock", "--check",
			       "--no-report", "--out", out, NULL };
	cr_assert_eq(lb(args), 1, "--check passed a cell it never ran:\n%s", slurp("output"));
	const char *o = slurp("output");
	cr_assert(strstr(o, "0 cells differ from expectations (0 runs failed), 1 skipped"), "%s", o);
	cr_assert(strstr(o, "libfakeclock.so"), "the reason is not given:\n%s", o);
	cr_assert(strstr(slurp("m/matrix.csv"), "\nredlock-clock-jump,redlock,overlap,skipped,1,skipped,"));
	const char *md = slurp("m/matrix.md");
	cr_assert(strstr(md, "⚠ skipped: redlock-clock-jump moves a server's clock"), "%s", md);
	cr_assert(strstr(md, "1 cell skipped"), "%s", md);
	const char *allowed[] = { "matrix", "--scenarios", "redlock-clock-jump", "--strategies", "redlock", "--check",
				  "--allow-skipped", "--no-report", "--out", out2, NULL };
	cr_assert_eq(lb(allowed), 0, "%s", slurp("output"));
}

/* A run that fails (here an adapter that cannot say hello: the run is void)
 * is no pass: the matrix says so on its line, in matrix.csv (observed
 * failed) and in matrix.md (the cell ✘, its failed runs counted), goes on
 * with the next cell and exits 1; before, its cell read "not run (the matrix
 * was interrupted)" and the summary "0 cells differ". */
Test(matrix, a_failed_run_is_no_pass_and_the_matrix_goes_on, .init = mktmp)
{
	char out[128], spec[PATH_MAX + 64];
	snprintf(out, sizeof(out), "%s/m", tmpdir);
	snprintf(spec, sizeof(spec), "exec:%s/tests/adapters/malformed.sh,setnx", fx_root());
	const char *args[] = { "matrix", "--scenarios", "holder-crash", "--strategies", spec,
			       "--check", "--no-report", "--out", out, NULL };
	cr_assert_eq(lb(args), 1, "a matrix with a void run passed:\n%s", slurp("output"));
	const char *o = slurp("output");
	cr_assert(strstr(o, "malformed.sh #1: FAILED (the run is void"), "%s", o);
	cr_assert(strstr(o, "x setnx         #1: deadlock        as expected"),
		  "the matrix stopped at the failed run:\n%s", o);
	cr_assert(strstr(o, "1 cell differs from expectations (1 run failed), 0 skipped"), "%s", o);
	const char *csv = slurp("m/matrix.csv");
	cr_assert(strstr(csv, "malformed.sh,-,failed,1,no,"), "%s", csv);
	const char *md = slurp("m/matrix.md");
	cr_assert(strstr(md, "✘ expected -, got 1 failed run (void"), "%s", md);
	cr_assert_null(strstr(md, "not run ("), "%s", md);
	const char *report[] = { "report", out, NULL };
	cr_assert_eq(lb(report), 0, "report cannot read a failed row:\n%s", slurp("output"));
	/* its one cell is dark (deadlock): no labels plot with nothing to write
	 * (gnuplot 5.4 died on one, SIGSEGV) */
	cr_assert(strstr(slurp("m/report.md"), "](matrix.png)"), "%s", slurp("m/report.md"));
	/* nothing to draw: said, and no chart */
	snprintf(out, sizeof(out), "%s/none", tmpdir);
	*strchr(spec, ',') = '\0'; /* the malformed program alone */
	const char *none[] = { "matrix", "--scenarios", "holder-crash", "--strategies", spec,
			       "--no-report", "--out", out, NULL };
	cr_assert_eq(lb(none), 1, "%s", slurp("output"));
	const char *report_none[] = { "report", out, NULL };
	cr_assert_eq(lb(report_none), 0, "%s", slurp("output"));
	cr_assert(strstr(slurp("none/report.md"), "No cell has an outcome to draw"), "%s",
		  slurp("none/report.md"));
}

Test(matrix, a_skipped_run_exits_3, .init = mktmp)
{
	char out[128];
	snprintf(out, sizeof(out), "%s/r", tmpdir);
	setenv("LOCKBENCH_CLOCK_SHIM", "/nonexistent/libfakeclock.so", 1);
	const char *args[] = { "run", "--scenario", "redlock-clock-jump", "--strategy", "redlock",
			       "--no-status", "--out", out, NULL };
	cr_assert_eq(lb(args), 3, "%s", slurp("output"));
	cr_assert(strstr(slurp("output"), "SKIPPED (could not run here): redlock-clock-jump"));
	const char *allowed[] = { "run", "--scenario", "redlock-clock-jump", "--strategy", "redlock",
				  "--no-status", "--allow-skipped", "--out", out, NULL };
	cr_assert_eq(lb(allowed), 0, "%s", slurp("output"));
	const char *cmp[] = { "compare", "--scenario", "redlock-clock-jump", "--strategies", "redlock",
			      "--no-status", "--out", out, NULL };
	cr_assert_eq(lb(cmp), 3, "%s", slurp("output"));
	cr_assert(strstr(slurp("r/compare.txt"), "redlock  skipped: "));
}

Test(matrix, a_skipped_chaos_seed_is_not_a_run, .init = mktmp)
{
	char sc[128], out[128];
	snprintf(sc, sizeof(sc), "%s/clock-chaos.ini", tmpdir);
	snprintf(out, sizeof(out), "%s/c", tmpdir);
	FILE *f = fopen(sc, "w");
	fprintf(f, "[scenario]\nsummary = a node clock jump among random kills\n"
		   "probabilistic = yes\n[run]\nclients = 2\nduration = 1\n"
		   "[fault jump]\naction = node-clock\nnodes = 0\noffset = 1000\nat = 0.5\n"
		   "[chaos]\nkills = 1\nfrom = 0.2\nuntil = 0.8\n[expect]\ntoken-lua = overlap\n");
	fclose(f);
	setenv("LOCKBENCH_CLOCK_SHIM", "/nonexistent/libfakeclock.so", 1);
	const char *args[] = { "chaos", "--scenario", sc, "--strategies", "token-lua", "--seeds", "2",
			       "--check", "--out", out, NULL };
	cr_assert_eq(lb(args), 1, "chaos --check passed seeds it never ran:\n%s", slurp("output"));
	const char *csv = slurp("c/chaos.csv");
	cr_assert(strstr(csv, "\ntoken-lua,1,skipped,"), "%s", csv);
	cr_assert_null(strstr(csv, ",safe,"), "a skipped seed was counted as safe: %s", csv);
	cr_assert(strstr(slurp("c/chaos.md"), "2 seeds skipped"));
}

/* A full disk: the file that could not be written is named with the reason,
 * the run exits 1, and what was written before stays readable (check agrees
 * with it). A 96 KiB tmpfs in a private mount namespace (unshare: nothing on
 * the host changes) holds the data files but not the charts. */
Test(matrix, a_full_disk_names_the_file_and_keeps_what_was_written, .init = mktmp)
{
	char cmd[1024], mnt[128];
	snprintf(mnt, sizeof(mnt), "%s/small", tmpdir);
	cr_assert_eq(mkdir(mnt, 0755), 0);
	snprintf(cmd, sizeof(cmd),
		 "unshare -rm sh -c 'mount -t tmpfs -o size=96k tmpfs %s && "
		 "\"%s\" run --strategy token-lua --clients 2 --duration 1 --no-status --seed 3 "
		 "--out %s/r; echo \"exit=$?\"; \"%s\" check %s/r; echo \"check=$?\"' > %s/output 2>&1",
		 mnt, getenv("LOCKBENCH_BIN"), mnt, getenv("LOCKBENCH_BIN"), mnt, tmpdir);
	cr_assert_eq(system(cmd), 0, "unshare failed: %s", slurp("output"));
	const char *o = slurp("output");
	cr_assert(strstr(o, "exit=1"), "a failed write must fail the run:\n%s", o);
	cr_assert(strstr(o, "failed: No space left on device"), "no file and reason named:\n%s", o);
	cr_assert(strstr(o, "summary.csv agrees with history.csv"), "%s", o);
	cr_assert(strstr(o, "check=0"), "%s", o);
}

/* --jobs runs cells side by side and --lesson-repeat runs the cells lesson
 * pages show more often: every row is there, each class as expected, and
 * matrix.md marks the lesson cells. */
Test(matrix, jobs_and_lesson_repeats, .init = mktmp)
{
	char out[128];
	snprintf(out, sizeof(out), "%s/m", tmpdir);
	const char *args[] = { "matrix", "--scenarios", "baseline,holder-crash", "--strategies",
			       "setnx,token-lua", "--lesson-repeat", "2", "--jobs", "2", "--check",
			       "--no-report", "--out", out, NULL };
	int rc = lb(args);
	cr_assert_eq(rc, 0, "matrix --check failed:\n%s", slurp("output"));
	const char *csv = slurp("m/matrix.csv");
	/* baseline shows token-lua (not setnx); holder-crash shows both */
	cr_assert(strstr(csv, "\nbaseline,token-lua,safe,safe,2,yes,"), "%s", csv);
	cr_assert_null(strstr(csv, "\nbaseline,setnx,safe,safe,2,"), "%s", csv);
	cr_assert(strstr(csv, "\nbaseline,setnx,safe,safe,1,yes,"), "%s", csv);
	cr_assert(strstr(csv, "\nholder-crash,setnx,deadlock,deadlock,2,yes,"), "%s", csv);
	cr_assert(strstr(csv, "\nholder-crash,token-lua,safe,safe,2,yes,"), "%s", csv);
	const char *md = slurp("m/matrix.md");
	cr_assert(strstr(md, "2 for the cells lesson pages show (marked ★)"), "%s", md);
	cr_assert(strstr(md, "| ★ ✔ deadlock"), "%s", md);
	cr_assert(strstr(slurp("output"), "(2 for the lesson cells: 7 runs)"), "%s", slurp("output"));
	const char *bad[] = { "matrix", "--jobs", "0", NULL };
	cr_assert_eq(lb(bad), 2);
	cr_assert(strstr(slurp("output"), "--jobs '0': expected 1 to 16"));
}

/* A kill -9 of a matrix with workers: the workers, their servers and their
 * clients all go with it. */
Test(matrix, kill_9_of_a_parallel_matrix_leaves_nothing, .init = mktmp)
{
	char dir[128], out[160];
	pid_t pids[128];
	snprintf(dir, sizeof(dir), "%s/k9", tmpdir);
	snprintf(out, sizeof(out), "%s/output", tmpdir);
	fx_become_subreaper();
	const char *args[] = { "matrix", "--scenarios", "baseline", "--strategies",
			       "token-lua,set-nx-px", "--jobs", "2", "--out", dir, NULL };
	pid_t pid = fx_spawn_lockbench(args, out, out);
	/* the matrix, 2 workers, each with a server, a resource and 4 clients */
	int n = fx_wait_descendants(pid, pids, 128, 13, 10000);
	cr_assert_geq(n, 13, "expected the matrix, 2 workers and their runs, found %d processes", n);
	fx_kill9_leaves_nothing(pid, pids, n);
}

/* Ctrl-C in the middle of a cell: the run cut short is written as
 * interrupted with pass "-" (never compared with its expectation, so neither
 * a pass nor a difference), and matrix --check fails with 130. */
Test(matrix, an_interrupted_cell_is_not_compared, .init = mktmp)
{
	char out[128], log[160];
	int status;
	snprintf(out, sizeof(out), "%s/m", tmpdir);
	snprintf(log, sizeof(log), "%s/output", tmpdir);
	const char *args[] = { "matrix", "--scenarios", "holder-crash", "--strategies", "token-lua",
			       "--check", "--no-report", "--out", out, NULL };
	pid_t pid = fx_spawn_lockbench(args, log, log);
	lb_sleep_ns(2000 * LB_NS_PER_MS);
	kill(pid, SIGINT);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 130, "exit %d:\n%s",
		  WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp("output"));
	const char *csv = slurp("m/matrix.csv");
	cr_assert(strstr(csv, "\nholder-crash,token-lua,safe,interrupted,1,-,"), "%s", csv);
	cr_assert(strstr(slurp("output"), "interrupted (not compared"), "%s", slurp("output"));
}

/* Every strategy lockbench lists fits a matrix, a compare and a chaos run
 * by default: with 77 listed (the libraries and their versions), the
 * default matrix once wrote past a table of 32 and died of SIGBUS before
 * saying anything. Here each gets as far as refusing a non-empty --out. */
Test(matrix, every_listed_strategy_fits_the_defaults, .init = mktmp)
{
	char dir[160];
	snprintf(dir, sizeof(dir), "%s/full", tmpdir);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/full/x", tmpdir);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/full", tmpdir);
	const char *list[] = { "list", NULL };
	cr_assert_eq(lb(list), 0);
	int n = 0;
	for (const char *p = slurp("output"); (p = strstr(p, "\n  ")); p++)
		n += p[3] >= 'a' && p[3] <= 'z';
	cr_assert_gt(n, 32, "only %d strategies listed: the test shows nothing", n);
	const char *matrix[] = { "matrix", "--out", dir, NULL };
	cr_assert_eq(lb(matrix), 2, "%s", slurp("output"));
	cr_assert(strstr(slurp("output"), "not empty"), "%s", slurp("output"));
	const char *compare[] = { "compare", "--scenario", "baseline", "--out", dir, NULL };
	cr_assert_eq(lb(compare), 2, "%s", slurp("output"));
	cr_assert(strstr(slurp("output"), "not empty"), "%s", slurp("output"));
}
