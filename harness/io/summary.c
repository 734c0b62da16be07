/*
 * summary.c - a run's summary (summary.csv's columns), built from the
 * run's result: each figure through its row of the figure table (figures.h),
 * each setting through its row of the run parameters (params.h).
 */
#include <math.h>
#include "adapter.h"
#include "esc.h"
#include "figures.h"
#include "results.h"
#include "scenario.h"
#include "shared.h"
#include "signals.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static void put(struct lb_summary *s, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void lb_summary_vput(struct lb_summary *s, const char *name, const char *why, const char *fmt,
		     va_list ap)
{
	if (s->n >= LB_SUMMARY_MAX_FIELDS) { /* a column the table gained: never silently */
		lb_errorf("internal error: more than %d summary columns, %s left out: raise "
			  "LB_SUMMARY_MAX_FIELDS (results.h)", LB_SUMMARY_MAX_FIELDS, name);
		return;
	}
	snprintf(s->name[s->n], sizeof(s->name[0]), "%s", name);
	vsnprintf(s->value[s->n], sizeof(s->value[0]), fmt, ap);
	if (why)
		snprintf(s->why[s->n], sizeof(s->why[0]), "%s", why);
	s->n++;
}

static void put(struct lb_summary *s, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lb_summary_vput(s, name, NULL, fmt, ap);
	va_end(ap);
}

/* A number through its row of the figure table (figures.h): the row's
 * decimals, or n/a when not measured. A value the row refuses is written as
 * it is, for the check at the end of lb_summary_build to report. */
static void put_num(struct lb_summary *s, const char *name, double v, bool known)
{
	const struct lb_figdef *f = lb_figdef_find(name);
	char buf[64];

	if (!f || lb_figdef_format(f, v, known, buf, sizeof(buf), NULL, 0) < 0)
		snprintf(buf, sizeof(buf), known ? "%.17g" : "n/a", v);
	put(s, name, "%s", buf);
}

/* Every column against its row of the figure table: a value outside its
 * range is a bug (a wrapped counter), never a figure. It is reported, written
 * n/a, and counted in s->invalid: the run then fails. */
static void validate(struct lb_summary *s)
{
	char why[200];

	for (size_t i = 0; i < s->n; i++) {
		const struct lb_figdef *f = lb_figdef_find(s->name[i]);
		if (f && lb_figdef_check(f, s->value[i], why, sizeof(why)) == 0)
			continue;
		lb_errorf("bug: summary.csv column %s: %s; written n/a, and the run fails", s->name[i],
			  f ? why : "no row in harness/params/figures.c (no unit, no range)");
		snprintf(s->value[i], sizeof(s->value[0]), "n/a");
		snprintf(s->why[i], sizeof(s->why[0]), "a bug in lockbench: the value measured was "
			 "outside the figure's range (%.100s)", f ? why : "no row in the figure table");
		s->invalid++;
	}
}

/* Why a column reads n/a, for summary.json: what the run did not have to
 * measure it with. */
