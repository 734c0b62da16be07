/*
 * test_strategies.c - the contract every strategy is held to, run against
 * real redis-servers. Each clause is one parameterized test over the
 * strategies it applies to; the table below says which (and is checked to
 * cover the whole registry, so a new strategy cannot slip past the suite).
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <criterion/parameterized.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "failpoint.h"
#include "fixture.h"

#define TTL_MS 300
#define KEY "lbtest:lock"

/* How a strategy is expected to behave, clause by clause. */
struct expect {
	const char *name;
	bool excludes;     /* a second client is refused while the lock is held */
	int ttl_wait_ms;   /* >0: the lock frees itself after this long; 0: never */
	bool owner_only;   /* a stale holder's release is refused (LB_ELOST), the new lock stays */
	bool stale_foreign;/* a stale holder's release deletes the new lock (LB_EFOREIGN) */
	bool anyone_dels;  /* a non-holder's release deletes the lock (LB_EFOREIGN) */
	bool renews;       /* the holder's watchdog keeps the lease alive (no TTL lapse) */
};

static const struct expect expectations[] = {
	{ "fair",         true,  TTL_MS + 150, true,  false, false, false },
	{ "fenced",       true,  TTL_MS + 150, true,  false, false, false },
	{ "get-del",      true,  TTL_MS + 150, true,  false, false, false },
	{ "none",         false, 0,            false, false, false, false },
	{ "redlock",      true,  TTL_MS + 150, true,  false, false, false },
	{ "renewal",      true,  0,            false, false, false, true },
	{ "set-nx-px",    true,  TTL_MS + 150, false, true,  true, false },
	{ "setnx",        true,  0,            false, false, true, false },
	{ "setnx-expire", true,  1150,         true,  false, false, false },
	{ "setnx-expire-as-written", true, 1150, true, false, false, false },
	{ "setnx-then-expire", true, 1150,   false, true,  true, false },
	{ "setnx-getset", true,  TTL_MS + 150, true,  false, false, false },
	{ "token-lua",    true,  TTL_MS + 150, true,  false, false, false },
	{ "wait-replicas", true, TTL_MS + 150, true,  false, false, false },
	{ "watch-multi",  true,  TTL_MS + 150, true,  false, false, false },
	/* library adapters (strategies/adapters): the contract holds for real code too */
	{ "redis-py@4.3.4", true, TTL_MS + 150, true, false, false, false },
	{ "redlock@4.2.0", true, TTL_MS + 150, true, false, false, false },
	{ "node-redis-warlock@1.0.2", true, TTL_MS + 150, true, false, false, false },
	/* no token: its done() sends a plain DEL only while the client's own clock
	 * says the lease lasts, so on one clock a stale release sends nothing */
	{ "redis-lock@1.0.0", true, TTL_MS + 150, true, false, false, false },
	/* using() and refresh timers extend the lease while the holder lives */
	{ "redlock@5.0.0-beta.2", true, 0, false, false, false, true },
	{ "sesamecare-redlock@1.4.0", true, 0, false, false, false, true },
	{ "redis-semaphore-mutex@5.8.0", true, 0, false, false, false, true },
	{ "redis-semaphore-redlock@5.8.0", true, 0, false, false, false, true },
	{ "redlock-universal@0.8.5", true, 0, false, false, false, true },
	{ "redlock-universal-redlock@0.8.5", true, 0, false, false, false, true },
	/* Symfony Lock: a stale release removes only its own member and says nothing
	 * (released, not not-owned): neither owner_only nor stale_foreign; its own
	 * test below (symfony_stale_release_is_quiet) */
	{ "symfony-lock@5.4.53", true, TTL_MS + 150, false, false, false, false },
	{ "symfony-lock-combined@5.4.53", true, TTL_MS + 150, false, false, false, false },
	/* tooz's heart re-arms held locks every lock_timeout/2 (whole seconds: 1 s here) */
	{ "tooz@3.1.0", true, 0, false, false, false, true },
	/* consensus locks (an etcd lease kept alive, a ZooKeeper session's heartbeats):
	 * the lock lasts while its holder lives, on three members lockbench starts */
	{ "etcd-lock@3.4.23", true, 0, false, false, false, true },
	{ "etcd-lock-fenced@3.4.23", true, 0, false, false, false, true },
	{ "etcd-lock@3.5.36-client", true, 0, false, false, false, true },
	{ "etcd-lock-fenced@3.5.36-client", true, 0, false, false, false, true },
	{ "kazoo-lock@2.8.0", true, 0, false, false, false, true },
	{ "kazoo-lock-fenced@2.8.0", true, 0, false, false, false, true },
	/* the PyPI libraries in lockbench's virtualenv (harness/deps.sh python) */
	{ "redis-py@8.2.0", true, TTL_MS + 150, true, false, false, false },
	/* expire is whole seconds: a 300 ms TTL is a 1 s lease */
	{ "python-redis-lock@4.0.1", true, 1150, true, false, false, false },
	{ "python-redis-lock-renewal@4.0.1", true, 0, false, false, false, true },
	{ "pottery-redlock@3.0.1", true, TTL_MS + 150, true, false, false, false },
	/* the Go libraries (harness/deps.sh go): no watchdog, a compare-and-delete release */
	{ "redsync@4.18.1", true, TTL_MS + 150, true, false, false, false },
	{ "redsync-redlock@4.18.1", true, TTL_MS + 150, true, false, false, false },
	{ "bsm-redislock@0.9.4", true, TTL_MS + 150, true, false, false, false },
	/* the Java libraries (strategies/adapters/java, a JVM a client): Redisson's
	 * watchdog renews every third of the lease (a 300 ms TTL: every 100 ms);
	 * lock(leaseTime) never renews, and a lapsed holder's unlock() throws
	 * IllegalMonitorStateException (not-owned); Curator's lease is the session */
	{ "redisson-lock@3.52.0", true, 0, false, false, false, true },
	{ "redisson-lock-lease@3.52.0", true, TTL_MS + 150, true, false, false, false },
	{ "redisson-fenced-lock@3.52.0", true, 0, false, false, false, true },
	{ "redisson-fair-lock@3.52.0", true, 0, false, false, false, true },
	{ "redisson-multilock@3.52.0", true, 0, false, false, false, true },
	{ "redisson-redlock@3.52.0", true, 0, false, false, false, true },
	{ "curator-mutex@5.9.0", true, 0, false, false, false, true },
	{ "curator-mutex-fenced@5.9.0", true, 0, false, false, false, true },
};
#define N_EXPECT (sizeof(expectations) / sizeof(expectations[0]))

