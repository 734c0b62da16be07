#include "signals.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


static volatile sig_atomic_t stop_sig, stop_count;
static volatile pid_t children[LB_MAX_CHILDREN];
static void (*volatile fatal_hook)(void);

static void on_stop(int sig)
{
	stop_sig = sig;
	stop_count++;
}

static void on_fatal(int sig)
{
	for (int i = 0; i < LB_MAX_CHILDREN; i++)
		if (children[i] > 0)
			kill(children[i], SIGKILL);
	if (fatal_hook)
		fatal_hook();
	signal(sig, SIG_DFL);
	raise(sig);
}

void lb_signals_on_fatal(void (*fn)(void))
{
	fatal_hook = fn;
}

void lb_signals_install(void)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGHUP, SIGQUIT };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

bool lb_stop_requested(void) { return stop_sig != 0; }
int lb_stop_signal(void) { return stop_sig; }
int lb_stop_count(void) { return stop_count; }

static int work_base = -1; /* the stop count when the work began; -1: none */

int lb_stop_work_begin(void)
{
	int prev = work_base;

	if (work_base < 0)
		work_base = stop_count;
	return prev;
}

void lb_stop_work_end(int prev) { work_base = prev; }
bool lb_stop_work(void) { return work_base >= 0 && stop_count > work_base; }

void lb_signals_track_child(pid_t pid)
{
	for (int i = 0; i < LB_MAX_CHILDREN; i++)
		if (children[i] == 0) {
			children[i] = pid;
			return;
		}
}

void lb_signals_untrack_child(pid_t pid)
{
	for (int i = 0; i < LB_MAX_CHILDREN; i++)
		if (children[i] == pid)
			children[i] = 0;
}

bool lb_child_bind_to_parent(pid_t parent)
{
	static const int reset[] = { SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGFPE, SIGILL,
				     SIGABRT, SIGHUP, SIGQUIT };

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		return false;
	for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
		signal(reset[i], SIG_DFL);
	for (int i = 0; i < LB_MAX_CHILDREN; i++)
		children[i] = 0;
	return true;
}

pid_t lb_fork_helper(const char *what)
{
	pid_t parent = getpid();

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		lb_errorf("cannot fork %s: %s", what, strerror(errno));
		return LB_ESYS;
	}
	if (pid > 0) {
		lb_signals_track_child(pid);
		return pid;
	}
	if (!lb_child_bind_to_parent(parent))
		_exit(0);
	return 0;
}

void lb_mark_run(char *mark, size_t len)
{
	static unsigned seq;
	snprintf(mark, len, "%ld-%u", (long)getpid(), ++seq);
	setenv(LB_RUN_MARK, mark, 1);
}

/* Does /proc/@pid/environ hold @want (NAME=VALUE), whole or (@prefix) as
 * the start of its value? */
static bool marked(const char *pid, const char *want, size_t want_len, bool prefix)
{
	char path[64], env[65536];
	snprintf(path, sizeof(path), "/proc/%s/environ", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false; /* gone, a zombie, or not ours */
	ssize_t n = read(fd, env, sizeof(env) - 1);
	close(fd);
	if (n <= 0)
		return false;
	env[n] = '\0';
	for (char *p = env; p < env + n; p += strlen(p) + 1)
		if (!strncmp(p, want, want_len) && (prefix || p[want_len] == '\0'))
			return true;
	return false;
}

unsigned long long lb_proc_ticks_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	long hz = sysconf(_SC_CLK_TCK);
	return ((unsigned long long)ts.tv_sec * (unsigned long long)hz +
		(unsigned long long)ts.tv_nsec * (unsigned long long)hz / 1000000000ULL);
}

int lb_kill_adopted(unsigned long long since)
{
	int killed = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		char path[300], buf[1024];
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* after the command's ')': state ppid ... starttime (field 22) */
		const char *p = strrchr(buf, ')');
		long ppid = 0;
		unsigned long long start = 0;
		if (!p || sscanf(p + 2, "%*c %ld %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
				 "%*s %*s %*s %*s %llu", &ppid, &start) != 2)
			continue;
		if (ppid == (long)getpid() && start >= since && kill((pid_t)atol(e->d_name), SIGKILL) == 0)
			killed++;
	}
	closedir(d);
	return killed;
}

int lb_kill_marked(const char *prefix)
{
	char want[96];
	int killed = 0;
	size_t want_len = (size_t)snprintf(want, sizeof(want), "%s=%s", LB_RUN_MARK, prefix);

	if (!prefix[0] || want_len >= sizeof(want))
		return 0;
	for (int round = 0; round < 5; round++) {
		int found = 0;
		DIR *d = opendir("/proc");
		if (!d)
			return killed;
		for (struct dirent *e; (e = readdir(d));) {
			if (e->d_name[0] < '1' || e->d_name[0] > '9')
				continue;
			pid_t pid = (pid_t)atol(e->d_name);
			if (pid == getpid() || !marked(e->d_name, want, want_len, prefix[strlen(prefix) - 1] == '-'))
				continue;
			if (kill(pid, SIGKILL) == 0)
				found++;
		}
		closedir(d);
		killed += found;
		if (!found)
			break;
		lb_sleep_ns(10 * LB_NS_PER_MS); /* let a forking one show its child */
	}
	return killed;
}

