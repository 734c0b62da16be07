/* test_scenario.c - the scenario parser: every error path names file and line;
 * every shipped scenario loads and states what it expects. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "fixture.h"
#include "adapter.h"
#include "cluster.h"
#include "scenario.h"
#include "strategy.h"
#include "topology.h"

FX_SUITE(scenario, 30);

static struct lb_scenario sc;
static char path[64];

static int parse_text(const char *text)
{
	strcpy(path, "/tmp/lbtest-scenario-XXXXXX.ini");
	int fd = mkstemps(path, 4);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	int rc = lb_scenario_parse_file(path, &sc);
	unlink(path);
	return rc;
}

/* The text must fail at @line with a message containing @what. */
static void fails_at(const char *text, int line, const char *what)
{
	char where[96];

	cr_assert_eq(parse_text(text), LB_EINVAL, "accepted:\n%s", text);
	snprintf(where, sizeof(where), "%s:%d: ", path, line);
	cr_assert(strstr(sc.error, where), "expected %s in '%s'", where, sc.error);
	cr_assert(strstr(sc.error, what), "expected '%s' in '%s'", what, sc.error);
}

Test(scenario, a_full_file_parses)
{
	const char *text =
		"; a comment\n"
		"[scenario]\n"
		"summary = one line\n"
		"description = first line\n"
		"  continued here\n"
		"\n"
		"[run]\n"
		"clients = 3\n"
		"duration = 2.5\n"
		"ttl = 1000\n"
		"hold = 10-20\n"
		"think = 5\n"
		"wait = retries:3:200\n"
		"nodes = 5\n"
		"work = none\n"
		"\n"
		"[fault pause-it]\n"
		"action = pause\n"
		"target = holder\n"
		"at = 0.5\n"
		"duration = 2500\n"
		"then = other-inside\n"
		"\n"
		"[fault restart]\n"
		"action = node-restart\n"
		"nodes = 2,4\n"
		"delay = 100\n"
		"\n"
		"[expect]\n"
		"token-lua = overlap\n"
		"redlock = unavailable\n";
	cr_assert_eq(parse_text(text), 0, "%s", sc.error);
	cr_assert_str_eq(sc.summary, "one line");
	cr_assert_str_eq(sc.description, "first line continued here");
	cr_assert_eq(sc.run.clients, 3);
	cr_assert_float_eq(sc.run.duration_s, 2.5, 1e-9);
	cr_assert_eq(sc.run.hold_min_ms, 10);
	cr_assert_eq(sc.run.hold_max_ms, 20);
	cr_assert_eq(sc.run.wait.kind, LB_WAIT_RETRIES);
	cr_assert_eq(sc.run.work, LB_WORK_NONE);
	cr_assert_eq(sc.n_faults, 2);
	cr_assert_eq(sc.faults[0].action, LB_ACT_PAUSE);
	cr_assert_eq(sc.faults[0].target, LB_TGT_HOLDER);
	cr_assert_eq(sc.faults[0].line, 17);
	cr_assert(sc.faults[0].then_other_inside);
	cr_assert_eq(sc.faults[1].nodes, (1u << 2) | (1u << 4));
	cr_assert_eq(sc.faults[1].line, 24);
	cr_assert_eq(lb_scenario_expected(&sc, "token-lua"), LB_CLASS_OVERLAP);
	cr_assert_eq(lb_scenario_expected(&sc, "redlock"), LB_CLASS_UNAVAILABLE);
	cr_assert_eq(lb_scenario_expected(&sc, "setnx"), -1);
}

Test(scenario, errors_name_the_line)
{
	fails_at("[bogus]\nx = 1\n", 2, "unknown section [bogus]");
	fails_at("x = 1\n", 1, "outside any section");
	fails_at("[run]\nclients = 3\nflavour = mint\n", 3, "unknown key 'flavour' in [run]");
	fails_at("[run]\n\n; zero clients\nclients = 0\n", 4, "clients: expected an integer");
	fails_at("[run]\nduration = -2\n", 2, "duration: expected seconds");
	fails_at("[run]\nttl = soon\n", 2, "ttl: expected milliseconds");
	fails_at("[run]\nhold = 9-3\n", 2, "hold: expected MS or MIN-MAX");
	fails_at("[run]\nwait = sometimes\n", 2, "expected try, fixed:MS");
	fails_at("[run]\nreplica = maybe\n", 2, "replica: expected yes or no");
	fails_at("[run]\nwork = hard\n", 2, "work: expected counter or none");
	fails_at("[run]\nthis line has no equals sign\n", 2, "expected");
	fails_at("[scenario]\nonly = redlock,bogus\n", 2, "unknown strategy 'bogus'");
	fails_at("[scenario]\ndescription = a\n  b\n  c\ncolour = red\n", 5, "unknown key 'colour'");
	fails_at("[run]\nclients = 3\n  4\n", 3, "clients: the value goes on over an indented line");
	fails_at("[scenario]\nonly = redlock,\n  bogus\n", 3, "unknown strategy 'bogus'");
	/* a header without its ']' is blamed on its own line, not the next key */
	fails_at("[scenario\nsummary = s\n", 1, "section header '[scenario' has no closing ']'");
	fails_at("[run]\nclients = 2\n\n  [fault f\naction = kill\n", 4, "has no closing ']'");
	/* a near miss names the strategy meant */
	fails_at("[scenario]\nonly = token_lua\n", 2, "unknown strategy 'token_lua' (did you mean 'token-lua'?)");
	fails_at("[expect]\nRedlok = safe\n", 2, "unknown strategy 'Redlok' (did you mean 'redlock'?)");
	/* a key above the last header is blamed on its own line (it was the last
	 * header's, 7, found by a hostile review) */
	fails_at("[scenario]\nsummary = s\nalone = maybe\n[run]\nclients = 2\ncalls = 1.5\n[expect]\n"
		 "setnx = safe\n", 3, "alone: expected yes or no");
	fails_at("[scenario]\nsummary = s\n[run]\nclients = 2\ncalls = 1.5\n[expect]\nsetnx = safe\n", 5,
		 "calls");
	fails_at("[run]\ncalls = 1\ncalls = 2\n[expect]\nsetnx = safe\n", 3, "calls");
}

/* The strategy a near miss meant, and none for a name nothing resembles. */
Test(scenario, a_near_miss_suggests_the_strategy)
{
	cr_assert_str_eq(lb_strategy_nearest("token_lua"), "token-lua");
	cr_assert_str_eq(lb_strategy_nearest("SET_NX_PX"), "set-nx-px");
	cr_assert_str_eq(lb_strategy_nearest("redlok"), "redlock");
	cr_assert_str_eq(lb_strategy_nearest("setnx-expir"), "setnx-expire");
	cr_assert_null(lb_strategy_nearest("xyz"));
	cr_assert_null(lb_strategy_nearest(""));
}

/* An `only` list over several lines keeps every line (failover's did not once). */
Test(scenario, only_list_spans_lines)
{
	cr_assert_eq(parse_text("[scenario]\nsummary = s\ndescription = d\n"
				"only = setnx,token-lua,\n  fenced\n  , renewal\n"), 0, "%s", sc.error);
	cr_assert(lb_scenario_applies(&sc, "setnx"));
	cr_assert(lb_scenario_applies(&sc, "token-lua"));
	cr_assert(lb_scenario_applies(&sc, "fenced"));
	cr_assert(lb_scenario_applies(&sc, "renewal"));
	cr_assert_not(lb_scenario_applies(&sc, "redlock"));
	/* kept as `list` shows it: no spaces, no empty entries (a line ending in
	 * ',' before one opening with ',' once showed as ",,") */
	cr_assert_str_eq(sc.only, "setnx,token-lua,fenced,renewal");
}

/* `except` leaves strategies out and keeps every other one, exec: adapters
 * included (an `only` list would shut those out). A list is never empty and
 * names nobody twice. */
Test(scenario, except_leaves_a_strategy_out)
{
	cr_assert_eq(parse_text("[scenario]\nsummary = s\ndescription = d\nexcept = setnx-getset\n"), 0,
		     "%s", sc.error);
	cr_assert_not(lb_scenario_applies(&sc, "setnx-getset"));
	cr_assert(lb_scenario_applies(&sc, "token-lua"));
	cr_assert(lb_scenario_applies(&sc, "redis-py@4.3.4"));
	fails_at("[scenario]\nexcept = token_lua\n", 2, "except: unknown strategy 'token_lua' (did you "
		 "mean 'token-lua'?)");
	/* an empty list or a name given twice is a slip, said, not a silent no-op */
	fails_at("[scenario]\nexcept =\n", 2, "except: expected strategies (NAME, NAME), got nothing");
	fails_at("[scenario]\nonly = ,\n", 2, "only: expected strategies (NAME, NAME), got nothing");
	fails_at("[scenario]\nexcept = setnx, setnx\n", 2, "except: 'setnx' is named twice");
	fails_at("[scenario]\nlessons = fair,\n  fair\n", 3, "lessons: 'fair' is named twice");
	fails_at("[scenario]\nonly =\n[run]\nclients = 2\n", 2,
		 "only: expected strategies (NAME, NAME), got nothing");
	/* a list may be written on its continuation lines alone, and a tab separates */
	cr_assert_eq(parse_text("[scenario]\nsummary = s\nonly =\n  token-lua,\tfenced\n[run]\n"
				"clients = 2\n"), 0, "%s", sc.error);
	cr_assert(lb_scenario_applies(&sc, "fenced") && !lb_scenario_applies(&sc, "redlock"));
}

