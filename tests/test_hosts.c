/*
 * test_hosts.c - clients on many hosts: `lockbench agent` (a share of a
 * run's clients on this host, read from its standard input, its records
 * streamed back) against a real redis-server, its hostile input refused line
 * by line, and nothing of it left when its input ends.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_wire.h"
#include "fixture.h"
#include "rserver.h"
#include "util.h"

FX_SUITE(agent, 60);

struct agent_proc {
	pid_t pid;
	int in, out;
	struct lb_lines lines;
};

static void agent_start(struct agent_proc *a)
{
	int to[2], from[2];
	const char *bin = getenv("LOCKBENCH_BIN");

	cr_assert(bin, "LOCKBENCH_BIN not set");
	cr_assert(pipe(to) == 0 && pipe(from) == 0);
	a->pid = fork();
	cr_assert(a->pid >= 0);
	if (a->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		execl(bin, bin, "agent", (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	a->in = to[1];
	a->out = from[0];
	memset(&a->lines, 0, sizeof(a->lines));
	a->lines.fd = a->out;
}

static void say(struct agent_proc *a, const char *text)
{
	size_t n = strlen(text);
	cr_assert(write(a->in, text, n) == (ssize_t)n);
}

/* The next line, within @s seconds (the test fails without one). */
static const char *next(struct agent_proc *a, int s)
{
	static char line[LB_AGENT_LINE_MAX];
	char why[200];
	int rc = lb_lines_next(&a->lines, line, sizeof(line), lb_now_ns() + s * LB_NS_PER_S, why,
			       sizeof(why));
	cr_assert_eq(rc, 1, "no line from the agent (%d: %s)", rc, rc == LB_EPROTO ? why : "");
	return line;
}

static int agent_wait(struct agent_proc *a)
{
	int st = 0;
	close(a->in);
	close(a->out);
	cr_assert_eq(waitpid(a->pid, &st, 0), a->pid);
	cr_assert(WIFEXITED(st), "the agent died of a signal");
	return WEXITSTATUS(st);
}

static void share(struct agent_proc *a, int port, int clients)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "lockbench-share 1\narg --strategy\narg set-nx-px\narg --scenario\narg holder-pause\n"
		 "arg --clients\narg %d\nlock redis://127.0.0.1:%d\nresource redis://127.0.0.1:%d\n"
		 "clients 0 %d\nprefix lbhosts%d:\nfaults yes\nshare-end\n", clients, port, port,
		 clients, (int)getpid());
	say(a, buf);
}

Test(agent, streams_its_share_with_its_clock)
{
	struct fx f;
	struct agent_proc a;

	fx_start(&f, 1);
	agent_start(&a);
	cr_assert_str_eq(next(&a, 10), "hello lockbench-agent 1 " LOCKBENCH_VERSION);
	share(&a, f.srv[0]->port, 3);
	const char *l = next(&a, 20);
	long long off, rtt;
	cr_assert_eq(sscanf(l, "clock before %lld %lld", &off, &rtt), 2, "got '%s'", l);
	cr_assert(rtt > 0 && rtt < 1000000000LL, "a round trip of %lld ns", rtt);
	cr_assert_str_eq(next(&a, 60), "ready 3");
	say(&a, "go\n");
	cr_assert_eq(strncmp(next(&a, 10), "go ", 3), 0);
	/* every line it streams is taken back, field by field, as run --hosts does */
	size_t cap = 4096, try_cap = 8192;
	size_t bytes = sizeof(struct lb_shared) + 3 * cap * sizeof(struct lb_record) +
		       3 * try_cap * sizeof(struct lb_try_rec);
	struct lb_shared *sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	cr_assert(sh != MAP_FAILED);
	sh->cap = cap, sh->try_cap = try_cap, sh->clients = 3, sh->keys = 1;
	int recs = 0, clients = 0, events = 0, after = 0;
	for (;;) {
		l = next(&a, 30);
		if (!strcmp(l, "end"))
			break;
		char why[200];
		if (!strncmp(l, "event ", 6)) {
			events++;
			continue;
		}
		if (!strncmp(l, "clock after ", 12)) {
			after++;
			continue;
		}
		cr_assert_eq(lb_wire_take(sh, l, 0, 3, 0, 0, why, sizeof(why)), 0, "'%.80s': %s", l,
			     why);
		recs += !strncmp(l, "rec ", 4);
		clients += !strncmp(l, "client ", 7);
	}
	cr_assert_eq(clients, 3);
	cr_assert_eq(after, 1);
	cr_assert_gt(recs, 10, "only %d sections", recs);
	cr_assert_gt(events, 0, "the holder's pause is an event");
	uint64_t n = 0;
	for (int i = 0; i < 3; i++)
		n += atomic_load(&sh->client[i].n_records);
	cr_assert_eq(n, (uint64_t)recs);
	cr_assert_eq(agent_wait(&a), 0);
	munmap(sh, bytes);
	fx_stop(&f);
}

