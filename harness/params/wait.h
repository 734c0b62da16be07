/*
 * wait.h - wait policies and the acquire loop that applies them.
 *
 * A strategy's acquire() makes one attempt; the harness decides whether and
 * when to try again, so every strategy is measured under the same policy:
 *   try            one attempt (seed 002's non-waiting mode)
 *   fixed:MS       poll every MS until the deadline (seed 002: 30 ms)
 *   retries:N:MS   at most N attempts, MS apart (seed 003: 3 tries, 200 ms)
 *   backoff:MIN:MAX exponential with full jitter: before attempt k (k >= 2),
 *                  sleep uniform(0, min(MAX, MIN * 2^(k-2)))
 *   notify[:MS]    block until the holder's release signals (the strategy's
 *                  wait op: BLPOP on a list the release pushes to in the same
 *                  Lua call), at most MS (100) before trying again, so a
 *                  crashed holder strands nobody beyond its TTL
 *   library        library strategies only: one call of the library's own
 *                  blocking acquire, with its documented defaults
 * Every wait is bounded by the caller's deadline.
 */
#ifndef LB_WAIT_H
#define LB_WAIT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "strategy.h"

enum lb_wait_kind { LB_WAIT_TRY, LB_WAIT_FIXED, LB_WAIT_RETRIES, LB_WAIT_BACKOFF, LB_WAIT_NOTIFY,
		    LB_WAIT_LIBRARY, LB_WAIT_OWN };

struct lb_wait {
	enum lb_wait_kind kind;
	int64_t interval_ms; /* fixed, retries; notify: the fallback */
	int64_t max_tries;   /* retries; 0 = unbounded */
	int64_t min_ms, max_ms; /* backoff */
};

/* Parse a policy; on failure LB_EINVAL with a reason in @err. */
int lb_wait_parse(const char *s, struct lb_wait *out, char *err, size_t errlen);
/* What a policy looks like, for messages ("try, fixed:MS, ..."): what
 * lb_wait_parse says a bad one should have been. */
void lb_wait_expected(char *buf, size_t len);
/* The canonical text of @w ("fixed:30"). */
void lb_wait_format(const struct lb_wait *w, char *buf, size_t len);
/* Delay in ns before attempt number @attempt (2, 3, ...), or -1 when the
 * policy allows no further attempt. @rng (splitmix64 state) feeds the jitter;
 * for notify it is the longest wait for a signal. */
int64_t lb_wait_delay_ns(const struct lb_wait *w, int64_t attempt, uint64_t *rng);
/* How often @w tries again, in ms (the longest gap for backoff; 0 for try). */
int64_t lb_wait_poll_ms(const struct lb_wait *w);
/* splitmix64: the next random number of @state. */
uint64_t lb_rand_next(uint64_t *state);

struct lb_acquire_info {
	int64_t attempts;  /* acquire() calls made */
	int64_t errors;    /* attempts that failed with LB_EREDIS (a node unreachable) */
	int last_status;   /* status of the last attempt */
};

/* Running totals lb_acquire adds to as each attempt ends (in shared memory),
 * so that a process killed while acquiring has counted its attempts; and
 * when the last attempt began (lb_now_ns), stamped as it begins. Any may be NULL. */
struct lb_acquire_tally {
	_Atomic uint64_t *attempts, *errors;
	_Atomic int64_t *last_try_ns;
	void *arg;
	/* optional: told before each attempt, and after it with its status */
	void (*on_try_begin)(void *arg);
	void (*on_try_end)(void *arg, int rc);
};

/*
 * Acquire with @strategy's one-attempt acquire(), retrying as @w says until
 * the monotonic @deadline_ns. Returns 0 (acquired; @grant filled) or the last
 * attempt's status (LB_EBUSY, LB_EVALIDITY, LB_EREDIS), or LB_ETIMEOUT when the
 * deadline cut the policy short, or LB_ECANCELED when *@cancel (may be NULL)
 * became non-zero between attempts.
 */
int lb_acquire(const struct lock_strategy *strategy, void *self, const struct lb_wait *w,
	       int64_t deadline_ns, const atomic_int *cancel, uint64_t *rng,
	       struct lb_grant *grant, struct lb_acquire_info *info,
	       const struct lb_acquire_tally *tally);

/* `own`, each strategy its own way of waiting (a scenario's word, resolved
 * per strategy before a run: lb_wait_own): a library's (library), a recipe
 * built around a wait (fair: notify), otherwise lockbench's default poll,
 * fixed:10. */
struct lb_wait lb_wait_own(const struct lock_strategy *s);
/* Does @w (own resolved for @s) wait inside a library's own calls? */
bool lb_wait_in_library(const struct lb_wait *w, const struct lock_strategy *s);

#endif
