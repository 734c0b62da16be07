/*
 * test_browser.c - report.html in a real browser: Debian's Chromium,
 * headless, driven over the DevTools protocol by tests/browser/drive.js,
 * loads the report of a real run, steps through it with the keyboard and
 * reads what is on screen. Chromium is installed by harness/deps.sh; if it
 * is missing the test fails (skipped is never passed).
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

FX_SUITE(browser, 180);

static char tmpdir[64];

static void mktmp(void)
{
	strcpy(tmpdir, "/tmp/lbtest-browser-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
}

/* The page opens at this address fragment ("#lesson=2&step=1"), or none. */
static const char *fragment = "";

/* Drive the browser through @dir/report.html with @keys; its JSON output. */
static char *drive(const char *dir, const char *keys, const char *shot)
{
	static char out[1 << 17];
	char script[PATH_MAX], cmd[PATH_MAX * 3];
	const char *sc = getenv("LOCKBENCH_SCENARIOS");

	cr_assert_not_null(sc, "LOCKBENCH_SCENARIOS is not set (run through make test)");
	snprintf(script, sizeof(script), "%s/../tests/browser/drive.js", sc);
	cr_assert_eq(access(script, R_OK), 0, "no %s", script);
	cr_assert_eq(system("command -v chromium >/dev/null"), 0,
		     "chromium is not installed (harness/deps.sh installs it): the browser test "
		     "cannot run, and a test that cannot run does not pass");
	/* runs: node (nodejs), chromium (chromium) */
	snprintf(cmd, sizeof(cmd), "node '%s' '%s/report.html%s' '%s' '%s' 2>&1", script, dir, fragment,
		 shot, keys);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	int status = pclose(p);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "drive.js failed:\n%s", out);
	cr_assert(strstr(out, "\"errors\": []"), "the page threw script errors:\n%s", out);
	struct stat st;
	cr_assert_eq(stat(shot, &st), 0, "no screenshot %s", shot);
	cr_assert_gt(st.st_size, 20000, "the screenshot is nearly empty (%lld bytes)", (long long)st.st_size);
	return out;
}

/* The n-th state ("after": ...) of the output, as text up to the next one. */
static const char *state(const char *out, int n, char *buf, size_t len)
{
	const char *p = out;
	for (int i = 0; i <= n; i++) {
		p = strstr(p + (i ? 1 : 0), "\"after\":");
		cr_assert_not_null(p, "no state %d in:\n%s", n, out);
	}
	const char *end = strstr(p + 1, "\"after\":");
	size_t l = end ? (size_t)(end - p) : strlen(p);
	snprintf(buf, len, "%.*s", (int)(l < len ? l : len - 1), p);
	return buf;
}

static void run(const char *dir, const char *scenario, const char *strategy)
{
	char out[PATH_MAX];
	snprintf(out, sizeof(out), "%s/run", dir);
	const char *args[] = { "run", "--scenario", scenario, "--strategy", strategy, "--seed", "7",
			       "--out", out, "--no-status", NULL };
	cr_assert_eq(fx_lockbench(dir, args), 0, "%s", fx_slurp(dir, "output"));
}

/* The story of the load state: every step in time order, and none telling a
 * moment later than its own (a step tells only what has happened by then:
 * every "N.NNN s" in its text is at most its time). Returns the story's text. */
