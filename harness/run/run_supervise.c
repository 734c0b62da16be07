/*
 * run_supervise.c - the parent while the clients run: faults on cue, the
 * status line, the samples (connections, memory), Ctrl-C, and reaping.
 */
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "agent_wire.h"
#include "run.h"
#include "run_ctx.h"
#include "signals.h"

static int64_t rel_now(const struct run_ctx *r)
{
	return lb_now_ns() - r->sh->t0_ns;
}

static uint64_t cpu_us(const struct rusage *ru)
{
	return (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000u +
	       (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec);
}

/* Whether any child (a client, or anything else) has exited and is waiting
 * to be reaped: asked once, not once per client, so that thousands of
 * clients do not cost thousands of system calls every tick. */
static bool someone_exited(void)
{
	siginfo_t si = { .si_pid = 0 };

	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid != 0;
}

/* Reap clients that exited; returns how many are still alive. Each one's CPU
 * time (its own and its reaped adapter's) is kept in its slot. */
static int reap(struct run_ctx *r, bool cut)
{
	int alive = 0, status;
	bool look = someone_exited();

	for (int i = 0; i < r->cfg->clients; i++) {
		struct lb_client_slot *c = &r->sh->client[i];
		struct rusage ru;
		if (!atomic_load(&c->alive))
			continue;
		if (!look || wait4(c->pid, &status, WNOHANG, &ru) != c->pid) {
			alive++;
			continue;
		}
		c->cpu_us = cpu_us(&ru);
		atomic_store(&c->alive, 0);
		lb_signals_untrack_child(c->pid);
		if (WIFEXITED(status) && WEXITSTATUS(status) == LB_CLIENT_EXIT_STRATEGY &&
		    !r->strategy_failed) {
			/* its strategy (an adapter) broke: what it measured is void */
			r->strategy_failed = true;
			lb_shared_stop(r->sh);
		}
		if (WIFSIGNALED(status) && atomic_load(&c->death_ns) == 0) {
			c->cut = cut;
			if (!cut)
				lb_event_emit(r->sh, LB_EV_DEATH, i, -1, WTERMSIG(status));
		}
		lb_shared_mark_dead(r->sh, i, rel_now(r)); /* keeps an earlier kill time */
	}
	return alive;
}

static void status_line(struct run_ctx *r, int64_t now)
{
	double el = (double)(now - r->sh->t0_ns) / 1e9;
	uint64_t n = atomic_load(&r->sh->sections);

	printf("\r  %5.1f s  %8llu sections  %9.1f /s  violations so far: %llu   ", el,
	       (unsigned long long)n, el > 0 ? (double)n / el : 0.0,
	       (unsigned long long)atomic_load(&r->sh->canary_violations));
	fflush(stdout);
}

/* A client's memory, from /proc/PID/smaps_rollup, in KiB; false if it could
 * not be read (it exited). */
static bool mem_kb(pid_t pid, uint64_t *rss, uint64_t *pss, uint64_t *priv)
{
	char path[64], line[256];
	unsigned long long v;
	int got = 0;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	*rss = *pss = *priv = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Rss: %llu kB", &v) == 1)
			*rss = v, got |= 1;
		else if (sscanf(line, "Pss: %llu kB", &v) == 1)
			*pss = v, got |= 2;
		else if (sscanf(line, "Private_Dirty: %llu kB", &v) == 1)
			*priv = v, got |= 4;
	}
	fclose(f);
	return got == 7 && *rss > 0;
}

/* Connections the servers hold, from their own count (INFO clients), minus
 * the one asking: what a client costs the servers. */
static void sample_connections(struct run_ctx *r)
{
	uint64_t total = 0;

	for (size_t i = 0; i <= r->n_lock; i++) {
		struct lb_node *n = i < r->n_lock ? &r->lock[i] : &r->resource;
		redisReply *rep = lb_node_cmd(n, "INFO clients");
		const char *p = rep && rep->type == REDIS_REPLY_STRING ?
				strstr(rep->str, "connected_clients:") : NULL;
		if (p && atoll(p + 18) > 0)
			total += (uint64_t)atoll(p + 18) - 1;
		if (rep)
			freeReplyObject(rep);
		lb_node_close(n);
	}
	r->res->server_connections = total;
}

