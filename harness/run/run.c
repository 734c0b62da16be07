/*
 * run.c - one run, in order: pre-flight (run_preflight.c), servers and the
 * shared region (run_setup.c), the clients from go to the end (forked here,
 * supervised by run_supervise.c), their records gathered and judged
 * (run_collect.c), and everything it started stopped on every path.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "owned.h"
#include "rserver.h"
#include "run.h"
#include "run_ctx.h"
#include "signals.h"

_Static_assert(LB_MAX_CLIENTS + LB_MAX_ADAPTER_HOSTS + 16 <= LB_MAX_CHILDREN,
	       "signals.c must track every client, the adapter hosts, the relay and helpers");
_Static_assert(LB_TOPO_PARTS + LB_MAX_CLIENTS <= LB_MAX_PARTIES,
	       "the relay must tell every client of a Sentinel or cluster run apart");

int run_fork_clients(struct run_ctx *r)
{
	pid_t parent = getpid();

	for (int i = r->first; i < r->first + r->count; i++) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			lb_errorf("fork failed: %s", strerror(errno));
			return LB_ESYS;
		}
		if (pid == 0) {
			if (!lb_child_bind_to_parent(parent))
				_exit(1);
			setpgid(0, 0); /* a group of its own, with its adapter (lb_client_signal) */
			run_crowd_nice(r);
			lb_client_main(r->cfg, r->sh, i, r->lock, r->n_lock, &r->resource, r->prefix,
				       r->shim[0] ? r->shim : NULL);
		}
		setpgid(pid, pid); /* from the parent too: no race with the child's own call */
		r->sh->client[i].pid = pid;
		atomic_store(&r->sh->client[i].alive, 1);
		lb_signals_track_child(pid);
	}
	return 0;
}

void run_cleanup(struct run_ctx *r)
{
	if (r->sh) {
		for (int i = 0; i < r->cfg->clients; i++) {
			if (atomic_load(&r->sh->client[i].alive)) {
				lb_client_signal(r->sh, i, SIGKILL);
				waitpid(r->sh->client[i].pid, NULL, 0);
				lb_signals_untrack_child(r->sh->client[i].pid);
			}
			/* an adapter's clock file: a killed client left its own */
			char clock[PATH_MAX];
			snprintf(clock, sizeof(clock), "%.3900s/.clock-%d", r->cfg->out_dir, i);
			if (r->cfg->out_dir[0])
				lb_owned_unlink(clock);
		}
		munmap(r->sh, r->sh_bytes);
	}
	run_hosts_stop(r);
	run_remote_stop(r); /* the agents stop their clients as their input ends */
	if (r->relay > 0) {
		kill(r->relay, SIGKILL);
		waitpid(r->relay, NULL, 0);
		lb_signals_untrack_child(r->relay);
	}
	if (r->watcher > 0) {
		kill(r->watcher, SIGKILL);
		waitpid(r->watcher, NULL, 0);
		lb_signals_untrack_child(r->watcher);
	}
	run_reap_strays();
	for (size_t i = 0; i < r->n_lock; i++)
		lb_node_close(&r->lock[i]);
	lb_node_close(&r->resource);
	lb_faults_finish(&r->inj);
	free(r->remote_slice); /* run --hosts: the faults inj fired (finished above) */
	r->remote_slice = NULL;
	lb_keywatch_stop(&r->kw);
	run_keep_logs(r);
	r->topo.primary = NULL; /* srv[0]'s; the Sentinels go first, then every server */
	lb_sentinel_topo_destroy(&r->topo);
	if (r->cfg->cluster)
		r->srv[0] = NULL; /* the cluster's node 0 */
	lb_cluster_destroy(&r->cluster);
	for (size_t i = 0; r->consensus && i < LB_CONSENSUS_MEMBERS; i++)
		r->srv[i] = NULL; /* the ensemble's, stopped with it */
	lb_consensus_destroy(&r->cons);
	for (size_t i = 0; i < r->n_srv; i++)
		lb_server_destroy(r->srv[i]);
	lb_server_destroy(r->replica);
	for (size_t i = 0; i <= LB_MAX_NODES; i++) /* after every client: they used them */
		lb_server_destroy(r->tunnel[i]);
	for (int i = 0; i < r->n_routes; i++)
		lb_server_destroy(r->route_tunnel[i]);
	/* anything it started that left its process group (setsid) and so
	 * outlived every kill above */
	if (r->mark[0] && lb_kill_marked(r->mark) > 0)
		run_reap_strays();
	/* and what also cleared its environment: orphaned, it came to this
	 * process (a child subreaper) */
	if (r->started_ticks && lb_kill_adopted(r->started_ticks) > 0)
		run_reap_strays();
}

