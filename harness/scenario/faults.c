#include "faults.h"

#include "adapter.h"
#include "cluster.h"
#include "failpoint.h"
#include "faults_deploy.h"
#include "node.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SYNC_LIMIT_NS (2 * LB_NS_PER_S) /* longest wait for "then = other-inside" */
#define CHOSEN_LIMIT_NS (15 * LB_NS_PER_S) /* and for "then = failover-chosen" */

static const char *const event_names[LB_EV_COUNT] = {
	"kill", "pause", "resume", "slow", "crash", "sleep", "wake", "clock", "partition",
	"heal", "node-kill", "node-start", "node-pause", "node-resume", "node-clock",
	"replication-cut", "promote", "death", "lease-lost", "net-delay", "net-blackhole",
	"net-cut", "net-heal", "net-deliver", "node-start-failed", "adapter-died",
	"sentinel-sdown", "sentinel-odown", "switch-master", "net-partition", "partition-healed",
	"demoted", "primary-seen", "failover-chosen", "node-failed",
	"cluster-down", "hook", "hook-end", "sentinel-failover", "client-kill", "server-down",
	"server-back", "cluster-failover", "failover-end", "refused", "lost-notice",
	"reply-lost",
};

/* Has an event of @kind been recorded at or after @t_ns (the history's clock)? */
static bool event_since(struct lb_shared *sh, int kind, int64_t t_ns)
{
	uint32_t n = atomic_load(&sh->n_events);

	for (uint32_t i = 0; i < n && i < LB_MAX_EVENTS; i++)
		if (atomic_load(&sh->event_ready[i]) && sh->events[i].kind == kind &&
		    sh->events[i].t_ns >= t_ns)
			return true;
	return false;
}

const char *lb_event_name(int kind)
{
	return kind >= 0 && kind < LB_EV_COUNT ? event_names[kind] : "?";
}

bool lb_strategy_has_failpoint(const struct lock_strategy *s, const char *name)
{
	for (const char *const *f = s->failpoints; f && *f; f++)
		if (!strcmp(*f, name))
			return true;
	return false;
}


/* Can fault @f act on this deployment? 0; LB_ENOTSUP (a skip) or LB_EINVAL
 * (a mistake) with the reason in @why. On servers lockbench did not start,
 * only with --allow-faults, and only what a client (or the user's hook) can
 * do there: docs/running.md, "Faults on your deployment". */
static int fault_fits(const struct lb_run_cfg *cfg, const struct lb_fault *f, bool embedded,
		      char *why, size_t len)
{
	const struct lb_scenario *sc = cfg->scenario;
	const char *what = lb_action_name(f->action), *no = NULL;
	bool node_fault = f->action >= LB_ACT_NODE_KILL;
	int rc = LB_ENOTSUP;

	if (f->action == LB_ACT_HOOK && !lb_hook_command(cfg, f->hook, 0)) {
		snprintf(why, len, "%s:%d: [%s] runs hook %s: give its command, --hook %s=COMMAND",
			 sc->path, f->line, f->name, f->hook, f->hook);
		return LB_EINVAL;
	}
	if (f->action == LB_ACT_LOSE_REPLY && lb_strategy_topology(cfg->strategy))
		no = "counts the requests in the Redis protocol (RESP) the relay carries, and this "
		     "lock speaks another";
	else if (f->action == LB_ACT_LOSE_REPLY && !embedded)
		no = "acts on the network through lockbench's relay, between clients and the servers "
		     "it starts";
	else if (f->action == LB_ACT_SENTINEL_FAILOVER && !cfg->sentinel && !cfg->sentinel_urls)
		no = "needs Sentinels: topology = sentinel, or yours with --sentinel";
	else if (f->action == LB_ACT_CLUSTER_FAILOVER && !cfg->cluster && !cfg->cluster_urls)
		no = "needs a cluster: topology = cluster, or yours with --cluster";
	else if (!node_fault || embedded)
		return 0;
	else if (!cfg->allow_faults)
		no = "acts on the servers, and lockbench sends faults to servers it did not start "
		     "only when asked: --allow-faults";
	else if ((f->action == LB_ACT_NODE_KILL || f->action == LB_ACT_NODE_RESTART) &&
		 !lb_hook_command(cfg, "node-kill", 0))
		no = "kills a server process: on yours, give the command that does it, --hook "
		     "node-kill=COMMAND (and node-start=COMMAND to bring it back)";
	else if ((f->action == LB_ACT_NODE_RESTART ||
		  (f->action == LB_ACT_NODE_KILL && f->duration_ms >= 0)) &&
		 !lb_hook_command(cfg, "node-start", 0))
		no = "brings the server back: give that command too, --hook node-start=COMMAND";
	else if (f->action == LB_ACT_NODE_PAUSE && (cfg->etcd_urls || cfg->zk_urls) &&
		 !lb_hook_command(cfg, "node-pause", 0))
		no = "pauses a member: on your ensemble, give the commands that do it, --hook "
		     "node-pause=COMMAND and node-resume=COMMAND (CLIENT PAUSE is Redis's)";
	else if (f->action == LB_ACT_CLIENT_KILL && (cfg->etcd_urls || cfg->zk_urls))
		no = "cuts a client off with Redis's CLIENT KILL, which an etcd member or a "
		     "ZooKeeper server does not have: use action = kill or pause on the client";
	else if (f->action == LB_ACT_NODE_CLOCK)
		no = "moves a server's clock through the shim lockbench preloads into the "
		     "servers it starts";
	else if (f->action == LB_ACT_FAILOVER)
		no = "holds replication back through lockbench's relay: on a Sentinel deployment, "
		     "action = sentinel-failover";
	else if (f->action >= LB_ACT_NET_DELAY && f->action <= LB_ACT_NET_CUT &&
		 (cfg->etcd_urls || cfg->zk_urls))
		return 0; /* the relay sits between lockbench's clients and your members */
	else if (f->action >= LB_ACT_NET_DELAY && f->action <= LB_ACT_NET_PARTITION)
		no = "acts on the network through lockbench's relay, between clients and the servers "
		     "it starts";
	else
		return 0;
	if ((f->action == LB_ACT_SENTINEL_FAILOVER || f->action == LB_ACT_CLUSTER_FAILOVER) &&
	    embedded)
		rc = LB_EINVAL; /* on lockbench's own servers the scenario is wrong */
	snprintf(why, len, "%s: [%s] %s %s", sc->name, f->name, what, no);
	return rc;
}

