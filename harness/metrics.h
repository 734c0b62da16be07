/*
 * metrics.h - latency histograms and Redis command counts.
 *
 * The histogram is log-linear: exact below 8 us, then 8 buckets per power of
 * two (at most 12.5% wide), from 1 us to about 18 minutes. Fixed size, so it
 * lives in shared memory and clients fill it without allocating.
 */
#ifndef LB_METRICS_H
#define LB_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LB_HIST_BUCKETS 320

struct lb_hist {
	uint64_t counts[LB_HIST_BUCKETS];
	uint64_t n;
	uint64_t max_ns;
	uint64_t sum_ns;
};

void lb_hist_add(struct lb_hist *h, int64_t ns);
void lb_hist_merge(struct lb_hist *into, const struct lb_hist *from);
/* Bucket @i covers [low_us, high_us). */
void lb_hist_bucket_range(size_t i, uint64_t *low_us, uint64_t *high_us);
/* The q-quantile (0..1) in microseconds: the upper bound of the bucket that
 * holds it, capped at the maximum seen; 0 when empty. */
double lb_hist_quantile_us(const struct lb_hist *h, double q);
/*
 * The q-quantile of @done and @censored together, where each censored value
 * is only a lower bound (a wait cut off before it ended). When a censored
 * value lies at or below the quantile, the true quantile may be higher:
 * *lower is set and the lower edge of the quantile's bucket is returned (the
 * true quantile is at least that); otherwise as lb_hist_quantile_us. q >= 1
 * is the maximum, a lower bound whenever anything is censored. 0 when empty.
 */
double lb_hist_quantile_censored_us(const struct lb_hist *done, const struct lb_hist *censored,
				    double q, bool *lower);

/* Total command calls on a server from its INFO commandstats reply text,
 * leaving out the INFO calls themselves (the measurement's own). */
uint64_t lb_commandstats_calls(const char *info);

#endif
