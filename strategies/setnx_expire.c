/*
 * setnx-expire - SETNX, then EXPIRE as a second command.
 *                                    (seed 001, acquire_lock_with_timeout)
 *
 * Recipe:  acquire: SETNX lock:<name> <uuid>; if 1: EXPIRE lock:<name> ceil(ttl s)
 *                   if 0: TTL lock:<name>; if the key has no TTL (-1), EXPIRE it
 *                   again (the seed re-arms a TTL it finds missing)
 *          release: DEL lock:<name>                      (seed: release without check)
 * Claims:  mutual exclusion, and no deadlock thanks to the TTL.
 * Fails:   - two commands are not atomic: a holder killed between SETNX and
 *            EXPIRE (failpoint `after-setnx`) leaves a key with no TTL. Only a
 *            waiter that happens to poll and re-arm it saves the lock
 *            (`crash-before-expire`).
 *          - TTLs are whole seconds (ceil), as in the seed.
 *          - a holder slower than the TTL loses the lock to another client and
 *            then DELs that client's lock (`slow-holder`, `holder-pause`:
 *            foreign release, then a cascade of overlaps).
 * Note:    the seed's literal test is `elif conn.ttl(lockname):`, which in
 *          redis-py 3+ is true for every TTL but 0 (-1, -2 and positive values),
 *          so waiters would keep extending a live holder's lock. We implement
 *          what the seed's prose and the issue describe: re-arm a missing TTL.
 *          The value is a per-acquire token so the harness can see whose lock
 *          the DEL removed (GETDEL); the release stays unconditional.
 */
#include "failpoint.h"
#include "plumbing.h"

static int64_t ttl_seconds(int64_t ttl_ms)
{
	return (ttl_ms + 999) / 1000; /* math.ceil, as the seed */
}

static int setnx_expire_acquire(void *self, struct lb_grant *grant)
{
	struct lb_lock_base *b = self;
	struct lb_node *n = lb_base_node(b);
	redisReply *r;
	long long ttl;
	int rc = lb_token_new(b->token);

	(void)grant;
	if (rc < 0)
		return rc;
	rc = lb_setnx(n, b->key, b->token);
	if (rc == 0) {
		lb_failpoint("after-setnx");
		r = lb_node_cmd(n, "EXPIRE %s %lld", b->key, (long long)ttl_seconds(b->cfg.ttl_ms));
		if (r)
			freeReplyObject(r);
		/* The lock is ours even if EXPIRE failed: that is the pitfall. */
		return 0;
	}
	if (rc != LB_EBUSY)
		return rc;
	r = lb_node_cmd(n, "TTL %s", b->key);
	if (lb_reply_int(r, &ttl) && ttl == -1) {
		freeReplyObject(r);
		r = lb_node_cmd(n, "EXPIRE %s %lld", b->key, (long long)ttl_seconds(b->cfg.ttl_ms));
	}
	if (r)
		freeReplyObject(r);
	return LB_EBUSY;
}

static int setnx_expire_release(void *self)
{
	struct lb_lock_base *b = self;
	return lb_getdel_release(lb_base_node(b), b->key, b->token);
}

static const char *const setnx_expire_failpoints[] = { "after-setnx", NULL };

const struct lock_strategy lb_strategy_setnx_expire = {
	.name = "setnx-expire",
	.summary = "SETNX then EXPIRE as two commands; release DEL",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE,
	.min_nodes = 1,
	.failpoints = setnx_expire_failpoints,
	.create = lb_base_create,
	.acquire = setnx_expire_acquire,
	.release = setnx_expire_release,
	.destroy = lb_base_destroy,
};
