/*
 * test_tunnel.c - rediss:// (harness/servers/tunnel.c): a redis-server this test
 * starts with only a tls-port, its certificate signed by a CA the test makes
 * with openssl; the C recipes reach it through the TLS tunnel lockbench starts
 * and stops itself (stunnel4), and what it refuses is said with its cause;
 * the libraries connect to it themselves, with their own TLS options (the
 * config line's tls_ca=, tls_cert=, tls_key=, tls_insecure=1).
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

FX_SUITE(tunnel, 180);

static char tmpdir[64];
static pid_t server;
static int port;

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* A CA, the server's certificate for 127.0.0.1 signed by it, and another CA
 * that signed nothing here. */
static void make_certificates(void)
{
	sh("cd %s && for ca in ca other; do openssl req -x509 -newkey rsa:2048 -nodes "
	   "-keyout $ca.key -out $ca.crt -days 2 -subj \"/CN=lockbench test $ca\" 2>/dev/null; done"
	   " && openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr "
	   "-subj /CN=127.0.0.1 2>/dev/null && printf 'subjectAltName=IP:127.0.0.1\\n' > ext && "
	   "openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt "
	   "-days 2 -extfile ext 2>/dev/null", tmpdir);
}

/* redis-server with a tls-port alone (no plain port), a key of the user's. */
static void start_tls_server(void)
{
	char p[16], cert[128], key[128], ca[128];

	for (int tries = 0; tries < 5; tries++) {
		port = lb_free_port();
		snprintf(p, sizeof(p), "%d", port);
		snprintf(cert, sizeof(cert), "%s/srv.crt", tmpdir);
		snprintf(key, sizeof(key), "%s/srv.key", tmpdir);
		snprintf(ca, sizeof(ca), "%s/ca.crt", tmpdir);
		server = fork();
		cr_assert_geq(server, 0);
		if (server == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			execlp("redis-server", "redis-server", "--port", "0", "--tls-port", p,
			       "--tls-cert-file", cert, "--tls-key-file", key, "--tls-ca-cert-file", ca,
			       "--tls-auth-clients", "no", "--save", "", "--dir", tmpdir, "--logfile",
			       "redis.log", (char *)NULL);
			_exit(127);
		}
		for (int t = 0; t < 100; t++) {
			char cmd[512];
			snprintf(cmd, sizeof(cmd), "redis-cli --tls --cacert %s -p %d SET app:config keep "
				 ">/dev/null 2>&1", ca, port);
			if (system(cmd) == 0)
				return;
			if (waitpid(server, NULL, WNOHANG) == server)
				break;
			usleep(50000);
		}
		kill(server, SIGKILL);
		waitpid(server, NULL, 0);
	}
	cr_assert_fail("redis-server with a tls-port did not start (%s/redis.log)", tmpdir);
}

