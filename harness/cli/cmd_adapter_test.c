/*
 * cmd_adapter_test.c - `lockbench adapter-test STRATEGY`: the adapter
 * conformance suite (docs/adapters.md, Test your adapter first). A library
 * strategy or exec:PATH is started as a run's clients start it, on the
 * servers a run starts for it (redis-server, or the etcd or ZooKeeper
 * ensemble), and each property of the protocol is checked on real sessions:
 * one line per property, PASS, FAIL, n/a (it does not apply: a hello that
 * says lost=no) or SKIP (not run: the adapter did not start), with the
 * evidence (what was sent, what came back, how long). This file is the
 * command, the servers, the sessions and the report; the properties are in
 * cmd_adapter_props.c.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd_adapter_test.h"
#include "owned.h"
#include "commands.h"
#include "esc.h"
#include "junit.h"
#include "options.h"
#include "rserver.h"
#include "signals.h"

const char *const at_prop_name[AT_N] = {
	[AT_HELLO] = "hello", [AT_CONFIG] = "config", [AT_MUTEX] = "mutex",
	[AT_REPEAT] = "repeat", [AT_EXTEND] = "extend", [AT_RELEASE_LAPSED] = "release-lapsed",
	[AT_RELEASE_TAKEN] = "release-taken", [AT_LOST] = "lost", [AT_CUT] = "cut",
	[AT_QUIT] = "quit", [AT_DEADLINES] = "deadlines", [AT_PROTOCOL] = "protocol",
};

static const char *const verdict_name[] = { "-", "PASS", "FAIL", "n/a", "SKIP" };

static void usage(FILE *f)
{
	fprintf(f, "usage: lockbench adapter-test STRATEGY [--only PROPERTY[,PROPERTY...]] [--ttl MS]\n"
		   "                              [--lost-bound MS] [--junit FILE] [--json]\n"
		   "                              [--adapter-arg ARG]... [--keep-logs DIR]\n\n"
		   "The adapter conformance suite: STRATEGY (a library adapter, `lockbench list`, or\n"
		   "exec:PATH, a program of yours) is started as a run starts it, on the servers a\n"
		   "run starts for it (redis-server, or the etcd or ZooKeeper ensemble), and each\n"
		   "property below is checked on real sessions. One line per property: PASS, FAIL,\n"
		   "n/a (it does not apply: lost=no in the hello) or SKIP (not run: the adapter did\n"
		   "not start), with the evidence: what was sent, what came back, how long.\n"
		   "  hello           'hello 3' answered by a strict hello (its version, its fields)\n"
		   "  config          a config it accepts: 'ok'\n"
		   "  mutex           two sessions: the second's acquire is busy while the first\n"
		   "                  holds, and acquired once it released\n"
		   "  repeat          one session, 8 sections in a row: acquired, then released\n"
		   "  extend          'extend MS' answered extended (and the lock still held past\n"
		   "                  the TTL), or unsupported when the hello says extend=no\n"
		   "  release-lapsed  released after its TTL ran out (the adapter paused with\n"
		   "                  SIGSTOP until the server ended the lease): not-owned or released\n"
		   "  release-taken   the same after another session took the lock: not-owned (or\n"
		   "                  released, when the other still holds it)\n"
		   "  lost            a lost notice within --lost-bound of the server ending the lease\n"
		   "                  (Redis: the key watcher's expired; etcd: the lock key gone;\n"
		   "                  ZooKeeper: the ephemeral node gone); the lag is shown; n/a\n"
		   "                  when the hello says lost=no\n"
		   "  cut             the connection cut (lockbench's relay) after the server granted\n"
		   "                  and before the answer came back: no wrong 'acquired'\n"
		   "  quit            every session's 'quit' answered 'bye', and its process exited\n"
		   "  deadlines       every request answered within its deadline (docs/adapters.md)\n"
		   "  protocol        every line strict; an exit, a closed output or half a line is\n"
		   "                  a protocol error, never a quiet end\n"
		   "A null adapter (no lock) gets n/a for the lock's properties.\n"
		   "  --only P,...      run these properties (hello and config always run)\n"
		   "  --ttl MS          the lease the sessions ask for (1000; etcd's is whole seconds,\n"
		   "                    at least 2 s, ZooKeeper's session at least 1 s)\n"
		   "  --lost-bound MS   the longest a lost notice may lag the server (1000)\n"
		   "  --junit FILE      the result as JUnit XML, a test case a property\n"
		   "  --json            the result as JSON on standard output (the lines on stderr)\n"
		   "  --adapter-arg ARG an argument for the program (repeatable)\n"
		   "  --keep-logs DIR   keep each session's stderr there (adapter-cN.log); else\n"
		   "                    they go with the servers\n\n"
		   "Exit status: 0 every property passed (or does not apply), 1 one failed or was\n"
		   "skipped, 2 usage, 3 the adapter or its servers cannot run here (its --check, a\n"
		   "server that does not start), 130 or 143 interrupted (stopped within a second,\n"
		   "nothing left running).\n");
}

/* ---- the trace: every line to and from an adapter ---- */

