/*
 * strategy.h - the one interface every lock strategy implements.
 *
 * A strategy is a `static const struct lock_strategy` with designated
 * initializers (see strategies/registry.c for the list and for how to add one).
 * Its per-client state lives behind a `void *` that its own create() allocates
 * and its own destroy() frees.
 *
 * acquire() makes exactly ONE attempt. Waiting (try, fixed:MS, retries:N:MS,
 * ...) and deadlines belong to the harness (harness/params/wait.h), so that every
 * strategy is measured under the same wait policy.
 *
 * Outcomes (enum lb_status in harness/core/util.h):
 *   acquire: 0 acquired | LB_EBUSY held by another | LB_EVALIDITY (Redlock:
 *            quorum but no validity left) | LB_EREDIS
 *   acquire: ... | LB_ENOREPLICA (wait-replicas: no replica acknowledged;
 *            counted as a failed attempt, like LB_EREDIS)
 *   release: 0 released our lock | LB_ELOST the lock was already gone or
 *            another's and we left it | LB_EFOREIGN we deleted a lock that held
 *            another client's value | LB_EREDIS
 */
#ifndef LB_STRATEGY_H
#define LB_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "failpoint.h" /* lb_failpoint: the seeds' slow points */
#include "history.h" /* LB_LEASE_UNKNOWN, LB_LEASE_NEVER */
#include "util.h"

struct lb_node;

/* The five properties a lock may claim (Redis distlock page, seed 004). */
enum lb_claim {
	LB_CLAIM_MUTEX = 1u << 0,          /* safety: at most one holder at any moment */
	LB_CLAIM_DEADLOCK_FREE = 1u << 1,  /* a crashed holder's lock comes back (TTL) */
	LB_CLAIM_FAULT_TOLERANT = 1u << 2, /* works while a majority of nodes is up */
	LB_CLAIM_OWNER_RELEASE = 1u << 3,  /* only the holder can release it */
	LB_CLAIM_NO_LAPSE = 1u << 4,       /* the lease does not lapse while working */
};
#define LB_CLAIM_COUNT 5
/* Short column name of claim bit @i (0..LB_CLAIM_COUNT-1). */
const char *lb_claim_name(unsigned i);

/* A client's wall clock; setnx-getset reads it, scenarios skew it. With
 * strobe_ms, the offset is on in the even strobe_ms periods from from_ns
 * (CLOCK_MONOTONIC, lb_now_ns) and off in the odd ones and from until_ns:
 * as the shim computes it for an adapter (clockfile.h). */
struct lb_clock {
	int64_t offset_ms;
	int64_t strobe_ms, from_ns, until_ns;
};
/* CLOCK_REALTIME in ms plus the clock's offset now; @c may be NULL. */
int64_t lb_clock_now_ms(const struct lb_clock *c);

struct lb_lock_cfg {
	struct lb_node **nodes;      /* lock nodes, borrowed; n_nodes >= strategy's min_nodes */
	size_t n_nodes;
	const char *key;             /* lock key including the run's prefix; copied */
	int64_t ttl_ms;              /* lease length */
	const struct lb_clock *clock; /* borrowed; NULL means the true clock */
	bool notify;                 /* release wakes a waiter (wait policy notify) */
	int64_t poll_ms;             /* how often the wait policy tries again (fair's leases) */
	bool no_validity_check;      /* redlock: skip the validity check (the naive variant) */
	int max_extensions;          /* renewal: stop renewing after this many; 0: never stop */
	/* external strategies (adapter.c) */
	int client;                  /* the client's number, for messages */
	const void *impl;            /* the strategy's definition (its ->impl) */
	bool library_wait;           /* --wait library: the library's own blocking acquire */
	int64_t timeout_ms;          /* the network timeout the recipes use (the nodes') */
	const _Atomic int *cancel;   /* set when the run stops: a blocked request gives up */
	const char *log_path;        /* the adapter's stderr goes here; NULL: /dev/null */
	const char *clock_shim;      /* LD_PRELOAD for the adapter (client clock faults, the
				      * source address of nodes[0]->source) */
	const char *clock_file;      /* ... and the offset file it reads; both may be NULL */
	/* rediss:// nodes: the TLS options (--tls-ca, --tls-cert, --tls-key FILE,
	 * --tls-insecure) an adapter hands its library in config; NULL: none */
	const char *tls_ca, *tls_cert, *tls_key;
	bool tls_insecure;
};

/* What a successful acquire hands to the critical section. */
struct lb_grant {
	int64_t fence;       /* fencing token, or -1 when the strategy issues none */
	int64_t validity_ms; /* time the lock is believed valid from the grant, or -1 */
	uint32_t nodes;      /* the lock nodes it holds the lock on (bit i: node i); 0 when
				the strategy does not say (one node, or a library) */
};

/* A recipe's own way of waiting (--wait own; a library's is always its own). */
enum { LB_OWN_WAIT_POLL, LB_OWN_WAIT_NOTIFY };

