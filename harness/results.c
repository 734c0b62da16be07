#include "figures.h"
#include "esc.h"
#include "outfile.h"
#include "params.h"
#include "results.h"
#include "scenario.h"
#include "shared.h"
#include "signals.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static void put(struct lb_summary *s, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void put(struct lb_summary *s, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (s->n >= LB_SUMMARY_MAX_FIELDS)
		return;
	snprintf(s->name[s->n], sizeof(s->name[0]), "%s", name);
	va_start(ap, fmt);
	vsnprintf(s->value[s->n], sizeof(s->value[0]), fmt, ap);
	va_end(ap);
	s->n++;
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
			  f ? why : "no row in harness/figures.c (no unit, no range)");
		snprintf(s->value[i], sizeof(s->value[0]), "n/a");
		s->invalid++;
	}
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
	int64_t first = -1, last = -1;

	for (size_t i = 0; i < n; i++) { /* sorted by enter */
		int part = primary_at(ev, n_ev, sec[i].client, sec[i].enter_ns);
		bool first_primary = part == LB_PART_PRIMARY || part == LB_CLUSTER_PART0;
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

double lb_acquire_quantile_us(const struct lb_run_result *res, double q, bool *lower)
{
	return lb_hist_quantile_censored_us(&res->latency, &res->censored, q, lower);
}

/* An acquire figure for summary.csv: a number (acquire_lower_bounds says
 * which are lower bounds). */
static void put_acquire(struct lb_summary *s, const struct lb_run_result *res, const char *name,
			double q, bool known)
{
	bool lower;
	put_num(s, name, lb_acquire_quantile_us(res, q, &lower), known);
}

/* The acquire figures that are lower bounds, "p99;max", or "-". */
static void lower_bounds(const struct lb_run_result *res, char *buf, size_t len)
{
	static const struct { const char *tag; double q; } fig[] = {
		{ "p50", 0.5 }, { "p90", 0.9 }, { "p99", 0.99 }, { "p999", 0.999 }, { "max", 1 },
	};
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(fig) / sizeof(fig[0]) && n < len; i++) {
		bool lower;
		lb_acquire_quantile_us(res, fig[i].q, &lower);
		if (lower)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ";" : "", fig[i].tag);
	}
	if (!buf[0])
		snprintf(buf, len, "-");
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
	put(s, "lost_updates", "%lld", res->lost_updates);
	put(s, "lost_updates_max", "%lld", res->lost_updates_max);
	if (v->foreign_source == LB_FOREIGN_NA) /* a library's release, servers not watched */
		put(s, "foreign_releases", "n/a");
	else
		put(s, "foreign_releases", "%llu", (unsigned long long)v->foreign_releases);
	put(s, "lost_leases", "%llu", (unsigned long long)v->lost_leases);
	put_num(s, "orphan_ms", v->orphan_ms, true);
	put(s, "recovered", "%s", lb_recovered_name(v->recovered));
	put_num(s, "cmds_per_section", res->cmds_per_section,
		res->lock_commands_known && res->n_sections > 0);
	put_num(s, "fairness", v->fairness, true);
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
		res->acquires > 0);
	put(s, "canary_violations", "%llu", (unsigned long long)res->canary_violations);
	put(s, "counter_writes", "%llu", (unsigned long long)res->counter_writes);
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
	put(s, "uncertain_writes", "%llu", (unsigned long long)res->uncertain_writes);
	put(s, "stale_writes_rejected", "%llu", (unsigned long long)res->stale_writes_rejected);
	put(s, "writes_aborted", "%llu", (unsigned long long)res->writes_aborted);
	put(s, "handoffs", "%llu", (unsigned long long)v->handoffs);
	put_num(s, "handoff_p50_us", v->handoff_p50_us, v->handoffs > 0); /* none: nothing to time */
	put_num(s, "handoff_p99_us", v->handoff_p99_us, v->handoffs > 0);
	put_num(s, "client_rss_kb", (double)res->client_rss_kb, res->client_rss_kb > 0);
	put_num(s, "connections_per_client", (double)res->server_connections / (double)cfg->clients,
		res->server_connections > 0);
	int64_t sb_from, sb_to;
	int sb_server;
	if (lb_split_brain_window(res->sections, res->n_sections, res->events, res->n_events,
				  &sb_from, &sb_to, &sb_server))
		put_num(s, "split_brain_ms", (double)(sb_to - sb_from) / 1e6, true);
	else
		put(s, "split_brain_ms", "n/a");
}

