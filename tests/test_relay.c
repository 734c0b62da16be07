/*
 * test_relay.c - the TCP relay of network faults, against a real redis-server:
 * it passes, delays, black-holes and cuts as its control word says.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <limits.h>
#include <stdlib.h>

#include "fixture.h"
#include "shared.h"

static struct fx f;
static struct lb_shared *sh;
static pid_t relay;
static struct lb_node n;

/* Two links: link[0][0] to server 0 (fixed), link[0][1] to server 1
 * (followed through node_port[1]). */
static void setup(void)
{
	fx_deadline(30);
	fx_start(&f, 2);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(sh, MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	atomic_store(&sh->node_port[1], f.srv[1]->port);
	struct lb_relay_link l[2] = {
		{ .ctl = &sh->link[0][0], .upstream = f.srv[0]->port },
		{ .ctl = &sh->link[0][1], .follow = &sh->node_port[1] },
	};
	relay = lb_relay_start(l, 2, &sh->relay_epoch);
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

TestSuite(relay, .init = setup, .fini = teardown);

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

/* net-lose-reply: the named request reaches the server and is applied; its
 * reply is lost, the connection reset at once (then = reset) or left mute
 * until the client's own timeout (then = hang); the requests before and
 * after it are answered. */
static void lose_next(bool hang)
{
	atomic_store(&sh->link[0][0].lose_hang, hang);
	atomic_store(&sh->link[0][0].lose_at, atomic_load(&sh->link[0][0].requests) + 1);
}

static void lost_reply_applied(bool hang)
{
	cr_assert_geq(ping_ms(), 0);
	lose_next(hang);
	uint64_t unanswered = n.unanswered;
	int64_t t0 = lb_now_ns();
	redisReply *r = lb_node_cmd(&n, "SET lost-reply mine NX PX 5000");
	int64_t ms = (lb_now_ns() - t0) / LB_NS_PER_MS;
	cr_assert(r == NULL, "the lost reply was delivered");
	cr_assert_eq(n.unanswered, unanswered + 1, "a command sent with no reply is not counted");
	if (hang)
		cr_assert_geq(ms, 450, "then = hang answered in %lld ms, before the 500 ms timeout",
			      (long long)ms);
	else
		cr_assert_lt(ms, 400, "then = reset waited %lld ms for a timeout", (long long)ms);
	cr_assert_eq(atomic_load(&sh->link[0][0].lost), 1);
	cr_assert_eq(atomic_load(&sh->link[0][0].lose_at), 0, "the relay kept its aim");
	r = fx_cmd(&f, 0, "GET lost-reply");
	cr_assert(lb_reply_str_eq(r, "mine"), "the server did not apply the request");
	freeReplyObject(r);
	cr_assert_geq(ping_ms(), 0, "the next request was not answered");
	cr_assert_eq(atomic_load(&sh->link[0][0].lost), 1, "a second reply was lost");
}

Test(relay, lose_reply_reset_after_the_server_applied_it) { lost_reply_applied(false); }
Test(relay, lose_reply_hang_until_the_client_gives_up) { lost_reply_applied(true); }

/* Held bytes are kept, in order, and delivered when the link passes again. */
Test(relay, hold_keeps_bytes_until_the_link_passes)
{
	cr_assert_geq(ping_ms(), 0);
	uint64_t e = atomic_load(&sh->relay_epoch);
	atomic_store(&sh->link[0][0].mode, LB_LINK_HOLD);
	while (!lb_relay_settled(&sh->relay_epoch, e))
		lb_sleep_ns(LB_NS_PER_MS);
	/* two writes in a pipeline, which must land in order */
	redisAppendCommand(n.ctx, "SET held 1");
	redisAppendCommand(n.ctx, "APPEND held 2");
	int done = 0;
	while (!done)
		cr_assert_eq(redisBufferWrite(n.ctx, &done), REDIS_OK);
	lb_sleep_ns(300 * LB_NS_PER_MS);
	redisReply *r = fx_cmd(&f, 0, "EXISTS held");
	long long v = -1;
	cr_assert(lb_reply_int(r, &v) && v == 0, "a held write reached the server");
	freeReplyObject(r);
	atomic_store(&sh->link[0][0].mode, LB_LINK_PASS);
	void *rep = NULL;
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(redisGetReply(n.ctx, &rep), REDIS_OK, "no reply after the hold");
		freeReplyObject(rep);
	}
	r = fx_cmd(&f, 0, "GET held");
	cr_assert(lb_reply_str_eq(r, "12"), "held bytes lost or reordered");
	freeReplyObject(r);
}

/* A reply delay holds server-to-client bytes only. */
Test(relay, reply_delay_slows_the_answers)
{
	cr_assert_geq(ping_ms(), 0);
	atomic_store(&sh->link[0][0].reply_delay_ms, 300);
	int64_t ms = ping_ms();
	cr_assert_geq(ms, 290, "a 300 ms reply delay took %lld ms", (long long)ms);
	atomic_store(&sh->link[0][0].reply_delay_ms, 0);
	cr_assert_lt(ping_ms(), 100);
}

/* One stalled peer must not stall another link: the relay never blocks on a
 * full socket. A client floods a paused server (its buffers fill); a PING on
 * the other link is answered meanwhile. */
Test(relay, a_stalled_peer_does_not_stall_other_links)
{
	struct lb_node other;
	lb_node_init_local(&other, atomic_load(&sh->link[0][1].port), 1000);
	redisReply *r = lb_node_cmd(&other, "PING");
	cr_assert(r && r->type == REDIS_REPLY_STATUS, "link 1 does not pass");
	freeReplyObject(r);
	cr_assert_eq(lb_server_pause(f.srv[0]), 0);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)atomic_load(&sh->link[0][0].port)),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	connect(fd, (struct sockaddr *)&a, sizeof(a));
	lb_sleep_ns(50 * LB_NS_PER_MS);
	static char big[1 << 16];
	memset(big, 'x', sizeof(big));
	size_t sent = 0;
	int64_t until = lb_now_ns() + 500 * LB_NS_PER_MS;
	while (lb_now_ns() < until) { /* fill the relay's side to the paused server */
		ssize_t w = send(fd, big, sizeof(big), MSG_NOSIGNAL);
		if (w > 0)
			sent += (size_t)w;
		else
			lb_sleep_ns(LB_NS_PER_MS);
	}
	cr_assert_gt(sent, (size_t)1 << 20, "could not push enough bytes to stall a peer");
	int64_t t0 = lb_now_ns();
	r = lb_node_cmd(&other, "PING");
	int64_t ms = (lb_now_ns() - t0) / LB_NS_PER_MS;
	cr_assert(r && r->type == REDIS_REPLY_STATUS, "link 1 stalled behind a paused server");
	cr_assert_lt(ms, 200, "link 1 answered after %lld ms", (long long)ms);
	freeReplyObject(r);
	close(fd);
	lb_node_close(&other);
	lb_server_resume(f.srv[0]);
}

