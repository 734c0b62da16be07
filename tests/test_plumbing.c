/* test_plumbing.c - the shared Redis helpers, against a real server. */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

FX_SUITE(plumbing, 30);

static int parse(const char *url, struct lb_node *n, char *why)
{
	return lb_node_parse_url(url, n, why, 256);
}

Test(plumbing, parse_urls)
{
	struct lb_node n;
	char why[256], back[1200];

	cr_assert_eq(parse("redis://127.0.0.1:7000", &n, why), 0);
	cr_assert_str_eq(n.host, "127.0.0.1");
	cr_assert_eq(n.port, 7000);
	cr_assert_eq(n.db, 0);
	cr_assert_eq(parse("redis://alice:s3cret@db.example:6380/5", &n, why), 0);
	cr_assert_str_eq(n.user, "alice");
	cr_assert_str_eq(n.pass, "s3cret");
	cr_assert_str_eq(n.host, "db.example");
	cr_assert_eq(n.port, 6380);
	cr_assert_eq(n.db, 5);
	lb_node_url(&n, back, sizeof(back));
	cr_assert_str_eq(back, "redis://alice:s3cret@db.example:6380/5");
	/* a password with '@', ':' and a space, %XX-encoded, and back */
	cr_assert_eq(parse("redis://:p%40ss%3Aw%20rd@h:1", &n, why), 0, "%s", why);
	cr_assert_str_eq(n.user, "");
	cr_assert_str_eq(n.pass, "p@ss:w rd");
	lb_node_url(&n, back, sizeof(back));
	cr_assert_str_eq(back, "redis://:p%40ss%3Aw%20rd@h:1");
	cr_assert_eq(parse("redis://u:p@ss@h:2", &n, why), 0, "the last '@' ends the password");
	cr_assert_str_eq(n.pass, "p@ss");
	cr_assert_eq(parse("localhost:1", &n, why), 0);
	cr_assert_eq(parse("redis://host", &n, why), 0, "the port is 6379 when not given");
	cr_assert_eq(n.port, 6379);
	cr_assert_eq(parse("redis://[::1]:7001/", &n, why), 0, "%s", why);
	cr_assert_str_eq(n.host, "::1");
	cr_assert_eq(n.port, 7001);
	lb_node_url(&n, back, sizeof(back));
	cr_assert_str_eq(back, "redis://[::1]:7001");
	/* rediss://: TLS, through lockbench's tunnel; a library is given it back */
	cr_assert_eq(parse("rediss://u:p@host:6380", &n, why), 0, "%s", why);
	cr_assert(n.tls);
	lb_node_url(&n, back, sizeof(back));
	cr_assert_str_eq(back, "rediss://u:p@host:6380");
	static const struct {
		const char *url, *says;
	} bad[] = {
		{ "redis://host:0", "port" },
		{ "redis://host:99999", "port" },
		{ "redis://host:12x", "port" },
		{ "redis://:7000", "host is empty" },
		{ "http://host:6379", "unknown scheme" },
		{ "unix:///tmp/redis.sock", "unix" },
		{ "redis://alice@host:1", "needs a password" },
		{ "redis://alice:@host:1", "password is empty" },
		{ "redis://u:%zz@host:1", "%XX" },
		{ "redis://u:%00@host:1", "control" },
		{ "redis://host:1/x", "database number" },
		{ "redis://host:1/99999999999", "database number" },
		{ "redis://host:1?ssl=true", "not supported" },
		{ "redis://::1:7000", "brackets" },
		{ "redis://[::1:7000", "']'" },
		{ "redis://ho st:1", "character" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(parse(bad[i].url, &n, why), LB_EINVAL, "%s", bad[i].url);
		cr_assert(strstr(why, bad[i].says), "%s: %s", bad[i].url, why);
	}
}

Test(plumbing, tokens_random_and_hex)
{
	char t1[LB_TOKEN_HEX + 1], t2[LB_TOKEN_HEX + 1];

	cr_assert_eq(lb_token_new(t1), 0);
	cr_assert_eq(lb_token_new(t2), 0);
	cr_assert_eq(strlen(t1), 32);
	cr_assert_eq(strspn(t1, "0123456789abcdef"), 32);
	cr_assert_str_neq(t1, t2);
}

Test(plumbing, script_sha_matches_server)
{
	struct fx f;

	const struct lb_script *scripts[] = {
		&lb_script_cad, &lb_script_cad_notify, &lb_script_claim, &lb_script_fence_acquire,
		&lb_script_cas_pexpire, &lb_script_fenced_read, &lb_script_fenced_write,
		&lb_script_counted_write,
	};

	fx_start(&f, 1);
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
		redisReply *r = fx_cmd(&f, 0, "SCRIPT LOAD %s", scripts[i]->src);
		cr_assert(r && r->type == REDIS_REPLY_STRING, "script %zu: %s", i, r ? r->str : "no reply");
		cr_assert_str_eq(r->str, scripts[i]->sha, "script %zu: update its sha to %s", i, r->str);
		freeReplyObject(r);
	}
	fx_stop(&f);
}

