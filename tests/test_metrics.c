/* test_metrics.c - histogram buckets and quantiles, commandstats parsing, the lock
 * servers' command counts per server process, held time and the lock's cost. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "metrics.h"

FX_SUITE(metrics, 60);

Test(metrics, buckets_cover_the_range_without_gaps)
{
	uint64_t prev_high = 0, low, high;
	for (size_t i = 0; i < LB_HIST_BUCKETS; i++) {
		lb_hist_bucket_range(i, &low, &high);
		cr_assert_eq(low, prev_high, "bucket %zu starts at %llu, previous ended at %llu", i,
			     (unsigned long long)low, (unsigned long long)prev_high);
		cr_assert_gt(high, low);
		if (i >= 8)
			cr_assert_leq((double)(high - low) / (double)low, 0.125 + 1e-12);
		prev_high = high;
	}
}

Test(metrics, quantiles)
{
	static struct lb_hist h;
	memset(&h, 0, sizeof(h));
	cr_assert_float_eq(lb_hist_quantile_us(&h, 0.5), 0.0, 1e-12);
	for (int i = 1; i <= 1000; i++)
		lb_hist_add(&h, (int64_t)i * 1000); /* 1..1000 us */
	cr_assert_eq(h.n, 1000);
	double p50 = lb_hist_quantile_us(&h, 0.5), p99 = lb_hist_quantile_us(&h, 0.99);
	cr_assert(p50 >= 500 && p50 <= 500 * 1.125 + 1, "p50 = %f", p50);
	cr_assert(p99 >= 990 && p99 <= 1000, "p99 = %f (capped at the max)", p99);
	cr_assert_float_eq(lb_hist_quantile_us(&h, 1.0), 1000.0, 1e-9);
	static struct lb_hist g;
	memset(&g, 0, sizeof(g));
	lb_hist_add(&g, 5000000);
	lb_hist_merge(&h, &g);
	cr_assert_eq(h.n, 1001);
	cr_assert_eq(h.max_ns, 5000000);
}

Test(metrics, commandstats_calls_without_info)
{
	const char *info = "# Commandstats\r\n"
			   "cmdstat_set:calls=10,usec=20,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n"
			   "cmdstat_info:calls=3,usec=30,usec_per_call=10.0,rejected_calls=0,failed_calls=0\r\n"
			   "cmdstat_evalsha:calls=7,usec=70,usec_per_call=10.0,rejected_calls=0,failed_calls=0\r\n";
	cr_assert_eq(lb_commandstats_calls(info), 17);
	cr_assert_eq(lb_commandstats_calls("# Commandstats\r\n"), 0);
}

Test(metrics, commandstats_leave_out_what_servers_say_to_each_other)
{
	const char *info = "cmdstat_set:calls=10,usec=20\r\n"
			   "cmdstat_replconf:calls=40,usec=2\r\n"
			   "cmdstat_psync:calls=1,usec=37\r\n"
			   "cmdstat_sync:calls=1,usec=37\r\n"
			   "cmdstat_ping:calls=2,usec=3\r\n";
	cr_assert_eq(lb_commandstats_calls(info), 12, "REPLCONF ACKs are no lock command");
}

/* A server as INFO shows it: a real one, then parsed. */
Test(metrics, a_snapshot_of_a_real_server)
{
	struct fx f;
	struct lb_srv_snap s;
	fx_start(&f, 1);
	redisReply *r = fx_cmd(&f, 0, "SET k v");
	freeReplyObject(r);
	r = fx_cmd(&f, 0, "INFO server replication commandstats");
	cr_assert(r && r->type == REDIS_REPLY_STRING);
	cr_assert(lb_srv_snap_parse(r->str, &s));
	freeReplyObject(r);
	fx_stop(&f);
	cr_assert(s.answered && s.primary);
	cr_assert_eq(strlen(s.run_id), 40, "run_id '%s'", s.run_id);
	cr_assert_geq(s.calls, 1, "the SET");
	cr_assert_not(lb_srv_snap_parse("-ERR wrong\r\n", &s));
	cr_assert_not(s.answered);
	cr_assert_not(lb_srv_snap_parse(NULL, &s));
}