/* A link many parties share: each connection obeys its party's control
 * word, told apart by the loopback address it comes from (relay.h). */
Test(relay, parties_are_told_apart_by_their_address)
{
	/* in the shared mapping: the relay is another process */
	struct lb_link_ctl *front = &sh->mesh_front[0], *per = &sh->mesh[0][0];
	struct lb_relay_link l = { .ctl = front, .upstream = f.srv[1]->port, .party_ctl = per,
				   .party_stride = LB_TOPO_PARTS, .n_parties = 2 };
	uint64_t e = atomic_load(&sh->relay_epoch);
	pid_t p = lb_relay_start(&l, 1, &sh->relay_epoch);
	cr_assert_gt(p, 0);
	struct lb_node a, b, anyone;
	lb_node_init_local(&a, atomic_load(&front->port), 300);
	lb_node_init_local(&b, atomic_load(&front->port), 300);
	lb_node_init_local(&anyone, atomic_load(&front->port), 300);
	lb_party_addr(0, a.source, sizeof(a.source));
	lb_party_addr(1, b.source, sizeof(b.source));
	cr_assert_str_eq(a.source, "127.1.0.1");
	cr_assert_eq(lb_party_of(0x7f010002u), 1);
	cr_assert_eq(lb_party_of(0x7f000001u), -1, "127.0.0.1 is nobody's");
	atomic_store(&sh->mesh[0][0].mode, LB_LINK_HOLD);
	while (!lb_relay_settled(&sh->relay_epoch, e))
		lb_sleep_ns(LB_NS_PER_MS);
	redisReply *r = lb_node_cmd(&a, "PING");
	cr_assert_null(r, "party 0's link is held, yet its PING was answered");
	r = lb_node_cmd(&b, "PING");
	cr_assert(r && r->type == REDIS_REPLY_STATUS, "party 1 was held with party 0");
	freeReplyObject(r);
	r = lb_node_cmd(&anyone, "PING");
	cr_assert(r && r->type == REDIS_REPLY_STATUS, "an unknown address obeys the link's own word");
	freeReplyObject(r);
	atomic_store(&sh->mesh[0][0].mode, LB_LINK_PASS);
	r = lb_node_cmd(&a, "PING");
	cr_assert(r && r->type == REDIS_REPLY_STATUS, "party 0 still held after the link passed");
	freeReplyObject(r);
	lb_node_close(&a);
	lb_node_close(&b);
	lb_node_close(&anyone);
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

/* The relay counts the commands a client sends (--count-commands): RESP
 * arrays whose bulk strings may hold "*", CRLF or anything, cut anywhere
 * between reads, and inline commands. Every split of the stream counts the
 * same; a command is counted in the piece where it begins. */
Test(relay, counts_commands_however_the_stream_is_cut, .init = NULL, .fini = NULL)
{
	static const char stream[] = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$7\r\n*2\r\n$1\r\n\r\n"
				     "PING\r\n"
				     "*1\r\n$4\r\nPING\r\n"
				     "*5\r\n$7\r\nEVALSHA\r\n$40\r\n0123456789012345678901234567890123456789"
				     "\r\n$1\r\n1\r\n$1\r\nk\r\n$0\r\n\r\n";
	size_t len = sizeof(stream) - 1;

	for (size_t cut = 0; cut <= len; cut++) {
		struct lb_resp_parse p = { 0 };
		uint64_t got = lb_resp_count(&p, stream, cut);
		got += lb_resp_count(&p, stream + cut, len - cut);
		cr_assert_eq(got, 4, "cut at %zu: %llu commands", cut, (unsigned long long)got);
	}
	struct lb_resp_parse p = { 0 };
	uint64_t bytewise = 0;
	for (size_t i = 0; i < len; i++)
		bytewise += lb_resp_count(&p, stream + i, 1);
	cr_assert_eq(bytewise, 4);
	/* a hostile length is bounded: the count stays finite and nothing reads past */
	struct lb_resp_parse h = { 0 };
	cr_assert_eq(lb_resp_count(&h, "*99999999999999999999\r\n$99999999999999999\r\nab", 46), 1);
}

/* A lost reply end to end: lockbench's own clients through the relay to a
 * real redis-server, the scenarios of docs/pitfalls/lost-reply-*.md cut to
 * 2.5 s. The acquire Redis applied and whose reply was reset is recorded
 * indeterminate, and the lock stays with nobody who knows it for its TTL;
 * the release is recorded indeterminate and nothing overlaps. */
static void lost_reply_run(const char *strategy, const char *of, char *dir, size_t len)
{
	char tmpl[] = "/tmp/lb-lost-reply-XXXXXX", scen[PATH_MAX];

	cr_assert_not_null(fx_mkdtemp(tmpl));
	snprintf(dir, len, "%s/r", tmpl);
	snprintf(scen, sizeof(scen), "%s/scenarios/lost-reply-%s.ini", fx_root(), of);
	const char *args[] = { "run", "--strategy", strategy, "--scenario", scen, "--duration", "2.5",
			       "--seed", "7", "--no-status", "--no-report", "--out", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpl, args), 0, "%s", fx_slurp(tmpl, "output"));
	char want[64];
	snprintf(want, sizeof(want), "reply-lost,0,0,%d", !strcmp(of, "release"));
	cr_assert_not_null(strstr(fx_slurp(dir, "events.csv"), want), "%s: no %s event", strategy,
			   want);
	cr_assert_str_eq(fx_summary(dir, "indeterminate_ops"), "1", "%s", strategy);
	cr_assert_str_eq(fx_summary(dir, "overlaps"), "0", "%s", strategy);
}

