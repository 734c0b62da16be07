/*
 * cmd_check_porcupine.c - `lockbench check DIR --porcupine`: the second
 * checker. DIR's lock operations are written as porcupine-ops.csv
 * (porcupine.h: the mapping) and handed to lockbench-porcupine, a small Go
 * program (strategies/adapters/go/porcupine) that holds them to a mutex with
 * Porcupine and draws DIR/porcupine.html with the run's events as
 * annotations. It runs in a process group of its own, killed whole at its
 * limit or on Ctrl-C.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "esc.h"
#include "porcupine.h"
#include "readers.h"
#include "signals.h"
#include "util.h"

#define GRACE_MS 30000 /* past its own timeout: the program is killed */

bool lb_porcupine_find(char *out, size_t len)
{
	char dir[PATH_MAX];
	const char *env = getenv("LOCKBENCH_ADAPTERS");

	if (env && *env)
		snprintf(dir, sizeof(dir), "%s", env);
	else if (!lb_find_installed("strategies/adapters", "share", dir, sizeof(dir)))
		dir[0] = '\0';
	if ((size_t)snprintf(out, len, "%s/go/bin/lockbench-porcupine", dir) >= len)
		return false;
	return dir[0] && access(out, X_OK) == 0;
}

#define KILLED 1000

/* Its one line of verdict into @line; its exit status, KILLED (at the limit:
 * *timed_out; or by Ctrl-C or a signal), or LB_ESYS when it could not be
 * started. */
/* The checker killed (Ctrl-C, or past its timeout) while it wrote its page:
 * its temporary file (.porcupine-*.html, a regular file it made in @dir) is
 * removed, never followed; nothing else is touched. */
static void remove_half_written(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (strncmp(e->d_name, ".porcupine-", 11) || n < 16 || strcmp(e->d_name + n - 5, ".html"))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid())
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

static int spawn(const char *prog, const char *ops, const char *html, int64_t timeout_ms,
		 char *line, size_t len, bool *timed_out)
{
	char tmo[32];
	int fd[2], status;

	snprintf(tmo, sizeof(tmo), "%lld", (long long)timeout_ms);
	if (pipe2(fd, O_CLOEXEC) < 0)
		return LB_ESYS;
	fflush(NULL);
	pid_t parent = getpid(), pid = fork();
	if (pid < 0) {
		close(fd[0]), close(fd[1]);
		return LB_ESYS;
	}
	if (pid == 0) {
		setpgid(0, 0);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(126);
		dup2(fd[1], STDOUT_FILENO);
		/* runs: (built) lockbench-porcupine, by harness/deps.sh from strategies/adapters/go/porcupine */
		execl(prog, prog, "-timeout-ms", tmo, "-html", html, ops, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	int64_t deadline = lb_now_ns() + (timeout_ms + GRACE_MS) * LB_NS_PER_MS;
	size_t got = 0;
	*timed_out = false;
	line[0] = '\0';
	for (;;) {
		int w = lb_wait_fd(fd[0], POLLIN, lb_now_ns() + 100 * LB_NS_PER_MS);
		if (lb_stop_requested() || lb_now_ns() > deadline) {
			*timed_out = !lb_stop_requested();
			break;
		}
		if (w == LB_ETIMEOUT)
			continue;
		ssize_t r = read(fd[0], line + got, len - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got == len - 1)
			break;
	}
	line[got] = '\0';
	line[strcspn(line, "\n")] = '\0';
	close(fd[0]);
	kill(-pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (*timed_out || lb_stop_requested() || !WIFEXITED(status)) {
		char dir[4200];
		snprintf(dir, sizeof(dir), "%s", html);
		char *slash = strrchr(dir, '/');
		if (slash) {
			*slash = '\0';
			remove_half_written(dir);
		}
		return KILLED;
	}
	return WEXITSTATUS(status);
}

/* What lockbench's own figures say of the same run, beside Porcupine's
 * verdict: where it is not linearizable, its overlaps are why. */
static void oracle_says(const char *dir)
{
	static struct lb_summary sum;
	char path[4200];
	const char *o, *ms, *mh;

	snprintf(path, sizeof(path), "%.4000s/summary.csv", dir);
	if (lb_summary_read(path, &sum) < 0)
		return;
	o = lb_summary_get(&sum, "overlaps"), ms = lb_summary_get(&sum, "overlap_ms");
	mh = lb_summary_get(&sum, "max_holders");
	lb_esc_fprintf(stdout, LB_LANG_TERM, "  lockbench's oracle: overlaps %s (%s ms, max %s holders)\n",
		       o ? o : "n/a", ms ? ms : "n/a", mh ? mh : "n/a");
}

int lb_check_porcupine(const char *dir, int64_t timeout_ms)
{
	char prog[PATH_MAX + 64], ops[4200], html[4200], line[512];
	bool timed_out;
	int rc;

	if (!lb_porcupine_find(prog, sizeof(prog))) {
		lb_errorf("check --porcupine: no checker at %s (bash harness/deps.sh etcd builds it, "
			  "with Go): nothing was checked", prog);
		return LB_EXIT_SKIPPED;
	}
	bool unwritten;
	if ((rc = lb_porcupine_write_dir(dir, &unwritten)) < 0) /* said by the reader or writer */
		return rc == LB_ENOMEM || unwritten ? LB_EXIT_FAIL : LB_EXIT_INPUT;
	snprintf(ops, sizeof(ops), "%.4000s/porcupine-ops.csv", dir);
	snprintf(html, sizeof(html), "%.4000s/porcupine.html", dir);
	rc = spawn(prog, ops, html, timeout_ms, line, sizeof(line), &timed_out);
	if (lb_stop_requested())
		return 128 + lb_stop_signal();
	switch (rc) {
	case 0:
	case 1:
	case 5: {
		/* its status and its words must agree: a checker that says anything
		 * else with 0 has checked nothing lockbench can vouch for */
		const char *word = rc == 0 ? "linearizable" : rc == 1 ? "not linearizable" : "unknown";
		if (strncmp(line, word, strlen(word))) {
			char shown[160];
			lb_esc_snprintf(shown, sizeof(shown), LB_LANG_TERM, "%.120s", line);
			lb_errorf("check --porcupine: %s exited %d but said '%s', not '%s ...': its "
				  "answer is not understood, nothing was checked", prog, rc, shown, word);
			return LB_EXIT_FAIL;
		}
	}
		lb_esc_fprintf(stdout, LB_LANG_TERM, "porcupine: %s: %s\n", dir, line);
		oracle_says(dir);
		return rc == 0 ? LB_EXIT_OK : rc == 1 ? LB_EXIT_FAIL : LB_EXIT_INCONCLUSIVE;
	case KILLED:
		if (!timed_out) {
			lb_errorf("check --porcupine: %s was killed by a signal: nothing was checked", prog);
			return LB_EXIT_FAIL;
		}
		lb_esc_fprintf(stdout, LB_LANG_TERM, "porcupine: %s: unknown: killed %d s past its "
			       "%lld ms\n", dir, GRACE_MS / 1000, (long long)timeout_ms);
		return LB_EXIT_INCONCLUSIVE;
	case 127:
		lb_errorf("check --porcupine: %s could not be started: nothing was checked", prog);
		return LB_EXIT_SKIPPED;
	default: /* it could not start, or refused the file, or could not write the HTML */
		if (rc < 0)
			lb_errorf("check --porcupine: %s could not be started: %s", prog, strerror(errno));
		else
			lb_errorf("check --porcupine: %s failed on %s (exit status %d, its message "
				  "above): nothing was checked", prog, ops, rc);
		return LB_EXIT_FAIL;
	}
}
