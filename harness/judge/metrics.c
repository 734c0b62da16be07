#include "metrics.h"
#include "oracle.h"
#include "util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
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
		/* the top bucket may hold a wait that never entered (from the files
		 * alone, bucket counts, it is all one can tell) */
		size_t top = 0, top_c = 0;
		for (size_t i = 0; i < LB_HIST_BUCKETS; i++) {
			if (all.counts[i])
				top = i;
			if (censored->counts[i])
				top_c = i;
		}
		*lower = censored->n > 0 && top_c >= top;
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

void lb_hist_quantile_interval_us(const struct lb_hist *done, const struct lb_hist *censored,
				  double q, double *low, double *high)
{
	struct lb_hist all = *done;
	uint64_t lo, hi;

	lb_hist_merge(&all, censored);
	*low = *high = 0;
	if (all.n == 0)
		return;
	*low = q >= 1 ? (double)all.max_ns / 1000.0 : lb_hist_quantile_us(&all, q);
	uint64_t rank = q >= 1 ? all.n - 1 : (uint64_t)(q * (double)all.n);
	if (rank >= all.n)
		rank = all.n - 1;
	if (rank >= done->n) { /* a censored wait, at +infinity, holds the rank */
		*high = INFINITY;
		return;
	}
	if (q >= 1) {
		*high = *low;
		return;
	}
	/* the rank among @done alone: the censored ones are all above it */
	struct lb_hist d = *done;
	d.n = all.n; /* quantile_bucket's rank is of all, counted in @done's buckets */
	lb_hist_bucket_range(quantile_bucket(&d, q), &lo, &hi);
	double cap = (double)all.max_ns / 1000.0;
	*high = (double)hi < cap ? (double)hi : cap;
	if (*high < *low) /* the same bucket, capped alike: never below the low */
		*high = *low;
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
		if (strncmp(p, "cmdstat_info:", 13) != 0 && strncmp(p, "cmdstat_replconf:", 17) != 0 &&
		    strncmp(p, "cmdstat_psync:", 14) != 0 && strncmp(p, "cmdstat_sync:", 13) != 0)
			total += c;
		p = eol;
	}
	return total;
}

bool lb_srv_snap_parse(const char *info, struct lb_srv_snap *s)
{
	const char *id = info ? strstr(info, "run_id:") : NULL;
	const char *role = info ? strstr(info, "role:") : NULL;
	size_t len = id ? strspn(id + 7, "0123456789abcdef") : 0;

	memset(s, 0, sizeof(*s));
	if (!id || len == 0 || len >= sizeof(s->run_id))
		return false;
	memcpy(s->run_id, id + 7, len);
	s->primary = role && !strncmp(role + 5, "master", 6);
	s->calls = lb_commandstats_calls(info);
	s->answered = true;
	return true;
}

