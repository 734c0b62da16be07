/*
 * test_ensemble.c - the consensus locks on the user's own etcd cluster and
 * ZooKeeper ensemble (--etcd, --zookeeper; harness/servers/ensemble.c): ensembles
 * this test starts by hand, as a user would (plain etcd and ZooKeeper
 * processes on free loopback ports, in a temporary directory), with keys and
 * znodes of the user's that must come through untouched. The witnesses are
 * not lockbench's: etcdctl and kazoo read what is left.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "consensus.h"
#include "fixture.h"

FX_SUITE(ensemble, 240);

static char tmpdir[64];
static pid_t member_pid[4];
static int client_port[4], peer_port[4], elect_port[4];
static int n_members;

static void mktmp(void)
{
	strcpy(tmpdir, "/tmp/lbtest-ens-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
	n_members = 0;
}

static void stop_members(void)
{
	for (int i = 0; i < n_members; i++)
		if (member_pid[i] > 0) {
			kill(member_pid[i], SIGCONT);
			kill(member_pid[i], SIGKILL);
			waitpid(member_pid[i], NULL, 0);
			member_pid[i] = 0;
		}
}

static void free_ports(int n)
{
	int seen[12], k = 0;

	while (k < 3 * n) {
		int p = lb_free_port(), dup = 0;
		cr_assert_gt(p, 0);
		for (int i = 0; i < k; i++)
			dup |= seen[i] == p;
		if (!dup)
			seen[k++] = p;
	}
	for (int i = 0; i < n; i++)
		client_port[i] = seen[i], peer_port[i] = seen[n + i], elect_port[i] = seen[2 * n + i];
}

static pid_t spawn(const char *dir, const char *const *argv, const char *log)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		FILE *f = freopen(log, "w", stderr);
		(void)f;
		dup2(2, 1);
		if (chdir(dir) < 0)
			_exit(126);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execvp(argv[0], (char **)argv);
		_exit(127);
	}
	return pid;
}

/* A shell command's whole output (at most 16 KiB), trailing newline cut. */
static const char *sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *sh(const char *fmt, ...)
{
	static char out[16384];
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	pclose(p);
	out[n] = '\0';
	while (n && out[n - 1] == '\n')
		out[--n] = '\0';
	return out;
}

/* Three etcd members of a cluster of their own (@n = 1: a lone one, another
 * cluster); they serve a put through member 0 when this returns. */
static void start_etcd(int n)
{
	char cluster[512] = "", dir[128], log[160], name[16], curl[64], purl[64], token[160];
	int first = n_members;

	free_ports(n);
	snprintf(token, sizeof(token), "%s-%d", tmpdir, first); /* one cluster's, all its members' */
	for (int i = 0; i < n; i++)
		snprintf(cluster + strlen(cluster), sizeof(cluster) - strlen(cluster),
			 "%sm%d=http://127.0.0.1:%d", i ? "," : "", i, peer_port[i]);
	for (int i = 0; i < n; i++) {
		snprintf(dir, sizeof(dir), "%s/etcd-%d-%d", tmpdir, first, i);
		cr_assert_eq(mkdir(dir, 0700), 0);
		snprintf(log, sizeof(log), "%s.log", dir);
		snprintf(name, sizeof(name), "m%d", i);
		snprintf(curl, sizeof(curl), "http://127.0.0.1:%d", client_port[i]);
		snprintf(purl, sizeof(purl), "http://127.0.0.1:%d", peer_port[i]);
		const char *argv[] = { "etcd", "--name", name, "--data-dir", "data",
				       "--listen-client-urls", curl, "--advertise-client-urls", curl,
				       "--listen-peer-urls", purl, "--initial-advertise-peer-urls", purl,
				       "--initial-cluster", cluster, "--initial-cluster-state", "new",
				       "--initial-cluster-token", token, NULL };
		member_pid[n_members++] = spawn(dir, argv, log);
	}
	for (int t = 0; t < 300; t++) {
		if (!strcmp(sh("ETCDCTL_API=3 etcdctl --dial-timeout=1s --command-timeout=1s "
			       "--endpoints=127.0.0.1:%d put lbtest:probe 1 2>&1", client_port[0]), "OK"))
			return;
		usleep(100000);
	}
	cr_assert_fail("the test's etcd cluster served no put in 30 s (%s)", tmpdir);
}

