/*
 * test_browser.c - report.html in a real browser: Debian's Chromium,
 * headless, driven over the DevTools protocol by tests/browser/drive.js,
 * loads the report of a real run, steps through it with the keyboard and
 * reads what is on screen. Chromium is installed by harness/deps.sh; if it
 * is missing the test fails (skipped is never passed).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "palette.h"

FX_SUITE(browser, 180);

static char tmpdir[64];
static char *drive_page(const char *dir, const char *page, const char *keys, const char *shot,
			const char *size);

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
	return drive_page(dir, "report.html", keys, shot, "1500x1100");
}

/* The same, for @dir/@page in a viewport of @size ("1024x768"). */
static char *drive_page(const char *dir, const char *page, const char *keys, const char *shot,
			const char *size)
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
	snprintf(cmd, sizeof(cmd), "LOCKBENCH_VIEWPORT=%s node '%s' '%s/%s%s' '%s' '%s' 2>&1", size,
		 script, dir, page, fragment, shot, keys);
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

/* The shipped reference run of @scenario and @strategy (docs/tour: a run
 * lockbench made, its files as it wrote them) into @dir/run, with its report
 * drawn again: for what a live run's timing under load would make vary. */
static void reference(const char *dir, const char *scenario, const char *strategy)
{
	char cmd[PATH_MAX * 3];
	snprintf(cmd, sizeof(cmd), "cp -r '%s/../docs/tour/%s/%s' '%s/run'",
		 getenv("LOCKBENCH_SCENARIOS"), scenario, strategy, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(cmd, sizeof(cmd), "%s/run", dir);
	const char *report[] = { "report", cmd, NULL };
	cr_assert_eq(fx_lockbench(dir, report), 0, "%s", fx_slurp(dir, "output"));
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
		/* (to the millisecond the page shows, rounded as report.js rounds:
		 * within one, a compare tells its runs in the order given) */
		cr_assert_geq(llround(t * 1000), llround(last * 1000),
			      "step %d at %.6f s comes after one at %.6f s:\n%s", steps + 1, t, last, p);
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
 * return is a step at the moment it came back (on the shipped reference run:
 * under load the watcher may read the dead holder's key only after a waiter's
 * EXPIRE, its TTL unknown at the SETNX, and the page then rightly does not say
 * that a waiter gave a TTL to a key that had none); with setnx (no such instant) the
 * scenario's stand-in kill says so, and the last step is the deadlock. */
Test(browser, tells_a_crash_before_expire_in_order, .init = mktmp)
{
	char dir[PATH_MAX], shot[PATH_MAX];
	static char s[1 << 16];
	reference(tmpdir, "crash-before-expire", "setnx-expire");
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
	char dir[PATH_MAX], shot[PATH_MAX], last[64];
	static char s[1 << 16];
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
	/* one run at a time (the classroom view): the last step is set-nx-px's,
	 * and the steps tell lesson 3's runs one after the other, in order */
	cr_assert(strstr(s, "\"blocks\": [\n    \"set-nx-px\"\n   ]"), "lesson 3's last run:\n%s", s);
	const char *r1 = strstr(s, "| setnx-then-expire"), *r2 = strstr(s, "| setnx-expire-as-written"),
		   *r3 = strstr(s, "| setnx-expire0"), *r4 = strstr(s, "| set-nx-px");
	cr_assert(r1 && r2 && r3 && r4 && r1 < r2 && r2 < r3 && r3 < r4, "lesson 3's runs in order:\n%s", s);
	state(out, 1, s, sizeof(s));
	cr_assert(strstr(s, "\"lesson\": \"lesson 4 of 9\"") && strstr(s, "\"pos\": \"step 1 of ") &&
		  strstr(s, "\"ltitle\": \"4. The holder pauses past its TTL\"") &&
		  strstr(s, "\"hash\": \"#lesson=4&step=1\""),
		  "next, past the last step, opens the next lesson at its first step:\n%s", s);
	cr_assert(strstr(s, "\"blocks\": [\n    \"set-nx-px\"\n   ]") &&
		  strstr(s, "\"current\": \"Predict: "), "lesson 4 opens with its question, on "
		  "set-nx-px's lanes:\n%s", s);
	state(out, 2, s, sizeof(s));
	cr_assert(strstr(s, "\"lesson\": \"lesson 3 of 9\"") && strstr(s, last),
		  "previous, before the first step, goes back to the last step of lesson 3:\n%s", s);
	state(out, 3, s, sizeof(s));
	cr_assert(strstr(s, "\"lesson\": \"lesson 4 of 9\"") && strstr(s, "\"pos\": \"step 1 of "),
		  "%s", s);
	fragment = "";
	printf("screenshot: %s\n", shot);
}

/* The words of one brief state (LOCKBENCH_DRIVE_BRIEF): "key=value ...". */
static const char *word(const char *line, const char *key, char *buf, size_t len)
{
	char k[64];
	snprintf(k, sizeof(k), " %s=", key);
	const char *p = strstr(line, k);
	if (!p && !strncmp(line, k + 1, strlen(k + 1)))
		p = line - 1;
	cr_assert_not_null(p, "no %s in: %s", key, line);
	p += strlen(k);
	size_t n = strcspn(p, " \"");
	snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
	return buf;
}

/* The brief states of @out, one line each, into @lines (at most @max). */
static int brief_states(char *out, const char **lines, int max)
{
	int n = 0;
	for (char *p = out; n < max && (p = strstr(p, "\"line\": \"")); n++) {
		p += 9;
		lines[n] = p;
		char *e = strchr(p, '"');
		cr_assert_not_null(e);
		*e = '\0';
		p = e + 1;
	}
	return n;
}

/* The classroom view of lockbench tour at a projector's 1024x768, a
 * laptop's 1366x768 and 1920x1080, every step of every lesson stepped
 * through with the keyboard: the step's sentence, the cursor (the step's
 * mark) and the whole chart of the run it concerns inside the viewport; no
 * text of the chart under 18 px and no mark under 18 px on screen; nothing
 * drawn right of the cursor but at a run's last step (predict, then reveal);
 * each lesson opens with its question, shows its code, and marks the line that
 * breaks at one of its steps. Before, at 1024x768 lesson 4's fenced step was
 * drawn at y = 784, under a 768 px window, and every run was drawn whole
 * from step 1. */
Test(browser, the_classroom_view_keeps_every_step_in_view, .init = mktmp)
{
	enum { KEYS = 115, MAXS = KEYS + 1 };
	static const char *const sizes[] = { "1024x768", "1366x768", "1920x1080" };
	char dir[PATH_MAX], shot[PATH_MAX], keys[KEYS * 2 + 1] = "", v[64], l[64];
	const char *lines[MAXS];
	snprintf(dir, sizeof(dir), "%s/tour", tmpdir);
	const char *args[] = { "tour", "--out", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 0, "%s", fx_slurp(tmpdir, "output"));
	for (int k = 0; k < KEYS; k++)
		strcat(keys, k ? ",n" : "n");
	setenv("LOCKBENCH_DRIVE_BRIEF", "1", 1);
	setenv("LOCKBENCH_DRIVE_TIMEOUT", "150", 1);
	fragment = "#lesson=1&step=1";
	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		snprintf(shot, sizeof(shot), "%s/classroom-%s.png", tmpdir, sizes[z]);
		char *out = drive_page(dir, "report.html", keys, shot, sizes[z]);
		int n = brief_states(out, lines, MAXS), questions = 0, broken[10] = { 0 }, lesson = 0;
		cr_assert_eq(n, MAXS, "%d states at %s", n, sizes[z]);
		for (int i = 0; i < n; i++) {
			const char *s = lines[i];
			cr_assert(strstr(s, " now=1 ") && strstr(s, " cursor=1 ") && strstr(s, " chart=1 "),
				  "at %s the step, its mark and its run's chart must be in the viewport: %s",
				  sizes[z], s);
			cr_assert_geq(atof(word(s, "font", v, sizeof(v))), 17.95, "text under 18 px at %s: %s",
				      sizes[z], s);
			word(s, "mark", v, sizeof(v));
			cr_assert(!strcmp(v, "-") || atof(v) >= 18, "a mark under 18 px at %s: %s", sizes[z], s);
			cr_assert(!strcmp(word(s, "future", v, sizeof(v)), "0") ||
				  !strcmp(word(s, "last", l, sizeof(l)), "1"),
				  "drawn after the step (not its run's last) at %s: %s", sizes[z], s);
			cr_assert_gt(atoi(word(s, "code", v, sizeof(v))), 2, "no code at %s: %s", sizes[z], s);
			sscanf(word(s, "lesson", v, sizeof(v)), "lesson_%d", &lesson);
			cr_assert(lesson >= 1 && lesson <= 9, "%s", s);
			questions += strstr(s, "pos=step_1_of_") && strstr(s, " kind=question ");
			broken[lesson] |= strstr(s, " broken=1 ") != NULL;
		}
		cr_assert_eq(lesson, 9, "the steps must reach the last lesson at %s", sizes[z]);
		cr_assert_eq(questions, 9, "each lesson must open with its question (%d did)", questions);
		for (int k = 1; k <= 9; k++)
			cr_assert(broken[k], "lesson %d never marks the line that breaks", k);
		printf("screenshot: %s\n", shot);
	}
	unsetenv("LOCKBENCH_DRIVE_BRIEF");
	unsetenv("LOCKBENCH_DRIVE_TIMEOUT");
	fragment = "";
}

/* Presenter mode in the classroom view enlarges the chart, not only the
 * sentence: at 1024x768 the chart keeps the full width, its text grows past
 * 18 px (22.5: 1.25 times), the chart gets taller, everything of the step
 * stays in view, and the lesson plan's cues show as speaker notes under it.
 * Before, the sentence grew to 34 px while the chart shrank to 55% of the
 * height with 7-9 px labels. */
Test(browser, presenter_mode_enlarges_the_classroom_chart, .init = mktmp)
{
	char dir[PATH_MAX], shot[PATH_MAX], v[64], out[1 << 14];
	const char *lines[4];
	int w0, h0, w1, h1;
	snprintf(dir, sizeof(dir), "%s/tour", tmpdir);
	const char *args[] = { "tour", "--out", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 0, "%s", fx_slurp(tmpdir, "output"));
	setenv("LOCKBENCH_DRIVE_BRIEF", "1", 1);
	fragment = "#lesson=4&step=5";
	snprintf(shot, sizeof(shot), "%s/presenter.png", tmpdir);
	snprintf(out, sizeof(out), "%s", drive_page(dir, "report.html", "f", shot, "1024x768"));
	unsetenv("LOCKBENCH_DRIVE_BRIEF");
	fragment = "";
	cr_assert_eq(brief_states(out, lines, 4), 2, "%s", out);
	cr_assert(strstr(lines[0], " present=0") && strstr(lines[1], " present=1"), "%s", out);
	cr_assert_eq(sscanf(word(lines[0], "svg", v, sizeof(v)), "%dx%d", &w0, &h0), 2);
	cr_assert_eq(sscanf(word(lines[1], "svg", v, sizeof(v)), "%dx%d", &w1, &h1), 2);
	cr_assert_geq(w1, 1024 * 9 / 10, "the chart must keep the width: %s", lines[1]);
	cr_assert_gt(h1, h0, "the chart must grow: %s / %s", lines[0], lines[1]);
	cr_assert_geq(atof(word(lines[1], "font", v, sizeof(v))), 22, "%s", lines[1]);
	cr_assert(strstr(lines[1], " now=1 ") && strstr(lines[1], " cursor=1 ") &&
		  strstr(lines[1], " chart=1 "), "%s", lines[1]);
	cr_assert_gt(atoi(word(lines[1], "notes", v, sizeof(v))), 20, "speaker notes: %s", lines[1]);
	cr_assert(!strcmp(word(lines[0], "notes", v, sizeof(v)), "0"), "notes only when presenting");
	printf("screenshot: %s\n", shot);
}

/* The text of page @first to @last of @pdf (pdftotext), into @buf. */
static const char *pdf_text(const char *pdf, int first, int last, char *buf, size_t len)
{
	char cmd[PATH_MAX * 2];
	/* runs: pdftotext (poppler-utils) */
	snprintf(cmd, sizeof(cmd), "pdftotext -f %d -l %d '%s' - 2>&1", first, last, pdf);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(buf, 1, len - 1, p);
	buf[n] = '\0';
	cr_assert_eq(pclose(p), 0, "%s: %s", cmd, buf);
	return buf;
}

/* lockbench tour --pdf: DIR/tour.pdf, printed by Chromium: a title page, the
 * legend, a page per lesson (its question, its code in the three languages,
 * why) and one per run (9 lessons, 21 runs), then the handout with the
 * glossary read from docs/glossary.md; its first page rendered (pdftoppm) is
 * not blank, and no browser or profile is left. */
Test(browser, the_tour_prints_a_deck_and_a_handout, .init = mktmp)
{
	char dir[PATH_MAX], pdf[PATH_MAX + 16], cmd[PATH_MAX * 3], buf[1 << 14];
	snprintf(dir, sizeof(dir), "%s/tour", tmpdir);
	const char *args[] = { "tour", "--pdf", "--out", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 0, "%s", fx_slurp(tmpdir, "output"));
	snprintf(pdf, sizeof(pdf), "%s/tour.pdf", dir);
	cr_assert(strstr(fx_slurp(tmpdir, "output"), "tour.pdf"), "%s", fx_slurp(tmpdir, "output"));
	/* runs: pdfinfo (poppler-utils) */
	snprintf(cmd, sizeof(cmd), "pdfinfo '%s' | grep '^Pages:'", pdf);
	FILE *p = popen(cmd, "r");
	cr_assert(p && fgets(buf, sizeof(buf), p), "%s", cmd);
	pclose(p);
	cr_assert_eq(atoi(buf + 6), 2 + 9 + 21 + 1, "pages: %s", buf);
	cr_assert(strstr(pdf_text(pdf, 1, 1, buf, sizeof(buf)), "lockbench tour") &&
		  strstr(buf, "9. Failover"), "the title page: %s", buf);
	cr_assert(strstr(pdf_text(pdf, 2, 2, buf, sizeof(buf)), "How to read the timeline") &&
		  strstr(buf, "foreign release"), "the legend: %s", buf);
	cr_assert(strstr(pdf_text(pdf, 3, 3, buf, sizeof(buf)), "Predict:") &&
		  strstr(buf, "redis-py") && strstr(buf, "node-redis") && strstr(buf, "Why the fix"),
		  "lesson 1's page: %s", buf);
	cr_assert(strstr(pdf_text(pdf, 33, 33, buf, sizeof(buf)), "Glossary") &&
		  strstr(buf, "fencing token") && strstr(buf, "oracle") && strstr(buf, "lease"),
		  "the handout's glossary: %s", buf);
	/* runs: pdftoppm (poppler-utils) */
	snprintf(cmd, sizeof(cmd), "pdftoppm -r 40 -png -f 1 -l 1 '%s' '%s/page'", pdf, tmpdir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(cmd, sizeof(cmd), "%s/page-01.png", tmpdir);
	struct stat st;
	cr_assert(stat(cmd, &st) == 0 && st.st_size > 3000, "page 1 rendered blank: %s", cmd);
	snprintf(cmd, sizeof(cmd), "ls -A '%s'", dir);
	p = popen(cmd, "r");
	size_t n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	pclose(p);
	cr_assert_null(strstr(buf, ".profile"), "the browser's profile was left: %s", buf);
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
	/* with its owner written on it: its colour is not the only cue */
	cr_assert(strstr(s, ", no TTL\"") && strstr(s, "\"c"), "the key without a TTL must be "
		  "marked, with its owner (\"c0, no TTL\"):\n%s", s);
	/* the page's legend draws each mark (issue 56: it was words alone), and
	 * client 0's square is not the "inside" blue */
	cr_assert_null(strstr(s, "\"legend_swatches\": 0,"), "no legend swatches:\n%s", s);
	const char *sq = strstr(s, "\"lane_squares\": [");
	cr_assert(sq && strstr(sq, "\"" LB_COL_CLIENT0 "\""), "client 0's square:\n%s", s);
	cr_assert_null(strstr(sq, "\"" LB_COL_INSIDE "\""), "a client in the inside blue:\n%s", s);
	cr_assert(!strstr(s, "\"redis_spans\": 0,"), "the lane has no bar:\n%s", s);
	const char *said = strstr(s, "Redis: lock key held by client ");
	cr_assert(said, "the last step's box must say what Redis holds:\n%s", s);
	cr_assert(strstr(said, "'s token, no TTL (client "), "the dead client's key, no TTL:\n%s", s);
	cr_assert(strstr(s, "is dead)"), "%s", s);
	cr_assert(!strstr(s, "nobody holds the lock"), "a dead client's key is held:\n%s", s);
	printf("screenshot: %s\n", shot);
}

/* How many states of @out hold @what. */
static int count(const char *out, const char *what)
{
	int n = 0;
	for (const char *p = out; (p = strstr(p, what)); p++)
		n++;
	return n;
}

/* The tick labels of state @n, as drive.js prints them. */
static const char *ticks(const char *out, int n, char *buf, size_t len)
{
	char s[16384];
	state(out, n, s, sizeof(s));
	const char *p = strstr(s, "\"ticks\": [");
	cr_assert_not_null(p, "%s", s);
	const char *e = strchr(p, ']');
	snprintf(buf, len, "%.*s", (int)(e - p), p);
	return buf;
}

/* Zoom (z) sets the axis to a window around the step, in ms, and it follows
 * the steps; z again is the whole run, in seconds. On the shipped reference
 * run of holder-pause (docs/tour: a live run's steps move with the machine's
 * load, a window being twice the gap to the nearest other step: under make
 * test's load steps 3 and 4 got 450 ms), steps 3 and 4, each a few ms from
 * the next, get an axis of at most 200 ms. */
Test(browser, zoom_sets_the_axis_around_the_step, .init = mktmp)
{
	char dir[PATH_MAX], shot[PATH_MAX], t[4096];
	reference(tmpdir, "holder-pause", "set-nx-px");
	snprintf(dir, sizeof(dir), "%s/run", tmpdir);
	snprintf(shot, sizeof(shot), "%s/zoom.png", tmpdir);
	const char *out = drive(dir, "n,n,z,n,z", shot);

	ticks(out, 2, t, sizeof(t));
	cr_assert(strstr(t, "\"0 s\"") && !strstr(t, " ms\""), "unzoomed: the whole run in s: %s", t);
	for (int i = 3; i <= 4; i++) {
		ticks(out, i, t, sizeof(t));
		cr_assert(strstr(t, " ms\"") && !strstr(t, "\"0 ms\""), "zoomed: ticks in ms, not from 0: "
			  "%s", t);
		/* the first and last tick at most 200 ms apart */
		const char *a = strchr(strchr(t, '['), '"'), *b = strrchr(t, ',');
		cr_assert(a && b, "%s", t);
		double first = atof(a + 1), last = atof(strchr(b, '"') + 1);
		cr_assert(last > first && last - first <= 200, "zoomed span %g..%g ms: %s", first, last, t);
	}
	ticks(out, 5, t, sizeof(t));
	cr_assert(strstr(t, "\"0 s\"") && !strstr(t, " ms\""), "z again: the whole run: %s", t);
	cr_assert_eq(count(out, "\"overlaps\": []"), 6, "text boxes overlap:\n%s", out);
	printf("screenshot: %s\n", shot);
}

/* Presenter mode (f): the story list and the lead hidden, the step's
 * sentence shown large in the viewport, #present in the address, the arrows
 * still step; Escape leaves it. */
Test(browser, presenter_mode_shows_one_step, .init = mktmp)
{
	char dir[PATH_MAX], shot[PATH_MAX], s[16384];
	run(tmpdir, "holder-pause", "set-nx-px");
	snprintf(dir, sizeof(dir), "%s/run", tmpdir);
	snprintf(shot, sizeof(shot), "%s/present.png", tmpdir);
	const char *out = drive_page(dir, "report.html", "f,ArrowRight,ArrowRight,Escape", shot, "1024x768");

	state(out, 0, s, sizeof(s));
	cr_assert(strstr(s, "\"present\": false") && strstr(s, "\"story_visible\": true"), "%s", s);
	for (int i = 1; i <= 3; i++) {
		state(out, i, s, sizeof(s));
		cr_assert(strstr(s, "\"present\": true") && strstr(s, "\"story_visible\": false") &&
			  strstr(s, "\"now_in_view\": true") && strstr(s, "\"hash\": \"#present&step="),
			  "presenter mode: one step, its sentence in view:\n%s", s);
	}
	cr_assert(strstr(s, "\"pos\": \"step 3 of "), "the arrows step in presenter mode:\n%s", s);
	state(out, 4, s, sizeof(s));
	cr_assert(strstr(s, "\"present\": false") && strstr(s, "\"story_visible\": true"),
		  "Escape leaves presenter mode:\n%s", s);
	cr_assert_eq(count(out, "\"overlaps\": []"), 5, "text boxes overlap:\n%s", out);
	printf("screenshot: %s\n", shot);
}

/* Every state of @out (a page stepped through) has no two text boxes of the
 * timeline intersecting, and at least @labels fault labels at its load. */
static void no_overlaps(const char *out, int states, int labels, const char *what)
{
	char s[16384];
	cr_assert_eq(count(out, "\"after\":"), states, "%s", out);
	cr_assert_eq(count(out, "\"overlaps\": []"), states, "%s: text boxes intersect:\n%s", what, out);
	state(out, 0, s, sizeof(s));
	const char *p = strstr(s, "\"fault_labels\": ");
	cr_assert(p && atoi(p + 16) >= labels, "%s: expected at least %d fault labels:\n%s", what,
		  labels, s);
}

/* No two of the timeline's text boxes (getBoundingClientRect) intersect, at
 * 1024x768 and 1600x1000, zoomed at every step (and the page does not hang
 * on any of their windows), on the pages whose
 * labels collided: holder-pause, sentinel-failover (Sentinel's sdown, odown
 * and choice), redlock-node-restart (five faults in 0.3 s) and a compare; and
 * once more drawn at --chart-scale 2. */
#define ALL_ZOOMED "z,n,n,n,n,n,n,n,n,n,n,n,n,z"

Test(browser, no_two_text_boxes_overlap, .init = mktmp)
{
	static const char *const pages[][3] = { { "holder-pause", "set-nx-px", "2" },
						{ "sentinel-failover", "token-lua", "7" },
						{ "redlock-node-restart", "redlock", "5" } };
	static const char *const sizes[] = { "1024x768", "1600x1000" };
	char dir[PATH_MAX], shot[PATH_MAX], what[256];

	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/%s", tmpdir, pages[i][0]);
		cr_assert_eq(mkdir(dir, 0755), 0);
		run(dir, pages[i][0], pages[i][1]);
		strcat(dir, "/run");
		for (int k = 0; k < 2; k++) {
			snprintf(shot, sizeof(shot), "%.3900s/labels-%s.png", dir, sizes[k]);
			snprintf(what, sizeof(what), "%s at %s", pages[i][0], sizes[k]);
			/* zoomed at every step, then the whole run again */
			no_overlaps(drive_page(dir, "report.html", ALL_ZOOMED, shot, sizes[k]), 15,
				    atoi(pages[i][2]), what);
			printf("screenshot: %s\n", shot);
		}
	}
	/* the type twice the size: the labels are laid out again */
	const char *rargs[] = { "report", "--chart-scale", "2", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, rargs), 0, "%s", fx_slurp(tmpdir, "output"));
	cr_assert(strstr(fx_slurp(dir, "report.html"), "{\"scale\":2.00,"),
		  "--chart-scale must reach the page's data");
	snprintf(shot, sizeof(shot), "%.3900s/labels-scale2.png", dir);
	no_overlaps(drive_page(dir, "report.html", "n,n,z,n", shot, "1024x768"), 5, 5,
		    "redlock-node-restart at --chart-scale 2");
	printf("screenshot: %s\n", shot);

	snprintf(dir, sizeof(dir), "%s/cmp", tmpdir);
	const char *args[] = { "compare", "--scenario", "holder-pause", "--strategies",
			       "set-nx-px,fenced", "--seed", "7", "--out", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 0, "%s", fx_slurp(tmpdir, "output"));
	for (int k = 0; k < 2; k++) {
		snprintf(shot, sizeof(shot), "%.3900s/labels-%s.png", dir, sizes[k]);
		snprintf(what, sizeof(what), "compare at %s", sizes[k]);
		no_overlaps(drive_page(dir, "report.html", ALL_ZOOMED, shot, sizes[k]), 15, 4, what);
		printf("screenshot: %s\n", shot);
	}
}