/* One more reason into @why, after those already there. */
static void reason(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void reason(char *why, size_t len, const char *fmt, ...)
{
	size_t used = why && len ? strlen(why) : 0;
	va_list ap;

	if (!why || used + 3 >= len)
		return;
	if (used)
		used += (size_t)snprintf(why + used, len - used, "; ");
	va_start(ap, fmt);
	vsnprintf(why + used, len - used, fmt, ap);
	va_end(ap);
}

bool lb_lock_commands_between(const struct lb_srv_snap *before, const struct lb_srv_snap *after,
			      const char *const *names, size_t n, size_t n_lock, uint64_t *total,
			      char *why, size_t why_len)
{
	bool ok = true;

	*total = 0;
	if (why && why_len)
		why[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const struct lb_srv_snap *b = &before[i], *a = &after[i];
		bool same = b->answered && a->answered && !strcmp(b->run_id, a->run_id);
		if (i < n_lock && !(b->answered && b->primary)) {
			reason(why, why_len, "%s, a lock node, %s at the start", names[i],
			       b->answered ? "was not a primary" : "did not answer INFO");
			ok = false;
		} else if (b->answered && b->primary) {
			if (!a->answered)
				reason(why, why_len, "%s, a primary, did not answer at the end (killed?): "
				       "its last commands went uncounted",
				       names[i]);
			else if (!same)
				reason(why, why_len, "%s was another server process at the end "
				       "(run_id %.8s, then %.8s: it restarted, or a failover put "
				       "another in its place): the counters began again", names[i],
				       b->run_id, a->run_id);
			else if (!a->primary)
				reason(why, why_len, "%s was demoted to a replica (a failover)", names[i]);
			else if (a->calls < b->calls)
				reason(why, why_len, "%s's counters went back (%llu, then %llu: "
				       "CONFIG RESETSTAT?)", names[i],
				       (unsigned long long)b->calls, (unsigned long long)a->calls);
			else {
				*total += a->calls - b->calls;
				continue;
			}
			ok = false;
		} else if (b->answered && a->answered && a->primary) {
			reason(why, why_len, "%s was promoted to primary (a failover)", names[i]);
			ok = false;
		} else if (!b->answered && a->answered && a->primary) {
			reason(why, why_len, "%s did not answer at the start, a primary at the end", names[i]);
			ok = false;
		}
	}
	if (!ok)
		*total = 0;
	return ok;
}

struct span {
	int64_t from, to;
};

static int span_cmp(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;
	return a->from < b->from ? -1 : a->from > b->from;
}

int lb_held_time(const struct lb_section *s, size_t n, int64_t end_ns, double *held_s,
		 double *inside_s)
{
	struct span *sp = malloc(sizeof(*sp) * (n ? n : 1));
	int64_t held = 0, inside = 0, from = 0, to = -1;

	*held_s = *inside_s = 0;
	if (!sp)
		return LB_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		sp[i] = (struct span){ s[i].enter_ns, lb_section_exit(&s[i], end_ns) };
		inside += sp[i].to - sp[i].from;
	}
	qsort(sp, n, sizeof(*sp), span_cmp);
	for (size_t i = 0; i < n; i++) {
		if (sp[i].from > to) { /* a gap: the stretch before it is whole */
			if (to > from)
				held += to - from;
			from = sp[i].from;
			to = sp[i].to;
		} else if (sp[i].to > to) {
			to = sp[i].to;
		}
	}
	if (to > from)
		held += to - from;
	free(sp);
	*held_s = (double)held / 1e9;
	*inside_s = (double)inside / 1e9;
	return 0;
}

int lb_lock_cost_bound(const struct lb_cost_shape *c, double *commands, char *why, size_t why_len)
{
	const struct lb_wait *w = c->wait;
	double per_s; /* attempts a waiting client makes a second, at most */
	char text[48];

	*commands = 0;
	lb_wait_format(w, text, sizeof(text));
	switch (w->kind) {
	case LB_WAIT_FIXED:
	case LB_WAIT_RETRIES:
	case LB_WAIT_NOTIFY:
		per_s = w->interval_ms > 0 ? 1000.0 / (double)w->interval_ms : 0;
		break;
	case LB_WAIT_BACKOFF: /* full jitter: the mean sleep is at least MIN/2 */
		per_s = 2000.0 / (double)w->min_ms;
		break;
	default:
		per_s = 0;
		break;
	}
	if (per_s <= 0) {
		if (why && why_len)
			snprintf(why, why_len, "wait %s: %s", text, w->kind == LB_WAIT_LIBRARY ?
				 "the library waits by its own loop, which lockbench does not see" :
				 "a client tries again at once, as fast as its round trips: no rate "
				 "to bound its traffic by");
		return LB_ENOTSUP;
	}
	double waiting = (double)c->clients * c->elapsed_s - c->inside_s;
	if (waiting < 0)
		waiting = 0;
	double attempts = per_s * waiting;
	if (w->kind == LB_WAIT_NOTIFY) { /* a release may wake every waiter of its lock in turn */
		int per_key = (c->clients + c->keys - 1) / (c->keys > 0 ? c->keys : 1);
		attempts += (double)c->sections * (per_key > 1 ? per_key - 1 : 0);
	}
	*commands = (double)c->nodes * (LB_COST_PER_ATTEMPT * attempts +
					LB_COST_PER_EXTENSION * (3000.0 / (double)c->ttl_ms) * c->inside_s +
					LB_COST_PER_SECTION * (double)c->sections +
					LB_COST_BACKGROUND * c->elapsed_s);
	return 0;
}

bool lb_lock_cost_flagged(double commands, double bound)
{
	return bound > 0 && commands > LB_COST_FLAG * bound;
}

void lb_lock_cost_figures(uint64_t commands, bool commands_known, double bound, bool bound_known,
			  double held_s, struct lb_lock_cost *out)
{
	memset(out, 0, sizeof(*out));
	out->rate_known = commands_known && held_s > 0;
	out->bound_known = bound_known && held_s > 0;
	if (out->rate_known)
		out->per_held_s = (double)commands / held_s;
	if (out->bound_known)
		out->bound_per_held_s = bound / held_s;
	out->flagged = commands_known && bound_known && lb_lock_cost_flagged((double)commands, bound);
}
