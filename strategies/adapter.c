/*
 * adapter.c - an external strategy: one adapter process per client, spoken
 * to in the line protocol of docs/adapters.md (version LB_ADAPTER_PROTOCOL):
 * the process and its pipes; or, with adapter hosts (lb_adapter_use_hosts),
 * a session in a shared host process, the same protocol on a Unix socket
 * connection (only how the stream is obtained differs). What a line means is
 * adapter_proto.c's (pure); which adapters there are (manifests, exec:,
 * --check) adapter_registry.c's.
 *
 *   lockbench                      adapter
 *   hello 3                    ->
 *                              <-  hello 3 library=L version=V language=X extend=yes lost=no
 *                                  extends=never|reported|silently claims=MDO failpoints=A,B
 *   config nodes=URL,.. [sentinels=H:P,.. master=NAME [sentinel_auth=URL]]
 *          [tls_ca=PATH] [tls_cert=PATH tls_key=PATH] [tls_insecure=1] key=K ttl_ms=T
 *          wait=one|library
 *          timeout_ms=N client=C
 *                              <-  ok | error MESSAGE
 *   acquire                    ->  acquired [token=T] [fence=N] [validity_ms=N] | busy | error M
 *   release                    ->  released | not-owned | error M
 *   extend MS                  ->  extended | not-owned | unsupported | error M
 *   quit                       ->  bye
 *                              <-  lost MESSAGE   (at any time: the library says the lock is gone)
 *                              <-  extended ttl_ms=N (at any time, v2: it extended the lease)
 *                              <-  at NAME  (v3, while acquire, release or extend is
 *                                  answered: its code is at failpoint NAME)
 *   go                         ->  (it goes on)
 *
 * What goes wrong, and what lockbench does (docs/adapters.md says the same):
 * a program that is missing, exits before its hello, speaks another version,
 * prints a malformed line or misses a request's deadline breaks the run:
 * LB_EPROTO, a message naming the adapter, the client and the line, and the
 * client exits with status 2, which fails the run. An adapter that dies
 * after its hello (the library took its process down) is that client dying:
 * LB_EDIED, and the client kills itself, so a holder's death is recorded as
 * one (a finding, not a harness failure).
 */
#include "adapter.h"
#include "adapter_proto.h"
#include "plumbing.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define START_LIMIT_MS 15000  /* hello and config: an interpreter loading a library */
/* and a session in a host, this much more for each session its host serves,
 * for every request: a host sets its sessions up one after another (the last
 * of node-redlock 5's 1,024 five-node sessions a host answered its hello after
 * about 17 s with nothing else running, docs/adapters.md), and a Node host
 * answers them all on one event loop */
#define HOST_SESSION_MS 40
#define LB_AT_MAX 64          /* 'at' lines one request may send (Redlock: one a node) */
#define LB_STR_(x) #x
#define LB_STR(x) LB_STR_(x)
#define QUIT_LIMIT_MS LB_ADAPTER_QUIT_MS

struct adapter {
	struct lb_lock_base base;
	const struct lb_adapter_def *def;
	pid_t pid;                 /* its own process, or 0 (a session in a host) */
	int host;                  /* the host whose session it is (lb_adapter_use_hosts), or -1 */
	int to, from;              /* requests to the adapter, its lines back (non-blocking) */
	struct lb_proto_reader rd; /* its bytes not yet taken as lines */
	int version;               /* its hello's; 0 before */
	enum lb_proto_extends extends;
	enum lb_proto_req last;    /* the request last answered, for messages */
	bool greeted;              /* past its hello: a death now is the client's */
	bool lost;                 /* a lost notice since the last acquire */
	bool can_extend, can_lost;
	bool broken;               /* a protocol failure: every call fails */
	bool own_group;            /* (a hello probe) its own process group, killed whole */
	bool eof;                  /* its stdout closed (seen inside a section) */
	char pending[320];         /* a protocol error seen inside a section, for the
				      next request to report */
	enum lb_proto_req abandoned; /* a request given up on when the run stopped: its
					late answer is dropped, not taken for another's */
	int64_t lease_end_ns;      /* the lease's end as the adapter told it, 0 unknown */
	char failpoints[LB_PROTO_FAILPOINTS_MAX][LB_PROTO_FAILPOINT_LEN]; /* its hello's (v3) */
	int n_failpoints;
};

/* ---- lines ---- */

/* adapter-test's view of every line (lb_adapter_trace), or NULL */
static lb_adapter_tracer tracer;
static void *tracer_arg;

void lb_adapter_trace(lb_adapter_tracer fn, void *arg)
{
	tracer = fn;
	tracer_arg = arg;
}

static void traced(const struct adapter *a, bool sent, const char *line)
{
	if (tracer)
		tracer(tracer_arg, a, sent, line, lb_now_ns());
}

/* The adapter broke the protocol: said once, with what it sent, and every
 * later call fails (LB_EPROTO). */
static int protocol_error(struct adapter *a, const char *what, const char *line)
{
	char shown[220] = "";

	a->broken = true;
	if (line)
		lb_proto_printable(line, shown, sizeof(shown));
	char who[48];
	if (a->base.cfg.client >= 0)
		snprintf(who, sizeof(who), "client %d", a->base.cfg.client);
	else
		snprintf(who, sizeof(who), "its hello, asked before the run");
	lb_errorf("adapter %s (%s): %s%s%s%s", a->def->name, who, what,
		  line ? ": got '" : "", shown, line ? "'" : "");
	return LB_EPROTO;
}

