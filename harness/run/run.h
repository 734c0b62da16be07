/*
 * run.h - one contention run: servers, forked clients, the oracle, figures.
 *
 * The parent starts the servers (lock nodes plus one resource server that no
 * fault touches), maps one MAP_SHARED region, forks the clients, supervises
 * them against the deadline, reaps them, and judges the history.
 */
#ifndef LB_RUN_H
#define LB_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "attempts.h"
#include "foreign.h"
#include "metrics.h"
#include "shared_event.h"
#include "oracle.h"
#include "params.h" /* struct lb_run_cfg */
#include "plumbing.h"
#include "strategy.h"
#include "wait.h"


#define LB_MAX_REMOTE_HOSTS 16 /* run --hosts */

/* run --hosts FILE (run_remote.c): one host a line, "[user@]host[:port]
 * [clients]", read and checked before anything starts. */
struct lb_hosts {
	struct lb_host_spec {
		char dest[128];    /* [user@]host, as ssh takes it */
		int port;          /* 0: ssh's own */
		int clients;       /* 0: a share of what the others leave */
		int line;          /* in the file */
		int first, count;  /* its clients, once split (lb_hosts_split) */
	} h[LB_MAX_REMOTE_HOSTS];
	int n;
	char path[PATH_MAX];
};

/* Read @path into @out: 0, or LB_EINVAL said once (the file, the line, the
 * field, what was expected). */
int lb_hosts_read(const char *path, struct lb_hosts *out);
/* Split @clients among them (a host's own count, the rest evenly): 0, or
 * LB_EINVAL with why in @why. */
int lb_hosts_split(struct lb_hosts *h, int clients, char *why, size_t len);

/* Does the run need lockbench's relay beside its clients (network faults)? */
bool lb_run_needs_relay(const struct lb_run_cfg *cfg);

/* One host's clock against this one's, from its agent's round trips and
 * this process's to the same server: its stamps + offset_ns are on this
 * clock within ± bound_ns (docs/running.md, "Clients on many hosts"). */
struct lb_remote_bound {
	char name[160];            /* [user@]host[:port] */
	int first, count;          /* its clients */
	int64_t offset_ns, bound_ns;
	int64_t rtt_ns, here_rtt_ns; /* its best round trip, and this process's */
	int64_t drift_ns;          /* its offset after less before; INT64_MIN: not measured */
};

