/*
 * client.c - one contending client process:
 *   acquire -> enter -> work -> exit -> release -> think, until told to stop.
 *
 * It opens its own connections after fork and derives its random stream from
 * the run's seed and its id. `enter` is stamped after acquire returns and
 * `exit` before release is sent, so an overlap in the history is a real
 * overlap of beliefs. The canary flag (shared.h) brackets the stamped interval.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "adapter.h"
#include "attempts.h"
#include "failpoint.h"
#include "owned.h"
#include "rserver.h"
#include "run.h"
#include "scenario.h"
#include "shared.h"
#include "signals.h"

#define SYNC_LIMIT_NS (2 * LB_NS_PER_S) /* longest wait for "then = other-inside" */

struct client {
	const struct lb_run_cfg *cfg;
	struct lb_shared *sh;
	struct lb_client_slot *slot;
	int id;
	int key;
	uint64_t rng;
	struct lb_node lock[LB_MAX_NODES];
	struct lb_node *lock_ptr[LB_MAX_NODES];
	struct lb_node resource;
	char lock_key[128];
	char counter_key[128];
	void *lock_state;
	struct lb_clock clock;    /* this client's wall clock (clock faults skew it) */
	int node_gen;             /* the node_port generation our connections follow */
	char run_id_seen[41];     /* --sentinel: the run_id of the primary last taken */
	bool server_down;         /* on the user's servers: its last acquire found none that
				     answered (a server-down event said so) */
	int primary_seen;         /* Sentinel topology: the part our lock commands last went
				     to (topology.h), or -1 */
	bool acquiring;           /* inside acquire: a crash there may leave the lock held */
	int64_t acquire_t0;
	int64_t slow_hold_ms;     /* > 0: the next section holds this long */
	bool slow_sync;
	int64_t sync_since;       /* when the slow section or the failpoint sleep began
				     (since t0): "then = other-inside" waits only if
				     someone entered since */
	int64_t heal_at[LB_MAX_FAULTS]; /* partitions to lift, relative ns; 0: none */
	_Atomic int cut_off[LB_MAX_NODES]; /* partitions: lock node i unreachable (every
					      copy of the node, a watchdog's too, reads it) */
	char section[32];         /* "<client>/<seq>": who presents a fence to the resource */
	bool told;                /* this section's lost notice is recorded (lease_lost) */
	size_t n_lock;            /* lock nodes (the relay's links 0..n_lock-1 are ours) */
	uint64_t cmds_seen;       /* the relay's count of our lock commands, last read */
	uint64_t unanswered_at;   /* our lock nodes' unanswered commands as an attempt began */
	int lose_fault;           /* the net-lose-reply fault armed on our links, or -1 */
	uint64_t lost_seen[LB_RELAY_RESOURCE]; /* each link's lost replies as it was armed */
	const char *clock_file;   /* an adapter's clock offset file (client clock faults) */
};

/* One armed failpoint fault: what the action callback needs. */
struct fp_arg {
	struct client *c;
	int fault;
};
static struct fp_arg fp_args[LB_MAX_FAULTS];
_Static_assert(LB_MAX_FAULTS <= LB_FAILPOINT_MAX_ACTIONS, "every fault may share one failpoint");

static int64_t draw_hold_ms(struct client *c)
{
	int64_t lo = c->cfg->hold_min_ms, hi = c->cfg->hold_max_ms;
	return hi > lo ? lo + (int64_t)(lb_rand_next(&c->rng) % (uint64_t)(hi - lo + 1)) : lo;
}

static void wait_other_inside(struct client *c);

/* Has the strategy told us our lease is gone (renewal's held(), a library's
 * lost notice)? The first time in a section is recorded: a lost-notice event,
 * when the holder learned it (at most 2 ms after it came, while it works). */
static bool lease_lost(struct client *c)
{
	if (!c->cfg->strategy->held || c->cfg->strategy->held(c->lock_state))
		return false;
	if (!c->told) {
		c->told = true;
		lb_event_emit(c->sh, LB_EV_LOST_NOTICE, c->id, -1, 0);
	}
	return true;
}

/* Work @hold_ms; a strategy that can tell a lost lease is asked every 2 ms.
 * True when the lease was reported lost (the section must abort). */
static bool work_for(struct client *c, int64_t hold_ms)
{
	int64_t until = lb_now_ns() + hold_ms * LB_NS_PER_MS;

	if (!c->cfg->strategy->held) {
		lb_sleep_ns(hold_ms * LB_NS_PER_MS);
		return false;
	}
	for (int64_t now = lb_now_ns(); now < until; now = lb_now_ns()) {
		if (lease_lost(c))
			return true;
		lb_sleep_ns(until - now < 2 * LB_NS_PER_MS ? until - now : 2 * LB_NS_PER_MS);
	}
	return lease_lost(c);
}

