#include "esc.h"
#include "verify.h"

#include <ctype.h>
#include <math.h>
#include <signal.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"
#include "foreign.h"
#include "import_dir.h"
#include "metrics.h"
#include "oracle.h"
#include "readers.h"
#include "results.h"
#include "signals.h"
#include "wait.h"

struct ctx {
	const struct lb_summary *s;
	FILE *out;
	struct lb_verify *v;
};

/* @name disagrees: counted once, however many of its checks fail. */
static void differs(struct ctx *c, const char *name)
{
	size_t used = strlen(c->v->which), len = strlen(name);

	for (const char *p = c->v->which; (p = strstr(p, name)); p += len)
		if ((p == c->v->which || p[-1] == ' ') && (p[len] == ',' || !p[len]))
			return;
	c->v->differences++;
	if (used + strlen(name) + 3 < sizeof(c->v->which))
		snprintf(c->v->which + used, sizeof(c->v->which) - used, "%s%s", used ? ", " : "",
			 name);
}

/* A value of the summary as a number: 0 when absent, n/a or text (the
 * reader let only numbers written as lockbench writes them through). */
static double num(const struct ctx *c, const char *name)
{
	const char *v = lb_summary_get(c->s, name);
	double d = 0;
	return v && lb_parse_double(v, &d) ? d : 0;
}

static bool known(const struct ctx *c, const char *name)
{
	const char *v = lb_summary_get(c->s, name);
	return v && strcmp(v, "n/a");
}

/* A recomputed number (@is_known false: it cannot be measured from these
 * files) against the summary's, at the precision the summary writes. */
static void figure(struct ctx *c, const char *name, double got, bool is_known, double slack)
{
	const struct lb_figdef *f = lb_figdef_find(name);
	const char *v = lb_summary_get(c->s, name);
	char text[64];

	c->v->figures++;
	if (!v) {
		if (c->out)
			fprintf(c->out, "  %-22s missing from summary.csv\n", name);
		differs(c, name);
		return;
	}
	if (!is_known)
		snprintf(text, sizeof(text), "n/a");
	else if (f->kind == LB_FD_INT)
		snprintf(text, sizeof(text), "%.0f", got);
	else
		snprintf(text, sizeof(text), "%.*f", f->digits >= 0 ? f->digits + 1 : 6, got);
	bool ok = lb_figdef_agrees(f, v, got, is_known, slack);
	if (c->out)
		fprintf(c->out, "  %-22s summary %-14s recomputed %-14s %s\n", name, v, text,
			ok ? "ok" : "DIFFERS");
	if (!ok)
		differs(c, name);
}

static void text(struct ctx *c, const char *name, const char *got)
{
	const char *v = lb_summary_get(c->s, name);
	bool ok = v && !strcmp(v, got);

	c->v->figures++;
	if (c->out)
		fprintf(c->out, "  %-22s summary %-14s recomputed %-14s %s\n", name, v ? v : "(missing)",
			got, ok ? "ok" : "DIFFERS");
	if (!ok)
		differs(c, name);
}

/* Every column has a row in the figure table and a value inside it. */
static void ranges(struct ctx *c)
{
	char why[200];

	for (size_t i = 0; i < c->s->n; i++) {
		const struct lb_figdef *f = lb_figdef_find(c->s->name[i]);
		if (f && lb_figdef_check(f, c->s->value[i], why, sizeof(why)) == 0)
			continue;
		if (c->out)
			fprintf(c->out, "  %-22s summary %-14.60s OUT OF RANGE: %s\n", c->s->name[i],
				c->s->value[i], f ? why : "no such figure (harness/params/figures.c): no unit, "
				"no range");
		differs(c, c->s->name[i]);
	}
}

/* The canary's relation to the sweep (docs/index.md): a client raises its
 * flag before its enter is stamped and lowers it after its exit is, so two
 * sections the sweep sees overlap had both flags up at once, and one of the
 * two clients saw the other's: overlaps > 0 means canary_violations >= 1.
 * The converse need not hold: flags are up a little longer than the stamps
 * (a client descheduled between its exit stamp and lowering its flag). */
static void canary(struct ctx *c, const struct lb_verdict *v)
{
	const char *cv = lb_summary_get(c->s, "canary_violations");
	double canary = num(c, "canary_violations");

	if (!cv || !strcmp(cv, "n/a"))
		return; /* missing: ranges() or the figure table already said so; n/a: run
			   --hosts, whose canaries see their own host's clients alone */
	c->v->figures++;
	bool ok = !(v->overlaps > 0 && canary < 1);
	if (c->out)
		fprintf(c->out, "  %-22s summary %-14s recomputed %-14s %s\n", "canary_violations", cv,
			v->overlaps ? ">= 1" : ">= 0", ok ? v->overlaps == 0 && canary > 0 ?
			"ok (the canary's flags outlast the stamps by a few instructions)" : "ok" :
			"DIFFERS (an overlap no client's canary saw)");
	if (!ok)
		differs(c, "canary_violations");
}