/* A compare page: the step's sentence stays in the viewport while stepping
 * (1024x768 and 1600x1000); the pauses both runs schedule at 0.5 s are told
 * in time order, or, in the same millisecond (as the page shows times), in
 * the order the strategies were given (fenced first here); and each block
 * names its run's class. */
Test(browser, a_compare_keeps_the_step_in_view, .init = mktmp)
{
	char dir[PATH_MAX], shot[PATH_MAX], s[16384];
	snprintf(dir, sizeof(dir), "%s/cmp", tmpdir);
	const char *args[] = { "compare", "--scenario", "holder-pause", "--strategies",
			       "fenced,set-nx-px", "--seed", "7", "--out", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 0, "%s", fx_slurp(tmpdir, "output"));
	const char *sizes[] = { "1024x768", "1600x1000" };
	for (int k = 0; k < 2; k++) {
		snprintf(shot, sizeof(shot), "%s/compare-%s.png", tmpdir, sizes[k]);
		const char *out = drive_page(dir, "report.html", "n,n,n,n,n,n", shot, sizes[k]);
		for (int i = 1; i <= 6; i++) {
			state(out, i, s, sizeof(s));
			cr_assert(strstr(s, "\"now_in_view\": true"), "at %s the step's sentence must "
				  "be in the viewport:\n%s", sizes[k], s);
		}
		char t0[16] = "", t1[16] = "";
		bool fenced_first;
		state(out, 0, s, sizeof(s));
		fenced_first = strstr(s, "\"current\": \"fenced") != NULL;
		cr_assert(strstr(s, "is frozen (SIGSTOP)"), "step 1: a pause:\n%s", s);
		sscanf(strstr(s, "\"t\": \"") + 6, "%15[0-9.]", t0);
		state(out, 1, s, sizeof(s));
		cr_assert(strstr(s, "is frozen (SIGSTOP)") &&
			  strstr(s, fenced_first ? "\"current\": \"set-nx-px" : "\"current\": \"fenced"),
			  "step 2: the other run's pause:\n%s", s);
		sscanf(strstr(s, "\"t\": \"") + 6, "%15[0-9.]", t1);
		if (!strcmp(t0, t1))
			cr_assert(fenced_first, "both pauses at %s s: fenced, given first, must be "
				  "told first", t0);
		else
			cr_assert(strcmp(t0, t1) < 0, "the pauses out of time order: %s, %s", t0, t1);
		printf("pauses at %s s and %s s, %s first\n", t0, t1, fenced_first ? "fenced" : "set-nx-px");
		printf("screenshot: %s\n", shot);
	}
	const char *html = fx_slurp(dir, "report.html");
	cr_assert(strstr(html, "\"observed\":\"contained\"") && strstr(html, "\"observed\":\"foreign-release\""),
		  "each block's class must be in the page's data");
	state(drive_page(dir, "report.html", "", shot, "1600x1000"), 0, s, sizeof(s));
	cr_assert(strstr(s, "\"outcomes\": [\n    \"observed: contained\",\n    \"observed: foreign-release\"\n   ]"),
		  "each block must name its class, in the order given:\n%s", s);
}

