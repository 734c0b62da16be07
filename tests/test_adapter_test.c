/*
 * test_adapter_test.c - `lockbench adapter-test STRATEGY`, the adapter
 * conformance suite (docs/adapters.md, Test your adapter first): every
 * shipped adapter passes it, on the servers it starts (the whole property
 * list on a few, kazoo's among them, a subset without the pauses on the
 * rest: the suite's time),
 * and each broken program of tests/adapters fails the property it breaks,
 * with its evidence; an adapter that says lost 3 s late fails `lost` with
 * its lag; Ctrl-C stops it within a second and leaves nothing.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "util.h"

FX_SUITE(adapter_test, 240);

static char tmpdir[64], root[PATH_MAX];

static void setup(void)
{
	snprintf(root, sizeof(root), "%s", fx_root());
	strcpy(tmpdir, "/tmp/lbtest-adaptest-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
	fx_become_subreaper();
	/* the mkdir locks of the broken programs, this test's own */
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/mute", tmpdir);
	setenv("LBTEST_MUTE", dir, 1);
	snprintf(dir, sizeof(dir), "%s/fifth", tmpdir);
	setenv("LBTEST_FIFTH", dir, 1);
	snprintf(dir, sizeof(dir), "%s/fragile", tmpdir);
	setenv("LBTEST_FRAGILE", dir, 1);
}

static const char *out(void)
{
	return fx_slurp(tmpdir, "output");
}

static const char *adapter(const char *name)
{
	static char spec[PATH_MAX + 128];
	snprintf(spec, sizeof(spec), "exec:%.3000s/tests/adapters/%.60s", root, name);
	return spec;
}

/* The line of property @prop in @o ("PASS  mutex   ..."), or NULL. */
static const char *prop_line(const char *o, const char *prop)
{
	static char line[8192];
	size_t n = strlen(prop);

	for (const char *p = o; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strlen(p) > 6 + n && !strncmp(p + 6, prop, n) && p[6 + n] == ' ' &&
		    (!strncmp(p, "PASS", 4) || !strncmp(p, "FAIL", 4) || !strncmp(p, "n/a", 3) ||
		     !strncmp(p, "SKIP", 4))) {
			size_t len = strcspn(p, "\n");
			snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) - 1 ? len :
								     sizeof(line) - 1), p);
			return line;
		}
	}
	return NULL;
}

/* Property @prop's line must read @verdict and hold @says (NULL: anything). */
static void expect_line(const char *o, const char *prop, const char *verdict, const char *says)
{
	const char *l = prop_line(o, prop);
	cr_assert_not_null(l, "no line for %s in: %s", prop, o);
	cr_assert(!strncmp(l, verdict, strlen(verdict)), "%s is not %s: %s", prop, verdict, l);
	if (says)
		cr_assert(strstr(l, says), "%s: expected '%s' in: %s", prop, says, l);
}

/* Every line of @o is PASS or n/a, and there is at least one PASS. */
static void all_pass(const char *name, const char *o)
{
	int lines = 0;
	for (const char *p = o; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, "FAIL", 4) || !strncmp(p, "SKIP", 4))
			cr_assert_fail("%s: %.*s\n(all: %s)", name, (int)strcspn(p, "\n"), p, o);
		lines += !strncmp(p, "PASS", 4);
	}
	cr_assert_gt(lines, 0, "%s: no PASS line: %s", name, o);
}

static int adapter_test(const char *strategy, const char *only)
{
	const char *args[] = { "adapter-test", strategy, only ? "--only" : NULL, only, NULL };
	return fx_lockbench(tmpdir, args);
}

/* The shipped adapter @name passes (@only: those properties). */
static void passes(const char *name, const char *only)
{
	int64_t t0 = lb_now_ns();
	int rc = adapter_test(name, only);
	const char *o = out();
	cr_assert_eq(rc, 0, "%s: exit %d: %s", name, rc, o);
	all_pass(name, o);
	fprintf(stderr, "adapter-test %s%s%s: %.1f s\n", name, only ? " --only " : "", only ? only : "",
		(double)(lb_now_ns() - t0) / 1e9);
	fx_reap_orphans();
}