static const char *na_reason(const char *name, const struct lb_run_result *res)
{
	static const struct { const char *prefix, *why; } fixed[] = {
		{ "acquire_", "no acquire call was made in this run" },
		{ "retries_per_acquire", "no acquire call succeeded in this run, or the library "
					 "retried inside its calls (--wait library): lockbench counts "
					 "its calls, not the library's attempts" },
		{ "handoff_", "no section was handed from a releaser to a waiting client" },
		{ "applied_writes", "the resource server did not answer when its counters were read" },
		{ "client_", "no client's memory could be read while it ran" },
		{ "arrival_spread_ms", "fewer than two clients made an acquire call" },
		{ "last_served_ms", "no client entered a section" },
		{ "fairness", "no client entered a section: nothing was shared to be fair about" },
		{ "gave_up_attempts", "no client gave up, or the library waited inside one call "
				      "(--wait library): lockbench counts its calls, not the library's "
				      "attempts" },
		{ "gave_up_after_ms", "no client gave up" },
		{ "lock_cmds_per_s", "the lock's servers' commands could not be counted" },
		{ "cpu_us_per_section", "no section was passed, or a client killed before it could "
					"say what its adapter cost hides lockbench's own part" },
		{ "adapter_cpu_us_per_section", "no section was passed, the strategy has no adapter, "
						"or a client was killed before it could say what its "
						"adapter cost" },
		{ "connections_per_client", "the servers' connection counts could not be read" },
		{ "split_brain_ms", "no section was entered on a second primary before the last one on "
				    "the first: no split brain to time" },
		{ "demoted_primary_ms", "no client recorded which server it took for the primary: a "
					"library keeps its own connections, and a server without "
					"Sentinels or a cluster has no primary to lose" },
		{ "recovered", "no holder died inside, or none died long enough before the end to tell "
			       "whether its lock came back" },
		{ "foreign_releases_client", "the strategy's release deletes without asking whose the "
					     "lock is: it cannot tell a foreign release" },
		{ "lost_updates", "the resource did not answer the final read of the counter" },
		{ "counter_final", "the resource did not answer the final read of the counter" },
		{ "canary_violations", "the clients ran on several hosts (run --hosts): a client's "
				       "canary flag is seen by its own host's clients alone" },
	};

	if (!strcmp(name, "demoted_primary_ms") && res->failovers_why[0])
		return res->failovers_why;
	if (!strcmp(name, "applied_writes") && res->resource_theirs)
		return "the resource is on your deployment (--resource-on-deployment, or a resource "
		       "URL of yours): a failover rolls its count back with the counter, so "
		       "lost_updates is the clients' acknowledged writes minus the final value";
	if (!strcmp(name, "cmds_per_section") || !strncmp(name, "lock_c", 6))
		return !res->lock_commands_known ? res->lock_commands_why :
		       res->n_sections == 0 ? "no section was entered in this run" :
		       "the lock was never held, so there is no rate per second held";
	if (!strncmp(name, "busy_", 5))
		return res->tries_why[0] ? res->tries_why : "not measured in this run";
	if (!strncmp(name, "cmds_per_s_", 11))
		return res->phase_why[0] ? res->phase_why : res->holding_s <= 0 ?
		       "no client held the lock: no time inside to divide by" :
		       "no client was ever outside a section: no time outside to divide by";
	if (!strcmp(name, "foreign_releases") || !strcmp(name, "foreign_unattributed") ||
	    !strcmp(name, "key_events"))
		return res->foreign_why[0] ? res->foreign_why :
		       "the lock servers' key events were not watched in this run";
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strncmp(name, fixed[i].prefix, strlen(fixed[i].prefix)))
			return fixed[i].why;
	return "not measured in this run";
}

static bool listed(const char *list, const char *item);

/* The reason of each n/a that has none yet (validate() gives its own). */
static void explain_na(struct lb_summary *s, const struct lb_run_result *res)
{
	const char *absent = lb_summary_get(s, "figures_absent");

	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->value[i], "n/a") && !s->why[i][0])
			snprintf(s->why[i], sizeof(s->why[0]), "%s",
				 !strcmp(s->name[i], "split_brain_ms") && !listed(absent, s->name[i]) ?
				 "no client said which server granted its lock (only lockbench's "
				 "recipes on a Sentinel or cluster topology do): a split brain could "
				 "not be seen" : na_reason(s->name[i], res));
}

/* Text for a CSV value: commas become semicolons. */
static void put_text(struct lb_summary *s, const char *name, const char *text)
{
	char buf[sizeof(s->value[0])];

	snprintf(buf, sizeof(buf), "%s", text);
	for (char *p = buf; *p; p++)
		if (*p == ',')
			*p = ';';
	put(s, name, "%s", buf);
}

const char *lb_summary_get(const struct lb_summary *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return s->value[i];
	return NULL;
}

/* Is @item one of the ;-separated @list? */
static bool listed(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = list; p && (p = strstr(p, item)); p += n)
		if ((p == list || p[-1] == ';') && (p[n] == ';' || !p[n]))
			return true;
	return false;
}