/* The matrix page: its cells rendered (no literal <br>), each linked to its
 * run's report.html, which is there; matrix.gp's text 16 pt. */
Test(browser, the_matrix_page_links_its_cells, .init = mktmp)
{
	char dir[PATH_MAX], shot[PATH_MAX], path[PATH_MAX * 2];
	snprintf(dir, sizeof(dir), "%s/m", tmpdir);
	const char *args[] = { "matrix", "--strategies", "set-nx-px,token-lua", "--scenarios",
			       "holder-pause", "--repeat", "1", "--jobs", "1", "--out", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 0, "%s", fx_slurp(tmpdir, "output"));
	const char *html = fx_slurp(dir, "report.html");
	cr_assert_null(strstr(html, "&lt;br&gt;"), "a literal <br> on the matrix page:\n%s", html);
	int links = 0;
	for (const char *p = html; (p = strstr(p, "<a href=\"")); p++) {
		const char *e = strchr(p + 9, '"');
		snprintf(path, sizeof(path), "%s/%.*s", dir, (int)(e - p - 9), p + 9);
		if (strstr(path, "/report.html")) {
			cr_assert_eq(access(path, R_OK), 0, "a cell links to %s, which is not there", path);
			links++;
		}
	}
	cr_assert_eq(links, 2, "each of the 2 cells must link to its run's report.html:\n%s", html);
	cr_assert(strstr(html, "holder-pause/set-nx-px/1/report.html") &&
		  strstr(html, "holder-pause/token-lua/1/report.html"), "%s", html);
	const char *gp = fx_slurp(dir, "matrix.gp");
	cr_assert(strstr(gp, "set xtics font ',16'") && strstr(gp, "with labels font ',16'"),
		  "matrix.png's text must be 16 pt:\n%s", gp);
	snprintf(shot, sizeof(shot), "%s/matrix.png", tmpdir);
	drive_page(dir, "report.html", "", shot, "1024x768");
	printf("screenshot: %s\n", shot);
}

