/*
 * test_manifest.c - the adapter manifest reader (pure): every shipped
 * manifest reads, and every malformed one is refused naming its file, line
 * or field, never half-read.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adapter.h"
#include "fixture.h"

static char err[4096];

/* Parse @text with stderr captured into err. */
static int parse(const char *text, struct lb_adapter_def *d)
{
	fflush(stderr);
	FILE *cap = tmpfile();
	int saved = dup(2);
	dup2(fileno(cap), 2);
	int rc = lb_adapter_manifest_parse(text, "x.adapter", "/dir", d);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(cap);
	size_t n = fread(err, 1, sizeof(err) - 1, cap);
	err[n] = '\0';
	fclose(cap);
	return rc;
}

FX_SUITE(manifest, 60);

Test(manifest, every_shipped_manifest_reads)
{
	const char *dir = getenv("LOCKBENCH_ADAPTERS");
	cr_assert_not_null(dir, "run through make test");
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (len < 9 || strcmp(e->d_name + len - 8, ".adapter"))
			continue;
		char *text = fx_slurp(dir, e->d_name);
		struct lb_adapter_def def;
		cr_assert_eq(parse(text, &def), 0, "%s: %s", e->d_name, err);
		cr_assert(def.name[0] && def.argv[0], "%s", e->d_name);
		n++;
	}
	closedir(d);
	cr_assert_geq(n, 13);
}

Test(manifest, a_good_one_in_full)
{
	struct lb_adapter_def d;
	cr_assert_eq(parse("; comment\nname = lib@1.0\nlibrary = lib\nversion = 1.0\nsends = SET\n"
			   "  DEL\nprogram = a.py\ninterpreter = /usr/bin/python3\nargs = x  y\n"
			   "claims = MDO\nnodes = 5\n", &d), 0, "%s", err);
	cr_assert_str_eq(d.name, "lib@1.0");
	cr_assert_str_eq(d.sends, "SET DEL");
	cr_assert_eq(d.min_nodes, 5);
	cr_assert_eq(d.claims, LB_CLAIM_MUTEX | LB_CLAIM_DEADLOCK_FREE | LB_CLAIM_OWNER_RELEASE);
	cr_assert_str_eq(d.argv[0], "/usr/bin/python3");
	cr_assert_str_eq(d.argv[1], "/dir/a.py");
	cr_assert_str_eq(d.argv[2], "x");
	cr_assert_str_eq(d.argv[3], "y");
	cr_assert_null(d.argv[4]);
	/* a null adapter built by make: its program is found when loaded, bare here */
	cr_assert_eq(parse("name = null-x\nkind = null\nbuilt = null-adapter\nargs = a\n", &d), 0,
		     "%s", err);
	cr_assert_str_eq(d.kind, "null");
	cr_assert_str_eq(d.argv[0], "null-adapter");
	cr_assert_str_eq(d.argv[1], "a");
}

Test(manifest, malformed_ones_are_refused_with_the_reason)
{
	char longline[400], longval[400];
	memset(longline, 'a', sizeof(longline));
	snprintf(longline, sizeof(longline), "name = x\nprogram = p\nsummary = %0300d\n", 0);
	snprintf(longval, sizeof(longval), "name = x\nprogram = p\nlibrary = %0100d\n", 0);
	static const char *const names_bad[] = { "x\"; system(\"touch PWNED\")", "a,b", "a b", "exec:/bin/sh",
						 "$(id)", "a/../b" };
	const struct {
		const char *text, *says;
	} bad[] = {
		{ "name = x\n", "program missing" },
		{ "program = p\n", "name missing" },
		{ "name = x\nprogram = p\ncolour = red\n", "colour: not a manifest key" },
		{ "[lib]\nname = x\nprogram = p\n", "a manifest has no [sections]" },
		{ "name = x\nname = y\nprogram = p\n", "name: given twice" },
		{ "name = x\nprogram = p\nsummary = a\n  b\n", "summary: given twice" },
		{ "name = x\nprogram = p\nclaims = MXZ\n", "claims: expected claim letters" },
		{ "name = x\nprogram = p\nnodes = 0\n", "nodes: expected the lock nodes" },
		{ "name = x\nprogram = p\nnodes = 5x\n", "nodes: expected the lock nodes" },
		{ "name = x\nprogram = p\nargs = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n", "args: more words than" },
		{ longline, "x.adapter:3: not a valid adapter manifest: a line longer than" },
		{ longval, "library: too long" },
		{ "name = x\nprogram = p\nthis is not ini\n", "x.adapter:3:" },
		{ "name = x\nprogram = p\nkind = mock\n", "kind: expected library (the default) or null" },
		{ "name = x\nprogram = p\nhosts = maybe\n", "hosts: expected yes (the default" },
		{ "name = x\nprogram = p\nbuilt = b\n", "program and built both given" },
		{ "name = x\nbuilt = ../../bin/sh\n", "built: expected the name of a program make builds" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct lb_adapter_def d;
		cr_assert_eq(parse(bad[i].text, &d), LB_EINVAL, "accepted: %s", bad[i].text);
		cr_assert(strstr(err, bad[i].says), "expected '%s' in: %s", bad[i].says, err);
		cr_assert(strstr(err, "x.adapter"), "the file is not named: %s", err);
	}
	for (size_t i = 0; i < sizeof(names_bad) / sizeof(names_bad[0]); i++) {
		char t[256];
		struct lb_adapter_def d;
		snprintf(t, sizeof(t), "name = %s\nprogram = p\n", names_bad[i]);
		cr_assert_eq(parse(t, &d), LB_EINVAL, "accepted the name %s", names_bad[i]);
		cr_assert(strstr(err, "name: expected letters, digits"), "%s", err);
	}
}
