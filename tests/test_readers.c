/*
 * test_readers.c - reading a run's files back: every malformed input is
 * refused with the file, the line, the field and what was expected; valid
 * input reads whole. The files come from memory (fmemopen), as the fuzzing
 * harnesses feed them.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "readers.h"

FX_SUITE(readers, 10);

static char err[4096];

/* Run @fn on @text with stderr captured into err; its status. */
static int with_stderr(int (*fn)(FILE *, void *), const char *text, void *arg)
{
	char path[] = "/tmp/lbtest-readers-XXXXXX";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	cr_assert_geq(fd, 0);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc = fn(f, arg);
	fclose(f);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	lseek(fd, 0, SEEK_SET);
	ssize_t n = read(fd, err, sizeof(err) - 1);
	err[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	return rc;
}

struct hist_arg {
	int clients;
	struct lb_section *s;
	size_t n;
};

static int read_history(FILE *f, void *arg)
{
	struct hist_arg *a = arg;
	return lb_history_read_file(f, "history.csv", a->clients, 1, &a->s, &a->n);
}

/* most rows below are in the format before the nodes column, which is still read */
#define HEADER LB_HISTORY_HEADER_8 "\n"

/* @row, as line 3 after a valid line 2, must fail naming @what. */
static void history_refuses(const char *row, const char *what)
{
	char text[8192];
	struct hist_arg a = { .clients = 3 };
	snprintf(text, sizeof(text), HEADER "0,0,0,10,20,30,released,\n%s\n", row);
	cr_assert_eq(with_stderr(read_history, text, &a), LB_EINVAL, "accepted: %s", row);
	cr_assert_null(a.s);
	cr_assert(strstr(err, "history.csv:3: "), "no file:line in '%s'", err);
	cr_assert(strstr(err, what), "expected '%s' in '%s'", what, err);
}

Test(readers, history_rows_that_contradict_the_run_are_refused)
{
	history_refuses("0,1,1,99999999999999999999999,3,4,released,",
			"field enter_ns: expected an integer from 0 to");
	history_refuses("0,1,1,2,3,4,bogus,", "field outcome: expected released, lost, foreign, error, "
			"killed or cut, got 'bogus'");
	history_refuses("99999,0,1,2,3,4,released,", "field client: expected an integer from 0 to 2, "
			"got '99999'");
	history_refuses("0,1,5,4,3,2,released,", "field enter_ns: 4 is before acquire_start_ns 5");
	history_refuses("0,1,1,4,3,5,released,", "field exit_ns: 3 is before enter_ns 4");
	history_refuses("0,1,1,2,3,2,released,", "field release_ns: 2 is before exit_ns 3");
	history_refuses("0,1,1,2,3,,released,", "field release_ns: no release time with outcome released");
	history_refuses("0,1,1,2,3,4,killed,", "field release_ns: a release time with outcome killed");
	history_refuses("0,1,1,2,3", "5 fields; expected 8: client,seq,");
	history_refuses("0,1,1,2,3,4,released,,9", "more than 8 fields");
	history_refuses("0,1,x,2,3,4,released,", "field acquire_start_ns: expected an integer, got 'x'");
	/* lockbench writes its numbers plainly: a blank or a sign in front is damage */
	history_refuses("+0,1,1,2,3,4,released,", "field client: expected an integer, got '+0'");
	history_refuses("0, 1,1,2,3,4,released,", "field seq: expected an integer, got ' 1'");
	history_refuses("0,1,1,2,3,4,released,-7", "field fence: expected an integer from 0 to");
	history_refuses("0,1,1,2,3,4,rel\001eased,", "a control character");
	char big[6000];
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	history_refuses(big, "line longer than 4095 characters");
}

Test(readers, a_duplicate_section_and_a_bad_header_are_refused)
{
	struct hist_arg a = { .clients = 2 };
	cr_assert_eq(with_stderr(read_history, HEADER "0,0,0,1,2,3,released,\n0,0,0,4,5,6,released,\n",
				 &a), LB_EINVAL);
	cr_assert(strstr(err, "client 0 has two sections numbered 0"), "%s", err);
	cr_assert_eq(with_stderr(read_history, "client,seq\n", &a), LB_EINVAL);
	cr_assert(strstr(err, "history.csv:1: expected the header"), "%s", err);
	cr_assert_eq(with_stderr(read_history, "", &a), LB_EINVAL);
}

Test(readers, a_valid_history_reads_whole_and_sorted)
{
	struct hist_arg a = { .clients = 2 };
	const char *text = HEADER "1,0,0,5,9,9,foreign,\n0,0,0,1,4,4,released,7\n"
			   "0,1,10,12,20,,killed,\n1,1,20,21,22,23,cut\n";
	/* the last row has 7 fields: refused */
	cr_assert_eq(with_stderr(read_history, text, &a), LB_EINVAL);
	text = HEADER "1,0,0,5,9,9,foreign,\n0,0,0,1,4,4,released,7\n0,1,10,12,20,,killed,\n";
	cr_assert_eq(with_stderr(read_history, text, &a), 0, "%s", err);
	cr_assert_eq(a.n, 3);
	cr_assert_eq(a.s[0].enter_ns, 1);
	cr_assert_eq(a.s[0].fence, 7);
	cr_assert_eq(a.s[1].outcome, LB_OUT_FOREIGN);
	cr_assert_eq(a.s[2].release_ns, -1);
	free(a.s);
}

/* The nodes column (Redlock: which lock nodes a section held): read as a
 * mask, refused when it is not node indexes joined by '+'. */
Test(readers, the_nodes_column_is_read_and_checked)
{
	struct hist_arg a = { .clients = 2 };
	const char *text = LB_HISTORY_HEADER_9 "\n0,0,0,1,4,4,released,,0+1+2\n1,0,0,5,9,9,released,,\n"
			   "1,1,10,12,20,21,lost,,2+3+4\n";
	cr_assert_eq(with_stderr(read_history, text, &a), 0, "%s", err);
	cr_assert_eq(a.n, 3);
	cr_assert_eq(a.s[0].nodes, 0x7u);
	cr_assert_eq(a.s[1].nodes, 0u, "an empty field: not known");
	cr_assert_eq(a.s[2].nodes, 0x1cu);
	free(a.s);
	static const char *const bad[] = { "0+0", "2+1", "1+", "+1", "x", "9", "1 2", "-1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char t[256];
		snprintf(t, sizeof(t), LB_HISTORY_HEADER_9 "\n0,0,0,1,4,4,released,,%s\n", bad[i]);
		a = (struct hist_arg){ .clients = 2 };
		cr_assert_eq(with_stderr(read_history, t, &a), LB_EINVAL, "accepted nodes '%s'", bad[i]);
		cr_assert(strstr(err, "history.csv:2: field nodes: expected node indexes"), "%s", err);
	}
	/* a row of the old width under the new header is refused */
	a = (struct hist_arg){ .clients = 2 };
	cr_assert_eq(with_stderr(read_history, LB_HISTORY_HEADER "\n0,0,0,1,4,4,released,,\n", &a),
		     LB_EINVAL);
	cr_assert(strstr(err, "9 fields; expected 11"), "%s", err);
}

/* The lease_end_ns column: a time, never (a lock without a TTL) or nothing
 * (the lock could not tell); older files without it read as not known. */
Test(readers, the_lease_end_column_is_read_and_checked)
{
	struct hist_arg a = { .clients = 2 };
	const char *text = LB_HISTORY_HEADER "\n0,0,0,1,4,4,released,,,1001,\n1,0,0,5,9,9,released,,,,\n"
			   "1,1,10,12,20,21,lost,,,never,\n";
	cr_assert_eq(with_stderr(read_history, text, &a), 0, "%s", err);
	cr_assert_eq(a.n, 3);
	cr_assert_eq(a.s[0].lease_end_ns, 1001);
	cr_assert(lb_lease_known(&a.s[0]));
	cr_assert(!lb_lease_known(&a.s[1]) && a.s[1].lease_end_ns == LB_LEASE_UNKNOWN);
	cr_assert(!lb_lease_known(&a.s[2]) && a.s[2].lease_end_ns == LB_LEASE_NEVER);
	free(a.s);
	a = (struct hist_arg){ .clients = 2 };
	cr_assert_eq(with_stderr(read_history, LB_HISTORY_HEADER_9 "\n0,0,0,1,4,4,released,,\n", &a), 0);
	cr_assert(!lb_lease_known(&a.s[0]), "an older history: not known");
	free(a.s);
	static const char *const bad[] = { "soon", "-5", "1.5", "never!" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char t[256];
		snprintf(t, sizeof(t), LB_HISTORY_HEADER "\n0,0,0,1,4,4,released,,,%s,\n", bad[i]);
		a = (struct hist_arg){ .clients = 2 };
		cr_assert_eq(with_stderr(read_history, t, &a), LB_EINVAL, "accepted lease end '%s'", bad[i]);
		cr_assert(strstr(err, "history.csv:2: field lease_end_ns"), "%s", err);
	}
}

static int read_summary(FILE *f, void *arg)
{
	return lb_summary_read_file(f, "summary.csv", arg);
}

Test(readers, summaries_are_checked)
{
	struct lb_summary s;
	cr_assert_eq(with_stderr(read_summary, "a,b\n1\n", &s), LB_EINVAL);
	cr_assert(strstr(err, "summary.csv:2: 1 values for 2 columns"), "%s", err);
	cr_assert_eq(with_stderr(read_summary, "a,a\n1,2\n", &s), LB_EINVAL);
	cr_assert(strstr(err, "column a appears twice"), "%s", err);
	cr_assert_eq(with_stderr(read_summary, "a,B\n1,2\n", &s), LB_EINVAL);
	cr_assert(strstr(err, "column 2: expected a name"), "%s", err);
	cr_assert_eq(with_stderr(read_summary, "a\n1\n2\n", &s), LB_EINVAL);
	cr_assert(strstr(err, "a third line"), "%s", err);
	cr_assert_eq(with_stderr(read_summary, "clients,keys,elapsed_s\n3,1,1.5\n", &s), 0, "%s", err);
	struct lb_run_shape shape;
	cr_assert_eq(lb_summary_shape(&s, "summary.csv", &shape), 0);
	cr_assert_eq(shape.clients, 3);
	/* nan is no number lockbench writes: refused as it is read */
	cr_assert_eq(with_stderr(read_summary, "clients,keys,elapsed_s\n3,1,nan\n", &s), LB_EINVAL);
	cr_assert(strstr(err, "field elapsed_s: expected a number"), "%s", err);
	cr_assert_eq(with_stderr(read_summary, "clients,keys,elapsed_s\n3,1,1.5\n", &s), 0);
	snprintf(s.value[2], sizeof(s.value[2]), "nan"); /* shape's own check, on a summary in memory */
	FILE *devnull = freopen("/dev/null", "w", stderr);
	(void)devnull;
	cr_assert_eq(lb_summary_shape(&s, "summary.csv", &shape), LB_EINVAL, "nan elapsed accepted");
}

/* Issue 51 item 4: a number in lockbench's own files is written as printf
 * writes it (lb_written_number): '+0', ' 94', '-0' or a leading zero is
 * damage, refused with the file, the line and the field, in summary.csv
 * (whether or not summary.json is there to compare) and in history.csv. */
Test(readers, numbers_not_written_as_lockbench_writes_them_are_damage)
{
	static const char *const bad[][2] = {
		{ "+0", "overlaps" }, { " 94", "sections" }, { "-0", "lost_updates" },
		{ "0684", "seed" }, { "-0.000", "overlap_ms" }, { ".5", "elapsed_s" },
		{ "5.", "elapsed_s" }, { "1e5", "sections" },
	};
	struct lb_summary s;
	char text[256];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "clients,keys,%s\n3,1,%s\n", bad[i][1], bad[i][0]);
		cr_assert_eq(with_stderr(read_summary, text, &s), LB_EINVAL, "accepted %s = '%s'",
			     bad[i][1], bad[i][0]);
		char want[96];
		snprintf(want, sizeof(want), "summary.csv:2: field %s: expected a number as lockbench "
			 "writes it", bad[i][1]);
		cr_assert(strstr(err, want), "%s", err);
	}
	static const char *const good[][2] = {
		{ "0", "overlaps" }, { "94", "sections" }, { "n/a", "lost_updates" },
		{ "684", "seed" }, { "0.000", "overlap_ms" }, { "1e-05", "duration_s" },
		{ "-3", "sections" }, /* a number: its range is check's to judge */
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "clients,keys,%s\n3,1,%s\n", good[i][1], good[i][0]);
		cr_assert_eq(with_stderr(read_summary, text, &s), 0, "%s", err);
	}
	history_refuses("0,1,1,0240143,300000,300001,released,",
			"field enter_ns: expected an integer, got '0240143' (lockbench writes no sign");
	history_refuses("0,1,-0,2,3,4,released,", "field acquire_start_ns: expected an integer");
	struct hist_arg a = { .clients = 2 };
	cr_assert_eq(with_stderr(read_history, LB_HISTORY_HEADER_9 "\n0,0,0,1,4,4,released,,0+01\n",
				 &a), LB_EINVAL);
	cr_assert(strstr(err, "field nodes: expected node indexes"), "%s", err);
	cr_assert(lb_written_number("0") && lb_written_number("10.25") && lb_written_number("-3") &&
		  lb_written_number("1e+06") && lb_written_number("0.5"));
}

