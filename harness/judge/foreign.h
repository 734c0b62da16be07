/*
 * foreign.h - foreign releases, seen from the servers: pure functions over a
 * history and the lock servers' own key events (keywatch.h records them;
 * keyevents.csv keeps them). No Redis, no clock: `lockbench check` recomputes
 * the figure from history.csv and keyevents.csv alone.
 *
 * A client cannot always tell that its release deleted another client's lock
 * (a library's release is its own code; a plain DEL does not say whose lock
 * it removed). The server can: every SET and DEL of a lock key is a keyspace
 * notification, in the server's own order. The definitions (docs/index.md,
 * "How the oracle counts"):
 *
 *  - The events of one server and one key are read in the server's order.
 *    `watch` (observation begins or resumes: after a restart, a reconnection,
 *    a promotion) and `unwatch` make what the key holds unknown.
 *  - A `set` belongs to the section whose token is the value it wrote (a
 *    section's token: the hash of what its acquire wrote, history.csv). A
 *    value no section entered with belongs to nobody inside (a failed
 *    attempt). Matched by time instead: a set whose value matches no token
 *    when sections have none (an adapter that does not say token=), and,
 *    when the run has one lock node, a set whose value could not be read
 *    (another event of the key came before the watcher's GET). It then
 *    belongs to the section of the key (and node) not yet given a set on
 *    this server, nor seen to be written there by its token, whose acquire
 *    had begun by the set, that entered first at most one lease after it, in
 *    the server's order: at or after the enter of the section given the
 *    key's previous set on this server (from the start when none came since
 *    a watch begun before every acquire); after the watcher lost the server,
 *    at or after the set minus the delivery slop (a watcher behind by more
 *    than the slop would give the set to the next section).
 *    (On several nodes a value not read belongs to nobody known: a failed
 *    Redlock attempt undoes its sets at once, and would be taken for the
 *    next holder's. On several nodes sections without a token cannot be
 *    judged at all: the count is not reported, `unjudged`.)
 *  - A `del` is a foreign release when the key held a section B's set and the
 *    del came before B's exit (stamped before B sends its release, so B's own
 *    release cannot have sent it): from B's enter on, or, on one node and a
 *    set matched by its token, from the set on (an acquire there writes once
 *    and never undoes). Not before B's enter otherwise: on several nodes a
 *    library that retries with one token deletes its own failed attempt's
 *    keys while it acquires; a set matched by time may be another's. Not
 *    after B's exit: B's release may have sent it (and a holder killed inside
 *    ends at its death, as one killed while releasing ends at its exit: the
 *    history cannot tell them apart); except, on one node and a set matched
 *    by its token, a del until B's release returned (+ slop) when that
 *    release said it found B's lock gone or another's (outcome lost or
 *    foreign): it deleted nothing of B's, so another release did, racing B's
 *    at B's exit. `expired` is never a release.
 *  - It is attributed to the client, other than B's, whose release of that
 *    key was in flight: exit <= t <= release returned + slop (a release that
 *    never returned: from its exit on). Of several, one whose own release
 *    said it deleted another's lock (outcome foreign), then the latest exit.
 *    None: "unknown".
 */
#ifndef LB_FOREIGN_H
#define LB_FOREIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "history.h"
#include "shared_event.h"

/* The most servers one run watches (lock nodes, replicas, a cluster's shard). */
#define LB_KEYWATCH_MAX_SERVERS 16

/* expire: the key's TTL was set or removed (EXPIRE, PEXPIRE, a SET's PX, PERSIST);
 * found: what the server held when its watch began (a start, a restart, a
 * promotion: its value and TTL, or ttl_ms -2 for no key). Neither is a change
 * of whose lock it holds: the judge passes over both (a watch leaves the
 * holder unknown until the next set, as before); report.html's Redis lane
 * draws them. */
enum lb_key_kind { LB_KEY_SET, LB_KEY_DEL, LB_KEY_EXPIRED, LB_KEY_WATCH, LB_KEY_UNWATCH,
		   LB_KEY_EXPIRE, LB_KEY_FOUND, LB_KEY_COUNT };
const char *lb_key_kind_name(int kind);
int lb_key_kind_parse(const char *name); /* -1 when unknown */

/* What a lock server did to a lock key, as its notification reached the watcher. */
struct lb_key_event {
	int64_t t_ns;     /* when the watcher received it, on the history's clock */
	uint64_t value;   /* set: lb_token_hash of the value it wrote, 0 when not known;
			     found: of the value the key held */
	int32_t key;      /* the lock's index; -1 for watch and unwatch */
	int32_t port;     /* the server's port (for the reader of the file) */
	int32_t ttl_ms;   /* set, expire, found: the key's PTTL, read with the value (-1: no
			     TTL; -2, found only: no key); LB_KEY_TTL_UNKNOWN when not read
			     (another event came first) */
	uint8_t server;   /* which watched server: events of one server are in its order */
	uint8_t node;     /* the lock node the server stands for (Redlock: node i) */
	uint8_t kind;     /* enum lb_key_kind */
	uint8_t flags;    /* the watcher's bookkeeping (keywatch.c); 0 in a file */
};

#define LB_KEY_TTL_UNKNOWN INT32_MIN

struct lb_foreign_opts {
	int64_t slop_ns;  /* from the server's command to the watcher's stamp (LB_KEYWATCH_SLOP_NS) */
	int64_t ttl_ns;   /* the lease: how long after its set a section matched by time may enter */
	int64_t end_ns;   /* the run's end (open sections end there) */
};

