/*
 * topology.c - a primary, two replicas and three Sentinels on loopback
 * (topology.h). The Sentinels watch the primary at its front (its own port,
 * or the relay's listener in front of it); they learn the replicas from its
 * INFO and each other from hello messages, which is why the start waits
 * until each of them reports both, and why every part announces its front.
 */
#include "topology.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "node.h"
#include "relay.h"
#include "signals.h"
#include "util.h"

/* A field of SENTINEL MASTER's flat reply (name, value, name, value, ...). */
static bool field_is(const redisReply *r, const char *name, const char *want)
{
	if (!r || r->type != REDIS_REPLY_ARRAY)
		return false;
	for (size_t i = 0; i + 1 < r->elements; i += 2)
		if (r->element[i]->type == REDIS_REPLY_STRING && !strcmp(r->element[i]->str, name))
			return r->element[i + 1]->type == REDIS_REPLY_STRING &&
			       !strcmp(r->element[i + 1]->str, want);
	return false;
}

/* Does Sentinel @i see the primary as master, with every replica and every
 * other Sentinel? */
static bool watching(const struct lb_sentinel_topo *t, int i)
{
	struct lb_node n;
	char replicas[8], others[8];

	lb_node_init_local(&n, t->sentinel[i]->port, 500);
	redisReply *r = lb_node_cmd(&n, "SENTINEL MASTER %s", LB_SENTINEL_MASTER);
	snprintf(replicas, sizeof(replicas), "%d", LB_TOPO_REPLICAS);
	snprintf(others, sizeof(others), "%d", LB_TOPO_SENTINELS - 1);
	bool ok = field_is(r, "flags", "master") && field_is(r, "num-slaves", replicas) &&
		  field_is(r, "num-other-sentinels", others);
	if (r)
		freeReplyObject(r);
	lb_node_close(&n);
	return ok;
}

static int config_set(struct lb_server *s, const char *name, const char *value)
{
	struct lb_node n;

	lb_node_init_local(&n, s->port, 1000);
	redisReply *r = lb_node_cmd(&n, "CONFIG SET %s %s", name, value);
	bool ok = lb_reply_ok(r);
	if (r)
		freeReplyObject(r);
	lb_node_close(&n);
	if (!ok) {
		lb_errorf("CONFIG SET %s %s on 127.0.0.1:%d failed", name, value, s->port);
		return LB_EREDIS;
	}
	return 0;
}

int lb_sentinel_topo_master_port(const struct lb_sentinel_topo *t, int i)
{
	struct lb_node n;
	int port = LB_EREDIS;

	lb_node_init_local(&n, t->sentinel[i]->port, 500);
	redisReply *r = lb_node_cmd(&n, "SENTINEL get-master-addr-by-name %s", LB_SENTINEL_MASTER);
	if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
	    r->element[1]->type == REDIS_REPLY_STRING)
		port = atoi(r->element[1]->str);
	if (r)
		freeReplyObject(r);
	lb_node_close(&n);
	return port;
}

const char *lb_topo_part_name(int part)
{
	static char named[4][32];
	static unsigned next;
	if (part >= LB_PART_PORT0 && part <= LB_PART_PORT0 + 65535) { /* the user's deployment */
		char *b = named[next++ % 4];
		snprintf(b, sizeof(named[0]), "the server on port %d", part - LB_PART_PORT0);
		return b;
	}
	static const char *const names[LB_TOPO_PARTS] = { "primary", "replica 0", "replica 1",
							  "sentinel 0", "sentinel 1", "sentinel 2" };
	if (part >= LB_CLUSTER_PART0 && part < LB_CLUSTER_PART0 + LB_CLUSTER_NODES)
		return lb_cluster_part_name(part - LB_CLUSTER_PART0);
	return part >= 0 && part < LB_TOPO_PARTS ? names[part] : "?";
}

const char *lb_topo_part_phrase(int part)
{
	if (part == LB_CLUSTER_PART0)
		return "primary 0 (the lock's first primary)";
	if (part == LB_CLUSTER_PART0 + LB_CLUSTER_SHARDS)
		return "replica 0 (primary 0's replica)";
	return part == LB_PART_PRIMARY ? "the first primary" : lb_topo_part_name(part);
}

