/*
 * test_consensus_run.c - `lockbench run` on the consensus topologies: an etcd
 * lock and a ZooKeeper lock run whole on the ensembles lockbench starts, with
 * a fault aimed at the member leading (nodes = leader), the run re-checked by
 * `lockbench check`; and a kill -9 of lockbench mid-run leaves no member, no
 * adapter, no client and no directory behind.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "readers.h"
#include "results.h"

FX_SUITE(consensus_run, 180);

/* A whole run of @strategy under consensus-leader-kill: it completes, check
 * agrees, the leader was killed and came back, nobody overlapped, and every
 * member's log is kept beside the history. */
static void leader_kill_run(const char *strategy, const char *kind)
{
	char dir[] = "/tmp/lbtest-consrun-XXXXXX", out[128], path[160];
	struct lb_summary sum;

	cr_assert_not_null(fx_mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/run", dir);
	const char *args[] = { "run", "--strategy", strategy, "--scenario", "consensus-leader-kill",
			       "--out", out, "--no-status", NULL };
	cr_assert_eq(fx_lockbench(dir, args), 0, "%s", fx_slurp(dir, "output"));
	fx_recheck(out);
	snprintf(path, sizeof(path), "%s/summary.csv", out);
	cr_assert_eq(lb_summary_read(path, &sum), 0);
	cr_assert_str_eq(lb_summary_get(&sum, "overlaps"), "0", "%s overlapped", strategy);
	cr_assert_neq(atoi(lb_summary_get(&sum, "sections")), 0, "%s entered no section", strategy);
	const char *ev = fx_slurp(out, "events.csv");
	cr_assert(strstr(ev, ",node-kill,"), "the leader was not killed:\n%s", ev);
	cr_assert(strstr(ev, ",node-start,"), "the killed member did not come back:\n%s", ev);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s-%d.log", out, kind, i);
		cr_assert_eq(access(path, R_OK), 0, "%s is not kept", path);
	}
	const char *meta = fx_slurp(out, "meta.txt");
	cr_assert(strstr(meta, "ensemble: 3 "), "meta.txt does not say the ensemble's start:\n%s",
		  meta);
}

Test(consensus_run, etcd_lock_survives_the_leaders_death)
{
	leader_kill_run("etcd-lock@3.4.23", "etcd");
}

Test(consensus_run, kazoo_lock_survives_the_leaders_death)
{
	leader_kill_run("kazoo-lock-fenced@2.8.0", "zookeeper");
}

/* The notice's lag on etcd and ZooKeeper, timed against the server: a
 * holder frozen past its lease (consensus-holder-pause) is told late, and
 * the run says how late, a figure in ms that check recomputes, from the lease
 * watcher's own reading of the ensemble (keyevents.csv: the owner's set, then
 * its `expired`: the lease or the session gone with its key or node). It read
 * n/a: nothing watched the ensembles. */
