/*
 * fair - a FIFO lock: waiters queue in Redis, keep their place across
 *        timeouts, and the release hands the lock to the first of them.
 *               (lockbench's own; compare Redisson's RFairLock: a list and a
 *                sorted set of timeouts, and pub/sub to wake the next waiter)
 *
 * Keys (K the lock): K holds the holder's token (PX ttl); K:q the queue (a
 * list of tokens, oldest first); K:lease a sorted set of each queued token's
 * lease end (ms, Redis time); K:w:<token> a waiter's wake list; K:handed the
 * last hand-off, "<token> <ms>".
 *
 * Recipe:  acquire (one Lua call, lb_script_fair "acquire"): take a lock
 *            handed to me (its wake not read yet: a polling policy reads
 *            none), with a fresh TTL; drop queued waiters whose lease ran
 *            out; if the lock is free and nobody waits (or I am first), take
 *            it; if it is free and someone waits, hand it to the first;
 *            otherwise join the queue's tail (once: I keep my place) and renew
 *            my lease: now + lease_ms when first, now + lease_ms + far_ms
 *            behind. The reply says which (2 first, 0 behind).
 *          wait: BLPOP K:w:<token>: first, for the notify interval; behind,
 *            for far_ms (50 intervals, at most 5 s: how long a stopping run
 *            waits for it), drawn from [far_ms / 2, far_ms]. A popped "1"
 *            *is* the lock: the releaser already set K to my token, so the
 *            woken waiter enters at once, without a claim step. A popped "0"
 *            is a poke: I am first now; block again for the short interval.
 *          release (lb_script_fair "release"): if K holds my token, hand it to
 *            the first living waiter (SET K <its token> PX ttl, push its wake,
 *            note the hand-off), or delete it when nobody waits.
 *          Each time the head leaves the queue the script pokes the new
 *            first, so only the first polls often: about 10 attempts a
 *            second and 1/3.75 s a waiter behind it, where every waiter
 *            polling every 100 ms (4096 waiters: 41k scripts a second) kept
 *            Redis and the 2 cores busy and the hand-off waited behind them.
 * A dead waiter: its lease runs out lease_ms (+ far_ms) after its last
 *   attempt, and it is dropped when it reaches the head. Handed the lock
 *   before that, it never reads its wake: the next waiter, poked first when
 *   the dead one left the queue, takes the lock back grace_ms after the
 *   hand-off. So a waiter that dies delays the queue by at most grace_ms
 *   plus one polling interval (docs/strategies/fair.md).
 * Claims:  mutual exclusion, no deadlock (TTL), only the holder releases, and
 *          first come, first served among the waiters that keep polling.
 * Fails:   as token-lua: a holder paused or slow past its TTL overlaps the next
 *          one (`holder-pause`), a restart empties the node, queue included
 *          (`server-restart`). A waiter paused past its lease loses its place;
 *          one paused after it was handed the lock, past grace_ms, loses the
 *          lock and, when it resumes, believes it holds it: the pause pitfall
 *          again, with the lock handed rather than expired.
 * Note:    Redis time (TIME) for leases, so client clocks do not matter.
 */
#include <string.h>

#include "plumbing.h"

struct fair {
	struct lb_lock_base base;
	char q[300], lease[300], handed[300], wake[400];
	char ttl[24], lease_ms[24], grace_ms[24], far_ms[24];
	int64_t poll_ms, far;
	bool queued;             /* in the queue: keep the token (and the place) */
	bool first;              /* first in the queue at the last look */
	uint64_t rng;            /* spreads the long waits (xorshift64) */
};

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static void *fair_create(const struct lb_lock_cfg *cfg)
{
	struct fair *f = lb_base_alloc(cfg, sizeof(*f));
	int64_t poll = cfg->poll_ms > 0 ? cfg->poll_ms : 100;

	if (!f)
		return NULL;
	snprintf(f->q, sizeof(f->q), "%.250s:q", f->base.key);
	snprintf(f->lease, sizeof(f->lease), "%.250s:lease", f->base.key);
	snprintf(f->handed, sizeof(f->handed), "%.250s:handed", f->base.key);
	snprintf(f->ttl, sizeof(f->ttl), "%lld", (long long)cfg->ttl_ms);
	/* the first waiter re-attempts every poll_ms: ten missed attempts, and
	 * at least 2 s, before it is dropped; the others every 50 polls, at most
	 * 5 s (a stopping run waits for them), and their lease is as much
	 * longer; an unread hand-off is taken back after three polls (and
	 * 100 ms for the scheduler) */
	f->poll_ms = poll;
	f->far = clamp(50 * poll, poll, 5000);
	snprintf(f->lease_ms, sizeof(f->lease_ms), "%lld", (long long)(10 * poll > 2000 ? 10 * poll : 2000));
	snprintf(f->grace_ms, sizeof(f->grace_ms), "%lld", (long long)(3 * poll + 100));
	snprintf(f->far_ms, sizeof(f->far_ms), "%lld", (long long)f->far);
	return f;
}

