/*
 * faults_deploy.c - faults that act on a deployment as a client or its
 * operator would, so that they reach servers lockbench did not start (with
 * --allow-faults): SENTINEL FAILOVER through the Sentinels, CLIENT PAUSE of
 * a node, CLIENT KILL of one client's connections, and the user's own
 * commands (--hook). Every command each sends is listed in docs/running.md;
 * none touches a key.
 */
#include "faults_deploy.h"

#include "node.h"
#include "signals.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define HOOK_LIMIT_NS (30 * LB_NS_PER_S) /* a node hook's deadline */
#define CMD_TIMEOUT_MS 500                /* the parent's commands to a server */

/* A connection of the parent's own to lock node @i, as the clients reach it
 * (its AUTH and database; through the Sentinels for a Sentinel node). */
static void node_copy(const struct lb_injector *inj, size_t i, struct lb_node *out)
{
	*out = inj->lock[i];
	out->ctx = NULL;
	out->blocked = NULL;
	out->follow_port = NULL;
	out->source[0] = '\0';
	out->timeout_ms = CMD_TIMEOUT_MS;
}

/* Send @argv to lock node @i; true when it replied without an error. */
static bool node_say(const struct lb_injector *inj, size_t i, int argc, const char **argv,
		     long long *count)
{
	struct lb_node n;
	size_t lens[8];

	for (int k = 0; k < argc; k++)
		lens[k] = strlen(argv[k]);
	node_copy(inj, i, &n);
	redisReply *r = lb_node_cmd_argv(&n, argc, argv, lens);
	bool ok = r && r->type != REDIS_REPLY_ERROR;
	if (count && r && r->type == REDIS_REPLY_INTEGER)
		*count += r->integer;
	if (!ok)
		lb_errorf("%s on node %zu (%s:%d): %s", argv[0], i, n.host, n.port,
			  r ? r->str : n.why[0] ? n.why : "no answer");
	if (r)
		freeReplyObject(r);
	lb_node_close(&n);
	return ok;
}

