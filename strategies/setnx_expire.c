/*
 * setnx-expire - SETNX, then EXPIRE as a second command.
 *                      (seed 001, acquire_lock_with_timeout and release_lock)
 * setnx-expire-as-written - the same, with the seed's TTL test as written.
 * setnx-then-expire - SETNX, then EXPIRE, and nothing else; release DEL.
 *                      (the pitfall as it is usually written)
 *
 * Recipe:  acquire: SETNX lock:<name> <uuid>; if 1: EXPIRE lock:<name> ceil(ttl s)
 *                   if 0: TTL lock:<name>, and EXPIRE it again when
 *                     setnx-expire:            the key has no TTL (-1)
 *                     setnx-expire-as-written: `elif conn.ttl(lockname):`,
 *                       true for every reply but 0 (-1, -2 and any TTL of
 *                       half a second or more): every waiter re-arms the
 *                       TTL of whatever lock exists
 *                     setnx-then-expire:       never (it sends no TTL)
 *          release: seed 001's release_lock: WATCH lock:<name>; GET; if it is
 *                   our <uuid>: MULTI; DEL; EXEC (again on WatchError); else
 *                   UNWATCH and leave it (plumbing.c, lb_watch_release);
 *                   setnx-then-expire: DEL lock:<name> (as GETDEL, to see
 *                   whose lock it removed), no owner check
 * Claims:  mutual exclusion, no deadlock thanks to the TTL, only the holder
 *          releases.
 * Fails:   - two commands are not atomic: a holder killed between SETNX and
 *            EXPIRE (failpoint `after-setnx`) leaves a key with no TTL. Only a
 *            waiter that polls and re-arms it saves the lock
 *            (`crash-before-expire`).
 *          - TTLs are whole seconds (ceil), as in the seed.
 *          - a holder slower than the TTL loses the lock to another client:
 *            both are inside (`slow-holder`, `holder-pause`: overlap). The
 *            owner-checked release leaves the new holder's lock alone.
 *          - as written: while anyone waits, no lock ever expires. A holder
 *            that crashed keeps its lock for as long as others poll for it
 *            (`holder-crash`: deadlock), which also saves a paused holder from
 *            losing it (`holder-pause`: safe). The TTL only works when nobody
 *            is waiting, the one time it is not needed.
 *          - then-expire: nobody ever re-arms the key a crash left without a
 *            TTL, so it is held forever, however many wait for it
 *            (`crash-before-expire`: deadlock). Its plain DEL release
 *            deletes whatever lock is there: a holder that outlived its TTL
 *            releases the next holder's lock (`holder-pause`).
 * Note:    the seed's redis-py returns TTL as an integer (-2 missing, -1 no
 *          TTL, else seconds rounded), so the literal test is
 *          `ttl != 0`. setnx-expire reads it as the seed's prose means it
 *          (re-arm a missing TTL); people copy the code, so the literal line
 *          runs as its own strategy beside it. The value is a per-acquire
 *          token, as the seed's uuid4.
 */
#include "plumbing.h"

/* The key's expiry is known to the holder only when nobody else moves it:
 * setnx-expire's waiters re-arm only a missing TTL, so the holder's lease
 * is its own EXPIRE's; the seed as written lets every waiter push it on. */
struct setnx_expire {
	struct lb_lock_base base;
	int64_t lease_end_ns;       /* after its EXPIRE returned: no earlier than the key's end */
};

static void *setnx_expire_create(const struct lb_lock_cfg *cfg)
{
	return lb_base_alloc(cfg, sizeof(struct setnx_expire));
}

static int64_t ttl_seconds(int64_t ttl_ms)
{
	return (ttl_ms + 999) / 1000; /* math.ceil, as the seed */
}

static int expire(struct lb_node *n, const struct lb_lock_base *b)
{
	redisReply *r = lb_node_cmd(n, "EXPIRE %s %lld", b->key, (long long)ttl_seconds(b->cfg.ttl_ms));
	int rc = lb_reply_error(r) ? LB_EREDIS : 0;

	if (r)
		freeReplyObject(r);
	return rc;
}

/* What a waiter does with the TTL of the lock it found taken. */
enum rearm {
	REARM_NEVER,    /* setnx-then-expire: nothing */
	REARM_MISSING,  /* setnx-expire: EXPIRE when TTL answers -1 */
	REARM_ANY,      /* as written: EXPIRE for any TTL reply but 0 */
};