static int read_events(FILE *f, void *arg)
{
	struct lb_event *ev = NULL;
	size_t n;
	int rc = lb_events_read_file(f, "events.csv", 2, &ev, &n);
	*(size_t *)arg = n;
	free(ev);
	return rc;
}

static int read_latency(FILE *f, void *arg)
{
	return lb_latency_read_file(f, "latency.csv", arg);
}

/* A value holding a comma or a quote is a quoted CSV field (RFC 4180): read
 * back whole; an unclosed quote, or text after a closing one, is refused. */
Test(readers, quoted_summary_values_read_back_whole)
{
	struct lb_summary s;
	cr_assert_eq(with_stderr(read_summary, "strategy,scenario,clients\n"
				 "\"exec:/x/a,b\"\"c.sh\",,2\n", &s), 0, "%s", err);
	cr_assert_str_eq(lb_summary_get(&s, "strategy"), "exec:/x/a,b\"c.sh");
	cr_assert_str_eq(lb_summary_get(&s, "scenario"), "");
	cr_assert_str_eq(lb_summary_get(&s, "clients"), "2");
	static const char *const bad[] = { "\"open,x,2\n", "\"a\"b,x,2\n", "a\"b,x,2\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char t[128];
		snprintf(t, sizeof(t), "strategy,scenario,clients\n%s", bad[i]);
		cr_assert_eq(with_stderr(read_summary, t, &s), LB_EINVAL, "accepted %s", bad[i]);
		cr_assert(strstr(err, "summary.csv:2:"), "%s", err);
	}
}

