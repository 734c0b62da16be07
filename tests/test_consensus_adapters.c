/*
 * test_consensus_adapters.c - the consensus lock adapters (etcd_lock.py for
 * etcd's Lock API, kazoo_lock.py for kazoo's Lock recipe) driven over the
 * adapter protocol (docs/adapters.md) against a real 3-member etcd cluster
 * and a real 3-server ZooKeeper ensemble, started by the test on free
 * loopback ports in its own temporary directory: hello, config, one holder
 * and a busy second client, fencing tokens that grow from one holder to the
 * next, a library wait that quit ends at once (and whose place in the queue
 * goes with it), quit, and nothing left running.
 *
 * The ensembles are started here for now; harness/consensus.c is to start
 * them for lockbench, and this test is to use it then.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "plumbing.h"

FX_SUITE(consensus_adapters, 120);

static char tmpdir[64], adapters[PATH_MAX];

static void setup(void)
{
	char buf[PATH_MAX];
	const char *sc = getenv("LOCKBENCH_SCENARIOS");
	cr_assert_not_null(sc, "run through make test");
	snprintf(buf, sizeof(buf), "%s", sc);
	snprintf(adapters, sizeof(adapters), "%s/strategies/adapters", dirname(buf));
	strcpy(tmpdir, "/tmp/lbtest-consensus-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
	signal(SIGPIPE, SIG_IGN);
}

/* A port nothing listens on now (the kernel's choice). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* @argv in a process group of its own, killed with this test's worker,
 * stdin from /dev/null, stdout and stderr to @log; with @in and @out (not
 * NULL) its stdin and stdout are pipes instead, their other ends given back. */
