/*
 * registry.c - every strategy, in teaching order, searched by name.
 *
 * Adding a strategy: 5 steps.
 *  1. Write strategies/<name>.c (name with '-' spelled '_') opening with a
 *     comment: the recipe in Redis commands, where it comes from, what it
 *     claims and exactly how it fails, naming the scenario that shows it.
 *     A variant that differs from a recipe in a line (setnx-expire-as-written)
 *     is a second ops table in that recipe's file, not a copy of it.
 *  2. Define `const struct lock_strategy lb_strategy_<name>` with designated
 *     initializers; reuse strategies/plumbing.h and lb_base_* for state.
 *  3. Declare it below and add it to `strategies[]` where it belongs in the
 *     teaching order, and its row at the same place in docs/index.md.
 *  4. The contract suite (tests/test_strategies.c) runs it automatically;
 *     add its expected clauses there (TTL? owner release? foreign release?).
 *  5. Add docs/strategies/<name>.md and its [expect] line in every scenario.
 */
#include <ctype.h>
#include <string.h>

#include "adapter.h"
#include "strategy.h"

extern const struct lock_strategy lb_strategy_fair;
extern const struct lock_strategy lb_strategy_fenced;
extern const struct lock_strategy lb_strategy_get_del;
extern const struct lock_strategy lb_strategy_none;
extern const struct lock_strategy lb_strategy_redlock;
extern const struct lock_strategy lb_strategy_renewal;
extern const struct lock_strategy lb_strategy_set_nx_px;
extern const struct lock_strategy lb_strategy_setnx;
extern const struct lock_strategy lb_strategy_setnx_expire;
extern const struct lock_strategy lb_strategy_setnx_expire_as_written;
extern const struct lock_strategy lb_strategy_setnx_getset;
extern const struct lock_strategy lb_strategy_setnx_then_expire;
extern const struct lock_strategy lb_strategy_token_lua;
extern const struct lock_strategy lb_strategy_wait_replicas;
extern const struct lock_strategy lb_strategy_watch_multi;

/* In the teaching order of docs/index.md (the order of list, compare and
 * matrix): the naive recipes first, each fixing the last one's flaw, then
 * Redlock and the fixes. */
static const struct lock_strategy *const strategies[] = {
	&lb_strategy_none,
	&lb_strategy_setnx,
	&lb_strategy_setnx_then_expire,
	&lb_strategy_setnx_expire,
	&lb_strategy_setnx_expire_as_written,
	&lb_strategy_set_nx_px,
	&lb_strategy_get_del,
	&lb_strategy_watch_multi,
	&lb_strategy_token_lua,
	&lb_strategy_redlock,
	&lb_strategy_setnx_getset,
	&lb_strategy_fair,
	&lb_strategy_fenced,
	&lb_strategy_renewal,
	&lb_strategy_wait_replicas,
};

#define N_RECIPES (sizeof(strategies) / sizeof(strategies[0]))

size_t lb_strategy_count(void)
{
	return N_RECIPES + lb_adapter_count();
}

const struct lock_strategy *lb_strategy_at(size_t i)
{
	return i < N_RECIPES ? strategies[i] : lb_adapter_at(i - N_RECIPES);
}

const struct lock_strategy *lb_strategy_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < N_RECIPES; i++)
		if (!strcmp(strategies[i]->name, name))
			return strategies[i];
	if (!strncmp(name, "exec:", 5))
		return lb_adapter_exec(name);
	return lb_adapter_find(name);
}

/* Edit distance between @a and @b, ignoring case and counting '_' and ' ' as
 * '-', capped at 3 (all a suggestion needs). */
static int distance(const char *a, const char *b)
{
	enum { MAX = 64 };
	size_t la = strlen(a), lb = strlen(b);
	int row[MAX + 1];

	if (la > MAX || lb > MAX)
		return 3;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int ca = a[i - 1] == '_' || a[i - 1] == ' ' ? '-' : tolower((unsigned char)a[i - 1]);
			int up = row[j], best = diag + (ca != b[j - 1]);
			best = up + 1 < best ? up + 1 : best;
			best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb] < 3 ? row[lb] : 3;
}

const char *lb_strategy_nearest(const char *name)
{
	const char *best = NULL;
	int best_d = 3;

	for (size_t i = 0; name && i < lb_strategy_count(); i++) {
		const char *n = lb_strategy_at(i)->name;
		int d = distance(name, n);
		if (d < best_d || (d == best_d && best && strlen(n) < strlen(best) && d < 3)) {
			best_d = d;
			best = n;
		}
	}
	return best_d <= 2 ? best : NULL;
}

bool lb_strategy_is_external(const struct lock_strategy *s)
{
	return s && s->impl != NULL;
}

const char *lb_strategy_topology(const struct lock_strategy *s)
{
	const struct lb_adapter_def *d = lb_strategy_is_external(s) ? lb_adapter_def_of(s) : NULL;

	return d && d->topology[0] ? d->topology : NULL;
}