Test(plumbing, eval_falls_back_after_script_flush)
{
	struct fx f;
	struct lb_node n;

	fx_start(&f, 1);
	lb_node_init_local(&n, f.srv[0]->port, 1000);
	redisReply *r = fx_cmd(&f, 0, "SCRIPT FLUSH");
	freeReplyObject(r);
	r = fx_cmd(&f, 0, "SET k tok");
	freeReplyObject(r);
	cr_assert_eq(lb_cad_release(&n, "k", "other"), LB_ELOST);
	cr_assert_eq(lb_cad_release(&n, "k", "tok"), 0, "EVALSHA after a flush must fall back");
	cr_assert_eq(lb_cad_release(&n, "k", "tok"), LB_ELOST);
	lb_node_close(&n);
	fx_stop(&f);
}

Test(plumbing, set_nx_and_getdel_outcomes)
{
	struct fx f;
	struct lb_node n;

	fx_start(&f, 1);
	lb_node_init_local(&n, f.srv[0]->port, 1000);
	cr_assert_eq(lb_set_nx_px(&n, "k", "a", 10000), 0);
	cr_assert_eq(lb_set_nx_px(&n, "k", "b", 10000), LB_EBUSY);
	cr_assert_eq(lb_setnx(&n, "k", "b"), LB_EBUSY);
	cr_assert_eq(lb_getdel_release(&n, "k", "b"), LB_EFOREIGN);
	cr_assert_eq(lb_getdel_release(&n, "k", "b"), LB_ELOST);
	cr_assert_eq(lb_setnx(&n, "k", "b"), 0);
	cr_assert_eq(lb_getdel_release(&n, "k", "b"), 0);
	lb_node_close(&n);
	fx_stop(&f);
}

Test(plumbing, dead_node_reports_error_and_reconnects)
{
	struct fx f;
	struct lb_node n;

	fx_start(&f, 1);
	lb_node_init_local(&n, f.srv[0]->port, 200);
	cr_assert_eq(lb_set_nx_px(&n, "k", "a", 10000), 0);
	lb_server_kill(f.srv[0]);
	cr_assert_eq(lb_set_nx_px(&n, "k", "a", 10000), LB_EREDIS);
	cr_assert_null(n.ctx, "a dead context must not be reused");
	cr_assert_eq(lb_server_respawn(f.srv[0]), 0);
	cr_assert_eq(lb_set_nx_px(&n, "k", "a", 10000), 0, "no reconnect after the restart");
	lb_node_close(&n);
	fx_stop(&f);
}

/* A command that could not be sent (no connection) had no effect; one that
 * was sent without a reply may have: the node says which, and why. A write
 * never sent is a failure, not an uncertain write. */
Test(plumbing, a_node_says_whether_a_failed_command_was_sent)
{
	struct fx f;
	struct lb_node n;

	fx_start(&f, 1);
	lb_node_init_local(&n, f.srv[0]->port, 200);
	redisReply *r = lb_node_cmd(&n, "PING");
	cr_assert_not_null(r);
	freeReplyObject(r);
	cr_assert_eq(n.last, LB_SENT_REPLIED);
	r = lb_node_cmd(&n, "NOSUCHCOMMAND");
	cr_assert(r && r->type == REDIS_REPLY_ERROR);
	freeReplyObject(r);
	cr_assert_eq(n.last, LB_SENT_REPLIED, "an error reply is a reply");
	/* paused: sent, no reply within the timeout */
	redisReply *p = fx_cmd(&f, 0, "CLIENT PAUSE 1000 ALL");
	freeReplyObject(p);
	cr_assert_null(lb_node_cmd(&n, "PING"));
	cr_assert_eq(n.last, LB_SENT_NO_REPLY);
	cr_assert(n.why[0], "no reason given");
	lb_node_close(&n);
	/* gone: never sent, and the reason is the connection's */
	lb_server_kill(f.srv[0]);
	cr_assert_null(lb_node_cmd(&n, "PING"));
	cr_assert_eq(n.last, LB_SENT_NOT);
	cr_assert(strstr(n.why, "refused"), "%s", n.why);
	cr_assert_eq(lb_counted_write(&n, "c", 1), LB_EREDIS, "a write never sent is not uncertain");
	lb_node_close(&n);
	fx_stop(&f);
}

