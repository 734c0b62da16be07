/*
 * keywatch.h - the key watcher: a helper process that records, on every lock
 * server lockbench started, what the server itself did to the lock keys (set,
 * del, expired, expire), on the history's clock, for the foreign-release
 * judge (foreign.h) and report.html's lane "Redis holds" (report_lane.c).
 * Never on servers lockbench did not start (--redis, --sentinel).
 *
 * How: on each server, CONFIG SET notify-keyspace-events E$gx and one
 * connection SUBSCRIBEd to the keyevent channels set, del, expired, evicted,
 * expire and persist (the key is the message; the key names are looked up in
 * a table: other keys cost the server a publish the watcher drops). One
 * connection per server keeps the server's order. For each set or expire
 * of a lock key it asks the value and the TTL (GET and PTTL on a second
 * connection, then a PING on the first: if no event of that key came before
 * the PONG, what was read is what that event left), so that a set is matched
 * to a section by its token, not by time, and the key's TTL is known after
 * every change of it. An expire leaves the value of the set before it: when
 * only expires of the key came between, its read gives that set's value too
 * (a SET PX publishes set then expire in one command, so the set's own read
 * always comes after the expire's event).
 *
 * When the watch of a server begins (a start, a reconnection after a
 * restart, a promotion seen by ROLE) it reads what the server holds of each
 * lock key (GET and PTTL, then a PING: `found`, unless an event of the key
 * came first): a promoted replica may hold the old primary's lock, which no
 * notification would tell. Not for more than 16 key names.
 *
 * Why notifications and a read, not a poll of the key (GET and PTTL every few
 * ms): a poll misses a section shorter than its period and says nothing of
 * whose set came in which order; the notifications are every change, in the
 * server's order, and the read after each only names what the change left.
 * Why `expire` too (a SET PX also publishes it, so it costs a message and a
 * read per set): an EXPIRE sent after SETNX, a renewal's PEXPIRE and a
 * waiter's EXPIRE on a key without one change no value, only the TTL; without
 * them the TTL of a key (none, for a holder that died between SETNX and
 * EXPIRE) would be a guess.
 *
 * Replicas replay their primary's deletions (and its expiries, as dels): a
 * server that may be a replica (role_check: a failover's replica, a Sentinel
 * or cluster topology) is asked ROLE every 20 ms, and its events since the
 * last answer are kept only if it answered master (a PING after the ROLE
 * marks where in its stream the answer stands). A server that restarts loses
 * its keys without a notification and its connection: the watcher connects
 * again, sets the notifications again, and records `watch` (for the judge,
 * what the server holds is unknown from there until the next set; the
 * snapshot's `found` says it for the lane).
 *
 * The events go to a MAP_SHARED log of fixed capacity (LOCKBENCH_KEY_EVENTS_MAX
 * overrides it, for tests); when it fills, recording stops and the figure is
 * n/a, said so.
 */
#ifndef LB_KEYWATCH_H
#define LB_KEYWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "foreign.h"
#include "strategy.h"

/* A server to watch. */
struct lb_keywatch_server {
	int port;         /* its own port (the watcher connects there, never via the relay) */
	int front;        /* where clients reach it (a relay's listener), or 0 */
	int node;         /* the lock node it stands for */
	bool role_check;  /* it may be a replica: keep its events only while it is a primary */
};

/* The key names to watch: names[i] is lock key key_of[i] (a library may
 * write its own name for a key: redis-semaphore's mutex:KEY). */
struct lb_keywatch_keys {
	const char *const *names;
	const int *key_of;
	int n;
};

struct lb_keywatch_log;

struct lb_keywatch {
	pid_t pid;                    /* 0 when not running */
	struct lb_keywatch_log *log;  /* shared with the watcher */
	size_t log_bytes;
	int n;
	struct lb_keywatch_server srv[LB_KEYWATCH_MAX_SERVERS];
};

/*
 * Start watching @n servers (at most LB_KEYWATCH_MAX_SERVERS) for @keys, with
 * room for the events of a run of @duration_s; returns once every server is
 * watched (within 5 s). 0, or a negative status with @why set (the figure is
 * then n/a, and why).
 */
int lb_keywatch_start(struct lb_keywatch *w, const struct lb_keywatch_server *srv, int n,
		      const struct lb_keywatch_keys *keys, double duration_s, char *why, size_t len);
/* lb_keywatch_start for a run's lock keys: "<prefix>lock:<k>" for k < @keys,
 * and a library's own name for each (its manifest's outside_key, e.g.
 * redis-semaphore's mutex:KEY). */
int lb_keywatch_start_run(struct lb_keywatch *w, const struct lb_keywatch_server *srv, int n,
			  const struct lock_strategy *s, const char *prefix, int keys,
			  double duration_s, char *why, size_t len);
/* Commands the watcher sent so far to the server reached at @port (its own
 * port or its front): what it adds to that server's INFO commandstats. */
uint64_t lb_keywatch_commands(const struct lb_keywatch *w, int port);
/*
 * After the clients are gone: let the watcher read what the servers sent up
 * to now (a PING on each subscription, at most 2 s), then copy the events it
 * kept, times made relative to @t0_ns (never below 0), into a malloc'd array.
 * 0, or a negative status with @why set (the log filled; the watcher died).
 */
int lb_keywatch_finish(struct lb_keywatch *w, int64_t t0_ns, struct lb_key_event **out,
		       size_t *n, char *why, size_t len);
/* While it runs: event @i of the log (in the order received, times on
 * lb_now_ns's clock), copied into @out: 1, 0 when it has not come yet, -1
 * when it is not kept (a replica's replay, a role not known yet). For a
 * command that waits on what a server does (adapter-test). */
int lb_keywatch_peek(const struct lb_keywatch *w, size_t i, struct lb_key_event *out);
/*
 * A watcher of another store on the same log (leasewatch.h: etcd's and
 * ZooKeeper's lock owners): lb_keywatch_start_with forks a process that
 * runs @body(w, @arg) (it must not return before the parent stops it, or
 * says done), with the signals a Ctrl-C sends ignored, and waits (5 s at
 * most) until it says ready. In that process: lb_keywatch_put appends an
 * event (false: the log is full, recording stopped), lb_keywatch_say says
 * ready, failed (why) or done, and lb_keywatch_draining is true once the
 * parent asked for the last events (lb_keywatch_finish): the body reads the
 * store once more, then says done. lb_keywatch_finish, _peek and _stop work
 * as for the key watcher.
 */
typedef void (*lb_keywatch_body)(struct lb_keywatch *w, const void *arg);
enum lb_keywatch_state { LB_KW_READY, LB_KW_FAILED, LB_KW_DONE };
int lb_keywatch_start_with(struct lb_keywatch *w, const struct lb_keywatch_server *srv, int n,
			   double duration_s, lb_keywatch_body body, const void *arg,
			   const char *what, char *why, size_t len);
bool lb_keywatch_put(struct lb_keywatch *w, const struct lb_key_event *e);
void lb_keywatch_say(struct lb_keywatch *w, enum lb_keywatch_state st, const char *failure);
bool lb_keywatch_draining(const struct lb_keywatch *w);
/* Kill and reap the watcher, unmap its log. Accepts a watcher never started. */
void lb_keywatch_stop(struct lb_keywatch *w);

#endif
