/*
 * cluster.c - three primaries and three replicas in one Redis Cluster on
 * loopback (cluster.h), built slot range by slot range and waited for until
 * every node agrees.
 */
#include "cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node.h"
#include "plumbing.h"
#include "relay.h"
#include "signals.h"
#include "util.h"

const char *lb_cluster_part_name(int part)
{
	static const char *const names[LB_CLUSTER_NODES] = { "primary 0", "primary 1",
							     "primary 2", "replica 0",
							     "replica 1", "replica 2" };
	return part >= 0 && part < LB_CLUSTER_NODES ? names[part] : "?";
}

int lb_cluster_node_at(const struct lb_cluster *c, int front)
{
	for (int i = 0; i < LB_CLUSTER_NODES; i++)
		if (c->front[i] == front)
			return i;
	return -1;
}

void lb_cluster_seeds(const struct lb_cluster *c, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (int i = 0; i < LB_CLUSTER_NODES && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s127.0.0.1:%d", i ? "," : "", c->front[i]);
}

int lb_cluster_prefix(char *prefix, size_t len)
{
	char tok[LB_TOKEN_HEX + 1];

	if (!prefix || len < 16)
		return LB_EINVAL;
	for (int tries = 0; tries < 1000; tries++) {
		int rc = lb_token_new(tok);
		if (rc < 0)
			return rc;
		snprintf(prefix, len, "{lb:%.8s}:", tok);
		if (lb_key_slot(prefix, strlen(prefix)) < LB_CLUSTER_SLOTS / LB_CLUSTER_SHARDS)
			return 0;
	}
	return LB_ESYS; /* a third of the slots missed a thousand times: not random */
}

/* One command on node @i, by a fresh connection; the reply or NULL. */
static redisReply *node_cmd(const struct lb_cluster *c, int i, const char *fmt, const char *a,
			    const char *b)
{
	struct lb_node n;

	lb_node_init_local(&n, c->node[i]->port, 1000);
	redisReply *r = lb_node_cmd(&n, fmt, a, b);
	lb_node_close(&n);
	return r;
}

static bool node_ok(const struct lb_cluster *c, int i, const char *fmt, const char *a,
		    const char *b)
{
	redisReply *r = node_cmd(c, i, fmt, a, b);
	bool ok = lb_reply_ok(r);

	if (!ok)
		lb_errorf("cluster node %d (127.0.0.1:%d): %s %s %s: %s", i, c->node[i]->port, fmt, a,
			  b, r && r->type == REDIS_REPLY_ERROR ? r->str : "no reply");
	if (r)
		freeReplyObject(r);
	return ok;
}

/* Does node @i see the cluster ok, with three primaries serving slots and
 * three replicas, every node connected (CLUSTER NODES), and, for a replica,
 * its link to its primary up? */
static bool settled(const struct lb_cluster *c, int i)
{
	int masters = 0, replicas = 0, linked = 0;
	redisReply *r = node_cmd(c, i, "CLUSTER INFO", "", "");
	bool ok = r && r->type == REDIS_REPLY_STRING && strstr(r->str, "cluster_state:ok");

	if (r)
		freeReplyObject(r);
	r = ok ? node_cmd(c, i, "CLUSTER NODES", "", "") : NULL;
	/* "<id> <addr> <flags> <master> <ping> <pong> <epoch> <link> [<slots>...]" */
	for (char *line = r && r->type == REDIS_REPLY_STRING ? r->str : NULL; line && *line;) {
		char *end = strchr(line, '\n');
		char flags[96], link[32];
		int used = 0;
		if (end)
			*end = '\0';
		if (sscanf(line, "%*s %*s %95s %*s %*s %*s %*s %31s %n", flags, link, &used) == 2 &&
		    !strstr(flags, "fail") && !strcmp(link, "connected")) {
			if (strstr(flags, "master") && line[used])
				masters++; /* serving slots */
			else if (strstr(flags, "slave"))
				replicas++;
		}
		line = end ? end + 1 : NULL;
	}
	if (r)
		freeReplyObject(r);
	if (!ok || masters != LB_CLUSTER_SHARDS || replicas != LB_CLUSTER_SHARDS)
		return false;
	if (i < LB_CLUSTER_SHARDS)
		return true;
	r = node_cmd(c, i, "INFO replication", "", "");
	linked = r && r->type == REDIS_REPLY_STRING && strstr(r->str, "master_link_status:up");
	if (r)
		freeReplyObject(r);
	return linked;
}

/* Node @i's arguments: cluster mode, its own bus port, its fronts. */
static struct lb_server_opts node_opts(struct lb_cluster *c, int i, int bus_port, bool net)
{
	const char *kv[16];
	char v[8][24];
	int k = 0, n = 0;

	snprintf(v[0], sizeof(v[0]), "%lld", (long long)c->opts.node_timeout_ms);
	snprintf(v[1], sizeof(v[1]), "%d", bus_port);
	kv[k++] = "--cluster-enabled"; kv[k++] = "yes";
	kv[k++] = "--cluster-node-timeout"; kv[k++] = v[0];
	kv[k++] = "--cluster-port"; kv[k++] = v[1];
	/* a promoted replica streams its snapshot at once, not after 5 s */
	kv[k++] = "--repl-diskless-sync-delay"; kv[k++] = "0";
	if (net) {
		lb_party_addr(i, v[2], sizeof(v[2]));
		snprintf(v[3], sizeof(v[3]), "%d", c->front[i]);
		snprintf(v[4], sizeof(v[4]), "%d", c->bus_front[i]);
		kv[k++] = "--bind-source-addr"; kv[k++] = v[2];
		kv[k++] = "--cluster-announce-ip"; kv[k++] = "127.0.0.1";
		kv[k++] = "--cluster-announce-port"; kv[k++] = v[3];
		kv[k++] = "--cluster-announce-bus-port"; kv[k++] = v[4];
	}
	for (n = 0; n < k; n++) {
		snprintf(c->args[i][n], sizeof(c->args[i][n]), "%s", kv[n]);
		c->argv[i][n] = c->args[i][n];
	}
	c->argv[i][n] = NULL;
	return (struct lb_server_opts){ .extra_args = c->argv[i] };
}

int lb_cluster_start(struct lb_cluster *c, const struct lb_cluster_opts *opts,
		     const struct lb_cluster_net *net)
{
	char id[LB_CLUSTER_SHARDS][64], lo[16], hi[16], port[16], bus[16];

	memset(c, 0, sizeof(*c));
	c->opts = (struct lb_cluster_opts){ .node_timeout_ms = 1000, .ready_timeout_ms = 30000 };
	if (opts && opts->node_timeout_ms > 0)
		c->opts.node_timeout_ms = opts->node_timeout_ms;
	if (opts && opts->ready_timeout_ms > 0)
		c->opts.ready_timeout_ms = opts->ready_timeout_ms;
	for (int i = 0; i < LB_CLUSTER_NODES; i++) {
		int bus_port = lb_free_port();
		if (bus_port < 0)
			goto fail;
		if (net) {
			c->front[i] = net->front[i];
			c->bus_front[i] = net->bus_front[i];
			atomic_store(net->bus_port[i], bus_port);
		} else {
			c->bus_front[i] = bus_port;
		}
		struct lb_server_opts so = node_opts(c, i, bus_port, net != NULL);
		if (!(c->node[i] = lb_server_start(&so)))
			goto fail;
		if (net)
			atomic_store(net->port[i], c->node[i]->port);
		else
			c->front[i] = c->node[i]->port;
	}
	for (int s = 0; s < LB_CLUSTER_SHARDS; s++) {
		snprintf(lo, sizeof(lo), "%d", s * LB_CLUSTER_SLOTS / LB_CLUSTER_SHARDS);
		snprintf(hi, sizeof(hi), "%d", (s + 1) * LB_CLUSTER_SLOTS / LB_CLUSTER_SHARDS - 1);
		if (!node_ok(c, s, "CLUSTER ADDSLOTSRANGE %s %s", lo, hi))
			goto fail;
		redisReply *r = node_cmd(c, s, "CLUSTER MYID", "", "");
		bool ok = r && r->type == REDIS_REPLY_STRING && r->len < sizeof(id[s]);
		if (ok)
			snprintf(id[s], sizeof(id[s]), "%s", r->str);
		if (r)
			freeReplyObject(r);
		if (!ok)
			goto fail;
	}
	for (int i = 1; i < LB_CLUSTER_NODES; i++) { /* node 0 meets everyone, by front */
		snprintf(port, sizeof(port), "%d", c->front[i]);
		snprintf(bus, sizeof(bus), "%d", c->bus_front[i]);
		struct lb_node n;
		lb_node_init_local(&n, c->node[0]->port, 1000);
		redisReply *r = lb_node_cmd(&n, "CLUSTER MEET 127.0.0.1 %s %s", port, bus);
		bool ok = lb_reply_ok(r);
		if (r)
			freeReplyObject(r);
		lb_node_close(&n);
		if (!ok) {
			lb_errorf("cluster node 0: CLUSTER MEET 127.0.0.1 %s %s refused", port, bus);
			goto fail;
		}
	}
	int64_t until = lb_now_ns() + c->opts.ready_timeout_ms * LB_NS_PER_MS;
	for (int i = LB_CLUSTER_SHARDS; i < LB_CLUSTER_NODES;) { /* a replica must know its primary */
		redisReply *r = node_cmd(c, i, "CLUSTER REPLICATE %s", id[i - LB_CLUSTER_SHARDS], "");
		bool ok = lb_reply_ok(r);
		if (r)
			freeReplyObject(r);
		if (ok) {
			i++;
			continue;
		}
		if (lb_now_ns() > until) {
			lb_errorf("cluster node %d (127.0.0.1:%d) never learnt of primary %d; see %s", i,
				  c->node[i]->port, i - LB_CLUSTER_SHARDS, c->node[i]->log_path);
			goto fail;
		}
		lb_sleep_ns(50 * LB_NS_PER_MS);
	}
	for (int i = 0; i < LB_CLUSTER_NODES;) {
		if (settled(c, i)) {
			i++;
			continue;
		}
		if (lb_now_ns() > until) {
			lb_errorf("cluster node %d (127.0.0.1:%d) did not see a settled cluster (state "
				  "ok, %d primaries, %d replicas linked) within %lld ms; see %s", i,
				  c->node[i]->port, LB_CLUSTER_SHARDS, LB_CLUSTER_SHARDS,
				  (long long)c->opts.ready_timeout_ms, c->node[i]->log_path);
			goto fail;
		}
		lb_sleep_ns(50 * LB_NS_PER_MS);
	}
	return 0;
fail:
	lb_cluster_destroy(c);
	return LB_ESYS;
}

void lb_cluster_destroy(struct lb_cluster *c)
{
	/* replicas first: none of them must take over a primary being stopped */
	for (int i = LB_CLUSTER_NODES - 1; i >= 0; i--) {
		lb_server_destroy(c->node[i]);
		c->node[i] = NULL;
	}
}

/* One look at the cluster through node @i's eyes: which nodes it holds
 * failed (bit i), and which node serves slot 0 (-1: none it knows of).
 * false if node @i did not answer. */
static bool look(const struct lb_cluster *c, int i, unsigned *failed, int *serving)
{
	struct lb_node n;

	if (!c->node[i])
		return false;
	lb_node_init_local(&n, c->node[i]->port, 200);
	redisReply *r = lb_node_cmd(&n, "CLUSTER NODES");
	lb_node_close(&n);
	if (!r || r->type != REDIS_REPLY_STRING) {
		if (r)
			freeReplyObject(r);
		return false;
	}
	*failed = 0;
	*serving = -1;
	for (char *line = r->str; line && *line;) {
		char *end = strchr(line, '\n');
		char flags[96];
		int front = 0, used = 0;
		if (end)
			*end = '\0';
		if (sscanf(line, "%*s %*[^:]:%d@%*d %95s %*s %*s %*s %*s %*s %n", &front, flags,
			   &used) == 2) {
			int node = lb_cluster_node_at(c, front);
			bool down = strstr(flags, "fail") && !strstr(flags, "fail?");
			if (node >= 0 && down)
				*failed |= 1u << node;
			if (node >= 0 && !down && strstr(flags, "master") && !strncmp(line + used, "0-", 2))
				*serving = node;
		}
		line = end ? end + 1 : NULL;
	}
	freeReplyObject(r);
	return true;
}

/* Does node @i say its cluster is down (cluster_state:fail)? false when it
 * says ok or does not answer (a killed node refuses nothing: it is gone). */
static bool says_down(const struct lb_cluster *c, int i)
{
	struct lb_node n;
	bool down = false;

	if (!c->node[i])
		return false;
	lb_node_init_local(&n, c->node[i]->port, 200);
	redisReply *r = lb_node_cmd(&n, "CLUSTER INFO");
	lb_node_close(&n);
	if (r && r->type == REDIS_REPLY_STRING)
		down = strstr(r->str, "cluster_state:fail") != NULL;
	if (r)
		freeReplyObject(r);
	return down;
}

pid_t lb_cluster_watch(const struct lb_cluster *c,
		       void (*report)(void *arg, enum lb_cluster_news what, int node), void *arg)
{
	static const int viewers[LB_CLUSTER_NODES] = { 1, 2, 4, 5, 3, 0 };

	pid_t pid = lb_fork_helper("the cluster watcher");
	if (pid != 0)
		return pid;
	unsigned was_failed = 0, was_down = 0;
	int was_serving = 0;
	for (;;) {
		unsigned failed = 0;
		int serving = -1;
		for (int v = 0; v < LB_CLUSTER_NODES; v++)
			if (look(c, viewers[v], &failed, &serving))
				break;
		for (int i = 0; i < LB_CLUSTER_NODES; i++)
			if ((failed >> i) & 1u && !((was_failed >> i) & 1u))
				report(arg, LB_CLUSTER_FAIL, i);
		was_failed = failed;
		for (int i = 0; i < LB_CLUSTER_NODES; i += LB_CLUSTER_SHARDS) { /* the lock's shard */
			bool down = says_down(c, i);
			if (down && !((was_down >> i) & 1u))
				report(arg, LB_CLUSTER_DOWN, i);
			was_down = down ? was_down | 1u << i : was_down & ~(1u << i);
		}
		if (serving >= 0 && serving != was_serving) {
			report(arg, LB_CLUSTER_SWITCH, serving);
			was_serving = serving;
		}
		lb_sleep_ns(50 * LB_NS_PER_MS);
	}
}
