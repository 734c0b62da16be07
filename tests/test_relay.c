/*
 * test_relay.c - the TCP relay of network faults, against a real redis-server:
 * it passes, delays, black-holes and cuts as its control word says.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "fixture.h"
#include "shared.h"

static struct fx f;
static struct lb_shared *sh;
static pid_t relay;
static struct lb_node n;

static void setup(void)
{
	fx_start(&f, 1);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(sh, MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	atomic_store(&sh->node_port[0], f.srv[0]->port);
	relay = lb_relay_start(sh, 1, 1, f.srv[0]->port);
	cr_assert_gt(relay, 0, "the relay did not start");
	lb_node_init_local(&n, atomic_load(&sh->link[0][0].port), 500);
}

static void teardown(void)
{
	lb_node_close(&n);
	if (relay > 0) {
		kill(relay, SIGKILL);
		waitpid(relay, NULL, 0);
	}
	munmap(sh, sizeof(*sh));
	fx_stop(&f);
}

TestSuite(relay, .init = setup, .fini = teardown, .timeout = 30);

/* ms a PING takes through the relay, or -1 when it fails */
static int64_t ping_ms(void)
{
	int64_t t0 = lb_now_ns();
	redisReply *r = lb_node_cmd(&n, "PING");
	bool ok = r && r->type == REDIS_REPLY_STATUS;
	if (r)
		freeReplyObject(r);
	return ok ? (lb_now_ns() - t0) / LB_NS_PER_MS : -1;
}

Test(relay, passes_then_delays)
{
	cr_assert_geq(ping_ms(), 0, "no answer through the relay");
	cr_assert_lt(ping_ms(), 100);
	atomic_store(&sh->link[0][0].delay_ms, 300);
	int64_t ms = ping_ms();
	cr_assert_geq(ms, 290, "a 300 ms delay took %lld ms", (long long)ms);
	atomic_store(&sh->link[0][0].delay_ms, 0);
	cr_assert_lt(ping_ms(), 100, "the delay outlived its removal");
}

Test(relay, blackhole_swallows_requests)
{
	cr_assert_geq(ping_ms(), 0);
	atomic_store(&sh->link[0][0].mode, LB_LINK_BLACKHOLE);
	cr_assert_eq(ping_ms(), -1, "a black-holed link answered");
	cr_assert_eq(ping_ms(), -1, "a new connection through the black hole answered");
	atomic_store(&sh->link[0][0].mode, LB_LINK_PASS);
	cr_assert_geq(ping_ms(), 0, "the link did not heal");
}

Test(relay, cut_resets_and_refuses)
{
	cr_assert_geq(ping_ms(), 0);
	atomic_store(&sh->link[0][0].mode, LB_LINK_CUT);
	lb_sleep_ns(50 * LB_NS_PER_MS); /* the relay applies it within its 20 ms poll */
	int64_t t0 = lb_now_ns();
	cr_assert_eq(ping_ms(), -1, "a cut link answered");
	cr_assert_lt((lb_now_ns() - t0) / LB_NS_PER_MS, 400, "a cut must fail fast, not time out");
	atomic_store(&sh->link[0][0].mode, LB_LINK_PASS);
	cr_assert_geq(ping_ms(), 0, "the link did not heal");
}

/* Bytes caught by a delay are delivered even after the client gave up. */
Test(relay, delayed_write_lands_after_the_client_gave_up)
{
	atomic_store(&sh->link[0][0].delay_ms, 800);
	redisReply *r = lb_node_cmd(&n, "SET late 1"); /* times out after 500 ms */
	cr_assert(r == NULL, "the delayed SET was answered within the client timeout");
	atomic_store(&sh->link[0][0].delay_ms, 0);
	r = fx_cmd(&f, 0, "EXISTS late");
	long long v = -1;
	cr_assert(lb_reply_int(r, &v) && v == 0, "the SET landed early");
	freeReplyObject(r);
	lb_sleep_ns(500 * LB_NS_PER_MS);
	r = fx_cmd(&f, 0, "EXISTS late");
	cr_assert(lb_reply_int(r, &v) && v == 1, "the delayed SET never landed");
	freeReplyObject(r);
}
