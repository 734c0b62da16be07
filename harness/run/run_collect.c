/*
 * run_collect.c - after the clients: the shared records into sections,
 * events and waiters, the servers' counters and command counts, and the
 * oracle's judgement of the history.
 */
#include <math.h>
#include <string.h>

#include "attempts.h"
#include "run.h"
#include "run_ctx.h"
#include "signals.h"

/* The watcher's commands on the servers the lock nodes' commands are counted on. */
uint64_t run_keywatch_cmds(const struct run_ctx *r)
{
	uint64_t n = 0;
	for (size_t i = 0; i < r->n_lock; i++)
		n += lb_keywatch_commands(&r->kw, r->lock[i].port);
	return n;
}

/* The servers that can hold the lock's keys, reached directly (never
 * through the relay), named as their logs are: every lock node and the
 * replicas a failover may promote. Their number. */
static size_t lock_servers(struct run_ctx *r, struct lb_node *n, char (*name)[48])
{
	struct lb_server *own[LB_MAX_NODES + LB_TOPO_REPLICAS + 1];
	size_t k = 0;

	if (r->consensus)
		return 0; /* not Redis servers: nothing to ask INFO of */
	if (lb_cfg_theirs(r->cfg)) { /* theirs: as the clients reach them */
		for (size_t i = 0; i < r->n_lock; i++) {
			n[i] = r->lock[i];
			n[i].ctx = NULL;
			if (n[i].n_sentinels)
				snprintf(name[i], sizeof(name[0]), "the primary '%.26s'", n[i].master);
			else if (n[i].n_seeds)
				snprintf(name[i], sizeof(name[0]), "the primary of slot %d", n[i].slot);
			else
				snprintf(name[i], sizeof(name[0]), "redis://%.26s:%d", n[i].host,
					 n[i].port);
		}
		return r->n_lock;
	}
	for (size_t i = 0; i < r->n_lock; i++)
		own[k++] = r->cfg->cluster ? r->cluster.node[0] : r->srv[i];
	if (r->cfg->cluster)
		own[k++] = r->cluster.node[LB_CLUSTER_SHARDS]; /* node 0's replica */
	for (int j = 0; j < LB_TOPO_REPLICAS && r->cfg->sentinel; j++)
		own[k++] = r->topo.replica[j];
	if (r->replica)
		own[k++] = r->replica;
	for (size_t i = 0; i < k; i++) {
		lb_node_init_local(&n[i], own[i] ? own[i]->port : 0, 2000);
		if (r->cfg->cluster)
			snprintf(name[i], sizeof(name[0]), "redis-cluster-%d", i ? LB_CLUSTER_SHARDS : 0);
		else if (i < r->n_lock)
			snprintf(name[i], sizeof(name[0]), "redis-lock-%zu", i);
		else if (r->cfg->sentinel)
			snprintf(name[i], sizeof(name[0]), "redis-replica-%zu", i - r->n_lock);
		else
			snprintf(name[i], sizeof(name[0]), "redis-replica");
	}
	return k;
}

/* One look at each lock server: its process (run_id), role and command
 * counts (INFO of three sections; one INFO each before Redis 7). */
size_t run_lock_snapshot(struct run_ctx *r, struct lb_srv_snap *snap, char (*name)[48])
{
	struct lb_node n[LB_MAX_NODES + LB_TOPO_REPLICAS + 1];
	static const char *const one[] = { "INFO server", "INFO replication", "INFO commandstats" };
	size_t k = lock_servers(r, n, name);

	for (size_t i = 0; i < k; i++) {
		char *text = NULL;
		size_t len = 0;
		redisReply *rep = n[i].port ? lb_node_cmd(&n[i], "INFO server replication commandstats")
					    : NULL;
		for (int j = 0; rep && rep->type == REDIS_REPLY_ERROR && j < 3; j++) { /* Redis < 7 */
			redisReply *part = lb_node_cmd(&n[i], one[j]);
			char *more = part && part->type == REDIS_REPLY_STRING ?
				     realloc(text, len + part->len + 1) : NULL;
			if (more) {
				memcpy(more + len, part->str, part->len + 1);
				len += part->len;
				text = more;
			}
			if (part)
				freeReplyObject(part);
		}
		lb_srv_snap_parse(text ? text : rep && rep->type == REDIS_REPLY_STRING ? rep->str : NULL,
				  &snap[i]);
		free(text);
		if (rep)
			freeReplyObject(rep);
		lb_node_close(&n[i]);
	}
	return k;
}