int lb_faults_check(const struct lb_run_cfg *cfg, bool embedded, bool quiet, char *why,
		    size_t len)
{
	const struct lb_scenario *sc = cfg->scenario;
	bool warn = !quiet && (!sc || !sc->chaos.on); /* drawn chaos faults are placed in the run */

	if (!sc)
		return 0;
	for (int i = 0; i < sc->n_faults; i++) {
		const struct lb_fault *f = &sc->faults[i];
		int rc = fault_fits(cfg, f, embedded, why, len);
		if (rc < 0)
			return rc;
		if (f->target == LB_TGT_CLIENT && f->client >= cfg->clients) {
			snprintf(why, len, "%s:%d: [%s] targets client:%d but the run has %d clients",
				 sc->path, f->line, f->name, f->client, cfg->clients);
			return LB_EINVAL;
		}
		int nodes = cfg->nodes > 0 ? cfg->nodes : (int)cfg->strategy->min_nodes;
		if (f->nodes >> nodes) {
			snprintf(why, len, "%s:%d: [%s] names a node beyond the run's %d", sc->path,
				 f->line, f->name, nodes);
			return LB_EINVAL;
		}
		if (warn && f->at_s >= cfg->duration_s)
			lb_errorf("warning: %s:%d: [%s] at %g s lies after the run's end (%g s): it "
				  "will not fire", sc->path, f->line, f->name, f->at_s, cfg->duration_s);
		else if (warn && f->duration_ms > 0 &&
			 f->at_s + (double)f->duration_ms / 1000 > cfg->duration_s &&
			 (f->action == LB_ACT_PAUSE || f->action == LB_ACT_NODE_PAUSE))
			lb_errorf("warning: %s:%d: [%s] pauses %g s from %g s, past the run's end "
				  "(%g s): the run ends first and cuts it short", sc->path, f->line,
				  f->name, (double)f->duration_ms / 1000, f->at_s, cfg->duration_s);
	}
	return 0;
}

int lb_scenario_fits(const struct lb_run_cfg *cfg)
{
	char why[600];

	if (lb_faults_check(cfg, !lb_cfg_theirs(cfg), true, why, sizeof(why)) != LB_EINVAL)
		return 0; /* a skip (a part missing here) is the run's to report */
	lb_errorf("%s: the scenario does not fit the run of %s: nothing was started", why,
		  cfg->strategy ? cfg->strategy->name : "?");
	return LB_EINVAL;
}

/* The client inside a section with the latest enter, or -1. */
static int current_holder(struct lb_injector *inj)
{
	int best = -1;
	int64_t best_enter = -1;

	for (int c = 0; c < inj->cfg->clients; c++) {
		struct lb_record *r = lb_shared_open_record(inj->sh, c);
		if (!r || !atomic_load(&inj->sh->client[c].alive))
			continue;
		if (r->enter_ns > best_enter) {
			best_enter = r->enter_ns;
			best = c;
		}
	}
	return best;
}

/* The target client of @f now, or -1 when there is none yet (no holder). */
static int pick_client(struct lb_injector *inj, const struct lb_fault *f)
{
	int c = f->target == LB_TGT_CLIENT ?
			(atomic_load(&inj->sh->client[f->client].alive) ? f->client : -1) :
			current_holder(inj);
	/* when = after-read: only between its counter read and its write, so
	 * that the write it makes afterwards is stale */
	if (c >= 0 && f->when_after_read && !atomic_load(&inj->sh->client[c].read_done))
		return -1;
	return c;
}

/* Node and network faults with a client target wait until that client (or,
 * for holder, anyone) is inside a critical section, and has been for
 * `inside` ms but not more than `within` ms (when given: the fault then
 * waits for a section that has just begun). */
static bool holder_ready(struct lb_injector *inj, const struct lb_fault *f)
{
	int c = f->target == LB_TGT_HOLDER ? current_holder(inj) :
		f->target == LB_TGT_CLIENT ? f->client : -2;
	if (c == -2)
		return true;
	struct lb_record *r = c >= 0 ? lb_shared_open_record(inj->sh, c) : NULL;
	int64_t in = r ? lb_now_ns() - inj->sh->t0_ns - r->enter_ns : -1;
	return r && in >= f->inside_ms * LB_NS_PER_MS &&
	       (f->within_ms <= 0 || in <= f->within_ms * LB_NS_PER_MS);
}

static void each_node(struct lb_injector *inj, const struct lb_fault *f,
		      void (*fn)(struct lb_injector *, size_t, const struct lb_fault *))
{
	for (size_t i = 0; i < inj->n_lock; i++)
		if ((f->nodes >> i) & 1u)
			fn(inj, i, f);
}

static void node_kill(struct lb_injector *inj, size_t i, const struct lb_fault *f)
{
	(void)f;
	lb_server_kill(inj->lock_srv[i]);
	lb_event_emit(inj->sh, LB_EV_NODE_KILL, -1, (int)i, 0);
}

