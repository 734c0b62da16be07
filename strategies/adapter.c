/*
 * adapter.c - an external strategy: one adapter process per client, spoken
 * to in the line protocol of docs/adapters.md (version LB_ADAPTER_PROTOCOL).
 *
 *   lockbench                      adapter
 *   hello 1                    ->
 *                              <-  hello 1 library=L version=V language=X extend=yes lost=no
 *   config nodes=URL,.. [sentinels=H:P,.. master=NAME] key=K ttl_ms=T wait=one|library
 *          timeout_ms=N client=C
 *                              <-  ok | error MESSAGE
 *   acquire                    ->  acquired [token=T] [fence=N] [validity_ms=N] | busy | error M
 *   release                    ->  released | not-owned | error M
 *   extend MS                  ->  extended | not-owned | unsupported | error M
 *   quit                       ->  bye
 *                              <-  lost MESSAGE   (at any time: the library says the lock is gone)
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
#include "plumbing.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LINE_MAX_BYTES 4096
#define START_LIMIT_MS 15000  /* hello and config: an interpreter loading a library */
#define QUIT_LIMIT_MS 2000
#define MAX_ADAPTERS 32
#define MAX_EXEC 8

struct adapter {
	struct lb_lock_base base;
	const struct lb_adapter_def *def;
	pid_t pid;
	int to, from;              /* requests to the adapter, its lines back */
	char buf[LINE_MAX_BYTES + 1];
	size_t len;                /* bytes in buf not yet taken as lines */
	bool greeted;              /* past its hello: a death now is the client's */
	bool lost;                 /* a lost notice since the last acquire */
	bool can_extend, can_lost;
	bool broken;               /* a protocol failure: every call fails */
};

/* ---- lines ---- */

static int fail(struct adapter *a, const char *what, const char *line)
{
	a->broken = true;
	lb_errorf("adapter %s (client %d): %s%s%.200s%s", a->def->name, a->base.cfg.client, what,
		  line ? ": got '" : "", line ? line : "", line ? "'" : "");
	return LB_EPROTO;
}

/* The adapter has gone: a broken run before its hello, a death after it. */
static int gone(struct adapter *a, const char *how)
{
	int status = 0;
	char why[96] = "";

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
	if (!a->greeted) {
		char msg[200];
		snprintf(msg, sizeof(msg), "%s before its hello%s; its stderr is in %s", how, why,
			 a->base.cfg.log_path ? a->base.cfg.log_path : "/dev/null");
		return fail(a, msg, NULL);
	}
	lb_errorf("adapter %s (client %d) %s%s: the library took its process down; recorded as "
		  "that client's death", a->def->name, a->base.cfg.client, how, why);
	a->broken = true;
	return LB_EDIED;
}

