#include "fixture.h"
#include "adapter.h"
#include "params.h"
#include "readers.h"
#include "signals.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <regex.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

void fx_start(struct fx *f, size_t n)
{
	memset(f, 0, sizeof(*f));
	cr_assert_leq(n, FX_MAX_NODES);
	for (size_t i = 0; i < n; i++) {
		f->srv[i] = lb_server_start(NULL);
		cr_assert_not_null(f->srv[i], "redis-server %zu did not start", i);
		lb_node_init_local(&f->admin[i], f->srv[i]->port, 2000);
		f->n++;
	}
}

void fx_start_for(struct fx *f, const struct lock_strategy *s)
{
	int k = lb_consensus_of(s);

	if (!k) {
		fx_start(f, s->min_nodes);
		return;
	}
	memset(f, 0, sizeof(*f));
	cr_assert_eq(lb_consensus_start(&f->cons, (enum lb_consensus_kind)k, 60000), 0,
		     "the %s ensemble did not start", lb_consensus_name((enum lb_consensus_kind)k));
	for (size_t i = 0; i < LB_CONSENSUS_MEMBERS; i++)
		f->srv[i] = f->cons.member[i]; /* no admin connection: not Redis */
	f->n = LB_CONSENSUS_MEMBERS;
}

void fx_start_replica(struct fx *f)
{
	f->replica = lb_server_start_replica(f->srv[0]->port, f->srv[0]->port, 5000);
	cr_assert_not_null(f->replica, "the replica of node 0 did not come in sync");
}

void fx_stop(struct fx *f)
{
	lb_server_destroy(f->replica);
	f->replica = NULL;
	if (f->cons.kind) { /* its members go with it */
		memset(f->srv, 0, sizeof(f->srv));
		lb_consensus_destroy(&f->cons);
		f->n = 0;
	}
	for (size_t i = 0; i < f->n; i++) {
		lb_node_close(&f->admin[i]);
		lb_server_destroy(f->srv[i]);
		f->srv[i] = NULL;
	}
	f->n = 0;
}

void fx_client_init(struct fx_client *c, const struct fx *f, const struct lock_strategy *s,
		    const char *key, int64_t ttl_ms)
{
	fx_client_init_opts(c, f, s, key, ttl_ms, NULL);
}

void fx_client_init_opts(struct fx_client *c, const struct fx *f, const struct lock_strategy *s,
			 const char *key, int64_t ttl_ms, const struct lb_lock_cfg *opts)
{
	memset(c, 0, sizeof(*c));
	c->s = s;
	/* etcd's wait=one is one Lock call of 15 ms, then busy: on a fresh
	 * ensemble under make check's load a free lock's Lock takes longer, and
	 * a contract's single attempt read it as taken. A second's window keeps
	 * one attempt one answer (each test is its own process: the setting goes
	 * with it). */
	static const char *const etcd_window[] = { "window_ms=1000" };
	if (lb_consensus_of(s) == LB_CONSENSUS_ETCD)
		lb_adapter_set_exec_args(etcd_window, 1);
	for (size_t i = 0; i < f->n; i++) {
		lb_node_init_local(&c->node[i], f->srv[i]->port, 500);
		if (f->cons.kind) /* a member's address, for the adapter */
			strcpy(c->node[i].scheme, f->cons.kind == LB_CONSENSUS_ETCD ? "http" : "zk");
		c->nodes[i] = &c->node[i];
	}
	/* a JVM's first requests run Redisson's codecs and netty's pipeline for the
	 * first time: at 500 ms under make check's load a free lock's first acquire
	 * timed out (1 contract run in 5 with 4 busy loops on the 2 cores), and at
	 * 2000 ms RedissonMultiLock's (one client a node, each node's tryLock a
	 * request; any exception in one is "not acquired": busy) in one CI preview
	 * of make test; the Java adapters get 5 s */
	const struct lb_adapter_def *d = lb_adapter_def_of(s);
	int timeout_ms = d && !strcmp(d->language, "java") ? 5000 : 500;
	struct lb_lock_cfg cfg = {
		.nodes = c->nodes, .n_nodes = f->n, .key = key, .ttl_ms = ttl_ms, .clock = &c->clock,
		.no_validity_check = opts && opts->no_validity_check,
		.max_extensions = opts ? opts->max_extensions : 0,
		.impl = s->impl, .timeout_ms = timeout_ms, /* an external strategy's adapter */
		.poll_ms = opts ? opts->poll_ms : 0,
	};
	c->lock = s->create(&cfg);
	cr_assert_not_null(c->lock, "%s: create failed", s->name);
}

