/*
 * oracle.h - the safety oracle: pure functions over a history. It trusts no
 * lock: only the facts of when each client was inside (Jepsen's approach,
 * an acquire/release history checked against a mutex).
 */
#ifndef LB_ORACLE_H
#define LB_ORACLE_H

#include <stdbool.h>

#include "history.h"
#include "shared_event.h"

enum lb_recovered { LB_REC_NA, LB_REC_YES, LB_REC_NO };
const char *lb_recovered_name(enum lb_recovered r);

/* Where foreign_releases comes from: the releases' own outcomes (what
 * lb_oracle_judge counts), the servers' key events (foreign.h: the figure
 * reported where lockbench started the servers), or nowhere (n/a: a library's
 * release on servers lockbench did not start). */
enum lb_foreign_source { LB_FOREIGN_CLIENT, LB_FOREIGN_SERVER, LB_FOREIGN_NA };
const char *lb_foreign_source_name(enum lb_foreign_source s); /* client, server, n/a */

struct lb_verdict {
	uint64_t sections;
	uint64_t completed;      /* sections whose release returned */
	uint64_t overlaps;       /* sections that began while another client's was open */
	double overlap_ms;       /* time with two or more clients inside, summed over keys */
	int max_holders;         /* most clients inside one key's section at once */
	uint64_t foreign_releases; /* from foreign_source; 0 when n/a */
	uint64_t foreign_client;   /* releases whose outcome says they deleted another's lock */
	uint64_t foreign_unattributed; /* the servers' ones with no release in flight */
	enum lb_foreign_source foreign_source;
	uint64_t lost_leases;    /* sections whose release found the lock gone, and (the
				    servers watched) those whose lease a server ended while
				    they held it (lb_foreign_verdict) */
	uint64_t leases_lapsed;  /* the servers': an `expired` of the key while inside */
	uint64_t lost_leases_servers; /* what leases_lapsed added to lost_leases (sections
				    whose own release did not say lost) */
	bool leases_lapsed_known; /* the servers' events were judged */
	/* the notices of the leases the servers ended (lb_notice_verdict): known
	   when the servers' events were judged and no event was dropped */
	bool notices_known;
	uint64_t leases_ended;   /* sections whose lease a server ended while inside */
	uint64_t notices_missed; /* of which the holder was not told before its exit */
	uint64_t notices_told;   /* of which it was: the lags' count */
	double notice_lag_p50_ms, notice_lag_max_ms; /* the server's end -> the holder told
				    (negative: told before the server ended it); of the
				    told ones, n/a when none */
	/* a lock key the servers held while no client had it (lb_unattended_verdict):
	   summed over the run, and the longest stretch; known as the servers' events */
	double held_no_holder_ms, held_no_holder_max_ms;
	uint64_t holder_deaths;  /* sections that ended with the holder killed */
	double orphan_ms;        /* longest time from a holder's death to the next acquire */
	enum lb_recovered recovered;
	double fairness;         /* Jain's index over per-client section counts */
	uint64_t handoffs;       /* releases followed by a waiter's enter */
	double handoff_p50_us;   /* release returned -> the next waiter inside */
	double handoff_p99_us;
	int64_t undecided_ns;    /* recovered n/a after a death: that death (the first such),
				    else -1 */
};

/* What the oracle judges: a run's sections, its waiters and its lease. */
struct lb_history {
	const struct lb_section *s;
	size_t n;
	const struct lb_waiter *w; /* NULL when none were recorded */
	size_t n_w;
	int clients;
	int64_t end_ns;            /* when the run ended */
	int64_t ttl_ns;            /* the lease the run asked for; <= 0 when not known */
};

/*
 * Judge the history @h (docs/index.md, "How the oracle counts"). Sections
 * touching end to end (one's exit == the next's enter) do not overlap.
 * Recovery: a holder's death followed by an enter of its lock came back; one
 * followed by none, when a waiter of that lock began an attempt a TTL or more
 * after the death, never came back (`recovered` no); otherwise nobody can
 * tell (n/a, and undecided_ns says which death).
 * @per_client, if not NULL, receives each client's section count (h->clients
 * long). Returns 0, or LB_ENOMEM.
 */
int lb_oracle_judge_history(const struct lb_history *h, struct lb_verdict *v, uint64_t *per_client);
/* The same for @n sections alone, with no waiters and no lease known: a death
 * not followed by an enter is undecided, never "never came back". */
int lb_oracle_judge(const struct lb_section *s, size_t n, int clients, int64_t end_ns,
		    struct lb_verdict *v, uint64_t *per_client);

/* qsort_r comparator of indexes (size_t) into the sections at @base: by
 * key, then enter, client and seq. */
int lb_section_ix_by_enter(const void *pa, const void *pb, void *base);

