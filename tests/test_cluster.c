/*
 * test_cluster.c - the Cluster topology on six real servers: the hash slot
 * lockbench computes is the one Redis computes, the cluster starts settled
 * (three primaries with their slots, each with its replica), the node layer
 * finds the primary of its slot through the seeds, follows MOVED and ASK
 * (hiredis does neither), and after a kill -9 of the primary finds the
 * promoted replica; a whole run loses its lock in a real cluster failover,
 * and a kill -9 of lockbench in the middle of a partition leaves nothing.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "fixture.h"
#include "node.h"
#include "readers.h"
#include "util.h"

FX_SUITE(cluster, 120);

static struct lb_cluster cl;

static void stop(void)
{
	lb_cluster_destroy(&cl);
}

static redisReply *on(int i, const char *fmt, const char *a)
{
	struct lb_node n;

	lb_node_init_local(&n, cl.node[i]->port, 1000);
	redisReply *r = lb_node_cmd(&n, fmt, a);
	lb_node_close(&n);
	return r;
}

/* The Cluster specification's check value: CRC16("123456789") = 0x31C3. */
Test(cluster, the_slot_is_the_specifications)
{
	cr_assert_eq(lb_key_slot("123456789", 9), 0x31C3 & 16383);
	cr_assert_eq(lb_key_slot("{user1000}.following", 21), lb_key_slot("user1000", 8));
	cr_assert_eq(lb_key_slot("foo{}{bar}", 10), lb_key_slot("foo{}{bar}", 10) & 16383);
	cr_assert_neq(lb_key_slot("{}x", 3), lb_key_slot("x", 1), "an empty tag is no tag");
	char prefix[32];
	cr_assert_eq(lb_cluster_prefix(prefix, sizeof(prefix)), 0);
	cr_assert(prefix[0] == '{' && strstr(prefix, "}:"), "prefix '%s'", prefix);
	cr_assert_lt(lb_key_slot(prefix, strlen(prefix)), LB_CLUSTER_SLOTS / LB_CLUSTER_SHARDS);
}

/* Started settled; every key's slot as Redis computes it; the node layer
 * finds the primary of the slot, and follows a MOVED from a wrong one. */
Test(cluster, the_node_layer_finds_its_slot_and_follows_moved, .fini = stop)
{
	char seeds[256];
	const char *keys[] = { "123456789", "lockbench:a", "{lb:0123abcd}:lock:0", "x{y}z" };

	cr_assert_eq(lb_cluster_start(&cl, NULL, NULL), 0);
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		redisReply *r = on(0, "CLUSTER KEYSLOT %s", keys[k]);
		long long slot = -1;
		cr_assert(lb_reply_int(r, &slot));
		cr_assert_eq(slot, lb_key_slot(keys[k], strlen(keys[k])), "%s", keys[k]);
		freeReplyObject(r);
	}
	lb_cluster_seeds(&cl, seeds, sizeof(seeds));
	/* a key of shard 2, asked first of a node that does not serve it */
	const char *key = "{lockbench-1}";
	int slot = lb_key_slot(key, strlen(key));
	cr_assert_geq(slot, 2 * LB_CLUSTER_SLOTS / 3, "pick a key of shard 2 (slot %d)", slot);
	struct lb_node n;
	lb_node_init_local(&n, cl.node[0]->port, 1000);
	cr_assert_eq(lb_node_use_cluster(&n, seeds, slot), 0);
	n.redirected = true; /* connect to primary 0 first, as a stale client would */
	redisReply *r = lb_node_cmd(&n, "SET %s v", key);
	cr_assert(lb_reply_ok(r), "the MOVED was not followed: %s", r ? r->str : "no reply");
	freeReplyObject(r);
	cr_assert_eq(n.redirects, 1);
	cr_assert_eq(n.port, cl.front[2]);
	lb_node_close(&n);
	/* from the seeds, straight to the primary of the slot */
	lb_node_init_local(&n, 1, 1000);
	cr_assert_eq(lb_node_use_cluster(&n, seeds, slot), 0);
	r = lb_node_cmd(&n, "GET %s", key);
	cr_assert(lb_reply_str_eq(r, "v"));
	freeReplyObject(r);
	cr_assert_eq(n.redirects, 0);
	cr_assert_eq(n.port, cl.front[2]);
	lb_node_close(&n);
}