const char *lb_summary_value(const void *summary, const char *name)
{
	static char marked[2 * sizeof(((struct lb_summary *)0)->value[0]) + 4];
	const char *v = lb_summary_get(summary, name), *high = NULL;
	size_t n = strlen(name);

	if (v && !strcmp(v, "n/a"))
		return listed(lb_summary_get(summary, "figures_absent"), name) ? "none" : v;
	if (v && n > 3 && !strncmp(name, "acquire_", 8) && !strcmp(name + n - 3, "_us")) {
		char col[64]; /* acquire_p99_us: its upper end in acquire_p99_high_us */
		snprintf(col, sizeof(col), "%.*s_high_us", (int)(n - 3), name);
		high = lb_summary_get(summary, col);
	}
	if (!high || !strcmp(high, v) || !strcmp(high, "n/a"))
		return v;
	if (!strcmp(high, "inf"))
		snprintf(marked, sizeof(marked), ">=%s", v);
	else
		snprintf(marked, sizeof(marked), "[%s,%s]", v, high);
	return marked;
}

double lb_summary_num(const struct lb_summary *s, const char *name, double dflt)
{
	const char *v = lb_summary_get(s, name);
	return v ? strtod(v, NULL) : dflt;
}

/* A run parameter's column (params.h: its row formats it). */
static void put_param(struct lb_summary *s, const struct lb_run_cfg *cfg, const char *column)
{
	char buf[sizeof(s->value[0])];

	lb_param_column_text(lb_param_by_column(column), cfg, buf, sizeof(buf));
	put(s, column, "%s", buf);
}

/* The columns of the run parameters added since: after every other, in
 * table order (figures.c lists them there too). */
static void put_newer_params(struct lb_summary *s, const struct lb_run_cfg *cfg)
{
	size_t n;
	const struct lb_param *t = lb_params(&n);

	for (size_t i = 0; i < n; i++)
		if (t[i].column && !lb_summary_get(s, t[i].column))
			put_param(s, cfg, t[i].column);
}

bool lb_primaries_seen(const struct lb_event *ev, size_t n_ev)
{
	for (size_t i = 0; i < n_ev; i++)
		if (ev[i].kind == LB_EV_PRIMARY_SEEN)
			return true;
	return false;
}

/* The part client @c took for the primary at @t (its latest primary-seen
 * event before), or -1. */
static int primary_at(const struct lb_event *ev, size_t n_ev, int c, int64_t t)
{
	int part = -1;

	for (size_t i = 0; i < n_ev && ev[i].t_ns <= t; i++)
		if (ev[i].kind == LB_EV_PRIMARY_SEEN && ev[i].client == c)
			part = (int)ev[i].value;
	return part;
}

bool lb_split_brain_window(const struct lb_section *sec, size_t n, const struct lb_event *ev,
			   size_t n_ev, int64_t *from, int64_t *to, int *server)
{
	int64_t first = -1, last = -1, theirs = -1;

	/* on the user's deployment (servers by port, topology.h): the first
	 * server any client took for the primary */
	for (size_t i = 0; i < n_ev && theirs < 0; i++)
		if (ev[i].kind == LB_EV_PRIMARY_SEEN && ev[i].value >= LB_PART_PORT0)
			theirs = ev[i].value;
	for (size_t i = 0; i < n; i++) { /* sorted by enter */
		int part = primary_at(ev, n_ev, sec[i].client, sec[i].enter_ns);
		bool first_primary = part == LB_PART_PRIMARY || part == LB_CLUSTER_PART0 ||
				     (theirs >= 0 && part == theirs);
		if (part >= 0 && !first_primary && first < 0) {
			first = sec[i].enter_ns;
			*server = part;
		}
		if (first_primary && first >= 0)
			last = sec[i].enter_ns;
	}
	if (first < 0 || last <= first)
		return false;
	*from = first;
	*to = last;
	return true;
}

/* Is @part no longer the primary at @t? Once a switch names another server
 * (+switch-master), or the server is told to follow one (+convert-to-slave)
 * and no switch named it since. */
static bool demoted_at(const struct lb_event *ev, size_t n_ev, int64_t part, int64_t t)
{
	int64_t switch_t = -1, switch_to = -1, demote_t = -1;

	for (size_t i = 0; i < n_ev && ev[i].t_ns <= t; i++) {
		if (ev[i].kind == LB_EV_SWITCH_MASTER) {
			switch_t = ev[i].t_ns;
			switch_to = ev[i].value;
		} else if (ev[i].kind == LB_EV_DEMOTE && ev[i].value == part) {
			demote_t = ev[i].t_ns;
		}
	}
	return (switch_t >= 0 && switch_to != part) || demote_t > switch_t;
}