struct lb_run_result {
	struct lb_verdict verdict;
	struct lb_server_seen_copy { /* --sentinel: the servers taken for the primary */
		char host[64];
		int port;
		char run_id[41];
		int64_t first_ns;
		int first_client;
	} seen[16];
	int n_seen;                /* 0: not recorded (servers.csv not written) */
	bool counter_known;        /* the final counter was read (else its figures are n/a) */
	bool seen_overflow;        /* more servers than seen[] holds */
	uint64_t *per_client;      /* owned: cfg.clients section counts */
	struct lb_section *sections; /* owned, sorted by enter_ns */
	size_t n_sections;
	struct lb_hist latency;    /* successful acquires */
	struct lb_hist censored;   /* acquire calls that never entered (gave up, cut by the
				      run's end, or their client died), each at its length so
				      far: a lower bound of its wait (lb_acquire_quantile_us) */
	struct lb_waiter *waiters; /* owned: each client's calls after its last enter that
				      did not enter (history.h), at most one a client */
	size_t n_waiters;
	struct lb_try *tries;      /* owned: every acquire attempt (attempts.h), by client */
	size_t n_tries;
	bool tries_known;          /* the logs held them all, and a node down is the lock down */
	bool tries_full;           /* a client's log filled: attempts.csv lacks some */
	char tries_why[120];       /* why busy_while_down is n/a, or "" */
	struct lb_busy busy;       /* busy answers, and those given with no quorum up */
	/* the lock's commands by phase, as the relay counted them per client
	 * (relay.h): inside a section (enter to release) and outside it, and the
	 * client-seconds of each; known only where every lock command of a client
	 * went through its own links of the relay */
	bool phase_known;
	char phase_why[120];       /* why not, or "" */
	uint64_t cmds_holding, cmds_waiting;
	double holding_s, waiting_s;
	double elapsed_s;          /* from the first client's start to the stop */
	double throughput_per_s;
	uint64_t acquire_timeouts; /* acquires that gave up */
	uint64_t acquire_errors;   /* attempts that found a lock node unreachable */
	enum lb_class observed;    /* the outcome class, from the measurements */
	char observed_why[200];    /* what decided it (lb_classify) */
	char unfired[120];         /* the scenario's faults that never fired, or "" */
	struct lb_event *events;   /* owned: faults and deaths, by time */
	size_t n_events;
	uint64_t events_dropped;   /* emitted after the table was full: not in events */
	struct lb_key_event *key_events; /* owned: what the lock servers did to the lock keys
					    (keywatch.h), in their order; NULL: not watched */
	size_t n_key_events;
	struct lb_foreign_result foreign; /* the servers' foreign releases, attributed */
	char foreign_why[300];     /* why foreign releases are not the servers', or "" */
	char skipped[512];         /* non-empty: the run could not be done here, and why */
	uint64_t attempts;         /* acquire() calls, all clients */
	uint64_t acquires;         /* successful */
	uint64_t counter_writes;   /* completed (acknowledged) counter writes */
	uint64_t applied_writes;   /* counter writes the resource applied, by its own count */
	bool applied_known;        /* the resource answered with that count */
	char failovers_why[120];   /* non-empty: nothing recorded when the user's primary was
				      replaced (their cluster; Sentinels nobody could
				      subscribe to), so demoted_primary_ms is n/a, for this */
	bool resource_theirs;      /* the resource is on a server of the user's: a failover
				      may roll back its count, so lost_updates is the clients'
				      acknowledged writes minus the final value */
	long long counter_final;   /* sum of the counters read back at the end */
	long long lost_updates;    /* proven: max(0, counter_writes - counter_final) */
	long long lost_updates_max; /* possible: as if every uncertain write landed */
	uint64_t indeterminate_ops; /* lock operations of unknown outcome (shared.h) */
	uint64_t uncertain_writes; /* SETs sent without a reply (timed out, or the client
				      died): each may have landed, hiding a lost update */
	uint64_t stale_writes_rejected; /* reads and writes the fenced resource refused */
	uint64_t writes_aborted;   /* sections that learned their lease was gone and
				      skipped their write (renewal) */
	uint64_t canary_violations;
	uint64_t lock_commands;    /* commands the lock's primaries ran, t0 to the end
				      (INFO commandstats, per server process: metrics.h) */
	bool lock_commands_known;  /* false: not countable, lock_commands_why says why */
	char lock_commands_why[200];
	double cmds_per_section;   /* NAN when not known */
	double held_s;             /* seconds in which a section was open (any key) */
	double inside_s;           /* client-seconds inside sections */
	double cost_bound;         /* commands a recipe of the run's shape sends at most
				      (lb_lock_cost_bound), when cost_bound_known */
	bool cost_bound_known;
	char cost_bound_why[160];
	uint64_t client_rss_kb;    /* mean resident set of a client process, sampled mid-run */
	uint64_t client_pss_kb;    /* ... its proportional set (shared pages divided among
				      the processes mapping them), from smaps_rollup */
	uint64_t client_private_kb; /* ... its private dirty pages: memory of its own */
	uint64_t adapter_pss_kb;   /* the adapters' proportional set a client (library
				      strategies; hosts and their processes, or each
				      client's adapter), sampled with the clients'; 0 none */
	uint64_t harness_cpu_us;   /* lockbench's CPU, user and system: the parent from the
				      first fork to the last reap, and every client process
				      (not its adapter) */
	uint64_t adapter_cpu_us;   /* the adapters' CPU, as their clients reaped them */
	bool adapter_cpu_known;    /* every client exited by itself and said it */
	bool harness_cpu_known;    /* ... or there are no adapters to tell apart */
	/* a stampede (calls > 0), measured for every run: see run_collect.c */
	int64_t arrival_spread_ns; /* first call of the first client to that of the last */
	int64_t last_served_ns;    /* from go to the last client's first enter; -1: none */
	uint64_t served_clients;   /* clients that entered at least once */
	uint64_t gave_up_clients;  /* clients whose calls all returned without the lock */
	uint64_t still_waiting_clients; /* never entered, a call still waiting at the end */
	double gave_up_attempts;   /* their mean attempts; NAN: the library counts its own */
	uint64_t gave_up_attempts_max;
	double gave_up_after_ms;   /* their mean wait, first call to the last one's end */
	int64_t clients_cpu_ns;    /* CPU time (user + system) of every client and its adapter,
				      from the go to its last section; -1 not known for one */
	uint64_t server_connections; /* connections the servers counted, mid-run (0: n/a) */
	bool interrupted;          /* stopped early by Ctrl-C / SIGTERM */
	char redis_version[32];
	int64_t consensus_ready_ms; /* a consensus lock's ensemble: start to quorum (0: none) */
	char run_prefix[48];
	int64_t t0_mono_ns;        /* history times are ns after this instant */
	struct lb_remote_bound *remote; /* owned: run --hosts, each host's clock; or NULL */
	int n_remote;
	bool cross_known;          /* the overlaps judged with each host's bound */
	size_t cross_certain, cross_possible; /* pairs of sections that overlap whatever
				      the clocks' error within their bounds, or may */
	char cross_why[160];       /* why not judged, or "" */
};

/* Run it. 0 when the run completed (whatever it found), else a negative
 * status with the reason already printed. */
int lb_run(const struct lb_run_cfg *cfg, struct lb_run_result *res);
/* Why @cfg's adapter hosts cannot serve this run (a fault on a client's own
 * process, a topology that needs a client's own address) into @why: true,
 * a usage error; false when it has none or they can. */
bool lb_run_hosts_refused(const struct lb_run_cfg *cfg, char *why, size_t len);
void lb_run_result_free(struct lb_run_result *res);

/* lockbench agent (run_agent.c): its share of a run, as its input gave it. */
struct lb_agent_share {
	char lock[LB_MAX_NODES][512];  /* redis:// URLs of the lock nodes, in order */
	int n_lock;
	char resource[512];            /* the resource server's */
	int first, count;              /* the clients [first, first + count) of cfg->clients */
	char prefix[48];               /* the run's key prefix */
	bool faults;                   /* it fires the scenario's faults on a holder or any
					  client (one agent of a run); faults on client:N go to
					  the agent of N */
};
struct lb_lines;
/* Run @share's clients against its servers until the run's end or until @in
 * ends, and stream their records to @out (docs/running.md, "Clients on many
 * hosts"). 0, or a negative status said (and "error" on @out). */
int lb_run_agent(const struct lb_run_cfg *cfg, const struct lb_agent_share *share,
		 struct lb_lines *in, FILE *out);
/* The scenario's faults a process of a run --hosts fires into @out: the
 * servers' (@agent false: the lockbench that started the run), or a share's
 * clients'. */
struct lb_scenario;
void lb_scenario_slice(const struct lb_scenario *sc, bool agent, bool any_client, int first,
		       int count, struct lb_scenario *out);

#endif
