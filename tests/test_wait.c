/* test_wait.c - wait policies: parsing, schedules, and the acquire loop
 * against a real lock held by another client. */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "wait.h"

FX_SUITE(wait, 30);

Test(wait, parse_and_format)
{
	struct lb_wait w;
	char err[200], buf[64];
	static const char *const good[] = { "try", "fixed:30", "retries:3:200", "fixed:0" };
	static const char *const bad[] = { "", "tr", "try:1", "fixed", "fixed:-1", "fixed:x",
					   "retries:3", "retries:0:10", "retries:3:10:1", "poll:3" };

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cr_assert_eq(lb_wait_parse(good[i], &w, err, sizeof(err)), 0, "%s", good[i]);
		lb_wait_format(&w, buf, sizeof(buf));
		cr_assert_str_eq(buf, good[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(lb_wait_parse(bad[i], &w, err, sizeof(err)), LB_EINVAL, "%s", bad[i]);
		cr_assert_not_null(strstr(err, "expected"), "the error must say what was expected");
	}
}

Test(wait, schedules)
{
	struct lb_wait w;
	char err[200];

	lb_wait_parse("try", &w, err, sizeof(err));
	cr_assert_eq(lb_wait_delay_ns(&w, 2, NULL), -1);
	lb_wait_parse("fixed:30", &w, err, sizeof(err));
	cr_assert_eq(lb_wait_delay_ns(&w, 2, NULL), 30 * LB_NS_PER_MS);
	cr_assert_eq(lb_wait_delay_ns(&w, 1000, NULL), 30 * LB_NS_PER_MS);
	lb_wait_parse("retries:3:200", &w, err, sizeof(err));
	cr_assert_eq(lb_wait_delay_ns(&w, 2, NULL), 200 * LB_NS_PER_MS);
	cr_assert_eq(lb_wait_delay_ns(&w, 3, NULL), 200 * LB_NS_PER_MS);
	cr_assert_eq(lb_wait_delay_ns(&w, 4, NULL), -1, "seed 003 makes 3 attempts, not 4");
}

static struct fx f;
static struct fx_client holder, waiter;

static void held(void)
{
	fx_start(&f, 1);
	fx_client_init(&holder, &f, lb_strategy_find("token-lua"), "w", 10000);
	fx_client_init(&waiter, &f, lb_strategy_find("token-lua"), "w", 10000);
	cr_assert_eq(fx_acquire(&holder), 0);
}

static void done(void)
{
	fx_client_fini(&holder);
	fx_client_fini(&waiter);
	fx_stop(&f);
}

Test(wait, acquire_loop_follows_policy_and_deadline, .init = held, .fini = done)
{
	struct lb_wait w;
	struct lb_grant g;
	struct lb_acquire_info info;
	char err[200];
	int64_t t0;

	lb_wait_parse("try", &w, err, sizeof(err));
	cr_assert_eq(lb_acquire(waiter.s, waiter.lock, &w, lb_now_ns() + LB_NS_PER_S, NULL, NULL, &g, &info, NULL),
		     LB_EBUSY);
	cr_assert_eq(info.attempts, 1);

	lb_wait_parse("retries:3:20", &w, err, sizeof(err));
	cr_assert_eq(lb_acquire(waiter.s, waiter.lock, &w, lb_now_ns() + LB_NS_PER_S, NULL, NULL, &g, &info, NULL),
		     LB_EBUSY);
	cr_assert_eq(info.attempts, 3);

	lb_wait_parse("fixed:10", &w, err, sizeof(err));
	t0 = lb_now_ns();
	cr_assert_eq(lb_acquire(waiter.s, waiter.lock, &w, t0 + 100 * LB_NS_PER_MS, NULL, NULL, &g, &info, NULL),
		     LB_ETIMEOUT);
	cr_assert_geq(info.attempts, 2);
	cr_assert_leq(info.attempts, 11, "more attempts than 100 ms / 10 ms allows");
	cr_assert_leq(lb_now_ns(), t0 + 100 * LB_NS_PER_MS + 50 * LB_NS_PER_MS,
		      "the deadline was overrun");
}

Test(wait, acquire_loop_gets_a_lock_freed_meanwhile, .init = held, .fini = done)
{
	struct lb_wait w;
	struct lb_grant g;
	struct lb_acquire_info info;
	char err[200];

	cr_assert_eq(fx_release(&holder), 0);
	lb_wait_parse("fixed:10", &w, err, sizeof(err));
	cr_assert_eq(lb_acquire(waiter.s, waiter.lock, &w, lb_now_ns() + LB_NS_PER_S, NULL, NULL, &g, &info, NULL), 0);
	cr_assert_eq(g.fence, -1, "token-lua issues no fence");
}

Test(wait, backoff_and_notify_parse)
{
	struct lb_wait w;
	char err[256], buf[64];

	cr_assert_eq(lb_wait_parse("backoff:1:50", &w, err, sizeof(err)), 0);
	cr_assert_eq(w.kind, LB_WAIT_BACKOFF);
	lb_wait_format(&w, buf, sizeof(buf));
	cr_assert_str_eq(buf, "backoff:1:50");
	cr_assert_eq(lb_wait_parse("notify", &w, err, sizeof(err)), 0);
	cr_assert_eq(w.interval_ms, 100, "notify falls back to polling every 100 ms");
	cr_assert_eq(lb_wait_parse("notify:5", &w, err, sizeof(err)), 0);
	cr_assert_eq(w.interval_ms, 5);
	static const char *const bad[] = { "backoff:50:1", "backoff:0:10", "backoff:5", "notify:0",
					   "notify:x", "notify:1:2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(lb_wait_parse(bad[i], &w, err, sizeof(err)), LB_EINVAL, "%s", bad[i]);
}

Test(wait, backoff_bounds_and_full_jitter)
{
	struct lb_wait w;
	char err[256];
	uint64_t rng = 42;

	lb_wait_parse("backoff:2:50", &w, err, sizeof(err));
	for (int64_t attempt = 2; attempt < 20; attempt++) {
		int64_t cap = 2;
		for (int64_t k = 2; k < attempt; k++)
			cap = cap * 2 > 50 ? 50 : cap * 2;
		int64_t lo = INT64_MAX, hi = 0;
		for (int i = 0; i < 2000; i++) {
			int64_t d = lb_wait_delay_ns(&w, attempt, &rng);
			cr_assert_geq(d, 0);
			cr_assert_leq(d, cap * LB_NS_PER_MS, "attempt %lld: %lld ns above the %lld ms cap",
				      (long long)attempt, (long long)d, (long long)cap);
			lo = d < lo ? d : lo;
			hi = d > hi ? d : hi;
		}
		/* full jitter spans the whole range, not just its top */
		cr_assert_lt(lo, cap * LB_NS_PER_MS / 10, "attempt %lld: jitter never went low",
			     (long long)attempt);
		cr_assert_gt(hi, cap * LB_NS_PER_MS * 9 / 10, "attempt %lld: jitter never went high",
			     (long long)attempt);
	}
}

Test(wait, backoff_respects_the_deadline, .init = held, .fini = done)
{
	struct lb_wait w;
	struct lb_grant g;
	struct lb_acquire_info info;
	char err[256];
	uint64_t rng = 7;

	lb_wait_parse("backoff:10:200", &w, err, sizeof(err));
	int64_t t0 = lb_now_ns();
	cr_assert_eq(lb_acquire(waiter.s, waiter.lock, &w, t0 + 150 * LB_NS_PER_MS, NULL, &rng, &g,
				&info, NULL), LB_ETIMEOUT);
	cr_assert_leq(lb_now_ns() - t0, 150 * LB_NS_PER_MS, "slept past the deadline");
	cr_assert_geq(info.attempts, 1);
}

Test(wait, notify_wakes_at_release_not_at_the_fallback, .init = held, .fini = done)
{
	struct lb_wait w;
	char err[256];

	/* a holder in another process releases after 200 ms; the waiter's fallback is 5 s */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		struct fx_client h;
		fx_client_init(&h, &f, lb_strategy_find("token-lua"), "n", 10000);
		((struct lb_lock_base *)h.lock)->cfg.notify = true;
		if (fx_acquire(&h) != 0)
			_exit(1);
		lb_sleep_ns(200 * LB_NS_PER_MS);
		_exit(fx_release(&h) == 0 ? 0 : 2);
	}
	lb_sleep_ns(50 * LB_NS_PER_MS);
	struct fx_client wt;
	fx_client_init(&wt, &f, lb_strategy_find("token-lua"), "n", 10000);
	lb_wait_parse("notify:5000", &w, err, sizeof(err));
	struct lb_grant g;
	struct lb_acquire_info info;
	int64_t t0 = lb_now_ns();
	int rc = lb_acquire(wt.s, wt.lock, &w, t0 + 10 * LB_NS_PER_S, NULL, NULL, &g, &info, NULL);
	int64_t waited = lb_now_ns() - t0;
	int status;
	waitpid(pid, &status, 0);
	fx_client_fini(&wt);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the holder failed");
	cr_assert_eq(rc, 0);
	cr_assert_eq(info.attempts, 2, "one busy attempt, one after the signal");
	cr_assert_lt(waited, 2 * LB_NS_PER_S, "woke at the fallback, not at the release");
}
