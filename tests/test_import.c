/*
 * test_import.c - a production history through the oracle (`lockbench check
 * --history`, harness/io/import.c, uncertain.c, import_dir.c), through the real
 * binary: a hand-written production CSV with one certain overlap, a near miss
 * the clocks' uncertainty makes possible and another lock that overlaps in
 * time only; the same in RFC 3339; a fence going backwards; hostile files,
 * each refused by file, line and field with nothing written; --out as a run
 * directory that `check DIR` agrees with (and disagrees with once edited), its
 * page stepped through in a real browser; the docs' awk turning worker logs
 * into the CSV. And the pure parts: times read exactly, the margin rule.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "import.h"
#include "util.h"
#include "uncertain.h"

FX_SUITE(import, 120);

static char tmpdir[64];

static void mktmp(void)
{
	strcpy(tmpdir, "/tmp/lbtest-import-XXXXXX");
	cr_assert_not_null(fx_mkdtemp(tmpdir));
}

/* The source tree (the parent of $LOCKBENCH_SCENARIOS). */
static const char *root(void)
{
	return fx_root();
}

/* tests/history/@name */
static const char *sample(const char *name)
{
	static char path[4][PATH_MAX];
	static int k;
	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/tests/history/%s", root(), name);
	return path[k];
}

/* lockbench with @args; its exit code; what it printed in tmpdir/output. */
static int lb(const char *const *args)
{
	return fx_lockbench(tmpdir, args);
}