Test(readers, events_and_latency_are_checked)
{
	size_t n;
	const char *h = "t_ns,event,client,node,value\n";
	char text[256];
	snprintf(text, sizeof(text), "%s5,kill,1,,0\n7,node-kill,,4,0\n", h);
	cr_assert_eq(with_stderr(read_events, text, &n), 0, "%s", err);
	cr_assert_eq(n, 2);
	snprintf(text, sizeof(text), "%s5,explode,1,,0\n", h);
	cr_assert_eq(with_stderr(read_events, text, &n), LB_EINVAL);
	cr_assert(strstr(err, "events.csv:2: field event: unknown event 'explode'"), "%s", err);
	snprintf(text, sizeof(text), "%s5,kill,7,,0\n", h);
	cr_assert_eq(with_stderr(read_events, text, &n), LB_EINVAL);
	cr_assert(strstr(err, "field client: expected an integer from 0 to 1"), "%s", err);
	/* what an event's value means is checked too: a failpoint's number on a
	 * crash or a wake (never one that wraps to a real one), minus it on a
	 * stand-in kill (5 failpoints are known: -6 is none), 0 or 1 on a
	 * client's refusal */
	snprintf(text, sizeof(text), "%s5,crash,1,,1\n6,wake,0,,2\n7,kill,0,,-4\n8,refused,1,,1\n", h);
	cr_assert_eq(with_stderr(read_events, text, &n), 0, "%s", err);
	cr_assert_eq(n, 4);
	static const char *const bad[] = { "5,crash,1,,4294967298\n", "5,crash,1,,-3\n",
					   "5,wake,1,,999\n", "5,kill,1,,-6\n", "5,kill,1,,2\n",
					   "5,refused,1,,7\n", "5,refused,1,2,1\n", "5,refused,,,1\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s%s", h, bad[i]);
		cr_assert_eq(with_stderr(read_events, text, &n), LB_EINVAL, "accepted %s", bad[i]);
		cr_assert(strstr(err, "events.csv:2: "), "%s", err);
	}
	struct lb_hist hist;
	cr_assert_eq(with_stderr(read_latency, "bucket_low_us,bucket_high_us,count\n3,4,10\n", &hist), 0,
		     "%s", err);
	cr_assert_eq(hist.n, 10);
	cr_assert_eq(with_stderr(read_latency, "bucket_low_us,bucket_high_us,count\n3,99,10\n", &hist),
		     LB_EINVAL);
	cr_assert(strstr(err, "not a bucket"), "%s", err);
}