/* The adapter has gone: a broken run before its hello, a death after it.
 * Half a line left unended is a protocol error, never a quiet death: the
 * adapter was answering when it went. */
static int gone(struct adapter *a, const char *how)
{
	int status = 0;
	char why[96] = "";

	if (a->rd.len) {
		char part[LB_PROTO_LINE_MAX + 1];
		size_t n = a->rd.len < 200 ? a->rd.len : 200;
		memcpy(part, a->rd.buf, n);
		part[n] = '\0';
		a->rd.len = 0;
		return protocol_error(a, "its output ended in the middle of a line (no newline "
				      "after it)", part);
	}

	/* its pipe closed: it is exiting; give it a moment to be reaped */
	int64_t until = lb_now_ns() + 200 * LB_NS_PER_MS;
	pid_t got = 0;
	while (a->pid > 0 && (got = waitpid(a->pid, &status, WNOHANG)) == 0 && lb_now_ns() < until)
		lb_sleep_ns(LB_NS_PER_MS);
	if (a->pid > 0 && got == a->pid) {
		a->pid = 0;
		if (WIFEXITED(status))
			snprintf(why, sizeof(why), " (exit status %d)", WEXITSTATUS(status));
		else if (WIFSIGNALED(status))
			snprintf(why, sizeof(why), " (signal %d)", WTERMSIG(status));
	}
	if (a->host >= 0) { /* a session ends only when asked: its host died or dropped it */
		char msg[200];
		snprintf(msg, sizeof(msg), "its adapter host %d %s (the host died, or dropped this "
			 "session); the host's stderr is in adapter-host-%d.log", a->host, how, a->host);
		return protocol_error(a, msg, NULL);
	}
	if (!a->greeted) {
		char msg[200];
		snprintf(msg, sizeof(msg), "%s before its hello%s; its stderr is in %s", how, why,
			 a->base.cfg.log_path ? a->base.cfg.log_path : "/dev/null");
		return protocol_error(a, msg, NULL);
	}
	if (a->pid > 0 && got == 0) /* its output closed, the process still there */
		lb_errorf("adapter %s (client %d) closed its output and went on running: it is "
			  "stopped, and recorded as that client's death", a->def->name,
			  a->base.cfg.client);
	else
		lb_errorf("adapter %s (client %d) %s%s: the library took its process down; "
			  "recorded as that client's death", a->def->name, a->base.cfg.client, how,
			  why);
	a->broken = true;
	return LB_EDIED;
}

/* Has the run been stopped? Then a blocked request gives up. */
static bool cancelled(const struct adapter *a)
{
	return a->base.cfg.cancel && atomic_load(a->base.cfg.cancel);
}

/* @a + @b (@b >= 0), at most INT64_MAX: a deadline never wraps around. */
static int64_t sat_add(int64_t a, int64_t b)
{
	return b > INT64_MAX - a ? INT64_MAX : a + b;
}

/* Now plus @ms (>= 0), saturating: no deadline or lease end made from a
 * number overflows (the protocol's own are bounded too, adapter_proto.h). */
static int64_t after_ms(int64_t ms)
{
	int64_t now = lb_now_ns();
	return ms > (INT64_MAX - now) / LB_NS_PER_MS ? INT64_MAX : now + ms * LB_NS_PER_MS;
}

/* Wait for @events on @fd until @deadline_ns (0: none; the run's cancel flag
 * still ends it), 50 ms at a time: 1 ready | 0 the deadline passed |
 * negative status. @deadline_ns == now: one look, no wait. */
static int wait_fd(struct adapter *a, int fd, short events, int64_t deadline_ns)
{
	for (;;) {
		int64_t now = lb_now_ns(), wait_ms = 50;
		if (deadline_ns && (deadline_ns - now) / LB_NS_PER_MS < wait_ms)
			wait_ms = deadline_ns > now ? (deadline_ns - now) / LB_NS_PER_MS : 0;
		struct pollfd p = { .fd = fd, .events = events };
		int r = poll(&p, 1, (int)wait_ms);
		if (r < 0 && errno != EINTR)
			return protocol_error(a, "poll failed", NULL);
		if (r > 0)
			return 1;
		if (deadline_ns && lb_now_ns() >= deadline_ns)
			return 0;
		if (cancelled(a))
			return LB_ECANCELED;
	}
}

/* Write @line and its newline by @deadline_ns, never blocking past it: an
 * adapter that stops reading cannot hold the run. */
static int send_line(struct adapter *a, const char *line, int64_t deadline_ns)
{
	size_t n = strlen(line), off = 0;
	char out[LB_PROTO_LINE_MAX + 2];

	if (n > LB_PROTO_LINE_MAX)
		return protocol_error(a, "request too long", NULL);
	memcpy(out, line, n);
	out[n++] = '\n';
	traced(a, true, line);
	while (off < n) {
		ssize_t w = write(a->to, out + off, n - off);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN)
			return gone(a, "exited");
		int rc = wait_fd(a, a->to, POLLOUT, deadline_ns);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			char msg[120];
			snprintf(msg, sizeof(msg), "did not read its request '%.20s' in time: it "
				 "stopped reading its standard input", line);
			return protocol_error(a, msg, NULL);
		}
	}
	return 0;
}