static int section_cmp(const void *pa, const void *pb)
{
	const struct lb_section *a = pa, *b = pb;
	if (a->enter_ns != b->enter_ns)
		return a->enter_ns < b->enter_ns ? -1 : 1;
	return a->client - b->client;
}

static int event_cmp(const void *pa, const void *pb)
{
	const struct lb_event *a = pa, *b = pb;
	return a->t_ns < b->t_ns ? -1 : a->t_ns > b->t_ns;
}

/* The servers the clients took for the primary behind the user's Sentinels,
 * each once (two clients may have added one at the same moment). */
static void collect_seen(struct run_ctx *r)
{
	struct lb_run_result *res = r->res;
	uint32_t n = atomic_load(&r->sh->n_seen);

	res->seen_overflow = n > LB_MAX_SEEN;
	for (uint32_t i = 0; i < n && i < LB_MAX_SEEN; i++) {
		const struct lb_server_seen *s = &r->sh->seen[i];
		bool dup = false;
		if (!atomic_load(&s->ready))
			continue;
		for (int k = 0; k < res->n_seen && !dup; k++)
			dup = res->seen[k].port == s->port && !strcmp(res->seen[k].host, s->host) &&
			      !strcmp(res->seen[k].run_id, s->run_id);
		if (dup || res->n_seen == (int)(sizeof(res->seen) / sizeof(res->seen[0])))
			continue;
		struct lb_server_seen_copy *c = &res->seen[res->n_seen++];
		memcpy(c->host, s->host, sizeof(c->host));
		memcpy(c->run_id, s->run_id, sizeof(c->run_id));
		c->host[sizeof(c->host) - 1] = c->run_id[sizeof(c->run_id) - 1] = '\0';
		c->port = s->port;
		c->first_ns = s->first_ns;
		c->first_client = s->first_client;
	}
}

static int collect_events(struct run_ctx *r)
{
	collect_seen(r);
	r->res->events = calloc(LB_MAX_EVENTS, sizeof(*r->res->events));
	if (!r->res->events)
		return LB_ENOMEM;
	size_t n = lb_shared_events(r->sh, r->res->events, LB_MAX_EVENTS);
	r->res->n_events = n;
	r->res->events_dropped = lb_shared_events_dropped(r->sh);
	qsort(r->res->events, n, sizeof(*r->res->events), event_cmp);
	return 0;
}

/* Each client's waiter: its acquire calls since its last enter (shared.h),
 * none of which entered. A client that died in one ends it at its death, and
 * that call's length so far joins the censored waits. */
static int collect_waiters(struct run_ctx *r, int64_t end)
{
	struct lb_run_result *res = r->res;
	int64_t t0 = r->sh->t0_ns;

	res->waiters = calloc((size_t)r->cfg->clients, sizeof(*res->waiters));
	if (!res->waiters)
		return LB_ENOMEM;
	for (int i = 0; i < r->cfg->clients; i++) {
		struct lb_client_slot *c = &r->sh->client[i];
		uint32_t calls = atomic_load(&c->wait_calls);
		int64_t stop = atomic_load(&c->wait_end_ns), tried = atomic_load(&c->wait_try_ns);
		int64_t death = atomic_load(&c->death_ns);
		if (!calls)
			continue;
		struct lb_waiter *w = &res->waiters[res->n_waiters++];
		*w = (struct lb_waiter){ .client = i, .key = i % r->cfg->keys, .calls = calls,
					 .start_ns = atomic_load(&c->wait_start_ns) - t0,
					 .last_try_ns = tried ? tried - t0 : -1,
					 .ended = atomic_load(&c->wait_cut) ? LB_WEND_CUT : LB_WEND_GAVE_UP };
		if (stop) {
			w->end_ns = stop - t0;
			continue;
		}
		/* died in the call: at its death (the harness's cut at the end, or a fault) */
		w->end_ns = death ? death : end;
		w->ended = c->cut ? LB_WEND_CUT : LB_WEND_KILLED;
		lb_hist_add(&res->censored, w->end_ns - (atomic_load(&c->call_start_ns) - t0));
	}
	return 0;
}

/* Each client's attempt log (shared.h), and the attempt it died or was cut
 * in, whose end nobody saw: at its death or the run's end. */
