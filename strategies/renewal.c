/*
 * renewal - token-lua plus a watchdog that renews the lease while it is held.
 *                 (Redisson's lockWatchdogTimeout; redis-py's Lock.extend)
 *
 * Recipe:  acquire: SET lock:<name> <token> NX PX <ttl>, as token-lua; the
 *                   watchdog thread (its own connection) then runs every ttl/3:
 *                   EVALSHA <sha> 1 lock:<name> <token> <ttl> with
 *                   if redis.call("get",KEYS[1]) == ARGV[1] then
 *                       return redis.call("pexpire",KEYS[1],ARGV[2]) else return 0 end
 *          release: stop the watchdog, then compare-and-delete.
 *          The lease is believed valid until (send time of the last successful
 *          renewal) + ttl - drift. held() answers false once that moment has
 *          passed or a renewal failed (token gone, or no answer within ttl/3),
 *          and the critical section asks while it works and before its write:
 *          a lost lease is reported, never silent.
 *          A bound (--max-renewals N) stops renewing after N extensions.
 * Claims:  those of token-lua, and no lapse while the holder works: a slow
 *          holder keeps its lock (`slow-holder` is safe).
 * Fails:   a pause stops the watchdog too. The section learns on waking that
 *          its lease lapsed and aborts its write, but it was inside while the
 *          next holder was (`holder-pause`: contained). A check before a
 *          write cannot cover the write itself: a write delayed in the network
 *          lands after the lease is gone (`delayed-write`); only a fence the
 *          resource checks stops that. A holder cut off from the lock node
 *          cannot renew and aborts (`holder-partitioned`).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "plumbing.h"

struct renewal {
	struct lb_lock_base base;
	struct lb_node link;        /* the watchdog's own connection to the lock node */
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* under mu */
	bool quit;
	bool active;                /* a lease is held and should be renewed */
	char token[LB_TOKEN_HEX + 1];
	int64_t next_ns;            /* when to renew next (monotonic) */
	int extensions;             /* renewals of the current lease */
	/* read by the critical section without the lock */
	_Atomic int64_t valid_until_ns; /* the lease's end as this client believes it */
	_Atomic int lost;               /* a renewal found the token gone */
	_Atomic int64_t expires_ns;     /* no earlier than the key's end: a reply + ttl */
};

static int64_t drift_ms(int64_t ttl_ms)
{
	return ttl_ms / 100 + 2;
}

static int64_t period_ns(int64_t ttl_ms)
{
	return ttl_ms * LB_NS_PER_MS / 3;
}

/* One renewal, outside the lock; the result is applied under it. The
 * failpoint `before-renew` stalls the watchdog with the token in hand (a
 * scheduler's delay, a GC pause of the renewer alone): the renewal it then
 * sends may land after the holder's release (renewal-after-release). The
 * watchdog is the only thread of a renewal client that passes a failpoint. */
static void renew_once(struct renewal *r, const char *token)
{
	lb_failpoint("before-renew");
	int64_t ttl = r->base.cfg.ttl_ms, sent = lb_now_ns();
	int rc = lb_cas_pexpire(&r->link, r->base.key, token, ttl);

	pthread_mutex_lock(&r->mu);
	if (!r->active || strcmp(token, r->token) != 0) {
		pthread_mutex_unlock(&r->mu); /* released meanwhile: not ours to judge */
		return;
	}
	if (rc == 0) {
		atomic_store(&r->valid_until_ns, sent + (ttl - drift_ms(ttl)) * LB_NS_PER_MS);
		atomic_store(&r->expires_ns, lb_now_ns() + ttl * LB_NS_PER_MS);
		r->extensions++;
		r->next_ns = sent + period_ns(ttl);
		if (r->base.cfg.max_extensions > 0 && r->extensions >= r->base.cfg.max_extensions)
			r->active = false; /* the bound: let the lease run out */
	} else {
		/* the token is gone (LB_ELOST), or the node did not answer within
		 * ttl/3: either way the lease can no longer be vouched for, and the
		 * holder is told at once rather than when it runs out */
		atomic_store(&r->lost, 1);
		r->active = false;
	}
	pthread_mutex_unlock(&r->mu);
}