static const char *story_in_order(const char *out, char *buf, size_t len)
{
	state(out, 0, buf, len);
	const char *p = strstr(buf, "\"story\": [");
	cr_assert_not_null(p, "no story in:\n%s", buf);
	const char *stop = strstr(p, "\n   ]");
	cr_assert_not_null(stop, "the story does not end:\n%s", p);
	double last = -1;
	int steps = 0;
	/* one line each: "T | text", */
	for (const char *q = strchr(p, '\n'); q && q < stop; q = strchr(q + 1, '\n')) {
		const char *line = q + 1 + strspn(q + 1, " ");
		const char *eol = strchr(line, '\n');
		if (*line != '"' || !eol || eol > stop)
			continue;
		char *end;
		double t = strtod(line + 1, &end);
		cr_assert(end > line + 1 && !strncmp(end, " | ", 3), "not a step: %.*s", (int)(eol - line),
			  line);
		cr_assert_geq(t + 1e-9, last, "step %d at %.6f s comes after one at %.6f s:\n%s",
			      steps + 1, t, last, p);
		last = t;
		steps++;
		/* every moment it names ("N.NNN s") is at most its own */
		for (const char *s = end + 3; s < eol; s++) {
			if (!(*s >= '0' && *s <= '9') || (s[-1] >= '0' && s[-1] <= '9') || s[-1] == '.')
				continue;
			char *e2;
			double named = strtod(s, &e2);
			if (e2 - s >= 5 && e2[-4] == '.' && !strncmp(e2, " s", 2) && named > t + 0.0015)
				cr_assert_fail("step %d (%.3f s) tells a later moment, %.3f s: %.*s", steps,
					       t, named, (int)(eol - line), line);
			if (e2 > s)
				s = e2 - 1;
		}
	}
	cr_assert_gt(steps, 0, "no steps:\n%s", p);
	return p;
}

/* holder-pause with set-nx-px: the page opens on the pause, the next step is
 * the lease running out, then the overlap (two inside, the paused one frozen
 * past its lease); the holder wakes before its release deletes the next one's
 * lock; the steps are in time order and none tells the future; the previous
 * key goes back. */
Test(browser, steps_through_a_holder_pause_run, .init = mktmp)
{
	char dir[PATH_MAX], shot[PATH_MAX], s[8192];
	run(tmpdir, "holder-pause", "set-nx-px");
	snprintf(dir, sizeof(dir), "%s/run", tmpdir);
	snprintf(shot, sizeof(shot), "%s/holder-pause.png", tmpdir);
	const char *out = drive(dir, "ArrowRight,ArrowRight,ArrowLeft", shot);

	state(out, 0, s, sizeof(s));
	cr_assert(strstr(s, "\"pos\": \"step 1 of "), "%s", s);
	cr_assert(strstr(s, "is frozen (SIGSTOP) for 2500 ms"), "the first step is the pause:\n%s", s);
	cr_assert(strstr(s, "\"hash\": \"#step=1\""), "%s", s);
	state(out, 1, s, sizeof(s));
	cr_assert(strstr(s, "\"pos\": \"step 2 of "), "%s", s);
	cr_assert(strstr(s, "lease runs out while it is still inside"),
		  "the second step is the lease running out:\n%s", s);
	state(out, 2, s, sizeof(s));
	cr_assert(strstr(s, "inside at once"), "the third step tells the overlap:\n%s", s);
	cr_assert(strstr(s, "\"inside\": 2"), "two clients must be shown inside:\n%s", s);
	cr_assert(strstr(s, "its lease ran out at") && strstr(s, "(frozen)"),
		  "the frozen holder past its lease must be shown:\n%s", s);
	const char *cur = strstr(s, "\"current\": ");
	const char *cur_end = cur ? strchr(cur, '\n') : NULL;
	cr_assert(cur && cur_end, "%s", s);
	cr_assert(!memmem(cur, (size_t)(cur_end - cur), "wakes up", 8),
		  "the overlap step must not tell the wake-up:\n%.*s", (int)(cur_end - cur), cur);
	state(out, 3, s, sizeof(s));
	cr_assert(strstr(s, "\"after\": \"ArrowLeft\"") && strstr(s, "\"pos\": \"step 2 of "),
		  "the left arrow goes back one step:\n%s", s);
	static char story[1 << 16];
	const char *st = story_in_order(out, story, sizeof(story));
	const char *wake = strstr(st, "wakes up (SIGCONT)");
	const char *del = strstr(st, "s release deletes client");
	cr_assert(wake && del && wake < del, "the wake-up must be a step before the foreign "
		  "release, a step of its own:\n%s", st);
	printf("screenshot: %s\n", shot);
}