struct span {
	int64_t from, to;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->from < y->from ? -1 : x->from > y->from;
}

/* Client @c's use of @part from @from to @to, cut at every switch and
 * demotion: the pieces in which @part was no longer the primary, into @out. */
static size_t demoted_pieces(const struct lb_event *ev, size_t n_ev, int64_t part, int64_t from,
			     int64_t to, struct span *out)
{
	size_t k = 0;
	int64_t a = from;

	while (a < to) {
		int64_t b = to; /* the next switch or demotion after a, or the end */
		for (size_t i = 0; i < n_ev; i++)
			if ((ev[i].kind == LB_EV_SWITCH_MASTER || ev[i].kind == LB_EV_DEMOTE) &&
			    ev[i].t_ns > a && ev[i].t_ns < b)
				b = ev[i].t_ns;
		if (demoted_at(ev, n_ev, part, a)) {
			if (k && out[k - 1].to == a)
				out[k - 1].to = b;
			else
				out[k++] = (struct span){ a, b };
		}
		a = b;
	}
	return k;
}

int64_t lb_demoted_primary_ns(const struct lb_event *ev, size_t n_ev, int64_t end_ns)
{
	size_t seen = 0, cuts = 1, n = 0;

	for (size_t i = 0; i < n_ev; i++) {
		seen += ev[i].kind == LB_EV_PRIMARY_SEEN;
		cuts += ev[i].kind == LB_EV_SWITCH_MASTER || ev[i].kind == LB_EV_DEMOTE;
	}
	if (!seen)
		return -1; /* nothing shows which server a client took for the primary */
	struct span *sp = calloc(seen * cuts, sizeof(*sp));
	if (!sp)
		return -1;
	for (size_t i = 0; i < n_ev; i++) {
		if (ev[i].kind != LB_EV_PRIMARY_SEEN)
			continue;
		int64_t until = end_ns; /* the client's next primary, or the run's end */
		for (size_t j = i + 1; j < n_ev; j++)
			if (ev[j].kind == LB_EV_PRIMARY_SEEN && ev[j].client == ev[i].client) {
				until = ev[j].t_ns;
				break;
			}
		if (until > end_ns)
			until = end_ns;
		n += demoted_pieces(ev, n_ev, ev[i].value, ev[i].t_ns, until, sp + n);
	}
	qsort(sp, n, sizeof(*sp), span_cmp);
	int64_t total = 0, reach = INT64_MIN; /* the union: any client on a demoted primary */
	for (size_t i = 0; i < n; i++) {
		int64_t a = sp[i].from > reach ? sp[i].from : reach;
		if (sp[i].to > a)
			total += sp[i].to - a;
		if (sp[i].to > reach)
			reach = sp[i].to;
	}
	free(sp);
	return total;
}

double lb_acquire_quantile_us(const struct lb_run_result *res, double q, bool *lower)
{
	double low, high;

	lb_hist_quantile_interval_us(&res->latency, &res->censored, q, &low, &high);
	*lower = high != low;
	return low;
}

/* An acquire figure for summary.csv: a number, the lower end of where the
 * figure lies (acquire_lower_bounds says which are not exact, and its
 * acquire_*_high_us column the upper end). */
static void put_acquire(struct lb_summary *s, const struct lb_run_result *res, const char *name,
			double q, bool known)
{
	bool lower;
	put_num(s, name, lb_acquire_quantile_us(res, q, &lower), known);
}

static const struct { const char *tag, *high; double q; } acquire_fig[] = {
	{ "p50", "acquire_p50_high_us", 0.5 }, { "p90", "acquire_p90_high_us", 0.9 },
	{ "p99", "acquire_p99_high_us", 0.99 }, { "p999", "acquire_p999_high_us", 0.999 },
	{ "max", "acquire_max_high_us", 1 },
};

/* The acquire figures that are not exact, "p99;max", or "-". */
static void lower_bounds(const struct lb_run_result *res, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(acquire_fig) / sizeof(acquire_fig[0]) && n < len; i++) {
		bool lower;
		lb_acquire_quantile_us(res, acquire_fig[i].q, &lower);
		if (lower)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ";" : "", acquire_fig[i].tag);
	}
	if (!buf[0])
		snprintf(buf, len, "-");
}

