/* base.c - the state and helpers most strategies share (see strategy.h). */
#include "plumbing.h"
#include "strategy.h"

#include <stdlib.h>
#include <string.h>

const char *lb_claim_name(unsigned i)
{
	static const char *const names[LB_CLAIM_COUNT] = {
		"mutex", "deadlock-free", "fault-tolerant", "owner-release", "no-lapse",
	};
	return i < LB_CLAIM_COUNT ? names[i] : "?";
}

int64_t lb_clock_now_ms(const struct lb_clock *c)
{
	int64_t now;

	if (!c || c->strobe_ms <= 0)
		return lb_wall_ms() + (c ? c->offset_ms : 0);
	now = lb_now_ns();
	if (now < c->from_ns || now >= c->until_ns)
		return lb_wall_ms();
	return lb_wall_ms() + ((now - c->from_ns) / (c->strobe_ms * LB_NS_PER_MS) % 2 ? 0 :
			       c->offset_ms);
}

void *lb_base_alloc(const struct lb_lock_cfg *cfg, size_t size)
{
	struct lb_lock_base *b;

	if (!cfg || !cfg->key || cfg->n_nodes == 0 || size < sizeof(*b))
		return NULL;
	b = calloc(1, size);
	if (!b)
		return NULL;
	b->key = strdup(cfg->key);
	if (!b->key) {
		free(b);
		return NULL;
	}
	b->cfg = *cfg;
	b->cfg.key = b->key;
	return b;
}

void *lb_base_create(const struct lb_lock_cfg *cfg)
{
	return lb_base_alloc(cfg, sizeof(struct lb_lock_base));
}

int lb_base_cad_release(void *self)
{
	struct lb_lock_base *b = self;
	return lb_cad_release(lb_base_node(b), b->key, b->token);
}

uint64_t lb_base_token_hash(const void *self)
{
	const struct lb_lock_base *b = self;
	return b ? lb_token_hash(b->token, strlen(b->token)) : 0;
}

const char *lb_base_said(const void *self)
{
	const struct lb_lock_base *b = self;
	return b ? b->said : "";
}

void lb_base_destroy(void *self)
{
	struct lb_lock_base *b = self;

	if (!b)
		return;
	free(b->key);
	free(b);
}

struct lb_node *lb_base_node(const struct lb_lock_base *b)
{
	return b->cfg.nodes[0];
}
