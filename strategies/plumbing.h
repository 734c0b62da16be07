/*
 * plumbing.h - the Redis plumbing strategies share, written once.
 *
 * Strategies stay thin: they call these helpers the way Redis keeps
 * setGenericCommand under setnxCommand/setexCommand (src/t_string.c).
 *
 * Reply rules kept here: a NULL reply means the connection is dead (it is
 * closed and reopened on next use, never reused); REDIS_REPLY_ERROR is told
 * apart from a legitimate nil (SET NX losing a race); every reply is freed
 * exactly once by whoever received it.
 */
#ifndef LB_PLUMBING_H
#define LB_PLUMBING_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stdint.h>

#include "node.h"
#include "strategy.h"

/* 16 random bytes from getrandom(2), as 32 hex characters plus NUL. */
int lb_token_new(char out[LB_TOKEN_HEX + 1]);
/* What a token and a lock key's value are compared by, where the whole value
 * is not kept (history.csv, keyevents.csv: harness/judge/foreign.h): FNV-1a 64 of
 * at most the first 32 bytes (an adapter's token is kept to 32), never 0; 0
 * for an empty token (none). */
uint64_t lb_token_hash(const char *s, size_t len);

/* SET key val NX PX ttl: 0 set | LB_EBUSY exists | LB_EREDIS. */
int lb_set_nx_px(struct lb_node *n, const char *key, const char *val, int64_t ttl_ms);
/* SETNX key val: 0 set | LB_EBUSY | LB_EREDIS. */
int lb_setnx(struct lb_node *n, const char *key, const char *val);
/* A DEL that can tell whose lock it deleted: GETDEL key, then compare with
 * @mine: 0 ours | LB_ELOST nothing there | LB_EFOREIGN deleted another's | LB_EREDIS. */
int lb_getdel_release(struct lb_node *n, const char *key, const char *mine);

/* Optimistic transactions (seed 001). WATCH @key, then GET it: *held when it
 * exists, *is_mine when it holds @mine (may be NULL). 0 | LB_EREDIS. */
int lb_watch_get(struct lb_node *n, const char *key, const char *mine, bool *held, bool *is_mine);
/* MULTI, the one command @argv, EXEC: 1 committed | 0 aborted by a WATCH |
 * LB_EREDIS. A command refused inside MULTI is DISCARDed (or the connection
 * dropped), never left open for the next WATCH to trip on. */
int lb_multi_exec(struct lb_node *n, int argc, const char **argv);
/* Seed 001's release_lock: WATCH, GET and compare with @mine, then
 * MULTI/DEL/EXEC, again while EXEC is aborted (the seed loops forever on
 * WatchError; this stops after LB_WATCH_RELEASE_TRIES); not ours: UNWATCH.
 * 0 released | LB_ELOST not ours (left alone) | LB_EREDIS. */
#define LB_WATCH_RELEASE_TRIES 100
int lb_watch_release(struct lb_node *n, const char *key, const char *mine);

/* A Lua script known by its text and SHA-1 (checked in tests/test_plumbing.c). */
struct lb_script {
	const char *src;
	const char *sha;
};
/* Compare-and-delete: 1 when KEYS[1] held ARGV[1] and was deleted, else 0. */
extern const struct lb_script lb_script_cad;
/* The notify release: if KEYS[1] holds ARGV[1], reserve it ("handoff" for
 * ARGV[3] ms) and push to the signal list KEYS[2] (expires after ARGV[2] ms),
 * waking exactly one waiter, in one call. */
extern const struct lb_script lb_script_cad_notify;
/* A woken waiter's claim: set KEYS[1] to ARGV[1] PX ARGV[2] if free or reserved. */
extern const struct lb_script lb_script_claim;
/* fenced acquire: SET KEYS[1] ARGV[1] NX PX ARGV[2]; if set, INCR KEYS[2] and
 * return it (the fence), else 0. */
extern const struct lb_script lb_script_fence_acquire;
/* Lease extension: PEXPIRE KEYS[1] ARGV[2] if it holds ARGV[1]; 1 or 0. */
extern const struct lb_script lb_script_cas_pexpire;
/* The fenced resource (KEYS[1] the value, KEYS[2] the highest fence accepted
 * and the section that presented it, KEYS[3] a count of refusals): read or
 * write with fence ARGV[1] for section ARGV[2]; a fence below the highest, or
 * equal to it from another section, is refused with an error "STALE ..." and counted by the
 * resource itself (a refused write whose sender gave up still counts),
 * otherwise it becomes the highest. */
