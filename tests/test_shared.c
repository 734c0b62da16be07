/*
 * test_shared.c - the shared region's helpers: what the parent and the
 * clients read of each other (shared.h, shared.c), on regions built by hand.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "fixture.h"
#include "oracle.h"
#include "shared.h"

static struct lb_shared *sh;
static size_t bytes;

static void setup(void)
{
	fx_deadline(10);
	bytes = sizeof(*sh) + 4 * 16 * sizeof(struct lb_record);
	sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(sh, MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	sh->cap = 16;
	sh->clients = 4;
	sh->keys = 1;
	sh->t0_ns = lb_now_ns();
}

static void teardown(void)
{
	munmap(sh, bytes);
}

TestSuite(shared, .init = setup, .fini = teardown);

static void enter(int client, int64_t enter_ns)
{
	struct lb_record *r = lb_shared_record(sh, client, 0);
	r->enter_ns = enter_ns;
	r->release_ns = -1;
	atomic_store(&r->state, LB_REC_ENTERED);
	atomic_store(&sh->client[client].n_records, 1);
}

/* A client killed inside its section is inside nothing: fault targeting
 * ("deliver when nobody is inside", "until another is inside") and the
 * canary count only the living. */
Test(shared, a_dead_client_is_not_inside)
{
	enter(0, 1000);
	cr_assert(lb_shared_inside(sh, 0));
	cr_assert(lb_shared_other_inside(sh, 4, 1));
	cr_assert_not(lb_shared_canary_enter(sh, 0), "alone, yet the canary fired");
	cr_assert(lb_shared_canary_enter(sh, 2), "two flags up, and the canary saw nothing");
	atomic_store(&sh->client[2].inside, 0);
	lb_shared_mark_dead(sh, 0, 5000);
	cr_assert_not(lb_shared_inside(sh, 0), "a dead client is still inside");
	cr_assert_not(lb_shared_other_inside(sh, 4, 1));
	cr_assert_not(lb_shared_canary_enter(sh, 1), "the dead holder still counts for the canary");
	cr_assert_eq(atomic_load(&sh->client[0].death_ns), 5000);
	lb_shared_mark_dead(sh, 0, 9000); /* a later reap keeps the first death */
	cr_assert_eq(atomic_load(&sh->client[0].death_ns), 5000);
}

/* The kill stamped 10 us before the holder's enter: the section is closed
 * at its enter, and a later client's section does not overlap it. */
Test(shared, a_death_before_the_enter_closes_the_section_at_the_enter)
{
	struct lb_section s[2];
	struct lb_verdict v;

	enter(0, 1000000);
	lb_record_section(lb_shared_record(sh, 0, 0), 0, 0, 0, 990000, false, &s[0]);
	cr_assert_eq(s[0].exit_ns, 1000000);
	cr_assert_eq(s[0].outcome, LB_OUT_KILLED);
	s[1] = (struct lb_section){ .client = 1, .enter_ns = 2000000, .exit_ns = 3000000,
				    .release_ns = 3000000, .outcome = LB_OUT_RELEASED, .fence = -1 };
	cr_assert_eq(lb_oracle_judge(s, 2, 2, 4000000, &v, NULL), 0);
	cr_assert_eq(v.overlaps, 0, "a section closed at its enter overlapped a later one");
	cr_assert_eq(v.recovered, LB_REC_YES);
}

/* A process killed between reserving an event slot and writing it leaves a
 * slot that is never read: no "kill client 0 at 0 s". */
Test(shared, a_half_written_event_is_skipped)
{
	static struct lb_event out[LB_MAX_EVENTS];

	atomic_fetch_add(&sh->n_events, 1); /* reserved, then killed */
	lb_event_emit(sh, LB_EV_PAUSE, 2, -1, 100);
	size_t n = lb_shared_events(sh, out, LB_MAX_EVENTS);
	cr_assert_eq(n, 1);
	cr_assert_eq(out[0].kind, LB_EV_PAUSE);
	cr_assert_eq(out[0].client, 2);
}

/* A run that emits more events than its table holds keeps the first ones
 * and says how many it could not record: never a silent cut (a kill after
 * thousands of lease-lost notices is counted, not lost without a word). */
Test(shared, events_past_the_table_are_counted_as_dropped)
{
	static struct lb_event out[LB_MAX_EVENTS];

	cr_assert_eq(lb_shared_events_dropped(sh), 0);
	for (int i = 0; i < LB_MAX_EVENTS + 600; i++)
		lb_event_emit(sh, i < LB_MAX_EVENTS + 599 ? LB_EV_ABORT : LB_EV_KILL, 1, -1, 0);
	cr_assert_eq(lb_shared_events(sh, out, LB_MAX_EVENTS), LB_MAX_EVENTS);
	cr_assert_eq(lb_shared_events_dropped(sh), 600);
}

/* "then = other-inside" waits for an entry, not a state: a client deep in
 * its section (it may leave before the late client acts) does not count,
 * one that has just entered does, and never the waiting client itself. */
Test(shared, then_other_inside_waits_for_a_fresh_entry)
{
	int64_t t = 10 * LB_NS_PER_S;

	enter(0, t - 40 * LB_NS_PER_MS);
	cr_assert(lb_shared_other_inside(sh, 4, 1));
	cr_assert_not(lb_shared_other_just_entered(sh, 4, 1, t),
		      "a section entered 40 ms ago counted as a fresh entry");
	enter(2, t - 2 * LB_NS_PER_MS);
	cr_assert(lb_shared_other_just_entered(sh, 4, 1, t), "an entry 2 ms ago was missed");
	cr_assert_not(lb_shared_other_just_entered(sh, 3, 2, t),
		      "the waiting client's own entry counted");
	lb_shared_mark_dead(sh, 2, t);
	cr_assert_not(lb_shared_other_just_entered(sh, 4, 1, t), "a dead client counted");
}