struct sp {
	char name[40];
};

enum clause { ALL, EXCLUDES, TTL_FREES, NEVER_FREES, OWNER_ONLY, STALE_FOREIGN, ANYONE_DELS };

static bool applies(const struct expect *e, enum clause c)
{
	switch (c) {
	case ALL: return true;
	case EXCLUDES: return e->excludes;
	case TTL_FREES: return e->ttl_wait_ms > 0;
	case NEVER_FREES: return e->excludes && e->ttl_wait_ms == 0 && !e->renews;
	case OWNER_ONLY: return e->owner_only;
	case STALE_FOREIGN: return e->stale_foreign;
	case ANYONE_DELS: return e->anyone_dels;
	}
	return false;
}

static struct sp *params_for(enum clause c, size_t *n)
{
	struct sp *p = cr_malloc(sizeof(*p) * N_EXPECT);
	*n = 0;
	for (size_t i = 0; i < N_EXPECT; i++)
		if (applies(&expectations[i], c))
			strcpy(p[(*n)++].name, expectations[i].name);
	return p;
}

static void free_params(struct criterion_test_params *crp)
{
	cr_free(crp->params);
}

#define PARAMS(test, clause)                                                   \
	ParameterizedTestParameters(contract, test)                            \
	{                                                                      \
		size_t n;                                                      \
		struct sp *p = params_for(clause, &n);                         \
		return cr_make_param_array(struct sp, p, n, free_params);      \
	}

static const struct expect *expect_of(const char *name)
{
	for (size_t i = 0; i < N_EXPECT; i++)
		if (!strcmp(expectations[i].name, name))
			return &expectations[i];
	return NULL;
}

/* One test's world: servers, and two clients A and B of one strategy. */
static struct fx f;
static struct fx_client a, b;

static const struct lock_strategy *setup(const struct sp *p, int64_t ttl_ms)
{
	const struct lock_strategy *s = lb_strategy_find(p->name);
	cr_assert_not_null(s, "strategy %s is not registered", p->name);
	fx_start_for(&f, s);
	if (s->needs_replica)
		fx_start_replica(&f);
	fx_client_init(&a, &f, s, KEY, ttl_ms);
	fx_client_init(&b, &f, s, KEY, ttl_ms);
	return s;
}

static void teardown(void)
{
	fx_client_fini(&a);
	fx_client_fini(&b);
	fx_stop(&f);
	lb_failpoint_disarm_all();
}

static void contract_deadline(void) { fx_deadline(30); }
TestSuite(contract, .init = contract_deadline, .fini = teardown);

Test(contract, table_covers_registry)
{
	cr_assert_eq(lb_strategy_count(), N_EXPECT, "every registered strategy needs expectations");
	for (size_t i = 0; i < lb_strategy_count(); i++)
		cr_assert_not_null(expect_of(lb_strategy_at(i)->name), "%s has no expectations",
				   lb_strategy_at(i)->name);
}

PARAMS(free_lock_is_acquired, ALL)
ParameterizedTest(struct sp *p, contract, free_lock_is_acquired)
{
	/* 5 s, not TTL_MS: a JVM under make test's load released redisson-lock-lease's
	 * 300 ms lease after it ran out (not-owned), which says nothing of the contract */
	setup(p, 5000);
	cr_assert_eq(fx_acquire(&a), 0, "%s: a free lock was not acquired", p->name);
	cr_assert_eq(fx_release(&a), 0, "%s: releasing our own lock failed", p->name);
}

PARAMS(second_client_refused, EXCLUDES)
ParameterizedTest(struct sp *p, contract, second_client_refused)
{
	setup(p, 5000);
	cr_assert_eq(fx_acquire(&a), 0, "%s: a free lock was not acquired", p->name);
	cr_assert_eq(fx_acquire(&b), LB_EBUSY, "%s: B got a lock A holds", p->name);
}