/* A slot being migrated from primary 1 to primary 0: a key already gone
 * from the source answers ASK there, and the node sends it to the target
 * after ASKING, without moving (the slot is still primary 1's). */
Test(cluster, the_node_layer_follows_ask, .fini = stop)
{
	char seeds[256], id[2][64], slotstr[16];
	const char *key = "{lockbench-0}";
	int slot = lb_key_slot(key, strlen(key));

	cr_assert(slot >= LB_CLUSTER_SLOTS / 3 && slot < 2 * LB_CLUSTER_SLOTS / 3, "slot %d", slot);
	cr_assert_eq(lb_cluster_start(&cl, NULL, NULL), 0);
	for (int i = 0; i < 2; i++) {
		redisReply *r = on(i, "CLUSTER MYID", NULL);
		cr_assert(r && r->type == REDIS_REPLY_STRING);
		snprintf(id[i], sizeof(id[i]), "%s", r->str);
		freeReplyObject(r);
	}
	snprintf(slotstr, sizeof(slotstr), "%d", slot);
	struct lb_node a;
	lb_node_init_local(&a, cl.node[0]->port, 1000);
	redisReply *r = lb_node_cmd(&a, "CLUSTER SETSLOT %s IMPORTING %s", slotstr, id[1]);
	cr_assert(lb_reply_ok(r));
	freeReplyObject(r);
	lb_node_close(&a);
	lb_node_init_local(&a, cl.node[1]->port, 1000);
	r = lb_node_cmd(&a, "CLUSTER SETSLOT %s MIGRATING %s", slotstr, id[0]);
	cr_assert(lb_reply_ok(r));
	freeReplyObject(r);
	lb_node_close(&a);

	struct lb_node n;
	lb_cluster_seeds(&cl, seeds, sizeof(seeds));
	lb_node_init_local(&n, 1, 1000);
	cr_assert_eq(lb_node_use_cluster(&n, seeds, slot), 0);
	r = lb_node_cmd(&n, "SET %s moved-already", key);
	cr_assert(lb_reply_ok(r), "the ASK was not followed: %s", r ? r->str : "no reply");
	freeReplyObject(r);
	cr_assert_eq(n.redirects, 1);
	cr_assert_eq(n.port, cl.front[1], "an ASK must not move the node");
	lb_node_close(&n);
	r = on(0, "DEBUG OBJECT %s", key); /* the key is on the importing node */
	cr_assert(r && r->type == REDIS_REPLY_STATUS, "the key is not on primary 0");
	freeReplyObject(r);
}

/* kill -9 of the primary of the slot: its replica is promoted after
 * cluster-node-timeout, and the node finds it through the seeds. How long no
 * primary served the slot is measured and printed, not assumed. */
Test(cluster, a_node_follows_its_slot_through_a_failover, .fini = stop)
{
	char seeds[256];
	const char *key = "{lockbench-2}";
	int slot = lb_key_slot(key, strlen(key));
	struct lb_node n;

	cr_assert_lt(slot, LB_CLUSTER_SLOTS / 3, "slot %d", slot);
	cr_assert_eq(lb_cluster_start(&cl, NULL, NULL), 0);
	lb_cluster_seeds(&cl, seeds, sizeof(seeds));
	lb_node_init_local(&n, 1, 500);
	cr_assert_eq(lb_node_use_cluster(&n, seeds, slot), 0);
	redisReply *r = lb_node_cmd(&n, "SET %s before", key);
	cr_assert(lb_reply_ok(r));
	freeReplyObject(r);
	r = lb_node_cmd(&n, "WAIT 1 2000");
	long long acks = 0;
	cr_assert(lb_reply_int(r, &acks) && acks == 1, "the write did not reach the replica");
	freeReplyObject(r);
	cr_assert_eq(n.port, cl.front[0]);

	int64_t t0 = lb_now_ns(), t_ok = 0;
	cr_assert_eq(lb_server_kill(cl.node[0]), 0);
	while (lb_now_ns() - t0 < 20 * LB_NS_PER_S) {
		r = lb_node_cmd(&n, "SET %s after", key);
		bool ok = lb_reply_ok(r);
		if (r)
			freeReplyObject(r);
		if (ok) {
			t_ok = lb_now_ns();
			break;
		}
		lb_sleep_ns(50 * LB_NS_PER_MS);
	}
	cr_assert_gt(t_ok, 0, "no primary accepted the slot's writes within 20 s");
	cr_assert_eq(n.port, cl.front[3], "the slot should be on replica 0, promoted");
	printf("cluster failover: the slot was writable again %.2f s after the kill\n",
	       (double)(t_ok - t0) / 1e9);
	lb_node_close(&n);
}

