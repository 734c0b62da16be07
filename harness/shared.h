/*
 * shared.h - the MAP_SHARED region the parent maps before forking clients.
 *
 * Each client appends fixed-size records to its own slice, so a client killed
 * with SIGKILL loses nothing it recorded: a record's `state` is published last
 * (release order), and the parent reads whatever state each record reached.
 */
#ifndef LB_SHARED_H
#define LB_SHARED_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include "metrics.h"
#include "relay.h"
#include "run.h"

enum lb_rec_state { LB_REC_EMPTY, LB_REC_ENTERED, LB_REC_EXITED, LB_REC_RELEASED };

struct lb_record {
	int64_t acquire_start_ns;
	int64_t enter_ns;
	int64_t exit_ns;
	int64_t release_ns;
	int64_t fence;
	int32_t outcome;           /* enum lb_outcome, valid when RELEASED */
	_Atomic int32_t state;     /* enum lb_rec_state */
};

struct lb_client_slot {
	pid_t pid;
	_Atomic uint32_t n_records;
	_Atomic int alive;
	int64_t death_ns;          /* set by the parent: kill or reap time, 0 if none */
	int cut;                   /* killed by the harness at the end of the run */
	uint64_t attempts;
	uint64_t acquires;
	uint64_t timeouts;
	uint64_t counter_writes;
	uint64_t acquire_errors;   /* attempts that found a node unreachable */
	_Atomic int write_in_flight; /* a counter SET sent, its reply not yet read */
	uint64_t writes_aborted;   /* sections aborted on a lost lease */
	struct lb_hist latency;
};



struct lb_shared {
	_Atomic int stop;
	_Atomic int go;                        /* clients start together */
	int64_t t0_ns;
	int64_t end_ns;
	_Atomic uint64_t sections;             /* for the status line */
	_Atomic uint64_t canary_violations;
	_Atomic int occupancy[LB_MAX_KEYS];    /* clients inside, per key */
	size_t cap;                            /* records per client */
	_Atomic uint32_t n_events;
	struct lb_event events[LB_MAX_EVENTS];
	_Atomic int fault_fired[16];           /* one-shot faults, per scenario fault */
	_Atomic int node_port[LB_MAX_NODES];   /* where clients find lock node i (failover) */
	_Atomic int node_gen;                  /* bumped when node_port changes */
	struct lb_client_slot client[LB_MAX_CLIENTS];
	struct lb_link_ctl link[LB_MAX_CLIENTS][LB_RELAY_LINKS]; /* network faults (relay.h) */
	struct lb_link_ctl repl_link;          /* replica -> node 0, through the relay (failover) */
	_Atomic uint64_t relay_epoch;          /* rounds of the relay's loop (relay.h) */
	struct lb_record records[];            /* client i: records[i * cap ...] */
};

static inline struct lb_record *lb_shared_record(struct lb_shared *sh, int client, size_t i)
{
	return &sh->records[(size_t)client * sh->cap + i];
}

/* Append an event stamped now (any process may call it). */
void lb_event_emit(struct lb_shared *sh, int kind, int client, int node, int64_t value);

/* The record of @client's open critical section (entered, not exited), or NULL. */
static inline struct lb_record *lb_shared_open_record(struct lb_shared *sh, int client)
{
	uint32_t n = atomic_load(&sh->client[client].n_records);
	if (n < sh->cap && atomic_load(&lb_shared_record(sh, client, n)->state) == LB_REC_ENTERED)
		return lb_shared_record(sh, client, n); /* published, not yet counted */
	if (n > 0 && atomic_load(&lb_shared_record(sh, client, n - 1)->state) == LB_REC_ENTERED)
		return lb_shared_record(sh, client, n - 1);
	return NULL;
}

/* Is @client inside a critical section now? */
static inline bool lb_shared_inside(struct lb_shared *sh, int client)
{
	return lb_shared_open_record(sh, client) != NULL;
}

/* Is any of the @clients other than @me inside now? */
static inline bool lb_shared_other_inside(struct lb_shared *sh, int clients, int me)
{
	for (int c = 0; c < clients; c++)
		if (c != me && lb_shared_inside(sh, c))
			return true;
	return false;
}

/* The client process body: never returns. @lock and @resource are address
 * templates (no connection) the client copies and connects by itself. */
void lb_client_main(const struct lb_run_cfg *cfg, struct lb_shared *sh, int id,
		    const struct lb_node *lock_nodes, size_t n_lock,
		    const struct lb_node *resource, const char *prefix)
	__attribute__((noreturn));

#endif
