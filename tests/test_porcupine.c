/*
 * test_porcupine.c - the second checker (`lockbench check DIR --porcupine`):
 * Porcupine, written elsewhere, on real runs lockbench makes, compared with
 * lockbench's own oracle: where the oracle counts an overlap, Porcupine finds
 * the history not linearizable, and where Porcupine does, the oracle's
 * overlaps say why (docs/running.md, "check --porcupine"). The Go program's
 * own tests run here too. The property test's histories are compared in
 * test_oracle_prop.c.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "readers.h"
#include "util.h"

FX_SUITE(porcupine, 120);

static char tmpdir[64];

static void mktmp(void)
{
	strcpy(tmpdir, "/tmp/lbtest-pc-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
}

static long long overlaps_of(const char *dir)
{
	char path[256];
	struct lb_summary s;
	snprintf(path, sizeof(path), "%s/summary.csv", dir);
	cr_assert_eq(lb_summary_read(path, &s), 0);
	const char *v = lb_summary_get(&s, "overlaps");
	cr_assert_not_null(v);
	return atoll(v);
}

/* A run (@args after run's own), then check --porcupine on it: the two agree,
 * and the verdict is @want (0 linearizable, 1 not). */
static void run_and_compare(const char *name, const char *const *args, int want)
{
	char dir[128];
	const char *argv[32] = { "run" };
	int n = 1;
	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, name);
	for (; args[n - 1]; n++)
		argv[n] = args[n - 1];
	argv[n++] = "--out", argv[n++] = dir, argv[n++] = "--no-status", argv[n] = NULL;
	cr_assert_eq(fx_lockbench(tmpdir, argv), 0, "%s: the run failed:\n%s", name,
		     fx_slurp(tmpdir, "output"));
	long long overlaps = overlaps_of(dir);
	const char *check[] = { "check", dir, "--porcupine", NULL };
	int rc = fx_lockbench(tmpdir, check);
	char *said = fx_slurp(tmpdir, "output");
	cr_assert_eq(rc, want, "%s: check --porcupine exit %d, expected %d:\n%s", name, rc, want, said);
	/* the two checkers agree: an overlap counted <=> not linearizable */
	cr_assert_eq(overlaps > 0, rc == 1, "%s: the oracle counts %lld overlaps, Porcupine says:\n%s",
		     name, overlaps, said);
	if (rc == 1) {
		cr_assert_not_null(strstr(said, "not linearizable"), "%s", said);
		char why[96];
		snprintf(why, sizeof(why), "lockbench's oracle: overlaps %lld (", overlaps);
		cr_assert_not_null(strstr(said, why), "the oracle's figures are not beside it:\n%s", said);
	} else {
		cr_assert_not_null(strstr(said, ": linearizable ("), "%s", said);
	}
	char *html = fx_slurp(dir, "porcupine.html");
	cr_assert_not_null(strstr(html, "<html"), "porcupine.html is not Porcupine's page");
}

Test(porcupine, token_lua_is_linearizable, .init = mktmp)
{
	const char *args[] = { "--strategy", "token-lua", "--clients", "4", "--duration", "1.5",
			       "--hold", "1", "--wait", "fixed:1", "--seed", "2", NULL };
	run_and_compare("token", args, 0);
}

/* The holder frozen past its TTL: overlaps, and a foreign release. The
 * pause is an annotation of the page. */
Test(porcupine, a_holder_paused_past_its_lease_is_not_linearizable, .init = mktmp)
{
	const char *args[] = { "--scenario", "holder-pause", "--strategy", "set-nx-px", "--duration",
			       "3", "--seed", "1", NULL };
	run_and_compare("pause", args, 1);
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/pause", tmpdir);
	cr_assert_not_null(strstr(fx_slurp(dir, "porcupine-ops.csv"), ",pause,"),
			   "the pause is not among the annotations");
	cr_assert_not_null(strstr(fx_slurp(dir, "porcupine.html"), "pause"));
}

Test(porcupine, no_lock_is_not_linearizable, .init = mktmp)
{
	const char *args[] = { "--strategy", "none", "--clients", "4", "--duration", "1",
			       "--hold", "2", "--seed", "1", NULL };
	run_and_compare("none", args, 1);
}