/* The lock's cost, the outcome, the foreign releases' source, the censored waits. */
static void put_outcome(struct lb_summary *s, const struct lb_run_cfg *cfg,
			const struct lb_run_result *res)
{
	const struct lb_verdict *v = &res->verdict;
	char bounds[64];

	struct lb_lock_cost cost;
	lb_lock_cost_figures(res->lock_commands, res->lock_commands_known, res->cost_bound,
			     res->cost_bound_known, res->held_s, &cost);
	put(s, "attempts", "%llu", (unsigned long long)res->attempts);
	put(s, "acquires", "%llu", (unsigned long long)res->acquires);
	put_num(s, "lock_commands", (double)res->lock_commands, res->lock_commands_known);
	put_text(s, "lock_commands_note", res->lock_commands_known ? "-" : res->lock_commands_why);
	put_num(s, "lock_cmds_per_held_s", cost.per_held_s, cost.rate_known);
	put_num(s, "lock_cmds_bound_per_s", cost.bound_per_held_s, cost.bound_known);
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
}

int lb_results_prepare_dir(const char *dir)
{
	char path[PATH_MAX + 32];
	FILE *f;

	if (strlen(dir) > 3000) { /* a directory of LB_DIR_MAX and what lockbench adds below */
		lb_errorf("output directory path too long (%zu bytes): %.100s...", strlen(dir), dir);
		return LB_EINVAL;
	}
	strcpy(path, dir);
	for (char *p = path + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(path, 0755) < 0 && errno != EEXIST)
				goto fail;
			*p = '/';
		}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		goto fail;
	snprintf(path, sizeof(path), "%s/.lockbench-probe", dir);
	f = fopen(path, "w");
	if (!f)
		goto fail;
	fclose(f);
	unlink(path);
	return 0;
fail:
	lb_errorf("cannot write to output directory %s: %s", dir, strerror(errno));
	return LB_ESYS;
}

static void write_history(FILE *f, const struct lb_run_result *res)
{
	fprintf(f, "%s\n", LB_HISTORY_HEADER);
	for (size_t i = 0; i < res->n_sections; i++) {
		const struct lb_section *s = &res->sections[i];
		fprintf(f, "%d,%u,%lld,%lld,%lld,", s->client, s->seq,
			(long long)s->acquire_start_ns, (long long)s->enter_ns,
			(long long)s->exit_ns);
		if (s->release_ns >= 0)
			fprintf(f, "%lld", (long long)s->release_ns);
		fprintf(f, ",%s,", lb_outcome_name(s->outcome));
		if (s->fence >= 0)
			fprintf(f, "%lld", (long long)s->fence);
		fputc(',', f); /* nodes: "0+1+2", empty when not known */
		for (int b = 0, first = 1; b < 32; b++)
			if (s->nodes >> b & 1) {
				fprintf(f, "%s%d", first ? "" : "+", b);
				first = 0;
			}
		/* lease_end_ns: empty when the lock could not tell, never without a TTL */
		if (s->lease_end_ns == LB_LEASE_NEVER)
			fprintf(f, ",never");
		else if (lb_lease_known(s))
			fprintf(f, ",%lld", (long long)s->lease_end_ns);
		else
			fputc(',', f);
		fputc(',', f); /* token: its hash, empty when not known */
		if (s->token)
			fprintf(f, "%llx", (unsigned long long)s->token);
		fputc('\n', f);
	}
}

