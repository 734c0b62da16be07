/* test_wait.c - wait policies: parsing, schedules, and the acquire loop
 * against a real lock held by another client. */
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "wait.h"

TestSuite(wait, .timeout = 30);

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
	cr_assert_eq(lb_wait_delay_ns(&w, 2), -1);
	lb_wait_parse("fixed:30", &w, err, sizeof(err));
	cr_assert_eq(lb_wait_delay_ns(&w, 2), 30 * LB_NS_PER_MS);
	cr_assert_eq(lb_wait_delay_ns(&w, 1000), 30 * LB_NS_PER_MS);
	lb_wait_parse("retries:3:200", &w, err, sizeof(err));
	cr_assert_eq(lb_wait_delay_ns(&w, 2), 200 * LB_NS_PER_MS);
	cr_assert_eq(lb_wait_delay_ns(&w, 3), 200 * LB_NS_PER_MS);
	cr_assert_eq(lb_wait_delay_ns(&w, 4), -1, "seed 003 makes 3 attempts, not 4");
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
	cr_assert_eq(lb_acquire(waiter.s, waiter.lock, &w, lb_now_ns() + LB_NS_PER_S, NULL, &g, &info),
		     LB_EBUSY);
	cr_assert_eq(info.attempts, 1);

	lb_wait_parse("retries:3:20", &w, err, sizeof(err));
	cr_assert_eq(lb_acquire(waiter.s, waiter.lock, &w, lb_now_ns() + LB_NS_PER_S, NULL, &g, &info),
		     LB_EBUSY);
	cr_assert_eq(info.attempts, 3);

	lb_wait_parse("fixed:10", &w, err, sizeof(err));
	t0 = lb_now_ns();
	cr_assert_eq(lb_acquire(waiter.s, waiter.lock, &w, t0 + 100 * LB_NS_PER_MS, NULL, &g, &info),
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
	cr_assert_eq(lb_acquire(waiter.s, waiter.lock, &w, lb_now_ns() + LB_NS_PER_S, NULL, &g, &info), 0);
	cr_assert_eq(g.fence, -1, "token-lua issues no fence");
}
