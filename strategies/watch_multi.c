/*
 * watch-multi - optimistic locking with WATCH/MULTI/EXEC.   (seed 001, release_lock)
 *
 * Recipe:  acquire: WATCH lock:<name>; GET lock:<name>; if set: UNWATCH, busy;
 *                   else MULTI; SET lock:<name> <uuid> PX <ttl>; EXEC
 *                   (a nil EXEC means another client touched the key: busy)
 *          release: WATCH lock:<name>; GET lock:<name>; if it is our <uuid>:
 *                   MULTI; DEL lock:<name>; EXEC, retrying when EXEC is nil
 *                   (the seed retries on WatchError); else UNWATCH.
 * Claims:  mutual exclusion, no deadlock, only the holder releases: EXEC fails
 *          if the key changed after WATCH, so the compare and the delete act
 *          on the same version of the key.
 * Fails:   like every single-node TTL lock: a holder past its TTL overlaps the
 *          next holder (`holder-pause`, `slow-holder`), a node restart forgets
 *          the lock (`server-restart`). Under contention it costs more round
 *          trips than SET NX (5 per attempt) and every EXEC race is a retry:
 *          "a large number of conflicts" as the seed itself warns.
 * Note:    the release is seed 001's release_lock, as written (plumbing.c,
 *          lb_watch_release); the seed loops forever on WatchError, we stop
 *          after 100 tries. The acquire is not from the seed, which says WATCH
 *          can stand in for a lock but shows no acquire with it: this one is
 *          the optimistic check-then-set the seed's prose describes.
 */
#include "plumbing.h"

static int watch_multi_acquire(void *self, struct lb_grant *grant)
{
	struct lb_lock_base *b = self;
	struct lb_node *n = lb_base_node(b);
	char px[24];
	bool held, mine;
	int rc;

	(void)grant;
	if ((rc = lb_token_new(b->token)) < 0 || (rc = lb_watch_get(n, b->key, NULL, &held, &mine)) < 0)
		return rc;
	if (held) {
		redisReply *r = lb_node_cmd(n, "UNWATCH");
		rc = lb_reply_error(r) ? LB_EREDIS : LB_EBUSY;
		if (r)
			freeReplyObject(r);
		return rc;
	}
	snprintf(px, sizeof(px), "%lld", (long long)b->cfg.ttl_ms);
	const char *set[] = { "SET", b->key, b->token, "PX", px };
	rc = lb_multi_exec(n, 5, set);
	return rc == 1 ? 0 : rc == 0 ? LB_EBUSY : LB_EREDIS;
}

static int watch_multi_release(void *self)
{
	struct lb_lock_base *b = self;
	return lb_watch_release(lb_base_node(b), b->key, b->token);
}

const struct lock_strategy lb_strategy_watch_multi = {
	.name = "watch-multi",
	.summary = "optimistic WATCH/GET/MULTI/SET PX/EXEC; release WATCH/GET/MULTI/DEL/EXEC",
	.sends = "acquire: WATCH KEY, GET KEY, then MULTI, SET KEY token PX ttl, EXEC (or UNWATCH). release: WATCH KEY, GET KEY, MULTI, DEL KEY, EXEC (or UNWATCH)",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE | LB_CLAIM_OWNER_RELEASE,
	.min_nodes = 1,
	.create = lb_base_create,
	.acquire = watch_multi_acquire,
	.release = watch_multi_release,
	.destroy = lb_base_destroy,
};
