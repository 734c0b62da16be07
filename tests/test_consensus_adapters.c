/*
 * test_consensus_adapters.c - the consensus lock adapters (the Go programs of
 * etcd's concurrency Mutex, go/bin/etcd-lock-client-3.4 and -3.5, built by
 * harness/deps.sh; kazoo_lock.py for kazoo's Lock recipe) driven over the
 * adapter protocol (docs/adapters.md) against a real 3-member etcd cluster
 * and a real 3-server ZooKeeper ensemble, started as lockbench starts them
 * (harness/servers/consensus.c): hello, config, one holder
 * and a busy second client, fencing tokens that grow from one holder to the
 * next, a library wait that quit ends at once (and whose place in the queue
 * goes with it), quit, and nothing left running; and kazoo's connection cut
 * between its grant and the adapter's answer (through lockbench's relay, at
 * the adapter's failpoint after-grant): the answer is followed by lost.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "plumbing.h"
#include "relay.h"

FX_SUITE(consensus_adapters, 120);

static char tmpdir[64], adapters[PATH_MAX];

static void setup(void)
{
	snprintf(adapters, sizeof(adapters), "%s/strategies/adapters", fx_root());
	strcpy(tmpdir, "/tmp/lbtest-consensus-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
	signal(SIGPIPE, SIG_IGN);
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

struct ensemble {
	struct lb_consensus c;  /* harness/servers/consensus.c: what lockbench runs on */
	char nodes[256];        /* nodes= for config */
};

/* The ensemble of @kind as lockbench starts it, and its nodes= list. */
static void start_ensemble(struct ensemble *e, enum lb_consensus_kind kind)
{
	size_t n = 0;
	memset(e, 0, sizeof(*e));
	cr_assert_eq(lb_consensus_start(&e->c, kind, 60000), 0, "the %s ensemble did not start",
		     lb_consensus_name(kind));
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++)
		n += (size_t)snprintf(e->nodes + n, sizeof(e->nodes) - n, "%s%s://127.0.0.1:%d",
				      i ? "," : "", kind == LB_CONSENSUS_ETCD ? "http" : "zk",
				      e->c.member[i]->port);
}