static void lost_acquire(const char *strategy)
{
	char dir[PATH_MAX];

	fx_deadline(60);
	lost_reply_run(strategy, "acquire", dir, sizeof(dir));
	cr_assert_not_null(strstr(fx_slurp(dir, "attempts.csv"), ",indeterminate\n"), "%s",
			   strategy);
	/* nobody entered for the TTL (1 s) the orphaned lock held: a waiter's
	 * call began before it and ended after */
	double max_us = atof(fx_summary(dir, "acquire_max_us"));
	cr_assert_geq(max_us, 800000, "%s: the longest acquire took %.0f us; the lock was free",
		      strategy, max_us);
	cr_assert_str_eq(fx_summary(dir, "observed"), "unavailable", "%s", strategy);
}

static void lost_release(const char *strategy)
{
	char dir[PATH_MAX];

	fx_deadline(60);
	lost_reply_run(strategy, "release", dir, sizeof(dir));
	cr_assert_not_null(strstr(fx_slurp(dir, "history.csv"), ",indeterminate,"), "%s", strategy);
	cr_assert_str_eq(fx_summary(dir, "observed"), "safe", "%s", strategy);
}

Test(lost_reply, acquire_set_nx_px) { lost_acquire("set-nx-px"); }
Test(lost_reply, acquire_token_lua) { lost_acquire("token-lua"); }
Test(lost_reply, release_set_nx_px) { lost_release("set-nx-px"); }
Test(lost_reply, release_token_lua) { lost_release("token-lua"); }