/* The baseline's contract is the absence of one: both clients get in. */
Test(contract, none_admits_everyone)
{
	struct sp p = { "none" };
	setup(&p, 5000);
	cr_assert_eq(fx_acquire(&a), 0);
	cr_assert_eq(fx_acquire(&b), 0, "none must not exclude anyone");
}

PARAMS(release_frees, EXCLUDES)
ParameterizedTest(struct sp *p, contract, release_frees)
{
	setup(p, 5000);
	cr_assert_eq(fx_acquire(&a), 0, "%s: A could not take a free lock", p->name);
	cr_assert_eq(fx_release(&a), 0);
	cr_assert_eq(fx_acquire(&b), 0, "%s: B could not take a released lock", p->name);
}

PARAMS(ttl_frees, TTL_FREES)
ParameterizedTest(struct sp *p, contract, ttl_frees)
{
	setup(p, TTL_MS);
	cr_assert_eq(fx_acquire(&a), 0, "%s: A could not take a free lock", p->name);
	cr_assert_eq(fx_acquire(&b), LB_EBUSY);
	lb_sleep_ns(expect_of(p->name)->ttl_wait_ms * LB_NS_PER_MS);
	cr_assert_eq(fx_acquire(&b), 0, "%s: the lock did not free itself after its TTL", p->name);
}

PARAMS(never_frees, NEVER_FREES)
ParameterizedTest(struct sp *p, contract, never_frees)
{
	setup(p, TTL_MS);
	cr_assert_eq(fx_acquire(&a), 0, "%s: A could not take a free lock", p->name);
	cr_assert_eq(fx_pttl(&f, 0, KEY), -1, "%s: the key has a TTL", p->name);
	lb_sleep_ns(2 * TTL_MS * LB_NS_PER_MS);
	cr_assert_eq(fx_acquire(&b), LB_EBUSY, "%s: an abandoned lock came back", p->name);
}

/* A's lease lapses and B takes the lock; then A releases. */
static void stale_holder(const struct sp *p)
{
	setup(p, TTL_MS);
	cr_assert_eq(fx_acquire(&a), 0, "%s: A could not take a free lock", p->name);
	lb_sleep_ns(expect_of(p->name)->ttl_wait_ms * LB_NS_PER_MS);
	cr_assert_eq(fx_acquire(&b), 0);
}

PARAMS(stale_release_refused, OWNER_ONLY)
ParameterizedTest(struct sp *p, contract, stale_release_refused)
{
	stale_holder(p);
	cr_assert_eq(fx_release(&a), LB_ELOST, "%s: a stale release was not reported lost", p->name);
	cr_assert_eq(fx_acquire(&a), LB_EBUSY, "%s: the stale release freed B's lock", p->name);
	cr_assert_eq(fx_release(&b), 0, "%s: B could not release its own lock", p->name);
}

PARAMS(stale_release_foreign, STALE_FOREIGN)
ParameterizedTest(struct sp *p, contract, stale_release_foreign)
{
	stale_holder(p);
	cr_assert_eq(fx_release(&a), LB_EFOREIGN, "%s: deleting B's lock was not reported", p->name);
	cr_assert_eq(fx_pttl(&f, 0, KEY), -2, "%s: B's lock survived", p->name);
	cr_assert_eq(fx_release(&b), LB_ELOST);
}

/* Symfony Lock's Lock::release() deletes its own member of the sorted set
 * only when it is there and raises only when it is still there afterwards: a
 * stale holder's release is answered released, and B's lock stays. */
static void symfony_stale_release(const char *name)
{
	struct sp p;
	snprintf(p.name, sizeof(p.name), "%s", name);
	setup(&p, TTL_MS);
	cr_assert_eq(fx_acquire(&a), 0);
	lb_sleep_ns((TTL_MS + 150) * LB_NS_PER_MS);
	cr_assert_eq(fx_acquire(&b), 0, "%s: B did not take the lapsed lock", name);
	cr_assert_eq(fx_release(&a), 0, "%s: the stale release was not answered released", name);
	cr_assert_eq(fx_acquire(&a), LB_EBUSY, "%s: the stale release freed B's lock", name);
	cr_assert_gt(fx_pttl(&f, 0, KEY), 0, "%s: B's lock lost its key", name);
	cr_assert_eq(fx_release(&b), 0, "%s: B could not release its own lock", name);
	cr_assert_eq(fx_pttl(&f, 0, KEY), -2, "%s: B's release left the key", name);
}

Test(contract, symfony_stale_release_is_quiet)
{
	symfony_stale_release("symfony-lock@5.4.53");
}

Test(contract, symfony_combined_stale_release_is_quiet)
{
	symfony_stale_release("symfony-lock-combined@5.4.53");
}

PARAMS(anyone_can_delete, ANYONE_DELS)
ParameterizedTest(struct sp *p, contract, anyone_can_delete)
{
	setup(p, 5000);
	cr_assert_eq(fx_acquire(&a), 0, "%s: A could not take a free lock", p->name);
	cr_assert_eq(fx_release(&b), LB_EFOREIGN, "%s: B's DEL of A's lock was not foreign", p->name);
	cr_assert_eq(fx_pttl(&f, 0, KEY), -2);
}

