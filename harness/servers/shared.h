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
#include "topology.h"
#include "history.h"
#include "params.h"
#include "shared_event.h"

enum lb_rec_state { LB_REC_EMPTY, LB_REC_ENTERED, LB_REC_EXITED, LB_REC_RELEASED };

#define LB_MAX_SEEN 16 /* servers a run on the user's Sentinels records (servers.csv) */

struct lb_record {
	int64_t acquire_start_ns;
	int64_t enter_ns;
	int64_t exit_ns;
	int64_t release_ns;
	int64_t fence;
	int64_t lease_end_ns;      /* relative, or LB_LEASE_UNKNOWN / LB_LEASE_NEVER */
	uint32_t nodes;            /* lock nodes held (bit i), 0 when not known */
	uint64_t token;            /* lb_token_hash of the value the acquire wrote, 0 unknown */
	int32_t outcome;           /* enum lb_outcome, valid when RELEASED */
	_Atomic int32_t state;     /* enum lb_rec_state */
};

/* An acquire attempt (attempts.h), times relative to t0. */
struct lb_try_rec {
	int64_t start_ns;
	int64_t end_ns;
	int32_t result;            /* enum lb_try_result */
	int32_t unused;
};

struct lb_client_slot {
	pid_t pid;
	_Atomic uint32_t n_records;
	_Atomic int alive;         /* not reaped yet */
	_Atomic int dead;          /* killed (by the harness, a fault, itself) or exited:
				      it holds nothing and is inside nothing any more */
	_Atomic int inside;        /* between its enter and exit stamps (the canary) */
	_Atomic int idle;          /* ready and not in a section's acquire, work or
				      release: before its first one, or thinking */
	_Atomic int64_t death_ns;  /* when the parent saw it die (kill or reap), 0 if not */
	int cut;                   /* killed by the harness at the end of the run */
	_Atomic uint64_t attempts; /* counted as they happen: a client killed while */
	_Atomic uint64_t acquire_errors; /* acquiring keeps them (node unreachable) */
	uint64_t acquires;
	uint64_t timeouts;
	uint64_t counter_writes;   /* acknowledged */
	uint64_t uncertain_writes; /* sent, no reply (a timeout): they may have landed */
	uint64_t indeterminate_ops; /* acquire attempts and releases sent with no reply (a
				       timeout, a reset): each may have taken effect */
	_Atomic int write_in_flight; /* a counter SET sent, its reply not yet read */
	_Atomic int read_done;     /* inside, the counter read and its write not yet
				      sent: where a pause makes the write stale
				      (when = after-read) */
	_Atomic int stop_before_write; /* when = before-write: armed by the parent; the
					  client stops itself (its group) at its next write,
					  after its last look at the lease */
	_Atomic int stopped_before_write; /* ... and says so here, just before it stops */
	uint64_t writes_aborted;   /* sections aborted on a lost lease */
	struct lb_hist latency;
	/* the acquire calls since its last enter, none of which entered: the
	 * client's waiter (history.h). Times absolute (lb_now_ns); none: 0 calls */
	_Atomic uint32_t wait_calls;
	_Atomic int64_t wait_start_ns;  /* the first of them began */
	_Atomic int64_t call_start_ns;  /* the last began */
	_Atomic int64_t wait_try_ns;    /* its last attempt began (0: none yet) */
	_Atomic int64_t wait_end_ns;    /* the last returned; 0 while it runs */
	_Atomic int wait_cut;           /* the last was stopped by the run's end */
	struct lb_hist censored;        /* the length of each call that did not enter */
	/* its attempts (lb_shared_try): how many, whether the log filled, and
	 * when the one under way began (absolute; 0: none) */
	_Atomic uint32_t n_tries;
	_Atomic int tries_full;
	_Atomic int64_t try_open_ns;
	/* the lock commands the relay counted for it (relay.h), by phase: from
	 * an enter to its release's return, and the rest (the parent adds what
	 * came after the last count, to the phase the client was in) */
	_Atomic uint64_t cmds_held;
	_Atomic uint64_t cmds_waiting;
	/* CPU time, user and system, in µs: the whole client as the parent reaped
	 * it (itself and the adapter it reaped), and its adapter's part, which the
	 * client writes as it exits (0: none, or it was killed first) */
	uint64_t cpu_us;
	_Atomic uint64_t cpu_adapter_us;
	/* its first acquire that ended in an error: when (from t0), and what the
	 * strategy said of it (a library's own words; empty: nothing said) */
	int64_t first_error_ns;
	int first_error_said;
	char first_error[LB_SAID_MAX];
	_Atomic int cpu_said;      /* the client wrote cpu_adapter_us (it exited by itself) */
	_Atomic int64_t first_call_ns; /* its first acquire call began (absolute; 0: none) */
	_Atomic uint32_t calls;    /* acquire calls it made (run parameter calls) */
	/* CPU time (user + system) of the client and its adapter process from
	 * the run's go to the end of its last section, ns; -1 not known (its
	 * adapter had gone), 0 not written (it was killed) */
	_Atomic int64_t cpu_ns;
};



