/*
 * run_ctx.h - what the files of a run share (run.c and run_*.c, nothing
 * else): the parent's state during a run and the steps each file gives.
 */
#ifndef LB_RUN_CTX_H
#define LB_RUN_CTX_H

#include <sys/resource.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cluster.h"
#include "consensus.h"
#include "ensemble.h"
#include "faults.h"
#include "keywatch.h"
#include "metrics.h"
#include "params.h"
#include "plumbing.h"
#include "topology.h"

struct lb_lines; /* agent_wire.h */
struct run_remote; /* run_remote.c */

struct lb_run_result; /* run.h's; not included, so that run.c, run_ctx.h and run.h make no ring */

/* Everything the parent holds during a run, released by run_cleanup. */
struct run_ctx {
	const struct lb_run_cfg *cfg;
	struct lb_run_result *res;
	struct lb_server *srv[LB_MAX_NODES + 1];
	size_t n_srv;
	struct lb_node lock[LB_MAX_NODES];
	size_t n_lock;
	struct lb_node resource;
	struct lb_server *replica;
	struct lb_sentinel_topo topo; /* cfg->sentinel: its primary is srv[0] */
	struct lb_cluster cluster;    /* cfg->cluster: its node 0 is srv[0] */
	struct lb_consensus cons;     /* a consensus lock's ensemble: its members are srv[0..2] */
	int consensus;                /* lb_consensus_of the strategy: 0 a Redis lock */
	struct lb_ensemble theirs_ens; /* --etcd, --zookeeper: the user's members are lock[0..n) */
	struct lb_server *tunnel[LB_MAX_NODES + 1]; /* rediss://: each --redis URL's TLS tunnel, or NULL */
	struct lb_server *route_tunnel[LB_MAX_ROUTES]; /* rediss:// --sentinel, --cluster: the
							 tunnel of each route (node.h) */
	int n_routes;
	pid_t watcher;             /* what the Sentinels publish, as events; or 0 */
	struct lb_shared *sh;
	size_t sh_bytes;
	char prefix[48];
	char mark[32];              /* LOCKBENCH_RUN of what this run starts (signals.h) */
	unsigned long long started_ticks; /* when the run began starting things (lb_kill_adopted) */
	char shim[PATH_MAX];
	struct lb_injector inj;
	pid_t relay;               /* the relay process of network faults, or 0 */
	bool strategy_failed;      /* a client's strategy broke (an adapter): the run fails */
	struct lb_keywatch kw;     /* what the lock servers do to the lock keys */
	uint64_t kw_cmds;          /* the watcher's commands on the lock nodes when counted */
	pid_t host[LB_MAX_ADAPTER_HOSTS]; /* the adapter hosts (run_hosts.c), 0 once gone */
	int n_hosts;
	char host_dir[96];         /* where their sockets are, or "" */
	/* the clients this process forks: [first, first + count); all of them
	 * in a run, an agent's share (run_agent.c) */
	int first, count;
	struct lb_lines *agent_in; /* lockbench agent: its input, whose end stops it */
	bool agent_gone;           /* ... which ended: nothing is streamed back */
	struct run_remote *remote; /* run --hosts: the agents on the hosts (run_remote.c) */
	struct lb_scenario *remote_slice; /* ... and the faults this process fires (owned) */
};

/* The servers the lock lives on, before and after the run. */
struct lock_snaps {
	struct lb_srv_snap before[LB_MAX_NODES + LB_TOPO_REPLICAS + 1];
	struct lb_srv_snap after[LB_MAX_NODES + LB_TOPO_REPLICAS + 1];
	char name[LB_MAX_NODES + LB_TOPO_REPLICAS + 1][48]; /* as their logs are named */
	size_t n;
};

/* run_preflight.c */
bool run_scenario_has(const struct lb_scenario *sc, enum lb_action a);
bool run_needs_relay(const struct lb_run_cfg *cfg);
int run_preflight(struct run_ctx *r, bool theirs);
int run_check_replica(struct run_ctx *r);
int run_check_maxclients(struct lb_node *n, int clients);
/* A lock node of --redis must be a primary (ROLE): a replica or a Sentinel
 * is said, naming it; LB_EREDIS. */
int run_check_primary(struct lb_node *n);
int run_check_reachable(struct lb_node *n);

/* run.c: fork the clients [first, first + count); stop everything started */
int run_fork_clients(struct run_ctx *r);
void run_cleanup(struct run_ctx *r);

/* run_setup.c */
int run_map_shared(struct run_ctx *r);
void run_load_resource_scripts(struct run_ctx *r);
void run_redis_version(struct run_ctx *r);
int run_setup_servers(struct run_ctx *r, bool theirs);
void run_setup_keywatch(struct run_ctx *r, bool theirs);
void run_delete_own_keys(struct run_ctx *r);
void run_keep_logs(struct run_ctx *r);

/* run_supervise.c */
void run_reap_strays(void);
void run_supervise(struct run_ctx *r);
void run_count_cpu(struct run_ctx *r, const struct rusage *a, const struct rusage *b);
void run_wait_started(struct run_ctx *r);

/* run_hosts.c */
/* A crowd's processes (> 64 clients: a client's, a host's) at +19 niceness
 * (docs/running.md); here, not in run.c, so that calls go one way. */
void run_crowd_nice(const struct run_ctx *r);
/* How many adapter hosts the run starts (0: an adapter process per client). */
int run_hosts_wanted(const struct lb_run_cfg *cfg);
/* Before anything starts: what hosts cannot do (a fault on a client's
 * process, a topology of per-client addresses) is refused with why. */
int run_hosts_check(const struct lb_run_cfg *cfg);
/* Start them and wait until each listens (before the clients are forked). */
int run_hosts_start(struct run_ctx *r);
/* false (said) when a host has died; @wait_ms for one that is dying. */
bool run_hosts_alive(struct run_ctx *r, int wait_ms);
void run_hosts_stop(struct run_ctx *r);
/* The CPU time the hosts (and processes of theirs) have used so far, µs. */
uint64_t run_hosts_cpu_us(const struct run_ctx *r);
/* The adapters' proportional set now, KiB a client: the hosts and what is
 * below them, or each client's adapter process; 0 for a recipe. */
uint64_t run_adapters_pss_kb(const struct run_ctx *r);

/* run_remote.c: run --hosts. Start an agent on each host and check its
 * hello (before anything else starts); send each its share and wait until
 * all are ready (after the servers); go, and take their streams in until
 * all end; each host's bound and the overlaps judged with it; stop them. */
int run_remote_connect(struct run_ctx *r);
int run_remote_share(struct run_ctx *r);
int run_remote_contend(struct run_ctx *r);
void run_remote_judge(struct run_ctx *r);
void run_remote_stop(struct run_ctx *r);

/* run_collect.c */
uint64_t run_keywatch_cmds(const struct run_ctx *r);
size_t run_lock_snapshot(struct run_ctx *r, struct lb_srv_snap *snap, char (*name)[48]);
int run_collect(struct run_ctx *r);
void run_read_counters(struct run_ctx *r);
void run_count_lost_updates(const struct lb_run_cfg *cfg, struct lb_run_result *res);
int run_judge(struct run_ctx *r);
void run_count_lock_commands(struct run_ctx *r, struct lock_snaps *snap);

#endif