static void abort_section(struct client *c)
{
	c->slot->writes_aborted++;
	lb_event_emit(c->sh, LB_EV_ABORT, c->id, -1, 0);
}

/* The counter's read and write: plain GET/SET, or through the resource's
 * fence check when the lock issued a fence (the resource counts what it
 * refuses). 0 | LB_ESTALE | LB_EREDIS (refused) | LB_ETIMEOUT (the write:
 * sent but no reply, so it may have landed). */
static int resource_read(struct client *c, int64_t fence, long long *v)
{
	if (fence >= 0) {
		return lb_fenced_read(&c->resource, c->counter_key, fence, c->section, v);
	}
	redisReply *r = lb_node_cmd(&c->resource, "GET %s", c->counter_key);
	int rc = lb_reply_error(r) ? LB_EREDIS : 0;
	*v = rc == 0 && r->type == REDIS_REPLY_STRING ? atoll(r->str) : 0;
	if (r)
		freeReplyObject(r);
	return rc;
}

static int resource_write(struct client *c, int64_t fence, long long v)
{
	/* both count, on the resource, the writes it applied */
	if (fence >= 0)
		return lb_fenced_write(&c->resource, c->counter_key, fence, c->section, v);
	return lb_counted_write(&c->resource, c->counter_key, v);
}

/* The critical section's work; counts the counter writes it completes. */
static void do_work(struct client *c, int64_t hold_ms, bool sync, int64_t fence)
{
	long long v = 0;

	if (c->cfg->work == LB_WORK_NONE) {
		if (work_for(c, hold_ms))
			abort_section(c);
		else if (sync)
			wait_other_inside(c);
		return;
	}
	/* deliberately not atomic: read, hold, write. Lost updates are what a
	 * mutual-exclusion failure costs. */
	int rc = resource_read(c, fence, &v);
	if (rc == LB_ESTALE) /* the fenced resource refused the read: a stale fence */
		lb_event_emit_incident(c->sh, LB_EV_REFUSED, c->id, 0);
	if (rc < 0)
		return;
	atomic_store(&c->slot->read_done, 1);
	if (work_for(c, hold_ms)) {
		atomic_store(&c->slot->read_done, 0);
		abort_section(c);
		return;
	}
	if (sync) /* a slow holder that finishes while another client holds */
		wait_other_inside(c);
	atomic_store(&c->slot->read_done, 0);
	if (lease_lost(c)) { /* told before the write: do not write */
		abort_section(c);
		return;
	}
	if (atomic_exchange(&c->slot->stop_before_write, 0)) {
		/* when = before-write: Kleppmann's pause, after the holder's last look
		 * at its lease and before its write; the parent resumes the group */
		atomic_store(&c->slot->stopped_before_write, 1);
		kill(0, SIGSTOP);
	}
	atomic_store(&c->slot->write_in_flight, 1);
	rc = resource_write(c, fence, v + 1);
	if (rc == LB_ESTALE)
		lb_event_emit_incident(c->sh, LB_EV_REFUSED, c->id, 1);
	if (rc == 0)
		c->slot->counter_writes++;
	else if (rc == LB_ETIMEOUT) /* sent, no reply: it may have landed */
		c->slot->uncertain_writes++;
	atomic_store(&c->slot->write_in_flight, 0);
}

static int64_t rel_now(const struct client *c)
{
	return lb_now_ns() - c->sh->t0_ns;
}

static void wait_other_inside(struct client *c)
{
	int64_t limit = lb_now_ns() + SYNC_LIMIT_NS;
	if (!lb_shared_other_entered_since(c->sh, c->cfg->clients, c->id, c->sync_since))
		return; /* nobody got in meanwhile: the lease held, the section ends on time */
	while (!lb_shared_other_just_entered(c->sh, c->cfg->clients, c->id, rel_now(c)) &&
	       lb_now_ns() < limit)
		lb_sleep_ns(LB_NS_PER_MS / 2);
}

/* Claim a one-shot fault for this client: its target, and not fired yet. */
static bool claim(struct client *c, int i, const struct lb_fault *f)
{
	if (f->target == LB_TGT_CLIENT && f->client != c->id)
		return false;
	return atomic_exchange(&c->sh->fault_fired[i], 1) == 0;
}

