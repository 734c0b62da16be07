/*
 * test_deps.c - every program lockbench runs is installed by harness/deps.sh.
 *
 * A green CI on a machine that happens to have a program proves nothing
 * about a fresh one. Every exec call site in harness/ (its folders) and strategies/ names
 * the program and its Debian package in a comment just above it
 * ("runs: PROG (PACKAGE)"); this test finds every call site, fails on one
 * without that comment, checks that deps.sh lists the package, and that the
 * package really provides the program on this machine (dpkg -S).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fixture.h"

#define MAX_LINES 4096

static char root[PATH_MAX];

static void find_root(void)
{
	snprintf(root, sizeof(root), "%s", fx_root());
}

static char *slurp_file(const char *path)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "cannot read %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *buf = malloc((size_t)n + 1);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static bool is_exec_call(const char *line)
{
	static const char *const calls[] = { "execvp(", "execlp(", "execv(", "execl(", "execve(",
					      "posix_spawn", "system(", "popen(", NULL };
	for (const char *const *c = calls; *c; c++) {
		const char *p = strstr(line, *c);
		/* a call, not a mention in a comment or a longer name */
		if (p && (p == line || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z'))) &&
		    !strstr(line, "/*") && !strstr(line, " * "))
			return true;
	}
	return false;
}

static int checked;
static int harness_sites; /* exec call sites found in harness/'s folders */
static bool manifests_run;

static void check_runs(const char *file, int line, const char *text, const char *deps);

/* An interpreter that is a Debian alternative (/usr/bin/php: the
 * alternatives system owns the link, no package does): the program it points
 * to must come from a package that a package deps.sh lists depends on
 * (php-cli depends on php8.2-cli, which has /usr/bin/php8.2). False when
 * @prog is no such thing; @owner gets what was found, for the message. */
static bool alternative_from_deps(const char *prog, const char *deps, char *owner, size_t len)
{
	char cmd[1400], line[256];
	bool ok = false;

	snprintf(cmd, sizeof(cmd), "t=$(readlink -f '%s') && [ \"$t\" != '%s' ] && "
		 "o=$(dpkg -S \"$t\" 2>/dev/null | cut -d: -f1) && [ -n \"$o\" ] && echo \"$o\" && "
		 "dpkg-query -W -f='${Package}\\t${Depends}\\n' | "
		 "awk -F'\\t' -v o=\"$o\" '{ n = split($2, d, /, */); for (i = 1; i <= n; i++) "
		 "{ split(d[i], w, / /); if (w[1] == o) print $1 } }'", prog, prog);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	if (!fgets(line, sizeof(line), p)) {
		pclose(p);
		return false;
	}
	line[strcspn(line, "\n")] = '\0';
	snprintf(owner, len, "%s", line);
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		/* a word of deps.sh's packages=(...) list: spaces or a newline around it */
		for (const char *q = deps; !ok && line[0] && (q = strstr(q, line)); q++)
			ok = (q > deps && (q[-1] == ' ' || q[-1] == '(' || q[-1] == '\n')) &&
			     strchr(" )\n", q[strlen(line)]);
	}
	pclose(p);
	cr_expect(ok, "the interpreter %s is an alternative for %s's program, and no package "
		  "harness/deps.sh installs depends on %s", prog, owner, owner);
	return true;
}

/* @pkg is listed in deps.sh and installed here (dpkg-query). */
static void check_package(const char *file, const char *pkg, const char *deps)
{
	char pat[80], cmd[200], out[128] = "";
	snprintf(pat, sizeof(pat), " %s", pkg);
	const char *at = strstr(deps, pat);
	cr_expect(at && strchr(" )\n", at[strlen(pat)]), "%s names the library package %s, which "
		  "harness/deps.sh does not install", file, pkg);
	snprintf(cmd, sizeof(cmd), "dpkg-query -W -f='${Status}' '%s' 2>/dev/null", pkg);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	if (!fgets(out, sizeof(out), p))
		out[0] = '\0';
	pclose(p);
	cr_expect_str_eq(out, "install ok installed", "%s: its package %s is not installed here",
			 file, pkg);
	checked++;
}

/* A manifest's "package = PKG ... (Debian ...)", with a second "with PKG2":
 * the Debian packages holding the library (python3-tooz with python3-redis,
 * php-symfony-lock with php-redis) come from deps.sh too. */
static void check_debian_library(const char *file, const char *value, const char *deps)
{
	char pkg[64];
	if (sscanf(value, "%63[a-z0-9.+-]", pkg) == 1)
		check_package(file, pkg, deps);
	const char *with = strstr(value, " with ");
	if (with && sscanf(with + 6, "%63[a-z0-9.+-]", pkg) == 1)
		check_package(file, pkg, deps);
}