static void setup(void)
{
	strcpy(tmpdir, "/tmp/lbtest-tls-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
	make_certificates();
	start_tls_server();
}

static void teardown(void)
{
	if (server > 0) {
		kill(server, SIGKILL);
		waitpid(server, NULL, 0);
		server = 0;
	}
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

/* The server's keys, asked with redis-cli over TLS (not through lockbench). */
static const char *keys(void)
{
	static char out[512];
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "redis-cli --tls --cacert %s/ca.crt -p %d --scan | sort | "
		 "tr '\\n' ' '", tmpdir, port);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	pclose(p);
	out[n] = '\0';
	return out;
}

Test(tunnel, a_rediss_server_is_reached_through_a_tunnel_and_its_refusals_said, .init = setup,
     .fini = teardown)
{
	char url[64], ca[128], other[128], dir[160];

	snprintf(url, sizeof(url), "rediss://127.0.0.1:%d", port);
	snprintf(ca, sizeof(ca), "%s/ca.crt", tmpdir);
	snprintf(other, sizeof(other), "%s/other.crt", tmpdir);
	snprintf(dir, sizeof(dir), "%s/ok", tmpdir);
	const char *ok[] = { "run", "--strategy", "token-lua", "--redis", url, "--tls-ca", ca,
			     "--clients", "3", "--duration", "1", "--out", dir, "--no-report", NULL };
	cr_assert_eq(lb(ok), 0, "%s", output());
	cr_assert(strstr(output(), "outcome      safe"), "%s", output());
	cr_assert_str_eq(keys(), "app:config ", "only the user's key is left");
	cr_assert(strstr(fx_slurp(dir, "tunnel-0.log"), "Certificate accepted"));
	/* a CA that did not sign it, the system's CAs, plain redis:// to a TLS port */
	struct {
		const char *scheme, *ca;
		const char *said;
	} no[] = {
		{ "rediss", other, "certificate verify failed (is --tls-ca the CA that signed" },
		{ "rediss", NULL, "certificate verify failed" },
		{ "redis", NULL, "closed the connection (one that wants TLS does: rediss://)" },
	};
	for (size_t k = 0; k < sizeof(no) / sizeof(no[0]); k++) {
		char u[64];
		snprintf(u, sizeof(u), "%s://127.0.0.1:%d", no[k].scheme, port);
		snprintf(dir, sizeof(dir), "%s/no%zu", tmpdir, k);
		const char *a[] = { "run", "--strategy", "token-lua", "--redis", u, "--duration", "1",
				    "--out", dir, "--no-report", no[k].ca ? "--tls-ca" : NULL,
				    no[k].ca, NULL };
		cr_assert_eq(lb(a), 3, "%s: %s", u, output());
		cr_assert(strstr(output(), no[k].said), "%s: %s", u, output());
	}
	/* only when asked: no check of the certificate */
	snprintf(dir, sizeof(dir), "%s/insecure", tmpdir);
	const char *insecure[] = { "run", "--strategy", "set-nx-px", "--redis", url, "--tls-insecure",
				   "--duration", "1", "--out", dir, "--no-report", NULL };
	cr_assert_eq(lb(insecure), 0, "%s", output());
	/* usage: TLS options without rediss://, a library (its adapter reads no TLS options) */
	snprintf(dir, sizeof(dir), "%s/usage", tmpdir);
	char plain[64];
	snprintf(plain, sizeof(plain), "redis://127.0.0.1:%d", port);
	const char *stray[] = { "run", "--strategy", "set-nx-px", "--redis", plain, "--tls-ca", ca,
				"--out", dir, NULL };
	cr_assert_eq(lb(stray), 2, "%s", output());
	/* a library whose TLS settings have no CA file (tooz: the system's CAs) */
	const char *lib[] = { "run", "--strategy", "tooz@3.1.0", "--redis", url, "--tls-ca", ca,
			      "--out", dir, NULL };
	cr_assert_eq(lb(lib), 2, "%s", output());
	cr_assert(strstr(output(), "tooz@3.1.0 takes no --tls-ca"), "%s", output());
	const char *nofile[] = { "run", "--strategy", "set-nx-px", "--redis", url, "--tls-ca",
				 "/nonexistent/ca.crt", "--out", dir, NULL };
	cr_assert_eq(lb(nofile), 2, "%s", output());
}

Test(tunnel, a_kill_9_leaves_no_tunnel, .init = setup, .fini = teardown)
{
	char url[64], ca[128], out[160], res[160], pattern[64];
	pid_t pids[32];

	snprintf(url, sizeof(url), "rediss://127.0.0.1:%d", port);
	snprintf(ca, sizeof(ca), "%s/ca.crt", tmpdir);
	snprintf(out, sizeof(out), "%s/output", tmpdir);
	snprintf(res, sizeof(res), "%s/run", tmpdir);
	fx_become_subreaper();
	const char *args[] = { "run", "--strategy", "set-nx-px", "--redis", url, "--tls-ca", ca,
			       "--clients", "2", "--duration", "30", "--out", res, "--no-status",
			       "--no-report", NULL };
	pid_t pid = fx_spawn_lockbench(args, out, out);
	/* lockbench, its janitor, the tunnel, the resource... and 2 clients */
	int n = fx_wait_descendants(pid, pids, 32, 4, 20000);
	cr_assert_geq(n, 4, "only %d processes: %s", n, output());
	lb_sleep_ns(1000 * LB_NS_PER_MS);
	n = fx_descendants(pid, pids, 32);
	char what[512];
	cr_assert_geq(fx_left("^stunnel4 ", what, sizeof(what)), 1, "no tunnel ran");
	fx_kill9_leaves_nothing(pid, pids, n);
	snprintf(pattern, sizeof(pattern), "lockbench-tunnel-%d-", (int)pid);
	int left = 0;
	for (int t = 0; t < 40 && (left = fx_count_tmp_entries(pattern)) > 0; t++)
		lb_sleep_ns(50 * LB_NS_PER_MS);
	cr_assert_eq(left, 0, "%d tunnel directories left after the kill", left);
	cr_assert_eq(fx_left("^stunnel4 ", what, sizeof(what)), 0, "left: %s", what);
}

/* The libraries on rediss://: each connects to the TLS-only server itself
 * (it has no plain port, and the tunnel speaks plain Redis), with its own
 * client's TLS options, the test's CA from the config line. */
Test(tunnel, libraries_connect_with_their_own_tls_options, .init = setup, .fini = teardown)
{
	char url[64], ca[128], other[128], dir[160];
	/* redis-py: Debian's and PyPI's; redlock-universal: ioredis's tls */
	const char *libs[] = { "redis-py@4.3.4", "redis-py@8.2.0", "redlock-universal@0.8.5" };

	snprintf(url, sizeof(url), "rediss://127.0.0.1:%d", port);
	snprintf(ca, sizeof(ca), "%s/ca.crt", tmpdir);
	snprintf(other, sizeof(other), "%s/other.crt", tmpdir);
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/lib%zu", tmpdir, i);
		const char *a[] = { "run", "--strategy", libs[i], "--redis", url, "--tls-ca", ca,
				    "--clients", "3", "--duration", "1", "--out", dir, "--no-report",
				    NULL };
		cr_assert_eq(lb(a), 0, "%s: %s", libs[i], output());
		cr_assert(strstr(output(), "outcome      safe"), "%s: %s", libs[i], output());
		cr_assert(atoi(fx_summary(dir, "sections")) > 0, "%s: no section", libs[i]);
		cr_assert_str_eq(keys(), "app:config ", "%s: only the user's key is left", libs[i]);
	}
	/* a wrong CA: the run cannot happen here (exit 3), said */
	snprintf(dir, sizeof(dir), "%s/wrong", tmpdir);
	const char *wrong[] = { "run", "--strategy", "redis-py@8.2.0", "--redis", url, "--tls-ca",
				other, "--duration", "1", "--out", dir, "--no-report", NULL };
	cr_assert_eq(lb(wrong), 3, "%s", output());
	cr_assert(strstr(output(), "certificate verify failed"), "%s", output());
	/* --tls-insecure, only when asked: no check of the certificate */
	snprintf(dir, sizeof(dir), "%s/insecure", tmpdir);
	const char *insecure[] = { "run", "--strategy", "redis-py@4.3.4", "--redis", url,
				   "--tls-insecure", "--duration", "1", "--out", dir, "--no-report",
				   NULL };
	cr_assert_eq(lb(insecure), 0, "%s", output());
	cr_assert_str_eq(keys(), "app:config ", "only the user's key is left");
}