/* The mean memory of the live clients, sampled once mid-run: resident (each
 * maps the shared region; only the pages it touched count), proportional
 * (a page shared by N processes counts 1/N), and private dirty (what it wrote
 * itself: copied from the parent on write, or new). */
static void sample_memory(struct run_ctx *r)
{
	uint64_t sum[3] = { 0 }, n = 0, v[3];

	for (int i = 0; i < r->cfg->clients; i++)
		if (atomic_load(&r->sh->client[i].alive) &&
		    mem_kb(r->sh->client[i].pid, &v[0], &v[1], &v[2])) {
			for (int k = 0; k < 3; k++)
				sum[k] += v[k];
			n++;
		}
	if (n) {
		r->res->client_rss_kb = sum[0] / n;
		r->res->client_pss_kb = sum[1] / n;
		r->res->client_private_kb = sum[2] / n;
	}
	r->res->adapter_pss_kb = run_adapters_pss_kb(r);
}

/* Adapters of clients that were killed are orphans; lockbench is their
 * subreaper (lb_run), so they come here to be reaped, not left as zombies. */
void run_reap_strays(void)
{
	int st;
	while (waitpid(-1, &st, WNOHANG) > 0)
		;
}

static bool all_called(struct run_ctx *r)
{
	for (int i = 0; i < r->cfg->clients; i++)
		if (!atomic_load(&r->sh->client[i].first_call_ns))
			return false;
	return true;
}

/* lockbench agent: its input ended (or said stop): the run stops there. */
static bool run_agent_input_ended(struct run_ctx *r)
{
	char line[64], why[120];

	if (!r->agent_in || r->agent_gone)
		return r->agent_gone;
	int rc = lb_lines_next(r->agent_in, line, sizeof(line), 0, why, sizeof(why));
	if (rc == 1 && !strcmp(line, "stop"))
		return true;
	if (rc == 1 || rc == LB_ETIMEOUT)
		return false;
	r->agent_gone = true; /* its end, or a line it must not send */
	return true;
}

