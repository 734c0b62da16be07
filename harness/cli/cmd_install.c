/*
 * cmd_install.c - `lockbench install NAME@VERSION`: one version of a shipped
 * library, fetched with its ecosystem's own client into lockbench's cache
 * (lb_adapter_cache_dir), pinned by the hash of what it got. The work is the
 * hook's installer beside the manifests, install/ENV.sh DIR DIST VERSION (ENV:
 * the manifest's env, python-venv); a run never fetches anything.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adapter.h"
#include "commands.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: lockbench install NAME@VERSION\n\n"
		   "Fetches VERSION of the library whose shipped strategies are NAME@... (one\n"
		   "with an environment hook in its manifest: `lockbench list` shows them, e.g.\n"
		   "redis-py, python-redis-lock, pottery-redlock) with its ecosystem's own\n"
		   "client (pip for Python) into lockbench's cache: $LOCKBENCH_CACHE, else\n"
		   "$XDG_CACHE_HOME/lockbench, else ~/.cache/lockbench, as ENV/PACKAGE@VERSION\n"
		   "(python-venv/redis@5.0.1: a virtualenv). What it got, the package and every\n"
		   "dependency, is pinned by the sha256 of each file in its requirements.txt\n"
		   "and installed from those files alone. Then `--strategy NAME@VERSION` runs\n"
		   "it; a run never fetches anything. Installed already: said, nothing fetched.\n\n"
		   "Exit status: 0 installed (or there already), 2 usage (not NAME@VERSION, no\n"
		   "such library), 3 it could not be installed here (no cache directory, the\n"
		   "registry unreachable, no such version: the installer's words are shown).\n");
}

int lb_cmd_install(int argc, char **argv)
{
	char base[200], dir[PATH_MAX], script[PATH_MAX + 64];

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return LB_EXIT_OK;
	}
	const char *name = argc == 2 ? argv[1] : "", *at = strrchr(name, '@');
	const char *version = at ? at + 1 : "";
	if (argc != 2 || !at || at == name || !*version || strlen(name) >= sizeof(base) ||
	    strspn(version, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-+_") !=
	    strlen(version) || strlen(version) > 31) {
		lb_errorf("install: expected NAME@VERSION (letters, digits and . - + _ in the version, "
			  "at most 31), got '%s'", argc >= 2 ? argv[1] : "");
		usage(stderr);
		return LB_EXIT_USAGE;
	}
	snprintf(base, sizeof(base), "%.*s", (int)(at - name), name);
	const struct lb_adapter_def *t = lb_adapter_template(base);
	if (!t) {
		lb_errorf("install: %s is no shipped library with an environment hook (see lockbench "
			  "list: a strategy NAME@VERSION whose manifest says env =)", base);
		return LB_EXIT_USAGE;
	}
	if (!lb_adapter_cache_of(t, version, dir, sizeof(dir))) {
		lb_errorf("install: no cache directory: set LOCKBENCH_CACHE (or HOME)");
		return LB_EXIT_SKIPPED;
	}
	const char *slash = strrchr(t->manifest, '/');
	snprintf(script, sizeof(script), "%.*s/install/%s.sh", slash ? (int)(slash - t->manifest) : 1,
		 slash ? t->manifest : ".", t->env);
	if (access(script, R_OK) < 0) {
		lb_errorf("install: %s: %s (the installer of env = %s)", script, strerror(errno), t->env);
		return LB_EXIT_SKIPPED;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		/* runs: bash (bash) the hook's installer, which runs the ecosystem's client */
		execlp("bash", "bash", script, dir, t->dist, version, (char *)NULL);
		fprintf(stderr, "lockbench: install: cannot run bash: %s\n", strerror(errno));
		_exit(127);
	}
	int status = 0;
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		lb_errorf("install: %s@%s could not be installed here (the installer's words are above)",
			  base, version);
		return LB_EXIT_SKIPPED;
	}
	printf("%s@%s: installed in %s\n", base, version, dir);
	return LB_EXIT_OK;
}