void fx_client_fini(struct fx_client *c)
{
	if (c->s)
		c->s->destroy(c->lock);
	for (size_t i = 0; i < FX_MAX_NODES; i++)
		lb_node_close(&c->node[i]);
	memset(c, 0, sizeof(*c));
}

int fx_acquire(struct fx_client *c)
{
	c->grant = (struct lb_grant){ .fence = -1, .validity_ms = -1 };
	return c->s->acquire(c->lock, &c->grant);
}

int fx_release(struct fx_client *c)
{
	return c->s->release(c->lock);
}

redisReply *fx_cmd(struct fx *f, size_t i, const char *fmt, ...)
{
	va_list ap;
	redisReply *r;

	cr_assert_lt(i, f->n);
	for (int attempt = 0; attempt < 2; attempt++) {
		if (lb_node_connect(&f->admin[i]) < 0)
			return NULL;
		va_start(ap, fmt);
		r = redisvCommand(f->admin[i].ctx, fmt, ap);
		va_end(ap);
		if (r)
			return r;
		lb_node_close(&f->admin[i]); /* the server restarted: reconnect once */
	}
	return NULL;
}

long long fx_pttl(struct fx *f, size_t i, const char *key)
{
	redisReply *r = fx_cmd(f, i, "PTTL %s", key);
	long long v = -100;

	cr_assert(lb_reply_int(r, &v), "PTTL failed");
	freeReplyObject(r);
	return v;
}

bool fx_port_closed(int port)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
	bool closed = !c || c->err;

	if (c)
		redisFree(c);
	return closed;
}

