/*
 * test_deployment.c - lockbench on a deployment the user runs: servers and
 * Sentinels this test starts itself with redis-server, as a user would (never
 * through lockbench), reached with --redis and --sentinel. What it says when
 * they refuse, what it touches (MONITOR), the faults it sends only when
 * asked (--allow-faults, --hook), and the Sentinels' account of a failover
 * with the server that granted each section.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "readers.h"
#include "results.h"

FX_SUITE(deployment, 180);

static char tmpdir[64];

/* The user's servers: redis-server processes of this test's own. */
struct theirs {
	pid_t pid[16];
	int port[16];
	int n;
};

static struct theirs them;

static void mktmp(void)
{
	strcpy(tmpdir, "/tmp/lbtest-dep-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
	memset(&them, 0, sizeof(them));
}

static void stop_theirs(void)
{
	for (int i = 0; i < them.n; i++)
		if (them.pid[i] > 0) {
			kill(them.pid[i], SIGKILL);
			waitpid(them.pid[i], NULL, 0);
			them.pid[i] = 0;
		}
}

/* One try at "redis-server ARGS..." on a free port (an argument "@BUS":
 * another free port, a cluster bus's): its port once it answers PING (AUTH
 * @pass first), or -1 when it exited first (a port taken meanwhile, by a
 * test running beside this one: free ports are only free when asked). */
static int try_server(const char *pass, const char *const *args, int i)
{
	char log[128], portarg[16], bus[16];
	int port = lb_free_port();

	cr_assert_gt(port, 0);
	snprintf(bus, sizeof(bus), "%d", lb_free_port());
	snprintf(log, sizeof(log), "%s/server-%d.log", tmpdir, port);
	snprintf(portarg, sizeof(portarg), "%d", port);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		const char *argv[32] = { "redis-server" };
		int k = 1;
		for (; args && args[k - 1] && k < 26; k++)
			argv[k] = strcmp(args[k - 1], "@BUS") ? args[k - 1] : bus;
		argv[k++] = "--port";
		argv[k++] = portarg;
		argv[k++] = "--dir";
		argv[k++] = tmpdir;
		argv[k++] = "--logfile";
		argv[k++] = log;
		argv[k] = NULL;
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execvp("redis-server", (char **)argv);
		_exit(127);
	}
	them.pid[i] = pid;
	them.port[i] = port;
	for (int t = 0; t < 200; t++) {
		struct lb_node n;
		lb_node_init_local(&n, port, 200);
		if (pass)
			snprintf(n.pass, sizeof(n.pass), "%s", pass);
		redisReply *r = lb_node_cmd(&n, "PING");
		bool up = r && r->type == REDIS_REPLY_STATUS;
		if (r)
			freeReplyObject(r);
		lb_node_close(&n);
		if (up)
			return port;
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			them.pid[i] = 0;
			return -1;
		}
		usleep(25000);
	}
	cr_assert_fail("redis-server on port %d did not answer within 5 s", port);
	return -1;
}

/* Start "redis-server ARGS..." (or with a Sentinel config), its log in the
 * temporary directory, on a free port: a few tries. */
static int start_server(const char *pass, const char *const *args)
{
	int i = them.n++;

	for (int tries = 0; tries < 5; tries++) {
		int port = try_server(pass, args, i);
		if (port > 0)
			return port;
	}
	cr_assert_fail("redis-server exited at start five times (see %s/server-*.log)", tmpdir);
	return -1;
}

/* A command to the server on @port (AUTH @pass first); the caller frees. */
static redisReply *say(int port, const char *pass, const char *fmt, const char *arg)
{
	struct lb_node n;
	lb_node_init_local(&n, port, 2000);
	if (pass)
		snprintf(n.pass, sizeof(n.pass), "%s", pass);
	redisReply *r = lb_node_cmd(&n, fmt, arg);
	lb_node_close(&n);
	return r;
}

static int lb(const char *const *args)
{
	char out[128];
	snprintf(out, sizeof(out), "%s/output", tmpdir);
	return fx_wait_lockbench(fx_spawn_lockbench(args, out, out), args);
}

static const char *output(void)
{
	return fx_slurp(tmpdir, "output");
}

/* ---- what lockbench says when your servers will not have it ---- */