/* A respawned node must answer by then: a redis-server in 5 s; an etcd or
 * ZooKeeper member in 20 s (a ZooKeeper member is a JVM: one restarted under
 * make test's load beside a fuzzer took over 6 s to answer, and the
 * leader-kill run said it never came back). */
#define NODE_START_LIMIT_NS (5 * LB_NS_PER_S)
#define MEMBER_START_LIMIT_NS (20 * LB_NS_PER_S)

static int64_t start_limit_ns(const struct lb_injector *inj, const struct lb_fault *f)
{
	for (size_t i = 0; i < inj->n_lock; i++)
		if ((f->nodes >> i) & 1u && inj->lock_srv[i]->opts.kind)
			return MEMBER_START_LIMIT_NS;
	return NODE_START_LIMIT_NS;
}

/* A node's start failed: an event on the timeline, and a message. */
static void node_start_failed(struct lb_injector *inj, size_t i, const char *why)
{
	lb_event_emit(inj->sh, LB_EV_NODE_START_FAILED, -1, (int)i, 0);
	lb_errorf("node %zu did not come back (%s); it stays down, see %s", i, why,
		  inj->lock_srv[i]->log_path);
}

/* Restart step 1: fork and exec every node of @f, without waiting. */
static void nodes_start_begin(struct lb_injector *inj, const struct lb_fault *f,
			      struct lb_fault_rt *rt)
{
	rt->pending = 0;
	for (size_t i = 0; i < inj->n_lock; i++) {
		if (!((f->nodes >> i) & 1u))
			continue;
		if (lb_server_respawn_begin(inj->lock_srv[i]) == 0)
			rt->pending |= 1u << i;
		else
			node_start_failed(inj, i, "it could not be started");
	}
}

/* Restart step 2, every tick: the nodes that answer now are back. Done
 * (true) when none is pending; past the deadline, the rest have failed. */
static bool nodes_start_poll(struct lb_injector *inj, struct lb_fault_rt *rt, int64_t now)
{
	for (size_t i = 0; i < inj->n_lock; i++) {
		if (!((rt->pending >> i) & 1u))
			continue;
		int rc = lb_server_poll_ready(inj->lock_srv[i]);
		if (rc == 0)
			lb_event_emit(inj->sh, LB_EV_NODE_START, -1, (int)i, 0);
		else if (rc < 0)
			node_start_failed(inj, i, "it exited at start");
		else if (now >= rt->cut_ns)
			node_start_failed(inj, i, inj->lock_srv[i]->opts.kind ? "no answer within 20 s" :
					  "no answer to PING within 5 s");
		else
			continue;
		rt->pending &= ~(1u << i);
	}
	return rt->pending == 0;
}

static void node_pause(struct lb_injector *inj, size_t i, const struct lb_fault *f)
{
	lb_server_pause(inj->lock_srv[i]);
	lb_event_emit(inj->sh, LB_EV_NODE_PAUSE, -1, (int)i, f->duration_ms);
}

static void node_resume(struct lb_injector *inj, size_t i, const struct lb_fault *f)
{
	(void)f;
	lb_server_resume(inj->lock_srv[i]);
	lb_event_emit(inj->sh, LB_EV_NODE_RESUME, -1, (int)i, 0);
}

/* The nodes' clocks jump by the offset, at one instant; with strobe, the shim
 * flips it on and off on time from then (clockfile.h). That instant, on the
 * history's clock, into rt->cut_ns. */
static void node_clock(struct lb_injector *inj, const struct lb_fault *f, struct lb_fault_rt *rt)
{
	int64_t from = lb_now_ns();
	struct lb_clockset set = { .offset_ms = f->offset_ms };

	if (f->strobe_ms) {
		set.strobe_ms = f->strobe_ms;
		set.from_ns = from;
		set.until_ns = f->duration_ms >= 0 ? from + f->duration_ms * LB_NS_PER_MS : INT64_MAX;
	}
	rt->cut_ns = from - inj->sh->t0_ns;
	for (size_t i = 0; i < inj->n_lock; i++)
		if ((f->nodes >> i) & 1u) {
			lb_server_set_clockset(inj->lock_srv[i], &set);
			lb_event_emit_at(inj->sh, LB_EV_NODE_CLOCK, -1, (int)i, f->offset_ms,
					 rt->cut_ns);
		}
}

static void node_clock_reset(struct lb_injector *inj, size_t i, const struct lb_fault *f)
{
	(void)f;
	lb_server_set_clock(inj->lock_srv[i], 0);
	lb_event_emit(inj->sh, LB_EV_NODE_CLOCK, -1, (int)i, 0);
}

/* Does the replica hold lock 0 (a lock whose delete did not replicate)? The
 * key the strategy really writes: lockbench's, or a library's own name for it
 * (its manifest's outside_key, "mutex:KEY" for redis-semaphore). */
static bool replica_has_lock(struct lb_injector *inj)
{
	const struct lb_adapter_def *def = lb_strategy_is_external(inj->cfg->strategy) ?
		lb_adapter_def_of(inj->cfg->strategy) : NULL;
	const char *at = def ? strstr(def->outside_key, "KEY") : NULL;
	char key[256];
	struct lb_node n;
	long long v = 1;

	if (at)
		snprintf(key, sizeof(key), "%.*s%slock:0%s", (int)(at - def->outside_key),
			 def->outside_key, inj->prefix, at + 3);
	else
		snprintf(key, sizeof(key), "%slock:0", inj->prefix);
	lb_node_init_local(&n, inj->replica->port, 1000);
	if (inj->cfg->cluster) { /* a cluster replica answers reads only after READONLY */
		redisReply *ro = lb_node_cmd(&n, "READONLY");
		if (ro)
			freeReplyObject(ro);
	}
	redisReply *r = lb_node_cmd(&n, "EXISTS %s", key);
	lb_reply_int(r, &v);
	if (r)
		freeReplyObject(r);
	lb_node_close(&n);
	return v != 0;
}