static struct lb_srv_snap snap(const char *id, bool primary, uint64_t calls)
{
	struct lb_srv_snap s = { .answered = id != NULL, .primary = primary, .calls = calls };
	if (id)
		snprintf(s.run_id, sizeof(s.run_id), "%s", id);
	return s;
}

/* Item 2 of issue 30: the counters of a lock node's server that restarts or
 * changes role are never subtracted across the change (a wrapped 1.7e18
 * "commands per section" in every failover run before). */
Test(metrics, lock_commands_are_counted_per_server_process)
{
	const char *names[] = { "redis-lock-0", "redis-replica" };
	char why[400];
	uint64_t total = 99;
	struct lb_srv_snap b[2], a[2];

	/* steady: the primary's growth; the replica that stayed one is no lock server */
	b[0] = snap("aaaa", true, 100), a[0] = snap("aaaa", true, 350);
	b[1] = snap("bbbb", false, 5), a[1] = snap("bbbb", false, 900);
	cr_assert(lb_lock_commands_between(b, a, names, 2, 1, &total, why, sizeof(why)));
	cr_assert_eq(total, 250);

	/* failover: the primary killed, the replica promoted */
	a[0] = snap(NULL, false, 0), a[1] = snap("bbbb", true, 40);
	cr_assert_not(lb_lock_commands_between(b, a, names, 2, 1, &total, why, sizeof(why)));
	cr_assert_eq(total, 0);
	cr_assert(strstr(why, "redis-lock-0, a primary, did not answer"), "%s", why);
	cr_assert(strstr(why, "redis-replica was promoted"), "%s", why);

	/* a restart on the same port: another process, counters from 0 */
	a[0] = snap("cccc", true, 3), a[1] = snap("bbbb", false, 6);
	cr_assert_not(lb_lock_commands_between(b, a, names, 2, 1, &total, why, sizeof(why)));
	cr_assert(strstr(why, "redis-lock-0 was another server process at the end (run_id aaaa, then cccc"), "%s", why);

	/* demoted, the same process */
	a[0] = snap("aaaa", false, 400);
	cr_assert_not(lb_lock_commands_between(b, a, names, 2, 1, &total, why, sizeof(why)));
	cr_assert(strstr(why, "demoted"), "%s", why);

	/* CONFIG RESETSTAT */
	a[0] = snap("aaaa", true, 7);
	cr_assert_not(lb_lock_commands_between(b, a, names, 2, 1, &total, why, sizeof(why)));
	cr_assert(strstr(why, "went back"), "%s", why);

	/* a lock node that did not answer at the start (INFO renamed away): not 0 */
	b[0] = snap(NULL, false, 0), a[0] = snap(NULL, false, 0);
	cr_assert_not(lb_lock_commands_between(b, a, names, 1, 1, &total, why, sizeof(why)));
	cr_assert(strstr(why, "redis-lock-0, a lock node, did not answer INFO"), "%s", why);
	b[0] = snap("aaaa", false, 0), a[0] = snap("aaaa", false, 9);
	cr_assert_not(lb_lock_commands_between(b, a, names, 1, 1, &total, why, sizeof(why)));
	/* a server that is no lock node and was a primary only at the end */
	b[1] = snap(NULL, false, 0), a[1] = snap("dddd", true, 7);
	cr_assert_not(lb_lock_commands_between(b, a, names, 2, 0, &total, why, sizeof(why)));
	cr_assert(strstr(why, "redis-replica did not answer at the start"), "%s", why);
}

static struct lb_section sect(int client, int64_t enter_ms, int64_t exit_ms)
{
	return (struct lb_section){ .client = client, .enter_ns = enter_ms * LB_NS_PER_MS,
				    .exit_ns = exit_ms < 0 ? -1 : exit_ms * LB_NS_PER_MS,
				    .release_ns = -1, .fence = -1 };
}