static int send_line(struct adapter *a, const char *line)
{
	size_t n = strlen(line), off = 0;
	char out[LINE_MAX_BYTES + 2];

	if (n > LINE_MAX_BYTES)
		return fail(a, "request too long", NULL);
	memcpy(out, line, n);
	out[n++] = '\n';
	while (off < n) {
		ssize_t w = write(a->to, out + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return gone(a, "exited");
		off += (size_t)w;
	}
	return 0;
}

/* The next line, by @deadline_ns (0: none; the run's cancel flag still ends
 * it): 1 a line in @line | 0 no line yet (only when @deadline_ns is now) |
 * negative status. */
static int next_line(struct adapter *a, int64_t deadline_ns, char *line)
{
	for (;;) {
		char *nl = memchr(a->buf, '\n', a->len);
		if (nl) {
			size_t n = (size_t)(nl - a->buf);
			memcpy(line, a->buf, n);
			line[n] = '\0';
			if (n && line[n - 1] == '\r')
				line[n - 1] = '\0';
			a->len -= n + 1;
			memmove(a->buf, nl + 1, a->len);
			return 1;
		}
		if (a->len == LINE_MAX_BYTES) {
			a->buf[40] = '\0';
			return fail(a, "a line longer than 4096 bytes", a->buf);
		}
		int64_t now = lb_now_ns(), wait_ms = 50;
		if (deadline_ns && now >= deadline_ns)
			return 0;
		if (deadline_ns && (deadline_ns - now) / LB_NS_PER_MS < wait_ms)
			wait_ms = (deadline_ns - now) / LB_NS_PER_MS;
		if (a->base.cfg.cancel && atomic_load(a->base.cfg.cancel))
			return LB_ECANCELED;
		struct pollfd p = { .fd = a->from, .events = POLLIN };
		int r = poll(&p, 1, (int)wait_ms);
		if (r < 0 && errno != EINTR)
			return fail(a, "poll failed", NULL);
		if (r <= 0)
			continue;
		ssize_t k = read(a->from, a->buf + a->len, LINE_MAX_BYTES - a->len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return gone(a, "exited");
		a->len += (size_t)k;
	}
}

/* A "lost" notice: take it. true when @line was one. */
static bool notice(struct adapter *a, const char *line)
{
	if (strncmp(line, "lost", 4) || (line[4] && line[4] != ' '))
		return false;
	a->lost = true;
	return true;
}

/* Send @req, and read its reply into @reply (notices taken on the way). */
static int request(struct adapter *a, const char *req, int64_t limit_ms, char *reply)
{
	int rc;

	if (a->broken)
		return a->greeted ? LB_EDIED : LB_EPROTO;
	if ((rc = send_line(a, req)) < 0)
		return rc;
	int64_t deadline = limit_ms > 0 ? lb_now_ns() + limit_ms * LB_NS_PER_MS : 0;
	for (;;) {
		rc = next_line(a, deadline, reply);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			char msg[96];
			snprintf(msg, sizeof(msg), "no answer to '%s' within %lld ms", req, (long long)limit_ms);
			return fail(a, msg, NULL);
		}
		if (!notice(a, reply))
			return 0;
	}
}

/* The reply's first word is @word (then the end or a space). */
static bool is(const char *reply, const char *word)
{
	size_t n = strlen(word);
	return !strncmp(reply, word, n) && (reply[n] == '\0' || reply[n] == ' ');
}

/* The value of " NAME=" in @line, up to the next space, into @out. */
static bool field(const char *line, const char *name, char *out, size_t len)
{
	char pat[40];
	snprintf(pat, sizeof(pat), " %s=", name);
	const char *p = strstr(line, pat);
	if (!p)
		return false;
	p += strlen(pat);
	size_t n = strcspn(p, " ");
	snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), p);
	return true;
}

/* ---- the process ---- */

/* --adapter-arg values, appended to every adapter's arguments */
static const char *const *exec_args;
static int n_exec_args;

static void child(const struct adapter *a, int in_fd, int out_fd, pid_t parent)
{
	const struct lb_lock_cfg *cfg = &a->base.cfg;
	static const int reset[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	dup2(in_fd, STDIN_FILENO);
	dup2(out_fd, STDOUT_FILENO);
	int log = open(cfg->log_path ? cfg->log_path : "/dev/null",
		       O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log >= 0)
		dup2(log, STDERR_FILENO);
	for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
		signal(reset[i], SIG_DFL);
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
	/* its argv, then the run's --adapter-arg values */
	const char *argv[2 * LB_ADAPTER_MAX_ARGS + 1];
	int n = 0;
	for (; a->def->argv[n]; n++)
		argv[n] = a->def->argv[n];
	for (int i = 0; i < n_exec_args && n < 2 * LB_ADAPTER_MAX_ARGS; i++)
		argv[n++] = exec_args[i];
	argv[n] = NULL;
	/* runs: (manifests) the interpreter a manifest names, or the user's
	 * exec:PATH */
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "lockbench: cannot run %s: %s\n", a->def->argv[0], strerror(errno));
	_exit(127);
}

static int spawn(struct adapter *a)
{
	int in[2], out[2];
	pid_t parent = getpid();

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
	if (a->pid < 0) {
		a->pid = 0;
		return LB_ESYS;
	}
	return 0;
}