/* The lock's cost, from the measured command count and the history. */
static void cost(struct ctx *c, const struct lb_section *sec, size_t n,
		 const struct lb_run_shape *shape)
{
	double held_s = 0, inside_s = 0, bound = 0;
	struct lb_wait w;
	char err[160];
	const char *wait = lb_summary_get(c->s, "wait");
	bool cmds = known(c, "lock_commands");
	uint64_t commands = (uint64_t)num(c, "lock_commands");

	lb_held_time(sec, n, (int64_t)(shape->elapsed_s * 1e9), &held_s, &inside_s);
	struct lb_cost_shape cs = { .wait = &w, .clients = shape->clients, .keys = shape->keys,
				    .nodes = (int)num(c, "nodes"), .ttl_ms = shape->ttl_ms,
				    .elapsed_s = shape->elapsed_s, .sections = n, .inside_s = inside_s };
	/* a consensus lock's requests are not Redis commands: no bound (run_collect.c) */
	const char *name = lb_summary_get(c->s, "strategy");
	/* an exec: program (never a consensus lock's) is not looked for: its run is
	 * read where the program is not (another directory, or since removed) */
	bool consensus = name && strncmp(name, "exec:", 5) && lb_consensus_of(lb_strategy_find(name));
	bool bound_known = !consensus && wait && cs.ttl_ms > 0 &&
			   lb_wait_parse(wait, &w, err, sizeof(err)) == 0 &&
			   lb_lock_cost_bound(&cs, &bound, NULL, 0) == 0;
	struct lb_lock_cost lc;
	lb_lock_cost_figures(commands, cmds, bound, bound_known, held_s, &lc);
	figure(c, "cmds_per_section", n ? (double)commands / (double)n : 0, cmds && n > 0, 0);
	figure(c, "lock_cmds_per_held_s", lc.per_held_s, lc.rate_known, 0);
	figure(c, "lock_cmds_bound_per_s", lc.bound_per_held_s, lc.bound_known, 0);
}

/* The acquire figures: latency.csv holds the buckets of the calls that
 * entered, latency-censored.csv those of the calls that never did (at their
 * length so far); the maximum (measured, in the top bucket of both) caps the
 * quantiles as the run capped them. Each figure is the lower end of an
 * interval whose upper end (acquire_*_high_us) has the cut-off waits at
 * +infinity; which figures are not exact follows from the two
 * (lb_hist_quantile_interval_us). */
static void acquire_figures(struct ctx *c, struct lb_hist *lat, struct lb_hist *cens)
{
	static const struct { const char *name, *high, *tag; double q; } fig[] = {
		{ "acquire_p50_us", "acquire_p50_high_us", "p50", 0.5 },
		{ "acquire_p90_us", "acquire_p90_high_us", "p90", 0.9 },
		{ "acquire_p99_us", "acquire_p99_high_us", "p99", 0.99 },
		{ "acquire_p999_us", "acquire_p999_high_us", "p999", 0.999 },
		{ "acquire_max_us", "acquire_max_high_us", "max", 1 },
	};
	struct lb_hist all = *lat;
	uint64_t lo = 0, hi = 0;
	char bounds[64] = "", text_n[32];
	size_t used = 0;

	lb_hist_merge(&all, cens);
	for (size_t i = 0; i < LB_HIST_BUCKETS; i++)
		if (all.counts[i])
			lb_hist_bucket_range(i, &lo, &hi);
	double max_us = num(c, "acquire_max_us");
	bool called = all.n > 0;
	bool max_ok = called && max_us + 0.5 >= (double)lo && max_us - 0.5 <= (double)hi;
	if (max_ok) /* the maximum of both, whichever holds it */
		lat->max_ns = cens->max_ns = (uint64_t)(max_us * 1000);
	/* a run written before the intervals: its figures are the lower bounds
	 * it wrote then (a censored quantile's bucket's low edge), by its rule */
	bool before_intervals = !lb_summary_get(c->s, "acquire_p50_high_us");
	for (size_t i = 0; i < sizeof(fig) / sizeof(fig[0]); i++) {
		double low, high;
		bool lower = false;
		if (before_intervals) {
			low = lb_hist_quantile_censored_us(lat, cens, fig[i].q, &lower);
			high = lower ? INFINITY : low;
		} else {
			lb_hist_quantile_interval_us(lat, cens, fig[i].q, &low, &high);
		}
		if (fig[i].q >= 1)
			figure(c, fig[i].name, max_us, max_ok, 0);
		else
			figure(c, fig[i].name, low, called, 0.5);
		if (lb_summary_get(c->s, fig[i].high)) /* a run written before it had none */
			figure(c, fig[i].high, high, called && (fig[i].q < 1 || max_ok),
			       isinf(high) ? 0 : 0.5);
		if (high != low && called)
			used += (size_t)snprintf(bounds + used, sizeof(bounds) - used, "%s%s",
						 used ? ";" : "", fig[i].tag);
	}
	snprintf(text_n, sizeof(text_n), "%llu", (unsigned long long)cens->n);
	if (lb_summary_get(c->s, "acquire_censored")) {
		text(c, "acquire_censored", text_n);
		text(c, "acquire_lower_bounds", bounds[0] ? bounds : "-");
	}
}

/* The signal that stopped the run early (stop_signal), or 0. */
static int stop_signal(const struct ctx *c)
{
	const char *v = lb_summary_get(c->s, "stop_signal");
	return !v ? 0 : !strcmp(v, "SIGINT") ? SIGINT : !strcmp(v, "SIGTERM") ? SIGTERM : 0;
}

/* What a run directory holds, read back. */
struct run_in {
	struct lb_summary s;
	struct lb_run_shape shape;
	struct lb_section *sec;
	struct lb_event *ev;
	struct lb_waiter *w;
	struct lb_key_event *ke;
	struct lb_try *t;          /* attempts.csv, when has_tries */
	size_t n, n_ev, n_w, n_ke, n_t;
	bool has_tries;
	struct lb_hist lat, cens;
};