bool fx_pid_gone(pid_t pid)
{
	char path[64], buf[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'Z';
}

static char deadline_msg[96];
static size_t deadline_len;

static void deadline_reached(int sig)
{
	ssize_t w = write(STDERR_FILENO, deadline_msg, deadline_len);
	(void)w;
	signal(sig, SIG_DFL);
	raise(sig);
}

void fx_deadline(unsigned seconds)
{
	int n = snprintf(deadline_msg, sizeof(deadline_msg),
			 "\nthe test's time limit of %u s is up: it is stopped\n", seconds);
	deadline_len = n > 0 ? (size_t)n : 0;
	signal(SIGALRM, deadline_reached);
	alarm(seconds);
}

void fx_become_subreaper(void)
{
	char tag[32];

	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	/* what this test starts from now on says so (fx_left): tests of other
	 * binaries may run beside it (tests/run.sh) */
	snprintf(tag, sizeof(tag), "%ld", (long)getpid());
	setenv("LBTEST_OWNER", tag, 1);
}

void fx_reap_orphans(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

pid_t fx_spawn_lockbench(const char *const *args, const char *out, const char *err)
{
	const char *bin = getenv("LOCKBENCH_BIN");
	const char *argv[40];
	int n = 0;

	cr_assert_not_null(bin, "LOCKBENCH_BIN must name build/lockbench (make test sets it)");
	argv[n++] = bin;
	for (; *args && n < 39; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	pid_t parent = getpid();
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* a test that fails before it stops what it started (lockbench
		 * servers waits for Ctrl-C) must not leave it running */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		/* every process it starts inherits this: fx_wait_lockbench finds
		 * what is left of it however it escaped (setsid, a new parent) */
		char tag[32];
		snprintf(tag, sizeof(tag), "%ld", (long)getpid());
		setenv("LBTEST_SPAWN", tag, 1);
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = strcmp(out, err) ? open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644) : fo;
		dup2(fo, STDOUT_FILENO);
		dup2(fe, STDERR_FILENO);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

int fx_lockbench(const char *dir, const char *const *args)
{
	char out[PATH_MAX];

	snprintf(out, sizeof(out), "%s/output", dir);
	pid_t pid = fx_spawn_lockbench(args, out, out);
	return fx_wait_lockbench(pid, args);
}

/* A run's directory at or under @dir (depth as `lockbench check` walks). */
static bool holds_a_run(const char *dir, int depth)
{
	char path[PATH_MAX];
	struct stat st;
	bool found = false;

	snprintf(path, sizeof(path), "%s/summary.csv", dir);
	if (access(path, F_OK) == 0)
		return true;
	DIR *d = depth < 6 ? opendir(dir) : NULL;
	for (struct dirent *e; d && !found && (e = readdir(d));) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		found = e->d_name[0] != '.' && lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
			holds_a_run(path, depth + 1);
	}
	if (d)
		closedir(d);
	return found;
}

void fx_recheck(const char *dir)
{
	char file[] = "/tmp/lbtest-check-XXXXXX";
	const char *args[] = { "check", dir, NULL };
	int status;

	if (!holds_a_run(dir, 0))
		return;
	int fd = mkstemp(file);
	cr_assert_geq(fd, 0);
	close(fd);
	pid_t pid = fx_spawn_lockbench(args, file, file);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	char *said = strdup(fx_slurp("/", file + 1));
	unlink(file);
	bool agrees = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!agrees)
		cr_assert_fail("lockbench check %s disagrees with what the run wrote:\n%s", dir,
			       said ? said : "(its output could not be kept)");
	free(said);
}

/* The processes other than this one whose environment holds @want
 * ("NAME=VALUE"; NULL: any) and, unless @re is NULL, whose command line (its arguments
 * joined by spaces, as pgrep -f reads it) matches @re, into @what
 * ("PID COMMAND, ..."); their count. */
static int scan(const char *want, const regex_t *re, char *what, size_t len)
{
	int n = 0;
	size_t used = 0, wl = want ? strlen(want) : 0;
	DIR *d = opendir("/proc");
	what[0] = '\0';
	for (struct dirent *e; d && (e = readdir(d));) {
		char path[300], env[65536], comm[64] = "?";
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || atol(e->d_name) == (long)getpid())
			continue;
		int fd;
		ssize_t k;
		if (want) { /* anywhere: an empty environment (env -i) is still a process */
			snprintf(path, sizeof(path), "/proc/%s/environ", e->d_name);
			if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
				continue;
			k = read(fd, env, sizeof(env) - 1);
			close(fd);
			if (k <= 0)
				continue; /* a zombie has none: it is not running */
			env[k] = '\0';
			bool found = false;
			for (char *p = env; p < env + k && !found; p += strlen(p) + 1)
				found = !strncmp(p, want, wl) && p[wl] == '\0';
			if (!found)
				continue;
		}
		if (re) {
			snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			k = fd < 0 ? -1 : read(fd, env, sizeof(env) - 1);
			if (fd >= 0)
				close(fd);
			if (k <= 0)
				continue;
			for (ssize_t i = 0; i < k - 1; i++)
				env[i] = env[i] ? env[i] : ' ';
			env[k] = '\0';
			if (regexec(re, env, 0, NULL, 0))
				continue;
		}
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		if (used < len)
			used += (size_t)snprintf(what + used, len - used, "%s%s %s", n ? ", " : "",
						 e->d_name, comm);
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* The processes whose environment says fx_spawn_lockbench started @pid's
 * lockbench (LBTEST_SPAWN=@pid), into @what ("PID COMMAND, ..."); their count. */
static int tagged(pid_t pid, char *what, size_t len)
{
	char want[48];

	snprintf(want, sizeof(want), "LBTEST_SPAWN=%ld", (long)pid);
	return scan(want, NULL, what, len);
}

static int left(const char *want, const char *pattern, char *what, size_t len)
{
	regex_t re;

	cr_assert_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0, "pattern %s", pattern);
	int n = scan(want, &re, what, len);
	regfree(&re);
	return n;
}

int fx_left(const char *pattern, char *what, size_t len)
{
	char want[48];

	snprintf(want, sizeof(want), "LBTEST_OWNER=%ld", (long)getpid());
	cr_assert_str_eq(getenv("LBTEST_OWNER") ? getenv("LBTEST_OWNER") : "", want + 13,
			 "fx_left needs fx_become_subreaper() in the test's setup (its tag)");
	return left(want, pattern, what, len);
}

int fx_left_anywhere(const char *pattern, char *what, size_t len)
{
	return left(NULL, pattern, what, len);
}

void fx_nothing_left(pid_t pid)
{
	char what[512];
	int n = 0;
	/* helpers die a moment after lockbench (PDEATHSIG, the janitor) */
	for (int t = 0; t < 100 && (n = tagged(pid, what, sizeof(what))) > 0; t++) {
		fx_reap_orphans();
		lb_sleep_ns(30 * LB_NS_PER_MS);
	}
	cr_assert_eq(n, 0, "lockbench (pid %ld) left %d process%s running after it exited: %s",
		     (long)pid, n, n == 1 ? "" : "es", what);
}

int fx_wait_lockbench(pid_t pid, const char *const *args)
{
	static const char *const writers[] = { "run", "compare", "matrix", "sweep", "chaos",
					       "bench", NULL };
	const char *out = NULL;
	bool writes = false;
	int status;

	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "lockbench died of a signal");
	fx_nothing_left(pid);
	for (const char *const *w = writers; args[0] && *w; w++)
		writes |= !strcmp(args[0], *w);
	for (int i = 0; writes && args[i]; i++)
		if (!strcmp(args[i], "--out") && args[i + 1])
			out = args[i + 1];
	if (out)
		fx_recheck(out);
	return WEXITSTATUS(status);
}

