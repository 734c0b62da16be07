/*
 * cmd_check_history.c - `lockbench check --history FILE [--out DIR]
 * [--clock-uncertainty MS]`: a production history (import.h) through the
 * oracle, each clock allowed its uncertainty (uncertain.h): every overlap,
 * certain or possible, every fence that went backwards, the totals; with
 * --out, the run-like directory of import_dir.h and its report.
 * Exit 0 no overlap is certain, 1 one is (or --out could not be written),
 * 2 usage, 4 the file is unreadable or malformed (file, line, field named).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "esc.h"
#include "import_dir.h"
#include "owned.h"
#include "report.h"
#include "rserver.h"
#include "signals.h"

#define MAX_LINES 200 /* overlaps or fences printed; the rest are counted (and in --out) */

struct hopts {
	const char *file, *out;
	int64_t unc_ns;
};

static int usage_error(const char *fmt, const char *arg)
{
	char msg[300];

	snprintf(msg, sizeof(msg), fmt, arg ? arg : "");
	lb_errorf("check: %s (lockbench check --help)", msg);
	return LB_EXIT_USAGE;
}

/* The value of option @name at argv[*i] ("--name V" or "--name=V"), or NULL. */
static const char *value_of(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n))
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] || *i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static int parse(int argc, char **argv, struct hopts *o)
{
	char why[160];
	const char *v;

	*o = (struct hopts){ 0 };
	for (int i = 1; i < argc; i++) {
		if ((v = value_of(argc, argv, &i, "--history")))
			o->file = v;
		else if ((v = value_of(argc, argv, &i, "--out")))
			o->out = v;
		else if ((v = value_of(argc, argv, &i, "--clock-uncertainty"))) {
			if (lb_import_parse_ms(v, LB_IMPORT_MAX_UNC_MS, &o->unc_ns, why, sizeof(why)) < 0) {
				lb_errorf("check: --clock-uncertainty '%s': expected %s", v, why);
				return LB_EXIT_USAGE;
			}
		} else
			return usage_error("'%s': not an option of check --history (--history FILE, "
					   "--out DIR, --clock-uncertainty MS)", argv[i]);
	}
	if (!o->file || !o->file[0])
		return usage_error("--history needs a FILE%s", "");
	/* before the work: a new or empty directory, not a symlink, no '..' out
	 * of a directory that is not there (owned.h); said */
	if (o->out && lb_owned_fresh("--out", o->out) < 0)
		return LB_EXIT_USAGE;
	return LB_EXIT_OK;
}

static void name_q(FILE *f, const char *s)
{
	lb_esc_fprintf(f, LB_LANG_TERM, "'%s'", s);
}

/* "'w1' (line 4)" */
static void who(const struct lb_import *imp, const struct lb_isec *s)
{
	name_q(stdout, imp->clients.name[s->client]);
	printf(" (line %zu)", s->line);
}

/* @ns as seconds with 9 decimals, exactly. */
static void seconds(int64_t ns)
{
	printf("%lld.%09lld", (long long)(ns / 1000000000), (long long)(ns % 1000000000));
}

static void when(const struct lb_import *imp, int64_t t)
{
	char utc[48];

	lb_import_utc(t, utc, sizeof(utc));
	printf("%s (+", utc);
	seconds(t - imp->first_ns);
	printf(" s)");
}

static void servers(const struct lb_import *imp, const struct lb_isec *a, const struct lb_isec *b)
{
	if (!imp->has_server)
		return;
	if (a->server == b->server && a->server >= 0) {
		printf("; both granted by ");
		name_q(stdout, imp->servers.name[a->server]);
		return;
	}
	printf("; granted by ");
	name_q(stdout, a->server >= 0 ? imp->servers.name[a->server] : "?");
	printf(" and ");
	name_q(stdout, b->server >= 0 ? imp->servers.name[b->server] : "?");
}