/* The class, from the recomputed verdict and the measured counts. */
static void outcome(struct ctx *c, const struct run_in *in, const struct lb_verdict *v,
		    double lost, double lost_max)
{
	const char *unfired = lb_summary_get(c->s, "faults_unfired");
	char why[512];
	struct lb_coverage cover;

	int64_t ran_ns = (int64_t)(in->shape.elapsed_s * 1e9);
	int64_t asked_ns = known(c, "duration_s") ? (int64_t)(num(c, "duration_s") * 1e9) : 0;
	lb_run_coverage(in->ev, in->n_ev, in->shape.clients,
			(known(c, "calls") && num(c, "calls") > 0) || asked_ns < ran_ns ? ran_ns :
			asked_ns, &cover);
	struct lb_class_input ci = {
		.v = v, .lost_min = (long long)lost, .lost_max = (long long)lost_max,
		.attempts = (uint64_t)num(c, "attempts"),
		.acquire_errors = (uint64_t)num(c, "acquire_errors"),
		.acquire_timeouts = (uint64_t)num(c, "acquire_timeouts"),
		.stopped = (uint64_t)(num(c, "stale_writes_rejected") + num(c, "writes_aborted")),
		.unfired = unfired && strcmp(unfired, "-") ? unfired : NULL,
		.interrupted = stop_signal(c),
		.cover = &cover,
	};
	enum lb_class cls = lb_classify(&ci, why, sizeof(why));
	for (char *p = why; *p; p++) /* as the summary writes it: a CSV value */
		if (*p == ',')
			*p = ';';
	why[199] = '\0';
	text(c, "observed", lb_class_name(cls));
	text(c, "observed_why", why);
}

static int outage_cmp(const void *a, const void *b)
{
	const struct lb_event *x = a, *y = b;
	return x->t_ns != y->t_ns ? (x->t_ns < y->t_ns ? -1 : 1) :
	       x->client != y->client ? (x->client < y->client ? -1 : 1) :
	       (x->kind > y->kind) - (x->kind < y->kind);
}

/* On the user's servers, the clients' server-down and server-back events
 * again from attempts.csv (lb_attempts_outages): each where the attempt that
 * found the server gone, or answering again (busy too), ended. A run with
 * none of them (lockbench's own servers) has nothing to compare; a run that
 * lost events cannot be compared. */
static void check_outages(struct ctx *c, const struct lb_try *t, size_t n, const struct run_in *in)
{
	size_t had = 0;

	for (size_t i = 0; i < in->n_ev; i++)
		had += in->ev[i].kind == LB_EV_SERVER_DOWN || in->ev[i].kind == LB_EV_SERVER_BACK;
	if (!had || num(c, "events_dropped") > 0)
		return;
	struct lb_event *got = calloc(had + n + 1, sizeof(*got)), *was = got ? got + n + 1 : NULL;
	size_t k = got ? lb_attempts_outages(t, n, in->shape.clients, got, n + 1) : 0, w = 0;
	bool same = got && k == had;
	for (size_t i = 0; same && i < in->n_ev; i++)
		if (in->ev[i].kind == LB_EV_SERVER_DOWN || in->ev[i].kind == LB_EV_SERVER_BACK)
			was[w++] = (struct lb_event){ .t_ns = in->ev[i].t_ns, .kind = in->ev[i].kind,
						      .client = in->ev[i].client, .node = -1 };
	if (same) {
		qsort(got, k, sizeof(*got), outage_cmp);
		qsort(was, w, sizeof(*was), outage_cmp);
		for (size_t i = 0; same && i < k; i++)
			same = !outage_cmp(&got[i], &was[i]);
	}
	free(got);
	c->v->figures++;
	if (c->out)
		fprintf(c->out, "  %-22s events.csv %-11zu recomputed %-14zu %s\n", "server-down/back",
			had, k, same ? "ok" : "DIFFERS (times or clients)");
	if (!same)
		differs(c, "server-down/back");
}

/* The busy answers, and those given with no quorum of nodes up, from
 * attempts.csv (read with the run: read_run), the history and the events
 * again (a run older than attempts.csv has neither column: nothing to
 * compare). */
static void check_busy(struct ctx *c, const struct run_in *in)
{
	struct lb_busy b;

	if (!lb_summary_get(c->s, "busy_answers"))
		return;
	if (!in->has_tries) {
		if (c->out)
			fprintf(c->out, "  %-22s missing: busy_answers and busy_while_down cannot be "
					"recomputed\n", "attempts.csv");
		differs(c, "busy_answers");
		return;
	}
	if (lb_busy_down(in->t, in->n_t, in->sec, in->n, in->ev, in->n_ev, (int)num(c, "nodes"),
			 in->shape.keys, &b) < 0) {
		differs(c, "busy_answers");
		return;
	}
	/* a whole log (busy_answers known) holds every failed attempt, as
	 * acquire_errors counted them */
	uint64_t errors = 0;
	for (size_t i = 0; i < in->n_t; i++)
		errors += in->t[i].result == LB_TRY_ERROR ||
			  in->t[i].result == LB_TRY_INDETERMINATE;
	if (known(c, "busy_answers")) /* the whole log: every attempt's answer */
		check_outages(c, in->t, in->n_t, in);
	figure(c, "busy_answers", (double)b.busy, known(c, "busy_answers"), 0);
	figure(c, "busy_while_down", (double)b.down, known(c, "busy_while_down"), 0);
	if (known(c, "busy_answers"))
		figure(c, "acquire_errors", (double)errors, true, 0);
	/* the operations of unknown outcome: attempts and releases (a run from
	 * before the column has no figure to compare) */
	uint64_t unknown_ops = 0;
	for (size_t i = 0; i < in->n_t; i++)
		unknown_ops += in->t[i].result == LB_TRY_INDETERMINATE;
	for (size_t i = 0; i < in->n; i++)
		unknown_ops += in->sec[i].outcome == LB_OUT_INDETERMINATE;
	if (known(c, "busy_answers") && lb_summary_get(c->s, "indeterminate_ops"))
		figure(c, "indeterminate_ops", (double)unknown_ops, true, 0);
}

