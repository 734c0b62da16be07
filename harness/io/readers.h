/*
 * readers.h - reading a run's files back (`lockbench check`, `report`):
 * summary.csv, history.csv, events.csv, latency.csv. Users edit, truncate
 * and share these files, so every reader checks every field and refuses
 * with the file, the line, the field and what was expected, e.g.
 *   history.csv:7: field enter_ns: expected an integer from 0 to ..., got '9999...'
 *   history.csv:9: field exit_ns: 3 is before enter_ns 4
 * Nothing reads past a buffer (a line longer than the limit is an error),
 * and what is allocated grows with the input, never beyond it.
 *
 * Each reader has a FILE* form, for a stream already open (the fuzzing
 * harnesses feed them from memory with fmemopen); @path only names it in
 * messages. All return 0, LB_EINVAL (malformed: the message is printed),
 * LB_ESYS (unreadable) or LB_ENOMEM.
 */
#ifndef LB_READERS_H
#define LB_READERS_H

#include <stdio.h>

#include "attempts.h"
#include "foreign.h"
#include "history.h"
#include "metrics.h"
#include "results.h"
#include "shared_event.h"

#define LB_READ_MAX_LINE 4096      /* a history, events or latency line */
#define LB_READ_MAX_SUMMARY 16384  /* the summary's header or row */

int lb_summary_read(const char *path, struct lb_summary *s);
int lb_summary_read_file(FILE *f, const char *path, struct lb_summary *s);
/* A summary field as an integer in [min, max]; a message naming the file and
 * the field when it is absent or out of range. */
int lb_summary_int(const struct lb_summary *s, const char *path, const char *name,
		   long long min, long long max, long long *out);
/* The same for a finite number. */
int lb_summary_double(const struct lb_summary *s, const char *path, const char *name,
		      double min, double max, double *out);

/* What the other files are read against: the run's clients, keys and
 * length (elapsed_s, or duration_s in older files), checked. */
struct lb_run_shape {
	int clients, keys;
	double elapsed_s;
	int64_t ttl_ms;
};
int lb_summary_shape(const struct lb_summary *s, const char *path, struct lb_run_shape *shape);

/* history.csv of a run of @clients clients on @keys keys (client i uses key
 * i % keys): a malloc'd array the caller frees, sorted by enter. */
int lb_history_read(const char *path, int clients, int keys, struct lb_section **out, size_t *n);
int lb_history_read_file(FILE *f, const char *path, int clients, int keys,
			 struct lb_section **out, size_t *n);

/* attempts.csv of a run of @clients clients: a malloc'd array; absent: none
 * and 0 (a run older than the file). */
int lb_attempts_read(const char *path, int clients, struct lb_try **out, size_t *n);

/* waiters.csv of a run of @clients clients on @keys keys: a malloc'd array
 * the caller frees, at most one row a client. Absent (a run written before
 * the file): 0 with *out NULL, so that the caller knows none were recorded. */
int lb_waiters_read(const char *path, int clients, int keys, struct lb_waiter **out, size_t *n);
int lb_waiters_read_file(FILE *f, const char *path, int clients, int keys,
			 struct lb_waiter **out, size_t *n);

/* events.csv (absent: zero events); caller frees. */
int lb_events_read(const char *path, int clients, struct lb_event **out, size_t *n);
int lb_events_read_file(FILE *f, const char *path, int clients, struct lb_event **out, size_t *n);

/* keyevents.csv of a run on @keys keys (the servers' key events, foreign.h),
 * in the file's order, which is each server's own: a malloc'd array the caller
 * frees. The file must exist. */
int lb_key_events_read(const char *path, int keys, struct lb_key_event **out, size_t *n);
int lb_key_events_read_file(FILE *f, const char *path, int keys, struct lb_key_event **out,
			    size_t *n);

/* latency.csv into a histogram (absent: empty). */
int lb_latency_read(const char *path, struct lb_hist *h);
int lb_latency_read_file(FILE *f, const char *path, struct lb_hist *h);

#endif
