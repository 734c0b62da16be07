#include "figures.h"
#include "params.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Counts of a run: far beyond any run (50000 sections a second for two days
 * is 10^10), far below a wrapped 64-bit counter (about 1.8 x 10^19). */
#define COUNT 1e12
#define SECONDS (86400.0 * 2)  /* the longest run readers.h accepts */
#define MS (SECONDS * 1000 * LB_MAX_KEYS)
#define US 1e12                /* latency histogram: at most about 18 minutes */

static const char *const yes_no[] = { "yes", "no", NULL };
static const char *const recovered[] = { "yes", "no", "n/a", NULL };
static const char *const foreign_sources[] = { "server", "client", "n/a", NULL };
static const char *const stop_signals[] = { "-", "SIGINT", "SIGTERM", NULL };
static const char *const classes[] = { "safe", "overlap", "foreign-release", "deadlock",
				       "unavailable", "contained", "inconclusive", "interrupted",
				       NULL };
static const char *const expected[] = { "safe", "overlap", "foreign-release", "deadlock",
					"unavailable", "contained", "inconclusive", "-", NULL };

#define TEXT(n, w, src) { .name = n, .kind = LB_FD_TEXT, .unit = "", .words = w, .source = src }
#define INT(n, u, lo, hi, na_, src) { .name = n, .kind = LB_FD_INT, .unit = u, .min = lo, \
				      .max = hi, .na = na_, .source = src }
#define NUM(n, u, d, lo, hi, na_, src) { .name = n, .kind = LB_FD_NUM, .unit = u, .digits = d, \
					 .min = lo, .max = hi, .na = na_, .source = src }
#define HIGH(n) { .name = n, .kind = LB_FD_NUM, .unit = "us", .digits = 0, .min = 0, .max = US, \
		  .na = true, .inf = true, .source = LB_FD_RECOMPUTED }
/* A run parameter's column: its kind, unit and range are its row's in
 * params.c (filled in by fill()). */
#define PARAM(n) { .name = n, .source = LB_FD_SETTING }

