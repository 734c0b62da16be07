/*
 * run_remote.c - `run --hosts FILE` (docs/running.md, "Clients on many
 * hosts"): the hosts file read and checked, an agent started on each host
 * with OpenSSH, its hello checked (a host that cannot be reached or runs
 * another version is refused before a client starts), the clients split,
 * each agent's share sent, `go` to all, and what each agent streams back
 * taken into the run's shared region on this process's clock: each host's
 * offset and bound from its agent's round trips to the first lock node's
 * TIME and this process's own. Then the run is collected and judged as any
 * run, and the overlaps across hosts once more with each host's bound
 * (uncertain.h): certain or possible.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_wire.h"
#include "node.h"
#include "rserver.h"
#include "run.h"
#include "run_ctx.h"
#include "signals.h"
#include "uncertain.h"

#define HELLO_S 30     /* ssh's connection and the agent's hello */
#define READY_S 90     /* its clock, and its clients started */
#define END_GRACE_S 30 /* after the run's end: its records streamed */
#define ERR_KEEP 600   /* ssh's standard error, kept to be quoted */

struct remote_host {
	const struct lb_host_spec *spec;
	const char *file;          /* the hosts file */
	char name[160];
	pid_t pid;
	int in, err;
	struct lb_lines lines;
	char err_text[ERR_KEEP];
	size_t err_len;
	bool hello, ready, ended, before, after;
	int64_t t0, off_before, rtt_before, off_after;
};

struct run_remote {
	struct remote_host h[LB_MAX_REMOTE_HOSTS];
	int n;
	int64_t here_off, here_rtt;
};

bool lb_run_needs_relay(const struct lb_run_cfg *cfg)
{
	return run_needs_relay(cfg);
}

/* -- the hosts file ---------------------------------------------------- */

