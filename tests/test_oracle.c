/* test_oracle.c - the oracle on hand-made histories with known answers. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <signal.h>

#include "oracle.h"
#include "util.h"

#define MS LB_NS_PER_MS

static struct lb_section sec(int client, int key, int64_t enter_ms, int64_t exit_ms,
			     enum lb_outcome o)
{
	return (struct lb_section){ .client = client, .key = key, .enter_ns = enter_ms * MS,
				    .acquire_start_ns = enter_ms * MS, .exit_ns = exit_ms * MS,
				    .release_ns = o == LB_OUT_KILLED ? -1 : exit_ms * MS,
				    .outcome = o, .fence = -1 };
}

static struct lb_verdict judge(const struct lb_section *s, size_t n, int clients, int64_t end_ms)
{
	struct lb_verdict v;
	cr_assert_eq(lb_oracle_judge(s, n, clients, end_ms * MS, &v, NULL), 0);
	return v;
}

Test(oracle, touching_sections_do_not_overlap)
{
	struct lb_section s[] = { sec(0, 0, 0, 10, LB_OUT_RELEASED), sec(1, 0, 10, 20, LB_OUT_RELEASED),
				  sec(0, 0, 20, 30, LB_OUT_RELEASED) };
	struct lb_verdict v = judge(s, 3, 2, 30);
	cr_assert_eq(v.sections, 3);
	cr_assert_eq(v.overlaps, 0);
	cr_assert_float_eq(v.overlap_ms, 0.0, 1e-9);
	cr_assert_eq(v.max_holders, 1);
	cr_assert_eq(v.recovered, LB_REC_NA);
}

Test(oracle, simple_overlap)
{
	struct lb_section s[] = { sec(0, 0, 0, 10, LB_OUT_RELEASED), sec(1, 0, 6, 16, LB_OUT_FOREIGN) };
	struct lb_verdict v = judge(s, 2, 2, 20);
	cr_assert_eq(v.overlaps, 1);
	cr_assert_float_eq(v.overlap_ms, 4.0, 1e-9);
	cr_assert_eq(v.max_holders, 2);
	cr_assert_eq(v.foreign_releases, 1);
}

Test(oracle, paused_holder_spans_others)
{
	/* client 0 paused 0..100 ms; clients 1 and 2 take the lock in turn meanwhile */
	struct lb_section s[] = { sec(0, 0, 0, 100, LB_OUT_LOST), sec(1, 0, 20, 40, LB_OUT_RELEASED),
				  sec(2, 0, 40, 60, LB_OUT_RELEASED), sec(1, 0, 110, 120, LB_OUT_RELEASED) };
	struct lb_verdict v = judge(s, 4, 3, 120);
	cr_assert_eq(v.overlaps, 2, "the two sections that began inside client 0's");
	cr_assert_float_eq(v.overlap_ms, 40.0, 1e-9);
	cr_assert_eq(v.max_holders, 2);
	cr_assert_eq(v.lost_leases, 1);
}

Test(oracle, three_at_once)
{
	struct lb_section s[] = { sec(0, 0, 0, 30, LB_OUT_RELEASED), sec(1, 0, 10, 30, LB_OUT_RELEASED),
				  sec(2, 0, 20, 40, LB_OUT_RELEASED) };
	struct lb_verdict v = judge(s, 3, 3, 40);
	cr_assert_eq(v.overlaps, 2);
	cr_assert_eq(v.max_holders, 3);
	cr_assert_float_eq(v.overlap_ms, 20.0, 1e-9, "from 10 (two inside) to 30 (one left)");
}

Test(oracle, killed_holder_recovered)
{
	struct lb_section s[] = { sec(0, 0, 0, 50, LB_OUT_KILLED), sec(1, 0, 2050, 2060, LB_OUT_RELEASED) };
	struct lb_verdict v = judge(s, 2, 2, 3000);
	cr_assert_eq(v.holder_deaths, 1);
	cr_assert_eq(v.recovered, LB_REC_YES);
	cr_assert_float_eq(v.orphan_ms, 2000.0, 1e-9);
	cr_assert_eq(v.overlaps, 0);
}

/* A waiter of @key (client @client) whose last attempt began at @try_ms. */
static struct lb_waiter waiter(int client, int key, int64_t start_ms, int64_t try_ms, int64_t end_ms)
{
	return (struct lb_waiter){ .client = client, .key = key, .calls = 1, .start_ns = start_ms * MS,
				   .last_try_ns = try_ms * MS, .end_ns = end_ms * MS,
				   .ended = LB_WEND_CUT };
}

