/*
 * run_setup.c - a run's servers: lockbench's own (with the relay, Sentinels,
 * a cluster, a replica, the key watcher) or the user's; the shared region;
 * the run's keys deleted from servers it did not start; the servers' logs kept.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "run.h"
#include "leasewatch.h"
#include "run_ctx.h"
#include "tunnel.h"

#define RECORD_BUDGET_BYTES (INT64_C(8) << 30) /* virtual, MAP_NORESERVE */
#define TRY_BUDGET_BYTES (INT64_C(4) << 30)    /* the attempt logs: the same */

int run_map_shared(struct run_ctx *r)
{
	const struct lb_run_cfg *cfg = r->cfg;
	/* sections a client may record: 200,000 a second (a null adapter on one
	 * CPU passes over 50,000); past its records the run ends (client.c) */
	int64_t cap = (int64_t)(cfg->duration_s * 200000) + 1024;
	int64_t limit = RECORD_BUDGET_BYTES / cfg->clients / (int64_t)sizeof(struct lb_record);

	/* attempts: a spinning wait tries every few tens of microseconds */
	int64_t try_cap = (int64_t)(cfg->duration_s * 20000) + 1024;
	int64_t try_limit = TRY_BUDGET_BYTES / cfg->clients / (int64_t)sizeof(struct lb_try_rec);

	if (cap > limit)
		cap = limit;
	if (try_cap > try_limit)
		try_cap = try_limit;
	r->sh_bytes = sizeof(struct lb_shared) +
		      (size_t)cfg->clients * (size_t)cap * sizeof(struct lb_record) +
		      (size_t)cfg->clients * (size_t)try_cap * sizeof(struct lb_try_rec);
	r->sh = mmap(NULL, r->sh_bytes, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r->sh == MAP_FAILED) {
		r->sh = NULL;
		lb_errorf("cannot map %zu bytes of shared memory: %s", r->sh_bytes, strerror(errno));
		return LB_ESYS;
	}
	r->sh->cap = (size_t)cap;
	r->sh->try_cap = (size_t)try_cap;
	r->sh->clients = cfg->clients;
	r->sh->keys = cfg->keys;
	return 0;
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
		char why[256];
		if (n == LB_MAX_NODES + 1) {
			lb_errorf("--redis names more than %d servers", LB_MAX_NODES + 1);
			return LB_EINVAL;
		}
		if (lb_node_parse_url(u, &all[n], why, sizeof(why)) < 0) {
			lb_errorf("bad --redis URL: %s", why); /* never the URL: its password */
			return LB_EINVAL;
		}
		n++;
	}
	if (n < need || n > need + 1) {
		lb_errorf("%s needs %zu lock node%s (and may have one more server for the resource), "
			  "but --redis names %zu", r->cfg->strategy->name, need, need == 1 ? "" : "s",
			  n);
		return LB_EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		all[i].probe = true; /* the user's: a whole reply in time, or not used */
		if (all[i].tls) { /* hiredis 0.14 has no TLS: through lockbench's tunnel */
			const struct lb_tls tls = { r->cfg->tls_ca, r->cfg->tls_cert, r->cfg->tls_key,
						    r->cfg->tls_insecure };
			if (!(r->tunnel[i] = lb_tunnel_start("rediss", all[i].host, all[i].port, &tls)))
				return LB_ENOTHERE;
			/* a library is given the server's own rediss:// URL (lb_node_url) */
			memcpy(all[i].tls_host, all[i].host, sizeof(all[i].tls_host)); /* same size */
			all[i].tls_port = all[i].port;
			snprintf(all[i].host, sizeof(all[i].host), "127.0.0.1");
			all[i].port = r->tunnel[i]->port;
		}
	}
	for (size_t i = 0; i < need; i++)
		r->lock[i] = all[i];
	/* the resource: a further URL if given (the user's, on purpose), else a
	 * server lockbench starts (own_resource), or the first node when asked
	 * (--resource-on-deployment) or when the servers are bench's own */
	r->resource = n > need ? all[need] : all[0];
	r->res->resource_theirs = n > need && !r->cfg->own_urls;
	return 0;
}

/* rediss:// Sentinels or cluster seeds: a TLS tunnel in front of
 * @host:@port, a route of node.c's (hiredis 0.14 has no TLS). */