static int collect_tries(struct run_ctx *r, int64_t end)
{
	struct lb_run_result *res = r->res;
	size_t total = 0;
	bool full = false;

	for (int i = 0; i < r->cfg->clients; i++)
		total += atomic_load(&r->sh->client[i].n_tries) + 1;
	res->tries = calloc(total ? total : 1, sizeof(*res->tries));
	if (!res->tries)
		return LB_ENOMEM;
	for (int i = 0; i < r->cfg->clients; i++) {
		struct lb_client_slot *c = &r->sh->client[i];
		uint32_t n = atomic_load(&c->n_tries);
		int64_t open = atomic_load(&c->try_open_ns), death = atomic_load(&c->death_ns);
		for (uint32_t j = 0; j < n; j++) {
			const struct lb_try_rec *t = lb_shared_try(r->sh, i, j);
			res->tries[res->n_tries++] = (struct lb_try){ i, t->start_ns, t->end_ns,
				(enum lb_try_result)t->result };
		}
		if (open && open - r->sh->t0_ns <= (death ? death : end))
			res->tries[res->n_tries++] = (struct lb_try){ i, open - r->sh->t0_ns,
				death ? death : end, LB_TRY_UNKNOWN };
		full |= atomic_load(&c->tries_full) != 0;
	}
	/* a node down is the lock down only where no replica takes its place,
	 * and only lockbench's own servers' faults are all in the events */
	const struct lb_run_cfg *cfg = r->cfg;
	bool replicas = r->replica || cfg->sentinel || cfg->cluster || lb_cfg_theirs(cfg);
	res->tries_known = !full && !replicas;
	res->tries_full = full;
	if (full)
		snprintf(res->tries_why, sizeof(res->tries_why), "a client's attempt log filled "
			 "(%zu attempts)", r->sh->try_cap);
	else if (replicas)
		snprintf(res->tries_why, sizeof(res->tries_why), "%s", lb_cfg_theirs(cfg) ?
			 "the servers are the user's: lockbench does not see every fault" :
			 "replicas: a node down is not the lock down");
	return 0;
}

/* The lock's commands by phase (run.h): what each client counted at its
 * enters and releases, and what the relay passed on after its last count,
 * to the phase it ended in; the client-seconds of each phase from its
 * sections and its life. */
static void collect_phases(struct run_ctx *r, int64_t end)
{
	struct lb_run_result *res = r->res;

	res->phase_known = r->relay > 0 && !r->cfg->sentinel && !r->cfg->cluster &&
			   !lb_cfg_theirs(r->cfg);
	if (!res->phase_known) {
		snprintf(res->phase_why, sizeof(res->phase_why), "%s", lb_cfg_theirs(r->cfg) ?
			 "the servers are the user's: no relay carries the clients' commands" :
			 r->cfg->sentinel || r->cfg->cluster ? "Sentinel and Cluster clients reach "
			 "the servers they are told of, not one link each through the relay" :
			 "the relay did not run (--count-commands starts it)");
		return;
	}
	/* each client's time inside, and whether a section of it is still open */
	int64_t *inside = calloc((size_t)r->cfg->clients, sizeof(*inside));
	bool *open = calloc((size_t)r->cfg->clients, sizeof(*open));
	if (!inside || !open) {
		free(inside);
		free(open);
		res->phase_known = false;
		snprintf(res->phase_why, sizeof(res->phase_why), "out of memory");
		return;
	}
	for (size_t k = 0; k < res->n_sections; k++) {
		const struct lb_section *s = &res->sections[k];
		int64_t to = s->release_ns >= 0 ? s->release_ns : s->exit_ns;
		inside[s->client] += to > s->enter_ns ? to - s->enter_ns : 0;
		open[s->client] |= s->release_ns < 0;
	}
	for (int i = 0; i < r->cfg->clients; i++) {
		struct lb_client_slot *c = &r->sh->client[i];
		uint64_t all = 0, held = atomic_load(&c->cmds_held), waited = atomic_load(&c->cmds_waiting);
		int64_t death = atomic_load(&c->death_ns), life = death ? death : end;
		for (size_t j = 0; j < r->n_lock && j < LB_RELAY_RESOURCE; j++)
			all += atomic_load(&r->sh->link[i][j].requests);
		uint64_t rest = all > held + waited ? all - held - waited : 0;
		res->cmds_holding += held + (open[i] ? rest : 0);
		res->cmds_waiting += waited + (open[i] ? 0 : rest);
		res->holding_s += (double)inside[i] / 1e9;
		res->waiting_s += (double)(life > inside[i] ? life - inside[i] : 0) / 1e9;
	}
	free(inside);
	free(open);
}

