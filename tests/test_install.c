/*
 * test_install.c - `make install` into a temporary DESTDIR/PREFIX gives a
 * lockbench that works from any directory, with no LOCKBENCH_* variable set:
 * it finds its scenarios and its clock shim relative to its own location,
 * and its man page renders; its tour finds the shipped runs.
 */
#include <criterion/criterion.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "fixture.h"

FX_SUITE(install, 240);

static char tmp[64], root[PATH_MAX], build[PATH_MAX], bin[PATH_MAX + 64];

static void setup(void)
{
	char buf[PATH_MAX];
	const char *lb = getenv("LOCKBENCH_BIN");
	cr_assert_not_null(lb, "run through make test: LOCKBENCH_BIN");
	snprintf(root, sizeof(root), "%s", fx_root());
	snprintf(buf, sizeof(buf), "%s", lb);
	snprintf(build, sizeof(build), "%s", dirname(buf)); /* build or build/san */
	strcpy(tmp, "/tmp/lbtest-install-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmp));
	snprintf(bin, sizeof(bin), "%s/d/usr/local/bin/lockbench", tmp);
}

/* Run @cmd in a shell, from @tmp, output to @tmp/out; its exit status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[4096], full[4096 + 640];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full),
		 "cd %s && env -u LOCKBENCH_SCENARIOS -u LOCKBENCH_CLOCK_SHIM -u LOCKBENCH_ADAPTERS "
		 "-u MAKEFLAGS -u MFLAGS -u WERROR -u SANFLAGS -u CFLAGS -u LDFLAGS -u BUILD "
		 "-u MAKELEVEL sh -c '%s' > %s/out 2>&1", tmp, cmd, tmp);
	int st = system(full);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(install, installed_lockbench_runs_from_anywhere, .init = setup)
{
	cr_assert_eq(sh("make -s -C %s install BUILD=%s DESTDIR=%s/d PREFIX=/usr/local", root, build,
			tmp), 0, "make install failed: %s", fx_slurp(tmp, "out"));
	cr_assert_eq(sh("%s run --scenario holder-pause --strategy token-lua --no-status --no-report "
			"--out %s/r", bin, tmp), 0, "%s", fx_slurp(tmp, "out"));
	cr_assert(strstr(fx_slurp(tmp, "r/summary.csv"), "token-lua,holder-pause,"),
		  "the installed binary did not find its scenario");
	/* the clock shim, installed in lib/lockbench: not skipped */
	cr_assert_eq(sh("%s run --scenario redlock-clock-jump --strategy redlock --no-status "
			"--no-report --out %s/j", bin, tmp), 0, "%s", fx_slurp(tmp, "out"));
	cr_assert_null(strstr(fx_slurp(tmp, "out"), "SKIPPED"), "%s", fx_slurp(tmp, "out"));
	cr_assert(strstr(fx_slurp(tmp, "j/events.csv"), ",node-clock,"));
	char run[PATH_MAX]; /* what the installed binary wrote agrees with itself */
	snprintf(run, sizeof(run), "%s/r", tmp);
	fx_recheck(run);
	snprintf(run, sizeof(run), "%s/j", tmp);
	fx_recheck(run);
	/* the man page renders and says what --help says */
	cr_assert_eq(sh("MANWIDTH=100 man -l %s/d/usr/local/share/man/man1/lockbench.1", tmp), 0,
		     "%s", fx_slurp(tmp, "out"));
	const char *man = fx_slurp(tmp, "out");
	cr_assert(strstr(man, "lockbench run") && strstr(man, "--strategy NAME") &&
		  strstr(man, "Exit status"), "%s", man);
	cr_assert_eq(sh("test -r %s/d/usr/local/share/doc/lockbench/docs/index.md", tmp), 0);
	/* the tour's reference runs, found in share/lockbench/tour from anywhere */
	cr_assert_eq(sh("%s tour --out %s/t", bin, tmp), 0, "%s", fx_slurp(tmp, "out"));
	cr_assert(strstr(fx_slurp(tmp, "out"), "share/lockbench/tour"), "%s", fx_slurp(tmp, "out"));
	cr_assert(strstr(fx_slurp(tmp, "t/report.html"), "{\"id\":\"failover\","));
	/* the library adapters, found beside the scenarios */
	cr_assert_eq(sh("%s list", bin), 0);
	cr_assert(strstr(fx_slurp(tmp, "out"), "redis-py@4.3.4"), "%s", fx_slurp(tmp, "out"));
	/* and the Node ones, with their installed packages: usable from the prefix */
	cr_assert(strstr(fx_slurp(tmp, "out"), "redlock@5.0.0-beta.2"), "%s", fx_slurp(tmp, "out"));
	cr_assert_null(strstr(fx_slurp(tmp, "out"), "UNAVAILABLE"), "%s", fx_slurp(tmp, "out"));
}

