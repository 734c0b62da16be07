/*
 * test_consensus.c - etcd and ZooKeeper ensembles on real members
 * (consensus.h): each starts with one leader, a real client takes a lock on
 * it (etcd: a lease and the Lock API through the JSON gateway; ZooKeeper: an
 * ephemeral node through kazoo), the leader killed leaves a quorum that
 * serves writes, the member respawned rejoins with its data, and nothing is
 * left after destroy or after a kill -9 of the process that started it.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "consensus.h"
#include "fixture.h"
#include "util.h"

FX_SUITE(consensus, 120);

static struct lb_consensus ens;

static void stop(void)
{
	lb_consensus_destroy(&ens);
}

/* The process runs (a zombie or no /proc entry: it does not). */
static bool running(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* Every member's pid and directory gone within 5 s. */
static void assert_nothing_left(const pid_t *pid, char dir[][256])
{
	for (int t = 0; t < 100; t++) {
		int left = 0;
		for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++)
			left += running(pid[i]) + exists(dir[i]);
		if (!left)
			return;
		lb_sleep_ns(50 * LB_NS_PER_MS);
	}
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		cr_expect_not(running(pid[i]), "member %d (pid %d) still runs", i, (int)pid[i]);
		cr_expect_not(exists(dir[i]), "member %d's directory %s is left", i, dir[i]);
	}
	cr_assert_fail("members left behind");
}

/* etcd: a lease granted through member @m; its id into @id, its TTL returned. */
static long etcd_grant(int m, int ttl, char *id, size_t cap)
{
	char body[64], out[1024], v[32];
	snprintf(body, sizeof(body), "{\"TTL\":%d}", ttl);
	int st = lb_consensus_http(ens.member[m]->port, "/v3/lease/grant", body, out, sizeof(out), 5000);
	cr_assert_eq(st, 200, "lease grant through member %d: %d %s", m, st, out);
	cr_assert(lb_json_field(out, "ID", id, cap), "no lease ID in %s", out);
	cr_assert(lb_json_field(out, "TTL", v, sizeof(v)), "no TTL in %s", out);
	return atol(v);
}

/* etcd: the Lock API with @lease through member @m, within @timeout_ms: the
 * HTTP status (200: held), the lock's key into @key. */
static int etcd_lock(int m, const char *lease, int timeout_ms, char *key, size_t cap)
{
	char name[64], body[256], out[1024];
	cr_assert(lb_base64("lockbench:test-lock", 19, name, sizeof(name)));
	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"lease\":\"%s\"}", name, lease);
	int st = lb_consensus_http(ens.member[m]->port, "/v3/lock/lock", body, out, sizeof(out),
				   timeout_ms);
	if (st == 200)
		cr_assert(lb_json_field(out, "key", key, cap), "no key in %s", out);
	return st;
}

/* A put through member @m is served within @timeout_ms. */
static bool put_through(int m, int timeout_ms)
{
	char out[1024];
	int64_t until = lb_now_ns() + (int64_t)timeout_ms * LB_NS_PER_MS;
	do {
		if (lb_consensus_http(ens.member[m]->port, "/v3/kv/put",
				      "{\"key\":\"bG9ja2JlbmNoOnJlam9pbg==\",\"value\":\"MQ==\"}", out,
				      sizeof(out), 1000) == 200)
			return true;
		lb_sleep_ns(50 * LB_NS_PER_MS);
	} while (lb_now_ns() < until);
	return false;
}

/* ZooKeeper server @m says it is a leader or a follower within @timeout_ms:
 * it is part of the quorum. */
static bool zk_serves(int m, int timeout_ms)
{
	char out[2048];
	int64_t until = lb_now_ns() + (int64_t)timeout_ms * LB_NS_PER_MS;
	do {
		if (lb_consensus_4lw(ens.member[m]->port, "srvr", out, sizeof(out), 1000) == 0 &&
		    (strstr(out, "Mode: follower") || strstr(out, "Mode: leader")))
			return true;
		lb_sleep_ns(50 * LB_NS_PER_MS);
	} while (lb_now_ns() < until);
	return false;
}

/* The leader killed, the rest serve a write; respawned, it answers with its
 * data (no new cluster: it rejoins) and serves a write again. */