/* The failpoint action of a scenario fault (crash or sleep), in this client. */
static void fp_action(const char *name, void *arg)
{
	struct fp_arg *a = arg;
	struct client *c = a->c;
	const struct lb_fault *f = &c->cfg->scenario->faults[a->fault];

	if (rel_now(c) < (int64_t)(f->at_s * 1e9) || !claim(c, a->fault, f))
		return;
	if (f->action == LB_ACT_CRASH) {
		uint32_t n = atomic_load(&c->slot->n_records);
		if (c->acquiring && n < c->sh->cap) {
			/* the lock may be ours already: a zero-length section, killed */
			struct lb_record *rec = lb_shared_record(c->sh, c->id, n);
			rec->acquire_start_ns = c->acquire_t0 - c->sh->t0_ns;
			rec->enter_ns = rec->exit_ns = rel_now(c);
			rec->release_ns = -1;
			rec->fence = -1;
			rec->lease_end_ns = LB_LEASE_UNKNOWN;
			atomic_store(&rec->state, LB_REC_ENTERED);
			atomic_store(&c->slot->n_records, n + 1);
			atomic_store(&c->slot->wait_calls, 0); /* a section now, not a waiter */
		}
		lb_shared_mark_dead(c->sh, c->id, rel_now(c));
		lb_event_emit(c->sh, LB_EV_CRASH, c->id, -1, lb_failpoint_code(name));
		lb_fp_crash(name, NULL);
		return;
	}
	lb_event_emit(c->sh, LB_EV_SLEEP, c->id, -1, f->duration_ms);
	/* written only when read: a failpoint of a strategy's own thread (renewal's
	 * watchdog) sleeps here beside the client's main thread */
	if (f->then_other_inside)
		c->sync_since = rel_now(c);
	lb_sleep_ns(f->duration_ms * LB_NS_PER_MS);
	if (f->then_other_inside)
		wait_other_inside(c);
	lb_event_emit(c->sh, LB_EV_WAKE, c->id, -1, lb_failpoint_code(name));
}

/* A partition: this client cannot reach those nodes. lockbench's own code
 * is told (cut_off); library code in an adapter is not, so its links through
 * the relay are cut too (connections reset, new ones refused), which every
 * client feels alike. Link i of a client is lock node i (relay.h). */
static void set_blocked(struct client *c, uint32_t nodes, bool blocked)
{
	for (size_t i = 0; i < LB_MAX_NODES; i++)
		if ((nodes >> i) & 1u) {
			atomic_store(&c->cut_off[i], blocked);
			lb_node_close(&c->lock[i]);
			if (i < LB_RELAY_LINKS)
				atomic_store(&c->sh->link[c->id][i].mode,
					     blocked ? LB_LINK_CUT : LB_LINK_PASS);
		}
}

/* clock: this client's wall clock is off by the offset from now; with strobe,
 * on and off every strobe ms for the duration (for the run without one). */
static void client_clock(struct client *c, const struct lb_fault *f)
{
	int64_t from = lb_now_ns();
	struct lb_clockset set = { .offset_ms = f->offset_ms };

	if (f->strobe_ms) {
		set.strobe_ms = f->strobe_ms;
		set.from_ns = from;
		set.until_ns = f->duration_ms >= 0 ? from + f->duration_ms * LB_NS_PER_MS : INT64_MAX;
	}
	c->clock = (struct lb_clock){ .offset_ms = set.offset_ms, .strobe_ms = set.strobe_ms,
				      .from_ns = set.from_ns, .until_ns = set.until_ns };
	if (c->clock_file) /* the adapter's wall clock, through the shim */
		lb_clock_file_set(c->clock_file, &set);
	lb_event_emit_at(c->sh, LB_EV_CLOCK, c->id, -1, f->offset_ms, from - c->sh->t0_ns);
}

/* Client-side faults whose time has come; called before each acquire. */
static void client_faults(struct client *c)
{
	const struct lb_scenario *sc = c->cfg->scenario;
	int64_t now = rel_now(c);

	for (int i = 0; sc && i < sc->n_faults; i++) {
		const struct lb_fault *f = &sc->faults[i];
		if (c->heal_at[i] && now >= c->heal_at[i]) {
			set_blocked(c, f->nodes, false);
			lb_event_emit(c->sh, LB_EV_HEAL, c->id, -1, 0);
			c->heal_at[i] = 0;
		}
		if (!lb_action_in_client(f->action) || f->action == LB_ACT_CRASH ||
		    f->action == LB_ACT_SLEEP || f->action == LB_ACT_LOSE_REPLY || now < (int64_t)(f->at_s * 1e9) || !claim(c, i, f))
			continue;
		switch (f->action) {
		case LB_ACT_SLOW:
			c->slow_hold_ms = f->hold_ms;
			c->slow_sync = f->then_other_inside;
			break;
		case LB_ACT_CLOCK:
			client_clock(c, f);
			break;
		case LB_ACT_PARTITION:
			set_blocked(c, f->nodes, true);
			lb_event_emit(c->sh, LB_EV_PARTITION, c->id, -1, (int64_t)f->nodes);
			if (f->duration_ms >= 0)
				c->heal_at[i] = now + f->duration_ms * LB_NS_PER_MS + 1;
			break;
		default:
			break;
		}
	}
}