/* What an adapter answers to @requests on its standard input, its TLS words
 * naming @cafile, its lines joined by spaces (stderr dropped). */
static const char *adapter_says(const char *program, const char *cafile)
{
	static char out[2048];
	char cmd[1024];
	const char *adapters = getenv("LOCKBENCH_ADAPTERS");

	cr_assert_not_null(adapters, "LOCKBENCH_ADAPTERS: run through tests/run.sh");
	snprintf(cmd, sizeof(cmd), "cd %s && printf 'hello 3\\nconfig nodes=rediss://127.0.0.1:%d "
		 "tls_ca=%s/%s key=lbtls:lock:0 ttl_ms=5000 wait=one timeout_ms=2000 client=0\\n"
		 "acquire\\nrelease\\nquit\\n' | timeout 30 %s 2>/dev/null | tr '\\n' ' '",
		 adapters, port, tmpdir, cafile, program);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	pclose(p);
	out[n] = '\0';
	return out;
}

/* Each adapter's TLS at the protocol, where a run cannot show it: Symfony
 * Lock (its manifest's outside_key keeps it off a server of the user's), and
 * a wrong CA, which lockbench's tunnel refuses before any library connects;
 * here each library refuses it itself, in its own words. */
Test(tunnel, each_adapter_speaks_tls_and_says_its_own_tls_error, .init = setup, .fini = teardown)
{
	const struct {
		const char *program, *refused;
	} a[] = {
		{ "/usr/bin/python3 redis_py_lock.py", "CERTIFICATE_VERIFY_FAILED" },
		{ "python/venv/bin/python3 redis_py_lock.py", "CERTIFICATE_VERIFY_FAILED" },
		{ "python/venv/bin/python3 python_redis_lock.py", "CERTIFICATE_VERIFY_FAILED" },
		{ "/usr/bin/node node/adapter.js redis-lock", "error" },
		{ "/usr/bin/node node/adapter.js node-redis-warlock", "error" },
		{ "/usr/bin/node node/adapter.js redlock-universal-lock", "error" },
		{ "/usr/bin/php symfony_lock.php redis", "certificate verify failed" },
	};

	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++) {
		const char *said = adapter_says(a[i].program, "ca.crt");
		cr_assert(strstr(said, " acquired token=") && strstr(said, " released "),
			  "%s: %s", a[i].program, said);
		said = adapter_says(a[i].program, "other.crt");
		cr_assert(!strstr(said, "acquired") && strstr(said, a[i].refused), "%s: %s",
			  a[i].program, said);
	}
	cr_assert_str_eq(keys(), "app:config ", "only the user's key is left");
}