static const char *output(void)
{
	return fx_slurp(tmpdir, "output");
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The overlap lines of an output ("CERTAIN ..." and "possible ..."), in order. */
static void overlap_lines(const char *out, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (const char *p = out; *p;) {
		size_t l = strcspn(p, "\n");
		if ((!strncmp(p, "CERTAIN ", 8) || !strncmp(p, "possible ", 9)) && used + l + 2 < len)
			used += (size_t)snprintf(buf + used, len - used, "%.*s\n", (int)l, p);
		p += l + (p[l] == '\n');
	}
}

Test(import, one_certain_overlap_with_its_clients_key_and_length, .init = mktmp)
{
	const char *args[] = { "check", "--history", sample("prod.csv"), NULL };

	cr_assert_eq(lb(args), 1, "a certain overlap exits 1:\n%s", output());
	const char *out = output();
	cr_assert_eq(count(out, "\nCERTAIN "), 1, "exactly one certain overlap:\n%s", out);
	cr_assert(strstr(out, "CERTAIN   lock 'orders': 'w-alpha' (line 8) and 'w-beta' (line 9) "
			 "inside at once from 2025-11-25T12:00:00.450123456Z (+0.350123456 s) for "
			 "149.876544 ms, more than the clocks' uncertainty (5.000000 ms) could undo; "
			 "granted by 'redis-a' and 'redis-b'\n"), "%s", out);
	/* the near miss: 3 ms apart, the clocks 2 + 3 ms: possible, never certain */
	cr_assert_eq(count(out, "\npossible "), 1, "%s", out);
	cr_assert(strstr(out, "possible  lock 'orders': 'w-alpha' (line 12) left 3.000000 ms before "
			 "'w-beta' (line 13) entered"), "%s", out);
	/* billing overlaps orders in time, and never itself */
	cr_assert_null(strstr(out, "lock 'billing':"), "%s", out);
	cr_assert(strstr(out, "sections  10\nclients   2 ('w-alpha', 'w-beta')\n"
			 "keys      2 ('orders', 'billing')\nspan      1.300000000 s"), "%s", out);
	cr_assert(strstr(out, "overlaps  1 certain, 1 possible\n"), "%s", out);
	cr_assert(strstr(out, "fences    0 backwards (certain), 0 possible; monotonic with the "
			 "enters per lock: yes\n"), "%s", out);
	cr_assert(strstr(out, "verdict   overlap: 1 overlap certain"), "%s", out);
}

/* The same history in RFC 3339 (UTC, +01:00, -05:00, a space for the T)
 * with the uncertainty given once on the command line says the same; without
 * it the near miss is no overlap at all. */
Test(import, the_rfc3339_variant_says_the_same, .init = mktmp)
{
	static char epoch[4096], rfc[4096];
	const char *a[] = { "check", "--history", sample("prod.csv"), NULL };
	const char *b[] = { "check", "--history", sample("prod-rfc3339.csv"), "--clock-uncertainty",
			    "2.5", NULL };
	const char *c[] = { "check", "--history", sample("prod-rfc3339.csv"), NULL };

	cr_assert_eq(lb(a), 1);
	overlap_lines(output(), epoch, sizeof(epoch));
	cr_assert_eq(lb(b), 1, "%s", output());
	overlap_lines(output(), rfc, sizeof(rfc));
	cr_assert_str_eq(rfc, epoch);
	cr_assert(strstr(output(), "clocks    each off by up to 2.500000 ms (--clock-uncertainty)\n"),
		  "%s", output());
	cr_assert_eq(lb(c), 1);
	cr_assert(strstr(output(), "overlaps  1 certain, 0 possible\n"), "with exact clocks a "
		  "near miss is no overlap:\n%s", output());
	cr_assert(strstr(output(), "for 149.876544 ms"), "%s", output());
}

Test(import, a_fence_going_backwards_is_a_finding, .init = mktmp)
{
	const char *exact[] = { "check", "--history", sample("fences-backwards.csv"), NULL };
	const char *loose[] = { "check", "--history", sample("fences-backwards.csv"),
				"--clock-uncertainty=150", NULL };

	cr_assert_eq(lb(exact), 0, "no overlap: exit 0 whatever the fences:\n%s", output());
	const char *out = output();
	cr_assert_eq(count(out, "\nfence     "), 1, "billing's own fences are not orders':\n%s", out);
	cr_assert(strstr(out, "fence     lock 'orders': 'w-alpha' (line 7) entered with fence 42 at "
			 "2025-11-25T12:00:00.500000000Z (+0.400000000 s), after 'w-beta' (line 6) "
			 "entered with fence 43 at 2025-11-25T12:00:00.300000000Z (+0.200000000 s): "
			 "backwards, certain"), "%s", out);
	cr_assert(strstr(out, "fences    1 backwards (certain), 0 possible; monotonic with the "
			 "enters per lock: no\n"), "%s", out);
	cr_assert(strstr(out, "verdict   safe"), "%s", out);
	/* 200 ms apart, the clocks 300 ms: the order itself is in doubt */
	cr_assert_eq(lb(loose), 0, "%s", output());
	cr_assert(strstr(output(), "backwards, possible (the enters are closer than the clocks' "
			  "uncertainty)"), "%s", output());
	cr_assert(strstr(output(), "fences    0 backwards (certain), 1 possible;"), "%s", output());
	cr_assert(strstr(output(), "verdict   inconclusive: no overlap certain; 4 possible"), "%s",
		  output());
}

/* A hostile file: its bytes, and the message it must get. */
struct hostile {
	const char *name;
	const char *bytes;
	size_t len;          /* 0: strlen(bytes) */
	const char *said;    /* after "FILE:" */
};

#define H(n, b, s) { n, b, 0, s }

static const struct hostile hostile[] = {
	H("columns.csv", "client,enter,exit\nw1,1,2\nw1,3,4,5\n",
	  "3: fields: expected 3, as the header on line 1 names them, got 4: 'w1,3,4,5'"),
	H("unknown.csv", "# from the logs\nclient,enter,exit,colour\n",
	  "2: field column 4: expected a column name: client, enter, exit, key, token, fence, server "
	  "or clock_uncertainty_ms, got 'colour'"),
	H("missing.csv", "client,enter\nw1,1\n", "1: header: expected a column exit"),
	/* a header alone is no history (it read "inconclusive", exit 0) */
	H("header-only.csv", "# from the logs\nclient,enter,exit\n\n# none today\n",
	  " expected at least one critical section after the header on line 2, "
	  "got none (only blank or # lines follow it)"),
	H("time.csv", "client,enter,exit\nw1,yesterday,2\n", "2: field enter: expected a time, "
	  "epoch seconds (digits, a point, up to 9 decimals) or an RFC 3339 date"),
	H("order.csv", "client,enter,exit\nw1,1764072000.5,1764072000.25\n", "2: field exit: "
	  "expected a time at or after enter (2025-11-25T12:00:00.500000000Z), got '1764072000.25'"),
	H("nan.csv", "client,enter,exit\nw1,nan,2\n", "2: field enter: expected a time, epoch "
	  "seconds (digits, a point, up to 9 decimals) or an RFC 3339 date (2026-11-25T12:00:00.5Z), "
	  "got 'nan'"),
	H("inf.csv", "exit,client,enter\ninf,w1,1\n", "2: field exit: expected a time, epoch seconds"),
	H("huge.csv", "client,enter,exit\nw1,1,99999999999999999999999\n", "2: field exit: expected "
	  "a time, epoch seconds up to 9000000000 (the year 2255), got '99999999999999999999999'"),
	H("millis.csv", "client,enter,exit\nw1,1764072000123,1764072000124\n", "2: field enter: "
	  "expected a time, epoch seconds up to 9000000000 (the year 2255); this looks like milli- "
	  "or microseconds"),
	H("decimals.csv", "client,enter,exit\nw1,1764072000.1234567891,1764072001\n", "2: field "
	  "enter: expected a time, at most 9 decimals: nanoseconds, got '1764072000.1234567891'"),
	H("month.csv", "client,enter,exit\nw1,2025-13-01T00:00:00Z,2025-12-01T00:00:00Z\n",
	  "2: field enter: expected a time, a month from 01 to 12, got '2025-13-01T00:00:00Z'"),
	H("fence.csv", "client,enter,exit,fence\nw1,1,2,99999999999999999999\n", "2: field fence: "
	  "expected an integer from 0 to 2305843009213693951, or nothing, got '99999999999999999999'"),
	H("uncertainty.csv", "client,enter,exit,clock_uncertainty_ms\nw1,1,2,-3\n", "2: field "
	  "clock_uncertainty_ms: expected milliseconds from 0 to 3600000, up to 6 decimals, got '-3'"),
	{ "nul.csv", "client,enter,exit\nw\0" "1,1,2\n", sizeof("client,enter,exit\nw\0" "1,1,2\n") - 1,
	  "2: field client: expected text "
	  "without control characters (a NUL, a CR: line ends are \\n or \\r\\n), got 'w\\x001'" },
	H("crlf.csv", "client,enter,exit\r\nw1,1,2\r\n\rw2,3,4\r\n", "3: field client: expected "
	  "text without control characters (a NUL, a CR: line ends are \\n or \\r\\n), got '\\x0dw2'"),
	H("quote.csv", "client,enter,exit\n\"w1,1,2\n", "2: field client: expected a closing quote "
	  "(\"), got the end of the line"),
	H("self.csv", "client,enter,exit\nw1,10,20\nw1,15,30\n", "3: field enter: expected a time "
	  "at or after 1970-01-01T00:00:20.000000000Z, when this client's section of line 2 on the "
	  "same lock exited"),
	H("empty.csv", "", "1: header: expected a line naming the columns"),
};

/* An overlong field and an overlong line, made here. */
static void write_long(const char *path, size_t field, size_t line)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "client,enter,exit\n");
	for (size_t i = 0; i < field; i++)
		fputc('w', f);
	fprintf(f, ",1,2");
	for (size_t i = field + 4; i < line; i++)
		fputc(' ', f);
	fprintf(f, "\n");
	fclose(f);
}