/* The user's CFLAGS may be anything: -O0, and -O3 -march=native, each build
 * the binary (gcc's analysis at each level found other warnings, and
 * -Werror made them a failed build); warnings are errors in the project's
 * own flags only (the default CFLAGS, make check's and make fuzz's). */
Test(install, the_build_takes_the_users_cflags, .init = setup)
{
	static const char *const flags[] = { "-O0", "-O3 -march=native" };
	fx_deadline(900); /* two whole builds on a shared 2-core machine */
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		cr_assert_eq(sh("make -s -j2 -C %s BUILD=%s/b%zu CFLAGS=\"%s\" %s/b%zu/lockbench", root,
				tmp, i, flags[i], tmp, i), 0, "make CFLAGS=\"%s\" failed: %s", flags[i],
			     fx_slurp(tmp, "out"));
		cr_assert_null(strstr(fx_slurp(tmp, "out"), "warning:"), "CFLAGS=\"%s\": %s", flags[i],
			       fx_slurp(tmp, "out"));
		cr_assert_eq(sh("%s/b%zu/lockbench list > /dev/null", tmp, i), 0, "%s",
			     fx_slurp(tmp, "out"));
	}
	/* -Werror: in the project's flags, not in the user's */
	cr_assert_eq(sh("make -n -C %s BUILD=%s/n %s/n/obj/harness/core/util.o", root, tmp, tmp), 0);
	cr_assert(strstr(fx_slurp(tmp, "out"), " -Werror "), "%s", fx_slurp(tmp, "out"));
	cr_assert_eq(sh("make -n -C %s BUILD=%s/n CFLAGS=-O0 %s/n/obj/harness/core/util.o", root, tmp,
			tmp), 0);
	cr_assert_null(strstr(fx_slurp(tmp, "out"), "-Werror"), "%s", fx_slurp(tmp, "out"));
}

/* make deb: build/lockbench_VERSION_ARCH.deb, built by dpkg-buildpackage
 * (debhelper) outside the source tree and clean for lintian (the target
 * fails on a warning); the Redis lessons' packages are its Depends, the rest
 * Recommends or Suggests; extracted with dpkg-deb -x into a temporary root,
 * its /usr/bin/lockbench finds its scenarios in /usr/share/lockbench and its
 * clock shim in /usr/lib/lockbench beside it, and its man page is there. */
