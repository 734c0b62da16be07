/*
 * injector.h - the fault injector's state (faults.h acts on it, and
 * faults_deploy.h for servers lockbench did not start): the run it serves and
 * each fault's progress.
 */
#ifndef LB_INJECTOR_H
#define LB_INJECTOR_H

#include <sys/types.h>

#include "params.h"
#include "rserver.h"
#include "scenario.h"
#include "shared.h"

struct lb_node;

struct lb_fault_rt {
	int phase;        /* 0 waiting, 1.. in progress, -1 done */
	int64_t next_ns;  /* relative time of the next step */
	int client;
	int64_t cut_ns;   /* failover: when replication was held back; net faults, node-clock
			     strobe: start */
	uint64_t epoch;   /* failover: the relay's epoch when the hold was set */
	uint32_t pending; /* restarts: nodes started but not answering yet */
	int64_t hold_ns;  /* failover: when the replication hold was asked for */
	pid_t hook_pid[LB_MAX_NODES + 1]; /* hooks under way: per node, and a hook action's */
	int64_t hook_deadline_ns;
	bool failed;      /* a fault on a deployment that did not take (refused, not run) */
	int leader;       /* nodes = leader: the member found leading when it first acted */
	bool leader_known;
	int64_t flips;    /* node-clock strobe: the flips told so far (from cut_ns) */
};

struct lb_injector {
	const struct lb_run_cfg *cfg;
	const struct lb_scenario *sc;
	struct lb_shared *sh;
	struct lb_server **lock_srv;   /* n_lock entries; NULL with --redis */
	const struct lb_node *lock;    /* n_lock entries: how the clients reach them */
	bool theirs;                   /* servers lockbench did not start (--allow-faults) */
	size_t n_lock;
	struct lb_server *replica;     /* of node 0, or NULL */
	const char *prefix;            /* the run's key prefix */
	/* a consensus topology: the member leading now, or a negative status
	 * (nodes = leader); NULL on Redis topologies */
	int (*leader)(void *arg);
	void *leader_arg;
	struct lb_fault_rt rt[LB_MAX_FAULTS];
};

#endif
