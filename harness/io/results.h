/*
 * results.h - a run's files: summary.csv (header + one row), history.csv,
 * latency.csv and meta.txt; and reading summary/history back for `check`.
 */
#ifndef LB_RESULTS_H
#define LB_RESULTS_H

#include <stdarg.h>
#include <stdio.h>

#include "run.h"

#define LB_HISTORY_HEADER "client,seq,acquire_start_ns,enter_ns,exit_ns,release_ns,outcome,fence,nodes," \
	"lease_end_ns,token"
/* The headers before the lease_end_ns and token columns, and before the nodes
 * column: such files are still read (lease ends, tokens, nodes unknown). */
#define LB_HISTORY_HEADER_9 "client,seq,acquire_start_ns,enter_ns,exit_ns,release_ns,outcome,fence,nodes"
#define LB_HISTORY_HEADER_8 "client,seq,acquire_start_ns,enter_ns,exit_ns,release_ns,outcome,fence"
/* waiters.csv: each client's acquire calls after its last enter that did not enter */
#define LB_WAITERS_HEADER "client,calls,start_ns,last_try_ns,end_ns,ended"
#define LB_SUMMARY_MAX_FIELDS 128

/* A summary as ordered name=value pairs. */
struct lb_summary;
/* Append the field @name (its value from @fmt, and @why it is n/a, when not
 * NULL) to @s; nothing past LB_SUMMARY_MAX_FIELDS. */
void lb_summary_vput(struct lb_summary *s, const char *name, const char *why, const char *fmt,
		     va_list ap);

struct lb_summary {
	size_t n;
	char name[LB_SUMMARY_MAX_FIELDS][32];
	char value[LB_SUMMARY_MAX_FIELDS][200];
	char why[LB_SUMMARY_MAX_FIELDS][320]; /* for a value "n/a": why it was not measured
						 (summary.json says it) */
	int invalid;               /* lb_summary_build: values outside their range (a bug;
				      figures.h), written n/a; the run fails */
};

/*
 * Split brain on the Sentinel topology: the stretch in which two servers
 * granted the lock, from the first section entered on a server other than
 * the first primary to the last one entered on the first primary after it
 * (a section's server is its client's latest primary-seen event before it
 * entered). true with the bounds (ns since t0, and *server the other one's
 * part), false when no such stretch was measured.
 */
bool lb_split_brain_window(const struct lb_section *sec, size_t n, const struct lb_event *ev,
			   size_t n_ev, int64_t *from, int64_t *to, int *server);

/* Did any client record which server it took for the primary (a
 * primary-seen event)? Without one, which server granted is not known. */
bool lb_primaries_seen(const struct lb_event *ev, size_t n_ev);

/*
 * How long clients used a primary that had been demoted: the time in which
 * at least one client took for the primary (its latest primary-seen event) a
 * server that was no longer one, once the Sentinels switched to another
 * (+switch-master, or the cluster's failover) or told it to follow
 * (+convert-to-slave), until that client took another server or @end_ns.
 * ns, or -1 when no client recorded which server it took (a library, one
 * server).
 */
int64_t lb_demoted_primary_ns(const struct lb_event *ev, size_t n_ev, int64_t end_ns);

void lb_summary_build(const struct lb_run_cfg *cfg, const struct lb_run_result *res,
		      struct lb_summary *s);
/* The q-quantile (q >= 1: the maximum) of every acquire call of @res, in µs:
 * the ones that entered and the ones that never did (res->censored, each as
 * long as it waited): the lower end of where it lies
 * (lb_hist_quantile_interval_us). *lower: the upper end is above it, so the
 * true figure is this or more. */
double lb_acquire_quantile_us(const struct lb_run_result *res, double q, bool *lower);
/* The @q-quantile acquire figure as text: "12.34 ms", "[12.34, 14.10] ms"
 * when waits cut off by the run's end leave it an interval, ">= 12.34 ms"
 * when one of them holds its rank (no upper end), "n/a" with no acquire. */