Test(scenario, fault_errors)
{
	fails_at("[fault f]\nat = 1\n", 1, "[fault f] has no action");
	fails_at("[fault f]\naction = explode\n", 2, "action: expected one of");
	fails_at("[run]\nclients = 2\n\n[fault p]\naction = pause\ntarget = holder\n", 4,
		 "pause needs duration");
	fails_at("[fault k]\naction = kill\n", 1, "kill needs target = holder or client:N");
	/* a number out of range says the range, not only the unit */
	fails_at("[fault p]\naction = pause\ntarget = holder\nwithin = 0\n", 4,
		 "within: expected milliseconds from 1 to 86400000, got '0'");
	fails_at("[fault k]\naction = kill\ntarget = everyone\n", 3, "target: expected holder");
	fails_at("[fault s]\naction = sleep\nfailpoint = after-send\n", 1, "sleep needs duration");
	fails_at("[fault c]\naction = crash\n", 1, "crash needs failpoint");
	fails_at("[fault s]\naction = slow\n", 1, "slow needs hold");
	fails_at("[fault n]\naction = node-kill\n", 1, "node-kill needs nodes");
	fails_at("[fault d]\naction = net-delay\nnodes = 0\ndelay = 5\ndirection = sideways\n", 5,
		 "direction: expected requests or replies, got 'sideways'");
	fails_at("[fault d]\naction = net-cut\nnodes = 0\ndirection = replies\n", 1,
		 "direction = replies is for net-delay");
	fails_at("[fault d]\naction = net-delay\nnodes = 0\ndelay = 5\ntarget = holder\n"
		 "when = waiting\n", 1, "when = waiting needs target = client:N");
	fails_at("[fault p]\naction = pause\ntarget = holder\nduration = 5\nwhen = later\n", 5,
		 "when: expected waiting, after-read or before-write, got 'later'");
	fails_at("[fault n]\naction = node-kill\nnodes = 0\nwhen = after-read\n", 1,
		 "when = after-read is for pause and kill");
	fails_at("[run]\nwork = none\n[fault p]\naction = pause\ntarget = holder\nduration = 5\n"
		 "when = after-read\n", 3, "when = after-read needs work = counter");
	fails_at("[fault w]\naction = kill\ntarget = holder\nwhen = before-write\n", 1,
		 "when = before-write is for pause");
	fails_at("[run]\nwork = none\n[fault w]\naction = pause\ntarget = holder\nduration = 5\n"
		 "when = before-write\n", 3, "when = before-write needs work = counter");
	fails_at("[fault n]\naction = node-kill\nnodes = two\n", 3, "nodes: expected all, leader (etcd, ZooKeeper), or node indexes");
	fails_at("[fault n]\naction = node-restart\nnodes = leader\n", 1, "nodes = leader goes with node-kill and node-pause");
	fails_at("[run]\nnodes = 3\n[fault n]\naction = node-kill\nnodes = 4\n", 3,
		 "beyond the 3 of [run] nodes");
	fails_at("[run]\nclients = 2\n[fault k]\naction = kill\ntarget = client:5\n", 3,
		 "targets client:5 but [run] has 2 clients");
	fails_at("[fault f]\naction = failover\n", 1, "failover needs replica = yes");
	fails_at("[fault t]\naction = pause\ntarget = holder\nduration = 5\nthen = later\n", 5,
		 "then: expected other-inside");
	fails_at("[fault p]\naction = partition\ntarget = client:0\n", 1, "partition needs");
	fails_at("[fault c]\naction = clock\noffset = 5\n", 1, "clock needs target = client:N");
}

/* No silent limits: a line inih would split, or a fault name too long to
 * keep (each of its keys became a fault of its own), is refused. */
Test(scenario, long_lines_and_long_fault_names_are_refused)
{
	char text[600], name[80];
	memset(name, 'n', 48);
	name[48] = '\0';
	snprintf(text, sizeof(text), "[fault %s]\naction = kill\ntarget = holder\n", name);
	fails_at(text, 2, "longer than 47 bytes");
	snprintf(text, sizeof(text), "[run]\nclients = 2\n; %0250d\n", 0);
	fails_at(text, 3, "a line longer than 198 bytes");
	/* 47 is still a name */
	name[41] = '\0';
	snprintf(text, sizeof(text), "[fault %s]\naction = kill\ntarget = holder\n", name);
	cr_assert_eq(parse_text(text), 0, "%s", sc.error);
	cr_assert_eq(sc.n_faults, 1);
}

Test(scenario, expect_errors)
{
	fails_at("[expect]\nmutex9000 = safe\n", 2, "unknown strategy 'mutex9000'");
	fails_at("[expect]\ntoken-lua = fine\n", 2, "expected safe, contained, overlap, foreign-release");
	fails_at("[expect]\ntoken-lua = safe\nsetnx = safe\ntoken-lua = overlap\n", 4, "given twice");
	fails_at("[expect]\ntoken-lua = interrupted\n", 2, "a run cut short is never compared");
}

/* An except list names every library a scenario leaves out: the Java ones
 * added eight names of up to 27 characters to lists already 250 long (it was
 * 256 bytes, "list too long"). */
Test(scenario, a_long_except_list_loads)
{
	char text[2048];
	snprintf(text, sizeof(text), "[scenario]\nsummary = s\ndescription = d\n"
		 "except = redlock, redlock@4.2.0, redlock@5.0.0-beta.2, sesamecare-redlock@1.4.0,\n"
		 "  redis-semaphore-redlock@5.8.0, redlock-universal-redlock@0.8.5, symfony-lock@5.4.53,\n"
		 "  symfony-lock-combined@5.4.53, redisson-fair-lock@3.52.0, redisson-fenced-lock@3.52.0,\n"
		 "  redisson-lock-lease@3.52.0, redisson-lock@3.52.0, redisson-multilock@3.52.0,\n"
		 "  redisson-redlock@3.52.0, curator-mutex@5.9.0, curator-mutex-fenced@5.9.0\n"
		 "[run]\nclients = 2\n[expect]\ntoken-lua = safe\n");
	cr_assert_eq(parse_text(text), 0, "%s", sc.error);
	cr_assert(!lb_scenario_applies(&sc, "curator-mutex-fenced@5.9.0"));
	cr_assert(!lb_scenario_applies(&sc, "redlock"));
	cr_assert(lb_scenario_applies(&sc, "token-lua"));
}

Test(scenario, missing_file)
{
	cr_assert_eq(lb_scenario_parse_file("/nonexistent/x.ini", &sc), LB_ESYS);
	cr_assert(strstr(sc.error, "/nonexistent/x.ini"));
	cr_assert_eq(lb_scenario_load("no-such-scenario", &sc), LB_EINVAL);
}

Test(scenario, shipped_scenarios_load_and_expect_every_strategy)
{
	/* a scenario with a failpoint asks every library adapter's hello, once
	 * each: some 35 programs (Python, Node, PHP, Go, JVMs) started in turn,
	 * which ran past the suite's 30 s under make test's load (SIGALRM, read
	 * as a crash, in 2 CI runs of 3) */
	fx_deadline(240);
	char names[64][64];
	int n = lb_scenario_names(names, 64);
	static const char *const required[] = {
		"baseline", "holder-crash", "crash-before-expire", "holder-pause", "slow-holder",
		"check-then-delete", "server-restart", "failover", "redlock-minority-down",
		"redlock-majority-down", "redlock-node-restart", "redlock-clock-jump",
		"redlock-pause-during-acquire", "client-clock-skew", NULL,
	};

	for (const char *const *r = required; *r; r++) {
		bool found = false;
		for (int i = 0; i < n; i++)
			found |= !strcmp(names[i], *r);
		cr_assert(found, "scenario %s is missing", *r);
	}
	for (int i = 0; i < n; i++) {
		cr_assert_eq(lb_scenario_load(names[i], &sc), 0, "%s", sc.error);
		cr_assert(sc.summary[0] && sc.description[0], "%s: no summary or description", names[i]);
		for (size_t k = 0; k < lb_strategy_count(); k++) {
			const char *s = lb_strategy_at(k)->name;
			if (lb_scenario_applies(&sc, s))
				cr_assert_geq(lb_scenario_expected(&sc, s), 0, "%s expects nothing of %s",
					      names[i], s);
			else /* an expectation for a strategy never run is a dead line */
				cr_assert_lt(lb_scenario_expected(&sc, s), 0,
					     "%s expects something of %s but does not run it",
					     names[i], s);
		}
	}
}