static void notice_lag_run(const char *strategy)
{
	char dir[] = "/tmp/lbtest-consrun-XXXXXX", out[128], path[160];
	struct lb_summary sum;

	cr_assert_not_null(fx_mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/run", dir);
	const char *args[] = { "run", "--strategy", strategy, "--scenario", "consensus-holder-pause",
			       "--seed", "1", "--out", out, "--no-status", NULL };
	cr_assert_eq(fx_lockbench(dir, args), 0, "%s", fx_slurp(dir, "output"));
	fx_recheck(out);
	snprintf(path, sizeof(path), "%s/summary.csv", out);
	cr_assert_eq(lb_summary_read(path, &sum), 0);
	cr_assert_str_eq(lb_summary_get(&sum, "foreign_source"), "server", "%s", strategy);
	cr_assert_str_eq(lb_summary_get(&sum, "leases_lapsed"), "1", "%s", strategy);
	/* the woken holder writes at once (the pause is before its write), so
	 * its notice races its exit: the 3.4 client's Done() often comes after
	 * it left, and on a loaded machine (make test beside other work) the 3.5
	 * client's and kazoo's did too, once each: a notice missed (the
	 * scenario's page says the race), counted, and no lag; the server's end
	 * is measured either way */
	const char *ke_all = fx_slurp(out, "keyevents.csv");
	cr_assert(strstr(ke_all, ",expired,"), "%s: keyevents.csv:\n%s", strategy, ke_all);
	if (!strcmp(lb_summary_get(&sum, "notices_missed"), "1")) {
		cr_assert_str_eq(lb_summary_get(&sum, "notice_lag_max_ms"), "n/a", "%s", strategy);
		return;
	}
	cr_assert_str_eq(lb_summary_get(&sum, "notices_missed"), "0", "%s", strategy);
	double lag = atof(lb_summary_get(&sum, "notice_lag_max_ms"));
	/* frozen 6 s from about 1 s with a 2 s lease: the end comes about 3 s
	 * in, the notice when the holder wakes, past 7 s */
	cr_assert(lag > 1000 && lag < 8000, "%s: notice_lag_max_ms %s", strategy,
		  lb_summary_get(&sum, "notice_lag_max_ms"));
	const char *js = fx_slurp(out, "summary.json");
	cr_assert(strstr(js, "\"notice_lag_p50_ms\": {\"value\": ") &&
		  strstr(strstr(js, "\"notice_lag_p50_ms\""), "\"unit\": \"ms\"}"),
		  "summary.json: %s", js);
	const char *ke = fx_slurp(out, "keyevents.csv");
	cr_assert(strstr(ke, ",set,") && strstr(ke, ",expired,"), "keyevents.csv:\n%s", ke);
	cr_assert(strstr(fx_slurp(out, "report.md"), "this overlap is the notice's"), "%s",
		  fx_slurp(out, "report.md"));
}

Test(consensus_run, an_etcd_holder_paused_past_its_lease_is_told_late_by_a_measured_lag)
{
	notice_lag_run("etcd-lock@3.5.36-client");
	notice_lag_run("etcd-lock@3.4.23");
}

Test(consensus_run, a_kazoo_holder_paused_past_its_session_is_told_late_by_a_measured_lag)
{
	notice_lag_run("kazoo-lock@2.8.0");
}

/* A Redis lock on a consensus topology, and a consensus lock on Redis
 * servers, are usage errors that say why. */
Test(consensus_run, topology_and_lock_must_match)
{
	char dir[] = "/tmp/lbtest-consrun-XXXXXX";

	cr_assert_not_null(fx_mkdtemp(dir));
	const char *redis_on_etcd[] = { "run", "--strategy", "token-lua", "--topology", "etcd",
					"--duration", "1", NULL };
	cr_assert_eq(fx_lockbench(dir, redis_on_etcd), 2);
	cr_assert(strstr(fx_slurp(dir, "output"), "token-lua is a Redis lock"), "%s",
		  fx_slurp(dir, "output"));
	const char *etcd_on_redis[] = { "run", "--strategy", "etcd-lock@3.4.23", "--redis",
					"redis://127.0.0.1:1", "--duration", "1", NULL };
	cr_assert_eq(fx_lockbench(dir, etcd_on_redis), 2);
	cr_assert(strstr(fx_slurp(dir, "output"), "keeps its lock in etcd"), "%s",
		  fx_slurp(dir, "output"));
	const char *zk_on_etcd[] = { "run", "--strategy", "kazoo-lock@2.8.0", "--scenario",
				     "etcd-waiter-lease-expiry", NULL };
	cr_assert_eq(fx_lockbench(dir, zk_on_etcd), 2);
	cr_assert(strstr(fx_slurp(dir, "output"), "applies only to"), "%s",
		  fx_slurp(dir, "output"));
	const char *redis_in_chaos[] = { "chaos", "--scenario", "consensus-member-pause",
					 "--strategies", "token-lua", "--seeds", "1", NULL };
	cr_assert_eq(fx_lockbench(dir, redis_in_chaos), 2);
	cr_assert(strstr(fx_slurp(dir, "output"), "applies only to"), "%s",
		  fx_slurp(dir, "output"));
}

/* Entries named @prefix* in $TMPDIR and in /dev/shm (where etcd's data
 * directories go: harness/servers/consensus.c). */
static int in_tmp_and_shm(const char *prefix)
{
	int n = fx_count_tmp_entries(prefix);
	DIR *d = opendir("/dev/shm");

	for (struct dirent *e; d && (e = readdir(d));)
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

/* kill -9 of lockbench while a holder is frozen past its lease: no member,
 * resource, relay, client or adapter survives, no directory is left. */
Test(consensus_run, kill_9_mid_run_leaves_nothing)
{
	char dir[] = "/tmp/lbtest-consrun-XXXXXX", out[128], res[160], pattern[64];
	pid_t pids[64];

	cr_assert_not_null(fx_mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/output", dir);
	snprintf(res, sizeof(res), "%s/run", dir);
	fx_become_subreaper();
	const char *args[] = { "run", "--scenario", "consensus-holder-pause", "--strategy",
			       "etcd-lock@3.4.23", "--out", res, "--no-status", "--no-report", NULL };
	pid_t pid = fx_spawn_lockbench(args, out, out);
	/* lockbench, its janitor, 3 members, the resource, 3 clients, 3 adapters */
	int n = fx_wait_descendants(pid, pids, 64, 12, 30000);
	cr_assert_geq(n, 12, "only %d processes: %s", n, fx_slurp(dir, "output"));
	lb_sleep_ns(2000 * LB_NS_PER_MS); /* the pause began at 1 s */
	n = fx_descendants(pid, pids, 64);
	fx_kill9_leaves_nothing(pid, pids, n);
	snprintf(pattern, sizeof(pattern), "lockbench-etcd-%d-", (int)pid);
	int left = 0;
	for (int t = 0; t < 40 && (left = in_tmp_and_shm(pattern)) > 0; t++)
		lb_sleep_ns(100 * LB_NS_PER_MS);
	cr_assert_eq(left, 0, "%d directories %s* are left", left, pattern);
}

/* @text into the file @path (a scenario of the test's own). */
static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "cannot write %s", path);
	cr_assert_geq(fputs(text, f), 0);
	cr_assert_eq(fclose(f), 0);
}

/* when = before-write: the holder stops after its last look at the lease, so
 * renewal's watchdog, which stops the stale write of holder-pause (its pause
 * comes between the read and that look), cannot stop this one; the run says
 * when the pause began, and the client came back. */
Test(consensus_run, a_pause_before_the_write_comes_after_the_last_look_at_the_lease)
{
	char dir[] = "/tmp/lbtest-consrun-XXXXXX", ini[128], out[128], path[160];
	struct lb_summary sum;

	cr_assert_not_null(fx_mkdtemp(dir));
	snprintf(ini, sizeof(ini), "%s/bw.ini", dir);
	write_file(ini, "[scenario]\nsummary = s\ndescription = d\n[run]\nclients = 3\nduration = 4\n"
	      "ttl = 1000\nhold = 50\nwait = fixed:10\nthink = 20\n[fault p]\naction = pause\n"
	      "target = holder\nat = 0.5\nduration = 2500\nthen = other-inside\n"
	      "when = before-write\n");
	snprintf(out, sizeof(out), "%s/run", dir);
	const char *args[] = { "run", "--strategy", "renewal", "--scenario", ini, "--out", out,
			       "--no-status", "--no-report", NULL };
	cr_assert_eq(fx_lockbench(dir, args), 0, "%s", fx_slurp(dir, "output"));
	fx_recheck(out);
	snprintf(path, sizeof(path), "%s/summary.csv", out);
	cr_assert_eq(lb_summary_read(path, &sum), 0);
	cr_assert_str_eq(lb_summary_get(&sum, "observed"), "overlap", "%s",
			 lb_summary_get(&sum, "observed_why"));
	cr_assert_neq(atoi(lb_summary_get(&sum, "lost_updates")), 0);
	const char *ev = fx_slurp(out, "events.csv");
	cr_assert(strstr(ev, ",pause,") && strstr(ev, ",resume,"), "%s", ev);
}

/* node-pause with target and inside waits for that client to have been inside
 * so long (consensus-member-pause freezes the member under a working holder):
 * the pause comes 300 ms or more into client 0's long section, not at 0. */
Test(consensus_run, a_node_pause_waits_for_its_target_inside)
{
	char dir[] = "/tmp/lbtest-consrun-XXXXXX", ini[256], out[128];

	cr_assert_not_null(fx_mkdtemp(dir));
	snprintf(ini, sizeof(ini), "%s/np.ini", dir);
	write_file(ini, "[scenario]\nsummary = s\ndescription = d\n[run]\nclients = 2\nduration = 3\n"
	      "ttl = 5000\nhold = 20\nwait = fixed:10\nthink = 20\n[fault long]\naction = slow\n"
	      "target = client:0\nhold = 1500\nat = 0.5\n[fault freeze]\naction = node-pause\n"
	      "nodes = 0\ntarget = client:0\ninside = 300\nduration = 200\n");
	snprintf(out, sizeof(out), "%s/run", dir);
	const char *args[] = { "run", "--strategy", "token-lua", "--scenario", ini, "--out", out,
			       "--no-status", "--no-report", NULL };
	cr_assert_eq(fx_lockbench(dir, args), 0, "%s", fx_slurp(dir, "output"));
	long long enter = -1, paused = -1, t, a, b, c, d;
	int client, seq;
	char line[512];
	snprintf(ini, sizeof(ini), "%.128s/history.csv", out);
	FILE *h = fopen(ini, "r");
	cr_assert_not_null(h);
	while (fgets(line, sizeof(line), h))
		if (sscanf(line, "%d,%d,%lld,%lld,%lld,%lld", &client, &seq, &a, &b, &c, &d) == 6 &&
		    client == 0 && c - b > 1000000000LL && enter < 0)
			enter = b; /* the long section */
	fclose(h);
	snprintf(ini, sizeof(ini), "%.128s/events.csv", out);
	h = fopen(ini, "r");
	cr_assert_not_null(h);
	while (fgets(line, sizeof(line), h))
		if (sscanf(line, "%lld,node-pause,", &t) == 1 && strstr(line, ",node-pause,"))
			paused = t;
	fclose(h);
	cr_assert_geq(enter, 0, "client 0 had no long section");
	cr_assert_geq(paused, enter + 300000000LL, "the node was paused at %lld ns, before client "
		      "0 had been inside 300 ms (it entered at %lld ns)", paused, enter);
}