/* Each acquire figure's upper end: "inf" when a cut-off wait holds its rank. */
static void put_acquire_highs(struct lb_summary *s, const struct lb_run_result *res)
{
	bool acquired = res->latency.n + res->censored.n > 0;

	for (size_t i = 0; i < sizeof(acquire_fig) / sizeof(acquire_fig[0]); i++) {
		double low, high;
		lb_hist_quantile_interval_us(&res->latency, &res->censored, acquire_fig[i].q, &low,
					     &high);
		put_num(s, acquire_fig[i].high, high, acquired);
	}
}

/* The columns every run writes first: the load, then the figures. */
static void put_required(struct lb_summary *s, const struct lb_run_cfg *cfg,
			 const struct lb_run_result *res)
{
	const struct lb_verdict *v = &res->verdict;

	put(s, "strategy", "%s", cfg->strategy->name);
	put(s, "scenario", "%s", cfg->scenario_name);
	put_param(s, cfg, "clients");
	put_param(s, cfg, "duration_s");
	put_param(s, cfg, "ttl_ms");
	put_param(s, cfg, "hold_ms");
	put(s, "sections", "%llu", (unsigned long long)v->sections);
	bool acquired = res->latency.n + res->censored.n > 0; /* no call: no latency to tell */
	put_num(s, "throughput_per_s", res->throughput_per_s, true);
	put_acquire(s, res, "acquire_p50_us", 0.50, acquired);
	put_acquire(s, res, "acquire_p99_us", 0.99, acquired);
	put_acquire(s, res, "acquire_max_us", 1, acquired);
	put(s, "acquire_timeouts", "%llu", (unsigned long long)res->acquire_timeouts);
	put(s, "overlaps", "%llu", (unsigned long long)v->overlaps);
	put_num(s, "overlap_ms", v->overlap_ms, true);
	put(s, "max_holders", "%d", v->max_holders);
	if (cfg->work == LB_WORK_COUNTER && !res->counter_known) {
		put(s, "lost_updates", "n/a");
		put(s, "lost_updates_max", "n/a");
	} else {
		put(s, "lost_updates", "%lld", res->lost_updates);
		put(s, "lost_updates_max", "%lld", res->lost_updates_max);
	}
	if (v->foreign_source == LB_FOREIGN_NA) /* a library's release, servers not watched */
		put(s, "foreign_releases", "n/a");
	else
		put(s, "foreign_releases", "%llu", (unsigned long long)v->foreign_releases);
	put(s, "lost_leases", "%llu", (unsigned long long)v->lost_leases);
	if (v->leases_lapsed_known)
		put(s, "leases_lapsed", "%llu", (unsigned long long)v->leases_lapsed);
	else
		put(s, "leases_lapsed", "n/a");
	if (v->notices_known)
		put(s, "notices_missed", "%llu", (unsigned long long)v->notices_missed);
	else
		put(s, "notices_missed", "n/a");
	put_num(s, "notice_lag_p50_ms", v->notice_lag_p50_ms, v->notices_known && v->notices_told);
	put_num(s, "notice_lag_max_ms", v->notice_lag_max_ms, v->notices_known && v->notices_told);
	put_num(s, "orphan_ms", v->orphan_ms, true);
	put(s, "recovered", "%s", lb_recovered_name(v->recovered));
	put_num(s, "cmds_per_section", res->cmds_per_section,
		res->lock_commands_known && res->n_sections > 0);
	put_num(s, "fairness", v->fairness, v->sections > 0);
}

/* The rest of the load (beyond the required columns). */
static void put_settings(struct lb_summary *s, const struct lb_run_cfg *cfg)
{
	put_param(s, cfg, "keys");
	put_param(s, cfg, "nodes");
	put_param(s, cfg, "wait");
	put_param(s, cfg, "work");
	put_param(s, cfg, "think_ms");
	put_param(s, cfg, "seed");
	char variant[200];
	lb_param_variant_text(cfg, variant, sizeof(variant));
	if (cfg->adapter_args[0])
		snprintf(variant + strlen(variant), sizeof(variant) - strlen(variant), "%sadapter-args=%s",
			 variant[0] ? ";" : "", cfg->adapter_args);
	for (char *p = variant; *p; p++) /* a CSV value */
		if (*p == ',')
			*p = ';';
	put(s, "variant", "%s", variant[0] ? variant : "-");
	/* the version the library said it is (its own metadata), "-" for a recipe */
	const char *ran = lb_adapter_ran_version(cfg->strategy);
	put(s, "library_version", "%s", ran ? ran : "-");
}