static void start_zookeeper(void)
{
	char dir[128], log[160], cfg[1024], path[200];

	free_ports(3);
	for (int i = 0; i < 3; i++) {
		snprintf(dir, sizeof(dir), "%s/zk-%d", tmpdir, i);
		snprintf(path, sizeof(path), "%s/data", dir);
		cr_assert_eq(mkdir(dir, 0700), 0);
		cr_assert_eq(mkdir(path, 0700), 0);
		snprintf(path, sizeof(path), "%s/data/myid", dir);
		FILE *f = fopen(path, "w");
		fprintf(f, "%d\n", i + 1);
		fclose(f);
		snprintf(cfg, sizeof(cfg), "tickTime=500\ninitLimit=20\nsyncLimit=4\ndataDir=%s/data\n"
			 "clientPort=%d\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
			 "server.1=127.0.0.1:%d:%d\nserver.2=127.0.0.1:%d:%d\nserver.3=127.0.0.1:%d:%d\n",
			 dir, client_port[i], peer_port[0], elect_port[0], peer_port[1], elect_port[1],
			 peer_port[2], elect_port[2]);
		snprintf(path, sizeof(path), "%s/zoo.cfg", dir);
		f = fopen(path, "w");
		fputs(cfg, f);
		fclose(f);
		snprintf(log, sizeof(log), "%s.log", dir);
		const char *argv[] = { "java", "-Xmx128m", "-XX:-UsePerfData", "-Djava.io.tmpdir=.",
				       "-cp", "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar",
				       "org.apache.zookeeper.server.quorum.QuorumPeerMain", "./zoo.cfg", NULL };
		member_pid[n_members++] = spawn(dir, argv, log);
	}
	for (int t = 0; t < 600; t++) {
		char out[512];
		int leaders = 0, followers = 0;
		for (int i = 0; i < 3; i++)
			if (lb_consensus_4lw(client_port[i], "srvr", out, sizeof(out), 300) == 0) {
				leaders += strstr(out, "Mode: leader") != NULL;
				followers += strstr(out, "Mode: follower") != NULL;
			}
		if (leaders == 1 && followers == 2)
			return;
		usleep(100000);
	}
	cr_assert_fail("the test's ZooKeeper ensemble had no quorum in 60 s (%s)", tmpdir);
}

