/*
 * verify.h - a run directory checked against itself: every figure and the
 * outcome class recomputed from history.csv, latency.csv, events.csv and the
 * measured columns of summary.csv, compared with what summary.csv says at the
 * precision it writes (figures.h), every column range-checked, and the canary
 * held against the sweep. `lockbench check` prints it; `report` warns when a
 * run it draws disagrees with its summary.
 */
#ifndef LB_VERIFY_H
#define LB_VERIFY_H

#include <stdbool.h>
#include <stdio.h>

struct lb_verify {
	int figures;               /* figures compared */
	int differences;           /* figures that disagree or are out of range (each once) */
	char which[240];           /* their names, "a, b, c" (truncated) */
	bool imported;             /* an imported history (import_dir.h), checked against
				      the file it kept */
};

/*
 * Verify the run in @dir, one line per figure to @out (NULL: silent), into
 * @v. 0 (whatever it found: see v->differences), or LB_EINVAL (an input is
 * malformed: the message names the file, line and field), LB_ESYS (one
 * cannot be read) or LB_ENOMEM.
 */
int lb_verify_run(const char *dir, FILE *out, struct lb_verify *v);

#endif