static void put_counts(struct lb_summary *s, const struct lb_run_cfg *cfg,
		       const struct lb_run_result *res)
{
	const struct lb_verdict *v = &res->verdict;
	bool acquired = res->latency.n + res->censored.n > 0;

	put_num(s, "elapsed_s", res->elapsed_s, true);
	put_acquire(s, res, "acquire_p90_us", 0.90, acquired);
	put_acquire(s, res, "acquire_p999_us", 0.999, acquired);
	put_num(s, "retries_per_acquire",
		res->acquires ? (double)(res->attempts - res->acquires) / (double)res->acquires : 0,
		res->acquires > 0 && !lb_wait_in_library(&cfg->wait, cfg->strategy));
	if (res->n_remote) /* run --hosts: no canary sees across hosts */
		put(s, "canary_violations", "n/a");
	else
		put(s, "canary_violations", "%llu", (unsigned long long)res->canary_violations);
	put(s, "counter_writes", "%llu", (unsigned long long)res->counter_writes);
	if (cfg->work == LB_WORK_COUNTER && !res->counter_known)
		put(s, "counter_final", "n/a"); /* the resource did not answer the final read */
	else
		put(s, "counter_final", "%lld", res->counter_final);
	if (res->applied_known)
		put(s, "applied_writes", "%llu", (unsigned long long)res->applied_writes);
	else
		put(s, "applied_writes", "n/a");
	put(s, "holder_deaths", "%llu", (unsigned long long)v->holder_deaths);
	put(s, "interrupted", "%s", res->interrupted ? "yes" : "no");
	put(s, "stop_signal", "%s", !res->interrupted ? "-" : lb_stop_signal() == SIGTERM ? "SIGTERM" :
	    "SIGINT");
	put(s, "acquire_errors", "%llu", (unsigned long long)res->acquire_errors);
	put_num(s, "busy_answers", (double)res->busy.busy, !res->tries_full);
	put_num(s, "busy_while_down", (double)res->busy.down, res->tries_known);
	put(s, "uncertain_writes", "%llu", (unsigned long long)res->uncertain_writes);
	put(s, "indeterminate_ops", "%llu", (unsigned long long)res->indeterminate_ops);
	put_num(s, "held_no_holder_ms", v->held_no_holder_ms, v->leases_lapsed_known);
	put_num(s, "held_no_holder_max_ms", v->held_no_holder_max_ms, v->leases_lapsed_known);
	put(s, "stale_writes_rejected", "%llu", (unsigned long long)res->stale_writes_rejected);
	put(s, "writes_aborted", "%llu", (unsigned long long)res->writes_aborted);
	put(s, "handoffs", "%llu", (unsigned long long)v->handoffs);
	put_num(s, "handoff_p50_us", v->handoff_p50_us, v->handoffs > 0); /* none: nothing to time */
	put_num(s, "handoff_p99_us", v->handoff_p99_us, v->handoffs > 0);
	put_num(s, "client_rss_kb", (double)res->client_rss_kb, res->client_rss_kb > 0);
	put_num(s, "client_pss_kb", (double)res->client_pss_kb, res->client_rss_kb > 0);
	put_num(s, "client_private_kb", (double)res->client_private_kb, res->client_rss_kb > 0);
	put_num(s, "adapter_pss_kb", (double)res->adapter_pss_kb, res->adapter_pss_kb > 0);
	double secs = (double)v->sections;
	put_num(s, "cpu_us_per_section", (double)res->harness_cpu_us / secs,
		res->harness_cpu_known && v->sections > 0);
	put_num(s, "adapter_cpu_us_per_section", (double)res->adapter_cpu_us / secs,
		res->adapter_cpu_known && v->sections > 0);
	put_num(s, "arrival_spread_ms", (double)res->arrival_spread_ns / 1e6,
		res->served_clients + res->gave_up_clients + res->still_waiting_clients > 1);
	put_num(s, "last_served_ms", (double)res->last_served_ns / 1e6, res->last_served_ns >= 0);
	put(s, "served_clients", "%llu", (unsigned long long)res->served_clients);
	put(s, "gave_up_clients", "%llu", (unsigned long long)res->gave_up_clients);
	put(s, "still_waiting_clients", "%llu", (unsigned long long)res->still_waiting_clients);
	put_num(s, "gave_up_attempts", res->gave_up_attempts, !isnan(res->gave_up_attempts));
	put_num(s, "gave_up_attempts_max", (double)res->gave_up_attempts_max,
		!isnan(res->gave_up_attempts));
	put_num(s, "gave_up_after_ms", res->gave_up_after_ms, !isnan(res->gave_up_after_ms));
	put_num(s, "lock_cmds_per_s", (double)res->lock_commands / res->elapsed_s,
		res->lock_commands_known && res->elapsed_s > 0);
	put_num(s, "connections_per_client", (double)res->server_connections / (double)cfg->clients,
		res->server_connections > 0);
	int64_t sb_from, sb_to;
	int sb_server;
	if (lb_split_brain_window(res->sections, res->n_sections, res->events, res->n_events,
				  &sb_from, &sb_to, &sb_server))
		put_num(s, "split_brain_ms", (double)(sb_to - sb_from) / 1e6, true);
	else
		put(s, "split_brain_ms", "n/a");
	int64_t demoted = lb_demoted_primary_ns(res->events, res->n_events,
						(int64_t)(res->elapsed_s * 1e9));
	put_num(s, "demoted_primary_ms", (double)demoted / 1e6, demoted >= 0 &&
		!res->failovers_why[0]);
}

