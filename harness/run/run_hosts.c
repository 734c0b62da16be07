/*
 * run_hosts.c - adapter hosts (--adapter-hosts N, docs/adapters.md): N
 * processes of the run's adapter, started before the clients, each serving
 * the sessions of clients i with i % N == its number on a Unix socket in a
 * private directory. Each is tracked as every child is (its own process
 * group, PR_SET_PDEATHSIG, the run's mark), its stderr in
 * adapter-host-K.log; a host that dies during the run voids it, with the
 * reason; every path stops them.
 *
 * What a host cannot do: a fault that acts on a client's process (a pause, a
 * kill, its clock, a failpoint's sleep or crash, its own address) would stop
 * or move the C client and not the library code serving it, which lives in
 * the shared host: such a run is refused before anything starts.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adapter.h"
#include "owned.h"
#include "run.h"
#include "run_ctx.h"
#include "rserver.h"
#include "signals.h"

#define HOST_START_MS 30000 /* an interpreter loading its library, on a busy machine */

/* The hosts this run starts: --adapter-hosts for a library, at most one a client. */
int run_hosts_wanted(const struct lb_run_cfg *cfg)
{
	if (cfg->adapter_hosts <= 0 || !lb_strategy_is_external(cfg->strategy))
		return 0;
	return cfg->adapter_hosts < cfg->clients ? cfg->adapter_hosts : cfg->clients;
}

/* The fault of @sc that acts on a client's own process, or NULL. */
static const struct lb_fault *process_fault(const struct lb_scenario *sc)
{
	for (int i = 0; sc && i < sc->n_faults; i++)
		switch (sc->faults[i].action) {
		case LB_ACT_CRASH: case LB_ACT_SLEEP: case LB_ACT_CLOCK: case LB_ACT_KILL:
		case LB_ACT_PAUSE: case LB_ACT_CLIENT_KILL: case LB_ACT_NET_PARTITION:
			return &sc->faults[i];
		default:
			break;
		}
	return NULL;
}

bool lb_run_hosts_refused(const struct lb_run_cfg *cfg, char *why, size_t len)
{
	if (!run_hosts_wanted(cfg))
		return false;
	const struct lb_adapter_def *d = lb_adapter_def_of(cfg->strategy);
	if (d && !strcmp(d->hosts, "no")) {
		snprintf(why, len, "--adapter-hosts %d: %s serves one client a process, not sessions "
			 "in a host (its manifest says hosts = no): run it without --adapter-hosts",
			 cfg->adapter_hosts, cfg->strategy->name);
		return true;
	}
	const struct lb_fault *f = process_fault(cfg->scenario);
	if (f)
		snprintf(why, len, "--adapter-hosts %d: the scenario's fault '%.64s' (%s) acts on a "
			 "client's own process, and in an adapter host the library code serving that "
			 "client runs in a process shared with other clients, which the fault would "
			 "not reach: run it without --adapter-hosts (one adapter process per client)",
			 cfg->adapter_hosts, f->name, lb_action_name(f->action));
	else if (cfg->sentinel || cfg->cluster)
		snprintf(why, len, "--adapter-hosts %d: on the %s topology each client's library "
			 "connects from the client's own address (the clock shim), which a process "
			 "shared by many clients cannot do: run it without --adapter-hosts",
			 cfg->adapter_hosts, cfg->sentinel ? "sentinel" : "cluster");
	return f || cfg->sentinel || cfg->cluster;
}

