/*
 * test_attempts.c - every acquire attempt and its answer (attempts.h): the
 * busy answers given while no quorum of the lock's nodes was up, a failure a
 * library reports as "busy" and a class table would call safe. Pure cases on
 * made-up histories, then real libraries on real servers, re-checked by
 * `lockbench check`, and a hostile attempts.csv.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attempts.h"
#include "fixture.h"
#include "readers.h"
#include "results.h"

#define MS 1000000LL

FX_SUITE(attempts, 120);

static const struct lb_event kill3[] = {
	{ 100 * MS, LB_EV_NODE_KILL, -1, 2, 0 }, { 101 * MS, LB_EV_NODE_KILL, -1, 3, 0 },
	{ 102 * MS, LB_EV_NODE_KILL, -1, 4, 0 }, { 200 * MS, LB_EV_NODE_START, -1, 4, 0 },
	{ 201 * MS, LB_EV_NODE_START, -1, 3, 0 }, { 202 * MS, LB_EV_NODE_START, -1, 2, 0 },
};

static struct lb_busy count(const struct lb_try *t, size_t n, const struct lb_section *s,
			    size_t ns, const struct lb_event *ev, size_t ne, int nodes)
{
	struct lb_busy b;
	cr_assert_eq(lb_busy_down(t, n, s, ns, ev, ne, nodes, 1, &b), 0);
	return b;
}

Test(attempts, busy_with_a_majority_down_is_counted_and_nothing_else)
{
	const struct lb_try t[] = {
		{ 0, 50 * MS, 60 * MS, LB_TRY_BUSY },    /* every node up */
		{ 1, 90 * MS, 150 * MS, LB_TRY_BUSY },   /* answered with 3 of 5 down */
		{ 2, 120 * MS, 130 * MS, LB_TRY_BUSY },  /* all of it down */
		{ 0, 140 * MS, 150 * MS, LB_TRY_ERROR }, /* an error says so: not hidden */
		{ 1, 190 * MS, 203 * MS, LB_TRY_BUSY },  /* answered after the nodes came back */
		{ 2, 101 * MS, 101 * MS, LB_TRY_BUSY },  /* 2 of 5 down: a quorum was up */
	};
	struct lb_busy b = count(t, 6, NULL, 0, kill3, 6, 5);
	cr_assert_eq(b.busy, 5);
	cr_assert_eq(b.down, 2, "got %llu", (unsigned long long)b.down);
	/* 7 nodes: 3 down leaves a quorum of 4 */
	cr_assert_eq(count(t, 6, NULL, 0, kill3, 6, 7).down, 0);
}

/* An indeterminate attempt (sent, no reply) is an error as acquire_errors
 * and the outages count it, under its own word in attempts.csv. */
Test(attempts, an_indeterminate_attempt_is_an_error_with_its_own_word)
{
	struct lb_try t[] = { { 0, 100, 200, LB_TRY_ACQUIRED }, { 0, 300, 400, LB_TRY_INDETERMINATE },
			      { 0, 500, 600, LB_TRY_BUSY } };
	struct lb_event ev[4];

	cr_assert_str_eq(lb_try_result_name(LB_TRY_INDETERMINATE), "indeterminate");
	cr_assert_eq(lb_try_result_parse("indeterminate"), LB_TRY_INDETERMINATE);
	cr_assert_eq(lb_try_result_parse("error"), LB_TRY_ERROR, "older logs' word");
	cr_assert_eq(lb_attempts_outages(t, 3, 1, ev, 4), 2);
	cr_assert_eq(ev[0].kind, LB_EV_SERVER_DOWN);
	cr_assert_eq(ev[0].t_ns, 400);
	cr_assert_eq(ev[1].kind, LB_EV_SERVER_BACK);
}

Test(attempts, a_holder_from_before_the_fault_makes_busy_true)
{
	const struct lb_section s[] = {
		{ .client = 0, .enter_ns = 80 * MS, .exit_ns = 125 * MS, .release_ns = 126 * MS },
	};
	const struct lb_try t[] = {
		{ 1, 110 * MS, 120 * MS, LB_TRY_BUSY }, /* the holder was inside */
		{ 2, 124 * MS, 135 * MS, LB_TRY_BUSY }, /* its release came during it */
		{ 1, 130 * MS, 140 * MS, LB_TRY_BUSY }, /* after its release: nobody held it */
	};
	cr_assert_eq(count(t, 3, s, 1, kill3, 6, 5).down, 1);
}

/* With two locks, a section of lock 0 says nothing of lock 1 (client 1's). */
Test(attempts, a_section_of_another_lock_does_not_make_busy_true)
{
	const struct lb_section s[] = {
		{ .client = 0, .key = 0, .enter_ns = 80 * MS, .exit_ns = 180 * MS, .release_ns = 181 * MS },
	};
	const struct lb_try t[] = {
		{ 1, 110 * MS, 120 * MS, LB_TRY_BUSY }, /* lock 1: nobody held it */
		{ 2, 110 * MS, 120 * MS, LB_TRY_BUSY }, /* lock 0: client 0 held it */
	};
	struct lb_busy b;
	cr_assert_eq(lb_busy_down(t, 2, s, 1, kill3, 6, 5, 2, &b), 0);
	cr_assert_eq(b.busy, 2);
	cr_assert_eq(b.down, 1);
}

