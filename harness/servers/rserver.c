#include "clockfile.h"
#include "outfile.h"
#include "owned.h"
#include "rserver.h"
#include "signals.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_LIVE 64
/* the janitor's other directories (lb_janitor_dir: the adapter hosts' sockets) */
#define MAX_EXTRA 4
#define JANITOR_SLOTS (MAX_LIVE + MAX_EXTRA)
#define START_TRIES 5
#define READY_TIMEOUT_MS 5000
#define STOP_TIMEOUT_MS 2000
#define MAX_ARGS 64
#define MAX_ENV 256

/* pids of running servers, read by the signal-safe killer */
static volatile pid_t live_pids[MAX_LIVE];
/* the directories of servers not destroyed yet, for the same path */
static struct lb_server *volatile live_dirs[MAX_LIVE];
/* the kinds of server directory (lockbench-KIND-PID-XXXXXX) this layer makes,
 * removes and sweeps: nothing else is ever removed */
static const char *const dir_kinds[] = { "redis", "etcd", "zookeeper", "hosts", "tunnel", NULL };

/* The kind of the server directory named @name (its last component), or NULL. */
static const char *dir_kind(const char *name)
{
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	if (strncmp(base, "lockbench-", 10))
		return NULL;
	for (const char *const *k = dir_kinds; *k; k++) {
		size_t n = strlen(*k);
		if (!strncmp(base + 10, *k, n) && base[10 + n] == '-')
			return *k;
	}
	return NULL;
}

/* An import's temporary copy, DIR.lockbench-XXXXXX (import_dir.c), by the
 * name @path ends with. */
static bool import_copy(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	size_t n = strlen(base);
	return n > 17 && !strncmp(base + n - 17, ".lockbench-", 11);
}

/* What the janitor removes: a server's or the hosts' directory, or an
 * import's temporary copy (each also checked by its marker: owned.h). */
static bool janitor_kind(const char *path)
{
	return dir_kind(path) || import_copy(path);
}

static void track(pid_t pid)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (live_pids[i] == 0) {
			live_pids[i] = pid;
			return;
		}
}

static void untrack(pid_t pid)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (live_pids[i] == pid)
			live_pids[i] = 0;
}

/*
 * The janitor: a kill -9 of lockbench kills its servers (PR_SET_PDEATHSIG)
 * but cannot remove their directories. So the first server a process starts
 * also forks a janitor, which shares the list of live directories and waits
 * on a pipe whose only writers are that process and its forked children (the
 * end is close-on-exec: no redis-server holds it). When the last of them is
 * gone, however it went, the read ends, and the janitor removes whatever
 * directories are still listed (none after a normal exit) and exits.
 */
#define JANITOR_PATH (LB_DIR_MAX + 64)
static char (*janitor_dirs)[JANITOR_PATH];
static char janitor_cgroup[512]; /* the run's cgroup (signals.h), "" when none */

static void __attribute__((noreturn)) janitor(int fd, pid_t owner)
{
	char c, runs[32];

	signal(SIGINT, SIG_IGN); /* a terminal's Ctrl-C is lockbench's to handle */
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
	/* what its runs started and nothing else stopped: a library's helper
	 * that left with setsid (signals.h) */
	snprintf(runs, sizeof(runs), "%ld-", (long)owner);
	lb_kill_marked(runs);
	/* and what also cleared its environment and left with setsid: still
	 * in the owner's cgroup, whatever it did (signals.h) */
	if (janitor_cgroup[0])
		lb_cgroup_kill(janitor_cgroup);
	/* the servers die with their owner: give them a moment, then sweep twice
	 * (a dying Sentinel may still rewrite its configuration file) */
	for (int round = 0; round < 2; round++) {
		lb_sleep_ns(100 * LB_NS_PER_MS);
		for (int i = 0; i < JANITOR_SLOTS; i++)
			if (janitor_dirs[i][0] && janitor_kind(janitor_dirs[i]))
				lb_owned_rmtree(janitor_dirs[i]);
	}
	_exit(0);
}

