/*
 * test_hosts.c - clients on many hosts: `lockbench agent` (a share of a
 * run's clients on this host, read from its standard input, its records
 * streamed back) against a real redis-server, its hostile input refused line
 * by line, and nothing of it left when its input ends.
 */
#include <criterion/criterion.h>
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