static void print_pair(const struct lb_import *imp, const struct lb_upair *p)
{
	const struct lb_isec *a = &imp->s[p->a], *b = &imp->s[p->b];
	char d[48], u[48], m[48];
	int64_t dur = p->to_ns - p->from_ns;

	lb_import_ms(dur < 0 ? -dur : dur, d, sizeof(d));
	lb_import_ms(p->unc_ns, u, sizeof(u));
	lb_import_ms(p->margin_ns, m, sizeof(m));
	printf("%-9s lock ", p->certain ? "CERTAIN" : "possible");
	name_q(stdout, imp->keys.name[a->key]);
	printf(": ");
	if (dur <= 0) { /* the stamps miss: the clocks may close the gap */
		who(imp, a);
		printf(" left %s ms before ", d);
		who(imp, b);
		printf(" entered at ");
		when(imp, p->from_ns);
		printf(", closer than the clocks' uncertainty (%s ms): they may have overlapped", u);
	} else {
		who(imp, a);
		printf(" and ");
		who(imp, b);
		printf(" inside at once from ");
		when(imp, p->from_ns);
		printf(" for %s ms", d);
		if (p->margin_ns != dur)
			printf(", one inside the other's section by %s ms", m);
		printf(p->certain ? ", more than the clocks' uncertainty (%s ms) could undo" :
		       ", which the clocks' uncertainty (%s ms) could undo", u);
	}
	servers(imp, a, b);
	printf("\n");
}

static void print_fence(const struct lb_import *imp, const struct lb_ufence *f)
{
	const struct lb_isec *s = &imp->s[f->at], *e = &imp->s[f->after];

	printf("%-9s lock ", "fence");
	name_q(stdout, imp->keys.name[s->key]);
	printf(": ");
	who(imp, s);
	printf(" entered with fence %lld at ", (long long)s->fence);
	when(imp, s->enter_ns);
	printf(", after ");
	who(imp, e);
	printf(" entered with fence %lld at ", (long long)e->fence);
	when(imp, e->enter_ns);
	printf(": %s, %s\n", s->fence == e->fence ? "repeated" : "backwards", f->certain ?
	       "certain (the order of the enters holds whatever the clocks' error)" :
	       "possible (the enters are closer than the clocks' uncertainty)");
}

/* "3 ('a', 'b', 'c')", the first 8 names. */
static void names(const struct lb_inames *t)
{
	printf("%d (", t->n);
	for (int i = 0; i < t->n && i < 8; i++) {
		printf("%s", i ? ", " : "");
		name_q(stdout, t->name[i]);
	}
	printf("%s)", t->n > 8 ? ", ..." : "");
}

static void print_totals(const struct lb_import *imp, const struct lb_ujudgement *j)
{
	char u[48], lo[48], hi[48];
	int64_t umin = INT64_MAX, umax = -1;

	for (size_t i = 0; i < imp->n; i++)
		if (imp->s[i].unc_given) {
			umin = imp->s[i].unc_ns < umin ? imp->s[i].unc_ns : umin;
			umax = imp->s[i].unc_ns > umax ? imp->s[i].unc_ns : umax;
		}
	lb_import_ms(imp->default_unc_ns, u, sizeof(u));
	printf("sections  %zu\nclients   ", imp->n);
	names(&imp->clients);
	printf("\nkeys      ");
	names(&imp->keys);
	printf("\nspan      ");
	seconds(imp->last_ns - imp->first_ns);
	printf(" s");
	if (imp->n) {
		printf(", from ");
		when(imp, imp->first_ns);
		printf(" to ");
		when(imp, imp->last_ns);
	}
	printf("\nclocks    each off by up to %s ms (--clock-uncertainty)", u);
	if (umax >= 0) {
		lb_import_ms(umin, lo, sizeof(lo));
		lb_import_ms(umax, hi, sizeof(hi));
		printf(" unless its row says: rows say %s to %s ms", lo, hi);
	}
	printf("\noverlaps  %zu certain, %zu possible\n", j->certain, j->possible);
	if (j->fenced)
		printf("fences    %zu backwards (certain), %zu possible; monotonic with the enters "
		       "per lock: %s\n", j->fence_certain, j->fence_possible,
		       j->fence_certain ? "no" : j->n_fences ? "perhaps not (the clocks may explain "
		       "it)" : "yes");
	else
		printf("fences    not given\n");
}