static const struct lb_figdef fixed[] = {
	TEXT("strategy", NULL, LB_FD_SETTING),
	TEXT("scenario", NULL, LB_FD_SETTING),
	PARAM("clients"),
	PARAM("duration_s"),
	PARAM("ttl_ms"),
	PARAM("hold_ms"),
	INT("sections", "sections", 0, COUNT, false, LB_FD_RECOMPUTED),
	NUM("throughput_per_s", "sections/s", 2, 0, 1e7, false, LB_FD_RECOMPUTED),
	NUM("acquire_p50_us", "us", 0, 0, US, true, LB_FD_RECOMPUTED),
	NUM("acquire_p99_us", "us", 0, 0, US, true, LB_FD_RECOMPUTED),
	NUM("acquire_max_us", "us", 0, 0, US, true, LB_FD_RECOMPUTED),
	INT("acquire_timeouts", "acquires", 0, COUNT, false, LB_FD_MEASURED),
	INT("overlaps", "sections", 0, COUNT, false, LB_FD_RECOMPUTED),
	NUM("overlap_ms", "ms", 3, 0, MS, false, LB_FD_RECOMPUTED),
	INT("max_holders", "clients", 0, LB_MAX_CLIENTS, false, LB_FD_RECOMPUTED),
	INT("lost_updates", "writes", 0, COUNT, true, LB_FD_RECOMPUTED),
	INT("lost_updates_max", "writes", 0, COUNT, true, LB_FD_RECOMPUTED),
	INT("foreign_releases", "releases", 0, COUNT, true, LB_FD_RECOMPUTED),
	INT("lost_leases", "releases", 0, COUNT, false, LB_FD_RECOMPUTED),
	INT("leases_lapsed", "sections", 0, COUNT, true, LB_FD_RECOMPUTED),
	INT("notices_missed", "sections", 0, COUNT, true, LB_FD_RECOMPUTED),
	NUM("notice_lag_p50_ms", "ms", 3, -MS, MS, true, LB_FD_RECOMPUTED),
	NUM("notice_lag_max_ms", "ms", 3, -MS, MS, true, LB_FD_RECOMPUTED),
	NUM("orphan_ms", "ms", 3, 0, MS, false, LB_FD_RECOMPUTED),
	TEXT("recovered", recovered, LB_FD_RECOMPUTED),
	NUM("cmds_per_section", "commands/section", 2, 0, 1e9, true, LB_FD_RECOMPUTED),
	NUM("fairness", "Jain index", 4, 0, 1, true, LB_FD_RECOMPUTED),
	PARAM("keys"),
	PARAM("nodes"),
	PARAM("wait"),
	PARAM("work"),
	PARAM("think_ms"),
	PARAM("seed"),
	TEXT("variant", NULL, LB_FD_SETTING),
	TEXT("library_version", NULL, LB_FD_SETTING),
	NUM("elapsed_s", "s", 6, 0, SECONDS, false, LB_FD_MEASURED),
	NUM("acquire_p90_us", "us", 0, 0, US, true, LB_FD_RECOMPUTED),
	NUM("acquire_p999_us", "us", 0, 0, US, true, LB_FD_RECOMPUTED),
	NUM("retries_per_acquire", "attempts/acquire", 3, 0, COUNT, true, LB_FD_RECOMPUTED),
	INT("canary_violations", "sections", 0, COUNT, true, LB_FD_MEASURED),
	INT("counter_writes", "writes", 0, COUNT, false, LB_FD_MEASURED),
	INT("counter_final", "writes", 0, COUNT, true, LB_FD_MEASURED),
	INT("applied_writes", "writes", 0, COUNT, true, LB_FD_MEASURED),
	INT("holder_deaths", "sections", 0, COUNT, false, LB_FD_RECOMPUTED),
	TEXT("interrupted", yes_no, LB_FD_MEASURED),
	INT("acquire_errors", "attempts", 0, COUNT, false, LB_FD_MEASURED),
	INT("busy_answers", "attempts", 0, COUNT, true, LB_FD_RECOMPUTED),
	INT("busy_while_down", "attempts", 0, COUNT, true, LB_FD_RECOMPUTED),
	INT("uncertain_writes", "writes", 0, COUNT, false, LB_FD_MEASURED),
	INT("stale_writes_rejected", "writes", 0, COUNT, false, LB_FD_MEASURED),
	INT("writes_aborted", "sections", 0, COUNT, false, LB_FD_MEASURED),
	INT("handoffs", "releases", 0, COUNT, false, LB_FD_RECOMPUTED),
	NUM("handoff_p50_us", "us", 3, 0, US, true, LB_FD_RECOMPUTED),
	NUM("handoff_p99_us", "us", 3, 0, US, true, LB_FD_RECOMPUTED),
	INT("client_rss_kb", "KiB", 0, 1e9, true, LB_FD_MEASURED),
	INT("client_pss_kb", "KiB", 0, 1e9, true, LB_FD_MEASURED),
	INT("client_private_kb", "KiB", 0, 1e9, true, LB_FD_MEASURED),
	INT("adapter_pss_kb", "KiB", 0, 1e9, true, LB_FD_MEASURED),
	NUM("cpu_us_per_section", "us", 1, 0, 1e12, true, LB_FD_MEASURED),
	NUM("adapter_cpu_us_per_section", "us", 1, 0, 1e12, true, LB_FD_MEASURED),
	NUM("arrival_spread_ms", "ms", 3, 0, MS, true, LB_FD_MEASURED),
	NUM("last_served_ms", "ms", 3, 0, MS, true, LB_FD_RECOMPUTED),
	INT("served_clients", "clients", 0, LB_MAX_CLIENTS, false, LB_FD_RECOMPUTED),
	INT("gave_up_clients", "clients", 0, LB_MAX_CLIENTS, false, LB_FD_MEASURED),
	INT("still_waiting_clients", "clients", 0, LB_MAX_CLIENTS, false, LB_FD_MEASURED),
	NUM("gave_up_attempts", "attempts", 2, 0, COUNT, true, LB_FD_MEASURED),
	INT("gave_up_attempts_max", "attempts", 0, COUNT, true, LB_FD_MEASURED),
	NUM("gave_up_after_ms", "ms", 3, 0, MS, true, LB_FD_MEASURED),
	NUM("lock_cmds_per_s", "commands/s", 2, 0, COUNT, true, LB_FD_RECOMPUTED),
	NUM("connections_per_client", "connections", 2, 0, 1e4, true, LB_FD_MEASURED),
	NUM("split_brain_ms", "ms", 3, 0, MS, true, LB_FD_RECOMPUTED),
	NUM("demoted_primary_ms", "ms", 3, 0, MS, true, LB_FD_RECOMPUTED),
	INT("attempts", "attempts", 0, COUNT, false, LB_FD_MEASURED),
	INT("acquires", "acquires", 0, COUNT, false, LB_FD_MEASURED),
	INT("lock_commands", "commands", 0, COUNT, true, LB_FD_MEASURED),
	TEXT("lock_commands_note", NULL, LB_FD_MEASURED),
	NUM("lock_cmds_per_held_s", "commands/s", 2, 0, 1e9, true, LB_FD_RECOMPUTED),
	NUM("lock_cmds_bound_per_s", "commands/s", 2, 0, 1e15, true, LB_FD_RECOMPUTED),
	NUM("cmds_per_s_holding", "commands/s", 2, 0, 1e9, true, LB_FD_MEASURED),
	NUM("cmds_per_s_waiting", "commands/s", 2, 0, 1e9, true, LB_FD_MEASURED),
	TEXT("expected", expected, LB_FD_SETTING),
	TEXT("observed", classes, LB_FD_RECOMPUTED),
	TEXT("observed_why", NULL, LB_FD_RECOMPUTED),
	TEXT("faults_unfired", NULL, LB_FD_MEASURED),
	INT("acquire_censored", "calls", 0, COUNT, false, LB_FD_RECOMPUTED),
	TEXT("stop_signal", stop_signals, LB_FD_MEASURED),
	TEXT("acquire_lower_bounds", NULL, LB_FD_RECOMPUTED),
	/* each acquire figure's upper bound: with the waits cut off by the run's
	 * end at +infinity ("inf" when one of them is at the figure's rank); the
	 * figure above is the lower, with them at their length so far */
	HIGH("acquire_p50_high_us"),
	HIGH("acquire_p90_high_us"),
	HIGH("acquire_p99_high_us"),
	HIGH("acquire_p999_high_us"),
	HIGH("acquire_max_high_us"),
	/* the figures whose n/a says the event never happened ("-": none) */
	TEXT("figures_absent", NULL, LB_FD_RECOMPUTED),
	TEXT("foreign_source", foreign_sources, LB_FD_RECOMPUTED),
	INT("foreign_releases_client", "releases", 0, COUNT, true, LB_FD_RECOMPUTED),
	INT("foreign_unattributed", "releases", 0, COUNT, true, LB_FD_RECOMPUTED),
	INT("key_events", "events", 0, COUNT, true, LB_FD_MEASURED),
	INT("events_dropped", "events", 0, COUNT, false, LB_FD_MEASURED),
	/* an imported production history (import_dir.h): its clients by name, the
	 * clocks' uncertainty it was judged with, and what that judgement found */
	TEXT("imported_from", NULL, LB_FD_SETTING),
	INT("named_clients", "clients", 0, COUNT, false, LB_FD_RECOMPUTED),
	NUM("clock_uncertainty_ms", "ms", 6, 0, 3600000, false, LB_FD_SETTING),
	INT("overlaps_certain", "pairs", 0, COUNT, false, LB_FD_RECOMPUTED),
	INT("overlaps_possible", "pairs", 0, COUNT, false, LB_FD_RECOMPUTED),
	INT("fence_regressions", "sections", 0, COUNT, true, LB_FD_RECOMPUTED),
	INT("fence_regressions_possible", "sections", 0, COUNT, true, LB_FD_RECOMPUTED),
	/* lock operations sent with no reply (attempts.csv and history.csv say
	 * indeterminate): each may have taken effect */
	INT("indeterminate_ops", "operations", 0, COUNT, false, LB_FD_RECOMPUTED),
	/* a lock key the servers held while no client had it (keyevents.csv
	 * against the sections): summed, and the longest stretch */
	NUM("held_no_holder_ms", "ms", 3, 0, MS, true, LB_FD_RECOMPUTED),
	NUM("held_no_holder_max_ms", "ms", 3, 0, MS, true, LB_FD_RECOMPUTED),
};