void lb_janitor_start(void)
{
	int p[2];
	pid_t owner = getpid();

	if (janitor_dirs)
		return;
	void *m = mmap(NULL, sizeof(char[JANITOR_SLOTS][JANITOR_PATH]), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || pipe2(p, O_CLOEXEC) < 0) {
		if (m != MAP_FAILED)
			munmap(m, sizeof(char[JANITOR_SLOTS][JANITOR_PATH]));
		return; /* no janitor: a later run's lb_sweep_stale_dirs still cleans up */
	}
	janitor_dirs = m;
	/* made before the fork, so that the janitor knows it; only this process
	 * moves into it: the janitor stays where it was, to kill and remove it */
	bool cgroup = lb_cgroup_make(janitor_cgroup, sizeof(janitor_cgroup)) == 0;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		/* hold nothing of the parent's: a pipe someone waits to see closed,
		 * the terminal's output */
		int null = open("/dev/null", O_RDWR);
		for (int fd = 0; fd < 3 && null >= 0; fd++)
			dup2(null, fd);
		for (int fd = 3; fd < 4096; fd++)
			if (fd != p[0])
				close(fd);
		janitor(p[0], owner);
	}
	close(p[0]); /* p[1] stays open for the life of this process */
	if (pid < 0)
		close(p[1]);
	if (cgroup && pid < 0)
		rmdir(janitor_cgroup); /* no janitor to remove it */
	if (cgroup && (pid < 0 || lb_cgroup_join(janitor_cgroup) < 0))
		janitor_cgroup[0] = '\0';
}

void lb_janitor_dir(const char *dir, bool on)
{
	lb_janitor_start();
	if (!janitor_dirs || !janitor_kind(dir) || strlen(dir) >= sizeof(janitor_dirs[0]))
		return;
	for (int i = MAX_LIVE; i < JANITOR_SLOTS; i++)
		if (on ? !janitor_dirs[i][0] : !strcmp(janitor_dirs[i], dir)) {
			if (on)
				snprintf(janitor_dirs[i], sizeof(janitor_dirs[i]), "%s", dir);
			else
				janitor_dirs[i][0] = '\0';
			return;
		}
}

static void track_dir(struct lb_server *s, bool on)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (on ? live_dirs[i] == NULL : live_dirs[i] == s) {
			live_dirs[i] = on ? s : NULL;
			if (janitor_dirs && on)
				snprintf(janitor_dirs[i], sizeof(janitor_dirs[i]), "%s", s->dir);
			else if (janitor_dirs)
				janitor_dirs[i][0] = '\0';
			return;
		}
}

void lb_server_kill_all_signal_safe(void)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (live_pids[i] > 0)
			kill(live_pids[i], SIGKILL);
	for (int i = 0; i < MAX_LIVE; i++)
		if (live_dirs[i]) {
			/* a command's log has its own name; what it keeps in
			 * subdirectories is the janitor's (it runs when we are gone) */
			const char *log = strrchr(live_dirs[i]->log_path, '/');
			const char *files[] = { log ? log + 1 : "", "redis.log", "clock_offset_ms",
						"dump.rdb", NULL };
			lb_owned_rmdir_signal_safe(live_dirs[i]->dir, files);
		}
}

static char bind_also[64]; /* lb_server_bind_also */

void lb_server_bind_also(const char *addr)
{
	snprintf(bind_also, sizeof(bind_also), "%s", addr ? addr : "");
}

const char *lb_redis_server_path(void)
{
	const char *p = getenv("LOCKBENCH_REDIS_SERVER");
	return p && *p ? p : "redis-server";
}

int lb_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd, port;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return LB_ESYS;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		close(fd);
		return LB_ESYS;
	}
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* Reap @pid if it has exited; true when it is gone. */
static bool reaped(pid_t pid, int *wstatus)
{
	pid_t r = waitpid(pid, wstatus, WNOHANG);
	return r == pid || (r < 0 && errno == ECHILD);
}

bool lb_server_alive(struct lb_server *s)
{
	if (!s || s->pid <= 0)
		return false;
	if (reaped(s->pid, NULL)) {
		untrack(s->pid);
		s->pid = 0;
		s->paused = false;
		return false;
	}
	return true;
}

