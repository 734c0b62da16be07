/* test_report.c - charts from a tiny real run are valid PNGs; the report's
 * violation paragraphs tell what the history says, on a constructed case. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "util.h"
#include "report.h"
#include "results.h"
#include "shared.h"

FX_SUITE(report, 60);

static char tmpdir[64];

static void mktmp(void)
{
	strcpy(tmpdir, "/tmp/lbtest-report-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
}

static void assert_png(const char *dir, const char *name)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	unsigned char head[8];
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_eq(stat(path, &st), 0, "%s was not drawn", path);
	cr_assert_gt(st.st_size, 2000, "%s is suspiciously small (%lld bytes)", path,
		     (long long)st.st_size);
	FILE *f = fopen(path, "rb");
	cr_assert_eq(fread(head, 1, 8, f), 8);
	fclose(f);
	cr_assert_eq(memcmp(head, sig, 8), 0, "%s is not a PNG", path);
}

Test(report, a_tiny_run_draws_valid_charts, .init = mktmp)
{
	const char *bin = getenv("LOCKBENCH_BIN");
	char dir[128];
	int status;

	cr_assert_not_null(bin);
	snprintf(dir, sizeof(dir), "%s/run", tmpdir);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, STDOUT_FILENO);
		execl(bin, bin, "run", "--strategy", "set-nx-px", "--scenario", "holder-pause",
		      "--duration", "3.5", "--out", dir, "--no-status", (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	fx_recheck(dir);
	assert_png(dir, "timeline.png");
	assert_png(dir, "latency.png");
	assert_png(dir, "fairness.png");
	char path[256];
	snprintf(path, sizeof(path), "%s/timeline.svg", dir);
	cr_assert_eq(access(path, R_OK), 0, "no SVG beside the PNG");
	snprintf(path, sizeof(path), "%s/timeline.gp", dir);
	cr_assert_eq(access(path, R_OK), 0, "the gnuplot script must stay beside the chart");
	snprintf(path, sizeof(path), "%s/report.md", dir);
	FILE *f = fopen(path, "r");
	char buf[16384];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	cr_assert(strstr(buf, "![timeline](timeline.png)"));
	cr_assert(strstr(buf, "paused (SIGSTOP)"), "the pause must be told: %s", buf);
}

#define MS LB_NS_PER_MS

static unsigned png_width(const char *dir, const char *name)
{
	unsigned char head[24];
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s was not drawn", path);
	cr_assert_eq(fread(head, 1, 24, f), 24);
	fclose(f);
	return (unsigned)head[16] << 24 | (unsigned)head[17] << 16 | (unsigned)head[18] << 8 | head[19];
}

/* The timeline's key is the same whatever the run held; a partition names its
 * nodes; faults at one instant do not share a label position; a release that
 * hangs is drawn (the client still holds the lock); the fairness chart shows
 * only the clients there are; --chart-scale makes every chart larger. */
Test(report, charts_say_the_same_for_every_run, .init = mktmp)
{
	static struct lb_section sec[] = {
		{ .client = 0, .key = 0, .enter_ns = 0, .exit_ns = 700 * MS, .release_ns = 2700 * MS,
		  .outcome = LB_OUT_RELEASED, .fence = -1 },
		{ .client = 1, .key = 0, .enter_ns = 2710 * MS, .exit_ns = 2800 * MS,
		  .release_ns = 2801 * MS, .outcome = LB_OUT_RELEASED, .fence = -1 },
	};
	static struct lb_event ev[] = {
		{ .t_ns = 0, .kind = LB_EV_SLOW, .client = 0, .node = -1, .value = 2000 },
		{ .t_ns = 0, .kind = LB_EV_PARTITION, .client = 0, .node = -1, .value = (1 << 3) | (1 << 4) },
		{ .t_ns = 1500 * MS, .kind = LB_EV_NODE_KILL, .client = -1, .node = 2, .value = 0 },
	};
	struct lb_run_files rf = { .sec = sec, .n = 2, .ev = ev, .n_ev = 3, .clients = 2,
				   .keys = 1, .ttl_ms = 5000, .elapsed_s = 3 };
	bool drawn = false;
	char why[400] = "";
	uint64_t lat_ns = 2 * MS;

	snprintf(rf.dir, sizeof(rf.dir), "%s", tmpdir);
	lb_hist_add(&rf.lat, lat_ns);
	cr_assert_eq(lb_charts_run(&rf, &drawn, why, sizeof(why)), 0, "see %s/gnuplot.log", tmpdir);
	cr_assert(drawn);
	const char *gp = fx_slurp(tmpdir, "timeline.gp");
	static const char *const key[] = { "'inside'", "'two or more inside'",
					   "'releasing (still holds the lock)'", "'lease ran out",
					   "'killed'", "'deleted another client''s lock'",
					   "'release found the lock gone'" };
	for (size_t i = 0; i < sizeof(key) / sizeof(key[0]); i++) {
		const char *k = strstr(gp, key[i]);
		cr_assert(k && strstr(k - 60 > gp ? k - 60 : gp, "keyentry"),
			  "no key entry %s in a run without one:\n%s", key[i], gp);
	}
	cr_assert(strstr(gp, "'partition c0 | n3,n4'"), "%s", gp);
	cr_assert(strstr(gp, "'slow c0' at 0.000000, graph 0.98 rotate by 90 right offset character 1.3,0"), "%s", gp);
	/* at the same instant: the second label steps right by a label's height
	 * (1.6 % of the 3 s axis), a fault 1.5 s later stays on its line */
	cr_assert(strstr(gp, "'partition c0 | n3,n4' at 0.048000, graph 0.98 rotate by 90 right offset character 1.3,0"), "%s", gp);
	cr_assert(strstr(gp, "set arrow from 0.000000, graph 0 to 0.000000, graph 1"), "%s", gp);
	cr_assert(strstr(gp, " at 1.500000, graph 0.98 rotate by 90 right offset character 1.3,0"), "%s", gp);
	cr_assert(strstr(fx_slurp(tmpdir, "timeline-releasing.dat"), "\n0 0.700000 2.000000\n"),
		  "the hung release is not drawn");
	cr_assert(strstr(fx_slurp(tmpdir, "fairness.gp"), "set xrange [-0.5:1.5]"));
	unsigned w1 = png_width(tmpdir, "timeline.png");
	cr_assert_eq(lb_chart_set_scale(2), 0);
	cr_assert_eq(lb_charts_run(&rf, &drawn, why, sizeof(why)), 0);
	cr_assert_eq(lb_chart_set_scale(1), 0);
	cr_assert_eq(png_width(tmpdir, "timeline.png"), 2 * w1, "--chart-scale 2: %u, not 2 x %u",
		     png_width(tmpdir, "timeline.png"), w1);
	cr_assert_eq(lb_chart_set_scale(9), LB_EINVAL);
	cr_assert_eq(lb_chart_set_scale(0.1), LB_EINVAL);
}