/* redlock-node-restart with redlock: the steps are the partition, the slow
 * section, the node restart and the late client; the restart step shows client
 * 0 inside, and a later one both clients inside. */
Test(browser, steps_through_a_redlock_node_restart_run, .init = mktmp)
{
	char dir[PATH_MAX], shot[PATH_MAX], s[8192];
	run(tmpdir, "redlock-node-restart", "redlock");
	snprintf(dir, sizeof(dir), "%s/run", tmpdir);
	snprintf(shot, sizeof(shot), "%s/redlock-node-restart.png", tmpdir);
	const char *out = drive(dir, "n,n,n,n,n,n", shot);

	bool restart = false, both = false, cut = false;
	for (int i = 0; i <= 6; i++) {
		state(out, i, s, sizeof(s));
		cut |= strstr(s, "Client 0 is cut off from nodes 3, 4.") != NULL;
		/* Kleppmann's case in the words on screen: client 0 holds 0, 1, 2; node
		 * 2 forgets; client 1 takes 2, 3, 4 */
		if (strstr(s, "comes back, empty") &&
		    strstr(s, "client 0 is inside since 0.0") && strstr(s, "holding nodes 0, 1, 2 (node 2 "
								       "restarted empty since, so only 2 of 5"))
			restart = true;
		if (strstr(s, "\"inside\": 2") && strstr(s, "holding nodes 2, 3, 4"))
			both = true;
	}
	cr_assert(cut, "the partition (with its nodes) must be a step:\n%s", out);
	cr_assert(restart, "the restart must be a step, client 0 inside on nodes 0, 1, 2, node 2 "
		  "forgotten:\n%s", out);
	cr_assert(both, "a step must show both clients inside, client 1 on nodes 2, 3, 4:\n%s", out);
	printf("screenshot: %s\n", shot);
}

/* compare --scenario holder-pause: the page stacks set-nx-px and fenced on
 * one time axis, in the order given; each step names its strategy, and the
 * box says what both runs looked like at that moment. */
Test(browser, steps_through_a_compare_on_one_time_axis, .init = mktmp)
{
	char dir[PATH_MAX], shot[PATH_MAX], s[8192];
	snprintf(dir, sizeof(dir), "%s/cmp", tmpdir);
	const char *args[] = { "compare", "--scenario", "holder-pause", "--strategies",
			       "set-nx-px,fenced", "--seed", "7", "--out", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 0, "%s", fx_slurp(tmpdir, "output"));
	snprintf(shot, sizeof(shot), "%s/compare.png", tmpdir);
	const char *out = drive(dir, "n,n,n,n", shot);

	state(out, 0, s, sizeof(s));
	cr_assert(strstr(s, "\"blocks\": [\n    \"set-nx-px\",\n    \"fenced\"\n   ]"),
		  "the blocks must be set-nx-px then fenced:\n%s", s);
	cr_assert(strstr(s, "is frozen (SIGSTOP) for 2500 ms"), "the first step is a pause:\n%s", s);
	bool nx = false, fenced = false, both = false;
	for (int i = 0; i <= 4; i++) {
		state(out, i, s, sizeof(s));
		nx |= strstr(s, "\"current\": \"set-nx-px") != NULL;
		fenced |= strstr(s, "\"current\": \"fenced") != NULL;
		both |= strstr(s, "\"set-nx-px: client ") && strstr(s, "\"fenced: client ");
	}
	cr_assert(nx && fenced, "the steps must name both strategies:\n%s", out);
	cr_assert(both, "the box must show both runs at the step's moment:\n%s", out);
	printf("screenshot: %s\n", shot);
}

/* crash-before-expire: the crash between SETNX and EXPIRE is told as such
 * (setnx-expire has that instant), the death follows it, and the lock's
 * return is a step at the moment it came back; with setnx (no such instant)
 * the scenario's stand-in kill says so, and the last step is the deadlock. */