static pid_t spawn(const char *const *argv, const char *log, int *in, int *out)
{
	int to[2] = { -1, -1 }, from[2] = { -1, -1 };
	if (in)
		cr_assert(pipe2(to, O_CLOEXEC) == 0 && pipe2(from, O_CLOEXEC) == 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int null = open("/dev/null", O_RDONLY), fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (null < 0 || fd < 0)
			_exit(127);
		dup2(in ? to[0] : null, 0);
		dup2(in ? from[1] : fd, 1);
		dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (in) {
		close(to[0]);
		close(from[1]);
		*in = to[1];
		*out = from[0];
	}
	return pid;
}

/* What 127.0.0.1:@port answers to @req (up to @len bytes), or "" when it
 * does not. */
static void ask_port(int port, const char *req, char *buf, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t n = 0;
	buf[0] = '\0';
	if (fd < 0)
		return;
	struct timeval tv = { .tv_sec = 1 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && write(fd, req, strlen(req)) > 0) {
		ssize_t got;
		while (n + 1 < len && (got = read(fd, buf + n, len - 1 - n)) > 0)
			n += (size_t)got;
	}
	buf[n] = '\0';
	close(fd);
}

struct ensemble {
	pid_t pid[3];
	int port[3];            /* each member's client port */
	char nodes[256];        /* nodes= for config */
};

/* Every member answers @req with @ready in its answer, within 30 s. */
static void wait_ready(const struct ensemble *e, const char *req, const char *ready, const char *what)
{
	char buf[2048];
	for (int i = 0; i < 3; i++) {
		int t = 0;
		for (ask_port(e->port[i], req, buf, sizeof(buf)); !strstr(buf, ready) && t < 300; t++) {
			cr_assert_not(fx_pid_gone(e->pid[i]), "%s member %d exited (log in %s)", what, i, tmpdir);
			lb_sleep_ns(100 * LB_NS_PER_MS);
			ask_port(e->port[i], req, buf, sizeof(buf));
		}
		cr_assert(strstr(buf, ready), "%s member %d not ready in 30 s: '%s'", what, i, buf);
	}
}

static void start_etcd(struct ensemble *e)
{
	int peer[3];
	char cluster[256] = "", arg[10][200], log[PATH_MAX];
	for (int i = 0; i < 3; i++) {
		e->port[i] = free_port();
		peer[i] = free_port();
		snprintf(cluster + strlen(cluster), sizeof(cluster) - strlen(cluster),
			 "%sm%d=http://127.0.0.1:%d", i ? "," : "", i, peer[i]);
	}
	for (int i = 0; i < 3; i++) {
		snprintf(arg[0], 200, "m%d", i);
		snprintf(arg[1], 200, "%s/etcd-m%d", tmpdir, i);
		snprintf(arg[2], 200, "http://127.0.0.1:%d", e->port[i]);
		snprintf(arg[3], 200, "http://127.0.0.1:%d", peer[i]);
		snprintf(log, sizeof(log), "%s/etcd-m%d.log", tmpdir, i);
		/* runs: etcd (etcd-server) */
		const char *argv[] = { "/usr/bin/etcd", "--name", arg[0], "--data-dir", arg[1],
				       "--listen-client-urls", arg[2], "--advertise-client-urls", arg[2],
				       "--listen-peer-urls", arg[3], "--initial-advertise-peer-urls", arg[3],
				       "--initial-cluster", cluster, "--initial-cluster-state", "new",
				       "--initial-cluster-token", tmpdir + 5, NULL };
		e->pid[i] = spawn(argv, log, NULL, NULL);
	}
	snprintf(e->nodes, sizeof(e->nodes), "http://127.0.0.1:%d,http://127.0.0.1:%d,http://127.0.0.1:%d",
		 e->port[0], e->port[1], e->port[2]);
	wait_ready(e, "GET /health HTTP/1.0\r\n\r\n", "\"health\":\"true\"", "etcd");
}

static void start_zookeeper(struct ensemble *e)
{
	int quorum[3], election[3];
	char path[PATH_MAX], log[PATH_MAX];
	for (int i = 0; i < 3; i++) {
		e->port[i] = free_port();
		quorum[i] = free_port();
		election[i] = free_port();
	}
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/zk%d", tmpdir, i);
		cr_assert_eq(mkdir(path, 0700), 0);
		snprintf(path, sizeof(path), "%s/zk%d/myid", tmpdir, i);
		FILE *f = fopen(path, "w");
		cr_assert_not_null(f);
		fprintf(f, "%d\n", i + 1);
		fclose(f);
		snprintf(path, sizeof(path), "%s/zk%d/zoo.cfg", tmpdir, i);
		cr_assert_not_null(f = fopen(path, "w"));
		fprintf(f, "tickTime=500\ninitLimit=10\nsyncLimit=5\ndataDir=%s/zk%d\nclientPort=%d\n"
			"clientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=srvr\n",
			tmpdir, i, e->port[i]);
		for (int j = 0; j < 3; j++)
			fprintf(f, "server.%d=127.0.0.1:%d:%d\n", j + 1, quorum[j], election[j]);
		fclose(f);
		snprintf(log, sizeof(log), "%s/zk%d.log", tmpdir, i);
		/* runs: java (openjdk-17-jre-headless), with the zookeeper package's jar */
		const char *argv[] = { "/usr/bin/java", "-Xmx128m", "-cp", "/usr/share/java/zookeeper.jar",
				       "org.apache.zookeeper.server.quorum.QuorumPeerMain", path, NULL };
		e->pid[i] = spawn(argv, log, NULL, NULL);
	}
	snprintf(e->nodes, sizeof(e->nodes), "zk://127.0.0.1:%d,zk://127.0.0.1:%d,zk://127.0.0.1:%d",
		 e->port[0], e->port[1], e->port[2]);
	wait_ready(e, "srvr", "Mode: ", "ZooKeeper");
}

/* kill -9 every member, and check that each is gone and its port closed. */
static void stop_ensemble(struct ensemble *e)
{
	for (int i = 0; i < 3; i++) {
		kill(-e->pid[i], SIGKILL);
		cr_assert_eq(waitpid(e->pid[i], NULL, 0), e->pid[i]);
	}
	for (int i = 0; i < 3; i++) {
		cr_assert(fx_pid_gone(e->pid[i]), "member %d (pid %d) is still there", i, (int)e->pid[i]);
		cr_assert(fx_port_closed(e->port[i]), "port %d still accepts", e->port[i]);
	}
}