#define N_FIXED (sizeof(fixed) / sizeof(fixed[0]))

/* The figures of an event that may never happen, and what their absence is
 * (figures.h): every other figure's n/a is "not measured". An acquire
 * figure is not one of them: a run without an acquire call measured nothing
 * of the lock. */
static const struct { const char *name, *absent; } absences[] = {
	{ "split_brain_ms", "no split brain: no section was entered on a second primary before "
			    "the last one on the first" },
	{ "handoff_p50_us", "no hand-off: no section was handed from a releaser to a waiting "
			    "client" },
	{ "handoff_p99_us", "no hand-off: no section was handed from a releaser to a waiting "
			    "client" },
	{ "gave_up_after_ms", "nobody gave up" },
	{ "gave_up_attempts", "nobody gave up" },
	{ "gave_up_attempts_max", "nobody gave up" },
};

/* fixed, with the run parameters' columns filled in from their rows, then the
 * columns of parameters added since (results.c writes them last, in table
 * order). */
static struct lb_figdef table[N_FIXED + LB_P_COUNT];
static size_t n_table;
static pthread_once_t filled = PTHREAD_ONCE_INIT;

static void from_param(struct lb_figdef *f, const struct lb_param *p)
{
	*f = (struct lb_figdef){ .name = p->column, .kind = LB_FD_TEXT, .unit = "",
				 .source = LB_FD_SETTING };
	switch (p->type) {
	case LB_PT_INT:
	case LB_PT_MS:
		*f = (struct lb_figdef)INT(p->column, p->unit, (double)p->min, (double)p->max, false,
					    LB_FD_SETTING);
		break;
	case LB_PT_U64: /* any seed: a matrix adds its repetition to the one given */
		*f = (struct lb_figdef)INT(p->column, p->unit, 0, 18446744073709551615.0, false,
					    LB_FD_SETTING);
		break;
	case LB_PT_SECONDS:
		*f = (struct lb_figdef)NUM(p->column, p->unit, -1, (double)p->min, (double)p->max,
					    false, LB_FD_SETTING);
		break;
	case LB_PT_WORDS:
		f->words = p->words;
		break;
	case LB_PT_FLAG:
		f->words = yes_no;
		break;
	case LB_PT_MS_RANGE:
	case LB_PT_WAIT:
		break;
	}
}