void at_note(struct at *t, const char *fmt, ...)
{
	size_t have = strlen(t->trace);
	va_list ap;

	if (t->quiet || have >= sizeof(t->trace) - 8)
		return;
	va_start(ap, fmt);
	vsnprintf(t->trace + have, sizeof(t->trace) - have, fmt, ap);
	va_end(ap);
	if (strlen(t->trace) >= sizeof(t->trace) - 8)
		strcpy(t->trace + sizeof(t->trace) - 8, " ...");
}

static struct at_sess *sess_of(struct at *t, const void *state)
{
	for (int i = 0; i < AT_MAX_SESS; i++)
		if (t->sess[i].lock == state && state)
			return &t->sess[i];
	return t->creating;
}

static struct at_req *req_of(struct at *t, const char *line)
{
	for (size_t i = 0; i < sizeof(t->req) / sizeof(t->req[0]); i++) {
		size_t n = strlen(t->req[i].word);
		if (!strncmp(line, t->req[i].word, n) && (!line[n] || line[n] == ' '))
			return &t->req[i];
	}
	return NULL;
}

static void trace(void *arg, const void *state, bool sent, const char *line, int64_t t_ns)
{
	struct at *t = arg;
	struct at_sess *c = sess_of(t, state);
	char shown[100];

	if (!c)
		return;
	lb_proto_printable(line, shown, sizeof(shown));
	if (sent) {
		if (!strcmp(line, "go"))
			return;
		snprintf(c->asked, sizeof(c->asked), "%.47s", line);
		c->asked_ns = t_ns;
		return;
	}
	t->lines++;
	if (!strncmp(line, "lost", 4) && (!line[4] || line[4] == ' ')) {
		if (!c->lost_ns) {
			c->lost_ns = t_ns;
			snprintf(c->lost_text, sizeof(c->lost_text), "%s", shown);
		}
		at_note(t, "c%d <- '%s' (a notice); ", c->id, shown);
		return;
	}
	if (!strncmp(line, "extended ttl_ms=", 16) || !strncmp(line, "at ", 3) || !c->asked[0]) {
		at_note(t, "c%d <- '%s'; ", c->id, shown);
		return;
	}
	int64_t ms = (t_ns - c->asked_ns) / LB_NS_PER_MS;
	if (!strncmp(c->asked, "hello ", 6) && !t->hello_line[0]) {
		char why[200];
		snprintf(t->hello_line, sizeof(t->hello_line), "%s", shown);
		t->hello_ok = lb_proto_parse(line, LB_REQ_HELLO, 0, false, &t->hello, why,
					     sizeof(why)) == 0;
	}
	if (!strncmp(c->asked, "config ", 7) && !t->config_line[0])
		snprintf(t->config_line, sizeof(t->config_line), "%s", shown);
	struct at_req *r = req_of(t, c->asked);
	if (r) {
		r->n++;
		if (ms > r->max_ms)
			r->max_ms = ms;
		if (!r->limit_ms || !strcmp(r->word, "acquire"))
			r->limit_ms = !strcmp(r->word, "hello") || !strcmp(r->word, "config") ? 15000 :
				      !strcmp(r->word, "quit") ? LB_ADAPTER_QUIT_MS :
				      state ? lb_adapter_limit_ms(state) : 0;
	}
	if (strncmp(c->asked, "config ", 7))
		at_note(t, "c%d '%s' -> '%s' %lld ms; ", c->id, c->asked, shown, (long long)ms);
	else
		at_note(t, "c%d 'config ... ttl_ms=%lld ...' -> '%s' %lld ms; ", c->id,
			(long long)c->cfg.ttl_ms, shown, (long long)ms);
	c->asked[0] = '\0';
}

