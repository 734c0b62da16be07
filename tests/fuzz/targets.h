/*
 * targets.h - what each fuzzing harness does with one input, shared by the
 * AFL++ harness (tests/fuzz/harness.c, one build per target, `make fuzz`) and the regression test
 * that replays every saved input (tests/test_fuzz_regressions.c, `make test`).
 * A target may return an error for any input; it must never crash, hang,
 * read out of bounds or leak (ASan+UBSan watch both).
 */
#ifndef LB_FUZZ_TARGETS_H
#define LB_FUZZ_TARGETS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapter.h"
#include "esc.h"
#include "adapter_proto.h"
#include "import_dir.h"
#include "owned.h"
#include "options.h"
#include "oracle.h"
#include "plumbing.h"
#include "readers.h"
#include "rserver.h"
#include "scenario.h"
#include "wait.h"

/* A NUL-terminated copy of the input (the parsers take strings). */
static inline char *fuzz_text(const uint8_t *data, size_t len)
{
	char *t = malloc(len + 1);
	if (t) {
		memcpy(t, data, len);
		t[len] = '\0';
	}
	return t;
}

/* A scenario file: parsed, and when it parses, its chaos drawn and its
 * expectations looked up as a run would. */
static inline void fuzz_scenario(const uint8_t *data, size_t len)
{
	static struct lb_scenario sc;
	char *t = fuzz_text(data, len);
	if (!t)
		return;
	if (lb_scenario_parse_text(t, "fuzz.ini", &sc) == 0) {
		lb_scenario_draw_chaos(&sc, len, 4, 5);
		for (size_t i = 0; i < lb_strategy_count(); i++)
			lb_scenario_expected(&sc, lb_strategy_at(i)->name);
		lb_scenario_needs_relay(&sc);
	}
	free(t);
}

/* A directory of this process's own for the targets that read and write
 * files (made once, under $TMPDIR or /tmp, removed when the process exits);
 * "" if it cannot be made. */
static char fuzz_dir_path[256];

static inline void fuzz_dir_remove(void)
{
	if (fuzz_dir_path[0])
		lb_owned_rmtree(fuzz_dir_path);
}