static void arm_failpoints(struct client *c)
{
	const struct lb_scenario *sc = c->cfg->scenario;

	for (int i = 0; sc && i < sc->n_faults; i++) {
		const struct lb_fault *f = &sc->faults[i];
		if (f->action != LB_ACT_CRASH && f->action != LB_ACT_SLEEP)
			continue;
		fp_args[i] = (struct fp_arg){ .c = c, .fault = i };
		lb_failpoint_add(f->failpoint, fp_action, &fp_args[i], -1); /* several faults: each acts */
	}
}

/* After a failover the lock node lives elsewhere: follow it. A connection
 * through the relay keeps its port (the relay follows the node), but the one
 * it has is to the old primary: reconnect, as a client told of the switch. */
static void follow_nodes(struct client *c)
{
	int gen = atomic_load(&c->sh->node_gen);

	if (gen == c->node_gen)
		return;
	c->node_gen = gen;
	for (size_t i = 0; i < LB_MAX_NODES; i++) {
		int port = atomic_load(&c->sh->node_port[i]);
		if (atomic_load(&c->sh->link[c->id][i].port) > 0) {
			lb_node_close(&c->lock[i]);
			continue;
		}
		if (port > 0 && port != c->lock[i].port) {
			lb_node_close(&c->lock[i]);
			c->lock[i].port = port;
		}
	}
}

/* The strategy's process is gone (an adapter whose library died): the client
 * dies with it, as the program would; a holder's death is then recorded. */
static void __attribute__((noreturn)) die_with_strategy(struct client *c)
{
	lb_event_emit(c->sh, LB_EV_ADAPTER_DIED, c->id, -1, 0);
	kill(0, SIGKILL); /* its process group: itself and what is left of the adapter */
	_exit(LB_CLIENT_EXIT_STRATEGY);
}

/* A status from the strategy that ends the client: a broken adapter (the run
 * is void) or a dead one (the client dies). */
static void check_fatal(struct client *c, int rc)
{
	if (rc == LB_EDIED)
		die_with_strategy(c);
	if (rc == LB_EPROTO) {
		c->cfg->strategy->destroy(c->lock_state);
		_exit(LB_CLIENT_EXIT_STRATEGY);
	}
}

static enum lb_outcome outcome_of(int rc)
{
	switch (rc) {
	case 0: return LB_OUT_RELEASED;
	case LB_ELOST: return LB_OUT_LOST;
	case LB_EFOREIGN: return LB_OUT_FOREIGN;
	default: return LB_OUT_ERROR;
	}
}

/* With Sentinels or a cluster: which server the client took for the primary
 * (the one the Sentinels named and ROLE confirmed, or CLUSTER SLOTS), as an
 * event each time it changes, for the timeline's lane marker, the story and
 * demoted_primary_ms; stamped @t (after t0) when that server first answered:
 * the end of the attempt that got its answer. */
static void note_primary(struct client *c, int64_t t)
{
	const struct lb_node *n = &c->lock[0];

	if ((c->cfg->sentinel_urls || c->cfg->cluster_urls) && n->ctx) { /* the user's: by its
									       port, servers.csv */
		int part = LB_PART_PORT0 + n->port;
		if (part != c->primary_seen || strcmp(n->run_id, c->run_id_seen)) {
			lb_shared_note_server(c->sh, c->id, n->host, n->port, n->run_id, t);
			lb_event_emit_at(c->sh, LB_EV_PRIMARY_SEEN, c->id, -1, part, t);
			snprintf(c->run_id_seen, sizeof(c->run_id_seen), "%s", n->run_id);
		}
		c->primary_seen = part;
		return;
	}
	if (!(c->cfg->sentinel || c->cfg->cluster) || !n->ctx)
		return;
	for (int j = 0; j < LB_TOPO_PARTS; j++)
		if (atomic_load(&c->sh->mesh_front[j].port) == n->port) {
			int part = c->cfg->cluster ? LB_CLUSTER_PART0 + j : j;
			if (part != c->primary_seen)
				lb_event_emit_at(c->sh, LB_EV_PRIMARY_SEEN, c->id, -1, part, t);
			c->primary_seen = part;
			return;
		}
}

/* On the user's servers, where lockbench does not see the servers die: the
 * first attempt that found no server answering (@down), and the first that
 * got an answer of any kind again (busy included), as events stamped @t,
 * the end of that attempt as attempts.csv has it (a gap in the history,
 * told; lockbench check finds them again there). */
static void note_server_down(struct client *c, bool down, int64_t t)
{
	if (down == c->server_down)
		return;
	c->server_down = down;
	lb_event_emit_at(c->sh, down ? LB_EV_SERVER_DOWN : LB_EV_SERVER_BACK, c->id, -1, 0, t);
}

/* Commands sent to our lock nodes that got no reply (node.h): when an
 * operation raises it, it may have taken effect (indeterminate). */