struct lb_shared {
	_Atomic int stop;
	_Atomic int history_full;              /* 1 + the first client whose records filled:
						  the run ended there (0: none) */
	_Atomic int go;                        /* clients start together */
	_Atomic int started;                   /* clients past their strategy's create
						  (ready, or failed): t0 waits for all */
	int64_t t0_ns;
	int64_t end_ns;
	_Atomic uint64_t sections;             /* for the status line */
	_Atomic uint64_t canary_violations;
	int clients, keys;                     /* of the run, for the helpers below */
	size_t cap;                            /* records per client */
	size_t try_cap;                        /* attempts per client, after the records */
	_Atomic uint32_t n_events;
	struct lb_event events[LB_MAX_EVENTS];
	_Atomic int event_ready[LB_MAX_EVENTS]; /* set once the slot is written */
	_Atomic int fault_fired[16];           /* one-shot faults, per scenario fault */
	_Atomic int node_port[LB_MAX_NODES];   /* where clients find lock node i (failover) */
	_Atomic int node_gen;                  /* bumped when node_port changes */
	struct lb_client_slot client[LB_MAX_CLIENTS];
	struct lb_link_ctl link[LB_MAX_CLIENTS][LB_RELAY_LINKS]; /* network faults (relay.h) */
	struct lb_link_ctl repl_link;          /* replica -> node 0, through the relay (failover) */
	/* topology = sentinel, every link through the relay (topology.h): what
	 * party p's connections to part j obey, the listener of each part (its
	 * port is the part's front), and each part's own port */
	struct lb_link_ctl mesh[LB_TOPO_PARTS + LB_MAX_CLIENTS][LB_TOPO_PARTS];
	struct lb_link_ctl mesh_front[LB_TOPO_PARTS];
	_Atomic int topo_port[LB_TOPO_PARTS];
	/* topology = cluster: each node's cluster bus, reached at a front of its
	 * own and obeying the same mesh cells as its data port */
	struct lb_link_ctl mesh_bus_front[LB_TOPO_PARTS];
	_Atomic int topo_bus_port[LB_TOPO_PARTS];
	_Atomic uint64_t relay_epoch;          /* rounds of the relay's loop (relay.h) */
	/* --sentinel: each server the clients took for the primary (servers.csv) */
	struct lb_server_seen {
		char host[64];
		int port;
		char run_id[41];
		int64_t first_ns;                /* first taken, by client first_client */
		int first_client;
		_Atomic int ready;               /* written in full */
	} seen[LB_MAX_SEEN];
	_Atomic uint32_t n_seen;
	struct lb_record records[];            /* client i: records[i * cap ...] */
};

static inline struct lb_record *lb_shared_record(struct lb_shared *sh, int client, size_t i)
{
	return &sh->records[(size_t)client * sh->cap + i];
}

/* Client @client's attempt @i: the attempt logs follow every client's records. */
static inline struct lb_try_rec *lb_shared_try(struct lb_shared *sh, int client, size_t i)
{
	struct lb_try_rec *log = (struct lb_try_rec *)(void *)(sh->records +
							       (size_t)sh->clients * sh->cap);
	return &log[(size_t)client * sh->try_cap + i];
}

/* Record that client @client took @host:@port (@run_id) for the primary at
 * @t_ns after t0, once per server; false when the table is full. */
bool lb_shared_note_server(struct lb_shared *sh, int client, const char *host, int port,
			   const char *run_id, int64_t t_ns);

/* Append an event stamped now (any process may call it). */
void lb_event_emit(struct lb_shared *sh, int kind, int client, int node, int64_t value);
/* The same, stamped @t_ns after t0 (when it happened, not now: the end of
 * the attempt that found a server down or back, attempts.csv's end_ns). */
void lb_event_emit_at(struct lb_shared *sh, int kind, int client, int node, int64_t value,
		      int64_t t_ns);
/* The same for an incident there may be many of (a refused write): only while
 * the table is less than half full, so that it never takes a fault's place. */
void lb_event_emit_incident(struct lb_shared *sh, int kind, int client, int64_t value);
/* Copy the events whose slots were written in full (at most @max); how many. */
/* How many events found the table full and were not recorded. */
uint64_t lb_shared_events_dropped(struct lb_shared *sh);
size_t lb_shared_events(struct lb_shared *sh, struct lb_event *out, size_t max);
/* A client's record as a history section. A record not released ended with
 * the client's death at @death_ns (or the run's end): an open section closes
 * there, never before its enter; @cut: the harness killed it at the end. */
void lb_record_section(const struct lb_record *rec, int client, int key, uint32_t seq,
		       int64_t death_ns, bool cut, struct lb_section *s);

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

