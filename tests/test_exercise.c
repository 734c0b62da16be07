/*
 * test_exercise.c - `lockbench exercise`, the lab (docs/lab.md): its list,
 * its usage errors, and its grades of locks written in the lab's skeletons
 * (docs/lab/my_lock.py, my_lock.js; tests/adapters/lab/ fills them): a
 * correct one (a token, a Lua compare-and-delete) passes exercises 1 and 2
 * and lockbench's adapter-test; SET NX without an expiry fails exercise 1
 * (deadlock under holder-crash); SET NX PX with a plain DEL fails exercise 2
 * (foreign releases under holder-pause). Each grade's lines are read as a
 * student reads them.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "util.h"

FX_SUITE(exercise, 300);

static char tmpdir[64], root[PATH_MAX];

static void setup(void)
{
	snprintf(root, sizeof(root), "%s", fx_root());
	strcpy(tmpdir, "/tmp/lbtest-exercise-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
	fx_become_subreaper();
}

static int lb(const char *const *args)
{
	return fx_lockbench(tmpdir, args);
}

static const char *out(void)
{
	return fx_slurp(tmpdir, "output");
}

static const char *lock(const char *name)
{
	static char spec[PATH_MAX + 128];
	snprintf(spec, sizeof(spec), "exec:%.3000s/tests/adapters/lab/%.60s", root, name);
	return spec;
}

/* Exercise @n on @name into tmpdir/@dir: its exit status. */
static int grade(const char *n, const char *name, const char *dir)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, dir);
	const char *args[] = { "exercise", n, lock(name), "--no-report", "--out", path, NULL };
	return lb(args);
}

/* The line of @text that starts (after spaces) with @start, or NULL. */
static const char *line_of(const char *text, const char *start)
{
	static char buf[1024];
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *s = p;
		while (*s == ' ')
			s++;
		if (!strncmp(s, start, strlen(start))) {
			size_t len = strcspn(s, "\n");
			snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1), s);
			return buf;
		}
	}
	return NULL;
}

Test(exercise, the_list_names_each_exercise_its_lesson_and_scenarios, .init = setup)
{
	const char *args[] = { "exercise", "--list", NULL };
	cr_assert_eq(lb(args), 0, "%s", out());
	const char *o = out();
	cr_assert(strstr(o, "1  a lock that survives its holder's crash\n"
			    "   lesson: 3, crash-before-expire\n"
			    "   scenarios: baseline, holder-crash, crash-before-expire\n"), "%s", o);
	cr_assert(strstr(o, "2  a late holder must not delete the next one's lock\n"
			    "   lesson: 4, holder-pause\n   scenarios: holder-pause\n"), "%s", o);
	cr_assert(strstr(o, "3  a lost reply: recognise your own lock\n"), "%s", o);
	cr_assert(strstr(o, "scenarios: lost-reply-release, lost-reply-acquire\n"), "%s", o);
}

Test(exercise, a_wrong_number_or_no_strategy_is_a_usage_error, .init = setup)
{
	const char *none[] = { "exercise", NULL };
	cr_assert_eq(lb(none), 2, "%s", out());
	cr_assert(strstr(out(), "exercise needs N and a STRATEGY"), "%s", out());
	const char *nine[] = { "exercise", "9", "token-lua", NULL };
	cr_assert_eq(lb(nine), 2, "%s", out());
	cr_assert(strstr(out(), "exercise '9': expected a number from 1 to 3"), "%s", out());
	const char *nan[] = { "exercise", "1x", "token-lua", NULL };
	cr_assert_eq(lb(nan), 2, "%s", out());
	const char *more[] = { "exercise", "--list", "2", NULL };
	cr_assert_eq(lb(more), 2, "%s", out());
	const char *help[] = { "exercise", "--help", NULL };
	cr_assert_eq(lb(help), 0, "%s", out());
	cr_assert(strstr(out(), "Exit status: 0 the lock passed every scenario"), "%s", out());
}

/* The correct lock, filled in the Python skeleton: adapter-test passes it,
 * and it passes exercise 1 (a TTL set with the key) and exercise 2 (its
 * release deletes only its own token). */
Test(exercise, a_token_and_a_lua_release_pass_exercises_1_and_2, .init = setup)
{
	const char *at[] = { "adapter-test", lock("token-lua.py"), NULL };
	cr_assert_eq(lb(at), 0, "adapter-test: %s", out());

	cr_assert_eq(grade("1", "token-lua.py", "ex1"), 0, "%s", out());
	const char *o = out();
	cr_assert(line_of(o, "PASS baseline "), "%s", o);
	cr_assert(strstr(line_of(o, "PASS holder-crash "), "the oracle: safe"), "%s", o);
	cr_assert(line_of(o, "PASS crash-before-expire "), "%s", o);
	cr_assert(!line_of(o, "FAIL") && !line_of(o, "hint:"), "%s", o);
	cr_assert(strstr(o, "exercise 1: PASSED: 3 of 3 scenarios passed"), "%s", o);

	cr_assert_eq(grade("2", "token-lua.py", "ex2"), 0, "%s", out());
	o = out();
	cr_assert(strstr(line_of(o, "PASS holder-pause "), "foreign_releases == 0: 0"), "%s", o);
	cr_assert(strstr(o, "exercise 2: PASSED: 1 of 1 scenarios passed"), "%s", o);
}