/* lockbench report --slides: DIR/slides/slides.pdf, one page per step, and
 * no Chromium left behind (its profile, under DIR/slides, removed). */
Test(browser, slides_print_each_step, .init = mktmp)
{
	char dir[PATH_MAX], cmd[PATH_MAX * 2], buf[256];
	run(tmpdir, "holder-pause", "set-nx-px");
	snprintf(dir, sizeof(dir), "%s/run", tmpdir);
	const char *args[] = { "report", "--slides", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 0, "%s", fx_slurp(tmpdir, "output"));
	static char pdf[1 << 22];
	snprintf(cmd, sizeof(cmd), "%s/slides/slides.pdf", dir);
	FILE *in = fopen(cmd, "rb");
	cr_assert_not_null(in, "no %s", cmd);
	size_t len = fread(pdf, 1, sizeof(pdf), in);
	fclose(in);
	cr_assert(len > 5 && !memcmp(pdf, "%PDF-", 5), "slides.pdf is not a PDF");
	/* the steps the page has: drive.js counts them */
	char shot[PATH_MAX];
	snprintf(shot, sizeof(shot), "%s/steps.png", tmpdir);
	const char *out = drive(dir, "", shot);
	const char *p = strstr(out, "\"steps\": ");
	cr_assert_not_null(p);
	int steps = atoi(p + 9), pages = 0;
	for (const char *q = pdf; (q = memmem(q, len - (size_t)(q - pdf), "/Type /Page", 11)); q++)
		pages += q[11] != 's'; /* /Type /Pages is the tree, not a page */
	cr_assert(steps > 3 && pages == steps, "%d pages for %d steps", pages, steps);
	/* (the [/]: this shell's own command line does not match it) */
	snprintf(cmd, sizeof(cmd), "pgrep -f '%s[/]slides' | wc -l", dir);
	FILE *f = popen(cmd, "r");
	cr_assert(f && fgets(buf, sizeof(buf), f));
	pclose(f);
	cr_assert_eq(atoi(buf), 0, "a chromium of the slides is still running");
	snprintf(cmd, sizeof(cmd), "ls -A '%s/slides'", dir);
	f = popen(cmd, "r");
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	pclose(f);
	cr_assert_null(strstr(buf, ".profile"), "the browser's profile was left: %s", buf);
}