static void print_all(const struct lb_import *imp, const struct lb_ujudgement *j)
{
	char why[200];

	for (size_t k = 0; k < j->n_pairs && k < MAX_LINES; k++)
		print_pair(imp, &j->pairs[k]);
	if (j->n_pairs > MAX_LINES)
		printf("... and %zu more overlaps (counted below; --out writes every one to "
		       "overlaps.csv)\n", j->n_pairs - MAX_LINES);
	for (size_t k = 0; k < j->n_fences && k < MAX_LINES; k++)
		print_fence(imp, &j->fences[k]);
	if (j->n_fences > MAX_LINES)
		printf("... and %zu more fences (--out writes every one to fences.csv)\n",
		       j->n_fences - MAX_LINES);
	print_totals(imp, j);
	enum lb_class c = lb_import_class(imp, j, why, sizeof(why));
	printf("verdict   %s: %s\n", lb_class_name(c), why);
}

/* --out: the directory, whole, then its report. */
static int write_out(const struct hopts *o, const char *tmp, int argc, char **argv,
		     const struct lb_import *imp, const struct lb_ujudgement *j)
{
	char cmdline[8192];

	lb_sh_cmdline(cmdline, sizeof(cmdline), "lockbench check", argc - 1, argv + 1);
	int rc = lb_import_dir_finish(tmp, o->out, o->file, cmdline, imp, j);
	if (rc == LB_ECANCELED)
		return 128 + lb_stop_signal(); /* nothing left: neither the copy nor DIR */
	if (rc < 0)
		return LB_EXIT_FAIL;
	char word[LB_DIR_MAX * 4 + 16]; /* the command a user may paste: one shell word */
	lb_esc_snprintf(word, sizeof(word), LB_LANG_SH, "%s", o->out);
	lb_esc_fprintf(stdout, LB_LANG_TERM, "written   %s/ (`lockbench check %s` re-derives it)\n",
		       o->out, word);
	if ((rc = lb_report_dir(o->out)) == LB_ECANCELED) {
		lb_errorf("%s: the history is written, its report is not: interrupted", o->out);
		return 128 + lb_stop_signal();
	}
	if (rc < 0) {
		lb_errorf("%s: the history is written, its report is not (above)", o->out);
		return LB_EXIT_FAIL;
	}
	lb_esc_fprintf(stdout, LB_LANG_TERM, "report    %s/report.md (step through it: %s/report.html)\n",
		       o->out, o->out);
	return LB_EXIT_OK;
}

int lb_check_history(int argc, char **argv)
{
	struct hopts o;
	struct lb_import imp = { 0 };
	struct lb_ujudgement j = { 0 };
	char tmp[LB_DIR_MAX + 64], copy[LB_DIR_MAX + 96];
	int rc = parse(argc, argv, &o), status;

	if (rc != LB_EXIT_OK)
		return rc;
	lb_stop_work_begin(); /* Ctrl-C stops it within a second; work done stands */
	if (o.out) { /* read what is kept: the copy, named as the file given */
		if (lb_import_dir_begin(o.out, tmp, sizeof(tmp)) < 0)
			return LB_EXIT_FAIL;
		snprintf(copy, sizeof(copy), "%s/imported.csv", tmp);
		rc = lb_import_copy_source(o.file, tmp);
		if (rc == 0)
			rc = lb_import_read(copy, o.file, o.unc_ns, &imp);
	} else {
		rc = lb_import_read(o.file, NULL, o.unc_ns, &imp);
	}
	if (rc == 0)
		rc = lb_import_judge(&imp, o.file, &j);
	if (rc == 0 && o.out)
		rc = lb_import_fits(&imp, o.file);
	if (rc < 0) {
		if (o.out)
			lb_import_dir_abandon(tmp);
		lb_ujudgement_free(&j);
		lb_import_free(&imp);
		if (rc == LB_ECANCELED || lb_stop_work())
			return 128 + lb_stop_signal();
		return rc == LB_ENOMEM ? LB_EXIT_FAIL : LB_EXIT_INPUT;
	}
	lb_esc_fprintf(stdout, LB_LANG_TERM, "history   %s\n", o.file);
	print_all(&imp, &j);
	status = j.certain ? LB_EXIT_FAIL : LB_EXIT_OK;
	/* interrupted while --out was written: 130 (143), unless the verdict,
	 * printed whole already, found a certain overlap: then 1 stands, the
	 * answer the status gives (an interrupt does not hide it) */
	if (o.out && (rc = write_out(&o, tmp, argc, argv, &imp, &j)) != LB_EXIT_OK)
		status = rc > 128 && !j.certain ? rc : LB_EXIT_FAIL;
	lb_ujudgement_free(&j);
	lb_import_free(&imp);
	return status;
}