static void kill_the_leader_and_respawn(void)
{
	int leader = lb_consensus_leader(&ens, 5000);
	cr_assert_geq(leader, 0, "no leader");
	cr_assert_eq(lb_server_kill(ens.member[leader]), 0);
	cr_assert_not(lb_server_alive(ens.member[leader]));
	int64_t t0 = lb_now_ns();
	cr_assert_eq(lb_consensus_wait_quorum(&ens, 30000), 0, "no write served without the leader");
	int64_t quorum_ms = (lb_now_ns() - t0) / LB_NS_PER_MS;
	int next = lb_consensus_leader(&ens, 10000);
	cr_assert(next >= 0 && next != leader, "the killed member %d still leads (%d)", leader, next);
	t0 = lb_now_ns();
	cr_assert_eq(lb_server_respawn_begin(ens.member[leader]), 0);
	cr_assert_eq(lb_server_wait_ready(ens.member[leader], 30000), 0, "member %d did not answer "
		     "again", leader);
	if (ens.kind == LB_CONSENSUS_ETCD)
		cr_assert(put_through(leader, 20000), "the respawned member %d serves no write", leader);
	else
		cr_assert(zk_serves(leader, 20000), "the respawned server %d did not rejoin", leader);
	fprintf(stderr, "%s: a quorum again %lld ms after the leader's kill; the respawned member "
		"rejoined in %lld ms\n", lb_consensus_name(ens.kind), (long long)quorum_ms,
		(long long)((lb_now_ns() - t0) / LB_NS_PER_MS));
}

static void destroy_leaves_nothing(void)
{
	pid_t pid[LB_CONSENSUS_MEMBERS];
	char dir[LB_CONSENSUS_MEMBERS][256];
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		pid[i] = ens.member[i]->pid;
		snprintf(dir[i], sizeof(dir[i]), "%s", ens.member[i]->dir);
		cr_assert(running(pid[i]) && exists(dir[i]));
	}
	lb_consensus_destroy(&ens);
	assert_nothing_left(pid, dir);
}

Test(consensus, names_parse_both_ways)
{
	enum lb_consensus_kind k = LB_CONSENSUS_NONE;
	cr_assert_eq(lb_consensus_parse("etcd", &k), 0);
	cr_assert_eq(k, LB_CONSENSUS_ETCD);
	cr_assert_eq(lb_consensus_parse("zookeeper", &k), 0);
	cr_assert_str_eq(lb_consensus_name(k), "zookeeper");
	cr_assert_eq(lb_consensus_parse("consul", &k), LB_EINVAL);
	cr_assert_eq(lb_consensus_parse(NULL, &k), LB_EINVAL);
	char out[16];
	cr_assert(lb_base64("ab", 2, out, sizeof(out)));
	cr_assert_str_eq(out, "YWI=");
	cr_assert_not(lb_base64("abcd", 4, out, 8));
	cr_assert(lb_json_field("{\"a\":{\"ID\": \"42\"},\"TTL\":2}", "ID", out, sizeof(out)));
	cr_assert_str_eq(out, "42");
	cr_assert(lb_json_field("{\"TTL\":2}", "TTL", out, sizeof(out)));
	cr_assert_str_eq(out, "2");
	cr_assert_not(lb_json_field("{\"ID\":\"a\\\"b\"}", "ID", out, sizeof(out)));
	lb_consensus_destroy(NULL);
	struct lb_consensus zero = { .kind = LB_CONSENSUS_NONE };
	lb_consensus_destroy(&zero);
}

Test(consensus, etcd_starts_locks_survives_its_leader_and_leaves_nothing, .fini = stop)
{
	char lease[32], lease2[32], key[256], key2[256];

	/* etcd reads ETCD_* as flags: the members never see the caller's */
	setenv("ETCD_ENABLE_V2", "not-a-bool", 1);
	cr_assert_eq(lb_consensus_start(&ens, LB_CONSENSUS_ETCD, 60000), 0);
	unsetenv("ETCD_ENABLE_V2");
	cr_assert_gt(ens.ready_ms, 0);
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		cr_assert(ens.member[i]->port != 2379 && ens.peer_port[i] != 2380);
		cr_assert(lb_server_pss_kib(ens.member[i]) > 1000, "member %d: PSS %ld KiB", i,
			  lb_server_pss_kib(ens.member[i]));
	}
	int leader = lb_consensus_leader(&ens, 5000);
	cr_assert(leader >= 0 && leader < LB_CONSENSUS_MEMBERS, "no leader: %d", leader);
	/* the shortest lease etcd grants with default flags (measured, not assumed) */
	cr_assert_eq(etcd_grant(0, 1, lease, sizeof(lease)), 2, "a TTL 1 lease is not raised to 2 s");
	cr_assert_eq(etcd_lock(1, lease, 5000, key, sizeof(key)), 200);
	/* a second client waits: the lock is held (the call times out) */
	etcd_grant(2, 30, lease2, sizeof(lease2));
	cr_assert_lt(etcd_lock(2, lease2, 1000, key2, sizeof(key2)), 0, "two holders");
	kill_the_leader_and_respawn();
	destroy_leaves_nothing();
}

