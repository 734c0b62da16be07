/*
 * rserver.h - embedded redis-server processes that lockbench starts and always stops.
 *
 * Each server runs on a free loopback port chosen at start (never a fixed one),
 * in its own mkdtemp directory, without persistence, in its own process group
 * (so a terminal's Ctrl-C reaches lockbench, which then stops it in order), and
 * with PR_SET_PDEATHSIG=SIGKILL so that it dies with the process that started
 * it even when that process is killed with SIGKILL.
 *
 * The same layer runs other servers (an etcd member, a ZooKeeper server:
 * consensus.h): opts.command names the program and its arguments, the caller
 * chooses its port, opts.ready says when it answers. Its directory (and the
 * data the program keeps there) survives lb_server_kill and a respawn; it goes
 * on destroy, or with the janitor when lockbench is killed.
 */
#ifndef LB_RSERVER_H
#define LB_RSERVER_H

#include "clockfile.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct lb_server;

struct lb_server_opts {
	/* Extra "--name value" arguments, NULL-terminated; may be NULL. Borrowed. */
	const char *const *extra_args;
	/* Value for LD_PRELOAD in the server's environment, or NULL. Borrowed. */
	const char *preload;
	/* Extra environment "NAME=value" entries, NULL-terminated; may be NULL. */
	const char *const *extra_env;
	/* Path of libfakeclock.so: the server's wall clock can then be moved
	 * with lb_server_set_clock. NULL: the true clock. Borrowed. */
	const char *clock_shim;
	/* Not NULL: run a Sentinel (`redis-server CONF --sentinel`) whose
	 * configuration file, written into the server's directory (Sentinel
	 * rewrites it), starts with this text. Borrowed. */
	const char *sentinel_config;
	/* Not NULL: run this program instead of redis-server, a full argv
	 * (NULL-terminated, copied at start). It runs in the server's directory
	 * (relative paths are inside it), with stdout and stderr appended to its
	 * log file; extra_args follow it. */
	const char *const *command;
	/* With command: the port it serves, chosen by the caller (no retry on
	 * another port: the caller built the command around it). */
	int port;
	/* With command: one bounded look, 0 it answers, 1 not yet; NULL: PING. */
	int (*ready)(const struct lb_server *s);
	/* The log file's name in the directory; NULL: "redis.log". Copied. */
	const char *log_name;
	/* The word in the directory's name, lockbench-KIND-PID-XXXXXX: "redis"
	 * (NULL), "etcd" or "zookeeper" (what the sweep of stale ones knows). */
	const char *kind;
	/* Where that directory is made; NULL: $TMPDIR or /tmp. Copied. */
	const char *parent_dir;
	/* With command: environment variables whose names begin with one of
	 * these, NULL-terminated, are removed before the exec (etcd reads every
	 * ETCD_* variable as a flag; the JVM JAVA_TOOL_OPTIONS). Borrowed: static. */
	const char *const *drop_env;
};

struct lb_server {
	pid_t pid;           /* 0 when not running */
	int port;
	bool paused;
	char dir[256];       /* private temporary directory, removed on destroy */
	char log_path[300];  /* the server's log file inside dir */
	char clock_path[300];/* the clock offset file the shim reads */
	struct lb_server_opts opts;
	char sentinel_conf[300];        /* a Sentinel's configuration file, or "" */
	char primary_port[16];          /* a replica's primary, for its arguments */
	const char *replica_args[20];   /* opts.extra_args, then --replicaof */
	char **command;                 /* owned copy of opts.command, or NULL */
};

/* Start a server; NULL with a message on stderr if it could not be started. */
struct lb_server *lb_server_start(const struct lb_server_opts *opts);
/* Its directory only (tracked for cleanup, nothing running): the caller
 * writes its files into s->dir, then lb_server_respawn_begin starts it.
 * NULL with a message. */
struct lb_server *lb_server_prepare(const struct lb_server_opts *opts);
/* A replica of the server on 127.0.0.1:@primary_port, returned once its link
 * is up (within @timeout_ms), else NULL with a message. The replica connects
 * to @link_port: the primary's own port, or a relay in front of it. */
struct lb_server *lb_server_start_replica(int primary_port, int link_port, int64_t timeout_ms);
/* The same with @opts (NULL: none) for the replica; at most 16 extra_args. */
struct lb_server *lb_server_start_replica_with(const struct lb_server_opts *opts, int primary_port,
					       int link_port, int64_t timeout_ms);
