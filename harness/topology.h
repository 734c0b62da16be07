/*
 * topology.h - deployments as people run them, started on loopback: today a
 * primary with two replicas behind three Sentinels (docs/topologies.md).
 *
 * Every server and Sentinel is an embedded redis-server (rserver.h): free
 * ports, private temporary directories, no persistence, PR_SET_PDEATHSIG, so
 * a kill -9 of lockbench leaves none of them behind. Sentinels run
 * `redis-server sentinel.conf --sentinel` (no extra package).
 */
#ifndef LB_TOPOLOGY_H
#define LB_TOPOLOGY_H

#include <stdint.h>
#include <sys/types.h>

#include "rserver.h"

#define LB_SENTINEL_MASTER "lockbench"
#define LB_TOPO_REPLICAS 2
#define LB_TOPO_SENTINELS 3

struct lb_sentinel_opts {
	int64_t down_after_ms;      /* Sentinel's down-after-milliseconds (1000) */
	int64_t failover_timeout_ms; /* failover-timeout (default 5000) */
	int quorum;                 /* Sentinels that must agree the primary is down (2) */
	int64_t ready_timeout_ms;   /* how long to wait for a watched topology (30000) */
};

struct lb_sentinel_topo {
	struct lb_server *primary;
	/* replica 0 has replica-priority 10 and is promoted first; replica 1 has 100 */
	struct lb_server *replica[LB_TOPO_REPLICAS];
	struct lb_server *sentinel[LB_TOPO_SENTINELS];
	struct lb_sentinel_opts opts;
};

/*
 * Start the primary, its replicas (in sync) and the Sentinels, and return
 * only once every Sentinel sees the primary as master with both replicas and
 * both other Sentinels (a failover before that would not be the one people
 * run). 0, or a negative status with a message; on failure nothing is left
 * running. @opts may be NULL (the defaults above).
 */
int lb_sentinel_topo_start(struct lb_sentinel_topo *t, const struct lb_sentinel_opts *opts);
/* The same in two steps, for a run that puts a relay between replica 0 and
 * the primary: the primary alone, then (with the relay's port in front of
 * it as @replica0_link, or the primary's own port) the rest. On failure the
 * second step leaves nothing running, the primary included. */
int lb_sentinel_topo_start_primary(struct lb_sentinel_topo *t, const struct lb_sentinel_opts *opts);
int lb_sentinel_topo_start_rest(struct lb_sentinel_topo *t, int replica0_link);
/* Stop and remove every server and Sentinel. Accepts a zeroed topology. */
void lb_sentinel_topo_destroy(struct lb_sentinel_topo *t);
/* The port Sentinel @i advertises for the master now (SENTINEL
 * get-master-addr-by-name), or a negative status. */
int lb_sentinel_topo_master_port(const struct lb_sentinel_topo *t, int i);

/* What a Sentinel published, as the watcher reports it. */
enum lb_sentinel_news { LB_SENTINEL_SDOWN, LB_SENTINEL_ODOWN, LB_SENTINEL_SWITCH };

/*
 * Fork a process that subscribes to Sentinel 0's +sdown, +odown and
 * +switch-master messages about the primary and calls @report (in that
 * process) for each: @port is the new primary's for a switch, else the
 * primary's. It dies with the caller; the caller SIGKILLs and reaps it.
 * Returns its pid or a negative status.
 */
pid_t lb_sentinel_topo_watch(const struct lb_sentinel_topo *t,
			     void (*report)(void *arg, enum lb_sentinel_news what, int port),
			     void *arg);

#endif