static struct lb_verdict judge_w(const struct lb_section *s, size_t n, const struct lb_waiter *w,
				 size_t n_w, int clients, int64_t end_ms, int64_t ttl_ms)
{
	struct lb_history h = { .s = s, .n = n, .w = w, .n_w = n_w, .clients = clients,
				.end_ns = end_ms * MS, .ttl_ns = ttl_ms * MS };
	struct lb_verdict v;
	cr_assert_eq(lb_oracle_judge_history(&h, &v, NULL), 0);
	return v;
}

/* Client 1 still tried 1000 ms (the TTL) after the death and never got in. */
Test(oracle, killed_holder_never_recovered)
{
	struct lb_section s[] = { sec(1, 0, 0, 10, LB_OUT_RELEASED), sec(0, 0, 20, 50, LB_OUT_KILLED) };
	struct lb_waiter w = waiter(1, 0, 15, 1050, 5000);
	struct lb_verdict v = judge_w(s, 2, &w, 1, 2, 5000, 1000);
	cr_assert_eq(v.recovered, LB_REC_NO);
	cr_assert_float_eq(v.orphan_ms, 4950.0, 1e-9, "orphaned until the end of the run");
	char why[200];
	struct lb_class_input in = { .v = &v, .attempts = 10 };
	cr_assert_eq(lb_classify(&in, why, sizeof(why)), LB_CLASS_DEADLOCK, "%s", why);
}

/* Item: the run ended before the lease could have run out (death at 0.5 s,
 * TTL 1 s, end at 1.2 s), or nobody tried that lock at all (an uncontended
 * key): nobody can say the lock never came back. Recovery is n/a and the
 * class that hung on it inconclusive, never deadlock. */
Test(oracle, a_death_nobody_could_see_recover_is_not_a_deadlock)
{
	char why[200];
	struct lb_section s[] = { sec(1, 0, 0, 10, LB_OUT_RELEASED), sec(0, 0, 20, 500, LB_OUT_KILLED) };
	/* the waiter's last attempt began 1 ms short of death + TTL */
	struct lb_waiter w = waiter(1, 0, 15, 1499, 1200);
	w.end_ns = 1500 * MS;
	struct lb_verdict v = judge_w(s, 2, &w, 1, 2, 1500, 1000);
	cr_assert_eq(v.recovered, LB_REC_NA);
	cr_assert_eq(v.undecided_ns, 500 * MS);
	struct lb_class_input in = { .v = &v, .attempts = 10 };
	cr_assert_eq(lb_classify(&in, why, sizeof(why)), LB_CLASS_INCONCLUSIVE, "%s", why);
	cr_assert(strstr(why, "0.500 s") && strstr(why, "unknown"), "%s", why);
	/* at death + TTL exactly: it tried, and nobody got in */
	w.last_try_ns = 1500 * MS;
	v = judge_w(s, 2, &w, 1, 2, 1500, 1000);
	cr_assert_eq(v.recovered, LB_REC_NO);
	/* the same waiter on another key proves nothing about key 0 */
	w.key = 1;
	v = judge_w(s, 2, &w, 1, 2, 1500, 1000);
	cr_assert_eq(v.recovered, LB_REC_NA);
	/* no TTL known, or no waiters recorded: never "never came back" */
	w.key = 0;
	cr_assert_eq(judge_w(s, 2, &w, 1, 2, 1500, 0).recovered, LB_REC_NA);
	cr_assert_eq(judge(s, 2, 2, 5000).recovered, LB_REC_NA);
	/* one death came back, another is undecided: not "yes" */
	struct lb_section t[] = { sec(0, 0, 0, 10, LB_OUT_KILLED), sec(1, 0, 20, 30, LB_OUT_KILLED) };
	v = judge_w(t, 2, NULL, 0, 3, 100, 1000);
	cr_assert_eq(v.recovered, LB_REC_NA);
	cr_assert_eq(v.undecided_ns, 30 * MS);
}

Test(oracle, keys_are_independent)
{
	struct lb_section s[] = { sec(0, 0, 0, 10, LB_OUT_RELEASED), sec(1, 1, 0, 10, LB_OUT_RELEASED),
				  sec(2, 0, 5, 15, LB_OUT_RELEASED), sec(3, 1, 10, 20, LB_OUT_RELEASED) };
	struct lb_verdict v = judge(s, 4, 4, 20);
	cr_assert_eq(v.overlaps, 1, "only key 0 overlaps");
	cr_assert_float_eq(v.overlap_ms, 5.0, 1e-9);
	cr_assert_eq(v.max_holders, 2);
}