Test(deployment, every_refusal_is_said_and_exits_by_one_rule, .init = mktmp, .fini = stop_theirs)
{
	static const char *const req[] = { "--requirepass", "s3cret", "--save", "", NULL };
	int port = start_server("s3cret", req);
	char url[160], dir[128];
	snprintf(dir, sizeof(dir), "%s/run", tmpdir);
	/* a usage error: 2, before anything is sent */
	static const struct { const char *url, *says; } bad[] = {
		{ "rediss://127.0.0.1:6380/x", "database number" },
		{ "http://127.0.0.1:6379", "unknown scheme" },
		{ "redis://127.0.0.1:6379/x", "database number" },
		{ "redis://alice@127.0.0.1:1", "needs a password" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *a[] = { "run", "--strategy", "token-lua", "--redis", bad[i].url, "--out",
				    dir, NULL };
		cr_assert_eq(lb(a), 2, "%s: %s", bad[i].url, output());
		cr_assert(strstr(output(), bad[i].says), "%s: %s", bad[i].url, output());
	}
	/* the run cannot happen: 3, naming the server and why */
	static const struct { const char *auth, *says; } no[] = {
		{ "", "needs a password (NOAUTH)" },
		{ ":wrong@", "WRONGPASS" },
	};
	for (size_t i = 0; i < 2; i++) {
		snprintf(url, sizeof(url), "redis://%s127.0.0.1:%d", no[i].auth, port);
		const char *a[] = { "run", "--strategy", "token-lua", "--redis", url, "--duration",
				    "0.5", "--out", dir, NULL };
		cr_assert_eq(lb(a), 3, "%s: %s", url, output());
		cr_assert(strstr(output(), no[i].says), "%s", output());
		snprintf(url, sizeof(url), "127.0.0.1:%d", port);
		cr_assert(strstr(output(), url), "the server is named: %s", output());
		cr_assert_null(strstr(output(), "wrong"), "a password is never shown: %s", output());
		/* it wrote nothing: the --out it made is not left behind, empty */
		cr_assert_neq(access(dir, F_OK), 0, "%s: the empty --out %s was left", url, dir);
	}
	/* an empty directory of the user's stays, without lockbench's marker */
	char mine[160], marker[200];
	snprintf(mine, sizeof(mine), "%s/mine", tmpdir);
	snprintf(marker, sizeof(marker), "%s/.lockbench-owned", mine);
	cr_assert_eq(mkdir(mine, 0755), 0);
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d", port);
	const char *own[] = { "run", "--strategy", "token-lua", "--redis", url, "--duration", "0.5",
			      "--out", mine, NULL };
	cr_assert_eq(lb(own), 3, "%s", output());
	cr_assert_eq(access(mine, F_OK), 0, "the user's empty directory was removed");
	cr_assert_neq(access(marker, F_OK), 0, "lockbench's marker was left in the user's directory");
	snprintf(url, sizeof(url), "redis://:s3cret@127.0.0.1:%d/99", port);
	const char *db[] = { "run", "--strategy", "token-lua", "--redis", url, "--out", dir, NULL };
	cr_assert_eq(lb(db), 3, "%s", output());
	cr_assert(strstr(output(), "DB index is out of range"), "%s", output());
	/* a fault on your servers is never sent unless asked: skipped, 3 */
	snprintf(url, sizeof(url), "redis://:s3cret@127.0.0.1:%d", port);
	const char *fault[] = { "run", "--strategy", "token-lua", "--redis", url, "--scenario",
				"server-restart", "--out", dir, NULL };
	cr_assert_eq(lb(fault), 3, "%s", output());
	cr_assert(strstr(output(), "--allow-faults"), "%s", output());
	const char *hook[] = { "run", "--strategy", "token-lua", "--redis", url, "--scenario",
			       "server-restart", "--allow-faults", "--out", dir, NULL };
	cr_assert_eq(lb(hook), 3, "%s", output());
	cr_assert(strstr(output(), "--hook node-kill=COMMAND"), "%s", output());
	/* --hook and --master-auth said wrong */
	const char *quote[] = { "run", "--strategy", "token-lua", "--hook", "x=ssh 'db1", NULL };
	cr_assert_eq(lb(quote), 2, "%s", output());
	cr_assert(strstr(output(), "open ' quote"), "%s", output());
	const char *ma[] = { "run", "--strategy", "token-lua", "--redis", url, "--master-auth",
			     ":x", NULL };
	cr_assert_eq(lb(ma), 2, "%s", output());
	/* a dry run sends nothing: it runs against a port nobody listens on */
	const char *dry[] = { "run", "--strategy", "fair", "--redis", "redis://u:pw@127.0.0.1:1/2",
			      "--scenario", "holder-pause", "--dry-run", NULL };
	cr_assert_eq(lb(dry), 0, "%s", output());
	cr_assert(strstr(output(), "nothing was sent"), "%s", output());
	cr_assert(strstr(output(), "redis://u:*@127.0.0.1:1/2"), "%s", output());
	cr_assert(strstr(output(), "SCAN 0 MATCH lb:<8 hex>:*"), "%s", output());
	cr_assert(strstr(output(), "KEY:q"), "fair's own keys: %s", output());
	cr_assert_null(strstr(output(), ":pw@"), "%s", output());
}

/* ---- what lockbench touches on your server ---- */

/* The next command MONITOR saw, as "CMD arg1 arg2 ..." (quotes off), into
 * @line; false when none came within 300 ms. */
static bool monitored(redisContext *c, char *line, size_t len)
{
	redisReply *r;

	line[0] = '\0';
	redisSetTimeout(c, (struct timeval){ 0, 300000 });
	if (redisGetReply(c, (void **)&r) != REDIS_OK || !r)
		return false;
	const char *q = r->type == REDIS_REPLY_STATUS ? strchr(r->str, '"') : NULL;
	size_t o = 0;
	for (; q && *q && o + 1 < len; q++)
		if (*q != '"')
			line[o++] = *q;
	line[o] = '\0';
	freeReplyObject(r);
	return true;
}

/* The value of the first @kind event of @dir's events.csv, or -1. */
static long long event_value(const char *dir, const char *kind)
{
	char *ev = fx_slurp(dir, "events.csv"), needle[64];
	snprintf(needle, sizeof(needle), ",%s,", kind);
	char *at = strstr(ev, needle);
	if (!at)
		return -1;
	char *nl = strchr(at, '\n'), *comma = at;
	for (char *p = at; p && p < nl; p++)
		if (*p == ',')
			comma = p;
	return atoll(comma + 1);
}

/* Is every key @line names (by the command's key positions) under "lb:"? */
static bool keys_under_prefix(const char *line)
{
	char buf[4096], *w[64];
	int n = 0;
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *s = NULL, *t = strtok_r(buf, " ", &s); t && n < 64; t = strtok_r(NULL, " ", &s))
		w[n++] = t;
	if (n < 2)
		return true;
	static const char *const no_key[] = { "PING", "INFO", "TIME", "SCRIPT", "SCAN", "SELECT",
					      "AUTH", "CLIENT", "CONFIG", "ROLE", "WAIT", NULL };
	for (const char *const *k = no_key; *k; k++)
		if (!strcasecmp(w[0], *k))
			return !strcasecmp(w[0], "SCAN") ? n >= 4 && !strncmp(w[3], "lb:", 3) : true;
	if (!strcasecmp(w[0], "EVALSHA") || !strcasecmp(w[0], "EVAL")) {
		int keys = n > 2 ? atoi(w[2]) : 0;
		for (int i = 0; i < keys && 3 + i < n; i++)
			if (strncmp(w[3 + i], "lb:", 3))
				return false;
		return true;
	}
	bool all = !strcasecmp(w[0], "DEL") || !strcasecmp(w[0], "MGET") ||
		   !strcasecmp(w[0], "EXISTS");
	for (int i = 1; i < (all ? n : 2); i++)
		if (strncmp(w[i], "lb:", 3))
			return false;
	return true;
}

/* An ACL user allowed only keys lb:* runs every kind of lock there (a recipe,
 * fair's queue, a library), with faults; MONITOR sees no key outside the
 * run's prefix and no command outside the documented ones; the user's own
 * key is untouched, and nothing of the run is left. */
