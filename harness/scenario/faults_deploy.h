/*
 * faults_deploy.h - faults that act on a deployment as a client or its
 * operator would (faults_deploy.c): they reach servers lockbench did not
 * start, with --allow-faults. Called by the injector (faults.c).
 */
#ifndef LB_FAULTS_DEPLOY_H
#define LB_FAULTS_DEPLOY_H

#include "injector.h"

/* Start the user's @command (split into words, never by a shell) in a
 * process group of its own, its output appended to the run's
 * hook-@label.log: its pid, or -1. */
pid_t lb_hook_spawn(const struct lb_injector *inj, const char *label, int node,
		    const char *command, int64_t now_ns);
/* A hook started by lb_hook_spawn: 1 while it runs; 0 once it has ended
 * well, -1 once it failed (an exit status, killed at @deadline_ns with its
 * group, or never started), with an event. */
int lb_hook_poll(struct lb_injector *inj, pid_t *pid, int node, int64_t deadline_ns,
		 int64_t now_ns);
/* Wait for @rt's hooks to end, each within its deadline (then killed). */
void lb_deploy_hooks_finish(struct lb_injector *inj, struct lb_fault_rt *rt);
/* Is a hook of @rt still running? (Reaps those that ended.) */
bool lb_deploy_hooks_running(struct lb_injector *inj, struct lb_fault_rt *rt, int64_t now_ns);
/* node-pause and its end on a server lockbench did not start: CLIENT PAUSE
 * ms ALL (or WRITE, mode = write) and CLIENT UNPAUSE, or --hook node-pause
 * and node-resume. */
void lb_deploy_node_pause(struct lb_injector *inj, size_t i, const struct lb_fault *f,
			  int64_t now_ns);
void lb_deploy_node_resume(struct lb_injector *inj, size_t i, const struct lb_fault *f,
			   int64_t now_ns);
/* node-kill or node-start (@what) on a server lockbench did not start: the
 * user's --hook of that name. */
void lb_deploy_node_hook(struct lb_injector *inj, size_t i, const struct lb_fault *f,
			 const char *what, int64_t now_ns);
/* SENTINEL FAILOVER to each of lock node 0's Sentinels in turn until one
 * accepts; an event either way; whether one accepted. */
bool lb_deploy_sentinel_failover(struct lb_injector *inj);
/* CLUSTER FAILOVER on each replica of the primary of lock node 0's slot (as
 * CLUSTER SLOTS lists them) in turn until one accepts; an event either way. */
bool lb_deploy_cluster_failover(struct lb_injector *inj);
/* CLIENT KILL ADDR of each connection client @c (and its adapter) has open
 * to @f's nodes: how many the servers closed. */
int lb_deploy_client_kill(struct lb_injector *inj, const struct lb_fault *f, int c);

#endif