static void fill(void)
{
	size_t n;
	const struct lb_param *t = lb_params(&n);

	for (size_t i = 0; i < N_FIXED; i++) {
		const struct lb_param *p = lb_param_by_column(fixed[i].name);
		if (p && fixed[i].source == LB_FD_SETTING)
			from_param(&table[n_table++], p);
		else
			table[n_table++] = fixed[i];
		for (size_t k = 0; k < sizeof(absences) / sizeof(absences[0]); k++)
			if (!strcmp(absences[k].name, table[n_table - 1].name))
				table[n_table - 1].absent = absences[k].absent;
	}
	for (size_t i = 0; i < n; i++) {
		bool listed = false;
		for (size_t j = 0; t[i].column && j < N_FIXED; j++)
			listed |= !strcmp(fixed[j].name, t[i].column);
		if (t[i].column && !listed)
			from_param(&table[n_table++], &t[i]);
	}
}

const struct lb_figdef *lb_figdefs(size_t *n)
{
	pthread_once(&filled, fill);
	*n = n_table;
	return table;
}

const struct lb_figdef *lb_figdef_find(const char *name)
{
	pthread_once(&filled, fill);
	for (size_t i = 0; i < n_table; i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	return NULL;
}

static int refuse(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return LB_EINVAL;
}

static void range_text(const struct lb_figdef *f, char *buf, size_t len)
{
	snprintf(buf, len, "%.15g to %.15g%s%s%s", f->min, f->max, f->unit[0] ? " " : "", f->unit,
		 f->na ? ", or n/a" : "");
}

int lb_figdef_format(const struct lb_figdef *f, double v, bool known, char *buf, size_t len,
		     char *why, size_t why_len)
{
	char range[96];

	snprintf(buf, len, "n/a");
	range_text(f, range, sizeof(range));
	if (!known)
		return f->na ? 0 : refuse(why, why_len, "not measured, and %s is never n/a", f->name);
	if (f->kind == LB_FD_TEXT)
		return refuse(why, why_len, "%s is text, not a number", f->name);
	if (f->inf && isinf(v) && v > 0) {
		snprintf(buf, len, "inf");
		return 0;
	}
	if (!isfinite(v) || v < f->min || v > f->max)
		return refuse(why, why_len, "%s = %.17g is outside its range (%s)", f->name, v, range);
	v += 0.0; /* -0.0 is written 0: "-0" is never a figure lockbench writes (util.h) */
	if (f->kind == LB_FD_INT)
		snprintf(buf, len, "%.0f", v);
	else if (f->digits < 0)
		snprintf(buf, len, "%g", v);
	else
		snprintf(buf, len, "%.*f", f->digits, v);
	return 0;
}

int lb_figdef_check(const struct lb_figdef *f, const char *value, char *why, size_t why_len)
{
	char range[96];

	range_text(f, range, sizeof(range));
	if (f->kind == LB_FD_TEXT) {
		if (!f->words)
			return 0;
		for (const char *const *w = f->words; *w; w++)
			if (!strcmp(*w, value))
				return 0;
		return refuse(why, why_len, "'%.40s' is not one of the values %s takes", value, f->name);
	}
	if (!strcmp(value, "n/a"))
		return f->na ? 0 : refuse(why, why_len, "n/a, but %s is always measured", f->name);
	if (!strcmp(value, "inf"))
		return f->inf ? 0 : refuse(why, why_len, "inf, but %s is always bounded", f->name);
	/* as lockbench writes it (util.h): no '+0', ' 94', '-0' or '0684' */
	double v;
	if (!lb_written_number(value) || !lb_parse_double(value, &v))
		return refuse(why, why_len, "'%.40s' is not a number as lockbench writes it", value);
	errno = 0;
	if (f->kind == LB_FD_INT && value[0] != '-' && !strpbrk(value, ".e") &&
	    strtoull(value, NULL, 10) == ULLONG_MAX && errno == ERANGE)
		v = INFINITY; /* a seed past 2^64 - 1, which a double would round into range */
	if (v < f->min || v > f->max)
		return refuse(why, why_len, "%s is outside its range (%s)", value, range);
	const char *dot = strchr(value, '.');
	if (f->kind == LB_FD_INT && (dot || strpbrk(value, "eE")))
		return refuse(why, why_len, "'%.40s' is not an integer", value);
	if (f->kind == LB_FD_NUM && f->digits >= 0) {
		int written = dot ? (int)strlen(dot + 1) : 0;
		if (written != f->digits || strpbrk(value, "eE"))
			return refuse(why, why_len, "'%.40s' has %d decimals; %s is written with %d",
				      value, written, f->name, f->digits);
	}
	return 0;
}

bool lb_figdef_agrees(const struct lb_figdef *f, const char *value, double got, bool known,
		      double slack)
{
	bool na = !strcmp(value, "n/a");

	if (!known || na)
		return !known && na;
	if (isinf(got) || !strcmp(value, "inf"))
		return isinf(got) && got > 0 && !strcmp(value, "inf");
	double want;
	if (!lb_written_number(value) || !lb_parse_double(value, &want))
		return false;
	if (f->kind == LB_FD_INT)
		return want == got;
	double half = f->digits >= 0 ? 0.5 * pow(10, -f->digits) : 0;
	/* the rounding of the written digits, and of binary fractions around them */
	return fabs(got - want) <= half * (1 + 1e-9) + slack + 1e-12 * fabs(got);
}