/* ---- sessions ---- */

struct at_sess *at_open(struct at *t, int key, bool relayed)
{
	struct at_sess *c = NULL;
	cpu_set_t cpus;

	for (int i = 0; i < AT_MAX_SESS && !c; i++)
		if (!t->sess[i].lock)
			c = &t->sess[i];
	if (!c || lb_stop_requested())
		return NULL;
	memset(c, 0, sizeof(*c));
	c->id = t->n_made++;
	snprintf(c->key, sizeof(c->key), "%slock:%d", t->prefix, key);
	snprintf(c->log, sizeof(c->log), "%s/adapter-%s-c%d.log", t->logdir, at_prop_name[t->cur],
		 c->id);
	for (int i = 0; i < t->n_nodes; i++) {
		int port = relayed ? atomic_load(&t->shm->ctl[i].port) : t->srv[i]->port;
		lb_node_init_local(&c->node[i], port, 2000);
		if (t->cons)
			snprintf(c->node[i].scheme, sizeof(c->node[i].scheme), "%s",
				 t->cons == LB_CONSENSUS_ETCD ? "http" : "zk");
		c->nodes[i] = &c->node[i];
	}
	c->cfg = (struct lb_lock_cfg){ .nodes = c->nodes, .n_nodes = (size_t)t->n_nodes,
				       .key = c->key, .ttl_ms = t->ttl_ms, .client = c->id,
				       .impl = t->s->impl, .timeout_ms = 2000, .cancel = &t->cancel,
				       .log_path = c->log };
	/* a client pins itself to a CPU before it starts its adapter (adapter.c):
	 * here the suite is the client, and keeps the CPUs it had */
	bool pinned = sched_getaffinity(0, sizeof(cpus), &cpus) == 0;
	bool quiet = t->quiet;
	t->quiet |= t->cur != AT_HELLO; /* its hello and config: the hello's line shows them */
	t->creating = c;
	c->lock = t->s->create(&c->cfg);
	t->creating = NULL;
	t->quiet = quiet;
	if (pinned)
		sched_setaffinity(0, sizeof(cpus), &cpus);
	t->started |= c->lock != NULL;
	return c->lock ? c : NULL;
}

void at_close(struct at *t, struct at_sess *c)
{
	struct lb_proto_msg m;
	int64_t exit_ms = -1;
	int status = -1;

	if (!c || !c->lock)
		return;
	if (lb_stop_requested()) { /* Ctrl-C: no goodbyes, nothing left */
		pid_t pid = lb_adapter_pid(c->lock);
		if (pid > 0)
			kill(-pid, SIGKILL); /* its group (lb_adapter_own_groups) */
	} else {
		pid_t pid = lb_adapter_pid(c->lock);
		if (pid > 0)
			kill(-pid, SIGCONT); /* a pause a property left is over */
		int64_t t0 = lb_now_ns();
		int rc = lb_adapter_quit(c->lock, &m, &exit_ms, &status);
		int64_t bye_ms = (lb_now_ns() - t0) / LB_NS_PER_MS - (exit_ms > 0 ? exit_ms : 0);
		t->quits++;
		if (rc < 0 || exit_ms < 0) {
			t->quit_fail++;
			if (!t->quit_bad[0])
				snprintf(t->quit_bad, sizeof(t->quit_bad), rc < 0 ? "c%d: 'quit' not "
					 "answered 'bye'" : "c%d: said 'bye' and did not exit within "
					 "%d ms (killed)", c->id, LB_ADAPTER_QUIT_MS);
		} else {
			t->bye_max_ms = bye_ms > t->bye_max_ms ? bye_ms : t->bye_max_ms;
			t->exit_max_ms = exit_ms > t->exit_max_ms ? exit_ms : t->exit_max_ms;
		}
	}
	t->s->destroy(c->lock);
	c->lock = NULL;
}

