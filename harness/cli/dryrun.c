/*
 * dryrun.c - `lockbench run --dry-run`: what a run will do to the servers,
 * before anything is sent: which servers, which keys, every command
 * lockbench and the strategy send, and what each of the scenario's faults
 * will do there (or why it will be skipped). Nothing is connected to.
 */
#include "dryrun.h"

#include "ensemble.h"

#include "esc.h"
#include "faults.h"
#include "node.h"

#include <string.h>

/* rediss:// Sentinels or seeds: how lockbench's connections reach them. */
static void print_routes(FILE *f, const struct lb_run_cfg *cfg)
{
	const char *urls = cfg->cluster_urls ? cfg->cluster_urls : cfg->sentinel_urls;

	if (urls && !strncasecmp(urls, "rediss://", 9))
		fprintf(f, "             over TLS: a tunnel lockbench starts (stunnel4, a free "
			   "loopback port) in front of each %s and of each server named as the run "
			   "starts (%s: %s), checking its certificate; a PING through each first; "
			   "a server named later is not reached\n",
			cfg->cluster_urls ? "seed" : "Sentinel", cfg->cluster_urls ? "CLUSTER SLOTS" :
			"SENTINEL get-master-addr-by-name, REPLICAS and MASTER to each",
			cfg->cluster_urls ? "every node" : "the primary and its replicas, but one they "
			"hold down");
}

/* Where the resource (the counter) lives beside the user's lock: a server of
 * lockbench's unless asked (--resource-on-deployment) or given (@given: a
 * resource URL of --redis). */
static void print_resource(FILE *f, const struct lb_run_cfg *cfg, bool given)
{
	print_routes(f, cfg);
	if (given)
		return; /* listed with the URLs */
	if (cfg->resource_theirs)
		fprintf(f, "             the resource (the counter): on yours too "
			   "(--resource-on-deployment): the clients count their acknowledged writes\n");
	else
		fprintf(f, "             the resource (the counter): a redis-server of lockbench's, "
			   "started on loopback for the run (a failover of yours cannot roll it back)\n");
}