/* When @s ended: its exit (never before its enter), or @end_ns for a section
 * still open at the end (exit_ns < 0). */
int64_t lb_section_exit(const struct lb_section *s, int64_t end_ns);

/* Jain's fairness index of @n counts: (sum x)^2 / (n * sum x^2); 1 for all equal. */
double lb_jain(const uint64_t *x, size_t n);

/* Outcome classes of a run. */
enum lb_class { LB_CLASS_SAFE, LB_CLASS_OVERLAP, LB_CLASS_FOREIGN, LB_CLASS_DEADLOCK,
		LB_CLASS_UNAVAILABLE, LB_CLASS_CONTAINED, LB_CLASS_INCONCLUSIVE,
		LB_CLASS_INTERRUPTED, LB_CLASS_COUNT };
const char *lb_class_name(enum lb_class c);
int lb_class_parse(const char *s); /* -1 if unknown */

/* What a class is decided from: the oracle's verdict and the run's counts. */
struct lb_class_input {
	const struct lb_verdict *v;
	long long lost_min;      /* lost updates proven: acknowledged writes - final value */
	long long lost_max;      /* possible: as if every write of unknown outcome landed */
	uint64_t attempts;       /* acquire attempts, every client */
	uint64_t acquire_errors, acquire_timeouts;
	uint64_t stopped;        /* stale writes the fenced resource refused + sections that
				    aborted their write on a lost lease */
	const char *unfired;     /* the scenario's faults that never fired, or NULL */
	int interrupted;         /* the signal that stopped the run before its end, or 0 */
	const struct lb_coverage *cover; /* how long the clients spoke (NULL: all, to the end) */
};

/*
 * How much of a run its clients were there for. A client is silent from the
 * moment its adapter ended on its own (an adapter-died event: it exited,
 * closed its output, or the library took its process down), not when a
 * fault of the scenario killed it: a killed client did what the run asked.
 * @fraction is the clients' time before they fell silent over clients x
 * the run's length (1 when none did): the length asked for, since a run
 * whose clients are all gone ends early (@end_ns: what was asked, or what
 * ran when the run ends on its calls).
 */
struct lb_coverage {
	int clients, silent;      /* the run's clients; those silent before the end */
	int64_t first_ns;         /* when the first fell silent (-1: none) */
	double fraction;
};
/* A run is judged only when its clients were there for at least this share
 * of it and one of them at least reached its end (docs/running.md). */
#define LB_COVERAGE_MIN 0.5
void lb_run_coverage(const struct lb_event *ev, size_t n_ev, int clients, int64_t end_ns,
		     struct lb_coverage *cv);
bool lb_coverage_enough(const struct lb_coverage *cv);

/*
 * The class a run observed, from measurements only, first match wins:
 *   interrupted      a signal (Ctrl-C, SIGTERM) stopped the run before its end:
 *                    what ran is a shorter run than the one asked for, never
 *                    compared with an expectation (@why says what it showed)
 *   inconclusive     its clients fell silent (@cover: their adapters died or
 *                    closed their output) for too much of the run, or all
 *                    of them before its end: what it showed is not a run
 *                    of the lock (@why says what it showed)
 *   foreign-release  a release deleted another client's lock (never when
 *                    foreign releases are n/a: the sentences then say so)
 *   contained        two clients were inside at once, but no update can have
 *                    been lost (the upper end of the range is 0) and the
 *                    damage was stopped: the resource refused a stale fence,
 *                    or a section learned its lease was gone and aborted
 *   overlap          two clients were inside at once, or updates were lost
 *                    (the lower end of the range: proven, not possible)
 *   deadlock         a holder died and its lock never came back, though a
 *                    client tried it once the lease could have run out
 *   inconclusive     a holder died, nobody entered after, and nobody tried
 *                    the lock once its lease could have run out: whether it
 *                    came back is unknown (v->undecided_ns)
 *   unavailable      acquires failed (a node unreachable, or gave up) without overlap
 *   inconclusive     nothing shows the lock worked: no client attempted, no
 *                    critical section completed, or the scenario's fault never
 *                    fired (@unfired). Never "safe" without evidence;
 *                    no scenario may expect it, so --check never passes it
 *   safe             none of the above
 * @why (may be NULL) gets a sentence saying what decided it, and which end
 * of the lost-update range was used when the range mattered.
 */
enum lb_class lb_classify(const struct lb_class_input *in, char *why, size_t len);
/* How bad a class is, for "at worst" expectations (chaos): safe 0 ..
 * foreign-release 5, inconclusive 6 (worse than any: it proves nothing),
 * interrupted 7 (not even the run that was asked for). */
int lb_class_severity(enum lb_class c);

#endif