/* Refused with exit 4, the message ("lockbench: FILE:" then @said; NULL: any),
 * and no output directory, not even a temporary one beside it. */
static void refused(const char *file, const char *said)
{
	char out[PATH_MAX], want[1024];
	const char *args[] = { "check", "--history", file, "--out", out, NULL };

	snprintf(out, sizeof(out), "%s/out", tmpdir);
	cr_assert_eq(lb(args), 4, "%s must be refused (exit 4):\n%s", file, output());
	snprintf(want, sizeof(want), "lockbench: %s:%s", file, said ? said : "");
	cr_assert(!said || strstr(output(), want), "expected\n  %s\ngot\n  %s", want, output());
	cr_assert_neq(access(out, F_OK), 0, "%s: a refused file left %s", file, out);
	DIR *d = opendir(tmpdir);
	cr_assert_not_null(d);
	for (struct dirent *e; (e = readdir(d));)
		cr_assert_null(strstr(e->d_name, ".lockbench-"), "%s left %s behind", file, e->d_name);
	closedir(d);
}

Test(import, hostile_files_are_refused_by_file_line_and_field, .init = mktmp)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		const struct hostile *h = &hostile[i];
		snprintf(path, sizeof(path), "%s/%s", tmpdir, h->name);
		FILE *f = fopen(path, "wb");
		cr_assert_not_null(f);
		size_t len = h->len ? h->len : strlen(h->bytes);
		cr_assert_eq(fwrite(h->bytes, 1, len, f), len);
		fclose(f);
		refused(path, h->said);
	}
	snprintf(path, sizeof(path), "%s/long-field.csv", tmpdir);
	write_long(path, 300, 310);
	refused(path, "2: field client: expected at most 200 bytes, got 300: 'wwwwwwwww");
	snprintf(path, sizeof(path), "%s/long-line.csv", tmpdir);
	write_long(path, 10, 5000);
	refused(path, "2: expected a line of at most 4096 bytes, got a longer one");
	/* what is not a regular file is named, never read (a FIFO would block) */
	snprintf(path, sizeof(path), "%s/a-directory.csv", tmpdir);
	cr_assert_eq(mkdir(path, 0755), 0);
	refused(path, " expected a regular file of critical sections (CSV), got a directory");
	snprintf(path, sizeof(path), "%s/a-fifo.csv", tmpdir);
	cr_assert_eq(mkfifo(path, 0644), 0);
	refused(path, " expected a regular file of critical sections (CSV), got a FIFO");
	refused("/dev/zero", " expected a regular file of critical sections (CSV), got a character "
		"device");
	snprintf(path, sizeof(path), "%s/absent.csv", tmpdir);
	refused(path, NULL);
	cr_assert(strstr(output(), "cannot read") && strstr(output(), "No such file"), "%s", output());
}

/* What the command line refuses: exit 2, nothing read. */
Test(import, usage_errors_exit_2, .init = mktmp)
{
	char full[PATH_MAX];
	const char *bad_unc[] = { "check", "--history", sample("prod.csv"), "--clock-uncertainty",
				  "nan", NULL };
	const char *unknown[] = { "check", "--history", sample("prod.csv"), "--colour", NULL };
	const char *nofile[] = { "check", "--history", NULL };
	const char *taken[] = { "check", "--history", sample("prod.csv"), "--out", full, NULL };

	cr_assert_eq(lb(bad_unc), 2, "%s", output());
	cr_assert(strstr(output(), "--clock-uncertainty 'nan': expected milliseconds"), "%s", output());
	cr_assert_eq(lb(unknown), 2, "%s", output());
	cr_assert_eq(lb(nofile), 2, "%s", output());
	snprintf(full, sizeof(full), "%s/full", tmpdir);
	cr_assert_eq(mkdir(full, 0755), 0);
	char keep[PATH_MAX + 16];
	snprintf(keep, sizeof(keep), "%s/keep.txt", full);
	FILE *f = fopen(keep, "w");
	cr_assert_not_null(f);
	fclose(f);
	cr_assert_eq(lb(taken), 2, "%s", output());
	cr_assert(strstr(output(), "not empty (it holds 'keep.txt')"), "%s", output());
	cr_assert_eq(access(keep, F_OK), 0, "what was in --out must stay");
}

/* Rewrite @dir/@name with @from replaced by @to (once). */
static void edit(const char *dir, const char *name, const char *from, const char *to)
{
	char path[PATH_MAX], *text = strdup(fx_slurp(dir, name));
	char *at = strstr(text, from);

	cr_assert_not_null(at, "%s/%s has no '%s'", dir, name, from);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	fclose(f);
	free(text);
}