pid_t lb_hook_spawn(const struct lb_injector *inj, const char *label, int node,
		    const char *command, int64_t now_ns)
{
	char buf[1024], *argv[64], why[80], path[PATH_MAX + 64];
	int fd = -1;

	if (lb_split_words(command, buf, sizeof(buf), argv, 64, why, sizeof(why)) < 0)
		return -1; /* checked when the option was read */
	if (inj->cfg->out_dir[0]) {
		snprintf(path, sizeof(path), "%s/hook-%s.log", inj->cfg->out_dir, label);
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0)
			lb_errorf("warning: hook %s: cannot write %s: %s (its output is lost)", label,
				  path, strerror(errno));
		else if (node >= 0)
			dprintf(fd, "# %.3f s: node %d: %s\n", (double)now_ns / 1e9, node, command);
		else
			dprintf(fd, "# %.3f s: %s\n", (double)now_ns / 1e9, command);
	}
	/* exec's error comes back through a close-on-exec pipe: a hook that
	 * cannot start did not fire, and is said so, not listed as fired */
	int err[2];
	if (pipe2(err, O_CLOEXEC) < 0) {
		lb_errorf("hook %s: cannot start %s: %s", label, argv[0], strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	pid_t pid = lb_fork_helper("a hook");
	if (pid != 0) {
		int code = 0;
		close(err[1]);
		if (fd >= 0)
			close(fd);
		ssize_t k;
		while ((k = read(err[0], &code, sizeof(code))) < 0 && errno == EINTR)
			;
		close(err[0]);
		if (pid > 0 && k == (ssize_t)sizeof(code)) {
			waitpid(pid, NULL, 0);
			lb_signals_untrack_child(pid);
			lb_errorf("hook %s: cannot run %s: %s: the fault did not fire", label, argv[0],
				  strerror(code));
			return -1;
		}
		return pid;
	}
	close(err[0]);
	setpgid(0, 0); /* its own group: a deadline kills whatever it started */
	/* its log, like the files it writes, at most 64 MiB: past that a write
	 * fails (EFBIG), it does not fill the disk */
	struct rlimit fsize = { 64u << 20, 64u << 20 };
	setrlimit(RLIMIT_FSIZE, &fsize);
	signal(SIGXFSZ, SIG_IGN);
	int nul = open("/dev/null", O_RDWR);
	dup2(nul, STDIN_FILENO);
	dup2(fd >= 0 ? fd : nul, STDOUT_FILENO);
	dup2(fd >= 0 ? fd : nul, STDERR_FILENO);
	/* runs: (the user's) the command of --hook, which lockbench neither names nor
	 * installs */
	execvp(argv[0], argv);
	int code = errno;
	dprintf(STDERR_FILENO, "lockbench: hook %s: cannot run %s: %s\n", label, argv[0],
		strerror(code));
	if (write(err[1], &code, sizeof(code)) < 0)
		_exit(127);
	_exit(127);
}

int lb_hook_poll(struct lb_injector *inj, pid_t *pid, int node, int64_t deadline_ns,
		 int64_t now_ns)
{
	int status;

	if (*pid <= 0)
		return *pid < 0 ? -1 : 0; /* -1: it could not be started */
	pid_t got = waitpid(*pid, &status, WNOHANG);
	if (got == 0 && now_ns < deadline_ns)
		return 1;
	if (got == 0) { /* past its deadline: the hook and all it started */
		kill(-*pid, SIGKILL);
		kill(*pid, SIGKILL);
		waitpid(*pid, &status, 0);
		status = -1;
	} else {
		status = got < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	lb_signals_untrack_child(*pid);
	lb_event_emit(inj->sh, LB_EV_HOOK_END, -1, node, status);
	if (status != 0) {
		char whose[32] = "";
		if (node >= 0)
			snprintf(whose, sizeof(whose), " for node %d", node);
		lb_errorf("warning: a hook%s %s (see the run's hook-*.log)", whose,
			  status < 0 ? "did not finish by its deadline and was killed" :
			  "failed (exit status above 0)");
	}
	*pid = 0;
	return status != 0 ? -1 : 0;
}

/* ---- node-pause on a server lockbench did not start ---- */

void lb_deploy_node_pause(struct lb_injector *inj, size_t i, const struct lb_fault *f,
			  int64_t now_ns)
{
	const char *hook = lb_hook_command(inj->cfg, "node-pause", (int)i);
	struct lb_fault_rt *rt = &inj->rt[f - inj->sc->faults];
	char ms[24];

	if (hook) {
		rt->hook_pid[i] = lb_hook_spawn(inj, "node-pause", (int)i, hook, now_ns);
		rt->hook_deadline_ns = now_ns + HOOK_LIMIT_NS;
		if (rt->hook_pid[i] < 0) {
			rt->failed = true;
			return;
		}
		lb_event_emit(inj->sh, LB_EV_HOOK, -1, (int)i, 0);
	} else {
		/* never past the run's end: under ALL the server holds back CLIENT
		 * UNPAUSE too, so a pause cannot be lifted early */
		int64_t left = (inj->sh->end_ns - inj->sh->t0_ns - now_ns) / LB_NS_PER_MS + 1;
		int64_t pause = f->duration_ms < left ? f->duration_ms : left > 1 ? left : 1;
		snprintf(ms, sizeof(ms), "%lld", (long long)pause);
		rt->cut_ns = now_ns + pause * LB_NS_PER_MS; /* when the server resumes by itself */
		const char *argv[] = { "CLIENT", "PAUSE", ms, f->pause_write ? "WRITE" : "ALL" };
		if (!node_say(inj, i, 4, argv, NULL)) {
			rt->failed = true;
			return;
		}
	}
	lb_event_emit(inj->sh, LB_EV_NODE_PAUSE, -1, (int)i, f->duration_ms);
}

void lb_deploy_node_resume(struct lb_injector *inj, size_t i, const struct lb_fault *f,
			   int64_t now_ns)
{
	const char *hook = lb_hook_command(inj->cfg, "node-resume", (int)i);
	struct lb_fault_rt *rt = &inj->rt[f - inj->sc->faults];

	if (rt->failed)
		return; /* it was never paused */
	if (hook) {
		rt->hook_pid[i] = lb_hook_spawn(inj, "node-resume", (int)i, hook, now_ns);
		rt->hook_deadline_ns = now_ns + HOOK_LIMIT_NS;
		lb_event_emit(inj->sh, LB_EV_HOOK, -1, (int)i, 0);
	} else if (!lb_hook_command(inj->cfg, "node-pause", (int)i)) {
		if (!f->pause_write && now_ns < rt->cut_ns) { /* the run ends first (Ctrl-C) */
			lb_errorf("warning: node %zu stays paused until %.3f s of the run (CLIENT PAUSE "
				  "ALL holds back CLIENT UNPAUSE too), %.1f s from now", i,
				  (double)rt->cut_ns / 1e9, (double)(rt->cut_ns - now_ns) / 1e9);
			return;
		}
		const char *argv[] = { "CLIENT", "UNPAUSE" }; /* the pause also ends by itself */
		node_say(inj, i, 2, argv, NULL);
	}
	lb_event_emit(inj->sh, LB_EV_NODE_RESUME, -1, (int)i, 0);
}

/* node-kill and node-start on a server lockbench did not start: the user's
 * commands (lb_faults_check refused the run without them). */
void lb_deploy_node_hook(struct lb_injector *inj, size_t i, const struct lb_fault *f,
			 const char *what, int64_t now_ns)
{
	struct lb_fault_rt *rt = &inj->rt[f - inj->sc->faults];
	const char *hook = lb_hook_command(inj->cfg, what, (int)i);

	if (!hook)
		return;
	rt->hook_pid[i] = lb_hook_spawn(inj, what, (int)i, hook, now_ns);
	rt->hook_deadline_ns = now_ns + HOOK_LIMIT_NS;
	if (rt->hook_pid[i] < 0) {
		rt->failed = true;
		return;
	}
	lb_event_emit(inj->sh, LB_EV_HOOK, -1, (int)i, 0);
	lb_event_emit(inj->sh, !strcmp(what, "node-kill") ? LB_EV_NODE_KILL : LB_EV_NODE_START, -1,
		      (int)i, 0);
}

void lb_deploy_hooks_finish(struct lb_injector *inj, struct lb_fault_rt *rt)
{
	/* a hook that undoes a fault (node-resume, node-start) must be let finish,
	 * within its deadline: a server left frozen is worse than a late exit */
	while (lb_deploy_hooks_running(inj, rt, lb_now_ns() - inj->sh->t0_ns))
		lb_sleep_ns(10 * LB_NS_PER_MS);
}

bool lb_deploy_hooks_running(struct lb_injector *inj, struct lb_fault_rt *rt, int64_t now_ns)
{
	bool running = false;

	for (size_t i = 0; i <= LB_MAX_NODES; i++) {
		int st = lb_hook_poll(inj, &rt->hook_pid[i], i < LB_MAX_NODES ? (int)i : -1,
				      rt->hook_deadline_ns, now_ns);
		running |= st > 0;
		if (st < 0) { /* a hook that failed: its fault did not take */
			rt->failed = true;
			rt->hook_pid[i] = 0;
		}
	}
	return running;
}

/* ---- sentinel-failover ---- */

bool lb_deploy_sentinel_failover(struct lb_injector *inj)
{
	const struct lb_node *n = &inj->lock[0];
	char why[200] = "", all[600] = "";
	size_t used = 0;

	for (int i = 0; i < n->n_sentinels; i++) {
		redisReply *r = lb_node_sentinel_cmd(n, i, "FAILOVER", why, sizeof(why));
		bool ok = lb_reply_ok(r);
		if (!ok && used < sizeof(all))
			used += (size_t)snprintf(all + used, sizeof(all) - used, "%sSentinel %s:%d: %s",
						 used ? "; " : "", n->sentinel[i].host,
						 n->sentinel[i].port, r && r->type == REDIS_REPLY_ERROR ?
						 r->str : why);
		if (r)
			freeReplyObject(r);
		if (ok) {
			lb_event_emit(inj->sh, LB_EV_SENTINEL_FAILOVER, -1, i, 0);
			return true;
		}
	}
	lb_event_emit(inj->sh, LB_EV_SENTINEL_FAILOVER, -1, -1, 1);
	lb_errorf("SENTINEL FAILOVER %s was refused: %s", n->master, all[0] ? all : "no Sentinel");
	return false;
}

/* ---- cluster-failover ---- */

/* CLUSTER FAILOVER on the replica @m ([host, port, id] of CLUSTER SLOTS),
 * with @n's AUTH: true when it accepted; why not in @why. */
static bool replica_failover(const struct lb_node *n, const redisReply *m, char *why, size_t len)
{
	struct lb_node one = *n;

	if (m->type != REDIS_REPLY_ARRAY || m->elements < 2 ||
	    m->element[0]->type != REDIS_REPLY_STRING || m->element[1]->type != REDIS_REPLY_INTEGER ||
	    m->element[0]->len >= sizeof(one.host))
		return false;
	one.ctx = NULL;
	one.n_seeds = 0;
	one.redirected = false;
	one.want_run_id = false;
	memcpy(one.host, m->element[0]->str, m->element[0]->len + 1);
	one.port = (int)m->element[1]->integer;
	redisReply *r = lb_node_cmd(&one, "CLUSTER FAILOVER");
	bool ok = lb_reply_ok(r);
	snprintf(why, len, "%.64s:%d: %.150s", one.host, one.port, ok ? "" : r && r->type ==
		 REDIS_REPLY_ERROR ? r->str : one.why[0] ? one.why : "no answer");
	if (r)
		freeReplyObject(r);
	lb_node_close(&one);
	return ok;
}

bool lb_deploy_cluster_failover(struct lb_injector *inj)
{
	struct lb_node n;
	char why[300] = "no replica serves the slot";
	bool ok = false;

	node_copy(inj, 0, &n);
	redisReply *r = lb_node_cmd(&n, "CLUSTER SLOTS");
	for (size_t k = 0; r && r->type == REDIS_REPLY_ARRAY && k < r->elements && !ok; k++) {
		const redisReply *e = r->element[k];
		if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
		    e->element[0]->type != REDIS_REPLY_INTEGER ||
		    e->element[1]->type != REDIS_REPLY_INTEGER || e->element[0]->integer > n.slot ||
		    e->element[1]->integer < n.slot)
			continue;
		for (size_t i = 3; i < e->elements && !ok; i++) /* its replicas */
			ok = replica_failover(&n, e->element[i], why, sizeof(why));
	}
	if (!r)
		snprintf(why, sizeof(why), "CLUSTER SLOTS: %.200s", n.why[0] ? n.why : "no answer");
	if (r)
		freeReplyObject(r);
	lb_node_close(&n);
	lb_event_emit(inj->sh, LB_EV_CLUSTER_FAILOVER, -1, -1, ok ? 0 : 1);
	if (!ok)
		lb_errorf("CLUSTER FAILOVER for slot %d was not taken: %s", n.slot, why);
	return ok;
}

/* ---- client-kill: one client's connections, as the servers see them ---- */

/* The socket inodes of @pid's open files, appended to @ino (at most @max). */
static size_t socket_inodes(pid_t pid, unsigned long *ino, size_t n, size_t max)
{
	char dir[64], path[PATH_MAX], link[64];

	snprintf(dir, sizeof(dir), "/proc/%ld/fd", (long)pid);
	DIR *d = opendir(dir);
	if (!d)
		return n;
	for (struct dirent *e; (e = readdir(d)) && n < max;) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		ssize_t k = readlink(path, link, sizeof(link) - 1);
		if (k <= 0)
			continue;
		link[k] = '\0';
		if (sscanf(link, "socket:[%lu]", &ino[n]) == 1)
			n++;
	}
	closedir(d);
	return n;
}