Test(deployment, your_server_sees_only_the_runs_keys, .init = mktmp, .fini = stop_theirs)
{
	static const char *const req[] = { "--requirepass", "adm1n", "--save", "", NULL };
	int port = start_server("adm1n", req);
	redisReply *r = say(port, "adm1n", "ACL SETUSER alice on >w0nder ~lb:* &* +@all %s", "-@dangerous");
	cr_assert(lb_reply_ok(r), "%s", r ? r->str : "no answer");
	freeReplyObject(r);
	r = say(port, "adm1n", "ACL SETUSER alice +info +client|kill +client|pause +client|unpause "
		"+config|get +scan +role +%s", "select");
	cr_assert(lb_reply_ok(r), "%s", r ? r->str : "no answer");
	freeReplyObject(r);
	r = say(port, "adm1n", "SET user:precious %s", "42");
	freeReplyObject(r);

	redisContext *mon = redisConnect("127.0.0.1", port);
	cr_assert(mon && !mon->err);
	freeReplyObject(redisCommand(mon, "AUTH adm1n"));
	freeReplyObject(redisCommand(mon, "MONITOR"));

	char sc[160], url[128], dir[160];
	snprintf(sc, sizeof(sc), "%s/faults.ini", tmpdir);
	FILE *f = fopen(sc, "w");
	cr_assert_not_null(f);
	fputs("[scenario]\nsummary = a node paused, a holder's connections killed\n[run]\n"
	      "clients = 3\nduration = 1.5\nttl = 1000\nhold = 20\nthink = 10\n"
	      "[fault freeze]\naction = node-pause\nnodes = 0\nat = 0.4\nduration = 200\n"
	      "[fault cut]\naction = client-kill\ntarget = holder\nat = 0.8\n", f);
	fclose(f);
	snprintf(url, sizeof(url), "redis://alice:w0nder@127.0.0.1:%d/3", port);
	static const char *const strategies[] = { "token-lua", "fair", "redis-py@4.3.4" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(dir, sizeof(dir), "%s/%s", tmpdir, strategies[i]);
		const char *a[] = { "run", "--strategy", strategies[i], "--redis", url, "--scenario", sc,
				    "--allow-faults", "--out", dir, "--no-status", "--no-report", NULL };
		cr_assert_eq(lb(a), 0, "%s: %s", strategies[i], output());
		cr_assert_geq(event_value(dir, "node-pause"), 200, "%s", fx_slurp(dir, "events.csv"));
		cr_assert_gt(event_value(dir, "client-kill"), 0, "the holder's connections were "
			     "closed: %s", fx_slurp(dir, "events.csv"));
	}
	/* docs/running.md, "What lockbench sends to your servers", and the
	 * strategies' own (fair's scripts run HGET-free Redis commands inside) */
	static const char *const allowed[] = {
		"PING", "INFO", "SET", "GET", "GETDEL", "DEL", "MGET", "SCAN", "EVALSHA", "EVAL",
		"SCRIPT", "TIME", "EXISTS", "LINDEX", "LPOP", "RPUSH", "ZADD", "ZREM", "ZSCORE",
		"PEXPIRE", "INCR", "BLPOP", "LLEN", "ZRANGEBYSCORE", "ZRANGE", "LREM", "SELECT", "AUTH",
		"ROLE",
		"CONFIG", "CLIENT", NULL };
	char line[4096];
	size_t n = 0;
	while (monitored(mon, line, sizeof(line))) {
		char cmd[64] = "";
		if (!line[0] || sscanf(line, "%63s", cmd) != 1)
			continue;
		bool ok = false;
		for (const char *const *a = allowed; *a && !ok; a++)
			ok = !strcasecmp(cmd, *a);
		cr_assert(ok, "a command lockbench does not document: %s", line);
		cr_assert(keys_under_prefix(line), "a key outside the run's prefix: %s", line);
		n++;
	}
	redisFree(mon);
	cr_assert_gt(n, 100, "MONITOR saw the runs: %zu commands", n);
	r = say(port, "adm1n", "GET %s", "user:precious");
	cr_assert(lb_reply_str_eq(r, "42"));
	freeReplyObject(r);
	struct lb_node n3;
	lb_node_init_local(&n3, port, 2000);
	strcpy(n3.pass, "adm1n");
	n3.db = 3;
	r = lb_node_cmd(&n3, "DBSIZE");
	long long size = -1;
	cr_assert(lb_reply_int(r, &size));
	freeReplyObject(r);
	lb_node_close(&n3);
	cr_assert_eq(size, 0, "the runs left %lld keys in database 3", size);
}

/* ---- a failover on your Sentinels ---- */

/* A primary, a replica and three Sentinels watching them as "mymaster"
 * (quorum 2, down-after 1000 ms): ports in them.port[0..4]. Waits until
 * every Sentinel knows the replica and the two other Sentinels. */
static void start_deployment(char *sentinels, size_t len)
{
	static const char *const plain[] = { "--save", "", "--appendonly", "no", NULL };
	int primary = start_server(NULL, plain);
	char of[16];
	snprintf(of, sizeof(of), "%d", primary);
	const char *rep[] = { "--save", "", "--replicaof", "127.0.0.1", of, NULL };
	start_server(NULL, rep);
	size_t o = 0;
	for (int i = 0; i < 3; i++) {
		char conf[160];
		snprintf(conf, sizeof(conf), "%s/sentinel-%d.conf", tmpdir, i);
		FILE *f = fopen(conf, "w");
		cr_assert_not_null(f);
		fprintf(f, "sentinel monitor mymaster 127.0.0.1 %d 2\n"
			   "sentinel down-after-milliseconds mymaster 1000\n"
			   "sentinel failover-timeout mymaster 5000\n", primary);
		fclose(f);
		const char *args[] = { conf, "--sentinel", NULL };
		int port = start_server(NULL, args);
		o += (size_t)snprintf(sentinels + o, len - o, "%s127.0.0.1:%d", i ? "," : "", port);
	}
	for (int t = 0; t < 300; t++) { /* up to 30 s: they find each other by hello messages */
		bool all = true;
		for (int i = 2; i < 5 && all; i++) {
			redisReply *a = say(them.port[i], NULL, "SENTINEL SENTINELS %s", "mymaster");
			redisReply *b = say(them.port[i], NULL, "SENTINEL REPLICAS %s", "mymaster");
			all = a && a->type == REDIS_REPLY_ARRAY && a->elements == 2 && b &&
			      b->type == REDIS_REPLY_ARRAY && b->elements == 1;
			if (a)
				freeReplyObject(a);
			if (b)
				freeReplyObject(b);
		}
		if (all)
			return;
		usleep(100000);
	}
	cr_assert_fail("the Sentinels did not see each other and the replica within 30 s");
}

/* Which of them.pid serves @port. */
static pid_t pid_of(int port)
{
	for (int i = 0; i < them.n; i++)
		if (them.port[i] == port)
			return them.pid[i];
	return -1;
}

/* The primary the Sentinels name now. */
static int primary_now(void)
{
	redisReply *r = say(them.port[2], NULL, "SENTINEL GET-MASTER-ADDR-BY-NAME %s", "mymaster");
	int port = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 ? atoi(r->element[1]->str) : -1;
	if (r)
		freeReplyObject(r);
	return port;
}

/* Two servers granted sections in @dir: two ports in its primary-seen
 * events, two rows (address and a 40-hex run_id) in its servers.csv. */
static void two_servers_granted(const char *dir, int first, int second)
{
	char *ev = fx_slurp(dir, "events.csv"), want[64];
	snprintf(want, sizeof(want), "primary-seen,0,,%d\n", 1000000 + first);
	cr_assert(strstr(ev, want), "%s: %s", want, ev);
	snprintf(want, sizeof(want), ",%d\n", 1000000 + second);
	cr_assert(strstr(ev, want), "%s: %s", want, ev);
	char *csv = fx_slurp(dir, "servers.csv");
	for (int k = 0; k < 2; k++) {
		char row[64];
		snprintf(row, sizeof(row), "\n127.0.0.1,%d,", k ? second : first);
		const char *at = strstr(csv, row);
		cr_assert(at, "%s: %s", row, csv);
		at += strlen(row);
		cr_assert_eq(strspn(at, "0123456789abcdef"), 40, "a run_id: %s", csv);
	}
}

/* The Sentinels' account of a failover on a deployment lockbench did not
 * start: first one asked for (SENTINEL FAILOVER), then the sentinel-failover
 * scenario with the user's own command killing the primary. Each run has the
 * Sentinels' events, and which server granted each section. */
