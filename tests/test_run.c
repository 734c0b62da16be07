/*
 * test_run.c - `lockbench run` and `check` end to end, through the real
 * binary, real servers and real client processes.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "results.h"

TestSuite(run, .timeout = 90);

static char tmpdir[64];

static void mktmp(void)
{
	strcpy(tmpdir, "/tmp/lbtest-run-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

/* Run lockbench to completion; its exit code. */
static int lb(const char *const *args)
{
	char out[128], err[128];
	int status;

	snprintf(out, sizeof(out), "%s/stdout", tmpdir);
	snprintf(err, sizeof(err), "%s/stderr", tmpdir);
	pid_t pid = fx_spawn_lockbench(args, out, err);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "lockbench died of a signal");
	return WEXITSTATUS(status);
}

static bool file_has(const char *name, const char *needle)
{
	char path[128], buf[65536];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

static double summary_field(const char *dir, const char *name)
{
	char path[256];
	struct lb_summary s;
	snprintf(path, sizeof(path), "%s/summary.csv", dir);
	cr_assert_eq(lb_summary_read(path, &s), 0);
	const char *v = lb_summary_get(&s, name);
	cr_assert_not_null(v, "summary.csv has no %s", name);
	return strtod(v, NULL);
}

static const char *summary_text(const char *dir, const char *name)
{
	static char buf[64];
	char path[256];
	struct lb_summary s;
	snprintf(path, sizeof(path), "%s/summary.csv", dir);
	cr_assert_eq(lb_summary_read(path, &s), 0);
	const char *v = lb_summary_get(&s, name);
	cr_assert_not_null(v);
	snprintf(buf, sizeof(buf), "%s", v);
	return buf;
}

Test(run, none_under_contention_is_caught, .init = mktmp)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/none", tmpdir);
	const char *args[] = { "run", "--strategy", "none", "--clients", "4", "--duration", "1.5",
			       "--hold", "2", "--seed", "1", "--out", dir, "--no-status", NULL };
	cr_assert_eq(lb(args), 0);
	cr_assert_gt(summary_field(dir, "overlaps"), 0, "the oracle missed the overlaps");
	cr_assert_gt(summary_field(dir, "lost_updates"), 0, "no lost updates without a lock?");
	cr_assert_gt(summary_field(dir, "canary_violations"), 0, "the canary disagrees with the sweep");
	cr_assert_geq(summary_field(dir, "max_holders"), 2);
	const char *check[] = { "check", dir, NULL };
	cr_assert_eq(lb(check), 0, "check disagrees with run");
}

Test(run, token_lua_is_safe_over_hundreds_of_sections, .init = mktmp)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/token", tmpdir);
	const char *args[] = { "run", "--strategy", "token-lua", "--clients", "4", "--duration", "3",
			       "--hold", "1", "--wait", "fixed:1", "--seed", "2", "--out", dir,
			       "--no-status", NULL };
	cr_assert_eq(lb(args), 0);
	cr_assert_geq(summary_field(dir, "sections"), 200, "too few sections to mean anything");
	cr_assert_eq(summary_field(dir, "overlaps"), 0);
	cr_assert_eq(summary_field(dir, "lost_updates"), 0);
	cr_assert_eq(summary_field(dir, "canary_violations"), 0);
	cr_assert_eq(summary_field(dir, "foreign_releases"), 0);
	cr_assert_gt(summary_field(dir, "cmds_per_section"), 1.9, "SET + EVALSHA at least");
	cr_assert(file_has("token/meta.txt", "seed: 2"));
	cr_assert(file_has("token/history.csv", LB_HISTORY_HEADER));
	cr_assert(file_has("token/latency.csv", "bucket_low_us,bucket_high_us,count"));
	const char *check[] = { "check", dir, NULL };
	cr_assert_eq(lb(check), 0, "check disagrees with run");
}

Test(run, check_catches_a_doctored_summary, .init = mktmp)
{
	char dir[128], path[160];
	snprintf(dir, sizeof(dir), "%s/doctored", tmpdir);
	const char *args[] = { "run", "--strategy", "none", "--clients", "3", "--duration", "0.5",
			       "--out", dir, "--no-status", NULL };
	cr_assert_eq(lb(args), 0);
	/* claim there were no overlaps */
	struct lb_summary s;
	snprintf(path, sizeof(path), "%s/summary.csv", dir);
	cr_assert_eq(lb_summary_read(path, &s), 0);
	FILE *f = fopen(path, "w");
	for (size_t i = 0; i < s.n; i++)
		fprintf(f, "%s%c", s.name[i], i + 1 < s.n ? ',' : '\n');
	for (size_t i = 0; i < s.n; i++)
		fprintf(f, "%s%c", strcmp(s.name[i], "overlaps") ? s.value[i] : "0",
			i + 1 < s.n ? ',' : '\n');
	fclose(f);
	const char *check[] = { "check", dir, NULL };
	cr_assert_eq(lb(check), 1);
	cr_assert(file_has("stdout", "DIFFERS"));
}