int lb_sentinel_topo_part_at(const struct lb_sentinel_topo *t, int front)
{
	for (int i = 0; i < LB_TOPO_PARTS; i++)
		if (t->front[i] == front)
			return i;
	return -1;
}

int lb_sentinel_topo_start(struct lb_sentinel_topo *t, const struct lb_sentinel_opts *opts)
{
	return lb_sentinel_topo_start_net(t, opts, NULL);
}

/* Part @i's server options: on a net, it connects out from its party
 * address and a server announces its front when it is (or becomes) a replica. */
static struct lb_server_opts part_opts(struct lb_sentinel_topo *t, int i, const char *sentinel_conf)
{
	int k = 0;

	if (t->net) {
		snprintf(t->args[i][0], sizeof(t->args[i][0]), "--bind-source-addr");
		lb_party_addr(i, t->args[i][1], sizeof(t->args[i][1]));
		k = 2;
		if (!sentinel_conf) {
			snprintf(t->args[i][2], sizeof(t->args[i][2]), "--replica-announce-ip");
			snprintf(t->args[i][3], sizeof(t->args[i][3]), "127.0.0.1");
			snprintf(t->args[i][4], sizeof(t->args[i][4]), "--replica-announce-port");
			snprintf(t->args[i][5], sizeof(t->args[i][5]), "%d", t->front[i]);
			k = 6;
		}
	}
	for (int a = 0; a < k; a++)
		t->argv[i][a] = t->args[i][a];
	t->argv[i][k] = NULL;
	return (struct lb_server_opts){ .extra_args = t->argv[i], .sentinel_config = sentinel_conf };
}

/* Part @i is up on @s: behind the relay, tell the relay where it is. */
static struct lb_server *placed(struct lb_sentinel_topo *t, const struct lb_topo_net *net, int i,
				struct lb_server *s)
{
	if (s && net)
		atomic_store(net->port[i], s->port);
	if (s && !net)
		t->front[i] = s->port;
	return s;
}