Test(deployment, a_failover_on_your_sentinels_is_on_the_timeline, .init = mktmp,
     .fini = stop_theirs)
{
	char sentinels[256], dir[160], sc[160];
	start_deployment(sentinels, sizeof(sentinels));
	int first = them.port[0], second = them.port[1];

	/* without --allow-faults nothing is sent: skipped, and said */
	snprintf(dir, sizeof(dir), "%s/asked", tmpdir);
	snprintf(sc, sizeof(sc), "%s/ask.ini", tmpdir);
	FILE *f = fopen(sc, "w");
	cr_assert_not_null(f);
	/* long enough for the Sentinels to demote the old primary, which they do
	 * about 10 s after the switch: until then it takes writes too */
	fputs("[scenario]\nsummary = the Sentinels are asked to fail over while a lock is held\n"
	      "[run]\nclients = 2\nduration = 14\nttl = 3000\nhold = 200\nthink = 20\n"
	      "[fault ask]\naction = sentinel-failover\ntarget = holder\nat = 1\n", f);
	fclose(f);
	const char *no[] = { "run", "--strategy", "token-lua", "--scenario", sc, "--sentinel",
			     sentinels, "--sentinel-master", "mymaster", "--out", dir, "--no-status",
			     NULL };
	cr_assert_eq(lb(no), 3, "%s", output());
	cr_assert(strstr(output(), "--allow-faults"), "%s", output());
	const char *ask[] = { "run", "--strategy", "token-lua", "--scenario", sc, "--sentinel",
			      sentinels, "--sentinel-master", "mymaster", "--allow-faults", "--out",
			      dir, "--no-status", NULL };
	cr_assert_eq(lb(ask), 0, "%s", output());
	cr_assert_eq(event_value(dir, "sentinel-failover"), 0, "a Sentinel accepted it: %s",
		     fx_slurp(dir, "events.csv"));
	cr_assert_eq(event_value(dir, "switch-master"), 1000000 + second, "%s",
		     fx_slurp(dir, "events.csv"));
	two_servers_granted(dir, first, second);
	cr_assert(strstr(fx_slurp(dir, "report.html"), "SENTINEL FAILOVER"), "the step is told");
	cr_assert_eq(primary_now(), second);

	cr_assert_eq(event_value(dir, "demoted"), 1000000 + first, "the old primary, demoted: %s",
		     fx_slurp(dir, "events.csv"));

	/* the scenario as shipped: the primary killed by the user's command,
	 * once the old primary replicates from it */
	bool synced = false;
	for (int t = 0; t < 150 && !synced; t++) {
		redisReply *r = say(first, NULL, "INFO %s", "replication");
		synced = r && r->type == REDIS_REPLY_STRING &&
			 strstr(r->str, "master_link_status:up");
		if (r)
			freeReplyObject(r);
		usleep(100000);
	}
	cr_assert(synced, "the old primary did not come back as a replica");
	char hook[64];
	snprintf(hook, sizeof(hook), "node-kill=kill -9 %ld", (long)pid_of(second));
	snprintf(dir, sizeof(dir), "%s/killed", tmpdir);
	const char *kill9[] = { "run", "--strategy", "token-lua", "--scenario", "sentinel-failover",
				"--sentinel", sentinels, "--sentinel-master", "mymaster",
				"--allow-faults", "--hook", hook, "--out", dir, "--no-status", NULL };
	cr_assert_eq(lb(kill9), 0, "%s", output());
	cr_assert_eq(event_value(dir, "hook-end"), 0, "the hook ran: %s", fx_slurp(dir, "events.csv"));
	cr_assert(strstr(fx_slurp(dir, "hook-node-kill.log"), "kill -9"));
	cr_assert_geq(event_value(dir, "sentinel-sdown"), 1000000 + second);
	cr_assert_eq(event_value(dir, "failover-end"), 1000000 + second, "+failover-end names the "
		     "old primary: %s", fx_slurp(dir, "events.csv"));
	/* the gap told: the clients found no server, then one again */
	cr_assert_eq(event_value(dir, "server-down"), 0, "%s", fx_slurp(dir, "events.csv"));
	cr_assert_eq(event_value(dir, "server-back"), 0, "%s", fx_slurp(dir, "events.csv"));
	cr_assert(strstr(fx_slurp(dir, "report.html"), "finds no server that takes its lock"));
	cr_assert_eq(event_value(dir, "switch-master"), 1000000 + first, "%s",
		     fx_slurp(dir, "events.csv"));
	two_servers_granted(dir, second, first);
	cr_assert(strstr(fx_slurp(dir, "report.html"), "the server on port"), "the steps name it");
	cr_assert(fx_pid_gone(pid_of(second)), "the user's command killed it");
}

/* A primary and a replica (requirepass s3cret) and three Sentinels
 * (requirepass sentpass) watching them as "mymaster", as a user sets them
 * up: ports from them.port[at] on; the Sentinels' URLs, with their password,
 * into @sentinels. Waits until every Sentinel knows the replica and the two
 * other Sentinels. */
static void start_guarded_deployment(char *sentinels, size_t len)
{
	static const char *const plain[] = { "--requirepass", "s3cret", "--masterauth", "s3cret",
					     "--save", "", "--appendonly", "no", NULL };
	int at = them.n, primary = start_server("s3cret", plain);
	char of[16];
	snprintf(of, sizeof(of), "%d", primary);
	const char *rep[] = { "--requirepass", "s3cret", "--masterauth", "s3cret", "--save", "",
			      "--replicaof", "127.0.0.1", of, NULL };
	start_server("s3cret", rep);
	size_t o = 0;
	for (int i = 0; i < 3; i++) {
		char conf[160];
		snprintf(conf, sizeof(conf), "%s/sentinel-%d-%d.conf", tmpdir, at, i);
		FILE *f = fopen(conf, "w");
		cr_assert_not_null(f);
		fprintf(f, "requirepass sentpass\nsentinel sentinel-pass sentpass\n"
			   "sentinel monitor mymaster 127.0.0.1 %d 2\n"
			   "sentinel auth-pass mymaster s3cret\n"
			   "sentinel down-after-milliseconds mymaster 1000\n"
			   "sentinel failover-timeout mymaster 5000\n", primary);
		fclose(f);
		const char *args[] = { conf, "--sentinel", NULL };
		int port = start_server("sentpass", args);
		o += (size_t)snprintf(sentinels + o, len - o, "%sredis://:sentpass@127.0.0.1:%d",
				      i ? "," : "", port);
	}
	for (int t = 0; t < 300; t++) { /* up to 30 s: they find each other by hello messages */
		bool all = true;
		for (int i = at + 2; i < at + 5 && all; i++) {
			redisReply *a = say(them.port[i], "sentpass", "SENTINEL SENTINELS %s", "mymaster");
			redisReply *b = say(them.port[i], "sentpass", "SENTINEL REPLICAS %s", "mymaster");
			all = a && a->type == REDIS_REPLY_ARRAY && a->elements == 2 && b &&
			      b->type == REDIS_REPLY_ARRAY && b->elements == 1;
			if (a)
				freeReplyObject(a);
			if (b)
				freeReplyObject(b);
		}
		if (all)
			return;
		usleep(100000);
	}
	cr_assert_fail("the Sentinels did not see each other and the replica within 30 s");
}

static long long column(const char *dir, const char *name)
{
	const char *v = fx_summary(dir, name);
	cr_assert(strcmp(v, "n/a"), "%s is n/a in %s", name, dir);
	return atoll(v);
}

/* Each @kind event of @dir (primary-seen, server-back) is stamped where an
 * attempt of its client got an answer (acquired, busy, refused) ended, as
 * attempts.csv has it: when the server first answered, not when the client
 * next entered (issue 49). How many there were. */
