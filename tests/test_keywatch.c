/*
 * test_keywatch.c - foreign releases seen from the servers (keywatch.h,
 * foreign.h), end to end: real servers, real clients, the real binary. Where
 * a recipe's release can tell (its GETDEL returns what it deleted), the
 * servers must see what it saw; where the servers are not lockbench's, or
 * the watcher could not keep everything, the figure is n/a and says why.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "fixture.h"
#include "keywatch.h"
#include "plumbing.h"
#include "readers.h"
#include "results.h"
#include "util.h"

FX_SUITE(keywatch, 120);

static char tmpdir[64];

static void mktmp(void)
{
	strcpy(tmpdir, "/tmp/lbtest-keywatch-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
}

static int lb(const char *const *args)
{
	return fx_lockbench(tmpdir, args);
}

static const char *out(void)
{
	return fx_slurp(tmpdir, "output");
}

static const char *text(const char *dir, const char *name)
{
	return fx_summary(dir, name);
}

static double num(const char *dir, const char *name)
{
	return strtod(text(dir, name), NULL);
}

/* Run, then `check` (which judges keyevents.csv again) unless @no_check.
 * (check compares throughput_per_s, written to 2 decimals, within 0.1 %:
 * below 5 sections/s that is finer than the summary's own rounding, a
 * limit of check's that the restart cell, with 300 ms sections, meets.) */
static void run_in(const char *dir, const char *strategy, const char *scenario, const char *seed,
		   bool no_check)
{
	const char *args[] = { "run", "--strategy", strategy, "--scenario", scenario, "--seed", seed,
			       "--out", dir, "--no-status", "--no-report", NULL };
	cr_assert_eq(lb(args), 0, "%s", out());
	const char *check[] = { "check", dir, NULL };
	cr_assert(no_check || lb(check) == 0, "check does not agree with %s: %s", dir, out());
}

/* The recipes whose GETDEL says whose lock it deleted: the servers see the
 * same foreign releases (set-nx-px's cascade under holder-pause, get-del's
 * check-then-delete); token-lua's compare-and-delete never deletes another's. */
Test(keywatch, the_servers_see_what_the_releases_said, .init = mktmp)
{
	static const struct { const char *strategy, *scenario; bool foreign; } cells[] = {
		{ "set-nx-px", "holder-pause", true },
		{ "get-del", "check-then-delete", true },
		{ "token-lua", "holder-pause", false },
	};
	for (size_t i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
		char dir[128];
		snprintf(dir, sizeof(dir), "%s/%s", tmpdir, cells[i].strategy);
		run_in(dir, cells[i].strategy, cells[i].scenario, "1", false);
		cr_assert_str_eq(text(dir, "foreign_source"), "server", "%s", cells[i].strategy);
		double servers = num(dir, "foreign_releases"), client = num(dir, "foreign_releases_client");
		cr_assert_eq(servers, client, "%s: the servers saw %g foreign releases, the releases "
			     "said %g", cells[i].strategy, servers, client);
		cr_assert_eq(servers > 0, cells[i].foreign, "%s: %g", cells[i].strategy, servers);
		cr_assert_eq(num(dir, "foreign_unattributed"), 0, "%s: a del with no release in flight",
			     cells[i].strategy);
		cr_assert_gt(num(dir, "key_events"), 2 * num(dir, "sections") - 1, "%s: a set and a del "
			     "for (nearly) every section", cells[i].strategy);
		cr_assert_str_eq(text(dir, "observed"), cells[i].foreign ? "foreign-release" : "overlap");
	}
}

/* The Redlock libraries in the form their READMEs give, using(), do not
 * hand out the value they write; the adapters see it where the library
 * takes its lock (its own public acquire()), so on five nodes the servers'
 * foreign releases are measured for them too, not n/a. A plain-DEL recipe's
 * lease expiring under a pause would be foreign; here nobody deletes
 * another's lock, and the sets are matched to their sections by token. */