struct waiters_arg {
	int clients;
	struct lb_waiter *w;
	size_t n;
};

static int read_waiters(FILE *f, void *arg)
{
	struct waiters_arg *a = arg;
	return lb_waiters_read_file(f, "waiters.csv", a->clients, 2, &a->w, &a->n);
}

/* waiters.csv: read whole, at most one row a client, every field checked. */
Test(readers, waiters_are_checked)
{
	struct waiters_arg a = { .clients = 3 };
	cr_assert_eq(with_stderr(read_waiters, LB_WAITERS_HEADER "\n1,4,100,900,1000,cut\n"
				 "2,1,5,,7,killed\n", &a), 0, "%s", err);
	cr_assert_eq(a.n, 2);
	cr_assert_eq(a.w[0].key, 1);
	cr_assert_eq(a.w[0].last_try_ns, 900);
	cr_assert_eq(a.w[0].ended, LB_WEND_CUT);
	cr_assert_eq(a.w[1].last_try_ns, -1);
	cr_assert_eq(a.w[1].key, 0);
	free(a.w);
	static const struct { const char *row, *what; } bad[] = {
		{ "3,1,0,1,2,cut", "field client" },
		{ "0,0,0,1,2,cut", "field calls" },
		{ "0,1,5,6,4,cut", "end_ns: 4 is before start_ns 5" },
		{ "0,1,5,9,8,cut", "last_try_ns: 9 is outside" },
		{ "0,1,0,1,2,later", "expected gave-up, cut or killed" },
		{ "1,1,0,1,2,cut", "client 1 has a waiter already" },
		{ "0,1,0,1,2", "expected 6" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256];
		a = (struct waiters_arg){ .clients = 3 };
		snprintf(text, sizeof(text), LB_WAITERS_HEADER "\n1,1,0,1,2,gave-up\n%s\n", bad[i].row);
		cr_assert_eq(with_stderr(read_waiters, text, &a), LB_EINVAL, "accepted: %s", bad[i].row);
		cr_assert_null(a.w);
		cr_assert(strstr(err, "waiters.csv:3: "), "no file:line in '%s'", err);
		cr_assert(strstr(err, bad[i].what), "expected '%s' in '%s'", bad[i].what, err);
	}
	a = (struct waiters_arg){ .clients = 3 };
	cr_assert_eq(with_stderr(read_waiters, "client,seq\n", &a), LB_EINVAL);
	cr_assert(strstr(err, "expected the header " LB_WAITERS_HEADER), "%s", err);
}

