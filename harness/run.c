/*
 * run.c - the parent of a run: servers, shared region, clients, supervision,
 * reaping, and turning the shared records into a judged history.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adapter.h"
#include "faults.h"
#include "keywatch.h"
#include "rserver.h"
#include "run.h"
#include "scenario.h"
#include "shared.h"
#include "signals.h"
#include "topology.h"
#include "cluster.h"

#define RECORD_BUDGET_BYTES (INT64_C(8) << 30) /* virtual, MAP_NORESERVE */

_Static_assert(LB_MAX_CLIENTS + 16 <= LB_MAX_CHILDREN,
	       "signals.c must track every client, the relay and helpers");

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
};

static int64_t rel_now(const struct run_ctx *r)
{
	return lb_now_ns() - r->sh->t0_ns;
}

static int parse_urls(struct run_ctx *r, const char *urls)
{
	char buf[2048], *save = NULL;
	struct lb_node all[LB_MAX_NODES + 1];
	size_t n = 0, need = r->n_lock;

	if (strlen(urls) >= sizeof(buf))
		return LB_EINVAL;
	strcpy(buf, urls);
	for (char *u = strtok_r(buf, ",", &save); u; u = strtok_r(NULL, ",", &save)) {
		if (n == LB_MAX_NODES + 1 || lb_node_parse_url(u, &all[n]) < 0) {
			lb_errorf("bad --redis URL '%s': expected redis://[user:pass@]host:port", u);
			return LB_EINVAL;
		}
		n++;
	}
	if (n < need) {
		lb_errorf("%s needs %zu lock nodes but --redis names %zu",
			  r->cfg->strategy->name, need, n);
		return LB_EINVAL;
	}
	for (size_t i = 0; i < need; i++)
		r->lock[i] = all[i];
	/* the resource: a further URL if given, else the first node (own keys) */
	r->resource = n > need ? all[need] : all[0];
	return 0;
}

/* --sentinel: lock node 0 is the primary the user's Sentinels name (asked on
 * every connect, node.h); the resource is the first --redis URL if given,
 * else that primary (its own keys, under the run's prefix). */
static int use_their_sentinels(struct run_ctx *r)
{
	const struct lb_run_cfg *cfg = r->cfg;

	if (r->n_lock != 1) {
		lb_errorf("--sentinel: %s needs %zu lock nodes; a Sentinel deployment has one primary",
			  cfg->strategy->name, r->n_lock);
		return LB_EINVAL;
	}
	lb_node_init_local(&r->lock[0], 0, 2000);
	if (lb_node_use_sentinels(&r->lock[0], cfg->sentinel_urls, cfg->sentinel_master) < 0) {
		lb_errorf("bad --sentinel list '%s': expected host:port[,host:port...] (redis:// "
			  "optional, at most %d)", cfg->sentinel_urls, LB_MAX_SENTINELS);
		return LB_EINVAL;
	}
	r->resource = r->lock[0];
	if (cfg->redis_urls) {
		char first[256];
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(cfg->redis_urls, ","),
			 cfg->redis_urls);
		lb_node_init_local(&r->resource, 0, 2000);
		if (lb_node_parse_url(first, &r->resource) < 0) {
			lb_errorf("bad --redis URL '%s': expected redis://[user:pass@]host:port", first);
			return LB_EINVAL;
		}
	}
	return 0;
}

/* libfakeclock.so where make or make install puts it (beside the binary, or
 * ../lib/lockbench/), or $LOCKBENCH_CLOCK_SHIM. false when there is none. */
static bool find_shim(struct run_ctx *r)
{
	const char *env = getenv("LOCKBENCH_CLOCK_SHIM");

	if (env && *env)
		snprintf(r->shim, sizeof(r->shim), "%s", env);
	else if (!lb_find_installed("libfakeclock.so", "lib", r->shim, sizeof(r->shim)))
		return false;
	return access(r->shim, R_OK) == 0;
}

/* Processes this user runs now (RLIMIT_NPROC counts every one of them). */
static size_t user_processes(void)
{
	DIR *d = opendir("/proc");
	struct stat st;
	size_t n = 0;
	char path[300];

	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9') {
			snprintf(path, sizeof(path), "/proc/%.200s", e->d_name);
			n += stat(path, &st) == 0 && st.st_uid == geteuid();
		}
	if (d)
		closedir(d);
	return n;
}

/*
 * The descriptors a run needs, against RLIMIT_NOFILE, raised to the hard
 * limit first (servers inherit it). The relay holds a listener per link and
 * two descriptors per connection through it, about one connection per link;
 * a server holds one connection per client. Refused with the limit named
 * rather than run into EMFILE, which would quietly starve the relay.
 */
static int fd_budget(const struct lb_run_cfg *cfg, size_t n_lock, bool relay)
{
	struct rlimit rl;
	size_t links = relay ? (size_t)cfg->clients * (n_lock + 1) + 1 : 0;
	if (cfg->sentinel || cfg->cluster) /* every part's listeners; a client's lookups and
					      its primary; the cluster bus */
		links += 2 * LB_TOPO_PARTS + 2 * (size_t)cfg->clients + 64;
	size_t need = lb_relay_fds_needed(links, links) + 64;

	if ((size_t)cfg->clients + 96 > need)
		need = (size_t)cfg->clients + 96;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && need > rl.rlim_cur) {
		lb_errorf("%d clients need about %zu open files (%s), but RLIMIT_NOFILE allows %llu "
			  "even raised to its hard limit: raise it (ulimit -Hn, then ulimit -n) or run "
			  "fewer clients", cfg->clients, need, relay ? "the relay holds a listener and a "
			  "connection's two ends per client and server" : "a connection per client on "
			  "each server", (unsigned long long)rl.rlim_cur);
		return LB_EINVAL;
	}
	/* processes: every client (and its adapter), the servers, the relay, on
	 * top of what this user already runs (RLIMIT_NPROC counts them all) */
	size_t procs = (size_t)cfg->clients * (lb_strategy_is_external(cfg->strategy) ? 2 : 1) + 32;
	if (getrlimit(RLIMIT_NPROC, &rl) < 0)
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NPROC, &rl);
		getrlimit(RLIMIT_NPROC, &rl);
	}
	size_t mine = user_processes();
	if (rl.rlim_cur != RLIM_INFINITY && geteuid() != 0 && procs + mine > rl.rlim_cur) {
		lb_errorf("%d clients need about %zu processes, and this user runs %zu already, but "
			  "RLIMIT_NPROC allows %llu: raise it (ulimit -u) or run fewer clients",
			  cfg->clients, procs, mine, (unsigned long long)rl.rlim_cur);
		return LB_EINVAL;
	}
	return 0;
}

static bool scenario_has(const struct lb_scenario *sc, enum lb_action a)
{
	for (int i = 0; sc && i < sc->n_faults; i++)
		if (sc->faults[i].action == a)
			return true;
	return false;
}

/* The relay of network faults: one link per (client, lock node) and per
 * client to the resource, and the replication link of a failover; on the
 * Sentinel topology, one link per part instead of the lock node's, shared
 * by every party (relay.h) and following the part's port once it starts. */