/* A Redis Cluster of three primaries serving only TLS (tls-port, no plain
 * port; tls-cluster and tls-replication: the bus and replication too), made
 * by redis-cli --tls --cluster create, as a user would. */
static pid_t cnode[3];
static int cport[3];

static void start_tls_cluster(void)
{
	char p[16], bus[16], cert[128], key[128], ca[128], dir[128], hosts[128] = "";

	strcpy(tmpdir, "/tmp/lbtest-tlsc-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
	make_certificates();
	snprintf(cert, sizeof(cert), "%s/srv.crt", tmpdir);
	snprintf(key, sizeof(key), "%s/srv.key", tmpdir);
	snprintf(ca, sizeof(ca), "%s/ca.crt", tmpdir);
	for (int i = 0; i < 3; i++) {
		do { /* a free port whose bus port (+10000) fits */
			cport[i] = lb_free_port();
		} while (cport[i] > 55000 || (i && cport[i] == cport[i - 1]));
		snprintf(p, sizeof(p), "%d", cport[i]);
		snprintf(bus, sizeof(bus), "%d", cport[i] + 10000);
		snprintf(dir, sizeof(dir), "%s/n%d", tmpdir, i);
		sh("mkdir -p %s", dir);
		snprintf(hosts + strlen(hosts), sizeof(hosts) - strlen(hosts), " 127.0.0.1:%d", cport[i]);
		cnode[i] = fork();
		cr_assert_geq(cnode[i], 0);
		if (cnode[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			execlp("redis-server", "redis-server", "--port", "0", "--tls-port", p,
			       "--tls-cert-file", cert, "--tls-key-file", key, "--tls-ca-cert-file", ca,
			       "--tls-auth-clients", "no", "--tls-cluster", "yes", "--tls-replication",
			       "yes", "--cluster-enabled", "yes", "--cluster-port", bus,
			       "--cluster-config-file", "nodes.conf", "--save", "", "--appendonly", "no",
			       "--dir", dir, "--logfile", "redis.log", (char *)NULL);
			_exit(127);
		}
	}
	for (int t = 0; t < 100; t++) {
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "redis-cli --tls --cacert %s -p %d PING >/dev/null 2>&1", ca,
			 cport[2]);
		if (system(cmd) == 0)
			break;
		usleep(50000);
	}
	sh("redis-cli --tls --cacert %s --cluster create%s --cluster-yes >%s/create.log 2>&1", ca,
	   hosts, tmpdir);
	for (int t = 0; t < 200; t++) {
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "for p in %d %d %d; do redis-cli --tls --cacert %s -p $p "
			 "CLUSTER INFO | grep -q cluster_state:ok || exit 1; done", cport[0], cport[1],
			 cport[2], ca);
		if (system(cmd) == 0) {
			sh("redis-cli --tls --cacert %s -c -p %d SET app:config keep >/dev/null", ca,
			   cport[0]);
			return;
		}
		usleep(100000);
	}
	cr_assert_fail("the TLS cluster was not whole in 20 s (%s)", tmpdir);
}