/* ---- get-del: the lock expires and is taken between GET and DEL ---- */

static void take_over_between_get_and_del(const char *name, void *arg)
{
	(void)name;
	lb_sleep_ns((TTL_MS + 100) * LB_NS_PER_MS);
	*(int *)arg = fx_acquire(&b);
}

Test(contract, get_del_check_then_delete_is_foreign)
{
	struct sp p = { "get-del" };
	int b_rc = -100;

	setup(&p, TTL_MS);
	cr_assert_eq(fx_acquire(&a), 0);
	lb_failpoint_arm("between-get-del", take_over_between_get_and_del, &b_rc, 1);
	cr_assert_eq(fx_release(&a), LB_EFOREIGN);
	cr_assert_eq(b_rc, 0, "B did not get the lock between A's GET and DEL");
	cr_assert_eq(lb_failpoint_hits("between-get-del"), 1);
	cr_assert_eq(fx_pttl(&f, 0, KEY), -2, "A's DEL left B's lock in place");
}

/* ---- setnx-getset: a client whose clock runs ahead steals a live lock ---- */

Test(contract, setnx_getset_skewed_clock_steals_and_deletes)
{
	struct sp p = { "setnx-getset" };

	setup(&p, 5000);
	cr_assert_eq(fx_acquire(&a), 0);
	cr_assert_eq(fx_acquire(&b), LB_EBUSY);
	b.clock.offset_ms = 10000; /* B's clock is 10 s ahead: A's lock looks expired */
	cr_assert_eq(fx_acquire(&b), 0, "the skewed client did not take over");
	cr_assert_eq(lb_failpoint_hits("between-get-getset"), 1);
	cr_assert_eq(fx_release(&a), LB_EFOREIGN, "A, by its own clock still valid, deletes B's");
}

/* ---- redlock: quorum and validity ---- */

Test(contract, redlock_quorum_3_of_5)
{
	struct sp p = { "redlock" };

	setup(&p, 5000);
	lb_server_kill(f.srv[3]);
	lb_server_kill(f.srv[4]);
	cr_assert_eq(fx_acquire(&a), 0, "redlock refused with 3 of 5 nodes up");
	cr_assert_eq(fx_acquire(&b), LB_EBUSY);
	cr_assert_eq(fx_release(&a), 0);
}

Test(contract, redlock_refuses_2_of_5)
{
	struct sp p = { "redlock" };

	setup(&p, 5000);
	for (int i = 2; i < 5; i++)
		lb_server_kill(f.srv[i]);
	cr_assert_neq(fx_acquire(&a), 0, "redlock acquired with only 2 of 5 nodes up");
	cr_assert_eq(fx_pttl(&f, 0, KEY), -2, "a failed acquire left its key on node 0");
	cr_assert_eq(fx_pttl(&f, 1, KEY), -2, "a failed acquire left its key on node 1");
}

Test(contract, redlock_refuses_spent_validity)
{
	struct sp p = { "redlock" };
	int64_t pause_ms = TTL_MS;

	setup(&p, TTL_MS);
	lb_failpoint_arm("after-send", lb_fp_sleep, &pause_ms, 1);
	cr_assert_eq(fx_acquire(&a), LB_EVALIDITY);
	cr_assert_eq(lb_failpoint_hits("after-send"), 1);
	for (size_t i = 0; i < 5; i++)
		cr_assert_eq(fx_pttl(&f, i, KEY), -2, "node %zu kept a key after the refusal", i);
	cr_assert_eq(fx_acquire(&a), 0, "without the pause it acquires");
}

Test(contract, redlock_one_round_trip_to_a_paused_node)
{
	struct sp p = { "redlock" };

	setup(&p, 2000);
	lb_server_pause(f.srv[0]);
	lb_server_pause(f.srv[1]);
	int64_t t0 = lb_now_ns();
	cr_assert_eq(fx_acquire(&a), 0, "3 live nodes of 5 must be enough");
	int64_t ms = (lb_now_ns() - t0) / LB_NS_PER_MS;
	/* two paused nodes cost one shared timeout (100 ms for a 2 s TTL), not two */
	cr_assert_lt(ms, 190, "acquire took %lld ms: paused nodes were waited for in turn",
		     (long long)ms);
	lb_server_resume(f.srv[0]);
	lb_server_resume(f.srv[1]);
}

/* ---- failpoints fire where they should ---- */

struct at_setnx {
	long long pttl;
	bool held;
};

static void look_after_setnx(const char *name, void *arg)
{
	struct at_setnx *s = arg;
	(void)name;
	s->pttl = fx_pttl(&f, 0, KEY);
	s->held = true;
}

Test(contract, setnx_expire_failpoint_between_setnx_and_expire)
{
	struct sp p = { "setnx-expire" };
	struct at_setnx seen = { -100, false };

	setup(&p, 5000);
	lb_failpoint_arm("after-setnx", look_after_setnx, &seen, 1);
	cr_assert_eq(fx_acquire(&a), 0);
	cr_assert(seen.held, "the failpoint did not fire");
	cr_assert_eq(seen.pttl, -1, "at the failpoint the key must exist without a TTL");
	cr_assert_gt(fx_pttl(&f, 0, KEY), 0, "after acquire the key must have its TTL");
}

