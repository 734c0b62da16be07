/* test_metrics.c - histogram buckets and quantiles, commandstats parsing. */
#include <criterion/criterion.h>
#include <string.h>

#include "metrics.h"

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

/* Waits cut off before they ended are lower bounds: a quantile with one at
 * or below it is marked and reported at its bucket's lower edge (the true
 * quantile is at least that); one with every censored wait above it is
 * exact; the maximum is a lower bound as soon as anything is censored. */
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
	struct lb_hist empty = { 0 };
	cr_assert_eq(lb_hist_quantile_censored_us(&empty, &empty, 0.5, &lower), 0);
	cr_assert_not(lower);
}