/* Every strategy and every scenario has its lesson, and the charts it shows exist. */
Test(scenario, every_strategy_and_scenario_has_its_page)
{
	char dir[PATH_MAX], page[PATH_MAX + 64], names[64][64], line[512];

	cr_assert(lb_scenario_dir(dir, sizeof(dir) - 16));
	strcat(dir, "/../docs");
	for (size_t i = 0; i < lb_strategy_count(); i++) {
		const struct lock_strategy *s = lb_strategy_at(i);
		if (lb_strategy_is_external(s)) /* a library: its page in docs/libraries */
			snprintf(page, sizeof(page), "%.3000s/libraries/%.60s.md", dir,
				 lb_adapter_def_of(s)->library);
		else
			snprintf(page, sizeof(page), "%s/strategies/%s.md", dir, s->name);
		cr_assert_eq(access(page, R_OK), 0, "missing %s", page);
	}
	int n = lb_scenario_names(names, 64);
	for (int i = 0; i < n; i++) {
		snprintf(page, sizeof(page), "%s/pitfalls/%s.md", dir, names[i]);
		FILE *f = fopen(page, "r");
		cr_assert_not_null(f, "missing %s", page);
		while (fgets(line, sizeof(line), f)) {
			char *img = strstr(line, "](../img/");
			if (!img)
				continue;
			char *end = strchr(img, ')');
			cr_assert_not_null(end);
			*end = '\0';
			char png[PATH_MAX + 64];
			snprintf(png, sizeof(png), "%s/pitfalls/%s", dir, img + 2);
			cr_assert_eq(access(png, R_OK), 0, "%s shows %s, which does not exist", page, png);
		}
		fclose(f);
	}
}

/* The recipes are registered (and so listed, compared and drawn in the
 * matrix) in the teaching order of docs/index.md's table. */
Test(scenario, strategies_come_in_the_teaching_order_of_the_docs)
{
	char index_md[PATH_MAX], line[512];
	size_t next = 0;

	cr_assert(lb_scenario_dir(index_md, sizeof(index_md) - 32));
	strcat(index_md, "/../docs/index.md");
	FILE *f = fopen(index_md, "r");
	cr_assert_not_null(f, "cannot read %s", index_md);
	while (fgets(line, sizeof(line), f)) {
		char *a = strstr(line, "](strategies/"), *end;
		if (strncmp(line, "| [", 3) || !a || !(end = strstr(a, ".md)")))
			continue;
		*end = '\0';
		const char *name = a + strlen("](strategies/");
		cr_assert_lt(next, lb_strategy_count(), "docs/index.md lists more than the registry");
		const struct lock_strategy *s = lb_strategy_at(next++);
		cr_assert_str_eq(s->name, name, "docs/index.md row %zu is %s, the registry's is %s",
				 next, name, s->name);
	}
	fclose(f);
	cr_assert_gt(next, 0, "no strategy table found in %s", index_md);
	/* every recipe has its row; the libraries follow */
	cr_assert(next == lb_strategy_count() || lb_strategy_is_external(lb_strategy_at(next)),
		  "%s has no row in docs/index.md", lb_strategy_at(next)->name);
}

/* The network faults and [chaos] are checked like the others. */
Test(scenario, net_and_chaos_errors)
{
	fails_at("[fault d]\naction = net-delay\nresource = yes\n", 1, "net-delay needs delay = MS");
	fails_at("[fault b]\naction = net-blackhole\n", 1, "needs nodes = LIST|all or resource = yes");
	fails_at("[fault b]\naction = net-cut\nnodes = all\nthen = later\n", 4,
		 "then: expected other-inside, idle, failover-chosen, reset or hang");
	fails_at("[fault l]\naction = net-lose-reply\nnodes = all\nthen = reset\n", 1,
		 "net-lose-reply needs target = client:N, nodes = LIST|all, of = acquire|release");
	fails_at("[fault l]\naction = net-cut\nnodes = all\nthen = hang\n", 1,
		 "then = reset|hang and of = acquire|release are for net-lose-reply");
	fails_at("[fault l]\naction = net-lose-reply\nof = later\n", 3, "of: expected acquire or release");
	fails_at("[fault k]\naction = node-kill\nnodes = 0\nthen = failover-chosen\n", 1,
		 "then = failover-chosen is for node-kill on topology = sentinel");
	fails_at("[run]\ntopology = sentinel\n[fault p]\naction = pause\ntarget = client:0\n"
		 "duration = 5\nthen = failover-chosen\n", 3,
		 "then = failover-chosen is for node-kill");
	fails_at("[chaos]\npause = 5\n", 2, "pause: expected MIN-MAX milliseconds");
	fails_at("[chaos]\nstorms = 3\n", 2, "unknown key 'storms' in [chaos]");
}

/* Times must be finite seconds within a day: inf, nan and 1e300 were cast to
 * int64 (undefined; the fault fired at once). Inconclusive is never expected. */
Test(scenario, non_finite_and_out_of_range_times_are_refused)
{
	fails_at("[fault k]\naction = kill\ntarget = holder\nat = inf\n", 4, "at: expected seconds");
	fails_at("[fault k]\naction = kill\ntarget = holder\nat = nan\n", 4, "at: expected seconds");
	fails_at("[fault k]\naction = kill\ntarget = holder\nat = 1e300\n", 4, "from 0 to 86400");
	fails_at("[fault k]\naction = kill\ntarget = holder\nat = -1\n", 4, "at: expected seconds");
	fails_at("[run]\nduration = inf\n", 2, "duration: expected seconds");
	fails_at("[chaos]\nfrom = nan\n", 2, "from: expected seconds");
	fails_at("[expect]\ntoken-lua = inconclusive\n", 2, "never what a scenario expects");
	cr_assert_eq(parse_text("[fault k]\naction = kill\ntarget = holder\nat = 0.25\n"), 0);
	cr_assert_float_eq(sc.faults[0].at_s, 0.25, 1e-12);
}

/* A fault after the run's end never fires, and a pause past it is cut
 * short: both are said, at the run. */
Test(scenario, faults_outside_the_run_are_warned_about)
{
	char dir[] = "/tmp/lbtest-scwarn-XXXXXX", ini[64], out[80];
	cr_assert_not_null(fx_mkdtemp(dir));
	snprintf(ini, sizeof(ini), "%s/late.ini", dir);
	FILE *f = fopen(ini, "w");
	fprintf(f, "[scenario]\nsummary = faults too late\n[run]\nclients = 2\nduration = 1\n"
		   "[fault late]\naction = kill\ntarget = holder\nat = 5\n"
		   "[fault long]\naction = pause\ntarget = client:1\nat = 0.5\nduration = 3000\n");
	fclose(f);
	snprintf(out, sizeof(out), "%s/r", dir);
	const char *args[] = { "run", "--scenario", ini, "--strategy", "token-lua", "--no-status",
			       "--no-report", "--out", out, NULL };
	cr_assert_eq(fx_lockbench(dir, args), 0);
	const char *o = fx_slurp(dir, "output");
	cr_assert(strstr(o, "[fault late] at 5 s lies after the run's end (1 s): it will not fire"), "%s", o);
	cr_assert(strstr(o, "[fault long] pauses 3 s from 0.5 s, past the run's end"), "%s", o);
}

/* Every pitfall page's "What each strategy shows" table says what its
 * scenario file expects, row for row: the page cannot drift from the
 * [expect] lines that make matrix --check measures. */
Test(scenario, pitfall_pages_show_the_expected_outcomes)
{
	char dir[PATH_MAX], page[PATH_MAX + 64], names[64][64], line[512];
	int n = lb_scenario_names(names, 64);

	cr_assert(lb_scenario_dir(dir, sizeof(dir) - 16));
	strcat(dir, "/../docs");
	for (int i = 0; i < n; i++) {
		cr_assert_eq(lb_scenario_load(names[i], &sc), 0);
		snprintf(page, sizeof(page), "%s/pitfalls/%s.md", dir, names[i]);
		FILE *f = fopen(page, "r");
		cr_assert_not_null(f, "missing %s", page);
		int rows = 0;
		while (fgets(line, sizeof(line), f)) {
			char name[64], cls[64];
			if (sscanf(line, "| [%63[^]]](../%*[^)]) | %63[^ |] |", name, cls) != 2)
				continue;
			int want = lb_scenario_expected(&sc, name);
			cr_assert_geq(want, 0, "%s lists %s, which %s does not expect anything of", page,
				      name, names[i]);
			if (!sc.probabilistic) /* chaos lists "at worst" the same way */
				cr_assert_str_eq(cls, lb_class_name((enum lb_class)want),
						 "%s says %s is %s; %s.ini expects %s", page, name, cls,
						 names[i], lb_class_name((enum lb_class)want));
			rows++;
		}
		fclose(f);
		cr_assert_eq(rows, sc.n_expect, "%s has %d rows for the %d [expect] lines of %s", page,
			     rows, sc.n_expect, names[i]);
	}
}