static uint64_t unanswered(const struct client *c)
{
	uint64_t n = 0;

	for (size_t i = 0; i < c->n_lock; i++)
		n += c->lock[i].unanswered;
	return n;
}

/* Does another client hold the lock (inside, or still releasing)? */
static bool other_holds(struct client *c)
{
	for (int k = 0; k < c->cfg->clients; k++)
		if (k != c->id && lb_shared_holding(c->sh, k))
			return true;
	return false;
}

/* net-lose-reply: the client names its next request to the relay. A fault of
 * this kind (of = release or acquire) due and not yet taken arms each of its
 * links at the link's count + 1: the client sends one request at a time, so
 * every request it sent before is counted and the next is its own. An
 * acquire attempt is armed only while no other client holds the lock: the
 * reply to lose is that of an acquire the server grants. */
static void lose_arm(struct client *c, bool release)
{
	const struct lb_scenario *sc = c->cfg->scenario;

	c->lose_fault = -1;
	if (!release && other_holds(c))
		return;
	for (int i = 0; sc && i < sc->n_faults; i++) {
		const struct lb_fault *f = &sc->faults[i];
		if (f->action != LB_ACT_LOSE_REPLY || f->client != c->id || f->of_release != release ||
		    rel_now(c) < (int64_t)(f->at_s * 1e9) || atomic_load(&c->sh->fault_fired[i]))
			continue;
		for (size_t l = 0; l < c->n_lock && l < LB_RELAY_RESOURCE; l++) {
			struct lb_link_ctl *k = &c->sh->link[c->id][l];
			if (!f->all_nodes && !((f->nodes >> l) & 1u))
				continue;
			c->lost_seen[l] = atomic_load(&k->lost);
			atomic_store(&k->lose_hang, f->then_hang ? 1 : 0);
			atomic_store(&k->lose_at, atomic_load(&k->requests) + 1);
		}
		c->lose_fault = i;
		return;
	}
}

/* The armed operation returned: a link whose relay lost the reply is an
 * event (stamped now: when the client learned it had no answer), and the
 * fault has fired; a link that carried no request is disarmed, and the
 * fault waits for the next operation of its kind. */
static bool lose_done(struct client *c, bool release)
{
	const struct lb_fault *f;
	bool took = false;

	if (c->lose_fault < 0)
		return false;
	f = &c->cfg->scenario->faults[c->lose_fault];
	for (size_t l = 0; l < c->n_lock && l < LB_RELAY_RESOURCE; l++) {
		struct lb_link_ctl *k = &c->sh->link[c->id][l];
		if (!f->all_nodes && !((f->nodes >> l) & 1u))
			continue;
		atomic_store(&k->lose_at, 0);
		if (atomic_load(&k->lost) != c->lost_seen[l]) {
			took = true;
			lb_event_emit(c->sh, LB_EV_REPLY_LOST, c->id, (int)l, release);
		}
	}
	if (took)
		atomic_store(&c->sh->fault_fired[c->lose_fault], 1);
	c->lose_fault = -1;
	return took;
}

/* An attempt begins: under way until its end is logged (a death in it
 * leaves try_open_ns for the collector: an attempt nobody saw end). */
static void try_begin(void *arg)
{
	struct client *c = arg;

	c->unanswered_at = unanswered(c);
	lose_arm(c, false);
	atomic_store(&c->slot->try_open_ns, lb_now_ns());
}

/* An attempt ends with status @rc: into the client's attempt log (shared.h),
 * or, the log full, counted as lost (the figure is then n/a). An answer
 * stamps the events it makes with its end: the server that gave it seen,
 * and a server back; an error, a server down. */
static void try_end(void *arg, int rc)
{
	struct client *c = arg;
	struct lb_client_slot *s = c->slot;
	uint32_t n = atomic_load(&s->n_tries);
	int64_t start = atomic_load(&s->try_open_ns), end = lb_now_ns() - c->sh->t0_ns;
	/* error as acquire_errors counts them; an attempt the run's end cut
	 * (a library's own wait) has no answer */
	enum lb_try_result result = rc == 0 ? LB_TRY_ACQUIRED : rc == LB_EBUSY ? LB_TRY_BUSY :
				    rc == LB_EREDIS || rc == LB_ENOREPLICA ? LB_TRY_ERROR :
				    rc == LB_ECANCELED || rc == LB_EDIED || rc == LB_EPROTO ?
				    LB_TRY_UNKNOWN : LB_TRY_REFUSED;

	/* sent with no reply: our own connections say so, or (a library's, in
	 * its adapter) the relay lost the reply it armed for this attempt */
	bool lost = lose_done(c, false);
	if (result == LB_TRY_ERROR && (lost || unanswered(c) > c->unanswered_at)) {
		result = LB_TRY_INDETERMINATE; /* sent, no reply: it may hold the lock */
		s->indeterminate_ops++;
	}
	if (n >= c->sh->try_cap) {
		atomic_store(&s->tries_full, 1);
	} else {
		struct lb_try_rec *t = lb_shared_try(c->sh, c->id, n);
		t->start_ns = start - c->sh->t0_ns;
		t->end_ns = end;
		t->result = result;
		atomic_store(&s->n_tries, n + 1);
	}
	if ((rc == LB_EREDIS || rc == LB_ENOREPLICA) && !s->first_error_said) {
		const char *said = c->lock_state ? lb_base_said(c->lock_state) : "";
		s->first_error_ns = lb_now_ns() - c->sh->t0_ns;
		snprintf(s->first_error, sizeof(s->first_error), "%s", said[0] ? said : lb_strerror(rc));
		s->first_error_said = 1;
	}
	atomic_store(&s->try_open_ns, 0);
	if (result == LB_TRY_UNKNOWN)
		return; /* no answer from any server (a dead adapter's, or cut) */
	bool error = result == LB_TRY_ERROR || result == LB_TRY_INDETERMINATE;
	if (!error)
		note_primary(c, end);
	if (lb_cfg_theirs(c->cfg))
		note_server_down(c, error, end);
}