/* Client 1 paused 0.5..4.0 s with a 2 s lease; client 2 gets in at 2.01 s. */
/* A run too long to draw whole shows a window of 3000 sections; labels of
 * faults at one instant are spaced on that window's axis, not the run's. */
/* The x, "the lease ran out while inside", stands where the lock's own
 * account says its lease ended (extensions included), never at enter + TTL
 * for a lease that was extended, and nowhere for a lock that does not say:
 * the key says so instead. */
Test(report, the_lease_mark_is_drawn_only_where_the_lease_end_is_known, .init = mktmp)
{
	static struct lb_section sec[] = {
		/* extended to 2.5 s, inside until 2 s: its lease never ran out */
		{ .client = 0, .key = 0, .enter_ns = 0, .exit_ns = 2000 * MS, .release_ns = 2001 * MS,
		  .outcome = LB_OUT_RELEASED, .fence = -1, .lease_end_ns = 2500 * MS },
		/* its lease ran out at 2.3 s, while it was inside until 2.8 s */
		{ .client = 1, .key = 1, .enter_ns = 1300 * MS, .exit_ns = 2800 * MS,
		  .release_ns = 2801 * MS, .outcome = LB_OUT_LOST, .fence = -1, .lease_end_ns = 2300 * MS },
		/* no TTL: no mark */
		{ .client = 2, .key = 2, .enter_ns = 0, .exit_ns = 2900 * MS, .release_ns = 2901 * MS,
		  .outcome = LB_OUT_RELEASED, .fence = -1, .lease_end_ns = LB_LEASE_NEVER },
	};
	struct lb_run_files rf = { .sec = sec, .n = 3, .clients = 3, .keys = 3, .ttl_ms = 1000,
				   .elapsed_s = 3 };
	bool drawn = false;
	char why[400] = "";

	snprintf(rf.dir, sizeof(rf.dir), "%s", tmpdir);
	lb_hist_add(&rf.lat, 2 * MS);
	cr_assert_eq(lb_charts_run(&rf, &drawn, why, sizeof(why)), 0, "see %s/gnuplot.log", tmpdir);
	const char *marks = fx_slurp(tmpdir, "timeline-marks.dat");
	cr_assert(strstr(marks, "2.300000 1 1\n"), "no mark where client 1's lease ran out:\n%s", marks);
	cr_assert(!strstr(marks, " 0 1\n") && !strstr(marks, " 2 1\n"),
		  "a mark for a lease that did not run out:\n%s", marks);
	cr_assert(strstr(fx_slurp(tmpdir, "timeline.gp"), "title 'lease ran out while inside'"));
	/* a lock that extends its lease without saying when: nothing drawn, and said */
	sec[1].lease_end_ns = LB_LEASE_UNKNOWN;
	cr_assert_eq(lb_charts_run(&rf, &drawn, why, sizeof(why)), 0);
	marks = fx_slurp(tmpdir, "timeline-marks.dat");
	cr_assert(!strstr(marks, " 1 1\n"), "a mark for a lease whose end is unknown:\n%s", marks);
	cr_assert(strstr(fx_slurp(tmpdir, "timeline.gp"), "not drawn: unknown for this lock"));
	/* the page's sections carry the same end, null where unknown */
	cr_assert_eq(lb_report_html(&rf), 0);
	const char *html = fx_slurp(tmpdir, "report.html");
	cr_assert(strstr(html, ",2.500000]"), "client 0's lease end not on the page");
	cr_assert(strstr(html, ",null]"), "an unknown lease end must be null on the page");
}

/* A name is data: a summary whose strategy, scenario and fairness fields
 * hold gnuplot code (system(), backquotes, quotes of both kinds) draws its
 * charts with those words as titles, and runs nothing. */
Test(report, hostile_names_never_become_gnuplot_code, .init = mktmp)
{
	static struct lb_section sec[] = {
		{ .client = 0, .key = 0, .enter_ns = 0, .exit_ns = 10 * MS, .release_ns = 11 * MS,
		  .outcome = LB_OUT_RELEASED, .fence = -1 },
	};
	struct lb_run_files rf = { .sec = sec, .n = 1, .clients = 1, .keys = 1, .ttl_ms = 1000,
				   .elapsed_s = 1 };
	static const char *const hostile[][2] = {
		{ "strategy", "x\"; system(\"touch PWNED1\"); set title \"y" },
		{ "scenario", "q'; system('touch PWNED2'); '" },
		{ "fairness", "1'; system('touch PWNED3'); `touch PWNED4` '" },
	};
	for (size_t i = 0; i < 3; i++) {
		snprintf(rf.sum.name[rf.sum.n], sizeof(rf.sum.name[0]), "%s", hostile[i][0]);
		snprintf(rf.sum.value[rf.sum.n++], sizeof(rf.sum.value[0]), "%s", hostile[i][1]);
	}
	bool drawn = false;
	char why[400] = "";
	snprintf(rf.dir, sizeof(rf.dir), "%s", tmpdir);
	lb_hist_add(&rf.lat, 2 * MS);
	cr_assert_eq(lb_charts_run(&rf, &drawn, why, sizeof(why)), 0, "see %s/gnuplot.log", tmpdir);
	cr_assert(drawn, "the charts must still be drawn");
	for (int k = 1; k <= 4; k++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/PWNED%d", tmpdir, k);
		cr_assert_neq(access(path, F_OK), 0, "a name ran code: %s exists", path);
	}
	cr_assert(strstr(fx_slurp(tmpdir, "timeline.gp"), "set title 'x\"; system(\"touch PWNED1\"); set title \"y under q\xe2\x80\x99; system(\xe2\x80\x99touch PWNED2\xe2\x80\x99); \xe2\x80\x99: who"));
}