/* A client of @name killed between SETNX and EXPIRE (failpoint after-setnx)
 * leaves the lock's key without a TTL. */
static void crash_after_setnx(const char *name)
{
	struct sp p;
	int status;

	snprintf(p.name, sizeof(p.name), "%s", name);
	setup(&p, 2000);
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct fx_client c;
		fx_client_init(&c, &f, lb_strategy_find(name), KEY, 2000);
		lb_failpoint_arm("after-setnx", lb_fp_crash, NULL, 1);
		fx_acquire(&c);
		_exit(0); /* not reached: the failpoint kills us */
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the client was not killed");
	cr_assert_eq(fx_pttl(&f, 0, KEY), -1, "the orphaned key must have no TTL");
}

Test(contract, setnx_expire_killed_at_failpoint_leaves_no_ttl)
{
	crash_after_setnx("setnx-expire");
}

/* Seed 001 as written: a waiter's `elif conn.ttl(lockname)` re-arms the TTL
 * of a live lock (any TTL reply but 0); the corrected reading leaves it. */
static long long pttl_after_a_waiter(const char *name)
{
	struct sp p;
	snprintf(p.name, sizeof(p.name), "%s", name);
	setup(&p, 2000);
	cr_assert_eq(fx_acquire(&a), 0);
	lb_sleep_ns(800 * LB_NS_PER_MS); /* 2 s TTL, 1.2 s left: TTL answers 1 */
	cr_assert_eq(fx_acquire(&b), LB_EBUSY);
	return fx_pttl(&f, 0, KEY);
}

Test(contract, setnx_expire_as_written_waiters_rearm_a_live_ttl)
{
	long long pttl = pttl_after_a_waiter("setnx-expire-as-written");
	cr_assert_gt(pttl, 1700, "the waiter did not re-arm the live lock's TTL (pttl %lld)", pttl);
}

Test(contract, setnx_expire_waiters_leave_a_live_ttl)
{
	long long pttl = pttl_after_a_waiter("setnx-expire");
	cr_assert_lt(pttl, 1300, "the corrected recipe extended a live lock (pttl %lld)", pttl);
}

/* SETNX then EXPIRE and nothing else: a client killed between the two
 * leaves a key without a TTL, and a waiter leaves it so (setnx-expire's
 * waiter gives it one). Returns the key's PTTL after a waiter's attempt. */
static long long pttl_after_a_crash_and_a_waiter(const char *name)
{
	crash_after_setnx(name);
	cr_assert_eq(fx_acquire(&b), LB_EBUSY, "a waiter took a dead client's lock");
	return fx_pttl(&f, 0, KEY);
}

Test(contract, setnx_then_expire_waiters_leave_a_key_without_ttl)
{
	long long pttl = pttl_after_a_crash_and_a_waiter("setnx-then-expire");
	cr_assert_eq(pttl, -1, "a waiter gave the orphaned key a TTL (pttl %lld)", pttl);
}

Test(contract, setnx_expire_waiters_rearm_a_key_without_ttl)
{
	long long pttl = pttl_after_a_crash_and_a_waiter("setnx-expire");
	cr_assert_gt(pttl, 1000, "the waiter did not re-arm the orphaned key (pttl %lld)", pttl);
}

struct at_get_del {
	bool ours;
};

static void look_between_get_and_del(const char *name, void *arg)
{
	redisReply *r = fx_cmd(&f, 0, "GET %s", KEY);
	(void)name;
	((struct at_get_del *)arg)->ours = lb_reply_str_eq(r, ((struct lb_lock_base *)a.lock)->token);
	freeReplyObject(r);
}

Test(contract, get_del_failpoint_after_get_before_del)
{
	struct sp p = { "get-del" };
	struct at_get_del seen = { false };

	setup(&p, 5000);
	cr_assert_eq(fx_acquire(&a), 0);
	lb_failpoint_arm("between-get-del", look_between_get_and_del, &seen, 1);
	cr_assert_eq(fx_release(&a), 0);
	cr_assert(seen.ours, "at the failpoint our lock must still be there");
	cr_assert_eq(fx_pttl(&f, 0, KEY), -2);
}

static void count_renewal(const char *name, void *arg)
{
	(void)name;
	atomic_fetch_add((atomic_int *)arg, 1);
}

/* renewal's watchdog passes before-renew with the token in hand, before each
 * renewal: at TTL/3 (100 ms of a 300 ms lease), from its own thread */
Test(contract, renewal_failpoint_before_renew)
{
	struct sp p = { "renewal" };
	static atomic_int reached;

	atomic_store(&reached, 0);
	setup(&p, TTL_MS);
	lb_failpoint_arm("before-renew", count_renewal, &reached, 1);
	cr_assert_eq(fx_acquire(&a), 0);
	lb_sleep_ns(3 * TTL_MS * LB_NS_PER_MS / 2);
	cr_assert_eq(fx_release(&a), 0, "the renewed lock was not ours at its release");
	cr_assert_geq(atomic_load(&reached), 1, "the watchdog never reached before-renew");
}