static int start_relay(struct run_ctx *r)
{
	const struct lb_run_cfg *cfg = r->cfg;
	size_t per = r->n_lock + 1, n = (size_t)cfg->clients * per + 1 + 2 * LB_TOPO_PARTS, k = 0;
	bool mesh = cfg->sentinel || cfg->cluster;
	struct lb_relay_link *links = calloc(n, sizeof(*links));

	if (!links)
		return LB_ENOMEM;
	for (int c = 0; c < cfg->clients; c++) {
		for (size_t i = 0; i < r->n_lock && !mesh; i++)
			links[k++] = (struct lb_relay_link){ .ctl = &r->sh->link[c][i],
							     .follow = &r->sh->node_port[i] };
		links[k++] = (struct lb_relay_link){ .ctl = &r->sh->link[c][LB_RELAY_RESOURCE],
						     .upstream = r->resource.port };
	}
	for (int j = 0; j < LB_TOPO_PARTS && mesh; j++)
		links[k++] = (struct lb_relay_link){ .ctl = &r->sh->mesh_front[j],
						     .follow = &r->sh->topo_port[j],
						     .party_ctl = &r->sh->mesh[0][j],
						     .party_stride = LB_TOPO_PARTS,
						     .n_parties = LB_TOPO_PARTS + cfg->clients };
	for (int j = 0; j < LB_TOPO_PARTS && cfg->cluster; j++) /* the bus, cut with the data */
		links[k++] = (struct lb_relay_link){ .ctl = &r->sh->mesh_bus_front[j],
						     .follow = &r->sh->topo_bus_port[j],
						     .party_ctl = &r->sh->mesh[0][j],
						     .party_stride = LB_TOPO_PARTS,
						     .n_parties = LB_TOPO_PARTS + cfg->clients };
	if (!mesh && scenario_has(cfg->scenario, LB_ACT_FAILOVER)) /* the primary's port */
		links[k++] = (struct lb_relay_link){ .ctl = &r->sh->repl_link,
						     .upstream = r->srv[0]->port };
	pid_t pid = lb_relay_start(links, k, &r->sh->relay_epoch);
	free(links);
	if (pid < 0)
		return (int)pid;
	r->relay = pid;
	return 0;
}

/* A replica of node 0, in sync before the run starts; through the relay
 * when a failover will hold its link back. */
static int start_replica(struct run_ctx *r)
{
	int link = atomic_load(&r->sh->repl_link.port);

	r->replica = lb_server_start_replica(r->srv[0]->port, link > 0 ? link : r->srv[0]->port, 5000);
	return r->replica ? 0 : LB_ESYS;
}

/* In the watcher: what a Sentinel published, on the history's clock; the
 * value is the part it names (topology.h). */
static void sentinel_news(void *arg, enum lb_sentinel_news what, int port)
{
	static const int kinds[] = { LB_EV_SDOWN, LB_EV_ODOWN, LB_EV_SWITCH_MASTER, LB_EV_DEMOTE,
				     LB_EV_FAILOVER_CHOSEN };
	struct run_ctx *r = arg;
	lb_event_emit(r->sh, kinds[what], -1, 0, lb_sentinel_topo_part_at(&r->topo, port));
}

/* Lock node 0 as people deploy it: a primary, two replicas, three Sentinels,
 * every link through the relay, which is up first (its listeners are the
 * addresses the parts announce); every client finds the primary through the
 * Sentinels (node.h), and a watcher records what they publish. The primary
 * is srv[0], so that node faults act on it. */
static int start_sentinel(struct run_ctx *r)
{
	struct lb_topo_net net;
	char urls[256];
	size_t o = 0;

	for (int j = 0; j < LB_TOPO_PARTS; j++) {
		net.front[j] = atomic_load(&r->sh->mesh_front[j].port);
		net.port[j] = &r->sh->topo_port[j];
	}
	const struct lb_scenario *sc = r->cfg->scenario;
	const struct lb_run_cfg *cfg = r->cfg;
	struct lb_sentinel_opts so = { /* a scenario's, or sweep's (lb_run_opts_apply_scenario) */
		.down_after_ms = cfg->down_after_ms,
		.min_replicas = sc ? sc->min_replicas : 0,
		.min_replicas_max_lag = cfg->min_replicas_max_lag,
	};
	if (lb_sentinel_topo_start_net(&r->topo, &so, &net) < 0)
		return LB_ESYS;
	r->srv[0] = r->topo.primary;
	lb_node_init_local(&r->lock[0], r->topo.primary->port, 2000);
	atomic_store(&r->sh->node_port[0], r->topo.primary->port);
	for (int i = 0; i < LB_TOPO_SENTINELS; i++)
		o += (size_t)snprintf(urls + o, sizeof(urls) - o, "%s127.0.0.1:%d", i ? "," : "",
				      r->topo.front[LB_PART_SENTINEL0 + i]);
	if (lb_node_use_sentinels(&r->lock[0], urls, LB_SENTINEL_MASTER) < 0)
		return LB_EINVAL;
	r->watcher = lb_sentinel_topo_watch(&r->topo, sentinel_news, r);
	return r->watcher < 0 ? (int)r->watcher : 0;
}

/* In the watcher: what the cluster agreed on, on the history's clock. */
static void cluster_news(void *arg, enum lb_cluster_news what, int node)
{
	struct run_ctx *r = arg;
	static const enum lb_event_kind kind[] = {
		[LB_CLUSTER_FAIL] = LB_EV_NODE_FAILED,
		[LB_CLUSTER_SWITCH] = LB_EV_SWITCH_MASTER,
		[LB_CLUSTER_DOWN] = LB_EV_CLUSTER_DOWN,
	};
	lb_event_emit(r->sh, kind[what], -1, 0, LB_CLUSTER_PART0 + node);
}

/* Lock node 0 in a cluster: six servers behind the relay, the run's keys in
 * one slot that primary 0 serves (the prefix was chosen for it), found by
 * every client through the seeds and MOVED (node.h); a watcher reports the
 * failures and failovers the cluster agrees on. Node 0 is srv[0], so that
 * node faults act on the lock's primary. */
static int start_cluster(struct run_ctx *r)
{
	struct lb_cluster_net net;
	char seeds[256];

	for (int j = 0; j < LB_CLUSTER_NODES; j++) {
		net.front[j] = atomic_load(&r->sh->mesh_front[j].port);
		net.bus_front[j] = atomic_load(&r->sh->mesh_bus_front[j].port);
		net.port[j] = &r->sh->topo_port[j];
		net.bus_port[j] = &r->sh->topo_bus_port[j];
	}
	if (lb_cluster_start(&r->cluster, NULL, &net) < 0)
		return LB_ESYS;
	r->srv[0] = r->cluster.node[0];
	lb_node_init_local(&r->lock[0], r->cluster.node[0]->port, 2000);
	atomic_store(&r->sh->node_port[0], r->cluster.node[0]->port);
	lb_cluster_seeds(&r->cluster, seeds, sizeof(seeds));
	if (lb_node_use_cluster(&r->lock[0], seeds, lb_key_slot(r->prefix, strlen(r->prefix))) < 0)
		return LB_EINVAL;
	r->watcher = lb_cluster_watch(&r->cluster, cluster_news, r);
	return r->watcher < 0 ? (int)r->watcher : 0;
}

/* The key watcher (keywatch.h) on every server lockbench started that holds
 * the lock as a primary, or may: the lock nodes, a failover's replica, a
 * Sentinel topology's primary and replicas, a cluster's shard of the lock. */