/* The choosing page's tables (docs/libraries/choosing.md) say, cell for
 * cell, what the scenario files expect: a class, "—" where there is no
 * [expect] line, and "hidden" exactly where the line requires busy answers
 * with no quorum up. The page answers "which lock" and cannot drift. */
static void choosing_row(const char *page, char *line, char (*names)[64], int n_names)
{
	char sc_name[64], *p;
	if (sscanf(line, "| [%63[^]]](../pitfalls/", sc_name) != 1 || !(p = strstr(line, ".md) |")))
		return;
	cr_assert_eq(lb_scenario_load(sc_name, &sc), 0, "%s: %s", page, sc_name);
	p += strlen(".md) |");
	for (int k = 0; k < n_names; k++) {
		char *end = strchr(p, '|');
		cr_assert_not_null(end, "%s: %s has fewer cells than names", page, sc_name);
		*end = '\0';
		while (*p == ' ')
			p++;
		int want = lb_scenario_expected(&sc, names[k]);
		if (!strncmp(p, "—", strlen("—")))
			cr_assert_lt(want, 0, "%s: %s x %s says —; the scenario expects %s", page,
				     sc_name, names[k], lb_class_name((enum lb_class)want));
		else {
			cr_assert_geq(want, 0, "%s: %s x %s says '%s'; the scenario expects nothing",
				      page, sc_name, names[k], p);
			size_t len = strlen(lb_class_name((enum lb_class)want));
			cr_assert(!strncmp(p, lb_class_name((enum lb_class)want), len) &&
				  (p[len] == ' ' || p[len] == '\0'), "%s: %s x %s says '%s'; the "
				  "scenario expects %s", page, sc_name, names[k], p,
				  lb_class_name((enum lb_class)want));
			char ini[1024], grep[1400];
			cr_assert(lb_scenario_dir(ini, sizeof(ini)));
			snprintf(grep, sizeof(grep), "grep -q '^%.63s = .*busy_while_down' '%.1024s/%.63s.ini'",
				 names[k], ini, sc_name);
			cr_assert_eq(system(grep) == 0, strstr(p, "hidden") != NULL, "%s: %s x %s: "
				     "'hidden' must mark exactly the cells whose line requires "
				     "busy_while_down", page, sc_name, names[k]);
		}
		p = end + 1;
	}
}

Test(scenario, the_choosing_page_shows_the_expected_outcomes)
{
	char dir[PATH_MAX], page[PATH_MAX + 64], line[2048], names[16][64];
	int n_names = 0, rows = 0;

	cr_assert(lb_scenario_dir(dir, sizeof(dir) - 40));
	snprintf(page, sizeof(page), "%s/../docs/libraries/choosing.md", dir);
	FILE *f = fopen(page, "r");
	cr_assert_not_null(f, "missing %s", page);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "| fault |", 9)) { /* a table's header: its strategies */
			n_names = 0;
			for (char *q = strchr(line + 9, '`'); q && n_names < 16; q = strchr(q + 1, '`')) {
				char *e = strchr(q + 1, '`');
				cr_assert_not_null(e);
				snprintf(names[n_names++], 64, "%.*s", (int)(e - q - 1), q + 1);
				q = e;
			}
			continue;
		}
		if (!strncmp(line, "| [", 3) && n_names > 0) {
			choosing_row(page, line, names, n_names);
			rows++;
		}
	}
	fclose(f);
	cr_assert_gt(rows, 20, "%s: %d rows of outcomes", page, rows);
}

/* The project's own docs and code cite public sources, never a path outside
 * the repository. */
Test(scenario, docs_cite_no_path_outside_the_repository)
{
	char cmd[PATH_MAX + 200], dir[PATH_MAX], out[1024] = "";
	cr_assert(lb_scenario_dir(dir, sizeof(dir)));
	snprintf(cmd, sizeof(cmd), "cd '%s/..' && grep -rlE '\\.\\./shared|LOCKS\\.md' README.md docs "
		 "harness strategies scenarios tests Makefile --exclude=test_scenario.c 2>/dev/null",
		 dir);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	pclose(p);
	cr_assert_eq(n, 0, "these cite a path outside the repository:\n%s", out);
}

/* `lessons` names the cells a lesson page shows: exact names (redlock is not
 * redlock@4.2.0), spanning lines, and never a cell the scenario leaves out. */
Test(scenario, lessons_name_the_cells_pages_show)
{
	cr_assert_eq(parse_text("[scenario]\nsummary = s\ndescription = d\nexcept = setnx\n"
				"lessons = redlock@4.2.0,\n  token-lua, setnx\n"), 0, "%s", sc.error);
	cr_assert_str_eq(sc.lessons, "redlock@4.2.0,token-lua,setnx");
	cr_assert(lb_scenario_is_lesson(&sc, "token-lua"));
	cr_assert(lb_scenario_is_lesson(&sc, "redlock@4.2.0"));
	cr_assert_not(lb_scenario_is_lesson(&sc, "redlock"), "a prefix matched");
	cr_assert_not(lb_scenario_is_lesson(&sc, "token"), "a prefix matched");
	cr_assert_not(lb_scenario_is_lesson(&sc, "setnx"), "a cell left out is a lesson");
	fails_at("[scenario]\nlessons = tokenlua\n", 2, "lessons: unknown strategy 'tokenlua'");
}

/* Every lesson cell of a shipped scenario has an expectation to check. */
Test(scenario, every_lesson_cell_has_an_expectation)
{
	char names[64][64];
	int n = lb_scenario_names(names, 64), lessons = 0;

	cr_assert_gt(n, 10);
	for (int i = 0; i < n; i++) {
		cr_assert_eq(lb_scenario_load(names[i], &sc), 0, "%s", names[i]);
		char buf[sizeof(sc.lessons)], *save = NULL;
		snprintf(buf, sizeof(buf), "%s", sc.lessons);
		for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save), lessons++) {
			cr_assert(lb_scenario_is_lesson(&sc, t), "%s: lesson %s does not apply", sc.name, t);
			cr_assert_geq(lb_scenario_expected(&sc, t), 0, "%s: lesson %s has no [expect] line",
				      sc.name, t);
		}
	}
	cr_assert_gt(lessons, 30, "only %d lesson cells found", lessons);
}

/* A summary as an expectation reads it: "column=value" pairs. */
static const char *pairs_value(const void *src, const char *column)
{
	static char v[64];
	size_t n = strlen(column);

	for (const char *const *p = src; *p; p++)
		if (!strncmp(*p, column, n) && (*p)[n] == '=') {
			snprintf(v, sizeof(v), "%s", *p + n + 1);
			return v;
		}
	return NULL;
}

/* An expectation may ask a figure besides the class (the cascade): met
 * only when both hold, and the reason says which did not. */
Test(scenario, an_expectation_can_ask_a_figure_at_least)
{
	char why[256], text[128];
	cr_assert_eq(parse_text("[scenario]\nsummary = s\ndescription = d\n[expect]\n"
				"set-nx-px = foreign-release, foreign-releases >= 10\ntoken-lua = overlap\n"),
		     0, "%s", sc.error);
	cr_assert_eq(lb_scenario_expected(&sc, "set-nx-px"), LB_CLASS_FOREIGN);
	lb_scenario_expect_text(&sc, "set-nx-px", text, sizeof(text));
	cr_assert_str_eq(text, "foreign-release, foreign-releases >= 10");
	static const char *const many[] = { "foreign_releases=31", "overlaps=60", NULL };
	static const char *const one[] = { "foreign_releases=1", "overlaps=28", NULL };
	static const char *const na[] = { "foreign_releases=n/a", "overlaps=28", NULL };
	struct lb_observed cascade = { LB_CLASS_FOREIGN, pairs_value, many };
	struct lb_observed once = { LB_CLASS_FOREIGN, pairs_value, one };
	struct lb_observed unmeasured = { LB_CLASS_FOREIGN, pairs_value, na };
	struct lb_observed other = { LB_CLASS_OVERLAP, pairs_value, one };
	cr_assert(lb_scenario_expect_met(&sc, "set-nx-px", &cascade, why, sizeof(why)), "%s", why);
	cr_assert_not(lb_scenario_expect_met(&sc, "set-nx-px", &once, why, sizeof(why)));
	cr_assert_str_eq(why, "foreign-release as expected, but not foreign-releases >= 10: 1 releases");
	cr_assert_not(lb_scenario_expect_met(&sc, "set-nx-px", &unmeasured, why, sizeof(why)),
		      "a figure not measured met an expectation");
	cr_assert_not(lb_scenario_expect_met(&sc, "set-nx-px", &other, why, sizeof(why)));
	cr_assert_str_eq(why, "expected foreign-release, observed overlap");
	cr_assert(lb_scenario_expect_met(&sc, "token-lua", &other, why, sizeof(why)));
	cr_assert(lb_scenario_expect_met(&sc, "fenced", &other, why, sizeof(why)), "no expectation");
	fails_at("[expect]\nset-nx-px = foreign-release, foreign >= 3\n", 2,
		 "foreign is not a figure of summary.csv (it may mean: foreign_releases");
	fails_at("[expect]\nset-nx-px = foreign-release, overlaps >> 3\n", 2,
		 "after the class, expected FIGURE OP N");
	fails_at("[expect]\nset-nx-px = foreign-release, strategy == 3\n", 2,
		 "strategy is a column of summary.csv that holds text, not a number");
}