/* Is @client alive and inside a critical section now? A dead client is
 * inside nothing, whatever its last record says. */
static inline bool lb_shared_inside(struct lb_shared *sh, int client)
{
	return !atomic_load(&sh->client[client].dead) && lb_shared_open_record(sh, client) != NULL;
}

/* Does @client hold the lock as far as it knows: inside, or out of its
 * section with its release not done yet? */
static inline bool lb_shared_holding(struct lb_shared *sh, int client)
{
	uint32_t n = atomic_load(&sh->client[client].n_records);
	if (lb_shared_inside(sh, client))
		return true;
	return n > 0 && !atomic_load(&sh->client[client].dead) &&
	       atomic_load(&lb_shared_record(sh, client, n - 1)->state) == LB_REC_EXITED;
}

/* Is any of the @clients other than @me inside now? */
static inline bool lb_shared_other_inside(struct lb_shared *sh, int clients, int me)
{
	for (int c = 0; c < clients; c++)
		if (c != me && lb_shared_inside(sh, c))
			return true;
	return false;
}

/* How recent an entry must be for "then = other-inside": the late client
 * must act at the start of the other's section, not in its last moments
 * (where a level test would often let that section end first). */
#define LB_FRESH_ENTRY_NS (5 * LB_NS_PER_MS)

/* Has a client other than @me entered, within LB_FRESH_ENTRY_NS before
 * @now_ns (since t0), a section it is still inside? */
static inline bool lb_shared_other_just_entered(struct lb_shared *sh, int clients, int me,
						int64_t now_ns)
{
	for (int c = 0; c < clients; c++) {
		if (c == me || atomic_load(&sh->client[c].dead))
			continue;
		struct lb_record *r = lb_shared_open_record(sh, c);
		if (r && r->enter_ns <= now_ns && now_ns - r->enter_ns <= LB_FRESH_ENTRY_NS)
			return true;
	}
	return false;
}

/* Has a client other than @me entered a section at or after @since_ns (since
 * t0)? For "then = other-inside": only a fault under which someone got in
 * (the late client's lease ran out) waits for the next entry; under a lock
 * that kept its lease, the late client goes on at once. */
static inline bool lb_shared_other_entered_since(struct lb_shared *sh, int clients, int me,
						 int64_t since_ns)
{
	for (int c = 0; c < clients; c++) {
		if (c == me)
			continue;
		uint32_t n = atomic_load(&sh->client[c].n_records);
		struct lb_record *r = NULL;
		if (n < sh->cap && atomic_load(&lb_shared_record(sh, c, n)->state) != LB_REC_EMPTY)
			r = lb_shared_record(sh, c, n); /* published, not yet counted */
		else if (n > 0)
			r = lb_shared_record(sh, c, n - 1);
		if (r && r->enter_ns >= since_ns)
			return true;
	}
	return false;
}

/* The canary, without clocks: @me raises its flag, then looks for another
 * living client of the same key with its flag up. Sequentially consistent
 * atomics make two clients that overlap see each other (at least one of
 * them counts it), and a dead client's flag is lowered by the parent. */
static inline bool lb_shared_canary_enter(struct lb_shared *sh, int me)
{
	atomic_store(&sh->client[me].inside, 1);
	for (int c = me % sh->keys; c < sh->clients; c += sh->keys)
		if (c != me && atomic_load(&sh->client[c].inside) && !atomic_load(&sh->client[c].dead))
			return true;
	return false;
}

/* Send @sig to client @client and everything in its process group (its
 * adapter). 0, or -1 when it is gone. */
int lb_client_signal(struct lb_shared *sh, int client, int sig);

/* The parent's side of a client's death: mark it dead at @t_ns (relative),
 * the time the parent observed, and lower its canary flag. */
void lb_shared_mark_dead(struct lb_shared *sh, int client, int64_t t_ns);
/* The clients start together: each waits in lb_shared_wait_go, asleep in the
 * kernel (a futex on sh->go), until lb_shared_go wakes them all at once, or
 * until lb_shared_stop. Thousands of clients polling a flag every millisecond
 * would take the CPU from the ones still forking and connecting. */
void lb_shared_wait_go(struct lb_shared *sh);
void lb_shared_go(struct lb_shared *sh);
void lb_shared_stop(struct lb_shared *sh);

/* A client that exits with this status says its strategy failed (an adapter
 * broke the protocol): the run is void. */
#define LB_CLIENT_EXIT_STRATEGY 2

/* The client process body: never returns. @lock and @resource are address
 * templates (no connection) the client copies and connects by itself.
 * @clock_shim: LD_PRELOAD for an adapter, so client clock faults reach it. */
void lb_client_main(const struct lb_run_cfg *cfg, struct lb_shared *sh, int id,
		    const struct lb_node *lock_nodes, size_t n_lock,
		    const struct lb_node *resource, const char *prefix, const char *clock_shim)
	__attribute__((noreturn));

#endif
