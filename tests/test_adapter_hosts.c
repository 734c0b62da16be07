/*
 * test_adapter_hosts.c - adapter hosts (--adapter-hosts N, docs/adapters.md):
 * a host that dies mid-run voids the run with the reason and leaves nothing
 * running, as does a kill -9 of lockbench; a fault that acts on a client's
 * own process is refused with why. (Libraries in hosts, with the verdict of
 * one process per client: test_adapters.c, redis-py and the Node ones.)
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "plumbing.h"

FX_SUITE(adapter_hosts, 90);

static char tmpdir[64], root[PATH_MAX];

static void setup(void)
{
	snprintf(root, sizeof(root), "%s", fx_root());
	strcpy(tmpdir, "/tmp/lbtest-hosts-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
	setenv("TMPDIR", tmpdir, 1); /* the hosts' socket directory: this test's to look at */
	fx_become_subreaper();
}

static int lb(const char *const *args)
{
	return fx_lockbench(tmpdir, args);
}

static const char *out(void)
{
	return fx_slurp(tmpdir, "output");
}

/* How many processes whose command line holds @needle are left, after a
 * moment for those dying with lockbench (PDEATHSIG) to go. */
static int left(const char *needle)
{
	char what[256];
	int n = 0;
	for (int tries = 0; tries < 10; tries++) {
		lb_sleep_ns(200 * LB_NS_PER_MS);
		fx_reap_orphans();
		if ((n = fx_left(needle, what, sizeof(what))) == 0)
			break;
	}
	return n;
}

/* The hosts' socket directories left in tmpdir (TMPDIR). */
static int socket_dirs_left(void)
{
	DIR *d = opendir(tmpdir);
	int n = 0;
	cr_assert_not_null(d);
	for (struct dirent *e; (e = readdir(d));)
		n += !strncmp(e->d_name, "lockbench-hosts-", 16);
	closedir(d);
	return n;
}

/* A host that exits 1.5 s into the run (tests/adapters/host-dies.py): the run
 * is void (exit 1, no summary), the message names the host and how it
 * ended, and nothing is left running. */
Test(adapter_hosts, a_host_that_dies_voids_the_run, .init = setup)
{
	char dir[PATH_MAX], spec[PATH_MAX + 64];
	snprintf(dir, sizeof(dir), "%s/dies", tmpdir);
	snprintf(spec, sizeof(spec), "exec:%s/tests/adapters/host-dies.py", root);
	const char *run[] = { "run", "--strategy", spec, "--clients", "4", "--adapter-hosts", "2",
			      "--duration", "4", "--hold", "0", "--out", dir, "--no-status",
			      "--no-report", NULL };
	cr_assert_eq(lb(run), 1, "%s", out());
	const char *o = out();
	cr_assert(strstr(o, "died during the run (exit status 3)"), "%s", o);
	cr_assert(strstr(o, "adapter-host-"), "the host's log is not named: %s", o);
	cr_assert(strstr(o, "is void"), "%s", o);
	char sum[PATH_MAX + 16];
	snprintf(sum, sizeof(sum), "%s/summary.csv", dir);
	cr_assert_neq(access(sum, F_OK), 0, "a void run wrote a summary");
	cr_assert_eq(left("^/usr/bin/python3 .*host-dies.py"), 0, "a host was left running");
	cr_assert_eq(socket_dirs_left(), 0, "the sockets' directory was left");
}

/* kill -9 of lockbench mid-run: its hosts go too (PDEATHSIG, the janitor), and
 * the directory of their sockets. */