static int fair_acquire(void *self, struct lb_grant *grant)
{
	struct fair *f = self;
	struct lb_lock_base *b = &f->base;
	long long v = 0;
	int rc;

	(void)grant;
	if (!f->queued && (rc = lb_token_new(b->token)) < 0)
		return rc;
	snprintf(f->wake, sizeof(f->wake), "%.250s:w:%s", b->key, b->token);
	const char *kv[10] = { b->key, f->q, f->lease, f->handed, "acquire", b->token, f->ttl,
			       f->lease_ms, f->grace_ms, f->far_ms };
	redisReply *r = lb_eval(lb_base_node(b), &lb_script_fair, 4, 6, kv);
	rc = LB_EREDIS;
	if (lb_reply_int(r, &v))
		rc = v == 1 ? 0 : LB_EBUSY;
	if (r)
		freeReplyObject(r);
	f->queued = rc == LB_EBUSY;
	f->first = rc == LB_EBUSY && v == 2;
	return rc;
}

/* The first waiter blocks for the policy's interval, the others longer: the
 * release's hand-off or a poke wakes them when they move up. The long waits
 * are drawn from [half, whole]: waiters that arrived together would
 * otherwise all re-attempt in the same instant, a burst of thousands of
 * scripts that the release's script waits behind. */
static int64_t fair_wait_ms(void *self, int64_t interval_ms)
{
	struct fair *f = self;
	int64_t ms = f->first ? interval_ms : f->far;

	if (ms <= interval_ms)
		return interval_ms;
	if (!f->rng)
		f->rng = lb_token_hash(f->base.token, strlen(f->base.token)) | 1;
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	ms = ms / 2 + (int64_t)(f->rng % (uint64_t)(ms / 2 + 1));
	return ms > interval_ms ? ms : interval_ms;
}

/* Block for my wake: 1 when it came (the lock is mine), LB_ETIMEOUT, LB_EREDIS.
 * A poke (I am first now) turns the rest of the wait into a short one. */
static int fair_wait(void *self, int64_t timeout_ms)
{
	struct fair *f = self;
	int64_t until = lb_now_ns() + timeout_ms * LB_NS_PER_MS;
	char v[8];

	for (;;) {
		int rc = lb_blpop(lb_base_node(&f->base), f->wake, timeout_ms, v, sizeof(v));
		if (rc < 0)
			return rc;
		if (strcmp(v, "0") != 0) {
			f->queued = f->first = false;
			return 1;
		}
		f->first = true;
		int64_t left = (until - lb_now_ns()) / LB_NS_PER_MS;
		if (left <= 0)
			return LB_ETIMEOUT;
		timeout_ms = left < f->poll_ms ? left : f->poll_ms;
	}
}

static int fair_release(void *self)
{
	struct fair *f = self;
	struct lb_lock_base *b = &f->base;
	const char *kv[7] = { b->key, f->q, f->lease, f->handed, "release", b->token, f->ttl };
	long long v;
	int rc = LB_EREDIS;

	f->queued = f->first = false;
	redisReply *r = lb_eval(lb_base_node(b), &lb_script_fair, 4, 3, kv);
	if (lb_reply_int(r, &v))
		rc = v == 1 ? 0 : LB_ELOST;
	if (r)
		freeReplyObject(r);
	return rc;
}

const struct lock_strategy lb_strategy_fair = {
	.name = "fair",
	.summary = "FIFO queue in Redis: waiters keep their place; the release hands the lock on",
	.sends = "acquire and release: EVALSHA of its scripts on KEY, KEY:q, KEY:lease, KEY:handed and KEY:w:token; wait: BLPOP KEY:w:token",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE | LB_CLAIM_OWNER_RELEASE,
	.min_nodes = 1,
	.own_wait = LB_OWN_WAIT_NOTIFY, /* built around its queue's wake */
	.create = fair_create,
	.acquire = fair_acquire,
	.release = fair_release,
	.wait = fair_wait,
	.wait_ms = fair_wait_ms,
	.destroy = lb_base_destroy,
};