static void stop_tls_cluster(void)
{
	for (int i = 0; i < 3; i++)
		if (cnode[i] > 0) {
			kill(cnode[i], SIGKILL);
			waitpid(cnode[i], NULL, 0);
			cnode[i] = 0;
		}
}

Test(tunnel, your_cluster_over_tls_through_a_tunnel_to_each_node, .init = start_tls_cluster,
     .fini = stop_tls_cluster)
{
	char seed[64], ca[128], other[128], dir[160], plain[64];

	snprintf(seed, sizeof(seed), "rediss://127.0.0.1:%d", cport[1]);
	snprintf(ca, sizeof(ca), "%s/ca.crt", tmpdir);
	snprintf(other, sizeof(other), "%s/other.crt", tmpdir);
	snprintf(dir, sizeof(dir), "%s/ok", tmpdir);
	const char *ok[] = { "run", "--strategy", "token-lua", "--cluster", seed, "--tls-ca", ca,
			     "--clients", "3", "--duration", "2", "--out", dir, "--no-report", NULL };
	cr_assert_eq(lb(ok), 0, "%s", output());
	cr_assert(strstr(output(), "outcome      safe"), "%s", output());
	for (int i = 0; i < 3; i++) { /* a tunnel to the seed and to every node it named */
		char log[32];
		snprintf(log, sizeof(log), "tunnel-route-%d.log", i);
		cr_assert(strstr(fx_slurp(dir, log), "Certificate accepted"), "%s", log);
	}
	/* only the user's key is left, on whichever node holds it */
	char cmd[512], keys[256] = "";
	snprintf(cmd, sizeof(cmd), "for p in %d %d %d; do redis-cli --tls --cacert %s -p $p --scan;"
		 " done | sort | tr '\\n' ' '", cport[0], cport[1], cport[2], ca);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(keys, 1, sizeof(keys) - 1, p);
	pclose(p);
	keys[n] = '\0';
	cr_assert_str_eq(keys, "app:config ");
	/* refused, with the cause: a CA that did not sign them (3), plain redis://
	 * to TLS ports (3), rediss:// and redis:// seeds mixed (2), a library (2) */
	snprintf(dir, sizeof(dir), "%s/no", tmpdir);
	const char *wrong[] = { "run", "--strategy", "token-lua", "--cluster", seed, "--tls-ca", other,
				"--duration", "1", "--out", dir, "--no-report", NULL };
	cr_assert_eq(lb(wrong), 3, "%s", output());
	cr_assert(strstr(output(), "(is --tls-ca the CA that signed"), "%s", output());
	snprintf(plain, sizeof(plain), "redis://127.0.0.1:%d", cport[1]);
	const char *clear[] = { "run", "--strategy", "token-lua", "--cluster", plain, "--duration",
				"1", "--out", dir, "--no-report", NULL };
	cr_assert_eq(lb(clear), 3, "%s", output());
	cr_assert(strstr(output(), "one that wants TLS does: rediss://"), "%s", output());
	char mixed[160];
	snprintf(mixed, sizeof(mixed), "%s,%s", seed, plain);
	const char *mix[] = { "run", "--strategy", "token-lua", "--cluster", mixed, "--out", dir, NULL };
	cr_assert_eq(lb(mix), 2, "%s", output());
	cr_assert(strstr(output(), "rediss:// and redis:// mixed"), "%s", output());
	const char *lib[] = { "run", "--strategy", "redis-py@8.2.0", "--cluster", seed, "--tls-ca", ca,
			      "--out", dir, NULL };
	cr_assert_eq(lb(lib), 2, "%s", output());
}

/* A tunnel that cannot start (a CA file that holds no certificate) says
 * stunnel's own last errors, never the path of its log, which is gone once
 * lockbench stops (review: "stunnel's log: /tmp/lockbench-tunnel-.../"). */
Test(tunnel, a_tunnel_that_cannot_start_quotes_its_log, .init = setup, .fini = teardown)
{
	char url[64], dir[160];
	snprintf(url, sizeof(url), "rediss://127.0.0.1:%d", port);
	snprintf(dir, sizeof(dir), "%s/nocert", tmpdir);
	const char *args[] = { "run", "--strategy", "token-lua", "--redis", url, "--tls-ca",
			       "/etc/hostname", "--duration", "0.3", "--out", dir, "--no-status",
			       NULL };
	cr_assert_eq(lb(args), 3, "%s", output());
	cr_assert(strstr(output(), "stunnel's log ended: '[!] "), "%s", output());
	cr_assert_null(strstr(output(), "lockbench-tunnel-"), "%s", output());
}