int at_ask(struct at *t, struct at_sess *c, const char *req, struct lb_proto_msg *m)
{
	static const struct { const char *word; enum lb_proto_req q; } reqs[] = {
		{ "acquire", LB_REQ_ACQUIRE }, { "release", LB_REQ_RELEASE },
		{ "extend", LB_REQ_EXTEND }, { "quit", LB_REQ_QUIT },
	};
	enum lb_proto_req q = LB_REQ_NONE;

	(void)t;
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++)
		if (!strncmp(req, reqs[i].word, strlen(reqs[i].word)))
			q = reqs[i].q;
	if (!c || !c->lock || lb_adapter_ask(c->lock, req, q, m) < 0)
		return -1;
	return (int)m->kind;
}

bool at_nap(struct at *t, int64_t ms)
{
	int64_t until = lb_now_ns() + ms * LB_NS_PER_MS;

	(void)t;
	while (lb_now_ns() < until) {
		if (lb_stop_requested())
			return false;
		int64_t left = until - lb_now_ns();
		lb_sleep_ns(left < 10 * LB_NS_PER_MS ? left : 10 * LB_NS_PER_MS);
	}
	return !lb_stop_requested();
}

/* ---- what the servers did ---- */

/* etcd: how many keys begin with the lock's key (its Mutex's keys, KEY/LEASE);
 * ZooKeeper: how many ephemeral nodes the ensemble holds (the lock's node is
 * one). -1 when it cannot be read. */
static int64_t consensus_count(struct at *t, int key)
{
	char out[2048], k[96], end[96], b64k[160], b64e[160], body[400];
	int64_t v = 0;

	if (t->cons == LB_CONSENSUS_ZOOKEEPER) {
		if (lb_consensus_4lw(t->srv[0]->port, "mntr", out, sizeof(out), 500) < 0)
			return -1;
		const char *at = strstr(out, "zk_ephemerals_count\t");
		if (!at)
			return -1;
		at += strlen("zk_ephemerals_count\t");
		char num[24];
		size_t n = strcspn(at, "\r\n");
		snprintf(num, sizeof(num), "%.*s", (int)(n < 23 ? n : 23), at);
		return lb_parse_i64(num, 0, INT32_MAX, &v) ? v : -1;
	}
	snprintf(k, sizeof(k), "%slock:%d", t->prefix, key);
	snprintf(end, sizeof(end), "%s", k);
	end[strlen(end) - 1]++; /* the prefix's range: [KEY, KEY with its last byte + 1) */
	if (!lb_base64(k, strlen(k), b64k, sizeof(b64k)) ||
	    !lb_base64(end, strlen(end), b64e, sizeof(b64e)))
		return -1;
	snprintf(body, sizeof(body), "{\"key\":\"%s\",\"range_end\":\"%s\",\"count_only\":true}", b64k,
		 b64e);
	if (lb_consensus_http(t->srv[0]->port, "/v3/kv/range", body, out, sizeof(out), 500) != 200)
		return -1;
	char num[24];
	if (!lb_json_field(out, "count", num, sizeof(num)))
		return 0; /* the gateway leaves a zero out */
	return lb_parse_i64(num, 0, INT32_MAX, &v) ? v : -1;
}