/* A crowd's figures (the stampede's): the clients served and when the last
 * of them first got in, again from history.csv; the clients that called add
 * up to no more than the run's; what only the run's slots knew (the arrival,
 * the waits) lies within the run. */
static void crowd(struct ctx *c, const struct run_in *in)
{
	int clients = in->shape.clients;
	double served = 0, last = -1, elapsed_ms = num(c, "elapsed_s") * 1000;

	if (!lb_summary_get(c->s, "served_clients") || clients <= 0)
		return; /* a run from before these columns */
	int64_t *first = malloc(sizeof(*first) * (size_t)clients);
	if (!first)
		return;
	for (int i = 0; i < clients; i++)
		first[i] = -1;
	for (size_t i = 0; i < in->n; i++) {
		const struct lb_section *x = &in->sec[i];
		if (x->client >= 0 && x->client < clients &&
		    (first[x->client] < 0 || x->enter_ns < first[x->client]))
			first[x->client] = x->enter_ns;
	}
	for (int i = 0; i < clients; i++)
		if (first[i] >= 0) {
			served++;
			last = (double)first[i] / 1e6 > last ? (double)first[i] / 1e6 : last;
		}
	free(first);
	figure(c, "served_clients", served, true, 0);
	figure(c, "last_served_ms", last, last >= 0, 0);
	double called = num(c, "served_clients") + num(c, "gave_up_clients") +
			num(c, "still_waiting_clients");
	bool ok = called <= clients && (!known(c, "arrival_spread_ms") ||
					num(c, "arrival_spread_ms") <= elapsed_ms + 1) &&
		  (!known(c, "gave_up_after_ms") || num(c, "gave_up_after_ms") <= elapsed_ms + 1);
	c->v->figures++;
	if (c->out)
		fprintf(c->out, "  %-22s served + gave up + still waiting %.0f of %d clients, the "
			"arrival and the waits within the run's %.0f ms: %s\n", "crowd", called,
			clients, elapsed_ms, ok ? "ok" : "DIFFERS");
	if (!ok)
		differs(c, "gave_up_clients");
	if (known(c, "lock_commands") && num(c, "elapsed_s") > 0)
		figure(c, "lock_cmds_per_s", num(c, "lock_commands") / num(c, "elapsed_s"), true, 0);
}

static void run_in_free(struct run_in *in)
{
	free(in->sec);
	free(in->ev);
	free(in->w);
	free(in->ke);
	free(in->t);
}

/* The summary, the history, the events, the waiters and the latencies:
 * 0 or an error (said by the reader, with the file). */
