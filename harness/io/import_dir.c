/*
 * import_dir.c - an imported production history judged (uncertain.h), its
 * class, and its run-like directory (import_dir.h): each file's text, the
 * summary of what such a history can tell, and the directory written whole.
 */
#include "esc.h"
#include "figures.h"
#include "import_dir.h"
#include "outfile.h"
#include "owned.h"
#include "rserver.h"
#include "signals.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SPAN_MAX_NS (INT64_C(2) * 86400 * 1000000000) /* elapsed_s: what readers.h accepts */

int lb_import_judge(const struct lb_import *imp, const char *path, struct lb_ujudgement *j)
{
	struct lb_usec *u = malloc(sizeof(*u) * (imp->n ? imp->n : 1));
	int rc;

	memset(j, 0, sizeof(*j));
	if (lb_stop_work() || !u) { /* Ctrl-C: said by the command */
		free(u);
		return u ? LB_ECANCELED : LB_ENOMEM;
	}
	for (size_t i = 0; i < imp->n; i++)
		u[i] = (struct lb_usec){ .client = imp->s[i].client, .key = imp->s[i].key,
					 .enter_ns = imp->s[i].enter_ns, .exit_ns = imp->s[i].exit_ns,
					 .unc_ns = imp->s[i].unc_ns, .fence = imp->s[i].fence };
	rc = lb_ujudge(u, imp->n, LB_IMPORT_MAX_PAIRS, LB_IMPORT_MAX_WORK, j);
	free(u);
	if (rc == 0 && lb_stop_work())
		rc = LB_ECANCELED;
	if (rc == LB_ECANCELED)
		return rc;
	if (rc == LB_EINVAL)
		lb_errorf("%s: expected at most %d overlapping pairs, and %d comparisons to find "
			  "them, got more %s: lockbench counts exactly or not at all; split the file (by "
			  "lock, or around the incident)", path, LB_IMPORT_MAX_PAIRS, LB_IMPORT_MAX_WORK,
			  j->limit ? j->limit : "");
	else if (rc < 0)
		lb_errorf("%s: %s", path, lb_strerror(rc));
	return rc;
}

enum lb_class lb_import_class(const struct lb_import *imp, const struct lb_ujudgement *j,
			      char *why, size_t len)
{
	if (j->certain) {
		snprintf(why, len, "%zu overlap%s certain (beyond the clocks' uncertainty); %zu "
			 "possible", j->certain, j->certain == 1 ? "" : "s", j->possible);
		return LB_CLASS_OVERLAP;
	}
	if (j->possible) {
		snprintf(why, len, "no overlap certain; %zu possible within the clocks' uncertainty",
			 j->possible);
		return LB_CLASS_INCONCLUSIVE;
	}
	if (imp->n == 0) {
		snprintf(why, len, "the history holds no section");
		return LB_CLASS_INCONCLUSIVE;
	}
	snprintf(why, len, "no overlap; even with each clock off by its bound");
	return LB_CLASS_SAFE;
}