Test(agent, refuses_a_bad_share_line_naming_it)
{
	struct agent_proc a;

	agent_start(&a);
	next(&a, 10);
	say(&a, "lockbench-share 1\nprefix lbx:\nclients 5 x\n");
	const char *l = next(&a, 10);
	cr_assert(strstr(l, "error share line 3: clients: expected FIRST COUNT"), "got '%s'", l);
	cr_assert_eq(agent_wait(&a), 2);

	agent_start(&a);
	next(&a, 10);
	say(&a, "lockbench-share 9\n");
	l = next(&a, 10);
	cr_assert(strstr(l, "error share line 1: expected 'lockbench-share 1'"), "got '%s'", l);
	cr_assert_eq(agent_wait(&a), 2);

	agent_start(&a); /* a control character, a line without its end */
	next(&a, 10);
	say(&a, "lockbench-share 1\nlock redis://a\x01\n");
	l = next(&a, 10);
	cr_assert(strstr(l, "share line 2: a control character (0x01)"), "got '%s'", l);
	cr_assert_eq(agent_wait(&a), 2);
}

/* A lock server that does not answer from the agent's host: refused before
 * a client starts, exit 3 (it said "clock before n/a", ran its clients
 * against nothing, streamed their failed attempts and exited 0). */
Test(agent, an_unreachable_lock_server_is_refused_before_its_clients_start)
{
	struct agent_proc a;

	agent_start(&a);
	next(&a, 10);
	share(&a, 1, 2); /* port 1: nothing listens */
	const char *l = next(&a, 30);
	cr_assert(!strcmp(l, "clock before n/a"), "got '%s'", l);
	l = next(&a, 10);
	cr_assert(strstr(l, "error the lock server does not answer"), "got '%s'", l);
	cr_assert_eq(agent_wait(&a), 3);
}

Test(agent, stops_its_clients_when_its_input_ends)
{
	struct fx f;
	struct agent_proc a;
	pid_t pids[64];

	fx_become_subreaper();
	fx_start(&f, 1);
	agent_start(&a);
	next(&a, 10);
	share(&a, f.srv[0]->port, 4);
	next(&a, 20);
	cr_assert_str_eq(next(&a, 60), "ready 4");
	say(&a, "go\n");
	next(&a, 10);
	int n = fx_descendants(a.pid, pids, 64);
	cr_assert_geq(n, 5, "the agent and its 4 clients (%d)", n);
	int64_t t = lb_now_ns();
	cr_assert_eq(agent_wait(&a), 0); /* its input closed: it stops, streams nothing */
	cr_assert_lt(lb_now_ns() - t, 3 * LB_NS_PER_S, "it took %lld ms to stop",
		     (long long)((lb_now_ns() - t) / LB_NS_PER_MS));
	for (int i = 0; i < n; i++) { /* its janitor follows it within a moment */
		for (int k = 0; k < 300 && !fx_pid_gone(pids[i]); k++)
			usleep(10000);
		cr_assert(fx_pid_gone(pids[i]), "process %d of the agent's is left", (int)pids[i]);
	}
	fx_stop(&f);
}

/* What an agent streams is hostile to the launcher that reads it: a line of
 * another host's client, a record past the run's table, a field that is no
 * number, a count that is wrong, each refused saying why; nothing written. */
