/*
 * porcupine.h - a run's lock operations as the history lockbench's second
 * checker reads (porcupine-ops.csv): Porcupine, a linearizability checker
 * written elsewhere, holds them to a mutex (strategies/adapters/go/porcupine,
 * `lockbench check DIR --porcupine`; docs/running.md, "check --porcupine").
 *
 * The mapping, one key a partition:
 *   a section that held the lock (the oracle's: from enter to its exit, or
 *   [enter, enter + 1 ns) when those are one instant):
 *     acquire  [acquire_start_ns, enter_ns]          ok
 *     release  [held end, release_ns (or the run's end when no release
 *              returned, and never before the held end)]  its outcome
 *   whatever the release's outcome (released, lost, foreign, error,
 *   indeterminate, killed, cut): the client is no longer inside once it is linearized; a lease
 *   the server ended earlier is placed there too, which is what the oracle
 *   counts (a holder still inside is still inside).
 *   a section that held nothing (its client died in its acquire), and every
 *   attempt that ended in an error, indeterminate (sent, no reply) or
 *   without an answer (attempts.csv):
 *     acquire  [start, end]  unknown: possibly applied, and either way nobody
 *              inside
 *   busy and refused attempts are not written: a busy answer while nobody
 *   believes it holds the lock is the truth of a lease nobody holds (a dead
 *   holder's), not a wrong answer of the mutex of who is inside.
 *   events.csv: one `event` line each, drawn as annotations.
 */
#ifndef LB_PORCUPINE_H
#define LB_PORCUPINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attempts.h"
#include "history.h"
#include "shared_event.h"

struct lb_pc_run {
	const struct lb_section *s;
	size_t n;
	const struct lb_try *t; /* NULL when none were recorded */
	size_t n_t;
	const struct lb_event *ev;
	size_t n_ev;
	int keys;               /* client i's attempts are on key i % keys */
	int64_t end_ns;         /* the run's end */
};

/* The operations file of @r to @f. Returns how many operations it wrote. */
size_t lb_porcupine_write(FILE *f, const struct lb_pc_run *r);

/* DIR/porcupine-ops.csv from DIR's summary.csv, history.csv, attempts.csv
 * and events.csv (each read and checked as `check` reads it): 0, or the
 * reader's error (said), or the writer's (said; *@unwritten then true). */
int lb_porcupine_write_dir(const char *dir, bool *unwritten);

#endif