/* What a stampede is judged by, from each client's slot: how close together
 * the clients made their first call, when the last of them first got in,
 * and those that never did (their attempts: the harness's count, unknown
 * when the library waits inside one call; how long they waited). */
static void collect_stampede(struct run_ctx *r)
{
	struct lb_run_result *res = r->res;
	int64_t first = INT64_MAX, last = INT64_MIN, waited = 0;
	uint64_t tries = 0;

	res->last_served_ns = -1;
	for (int i = 0; i < r->cfg->clients; i++) {
		struct lb_client_slot *c = &r->sh->client[i];
		int64_t t = atomic_load(&c->first_call_ns);
		if (t == 0)
			continue;
		first = t < first ? t : first;
		last = t > last ? t : last;
		if (atomic_load(&c->n_records) > 0) {
			int64_t in = lb_shared_record(r->sh, i, 0)->enter_ns;
			res->served_clients++;
			res->last_served_ns = in > res->last_served_ns ? in : res->last_served_ns;
			continue;
		}
		if (c->timeouts == 0) { /* its call was still waiting when the run ended */
			res->still_waiting_clients++;
			continue;
		}
		uint64_t a = atomic_load(&c->attempts);
		int64_t end = atomic_load(&c->wait_end_ns);
		res->gave_up_clients++;
		tries += a;
		res->gave_up_attempts_max = a > res->gave_up_attempts_max ? a : res->gave_up_attempts_max;
		/* a wait the run's end cut is stamped when its client stopped, a
		 * little after the run's end: counted to that end, as the run's
		 * length (elapsed_s) is, which check holds it to */
		int64_t stop = end > t ? end : lb_now_ns();
		int64_t run_end = r->sh->t0_ns + (int64_t)(res->elapsed_s * 1e9);
		if (stop > run_end)
			stop = run_end;
		waited += stop > t ? stop - t : 0;
	}
	res->arrival_spread_ns = last >= first ? last - first : 0;
	res->gave_up_attempts = r->cfg->wait.kind == LB_WAIT_LIBRARY || !res->gave_up_clients ?
				NAN : (double)tries / (double)res->gave_up_clients;
	res->gave_up_after_ms = res->gave_up_clients ?
				(double)waited / 1e6 / (double)res->gave_up_clients : NAN;
}

/* Shared records -> sections; a record's state says how far it got. */
int run_collect(struct run_ctx *r)
{
	struct lb_run_result *res = r->res;
	size_t total = 0, k = 0;

	for (int i = 0; i < r->cfg->clients; i++) {
		struct lb_client_slot *c = &r->sh->client[i];
		size_t n = atomic_load(&c->n_records);
		/* a client killed between publishing a record and counting it */
		if (n < r->sh->cap && atomic_load(&lb_shared_record(r->sh, i, n)->state) != LB_REC_EMPTY)
			atomic_store(&c->n_records, (uint32_t)++n);
		total += n;
		res->attempts += atomic_load(&c->attempts);
		res->acquires += c->acquires;
		res->acquire_timeouts += c->timeouts;
		res->acquire_errors += atomic_load(&c->acquire_errors);
		res->counter_writes += c->counter_writes;
		/* writes sent without a reply: timed out while alive, or in flight
		 * when the client died; each may have landed */
		res->uncertain_writes += c->uncertain_writes +
			(uint64_t)(atomic_load(&c->death_ns) && atomic_load(&c->write_in_flight));
		res->writes_aborted += c->writes_aborted;
		res->indeterminate_ops += c->indeterminate_ops;
		int64_t cpu = atomic_load(&c->cpu_ns);
		res->clients_cpu_ns = res->clients_cpu_ns < 0 || cpu < 0 ? -1 : res->clients_cpu_ns + cpu;
		lb_hist_merge(&res->latency, &c->latency);
		lb_hist_merge(&res->censored, &c->censored);
	}
	res->sections = calloc(total ? total : 1, sizeof(*res->sections));
	if (!res->sections)
		return LB_ENOMEM;
	int64_t end = (int64_t)(res->elapsed_s * 1e9);
	for (int i = 0; i < r->cfg->clients; i++) {
		struct lb_client_slot *c = &r->sh->client[i];
		size_t n = atomic_load(&c->n_records);
		int64_t death = atomic_load(&c->death_ns);
		for (size_t j = 0; j < n; j++)
			lb_record_section(lb_shared_record(r->sh, i, j), i, i % r->cfg->keys,
					  (uint32_t)j, death ? death : end, c->cut, &res->sections[k++]);
	}
	res->n_sections = k;
	collect_stampede(r);
	qsort(res->sections, k, sizeof(*res->sections), section_cmp);
	if (collect_waiters(r, end) < 0 || collect_tries(r, end) < 0)
		return LB_ENOMEM;
	collect_phases(r, end);
	return collect_events(r);
}