/* [expect] threshold = FIGURE OP N: of every strategy, with the rest of the
 * section; a bad one is named by its line. */
Test(scenario, thresholds_are_part_of_the_expect_section)
{
	char why[256];
	cr_assert_eq(parse_text("[scenario]\nsummary = s\ndescription = d\n[expect]\n"
				"token-lua = safe\nthreshold = acquire_p99_ms < 50\n"
				"threshold = lost-updates == 0\n"), 0, "%s", sc.error);
	cr_assert_eq(sc.n_thresholds, 2);
	cr_assert_str_eq(sc.thresholds[0].column, "acquire_p99_us");
	static const char *const fast[] = { "acquire_p99_us=12000", "lost_updates=0", NULL };
	static const char *const slow[] = { "acquire_p99_us=51000", "lost_updates=0", NULL };
	static const char *const none[] = { "acquire_p99_us=n/a", "lost_updates=0", NULL };
	struct lb_observed ok = { LB_CLASS_SAFE, pairs_value, fast };
	struct lb_observed late = { LB_CLASS_SAFE, pairs_value, slow };
	struct lb_observed unmeasured = { LB_CLASS_SAFE, pairs_value, none };
	cr_assert(lb_scenario_expect_met(&sc, "token-lua", &ok, why, sizeof(why)), "%s", why);
	cr_assert(lb_scenario_expect_met(&sc, "fenced", &ok, why, sizeof(why)), "%s", why);
	cr_assert_not(lb_scenario_expect_met(&sc, "fenced", &late, why, sizeof(why)));
	cr_assert_str_eq(why, "threshold not held: acquire_p99_ms < 50: 51 ms");
	cr_assert_not(lb_scenario_expect_met(&sc, "token-lua", &unmeasured, why, sizeof(why)));
	cr_assert_eq(parse_text("[scenario]\nsummary = s\ndescription = d\n[expect]\n"
				"threshold = overlaps == 0\n  acquire_p99_ms < 5\n"), 0, "%s", sc.error);
	cr_assert_eq(sc.n_thresholds, 2, "a threshold on an indented line is one more");
	fails_at("[expect]\nthreshold = p99 < 5\n", 2, "p99 is not a figure of summary.csv");
	fails_at("[expect]\nthreshold = overlaps == 0\nthreshold = p99 < 5\n", 3,
		 "p99 is not a figure of summary.csv");
	fails_at("[expect]\nthreshold = acquire_p99_ms < fast\n", 2, "expected a number");
	/* a number as it is written: hex and a '+' are typos here as everywhere */
	fails_at("[expect]\nthreshold = acquire_p99_ms < 0x10\n", 2, "expected a number, got '0x10'");
	fails_at("[expect]\nthreshold = acquire_p99_ms < +5\n", 2, "expected a number, got '+5'");
	cr_assert_eq(parse_text("[expect]\nthreshold = acquire_p99_ms <= 1e3\n  lost_updates == 0\n"),
		     0, "%s", sc.error);
}

/* The cell of @scenario x @strategy in docs/reference-matrix.md, "<br>" as
 * ": " (how harness/refdocs.sh quotes it), or NULL. The page may hold
 * several tables (the consensus locks' run below the Redis locks'): the
 * cell is in the first whose header names @strategy, in its rows. */
static bool reference_cell(const char *md, const char *scenario, const char *strategy, char *out,
			   size_t len)
{
	const char *hdr = strstr(md, "\n| scenario |");
	char want[96];
	int col = -1, k = 0;

	for (; hdr && col < 0; hdr = col < 0 ? strstr(hdr + 1, "\n| scenario |") : hdr) {
		k = 0;
		for (const char *p = hdr + 2; *p && *p != '\n'; p++)
			if (*p == '|') {
				char name[64];
				if (sscanf(p + 1, " %63[^ |]", name) == 1 && !strcmp(name, strategy))
					col = k;
				k++;
			}
	}
	if (col < 0)
		return false;
	snprintf(want, sizeof(want), "\n| %.64s |", scenario);
	const char *next = strstr(hdr + 1, "\n| scenario |");
	const char *row = strstr(hdr, want);
	if (!row || (next && row > next))
		return false;
	const char *p = row + 1;
	for (int i = 0; i <= col; i++)
		p = strchr(p + 1, '|');
	const char *end = strchr(p + 1, '|');
	if (!p || !end)
		return false;
	size_t o = 0;
	for (const char *s = p + 2; s < end - 1 && o + 3 < len; s++) {
		if (!strncmp(s, "<br>", 4)) {
			out[o++] = ':';
			out[o++] = ' ';
			s += 3;
		} else {
			out[o++] = *s;
		}
	}
	out[o] = '\0';
	return true;
}

/* A figure of a reference cell ("64 overlaps · 18 lost updates · 36 foreign"). */
static long long cell_figure(const char *cell, const char *what)
{
	char pat[40];
	snprintf(pat, sizeof(pat), " %s", what);
	const char *p = strstr(cell, pat);
	while (p && !(p > cell && p[-1] >= '0' && p[-1] <= '9')) /* a number before it */
		p = strstr(p + 1, pat);
	while (p && p > cell && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return p ? atoll(p) : 0;
}

/* Every lesson page quotes its reference run: for each cell it shows, the
 * figures are those of docs/reference-matrix.md (the same run), the class is
 * the expected one (✔), the figure an expectation asks for is reached (the
 * cascade), the chart is there, and a page of a Redlock scenario names its
 * nodes as the charts do, 0 to N-1. */
Test(scenario, lesson_pages_quote_their_reference_run)
{
	char dir[PATH_MAX], rel[PATH_MAX + 64], names[64][64], cell[1024], line[4400];
	int n = lb_scenario_names(names, 64), checked = 0;

	cr_assert(lb_scenario_dir(dir, sizeof(dir) - 16));
	strcat(dir, "/../docs");
	char *md = fx_slurp(dir, "reference-matrix.md");
	md = strdup(md);
	for (int i = 0; i < n; i++) {
		cr_assert_eq(lb_scenario_load(names[i], &sc), 0);
		snprintf(rel, sizeof(rel), "pitfalls/%s.md", names[i]);
		char *page = strdup(fx_slurp(dir, rel));
		char buf[sizeof(sc.lessons)], *save = NULL;
		snprintf(buf, sizeof(buf), "%s", sc.lessons);
		for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			cr_assert(reference_cell(md, names[i], t, cell, sizeof(cell)),
				  "reference-matrix.md has no cell %s x %s (run make reference and "
				  "make reference-docs)", names[i], t);
			snprintf(line, sizeof(line), "\n**%s**: %s\n", t, cell);
			cr_assert(strstr(page, line), "%s does not quote the reference run of %s: "
				  "expected the line%s(make reference-docs writes it)", rel, t, line);
			cr_assert(!strncmp(cell, "✔ ", strlen("✔ ")),
				  "%s x %s: the reference run did not show the expected class: %s",
				  names[i], t, cell);
			char fig[3][48];
			snprintf(fig[0], sizeof(fig[0]), "foreign_releases=%lld", cell_figure(cell, "foreign"));
			snprintf(fig[1], sizeof(fig[1]), "overlaps=%lld", cell_figure(cell, "overlaps"));
			snprintf(fig[2], sizeof(fig[2]), "lost_updates=%lld",
				 cell_figure(cell, "lost updates"));
			const char *pairs[] = { fig[0], fig[1], fig[2], NULL };
			struct lb_observed ob = { (enum lb_class)lb_scenario_expected(&sc, t), pairs_value,
						  pairs };
			char why[256];
			cr_assert(lb_scenario_expect_met(&sc, t, &ob, why, sizeof(why)),
				  "%s x %s: the reference run's figures miss the expectation: %s",
				  names[i], t, why);
			snprintf(line, sizeof(line), "](../img/%s--%s.png)", names[i], t);
			cr_assert(strstr(page, line), "%s does not show %s", rel, line + 2);
			snprintf(rel, sizeof(rel), "%s/img/%s--%s.png", dir, names[i], t);
			cr_assert_eq(access(rel, R_OK), 0, "missing %s", rel);
			snprintf(rel, sizeof(rel), "pitfalls/%s.md", names[i]);
			checked++;
		}
		for (int k = lb_scenario_gives(&sc, LB_P_NODES) ? sc.run.nodes : 99; k < 10; k++) {
			char node[24];
			snprintf(node, sizeof(node), "node %d", k);
			cr_assert_null(strstr(page, node), "%s says \"%s\", but %s has nodes 0 to %d",
				       rel, node, names[i], sc.run.nodes - 1);
		}
		free(page);
	}
	free(md);
	cr_assert_gt(checked, 30);
}