Test(keywatch, redlock_libraries_using_are_judged_on_five_nodes, .init = mktmp)
{
	static const char *const libs[] = { "redlock@5.0.0-beta.2", "sesamecare-redlock@1.4.0",
					    "redlock-universal-redlock@0.8.5" };
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		char dir[128];
		snprintf(dir, sizeof(dir), "%s/lib%zu", tmpdir, i);
		const char *args[] = { "run", "--strategy", libs[i], "--clients", "3", "--duration", "1",
				       "--out", dir, "--no-status", "--no-report", NULL };
		cr_assert_eq(lb(args), 0, "%s", out());
		cr_assert_str_eq(text(dir, "nodes"), "5", "%s", libs[i]);
		cr_assert_str_eq(text(dir, "foreign_source"), "server", "%s", libs[i]);
		cr_assert_eq(num(dir, "foreign_releases"), 0, "%s", libs[i]);
		/* each section's acquire wrote at least a majority of the five nodes (a set
		 * and its del each): under load an acquire may get 3 or 4 of them, so "all
		 * five, nine times in ten" failed once under ASan in make check */
		double sets = num(dir, "key_events") / 2;
		cr_assert_geq(sets, 3 * num(dir, "sections"), "%s: a set on a majority of the nodes "
			      "per section (%g sets, %g sections)", libs[i], sets, num(dir, "sections"));
		const char *hist = fx_slurp(dir, "history.csv");
		const char *row = strchr(hist, '\n');
		cr_assert(row && strchr(row + 1, '\n') && strchr(row + 1, '\n')[-1] != ',',
			  "%s: the first section has no token: %s", libs[i], hist);
	}
}

/* A node that restarts empty loses the lock without a notification, and
 * the watcher's connection: it watches again, and what the node held is
 * unknown until the next set. */
Test(keywatch, a_restarted_node_is_watched_again, .init = mktmp)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/restart", tmpdir);
	run_in(dir, "set-nx-px", "server-restart", "1", true);
	const char *k = fx_slurp(tmpdir, "restart/keyevents.csv");
	const char *unwatch = strstr(k, ",unwatch,");
	cr_assert_not_null(unwatch, "the restart did not end the watch: %s", k);
	cr_assert_not_null(strstr(unwatch, ",watch,"), "not watched again after the restart: %s", k);
	/* found without the key the node held before it restarted: empty (-2),
	 * or holding a token a client set on the restarted node before the
	 * watcher came back (a poller 10 ms apart can be first: once under make
	 * test's second lane) */
	const char *found = strstr(strstr(unwatch, ",watch,"), ",found,");
	cr_assert_not_null(found, "the restarted node was not read again: %s", k);
	char before[64] = "", after[64] = "";
	for (const char *p = k; (p = strstr(p, ",set,")) && p < unwatch; p += 5)
		sscanf(p + 5, "%63[^,]", before);
	sscanf(found + 7, "%63[^,]", after);
	cr_assert(before[0], "no lock was set before the restart: %s", k);
	cr_assert(strcmp(before, after) != 0, "the restarted node still held %s, the key of before "
		  "the restart: %s", before, k);
	cr_assert_str_eq(text(dir, "foreign_source"), "server");
	cr_assert_eq(num(dir, "foreign_releases"), num(dir, "foreign_releases_client"));
}

/* The watcher's own commands (a GET and a PING for each set) are not the
 * lock's. set-nx-px sends one SET a try and one DEL a release, so its count
 * must be exactly tries + sections, with the watcher (whose reads, if they
 * were counted, would add more than one a section) and without. (This was a
 * comparison of commands per section within 0.15 between the two runs: that
 * is the tries per section, which follows the machine's load.) */