/* The counters' final values, the writes the resource applied, and what the
 * fenced resource refused: read from the resource, in one snapshot per key,
 * not from what the clients believe. */
void run_read_counters(struct run_ctx *r)
{
	r->res->counter_final = 0;
	r->res->applied_writes = 0;
	r->res->applied_known = true;
	r->res->counter_known = true;
	for (int k = 0; k < r->cfg->keys; k++) {
		redisReply *rep = lb_node_cmd(&r->resource, "MGET %scounter:%d %scounter:%d:stale "
					      "%scounter:%d:applied", r->prefix, k, r->prefix, k,
					      r->prefix, k);
		if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 3) {
			if (rep->element[0]->type == REDIS_REPLY_STRING)
				r->res->counter_final += atoll(rep->element[0]->str);
			if (rep->element[1]->type == REDIS_REPLY_STRING)
				r->res->stale_writes_rejected += (uint64_t)atoll(rep->element[1]->str);
			if (rep->element[2]->type == REDIS_REPLY_STRING)
				r->res->applied_writes += (uint64_t)atoll(rep->element[2]->str);
		} else { /* the resource did not answer: the final count is not known */
			r->res->applied_known = false;
			r->res->counter_known = false;
		}
		if (rep)
			freeReplyObject(rep);
	}
}

/* Each applied write sets the counter to what its section read plus one, so
 * every lost update is an applied write the final value does not count. The
 * resource counts the writes it applied, acknowledged or not: exact. Without
 * that count, the writes whose reply never came make a range. On the user's
 * server (resource_theirs) that count is not a witness: a failover rolls it
 * back with the counter, so the clients' own count of acknowledged writes is. */
void run_count_lost_updates(const struct lb_run_cfg *cfg, struct lb_run_result *res)
{
	if (res->resource_theirs)
		res->applied_known = false; /* its count, rolled back with it, reads n/a */
	if (res->applied_known) {
		res->lost_updates = (long long)res->applied_writes - res->counter_final;
		res->lost_updates_max = res->lost_updates;
	} else {
		res->lost_updates = (long long)res->counter_writes - res->counter_final;
		res->lost_updates_max = res->lost_updates + (long long)res->uncertain_writes;
	}
	if (cfg->work != LB_WORK_COUNTER || !res->counter_known)
		res->lost_updates = res->lost_updates_max = 0; /* none claimed; n/a when unknown */
	if (res->lost_updates < 0)
		res->lost_updates = 0;
	if (res->lost_updates_max < 0)
		res->lost_updates_max = 0;
}

/* The oracle's verdict on the history, the servers' foreign releases, the
 * outcome and the figures derived from them. */