static int route_one(struct run_ctx *r, const char *host, int port)
{
	const struct lb_tls tls = { r->cfg->tls_ca, r->cfg->tls_cert, r->cfg->tls_key,
				    r->cfg->tls_insecure };

	if (lb_node_route(host, port) > 0)
		return 0;
	if (r->n_routes == LB_MAX_ROUTES) {
		lb_errorf("rediss://: the deployment names more than %d servers: lockbench starts "
			  "at most that many TLS tunnels", LB_MAX_ROUTES);
		return LB_ENOTHERE;
	}
	struct lb_server *t = lb_tunnel_start("rediss", host, port, &tls);
	if (!t)
		return LB_ENOTHERE;
	r->route_tunnel[r->n_routes++] = t;
	return lb_node_route_add(host, port, t->port);
}

/* Every node of a CLUSTER SLOTS reply (each [start, end, [host, port, id],
 * replicas...]), routed. */
static int route_slots(struct run_ctx *r, const redisReply *rep)
{
	int rc = 0;

	for (size_t k = 0; rep && rep->type == REDIS_REPLY_ARRAY && k < rep->elements && !rc; k++) {
		const redisReply *e = rep->element[k];
		for (size_t j = 2; e->type == REDIS_REPLY_ARRAY && j < e->elements && !rc; j++) {
			const redisReply *f = e->element[j];
			if (f->type == REDIS_REPLY_ARRAY && f->elements >= 2 &&
			    f->element[0]->type == REDIS_REPLY_STRING &&
			    f->element[1]->type == REDIS_REPLY_INTEGER && f->element[0]->str[0])
				rc = route_one(r, f->element[0]->str, (int)f->element[1]->integer);
		}
	}
	return rc;
}

/* The value of @field in a Sentinel's reply @e (a flat list of field,
 * value), or "". */
static const char *sentinel_field(const redisReply *e, const char *field)
{
	for (size_t j = 0; e && e->type == REDIS_REPLY_ARRAY && j + 1 < e->elements; j += 2)
		if (e->element[j]->type == REDIS_REPLY_STRING &&
		    e->element[j + 1]->type == REDIS_REPLY_STRING && !strcmp(e->element[j]->str, field))
			return e->element[j + 1]->str;
	return "";
}

/* Every replica a SENTINEL REPLICAS reply names, routed and counted in
 * @named; one the Sentinel holds down (s_down: the old primary a failover
 * left dead) is left out, its tunnel could not answer, and counted in
 * @down. */
static int route_replicas(struct run_ctx *r, const redisReply *rep, int *named, int *down)
{
	int rc = 0;

	for (size_t k = 0; rep && rep->type == REDIS_REPLY_ARRAY && k < rep->elements && !rc; k++) {
		const char *host = sentinel_field(rep->element[k], "ip");
		int port = atoi(sentinel_field(rep->element[k], "port"));
		if (!host[0] || port <= 0)
			continue;
		if (strstr(sentinel_field(rep->element[k], "flags"), "s_down")) {
			(*down)++;
			continue;
		}
		if ((rc = route_one(r, host, port)) == 0)
			(*named)++;
	}
	return rc;
}

/* rediss:// Sentinels: a tunnel to the primary and to every replica any of
 * them names (one may not have reached them yet). None named: a failover
 * would promote a server lockbench has no tunnel to, said with the cause
 * Sentinels that cannot reach a TLS-only primary show (docs/running.md). */
