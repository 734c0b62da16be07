/*
 * topology.h - deployments as people run them, started on loopback: today a
 * primary with two replicas behind three Sentinels (docs/topologies.md), with
 * every link through lockbench's relay when a run asks for it (lb_topo_net).
 *
 * Every server and Sentinel is an embedded redis-server (rserver.h): free
 * ports, private temporary directories, no persistence, PR_SET_PDEATHSIG, so
 * a kill -9 of lockbench leaves none of them behind. Sentinels run
 * `redis-server sentinel.conf --sentinel` (no extra package).
 */
#ifndef LB_TOPOLOGY_H
#define LB_TOPOLOGY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "node.h"
#include "rserver.h"

#define LB_SENTINEL_MASTER "lockbench"
#define LB_TOPO_REPLICAS 2
#define LB_TOPO_SENTINELS 3

/* The parts of the topology, by index: what a network fault names. Part i is
 * also party i of the relay (relay.h); client c is party LB_TOPO_PARTS + c. */
enum {
	LB_PART_PRIMARY = 0,      /* the primary at the start */
	LB_PART_REPLICA0 = 1,
	LB_PART_SENTINEL0 = 1 + LB_TOPO_REPLICAS,
	LB_TOPO_PARTS = 1 + LB_TOPO_REPLICAS + LB_TOPO_SENTINELS
};
/* Event values that name a server: a part of the Sentinel topology (0 ..
 * LB_TOPO_PARTS - 1), or LB_CLUSTER_PART0 + a cluster node (cluster.h). */
#define LB_CLUSTER_PART0 8
const char *lb_topo_part_name(int part); /* "primary", "replica 0", "sentinel 2",
					    "primary 1" (a cluster node) */
/* The same in a sentence: "the first primary", "replica 0", "sentinel 2". */
const char *lb_topo_part_phrase(int part);

/*
 * Every link through the relay: part i is reached at 127.0.0.1:front[i] (a
 * relay listener) by everyone, and connects out from its party address, so
 * the relay knows who talks to whom. Servers announce their front
 * (replica-announce-ip/port, `sentinel announce-ip/port`) and the Sentinels
 * monitor the primary's front: every address a part learns (from INFO,
 * hello messages, +switch-master) is a front. As each part starts, its own
 * port is stored in *port[i] (the relay's upstream, in shared memory).
 */
struct lb_topo_net {
	int front[LB_TOPO_PARTS];
	_Atomic int *port[LB_TOPO_PARTS];
};

struct lb_sentinel_opts {
	int64_t down_after_ms;      /* Sentinel's down-after-milliseconds (1000) */
	int64_t failover_timeout_ms; /* failover-timeout (default 5000) */
	int quorum;                 /* Sentinels that must agree the primary is down (2) */
	int64_t ready_timeout_ms;   /* how long to wait for a watched topology (30000) */
	int min_replicas;           /* min-replicas-to-write on every server (0: off) */
	int min_replicas_max_lag;   /* min-replicas-max-lag in seconds (0: Redis's 10) */
};

struct lb_sentinel_topo {
	struct lb_server *primary;
	/* replica 0 has replica-priority 10 and is promoted first; replica 1 has 100 */
	struct lb_server *replica[LB_TOPO_REPLICAS];
	struct lb_server *sentinel[LB_TOPO_SENTINELS];
	struct lb_sentinel_opts opts;
	int front[LB_TOPO_PARTS];  /* where each part is reached (its own port without a net) */
	bool net;                  /* started with a lb_topo_net */
	char args[LB_TOPO_PARTS][8][24]; /* the servers' extra arguments (borrowed by them) */
	const char *argv[LB_TOPO_PARTS][9];
};

/*
 * Start the primary, its replicas (in sync) and the Sentinels, and return
 * only once every Sentinel sees the primary as master with both replicas and
 * both other Sentinels (a failover before that would not be the one people
 * run). 0, or a negative status with a message; on failure nothing is left
 * running. @opts may be NULL (the defaults above).
 */
int lb_sentinel_topo_start(struct lb_sentinel_topo *t, const struct lb_sentinel_opts *opts);
/* The same with every link through a relay (@net: the relay's listeners,
 * already up, and where to tell it each part's port). */
int lb_sentinel_topo_start_net(struct lb_sentinel_topo *t, const struct lb_sentinel_opts *opts,
			       const struct lb_topo_net *net);
/* The part reached at @front (a port Sentinel names), or -1. */
int lb_sentinel_topo_part_at(const struct lb_sentinel_topo *t, int front);
/* Stop and remove every server and Sentinel. Accepts a zeroed topology. */
void lb_sentinel_topo_destroy(struct lb_sentinel_topo *t);
/* The port Sentinel @i advertises for the master now (SENTINEL
 * get-master-addr-by-name: a front), or a negative status. */
int lb_sentinel_topo_master_port(const struct lb_sentinel_topo *t, int i);

/* What a Sentinel published, as the watcher reports it. */
enum lb_sentinel_news {
	LB_SENTINEL_SDOWN, LB_SENTINEL_ODOWN, LB_SENTINEL_SWITCH, LB_SENTINEL_DEMOTE,
	LB_SENTINEL_CHOSEN, /* the leader picked the replica it promotes (+selected-slave) */
	LB_SENTINEL_FAILOVER_END /* the failover is over (+failover-end; the user's Sentinels) */
};

/*
 * Fork a process that subscribes to Sentinel 0's +sdown, +odown and
 * +switch-master messages about the primary, and +convert-to-slave (a
 * server that came back as a primary, told to become a replica), and calls
 * @report (in that process) for each: @port is the new primary's front for a
 * switch, the demoted server's for a demotion, else the old primary's. It dies with the caller; the caller SIGKILLs and reaps it.
 * Returns its pid or a negative status.
 */
pid_t lb_sentinel_topo_watch(const struct lb_sentinel_topo *t,
			     void (*report)(void *arg, enum lb_sentinel_news what, int port),
			     void *arg);
/* The same on the user's Sentinels (--sentinel; each with its AUTH), about
 * the master named @master only: every Sentinel is heard, and each piece of
 * news about a server is reported once, by the first to tell it, between two
 * switches of the primary. A Sentinel that cannot be reached is skipped, and
 * said in @why; with none, no process: LB_EREDIS. */
pid_t lb_sentinel_watch_theirs(const struct lb_addr *s, int n, const char *master,
			       void (*report)(void *arg, enum lb_sentinel_news what, int port),
			       void *arg, char *why, size_t len);

/* An event's value (topology.h parts) naming a server of the user's
 * deployment, by the port Sentinel gave: LB_PART_PORT0 + port. */
#define LB_PART_PORT0 1000000

#endif
