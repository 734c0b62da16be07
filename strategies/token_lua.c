/*
 * token-lua - SET NX PX with a random token, release by Lua compare-and-delete.
 *                                    (seeds 003 and 004; redis-py's Lock today)
 *
 * Recipe:  acquire: SET lock:<name> <16 random bytes, hex> NX PX <ttl>
 *          release: EVALSHA <sha> 1 lock:<name> <token>, with the script
 *                   if redis.call("get",KEYS[1]) == ARGV[1] then
 *                       return redis.call("del",KEYS[1]) else return 0 end
 *                   (EVAL on NOSCRIPT, after a restart)
 * Claims:  mutual exclusion, no deadlock, only the holder releases: the compare
 *          and the delete run atomically inside Redis.
 * Fails:   the token protects the lock, not the resource. A holder paused or
 *          slow past its TTL still believes it holds the lock while another
 *          client holds it too: overlapping critical sections and lost updates
 *          (`holder-pause`, `slow-holder`), though no foreign release and no
 *          cascade. A single node that restarts without persistence forgets the
 *          lock (`server-restart`), and a failover can lose it (`failover`).
 *          Only fencing tokens protect the resource.
 */
#include "plumbing.h"

static int token_lua_acquire(void *self, struct lb_grant *grant)
{
	struct lb_lock_base *b = self;
	int rc = lb_token_new(b->token);

	(void)grant;
	return rc < 0 ? rc : lb_set_nx_px(lb_base_node(b), b->key, b->token, b->cfg.ttl_ms);
}

static int token_lua_release(void *self)
{
	struct lb_lock_base *b = self;

	if (b->cfg.notify)
		return lb_cad_release_notify(lb_base_node(b), b->key, b->token, b->cfg.ttl_ms);
	return lb_cad_release(lb_base_node(b), b->key, b->token);
}

/* Wait policy notify: BLPOP on the lock's signal list, which the release
 * pushes to in the same Lua call that deletes the lock. */
static int token_lua_wait(void *self, int64_t timeout_ms)
{
	struct lb_lock_base *b = self;
	return lb_notify_wait(lb_base_node(b), b->key, timeout_ms);
}

const struct lock_strategy lb_strategy_token_lua = {
	.name = "token-lua",
	.summary = "SET NX PX random token; release Lua compare-and-delete",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE | LB_CLAIM_OWNER_RELEASE,
	.min_nodes = 1,
	.create = lb_base_create,
	.acquire = token_lua_acquire,
	.release = token_lua_release,
	.wait = token_lua_wait,
	.destroy = lb_base_destroy,
};
