/*
 * test_tour.c - `lockbench tour`: the deck is drawn from the reference runs
 * shipped in docs/tour, offline (no redis-server can start: the one it would
 * run does not exist) and in under a minute; its lessons come in teaching
 * order, each run's figures are the shipped summary's, and every shipped run
 * agrees with its own files. Hostile input (an unwritable --out, a damaged
 * or missing reference run) gives a clear error and loses nothing.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "esc.h"
#include "fixture.h"
#include "readers.h"
#include "results.h"

FX_SUITE(tour, 120);

/* The teaching order (docs/index.md, "A lesson plan"). */
static const char *const order[] = { "baseline", "check-then-delete", "crash-before-expire",
				     "holder-pause", "slow-holder", "fence-reset",
				     "redlock-node-restart", "redlock-clock-jump", "failover" };
#define N_ORDER (sizeof(order) / sizeof(order[0]))

static char tmpdir[64], shipped[1024];

static void setup(void)
{
	const char *sc = getenv("LOCKBENCH_SCENARIOS");
	cr_assert_not_null(sc, "LOCKBENCH_SCENARIOS is not set (run through make test)");
	snprintf(shipped, sizeof(shipped), "%s/../docs/tour", sc);
	strcpy(tmpdir, "/tmp/lbtest-tour-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
	/* a server it tried to start could not start: offline, or it fails */
	setenv("LOCKBENCH_REDIS_SERVER", "/nonexistent/redis-server", 1);
	unsetenv("LOCKBENCH_TOUR");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A JSON string of @s as the deck writes it. */
static void json(char *out, size_t len, const char *s)
{
	lb_esc_snprintf(out, len, LB_LANG_JSON, "%s", s);
}

/* What the deck says of the shipped run @lesson/@run: its scenario and
 * figures as its summary.csv states them, as one JSON array's tail. */
static void expected_figs(const char *lesson, const char *run, char *out, size_t len)
{
	static const char *const cols[] = { "scenario", "sections", "overlaps", "foreign_releases",
					     "lost_updates", "observed" };
	char path[PATH_MAX + 512], v[512];
	struct lb_summary s;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/%s/%s/summary.csv", shipped, lesson, run);
	cr_assert_eq(lb_summary_read(path, &s), 0, "cannot read %s", path);
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		const char *x = lb_summary_get(&s, cols[i]);
		cr_assert_not_null(x, "%s has no %s", path, cols[i]);
		json(v, sizeof(v), x);
		n += (size_t)snprintf(out + n, len - n, ",%s", v);
	}
	snprintf(out + n, len - n, "]");
}

/* The lesson whose JSON object begins at @p: the text up to the next one. */
static char *lesson_text(const char *html, size_t k)
{
	char id[128], key[160];
	json(id, sizeof(id), order[k]);
	snprintf(key, sizeof(key), "{\"id\":%s,", id);
	const char *p = strstr(html, key);
	cr_assert_not_null(p, "the deck has no lesson %s", order[k]);
	const char *end = strstr(p + 1, "{\"id\":");
	return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

Test(tour, builds_the_deck_offline_from_the_shipped_runs_in_order, .init = setup)
{
	char out[PATH_MAX], figs[2048];
	snprintf(out, sizeof(out), "%s/deck", tmpdir);
	const char *args[] = { "tour", "--out", out, NULL };
	double t0 = now_s();
	int rc = fx_lockbench(tmpdir, args);
	double took = now_s() - t0;
	cr_assert_eq(rc, 0, "%s", fx_slurp(tmpdir, "output"));
	cr_assert_lt(took, 60.0, "the tour took %.1f s: a class does not wait a minute", took);
	printf("tour: %.2f s\n", took);
	char *html = strdup(fx_slurp(out, "report.html"));

	/* teaching order: each lesson once, in order, and nothing else */
	const char *prev = html;
	size_t lessons = 0;
	for (const char *p = html; (p = strstr(p, "{\"id\":")); p++)
		lessons++;
	cr_assert_eq(lessons, N_ORDER, "the deck has %zu lessons, the plan %zu", lessons, N_ORDER);
	for (size_t k = 0; k < N_ORDER; k++) {
		char *l = lesson_text(html, k);
		const char *at = strstr(html, l);
		cr_assert(at > prev || k == 0, "lesson %s is out of order", order[k]);
		prev = at;
		/* each of its runs is the shipped one: the figures of its summary */
		char dir[PATH_MAX + 64];
		snprintf(dir, sizeof(dir), "%s/%s", shipped, order[k]);
		DIR *d = opendir(dir);
		cr_assert_not_null(d, "no shipped runs for %s in %s", order[k], dir);
		int runs = 0;
		for (struct dirent *e; (e = readdir(d));) {
			if (e->d_name[0] == '.')
				continue;
			expected_figs(order[k], e->d_name, figs, sizeof(figs));
			cr_assert(strstr(l, figs), "lesson %s does not show %s/%s's figures %s", order[k],
				  order[k], e->d_name, figs);
			runs++;
		}
		closedir(d);
		int shown = 0;
		for (const char *p = l; (p = strstr(p, "{\"label\":")); p++)
			shown++;
		cr_assert_eq(shown, runs, "lesson %s shows %d runs, %d are shipped", order[k], shown,
			     runs);
		cr_assert_gt(runs, 0);
		free(l);
	}
	/* the shipped runs themselves agree with their own files */
	fx_recheck(shipped);
	free(html);
}

/* A directory's file, or "" when it has none. */
static char *read_or_empty(const char *dir, const char *rel)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return access(path, F_OK) == 0 ? strdup(fx_slurp(dir, rel)) : strdup("");
}

Test(tour, an_unwritable_out_is_refused_and_nothing_is_written, .init = setup)
{
	char file[PATH_MAX], out[PATH_MAX + 8];
	snprintf(file, sizeof(file), "%s/a-file", tmpdir);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fputs("keep me\n", f);
	fclose(f);
	snprintf(out, sizeof(out), "%s/deck", file); /* under a file: cannot be made */
	const char *args[] = { "tour", "--out", out, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 2, "%s", fx_slurp(tmpdir, "output"));
	const char *o = fx_slurp(tmpdir, "output");
	cr_assert(strstr(o, out), "the message must name the directory:\n%s", o);
	cr_assert_str_eq(fx_slurp(tmpdir, "a-file"), "keep me\n");
}

/* A copy of the shipped runs with one of them damaged: the tour names it,
 * exits 4 and makes no --out. */
static void damaged(const char *how, const char *expect)
{
	char ref[128], out[128], cmd[PATH_MAX * 3];
	snprintf(ref, sizeof(ref), "%s/ref", tmpdir);
	snprintf(out, sizeof(out), "%s/deck", tmpdir);
	snprintf(cmd, sizeof(cmd), "cp -R '%s' '%s' && cd '%s' && %s", shipped, ref, ref, how);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	setenv("LOCKBENCH_TOUR", ref, 1);
	const char *args[] = { "tour", "--out", out, NULL };
	int rc = fx_lockbench(tmpdir, args);
	const char *o = fx_slurp(tmpdir, "output");
	cr_assert_eq(rc, 4, "exit %d:\n%s", rc, o);
	cr_assert(strstr(o, expect), "the message must say '%s':\n%s", expect, o);
	/* --out takes a new or empty directory (a deck already there is refused
	 * before the runs are read): a refused tour makes none */
	cr_assert_neq(access(out, F_OK), 0, "a refused tour made its --out");
	char *none = read_or_empty(ref, "report.html");
	cr_assert_str_eq(none, "", "the tour wrote into its reference runs");
	free(none);
}

Test(tour, a_reference_run_that_disagrees_with_its_files_is_refused, .init = setup)
{
	/* a section fewer in the history than its summary counts */
	damaged("sed -i '$d' holder-pause/fenced/history.csv",
		"holder-pause/fenced: summary.csv disagrees with the run's own files");
}

Test(tour, a_missing_reference_run_is_named, .init = setup)
{
	damaged("rm -r failover/wait-replicas", "failover/wait-replicas");
}

/* a run whose faults are gone would show a lesson where nothing happened */
Test(tour, a_run_without_its_events_is_refused, .init = setup)
{
	damaged("rm crash-before-expire/setnx-expire/events.csv",
		"crash-before-expire/setnx-expire: this run of the tour has no events.csv");
}

/* a tour that fails leaves no directory behind: it reads every run first */
Test(tour, a_failed_tour_makes_no_directory, .init = setup)
{
	char ref[128], out[128], cmd[PATH_MAX * 2];
	snprintf(ref, sizeof(ref), "%s/ref", tmpdir);
	snprintf(out, sizeof(out), "%s/never", tmpdir);
	snprintf(cmd, sizeof(cmd), "cp -R '%s' '%s' && rm -r '%s/baseline/none'", shipped, ref, ref);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	setenv("LOCKBENCH_TOUR", ref, 1);
	const char *args[] = { "tour", "--out", out, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 4, "%s", fx_slurp(tmpdir, "output"));
	cr_assert_neq(access(out, F_OK), 0, "a failed tour made %s", out);
}

Test(tour, a_run_that_is_not_the_lessons_is_refused, .init = setup)
{
	/* the token-lua run where fenced's should be: its figures would teach
	 * the wrong lesson */
	damaged("rm -r fence-reset/fenced && cp -R fence-reset/token-lua fence-reset/fenced",
		"fence-reset/fenced should be fenced under fence-reset");
}

Test(tour, no_reference_runs_is_an_error_not_an_empty_deck, .init = setup)
{
	char out[PATH_MAX];
	snprintf(out, sizeof(out), "%s/deck", tmpdir);
	setenv("LOCKBENCH_TOUR", "/nonexistent/tour", 1);
	const char *args[] = { "tour", "--out", out, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 4, "%s", fx_slurp(tmpdir, "output"));
	cr_assert(strstr(fx_slurp(tmpdir, "output"), "no reference runs found"), "%s",
		  fx_slurp(tmpdir, "output"));
	cr_assert_neq(access(out, F_OK) == 0 && access(strcat(out, "/report.html"), F_OK) == 0, 1);
}

/* --out inside the reference runs: refused before anything is written
 * there (a deck, or --live's runs, would mix with what a class was shown). */
Test(tour, an_out_inside_the_reference_runs_is_refused, .init = setup)
{
	char ref[128], out[160], cmd[PATH_MAX + 300];
	snprintf(ref, sizeof(ref), "%s/ref", tmpdir);
	snprintf(cmd, sizeof(cmd), "cp -R '%s' '%s'", shipped, ref);
	cr_assert_eq(system(cmd), 0);
	setenv("LOCKBENCH_TOUR", ref, 1);
	const char *modes[][6] = { { "tour", "--out", ref, NULL },
				   { "tour", "--out", out, NULL },
				   { "tour", "--live", "--out", out, NULL } };
	snprintf(out, sizeof(out), "%s/holder-pause/deck", ref);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		cr_assert_eq(fx_lockbench(tmpdir, modes[i]), 2, "%s", fx_slurp(tmpdir, "output"));
		cr_assert(strstr(fx_slurp(tmpdir, "output"), "is where the reference runs are"), "%s",
			  fx_slurp(tmpdir, "output"));
	}
	char *none = read_or_empty(ref, "report.html");
	cr_assert_str_eq(none, "", "a deck was written into the reference runs");
	free(none);
	cr_assert_neq(access(out, F_OK), 0, "%s was made", out);
}