Test(report, a_window_spaces_labels_on_its_own_axis, .init = mktmp)
{
	enum { N = 4000 };
	static struct lb_section sec[N];
	for (int i = 0; i < N; i++) /* 10 ms each, one after another: 40 s */
		sec[i] = (struct lb_section){ .client = i % 2, .key = 0, .enter_ns = i * 10 * MS,
					      .exit_ns = i * 10 * MS + 5 * MS,
					      .release_ns = i * 10 * MS + 6 * MS,
					      .outcome = LB_OUT_RELEASED, .fence = -1 };
	sec[N - 1].enter_ns = sec[N - 2].enter_ns + 2 * MS; /* the violation: 39.982 s */
	sec[N - 1].exit_ns = sec[N - 1].enter_ns + 5 * MS;
	sec[N - 1].release_ns = sec[N - 1].enter_ns + 6 * MS;
	static struct lb_event ev[] = {
		{ .t_ns = 39800 * MS, .kind = LB_EV_SLOW, .client = 0, .node = -1, .value = 2000 },
		{ .t_ns = 39800 * MS, .kind = LB_EV_PAUSE, .client = 1, .node = -1, .value = 2000 },
	};
	struct lb_run_files rf = { .sec = sec, .n = N, .ev = ev, .n_ev = 2, .clients = 2,
				   .keys = 1, .ttl_ms = 5000, .elapsed_s = 40 };
	bool drawn = false;
	char why[400] = "";

	snprintf(rf.dir, sizeof(rf.dir), "%s", tmpdir);
	lb_hist_add(&rf.lat, 2 * MS);
	cr_assert_eq(lb_charts_run(&rf, &drawn, why, sizeof(why)), 0, "see %s/gnuplot.log", tmpdir);
	const char *gp = fx_slurp(tmpdir, "timeline.gp");
	cr_assert(strstr(gp, "(sections 3950-4000 of 4000)"), "%s", gp);
	/* the window: 39.49 s to 39.988 s; 1.6 % of it is 7.97 ms (of 40 s: 640 ms) */
	cr_assert(strstr(gp, "'pause c1' at 39.807968, graph 0.98"), "%s", gp);
}

/* A holder paused past its lease (0.5 s to 4 s) while client 2 comes in at
 * @second_in: the history both story tests tell. */
static struct lb_run_files paused_holder(int64_t second_in)
{
	static struct lb_section sec[2];
	static struct lb_event ev[] = {
		{ .t_ns = 500 * MS, .kind = LB_EV_PAUSE, .client = 1, .node = -1, .value = 3500 },
		{ .t_ns = 4000 * MS, .kind = LB_EV_RESUME, .client = 1, .node = -1, .value = 0 },
	};
	sec[0] = (struct lb_section){ .client = 1, .key = 0, .seq = 0, .acquire_start_ns = 0,
				      .enter_ns = 10 * MS, .exit_ns = 4000 * MS, .release_ns = 4001 * MS,
				      .outcome = LB_OUT_LOST, .fence = -1 };
	sec[1] = (struct lb_section){ .client = 2, .key = 0, .seq = 0, .acquire_start_ns = 20 * MS,
				      .enter_ns = second_in, .exit_ns = 4500 * MS,
				      .release_ns = 4501 * MS, .outcome = LB_OUT_RELEASED, .fence = -1 };
	return (struct lb_run_files){ .sec = sec, .n = 2, .ev = ev, .n_ev = 2, .clients = 3,
				      .keys = 1, .ttl_ms = 2000, .elapsed_s = 5 };
}

Test(report, violation_paragraphs_match_the_history)
{
	struct lb_run_files rf = paused_holder(2010 * MS);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_eq(lb_report_violations(f, &rf, 10), 1);
	fclose(f);
	cr_assert(strstr(text, "2.010 s: client 1 and client 2 inside at once"), "%s", text);
	cr_assert(strstr(text, "with a 2.0 s lease, which expired at 2.010 s"), "%s", text);
	cr_assert(strstr(text, "paused (SIGSTOP) at 0.500 s and resumed at 4.000 s, 3.5 s later"), "%s", text);
	cr_assert(strstr(text, "Client 2 acquired at 2.010 s before client 1 left at 4.000 s"), "%s", text);
	cr_assert(strstr(text, "found the lock no longer its own"), "%s", text);
	free(text);
}

struct told {
	int n;
	int64_t t[16];
	char text[16][1024];
};

static void collect(void *arg, int64_t t_ns, const char *text)
{
	struct told *w = arg;
	if (w->n < 16) {
		w->t[w->n] = t_ns;
		snprintf(w->text[w->n], sizeof(w->text[0]), "%s", text);
		w->n++;
	}
}

/* The step-through tells each moment when it happens and nothing later: the
 * lease running out, the overlap (the frozen holder "still frozen", not yet
 * resumed) and the release are steps of their own, in time order. */
Test(report, the_steps_tell_only_what_has_happened_by_then)
{
	struct lb_run_files rf = paused_holder(2110 * MS);
	static struct told w;

	cr_assert_eq(lb_report_story(&rf, 100, collect, &w), 1);
	cr_assert_eq(w.n, 3, "lease, overlap, release: %d steps", w.n);
	cr_assert_eq(w.t[0], 2010 * MS);
	cr_assert(strstr(w.text[0], "2.010 s: client 1's lease runs out while it is still inside"),
		  "%s", w.text[0]);
	cr_assert_eq(w.t[1], 2110 * MS);
	cr_assert(strstr(w.text[1], "2.110 s: client 1 and client 2 inside at once"), "%s", w.text[1]);
	cr_assert(strstr(w.text[1], "is still frozen"), "%s", w.text[1]);
	cr_assert_null(strstr(w.text[1], "4.00"), "the overlap must not tell the future: %s", w.text[1]);
	cr_assert_null(strstr(w.text[1], "resumed"), "%s", w.text[1]);
	cr_assert_eq(w.t[2], 4001 * MS);
	cr_assert(strstr(w.text[2], "4.001 s: client 1's release finds the lock no longer its own"),
		  "%s", w.text[2]);
	cr_assert(strstr(w.text[2], "Client 2, inside since 2.110 s, keeps it"), "%s", w.text[2]);
}