Test(plumbing, fanout_with_nodes_down)
{
	struct fx f;
	struct lb_node node[3];
	struct lb_node *nodes[3];
	redisReply *replies[3];
	const char *argv[] = { "PING" };

	fx_start(&f, 3);
	for (int i = 0; i < 3; i++) {
		lb_node_init_local(&node[i], f.srv[i]->port, 500);
		nodes[i] = &node[i];
	}
	lb_server_kill(f.srv[1]);
	lb_server_pause(f.srv[2]);
	lb_fanout(nodes, 3, 50, NULL, 1, argv, replies);
	cr_assert(replies[0] && replies[0]->type == REDIS_REPLY_STATUS);
	cr_assert_null(replies[1], "a killed node answered");
	cr_assert_null(replies[2], "a paused node answered");
	cr_assert_null(node[2].ctx, "a timed-out context must be closed");
	freeReplyObject(replies[0]);
	lb_server_resume(f.srv[2]);
	for (int i = 0; i < 3; i++)
		lb_node_close(&node[i]);
	fx_stop(&f);
}

Test(plumbing, notify_release_reserves_the_lock_for_the_woken_waiter)
{
	struct fx f;
	struct lb_node n;

	fx_start(&f, 1);
	lb_node_init_local(&n, f.srv[0]->port, 1000);
	cr_assert_eq(lb_set_nx_px(&n, "k", "a", 10000), 0);
	cr_assert_eq(lb_cad_release_notify(&n, "k", "b", 10000), LB_ELOST, "not b's lock");
	cr_assert_eq(lb_cad_release_notify(&n, "k", "a", 10000), 0);
	/* the releaser comes straight back: reserved, it must queue */
	cr_assert_eq(lb_set_nx_px(&n, "k", "a2", 10000), LB_EBUSY, "the releaser barged in");
	/* the waiter the signal wakes claims it */
	cr_assert_eq(lb_notify_wait(&n, "k", 1000), 0, "no signal was pushed");
	cr_assert_eq(lb_claim(&n, "k", "w", 10000), 0);
	cr_assert_eq(lb_claim(&n, "k", "x", 10000), LB_EBUSY, "a claim stole a held lock");
	cr_assert_eq(lb_notify_wait(&n, "k", 50), LB_ETIMEOUT, "one release, one signal");
	cr_assert_eq(lb_cad_release(&n, "k", "w"), 0);
	lb_node_close(&n);
	fx_stop(&f);
}

/* The protected resource's fence check: a lower fence is refused, an equal
 * or higher one accepted, and a read registers its fence. */
Test(plumbing, fence_check_and_set)
{
	struct fx f;
	struct lb_node n;
	long long v = -1;

	fx_start(&f, 1);
	lb_node_init_local(&n, f.srv[0]->port, 1000);
	cr_assert_eq(lb_fenced_write(&n, "c", 5, "a", 10), 0, "first write refused");
	cr_assert_eq(lb_fenced_write(&n, "c", 4, "b", 99), LB_ESTALE, "a lower fence was accepted");
	cr_assert_eq(lb_fenced_read(&n, "c", 4, "b", &v), LB_ESTALE, "a lower fence read");
	cr_assert_eq(lb_fenced_read(&n, "c", 5, "a", &v), 0, "the same section refused");
	cr_assert_eq(v, 10, "the refused write changed the value to %lld", v);
	cr_assert_eq(lb_fenced_write(&n, "c", 5, "a", 11), 0, "the reader's own write refused");
	/* the same fence from another section: a counter that went backwards */
	cr_assert_eq(lb_fenced_write(&n, "c", 5, "z", 50), LB_ESTALE, "an equal fence was accepted");
	cr_assert_eq(lb_fenced_read(&n, "c", 7, "d", &v), 0, "a higher fence refused");
	cr_assert_eq(v, 11);
	/* the read with 7 was accepted: a write with 6 now comes too late */
	cr_assert_eq(lb_fenced_write(&n, "c", 6, "e", 12), LB_ESTALE);
	cr_assert_eq(lb_fenced_write(&n, "c", 8, "f", 12), 0);
	redisReply *r = fx_cmd(&f, 0, "MGET c:fence c:stale");
	cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
	cr_assert(r->element[0]->str && !strcmp(r->element[0]->str, "8 f"), "highest fence not 8");
	cr_assert(r->element[1]->str && !strcmp(r->element[1]->str, "4"), "the resource did not "
		  "count its 4 refusals");
	freeReplyObject(r);
	lb_node_close(&n);
	fx_stop(&f);
}