/* In the child: the environment and signal mask every server starts with. */
static void set_child_env(const struct lb_server *s)
{
	if (s->opts.preload)
		setenv("LD_PRELOAD", s->opts.preload, 1);
	if (s->opts.clock_shim) {
		setenv("LD_PRELOAD", s->opts.clock_shim, 1);
		setenv("LOCKBENCH_CLOCK_FILE", s->clock_path, 1);
	}
	for (const char *const *e = s->opts.extra_env; e && *e; e++)
		putenv((char *)*e);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* In the child: remove the variables whose names begin with one of @prefix. */
static void drop_env(const char *const *prefix)
{
	extern char **environ;

	for (const char *const *p = prefix; p && *p; p++) {
		size_t n = strlen(*p);
		for (int i = 0; environ[i];) {
			char name[256];
			const char *eq = strchr(environ[i], '=');
			size_t len = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
			if (strncmp(environ[i], *p, n) || len >= sizeof(name)) {
				i++;
				continue;
			}
			memcpy(name, environ[i], len);
			name[len] = '\0';
			/* a removed entry shifts the rest down: look at i again */
			if (unsetenv(name) < 0)
				i++;
		}
	}
}

/* In the child: another program (opts.command) in the server's directory,
 * its output appended to the log. Returns only if it could not be run. */
static void exec_command(const struct lb_server *s)
{
	const char *argv[MAX_ARGS];
	int n = 0;
	int log = open(s->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (log < 0 || chdir(s->dir) < 0)
		return;
	drop_env(s->opts.drop_env);
	dup2(log, STDOUT_FILENO);
	dup2(log, STDERR_FILENO);
	for (char **a = s->command; *a && n < MAX_ARGS - 1; a++)
		argv[n++] = *a;
	for (const char *const *a = s->opts.extra_args; a && *a && n < MAX_ARGS - 1; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	/* runs: etcd (etcd-server), java (openjdk-17-jre-headless) */
	execvp(argv[0], (char *const *)argv);
	dprintf(STDERR_FILENO, "lockbench: cannot run %s: %s\n", argv[0], strerror(errno));
}

/* In the child: never returns. */
static void exec_server(const struct lb_server *s, pid_t parent)
{
	char port[16];
	const char *argv[MAX_ARGS];
	int n = 0, devnull;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	setpgid(0, 0);
	devnull = open("/dev/null", O_RDWR);
	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
		dup2(devnull, STDERR_FILENO);
	}
	set_child_env(s);
	if (s->command) {
		exec_command(s);
		_exit(127);
	}
	snprintf(port, sizeof(port), "%d", s->port);
	argv[n++] = lb_redis_server_path();
	if (s->sentinel_conf[0]) { /* the file comes first, then the mode */
		argv[n++] = s->sentinel_conf;
		argv[n++] = "--sentinel";
	}
	argv[n++] = "--port";
	argv[n++] = port;
	argv[n++] = "--bind";
	argv[n++] = "127.0.0.1";
	if (bind_also[0]) { /* run --hosts --bind ADDR: the hosts reach it there */
		argv[n++] = bind_also;
		argv[n++] = "--protected-mode";
		argv[n++] = "no";
	}
	argv[n++] = "--save";
	argv[n++] = "";
	argv[n++] = "--appendonly";
	argv[n++] = "no";
	if (!s->sentinel_conf[0]) { /* thousands of clients connect within milliseconds
				       (a stampede): the kernel caps it at somaxconn */
		argv[n++] = "--tcp-backlog";
		argv[n++] = "4096";
	}
	argv[n++] = "--enable-debug-command";
	argv[n++] = "local";
	argv[n++] = "--daemonize";
	argv[n++] = "no";
	argv[n++] = "--dir";
	argv[n++] = s->dir;
	argv[n++] = "--logfile";
	argv[n++] = s->log_path;
	for (const char *const *a = s->opts.extra_args; a && *a && n < MAX_ARGS - 1; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	/* runs: redis-server (redis-server) */
	execvp(argv[0], (char *const *)argv);
	_exit(127);
}

static bool log_says(const struct lb_server *s, const char *needle)
{
	char buf[8192];
	FILE *f = fopen(s->log_path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

/* A connection for lockbench's own commands, with connect and command
 * timeouts: no administrative call waits without a deadline. */
static redisContext *admin_connect(int port, int timeout_ms)
{
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
	redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);

	if (c && !c->err && redisSetTimeout(c, tv) == REDIS_OK)
		return c;
	if (c)
		redisFree(c);
	return NULL;
}

int lb_server_poll_ready(struct lb_server *s)
{
	if (!lb_server_alive(s))
		return LB_ESYS;
	if (s->opts.ready)
		return s->opts.ready(s) == 0 ? 0 : 1;
	redisContext *c = admin_connect(s->port, 200);
	if (!c)
		return 1;
	redisReply *r = redisCommand(c, "PING");
	bool ok = r && r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "PONG");
	if (r)
		freeReplyObject(r);
	redisFree(c);
	return ok ? 0 : 1;
}

int lb_server_wait_ready(struct lb_server *s, int timeout_ms)
{
	int64_t deadline = lb_now_ns() + (int64_t)timeout_ms * LB_NS_PER_MS;

	while (lb_now_ns() < deadline) {
		int rc = lb_server_poll_ready(s);
		if (rc <= 0)
			return rc;
		lb_sleep_ns(5 * LB_NS_PER_MS);
	}
	return LB_ETIMEOUT;
}

/* fork+exec on s->port; does not wait. */
static int spawn_begin(struct lb_server *s)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return LB_ESYS;
	if (pid == 0)
		exec_server(s, parent);
	setpgid(pid, pid); /* also from the parent: no race with the child's own call */
	s->pid = pid;
	s->paused = false;
	track(pid);
	return 0;
}

/* fork+exec on s->port and wait for PING. */
static int spawn(struct lb_server *s)
{
	int rc = spawn_begin(s);

	if (rc == 0 && (rc = lb_server_wait_ready(s, READY_TIMEOUT_MS)) < 0)
		lb_server_kill(s);
	return rc;
}

/* A name lb_sweep_stale_dirs looks at: lockbench-KIND-PID-XXXXXX. */
static bool stale_name(const char *name, const void *arg)
{
	(void)arg;
	return dir_kind(name) != NULL;
}

/* Directories left by a lockbench that was killed with SIGKILL (nothing runs
 * in it then): lockbench-KIND-<pid>-XXXXXX whose maker, as its marker says,
 * is gone (owned.h: never another user's, never one whose maker may live in
 * another pid namespace). Once per process and parent directory, at its
 * first server there. */
void lb_sweep_stale_dirs(const char *tmp)
{
	static char swept[4][256];
	int slot = -1;

	for (int i = 0; i < 4; i++) {
		if (!strcmp(swept[i], tmp))
			return;
		if (slot < 0 && !swept[i][0])
			slot = i;
	}
	if (slot < 0 || strlen(tmp) >= sizeof(swept[0]))
		return;
	snprintf(swept[slot], sizeof(swept[slot]), "%s", tmp);
	lb_owned_sweep(tmp, stale_name, NULL);
}

/* s->command: an owned copy of opts.command. */
static int copy_command(struct lb_server *s)
{
	size_t n = 0;

	while (s->opts.command[n])
		n++;
	if (n == 0 || n >= MAX_ARGS || !(s->command = calloc(n + 1, sizeof(char *))))
		return LB_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!(s->command[i] = strdup(s->opts.command[i])))
			return LB_ENOMEM;
	s->opts.command = (const char *const *)s->command;
	return 0;
}

struct lb_server *lb_server_prepare(const struct lb_server_opts *opts)
{
	lb_janitor_start(); /* first: its copy of this process holds nothing of the server's */
	/* before its directory exists: a fatal signal from then on removes it */
	lb_signals_on_fatal(lb_server_kill_all_signal_safe);
	struct lb_server *s = calloc(1, sizeof(*s));
	const char *tmp = getenv("TMPDIR");
	const char *kind = opts && opts->kind ? opts->kind : "redis";
	char probe[64];

	if (!s)
		return NULL;
	if (opts)
		s->opts = *opts;
	tmp = s->opts.parent_dir ? s->opts.parent_dir : tmp && *tmp ? tmp : "/tmp";
	snprintf(probe, sizeof(probe), "lockbench-%s-", kind);
	if (!dir_kind(probe) || (s->opts.command && copy_command(s) < 0)) {
		lb_errorf("cannot start a server of kind %s: bad options", kind);
		lb_server_destroy(s);
		return NULL;
	}
	lb_sweep_stale_dirs(tmp);
	/* the owner's pid in the name: a later run can tell a dir whose owner died */
	snprintf(s->dir, sizeof(s->dir), "%.200s/lockbench-%s-%d-XXXXXX", tmp, kind, (int)getpid());
	if (lb_owned_mkdtemp(s->dir) < 0) {
		lb_errorf("cannot create a temporary directory %s: %s", s->dir, strerror(errno));
		s->dir[0] = '\0';
		lb_server_destroy(s);
		return NULL;
	}
	track_dir(s, true);
	snprintf(s->log_path, sizeof(s->log_path), "%s/%.40s", s->dir,
		 s->opts.log_name ? s->opts.log_name : "redis.log");
	snprintf(s->clock_path, sizeof(s->clock_path), "%s/clock_offset_ms", s->dir);
	if (s->opts.command)
		s->port = s->opts.port;
	return s;
}

struct lb_server *lb_server_start(const struct lb_server_opts *opts)
{
	struct lb_server *s = lb_server_prepare(opts);

	if (!s)
		return NULL;
	if (s->opts.clock_shim && lb_server_set_clock(s, 0) < 0) {
		lb_errorf("cannot write %s: %s", s->clock_path, strerror(errno));
		lb_server_destroy(s);
		return NULL;
	}
	if (s->opts.sentinel_config) {
		snprintf(s->sentinel_conf, sizeof(s->sentinel_conf), "%s/sentinel.conf", s->dir);
		FILE *f = fopen(s->sentinel_conf, "w");
		bool ok = f && fputs(s->opts.sentinel_config, f) >= 0;
		if (!f || fclose(f) != 0 || !ok) {
			lb_errorf("cannot write %s: %s", s->sentinel_conf, strerror(errno));
			lb_server_destroy(s);
			return NULL;
		}
	}
	if (s->command) {
		if (spawn(s) == 0)
			return s;
		lb_errorf("cannot start %s on 127.0.0.1:%d; see %s", s->command[0], s->port,
			  s->log_path);
		lb_server_destroy(s);
		return NULL;
	}
	for (int attempt = 0; attempt < START_TRIES; attempt++) {
		s->port = lb_free_port();
		if (s->port < 0)
			break;
		if (spawn(s) == 0)
			return s;
		/* another program may have taken the port between probe and bind */
		if (!log_says(s, "Address already in use"))
			break;
		lb_owned_unlink(s->log_path);
	}
	lb_errorf("cannot start %s (is the redis-server package installed?); see %s",
		  lb_redis_server_path(), s->log_path);
	lb_server_destroy(s);
	return NULL;
}

static int signal_and_reap(struct lb_server *s, int sig, int timeout_ms)
{
	if (!lb_server_alive(s))
		return 0;
	if (s->paused && sig != SIGKILL)
		kill(s->pid, SIGCONT);
	kill(s->pid, sig);
	int64_t deadline = lb_now_ns() + (int64_t)timeout_ms * LB_NS_PER_MS;
	while (!reaped(s->pid, NULL)) {
		if (lb_now_ns() > deadline) {
			kill(s->pid, SIGKILL);
			waitpid(s->pid, NULL, 0);
			break;
		}
		lb_sleep_ns(2 * LB_NS_PER_MS);
	}
	untrack(s->pid);
	s->pid = 0;
	s->paused = false;
	return 0;
}

int lb_server_stop(struct lb_server *s) { return signal_and_reap(s, SIGTERM, STOP_TIMEOUT_MS); }
int lb_server_kill(struct lb_server *s) { return signal_and_reap(s, SIGKILL, STOP_TIMEOUT_MS); }

int lb_server_pause(struct lb_server *s)
{
	if (!lb_server_alive(s))
		return LB_EINVAL;
	if (kill(s->pid, SIGSTOP) < 0)
		return LB_ESYS;
	s->paused = true;
	return 0;
}

int lb_server_resume(struct lb_server *s)
{
	if (!lb_server_alive(s))
		return LB_EINVAL;
	if (kill(s->pid, SIGCONT) < 0)
		return LB_ESYS;
	s->paused = false;
	return 0;
}

int lb_server_respawn(struct lb_server *s)
{
	if (lb_server_alive(s))
		return LB_EINVAL;
	return spawn(s);
}

int lb_server_respawn_begin(struct lb_server *s)
{
	if (lb_server_alive(s))
		return LB_EINVAL;
	return spawn_begin(s);
}

static int save_snapshot(struct lb_server *s)
{
	redisContext *c = admin_connect(s->port, 5000);
	int rc = LB_EREDIS;

	if (c) {
		redisReply *r = redisCommand(c, "SAVE");
		if (r && r->type == REDIS_REPLY_STATUS)
			rc = 0;
		if (r)
			freeReplyObject(r);
	}
	if (c)
		redisFree(c);
	return rc;
}

int lb_server_restart(struct lb_server *s, bool keep_data)
{
	char rdb[320];
	int rc;

	if (s->command)
		return LB_ENOTSUP;
	snprintf(rdb, sizeof(rdb), "%s/dump.rdb", s->dir);
	if (keep_data) {
		if (s->paused)
			lb_server_resume(s);
		rc = save_snapshot(s);
		if (rc < 0)
			return rc;
		lb_server_stop(s);
	} else {
		lb_server_kill(s);
		lb_owned_unlink(rdb);
	}
	return spawn(s);
}

int lb_clock_file_set(const char *path, const struct lb_clockset *set)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	struct lb_clockfile *f;

	if (fd < 0)
		return LB_ESYS;
	if (ftruncate(fd, (off_t)LB_CLOCKFILE_SIZE) < 0) {
		close(fd);
		return LB_ESYS;
	}
	f = mmap(NULL, LB_CLOCKFILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (f == MAP_FAILED)
		return LB_ESYS;
	/* into the page the shim has mapped, under its sequence count: never
	 * read half written */
	lb_clockfile_store(f, set);
	munmap(f, LB_CLOCKFILE_SIZE);
	return 0;
}

int lb_clock_file_write(const char *path, int64_t offset_ms)
{
	return lb_clock_file_set(path, &(struct lb_clockset){ .offset_ms = offset_ms });
}

int lb_server_set_clockset(struct lb_server *s, const struct lb_clockset *set)
{
	if (!s->opts.clock_shim)
		return LB_ENOTSUP;
	return lb_clock_file_set(s->clock_path, set);
}

int lb_server_set_clock(struct lb_server *s, int64_t offset_ms)
{
	return lb_server_set_clockset(s, &(struct lb_clockset){ .offset_ms = offset_ms });
}

int lb_server_copy_log(const struct lb_server *s, const char *dir, const char *name)
{
	if (!s)
		return 0;
	FILE *in = fopen(s->log_path, "r");
	if (!in)
		return 0; /* nothing logged yet */
	struct lb_outfile o;
	int rc = lb_outfile_open(&o, dir, name, true);
	if (rc == 0) {
		char buf[8192];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
			fwrite(buf, 1, n, o.f);
		rc = lb_outfile_close(&o);
	}
	fclose(in);
	return rc;
}

void lb_server_destroy(struct lb_server *s)
{
	if (!s)
		return;
	lb_server_kill(s);
	track_dir(s, false);
	if (s->dir[0] && dir_kind(s->dir))
		lb_owned_rmtree(s->dir);
	for (char **a = s->command; a && *a; a++)
		free(*a);
	free(s->command);
	free(s);
}

long lb_server_pss_kib(const struct lb_server *s)
{
	char path[64], line[256];
	long kib = -1;

	if (!s || s->pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)s->pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pss: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* INFO replication of 127.0.0.1:@port contains @needle. */
static bool replication_says(int port, const char *needle)
{
	struct timeval tv = { 1, 0 };
	redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
	bool up = false;

	if (c && !c->err) {
		redisSetTimeout(c, tv);
		redisReply *r = redisCommand(c, "INFO replication");
		up = r && r->type == REDIS_REPLY_STRING && strstr(r->str, needle);
		if (r)
			freeReplyObject(r);
	}
	if (c)
		redisFree(c);
	return up;
}

/* A write on the primary is acknowledged by a replica within 200 ms (the
 * first acknowledgements after a full sync come late). */
static bool acknowledges(int primary_port)
{
	struct timeval tv = { 1, 0 };
	redisContext *c = redisConnectWithTimeout("127.0.0.1", primary_port, tv);
	long long acks = 0;

	if (c && !c->err) {
		redisSetTimeout(c, tv);
		/* a key on a server lockbench started itself, removed at once */
		redisReply *r = redisCommand(c, "SET lockbench:replica-probe 1");
		if (r)
			freeReplyObject(r);
		r = redisCommand(c, "WAIT 1 200");
		if (r && r->type == REDIS_REPLY_INTEGER)
			acks = r->integer;
		if (r)
			freeReplyObject(r);
		r = redisCommand(c, "DEL lockbench:replica-probe");
		if (r)
			freeReplyObject(r);
	}
	if (c)
		redisFree(c);
	return acks >= 1;
}

struct lb_server *lb_server_start_replica(int primary_port, int link_port, int64_t timeout_ms)
{
	return lb_server_start_replica_with(NULL, primary_port, link_port, timeout_ms);
}

struct lb_server *lb_server_start_replica_with(const struct lb_server_opts *opts, int primary_port,
					       int link_port, int64_t timeout_ms)
{
	struct lb_server *s = lb_server_start(opts);
	int64_t until = lb_now_ns() + timeout_ms * LB_NS_PER_MS;
	redisContext *c;
	size_t k = 0;

	if (!s)
		return NULL;
	/* REPLICAOF at runtime (below), and in the arguments, so that a respawn
	 * comes back as a replica too */
	for (const char *const *a = opts ? opts->extra_args : NULL; a && *a && k < 16; a++)
		s->replica_args[k++] = *a;
	snprintf(s->primary_port, sizeof(s->primary_port), "%d", link_port);
	s->replica_args[k++] = "--replicaof";
	s->replica_args[k++] = "127.0.0.1";
	s->replica_args[k++] = s->primary_port;
	s->replica_args[k] = NULL;
	s->opts.extra_args = s->replica_args;
	/* no 5 s wait for more replicas before the primary streams its snapshot */
	c = admin_connect(primary_port, 1000);
	redisReply *cfg = c ? redisCommand(c, "CONFIG SET repl-diskless-sync-delay 0") : NULL;
	if (cfg)
		freeReplyObject(cfg);
	if (c)
		redisFree(c);
	c = admin_connect(s->port, 1000);
	redisReply *r = c ? redisCommand(c, "REPLICAOF 127.0.0.1 %d", link_port) : NULL;
	if (r)
		freeReplyObject(r);
	if (c)
		redisFree(c);
	while (lb_now_ns() < until) {
		/* both ends agree: the replica's link is up and the primary counts it
		 * online (only then do its acknowledgements answer WAIT) */
		if (replication_says(s->port, "master_link_status:up") &&
		    replication_says(primary_port, ",state=online,") && acknowledges(primary_port))
			return s;
		lb_sleep_ns(10 * LB_NS_PER_MS);
	}
	lb_errorf("the replica of 127.0.0.1:%d did not come in sync within %lld ms", primary_port,
		  (long long)timeout_ms);
	lb_server_destroy(s);
	return NULL;
}