/* Incidents are told in time order, whatever found them first, and a foreign
 * release that let nobody in does not say it did (issue: a 3.529 s bullet
 * was printed before a 3.508 s one). */
Test(report, incidents_are_told_in_time_order)
{
	static struct lb_section sec[] = {
		/* client 2 leaves, then deletes client 0's lock at 0.9 s (check-then-delete) */
		{ .client = 2, .key = 0, .enter_ns = 500 * MS, .exit_ns = 600 * MS,
		  .release_ns = 900 * MS, .outcome = LB_OUT_FOREIGN, .fence = -1 },
		{ .client = 0, .key = 0, .enter_ns = 700 * MS, .exit_ns = 1000 * MS,
		  .release_ns = 1001 * MS, .outcome = LB_OUT_LOST, .fence = -1 },
		/* client 1 outlives its lease; client 2 comes in at 2.6 s */
		{ .client = 1, .key = 0, .enter_ns = 1500 * MS, .exit_ns = 3000 * MS,
		  .release_ns = 3000 * MS, .outcome = LB_OUT_FOREIGN, .fence = -1 },
		{ .client = 2, .key = 0, .enter_ns = 2600 * MS, .exit_ns = 3500 * MS,
		  .release_ns = 3501 * MS, .outcome = LB_OUT_LOST, .fence = -1 },
	};
	struct lb_run_files rf = { .sec = sec, .n = 4, .clients = 3, .keys = 1, .ttl_ms = 1000,
				   .elapsed_s = 4 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_eq(lb_report_violations(f, &rf, 10), 2);
	fclose(f);
	const char *late = strstr(text, "0.900 s: client 2 deleted another client's lock");
	const char *both = strstr(text, "2.600 s: client 1 and client 2 inside at once");
	cr_assert(late && both, "%s", text);
	cr_assert(late < both, "the 0.9 s incident must be told first:\n%s", text);
	cr_assert(strstr(text, "deleted client 2's lock (taken at 2.600 s); nobody else came in "
			       "before client 2 left at 3.500 s"), "%s", text);
	cr_assert_null(strstr(text, "beside it"), "%s", text);
	free(text);
	/* with max 1, the first in time is the one told */
	text = NULL;
	f = open_memstream(&text, &len);
	lb_report_violations(f, &rf, 1);
	fclose(f);
	cr_assert(strstr(text, "0.900 s: client 2 deleted") && strstr(text, "1 more incident"), "%s", text);
	free(text);
}

Test(report, an_orphaned_lock_is_told)
{
	static struct lb_section sec[] = {
		{ .client = 0, .key = 0, .enter_ns = 100 * MS, .exit_ns = 300 * MS,
		  .release_ns = -1, .outcome = LB_OUT_KILLED, .fence = -1 },
	};
	static struct lb_run_files rf = { .sec = sec, .n = 1, .clients = 2, .keys = 1, .ttl_ms = 0,
					  .elapsed_s = 3, .sum = { .n = 1, .name = { "recovered" },
								   .value = { "no" } } };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_eq(lb_report_violations(f, &rf, 10), 1);
	fclose(f);
	cr_assert(strstr(text, "0.300 s: client 0 died holding the lock"), "%s", text);
	cr_assert(strstr(text, "orphaned (deadlock)"), "%s", text);
	free(text);
	/* nobody tried it once its lease could have run out: no deadlock is claimed */
	strcpy(rf.sum.value[0], "n/a");
	text = NULL;
	f = open_memstream(&text, &len);
	lb_report_violations(f, &rf, 10);
	fclose(f);
	cr_assert_null(strstr(text, "deadlock"), "%s", text);
	cr_assert(strstr(text, "whether it came back is unknown"), "%s", text);
	free(text);
}

Test(report, a_clean_history_has_no_violation)
{
	static struct lb_section sec[] = {
		{ .client = 0, .key = 0, .enter_ns = 0, .exit_ns = 10 * MS, .release_ns = 11 * MS,
		  .outcome = LB_OUT_RELEASED, .fence = -1 },
		{ .client = 1, .key = 0, .enter_ns = 11 * MS, .exit_ns = 20 * MS, .release_ns = 21 * MS,
		  .outcome = LB_OUT_RELEASED, .fence = -1 },
	};
	struct lb_run_files rf = { .sec = sec, .n = 2, .clients = 2, .keys = 1, .ttl_ms = 1000,
				   .elapsed_s = 1 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	cr_assert_eq(lb_report_violations(f, &rf, 10), 0);
	fclose(f);
	cr_assert_eq(len, 0, "nothing to tell, but it said: %s", text);
	free(text);
}

Test(report, without_gnuplot_the_report_says_so, .init = mktmp)
{
	const char *bin = getenv("LOCKBENCH_BIN");
	char dir[128], path[160], buf[8192];
	int status;

	cr_assert_not_null(bin);
	snprintf(dir, sizeof(dir), "%s/nognuplot", tmpdir);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, STDOUT_FILENO);
		setenv("PATH", "/nonexistent", 1); /* redis-server by absolute path, gnuplot gone */
		setenv("LOCKBENCH_REDIS_SERVER", "/usr/bin/redis-server", 1);
		execl(bin, bin, "run", "--strategy", "token-lua", "--duration", "0.5", "--clients", "2",
		      "--out", dir, "--no-status", (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a missing gnuplot is not a failure");
	fx_recheck(dir);
	snprintf(path, sizeof(path), "%s/report.md", dir);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	cr_assert(strstr(buf, "No chart was drawn: gnuplot is not installed (the Debian package gnuplot-nox)"), "%s", buf);
	cr_assert(strstr(buf, "| critical sections |"), "the tables must still be there: %s", buf);
	snprintf(path, sizeof(path), "%s/timeline.gp", dir);
	cr_assert_eq(access(path, R_OK), 0, "the script is written for later");
}

/* A chart that cannot be drawn is said as it is, never as "not installed"
 * (every gnuplot failure read so): an output path that is a directory is
 * named, in report.md and on the terminal (issue 51, item 6). */
Test(report, a_gnuplot_that_fails_is_said_as_it_failed, .init = mktmp)
{
	char dir[128], png[160];
	snprintf(dir, sizeof(dir), "%s/gpfails", tmpdir);
	const char *run[] = { "run", "--strategy", "token-lua", "--duration", "0.5", "--clients", "2",
			      "--out", dir, "--no-status", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, run), 0);
	snprintf(png, sizeof(png), "%s/timeline.png", dir);
	cr_assert_eq(unlink(png), 0);
	cr_assert_eq(mkdir(png, 0755), 0);
	const char *again[] = { "report", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, again), 1, "%s", fx_slurp(tmpdir, "output"));
	const char *md = fx_slurp(dir, "report.md");
	cr_assert(!strstr(md, "not installed"), "%s", md);
	/* what is in gnuplot's way is said before it runs, naming it */
	cr_assert(strstr(md, "No chart was drawn: ") && strstr(md, "timeline.png is a directory, not a "
			 "file lockbench may write its chart to"), "%s", md);
	cr_assert(strstr(fx_slurp(tmpdir, "output"), "timeline.png is a directory"), "%s",
		  fx_slurp(tmpdir, "output"));
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

/* gnuplot writes its charts itself, following a link and waiting on a FIFO:
 * a run directory someone sent, with timeline.png a link to a file of yours
 * and gnuplot.log a FIFO, is re-reported without writing through the link
 * (it overwrote the target) or hanging (report ignored Ctrl-C, for ever). */
Test(report, a_link_or_fifo_in_the_run_is_never_written_through, .init = mktmp)
{
	char dir[128], png[160], log[160], keep[160];
	snprintf(dir, sizeof(dir), "%s/planted", tmpdir);
	const char *run[] = { "run", "--strategy", "token-lua", "--duration", "0.5", "--clients", "2",
			      "--out", dir, "--no-status", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, run), 0);
	snprintf(keep, sizeof(keep), "%s/precious", tmpdir);
	write_file(tmpdir, "precious", "PRECIOUS\n");
	snprintf(png, sizeof(png), "%s/timeline.png", dir);
	snprintf(log, sizeof(log), "%s/gnuplot.log", dir);
	cr_assert_eq(unlink(png), 0);
	cr_assert_eq(symlink(keep, png), 0);
	cr_assert_eq(unlink(log), 0);
	cr_assert_eq(mkfifo(log, 0644), 0);
	const char *again[] = { "report", dir, NULL };
	int64_t t0 = lb_now_ns();
	cr_assert_eq(fx_lockbench(tmpdir, again), 0, "%s", fx_slurp(tmpdir, "output"));
	cr_assert_lt(lb_now_ns() - t0, 60 * LB_NS_PER_S, "report waited on the FIFO");
	cr_assert_str_eq(fx_slurp(tmpdir, "precious"), "PRECIOUS\n", "written through the link");
	struct stat st;
	cr_assert(lstat(png, &st) == 0 && S_ISREG(st.st_mode), "the chart is a file of its own");
}


/* A compare directory's report keeps the table and the order the strategies
 * were given in (it was alphabetical and left compare.txt out), and says in a
 * line what each run is and what went wrong in it. */
Test(report, a_compare_report_keeps_the_table_and_the_order, .init = mktmp)
{
	char sub[128];
	write_file(tmpdir, "compare.txt",
		   "strategy       sections   per sec\nzeta                 10       1.0\n"
		   "alpha                20       2.0\n");
	const char *names[] = { "alpha", "zeta" };
	for (int i = 0; i < 2; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", tmpdir, names[i]);
		cr_assert_eq(mkdir(sub, 0755), 0);
		char text[512];
		snprintf(text, sizeof(text), "# %s under x\n\n%s ran here.\n\n| figure | value |\n"
			 "|---|---|\n\n## What went wrong\n\n- **1.0 s: %s went wrong.** Details.\n",
			 names[i], names[i], names[i]);
		write_file(sub, "report.md", text);
	}
	cr_assert_eq(lb_report_dir(tmpdir), 0);
	const char *md = fx_slurp(tmpdir, "report.md");
	const char *z = strstr(md, "## [zeta]"), *a = strstr(md, "## [alpha]");
	cr_assert(z && a && z < a, "compare.txt's order (zeta, alpha) is lost:\n%s", md);
	cr_assert(strstr(md, "zeta                 10       1.0"), "the table is missing:\n%s", md);
	cr_assert(strstr(md, "alpha ran here.") && strstr(md, "**1.0 s: alpha went wrong.**"),
		  "no words for a run:\n%s", md);
}

/* The split-brain window: from the first section entered on a server other
 * than the first primary to the last entered on the first primary after it;
 * a section's server is its client's latest primary-seen event before it. */
Test(report, split_brain_window_from_the_primaries_clients_used)
{
	const int64_t S = LB_NS_PER_S;
	struct lb_event ev[] = {
		{ .t_ns = 0, .kind = LB_EV_PRIMARY_SEEN, .client = 0, .value = LB_PART_PRIMARY },
		{ .t_ns = 0, .kind = LB_EV_PRIMARY_SEEN, .client = 1, .value = LB_PART_PRIMARY },
		{ .t_ns = 3 * S, .kind = LB_EV_SWITCH_MASTER, .client = -1, .value = 1 },
		{ .t_ns = 4 * S, .kind = LB_EV_PRIMARY_SEEN, .client = 1, .value = 1 },
		{ .t_ns = 9 * S, .kind = LB_EV_PRIMARY_SEEN, .client = 0, .value = 1 },
	};
	struct lb_section sec[] = {
		{ .client = 0, .enter_ns = 1 * S }, { .client = 1, .enter_ns = 2 * S },
		{ .client = 1, .enter_ns = 5 * S }, { .client = 0, .enter_ns = 6 * S },
		{ .client = 0, .enter_ns = 8 * S }, { .client = 0, .enter_ns = 10 * S },
	};
	int64_t from = 0, to = 0;
	int server = -1;
	cr_assert(lb_split_brain_window(sec, 6, ev, 5, &from, &to, &server));
	cr_assert_eq(from, 5 * S, "the first grant by replica 0");
	cr_assert_eq(to, 8 * S, "the last grant by the old primary after it (10 s is on replica 0)");
	cr_assert_eq(server, 1);
	/* everyone moved together: no window */
	cr_assert_not(lb_split_brain_window(sec, 2, ev, 5, &from, &to, &server));
	/* no primary-seen events (a single node): no window, never 0 */
	cr_assert_not(lb_split_brain_window(sec, 6, ev + 2, 1, &from, &to, &server));
}

/* The time clients used a demoted primary (issue 49): any client's stretch on
 * a server once a switch named another, or once it was told to follow one
 * (+convert-to-slave), until that client took another; the union over the
 * clients, cut at the run's end; -1 when nobody said which server it took. */
Test(report, demoted_primary_from_the_switch_to_each_clients_move)
{
	const int64_t S = LB_NS_PER_S;
	struct lb_event ev[] = {
		{ .t_ns = 0, .kind = LB_EV_PRIMARY_SEEN, .client = 0, .value = LB_PART_PRIMARY },
		{ .t_ns = 0, .kind = LB_EV_PRIMARY_SEEN, .client = 1, .value = LB_PART_PRIMARY },
		{ .t_ns = 3 * S, .kind = LB_EV_SWITCH_MASTER, .client = -1, .value = 1 },
		{ .t_ns = 4 * S, .kind = LB_EV_PRIMARY_SEEN, .client = 1, .value = 1 },
		{ .t_ns = 9 * S, .kind = LB_EV_PRIMARY_SEEN, .client = 0, .value = 1 },
		{ .t_ns = 10 * S, .kind = LB_EV_PRIMARY_SEEN, .client = 1, .value = LB_PART_PRIMARY },
	};
	cr_assert_eq(lb_demoted_primary_ns(ev, 5, 20 * S), 6 * S, "client 0 from 3 s to 9 s");
	/* client 1 back on the old one at 10 s: demoted still, to the end */
	cr_assert_eq(lb_demoted_primary_ns(ev, 6, 20 * S), 16 * S);
	cr_assert_eq(lb_demoted_primary_ns(ev, 6, 12 * S), 8 * S, "cut at the run's end");
	/* no switch: nobody used a demoted primary, measured */
	cr_assert_eq(lb_demoted_primary_ns(ev, 2, 20 * S), 0);
	/* a demotion without a switch heard: from the demotion */
	struct lb_event demote[] = {
		{ .t_ns = 0, .kind = LB_EV_PRIMARY_SEEN, .client = 0, .value = LB_PART_PORT0 + 6379 },
		{ .t_ns = 2 * S, .kind = LB_EV_DEMOTE, .client = -1, .value = LB_PART_PORT0 + 6379 },
		{ .t_ns = 5 * S, .kind = LB_EV_PRIMARY_SEEN, .client = 0, .value = LB_PART_PORT0 + 6380 },
	};
	cr_assert_eq(lb_demoted_primary_ns(demote, 3, 20 * S), 3 * S);
	/* nothing says which server a client took (a library): not measured */
	cr_assert_eq(lb_demoted_primary_ns(ev + 2, 1, 20 * S), -1);
	cr_assert_not(lb_primaries_seen(ev + 2, 1));
}

/* Item 10 of issue 30: a report draws the history; when summary.csv says
 * something else, the report says so (it drew without a word before). */
Test(report, a_summary_that_disagrees_with_the_history_is_told, .init = mktmp)
{
	char dir[128], path[200];
	snprintf(dir, sizeof(dir), "%s/r", tmpdir);
	const char *run[] = { "run", "--strategy", "none", "--clients", "2", "--duration", "0.5",
			      "--out", dir, "--no-status", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, run), 0, "%s", fx_slurp(tmpdir, "output"));
	cr_assert_null(strstr(fx_slurp(tmpdir, "output"), "disagrees"), "%s",
		       fx_slurp(tmpdir, "output"));
	cr_assert_null(strstr(fx_slurp(dir, "report.md"), "Warning: summary.csv disagrees"));
	/* claim no overlap */
	struct lb_summary s;
	snprintf(path, sizeof(path), "%s/summary.csv", dir);
	cr_assert_eq(lb_summary_read(path, &s), 0);
	FILE *f = fopen(path, "w");
	for (size_t i = 0; i < s.n; i++)
		fprintf(f, "%s%c", s.name[i], i + 1 < s.n ? ',' : '\n');
	for (size_t i = 0; i < s.n; i++)
		fprintf(f, "%s%c", strcmp(s.name[i], "overlaps") ? s.value[i] : "0",
			i + 1 < s.n ? ',' : '\n');
	fclose(f);
	const char *report[] = { "report", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, report), 0, "%s", fx_slurp(tmpdir, "output"));
	cr_assert(strstr(fx_slurp(tmpdir, "output"), "summary.csv disagrees with the run's own "
		  "files on overlaps"), "%s", fx_slurp(tmpdir, "output"));
	cr_assert(strstr(fx_slurp(dir, "report.md"), "**Warning: summary.csv disagrees with this "
		  "run's own files** on overlaps"), "%s", fx_slurp(dir, "report.md"));
	cr_assert(strstr(fx_slurp(dir, "report.html"), "Warning: summary.csv disagrees"));
}

