/*
 * attempts.h - every acquire attempt of a run (one acquire() of a strategy:
 * one try of a recipe, one `acquire` request to an adapter), and what the
 * history says of each "busy" answer.
 *
 * A lock that answers busy while nobody can hold it has failed, whatever it
 * calls it: a library that reports a dead majority of its Redlock nodes as
 * "busy" hides the failure that another library reports as an error, and a
 * table of outcome classes rewards it. `busy_while_down` counts the busy
 * answers given (the attempt's end) while fewer than a quorum of the lock's
 * nodes were up (a majority of them; the one node of a single-node lock), by
 * the run's own fault events (node-kill to node-start, node-pause to
 * node-resume), by attempts during which no section was open (a holder that
 * took the lock before the fault still holds it: a busy answer is then the
 * truth). Where a
 * node down is not the lock down (replicas a failover promotes, the user's
 * servers, whose faults lockbench may not see) the figure is n/a.
 */
#ifndef LB_ATTEMPTS_H
#define LB_ATTEMPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "history.h"
#include "shared_event.h"

enum lb_try_result {
	LB_TRY_ACQUIRED, /* it entered */
	LB_TRY_BUSY,     /* the lock said another holds it */
	LB_TRY_ERROR,    /* a node unreachable, a Redis error, no replica acknowledged:
			    what acquire_errors counts */
	LB_TRY_REFUSED,  /* any other no: a Redlock's validity spent, ... */
	LB_TRY_UNKNOWN,  /* its client died or was cut in it, or the run's end stopped
			    it: no answer seen */
	LB_TRY_INDETERMINATE, /* an error (counted as LB_TRY_ERROR is, in acquire_errors
			    and outages) after a command was sent and no reply came (a
			    timeout, a reset): it may have taken the lock, until its TTL */
	LB_TRY_COUNT
};

const char *lb_try_result_name(enum lb_try_result r);
/* -1 when @name is not a result. */
int lb_try_result_parse(const char *name);

/* One attempt, on the history's clock (ns from the run's start). */
struct lb_try {
	int client;
	int64_t start_ns;
	int64_t end_ns;
	enum lb_try_result result;
};

#define LB_ATTEMPTS_HEADER "client,start_ns,end_ns,result"

/* attempts.csv: one line an attempt, in the order given. */
void lb_attempts_write(FILE *f, const struct lb_try *t, size_t n);

struct lb_busy {
	uint64_t busy;      /* busy answers */
	uint64_t down;      /* of those, the ones given while no quorum of nodes was up */
};

/* Count @t's busy answers, and those given while fewer than a quorum of the
 * @nodes lock nodes were up by the @ne events @ev (in time order), with none
 * of the @ns sections @s of the attempt's lock open (client i takes lock
 * i % @keys). 0, or LB_ENOMEM. */
int lb_busy_down(const struct lb_try *t, size_t n, const struct lb_section *s, size_t ns,
		 const struct lb_event *ev, size_t ne, int nodes, int keys, struct lb_busy *out);

/* What the attempts say of the user's servers going and coming back, as
 * run.c stamps it: for each client, in its attempts' order, the first error
 * (LB_TRY_ERROR) after an answer, or at the start, is a server-down event,
 * the first answer of any kind after it (acquired, busy, refused) a
 * server-back, each at that attempt's end; an attempt without an answer
 * (unknown) changes nothing. Into @out (at most @max), in @t's order; how
 * many there are (more than @max: the rest were not written). */
size_t lb_attempts_outages(const struct lb_try *t, size_t n, int clients, struct lb_event *out,
			   size_t max);

#endif