Test(adapter_hosts, a_kill_9_of_lockbench_leaves_no_host, .init = setup)
{
	char dir[PATH_MAX], output[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/k9", tmpdir);
	snprintf(output, sizeof(output), "%s/output9", tmpdir);
	char spec[PATH_MAX + 64];
	snprintf(spec, sizeof(spec), "exec:%s/tests/adapters/host-dies.py", root);
	setenv("LBTEST_HOST_LIFE", "60", 1); /* it does not die of itself here */
	const char *run[] = { "run", "--strategy", spec, "--clients", "4", "--adapter-hosts", "2",
			      "--duration", "30", "--out", dir, "--no-status", "--no-report", NULL };
	pid_t pid = fx_spawn_lockbench(run, output, output);
	/* both hosts up (their programs running), then kill -9 */
	int running = 0;
	for (int i = 0; i < 200 && running != 2; i++) {
		lb_sleep_ns(50 * LB_NS_PER_MS);
		char what[128];
		running = fx_left("^/usr/bin/python3 .*host-dies.py", what, sizeof(what));
	}
	cr_assert_eq(running, 2, "not the 2 hosts running");
	lb_sleep_ns(300 * LB_NS_PER_MS); /* the clients in their sessions */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert_eq(left("^/usr/bin/python3 .*host-dies.py"), 0, "a host outlived a kill -9 of lockbench");
	/* and their sockets' directory goes with them (the janitor removes it) */
	int dirs = socket_dirs_left();
	for (int i = 0; i < 50 && dirs; i++) {
		lb_sleep_ns(100 * LB_NS_PER_MS);
		dirs = socket_dirs_left();
	}
	cr_assert_eq(dirs, 0, "the hosts' socket directory outlived a kill -9 of lockbench");
}

/* A stampede's shape in hosts: each client one call, each its library's own
 * wait. lockbench sees a library's call, not the retries inside it: its
 * retries_per_acquire is n/a (it was calls per success, passed off as
 * retries), and check agrees. */
Test(adapter_hosts, a_librarys_crowd_makes_one_call_each, .init = setup)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/crowd", tmpdir);
	const char *run[] = { "run", "--strategy", "redis-py@4.3.4", "--adapter-hosts", "2",
			      "--clients", "16", "--calls", "1", "--wait", "own", "--hold", "1",
			      "--duration", "30", "--out", dir, "--no-status", "--no-report", NULL };
	cr_assert_eq(lb(run), 0, "%s", out());
	cr_assert_str_eq(fx_summary(dir, "wait"), "library");
	cr_assert_str_eq(fx_summary(dir, "served_clients"), "16");
	cr_assert_str_eq(fx_summary(dir, "retries_per_acquire"), "n/a");
	cr_assert(strstr(out(), "retries each n/a (inside the library's calls)"), "%s", out());
	fx_recheck(dir);
	cr_assert_eq(left("adapter.*redis"), 0, "a host outlived its run");
}

/* A fault on a client's own process would not reach the library code in a
 * shared host: refused before anything starts, saying why and what to do. */
Test(adapter_hosts, a_fault_on_a_clients_process_is_refused, .init = setup)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/pause", tmpdir);
	const char *run[] = { "run", "--strategy", "redis-py@4.3.4", "--scenario", "holder-pause",
			      "--adapter-hosts", "2", "--out", dir, "--no-status", "--no-report",
			      NULL };
	cr_assert_eq(lb(run), 2, "%s", out()); /* a usage error, found before anything starts */
	const char *o = out();
	cr_assert_null(strstr(o, "failed"), "%s", o);
	cr_assert_neq(access(dir, F_OK), 0, "a refused run made its directory");
	cr_assert(strstr(o, "--adapter-hosts 2: the scenario's fault"), "%s", o);
	cr_assert(strstr(o, "(pause) acts on a client's own process"), "%s", o);
	cr_assert(strstr(o, "run it without --adapter-hosts"), "%s", o);
	const char *bad[] = { "run", "--strategy", "redis-py@4.3.4", "--adapter-hosts", "65",
			      "--out", dir, "--no-status", "--no-report", NULL };
	cr_assert_eq(lb(bad), 2, "%s", out());
	cr_assert(strstr(out(), "expected an integer from 0 to 64"), "%s", out());
}

/* A host holds a socket and a connection per lock node for each of its
 * sessions: more than the open-files limit allows is refused before anything
 * starts, saying how many and what to do. */
Test(adapter_hosts, more_sessions_than_a_host_can_open_is_refused, .init = setup)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/fds", tmpdir);
	struct rlimit rl = { 3000, 3000 }; /* this test's process and what it starts */
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	const char *run[] = { "run", "--strategy", "redlock@4.2.0", "--clients", "2048",
			      "--adapter-hosts", "4", "--out", dir, "--no-status", "--no-report", NULL };
	cr_assert_eq(lb(run), 1, "%s", out());
	cr_assert(strstr(out(), "each host serves up to 512 sessions"), "%s", out());
	cr_assert(strstr(out(), "RLIMIT_NOFILE allows 3000: give more hosts"), "%s", out());
}