/* A report.md from someone else becomes a page with no script in it: link
 * and image addresses are attribute values with their quotes escaped, and
 * an address with a scheme (javascript:) or a host is shown as text. */
Test(report, a_hostile_report_md_runs_no_script, .init = mktmp)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/report.md", tmpdir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "# <script>alert(1)</script>\n\n![i](x\" onerror=\"alert(2))\n\n"
		   "[a](javascript:alert(3))\n\n[b](//evil.example/x)\n\n[ok](sub/report.md)\n\n"
		   "| a \\| b | `<b>` |\n");
	fclose(f);
	cr_assert_eq(lb_report_html_from_md(tmpdir), 0);
	const char *html = fx_slurp(tmpdir, "report.html");
	cr_assert_null(strstr(html, "<script>alert"), "%s", html);
	cr_assert_null(strstr(html, "\" onerror"), "%s", html);
	cr_assert_null(strstr(html, "javascript:"), "%s", html);
	cr_assert_null(strstr(html, "evil.example"), "%s", html);
	cr_assert(strstr(html, "<a href=\"sub/report.md\">ok</a>"), "%s", html);
	cr_assert(strstr(html, "<td> a | b </td>"), "an escaped | is text in its cell: %s", html);
}

/* A history where everyone is inside at once (anyone may write one): the
 * timeline draws one "two or more inside" bar per stretch of a section, not
 * one per pair, so 6000 overlapping sections give at most 3000 bars (the
 * window), not 18 million lines. */