Test(keywatch, the_watchers_commands_are_not_counted_as_the_locks, .init = mktmp)
{
	char on[128], off[128];
	snprintf(on, sizeof(on), "%s/on", tmpdir);
	snprintf(off, sizeof(off), "%s/off", tmpdir);
	const char *a[] = { "run", "--strategy", "set-nx-px", "--clients", "3", "--duration", "1.5",
			    "--out", on, "--no-status", "--no-report", NULL };
	cr_assert_eq(lb(a), 0, "%s", out());
	setenv("LOCKBENCH_NO_KEYWATCH", "1", 1);
	a[8] = off;
	int rc = lb(a);
	unsetenv("LOCKBENCH_NO_KEYWATCH");
	cr_assert_eq(rc, 0, "%s", out());
	cr_assert_str_eq(text(on, "foreign_source"), "server");
	cr_assert_str_eq(text(off, "foreign_source"), "client", "not watched: the releases' count");
	cr_assert_gt(num(on, "key_events"), 2 * num(on, "sections") - 1, "the watcher read little");
	const char *const dirs[] = { on, off };
	for (size_t i = 0; i < 2; i++) {
		double cmds = num(dirs[i], "lock_commands"), tries = num(dirs[i], "attempts"),
		       sections = num(dirs[i], "sections");
		cr_assert_gt(sections, 0, "%s", dirs[i]);
		cr_assert_eq(cmds, tries + sections, "%s: %g lock commands, but %g tries and %g "
			     "releases", i ? "without the watcher" : "with the watcher", cmds, tries,
			     sections);
	}
}

/* Nothing is silently capped: when the log of key events fills, the run
 * says so and the servers' figure is not reported (n/a for a library's
 * release, which cannot say; the releases' own count for a recipe). */
Test(keywatch, a_full_log_is_said_and_not_counted, .init = mktmp)
{
	char dir[128], spec[PATH_MAX];
	const char *sc = getenv("LOCKBENCH_SCENARIOS");
	cr_assert_not_null(sc);
	snprintf(spec, sizeof(spec), "exec:%s/../tests/adapters/plain-del.py", sc);
	snprintf(dir, sizeof(dir), "%s/full", tmpdir);
	setenv("LOCKBENCH_KEY_EVENTS_MAX", "20", 1);
	const char *args[] = { "run", "--strategy", spec, "--clients", "2", "--duration", "1",
			       "--out", dir, "--no-status", "--no-report", NULL };
	int rc = lb(args);
	unsetenv("LOCKBENCH_KEY_EVENTS_MAX");
	cr_assert_eq(rc, 0, "%s", out());
	cr_assert(strstr(out(), "the key-event log filled at 20 events"), "%s", out());
	cr_assert_str_eq(text(dir, "foreign_releases"), "n/a");
	cr_assert_str_eq(text(dir, "foreign_source"), "n/a");
	cr_assert_str_eq(text(dir, "key_events"), "n/a");
	const char *check[] = { "check", dir, NULL };
	cr_assert_eq(lb(check), 0, "%s", out());
}

/* On servers lockbench did not start nothing is watched: a library's
 * foreign releases are n/a everywhere (the run, the summary, compare's
 * table), never 0; a recipe's are what its releases said. */
Test(keywatch, servers_that_are_not_lockbenchs_are_not_watched, .init = mktmp)
{
	struct fx f;
	char url[64], dir[128], spec[PATH_MAX];
	const char *sc = getenv("LOCKBENCH_SCENARIOS");
	cr_assert_not_null(sc);
	snprintf(spec, sizeof(spec), "exec:%s/../tests/adapters/plain-del.py", sc);
	fx_start(&f, 1);
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d", f.srv[0]->port);
	snprintf(dir, sizeof(dir), "%s/cmp", tmpdir);
	char strategies[PATH_MAX + 32];
	snprintf(strategies, sizeof(strategies), "%s,set-nx-px", spec);
	const char *args[] = { "compare", "--strategies", strategies, "--clients", "2", "--duration",
			       "1", "--redis", url, "--out", dir, "--no-status", "--no-report", NULL };
	cr_assert_eq(lb(args), 0, "%s", out());
	redisReply *r = fx_cmd(&f, 0, "CONFIG GET notify-keyspace-events");
	cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
		  !strcmp(r->element[1]->str, ""), "lockbench changed the user's server's config");
	freeReplyObject(r);
	fx_stop(&f);
	char sub[PATH_MAX];
	const char *table = fx_slurp(tmpdir, "cmp/compare.txt");
	const char *row = strstr(table, "plain-del.py");
	cr_assert_not_null(row, "%s", table);
	char line[256];
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(row, "\n"), row);
	cr_assert_not_null(strstr(line, " n/a "), "compare printed a number for n/a: %s", line);
	snprintf(sub, sizeof(sub), "%s/set-nx-px", dir);
	cr_assert_str_eq(text(sub, "foreign_source"), "client");
	cr_assert_neq(strcmp(text(sub, "foreign_releases"), "n/a"), 0);
	cr_assert(strstr(out(), "the servers are not lockbench's"), "%s", out());
}