static int stamped_at_answers(const char *dir, const char *kind)
{
	char *ev = strdup(fx_slurp(dir, "events.csv")), needle[40];
	int n = 0;

	cr_assert_not_null(ev);
	snprintf(needle, sizeof(needle), ",%s,", kind);
	for (char *at = strstr(ev, needle); at; at = strstr(at + 1, needle)) {
		char *line = at;
		while (line > ev && line[-1] != '\n')
			line--;
		long long t = atoll(line);
		int client = atoi(at + strlen(needle));
		char want[64];
		bool found = false;
		snprintf(want, sizeof(want), ",%lld,", t);
		char *att = fx_slurp(dir, "attempts.csv");
		for (char *a = strstr(att, want); a && !found; a = strstr(a + 1, want)) {
			char *l = a;
			while (l > att && l[-1] != '\n')
				l--;
			char *res = a + strlen(want);
			found = atoi(l) == client && strchr(l, ',') < a &&
				(!strncmp(res, "acquired", 8) || !strncmp(res, "busy", 4) ||
				 !strncmp(res, "refused", 7));
		}
		cr_assert(found, "%s of client %d at %lld ns: no answered attempt of it ends there",
			  kind, client, t);
		n++;
	}
	free(ev);
	return n;
}

/* Every acknowledged write accounted for across a SENTINEL FAILOVER on a
 * deployment of the user's (issue 49): the clients go on writing to the old
 * primary for about 10 s after the switch, until the Sentinels demote it and
 * it drops what it took meanwhile. With the resource on lockbench's own
 * server the witness keeps every write (lost updates: the overlap's own,
 * acknowledged - final at most the writes of unknown outcome more); with
 * --resource-on-deployment the counter is rolled back with the primary, and
 * lost_updates is what the clients were told was written minus what is
 * left. Either way the time clients used the demoted primary is told. The
 * two runs go one after the other, each on a deployment of its own. */
Test(deployment, a_failover_of_your_primary_loses_no_acknowledged_write_unseen, .init = mktmp,
     .fini = stop_theirs)
{
	char ours_s[512], theirs_s[512], ours[160], theirs[160], sc[160], out[2][160];
	start_guarded_deployment(ours_s, sizeof(ours_s));
	start_guarded_deployment(theirs_s, sizeof(theirs_s));
	snprintf(sc, sizeof(sc), "%s/ask.ini", tmpdir);
	FILE *f = fopen(sc, "w");
	cr_assert_not_null(f);
	fputs("[scenario]\nsummary = the Sentinels are asked to fail over while a lock is held\n"
	      "[run]\nclients = 2\nduration = 14\nttl = 3000\nhold = 200\nthink = 20\n"
	      "[fault ask]\naction = sentinel-failover\ntarget = holder\nat = 1\n", f);
	fclose(f);
	snprintf(ours, sizeof(ours), "%s/ours", tmpdir);
	snprintf(theirs, sizeof(theirs), "%s/theirs", tmpdir);
	const char *a[] = { "run", "--strategy", "token-lua", "--scenario", sc, "--sentinel",
			    ours_s, "--sentinel-master", "mymaster", "--master-auth", ":s3cret",
			    "--allow-faults", "--out", ours, "--no-status", "--no-report", NULL };
	const char *b[] = { "run", "--strategy", "token-lua", "--scenario", sc, "--sentinel",
			    theirs_s, "--sentinel-master", "mymaster", "--master-auth", ":s3cret",
			    "--allow-faults", "--resource-on-deployment", "--out", theirs,
			    "--no-status", "--no-report", NULL };
	snprintf(out[0], sizeof(out[0]), "%s/output-ours", tmpdir);
	snprintf(out[1], sizeof(out[1]), "%s/output-theirs", tmpdir);
	/* one after the other: the fixture reaps whatever ends while it waits */
	int ra = fx_wait_lockbench(fx_spawn_lockbench(a, out[0], out[0]), a); /* re-checked */
	int rb = fx_wait_lockbench(fx_spawn_lockbench(b, out[1], out[1]), b);
	cr_assert_eq(ra, 0, "%s", fx_slurp(tmpdir, "output-ours"));
	cr_assert_eq(rb, 0, "%s", fx_slurp(tmpdir, "output-theirs"));
	for (int k = 0; k < 2; k++) {
		const char *dir = k ? theirs : ours;
		cr_assert_geq(event_value(dir, "switch-master"), 1000000, "%s",
			      fx_slurp(dir, "events.csv"));
		cr_assert_geq(event_value(dir, "demoted"), 1000000, "%s", fx_slurp(dir, "events.csv"));
		/* from the switch to the demotion, about 10 s: the clients went on there */
		long long demoted = column(dir, "demoted_primary_ms");
		cr_assert(demoted > 5000 && demoted < 14000, "%lld ms: %s", demoted,
			  fx_slurp(dir, "events.csv"));
		cr_assert(strstr(fx_slurp(tmpdir, k ? "output-theirs" : "output-ours"),
				 "clients used a demoted primary for "), "%s",
			  fx_slurp(tmpdir, k ? "output-theirs" : "output-ours"));
		/* the new primary seen when it first answered, a server back at its
		 * first answer of any kind (check finds them again in attempts.csv) */
		cr_assert_geq(stamped_at_answers(dir, "primary-seen"), 4, "%s",
			      fx_slurp(dir, "events.csv"));
		stamped_at_answers(dir, "server-back");
	}
	/* on lockbench's server: nothing rolled back; what is lost, the overlap lost */
	long long acked = column(ours, "counter_writes"), final = column(ours, "counter_final"),
		  applied = column(ours, "applied_writes"), lost = column(ours, "lost_updates"),
		  unsure = column(ours, "uncertain_writes");
	cr_assert(acked <= applied && applied <= acked + unsure, "acknowledged %lld, applied %lld, "
		  "%lld of unknown outcome", acked, applied, unsure);
	cr_assert_eq(lost, applied - final);
	cr_assert_leq(acked - final, lost, "acknowledged %lld, final %lld, lost %lld", acked, final,
		      lost);
	cr_assert_leq(lost, column(ours, "overlaps"), "a lost update needs an overlap");
	/* on the user's primary: rolled back with it, and counted by the clients */
	acked = column(theirs, "counter_writes");
	final = column(theirs, "counter_final");
	lost = column(theirs, "lost_updates");
	cr_assert_str_eq(fx_summary(theirs, "applied_writes"), "n/a");
	cr_assert_eq(lost, acked - final, "acknowledged %lld, final %lld, lost %lld", acked, final,
		     lost);
	cr_assert_gt(lost, 0, "the demoted primary dropped what it took: %lld of %lld", final, acked);
	cr_assert(strstr(fx_slurp(theirs, "summary.json"), "on your deployment"));

	/* a library on the same Sentinels: redis-py is given their password
	 * (sentinel_kwargs) and reaches the primary; which server granted is not
	 * seen, so split brain and the demoted primary are n/a, and say why */
	snprintf(ours, sizeof(ours), "%s/py", tmpdir);
	const char *py[] = { "run", "--strategy", "redis-py@4.3.4", "--duration", "2", "--clients",
			     "2", "--sentinel", ours_s, "--sentinel-master", "mymaster",
			     "--master-auth", ":s3cret", "--out", ours, "--no-status", "--no-report",
			     NULL };
	cr_assert_eq(lb(py), 0, "%s", output());
	cr_assert_gt(column(ours, "sections"), 0, "%s", output());
	cr_assert_eq(column(ours, "acquire_errors"), 0, "%s", output());
	cr_assert(strstr(output(), "split brain  n/a: nothing shows which server granted"), "%s",
		  output());
	cr_assert_str_eq(fx_summary(ours, "split_brain_ms"), "n/a");
	cr_assert_str_eq(fx_summary(ours, "demoted_primary_ms"), "n/a");
	cr_assert(strstr(fx_slurp(ours, "summary.json"), "which server granted"));
}