static bool promote(struct lb_injector *inj)
{
	struct lb_node n;

	lb_node_init_local(&n, inj->replica->port, 1000);
	redisReply *r = lb_node_cmd(&n, "REPLICAOF NO ONE");
	bool ok = lb_reply_ok(r);
	if (r)
		freeReplyObject(r);
	lb_node_close(&n);
	return ok;
}

/* The replication link a failover holds: the replica's (replica 0's on the
 * Sentinel topology) to the primary. */
static struct lb_link_ctl *repl_link(struct lb_injector *inj)
{
	if (inj->cfg->cluster) /* replica 0 to primary 0: its stream and their bus */
		return &inj->sh->mesh[LB_CLUSTER_SHARDS][0];
	return inj->cfg->sentinel ? &inj->sh->mesh[LB_PART_REPLICA0][LB_PART_PRIMARY]
				  : &inj->sh->repl_link;
}

/* Is the promotion a real one, decided by Sentinels or by the cluster? */
static bool real_failover(const struct lb_injector *inj)
{
	return inj->cfg->sentinel || inj->cfg->cluster;
}

/* Failover, step by step, never blocking the supervisor:
 *   0  while the lock is free, hold the replication link back (the relay
 *      keeps the primary's stream; the replica lags, it loses nothing yet)
 *   1  once the relay obeys and what it forwarded before has been applied:
 *      the replica must hold no lock (one that slipped through would come
 *      back as a ghost whose DEL never arrived, a different pitfall); if it
 *      does, let the link pass and try again
 *   2  a client acquires after the hold: its SET never reaches the replica.
 *      Kill the primary, reset the held link (its bytes are lost with the
 *      primary), promote the replica and point the clients at it. */
/* A lock slipped through to the held replica: let the link pass, and hold
 * it again once the relay has passed on what it held (a DEL, perhaps),
 * after @ms, at the next moment the lock is free. */
static void hold_again(struct lb_injector *inj, struct lb_fault_rt *rt, int64_t now, int ms)
{
	atomic_store(&repl_link(inj)->mode, LB_LINK_PASS);
	rt->phase = 0;
	rt->next_ns = now + ms * LB_NS_PER_MS;
}

static void failover(struct lb_injector *inj, struct lb_fault_rt *rt, int64_t now)
{
	struct lb_link_ctl *k = repl_link(inj);

	if (rt->phase == 0) {
		if (current_holder(inj) >= 0 || now < rt->next_ns)
			return; /* hold while the lock is free (and the relay let go of the last hold) */
		atomic_store(&k->mode, LB_LINK_HOLD);
		rt->hold_ns = now;
		rt->epoch = atomic_load(&inj->sh->relay_epoch);
		rt->phase = 1;
		rt->next_ns = now + 20 * LB_NS_PER_MS; /* bytes in flight land meanwhile */
		rt->cut_ns = now + 2 * LB_NS_PER_S;    /* deadline of this step */
		return;
	}
	if (rt->phase == 1) {
		if (!lb_relay_settled(&inj->sh->relay_epoch, rt->epoch)) {
			if (now < rt->cut_ns)
				return;
			lb_errorf("failover: the relay did not take the replication hold within 2 s");
			rt->phase = -1;
			return;
		}
		if (replica_has_lock(inj)) {
			hold_again(inj, rt, now, real_failover(inj) ? 50 : 10);
			return;
		}
		lb_event_emit(inj->sh, LB_EV_REPL_CUT, -1, 0, 0);
		rt->cut_ns = now;
		rt->phase = 2;
		return;
	}
	/* a holder whose SET was sent after the hold: it never reached the replica */
	for (int c = 0; c < inj->cfg->clients; c++) {
		struct lb_record *r = lb_shared_open_record(inj->sh, c);
		/* with Sentinels, sections are long enough to outlast the failover,
		 * and a waiter that started before the hold may be the one that gets
		 * in: its entry after the hold counts, once the held replica is seen
		 * without the lock */
		if (!r || (real_failover(inj) ? r->enter_ns < rt->hold_ns :
						r->acquire_start_ns < rt->cut_ns))
			continue;
		if (real_failover(inj) && replica_has_lock(inj)) {
			hold_again(inj, rt, now, 10);
			return;
		}
		node_kill(inj, 0, NULL);
		atomic_store(&k->mode, LB_LINK_CUT);
		if (real_failover(inj)) { /* real Sentinels (a real cluster) promote, the clients
					      ask them (look the slot up) */
			rt->phase = -1;
			return;
		}
		if (promote(inj))
			lb_event_emit(inj->sh, LB_EV_PROMOTE, -1, 0, inj->replica->port);
		atomic_store(&inj->sh->node_port[0], inj->replica->port);
		atomic_fetch_add(&inj->sh->node_gen, 1);
		rt->phase = -1;
		return;
	}
}

/* Is relay link @l (a lock node, or the resource) one of @f's? */
static bool fault_has_link(const struct lb_injector *inj, const struct lb_fault *f, int l)
{
	if (l == LB_RELAY_RESOURCE)
		return f->resource;
	return (size_t)l < inj->n_lock && (f->all_nodes || ((f->nodes >> l) & 1u));
}

/* The links of @f (its nodes and/or the resource) of client @c (-1: every
 * client) take @mode and @delay_ms. */