Test(import, out_writes_a_run_directory_check_agrees_with, .init = mktmp)
{
	char dir[PATH_MAX], copy[PATH_MAX * 2];
	snprintf(dir, sizeof(dir), "%s/incident", tmpdir);
	const char *args[] = { "check", "--history", sample("prod.csv"), "--out", dir, NULL };
	const char *check[] = { "check", dir, NULL };
	const char *report[] = { "report", dir, NULL };

	cr_assert_eq(lb(args), 1, "%s", output());
	cr_assert(strstr(output(), "written   "), "%s", output());
	cr_assert_str_eq(fx_slurp(dir, "names.csv"), "lane,client,key\n0,w-alpha,orders\n"
			 "1,w-alpha,billing\n2,w-beta,orders\n3,w-beta,billing\n");
	snprintf(copy, sizeof(copy), "%s", fx_slurp(dir, "imported.csv"));
	cr_assert_str_eq(copy, fx_slurp(root(), "tests/history/prod.csv"), "imported.csv must be "
			 "the file as given");
	cr_assert(strstr(fx_slurp(dir, "history.csv"), "\n2,1,350123456,350123456,600000000,"
			 "600000000,released,104,,,\n"), "%s", fx_slurp(dir, "history.csv"));
	cr_assert(strstr(fx_slurp(dir, "overlaps.csv"), "\ncertain,orders,w-alpha,8,w-beta,9,"
			 "350123456,500000000,149876544,149876544,5000000,"
			 "2025-11-25T12:00:00.450123456Z\n"), "%s", fx_slurp(dir, "overlaps.csv"));
	const char *sum = fx_slurp(dir, "summary.csv");
	cr_assert(strstr(sum, "imported_from,") == sum, "%s", sum);
	cr_assert(strstr(sum, "\nprod.csv,4,2,2,1.300000,10,7.69,n/a,n/a,n/a,1,149.877,2,1,1,0.000000,"
			 "0,0,overlap,"), "%s", sum);
	cr_assert(strstr(fx_slurp(dir, "summary.json"), "\"acquire_p99_us\": {\"value\": null, \"unit\": "
			 "\"us\", \"why\": \"an imported history holds when each section entered and "
			 "exited, not its acquire calls\"}"), "%s", fx_slurp(dir, "summary.json"));
	/* the report: titled as the history, the overlap a step with its names */
	const char *md = fx_slurp(dir, "report.md");
	cr_assert(strstr(md, "# imported history: prod.csv\n"), "%s", md);
	cr_assert(strstr(md, "- **Certain overlap at 0.350 s on lock orders: w-alpha (client 0, line "
			 "8) and w-beta (client 2, line 9) inside at once for 149.876544 ms**"), "%s", md);
	cr_assert(strstr(md, "| 2 | w-beta | orders |"), "%s", md);
	const char *html = fx_slurp(dir, "report.html");
	cr_assert(strstr(html, "<title>imported history: prod.csv</title>"), "%s", html);
	cr_assert(strstr(html, "<h1>imported history: prod.csv</h1>"), "not a run's title");
	cr_assert(strstr(html, "[0.350123,\"story\",\"\\u003cb\\u003eCertain overlap at 0.350 s on "
			 "lock orders: w-alpha (client 0, line 8) and w-beta (client 2, line 9) inside "
			 "at once for 149.876544 ms\\u003c/b\\u003e"), "the overlap's step:\n%s", html);
	cr_assert(strstr(html, "\"names\":[\"0: w-alpha · orders\",\"1: w-alpha · billing\","
			 "\"2: w-beta · orders\",\"3: w-beta · billing\"]"), "%s", html);
	/* check agrees, names what it checked, and report draws it again */
	cr_assert_eq(lb(check), 0, "%s", output());
	cr_assert(strstr(output(), "overlaps.csv           agrees with imported.csv"), "%s", output());
	cr_assert(strstr(output(), "overlaps_certain       summary 1              recomputed 1"),
		  "%s", output());
	cr_assert(strstr(output(), "summary.csv agrees with imported.csv"), "%s", output());
	cr_assert_eq(lb(report), 0, "%s", output());
	/* and disagrees once a figure is edited, or the file it kept */
	edit(dir, "summary.csv", ",1,1,0.000000,", ",0,1,0.000000,");
	cr_assert_eq(lb(check), 1, "%s", output());
	cr_assert(strstr(output(), "overlaps_certain       summary 0              recomputed 1 "
			 "             DIFFERS"), "%s", output());
	edit(dir, "summary.csv", ",0,1,0.000000,", ",1,1,0.000000,");
	cr_assert_eq(lb(check), 0, "%s", output());
	edit(dir, "imported.csv", "w-beta,orders,1764072000.450123456", "w-beta,orders,1764072000.650123456");
	cr_assert_eq(lb(check), 1, "%s", output());
	cr_assert(strstr(output(), "history.csv            DIFFERS from what imported.csv gives at "
			 "line 6"), "%s", output());
	cr_assert(strstr(output(), "overlaps.csv           DIFFERS"), "%s", output());
}

/* report.html in a real browser (Chromium, tests/browser/drive.js): the
 * page opens on the certain overlap, two inside, by name; the next steps are
 * what the stamps show and the near miss. */
/* A result whose name looks like an import's temporary copy (DIR.lockbench-
 * XXXXXX), and a run's named like a server's directory, are results: a later
 * import's sweep of stale copies (and a run's of stale server directories)
 * leaves them (the hostile review: both were removed as stale). */