size_t lb_proc_table(struct lb_proc_pair *t, size_t max)
{
	DIR *d = opendir("/proc");
	size_t n = 0;

	for (struct dirent *e; d && (e = readdir(d)) && n < max;) {
		char path[300], buf[512];
		long ppid;
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.200s/stat", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t k = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (k <= 0)
			continue;
		buf[k] = '\0';
		const char *rp = strrchr(buf, ')'); /* the name may hold anything */
		if (rp && sscanf(rp + 1, " %*c %ld", &ppid) == 1)
			t[n++] = (struct lb_proc_pair){ (pid_t)atol(e->d_name), (pid_t)ppid };
	}
	if (d)
		closedir(d);
	return n;
}

size_t lb_proc_descendants(pid_t root, pid_t *out, size_t max)
{
	size_t n = 0, cap = 4 * LB_MAX_CHILDREN + 4096;
	struct lb_proc_pair *t = malloc(cap * sizeof(*t));

	if (max == 0)
		return 0;
	out[n++] = root;
	size_t nt = t ? lb_proc_table(t, cap) : 0; /* one pass over /proc, then the tree */
	for (size_t i = 0; i < n && n < max; i++)
		for (size_t k = 0; k < nt && n < max; k++)
			if (t[k].ppid == out[i])
				out[n++] = t[k].pid;
	free(t);
	return n;
}

/* ---- the run's cgroup (signals.h) ---- */

/* The cgroup v2 mount point (from /proc/self/mountinfo) into @out. */
static bool cgroup2_mount(char *out, size_t len)
{
	char line[1024], root[512], mnt[512], type[64];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... - TYPE SOURCE OPTIONS */
		if (dash && sscanf(line, "%*s %*s %*s %511s %511s", root, mnt) == 2 &&
		    sscanf(dash + 3, "%63s", type) == 1 && !strcmp(type, "cgroup2") &&
		    !strcmp(root, "/") && !strchr(mnt, '\\')) /* no escaped blanks: plain paths only */
			found = snprintf(out, len, "%s", mnt) < (int)len;
	}
	fclose(f);
	return found;
}

/* This process's cgroup v2 directory into @out. */
static bool cgroup_dir(char *out, size_t len)
{
	char mnt[512], line[1024];
	FILE *f;
	bool found = false;

	if (!cgroup2_mount(mnt, sizeof(mnt)) || !(f = fopen("/proc/self/cgroup", "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::/", 4))
			continue;
		line[strcspn(line, "\n")] = '\0';
		found = snprintf(out, len, "%s%s", mnt, strcmp(line + 3, "/") ? line + 3 : "") <
			(int)len;
	}
	fclose(f);
	return found;
}

/* Write @text into @dir/@file: 0 or -1. */
static int cg_write(const char *dir, const char *file, const char *text)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

int lb_cgroup_make(char *path, size_t len)
{
	char dir[512], procs[600];

	path[0] = '\0';
	if (len < 512 || !cgroup_dir(dir, sizeof(dir)))
		return -1;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	/* moving a process needs the common ancestor's cgroup.procs writable */
	if (access(dir, W_OK) != 0 || access(procs, W_OK) != 0)
		return -1;
	if (snprintf(path, len, "%s/lockbench-%ld", dir, (long)getpid()) >= (int)len) {
		path[0] = '\0';
		return -1;
	}
	rmdir(path); /* a stale one of a process that had this pid, if empty */
	if (mkdir(path, 0755) < 0) {
		path[0] = '\0';
		return -1;
	}
	return 0;
}

int lb_cgroup_join(const char *path)
{
	char pid[24];

	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	if (cg_write(path, "cgroup.procs", pid) == 0)
		return 0;
	rmdir(path);
	return -1;
}

/* Kill every process cgroup.procs of @path lists: how many. */
static int kill_listed(const char *path)
{
	char file[600];
	long pid;
	int n = 0;

	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	FILE *f = fopen(file, "re");
	if (!f)
		return 0;
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 0 && pid != (long)getpid() && kill((pid_t)pid, SIGKILL) == 0)
			n++;
	fclose(f);
	return n;
}

/* Remove the cgroup @path and the cgroups below it (a lockbench started
 * from inside this one made its own there), deepest first: 0 when @path is
 * gone. Only directories: a cgroup's files go with it. */
static int cg_rmdir(const char *path, int depth)
{
	DIR *d = depth < 8 ? opendir(path) : NULL;
	char sub[600];

	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_type == DT_DIR && strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) < (int)sizeof(sub))
			cg_rmdir(sub, depth + 1);
	if (d)
		closedir(d);
	return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
}

int lb_cgroup_kill(const char *path)
{
	int killed = kill_listed(path); /* counted; cgroup.kill then takes what forks meanwhile */

	cg_write(path, "cgroup.kill", "1"); /* Linux 5.14 and later: all at once, and below */
	for (int i = 0; i < 200; i++) { /* an older kernel: until none is left */
		if (cg_rmdir(path, 0) == 0)
			break;
		killed += kill_listed(path);
		lb_sleep_ns(10 * LB_NS_PER_MS);
	}
	return killed;
}