static void set_links(struct lb_injector *inj, const struct lb_fault *f, int c, int mode,
		      int delay_ms)
{
	for (int k = 0; k < inj->cfg->clients; k++) {
		if (c >= 0 && k != c)
			continue;
		for (int l = 0; l < LB_RELAY_LINKS; l++) {
			if (!fault_has_link(inj, f, l))
				continue;
			atomic_store(f->replies ? &inj->sh->link[k][l].reply_delay_ms :
				     &inj->sh->link[k][l].delay_ms, delay_ms);
			atomic_store(&inj->sh->link[k][l].mode, mode);
		}
	}
}

static void flush_links(struct lb_injector *inj, const struct lb_fault *f, int c)
{
	for (int k = 0; k < inj->cfg->clients; k++)
		for (int l = 0; l < LB_RELAY_LINKS && (c < 0 || k == c); l++)
			if (fault_has_link(inj, f, l))
				atomic_fetch_add(&inj->sh->link[k][l].flush_gen, 1);
}

/* Network faults: on at `at` (for a holder, once inside), off after
 * `duration`. With `then = idle`, a net-delay holds the bytes it caught until
 * `delay` ms after it began and then delivers them at the first moment no
 * client is inside, so that a late write lands between two sections. */
static void net_fault(struct lb_injector *inj, const struct lb_fault *f, struct lb_fault_rt *rt,
		      int64_t now)
{
	static const int kinds[] = { LB_EV_NET_DELAY, LB_EV_NET_BLACKHOLE, LB_EV_NET_CUT };
	int kind = kinds[f->action - LB_ACT_NET_DELAY];

	if (rt->phase == 0) {
		/* when = waiting: client N's links, from a moment it is idle, between
		 * two sections (or before its first: at 0, before any client moves),
		 * so that what it sends next is an acquire; otherwise once the target
		 * holds */
		if (f->when_waiting ? f->target != LB_TGT_CLIENT ||
				      !atomic_load(&inj->sh->client[f->client].idle)
				    : !holder_ready(inj, f))
			return;
		rt->client = f->target == LB_TGT_ANY ? -1 : pick_client(inj, f);
		if (f->target != LB_TGT_ANY && rt->client < 0)
			return;
		int mode = f->action == LB_ACT_NET_BLACKHOLE ? LB_LINK_BLACKHOLE :
			   f->action == LB_ACT_NET_CUT ? LB_LINK_CUT : LB_LINK_PASS;
		int delay = f->action != LB_ACT_NET_DELAY ? 0 : f->then_idle ? 1000000000 :
			    (int)f->delay_ms;
		set_links(inj, f, rt->client, mode, delay);
		lb_event_emit(inj->sh, kind, rt->client, -1,
			      f->action == LB_ACT_NET_DELAY ? f->delay_ms : f->duration_ms);
		rt->cut_ns = now; /* when it began */
		rt->phase = f->duration_ms >= 0 ? 1 : -1;
		rt->next_ns = now + f->duration_ms * LB_NS_PER_MS;
		return;
	}
	if (rt->phase == 1) {
		set_links(inj, f, rt->client, LB_LINK_PASS, 0);
		lb_event_emit(inj->sh, LB_EV_NET_HEAL, rt->client, -1, 0);
		rt->phase = f->then_idle ? 2 : -1;
		rt->next_ns = rt->cut_ns + f->delay_ms * LB_NS_PER_MS;
		return;
	}
	if (now < rt->next_ns + SYNC_LIMIT_NS)
		for (int c = 0; c < inj->cfg->clients; c++)
			if (lb_shared_inside(inj->sh, c))
				return; /* wait for a moment nobody is inside */
	flush_links(inj, f, rt->client);
	lb_event_emit(inj->sh, LB_EV_NET_FLUSH, rt->client, -1, 0);
	rt->phase = -1;
}

/* Every link from a party on one side of @f to a part on the other (either
 * way: the relay sees who connects) in @mode. */
static void mesh_split(struct lb_injector *inj, const struct lb_fault *f, int mode)
{
	for (int p = 0; p < LB_TOPO_PARTS + inj->cfg->clients; p++) {
		int a = lb_fault_side(f, p);
		for (int j = 0; j < LB_TOPO_PARTS && a >= 0; j++) {
			int b = lb_fault_side(f, j);
			if (b >= 0 && b != a)
				atomic_store(&inj->sh->mesh[p][j].mode, mode);
		}
	}
}

/* A partition holds the links between the sides: bytes are kept, not lost,
 * and delivered when it heals, as TCP retransmits them after a real one
 * (a reset would tell both sides at once, which a partition does not). */
static void net_partition(struct lb_injector *inj, const struct lb_fault *f,
			  struct lb_fault_rt *rt, int64_t now)
{
	if (rt->phase == 0) {
		if (!holder_ready(inj, f))
			return;
		mesh_split(inj, f, LB_LINK_HOLD);
		lb_event_emit(inj->sh, LB_EV_NET_SPLIT, -1, -1, f->duration_ms);
		rt->phase = f->duration_ms >= 0 ? 1 : -1;
		rt->next_ns = now + f->duration_ms * LB_NS_PER_MS;
		return;
	}
	mesh_split(inj, f, LB_LINK_PASS);
	lb_event_emit(inj->sh, LB_EV_NET_MEND, -1, -1, 0);
	rt->phase = -1;
}