/* Read what the pipe holds now into the reader, without waiting: 1 bytes
 * came | 0 none | -1 its end closed. */
static int take_bytes(struct adapter *a)
{
	for (;;) {
		if (!lb_proto_room(&a->rd))
			return 1; /* a line too long: next_line says so */
		char chunk[LB_PROTO_LINE_MAX];
		ssize_t k = read(a->from, chunk, lb_proto_room(&a->rd));
		if (k > 0) {
			lb_proto_feed(&a->rd, chunk, (size_t)k);
			return 1;
		}
		if (k < 0 && errno == EINTR)
			continue;
		return k == 0 || errno != EAGAIN ? -1 : 0;
	}
}

/* The next line, by @deadline_ns (0: none; the run's cancel flag still ends
 * it; now: only what has come already): 1 a line in @line | 0 no line by the
 * deadline | -1 the adapter's end closed | negative status. It reads before
 * it waits: an answer is often there already (the adapter runs on another
 * core), and a read that finds it saves the poll (waiting first was
 * measured: more system calls a section, docs/adapters.md). */
static int next_line(struct adapter *a, int64_t deadline_ns, char *line)
{
	for (;;) {
		int got = lb_proto_next_line(&a->rd, line);
		if (got > 0) {
			traced(a, false, line);
			return 1;
		}
		if (got < 0)
			return protocol_error(a, "a line longer than 4096 bytes", line);
		int rc = take_bytes(a);
		if (rc > 0)
			continue;
		if (rc < 0)
			return -1;
		if (deadline_ns && lb_now_ns() >= deadline_ns)
			return 0;
		if ((rc = wait_fd(a, a->from, POLLIN, deadline_ns)) <= 0)
			return rc;
	}
}

/* A notice: take it. */
static void take_notice(struct adapter *a, const struct lb_proto_msg *m)
{
	if (m->kind == LB_MSG_LOST)
		a->lost = true;
	else if (m->kind == LB_MSG_LEASE && a->extends == LB_EXTENDS_REPORTED)
		a->lease_end_ns = after_ms(m->ttl_ms);
}

/* Is @line the late answer to the request given up on when the run
 * stopped? Then it is dropped (once). */
static bool late_answer(struct adapter *a, const char *line)
{
	struct lb_proto_msg m;
	char why[200];

	if (a->abandoned == LB_REQ_NONE ||
	    lb_proto_parse(line, a->abandoned, a->version, a->can_lost, &m, why, sizeof(why)) < 0 ||
	    m.notice)
		return false;
	if (m.kind == LB_MSG_AT) { /* it goes on with the request given up on: its answer follows */
		send_line(a, "go", after_ms(QUIT_LIMIT_MS));
		return true;
	}
	a->abandoned = LB_REQ_NONE;
	return true;
}

/* Take every line that has come unasked, without waiting: notices are taken;
 * anything else is a protocol error, kept in a->pending for the next request
 * (inside a section nothing is reported: the section goes on). */
static void drain(struct adapter *a)
{
	char line[LB_PROTO_LINE_MAX + 1], why[200];
	struct lb_proto_msg m;

	while (!a->eof && !a->pending[0]) {
		int got = lb_proto_next_line(&a->rd, line);
		if (got < 0) {
			snprintf(a->pending, sizeof(a->pending), "a line longer than 4096 bytes");
			return;
		}
		if (got == 0) {
			int rc = take_bytes(a);
			if (rc < 0)
				a->eof = true;
			if (rc <= 0)
				return;
			continue;
		}
		traced(a, false, line);
		if (late_answer(a, line))
			continue;
		if (lb_proto_parse(line, LB_REQ_NONE, a->version, a->can_lost, &m, why, sizeof(why)) < 0) {
			char shown[120];
			lb_proto_printable(line, shown, sizeof(shown));
			snprintf(a->pending, sizeof(a->pending), "an unrequested line after the answer to "
				 "'%s' (%.100s): got '%.100s'", lb_proto_req_name(a->last), why, shown);
			return;
		}
		take_notice(a, &m);
	}
}

/* "at NAME": the adapter's code is at failpoint NAME (one its hello named).
 * What a scenario armed there acts now, in this client (a stall, a crash),
 * exactly as at a C recipe's failpoint; then the adapter is told to go on. */
static int at_failpoint(struct adapter *a, const char *name)
{
	bool named = false;

	for (int i = 0; i < a->n_failpoints; i++)
		named |= !strcmp(a->failpoints[i], name);
	if (!named)
		return protocol_error(a, "announced a failpoint its hello did not name", name);
	/* held still meanwhile: a crash here closes its pipe before the kernel
	 * kills it (PDEATHSIG comes after the dying client's files are closed),
	 * and an adapter that took that end of file for "go on" would send the
	 * command after the failpoint. Stopped, it sends nothing, and dies so. */
	if (a->pid > 0) /* a session in a host: no fault acts at failpoints (run_hosts.c) */
		kill(a->pid, SIGSTOP);
	lb_failpoint(name);
	if (a->pid > 0)
		kill(a->pid, SIGCONT);
	return send_line(a, "go", after_ms(START_LIMIT_MS));
}