struct lock_strategy {
	const char *name;
	const char *summary;            /* one line for `lockbench list` */
	const char *sends;              /* the commands it sends (KEY: the lock's key), for
					   --dry-run; a library's from its manifest */
	unsigned claims;                /* enum lb_claim bits */
	unsigned min_nodes;             /* lock nodes it needs (1, or 5 for redlock) */
	int own_wait;                   /* how it waits under --wait own: LB_OWN_WAIT_* */
	const char *const *failpoints;  /* NULL-terminated names it fires, or NULL */

	void *(*create)(const struct lb_lock_cfg *cfg); /* NULL on failure */
	int (*acquire)(void *self, struct lb_grant *grant);
	int (*release)(void *self);
	int (*extend)(void *self, int64_t ttl_ms);      /* optional: NULL */
	/* optional: block until a release signals or @timeout_ms passes (wait
	 * policy notify): 0 signalled (try again) | 1 signalled with the lock
	 * handed over (acquired: no attempt needed) | LB_ETIMEOUT | LB_EREDIS */
	int (*wait)(void *self, int64_t timeout_ms);
	/* optional (notify): how long the next wait may block, the policy's
	 * interval given; the caller still cuts it at the acquire's deadline.
	 * NULL: the interval (fair: a waiter behind the first blocks longer,
	 * since a release or a poke wakes it when its turn comes). */
	int64_t (*wait_ms)(void *self, int64_t interval_ms);
	/* optional: does the strategy still believe the lease it granted is valid?
	 * The critical section asks before its write and while it works, and
	 * aborts when the answer is no (renewal's watchdog). NULL: it cannot tell. */
	bool (*held)(void *self);
	/* optional: when the lease of the last acquire runs out, as the lock
	 * knows it: monotonic ns, no earlier than the server's key expires (its
	 * own extensions included); LB_LEASE_NEVER for a lock without one (no
	 * TTL); LB_LEASE_UNKNOWN when it cannot tell (a library that extends
	 * its lease without saying so). NULL: the lease is the TTL, from the
	 * moment acquire returned. The timeline marks "the lease ran out while
	 * inside" only where this is known (docs/running.md). */
	int64_t (*lease_end)(void *self);
	void (*destroy)(void *self);                    /* accepts NULL */
	bool needs_replica;             /* node 0 must have a replica (wait-replicas) */
	/* An external strategy (a library behind an adapter, or exec:PATH):
	 * its definition (struct lb_adapter_def, adapter.h); NULL for a recipe. */
	const void *impl;
	/* Its release is the library's: whether it deleted another client's lock
	 * it cannot say (no outcome foreign). The servers can (harness/judge/foreign.h);
	 * where they are not watched, foreign releases read n/a. */
	bool blind_release;
};

/* The registry (registry.c): the recipes in teaching order, then the library
 * adapters found in strategies/adapters (adapter.c). */
size_t lb_strategy_count(void);
const struct lock_strategy *lb_strategy_at(size_t i);
/* NULL when no strategy has that name. "exec:PATH" makes (once) an external
 * strategy of the program at PATH. */
const struct lock_strategy *lb_strategy_find(const char *name);
/* The strategy whose name is closest to @name (case, '_' for '-', up to two
 * letters wrong), for a "did you mean" hint; NULL when none is that close. */
const char *lb_strategy_nearest(const char *name);
/* Is @s an external strategy (a library adapter or exec:PATH)? */
bool lb_strategy_is_external(const struct lock_strategy *s);
/* The consensus system a library adapter's lock lives on ("etcd",
 * "zookeeper": its manifest's topology), or NULL for a Redis lock. */
const char *lb_strategy_topology(const struct lock_strategy *s);

/*
 * The state most strategies need and nothing more: the configuration, their
 * copy of the key and the token of the current acquire. Strategies with more
 * state put this first in their own struct and pass its size to lb_base_alloc.
 */
#define LB_TOKEN_HEX 32
#define LB_SAID_MAX 240
struct lb_lock_base {
	struct lb_lock_cfg cfg;       /* cfg.key points at key below */
	char *key;                    /* owned */
	char token[LB_TOKEN_HEX + 1]; /* value written by the current acquire */
	char said[LB_SAID_MAX];       /* a library's own words for its last error ("" none) */
};
void *lb_base_alloc(const struct lb_lock_cfg *cfg, size_t size);
void *lb_base_create(const struct lb_lock_cfg *cfg); /* sizeof(struct lb_lock_base) */
void lb_base_destroy(void *self);
/* lb_token_hash (plumbing.h) of the token of the state's current
 * acquire (every strategy's state begins with struct lb_lock_base): what the
 * lock servers hold while it is held; 0 when the strategy wrote none. */
uint64_t lb_base_token_hash(const void *self);
/* What the library said of the state's last failed call (an adapter's
 * `error MESSAGE`), or "" (a recipe: its status says it). */
const char *lb_base_said(const void *self);
/* Release by compare-and-delete of the token on the first node (the ops-table
 * release of the token-based single-node strategies). */
int lb_base_cad_release(void *self);
/* The first (for single-node strategies: the only) lock node. */
struct lb_node *lb_base_node(const struct lb_lock_base *b);

#endif
