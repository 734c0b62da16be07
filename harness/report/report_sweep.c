/* report_sweep.c - sweep charts: one line per strategy against the varied
 * parameter, for throughput, p99 latency, commands per section, violations. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "outfile.h"
#include "report.h"

#define MAX_LINES 32

/* A number of sweep.csv, or NaN (gnuplot leaves the point out) for n/a. */
static double num(const char *v)
{
	char *end;
	double x = strtod(v, &end);
	return end != v && !*end ? x : NAN;
}

/* What the charts draw: a line per strategy, the varied parameter. */
struct lines {
	char names[MAX_LINES][256];
	int n;
	char param[32];
	bool split; /* some point measured a split-brain window */
};

/* sweep.csv's rows into sweep-points.dat, strategy by strategy (sweep.csv
 * writes each strategy's points together): one gnuplot data block per
 * strategy, numbers only; the names reach gnuplot as quoted titles, never as
 * data it parses. Malformed rows are said with their line and left out. */
static int points(const char *dir, const char *path, FILE *in, struct lines *l)
{
	static char f[16][256];
	char *line = NULL;
	size_t cap = 0;
	int bad = 0, cut = 0, at = 1, next = 1, first_bad = 0; /* lines: a record may span several */
	bool header = true;
	struct lb_outfile od;

	if (lb_outfile_open(&od, dir, "sweep-points.dat", true) < 0)
		return LB_ESYS;
	fprintf(od.f, "# value throughput_per_s acquire_p99_us cmds_per_section overlaps "
		      "split_brain_ms (NaN: n/a); block i is line i of sweep.gp\n");
	while ((at = next, lb_csv_record_at(&line, &cap, in, &next)) >= 0) {
		if (header) {
			header = false;
			continue;
		}
		size_t pos = 0;
		int k = 0;
		for (; k < 16 && line[pos]; k++)
			if (lb_csv_field(line, &pos, f[k], sizeof(f[k])) < 0)
				break;
		if (k < 15) { /* split_brain_ms, the 16th, came later */
			first_bad = bad++ ? first_bad : at;
			continue;
		}
		if (k < 16)
			f[15][0] = '\0';
		snprintf(l->param, sizeof(l->param), "%.31s", f[1]);
		if (!isnan(num(f[15])))
			l->split = true;
		if (!l->n || strcmp(l->names[l->n - 1], f[0])) {
			if (l->n == MAX_LINES) {
				cut++;
				continue;
			}
			if (l->n)
				fprintf(od.f, "\n\n");
			snprintf(l->names[l->n++], sizeof(l->names[0]), "%s", f[0]);
		}
		fprintf(od.f, "%.10g %.10g %.10g %.10g %.10g %.10g\n", num(f[2]), num(f[4]), num(f[6]),
			num(f[7]), num(f[8]), num(f[15]));
	}
	free(line);
	if (bad)
		lb_errorf("%s:%d: expected 15 or more fields, or a quote was not closed (%d malformed "
			  "row%s left out of the charts)", path, first_bad, bad, bad == 1 ? "" : "s");
	if (cut)
		lb_errorf("%s: more than %d strategies; %d row%s left out of the charts", path,
			  MAX_LINES, cut, cut == 1 ? "" : "s");
	return lb_outfile_close(&od);
}