/* Send @req (asking @asked) and read its answer into @m (notices taken on
 * the way). Anything that came unasked since the last answer is looked at
 * first: a stray reply is a protocol error here, never taken for this
 * request's answer. */
static int request(struct adapter *a, const char *req, enum lb_proto_req asked, int64_t limit_ms,
		   struct lb_proto_msg *m)
{
	char line[LB_PROTO_LINE_MAX + 1], why[300];
	int rc;

	if (a->broken)
		return a->greeted ? LB_EDIED : LB_EPROTO;
	drain(a);
	if (a->pending[0])
		return protocol_error(a, a->pending, NULL);
	if (a->eof)
		return gone(a, "exited");
	int64_t deadline = limit_ms > 0 ? after_ms(limit_ms) : 0;
	if ((rc = send_line(a, req, deadline ? deadline : after_ms(START_LIMIT_MS))) < 0)
		return rc;
	for (int ats = 0;;) {
		rc = next_line(a, deadline, line);
		if (rc > 0 && deadline && lb_now_ns() >= deadline)
			rc = 0; /* a stream of lines does not outlast the deadline */
		if (rc > 0 && cancelled(a) && asked != LB_REQ_QUIT)
			rc = LB_ECANCELED;
		if (rc == -1)
			return gone(a, "exited");
		if (rc == LB_ECANCELED)
			a->abandoned = asked; /* its answer may still come */
		if (rc < 0)
			return rc;
		if (rc == 0) {
			char msg[96];
			snprintf(msg, sizeof(msg), "no answer to '%s' within %lld ms", req, (long long)limit_ms);
			return protocol_error(a, msg, NULL);
		}
		if (asked == LB_REQ_QUIT && !strncmp(line, "at ", 3)) {
			/* the request given up on reached a failpoint and took our quit for
			 * its go: it will answer that request, then wait for a request */
			if (++ats > LB_AT_MAX)
				return protocol_error(a, "kept announcing failpoints after 'quit'", line);
			if ((rc = send_line(a, req, deadline)) < 0)
				return rc;
			continue;
		}
		if (late_answer(a, line))
			continue;
		if (lb_proto_parse(line, asked, a->version, a->can_lost, m, why, sizeof(why)) < 0)
			return protocol_error(a, why, line);
		if (m->kind == LB_MSG_AT) {
			int64_t spent = lb_now_ns();
			if (++ats > LB_AT_MAX)
				return protocol_error(a, "announced more failpoints than one request may "
						      "reach (" LB_STR(LB_AT_MAX) ")", line);
			if ((rc = at_failpoint(a, m->at)) < 0)
				return rc;
			if (deadline) /* the stall is the scenario's, not the adapter's slowness */
				deadline = sat_add(deadline, lb_now_ns() - spent);
			continue;
		}
		if (!m->notice)
			break;
		take_notice(a, m);
	}
	a->last = asked;
	return 0;
}

/* ---- the process ---- */

/* --adapter-arg values, appended to every adapter's arguments */
static const char *const *exec_args;
static int n_exec_args;

void lb_adapter_set_exec_args(const char *const *args, int n)
{
	exec_args = args;
	n_exec_args = n;
}

static void __attribute__((noreturn)) exec_program(const struct lb_adapter_def *d);

static void child(const struct adapter *a, int in_fd, int out_fd, pid_t parent)
{
	const struct lb_lock_cfg *cfg = &a->base.cfg;
	static const int reset[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	if (a->own_group)
		setpgid(0, 0); /* what it starts goes with it (lb_adapter_hello) */
	dup2(in_fd, STDIN_FILENO);
	dup2(out_fd, STDOUT_FILENO);
	int log = open(cfg->log_path ? cfg->log_path : "/dev/null",
		       O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log >= 0)
		dup2(log, STDERR_FILENO);
	for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
		signal(reset[i], SIG_DFL);
	/* no file it writes, its log (stderr) first, grows past LB_ADAPTER_LOG_MAX:
	 * a write beyond fails (EFBIG; SIGXFSZ ignored, which exec keeps) */
	struct rlimit fsize = { LB_ADAPTER_LOG_MAX, LB_ADAPTER_LOG_MAX };
	setrlimit(RLIMIT_FSIZE, &fsize);
	signal(SIGXFSZ, SIG_IGN);
	/* the shim: client clock faults reach the library, and its connections
	 * come from the client's own address, as lockbench's clients' do */
	const char *source = cfg->n_nodes ? cfg->nodes[0]->source : "";
	if (cfg->clock_shim && (cfg->clock_file || source[0])) {
		setenv("LD_PRELOAD", cfg->clock_shim, 1);
		if (cfg->clock_file)
			setenv("LOCKBENCH_CLOCK_FILE", cfg->clock_file, 1);
		if (source[0])
			setenv("LOCKBENCH_SOURCE_ADDR", source, 1);
	}
	exec_program(a->def);
}

/* Exec @d's program: its argv, then the run's --adapter-arg values. */
static void __attribute__((noreturn)) exec_program(const struct lb_adapter_def *d)
{
	const char *argv[2 * LB_ADAPTER_MAX_ARGS + 1];
	int n = 0;

	for (; d->argv[n]; n++)
		argv[n] = d->argv[n];
	for (int i = 0; i < n_exec_args && n < 2 * LB_ADAPTER_MAX_ARGS; i++)
		argv[n++] = exec_args[i];
	argv[n] = NULL;
	/* runs: (manifests) the interpreter a manifest names, or the user's
	 * exec:PATH */
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "lockbench: cannot run %s: %s\n", d->argv[0], strerror(errno));
	_exit(127);
}

