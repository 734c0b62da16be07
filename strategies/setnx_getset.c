/*
 * setnx-getset - the expiry timestamp in the value, taken over with GETSET.
 *               (seed 002's GETSET; the old SETNX command page's locking pattern)
 *
 * Recipe:  acquire: expires = client_now_ms + ttl + 1
 *                   SETNX lock:<name> <expires>          -> 1: acquired
 *                   else GET lock:<name> -> cur; if cur < client_now_ms (expired):
 *                        GETSET lock:<name> <expires> -> old;
 *                        acquired iff old == cur (nobody beat us to it)
 *          release: DEL lock:<name>, but only if client_now_ms < expires
 * Claims:  mutual exclusion and no deadlock without any server-side TTL: a
 *          crashed holder's lock is taken over once its timestamp passes.
 * Fails:   it trusts every client's wall clock. A client whose clock runs ahead
 *          sees a live lock as expired and takes it over (`client-clock-skew`:
 *          overlap). The losing GETSET still overwrites the expiry, so the
 *          holder's recorded expiry is no longer its own, and a release after
 *          the holder's own expiry leaves a taken-over lock alone only by luck.
 *          A holder slower than the TTL overlaps the client that takes over and
 *          then DELs its lock (foreign release).
 * Note:    the value is "<expires>:<8 hex>"; the suffix (ignored when parsing,
 *          as atoll stops at ':') lets the harness see whose lock a DEL removed.
 *          The clock is the client's injectable lb_clock, so scenarios skew it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "plumbing.h"

struct setnx_getset {
	struct lb_lock_base base;
	int64_t expires_ms; /* the expiry we wrote at acquire */
};

static void *setnx_getset_create(const struct lb_lock_cfg *cfg)
{
	return lb_base_alloc(cfg, sizeof(struct setnx_getset));
}

static int setnx_getset_acquire(void *self, struct lb_grant *grant)
{
	struct setnx_getset *s = self;
	struct lb_lock_base *b = &s->base;
	struct lb_node *n = lb_base_node(b);
	char rnd[LB_TOKEN_HEX + 1];
	int64_t now = lb_clock_now_ms(b->cfg.clock);
	redisReply *r;
	int rc;

	(void)grant;
	if ((rc = lb_token_new(rnd)) < 0)
		return rc;
	s->expires_ms = now + b->cfg.ttl_ms + 1;
	snprintf(b->token, sizeof(b->token), "%lld:%.8s", (long long)s->expires_ms, rnd);
	rc = lb_setnx(n, b->key, b->token);
	if (rc != LB_EBUSY)
		return rc;
	r = lb_node_cmd(n, "GET %s", b->key);
	if (lb_reply_error(r)) {
		if (r)
			freeReplyObject(r);
		return LB_EREDIS;
	}
	if (r->type != REDIS_REPLY_STRING || atoll(r->str) >= now) {
		freeReplyObject(r); /* nil (just released) or still live */
		return LB_EBUSY;
	}
	lb_failpoint("between-get-getset");
	redisReply *old = lb_node_cmd(n, "GETSET %s %s", b->key, b->token);
	rc = LB_EREDIS;
	if (old && (old->type == REDIS_REPLY_STRING || old->type == REDIS_REPLY_NIL))
		rc = (old->type == REDIS_REPLY_NIL || lb_reply_str_eq(old, r->str)) ? 0 : LB_EBUSY;
	freeReplyObject(r);
	if (old)
		freeReplyObject(old);
	return rc;
}

static int setnx_getset_release(void *self)
{
	struct setnx_getset *s = self;
	struct lb_lock_base *b = &s->base;

	if (lb_clock_now_ms(b->cfg.clock) >= s->expires_ms)
		return LB_ELOST; /* expired by our clock: the recipe leaves it alone */
	return lb_getdel_release(lb_base_node(b), b->key, b->token);
}

static const char *const setnx_getset_failpoints[] = { "between-get-getset", NULL };

const struct lock_strategy lb_strategy_setnx_getset = {
	.name = "setnx-getset",
	.summary = "SETNX expiry timestamp from the client clock; take over with GETSET",
	.sends = "acquire: SETNX KEY expiry; if taken: GET KEY, and GETSET KEY expiry when the stored expiry has passed. release: GETDEL KEY while the client clock says the lease holds",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE,
	.min_nodes = 1,
	.failpoints = setnx_getset_failpoints,
	.create = setnx_getset_create,
	.acquire = setnx_getset_acquire,
	.release = setnx_getset_release,
	.destroy = lb_base_destroy,
};