/* A Sentinel deployment serving only TLS, as a user sets one up: a primary
 * and a replica (tls-port, no plain port, tls-replication yes: the replica
 * replicates over TLS and announces its tls-port), three Sentinels
 * monitoring them over TLS (tls-port, tls-replication yes) as "mymaster",
 * and a fourth without tls-replication, monitoring the same primary as
 * "blind": it cannot reach it, so it names no replica. */
enum { T_PRIMARY, T_REPLICA, T_SENTINEL, T_BLIND = T_SENTINEL + 3, T_N };
static pid_t tpid[T_N];
static int tport[T_N];

/* redis-server [@conf] with a tls-port alone and @extra: its port once it
 * answers PING over TLS; a few tries (a free port is only free when asked). */
static void start_tls_node(int i, const char *conf, const char *const *extra)
{
	char p[16], cert[128], key[128], ca[128], log[32];

	snprintf(cert, sizeof(cert), "%s/srv.crt", tmpdir);
	snprintf(key, sizeof(key), "%s/srv.key", tmpdir);
	snprintf(ca, sizeof(ca), "%s/ca.crt", tmpdir);
	snprintf(log, sizeof(log), "node-%d.log", i);
	for (int tries = 0; tries < 5; tries++) {
		tport[i] = lb_free_port();
		snprintf(p, sizeof(p), "%d", tport[i]);
		tpid[i] = fork();
		cr_assert_geq(tpid[i], 0);
		if (tpid[i] == 0) {
			const char *tls[] = { "--port", "0", "--tls-port", p, "--tls-cert-file", cert,
					      "--tls-key-file", key, "--tls-ca-cert-file", ca,
					      "--tls-auth-clients", "no", "--dir", tmpdir, "--logfile",
					      log, NULL };
			const char *argv[40] = { "redis-server" };
			int k = 1;
			if (conf)
				argv[k++] = conf;
			for (int j = 0; extra[j] && k < 20; j++)
				argv[k++] = extra[j];
			for (int j = 0; tls[j]; j++)
				argv[k++] = tls[j];
			argv[k] = NULL;
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			execvp("redis-server", (char **)argv);
			_exit(127);
		}
		for (int t = 0; t < 100; t++) {
			char cmd[512];
			snprintf(cmd, sizeof(cmd), "redis-cli --tls --cacert %s -p %d PING >/dev/null "
				 "2>&1", ca, tport[i]);
			if (system(cmd) == 0)
				return;
			if (waitpid(tpid[i], NULL, WNOHANG) == tpid[i])
				break;
			usleep(50000);
		}
		kill(tpid[i], SIGKILL);
		waitpid(tpid[i], NULL, 0);
	}
	cr_assert_fail("a TLS redis-server did not start (%s/%s)", tmpdir, log);
}