/* kazoo, not lockbench, on the ensemble: @script with z a started client. */
static const char *kazoo(const char *script)
{
	return sh("/usr/bin/python3 -c 'from kazoo.client import KazooClient\n"
		  "z = KazooClient(hosts=\"127.0.0.1:%d\"); z.start(timeout=10)\n%s\nz.stop()' 2>&1",
		  client_port[0], script);
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

static const char *meta(const char *dir, const char *field)
{
	static char value[256];
	const char *m = fx_slurp(dir, "meta.txt"), *at = strstr(m, field);
	cr_assert_not_null(at, "meta.txt has no %s", field);
	sscanf(at + strlen(field), " %255[^\n]", value);
	return value;
}

Test(ensemble, your_etcd_keeps_its_keys_and_loses_the_runs, .init = mktmp, .fini = stop_members)
{
	char urls[256], out[160], hook[2][64], cut[160];

	start_etcd(3);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d,http://127.0.0.1:%d,http://localhost:%d",
		 client_port[0], client_port[1], client_port[2]);
	/* the user's: a key of their own, and one under another run's prefix */
	sh("ETCDCTL_API=3 etcdctl --endpoints=127.0.0.1:%d put app/config keep", client_port[0]);
	sh("ETCDCTL_API=3 etcdctl --endpoints=127.0.0.1:%d put lb:00000000:lock:0 other-run",
	   client_port[0]);
	/* member 0 frozen by the user's hook; without --allow-faults, skipped */
	snprintf(hook[0], sizeof(hook[0]), "node-pause=kill -STOP %d", (int)member_pid[0]);
	snprintf(hook[1], sizeof(hook[1]), "node-resume=kill -CONT %d", (int)member_pid[0]);
	snprintf(out, sizeof(out), "%s/skipped", tmpdir);
	const char *skip[] = { "run", "--strategy", "etcd-lock@3.4.23", "--etcd", urls, "--scenario",
			       "consensus-member-pause", "--hook", hook[0], "--hook", hook[1], "--out",
			       out, "--no-report", NULL };
	cr_assert_eq(lb(skip), 3, "%s", output());
	cr_assert(strstr(output(), "--allow-faults"), "%s", output());
	snprintf(out, sizeof(out), "%s/paused", tmpdir);
	const char *paused[] = { "run", "--strategy", "etcd-lock@3.4.23", "--etcd", urls,
				 "--scenario", "consensus-member-pause", "--allow-faults", "--hook",
				 hook[0], "--hook", hook[1], "--out", out, "--no-report", NULL };
	cr_assert_eq(lb(paused), 0, "%s", output());
	cr_assert(strstr(fx_slurp(out, "events.csv"), ",hook-end,"), "the hook ran and ended");
	cr_assert(strstr(fx_slurp(out, "meta.txt"), "servers: yours, etcd "), "%s",
		  fx_slurp(out, "meta.txt"));
	char prefix[300];
	snprintf(prefix, sizeof(prefix), "%s", meta(out, "key_prefix:"));
	cr_assert_str_eq(sh("ETCDCTL_API=3 etcdctl --endpoints=127.0.0.1:%d get --prefix '%s' "
			    "--keys-only", client_port[1], prefix), "", "the run's keys are gone");
	/* a client cut off from every member through lockbench's relay */
	snprintf(cut, sizeof(cut), "%s/cut.ini", tmpdir);
	FILE *f = fopen(cut, "w");
	fputs("[scenario]\nsummary = client 0 cut off\n[run]\nclients = 2\nduration = 3\n"
	      "hold = 50\nthink = 20\n[fault cut]\naction = net-cut\ntarget = client:0\n"
	      "nodes = all\nat = 0.5\nduration = 1000\n", f);
	fclose(f);
	snprintf(out, sizeof(out), "%s/cut", tmpdir);
	const char *cutrun[] = { "run", "--strategy", "etcd-lock@3.4.23", "--etcd", urls,
				 "--scenario", cut, "--allow-faults", "--out", out, "--no-report", NULL };
	cr_assert_eq(lb(cutrun), 0, "%s", output());
	cr_assert(strstr(fx_slurp(out, "events.csv"), ",net-cut,"), "the cut was made");
	cr_assert_str_eq(sh("ETCDCTL_API=3 etcdctl --endpoints=127.0.0.1:%d get --prefix '' "
			    "--keys-only | grep -v '^$' | sort | tr '\\n' ' '", client_port[2]),
			 "app/config lb:00000000:lock:0 lbtest:probe ",
			 "only the user's keys are left");
}

Test(ensemble, your_zookeeper_keeps_its_znodes_and_loses_the_runs, .init = mktmp,
     .fini = stop_members)
{
	char hosts[128], out[160];

	start_zookeeper();
	snprintf(hosts, sizeof(hosts), "127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d", client_port[0],
		 client_port[1], client_port[2]);
	kazoo("z.ensure_path(\"/app/config\")");
	snprintf(out, sizeof(out), "%s/first", tmpdir);
	const char *first[] = { "run", "--strategy", "kazoo-lock@2.8.0", "--zookeeper", hosts,
				"--duration", "2", "--clients", "3", "--out", out, "--no-report", NULL };
	cr_assert_eq(lb(first), 0, "%s", output());
	cr_assert(strstr(fx_slurp(out, "summary.csv"), "kazoo-lock@2.8.0"));
	cr_assert_str_eq(kazoo("print(sorted(z.get_children(\"/\")))"), "['app', 'zookeeper']",
			 "/lockbench, which the run made, is gone with the run's znodes");
	/* /lockbench is the user's now, with a znode of theirs in it: both stay */
	kazoo("z.ensure_path(\"/lockbench/theirs\")");
	snprintf(out, sizeof(out), "%s/second", tmpdir);
	const char *second[] = { "run", "--strategy", "kazoo-lock-fenced@2.8.0", "--zookeeper", hosts,
				 "--duration", "2", "--clients", "3", "--out", out, "--no-report",
				 NULL };
	cr_assert_eq(lb(second), 0, "%s", output());
	cr_assert_str_eq(kazoo("print(sorted(z.get_children(\"/lockbench\")))"), "['theirs']");
}