/* The token column (the hash of what a section's acquire wrote): hex, or
 * empty when not known. */
Test(readers, the_token_column_is_read_and_checked)
{
	struct hist_arg a = { .clients = 2 };
	const char *text = LB_HISTORY_HEADER "\n0,0,0,1,4,4,released,,,,cc1ceb7973b76127\n"
			   "1,0,0,5,9,9,released,,0+1,,\n";
	cr_assert_eq(with_stderr(read_history, text, &a), 0, "%s", err);
	cr_assert_eq(a.n, 2);
	cr_assert_eq(a.s[0].token, UINT64_C(0xcc1ceb7973b76127));
	cr_assert_eq(a.s[1].token, 0u, "an empty field: not known");
	cr_assert_eq(a.s[1].nodes, 0x3u);
	free(a.s);
	static const char *const bad[] = { "0", "xyz", "CC1C", "11112222333344445", "-1", "1 2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char t[256];
		snprintf(t, sizeof(t), LB_HISTORY_HEADER "\n0,0,0,1,4,4,released,,,,%s\n", bad[i]);
		a = (struct hist_arg){ .clients = 2 };
		cr_assert_eq(with_stderr(read_history, t, &a), LB_EINVAL, "accepted token '%s'", bad[i]);
		cr_assert(strstr(err, "history.csv:2: field token: expected 1 to 16 hex digits"), "%s", err);
	}
}