char *fx_slurp(const char *dir, const char *rel)
{
	static char buf[1 << 22];
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "no %s", path);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	bool more = fgetc(f) != EOF;
	fclose(f);
	/* never a silent prefix: a search in it would miss what lies past it */
	cr_assert_not(more, "%s is larger than the %zu bytes a test reads", path, sizeof(buf) - 1);
	buf[n] = '\0';
	return buf;
}

/* Every process whose parent chain leads to @root. */
int fx_descendants(pid_t root, pid_t *out, int max)
{
	return max > 0 ? (int)lb_proc_descendants(root, out, (size_t)max) : 0;
}

void fx_kill9_leaves_nothing(pid_t pid, const pid_t *pids, int n)
{
	kill(pid, SIGKILL);
	for (int i = 0; i < n; i++) {
		bool gone = false;
		for (int t = 0; t < 150 && !gone; t++) {
			fx_reap_orphans();
			gone = fx_pid_gone(pids[i]);
			if (!gone)
				lb_sleep_ns(20 * LB_NS_PER_MS);
		}
		cr_assert(gone, "process %d outlived lockbench's kill -9", pids[i]);
	}
}

int fx_wait_descendants(pid_t root, pid_t *out, int max, int want, int timeout_ms)
{
	int n = 0;
	for (int t = 0; t * 50 < timeout_ms && n < want; t++) {
		lb_sleep_ns(50 * LB_NS_PER_MS);
		n = fx_descendants(root, out, max);
	}
	return n;
}

int fx_count_tmp_entries(const char *prefix)
{
	const char *tmp = getenv("TMPDIR");
	DIR *d = opendir(tmp && *tmp ? tmp : "/tmp");
	int n = 0;

	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

#define FX_MAX_TMPDIRS 32
static struct {
	char path[256];
	pid_t owner; /* a forked child that calls exit() leaves it alone */
} fx_tmpdirs[FX_MAX_TMPDIRS];

static int fx_rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(path);
}

/* A test's own temporary directory, whatever lockbench left in it (the
 * test's code, not lockbench's: its deletes are owned.c's alone). */
static void fx_rmtree(const char *path)
{
	nftw(path, fx_rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void fx_remove_tmpdirs(void)
{
	if (getenv("LOCKBENCH_KEEP_TESTDIRS"))
		return;
	for (int i = 0; i < FX_MAX_TMPDIRS; i++)
		if (fx_tmpdirs[i].path[0] && fx_tmpdirs[i].owner == getpid()) {
			fx_rmtree(fx_tmpdirs[i].path);
			fx_tmpdirs[i].path[0] = 0;
		}
}

const char *fx_root(void)
{
	static char top[PATH_MAX];
	char buf[PATH_MAX];
	const char *sc = getenv("LOCKBENCH_SCENARIOS");

	cr_assert_not_null(sc, "LOCKBENCH_SCENARIOS is not set (run through make test)");
	snprintf(buf, sizeof(buf), "%s", sc);
	snprintf(top, sizeof(top), "%s", dirname(buf));
	return top;
}

char *fx_mkdtemp(char *tmpl)
{
	static bool registered;
	char *dir = mkdtemp(tmpl);

	if (!dir || strlen(dir) >= sizeof(fx_tmpdirs[0].path))
		return dir;
	if (!registered && atexit(fx_remove_tmpdirs) == 0)
		registered = true;
	for (int i = 0; i < FX_MAX_TMPDIRS; i++)
		if (!fx_tmpdirs[i].path[0]) {
			snprintf(fx_tmpdirs[i].path, sizeof(fx_tmpdirs[i].path), "%s", dir);
			fx_tmpdirs[i].owner = getpid();
			break;
		}
	return dir;
}

const char *fx_summary(const char *dir, const char *name)
{
	static char buf[512];
	char path[PATH_MAX];
	struct lb_summary s;

	snprintf(path, sizeof(path), "%.4000s/summary.csv", dir);
	cr_assert_eq(lb_summary_read(path, &s), 0, "%s", path);
	const char *v = lb_summary_get(&s, name);
	cr_assert_not_null(v, "%s has no %s", path, name);
	snprintf(buf, sizeof(buf), "%s", v);
	return buf;
}