/* kill: the target client (or the holder), SIGKILL, once. */
static void tick_kill(struct lb_injector *inj, const struct lb_fault *f, struct lb_fault_rt *rt)
{
	int c = pick_client(inj, f);

	if (c < 0)
		return; /* nobody holds yet: try again next tick */
	if (f->when_waiting && lb_shared_inside(inj->sh, c))
		return; /* kill a waiter, not a holder: next tick */
	lb_client_signal(inj->sh, c, SIGKILL);
	/* stamped after the kill, not at the top of the tick: the holder may have
	 * entered in between */
	lb_shared_mark_dead(inj->sh, c, lb_now_ns() - inj->sh->t0_ns);
	/* standing in for a failpoint the strategy does not have: minus its code */
	lb_event_emit(inj->sh, LB_EV_KILL, c, -1,
		      lb_action_in_client(f->action) ? -lb_failpoint_code(f->failpoint) : 0);
	rt->phase = -1;
}

/* pause: SIGSTOP the client, then SIGCONT after the duration (or, with
 * then = other-inside, as the next one enters). */
static void tick_pause(struct lb_injector *inj, const struct lb_fault *f, struct lb_fault_rt *rt,
		       int64_t now)
{
	if (rt->phase == 0 && f->when_before_write) { /* armed: the client stops itself */
		int c = pick_client(inj, f);
		if (c < 0)
			return;
		atomic_store(&inj->sh->client[c].stopped_before_write, 0);
		atomic_store(&inj->sh->client[c].stop_before_write, 1);
		rt->client = c;
		rt->phase = 2;
		return;
	}
	if (rt->phase == 2) { /* it stops at its next write: the pause runs from then */
		if (!atomic_exchange(&inj->sh->client[rt->client].stopped_before_write, 0))
			return;
		lb_event_emit(inj->sh, LB_EV_PAUSE, rt->client, -1, f->duration_ms);
		rt->phase = 1;
		rt->next_ns = now + f->duration_ms * LB_NS_PER_MS;
		return;
	}
	if (rt->phase == 0) {
		int c = pick_client(inj, f);
		if (c < 0)
			return;
		if (f->when_waiting && lb_shared_holding(inj->sh, c))
			return; /* freeze a client between sections, not a holder (nor one
				   still releasing): next tick */
		lb_client_signal(inj->sh, c, SIGSTOP);
		lb_event_emit(inj->sh, LB_EV_PAUSE, c, -1, f->duration_ms);
		rt->client = c;
		rt->phase = 1;
		rt->next_ns = now + f->duration_ms * LB_NS_PER_MS;
		return;
	}
	/* then = other-inside: if someone got in during the pause (the lease ran
	 * out), resume as the next one enters; else on time */
	if (f->then_other_inside &&
	    lb_shared_other_entered_since(inj->sh, inj->cfg->clients, rt->client,
					  rt->next_ns - f->duration_ms * LB_NS_PER_MS) &&
	    !lb_shared_other_just_entered(inj->sh, inj->cfg->clients, rt->client, now) &&
	    now < rt->next_ns + SYNC_LIMIT_NS)
		return;
	lb_client_signal(inj->sh, rt->client, SIGCONT);
	lb_event_emit(inj->sh, LB_EV_RESUME, rt->client, -1, 0);
	rt->phase = -1;
}

static void tick_theirs_restart(struct lb_injector *inj, const struct lb_fault *f,
				struct lb_fault_rt *rt, int64_t now, int64_t back);

/* node-kill and node-restart: kill -9 the nodes, then start them again
 * (empty) when they are due back, a step per tick. */
static void tick_node_restart(struct lb_injector *inj, const struct lb_fault *f,
			      struct lb_fault_rt *rt, int64_t now)
{
	int64_t back = f->action == LB_ACT_NODE_RESTART ? f->delay_ms : f->duration_ms;

	/* antirez's delayed restart: a node comes back only after the max TTL,
	 * so every lock it knew of has expired everywhere meanwhile */
	if (back >= 0 && inj->cfg->delayed_restarts)
		back += inj->cfg->ttl_ms;
	if (inj->theirs) {
		tick_theirs_restart(inj, f, rt, now, back);
		return;
	}
	if (rt->phase == 0) {
		if (!holder_ready(inj, f))
			return;
		each_node(inj, f, node_kill);
		rt->phase = back >= 0 ? 1 : -1;
		rt->next_ns = now + back * LB_NS_PER_MS;
		if (back != 0)
			return;
	}
	if (rt->phase == 1 && f->then_failover_chosen &&
	    !event_since(inj->sh, LB_EV_FAILOVER_CHOSEN, rt->next_ns - back * LB_NS_PER_MS) &&
	    now < rt->next_ns + CHOSEN_LIMIT_NS)
		return; /* not before the failover is past turning back */
	if (rt->phase == 1) { /* a step, not a wait: the supervisor keeps ticking */
		nodes_start_begin(inj, f, rt);
		rt->phase = 2;
		rt->cut_ns = now + start_limit_ns(inj, f);
	}
	if (nodes_start_poll(inj, rt, now))
		rt->phase = -1;
}

/* node-pause: SIGSTOP the nodes, SIGCONT after the duration. */
static void tick_node_pause(struct lb_injector *inj, const struct lb_fault *f,
			    struct lb_fault_rt *rt, int64_t now)
{
	if (rt->phase == 2) { /* theirs: the hooks of the pause and the resume end */
		if (!lb_deploy_hooks_running(inj, rt, now))
			rt->phase = -1;
		return;
	}
	if (rt->phase == 0 && !holder_ready(inj, f))
		return; /* target and inside: not before that client has been inside so long */
	for (size_t i = 0; i < inj->n_lock; i++) {
		if (!((f->nodes >> i) & 1u))
			continue;
		if (inj->theirs && rt->phase == 0)
			lb_deploy_node_pause(inj, i, f, now);
		else if (inj->theirs)
			lb_deploy_node_resume(inj, i, f, now);
		else
			(rt->phase == 0 ? node_pause : node_resume)(inj, i, f);
	}
	if (rt->phase == 0)
		rt->next_ns = now + f->duration_ms * LB_NS_PER_MS;
	rt->phase = rt->phase == 0 ? 1 : inj->theirs ? 2 : -1;
}