/* The local addresses ("ip:port") of the TCP sockets @ino to port @port,
 * from /proc/net/tcp (IPv4 loopback and LAN addresses alike). */
static size_t local_addrs(const unsigned long *ino, size_t n_ino, int port, char (*out)[48],
			  size_t max)
{
	size_t n = 0;
	char line[512];
	FILE *f = fopen("/proc/net/tcp", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && n < max) {
		unsigned la, lp, ra, rp;
		unsigned long inode;
		if (sscanf(line, " %*d: %8X:%4X %8X:%4X %*x %*x:%*x %*x:%*x %*x %*u %*d %lu", &la, &lp,
			   &ra, &rp, &inode) != 5 || (int)rp != port)
			continue;
		for (size_t k = 0; k < n_ino; k++)
			if (ino[k] == inode) { /* the address is in host order, little-endian */
				snprintf(out[n++], 48, "%u.%u.%u.%u:%u", la & 255, la >> 8 & 255,
					 la >> 16 & 255, la >> 24, lp);
				break;
			}
	}
	fclose(f);
	return n;
}

int lb_deploy_client_kill(struct lb_injector *inj, const struct lb_fault *f, int c)
{
	pid_t pids[1 + 16];
	unsigned long ino[256];
	size_t np, ni = 0;
	long long killed = 0;

	np = lb_proc_descendants(inj->sh->client[c].pid, pids, 17); /* its adapter is a child */
	for (size_t k = 0; k < np; k++)
		ni = socket_inodes(pids[k], ino, ni, 256);
	for (size_t i = 0; i < inj->n_lock; i++) {
		char addr[32][48];
		if (!f->all_nodes && !((f->nodes >> i) & 1u))
			continue;
		struct lb_node n;
		node_copy(inj, i, &n);
		lb_node_connect(&n); /* behind Sentinels: where the primary is now */
		lb_node_close(&n);
		size_t na = local_addrs(ino, ni, n.port, addr, 32);
		for (size_t a = 0; a < na; a++) {
			const char *argv[] = { "CLIENT", "KILL", "ADDR", addr[a] };
			struct lb_node one;
			size_t lens[4] = { 6, 4, 4, strlen(addr[a]) };
			node_copy(inj, i, &one);
			redisReply *r = lb_node_cmd_argv(&one, 4, argv, lens);
			if (r && r->type == REDIS_REPLY_INTEGER) /* the filter form: how many */
				killed += r->integer;
			if (r)
				freeReplyObject(r);
			lb_node_close(&one);
		}
	}
	lb_event_emit(inj->sh, LB_EV_CLIENT_KILL, c, -1, killed);
	if (killed == 0)
		lb_errorf("warning: client-kill closed no connection of client %d (the servers said "
			  "so, or refused CLIENT KILL: above)", c);
	return (int)killed;
}