/* Stop every member, and check that each is gone and its port closed. */
static void stop_ensemble(struct ensemble *e)
{
	pid_t pid[LB_CONSENSUS_MEMBERS];
	int port[LB_CONSENSUS_MEMBERS];
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		pid[i] = e->c.member[i]->pid;
		port[i] = e->c.member[i]->port;
	}
	lb_consensus_destroy(&e->c);
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++) {
		cr_assert(fx_pid_gone(pid[i]), "member %d (pid %d) is still there", i, (int)pid[i]);
		cr_assert(fx_port_closed(port[i]), "port %d still accepts", port[i]);
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
	/* runs: python3 (python3-minimal), or the program itself (a Go adapter) */
	const char *py[] = { "/usr/bin/python3", path, fence ? "--fence" : NULL, NULL };
	const char *own[] = { path, fence ? "--fence" : NULL, NULL };
	const char *const *argv = strstr(prog, ".py") ? py : own;
	cr_assert_eq(access(path, X_OK), 0, "%s is not there: run harness/deps.sh", path);
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

/* The answer to @req (notices of an extended lease skipped, a failpoint's
 * "at" answered "go"; a lost notice fails the test: nothing here takes a
 * lock away). */
static const char *ad_ask(struct adapter *a, const char *req)
{
	static char line[4200];
	cr_assert_eq(write(a->in, req, strlen(req)), (ssize_t)strlen(req));
	cr_assert_eq(write(a->in, "\n", 1), 1);
	while (ad_line(a, 10000, line, sizeof(line))) {
		cr_assert(strncmp(line, "lost", 4), "%s: an unexpected '%s' after '%s'", a->name, line, req);
		if (!strncmp(line, "at ", 3)) { /* a failpoint: nothing acts here, go on */
			cr_assert_eq(write(a->in, "go\n", 3), 3);
			continue;
		}
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

/* A holder whose members all stop answering (each SIGSTOPped) is told
 * "lost" by its client's own timer, a lease's length after the keep-alive's
 * last answer: not a network timeout per member later (the Python session
 * waited 3 x timeout_ms on each keep-alive before it looked at the lease:
 * ten seconds here, where the lease is 3). */
static void lost_on_its_own_timer(const struct ensemble *e, const char *prog)
{
	struct adapter h;
	char key[64], req[512], line[200];
	snprintf(key, sizeof(key), "lbtest:lost:%d", (int)getpid());
	ad_start(&h, prog, false, "lost");
	cr_assert(!strncmp(ad_ask(&h, "hello 3"), "hello 3 library=etcd-lock ", 26));
	snprintf(req, sizeof(req), "config nodes=%s key=%s ttl_ms=3000 wait=one timeout_ms=3000 client=0",
		 e->nodes, key);
	cr_assert_str_eq(ad_ask(&h, req), "ok");
	ad_acquired(&h, false);
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++)
		kill(e->c.member[i]->pid, SIGSTOP);
	int64_t t0 = lb_now_ns();
	bool lost = false;
	while (!lost && ad_line(&h, 12000, line, sizeof(line)))
		lost = !strncmp(line, "lost ", 5);
	int64_t took = (lb_now_ns() - t0) / LB_NS_PER_MS;
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++)
		kill(e->c.member[i]->pid, SIGCONT);
	cr_assert(lost, "%s: no lost notice within 12 s of the members' stop (last line '%s')", prog, line);
	cr_assert_lt(took, 4500, "%s: lost came %lld ms after the members stopped, past the 3 s lease "
		     "and the client's 0.5 s tick", prog, (long long)took);
	/* the members' own view, once they run again, decides the release */
	const char *rel = ad_ask(&h, "release");
	cr_assert(!strcmp(rel, "not-owned") || !strcmp(rel, "released"), "%s: release: %s", prog, rel);
	ad_quit(&h);
}

Test(consensus_adapters, etcd_lock_over_a_three_member_cluster, .init = setup)
{
	struct ensemble e;
	start_ensemble(&e, LB_CONSENSUS_ETCD);
	static const char *const progs[] = { "go/bin/etcd-lock-client-3.4", "go/bin/etcd-lock-client-3.5" };
	for (int i = 0; i < 2; i++) {
		two_clients(&e, progs[i], "etcd-lock", false);
		two_clients(&e, progs[i], "etcd-lock", true);
		quit_ends_a_library_wait(&e, progs[i], "etcd-lock");
		lost_on_its_own_timer(&e, progs[i]);
	}
	stop_ensemble(&e);
}

Test(consensus_adapters, kazoo_lock_over_a_three_server_ensemble, .init = setup)
{
	struct ensemble e;
	start_ensemble(&e, LB_CONSENSUS_ZOOKEEPER);
	two_clients(&e, "kazoo_lock.py", "kazoo", false);
	two_clients(&e, "kazoo_lock.py", "kazoo", true);
	quit_ends_a_library_wait(&e, "kazoo_lock.py", "kazoo");
	stop_ensemble(&e);
}

/* The relay's control words and epoch, shared with its process. */
struct cut {
	struct lb_link_ctl link[LB_CONSENSUS_MEMBERS];
	_Atomic uint64_t epoch;
};

/* Every link of @c in @mode, once the relay obeys it. */
static void links_to(struct cut *c, enum lb_link_mode mode)
{
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++)
		atomic_store(&c->link[i].mode, (int)mode);
	uint64_t e = atomic_load(&c->epoch);
	for (int t = 0; t < 500 && !lb_relay_settled(&c->epoch, e); t++)
		lb_sleep_ns(LB_NS_PER_MS);
	cr_assert(lb_relay_settled(&c->epoch, e), "the relay did not take the change");
}

/* Client b reaches the ensemble only through the relay. Its acquire is
 * granted at once (a free lock); at its failpoint after-grant the test cuts
 * every link (black-holed: nothing reaches a member, nothing comes back) and
 * waits 2.6 s, past kazoo's read timeout (2/3 of the 3 s session): kazoo has
 * suspended the connection before the adapter made its answer. That answer
 * must not be a plain "acquired": it is "acquired" followed at once by
 * "lost". (It was "acquired" alone: the listener dropped a loss that came
 * before the adapter set its held flag.) Then the session expires, and
 * client a takes the lock. */
/* A relay in front of every member of @e: its control words in *c (mapped
 * shared), @via the ensemble as reached through it; the relay's pid. */
static pid_t relay_in_front(const struct ensemble *e, struct cut **c, struct ensemble *via)
{
	*c = mmap(NULL, sizeof(**c), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(*c, MAP_FAILED);
	memset(*c, 0, sizeof(**c));
	struct lb_relay_link l[LB_CONSENSUS_MEMBERS];
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++)
		l[i] = (struct lb_relay_link){ .ctl = &(*c)->link[i], .upstream = e->c.member[i]->port };
	pid_t relay = lb_relay_start(l, LB_CONSENSUS_MEMBERS, &(*c)->epoch);
	cr_assert_gt(relay, 0, "the relay did not start");
	*via = *e;
	size_t n = 0;
	for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++)
		n += (size_t)snprintf(via->nodes + n, sizeof(via->nodes) - n, "%szk://127.0.0.1:%d",
				      i ? "," : "", atomic_load(&(*c)->link[i].port));
	return relay;
}