static void write_waiters(FILE *f, const struct lb_run_result *res)
{
	fprintf(f, "%s\n", LB_WAITERS_HEADER);
	for (size_t i = 0; i < res->n_waiters; i++) {
		const struct lb_waiter *w = &res->waiters[i];
		fprintf(f, "%d,%u,%lld,", w->client, w->calls, (long long)w->start_ns);
		if (w->last_try_ns >= 0)
			fprintf(f, "%lld", (long long)w->last_try_ns);
		fprintf(f, ",%lld,%s\n", (long long)w->end_ns, lb_wait_end_name(w->ended));
	}
}

static void write_latency(FILE *f, const struct lb_hist *h)
{
	uint64_t low, high;

	fprintf(f, "bucket_low_us,bucket_high_us,count\n");
	for (size_t i = 0; i < LB_HIST_BUCKETS; i++)
		if (h->counts[i]) {
			lb_hist_bucket_range(i, &low, &high);
			fprintf(f, "%llu,%llu,%llu\n", (unsigned long long)low,
				(unsigned long long)high, (unsigned long long)h->counts[i]);
		}
}

void lb_events_write(FILE *f, const struct lb_run_result *res)
{
	fprintf(f, "t_ns,event,client,node,value\n");
	for (size_t i = 0; i < res->n_events; i++) {
		const struct lb_event *e = &res->events[i];
		fprintf(f, "%lld,%s,", (long long)e->t_ns, lb_event_name(e->kind));
		if (e->client >= 0)
			fprintf(f, "%d", e->client);
		fputc(',', f);
		if (e->node >= 0)
			fprintf(f, "%d", e->node);
		fprintf(f, ",%lld\n", (long long)e->value);
	}
}

void lb_key_events_write(FILE *f, const struct lb_run_result *res)
{
	fprintf(f, "%s\n", LB_KEY_EVENTS_HEADER);
	for (size_t i = 0; i < res->n_key_events; i++) {
		const struct lb_key_event *e = &res->key_events[i];
		fprintf(f, "%lld,%d,%d,%d,", (long long)e->t_ns, e->server, e->port, e->node);
		if (e->key >= 0)
			fprintf(f, "%d", e->key);
		fprintf(f, ",%s,", lb_key_kind_name(e->kind));
		if (e->kind == LB_KEY_SET && e->value)
			fprintf(f, "%llx", (unsigned long long)e->value);
		fputc('\n', f);
	}
}