Test(report, a_crowded_history_draws_one_bar_per_stretch, .init = mktmp)
{
	enum { N = 6000 };
	static struct lb_section sec[N];
	for (int i = 0; i < N; i++) /* all inside from about 0 to 10 s */
		sec[i] = (struct lb_section){ .client = i % 3, .key = 0, .enter_ns = i * 1000,
					      .exit_ns = 10000 * MS + i * 1000,
					      .release_ns = 10000 * MS + i * 1000 + 100,
					      .outcome = LB_OUT_RELEASED, .fence = -1 };
	struct lb_run_files rf = { .sec = sec, .n = N, .clients = 3, .keys = 1, .ttl_ms = 30000,
				   .elapsed_s = 11 };
	bool drawn = false;
	char why[400] = "";

	snprintf(rf.dir, sizeof(rf.dir), "%s", tmpdir);
	lb_hist_add(&rf.lat, 2 * MS);
	cr_assert_eq(lb_charts_run(&rf, &drawn, why, sizeof(why)), 0, "see %s/gnuplot.log", tmpdir);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/timeline-overlaps.dat", tmpdir);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	int lines = 0;
	for (int c; (c = fgetc(f)) != EOF;)
		lines += c == '\n';
	fclose(f);
	cr_assert_leq(lines, 3001, "%d overlap bars for a window of 3000 sections", lines);
	cr_assert_geq(lines, 2000, "the overlaps are still drawn: %d", lines);
}