/* The figures of @column over the runs of docs/measured/@scenario.csv whose
 * strategy is in the comma list @strategies: their smallest and largest, and
 * the fewest runs of any one strategy. */
struct measured {
	double lo, hi;
	int fewest;
};

static struct measured measured_range(const char *docs, const char *scenario, const char *column,
				      const char *strategies)
{
	char rel[160], *save = NULL, want[512];
	struct measured m = { 0, 0, 1 << 30 };
	bool any = false;

	snprintf(rel, sizeof(rel), "measured/%.100s.csv", scenario);
	char *csv = strdup(fx_slurp(docs, rel));
	int col = -1, k = 0;
	char *line = strtok_r(csv, "\n", &save);
	cr_assert_not_null(line, "docs/%s is empty", rel);
	for (char *c = line, *e; c; c = e ? e + 1 : NULL, k++) {
		e = strchr(c, ',');
		if (!strncmp(c, column, strlen(column)) && (c[strlen(column)] == ',' || !c[strlen(column)]))
			col = k;
	}
	cr_assert_geq(col, 0, "docs/%s has no column %s", rel, column);
	snprintf(want, sizeof(want), ",%s,", strategies);
	int runs[32] = { 0 };
	while ((line = strtok_r(NULL, "\n", &save))) {
		char name[72], key[80];
		if (sscanf(line, "%63[^,]", name) != 1)
			continue;
		snprintf(key, sizeof(key), ",%s,", name);
		char *at = strstr(want, key);
		if (!at)
			continue;
		int which = 0; /* the strategy's place in the list: its run count */
		for (const char *q = want + 1; q <= at; q++)
			which += *q == ',';
		cr_assert_lt(which, 32);
		runs[which]++;
		const char *v = line;
		for (int i = 0; i < col && v; i++)
			v = strchr(v, ',') ? strchr(v, ',') + 1 : NULL;
		cr_assert_not_null(v, "docs/%s: a row of %s has no %s", rel, name, column);
		double x = atof(v);
		m.lo = any && m.lo < x ? m.lo : x;
		m.hi = any && m.hi > x ? m.hi : x;
		any = true;
	}
	int n_strategies = 0;
	for (const char *q = want + 1; *q; q++)
		n_strategies += *q == ',';
	for (int i = 0; i < n_strategies && i < 32; i++)
		m.fewest = runs[i] < m.fewest ? runs[i] : m.fewest;
	cr_assert(any, "docs/%s has no run of %s", rel, strategies);
	free(csv);
	return m;
}

/* A figure as the page writes it, rounded to its decimals, equals @x so rounded. */
static bool same_figure(double written, int decimals, double x)
{
	double scale = 1;
	for (int i = 0; i < decimals; i++)
		scale *= 10;
	return llround(written * scale) == llround(x * scale);
}

/* The number at @p ("1360", "2.5"): its value, its decimals, and where it ends. */
static const char *page_number(const char *p, double *x, int *decimals)
{
	char *end;
	*x = strtod(p, &end);
	if (end == p)
		return NULL;
	const char *dot = memchr(p, '.', (size_t)(end - p));
	*decimals = dot ? (int)(end - dot - 1) : 0;
	return end;
}

/* One marked figure of a page: <!-- measured: SCENARIO COLUMN STRATEGIES -->
 * then "LO to HI", "LO-HI" or "N" (bold or not), checked against the runs in
 * @docs/measured/SCENARIO.csv and the reference run the page @md shows.
 * NULL when it holds, else why not (in @why); *@end: where the figure ends. */
static const char *marked_range_verdict(const char *docs, const char *mark, const char *md,
					 const char **end, char *why, size_t len)
{
	char scenario[64], column[64], strategies[200];
	int used = 0;
	if (sscanf(mark, "<!-- measured: %63s %63s %199s -->%n", scenario, column, strategies,
		   &used) != 3 || used == 0)
		return snprintf(why, len, "a malformed mark: %.60s", mark), why;
	const char *p = mark + used;
	while (*p == '*')
		p++;
	double lo, hi;
	int dlo, dhi;
	const char *e = page_number(p, &lo, &dlo);
	if (!e)
		return snprintf(why, len, "no figure after %.60s", mark), why;
	hi = lo;
	dhi = dlo;
	if (!strncmp(e, " to ", 4) || *e == '-')
		e = page_number(e + (*e == '-' ? 1 : 4), &hi, &dhi);
	if (!e)
		return snprintf(why, len, "a range without its end after %.60s", mark), why;
	*end = e;
	struct measured m = measured_range(docs, scenario, column, strategies);
	if (m.fewest < 10)
		return snprintf(why, len, "%s of %s over %d runs: a lesson's range needs 10", column,
				strategies, m.fewest), why;
	if (!same_figure(lo, dlo, m.lo) || !same_figure(hi, dhi, m.hi))
		return snprintf(why, len, "%.60s of %.200s under %.60s is %g to %g on the page; the runs "
				"(docs/measured/%.60s.csv) show %g to %g", column, strategies, scenario,
				lo, hi, scenario, m.lo, m.hi), why;
	/* the reference run the page shows is a run too: it lies within the range */
	static const char *const shown[][2] = { { "overlaps", "overlaps" },
		{ "lost_updates", "lost updates" }, { "foreign_releases", "foreign" } };
	char buf[200], *save = NULL, cell[1024];
	snprintf(buf, sizeof(buf), "%s", strategies);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
			char quoted[200];
			snprintf(quoted, sizeof(quoted), "\n**%s**: ", t);
			if (strcmp(column, shown[i][0]) || !strstr(md, quoted) ||
			    !reference_cell(fx_slurp(docs, "reference-matrix.md"), scenario, t, cell,
					    sizeof(cell)))
				continue;
			long long x = cell_figure(cell, shown[i][1]);
			if (x < lo || x > hi)
				return snprintf(why, len, "the reference run of %s shows %lld %s, outside "
						"the range %g to %g", t, x, shown[i][1], lo, hi), why;
		}
	return NULL;
}

/* Every range a lesson page marks as measured (<!-- measured: SCENARIO COLUMN
 * STRATEGIES --> before the figure) is exactly what the runs kept in
 * docs/measured/SCENARIO.csv show: its low end the smallest figure of any run,
 * its high end the largest, over at least 10 runs of each strategy, and the
 * reference run the page shows lies inside. A range narrower than the runs,
 * wider than them, or citing a figure no run produced fails. */
Test(scenario, lesson_pages_quote_ranges_from_every_run)
{
	char dir[PATH_MAX], names[64][64], rel[128], why[600];
	int n = lb_scenario_names(names, 64), marks = 0;

	cr_assert(lb_scenario_dir(dir, sizeof(dir) - 16));
	strcat(dir, "/../docs");
	for (int i = -1; i < n; i++) {
		if (i < 0)
			snprintf(rel, sizeof(rel), "../README.md");
		else
			snprintf(rel, sizeof(rel), "pitfalls/%.63s.md", names[i]);
		char *md = strdup(fx_slurp(dir, rel));
		for (const char *p = strstr(md, "<!-- measured:"); p; p = strstr(p, "<!-- measured:")) {
			const char *bad = marked_range_verdict(dir, p, md, &p, why, sizeof(why));
			cr_assert_null(bad, "%s: %s", rel, bad);
			marks++;
		}
		free(md);
	}
	cr_assert_geq(marks, 10, "only %d measured ranges on the lesson pages", marks);
}

/* The same check on a page and runs written here: the runs' range passes; a
 * range narrower than the runs, one wider (an end no run produced), fewer than
 * 10 runs, and a range that leaves out the reference run the page shows fail. */
