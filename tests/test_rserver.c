/*
 * test_rserver.c - embedded redis-servers: free distinct ports, every fault
 * primitive, and nothing left running after stop, after a crash of the
 * process that started them, or after kill -9 of lockbench itself.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <sys/syscall.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"

FX_SUITE(rserver, 30);

Test(rserver, ports_free_and_distinct)
{
	struct fx f;

	fx_start(&f, 5);
	for (size_t i = 0; i < f.n; i++) {
		cr_assert_gt(f.srv[i]->port, 1024);
		cr_assert_neq(f.srv[i]->port, 6379, "never the default port");
		for (size_t j = 0; j < i; j++)
			cr_assert_neq(f.srv[i]->port, f.srv[j]->port);
		redisReply *r = fx_cmd(&f, i, "PING");
		cr_assert(r && r->type == REDIS_REPLY_STATUS);
		freeReplyObject(r);
	}
	fx_stop(&f);
}

Test(rserver, configured_without_persistence_on_loopback)
{
	struct fx f;
	static const char *const expect[][2] = {
		{ "bind", "127.0.0.1" }, { "save", "" }, { "appendonly", "no" },
	};

	fx_start(&f, 1);
	for (size_t k = 0; k < 3; k++) {
		redisReply *r = fx_cmd(&f, 0, "CONFIG GET %s", expect[k][0]);
		cr_assert(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
		cr_assert_str_eq(r->element[1]->str, expect[k][1], "%s", expect[k][0]);
		freeReplyObject(r);
	}
	redisReply *r = fx_cmd(&f, 0, "DEBUG SLEEP 0");
	cr_assert(lb_reply_ok(r), "DEBUG must be enabled for local connections");
	freeReplyObject(r);
	fx_stop(&f);
}

Test(rserver, stop_leaves_nothing)
{
	struct lb_server *s = lb_server_start(NULL);
	char dir[sizeof(s->dir)];

	cr_assert_not_null(s);
	int port = s->port;
	pid_t pid = s->pid;
	strcpy(dir, s->dir);
	lb_server_destroy(s);
	cr_assert(fx_pid_gone(pid));
	cr_assert(fx_port_closed(port));
	cr_assert_neq(access(dir, F_OK), 0, "the temporary directory %s is still there", dir);
}

Test(rserver, kill_pause_resume)
{
	struct fx f;

	fx_start(&f, 1);
	struct lb_server *s = f.srv[0];
	cr_assert_eq(lb_server_pause(s), 0);
	struct lb_node n;
	lb_node_init_local(&n, s->port, 100);
	redisReply *r = lb_node_cmd(&n, "PING");
	cr_assert_null(r, "a paused server answered");
	cr_assert_eq(lb_server_resume(s), 0);
	r = lb_node_cmd(&n, "PING");
	cr_assert_not_null(r, "a resumed server did not answer");
	freeReplyObject(r);
	lb_node_close(&n);
	pid_t pid = s->pid;
	cr_assert_eq(lb_server_kill(s), 0);
	cr_assert(fx_pid_gone(pid));
	cr_assert(fx_port_closed(s->port));
	cr_assert_eq(lb_server_respawn(s), 0);
	cr_assert_not(fx_port_closed(s->port));
	fx_stop(&f);
}

static long long exists_after_restart(bool keep)
{
	struct fx f;
	long long v = -1;

	fx_start(&f, 1);
	redisReply *r = fx_cmd(&f, 0, "SET k v");
	cr_assert(lb_reply_ok(r));
	freeReplyObject(r);
	int port = f.srv[0]->port;
	cr_assert_eq(lb_server_restart(f.srv[0], keep), 0);
	cr_assert_eq(f.srv[0]->port, port, "a restart must keep the port");
	r = fx_cmd(&f, 0, "EXISTS k");
	cr_assert(lb_reply_int(r, &v));
	freeReplyObject(r);
	fx_stop(&f);
	return v;
}

Test(rserver, restart_with_and_without_data)
{
	cr_assert_eq(exists_after_restart(true), 1, "restart keeping data lost the key");
	cr_assert_eq(exists_after_restart(false), 0, "an empty restart kept the key");
}

/* Read "port pid" lines that a child writes to @fd. */
static int read_servers(int fd, int *ports, pid_t *pids, int max)
{
	FILE *in = fdopen(fd, "r");
	int n = 0, port, pid;

	while (n < max && fscanf(in, "%d %d", &port, &pid) == 2) {
		ports[n] = port;
		pids[n++] = pid;
	}
	fclose(in);
	return n;
}