Test(run, ctrl_c_still_writes_results, .init = mktmp)
{
	char dir[128], out[160], err[160];
	int status;
	snprintf(dir, sizeof(dir), "%s/int", tmpdir);
	snprintf(out, sizeof(out), "%s/stdout", tmpdir);
	snprintf(err, sizeof(err), "%s/stderr", tmpdir);
	const char *args[] = { "run", "--strategy", "set-nx-px", "--clients", "3", "--duration", "60",
			       "--out", dir, NULL };
	pid_t pid = fx_spawn_lockbench(args, out, err);
	lb_sleep_ns(1500 * LB_NS_PER_MS);
	kill(pid, SIGINT);
	int64_t t0 = lb_now_ns();
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert_lt(lb_now_ns() - t0, 15 * LB_NS_PER_S, "stopping took too long");
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "Ctrl-C is not a failure");
	cr_assert_str_eq(summary_text(dir, "interrupted"), "yes");
	cr_assert_gt(summary_field(dir, "sections"), 0, "what ran was not written");
	cr_assert_lt(summary_field(dir, "elapsed_s"), 10);
}

/* Every process whose parent chain leads to @root. */
static int descendants(pid_t root, pid_t *out, int max)
{
	int n = 0;
	out[n++] = root;
	for (int i = 0; i < n; i++) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		while (d && (e = readdir(d)) && n < max) {
			char path[300], buf[512];
			int pid = atoi(e->d_name), ppid;
			if (pid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/stat", pid);
			FILE *f = fopen(path, "r");
			if (!f)
				continue;
			size_t k = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
			buf[k] = '\0';
			char *p = strrchr(buf, ')');
			if (p && sscanf(p + 2, "%*c %d", &ppid) == 1 && ppid == out[i])
				out[n++] = pid;
		}
		if (d)
			closedir(d);
	}
	return n;
}

Test(run, kill_9_mid_run_leaves_nothing, .init = mktmp)
{
	char dir[128], out[160], err[160];
	pid_t pids[64];
	snprintf(dir, sizeof(dir), "%s/k9", tmpdir);
	snprintf(out, sizeof(out), "%s/stdout", tmpdir);
	snprintf(err, sizeof(err), "%s/stderr", tmpdir);
	fx_become_subreaper();
	const char *args[] = { "run", "--strategy", "token-lua", "--clients", "3", "--duration", "60",
			       "--out", dir, NULL };
	pid_t pid = fx_spawn_lockbench(args, out, err);
	int n = 0;
	for (int t = 0; t < 100 && n < 6; t++) {
		lb_sleep_ns(50 * LB_NS_PER_MS);
		n = descendants(pid, pids, 64);
	}
	cr_assert_geq(n, 6, "expected lockbench, 2 servers and 3 clients, found %d processes", n);
	lb_sleep_ns(300 * LB_NS_PER_MS);
	kill(pid, SIGKILL);
	for (int i = 0; i < n; i++) {
		bool gone = false;
		for (int t = 0; t < 150 && !gone; t++) {
			fx_reap_orphans();
			gone = fx_pid_gone(pids[i]);
			if (!gone)
				lb_sleep_ns(20 * LB_NS_PER_MS);
		}
		cr_assert(gone, "process %d outlived lockbench's kill -9", pids[i]);
	}
}

