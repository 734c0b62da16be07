/*
 * fenced - token-lua plus a fencing token.
 *              (Kleppmann, "How to do distributed locking", 2016: fencing tokens)
 *
 * Recipe:  acquire: one Lua call on the lock node:
 *                   if SET lock:<name> <token> NX PX <ttl> then
 *                       return INCR lock:<name>:fence  -- the fence
 *                   else return 0 end
 *          release: Lua compare-and-delete, as token-lua.
 *          The fence goes to the critical section with the grant. The
 *          protected resource accepts a read or a write only through a Lua
 *          check-and-set that refuses a fence below the highest it has
 *          accepted (plumbing.h, lb_fenced_read/lb_fenced_write), and the
 *          harness counts every refusal (`stale_writes_rejected`).
 * Claims:  those of token-lua; the lock still lapses under a pause or a slow
 *          holder, but a stale holder's write is refused by the resource, so
 *          sections may overlap without losing an update (`contained`).
 * Fails:   only a resource that checks fences is protected. A fence counter
 *          that restarts empty issues fences below the highest the resource
 *          has seen, and every write is refused until they catch up
 *          (`fence-reset`). A read that does not register its fence would let
 *          an older read-modify-write land after a newer read: so reads are
 *          fenced too (docs/strategies/fenced.md).
 */
#include <stdio.h>

#include "plumbing.h"

struct fenced {
	struct lb_lock_base base;
	char fence_key[160];
};

static void *fenced_create(const struct lb_lock_cfg *cfg)
{
	struct fenced *f = lb_base_alloc(cfg, sizeof(struct fenced));

	if (f)
		snprintf(f->fence_key, sizeof(f->fence_key), "%.150s:fence", f->base.key);
	return f;
}

static int fenced_acquire(void *self, struct lb_grant *grant)
{
	struct fenced *f = self;
	struct lb_lock_base *b = &f->base;
	int rc = lb_token_new(b->token);

	if (rc < 0)
		return rc;
	return lb_fence_acquire(lb_base_node(b), b->key, f->fence_key, b->token, b->cfg.ttl_ms,
				&grant->fence);
}

const struct lock_strategy lb_strategy_fenced = {
	.name = "fenced",
	.summary = "token-lua plus a fencing token (INCR) the resource checks on every write",
	.sends = "acquire: EVALSHA of SET KEY token NX PX ttl and INCR KEY:fence. release: EVALSHA compare-and-delete on KEY. The resource: EVALSHA of the fenced read and write (counter keys)",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE | LB_CLAIM_OWNER_RELEASE,
	.min_nodes = 1,
	.create = fenced_create,
	.acquire = fenced_acquire,
	.release = lb_base_cad_release,
	.destroy = lb_base_destroy,
};