static inline const char *fuzz_dir(void)
{
	if (!fuzz_dir_path[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(fuzz_dir_path, sizeof(fuzz_dir_path), "%s/lb-fuzz-XXXXXX",
			 t && t[0] == '/' ? t : "/tmp");
		if (lb_owned_mkdtemp(fuzz_dir_path) == 0)
			atexit(fuzz_dir_remove);
		else
			fuzz_dir_path[0] = '\0';
	}
	return fuzz_dir_path;
}

/* A scenario given as a path (--scenario PATH): the input is written to a
 * file and loaded as lockbench loads one, so the reader's checks on the file
 * itself are reached; the input's length picks what the path is: mostly the
 * file, for 4 lengths in 32 a symlink to it, a directory, a FIFO or a symlink
 * to a directory, which the reader must refuse at once (a FIFO never waited
 * on). */
static inline void fuzz_scenario_file(const uint8_t *data, size_t len)
{
	static struct lb_scenario sc;
	char path[300], file[300];
	const char *dir = fuzz_dir();
	int kind = (int)(len % 32); /* 0 symlink, 1 directory, 2 FIFO, 3 symlink to a directory */
	if (!dir[0])
		return;
	snprintf(path, sizeof(path), "%s/fuzz.ini", dir);
	snprintf(file, sizeof(file), "%s/data.ini", dir);
	FILE *f = fopen(kind == 0 ? file : path, "wb");
	if (!f)
		return;
	if (fwrite(data, 1, len, f) != len) {
		fclose(f);
		return;
	}
	fclose(f);
	if (kind == 0 || kind == 1 || kind == 2 || kind == 3)
		unlink(path);
	if ((kind == 0 && symlink(file, path) < 0) || (kind == 1 && mkdir(path, 0700) < 0) ||
	    (kind == 2 && mkfifo(path, 0600) < 0) || (kind == 3 && symlink(dir, path) < 0))
		return;
	if (lb_scenario_load(path, &sc) == 0) {
		lb_scenario_draw_chaos(&sc, len, 4, 5);
		for (size_t i = 0; i < lb_strategy_count(); i++)
			lb_scenario_expected(&sc, lb_strategy_at(i)->name);
		lb_scenario_needs_relay(&sc);
	}
	if (kind == 1)
		rmdir(path);
	else
		unlink(path);
	unlink(file);
}

/* Command-line values: one argument a line, read as `lockbench run`'s
 * options (and compare's, by the first byte), and each one as a --redis URL
 * and as a --wait policy. */
static inline void fuzz_args(const uint8_t *data, size_t len)
{
	static struct lb_run_opts o;
	char *t = fuzz_text(data, len), *argv[64], err[256];
	int argc = 0;
	if (!t)
		return;
	argv[argc++] = "run";
	for (char *save = NULL, *a = strtok_r(t, "\n", &save); a && argc < 63;
	     a = strtok_r(NULL, "\n", &save))
		if (strncmp(a, "--scenario", 10) && strncmp(a, "--out", 5)) /* no files */
			argv[argc++] = a;
	argv[argc] = NULL;
	for (int i = 1; i < argc; i++) {
		struct lb_node n;
		struct lb_wait w;
		lb_node_parse_url(argv[i], &n, err, sizeof(err));
		lb_wait_parse(argv[i], &w, err, sizeof(err));
	}
	lb_run_opts_parse(argc, argv, len && data[0] % 2 ? LB_OPTS_COMPARE : LB_OPTS_RUN, &o);
	free(t);
}

/* history.csv, and when it reads, the oracle on it. */
static inline void fuzz_history(const uint8_t *data, size_t len)
{
	FILE *f = fmemopen((void *)data, len, "r");
	struct lb_section *s = NULL;
	struct lb_verdict v;
	uint64_t per[LB_MAX_CLIENTS];
	size_t n;
	if (!f)
		return;
	if (lb_history_read_file(f, "history.csv", LB_MAX_CLIENTS, 1 + (int)(len % 3), &s, &n) == 0)
		lb_oracle_judge(s, n, LB_MAX_CLIENTS, (int64_t)(len * 1000), &v, per);
	free(s);
	fclose(f);
}

/* A production history's CSV (check --history), and when it reads, judged
 * with each clock's uncertainty, and every file of --out written (to memory). */
static inline void fuzz_import(const uint8_t *data, size_t len)
{
	FILE *f = fmemopen((void *)data, len, "r");
	static struct lb_summary s;
	struct lb_import imp;
	struct lb_ujudgement j = { 0 };
	char *out = NULL;
	size_t out_len = 0;
	if (!f)
		return;
	if (lb_import_read_file(f, "import.csv", (int64_t)(len % 7) * 1000000, &imp) == 0) {
		if (lb_import_judge(&imp, "import.csv", &j) == 0) {
			FILE *m = open_memstream(&out, &out_len);
			if (m) {
				lb_import_history_write(m, &imp);
				lb_import_names_write(m, &imp);
				lb_import_overlaps_write(m, &imp, &j);
				lb_import_fences_write(m, &imp, &j);
				fclose(m);
			}
			if (lb_import_fits(&imp, "import.csv") == 0)
				lb_import_summary(&imp, &j, "import.csv", &s);
			free(out);
		}
		lb_ujudgement_free(&j);
		lb_import_free(&imp);
	}
	fclose(f);
}

/* check --history FILE --out DIR as the command does it, short of the
 * report (charts run gnuplot): the input written to a file, its copy made
 * into the temporary directory beside --out, read from there, judged, and
 * the directory finished (every file of it written, then renamed into
 * place), then removed for the next input. */
static inline void fuzz_import_out(const uint8_t *data, size_t len)
{
	char src[300], out[300], tmp[400];
	const char *dir = fuzz_dir();
	struct lb_import imp = { 0 };
	struct lb_ujudgement j = { 0 };
	if (!dir[0])
		return;
	snprintf(src, sizeof(src), "%s/history.csv", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	FILE *f = fopen(src, "wb");
	if (!f)
		return;
	size_t put = fwrite(data, 1, len, f);
	if (fclose(f) != 0 || put != len || lb_import_dir_begin(out, tmp, sizeof(tmp)) < 0)
		return;
	char copy[sizeof(tmp) + 16];
	snprintf(copy, sizeof(copy), "%s/imported.csv", tmp);
	int rc = lb_import_copy_source(src, tmp);
	if (rc == 0)
		rc = lb_import_read(copy, src, (int64_t)(len % 7) * 1000000, &imp);
	if (rc == 0)
		rc = lb_import_judge(&imp, src, &j);
	if (rc == 0)
		rc = lb_import_fits(&imp, src);
	if (rc == 0 && lb_import_dir_finish(tmp, out, src, "lockbench check --history FUZZ --out OUT",
					     &imp, &j) == 0)
		lb_owned_rmtree(out);
	else
		lb_owned_rmtree(tmp);
	lb_ujudgement_free(&j);
	lb_import_free(&imp);
	unlink(src);
}

/* summary.csv, and the run's shape read from it. */
static inline void fuzz_summary(const uint8_t *data, size_t len)
{
	FILE *f = fmemopen((void *)data, len, "r");
	static struct lb_summary s;
	struct lb_run_shape shape;
	if (!f)
		return;
	if (lb_summary_read_file(f, "summary.csv", &s) == 0)
		lb_summary_shape(&s, "summary.csv", &shape);
	fclose(f);
}

/* events.csv, or latency.csv when the input starts as one does. */
static inline void fuzz_events(const uint8_t *data, size_t len)
{
	FILE *f = fmemopen((void *)data, len, "r");
	struct lb_event *ev = NULL;
	static struct lb_hist h;
	size_t n;
	if (!f)
		return;
	if (len >= 6 && !memcmp(data, "bucket", 6)) {
		lb_latency_read_file(f, "latency.csv", &h);
	} else if (len >= 11 && !memcmp(data, "t_ns,server", 11)) { /* keyevents.csv, judged */
		struct lb_key_event *ke = NULL;
		struct lb_foreign_result r;
		struct lb_foreign_opts o = { 1000, (int64_t)len, (int64_t)len * 1000 };
		if (lb_key_events_read_file(f, "keyevents.csv", 1 + (int)(len % 3), &ke, &n) == 0 &&
		    lb_foreign_judge(NULL, 0, ke, n, &o, &r) == 0)
			lb_foreign_result_free(&r);
		free(ke);
	} else {
		lb_events_read_file(f, "events.csv", 8, &ev, &n);
	}
	free(ev);
	fclose(f);
}

/* An adapter's output: fed to the line reader in pieces whose size the
 * first byte picks, and every line read as the answer to each request (and
 * as a notice), of either protocol version, from an adapter that said
 * lost=yes and one that said lost=no. */
static inline void fuzz_adapter(const uint8_t *data, size_t len)
{
	static struct lb_proto_reader r;
	static char line[LB_PROTO_LINE_MAX + 1];
	struct lb_proto_msg m;
	char why[300], shown[64];
	size_t step = len ? (size_t)data[0] % 61 + 1 : 1;

	memset(&r, 0, sizeof(r));
	for (size_t off = 0; off < len;) {
		size_t n = len - off < step ? len - off : step;
		if (n > lb_proto_room(&r))
			n = lb_proto_room(&r);
		lb_proto_feed(&r, (const char *)data + off, n);
		off += n;
		int got;
		while ((got = lb_proto_next_line(&r, line)) == 1) {
			for (int q = LB_REQ_NONE; q <= LB_REQ_QUIT; q++)
				for (int v = 0; v <= LB_ADAPTER_PROTOCOL + 1; v++)
					for (int lost = 0; lost < 2; lost++)
						lb_proto_parse(line, (enum lb_proto_req)q, v, lost, &m, why,
							       sizeof(why));
			lb_proto_printable(line, shown, sizeof(shown));
		}
		if (got < 0)
			memset(&r, 0, sizeof(r)); /* a line too long: the run ends there */
	}
}

/* An adapter manifest's text, read as lockbench reads NAME.adapter. */
static inline void fuzz_manifest(const uint8_t *data, size_t len)
{
	static struct lb_adapter_def d;
	char *t = fuzz_text(data, len);
	if (!t)
		return;
	lb_adapter_manifest_parse(t, "fuzz.adapter", "/nonexistent", &d);
	free(t);
}

/* The escaping layer's round trip: the input, cut into fields at its 0x01
 * bytes, written as one CSV row (esc.h) and read back field by field: each
 * must come back whole; and each written for every other language, which
 * must not fail. A difference aborts (a crash, to AFL). */
static inline void fuzz_esc(const uint8_t *data, size_t len)
{
	static char row[1 << 17], back[1 << 15], one[1 << 15];
	char *t = fuzz_text(data, len > 4096 ? 4096 : len);
	if (!t)
		return;
	size_t n = strlen(t); /* the text ends at a NUL: C strings cannot hold one */
	for (size_t i = 0; i < n; i++)
		if (t[i] == 1)
			t[i] = '\0';
	int used = 0;
	for (const char *f = t; f <= t + n; f += strlen(f) + 1)
		used += lb_esc_snprintf(row + used, sizeof(row) - (size_t)used, LB_LANG_CSV,
					f == t ? "%s" : ",%s", f); /* the comma is code, the field data */
	size_t pos = 0;
	for (const char *f = t; f <= t + n; f += strlen(f) + 1) {
		if (lb_csv_field(row, &pos, back, sizeof(back)) != 0 || strcmp(back, f))
			abort();
		for (int lang = LB_LANG_RAW; lang <= LB_LANG_SH; lang++)
			if (lb_esc_snprintf(one, sizeof(one), (enum lb_lang)lang, "[%s|%.3s|%5s|%-4s]", f,
					    f, f, f) < 0)
				abort();
		/* a shell word is one line of printable bytes */
		lb_esc_snprintf(one, sizeof(one), LB_LANG_SH, "%s", f);
		for (const unsigned char *p = (const unsigned char *)one; *p; p++)
			if (*p < 0x20 || *p == 0x7f)
				abort();
	}
	if (row[pos])
		abort(); /* the reader must end where the row ends */
	/* the row as a file: one record, line breaks in quoted fields and all */
	FILE *m = fmemopen(row, strlen(row), "r");
	char *rec = NULL;
	size_t cap = 0;
	if (m && (lb_csv_record(&rec, &cap, m) < 0 ? row[0] != '\0' : strcmp(rec, row) != 0))
		abort();
	free(rec);
	if (m)
		fclose(m);
	free(t);
}

#endif