Test(ensemble, a_member_that_will_not_serve_is_named_with_its_cause, .init = mktmp,
     .fini = stop_members)
{
	char list[400], out[160];
	int first[3];

	start_etcd(3);
	memcpy(first, client_port, sizeof(first));
	start_etcd(1); /* a lone member: another cluster */
	int other = client_port[0];
	snprintf(out, sizeof(out), "%s/r", tmpdir);
	struct {
		const char *third;
		int status;
		const char *said;
	} cases[] = {
		{ "http://127.0.0.1:1", 3,
		  "etcd member 2 (http://127.0.0.1:1): connection refused: nothing listens there" },
		{ "http://no-such-host.invalid:2379", 3,
		  "etcd member 2 (http://no-such-host.invalid:2379): unknown host" },
		{ "http://127.0.0.1:@", 3, "etcd member 2 (http://127.0.0.1:@): not a member of "
		  "member 0's cluster" },
		{ "https://127.0.0.1:@", 2, "http:// and https:// members mixed" },
		{ "http://user:secret@127.0.0.1:@", 2, "user:***@" },
		{ "127.0.0.1:@", 2, "expected http://HOST[:PORT]" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char third[128], said[200];
		const char *at = strchr(cases[k].third, '@');
		bool port = at && at[1] == '\0';
		snprintf(third, sizeof(third), port ? "%.*s%d" : "%.*s", port ?
			 (int)(at - cases[k].third) : 127, cases[k].third, other);
		at = strstr(cases[k].said, ":@)");
		if (at)
			snprintf(said, sizeof(said), "%.*s:%d%s", (int)(at - cases[k].said),
				 cases[k].said, other, at + 2);
		else
			snprintf(said, sizeof(said), "%s", cases[k].said);
		snprintf(list, sizeof(list), "http://127.0.0.1:%d,http://127.0.0.1:%d,%s", first[0],
			 first[1], third);
		snprintf(out, sizeof(out), "%s/r%zu", tmpdir, k); /* a new one each: --out is claimed */
		const char *args[] = { "run", "--strategy", "etcd-lock@3.4.23", "--etcd", list,
				       "--duration", "1", "--out", out, "--no-report", NULL };
		cr_assert_eq(lb(args), cases[k].status, "%s: %s", list, output());
		cr_assert(strstr(output(), said), "%s: expected '%s' in: %s", list, said, output());
		cr_assert_null(strstr(output(), "secret"), "%s", output());
	}
	/* a Redis lock on an etcd cluster, a consensus lock on the wrong system */
	snprintf(list, sizeof(list), "http://127.0.0.1:%d", first[0]);
	const char *redis[] = { "run", "--strategy", "set-nx-px", "--etcd", list, "--out", out, NULL };
	cr_assert_eq(lb(redis), 2, "%s", output());
	cr_assert(strstr(output(), "set-nx-px is a Redis lock"), "%s", output());
	const char *wrong[] = { "run", "--strategy", "kazoo-lock@2.8.0", "--etcd", list, "--out", out,
				NULL };
	cr_assert_eq(lb(wrong), 2, "%s", output());
	/* an etcd member given as a ZooKeeper server */
	snprintf(list, sizeof(list), "127.0.0.1:%d", first[0]);
	snprintf(out, sizeof(out), "%s/zk", tmpdir);
	const char *zk[] = { "run", "--strategy", "kazoo-lock@2.8.0", "--zookeeper", list,
			     "--duration", "1", "--out", out, "--no-report", NULL };
	cr_assert_eq(lb(zk), 3, "%s", output());
	cr_assert(strstr(output(), "ZooKeeper server 0 (127.0.0.1:"), "%s", output());
}

Test(ensemble, a_dry_run_lists_every_request_and_sends_none, .init = mktmp)
{
	char out[160];
	/* nothing listens on these: a dry run does not connect */
	const char *etcd[] = { "run", "--strategy", "etcd-lock@3.4.23", "--etcd",
			       "http://127.0.0.1:1,http://db2.invalid:2379,http://127.0.0.1:3",
			       "--scenario", "consensus-member-pause", "--dry-run", NULL };

	snprintf(out, sizeof(out), "%s/r", tmpdir);
	cr_assert_eq(lb(etcd), 0, "%s", output());
	const char *o = output();
	cr_assert(strstr(o, "etcd member 1 (http://db2.invalid:2379)"), "%s", o);
	cr_assert(strstr(o, "POST /v3/maintenance/status"), "%s", o);
	cr_assert(strstr(o, "POST /v3/kv/deleterange of key lb:<8 hex>: to range_end lb:<8 hex>;"),
		  "%s", o);
	cr_assert(strstr(o, "--allow-faults"), "%s", o);
	const char *tls[] = { "run", "--strategy", "etcd-lock@3.4.23", "--etcd",
			      "https://127.0.0.1:1,https://db2.invalid:2379,https://127.0.0.1:3",
			      "--tls-insecure", "--dry-run", NULL };
	cr_assert_eq(lb(tls), 0, "%s", output());
	o = output();
	cr_assert(strstr(o, "etcd member 1 (https://db2.invalid:2379)"), "%s", o);
	cr_assert(strstr(o, "through a TLS tunnel lockbench starts"), "%s", o);
	const char *zk[] = { "run", "--strategy", "kazoo-lock@2.8.0", "--zookeeper",
			     "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", "--dry-run", NULL };
	cr_assert_eq(lb(zk), 0, "%s", output());
	o = output();
	cr_assert(strstr(o, "getData /zookeeper/config"), "%s", o);
	cr_assert(strstr(o, "delete /lockbench when the run made it"), "%s", o);
}

/* A CA, a member's certificate for 127.0.0.1 and localhost signed by it, a
 * client certificate it signed, and another CA that signed nothing here. */
static void make_certificates(void)
{
	sh("cd %s && for ca in ca other; do openssl req -x509 -newkey rsa:2048 -nodes "
	   "-keyout $ca.key -out $ca.crt -days 2 -subj \"/CN=lockbench test $ca\" 2>/dev/null; done"
	   " && openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=127.0.0.1"
	   " 2>/dev/null && printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > ext && openssl "
	   "x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt -days 2 "
	   "-extfile ext 2>/dev/null && openssl req -newkey rsa:2048 -nodes -keyout cli.key -out "
	   "cli.csr -subj /CN=lockbench 2>/dev/null && printf 'extendedKeyUsage=clientAuth\\n' > "
	   "cext && openssl x509 -req -in cli.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out "
	   "cli.crt -days 2 -extfile cext 2>/dev/null && echo made", tmpdir);
}

/* One etcd member serving its clients over TLS only (https://), asking
 * each a client certificate signed by the test's CA (--trusted-ca-file);
 * it serves a put through etcdctl over TLS when this returns. */
static void start_etcd_tls(void)
{
	char dir[128], log[160], curl[64], purl[64], cluster[96], cert[128], key[128], ca[128];

	make_certificates();
	free_ports(1);
	snprintf(dir, sizeof(dir), "%s/etcd-tls", tmpdir);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(log, sizeof(log), "%s.log", dir);
	snprintf(curl, sizeof(curl), "https://127.0.0.1:%d", client_port[0]);
	snprintf(purl, sizeof(purl), "http://127.0.0.1:%d", peer_port[0]);
	snprintf(cluster, sizeof(cluster), "m0=%s", purl);
	snprintf(cert, sizeof(cert), "%s/srv.crt", tmpdir);
	snprintf(key, sizeof(key), "%s/srv.key", tmpdir);
	snprintf(ca, sizeof(ca), "%s/ca.crt", tmpdir);
	const char *argv[] = { "etcd", "--name", "m0", "--data-dir", "data", "--listen-client-urls",
			       curl, "--advertise-client-urls", curl, "--listen-peer-urls", purl,
			       "--initial-advertise-peer-urls", purl, "--initial-cluster", cluster,
			       "--cert-file", cert, "--key-file", key, "--trusted-ca-file", ca,
			       "--client-cert-auth", NULL };
	member_pid[n_members++] = spawn(dir, argv, log);
	for (int t = 0; t < 300; t++) {
		if (!strcmp(sh("ETCDCTL_API=3 etcdctl --dial-timeout=1s --command-timeout=1s "
			       "--endpoints=https://127.0.0.1:%d --cacert %s --cert %s/cli.crt --key "
			       "%s/cli.key put app/config keep 2>&1", client_port[0], ca, tmpdir, tmpdir),
			    "OK"))
			return;
		usleep(100000);
	}
	cr_assert_fail("the test's TLS etcd member served no put in 30 s (%s)", dir);
}

Test(ensemble, your_etcd_over_https_with_your_ca_and_client_certificate, .init = mktmp,
     .fini = stop_members)
{
	char url[64], plain[64], ca[128], other[128], cert[128], key[128], out[160];

	start_etcd_tls();
	snprintf(url, sizeof(url), "https://127.0.0.1:%d", client_port[0]);
	snprintf(plain, sizeof(plain), "http://127.0.0.1:%d", client_port[0]);
	snprintf(ca, sizeof(ca), "%s/ca.crt", tmpdir);
	snprintf(other, sizeof(other), "%s/other.crt", tmpdir);
	snprintf(cert, sizeof(cert), "%s/cli.crt", tmpdir);
	snprintf(key, sizeof(key), "%s/cli.key", tmpdir);
	snprintf(out, sizeof(out), "%s/ok", tmpdir);
	const char *ok[] = { "run", "--strategy", "etcd-lock@3.5.36-client", "--etcd", url,
			     "--tls-ca", ca, "--tls-cert", cert, "--tls-key", key, "--clients", "3",
			     "--duration", "2", "--out", out, "--no-report", NULL };
	cr_assert_eq(lb(ok), 0, "%s", output());
	cr_assert(strstr(output(), "outcome      safe"), "%s", output());
	cr_assert(strstr(fx_slurp(out, "tunnel-0.log"), "Certificate accepted"),
		  "lockbench's own requests went through its tunnel, checking the member");
	cr_assert_str_eq(sh("ETCDCTL_API=3 etcdctl --endpoints=%s --cacert %s --cert %s --key %s "
			    "get --prefix '' --keys-only | grep -v '^$' | tr '\\n' ' '", url, ca, cert,
			    key), "app/config ", "only the user's key is left");
	/* refused, each with its cause, exit 3: never plain text instead */
	struct {
		const char *url, *ca, *cert;
		const char *said;
	} no[] = {
		{ url, other, cert, "(is --tls-ca the CA that signed the server's certificate?)" },
		{ url, ca, NULL, "does it ask a client certificate, --tls-cert and --tls-key" },
		{ plain, NULL, NULL, "an https:// member does so to plain HTTP: give https://" },
	};
	for (size_t k = 0; k < sizeof(no) / sizeof(no[0]); k++) {
		snprintf(out, sizeof(out), "%s/no%zu", tmpdir, k);
		const char *a[] = { "run", "--strategy", "etcd-lock@3.4.23", "--etcd", no[k].url,
				    "--duration", "1", "--out", out, "--no-report",
				    no[k].ca ? "--tls-ca" : NULL, no[k].ca, "--tls-cert", cert,
				    "--tls-key", key, NULL };
		if (!no[k].cert)
			a[12] = NULL;
		cr_assert_eq(lb(a), 3, "%zu: %s", k, output());
		cr_assert(strstr(output(), no[k].said), "%zu: %s", k, output());
	}
	/* the adapter itself, given a CA that did not sign the member's
	 * certificate, refuses its config in Go's words (it never tries plain) */
	const char *adapters = getenv("LOCKBENCH_ADAPTERS");
	cr_assert_not_null(adapters);
	const char *said = sh("(printf 'hello 3\\nconfig nodes=%s tls_ca=%s tls_cert=%s tls_key=%s "
			      "key=lb:00000000:lock:0 ttl_ms=2000 wait=one timeout_ms=2000 client=0"
			      "\\n'; sleep 3; echo quit) | %s/go/bin/etcd-lock-client-3.5 2>&1", url,
			      other, cert, key, adapters);
	cr_assert(strstr(said, "TLS: tls: failed to verify certificate: x509: certificate signed by "
			 "unknown authority"), "%s", said);
	/* usage: the TLS options without https://, http:// and https:// members mixed */
	snprintf(out, sizeof(out), "%s/usage", tmpdir);
	const char *stray[] = { "run", "--strategy", "etcd-lock@3.4.23", "--etcd", plain,
				"--tls-ca", ca, "--out", out, NULL };
	cr_assert_eq(lb(stray), 2, "%s", output());
	cr_assert(strstr(output(), "https:// URLs of --etcd"), "%s", output());
	char mixed[160];
	snprintf(mixed, sizeof(mixed), "%s,http://127.0.0.1:1", url);
	const char *mix[] = { "run", "--strategy", "etcd-lock@3.4.23", "--etcd", mixed, "--out", out,
			      NULL };
	cr_assert_eq(lb(mix), 2, "%s", output());
	cr_assert(strstr(output(), "http:// and https:// members mixed"), "%s", output());
}
