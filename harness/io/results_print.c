/*
 * results_print.c - a run's result on the terminal: the load, the figures,
 * the safety lines and the outcome against the scenario's expectation.
 */
#include <math.h>
#include "esc.h"
#include "results.h"
#include "scenario.h"
#include "shared.h"


void lb_foreign_text(const struct lb_verdict *v, char *buf, size_t len)
{
	if (v->foreign_source == LB_FOREIGN_NA)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%llu", (unsigned long long)v->foreign_releases);
}

/* Where the foreign releases were seen, what they were, and where the
 * releases' own count differs from the servers'. */
static void print_foreign(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *res)
{
	const struct lb_verdict *v = &res->verdict;
	const struct lb_foreign_result *fr = &res->foreign;

	if (v->foreign_source != LB_FOREIGN_SERVER) {
		fprintf(f, "  foreign      %s: %s\n", v->foreign_source == LB_FOREIGN_NA ? "n/a" :
			"as the releases said (a GETDEL's old value)", res->foreign_why[0] ?
			res->foreign_why : "not measured");
		return;
	}
	fprintf(f, "  foreign      seen by the servers: %zu key events, %llu sets (%llu of a section), "
		   "%llu dels, %llu of another client's lock (%llu with no release in flight)",
		res->n_key_events, (unsigned long long)fr->sets, (unsigned long long)fr->sets_owned,
		(unsigned long long)fr->dels, (unsigned long long)fr->releases,
		(unsigned long long)fr->unattributed);
	if (!cfg->strategy->blind_release && v->foreign_client != v->foreign_releases)
		fprintf(f, "; the releases themselves said %llu", (unsigned long long)v->foreign_client);
	fputc('\n', f);
	for (size_t i = 0; i < fr->releases && i < 3; i++) {
		const struct lb_foreign_release *x = &fr->list[i];
		char by[32];
		if (x->by >= 0)
			snprintf(by, sizeof(by), "client %d's release", x->by);
		else
			snprintf(by, sizeof(by), "a del (no release in flight)");
		fprintf(f, "               %.3f s: %s deleted client %d's lock", (double)x->t_ns / 1e9, by,
			x->owner);
		if (cfg->nodes > 1 || cfg->strategy->min_nodes > 1)
			fprintf(f, " on node %d", x->node);
		fputc('\n', f);
	}
	if (fr->releases > 3)
		fprintf(f, "               ... %llu more\n", (unsigned long long)(fr->releases - 3));
	if (!v->notices_known || !v->leases_ended)
		return;
	fprintf(f, "  notices      %llu leases the servers ended while held: ",
		(unsigned long long)v->leases_ended);
	if (v->notices_told)
		fprintf(f, "the holder told %.1f ms after the server's end (p50), %.1f ms at most; ",
			v->notice_lag_p50_ms, v->notice_lag_max_ms);
	fprintf(f, "%llu not told before the holder's exit\n", (unsigned long long)v->notices_missed);
}

void lb_acquire_text(const struct lb_run_result *res, double q, char *buf, size_t len)
{
	double low, high;

	lb_hist_quantile_interval_us(&res->latency, &res->censored, q, &low, &high);
	if (res->latency.n + res->censored.n == 0)
		snprintf(buf, len, "n/a");
	else if (isinf(high))
		snprintf(buf, len, ">= %.2f ms", low / 1000.0);
	else if (high != low)
		snprintf(buf, len, "[%.2f, %.2f] ms", low / 1000.0, high / 1000.0);
	else
		snprintf(buf, len, "%.2f ms", low / 1000.0);
}

static void print_acquire(FILE *f, const struct lb_run_result *res, const char *label, double q)
{
	char text[48];
	lb_acquire_text(res, q, text, sizeof(text));
	fprintf(f, " %s %s", label, text);
}