/* A process that started an ensemble, killed with SIGKILL: the members die
 * with it (PR_SET_PDEATHSIG) and its janitor removes their directories. */
static void kill9_leaves_nothing(enum lb_consensus_kind kind)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	fflush(NULL);
	pid_t child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		struct lb_consensus c;
		close(p[0]);
		/* nor JVM options from the caller's environment */
		setenv("JAVA_TOOL_OPTIONS", "-Xnot-an-option", 1);
		if (lb_consensus_start(&c, kind, 60000) < 0)
			_exit(1);
		for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
			char line[300];
			int n = snprintf(line, sizeof(line), "%d %s\n", (int)c.member[i]->pid,
					 c.member[i]->dir);
			if (write(p[1], line, (size_t)n) != n)
				_exit(1);
		}
		close(p[1]);
		for (;;)
			pause();
	}
	close(p[1]);
	FILE *f = fdopen(p[0], "r");
	pid_t pid[LB_CONSENSUS_MEMBERS];
	char dir[LB_CONSENSUS_MEMBERS][256];
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		int v = 0;
		cr_assert_eq(fscanf(f, "%d %255s", &v, dir[i]), 2, "the child did not start %s",
			     lb_consensus_name(kind));
		pid[i] = v;
		cr_assert(running(pid[i]) && exists(dir[i]));
	}
	fclose(f);
	kill(child, SIGKILL);
	cr_assert_eq(waitpid(child, NULL, 0), child);
	assert_nothing_left(pid, dir);
}

/* The entries of @dir whose names begin with @prefix. */
static int count_entries(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	int n = 0;
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));)
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

/* Children of this process whose name is etcd (the janitor is one too, of
 * another name). */
static int etcd_children(void)
{
	DIR *d = opendir("/proc");
	int n = 0;
	cr_assert_not_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		char path[300], buf[512];
		int ppid = 0;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		const char *p = strrchr(buf, ')');
		if (p && sscanf(p, ") %*c %d", &ppid) == 1 && ppid == getpid() && strstr(buf, "(etcd)"))
			n++;
	}
	closedir(d);
	return n;
}

/* A start that fails (no time to get ready) says which member and leaves no
 * member and no directory. */
Test(consensus, a_failed_start_leaves_nothing)
{
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "lockbench-etcd-%d-", (int)getpid());
	struct lb_consensus c;
	cr_assert_lt(lb_consensus_start(&c, LB_CONSENSUS_ETCD, 1), 0);
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++)
		cr_assert_null(c.member[i]);
	cr_assert_eq(count_entries("/dev/shm", prefix) + count_entries("/tmp", prefix), 0);
	cr_assert_eq(etcd_children(), 0, "a member is still a child of this process");
	cr_assert_eq(lb_consensus_start(&c, LB_CONSENSUS_NONE, 1000), LB_EINVAL);
}

Test(consensus, a_kill9_of_an_etcd_owner_leaves_nothing)
{
	kill9_leaves_nothing(LB_CONSENSUS_ETCD);
}


/* kazoo's Lock recipe (an ephemeral sequential node under the lock's path):
 * client a holds it through server 0, client b is refused through server 2
 * while it is held, and gets it once a's session is closed. */
static const char kazoo_lock[] =
	"import sys\n"
	"from kazoo.client import KazooClient\n"
	"h = sys.argv[1].split(',')\n"
	"a = KazooClient(hosts=h[0], timeout=5.0); a.start(timeout=20)\n"
	"b = KazooClient(hosts=h[2], timeout=5.0); b.start(timeout=20)\n"
	"la = a.Lock('/lockbench-test/lock', 'a'); lb = b.Lock('/lockbench-test/lock', 'b')\n"
	"print('a', la.acquire(timeout=10))\n"
	"kids = a.get_children('/lockbench-test/lock')\n"
	"st = a.exists('/lockbench-test/lock/' + kids[0])\n"
	"print('ephemeral', st.ephemeralOwner == a.client_id[0])\n"
	"print('b', lb.acquire(blocking=False))\n"
	"a.stop(); a.close()\n"
	"print('b-after', lb.acquire(timeout=10))\n"
	"b.stop(); b.close()\n";

