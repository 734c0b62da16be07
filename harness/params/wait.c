#include "wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INTERVAL_MS (3600 * 1000)

int lb_wait_parse(const char *s, struct lb_wait *out, char *err, size_t errlen)
{
	char buf[64], what[160];
	char *a, *b;

	memset(out, 0, sizeof(*out));
	if (!s || strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	a = strchr(buf, ':');
	if (a)
		*a++ = '\0';
	b = a ? strchr(a, ':') : NULL;
	if (b)
		*b++ = '\0';
	if (!strcmp(buf, "try") && !a) {
		out->kind = LB_WAIT_TRY;
		return 0;
	}
	if (!strcmp(buf, "library") && !a) {
		out->kind = LB_WAIT_LIBRARY;
		return 0;
	}
	if (!strcmp(buf, "own") && !a) {
		out->kind = LB_WAIT_OWN;
		return 0;
	}
	if (!strcmp(buf, "fixed") && a && !b) {
		out->kind = LB_WAIT_FIXED;
		if (!lb_parse_i64(a, 0, MAX_INTERVAL_MS, &out->interval_ms))
			goto bad;
		return 0;
	}
	if (!strcmp(buf, "notify") && !b) {
		out->kind = LB_WAIT_NOTIFY;
		out->interval_ms = 100;
		if (a && !lb_parse_i64(a, 1, MAX_INTERVAL_MS, &out->interval_ms))
			goto bad;
		return 0;
	}
	if (!strcmp(buf, "backoff") && a && b) {
		out->kind = LB_WAIT_BACKOFF;
		if (!lb_parse_i64(a, 1, MAX_INTERVAL_MS, &out->min_ms) ||
		    !lb_parse_i64(b, 1, MAX_INTERVAL_MS, &out->max_ms) || out->min_ms > out->max_ms)
			goto bad;
		return 0;
	}
	if (!strcmp(buf, "retries") && a && b) {
		out->kind = LB_WAIT_RETRIES;
		if (!lb_parse_i64(a, 1, 1000000, &out->max_tries) ||
		    !lb_parse_i64(b, 0, MAX_INTERVAL_MS, &out->interval_ms))
			goto bad;
		return 0;
	}
bad:
	lb_wait_expected(what, sizeof(what));
	snprintf(err, errlen, "bad wait policy '%s': expected %s", s ? s : "", what);
	return LB_EINVAL;
}

void lb_wait_expected(char *buf, size_t len)
{
	snprintf(buf, len, "try, fixed:MS, retries:N:MS, backoff:MIN:MAX, notify[:MS], library or own "
		 "(MS in 0..%d, N >= 1, 1 <= MIN <= MAX)", MAX_INTERVAL_MS);
}

void lb_wait_format(const struct lb_wait *w, char *buf, size_t len)
{
	switch (w->kind) {
	case LB_WAIT_TRY:
		snprintf(buf, len, "try");
		break;
	case LB_WAIT_LIBRARY:
		snprintf(buf, len, "library");
		break;
	case LB_WAIT_OWN:
		snprintf(buf, len, "own");
		break;
	case LB_WAIT_FIXED:
		snprintf(buf, len, "fixed:%lld", (long long)w->interval_ms);
		break;
	case LB_WAIT_RETRIES:
		snprintf(buf, len, "retries:%lld:%lld", (long long)w->max_tries,
			 (long long)w->interval_ms);
		break;
	case LB_WAIT_BACKOFF:
		snprintf(buf, len, "backoff:%lld:%lld", (long long)w->min_ms, (long long)w->max_ms);
		break;
	case LB_WAIT_NOTIFY:
		snprintf(buf, len, "notify:%lld", (long long)w->interval_ms);
		break;
	}
}

int64_t lb_wait_poll_ms(const struct lb_wait *w)
{
	switch (w->kind) {
	case LB_WAIT_BACKOFF: return w->max_ms;
	case LB_WAIT_FIXED:
	case LB_WAIT_RETRIES:
	case LB_WAIT_NOTIFY: return w->interval_ms;
	default: return 0;
	}
}

uint64_t lb_rand_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int64_t lb_wait_delay_ns(const struct lb_wait *w, int64_t attempt, uint64_t *rng)
{
	switch (w->kind) {
	case LB_WAIT_TRY:
	case LB_WAIT_OWN: /* resolved before any run (lb_wait_own) */
	case LB_WAIT_LIBRARY: /* the library waited inside its one call */
		return -1;
	case LB_WAIT_BACKOFF: {
		int64_t cap = w->min_ms;
		for (int64_t k = 2; k < attempt && cap < w->max_ms; k++)
			cap *= 2;
		if (cap > w->max_ms)
			cap = w->max_ms;
		uint64_t r = rng ? lb_rand_next(rng) : 0;
		return (int64_t)(r % (uint64_t)(cap * LB_NS_PER_MS + 1)); /* full jitter */
	}
	case LB_WAIT_NOTIFY:
		return w->interval_ms * LB_NS_PER_MS;
	case LB_WAIT_RETRIES:
		if (attempt > w->max_tries)
			return -1;
		/* fall through */
	case LB_WAIT_FIXED:
		return w->interval_ms * LB_NS_PER_MS;
	}
	return -1;
}

int lb_acquire(const struct lock_strategy *strategy, void *self, const struct lb_wait *w,
	       int64_t deadline_ns, const atomic_int *cancel, uint64_t *rng,
	       struct lb_grant *grant, struct lb_acquire_info *info,
	       const struct lb_acquire_tally *tally)
{
	struct lb_acquire_info local;
	int rc;

	if (!info)
		info = &local;
	memset(info, 0, sizeof(*info));
	for (;;) {
		*grant = (struct lb_grant){ .fence = -1, .validity_ms = -1 };
		if (tally && tally->last_try_ns)
			atomic_store(tally->last_try_ns, lb_now_ns());
		if (tally && tally->on_try_begin)
			tally->on_try_begin(tally->arg);
		rc = strategy->acquire(self, grant);
		if (tally && tally->on_try_end)
			tally->on_try_end(tally->arg, rc);
		bool error = rc == LB_EREDIS || rc == LB_ENOREPLICA;
		info->attempts++;
		info->errors += error;
		if (tally && tally->attempts)
			atomic_fetch_add(tally->attempts, 1);
		if (tally && error && tally->errors)
			atomic_fetch_add(tally->errors, 1);
		info->last_status = rc;
		if (rc == 0 || rc == LB_EPROTO || rc == LB_EDIED)
			return rc; /* a broken or dead adapter: no point in trying again */
		int64_t delay = lb_wait_delay_ns(w, info->attempts + 1, rng);
		if (delay < 0)
			return rc;
		if (w->kind == LB_WAIT_NOTIFY && strategy->wait && rc == LB_EBUSY) {
			/* block for the holder's signal, never past the deadline */
			int64_t left = (deadline_ns - lb_now_ns()) / LB_NS_PER_MS;
			if (left <= 0)
				return LB_ETIMEOUT;
			if (cancel && atomic_load(cancel))
				return LB_ECANCELED;
			int64_t ms = delay / LB_NS_PER_MS;
			if (strategy->wait_ms)
				ms = strategy->wait_ms(self, ms);
			if (strategy->wait(self, ms < left ? ms : left) == 1)
				return 0; /* the wake carried the lock (fair) */
			continue;
		}
		if (lb_now_ns() + delay > deadline_ns)
			return LB_ETIMEOUT;
		/* sleep in slices so a stopping run is not held up by a long interval */
		for (int64_t until = lb_now_ns() + delay; lb_now_ns() < until;) {
			if (cancel && atomic_load(cancel))
				return LB_ECANCELED;
			int64_t left = until - lb_now_ns();
			lb_sleep_ns(left < 50 * LB_NS_PER_MS ? left : 50 * LB_NS_PER_MS);
		}
		if (cancel && atomic_load(cancel))
			return LB_ECANCELED;
	}
}

struct lb_wait lb_wait_own(const struct lock_strategy *s)
{
	if (lb_strategy_is_external(s))
		return (struct lb_wait){ .kind = LB_WAIT_LIBRARY };
	if (s->own_wait == LB_OWN_WAIT_NOTIFY)
		return (struct lb_wait){ .kind = LB_WAIT_NOTIFY, .interval_ms = 100 };
	return (struct lb_wait){ .kind = LB_WAIT_FIXED, .interval_ms = 10 };
}

bool lb_wait_in_library(const struct lb_wait *w, const struct lock_strategy *s)
{
	if (w->kind == LB_WAIT_OWN && s)
		return lb_wait_own(s).kind == LB_WAIT_LIBRARY;
	return w->kind == LB_WAIT_LIBRARY;
}
