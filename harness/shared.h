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
#include <sys/types.h>

#include "metrics.h"
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
	struct lb_client_slot client[LB_MAX_CLIENTS];
	struct lb_record records[];            /* client i: records[i * cap ...] */
};

static inline struct lb_record *lb_shared_record(struct lb_shared *sh, int client, size_t i)
{
	return &sh->records[(size_t)client * sh->cap + i];
}

/* The client process body: never returns. @lock and @resource are address
 * templates (no connection) the client copies and connects by itself. */
void lb_client_main(const struct lb_run_cfg *cfg, struct lb_shared *sh, int id,
		    const struct lb_node *lock_nodes, size_t n_lock,
		    const struct lb_node *resource, const char *prefix)
	__attribute__((noreturn));

#endif