void lb_figures_absent(const struct lb_summary *s, const struct lb_event *ev, size_t n_ev,
		       char *buf, size_t len)
{
	bool seen = false; /* a client said which server granted: a split brain shows */
	size_t used = 0;

	for (size_t i = 0; i < n_ev && !seen; i++)
		seen = ev[i].kind == LB_EV_PRIMARY_SEEN;
	buf[0] = '\0';
	for (size_t i = 0; i < s->n; i++) {
		const struct lb_figdef *f = lb_figdef_find(s->name[i]);
		const char *name = s->name[i], *count = !strncmp(name, "handoff_", 8) ? "handoffs" :
					      !strncmp(name, "gave_up_", 8) ? "gave_up_clients" : NULL;
		const char *c = count ? lb_summary_get(s, count) : NULL;
		if (!f || !f->absent || strcmp(s->value[i], "n/a"))
			continue;
		if (count ? c && !strcmp(c, "0") : seen)
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
						 used ? ";" : "", name);
	}
	if (!buf[0] || used >= len)
		snprintf(buf, len, "-");
}

/* The lock's cost, the outcome, the foreign releases' source, the censored waits. */
static void put_outcome(struct lb_summary *s, const struct lb_run_cfg *cfg,
			const struct lb_run_result *res)
{
	const struct lb_verdict *v = &res->verdict;
	char bounds[64], absent[200];

	struct lb_lock_cost cost;
	lb_lock_cost_figures(res->lock_commands, res->lock_commands_known, res->cost_bound,
			     res->cost_bound_known, res->held_s, &cost);
	put(s, "attempts", "%llu", (unsigned long long)res->attempts);
	put(s, "acquires", "%llu", (unsigned long long)res->acquires);
	put_num(s, "lock_commands", (double)res->lock_commands, res->lock_commands_known);
	put_text(s, "lock_commands_note", res->lock_commands_known ? "-" : res->lock_commands_why);
	put_num(s, "lock_cmds_per_held_s", cost.per_held_s, cost.rate_known);
	put_num(s, "lock_cmds_bound_per_s", cost.bound_per_held_s, cost.bound_known);
	put_num(s, "cmds_per_s_holding", res->holding_s > 0 ? (double)res->cmds_holding / res->holding_s :
		0, res->phase_known && res->holding_s > 0);
	put_num(s, "cmds_per_s_waiting", res->waiting_s > 0 ? (double)res->cmds_waiting / res->waiting_s :
		0, res->phase_known && res->waiting_s > 0);
	int expected = cfg->scenario ? lb_scenario_expected(cfg->scenario, cfg->strategy->name) : -1;
	put(s, "expected", "%s", expected >= 0 ? lb_class_name((enum lb_class)expected) : "-");
	put(s, "observed", "%s", lb_class_name(res->observed));
	char why[sizeof(res->observed_why)];
	snprintf(why, sizeof(why), "%s", res->observed_why);
	for (char *p = why; *p; p++) /* a CSV value: no commas */
		if (*p == ',')
			*p = ';';
	put(s, "observed_why", "%s", why);
	put(s, "faults_unfired", "%s", res->unfired[0] ? res->unfired : "-");
	/* foreign releases: from where, the releases' own count beside the servers' */
	put(s, "foreign_source", "%s", lb_foreign_source_name(v->foreign_source));
	if (cfg->strategy->blind_release)
		put(s, "foreign_releases_client", "n/a");
	else
		put(s, "foreign_releases_client", "%llu", (unsigned long long)v->foreign_client);
	if (v->foreign_source == LB_FOREIGN_SERVER) {
		put(s, "foreign_unattributed", "%llu", (unsigned long long)v->foreign_unattributed);
		put(s, "key_events", "%zu", res->n_key_events);
	} else {
		put(s, "foreign_unattributed", "n/a");
		put(s, "key_events", "n/a");
	}
	/* waits that never entered are in the acquire figures at their length so far */
	put(s, "acquire_censored", "%llu", (unsigned long long)res->censored.n);
	put(s, "events_dropped", "%llu", (unsigned long long)res->events_dropped);
	lower_bounds(res, bounds, sizeof(bounds));
	put(s, "acquire_lower_bounds", "%s", bounds);
	put_acquire_highs(s, res);
	lb_figures_absent(s, res->events, res->n_events, absent, sizeof(absent));
	put(s, "figures_absent", "%s", absent);
}