Test(contract, failpoints_listed_are_reached)
{
	/* every failpoint a strategy lists must be reachable from some test above */
	static const char *const known[] = { "after-setnx", "between-get-del", "after-send",
					     "between-get-getset", "before-renew", NULL };
	for (size_t i = 0; i < lb_strategy_count(); i++) {
		const struct lock_strategy *s = lb_strategy_at(i);
		for (const char *const *fp = s->failpoints; fp && *fp; fp++) {
			bool found = false;
			for (const char *const *k = known; *k; k++)
				found |= !strcmp(*k, *fp);
			cr_assert(found, "%s lists failpoint %s that no test exercises", s->name, *fp);
		}
	}
}

/* ---- the fixes (issue 7) ---- */

Test(contract, fenced_fences_increase_with_every_acquire)
{
	struct sp p = { "fenced" };

	setup(&p, 5000);
	cr_assert_eq(fx_acquire(&a), 0);
	int64_t first = a.grant.fence;
	cr_assert_gt(first, 0, "the grant carries no fence");
	cr_assert_eq(fx_acquire(&b), LB_EBUSY);
	cr_assert_eq(b.grant.fence, 0, "a refused acquire must not draw a fence");
	cr_assert_eq(fx_release(&a), 0);
	cr_assert_eq(fx_acquire(&b), 0);
	cr_assert_gt(b.grant.fence, first, "fence %lld after %lld", (long long)b.grant.fence,
		     (long long)first);
}

/* The watchdog keeps a 300 ms lease alive for 1 s, and stops at release. */
Test(contract, renewal_extends_while_held_and_stops_at_release)
{
	struct sp p = { "renewal" };
	const struct lock_strategy *s = setup(&p, TTL_MS);

	cr_assert_eq(fx_acquire(&a), 0);
	lb_sleep_ns(1000 * LB_NS_PER_MS);
	cr_assert_gt(fx_pttl(&f, 0, KEY), 0, "the lease was not renewed");
	cr_assert(s->held(a.lock), "held() says no while the lease is renewed");
	cr_assert_eq(fx_acquire(&b), LB_EBUSY);
	cr_assert_eq(fx_release(&a), 0);
	/* put A's token back by hand: a watchdog still running would renew it */
	const struct lb_lock_base *base = a.lock;
	redisReply *r = fx_cmd(&f, 0, "SET %s %s PX %d", KEY, base->token, TTL_MS);
	cr_assert(lb_reply_ok(r));
	freeReplyObject(r);
	lb_sleep_ns((TTL_MS + 300) * LB_NS_PER_MS);
	cr_assert_eq(fx_pttl(&f, 0, KEY), -2, "the watchdog renewed a released lease");
}

/* Someone else removes the lock: the next renewal finds the token gone and
 * the holder is told. */
Test(contract, renewal_reports_a_lost_lease)
{
	struct sp p = { "renewal" };
	const struct lock_strategy *s = setup(&p, TTL_MS);

	cr_assert_eq(fx_acquire(&a), 0);
	cr_assert(s->held(a.lock));
	redisReply *r = fx_cmd(&f, 0, "DEL %s", KEY);
	freeReplyObject(r);
	int64_t until = lb_now_ns() + TTL_MS * LB_NS_PER_MS;
	while (s->held(a.lock) && lb_now_ns() < until)
		lb_sleep_ns(5 * LB_NS_PER_MS);
	cr_assert_not(s->held(a.lock), "a lost lease was not reported within one TTL");
}

/* The node stops answering: renewals time out and held() turns false when
 * the lease runs out, before another client could take the lock. */
Test(contract, renewal_unreachable_node_ends_the_lease)
{
	struct sp p = { "renewal" };
	const struct lock_strategy *s = setup(&p, TTL_MS);

	cr_assert_eq(fx_acquire(&a), 0);
	lb_server_pause(f.srv[0]);
	lb_sleep_ns(TTL_MS * LB_NS_PER_MS);
	bool held = s->held(a.lock);
	lb_server_resume(f.srv[0]);
	cr_assert_not(held, "held() still true a TTL after the node stopped answering");
}

/* A partition of the client (the harness's `partition` fault) cuts off its
 * watchdog too: the lease is not renewed behind the partition's back, it
 * lapses, and held() says so. */
Test(contract, renewal_partition_reaches_the_watchdog)
{
	const struct lock_strategy *s = lb_strategy_find("renewal");
	static _Atomic int cut;
	struct lb_node node, *nodes[1] = { &node };

	fx_start(&f, 1);
	lb_node_init_local(&node, f.srv[0]->port, 500);
	node.blocked = &cut;
	struct lb_lock_cfg cfg = { .nodes = nodes, .n_nodes = 1, .key = KEY, .ttl_ms = TTL_MS };
	void *lock = s->create(&cfg);
	struct lb_grant g;
	cr_assert_not_null(lock);
	cr_assert_eq(s->acquire(lock, &g), 0);
	atomic_store(&cut, 1);
	lb_node_close(&node);
	lb_sleep_ns((TTL_MS + 150) * LB_NS_PER_MS);
	long long pttl = fx_pttl(&f, 0, KEY);
	bool held = s->held(lock);
	s->destroy(lock);
	lb_node_close(&node);
	cr_assert_eq(pttl, -2, "the watchdog renewed through the partition (pttl %lld)", pttl);
	cr_assert_not(held, "held() still true after the lease lapsed behind a partition");
}