Test(agent, a_streamed_line_out_of_range_is_refused)
{
	size_t bytes = sizeof(struct lb_shared) + 4 * 8 * sizeof(struct lb_record) +
		       4 * 8 * sizeof(struct lb_try_rec);
	struct lb_shared *sh = calloc(1, bytes);
	char why[200];
	static const struct { const char *line, *says; } bad[] = {
		{ "rec 5 0 1 2 3 4 -1 5 0 7 0 3", "not a client of this host (2 to 3)" },
		{ "rec 2 8 1 2 3 4 -1 5 0 7 0 3", "a record out of range" },
		{ "rec 2 0 1 2 3 4 -1 5 0 7 0 9", "a record out of range" },
		{ "rec 2 0 1 2 x 4 -1 5 0 7 0 3", "field 6 ('x') is not a number" },
		{ "rec 2 0 1 2 3 4 -1 5 0 7 0", "a 'rec' line of 12 fields (13 expected)" },
		{ "rec 2 0 1 2 9223372036854775807 4 -1 5 0 7 0 3", "field 6 is out of range" },
		{ "try 3 9 1 2 0", "an attempt out of range" },
		{ "hist 2 latency 1 2 3 999:1", "BUCKET:COUNT" },
		{ "client 2 9 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
		  "past what the run keeps" },
		{ "nonsense 2", "an unknown line 'nonsense'" },
	};

	cr_assert(sh);
	sh->cap = 8, sh->try_cap = 8, sh->clients = 4, sh->keys = 1;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		cr_assert_eq(lb_wire_take(sh, bad[i].line, 2, 2, 0, 0, why, sizeof(why)), LB_EPROTO,
			     "'%s' taken", bad[i].line);
		cr_assert(strstr(why, bad[i].says), "'%s': said '%s'", bad[i].line, why);
	}
	cr_assert_eq(atomic_load(&lb_shared_record(sh, 2, 0)->state), 0, "a refused line wrote");
	cr_assert_eq(lb_wire_take(sh, "rec 2 0 1 2 3 4 -1 5 0 7 0 3", 2, 2, 100, 0, why,
				  sizeof(why)), 0, "%s", why);
	cr_assert_eq(lb_shared_record(sh, 2, 0)->enter_ns, 102, "moved by the shift");
	free(sh);
}

/* ---- run --hosts on real hosts: network namespaces, each with its sshd ----
 *
 * Each test makes its hosts: namespaces lbh-PID-1.., each a veth into a
 * bridge lbhbPID in the root namespace (10.213.X.1/24, X free here), an
 * sshd on 10.213.X.(i+1) with a host key and an authorized key the test
 * made in its temp dir. Nothing else is changed (no firewall, no route
 * outside them; /run/sshd, sshd's own empty directory, is made if missing).
 * Its teardown deletes them; what a test killed -9 left (its PID gone) is
 * deleted by the next one's janitor, found by those names. */

struct hosts_env {
	char dir[PATH_MAX];
	char net[32];     /* "10.213.X" */
	char tag[16];     /* the test's pid */
	int n;
	bool up;
};
static struct hosts_env henv;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/bash", "bash", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Deletes the namespaces and bridge of @tag ("" : those of every test whose
 * process is gone), and every process inside them. */
#define JANITOR \
	"for ns in $(ip netns list | grep -o '^lbh-[0-9]*-[0-9]*'); do " \
	"  p=${ns#lbh-}; p=${p%%-*}; " \
	"  if [[ -n $TAG && $p == $TAG ]] || { [[ -z $TAG ]] && ! kill -0 $p 2>/dev/null; }; then " \
	"    for q in $(ip netns pids $ns); do kill -9 $q; done; ip netns del $ns; fi; done; " \
	"for b in $(ip -o link show type bridge | grep -o 'lbhb[0-9][0-9]*'); do p=${b#lbhb}; " \
	"  if [[ -n $TAG && $p == $TAG ]] || { [[ -z $TAG ]] && ! kill -0 $p 2>/dev/null; }; then " \
	"    ip link del $b; fi; done; true"

static void hosts_down(void)
{
	if (!henv.tag[0])
		return;
	sh("TAG=%s; " JANITOR, henv.tag);
	henv.up = false;
}

