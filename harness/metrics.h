/*
 * metrics.h - latency histograms and Redis command counts.
 *
 * The histogram is log-linear: exact below 8 us, then 8 buckets per power of
 * two (at most 12.5% wide), from 1 us to about 18 minutes. Fixed size, so it
 * lives in shared memory and clients fill it without allocating.
 */
#ifndef LB_METRICS_H
#define LB_METRICS_H

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

/* Total command calls on a server from its INFO commandstats reply text,
 * leaving out the INFO calls themselves (the measurement's own). */
uint64_t lb_commandstats_calls(const char *info);

#endif
