/*
 * cmd_adapter_props.c - the properties `lockbench adapter-test` checks
 * (cmd_adapter_test.c runs them): each on fresh sessions of the adapter, on
 * a lock key of its own, judged on the answers and on what the servers did,
 * never on what the adapter says of itself alone. docs/adapters.md says what
 * each means.
 */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd_adapter_test.h"
#include "signals.h"

#define REPEAT_SECTIONS 8

/* The property's verdict: @why, then the trace of its lines, then what was
 * said of the adapter meanwhile (a protocol error) when it failed. */
static void judge(struct at *t, enum at_prop p, enum at_verdict v, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void judge(struct at *t, enum at_prop p, enum at_verdict v, const char *fmt, ...)
{
	char why[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	size_t n = strlen(t->trace);
	if (n >= 2 && t->trace[n - 2] == ';')
		t->trace[n - 2] = '\0';
	snprintf(t->evidence[p], sizeof(t->evidence[p]), "%s%s%s%s%s", why,
		 t->trace[0] ? " | " : "", t->trace, v == AT_FAIL && t->err[0] ? " | said: " : "",
		 v == AT_FAIL ? t->err : "");
	t->verdict[p] = v;
}

static const char *kind_name(int k)
{
	static const char *const names[] = {
		[LB_MSG_HELLO] = "hello", [LB_MSG_OK] = "ok", [LB_MSG_ERROR] = "error",
		[LB_MSG_ACQUIRED] = "acquired", [LB_MSG_BUSY] = "busy", [LB_MSG_RELEASED] = "released",
		[LB_MSG_NOT_OWNED] = "not-owned", [LB_MSG_EXTENDED] = "extended",
		[LB_MSG_UNSUPPORTED] = "unsupported", [LB_MSG_BYE] = "bye", [LB_MSG_LOST] = "lost",
		[LB_MSG_LEASE] = "extended ttl_ms", [LB_MSG_AT] = "at",
	};
	return k < 0 ? "a protocol error" : k < (int)(sizeof(names) / sizeof(names[0])) ? names[k] : "?";
}

static void pause_sess(struct at_sess *c, bool stop)
{
	pid_t pid = c && c->lock ? lb_adapter_pid(c->lock) : 0;
	if (pid > 0) /* its process group: the adapter and whatever it started */
		kill(-pid, stop ? SIGSTOP : SIGCONT);
}

/* ---- hello, config ---- */

static void prop_hello(struct at *t)
{
	struct at_sess *c = at_open(t, AT_HELLO, false);

	if (!t->hello_ok) {
		judge(t, AT_HELLO, AT_FAIL, "no strict hello to 'hello %d'", LB_ADAPTER_PROTOCOL);
		judge(t, AT_CONFIG, AT_SKIP, "not run: no hello");
	} else {
		const struct lb_proto_msg *h = &t->hello;
		char older[96] = "";
		if (h->version < LB_ADAPTER_PROTOCOL)
			snprintf(older, sizeof(older), " (an older version, accepted; this lockbench "
				 "speaks %d)", LB_ADAPTER_PROTOCOL);
		judge(t, AT_HELLO, AT_PASS, "version %d%s, extend=%s lost=%s", h->version, older,
		      h->can_extend ? "yes" : "no", h->can_lost ? "yes" : "no");
		if (c)
			judge(t, AT_CONFIG, AT_PASS, "'%s' to a config of %d node%s, ttl_ms=%lld",
			      t->config_line, t->n_nodes, t->n_nodes > 1 ? "s" : "",
			      (long long)t->ttl_ms);
		else
			judge(t, AT_CONFIG, AT_FAIL, "its configuration was not accepted");
	}
	at_close(t, c);
}

/* ---- mutual exclusion, sections in a row ---- */

/* @c asks @req and must get @want: false (judged FAIL, with @what) if not. */
static bool expect(struct at *t, enum at_prop p, struct at_sess *c, const char *req, int want,
		   const char *what)
{
	struct lb_proto_msg m;
	int k = at_ask(t, c, req, &m);

	if (k == want)
		return true;
	if (lb_stop_requested())
		return false;
	judge(t, p, AT_FAIL, "c%d '%s' %s: '%s'%s%s, where '%s' was due", c ? c->id : -1, req, what,
	      kind_name(k), k == LB_MSG_ERROR ? " " : "", k == LB_MSG_ERROR ? m.text : "",
	      kind_name(want));
	return false;
}

/* @c's acquire until it is granted (a busy while the lock passes on), by
 * @ms: the answer's kind. */
static int acquire_within(struct at *t, struct at_sess *c, int64_t ms)
{
	int64_t until = lb_now_ns() + ms * LB_NS_PER_MS;
	struct lb_proto_msg m;
	int k;

	while ((k = at_ask(t, c, "acquire", &m)) == LB_MSG_BUSY && lb_now_ns() < until)
		if (!at_nap(t, 100))
			break;
	return k;
}

static void prop_mutex(struct at *t)
{
	struct at_sess *a = at_open(t, AT_MUTEX, false), *b = at_open(t, AT_MUTEX, false);

	if (!a || !b) {
		judge(t, AT_MUTEX, AT_FAIL, "a session did not start");
	} else if (expect(t, AT_MUTEX, a, "acquire", LB_MSG_ACQUIRED, "on a free lock") &&
		   expect(t, AT_MUTEX, b, "acquire", LB_MSG_BUSY, "while c0 held the lock") &&
		   expect(t, AT_MUTEX, a, "release", LB_MSG_RELEASED, "of the lock it held")) {
		int k = acquire_within(t, b, 1000);
		if (k != LB_MSG_ACQUIRED)
			judge(t, AT_MUTEX, AT_FAIL, "c1's acquire after c0 released: '%s' (for 1000 ms), "
			      "where 'acquired' was due", kind_name(k));
		else if (expect(t, AT_MUTEX, a, "acquire", LB_MSG_BUSY, "while c1 held the lock") &&
			 expect(t, AT_MUTEX, b, "release", LB_MSG_RELEASED, "of the lock it held"))
			judge(t, AT_MUTEX, AT_PASS, "the second session was busy while the first held "
			      "the lock, both ways, and acquired it once it was released");
	}
	at_close(t, a);
	at_close(t, b);
}

static void prop_repeat(struct at *t)
{
	struct at_sess *a = at_open(t, AT_REPEAT, false);
	int i = 0;

	if (!a) {
		judge(t, AT_REPEAT, AT_FAIL, "the session did not start");
		return;
	}
	for (; i < REPEAT_SECTIONS; i++) {
		char what[48];
		snprintf(what, sizeof(what), "(section %d of %d)", i + 1, REPEAT_SECTIONS);
		if (!expect(t, AT_REPEAT, a, "acquire", LB_MSG_ACQUIRED, what) ||
		    !expect(t, AT_REPEAT, a, "release", LB_MSG_RELEASED, what))
			break;
		if (i == 0) { /* the first section's lines say enough */
			at_note(t, "... ");
			t->quiet = true;
		}
	}
	t->quiet = false;
	if (i == REPEAT_SECTIONS)
		judge(t, AT_REPEAT, AT_PASS, "%d sections in a row in one session, each acquired "
		      "and released", REPEAT_SECTIONS);
	at_close(t, a);
}

/* ---- extend ---- */

static void prop_extend(struct at *t)
{
	struct at_sess *a = at_open(t, AT_EXTEND, false), *b = at_open(t, AT_EXTEND, false);
	char req[40];

	if (!a || !b) {
		judge(t, AT_EXTEND, AT_FAIL, "a session did not start");
	} else if (!t->hello.can_extend) {
		snprintf(req, sizeof(req), "extend %lld", (long long)t->ttl_ms);
		if (expect(t, AT_EXTEND, a, "acquire", LB_MSG_ACQUIRED, "on a free lock") &&
		    expect(t, AT_EXTEND, a, req, LB_MSG_UNSUPPORTED, "(its hello says extend=no)"))
			judge(t, AT_EXTEND, AT_PASS, "'unsupported', as its hello says extend=no");
	} else {
		snprintf(req, sizeof(req), "extend %lld", (long long)(3 * t->lease_ms));
		if (expect(t, AT_EXTEND, a, "acquire", LB_MSG_ACQUIRED, "on a free lock") &&
		    expect(t, AT_EXTEND, a, req, LB_MSG_EXTENDED, "of the lock it holds") &&
		    at_nap(t, t->lease_ms + t->lease_ms / 2) &&
		    expect(t, AT_EXTEND, b, "acquire", LB_MSG_BUSY, "1.5 TTL after c0's extension") &&
		    expect(t, AT_EXTEND, a, "release", LB_MSG_RELEASED, "of the extended lock"))
			judge(t, AT_EXTEND, AT_PASS, "'extended', and the lock was still held %lld ms "
			      "after (past the TTL of %lld ms): c1 busy", (long long)(t->lease_ms * 3 / 2),
			      (long long)t->lease_ms);
	}
	at_close(t, a);
	at_close(t, b);
}

/* ---- a release of a lock no longer held ---- */

/* Pause @a's process (SIGSTOP) until the server ended its lease of @key:
 * 1 ended (when, in *end_ns), 0 not within the lease and 5 s (judged n/a), -1
 * stopped. The process is resumed before it returns. */
static int pause_past_lease(struct at *t, enum at_prop p, struct at_sess *a, int key,
			    int64_t *end_ns)
{
	int64_t mark = at_server_mark(t, key), t0 = lb_now_ns();

	pause_sess(a, true);
	int64_t end = at_server_wait(t, key, false, mark,
				     t0 + (t->lease_ms + 5000) * LB_NS_PER_MS);
	if (end < 0) /* the server's side cannot be seen: past the lease, by the clock */
		end = at_nap(t, t->lease_ms + 1000) ? lb_now_ns() : 0;
	pause_sess(a, false);
	if (lb_stop_requested())
		return -1;
	if (!end) {
		judge(t, p, AT_NA, "the server did not end c%d's lease within %lld ms of pausing it "
		      "(the TTL asked was %lld ms): nothing to test", a->id,
		      (long long)(t->lease_ms + 5000), (long long)t->ttl_ms);
		return 0;
	}
	at_note(t, "c%d paused (SIGSTOP) until the server ended its lease, %lld ms; ", a->id,
		(long long)((end - t0) / LB_NS_PER_MS));
	*end_ns = end;
	return 1;
}

static void prop_release_lapsed(struct at *t)
{
	struct at_sess *a = at_open(t, AT_RELEASE_LAPSED, false);
	struct lb_proto_msg m;
	int64_t end;

	if (!a) {
		judge(t, AT_RELEASE_LAPSED, AT_FAIL, "the session did not start");
	} else if (expect(t, AT_RELEASE_LAPSED, a, "acquire", LB_MSG_ACQUIRED, "on a free lock") &&
		   pause_past_lease(t, AT_RELEASE_LAPSED, a, AT_RELEASE_LAPSED, &end) == 1) {
		int k = at_ask(t, a, "release", &m);
		if (k == LB_MSG_NOT_OWNED || k == LB_MSG_RELEASED)
			judge(t, AT_RELEASE_LAPSED, AT_PASS, "'%s' to a release after the lease ended",
			      kind_name(k));
		else
			judge(t, AT_RELEASE_LAPSED, AT_FAIL, "'%s%s%s' to a release after the lease "
			      "ended, where 'not-owned' (or 'released') was due", kind_name(k),
			      k == LB_MSG_ERROR ? " " : "", k == LB_MSG_ERROR ? m.text : "");
	}
	at_close(t, a);
}

/* After c0's release answered 'released' while c1 held the lock: it must
 * still be c1's (a third session busy), else c0 deleted it. */
static void released_while_taken(struct at *t)
{
	struct at_sess *c = at_open(t, AT_RELEASE_TAKEN, false);
	struct lb_proto_msg m;
	int k = at_ask(t, c, "acquire", &m);

	if (k == LB_MSG_BUSY)
		judge(t, AT_RELEASE_TAKEN, AT_PASS, "'released', and c1 still held the lock (c%d busy)",
		      c->id);
	else
		judge(t, AT_RELEASE_TAKEN, AT_FAIL, "c0's release answered 'released' while c1 held "
		      "the lock, and then c%d's acquire got '%s': c0's release freed another's lock",
		      c ? c->id : -1, kind_name(k));
	at_close(t, c);
}

static void prop_release_taken(struct at *t)
{
	struct at_sess *a = at_open(t, AT_RELEASE_TAKEN, false), *b = at_open(t, AT_RELEASE_TAKEN, false);
	struct lb_proto_msg m;

	if (!a || !b) {
		judge(t, AT_RELEASE_TAKEN, AT_FAIL, "a session did not start");
	} else if (expect(t, AT_RELEASE_TAKEN, a, "acquire", LB_MSG_ACQUIRED, "on a free lock")) {
		int64_t t0 = lb_now_ns();
		t->quiet = true; /* c1's busy answers while c0 is paused */
		pause_sess(a, true);
		int k = acquire_within(t, b, t->lease_ms + 5000);
		pause_sess(a, false);
		t->quiet = false;
		at_note(t, "c0 paused (SIGSTOP); c1 acquire -> '%s' after %lld ms; c0 resumed; ",
			kind_name(k), (long long)((lb_now_ns() - t0) / LB_NS_PER_MS));
		if (lb_stop_requested()) {
			/* said by the caller */
		} else if (k != LB_MSG_ACQUIRED) {
			judge(t, AT_RELEASE_TAKEN, AT_NA, "c1 could not take the lock within %lld ms of "
			      "pausing its holder (the TTL asked was %lld ms): nothing to test",
			      (long long)(t->lease_ms + 5000), (long long)t->ttl_ms);
		} else {
			k = at_ask(t, a, "release", &m);
			if (k == LB_MSG_NOT_OWNED)
				judge(t, AT_RELEASE_TAKEN, AT_PASS, "'not-owned' to c0's release of the lock "
				      "c1 took");
			else if (k == LB_MSG_RELEASED)
				released_while_taken(t);
			else
				judge(t, AT_RELEASE_TAKEN, AT_FAIL, "'%s%s%s' to c0's release of the lock c1 "
				      "took, where 'not-owned' was due", kind_name(k),
				      k == LB_MSG_ERROR ? " " : "", k == LB_MSG_ERROR ? m.text : "");
			if (t->verdict[AT_RELEASE_TAKEN] == AT_PASS)
				expect(t, AT_RELEASE_TAKEN, b, "release", LB_MSG_RELEASED, "of the lock it "
				       "took");
		}
	}
	at_close(t, a);
	at_close(t, b);
}

/* ---- the lost notice, timed against the server ---- */

static void prop_lost(struct at *t)
{
	struct at_sess *a;
	int64_t end;

	if (!t->hello.can_lost) {
		judge(t, AT_LOST, AT_NA, "its hello says lost=no: it never tells a holder its lock "
		      "is gone");
		return;
	}
	if (!t->cons && !t->kw_ok) {
		judge(t, AT_LOST, AT_NA, "the server's end of the lease cannot be seen here: %s",
		      t->kw_why);
		return;
	}
	a = at_open(t, AT_LOST, false);
	if (!a) {
		judge(t, AT_LOST, AT_FAIL, "the session did not start");
	} else if (expect(t, AT_LOST, a, "acquire", LB_MSG_ACQUIRED, "on a free lock") &&
		   pause_past_lease(t, AT_LOST, a, AT_LOST, &end) == 1) {
		int64_t resumed = lb_now_ns(), until = end + (t->bound_ms + 5000) * LB_NS_PER_MS;
		while (!a->lost_ns && lb_now_ns() < until && at_nap(t, 1))
			t->s->held(a->lock);
		int64_t lag = !a->lost_ns ? -1 : a->lost_ns > end ? (a->lost_ns - end) / LB_NS_PER_MS : 0;
		const char *by = t->cons == LB_CONSENSUS_ETCD ? "the lock key gone from etcd" :
				 t->cons == LB_CONSENSUS_ZOOKEEPER ? "the lock's ephemeral node gone" :
				 "the key watcher's expired";
		if (lb_stop_requested())
			;
		else if (lag < 0)
			judge(t, AT_LOST, AT_FAIL, "no lost notice within %lld ms of the server ending the "
			      "lease (%s; resumed %lld ms after it)",
			      (long long)(t->bound_ms + 5000), by,
			      (long long)((resumed - end) / LB_NS_PER_MS));
		else
			judge(t, AT_LOST, lag <= t->bound_ms ? AT_PASS : AT_FAIL, "lag %lld ms: 'lost' "
			      "came %lld ms after the server ended the lease (%s), bound %lld ms; the "
			      "process resumed %lld ms after the end", (long long)lag, (long long)lag, by,
			      (long long)t->bound_ms, (long long)((resumed - end) / LB_NS_PER_MS));
	}
	at_close(t, a);
}

/* ---- a connection cut between the grant and its answer ---- */

struct cutter {
	struct at *t;
	int64_t mark, deadline_ns;
	int64_t cut_ns;            /* when the links were cut, or 0 */
};

static void set_links(struct at *t, int mode, int reply_delay_ms)
{
	uint64_t since = atomic_load(&t->shm->epoch);
	for (int i = 0; i < t->n_nodes; i++) {
		atomic_store(&t->shm->ctl[i].reply_delay_ms, reply_delay_ms);
		atomic_store(&t->shm->ctl[i].mode, mode);
	}
	for (int i = 0; i < 1000 && !lb_relay_settled(&t->shm->epoch, since); i++)
		lb_sleep_ns(LB_NS_PER_MS);
}

/* Beside the acquire: once the server granted it (its answer held back in
 * the relay), cut every link, and let them pass again 300 ms later. */
static void *cut_at_grant(void *arg)
{
	struct cutter *k = arg;
	int64_t when = at_server_wait(k->t, AT_CUT, true, k->mark, k->deadline_ns);

	if (when > 0) {
		k->cut_ns = lb_now_ns();
		set_links(k->t, LB_LINK_CUT, 0);
		lb_sleep_ns(300 * LB_NS_PER_MS);
	}
	set_links(k->t, LB_LINK_PASS, 0);
	return NULL;
}

/* c0 answered 'acquired' after the cut: it must hold the lock (c1 busy),
 * unless it said lost meanwhile. */
static void acquired_after_cut(struct at *t, struct at_sess *a, int64_t ms)
{
	struct at_sess *b = at_open(t, AT_CUT, false);
	struct lb_proto_msg m;
	int k = at_ask(t, b, "acquire", &m);

	t->s->held(a->lock);
	if (k == LB_MSG_BUSY)
		judge(t, AT_CUT, AT_PASS, "'acquired' %lld ms after the cut, and c0 does hold the lock "
		      "(c%d busy)", (long long)ms, b->id);
	else if (k == LB_MSG_ACQUIRED && a->lost_ns)
		judge(t, AT_CUT, AT_PASS, "'acquired' %lld ms after the cut, then 'lost' before c%d "
		      "took the lock", (long long)ms, b->id);
	else
		judge(t, AT_CUT, AT_FAIL, "a wrong 'acquired' %lld ms after the cut: c%d's acquire "
		      "then got '%s', and c0 was never told it lost the lock", (long long)ms,
		      b ? b->id : -1, kind_name(k));
	at_close(t, b);
}

/* How long every answer from the servers is held back in the relay while
 * the acquire runs, so that the cut comes before the grant's answer: 1500
 * ms, but for ZooKeeper an eighth of the session, below the client's own
 * liveness check. A ZooKeeper client pings when its connection has been idle
 * for a third of the session less a jitter (kazoo: as little as a sixth) and
 * drops the connection when that ping is not answered by the next such
 * interval: answers held back 1500 ms end a 1 s session's connection before
 * its acquire reaches the server, and nothing is granted to cut. */
static int cut_hold_ms(const struct at *t)
{
	if (t->cons == LB_CONSENSUS_ZOOKEEPER && t->lease_ms / 8 < 1500)
		return (int)(t->lease_ms / 8);
	return 1500;
}

static void cut_acquire(struct at *t, struct at_sess *a)
{
	struct cutter k = { .t = t };
	struct lb_proto_msg m;
	pthread_t th;

	set_links(t, LB_LINK_PASS, cut_hold_ms(t)); /* the grant's answer held back: the cut comes first */
	k.mark = at_server_mark(t, AT_CUT);
	k.deadline_ns = lb_now_ns() + lb_adapter_limit_ms(a->lock) * LB_NS_PER_MS;
	if (pthread_create(&th, NULL, cut_at_grant, &k) != 0) {
		set_links(t, LB_LINK_PASS, 0);
		judge(t, AT_CUT, AT_NA, "no thread to cut the links with");
		return;
	}
	int kind = at_ask(t, a, "acquire", &m);
	int64_t answered = lb_now_ns();
	pthread_join(th, NULL);
	int64_t ms = k.cut_ns ? (answered - k.cut_ns) / LB_NS_PER_MS : 0;
	if (k.cut_ns)
		at_note(t, "(the links were cut when the server granted, %lld ms before the answer); ",
			(long long)ms);
	if (lb_stop_requested())
		return;
	if (kind < 0)
		judge(t, AT_CUT, AT_FAIL, "no answer to the acquire whose connection was cut");
	else if (!k.cut_ns)
		judge(t, AT_CUT, AT_NA, "the server did not grant c0's acquire (it answered '%s'): "
		      "nothing was cut", kind_name(kind));
	else if (kind == LB_MSG_ACQUIRED)
		acquired_after_cut(t, a, ms);
	else
		judge(t, AT_CUT, AT_PASS, "'%s%s%s' %lld ms after the cut: no wrong 'acquired'",
		      kind_name(kind), kind == LB_MSG_ERROR ? " " : "", kind == LB_MSG_ERROR ? m.text : "",
		      (long long)ms);
}

static void prop_cut(struct at *t)
{
	struct at_sess *a;

	if (!t->relay) {
		judge(t, AT_CUT, AT_NA, "lockbench's relay did not start");
		return;
	}
	a = at_open(t, AT_CUT, true);
	if (!a)
		judge(t, AT_CUT, AT_FAIL, "the session did not start (through the relay)");
	else if (expect(t, AT_CUT, a, "acquire", LB_MSG_ACQUIRED, "through the relay, nothing cut") &&
		 expect(t, AT_CUT, a, "release", LB_MSG_RELEASED, "through the relay, nothing cut"))
		cut_acquire(t, a);
	at_close(t, a);
}

/* ---- over the whole suite ---- */

static void prop_quit(struct at *t)
{
	if (t->quit_fail)
		judge(t, AT_QUIT, AT_FAIL, "%d of %d sessions did not quit cleanly; first: %s",
		      t->quit_fail, t->quits, t->quit_bad);
	else
		judge(t, AT_QUIT, AT_PASS, "%d sessions: each answered 'quit' with 'bye' (at most %lld "
		      "ms) and exited (at most %lld ms after)", t->quits, (long long)t->bye_max_ms,
		      (long long)t->exit_max_ms);
}

static void prop_deadlines(struct at *t)
{
	char each[600] = "";
	size_t n = 0;
	bool late = t->late_err[0] != '\0';

	for (size_t i = 0; i < sizeof(t->req) / sizeof(t->req[0]); i++) {
		const struct at_req *r = &t->req[i];
		if (!r->n)
			continue;
		late |= r->limit_ms > 0 && r->max_ms > r->limit_ms;
		n += (size_t)snprintf(each + n, sizeof(each) - n, "%s%s x%d at most %lld ms (deadline "
				      "%lld ms)", n ? ", " : "", r->word, r->n, (long long)r->max_ms,
				      (long long)r->limit_ms);
		if (n >= sizeof(each))
			break;
	}
	if (late)
		snprintf(t->err, sizeof(t->err), "%s", t->late_err);
	judge(t, AT_DEADLINES, late ? AT_FAIL : AT_PASS, "%s", each[0] ? each : "no request answered");
}

static void prop_protocol(struct at *t)
{
	snprintf(t->err, sizeof(t->err), "%s", t->first_err);
	if (t->first_err[0])
		judge(t, AT_PROTOCOL, AT_FAIL, "the adapter broke the protocol (read %d lines)",
		      t->lines);
	else
		judge(t, AT_PROTOCOL, AT_PASS, "%d lines read, every one strict; no exit, closed output "
		      "or half line", t->lines);
}

static bool lock_prop(enum at_prop p)
{
	return p >= AT_MUTEX && p <= AT_CUT;
}

void at_run_prop(struct at *t, enum at_prop p)
{
	static void (*const run[AT_N])(struct at *) = {
		[AT_HELLO] = prop_hello, [AT_MUTEX] = prop_mutex, [AT_REPEAT] = prop_repeat,
		[AT_EXTEND] = prop_extend, [AT_RELEASE_LAPSED] = prop_release_lapsed,
		[AT_RELEASE_TAKEN] = prop_release_taken, [AT_LOST] = prop_lost, [AT_CUT] = prop_cut,
		[AT_QUIT] = prop_quit, [AT_DEADLINES] = prop_deadlines, [AT_PROTOCOL] = prop_protocol,
	};

	t->trace[0] = '\0';
	t->err[0] = '\0';
	if (p != AT_HELLO && p < AT_QUIT && !t->started) {
		judge(t, p, AT_SKIP, "not run: the adapter did not start (hello, config)");
		return;
	}
	if (t->null_adapter && lock_prop(p) && p != AT_REPEAT) {
		judge(t, p, AT_NA, "a null adapter: no lock (it grants every acquire)");
		return;
	}
	lb_errorf_capture(t->err, sizeof(t->err));
	if (run[p])
		run[p](t);
	lb_errorf_capture(NULL, 0);
	if (t->err[0] && !t->first_err[0])
		snprintf(t->first_err, sizeof(t->first_err), "%.399s", t->err);
	const char *late = strstr(t->err, "no answer to '");
	if (late && !t->late_err[0])
		snprintf(t->late_err, sizeof(t->late_err), "%.299s", late);
	if (lb_stop_requested() && t->verdict[p] == AT_NOT_RUN)
		judge(t, p, AT_SKIP, "interrupted");
	else if (t->verdict[p] == AT_NOT_RUN) /* a step failed without a verdict of its own */
		judge(t, p, AT_FAIL, "the property could not be completed");
}