struct kev_arg {
	struct lb_key_event *e;
	size_t n;
};

static int read_kev(FILE *f, void *arg)
{
	struct kev_arg *a = arg;
	return lb_key_events_read_file(f, "keyevents.csv", 2, &a->e, &a->n);
}

/* keyevents.csv: read in the file's order (each server's own), every field
 * checked against the run (its keys) and the event (only a set or a found has a value;
 * only a set, an expire or a found a TTL, -2 (no key) a found alone; watch
 * and unwatch are about the whole server). A file of before the TTL column is read, its TTLs unknown. */
Test(readers, key_events_are_read_in_order_and_checked)
{
	struct kev_arg a = { 0 };
	const char *text = LB_KEY_EVENTS_HEADER "\n0,0,6379,0,,watch,,\n5,1,6380,1,1,set,abc,-1\n"
			   "3,0,6379,0,0,del,,\n9,0,6379,0,0,expired,,\n10,1,6380,1,1,set,,\n"
			   "11,1,6380,1,,unwatch,,\n12,0,6379,0,0,expire,,2999\n"
			   "13,1,6380,1,1,found,abc,1500\n14,0,6379,0,0,found,,-2\n";
	cr_assert_eq(with_stderr(read_kev, text, &a), 0, "%s", err);
	cr_assert_eq(a.n, 9);
	cr_assert_eq(a.e[0].kind, LB_KEY_WATCH);
	cr_assert_eq(a.e[0].key, -1);
	cr_assert_eq(a.e[1].value, 0xabcu);
	cr_assert_eq(a.e[1].server, 1);
	cr_assert_eq(a.e[1].node, 1);
	cr_assert_eq(a.e[1].port, 6380);
	cr_assert_eq(a.e[1].ttl_ms, -1, "no TTL");
	cr_assert_eq(a.e[2].t_ns, 3, "the file's order, not the times'");
	cr_assert_eq(a.e[4].value, 0u, "a set whose value was not read");
	cr_assert_eq(a.e[4].ttl_ms, LB_KEY_TTL_UNKNOWN, "a set whose TTL was not read");
	cr_assert_eq(a.e[6].kind, LB_KEY_EXPIRE);
	cr_assert_eq(a.e[6].ttl_ms, 2999);
	cr_assert_eq(a.e[7].kind, LB_KEY_FOUND);
	cr_assert_eq(a.e[7].value, 0xabcu);
	cr_assert_eq(a.e[7].ttl_ms, 1500);
	cr_assert_eq(a.e[8].ttl_ms, -2, "found no key");
	free(a.e);
	a = (struct kev_arg){ 0 };
	cr_assert_eq(with_stderr(read_kev, "t_ns,server,port,node,key,event,value\n"
				 "5,1,6380,1,1,set,abc\n", &a), 0, "%s", err);
	cr_assert_eq(a.n, 1);
	cr_assert_eq(a.e[0].value, 0xabcu);
	cr_assert_eq(a.e[0].ttl_ms, LB_KEY_TTL_UNKNOWN, "the old file: no TTL read");
	free(a.e);
	static const struct { const char *row, *says; } bad[] = {
		{ "0,0,6379,0,0,bogus,,", "field event: expected set, del, expired, expire, found, watch or unwatch" },
		{ "0,0,6379,0,2,del,,", "field key: expected an integer from 0 to 1" },
		{ "0,0,6379,0,,del,,", "field key: empty" },
		{ "0,0,6379,0,0,watch,,", "field key: watch is about the whole server" },
		{ "0,0,6379,0,0,del,abc,", "field value: only a set or a found has one" },
		{ "0,0,6379,0,0,expire,abc,5", "field value: only a set or a found has one" },
		{ "0,0,6379,0,0,set,xyz,", "field value: expected 1 to 16 hex digits" },
		{ "0,0,6379,0,0,del,,5", "field ttl_ms: only a set, an expire or a found has one" },
		{ "0,0,6379,0,0,expire,,-2", "field ttl_ms: expected an integer from -1" },
		{ "0,0,6379,0,0,found,,-3", "field ttl_ms: expected an integer from -2" },
		{ "0,0,6379,0,0,set,abc,x", "field ttl_ms: expected an integer" },
		{ "0,16,6379,0,0,del,,", "field server: expected an integer from 0 to 15" },
		{ "0,0,70000,0,0,del,,", "field port: expected an integer from 0 to 65535" },
		{ "-1,0,6379,0,0,del,,", "field t_ns: expected an integer from 0" },
		{ "0,0,6379,0,0,del,", "7 fields; expected 8" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char t[512];
		snprintf(t, sizeof(t), LB_KEY_EVENTS_HEADER "\n%s\n", bad[i].row);
		a = (struct kev_arg){ 0 };
		cr_assert_eq(with_stderr(read_kev, t, &a), LB_EINVAL, "accepted '%s'", bad[i].row);
		cr_assert(strstr(err, "keyevents.csv:2: ") && strstr(err, bad[i].says), "'%s': %s",
			  bad[i].row, err);
	}
	cr_assert_eq(with_stderr(read_kev, "t_ns,event\n", &a), LB_EINVAL);
	cr_assert(strstr(err, "expected the header " LB_KEY_EVENTS_HEADER), "%s", err);
}

/* A FIFO (or any file that is not a regular one) where a run's file should be
 * is refused at once, never waited on: a hostile results directory cannot
 * hang report, check or tour. */
Test(readers, a_fifo_is_refused_not_waited_on)
{
	char dir[] = "/tmp/lbtest-fifo-XXXXXX", path[64];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/events.csv", dir);
	cr_assert_eq(mkfifo(path, 0600), 0);
	struct lb_event *ev = NULL;
	size_t n = 0;
	FILE *devnull = freopen("/dev/null", "w", stderr);
	(void)devnull;
	cr_assert_eq(lb_events_read(path, 2, &ev, &n), LB_EINVAL);
	cr_assert_null(ev);
	unlink(path);
	rmdir(dir);
}