/* @n hosts, or the reason they cannot be made here in @why (false). */
static bool hosts_up(int n, char *why, size_t len)
{
	char tmpl[] = "/tmp/lbhosts-XXXXXX";

	if (geteuid() != 0) {
		snprintf(why, len, "not root: network namespaces (ip netns) need CAP_SYS_ADMIN");
		return false;
	}
	if (access("/usr/sbin/sshd", X_OK) != 0) {
		snprintf(why, len, "no /usr/sbin/sshd (bash harness/deps.sh test installs openssh-server)");
		return false;
	}
	sh("TAG=; " JANITOR); /* what earlier tests killed -9 left */
	cr_assert(fx_mkdtemp(tmpl));
	snprintf(henv.dir, sizeof(henv.dir), "%s", tmpl);
	snprintf(henv.tag, sizeof(henv.tag), "%d", (int)getpid());
	henv.n = n;
	int x = 20 + (int)(getpid() % 200), k;
	for (k = 0; k < 200; k++, x = 20 + (x - 19) % 230) /* a /24 nothing here uses */
		if (sh("! ip -4 -o addr | grep -q ' 10\\.213\\.%d\\.' && "
		       "[[ -z $(ip -4 route show 10.213.%d.0/24) ]]", x, x) == 0)
			break;
	if (k == 200) {
		snprintf(why, len, "no free 10.213.X.0/24 here");
		return false;
	}
	snprintf(henv.net, sizeof(henv.net), "10.213.%d", x);
	henv.up = true;
	int rc = sh("set -e; d=%s; t=%s; net=%s; n=%d; mkdir -p -m 755 /run/sshd; "
		    "ip link add lbhb$t type bridge; ip addr add $net.1/24 dev lbhb$t; "
		    "ip link set lbhb$t up; "
		    "ssh-keygen -q -t ed25519 -N '' -f $d/hostkey; "
		    "ssh-keygen -q -t ed25519 -N '' -f $d/userkey; cp $d/userkey.pub $d/authorized_keys; "
		    "names=; for i in $(seq 1 $n); do ns=lbh-$t-$i; a=$net.$((i + 1)); "
		    "  ip netns add $ns; ip link add lbhv$t-$i type veth peer name eth0 netns $ns; "
		    "  ip link set lbhv$t-$i master lbhb$t up; ip -n $ns addr add $a/24 dev eth0; "
		    "  ip -n $ns link set eth0 up; ip -n $ns link set lo up; "
		    "  printf 'ListenAddress %%s:22\\nHostKey %%s/hostkey\\nAuthorizedKeysFile %%s/authorized_keys\\n"
		    "PermitRootLogin prohibit-password\\nPasswordAuthentication no\\n"
		    "KbdInteractiveAuthentication no\\nUsePAM no\\nStrictModes no\\nPidFile none\\n' "
		    "    $a $d $d > $d/sshd-$i.conf; "
		    "  ip netns exec $ns /usr/sbin/sshd -D -f $d/sshd-$i.conf -E $d/sshd-$i.log "
		    "    </dev/null >/dev/null 2>&1 & "
		    "  names=$names${names:+,}$a; done; "
		    "echo \"$names $(cut -d' ' -f1,2 $d/hostkey.pub)\" > $d/known_hosts; "
		    "printf 'Host *\\n  IdentityFile %%s/userkey\\n  IdentitiesOnly yes\\n"
		    "  UserKnownHostsFile %%s/known_hosts\\n  GlobalKnownHostsFile /dev/null\\n"
		    "  StrictHostKeyChecking yes\\n  User root\\n  LogLevel ERROR\\n' $d $d > $d/ssh_config; "
		    "for i in $(seq 1 $n); do for k in $(seq 1 100); do "
		    "  ssh -F $d/ssh_config -o BatchMode=yes $net.$((i + 1)) true 2>/dev/null && break; "
		    "  sleep 0.1; done; done; "
		    "ssh -F $d/ssh_config -o BatchMode=yes $net.$((n + 1)) true",
		    henv.dir, henv.tag, henv.net, n);
	if (rc != 0) {
		snprintf(why, len, "the namespaced hosts could not be made (exit %d; see %.200s)", rc,
			 henv.dir);
		return false;
	}
	return true;
}

static void hosts_fini(void)
{
	hosts_down();
}

FX_SUITE(hosts, 120);

/* Skipped is never passed: where the hosts cannot be made, the test fails saying why. */
#define HOSTS_UP(n) do { \
	char why_[300]; \
	if (!hosts_up((n), why_, sizeof(why_))) \
		cr_assert_fail("SKIPPED (fails: skipped is never passed): %s", why_); \
} while (0)

static void hosts_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
}