static void assert_all_gone(const int *ports, const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++) {
		bool gone = false;
		for (int t = 0; t < 100 && !gone; t++) {
			fx_reap_orphans();
			gone = fx_pid_gone(pids[i]) && fx_port_closed(ports[i]);
			if (!gone)
				lb_sleep_ns(20 * LB_NS_PER_MS);
		}
		cr_assert(gone, "redis-server pid %d on port %d outlived its parent", pids[i], ports[i]);
	}
}

Test(rserver, servers_die_with_a_crashed_parent)
{
	int pfd[2], ports[3], n;
	pid_t pids[3];

	fx_become_subreaper();
	cr_assert_eq(pipe(pfd), 0);
	fflush(NULL);
	pid_t child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		close(pfd[0]);
		for (int i = 0; i < 3; i++) {
			struct lb_server *s = lb_server_start(NULL);
			if (!s)
				_exit(1);
			dprintf(pfd[1], "%d %d\n", s->port, (int)s->pid);
		}
		close(pfd[1]);
		abort(); /* a crash: no cleanup code runs */
	}
	close(pfd[1]);
	n = read_servers(pfd[0], ports, pids, 3);
	waitpid(child, NULL, 0);
	cr_assert_eq(n, 3, "the child did not start its servers");
	assert_all_gone(ports, pids, n);
}