int64_t at_server_mark(struct at *t, int key)
{
	struct lb_key_event e;
	size_t i = 0;

	if (t->cons)
		return consensus_count(t, key);
	while (lb_keywatch_peek(&t->kw, i, &e) != 0)
		i++;
	return (int64_t)i;
}

/* Redis: the key watcher's events of @key since event @mark: a grant is a
 * set (or an expire: a Lua script's PEXPIRE on its own structure) on a
 * majority of the nodes, an end an expired or del on a majority. */
static int64_t redis_wait(struct at *t, int key, bool grant, int64_t mark, int64_t deadline_ns)
{
	struct lb_key_event e;
	size_t i = (size_t)mark;
	unsigned seen = 0;
	int quorum = t->n_nodes / 2 + 1, n = 0;

	while (lb_now_ns() < deadline_ns && !lb_stop_requested()) {
		int got = lb_keywatch_peek(&t->kw, i, &e);
		if (got == 0) {
			lb_sleep_ns(LB_NS_PER_MS);
			continue;
		}
		i++;
		if (got < 0 || e.key != key || e.node >= 32 || (seen & (1u << e.node)))
			continue;
		bool is = grant ? e.kind == LB_KEY_SET || e.kind == LB_KEY_EXPIRE
				: e.kind == LB_KEY_EXPIRED || e.kind == LB_KEY_DEL;
		if (is) {
			seen |= 1u << e.node;
			if (++n >= quorum)
				return e.t_ns;
		}
	}
	return 0;
}

int64_t at_server_wait(struct at *t, int key, bool grant, int64_t mark, int64_t deadline_ns)
{
	if (!t->cons) {
		if (!t->kw_ok)
			return -1;
		return redis_wait(t, key, grant, mark, deadline_ns);
	}
	if (mark < 0) {
		snprintf(t->kw_why, sizeof(t->kw_why), "the %s ensemble could not be read",
			 lb_consensus_name(t->cons));
		return -1;
	}
	while (lb_now_ns() < deadline_ns && !lb_stop_requested()) {
		int64_t n = consensus_count(t, key);
		int64_t now = lb_now_ns();
		if (n >= 0 && (grant ? n > mark : n < mark))
			return now;
		lb_sleep_ns(5 * LB_NS_PER_MS);
	}
	return 0;
}

/* ---- servers ---- */