/* A hook is the user's command, run as words (never by a shell), killed with
 * what it started when its deadline passes; a command that cannot run is an
 * exit status in the run's events, not a hang. */
Test(deployment, a_hook_has_a_deadline_and_leaves_nothing, .init = mktmp)
{
	char sc[160], dir[160];
	snprintf(sc, sizeof(sc), "%s/hook.ini", tmpdir);
	FILE *f = fopen(sc, "w");
	cr_assert_not_null(f);
	fputs("[scenario]\nsummary = a hook that does not end\n[run]\nclients = 2\nduration = 1.5\n"
	      "[fault slow]\naction = hook\nhook = slow\nat = 0.2\nduration = 300\n", f);
	fclose(f);
	snprintf(dir, sizeof(dir), "%s/slow", tmpdir);
	const char *none[] = { "run", "--strategy", "token-lua", "--scenario", sc, "--out", dir, NULL };
	cr_assert_eq(lb(none), 2, "its command was not given: %s", output());
	cr_assert(strstr(output(), "--hook slow=COMMAND"), "%s", output());
	const char *slow[] = { "run", "--strategy", "token-lua", "--scenario", sc, "--out", dir,
			       "--no-status", "--hook", "slow=sh -c 'sleep 31; echo never' ; x", NULL };
	cr_assert_eq(lb(slow), 0, "%s", output());
	cr_assert_eq(event_value(dir, "hook-end"), -1, "killed at its deadline: %s",
		     fx_slurp(dir, "events.csv"));
	cr_assert(strstr(output(), "did not finish by its deadline"), "%s", output());
	/* runs: pgrep (procps); its absence must fail, not count 0 */
	cr_assert_eq(system("command -v pgrep >/dev/null"), 0, "pgrep: procps, from deps.sh");
	/* the hook's sh and its sleep, by whole command lines: another binary's
	 * "sleep 318", running beside this one (tests/run.sh's lanes), is not the
	 * hook's (it failed CI once) */
	FILE *p = popen("pgrep -f '^slee[p] 31$|^sh -c slee[p] 31; echo never$' | wc -l", "r");
	int left = -1;
	cr_assert_eq(fscanf(p, "%d", &left), 1);
	pclose(p);
	cr_assert_eq(left, 0, "the hook's own child was left running");
	snprintf(dir, sizeof(dir), "%s/missing", tmpdir);
	const char *missing[] = { "run", "--strategy", "token-lua", "--scenario", sc, "--out", dir,
				  "--no-status", "--hook", "slow=/nonexistent/lockbench-hook", NULL };
	cr_assert_eq(lb(missing), 0, "%s", output());
	/* a hook that cannot start did not fire: said, no hook event, and the run
	 * that shows nothing of it is inconclusive (it was listed as fired, then
	 * ended with status 127) */
	const char *ev = fx_slurp(dir, "events.csv");
	cr_assert(!strstr(ev, ",hook,") && !strstr(ev, ",hook-end,"), "%s", ev);
	cr_assert(strstr(output(), "hook slow: cannot run /nonexistent/lockbench-hook: No such file "
			 "or directory: the fault did not fire"), "%s", output());
	cr_assert(strstr(fx_summary(dir, "faults_unfired"), "slow]"), "%s",
		  fx_summary(dir, "faults_unfired"));
	cr_assert_str_eq(fx_summary(dir, "observed"), "inconclusive");
	cr_assert(strstr(fx_slurp(dir, "hook-slow.log"), "cannot run /nonexistent/lockbench-hook"));
}

/* One client doing nearly every section cannot show a race: said. (Here
 * client 1 is frozen for the whole run, so client 0 does them all.) */
Test(deployment, a_load_that_cannot_race_is_said, .init = mktmp)
{
	char dir[160], sc[160];
	snprintf(sc, sizeof(sc), "%s/alone.ini", tmpdir);
	FILE *f = fopen(sc, "w");
	cr_assert_not_null(f);
	fputs("[scenario]\nsummary = client 1 never moves\n[run]\nclients = 2\nduration = 1.5\n"
	      "[fault freeze]\naction = pause\ntarget = client:1\nat = 0\nduration = 5000\n", f);
	fclose(f);
	snprintf(dir, sizeof(dir), "%s/barge", tmpdir);
	const char *a[] = { "run", "--strategy", "token-lua", "--scenario", sc, "--out", dir,
			    "--no-status", "--no-report", NULL };
	cr_assert_eq(lb(a), 0, "%s", output());
	cr_assert(strstr(output(), "client 0 did"), "%s", output());
	cr_assert(strstr(output(), "hardly contended"), "%s", output());
	snprintf(dir, sizeof(dir), "%s/fair", tmpdir); /* --out takes a new directory */
	const char *b[] = { "run", "--strategy", "fair", "--clients", "2", "--duration", "1.5",
			    "--out", dir, "--no-status", "--no-report", NULL };
	cr_assert_eq(lb(b), 0, "%s", output());
	cr_assert_null(strstr(output(), "hardly contended"), "a fair lock shares: %s", output());
}

/* ---- your Redis Cluster ---- */

/* Three primaries and three replicas made a cluster by redis-cli, as a user
 * would; ports in them.port[0..5]. Waits until it is ok and every replica
 * has its primary's data. */
static void start_cluster(char *seeds, size_t len)
{
	char cmd[1024];
	size_t o = (size_t)snprintf(cmd, sizeof(cmd), "redis-cli --cluster create");
	for (int i = 0; i < 6; i++) {
		char conf[160];
		snprintf(conf, sizeof(conf), "%s/nodes-%d.conf", tmpdir, i);
		/* its bus on a port of its own: not port + 10000, past 65535 */
		const char *args[] = { "--cluster-enabled", "yes", "--cluster-config-file", conf,
				       "--cluster-port", "@BUS", "--cluster-node-timeout", "2000",
				       "--save", "", NULL };
		int port = start_server(NULL, args);
		o += (size_t)snprintf(cmd + o, sizeof(cmd) - o, " 127.0.0.1:%d", port);
	}
	snprintf(cmd + o, sizeof(cmd) - o, " --cluster-replicas 1 --cluster-yes > %s/create.log 2>&1",
		 tmpdir);
	cr_assert_eq(system(cmd), 0, "%s", fx_slurp(tmpdir, "create.log"));
	snprintf(seeds, len, "redis://127.0.0.1:%d,127.0.0.1:%d", them.port[0], them.port[1]);
	for (int t = 0; t < 300; t++) {
		int ready = 0;
		for (int i = 0; i < 6; i++) {
			redisReply *a = say(them.port[i], NULL, "CLUSTER INFO%s", "");
			redisReply *b = say(them.port[i], NULL, "INFO %s", "replication");
			ready += a && a->type == REDIS_REPLY_STRING && strstr(a->str, "cluster_state:ok") &&
				 b && b->type == REDIS_REPLY_STRING &&
				 (strstr(b->str, "role:master") || strstr(b->str, "master_link_status:up"));
			if (a)
				freeReplyObject(a);
			if (b)
				freeReplyObject(b);
		}
		if (ready == 6)
			return;
		usleep(100000);
	}
	cr_assert_fail("the cluster was not ok within 30 s");
}