static int sentinel_routes(struct run_ctx *r, struct lb_node *n)
{
	int rc = 0, named = 0, down = 0;
	char why[256] = "", flags[128] = "";

	for (int i = 0; i < n->n_sentinels && rc == 0; i++) {
		redisReply *m = lb_node_sentinel_cmd(n, i, "get-master-addr-by-name", why, sizeof(why));
		redisReply *rest = lb_node_sentinel_cmd(n, i, "REPLICAS", why, sizeof(why));
		if (m && m->type == REDIS_REPLY_ARRAY && m->elements == 2 &&
		    m->element[0]->type == REDIS_REPLY_STRING && m->element[1]->type == REDIS_REPLY_STRING)
			rc = route_one(r, m->element[0]->str, atoi(m->element[1]->str));
		if (rc == 0)
			rc = route_replicas(r, rest, &named, &down);
		if (m)
			freeReplyObject(m);
		if (rest)
			freeReplyObject(rest);
		if (!flags[0] && (m = lb_node_sentinel_cmd(n, i, "MASTER", why, sizeof(why)))) {
			snprintf(flags, sizeof(flags), "%.100s", sentinel_field(m, "flags"));
			freeReplyObject(m);
		}
	}
	if (rc == 0 && named == 0 && down > 0)
		lb_errorf("warning: --sentinel rediss://: every replica of '%s' the Sentinels name "
			  "is down (s_down): a failover would promote none that lockbench has a TLS "
			  "tunnel to", n->master);
	else if (rc == 0 && named == 0)
		lb_errorf("warning: --sentinel rediss://: no Sentinel names a replica of '%s' "
			  "(SENTINEL REPLICAS; they see the primary as '%s'): a failover's new "
			  "primary has no TLS tunnel and would not be reached. Sentinels learn the "
			  "replicas from a TLS-only primary only with tls-replication yes, and a "
			  "replica announces its tls-port only with tls-replication yes too "
			  "(else replica-announce-port)", n->master, flags);
	return rc;
}

/* --sentinel or --cluster with rediss:// URLs: a TLS tunnel in front of
 * each Sentinel or seed and of every server they name as the run starts
 * (the primary and its replicas; every node of CLUSTER SLOTS), lock node 0
 * (and the resource, a copy of it) reaching them only through those: a
 * server named later (a node added during the run) is not reached, never
 * in plain text. The relay cannot stand in front of them. */
static int tls_routes(struct run_ctx *r)
{
	struct lb_node *n = &r->lock[0];
	bool sentinel = n->n_sentinels > 0;
	const struct lb_addr *a = sentinel ? n->sentinel : n->seed;
	int rc = 0, count = sentinel ? n->n_sentinels : n->n_seeds;

	if (run_needs_relay(r->cfg)) {
		lb_errorf("rediss:// %s: the scenario's network faults go through lockbench's relay, "
			  "which cannot stand in front of lockbench's TLS tunnels: not supported yet",
			  sentinel ? "--sentinel" : "--cluster");
		return LB_ENOTHERE;
	}
	n->tls = true;
	for (int i = 0; i < count && rc == 0; i++)
		rc = route_one(r, a[i].host, a[i].port);
	if (sentinel)
		return rc ? rc : sentinel_routes(r, n);
	for (int i = 0; i < count && rc == 0; i++) {
		struct lb_node seed;
		lb_node_init_local(&seed, a[i].port, 2000);
		snprintf(seed.host, sizeof(seed.host), "%.63s", a[i].host);
		memcpy(seed.user, a[i].user, sizeof(seed.user)); /* the same sizes */
		memcpy(seed.pass, a[i].pass, sizeof(seed.pass));
		seed.tls = seed.probe = true;
		redisReply *rest = lb_node_cmd(&seed, "CLUSTER SLOTS");
		lb_node_close(&seed);
		bool done = rest && rest->type == REDIS_REPLY_ARRAY;
		if (done)
			rc = route_slots(r, rest);
		if (rest)
			freeReplyObject(rest);
		if (done)
			break; /* one seed's account names them all */
	}
	return rc;
}

/* The event of each kind of Sentinel news. */
static const int sentinel_kinds[] = { LB_EV_SDOWN, LB_EV_ODOWN, LB_EV_SWITCH_MASTER, LB_EV_DEMOTE,
				      LB_EV_FAILOVER_CHOSEN, LB_EV_FAILOVER_END };

/* In the watcher of the user's Sentinels: what they published, the server
 * named by its port (LB_PART_PORT0 + port, topology.h). */
static void their_sentinel_news(void *arg, enum lb_sentinel_news what, int port)
{
	struct run_ctx *r = arg;
	lb_event_emit(r->sh, sentinel_kinds[what], -1, 0, LB_PART_PORT0 + port);
}

/* --sentinel: lock node 0 is the primary the user's Sentinels name (asked on
 * every connect, node.h); the resource is the first --redis URL if given,
 * else that primary (its own keys, under the run's prefix) until
 * own_resource puts it on a server of lockbench's. */