/* A Go library through the relay: the scenario of lost-reply-OF.ini on
 * bsm-redislock@0.9.4, cut to 2.5 s, into @dir; the time of its reply-lost
 * event (client 0, node 0). */
static long long go_lost_reply_run(const char *of, char *dir, size_t len)
{
	char tmpl[] = "/tmp/lb-lost-reply-XXXXXX", scen[PATH_MAX], want[64];

	cr_assert_not_null(fx_mkdtemp(tmpl));
	snprintf(dir, len, "%s/r", tmpl);
	snprintf(scen, sizeof(scen), "%s/scenarios/lost-reply-%s.ini", fx_root(), of);
	const char *args[] = { "run", "--strategy", "bsm-redislock@0.9.4", "--scenario", scen,
			       "--duration", "2.5", "--seed", "7", "--no-status", "--no-report",
			       "--out", dir, NULL };
	cr_assert_eq(fx_lockbench(tmpl, args), 0, "%s", fx_slurp(tmpl, "output"));
	snprintf(want, sizeof(want), ",reply-lost,0,0,%d\n", !strcmp(of, "release"));
	const char *ev = fx_slurp(dir, "events.csv"), *at = strstr(ev, want);
	cr_assert_not_null(at, "no reply-lost event: %s", ev);
	while (at > ev && at[-1] != '\n')
		at--;
	cr_assert_str_eq(fx_summary(dir, "overlaps"), "0");
	return atoll(at);
}

/* bsm-redislock's go-redis v9 client retries a command whose connection was
 * reset (MaxRetries 1 in the adapter; shouldRetry in go-redis's error.go),
 * and its acquire script takes the lock again where the key holds its own
 * token: the retried acquire is granted, client 0 enters and nothing is
 * indeterminate (as the matrix measured, docs/pitfalls/lost-reply-acquire.md). */
Test(lost_reply, acquire_bsm_redislock_is_granted_by_its_retry)
{
	char dir[PATH_MAX];

	fx_deadline(60);
	long long t = go_lost_reply_run("acquire", dir, sizeof(dir));
	/* the attempt the event closed (stamped as the call returned) was granted */
	const char *a = fx_slurp(dir, "attempts.csv");
	bool found = false;
	for (const char *l = strchr(a, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		long long start, end;
		char result[32];
		if (sscanf(l + 1, "0,%lld,%lld,%31[a-z]", &start, &end, result) == 3 &&
		    start <= t && end <= t && t - end < 50000000) {
			cr_assert_str_eq(result, "acquired", "%s", a);
			found = true;
		}
	}
	cr_assert(found, "no attempt of client 0 ended at %lld: %s", t, a);
	cr_assert_str_eq(fx_summary(dir, "indeterminate_ops"), "0");
	cr_assert_str_eq(fx_summary(dir, "observed"), "safe");
}

/* Its release, retried the same way, finds the key its first request
 * deleted and says ErrLockNotHeld (not-owned). That answer came from the
 * retry, so it tells nothing of what the first request did: the release is
 * indeterminate, and the del it made no foreign release (it was read as
 * one, by nobody: foreign-release in 5 of 5 runs). */
Test(lost_reply, release_bsm_redislock_answered_by_its_retry_is_indeterminate)
{
	char dir[PATH_MAX];

	fx_deadline(60);
	(void)go_lost_reply_run("release", dir, sizeof(dir));
	cr_assert_not_null(strstr(fx_slurp(dir, "history.csv"), ",indeterminate,"), "%s",
			   fx_slurp(dir, "history.csv"));
	cr_assert_str_eq(fx_summary(dir, "indeterminate_ops"), "1");
	cr_assert_str_eq(fx_summary(dir, "foreign_releases"), "0");
	cr_assert_str_eq(fx_summary(dir, "observed"), "safe");
}