/* The slop lockbench uses: measured in docs/index.md (delivery took at most
 * a few ms on a loaded 2-core machine; 50 ms is a wide margin). */
#define LB_KEYWATCH_SLOP_NS (50 * INT64_C(1000000))

/* One foreign release the servers saw. */
struct lb_foreign_release {
	int64_t t_ns;
	int server, node, key;
	int owner;          /* whose lock it deleted: client, and its section */
	uint32_t owner_seq;
	int by;             /* the client whose release was in flight, or -1 (unknown) */
	uint32_t by_seq;
};

struct lb_foreign_result {
	uint64_t releases;      /* foreign releases */
	uint64_t unattributed;  /* of which no release was in flight */
	uint64_t sets, sets_owned; /* sets, and those a section was found for */
	uint64_t dels;
	bool unjudged;          /* several lock nodes, and sections without a token: a set
				   cannot be told from another's by time (a failed Redlock
				   attempt's, a late one, an extension): the count means
				   nothing, and is not reported (lb_foreign_verdict) */
	bool unseen;            /* a library (blind) entered sections, but the servers
				   showed no set of a lock key: the lock is written as another type (Symfony
				   Lock's sorted set, ZADD), which the watcher does not
				   follow; not reported either */
	struct lb_foreign_release *list; /* malloc'd, @releases long (NULL when 0) */
	uint64_t lapsed;        /* sections whose lease a server ended while they held it:
				   an `expired` of the key while it held their set, from
				   their set (their enter when matched by time) to their exit */
	bool *lapsed_at;        /* malloc'd, per section (NULL when none lapsed) */
	int64_t *ended_ns;      /* malloc'd, per section: when a server first ended its
				   lease while it held it (an `expired`, as lapsed_at,
				   or a foreign release's `del`), -1 when none did; NULL
				   when no lease ended */
};

/*
 * Judge the @ne key events @e (in the watcher's order: each server's in its
 * own order) against the @n sections @s. Returns 0 or LB_ENOMEM; the caller
 * frees out->list (lb_foreign_result_free).
 */
int lb_foreign_judge(const struct lb_section *s, size_t n, const struct lb_key_event *e,
		     size_t ne, const struct lb_foreign_opts *o, struct lb_foreign_result *out);
void lb_foreign_result_free(struct lb_foreign_result *r);
/*
 * Whose lock each of the @ne key events left the key holding, as the judge
 * sees it: @owner[i] is, for a set, the section its value (or, failing
 * that, its time) belongs to (an index into @s), LB_OWNER_NONE for a value
 * no section entered with, LB_OWNER_UNKNOWN for a value neither read nor
 * matched; for other events LB_OWNER_UNKNOWN. 0 or LB_ENOMEM.
 */
#define LB_OWNER_NONE (-1)
#define LB_OWNER_UNKNOWN (-2)
int lb_foreign_owners(const struct lb_section *s, size_t n, const struct lb_key_event *e,
		      size_t ne, const struct lb_foreign_opts *o, int64_t *owner);

struct lb_verdict;
/*
 * The run's foreign releases into @v (judged by lb_oracle_judge from the
 * releases' outcomes): the servers' figure when the servers were watched
 * (@e not NULL; judged into @out, which the caller frees) and it could be
 * judged (not out->unjudged), else the releases' own, or n/a for a release
 * that cannot say (@blind: a library's).
 * 0 or LB_ENOMEM.
 */
int lb_foreign_verdict(struct lb_verdict *v, const struct lb_section *s, size_t n,
		       const struct lb_key_event *e, size_t ne, bool blind,
		       const struct lb_foreign_opts *o, struct lb_foreign_result *out);

/*
 * The notices of the leases the servers ended (docs/running.md, "Notices"):
 * for each section whose lease a server ended while it was inside
 * (@fr->ended_ns, from lb_foreign_verdict), the first `lost-notice` event of
 * its client from its enter to its exit (@end_ns: the run's end, for a
 * section still open) is when the holder was told; the lag is that minus the
 * server's end. None: a notice missed. Fills v->leases_ended,
 * notices_missed, notice_lag_p50_ms and _max_ms, and v->notices_known
 * (the servers' events judged, and @complete: no event dropped). When
 * @lag_ns is not NULL, @lag_ns[i] is section i's lag, or INT64_MIN when its
 * lease was not ended or it was not told. 0 or LB_ENOMEM.
 */
int lb_notice_verdict(struct lb_verdict *v, const struct lb_section *s, size_t n,
		      const struct lb_foreign_result *fr, const struct lb_event *ev, size_t n_ev,
		      int64_t end_ns, bool complete, int64_t *lag_ns);

/*
 * Held with no live holder (docs/running.md): the time a lock server kept a
 * lock key while no client had it, from the servers' own events @e
 * (keyevents.csv): a key is held from its set until its del or expired, and
 * never past the PTTL read with its set or a later expire; a client has it
 * from its acquire's return (it believes it holds) to its release's return,
 * or to its death. The
 * stretches held while no client had it, summed over keys into
 * v->held_no_holder_ms, the longest into v->held_no_holder_max_ms; a stretch
 * no longer than the watcher's slop (@o->slop_ns) is delivery, not counted.
 * The caller says whether it is known. 0 or LB_ENOMEM.
 */
int lb_unattended_verdict(struct lb_verdict *v, const struct lb_section *s, size_t n,
			  const struct lb_key_event *e, size_t ne, int keys,
			  const struct lb_foreign_opts *o);

#endif