static void *watchdog(void *arg)
{
	struct renewal *r = arg;
	char token[LB_TOKEN_HEX + 1];

	pthread_mutex_lock(&r->mu);
	while (!r->quit) {
		int64_t now = lb_now_ns();
		if (!r->active || now < r->next_ns) {
			struct timespec ts;
			int64_t until = r->active ? r->next_ns : now + LB_NS_PER_S;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			int64_t abs = (int64_t)ts.tv_sec * LB_NS_PER_S + ts.tv_nsec + (until - now);
			ts.tv_sec = abs / LB_NS_PER_S;
			ts.tv_nsec = abs % LB_NS_PER_S;
			pthread_cond_timedwait(&r->cv, &r->mu, &ts);
			continue;
		}
		memcpy(token, r->token, sizeof(token));
		pthread_mutex_unlock(&r->mu);
		renew_once(r, token);
		pthread_mutex_lock(&r->mu);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

static void *renewal_create(const struct lb_lock_cfg *cfg)
{
	struct renewal *r = lb_base_alloc(cfg, sizeof(struct renewal));
	pthread_condattr_t ca;

	if (!r)
		return NULL;
	r->link = *cfg->nodes[0];
	r->link.ctx = NULL;
	r->link.timeout_ms = cfg->ttl_ms / 3 > 10 ? cfg->ttl_ms / 3 : 10;
	pthread_mutex_init(&r->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&r->thread, NULL, watchdog, r) != 0) {
		pthread_cond_destroy(&r->cv);
		pthread_mutex_destroy(&r->mu);
		lb_base_destroy(r);
		return NULL;
	}
	r->started = true;
	return r;
}

static int renewal_acquire(void *self, struct lb_grant *grant)
{
	struct renewal *r = self;
	struct lb_lock_base *b = &r->base;
	int64_t ttl = b->cfg.ttl_ms, sent;
	int rc = lb_token_new(b->token);

	if (rc < 0)
		return rc;
	sent = lb_now_ns();
	if ((rc = lb_set_nx_px(lb_base_node(b), b->key, b->token, ttl)) < 0)
		return rc;
	pthread_mutex_lock(&r->mu);
	memcpy(r->token, b->token, sizeof(r->token));
	atomic_store(&r->expires_ns, lb_now_ns() + ttl * LB_NS_PER_MS);
	atomic_store(&r->valid_until_ns, sent + (ttl - drift_ms(ttl)) * LB_NS_PER_MS);
	atomic_store(&r->lost, 0);
	r->extensions = 0;
	r->next_ns = sent + period_ns(ttl);
	r->active = true;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	grant->validity_ms = ttl - drift_ms(ttl);
	return 0;
}

static bool renewal_held(void *self)
{
	struct renewal *r = self;
	return !atomic_load(&r->lost) && lb_now_ns() < atomic_load(&r->valid_until_ns);
}

/* Its own renewals move the lease: the last one that succeeded says where. */
static int64_t renewal_lease_end(void *self)
{
	return atomic_load(&((struct renewal *)self)->expires_ns);
}

static int renewal_release(void *self)
{
	struct renewal *r = self;

	pthread_mutex_lock(&r->mu);
	r->active = false; /* stop renewing before the lock goes */
	pthread_mutex_unlock(&r->mu);
	return lb_cad_release(lb_base_node(&r->base), r->base.key, r->base.token);
}

static void renewal_destroy(void *self)
{
	struct renewal *r = self;

	if (!r)
		return;
	if (r->started) {
		pthread_mutex_lock(&r->mu);
		r->quit = true;
		pthread_cond_signal(&r->cv);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->thread, NULL);
		pthread_cond_destroy(&r->cv);
		pthread_mutex_destroy(&r->mu);
	}
	lb_node_close(&r->link);
	lb_base_destroy(r);
}

static const char *const renewal_failpoints[] = { "before-renew", NULL };

const struct lock_strategy lb_strategy_renewal = {
	.name = "renewal",
	.summary = "token-lua plus a watchdog renewing the lease every TTL/3; reports a lost lease",
	.sends = "acquire: SET KEY token NX PX ttl. every ttl/3 while held: EVALSHA PEXPIRE KEY if it holds the token. release: EVALSHA compare-and-delete on KEY",
	.claims = LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE | LB_CLAIM_OWNER_RELEASE |
		  LB_CLAIM_NO_LAPSE,
	.min_nodes = 1,
	.failpoints = renewal_failpoints,
	.create = renewal_create,
	.acquire = renewal_acquire,
	.release = renewal_release,
	.held = renewal_held,
	.lease_end = renewal_lease_end,
	.destroy = renewal_destroy,
};