static int read_run(const char *dir, struct run_in *in)
{
	char path[4096];
	int rc;

	snprintf(path, sizeof(path), "%.4000s/summary.csv", dir);
	if ((rc = lb_summary_read(path, &in->s)) < 0 ||
	    (rc = lb_summary_shape(&in->s, path, &in->shape)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%.4000s/history.csv", dir);
	if ((rc = lb_history_read(path, in->shape.clients, in->shape.keys, &in->sec, &in->n)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%.4000s/events.csv", dir);
	if ((rc = lb_events_read(path, in->shape.clients, &in->ev, &in->n_ev)) < 0)
		return rc;
	/* who was still trying (absent in older runs: no death is then "never came back") */
	snprintf(path, sizeof(path), "%.4000s/waiters.csv", dir);
	if ((rc = lb_waiters_read(path, in->shape.clients, in->shape.keys, &in->w, &in->n_w)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%.4000s/latency.csv", dir);
	if ((rc = lb_latency_read(path, &in->lat)) < 0)
		return rc;
	/* the calls that never entered (absent in older runs: none counted) */
	memset(&in->cens, 0, sizeof(in->cens));
	snprintf(path, sizeof(path), "%.4000s/latency-censored.csv", dir);
	if (access(path, F_OK) == 0 && (rc = lb_latency_read(path, &in->cens)) < 0)
		return rc;
	/* summary.json, compared later: what is there and not a regular file (a
	 * FIFO would hang the comparison) is an input unreadable */
	snprintf(path, sizeof(path), "%.4000s/summary.json", dir);
	const char *kind;
	char why[96];
	FILE *json = lb_open_regular(path, &rc, &kind);
	if (json)
		fclose(json);
	else if (kind) {
		lb_errorf("cannot read %s: %s", path, lb_open_why(kind, why, sizeof(why)));
		return rc;
	}
	/* every attempt (absent in older runs): unreadable is an input unreadable,
	 * said by its reader with the line and field, never a difference */
	snprintf(path, sizeof(path), "%.4000s/attempts.csv", dir);
	in->has_tries = lb_summary_get(&in->s, "busy_answers") && access(path, F_OK) == 0;
	if (in->has_tries && (rc = lb_attempts_read(path, in->shape.clients, &in->t, &in->n_t)) < 0)
		return rc;
	return 0;
}

/* The oracle's verdict on the history again, and the foreign releases:
 * those the servers saw, judged again from keyevents.csv; else the
 * releases' own count; n/a as the run said. */
static int judge_again(const char *dir, struct run_in *in, struct lb_verdict *v)
{
	char path[4096];
	int64_t end_ns = (int64_t)(in->shape.elapsed_s * 1e9);
	struct lb_history h = { .s = in->sec, .n = in->n, .w = in->w, .n_w = in->n_w,
				.clients = in->shape.clients, .end_ns = end_ns,
				.ttl_ns = in->shape.ttl_ms * LB_NS_PER_MS };
	int rc = lb_oracle_judge_history(&h, v, NULL);

	if (rc < 0)
		return rc;
	const char *src = lb_summary_get(&in->s, "foreign_source");
	bool server = src && !strcmp(src, "server");
	snprintf(path, sizeof(path), "%.4000s/keyevents.csv", dir);
	if (server && (rc = lb_key_events_read(path, in->shape.keys, &in->ke, &in->n_ke)) < 0)
		return rc;
	struct lb_foreign_opts fo = { LB_KEYWATCH_SLOP_NS, in->shape.ttl_ms * LB_NS_PER_MS, end_ns };
	struct lb_foreign_result fr;
	rc = lb_foreign_verdict(v, in->sec, in->n, server ? in->ke : NULL, in->n_ke,
				src && !strcmp(src, "n/a"), &fo, &fr);
	const char *dropped = lb_summary_get(&in->s, "events_dropped");
	if (rc == 0)
		rc = lb_notice_verdict(v, in->sec, in->n, &fr, in->ev, in->n_ev, end_ns,
				       dropped && !strcmp(dropped, "0"), NULL);
	if (rc == 0)
		rc = lb_unattended_verdict(v, in->sec, in->n, in->ke, in->n_ke, in->shape.keys, &fo);
	lb_foreign_result_free(&fr);
	return rc;
}

static void check_foreign(struct ctx *c, const struct lb_verdict *v, size_t n_ke)
{
	const char *src = lb_summary_get(c->s, "foreign_source");

	if (src) {
		text(c, "foreign_source", lb_foreign_source_name(v->foreign_source));
		figure(c, "foreign_releases", (double)v->foreign_releases,
		       v->foreign_source != LB_FOREIGN_NA, 0);
		figure(c, "foreign_unattributed", (double)v->foreign_unattributed,
		       v->foreign_source == LB_FOREIGN_SERVER, 0);
		figure(c, "foreign_releases_client", (double)v->foreign_client, known(c,
		       "foreign_releases_client"), 0);
		figure(c, "key_events", (double)n_ke, !strcmp(src, "server"), 0);
	} else if (!known(c, "foreign_releases")) { /* an older run: a library's, not seen */
		if (c->out)
			fprintf(c->out, "  %-22s summary n/a            (not measured: nothing to "
					"compare)\n", "foreign_releases");
	} else {
		figure(c, "foreign_releases", (double)v->foreign_releases, true, 0);
	}
}

/* The safety and liveness figures the oracle gives. */
/* The refusals events.csv tells of (each one the resource counted, while the
 * table of events had room) are at most stale_writes_rejected, the
 * resource's own count. */
static void refusals(struct ctx *c, const struct run_in *in)
{
	const char *sv = lb_summary_get(c->s, "stale_writes_rejected");
	size_t told = 0;

	for (size_t i = 0; i < in->n_ev; i++)
		told += in->ev[i].kind == LB_EV_REFUSED;
	if (!sv || !told)
		return;
	c->v->figures++;
	bool ok = (double)told <= num(c, "stale_writes_rejected");
	if (c->out)
		fprintf(c->out, "  %-22s summary %-14s recomputed >= %-11zu %s\n",
			"stale_writes_rejected", sv, told, ok ? "ok (the refusals events.csv tells of)" :
			"DIFFERS (events.csv tells of more refusals than the resource counted)");
	if (!ok)
		differs(c, "stale_writes_rejected");
}

static void check_verdict(struct ctx *c, const struct run_in *in, const struct lb_verdict *v)
{
	double elapsed = in->shape.elapsed_s;

	figure(c, "sections", (double)v->sections, true, 0);
	/* elapsed_s is written to the microsecond, which the throughput inherits */
	double tput = elapsed > 0 ? (double)v->sections / elapsed : 0;
	figure(c, "throughput_per_s", tput, true, elapsed > 0 ? tput * 0.5e-6 / elapsed : 0);
	figure(c, "overlaps", (double)v->overlaps, true, 0);
	figure(c, "overlap_ms", v->overlap_ms, true, 0);
	figure(c, "max_holders", v->max_holders, true, 0);
	check_foreign(c, v, in->n_ke);
	if (lb_summary_get(c->s, "leases_lapsed")) {
		figure(c, "lost_leases", (double)v->lost_leases, true, 0);
		figure(c, "leases_lapsed", (double)v->leases_lapsed, v->leases_lapsed_known, 0);
	} else { /* written before the servers' lapses counted: its own rule */
		figure(c, "lost_leases", (double)(v->lost_leases - v->lost_leases_servers), true, 0);
	}
	if (lb_summary_get(c->s, "notices_missed")) { /* absent in older runs */
		figure(c, "notices_missed", (double)v->notices_missed, v->notices_known, 0);
		figure(c, "notice_lag_p50_ms", v->notice_lag_p50_ms, v->notices_known && v->notices_told, 0);
		figure(c, "notice_lag_max_ms", v->notice_lag_max_ms, v->notices_known && v->notices_told, 0);
	}
	if (lb_summary_get(c->s, "held_no_holder_ms")) { /* absent in older runs */
		figure(c, "held_no_holder_ms", v->held_no_holder_ms, v->leases_lapsed_known, 0);
		figure(c, "held_no_holder_max_ms", v->held_no_holder_max_ms, v->leases_lapsed_known, 0);
	}
	figure(c, "holder_deaths", (double)v->holder_deaths, true, 0);
	figure(c, "orphan_ms", v->orphan_ms, true, 0);
	text(c, "recovered", lb_recovered_name(v->recovered));
	figure(c, "fairness", v->fairness, v->sections > 0, 0);
	figure(c, "handoffs", (double)v->handoffs, true, 0);
	figure(c, "handoff_p50_us", v->handoff_p50_us, v->handoffs > 0, 0);
	figure(c, "handoff_p99_us", v->handoff_p99_us, v->handoffs > 0, 0);
	canary(c, v);
	refusals(c, in);
}

/* Lost updates: the counter is not in the history; the arithmetic is
 * checked, its range into *@lost and *@lost_max. */
static void check_lost(struct ctx *c, double *lost, double *lost_max)
{
	const char *work = lb_summary_get(c->s, "work");
	bool counter = work && !strcmp(work, "counter");
	bool exact = known(c, "applied_writes"); /* the resource counted what it applied */
	double final = num(c, "counter_final");

	*lost = !counter ? 0 : exact ? num(c, "applied_writes") - final :
		num(c, "counter_writes") - final;
	*lost_max = *lost + (counter && !exact ? num(c, "uncertain_writes") : 0);
	if (*lost < 0)
		*lost = 0;
	if (*lost_max < 0)
		*lost_max = 0;
	bool read = !counter || known(c, "counter_final"); /* the final read answered */
	if (!read)
		*lost = *lost_max = 0;
	figure(c, "lost_updates", *lost, read, 0);
	figure(c, "lost_updates_max", *lost_max, read, 0);
}

/* Is @p a JSON string ("...": no raw control byte, only JSON's escapes), and
 * where does it end? NULL when it is not one. */
static const char *json_string_end(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p && *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p != '\\')
			continue;
		p++;
		if (*p == 'u') {
			for (int i = 1; i <= 4; i++)
				if (!isxdigit((unsigned char)p[i]))
					return NULL;
			p += 4;
		} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
			return NULL;
		}
	}
	return *p == '"' ? p + 1 : NULL;
}

/* summary.json against summary.csv: line for line what lockbench writes from
 * the summary it read (results.h), a reason of n/a aside (any JSON string;
 * summary.csv does not hold it). A run written before summary.json existed
 * has none: said, not counted. */
static void check_json(struct ctx *c, const char *dir)
{
	char path[4096], *want = NULL, line[4096];
	size_t want_len = 0;
	int n = 0, bad = 0;

	snprintf(path, sizeof(path), "%.4000s/summary.json", dir);
	const char *kind;
	int rc;
	FILE *f = lb_open_regular(path, &rc, &kind); /* not a FIFO: read_run refused one */
	if (!f) {
		if (c->out)
			fprintf(c->out, "  %-22s absent (a run written before lockbench wrote it)\n",
				"summary.json");
		return;
	}
	FILE *m = open_memstream(&want, &want_len);
	if (m) {
		lb_summary_json(m, c->s); /* a reason read back is "": any string stands there */
		fclose(m);
	}
	const char *w = want;
	while (w && *w && !bad) {
		size_t k = strcspn(w, "\n");
		n++;
		if (!fgets(line, sizeof(line), f))
			bad = n;
		line[strcspn(line, "\n")] = '\0';
		const char *hole = strstr(w, ", \"why\": \"\"}");
		if (!bad && hole && hole < w + k) { /* the reason: any JSON string */
			size_t pre = (size_t)(hole - w) + strlen(", \"why\": ");
			const char *end = strncmp(line, w, pre) ? NULL : json_string_end(line + pre);
			bool tail_ok = end && (!strcmp(end, "}") || !strcmp(end, "},"));
			bad = tail_ok && (end[1] == ',') == (w[k - 1] == ',') ? 0 : n;
		} else if (!bad) {
			bad = strlen(line) == k && !strncmp(line, w, k) ? 0 : n;
		}
		w += k + (w[k] == '\n');
	}
	if (!bad && fgets(line, sizeof(line), f))
		bad = n + 1; /* more than the summary holds */
	fclose(f);
	free(want);
	c->v->figures++;
	if (c->out)
		fprintf(c->out, "  %-22s %s", "summary.json", bad ? "DIFFERS from summary.csv at line " :
			"agrees with summary.csv\n");
	if (bad && c->out)
		fprintf(c->out, "%d\n", bad);
	if (bad)
		differs(c, "summary.json");
}

/* A setting the summary has and lb_meta_settings_write writes, in a
 * meta.txt that has others: absent, it differs (a line deleted beside an
 * edited summary is no pass). */
static void check_setting_present(struct ctx *c, const char *dir, const char *name)
{
	char path[4096], line[1400], head[64];
	bool found = false;
	const char *kind;
	int rc;

	if (!lb_summary_get(c->s, name))
		return;
	snprintf(path, sizeof(path), "%.4000s/meta.txt", dir);
	snprintf(head, sizeof(head), "setting %s: ", name);
	FILE *f = lb_open_regular(path, &rc, &kind);
	while (f && !found && fgets(line, sizeof(line), f))
		found = !strncmp(line, head, strlen(head));
	if (f)
		fclose(f);
	if (found)
		return;
	c->v->figures++;
	if (c->out)
		lb_esc_fprintf(c->out, LB_LANG_TERM, "  %-22s meta.txt (absent)       summary %-14.60s "
			       "DIFFERS\n", name, lb_summary_get(c->s, name));
	snprintf(head, sizeof(head), "setting %.30s", name);
	differs(c, head);
}

/* meta.txt's settings against the summary's (lb_meta_settings_write): a
 * summary edited to another seed, strategy or length, or a meta.txt beside
 * the wrong run, differs. A run written before meta.txt had them: said, not
 * counted. */
static void check_settings(struct ctx *c, const char *dir)
{
	char path[4096], line[1400], want[1100];
	const char *kind;
	int rc, seen = 0;

	snprintf(path, sizeof(path), "%.4000s/meta.txt", dir);
	FILE *f = lb_open_regular(path, &rc, &kind); /* never waits on a FIFO */
	if (!f && kind) { /* there, and no file: a FIFO, a directory */
		c->v->figures++;
		if (c->out)
			fprintf(c->out, "  %-22s is not a regular file: DIFFERS\n", "meta.txt");
		differs(c, "meta.txt");
		return;
	}
	unsigned long long once = 0; /* the settings seen, a bit each */
	while (f && fgets(line, sizeof(line), f)) {
		bool whole = strchr(line, '\n') != NULL || feof(f);
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "setting ", 8))
			continue;
		char *name = line + 8, *colon = strstr(name, ": ");
		int k = -1;
		if (colon) {
			*colon = '\0';
			for (int i = 0; lb_meta_settings[i]; i++)
				if (!strcmp(lb_meta_settings[i], name))
					k = i;
		}
		/* what lockbench never writes (no ': ', a name not its own, a
		 * line cut by its length, one given twice) is damage */
		if (!colon || k < 0 || !whole || (once & (1ULL << k))) {
			c->v->figures++;
			if (c->out)
				lb_esc_fprintf(c->out, LB_LANG_TERM, "  %-22s a setting line lockbench "
					       "does not write ('%.40s'): DIFFERS\n", "meta.txt", line);
			differs(c, "meta.txt");
			if (!whole) /* the rest of the long line is not a line of its own */
				while (fgets(line, sizeof(line), f) && !strchr(line, '\n'))
					;
			continue;
		}
		once |= 1ULL << k;
		seen++;
		const char *v = lb_summary_get(c->s, name);
		if (v)
			lb_meta_setting_text(v, want, sizeof(want));
		bool ok = v && !strcmp(want, colon + 2);
		c->v->figures++;
		if (c->out && !ok)
			lb_esc_fprintf(c->out, LB_LANG_TERM, "  %-22s meta.txt %-14.60s summary %-14.60s "
				       "DIFFERS\n", name, colon + 2, v ? want : "(missing)");
		if (!ok) {
			char what[48];
			snprintf(what, sizeof(what), "setting %.30s", name);
			differs(c, what);
		}
	}
	if (f)
		fclose(f);
	for (int i = 0; seen && lb_meta_settings[i]; i++) /* one line taken out: not a pass */
		check_setting_present(c, dir, lb_meta_settings[i]);
	if (c->out && !seen)
		fprintf(c->out, "  %-22s absent from meta.txt (a run written before lockbench wrote "
			"them)\n", "settings");
	else if (c->out && !strstr(c->v->which, "setting ") && !strstr(c->v->which, "meta.txt"))
		fprintf(c->out, "  %-22s %d in meta.txt agree with summary.csv\n", "settings", seen);
}

/* A file of an imported directory against what lockbench writes from the
 * file it kept: the first line that differs is named. */
static void same_text(struct ctx *c, const char *dir, const char *name, const char *want,
		      size_t want_len)
{
	char path[4200];
	size_t line = 1, i = 0;
	int ch;

	snprintf(path, sizeof(path), "%.4000s/%s", dir, name);
	const char *kind;
	int rc;
	FILE *f = lb_open_regular(path, &rc, &kind); /* a FIFO is never waited on: missing */
	for (; f && (ch = getc(f)) != EOF; i++) {
		if (i >= want_len || ch != (unsigned char)want[i])
			break;
		line += ch == '\n';
	}
	bool ok = f && !ferror(f) && i == want_len && getc(f) == EOF;
	if (f)
		fclose(f);
	c->v->figures++;
	if (c->out && ok)
		fprintf(c->out, "  %-22s agrees with imported.csv\n", name);
	else if (c->out)
		fprintf(c->out, "  %-22s DIFFERS from what imported.csv gives%s%zu\n", name,
			f ? " at line " : " (missing)", f ? line : 0);
	if (!ok)
		differs(c, name);
}

/* @write's text for the imported history, into a buffer the caller frees. */
static char *text_of(const struct lb_import *imp, const struct lb_ujudgement *j, int which,
		     size_t *len)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);

	if (!m)
		return NULL;
	if (which == 0)
		lb_import_history_write(m, imp);
	else if (which == 1)
		lb_import_names_write(m, imp);
	else if (which == 2)
		lb_import_overlaps_write(m, imp, j);
	else
		lb_import_fences_write(m, imp, j);
	fclose(m);
	return buf;
}