/* Copy the server's log (what it wrote so far, across restarts) to
 * @dir/@name. 0, or LB_ESYS with a message naming the file. NULL @s: 0. */
int lb_server_copy_log(const struct lb_server *s, const char *dir, const char *name);
/* Graceful stop: SIGTERM, a bounded wait, then SIGKILL. The directory stays. */
int lb_server_stop(struct lb_server *s);
/* SIGKILL and reap: a crash. */
int lb_server_kill(struct lb_server *s);
/* SIGSTOP / SIGCONT. */
int lb_server_pause(struct lb_server *s);
int lb_server_resume(struct lb_server *s);
/* Stop the server and start it again on the same port. keep_data=true saves
 * an RDB snapshot first and loads it on start; false comes back empty.
 * redis-server only (LB_ENOTSUP for a command). */
int lb_server_restart(struct lb_server *s, bool keep_data);
/* Start a stopped or killed server again on its port (a redis-server's data
 * is gone; a command's directory is as the program left it). */
int lb_server_respawn(struct lb_server *s);
/* The same without waiting: fork and exec, then lb_server_poll_ready until
 * it answers (the fault injector never blocks the supervisor). */
int lb_server_respawn_begin(struct lb_server *s);
/* One non-blocking look (at most 200 ms on a stalled connect): 0 the server
 * answers PING (or opts.ready says 0), 1 not yet, LB_ESYS it died. */
int lb_server_poll_ready(struct lb_server *s);
/* Write @offset_ms into the clock file at @path (clockfile.h), atomically. */
int lb_clock_file_write(const char *path, int64_t offset_ms);
/* Write @set (a steady or strobing offset) into the clock file at @path. */
int lb_clock_file_set(const char *path, const struct lb_clockset *set);
/* Move the server's wall clock to true time + @offset_ms (needs clock_shim). */
int lb_server_set_clock(struct lb_server *s, int64_t offset_ms);
/* ... or to a strobing offset (clockfile.h). */
int lb_server_set_clockset(struct lb_server *s, const struct lb_clockset *set);
/* Kill if running, remove the directory, free. Accepts NULL. */
void lb_server_destroy(struct lb_server *s);
/* true while the process is alive (paused counts as alive). */
bool lb_server_alive(struct lb_server *s);
/* Wait until the server answers PING, at most timeout_ms. */
int lb_server_wait_ready(struct lb_server *s, int timeout_ms);
/* The server process's proportional set size (/proc/PID/smaps_rollup Pss)
 * in KiB, or -1 when it does not run or the kernel does not say. */
long lb_server_pss_kib(const struct lb_server *s);

/* SIGKILL every server this process started and has not destroyed yet.
 * Async-signal-safe: for fatal-signal handlers. */
void lb_server_kill_all_signal_safe(void);

/* A free TCP port on 127.0.0.1 at the time of the call, or a negative status. */
int lb_free_port(void);

/* Path of the redis-server binary: $LOCKBENCH_REDIS_SERVER or "redis-server". */
const char *lb_redis_server_path(void);
/* The Redis servers started from now on listen on @addr too, beside
 * 127.0.0.1, with protected mode off (run --hosts --bind ADDR: hosts on a
 * private network reach them); NULL or "": 127.0.0.1 alone. */
void lb_server_bind_also(const char *addr);

/* Fork the janitor of this process now (once): when the process is gone,
 * however it went, the janitor removes its servers' directories and kills
 * whatever its runs left (signals.h). Started by the first server, or run. */
void lb_janitor_start(void);
/* Have the janitor remove @dir too (@on), or no longer (after removing it
 * yourself): a run's own directory named lockbench-hosts-PID-XXXXXX, the
 * adapter hosts' sockets, or an import's temporary copy DIR.lockbench-XXXXXX
 * (marked, owned.h). A later sweep removes one whose maker is gone. */
void lb_janitor_dir(const char *dir, bool on);
/* Remove the directories under @parent that a lockbench killed with SIGKILL
 * left (lockbench-KIND-PID-XXXXXX whose maker its marker names is gone, and
 * only this user's: owned.h); once per process and parent. The first server
 * started in a parent does it. */
void lb_sweep_stale_dirs(const char *parent);

#endif
