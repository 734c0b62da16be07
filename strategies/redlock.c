/*
 * redlock - the Redlock algorithm over N independent nodes (5 by default).
 *                          (seed 004; the Redis distlock page; redsync, node-redlock)
 *
 * Recipe:  acquire: t0 = monotonic now; send SET lock:<name> <token> NX PX <ttl>
 *                   to ALL nodes before reading any reply (one round trip, not
 *                   N; failpoint `after-send` sits between sending and reading);
 *                   collect replies under a short per-node timeout;
 *                   validity = ttl - (now - t0) - (ttl/100 + 2 ms) (clock drift);
 *                   acquired iff at least N/2+1 nodes said OK and validity > 0
 *                   (--no-validity-check drops the second condition: the naive
 *                   variant that `redlock-pause-naive` breaks);
 *                   otherwise compare-and-delete on every node and fail.
 *          release: Lua compare-and-delete on every node (fan-out).
 * Claims:  mutual exclusion, no deadlock, fault tolerance while a majority of
 *          nodes is up (`redlock-minority-down` is safe; `redlock-majority-down`
 *          is unavailable, not unsafe), only the holder releases.
 * Fails:   its safety rests on timing assumptions (Kleppmann 2016):
 *          - a node that restarts without persistence forgets its vote, so a
 *            holder of {1,2,3} and a newcomer of {3,4,5} both hold the lock
 *            (`redlock-node-restart`);
 *          - a node whose clock jumps forward expires the key early, with the
 *            same result (`redlock-clock-jump`);
 *          - a client paused past its TTL overlaps the next holder like any TTL
 *            lock; the validity check only catches pauses *during* acquire
 *            (`redlock-pause-during-acquire`).
 */
#include <stdlib.h>

#include "plumbing.h"

#define REDLOCK_MAX_NODES 16

/* Per-node reply timeout: small next to the TTL (the distlock page suggests
 * 5-50 ms for a 10 s TTL) but well above loopback scheduling noise. */
static int64_t node_timeout_ms(int64_t ttl_ms)
{
	int64_t t = ttl_ms / 20;
	return t < 10 ? 10 : t > 200 ? 200 : t;
}

/* Count replies that satisfy @pred (OK for SET, 1 for the delete script). */
/* How many replies said yes (OK, or 1); @mask (may be NULL) gets which. */
static size_t count_and_free(redisReply **replies, size_t n, bool want_ok, uint32_t *mask)
{
	size_t yes = 0;
	long long v;

	for (size_t i = 0; i < n; i++) {
		if (want_ok ? lb_reply_ok(replies[i])
			    : (lb_reply_int(replies[i], &v) && v == 1)) {
			yes++;
			if (mask)
				*mask |= UINT32_C(1) << i;
		}
		if (replies[i])
			freeReplyObject(replies[i]);
	}
	return yes;
}

static size_t count_answered(redisReply **replies, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += !lb_reply_error(replies[i]);
	return k;
}

static size_t unlock_all(struct lb_lock_base *b)
{
	redisReply *replies[REDLOCK_MAX_NODES];
	const char *kv[2] = { b->key, b->token };
	size_t n = b->cfg.n_nodes;

	lb_fanout_eval(b->cfg.nodes, n, node_timeout_ms(b->cfg.ttl_ms), NULL, &lb_script_cad,
		       1, 1, kv, replies);
	return count_and_free(replies, n, false, NULL);
}

static void *redlock_create(const struct lb_lock_cfg *cfg)
{
	if (cfg->n_nodes > REDLOCK_MAX_NODES)
		return NULL;
	return lb_base_create(cfg);
}

static int redlock_acquire(void *self, struct lb_grant *grant)
{
	struct lb_lock_base *b = self;
	redisReply *replies[REDLOCK_MAX_NODES];
	size_t n = b->cfg.n_nodes, quorum = n / 2 + 1, ok, answered;
	int64_t ttl = b->cfg.ttl_ms, t0, elapsed_ms, validity;
	char px[24];
	int rc = lb_token_new(b->token);

	if (rc < 0)
		return rc;
	snprintf(px, sizeof(px), "%lld", (long long)ttl);
	const char *argv[] = { "SET", b->key, b->token, "NX", "PX", px };
	t0 = lb_now_ns();
	lb_fanout(b->cfg.nodes, n, node_timeout_ms(ttl), "after-send", 6, argv, replies);
	answered = count_answered(replies, n);
	uint32_t held = 0;
	ok = count_and_free(replies, n, true, &held);
	elapsed_ms = (lb_now_ns() - t0) / LB_NS_PER_MS;
	validity = ttl - elapsed_ms - (ttl / 100 + 2);
	/* --no-validity-check: the naive variant that trusts five OKs however late */
	if (ok >= quorum && (validity > 0 || b->cfg.no_validity_check)) {
		grant->validity_ms = validity;
		grant->nodes = held; /* which nodes: what Kleppmann's case turns on */
		return 0;
	}
	unlock_all(b);
	if (ok >= quorum)
		return LB_EVALIDITY;
	return answered >= quorum ? LB_EBUSY : LB_EREDIS;
}

static int redlock_release(void *self)
{
	struct lb_lock_base *b = self;
	size_t n = b->cfg.n_nodes;
	size_t deleted = unlock_all(b);

	return deleted >= n / 2 + 1 ? 0 : LB_ELOST;
}

static const char *const redlock_failpoints[] = { "after-send", NULL };

const struct lock_strategy lb_strategy_redlock = {
	.name = "redlock",
	.summary = "Redlock: SET NX PX on N nodes in one round trip, quorum N/2+1, validity check",
	.sends = "on every node: acquire: SET KEY token NX PX ttl; release (and a failed acquire): EVALSHA compare-and-delete on KEY",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE | LB_CLAIM_FAULT_TOLERANT |
		  LB_CLAIM_OWNER_RELEASE,
	.min_nodes = 5,
	.failpoints = redlock_failpoints,
	.create = redlock_create,
	.acquire = redlock_acquire,
	.release = redlock_release,
	.destroy = lb_base_destroy,
};