/* An imported history (import_dir.h): the figures that such a history can
 * give, derived again from the file it kept (imported.csv, read with the
 * uncertainty its summary records) and from history.csv; each file lockbench
 * wrote from it written again and compared. */
static int verify_imported(const char *dir, FILE *out, struct lb_verify *result,
			   const struct run_in *in)
{
	static const char *const files[] = { "history.csv", "names.csv", "overlaps.csv", "fences.csv" };
	struct lb_import imp;
	struct lb_ujudgement j;
	struct lb_verdict v;
	char why[200];
	int rc = lb_import_load_dir(dir, &in->s, &imp, &j);

	result->imported = true;
	if (rc == 0 && lb_stop_work())
		rc = LB_ECANCELED; /* Ctrl-C (signals.h) */
	if (rc == 0)
		rc = lb_oracle_judge(in->sec, in->n, in->shape.clients,
				     (int64_t)(in->shape.elapsed_s * 1e9), &v, NULL);
	if (rc < 0)
		goto out;
	struct ctx c = { .s = &in->s, .out = out, .v = result };
	if (out)
		lb_esc_fprintf(out, LB_LANG_TERM, "check %s (imported from %s: %zu sections, %d clients, "
			       "%d keys)\n", dir, lb_summary_get(&in->s, "imported_from"), imp.n,
			       imp.clients.n, imp.keys.n);
	ranges(&c);
	for (int k = 0; k < 4; k++) {
		size_t len = 0;
		char *want = text_of(&imp, &j, k, &len);
		if (lb_stop_work()) { /* Ctrl-C: a text cut short is no difference */
			free(want);
			rc = LB_ECANCELED;
			goto out;
		}
		same_text(&c, dir, files[k], want ? want : "", want ? len : 0);
		free(want);
	}
	double span = (double)(imp.last_ns - imp.first_ns) / 1e9;
	figure(&c, "clients", imp.lanes, true, 0);
	figure(&c, "keys", imp.keys.n, true, 0);
	figure(&c, "named_clients", imp.clients.n, true, 0);
	figure(&c, "elapsed_s", span, true, 0);
	figure(&c, "sections", (double)v.sections, true, 0);
	figure(&c, "throughput_per_s", span > 0 ? (double)imp.n / span : 0, true, 0);
	for (int k = 0; k < 3; k++)
		figure(&c, (const char *[]){ "acquire_p50_us", "acquire_p99_us", "acquire_max_us" }[k],
		       0, false, 0);
	figure(&c, "overlaps", (double)v.overlaps, true, 0);
	figure(&c, "overlap_ms", v.overlap_ms, true, 0);
	figure(&c, "max_holders", v.max_holders, true, 0);
	figure(&c, "overlaps_certain", (double)j.certain, true, 0);
	figure(&c, "overlaps_possible", (double)j.possible, true, 0);
	figure(&c, "fence_regressions", (double)j.fence_certain, j.fenced, 0);
	figure(&c, "fence_regressions_possible", (double)j.fence_possible, j.fenced, 0);
	enum lb_class cls = lb_import_class(&imp, &j, why, sizeof(why));
	for (char *p = why; *p; p++)
		if (*p == ',')
			*p = ';';
	text(&c, "observed", lb_class_name(cls));
	text(&c, "observed_why", why);
	check_json(&c, dir);
out:
	lb_ujudgement_free(&j);
	lb_import_free(&imp);
	return rc;
}