int lb_sentinel_topo_start_net(struct lb_sentinel_topo *t, const struct lb_sentinel_opts *opts,
			       const struct lb_topo_net *net)
{
	static const char *const priority[LB_TOPO_REPLICAS] = { "10", "100" };
	char conf[768];
	int rc = LB_ESYS;

	memset(t, 0, sizeof(*t));
	t->opts = (struct lb_sentinel_opts){ .down_after_ms = 1000, .failover_timeout_ms = 5000,
					     .quorum = 2, .ready_timeout_ms = 30000 };
	if (opts) {
		if (opts->down_after_ms > 0)
			t->opts.down_after_ms = opts->down_after_ms;
		if (opts->failover_timeout_ms > 0)
			t->opts.failover_timeout_ms = opts->failover_timeout_ms;
		if (opts->quorum > 0)
			t->opts.quorum = opts->quorum;
		if (opts->ready_timeout_ms > 0)
			t->opts.ready_timeout_ms = opts->ready_timeout_ms;
		t->opts.min_replicas = opts->min_replicas;
		t->opts.min_replicas_max_lag = opts->min_replicas_max_lag;
	}
	t->net = net != NULL;
	if (net)
		memcpy(t->front, net->front, sizeof(t->front));
	struct lb_server_opts po = part_opts(t, LB_PART_PRIMARY, NULL);
	if (!placed(t, net, LB_PART_PRIMARY, t->primary = lb_server_start(&po)))
		goto fail;
	for (int i = 0; i < LB_TOPO_REPLICAS; i++) {
		struct lb_server_opts ro = part_opts(t, LB_PART_REPLICA0 + i, NULL);
		t->replica[i] = placed(t, net, LB_PART_REPLICA0 + i,
				       lb_server_start_replica_with(&ro, t->primary->port,
								    t->front[LB_PART_PRIMARY], 10000));
		/* a promoted replica streams its snapshot to the other at once, as the
		 * primary does (Redis waits 5 s by default for more replicas) */
		if (!t->replica[i] ||
		    (rc = config_set(t->replica[i], "replica-priority", priority[i])) < 0 ||
		    (rc = config_set(t->replica[i], "repl-diskless-sync-delay", "0")) < 0)
			goto fail;
	}
	/* the documented mitigation, on every server (a promoted replica too),
	 * once the replicas are in sync: a primary refuses writes while fewer
	 * than N replicas acknowledged within the last max-lag seconds */
	for (int i = 0; i < 1 + LB_TOPO_REPLICAS && t->opts.min_replicas > 0; i++) {
		struct lb_server *srv = i ? t->replica[i - 1] : t->primary;
		char v[16];
		snprintf(v, sizeof(v), "%d", t->opts.min_replicas_max_lag > 0 ?
						t->opts.min_replicas_max_lag : 10);
		if ((rc = config_set(srv, "min-replicas-max-lag", v)) < 0)
			goto fail;
		snprintf(v, sizeof(v), "%d", t->opts.min_replicas);
		if ((rc = config_set(srv, "min-replicas-to-write", v)) < 0)
			goto fail;
	}
	for (int i = 0; i < LB_TOPO_SENTINELS; i++) {
		int part = LB_PART_SENTINEL0 + i, o;
		o = snprintf(conf, sizeof(conf),
			     "sentinel monitor %s 127.0.0.1 %d %d\n"
			     "sentinel down-after-milliseconds %s %lld\n"
			     "sentinel failover-timeout %s %lld\n"
			     "sentinel parallel-syncs %s 1\n",
			     LB_SENTINEL_MASTER, t->front[LB_PART_PRIMARY], t->opts.quorum,
			     LB_SENTINEL_MASTER, (long long)t->opts.down_after_ms, LB_SENTINEL_MASTER,
			     (long long)t->opts.failover_timeout_ms, LB_SENTINEL_MASTER);
		if (net) /* what it tells the others in its hello messages: its front */
			snprintf(conf + o, sizeof(conf) - (size_t)o,
				 "sentinel announce-ip 127.0.0.1\nsentinel announce-port %d\n",
				 t->front[part]);
		struct lb_server_opts so = part_opts(t, part, conf);
		if (!placed(t, net, part, t->sentinel[i] = lb_server_start(&so))) {
			rc = LB_ESYS;
			goto fail;
		}
	}
	int64_t until = lb_now_ns() + t->opts.ready_timeout_ms * LB_NS_PER_MS;
	for (int i = 0; i < LB_TOPO_SENTINELS;) {
		if (watching(t, i)) {
			i++;
			continue;
		}
		if (lb_now_ns() > until) {
			lb_errorf("Sentinel %d (127.0.0.1:%d) did not see the primary with %d replicas "
				  "and %d other Sentinels within %lld ms; see %s", i,
				  t->sentinel[i]->port, LB_TOPO_REPLICAS, LB_TOPO_SENTINELS - 1,
				  (long long)t->opts.ready_timeout_ms, t->sentinel[i]->log_path);
			rc = LB_ETIMEOUT;
			goto fail;
		}
		lb_sleep_ns(50 * LB_NS_PER_MS);
	}
	return 0;
fail:
	lb_sentinel_topo_destroy(t);
	return rc < 0 ? rc : LB_ESYS;
}

void lb_sentinel_topo_destroy(struct lb_sentinel_topo *t)
{
	/* the Sentinels first: they must not fail over a primary being stopped */
	for (int i = 0; i < LB_TOPO_SENTINELS; i++) {
		lb_server_destroy(t->sentinel[i]);
		t->sentinel[i] = NULL;
	}
	for (int i = 0; i < LB_TOPO_REPLICAS; i++) {
		lb_server_destroy(t->replica[i]);
		t->replica[i] = NULL;
	}
	lb_server_destroy(t->primary);
	t->primary = NULL;
}

/* One message a Sentinel published: ["message", channel, payload];
 * sdown/odown payloads begin with the instance's kind ("master NAME IP PORT
 * ..."), a switch's with the name ("NAME OLDIP OLDPORT NEWIP NEWPORT"), a
 * demotion's and a choice's with "slave IP:PORT IP PORT @ NAME MIP MPORT".
 * With @master, messages about another master are not ours. */