Test(install, the_debian_package_builds_lints_and_runs_from_its_extracted_tree, .init = setup)
{
	char deb[PATH_MAX], ver[64];

	fx_deadline(1200);
	cr_assert_eq(sh("%s --version", getenv("LOCKBENCH_BIN")), 0);
	cr_assert_eq(sscanf(fx_slurp(tmp, "out"), "lockbench %63s", ver), 1);
	cr_assert_eq(sh("cd %s && find . -path ./build -prune -o -path ./.git -prune -o -print | "
			"sort > %s/before", root, tmp), 0);
	cr_assert_eq(sh("make -s -C %s deb BUILD=%s/b", root, tmp), 0, "make deb failed: %s",
		     fx_slurp(tmp, "out"));
	const char *said = fx_slurp(tmp, "out");
	cr_assert_null(strstr(said, "\nW: "), "lintian warned: %s", said);
	cr_assert_null(strstr(said, "\nE: "), "lintian erred: %s", said);
	cr_assert_eq(sh("dpkg --print-architecture"), 0);
	char arch[32];
	cr_assert_eq(sscanf(fx_slurp(tmp, "out"), "%31s", arch), 1);
	snprintf(deb, sizeof(deb), "%s/b/lockbench_%s_%s.deb", tmp, ver, arch);
	cr_assert_eq(sh("test -f %s", deb), 0, "no %s", deb);
	cr_assert_eq(sh("cd %s && find . -path ./build -prune -o -path ./.git -prune -o -print | "
			"sort | diff %s/before -", root, tmp), 0, "make deb wrote in the source tree: %s",
		     fx_slurp(tmp, "out"));

	cr_assert_eq(sh("dpkg-deb -f %s Package Version Architecture Depends Recommends Suggests", deb), 0);
	const char *f = fx_slurp(tmp, "out");
	char want[128];
	snprintf(want, sizeof(want), "Version: %s\n", ver);
	cr_assert(strstr(f, want), "%s", f);
	const char *dep = strstr(f, "Depends: "), *rec = strstr(f, "Recommends: ");
	cr_assert(dep && rec && dep < rec, "%s", f);
	static const char *const needs[] = { "redis-server", "redis-tools", "libhiredis0.14",
					     "libinih1" };
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		const char *at = strstr(dep, needs[i]);
		cr_assert(at && at < rec, "%s is not in Depends: %s", needs[i], f);
	}
	cr_assert(strstr(rec, "gnuplot-nox"), "%s", f);
	cr_assert(strstr(f, "Suggests: ") && strstr(strstr(f, "Suggests: "), "etcd-server"), "%s", f);

	cr_assert_eq(sh("dpkg-deb -c %s", deb), 0);
	f = fx_slurp(tmp, "out");
	static const char *const files[] = { "./usr/bin/lockbench\n", "./usr/lib/lockbench/libfakeclock.so\n",
					     "./usr/share/lockbench/scenarios/holder-pause.ini\n",
					     "./usr/share/man/man1/lockbench.1.gz\n",
					     "./usr/share/doc/lockbench/copyright\n" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		cr_assert(strstr(f, files[i]), "%s is not in the package", files[i]);

	cr_assert_eq(sh("dpkg-deb -x %s %s/root", deb, tmp), 0, "%s", fx_slurp(tmp, "out"));
	cr_assert_eq(sh("%s/root/usr/bin/lockbench run --scenario holder-pause --strategy token-lua "
			"--no-status --no-report --out %s/pr", tmp, tmp), 0, "%s", fx_slurp(tmp, "out"));
	cr_assert(strstr(fx_slurp(tmp, "pr/summary.csv"), "token-lua,holder-pause,"),
		  "the packaged binary did not find its scenario");
	cr_assert_eq(sh("%s/root/usr/bin/lockbench run --scenario redlock-clock-jump --strategy redlock "
			"--no-status --no-report --out %s/pj", tmp, tmp), 0, "%s", fx_slurp(tmp, "out"));
	cr_assert_null(strstr(fx_slurp(tmp, "out"), "SKIPPED"), "the packaged clock shim was not found: "
		       "%s", fx_slurp(tmp, "out"));
	char run[PATH_MAX];
	snprintf(run, sizeof(run), "%s/pr", tmp);
	fx_recheck(run);
	cr_assert_eq(sh("MANWIDTH=100 man -l %s/root/usr/share/man/man1/lockbench.1.gz", tmp), 0, "%s",
		     fx_slurp(tmp, "out"));
	cr_assert(strstr(fx_slurp(tmp, "out"), "--openmetrics FILE"), "%s", fx_slurp(tmp, "out"));
}