static void start_keywatch(struct run_ctx *r)
{
	const struct lb_run_cfg *cfg = r->cfg;
	struct lb_keywatch_server srv[LB_KEYWATCH_MAX_SERVERS];
	int n = 0;

	if (cfg->sentinel) {
		srv[n++] = (struct lb_keywatch_server){ r->topo.primary->port,
							r->topo.front[LB_PART_PRIMARY], 0, true };
		for (int i = 0; i < LB_TOPO_REPLICAS; i++)
			srv[n++] = (struct lb_keywatch_server){ r->topo.replica[i]->port,
								r->topo.front[LB_PART_REPLICA0 + i], 0,
								true };
	} else if (cfg->cluster) {
		for (int i = 0; i < LB_CLUSTER_NODES; i += LB_CLUSTER_SHARDS)
			srv[n++] = (struct lb_keywatch_server){ r->cluster.node[i]->port,
								r->cluster.front[i], 0, true };
	} else {
		for (size_t i = 0; i < r->n_lock; i++)
			srv[n++] = (struct lb_keywatch_server){ r->srv[i]->port, 0, (int)i, false };
		if (r->replica)
			srv[n++] = (struct lb_keywatch_server){ r->replica->port, 0, 0, true };
	}
	lb_keywatch_start_run(&r->kw, srv, n, cfg->strategy, r->prefix, cfg->keys, cfg->duration_s,
			      r->res->foreign_why, sizeof(r->res->foreign_why));
}

/* The watcher's commands on the servers the lock nodes' commands are counted on. */
static uint64_t keywatch_cmds(const struct run_ctx *r)
{
	uint64_t n = 0;
	for (size_t i = 0; i < r->n_lock; i++)
		n += lb_keywatch_commands(&r->kw, r->lock[i].port);
	return n;
}

static int start_servers(struct run_ctx *r)
{
	const struct lb_scenario *sc = r->cfg->scenario;
	struct lb_server_opts lock_opts = { 0 };

	if (sc && lb_scenario_needs_clock_shim(sc))
		lock_opts.clock_shim = r->shim; /* found by run_drawn */
	for (size_t i = 0; i < r->n_lock + 1; i++) {
		if (i == 0 && (r->cfg->sentinel || r->cfg->cluster)) {
			r->n_srv++; /* srv[0], the primary: started after the relay */
			continue;
		}
		r->srv[i] = lb_server_start(i < r->n_lock ? &lock_opts : NULL);
		if (!r->srv[i])
			return LB_ESYS;
		r->n_srv++;
		if (i < r->n_lock)
			lb_node_init_local(&r->lock[i], r->srv[i]->port, 2000);
		else
			lb_node_init_local(&r->resource, r->srv[i]->port, 2000);
	}
	return 0;
}

/* wait-replicas on servers we did not start: node 0 must have a replica. */
static int check_replica(struct run_ctx *r)
{
	redisReply *rep = lb_node_cmd(&r->lock[0], "INFO replication");
	const char *p = rep && rep->type == REDIS_REPLY_STRING ?
			strstr(rep->str, "connected_slaves:") : NULL;
	int n = p ? atoi(p + 17) : 0;

	if (rep)
		freeReplyObject(rep);
	lb_node_close(&r->lock[0]);
	if (n < 1)
		lb_errorf("%s needs a replica of redis://%s:%d, which reports none",
			  r->cfg->strategy->name, r->lock[0].host, r->lock[0].port);
	return n < 1 ? LB_EINVAL : 0;
}

/* Each client holds a connection to every server, the relay one more: a
 * server whose maxclients is lower (Redis lowers it to fit its open-files
 * limit) would refuse some of them, which would look like a fault. */
static int check_maxclients(struct lb_node *n, int clients)
{
	redisReply *rep = lb_node_cmd(n, "CONFIG GET maxclients");
	long long max = -1;
	int rc = 0;

	if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
	    rep->element[1]->type == REDIS_REPLY_STRING)
		max = atoll(rep->element[1]->str);
	if (max >= 0 && max < clients + 32) {
		lb_errorf("redis://%s:%d accepts %lld clients (maxclients), and %d clients need %d "
			  "connections: raise maxclients (and the server's open-files limit) or run fewer "
			  "clients", n->host, n->port, max, clients, clients + 32);
		rc = LB_EINVAL;
	}
	if (rep)
		freeReplyObject(rep);
	lb_node_close(n);
	return rc;
}

/* PING every node; name the one that does not answer. */
static int check_reachable(struct lb_node *n)
{
	redisReply *rep = lb_node_cmd(n, "PING");
	bool ok = rep && rep->type == REDIS_REPLY_STATUS;

	if (!ok)
		lb_errorf("cannot reach redis://%s:%d: %s", n->host, n->port,
			  rep && rep->type == REDIS_REPLY_ERROR ? rep->str :
			  n->why[0] ? n->why : "no answer");
	if (rep)
		freeReplyObject(rep);
	lb_node_close(n);
	return ok ? 0 : LB_EREDIS;
}

/* The resource's scripts, loaded before the clients start: every counter
 * write is then one EVALSHA, never a NOSCRIPT and a second round trip (a
 * write held in the network would otherwise land as a NOSCRIPT error). */
static void load_resource_scripts(struct run_ctx *r)
{
	const struct lb_script *const scripts[] = { &lb_script_counted_write, &lb_script_fenced_read,
						    &lb_script_fenced_write };
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
		redisReply *rep = lb_node_cmd(&r->resource, "SCRIPT LOAD %s", scripts[i]->src);
		if (rep)
			freeReplyObject(rep);
	}
	lb_node_close(&r->resource);
}

/* The servers that can hold the lock's keys, reached directly (never
 * through the relay), named as their logs are: every lock node and the
 * replicas a failover may promote. Their number. */
static size_t lock_servers(struct run_ctx *r, struct lb_node *n, char (*name)[48])
{
	struct lb_server *own[LB_MAX_NODES + LB_TOPO_REPLICAS + 1];
	size_t k = 0;

	if (r->cfg->redis_urls || r->cfg->sentinel_urls) { /* theirs: as the clients reach them */
		for (size_t i = 0; i < r->n_lock; i++) {
			n[i] = r->lock[i];
			n[i].ctx = NULL;
			snprintf(name[i], sizeof(name[0]), "redis://%.26s:%d", n[i].host, n[i].port);
		}
		return r->n_lock;
	}
	for (size_t i = 0; i < r->n_lock; i++)
		own[k++] = r->cfg->cluster ? r->cluster.node[0] : r->srv[i];
	if (r->cfg->cluster)
		own[k++] = r->cluster.node[LB_CLUSTER_SHARDS]; /* node 0's replica */
	for (int j = 0; j < LB_TOPO_REPLICAS && r->cfg->sentinel; j++)
		own[k++] = r->topo.replica[j];
	if (r->replica)
		own[k++] = r->replica;
	for (size_t i = 0; i < k; i++) {
		lb_node_init_local(&n[i], own[i] ? own[i]->port : 0, 2000);
		if (r->cfg->cluster)
			snprintf(name[i], sizeof(name[0]), "redis-cluster-%d", i ? LB_CLUSTER_SHARDS : 0);
		else if (i < r->n_lock)
			snprintf(name[i], sizeof(name[0]), "redis-lock-%zu", i);
		else if (r->cfg->sentinel)
			snprintf(name[i], sizeof(name[0]), "redis-replica-%zu", i - r->n_lock);
		else
			snprintf(name[i], sizeof(name[0]), "redis-replica");
	}
	return k;
}

/* One look at each lock server: its process (run_id), role and command
 * counts (INFO of three sections; one INFO each before Redis 7). */