/* A crafted chaos.csv: names are Markdown text on the page (no link, no
 * tag), a malformed row is named by its line, and the rest is reported. */
Test(report, a_hostile_chaos_csv_is_text_and_its_bad_rows_are_named, .init = mktmp)
{
	char dir[128], path[200];
	snprintf(dir, sizeof(dir), "%s/chaos", tmpdir);
	cr_assert_eq(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/chaos.csv", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "strategy,seed,observed,overlaps\n"
		   "\"x](javascript:alert(1))\n<img src=x onerror=alert(1)>\",1,overlap,3\n"
		   "none,abc,overlap\n");
	fclose(f);
	const char *report[] = { "report", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, report), 0, "%s", fx_slurp(tmpdir, "output"));
	cr_assert(strstr(fx_slurp(tmpdir, "output"), "chaos.csv:4: seed: expected a number"), "%s",
		  fx_slurp(tmpdir, "output"));
	const char *md = fx_slurp(dir, "report.md");
	cr_assert(strstr(md, "x\\](javascript:alert(1)) \\<img src=x onerror=alert(1)\\>, seed 1"),
		  "%s", md);
	const char *html = fx_slurp(dir, "report.html");
	cr_assert_null(strstr(html, "<img src=x"), "%s", html);
	cr_assert_null(strstr(html, "href=\"javascript"), "%s", html);
}

/* report's exit status is what its --help says: 4 when DIR cannot be read
 * (missing, a file, empty of anything to report: then it writes nothing),
 * 2 for a usage error. */
Test(report, the_exit_status_is_the_helps, .init = mktmp)
{
	char file[128], empty[128], missing[128];
	snprintf(file, sizeof(file), "%s/a-file", tmpdir);
	snprintf(empty, sizeof(empty), "%s/empty", tmpdir);
	snprintf(missing, sizeof(missing), "%s/missing", tmpdir);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fclose(f);
	cr_assert_eq(mkdir(empty, 0755), 0);
	const char *help[] = { "report", "--help", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, help), 0);
	const char *text = fx_slurp(tmpdir, "output");
	cr_assert(strstr(text, "2 usage error, 4 an input file is unreadable"), "%s", text);
	static const struct { const char *what; int rc; } cases[] = {
		{ "missing", 4 }, { "a-file", 4 }, { "empty", 4 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char dir[160];
		snprintf(dir, sizeof(dir), "%s/%s", tmpdir, cases[i].what);
		const char *args[] = { "report", dir, NULL };
		cr_assert_eq(fx_lockbench(tmpdir, args), cases[i].rc, "report %s: %s", dir,
			     fx_slurp(tmpdir, "output"));
		cr_assert(strstr(fx_slurp(tmpdir, "output"), dir), "the error does not name %s", dir);
	}
	/* nothing to report leaves the directory as it was: no report.md of nothing */
	char stub[200];
	snprintf(stub, sizeof(stub), "%s/report.md", empty);
	cr_assert_neq(access(stub, F_OK), 0, "report wrote %s for a directory with nothing in it", stub);
	const char *scale[] = { "report", "--chart-scale", "9", empty, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, scale), 2, "%s", fx_slurp(tmpdir, "output"));
	const char *none[] = { "report", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, none), 2, "%s", fx_slurp(tmpdir, "output"));
}

/* A run shorter than the timeline's 1 ms resolution (--duration 1e-300 is
 * more than 0) still gets its charts: gnuplot was handed [0:0.000], an empty
 * axis, and report failed. */
