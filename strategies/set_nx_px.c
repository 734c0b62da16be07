/*
 * set-nx-px - SET key value NX PX ttl, release plain DEL.
 *                                              (seed 000, class AutoReleaseLock)
 *
 * Recipe:  acquire: SET lock:<name> VALUE_OF_LOCK NX PX <ttl>
 *          release: DEL lock:<name>
 * Claims:  mutual exclusion; no deadlock (atomic TTL, unlike setnx-expire).
 * Fails:   the release does not check ownership. A holder that outlives its TTL
 *          (paused, slow, swapping: `holder-pause`, `slow-holder`) has its lock
 *          taken by a second client, then DELs the second client's lock, letting
 *          a third in beside the second: a cascade of foreign releases and
 *          overlapping critical sections.
 * Note:    the seed stores the constant "VALUE_OF_LOCK"; we store a per-acquire
 *          token so the harness can see whose lock the DEL removed (GETDEL).
 *          The release stays an unconditional delete, as in the seed.
 */
#include "plumbing.h"

static int set_nx_px_acquire(void *self, struct lb_grant *grant)
{
	struct lb_lock_base *b = self;
	int rc = lb_token_new(b->token);

	(void)grant;
	return rc < 0 ? rc : lb_set_nx_px(lb_base_node(b), b->key, b->token, b->cfg.ttl_ms);
}

static int set_nx_px_release(void *self)
{
	struct lb_lock_base *b = self;
	return lb_getdel_release(lb_base_node(b), b->key, b->token);
}

const struct lock_strategy lb_strategy_set_nx_px = {
	.name = "set-nx-px",
	.summary = "SET NX PX, release plain DEL: a late holder deletes the next one's lock",
	.sends = "acquire: SET KEY token NX PX ttl. release: GETDEL KEY",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE,
	.min_nodes = 1,
	.create = lb_base_create,
	.acquire = set_nx_px_acquire,
	.release = set_nx_px_release,
	.destroy = lb_base_destroy,
};