/* The outcome against the scenario's expectation, the warnings, the faults. */
static void print_outcome(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *res,
			  const struct lb_summary *s, const struct lb_lock_cost *cost,
			  const char *wait)
{
	int expected = cfg->scenario ? lb_scenario_expected(cfg->scenario, cfg->strategy->name) : -1;
	lb_esc_fprintf(f, LB_LANG_TERM, "  outcome      %s: %s", lb_class_name(res->observed),
		       res->observed_why);
	if (expected >= 0 && res->observed == LB_CLASS_INTERRUPTED) {
		char want[128];
		lb_scenario_expect_text(cfg->scenario, cfg->strategy->name, want, sizeof(want));
		lb_esc_fprintf(f, LB_LANG_TERM, " (scenario %s expects %s: not compared, the run was cut short)",
			cfg->scenario_name, want);
	} else if (expected >= 0) {
		const struct lb_scenario_expect *e = lb_scenario_expect_of(cfg->scenario,
									   cfg->strategy->name);
		struct lb_observed ob = { res->observed, lb_summary_value, s };
		char want[128], why[256];
		lb_expect_text(e, want, sizeof(want));
		bool met = lb_expect_met(e, &ob, why, sizeof(why));
		lb_esc_fprintf(f, LB_LANG_TERM, " (scenario %s expects %s: %s%s)", cfg->scenario_name, want,
			met ? "as expected" : "DIFFERENT: ", met ? "" : why);
	}
	for (int i = 0; cfg->scenario && i < cfg->scenario->n_thresholds; i++) {
		const struct lb_threshold *t = &cfg->scenario->thresholds[i];
		char line[400];
		enum lb_held held = lb_threshold_judge(t, lb_summary_value(s, t->column), line,
						       sizeof(line));
		lb_esc_fprintf(f, LB_LANG_TERM, "\n  threshold    %s: %s (scenario %s)", line,
			       held == LB_HELD ? "held" : held == LB_NOT_HELD ? "NOT HELD" :
			       "INCONCLUSIVE", cfg->scenario_name);
	}
	if (cost->flagged)
		fprintf(f, "\n  WARNING      the lock's own traffic: %llu commands at the lock servers, "
			   "%.0f times the most a recipe of its shape sends (%.0f: %d clients, wait "
			   "%s, TTL %lld ms, docs/running.md): a spinning retry or extension",
			(unsigned long long)res->lock_commands, (double)res->lock_commands /
			res->cost_bound, res->cost_bound, cfg->clients, wait, (long long)cfg->ttl_ms);
	if (res->events_dropped)
		fprintf(f, "\n  WARNING      %llu events were not recorded (the run's table holds %d): "
			   "events.csv and the timeline miss them; the counts above do not",
			(unsigned long long)res->events_dropped, LB_MAX_EVENTS);
	size_t shown = 0, more = 0;
	for (size_t i = 0; i < res->n_events; i++) {
		if (res->events[i].kind == LB_EV_PRIMARY_SEEN || res->events[i].kind == LB_EV_LOST_NOTICE)
			continue; /* not a fault: the timeline's strip and the story tell it */
		if (shown == 12) {
			more++;
			continue;
		}
		fprintf(f, "%s%s %.3fs", shown++ ? ", " : "\n  faults       ",
			lb_event_name(res->events[i].kind), (double)res->events[i].t_ns / 1e9);
	}
	fprintf(f, "%s\n", more ? ", ..." : "");
}

/* Overlaps, lost updates, foreign releases, and what kept the holders alive. */
/* With calls = N (a stampede): how the crowd was served. */
static void print_stampede(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *res)
{
	if (cfg->calls == 0)
		return;
	char last[48] = "none";
	if (res->last_served_ns >= 0)
		snprintf(last, sizeof(last), "%.1f ms after go", (double)res->last_served_ns / 1e6);
	fprintf(f, "  stampede     %llu of %d clients served (the last %s), %llu still waiting "
		"at the end, %llu gave up", (unsigned long long)res->served_clients, cfg->clients,
		last, (unsigned long long)res->still_waiting_clients,
		(unsigned long long)res->gave_up_clients);
	if (res->gave_up_clients && !isnan(res->gave_up_attempts))
		fprintf(f, " after %.1f attempts (at most %llu)", res->gave_up_attempts,
			(unsigned long long)res->gave_up_attempts_max);
	else if (res->gave_up_clients)
		fprintf(f, " (attempts n/a: the library retries inside one call)");
	if (res->gave_up_clients)
		fprintf(f, " and %.1f ms of waiting each", res->gave_up_after_ms);
	fprintf(f, "; first calls within %.3f ms", (double)res->arrival_spread_ns / 1e6);
	if (res->lock_commands_known && res->elapsed_s > 0)
		fprintf(f, "; the lock's servers ran %.0f commands/s",
			(double)res->lock_commands / res->elapsed_s);
	fputc('\n', f);
}

