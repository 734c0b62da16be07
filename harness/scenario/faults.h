/*
 * faults.h - the parent's side of fault injection: faults on clients (kill,
 * pause) and on servers (kill, restart, pause, clock jump, failover), fired at
 * a time or on "the current holder", each logged as an event on the history's
 * clock. Client-side faults (slow, failpoint crash/sleep, clock skew,
 * partition) run inside the clients (client.c).
 */
#ifndef LB_FAULTS_H
#define LB_FAULTS_H

#include "injector.h"

/* Can this scenario run here with this strategy? 0, or LB_ENOTSUP with the
 * reason in @why (a skip), or LB_EINVAL with the reason (a mistake). @quiet:
 * no warnings (a fault after the run's end), for a look before the run. */
int lb_faults_check(const struct lb_run_cfg *cfg, bool embedded, bool quiet, char *why,
		    size_t len);
/* Does the scenario fit the run: a client, node or topology it names that
 * the run does not have? 0, or LB_EINVAL said (a usage error: the commands
 * ask before they start anything or make a directory, --dry-run too). */
int lb_scenario_fits(const struct lb_run_cfg *cfg);
/* One step of every parent-side fault; call every few ms with the time since t0. */
void lb_faults_tick(struct lb_injector *inj, int64_t now_ns);
/* The scenario's faults that never fired in this run (a failpoint this
 * strategy does not have is not counted; chaos draws are not): how many,
 * their names in @names. A run whose fault did not happen shows nothing. */
int lb_faults_unfired(const struct lb_injector *inj, char *names, size_t len);
/* Undo what must not outlive the run: resume paused processes and nodes. */
void lb_faults_finish(struct lb_injector *inj);
/* Does @s fire failpoint @name? */
bool lb_strategy_has_failpoint(const struct lock_strategy *s, const char *name);

#endif