/* A large run: a history of 300,000 sections imported (check --history
 * --out), four of them overlapping. Its page is drawn in stretches
 * (report_stretch.c): under 10 MB, loaded in Chromium in under 5 s (drive.js's
 * load_ms: navigation to the load event, the script having drawn), every
 * overlap a step that shows both clients inside, and the stretches few. Before,
 * every section was a rect and every pair was compared: 16 MB, and no page
 * within drive.js's 60 s. */
Test(browser, a_large_run_is_drawn_in_stretches, .init = mktmp)
{
	enum { N = 300000 };
	char path[PATH_MAX], dir[PATH_MAX], shot[PATH_MAX], s[16384];
	snprintf(path, sizeof(path), "%s/big.csv", tmpdir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "client,enter,exit\n");
	/* four workers taking turns, 1 ms inside and 0.5 ms apart; each
	 * 75,000th enters 0.3 ms before the one before it left */
	long long t = 1764072000000000LL; /* microseconds */
	for (int i = 0; i < N; i++) {
		long long a = i % 75000 == 1000 ? t - 800 : t, b = t + 1000;
		fprintf(f, "w-%d,%lld.%06lld,%lld.%06lld\n", i % 4, a / 1000000, a % 1000000,
			b / 1000000, b % 1000000);
		t = b + 500;
	}
	cr_assert_eq(fclose(f), 0);
	snprintf(dir, sizeof(dir), "%s/big", tmpdir);
	const char *args[] = { "check", "--history", path, "--out", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 1, "four certain overlaps: exit 1\n%s",
		     fx_slurp(tmpdir, "output"));
	snprintf(path, sizeof(path), "%.4000s/report.html", dir);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	printf("report.html of %d sections: %lld bytes\n", N, (long long)st.st_size);
	cr_assert_lt(st.st_size, 10 * 1000 * 1000, "report.html of %d sections is %lld bytes", N,
		     (long long)st.st_size);
	const char *sizes[] = { "1024x768", "1600x1000" };
	for (int k = 0; k < 2; k++) {
		snprintf(shot, sizeof(shot), "%s/big-%s.png", tmpdir, sizes[k]);
		const char *out = drive_page(dir, "report.html", "n,n,n,n,n,n,n", shot, sizes[k]);
		const char *lm = strstr(out, "\"load_ms\": ");
		cr_assert_not_null(lm, "%s", out);
		int ms = atoi(lm + 11);
		printf("loaded at %s in %d ms\nscreenshot: %s\n", sizes[k], ms, shot);
		cr_assert_lt(ms, 5000, "the page of %d sections took %d ms to load", N, ms);
		state(out, 0, s, sizeof(s));
		cr_assert(strstr(s, "\"pos\": \"step 1 of 8\""), "four overlaps, each told twice:\n%s", s);
		const char *bars = strstr(s, "\"bars\": ");
		cr_assert(bars && atoi(bars + 8) < 2000, "the stretches must be few:\n%s", s);
		/* every overlap is a step, both of its clients inside there */
		int both = 0;
		for (int i = 0; i <= 7; i++) {
			state(out, i, s, sizeof(s));
			both += strstr(s, "\"inside\": 2") != NULL;
		}
		cr_assert_eq(both, 8, "each step must show the two clients inside:\n%s", out);
	}
}