/* The lock commands the relay passed on for this client (and its adapter)
 * since the last call, into @into: what a phase of it cost (shared.h). */
static void count_phase(struct client *c, _Atomic uint64_t *into)
{
	uint64_t now = 0;

	for (size_t i = 0; i < c->n_lock && i < LB_RELAY_RESOURCE; i++)
		now += atomic_load(&c->sh->link[c->id][i].requests);
	atomic_fetch_add(into, now - c->cmds_seen);
	c->cmds_seen = now;
}

/* When the lease of the lock just granted (at @granted, monotonic) runs
 * out, as the lock knows it, relative to t0; LB_LEASE_* as they are. */
static int64_t lease_end(const struct client *c, int64_t granted)
{
	const struct lock_strategy *s = c->cfg->strategy;
	int64_t e = s->lease_end ? s->lease_end(c->lock_state) :
		    granted + c->cfg->ttl_ms * LB_NS_PER_MS;
	return e == LB_LEASE_UNKNOWN || e == LB_LEASE_NEVER ? e : e - c->sh->t0_ns;
}

/* An acquire call begins at @t: the first since the client's last enter
 * opens its waiter (shared.h). */
static void wait_begin(struct lb_client_slot *s, int64_t t)
{
	int64_t none = 0;
	atomic_compare_exchange_strong(&s->first_call_ns, &none, t);
	atomic_fetch_add(&s->calls, 1);
	if (atomic_load(&s->wait_calls) == 0) {
		atomic_store(&s->wait_start_ns, t);
		atomic_store(&s->wait_try_ns, 0);
	}
	atomic_store(&s->call_start_ns, t);
	atomic_store(&s->wait_end_ns, 0);
	atomic_fetch_add(&s->wait_calls, 1);
}

/* The call begun at @t returned without the lock (@cut: stopped by the run's
 * end): a wait that never entered, counted at its length so far. */
static void wait_failed(struct lb_client_slot *s, int64_t t, bool cut)
{
	int64_t now = lb_now_ns();
	atomic_store(&s->wait_cut, cut);
	atomic_store(&s->wait_end_ns, now);
	lb_hist_add(&s->censored, now - t);
}