/* What runs without a pause: the protocol, both sessions, quit, deadlines. */
#define FAST "hello,config,mutex,repeat,extend,quit,deadlines,protocol"

/* ---- every shipped adapter ---- */

Test(adapter_test, redis_py_passes_every_property, .init = setup)
{
	passes("redis-py@4.3.4", NULL);
	const char *o = out();
	expect_line(o, "lost", "n/a", "lost=no");
	expect_line(o, "release-taken", "PASS", "not-owned");
	expect_line(o, "cut", "PASS", "after the cut");
	expect_line(o, "mutex", "PASS", "'busy'");
}

/* A library whose hello says lost=yes: its notice is timed against the key
 * watcher's expired. */
Test(adapter_test, redis_semaphore_tells_a_lost_lease_in_time, .init = setup)
{
	passes("redis-semaphore-mutex@5.8.0", NULL);
	expect_line(out(), "lost", "PASS", "after the server ended the lease (the key watcher's");
}

Test(adapter_test, node_redlock_5_on_five_nodes_passes_every_property, .init = setup)
{
	passes("redlock@5.0.0-beta.2", NULL);
}

Test(adapter_test, etcd_lock_passes_every_property, .init = setup)
{
	passes("etcd-lock@3.4.23", NULL);
	expect_line(out(), "lost", "PASS", "the lock key gone from etcd");
}

Test(adapter_test, the_other_redis_libraries_pass_the_fast_subset, .init = setup)
{
	static const char *const names[] = {
		"redis-lock@1.0.0", "node-redis-warlock@1.0.2", "redis-semaphore-redlock@5.8.0",
		"redlock-universal@0.8.5", "redlock-universal-redlock@0.8.5", "redlock@4.2.0",
		"sesamecare-redlock@1.4.0", "symfony-lock@5.4.53", "symfony-lock-combined@5.4.53",
		"tooz@3.1.0", "redis-py@8.2.0", "python-redis-lock@4.0.1", "python-redis-lock-renewal@4.0.1",
		"pottery-redlock@3.0.1",
	};
	fx_deadline(600);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		passes(names[i], FAST);
}

/* pottery's Redlock.extend() re-arms only its own auto_release_time: the
 * adapter said `extended` to `extend 3000` on a 1000 ms lock, and another
 * session acquired it 1500 ms later (FAIL extend). Its hello now says
 * extend=no, and every extend is `unsupported`. */
Test(adapter_test, pottery_says_it_cannot_extend_by_a_length, .init = setup)
{
	passes("pottery-redlock@3.0.1", "hello,extend");
	expect_line(out(), "extend", "PASS", "'unsupported', as its hello says extend=no");
}

/* The Go Redis libraries (strategies/adapters/go/redislocks, built by
 * harness/deps.sh go): every property, about 4.5 s each. Neither library
 * tells a holder its lease ran out (lost n/a); a release after another took
 * the lock is theirs to refuse, and they do. */
Test(adapter_test, the_go_redis_libraries_pass_every_property, .init = setup)
{
	static const char *const names[] = { "redsync@4.18.1", "redsync-redlock@4.18.1", "bsm-redislock@0.9.4" };
	fx_deadline(120);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		passes(names[i], NULL);
		const char *o = out();
		expect_line(o, "lost", "n/a", "lost=no");
		expect_line(o, "release-lapsed", "PASS", "'not-owned'");
		expect_line(o, "release-taken", "PASS", "'not-owned'");
		expect_line(o, "cut", "PASS", "after the cut");
	}
}

Test(adapter_test, the_consensus_locks_pass_the_fast_subset, .init = setup)
{
	passes("etcd-lock-fenced@3.4.23", FAST ",lost");
	passes("etcd-lock@3.5.36-client", FAST ",lost");
	passes("etcd-lock-fenced@3.5.36-client", FAST ",lost");
}

/* kazoo's: a release after the session expired in a pause is not-owned (it
 * was an error while kazoo was SUSPENDED), and an acquire whose connection
 * is cut at the grant is answered (it was not: every answer held back 1500
 * ms dropped the 1 s session's connection before its create, and kazoo's
 * calls then waited for a connection without bound). */