Test(contract, renewal_bound_lets_the_lease_lapse)
{
	const struct lock_strategy *s = lb_strategy_find("renewal");
	struct lb_lock_cfg opts = { .max_extensions = 2 };

	fx_start(&f, 1);
	fx_client_init_opts(&a, &f, s, KEY, TTL_MS, &opts);
	fx_client_init(&b, &f, s, KEY, TTL_MS);
	cr_assert_eq(fx_acquire(&a), 0);
	/* two renewals at ~100 and ~200 ms, then the lease ends near 500 ms */
	lb_sleep_ns(400 * LB_NS_PER_MS);
	cr_assert_gt(fx_pttl(&f, 0, KEY), 0, "renewed fewer than 2 times");
	lb_sleep_ns(300 * LB_NS_PER_MS);
	cr_assert_eq(fx_pttl(&f, 0, KEY), -2, "renewed beyond its bound of 2");
	cr_assert_not(s->held(a.lock));
	cr_assert_eq(fx_acquire(&b), 0);
}

Test(contract, wait_replicas_acquires_only_what_reached_the_replica)
{
	struct sp p = { "wait-replicas" };

	setup(&p, 5000);
	cr_assert_eq(fx_acquire(&a), 0);
	struct lb_node rep;
	lb_node_init_local(&rep, f.replica->port, 1000);
	redisReply *r = lb_node_cmd(&rep, "EXISTS %s", KEY);
	long long n = 0;
	cr_assert(lb_reply_int(r, &n) && n == 1, "the replica does not have the lock at the grant");
	freeReplyObject(r);
	cr_assert_eq(fx_release(&a), 0);
	/* the replica stops: WAIT gets no acknowledgement, the lock is given back */
	lb_server_pause(f.replica);
	int rc = fx_acquire(&b);
	long long pttl = fx_pttl(&f, 0, KEY);
	lb_server_resume(f.replica);
	lb_node_close(&rep);
	cr_assert_eq(rc, LB_ENOREPLICA, "acquired without a replica's acknowledgement");
	cr_assert_eq(pttl, -2, "an unconfirmed lock was left on the primary");
}

Test(contract, redlock_without_validity_check_enters_late)
{
	const struct lock_strategy *s = lb_strategy_find("redlock");
	struct lb_lock_cfg opts = { .no_validity_check = true };
	int64_t pause_ms = TTL_MS;

	fx_start(&f, 5);
	fx_client_init_opts(&a, &f, s, KEY, TTL_MS, &opts);
	lb_failpoint_arm("after-send", lb_fp_sleep, &pause_ms, 1);
	cr_assert_eq(fx_acquire(&a), 0, "the naive variant refused a late quorum");
	cr_assert_leq(a.grant.validity_ms, 0, "validity %lld: the stall did not spend it",
		      (long long)a.grant.validity_ms);
}

/* fair: waiters keep their place in the queue across any number of
 * attempts (what a notify fallback timeout does), and the release hands the
 * lock to the first of them: the order of arrival, not of polling. */
Test(contract, fair_keeps_the_queue_order_across_timeouts)
{
	const struct lock_strategy *s = lb_strategy_find("fair");
	struct fx_client w[4];
	struct lb_grant g;

	fx_start(&f, 1);
	for (int i = 0; i < 4; i++)
		fx_client_init(&w[i], &f, s, KEY, 5000);
	cr_assert_eq(fx_acquire(&w[0]), 0);
	for (int i = 1; i < 4; i++) /* they arrive in order 1, 2, 3 */
		cr_assert_eq(fx_acquire(&w[i]), LB_EBUSY);
	for (int round = 0; round < 5; round++) /* fallbacks: 3 first, then 2, then 1 */
		for (int i = 3; i >= 1; i--)
			cr_assert_eq(fx_acquire(&w[i]), LB_EBUSY, "a waiter got a held lock");
	for (int holder = 0; holder < 3; holder++) {
		cr_assert_eq(fx_release(&w[holder]), 0);
		/* the next in line was handed the lock: its wake says so at once */
		cr_assert_eq(s->wait(w[holder + 1].lock, 500), 1,
			     "waiter %d was not woken with the lock", holder + 1);
		for (int i = holder + 2; i < 4; i++) /* the others still wait their turn */
			cr_assert_eq(s->acquire(w[i].lock, &g), LB_EBUSY);
	}
	cr_assert_eq(fx_release(&w[3]), 0);
	cr_assert_eq(fx_pttl(&f, 0, KEY), -2, "the last release left the lock behind");
	for (int i = 0; i < 4; i++)
		fx_client_fini(&w[i]);
}

