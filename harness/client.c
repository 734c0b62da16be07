/*
 * client.c - one contending client process:
 *   acquire -> enter -> work -> exit -> release -> think, until told to stop.
 *
 * It opens its own connections after fork and derives its random stream from
 * the run's seed and its id. `enter` is stamped after acquire returns and
 * `exit` before release is sent, so an overlap in the history is a real
 * overlap of beliefs. The occupancy canary brackets the stamped interval.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared.h"
#include "signals.h"

struct client {
	const struct lb_run_cfg *cfg;
	struct lb_shared *sh;
	struct lb_client_slot *slot;
	int id;
	int key;
	uint64_t rng;
	struct lb_node lock[LB_MAX_NODES];
	struct lb_node *lock_ptr[LB_MAX_NODES];
	struct lb_node resource;
	char lock_key[128];
	char counter_key[128];
	void *lock_state;
};

/* splitmix64: the client's random stream, derived from the run's seed. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int64_t draw_hold_ms(struct client *c)
{
	int64_t lo = c->cfg->hold_min_ms, hi = c->cfg->hold_max_ms;
	return hi > lo ? lo + (int64_t)(next_rand(&c->rng) % (uint64_t)(hi - lo + 1)) : lo;
}

/* The critical section's work. Returns true when a counter write completed. */
static bool do_work(struct client *c, int64_t hold_ms)
{
	redisReply *r;
	long long v = 0;

	if (c->cfg->work == LB_WORK_NONE) {
		lb_sleep_ns(hold_ms * LB_NS_PER_MS);
		return false;
	}
	/* deliberately not atomic: GET, hold, SET. Lost updates are what a
	 * mutual-exclusion failure costs. */
	r = lb_node_cmd(&c->resource, "GET %s", c->counter_key);
	if (lb_reply_error(r)) {
		if (r)
			freeReplyObject(r);
		return false;
	}
	if (r->type == REDIS_REPLY_STRING)
		v = atoll(r->str);
	freeReplyObject(r);
	lb_sleep_ns(hold_ms * LB_NS_PER_MS);
	r = lb_node_cmd(&c->resource, "SET %s %lld", c->counter_key, v + 1);
	bool ok = lb_reply_ok(r);
	if (r)
		freeReplyObject(r);
	return ok;
}

static enum lb_outcome outcome_of(int rc)
{
	switch (rc) {
	case 0: return LB_OUT_RELEASED;
	case LB_ELOST: return LB_OUT_LOST;
	case LB_EFOREIGN: return LB_OUT_FOREIGN;
	default: return LB_OUT_ERROR;
	}
}

static void one_section(struct client *c)
{
	const struct lb_run_cfg *cfg = c->cfg;
	struct lb_shared *sh = c->sh;
	struct lb_grant grant;
	struct lb_acquire_info info;
	uint32_t n = atomic_load(&c->slot->n_records);
	int64_t t0, hold_ms = draw_hold_ms(c);
	int rc;

	if (n >= sh->cap) { /* history full: stop rather than lose facts */
		lb_sleep_ns(10 * LB_NS_PER_MS);
		return;
	}
	t0 = lb_now_ns();
	rc = lb_acquire(cfg->strategy, c->lock_state, &cfg->wait,
			t0 + cfg->acquire_timeout_ms * LB_NS_PER_MS, &sh->stop, &grant, &info);
	c->slot->attempts += (uint64_t)info.attempts;
	if (rc == LB_ECANCELED)
		return;
	if (rc != 0) {
		c->slot->timeouts++;
		if (rc == LB_EREDIS) /* a dead server: do not spin on it */
			lb_sleep_ns(10 * LB_NS_PER_MS);
		return;
	}
	struct lb_record *rec = lb_shared_record(sh, c->id, n);
	if (atomic_fetch_add(&sh->occupancy[c->key], 1) != 0)
		atomic_fetch_add(&sh->canary_violations, 1);
	rec->enter_ns = lb_now_ns() - sh->t0_ns;
	rec->acquire_start_ns = t0 - sh->t0_ns;
	rec->fence = grant.fence;
	rec->release_ns = -1;
	atomic_store(&rec->state, LB_REC_ENTERED);
	atomic_store(&c->slot->n_records, n + 1);
	c->slot->acquires++;
	lb_hist_add(&c->slot->latency, lb_now_ns() - t0);

	if (do_work(c, hold_ms))
		c->slot->counter_writes++;

	rec->exit_ns = lb_now_ns() - sh->t0_ns;
	atomic_store(&rec->state, LB_REC_EXITED);
	atomic_fetch_sub(&sh->occupancy[c->key], 1);
	rc = cfg->strategy->release(c->lock_state);
	rec->release_ns = lb_now_ns() - sh->t0_ns;
	rec->outcome = outcome_of(rc);
	atomic_store(&rec->state, LB_REC_RELEASED);
	atomic_fetch_add(&sh->sections, 1);
	lb_sleep_ns(cfg->think_ms * LB_NS_PER_MS);
}

void lb_client_main(const struct lb_run_cfg *cfg, struct lb_shared *sh, int id,
		    const struct lb_node *lock_nodes, size_t n_lock,
		    const struct lb_node *resource, const char *prefix)
{
	struct client c = { .cfg = cfg, .sh = sh, .slot = &sh->client[id], .id = id };
	int status = 0;

	c.key = id % cfg->keys;
	c.rng = cfg->seed ^ (0x5851f42d4c957f2dull * (uint64_t)(id + 1));
	signal(SIGINT, SIG_IGN); /* the parent decides when the run stops */
	for (size_t i = 0; i < n_lock; i++) {
		c.lock[i] = lock_nodes[i];
		c.lock[i].ctx = NULL;
		c.lock_ptr[i] = &c.lock[i];
	}
	c.resource = *resource;
	c.resource.ctx = NULL;
	snprintf(c.lock_key, sizeof(c.lock_key), "%slock:%d", prefix, c.key);
	snprintf(c.counter_key, sizeof(c.counter_key), "%scounter:%d", prefix, c.key);
	struct lb_lock_cfg lcfg = {
		.nodes = c.lock_ptr, .n_nodes = n_lock, .key = c.lock_key, .ttl_ms = cfg->ttl_ms,
	};
	c.lock_state = cfg->strategy->create(&lcfg);
	if (!c.lock_state) {
		status = 1;
		goto out;
	}
	while (!atomic_load(&sh->go) && !atomic_load(&sh->stop))
		lb_sleep_ns(LB_NS_PER_MS);
	while (!atomic_load(&sh->stop) && lb_now_ns() < sh->end_ns)
		one_section(&c);
out:
	cfg->strategy->destroy(c.lock_state);
	for (size_t i = 0; i < n_lock; i++)
		lb_node_close(&c.lock[i]);
	lb_node_close(&c.resource);
	_exit(status);
}
