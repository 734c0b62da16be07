/*
 * history.h - what happened in a run, as facts: one section per critical
 * section entered, on the monotonic clock (ns from the run's start).
 */
#ifndef LB_HISTORY_H
#define LB_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LB_LEASE_UNKNOWN ((int64_t)-1)
#define LB_LEASE_NEVER INT64_MAX

enum lb_outcome {
	LB_OUT_RELEASED, /* release removed our own lock */
	LB_OUT_LOST,     /* release found the lock gone or someone else's */
	LB_OUT_FOREIGN,  /* release deleted another client's lock */
	LB_OUT_ERROR,    /* release failed (Redis error) */
	LB_OUT_KILLED,   /* the holder died inside (or before releasing) */
	LB_OUT_CUT,      /* the harness killed it at the end of the run */
	LB_OUT_INDETERMINATE, /* release failed after it was sent, with no reply (a
			    timeout, a reset): it may have deleted the lock, or not (then
			    the lock stays until its TTL) */
	LB_OUT_COUNT
};

const char *lb_outcome_name(enum lb_outcome o);
/* -1 when @name is not an outcome. */
int lb_outcome_parse(const char *name);

struct lb_section {
	int client;
	int key;                  /* lock index: client % keys */
	uint32_t seq;             /* per client, from 0 */
	int64_t acquire_start_ns; /* acquire called */
	int64_t enter_ns;         /* acquire returned: the client believes it holds the lock */
	int64_t exit_ns;          /* the client stops believing (before release is sent),
				     or its death */
	int64_t release_ns;       /* release returned; -1 when no release happened */
	enum lb_outcome outcome;
	int64_t fence;            /* -1 unless the strategy issues fencing tokens */
	uint32_t nodes;           /* lock nodes it held (bit i: node i), 0 when not known */
	int64_t lease_end_ns;     /* when its lease ran out as the lock knew it at its exit
				     (its own extensions included); LB_LEASE_UNKNOWN (-1)
				     (or 0) when the lock cannot tell, LB_LEASE_NEVER (INT64_MAX)
				     for a lock without a TTL */
	uint64_t token;           /* lb_token_hash (plumbing.h) of the value its acquire wrote,
				     0 when not known */
};

/* Does @s say when its lease ran out (a time, not never, not unknown)? A
 * lease ends after its grant, so 0 (a section made without one) is unknown. */
static inline bool lb_lease_known(const struct lb_section *s)
{
	return s->lease_end_ns > 0 && s->lease_end_ns != LB_LEASE_NEVER;
}

/* How a waiter's last acquire call ended. */
enum lb_wait_end {
	LB_WEND_GAVE_UP, /* it returned without the lock: timed out, its policy's tries
			    spent, or a node refused */
	LB_WEND_CUT,     /* the run's end stopped it */
	LB_WEND_KILLED,  /* its client died in it */
	LB_WEND_COUNT
};

const char *lb_wait_end_name(enum lb_wait_end e);
/* -1 when @name is not a way a wait ends. */
int lb_wait_end_parse(const char *name);

/*
 * A waiter: a client's acquire calls after its last enter (or from the run's
 * start), none of which entered. A client has at most one. A client that
 * tried and never got in leaves no section, so without these a history
 * cannot tell "nobody could get in" from "nobody tried".
 */
struct lb_waiter {
	int client;
	int key;                  /* lock index: client % keys */
	uint32_t calls;           /* acquire calls that did not enter, >= 1 */
	int64_t start_ns;         /* the first of them began */
	int64_t last_try_ns;      /* the last attempt (one acquire() of the strategy) began,
				     -1 when none did */
	int64_t end_ns;           /* the last call returned, its client died, or the run ended */
	enum lb_wait_end ended;
};

#endif