static int use_their_sentinels(struct run_ctx *r)
{
	const struct lb_run_cfg *cfg = r->cfg;

	if (r->n_lock != 1) {
		lb_errorf("--sentinel: %s needs %zu lock nodes; a Sentinel deployment has one primary",
			  cfg->strategy->name, r->n_lock);
		return LB_EINVAL;
	}
	lb_node_init_local(&r->lock[0], 0, 2000);
	char why[256];
	if (lb_node_use_sentinels_why(&r->lock[0], cfg->sentinel_urls, cfg->sentinel_master, why,
				      sizeof(why)) < 0) {
		lb_errorf("bad --sentinel list: %s", why);
		return LB_EINVAL;
	}
	strcpy(r->lock[0].user, cfg->master_user); /* fit: the same sizes */
	strcpy(r->lock[0].pass, cfg->master_pass);
	r->lock[0].want_run_id = true;
	r->lock[0].probe = true;
	int rc;
	if (!strncasecmp(cfg->sentinel_urls, "rediss://", 9) && (rc = tls_routes(r)) < 0)
		return rc;
	/* their account of the run, on its timeline, as on lockbench's own Sentinels */
	r->watcher = lb_sentinel_watch_theirs(r->lock[0].sentinel, r->lock[0].n_sentinels,
					      cfg->sentinel_master, their_sentinel_news, r, why,
					      sizeof(why));
	if (r->watcher < 0) {
		r->watcher = 0;
		snprintf(r->res->failovers_why, sizeof(r->res->failovers_why), "no Sentinel could be "
			 "subscribed to: when the primary was replaced is not known");
		lb_errorf("warning: no Sentinel could be subscribed to (%s): the Sentinels' account "
			  "(+sdown, +odown, +switch-master) is not on the timeline", why);
	} else if (why[0]) {
		lb_errorf("warning: %s: the other Sentinels' account is recorded", why);
	}
	r->resource = r->lock[0];
	if (cfg->redis_urls) {
		char first[256];
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(cfg->redis_urls, ","),
			 cfg->redis_urls);
		lb_node_init_local(&r->resource, 0, 2000);
		if (lb_node_parse_url(first, &r->resource, why, sizeof(why)) < 0) {
			lb_errorf("bad --redis URL: %s", why);
			return LB_EINVAL;
		}
		r->resource.probe = true;
		r->res->resource_theirs = true;
	}
	return 0;
}

/* --cluster: lock node 0 is the primary that serves the run's slot (its
 * prefix is a hash tag) in the user's cluster, asked of the seeds (CLUSTER
 * SLOTS) and followed through MOVED and ASK (node.h); the resource is that
 * primary too, under the same prefix. The seeds' AUTH is the nodes'. */
static int use_their_cluster(struct run_ctx *r)
{
	const struct lb_run_cfg *cfg = r->cfg;

	if (r->n_lock != 1) {
		lb_errorf("--cluster: %s needs %zu lock nodes; the lock lives on one slot's primary",
			  cfg->strategy->name, r->n_lock);
		return LB_EINVAL;
	}
	lb_node_init_local(&r->lock[0], 0, 2000);
	if (lb_node_use_cluster(&r->lock[0], cfg->cluster_urls,
				lb_key_slot(r->prefix, strlen(r->prefix))) < 0) {
		lb_errorf("bad --cluster list: expected URL[,URL...], at most %d", LB_MAX_SEEDS);
		return LB_EINVAL;
	}
	strcpy(r->lock[0].user, r->lock[0].seed[0].user); /* fit: the same sizes */
	strcpy(r->lock[0].pass, r->lock[0].seed[0].pass);
	r->lock[0].want_run_id = true;
	r->lock[0].probe = true;
	int rc;
	if (!strncasecmp(cfg->cluster_urls, "rediss://", 9) && (rc = tls_routes(r)) < 0)
		return rc;
	r->resource = r->lock[0];
	snprintf(r->res->failovers_why, sizeof(r->res->failovers_why), "lockbench does not watch "
		 "your cluster's failovers: when a primary was replaced is not known");
	return 0;
}

/* The resource on a redis-server lockbench starts beside the user's lock
 * (--redis, --sentinel, --cluster): the counter, its fence and its count of
 * applied writes are then lockbench's, so a failover of the user's servers
 * cannot roll the witness back with what it judges. It is srv[n_lock] (its
 * log is redis-resource.log). --resource-on-deployment, or a resource URL
 * of the user's, leaves it on their server. */
