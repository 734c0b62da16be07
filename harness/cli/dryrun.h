/* dryrun.h - `lockbench run --dry-run`: a run's servers, keys, commands and
 * faults, printed before anything is sent (dryrun.c). */
#ifndef LB_DRYRUN_H
#define LB_DRYRUN_H

#include <stdio.h>

#include "params.h"

/* Print what a run of @cfg would do to the servers onto @f; 0. */
int lb_dry_run(FILE *f, const struct lb_run_cfg *cfg);

#endif
