/*
 * signals.h - how lockbench ends on every path.
 *
 * SIGINT and SIGTERM set a flag that long-running commands poll, so they stop
 * in order and still write what they measured. Fatal signals (SIGSEGV, SIGABRT,
 * ...) kill every child this process started, then re-raise. SIGKILL cannot be
 * caught: there PR_SET_PDEATHSIG in every child does the work.
 */
#ifndef LB_SIGNALS_H
#define LB_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Children a process tracks: every client of the largest run, its relay
 * and helpers (run.c checks LB_MAX_CLIENTS against it). */
#define LB_MAX_CHILDREN 4200

void lb_signals_install(void);
/* On a fatal signal, after the tracked children are killed, call @fn (it
 * must be async-signal-safe). rserver.c sets it to kill its servers: this
 * layer knows nothing of servers. */
void lb_signals_on_fatal(void (*fn)(void));
bool lb_stop_requested(void);
/* The signal that asked to stop (SIGINT, SIGTERM) or 0. */
int lb_stop_signal(void);
/* How many stop signals (SIGINT, SIGTERM) have come: a wait that began
 * after one can tell a new one. */
int lb_stop_count(void);
/* Work a stop signal ends within a second (every long reader and writer of
 * `report` and `check` polls lb_stop_work): from lb_stop_work_begin() on,
 * lb_stop_work() is true once a stop signal comes after it. A report begun
 * after a run's Ctrl-C is still written (the run's signal came before); a
 * second Ctrl-C stops it. A nested begin keeps the outer start; @prev, what
 * lb_stop_work_begin returned, restores it. Never begun: always false. */
int lb_stop_work_begin(void);
void lb_stop_work_end(int prev);
bool lb_stop_work(void);
/* Register a child pid to be SIGKILLed on a fatal signal (server pids are
 * tracked by rserver.c already). */
void lb_signals_track_child(pid_t pid);
void lb_signals_untrack_child(pid_t pid);
/* In a forked child: PR_SET_PDEATHSIG=SIGKILL and default signal handling.
 * Returns false if the parent already died (the child must _exit). */
bool lb_child_bind_to_parent(pid_t parent);
/* @root and every process whose parent chain leads to it (from /proc), at
 * most @max: how many. */
size_t lb_proc_descendants(pid_t root, pid_t *out, size_t max);
/* Every process and its parent, from one pass over /proc: at most @max; how many. */
struct lb_proc_pair { pid_t pid, ppid; };
size_t lb_proc_table(struct lb_proc_pair *t, size_t max);

/* Fork a helper process (@what names it in the error, "the cluster
 * watcher"). In the parent: the child's pid, tracked, or LB_ESYS with a
 * message. In the child: 0, bound to the parent (it has _exited if the parent
 * was already gone). */
pid_t lb_fork_helper(const char *what);

/*
 * Nothing escapes. A process that calls setsid() and forks again leaves
 * every process group and outlives every PR_SET_PDEATHSIG (an adapter's
 * library may start such a helper). So each run marks what it starts: its
 * environment holds LOCKBENCH_RUN=<pid of the run's process>-<run number>,
 * which every program lockbench runs inherits and keeps across setsid and
 * fork. At the end of the run every process still marked with it is killed;
 * if lockbench itself is killed (kill -9), its janitor (rserver.c) kills
 * every process marked by it.
 */
#define LB_RUN_MARK "LOCKBENCH_RUN"
/* Mark what this process starts from now on as the next run's; the mark's
 * value into @mark (at least 32 bytes). */
void lb_mark_run(char *mark, size_t len);
/* SIGKILL every process but this one whose environment has
 * LOCKBENCH_RUN=@prefix (a whole mark), or whose mark begins with @prefix
 * when it ends with '-' ("<pid>-": all of a process's runs), until none is left (at most a few rounds: one that forks
 * while it is killed is found in the next); how many were killed. */
int lb_kill_marked(const char *prefix);

/* Now, in the clock ticks /proc/PID/stat's start time counts. */
unsigned long long lb_proc_ticks_now(void);
/* SIGKILL every child of this process started at or after @since ticks
 * (lb_proc_ticks_now): lockbench is a child subreaper during a run, so a
 * program orphaned by the run's end (one that also cleared its environment,
 * and so its mark, and left with setsid) is its child by then. How many. */
int lb_kill_adopted(unsigned long long since);

/*
 * The run's cgroup. A helper that clears its environment (env -i: no mark)
 * and leaves with setsid is found at a run's end as an orphan of this
 * process (a child subreaper, lb_kill_adopted), but after a kill -9 of
 * lockbench nothing adopts it for lockbench and nothing names it. Where the
 * system gives lockbench a cgroup v2 directory it may write (its own cgroup's
 * directory and cgroup.procs writable: a delegated subtree, or root), the
 * janitor's start makes a cgroup of lockbench's own below it,
 * lockbench-PID, and moves lockbench into it: everything it starts from then
 * on is born there and stays there whatever it does to its environment or
 * session. When lockbench is gone, however it went, the janitor (which
 * stays in the cgroup lockbench came from) kills whatever is left in it
 * (cgroup.kill, or each of cgroup.procs until none) and removes it. Where
 * none can be made, the subreaper and the mark are all there is
 * (docs/running.md says the limit).
 */
/* Make the cgroup @path (at least 512 bytes) for this process: 0, or -1
 * (no cgroup v2 here, or none lockbench may write: @path is ""). Nothing
 * is moved yet. */
int lb_cgroup_make(char *path, size_t len);
/* Move this process into @path: 0 or -1 (then the cgroup is removed). */
int lb_cgroup_join(const char *path);
/* SIGKILL every process in @path and remove it with the cgroups below it (a
 * lockbench started from inside made one there), after its last process is
 * gone (at most about 2 s): how many were killed. Not from inside it. */
int lb_cgroup_kill(const char *path);

#endif