static int own_resource(struct run_ctx *r)
{
	if (r->cfg->own_urls || r->res->resource_theirs)
		return 0;
	if (r->cfg->resource_theirs) {
		r->res->resource_theirs = true;
		return 0;
	}
	struct lb_server *s = lb_server_start(NULL);
	if (!s)
		return LB_ESYS;
	r->srv[r->n_lock] = s;
	r->n_srv = r->n_lock + 1;
	lb_node_init_local(&r->resource, s->port, 2000);
	return 0;
}

/* The user's lock nodes: each answers, a node of --redis is a primary, and
 * each has room for every client. 0, or LB_EREDIS (said, naming it). */
static int check_lock_nodes(struct run_ctx *r)
{
	const struct lb_run_cfg *cfg = r->cfg;
	int rc = 0;

	for (size_t i = 0; i < r->n_lock && rc == 0; i++)
		rc = run_check_reachable(&r->lock[i]);
	for (size_t i = 0; i < r->n_lock && rc == 0 && cfg->redis_urls && !cfg->sentinel_urls; i++)
		rc = run_check_primary(&r->lock[i]);
	for (size_t i = 0; i < r->n_lock && rc == 0; i++)
		rc = run_check_maxclients(&r->lock[i], cfg->clients);
	return rc;
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
		for (size_t i = 0; i < r->n_lock && !mesh; i++) {
			links[k] = (struct lb_relay_link){ .ctl = &r->sh->link[c][i],
							   .follow = &r->sh->node_port[i] };
			if (r->theirs_ens.ready) { /* the user's member, where the check reached it */
				links[k].far = r->theirs_ens.m[i].addr;
				links[k].far_len = r->theirs_ens.m[i].addr_len;
			}
			k++;
		}
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
	if (!mesh && run_scenario_has(cfg->scenario, LB_ACT_FAILOVER)) /* the primary's port */
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
	struct run_ctx *r = arg;
	lb_event_emit(r->sh, sentinel_kinds[what], -1, 0, lb_sentinel_topo_part_at(&r->topo, port));
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

/* A consensus lock's ensemble (etcd, ZooKeeper; consensus.h): its members are
 * the lock nodes srv[0..2], which the faults reach as they reach Redis
 * servers, and the clients by their address alone (the adapter's URLs, each
 * through the relay when a fault needs it); the resource is a Redis server. */
static int start_consensus(struct run_ctx *r)
{
	static const char *const scheme[] = { "", "http", "zk" };

	if (r->n_lock != LB_CONSENSUS_MEMBERS) {
		lb_errorf("%s runs on %d members of %s; --nodes cannot change that",
			  r->cfg->strategy->name, LB_CONSENSUS_MEMBERS,
			  lb_consensus_shown((enum lb_consensus_kind)r->consensus));
		return LB_EINVAL;
	}
	int64_t lease = lb_consensus_lease_ms((enum lb_consensus_kind)r->consensus, r->cfg->ttl_ms);
	if (lease != r->cfg->ttl_ms) /* said, not hidden: the history's lease ends follow it */
		lb_errorf("warning: %s grants this lock a lease of %lld ms, not the --ttl %lld ms "
			  "asked (docs/topologies.md): the adapter reports the lease it got",
			  lb_consensus_shown((enum lb_consensus_kind)r->consensus), (long long)lease,
			  (long long)r->cfg->ttl_ms);
	if (lb_consensus_start(&r->cons, (enum lb_consensus_kind)r->consensus, 60000) < 0)
		return LB_ESYS;
	r->res->consensus_ready_ms = r->cons.ready_ms;
	for (size_t i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		r->srv[i] = r->cons.member[i];
		lb_node_init_local(&r->lock[i], r->srv[i]->port, 2000);
		snprintf(r->lock[i].scheme, sizeof(r->lock[i].scheme), "%s", scheme[r->consensus]);
	}
	r->n_srv = LB_CONSENSUS_MEMBERS;
	if (!(r->srv[r->n_srv] = lb_server_start(NULL)))
		return LB_ESYS;
	lb_node_init_local(&r->resource, r->srv[r->n_srv++]->port, 2000);
	return 0;
}

/* --etcd https://...: lockbench's own requests to each member (its check,
 * the removal of the run's keys) through a TLS tunnel it starts in front of
 * it, checking the member's certificate as the adapters do (--tls-ca, the
 * client certificate, --tls-insecure); a refused handshake is said now, exit
 * 3. The relay cannot stand between a client and an https:// member: its
 * certificate names the member, not the relay's loopback port. */
static int ensemble_tunnels(struct run_ctx *r)
{
	const struct lb_run_cfg *cfg = r->cfg;
	const struct lb_tls tls = { cfg->tls_ca, cfg->tls_cert, cfg->tls_key, cfg->tls_insecure };

	for (int i = 0; i < r->theirs_ens.n; i++) {
		struct lb_member *m = &r->theirs_ens.m[i];
		if (!m->tls)
			continue;
		if (run_needs_relay(cfg)) {
			lb_errorf("--etcd https://: the scenario's network faults go through lockbench's "
				  "relay, and an https:// member's certificate names the member, not the "
				  "relay's loopback port: not supported yet (run it over http://, or "
				  "without network faults)");
			return LB_ENOTHERE;
		}
		if (!(r->tunnel[i] = lb_tunnel_start("https", m->host, m->port, &tls)))
			return LB_ENOTHERE;
		m->via_port = r->tunnel[i]->port;
	}
	return 0;
}

/* --etcd, --zookeeper: the lock nodes are the user's members, given to the
 * adapter by their address; each answers, belongs with member 0 and lets the
 * run write under its prefix before any client starts. The resource (the
 * counter, lockbench's measure) is a redis-server lockbench starts. */
static int use_their_ensemble(struct run_ctx *r)
{
	static const char *const scheme[] = { "", "http", "zk" };
	const struct lb_run_cfg *cfg = r->cfg;
	char why[600];
	int rc;

	if (lb_ensemble_parse((enum lb_consensus_kind)r->consensus, cfg->etcd_urls ? cfg->etcd_urls :
			      cfg->zk_urls, &r->theirs_ens, why, sizeof(why)) < 0) {
		lb_errorf("%s", why);
		return LB_EINVAL;
	}
	if ((size_t)r->theirs_ens.n != r->n_lock) {
		lb_errorf("%s: %d members given, the run has %zu lock nodes", cfg->strategy->name,
			  r->theirs_ens.n, r->n_lock);
		return LB_EINVAL;
	}
	if ((rc = ensemble_tunnels(r)) < 0 || (rc = lb_ensemble_check(&r->theirs_ens, r->prefix)) < 0)
		return rc;
	for (size_t i = 0; i < r->n_lock; i++) {
		lb_node_init_local(&r->lock[i], 0, 2000);
		snprintf(r->lock[i].host, sizeof(r->lock[i].host), "%s", r->theirs_ens.m[i].host);
		r->lock[i].port = r->theirs_ens.m[i].port;
		r->lock[i].tls = r->theirs_ens.m[i].tls; /* the adapter gets --tls-* in config */
		snprintf(r->lock[i].scheme, sizeof(r->lock[i].scheme), "%s", r->lock[i].tls ? "https" :
			 scheme[r->consensus]);
	}
	r->n_srv = r->n_lock; /* srv[0..n_lock) stay NULL: not lockbench's */
	if (!(r->srv[r->n_srv] = lb_server_start(NULL)))
		return LB_ESYS;
	lb_node_init_local(&r->resource, r->srv[r->n_srv++]->port, 2000);
	return 0;
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

/* The resource's scripts, loaded before the clients start: every counter
 * write is then one EVALSHA, never a NOSCRIPT and a second round trip (a
 * write held in the network would otherwise land as a NOSCRIPT error). */
void run_load_resource_scripts(struct run_ctx *r)
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

void run_redis_version(struct run_ctx *r)
{
	if (r->consensus)
		return; /* the lock's servers are not Redis; the resource's version is not the lock's */
	redisReply *rep = lb_node_cmd(&r->lock[0], "INFO server");
	const char *v;

	if (rep && rep->type == REDIS_REPLY_STRING && (v = strstr(rep->str, "redis_version:")))
		sscanf(v + 14, "%31[^\r\n]", r->res->redis_version);
	if (rep)
		freeReplyObject(rep);
	lb_node_close(&r->lock[0]);
}

/* The run's keys, its shared memory and its servers: lockbench's own (with
 * the relay, Sentinels, a cluster or a replica as the run asks) or the
 * user's, each reachable and with room for every client. */
int run_setup_servers(struct run_ctx *r, bool theirs)
{
	const struct lb_run_cfg *cfg = r->cfg;
	char rnd[LB_TOKEN_HEX + 1];
	int rc;

	if ((rc = lb_token_new(rnd)) < 0)
		return rc;
	/* on a cluster of the user's, every key of the run in one slot (a hash tag) */
	snprintf(r->prefix, sizeof(r->prefix), cfg->cluster_urls ? "{lb:%.8s}:" : "lb:%.8s:", rnd);
	/* in a cluster every key of the run shares one slot, primary 0's */
	if (cfg->cluster && (rc = lb_cluster_prefix(r->prefix, sizeof(r->prefix))) < 0)
		return rc;
	strcpy(r->res->run_prefix, r->prefix);
	if ((rc = run_map_shared(r)) < 0)
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
	rc = cfg->cluster_urls ? use_their_cluster(r) : cfg->sentinel_urls ? use_their_sentinels(r) :
	     cfg->redis_urls ? parse_urls(r, cfg->redis_urls) :
	     cfg->etcd_urls || cfg->zk_urls ? use_their_ensemble(r) :
	     r->consensus ? start_consensus(r) :
	     start_servers(r);
	/* the ports the clients follow, as given (the checks below move a node
	 * of a cluster or behind Sentinels to the primary they find: a client
	 * that followed that port would not follow MOVED) */
	for (size_t i = 0; i < r->n_lock && rc == 0; i++)
		atomic_store(&r->sh->node_port[i], r->lock[i].port);
	/* the user's lock nodes first: a run that cannot happen there has started
	 * nothing beside them (no log of ours in --out, which stays reusable) */
	/* (an ensemble's members are not Redis: ensemble.c has checked them) */
	if (rc == 0 && theirs && (r->consensus || (rc = check_lock_nodes(r)) == 0))
		rc = own_resource(r);
	if (rc < 0)
		return rc == LB_EREDIS ? LB_ENOTHERE : rc;
	if (run_needs_relay(cfg) && (rc = start_relay(r)) < 0)
		return rc;
	if (cfg->sentinel && (rc = start_sentinel(r)) < 0)
		return rc;
	if (cfg->cluster && (rc = start_cluster(r)) < 0)
		return rc;
	if (!theirs && !cfg->sentinel && !cfg->cluster && ((cfg->scenario && cfg->scenario->replica) ||
				 cfg->strategy->needs_replica) && (rc = start_replica(r)) < 0)
		return rc;
	for (size_t i = 0; i < r->n_lock && rc == 0 && !r->consensus && !theirs; i++)
		rc = run_check_reachable(&r->lock[i]);
	if (rc == 0)
		rc = run_check_reachable(&r->resource);
	for (size_t i = 0; i < r->n_lock && rc == 0 && !r->consensus && !theirs; i++)
		rc = run_check_maxclients(&r->lock[i], cfg->clients);
	if (rc == 0)
		rc = run_check_maxclients(&r->resource, cfg->clients);
	if (rc == 0 && theirs && cfg->strategy->needs_replica)
		rc = run_check_replica(r);
	return rc == LB_EREDIS ? LB_ENOTHERE : rc; /* said above, naming the server */
}

/* The key watcher on lockbench's own servers, or why there is none. */
void run_setup_keywatch(struct run_ctx *r, bool theirs)
{
	struct lb_run_result *res = r->res;
	const char *no_watch = getenv("LOCKBENCH_NO_KEYWATCH");

	if (r->consensus && (theirs || (no_watch && *no_watch))) {
		snprintf(res->foreign_why, sizeof(res->foreign_why), "%s", !theirs ?
			 "LOCKBENCH_NO_KEYWATCH is set: the servers were not watched" :
			 "the ensemble is not lockbench's: it does not watch it");
		return;
	}
	if (r->consensus) { /* the lease watcher: the owner of each lock key (leasewatch.h) */
		if (lb_leasewatch_start(&r->kw, &r->cons, r->prefix, r->cfg->keys, r->cfg->duration_s,
					res->foreign_why, sizeof(res->foreign_why)) < 0)
			lb_errorf("warning: the servers' end of each lease is not measured: %s",
				  res->foreign_why);
		return;
	}
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

/* Every key under @prefix on @n: SCAN with MATCH (the server walks its
 * keyspace, a thousand keys a call, and returns only the run's), each batch
 * DELeted. A key of anyone else never matches: the prefix holds the run's
 * random part. */
static void delete_prefixed(struct lb_node *n, const char *prefix)
{
	char cursor[32] = "0", pattern[64];
	int calls = 0;

	snprintf(pattern, sizeof(pattern), "%s*", prefix);
	do {
		redisReply *r = lb_node_cmd(n, "SCAN %s MATCH %s COUNT 1000", cursor, pattern);
		bool ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
			  r->element[0]->type == REDIS_REPLY_STRING &&
			  r->element[0]->len < sizeof(cursor) &&
			  r->element[1]->type == REDIS_REPLY_ARRAY;
		if (ok) {
			const redisReply *keys = r->element[1];
			snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
			for (size_t k = 0; k < keys->elements; k++) {
				const redisReply *key = keys->element[k];
				if (key->type != REDIS_REPLY_STRING ||
				    strncmp(key->str, prefix, strlen(prefix)))
					continue; /* never anything but the run's own */
				const char *argv[] = { "DEL", key->str };
				size_t lens[] = { 3, key->len };
				redisReply *d = lb_node_cmd_argv(n, 2, argv, lens);
				if (d)
					freeReplyObject(d);
			}
		}
		if (r)
			freeReplyObject(r);
		if (!ok) {
			lb_errorf("warning: the run's keys (%s*) could not all be removed from %s:%d: %s; "
				  "its locks expire, its counters stay: redis-cli --scan --pattern '%s*' "
				  "lists them", prefix, n->host, n->port, n->why[0] ? n->why : "SCAN failed",
				  prefix);
			return;
		}
	} while (strcmp(cursor, "0") && ++calls < 1000000);
}

/* On servers we did not start, remove the keys this run created: its lock
 * and counter keys by name, then whatever else its strategy made under the
 * run's prefix (fair's queue, a library's own keys beside the lock's). */
void run_delete_own_keys(struct run_ctx *r)
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
	bool resource_apart = true;
	for (size_t i = 0; i < r->n_lock; i++) {
		delete_prefixed(&r->lock[i], r->prefix);
		resource_apart = resource_apart && (r->resource.port != r->lock[i].port ||
						    strcmp(r->resource.host, r->lock[i].host) ||
						    r->resource.db != r->lock[i].db);
	}
	if (resource_apart)
		delete_prefixed(&r->resource, r->prefix);
}

/* Every server's and Sentinel's log, into the run's directory: what the
 * servers said while the faults went on (a Sentinel's +sdown, +vote-for-leader,
 * +selected-slave; a replica's full syncs) sits beside the history. A copy
 * that fails says so and costs nothing else. */
void run_keep_logs(struct run_ctx *r)
{
	char name[64];

	if (!r->cfg->out_dir[0])
		return;
	for (size_t i = 0; i < r->n_srv; i++) {
		if (i == 0 && r->cfg->cluster)
			continue; /* cluster node 0, below */
		if (i < r->n_lock && r->consensus)
			snprintf(name, sizeof(name), "%s-%zu.log", lb_consensus_name((enum lb_consensus_kind)r->consensus), i);
		else if (i < r->n_lock)
			snprintf(name, sizeof(name), "redis-lock-%zu.log", i);
		else
			snprintf(name, sizeof(name), "redis-resource.log");
		lb_server_copy_log(r->srv[i], r->cfg->out_dir, name);
	}
	lb_server_copy_log(r->replica, r->cfg->out_dir, "redis-replica.log");
	for (size_t i = 0; i <= LB_MAX_NODES; i++) {
		snprintf(name, sizeof(name), "tunnel-%zu.log", i);
		lb_server_copy_log(r->tunnel[i], r->cfg->out_dir, name);
	}
	for (int i = 0; i < r->n_routes; i++) {
		snprintf(name, sizeof(name), "tunnel-route-%d.log", i);
		lb_server_copy_log(r->route_tunnel[i], r->cfg->out_dir, name);
	}
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