/* ---- hosts: many clients' sessions in one adapter process ---- */

static const char *hosts_dir; /* where the hosts' sockets are; NULL: no hosts */
static int n_hosts, host_sessions;

void lb_adapter_use_hosts(const char *dir, int n, int sessions)
{
	hosts_dir = n > 0 ? dir : NULL;
	n_hosts = n > 0 ? n : 0;
	host_sessions = n > 0 && sessions > 0 ? sessions : 0;
}

/* What a session in a host waits beyond a process of its own: the turns of
 * the host's other sessions (0 without hosts). */
static int64_t host_turns_ms(void)
{
	return (int64_t)host_sessions * HOST_SESSION_MS;
}

/* How long hello and config may take: an interpreter's start, and in a host
 * the sessions set up before this one. */
static int64_t start_limit_ms(void)
{
	return START_LIMIT_MS + host_turns_ms();
}

int lb_adapter_host_path(const char *dir, int host, char *buf, size_t len)
{
	struct sockaddr_un sa;
	int n = snprintf(buf, len, "%s/h%d", dir, host);

	return n < 0 || (size_t)n >= len || (size_t)n >= sizeof(sa.sun_path) ? LB_EINVAL : 0;
}

void lb_adapter_exec_host(const struct lb_adapter_def *d, const char *socket_path)
{
	/* a host serves every session on its socket; the variable is how it
	 * knows it is one (docs/adapters.md) */
	setenv(LB_ADAPTER_HOST_ENV, socket_path, 1);
	struct rlimit fsize = { LB_ADAPTER_LOG_MAX, LB_ADAPTER_LOG_MAX };
	setrlimit(RLIMIT_FSIZE, &fsize);
	signal(SIGXFSZ, SIG_IGN);
	exec_program(d);
}

/* Connect to host @path by @deadline_ns: a socket, or a negative status. A
 * host's listen queue may be full while thousands of clients start: try again. */
static int host_connect(const char *path, int64_t deadline_ns)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.107s", path); /* it fits: lb_adapter_host_path */
	for (;;) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return LB_ESYS;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		int e = errno;
		close(fd);
		if ((e != EAGAIN && e != EINTR) || lb_now_ns() >= deadline_ns) {
			errno = e;
			return LB_ESYS;
		}
		lb_sleep_ns(5 * LB_NS_PER_MS);
	}
}

/* A session in host client % n_hosts, instead of a process of its own. */
static int open_session(struct adapter *a)
{
	char path[PATH_MAX];

	a->host = a->base.cfg.client % n_hosts;
	a->broken = true; /* until connected: said here, not as a process that did not start */
	if (lb_adapter_host_path(hosts_dir, a->host, path, sizeof(path)) < 0) {
		lb_errorf("adapter %s (client %d): the path of its adapter host's socket is too long",
			  a->def->name, a->base.cfg.client);
		return LB_EINVAL;
	}
	int fd = host_connect(path, after_ms(start_limit_ms()));
	if (fd >= 0 && (a->to = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
		close(fd), fd = LB_ESYS;
	if (fd < 0) {
		lb_errorf("adapter %s (client %d): cannot connect to its adapter host %d (%s): %s",
			  a->def->name, a->base.cfg.client, a->host, path, strerror(errno));
		return fd;
	}
	a->from = fd;
	a->broken = false;
	return 0;
}

/* A client and its adapter on one CPU: the @k-th the process may run on
 * (client k), so that a request and its reply are each a switch on that CPU.
 * Left to the scheduler, the adapter sleeps on the other CPU and every line
 * wakes it there: on the 2-vCPU development VM that wake-up (an interrupt
 * through the hypervisor) made a null-adapter section 80 us where one CPU
 * gives 20 us (docs/adapters.md). Best effort: a CPU set that refuses it
 * keeps the scheduler's choice. */
static void share_cpu(int k)
{
	cpu_set_t allowed, one;
	int n = 0;

	if (k < 0 || sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return;
	int count = CPU_COUNT(&allowed);
	if (count <= 1)
		return;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed) && n++ == k % count) {
			CPU_ZERO(&one);
			CPU_SET(c, &one);
			sched_setaffinity(0, sizeof(one), &one);
			return;
		}
}

static int spawn(struct adapter *a)
{
	int in[2], out[2];
	pid_t parent = getpid();

	share_cpu(a->base.cfg.client); /* the child inherits it */

	if (pipe2(in, O_CLOEXEC) < 0)
		return LB_ESYS;
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return LB_ESYS;
	}
	fflush(NULL);
	a->pid = fork();
	if (a->pid == 0)
		child(a, in[0], out[1], parent);
	close(in[0]);
	close(out[1]);
	a->to = in[1];
	a->from = out[0];
	/* never blocked by the adapter: every read and write has the run's deadline */
	fcntl(a->to, F_SETFL, fcntl(a->to, F_GETFL) | O_NONBLOCK);
	fcntl(a->from, F_SETFL, fcntl(a->from, F_GETFL) | O_NONBLOCK);
	if (a->pid < 0) {
		a->pid = 0;
		return LB_ESYS;
	}
	return 0;
}