extern const struct lb_script lb_script_fenced_read;
extern const struct lb_script lb_script_fenced_write;
/* The resource's plain write: SET KEYS[1] ARGV[1], INCR KEYS[2] (the writes
 * it applied, counted where they land). */
extern const struct lb_script lb_script_counted_write;
/* fair's queue (strategies/fair.c): KEYS lock, queue, leases, hand-off note;
 * ARGV "acquire" token ttl lease_ms grace_ms -> 1 mine | 0 queued, or
 * ARGV "release" token ttl -> 1 released (handed on) | 0 not mine. */
extern const struct lb_script lb_script_fair;
/* EVALSHA, and EVAL when the server answers NOSCRIPT (fresh or restarted). */
redisReply *lb_eval(struct lb_node *n, const struct lb_script *s,
		    int nkeys, int nargs, const char **keys_then_args);
/* Release by compare-and-delete: 0 released | LB_ELOST | LB_EREDIS. */
int lb_cad_release(struct lb_node *n, const char *key, const char *mine);
/* The same, waking one waiter blocked in lb_notify_wait on @key. */
int lb_cad_release_notify(struct lb_node *n, const char *key, const char *mine, int64_t ttl_ms);
/* A woken waiter takes the reserved (or free) lock: 0 | LB_EBUSY | LB_EREDIS. */
int lb_claim(struct lb_node *n, const char *key, const char *mine, int64_t ttl_ms);
/* SET NX PX plus the next fence from @fence_key: 0 (and *fence) | LB_EBUSY | LB_EREDIS. */
int lb_fence_acquire(struct lb_node *n, const char *key, const char *fence_key, const char *mine,
		     int64_t ttl_ms, int64_t *fence);
/* Extend @key to @ttl_ms if it still holds @mine: 0 | LB_ELOST | LB_EREDIS. */
int lb_cas_pexpire(struct lb_node *n, const char *key, const char *mine, int64_t ttl_ms);
/* The resource's fenced read and write of @key (its fence in "<key>:fence",
 * its refusals counted in "<key>:stale", the writes it applied in
 * "<key>:applied"): 0 | LB_ESTALE (a higher fence was
 * accepted) | LB_EREDIS (refused) | LB_ETIMEOUT (no reply: a write may have
 * landed). A read of a missing value gives 0. */
int lb_fenced_read(struct lb_node *n, const char *key, int64_t fence, const char *section,
		   long long *value);
int lb_fenced_write(struct lb_node *n, const char *key, int64_t fence, const char *section,
		    long long value);
/* The resource's plain write of @key, counted in "<key>:applied" (as an
 * accepted fenced write is): 0 | LB_EREDIS | LB_ETIMEOUT (no reply). */
int lb_counted_write(struct lb_node *n, const char *key, long long value);
/* Block until a release of @key signals (BLPOP on its signal list) or
 * @timeout_ms passes: 0 signalled | LB_ETIMEOUT | LB_EREDIS. */
int lb_notify_wait(struct lb_node *n, const char *key, int64_t timeout_ms);
/* BLPOP @list for at most @timeout_ms (the connection's timeout stretched to
 * cover it): 0 popped (the element into @val, @len bytes, when @val is not
 * NULL) | LB_ETIMEOUT | LB_EREDIS. */
int lb_blpop(struct lb_node *n, const char *list, int64_t timeout_ms, char *val, size_t len);

/*
 * Fan-out: send one command to every node before reading any reply (one round
 * trip for all, not one per node), then collect the replies with a shared
 * deadline of @timeout_ms. replies[i] is NULL for a node that was down, timed
 * out or failed (its connection is closed). @failpoint, if not NULL, fires
 * after every node was sent the command and before any reply is read.
 * The caller frees each non-NULL reply.
 */
void lb_fanout(struct lb_node **nodes, size_t n, int64_t timeout_ms, const char *failpoint,
	       int argc, const char **argv, redisReply **replies);

/* lb_fanout of EVALSHA @s; nodes that answer NOSCRIPT get a plain EVAL. */
void lb_fanout_eval(struct lb_node **nodes, size_t n, int64_t timeout_ms, const char *failpoint,
		    const struct lb_script *s, int nkeys, int nargs, const char **keys_then_args,
		    redisReply **replies);

/* lease_end ops (strategy.h) for locks whose lease has no end (no TTL), and
 * for locks whose end the holder cannot know (others move it). */
int64_t lb_lease_never(void *self);
int64_t lb_lease_unknown(void *self);

#endif