Test(scenario, a_measured_range_must_be_exactly_the_runs)
{
	char docs[] = "/tmp/lb-measured-XXXXXX", file[PATH_MAX], why[600];
	const char *end;

	cr_assert_not_null(mkdtemp(docs));
	snprintf(file, sizeof(file), "%s/measured", docs);
	cr_assert_eq(mkdir(file, 0700), 0);
	snprintf(file, sizeof(file), "%s/measured/s.csv", docs);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fprintf(f, "strategy,scenario,seed,foreign_releases,overlap_ms\n");
	for (int i = 0; i < 10; i++) /* a: 18 or 36, b: 12 (only 9 runs) */
		fprintf(f, "a,s,%d,%d,%.3f\n", i, i % 3 ? 36 : 18, 1360.4 + i * 11.7);
	for (int i = 0; i < 9; i++)
		fprintf(f, "b,s,%d,12,1.000\n", i);
	fclose(f);
	snprintf(file, sizeof(file), "%s/reference-matrix.md", docs);
	f = fopen(file, "w");
	cr_assert_not_null(f);
	fprintf(f, "x\n| scenario | a |\n|---|---|\n| s | ✔ foreign-release<br>9 overlaps · 37 foreign |\n");
	fclose(f);
	static const char *const good[] = {
		"<!-- measured: s foreign_releases a -->**18 to 36 foreign releases**",
		"<!-- measured: s overlap_ms a -->1360-1466 ms",
		"<!-- measured: s overlap_ms a -->1360.4 to 1465.7 ms",
	};
	static const char *const bad[][2] = {
		{ "<!-- measured: s foreign_releases a -->20 to 36", "show 18 to 36" },
		{ "<!-- measured: s foreign_releases a -->18 to 37", "show 18 to 36" },
		{ "<!-- measured: s foreign_releases a -->36", "show 18 to 36" },
		{ "<!-- measured: s overlap_ms a -->1360-1400 ms", "show 1360.4 to 1465.7" },
		{ "<!-- measured: s foreign_releases b -->12", "over 9 runs" },
		{ "<!-- measured: s foreign_releases a b -->12", "malformed" },
		{ "<!-- measured: s foreign_releases a -->many", "no figure" },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_assert_null(marked_range_verdict(docs, good[i], good[i], &end, why, sizeof(why)),
			       "%s: %s", good[i], why);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *v = marked_range_verdict(docs, bad[i][0], bad[i][0], &end, why, sizeof(why));
		cr_assert_not_null(v, "%s passed", bad[i][0]);
		cr_assert(strstr(v, bad[i][1]), "%s: %s", bad[i][0], v);
	}
	/* a page that shows the reference run (37 foreign) cannot say 18 to 36 */
	const char *shows = "<!-- measured: s foreign_releases a -->18 to 36\n**a**: ✔ foreign-release\n";
	const char *v = marked_range_verdict(docs, shows, shows, &end, why, sizeof(why));
	cr_assert(v && strstr(v, "the reference run of a shows 37 foreign"), "%s", v ? v : "passed");
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", docs);
	cr_assert_eq(system(cmd), 0);
}

/* topology = sentinel: its own replicas, network faults as net-partition
 * across its links; only one-node C strategies apply. */
Test(scenario, a_sentinel_topology_says_what_it_cannot_do)
{
	fails_at("[run]\ntopology = ring\n", 2, "topology: expected single, sentinel, cluster, etcd or zookeeper");
	fails_at("[run]\ntopology = sentinel\nreplica = yes\n", 3, "has its own replicas");
	fails_at("[run]\ntopology = sentinel\n[fault f]\naction = partition\ntarget = client:0\n"
		 "nodes = 0\nat = 1\n", 3, "action = net-partition with sides");
	char why[400];
	cr_assert_eq(lb_scenario_load("sentinel-failover", &sc), 0);
	cr_assert(sc.run.sentinel);
	cr_assert(lb_scenario_applies(&sc, "token-lua"));
	cr_assert(lb_scenario_why_not(&sc, "redlock", why, sizeof(why)));
	cr_assert(strstr(why, "needs 5 independent lock nodes"), "%s", why);
	cr_assert_not(lb_scenario_why_not(&sc, "redis-py@4.3.4", why, sizeof(why)),
		      "a library runs on the topology through its own Sentinel support");
	cr_assert_eq(lb_scenario_load("sentinel-split-brain", &sc), 0);
	cr_assert_not(lb_scenario_why_not(&sc, "redis-py@4.3.4", why, sizeof(why)),
		      "a partition with clients on its sides tells a library's connections "
		      "apart by its client's address (the shim): %s", why);
}

/* topology = cluster: its own replicas, a partition named by the cluster's
 * parts, only one-node C strategies. */
Test(scenario, a_cluster_topology_says_what_it_cannot_do)
{
	fails_at("[run]\ntopology = cluster\nreplica = yes\n", 3, "has its own replicas");
	fails_at("[run]\ntopology = cluster\n[fault f]\naction = partition\ntarget = client:0\n"
		 "nodes = 0\nat = 1\n", 3, "on a Cluster topology");
	fails_at("[run]\ntopology = cluster\n[fault f]\naction = net-delay\ntarget = client:0\n"
		 "nodes = 0\nat = 1\n", 3, "on a Cluster topology");
	fails_at("[run]\ntopology = cluster\nmin_replicas = 1\n", 3, "topology = sentinel");
	fails_at("[run]\ntopology = cluster\n[fault s]\naction = net-partition\n"
		 "sides = sentinel:0 | rest\nat = 1\n", 5, "sides: expected two lists");
	fails_at("[run]\ntopology = cluster\n[fault s]\naction = net-partition\n"
		 "sides = primary:3 | rest\nat = 1\n", 5, "sides: expected two lists");
	fails_at("[run]\ntopology = sentinel\n[fault s]\naction = net-partition\n"
		 "sides = primary:1 | rest\nat = 1\n", 5, "sides: expected two lists");
	/* the cluster's names, whichever order [run] and the fault come in */
	cr_assert_eq(parse_text("[run]\ntopology = cluster\nclients = 2\n[fault s]\n"
				"action = net-partition\nsides = primary:1, replica:0, client:1 | rest\n"
				"at = 1\n"), 0, "%s", sc.error);
	const struct lb_fault *f = &sc.faults[0];
	cr_assert_eq(lb_fault_side(f, 1), 0, "primary 1");
	cr_assert_eq(lb_fault_side(f, LB_CLUSTER_SHARDS + 0), 0, "replica 0");
	cr_assert_eq(lb_fault_side(f, LB_TOPO_PARTS + 1), 0, "client 1");
	cr_assert_eq(lb_fault_side(f, 0), 1, "primary 0 is in the rest");
	cr_assert_eq(lb_fault_side(f, LB_CLUSTER_SHARDS + 2), 1, "replica 2 is in the rest");
	cr_assert_eq(parse_text("[fault s]\naction = net-partition\nsides = primaries | replicas\n"
				"at = 1\n[run]\ntopology = cluster\n"), 0, "%s", sc.error);
	f = &sc.faults[0];
	for (int i = 0; i < LB_CLUSTER_SHARDS; i++) {
		cr_assert_eq(lb_fault_side(f, i), 0);
		cr_assert_eq(lb_fault_side(f, LB_CLUSTER_SHARDS + i), 1);
	}
	char why[400];
	cr_assert_eq(lb_scenario_load("cluster-lagging-replica", &sc), 0);
	cr_assert(sc.run.cluster);
	cr_assert(lb_scenario_applies(&sc, "token-lua"));
	cr_assert(lb_scenario_why_not(&sc, "redlock", why, sizeof(why)));
	cr_assert(strstr(why, "needs 5 independent lock nodes"), "%s", why);
	cr_assert(lb_scenario_why_not(&sc, "redis-py@4.3.4", why, sizeof(why)));
	cr_assert(strstr(why, "cluster clients"), "%s", why);
}

/* net-partition: two sides of parts and clients, `rest` for everyone else;
 * a party named on neither side reaches both. */
Test(scenario, net_partition_sides)
{
	cr_assert_eq(parse_text("[run]\ntopology = sentinel\nclients = 3\n[fault split]\n"
				"action = net-partition\nsides = primary, client:0 | rest\nat = 1\n"
				"duration = 500\n"), 0, "%s", sc.error);
	const struct lb_fault *f = &sc.faults[0];
	cr_assert_eq(f->action, LB_ACT_NET_PARTITION);
	cr_assert_eq(lb_fault_side(f, LB_PART_PRIMARY), 0);
	cr_assert_eq(lb_fault_side(f, LB_TOPO_PARTS + 0), 0, "client 0 is with the primary");
	cr_assert_eq(lb_fault_side(f, LB_PART_REPLICA0), 1);
	cr_assert_eq(lb_fault_side(f, LB_PART_SENTINEL0 + 2), 1);
	cr_assert_eq(lb_fault_side(f, LB_TOPO_PARTS + 2), 1, "client 2 is in the rest");
	cr_assert_eq(parse_text("[run]\ntopology = sentinel\n[fault s]\naction = net-partition\n"
				"sides = replica:1 | sentinels\nat = 1\n"), 0, "%s", sc.error);
	f = &sc.faults[0];
	cr_assert_eq(lb_fault_side(f, LB_PART_REPLICA0 + 1), 0);
	cr_assert_eq(lb_fault_side(f, LB_PART_SENTINEL0 + 1), 1);
	cr_assert_eq(lb_fault_side(f, LB_PART_PRIMARY), -1, "named on neither side");
	cr_assert_eq(lb_fault_side(f, LB_TOPO_PARTS + 5), -1);
	const char *bad[] = { "primary", "primary | primary", "rest | rest", "primary, rest | clients",
			      "client:0 | clients", "replica:2 | rest", "primary | nobody",
			      "primary | client:64", "a | b | c" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[300];
		snprintf(text, sizeof(text), "[run]\ntopology = sentinel\n[fault s]\n"
			 "action = net-partition\nsides = %s\nat = 1\n", bad[i]);
		fails_at(text, 5, "sides: expected two lists separated by |");
	}
	fails_at("[run]\nclients = 2\n[fault s]\naction = net-partition\nsides = primary | rest\n"
		 "at = 1\n", 3, "set it in [run]");
	fails_at("[run]\ntopology = sentinel\nclients = 2\n[fault s]\naction = net-partition\n"
		 "sides = primary, client:2 | rest\nat = 1\n", 4, "names client:2 but [run] has 2");
	fails_at("[run]\ntopology = sentinel\n[fault s]\naction = net-partition\n"
		 "sides = clients | rest\nat = 1\n", 3, "servers or Sentinels on one side");
}