Test(metrics, held_time_is_the_union_and_inside_the_sum)
{
	struct lb_section s[] = { sect(1, 100, 300), sect(0, 0, 200), sect(2, 500, 600),
				  sect(3, 550, -1) };
	double held, inside;
	cr_assert_eq(lb_held_time(s, 4, 1000 * LB_NS_PER_MS, &held, &inside), 0);
	/* [0, 300) and [500, 1000): the open one runs to the end */
	cr_assert_float_eq(held, 0.8, 1e-12);
	cr_assert_float_eq(inside, 0.2 + 0.2 + 0.1 + 0.45, 1e-12);
	cr_assert_eq(lb_held_time(NULL, 0, 0, &held, &inside), 0);
	cr_assert_eq(held, 0);
}

/* Item 9: the bound of a lock's own traffic, from the run's shape. */
Test(metrics, the_bound_of_a_recipes_traffic)
{
	struct lb_wait w = { .kind = LB_WAIT_FIXED, .interval_ms = 10 };
	struct lb_cost_shape c = { .wait = &w, .clients = 2, .keys = 1, .nodes = 1, .ttl_ms = 1000,
				   .elapsed_s = 3, .sections = 7, .inside_s = 2.5 };
	double bound;
	char why[160];

	cr_assert_eq(lb_lock_cost_bound(&c, &bound, why, sizeof(why)), 0);
	/* waiting 6 - 2.5 client-s at 100 attempts/s, 8 each; extending 2.5 s at 3/s,
	 * 3 each; 7 sections, 16 each; 3 s of background, 10/s */
	double want = 8 * 100 * 3.5 + 3 * 3 * 2.5 + 16 * 7 + 10 * 3;
	cr_assert_float_eq(bound, want, 1e-9);
	c.nodes = 5;
	cr_assert_eq(lb_lock_cost_bound(&c, &bound, why, sizeof(why)), 0);
	cr_assert_float_eq(bound, 5 * want, 1e-9);
	/* flagged past 3 times the bound (metrics.h says why 3) */
	cr_assert(lb_lock_cost_flagged(3 * 5 * want + 1, bound));
	cr_assert_not(lb_lock_cost_flagged(3 * 5 * want, bound));
	/* notify: a release may wake each waiter of its lock once more */
	w = (struct lb_wait){ .kind = LB_WAIT_NOTIFY, .interval_ms = 100 };
	c.nodes = 1;
	cr_assert_eq(lb_lock_cost_bound(&c, &bound, why, sizeof(why)), 0);
	cr_assert_float_eq(bound, 8 * (10 * 3.5 + 7 * 1) + 3 * 3 * 2.5 + 16 * 7 + 10 * 3, 1e-9);
	/* no rate to bound by */
	w = (struct lb_wait){ .kind = LB_WAIT_TRY };
	cr_assert_eq(lb_lock_cost_bound(&c, &bound, why, sizeof(why)), LB_ENOTSUP);
	cr_assert(strstr(why, "wait try"), "%s", why);
	w = (struct lb_wait){ .kind = LB_WAIT_FIXED, .interval_ms = 0 };
	cr_assert_eq(lb_lock_cost_bound(&c, &bound, why, sizeof(why)), LB_ENOTSUP);
	w = (struct lb_wait){ .kind = LB_WAIT_LIBRARY };
	cr_assert_eq(lb_lock_cost_bound(&c, &bound, why, sizeof(why)), LB_ENOTSUP);
	cr_assert(strstr(why, "library"), "%s", why);

	struct lb_lock_cost lc;
	lb_lock_cost_figures(285366, true, 1936, true, 3.8, &lc);
	cr_assert(lc.rate_known && lc.bound_known && lc.flagged);
	cr_assert_float_eq(lc.per_held_s, 285366 / 3.8, 1e-6);
	lb_lock_cost_figures(285366, false, 1936, true, 3.8, &lc);
	cr_assert_not(lc.rate_known || lc.flagged);
	lb_lock_cost_figures(100, true, 1936, true, 0, &lc); /* nothing held: no rate */
	cr_assert_not(lc.rate_known || lc.bound_known);
}

/* Waits cut off before they ended are lower bounds: a quantile with one at
 * or below it is marked and reported at its bucket's lower edge (the true
 * quantile is at least that); one with every censored wait above it is
 * exact; the maximum is a lower bound when a censored wait lies in its
 * bucket or above. */
