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
 * Notify:  with the wait policy notify, the release does not free the lock:
 *          it reserves it ("handoff", 100 ms at most) and wakes one blocked
 *          waiter (BLPOP, oldest first), which claims it; a releaser coming
 *          straight back finds it taken and queues. A woken waiter that dies
 *          leaves the reservation to expire, then the fallback poll recovers.
 */
#include "plumbing.h"

struct token_lua {
	struct lb_lock_base base;
	bool woken; /* notify: the last wait took a release's signal */
};

static void *token_lua_create(const struct lb_lock_cfg *cfg)
{
	return lb_base_alloc(cfg, sizeof(struct token_lua));
}

static int token_lua_acquire(void *self, struct lb_grant *grant)
{
	struct token_lua *t = self;
	struct lb_lock_base *b = &t->base;
	int rc = lb_token_new(b->token);

	(void)grant;
	if (rc < 0)
		return rc;
	if (t->woken) { /* the release reserved the lock for us */
		t->woken = false;
		return lb_claim(lb_base_node(b), b->key, b->token, b->cfg.ttl_ms);
	}
	return lb_set_nx_px(lb_base_node(b), b->key, b->token, b->cfg.ttl_ms);
}

static int token_lua_release(void *self)
{
	struct lb_lock_base *b = self;

	if (b->cfg.notify)
		return lb_cad_release_notify(lb_base_node(b), b->key, b->token, b->cfg.ttl_ms);
	return lb_cad_release(lb_base_node(b), b->key, b->token);
}

/* Wait policy notify: BLPOP on the lock's signal list, which the release
 * pushes to in the same Lua call that reserves the lock for the waiter it
 * wakes. BLPOP serves the longest-blocked client first: a fair hand-off. */
static int token_lua_wait(void *self, int64_t timeout_ms)
{
	struct token_lua *t = self;
	int rc = lb_notify_wait(lb_base_node(&t->base), t->base.key, timeout_ms);

	t->woken = rc == 0;
	return rc;
}

const struct lock_strategy lb_strategy_token_lua = {
	.name = "token-lua",
	.summary = "SET NX PX random token; release Lua compare-and-delete",
	.sends = "acquire: SET KEY token NX PX ttl. release: EVALSHA compare-and-delete on KEY (EVAL on NOSCRIPT); wait notify: EVALSHA claim, BLPOP KEY:w",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE | LB_CLAIM_OWNER_RELEASE,
	.min_nodes = 1,
	.create = token_lua_create,
	.acquire = token_lua_acquire,
	.release = token_lua_release,
	.wait = token_lua_wait,
	.destroy = lb_base_destroy,
};
