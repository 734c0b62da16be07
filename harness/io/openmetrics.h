/*
 * openmetrics.h - a run's figures in the OpenMetrics text format
 * (`run --openmetrics FILE`), for a monitoring stack: every figure of
 * summary.csv that is a number (figures.h's table), under lockbench_ and in
 * the format's base units (a time in seconds, a size in bytes: the name says
 * it, e.g. acquire_p99_us is lockbench_acquire_p99_seconds), a count as a
 * counter (lockbench_overlaps_total), the rest as gauges; each with HELP
 * and TYPE (and UNIT when the name ends with one), labelled with the run's
 * strategy and scenario; an n/a figure is left out (never a 0), "inf" is
 * +Inf. The run's class, seed and variant are the labels of one info
 * sample, lockbench_run_info. Written from the summary as written.
 */
#ifndef LB_OPENMETRICS_H
#define LB_OPENMETRICS_H

#include <stdio.h>

#include "results.h"

/* The metrics of @s on @f, ending with "# EOF". */
void lb_openmetrics_print(FILE *f, const struct lb_summary *s);
/* The same into @path, whole or not at all (outfile.h): 0 or LB_ESYS (said). */
int lb_openmetrics_write(const char *path, const struct lb_summary *s);

#endif