/* A lock written as another type (Symfony Lock's sorted set, ZADD) shows
 * the servers no set: its foreign releases are n/a, said why, never a 0
 * the watcher could not have seen otherwise. */
Test(keywatch, a_lock_the_watcher_cannot_see_written_is_na, .init = mktmp)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/zset", tmpdir);
	const char *args[] = { "run", "--strategy", "symfony-lock@5.4.53", "--clients", "2",
			       "--duration", "1", "--out", dir, "--no-status", "--no-report", NULL };
	cr_assert_eq(lb(args), 0, "%s", out());
	cr_assert(strstr(out(), "the servers showed no set of a lock key"), "%s", out());
	cr_assert_gt(num(dir, "sections"), 0);
	cr_assert_str_eq(text(dir, "foreign_source"), "n/a");
	cr_assert_str_eq(text(dir, "foreign_releases"), "n/a");
	const char *check[] = { "check", dir, NULL };
	cr_assert_eq(lb(check), 0, "%s", out());
}

/* The key's TTL after every change of it, against a real server: what the
 * server held when the watch began (found), SETNX and a separate EXPIRE
 * (the set first has no TTL), a PEXPIRE renewal, a SET with PX (its set and
 * its expire are one command: the set's value is still read), and a key
 * left with no TTL. Each command waits for the watcher's read of the one
 * before, so that every read is its own: for the watcher to ask (its count of
 * commands grows; under make check's load it once read 200 ms late, after the
 * next command), then 200 ms for its answer. A TTL read is judged within
 * 1 s of what was set: the TTLs set are 2 s apart, so a read of another
 * change cannot pass for this one's, and a read a loaded machine delays by
 * more than the 200 ms wait is still this one's. */