static size_t lock_snapshot(struct run_ctx *r, struct lb_srv_snap *snap, char (*name)[48])
{
	struct lb_node n[LB_MAX_NODES + LB_TOPO_REPLICAS + 1];
	static const char *const one[] = { "INFO server", "INFO replication", "INFO commandstats" };
	size_t k = lock_servers(r, n, name);

	for (size_t i = 0; i < k; i++) {
		char *text = NULL;
		size_t len = 0;
		redisReply *rep = n[i].port ? lb_node_cmd(&n[i], "INFO server replication commandstats")
					    : NULL;
		for (int j = 0; rep && rep->type == REDIS_REPLY_ERROR && j < 3; j++) { /* Redis < 7 */
			redisReply *part = lb_node_cmd(&n[i], one[j]);
			char *more = part && part->type == REDIS_REPLY_STRING ?
				     realloc(text, len + part->len + 1) : NULL;
			if (more) {
				memcpy(more + len, part->str, part->len + 1);
				len += part->len;
				text = more;
			}
			if (part)
				freeReplyObject(part);
		}
		lb_srv_snap_parse(text ? text : rep && rep->type == REDIS_REPLY_STRING ? rep->str : NULL,
				  &snap[i]);
		free(text);
		if (rep)
			freeReplyObject(rep);
		lb_node_close(&n[i]);
	}
	return k;
}

static void redis_version(struct run_ctx *r)
{
	redisReply *rep = lb_node_cmd(&r->lock[0], "INFO server");
	const char *v;

	if (rep && rep->type == REDIS_REPLY_STRING && (v = strstr(rep->str, "redis_version:")))
		sscanf(v + 14, "%31[^\r\n]", r->res->redis_version);
	if (rep)
		freeReplyObject(rep);
	lb_node_close(&r->lock[0]);
}

static int map_shared(struct run_ctx *r)
{
	const struct lb_run_cfg *cfg = r->cfg;
	int64_t cap = (int64_t)(cfg->duration_s * 50000) + 1024;
	int64_t limit = RECORD_BUDGET_BYTES / cfg->clients / (int64_t)sizeof(struct lb_record);

	if (cap > limit)
		cap = limit;
	r->sh_bytes = sizeof(struct lb_shared) +
		      (size_t)cfg->clients * (size_t)cap * sizeof(struct lb_record);
	r->sh = mmap(NULL, r->sh_bytes, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r->sh == MAP_FAILED) {
		r->sh = NULL;
		lb_errorf("cannot map %zu bytes of shared memory: %s", r->sh_bytes, strerror(errno));
		return LB_ESYS;
	}
	r->sh->cap = (size_t)cap;
	r->sh->clients = cfg->clients;
	r->sh->keys = cfg->keys;
	return 0;
}

static int fork_clients(struct run_ctx *r)
{
	pid_t parent = getpid();

	for (int i = 0; i < r->cfg->clients; i++) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			lb_errorf("fork failed: %s", strerror(errno));
			return LB_ESYS;
		}
		if (pid == 0) {
			if (!lb_child_bind_to_parent(parent))
				_exit(1);
			setpgid(0, 0); /* a group of its own, with its adapter (lb_client_signal) */
			lb_client_main(r->cfg, r->sh, i, r->lock, r->n_lock, &r->resource, r->prefix,
				       r->shim[0] ? r->shim : NULL);
		}
		setpgid(pid, pid); /* from the parent too: no race with the child's own call */
		r->sh->client[i].pid = pid;
		atomic_store(&r->sh->client[i].alive, 1);
		lb_signals_track_child(pid);
	}
	return 0;
}

/* Reap clients that exited; returns how many are still alive. */
static int reap(struct run_ctx *r, bool cut)
{
	int alive = 0, status;

	for (int i = 0; i < r->cfg->clients; i++) {
		struct lb_client_slot *c = &r->sh->client[i];
		if (!atomic_load(&c->alive))
			continue;
		if (waitpid(c->pid, &status, WNOHANG) != c->pid) {
			alive++;
			continue;
		}
		atomic_store(&c->alive, 0);
		lb_signals_untrack_child(c->pid);
		if (WIFEXITED(status) && WEXITSTATUS(status) == LB_CLIENT_EXIT_STRATEGY &&
		    !r->strategy_failed) {
			/* its strategy (an adapter) broke: what it measured is void */
			r->strategy_failed = true;
			atomic_store(&r->sh->stop, 1);
		}
		if (WIFSIGNALED(status) && atomic_load(&c->death_ns) == 0) {
			c->cut = cut;
			if (!cut)
				lb_event_emit(r->sh, LB_EV_DEATH, i, -1, WTERMSIG(status));
		}
		lb_shared_mark_dead(r->sh, i, rel_now(r)); /* keeps an earlier kill time */
	}
	return alive;
}

static void status_line(struct run_ctx *r, int64_t now)
{
	double el = (double)(now - r->sh->t0_ns) / 1e9;
	uint64_t n = atomic_load(&r->sh->sections);

	printf("\r  %5.1f s  %8llu sections  %9.1f /s  violations so far: %llu   ", el,
	       (unsigned long long)n, el > 0 ? (double)n / el : 0.0,
	       (unsigned long long)atomic_load(&r->sh->canary_violations));
	fflush(stdout);
}