int run_hosts_check(const struct lb_run_cfg *cfg)
{
	char why[600];

	if (!run_hosts_wanted(cfg))
		return 0;
	if (lb_run_hosts_refused(cfg, why, sizeof(why))) {
		lb_errorf("%s", why);
		return LB_EINVAL;
	}
	/* a host holds, for each of its sessions, the session's socket and the
	 * library's connections (one a lock node, and one to spare: a Sentinel, a
	 * resource); it has lockbench's open-files limit (raised by fd_budget) */
	struct rlimit rl;
	int hosts = run_hosts_wanted(cfg);
	size_t sessions = (size_t)(cfg->clients + hosts - 1) / (size_t)hosts;
	size_t nodes = (size_t)(cfg->nodes > 0 ? cfg->nodes : (int)cfg->strategy->min_nodes);
	size_t need = sessions * (nodes + 2) + 64;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    need > rl.rlim_cur) {
		lb_errorf("--adapter-hosts %d: each host serves up to %zu sessions, each with its "
			  "socket and a connection per lock node, about %zu open files, but "
			  "RLIMIT_NOFILE allows %llu: give more hosts, or raise the limit "
			  "(ulimit -n)", cfg->adapter_hosts, sessions, need,
			  (unsigned long long)rl.rlim_cur);
		return LB_EINVAL;
	}
	return 0;
}

#define LB_CROWD 64        /* more clients than this: a crowd, run at ... */
#define LB_CLIENT_NICE 19  /* ... this much more niceness (docs/running.md) */

/* In a client's (or an adapter host's) child: a crowd runs below the servers,
 * the relay, the key watcher and this parent. Thousands of clients polling on
 * two cores must not starve what serves and watches them: the watcher's stamps
 * lagged 50 ms and more and matched sets to the wrong section, and redis-py's
 * sessions, a thousand Python processes polling, left Redis so little CPU that
 * its replies outlasted their socket timeouts. */
void run_crowd_nice(const struct run_ctx *r)
{
	errno = 0;
	int prio = getpriority(PRIO_PROCESS, 0);
	if (r->cfg->clients > LB_CROWD && errno == 0)
		setpriority(PRIO_PROCESS, 0, prio + LB_CLIENT_NICE);
}

/* In the child: stdio, then the adapter's program as host @k. */
static void __attribute__((noreturn)) host_child(const struct run_ctx *r, int k, const char *sock)
{
	char log[PATH_MAX];

	setpgid(0, 0); /* a group of its own: killed whole, whatever it started */
	run_crowd_nice(r); /* its sessions are a crowd's clients */
	snprintf(log, sizeof(log), "%.3900s/adapter-host-%d.log", r->cfg->out_dir, k);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int err = r->cfg->out_dir[0] ? open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
	dup2(err >= 0 ? err : null, STDERR_FILENO);
	lb_adapter_exec_host(lb_adapter_def_of(r->cfg->strategy), sock);
}

/* Wait until host @k accepts a connection on @sock: 0, or the run fails
 * with how it ended. */
static int host_ready(struct run_ctx *r, int k, const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int64_t until = lb_now_ns() + HOST_START_MS * LB_NS_PER_MS;
	int status;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.107s", sock); /* it fits: lb_adapter_host_path */
	while (!lb_stop_requested()) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(fd); /* a session that ends at once: the host goes on */
			return 0;
		}
		if (fd >= 0)
			close(fd);
		if (waitpid(r->host[k], &status, WNOHANG) == r->host[k]) {
			lb_signals_untrack_child(r->host[k]);
			r->host[k] = 0;
			lb_errorf("adapter host %d of %s exited before it listened on its socket (%s %d); "
				  "its stderr is in %s/adapter-host-%d.log: does the program serve hosts "
				  "(docs/adapters.md, %s)?", k, r->cfg->strategy->name,
				  WIFEXITED(status) ? "exit status" : "signal",
				  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
				  r->cfg->out_dir, k, LB_ADAPTER_HOST_ENV);
			return LB_EPROTO;
		}
		if (lb_now_ns() >= until) {
			lb_errorf("adapter host %d of %s did not listen on its socket within %d ms; its "
				  "stderr is in %s/adapter-host-%d.log", k, r->cfg->strategy->name,
				  HOST_START_MS, r->cfg->out_dir, k);
			return LB_EPROTO;
		}
		lb_sleep_ns(10 * LB_NS_PER_MS);
	}
	return LB_ECANCELED;
}