static void sentinel_message(const redisReply *r, const char *master,
			     void (*report)(void *arg, enum lb_sentinel_news what, int port), void *arg)
{
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element[1]->type != REDIS_REPLY_STRING || r->element[2]->type != REDIS_REPLY_STRING)
		return;
	const char *ch = r->element[1]->str, *msg = r->element[2]->str;
	char name[64], ip[64], of[64] = "";
	int port = 0, newport = 0;
	if (!strcmp(ch, "+switch-master")) {
		if (sscanf(msg, "%63s %63s %d %63s %d", name, ip, &port, ip, &newport) == 5 &&
		    (!master || !strcmp(name, master)))
			report(arg, LB_SENTINEL_SWITCH, newport);
	} else if (!strcmp(ch, "+convert-to-slave") || !strcmp(ch, "+selected-slave")) {
		if (sscanf(msg, "slave %63s %63s %d @ %63s", name, ip, &port, of) >= 3 &&
		    (!master || !strcmp(of, master)))
			report(arg, ch[1] == 'c' ? LB_SENTINEL_DEMOTE : LB_SENTINEL_CHOSEN, port);
	} else if (sscanf(msg, "master %63s %63s %d", name, ip, &port) == 3 &&
		   (!master || !strcmp(name, master))) {
		report(arg, !strcmp(ch, "+sdown") ? LB_SENTINEL_SDOWN : !strcmp(ch, "+odown") ?
		       LB_SENTINEL_ODOWN : LB_SENTINEL_FAILOVER_END, port);
	}
}

#define SUB_ALL "SUBSCRIBE +sdown +odown +switch-master +convert-to-slave +selected-slave"
#define SUB_SOME "SUBSCRIBE +convert-to-slave +selected-slave"
#define SUB_THEIRS SUB_ALL " +failover-end"

/* The user's Sentinels all tell of everything (so that the first to see it
 * is heard, not the first of the list): each (news, server) once between two
 * switches of the primary. */
struct once {
	void (*report)(void *arg, enum lb_sentinel_news what, int port);
	void *arg;
	int seen[32][2];
	int n;
};

static void report_once(void *arg, enum lb_sentinel_news what, int port)
{
	struct once *o = arg;

	for (int i = 0; i < o->n; i++)
		if (o->seen[i][0] == (int)what && o->seen[i][1] == port)
			return;
	if (what == LB_SENTINEL_SWITCH)
		o->n = 0; /* a new primary: what comes next is news again */
	if (o->n < 32) {
		o->seen[o->n][0] = (int)what;
		o->seen[o->n++][1] = port;
	}
	o->report(o->arg, what, port);
}

/* The watcher's loop: every message of the @n subscribed connections @c. */
static _Noreturn void watch_loop(redisContext **c, int n, const char *master,
				 void (*report)(void *arg, enum lb_sentinel_news what, int port),
				 void *arg)
{
	struct pollfd pf[LB_MAX_SENTINELS];

	for (int i = 0; i < n; i++)
		pf[i] = (struct pollfd){ .fd = c[i] ? c[i]->fd : -1, .events = POLLIN };
	for (;;) {
		if (poll(pf, (nfds_t)n, -1) < 0)
			continue;
		for (int i = 0; i < n; i++) {
			redisReply *r = NULL;
			if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (redisBufferRead(c[i]) != REDIS_OK) {
				pf[i].fd = -1; /* that Sentinel is gone; the others may speak */
				continue;
			}
			while (redisGetReplyFromReader(c[i], (void **)&r) == REDIS_OK && r) {
				sentinel_message(r, master, report, arg);
				freeReplyObject(r);
				r = NULL;
			}
		}
	}
}