static uint64_t rss_kb(pid_t pid)
{
	char path[64], line[256];
	unsigned long long kb = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* Connections the servers hold, from their own count (INFO clients), minus
 * the one asking: what a client costs the servers. */
static void sample_connections(struct run_ctx *r)
{
	uint64_t total = 0;

	for (size_t i = 0; i <= r->n_lock; i++) {
		struct lb_node *n = i < r->n_lock ? &r->lock[i] : &r->resource;
		redisReply *rep = lb_node_cmd(n, "INFO clients");
		const char *p = rep && rep->type == REDIS_REPLY_STRING ?
				strstr(rep->str, "connected_clients:") : NULL;
		if (p && atoll(p + 18) > 0)
			total += (uint64_t)atoll(p + 18) - 1;
		if (rep)
			freeReplyObject(rep);
		lb_node_close(n);
	}
	r->res->server_connections = total;
}

/* Mean RSS of the live clients (each maps the shared region; only the pages
 * it touched count). */
static void sample_rss(struct run_ctx *r)
{
	uint64_t sum = 0, n = 0;

	for (int i = 0; i < r->cfg->clients; i++)
		if (atomic_load(&r->sh->client[i].alive)) {
			uint64_t kb = rss_kb(r->sh->client[i].pid);
			if (kb) {
				sum += kb;
				n++;
			}
		}
	if (n)
		r->res->client_rss_kb = sum / n;
}

/* Adapters of clients that were killed are orphans; lockbench is their
 * subreaper (lb_run), so they come here to be reaped, not left as zombies. */
static void reap_strays(void)
{
	int st;
	while (waitpid(-1, &st, WNOHANG) > 0)
		;
}

static void supervise(struct run_ctx *r)
{
	int64_t rss_at = r->sh->t0_ns + (r->sh->end_ns - r->sh->t0_ns) / 2;
	int64_t next_status = r->sh->t0_ns + LB_NS_PER_S;
	int64_t grace_ns = (r->cfg->hold_max_ms + 3 * 2000 + 2000) * LB_NS_PER_MS;

	for (;;) {
		int64_t now = lb_now_ns();
		if (lb_stop_requested() && !atomic_load(&r->sh->stop)) {
			r->res->interrupted = true;
			atomic_store(&r->sh->stop, 1);
		}
		if (now >= r->sh->end_ns || atomic_load(&r->sh->stop))
			break;
		if (reap(r, false) == 0)
			break;
		lb_faults_tick(&r->inj, now - r->sh->t0_ns);
		if (rss_at && now >= rss_at) {
			sample_rss(r);
			sample_connections(r);
			rss_at = 0;
		}
		if (r->cfg->status_line && now >= next_status) {
			status_line(r, now);
			next_status += LB_NS_PER_S;
		}
		/* 2 ms while faults are due (their timing matters); otherwise wake
		 * rarely: on 2 cores the parent competes with clients and servers */
		lb_sleep_ns((r->cfg->scenario ? 2 : 10) * LB_NS_PER_MS);
	}
	atomic_store(&r->sh->stop, 1);
	/* whole microseconds: what summary.csv writes is then exactly what the
	 * figures were computed from, and check computes them again from it */
	r->res->elapsed_s = (double)((lb_now_ns() - r->sh->t0_ns + 500) / 1000) / 1e6;
	if (lb_faults_unfired(&r->inj, r->res->unfired, sizeof(r->res->unfired)) > 0)
		lb_errorf("warning: %s: the scenario's fault %s never fired in this run: it shows "
			  "nothing about it (inconclusive)", r->cfg->strategy->name, r->res->unfired);
	lb_faults_finish(&r->inj); /* resume what is paused before waiting for it */
	if (r->cfg->status_line)
		printf("\n");
	int64_t give_up = lb_now_ns() + grace_ns;
	while (reap(r, false) > 0 && lb_now_ns() < give_up)
		lb_sleep_ns(2 * LB_NS_PER_MS);
	for (int i = 0; i < r->cfg->clients; i++)
		if (atomic_load(&r->sh->client[i].alive)) {
			r->sh->client[i].cut = 1;
			lb_client_signal(r->sh, i, SIGKILL);
			lb_shared_mark_dead(r->sh, i, rel_now(r));
		}
	while (reap(r, true) > 0)
		lb_sleep_ns(LB_NS_PER_MS);
	reap_strays();
}

static int section_cmp(const void *pa, const void *pb)
{
	const struct lb_section *a = pa, *b = pb;
	if (a->enter_ns != b->enter_ns)
		return a->enter_ns < b->enter_ns ? -1 : 1;
	return a->client - b->client;
}

static int event_cmp(const void *pa, const void *pb)
{
	const struct lb_event *a = pa, *b = pb;
	return a->t_ns < b->t_ns ? -1 : a->t_ns > b->t_ns;
}

static int collect_events(struct run_ctx *r)
{
	r->res->events = calloc(LB_MAX_EVENTS, sizeof(*r->res->events));
	if (!r->res->events)
		return LB_ENOMEM;
	size_t n = lb_shared_events(r->sh, r->res->events, LB_MAX_EVENTS);
	r->res->n_events = n;
	r->res->events_dropped = lb_shared_events_dropped(r->sh);
	qsort(r->res->events, n, sizeof(*r->res->events), event_cmp);
	return 0;
}

/* Each client's waiter: its acquire calls since its last enter (shared.h),
 * none of which entered. A client that died in one ends it at its death, and
 * that call's length so far joins the censored waits. */
static int collect_waiters(struct run_ctx *r, int64_t end)
{
	struct lb_run_result *res = r->res;
	int64_t t0 = r->sh->t0_ns;

	res->waiters = calloc((size_t)r->cfg->clients, sizeof(*res->waiters));
	if (!res->waiters)
		return LB_ENOMEM;
	for (int i = 0; i < r->cfg->clients; i++) {
		struct lb_client_slot *c = &r->sh->client[i];
		uint32_t calls = atomic_load(&c->wait_calls);
		int64_t stop = atomic_load(&c->wait_end_ns), tried = atomic_load(&c->wait_try_ns);
		int64_t death = atomic_load(&c->death_ns);
		if (!calls)
			continue;
		struct lb_waiter *w = &res->waiters[res->n_waiters++];
		*w = (struct lb_waiter){ .client = i, .key = i % r->cfg->keys, .calls = calls,
					 .start_ns = atomic_load(&c->wait_start_ns) - t0,
					 .last_try_ns = tried ? tried - t0 : -1,
					 .ended = atomic_load(&c->wait_cut) ? LB_WEND_CUT : LB_WEND_GAVE_UP };
		if (stop) {
			w->end_ns = stop - t0;
			continue;
		}
		/* died in the call: at its death (the harness's cut at the end, or a fault) */
		w->end_ns = death ? death : end;
		w->ended = c->cut ? LB_WEND_CUT : LB_WEND_KILLED;
		lb_hist_add(&res->censored, w->end_ns - (atomic_load(&c->call_start_ns) - t0));
	}
	return 0;
}

/* Shared records -> sections; a record's state says how far it got. */
static int collect(struct run_ctx *r)
{
	struct lb_run_result *res = r->res;
	size_t total = 0, k = 0;

	for (int i = 0; i < r->cfg->clients; i++) {
		struct lb_client_slot *c = &r->sh->client[i];
		size_t n = atomic_load(&c->n_records);
		/* a client killed between publishing a record and counting it */
		if (n < r->sh->cap && atomic_load(&lb_shared_record(r->sh, i, n)->state) != LB_REC_EMPTY)
			atomic_store(&c->n_records, (uint32_t)++n);
		total += n;
		res->attempts += atomic_load(&c->attempts);
		res->acquires += c->acquires;
		res->acquire_timeouts += c->timeouts;
		res->acquire_errors += atomic_load(&c->acquire_errors);
		res->counter_writes += c->counter_writes;
		/* writes sent without a reply: timed out while alive, or in flight
		 * when the client died; each may have landed */
		res->uncertain_writes += c->uncertain_writes +
			(uint64_t)(atomic_load(&c->death_ns) && atomic_load(&c->write_in_flight));
		res->writes_aborted += c->writes_aborted;
		lb_hist_merge(&res->latency, &c->latency);
		lb_hist_merge(&res->censored, &c->censored);
	}
	res->sections = calloc(total ? total : 1, sizeof(*res->sections));
	if (!res->sections)
		return LB_ENOMEM;
	int64_t end = (int64_t)(res->elapsed_s * 1e9);
	for (int i = 0; i < r->cfg->clients; i++) {
		struct lb_client_slot *c = &r->sh->client[i];
		size_t n = atomic_load(&c->n_records);
		int64_t death = atomic_load(&c->death_ns);
		for (size_t j = 0; j < n; j++)
			lb_record_section(lb_shared_record(r->sh, i, j), i, i % r->cfg->keys,
					  (uint32_t)j, death ? death : end, c->cut, &res->sections[k++]);
	}
	res->n_sections = k;
	qsort(res->sections, k, sizeof(*res->sections), section_cmp);
	return collect_waiters(r, end) < 0 ? LB_ENOMEM : collect_events(r);
}

/* The counters' final values, the writes the resource applied, and what the
 * fenced resource refused: read from the resource, in one snapshot per key,
 * not from what the clients believe. */
static void read_counters(struct run_ctx *r)
{
	r->res->counter_final = 0;
	r->res->applied_writes = 0;
	r->res->applied_known = true;
	for (int k = 0; k < r->cfg->keys; k++) {
		redisReply *rep = lb_node_cmd(&r->resource, "MGET %scounter:%d %scounter:%d:stale "
					      "%scounter:%d:applied", r->prefix, k, r->prefix, k,
					      r->prefix, k);
		if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 3) {
			if (rep->element[0]->type == REDIS_REPLY_STRING)
				r->res->counter_final += atoll(rep->element[0]->str);
			if (rep->element[1]->type == REDIS_REPLY_STRING)
				r->res->stale_writes_rejected += (uint64_t)atoll(rep->element[1]->str);
			if (rep->element[2]->type == REDIS_REPLY_STRING)
				r->res->applied_writes += (uint64_t)atoll(rep->element[2]->str);
		} else {
			r->res->applied_known = false; /* the resource did not answer */
		}
		if (rep)
			freeReplyObject(rep);
	}
}