/* The servers, their passwords never shown. */
static void print_servers(FILE *f, const struct lb_run_cfg *cfg, size_t n_lock)
{
	char url[1200];

	if (cfg->cluster_urls) {
		lb_esc_fprintf(f, LB_LANG_TERM, "servers      yours: the lock lives on the primary of "
			       "the run's slot in the cluster of seeds %s (the prefix is a hash tag, "
			       "{lb:<8 hex>}:, so every key of the run is in one slot)\n",
			       cfg->cluster_urls);
		print_resource(f, cfg, false);
		return;
	}
	int kind = lb_consensus_of(cfg->strategy);
	if (cfg->etcd_urls || cfg->zk_urls) {
		struct lb_ensemble e;
		char why[600];
		if (lb_ensemble_parse((enum lb_consensus_kind)kind, cfg->etcd_urls ? cfg->etcd_urls :
				      cfg->zk_urls, &e, why, sizeof(why)) < 0)
			return;
		fprintf(f, "servers      yours (%s), the lock's:\n", cfg->etcd_urls ? "--etcd" :
			"--zookeeper");
		for (int i = 0; i < e.n; i++) {
			lb_member_name(&e, i, url, sizeof(url));
			lb_esc_fprintf(f, LB_LANG_TERM, "             %s%s\n", url,
				       i ? "" : " (each client's first)");
		}
		fprintf(f, "             and lockbench's own redis-server for the resource (the "
			   "counter), started on loopback and stopped after the run\n");
		return;
	}
	if (kind) { /* the lock's ensemble, and a Redis server for the resource */
		fprintf(f, "servers      lockbench's own: three %s (the lock; lock nodes 0-2), and a "
			   "redis-server for the resource (the counter), started on loopback, on free "
			   "ports, in temporary directories, and stopped after the run\n",
			kind == 1 ? "etcd 3.4 members" : "ZooKeeper 3.8 servers");
		return;
	}
	if (!cfg->redis_urls && !cfg->sentinel_urls) {
		fprintf(f, "servers      lockbench's own: redis-server%s started on loopback, on free "
			   "ports, in a temporary directory, and stopped after the run\n",
			cfg->sentinel ? "s and Sentinels" : cfg->cluster ? "s as a cluster" : "");
		return;
	}
	if (cfg->sentinel_urls)
		lb_esc_fprintf(f, LB_LANG_TERM, "servers      yours: lock node 0 is the primary the "
			       "Sentinels %s call '%s'%s\n", cfg->sentinel_urls, cfg->sentinel_master,
			       cfg->master_pass[0] ? " (AUTH from --master-auth)" : "");
	else
		fprintf(f, "servers      yours (--redis):\n");
	const char *list = cfg->redis_urls;
	bool given = false;
	for (size_t k = 0, at = 0; list && list[at]; k++) {
		size_t len = strcspn(list + at, ",");
		char one[2048];
		struct lb_node n;
		snprintf(one, sizeof(one), "%.*s", (int)len, list + at);
		at += len + (list[at + len] == ',');
		if (lb_node_parse_url(one, &n, NULL, 0) < 0)
			continue;
		if (n.pass[0])
			snprintf(n.pass, sizeof(n.pass), "*");
		lb_node_url(&n, url, sizeof(url));
		lb_esc_fprintf(f, LB_LANG_TERM, "             %s  %s%s\n", url,
			       cfg->sentinel_urls ? "the resource (the counter)" :
			       k < n_lock ? (k ? "a lock node" : "lock node 0") :
			       "the resource (the counter)", n.tls ? ", through a TLS tunnel "
			       "lockbench starts (stunnel4, a free loopback port), a PING through "
			       "it first" : "");
		given = given || cfg->sentinel_urls || k >= n_lock;
	}
	if (!cfg->own_urls)
		print_resource(f, cfg, given);
}

static void print_keys(FILE *f, const struct lb_run_cfg *cfg)
{
	char more[2][32] = { "", "" };

	if (cfg->keys > 1) {
		snprintf(more[0], sizeof(more[0]), " .. lock:%d", cfg->keys - 1);
		snprintf(more[1], sizeof(more[1]), " .. counter:%d", cfg->keys - 1);
	}
	fprintf(f, "keys         only under the run's prefix lb:<8 random hex>:, drawn when it starts\n"
		   "             lb:<8 hex>:lock:0%s (the lock; KEY below), with the keys the "
		   "strategy makes beside it (KEY:...)\n"
		   "             lb:<8 hex>:counter:0%s (the work), with :fence, :stale and :applied "
		   "for a fenced resource\n", more[0], more[1]);
	if (cfg->etcd_urls)
		fprintf(f, "             on your etcd: the lock's keys, lb:<8 hex>:lock:0/<lease "
			   "id> (etcd's Lock puts NAME/LEASE), nothing else; the counter lives on "
			   "lockbench's redis-server\n");
	if (cfg->zk_urls)
		fprintf(f, "             on your ZooKeeper: /lockbench/lb%%3A<8 hex>%%3Alock%%3A0 and "
			   "kazoo's ephemeral contenders under it, and /lockbench itself when it is "
			   "absent; the counter lives on lockbench's redis-server\n");
}

/* Does the user name the resource's server (a --redis URL past the lock
 * nodes, or --redis beside --sentinel)? */
static bool resource_given(const struct lb_run_cfg *cfg)
{
	size_t urls = 0;

	for (const char *p = cfg->redis_urls; p && *p; p++)
		urls += *p == ',';
	return cfg->redis_urls && (cfg->sentinel_urls || urls + 1 > (size_t)(cfg->nodes > 0 ?
		cfg->nodes : (int)cfg->strategy->min_nodes));
}

