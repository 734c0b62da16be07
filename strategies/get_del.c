/*
 * get-del - SET NX PX with a unique value; release by GET, compare, then DEL
 *           as two separate commands.                     (seed 002, class Lock)
 *
 * Recipe:  acquire: SET lock:<name> <uuid> NX PX <ttl>
 *          release: GET lock:<name>; if it equals <uuid>: DEL lock:<name>
 * Claims:  mutual exclusion, no deadlock, and that only the holder releases
 *          ("only unlock myself lock", as the seed's comment says).
 * Fails:   check-then-act is not atomic. Between the GET and the DEL (failpoint
 *          `between-get-del`) the lock can expire and be taken by another
 *          client; the DEL then removes that client's lock and a third client
 *          gets in beside it (`check-then-delete`: foreign release, overlap).
 *          Like every TTL lock, a holder slower than the TTL overlaps the next.
 * Note:    the seed uses EX in seconds; we use PX so sub-second TTLs work.
 *          The DEL is a GETDEL so the harness can see whose lock it removed.
 */
#include "plumbing.h"

static int get_del_acquire(void *self, struct lb_grant *grant)
{
	struct lb_lock_base *b = self;
	int rc = lb_token_new(b->token);

	(void)grant;
	return rc < 0 ? rc : lb_set_nx_px(lb_base_node(b), b->key, b->token, b->cfg.ttl_ms);
}

static int get_del_release(void *self)
{
	struct lb_lock_base *b = self;
	struct lb_node *n = lb_base_node(b);
	redisReply *r = lb_node_cmd(n, "GET %s", b->key);
	bool mine = lb_reply_str_eq(r, b->token);
	bool failed = lb_reply_error(r);

	if (r)
		freeReplyObject(r);
	if (failed)
		return LB_EREDIS;
	if (!mine)
		return LB_ELOST;
	lb_failpoint("between-get-del");
	return lb_getdel_release(n, b->key, b->token);
}

static const char *const get_del_failpoints[] = { "between-get-del", NULL };

const struct lock_strategy lb_strategy_get_del = {
	.name = "get-del",
	.summary = "SET NX PX unique value; release GET, compare, DEL as two commands",
	.sends = "acquire: SET KEY token NX PX ttl. release: GET KEY, then GETDEL KEY if it held the token",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE | LB_CLAIM_OWNER_RELEASE,
	.min_nodes = 1,
	.failpoints = get_del_failpoints,
	.create = lb_base_create,
	.acquire = get_del_acquire,
	.release = get_del_release,
	.destroy = lb_base_destroy,
};