Test(browser, tells_a_crash_before_expire_in_order, .init = mktmp)
{
	char dir[PATH_MAX], shot[PATH_MAX];
	static char s[1 << 16];
	run(tmpdir, "crash-before-expire", "setnx-expire");
	snprintf(dir, sizeof(dir), "%s/run", tmpdir);
	snprintf(shot, sizeof(shot), "%s/crash.png", tmpdir);
	const char *out = drive(dir, "n,n", shot);
	const char *st = story_in_order(out, s, sizeof(s));
	const char *crash = strstr(st, "crashed between SETNX and EXPIRE (failpoint after-setnx): its "
				   "key has no TTL");
	const char *died = strstr(st, "died holding the lock");
	const char *back = strstr(st, "acquires the lock again");
	const char *ttl = strstr(st, "left without a TTL when it died, gets one of");
	const char *expired = strstr(st, "Redis expires client");
	cr_assert(crash && died && ttl && expired && back && crash < died && died < ttl &&
		  ttl < expired && ttl < back, "crash, death, the TTL a waiter gave the dead holder's "
		  "key, then Redis expiring it and the lock's return (the same instant: the "
		  "waiter's SETNX expires the key), each a step:\n%s", st);

	char dir2[PATH_MAX], tmp2[256];
	snprintf(tmp2, sizeof(tmp2), "%s/b", tmpdir);
	cr_assert_eq(mkdir(tmp2, 0700), 0);
	run(tmp2, "crash-before-expire", "setnx");
	snprintf(dir2, sizeof(dir2), "%s/run", tmp2);
	out = drive(dir2, "n", shot);
	st = story_in_order(out, s, sizeof(s));
	cr_assert(strstr(st, "killed (SIGKILL) right after acquiring: this lock has no instant between "
			 "SETNX and EXPIRE"), "the stand-in kill must say what it stands for:\n%s", st);
	const char *end = strstr(st, "the run ends, and nobody acquired the lock");
	cr_assert(end && strstr(end, "orphaned (deadlock)"), "the last step is the deadlock:\n%s", st);
	printf("screenshot: %s\n", shot);
}

/* compare fenced and token-lua under holder-pause: they no longer look the
 * same: fenced's refused stale write is a step and a mark, token-lua's
 * release that leaves the next holder's lock alone is a step. */
Test(browser, a_compare_shows_what_fencing_refused, .init = mktmp)
{
	char dir[PATH_MAX], shot[PATH_MAX];
	static char s[1 << 16];
	snprintf(dir, sizeof(dir), "%s/cmp", tmpdir);
	const char *args[] = { "compare", "--scenario", "holder-pause", "--strategies",
			       "fenced,token-lua", "--seed", "7", "--out", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 0, "%s", fx_slurp(tmpdir, "output"));
	snprintf(shot, sizeof(shot), "%s/compare.png", tmpdir);
	const char *out = drive(dir, "n", shot);
	const char *st = story_in_order(out, s, sizeof(s));
	cr_assert(strstr(st, "a stale write refused.") || strstr(st, "a stale read refused."),
		  "fenced's refusal must be a step:\n%s", st);
	cr_assert(strstr(st, "release finds the lock no longer its own and leaves it"),
		  "token-lua's safe release must be a step:\n%s", st);
	state(out, 0, s, sizeof(s));
	cr_assert(!strstr(s, "\"refused_marks\": 0,"), "the refusal must be marked on the chart:\n%s", s);
	printf("screenshot: %s\n", shot);
}

/* lockbench tour: the deck opens at a lesson's last step (from the address);
 * next goes on to the first step of the next lesson, previous comes back to
 * the last step of the one before; the lesson's title, position and runs
 * follow. Drawn from the shipped runs: no server is started. */