static int start_relay(struct at *t)
{
	struct lb_relay_link links[LB_MAX_NODES];

	t->shm = mmap(NULL, sizeof(*t->shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t->shm == MAP_FAILED) {
		t->shm = NULL;
		return LB_ESYS;
	}
	memset(t->shm, 0, sizeof(*t->shm));
	for (int i = 0; i < t->n_nodes; i++)
		links[i] = (struct lb_relay_link){ .ctl = &t->shm->ctl[i], .upstream = t->srv[i]->port };
	pid_t pid = lb_relay_start(links, (size_t)t->n_nodes, &t->shm->epoch);
	if (pid < 0)
		return (int)pid;
	t->relay = pid;
	return 0;
}

static int start_servers(struct at *t)
{
	if (t->cons) {
		if (lb_consensus_start(&t->ens, t->cons, 60000) < 0)
			return LB_ESYS;
		for (int i = 0; i < LB_CONSENSUS_MEMBERS; i++)
			t->srv[i] = t->ens.member[i];
		t->n_nodes = LB_CONSENSUS_MEMBERS;
	} else {
		struct lb_keywatch_server ws[LB_MAX_NODES];
		for (int i = 0; i < t->n_nodes; i++) {
			if (!(t->srv[i] = lb_server_start(NULL)))
				return LB_ESYS;
			ws[i] = (struct lb_keywatch_server){ t->srv[i]->port, 0, i, false };
		}
		t->kw_ok = lb_keywatch_start_run(&t->kw, ws, t->n_nodes, t->s, t->prefix, AT_N,
						 3600, t->kw_why, sizeof(t->kw_why)) == 0;
	}
	bool cut = !t->only || (t->only & (1u << AT_CUT));
	return cut && !t->null_adapter ? start_relay(t) : 0;
}

static void stop_servers(struct at *t)
{
	if (t->relay > 0) {
		kill(t->relay, SIGKILL);
		waitpid(t->relay, NULL, 0);
		t->relay = 0;
	}
	if (t->shm)
		munmap(t->shm, sizeof(*t->shm));
	t->shm = NULL;
	lb_keywatch_stop(&t->kw);
	if (t->cons) {
		if (t->ens.member[0])
			lb_consensus_destroy(&t->ens);
	} else {
		for (int i = 0; i < t->n_nodes; i++)
			if (t->srv[i])
				lb_server_destroy(t->srv[i]);
	}
	memset(t->srv, 0, sizeof(t->srv));
}

/* Ctrl-C reaches a blocked request through the cancel flag (adapter.c). */
static void *watch_stop(void *arg)
{
	struct at *t = arg;

	while (!atomic_load(&t->cancel)) {
		if (lb_stop_requested())
			atomic_store(&t->cancel, 1);
		lb_sleep_ns(5 * LB_NS_PER_MS);
	}
	return NULL;
}

/* ---- the report ---- */

static bool shown(const struct at *t, int p)
{
	return t->verdict[p] != AT_NOT_RUN;
}

static void print_lines(const struct at *t, FILE *f)
{
	lb_esc_fprintf(f, LB_LANG_TERM, "adapter-test %s%s%s\n", t->s->name,
		       t->hello_line[0] ? ": " : "", t->hello_line);
	for (int p = 0; p < AT_N; p++)
		if (shown(t, p))
			lb_esc_fprintf(f, LB_LANG_TERM, "%-4s  %-15s %s\n", verdict_name[t->verdict[p]],
				       at_prop_name[p], t->evidence[p]);
	fflush(f);
}

static void print_json(const struct at *t, bool ok)
{
	lb_esc_fprintf(stdout, LB_LANG_RAW, "{\"strategy\": ");
	lb_esc_fprintf(stdout, LB_LANG_JSON, "%s", t->s->name);
	lb_esc_fprintf(stdout, LB_LANG_RAW, ", \"hello\": ");
	lb_esc_fprintf(stdout, LB_LANG_JSON, "%s", t->hello_line);
	printf(", \"passed\": %s, \"properties\": [", ok ? "true" : "false");
	const char *sep = "";
	for (int p = 0; p < AT_N; p++) {
		if (!shown(t, p))
			continue;
		printf("%s\n  {\"property\": \"%s\", \"result\": \"%s\", \"seconds\": %.3f, \"evidence\": ",
		       sep, at_prop_name[p], verdict_name[t->verdict[p]], t->seconds[p]);
		lb_esc_fprintf(stdout, LB_LANG_JSON, "%s", t->evidence[p]);
		printf("}");
		sep = ",";
	}
	printf("\n]}\n");
	fflush(stdout);
}

static int write_junit(const struct at *t, const char *path)
{
	struct lb_junit j;

	if (lb_junit_open(&j, path, "lockbench adapter-test") < 0)
		return LB_ESYS;
	for (int p = 0; p < AT_N; p++) {
		if (!shown(t, p))
			continue;
		enum lb_junit_outcome o = t->verdict[p] == AT_PASS ? LB_JUNIT_PASS :
					  t->verdict[p] == AT_FAIL ? LB_JUNIT_FAIL : LB_JUNIT_SKIPPED;
		lb_junit_case(&j, t->s->name, at_prop_name[p], t->seconds[p], o,
			      t->verdict[p] == AT_PASS ? NULL : verdict_name[t->verdict[p]],
			      t->evidence[p]);
	}
	return lb_junit_close(&j);
}

/* ---- the command ---- */

struct at_opts {
	const char *junit, *keep;
	bool json;
	const char *args[LB_ADAPTER_MAX_ARGS];
	int n_args;
};

static int parse_only(struct at *t, const char *v)
{
	char buf[400];
	snprintf(buf, sizeof(buf), "%s", v);
	for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		int p = 0;
		while (p < AT_N && strcmp(at_prop_name[p], w))
			p++;
		if (p == AT_N) {
			lb_errorf("--only '%s': no property '%s' (expected some of hello, config, mutex, "
				  "repeat, extend, release-lapsed, release-taken, lost, cut, quit, "
				  "deadlines, protocol)", v, w);
			return LB_EINVAL;
		}
		t->only |= 1u << p;
	}
	return t->only ? 0 : LB_EINVAL;
}