static void cpu_model(char *buf, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10)) {
			char *c = strchr(line, ':');
			if (c)
				snprintf(buf, len, "%s", c + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	fclose(f);
}

int lb_meta_write(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *res)
{
	struct utsname u;
	char cpu[128], when[32];
	time_t now = time(NULL);

	uname(&u);
	cpu_model(cpu, sizeof(cpu));
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	lb_esc_fprintf(f, LB_LANG_TERM, "command: %s\n", cfg->cmdline);
	lb_esc_fprintf(f, LB_LANG_TERM, "seed: %llu\n", (unsigned long long)cfg->seed);
	lb_esc_fprintf(f, LB_LANG_TERM, "lockbench: %s\n", LOCKBENCH_VERSION);
	lb_esc_fprintf(f, LB_LANG_TERM, "redis: %s\n", res->redis_version[0] ? res->redis_version : "unknown");
	if (cfg->sentinel_urls)
		lb_esc_fprintf(f, LB_LANG_TERM, "servers: the primary Sentinels %s name %s%s%s\n", cfg->sentinel_urls,
			cfg->sentinel_master, cfg->redis_urls ? "; resource " : "",
			cfg->redis_urls ? cfg->redis_urls : "");
	else
		lb_esc_fprintf(f, LB_LANG_TERM, "servers: %s\n", cfg->redis_urls ? cfg->redis_urls : "embedded (started by lockbench)");
	lb_esc_fprintf(f, LB_LANG_TERM, "key_prefix: %s\n", res->run_prefix);
	lb_esc_fprintf(f, LB_LANG_TERM, "written_utc: %s\n", when);
	lb_esc_fprintf(f, LB_LANG_TERM, "machine: %s %s %s, %ld cores, %s\n", u.sysname, u.release, u.machine,
		sysconf(_SC_NPROCESSORS_ONLN), cpu);
	lb_esc_fprintf(f, LB_LANG_TERM, "clock: history times are CLOCK_MONOTONIC ns after the run's start\n");
	lb_esc_fprintf(f, LB_LANG_TERM, "interrupted: %s\n", res->interrupted ? "yes (Ctrl-C or SIGTERM)" : "no");
	return 0;
}

/* The header, then the row, each value a CSV field (RFC 4180, esc.h): a
 * name with a comma or a quote is quoted, never split. A control character
 * (a newline in a program's path) is written as a space: the file stays one
 * header line and one row. */
static void write_summary(FILE *f, const struct lb_summary *s)
{
	for (size_t i = 0; i < s->n; i++)
		fprintf(f, "%s%c", s->name[i], i + 1 < s->n ? ',' : '\n');
	for (size_t i = 0; i < s->n; i++) {
		char v[sizeof(s->value[0])];
		snprintf(v, sizeof(v), "%s", s->value[i]);
		for (char *p = v; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = ' ';
		lb_esc_fprintf(f, LB_LANG_CSV, i ? ",%s" : "%s", v);
	}
	fputc('\n', f);
}

int lb_results_write(const struct lb_run_cfg *cfg, const struct lb_run_result *res,
		     const struct lb_summary *s)
{
	struct lb_outfile o;
	int rc = 0;

	/* each file whole or absent; summary.csv last, so that a summary is
	 * always beside the history it summarises */
	if ((rc = lb_outfile_open(&o, cfg->out_dir, "history.csv", true)) == 0) {
		write_history(o.f, res);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && (rc = lb_outfile_open(&o, cfg->out_dir, "waiters.csv", true)) == 0) {
		write_waiters(o.f, res);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && (rc = lb_outfile_open(&o, cfg->out_dir, "latency.csv", true)) == 0) {
		write_latency(o.f, &res->latency);
		rc = lb_outfile_close(&o);
	}
	/* the calls that never entered, at their length: check recomputes the
	 * acquire figures from both */
	if (rc == 0 && (rc = lb_outfile_open(&o, cfg->out_dir, "latency-censored.csv", true)) == 0) {
		write_latency(o.f, &res->censored);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && (rc = lb_outfile_open(&o, cfg->out_dir, "events.csv", true)) == 0) {
		lb_events_write(o.f, res);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && res->key_events &&
	    (rc = lb_outfile_open(&o, cfg->out_dir, "keyevents.csv", true)) == 0) {
		lb_key_events_write(o.f, res);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && (rc = lb_outfile_open(&o, cfg->out_dir, "meta.txt", true)) == 0) {
		lb_meta_write(o.f, cfg, res);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && (rc = lb_outfile_open(&o, cfg->out_dir, "summary.csv", true)) == 0) {
		write_summary(o.f, s);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && s->invalid)
		rc = LB_EINVAL; /* written, to be looked at; reported by lb_summary_build */
	return rc;
}

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
}

void lb_acquire_text(const struct lb_run_result *res, double q, char *buf, size_t len)
{
	bool lower;
	double us = lb_acquire_quantile_us(res, q, &lower);
	if (res->latency.n + res->censored.n == 0)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%s%.2f ms", lower ? ">= " : "", us / 1000.0);
}

static void print_acquire(FILE *f, const struct lb_run_result *res, const char *label, double q)
{
	char text[48];
	lb_acquire_text(res, q, text, sizeof(text));
	fprintf(f, " %s %s", label, text);
}

/* The outcome against the scenario's expectation, the warnings, the faults. */
static void print_outcome(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *res,
			  const struct lb_lock_cost *cost, const char *wait)
{
	const struct lb_verdict *v = &res->verdict;
	int expected = cfg->scenario ? lb_scenario_expected(cfg->scenario, cfg->strategy->name) : -1;
	lb_esc_fprintf(f, LB_LANG_TERM, "  outcome      %s: %s", lb_class_name(res->observed),
		       res->observed_why);
	if (expected >= 0 && res->observed == LB_CLASS_INTERRUPTED) {
		char want[128];
		lb_scenario_expect_text(cfg->scenario, cfg->strategy->name, want, sizeof(want));
		lb_esc_fprintf(f, LB_LANG_TERM, " (scenario %s expects %s: not compared, the run was cut short)",
			cfg->scenario_name, want);
	} else if (expected >= 0) {
		struct lb_observed ob = { res->observed, v->foreign_releases, v->overlaps,
					  res->lost_updates };
		char want[128], why[256];
		lb_scenario_expect_text(cfg->scenario, cfg->strategy->name, want, sizeof(want));
		bool met = lb_scenario_expect_met(cfg->scenario, cfg->strategy->name, &ob, why,
						  sizeof(why));
		lb_esc_fprintf(f, LB_LANG_TERM, " (scenario %s expects %s: %s%s)", cfg->scenario_name, want,
			met ? "as expected" : "DIFFERENT: ", met ? "" : why);
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
		if (res->events[i].kind == LB_EV_PRIMARY_SEEN)
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
static void print_safety(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *res)
{
	const struct lb_verdict *v = &res->verdict;
	char lost[128];
	if (res->lost_updates_max > res->lost_updates)
		snprintf(lost, sizeof(lost), "%lld..%lld (%llu writes of unknown outcome)",
			 res->lost_updates, res->lost_updates_max,
			 (unsigned long long)res->uncertain_writes);
	else
		snprintf(lost, sizeof(lost), "%lld", res->lost_updates);
	char foreign[64];
	lb_foreign_text(v, foreign, sizeof(foreign));
	fprintf(f, "  safety       overlaps %llu (%.1f ms, max %d holders, canary %llu), "
		   "lost updates %s, foreign releases %s, lost leases %llu\n",
		(unsigned long long)v->overlaps, v->overlap_ms, v->max_holders,
		(unsigned long long)res->canary_violations, lost, foreign,
		(unsigned long long)v->lost_leases);
	print_foreign(f, cfg, res);
	if (res->stale_writes_rejected || res->writes_aborted)
		fprintf(f, "  stopped      %llu stale reads/writes refused by the fenced resource, "
			   "%llu sections aborted on a lost lease\n",
			(unsigned long long)res->stale_writes_rejected,
			(unsigned long long)res->writes_aborted);
	fprintf(f, "  liveness     holder deaths %llu, orphaned %.1f ms, recovered %s, fairness %.3f, "
		   "%llu acquire attempts found a node down\n",
		(unsigned long long)v->holder_deaths, v->orphan_ms, lb_recovered_name(v->recovered),
		v->fairness, (unsigned long long)res->acquire_errors);
}

void lb_results_print(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *res)
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
	if (res->acquires)
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
	print_safety(f, cfg, res);
	int64_t sb_from, sb_to;
	int sb_server;
	if ((cfg->sentinel || cfg->cluster) && lb_split_brain_window(res->sections, res->n_sections, res->events,
						   res->n_events, &sb_from, &sb_to, &sb_server))
		fprintf(f, "  split brain  the first primary and %s both granted the lock from %.3f s "
			   "to %.3f s: %.3f s\n", lb_topo_part_name(sb_server), (double)sb_from / 1e9,
			(double)sb_to / 1e9, (double)(sb_to - sb_from) / 1e9);
	else if (cfg->sentinel || cfg->cluster)
		fprintf(f, "  split brain  none measured: the first primary granted no lock once "
			   "another server had granted one\n");
	print_outcome(f, cfg, res, &cost, wait);
}