Test(browser, a_tour_steps_on_to_the_next_lesson, .init = mktmp)
{
	char dir[PATH_MAX], shot[PATH_MAX], s[8192], last[64];
	snprintf(dir, sizeof(dir), "%s/tour", tmpdir);
	const char *args[] = { "tour", "--out", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 0, "%s", fx_slurp(tmpdir, "output"));
	snprintf(shot, sizeof(shot), "%s/tour.png", tmpdir);
	fragment = "#lesson=3&step=999";
	const char *out = drive(dir, "ArrowRight,ArrowLeft,n", shot);

	state(out, 0, s, sizeof(s));
	cr_assert(strstr(s, "\"lesson\": \"lesson 3 of 9\"") &&
		  strstr(s, "\"ltitle\": \"3. A crash between SETNX and EXPIRE\""), "%s", s);
	const char *pos = strstr(s, "\"pos\": \"step ");
	cr_assert_not_null(pos, "%s", s);
	int at = 0, of = 0;
	cr_assert_eq(sscanf(pos, "\"pos\": \"step %d of %d", &at, &of), 2, "%s", s);
	cr_assert(at == of && of > 1, "the address's step 999 opens the last step:\n%s", s);
	snprintf(last, sizeof(last), "\"pos\": \"step %d of %d\"", of, of);
	cr_assert(strstr(s, "\"blocks\": [\n    \"setnx-then-expire\",\n    \"setnx-expire-as-written\",\n"
		  "    \"setnx-expire\",\n    \"set-nx-px\"\n   ]"), "lesson 3's runs:\n%s", s);
	state(out, 1, s, sizeof(s));
	cr_assert(strstr(s, "\"lesson\": \"lesson 4 of 9\"") && strstr(s, "\"pos\": \"step 1 of ") &&
		  strstr(s, "\"ltitle\": \"4. The holder pauses past its TTL\"") &&
		  strstr(s, "\"hash\": \"#lesson=4&step=1\""),
		  "next, past the last step, opens the next lesson at its first step:\n%s", s);
	cr_assert(strstr(s, "\"blocks\": [\n    \"set-nx-px\",\n    \"token-lua\",\n    \"fenced\"\n   ]"),
		  "lesson 4's runs:\n%s", s);
	state(out, 2, s, sizeof(s));
	cr_assert(strstr(s, "\"lesson\": \"lesson 3 of 9\"") && strstr(s, last),
		  "previous, before the first step, goes back to the last step of lesson 3:\n%s", s);
	state(out, 3, s, sizeof(s));
	cr_assert(strstr(s, "\"lesson\": \"lesson 4 of 9\"") && strstr(s, "\"pos\": \"step 1 of "),
		  "%s", s);
	fragment = "";
	printf("screenshot: %s\n", shot);
}

/* crash-before-expire with setnx (no TTL at all): the holder is killed
 * inside; the lane "Redis holds" is drawn under the clients, with the dead
 * client's key marked "no TTL", and at the last step the box says what
 * Redis still holds: the dead client's key, with no TTL. */
Test(browser, shows_what_redis_holds_after_a_crash, .init = mktmp)
{
	char dir[PATH_MAX], shot[PATH_MAX], s[8192];
	run(tmpdir, "crash-before-expire", "setnx");
	snprintf(dir, sizeof(dir), "%s/run", tmpdir);
	snprintf(shot, sizeof(shot), "%s/crash-before-expire.png", tmpdir);
	const char *out = drive(dir, "n,n,n", shot);

	state(out, 3, s, sizeof(s));
	cr_assert(strstr(s, "\"Redis holds:\"") && strstr(s, "\"lock key\""),
		  "the lane must be in the SVG:\n%s", s);
	cr_assert(strstr(s, "\"no TTL\""), "the key without a TTL must be marked:\n%s", s);
	cr_assert(!strstr(s, "\"redis_spans\": 0,"), "the lane has no bar:\n%s", s);
	const char *said = strstr(s, "Redis: lock key held by client ");
	cr_assert(said, "the last step's box must say what Redis holds:\n%s", s);
	cr_assert(strstr(said, "'s token, no TTL (client "), "the dead client's key, no TTL:\n%s", s);
	cr_assert(strstr(s, "is dead)"), "%s", s);
	cr_assert(!strstr(s, "nobody holds the lock"), "a dead client's key is held:\n%s", s);
	printf("screenshot: %s\n", shot);
}