/* No checker here is exit 3 and a message, never a pass. */
Test(porcupine, an_absent_checker_is_exit_3, .init = mktmp)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/none", tmpdir);
	const char *run[] = { "run", "--strategy", "none", "--duration", "0.3", "--out", dir,
			      "--no-status", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, run), 0);
	setenv("LOCKBENCH_ADAPTERS", tmpdir, 1); /* no go/bin/lockbench-porcupine under it */
	const char *check[] = { "check", dir, "--porcupine", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, check), 3);
	char *said = fx_slurp(tmpdir, "output");
	cr_assert_not_null(strstr(said, "no checker at"), "%s", said);
	cr_assert_not_null(strstr(said, "nothing was checked"), "%s", said);
	const char *bad[] = { "check", dir, "--porcupine", "--porcupine-timeout", "0", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, bad), 2);
}

/* The Go program's own tests (model_test.go): a few histories by hand. */
Test(porcupine, the_go_checker_passes_its_own_tests, .init = mktmp)
{
	char cmd[1024];
	const char *go = access("/usr/local/go/bin/go", X_OK) == 0 ? "/usr/local/go/bin/go" : "go";
	snprintf(cmd, sizeof(cmd), "cd '%s/strategies/adapters/go/porcupine' && GOFLAGS=-mod=readonly "
		 "GOPROXY=off nice -n 19 %s test -count=1 . > '%s/go-test' 2>&1", fx_root(), go, tmpdir);
	int rc = system(cmd);
	cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "go test failed:\n%s",
		  fx_slurp(tmpdir, "go-test"));
}

/* The checker's words must match its status: one that exits 0 saying
 * "garbage" checked nothing lockbench can vouch for (it read "porcupine:
 * ...: garbage", a pass); one killed past its timeout while it wrote its
 * page leaves no .porcupine-*.html behind (review). */
Test(porcupine, the_checkers_answer_must_be_understood, .init = mktmp)
{
	char dir[128], bin[200], path[260];
	snprintf(dir, sizeof(dir), "%s/tl", tmpdir);
	const char *run[] = { "run", "--strategy", "token-lua", "--duration", "0.3", "--out", dir,
			      "--no-status", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, run), 0);
	snprintf(bin, sizeof(bin), "%s/fake/go/bin", tmpdir);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && printf '#!/bin/sh\\necho garbage\\n' > "
		 "'%s/lockbench-porcupine' && chmod 755 '%s/lockbench-porcupine'", bin, bin, bin);
	cr_assert_eq(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/fake", tmpdir);
	setenv("LOCKBENCH_ADAPTERS", path, 1);
	const char *check[] = { "check", dir, "--porcupine", NULL };
	cr_assert_eq(fx_lockbench(tmpdir, check), 1, "%s", fx_slurp(tmpdir, "output"));
	cr_assert(strstr(fx_slurp(tmpdir, "output"), "is not understood"), "%s",
		  fx_slurp(tmpdir, "output"));
	/* a checker that makes its temporary page and then hangs: Ctrl-C kills
	 * it, and its half-written file goes with it */
	snprintf(cmd, sizeof(cmd), "printf '#!/bin/sh\\n: > \"$(dirname \"$4\")/.porcupine-1.html\"\\n"
		 "exec sleep 30\\n' > '%s/lockbench-porcupine'", bin);
	cr_assert_eq(system(cmd), 0);
	char o[200];
	snprintf(o, sizeof(o), "%s/int-output", tmpdir);
	pid_t pid = fx_spawn_lockbench(check, o, o);
	snprintf(path, sizeof(path), "%s/.porcupine-1.html", dir);
	for (int i = 0; i < 100 && access(path, F_OK) != 0; i++)
		lb_sleep_ns(50 * LB_NS_PER_MS);
	cr_assert_eq(access(path, F_OK), 0, "the fake checker made no page");
	kill(pid, SIGINT);
	cr_assert_eq(fx_wait_lockbench(pid, check), 130, "%s", fx_slurp(tmpdir, "int-output"));
	cr_assert_neq(access(path, F_OK), 0, "%s was left", path);
}
