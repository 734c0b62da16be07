/*
 * topology.c - a primary, two replicas and three Sentinels on loopback
 * (topology.h). The Sentinels watch the primary by its own port; they learn
 * the replicas from its INFO and each other from hello messages, which is
 * why the start waits until each of them reports both.
 */
#include "topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node.h"
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

int lb_sentinel_topo_start(struct lb_sentinel_topo *t, const struct lb_sentinel_opts *opts)
{
	int rc = lb_sentinel_topo_start_primary(t, opts);
	return rc < 0 ? rc : lb_sentinel_topo_start_rest(t, t->primary->port);
}

int lb_sentinel_topo_start_primary(struct lb_sentinel_topo *t, const struct lb_sentinel_opts *opts)
{
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
	}
	return (t->primary = lb_server_start(NULL)) ? 0 : LB_ESYS;
}

int lb_sentinel_topo_start_rest(struct lb_sentinel_topo *t, int replica0_link)
{
	static const char *const priority[LB_TOPO_REPLICAS] = { "10", "100" };
	char conf[512];
	int rc = LB_ESYS;

	for (int i = 0; i < LB_TOPO_REPLICAS; i++) {
		t->replica[i] = lb_server_start_replica(t->primary->port,
							i == 0 ? replica0_link : t->primary->port, 10000);
		/* a promoted replica streams its snapshot to the other at once, as the
		 * primary does (Redis waits 5 s by default for more replicas) */
		if (!t->replica[i] ||
		    (rc = config_set(t->replica[i], "replica-priority", priority[i])) < 0 ||
		    (rc = config_set(t->replica[i], "repl-diskless-sync-delay", "0")) < 0)
			goto fail;
	}
	snprintf(conf, sizeof(conf),
		 "sentinel monitor %s 127.0.0.1 %d %d\n"
		 "sentinel down-after-milliseconds %s %lld\n"
		 "sentinel failover-timeout %s %lld\n"
		 "sentinel parallel-syncs %s 1\n",
		 LB_SENTINEL_MASTER, t->primary->port, t->opts.quorum, LB_SENTINEL_MASTER,
		 (long long)t->opts.down_after_ms, LB_SENTINEL_MASTER,
		 (long long)t->opts.failover_timeout_ms, LB_SENTINEL_MASTER);
	struct lb_server_opts so = { .sentinel_config = conf };
	for (int i = 0; i < LB_TOPO_SENTINELS; i++)
		if (!(t->sentinel[i] = lb_server_start(&so))) {
			rc = LB_ESYS;
			goto fail;
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

pid_t lb_sentinel_topo_watch(const struct lb_sentinel_topo *t,
			     void (*report)(void *arg, enum lb_sentinel_news what, int port),
			     void *arg)
{
	pid_t parent = getpid();

	fflush(NULL);
	pid_t pid = fork();
	if (pid != 0) {
		if (pid < 0) {
			lb_errorf("cannot fork the Sentinel watcher");
			return LB_ESYS;
		}
		lb_signals_track_child(pid);
		return pid;
	}
	if (!lb_child_bind_to_parent(parent))
		_exit(0);
	redisContext *c = redisConnect("127.0.0.1", t->sentinel[0]->port);
	redisReply *r = c && !c->err ? redisCommand(c, "SUBSCRIBE +sdown +odown +switch-master")
				     : NULL;
	if (!r)
		_exit(1);
	freeReplyObject(r);
	while (redisGetReply(c, (void **)&r) == REDIS_OK && r) {
		/* ["message", channel, payload]; sdown/odown payloads begin with the
		 * instance's kind ("master NAME IP PORT ..."), a switch's with the
		 * name ("NAME OLDIP OLDPORT NEWIP NEWPORT") */
		if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
		    r->element[1]->type == REDIS_REPLY_STRING && r->element[2]->type == REDIS_REPLY_STRING) {
			const char *ch = r->element[1]->str, *msg = r->element[2]->str;
			char name[64], ip[64];
			int port = 0, newport = 0;
			if (!strcmp(ch, "+switch-master") &&
			    sscanf(msg, "%63s %63s %d %63s %d", name, ip, &port, ip, &newport) == 5)
				report(arg, LB_SENTINEL_SWITCH, newport);
			else if (strcmp(ch, "+switch-master") &&
				 sscanf(msg, "master %63s %63s %d", name, ip, &port) == 3)
				report(arg, !strcmp(ch, "+sdown") ? LB_SENTINEL_SDOWN : LB_SENTINEL_ODOWN,
				       port);
		}
		freeReplyObject(r);
	}
	_exit(0);
}