/* A manifest's program that is a launcher script (java/lockbench-java starts
 * the JVM) names what it runs in its first lines ("runs: PROG (PACKAGE)"),
 * as the C call sites do: deps.sh must install it. A program without such a
 * line runs nothing more than its interpreter. */
static void check_launcher(const char *manifest, const char *dir, const char *prog,
			   const char *deps)
{
	char path[PATH_MAX * 2], line[512];
	snprintf(path, sizeof(path), "%s/%s", dir, prog);
	FILE *f = fopen(path, "r");
	if (!f)
		return; /* a built program (built =) or none: not a script here */
	for (int i = 0; i < 20 && fgets(line, sizeof(line), f); i++)
		if (strstr(line, "runs: ")) {
			char where[PATH_MAX * 5];
			snprintf(where, sizeof(where), "%.2000s (the program of %.2000s)", path, manifest);
			check_runs(where, i + 1, line, deps);
		}
	fclose(f);
}

/* The interpreter each adapter manifest names must come from a package
 * deps.sh installs, like any program the code runs. */
static void check_manifests(const char *deps)
{
	char dir[PATH_MAX + 32];
	snprintf(dir, sizeof(dir), "%s/strategies/adapters", root);
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "no %s", dir);
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (len < 9 || strcmp(e->d_name + len - 8, ".adapter"))
			continue;
		char path[PATH_MAX * 2], line[512], text[600];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "r");
		cr_assert_not_null(f);
		while (fgets(line, sizeof(line), f)) {
			char prog[256], pkg[64];
			if (!strncmp(line, "package = ", 10) && strstr(line, "(Debian")) {
				check_debian_library(path, line + 10, deps);
				continue;
			}
			if (sscanf(line, "program = %255s", prog) == 1) {
				check_launcher(path, dir, prog, deps);
				continue;
			}
			if (sscanf(line, "interpreter = %255s", prog) != 1)
				continue;
			if (prog[0] != '/') { /* a virtualenv deps.sh makes: its python3 is Debian's */
				char venv[PATH_MAX * 2 + 300], real[PATH_MAX];
				snprintf(venv, sizeof(venv), "%s/%s", dir, prog);
				cr_assert(strstr(deps, " python3-venv") && strstr(deps, "python/venv"),
					  "%s: the interpreter %s is a virtualenv's, which harness/deps.sh "
					  "does not make", path, prog);
				cr_assert_not_null(realpath(venv, real), "%s: %s is not there: run "
						   "bash harness/deps.sh python", path, venv);
				char debian[PATH_MAX];
				cr_assert(realpath("/usr/bin/python3", debian) && !strcmp(real, debian),
					  "%s: %s is %s, not Debian's python3", path, venv, real);
				snprintf(prog, sizeof(prog), "/usr/bin/python3");
			}
			/* its package: what dpkg says owns it, which deps.sh must list */
			char cmd[400], out[256] = "";
			snprintf(cmd, sizeof(cmd), "dpkg -S '%s' 2>/dev/null | cut -d: -f1", prog);
			FILE *p = popen(cmd, "r");
			if (!fgets(out, sizeof(out), p))
				out[0] = '\0';
			pclose(p);
			out[strcspn(out, "\n")] = '\0';
			if (!out[0] && alternative_from_deps(prog, deps, out, sizeof(out))) {
				checked++;
				continue;
			}
			cr_assert(out[0], "%s: the interpreter %s is not from a Debian package here", path,
				  prog);
			snprintf(pkg, sizeof(pkg), "%.63s", out);
			snprintf(text, sizeof(text), "runs: %s (%s)", prog, pkg);
			check_runs(path, 0, text, deps);
		}
		fclose(f);
	}
	closedir(d);
}

/* Every "PROG (PKG)" of a "runs: PROG (PKG), PROG (PKG)" comment in @text:
 * PKG must be in deps.sh and provide PROG. */