Test(adapter_test, the_kazoo_locks_pass_every_property, .init = setup)
{
	static const char *const names[] = { "kazoo-lock@2.8.0", "kazoo-lock-fenced@2.8.0" };
	fx_deadline(400);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		passes(names[i], NULL);
		const char *o = out();
		expect_line(o, "release-lapsed", "PASS", "'not-owned'");
		expect_line(o, "release-taken", "PASS", "'not-owned'");
		expect_line(o, "lost", "PASS", "the lock's ephemeral node gone");
		expect_line(o, "cut", "PASS", "after the cut");
	}
}

/* The Java libraries (strategies/adapters/java, one JVM a session). */
Test(adapter_test, redisson_lock_passes_every_property, .init = setup)
{
	passes("redisson-lock@3.52.0", NULL);
	const char *o = out();
	expect_line(o, "lost", "n/a", "lost=no");
	expect_line(o, "release-taken", "PASS", "not-owned");
	expect_line(o, "cut", "PASS", "after the cut");
}

Test(adapter_test, curator_mutex_passes_every_property, .init = setup)
{
	passes("curator-mutex@5.9.0", NULL);
	expect_line(out(), "lost", "PASS", "the lock's ephemeral node gone");
}

/* The other Java strategies are the same program (strategies/adapters/java,
 * its reader loop, hello and quit passed every property above) with another
 * lock class: each is started for the properties its lock call decides, at
 * 3 JVMs a strategy instead of the fast subset's 5 (a JVM a session is the
 * suite's slowest start: docs/libraries/redisson.md). mutex drives the lock
 * both ways (busy while held, acquired once released); quit, deadlines and
 * protocol judge those sessions at no cost. redisson-fenced-lock's mutex: a
 * second session's one attempt is busy (the library's tryLockAndGetToken()
 * without arguments waits for ever: the adapter tries with
 * tryLockAndGetToken(0, unit)). */
#define VARIANT "mutex,quit,deadlines,protocol"
Test(adapter_test, the_other_java_locks_pass_their_lock_calls, .init = setup)
{
	static const char *const names[] = {
		"redisson-lock-lease@3.52.0", "redisson-fenced-lock@3.52.0", "redisson-fair-lock@3.52.0",
		"redisson-multilock@3.52.0", "curator-mutex-fenced@5.9.0",
	};
	fx_deadline(600);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		passes(names[i], VARIANT);
}

/* RedissonRedLock is not on the lists above: it fails `cut`, and the answer
 * is the library's (docs/libraries/redisson.md, adapter-test). Every answer
 * held back 1.5 s, the links are cut when a majority granted; its tryLock()
 * counts the third node as failed, takes the fourth and fifth and says true
 * 5 s after it began on a 1 s lease, with no validity check, while the
 * watchdog, whose next renewal waits for the last one's held-back answer,
 * let the first two lapse: a second session then acquires. Its mutex passes. */
Test(adapter_test, redisson_redlock_says_acquired_after_its_locks_lapsed, .init = setup)
{
	fx_deadline(300);
	int rc = adapter_test("redisson-redlock@3.52.0", VARIANT ",cut");
	const char *o = out();
	cr_assert_eq(rc, 1, "exit %d: %s", rc, o);
	expect_line(o, "cut", "FAIL", "a wrong 'acquired'");
	static const char *const others[] = { "hello", "config", "mutex", "quit", "deadlines",
					       "protocol" };
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		expect_line(o, others[i], "PASS", NULL);
	fx_reap_orphans();
}

Test(adapter_test, the_null_adapters_keep_the_protocol, .init = setup)
{
	static const char *const names[] = { "null-c", "null-python", "null-node", "null-php" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		passes(names[i], FAST);
		expect_line(out(), "mutex", "n/a", "null adapter");
	}
}

/* ---- what fails, and says why ---- */

/* tests/adapters/lost-late.py holds a real lock and says lost 3 s after its
 * key is gone: FAIL, with the lag measured from the key watcher's expired. */