Test(rserver, kill_9_of_lockbench_leaves_no_server)
{
	const char *bin = getenv("LOCKBENCH_BIN");
	int pfd[2], ports[2], n = 0;
	pid_t pids[2];
	char line[512];

	cr_assert_not_null(bin, "LOCKBENCH_BIN must name build/lockbench (make test sets it)");
	fx_become_subreaper();
	cr_assert_eq(pipe(pfd), 0);
	fflush(NULL);
	pid_t lb = fork();
	cr_assert_geq(lb, 0);
	if (lb == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		execl(bin, bin, "servers", "2", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	FILE *in = fdopen(pfd[0], "r");
	while (n < 2 && fgets(line, sizeof(line), in)) {
		int pid;
		if (sscanf(line, "redis://127.0.0.1:%d pid=%d", &ports[n], &pid) == 2)
			pids[n++] = pid;
	}
	cr_assert_eq(n, 2, "lockbench servers did not report two servers");
	cr_assert_not(fx_port_closed(ports[0]));
	kill(lb, SIGKILL);
	waitpid(lb, NULL, 0);
	fclose(in);
	assert_all_gone(ports, pids, n);
}

Test(rserver, sigterm_of_lockbench_stops_servers)
{
	const char *bin = getenv("LOCKBENCH_BIN");
	int pfd[2], port = 0, pid = 0, status;
	char line[512];

	cr_assert_not_null(bin);
	cr_assert_eq(pipe(pfd), 0);
	fflush(NULL);
	pid_t lb = fork();
	if (lb == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		execl(bin, bin, "servers", "1", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	FILE *in = fdopen(pfd[0], "r");
	cr_assert_not_null(fgets(line, sizeof(line), in));
	cr_assert_eq(sscanf(line, "redis://127.0.0.1:%d pid=%d", &port, &pid), 2);
	kill(lb, SIGTERM);
	waitpid(lb, &status, 0);
	fclose(in);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "lockbench did not exit cleanly");
	cr_assert(fx_pid_gone(pid) && fx_port_closed(port), "SIGTERM left the server running");
}

Test(rserver, clock_shim_moves_expiry)
{
	const char *shim = getenv("LOCKBENCH_CLOCK_SHIM");
	struct lb_server_opts o = { .clock_shim = shim };
	struct lb_node n;
	long long pttl = 0;

	cr_assert_not_null(shim, "LOCKBENCH_CLOCK_SHIM must name build/libfakeclock.so");
	struct lb_server *s = lb_server_start(&o);
	cr_assert_not_null(s);
	lb_node_init_local(&n, s->port, 1000);
	redisReply *r = lb_node_cmd(&n, "SET k v PX 10000");
	cr_assert(lb_reply_ok(r));
	freeReplyObject(r);
	cr_assert_eq(lb_server_set_clock(s, 20000), 0);
	r = lb_node_cmd(&n, "PTTL k");
	cr_assert(lb_reply_int(r, &pttl));
	freeReplyObject(r);
	cr_assert_eq(pttl, -2, "a 20 s jump must expire a 10 s key (PTTL %lld)", pttl);
	lb_node_close(&n);
	lb_server_destroy(s);
}

/* The shim never reads half of a rewrite: while a writer flips the offset
 * between 0 and -30000 ms as fast as it can, every clock_gettime of the shim
 * (called directly, through dlopen) is the true time plus one of the two. The
 * true time is read before and after it: a reader preempted between two reads
 * (make test runs two binaries side by side) is not taken for a torn one. */
Test(rserver, clock_shim_never_reads_a_torn_offset)
{
	const char *shim = getenv("LOCKBENCH_CLOCK_SHIM");
	char path[] = "/tmp/lbtest-clock-XXXXXX";
	int fd = mkstemp(path);

	cr_assert_not_null(shim, "LOCKBENCH_CLOCK_SHIM must name build/libfakeclock.so");
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(lb_clock_file_write(path, 0), 0);
	setenv("LOCKBENCH_CLOCK_FILE", path, 1);
	void *h = dlopen(shim, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h, "%s", dlerror());
	int (*shim_gettime)(clockid_t, struct timespec *) =
		(int (*)(clockid_t, struct timespec *))dlsym(h, "clock_gettime");
	cr_assert_not_null(shim_gettime);
	pid_t writer = fork();
	cr_assert_geq(writer, 0);
	if (writer == 0) {
		for (int64_t i = 0;; i++)
			lb_clock_file_write(path, i % 2 ? -30000 : 0);
	}
	int bad = 0, flips = 0;
	int64_t last = 0;
	for (int i = 0; i < 300000; i++) {
		struct timespec fake, before, after;
		syscall(SYS_clock_gettime, CLOCK_REALTIME, &before);
		shim_gettime(CLOCK_REALTIME, &fake);
		syscall(SYS_clock_gettime, CLOCK_REALTIME, &after);
		int64_t f = (int64_t)fake.tv_sec * 1000000000 + fake.tv_nsec;
		int64_t b = (int64_t)before.tv_sec * 1000000000 + before.tv_nsec;
		int64_t a = (int64_t)after.tv_sec * 1000000000 + after.tv_nsec;
		int64_t near = f - b > -15000 * LB_NS_PER_MS ? 0 : -30000;
		/* the offset it read, in ms, lies between fake - after and fake - before */
		int64_t off = near * LB_NS_PER_MS, slack = LB_NS_PER_MS;
		bad += f < b + off - slack || f > a + off + slack;
		flips += near != last;
		last = near;
	}
	kill(writer, SIGKILL);
	waitpid(writer, NULL, 0);
	dlclose(h);
	unlink(path);
	cr_assert_eq(bad, 0, "%d reads saw an offset that was never written", bad);
	cr_assert_gt(flips, 10, "the writer did not flip the offset while the reader read");
}

/* strobe (Jepsen's strobe nemesis): the shim shows the offset on and off
 * every strobe ms from the window's start, as a process reads its clock,
 * and 0 from the window's end (clockfile.h). Sampled every 2 ms for 450 ms:
 * a 50 ms strobe over 300 ms is on, off, on, off, on, off; then off. */
Test(rserver, clock_shim_strobes_the_offset_on_and_off)
{
	const char *shim = getenv("LOCKBENCH_CLOCK_SHIM");
	char path[] = "/tmp/lbtest-clock-XXXXXX";
	int fd = mkstemp(path);

	cr_assert_not_null(shim, "LOCKBENCH_CLOCK_SHIM must name build/libfakeclock.so");
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(lb_clock_file_write(path, 0), 0);
	setenv("LOCKBENCH_CLOCK_FILE", path, 1);
	void *h = dlopen(shim, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h, "%s", dlerror());
	int (*shim_gettime)(clockid_t, struct timespec *) =
		(int (*)(clockid_t, struct timespec *))dlsym(h, "clock_gettime");
	cr_assert_not_null(shim_gettime);
	int64_t from = lb_now_ns();
	struct lb_clockset set = { .offset_ms = -30000, .strobe_ms = 50, .from_ns = from,
				   .until_ns = from + 300 * LB_NS_PER_MS };
	cr_assert_eq(lb_clock_file_set(path, &set), 0);
	int flips = 0, wrong = 0, on_after = 0;
	int64_t last = -30000;
	while (lb_now_ns() < from + 450 * LB_NS_PER_MS) {
		struct timespec fake, before;
		syscall(SYS_clock_gettime, CLOCK_REALTIME, &before);
		shim_gettime(CLOCK_REALTIME, &fake);
		int64_t mono = lb_now_ns();
		int64_t d = ((int64_t)fake.tv_sec - before.tv_sec) * 1000000000 +
			    (fake.tv_nsec - before.tv_nsec);
		int64_t seen = d < -15000 * LB_NS_PER_MS ? -30000 : 0;
		int64_t into = mono - from;
		/* away from a flip (1 ms either side) the offset is the window's */
		int64_t phase = into % (50 * LB_NS_PER_MS);
		if (into < 300 * LB_NS_PER_MS && phase > LB_NS_PER_MS && phase < 49 * LB_NS_PER_MS)
			wrong += seen != ((into / (50 * LB_NS_PER_MS)) % 2 ? 0 : -30000);
		if (into > 301 * LB_NS_PER_MS)
			on_after += seen != 0;
		flips += seen != last;
		last = seen;
		lb_sleep_ns(2 * LB_NS_PER_MS);
	}
	dlclose(h);
	unlink(path);
	cr_assert_eq(wrong, 0, "%d reads saw the offset in the wrong half of a period", wrong);
	cr_assert_eq(on_after, 0, "%d reads after the window still saw the offset", on_after);
	cr_assert_geq(flips, 5, "the offset flipped %d times, not 5 (on, off, on, off, on, off)",
		      flips);
}

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>

#include "owned.h"
#include "rserver.h"

/* A lockbench-redis-PID-XXXXXX in @parent with a marker saying @pid made it
 * in pid namespace @pidns, as a temporary directory when @tmp (else as a
 * result, an --out); owned by @uid. */
static void stale_dir(const char *parent, const char *name, long pid, unsigned long long pidns,
		      uid_t uid, bool tmp)
{
	char dir[512], path[600], boot[64] = "";
	snprintf(dir, sizeof(dir), "%s/%s", parent, name);
	cr_assert_eq(mkdir(dir, 0755), 0);
	FILE *b = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (b) {
		cr_assert_not_null(fgets(boot, sizeof(boot), b));
		boot[strcspn(boot, "\n")] = '\0';
		fclose(b);
	}
	snprintf(path, sizeof(path), "%s/" LB_OWNED_MARKER, dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "lockbench-owned\npid=%ld\nuid=%lu\npidns=%llu\nstart=1\nboot=%s\n%s", pid,
		(unsigned long)uid, pidns, boot, tmp ? "role=tmp\n" : "");
	fclose(f);
	snprintf(path, sizeof(path), "%s/redis.log", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fclose(f);
	if (uid != geteuid()) {
		cr_assert_eq(lchown(path, uid, (gid_t)-1), 0);
		snprintf(path, sizeof(path), "%s/" LB_OWNED_MARKER, dir);
		cr_assert_eq(lchown(path, uid, (gid_t)-1), 0);
		cr_assert_eq(lchown(dir, uid, (gid_t)-1), 0);
	}
}

static bool there(const char *parent, const char *name)
{
	char path[512];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", parent, name);
	return lstat(path, &st) == 0;
}

/* issue 51: the stale sweep removes only what this user's lockbench made and
 * whose maker is known to be gone: never another user's directory (nobody's),
 * one in another pid namespace, one without a marker; never follows a
 * symlink, at the top or inside. */
Test(rserver, the_stale_sweep_removes_only_ours_whose_maker_is_gone)
{
	char parent[64] = "/tmp/lbtest-sweep-XXXXXX", target[128], link[600], file[160];
	struct stat st;
	cr_assert_not_null(fx_mkdtemp(parent));
	cr_assert_eq(stat("/proc/self/ns/pid", &st), 0);
	unsigned long long ns = (unsigned long long)st.st_ino;
	long dead = 4194303; /* above any pid_max: no process has it */
	struct passwd *nobody = getpwnam("nobody");

	stale_dir(parent, "lockbench-redis-4194303-ours00", dead, ns, geteuid(), true);
	stale_dir(parent, "lockbench-redis-4194303-otherns", dead, ns + 1, geteuid(), true);
	if (geteuid() == 0 && nobody)
		stale_dir(parent, "lockbench-redis-4194303-nobody", dead, ns, nobody->pw_uid, true);
	/* a result whose name looks like a server's directory (run --out
	 * $TMPDIR/lockbench-redis-...): its marker is no temporary's */
	stale_dir(parent, "lockbench-redis-4194303-result", dead, ns, geteuid(), false);
	char plain[512];
	snprintf(plain, sizeof(plain), "%s/lockbench-redis-4194303-nomark", parent);
	cr_assert_eq(mkdir(plain, 0755), 0);
	/* a target outside, reached by a symlink at the top and one inside ours */
	snprintf(target, sizeof(target), "%s/target", parent);
	cr_assert_eq(mkdir(target, 0755), 0);
	snprintf(file, sizeof(file), "%s/keep", target);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fclose(f);
	snprintf(link, sizeof(link), "%s/lockbench-redis-4194303-link00", parent);
	cr_assert_eq(symlink(target, link), 0);
	snprintf(link, sizeof(link), "%s/lockbench-redis-4194303-ours00/sub", parent);
	cr_assert_eq(symlink(target, link), 0);

	lb_sweep_stale_dirs(parent);
	cr_assert_not(there(parent, "lockbench-redis-4194303-ours00"), "ours, its maker gone, stayed");
	cr_assert(there(parent, "lockbench-redis-4194303-otherns"),
		  "a directory whose maker may live in another pid namespace was removed");
	if (geteuid() == 0 && nobody)
		cr_assert(there(parent, "lockbench-redis-4194303-nobody"),
			  "another user's directory was removed");
	cr_assert(there(parent, "lockbench-redis-4194303-nomark"), "a directory without a marker");
	cr_assert(there(parent, "lockbench-redis-4194303-result"),
		  "a result (an --out, no role=tmp in its marker) was swept as a stale directory");
	cr_assert(there(parent, "lockbench-redis-4194303-link00"), "a symlink was removed");
	cr_assert_eq(access(file, F_OK), 0, "a file reached through a symlink was removed");
}

/* issue 51: lb_owned_rmtree refuses a directory without lockbench's marker. */
Test(rserver, rmtree_leaves_what_lockbench_did_not_make)
{
	char parent[64] = "/tmp/lbtest-rmtree-XXXXXX", path[160];
	cr_assert_not_null(fx_mkdtemp(parent));
	snprintf(path, sizeof(path), "%s/x", parent);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fclose(f);
	cr_assert_eq(lb_owned_rmtree(parent), LB_EINVAL);
	cr_assert_eq(access(path, F_OK), 0);
	char made[64] = "/tmp/lbtest-owned-XXXXXX";
	cr_assert_eq(lb_owned_mkdtemp(made), 0);
	cr_assert_eq(lb_owned_rmtree(made), 0);
	cr_assert_neq(access(made, F_OK), 0);
}