void run_supervise(struct run_ctx *r)
{
	/* memory mid-run; with --calls, clients stop when done: as soon as every
	 * one of them has made its first call (all alive, each has run) */
	int64_t rss_at = r->sh->t0_ns + (r->sh->end_ns - r->sh->t0_ns) / 2;
	int64_t next_status = r->sh->t0_ns + LB_NS_PER_S;
	int64_t grace_ns = (r->cfg->hold_max_ms + 3 * 2000 + 2000) * LB_NS_PER_MS;

	for (;;) {
		int64_t now = lb_now_ns();
		if ((lb_stop_requested() || run_agent_input_ended(r)) && !atomic_load(&r->sh->stop)) {
			r->res->interrupted = true;
			lb_shared_stop(r->sh);
		}
		/* the run's end; with --drain, waiters go on until they have
		 * entered (and left) or the drain is over, no new call begun */
		if (now >= r->sh->end_ns + (int64_t)(r->cfg->drain_s * 1e9) ||
		    atomic_load(&r->sh->stop))
			break;
		if (reap(r, false) == 0)
			break;
		if (!run_hosts_alive(r, 0)) { /* its clients' sessions are gone: void */
			r->strategy_failed = true;
			break;
		}
		lb_faults_tick(&r->inj, now - r->sh->t0_ns);
		if (rss_at && (now >= rss_at || (r->cfg->calls > 0 && all_called(r)))) {
			sample_memory(r);
			if (!r->consensus) /* the lock's servers are not Redis: n/a */
				sample_connections(r);
			rss_at = 0;
		}
		if (r->cfg->status_line && now >= next_status) {
			status_line(r, now);
			next_status += LB_NS_PER_S;
		}
		/* 2 ms while faults are due (their timing matters); otherwise wake
		 * rarely: on 2 cores the parent competes with clients and servers */
		lb_sleep_ns((r->cfg->scenario ? 2 : 10) * LB_NS_PER_MS);
	}
	lb_shared_stop(r->sh);
	if (r->strategy_failed) /* a host's death, said with how it ended, if it was that */
		run_hosts_alive(r, 300); /* (before run_reap_strays takes its status) */
	/* whole microseconds: what summary.csv writes is then exactly what the
	 * figures were computed from, and check computes them again from it */
	r->res->elapsed_s = (double)((lb_now_ns() - r->sh->t0_ns + 500) / 1000) / 1e6;
	if (lb_faults_unfired(&r->inj, r->res->unfired, sizeof(r->res->unfired)) > 0)
		lb_errorf("warning: %s: the scenario's fault %s never fired in this run: it shows "
			  "nothing about it (inconclusive)", r->cfg->strategy->name, r->res->unfired);
	if (atomic_load(&r->sh->history_full))
		lb_errorf("warning: %s: client %d recorded as many sections as a run keeps (%zu) "
			  "and the run ended at %.3f s rather than lose any: its figures are of that "
			  "time", r->cfg->strategy->name, atomic_load(&r->sh->history_full) - 1,
			  r->sh->cap, r->res->elapsed_s);
	lb_faults_finish(&r->inj); /* resume what is paused before waiting for it */
	if (r->cfg->status_line)
		printf("\n");
	int64_t give_up = lb_now_ns() + grace_ns;
	while (reap(r, false) > 0 && lb_now_ns() < give_up)
		lb_sleep_ns(2 * LB_NS_PER_MS);
	for (int i = 0; i < r->cfg->clients; i++)
		if (atomic_load(&r->sh->client[i].alive)) {
			r->sh->client[i].cut = 1;
			lb_client_signal(r->sh, i, SIGKILL);
			lb_shared_mark_dead(r->sh, i, rel_now(r));
		}
	while (reap(r, true) > 0)
		lb_sleep_ns(LB_NS_PER_MS);
	run_reap_strays();
}

/* The run's clock starts when every client has its strategy ready (an
 * adapter's process started and configured: a Node library takes a few
 * hundred ms), so that t = 0 means the same for recipes and libraries and no
 * client runs alone while the others start. A client whose strategy failed
 * counts as started (supervise reports it); Ctrl-C or 60 s end the wait. */
void run_wait_started(struct run_ctx *r)
{
	int64_t limit = lb_now_ns() + 60 * LB_NS_PER_S;
	while (atomic_load(&r->sh->started) < r->count && !atomic_load(&r->sh->stop) &&
	       !lb_stop_requested() && lb_now_ns() < limit)
		lb_sleep_ns(LB_NS_PER_MS);
}

static uint64_t tv_us(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

/* lockbench's own CPU while the clients ran: the parent's (@a to @b) and every
 * client process's less its adapter's, which each client wrote as it exited
 * (a client killed first could not: the adapters' part is then unknown, and
 * counted with the clients'). */
void run_count_cpu(struct run_ctx *r, const struct rusage *a, const struct rusage *b)
{
	uint64_t parent = tv_us(b->ru_utime) + tv_us(b->ru_stime) - tv_us(a->ru_utime) -
			  tv_us(a->ru_stime), clients = 0, adapters = 0;
	bool known = true;

	for (int i = 0; i < r->cfg->clients; i++) {
		struct lb_client_slot *c = &r->sh->client[i];
		uint64_t ad = atomic_load(&c->cpu_adapter_us);
		if (!atomic_load(&c->cpu_said) || ad > c->cpu_us)
			known = false, ad = 0;
		clients += c->cpu_us - ad;
		adapters += ad;
	}
	r->res->harness_cpu_us = parent + clients;
	r->res->adapter_cpu_us = adapters + run_hosts_cpu_us(r); /* adapter hosts: theirs */
	/* unknown where a killed client could not say: its adapter is then in
	 * the clients' part (an upper bound on lockbench's) */
	r->res->adapter_cpu_known = known && lb_strategy_is_external(r->cfg->strategy);
	r->res->harness_cpu_known = known || !lb_strategy_is_external(r->cfg->strategy);
}