Test(import, a_result_named_like_a_temporary_copy_is_never_swept, .init = mktmp)
{
	char inc[160], copy[160], run[200], tmp[160];
	snprintf(inc, sizeof(inc), "%s/inc", tmpdir);
	snprintf(copy, sizeof(copy), "%s/inc.lockbench-abc123", tmpdir);
	snprintf(tmp, sizeof(tmp), "%s/tmp", tmpdir);
	cr_assert_eq(mkdir(tmp, 0755), 0);
	snprintf(run, sizeof(run), "%s/lockbench-redis-results", tmp);
	const char *first[] = { "check", "--history", sample("prod.csv"), "--out", copy, NULL };
	cr_assert_eq(lb(first), 1, "%s", output());
	setenv("TMPDIR", tmp, 1);
	const char *a_run[] = { "run", "--strategy", "set-nx-px", "--duration", "0.5", "--no-status",
				"--no-report", "--out", run, NULL };
	cr_assert_eq(lb(a_run), 0, "%s", output());
	char inc2[PATH_MAX];
	snprintf(inc2, sizeof(inc2), "%s/another", tmpdir);
	const char *again[] = { "run", "--strategy", "set-nx-px", "--duration", "0.5", "--no-status",
				"--no-report", "--out", inc2, NULL };
	cr_assert_eq(lb(again), 0, "%s", output()); /* its servers' sweep of $TMPDIR */
	unsetenv("TMPDIR");
	/* an import into inc sweeps the stale copies inc.lockbench-XXXXXX */
	const char *second[] = { "check", "--history", sample("prod.csv"), "--out", inc, NULL };
	cr_assert_eq(lb(second), 1, "%s", output());
	snprintf(inc2, sizeof(inc2), "%s/inc.lockbench-abc123/summary.csv", tmpdir);
	cr_assert_eq(access(inc2, F_OK), 0, "the import named inc.lockbench-abc123 was swept");
	snprintf(inc2, sizeof(inc2), "%s/summary.csv", run);
	cr_assert_eq(access(inc2, F_OK), 0, "the run named lockbench-redis-results was swept");
	const char *check[] = { "check", copy, NULL };
	cr_assert_eq(lb(check), 0, "%s", output());
}

/* The command the terminal says re-derives the directory is one a user may
 * paste: the name a shell word (it was printed bare: $(...) in a name ran). */
Test(import, the_rederive_command_is_quoted_for_a_shell, .init = mktmp)
{
	char dir[160], said[400];
	snprintf(dir, sizeof(dir), "%s/$(touch PWNED) it's", tmpdir);
	const char *args[] = { "check", "--history", sample("prod.csv"), "--out", dir, NULL };
	cr_assert_eq(lb(args), 1, "%s", output());
	snprintf(said, sizeof(said), "(`lockbench check '%s/$(touch PWNED) it'\\''s'` re-derives it)",
		 tmpdir);
	cr_assert(strstr(output(), said), "%s\nnot found in:\n%s", said, output());
}

Test(import, the_page_steps_to_the_overlap_in_a_browser, .init = mktmp)
{
	char dir[PATH_MAX], shot[PATH_MAX], cmd[PATH_MAX * 4];
	static char out[1 << 16];
	snprintf(dir, sizeof(dir), "%s/incident", tmpdir);
	snprintf(shot, sizeof(shot), "%s/page.png", tmpdir);
	const char *args[] = { "check", "--history", sample("prod.csv"), "--out", dir, NULL };

	cr_assert_eq(lb(args), 1, "%s", output());
	cr_assert_eq(system("command -v chromium >/dev/null && command -v node >/dev/null"), 0,
		     "chromium and node are installed by harness/deps.sh: a test that cannot run "
		     "does not pass");
	/* runs: node (nodejs), chromium (chromium) */
	snprintf(cmd, sizeof(cmd), "node '%s/tests/browser/drive.js' '%s/report.html' '%s' n,n 2>&1",
		 root(), dir, shot);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	int status = pclose(p);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "drive.js failed:\n%s", out);
	cr_assert(strstr(out, "\"errors\": []"), "the page threw script errors:\n%s", out);
	const char *first = strstr(out, "\"after\": \"load\"");
	cr_assert_not_null(first, "%s", out);
	cr_assert(strstr(first, "\"pos\": \"step 1 of 3\""), "%s", out);
	cr_assert(strstr(first, "\"inside\": 2"), "%s", out);
	cr_assert(strstr(first, "\"current\": \"Certain overlap at 0.350 s on lock orders: w-alpha"),
		  "%s", out);
	cr_assert(strstr(first, "\"0: w-alpha · orders is inside since 0.300 s\"") &&
		  strstr(first, "\"2: w-beta · orders is inside since 0.350 s\""), "%s", out);
	cr_assert(strstr(out, "\"current\": \"Possible overlap at 0.803 s on lock orders: w-alpha"),
		  "%s", out);
}

/* The awk block of docs/running.md ("From a worker's log to the CSV"), run
 * as the docs give it on two workers' logs, makes a CSV with the overlap. */
Test(import, the_docs_awk_turns_worker_logs_into_the_csv, .init = mktmp)
{
	char *doc = strdup(fx_slurp(root(), "docs/running.md")), csv[PATH_MAX];
	const char *at = strstr(doc, "### From a worker's log to the CSV\n");
	cr_assert_not_null(at, "docs/running.md has no section 'From a worker's log to the CSV'");
	/* the example the docs show is what the log holds */
	const char *log = fx_slurp(root(), "tests/history/worker-a.log");
	cr_assert(strstr(log, "2025-11-25T12:00:00.400000Z w-alpha INFO lock acquired key=orders "
			  "fence=103\n") && strstr(at, "2025-11-25T12:00:00.400000Z w-alpha INFO lock "
			  "acquired key=orders fence=103\n"), "the docs' example and the log differ");
	const char *code = strstr(at, "```sh\n");
	cr_assert_not_null(code);
	code += 6;
	const char *end = strstr(code, "```");
	cr_assert_not_null(end);
	char *block = strndup(code, (size_t)(end - code));
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "worker-b.log" : "worker-a.log";
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
		FILE *f = fopen(path, "w");
		cr_assert_not_null(f);
		fputs(fx_slurp(root(), i ? "tests/history/worker-b.log" : "tests/history/worker-a.log"), f);
		fclose(f);
	}
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (chdir(tmpdir) < 0)
			_exit(126);
		execl("/bin/sh", "sh", "-c", block, (char *)NULL); /* runs: sh, awk (the docs' own) */
		_exit(127);
	}
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the docs' awk failed");
	free(block);
	free(doc);
	snprintf(csv, sizeof(csv), "%s/sections.csv", tmpdir);
	cr_assert(strstr(fx_slurp(tmpdir, "sections.csv"), "client,key,enter,exit,fence\n"
			 "w-alpha,orders,2025-11-25T12:00:00.100000Z,2025-11-25T12:00:00.200000Z,101\n"),
		  "%s", fx_slurp(tmpdir, "sections.csv"));
	const char *args[] = { "check", "--history", csv, "--clock-uncertainty", "2", NULL };
	cr_assert_eq(lb(args), 1, "%s", output());
	cr_assert(strstr(output(), "CERTAIN   lock 'orders': 'w-alpha' (line 3) and 'w-beta' (line 6) "
			 "inside at once from 2025-11-25T12:00:00.450123000Z (+0.350123000 s) for "
			 "149.877000 ms"), "%s", output());
	cr_assert(strstr(output(), "overlaps  1 certain, 1 possible\n"), "%s", output());
}