Test(adapter_test, a_lost_notice_3_s_late_fails_with_its_lag, .init = setup)
{
	int rc = adapter_test(adapter("lost-late.py"), "lost,mutex,protocol");
	const char *o = out();
	cr_assert_eq(rc, 1, "exit %d: %s", rc, o);
	expect_line(o, "mutex", "PASS", NULL);
	expect_line(o, "protocol", "PASS", NULL);
	const char *l = prop_line(o, "lost");
	expect_line(o, "lost", "FAIL", "bound 1000 ms");
	const char *lag = strstr(l, "lag ");
	cr_assert_not_null(lag, "%s", l);
	long ms = strtol(lag + 4, NULL, 10);
	cr_assert(ms >= 2900 && ms <= 4500, "lag %ld ms, not about 3000: %s", ms, l);
	cr_assert(strstr(l, "told 3000 ms late"), "its notice is not in the evidence: %s", l);
}

static void breaks(const char *name, const char *only, const char *prop, const char *says)
{
	int rc = adapter_test(adapter(name), only);
	const char *o = out();
	cr_assert_eq(rc, 1, "%s: exit %d: %s", name, rc, o);
	expect_line(o, prop, "FAIL", says);
	char what[256];
	for (int i = 0; i < 20 && fx_left(name, what, sizeof(what)); i++)
		lb_sleep_ns(100 * LB_NS_PER_MS), fx_reap_orphans();
	cr_assert_eq(fx_left(name, what, sizeof(what)), 0, "left: %s", what);
}

Test(adapter_test, an_adapter_that_exits_at_start_fails_hello, .init = setup)
{
	breaks("exits-at-start.sh", "mutex", "hello", "exited before its hello (exit status 3)");
	expect_line(out(), "mutex", "SKIP", "did not start");
}

Test(adapter_test, a_malformed_or_future_hello_fails_hello, .init = setup)
{
	breaks("malformed.sh", "protocol", "hello", "HELLO? is anybody there");
	breaks("wrong-version.sh", "protocol", "hello", "speaks protocol version 4");
}

Test(adapter_test, half_a_line_then_an_exit_fails_repeat, .init = setup)
{
	breaks("half-line.sh", "repeat,protocol", "repeat", "middle of a line");
	expect_line(out(), "protocol", "FAIL", "'acqui'");
}

Test(adapter_test, an_adapter_that_closes_its_output_fails_repeat, .init = setup)
{
	breaks("closes-output.sh", "repeat,protocol", "repeat", "closed its output");
	expect_line(out(), "protocol", "FAIL", "closed its output");
}

Test(adapter_test, an_adapter_that_exits_at_its_fifth_acquire_fails_repeat, .init = setup)
{
	breaks("exits-at-fifth.sh", "repeat,protocol", "repeat", "(section 5 of 8)");
	expect_line(out(), "protocol", "FAIL", "took its process down");
}

Test(adapter_test, an_extra_reply_fails_repeat_and_the_protocol, .init = setup)
{
	/* its second answer, 'busy', is taken as nothing's answer: as an unrequested line
	 * when it came before the release was sent, or as no answer to release */
	breaks("extra-reply.sh", "repeat,protocol", "repeat", "got 'busy'");
	expect_line(out(), "protocol", "FAIL", "got 'busy'");
}

Test(adapter_test, an_adapter_that_hangs_misses_its_deadline, .init = setup)
{
	breaks("hangs.sh", "mutex,deadlines", "deadlines", "no answer to '");
	expect_line(out(), "mutex", "FAIL", "no answer to 'acquire' within 6000 ms");
}

Test(adapter_test, a_bye_without_an_exit_fails_quit, .init = setup)
{
	breaks("bye-stays.sh", "quit", "quit", "did not exit within 5000 ms");
}

Test(adapter_test, a_lock_that_never_grants_fails_mutex, .init = setup)
{
	breaks("always-busy.sh", "mutex", "mutex", "c0 'acquire' on a free lock: 'busy'");
}

Test(adapter_test, a_lock_that_lets_two_in_fails_mutex, .init = setup)
{
	breaks("lost-mid-section.sh", "mutex", "mutex", "c1 'acquire' while c0 held the lock: "
	       "'acquired'");
}