void lb_summary_build(const struct lb_run_cfg *cfg, const struct lb_run_result *res,
		      struct lb_summary *s)
{
	memset(s, 0, sizeof(*s));
	put_required(s, cfg, res);
	put_settings(s, cfg);
	put_counts(s, cfg, res);
	put_outcome(s, cfg, res);
	put_newer_params(s, cfg);
	validate(s);
	explain_na(s, res);
}

/* Is @v a JSON number (RFC 8259: -?int frac? exp?) as it is? */
static bool json_number(const char *v)
{
	const char *p = v + (*v == '-');

	if (!isdigit((unsigned char)*p) || (*p == '0' && isdigit((unsigned char)p[1])))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p += p[1] == '+' || p[1] == '-' ? 2 : 1;
		if (!isdigit((unsigned char)*p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return *p == '\0';
}

void lb_summary_json(FILE *f, const struct lb_summary *s)
{
	fputs("{\n  \"format\": \"lockbench-summary/1\",\n  \"figures\": {", f);
	for (size_t i = 0; i < s->n; i++) {
		const struct lb_figdef *d = lb_figdef_find(s->name[i]);
		bool na = !strcmp(s->value[i], "n/a");
		fputs(i ? ",\n    " : "\n    ", f);
		lb_esc_fprintf(f, LB_LANG_JSON, "%s", s->name[i]);
		fputs(": {\"value\": ", f);
		char v[sizeof(s->value[0])]; /* as summary.csv holds it: a control byte a space */
		snprintf(v, sizeof(v), "%s", s->value[i]);
		for (char *p = v; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = ' ';
		bool unbounded = d && d->inf && !strcmp(v, "inf");
		if (na || unbounded)
			fputs("null", f);
		else if (d && d->kind != LB_FD_TEXT && json_number(v))
			fputs(v, f);
		else
			lb_esc_fprintf(f, LB_LANG_JSON, "%s", v);
		if (d && d->unit[0])
			lb_esc_fprintf(f, LB_LANG_JSON, ", \"unit\": %s", d->unit);
		if (unbounded)
			fputs(", \"unbounded\": true", f);
		if (na && d && d->absent && listed(lb_summary_get(s, "figures_absent"), s->name[i]))
			lb_esc_fprintf(f, LB_LANG_JSON, ", \"absent\": %s", d->absent);
		if (na)
			lb_esc_fprintf(f, LB_LANG_JSON, ", \"why\": %s", s->why[i]);
		fputc('}', f);
	}
	fputs("\n  }\n}\n", f);
}