/* min-replicas and down_after configure the Sentinel topology, nothing else. */
Test(scenario, min_replicas_keys_need_the_sentinel_topology)
{
	cr_assert_eq(parse_text("[run]\ntopology = sentinel\nmin_replicas = 1\n"
				"min_replicas_max_lag = 3\ndown_after = 700\n"), 0, "%s", sc.error);
	cr_assert_eq(sc.min_replicas, 1);
	cr_assert_eq(sc.run.min_replicas_max_lag, 3);
	cr_assert_eq(sc.run.down_after_ms, 700);
	fails_at("[run]\nclients = 2\nmin_replicas = 1\n", 3, "set up topology = sentinel");
	fails_at("[run]\ntopology = sentinel\nmin_replicas = 3\n", 3, "1 to 2");
	fails_at("[run]\ntopology = sentinel\nmin_replicas_max_lag = 0\n", 3, "1 to 3600");
	fails_at("[run]\ntopology = sentinel\ndown_after = 5\n", 3, "100 to 60000");
}

/* What the INI reader would take silently is refused at its line: a section
 * twice (two [fault a] merged, the first never firing), a fault without a
 * name, an empty file, and a NUL byte (C text ends there: the rest unread). */
Test(scenario, sections_twice_nameless_faults_empty_files_and_nul_bytes_are_refused)
{
	fails_at("[fault a]\naction = pause\nat = 0.2\nduration = 100\n[fault a]\naction = kill\n", 5,
		 "section [fault a] again (first at line 1)");
	fails_at("[run]\nclients = 2\n[fault b]\naction = kill\nat = 1\n[run]\nclients = 3\n", 6,
		 "section [run] again");
	fails_at("[fault ]\naction = kill\nat = 1\n", 1, "a fault needs a name");
	fails_at("", 1, "empty");
	fails_at("; only a comment\n", 1, "empty");
	static const char nul[] = "[run]\nclients = 2\n\0[fault x]\naction = kill\n";
	strcpy(path, "/tmp/lbtest-scenario-XXXXXX.ini");
	int fd = mkstemps(path, 4);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, nul, sizeof(nul) - 1), (ssize_t)sizeof(nul) - 1);
	close(fd);
	int rc = lb_scenario_parse_file(path, &sc);
	unlink(path);
	cr_assert_eq(rc, LB_EINVAL, "a NUL byte was accepted");
	cr_assert(strstr(sc.error, ":3: a NUL byte (byte 19)"), "%s", sc.error);
}

/* A probabilistic scenario's [expect] lines are "at worst" wherever they are
 * judged (run, matrix, chaos): a run that did better meets them, one that did
 * worse does not. A scenario that is not probabilistic wants its class exactly. */
Test(scenario, a_probabilistic_scenario_expects_at_worst)
{
	const char *none[] = { NULL };
	struct lb_observed safe = { LB_CLASS_SAFE, pairs_value, none };
	struct lb_observed overlap = { LB_CLASS_OVERLAP, pairs_value, none };
	char why[200];

	cr_assert_eq(parse_text("[scenario]\nsummary = s\ndescription = d\nprobabilistic = yes\n"
				"[expect]\ntoken-lua = contained\n"), 0, "%s", sc.error);
	cr_assert(lb_scenario_expect_met(&sc, "token-lua", &safe, why, sizeof(why)), "%s", why);
	cr_assert_not(lb_scenario_expect_met(&sc, "token-lua", &overlap, why, sizeof(why)));
	cr_assert(strstr(why, "expected at worst contained, observed overlap"), "%s", why);
	cr_assert_eq(parse_text("[scenario]\nsummary = s\ndescription = d\n"
				"[expect]\ntoken-lua = contained\n"), 0, "%s", sc.error);
	cr_assert_not(lb_scenario_expect_met(&sc, "token-lua", &safe, why, sizeof(why)),
		      "a scenario that is not probabilistic took a better class for its own");
}

/* Issue 51 item 5: what is not a regular file is refused at once, with what
 * it is: a FIFO never blocks the reader (no writer ever comes here), a
 * directory is no "File too large", /dev/zero no "empty" scenario. */
Test(scenario, what_is_not_a_regular_file_is_named_never_read)
{
	char dir[] = "/tmp/lbtest-scenario-XXXXXX", fifo[64];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo.ini", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	static const char *const want[] = { "is a FIFO (a named pipe), not a regular file",
					    "is a directory, not a regular file",
					    "is a character device, not a regular file" };
	const char *paths[] = { fifo, dir, "/dev/zero" };
	FILE *devnull = freopen("/dev/null", "w", stderr);
	(void)devnull;
	for (int i = 0; i < 3; i++) {
		cr_assert_lt(lb_scenario_parse_file(paths[i], &sc), 0, "%s read", paths[i]);
		cr_assert(strstr(sc.error, want[i]), "%s: '%s'", paths[i], sc.error);
	}
	unlink(fifo);
	rmdir(dir);
}

/* Issue 51 item 5: inih ends a key at its first ':', so `exec:/x = safe` was
 * read as the key exec: an exec: lock could have no expectation. A key in
 * double quotes is whole (docs/scenarios.md); the bare form says so. */
Test(scenario, an_exec_program_has_an_expectation_in_quotes)
{
	cr_assert_eq(parse_text("[expect]\n\"exec:/opt/my lock/a=b;c.sh\" = overlap\n"
				"\"exec:./mine.sh\" = safe, overlaps <= 0\n"
				"\"token-lua\" = safe\nsetnx = overlap\n"), 0, "%s", sc.error);
	cr_assert_eq(sc.n_expect, 4);
	cr_assert_eq(lb_scenario_expected(&sc, "exec:/opt/my lock/a=b;c.sh"), LB_CLASS_OVERLAP);
	cr_assert_eq(lb_scenario_expected(&sc, "exec:./mine.sh"), LB_CLASS_SAFE);
	cr_assert(sc.expect[1].has_figure);
	cr_assert_eq(sc.expect[1].line, 3);
	cr_assert_eq(lb_scenario_expected(&sc, "token-lua"), LB_CLASS_SAFE);
	cr_assert_eq(lb_scenario_expected(&sc, "setnx"), LB_CLASS_OVERLAP);
	fails_at("[expect]\nexec:/x = safe\n", 2, "write it in double quotes, \"exec:PATH\" = CLASS");
	fails_at("[expect]\n\"exec:/x = safe\n", 2, "needs its closing \"");
	fails_at("[expect]\n\"exec:/x\" safe\n", 2, "expected = and the value");
	fails_at("[expect]\n\"exec:/x\" = safe\n\"exec:/x\" = overlap\n", 3, "given twice");
	fails_at("[expect]\n\"\" = safe\n", 2, "an empty key in quotes");
}

/* strobe = MS (issue 54): for clock and node-clock only, and with an offset
 * to flip; parsed into the fault. */
Test(scenario, strobe_is_for_a_clock_with_an_offset)
{
	const char *head = "[scenario]\nsummary = s\ndescription = d\n[run]\nclients = 2\n";
	char text[512];

	snprintf(text, sizeof(text), "%s[fault f]\naction = node-clock\nnodes = 0\noffset = 10000\n"
		 "strobe = 100\nduration = 2000\n", head);
	cr_assert_eq(parse_text(text), 0, "%s", sc.error);
	cr_assert_eq(sc.faults[0].strobe_ms, 100);
	cr_assert_eq(sc.faults[0].duration_ms, 2000);
	snprintf(text, sizeof(text), "%s[fault f]\naction = clock\ntarget = client:0\noffset = 5000\n"
		 "strobe = 50\n", head);
	cr_assert_eq(parse_text(text), 0, "%s", sc.error);
	cr_assert_eq(sc.faults[0].strobe_ms, 50);
	snprintf(text, sizeof(text), "%s[fault f]\naction = pause\ntarget = holder\nduration = 10\n"
		 "strobe = 50\n", head);
	fails_at(text, 6, "strobe = MS is for clock and node-clock");
	snprintf(text, sizeof(text), "%s[fault f]\naction = node-clock\nnodes = 0\nstrobe = 50\n", head);
	fails_at(text, 6, "it needs offset = MS");
	snprintf(text, sizeof(text), "%s[fault f]\naction = node-clock\nnodes = 0\noffset = 1\n"
		 "strobe = 0\n", head);
	fails_at(text, 10, "strobe: expected milliseconds from 1 to 86400000, got '0'");
}