Test(keywatch, the_ttl_is_read_after_every_change_of_it)
{
	struct fx f;
	struct lb_keywatch kw;
	char why[256];
	static const char *const names[] = { "tt:lock:0" };
	static const int key_of[] = { 0 };
	struct lb_keywatch_keys keys = { names, key_of, 1 };

	fx_start(&f, 1);
	struct lb_keywatch_server srv = { .port = f.srv[0]->port, .node = 0 };
	freeReplyObject(fx_cmd(&f, 0, "SET tt:lock:0 tok0 PX 9000"));
	int64_t t0 = lb_now_ns();
	cr_assert_eq(lb_keywatch_start(&kw, &srv, 1, &keys, 10, why, sizeof(why)), 0, "%s", why);
	static const char *const cmds[] = {
		"DEL tt:lock:0", "SET tt:lock:0 tokA NX", "EXPIRE tt:lock:0 5", "PEXPIRE tt:lock:0 7000",
		"DEL tt:lock:0", "SET tt:lock:0 tokB NX PX 3000", "SET other:key x",
		"DEL tt:lock:0", "SETNX tt:lock:0 tokC",
	};
	lb_sleep_ns(200 * LB_NS_PER_MS); /* the snapshot read before the first command */
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		uint64_t asked = lb_keywatch_commands(&kw, srv.port);
		freeReplyObject(fx_cmd(&f, 0, cmds[i]));
		/* a set or an expire of the lock key: the watcher reads it */
		bool read = strstr(cmds[i], "tt:lock:0") && strncmp(cmds[i], "DEL", 3);
		for (int t = 0; read && t < 500 && lb_keywatch_commands(&kw, srv.port) == asked; t++)
			lb_sleep_ns(10 * LB_NS_PER_MS);
		cr_assert(!read || lb_keywatch_commands(&kw, srv.port) > asked,
			  "the watcher did not read the key within 5 s of %s", cmds[i]);
		lb_sleep_ns(200 * LB_NS_PER_MS);
	}
	struct lb_key_event *e;
	size_t n;
	cr_assert_eq(lb_keywatch_finish(&kw, t0, &e, &n, why, sizeof(why)), 0, "%s", why);
	lb_keywatch_stop(&kw);
	fx_stop(&f);
	static const struct { int kind; const char *value; int lo, hi; } want[] = {
		{ LB_KEY_WATCH, NULL, 0, 0 },
		{ LB_KEY_FOUND, "tok0", 8000, 9000 }, /* there before the watch */
		{ LB_KEY_DEL, NULL, 0, 0 },
		{ LB_KEY_SET, "tokA", -1, -1 },        /* SETNX alone: no TTL yet */
		{ LB_KEY_EXPIRE, NULL, 4000, 5000 },   /* the separate EXPIRE */
		{ LB_KEY_EXPIRE, NULL, 6000, 7000 },   /* a renewal */
		{ LB_KEY_DEL, NULL, 0, 0 },
		{ LB_KEY_SET, "tokB", LB_KEY_TTL_UNKNOWN, LB_KEY_TTL_UNKNOWN }, /* its expire came first */
		{ LB_KEY_EXPIRE, NULL, 2000, 3000 },
		{ LB_KEY_DEL, NULL, 0, 0 },
		{ LB_KEY_SET, "tokC", -1, -1 },        /* and nothing sets one: none, ever */
	};
	size_t nw = sizeof(want) / sizeof(want[0]);
	char got[1024] = "";
	for (size_t i = 0; i < n && strlen(got) < sizeof(got) - 40; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), " %s(%d)",
			 lb_key_kind_name(e[i].kind), (int)e[i].ttl_ms);
	cr_assert_eq(n, nw, "%zu events, expected %zu:%s", n, nw, got);
	for (size_t i = 0; i < nw; i++) {
		cr_assert_eq(e[i].kind, want[i].kind, "event %zu: %s, expected %s", i,
			     lb_key_kind_name(e[i].kind), lb_key_kind_name(want[i].kind));
		if (want[i].value)
			cr_assert_eq(e[i].value, lb_token_hash(want[i].value, strlen(want[i].value)),
				     "event %zu: the value of %s not read", i, want[i].value);
		if (want[i].kind == LB_KEY_SET || want[i].kind == LB_KEY_EXPIRE ||
		    want[i].kind == LB_KEY_FOUND)
			cr_assert(e[i].ttl_ms >= want[i].lo && e[i].ttl_ms <= want[i].hi,
				  "event %zu (%s): ttl %d, expected %d to %d", i,
				  lb_key_kind_name(e[i].kind), (int)e[i].ttl_ms, want[i].lo, want[i].hi);
	}
	free(e);
}

/* The crash-before-expire deadlock as the servers saw it: setnx's holder is
 * killed inside, and its key stays, with no TTL, to the end of the run. */
Test(keywatch, a_dead_holders_key_without_ttl_is_recorded, .init = mktmp)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/cbe", tmpdir);
	run_in(dir, "setnx", "crash-before-expire", "7", false);
	char *k = strdup(fx_slurp(dir, "keyevents.csv"));
	cr_assert(strstr(k, "t_ns,server,port,node,key,event,value,ttl_ms\n") == k, "%s", k);
	char *last = NULL;
	for (char *p = strtok(k, "\n"); p; p = strtok(NULL, "\n"))
		last = p;
	cr_assert(last && strstr(last, ",set,") && !strcmp(last + strlen(last) - 3, ",-1"),
		  "the last event must be a set with no TTL (-1): %s", last);
	free(k);
}
