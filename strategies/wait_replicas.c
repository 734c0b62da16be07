/*
 * wait-replicas - token-lua on a primary with a replica, confirmed by WAIT.
 *          (Redisson's RedLock deprecation note and its WAIT-based RedissonLock;
 *           the Redis WAIT command page: "does not make Redis a strongly
 *           consistent store")
 *
 * Recipe:  acquire: SET lock:<name> <token> NX PX <ttl>, then on the same
 *                   connection WAIT 1 <timeout>; zero acknowledgements means the
 *                   lock is not held: compare-and-delete it and fail the attempt
 *                   (LB_ENOREPLICA, counted as a failed attempt).
 *          release: Lua compare-and-delete, as token-lua.
 * Claims:  those of token-lua, and a lock that survives a failover: the
 *          replica had it before the holder entered.
 * Fails:   WAIT is not consensus. It proves the write reached a replica's
 *          memory, not that the replica will be the one promoted, nor that it
 *          keeps the write across its own restart. While replication is cut
 *          every acquire fails (`failover`: unavailable rather than unsafe),
 *          and all of token-lua's timing failures remain (`holder-pause`).
 */
#include <stdio.h>

#include "plumbing.h"

/* How long WAIT may block for one acknowledgement: short next to the lease. */
static int64_t wait_timeout_ms(int64_t ttl_ms)
{
	int64_t t = ttl_ms / 10;
	return t < 10 ? 10 : t > 100 ? 100 : t;
}

static int wait_replicas_acquire(void *self, struct lb_grant *grant)
{
	struct lb_lock_base *b = self;
	struct lb_node *n = lb_base_node(b);
	long long acks = 0;
	int rc = lb_token_new(b->token);

	(void)grant;
	if (rc < 0 || (rc = lb_set_nx_px(n, b->key, b->token, b->cfg.ttl_ms)) < 0)
		return rc;
	redisReply *r = lb_node_cmd(n, "WAIT 1 %lld", (long long)wait_timeout_ms(b->cfg.ttl_ms));
	bool answered = lb_reply_int(r, &acks);
	if (r)
		freeReplyObject(r);
	if (answered && acks >= 1)
		return 0;
	lb_cad_release(n, b->key, b->token); /* not replicated: not ours to keep */
	return answered ? LB_ENOREPLICA : LB_EREDIS;
}

const struct lock_strategy lb_strategy_wait_replicas = {
	.name = "wait-replicas",
	.summary = "token-lua on a primary, held only once WAIT 1 saw a replica acknowledge",
	.sends = "acquire: SET KEY token NX PX ttl, then WAIT 1 timeout. release: EVALSHA compare-and-delete on KEY",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE | LB_CLAIM_OWNER_RELEASE,
	.min_nodes = 1,
	.create = lb_base_create,
	.acquire = wait_replicas_acquire,
	.release = lb_base_cad_release,
	.destroy = lb_base_destroy,
	.needs_replica = true,
};