/* One pass of the seed's loop body, its waiters' TTL test as @mode says. */
static int acquire_once(struct lb_lock_base *b, enum rearm mode)
{
	struct lb_node *n = lb_base_node(b);
	long long ttl;
	int rc = lb_token_new(b->token);

	if (rc < 0)
		return rc;
	rc = lb_setnx(n, b->key, b->token);
	if (rc == 0) {
		lb_failpoint("after-setnx");
		/* the lock is ours even if EXPIRE failed: that is the pitfall */
		((struct setnx_expire *)b)->lease_end_ns = expire(n, b) < 0 ? LB_LEASE_NEVER :
			lb_now_ns() + ttl_seconds(b->cfg.ttl_ms) * LB_NS_PER_S;
		return 0;
	}
	if (rc != LB_EBUSY || mode == REARM_NEVER)
		return rc;
	redisReply *r = lb_node_cmd(n, "TTL %s", b->key);
	bool rearm = lb_reply_int(r, &ttl) && (mode == REARM_ANY ? ttl != 0 : ttl == -1);
	if (r)
		freeReplyObject(r);
	if (rearm)
		expire(n, b);
	return LB_EBUSY;
}

static int setnx_expire_acquire(void *self, struct lb_grant *grant)
{
	(void)grant;
	return acquire_once(self, REARM_MISSING);
}

static int as_written_acquire(void *self, struct lb_grant *grant)
{
	(void)grant;
	return acquire_once(self, REARM_ANY);
}

static int then_expire_acquire(void *self, struct lb_grant *grant)
{
	(void)grant;
	return acquire_once(self, REARM_NEVER);
}

static int64_t setnx_expire_lease_end(void *self)
{
	return ((const struct setnx_expire *)self)->lease_end_ns;
}

static int setnx_expire_release(void *self)
{
	struct lb_lock_base *b = self;
	return lb_watch_release(lb_base_node(b), b->key, b->token);
}

static int then_expire_release(void *self)
{
	struct lb_lock_base *b = self;
	return lb_getdel_release(lb_base_node(b), b->key, b->token);
}

static const char *const setnx_expire_failpoints[] = { "after-setnx", NULL };

const struct lock_strategy lb_strategy_setnx_expire = {
	.name = "setnx-expire",
	.summary = "SETNX then EXPIRE as two commands; release WATCH/GET/MULTI/DEL (seed 001)",
	.sends = "acquire: SETNX KEY token, then EXPIRE KEY ceil(ttl s); if taken: TTL KEY, and EXPIRE KEY when it has none. release: WATCH KEY, GET KEY, MULTI, DEL KEY, EXEC (or UNWATCH)",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE | LB_CLAIM_OWNER_RELEASE,
	.min_nodes = 1,
	.failpoints = setnx_expire_failpoints,
	.create = setnx_expire_create,
	.acquire = setnx_expire_acquire,
	.release = setnx_expire_release,
	.lease_end = setnx_expire_lease_end,
	.destroy = lb_base_destroy,
};

/* Seed 001 as written: a variant of one line, so it shares this file. */
const struct lock_strategy lb_strategy_setnx_expire_as_written = {
	.name = "setnx-expire-as-written",
	.summary = "seed 001 verbatim: every waiter re-arms the TTL (`elif conn.ttl(lockname)`)",
	.sends = "acquire: SETNX KEY token, then EXPIRE KEY ceil(ttl s); if taken: TTL KEY, and EXPIRE KEY for any reply but 0. release: WATCH KEY, GET KEY, MULTI, DEL KEY, EXEC (or UNWATCH)",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE | LB_CLAIM_OWNER_RELEASE,
	.min_nodes = 1,
	.failpoints = setnx_expire_failpoints,
	.create = setnx_expire_create,
	.acquire = as_written_acquire,
	.release = setnx_expire_release,
	.lease_end = lb_lease_unknown, /* every waiter re-arms it */
	.destroy = lb_base_destroy,
};

/* The pitfall as people write it: no waiter ever looks at the TTL, and the
 * release is a plain DEL. */
const struct lock_strategy lb_strategy_setnx_then_expire = {
	.name = "setnx-then-expire",
	.summary = "SETNX then EXPIRE, nothing else; release DEL: the pitfall as people write it",
	.sends = "acquire: SETNX KEY token, then EXPIRE KEY ceil(ttl s); if taken: nothing. release: GETDEL KEY (a DEL that returns what it deleted)",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE,
	.min_nodes = 1,
	.failpoints = setnx_expire_failpoints,
	.create = setnx_expire_create,
	.acquire = then_expire_acquire,
	.release = then_expire_release,
	.lease_end = setnx_expire_lease_end, /* its own EXPIRE's: nobody moves it */
	.destroy = lb_base_destroy,
};