static int run_drawn(const struct lb_run_cfg *cfg, struct lb_run_result *res);

/* nodes = leader: the member of the run's ensemble leading now. */
static int ensemble_leader(void *arg)
{
	return lb_consensus_leader(arg, 1000);
}

/* A [chaos] scenario's faults are drawn from the run's seed into a copy. */
int lb_run(const struct lb_run_cfg *cfg, struct lb_run_result *res)
{
	if (cfg->wait.kind == LB_WAIT_OWN) { /* each strategy its own (wait.h) */
		struct lb_run_cfg own = *cfg;
		own.wait = lb_wait_own(cfg->strategy);
		return lb_run(&own, res);
	}
	if (!cfg->scenario || !cfg->scenario->chaos.on)
		return run_drawn(cfg, res);
	struct lb_run_cfg local = *cfg;
	struct lb_scenario *sc = malloc(sizeof(*sc));
	if (!sc)
		return LB_ENOMEM;
	*sc = *cfg->scenario;
	lb_scenario_draw_chaos(sc, cfg->seed, cfg->clients,
			       cfg->nodes > 0 ? cfg->nodes : (int)cfg->strategy->min_nodes);
	local.scenario = sc;
	int rc = run_drawn(&local, res);
	free(sc);
	return rc;
}

/* Did the run reach nothing it measures? No client entered, every attempt
 * ended in an error (a configuration or authentication error of the
 * library, a server it cannot use), and the first came before any fault of
 * the scenario could explain it: then it is no result (unavailable would
 * blame the lock), and the library's own words are said (exit 3). */
static bool reached_nothing(const struct run_ctx *r)
{
	const struct lb_run_result *res = r->res;
	int64_t first = -1;
	int who = -1;

	if (res->n_sections || !res->attempts || res->acquire_errors < res->attempts)
		return false;
	for (int i = 0; i < r->cfg->clients; i++) {
		const struct lb_client_slot *c = &r->sh->client[i];
		if (c->first_error_said && (first < 0 || c->first_error_ns < first)) {
			first = c->first_error_ns;
			who = i;
		}
	}
	const struct lb_scenario *sc = r->cfg->scenario;
	for (int i = 0; sc && i < sc->n_faults; i++)
		if (first < 0 || (int64_t)(sc->faults[i].at_s * 1e9) <= first)
			return false;
	if (who < 0)
		return false;
	lb_errorf("the run of %s reached nothing it measures: all %llu attempts ended in an error "
		  "and no client entered; the first, client %d at %.3f s, said: %s",
		  r->cfg->strategy->name, (unsigned long long)res->attempts, who,
		  (double)first / 1e9, r->sh->client[who].first_error);
	return true;
}

/* The clients, from go to the end: the scenario's faults on cue, then what
 * they wrote gathered and the servers' counters read. */
static int contend(struct run_ctx *r, struct lock_snaps *snap, bool theirs)
{
	const struct lb_run_cfg *cfg = r->cfg;
	struct lb_run_result *res = r->res;
	int rc;

	struct rusage self0, self1;
	getrusage(RUSAGE_SELF, &self0);
	if (r->remote) { /* run --hosts: the clients are the agents' */
		if ((rc = run_remote_share(r)) < 0)
			return rc;
	} else if ((rc = run_hosts_start(r)) < 0 || (rc = run_fork_clients(r)) < 0) {
		return rc;
	} else {
		run_wait_started(r);
	}
	snap->n = run_lock_snapshot(r, snap->before, snap->name); /* at t0: the clients wait for go */
	r->kw_cmds = run_keywatch_cmds(r);
	r->inj = (struct lb_injector){ .cfg = cfg, .sc = cfg->scenario, .sh = r->sh,
				       .lock_srv = theirs ? NULL : r->srv, .n_lock = r->n_lock,
				       .lock = r->lock, .theirs = theirs,
				       .replica = cfg->sentinel ? r->topo.replica[0] :
						  cfg->cluster ? r->cluster.node[LB_CLUSTER_SHARDS] :
						  r->replica,
				       .prefix = r->prefix,
				       .leader = r->consensus ? ensemble_leader : NULL,
				       .leader_arg = &r->cons };
	r->sh->t0_ns = lb_now_ns();
	r->sh->end_ns = r->sh->t0_ns + (int64_t)(cfg->duration_s * 1e9);
	res->t0_mono_ns = r->sh->t0_ns;
	if (r->remote) {
		/* the faults on clients are their agents'; those on servers this one's */
		if (cfg->scenario && !(r->remote_slice = malloc(sizeof(*r->remote_slice))))
			return LB_ENOMEM;
		if (cfg->scenario)
			lb_scenario_slice(cfg->scenario, false, false, 0, 0, r->remote_slice);
		r->inj.sc = r->remote_slice;
		if ((rc = run_remote_contend(r)) < 0)
			return rc;
	} else {
		/* what is due at 0 is in place before any client moves (a delay on
		 * a client's links, a client that starts paused) */
		lb_faults_tick(&r->inj, 0);
		lb_shared_go(r->sh);
		run_supervise(r);
	}
	getrusage(RUSAGE_SELF, &self1);
	run_count_cpu(r, &self0, &self1);
	if (r->strategy_failed && lb_stop_requested()) {
		/* Ctrl-C or SIGTERM as the clients were starting: their adapters
		 * were stopped with them, which is no fault of the adapter's */
		return LB_ECANCELED;
	}
	if (r->strategy_failed) {
		lb_errorf("the run of %s is void: a client's strategy failed (above); nothing it "
			  "measured is reported", cfg->strategy->name);
		return LB_EPROTO;
	}
	if (r->kw.log && lb_keywatch_finish(&r->kw, r->sh->t0_ns, &res->key_events,
					    &res->n_key_events, res->foreign_why,
					    sizeof(res->foreign_why)) < 0)
		lb_errorf("warning: the servers' count of foreign releases is not measured: %s",
			  res->foreign_why);
	r->kw_cmds = run_keywatch_cmds(r) - r->kw_cmds; /* what the watcher added meanwhile */
	lb_keywatch_stop(&r->kw);
	if ((rc = run_collect(r)) < 0)
		return rc;
	run_read_counters(r);
	return reached_nothing(r) ? LB_ENOTHERE : 0;
}