static void start_tls_sentinels(void)
{
	static const char *const primary[] = { "--tls-replication", "yes", "--save", "", NULL };
	char of[16], conf[128];

	strcpy(tmpdir, "/tmp/lbtest-tlss-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
	make_certificates();
	start_tls_node(T_PRIMARY, NULL, primary);
	snprintf(of, sizeof(of), "%d", tport[T_PRIMARY]);
	const char *replica[] = { "--tls-replication", "yes", "--save", "", "--replicaof",
				  "127.0.0.1", of, NULL };
	start_tls_node(T_REPLICA, NULL, replica);
	for (int i = T_SENTINEL; i <= T_BLIND; i++) {
		static const char *const over_tls[] = { "--sentinel", "--tls-replication", "yes", NULL };
		static const char *const plain[] = { "--sentinel", NULL };
		snprintf(conf, sizeof(conf), "%s/sentinel-%d.conf", tmpdir, i);
		FILE *f = fopen(conf, "w");
		cr_assert_not_null(f);
		fprintf(f, "sentinel monitor %s 127.0.0.1 %d %d\n"
			   "sentinel down-after-milliseconds %s %d\n"
			   "sentinel failover-timeout %s 5000\n", i == T_BLIND ? "blind" : "mymaster",
			tport[T_PRIMARY], i == T_BLIND ? 1 : 2, i == T_BLIND ? "blind" : "mymaster",
			i == T_BLIND ? 60000 : 1000, i == T_BLIND ? "blind" : "mymaster");
		fclose(f);
		start_tls_node(i, conf, i == T_BLIND ? plain : over_tls);
	}
	sh("redis-cli --tls --cacert %s/ca.crt -p %d SET app:config keep >/dev/null", tmpdir,
	   tport[T_PRIMARY]);
	/* up to 30 s: the Sentinels find each other by hello messages, and the
	 * replica has the user's key (its first sync waits repl-diskless-sync-delay) */
	for (int t = 0; t < 300; t++) {
		char cmd[1024];
		snprintf(cmd, sizeof(cmd), "for p in %d %d %d; do for w in 'REPLICAS 1' 'SENTINELS 2'; "
			 "do set -- $w; test \"$(redis-cli --tls --cacert %s/ca.crt -p $p SENTINEL $1 "
			 "mymaster | grep -c '^name$')\" = $2 || exit 1; done; done; test \"$(redis-cli "
			 "--tls --cacert %s/ca.crt -p %d GET app:config)\" = keep", tport[T_SENTINEL],
			 tport[T_SENTINEL + 1], tport[T_SENTINEL + 2], tmpdir, tmpdir, tport[T_REPLICA]);
		if (system(cmd) == 0)
			return;
		usleep(100000);
	}
	cr_assert_fail("the TLS Sentinels did not see each other and the replica, or it had not "
		       "synced, within 30 s (%s)",
		       tmpdir);
}

static void stop_tls_sentinels(void)
{
	for (int i = 0; i < T_N; i++)
		if (tpid[i] > 0) {
			kill(tpid[i], SIGKILL);
			waitpid(tpid[i], NULL, 0);
			tpid[i] = 0;
		}
}

/* The primary killed under a held lock (the sentinel-failover scenario, the
 * user's hook killing it): the Sentinels promote the replica, and the
 * clients follow it through the tunnel lockbench started in front of it
 * (SENTINEL REPLICAS, as the run started). Sentinels that cannot reach the
 * primary over TLS name no replica, and a replica that is down has no
 * tunnel: both said. */
Test(tunnel, your_sentinels_over_tls_and_a_failover_through_the_replicas_tunnel,
     .init = start_tls_sentinels, .fini = stop_tls_sentinels)
{
	char sentinels[256], blind[64], ca[128], dir[160], hook[64], want[64];

	snprintf(sentinels, sizeof(sentinels), "rediss://127.0.0.1:%d,rediss://127.0.0.1:%d,"
		 "rediss://127.0.0.1:%d", tport[T_SENTINEL], tport[T_SENTINEL + 1],
		 tport[T_SENTINEL + 2]);
	snprintf(blind, sizeof(blind), "rediss://127.0.0.1:%d", tport[T_BLIND]);
	snprintf(ca, sizeof(ca), "%s/ca.crt", tmpdir);
	/* --dry-run says what is asked of the Sentinels, and of which servers */
	snprintf(dir, sizeof(dir), "%s/dry", tmpdir);
	const char *dry[] = { "run", "--strategy", "token-lua", "--sentinel", sentinels,
			      "--sentinel-master", "mymaster", "--tls-ca", ca, "--dry-run", "--out",
			      dir, NULL };
	cr_assert_eq(lb(dry), 0, "%s", output());
	cr_assert(strstr(output(), "(SENTINEL get-master-addr-by-name, REPLICAS and MASTER to each: "
			 "the primary and its replicas, but one they hold down)"), "%s", output());
	/* a Sentinel without tls-replication: the primary only, said why */
	snprintf(dir, sizeof(dir), "%s/blind", tmpdir);
	const char *b[] = { "run", "--strategy", "token-lua", "--sentinel", blind, "--sentinel-master",
			    "blind", "--tls-ca", ca, "--clients", "2", "--duration", "1", "--out", dir,
			    "--no-status", "--no-report", NULL };
	cr_assert_eq(lb(b), 0, "%s", output());
	cr_assert(strstr(output(), "no Sentinel names a replica of 'blind' (SENTINEL REPLICAS; "
			 "they see the primary as '"), "%s", output());
	cr_assert(strstr(output(), "master,disconnected'"), "%s", output());
	cr_assert(strstr(output(), "tls-replication yes"), "%s", output());

	/* redis-py's own Sentinel client over TLS (ssl=True, its TLS arguments
	 * in sentinel_kwargs and master_for; its first lock came 0.94 s after
	 * the start once, under load: 3 s); a library whose manifest's tls =
	 * has no sentinel is refused (2) */
	const char *libs[] = { "redis-py@4.3.4", "redis-py@8.2.0" };
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/lib%zu", tmpdir, i);
		const char *a[] = { "run", "--strategy", libs[i], "--sentinel", sentinels,
				    "--sentinel-master", "mymaster", "--tls-ca", ca, "--clients", "3",
				    "--duration", "3", "--out", dir, "--no-status", "--no-report", NULL };
		cr_assert_eq(lb(a), 0, "%s: %s", libs[i], output());
		cr_assert(strstr(output(), "outcome      safe"), "%s: %s", libs[i], output());
		cr_assert(atoi(fx_summary(dir, "sections")) > 0, "%s: no section", libs[i]);
	}
	snprintf(dir, sizeof(dir), "%s/nolib", tmpdir);
	const char *nolib[] = { "run", "--strategy", "python-redis-lock@4.0.1", "--sentinel",
				sentinels, "--sentinel-master", "mymaster", "--tls-ca", ca, "--out",
				dir, NULL };
	cr_assert_eq(lb(nolib), 2, "%s", output());
	cr_assert(strstr(output(), "its manifest's tls = has no sentinel"), "%s", output());

	snprintf(dir, sizeof(dir), "%s/killed", tmpdir);
	snprintf(hook, sizeof(hook), "node-kill=kill -9 %ld", (long)tpid[T_PRIMARY]);
	const char *k[] = { "run", "--strategy", "token-lua", "--scenario", "sentinel-failover",
			    "--sentinel", sentinels, "--sentinel-master", "mymaster", "--tls-ca", ca,
			    "--allow-faults", "--hook", hook, "--out", dir, "--no-status",
			    "--no-report", NULL };
	cr_assert_eq(lb(k), 0, "%s", output());
	cr_assert_null(strstr(output(), "warning"), "%s", output());
	cr_assert(fx_pid_gone(tpid[T_PRIMARY]), "the hook killed the primary");
	snprintf(want, sizeof(want), "switch-master,,0,%d\n", 1000000 + tport[T_REPLICA]);
	cr_assert(strstr(fx_slurp(dir, "events.csv"), want), "%s", fx_slurp(dir, "events.csv"));
	for (int i = T_PRIMARY; i <= T_REPLICA; i++) { /* both granted sections, over TLS */
		snprintf(want, sizeof(want), "\n127.0.0.1,%d,", tport[i]);
		cr_assert(strstr(fx_slurp(dir, "servers.csv"), want), "%s: %s", want,
			  fx_slurp(dir, "servers.csv"));
	}
	/* the Sentinels' tunnels, the primary's, then the replica's */
	cr_assert(strstr(fx_slurp(dir, "tunnel-route-4.log"), "Certificate accepted"));
	char cmd[256], keys[128] = "";
	snprintf(cmd, sizeof(cmd), "redis-cli --tls --cacert %s -p %d --scan | tr '\\n' ' '", ca,
		 tport[T_REPLICA]);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(keys, 1, sizeof(keys) - 1, p);
	pclose(p);
	keys[n] = '\0';
	cr_assert_str_eq(keys, "app:config ", "only the user's key is left on the new primary: %s", keys);

	/* again: the old primary, dead, is a replica the Sentinels hold down */
	snprintf(dir, sizeof(dir), "%s/after", tmpdir);
	const char *again[] = { "run", "--strategy", "token-lua", "--sentinel", sentinels,
				"--sentinel-master", "mymaster", "--tls-ca", ca, "--clients", "2",
				"--duration", "1", "--out", dir, "--no-status", "--no-report", NULL };
	cr_assert_eq(lb(again), 0, "%s", output());
	cr_assert(strstr(output(), "every replica of 'mymaster' the Sentinels name is down"), "%s",
		  output());
}