Test(report, a_run_under_a_millisecond_is_drawn, .init = mktmp)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/tiny", tmpdir);
	const char *args[] = { "run", "--strategy", "token-lua", "--clients", "1", "--duration",
			       "1e-300", "--out", dir, "--no-status", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 0, "%s", fx_slurp(tmpdir, "output"));
	assert_png(dir, "timeline.png");
}

/* Issue 56: `--chart-scale 2` drew timeline.png twice as large with its
 * markers as small as at 1 (gnuplot's `set pointsize` does not scale a
 * plot's explicit `ps`): each marker's size is now times the scale. */
Test(report, markers_grow_with_the_chart_scale, .init = mktmp)
{
	static struct lb_section sec[2] = {
		{ .client = 0, .key = 0, .enter_ns = 0, .exit_ns = 200 * MS, .release_ns = -1,
		  .outcome = LB_OUT_KILLED, .fence = -1 },
		{ .client = 1, .key = 0, .enter_ns = 100 * MS, .exit_ns = 300 * MS,
		  .release_ns = 301 * MS, .outcome = LB_OUT_FOREIGN, .fence = -1 },
	};
	double ps[2] = { 0, 0 };
	for (int k = 0; k < 2; k++) {
		struct lb_run_files rf = { .sec = sec, .n = 2, .clients = 2, .keys = 1,
					   .ttl_ms = 30000, .elapsed_s = 0.5 };
		bool drawn = false;
		char why[400] = "";
		snprintf(rf.dir, sizeof(rf.dir), "%s", tmpdir);
		lb_hist_add(&rf.lat, 2 * MS);
		cr_assert_eq(lb_chart_set_scale(k ? 2 : 1), 0);
		cr_assert_eq(lb_charts_run(&rf, &drawn, why, sizeof(why)), 0, "see %s/gnuplot.log",
			     tmpdir);
		lb_chart_set_scale(1);
		const char *gp = fx_slurp(tmpdir, "timeline.gp"), *killed = strstr(gp, "pt 7 ps ");
		cr_assert_not_null(killed, "%s", gp);
		ps[k] = strtod(killed + strlen("pt 7 ps "), NULL);
		if (k)
			cr_assert(strstr(gp, "fontscale 2.00"), "%s", gp);
	}
	cr_assert_gt(ps[0], 0);
	cr_assert_float_eq(ps[1], 2 * ps[0], 0.01, "the killed dot: ps %.2f at scale 1, %.2f at 2",
			   ps[0], ps[1]);
}

/* Issue 56: report.html had a "Redis holds" lane, timeline.png none. It is
 * drawn under the clients from the same keyevents.csv, each span in its
 * owner's colour with its owner written on it where it fits. */
Test(report, the_png_timeline_has_the_redis_lane, .init = mktmp)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/r", tmpdir);
	const char *run[] = { "run", "--strategy", "set-nx-px", "--clients", "2", "--duration",
			      "0.5", "--out", dir, "--no-status", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, run), 0, "%s", fx_slurp(tmpdir, "output"));
	assert_png(dir, "timeline.png");
	const char *gp = fx_slurp(dir, "timeline.gp");
	cr_assert(strstr(gp, "\"Redis holds\" -1.1") && strstr(gp, "'timeline-redis.dat' using"),
		  "no Redis lane in timeline.gp:\n%s", gp);
	const char *dat = fx_slurp(dir, "timeline-redis.dat");
	int owned = 0;
	for (const char *l = dat; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		int lane, owner;
		double from, len;
		if (*l != '#' && sscanf(l, "%d %lf %lf %d", &lane, &from, &len, &owner) == 4)
			owned += lane == 0 && owner >= 0 && owner < 2 && len >= 0;
	}
	cr_assert_gt(owned, 0, "no span of a client's key:\n%s", dat);
}

/* Issue 56: matrix.png's text was about 7 pixels on a 1024-pixel projector
 * (16-pixel text on a 2490-pixel image, 9 strategies). Its smallest text,
 * at the width the image is shown (1024), is at least 12 pixels: more
 * strategies than fit wrap into panels under each other. */
Test(report, matrix_png_reads_at_1024_pixels, .init = mktmp)
{
	static const char *const st[] = { "none", "setnx", "setnx-expire", "set-nx-px", "get-del",
					   "watch-multi", "token-lua", "fenced", "renewal" };
	static const char *const cls[] = { "safe", "overlap", "foreign-release", "deadlock",
					   "unavailable", "contained", "inconclusive" };
	char dir[128], path[200];
	snprintf(dir, sizeof(dir), "%s/m", tmpdir);
	cr_assert_eq(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/matrix.csv", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "scenario,strategy,expected,observed,repeat,pass,sections,overlaps,overlap_ms,"
		   "lost_updates,foreign_releases,lost_leases,orphan_ms,recovered,acquire_errors,"
		   "acquire_timeouts,busy_while_down,seed,dir\n");
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++)
			fprintf(f, "%s,%s,%s,%s,1,yes,10,0,0.0,0,0,0,0.0,n/a,0,0,0,1,x\n",
				s ? "holder-pause" : "holder-crash", st[i], cls[(i + s) % 7],
				cls[(i + s) % 7]);
	fclose(f);
	const char *report[] = { "report", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, report), 0, "%s", fx_slurp(tmpdir, "output"));
	assert_png(dir, "matrix.png");
	long w = (long)png_width(dir, "matrix.png");
	const char *gp = fx_slurp(dir, "matrix.gp");
	double smallest = 1e9;
	for (const char *p = gp; (p = strstr(p, "font ',")); p++)
		smallest = fmin(smallest, strtod(p + strlen("font ',"), NULL));
	cr_assert_lt(smallest, 1e9, "%s", gp);
	/* pngcairo draws an N-point font N pixels high at fontscale 1 (lb_chart_png) */
	cr_assert_geq(smallest * 1024 / (double)w, 12, "%.0f-pixel text on a %ld-pixel image is "
		      "%.1f pixels at 1024", smallest, w, smallest * 1024 / (double)w);
	/* every strategy still has its column */
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++)
		cr_assert(strstr(gp, st[i]), "%s is not in the chart", st[i]);
}
