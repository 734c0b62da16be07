/*
 * leasewatch.h - the lease watcher: what lockbench's own etcd members or
 * ZooKeeper servers did to the holder of a consensus lock, seen by lockbench's
 * own connection to them, on the history's clock: the same events as the key
 * watcher's (keywatch.h; keyevents.csv), for the foreign-release judge and the
 * notices' lag (foreign.h). Never on an ensemble lockbench did not start
 * (--etcd, --zookeeper).
 *
 * It follows the owner of each lock key, as the recipe defines it: etcd's
 * concurrency.Mutex, the key under KEY/ with the lowest create revision
 * (what Mutex.Lock itself asks: a Get of the prefix, WithFirstCreate);
 * kazoo's Lock, the child of /lockbench/KEY with the lowest sequence. A
 * waiter's own key or node is no change of owner. Each new owner is a `set`
 * whose value is its token as the adapters say it (token=: etcd, the lease in
 * hex; kazoo, the node's sequence), so the judge matches it to its section
 * by token. When the owner goes, the watcher asks the server why:
 *  - etcd: LeaseTimeToLive of the owner's lease. Gone (TTL -1): the server
 *    ended the lease (its expiry, or a revoke) and the key went with it:
 *    `expired`. Still there: a delete of the key (the holder's Unlock):
 *    `del`. A release (Unlock, then Session.Close's revoke) may be read as
 *    `expired` when the revoke came first: it comes after the holder's exit,
 *    where the judge takes it as the holder's own end.
 *  - ZooKeeper: is the owner node's session (its ephemeralOwner) still one
 *    of the leader's sessions (`dump`)? No: the session expired (or was
 *    closed) and its ephemeral node with it: `expired`. Yes: the holder
 *    deleted its node: `del`.
 *
 * How: a poll, every 5 ms, of the owner (etcd: a linearizable Range of
 * KEY/, limit 1, sorted by create revision, through the JSON gateway of one
 * member, the next when it does not answer within 250 ms; ZooKeeper: the
 * leader's `dump`, four-letter word, the leader found with `srvr`). A change
 * is stamped when the answer that shows it came back: at most one period
 * plus a round trip after the server made it (and later while no member
 * answers: a round in which none does is an `unwatch`, the next answer a
 * `watch`, after which the owner is `found`, not set: the judge does not
 * guess whose lease ended while nobody watched). Why a poll, not etcd's
 * watch stream or ZooKeeper's child watches: the owner, the lease and the
 * session are each a question the server answers in one request, and one
 * loop asks them the same way on both; a period of 5 ms is far below the
 * lags it measures (a lease's end told within a second or more).
 */
#ifndef LB_LEASEWATCH_H
#define LB_LEASEWATCH_H

#include <stddef.h>

#include "consensus.h"
#include "keywatch.h"

#define LB_LEASEWATCH_PERIOD_MS 5

/*
 * Start watching the lock keys "<@prefix>lock:<k>" (k < @keys) on the members
 * of @c (lockbench's ensemble), for a run of @duration_s, into @w (then
 * lb_keywatch_finish and lb_keywatch_stop as for the key watcher). Returns
 * once the owners were read once (within 5 s). 0, or a negative status with
 * @why set (the figures are then n/a, and why).
 */
int lb_leasewatch_start(struct lb_keywatch *w, const struct lb_consensus *c, const char *prefix,
			int keys, double duration_s, char *why, size_t len);

#endif