/* On servers we did not start, remove exactly the keys this run created. */
static void delete_own_keys(struct run_ctx *r)
{
	for (int k = 0; k < r->cfg->keys; k++) {
		for (size_t i = 0; i < r->n_lock; i++) {
			redisReply *rep = lb_node_cmd(&r->lock[i], "DEL %slock:%d %slock:%d:fence",
						      r->prefix, k, r->prefix, k);
			if (rep)
				freeReplyObject(rep);
		}
		redisReply *rep = lb_node_cmd(&r->resource, "DEL %scounter:%d %scounter:%d:fence "
					      "%scounter:%d:stale %scounter:%d:applied", r->prefix, k,
					      r->prefix, k, r->prefix, k, r->prefix, k);
		if (rep)
			freeReplyObject(rep);
	}
}

/* Every server's and Sentinel's log, into the run's directory: what the
 * servers said while the faults went on (a Sentinel's +sdown, +vote-for-leader,
 * +selected-slave; a replica's full syncs) sits beside the history. A copy
 * that fails says so and costs nothing else. */
static void keep_logs(struct run_ctx *r)
{
	char name[64];

	if (!r->cfg->out_dir[0])
		return;
	for (size_t i = 0; i < r->n_srv; i++) {
		if (i == 0 && r->cfg->cluster)
			continue; /* cluster node 0, below */
		if (i < r->n_lock)
			snprintf(name, sizeof(name), "redis-lock-%zu.log", i);
		else
			snprintf(name, sizeof(name), "redis-resource.log");
		lb_server_copy_log(r->srv[i], r->cfg->out_dir, name);
	}
	lb_server_copy_log(r->replica, r->cfg->out_dir, "redis-replica.log");
	for (int i = 0; i < LB_TOPO_REPLICAS; i++) {
		snprintf(name, sizeof(name), "redis-replica-%d.log", i);
		lb_server_copy_log(r->topo.replica[i], r->cfg->out_dir, name);
	}
	for (int i = 0; i < LB_TOPO_SENTINELS; i++) {
		snprintf(name, sizeof(name), "sentinel-%d.log", i);
		lb_server_copy_log(r->topo.sentinel[i], r->cfg->out_dir, name);
	}
	for (int i = 0; i < LB_CLUSTER_NODES; i++) {
		snprintf(name, sizeof(name), "redis-cluster-%d.log", i);
		lb_server_copy_log(r->cluster.node[i], r->cfg->out_dir, name);
	}
}

static void run_cleanup(struct run_ctx *r)
{
	if (r->sh) {
		for (int i = 0; i < r->cfg->clients; i++) {
			if (atomic_load(&r->sh->client[i].alive)) {
				lb_client_signal(r->sh, i, SIGKILL);
				waitpid(r->sh->client[i].pid, NULL, 0);
				lb_signals_untrack_child(r->sh->client[i].pid);
			}
			/* an adapter's clock file: a killed client left its own */
			char clock[PATH_MAX];
			snprintf(clock, sizeof(clock), "%.3900s/.clock-%d", r->cfg->out_dir, i);
			if (r->cfg->out_dir[0])
				unlink(clock);
		}
		munmap(r->sh, r->sh_bytes);
	}
	if (r->relay > 0) {
		kill(r->relay, SIGKILL);
		waitpid(r->relay, NULL, 0);
		lb_signals_untrack_child(r->relay);
	}
	if (r->watcher > 0) {
		kill(r->watcher, SIGKILL);
		waitpid(r->watcher, NULL, 0);
		lb_signals_untrack_child(r->watcher);
	}
	reap_strays();
	for (size_t i = 0; i < r->n_lock; i++)
		lb_node_close(&r->lock[i]);
	lb_node_close(&r->resource);
	lb_faults_finish(&r->inj);
	lb_keywatch_stop(&r->kw);
	keep_logs(r);
	r->topo.primary = NULL; /* srv[0]'s; the Sentinels go first, then every server */
	lb_sentinel_topo_destroy(&r->topo);
	if (r->cfg->cluster)
		r->srv[0] = NULL; /* the cluster's node 0 */
	lb_cluster_destroy(&r->cluster);
	for (size_t i = 0; i < r->n_srv; i++)
		lb_server_destroy(r->srv[i]);
	lb_server_destroy(r->replica);
	/* anything it started that left its process group (setsid) and so
	 * outlived every kill above */
	if (r->mark[0] && lb_kill_marked(r->mark) > 0)
		reap_strays();
	/* and what also cleared its environment: orphaned, it came to this
	 * process (a child subreaper) */
	if (r->started_ticks && lb_kill_adopted(r->started_ticks) > 0)
		reap_strays();
}

static int run_drawn(const struct lb_run_cfg *cfg, struct lb_run_result *res);

/* A [chaos] scenario's faults are drawn from the run's seed into a copy. */
int lb_run(const struct lb_run_cfg *cfg, struct lb_run_result *res)
{
	if (!cfg->scenario || !cfg->scenario->chaos.on)
		return run_drawn(cfg, res);
	struct lb_run_cfg local = *cfg;
	struct lb_scenario *sc = malloc(sizeof(*sc));
	if (!sc)
		return LB_ENOMEM;
	*sc = *cfg->scenario;
	lb_scenario_draw_chaos(sc, cfg->seed, cfg->clients,
			       cfg->nodes > 0 ? cfg->nodes : (int)cfg->strategy->min_nodes);
	local.scenario = sc;
	int rc = run_drawn(&local, res);
	free(sc);
	return rc;
}

/* The relay carries a scenario's network faults; for library code it also
 * carries partitions (client.c cuts the partitioned client's links), which
 * lockbench's own recipes are told of directly. */
static bool needs_relay(const struct lb_run_cfg *cfg)
{
	return cfg->sentinel || cfg->cluster || (cfg->scenario && (lb_scenario_needs_relay(cfg->scenario) ||
				 (lb_strategy_is_external(cfg->strategy) &&
				  scenario_has(cfg->scenario, LB_ACT_PARTITION))));
}

/* The run's clock starts when every client has its strategy ready (an
 * adapter's process started and configured: a Node library takes a few
 * hundred ms), so that t = 0 means the same for recipes and libraries and no
 * client runs alone while the others start. A client whose strategy failed
 * counts as started (supervise reports it); Ctrl-C or 60 s end the wait. */
static void wait_started(struct run_ctx *r)
{
	int64_t limit = lb_now_ns() + 60 * LB_NS_PER_S;
	while (atomic_load(&r->sh->started) < r->cfg->clients && !atomic_load(&r->sh->stop) &&
	       !lb_stop_requested() && lb_now_ns() < limit)
		lb_sleep_ns(LB_NS_PER_MS);
}

static int preflight_shim(struct run_ctx *r, bool theirs);

/* Before anything starts: what the run cannot do here is a skip (1, the
 * reason in res->skipped, reported by the caller), what is wrong an error. */
static int preflight(struct run_ctx *r, bool theirs)
{
	const struct lb_run_cfg *cfg = r->cfg;
	struct lb_run_result *res = r->res;
	int rc = lb_faults_check(cfg, !theirs, res->skipped, sizeof(res->skipped));

	if (rc == LB_ENOTSUP)
		return 1;
	if (rc < 0) {
		lb_errorf("%s", res->skipped);
		res->skipped[0] = '\0';
		return rc;
	}
	const struct lb_adapter_def *def =
		lb_strategy_is_external(cfg->strategy) ? lb_adapter_def_of(cfg->strategy) : NULL;
	if (theirs && !cfg->own_urls && def && def->outside_key[0]) {
		lb_errorf("%s writes %s, outside the key lockbench gives it (the run's prefix): "
			  "lockbench runs it only on servers it starts itself, never with --redis",
			  cfg->strategy->name, def->outside_key);
		return LB_EINVAL;
	}
	if (def && !lb_adapter_usable(cfg->strategy, res->skipped, sizeof(res->skipped)))
		return 1;
	if ((rc = fd_budget(cfg, r->n_lock, needs_relay(cfg))) < 0)
		return rc;
	return preflight_shim(r, theirs);
}