/* A whole run on the cluster: primary 0 killed before the lock reaches its
 * lagging replica, the cluster flags it failed and promotes replica 0, the
 * waiting client finds the slot there and takes the lock beside the holder,
 * all in the run's own measurements and events. */
Test(cluster, a_run_loses_its_lock_in_a_real_failover)
{
	char dir[] = "/tmp/lbtest-cluster-XXXXXX", out[128], path[200];
	struct lb_summary sum;

	cr_assert_not_null(fx_mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/run", dir);
	const char *args[] = { "run", "--scenario", "cluster-lagging-replica", "--strategy",
			       "set-nx-px", "--seed", "3", "--out", out, "--no-status", "--no-report",
			       NULL };
	cr_assert_eq(fx_lockbench(dir, args), 0, "%s", fx_slurp(dir, "output"));
	snprintf(path, sizeof(path), "%s/summary.csv", out);
	cr_assert_eq(lb_summary_read(path, &sum), 0);
	cr_assert_str_eq(lb_summary_get(&sum, "observed"), "overlap");
	const char *ev = fx_slurp(out, "events.csv");
	cr_assert(strstr(ev, ",node-kill,"), "%s", ev);
	cr_assert(strstr(ev, ",node-failed,,0,8\n"), "primary 0 was never flagged FAIL:\n%s", ev);
	cr_assert(strstr(ev, ",switch-master,,0,11\n"), "replica 0 was not promoted:\n%s", ev);
	cr_assert(strstr(ev, ",primary-seen,1,,11\n"), "client 1 never used replica 0:\n%s", ev);
}

/* kill -9 of lockbench while a partition holds the cluster's links: no
 * server, relay, watcher or client survives, no directory is left. */
Test(cluster, kill_9_mid_partition_leaves_nothing)
{
	char dir[] = "/tmp/lbtest-cluster-XXXXXX", out[128], res[160], pattern[64];
	pid_t pids[64];

	cr_assert_not_null(fx_mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/output", dir);
	snprintf(res, sizeof(res), "%s/run", dir);
	fx_become_subreaper();
	const char *args[] = { "run", "--scenario", "cluster-minority-primary", "--strategy",
			       "set-nx-px", "--out", res, "--no-status", "--no-report", NULL };
	pid_t pid = fx_spawn_lockbench(args, out, out);
	/* lockbench, its janitor, the resource, 6 servers, the relay, the
	 * watcher, 2 clients */
	int n = fx_wait_descendants(pid, pids, 64, 13, 30000);
	cr_assert_geq(n, 13, "only %d processes: %s", n, fx_slurp(dir, "output"));
	lb_sleep_ns(2000 * LB_NS_PER_MS); /* the partition began at 0.5 s: the failover is under way */
	n = fx_descendants(pid, pids, 64);
	fx_kill9_leaves_nothing(pid, pids, n);
	snprintf(pattern, sizeof(pattern), "lockbench-redis-%d-", (int)pid);
	int left = 0;
	for (int t = 0; t < 40 && (left = fx_count_tmp_entries(pattern)) > 0; t++)
		lb_sleep_ns(50 * LB_NS_PER_MS);
	cr_assert_eq(left, 0, "%d server directories left after the kill", left);
}