/* sweep.gp: a chart per figure, a line per strategy. */
static int script(const char *dir, const struct lines *l)
{
	static const char *const charts[][4] = {
		/* counts start at 0 and reach at least 1: all zeros is a flat line
		 * on the floor, not a line in the middle of a -1..1 axis */
		{ "sweep-throughput", "2", "critical sections per second", "set yrange [0:1<*]\n" },
		{ "sweep-p99", "3", "p99 acquire latency (ms)", "set autoscale y\nset logscale y\n" },
		{ "sweep-cmds", "4", "Redis commands per section", "set yrange [0:1<*]\n" },
		{ "sweep-violations", "5", "overlapping sections", "set yrange [0:1<*]\n" },
		{ "sweep-split-brain", "6", "seconds two primaries granted the lock",
		  "set yrange [0:1<*]\n" },
	};
	size_t n_charts = l->split ? 5 : 4;
	struct lb_outfile og;
	char text[160];

	if (lb_outfile_open(&og, dir, "sweep.gp", true) < 0)
		return LB_ESYS;
	FILE *gp = og.f;
	fprintf(gp, "# lockbench sweep: edit and re-render with `gnuplot sweep.gp`\n"
		    "set key outside right\nset grid\n");
	lb_esc_fprintf(gp, LB_LANG_GNUPLOT, "set xlabel %s\nset logscale x 2\n", l->param);
	for (size_t c = 0; c < n_charts; c++) {
		snprintf(text, sizeof(text), "%s against %s", charts[c][2], l->param);
		fprintf(gp, "unset logscale y\n%s", charts[c][3]);
		lb_esc_fprintf(gp, LB_LANG_GNUPLOT, "set title %s\nset ylabel %s\n", text, charts[c][2]);
		lb_chart_png(gp, charts[c][0], 900, 420);
		fprintf(gp, "plot ");
		for (int i = 0; i < l->n; i++) {
			fprintf(gp, "%s'sweep-points.dat' index %d using 1:($%s%s) with linespoints lw 2 ",
				i ? ", \\\n     " : "", i, charts[c][1], c == 1 || c == 4 ? "/1000.0" : "");
			lb_esc_fprintf(gp, LB_LANG_GNUPLOT, "title %s", l->names[i]);
		}
		fprintf(gp, "\n");
		lb_chart_svg(gp, charts[c][0], 900, 420);
	}
	return lb_outfile_close(&og);
}

/* report.md: the charts, or how to draw them (@drawn: gnuplot's result). */
static int page(const char *dir, const struct lines *l, int drawn)
{
	struct lb_outfile om;

	if (lb_outfile_open(&om, dir, "report.md", true) < 0)
		return LB_ESYS;
	FILE *md = om.f;
	lb_esc_fprintf(md, LB_LANG_MD, "# sweep over %s\n\nEach point is one run on fresh servers; the figures are in "
		    "`sweep.csv` and each point's directory holds its own report.\n\n", l->param);
	if (drawn == 0)
		fprintf(md, "![throughput](sweep-throughput.png)\n\n![p99 latency](sweep-p99.png)\n\n"
			    "![commands per section](sweep-cmds.png)\n\n![violations](sweep-violations.png)\n%s",
			l->split ? "\n![split brain](sweep-split-brain.png)\n\nThe seconds in which two "
				   "primaries granted the lock (`split_brain_ms`): a point without one is "
				   "missing, not 0.\n" : "");
	else
		fprintf(md, "gnuplot is not installed: `gnuplot sweep.gp` draws the charts.\n");
	return lb_outfile_close(&om);
}

int lb_report_sweep(const char *dir)
{
	static struct lines l;
	char path[PATH_MAX];
	FILE *in;

	memset(&l, 0, sizeof(l));
	snprintf(l.param, sizeof(l.param), "value");
	snprintf(path, sizeof(path), "%.4000s/sweep.csv", dir);
	const char *kind;
	char why[96];
	int orc;
	if (!(in = lb_open_regular(path, &orc, &kind))) { /* a FIFO is refused, never waited on */
		lb_errorf("cannot read %s: %s", path, lb_open_why(kind, why, sizeof(why)));
		return orc;
	}
	int rc = points(dir, path, in, &l);
	fclose(in);
	if (rc < 0 || script(dir, &l) < 0)
		return LB_ESYS;
	char undrawn[400] = "";
	rc = lb_gnuplot(dir, "sweep.gp", undrawn, sizeof(undrawn));
	if (rc < 0 && rc != LB_ENOTSUP) {
		lb_errorf("%s: %s", dir, undrawn);
		return rc;
	}
	return page(dir, &l, rc);
}
