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
 * Note:    the seed loops forever on WatchError; we bound it at 100 tries.
 */
#include "plumbing.h"

#define RELEASE_TRIES 100

/* Send a command whose reply only needs to be "not an error"; 0 or LB_EREDIS. */
static int cmd_ok(struct lb_node *n, const char *cmd, const char *key)
{
	redisReply *r = key ? lb_node_cmd(n, "%s %s", cmd, key) : lb_node_cmd(n, "%s", cmd);
	int rc = lb_reply_error(r) ? LB_EREDIS : 0;

	if (r)
		freeReplyObject(r);
	return rc;
}

/* EXEC: 1 committed, 0 aborted by WATCH, LB_EREDIS. */
static int exec_outcome(struct lb_node *n)
{
	redisReply *r = lb_node_cmd(n, "EXEC");
	int rc = LB_EREDIS;

	if (r && r->type == REDIS_REPLY_ARRAY)
		rc = 1;
	else if (lb_reply_nil(r))
		rc = 0;
	if (r)
		freeReplyObject(r);
	return rc;
}

/* WATCH key; GET key. Sets *held (key exists) and *mine (holds our token). */
static int watch_get(struct lb_lock_base *b, bool *held, bool *mine)
{
	struct lb_node *n = lb_base_node(b);
	redisReply *r;

	if (cmd_ok(n, "WATCH", b->key) < 0)
		return LB_EREDIS;
	r = lb_node_cmd(n, "GET %s", b->key);
	if (lb_reply_error(r)) {
		if (r)
			freeReplyObject(r);
		return LB_EREDIS;
	}
	*held = !lb_reply_nil(r);
	*mine = lb_reply_str_eq(r, b->token);
	freeReplyObject(r);
	return 0;
}

static int watch_multi_acquire(void *self, struct lb_grant *grant)
{
	struct lb_lock_base *b = self;
	struct lb_node *n = lb_base_node(b);
	bool held, mine;
	redisReply *r;
	int rc;

	(void)grant;
	if ((rc = lb_token_new(b->token)) < 0 || (rc = watch_get(b, &held, &mine)) < 0)
		return rc;
	if (held)
		return cmd_ok(n, "UNWATCH", NULL) < 0 ? LB_EREDIS : LB_EBUSY;
	if (cmd_ok(n, "MULTI", NULL) < 0)
		return LB_EREDIS;
	r = lb_node_cmd(n, "SET %s %s PX %lld", b->key, b->token, (long long)b->cfg.ttl_ms);
	rc = lb_reply_error(r) ? LB_EREDIS : 0;
	if (r)
		freeReplyObject(r);
	if (rc < 0)
		return rc;
	rc = exec_outcome(n);
	return rc == 1 ? 0 : rc == 0 ? LB_EBUSY : LB_EREDIS;
}

static int watch_multi_release(void *self)
{
	struct lb_lock_base *b = self;
	struct lb_node *n = lb_base_node(b);
	bool held, mine;
	int rc;

	for (int i = 0; i < RELEASE_TRIES; i++) {
		if ((rc = watch_get(b, &held, &mine)) < 0)
			return rc;
		if (!mine)
			return cmd_ok(n, "UNWATCH", NULL) < 0 ? LB_EREDIS : LB_ELOST;
		if (cmd_ok(n, "MULTI", NULL) < 0 || cmd_ok(n, "DEL", b->key) < 0)
			return LB_EREDIS;
		rc = exec_outcome(n);
		if (rc != 0)
			return rc == 1 ? 0 : LB_EREDIS;
	}
	return LB_EREDIS;
}

const struct lock_strategy lb_strategy_watch_multi = {
	.name = "watch-multi",
	.summary = "optimistic WATCH/GET/MULTI/SET PX/EXEC; release WATCH/GET/MULTI/DEL/EXEC",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE | LB_CLAIM_OWNER_RELEASE,
	.min_nodes = 1,
	.create = lb_base_create,
	.acquire = watch_multi_acquire,
	.release = watch_multi_release,
	.destroy = lb_base_destroy,
};
