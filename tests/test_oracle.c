/* test_oracle.c - the oracle on hand-made histories with known answers. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <signal.h>

#include "fixture.h"
#include "foreign.h"
#include "oracle.h"
#include "util.h"

#define MS LB_NS_PER_MS
#define US INT64_C(1000)

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

FX_SUITE(oracle, 60);
FX_SUITE(foreign, 60);

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

/* An indeterminate release (sent, no reply: a lost reply, a timeout) may have
 * left the lock held until its TTL; the section still ends at its exit, when
 * its client stopped believing: another client inside before that TTL is no
 * overlap of two holders, and the release is neither lost nor foreign. The
 * word is read back from a history. */
Test(oracle, an_indeterminate_release_is_no_hold_past_its_exit)
{
	struct lb_section s[] = { sec(0, 0, 0, 50, LB_OUT_INDETERMINATE),
				  sec(1, 0, 100, 200, LB_OUT_RELEASED) };
	s[0].lease_end_ns = 1000 * MS; /* the lock may have stayed until then */
	struct lb_verdict v = judge(s, 2, 2, 300);
	cr_assert_eq(v.overlaps, 0);
	cr_assert_eq(v.max_holders, 1);
	cr_assert_eq(v.lost_leases, 0);
	cr_assert_eq(v.foreign_releases, 0);
	cr_assert_eq(v.completed, 2);
	cr_assert_eq(lb_outcome_parse("indeterminate"), LB_OUT_INDETERMINATE);
	cr_assert_str_eq(lb_outcome_name(LB_OUT_INDETERMINATE), "indeterminate");
	cr_assert_eq(lb_outcome_parse("error"), LB_OUT_ERROR, "older histories' word");
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

/* ---- foreign releases, from the servers' key events (foreign.h) ---- */

/* A section with a token (what its acquire wrote) and a release window. */
static struct lb_section held(int client, uint32_t seq, int64_t acquire_ms, int64_t enter_ms,
			      int64_t exit_ms, int64_t release_ms, uint64_t token)
{
	return (struct lb_section){ .client = client, .seq = seq, .acquire_start_ns = acquire_ms * MS,
				    .enter_ns = enter_ms * MS, .exit_ns = exit_ms * MS,
				    .release_ns = release_ms < 0 ? -1 : release_ms * MS,
				    .outcome = release_ms < 0 ? LB_OUT_KILLED : LB_OUT_RELEASED,
				    .fence = -1, .token = token };
}

static struct lb_key_event kev(int64_t t_ms, int kind, uint64_t value)
{
	return (struct lb_key_event){ .t_ns = t_ms * MS, .kind = (uint8_t)kind, .value = value,
				      .key = kind == LB_KEY_WATCH || kind == LB_KEY_UNWATCH ? -1 : 0 };
}

static struct lb_foreign_result judge_keys(const struct lb_section *s, size_t n,
					   const struct lb_key_event *e, size_t ne)
{
	struct lb_foreign_opts o = { LB_KEYWATCH_SLOP_NS, 1000 * MS, 10000 * MS };
	struct lb_foreign_result r;
	cr_assert_eq(lb_foreign_judge(s, n, e, ne, &o, &r), 0);
	return r;
}

/* holder-pause with a plain DEL: client 0 is paused past its lease; client 1
 * takes the lock; client 0 wakes and its DEL removes client 1's lock while
 * client 1 is inside; client 2 comes in, and client 1's own DEL removes it. */
Test(foreign, a_plain_del_cascade_is_seen_and_attributed)
{
	struct lb_section s[] = {
		held(0, 0, 0, 1, 2600, 2601, 0xa),    /* paused from 2 to 2600 */
		held(1, 0, 10, 1010, 2650, 2651, 0xb),
		held(2, 0, 20, 2602, 2700, 2701, 0xc),
	};
	struct lb_key_event e[] = {
		kev(0, LB_KEY_WATCH, 0), kev(1, LB_KEY_SET, 0xa), kev(1001, LB_KEY_EXPIRED, 0),
		kev(1010, LB_KEY_SET, 0xb),
		kev(2601, LB_KEY_DEL, 0),  /* client 0's release: client 1 is inside */
		kev(2602, LB_KEY_SET, 0xc),
		kev(2651, LB_KEY_DEL, 0),  /* client 1's release: client 2 is inside */
	};                                 /* client 2's own DEL finds nothing: no event */
	struct lb_foreign_result r = judge_keys(s, 3, e, sizeof(e) / sizeof(e[0]));
	cr_assert_eq(r.releases, 2);
	cr_assert_eq(r.unattributed, 0);
	cr_assert_eq(r.list[0].owner, 1);
	cr_assert_eq(r.list[0].by, 0, "the paused client's release deleted it");
	cr_assert_eq(r.list[1].owner, 2);
	cr_assert_eq(r.list[1].by, 1);
	cr_assert_eq(r.sets_owned, 3);
	lb_foreign_result_free(&r);
}

/* What is not a foreign release: the holder's own release (at or after its
 * exit), an expiry, a del of a value no section entered with (a failed
 * attempt's), and anything after a watch (a restart or a reconnection: what
 * the server holds is unknown). */
Test(foreign, own_releases_expiries_and_unknowns_are_not_foreign)
{
	struct lb_section s[] = {
		held(0, 0, 0, 1, 100, 101, 0xa),
		held(1, 0, 0, 200, 300, 301, 0xb),
		held(0, 1, 150, 400, 500, 501, 0xc),
		held(1, 1, 310, 600, 700, 701, 0xd),
	};
	struct lb_key_event e[] = {
		kev(1, LB_KEY_SET, 0xa), kev(100, LB_KEY_DEL, 0),   /* its own, at its exit */
		kev(150, LB_KEY_SET, 0x77), kev(151, LB_KEY_DEL, 0), /* a failed attempt, undone */
		kev(199, LB_KEY_SET, 0xb), kev(250, LB_KEY_EXPIRED, 0), /* expired inside: no release */
		kev(399, LB_KEY_SET, 0xc), kev(500, LB_KEY_DEL, 0),  /* at client 0's exit */
		kev(599, LB_KEY_SET, 0xd), kev(620, LB_KEY_WATCH, 0), /* a restart: unknown from here */
		kev(650, LB_KEY_DEL, 0),
	};
	struct lb_foreign_result r = judge_keys(s, 4, e, sizeof(e) / sizeof(e[0]));
	cr_assert_eq(r.releases, 0);
	cr_assert_eq(r.sets, 5);
	cr_assert_eq(r.sets_owned, 4, "the failed attempt's value is nobody's");
	cr_assert_eq(r.dels, 4);
	lb_foreign_result_free(&r);
}

/* A del while the holder is inside, with no release in flight: counted,
 * attributed to nobody. A holder killed inside: a del after its death is not
 * counted (its release may have been sent: the history cannot tell). */
Test(foreign, a_del_with_no_release_in_flight_is_unattributed)
{
	struct lb_section s[] = { held(0, 0, 0, 10, 100, 101, 0xa), held(1, 0, 0, 110, 200, -1, 0xb) };
	struct lb_key_event e[] = { kev(10, LB_KEY_SET, 0xa), kev(50, LB_KEY_DEL, 0),
				    kev(110, LB_KEY_SET, 0xb), kev(250, LB_KEY_DEL, 0) };
	struct lb_foreign_result r = judge_keys(s, 2, e, 4);
	cr_assert_eq(r.releases, 1);
	cr_assert_eq(r.unattributed, 1);
	cr_assert_eq(r.list[0].owner, 0);
	cr_assert_eq(r.list[0].by, -1);
	lb_foreign_result_free(&r);
}

/* Two releases racing at the holder's exit (measured under ASan, holder-pause,
 * set-nx-px): client 2 stops believing at 3619.0 ms, client 0's GETDEL deletes
 * client 2's lock at 3619.6 (it says foreign), and client 2's own GETDEL finds
 * it gone (lost). The del is after client 2's exit, but its release deleted
 * nothing of its own: the del is client 0's, a foreign release, as its
 * GETDEL said. Had client 2's release said released, the del would be its own. */
Test(foreign, a_release_racing_the_holders_own_at_its_exit)
{
	struct lb_section s[] = {
		held(2, 0, 3540, 3563, 3619, 3620, 0xb),
		held(0, 0, 3000, 3010, 3618, 3620, 0xa), /* its lease long gone */
	};
	s[0].outcome = LB_OUT_LOST;
	s[1].outcome = LB_OUT_FOREIGN;
	struct lb_key_event e[] = { kev(3010, LB_KEY_SET, 0xa), kev(3500, LB_KEY_EXPIRED, 0),
				    kev(3563, LB_KEY_SET, 0xb), kev(3619, LB_KEY_DEL, 0) };
	e[3].t_ns += MS / 2;
	struct lb_foreign_result r = judge_keys(s, 2, e, 4);
	cr_assert_eq(r.releases, 1, "client 2's release found its lock gone: the del was client 0's");
	cr_assert_eq(r.list[0].owner, 2);
	cr_assert_eq(r.list[0].by, 0);
	lb_foreign_result_free(&r);
	s[0].outcome = LB_OUT_RELEASED;
	r = judge_keys(s, 2, e, 4);
	cr_assert_eq(r.releases, 0, "client 2's release deleted its own lock");
	lb_foreign_result_free(&r);
	s[0].outcome = LB_OUT_LOST;
	e[3].t_ns = 3620 * MS + LB_KEYWATCH_SLOP_NS + 1; /* after its release returned */
	r = judge_keys(s, 2, e, 4);
	cr_assert_eq(r.releases, 0, "a del after the holder's release returned is not judged");
	lb_foreign_result_free(&r);
	for (size_t i = 0; i < 4; i++)
		e[i].node = e[i].server = 1; /* several nodes: a release's outcome is the majority's */
	e[3].t_ns = 3619 * MS + MS / 2;
	r = judge_keys(s, 2, e, 4);
	cr_assert_eq(r.releases, 0, "on several nodes, never after the exit");
	lb_foreign_result_free(&r);
}

/* The watcher fell 80 ms behind (measured: get-del under check-then-delete,
 * with make test's two lanes loading the machine): client 0's del, client 2's
 * set and del, and client 0's next set all reached it at 1654.65 ms, and the
 * value of client 2's set could not be read (the key had changed by its GET).
 * By time alone, from the set's time minus the 50 ms slop, that set went to
 * the next section (client 0's, entered 1637 ms), and client 2's own release
 * counted as a foreign release inside it. In the server's order the set comes
 * after client 0's (1524 ms) set and before the one of the next section's
 * token: it is client 2's, and nobody's release deleted another's lock. */
Test(foreign, a_watcher_behind_by_more_than_the_slop_matches_in_the_servers_order)
{
	struct lb_section s[] = {
		held(0, 4, 1482, 1524, 1575, 1576, 0x04),
		held(2, 4, 1545, 1581, 1631, 1632, 0x24),
		held(0, 5, 1596, 1637, 1688, 1689, 0x05),
		held(2, 5, 1656, 1689, 1739, 1740, 0x25),
	};
	struct lb_key_event e[] = {
		kev(0, LB_KEY_WATCH, 0),    kev(1525, LB_KEY_SET, 0x04), kev(1654, LB_KEY_DEL, 0),
		kev(1654, LB_KEY_SET, 0),   kev(1654, LB_KEY_DEL, 0),    kev(1654, LB_KEY_SET, 0x05),
		kev(1688, LB_KEY_DEL, 0),   kev(1688, LB_KEY_SET, 0x25), kev(1739, LB_KEY_DEL, 0),
	};
	for (size_t i = 2; i < 6; i++)
		e[i].t_ns += 652 * US + (int64_t)i * US;
	e[6].t_ns += 522 * US;
	e[7].t_ns += 523 * US;
	struct lb_foreign_result r = judge_keys(s, 4, e, 9);
	cr_assert_eq(r.releases, 0, "client 2's own release was counted as a foreign release");
	lb_foreign_result_free(&r);
	int64_t owner[9];
	struct lb_foreign_opts o = { LB_KEYWATCH_SLOP_NS, 1000 * MS, 10000 * MS };
	cr_assert_eq(lb_foreign_owners(s, 4, e, 9, &o, owner), 0);
	cr_assert_eq(owner[3], 1, "the unread set is client 2's section 4, not %lld", (long long)owner[3]);
	/* the watcher lost the server just before (an unwatch, then a watch):
	 * what came before is unknown; client 2's section entered before the
	 * loss, and the next one's own set is seen by its token: nobody's */
	e[1] = kev(1600, LB_KEY_UNWATCH, 0);
	e[2] = kev(1601, LB_KEY_WATCH, 0);
	cr_assert_eq(lb_foreign_owners(s, 4, e, 9, &o, owner), 0);
	cr_assert_eq(owner[3], LB_OWNER_UNKNOWN, "after a loss, the set went to %lld",
		     (long long)owner[3]);
	/* by time alone it went to the section whose set is seen (client 0's 5) */
	s[2].token = 0;
	e[5].value = 0;
	cr_assert_eq(lb_foreign_owners(s, 4, e, 9, &o, owner), 0);
	cr_assert_eq(owner[3], 2, "the set's time minus the slop: %lld", (long long)owner[3]);
}

/* Without tokens (an exec: adapter that does not say token=), a set belongs to
 * the section that entered first after it; each section is given one set per
 * server. */
Test(foreign, without_tokens_sets_are_matched_by_time)
{
	struct lb_section s[] = { held(0, 0, 0, 2, 2600, 2601, 0), held(1, 0, 5, 1012, 2650, 2651, 0) };
	struct lb_key_event e[] = { kev(1, LB_KEY_SET, 0x1), kev(1001, LB_KEY_EXPIRED, 0),
				    kev(1010, LB_KEY_SET, 0x2), kev(2601, LB_KEY_DEL, 0) };
	struct lb_foreign_result r = judge_keys(s, 2, e, 4);
	cr_assert_eq(r.sets_owned, 2);
	cr_assert_eq(r.releases, 1);
	cr_assert_eq(r.list[0].owner, 1);
	cr_assert_eq(r.list[0].by, 0);
	lb_foreign_result_free(&r);
}

/* A set whose value could not be read (a del came first): on one node it is
 * matched by time; on several (Redlock, where a failed attempt's sets are
 * undone at once) it belongs to nobody known. */
Test(foreign, an_unread_value_is_matched_by_time_on_one_node_only)
{
	struct lb_section s[] = { held(0, 0, 0, 1, 300, 301, 0xa), held(1, 0, 290, 302, 600, 601, 0xb) };
	struct lb_key_event e[] = { kev(1, LB_KEY_SET, 0xa), kev(301, LB_KEY_DEL, 0),
				    kev(302, LB_KEY_SET, 0), kev(303, LB_KEY_DEL, 0) };
	/* client 0's release at 301..301 + slop: the del at 303 of client 1's lock */
	struct lb_foreign_result r = judge_keys(s, 2, e, 4);
	cr_assert_eq(r.releases, 1);
	cr_assert_eq(r.list[0].owner, 1);
	cr_assert_eq(r.list[0].by, 0);
	lb_foreign_result_free(&r);
	for (size_t i = 0; i < 4; i++)
		e[i].node = 1; /* node 1 of a Redlock */
	r = judge_keys(s, 2, e, 4);
	cr_assert_eq(r.releases, 0);
	lb_foreign_result_free(&r);
}

/* A del between a set and its section's enter (the acquire's reply on its
 * way): on one node, where an acquire writes once and never undoes, the lock
 * was already B's; on several, a library retrying with one token undoes its
 * failed attempt's sets itself, so only from B's enter on. By time, only
 * from B's enter on too. */
Test(foreign, a_del_before_the_enter_counts_on_one_node_by_token)
{
	struct lb_section s[] = { held(0, 0, 0, 1, 100, 101, 0xa), held(1, 0, 50, 102, 200, 201, 0xb) };
	struct lb_key_event e[] = { kev(1, LB_KEY_SET, 0xa), kev(100, LB_KEY_DEL, 0),
				    kev(100, LB_KEY_SET, 0xb), kev(101, LB_KEY_DEL, 0) };
	struct lb_foreign_result r = judge_keys(s, 2, e, 4);
	cr_assert_eq(r.releases, 1, "client 0's release deleted client 1's fresh lock");
	cr_assert_eq(r.list[0].owner, 1);
	cr_assert_eq(r.list[0].by, 0);
	lb_foreign_result_free(&r);
	for (size_t i = 0; i < 4; i++)
		e[i].node = e[i].server = 1;
	r = judge_keys(s, 2, e, 4);
	cr_assert_eq(r.releases, 0, "on several nodes, not before the enter");
	lb_foreign_result_free(&r);
	s[0].token = s[1].token = 0; /* by time, on one node */
	for (size_t i = 0; i < 4; i++)
		e[i].node = e[i].server = 0;
	r = judge_keys(s, 2, e, 4);
	cr_assert_eq(r.sets_owned, 2);
	cr_assert_eq(r.releases, 0, "by time, not before the enter");
	lb_foreign_result_free(&r);
}

/* Redlock: per node, and only sections that held that node. */
Test(foreign, redlock_is_judged_per_node)
{
	struct lb_section s[] = { held(0, 0, 0, 5, 100, 101, 0xa), held(1, 0, 0, 5, 100, 101, 0xb) };
	s[0].nodes = 1u << 0 | 1u << 1 | 1u << 2;
	s[1].nodes = 1u << 3 | 1u << 4; /* a minority: it never entered in truth, but say so */
	struct lb_key_event e[] = { kev(1, LB_KEY_SET, 0xa), kev(1, LB_KEY_SET, 0xb),
				    kev(50, LB_KEY_DEL, 0), kev(60, LB_KEY_DEL, 0) };
	e[0].server = e[0].node = 0;
	e[1].server = e[1].node = 3;
	e[2].server = e[2].node = 3; /* client 1's key on node 3 deleted while it is inside */
	e[3].server = e[3].node = 1; /* node 1 had no set: nothing known */
	struct lb_foreign_result r = judge_keys(s, 2, e, 4);
	cr_assert_eq(r.releases, 1);
	cr_assert_eq(r.list[0].node, 3);
	cr_assert_eq(r.list[0].owner, 1);
	lb_foreign_result_free(&r);
}

/* On several nodes, sections that do not say their token (a library whose
 * using() hides it) cannot be judged: a failed attempt's set, a late one or
 * an extension cannot be told from the holder's by time. Not reported. */
Test(foreign, several_nodes_without_tokens_are_not_judged)
{
	struct lb_section s[] = { held(0, 0, 0, 5, 100, 101, 0), held(1, 0, 0, 110, 200, 201, 0) };
	struct lb_key_event e[] = { kev(4, LB_KEY_SET, 0x1), kev(50, LB_KEY_DEL, 0) };
	e[0].node = e[1].node = e[0].server = e[1].server = 2;
	struct lb_foreign_result r = judge_keys(s, 2, e, 2);
	cr_assert(r.unjudged);
	lb_foreign_result_free(&r);
	struct lb_verdict v = judge(s, 2, 2, 300);
	struct lb_foreign_opts o = { LB_KEYWATCH_SLOP_NS, 1000 * MS, 300 * MS };
	cr_assert_eq(lb_foreign_verdict(&v, s, 2, e, 2, true, &o, &r), 0);
	cr_assert_eq(v.foreign_source, LB_FOREIGN_NA);
	lb_foreign_result_free(&r);
	/* with their tokens they are */
	s[0].token = 0x1;
	s[1].token = 0x2;
	r = judge_keys(s, 2, e, 2);
	cr_assert_not(r.unjudged);
	cr_assert_eq(r.releases, 1);
	lb_foreign_result_free(&r);
}

/* Not measured is not none: the class is never foreign-release, and the
 * sentence does not claim "no foreign release". */
Test(foreign, not_measured_is_not_no_foreign_release)
{
	char why[200];
	struct lb_section ok = sec(0, 0, 10, 20, LB_OUT_RELEASED);
	struct lb_verdict v = judge(&ok, 1, 1, 100);
	struct lb_foreign_result r;
	cr_assert_eq(lb_foreign_verdict(&v, &ok, 1, NULL, 0, true, NULL, &r), 0);
	cr_assert_eq(v.foreign_source, LB_FOREIGN_NA);
	cr_assert_eq(classify(&v, 0, 0, 1, 0, 0, why), LB_CLASS_SAFE);
	cr_assert(strstr(why, "foreign releases not measured"), "%s", why);
	cr_assert_null(strstr(why, "no foreign release"), "%s", why);
	/* the releases' own count where they can say (a recipe's GETDEL) */
	struct lb_section f = sec(0, 0, 10, 20, LB_OUT_FOREIGN);
	v = judge(&f, 1, 1, 100);
	cr_assert_eq(lb_foreign_verdict(&v, &f, 1, NULL, 0, false, NULL, &r), 0);
	cr_assert_eq(v.foreign_source, LB_FOREIGN_CLIENT);
	cr_assert_eq(v.foreign_releases, 1);
	/* the servers' count where they were watched, whatever the releases said */
	struct lb_key_event none = kev(0, LB_KEY_WATCH, 0);
	struct lb_foreign_opts o = { LB_KEYWATCH_SLOP_NS, 1000 * MS, 100 * MS };
	cr_assert_eq(lb_foreign_verdict(&v, &f, 1, &none, 1, false, &o, &r), 0);
	cr_assert_eq(v.foreign_source, LB_FOREIGN_SERVER);
	cr_assert_eq(v.foreign_releases, 0);
	cr_assert_eq(v.foreign_client, 1);
	lb_foreign_result_free(&r);
}

/* failover with a fenced recipe (measured in make matrix, 2 runs in 5): client
 * 1 entered on the old primary at 1239 ms and is inside until 1539; the new
 * primary never saw its set. Client 0 enters there at 1270, and the watcher
 * could not read that set's value (the section was over before its GET).
 * The value-less set is client 0's, not client 1's, whose own set was seen
 * on the other server (its lock lives there): client 0's own DEL is not a
 * foreign release. (The nearest enter is not the rule: with sections of a
 * millisecond the watcher's delay puts the next section nearer.) */
/* fence-reset under load (a matrix run): node 0 restarts while client 1 is
 * inside; the watcher never saw client 1's set, and after the restart it
 * could not read the value of client 0's next set. That set is not client
 * 1's: client 1 entered before the watcher lost the server (its unwatch), so
 * its set went to the old process. Client 0's own DEL is not a foreign
 * release. */
Test(foreign, a_set_seen_after_a_restart_is_not_a_section_that_entered_before_it)
{
	struct lb_section s[] = {
		held(0, 1, 1230, 1232, 1532, 1532, 0xa),
		held(1, 1, 1533, 1537, 1837, 1837, 0xb),
		held(0, 2, 1561, 1562, 1563, 1564, 0xc),
	};
	struct lb_key_event e[] = {
		kev(0, LB_KEY_WATCH, 0), kev(1231, LB_KEY_SET, 0xa), kev(1532, LB_KEY_DEL, 0),
		kev(1538, LB_KEY_UNWATCH, 0), /* node 0 is killed */
		kev(1548, LB_KEY_WATCH, 0), kev(1562, LB_KEY_SET, 0), kev(1564, LB_KEY_DEL, 0),
	};
	struct lb_foreign_result r = judge_keys(s, 3, e, sizeof(e) / sizeof(e[0]));
	cr_assert_eq(r.releases, 0, "client 0's own release was counted as foreign");
	cr_assert_eq(r.sets_owned, 2, "the value-less set is client 0's second section's");
	lb_foreign_result_free(&r);
}

Test(foreign, a_set_without_its_value_is_not_a_section_set_on_another_server)
{
	struct lb_section s[] = {
		held(1, 2, 939, 1239, 1539, 1540, 0xc),
		held(0, 3, 1270, 1270, 1271, 1271, 0xd),
	};
	struct lb_key_event e[] = {
		kev(0, LB_KEY_WATCH, 0), kev(1239, LB_KEY_SET, 0xc),
		kev(1241, LB_KEY_UNWATCH, 0), /* the old primary is killed */
		kev(1241, LB_KEY_WATCH, 0), kev(1270, LB_KEY_SET, 0), kev(1271, LB_KEY_DEL, 0),
	};
	e[3].server = e[4].server = e[5].server = 1;
	s[1].enter_ns += 20000; /* 0.02 ms after the set */
	struct lb_foreign_result r = judge_keys(s, 2, e, sizeof(e) / sizeof(e[0]));
	cr_assert_eq(r.releases, 0, "client 0's own release was counted as foreign");
	lb_foreign_result_free(&r);
}

/* Clients whose adapters ended on their own: the run is judged only while
 * they were there for half of it and one reached the end; a killed client
 * (a fault: no adapter-died event) is not silent. */
Test(oracle, a_run_its_clients_fell_silent_in_is_inconclusive)
{
	const int64_t s = 1000000000;
	struct lb_event ev[] = {
		{ .t_ns = s / 10, .kind = LB_EV_ADAPTER_DIED, .client = 0, .node = -1 },
		{ .t_ns = s / 5, .kind = LB_EV_KILL, .client = 1, .node = -1 },
		{ .t_ns = s / 5, .kind = LB_EV_DEATH, .client = 1, .node = -1 },
	};
	struct lb_coverage cv;
	lb_run_coverage(ev, 3, 2, 2 * s, &cv);
	cr_assert_eq(cv.silent, 1);
	cr_assert_eq(cv.first_ns, s / 10);
	cr_assert_float_eq(cv.fraction, (0.05 + 1) / 2, 1e-9);
	cr_assert(lb_coverage_enough(&cv), "one of two silent, half the run covered");
	lb_run_coverage(ev, 1, 4, 2 * s, &cv); /* 1 of 4 silent from 5%: 76% */
	cr_assert(lb_coverage_enough(&cv));
	struct lb_event all[] = {
		{ .t_ns = 19 * s / 10, .kind = LB_EV_ADAPTER_DIED, .client = 0, .node = -1 },
		{ .t_ns = 19 * s / 10, .kind = LB_EV_ADAPTER_DIED, .client = 1, .node = -1 },
	};
	lb_run_coverage(all, 2, 2, 2 * s, &cv); /* 95% covered, but nobody to the end */
	cr_assert_not(lb_coverage_enough(&cv));

	struct lb_verdict v = { .sections = 4, .completed = 4 };
	struct lb_class_input in = { .v = &v, .attempts = 8, .cover = &cv };
	char why[256];
	cr_assert_eq(lb_classify(&in, why, sizeof(why)), LB_CLASS_INCONCLUSIVE, "%s", why);
	cr_assert(strstr(why, "2 of 2 clients' adapters ended before the run did (the first at "
			 "1.900 s)"), "%s", why);
	cr_assert(strstr(why, "what ran looked safe"), "%s", why);
	lb_run_coverage(all, 0, 2, 2 * s, &cv); /* nobody fell silent */
	cr_assert_eq(lb_classify(&in, why, sizeof(why)), LB_CLASS_SAFE, "%s", why);
}

/* A lapse is what the server did: an `expired` of the key while it held a
 * section's set, before that section's exit, loses its lease, whatever the
 * library said (issue 49, item 10); one after the exit, or of a key nobody
 * held, loses none. lost_leases counts it once beside a release's `lost`. */
Test(oracle, a_lease_the_server_ended_inside_is_lost_whatever_the_library_said)
{
	struct lb_section s[3] = {
		held(0, 0, 0, 10, 500, 510, 11),      /* its key expires at 300, inside */
		held(1, 0, 600, 610, 700, 710, 22),   /* its key expires at 800, after */
		held(2, 0, 900, 910, 1000, 1010, 33), /* expires at 950, and said lost */
	};
	s[2].outcome = LB_OUT_LOST;
	struct lb_key_event e[] = {
		kev(0, LB_KEY_WATCH, 0),
		kev(5, LB_KEY_SET, 11), kev(300, LB_KEY_EXPIRED, 0),
		kev(605, LB_KEY_SET, 22), kev(800, LB_KEY_EXPIRED, 0),
		kev(905, LB_KEY_SET, 33), kev(950, LB_KEY_EXPIRED, 0),
	};
	struct lb_foreign_result r = judge_keys(s, 3, e, 7);
	cr_assert_eq(r.lapsed, 2);
	cr_assert(r.lapsed_at && r.lapsed_at[0] && !r.lapsed_at[1] && r.lapsed_at[2]);
	lb_foreign_result_free(&r);

	struct lb_verdict v = { .lost_leases = 1 }; /* section 2's release said lost */
	struct lb_foreign_opts o = { LB_KEYWATCH_SLOP_NS, 1000 * MS, 10000 * MS };
	cr_assert_eq(lb_foreign_verdict(&v, s, 3, e, 7, false, &o, &r), 0);
	cr_assert_eq(v.leases_lapsed, 2);
	cr_assert(v.leases_lapsed_known);
	cr_assert_eq(v.lost_leases, 2, "section 0 added, section 2 counted once");
	lb_foreign_result_free(&r);
}

/* The notices of the leases the servers ended (issue 50): each section whose
 * key a server expired while it was inside is matched with its client's
 * first lost-notice event from its enter to its exit; the lag is the notice
 * minus the expiry. A notice after the exit is none: missed. p50 and max of
 * the lags; n/a (notices_known false) when an event was dropped. */
Test(oracle, a_notice_is_timed_against_the_servers_end_of_the_lease)
{
	struct lb_section s[3] = {
		held(0, 0, 0, 10, 500, 510, 11),      /* expires at 300, told at 450 */
		held(1, 0, 600, 610, 700, 710, 22),   /* expires at 650, told at 705: after its exit */
		held(2, 0, 900, 910, 1000, 1010, 33), /* expires at 950, told at 955 */
	};
	struct lb_key_event e[] = {
		kev(0, LB_KEY_WATCH, 0),
		kev(5, LB_KEY_SET, 11), kev(300, LB_KEY_EXPIRED, 0),
		kev(605, LB_KEY_SET, 22), kev(650, LB_KEY_EXPIRED, 0),
		kev(905, LB_KEY_SET, 33), kev(950, LB_KEY_EXPIRED, 0),
	};
	struct lb_event ev[] = {
		{ .t_ns = 450 * MS, .kind = LB_EV_LOST_NOTICE, .client = 0, .node = -1 },
		{ .t_ns = 470 * MS, .kind = LB_EV_LOST_NOTICE, .client = 0, .node = -1 },
		{ .t_ns = 705 * MS, .kind = LB_EV_LOST_NOTICE, .client = 1, .node = -1 },
		{ .t_ns = 955 * MS, .kind = LB_EV_LOST_NOTICE, .client = 2, .node = -1 },
	};
	struct lb_verdict v = { 0 };
	struct lb_foreign_opts o = { LB_KEYWATCH_SLOP_NS, 1000 * MS, 10000 * MS };
	struct lb_foreign_result r;
	int64_t lag[3];
	cr_assert_eq(lb_foreign_verdict(&v, s, 3, e, 7, false, &o, &r), 0);
	cr_assert(r.ended_ns && r.ended_ns[0] == 300 * MS && r.ended_ns[1] == 650 * MS &&
		  r.ended_ns[2] == 950 * MS);
	cr_assert_eq(lb_notice_verdict(&v, s, 3, &r, ev, 4, 10000 * MS, true, lag), 0);
	cr_assert(v.notices_known);
	cr_assert_eq(v.leases_ended, 3);
	cr_assert_eq(v.notices_told, 2);
	cr_assert_eq(v.notices_missed, 1, "section 1 was told after its exit");
	cr_assert_float_eq(v.notice_lag_p50_ms, 5, 1e-9);
	cr_assert_float_eq(v.notice_lag_max_ms, 150, 1e-9);
	cr_assert(lag[0] == 150 * MS && lag[1] == INT64_MIN && lag[2] == 5 * MS);
	cr_assert_eq(lb_notice_verdict(&v, s, 3, &r, ev, 4, 10000 * MS, false, NULL), 0);
	cr_assert_not(v.notices_known, "an event dropped: a notice may be missing");
	lb_foreign_result_free(&r);
}

static struct lb_key_event kttl(int64_t t_ms, int kind, int32_t ttl_ms, uint8_t server)
{
	struct lb_key_event e = kev(t_ms, kind, 0);
	e.ttl_ms = ttl_ms;
	e.server = server;
	return e;
}

/* Held with no live holder (issue 54): the time a server kept the lock key
 * while no client had it (from its acquire's return to its release's return
 * or its death): a holder's death until the key's PTTL ran out (not the late
 * `expired`), renewals that land after the release and keep it, a set on a
 * second server nobody entered with; a stretch within the watcher's slop is
 * delivery, not counted. Summed, and the longest. */
Test(oracle, a_lock_the_server_keeps_with_no_live_holder_is_timed)
{
	struct lb_section s[3] = {
		held(0, 0, 0, 10, 100, 101, 11),       /* released: the key goes at 101 */
		held(1, 0, 150, 200, 300, -1, 22),     /* killed at 300, key until 1195 */
		held(0, 1, 1250, 1300, 1399, 1400, 33), /* released, but renewed after */
	};
	struct lb_key_event e[] = {
		kttl(5, LB_KEY_SET, 1000, 0), kttl(101, LB_KEY_DEL, 0, 0),
		kttl(195, LB_KEY_SET, 1000, 0), kttl(1250, LB_KEY_EXPIRED, 0, 0),
		kttl(1295, LB_KEY_SET, 1000, 0), kttl(1390, LB_KEY_EXPIRE, 1000, 0),
		kttl(2000, LB_KEY_EXPIRE, 1000, 0), kttl(3000, LB_KEY_EXPIRED, 0, 0),
		kttl(3100, LB_KEY_SET, 1000, 0), kttl(3130, LB_KEY_DEL, 0, 0), /* 30 ms: slop */
		kttl(5000, LB_KEY_SET, 1000, 1), kttl(5100, LB_KEY_DEL, 0, 1),
	};
	struct lb_verdict v = { 0 };
	struct lb_foreign_opts o = { LB_KEYWATCH_SLOP_NS, 1000 * MS, 10000 * MS };

	cr_assert_eq(lb_unattended_verdict(&v, s, 3, e, sizeof(e) / sizeof(e[0]), 1, &o), 0);
	cr_assert_float_eq(v.held_no_holder_ms, 895 + 1600 + 100, 1e-6, "%f", v.held_no_holder_ms);
	cr_assert_float_eq(v.held_no_holder_max_ms, 1600, 1e-6, "%f", v.held_no_holder_max_ms);
	/* none of the servers' stretches outlives its holder: 0 */
	cr_assert_eq(lb_unattended_verdict(&v, s, 3, e, 2, 1, &o), 0);
	cr_assert_float_eq(v.held_no_holder_ms, 0, 1e-9);
}