static void print_safety(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *res)
{
	const struct lb_verdict *v = &res->verdict;
	char lost[128];
	if (cfg->work == LB_WORK_COUNTER && !res->counter_known)
		snprintf(lost, sizeof(lost), "n/a (the resource did not answer the final read)");
	else if (res->lost_updates_max > res->lost_updates)
		snprintf(lost, sizeof(lost), "%lld..%lld (%llu writes of unknown outcome)",
			 res->lost_updates, res->lost_updates_max,
			 (unsigned long long)res->uncertain_writes);
	else
		snprintf(lost, sizeof(lost), "%lld", res->lost_updates);
	char foreign[64];
	lb_foreign_text(v, foreign, sizeof(foreign));
	char canary[32] = "n/a"; /* run --hosts: a canary sees its own host's clients alone */
	if (!res->n_remote)
		snprintf(canary, sizeof(canary), "%llu", (unsigned long long)res->canary_violations);
	fprintf(f, "  safety       overlaps %llu (%.1f ms, max %d holders, canary %s), "
		   "lost updates %s, foreign releases %s, lost leases %llu\n",
		(unsigned long long)v->overlaps, v->overlap_ms, v->max_holders,
		canary, lost, foreign,
		(unsigned long long)v->lost_leases);
	print_foreign(f, cfg, res);
	if (res->stale_writes_rejected || res->writes_aborted)
		fprintf(f, "  stopped      %llu stale reads/writes refused by the fenced resource, "
			   "%llu sections aborted on a lost lease\n",
			(unsigned long long)res->stale_writes_rejected,
			(unsigned long long)res->writes_aborted);
	char jain[16];
	snprintf(jain, sizeof(jain), v->sections > 0 ? "%.3f" : "n/a", v->fairness);
	fprintf(f, "  liveness     holder deaths %llu, orphaned %.1f ms, recovered %s, fairness %s, "
		   "%llu acquire attempts found a node down\n",
		(unsigned long long)v->holder_deaths, v->orphan_ms, lb_recovered_name(v->recovered),
		jain, (unsigned long long)res->acquire_errors);
	if (v->leases_lapsed_known && v->held_no_holder_ms > 0)
		fprintf(f, "               the servers held the lock %.1f ms with no live holder "
			   "(longest %.1f ms)\n", v->held_no_holder_ms, v->held_no_holder_max_ms);
	if (res->phase_known && res->holding_s > 0 && res->waiting_s > 0)
		fprintf(f, "  by phase     %.2f commands sent per client-second holding, %.2f waiting "
			   "(the relay's count)\n", (double)res->cmds_holding / res->holding_s,
			(double)res->cmds_waiting / res->waiting_s);
	else if (cfg->count_commands)
		fprintf(f, "  by phase     n/a (%s)\n", res->phase_why[0] ? res->phase_why :
			"no time inside or outside a section to divide by");
	if (!res->tries_known)
		fprintf(f, "  busy         %llu busy answers; while the nodes were down: n/a (%s)\n",
			(unsigned long long)res->busy.busy, res->tries_why);
	else if (res->busy.down > 0)
		fprintf(f, "  busy         %llu busy answers, %llu of them while fewer than a quorum of "
			   "the lock's nodes were up and nobody held it: a failure reported as busy "
			   "(hidden)\n", (unsigned long long)res->busy.busy,
			(unsigned long long)res->busy.down);
}

/* A load that cannot show a race: one client did nearly every section (it
 * releases and takes the lock again before a waiter's next poll), so the
 * others were hardly ever in contention. Said, with what to change. */
static void print_barging(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *res)
{
	uint64_t most = 0, all = res->verdict.sections;
	int who = -1;

	for (int c = 0; c < cfg->clients && res->per_client; c++)
		if (res->per_client[c] > most) {
			most = res->per_client[c];
			who = c;
		}
	if (cfg->clients < 2 || all < 20 || (double)most < 0.9 * (double)all)
		return;
	fprintf(f, "  warning      client %d did %llu of the %llu sections (%.0f %%): the others "
		   "hardly contended, so a race has little chance to show. %s\n", who,
		(unsigned long long)most, (unsigned long long)all, 100.0 * (double)most / (double)all,
		cfg->think_ms == 0 ? "With think 0 a client takes the lock again as soon as it "
		"releases it, before a waiter polls (barging): give --think (e.g. 20 ms)" :
		"Give a longer --think or a shorter --wait poll");
}

