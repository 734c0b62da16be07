/*
 * cmd_servers.c - `lockbench servers [N]`: start N embedded redis-servers,
 * print their URLs, and stop them on Ctrl-C or SIGTERM. `--sentinel`: a
 * primary, two replicas and three Sentinels instead (topology.h); `--etcd`
 * and `--zookeeper`: three etcd members or three ZooKeeper servers
 * (consensus.h). A playground for `--redis` and the consensus clients, and
 * the process the tests kill -9 to prove nothing is left.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "consensus.h"
#include "rserver.h"
#include "signals.h"
#include "topology.h"
#include "util.h"

#define MAX_SERVERS 16

static void wait_for_stop(void)
{
	printf("ready; Ctrl-C stops them\n");
	fflush(stdout);
	while (!lb_stop_requested())
		pause();
}

/* A primary, two replicas and three Sentinels, watched, until Ctrl-C. */
static int sentinel_topology(void)
{
	struct lb_sentinel_topo t;

	if (lb_sentinel_topo_start(&t, NULL) < 0)
		return LB_EXIT_FAIL;
	printf("primary  redis://127.0.0.1:%d pid=%d\n", t.primary->port, (int)t.primary->pid);
	for (int i = 0; i < LB_TOPO_REPLICAS; i++)
		printf("replica  redis://127.0.0.1:%d pid=%d\n", t.replica[i]->port,
		       (int)t.replica[i]->pid);
	for (int i = 0; i < LB_TOPO_SENTINELS; i++)
		printf("sentinel redis://127.0.0.1:%d pid=%d (master name %s)\n", t.sentinel[i]->port,
		       (int)t.sentinel[i]->pid, LB_SENTINEL_MASTER);
	wait_for_stop();
	lb_sentinel_topo_destroy(&t);
	return LB_EXIT_OK;
}

/* Three etcd members or ZooKeeper servers, until Ctrl-C. */
static int consensus_topology(enum lb_consensus_kind kind)
{
	struct lb_consensus c;
	const char *scheme = kind == LB_CONSENSUS_ETCD ? "http" : "zk";

	if (lb_consensus_start(&c, kind, 60000) < 0)
		return LB_EXIT_FAIL;
	int leader = lb_consensus_leader(&c, 5000);
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		struct lb_server *m = c.member[i];
		printf("%s %d %s://127.0.0.1:%d pid=%d pss=%ldKiB%s dir=%s\n",
		       kind == LB_CONSENSUS_ETCD ? "member" : "server", i, scheme, m->port, (int)m->pid,
		       lb_server_pss_kib(m), i == leader ? " leader" : "", m->dir);
	}
	printf("%s: quorum (%s) %lld ms after the first member started\n", lb_consensus_name(kind),
	       kind == LB_CONSENSUS_ETCD ? "a put served through each member"
					 : "srvr: one leader, two followers",
	       (long long)c.ready_ms);
	wait_for_stop();
	lb_consensus_destroy(&c);
	return LB_EXIT_OK;
}

int lb_cmd_servers(int argc, char **argv)
{
	struct lb_server *s[MAX_SERVERS] = { NULL };
	int64_t n = 1;
	int rc = LB_EXIT_OK;

	if (argc == 2 && !strcmp(argv[1], "--sentinel"))
		return sentinel_topology();
	if (argc == 2 && !strcmp(argv[1], "--etcd"))
		return consensus_topology(LB_CONSENSUS_ETCD);
	if (argc == 2 && !strcmp(argv[1], "--zookeeper"))
		return consensus_topology(LB_CONSENSUS_ZOOKEEPER);
	if (argc > 2 || (argc == 2 && !lb_parse_i64(argv[1], 1, MAX_SERVERS, &n))) {
		bool help = argc == 2 && !strcmp(argv[1], "--help");
		if (!help) /* say what was wrong before the usage */
			lb_errorf("servers: %s N (1 to %d), --sentinel, --etcd or --zookeeper",
				  argc > 2 ? "one argument at most:" : "expected", MAX_SERVERS);
		fprintf(stderr, "usage: lockbench servers [N]        N servers (1..%d)\n"
				"       lockbench servers --sentinel   a primary, 2 replicas and 3 "
				"Sentinels\n"
				"       lockbench servers --etcd       3 etcd members (etcd-server)\n"
				"       lockbench servers --zookeeper  3 ZooKeeper servers (zookeeper)\n"
				"Each on free loopback ports, until Ctrl-C; nothing is left after.\n",
			MAX_SERVERS);
		return help ? LB_EXIT_OK : LB_EXIT_USAGE;
	}
	for (int64_t i = 0; i < n; i++) {
		s[i] = lb_server_start(NULL);
		if (!s[i]) {
			rc = LB_EXIT_FAIL;
			goto out;
		}
		printf("redis://127.0.0.1:%d pid=%d dir=%s\n", s[i]->port, (int)s[i]->pid, s[i]->dir);
	}
	wait_for_stop();
out:
	for (int64_t i = 0; i < n; i++)
		lb_server_destroy(s[i]);
	return rc;
}