/* The clock shim: a scenario that moves a server's clock needs it; a
 * library's client clock fault and its connections on lockbench's Sentinels
 * use it where it is found. */
static int preflight_shim(struct run_ctx *r, bool theirs)
{
	const struct lb_run_cfg *cfg = r->cfg;
	struct lb_run_result *res = r->res;
	bool external = lb_strategy_is_external(cfg->strategy);

	if (!theirs && cfg->scenario && lb_scenario_needs_clock_shim(cfg->scenario) &&
	    !find_shim(r)) {
		snprintf(res->skipped, sizeof(res->skipped), "%.64s moves a server's clock and needs "
			 "libfakeclock.so, not found (%.200s); `make` builds it, or set "
			 "LOCKBENCH_CLOCK_SHIM", cfg->scenario->name, r->shim[0] ? r->shim : "beside "
			 "the binary or in ../lib/lockbench");
		return 1;
	}
	if (external && scenario_has(cfg->scenario, LB_ACT_CLOCK) && !find_shim(r))
		r->shim[0] = '\0'; /* the client clock fault will not reach the library */
	/* on lockbench's Sentinels, the relay tells a library's connections apart
	 * by the address the shim makes them come from */
	if (external && cfg->sentinel && !find_shim(r)) {
		r->shim[0] = '\0';
		if (scenario_has(cfg->scenario, LB_ACT_NET_PARTITION)) {
			snprintf(res->skipped, sizeof(res->skipped), "%.64s puts clients on the sides "
				 "of a partition: a library's connections need libfakeclock.so to "
				 "come from the client's own address, not found; `make` builds it, "
				 "or set LOCKBENCH_CLOCK_SHIM", cfg->scenario->name);
			return 1;
		}
	}
	return 0;
}

/* The run's keys, its shared memory and its servers: lockbench's own (with
 * the relay, Sentinels, a cluster or a replica as the run asks) or the
 * user's, each reachable and with room for every client. */
static int setup_servers(struct run_ctx *r, bool theirs)
{
	const struct lb_run_cfg *cfg = r->cfg;
	char rnd[LB_TOKEN_HEX + 1];
	int rc;

	if ((rc = lb_token_new(rnd)) < 0)
		return rc;
	snprintf(r->prefix, sizeof(r->prefix), "lb:%.8s:", rnd);
	/* in a cluster every key of the run shares one slot, primary 0's */
	if (cfg->cluster && (rc = lb_cluster_prefix(r->prefix, sizeof(r->prefix))) < 0)
		return rc;
	strcpy(r->res->run_prefix, r->prefix);
	if ((rc = map_shared(r)) < 0)
		return rc;
	if (cfg->cluster && (cfg->redis_urls || cfg->sentinel_urls || r->n_lock != 1)) {
		lb_errorf("topology = cluster %s", r->n_lock != 1 ? "has one primary for the lock: "
			  "one lock node" : "starts its own servers: it does not go with --redis or "
			  "--sentinel");
		return LB_EINVAL;
	}
	if (cfg->sentinel && (cfg->redis_urls || r->n_lock != 1)) {
		lb_errorf("topology = sentinel %s", cfg->redis_urls ? "starts its own servers and "
			  "Sentinels: it does not go with --redis" : "has one primary: one lock node");
		return LB_EINVAL;
	}
	rc = cfg->sentinel_urls ? use_their_sentinels(r) :
	     cfg->redis_urls ? parse_urls(r, cfg->redis_urls) : start_servers(r);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < r->n_lock; i++)
		atomic_store(&r->sh->node_port[i], r->lock[i].port);
	if (needs_relay(cfg) && (rc = start_relay(r)) < 0)
		return rc;
	if (cfg->sentinel && (rc = start_sentinel(r)) < 0)
		return rc;
	if (cfg->cluster && (rc = start_cluster(r)) < 0)
		return rc;
	if (!theirs && !cfg->sentinel && !cfg->cluster && ((cfg->scenario && cfg->scenario->replica) ||
				 cfg->strategy->needs_replica) && (rc = start_replica(r)) < 0)
		return rc;
	for (size_t i = 0; i < r->n_lock && rc == 0; i++)
		rc = check_reachable(&r->lock[i]);
	if (rc == 0)
		rc = check_reachable(&r->resource);
	for (size_t i = 0; i < r->n_lock && rc == 0; i++)
		rc = check_maxclients(&r->lock[i], cfg->clients);
	if (rc == 0)
		rc = check_maxclients(&r->resource, cfg->clients);
	if (rc == 0 && theirs && cfg->strategy->needs_replica)
		rc = check_replica(r);
	return rc;
}

/* The key watcher on lockbench's own servers, or why there is none. */
static void setup_keywatch(struct run_ctx *r, bool theirs)
{
	struct lb_run_result *res = r->res;
	const char *no_watch = getenv("LOCKBENCH_NO_KEYWATCH");

	if (!theirs && !(no_watch && *no_watch)) {
		start_keywatch(r);
		if (!r->kw.log)
			lb_errorf("warning: the servers' count of foreign releases is not measured: %s",
				  res->foreign_why);
		return;
	}
	snprintf(res->foreign_why, sizeof(res->foreign_why), "%s", !theirs ?
		 "LOCKBENCH_NO_KEYWATCH is set: the servers were not watched" : r->cfg->own_urls ?
		 "a benchmark does not watch its servers (the watcher costs throughput)" :
		 "the servers are not lockbench's: it does not watch them");
}

/* Each applied write sets the counter to what its section read plus one, so
 * every lost update is an applied write the final value does not count. The
 * resource counts the writes it applied, acknowledged or not: exact. Without
 * that count, the writes whose reply never came make a range. */
static void count_lost_updates(const struct lb_run_cfg *cfg, struct lb_run_result *res)
{
	if (res->applied_known) {
		res->lost_updates = (long long)res->applied_writes - res->counter_final;
		res->lost_updates_max = res->lost_updates;
	} else {
		res->lost_updates = (long long)res->counter_writes - res->counter_final;
		res->lost_updates_max = res->lost_updates + (long long)res->uncertain_writes;
	}
	if (cfg->work != LB_WORK_COUNTER)
		res->lost_updates = res->lost_updates_max = 0;
	if (res->lost_updates < 0)
		res->lost_updates = 0;
	if (res->lost_updates_max < 0)
		res->lost_updates_max = 0;
}

/* The oracle's verdict on the history, the servers' foreign releases, the
 * outcome and the figures derived from them. */