static void cut_between_grant_and_answer(const struct ensemble *e)
{
	struct cut *c;
	struct ensemble via;
	pid_t relay = relay_in_front(e, &c, &via);

	struct adapter a, b;
	char key[64], line[4200], answer[4200];
	snprintf(key, sizeof(key), "lbtest:cut:%d", (int)getpid());
	ad_start(&a, "kazoo_lock.py", false, "cut-a");
	ad_start(&b, "kazoo_lock.py", false, "cut-b");
	ad_config(&a, "kazoo", e, key, "one", 0);
	ad_config(&b, "kazoo", &via, key, "one", 1);
	cr_assert_eq(write(b.in, "acquire\n", 8), 8);
	cr_assert(ad_line(&b, 10000, line, sizeof(line)), "cut-b: no line after acquire");
	cr_assert_str_eq(line, "at after-grant");
	links_to(c, LB_LINK_BLACKHOLE);
	lb_sleep_ns(2600 * LB_NS_PER_MS);
	cr_assert_eq(write(b.in, "go\n", 3), 3);
	cr_assert(ad_line(&b, 10000, answer, sizeof(answer)), "cut-b: no answer after go");
	cr_assert(!strncmp(answer, "acquired", 8), "cut-b: acquire answered '%s'", answer);
	bool told = ad_line(&b, 500, line, sizeof(line));
	cr_assert(told && !strncmp(line, "lost ", 5),
		  "cut-b: its connection was suspended before its answer '%s', and %s%s", answer,
		  told ? "it then said: " : "no lost notice followed within 500 ms", told ? line : "");
	/* b's session expires (3 s without a word): its node goes, a gets in */
	const char *got = "busy";
	for (int t = 0; t < 40 && !strcmp(got, "busy"); t++) {
		got = ad_ask(&a, "acquire");
		if (!strcmp(got, "busy"))
			lb_sleep_ns(250 * LB_NS_PER_MS);
	}
	cr_assert(!strncmp(got, "acquired", 8), "cut-a: '%s' after cut-b's session ended", got);
	cr_assert_str_eq(ad_ask(&a, "release"), "released");
	links_to(c, LB_LINK_PASS);
	ad_quit(&a);
	ad_quit(&b);
	kill(relay, SIGKILL);
	waitpid(relay, NULL, 0);
	munmap(c, sizeof(*c));
}

Test(consensus_adapters, kazoo_tells_a_connection_cut_between_grant_and_answer, .init = setup)
{
	struct ensemble e;
	start_ensemble(&e, LB_CONSENSUS_ZOOKEEPER);
	cut_between_grant_and_answer(&e);
	stop_ensemble(&e);
}

/* Every link black-holed (nothing comes back, new connections hang) before an
 * acquire: kazoo's calls wait for a connection without bound, and the acquire
 * was never answered (lockbench's deadline, 2 x timeout_ms per member + 2 s =
 * 8 s here, then failed the run). It is answered an error within its time
 * (timeout_ms per member, 3 s, and the session's close), and once the links
 * pass again the adapter's new session takes the lock. */
Test(consensus_adapters, kazoo_answers_an_acquire_on_links_that_never_answer, .init = setup)
{
	struct ensemble e, via;
	struct cut *c;
	struct adapter a;
	char key[64], line[4200];

	start_ensemble(&e, LB_CONSENSUS_ZOOKEEPER);
	pid_t relay = relay_in_front(&e, &c, &via);
	snprintf(key, sizeof(key), "lbtest:mute:%d", (int)getpid());
	ad_start(&a, "kazoo_lock.py", false, "mute");
	ad_config(&a, "kazoo", &via, key, "one", 0);
	links_to(c, LB_LINK_BLACKHOLE);
	int64_t t0 = lb_now_ns();
	cr_assert_eq(write(a.in, "acquire\n", 8), 8);
	bool answered = ad_line(&a, 8000, line, sizeof(line));
	int64_t ms = (lb_now_ns() - t0) / LB_NS_PER_MS;
	cr_assert(answered, "mute: no answer to an acquire on black-holed links within 8000 ms "
		  "(its log: %s/adapter-mute.log)", tmpdir);
	cr_assert(!strncmp(line, "error ", 6), "mute: '%s' after %lld ms, where an error was due", line,
		  (long long)ms);
	fprintf(stderr, "mute: '%.200s' after %lld ms\n", line, (long long)ms);
	links_to(c, LB_LINK_PASS);
	const char *got = "error";
	for (int t = 0; t < 40 && strncmp(got, "acquired", 8); t++) {
		got = ad_ask(&a, "acquire");
		if (strncmp(got, "acquired", 8))
			lb_sleep_ns(250 * LB_NS_PER_MS);
	}
	cr_assert(!strncmp(got, "acquired", 8), "mute: '%s' once the links passed again", got);
	cr_assert_str_eq(ad_ask(&a, "release"), "released");
	ad_quit(&a);
	kill(relay, SIGKILL);
	waitpid(relay, NULL, 0);
	munmap(c, sizeof(*c));
	stop_ensemble(&e);
}