/* ---- one adapter process, spoken to as lockbench does ---- */

struct adapter {
	pid_t pid;
	int in, out;
	char buf[8192];
	size_t len;
	const char *name;
};

static void ad_start(struct adapter *a, const char *prog, bool fence, const char *name)
{
	char path[PATH_MAX + 64], log[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", adapters, prog);
	snprintf(log, sizeof(log), "%s/adapter-%s.log", tmpdir, name);
	/* runs: python3 (python3-minimal) */
	const char *argv[] = { "/usr/bin/python3", path, fence ? "--fence" : NULL, NULL };
	memset(a, 0, sizeof(*a));
	a->name = name;
	a->pid = spawn(argv, log, &a->in, &a->out);
}

/* The next line within @ms ms into @line (false when none came). */
static bool ad_line(struct adapter *a, int ms, char *line, size_t size)
{
	int64_t end = lb_now_ns() + ms * LB_NS_PER_MS;
	for (;;) {
		char *nl = memchr(a->buf, '\n', a->len);
		if (nl) {
			size_t n = (size_t)(nl - a->buf);
			snprintf(line, size, "%.*s", (int)n, a->buf);
			memmove(a->buf, nl + 1, a->len - n - 1);
			a->len -= n + 1;
			return true;
		}
		int left = (int)((end - lb_now_ns()) / LB_NS_PER_MS);
		struct pollfd p = { .fd = a->out, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, left) <= 0)
			return false;
		ssize_t got = read(a->out, a->buf + a->len, sizeof(a->buf) - 1 - a->len);
		if (got <= 0)
			return false;
		a->len += (size_t)got;
	}
}

/* The answer to @req (notices of an extended lease skipped; a lost notice
 * fails the test: nothing here takes a lock away). */
static const char *ad_ask(struct adapter *a, const char *req)
{
	static char line[4200];
	cr_assert_eq(write(a->in, req, strlen(req)), (ssize_t)strlen(req));
	cr_assert_eq(write(a->in, "\n", 1), 1);
	while (ad_line(a, 10000, line, sizeof(line))) {
		cr_assert(strncmp(line, "lost", 4), "%s: an unexpected '%s' after '%s'", a->name, line, req);
		if (strncmp(line, "extended ttl_ms=", 16))
			return line;
	}
	cr_assert_fail("%s: no answer to '%s' within 10 s (its log: %s/adapter-%s.log)", a->name, req,
		       tmpdir, a->name);
	return NULL;
}

/* quit: bye, and the process exits 0 within 5 s. */
static void ad_quit(struct adapter *a)
{
	int status = -1;
	cr_assert_str_eq(ad_ask(a, "quit"), "bye");
	for (int t = 0; t < 500 && waitpid(a->pid, &status, WNOHANG) == 0; t++)
		lb_sleep_ns(10 * LB_NS_PER_MS);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s did not exit 0 after bye", a->name);
	close(a->in);
	close(a->out);
}

static void ad_config(struct adapter *a, const char *library, const struct ensemble *e, const char *key,
		      const char *wait, int client)
{
	char want[64], req[512];
	snprintf(want, sizeof(want), "hello 3 library=%s ", library);
	const char *hello = ad_ask(a, "hello 3");
	cr_assert(!strncmp(hello, want, strlen(want)) && strstr(hello, " lost=yes") &&
		  strstr(hello, " claims=MDFOL"), "%s: %s", a->name, hello);
	snprintf(req, sizeof(req), "config nodes=%s key=%s ttl_ms=3000 wait=%s timeout_ms=1000 client=%d",
		 e->nodes, key, wait, client);
	cr_assert_str_eq(ad_ask(a, req), "ok", "%s: %s", a->name, req);
}