pid_t lb_sentinel_topo_watch(const struct lb_sentinel_topo *t,
			     void (*report)(void *arg, enum lb_sentinel_news what, int port),
			     void *arg)
{
	pid_t pid = lb_fork_helper("the Sentinel watcher");
	if (pid != 0)
		return pid;
	/* Sentinel 0 tells of the failover; the choice of a replica (by the
	 * elected leader) and a demotion (by whichever Sentinel sees the returned
	 * server first) can come from any of them: listen to all */
	redisContext *c[LB_TOPO_SENTINELS];
	for (int i = 0; i < LB_TOPO_SENTINELS; i++) {
		c[i] = redisConnect("127.0.0.1", t->sentinel[i]->port);
		redisReply *r = c[i] && !c[i]->err ? redisCommand(c[i], i == 0 ? SUB_ALL : SUB_SOME)
						   : NULL;
		if (!r)
			_exit(1);
		freeReplyObject(r);
	}
	watch_loop(c, LB_TOPO_SENTINELS, NULL, report, arg);
}

/* Subscribe to the user's Sentinel @s (its AUTH first): the connection, or
 * NULL with why in @why. */
static redisContext *subscribe_theirs(const struct lb_addr *s, bool all, char *why, size_t len)
{
	struct timeval tv = { 2, 0 };
	struct lb_node probe;
	char w[160];

	int via = lb_node_route(s->host, s->port); /* rediss://: through lockbench's tunnel */

	lb_node_init_local(&probe, 0, 2000);
	probe.tls = via > 0;
	if (!lb_node_probe(&probe, s->host, s->port, w, sizeof(w))) {
		snprintf(why, len, "Sentinel %s:%d: %.100s", s->host, s->port, w);
		return NULL;
	}
	redisContext *c = redisConnectWithTimeout(via > 0 ? "127.0.0.1" : s->host,
						  via > 0 ? via : s->port, tv);
	redisReply *r = NULL;

	if (!c || c->err) {
		snprintf(why, len, "Sentinel %s:%d: %.100s", s->host, s->port, c ? c->errstr : "no memory");
		goto fail;
	}
	redisSetTimeout(c, tv);
	if (s->pass[0]) {
		r = s->user[0] ? redisCommand(c, "AUTH %s %s", s->user, s->pass)
			       : redisCommand(c, "AUTH %s", s->pass);
		bool ok = lb_reply_ok(r);
		if (!ok)
			snprintf(why, len, "Sentinel %s:%d refused AUTH: %.100s", s->host, s->port,
				 r && r->type == REDIS_REPLY_ERROR ? r->str : "no answer");
		if (r)
			freeReplyObject(r);
		r = NULL;
		if (!ok)
			goto fail;
	}
	r = redisCommand(c, all ? SUB_THEIRS : SUB_SOME);
	if (!r || r->type == REDIS_REPLY_ERROR) {
		snprintf(why, len, "Sentinel %s:%d: SUBSCRIBE: %.100s", s->host, s->port,
			 r ? r->str : c->errstr[0] ? c->errstr : "no answer");
		goto fail;
	}
	freeReplyObject(r);
	struct timeval forever = { 0, 0 };
	redisSetTimeout(c, forever);
	return c;
fail:
	if (r)
		freeReplyObject(r);
	if (c)
		redisFree(c);
	return NULL;
}

pid_t lb_sentinel_watch_theirs(const struct lb_addr *s, int n, const char *master,
			       void (*report)(void *arg, enum lb_sentinel_news what, int port),
			       void *arg, char *why, size_t len)
{
	redisContext *c[LB_MAX_SENTINELS];
	int up = 0;

	why[0] = '\0';
	for (int i = 0; i < n && i < LB_MAX_SENTINELS; i++) {
		char w[200];
		c[i] = subscribe_theirs(&s[i], true, w, sizeof(w));
		up += c[i] != NULL;
		if (!c[i] && !why[0])
			snprintf(why, len, "%s", w);
	}
	pid_t pid = up ? lb_fork_helper("the Sentinel watcher") : LB_EREDIS;
	if (pid != 0) { /* the caller: the connections are the watcher's */
		for (int i = 0; i < n && i < LB_MAX_SENTINELS; i++)
			if (c[i])
				redisFree(c[i]);
		return pid;
	}
	static struct once o;
	o = (struct once){ .report = report, .arg = arg };
	watch_loop(c, n < LB_MAX_SENTINELS ? n : LB_MAX_SENTINELS, master, report_once, &o);
}