/* A file's absolute path %XX-encoded as the URLs of config are (a byte
 * outside letters, digits and - . _ ~ / as %XX: no space, no control byte,
 * ASCII only), into @out; false when it does not resolve or fit. */
static bool path_word(const char *path, char *out, size_t len)
{
	char abs[PATH_MAX];
	size_t o = 0;

	errno = 0;
	if (!realpath(path, abs))
		return false;
	for (const unsigned char *c = (const unsigned char *)abs; *c; c++) {
		if (o + 4 > len) {
			errno = 0;
			return false;
		}
		if (isalnum(*c) || strchr("-._~/", *c))
			out[o++] = (char)*c;
		else
			o += (size_t)snprintf(out + o, len - o, "%%%02X", *c);
	}
	out[o] = '\0';
	return true;
}

/* On rediss:// nodes, config's TLS words after *@n bytes of @req (up to
 * @room): tls_ca=PATH, tls_cert=PATH tls_key=PATH, tls_insecure=1, those
 * given (docs/adapters.md). 0, or LB_EINVAL (said) when a file's path does
 * not resolve or fit: never a config without the CA the user gave. */
static int tls_words(const struct lb_lock_cfg *cfg, char *req, size_t *n, size_t room)
{
	const char *names[3] = { "tls_ca", "tls_cert", "tls_key" };
	const char *opts[3] = { "--tls-ca", "--tls-cert", "--tls-key" };
	const char *files[3] = { cfg->tls_ca, cfg->tls_cert, cfg->tls_key };
	bool tls = false;

	for (size_t i = 0; i < cfg->n_nodes; i++)
		tls = tls || cfg->nodes[i]->tls;
	for (int i = 0; tls && i < 3; i++) {
		char word[1024];
		if (!files[i])
			continue;
		if (!path_word(files[i], word, sizeof(word)) || *n + strlen(word) + 16 >= room) {
			lb_errorf("client %d: %s %s: %s", cfg->client, opts[i], files[i],
				  errno ? strerror(errno) : "its path is too long for the config line");
			return LB_EINVAL;
		}
		*n += (size_t)snprintf(req + *n, room - *n, " %s=%s", names[i], word);
	}
	if (tls && cfg->tls_insecure && *n + 16 < room)
		*n += (size_t)snprintf(req + *n, room - *n, " tls_insecure=1");
	return 0;
}

static int handshake(struct adapter *a)
{
	const struct lb_lock_cfg *cfg = &a->base.cfg;
	char req[LB_PROTO_LINE_MAX];
	struct lb_proto_msg m;
	int rc;
	size_t n = 0;

	snprintf(req, sizeof(req), "hello %d", LB_ADAPTER_PROTOCOL);
	if ((rc = request(a, req, LB_REQ_HELLO, start_limit_ms(), &m)) < 0)
		return rc;
	a->greeted = true;
	a->version = m.version;
	a->can_extend = m.can_extend;
	a->can_lost = m.can_lost;
	a->extends = m.extends;
	a->n_failpoints = m.n_failpoints;
	memcpy(a->failpoints, m.failpoints, sizeof(a->failpoints));
	n += (size_t)snprintf(req, sizeof(req), "config nodes=");
	for (size_t i = 0; i < cfg->n_nodes && n < sizeof(req) - 1200; i++) {
		char url[1024]; /* with the user, password and database of --redis */
		lb_node_url(cfg->nodes[i], url, sizeof(url));
		n += (size_t)snprintf(req + n, sizeof(req) - n, "%s%s", i ? "," : "", url);
	}
	/* on a Sentinel deployment: the library asks the Sentinels itself, through
	 * its own Sentinel support (docs/adapters.md) */
	const struct lb_node *n0 = cfg->n_nodes ? cfg->nodes[0] : NULL;
	for (int i = 0; n0 && i < n0->n_sentinels && n < sizeof(req) - 200; i++)
		n += (size_t)snprintf(req + n, sizeof(req) - n, "%s%s:%d", i ? "," : " sentinels=",
				      n0->sentinel[i].host, n0->sentinel[i].port);
	if (n0 && n0->n_sentinels > 0 && n < sizeof(req) - 200)
		n += (size_t)snprintf(req + n, sizeof(req) - n, " master=%s", n0->master);
	/* the Sentinels' own AUTH (the first of --sentinel's URLs that has one),
	 * for a library whose Sentinel client takes one (redis-py's sentinel_kwargs) */
	for (int i = 0; n0 && i < n0->n_sentinels; i++) {
		if (!n0->sentinel[i].pass[0])
			continue;
		struct lb_node s;
		char url[1024];
		lb_node_init_local(&s, n0->sentinel[i].port, 0);
		snprintf(s.host, sizeof(s.host), "%s", n0->sentinel[i].host);
		memcpy(s.user, n0->sentinel[i].user, sizeof(s.user)); /* the same sizes */
		memcpy(s.pass, n0->sentinel[i].pass, sizeof(s.pass));
		lb_node_url(&s, url, sizeof(url));
		if (n + strlen(url) + 16 < sizeof(req) - 200)
			n += (size_t)snprintf(req + n, sizeof(req) - n, " sentinel_auth=%s", url);
		break;
	}
	if ((rc = tls_words(cfg, req, &n, sizeof(req) - 200)) < 0)
		return rc;
	snprintf(req + n, sizeof(req) - n, " key=%s ttl_ms=%lld wait=%s timeout_ms=%lld client=%d",
		 a->base.key, (long long)cfg->ttl_ms, cfg->library_wait ? "library" : "one",
		 (long long)(cfg->timeout_ms > 0 ? cfg->timeout_ms : 2000), cfg->client);
	a->greeted = false; /* a death while configuring is still a broken adapter */
	if ((rc = request(a, req, LB_REQ_CONFIG, start_limit_ms(), &m)) < 0)
		return rc;
	a->greeted = true;
	if (m.kind == LB_MSG_ERROR)
		return protocol_error(a, "refused its configuration", m.text);
	return 0;
}