/* ---- the command ---- */

Test(adapter_test, usage_errors, .init = setup)
{
	const char *recipe[] = { "adapter-test", "set-nx-px", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, recipe), 2, "%s", out());
	cr_assert(strstr(out(), "not an adapter"), "%s", out());
	const char *only[] = { "adapter-test", "redis-py@4.3.4", "--only", "mutex,nope", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, only), 2, "%s", out());
	cr_assert(strstr(out(), "no property 'nope'"), "%s", out());
	const char *none[] = { "adapter-test", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, none), 2, "%s", out());
	const char *missing[] = { "adapter-test", "exec:/nonexistent/lock", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, missing), 2, "%s", out());
}

/* --json and --junit say the same as the lines, each in a form a program reads. */
Test(adapter_test, json_and_junit, .init = setup)
{
	char xml[256], cmd[1400];
	snprintf(xml, sizeof(xml), "%s/at.xml", tmpdir);
	const char *args[] = { "adapter-test", adapter("lost-late.py"), "--only", "lost", "--json",
			       "--junit", xml, NULL };
	char json[256], err[256];
	snprintf(json, sizeof(json), "%s/out.json", tmpdir);
	snprintf(err, sizeof(err), "%s/err.txt", tmpdir);
	pid_t pid = fx_spawn_lockbench(args, json, err);
	cr_assert_eq(fx_wait_lockbench(pid, args), 1, "%s", fx_slurp(tmpdir, "err.txt"));
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys,xml.etree.ElementTree as E; d=json.load(open(sys.argv[1]));"
		 "p={x[\"property\"]:x for x in d[\"properties\"]}; assert not d[\"passed\"];"
		 "assert p[\"lost\"][\"result\"]==\"FAIL\" and \"lag \" in p[\"lost\"][\"evidence\"];"
		 "assert p[\"hello\"][\"result\"]==\"PASS\"; r=E.parse(sys.argv[2]).getroot();"
		 "f=[c for c in r.iter(\"testcase\") if c.find(\"failure\") is not None];"
		 "assert [c.get(\"name\") for c in f]==[\"lost\"], f' %s %s", json, xml);
	cr_assert_eq(system(cmd), 0, "%s", fx_slurp(tmpdir, "out.json"));
}

/* Ctrl-C in the middle of a property (a paused holder): exit 130 within a
 * second, no server, no adapter, no relay left. */
Test(adapter_test, ctrl_c_stops_it_within_a_second_and_leaves_nothing, .init = setup)
{
	const char *args[] = { "adapter-test", adapter("lost-late.py"), "--only", "release-lapsed",
			       "--ttl", "5000", NULL };
	char output[PATH_MAX];
	snprintf(output, sizeof(output), "%s/output", tmpdir);
	pid_t pid = fx_spawn_lockbench(args, output, output);
	lb_sleep_ns(4 * LB_NS_PER_S); /* the servers up, a session holding and paused */
	int64_t t0 = lb_now_ns();
	kill(pid, SIGINT);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	int64_t ms = (lb_now_ns() - t0) / LB_NS_PER_MS;
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 130, "exit %d: %s",
		  WIFEXITED(status) ? WEXITSTATUS(status) : -1, out());
	cr_assert_lt(ms, 1000, "stopped %lld ms after Ctrl-C", (long long)ms);
	fx_nothing_left(pid);
	char what[256];
	cr_assert_eq(fx_left("lost-late.py", what, sizeof(what)), 0, "left: %s", what);
}

/* Servers that cannot start here: exit 3, never a pass or a failure of the adapter. */
Test(adapter_test, servers_that_cannot_start_are_exit_3, .init = setup)
{
	setenv("LOCKBENCH_REDIS_SERVER", "/nonexistent/redis-server", 1);
	int rc = adapter_test("redis-py@4.3.4", "mutex");
	unsetenv("LOCKBENCH_REDIS_SERVER");
	cr_assert_eq(rc, 3, "exit %d: %s", rc, out());
	cr_assert(!strstr(out(), "PASS") && !strstr(out(), "FAIL"), "%s", out());
}