static void print_commands(FILE *f, const struct lb_run_cfg *cfg)
{
	const char *sends = cfg->strategy->sends;

	bool members = lb_consensus_of(cfg->strategy) != 0;
	if (cfg->etcd_urls)
		fprintf(f, "commands     lockbench, to each member, one HTTP/1.0 request a connection "
			   "(its JSON gateway): POST /v3/maintenance/status (its cluster_id: a member "
			   "of member 0's cluster), POST /v3/kv/range of the run's prefix, count_only "
			   "(reads nothing; auth and quorum); at the end, to the first member that "
			   "answers: POST /v3/kv/deleterange of key lb:<8 hex>: to range_end "
			   "lb:<8 hex>; (the run's keys, and only those)%s\n",
			strstr(cfg->etcd_urls, "://") && !strncasecmp(cfg->etcd_urls, "https", 5) ?
			"; to an https:// member through a TLS tunnel lockbench starts (stunnel4, "
			"a free loopback port; first a GET /version through it: the handshake), "
			"checking its certificate as the adapters do" : "");
	else if (cfg->zk_urls)
		fprintf(f, "commands     lockbench, on a session of its own (then closeSession) with "
			   "each server: getData /zookeeper/config (a member of server 0's ensemble); "
			   "on server 0: create /lockbench (when absent), create and delete "
			   "/lockbench/lb%%3A<8 hex>%%3Aprobe (the ACL lets the run write); at the "
			   "end, on the first server that answers: getChildren /lockbench, and for "
			   "each child named lb%%3A<8 hex>%%3A...: getChildren and delete, depth "
			   "first, of what lies under it, then delete of it; delete /lockbench when "
			   "the run made it (refused while anything is in it)\n");
	else if (members) /* lockbench asks the members, and writes nothing of the lock there */
		fprintf(f, "commands     lockbench, on each member: its health (etcd: GET /version, "
			   "and a PUT of lockbench:quorum-probe once started; ZooKeeper: ruok, srvr) "
			   "and who leads (etcd: POST /v3/maintenance/status; ZooKeeper: srvr)\n");
	fprintf(f, "%s, on %s: PING (also on a connection of its own before "
		   "each new one), ROLE (a lock node of --redis), CONFIG GET maxclients, INFO server, "
		   "INFO server replication commandstats (before and after), INFO clients%s%s\n",
		members ? "             lockbench" : "commands     lockbench",
		members ? "the resource's redis-server" : "each server",
		cfg->strategy->needs_replica ? ", INFO replication" : "",
		cfg->work == LB_WORK_NONE ? "" : lb_cfg_theirs(cfg) && !cfg->own_urls &&
		!resource_given(cfg) ? "; the work, on the resource's server (lockbench's own unless "
		"--resource-on-deployment): GET and SET of the counter (EVALSHA of the fenced scripts "
		"after SCRIPT LOAD for fenced work), MGET of the counters at the end" :
		"; the work: GET and SET of the counter (EVALSHA "
		"of the fenced scripts after SCRIPT LOAD for fenced work), MGET of the counters at the end");
	if (!members)
		fprintf(f, "             at the end: DEL of the run's lock and counter keys, then "
			   "SCAN 0 MATCH lb:<8 hex>:* COUNT 1000 (to cursor 0) and DEL of each key it "
			   "returns\n");
	if (cfg->cluster_urls)
		fprintf(f, "             on the seeds: CLUSTER SLOTS (each client, at each connect); on "
			   "the primary they name: INFO server at each connect\n");
	if (cfg->sentinel_urls)
		fprintf(f, "             on the Sentinels: SENTINEL get-master-addr-by-name (each client, "
			   "at each connect), SUBSCRIBE +sdown +odown +switch-master "
			   "+convert-to-slave +selected-slave +failover-end (a watcher, on each); on the primary they name: "
			   "ROLE and INFO server at each connect\n");
	lb_esc_fprintf(f, LB_LANG_TERM, "             %s: %s\n", cfg->strategy->name,
		       sends && sends[0] ? sends : "the commands of its own program: not known "
		       "before it runs");
}