int lb_verify_run(const char *dir, FILE *out, struct lb_verify *result)
{
	struct run_in in = { .n = 0 };
	struct lb_verdict v;
	double lost, lost_max;
	int rc;

	memset(result, 0, sizeof(*result));
	if ((rc = read_run(dir, &in)) == 0 && lb_summary_get(&in.s, "imported_from")) {
		rc = verify_imported(dir, out, result, &in);
		run_in_free(&in);
		return rc;
	}
	if (rc < 0 || (rc = judge_again(dir, &in, &v)) < 0) {
		run_in_free(&in);
		return rc;
	}
	struct ctx c = { .s = &in.s, .out = out, .v = result };
	if (out)
		lb_esc_fprintf(out, LB_LANG_TERM, "check %s (%zu sections, %d clients, %d keys)\n", dir,
			       in.n, in.shape.clients, in.shape.keys);
	ranges(&c);
	check_verdict(&c, &in, &v);
	acquire_figures(&c, &in.lat, &in.cens);
	double attempts = num(&c, "attempts"), acquires = num(&c, "acquires");
	const char *wait = lb_summary_get(c.s, "wait");
	figure(&c, "retries_per_acquire", acquires > 0 ? (attempts - acquires) / acquires : 0,
	       acquires > 0 && !(wait && !strcmp(wait, "library")), 0);
	check_lost(&c, &lost, &lost_max);
	check_busy(&c, &in);
	int64_t sb_from = 0, sb_to = 0;
	int sb_server;
	bool split = lb_split_brain_window(in.sec, in.n, in.ev, in.n_ev, &sb_from, &sb_to, &sb_server);
	figure(&c, "split_brain_ms", (double)(sb_to - sb_from) / 1e6, split, 0);
	if (lb_summary_get(c.s, "demoted_primary_ms")) { /* absent from older runs */
		/* the run's end as elapsed_s writes it (1 µs): the time on a demoted
		 * primary may end there */
		int64_t demoted = lb_demoted_primary_ns(in.ev, in.n_ev,
							(int64_t)(num(&c, "elapsed_s") * 1e9));
		/* n/a where nothing watched the failovers (your cluster): the
		 * summary's word, as for busy_while_down */
		figure(&c, "demoted_primary_ms", (double)demoted / 1e6,
		       demoted >= 0 && known(&c, "demoted_primary_ms"), 0.001);
	}
	if (lb_summary_get(c.s, "figures_absent")) { /* a run written before it had none */
		char absent[200];
		lb_figures_absent(c.s, in.ev, in.n_ev, absent, sizeof(absent));
		text(&c, "figures_absent", absent);
	}
	cost(&c, in.sec, in.n, &in.shape);
	crowd(&c, &in);
	outcome(&c, &in, &v, lost, lost_max);
	check_json(&c, dir);
	check_settings(&c, dir);
	run_in_free(&in);
	return rc;
}