static void reap(struct adapter *a)
{
	pid_t group = a->own_group ? a->pid : 0;

	if (a->pid <= 0)
		return;
	int64_t until = after_ms(QUIT_LIMIT_MS);
	while (waitpid(a->pid, NULL, WNOHANG) == 0) {
		if (lb_now_ns() > until) {
			kill(a->pid, SIGKILL);
			waitpid(a->pid, NULL, 0);
			break;
		}
		lb_sleep_ns(2 * LB_NS_PER_MS);
	}
	a->pid = 0;
	if (group > 0)
		kill(-group, SIGKILL); /* anything it started and left behind */
}

static void adapter_destroy(void *self)
{
	struct adapter *a = self;
	struct lb_proto_msg m;

	if (!a)
		return;
	a->base.cfg.cancel = NULL; /* the run is over: quitting is not cancelled */
	if (a->pid > 0 && !a->broken && a->greeted)
		request(a, "quit", LB_REQ_QUIT, QUIT_LIMIT_MS, &m); /* "bye", or not: it is reaped */
	if (a->to >= 0)
		close(a->to);
	if (a->from >= 0)
		close(a->from);
	reap(a);
	lb_base_destroy(a);
}

/* lb_adapter_own_groups */
static bool own_groups;

void lb_adapter_own_groups(bool on)
{
	own_groups = on;
}

static void *adapter_create(const struct lb_lock_cfg *cfg)
{
	struct adapter *a = lb_base_alloc(cfg, sizeof(*a));

	if (!a)
		return NULL;
	a->def = cfg->impl;
	a->own_group = own_groups;
	a->to = a->from = -1;
	a->host = -1;
	if (!a->def || (hosts_dir ? open_session(a) : spawn(a)) < 0 || handshake(a) < 0) {
		if (a->def && !hosts_dir && a->pid <= 0 && !a->broken) /* the spawn, not its hello */
			lb_errorf("adapter %s (client %d): cannot start %s: %s", a->def->name, cfg->client,
				  a->def->argv[0], strerror(errno));
		a->broken = true;
		adapter_destroy(a);
		return NULL;
	}
	return a;
}

int lb_adapter_hello(const struct lb_adapter_def *d, struct lb_proto_msg *hello)
{
	struct adapter a = { .def = d, .to = -1, .from = -1, .host = -1, .own_group = true };
	struct lb_proto_msg bye;
	char req[32];
	int rc;

	a.base.cfg.client = -1;
	snprintf(req, sizeof(req), "hello %d", LB_ADAPTER_PROTOCOL);
	if ((rc = spawn(&a)) == 0 && (rc = request(&a, req, LB_REQ_HELLO, START_LIMIT_MS, hello)) == 0) {
		a.greeted = true;
		a.version = hello->version;
		request(&a, "quit", LB_REQ_QUIT, QUIT_LIMIT_MS, &bye); /* "bye", or not: reaped */
	}
	if (a.to >= 0)
		close(a.to);
	if (a.from >= 0)
		close(a.from);
	pid_t group = a.pid;
	reap(&a);
	if (group > 0)
		kill(-group, SIGKILL); /* anything it started and left behind */
	return rc;
}