/* What fault @f will do on this deployment, or why it will not run. */
static void print_fault(FILE *f, const struct lb_run_cfg *cfg, const struct lb_fault *ft,
			bool embedded)
{
	struct lb_scenario one = *cfg->scenario;
	struct lb_run_cfg c1 = *cfg;
	char why[600] = "", what[700];
	const char *act = lb_action_name(ft->action);

	one.faults[0] = *ft;
	one.n_faults = 1;
	c1.scenario = &one;
	int rc = lb_faults_check(&c1, embedded, true, why, sizeof(why));
	const char *hook = NULL;
	if (ft->action == LB_ACT_HOOK)
		hook = lb_hook_command(cfg, ft->hook, 0);
	else if (!embedded && (ft->action == LB_ACT_NODE_KILL || ft->action == LB_ACT_NODE_RESTART))
		hook = lb_hook_command(cfg, "node-kill", 0);
	else if (!embedded && ft->action == LB_ACT_NODE_PAUSE)
		hook = lb_hook_command(cfg, "node-pause", 0);
	if (rc < 0)
		snprintf(what, sizeof(what), "%s: %s", rc == LB_ENOTSUP ? "skipped" : "refused", why);
	else if (hook)
		snprintf(what, sizeof(what), "runs your command: %s", hook);
	else if (!embedded && ft->action == LB_ACT_NODE_PAUSE)
		snprintf(what, sizeof(what), "CLIENT PAUSE %lld %s, then CLIENT UNPAUSE: every client "
			 "of that server waits, yours too", (long long)ft->duration_ms,
			 ft->pause_write ? "WRITE" : "ALL");
	else if (ft->action == LB_ACT_CLUSTER_FAILOVER)
		snprintf(what, sizeof(what), "CLUSTER SLOTS, then CLUSTER FAILOVER on each replica of "
			 "the run's slot's primary in turn until one accepts");
	else if (ft->action == LB_ACT_SENTINEL_FAILOVER)
		snprintf(what, sizeof(what), "SENTINEL FAILOVER %s, to each Sentinel in turn until "
			 "one accepts", cfg->sentinel_urls ? cfg->sentinel_master : "the master");
	else if (ft->action == LB_ACT_CLIENT_KILL)
		snprintf(what, sizeof(what), "CLIENT KILL ADDR of each connection the client has "
			 "open to the lock nodes");
	else if (lb_action_in_client(ft->action) || ft->action == LB_ACT_KILL ||
		 ft->action == LB_ACT_PAUSE)
		snprintf(what, sizeof(what), "acts on lockbench's own client process, nothing is "
			 "sent to the servers");
	else
		snprintf(what, sizeof(what), "on lockbench's own servers");
	lb_esc_fprintf(f, LB_LANG_TERM, "             [%s] %s at %g s: %s\n", ft->name, act,
		       ft->at_s, what);
}

int lb_dry_run(FILE *f, const struct lb_run_cfg *cfg)
{
	bool embedded = !lb_cfg_theirs(cfg);
	size_t n_lock = (size_t)(cfg->nodes > 0 ? cfg->nodes : (int)cfg->strategy->min_nodes);

	lb_esc_fprintf(f, LB_LANG_TERM, "dry run of %s under %s: nothing was sent to any server\n",
		       cfg->strategy->name, cfg->scenario_name);
	print_servers(f, cfg, n_lock);
	print_keys(f, cfg);
	print_commands(f, cfg);
	if (!cfg->scenario || !cfg->scenario->n_faults) {
		fprintf(f, "faults       none\n");
		return 0;
	}
	fprintf(f, "faults%s\n", !embedded && !cfg->allow_faults ?
		"       (none reaches your servers without --allow-faults)" : "");
	for (int i = 0; i < cfg->scenario->n_faults; i++)
		print_fault(f, cfg, &cfg->scenario->faults[i], embedded);
	return 0;
}
