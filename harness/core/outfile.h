/*
 * outfile.h - the files lockbench writes, with write errors that say which
 * file and why (a full disk: "No space left on device"), never silently
 * short.
 *
 * A whole file (summary.csv, history.csv, report.md, a chart's data) is
 * written to a temporary beside it and renamed into place only when every
 * byte was written: a file either is complete or is not there, and what
 * was written before stays readable. A log written as a run goes
 * (matrix.csv) is written in place, so an interrupted run keeps its rows.
 */
#ifndef LB_OUTFILE_H
#define LB_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

struct lb_outfile {
	FILE *f;
	bool whole;               /* through a temporary, renamed at close */
	char path[PATH_MAX];
	char tmp[PATH_MAX + 16];
};

/* Open @path (dir/name when @name is not NULL) for writing. 0, or LB_ESYS
 * with a message naming the file and the reason. */
int lb_outfile_open(struct lb_outfile *o, const char *dir, const char *name, bool whole);
/* Flush and close; a whole file is renamed into place only if every write
 * succeeded, else its temporary is removed. 0, or LB_ESYS with a message
 * "writing PATH failed: REASON". Accepts a closed (f == NULL) outfile. A
 * whole file closed once a stop signal asked its work to stop
 * (lb_stop_work, signals.h) is not put in place: LB_ECANCELED, unsaid. */
int lb_outfile_close(struct lb_outfile *o);
/* Give up: close, and remove a whole file's temporary (what was there stays). */
void lb_outfile_abort(struct lb_outfile *o);

#endif
