/*
 * fixture.h - test helpers: real embedded redis-servers and lock clients.
 * No mocks: every helper talks to a redis-server the test started.
 */
#ifndef LB_TEST_FIXTURE_H
#define LB_TEST_FIXTURE_H

#include <hiredis/hiredis.h>
#include <stddef.h>

#include "consensus.h"
#include "plumbing.h"
#include "rserver.h"
#include "strategy.h"

#define FX_MAX_NODES 8

/*
 * A time limit, by alarm(2), for the rest of the test in this process: past
 * @seconds it says so on stderr and dies of SIGALRM, which criterion reports
 * as a crash. Not criterion's .timeout: BoxFort queues each timeout request
 * for a detached thread to free, and when the runner exits before that thread
 * runs, LeakSanitizer reports the request as a leak (CI met it once).
 */
void fx_deadline(unsigned seconds);
/* A suite whose every test has @seconds (from its setup; a test may re-arm). */
#define FX_SUITE(name, seconds) \
	static void name##_deadline(void) { fx_deadline(seconds); } \
	TestSuite(name, .init = name##_deadline)

struct fx {
	struct lb_server *srv[FX_MAX_NODES];
	struct lb_node admin[FX_MAX_NODES]; /* the test's own connections for checks */
	size_t n;
	struct lb_server *replica;          /* of node 0, after fx_start_replica */
	struct lb_consensus cons;           /* fx_start_for a consensus lock: srv[] are its members */
};

/* A lock client with its own connections to every node of @f. */
struct fx_client {
	struct lb_node node[FX_MAX_NODES];
	struct lb_node *nodes[FX_MAX_NODES];
	const struct lock_strategy *s;
	struct lb_clock clock;
	void *lock;
	struct lb_grant grant;              /* of the last fx_acquire */
};

void fx_start(struct fx *f, size_t n);
/* What strategy @s's lock lives on: its min_nodes Redis servers, or the three
 * members of its consensus system (etcd, ZooKeeper: lb_consensus_of). */
void fx_start_for(struct fx *f, const struct lock_strategy *s);
void fx_stop(struct fx *f);
/* A replica of node 0, in sync when this returns. */
void fx_start_replica(struct fx *f);
void fx_client_init(struct fx_client *c, const struct fx *f, const struct lock_strategy *s,
		    const char *key, int64_t ttl_ms);
/* The same with the options of @opts (no_validity_check, max_extensions). */
void fx_client_init_opts(struct fx_client *c, const struct fx *f, const struct lock_strategy *s,
			 const char *key, int64_t ttl_ms, const struct lb_lock_cfg *opts);
void fx_client_fini(struct fx_client *c);
int fx_acquire(struct fx_client *c);
int fx_release(struct fx_client *c);
/* A command on node @i through the admin connection; the caller frees. */
redisReply *fx_cmd(struct fx *f, size_t i, const char *fmt, ...);
/* PTTL of @key on node @i (-2 missing, -1 no TTL). */
long long fx_pttl(struct fx *f, size_t i, const char *key);
/* true when nothing accepts connections on 127.0.0.1:@port. */
bool fx_port_closed(int port);
/* true when @pid no longer exists or is a zombie. */
bool fx_pid_gone(pid_t pid);

/* No process lockbench (@pid, started by fx_spawn_lockbench) started is
 * left running, whatever its parent or session: each carries
 * LBTEST_SPAWN=@pid in its environment. Waits up to 3 s, then fails the test
 * naming them. fx_wait_lockbench calls it after every exit. */
void fx_nothing_left(pid_t pid);

/* Start $LOCKBENCH_BIN with @args (NULL-terminated, without argv[0]), its
 * stdout to @out and stderr to @err (the same file when they are equal). */
pid_t fx_spawn_lockbench(const char *const *args, const char *out, const char *err);
/* Wait for a lockbench started with @args and return its exit code (the test
 * fails if a signal killed it). What a run, compare, matrix, sweep, chaos or
 * bench wrote under its --out is then re-checked (fx_recheck): every test's
 * run must agree with its own files, whatever else the test looks at. */
int fx_wait_lockbench(pid_t pid, const char *const *args);
/* Run it to the end, stdout and stderr both to @dir/output; its exit code
 * (fx_wait_lockbench: its runs are re-checked). */
int fx_lockbench(const char *dir, const char *const *args);
/* `lockbench check` on the run in @dir or every run under it: the test fails
 * when a summary disagrees with its files (the differences are shown). A
 * directory without a run (the run was skipped, void, or never wrote one)
 * has nothing to check. */
void fx_recheck(const char *dir);
/* The source tree's top, the directory above $LOCKBENCH_SCENARIOS (fails the
 * test when that is not set: run through make test). */
const char *fx_root(void);
/* The text of @dir/@rel (fails the test when missing, or larger than 4 MiB);
 * valid until the next call. */
char *fx_slurp(const char *dir, const char *rel);
/* Column @name of @dir/summary.csv (fails the test when the file or the
 * column is missing); valid until the next call. */
const char *fx_summary(const char *dir, const char *name);

/* Orphans of a crashed child come to this process (PID 1 in a container may
 * never reap them); fx_reap_orphans collects the ones that exited. */
void fx_become_subreaper(void);
/* The processes this test started (since fx_become_subreaper, whatever
 * started them in turn) still running whose command line matches @pattern
 * (an extended regular expression, as pgrep -f takes), into @what
 * ("PID COMMAND, ..."); their count. Not another test's, of this binary or
 * of another running beside it (tests/run.sh). */
int fx_left(const char *pattern, char *what, size_t len);
/* The same among every process of the machine: for what cleared its
 * environment (the tag with it); @pattern must be this test's alone. */
int fx_left_anywhere(const char *pattern, char *what, size_t len);
void fx_reap_orphans(void);
/* @root and every process whose parent chain leads to it (at most @max). */
int fx_descendants(pid_t root, pid_t *out, int max);
/* fx_descendants until there are at least @want (at most @timeout_ms); how many. */
int fx_wait_descendants(pid_t root, pid_t *out, int max, int want, int timeout_ms);
/* Entries of $TMPDIR (or /tmp) whose name begins with @prefix. */
int fx_count_tmp_entries(const char *prefix);
/* mkdtemp(@tmpl), and the directory is removed with all it holds when the
 * process that made it exits (a test's worker: pass or fail), unless
 * LOCKBENCH_KEEP_TESTDIRS is set, to look at what a failed test left. */
char *fx_mkdtemp(char *tmpl);
/* kill -9 @pid, then fail the test unless every one of @pids is gone soon. */
void fx_kill9_leaves_nothing(pid_t pid, const pid_t *pids, int n);

#endif