static int handshake(struct adapter *a)
{
	const struct lb_lock_cfg *cfg = &a->base.cfg;
	char line[LINE_MAX_BYTES + 1], req[LINE_MAX_BYTES], cap[16];
	int version = 0, rc;
	size_t n = 0;

	snprintf(req, sizeof(req), "hello %d", LB_ADAPTER_PROTOCOL);
	if ((rc = request(a, req, START_LIMIT_MS, line)) < 0)
		return rc;
	if (sscanf(line, "hello %d", &version) != 1 || !is(line, "hello"))
		return fail(a, "expected 'hello 1 library=... version=...'", line);
	if (version != LB_ADAPTER_PROTOCOL) {
		char msg[120];
		snprintf(msg, sizeof(msg), "speaks protocol version %d; this lockbench speaks %d",
			 version, LB_ADAPTER_PROTOCOL);
		return fail(a, msg, line);
	}
	a->greeted = true;
	a->can_extend = field(line, "extend", cap, sizeof(cap)) && !strcmp(cap, "yes");
	a->can_lost = field(line, "lost", cap, sizeof(cap)) && !strcmp(cap, "yes");
	n += (size_t)snprintf(req, sizeof(req), "config nodes=");
	for (size_t i = 0; i < cfg->n_nodes && n < sizeof(req) - 200; i++)
		n += (size_t)snprintf(req + n, sizeof(req) - n, "%sredis://%s:%d", i ? "," : "",
				      cfg->nodes[i]->host, cfg->nodes[i]->port);
	/* on a Sentinel deployment: the library asks the Sentinels itself, through
	 * its own Sentinel support (docs/adapters.md) */
	const struct lb_node *n0 = cfg->n_nodes ? cfg->nodes[0] : NULL;
	for (int i = 0; n0 && i < n0->n_sentinels && n < sizeof(req) - 200; i++)
		n += (size_t)snprintf(req + n, sizeof(req) - n, "%s%s:%d", i ? "," : " sentinels=",
				      n0->sentinel[i].host, n0->sentinel[i].port);
	if (n0 && n0->n_sentinels > 0 && n < sizeof(req) - 200)
		n += (size_t)snprintf(req + n, sizeof(req) - n, " master=%s", n0->master);
	snprintf(req + n, sizeof(req) - n, " key=%s ttl_ms=%lld wait=%s timeout_ms=%lld client=%d",
		 a->base.key, (long long)cfg->ttl_ms, cfg->library_wait ? "library" : "one",
		 (long long)(cfg->timeout_ms > 0 ? cfg->timeout_ms : 2000), cfg->client);
	a->greeted = false; /* a death while configuring is still a broken adapter */
	if ((rc = request(a, req, START_LIMIT_MS, line)) < 0)
		return rc;
	a->greeted = true;
	if (is(line, "ok"))
		return 0;
	if (is(line, "error"))
		return fail(a, "refused its configuration", line);
	return fail(a, "expected 'ok' or 'error MESSAGE' to config", line);
}

static void reap(struct adapter *a)
{
	if (a->pid <= 0)
		return;
	int64_t until = lb_now_ns() + QUIT_LIMIT_MS * LB_NS_PER_MS;
	while (waitpid(a->pid, NULL, WNOHANG) == 0) {
		if (lb_now_ns() > until) {
			kill(a->pid, SIGKILL);
			waitpid(a->pid, NULL, 0);
			break;
		}
		lb_sleep_ns(2 * LB_NS_PER_MS);
	}
	a->pid = 0;
}

static void adapter_destroy(void *self)
{
	struct adapter *a = self;
	char line[LINE_MAX_BYTES + 1];

	if (!a)
		return;
	a->base.cfg.cancel = NULL; /* the run is over: quitting is not cancelled */
	if (a->pid > 0 && !a->broken && send_line(a, "quit") == 0)
		next_line(a, lb_now_ns() + QUIT_LIMIT_MS * LB_NS_PER_MS, line); /* "bye", or not */
	if (a->to >= 0)
		close(a->to);
	if (a->from >= 0)
		close(a->from);
	reap(a);
	lb_base_destroy(a);
}

static void *adapter_create(const struct lb_lock_cfg *cfg)
{
	struct adapter *a = lb_base_alloc(cfg, sizeof(*a));

	if (!a)
		return NULL;
	a->def = cfg->impl;
	a->to = a->from = -1;
	if (!a->def || spawn(a) < 0 || handshake(a) < 0) {
		if (a->def && a->pid <= 0 && !a->broken)
			lb_errorf("adapter %s (client %d): cannot start %s: %s", a->def->name, cfg->client,
				  a->def->argv[0], strerror(errno));
		a->broken = true;
		adapter_destroy(a);
		return NULL;
	}
	return a;
}

/* ---- the ops ---- */

/* One request's deadline: two network timeouts per node (a command and a
 * retry, one node after another at worst), and 2 s to spare. */
static int64_t limit_ms(const struct adapter *a)
{
	int64_t t = a->base.cfg.timeout_ms > 0 ? a->base.cfg.timeout_ms : 2000;
	return 2 * t * (int64_t)(a->base.cfg.n_nodes ? a->base.cfg.n_nodes : 1) + 2000;
}