Test(hosts, two_namespaced_hosts_give_the_one_machine_class, .fini = hosts_fini)
{
	char file[PATH_MAX + 16], out[PATH_MAX + 16], cfg[PATH_MAX + 16], bind[40], text[200];

	HOSTS_UP(2);
	snprintf(file, sizeof(file), "%s/hosts", henv.dir);
	snprintf(text, sizeof(text), "# two namespaced hosts\n%s.2\n\n%s.3 1   # one client\n",
		 henv.net, henv.net);
	hosts_file(file, text);
	snprintf(out, sizeof(out), "%s/run", henv.dir);
	snprintf(cfg, sizeof(cfg), "%s/ssh_config", henv.dir);
	snprintf(bind, sizeof(bind), "%s.1", henv.net);
	const char *args[] = { "run", "--hosts", file, "--ssh-config", cfg, "--bind", bind,
			       "--scenario", "holder-pause", "--strategy", "set-nx-px", "--check",
			       "--out", out, "--no-report", "--no-status", NULL };
	int rc = fx_lockbench(henv.dir, args);
	cr_assert_eq(rc, 0, "exit %d:\n%s", rc, fx_slurp(henv.dir, "output"));
	cr_assert_str_eq(fx_summary(out, "observed"), "foreign-release");
	cr_assert_str_eq(fx_summary(out, "canary_violations"), "n/a");
	const char *meta = fx_slurp(out, "meta.txt");
	char want[80];
	snprintf(want, sizeof(want), "host %s.2: clients 0 to 1, clock ", henv.net);
	cr_assert(strstr(meta, want), "no bound of host 1 in meta.txt:\n%s", meta);
	snprintf(want, sizeof(want), "host %s.3: clients 2 to 2, clock ", henv.net);
	cr_assert(strstr(meta, want), "no bound of host 2 in meta.txt:\n%s", meta);
	cr_assert(strstr(meta, "within +/- ") && strstr(meta, "hosts overlaps: "), "%s", meta);
	const char *said = fx_slurp(henv.dir, "output");
	cr_assert(strstr(said, want) && strstr(said, "hosts overlaps: "), "%s", said);
}

/* A host ssh cannot reach: refused before a server starts, naming it and
 * quoting ssh; an agent of another version: refused naming both versions. */
Test(hosts, a_host_that_cannot_be_reached_or_differs_is_refused, .fini = hosts_fini)
{
	char file[PATH_MAX + 16], out[PATH_MAX + 16], cfg[PATH_MAX + 16], bind[40], text[200];

	HOSTS_UP(1);
	snprintf(file, sizeof(file), "%s/hosts", henv.dir);
	snprintf(text, sizeof(text), "%s.2\n%s.250\n", henv.net, henv.net); /* .250: nobody */
	hosts_file(file, text);
	snprintf(out, sizeof(out), "%s/run", henv.dir);
	snprintf(cfg, sizeof(cfg), "%s/ssh_config", henv.dir);
	snprintf(bind, sizeof(bind), "%s.1", henv.net);
	const char *args[] = { "run", "--hosts", file, "--ssh-config", cfg, "--bind", bind,
			       "--scenario", "holder-pause", "--strategy", "set-nx-px",
			       "--out", out, "--no-report", "--no-status", NULL };
	int rc = fx_lockbench(henv.dir, args);
	const char *said = fx_slurp(henv.dir, "output");
	char want[PATH_MAX + 200];
	snprintf(want, sizeof(want), "host %s.250 (%s line 2) cannot be reached: ssh exited 255, "
		 "saying 'ssh: connect to host %s.250 port 22", henv.net, file, henv.net);
	cr_assert_eq(rc, 3, "exit %d:\n%s", rc, said);
	cr_assert(strstr(said, want), "expected '%s' in:\n%s", want, said);
	char log[PATH_MAX + 64];
	snprintf(log, sizeof(log), "%s/redis-lock-0.log", out);
	cr_assert(access(log, F_OK) != 0, "a server was started before the refusal");

	/* an agent of another lockbench */
	char agent[PATH_MAX + 16];
	snprintf(agent, sizeof(agent), "%s/other-agent", henv.dir);
	hosts_file(agent, "#!/bin/sh\necho 'hello lockbench-agent 1 0.0.1-other'\ncat >/dev/null\n");
	chmod(agent, 0755);
	snprintf(text, sizeof(text), "%s.2\n", henv.net);
	hosts_file(file, text);
	const char *args2[] = { "run", "--hosts", file, "--ssh-config", cfg, "--bind", bind,
				"--agent-path", agent, "--scenario", "holder-pause",
				"--strategy", "set-nx-px", "--out", out, "--no-report", "--no-status",
				NULL };
	rc = fx_lockbench(henv.dir, args2);
	said = fx_slurp(henv.dir, "output");
	cr_assert_eq(rc, 3, "exit %d:\n%s", rc, said);
	snprintf(want, sizeof(want), "host %s.2 runs another lockbench", henv.net);
	cr_assert(strstr(said, want) && strstr(said, "lockbench 0.0.1-other") &&
		  strstr(said, "this is lockbench " LOCKBENCH_VERSION), "%s", said);
}