void lb_results_print(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *res,
		      const struct lb_summary *s)
{
	const struct lb_verdict *v = &res->verdict;
	char hold[48], wait[48], work[16];

	lb_param_column_text(lb_param_row(LB_P_HOLD), cfg, hold, sizeof(hold));
	lb_param_column_text(lb_param_row(LB_P_WAIT), cfg, wait, sizeof(wait));
	lb_param_column_text(lb_param_row(LB_P_WORK), cfg, work, sizeof(work));
	lb_esc_fprintf(f, LB_LANG_TERM, "%s: %d clients on %d key%s, %.1f s%s, ttl %lld ms, hold %s ms, "
		       "wait %s, work %s, seed %llu\n", cfg->strategy->name, cfg->clients, cfg->keys,
		cfg->keys == 1 ? "" : "s", res->elapsed_s, res->interrupted ? " (interrupted)" : "",
		(long long)cfg->ttl_ms, hold, wait, work, (unsigned long long)cfg->seed);
	fprintf(f, "  throughput   %llu sections, %.1f /s, ", (unsigned long long)v->sections,
		res->throughput_per_s);
	if (res->lock_commands_known && v->sections)
		fprintf(f, "%.2f redis commands per section\n", res->cmds_per_section);
	else
		fprintf(f, "redis commands per section n/a (%s)\n", res->lock_commands_known ?
			"no section" : res->lock_commands_why);
	if (v->handoffs)
		fprintf(f, "  hand-off     %llu releases taken over by a waiter: p50 %.2f ms, p99 %.2f ms\n",
			(unsigned long long)v->handoffs, v->handoff_p50_us / 1000,
			v->handoff_p99_us / 1000);
	else
		fprintf(f, "  hand-off     0 releases taken over by a waiter: p50 n/a, p99 n/a\n");
	fprintf(f, "  acquire     ");
	print_acquire(f, res, "p50", 0.5);
	print_acquire(f, res, "p90", 0.9);
	print_acquire(f, res, "p99", 0.99);
	print_acquire(f, res, "max", 1);
	if (lb_wait_in_library(&cfg->wait, cfg->strategy))
		fprintf(f, ", retries each n/a (inside the library's calls)");
	else if (res->acquires)
		fprintf(f, ", %.2f retries each", (double)(res->attempts - res->acquires) /
			(double)res->acquires);
	else
		fprintf(f, ", retries each n/a");
	fprintf(f, ", %llu gave up", (unsigned long long)res->acquire_timeouts);
	if (res->censored.n)
		fprintf(f, ", %llu never entered (counted as long as they waited)",
			(unsigned long long)res->censored.n);
	fputc('\n', f);
	struct lb_lock_cost cost;
	lb_lock_cost_figures(res->lock_commands, res->lock_commands_known, res->cost_bound,
			     res->cost_bound_known, res->held_s, &cost);
	fprintf(f, "  lock cost    ");
	if (cost.rate_known)
		fprintf(f, "%.0f commands per second held", cost.per_held_s);
	else
		fprintf(f, "commands per second held n/a (%s)", res->lock_commands_known ?
			"no section was held" : "not counted");
	if (cost.bound_known)
		fprintf(f, "; a recipe of its shape sends at most %.0f\n", cost.bound_per_held_s);
	else
		fprintf(f, "; bound n/a (%s)\n", res->cost_bound_known ? "no section was held" :
			res->cost_bound_why);
	print_stampede(f, cfg, res);
	print_safety(f, cfg, res);
	int64_t sb_from, sb_to;
	int sb_server;
	bool primaries = cfg->sentinel || cfg->cluster || cfg->sentinel_urls || cfg->cluster_urls;
	if (primaries && lb_split_brain_window(res->sections, res->n_sections, res->events,
					       res->n_events, &sb_from, &sb_to, &sb_server))
		fprintf(f, "  split brain  the first primary and %s both granted the lock from %.3f s "
			   "to %.3f s: %.3f s\n", lb_topo_part_name(sb_server), (double)sb_from / 1e9,
			(double)sb_to / 1e9, (double)(sb_to - sb_from) / 1e9);
	else if (primaries && !lb_primaries_seen(res->events, res->n_events))
		fprintf(f, "  split brain  n/a: nothing shows which server granted a section (no "
			   "client recorded the server it took for the primary: a library keeps its "
			   "own connections)\n");
	else if (primaries)
		fprintf(f, "  split brain  none measured: the first primary granted no lock once "
			   "another server had granted one\n");
	int64_t demoted = lb_demoted_primary_ns(res->events, res->n_events,
						(int64_t)(res->elapsed_s * 1e9));
	if (primaries && demoted >= 0 && res->failovers_why[0])
		fprintf(f, "  demoted      n/a: %s\n", res->failovers_why);
	else if (primaries && demoted > 0)
		fprintf(f, "  demoted      clients used a demoted primary for %.1f s (they took for "
			   "the primary a server the Sentinels or the cluster had already replaced)\n",
			(double)demoted / 1e9);
	else if (primaries && demoted == 0)
		fprintf(f, "  demoted      no client used a demoted primary\n");
	else if (primaries)
		fprintf(f, "  demoted      n/a: nothing shows which server the clients took for the "
			   "primary\n");
	print_outcome(f, cfg, res, s, &cost, wait);
	print_barging(f, cfg, res);
}
