#include "metrics.h"

#include <stdlib.h>
#include <string.h>

static size_t bucket_of(uint64_t us)
{
	if (us < 8)
		return (size_t)us;
	unsigned e = 63u - (unsigned)__builtin_clzll(us); /* us >= 8: e >= 3 */
	size_t b = 8 + (size_t)(e - 3) * 8 + ((us >> (e - 3)) & 7);
	return b < LB_HIST_BUCKETS ? b : LB_HIST_BUCKETS - 1;
}

void lb_hist_bucket_range(size_t i, uint64_t *low_us, uint64_t *high_us)
{
	if (i < 8) {
		*low_us = i;
		*high_us = i + 1;
		return;
	}
	unsigned e = (unsigned)((i - 8) / 8 + 3);
	uint64_t sub = (i - 8) % 8;
	*low_us = (8 + sub) << (e - 3);
	*high_us = (9 + sub) << (e - 3);
}

void lb_hist_add(struct lb_hist *h, int64_t ns)
{
	uint64_t v = ns > 0 ? (uint64_t)ns : 0;

	h->counts[bucket_of(v / 1000)]++;
	h->n++;
	h->sum_ns += v;
	if (v > h->max_ns)
		h->max_ns = v;
}

void lb_hist_merge(struct lb_hist *into, const struct lb_hist *from)
{
	for (size_t i = 0; i < LB_HIST_BUCKETS; i++)
		into->counts[i] += from->counts[i];
	into->n += from->n;
	into->sum_ns += from->sum_ns;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
}

/* The bucket that holds the q-quantile of a non-empty @h. */
static size_t quantile_bucket(const struct lb_hist *h, double q)
{
	uint64_t rank = (uint64_t)(q * (double)h->n), seen = 0;

	if (rank >= h->n)
		rank = h->n - 1;
	for (size_t i = 0; i < LB_HIST_BUCKETS; i++) {
		seen += h->counts[i];
		if (seen > rank)
			return i;
	}
	return LB_HIST_BUCKETS - 1;
}

double lb_hist_quantile_us(const struct lb_hist *h, double q)
{
	uint64_t low, high;
	double max_us = (double)h->max_ns / 1000.0;

	if (h->n == 0)
		return 0;
	lb_hist_bucket_range(quantile_bucket(h, q), &low, &high);
	return (double)high < max_us ? (double)high : max_us;
}

double lb_hist_quantile_censored_us(const struct lb_hist *done, const struct lb_hist *censored,
				    double q, bool *lower)
{
	struct lb_hist all = *done;
	uint64_t low, high;

	lb_hist_merge(&all, censored);
	*lower = false;
	if (all.n == 0)
		return 0;
	if (q >= 1) {
		*lower = censored->n > 0;
		return (double)all.max_ns / 1000.0;
	}
	size_t b = quantile_bucket(&all, q);
	for (size_t i = 0; i <= b && !*lower; i++)
		*lower = censored->counts[i] > 0;
	if (!*lower)
		return lb_hist_quantile_us(&all, q);
	lb_hist_bucket_range(b, &low, &high);
	return (double)low;
}

uint64_t lb_commandstats_calls(const char *info)
{
	uint64_t total = 0;
	const char *p = info;

	while (p && (p = strstr(p, "cmdstat_")) != NULL) {
		const char *calls = strstr(p, "calls=");
		const char *eol = strchr(p, '\n');
		if (!calls || (eol && calls > eol))
			break;
		uint64_t c = strtoull(calls + 6, NULL, 10);
		if (strncmp(p, "cmdstat_info:", 13) != 0)
			total += c;
		p = eol;
	}
	return total;
}