/* ---- the pure parts ---- */

static int64_t t(const char *s)
{
	char why[200];
	int64_t ns = -1;
	cr_assert_eq(lb_import_parse_time(s, &ns, why, sizeof(why)), 0, "'%s': %s", s, why);
	return ns;
}

static void no_time(const char *s)
{
	char why[200];
	int64_t ns;
	cr_assert_eq(lb_import_parse_time(s, &ns, why, sizeof(why)), -1, "'%s' was read", s);
}

Test(import, times_are_read_exactly_in_nanoseconds)
{
	char buf[64];

	cr_assert_eq(t("1764072000.123456789"), INT64_C(1764072000123456789));
	cr_assert_eq(t("1764072000.1"), INT64_C(1764072000100000000));
	cr_assert_eq(t("1764072000"), INT64_C(1764072000000000000));
	cr_assert_eq(t("2025-11-25T12:00:00.123456789Z"), INT64_C(1764072000123456789));
	cr_assert_eq(t("2025-11-25T13:00:00.123456789+01:00"), INT64_C(1764072000123456789));
	cr_assert_eq(t("2025-11-25T06:30:00.123456789-05:30"), INT64_C(1764072000123456789));
	cr_assert_eq(t("1970-01-01T00:00:00Z"), 0);
	cr_assert_eq(t("2024-02-29T00:00:00Z"), INT64_C(1709164800) * 1000000000);
	cr_assert_eq(t("2000-03-01T00:00:00Z"), INT64_C(951868800) * 1000000000);
	no_time("2023-02-29T00:00:00Z");
	no_time("2100-02-29T00:00:00Z");
	no_time("2025-11-25T12:00:60Z");
	no_time("2025-11-25T12:00:00");
	no_time("2025-11-25T12:00:00+24:00");
	no_time("1764072000.");
	no_time(".5");
	no_time("-1");
	no_time("1e9");
	no_time("0x10");
	no_time("");
	no_time("9000000001");
	/* and back: RFC 3339 with 9 decimals */
	lb_import_utc(INT64_C(1764072000123456789), buf, sizeof(buf));
	cr_assert_str_eq(buf, "2025-11-25T12:00:00.123456789Z");
	lb_import_utc(INT64_C(1709251199999999999), buf, sizeof(buf));
	cr_assert_str_eq(buf, "2024-02-29T23:59:59.999999999Z");
	for (int64_t s = 0; s < INT64_C(9000000000); s += INT64_C(86400) * 397 + 3607) {
		lb_import_utc(s * 1000000000 + 7, buf, sizeof(buf));
		cr_assert_eq(t(buf), s * 1000000000 + 7, "%s", buf);
	}
	int64_t ns;
	cr_assert_eq(lb_import_parse_ms("2.5", 3600000, &ns, buf, sizeof(buf)), 0);
	cr_assert_eq(ns, 2500000);
	cr_assert_eq(lb_import_parse_ms("0.000001", 3600000, &ns, buf, sizeof(buf)), 0);
	cr_assert_eq(ns, 1);
	cr_assert_eq(lb_import_parse_ms("1.0000001", 3600000, &ns, buf, sizeof(buf)), -1);
	cr_assert_eq(lb_import_parse_ms("3600000.000001", 3600000, &ns, buf, sizeof(buf)), -1);
}

/* One judgement of two sections (a of client 0, b of client 1, one key). */
static struct lb_ujudgement judge2(int64_t ea, int64_t xa, int64_t ua, int64_t eb, int64_t xb,
				   int64_t ub)
{
	struct lb_usec s[2] = {
		{ .client = 0, .key = 0, .enter_ns = ea, .exit_ns = xa, .unc_ns = ua, .fence = -1 },
		{ .client = 1, .key = 0, .enter_ns = eb, .exit_ns = xb, .unc_ns = ub, .fence = -1 },
	};
	struct lb_ujudgement j;
	cr_assert_eq(lb_ujudge(s, 2, 100, 1000, &j), 0);
	return j;
}