/* node-kill and node-restart on servers lockbench did not start: the user's
 * hooks, node-kill at the fault's moment, node-start when it is due back;
 * done when the last hook has ended (or been killed at its deadline). */
static void tick_theirs_restart(struct lb_injector *inj, const struct lb_fault *f,
				struct lb_fault_rt *rt, int64_t now, int64_t back)
{
	if (rt->phase == 0) {
		if (!holder_ready(inj, f))
			return;
		for (size_t i = 0; i < inj->n_lock; i++)
			if ((f->nodes >> i) & 1u)
				lb_deploy_node_hook(inj, i, f, "node-kill", now);
		rt->phase = back >= 0 ? 1 : 3;
		rt->next_ns = now + back * LB_NS_PER_MS;
		return;
	}
	if (rt->phase == 1) {
		if (lb_deploy_hooks_running(inj, rt, now))
			return; /* node-start only after node-kill has done its work */
		for (size_t i = 0; i < inj->n_lock; i++)
			if ((f->nodes >> i) & 1u)
				lb_deploy_node_hook(inj, i, f, "node-start", now);
		rt->phase = 3;
		return;
	}
	if (!lb_deploy_hooks_running(inj, rt, now))
		rt->phase = -1;
}

/* hook: the user's command at the fault's moment, within `duration` ms
 * (30 s when not given). */
static void tick_hook(struct lb_injector *inj, const struct lb_fault *f, struct lb_fault_rt *rt,
		      int64_t now)
{
	if (rt->phase == 0) {
		if (!holder_ready(inj, f))
			return;
		rt->hook_pid[LB_MAX_NODES] = lb_hook_spawn(inj, f->hook, -1,
							   lb_hook_command(inj->cfg, f->hook, 0), now);
		if (rt->hook_pid[LB_MAX_NODES] < 0)
			rt->failed = true; /* it could not start: not fired (said) */
		else
			lb_event_emit(inj->sh, LB_EV_HOOK, -1, -1, (int64_t)(f - inj->sc->faults));
		rt->hook_deadline_ns = now + (f->duration_ms >= 0 ? f->duration_ms * LB_NS_PER_MS :
					      30 * LB_NS_PER_S);
		rt->phase = 1;
		return;
	}
	if (!lb_deploy_hooks_running(inj, rt, now))
		rt->phase = -1;
}

/* A strobing node-clock's flips up to @now, each told at the moment the shim
 * makes it (start + k * strobe, on the history's clock): offset on at even k,
 * off at odd k. */
static void tell_flips(struct lb_injector *inj, const struct lb_fault *f, struct lb_fault_rt *rt,
		       int64_t now)
{
	int64_t period = f->strobe_ms * LB_NS_PER_MS;
	int64_t end = f->duration_ms >= 0 ? rt->cut_ns + f->duration_ms * LB_NS_PER_MS : INT64_MAX;

	for (int64_t t; (t = rt->cut_ns + (rt->flips + 1) * period) <= now && t < end;) {
		rt->flips++;
		for (size_t i = 0; i < inj->n_lock; i++)
			if ((f->nodes >> i) & 1u)
				lb_event_emit_at(inj->sh, LB_EV_NODE_CLOCK, -1, (int)i,
						 rt->flips % 2 ? 0 : f->offset_ms, t);
	}
	rt->next_ns = rt->cut_ns + (rt->flips + 1) * period;
	if (rt->next_ns > end)
		rt->next_ns = end;
}

/* node-clock: the nodes' clock jumps, and back after the duration (without
 * one: for good); with strobe, on and off every strobe ms meanwhile. */
static void tick_node_clock(struct lb_injector *inj, const struct lb_fault *f,
			    struct lb_fault_rt *rt, int64_t now)
{
	if (rt->phase == 0) {
		if (!holder_ready(inj, f))
			return;
		node_clock(inj, f, rt);
		rt->phase = f->duration_ms >= 0 ? 1 : -1;
		rt->next_ns = now + f->duration_ms * LB_NS_PER_MS;
		if (f->strobe_ms) {
			rt->phase = 2;
			rt->flips = 0;
			tell_flips(inj, f, rt, now);
		}
		return;
	}
	if (rt->phase == 2) { /* the flips up to now, those before the end included */
		tell_flips(inj, f, rt, now);
		if (f->duration_ms < 0 || now < rt->cut_ns + f->duration_ms * LB_NS_PER_MS)
			return;
	}
	each_node(inj, f, node_clock_reset);
	rt->phase = -1;
}

/* nodes = leader: the member leading when the fault first acts, asked once
 * (false, said, when no member says it leads: the fault is not run). */
static bool resolve_leader(struct lb_injector *inj, const struct lb_fault *f,
			   struct lb_fault_rt *rt, struct lb_fault *g)
{
	if (!rt->leader_known) {
		rt->leader_known = true;
		rt->leader = inj->leader ? inj->leader(inj->leader_arg) : LB_EINVAL;
		if (rt->leader < 0 || (size_t)rt->leader >= inj->n_lock) {
			lb_errorf("[%s] acts on the leader, and no member said it leads: the fault "
				  "is not run", f->name);
			rt->phase = -1;
			rt->failed = true;
			return false;
		}
	}
	*g = *f;
	g->nodes = 1u << rt->leader;
	return true;
}

