/*
 * cluster.h - a Redis Cluster as people deploy it, on loopback: three
 * primaries and three replicas (docs/topologies.md), every link through
 * lockbench's relay, clients' and the cluster bus's alike.
 *
 * Part i (0..2) is primary i, part 3 + i its replica; part i is also party
 * i of the relay (relay.h), client c party LB_TOPO_PARTS + c, as on the
 * Sentinel topology. Every run's keys share one hash tag whose slot is
 * served by primary 0 (lb_cluster_prefix), so node faults on node 0 hit the
 * lock's shard.
 *
 * The cluster is built by lockbench, not `redis-cli --cluster create`: slot
 * ranges, CLUSTER MEET and CLUSTER REPLICATE, so that which replica follows
 * which primary is fixed (a scenario names them) rather than redis-cli's
 * choice. Each server runs with `cluster-port` set to a free port of its own
 * (the bus need not be data port + 10000, so any free data port will do),
 * connects out from its party address (`bind-source-addr`), and announces
 * its relay fronts (`cluster-announce-ip/port/bus-port`): every address a
 * node or client learns (CLUSTER SLOTS, MOVED, gossip, a replica's primary)
 * is a front.
 */
#ifndef LB_CLUSTER_H
#define LB_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rserver.h"

#define LB_CLUSTER_SHARDS 3
#define LB_CLUSTER_NODES (2 * LB_CLUSTER_SHARDS)
#define LB_CLUSTER_SLOTS 16384

/* Every link through the relay: node i's data port is reached at
 * front[i] and its bus at bus_front[i]; its ports go to *port[i] and
 * *bus_port[i] (the relay's upstreams) as it is set up. */
struct lb_cluster_net {
	int front[LB_CLUSTER_NODES];
	int bus_front[LB_CLUSTER_NODES];
	_Atomic int *port[LB_CLUSTER_NODES];
	_Atomic int *bus_port[LB_CLUSTER_NODES];
};

struct lb_cluster_opts {
	int64_t node_timeout_ms;    /* cluster-node-timeout (1000) */
	int64_t ready_timeout_ms;   /* how long to wait for a settled cluster (30000) */
};

struct lb_cluster {
	struct lb_server *node[LB_CLUSTER_NODES];
	struct lb_cluster_opts opts;
	int front[LB_CLUSTER_NODES];
	int bus_front[LB_CLUSTER_NODES];
	char args[LB_CLUSTER_NODES][16][32]; /* the servers' extra arguments (borrowed) */
	const char *argv[LB_CLUSTER_NODES][17];
};

/*
 * Start the six servers, give primary i slots [i * 16384 / 3, (i + 1) *
 * 16384 / 3), join them, make node 3 + i a replica of node i, and return
 * once every node sees the cluster ok with three primaries and three
 * replicas and every replica's link is up. @net may be NULL (no relay:
 * fronts are the servers' own ports). 0, or a negative status with a
 * message; on failure nothing is left running.
 */
int lb_cluster_start(struct lb_cluster *c, const struct lb_cluster_opts *opts,
		     const struct lb_cluster_net *net);
/* Stop and remove every node. Accepts a zeroed cluster. */
void lb_cluster_destroy(struct lb_cluster *c);
/* The node reached at @front (a data front), or -1. */
int lb_cluster_node_at(const struct lb_cluster *c, int front);
/* "primary 0" .. "replica 2" (replica i follows primary i at the start). */
const char *lb_cluster_part_name(int part);
/* "host:port,host:port,...": every node's front, for lb_node_use_cluster. */
void lb_cluster_seeds(const struct lb_cluster *c, char *buf, size_t len);
/* What the cluster agreed on, as the watcher reports it. */
enum lb_cluster_news {
	LB_CLUSTER_FAIL,   /* node @node is down by the majority's account (FAIL) */
	LB_CLUSTER_SWITCH, /* node @node now serves primary 0's slots (a failover) */
	LB_CLUSTER_DOWN    /* node @node (0 or 3) says cluster_state:fail: it refuses keys
			      (a minority-side primary, once cluster-node-timeout
			      has passed without a majority) */
};
/*
 * Fork a process that reads the cluster's own view (CLUSTER NODES of
 * primary 1, else of any node that answers, every 50 ms, straight to the
 * servers, not through the relay), and the cluster_state (CLUSTER INFO) of
 * the lock's shard, primary 0 and replica 0, and calls @report (in that
 * process) at each change. It dies with the caller; the caller SIGKILLs and reaps it.
 * Returns its pid or a negative status.
 */
pid_t lb_cluster_watch(const struct lb_cluster *c,
		       void (*report)(void *arg, enum lb_cluster_news what, int node), void *arg);
/* Write into @prefix a run prefix "{lb:TOKEN}:" whose hash slot primary 0
 * serves, drawing tokens with lb_token_new. 0 or a negative status. */
int lb_cluster_prefix(char *prefix, size_t len);

#endif