Test(import, overlaps_follow_the_margin_rule)
{
	struct lb_ujudgement j;

	j = judge2(0, 100, 10, 50, 200, 20); /* overlap 50 > 30 */
	cr_assert(j.certain == 1 && j.possible == 0 && j.pairs[0].margin_ns == 50);
	lb_ujudgement_free(&j);
	j = judge2(0, 100, 10, 70, 200, 20); /* overlap 30 = U: some errors undo it */
	cr_assert(j.certain == 0 && j.possible == 1);
	lb_ujudgement_free(&j);
	j = judge2(0, 100, 10, 129, 200, 20); /* a gap of 29 < U */
	cr_assert(j.certain == 0 && j.possible == 1 && j.pairs[0].to_ns - j.pairs[0].from_ns == -29);
	lb_ujudgement_free(&j);
	j = judge2(0, 100, 10, 130, 200, 20); /* a gap of U: never */
	cr_assert(j.n_pairs == 0);
	lb_ujudgement_free(&j);
	j = judge2(0, 1000, 10, 500, 501, 10); /* 1 inside the other, 500 from its ends */
	cr_assert(j.certain == 1 && j.pairs[0].margin_ns == 500 && j.pairs[0].to_ns - j.pairs[0].from_ns == 1,
		  "a section inside another is certain however short");
	lb_ujudgement_free(&j);
	j = judge2(0, 100, 0, 100, 200, 0); /* touching, exact clocks: no overlap */
	cr_assert(j.n_pairs == 0);
	lb_ujudgement_free(&j);
	j = judge2(0, 100, 0, 100, 200, 1); /* touching, 1 ns of doubt */
	cr_assert(j.possible == 1);
	lb_ujudgement_free(&j);
	j = judge2(0, 100, 50, 60, 60, 50); /* an instant inside, 40 from the end, U = 100 */
	cr_assert(j.possible == 1 && j.pairs[0].margin_ns == 40, "an instant is a section: %zu pairs",
		  j.n_pairs);
	lb_ujudgement_free(&j);
	j = judge2(0, 100, 10, 60, 60, 10); /* the same, U = 20: certain */
	cr_assert(j.certain == 1);
	lb_ujudgement_free(&j);
	/* issue 49's repro: api-1 holds 89.900-90.100 s, api-2's row is the
	 * instant 90.000 s (a millisecond log stamp): certain, as with its exit
	 * 1 us later */
	const int64_t ms = 1000000;
	j = judge2(89900 * ms, 90100 * ms, 0, 90000 * ms, 90000 * ms, 0);
	cr_assert(j.certain == 1, "the instant overlaps: %zu pairs", j.n_pairs);
	lb_ujudgement_free(&j);
	j = judge2(89900 * ms, 90100 * ms, 0, 90000 * ms, 90000 * ms + 1000, 0);
	cr_assert(j.certain == 1);
	lb_ujudgement_free(&j);
	j = judge2(0, 100, 0, 100, 100, 0); /* the instant of its exit: [0, 100) does not hold 100 */
	cr_assert(j.n_pairs == 0);
	lb_ujudgement_free(&j);
	/* other keys and the same client never overlap */
	struct lb_usec s[3] = {
		{ .client = 0, .key = 0, .enter_ns = 0, .exit_ns = 100, .fence = -1 },
		{ .client = 1, .key = 1, .enter_ns = 10, .exit_ns = 90, .fence = -1 },
		{ .client = 0, .key = 1, .enter_ns = 20, .exit_ns = 80, .fence = -1 },
	};
	cr_assert_eq(lb_ujudge(s, 3, 100, 1000, &j), 0);
	cr_assert_eq(j.n_pairs, 1);
	cr_assert(j.pairs[0].a == 1 && j.pairs[0].b == 2, "only 1 and 2: one key, two clients");
	lb_ujudgement_free(&j);
	/* past a limit: refused, never cut */
	cr_assert_eq(lb_ujudge(s, 3, 0, 1000, &j), LB_EINVAL);
	cr_assert_str_eq(j.limit, "overlapping pairs");
	lb_ujudgement_free(&j);
}

Test(import, fences_follow_the_order_of_the_enters)
{
	/* key 0: client 0 enters with 5 at 0, client 1 with 4 at 100 (U 60 < 100:
	 * certain); client 1 with 6 at 200, client 0 with 6 at 230 (repeated, 30 < U:
	 * possible); client 0 with 3 at 400 after its own 6: certain by its own clock */
	struct lb_usec s[] = {
		{ .client = 0, .key = 0, .enter_ns = 0, .exit_ns = 10, .unc_ns = 30, .fence = 5 },
		{ .client = 1, .key = 0, .enter_ns = 100, .exit_ns = 110, .unc_ns = 30, .fence = 4 },
		{ .client = 1, .key = 0, .enter_ns = 200, .exit_ns = 210, .unc_ns = 30, .fence = 6 },
		{ .client = 0, .key = 0, .enter_ns = 230, .exit_ns = 240, .unc_ns = 30, .fence = 6 },
		{ .client = 0, .key = 0, .enter_ns = 400, .exit_ns = 410, .unc_ns = 300, .fence = 3 },
		{ .client = 1, .key = 1, .enter_ns = 500, .exit_ns = 510, .unc_ns = 0, .fence = 1 },
	};
	struct lb_ujudgement j;

	cr_assert_eq(lb_ujudge(s, 6, 100, 1000, &j), 0);
	cr_assert(j.fenced);
	cr_assert_eq(j.n_fences, 3);
	cr_assert(j.fences[0].at == 1 && j.fences[0].after == 0 && j.fences[0].certain);
	cr_assert(j.fences[1].at == 3 && j.fences[1].after == 2 && !j.fences[1].certain);
	cr_assert(j.fences[2].at == 4 && j.fences[2].certain, "its own clock's order is certain");
	cr_assert(j.fence_certain == 2 && j.fence_possible == 1);
	lb_ujudgement_free(&j);
}

/* issue 51, item 9: --out's edges are refused before the work, each said:
 * an empty name, a '..' out of a directory that is not there (which is not
 * made), a symlink (to an empty directory: never followed); a UTF-8 byte
 * order mark at the start of the history is skipped (docs/running.md). */