static bool name_ok(const char *s, size_t n)
{
	if (n == 0 || *s == '-' || *s == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-", s[i]))
			return false;
	return true;
}

static int host_error(const char *path, int line, int field, const char *word, const char *want)
{
	lb_errorf("--hosts %s: line %d, field %d ('%.60s'): expected %s", path, line, field, word,
		  want);
	return LB_EINVAL;
}

/* "[user@]host[:port] [clients]" into @h. */
static int host_line(const char *path, int no, char **w, int n, struct lb_host_spec *h)
{
	char *at = strchr(w[0], '@'), *colon = strrchr(w[0], ':');
	const char *host = at ? at + 1 : w[0];
	size_t hlen = colon ? (size_t)(colon - host) : strlen(host);
	int64_t v;

	if (n > 2)
		return host_error(path, no, 3, w[2], "nothing more ([user@]host[:port] [clients])");
	if ((at && !name_ok(w[0], (size_t)(at - w[0]))) || (colon && colon < host) ||
	    !name_ok(host, hlen) || strlen(w[0]) >= sizeof(h->dest))
		return host_error(path, no, 1, w[0], "[user@]host[:port]: a user and a host of "
				  "A-Z a-z 0-9 . _ - (not beginning with - or .), at most 127 in all");
	if (colon && !lb_parse_i64(colon + 1, 1, 65535, &v))
		return host_error(path, no, 1, w[0], "a port from 1 to 65535 after the ':'");
	h->port = colon ? (int)v : 0;
	snprintf(h->dest, sizeof(h->dest), "%.*s", (int)(colon ? colon - w[0] : (long)strlen(w[0])),
		 w[0]);
	h->clients = 0;
	if (n == 2 && !lb_parse_i64(w[1], 1, LB_MAX_CLIENTS, &v)) {
		char want[64];
		snprintf(want, sizeof(want), "its clients, from 1 to %d", LB_MAX_CLIENTS);
		return host_error(path, no, 2, w[1], want);
	}
	if (n == 2)
		h->clients = (int)v;
	h->line = no;
	return 0;
}

int lb_hosts_read(const char *path, struct lb_hosts *out)
{
	FILE *f = fopen(path, "r");
	char buf[1024], *w[4];
	int no = 0, rc = 0;

	memset(out, 0, sizeof(*out));
	snprintf(out->path, sizeof(out->path), "%s", path);
	if (!f) {
		lb_errorf("--hosts %s: cannot read it: %s", path, strerror(errno));
		return LB_EINVAL;
	}
	while (rc == 0 && fgets(buf, sizeof(buf), f)) {
		no++;
		size_t len = strlen(buf);
		if (len == sizeof(buf) - 1 && buf[len - 1] != '\n') {
			rc = host_error(path, no, 1, "...", "a line of at most 1022 characters");
			break;
		}
		for (size_t i = 0; i < len; i++)
			if (buf[i] == '#' || buf[i] == '\n' || buf[i] == '\r')
				buf[i] = '\0', len = i;
			else if (buf[i] == '\t')
				buf[i] = ' ';
			else if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
				return fclose(f), host_error(path, no, 1, "?", "no control character");
		int n = 0;
		for (char *p = strtok(buf, " "); p && n < 4; p = strtok(NULL, " "))
			w[n++] = p;
		if (n == 0)
			continue; /* blank, or a comment */
		if (out->n == LB_MAX_REMOTE_HOSTS) {
			char want[64];
			snprintf(want, sizeof(want), "at most %d hosts", LB_MAX_REMOTE_HOSTS);
			rc = host_error(path, no, 1, w[0], want);
			break;
		}
		rc = host_line(path, no, w, n, &out->h[out->n]);
		out->n += rc == 0;
	}
	fclose(f);
	if (rc == 0 && out->n == 0) {
		lb_errorf("--hosts %s: no host in it (expected a line [user@]host[:port] [clients])",
			  path);
		rc = LB_EINVAL;
	}
	return rc;
}

int lb_hosts_split(struct lb_hosts *h, int clients, char *why, size_t len)
{
	int given = 0, open = 0, next = 0;

	for (int i = 0; i < h->n; i++)
		h->h[i].clients ? (given += h->h[i].clients) : open++;
	if (given > clients || (open == 0 && given != clients) || (open && clients - given < open)) {
		snprintf(why, len, "its hosts' clients (%d given, %d hosts without a count) do not "
			 "make the run's %d (--clients): each host needs 1 at least, and the counts "
			 "given must add up to the run's", given, open, clients);
		return LB_EINVAL;
	}
	for (int i = 0, k = 0; i < h->n; i++) {
		int share = (clients - given) / (open ? open : 1);
		struct lb_host_spec *s = &h->h[i];
		s->first = next;
		s->count = s->clients ? s->clients : share + (k++ < (clients - given) % (open ? open : 1));
		next += s->count;
	}
	return 0;
}

/* -- ssh ---------------------------------------------------------------- */

static const char *agent_path(const struct lb_run_cfg *cfg)
{
	static char self[PATH_MAX];

	if (cfg->agent_path)
		return cfg->agent_path;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	return self;
}

static void ssh_exec(const struct lb_run_cfg *cfg, const struct lb_host_spec *s, pid_t parent,
		     int in, int out, int err)
{
	const char *argv[20];
	char port[16];
	int n = 0;

	if (!lb_child_bind_to_parent(parent))
		_exit(127);
	setpgid(0, 0); /* Ctrl-C is lockbench's to handle, not ssh's */
	dup2(in, STDIN_FILENO);
	dup2(out, STDOUT_FILENO);
	dup2(err, STDERR_FILENO);
	argv[n++] = "ssh";
	argv[n++] = "-o";
	argv[n++] = "BatchMode=yes"; /* never a password prompt */
	argv[n++] = "-o";
	argv[n++] = "ConnectTimeout=10";
	argv[n++] = "-T";
	if (cfg->ssh_config) {
		argv[n++] = "-F";
		argv[n++] = cfg->ssh_config;
	}
	if (s->port) {
		snprintf(port, sizeof(port), "%d", s->port);
		argv[n++] = "-p";
		argv[n++] = port;
	}
	argv[n++] = "--";
	argv[n++] = s->dest;
	argv[n++] = agent_path(cfg); /* words the remote shell reads: checked by --agent-path */
	argv[n++] = "agent";
	argv[n] = NULL;
	/* runs: ssh (openssh-client) */
	execvp(argv[0], (char *const *)argv);
	_exit(127);
}

static int host_start(const struct lb_run_cfg *cfg, struct remote_host *h)
{
	int to[2], from[2], err[2];

	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		lb_errorf("--hosts: pipe: %s", strerror(errno));
		return LB_ESYS;
	}
	pid_t parent = getpid();
	fflush(NULL);
	h->pid = fork();
	if (h->pid < 0) {
		lb_errorf("--hosts: fork: %s", strerror(errno));
		return LB_ESYS;
	}
	if (h->pid == 0)
		ssh_exec(cfg, h->spec, parent, to[0], from[1], err[1]);
	setpgid(h->pid, h->pid);
	lb_signals_track_child(h->pid);
	close(to[0]);
	close(from[1]);
	close(err[1]);
	signal(SIGPIPE, SIG_IGN); /* an agent gone: its write fails, said where it is read */
	h->in = to[1];
	h->err = err[0];
	fcntl(h->err, F_SETFL, O_NONBLOCK);
	h->lines.fd = from[0];
	return 0;
}