static int parse_ms(const char *opt, const char *v, int64_t min, int64_t *out)
{
	if (!lb_parse_i64(v, min, 600000, out)) {
		lb_errorf("%s '%s': expected whole milliseconds, %lld to 600000", opt, v, (long long)min);
		return LB_EINVAL;
	}
	return 0;
}

static int parse(int argc, char **argv, struct at *t, struct at_opts *o)
{
	static const struct option opts[] = {
		{ "only", required_argument, NULL, 'o' },      { "ttl", required_argument, NULL, 't' },
		{ "lost-bound", required_argument, NULL, 'b' }, { "junit", required_argument, NULL, 'j' },
		{ "json", no_argument, NULL, 'J' },             { "adapter-arg", required_argument, NULL, 'a' },
		{ "keep-logs", required_argument, NULL, 'k' },  { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc = 0;

	optind = 1;
	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'o': rc = parse_only(t, optarg); break;
		case 't': rc = parse_ms("--ttl", optarg, 100, &t->ttl_ms); break;
		case 'b': rc = parse_ms("--lost-bound", optarg, 1, &t->bound_ms); break;
		case 'j': o->junit = optarg; break;
		case 'J': o->json = true; break;
		case 'k': o->keep = optarg; break;
		case 'a':
			if (o->n_args == LB_ADAPTER_MAX_ARGS) {
				lb_errorf("--adapter-arg: at most %d", LB_ADAPTER_MAX_ARGS);
				return LB_EINVAL;
			}
			o->args[o->n_args++] = optarg;
			break;
		case 'h': usage(stdout); return 1;
		default:
			lb_errorf("adapter-test: unknown option '%s'", argv[optind - 1]);
			return LB_EINVAL;
		}
	}
	if (rc < 0)
		return rc;
	if (optind != argc - 1) {
		usage(stderr);
		return LB_EINVAL;
	}
	if (!(t->s = lb_strategy_or_usage(argv[optind])))
		return LB_EINVAL;
	if (!lb_strategy_is_external(t->s)) {
		lb_errorf("%s is one of lockbench's own recipes, not an adapter: adapter-test takes a "
			  "library adapter (lockbench list, LIBRARIES) or exec:PATH", t->s->name);
		return LB_EINVAL;
	}
	return 0;
}

/* Where the sessions' stderr goes: --keep-logs DIR, or a directory of its
 * own that goes at the end. */
