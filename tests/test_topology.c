/*
 * test_topology.c - the Sentinel topology on real servers and real Sentinels:
 * it starts watched (both replicas, both other Sentinels), a node that finds
 * its primary through the Sentinels follows a real failover, a demoted
 * primary's READONLY makes the node look again, a kill -9 of the process
 * that started it all leaves nothing, a partition through the relay splits
 * the brain (both primaries grant the lock until the old one is demoted), and
 * a run on a user's own Sentinels (--sentinel) touches only its own keys.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "node.h"
#include "readers.h"
#include "topology.h"
#include "util.h"

FX_SUITE(topology, 120);

static struct lb_sentinel_topo topo;

static void stop(void)
{
	lb_sentinel_topo_destroy(&topo);
}

/* host:port of the three Sentinels. */
static void sentinel_urls(char *out, size_t len)
{
	size_t o = 0;
	for (int i = 0; i < LB_TOPO_SENTINELS; i++)
		o += (size_t)snprintf(out + o, len - o, "%s127.0.0.1:%d", i ? "," : "",
				      topo.sentinel[i]->port);
}

Test(topology, a_sentinel_topology_starts_watched, .fini = stop)
{
	cr_assert_eq(lb_sentinel_topo_start(&topo, NULL), 0);
	for (int i = 0; i < LB_TOPO_SENTINELS; i++)
		cr_assert_eq(lb_sentinel_topo_master_port(&topo, i), topo.primary->port,
			     "Sentinel %d names another primary", i);
	struct lb_node n;
	lb_node_init_local(&n, topo.replica[0]->port, 1000);
	redisReply *r = lb_node_cmd(&n, "CONFIG GET replica-priority");
	cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
	cr_assert_str_eq(r->element[1]->str, "10", "replica 0 must be the one promoted first");
	freeReplyObject(r);
	lb_node_close(&n);
}

/* The node asks the Sentinels, writes to the primary, and after a kill -9 of
 * the primary finds the promoted replica (replica 0, the lower priority), with
 * the write that had reached it. How long no primary accepted writes is
 * measured and printed, not assumed. */
Test(topology, a_node_follows_the_primary_through_a_failover, .fini = stop)
{
	struct lb_sentinel_opts o = { .down_after_ms = 500, .failover_timeout_ms = 3000 };
	char urls[256];
	struct lb_node n;

	cr_assert_eq(lb_sentinel_topo_start(&topo, &o), 0);
	sentinel_urls(urls, sizeof(urls));
	memset(&n, 0, sizeof(n));
	n.timeout_ms = 500;
	cr_assert_eq(lb_node_use_sentinels(&n, urls, LB_SENTINEL_MASTER), 0);
	redisReply *r = lb_node_cmd(&n, "SET lockbench:topo before");
	cr_assert(lb_reply_ok(r), "no write through the Sentinels' primary");
	freeReplyObject(r);
	cr_assert_eq(n.port, topo.primary->port);
	r = lb_node_cmd(&n, "WAIT 2 2000");
	long long acks = 0;
	cr_assert(lb_reply_int(r, &acks) && acks == 2, "the write did not reach both replicas");
	freeReplyObject(r);

	int64_t t0 = lb_now_ns(), t_ok = 0;
	lb_server_kill(topo.primary);
	while (lb_now_ns() - t0 < 20 * LB_NS_PER_S) {
		r = lb_node_cmd(&n, "SET lockbench:topo after");
		bool ok = lb_reply_ok(r);
		if (r)
			freeReplyObject(r);
		if (ok) {
			t_ok = lb_now_ns();
			break;
		}
		lb_sleep_ns(20 * LB_NS_PER_MS);
	}
	cr_assert_gt(t_ok, 0, "no primary accepted a write within 20 s of the kill");
	cr_assert_eq(n.port, topo.replica[0]->port,
		     "the node writes to 127.0.0.1:%d, not to replica 0 (%d), the one Sentinel "
		     "must promote", n.port, topo.replica[0]->port);
	cr_assert_geq(n.lookups, 2, "the node never asked the Sentinels again");
	printf("failover: no primary accepted writes for %.2f s after the kill -9 "
	       "(down-after 500 ms)\n", (double)(t_ok - t0) / 1e9);
	lb_node_close(&n);
}