/* lockbench killed -9 mid-run: its ssh goes with it (the run's janitor),
 * the agents' input ends, and nothing of lockbench's is left on the hosts. */
Test(hosts, kill_9_of_lockbench_leaves_nothing_on_the_hosts, .fini = hosts_fini)
{
	char file[PATH_MAX + 16], out[PATH_MAX + 16], cfg[PATH_MAX + 16], bind[40], text[200];
	char log[PATH_MAX + 16];

	HOSTS_UP(2);
	snprintf(file, sizeof(file), "%s/hosts", henv.dir);
	snprintf(text, sizeof(text), "%s.2\n%s.3\n", henv.net, henv.net);
	hosts_file(file, text);
	snprintf(out, sizeof(out), "%s/run", henv.dir);
	snprintf(cfg, sizeof(cfg), "%s/ssh_config", henv.dir);
	snprintf(bind, sizeof(bind), "%s.1", henv.net);
	snprintf(log, sizeof(log), "%s/output", henv.dir);
	const char *args[] = { "run", "--hosts", file, "--ssh-config", cfg, "--bind", bind,
			       "--strategy", "set-nx-px", "--clients", "4", "--duration", "30",
			       "--out", out, "--no-report", "--no-status", NULL };
	pid_t pid = fx_spawn_lockbench(args, log, log);
	/* its clients run on both hosts */
	int ok = 1;
	for (int k = 0; k < 300 && (ok = sh("for i in 1 2; do n=0; for q in $(ip netns pids "
					     "lbh-%s-$i); do grep -qa 'lockbench' /proc/$q/cmdline 2>/dev/null "
					     "&& n=$((n + 1)); done; (( n >= 3 )) || exit 1; done",
					     henv.tag)) != 0; k++)
		lb_sleep_ns(100 * LB_NS_PER_MS);
	cr_assert_eq(ok, 0, "the agents and their clients did not start:\n%s",
		     fx_slurp(henv.dir, "output"));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (int k = 0; k < 100 && (ok = sh("for i in 1 2; do for q in $(ip netns pids lbh-%s-$i); "
					     "do grep -qa 'lockbench' /proc/$q/cmdline 2>/dev/null && exit 1; "
					     "done; done; exit 0", henv.tag)) != 0; k++)
		lb_sleep_ns(100 * LB_NS_PER_MS);
	cr_assert_eq(ok, 0, "a process of lockbench's is left on a host 10 s after its kill -9");
	fx_nothing_left(pid);
}

/* No namespace needed: a hosts file's bad line, named (file, line, field,
 * expected), exit 2, before anything starts. */
Test(hosts, a_bad_hosts_file_line_is_refused_naming_it)
{
	char dir[] = "/tmp/lbhostsfile-XXXXXX", file[64];
	static const struct { const char *text, *says; } bad[] = {
		{ "# fine\nhost-a 2\nhost-b x\n", "line 3, field 2 ('x'): expected its clients, from 1 to" },
		{ "host-a 1 2\n", "line 1, field 3 ('2'): expected nothing more" },
		{ "-oProxyCommand=x\n", "line 1, field 1 ('-oProxyCommand=x'): expected [user@]host[:port]" },
		{ "host-a:99999\n", "line 1, field 1 ('host-a:99999'): expected a port from 1 to 65535" },
		{ "host-a;rm\n", "line 1, field 1 ('host-a;rm')" },
		{ "# nothing\n\n", "no host in it" },
		{ "host-a 2\nhost-b 2\n", "do not make the run's 3 (--clients)" },
	};

	cr_assert(fx_mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/hosts", dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		hosts_file(file, bad[i].text);
		const char *args[] = { "run", "--hosts", file, "--bind", "10.213.0.1", "--scenario",
				       "holder-pause", "--strategy", "set-nx-px", NULL };
		int rc = fx_lockbench(dir, args);
		const char *said = fx_slurp(dir, "output");
		cr_assert_eq(rc, 2, "'%s': exit %d:\n%s", bad[i].text, rc, said);
		cr_assert(strstr(said, file) && strstr(said, bad[i].says), "'%s': expected '%s' in:\n%s",
			  bad[i].text, bad[i].says, said);
	}
}