/* One run: pre-flight, servers, the contention, the judgement; every
 * process it started stopped on every path. A skip returns 0 with the reason
 * in res->skipped. */
static int run_drawn(const struct lb_run_cfg *cfg, struct lb_run_result *res)
{
	struct run_ctx r = { .cfg = cfg, .res = res, .count = cfg->clients };
	struct lock_snaps snap = { .n = 0 };
	int rc;

	memset(res, 0, sizeof(*res));
	r.n_lock = (size_t)(cfg->nodes > 0 ? cfg->nodes : (int)cfg->strategy->min_nodes);
	r.consensus = lb_consensus_of(cfg->strategy);
	prctl(PR_SET_CHILD_SUBREAPER, 1); /* the adapters of killed clients come back here */
	lb_janitor_start();              /* if lockbench is killed, it kills what is marked */
	lb_mark_run(r.mark, sizeof(r.mark));
	/* the next tick: the janitor, started just before, is never taken */
	r.started_ticks = lb_proc_ticks_now() + 1;
	/* servers lockbench did not start: --redis, or the primary of --sentinel */
	bool theirs = lb_cfg_theirs(cfg);
	if ((rc = run_preflight(&r, theirs)) != 0)
		return rc > 0 ? 0 : rc; /* a skip: the caller reports it */
	/* run --hosts: every host reached, its agent this version, before a
	 * server starts; the servers then listen on --bind's address too */
	if (cfg->hosts && (rc = run_remote_connect(&r)) < 0)
		goto out;
	lb_server_bind_also(cfg->hosts ? cfg->bind_addr : NULL);
	rc = run_setup_servers(&r, theirs);
	lb_server_bind_also(NULL);
	if (rc < 0)
		goto out;
	run_setup_keywatch(&r, theirs);
	run_redis_version(&r);
	run_load_resource_scripts(&r);
	if ((rc = contend(&r, &snap, theirs)) < 0)
		goto out;
	run_count_lost_updates(cfg, res);
	run_count_lock_commands(&r, &snap);
	res->canary_violations = atomic_load(&r.sh->canary_violations);
	rc = run_judge(&r);
	if (r.remote)
		run_remote_judge(&r);
	if (theirs && !r.consensus)
		run_delete_own_keys(&r);
out:
	if (r.theirs_ens.ready || r.theirs_ens.root_made) /* after a failure too */
		lb_ensemble_clean(&r.theirs_ens, r.prefix);
	run_cleanup(&r);
	return rc;
}

void lb_run_result_free(struct lb_run_result *res)
{
	free(res->sections);
	free(res->per_client);
	free(res->events);
	free(res->waiters);
	res->waiters = NULL;
	free(res->tries);
	res->tries = NULL;
	free(res->key_events);
	free(res->remote);
	res->remote = NULL;
	lb_foreign_result_free(&res->foreign);
	res->key_events = NULL;
	res->sections = NULL;
	res->per_client = NULL;
	res->events = NULL;
}