static void one_section(struct client *c)
{
	const struct lb_run_cfg *cfg = c->cfg;
	struct lb_shared *sh = c->sh;
	struct lb_grant grant;
	struct lb_acquire_info info;
	uint32_t n = atomic_load(&c->slot->n_records);
	int64_t t0, hold_ms = draw_hold_ms(c);
	int rc;

	if (n >= sh->cap) { /* history full: the run ends here rather than lose facts,
			     * so that its figures (its throughput) are of what it recorded */
		int none = 0;
		atomic_compare_exchange_strong(&sh->history_full, &none, c->id + 1);
		lb_shared_stop(sh);
		return;
	}
	client_faults(c);
	follow_nodes(c);
	atomic_store(&c->slot->idle, 0);
	t0 = c->acquire_t0 = lb_now_ns();
	wait_begin(c->slot, t0);
	c->acquiring = true;
	struct lb_acquire_tally tally = { &c->slot->attempts, &c->slot->acquire_errors,
					  &c->slot->wait_try_ns, c, try_begin, try_end };
	rc = lb_acquire(cfg->strategy, c->lock_state, &cfg->wait,
			t0 + cfg->acquire_timeout_ms * LB_NS_PER_MS, &sh->stop, &c->rng, &grant, &info,
			&tally);
	c->acquiring = false;
	check_fatal(c, rc);
	if (rc != 0)
		wait_failed(c->slot, t0, rc == LB_ECANCELED);
	else
		atomic_store(&c->slot->wait_calls, 0); /* it entered: no waiter */
	if (rc == LB_ECANCELED)
		return;
	if (rc != 0) {
		c->slot->timeouts++;
		if (rc == LB_EREDIS) /* a dead server: do not spin on it */
			lb_sleep_ns(10 * LB_NS_PER_MS);
		return;
	}
	count_phase(c, &c->slot->cmds_waiting);
	struct lb_record *rec = lb_shared_record(sh, c->id, n);
	if (lb_shared_canary_enter(sh, c->id))
		atomic_fetch_add(&sh->canary_violations, 1);
	rec->enter_ns = lb_now_ns() - sh->t0_ns;
	rec->acquire_start_ns = t0 - sh->t0_ns;
	rec->fence = grant.fence;
	rec->nodes = grant.nodes;
	rec->lease_end_ns = lease_end(c, sh->t0_ns + rec->enter_ns);
	rec->token = lb_base_token_hash(c->lock_state); /* whose lock the servers see */
	rec->release_ns = -1;
	atomic_store(&rec->state, LB_REC_ENTERED);
	atomic_store(&c->slot->n_records, n + 1);
	c->slot->acquires++;
	lb_hist_add(&c->slot->latency, lb_now_ns() - t0);

	if (c->slow_hold_ms > 0) {
		hold_ms = c->slow_hold_ms;
		c->slow_hold_ms = 0;
		c->sync_since = rec->enter_ns;
		lb_event_emit(sh, LB_EV_SLOW, c->id, -1, hold_ms);
	}
	snprintf(c->section, sizeof(c->section), "%d/%u", c->id, n);
	c->told = false;
	do_work(c, hold_ms, c->slow_sync, grant.fence);
	c->slow_sync = false;
	(void)lease_lost(c); /* a notice that came during the write: told by the exit */

	rec->exit_ns = lb_now_ns() - sh->t0_ns;
	if (cfg->strategy->lease_end) /* its own extensions moved it */
		rec->lease_end_ns = lease_end(c, sh->t0_ns + rec->enter_ns);
	atomic_store(&rec->state, LB_REC_EXITED);
	atomic_store(&c->slot->inside, 0);
	follow_nodes(c);
	uint64_t sent_before = unanswered(c);
	lose_arm(c, true);
	rc = cfg->strategy->release(c->lock_state);
	bool lost = lose_done(c, true);
	check_fatal(c, rc); /* a death leaves the record exited, not released: killed */
	rec->release_ns = lb_now_ns() - sh->t0_ns;
	count_phase(c, &c->slot->cmds_held);
	rec->outcome = outcome_of(rc);
	/* sent, no reply: deleted, or not. A library that retried the request
	 * whose reply the relay lost (go-redis, redis-py's Retry) answers for
	 * the retry: "gone" or "another's" says nothing of what the first one
	 * deleted, and the oracle would read that del as a foreign release. */
	if ((rec->outcome == LB_OUT_ERROR && (lost || unanswered(c) > sent_before)) ||
	    (lost && (rec->outcome == LB_OUT_LOST || rec->outcome == LB_OUT_FOREIGN))) {
		rec->outcome = LB_OUT_INDETERMINATE;
		c->slot->indeterminate_ops++;
	}
	atomic_store(&rec->state, LB_REC_RELEASED);
	atomic_fetch_add(&sh->sections, 1);
	atomic_store(&c->slot->idle, 1);
	lb_sleep_ns(cfg->think_ms * LB_NS_PER_MS);
}

/* CPU time (user + system) this client and its adapter have used, ns, or -1
 * (its adapter has gone). The adapter's is read from its process's CPU
 * clock while it runs: reaped, its time would come only after destroy. */
static int64_t cpu_used(const struct client *c)
{
	struct timespec ts;
	int64_t ns = clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0 ?
		     (int64_t)ts.tv_sec * LB_NS_PER_S + ts.tv_nsec : -1;
	if (ns >= 0 && lb_strategy_is_external(c->cfg->strategy)) {
		int64_t a = lb_adapter_cpu_ns(c->lock_state);
		ns = a < 0 ? -1 : ns + a;
	}
	return ns;
}

