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

int lb_report_sweep(const char *dir)
{
	char path[PATH_MAX], *line = NULL, param[32] = "value";
	static char names[MAX_LINES][256], f[16][256];
	size_t cap = 0;
	int n = 0, bad = 0, cut = 0;
	bool split = false, header = true; /* split: some point measured a split-brain window */
	FILE *in, *gp, *md, *d;
	struct lb_outfile og, om, od;

	snprintf(path, sizeof(path), "%.4000s/sweep.csv", dir);
	if (!(in = fopen(path, "r"))) {
		lb_errorf("cannot read %s: %s", path, strerror(errno));
		return LB_ESYS;
	}
	if (lb_outfile_open(&od, dir, "sweep-points.dat", true) < 0) {
		fclose(in);
		return LB_ESYS;
	}
	d = od.f;
	/* the rows, strategy by strategy (sweep.csv writes each strategy's points
	 * together): one gnuplot data block per strategy, numbers only; the names
	 * reach gnuplot as quoted titles, never as data it parses */
	fprintf(d, "# value throughput_per_s acquire_p99_us cmds_per_section overlaps split_brain_ms "
		   "(NaN: n/a); block i is line i of sweep.gp\n");
	int at = 1, next = 1, first_bad = 0; /* lines: a record may span several */
	while (lb_csv_record(&line, &cap, in) >= 0) {
		at = next;
		for (const char *c = line; *c; c++)
			next += *c == '\n';
		next++;
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
		snprintf(param, sizeof(param), "%.31s", f[1]);
		if (!isnan(num(f[15])))
			split = true;
		if (!n || strcmp(names[n - 1], f[0])) {
			if (n == MAX_LINES) {
				cut++;
				continue;
			}
			if (n)
				fprintf(d, "\n\n");
			snprintf(names[n++], sizeof(names[0]), "%s", f[0]);
		}
		fprintf(d, "%.10g %.10g %.10g %.10g %.10g %.10g\n", num(f[2]), num(f[4]), num(f[6]),
			num(f[7]), num(f[8]), num(f[15]));
	}
	fclose(in);
	free(line);
	if (bad)
		lb_errorf("%s:%d: expected 15 or more fields, or a quote was not closed (%d malformed "
			  "row%s left out of the charts)", path, first_bad, bad, bad == 1 ? "" : "s");
	if (cut)
		lb_errorf("%s: more than %d strategies; %d row%s left out of the charts", path,
			  MAX_LINES, cut, cut == 1 ? "" : "s");
	if (lb_outfile_close(&od) < 0 || lb_outfile_open(&og, dir, "sweep.gp", true) < 0)
		return LB_ESYS;
	gp = og.f;
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
	size_t n_charts = split ? 5 : 4;
	char text[160];
	fprintf(gp, "# lockbench sweep: edit and re-render with `gnuplot sweep.gp`\n"
		    "set key outside right\nset grid\n");
	lb_esc_fprintf(gp, LB_LANG_GNUPLOT, "set xlabel %s\nset logscale x 2\n", param);
	for (size_t c = 0; c < n_charts; c++) {
		snprintf(text, sizeof(text), "%s against %s", charts[c][2], param);
		fprintf(gp, "unset logscale y\n%s", charts[c][3]);
		lb_esc_fprintf(gp, LB_LANG_GNUPLOT, "set title %s\nset ylabel %s\n", text, charts[c][2]);
		lb_chart_png(gp, charts[c][0], 900, 420);
		fprintf(gp, "plot ");
		for (int i = 0; i < n; i++) {
			fprintf(gp, "%s'sweep-points.dat' index %d using 1:($%s%s) with linespoints lw 2 ",
				i ? ", \\\n     " : "", i, charts[c][1], c == 1 || c == 4 ? "/1000.0" : "");
			lb_esc_fprintf(gp, LB_LANG_GNUPLOT, "title %s", names[i]);
		}
		fprintf(gp, "\n");
		lb_chart_svg(gp, charts[c][0], 900, 420);
	}
	if (lb_outfile_close(&og) < 0)
		return LB_ESYS;
	int rc = lb_gnuplot(dir, "sweep.gp");
	if (rc < 0 && rc != LB_ENOTSUP) {
		lb_errorf("gnuplot failed on %s/sweep.gp; see %s/gnuplot.log", dir, dir);
		return rc;
	}
	if (lb_outfile_open(&om, dir, "report.md", true) < 0)
		return LB_ESYS;
	md = om.f;
	lb_esc_fprintf(md, LB_LANG_MD, "# sweep over %s\n\nEach point is one run on fresh servers; the figures are in "
		    "`sweep.csv` and each point's directory holds its own report.\n\n", param);
	if (rc == 0)
		fprintf(md, "![throughput](sweep-throughput.png)\n\n![p99 latency](sweep-p99.png)\n\n"
			    "![commands per section](sweep-cmds.png)\n\n![violations](sweep-violations.png)\n%s",
			split ? "\n![split brain](sweep-split-brain.png)\n\nThe seconds in which two "
				"primaries granted the lock (`split_brain_ms`): a point without one is "
				"missing, not 0.\n" : "");
	else
		fprintf(md, "gnuplot is not installed: `gnuplot sweep.gp` draws the charts.\n");
	return lb_outfile_close(&om);
}
