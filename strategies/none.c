/*
 * none - no lock at all.
 *
 * Recipe: nothing. acquire() always succeeds at once; release() does nothing.
 * Kept as a baseline, like SQLite's deliberately useless no-op mutex
 * (src/mutex_noop.c): it is what the harness's oracle must catch. Under any
 * contention it shows overlapping critical sections and lost updates; if the
 * oracle ever reports `none` as safe with several clients, the oracle is broken.
 */
#include "plumbing.h"

static int none_acquire(void *self, struct lb_grant *grant)
{
	(void)self, (void)grant;
	return 0;
}

static int none_release(void *self)
{
	(void)self;
	return 0;
}

const struct lock_strategy lb_strategy_none = {
	.name = "none",
	.summary = "no lock at all: the baseline the oracle must catch",
	.sends = "nothing: no lock",
	.claims = 0,
	.min_nodes = 1,
	.create = lb_base_create,
	.acquire = none_acquire,
	.release = none_release,
	.lease_end = lb_lease_never, /* no TTL */
	.destroy = lb_base_destroy,
};