/* A node that reaches a server which is not (or no longer) the primary gets
 * READONLY and drops the connection: its next command looks again. */
Test(topology, readonly_drops_the_connection, .fini = stop)
{
	struct lb_node n;

	cr_assert_eq(lb_sentinel_topo_start(&topo, NULL), 0);
	lb_node_init_local(&n, topo.replica[1]->port, 1000);
	redisReply *r = lb_node_cmd(&n, "SET lockbench:topo x");
	cr_assert(r && r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "READONLY", 8),
		  "a replica accepted a write");
	freeReplyObject(r);
	cr_assert_null(n.ctx, "the connection to a replica was kept after READONLY");
}

Test(topology, bad_sentinel_lists_are_refused)
{
	struct lb_node n;
	memset(&n, 0, sizeof(n));
	cr_assert_eq(lb_node_use_sentinels(&n, "", "m"), LB_EINVAL);
	cr_assert_eq(lb_node_use_sentinels(&n, "127.0.0.1:", "m"), LB_EINVAL);
	cr_assert_eq(lb_node_use_sentinels(&n, "127.0.0.1", "m"), 0, "a Sentinel's port: 26379");
	cr_assert_eq(n.sentinel[0].port, 26379);
	memset(&n, 0, sizeof(n));
	cr_assert_eq(lb_node_use_sentinels(&n, "127.0.0.1:1,127.0.0.1:2", ""), LB_EINVAL);
	cr_assert_eq(lb_node_use_sentinels(&n, "a:1,a:2,a:3,a:4,a:5,a:6", "m"), LB_EINVAL);
	cr_assert_eq(lb_node_use_sentinels(&n, "redis://127.0.0.1:26379,127.0.0.1:26380", "m"), 0);
	cr_assert_eq(n.n_sentinels, 2);
	cr_assert_eq(n.sentinel[1].port, 26380);
}

/* `lockbench servers --sentinel` killed with -9: the primary, the replicas
 * and the Sentinels all go with it. */