static int adapter_acquire(void *self, struct lb_grant *grant)
{
	struct adapter *a = self;
	char line[LINE_MAX_BYTES + 1], v[40];
	int rc;

	/* --wait library: the library waits as it does by default, for as long
	 * as it does; only the end of the run stops it */
	if ((rc = request(a, "acquire", a->base.cfg.library_wait ? 0 : limit_ms(a), line)) < 0)
		return rc;
	if (is(line, "busy"))
		return LB_EBUSY;
	if (is(line, "error"))
		return LB_EREDIS;
	if (!is(line, "acquired"))
		return fail(a, "expected acquired, busy or error to acquire", line);
	a->lost = false;
	snprintf(a->base.token, sizeof(a->base.token), "%.32s",
		 field(line, "token", v, sizeof(v)) ? v : "");
	if (field(line, "fence", v, sizeof(v)) && !lb_parse_i64(v, 0, INT64_MAX, &grant->fence))
		return fail(a, "fence: expected a non-negative integer", line);
	if (field(line, "validity_ms", v, sizeof(v)) &&
	    !lb_parse_i64(v, 0, INT64_MAX, &grant->validity_ms))
		return fail(a, "validity_ms: expected a non-negative integer", line);
	return 0;
}

static int adapter_release(void *self)
{
	struct adapter *a = self;
	char line[LINE_MAX_BYTES + 1];
	int rc = request(a, "release", limit_ms(a), line);

	if (rc < 0)
		return rc;
	if (is(line, "released"))
		return 0;
	if (is(line, "not-owned"))
		return LB_ELOST;
	if (is(line, "error"))
		return LB_EREDIS;
	return fail(a, "expected released, not-owned or error to release", line);
}

static int adapter_extend(void *self, int64_t ttl_ms)
{
	struct adapter *a = self;
	char line[LINE_MAX_BYTES + 1], req[40];
	int rc;

	if (!a->can_extend)
		return LB_ENOTSUP;
	snprintf(req, sizeof(req), "extend %lld", (long long)ttl_ms);
	if ((rc = request(a, req, limit_ms(a), line)) < 0)
		return rc;
	if (is(line, "extended"))
		return 0;
	if (is(line, "not-owned"))
		return LB_ELOST;
	if (is(line, "unsupported"))
		return LB_ENOTSUP;
	if (is(line, "error"))
		return LB_EREDIS;
	return fail(a, "expected extended, not-owned, unsupported or error to extend", line);
}

/* The section asks every few ms: take any notice waiting, without blocking. */
static bool adapter_held(void *self)
{
	struct adapter *a = self;
	char line[LINE_MAX_BYTES + 1];
	int rc;

	if (!a->can_lost || a->broken)
		return !a->broken;
	while ((rc = next_line(a, lb_now_ns(), line)) == 1)
		if (!notice(a, line)) {
			fail(a, "an unrequested line (only 'lost MESSAGE' may come unasked)", line);
			return false;
		}
	return !a->lost && rc >= 0;
}

static const struct lock_strategy adapter_ops = {
	.create = adapter_create,
	.acquire = adapter_acquire,
	.release = adapter_release,
	.extend = adapter_extend,
	.held = adapter_held,
	.destroy = adapter_destroy,
	.blind_release = true,
};

/* ---- manifests ---- */

struct loaded {
	struct lb_adapter_def def;
	struct lock_strategy s;
};

static struct loaded adapters[MAX_ADAPTERS];
static size_t n_adapters;
static bool loaded;
static struct loaded execs[MAX_EXEC];
static size_t n_execs;

struct manifest {
	struct lb_adapter_def *d;
	char dir[PATH_MAX];
	char interpreter[256], program[256], args[256];
	bool bad;
};