static int make_logdir(struct at *t, const char *keep)
{
	if (keep) {
		if (lb_owned_claim("--keep-logs", keep) < 0) /* a new or empty directory */
			return LB_EINVAL;
		snprintf(t->logdir, sizeof(t->logdir), "%s", keep);
		t->keep_logs = true;
		return 0;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(t->logdir, sizeof(t->logdir), "%s/lockbench-adapter-test-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (lb_owned_mkdtemp(t->logdir) < 0) {
		lb_errorf("cannot make a directory for the adapter's logs in %s: %s",
			  tmp && *tmp ? tmp : "/tmp", strerror(errno));
		return LB_ESYS;
	}
	return 0;
}

/* Each property asked, in order; hello and config always (nothing runs
 * without them). */
static void run_suite(struct at *t)
{
	lb_adapter_trace(trace, t);
	lb_adapter_own_groups(true);
	for (int p = 0; p < AT_N && !lb_stop_requested(); p++) {
		if (t->only && !(t->only & (1u << p)) && p != AT_HELLO && p != AT_CONFIG)
			continue;
		if (p == AT_CONFIG && t->verdict[AT_CONFIG] != AT_NOT_RUN)
			continue; /* judged with the hello */
		int64_t t0 = lb_now_ns();
		t->cur = (enum at_prop)p;
		t->n_made = 0; /* c0, c1, ... in each property's evidence */
		at_run_prop(t, (enum at_prop)p);
		t->seconds[p] = (double)(lb_now_ns() - t0) / 1e9;
	}
	for (int i = 0; i < AT_MAX_SESS; i++)
		at_close(t, &t->sess[i]);
	lb_adapter_trace(NULL, NULL);
}

static int finish(struct at *t, const struct at_opts *o)
{
	bool ok = true;

	for (int p = 0; p < AT_N; p++)
		ok &= t->verdict[p] != AT_FAIL && t->verdict[p] != AT_SKIP;
	print_lines(t, o->json ? stderr : stdout);
	if (o->json)
		print_json(t, ok);
	if (o->junit && write_junit(t, o->junit) < 0)
		return LB_EXIT_FAIL;
	return ok ? LB_EXIT_OK : LB_EXIT_FAIL;
}

int lb_cmd_adapter_test(int argc, char **argv)
{
	static struct at t; /* large: the evidence of every property */
	struct at_opts o = { 0 };
	char why[600];
	pthread_t stopper;

	memset(&t, 0, sizeof(t));
	t.ttl_ms = 1000;
	t.bound_ms = 1000;
	int rc = parse(argc, argv, &t, &o);
	if (rc)
		return rc > 0 ? LB_EXIT_OK : LB_EXIT_USAGE;
	lb_adapter_set_exec_args(o.args, o.n_args);
	if (!lb_adapter_usable(t.s, why, sizeof(why))) {
		lb_errorf("%s cannot run here: %s", t.s->name, why);
		return LB_EXIT_SKIPPED;
	}
	t.def = lb_adapter_def_of(t.s);
	t.null_adapter = lb_adapter_is_null(t.s);
	const char *topo = lb_strategy_topology(t.s);
	if (topo && *topo && lb_consensus_parse(topo, &t.cons) < 0)
		t.cons = LB_CONSENSUS_NONE;
	t.n_nodes = t.s->min_nodes > 0 ? (int)t.s->min_nodes : 1;
	t.lease_ms = t.cons ? lb_consensus_lease_ms(t.cons, t.ttl_ms) : t.ttl_ms;
	snprintf(t.prefix, sizeof(t.prefix), "lbat:%d:", (int)getpid());
	t.req[0].word = "hello", t.req[1].word = "config", t.req[2].word = "acquire";
	t.req[3].word = "release", t.req[4].word = "extend", t.req[5].word = "quit";
	if ((rc = make_logdir(&t, o.keep)) < 0)
		return rc == LB_EINVAL ? LB_EXIT_USAGE : LB_EXIT_SKIPPED;
	if (start_servers(&t) < 0) {
		stop_servers(&t);
		if (!t.keep_logs)
			lb_owned_rmtree(t.logdir);
		lb_errorf("%s: its servers could not start here (said above)", t.s->name);
		return LB_EXIT_SKIPPED;
	}
	bool stopper_on = pthread_create(&stopper, NULL, watch_stop, &t) == 0;
	run_suite(&t);
	if (stopper_on) {
		atomic_store(&t.cancel, 2);
		pthread_join(stopper, NULL);
	}
	stop_servers(&t);
	if (!t.keep_logs)
		lb_owned_rmtree(t.logdir);
	if (lb_stop_requested())
		return LB_EXIT_FAIL; /* main.c makes it 128 + the signal */
	return finish(&t, &o);
}