Test(oracle, death_on_another_key_is_recovered_only_by_that_key)
{
	struct lb_section s[] = { sec(0, 0, 0, 10, LB_OUT_KILLED), sec(1, 1, 20, 30, LB_OUT_RELEASED) };
	struct lb_waiter w = waiter(2, 0, 5, 90, 100);
	struct lb_verdict v = judge_w(s, 2, &w, 1, 3, 100, 50);
	cr_assert_eq(v.recovered, LB_REC_NO);
}

Test(oracle, fairness)
{
	uint64_t equal[] = { 5, 5, 5, 5 }, one[] = { 20, 0, 0, 0 }, half[] = { 10, 10, 0, 0 };
	cr_assert_float_eq(lb_jain(equal, 4), 1.0, 1e-12);
	cr_assert_float_eq(lb_jain(one, 4), 0.25, 1e-12);
	cr_assert_float_eq(lb_jain(half, 4), 0.5, 1e-12);

	struct lb_section s[] = { sec(0, 0, 0, 1, LB_OUT_RELEASED), sec(0, 0, 2, 3, LB_OUT_RELEASED) };
	uint64_t per[2];
	struct lb_verdict v;
	cr_assert_eq(lb_oracle_judge(s, 2, 2, 10 * MS, &v, per), 0);
	cr_assert_eq(per[0], 2);
	cr_assert_eq(per[1], 0);
	cr_assert_float_eq(v.fairness, 0.5, 1e-12);
}

Test(oracle, open_section_runs_to_the_end)
{
	struct lb_section s[] = { sec(0, 0, 0, 10, LB_OUT_RELEASED), sec(1, 0, 5, 0, LB_OUT_CUT) };
	s[1].exit_ns = -1; /* never exited */
	struct lb_verdict v = judge(s, 2, 2, 100);
	cr_assert_eq(v.overlaps, 1);
	cr_assert_float_eq(v.overlap_ms, 5.0, 1e-9);
	cr_assert_eq(v.holder_deaths, 0, "a section cut by the harness is no holder death");
}

Test(oracle, handoff_percentiles_are_nearest_rank)
{
	/* client 1 waits from 0; client 0 releases at 10 ms; 1 enters 9 us later;
	 * client 0 waits from 11 ms; 1 releases at 20 ms; 0 enters 70 us later */
	struct lb_section s[] = {
		{ .client = 0, .enter_ns = 0, .exit_ns = 10 * MS, .release_ns = 10 * MS,
		  .acquire_start_ns = 0, .outcome = LB_OUT_RELEASED, .fence = -1 },
		{ .client = 1, .enter_ns = 10 * MS + 9000, .exit_ns = 20 * MS, .release_ns = 20 * MS,
		  .acquire_start_ns = 1 * MS, .outcome = LB_OUT_RELEASED, .fence = -1 },
		{ .client = 0, .enter_ns = 20 * MS + 70000, .exit_ns = 30 * MS, .release_ns = 30 * MS,
		  .acquire_start_ns = 11 * MS, .outcome = LB_OUT_RELEASED, .fence = -1 },
	};
	struct lb_verdict v = judge(s, 3, 2, 40);
	cr_assert_eq(v.handoffs, 2);
	cr_assert_float_eq(v.handoff_p50_us, 9.0, 1e-9);
	cr_assert_float_eq(v.handoff_p99_us, 70.0, 1e-9);
	cr_assert_leq(v.handoff_p50_us, v.handoff_p99_us);
}

/* A section closed at a death stamped before its enter (the parent read the
 * clock, then the holder entered, then the kill landed) ends at its enter:
 * it is not "open until the end of the run". */
Test(oracle, a_section_never_ends_before_it_begins)
{
	struct lb_section s = sec(0, 0, 500, 0, LB_OUT_KILLED);
	s.exit_ns = s.enter_ns - 10000; /* 10 us before */
	cr_assert_eq(lb_section_exit(&s, 3000 * MS), s.enter_ns);
	s.exit_ns = -1; /* open: until the end */
	cr_assert_eq(lb_section_exit(&s, 3000 * MS), 3000 * MS);
}

static enum lb_class classify(const struct lb_verdict *v, long long lo, long long hi,
			      uint64_t attempts, uint64_t errors, uint64_t stopped, char *why)
{
	struct lb_class_input in = { .v = v, .lost_min = lo, .lost_max = hi, .attempts = attempts,
				     .acquire_errors = errors, .stopped = stopped };
	return lb_classify(&in, why, 200);
}