/* The sections in history.csv's order: by enter (from the earliest), lane, seq. */
static int by_enter(const void *pa, const void *pb, void *base)
{
	const struct lb_isec *s = base, *a = &s[*(const size_t *)pa], *b = &s[*(const size_t *)pb];

	if (a->enter_ns != b->enter_ns)
		return a->enter_ns < b->enter_ns ? -1 : 1;
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static size_t *in_enter_order(const struct lb_import *imp)
{
	size_t *ix = malloc(sizeof(*ix) * (imp->n ? imp->n : 1));

	if (!ix)
		return NULL;
	for (size_t i = 0; i < imp->n; i++)
		ix[i] = i;
	qsort_r(ix, imp->n, sizeof(*ix), by_enter, imp->s);
	return ix;
}

void lb_import_history_write(FILE *f, const struct lb_import *imp)
{
	size_t *ix = in_enter_order(imp);

	fprintf(f, "%s\n", LB_HISTORY_HEADER);
	for (size_t k = 0; ix && k < imp->n; k++) {
		if ((k & 4095) == 0 && lb_stop_work())
			break; /* Ctrl-C: the file is thrown away (outfile.h, verify.c) */
		const struct lb_isec *s = &imp->s[ix[k]];
		long long enter = (long long)(s->enter_ns - imp->first_ns);
		long long exit = (long long)(s->exit_ns - imp->first_ns);
		/* the acquire and the release are not in such a history: the enter and the exit */
		fprintf(f, "%d,%u,%lld,%lld,%lld,%lld,released,", s->lane, s->seq, enter, enter, exit,
			exit);
		if (s->fence >= 0)
			fprintf(f, "%lld", (long long)s->fence);
		fprintf(f, ",,,");
		if (s->token)
			fprintf(f, "%llx", (unsigned long long)s->token);
		fputc('\n', f);
	}
	if (!ix)
		fprintf(f, "out of memory\n"); /* never a history: check and the reader refuse it */
	free(ix);
}

void lb_import_names_write(FILE *f, const struct lb_import *imp)
{
	fprintf(f, "%s\n", LB_IMPORT_NAMES_HEADER);
	for (int l = 0; imp->lane_client && l < imp->lanes; l++)
		if (imp->lane_client[l] >= 0)
			lb_esc_fprintf(f, LB_LANG_CSV, "%d,%s,%s\n", l,
				       imp->clients.name[imp->lane_client[l]],
				       imp->keys.name[l % imp->keys.n]);
}

void lb_import_overlaps_write(FILE *f, const struct lb_import *imp, const struct lb_ujudgement *j)
{
	char utc[48];

	fprintf(f, "%s\n", LB_IMPORT_OVERLAPS_HEADER);
	for (size_t k = 0; k < j->n_pairs && !((k & 4095) == 0 && lb_stop_work()); k++) {
		const struct lb_upair *p = &j->pairs[k];
		const struct lb_isec *a = &imp->s[p->a], *b = &imp->s[p->b];
		lb_import_utc(p->from_ns, utc, sizeof(utc));
		lb_esc_fprintf(f, LB_LANG_CSV, "%s,%s,%s,%zu,%s,%zu,%lld,%lld,%lld,%lld,%lld,%s\n",
			       p->certain ? "certain" : "possible", imp->keys.name[a->key],
			       imp->clients.name[a->client], a->line, imp->clients.name[b->client],
			       b->line, (long long)(p->from_ns - imp->first_ns),
			       (long long)(p->to_ns - imp->first_ns), (long long)(p->to_ns - p->from_ns),
			       (long long)p->margin_ns, (long long)p->unc_ns, utc);
	}
}

void lb_import_fences_write(FILE *f, const struct lb_import *imp, const struct lb_ujudgement *j)
{
	fprintf(f, "%s\n", LB_IMPORT_FENCES_HEADER);
	for (size_t k = 0; k < j->n_fences && !((k & 4095) == 0 && lb_stop_work()); k++) {
		const struct lb_isec *s = &imp->s[j->fences[k].at], *e = &imp->s[j->fences[k].after];
		lb_esc_fprintf(f, LB_LANG_CSV, "%s,%s,%s,%zu,%lld,%lld,%s,%zu,%lld,%lld\n",
			       j->fences[k].certain ? "certain" : "possible", imp->keys.name[s->key],
			       imp->clients.name[s->client], s->line, (long long)s->fence,
			       (long long)(s->enter_ns - imp->first_ns), imp->clients.name[e->client],
			       e->line, (long long)e->fence, (long long)(e->enter_ns - imp->first_ns));
	}
}

/* ---- the summary ---- */

static void put(struct lb_summary *s, const char *name, const char *why, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void put(struct lb_summary *s, const char *name, const char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lb_summary_vput(s, name, why ? why : "", fmt, ap);
	va_end(ap);
}

/* A number through its row of the figure table; n/a (with @why) when not known. */
static void put_num(struct lb_summary *s, const char *name, double v, bool known, const char *why)
{
	char buf[64];

	if (lb_figdef_format(lb_figdef_find(name), v, known, buf, sizeof(buf), NULL, 0) < 0)
		s->invalid++;
	put(s, name, known ? NULL : why, "%s", buf);
}

/* The sections as lockbench's history holds them (history.csv's rows). */
static struct lb_section *as_sections(const struct lb_import *imp)
{
	struct lb_section *v = malloc(sizeof(*v) * (imp->n ? imp->n : 1));

	for (size_t i = 0; v && i < imp->n; i++) {
		const struct lb_isec *s = &imp->s[i];
		v[i] = (struct lb_section){
			.client = s->lane, .key = s->key, .seq = s->seq,
			.acquire_start_ns = s->enter_ns - imp->first_ns,
			.enter_ns = s->enter_ns - imp->first_ns, .exit_ns = s->exit_ns - imp->first_ns,
			.release_ns = s->exit_ns - imp->first_ns, .outcome = LB_OUT_RELEASED,
			.fence = s->fence, .lease_end_ns = LB_LEASE_UNKNOWN, .token = s->token,
		};
	}
	return v;
}

void lb_import_summary(const struct lb_import *imp, const struct lb_ujudgement *j,
		       const char *source, struct lb_summary *s)
{
	static const char no_acquire[] = "an imported history holds when each section entered and "
					 "exited, not its acquire calls";
	static const char no_fence[] = "the history gives no fence";
	const char *base = strrchr(source, '/');
	char name[160], ms[48], why[200];
	struct lb_verdict v = { 0 };
	double span = (double)(imp->last_ns - imp->first_ns) / 1e9;

	memset(s, 0, sizeof(*s));
	snprintf(name, sizeof(name), "%s", base && base[1] ? base + 1 : source);
	for (char *p = name; *p; p++) /* a CSV value of one line */
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == ',')
			*p = *p == ',' ? ';' : ' ';
	struct lb_section *sec = as_sections(imp);
	if (!sec || lb_oracle_judge(sec, imp->n, imp->lanes, imp->last_ns - imp->first_ns, &v,
				    NULL) < 0)
		s->invalid++;
	free(sec);
	put(s, "imported_from", NULL, "%s", name);
	put_num(s, "clients", imp->lanes, true, NULL);
	put_num(s, "keys", imp->keys.n, true, NULL);
	put_num(s, "named_clients", imp->clients.n, true, NULL);
	put_num(s, "elapsed_s", span, true, NULL);
	put_num(s, "sections", (double)imp->n, true, NULL);
	put_num(s, "throughput_per_s", span > 0 ? (double)imp->n / span : 0, true, NULL);
	put_num(s, "acquire_p50_us", 0, false, no_acquire);
	put_num(s, "acquire_p99_us", 0, false, no_acquire);
	put_num(s, "acquire_max_us", 0, false, no_acquire);
	put_num(s, "overlaps", (double)v.overlaps, true, NULL);
	put_num(s, "overlap_ms", v.overlap_ms, true, NULL);
	put_num(s, "max_holders", v.max_holders, true, NULL);
	put_num(s, "overlaps_certain", (double)j->certain, true, NULL);
	put_num(s, "overlaps_possible", (double)j->possible, true, NULL);
	lb_import_ms(imp->default_unc_ns, ms, sizeof(ms));
	put(s, "clock_uncertainty_ms", NULL, "%s", ms);
	put_num(s, "fence_regressions", (double)j->fence_certain, j->fenced, no_fence);
	put_num(s, "fence_regressions_possible", (double)j->fence_possible, j->fenced, no_fence);
	enum lb_class c = lb_import_class(imp, j, why, sizeof(why));
	put(s, "observed", NULL, "%s", lb_class_name(c));
	for (char *p = why; *p; p++)
		if (*p == ',')
			*p = ';';
	put(s, "observed_why", NULL, "%s", why);
}

int lb_import_fits(const struct lb_import *imp, const char *path)
{
	if (imp->n == 0)
		lb_errorf("%s: --out: the history holds no section: there is no run to write", path);
	else if (imp->keys.n > LB_MAX_KEYS)
		lb_errorf("%s: --out: a run directory holds at most %d locks, the history names %d: "
			  "judge it without --out, or split it by lock", path, LB_MAX_KEYS, imp->keys.n);
	else if (imp->lanes > LB_MAX_CLIENTS)
		lb_errorf("%s: --out: a run directory holds at most %d lanes (one per client and lock, "
			  "as many per lock as the busiest lock's clients): judge it without --out, or "
			  "split it by lock", path, LB_MAX_CLIENTS);
	else if (imp->last_ns - imp->first_ns > SPAN_MAX_NS)
		lb_errorf("%s: --out: a run directory spans at most 2 days, the history %.0f s: judge "
			  "it without --out, or keep the part around the incident", path,
			  (double)(imp->last_ns - imp->first_ns) / 1e9);
	else
		return 0;
	return LB_EINVAL;
}

/* ---- the directory ---- */

/* A temporary copy beside the directory @arg names the last component of:
 * "<arg>.lockbench-XXXXXX". */
static bool copy_of(const char *name, const void *arg)
{
	size_t n = strlen(arg);

	return !strncmp(name, arg, n) && !strncmp(name + n, ".lockbench-", 11) &&
	       strlen(name + n + 11) == 6;
}

int lb_import_dir_begin(const char *dir, char *tmp, size_t len)
{
	char parent[LB_DIR_MAX + 64];
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (lb_owned_parents("--out", dir) < 0)
		return LB_ESYS;
	/* the copies an import killed with SIGKILL left beside it (owned.h: only
	 * ours, whose maker is gone) */
	snprintf(parent, sizeof(parent), "%.*s", (int)n, dir);
	char *slash = strrchr(parent, '/');
	if (slash)
		*slash = '\0';
	lb_owned_sweep(!slash ? "." : slash == parent ? "/" : parent, copy_of,
		       slash ? slash + 1 : parent);
	snprintf(tmp, len, "%.*s.lockbench-XXXXXX", (int)n, dir);
	if (lb_owned_mkdtemp(tmp) == 0) {
		mode_t mask = umask(0);
		umask(mask);
		chmod(tmp, 0755 & ~mask); /* as a run's directory (mkdtemp makes it 0700) */
		lb_janitor_dir(tmp, true); /* a kill -9 leaves no copy behind */
		return 0;
	}
	lb_errorf("cannot make the output directory beside %s (%s): %s", dir, tmp, strerror(errno));
	return LB_ESYS;
}

void lb_import_dir_abandon(const char *tmp)
{
	lb_owned_rmtree(tmp);
	lb_janitor_dir(tmp, false);
}

int lb_import_copy_source(const char *src, const char *tmp)
{
	struct lb_outfile o;
	char buf[65536];
	int64_t total = 0;
	size_t k;
	int rc;
	FILE *in = lb_import_open(src, &rc);

	if (!in)
		return rc;
	if ((rc = lb_outfile_open(&o, tmp, "imported.csv", true)) < 0) {
		fclose(in);
		return rc;
	}
	while ((k = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (lb_stop_work()) { /* Ctrl-C: said by the command */
			fclose(in);
			lb_outfile_abort(&o);
			return LB_ECANCELED;
		}
		if ((total += (int64_t)k) > LB_IMPORT_MAX_COPY) {
			lb_errorf("%s: expected at most %lld bytes for --out to keep, got more: judge it "
				  "without --out, or keep the part around the incident", src,
				  (long long)LB_IMPORT_MAX_COPY);
			fclose(in);
			lb_outfile_abort(&o);
			return LB_EINVAL;
		}
		fwrite(buf, 1, k, o.f);
	}
	if (ferror(in)) {
		lb_errorf("cannot read %s: %s", src, strerror(errno));
		fclose(in);
		lb_outfile_abort(&o);
		return LB_ESYS;
	}
	fclose(in);
	return lb_outfile_close(&o);
}

static void write_meta(FILE *f, const char *src, const char *cmdline, const struct lb_import *imp)
{
	char when[32], first[48];
	time_t now = time(NULL);

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	lb_import_utc(imp->first_ns, first, sizeof(first));
	lb_esc_fprintf(f, LB_LANG_TERM, "command: %s\n", cmdline);
	lb_esc_fprintf(f, LB_LANG_TERM, "imported_from: %s (kept as imported.csv)\n", src);
	lb_esc_fprintf(f, LB_LANG_TERM, "lockbench: %s\n", LOCKBENCH_VERSION);
	lb_esc_fprintf(f, LB_LANG_TERM, "written_utc: %s\n", when);
	lb_esc_fprintf(f, LB_LANG_TERM, "clock: history times are ns after the earliest enter, %s, "
		       "each by its own client's clock\n", first);
}

/* One file of the directory, whole or absent. */
static int one(const char *tmp, const char *name, const struct lb_import *imp,
	       const struct lb_ujudgement *j, void (*w)(FILE *, const struct lb_import *,
							const struct lb_ujudgement *))
{
	struct lb_outfile o;
	int rc = lb_outfile_open(&o, tmp, name, true);

	if (rc < 0)
		return rc;
	w(o.f, imp, j);
	if (lb_stop_work()) { /* Ctrl-C: nothing half written, and said by the command */
		lb_outfile_abort(&o);
		return LB_ECANCELED;
	}
	return lb_outfile_close(&o);
}

static void w_history(FILE *f, const struct lb_import *imp, const struct lb_ujudgement *j)
{
	(void)j;
	lb_import_history_write(f, imp);
}

static void w_names(FILE *f, const struct lb_import *imp, const struct lb_ujudgement *j)
{
	(void)j;
	lb_import_names_write(f, imp);
}

int lb_import_dir_finish(const char *tmp, const char *dir, const char *src, const char *cmdline,
			 const struct lb_import *imp, const struct lb_ujudgement *j)
{
	struct lb_summary *s = malloc(sizeof(*s));
	struct lb_outfile o;
	int rc = s ? 0 : LB_ENOMEM;

	if (rc == 0)
		lb_import_summary(imp, j, src, s);
	if (rc == 0 && s->invalid) {
		lb_errorf("%s: a figure of the summary is outside its range (a bug in lockbench)", src);
		rc = LB_ESYS;
	}
	if (rc == 0)
		rc = one(tmp, "history.csv", imp, j, w_history);
	if (rc == 0)
		rc = one(tmp, "names.csv", imp, j, w_names);
	if (rc == 0)
		rc = one(tmp, "overlaps.csv", imp, j, lb_import_overlaps_write);
	if (rc == 0)
		rc = one(tmp, "fences.csv", imp, j, lb_import_fences_write);
	if (rc == 0 && (rc = lb_outfile_open(&o, tmp, "meta.txt", true)) == 0) {
		write_meta(o.f, src, cmdline, imp);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && (rc = lb_outfile_open(&o, tmp, "summary.json", true)) == 0) {
		lb_summary_json(o.f, s);
		rc = lb_outfile_close(&o);
	}
	if (rc == 0 && (rc = lb_outfile_open(&o, tmp, "summary.csv", true)) == 0) {
		lb_summary_csv(o.f, s);
		rc = lb_outfile_close(&o);
	}
	free(s);
	if (rc == 0 && lb_stop_work())
		rc = LB_ECANCELED;
	if (rc == 0 && rename(tmp, dir) < 0) {
		lb_errorf("cannot put the output directory in place (%s -> %s): %s", tmp, dir,
			  strerror(errno));
		rc = LB_ESYS;
	}
	/* a result now, never a stale copy to sweep (its name may look like one) */
	if (rc == 0 && lb_owned_keep(dir) < 0) {
		lb_errorf("cannot mark %s as a result: %s", dir, strerror(errno));
		rc = LB_ESYS;
	}
	if (rc < 0)
		lb_owned_rmtree(tmp);
	lb_janitor_dir(tmp, false);
	return rc == LB_ECANCELED ? rc : rc < 0 ? LB_ESYS : 0;
}

int lb_import_load_dir(const char *dir, const struct lb_summary *s, struct lb_import *imp,
		       struct lb_ujudgement *j)
{
	const char *u = lb_summary_get(s, "clock_uncertainty_ms");
	char path[4200], why[160];
	int64_t unc;
	int rc;

	memset(imp, 0, sizeof(*imp));
	memset(j, 0, sizeof(*j));
	if (!u || lb_import_parse_ms(u, LB_IMPORT_MAX_UNC_MS, &unc, why, sizeof(why)) < 0) {
		lb_errorf("%.4000s/summary.csv:2: field clock_uncertainty_ms: expected %s, got '%.40s'",
			  dir, u ? why : "a column of an imported history", u ? u : "");
		return LB_EINVAL;
	}
	snprintf(path, sizeof(path), "%.4000s/imported.csv", dir);
	if ((rc = lb_import_read(path, NULL, unc, imp)) < 0)
		return rc;
	return lb_import_judge(imp, path, j);
}

void lb_import_lane_label(const struct lb_import *imp, int lane, char *buf, size_t len)
{
	int c = imp->lane_client && lane >= 0 && lane < imp->lanes ? imp->lane_client[lane] : -1;
	int n;

	if (c < 0)
		n = snprintf(buf, len, "%d", lane);
	else if (imp->keys.n > 1)
		n = snprintf(buf, len, "%d: %s · %s", lane, imp->clients.name[c],
			     imp->keys.name[lane % imp->keys.n]);
	else
		n = snprintf(buf, len, "%d: %s", lane, imp->clients.name[c]);
	if (n >= 0 && (size_t)n >= len && len > 4) { /* cut: at a character's edge, marked */
		size_t e = len - 4;
		while (e > 0 && ((unsigned char)buf[e] & 0xc0) == 0x80)
			e--;
		snprintf(buf + e, len - e, "...");
	}
}
