/*
 * setnx - SETNX key value, release DEL. No TTL.            (seed 000, class Lock)
 *
 * Recipe:  acquire: SETNX lock:<name> <value>    -> 1 acquired, 0 busy
 *          release: DEL lock:<name>
 * Claims:  mutual exclusion while every holder lives and releases.
 * Fails:   a holder that crashes (or is killed, or loses its connection for
 *          good) never releases, and the key has no TTL: the lock is held
 *          forever (`holder-crash` scenario: deadlock). The release is a plain
 *          DEL, so any client, holder or not, can release it.
 * Note:    seed 000 stores the constant "VALUE_OF_LOCK". We store a per-acquire
 *          token instead so that the harness can observe whose lock a DEL
 *          removed; the release still deletes unconditionally (GETDEL is DEL
 *          that also returns what it deleted), so the behaviour is the seed's.
 */
#include "plumbing.h"

static int setnx_acquire(void *self, struct lb_grant *grant)
{
	struct lb_lock_base *b = self;
	int rc = lb_token_new(b->token);

	(void)grant;
	return rc < 0 ? rc : lb_setnx(lb_base_node(b), b->key, b->token);
}

static int setnx_release(void *self)
{
	struct lb_lock_base *b = self;
	return lb_getdel_release(lb_base_node(b), b->key, b->token);
}

const struct lock_strategy lb_strategy_setnx = {
	.name = "setnx",
	.summary = "SETNX, release DEL, no TTL: a crashed holder's lock is never freed",
	.sends = "acquire: SETNX KEY token. release: GETDEL KEY (a DEL that returns what it deleted)",
	.claims = LB_CLAIM_MUTEX,
	.min_nodes = 1,
	.create = lb_base_create,
	.acquire = setnx_acquire,
	.release = setnx_release,
	.lease_end = lb_lease_never, /* no TTL */
	.destroy = lb_base_destroy,
};