static int on_key(void *user, const char *section, const char *name, const char *v)
{
	struct manifest *m = user;
	struct lb_adapter_def *d = m->d;
	(void)section;
#define KEY(k) else if (!strcmp(name, #k)) snprintf(d->k, sizeof(d->k), "%s", v)
	if (0)
		;
	KEY(name); KEY(library); KEY(package); KEY(language); KEY(version); KEY(summary);
	KEY(source); KEY(outside_key);
#undef KEY
	else if (!strcmp(name, "sends")) { /* goes on over indented lines: they add to it */
		size_t used = strlen(d->sends);
		snprintf(d->sends + used, sizeof(d->sends) - used, "%s%s", used ? " " : "", v);
	}
	else if (!strcmp(name, "interpreter"))
		snprintf(m->interpreter, sizeof(m->interpreter), "%s", v);
	else if (!strcmp(name, "program"))
		snprintf(m->program, sizeof(m->program), "%s", v);
	else if (!strcmp(name, "args"))
		snprintf(m->args, sizeof(m->args), "%s", v);
	else if (!strcmp(name, "nodes"))
		d->min_nodes = (unsigned)atoi(v);
	else if (!strcmp(name, "claims"))
		for (const char *c = v; *c; c++) {
			const char *at = strchr("MDFOL", *c);
			if (at)
				d->claims |= 1u << (at - "MDFOL");
		}
	else
		m->bad = true;
	return 1;
}

/* argv of @d: [interpreter] program [args...], stored in d->argbuf. */
static void set_argv(struct lb_adapter_def *d, const char *const *words, int n)
{
	size_t used = 0;
	int k = 0;

	for (int i = 0; i < n && k < LB_ADAPTER_MAX_ARGS; i++) {
		size_t len = strlen(words[i]) + 1;
		if (!words[i][0] || used + len > sizeof(d->argbuf))
			continue;
		memcpy(d->argbuf + used, words[i], len);
		d->argv[k++] = d->argbuf + used;
		used += len;
	}
	d->argv[k] = NULL;
}

static void make_strategy(struct loaded *l)
{
	l->s = adapter_ops;
	l->s.name = l->def.name;
	l->s.summary = l->def.summary;
	l->s.claims = l->def.claims;
	l->s.min_nodes = l->def.min_nodes ? l->def.min_nodes : 1;
	l->s.impl = &l->def;
}

static void load_one(const char *dir, const char *file)
{
	static struct manifest m;
	struct loaded *l = &adapters[n_adapters];
	char path[PATH_MAX + 300], program[PATH_MAX + 300];

	memset(l, 0, sizeof(*l));
	memset(&m, 0, sizeof(m));
	m.d = &l->def;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (ini_parse(path, on_key, &m) != 0 || m.bad || !l->def.name[0] || !m.program[0]) {
		lb_errorf("%s: not a valid adapter manifest (name, program and known keys only)", path);
		return;
	}
	snprintf(l->def.manifest, sizeof(l->def.manifest), "%.500s", path);
	snprintf(program, sizeof(program), "%s/%s", dir, m.program);
	/* [interpreter] program [args split at spaces] */
	const char *words[LB_ADAPTER_MAX_ARGS];
	int n = 0;
	if (m.interpreter[0])
		words[n++] = m.interpreter;
	words[n++] = program;
	for (char *save = NULL, *w = strtok_r(m.args, " \t", &save); w && n < LB_ADAPTER_MAX_ARGS;
	     w = strtok_r(NULL, " \t", &save))
		words[n++] = w;
	set_argv(&l->def, words, n);
	make_strategy(l);
	n_adapters++;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct loaded *)a)->def.name, ((const struct loaded *)b)->def.name);
}

static void load_all(void)
{
	char dir[PATH_MAX];
	DIR *d;

	if (loaded)
		return;
	loaded = true;
	const char *env = getenv("LOCKBENCH_ADAPTERS");
	if (env && *env)
		snprintf(dir, sizeof(dir), "%s", env);
	else if (!lb_find_installed("strategies/adapters", "share", dir, sizeof(dir)))
		return;
	if (!(d = opendir(dir)))
		return;
	for (struct dirent *e; (e = readdir(d)) && n_adapters < MAX_ADAPTERS;) {
		size_t n = strlen(e->d_name);
		if (n > 8 && !strcmp(e->d_name + n - 8, ".adapter"))
			load_one(dir, e->d_name);
	}
	closedir(d);
	qsort(adapters, n_adapters, sizeof(adapters[0]), by_name);
	for (size_t i = 0; i < n_adapters; i++) { /* qsort moved them: point at the new places */
		struct lb_adapter_def *def = &adapters[i].def;
		adapters[i].s.impl = def, adapters[i].s.name = def->name, adapters[i].s.summary = def->summary;
		/* argv pointed into the argbuf where the struct was: its words lie
		 * one after another in argbuf, so walk them again */
		const char *w = def->argbuf;
		for (int k = 0; def->argv[k]; k++, w += strlen(w) + 1)
			def->argv[k] = w;
	}
}