/* What the kazoo script said, into @out. */
static void run_kazoo(char *out, size_t cap)
{
	char hosts[128];
	int p[2];
	snprintf(hosts, sizeof(hosts), "127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d", ens.member[0]->port,
		 ens.member[1]->port, ens.member[2]->port);
	cr_assert_eq(pipe(p), 0);
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		dup2(p[1], STDERR_FILENO);
		close(p[0]);
		/* runs: python3 (python3-kazoo) */
		execl("/usr/bin/python3", "python3", "-c", kazoo_lock, hosts, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t r;
	while (n < cap - 1 && (r = read(p[0], out + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = '\0';
	close(p[0]);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "kazoo failed: %s", out);
}

Test(consensus, zookeeper_starts_locks_survives_its_leader_and_leaves_nothing, .fini = stop)
{
	char out[8192];

	cr_assert_eq(lb_consensus_start(&ens, LB_CONSENSUS_ZOOKEEPER, 60000), 0);
	cr_assert_gt(ens.ready_ms, 0);
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		cr_assert(ens.member[i]->port != 2181);
		cr_assert(lb_server_pss_kib(ens.member[i]) > 1000, "server %d: PSS %ld KiB", i,
			  lb_server_pss_kib(ens.member[i]));
	}
	int leader = lb_consensus_leader(&ens, 5000);
	cr_assert(leader >= 0 && leader < LB_CONSENSUS_MEMBERS, "no leader: %d", leader);
	run_kazoo(out, sizeof(out));
	cr_assert(strstr(out, "a True\nephemeral True\nb False\nb-after True\n"), "%s", out);
	kill_the_leader_and_respawn();
	destroy_leaves_nothing();
}

Test(consensus, a_kill9_of_a_zookeeper_owner_leaves_nothing)
{
	kill9_leaves_nothing(LB_CONSENSUS_ZOOKEEPER);
}

/* `lockbench servers --etcd` / `--zookeeper`: it prints each member and the
 * leader, runs until killed, and a kill -9 of it leaves no member and no
 * directory (wherever the members were: /dev/shm or the temporary one). */
static void servers_playground(const char *flag, const char *kind, const char *scheme)
{
	char dir[] = "/tmp/lbtest-consensus-XXXXXX", out[128], pattern[64];
	pid_t pids[16];

	cr_assert_not_null(fx_mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/output", dir);
	fx_become_subreaper();
	const char *args[] = { "servers", flag, NULL };
	pid_t pid = fx_spawn_lockbench(args, out, out);
	for (int t = 0; t < 1200 && (access(out, R_OK) != 0 || !strstr(fx_slurp(dir, "output"), "ready;")); t++)
		lb_sleep_ns(50 * LB_NS_PER_MS);
	const char *text = fx_slurp(dir, "output");
	cr_assert(strstr(text, "ready;") && strstr(text, scheme) && strstr(text, " leader ") &&
		  strstr(text, "pss="), "%s", text);
	int n = fx_descendants(pid, pids, 16);
	cr_assert_eq(n, 5, "expected lockbench, its janitor and 3 members, found %d processes", n);
	fx_kill9_leaves_nothing(pid, pids, n);
	snprintf(pattern, sizeof(pattern), "lockbench-%s-%d-", kind, (int)pid);
	int dirs = 0;
	for (const char *d = strstr(text, "dir="); d; d = strstr(d + 4, "dir=")) {
		char path[256];
		cr_assert_eq(sscanf(d, "dir=%255s", path), 1);
		cr_assert(strstr(path, pattern), "%s is not %s...", path, pattern);
		for (int t = 0; t < 100 && exists(path); t++)
			lb_sleep_ns(50 * LB_NS_PER_MS);
		cr_assert_not(exists(path), "%s outlived its lockbench", path);
		dirs++;
	}
	cr_assert_eq(dirs, LB_CONSENSUS_MEMBERS, "%s", text);
}

Test(consensus, servers_etcd_prints_its_members_and_a_kill9_leaves_nothing)
{
	servers_playground("--etcd", "etcd", "http://127.0.0.1:");
}

Test(consensus, servers_zookeeper_prints_its_servers_and_a_kill9_leaves_nothing)
{
	servers_playground("--zookeeper", "zookeeper", "zk://127.0.0.1:");
}