Test(topology, kill_9_leaves_no_server_and_no_sentinel)
{
	char dir[] = "/tmp/lbtest-topology-XXXXXX", out[128];
	pid_t pids[32];

	cr_assert_not_null(fx_mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/output", dir);
	fx_become_subreaper();
	const char *args[] = { "servers", "--sentinel", NULL };
	pid_t pid = fx_spawn_lockbench(args, out, out);
	int n = 0;
	for (int t = 0; t < 600 && (access(out, R_OK) != 0 || !strstr(fx_slurp(dir, "output"), "ready;")); t++)
		lb_sleep_ns(50 * LB_NS_PER_MS);
	cr_assert(strstr(fx_slurp(dir, "output"), "sentinel redis://127.0.0.1:"), "%s",
		  fx_slurp(dir, "output"));
	n = fx_descendants(pid, pids, 32);
	cr_assert_eq(n, 8, "expected lockbench, its janitor, a primary, 2 replicas and 3 "
		     "Sentinels, found %d processes", n);
	fx_kill9_leaves_nothing(pid, pids, n);
	/* nor their directories: the janitor removed them (named after their owner) */
	char pattern[64];
	snprintf(pattern, sizeof(pattern), "lockbench-redis-%d-", (int)pid);
	int left = 0;
	for (int t = 0; t < 40; t++) {
		left = fx_count_tmp_entries(pattern);
		if (left == 0)
			break;
		lb_sleep_ns(50 * LB_NS_PER_MS);
	}
	cr_assert_eq(left, 0, "%d server directories left in the temporary directory", left);
}

/* A whole run on the topology: the primary killed under a holder, real
 * Sentinels promote a replica, the clients find it; the lock survived (no
 * overlap) and acquires failed meanwhile (unavailable), all measured. */
Test(topology, a_run_lives_through_a_real_failover)
{
	char dir[] = "/tmp/lbtest-topology-XXXXXX", out[128], path[200];
	struct lb_summary sum;

	cr_assert_not_null(fx_mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/run", dir);
	const char *args[] = { "run", "--scenario", "sentinel-failover", "--strategy", "token-lua",
			       "--seed", "3", "--out", out, "--no-status", "--no-report", NULL };
	cr_assert_eq(fx_lockbench(dir, args), 0, "%s", fx_slurp(dir, "output"));
	snprintf(path, sizeof(path), "%s/summary.csv", out);
	cr_assert_eq(lb_summary_read(path, &sum), 0);
	cr_assert_str_eq(lb_summary_get(&sum, "observed"), "unavailable");
	cr_assert_eq(atoi(lb_summary_get(&sum, "overlaps")), 0, "the promoted replica lost the lock");
	cr_assert_gt(atoi(lb_summary_get(&sum, "acquire_errors")), 0,
		     "no acquire failed while there was no primary");
	cr_assert_gt(atoi(lb_summary_get(&sum, "sections")), 2, "no section after the failover");
	cr_assert(strstr(fx_slurp(out, "events.csv"), ",node-kill,"), "the kill is not an event");
	const char *bad[] = { "run", "--topology", "sentinel", "--strategy", "redlock", NULL };
	cr_assert_eq(fx_lockbench(dir, bad), 2);
	cr_assert(strstr(fx_slurp(dir, "output"), "redlock needs several lock nodes"), "%s",
		  fx_slurp(dir, "output"));
}

/* Split brain, every link through the relay: the primary and client 0 are
 * cut off from the rest; the Sentinels promote replica 0, client 1 follows
 * them there, both primaries grant the lock (overlap), and after the heal
 * the Sentinels demote the old primary and client 0 moves over, all in the
 * run's own events. */
Test(topology, a_partition_splits_the_brain)
{
	char dir[] = "/tmp/lbtest-topology-XXXXXX", out[128], path[200];
	struct lb_summary sum;

	cr_assert_not_null(fx_mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/run", dir);
	const char *args[] = { "run", "--scenario", "sentinel-split-brain", "--strategy", "set-nx-px",
			       "--seed", "5", "--out", out, "--no-status", "--no-report", NULL };
	cr_assert_eq(fx_lockbench(dir, args), 0, "%s", fx_slurp(dir, "output"));
	snprintf(path, sizeof(path), "%s/summary.csv", out);
	cr_assert_eq(lb_summary_read(path, &sum), 0);
	cr_assert_str_eq(lb_summary_get(&sum, "observed"), "overlap");
	const char *ev = fx_slurp(out, "events.csv");
	cr_assert(strstr(ev, ",net-partition,"), "%s", ev);
	cr_assert(strstr(ev, ",switch-master,,0,1\n"), "replica 0 was not promoted:\n%s", ev);
	cr_assert(strstr(ev, ",primary-seen,1,,1\n"), "client 1 never used replica 0:\n%s", ev);
	cr_assert(strstr(ev, ",partition-healed,"), "%s", ev);
	cr_assert(strstr(ev, ",demoted,,0,0\n"), "the old primary was not demoted:\n%s", ev);
	cr_assert(strstr(ev, ",primary-seen,0,,1\n"), "client 0 stayed on the old primary:\n%s", ev);
	/* the servers' own account, kept beside the history */
	for (int i = 0; i < 3; i++) {
		char name[32];
		snprintf(name, sizeof(name), "sentinel-%d.log", i);
		const char *log = fx_slurp(out, name);
		cr_assert(strstr(log, "+sdown master lockbench"), "%s: %s", name, log);
		cr_assert(strstr(log, "+switch-master lockbench"), "%s: %s", name, log);
	}
	cr_assert(strstr(fx_slurp(out, "redis-replica-0.log"), "MASTER MODE enabled"),
		  "replica 0's log does not tell of its promotion");
	cr_assert(strstr(fx_slurp(out, "redis-lock-0.log"), "Connecting to MASTER"),
		  "the old primary's log does not tell of its demotion");
}

/* --sentinel: a deployment lockbench did not start, found through its
 * Sentinels; only the run's own keys are written (and removed); a scenario
 * whose faults need lockbench's own servers is skipped with the reason. */
Test(topology, runs_on_a_users_sentinels, .fini = stop)
{
	char dir[] = "/tmp/lbtest-topology-XXXXXX", out[128], path[200], urls[128];
	struct lb_summary sum;

	cr_assert_eq(lb_sentinel_topo_start(&topo, NULL), 0);
	sentinel_urls(urls, sizeof(urls));
	cr_assert_not_null(fx_mkdtemp(dir));
	/* a key of the user's, which the run must leave alone */
	redisContext *c = redisConnect("127.0.0.1", topo.primary->port);
	cr_assert(c && !c->err);
	freeReplyObject(redisCommand(c, "SET users:key 1"));
	snprintf(out, sizeof(out), "%s/run", dir);
	const char *args[] = { "run", "--sentinel", urls, "--sentinel-master", LB_SENTINEL_MASTER,
			       "--strategy", "token-lua", "--duration", "1", "--out", out,
			       "--no-status", "--no-report", NULL };
	cr_assert_eq(fx_lockbench(dir, args), 0, "%s", fx_slurp(dir, "output"));
	snprintf(path, sizeof(path), "%s/summary.csv", out);
	cr_assert_eq(lb_summary_read(path, &sum), 0);
	cr_assert_str_eq(lb_summary_get(&sum, "observed"), "safe");
	cr_assert_gt(atoi(lb_summary_get(&sum, "sections")), 10);
	cr_assert(strstr(fx_slurp(out, "meta.txt"), "servers: the primary Sentinels"), "%s",
		  fx_slurp(out, "meta.txt"));
	snprintf(path, sizeof(path), "%s/sentinel-0.log", out);
	cr_assert_neq(access(path, F_OK), 0, "a log of a Sentinel lockbench did not start");
	redisReply *r = redisCommand(c, "DBSIZE");
	cr_assert(r && r->type == REDIS_REPLY_INTEGER && r->integer == 1,
		  "the run left keys behind, or removed the user's");
	freeReplyObject(r);
	redisFree(c);
	snprintf(out, sizeof(out), "%s/skipped", dir); /* --out takes a new directory */
	const char *skip[] = { "run", "--sentinel", urls, "--sentinel-master", LB_SENTINEL_MASTER,
			       "--strategy", "token-lua", "--scenario", "sentinel-split-brain",
			       "--out", out, "--no-status", "--no-report", NULL };
	cr_assert_eq(fx_lockbench(dir, skip), 3, "a run that cannot happen must not pass");
	cr_assert(strstr(fx_slurp(dir, "output"), "only when asked: --allow-faults"), "%s",
		  fx_slurp(dir, "output"));
	const char *half[] = { "run", "--sentinel", urls, "--strategy", "token-lua", NULL };
	cr_assert_eq(fx_lockbench(dir, half), 2);
	cr_assert(strstr(fx_slurp(dir, "output"), "go together"), "%s", fx_slurp(dir, "output"));
}

/* kill -9 of lockbench in the middle of a failover (the partition held, the
 * Sentinels deciding): no server, Sentinel, relay, watcher or client is left,
 * and no server directory. Nothing else on the host was touched to begin with
 * (the relay is a process, no firewall rule, no system setting). */
Test(topology, kill_9_mid_failover_leaves_nothing)
{
	char dir[] = "/tmp/lbtest-topology-XXXXXX", out[128], res[160], pattern[64];
	pid_t pids[64];

	cr_assert_not_null(fx_mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/output", dir);
	snprintf(res, sizeof(res), "%s/run", dir);
	fx_become_subreaper();
	const char *args[] = { "run", "--scenario", "sentinel-split-brain", "--strategy", "set-nx-px",
			       "--out", res, "--no-status", "--no-report", NULL };
	pid_t pid = fx_spawn_lockbench(args, out, out);
	/* lockbench, its janitor, the resource, 3 servers and 3 Sentinels, the
	 * relay, the watcher, 2 clients */
	int n = fx_wait_descendants(pid, pids, 64, 13, 30000);
	cr_assert_geq(n, 13, "only %d processes: %s", n, fx_slurp(dir, "output"));
	lb_sleep_ns(2500 * LB_NS_PER_MS); /* the partition began at 0.5 s, the failover is under way */
	n = fx_descendants(pid, pids, 64);
	fx_kill9_leaves_nothing(pid, pids, n);
	snprintf(pattern, sizeof(pattern), "lockbench-redis-%d-", (int)pid);
	int left = 0;
	for (int t = 0; t < 40 && (left = fx_count_tmp_entries(pattern)) > 0; t++)
		lb_sleep_ns(50 * LB_NS_PER_MS);
	cr_assert_eq(left, 0, "%d server directories left after the kill", left);
}