/* SET NX with no expiry: its holder killed, the lock is never freed. */
Test(exercise, set_nx_without_an_expiry_fails_exercise_1, .init = setup)
{
	cr_assert_eq(grade("1", "no-expiry.py", "ex1"), 1, "%s", out());
	const char *o = out();
	cr_assert(line_of(o, "PASS baseline "), "no fault: it is a lock: %s", o);
	const char *l = line_of(o, "FAIL holder-crash ");
	cr_assert(l && strstr(l, "the oracle: deadlock"), "%s", o);
	cr_assert(strstr(o, "what happened: the lock was never freed after its holder died: the "
			    "others waited to the end (deadlock)"), "%s", o);
	cr_assert(strstr(o, "hint: a dead holder never releases: the key must expire on its own."),
		  "%s", o);
	cr_assert(strstr(o, "exercise 1: FAILED: 1 of 3 scenarios passed"), "%s", o);
}

/* SET NX PX and a plain DEL: the paused holder deletes the next one's lock. */
Test(exercise, a_plain_del_release_passes_1_and_fails_exercise_2, .init = setup)
{
	cr_assert_eq(grade("2", "plain-del.py", "ex2"), 1, "%s", out());
	const char *o = out();
	const char *l = line_of(o, "FAIL holder-pause ");
	cr_assert(l && strstr(l, "foreign_releases == 0: "), "%s", o);
	cr_assert(strstr(o, "what happened: a client deleted a lock another client held, and let a "
			    "third in beside it (foreign-release)"), "%s", o);
	cr_assert(strstr(o, "hint: the paused holder woke after its lease had expired and its "
			    "release deleted the next holder's lock."), "%s", o);
	cr_assert(strstr(o, "exercise 2: FAILED: 0 of 1 scenarios passed"), "%s", o);
	char run[PATH_MAX + 32];
	snprintf(run, sizeof(run), "the run: %s/ex2/holder-pause", tmpdir);
	cr_assert(strstr(o, run), "the failing run's directory is named: %s", o);
}

/* The correct lock in the Node skeleton: adapter-test and exercise 2. */
Test(exercise, the_node_skeleton_filled_passes_adapter_test_and_exercise_2, .init = setup)
{
	const char *at[] = { "adapter-test", lock("token-lua.js"), NULL };
	cr_assert_eq(lb(at), 0, "adapter-test: %s", out());
	cr_assert_eq(grade("2", "token-lua.js", "ex2"), 0, "%s", out());
	cr_assert(strstr(out(), "exercise 2: PASSED: 1 of 1 scenarios passed"), "%s", out());
}

/* Exercise 3: the lock of exercise 2 waits a TTL for its own lock after a
 * lost reply; one that keeps the token of an acquire that ended in an error
 * and takes a key holding it as its own does not. */
Test(exercise, keeping_the_token_of_a_lost_reply_passes_exercise_3, .init = setup)
{
	cr_assert_eq(grade("3", "token-lua.py", "ex3a"), 1, "%s", out());
	const char *o = out();
	cr_assert(line_of(o, "PASS lost-reply-release "), "%s", o);
	const char *l = line_of(o, "FAIL lost-reply-acquire ");
	cr_assert(l && strstr(l, "acquire_max_ms < 500: "), "%s", o);
	cr_assert(strstr(o, "hint: your SET was applied but its reply was lost"), "%s", o);

	cr_assert_eq(grade("3", "own-token.py", "ex3b"), 0, "%s", out());
	o = out();
	cr_assert(line_of(o, "PASS lost-reply-release "), "%s", o);
	cr_assert(line_of(o, "PASS lost-reply-acquire "), "%s", o);
	cr_assert(strstr(o, "exercise 3: PASSED: 2 of 2 scenarios passed"), "%s", o);
}

/* Ctrl-C while a scenario runs: that scenario and those after it are not
 * run, never a failure of the lock (it read "FAIL ... the run is
 * interrupted", with the hint, for token-lua, a correct lock); exit 130. */
Test(exercise, an_interrupted_scenario_is_not_graded, .init = setup)
{
	char dir[PATH_MAX], o[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/int", tmpdir);
	snprintf(o, sizeof(o), "%s/int-output", tmpdir);
	const char *args[] = { "exercise", "1", "token-lua", "--no-report", "--out", dir, NULL };
	pid_t pid = fx_spawn_lockbench(args, o, o);
	lb_sleep_ns(1500 * LB_NS_PER_MS);
	kill(pid, SIGINT);
	int status = fx_wait_lockbench(pid, args);
	const char *text = fx_slurp(tmpdir, "int-output");
	cr_assert_eq(status, 130, "exit %d:\n%s", status, text);
	cr_assert(strstr(text, "NOT RUN") && strstr(text, "interrupted (Ctrl-C or SIGTERM)"), "%s",
		  text);
	cr_assert_null(strstr(text, "  FAIL "), "%s", text);
	cr_assert_null(strstr(text, "hint:"), "%s", text);
}