/* fair at scale: only the first waiter polls at the policy's interval; the
 * others block far longer (what keeps 4096 waiters from flooding Redis),
 * and the release pokes the waiter that becomes first, so that it polls
 * from then on (a dead holder or an unread hand-off is found in time). */
Test(contract, fair_pokes_the_waiter_that_becomes_first)
{
	const struct lock_strategy *s = lb_strategy_find("fair");
	struct fx_client w[4];

	fx_start(&f, 1);
	for (int i = 0; i < 4; i++)
		fx_client_init(&w[i], &f, s, KEY, 5000);
	cr_assert_eq(fx_acquire(&w[0]), 0);
	for (int i = 1; i < 4; i++)
		cr_assert_eq(fx_acquire(&w[i]), LB_EBUSY);
	cr_assert_eq(s->wait_ms(w[1].lock, 100), 100, "the first waiter must poll at the interval");
	cr_assert_geq(s->wait_ms(w[2].lock, 100), 1000, "a waiter behind the first polls as often");
	cr_assert_eq(fx_release(&w[0]), 0); /* handed to 1; 2 is first now */
	int64_t t0 = lb_now_ns();
	cr_assert_eq(s->wait(w[2].lock, 3000), LB_ETIMEOUT, "a poke is not the lock");
	int64_t ms = (lb_now_ns() - t0) / LB_NS_PER_MS;
	cr_assert(ms >= 80 && ms < 1000, "poked, it waited %lld ms, not one interval (100)",
		  (long long)ms);
	cr_assert_eq(s->wait_ms(w[2].lock, 100), 100, "the poked waiter did not become first");
	cr_assert_geq(s->wait_ms(w[3].lock, 100), 1000, "a poke reached a waiter not first");
	cr_assert_eq(s->wait(w[1].lock, 500), 1, "the hand-off's wake did not carry the lock");
	cr_assert_eq(fx_release(&w[1]), 0);
	cr_assert_eq(s->wait(w[2].lock, 500), 1, "a poke read earlier hid the hand-off");
	for (int i = 0; i < 4; i++)
		fx_client_fini(&w[i]);
}

/* A waiter that polls (fixed:MS) reads no wake: its next attempt claims the
 * lock handed to it, and from then on it has its whole TTL (not what was left
 * of the hand-off's), and no DEL: past the grace its own attempt used to take
 * the lock back from itself, which the servers count as a foreign release. */
Test(contract, fair_claims_a_handed_lock_with_a_fresh_ttl)
{
	const struct lock_strategy *s = lb_strategy_find("fair");
	struct fx_client w[3];
	struct lb_lock_cfg fast = { .poll_ms = 50 }; /* grace 250 ms */

	fx_start(&f, 1);
	for (int i = 0; i < 3; i++)
		fx_client_init_opts(&w[i], &f, s, KEY, 10000, &fast);
	cr_assert_eq(fx_acquire(&w[0]), 0);
	cr_assert_eq(fx_acquire(&w[1]), LB_EBUSY);
	cr_assert_eq(fx_release(&w[0]), 0); /* handed to 1, which does not read its wake */
	lb_sleep_ns(150 * LB_NS_PER_MS);
	cr_assert_eq(fx_acquire(&w[1]), 0, "the waiter did not claim the lock handed to it");
	long long ttl = fx_pttl(&f, 0, KEY);
	cr_assert_gt(ttl, 9950, "claimed 150 ms after the hand-off, the lock has %lld ms left", ttl);
	lb_sleep_ns(200 * LB_NS_PER_MS); /* past the grace: a claimed lock is not taken back */
	cr_assert_eq(fx_acquire(&w[2]), LB_EBUSY, "a claimed hand-off was taken back");
	for (int i = 0; i < 3; i++)
		fx_client_fini(&w[i]);
}

/* A waiter that dies in the queue is handed the lock and never wakes: the
 * next waiter's attempt takes it back after the grace (3 polls + 100 ms),
 * bounded, not after the whole TTL. */
Test(contract, fair_skips_a_dead_waiter)
{
	const struct lock_strategy *s = lb_strategy_find("fair");
	struct fx_client w[3];
	struct lb_lock_cfg fast = { .poll_ms = 50 }; /* grace 250 ms */

	fx_start(&f, 1);
	for (int i = 0; i < 3; i++) {
		fx_client_init_opts(&w[i], &f, s, KEY, 10000, &fast);
	}
	cr_assert_eq(fx_acquire(&w[0]), 0);
	cr_assert_eq(fx_acquire(&w[1]), LB_EBUSY); /* 1 queues, then "dies": never polls again */
	cr_assert_eq(fx_acquire(&w[2]), LB_EBUSY);
	cr_assert_eq(fx_release(&w[0]), 0);       /* handed to the dead waiter 1 */
	cr_assert_eq(fx_acquire(&w[2]), LB_EBUSY, "taken back before the grace");
	lb_sleep_ns(300 * LB_NS_PER_MS);
	cr_assert_eq(fx_acquire(&w[2]), 0, "a dead waiter held the queue past its grace");
	cr_assert_gt(fx_pttl(&f, 0, KEY), 9000, "the lock came back with a fresh TTL");
	for (int i = 0; i < 3; i++)
		fx_client_fini(&w[i]);
}