size_t lb_adapter_count(void)
{
	load_all();
	return n_adapters;
}

const struct lock_strategy *lb_adapter_at(size_t i)
{
	load_all();
	return i < n_adapters ? &adapters[i].s : NULL;
}

const struct lock_strategy *lb_adapter_find(const char *name)
{
	load_all();
	for (size_t i = 0; i < n_adapters; i++)
		if (!strcmp(adapters[i].def.name, name))
			return &adapters[i].s;
	return NULL;
}

void lb_adapter_set_exec_args(const char *const *args, int n)
{
	exec_args = args;
	n_exec_args = n;
}

const struct lock_strategy *lb_adapter_exec(const char *spec)
{
	const char *path = spec + 5; /* after "exec:" */
	struct stat st;

	for (size_t i = 0; i < n_execs; i++)
		if (!strcmp(execs[i].def.name, spec))
			return &execs[i].s;
	if (n_execs == MAX_EXEC || strlen(spec) >= sizeof(execs[0].def.name)) {
		lb_errorf("%s: too many exec: strategies, or a path longer than %zu", spec,
			  sizeof(execs[0].def.name) - 6);
		return NULL;
	}
	if (!*path || stat(path, &st) < 0 || !S_ISREG(st.st_mode) || access(path, X_OK) < 0) {
		lb_errorf("%s: %s is not an executable file (%s)", spec, *path ? path : "(empty)",
			  *path ? strerror(errno ? errno : EACCES) : "exec:PATH names a program");
		return NULL;
	}
	struct loaded *l = &execs[n_execs++];
	memset(l, 0, sizeof(*l));
	snprintf(l->def.name, sizeof(l->def.name), "%s", spec);
	snprintf(l->def.library, sizeof(l->def.library), "%s", path);
	snprintf(l->def.summary, sizeof(l->def.summary), "your program %.80s, through the adapter "
		 "protocol (docs/adapters.md)", path);
	set_argv(&l->def, &path, 1);
	l->def.exec = true;
	make_strategy(l);
	return &l->s;
}

const struct lb_adapter_def *lb_adapter_def_of(const struct lock_strategy *s)
{
	return s ? s->impl : NULL;
}

static bool check_usable(const struct lb_adapter_def *d, char *why, size_t len);

bool lb_adapter_usable(const struct lock_strategy *s, char *why, size_t len)
{
	struct lb_adapter_def *d = (struct lb_adapter_def *)lb_adapter_def_of(s);

	if (!d || d->exec)
		return true;
	if (!d->usable)
		d->usable = check_usable(d, d->unusable, sizeof(d->unusable)) ? 1 : -1;
	if (d->usable < 0)
		snprintf(why, len, "%s", d->unusable);
	return d->usable > 0;
}

static bool check_usable(const struct lb_adapter_def *d, char *why, size_t len)
{
	char out[512] = "", ver[64] = "";
	int pfd[2], status = 0;
	size_t used = 0;

	if (!d || d->exec)
		return true;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(why, len, "pipe: %s", strerror(errno));
		return false;
	}
	const char *argv[LB_ADAPTER_MAX_ARGS + 2];
	int n = 0;
	for (; d->argv[n] && n < LB_ADAPTER_MAX_ARGS; n++)
		argv[n] = d->argv[n];
	argv[n++] = "--check";
	argv[n] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		dup2(pfd[1], STDERR_FILENO);
		/* runs: (manifests) the adapter's own --check, by its interpreter */
		execvp(argv[0], (char *const *)argv);
		printf("cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	for (ssize_t k; pid > 0 && used < sizeof(out) - 1 &&
			(k = read(pfd[0], out + used, sizeof(out) - 1 - used)) > 0;)
		used += (size_t)k;
	out[used] = '\0';
	close(pfd[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	out[strcspn(out, "\n")] = '\0';
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, len, "%s is not usable here: %.300s", d->name, out[0] ? out : "its --check failed");
		return false;
	}
	char line[600];
	snprintf(line, sizeof(line), " %s", out);
	if (d->version[0] && field(line, "version", ver, sizeof(ver)) && strcmp(ver, d->version)) {
		snprintf(why, len, "%s expects %s %s, but %s is installed", d->name, d->library,
			 d->version, ver);
		return false;
	}
	return true;
}