void lb_client_main(const struct lb_run_cfg *cfg, struct lb_shared *sh, int id,
		    const struct lb_node *lock_nodes, size_t n_lock,
		    const struct lb_node *resource, const char *prefix, const char *clock_shim)
{
	struct client c = { .cfg = cfg, .sh = sh, .slot = &sh->client[id], .id = id,
			    .primary_seen = -1, .n_lock = n_lock, .lose_fault = -1 };
	int status = 0, port;

	c.key = id % cfg->keys;
	c.rng = cfg->seed ^ (0x5851f42d4c957f2dull * (uint64_t)(id + 1));
	/* the parent decides when the run stops: a Ctrl-C or a SIGTERM sent to the
	 * whole process group must not pass for holder deaths */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	for (size_t i = 0; i < n_lock; i++) {
		c.lock[i] = lock_nodes[i];
		c.lock[i].ctx = NULL;
		c.lock[i].follow_port = &sh->node_port[i];
		c.lock[i].blocked = &c.cut_off[i];
		c.lock_ptr[i] = &c.lock[i];
		if ((port = atomic_load(&sh->link[id][i].port)) > 0) {
			c.lock[i].port = port; /* through the relay, which follows the node */
			snprintf(c.lock[i].host, sizeof(c.lock[i].host), "127.0.0.1");
			c.lock[i].follow_port = NULL;
		}
		if (cfg->sentinel || cfg->cluster) /* the relay tells its connections apart */
			lb_party_addr(LB_TOPO_PARTS + id, c.lock[i].source, sizeof(c.lock[i].source));
	}
	c.resource = *resource;
	c.resource.ctx = NULL;
	if ((port = atomic_load(&sh->link[id][LB_RELAY_RESOURCE].port)) > 0)
		c.resource.port = port;
	snprintf(c.lock_key, sizeof(c.lock_key), "%slock:%d", prefix, c.key);
	snprintf(c.counter_key, sizeof(c.counter_key), "%scounter:%d", prefix, c.key);
	char log_path[PATH_MAX], clock_path[PATH_MAX];
	bool external = lb_strategy_is_external(cfg->strategy);
	snprintf(log_path, sizeof(log_path), "%.3900s/adapter-%d.log", cfg->out_dir, id);
	snprintf(clock_path, sizeof(clock_path), "%.3900s/.clock-%d", cfg->out_dir, id);
	if (external && clock_shim && lb_clock_file_write(clock_path, 0) == 0)
		c.clock_file = clock_path;
	struct lb_lock_cfg lcfg = {
		.nodes = c.lock_ptr, .n_nodes = n_lock, .key = c.lock_key, .ttl_ms = cfg->ttl_ms,
		.clock = &c.clock, .notify = cfg->wait.kind == LB_WAIT_NOTIFY,
		.poll_ms = lb_wait_poll_ms(&cfg->wait),
		.no_validity_check = cfg->no_validity_check, .max_extensions = cfg->max_renewals,
		.client = id, .impl = cfg->strategy->impl,
		.library_wait = cfg->wait.kind == LB_WAIT_LIBRARY, .timeout_ms = c.lock[0].timeout_ms,
		.cancel = &sh->stop, .log_path = external && cfg->out_dir[0] ? log_path : NULL,
		.clock_shim = c.clock_file || c.lock[0].source[0] ? clock_shim : NULL,
		.clock_file = c.clock_file,
		.tls_ca = cfg->tls_ca, .tls_cert = cfg->tls_cert, .tls_key = cfg->tls_key,
		.tls_insecure = cfg->tls_insecure,
	};
	c.node_gen = atomic_load(&sh->node_gen);
	arm_failpoints(&c);
	c.lock_state = cfg->strategy->create(&lcfg);
	atomic_store(&c.slot->idle, c.lock_state != NULL);
	/* the connections are made now, not in the first section: a slow
	 * Sentinel or server must not lengthen a section, and thousands of
	 * clients connecting at go would overflow a server's accept queue (a
	 * failure here is tried again at the first command) */
	if (c.lock_state && cfg->work == LB_WORK_COUNTER)
		lb_node_connect(&c.resource);
	for (size_t i = 0; c.lock_state && !external && i < n_lock && !c.lock[i].scheme[0]; i++)
		lb_node_connect(&c.lock[i]);
	atomic_fetch_add(&sh->started, 1); /* ready, or failed: the run's clock may start */
	if (!c.lock_state) { /* the message is printed: the run is void */
		status = LB_CLIENT_EXIT_STRATEGY;
		goto out;
	}
	lb_shared_wait_go(sh);
	int64_t cpu0 = cpu_used(&c);
	while (!atomic_load(&sh->stop) && lb_now_ns() < sh->end_ns &&
	       (cfg->calls == 0 || atomic_load(&c.slot->calls) < (uint32_t)cfg->calls))
		one_section(&c);
	int64_t cpu1 = cpu_used(&c);
	atomic_store(&c.slot->cpu_ns, cpu0 >= 0 && cpu1 >= 0 ? cpu1 - cpu0 : -1);
out:
	cfg->strategy->destroy(c.lock_state);
	for (size_t i = 0; i < n_lock; i++)
		lb_node_close(&c.lock[i]);
	lb_node_close(&c.resource);
	if (c.clock_file)
		lb_owned_unlink(c.clock_file);
	struct rusage ru; /* its adapter, reaped by destroy: the part that is not lockbench's */
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
		atomic_store(&c.slot->cpu_adapter_us,
			     (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
			     (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec));
	atomic_store(&c.slot->cpu_said, 1);
	_exit(status);
}