static void check_runs(const char *file, int line, const char *text, const char *deps)
{
	const char *p = strstr(text, "runs: ");
	int found = 0;

	cr_expect_not_null(p, "%s:%d runs a program without a 'runs: PROG (PACKAGE)' comment "
			   "above it", file, line);
	if (!p)
		return;
	p += 6;
	if (!strncmp(p, "(manifests)", 11)) { /* the interpreters adapters name: checked below */
		manifests_run = true;
		return;
	}
	if (!strncmp(p, "(the user's)", 12)) /* a command the user gives (--hook): theirs */
		return;
	if (!strncmp(p, "(built) ", 8)) { /* a program deps.sh builds (lockbench-porcupine) */
		char prog[64], pat[80];
		cr_expect(sscanf(p + 8, "%63[a-z0-9-]", prog) == 1, "%s:%d: 'runs: (built) PROG'", file, line);
		/* bin/PROG, or a go_adapters MODULE:PACKAGE:PROG spec (built into bin/) */
		char spec[80];
		snprintf(pat, sizeof(pat), "bin/%s", prog);
		snprintf(spec, sizeof(spec), ":%s ", prog);
		cr_expect(strstr(deps, pat) != NULL || strstr(deps, spec) != NULL,
			  "%s:%d runs %s, which harness/deps.sh does not build", file, line, prog);
		return;
	}
	for (;;) {
		char prog[64], pkg[64], pat[80], cmd[256], out[256] = "";
		int used = 0;
		if (sscanf(p, "%63[^ (] (%63[^)])%n", prog, pkg, &used) != 2 || used == 0)
			break;
		found++;
		snprintf(pat, sizeof(pat), " %s", pkg);
		cr_expect(strstr(deps, pat) != NULL, "%s:%d runs %s, but harness/deps.sh does not "
			  "install its package %s", file, line, prog, pkg);
		/* the path itself, or what it points to (gnuplot is an alternative) */
		/* ... or, merged /usr, where dpkg knows it: /bin/bash for /usr/bin/bash */
		snprintf(cmd, sizeof(cmd), "p=$(command -v %s) && { dpkg -S \"$p\" || "
			 "dpkg -S \"$(readlink -f \"$p\")\" || dpkg -S \"/bin/${p##*/}\"; } "
			 "2>/dev/null", prog);
		FILE *f = popen(cmd, "r");
		cr_assert_not_null(f);
		if (!fgets(out, sizeof(out), f))
			out[0] = '\0';
		pclose(f);
		snprintf(pat, sizeof(pat), "%s:", pkg);
		cr_expect(!strncmp(out, pat, strlen(pat)), "%s:%d: %s is not from package %s on "
			  "this machine (dpkg -S: %s)", file, line, prog, pkg, out[0] ? out : "not installed");
		checked++;
		p += used;
		if (strncmp(p, ", ", 2))
			break;
		p += 2;
	}
	cr_expect_gt(found, 0, "%s:%d: cannot read the 'runs:' comment", file, line);
}

static void scan_dir(const char *sub, const char *deps)
{
	char dir[PATH_MAX + 16];
	snprintf(dir, sizeof(dir), "%s/%s", root, sub);
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "cannot open %s", dir);
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		char path[PATH_MAX * 2];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct stat st;
		if (!strcmp(sub, "harness") && e->d_name[0] != '.' && !stat(path, &st) &&
		    S_ISDIR(st.st_mode)) { /* harness/'s folders: harness/run, ... */
			char folder[PATH_MAX];
			snprintf(folder, sizeof(folder), "%s/%s", sub, e->d_name);
			scan_dir(folder, deps);
			continue;
		}
		if (len < 3 || strcmp(e->d_name + len - 2, ".c"))
			continue;
		char *text = slurp_file(path), *lines[MAX_LINES];
		int n = 0;
		for (char *s = text, *save = NULL; n < MAX_LINES && (s = strtok_r(s, "\n", &save));
		     s = NULL)
			lines[n++] = s;
		for (int i = 0; i < n; i++) {
			if (!is_exec_call(lines[i]))
				continue;
			harness_sites += !strncmp(sub, "harness/", 8);
			char above[1024] = "";
			for (int k = i - 3 < 0 ? 0 : i - 3; k < i; k++)
				strncat(above, lines[k], sizeof(above) - strlen(above) - 1);
			check_runs(path, i + 1, above, deps);
		}
		free(text);
	}
	closedir(d);
}

FX_SUITE(deps, 60);

Test(deps, every_program_lockbench_runs_is_installed_by_deps_sh, .init = find_root)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/harness/deps.sh", root);
	char *deps = slurp_file(path);
	scan_dir("harness", deps);
	scan_dir("strategies", deps);
	cr_assert(manifests_run, "adapter.c no longer says it runs the manifests' interpreters");
	check_manifests(deps);
	cr_assert_geq(checked, 3, "found only %d programs: the scan is broken", checked);
	cr_assert_geq(harness_sites, 5, "found only %d exec call sites in harness/'s folders: "
		      "the scan is broken", harness_sites);
	free(deps);
}