/* A command refused inside MULTI (here: wrong arity, refused at queue time)
 * must not leave the connection inside MULTI, where every later WATCH fails
 * ("WATCH inside MULTI is not allowed"): watch-multi would be wedged. And a
 * command that fails inside EXEC is a failure, not a commit. */
Test(plumbing, a_failed_transaction_does_not_wedge_the_connection)
{
	struct fx f;
	struct lb_node n;
	bool held, mine;

	fx_start(&f, 1);
	lb_node_init_local(&n, f.srv[0]->port, 1000);
	const char *bad[] = { "SET", "k" };
	cr_assert_eq(lb_multi_exec(&n, 2, bad), LB_EREDIS);
	cr_assert_eq(lb_watch_get(&n, "k", "x", &held, &mine), 0,
		     "the connection was left inside MULTI");
	const char *fails_in_exec[] = { "SET", "k", "v", "PX", "0" };
	cr_assert_eq(lb_multi_exec(&n, 5, fails_in_exec), LB_EREDIS,
		     "a SET that failed inside EXEC was taken for a commit");
	const char *good[] = { "SET", "k", "v" };
	cr_assert_eq(lb_watch_get(&n, "k", "x", &held, &mine), 0);
	cr_assert_eq(lb_multi_exec(&n, 3, good), 1);
	redisReply *r = fx_cmd(&f, 0, "GET k");
	cr_assert(lb_reply_str_eq(r, "v"));
	freeReplyObject(r);
	lb_node_close(&n);
	fx_stop(&f);
}

/* Seed 001's release_lock: ours is deleted; another's is left alone. */
Test(plumbing, watch_release_checks_the_owner)
{
	struct fx f;
	struct lb_node n;

	fx_start(&f, 1);
	lb_node_init_local(&n, f.srv[0]->port, 1000);
	redisReply *r = fx_cmd(&f, 0, "SET lk other");
	freeReplyObject(r);
	cr_assert_eq(lb_watch_release(&n, "lk", "mine"), LB_ELOST);
	r = fx_cmd(&f, 0, "GET lk");
	cr_assert(lb_reply_str_eq(r, "other"), "another client's lock was deleted");
	freeReplyObject(r);
	r = fx_cmd(&f, 0, "SET lk mine");
	freeReplyObject(r);
	cr_assert_eq(lb_watch_release(&n, "lk", "mine"), 0);
	r = fx_cmd(&f, 0, "EXISTS lk");
	long long v = -1;
	cr_assert(lb_reply_int(r, &v) && v == 0, "our lock was not deleted");
	freeReplyObject(r);
	lb_node_close(&n);
	fx_stop(&f);
}

/* The suites' time limit (fx_deadline) stops a test that runs past it, and says so. */
Test(plumbing, a_test_past_its_time_limit_is_stopped_and_says_so)
{
	int fd[2];
	cr_assert_eq(pipe(fd), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(fd[0]);
		dup2(fd[1], STDERR_FILENO);
		fx_deadline(1);
		for (;;)
			pause();
	}
	close(fd[1]);
	char said[256] = "";
	size_t got = 0;
	ssize_t r;
	while (got < sizeof(said) - 1 && (r = read(fd[0], said + got, sizeof(said) - 1 - got)) > 0)
		got += (size_t)r;
	said[got] = '\0';
	close(fd[0]);
	int status = 0;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM, "status %#x", status);
	cr_assert(strstr(said, "time limit of 1 s is up"), "it said: %s", said);
}