/* The lock on the primary of the run's slot in a cluster of the user's; a
 * CLUSTER FAILOVER asked for while a client holds it moves the slot, the
 * clients follow (MOVED), and the run says which server granted what. */
Test(deployment, your_cluster_fails_over_and_the_clients_follow, .init = mktmp,
     .fini = stop_theirs)
{
	char seeds[256], dir[160], sc[160];
	start_cluster(seeds, sizeof(seeds));
	snprintf(sc, sizeof(sc), "%s/cfo.ini", tmpdir);
	FILE *f = fopen(sc, "w");
	cr_assert_not_null(f);
	fputs("[scenario]\nsummary = a replica of the lock's primary takes over\n[run]\n"
	      "clients = 2\nduration = 5\nttl = 3000\nhold = 200\nthink = 20\n"
	      "[fault ask]\naction = cluster-failover\ntarget = holder\nat = 1\n", f);
	fclose(f);
	snprintf(dir, sizeof(dir), "%s/cluster", tmpdir);
	const char *lib[] = { "run", "--strategy", "redis-py@4.3.4", "--cluster", seeds, NULL };
	cr_assert_eq(lb(lib), 2, "a library needs its own cluster client: %s", output());
	const char *no[] = { "run", "--strategy", "token-lua", "--cluster", seeds, "--scenario", sc,
			     "--out", dir, "--no-status", NULL };
	cr_assert_eq(lb(no), 3, "%s", output());
	const char *ask[] = { "run", "--strategy", "token-lua", "--cluster", seeds, "--scenario", sc,
			      "--allow-faults", "--out", dir, "--no-status", NULL };
	cr_assert_eq(lb(ask), 0, "%s", output());
	cr_assert_eq(event_value(dir, "cluster-failover"), 0, "a replica took over: %s",
		     fx_slurp(dir, "events.csv"));
	char *csv = fx_slurp(dir, "servers.csv");
	int rows = 0;
	for (const char *p = csv; (p = strstr(p, "\n127.0.0.1,")); p++)
		rows++;
	cr_assert_eq(rows, 2, "the old primary, then its replica: %s", csv);
	/* nothing watches your cluster's failovers: the time on a demoted primary
	 * is not measured, and said so (never a 0 made of silence) */
	cr_assert_str_eq(fx_summary(dir, "demoted_primary_ms"), "n/a");
	cr_assert(strstr(fx_slurp(dir, "summary.json"), "does not watch your cluster's failovers"));
	for (int i = 0; i < 6; i++) {
		redisReply *r = say(them.port[i], NULL, "DBSIZE%s", "");
		cr_assert(r && r->type == REDIS_REPLY_INTEGER && r->integer == 0,
			  "node %d kept the run's keys", i);
		freeReplyObject(r);
	}
}

/* ---- what a hostile review found: each fixed, each kept so ---- */

/* A server that answers byte by byte ('+' every 200 ms, never a whole
 * reply): hiredis's timeout starts again with every byte, so without the
 * probe lockbench hung for ever, Ctrl-C too. */
static int start_trickler(void)
{
	int port = lb_free_port(), i = them.n++;
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 64) < 0)
			_exit(1);
		signal(SIGCHLD, SIG_IGN);
		for (;;) {
			int c = accept(s, NULL, NULL);
			if (c >= 0 && fork() == 0) {
				while (write(c, "+", 1) == 1)
					usleep(200000);
				_exit(0);
			}
			close(c);
		}
	}
	them.pid[i] = pid;
	them.port[i] = port;
	usleep(100000);
	return port;
}

Test(deployment, hostile_servers_and_options_are_refused_in_time, .init = mktmp,
     .fini = stop_theirs)
{
	static const char *const plain[] = { "--save", "", NULL };
	int primary = start_server(NULL, plain), trickle = start_trickler();
	char url[160], of[16], dir[160];
	snprintf(of, sizeof(of), "%d", primary);
	const char *rep[] = { "--save", "", "--replicaof", "127.0.0.1", of, NULL };
	int replica = start_server(NULL, rep);
	snprintf(dir, sizeof(dir), "%s/run", tmpdir);

	/* a replica is not a lock node: 3, naming it */
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d", replica);
	const char *r1[] = { "run", "--strategy", "token-lua", "--redis", url, "--duration", "0.5",
			     "--out", dir, NULL };
	cr_assert_eq(lb(r1), 3, "%s", output());
	cr_assert(strstr(output(), "it is a replica"), "%s", output());
	char follows[40];
	snprintf(follows, sizeof(follows), "(of 127.0.0.1:%d)", primary);
	cr_assert(strstr(output(), follows), "which primary it follows: %s", output());
	/* a plain server given as a cluster's seed: what it is, not "port 0: no
	 * answer" (issue 49) */
	char seed_dir[2][160];
	snprintf(seed_dir[0], sizeof(seed_dir[0]), "%s/seed-pw", tmpdir);
	snprintf(seed_dir[1], sizeof(seed_dir[1]), "%s/seed", tmpdir);
	snprintf(url, sizeof(url), "redis://:pw@127.0.0.1:%d", primary);
	const char *seed[] = { "run", "--strategy", "token-lua", "--cluster", url, "--duration",
			       "0.5", "--out", seed_dir[0], NULL };
	cr_assert_eq(lb(seed), 3, "%s", output());
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d", primary);
	seed[8] = seed_dir[1];
	cr_assert_eq(lb(seed), 3, "%s", output());
	cr_assert(strstr(output(), "is a plain Redis server, with cluster support disabled"), "%s",
		  output());
	cr_assert_null(strstr(output(), ":0"), "%s", output());
	/* a trickling server, as --redis and as a Sentinel: 3 within seconds */
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d", trickle);
	int64_t t0 = lb_now_ns();
	const char *r2[] = { "run", "--strategy", "token-lua", "--redis", url, "--out", dir, NULL };
	cr_assert_eq(lb(r2), 3, "%s", output());
	cr_assert(strstr(output(), "no whole reply to PING"), "%s", output());
	snprintf(url, sizeof(url), "127.0.0.1:%d", trickle);
	const char *r3[] = { "run", "--strategy", "token-lua", "--sentinel", url, "--sentinel-master",
			     "m", "--out", dir, NULL };
	cr_assert_eq(lb(r3), 3, "%s", output());
	cr_assert_lt(lb_now_ns() - t0, 20 * LB_NS_PER_S, "the trickler held lockbench");
	/* a Sentinel that refuses AUTH: said, not a crash (it was a double free) */
	snprintf(url, sizeof(url), "redis://:bad@127.0.0.1:%d", primary);
	const char *r4[] = { "run", "--strategy", "token-lua", "--sentinel", url, "--sentinel-master",
			     "m", "--out", dir, NULL };
	cr_assert_eq(lb(r4), 3, "%s", output());
	cr_assert(strstr(output(), "refused AUTH"), "%s", output());
	/* options that would be dropped or fail late: 2 */
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d", primary);
	char three[400];
	snprintf(three, sizeof(three), "%.120s,%.120s,%.120s", url, url, url);
	const char *u1[] = { "run", "--strategy", "token-lua", "--redis", three, NULL };
	const char *u2[] = { "run", "--strategy", "token-lua", "--redis", url, "--redis", url, NULL };
	const char *u3[] = { "run", "--strategy", "token-lua", "--redis", url, "--hook", "bogus=true",
			     NULL };
	const char *u4[] = { "run", "--strategy", "token-lua", "--sentinel", "a:1,a:2,a:3,a:4,a:5,a:6",
			     "--sentinel-master", "m", NULL };
	const char *const *usage[] = { u1, u2, u3, u4 };
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(lb(usage[i]), 2, "%zu: %s", i, output());
	/* a password never shown, nor kept in meta.txt */
	const char *pw[] = { "run", "--strategy", "token-lua", "--redis",
			     "redis://alice:S3CRETpw@127.0.0.1:0", NULL };
	cr_assert_eq(lb(pw), 2, "%s", output());
	cr_assert_null(strstr(output(), "S3CRETpw"), "%s", output());
	cr_assert(strstr(output(), "alice:***@"), "%s", output());
}

