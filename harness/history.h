/*
 * history.h - what happened in a run, as facts: one section per critical
 * section entered, on the monotonic clock (ns from the run's start).
 */
#ifndef LB_HISTORY_H
#define LB_HISTORY_H

#include <stddef.h>
#include <stdint.h>

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
	uint64_t token;           /* lb_token_hash (plumbing.h) of the value its acquire wrote,
				     0 when not known */
};

#endif