int run_judge(struct run_ctx *r)
{
	const struct lb_run_cfg *cfg = r->cfg;
	struct lb_run_result *res = r->res;
	int64_t end_ns = (int64_t)(res->elapsed_s * 1e9);

	res->per_client = calloc((size_t)cfg->clients, sizeof(*res->per_client));
	if (!res->per_client)
		return LB_ENOMEM;
	struct lb_history hist = { .s = res->sections, .n = res->n_sections, .w = res->waiters,
				   .n_w = res->n_waiters, .clients = cfg->clients, .end_ns = end_ns,
				   .ttl_ns = cfg->ttl_ms * LB_NS_PER_MS };
	int rc = lb_oracle_judge_history(&hist, &res->verdict, res->per_client);
	struct lb_foreign_opts fo = { LB_KEYWATCH_SLOP_NS, cfg->ttl_ms * LB_NS_PER_MS, end_ns };
	if (rc == 0)
		rc = lb_foreign_verdict(&res->verdict, res->sections, res->n_sections, res->key_events,
					res->n_key_events, cfg->strategy->blind_release, &fo,
					&res->foreign);
	if (rc == 0) /* the lost notices, timed against the servers' end of each lease */
		rc = lb_notice_verdict(&res->verdict, res->sections, res->n_sections, &res->foreign,
				       res->events, res->n_events, end_ns, res->events_dropped == 0, NULL);
	if (rc == 0) /* held with no live holder: the servers' events against the sections */
		rc = lb_unattended_verdict(&res->verdict, res->sections, res->n_sections,
					   res->key_events, res->n_key_events, cfg->keys, &fo);
	if (res->foreign.unjudged)
		snprintf(res->foreign_why, sizeof(res->foreign_why), "on several lock nodes a set is "
			 "matched to its section only by the token the strategy says (token=), and %.60s "
			 "says none: the servers' events cannot be judged", cfg->strategy->name);
	else if (res->foreign.unseen)
		snprintf(res->foreign_why, sizeof(res->foreign_why), "%.60s entered %zu sections, "
			 "but the servers showed no set of a lock key: it writes the lock as another "
			 "type (a sorted set, a hash), whose changes the watcher does not follow",
			 cfg->strategy->name, res->n_sections);
	struct lb_coverage cover;
	int64_t asked_ns = (int64_t)(cfg->duration_s * 1e9);
	lb_run_coverage(res->events, res->n_events, cfg->clients,
			cfg->calls || asked_ns < end_ns ? end_ns : asked_ns, &cover);
	struct lb_class_input ci = {
		.cover = &cover,
		.v = &res->verdict, .lost_min = res->lost_updates, .lost_max = res->lost_updates_max,
		.attempts = res->attempts, .acquire_errors = res->acquire_errors,
		.acquire_timeouts = res->acquire_timeouts,
		.stopped = res->stale_writes_rejected + res->writes_aborted,
		.unfired = res->unfired[0] ? res->unfired : NULL,
		.interrupted = res->interrupted ? lb_stop_signal() : 0,
	};
	res->observed = lb_classify(&ci, res->observed_why, sizeof(res->observed_why));
	if (rc == 0)
		rc = lb_busy_down(res->tries, res->n_tries, res->sections, res->n_sections,
				  res->events, res->n_events, (int)r->n_lock, cfg->keys, &res->busy);
	res->throughput_per_s = res->elapsed_s > 0 ? (double)res->n_sections / res->elapsed_s : 0;
	res->cmds_per_section = res->lock_commands_known && res->n_sections ?
				(double)res->lock_commands / (double)res->n_sections : NAN;
	if (rc == 0)
		rc = lb_held_time(res->sections, res->n_sections, end_ns, &res->held_s,
				  &res->inside_s);
	struct lb_cost_shape shape = { .wait = &cfg->wait, .clients = cfg->clients,
				       .keys = cfg->keys, .nodes = (int)r->n_lock, .ttl_ms = cfg->ttl_ms,
				       .elapsed_s = res->elapsed_s, .sections = res->n_sections,
				       .inside_s = res->inside_s };
	res->cost_bound_known = lb_lock_cost_bound(&shape, &res->cost_bound, res->cost_bound_why,
						   sizeof(res->cost_bound_why)) == 0;
	if (r->consensus) { /* a bound on Redis commands says nothing of etcd's requests */
		res->cost_bound_known = false;
		snprintf(res->cost_bound_why, sizeof(res->cost_bound_why), "the lock lives in %s, "
			 "not Redis", lb_consensus_shown((enum lb_consensus_kind)r->consensus));
	}
	return rc;
}

/* The lock's commands per section: what its servers counted between the
 * snapshots, less what the key watcher sent them meanwhile (r->kw_cmds). */
void run_count_lock_commands(struct run_ctx *r, struct lock_snaps *snap)
{
	struct lb_run_result *res = r->res;
	const char *names[LB_MAX_NODES + LB_TOPO_REPLICAS + 1];

	if (r->consensus) {
		res->lock_commands_known = false;
		snprintf(res->lock_commands_why, sizeof(res->lock_commands_why), "the lock lives in "
			 "%s; lockbench counts Redis servers' commands (INFO commandstats) only",
			 lb_consensus_shown((enum lb_consensus_kind)r->consensus));
		return;
	}
	run_lock_snapshot(r, snap->after, snap->name);
	for (size_t i = 0; i < snap->n; i++)
		names[i] = snap->name[i];
	res->lock_commands_known = lb_lock_commands_between(snap->before, snap->after, names,
							    snap->n, r->n_lock, &res->lock_commands,
							    res->lock_commands_why,
							    sizeof(res->lock_commands_why));
	if (res->lock_commands_known)
		res->lock_commands -= r->kw_cmds < res->lock_commands ? r->kw_cmds : res->lock_commands;
}