static int judge(struct run_ctx *r)
{
	const struct lb_run_cfg *cfg = r->cfg;
	struct lb_run_result *res = r->res;
	int64_t end_ns = (int64_t)(res->elapsed_s * 1e9);

	res->per_client = calloc((size_t)cfg->clients, sizeof(*res->per_client));
	if (!res->per_client)
		return LB_ENOMEM;
	struct lb_history hist = { .s = res->sections, .n = res->n_sections, .w = res->waiters,
				   .n_w = res->n_waiters, .clients = cfg->clients, .end_ns = end_ns,
				   .ttl_ns = cfg->ttl_ms * LB_NS_PER_MS };
	int rc = lb_oracle_judge_history(&hist, &res->verdict, res->per_client);
	struct lb_foreign_opts fo = { LB_KEYWATCH_SLOP_NS, cfg->ttl_ms * LB_NS_PER_MS, end_ns };
	if (rc == 0)
		rc = lb_foreign_verdict(&res->verdict, res->sections, res->n_sections, res->key_events,
					res->n_key_events, cfg->strategy->blind_release, &fo,
					&res->foreign);
	if (res->foreign.unjudged)
		snprintf(res->foreign_why, sizeof(res->foreign_why), "on several lock nodes a set is "
			 "matched to its section only by the token the strategy says (token=), and %.60s "
			 "says none: the servers' events cannot be judged", cfg->strategy->name);
	struct lb_class_input ci = {
		.v = &res->verdict, .lost_min = res->lost_updates, .lost_max = res->lost_updates_max,
		.attempts = res->attempts, .acquire_errors = res->acquire_errors,
		.acquire_timeouts = res->acquire_timeouts,
		.stopped = res->stale_writes_rejected + res->writes_aborted,
		.unfired = res->unfired[0] ? res->unfired : NULL,
		.interrupted = res->interrupted ? lb_stop_signal() : 0,
	};
	res->observed = lb_classify(&ci, res->observed_why, sizeof(res->observed_why));
	res->throughput_per_s = res->elapsed_s > 0 ? (double)res->n_sections / res->elapsed_s : 0;
	res->cmds_per_section = res->lock_commands_known && res->n_sections ?
				(double)res->lock_commands / (double)res->n_sections : NAN;
	if (rc == 0)
		rc = lb_held_time(res->sections, res->n_sections, end_ns, &res->held_s,
				  &res->inside_s);
	struct lb_cost_shape shape = { .wait = &cfg->wait, .clients = cfg->clients,
				       .keys = cfg->keys, .nodes = (int)r->n_lock, .ttl_ms = cfg->ttl_ms,
				       .elapsed_s = res->elapsed_s, .sections = res->n_sections,
				       .inside_s = res->inside_s };
	res->cost_bound_known = lb_lock_cost_bound(&shape, &res->cost_bound, res->cost_bound_why,
						   sizeof(res->cost_bound_why)) == 0;
	return rc;
}

/* The servers the lock lives on, before and after the run. */
struct lock_snaps {
	struct lb_srv_snap before[LB_MAX_NODES + LB_TOPO_REPLICAS + 1];
	struct lb_srv_snap after[LB_MAX_NODES + LB_TOPO_REPLICAS + 1];
	char name[LB_MAX_NODES + LB_TOPO_REPLICAS + 1][48]; /* as their logs are named */
	size_t n;
};

/* The lock's commands per section: what its servers counted between the
 * snapshots, less what the key watcher sent them meanwhile (r->kw_cmds). */
static void count_lock_commands(struct run_ctx *r, struct lock_snaps *snap)
{
	struct lb_run_result *res = r->res;
	const char *names[LB_MAX_NODES + LB_TOPO_REPLICAS + 1];

	lock_snapshot(r, snap->after, snap->name);
	for (size_t i = 0; i < snap->n; i++)
		names[i] = snap->name[i];
	res->lock_commands_known = lb_lock_commands_between(snap->before, snap->after, names,
							    snap->n, r->n_lock, &res->lock_commands,
							    res->lock_commands_why,
							    sizeof(res->lock_commands_why));
	if (res->lock_commands_known)
		res->lock_commands -= r->kw_cmds < res->lock_commands ? r->kw_cmds : res->lock_commands;
}

/* The clients, from go to the end: the scenario's faults on cue, then what
 * they wrote gathered and the servers' counters read. */
static int contend(struct run_ctx *r, struct lock_snaps *snap, bool theirs)
{
	const struct lb_run_cfg *cfg = r->cfg;
	struct lb_run_result *res = r->res;
	int rc;

	if ((rc = fork_clients(r)) < 0)
		return rc;
	wait_started(r);
	snap->n = lock_snapshot(r, snap->before, snap->name); /* at t0: the clients wait for go */
	r->kw_cmds = keywatch_cmds(r);
	r->inj = (struct lb_injector){ .cfg = cfg, .sc = cfg->scenario, .sh = r->sh,
				       .lock_srv = theirs ? NULL : r->srv, .n_lock = r->n_lock,
				       .replica = cfg->sentinel ? r->topo.replica[0] :
						  cfg->cluster ? r->cluster.node[LB_CLUSTER_SHARDS] :
						  r->replica,
				       .prefix = r->prefix };
	r->sh->t0_ns = lb_now_ns();
	r->sh->end_ns = r->sh->t0_ns + (int64_t)(cfg->duration_s * 1e9);
	res->t0_mono_ns = r->sh->t0_ns;
	/* what is due at 0 is in place before any client moves (a delay on a
	 * client's links, a client that starts paused) */
	lb_faults_tick(&r->inj, 0);
	atomic_store(&r->sh->go, 1);
	supervise(r);
	if (r->strategy_failed) {
		lb_errorf("the run of %s is void: a client's strategy failed (above); nothing it "
			  "measured is reported", cfg->strategy->name);
		return LB_EPROTO;
	}
	if (r->kw.log && lb_keywatch_finish(&r->kw, r->sh->t0_ns, &res->key_events,
					    &res->n_key_events, res->foreign_why,
					    sizeof(res->foreign_why)) < 0)
		lb_errorf("warning: the servers' count of foreign releases is not measured: %s",
			  res->foreign_why);
	r->kw_cmds = keywatch_cmds(r) - r->kw_cmds; /* what the watcher added meanwhile */
	lb_keywatch_stop(&r->kw);
	if ((rc = collect(r)) < 0)
		return rc;
	read_counters(r);
	return 0;
}

/* One run: pre-flight, servers, the contention, the judgement; every
 * process it started stopped on every path. A skip returns 0 with the reason
 * in res->skipped. */
static int run_drawn(const struct lb_run_cfg *cfg, struct lb_run_result *res)
{
	struct run_ctx r = { .cfg = cfg, .res = res };
	struct lock_snaps snap = { .n = 0 };
	int rc;

	memset(res, 0, sizeof(*res));
	r.n_lock = (size_t)(cfg->nodes > 0 ? cfg->nodes : (int)cfg->strategy->min_nodes);
	prctl(PR_SET_CHILD_SUBREAPER, 1); /* the adapters of killed clients come back here */
	lb_janitor_start();              /* if lockbench is killed, it kills what is marked */
	lb_mark_run(r.mark, sizeof(r.mark));
	/* the next tick: the janitor, started just before, is never taken */
	r.started_ticks = lb_proc_ticks_now() + 1;
	/* servers lockbench did not start: --redis, or the primary of --sentinel */
	bool theirs = cfg->redis_urls || cfg->sentinel_urls;
	if ((rc = preflight(&r, theirs)) != 0)
		return rc > 0 ? 0 : rc; /* a skip: the caller reports it */
	if ((rc = setup_servers(&r, theirs)) < 0)
		goto out;
	setup_keywatch(&r, theirs);
	redis_version(&r);
	load_resource_scripts(&r);
	if ((rc = contend(&r, &snap, theirs)) < 0)
		goto out;
	count_lost_updates(cfg, res);
	count_lock_commands(&r, &snap);
	res->canary_violations = atomic_load(&r.sh->canary_violations);
	rc = judge(&r);
	if (theirs)
		delete_own_keys(&r);
out:
	run_cleanup(&r);
	return rc;
}

void lb_run_result_free(struct lb_run_result *res)
{
	free(res->sections);
	free(res->per_client);
	free(res->events);
	free(res->waiters);
	res->waiters = NULL;
	free(res->key_events);
	lb_foreign_result_free(&res->foreign);
	res->key_events = NULL;
	res->sections = NULL;
	res->per_client = NULL;
	res->events = NULL;
}