Test(run, usage_errors_exit_2_with_a_reason, .init = mktmp)
{
	const char *unknown[] = { "run", "--strategy", "nope", NULL };
	cr_assert_eq(lb(unknown), 2);
	cr_assert(file_has("stderr", "unknown strategy 'nope'"));
	cr_assert(file_has("stderr", "token-lua"), "the valid strategies must be listed");

	const char *zero[] = { "run", "--strategy", "none", "--clients", "0", NULL };
	cr_assert_eq(lb(zero), 2);
	cr_assert(file_has("stderr", "--clients"));

	const char *hold[] = { "run", "--strategy", "none", "--hold", "9-3", NULL };
	cr_assert_eq(lb(hold), 2);
	cr_assert(file_has("stderr", "MIN <= MAX"));

	const char *dur[] = { "run", "--strategy", "none", "--duration", "-1", NULL };
	cr_assert_eq(lb(dur), 2);
	const char *ttl[] = { "run", "--strategy", "none", "--ttl", "0", NULL };
	cr_assert_eq(lb(ttl), 2);
	const char *wait[] = { "run", "--strategy", "none", "--wait", "sometimes", NULL };
	cr_assert_eq(lb(wait), 2);
	cr_assert(file_has("stderr", "expected try"));
	const char *nostrat[] = { "run", NULL };
	cr_assert_eq(lb(nostrat), 2);
	const char *nodes[] = { "run", "--strategy", "redlock", "--nodes", "3", NULL };
	cr_assert_eq(lb(nodes), 2);
}

Test(run, unreachable_redis_names_the_address, .init = mktmp)
{
	char url[64], dir[128];
	int port = lb_free_port();
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d", port);
	snprintf(dir, sizeof(dir), "%s/unreach", tmpdir);
	const char *args[] = { "run", "--strategy", "token-lua", "--redis", url, "--out", dir, NULL };
	cr_assert_eq(lb(args), 1);
	snprintf(url, sizeof(url), "127.0.0.1:%d", port);
	cr_assert(file_has("stderr", url), "the error must name the address");
}

Test(run, unwritable_out_dir_names_the_path, .init = mktmp)
{
	const char *args[] = { "run", "--strategy", "none", "--out", "/dev/null/sub", NULL };
	cr_assert_eq(lb(args), 1);
	cr_assert(file_has("stderr", "/dev/null/sub"));
}

Test(run, user_servers_keep_their_keys, .init = mktmp)
{
	struct fx f;
	char url[64], dir[128];
	long long size = -1;

	fx_start(&f, 1);
	redisReply *r = fx_cmd(&f, 0, "SET user:precious 42");
	freeReplyObject(r);
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d", f.srv[0]->port);
	snprintf(dir, sizeof(dir), "%s/user", tmpdir);
	const char *args[] = { "run", "--strategy", "token-lua", "--clients", "2", "--duration", "0.5",
			       "--redis", url, "--out", dir, "--no-status", NULL };
	cr_assert_eq(lb(args), 0);
	cr_assert_gt(summary_field(dir, "sections"), 0);
	r = fx_cmd(&f, 0, "GET user:precious");
	cr_assert(lb_reply_str_eq(r, "42"), "lockbench touched a key outside its prefix");
	freeReplyObject(r);
	r = fx_cmd(&f, 0, "DBSIZE");
	cr_assert(lb_reply_int(r, &size));
	freeReplyObject(r);
	cr_assert_eq(size, 1, "lockbench left its own keys behind");
	fx_stop(&f);
}

Test(run, notify_hands_off_where_slow_polling_cannot, .init = mktmp)
{
	char notify[128], polling[128];
	snprintf(notify, sizeof(notify), "%s/notify", tmpdir);
	snprintf(polling, sizeof(polling), "%s/polling", tmpdir);
	const char *a1[] = { "run", "--strategy", "token-lua", "--clients", "4", "--duration", "2",
			     "--hold", "5", "--wait", "notify:1000", "--out", notify, "--no-status",
			     "--no-report", NULL };
	const char *a2[] = { "run", "--strategy", "token-lua", "--clients", "4", "--duration", "2",
			     "--hold", "5", "--wait", "fixed:1000", "--out", polling, "--no-status",
			     "--no-report", NULL };
	cr_assert_eq(lb(a1), 0);
	cr_assert_eq(lb(a2), 0);
	double n_notify = summary_field(notify, "handoffs"), n_polling = summary_field(polling, "handoffs");
	cr_assert_geq(n_notify, 50, "notify handed off only %.0f times", n_notify);
	cr_assert_leq(n_polling, 12, "fixed:1000 handed off %.0f times: more than a handful?", n_polling);
	cr_assert_geq(summary_field(notify, "fairness"), 0.8);
}

Test(run, notify_needs_a_strategy_that_can_wait, .init = mktmp)
{
	const char *args[] = { "run", "--strategy", "set-nx-px", "--wait", "notify", NULL };
	cr_assert_eq(lb(args), 2);
	cr_assert(file_has("stderr", "cannot be woken"));
}
