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
};

/* Does @s say when its lease ran out (a time, not never, not unknown)? A
 * lease ends after its grant, so 0 (a section made without one) is unknown. */
static inline bool lb_lease_known(const struct lb_section *s)
{
	return s->lease_end_ns > 0 && s->lease_end_ns != LB_LEASE_NEVER;
}

#endif