/* acquire: "acquired", with fence=N when @fence (N returned), without when not. */
static long long ad_acquired(struct adapter *a, bool fence)
{
	const char *got = ad_ask(a, "acquire");
	const char *f = strstr(got, " fence=");
	cr_assert(!strncmp(got, "acquired", 8), "%s: acquire answered '%s'", a->name, got);
	cr_assert(fence ? f != NULL : f == NULL, "%s: '%s'", a->name, got);
	return f ? atoll(f + 7) : 0;
}

/* Two clients of one lock: one holds, the other is busy, then holds; each
 * fencing token above the one before. */
static void two_clients(const struct ensemble *e, const char *prog, const char *library, bool fence)
{
	struct adapter a, b;
	char key[64];
	snprintf(key, sizeof(key), "lbtest:%s:%d", fence ? "fenced" : "plain", (int)getpid());
	ad_start(&a, prog, fence, fence ? "fa" : "a");
	ad_start(&b, prog, fence, fence ? "fb" : "b");
	ad_config(&a, library, e, key, "one", 0);
	ad_config(&b, library, e, key, "one", 1);
	long long f1 = ad_acquired(&a, fence);
	cr_assert_str_eq(ad_ask(&b, "acquire"), "busy");
	cr_assert_str_eq(ad_ask(&a, "release"), "released");
	long long f2 = ad_acquired(&b, fence);
	cr_assert_str_eq(ad_ask(&a, "acquire"), "busy");
	cr_assert_str_eq(ad_ask(&b, "release"), "released");
	long long f3 = ad_acquired(&a, fence);
	cr_assert_str_eq(ad_ask(&a, "release"), "released");
	if (fence)
		cr_assert(f1 > 0 && f2 > f1 && f3 > f2, "fences %lld, %lld, %lld do not grow", f1, f2, f3);
	ad_quit(&a);
	ad_quit(&b);
}

/* A client waiting the library's way (wait=library) is still waiting after
 * 500 ms; quit answers at once and takes its place in the queue with it:
 * the holder, released, takes the lock again in one attempt. */
static void quit_ends_a_library_wait(const struct ensemble *e, const char *prog, const char *library)
{
	struct adapter h, w;
	char key[64], line[200];
	snprintf(key, sizeof(key), "lbtest:wait:%d", (int)getpid());
	ad_start(&h, prog, false, "holder");
	ad_start(&w, prog, false, "waiter");
	ad_config(&h, library, e, key, "one", 0);
	ad_config(&w, library, e, key, "library", 1);
	ad_acquired(&h, false);
	cr_assert_eq(write(w.in, "acquire\n", 8), 8);
	bool answered = ad_line(&w, 500, line, sizeof(line));
	cr_assert_not(answered, "the waiter answered '%s' while the lock was held", line);
	int64_t t0 = lb_now_ns();
	ad_quit(&w);
	cr_assert_lt(lb_now_ns() - t0, 2000 * LB_NS_PER_MS, "quit took more than 2 s");
	cr_assert_str_eq(ad_ask(&h, "release"), "released");
	ad_acquired(&h, false);
	cr_assert_str_eq(ad_ask(&h, "release"), "released");
	ad_quit(&h);
}

Test(consensus_adapters, etcd_lock_over_a_three_member_cluster, .init = setup)
{
	struct ensemble e;
	start_etcd(&e);
	two_clients(&e, "etcd_lock.py", "etcd-lock", false);
	two_clients(&e, "etcd_lock.py", "etcd-lock", true);
	quit_ends_a_library_wait(&e, "etcd_lock.py", "etcd-lock");
	stop_ensemble(&e);
}

Test(consensus_adapters, kazoo_lock_over_a_three_server_ensemble, .init = setup)
{
	struct ensemble e;
	start_zookeeper(&e);
	two_clients(&e, "kazoo_lock.py", "kazoo", false);
	two_clients(&e, "kazoo_lock.py", "kazoo", true);
	quit_ends_a_library_wait(&e, "kazoo_lock.py", "kazoo");
	stop_ensemble(&e);
}