Test(import, out_edges_are_refused_before_the_work_and_a_bom_is_skipped, .init = mktmp)
{
	char climb[PATH_MAX], a[PATH_MAX], b[PATH_MAX], empty[PATH_MAX], link[PATH_MAX];
	const char *blank[] = { "check", "--history", sample("prod.csv"), "--out", "", NULL };
	cr_assert_eq(lb(blank), 2, "%s", output());
	cr_assert(strstr(output(), "--out '': an empty name"), "%s", output());

	snprintf(a, sizeof(a), "%s/a", tmpdir);
	snprintf(b, sizeof(b), "%s/b", tmpdir);
	snprintf(climb, sizeof(climb), "%s/a/../b", tmpdir);
	const char *climbs[] = { "check", "--history", sample("prod.csv"), "--out", climb, NULL };
	cr_assert_eq(lb(climbs), 2, "%s", output());
	cr_assert(strstr(output(), "'..'"), "%s", output());
	cr_assert_neq(access(a, F_OK), 0, "--out a/../b made a");
	cr_assert_neq(access(b, F_OK), 0);

	snprintf(empty, sizeof(empty), "%s/empty", tmpdir);
	snprintf(link, sizeof(link), "%s/link", tmpdir);
	cr_assert_eq(mkdir(empty, 0755), 0);
	cr_assert_eq(symlink(empty, link), 0);
	const char *linked[] = { "check", "--history", sample("prod.csv"), "--out", link, NULL };
	cr_assert_eq(lb(linked), 2, "%s", output());
	cr_assert(strstr(output(), "a symbolic link"), "%s", output());
	cr_assert_null(strstr(output(), "verdict"), "refused after the work: %s", output());
	/* "link/" too: a trailing slash makes lstat and open follow the link
	 * (run wrote a whole run into the directory it leads to) */
	char slashed[PATH_MAX + 8];
	snprintf(slashed, sizeof(slashed), "%s/", link);
	const char *via[] = { "check", "--history", sample("prod.csv"), "--out", slashed, NULL };
	cr_assert_eq(lb(via), 2, "%s", output());
	cr_assert(strstr(output(), "a symbolic link"), "%s", output());
	const char *run_via[] = { "run", "--strategy", "set-nx-px", "--duration", "0.3", "--no-status",
				  "--no-report", "--out", slashed, NULL };
	cr_assert_eq(lb(run_via), 2, "%s", output());
	cr_assert(strstr(output(), "a symbolic link"), "%s", output());
	char inside[PATH_MAX + 32];
	snprintf(inside, sizeof(inside), "%s/summary.csv", empty);
	cr_assert_neq(access(inside, F_OK), 0, "a run was written through the link");

	/* the same history behind a byte order mark says the same */
	char bom[PATH_MAX + 16], plain_out[65536];
	const char *plain[] = { "check", "--history", sample("prod.csv"), NULL };
	int want = lb(plain);
	snprintf(plain_out, sizeof(plain_out), "%s", output());
	snprintf(bom, sizeof(bom), "%s/bom.csv", tmpdir);
	FILE *f = fopen(bom, "w");
	cr_assert_not_null(f);
	fputs("\xef\xbb\xbf", f);
	fputs(fx_slurp(root(), "tests/history/prod.csv"), f);
	fclose(f);
	const char *with_bom[] = { "check", "--history", bom, NULL };
	cr_assert_eq(lb(with_bom), want, "%s", output());
	cr_assert(strstr(output(), strstr(plain_out, "verdict")), "%s", output());
}

/* issue 51, item 3: Ctrl-C 1 s into a 1,000,000-row import with --out stops
 * it within about a second more: exit 130, no DIR, no DIR.lockbench-XXXXXX. */
Test(import, ctrl_c_stops_a_million_row_import_and_leaves_nothing, .init = mktmp)
{
	char big[PATH_MAX], cmd[PATH_MAX * 2], out[PATH_MAX], log[PATH_MAX];
	snprintf(big, sizeof(big), "%s/big.csv", tmpdir);
	snprintf(cmd, sizeof(cmd), "awk 'BEGIN { print \"client,key,enter,exit\"; for (i = 0; "
		 "i < 1000000; i++) { t = 1764072000 + i * 0.001; printf \"w%%d,k%%d,%%.3f,%%.4f\\n\", "
		 "i %% 4, i %% 50, t, t + 0.0004 } }' > %s", big);
	cr_assert_eq(system(cmd), 0);
	snprintf(out, sizeof(out), "%s/incident", tmpdir);
	snprintf(log, sizeof(log), "%s/output", tmpdir);
	const char *args[] = { "check", "--history", big, "--out", out, NULL };
	pid_t pid = fx_spawn_lockbench(args, log, log);
	lb_sleep_ns(1000 * LB_NS_PER_MS);
	cr_assert_eq(kill(pid, SIGINT), 0);
	int64_t t0 = lb_now_ns();
	int rc = fx_wait_lockbench(pid, args);
	double took = (double)(lb_now_ns() - t0) / 1e9;
	cr_assert_eq(rc, 130, "exit %d: %s", rc, output());
	cr_assert_leq(took, 2.0, "Ctrl-C took effect %.1f s later", took);
	cr_assert_neq(access(out, F_OK), 0, "a half-made --out was left");
	DIR *d = opendir(tmpdir);
	cr_assert_not_null(d);
	for (struct dirent *e; (e = readdir(d));)
		cr_assert_null(strstr(e->d_name, ".lockbench-"), "left: %s", e->d_name);
	closedir(d);
}