int64_t lb_adapter_cpu_ns(const void *state)
{
	const struct adapter *a = state;
	clockid_t clock;
	struct timespec ts;

	if (!a || a->pid <= 0 || clock_getcpuclockid(a->pid, &clock) != 0 ||
	    clock_gettime(clock, &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * LB_NS_PER_S + ts.tv_nsec;
}

pid_t lb_adapter_pid(const void *state)
{
	const struct adapter *a = state;
	return a ? a->pid : 0;
}

static int64_t limit_ms(const struct adapter *a);

int64_t lb_adapter_limit_ms(const void *state)
{
	return limit_ms(state);
}

int lb_adapter_ask(void *state, const char *req, enum lb_proto_req asked, struct lb_proto_msg *m)
{
	struct adapter *a = state;
	return request(a, req, asked, asked == LB_REQ_QUIT ? QUIT_LIMIT_MS : limit_ms(a), m);
}

int lb_adapter_quit(void *state, struct lb_proto_msg *m, int64_t *exit_ms, int *status)
{
	struct adapter *a = state;
	int rc = request(a, "quit", LB_REQ_QUIT, QUIT_LIMIT_MS, m);
	int64_t t0 = lb_now_ns(), until = t0 + QUIT_LIMIT_MS * LB_NS_PER_MS;

	*exit_ms = -1;
	*status = -1;
	a->broken = true; /* asked once: destroy does not ask again */
	while (a->pid > 0 && lb_now_ns() < until) {
		pid_t got = waitpid(a->pid, status, WNOHANG);
		if (got == a->pid) {
			*exit_ms = (lb_now_ns() - t0) / LB_NS_PER_MS;
			if (a->own_group)
				kill(-a->pid, SIGKILL); /* what it started and left behind */
			a->pid = 0;
			break;
		}
		lb_sleep_ns(LB_NS_PER_MS);
	}
	return rc;
}

/* ---- the ops ---- */

/* One request's deadline: two network timeouts per node (a command and a
 * retry, one node after another at worst), and 2 s to spare; in a host, the
 * other sessions' turns too. */
static int64_t limit_ms(const struct adapter *a)
{
	int64_t t = a->base.cfg.timeout_ms > 0 ? a->base.cfg.timeout_ms : 2000;
	return 2 * t * (int64_t)(a->base.cfg.n_nodes ? a->base.cfg.n_nodes : 1) + 2000 +
	       host_turns_ms();
}

static int adapter_acquire(void *self, struct lb_grant *grant)
{
	struct adapter *a = self;
	struct lb_proto_msg m;
	int rc;

	/* --wait library: the library waits as it does by default, for as long
	 * as it does; only the end of the run stops it */
	if ((rc = request(a, "acquire", LB_REQ_ACQUIRE, a->base.cfg.library_wait ? 0 : limit_ms(a),
			  &m)) < 0)
		return rc;
	if (m.kind == LB_MSG_BUSY)
		return LB_EBUSY;
	if (m.kind == LB_MSG_ERROR) {
		snprintf(a->base.said, sizeof(a->base.said), "%.*s", LB_SAID_MAX - 1, m.text);
		return LB_EREDIS;
	}
	a->lost = false;
	/* the key was set before this answer came: the lease ends no later than
	 * now + its length, unless the library extends it without saying so */
	a->lease_end_ns = a->extends == LB_EXTENDS_SILENTLY ? 0 :
			  after_ms(a->base.cfg.ttl_ms);
	snprintf(a->base.token, sizeof(a->base.token), "%.32s", m.token);
	if (m.fence >= 0)
		grant->fence = m.fence;
	if (m.validity_ms >= 0)
		grant->validity_ms = m.validity_ms;
	return 0;
}

static int adapter_release(void *self)
{
	struct adapter *a = self;
	struct lb_proto_msg m;
	int rc = request(a, "release", LB_REQ_RELEASE, limit_ms(a), &m);

	if (rc < 0)
		return rc;
	return m.kind == LB_MSG_RELEASED ? 0 : m.kind == LB_MSG_NOT_OWNED ? LB_ELOST : LB_EREDIS;
}

static int adapter_extend(void *self, int64_t ttl_ms)
{
	struct adapter *a = self;
	struct lb_proto_msg m;
	char req[40];
	int rc;

	if (!a->can_extend)
		return LB_ENOTSUP;
	snprintf(req, sizeof(req), "extend %lld", (long long)ttl_ms);
	if ((rc = request(a, req, LB_REQ_EXTEND, limit_ms(a), &m)) < 0)
		return rc;
	if (m.kind == LB_MSG_EXTENDED && a->lease_end_ns)
		a->lease_end_ns = after_ms(ttl_ms);
	return m.kind == LB_MSG_EXTENDED ? 0 : m.kind == LB_MSG_NOT_OWNED ? LB_ELOST :
	       m.kind == LB_MSG_UNSUPPORTED ? LB_ENOTSUP : LB_EREDIS;
}

/* The section asks every 2 ms: take what has come, without waiting. A lost
 * notice aborts the section's write; an adapter that died or spoke out of
 * turn meanwhile does not: that is a death, or a protocol error, at the next
 * request, where it is reported. */
static bool adapter_held(void *self)
{
	struct adapter *a = self;

	if (!a->broken)
		drain(a);
	return !a->lost;
}

/* The lease's end as the adapter told it: the length lockbench asked for
 * from the grant, moved by every extension it reported; unknown (0) for a
 * library that extends its lease without saying so. */
static int64_t adapter_lease_end(void *self)
{
	const struct adapter *a = self;
	return a->lease_end_ns ? a->lease_end_ns : LB_LEASE_UNKNOWN;
}

/* The ops every external strategy shares (adapter_registry.c gives each its
 * name, claims and definition). */
const struct lock_strategy lb_adapter_ops = {
	.create = adapter_create,
	.acquire = adapter_acquire,
	.release = adapter_release,
	.extend = adapter_extend,
	.held = adapter_held,
	.lease_end = adapter_lease_end,
	.destroy = adapter_destroy,
	.blind_release = true,
};