int run_hosts_start(struct run_ctx *r)
{
	int n = run_hosts_wanted(r->cfg);
	char sock[PATH_MAX];
	const char *tmp = getenv("TMPDIR");

	if (!n)
		return 0;
	/* a private directory, short: a socket's path is at most 107 bytes; our
	 * pid in its name and the janitor told of it, so that a kill -9 leaves
	 * none behind (the janitor, or the next run's sweep, removes it) */
	const char *parent = tmp && tmp[0] == '/' && strlen(tmp) < 40 ? tmp : "/tmp";
	lb_sweep_stale_dirs(parent); /* /tmp, where no server of ours may have swept */
	snprintf(r->host_dir, sizeof(r->host_dir), "%s/lockbench-hosts-%d-XXXXXX", parent,
		 (int)getpid());
	if (lb_owned_mkdtemp(r->host_dir) < 0) {
		lb_errorf("cannot make a directory for the adapter hosts' sockets (%s): %s",
			  r->host_dir, strerror(errno));
		r->host_dir[0] = '\0';
		return LB_ESYS;
	}
	lb_janitor_dir(r->host_dir, true);
	for (int k = 0; k < n; k++) {
		if (lb_adapter_host_path(r->host_dir, k, sock, sizeof(sock)) < 0)
			return LB_EINVAL;
		pid_t pid = lb_fork_helper("an adapter host");
		if (pid < 0)
			return (int)pid;
		if (pid == 0)
			host_child(r, k, sock);
		setpgid(pid, pid);
		r->host[k] = pid;
		r->n_hosts = k + 1;
	}
	for (int k = 0; k < n; k++) {
		lb_adapter_host_path(r->host_dir, k, sock, sizeof(sock));
		int rc = host_ready(r, k, sock);
		if (rc < 0)
			return rc;
	}
	/* the clients, forked next, open sessions there */
	lb_adapter_use_hosts(r->host_dir, n, (r->cfg->clients + n - 1) / n);
	return 0;
}

/* Is every host still there? A host that died takes its clients' sessions
 * with it: said once, and the run is void. @wait_ms: how long to give a host
 * whose sessions have ended to finish dying (its clients saw that first). */
bool run_hosts_alive(struct run_ctx *r, int wait_ms)
{
	int status;
	int64_t until = lb_now_ns() + wait_ms * LB_NS_PER_MS;

	for (int k = 0; k < r->n_hosts; k++) {
		pid_t got = 0;
		while (r->host[k] > 0 && (got = waitpid(r->host[k], &status, WNOHANG)) == 0 &&
		       lb_now_ns() < until)
			lb_sleep_ns(5 * LB_NS_PER_MS);
		if (r->host[k] <= 0 || got != r->host[k])
			continue;
		lb_signals_untrack_child(r->host[k]);
		r->host[k] = 0;
		lb_errorf("adapter host %d of %s died during the run (%s %d), with the sessions of "
			  "every client i with i %% %d == %d; its stderr is in %s/adapter-host-%d.log",
			  k, r->cfg->strategy->name, WIFEXITED(status) ? "exit status" : "signal",
			  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), r->n_hosts, k,
			  r->cfg->out_dir, k);
		return false;
	}
	return true;
}

void run_hosts_stop(struct run_ctx *r)
{
	lb_adapter_use_hosts(NULL, 0, 0);
	for (int k = 0; k < r->n_hosts; k++) {
		if (r->host[k] > 0) {
			kill(-r->host[k], SIGKILL); /* the host and what it started */
			kill(r->host[k], SIGKILL);
			waitpid(r->host[k], NULL, 0);
			lb_signals_untrack_child(r->host[k]);
			r->host[k] = 0;
		}
	}
	if (r->host_dir[0]) { /* the sockets with it */
		lb_owned_rmtree(r->host_dir);
		lb_janitor_dir(r->host_dir, false);
	}
	r->host_dir[0] = '\0';
	r->n_hosts = 0;
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct lb_proc_pair *)a)->pid, y = ((const struct lb_proc_pair *)b)->pid;

	return (x > y) - (x < y);
}