void lb_acquire_text(const struct lb_run_result *res, double q, char *buf, size_t len);
/* The figures of @s (its columns so far) that read n/a because their event
 * never happened, "split_brain_ms;handoff_p99_us" or "-", summary.csv's
 * figures_absent: a hand-off's with no hand-off (handoffs 0), a give-up's
 * with nobody given up (gave_up_clients 0), split_brain_ms when a client
 * said which server granted (a primary-seen event in @ev) and none was a
 * second primary. Any other n/a was not measured. */
void lb_figures_absent(const struct lb_summary *s, const struct lb_event *ev, size_t n_ev,
		       char *buf, size_t len);
/* NULL when absent. */
const char *lb_summary_get(const struct lb_summary *s, const char *name);
/* lb_summary_get for struct lb_observed (scenario.h) and thresholds, as
 * lb_threshold_judge reads it (threshold.h): @summary is a struct
 * lb_summary; an acquire figure that is not exact comes as "[LOW,HIGH]" (its
 * acquire_*_high_us column the upper end) or ">=LOW" (that column "inf"), a
 * figures_absent figure as "none". Valid until the next call. */
const char *lb_summary_value(const void *summary, const char *name);
/* The field as a number, or @dflt when absent. */
/* meta.txt's "setting NAME: VALUE" lines (results.c): the names, one
 * value's text as the line holds it, and the lines from a summary. */
extern const char *const lb_meta_settings[];
void lb_meta_setting_text(const char *value, char *buf, size_t len);
void lb_meta_settings_write(FILE *f, const struct lb_summary *s);
double lb_summary_num(const struct lb_summary *s, const char *name, double dflt);

/*
 * summary.json: the summary for scripts, every column of summary.csv in its
 * order, with its unit (figures.h) and, for n/a, null and the reason:
 *   {"format": "lockbench-summary/1",
 *    "figures": {"clients": {"value": 8, "unit": "clients"},
 *                "acquire_p99_us": {"value": null, "unit": "us", "why": "..."},
 *                "strategy": {"value": "set-nx-px"}, ...}}
 * A number is the text summary.csv holds, so the two read the same.
 */
void lb_summary_json(FILE *f, const struct lb_summary *s);
/* summary.csv: the header, then the row, each value a CSV field (RFC 4180);
 * a control character in a value is written as a space (one row). */
void lb_summary_csv(FILE *f, const struct lb_summary *s);

/* Claim @dir (and its parents) for a run's files: lb_owned_claim (owned.h)
 * makes it or takes it empty, marked; a directory that holds anything else
 * is refused (LB_EINVAL, said), never written into. LB_ESYS (said) when it
 * cannot be written. */
int lb_results_prepare_dir(const char *dir);
/* Write all files of a run into cfg->out_dir; message naming the path on
 * failure. LB_EINVAL, after writing them, when @s holds invalid values. */
int lb_results_write(const struct lb_run_cfg *cfg, const struct lb_run_result *res,
		     const struct lb_summary *s);
/* foreign_releases as printed: the number, or n/a (foreign_source). */
void lb_foreign_text(const struct lb_verdict *v, char *buf, size_t len);
/* Print the readable summary table (@s: the run's summary, its figures as
 * the expectation reads them). */
void lb_results_print(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *res,
		      const struct lb_summary *s);

/* keyevents.csv: what the lock servers did to the lock keys (foreign.h), in
 * the watcher's order; the set's value is its hash. */
#define LB_KEY_EVENTS_HEADER "t_ns,server,port,node,key,event,value,ttl_ms"
void lb_key_events_write(FILE *f, const struct lb_run_result *res);

/* events.csv: t_ns,event,client,node,value */
void lb_events_write(FILE *f, const struct lb_run_result *res);
/* Reading them back: readers.h. */

/* Write the run's command line, seed, versions and machine description. */
/* run --hosts: each host's clock bound and the overlaps judged with them,
 * a line each ("host NAME: ...", "hosts overlaps: ..."); nothing otherwise. */
void lb_remote_bounds_write(FILE *f, const struct lb_run_result *res);
int lb_meta_write(FILE *f, const struct lb_run_cfg *cfg, const struct lb_run_result *res);

#endif