Test(metrics, censored_waits_make_lower_bounds)
{
	struct lb_hist done = { 0 }, cut = { 0 }, none = { 0 };
	bool lower;
	for (int i = 0; i < 98; i++)
		lb_hist_add(&done, 1000 * 1000);        /* 98 acquires of 1 ms */
	lb_hist_add(&cut, (int64_t)3500 * 1000 * 1000); /* 1 wait cut off at 3.5 s */
	lb_hist_add(&cut, (int64_t)3600 * 1000 * 1000);
	double p50 = lb_hist_quantile_censored_us(&done, &cut, 0.5, &lower);
	cr_assert_not(lower);
	cr_assert(p50 >= 1000 && p50 <= 1125, "%g: the bucket of 1 ms", p50);
	double p99 = lb_hist_quantile_censored_us(&done, &cut, 0.99, &lower);
	cr_assert(lower);
	cr_assert_leq(p99, 3500000.0);
	cr_assert_gt(p99, 3500000.0 * 0.85, "%g: not the bucket of the 3.5 s wait", p99);
	double max = lb_hist_quantile_censored_us(&done, &cut, 1, &lower);
	cr_assert(lower);
	cr_assert_eq(max, 3600000.0);
	/* nothing censored: the plain figures */
	cr_assert_eq(lb_hist_quantile_censored_us(&done, &none, 1, &lower), 1000.0);
	cr_assert_not(lower);
	/* a short censored wait below the median makes the median a lower bound */
	lb_hist_add(&none, 10 * 1000);
	lb_hist_quantile_censored_us(&done, &none, 0.5, &lower);
	cr_assert(lower);
	cr_assert_eq(lb_hist_quantile_censored_us(&done, &none, 1, &lower), 1000.0);
	cr_assert_not(lower, "a censored wait shorter than the longest acquire: the maximum is exact");
	struct lb_hist empty = { 0 };
	cr_assert_eq(lb_hist_quantile_censored_us(&empty, &empty, 0.5, &lower), 0);
	cr_assert_not(lower);
}

/* A quantile with waits cut off by the run's end is an interval: the waits
 * at their length (low) and at +infinity (high, the value of the waits
 * that entered at the same rank): one cut-off wait at the top moves p99 by
 * one rank at most, and leaves it bounded (issue 49 item 3); the maximum,
 * or a rank a cut-off wait holds, has no upper end. */
Test(metrics, censored_waits_make_an_interval)
{
	struct lb_hist done = { 0 }, cut = { 0 }, none = { 0 };
	double low, high;

	for (int i = 0; i < 499; i++)
		lb_hist_add(&done, (int64_t)(i % 50 + 1) * 1000 * 1000); /* 1 to 50 ms */
	lb_hist_add(&cut, (int64_t)3000 * 1000 * 1000);                  /* cut at 3 s */
	lb_hist_quantile_interval_us(&done, &cut, 0.99, &low, &high);
	cr_assert(isfinite(high), "one cut-off wait in 500 left p99 unbounded");
	cr_assert_leq(low, high);
	cr_assert_leq(high, 50000.0 * 1.125, "%g: p99 above the longest wait that entered", high);
	lb_hist_quantile_interval_us(&done, &cut, 1, &low, &high);
	cr_assert_eq(low, 3000000.0);
	cr_assert(isinf(high), "the maximum with a cut-off wait has no upper end");
	/* nothing cut off: a point */
	lb_hist_quantile_interval_us(&done, &none, 0.99, &low, &high);
	cr_assert_eq(low, high);
	/* half the waits cut off: they hold the rank of p99 and p50's high */
	for (int i = 0; i < 600; i++)
		lb_hist_add(&none, (int64_t)10 * 1000 * 1000);
	lb_hist_quantile_interval_us(&done, &none, 0.99, &low, &high);
	cr_assert(isinf(high));
	lb_hist_quantile_interval_us(&done, &none, 0.5, &low, &high);
	cr_assert(isinf(high));
	cr_assert_leq(low, 10000.0 * 1.125);
	struct lb_hist empty = { 0 };
	lb_hist_quantile_interval_us(&empty, &empty, 0.5, &low, &high);
	cr_assert(low == 0 && high == 0);
}