/* The processes of @t (sorted by pid) below those marked 2 in @mark, marked
 * 1, by passes over the table until none is added. */
static void mark_below(const struct lb_proc_pair *t, size_t n, unsigned char *mark)
{
	for (bool more = true; more;) {
		more = false;
		for (size_t i = 0; i < n; i++) {
			struct lb_proc_pair key = { .pid = t[i].ppid };
			const struct lb_proc_pair *up = mark[i] ? NULL :
						     bsearch(&key, t, n, sizeof(*t), by_pid);
			if (up && mark[up - t])
				mark[i] = 1, more = true;
		}
	}
}

/* What @fn sums over the adapters' processes: with hosts, each host and every
 * process below it; without, each client's children (its adapter). */
static uint64_t over_adapters(const struct run_ctx *r, uint64_t (*fn)(pid_t))
{
	size_t max = 4 * LB_MAX_CHILDREN + 4096, n;
	struct lb_proc_pair *t = malloc(max * sizeof(*t));
	unsigned char *mark = t ? calloc(max, 1) : NULL;
	uint64_t sum = 0;

	if (!mark) {
		free(t);
		return 0;
	}
	/* the roots: the hosts, or the clients (their children are the adapters) */
	int n_roots = r->n_hosts ? r->n_hosts : r->cfg->clients;
	struct lb_proc_pair *roots = calloc((size_t)n_roots, sizeof(*roots));
	if (!roots) {
		free(mark);
		free(t);
		return 0;
	}
	for (int k = 0; k < n_roots; k++)
		roots[k].pid = r->n_hosts ? r->host[k] : r->sh->client[k].pid;
	qsort(roots, (size_t)n_roots, sizeof(*roots), by_pid);
	n = lb_proc_table(t, max);
	qsort(t, n, sizeof(*t), by_pid);
	for (size_t i = 0; i < n; i++) {
		struct lb_proc_pair key = { .pid = r->n_hosts ? t[i].pid : t[i].ppid };
		mark[i] = bsearch(&key, roots, (size_t)n_roots, sizeof(*roots), by_pid) ? 2 : 0;
	}
	free(roots);
	if (r->n_hosts)
		mark_below(t, n, mark);
	for (size_t i = 0; i < n; i++)
		if (mark[i])
			sum += fn(t[i].pid);
	free(mark);
	free(t);
	return sum;
}

/* utime + stime + cutime + cstime of @pid from /proc/PID/stat, in µs; 0 when gone. */
static uint64_t proc_cpu_us(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long t[4] = { 0, 0, 0, 0 };

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* after the command's name, whatever it holds */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
			 &t[0], &t[1], &t[2], &t[3]) != 4)
		return 0;
	long hz = sysconf(_SC_CLK_TCK);
	return (t[0] + t[1] + t[2] + t[3]) * 1000000ull / (unsigned long long)(hz > 0 ? hz : 100);
}

uint64_t run_hosts_cpu_us(const struct run_ctx *r)
{
	return r->n_hosts ? over_adapters(r, proc_cpu_us) : 0;
}

/* @pid's proportional set, KiB (smaps_rollup); 0 when gone. */
static uint64_t proc_pss_kb(pid_t pid)
{
	char path[64], line[256];
	unsigned long long v = 0;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && sscanf(line, "Pss: %llu kB", &v) != 1)
		;
	fclose(f);
	return v;
}

uint64_t run_adapters_pss_kb(const struct run_ctx *r)
{
	if (!lb_strategy_is_external(r->cfg->strategy))
		return 0;
	return over_adapters(r, proc_pss_kb) / (uint64_t)r->cfg->clients;
}