Test(attempts, one_node_paused_is_a_single_node_lock_down)
{
	const struct lb_event ev[] = {
		{ 10 * MS, LB_EV_NODE_PAUSE, -1, 0, 0 }, { 30 * MS, LB_EV_NODE_RESUME, -1, 0, 0 },
		{ 40 * MS, LB_EV_NODE_KILL, -1, 0, 0 }, /* never back */
	};
	const struct lb_try t[] = {
		{ 0, 5 * MS, 20 * MS, LB_TRY_BUSY }, { 0, 31 * MS, 35 * MS, LB_TRY_BUSY },
		{ 0, 50 * MS, 60 * MS, LB_TRY_BUSY },
	};
	cr_assert_eq(count(t, 3, NULL, 0, ev, 3, 1).down, 2);
}

static char tmpdir[64];

static void mktmp(void)
{
	strcpy(tmpdir, "/tmp/lbtest-attempts-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
}

static const char *figure(const char *dir, const char *name)
{
	return fx_summary(dir, name);
}

static void run_in(const char *dir, const char *strategy, const char *scenario)
{
	const char *args[] = { "run", "--strategy", strategy, "--scenario", scenario, "--seed", "3",
			       "--out", dir, "--no-status", "--no-report", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 0, "%s", fx_slurp(tmpdir, "output"));
	const char *check[] = { "check", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, check), 0, "check: %s", fx_slurp(tmpdir, "output"));
}

/* redis-semaphore's RedlockMutex answers "busy" with three of five nodes
 * dead, where node-redlock 4 reports the errors: the first is hidden. */
Test(attempts, a_dead_majority_reported_as_busy_is_counted, .init = mktmp)
{
	char hid[128], said[128];
	snprintf(hid, sizeof(hid), "%s/semaphore", tmpdir);
	snprintf(said, sizeof(said), "%s/redlock4", tmpdir);
	run_in(hid, "redis-semaphore-redlock@5.8.0", "redlock-majority-down");
	cr_assert_str_eq(figure(hid, "observed"), "safe");
	cr_assert_geq(atoi(figure(hid, "busy_while_down")), 1, "no busy answer while 3 of 5 were down");
	cr_assert_geq(atoi(figure(hid, "busy_answers")), atoi(figure(hid, "busy_while_down")));
	run_in(said, "redlock@4.2.0", "redlock-majority-down");
	cr_assert_str_eq(figure(said, "observed"), "unavailable");
	cr_assert_str_eq(figure(said, "busy_while_down"), "0");
	cr_assert_gt(atoi(figure(said, "acquire_errors")), 0);

	/* attempts.csv altered: check says where, and does not agree */
	char path[256], cmd[600];
	snprintf(path, sizeof(path), "%s/attempts.csv", hid);
	snprintf(cmd, sizeof(cmd), "sed -i '3s/,busy$/,maybe/;3s/,acquired$/,maybe/;3s/,error$/,maybe/' '%s'",
		 path);
	cr_assert_eq(system(cmd), 0);
	const char *check[] = { "check", hid, NULL };
	cr_assert_neq(fx_lockbench(tmpdir, check), 0);
	cr_assert(strstr(fx_slurp(tmpdir, "output"), "attempts.csv:3"), "%s",
		  fx_slurp(tmpdir, "output"));
}

/* Where replicas take a dead primary's place, a node down is not the lock
 * down: n/a, and said why. */
Test(attempts, with_a_replica_the_figure_is_na, .init = mktmp)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/failover", tmpdir);
	const char *args[] = { "run", "--strategy", "token-lua", "--scenario", "failover", "--out",
			       dir, "--no-status", "--no-report", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, args), 0, "%s", fx_slurp(tmpdir, "output"));
	cr_assert(strstr(fx_slurp(tmpdir, "output"), "replicas: a node down is not the lock down"),
		  "%s", fx_slurp(tmpdir, "output"));
	cr_assert_str_eq(figure(dir, "busy_while_down"), "n/a");
	const char *check[] = { "check", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpdir, check), 0, "check: %s", fx_slurp(tmpdir, "output"));
}

/* Issue 49: on the user's servers a server is back at its first answer of
 * any kind (busy included), at the end of the attempt that got it, and down
 * at the first error after an answer; an attempt cut without an answer
 * changes nothing. check compares events.csv with this. */
Test(attempts, a_server_is_back_at_its_first_answer_busy_included)
{
	const struct lb_try t[] = {
		{ 0, 100, 200, LB_TRY_ACQUIRED }, { 0, 300, 400, LB_TRY_ERROR },
		{ 0, 500, 600, LB_TRY_ERROR },    { 0, 700, 815, LB_TRY_BUSY },
		{ 0, 900, 1000, LB_TRY_ACQUIRED }, { 1, 50, 60, LB_TRY_ERROR },
		{ 1, 70, 80, LB_TRY_UNKNOWN },    { 1, 90, 95, LB_TRY_REFUSED },
	};
	struct lb_event ev[8];
	size_t n = lb_attempts_outages(t, 8, 2, ev, 8);

	cr_assert_eq(n, 4);
	cr_assert(ev[0].kind == LB_EV_SERVER_DOWN && ev[0].client == 0 && ev[0].t_ns == 400);
	cr_assert(ev[1].kind == LB_EV_SERVER_BACK && ev[1].client == 0 && ev[1].t_ns == 815,
		  "back at the busy answer's end, not at the next enter (%lld)", (long long)ev[1].t_ns);
	cr_assert(ev[2].kind == LB_EV_SERVER_DOWN && ev[2].client == 1 && ev[2].t_ns == 60);
	cr_assert(ev[3].kind == LB_EV_SERVER_BACK && ev[3].client == 1 && ev[3].t_ns == 95);
	cr_assert_eq(lb_attempts_outages(t, 8, 2, ev, 1), 4, "the count, past what fits");
}