/* Nothing happened: never "safe" without evidence. */
Test(oracle, a_run_that_shows_nothing_is_inconclusive)
{
	char why[200];
	struct lb_verdict none = { 0 };
	cr_assert_eq(classify(&none, 0, 0, 0, 0, 0, why), LB_CLASS_INCONCLUSIVE);
	cr_assert(strstr(why, "no client attempted"), "%s", why);
	/* attempts, and one client entered, but no section ever completed */
	struct lb_section s = sec(0, 0, 10, 0, LB_OUT_CUT);
	s.exit_ns = -1;
	s.release_ns = -1;
	struct lb_verdict v = judge(&s, 1, 2, 100);
	cr_assert_eq(v.completed, 0);
	cr_assert_eq(classify(&v, 0, 0, 40, 0, 0, why), LB_CLASS_INCONCLUSIVE);
	cr_assert(strstr(why, "no critical section completed"), "%s", why);
	/* errors while nothing completed: unavailable, not inconclusive */
	cr_assert_eq(classify(&none, 0, 0, 40, 40, 0, why), LB_CLASS_UNAVAILABLE);
	struct lb_section ok = sec(0, 0, 10, 20, LB_OUT_RELEASED);
	v = judge(&ok, 1, 1, 100);
	cr_assert_eq(classify(&v, 0, 0, 1, 0, 0, why), LB_CLASS_SAFE);
	cr_assert_eq(lb_class_parse("inconclusive"), LB_CLASS_INCONCLUSIVE);
	cr_assert_gt(lb_class_severity(LB_CLASS_INCONCLUSIVE), lb_class_severity(LB_CLASS_FOREIGN));
}

/* Lost updates as a range: proof of loss uses the lower end, "contained"
 * needs the upper end to be 0, and the sentence says which end decided. */
Test(oracle, lost_updates_range_decides_by_the_right_end)
{
	char why[200];
	struct lb_section s[] = { sec(0, 0, 0, 10, LB_OUT_RELEASED), sec(1, 0, 5, 15, LB_OUT_RELEASED) };
	struct lb_verdict v = judge(s, 2, 2, 20);
	/* a fence refusal, and no loss possible: contained */
	cr_assert_eq(classify(&v, 0, 0, 2, 0, 1, why), LB_CLASS_CONTAINED);
	/* a fence refusal, but a write of unknown outcome may have lost one */
	cr_assert_eq(classify(&v, 0, 1, 2, 0, 1, why), LB_CLASS_OVERLAP);
	cr_assert(strstr(why, "lost updates 0..1") && strstr(why, "upper end"), "%s", why);
	/* no overlap seen, a range 0..2: nothing proven */
	struct lb_section one[] = { sec(0, 0, 0, 10, LB_OUT_RELEASED) };
	struct lb_verdict w = judge(one, 1, 1, 20);
	cr_assert_eq(classify(&w, 0, 2, 1, 0, 0, why), LB_CLASS_SAFE);
	cr_assert(strstr(why, "lower end"), "%s", why);
	/* a proven loss (lower end 3) */
	cr_assert_eq(classify(&w, 3, 5, 1, 0, 0, why), LB_CLASS_OVERLAP);
	cr_assert(strstr(why, "lost updates 3..5"), "%s", why);
}

/* A run cut short by a signal is classed interrupted, whatever it showed,
 * and the sentence still says what the part that ran showed. */
Test(oracle, a_run_cut_short_is_interrupted)
{
	char why[200];
	struct lb_section s[] = { sec(0, 0, 0, 10, LB_OUT_RELEASED), sec(1, 0, 5, 15, LB_OUT_RELEASED) };
	struct lb_verdict v = judge(s, 2, 2, 20);
	struct lb_class_input in = { .v = &v, .attempts = 2, .interrupted = SIGINT };
	cr_assert_eq(lb_classify(&in, why, sizeof(why)), LB_CLASS_INTERRUPTED);
	cr_assert(strstr(why, "Ctrl-C") && strstr(why, "what ran: overlap"), "%s", why);
	in.interrupted = SIGTERM;
	cr_assert_eq(lb_classify(&in, why, sizeof(why)), LB_CLASS_INTERRUPTED);
	cr_assert(strstr(why, "SIGTERM"), "%s", why);
	cr_assert_eq(lb_class_parse("interrupted"), LB_CLASS_INTERRUPTED);
	cr_assert_gt(lb_class_severity(LB_CLASS_INTERRUPTED), lb_class_severity(LB_CLASS_INCONCLUSIVE));
}