static void tick_one(struct lb_injector *inj, const struct lb_fault *f, struct lb_fault_rt *rt,
		     int64_t now)
{
	bool fallback = f->fallback_holder &&
			!lb_strategy_has_failpoint(inj->cfg->strategy, f->failpoint);

	if (rt->phase < 0 || now < (int64_t)(f->at_s * 1e9) || (rt->phase > 0 && now < rt->next_ns))
		return;
	if (lb_action_in_client(f->action) && !fallback)
		return;
	struct lb_fault g;
	if (f->leader && !fallback) {
		if (!resolve_leader(inj, f, rt, &g))
			return;
		f = &g;
	}
	switch (fallback ? LB_ACT_KILL : f->action) {
	case LB_ACT_KILL:
		tick_kill(inj, f, rt);
		break;
	case LB_ACT_PAUSE:
		tick_pause(inj, f, rt, now);
		break;
	case LB_ACT_NODE_KILL:
	case LB_ACT_NODE_RESTART:
		tick_node_restart(inj, f, rt, now);
		break;
	case LB_ACT_NODE_PAUSE:
		tick_node_pause(inj, f, rt, now);
		break;
	case LB_ACT_NODE_CLOCK:
		tick_node_clock(inj, f, rt, now);
		break;
	case LB_ACT_FAILOVER:
		failover(inj, rt, now);
		break;
	case LB_ACT_NET_DELAY:
	case LB_ACT_NET_BLACKHOLE:
	case LB_ACT_NET_CUT:
		net_fault(inj, f, rt, now);
		break;
	case LB_ACT_NET_PARTITION:
		net_partition(inj, f, rt, now);
		break;
	case LB_ACT_SENTINEL_FAILOVER:
	case LB_ACT_CLUSTER_FAILOVER:
		if (holder_ready(inj, f)) {
			rt->failed = !(f->action == LB_ACT_SENTINEL_FAILOVER ?
				       lb_deploy_sentinel_failover(inj) :
				       lb_deploy_cluster_failover(inj));
			rt->phase = -1;
		}
		break;
	case LB_ACT_CLIENT_KILL: {
		int c = pick_client(inj, f);
		if (c >= 0 && holder_ready(inj, f)) {
			rt->failed = lb_deploy_client_kill(inj, f, c) == 0;
			rt->phase = -1;
		}
		break;
	}
	case LB_ACT_HOOK:
		tick_hook(inj, f, rt, now);
		break;
	default:
		break;
	}
}

void lb_faults_tick(struct lb_injector *inj, int64_t now_ns)
{
	if (!inj->sc)
		return;
	for (int i = 0; i < inj->sc->n_faults; i++)
		tick_one(inj, &inj->sc->faults[i], &inj->rt[i], now_ns);
}

int lb_faults_unfired(const struct lb_injector *inj, char *names, size_t len)
{
	int n = 0;
	size_t used = 0;

	if (len)
		names[0] = '\0';
	if (!inj->sc || inj->sc->chaos.on) /* drawn faults may find nobody to hit */
		return 0;
	for (int i = 0; i < inj->sc->n_faults; i++) {
		const struct lb_fault *f = &inj->sc->faults[i];
		bool fired;
		if (f->action == LB_ACT_CRASH || f->action == LB_ACT_SLEEP) {
			bool has = lb_strategy_has_failpoint(inj->cfg->strategy, f->failpoint);
			if (!has && !f->fallback_holder)
				continue; /* no such instant in this strategy: nothing to fire */
			fired = has ? atomic_load(&inj->sh->fault_fired[i]) != 0 : inj->rt[i].phase != 0;
		} else if (lb_action_in_client(f->action)) {
			fired = atomic_load(&inj->sh->fault_fired[i]) != 0;
		} else { /* on a deployment: it fired only if it took */
			fired = inj->rt[i].phase != 0 && !inj->rt[i].failed;
		}
		if (fired)
			continue;
		n++;
		if (used < len)
			used += (size_t)snprintf(names + used, len - used, "%s[%s]", used ? " " : "", f->name);
	}
	return n;
}

void lb_faults_finish(struct lb_injector *inj)
{
	if (!inj->sc)
		return;
	for (int i = 0; i < inj->sc->n_faults; i++) {
		const struct lb_fault *f = &inj->sc->faults[i];
		struct lb_fault_rt *rt = &inj->rt[i];
		if (rt->phase <= 0)
			continue;
		if (f->action == LB_ACT_PAUSE && rt->phase == 2) { /* armed: disarm, or resume */
			atomic_store(&inj->sh->client[rt->client].stop_before_write, 0);
			if (!atomic_exchange(&inj->sh->client[rt->client].stopped_before_write, 0)) {
				rt->phase = -1;
				continue;
			}
			lb_event_emit(inj->sh, LB_EV_PAUSE, rt->client, -1, f->duration_ms);
		}
		if (f->action == LB_ACT_PAUSE) {
			lb_client_signal(inj->sh, rt->client, SIGCONT);
			lb_event_emit(inj->sh, LB_EV_RESUME, rt->client, -1, 0);
		} else if (f->action == LB_ACT_NODE_PAUSE && rt->phase == 1) {
			for (size_t k = 0; k < inj->n_lock; k++)
				if ((f->nodes >> k) & 1u) {
					if (inj->theirs)
						lb_deploy_node_resume(inj, k, f, lb_now_ns() -
								      inj->sh->t0_ns);
					else
						node_resume(inj, k, f);
				}
		} else if (!inj->theirs && rt->phase == 2 && rt->pending) /* a restart under way */
			for (size_t n = 0; n < inj->n_lock; n++)
				if ((rt->pending >> n) & 1u && lb_server_poll_ready(inj->lock_srv[n]) != 0)
					node_start_failed(inj, n, "still not answering when the run ended");
		/* a hook still running when the run ends, or the resume just started:
		 * each within its deadline */
		lb_deploy_hooks_finish(inj, rt);
		rt->phase = -1;
	}
}
