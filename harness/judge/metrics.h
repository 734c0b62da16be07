/*
 * metrics.h - latency histograms, Redis command counts and the lock's cost.
 *
 * The histogram is log-linear: exact below 8 us, then 8 buckets per power of
 * two (at most 12.5% wide), from 1 us to about 18 minutes. Fixed size, so it
 * lives in shared memory and clients fill it without allocating.
 */
#ifndef LB_METRICS_H
#define LB_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "history.h"
#include "wait.h"

#define LB_HIST_BUCKETS 320

struct lb_hist {
	uint64_t counts[LB_HIST_BUCKETS];
	uint64_t n;
	uint64_t max_ns;
	uint64_t sum_ns;
};

void lb_hist_add(struct lb_hist *h, int64_t ns);
void lb_hist_merge(struct lb_hist *into, const struct lb_hist *from);
/* Bucket @i covers [low_us, high_us). */
void lb_hist_bucket_range(size_t i, uint64_t *low_us, uint64_t *high_us);
/* The q-quantile (0..1) in microseconds: the upper bound of the bucket that
 * holds it, capped at the maximum seen; 0 when empty. */
double lb_hist_quantile_us(const struct lb_hist *h, double q);
/*
 * The q-quantile of @done and @censored together, where each censored value
 * is only a lower bound (a wait cut off before it ended). When a censored
 * value lies at or below the quantile, the true quantile may be higher:
 * *lower is set and the lower edge of the quantile's bucket is returned (the
 * true quantile is at least that); otherwise as lb_hist_quantile_us. q >= 1
 * is the maximum, a lower bound when a censored value lies in the maximum's
 * bucket (or above it). 0 when empty.
 */
double lb_hist_quantile_censored_us(const struct lb_hist *done, const struct lb_hist *censored,
				    double q, bool *lower);
/*
 * The q-quantile of @done and @censored together as an interval, each
 * censored value being somewhere at or above what it holds: *@low with them
 * at what they hold (lb_hist_quantile_us of both), *@high with them at
 * +infinity: the value of @done at the same rank, as lb_hist_quantile_us
 * gives it (its bucket's upper edge, capped at the maximum of both, which is
 * all the run's files keep), or INFINITY when that rank falls on a censored
 * one (q >= 1: whenever one was censored). Without censored values both are
 * the quantile. 0 and 0 when empty.
 */
void lb_hist_quantile_interval_us(const struct lb_hist *done, const struct lb_hist *censored,
				  double q, double *low, double *high);

/* Total command calls on a server from its INFO commandstats reply text,
 * leaving out the INFO calls themselves (the measurement's own) and what
 * replication sends between servers (REPLCONF, PSYNC, SYNC). */
uint64_t lb_commandstats_calls(const char *info);

/* One server as one look at it saw it (INFO server, replication and
 * commandstats): which server process it was (run_id changes when it
 * restarts), its role, and the command calls it had counted. */
struct lb_srv_snap {
	bool answered;
	bool primary;
	char run_id[41];
	uint64_t calls;
};
/* Parse INFO text (the three sections in one reply, or several replies one
 * after another) into @s: false, @s not answered, when it names no run_id. */
bool lb_srv_snap_parse(const char *info, struct lb_srv_snap *s);

/*
 * The commands the lock's servers ran between two looks at each of @n
 * servers (@names, for the reason): the sum, over the servers that were a
 * primary at both looks, of what their counters grew by. The first @n_lock
 * are the lock nodes, each of which must answer as a primary at the first
 * look; a replica that stayed one holds no lock and is left out. Counted per
 * server process:
 * false, with the reason in @why, when the sum cannot be right: a primary
 * restarted (another run_id: its counters began again), stopped answering,
 * was demoted or its counters went back, or a replica was promoted (a
 * failover: whatever it counted as a replica cannot be told apart from the
 * lock's commands, and the old primary's last commands are gone with it).
 */
bool lb_lock_commands_between(const struct lb_srv_snap *before, const struct lb_srv_snap *after,
			      const char *const *names, size_t n, size_t n_lock, uint64_t *total,
			      char *why, size_t why_len);

/* Over @n sections, ended at @end_ns when still open: *@held_s the seconds
 * in which at least one was open (the union over every key), *@inside_s the
 * client-seconds inside (their sum). 0 or LB_ENOMEM. */
int lb_held_time(const struct lb_section *s, size_t n, int64_t end_ns, double *held_s,
		 double *inside_s);

/* What a run did, for the bound of its lock's traffic. */
struct lb_cost_shape {
	const struct lb_wait *wait;
	int clients, keys, nodes;
	int64_t ttl_ms;
	double elapsed_s;
	uint64_t sections;
	double inside_s;      /* client-seconds inside sections (lb_held_time) */
};

/*
 * The most commands a lock recipe of the run's shape sends its lock servers
 * in the whole run (docs/running.md, "The lock's own cost"), per lock node:
 * every client-second not inside a section counted as waiting, one attempt
 * per poll of the wait policy (notify: and one per waiter each release may
 * wake), LB_COST_PER_ATTEMPT commands each; every client-second inside as
 * extending every TTL/3, LB_COST_PER_EXTENSION each; LB_COST_PER_SECTION per
 * section for its acquire and release; and LB_COST_BACKGROUND a second for
 * what servers and Sentinels say to each other. A command inside a script
 * counts, as INFO commandstats counts it. LB_ENOTSUP, with the reason in
 * @why, when the wait policy gives no rate: try, an interval of 0 (a client
 * then tries again as fast as its round trips), library (the library's loop).
 */
#define LB_COST_PER_ATTEMPT 8.0    /* fair's queue script: 7 */
#define LB_COST_PER_SECTION 16.0   /* watch-multi: 10; fair's hand-off: about 12 */
#define LB_COST_PER_EXTENSION 3.0  /* a script and its GET and PEXPIRE */
#define LB_COST_BACKGROUND 10.0    /* three Sentinels: about 5 a second */
int lb_lock_cost_bound(const struct lb_cost_shape *c, double *commands, char *why, size_t why_len);
/* The lock's traffic is flagged when it is more than this many times the bound:
 * every recipe stays below 0.8 of it; redlock-universal's spinning using() at a
 * 1 s TTL measured 11 to 15 times it alone, 7.7 to 9.1 beside make test's other
 * lane (its adapter shares its client's CPU: docs/running.md). */
#define LB_COST_FLAG 3.0
bool lb_lock_cost_flagged(double commands, double bound);

/* The lock's cost as the summary writes it: per second a section was held. */
struct lb_lock_cost {
	bool rate_known;           /* the commands were counted and a section was held */
	double per_held_s;         /* commands / held seconds */
	bool bound_known;
	double bound_per_held_s;   /* the bound / held seconds */
	bool flagged;              /* commands > LB_COST_FLAG x the bound */
};
void lb_lock_cost_figures(uint64_t commands, bool commands_known, double bound, bool bound_known,
			  double held_s, struct lb_lock_cost *out);

#endif