/* What ssh said on its standard error so far, kept (the first ERR_KEEP
 * bytes, control characters as spaces). */
static void drain_err(struct remote_host *h)
{
	char buf[512];
	ssize_t n;

	while (h->err >= 0 && (n = read(h->err, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n && h->err_len + 1 < sizeof(h->err_text); i++)
			h->err_text[h->err_len++] = (unsigned char)buf[i] < 0x20 ? ' ' : buf[i];
	h->err_text[h->err_len] = '\0';
}

/* Why the host's agent is gone: ssh's exit (255: the host was not reached)
 * and its words. */
static void say_gone(struct remote_host *h, const char *when)
{
	int st = 0;
	int64_t limit = lb_now_ns() + 5 * LB_NS_PER_S;
	pid_t got = 0;

	while ((got = waitpid(h->pid, &st, WNOHANG)) == 0 && lb_now_ns() < limit) {
		drain_err(h);
		lb_sleep_ns(10 * LB_NS_PER_MS);
	}
	drain_err(h);
	if (got == h->pid) {
		lb_signals_untrack_child(h->pid);
		h->pid = 0;
	}
	bool unreachable = got > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 255;
	while (h->err_len && h->err_text[h->err_len - 1] == ' ')
		h->err_text[--h->err_len] = '\0';
	char how[64];
	if (got <= 0)
		snprintf(how, sizeof(how), "ssh did not exit");
	else if (WIFEXITED(st))
		snprintf(how, sizeof(how), "ssh exited %d", WEXITSTATUS(st));
	else
		snprintf(how, sizeof(how), "ssh was killed (signal %d)", WTERMSIG(st));
	lb_errorf("--hosts: host %s (%s line %d) %s%s%s: %s%s%s%s", h->name, h->file, h->spec->line,
		  unreachable ? "cannot be reached" : "lost its agent", unreachable ? "" : " ",
		  unreachable ? "" : when,
		  how, h->err_len ? ", saying '" : "", h->err_text, h->err_len ? "'" : "");
}

/* "hello lockbench-agent PROTO VERSION", the same as this lockbench's. */
static int read_hello(struct remote_host *h, int64_t deadline)
{
	char line[LB_AGENT_LINE_MAX], why[200], *w[5];
	int rc = lb_lines_next(&h->lines, line, sizeof(line), deadline, why, sizeof(why));

	if (rc != 1) {
		say_gone(h, rc == LB_ETIMEOUT ? "(no hello within 30 s)" : "(it said no hello)");
		return LB_ENOTHERE;
	}
	int n = lb_wire_words(line, w, 5);
	int64_t proto = 0;
	if (n == 4 && !strcmp(w[0], "hello") && !strcmp(w[1], "lockbench-agent") &&
	    lb_parse_i64(w[2], 0, 1000000, &proto) && proto == LB_AGENT_PROTO &&
	    !strcmp(w[3], LOCKBENCH_VERSION))
		return 0;
	lb_errorf("--hosts: host %s runs another lockbench: its agent said '%.80s%s%s%s', this is "
		  "lockbench %s (agent format %d): the same version is needed on every host",
		  h->name, w[0], n > 1 ? " " : "", n > 1 ? w[1] : "", n > 3 ? " ..." : "",
		  LOCKBENCH_VERSION, LB_AGENT_PROTO);
	if (n == 4)
		lb_errorf("--hosts: host %s: lockbench %.60s, agent format %.20s", h->name, w[3], w[2]);
	return LB_ENOTHERE;
}

int run_remote_connect(struct run_ctx *r)
{
	const struct lb_hosts *hs = r->cfg->hosts;
	struct run_remote *rm = calloc(1, sizeof(*rm));
	int rc = 0;

	if (!rm)
		return LB_ENOMEM;
	r->remote = rm;
	for (int i = 0; i < hs->n; i++) {
		struct remote_host *h = &rm->h[i];
		h->spec = &hs->h[i];
		h->file = hs->path;
		h->in = h->err = h->lines.fd = -1;
		if (h->spec->port)
			snprintf(h->name, sizeof(h->name), "%s:%d", h->spec->dest, h->spec->port);
		else
			snprintf(h->name, sizeof(h->name), "%s", h->spec->dest);
		rm->n++;
		if ((rc = host_start(r->cfg, h)) < 0)
			return rc;
	}
	int64_t deadline = lb_now_ns() + HELLO_S * LB_NS_PER_S;
	for (int i = 0; i < rm->n; i++) {
		int one = read_hello(&rm->h[i], deadline);
		rc = rc < 0 ? rc : one;
		rm->h[i].hello = one == 0;
	}
	if (rc < 0)
		lb_errorf("--hosts: nothing was started: every host must be reached and run this "
			  "lockbench's agent");
	return rc;
}

void run_remote_stop(struct run_ctx *r)
{
	struct run_remote *rm = r->remote;

	for (int i = 0; rm && i < rm->n; i++) {
		struct remote_host *h = &rm->h[i];
		if (h->in >= 0)
			close(h->in); /* its input's end stops the agent */
		if (h->pid > 0) {
			int64_t limit = lb_now_ns() + 3 * LB_NS_PER_S;
			while (waitpid(h->pid, NULL, WNOHANG) == 0 && lb_now_ns() < limit)
				lb_sleep_ns(10 * LB_NS_PER_MS);
			kill(h->pid, SIGKILL);
			waitpid(h->pid, NULL, 0);
			lb_signals_untrack_child(h->pid);
		}
		if (h->lines.fd >= 0)
			close(h->lines.fd);
		if (h->err >= 0)
			close(h->err);
	}
	free(rm);
	r->remote = NULL;
}

/* -- the share, the go, the stream ------------------------------------- */

static void put(struct remote_host *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct remote_host *h, const char *fmt, ...)
{
	char buf[LB_AGENT_LINE_MAX + 8];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n <= 0 || n >= (int)sizeof(buf) || h->in < 0)
		return;
	for (ssize_t off = 0, w; off < n; off += w)
		if ((w = write(h->in, buf + off, (size_t)(n - off))) <= 0 && errno != EINTR)
			return; /* gone: said where its lines stop */
		else if (w < 0)
			w = 0;
}

static void put_node(struct remote_host *h, const char *what, const struct lb_node *n,
		     const char *addr)
{
	put(h, "%s redis://%s%s%s%s%s:%d\n", what, n->user, n->pass[0] ? ":" : "", n->pass,
	    n->user[0] || n->pass[0] ? "@" : "", addr ? addr : n->host, n->port);
}

/* The run's options as `arg` lines: what the agent's own parse gives the same cfg. */
static void put_args(struct remote_host *h, const struct lb_run_cfg *cfg)
{
	size_t rows;
	const struct lb_param *t = lb_params(&rows);
	char text[256];

	char path[PATH_MAX];

	put(h, "arg --strategy\narg %s\n", cfg->strategy->name);
	/* the scenario's file, by its whole path: the hosts see this one's files
	 * at the same paths (docs/running.md, "Clients on many hosts") */
	if (cfg->scenario && cfg->scenario->path[0])
		put(h, "arg --scenario\narg %s\n", realpath(cfg->scenario->path, path) ? path :
		    cfg->scenario->path);
	for (size_t i = 0; i < rows; i++) {
		struct lb_param_value v;
		if (!t[i].cli)
			continue;
		lb_param_get(&t[i], cfg, &v);
		if (lb_param_equal(&t[i], &v, &t[i].dflt) && lb_param_index(&t[i]) != LB_P_SEED &&
		    lb_param_index(&t[i]) != LB_P_CLIENTS)
			continue;
		if (t[i].type == LB_PT_FLAG) {
			if (v.i)
				put(h, "arg --%s\n", t[i].cli);
			continue;
		}
		lb_param_format(&t[i], &v, text, sizeof(text));
		put(h, "arg --%s\narg %s\n", t[i].cli, text);
	}
}

static void send_share(struct run_ctx *r, struct remote_host *h, int index)
{
	const char *addr = lb_cfg_theirs(r->cfg) ? NULL : r->cfg->bind_addr;

	put(h, "lockbench-share %d\n", LB_AGENT_PROTO);
	put_args(h, r->cfg);
	for (size_t i = 0; i < r->n_lock; i++)
		put_node(h, "lock", &r->lock[i], addr);
	put_node(h, "resource", &r->resource, addr);
	put(h, "clients %d %d\nprefix %s\nfaults %s\nshare-end\n", h->spec->first, h->spec->count,
	    r->prefix, index == 0 ? "yes" : "no");
}

/* "clock WHEN OFFSET RTT" or "clock WHEN n/a": 1 taken, 0 not a clock line. */
static int take_clock(struct remote_host *h, char **w, int n)
{
	int64_t off, rtt;

	if (n < 3 || strcmp(w[0], "clock") || (strcmp(w[1], "before") && strcmp(w[1], "after")))
		return 0;
	bool before = !strcmp(w[1], "before");
	if (n == 4 && lb_parse_i64(w[2], INT64_MIN / 4, INT64_MAX / 4, &off) &&
	    lb_parse_i64(w[3], 0, 60 * LB_NS_PER_S, &rtt)) {
		if (before)
			h->off_before = off, h->rtt_before = rtt, h->before = true;
		else
			h->off_after = off, h->after = true;
	}
	return 1;
}

/* Each agent's "clock before" and "ready N", in order. */
static int await_ready(struct run_remote *rm)
{
	int64_t deadline = lb_now_ns() + READY_S * LB_NS_PER_S;
	char line[LB_AGENT_LINE_MAX], copy[LB_AGENT_LINE_MAX], why[200], *w[4];

	for (int i = 0; i < rm->n; i++) {
		struct remote_host *h = &rm->h[i];
		while (!h->ready) {
			int rc = lb_lines_next(&h->lines, line, sizeof(line), deadline, why, sizeof(why));
			if (rc != 1) {
				say_gone(h, rc == LB_ETIMEOUT ? "(not ready within 90 s)" :
					 "before its clients were ready");
				return LB_ENOTHERE;
			}
			snprintf(copy, sizeof(copy), "%s", line);
			int n = lb_wire_words(copy, w, 4);
			int64_t k;
			if (take_clock(h, w, n))
				continue;
			if (n == 2 && !strcmp(w[0], "ready") &&
			    lb_parse_i64(w[1], 0, h->spec->count, &k) && k == h->spec->count) {
				h->ready = true;
				continue;
			}
			lb_errorf("--hosts: host %s's agent, before its clients were ready, said: %.300s",
				  h->name, line);
			return !strncmp(line, "error ", 6) && strstr(line, "does not answer") ?
			       LB_ENOTHERE : LB_EPROTO;
		}
		if (!h->before) {
			lb_errorf("--hosts: host %s's agent did not measure its clock", h->name);
			return LB_ENOTHERE;
		}
	}
	return 0;
}

int run_remote_share(struct run_ctx *r)
{
	struct run_remote *rm = r->remote;
	char why[300];
	int rc;

	/* this process's clock against the same server the agents measure */
	rc = lb_clock_offset(&r->lock[0], 7, &rm->here_off, &rm->here_rtt, why, sizeof(why));
	lb_node_close(&r->lock[0]);
	if (rc < 0) {
		lb_errorf("--hosts: this machine's clock against the first lock node: %s", why);
		return LB_ENOTHERE;
	}
	for (int i = 0; i < rm->n; i++)
		send_share(r, &rm->h[i], i);
	return await_ready(rm);
}

/* Where host @h's stamps go on this clock: relative ones (after its T0)
 * moved by *rel, its CLOCK_MONOTONIC ones by *abs. */
static void host_shift(const struct run_ctx *r, const struct remote_host *h, int64_t *rel,
		       int64_t *abs)
{
	*abs = h->off_before - r->remote->here_off;
	*rel = h->t0 + *abs - r->sh->t0_ns;
}

static int take_event(struct run_ctx *r, const struct remote_host *h, char **w, int n,
		      char *why, size_t wlen)
{
	int64_t v[5], rel, abs;

	for (int i = 0; i < 5 && n == 6; i++)
		if (!lb_parse_i64(w[i + 1], INT64_MIN / 4, INT64_MAX / 4, &v[i]))
			n = 0;
	if (n != 6 || v[0] < 0 || v[0] >= LB_EV_COUNT || v[1] < -1 ||
	    (v[1] >= 0 && (v[1] < h->spec->first || v[1] >= h->spec->first + h->spec->count)) ||
	    v[2] < -1 || v[2] >= LB_MAX_NODES) {
		snprintf(why, wlen, "an event out of range (kind, client of this host, node)");
		return LB_EPROTO;
	}
	host_shift(r, h, &rel, &abs);
	lb_event_emit_at(r->sh, (int)v[0], (int)v[1], (int)v[2], v[3], v[4] + rel);
	return 0;
}

/* One line from @h while the run goes. */
static int take_line(struct run_ctx *r, struct remote_host *h, const char *line, char *why,
		     size_t wlen)
{
	char copy[LB_AGENT_LINE_MAX], *w[8];
	int64_t rel, abs;

	snprintf(copy, sizeof(copy), "%s", line);
	int n = lb_wire_words(copy, w, 8);
	if (take_clock(h, w, n))
		return 0;
	if (!strcmp(line, "end")) {
		h->ended = true;
		return 0;
	}
	if (n == 2 && !strcmp(w[0], "go") && lb_parse_i64(w[1], 1, INT64_MAX / 4, &h->t0))
		return 0;
	if (!h->t0) {
		snprintf(why, wlen, "a line before its 'go T0'");
		return LB_EPROTO;
	}
	if (!strcmp(w[0], "event"))
		return take_event(r, h, w, n, why, wlen);
	if (!strcmp(w[0], "error")) {
		snprintf(why, wlen, "%.300s", line);
		return LB_EPROTO;
	}
	host_shift(r, h, &rel, &abs);
	return lb_wire_take(r->sh, line, h->spec->first, h->spec->count, rel, abs, why, wlen);
}

/* Every line the agents have written so far; false when one broke off or
 * broke the format (said). */
static bool pump(struct run_ctx *r, int ms)
{
	struct run_remote *rm = r->remote;
	struct pollfd p[LB_MAX_REMOTE_HOSTS];
	char line[LB_AGENT_LINE_MAX], why[400];

	for (int i = 0; i < rm->n; i++)
		p[i] = (struct pollfd){ .fd = rm->h[i].ended ? -1 : rm->h[i].lines.fd,
					.events = POLLIN };
	if (poll(p, (nfds_t)rm->n, ms) <= 0)
		return true;
	for (int i = 0; i < rm->n; i++) {
		struct remote_host *h = &rm->h[i];
		while (!h->ended && (p[i].revents || h->lines.len)) {
			int rc = lb_lines_next(&h->lines, line, sizeof(line), 0, why, sizeof(why));
			if (rc == LB_ETIMEOUT)
				break;
			if (rc == 1 && (rc = take_line(r, h, line, why, sizeof(why))) == 0)
				continue;
			if (rc == 0)
				say_gone(h, "before the end of its stream");
			else
				lb_errorf("--hosts: host %s's agent: %s", h->name, why);
			return false;
		}
	}
	return true;
}

static bool all_ended(const struct run_remote *rm)
{
	for (int i = 0; i < rm->n; i++)
		if (!rm->h[i].ended)
			return false;
	return true;
}

int run_remote_contend(struct run_ctx *r)
{
	struct run_remote *rm = r->remote;
	int64_t end = r->sh->end_ns, give_up = end + (int64_t)(r->cfg->drain_s * 1e9) +
					       END_GRACE_S * LB_NS_PER_S;
	bool ok = true;

	for (int i = 0; i < rm->n; i++)
		put(&rm->h[i], "go\n");
	lb_faults_tick(&r->inj, 0);
	while (ok && !all_ended(rm) && !lb_stop_requested() && lb_now_ns() < give_up) {
		ok = pump(r, 5);
		int64_t now = lb_now_ns();
		if (now < end)
			lb_faults_tick(&r->inj, now - r->sh->t0_ns);
	}
	lb_faults_finish(&r->inj);
	r->res->elapsed_s = (double)(lb_now_ns() < end ? lb_now_ns() - r->sh->t0_ns :
				     end - r->sh->t0_ns) / 1e9;
	if (lb_stop_requested()) {
		r->res->interrupted = true;
		return 0;
	}
	if (ok && !all_ended(rm)) {
		for (int i = 0; i < rm->n; i++)
			if (!rm->h[i].ended)
				lb_errorf("--hosts: host %s's agent did not end its stream within %d s "
					  "of the run's end", rm->h[i].name, END_GRACE_S);
		ok = false;
	}
	return ok ? 0 : LB_EPROTO;
}

/* -- each host's bound, the overlaps across hosts ----------------------- */

static void bounds(struct run_ctx *r)
{
	struct run_remote *rm = r->remote;
	struct lb_run_result *res = r->res;

	res->remote = calloc((size_t)rm->n, sizeof(*res->remote));
	if (!res->remote)
		return;
	res->n_remote = rm->n;
	for (int i = 0; i < rm->n; i++) {
		const struct remote_host *h = &rm->h[i];
		struct lb_remote_bound *b = &res->remote[i];
		snprintf(b->name, sizeof(b->name), "%s", h->name);
		b->first = h->spec->first;
		b->count = h->spec->count;
		b->offset_ns = h->off_before - rm->here_off;
		b->rtt_ns = h->rtt_before;
		b->here_rtt_ns = rm->here_rtt;
		b->drift_ns = h->after ? h->off_after - h->off_before : INT64_MIN;
		int64_t drift = h->after ? llabs(b->drift_ns) : 0;
		b->bound_ns = (h->rtt_before + rm->here_rtt + 1) / 2 + drift;
	}
}

/* Which host client @c ran on. */
static int host_of(const struct lb_run_result *res, int c)
{
	for (int i = 0; i < res->n_remote; i++)
		if (c >= res->remote[i].first && c < res->remote[i].first + res->remote[i].count)
			return i;
	return -1;
}

/* The overlaps once more, each section's stamps allowed its host's bound:
 * certain or possible across hosts; two clients of one host share a clock,
 * so theirs are judged as the stamps have them (certain when they overlap). */
void run_remote_judge(struct run_ctx *r)
{
	struct lb_run_result *res = r->res;
	struct lb_ujudgement j = { 0 };

	bounds(r);
	if (!res->remote) {
		snprintf(res->cross_why, sizeof(res->cross_why), "out of memory");
		return;
	}
	struct lb_usec *u = calloc(res->n_sections ? res->n_sections : 1, sizeof(*u));
	if (!u) {
		snprintf(res->cross_why, sizeof(res->cross_why), "out of memory");
		return;
	}
	for (size_t k = 0; k < res->n_sections; k++) {
		const struct lb_section *s = &res->sections[k];
		int h = host_of(res, s->client);
		u[k] = (struct lb_usec){ .client = s->client, .key = s->key, .enter_ns = s->enter_ns,
					 .exit_ns = s->exit_ns > s->enter_ns ? s->exit_ns : s->enter_ns,
					 .unc_ns = h >= 0 ? res->remote[h].bound_ns : 0,
					 .fence = -1 };
	}
	int rc = lb_ujudge(u, res->n_sections, 1000000, (size_t)4e9, &j);
	if (rc < 0) {
		snprintf(res->cross_why, sizeof(res->cross_why), "%s", rc == LB_EINVAL && j.limit ?
			 j.limit : "out of memory");
	} else {
		for (size_t k = 0; k < j.n_pairs; k++) {
			const struct lb_upair *p = &j.pairs[k];
			bool same = host_of(res, u[p->a].client) == host_of(res, u[p->b].client);
			if (same ? p->margin_ns > 0 : p->certain)
				res->cross_certain++;
			else if (!same)
				res->cross_possible++;
		}
		res->cross_known = true;
	}
	lb_ujudgement_free(&j);
	free(u);
}