/* A node-pause your own commands do (kill -STOP, kill -CONT) that outlasts
 * the run: the resume is run to its end, never killed, and the server is
 * not left frozen. A server that stops answering before the final read of
 * the counter makes the lost updates n/a, never a count of all of them. */
Test(deployment, a_pause_is_undone_and_an_unread_counter_is_na, .init = mktmp,
     .fini = stop_theirs)
{
	static const char *const plain[] = { "--save", "", NULL };
	int port = start_server(NULL, plain);
	pid_t pid = them.pid[0];
	char url[64], sc[160], dir[160], stop[64], cont[64];
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d", port);
	snprintf(sc, sizeof(sc), "%s/pause.ini", tmpdir);
	FILE *f = fopen(sc, "w");
	cr_assert_not_null(f);
	fputs("[scenario]\nsummary = a pause past the end\n[run]\nclients = 2\nduration = 2\n"
	      "think = 5\n[fault p]\naction = node-pause\nnodes = 0\nat = 0.5\nduration = 30000\n", f);
	fclose(f);
	snprintf(stop, sizeof(stop), "node-pause=kill -STOP %ld", (long)pid);
	snprintf(cont, sizeof(cont), "node-resume=kill -CONT %ld", (long)pid);
	snprintf(dir, sizeof(dir), "%s/pause", tmpdir);
	const char *a[] = { "run", "--strategy", "set-nx-px", "--redis", url, "--scenario", sc,
			    "--allow-faults", "--hook", stop, "--hook", cont, "--out", dir, "--no-status",
			    "--no-report", NULL };
	cr_assert_eq(lb(a), 0, "%s", output());
	char path[256], status[4096];
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	FILE *s = fopen(path, "r");
	cr_assert_not_null(s);
	size_t n = fread(status, 1, sizeof(status) - 1, s);
	fclose(s);
	status[n] = '\0';
	cr_assert_null(strstr(status, "State:\tT"), "the server was left stopped");
	cr_assert_eq(event_value(dir, "hook-end"), 0, "%s", fx_slurp(dir, "events.csv"));
	cr_assert_eq(event_value(dir, "node-resume"), 0, "%s", fx_slurp(dir, "events.csv"));
	/* stopped for good from 1 s: the counter, on that server on purpose, cannot
	 * be read at the end */
	snprintf(dir, sizeof(dir), "%s/stopped", tmpdir);
	const char *b[] = { "run", "--strategy", "set-nx-px", "--redis", url, "--duration", "2",
			    "--clients", "2", "--resource-on-deployment", "--out", dir, "--no-status",
			    "--no-report", NULL };
	char out[128];
	snprintf(out, sizeof(out), "%s/output", tmpdir);
	pid_t run = fx_spawn_lockbench(b, out, out);
	usleep(1000000);
	kill(pid, SIGSTOP);
	int rc = fx_wait_lockbench(run, b);
	kill(pid, SIGCONT);
	cr_assert_eq(rc, 0, "%s", output());
	char *csv = fx_slurp(dir, "summary.csv");
	cr_assert_not_null(strstr(csv, "n/a"), "%s", csv);
	struct lb_summary sum;
	snprintf(path, sizeof(path), "%s/summary.csv", dir);
	cr_assert_eq(lb_summary_read(path, &sum), 0);
	cr_assert_str_eq(lb_summary_get(&sum, "lost_updates"), "n/a");
	cr_assert_str_eq(lb_summary_get(&sum, "counter_final"), "n/a");
}

/* ---- audit on your deployment: run's options, run's checks ---- */

Test(deployment, an_audit_runs_on_your_servers_with_runs_options, .init = mktmp,
     .fini = stop_theirs)
{
	const char *const args[] = { "--requirepass", "s3cret", NULL };
	int port = start_server("s3cret", args);
	char url[96], dir[160], bad[160];

	redisReply *r = say(port, "s3cret", "SET %s keep", "app:config");
	cr_assert(r && r->type == REDIS_REPLY_STATUS);
	freeReplyObject(r);
	snprintf(url, sizeof(url), "redis://:s3cret@127.0.0.1:%d", port);
	snprintf(dir, sizeof(dir), "%s/audit", tmpdir);
	const char *a[] = { "audit", "set-nx-px", "--claims", "D", "--redis", url, "--out", dir,
			    "--no-report", NULL };
	cr_assert_eq(lb(a), 0, "%s", output());
	cr_assert(strstr(output(), "D deadlock-free   held"), "%s", output());
	const char *meta = fx_slurp(dir, "holder-crash/meta.txt");
	cr_assert(strstr(meta, "--redis 'redis://:***@127.0.0.1:") ||
		  strstr(meta, "--redis redis://:***@127.0.0.1:"), "%s", meta);
	cr_assert_null(strstr(meta, "s3cret"), "%s", meta);
	r = say(port, "s3cret", "KEYS %s", "*");
	cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
		  !strcmp(r->element[0]->str, "app:config"), "only the user's key is left");
	freeReplyObject(r);
	/* what run refuses, audit refuses, before any run */
	snprintf(bad, sizeof(bad), "%s/bad", tmpdir);
	const char *half[] = { "audit", "set-nx-px", "--sentinel", url, "--out", bad, NULL };
	cr_assert_eq(lb(half), 2, "%s", output());
	cr_assert(strstr(output(), "--sentinel-master NAME go together"), "%s", output());
	const char *etcd[] = { "audit", "set-nx-px", "--etcd", "http://127.0.0.1:1", "--out", bad,
			       NULL };
	cr_assert_eq(lb(etcd), 2, "%s", output());
	cr_assert(strstr(output(), "set-nx-px is a Redis lock"), "%s", output());
	/* a server that refuses: said once, naming it, and the audit stops: 3 */
	const char *gone[] = { "audit", "set-nx-px", "--redis", "redis://127.0.0.1:1", "--out", bad,
			       "--no-report", NULL };
	cr_assert_eq(lb(gone), 3, "%s", output());
	cr_assert(strstr(output(), "127.0.0.1:1"), "%s", output());
	cr_assert(strstr(output(), "your deployment could not be reached"), "%s", output());
}
